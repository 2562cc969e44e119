/* test_table_pack.c - unit tests of the packed columns of a CSV table
 * (src/columns/pack.c): after lm_table_pack, every fetch (runs of rows
 * inside a block and across blocks, rows in any order, rows past the end,
 * whole columns through lm_table_values) gives the bits the loader gives
 * when it loads the file whole, for integers of every width, blanks,
 * -0.0, NaN, fractions, constants and columns that change kind from block
 * to block; a cap too small leaves the table reading its file; a failed
 * allocation leaves it as it was. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "csv/csv.h"
#include "columns/columns.h"

#define ROWS (3 * 1024 + 377)

/* Row r of column c: the kinds a counter file holds. */
static void cell(lm_buf *b, size_t c, size_t r) {
  unsigned h = (unsigned)(r * 2654435761u + c * 40503u);
  switch (c) {
  case 0: lm_buf_printf(b, "%zu", r); break;                          /* Dispatch_ID */
  case 1: lm_buf_printf(b, "k%u", (unsigned)(r % 3)); break;         /* Kernel_Name */
  case 2: lm_buf_puts(b, "0"); break;                                 /* an idle counter */
  case 3: lm_buf_printf(b, "%u", 1000 + (unsigned)(r / 7)); break;    /* slowly rising */
  case 4: lm_buf_printf(b, "%u", h % 100000u); break;                 /* three bytes of deltas */
  case 5: lm_buf_printf(b, "%lld", (long long)(h % 2 ? 1 : -1) * (long long)(h % 4000000000000000000ULL)); break;
  case 6: lm_buf_printf(b, "%s", h % 5 ? "12" : ""); break;          /* blanks among integers */
  case 7: lm_buf_printf(b, "%u.%u", h % 1000, h % 7); break;          /* fractions */
  case 8: lm_buf_puts(b, r % 1024 == 100 ? "-0" : "3"); break;         /* one -0.0 a block */
  case 9: lm_buf_puts(b, r < 2048 ? "7" : (r % 2 ? "5" : "6.5")); break; /* kinds by block */
  case 10: lm_buf_printf(b, "%s", r % 11 == 0 ? "nan" : "42"); break;
  case 11: lm_buf_printf(b, "%s", r % 13 == 0 ? "9007199254740993000" : "1"); break; /* past 2^62 */
  default: lm_buf_printf(b, "%u", (h >> 3) % 256u); break;
  }
}

static char *make_text(size_t n_cols, size_t n_rows, size_t *len) {
  lm_buf b = {0};
  for (size_t c = 0; c < n_cols; c++) {
    if (c == 0) lm_buf_puts(&b, "Dispatch_ID");
    else if (c == 1) lm_buf_puts(&b, ",Kernel_Name");
    else lm_buf_printf(&b, ",C%zu", c);
  }
  lm_buf_putc(&b, '\n');
  for (size_t r = 0; r < n_rows; r++) {
    for (size_t c = 0; c < n_cols; c++) {
      if (c) lm_buf_putc(&b, ',');
      cell(&b, c, r);
    }
    lm_buf_putc(&b, '\n');
  }
  *len = b.len;
  return b.data;
}

static lm_table *parse(const char *text, size_t len, int defer, int threads) {
  static const char *const text_cols[] = {"Kernel_Name", NULL};
  static const char *const eager[] = {"Dispatch_ID", NULL};
  lm_csv_options o = {0};
  o.text_columns = text_cols;
  o.threads = threads;
  o.defer = defer;
  o.eager_columns = eager;
  lm_table *t = NULL;
  lm_diag d;
  if (lm_csv_parse(text, len, "t.csv", &o, &t, &d) != LM_OK) return NULL;
  return t;
}

/* Mismatches between d's fetches and whole table t: runs of rows of
 * several lengths from several starts, all rows backwards with one past
 * the end, and every column at once. */
