/* test_csv.c - unit tests of the CSV column loader (src/csv/csv.c): quoting,
 * numbers read exactly as strtod does, missing values, malformed input
 * with file/line/column in the diagnostic, and the two-thread parse giving
 * the same table as the serial one. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "csv/csv.h"
#include "load/load.h"

static lm_table *parse(const char *text, int threads, lm_diag *d) {
  static const char *const text_cols[] = {"Kernel_Name", NULL};
  lm_csv_options o = {0};
  o.text_columns = text_cols;
  o.threads = threads;
  lm_table *t = NULL;
  lm_diag_clear(d);
  if (lm_csv_parse(text, strlen(text), "t.csv", &o, &t, d) != LM_OK) return NULL;
  return t;
}

static void test_basic(void) {
  lm_diag d;
  lm_table *t = parse("Dispatch_ID,Kernel_Name,SQ_WAVES,TCC_HIT[3],x\r\n"
                      "0,\"vecCopy(double*, double*) [clone .kd]\",16384,12,\r\n"
                      "1,\"say \"\"hi\"\"\",1.5e3,,nan\n",
                      1, &d);
  CHECK(t != NULL);
  if (!t) return;
  CHECK(t->n_rows == 2 && t->n_cols == 5);
  CHECK(lm_table_find(t, "TCC_HIT[3]") == 3);
  CHECK_STR(lm_table_text(t, 1, 0), "vecCopy(double*, double*) [clone .kd]");
  CHECK_STR(lm_table_text(t, 1, 1), "say \"hi\"");
  CHECK(t->cols[2].values[0] == 16384 && t->cols[2].values[1] == 1500);
  CHECK(!t->cols[2].all_int && t->cols[0].all_int);
  CHECK(isnan(t->cols[3].values[1]) && t->cols[3].n_missing == 1);
  CHECK(isnan(t->cols[4].values[0]) && isnan(t->cols[4].values[1]));
  CHECK(t->row_missing[0] == 1 && t->row_missing[1] == 1);
  lm_table_free(t);
}

static void test_numbers_exact(void) {
  /* Every decimal the loader reads must equal strtod's double. */
  srand(7);
  lm_buf b = {0};
  lm_buf_puts(&b, "v\n");
  char cells[500][40];
  for (int i = 0; i < 500; i++) {
    switch (i % 5) {
    case 0: snprintf(cells[i], 40, "%d", rand()); break;
    case 1: snprintf(cells[i], 40, "%d.%06d", rand() % 100000, rand() % 1000000); break;
    case 2: snprintf(cells[i], 40, "%.17g", (double)rand() / RAND_MAX * 1e300); break;
    case 3: snprintf(cells[i], 40, "%d.%dE+%d", rand() % 10, rand() % 10000, rand() % 30); break;
    default: snprintf(cells[i], 40, "-%.15g", (double)rand() / 3.0); break;
    }
    lm_buf_printf(&b, "%s\n", cells[i]);
  }
  lm_diag d;
  lm_table *t = parse(lm_buf_cstr(&b), 1, &d);
  CHECK(t && t->n_rows == 500);
  for (int i = 0; t && i < 500; i++) CHECK(t->cols[0].values[i] == strtod(cells[i], NULL));
  lm_table_free(t);
  lm_buf_fini(&b);
  double v;
  int is_int;
  const char *s = "8.1097E+14";
  CHECK(lm_parse_number(s, s + strlen(s), &v, &is_int) == 1 && v == 8.1097e14 && !is_int);
  s = " 42 ";
  CHECK(lm_parse_number(s, s + strlen(s), &v, &is_int) == 1 && v == 42 && is_int);
  s = "0x10";
  CHECK(lm_parse_number(s, s + strlen(s), &v, &is_int) == 0);
  s = "-inf";
  CHECK(lm_parse_number(s, s + strlen(s), &v, &is_int) == 1 && isinf(v) && v < 0);
  s = "NULL";
  CHECK(lm_parse_number(s, s + strlen(s), &v, &is_int) == 2 && isnan(v));
  s = "12345678901234567890123";
  CHECK(lm_parse_number(s, s + strlen(s), &v, &is_int) == 1 && v == 12345678901234567890123.0);
}

