/* test_ranks_packed.c - the packed merged columns of an MPI profile's
 * rank.R parts (io, src/ranks/packed.c). Parts of 1, 1,000, 3,000, 129 and
 * 1,024 rows whose counter columns only the evaluator reads hold negative
 * integers, integers near and past 2^53 up to the largest the integer
 * form holds, token widths of 1, 2, 3 and 8 bytes, blanks, one value in
 * one part or in every part, columns some parts lack, and in one part
 * only a fraction, -0.0, a NaN payload, an infinity or an integer of 2^62
 * and more (that part falls back to doubles). The folder read the default
 * way (those columns deferred, packed) gives, bit for bit, what it gives
 * with every column in memory (--load whole), through lm_table_fetch with
 * rows that start mid-part, cross parts and marks, come in random order,
 * repeat or lie past the end (from two threads at once too), through
 * lm_table_values, under a --rank selection, and with the parts loaded
 * elsewhere (as --mpi's other processes do) and packed on arrival. */
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "sql/sql.h"
#include "db/db.h"
#include "ranks/ranks.h"
#include "load/load.h"

#define N_PARTS 5
static const size_t part_rows[N_PARTS] = {1, 1000, 3000, 129, 1024};
static const int part_rank[N_PARTS] = {0, 1, 2, 5, 7};

enum {
  C_NEG,
  C_W1,
  C_W2,
  C_W3,
  C_W8,
  C_BIG,
  C_EDGE,
  C_HUGE,
  C_ONE_PART,
  C_EACH,
  C_SAME,
  C_BLANK,
  C_FRAC,
  C_NEGZ,
  C_NANPAY,
  C_INF,
  C_LACK,
  C_ONLY2,
  C_LACK_ONE,
  N_COLS
};
static const char *col_name[N_COLS] = {"T_NEG",    "T_W1",       "T_W2",   "T_W3",    "T_W8",      "T_BIG",  "T_EDGE",
                                       "T_HUGE",   "T_ONE_PART", "T_EACH", "T_SAME",  "T_BLANK",   "T_FRAC", "T_NEGZ",
                                       "T_NANPAY", "T_INF",      "T_LACK", "T_ONLY2", "T_LACK_ONE"};

/* Whether part p has column c (a part without it is blank there). */
static int present(int c, size_t p) {
  return !((c == C_LACK && p == 3) || (c == C_ONLY2 && p != 2) || (c == C_LACK_ONE && p == 1));
}

static double from_bits(uint64_t b) {
  double v;
  memcpy(&v, &b, sizeof v);
  return v;
}

/* The value of column c in row r of part p. */
static double value_of(int c, size_t p, size_t r) {
  double sign = r % 2 ? 1.0 : -1.0;
  if (!present(c, p)) return LM_NAN;
  switch (c) {
  case C_NEG: return -(double)((r * 7919 + p * 13) % 100000) - 1;
  case C_W1: return (double)((r * 3 + p) % 50);
  case C_W2: return (double)((r * 37 + p) % 20000);
  case C_W3: return (double)((r * 7919) % 4000000);
  case C_W8: return sign * (2305843009213693952.0 + (double)(r + p) * 1024);
  case C_BIG:
    if (p == 3) return 1152921504606846976.0 + (double)r * 256;          /* 2^60 */
    if (p % 2) return sign * (36028797018963968.0 + (double)r * 8);      /* 2^55 */
    return (double)(9007199254740992LL - 5 + (long long)r);              /* across 2^53 */
  case C_EDGE: return p == 2 ? sign * 4611686018427387392.0 : (double)r; /* 2^62 - 512 */
  case C_HUGE: /* 2^62 on, first -2^62 after 2^62 (a difference of -2^63) */
    if (p != 1) return (double)r;
    return r < 10 ? sign * -4611686018427387904.0 : 4611686018427387904.0 + (double)r * 1024;
  case C_ONE_PART: return p == 2 ? 42 : (double)(r + p);
  case C_EACH: return 1000 + 3.0 * (double)p;
  case C_SAME: return 5;
  case C_BLANK: return p == 3 || r % 7 == 3 ? LM_NAN : (double)r - 50;
  case C_FRAC: return p == 2 && r == 1500 ? 0.5 : (double)r;
  case C_NEGZ: return p == 1 && r == 10 ? -0.0 : (double)(r % 10);
  case C_NANPAY: return p == 3 && r == 5 ? from_bits(0x7ff8000000000123ULL) : (double)r;
  case C_INF: return p == 1 && r == 3 ? (double)INFINITY : (double)r;
  case C_LACK: return (double)r * 5 - 7;
  case C_ONLY2: return (double)r * 11;
  case C_LACK_ONE: return 7.0 * (double)p;
  default: return 0;
  }
}