static size_t compare(const lm_table *t, const lm_table *d) {
  size_t bad = 0, n = t->n_rows;
  size_t *rows = malloc((n + 1) * sizeof *rows);
  double *v = malloc((n + 1) * sizeof *v);
  if (!rows || !v) return 1;
  static const size_t lens[] = {1, 3, 100, 1024, 1500, ROWS + 1};
  for (size_t c = 0; c < t->n_cols; c++) {
    if (t->cols[c].text_ids) continue;
    long col = (long)c;
    double *out = v;
    for (size_t li = 0; li < sizeof lens / sizeof *lens; li++)
      for (size_t first = 0; first < n; first += 701) {
        size_t k = 0;
        for (; k < lens[li] && first + k <= n; k++) rows[k] = first + k;
        if (lm_table_fetch(d, &col, 1, rows, k, &out, NULL) != LM_OK) bad++;
        for (size_t i = 0; i < k; i++)
          bad += rows[i] < n ? memcmp(&v[i], &t->cols[c].values[rows[i]], sizeof *v) != 0 : !isnan(v[i]);
      }
    /* a run, then rows of the same block back and forth, repeated, and
     * a run that goes on into the next block */
    for (size_t first = 0; first + 300 < n; first += 997) {
      size_t k = 0;
      for (size_t q = 0; q < 10; q++) rows[k++] = first + q;
      rows[k++] = first + 2;
      rows[k++] = first + 2;
      rows[k++] = first + 40;
      for (size_t q = 41; q < 300; q++) rows[k++] = first + q;
      if (lm_table_fetch(d, &col, 1, rows, k, &out, NULL) != LM_OK) bad++;
      for (size_t i = 0; i < k; i++) bad += memcmp(&v[i], &t->cols[c].values[rows[i]], sizeof *v) != 0;
    }
    for (size_t i = 0; i <= n; i++) rows[i] = n - i;
    if (lm_table_fetch(d, &col, 1, rows, n + 1, &out, NULL) != LM_OK) bad++;
    bad += !isnan(v[0]);
    for (size_t i = 1; i <= n; i++) bad += memcmp(&v[i], &t->cols[c].values[rows[i]], sizeof *v) != 0;
  }
  /* every numeric column of rows 1020..1030 in one call */
  long cols[64];
  double vals[64][11], *outs[64];
  size_t k = 0;
  for (size_t c = t->n_cols; c-- > 0 && k < 64;)
    if (!t->cols[c].text_ids) {
      outs[k] = vals[k];
      cols[k++] = (long)c;
    }
  for (size_t i = 0; i < 11; i++) rows[i] = 1020 + i;
  if (lm_table_fetch(d, cols, k, rows, 11, outs, NULL) != LM_OK) bad++;
  for (size_t j = 0; j < k; j++)
    for (size_t i = 0; i < 11; i++) bad += memcmp(&vals[j][i], &t->cols[cols[j]].values[rows[i]], sizeof(double)) != 0;
  free(rows);
  free(v);
  return bad;
}

static void test_round_trip(void) {
  size_t len = 0;
  char *text = make_text(16, ROWS, &len);
  CHECK(text != NULL);
  lm_table *t = parse(text, len, 0, 1);
  CHECK(t != NULL);
  for (int threads = 1; t && threads <= 2; threads++) {
    lm_table *d = parse(text, len, 1, threads);
    CHECK(d != NULL);
    if (!d) continue;
    int packed = 0;
    lm_diag diag;
    CHECK(lm_table_pack(d, (size_t)1 << 30, &packed, &diag) == LM_OK);
    CHECK(packed == 1);
    /* far less than the doubles: 14 deferred columns of 3,449 rows */
    size_t bytes = lm_table_packed_bytes(d);
    CHECK(bytes > 0 && bytes < 14 * ROWS * sizeof(double) / 2);
    CHECK(compare(t, d) == 0);
    for (size_t c = 0; c < t->n_cols; c++) {
      if (t->cols[c].text_ids) continue;
      const double *v = lm_table_values(d, c, NULL);
      CHECK(v && memcmp(v, t->cols[c].values, t->n_rows * sizeof *v) == 0);
    }
    lm_table_free(d);
  }
  /* A cap too small: the table still reads its file. */
  lm_table *d = parse(text, len, 1, 2);
  if (d) {
    int packed = 1;
    lm_diag diag;
    CHECK(lm_table_pack(d, 4096, &packed, &diag) == LM_OK);
    CHECK(packed == 0 && lm_table_packed_bytes(d) == 0);
    CHECK(compare(t, d) == 0);
    lm_table_free(d);
  }
  /* Each allocation failing in turn: out of memory and the table as it
   * was, until the packing succeeds. */
  int done = 0;
  for (long k = 0; k < 200 && !done; k++) {
    lm_table *e = parse(text, len, 1, 2);
    if (!e) break;
    int packed = 0;
    lm_diag diag;
    lm_alloc_fail_after(k);
    lm_status st = lm_table_pack(e, (size_t)1 << 30, &packed, &diag);
    lm_alloc_fail_after(-1);
    CHECK(st == LM_OK || (st == LM_ENOMEM && !packed && lm_table_packed_bytes(e) == 0));
    done = st == LM_OK && packed;
    if (st == LM_ENOMEM || done) CHECK(compare(t, e) == 0);
    lm_table_free(e);
  }
  CHECK(done);
  /* No deferred column: nothing to pack. */
  int packed = 1;
  lm_diag diag;
  CHECK(lm_table_pack(t, (size_t)1 << 30, &packed, &diag) == LM_OK && packed == 0);
  lm_table_free(t);
  free(text);
}

int main(void) {
  test_round_trip();
  return check_report("test_table_pack");
}