static void test_errors(void) {
  lm_diag d;
  CHECK(parse("a,b\n1,2\n3\n", 1, &d) == NULL);
  CHECK(d.status == LM_EPARSE && d.line == 3 && strstr(d.message, "expected 2 fields"));
  CHECK(parse("a,b\n1,2,3\n", 1, &d) == NULL);
  CHECK(d.line == 2 && strstr(d.message, "found 3"));
  CHECK(parse("a,b\n1,\"2\n", 1, &d) == NULL);
  CHECK(d.line == 2 && strstr(d.message, "unterminated"));
  CHECK(parse("", 1, &d) == NULL && strstr(d.message, "empty file"));
  CHECK(parse("a,b\n1,\"2\"x\n", 1, &d) == NULL && strstr(d.message, "after a closing quote"));
  /* A text cell in a number column is kept as a note, not an error here. */
  lm_table *t = parse("a,b\n1,2\n3,abc\n", 1, &d);
  CHECK(t && t->cols[1].n_text == 1 && t->cols[1].first_text_line == 3);
  CHECK(t && strcmp(t->cols[1].first_text, "abc") == 0);
  lm_table_free(t);
  /* Repeated header names are told apart as the reference reader does. */
  t = parse("a,a,a\n1,2,3\n", 1, &d);
  CHECK(t && lm_table_find(t, "a.1") == 1 && lm_table_find(t, "a.2") == 2);
  lm_table_free(t);
  /* A record longer than the limit. */
  lm_csv_options o = {0};
  o.max_record = 16;
  const char *long_line = "a\n1234567890123456789012345\n";
  CHECK(lm_csv_parse(long_line, strlen(long_line), "t.csv", &o, &t, &d) == LM_ELIMIT);
  CHECK(d.line == 2);
}

static void test_parallel_matches_serial(void) {
  lm_buf b = {0};
  lm_buf_puts(&b, "Dispatch_ID,Kernel_Name,A,B,C\n");
  srand(3);
  for (int r = 0; r < 60000; r++)
    lm_buf_printf(&b, "%d,\"k%d<float, 2>(a, b)\",%d,%d.%d,%s\n", r, r % 7, rand(), rand() % 100,
                  rand() % 10, r % 13 ? "5" : "");
  lm_diag d;
  lm_table *serial = parse(lm_buf_cstr(&b), 1, &d);
  lm_table *parallel = parse(lm_buf_cstr(&b), 2, &d);
  CHECK(serial && parallel);
  if (serial && parallel) {
    CHECK(serial->n_rows == 60000 && parallel->n_rows == 60000);
    int same = 1;
    for (size_t c = 0; c < 5; c++)
      for (size_t r = 0; r < serial->n_rows; r++) {
        double x = serial->cols[c].values[r], y = parallel->cols[c].values[r];
        if (!(x == y || (isnan(x) && isnan(y)))) same = 0;
        const char *tx = lm_table_text(serial, c, r), *ty = lm_table_text(parallel, c, r);
        if ((tx || ty) && (!tx || !ty || strcmp(tx, ty) != 0)) same = 0;
      }
    CHECK(same);
    CHECK(serial->cols[4].n_missing == parallel->cols[4].n_missing);
  }
  lm_table_free(serial);
  lm_table_free(parallel);
  /* A newline inside quotes: the two-thread split is redone serially. */
  lm_buf_reset(&b);
  lm_buf_puts(&b, "Kernel_Name,A\n");
  for (int r = 0; r < 20000; r++) lm_buf_printf(&b, "\"multi\nline %d\",%d\n", r, r);
  lm_table *t = parse(lm_buf_cstr(&b), 2, &d);
  CHECK(t && t->n_rows == 20000);
  CHECK(t && t->cols[1].values[19999] == 19999);
  CHECK(t && strcmp(lm_table_text(t, 0, 5), "multi\nline 5") == 0);
  lm_table_free(t);
  lm_buf_fini(&b);
}

static void test_alloc_failures(void) {
  const char *text = "Kernel_Name,A,B\nk1,1,2\nk2,3,4\nk1,5,\n";
  long n;
  int failed = 0;
  for (n = 0; n < 1000; n++) {
    lm_diag d;
    lm_alloc_fail_after(n);
    lm_table *t = parse(text, 1, &d);
    lm_alloc_fail_after(-1);
    if (t) {
      CHECK(t->n_rows == 3 && t->n_strings == 2);
      lm_table_free(t);
      break;
    }
    if (d.status != LM_ENOMEM) failed = 1;
  }
  CHECK(n < 1000 && !failed);
}