/* The part as a lumen database dir/rank.R/lumen.db: a folder of CSV files
 * (dispatch columns, the test's columns, sysinfo.csv of a real workload)
 * read, its test columns set to value_of, and written. */
static int write_part(const char *dir, size_t p, const char *sysinfo) {
  char path[4096], csv[8400];
  snprintf(path, sizeof path, "%s/src.%zu", dir, p);
  mkdir(path, 0700);
  snprintf(csv, sizeof csv, "cp '%s' '%s/sysinfo.csv'", sysinfo, path);
  if (system(csv) != 0) return 0;
  snprintf(csv, sizeof csv, "%s/pmc_perf.csv", path);
  FILE *f = fopen(csv, "w");
  if (!f) return 0;
  fprintf(f, "Dispatch_ID,Kernel_Name,GPU_ID,Grid_Size,Workgroup_Size,Start_Timestamp,End_Timestamp");
  for (int c = 0; c < N_COLS; c++)
    if (present(c, p)) fprintf(f, ",%s", col_name[c]);
  fprintf(f, "\n");
  for (size_t r = 0; r < part_rows[p]; r++) {
    fprintf(f, "%zu,k%zu,0,256,64,%zu,%zu", r, r % 3, 1000 + r * 100, 1050 + r * 100);
    for (int c = 0; c < N_COLS; c++)
      if (present(c, p)) fprintf(f, ",0");
    fprintf(f, "\n");
  }
  fclose(f);
  lm_workload *w = NULL;
  lm_sql *db = NULL;
  lm_diag d;
  lm_diag_clear(&d);
  int ok = lm_workload_read(path, &w, &d) == LM_OK;
  for (int c = 0; ok && c < N_COLS; c++) {
    if (!present(c, p)) continue;
    long k = lm_table_find(w->pmc, col_name[c]);
    ok = k >= 0 && w->pmc->cols[k].values && !w->pmc->cols[k].text_ids;
    for (size_t r = 0; ok && r < part_rows[p]; r++) w->pmc->cols[k].values[r] = value_of(c, p, r);
  }
  ok = ok && lm_table_finish(w->pmc) == LM_OK;
  char db_path[4200];
  snprintf(path, sizeof path, "%s/rank.%d", dir, part_rank[p]);
  mkdir(path, 0700);
  snprintf(db_path, sizeof db_path, "%s/" LM_WORKLOAD_DB, path);
  ok = ok && lm_sql_open(db_path, LM_DB_CREATE, &db, &d) == LM_OK && lm_db_schema(db, 1, &d) == LM_OK &&
       lm_db_write_workload(db, w, "part", NULL, path, NULL, &d) == LM_OK;
  if (!ok) {
    char line[1024];
    fprintf(stderr, "part %zu: %s\n", p, lm_diag_format(&d, line, sizeof line));
  }
  lm_sql_close(db);
  lm_workload_free(w);
  return ok;
}

/* The default read: the test's columns only for the evaluator (what the
 * analysis's choice gives counters it evaluates); --load whole: all. */
static int later(void *ctx, const char *source, const char *name) {
  (void)ctx;
  return strcmp(source, "pmc_perf") == 0 && strncmp(name, "T_", 2) == 0 ? LM_DB_WANT_LATER : 1;
}
static int every(void *ctx, const char *source, const char *name) {
  (void)ctx;
  (void)source;
  (void)name;
  return 1;
}
static lm_db_want_fn choose_later(void *ctx, const char *arch, const char *compat, void **want_ctx) {
  (void)compat;
  (void)ctx;
  (void)arch;
  *want_ctx = NULL;
  return later;
}
static lm_db_want_fn choose_every(void *ctx, const char *arch, const char *compat, void **want_ctx) {
  (void)compat;
  (void)ctx;
  (void)arch;
  *want_ctx = NULL;
  return every;
}