/* lm_table_each_column's visits, checked against the whole load. */
typedef struct visit_check {
  const lm_table *whole;
  const size_t *order;
  size_t next, bad;
} visit_check;

static lm_status visit_column(void *ctx, size_t col, const double *values, lm_diag *diag) {
  (void)diag;
  visit_check *v = ctx;
  v->bad += col != v->order[v->next++];
  v->bad += v->whole->n_rows && memcmp(values, v->whole->cols[col].values, v->whole->n_rows * sizeof *values) != 0;
  return LM_OK;
}

static lm_status stop_visit(void *ctx, size_t col, const double *values, lm_diag *diag) {
  (void)values;
  size_t *seen = ctx;
  if (++*seen == 2) return lm_diag_set(diag, LM_EDATA, NULL, 0, (long)col, NULL, "stop");
  return LM_OK;
}

/* Every column of d (deferred) visited backwards and in groups of one,
 * two, three columns and all of them: the whole load's bits, in that
 * order, d unchanged; a visitor's error stops the walk. */
static void check_each_column(const lm_table *t, const lm_table *d) {
  size_t *order = malloc((t->n_cols + 1) * sizeof *order), n_deferred = 0;
  CHECK(order != NULL);
  if (!order) return;
  for (size_t c = 0; c < t->n_cols; c++) order[c] = t->n_cols - 1 - c;
  for (size_t c = 0; c < d->n_cols; c++) n_deferred += lm_table_deferred(d, c);
  size_t per_col = (t->n_rows ? t->n_rows : 1) * sizeof(double);
  size_t budgets[] = {1, 2 * per_col, 3 * per_col + 1, (size_t)1 << 30};
  for (size_t b = 0; b < sizeof budgets / sizeof *budgets; b++) {
    visit_check v = {t, order, 0, 0};
    lm_diag diag;
    CHECK(lm_table_each_column(d, order, t->n_cols, budgets[b], visit_column, &v, &diag) == LM_OK);
    CHECK(v.bad == 0 && v.next == t->n_cols);
  }
  size_t after = 0, seen = 0;
  for (size_t c = 0; c < d->n_cols; c++) after += lm_table_deferred(d, c);
  CHECK(after == n_deferred);
  lm_diag diag;
  if (t->n_cols >= 3) {
    CHECK(lm_table_each_column(d, order, t->n_cols, 1, stop_visit, &seen, &diag) == LM_EDATA);
    CHECK(seen == 2 && strcmp(diag.message, "stop") == 0);
  }
  free(order);
}

/* Load text whole and with deferred columns (threads 1 and 2): the same
 * refusal, or the same counts, flags and, read back in blocks of 3 rows
 * and one row past the end, the same bits in every column. */