static uint64_t rng = 88172645463325252ULL;
static size_t next_rand(size_t n) {
  rng ^= rng << 13;
  rng ^= rng >> 7;
  rng ^= rng << 17;
  return (size_t)(rng % n);
}

/* The columns cols of t (the packed read) at rows[0..k) against those of
 * all (every column in memory) at the rows `off` further, bit for bit;
 * `what` names the row list. */
static int fetch_rows(const lm_table *t, const lm_table *all, const long *cols, const long *all_cols,
                      const size_t *rows, size_t k, size_t off, const char *what) {
  double *buf = malloc((k + 1) * N_COLS * sizeof *buf);
  double *out[N_COLS];
  for (int c = 0; c < N_COLS; c++) out[c] = buf + (size_t)c * (k + 1);
  for (size_t i = 0; i < (k + 1) * N_COLS; i++) buf[i] = 12345.678;
  lm_diag d;
  lm_diag_clear(&d);
  int ok = lm_table_fetch(t, cols, N_COLS, rows, k, out, &d) == LM_OK;
  if (!ok) fprintf(stderr, "%s: fetch failed: %s\n", what, d.message);
  for (int c = 0; ok && c < N_COLS; c++) {
    const double *v = all->cols[all_cols[c]].values;
    for (size_t i = 0; ok && i < k; i++) {
      double want = rows[i] < t->n_rows ? v[rows[i] + off] : LM_NAN;
      if (memcmp(&want, &out[c][i], sizeof want) != 0) {
        uint64_t a, b;
        memcpy(&a, &want, sizeof a);
        memcpy(&b, &out[c][i], sizeof b);
        fprintf(stderr, "%s: %s row %zu (entry %zu): %.17g (%016llx), expected %.17g (%016llx)\n", what, col_name[c],
                rows[i], i, out[c][i], (unsigned long long)b, want, (unsigned long long)a);
        ok = 0;
      }
    }
  }
  free(buf);
  return ok;
}
static int fetch_same(const lm_table *t, const lm_table *all, const long *cols, const long *all_cols,
                      const size_t *rows, size_t k, const char *what) {
  return fetch_rows(t, all, cols, all_cols, rows, k, 0, what);
}

/* Two threads fetching at once (lm_table_fetch_fn's contract): random
 * runs and draws, each thread its own rows. */
typedef struct fetcher {
  const lm_table *t, *all;
  const long *cols, *all_cols;
  uint64_t seed;
  int ok;
} fetcher;

static void *fetch_side(void *arg) {
  fetcher *f = arg;
  size_t n = f->t->n_rows, *rows = malloc(800 * sizeof *rows);
  f->ok = rows != NULL;
  for (int round = 0; f->ok && round < 60; round++) {
    size_t k = 0;
    while (k < 800) {
      f->seed ^= f->seed << 13;
      f->seed ^= f->seed >> 7;
      f->seed ^= f->seed << 17;
      size_t r = (size_t)(f->seed % (n + 2)), len = round % 2 ? 1 + (size_t)(f->seed >> 40) % 200 : 1;
      for (size_t i = 0; i < len && k < 800; i++) rows[k++] = r + i;
    }
    f->ok = fetch_same(f->t, f->all, f->cols, f->all_cols, rows, k, "two threads");
  }
  free(rows);
  return NULL;
}

/* Parts loaded "elsewhere" (as lumen analyze --mpi's other processes
 * load them): each read alone, every column in its own memory, then
 * handed to the merge, which packs them on arrival. */
static lm_status plan_parts(void *ctx, size_t n_parts, int exchange, lm_diag *diag) {
  (void)diag;
  int *exchanged = ctx;
  *exchanged = exchange && n_parts == N_PARTS;
  return LM_OK;
}
static lm_status load_part(void *ctx, size_t i, const char *dir, const lm_workload_options *opts, lm_workload **out,
                           lm_diag *diag) {
  (void)ctx;
  (void)i;
  lm_workload_options own = *opts;
  own.place = NULL;
  own.place_ctx = NULL;
  own.parts = NULL;
  own.choose = choose_every;
  return lm_workload_read_opts(dir, &own, out, diag);
}