static void check_deferred(const char *text, size_t len, const char *const *eager) {
  static const char *const text_cols[] = {"Kernel_Name", NULL};
  for (int threads = 1; threads <= 2; threads++) {
    lm_csv_options o = {0}, od = {0};
    o.text_columns = od.text_columns = text_cols;
    o.threads = od.threads = threads;
    od.defer = 1;
    od.eager_columns = eager;
    lm_table *t = NULL, *d = NULL;
    lm_diag dw, dd;
    lm_status sw = lm_csv_parse(text, len, "t.csv", &o, &t, &dw);
    lm_status sd = lm_csv_parse(text, len, "t.csv", &od, &d, &dd);
    CHECK(sw == sd);
    if (sw != LM_OK || sd != LM_OK) {
      CHECK(sw == sd && dw.line == dd.line && dw.column == dd.column && strcmp(dw.message, dd.message) == 0);
      lm_table_free(t);
      lm_table_free(d);
      continue;
    }
    CHECK(d->n_rows == t->n_rows && d->n_cols == t->n_cols && d->fetch);
    CHECK(memcmp(d->row_missing, t->row_missing, t->n_rows) == 0);
    size_t n_deferred = 0, bad = 0;
    for (size_t c = 0; c < t->n_cols; c++) {
      const lm_column *a = &t->cols[c], *b = &d->cols[c];
      n_deferred += lm_table_deferred(d, c);
      bad += a->n_missing != b->n_missing || a->n_text != b->n_text || a->all_int != b->all_int ||
             a->first_text_line != b->first_text_line;
      for (size_t first = 0; first <= t->n_rows; first += 3) {
        size_t rows[3], n = 0;
        double v[3], *out = v;
        long col = (long)c;
        for (; n < 3 && first + n <= t->n_rows; n++) rows[n] = first + n;
        if (lm_table_fetch(d, &col, 1, rows, n, &out, NULL) != LM_OK) bad++;
        for (size_t i = 0; i < n; i++)
          bad += rows[i] < t->n_rows ? memcmp(&v[i], &a->values[rows[i]], sizeof(double)) != 0 : !isnan(v[i]);
      }
    }
    /* Many columns of a record at once (every one, every second, one
     * asked twice, out of order), every row in one batch and backwards: the
     * loader's bits again. */
    long *many = malloc((2 * t->n_cols + 2) * sizeof *many);
    double *vals = malloc((2 * t->n_cols + 2) * (t->n_rows + 1) * sizeof *vals);
    double **outs = malloc((2 * t->n_cols + 2) * sizeof *outs);
    size_t *all = malloc((t->n_rows + 1) * sizeof *all);
    CHECK(many && vals && outs && all);
    for (int pick = 0; many && vals && outs && all && pick < 3; pick++) {
      size_t n = 0;
      for (size_t c = t->n_cols; c-- > 0;)
        if (pick == 0 || (pick == 1 && c % 2 == 0) || (pick == 2 && c % 7 == 3)) many[n++] = (long)c;
      if (n) many[n++] = many[0];
      for (size_t k = 0; k < n; k++) outs[k] = vals + k * (t->n_rows + 1);
      for (size_t r = 0; r <= t->n_rows; r++) all[r] = pick == 2 ? t->n_rows - r : r;
      if (lm_table_fetch(d, many, n, all, t->n_rows + 1, outs, NULL) != LM_OK) bad++;
      for (size_t k = 0; k < n; k++)
        for (size_t r = 0; r <= t->n_rows; r++)
          bad += all[r] < t->n_rows ? memcmp(&outs[k][r], &t->cols[many[k]].values[all[r]], sizeof(double)) != 0
                                    : !isnan(outs[k][r]);
    }
    free(many);
    free(vals);
    free(outs);
    free(all);
    CHECK(bad == 0);
    CHECK(n_deferred > 0);
    check_each_column(t, d);
    /* Loading a deferred column keeps it: the same values again. */
    for (size_t c = 0; c < t->n_cols; c++) {
      const double *v = lm_table_values(d, c, NULL);
      CHECK(v && (t->n_rows == 0 || memcmp(v, t->cols[c].values, t->n_rows * sizeof *v) == 0));
      CHECK(!lm_table_deferred(d, c));
    }
    lm_table_free(t);
    lm_table_free(d);
  }
}

/* A caller that reads columns A and C, and every column of a name
 * ending in a digit. */
static int wants_some(void *ctx, const char *table, const char *column) {
  size_t n = strlen(column);
  (void)ctx;
  CHECK(table != NULL && strchr(table, '/') == NULL);
  return strcmp(column, "A") == 0 || strcmp(column, "C") == 0 ||
         (n && column[n - 1] >= '0' && column[n - 1] <= '9');
}

/* text written to a file and read with lm_csv_read on two threads through
 * windows of a few bytes (every record crossing one, windows grown for
 * long lines) and of the default size, columns loaded and deferred, and
 * deferred but with some loaded on the way (load_want; with a cap of one
 * byte, none); the buffer parsed serially that way too: the refusal of
 * the serial parse of the buffer (line, column, message), or its rows,
 * counts and, read back, the same bits in every column. */
static void check_windows(const char *text, size_t len, const char *const *eager, size_t max_record) {
  static const char *const text_cols[] = {"Kernel_Name", NULL};
  char path[] = "/tmp/lumen-test-csv-XXXXXX";
  int fd = mkstemp(path);
  CHECK(fd >= 0);
  if (fd < 0) return;
  FILE *f = fdopen(fd, "wb");
  CHECK(f && fwrite(text, 1, len, f) == len);
  if (f) fclose(f);
  lm_csv_options o = {0};
  o.text_columns = text_cols;
  o.threads = 1;
  o.max_record = max_record;
  lm_table *t = NULL;
  lm_diag dw;
  lm_status sw = lm_csv_parse(text, len, path, &o, &t, &dw);
  static const size_t windows[] = {16, 61, 4096, 0};
  for (size_t wi = 0; wi < sizeof windows / sizeof *windows; wi++)
    for (int mode = 0; mode < 5; mode++) {
      lm_csv_options od = o;
      od.threads = 2;
      od.window = windows[wi];
      od.defer = mode > 0;
      od.eager_columns = eager;
      if (mode >= 2) {
        od.load_want = wants_some;
        od.load_cap = mode == 3 ? 1 : 0;
      }
      lm_table *d = NULL;
      lm_diag dd;
      lm_status sd = mode == 4 ? (od.threads = 1, lm_csv_parse(text, len, path, &od, &d, &dd))
                               : lm_csv_read(path, &od, &d, &dd);
      CHECK(sw == sd);
      if (sw != LM_OK || sd != LM_OK) {
        CHECK(sw == sd && dw.line == dd.line && dw.column == dd.column && strcmp(dw.message, dd.message) == 0);
        if (sw == sd && strcmp(dw.message, dd.message) != 0)
          fprintf(stderr, "  window %zu: '%s' against '%s'\n", windows[wi], dd.message, dw.message);
        lm_table_free(d);
        continue;
      }
      CHECK(d->n_rows == t->n_rows && d->n_cols == t->n_cols);
      if (d->n_rows != t->n_rows || d->n_cols != t->n_cols) {
        lm_table_free(d);
        continue;
      }
      CHECK(memcmp(d->row_missing, t->row_missing, t->n_rows) == 0);
      size_t bad = 0;
      /* what load_want accepted is loaded, unless over the cap */
      long col_a = lm_table_find(d, "A");
      if (col_a >= 0 && mode >= 2) CHECK(lm_table_deferred(d, (size_t)col_a) == (mode == 3));
      size_t *rows = malloc((t->n_rows + 1) * sizeof *rows);
      double *v = malloc((t->n_rows + 1) * sizeof *v);
      CHECK(rows && v);
      for (size_t c = 0; rows && v && c < t->n_cols; c++) {
        const lm_column *a = &t->cols[c], *b = &d->cols[c];
        bad += a->n_missing != b->n_missing || a->n_text != b->n_text || a->all_int != b->all_int ||
               a->first_text_line != b->first_text_line;
        for (int back = 0; back < 2; back++) {
          for (size_t r = 0; r <= t->n_rows; r++) rows[r] = back ? t->n_rows - r : r;
          long col = (long)c;
          double *out = v;
          if (lm_table_fetch(d, &col, 1, rows, t->n_rows + 1, &out, NULL) != LM_OK) bad++;
          for (size_t r = 0; r <= t->n_rows; r++)
            bad += rows[r] < t->n_rows ? memcmp(&v[r], &a->values[rows[r]], sizeof(double)) != 0 : !isnan(v[r]);
        }
        if (a->text_ids)
          for (size_t r = 0; r < t->n_rows; r++) bad += strcmp(lm_table_text(t, c, r), lm_table_text(d, c, r)) != 0;
      }
      free(rows);
      free(v);
      CHECK(bad == 0);
      lm_table_free(d);
    }
  lm_table_free(t);
  remove(path);
}