int main(void) {
  const char *shared = getenv("LUMEN_SHARED_DIR");
  if (!shared) shared = "../shared";
  char dir[] = "/tmp/lumen-test-packed-XXXXXX", sysinfo[4096];
  CHECK(mkdtemp(dir) != NULL);
  snprintf(sysinfo, sizeof sysinfo, "%s/workloads/vcopy/MI200/sysinfo.csv", shared);
  for (size_t p = 0; p < N_PARTS; p++) CHECK(write_part(dir, p, sysinfo));
  /* only the rank.R parts in the folder */
  for (size_t p = 0; p < N_PARTS; p++) {
    char cmd[4200];
    snprintf(cmd, sizeof cmd, "rm -rf '%s/src.%zu'", dir, p);
    CHECK(system(cmd) == 0);
  }
  CHECK(lm_ranks_present(dir));

  lm_workload_options opts;
  memset(&opts, 0, sizeof opts);
  lm_workload *w = NULL, *whole = NULL;
  lm_diag d;
  lm_diag_clear(&d);
  opts.choose = choose_later;
  CHECK(lm_workload_read_opts(dir, &opts, &w, &d) == LM_OK);
  opts.choose = choose_every;
  CHECK(lm_workload_read_opts(dir, &opts, &whole, &d) == LM_OK);
  if (!w || !whole) {
    char line[1024];
    fprintf(stderr, "%s\n", lm_diag_format(&d, line, sizeof line));
    return check_report("test_ranks_packed");
  }
  size_t n = 0, at[N_PARTS];
  for (size_t p = 0; p < N_PARTS; p++) {
    at[p] = n;
    n += part_rows[p];
  }
  const lm_table *t = w->pmc, *all = whole->pmc;
  CHECK(t->n_rows == n && all->n_rows == n && w->n_parts == N_PARTS);
  long cols[N_COLS], all_cols[N_COLS];
  for (int c = 0; c < N_COLS; c++) {
    cols[c] = lm_table_find(t, col_name[c]);
    all_cols[c] = lm_table_find(all, col_name[c]);
    CHECK(cols[c] >= 0 && all_cols[c] >= 0);
    if (cols[c] < 0 || all_cols[c] < 0) return check_report("test_ranks_packed");
  }
  /* --load whole: every column in memory, each value as written. */
  for (int c = 0; c < N_COLS; c++) {
    const lm_column *col = &all->cols[all_cols[c]];
    CHECK(!col->deferred && col->values);
    int same = col->values != NULL;
    for (size_t p = 0; same && p < N_PARTS; p++)
      for (size_t r = 0; same && r < part_rows[p]; r++) {
        double v = value_of(c, p, r);
        if (memcmp(&v, &col->values[at[p] + r], sizeof v) != 0) {
          fprintf(stderr, "whole: %s part %zu row %zu: %.17g, written %.17g\n", col_name[c], p, r,
                  col->values[at[p] + r], v);
          same = 0;
        }
      }
    CHECK(same);
  }
  /* The default read keeps them packed: deferred (no column-sized array),
   * but for the column of one value everywhere (one shared array). */
  for (int c = 0; c < N_COLS; c++) {
    const lm_column *col = &t->cols[cols[c]];
    if (c == C_SAME) {
      CHECK(!col->deferred && col->values && col->values[n - 1] == 5);
    } else if (!col->deferred || col->values) {
      fprintf(stderr, "%s is not deferred\n", col_name[c]);
      CHECK(0);
    }
  }
  CHECK(t->fetch != NULL && t->fetch_state != NULL);
  /* Statistics as with every column in memory. */
  for (int c = 0; c < N_COLS; c++) {
    const lm_column *x = &t->cols[cols[c]], *y = &all->cols[all_cols[c]];
    CHECK(x->n_missing == y->n_missing && x->all_int == y->all_int);
  }
  CHECK(memcmp(t->row_missing, all->row_missing, n) == 0);

  size_t cap = 4 * n + 64, *rows = malloc(cap * sizeof *rows);
  /* Every row in order, and in reverse. */
  for (size_t i = 0; i < n; i++) rows[i] = i;
  CHECK(fetch_same(t, all, cols, all_cols, rows, n, "every row"));
  for (size_t i = 0; i < n; i++) rows[i] = n - 1 - i;
  CHECK(fetch_same(t, all, cols, all_cols, rows, n, "reversed"));
  /* Runs that start anywhere near the marks (every 128 and 1,024 rows of
   * a part) and the parts' bounds, of lengths that stay in a part or
   * cross one or two, some running past the end. */
  {
    size_t starts[64], n_starts = 0;
    for (size_t p = 0; p < N_PARTS; p++) {
      size_t offs[] = {0, 1, 2, 126, 127, 128, 129, 255, 256, 500, 1022, 1023, 1024, 1025, 2047, 2048, 2049, 2999};
      for (size_t k = 0; k < sizeof offs / sizeof *offs && n_starts < 64; k++)
        if (offs[k] < part_rows[p]) starts[n_starts++] = at[p] + offs[k];
    }
    const size_t lens[] = {1, 2, 3, 127, 128, 129, 130, 1000, 1100, 2500, 4200};
    int ok = 1;
    for (size_t s = 0; s < n_starts; s++)
      for (size_t l = 0; l < sizeof lens / sizeof *lens; l++) {
        for (size_t i = 0; i < lens[l]; i++) rows[i] = starts[s] + i;
        char what[64];
        snprintf(what, sizeof what, "run of %zu from row %zu", lens[l], starts[s]);
        if (!fetch_same(t, all, cols, all_cols, rows, lens[l], what)) ok = 0;
      }
    CHECK(ok);
  }
  /* Rows in random order: a permutation, then draws with repeats and rows
   * past the end, then short runs with gaps. */
  {
    for (size_t i = 0; i < n; i++) rows[i] = i;
    for (size_t i = n - 1; i > 0; i--) {
      size_t j = next_rand(i + 1), x = rows[i];
      rows[i] = rows[j];
      rows[j] = x;
    }
    CHECK(fetch_same(t, all, cols, all_cols, rows, n, "permutation"));
    int ok = 1;
    for (int round = 0; round < 20; round++) {
      size_t k = 1 + next_rand(700);
      for (size_t i = 0; i < k; i++) rows[i] = next_rand(n + 5);
      if (!fetch_same(t, all, cols, all_cols, rows, k, "random draws")) ok = 0;
    }
    for (int round = 0; round < 40; round++) {
      size_t k = 0, r = next_rand(n);
      while (k < 600 && r < n + 3) {
        size_t len = 1 + next_rand(300);
        for (size_t i = 0; i < len && k < 600; i++) rows[k++] = r + i;
        r += len + next_rand(3); /* 0: a run that goes on */
        if (next_rand(5) == 0) r = next_rand(n);
      }
      if (!fetch_same(t, all, cols, all_cols, rows, k, "runs with gaps")) ok = 0;
    }
    CHECK(ok);
    /* one row at a time, each column alone */
    ok = 1;
    for (size_t r = 0; r < n && ok; r += 1 + next_rand(40)) {
      for (int c = 0; c < N_COLS && ok; c++) {
        double got = 0, want = all->cols[all_cols[c]].values[r], *out = &got;
        ok = lm_table_fetch(t, &cols[c], 1, &r, 1, &out, &d) == LM_OK && memcmp(&got, &want, sizeof got) == 0;
        if (!ok) fprintf(stderr, "%s row %zu alone: %.17g, expected %.17g\n", col_name[c], r, got, want);
      }
    }
    CHECK(ok);
  }
  /* No rows; a column out of range is refused. */
  {
    double x = 7, *out = &x;
    CHECK(lm_table_fetch(t, cols, 1, rows, 0, &out, &d) == LM_OK && x == 7);
    long bad = (long)t->n_cols;
    CHECK(lm_table_fetch(t, &bad, 1, rows, 1, &out, &d) == LM_EINVAL);
  }
  {
    fetcher f[2] = {{t, all, cols, all_cols, 12345, 0}, {t, all, cols, all_cols, 67890, 0}};
    pthread_t th;
    int started = pthread_create(&th, NULL, fetch_side, &f[0]) == 0;
    fetch_side(&f[1]);
    if (started) pthread_join(th, NULL);
    CHECK(started && f[0].ok && f[1].ok);
  }
  /* lm_table_values: the whole column, kept. */
  for (int c = 0; c < N_COLS; c++) {
    const double *v = lm_table_values(t, (size_t)cols[c], &d);
    CHECK(v != NULL);
    if (!v) continue;
    if (memcmp(v, all->cols[all_cols[c]].values, n * sizeof *v) != 0) {
      fprintf(stderr, "lm_table_values: %s differs\n", col_name[c]);
      CHECK(0);
    }
  }
  /* --rank 1,2: the first part read for its information alone (a part of
   * no rows before the packed ones), the last left out; the selected
   * parts' rows as with every column. */
  {
    lm_idset sel_ranks = {0};
    CHECK(lm_idset_parse(&sel_ranks, "1,2", "--rank", &d) == LM_OK);
    opts.choose = choose_later;
    opts.ranks = &sel_ranks;
    lm_workload *sel = NULL;
    CHECK(lm_workload_read_opts(dir, &opts, &sel, &d) == LM_OK);
    size_t k = part_rows[1] + part_rows[2];
    CHECK(sel && sel->pmc->n_rows == k);
    long sel_cols[N_COLS];
    int found = sel != NULL;
    for (int c = 0; found && c < N_COLS; c++) found = (sel_cols[c] = lm_table_find(sel->pmc, col_name[c])) >= 0;
    CHECK(found);
    if (found && sel->pmc->n_rows == k) {
      CHECK(lm_table_deferred(sel->pmc, (size_t)sel_cols[C_NEG]) &&
            lm_table_deferred(sel->pmc, (size_t)sel_cols[C_W8]));
      for (size_t i = 0; i < k + 2; i++) rows[i] = i;
      CHECK(fetch_rows(sel->pmc, all, sel_cols, all_cols, rows, k + 2, at[1], "--rank 1,2"));
      for (size_t i = 0; i < k; i++) rows[i] = next_rand(k + 2);
      CHECK(fetch_rows(sel->pmc, all, sel_cols, all_cols, rows, k, at[1], "--rank 1,2 random"));
      for (size_t i = 0; i < k; i++) rows[i] = 700 + i % 500;
      CHECK(fetch_rows(sel->pmc, all, sel_cols, all_cols, rows, k, at[1], "--rank 1,2 across the parts"));
    }
    lm_workload_free(sel);
    lm_idset_fini(&sel_ranks);
  }
  /* Parts loaded elsewhere: packed on arrival, the same values. */
  {
    int exchanged = 0;
    lm_part_source src = {plan_parts, load_part, &exchanged};
    lm_workload_options eo;
    memset(&eo, 0, sizeof eo);
    eo.choose = choose_later;
    eo.parts = &src;
    lm_workload *ew = NULL;
    CHECK(lm_workload_read_opts(dir, &eo, &ew, &d) == LM_OK);
    CHECK(exchanged);
    long e_cols[N_COLS];
    int found = ew && ew->pmc->n_rows == n;
    for (int c = 0; found && c < N_COLS; c++) found = (e_cols[c] = lm_table_find(ew->pmc, col_name[c])) >= 0;
    CHECK(found);
    if (found) {
      CHECK(lm_table_deferred(ew->pmc, (size_t)e_cols[C_NEG]) && lm_table_deferred(ew->pmc, (size_t)e_cols[C_W8]) &&
            lm_table_deferred(ew->pmc, (size_t)e_cols[C_BIG]));
      for (size_t i = 0; i < n + 2; i++) rows[i] = i;
      CHECK(fetch_same(ew->pmc, all, e_cols, all_cols, rows, n + 2, "elsewhere: every row"));
      for (size_t i = 0; i < n; i++) rows[i] = next_rand(n + 2);
      CHECK(fetch_same(ew->pmc, all, e_cols, all_cols, rows, n, "elsewhere: random"));
      for (size_t i = 0; i < n; i++) rows[i] = 900 + i % 1300;
      CHECK(fetch_same(ew->pmc, all, e_cols, all_cols, rows, n, "elsewhere: across the parts"));
    }
    lm_workload_free(ew);
  }
  free(rows);
  lm_workload_free(w);
  lm_workload_free(whole);
  char cmd[4200];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  CHECK(system(cmd) == 0);
  return check_report("test_ranks_packed");
}