static void test_deferred(void) {
  static const char *const eager[] = {"Dispatch_ID", NULL};
  static const char *const cases[] = {
      "Dispatch_ID,Kernel_Name,A,B,C,D\n"
      "0,\"k(a, b)\",1,2.5,,nan\n"
      "1,k2,\"3\",0.0,\"7\"\"\",4\r\n"
      "\n"
      "2,k3,123456789012345678,1e300,NULL,-0\n"
      "3,k3, 5 ,131072.0,x y,00012\n",
      /* long records: quoted fields among runs of short numbers, fields of
       * eight and nine digits, decimals, a last field without a newline */
      "Dispatch_ID,Kernel_Name,A,B,C,D,E,F,G,H,I,J,K,L,M\n"
      "0,k,1,22,333,4444,55555,666666,7777777,88888888,999999999,0.5,\"1,2\",12345678,00000000\n"
      "1,\"k, \"\"q\"\"\",12345678,1,2,3,4,5,6,7,8,9,10,11,12\r\n"
      "2,k,,,,\"\",7,131072.0,1.25,-3,+4,1e3,99999999,123456789012345,9\n"
      "3,k,1,2,3,4,5,6,7,8,9,10,11,12,87654321",
      /* decimals among integers in runs of deferred fields, and texts that
       * look almost like them */
      "Dispatch_ID,Kernel_Name,A,B,C,D,E,F,G,H,I,J,K,L,M\n"
      "0,k,1.5,2.25,3.125,4,5,6,7,8,9,10,11,12,13\n"
      "1,k,1,2,3,1.2.3,5,6,7,8,9,10,11,12,13\n"
      "2,k,1,2,3,4,1..2,6,7,8,9,10,11,12,13\n"
      "3,k,1,2,3,4,5,.5,7,8,9,10,11,12,13\n"
      "4,k,1,2,3,4,5,6,5.,8,9,10,11,12,13\n"
      "5,k,1,2,3,4,5,6,7,8.0,9,10,11,12,13\n"
      "6,k,1,2,3,4,5,6,7,8,9,10,11,12,13.5\n"
      "7,k,0.0,0.0,0.0,0.0,0.0,0.0,0.0,0.0,0.0,0.0,0.0,0.0,0.0\n",
      /* every cell of a column a plain integer, one with a decimal */
      "Dispatch_ID,Kernel_Name,A,B\n0,k,1,2\n1,k,3,4.25\n2,k,5,6",
      /* refusals that a deferred column must still give */
      "Dispatch_ID,Kernel_Name,A,B\n0,k,1,2\n1,k,3\n",
      "Dispatch_ID,Kernel_Name,A,B\n0,k,1,2,9\n",
      "Dispatch_ID,Kernel_Name,A,B\n0,k,1,\"2\n",
      "Dispatch_ID,Kernel_Name,A,B\n0,k,1,1e999\n",
      "Dispatch_ID,Kernel_Name,A,B\n0,k,1,ab\"c\n",
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    check_deferred(cases[i], strlen(cases[i]), eager);
    check_windows(cases[i], strlen(cases[i]), eager, 0);
  }
  /* Four hundred nines do not fit a double, deferred or not. */
  char big[600];
  snprintf(big, sizeof big, "Dispatch_ID,Kernel_Name,A,B\n0,k,1,%0400d9\n", 9);
  for (size_t i = 0; big[i]; i++)
    if (big[i] == '0') big[i] = '9';
  check_deferred(big, strlen(big), eager);
  /* Rows enough for lm_table_each_column to read a group in two halves
   * on two threads (three blocks and a part of one). */
  {
    lm_buf b = {0};
    lm_buf_puts(&b, "Dispatch_ID,Kernel_Name,A,B,C\n");
    for (unsigned r = 0; r < 3 * 8192 + 777; r++)
      lm_buf_printf(&b, "%u,k%u,%u,%u.%u,%s\n", r, r % 5, (r * 2654435761u) % 100000, r % 97, r % 10,
                    r % 13 ? "7" : "");
    check_deferred(b.data, b.len, eager);
    check_windows(b.data, b.len, eager, 0);
    lm_buf_fini(&b);
  }
  /* Through windows: a quoted newline (the halves are parsed again
   * serially), one in the last record, an unterminated quote in the
   * first half, a record longer than the limit past a window, a short
   * record in the second half, a last record without a newline and blank
   * lines. */
  {
    static const char *const tails[] = {",\"k\nk\",1,2,3\n", ",k,1,2,\"3\n", ",k,1,2,\"3,4\n",
                                        ",k,1,2\n", ",k,1,2,3", ",k,1,2,3\r\n\n\n"};
    for (size_t i = 0; i < sizeof tails / sizeof *tails; i++)
      for (int where = 0; where < 3; where++) {
        lm_buf b = {0};
        lm_buf_puts(&b, "Dispatch_ID,Kernel_Name,A,B,C\n");
        for (unsigned r = 0; r < 300; r++) {
          if ((where == 0 && r == 40) || (where == 1 && r == 299) || (where == 2 && r == 200)) {
            lm_buf_printf(&b, "%u", r);
            lm_buf_puts(&b, tails[i]);
          } else
            lm_buf_printf(&b, "%u,k%u,%u,%u.5,%u\n", r, r % 3, r * 7, r % 11, r);
        }
        check_windows(b.data, b.len, eager, 0);
        lm_buf_fini(&b);
      }
    /* Wide records of short integers and decimals that a multiplication
     * by the power of ten's inverse would round otherwise (0.3, 12.7). */
    lm_buf w = {0};
    lm_buf_puts(&w, "Dispatch_ID,Kernel_Name");
    for (int c = 0; c < 40; c++) lm_buf_printf(&w, ",V%d", c);
    lm_buf_puts(&w, "\n");
    for (unsigned r = 0; r < 300; r++) {
      lm_buf_printf(&w, "%u,k", r);
      for (unsigned c = 0; c < 40; c++) {
        unsigned x = (r * 31 + c * 7) % 23;
        if (x < 8) lm_buf_printf(&w, ",%u.%u", x * 4 + c % 3, (r + c) % 10);
        else if (x < 20) lm_buf_printf(&w, ",%u", x * 1000 + r);
        else lm_buf_printf(&w, ",%u.0%u", x, r % 10);
      }
      lm_buf_puts(&w, "\n");
    }
    check_windows(w.data, w.len, eager, 0);
    lm_buf_fini(&w);
    lm_buf b = {0};
    lm_buf_puts(&b, "Dispatch_ID,Kernel_Name,A\n");
    for (unsigned r = 0; r < 300; r++) lm_buf_printf(&b, "%u,k,%u\n", r, r == 250 ? 123456789u : r);
    check_windows(b.data, b.len, eager, 16);
    check_windows(b.data, b.len, eager, 200);
    lm_buf_fini(&b);
  }
  /* The shared workloads' tables, and one scaled up to use two threads. */
  const char *shared = getenv("LUMEN_SHARED_DIR");
  static const char *const files[] = {"vcopy/MI200/pmc_perf.csv", "vcopy/MI300X_A1/pmc_perf.csv",
                                      "_mix/mix_MI200/pmc_perf.csv", "vcopy/MI200/SQ_LEVEL_WAVES.csv"};
  for (size_t i = 0; shared && i < sizeof files / sizeof *files; i++) {
    char path[4096];
    snprintf(path, sizeof path, "%s/workloads/%s", shared, files[i]);
    FILE *f = fopen(path, "rb");
    if (!f) continue;
    lm_buf b = {0};
    char chunk[65536];
    size_t n;
    while ((n = fread(chunk, 1, sizeof chunk, f)) > 0) lm_buf_append(&b, chunk, n);
    fclose(f);
    check_deferred(b.data, b.len, eager);
    check_windows(b.data, b.len, eager, 0);
    lm_buf_fini(&b);
  }
}

/* A workload read for streaming: pmc_perf's eager columns are loaded, and
 * the accumulate tables' copies of them too unless levels_lazy says the
 * caller reads those tables only through the evaluator. */
static void test_levels_lazy(void) {
  const char *shared = getenv("LUMEN_SHARED_DIR");
  if (!shared) return;
  char dir[4096];
  snprintf(dir, sizeof dir, "%s/workloads/vcopy/MI200", shared);
  static const char *const eager[] = {"Dispatch_ID", "Grid_Size", NULL};
  for (int lazy = 0; lazy < 2; lazy++) {
    lm_workload_options wo = {.defer = 1, .eager_columns = eager, .levels_lazy = lazy};
    lm_workload *w = NULL;
    lm_diag d;
    lm_diag_clear(&d);
    CHECK(lm_workload_read_opts(dir, &wo, &w, &d) == LM_OK);
    if (!w) continue;
    long pc = lm_table_find(w->pmc, "Grid_Size");
    CHECK(pc >= 0 && !lm_table_deferred(w->pmc, (size_t)pc));
    CHECK(w->n_levels > 0);
    for (size_t i = 0; i < w->n_levels; i++) {
      long c = lm_table_find(w->levels[i], "Grid_Size");
      CHECK(c >= 0 && lm_table_deferred(w->levels[i], (size_t)c) == lazy);
    }
    lm_workload_free(w);
  }
}

int main(void) {
  test_levels_lazy();
  test_deferred();
  test_basic();
  test_numbers_exact();
  test_errors();
  test_parallel_matches_serial();
  test_alloc_failures();
  return check_report("test_csv");
}
