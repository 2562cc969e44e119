/* test_ranks.c - the parts of an MPI profile read as one workload (io) and
 * its rank table (analyze): parts of real workloads written as rank.R
 * databases merge into their rows in rank order, each with its rank; a
 * column one part lacks is blank on its rows; selecting one rank gives the
 * analysis of that part alone (every cell); the rank table agrees with a
 * naive count over the parts; the ranks, every part's system information
 * and roofline survive a database round trip (one rank's analysis from
 * the database is its part's), and a database of schema version 3 reads
 * as it is;
 * parts of different architectures are refused; the merged tables'
 * statistics computed on threads equal one pass's. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "analyze/analyze.h"
#include "check.h"
#include "sql/sql.h"
#include "db/db.h"
#include "ranks/ranks.h"
#include "load/load.h"

static int same_cells(const lm_analysis *a, const lm_analysis *b) {
  if (a->n_tables != b->n_tables) return 0;
  for (int32_t t = 0; t < a->n_tables; t++) {
    const lm_rtable *x = &a->tables[t], *y = &b->tables[t];
    if (x->n_rows != y->n_rows || x->n_cols != y->n_cols) {
      fprintf(stderr, "table %s: %dx%d, %dx%d\n", x->id, x->n_rows, x->n_cols, y->n_rows, y->n_cols);
      return 0;
    }
    for (int32_t i = 0; i < x->n_rows * x->n_cols; i++) {
      const lm_cell *p = &x->cells[i], *q = &y->cells[i];
      int same = p->kind == q->kind;
      if (same && p->kind == LM_CELL_NUMBER) same = p->num == q->num || (isnan(p->num) && isnan(q->num));
      if (same && p->kind == LM_CELL_TEXT) same = strcmp(p->text, q->text) == 0;
      if (!same) {
        fprintf(stderr, "table %s cell %d: kinds %d, %d (%g, %g)\n", x->id, i, p->kind, q->kind, p->num, q->num);
        return 0;
      }
    }
  }
  return 1;
}

/* Write the workload folder src as the lumen database dir/rank.R/lumen.db. */
static int write_part(const char *dir, int rank, const char *src) {
  char path[4096];
  snprintf(path, sizeof path, "%s/rank.%d", dir, rank);
  mkdir(path, 0700);
  snprintf(path, sizeof path, "%s/rank.%d/" LM_WORKLOAD_DB, dir, rank);
  lm_workload *w = NULL;
  lm_sql *db = NULL;
  lm_diag d;
  int ok = lm_workload_read(src, &w, &d) == LM_OK && lm_sql_open(path, LM_DB_CREATE, &db, &d) == LM_OK &&
           lm_db_schema(db, 1, &d) == LM_OK && lm_db_write_workload(db, w, "part", NULL, src, NULL, &d) == LM_OK;
  if (!ok) {
    char line[1024];
    fprintf(stderr, "%s: %s\n", src, lm_diag_format(&d, line, sizeof line));
  }
  lm_sql_close(db);
  lm_workload_free(w);
  return ok;
}

/* A narrow choice of columns for the tests below: the SQ_INSTS_ counters
 * and every roofline column; the architectures it was asked for are
 * recorded. */
typedef struct choice_log {
  int calls;
  char arch[64];
  int real;            /* 1: the analysis's own choice (lm_analyze_wants) */
} choice_log;

static int sq_insts(void *ctx, const char *source, const char *name) {
  (void)ctx;
  return strcmp(source, "roofline") == 0 || strncmp(name, "SQ_INSTS_", 9) == 0;
}

static lm_db_want_fn choose_for_test(void *ctx, const char *arch, const char *compat, void **want_ctx) {
  (void)compat;
  choice_log *log = ctx;
  log->calls++;
  snprintf(log->arch, sizeof log->arch, "%s", arch);
  if (!log->real) return sq_insts;
  *want_ctx = (void *)lm_metrics_builtin(arch);
  return lm_analyze_wants;
}

/* A dispatch column of pmc_perf (always read); the accumulate tables
 * have none. */
static int fixed_column(const lm_table *t, const char *name) {
  return strcmp(t->name, "pmc_perf") == 0 && (lm_db_dispatch_column(name) || strcmp(name, "Kernel_Name") == 0);
}

/* Every counter column of `got` is one want accepts, and every such
 * column of `all` is in `got` with the same values. */
static int only_wanted(const lm_table *got, const lm_table *all, lm_db_want_fn want, void *ctx) {
  int ok = got->n_rows == all->n_rows;
  for (size_t c = 0; ok && c < got->n_cols; c++)
    if (!fixed_column(got, got->cols[c].name) && !want(ctx, got->name, got->cols[c].name)) {
      fprintf(stderr, "%s: column %s read but not wanted\n", got->name, got->cols[c].name);
      ok = 0;
    }
  for (size_t c = 0; ok && c < all->n_cols; c++) {
    const lm_column *a = &all->cols[c];
    if (!fixed_column(all, a->name) && !want(ctx, all->name, a->name)) continue;
    long k = lm_table_find(got, a->name);
    if (k < 0) {
      fprintf(stderr, "%s: wanted column %s not read\n", all->name, a->name);
      ok = 0;
      break;
    }
    for (size_t r = 0; ok && r < all->n_rows; r++)
      ok = memcmp(&got->cols[k].values[r], &a->values[r], sizeof(double)) == 0;
    if (!ok) fprintf(stderr, "%s: column %s differs\n", all->name, a->name);
  }
  return ok;
}

/* The merged tables' statistics, summed from the parts' own, are those
 * one pass of lm_table_finish over every cell gives. */
static int stats_as_finish(lm_table *t) {
  size_t n = t->n_cols;
  size_t *missing = malloc((n + 1) * sizeof *missing), *n_text = malloc((n + 1) * sizeof *n_text);
  uint8_t *all_int = malloc(n + 1), *rows = malloc(t->n_rows + 1);
  int ok = missing && n_text && all_int && rows;
  for (size_t c = 0; ok && c < n; c++) {
    missing[c] = t->cols[c].n_missing;
    all_int[c] = t->cols[c].all_int;
    n_text[c] = t->cols[c].n_text;
  }
  if (ok) memcpy(rows, t->row_missing, t->n_rows);
  if (ok) lm_table_finish(t);
  for (size_t c = 0; ok && c < n; c++) {
    /* (lm_table_finish leaves n_text of a numeric column as it was) */
    ok = missing[c] == t->cols[c].n_missing && all_int[c] == t->cols[c].all_int && n_text[c] == t->cols[c].n_text;
    if (!ok) fprintf(stderr, "%s column %s: %zu blanks, %d integer; a pass gives %zu, %d\n", t->name, t->cols[c].name,
                     missing[c], all_int[c], t->cols[c].n_missing, t->cols[c].all_int);
  }
  if (ok && memcmp(rows, t->row_missing, t->n_rows) != 0) {
    fprintf(stderr, "%s: rows with a blank differ\n", t->name);
    ok = 0;
  }
  free(missing);
  free(n_text);
  free(all_int);
  free(rows);
  return ok;
}

static double total_ns(const lm_workload *w) {
  long s = lm_table_find(w->pmc, "Start_Timestamp"), e = lm_table_find(w->pmc, "End_Timestamp");
  double t = 0;
  for (size_t r = 0; r < w->pmc->n_rows; r++) t += w->pmc->cols[e].values[r] - w->pmc->cols[s].values[r];
  return t;
}

int main(void) {
  const char *shared = getenv("LUMEN_SHARED_DIR");
  if (!shared) shared = "../shared";
  char dir[] = "/tmp/lumen-test-ranks-XXXXXX";
  CHECK(mkdtemp(dir) != NULL);
  char src[3][4096];
  snprintf(src[0], sizeof src[0], "%s/workloads/vcopy/MI200", shared);
  snprintf(src[1], sizeof src[1], "%s/workloads/_mix/mix_MI200", shared);
  snprintf(src[2], sizeof src[2], "%s/workloads/ipblocks_SQ/MI200", shared);
  /* Ranks 0, 1 and 3 (no rank 2: ranks need not be consecutive). */
  const int rank_of[3] = {0, 1, 3};
  for (int i = 0; i < 3; i++) CHECK(write_part(dir, rank_of[i], src[i]));
  CHECK(lm_ranks_present(dir));

  lm_workload *parts[3] = {NULL, NULL, NULL}, *w = NULL;
  lm_diag d;
  for (int i = 0; i < 3; i++) CHECK(lm_workload_read(src[i], &parts[i], &d) == LM_OK);
  CHECK(lm_workload_read(dir, &w, &d) == LM_OK);
  if (!w || !parts[0] || !parts[1] || !parts[2]) return check_report("test_ranks");
  size_t n = parts[0]->pmc->n_rows + parts[1]->pmc->n_rows + parts[2]->pmc->n_rows;
  CHECK(w->pmc->n_rows == n);
  CHECK(w->n_parts == 3);
  CHECK(w->row_rank != NULL);
  /* Rows in rank order, with their ranks; each part's values as they were. */
  size_t at = 0;
  for (int i = 0; i < 3; i++) {
    const lm_table *p = parts[i]->pmc;
    for (size_t r = 0; r < p->n_rows; r++) CHECK(w->row_rank[at + r] == rank_of[i]);
    for (size_t c = 0; c < w->pmc->n_cols; c++) {
      const lm_column *mc = &w->pmc->cols[c];
      long pc = lm_table_find(p, mc->name);
      if (mc->text_ids) continue;
      for (size_t r = 0; r < p->n_rows; r++) {
        double want = pc >= 0 ? p->cols[pc].values[r] : LM_NAN;
        if (!(mc->values[at + r] == want || (isnan(want) && isnan(mc->values[at + r])))) {
          fprintf(stderr, "rank %d row %zu column %s: %g, expected %g\n", rank_of[i], r, mc->name,
                  mc->values[at + r], want);
          CHECK(0);
          break;
        }
      }
    }
    at += p->n_rows;
  }
  /* Columns that hold 0 in every row of every part share one array (their
   * rows take no memory of their own); their values are checked above. */
  {
    const double *zeros = NULL;
    size_t n_zero = 0, n_shared = 0;
    for (size_t c = 0; c < w->pmc->n_cols; c++) {
      const lm_column *col = &w->pmc->cols[c];
      int zero = !col->text_ids && !lm_db_dispatch_column(col->name);
      for (size_t r = 0; zero && r < n; r++) zero = col->values[r] == 0 && !signbit(col->values[r]);
      if (!zero) continue;
      n_zero++;
      if (!zeros) zeros = col->values;
      n_shared += col->values == zeros;
    }
    CHECK(n_zero > 10);
    CHECK(n_shared == n_zero);
  }
  /* Statistics from the parts' (every part a database), as one pass. */
  {
    lm_workload *again = NULL;
    CHECK(lm_workload_read(dir, &again, &d) == LM_OK);
    if (again) {
      CHECK(stats_as_finish(again->pmc));
      for (size_t i = 0; i < again->n_levels; i++) CHECK(stats_as_finish(again->levels[i]));
    }
    lm_workload_free(again);
  }
  /* Parts are read side by side by several threads: the merged workload
   * does not depend on which finished first. */
  for (int again = 0; again < 5; again++) {
    lm_workload *w2 = NULL;
    CHECK(lm_workload_read(dir, &w2, &d) == LM_OK);
    int same = w2 && w2->pmc->n_rows == n && w2->pmc->n_cols == w->pmc->n_cols &&
               w2->pmc->n_strings == w->pmc->n_strings && w2->n_levels == w->n_levels;
    for (size_t i = 0; same && i < w->pmc->n_strings; i++) same = strcmp(w->pmc->strings[i], w2->pmc->strings[i]) == 0;
    for (size_t c = 0; same && c < w->pmc->n_cols; c++) {
      const lm_column *x = &w->pmc->cols[c], *y = &w2->pmc->cols[c];
      same = strcmp(x->name, y->name) == 0 && memcmp(x->values, y->values, n * sizeof(double)) == 0 &&
             (!x->text_ids || memcmp(x->text_ids, y->text_ids, n * sizeof(int32_t)) == 0);
    }
    CHECK(same);
    lm_workload_free(w2);
  }
  /* Only the columns a choice of columns accepts: chosen once, for the
   * parts' architecture; a part alone and the merged parts. */
  {
    const lm_catalog *cat = lm_metrics_builtin(w->arch);
    choice_log log;
    memset(&log, 0, sizeof log);
    lm_workload_options opts;
    memset(&opts, 0, sizeof opts);
    opts.choose = choose_for_test;
    opts.choose_ctx = &log;
    lm_workload *sel = NULL, *one = NULL;
    char part0[4200];
    snprintf(part0, sizeof part0, "%s/rank.0", dir);
    CHECK(lm_workload_read_opts(part0, &opts, &one, &d) == LM_OK);
    CHECK(log.calls == 1 && strcmp(log.arch, "gfx90a") == 0);
    if (one) {
      CHECK(only_wanted(one->pmc, parts[0]->pmc, sq_insts, NULL));
      CHECK(one->pmc->n_cols < parts[0]->pmc->n_cols);
      CHECK(one->roofline && parts[0]->roofline && one->roofline->n_cols == parts[0]->roofline->n_cols);
    }
    log.calls = 0;
    CHECK(lm_workload_read_opts(dir, &opts, &sel, &d) == LM_OK);
    if (!sel) {
      char line[1024];
      fprintf(stderr, "%s\n", lm_diag_format(&d, line, sizeof line));
    }
    CHECK(log.calls == 1 && strcmp(log.arch, "gfx90a") == 0);
    if (sel) {
      CHECK(sel->pmc->n_rows == n && sel->n_parts == 3);
      CHECK(only_wanted(sel->pmc, w->pmc, sq_insts, NULL));
      CHECK(sel->pmc->n_cols < w->pmc->n_cols);
      CHECK(sel->n_levels == w->n_levels);
      for (size_t i = 0; i < sel->n_levels && i < w->n_levels; i++)
        CHECK(only_wanted(sel->levels[i], w->levels[i], sq_insts, NULL));
    }
    lm_workload_free(sel);
    lm_workload_free(one);
    /* The analysis's own choice: every cell as with every column. */
    log.real = 1;
    sel = NULL;
    CHECK(lm_workload_read_opts(dir, &opts, &sel, &d) == LM_OK);
    if (sel) {
      CHECK(only_wanted(sel->pmc, w->pmc, lm_analyze_wants, (void *)cat));
      CHECK(sel->pmc->n_cols < w->pmc->n_cols);
      lm_analyze_opts o;
      memset(&o, 0, sizeof o);
      lm_analysis *a = NULL, *b = NULL;
      CHECK(lm_analyze_run(w, cat, &o, &a, &d) == LM_OK && lm_analyze_run(sel, cat, &o, &b, &d) == LM_OK);
      if (a && b) CHECK(same_cells(a, b));
      lm_analysis_free(a);
      lm_analysis_free(b);
    }
    lm_workload_free(sel);
  }
  /* --rank: only the selected parts' rows, the first part's system
   * information (the merged workload's) and every part's dispatch count. */
  {
    lm_idset one = {0};
    CHECK(lm_idset_parse(&one, "1", "--rank", &d) == LM_OK);
    lm_workload_options opts;
    memset(&opts, 0, sizeof opts);
    opts.ranks = &one;
    lm_workload *sel = NULL;
    CHECK(lm_workload_read_opts(dir, &opts, &sel, &d) == LM_OK);
    if (sel) {
      CHECK(sel->pmc->n_rows == parts[1]->pmc->n_rows);
      CHECK(sel->n_dispatches_all == n);
      CHECK(sel->n_parts == 2 && sel->part_rank[0] == 0 && sel->part_rank[1] == 1);
      for (size_t r = 0; r < sel->pmc->n_rows; r++) CHECK(sel->row_rank[r] == 1);
      CHECK(sel->sysinfo.n_fields == w->sysinfo.n_fields);
      CHECK(sel->roofline && w->roofline && sel->roofline->n_rows == w->roofline->n_rows);
      CHECK(total_ns(sel) > 0 && fabs(total_ns(sel) - total_ns(parts[1])) < 1e-6 * total_ns(parts[1]));
    }
    lm_workload_free(sel);
    lm_idset_fini(&one);
    /* The first part selected: no part read for its information alone. */
    CHECK(lm_idset_parse(&one, "0,3", "--rank", &d) == LM_OK);
    sel = NULL;
    CHECK(lm_workload_read_opts(dir, &opts, &sel, &d) == LM_OK);
    if (sel) {
      CHECK(sel->pmc->n_rows == parts[0]->pmc->n_rows + parts[2]->pmc->n_rows);
      CHECK(sel->n_parts == 2 && sel->part_rank[0] == 0 && sel->part_rank[1] == 3);
    }
    lm_workload_free(sel);
    lm_idset_fini(&one);
    /* A selection holding no part's rank: every part. */
    CHECK(lm_idset_parse(&one, "9", "--rank", &d) == LM_OK);
    sel = NULL;
    CHECK(lm_workload_read_opts(dir, &opts, &sel, &d) == LM_OK);
    if (sel) CHECK(sel->pmc->n_rows == n && sel->n_parts == 3 && sel->n_dispatches_all == 0);
    lm_workload_free(sel);
    lm_idset_fini(&one);
  }
  lm_buf list = {0};
  lm_analyze_rank_list(w, &list);
  CHECK_STR(lm_buf_cstr(&list), "0:2, 3");
  lm_buf_fini(&list);

  /* --rank R gives the analysis of part R alone. */
  const lm_catalog *cat = lm_metrics_builtin(w->arch);
  for (int i = 0; i < 3; i++) {
    lm_idset ranks = {0};
    char spec[16];
    snprintf(spec, sizeof spec, "%d", rank_of[i]);
    CHECK(lm_idset_parse(&ranks, spec, "--rank", &d) == LM_OK);
    lm_analyze_opts o;
    memset(&o, 0, sizeof o);
    o.rank = &ranks;
    lm_analysis *a = NULL, *b = NULL;
    memset(&o, 0, sizeof o);
    o.rank = &ranks;
    CHECK(lm_analyze_run(w, cat, &o, &a, &d) == LM_OK);
    lm_analyze_opts none;
    memset(&none, 0, sizeof none);
    CHECK(lm_analyze_run(parts[i], cat, &none, &b, &d) == LM_OK);
    CHECK(a && b && same_cells(a, b));
    CHECK(a && !a->ranks);
    lm_analysis_free(a);
    lm_analysis_free(b);
    lm_idset_fini(&ranks);
  }
  /* A rank not in the data: the error names the ranks there are. */
  {
    lm_idset ranks = {0};
    CHECK(lm_idset_parse(&ranks, "2", "--rank", &d) == LM_OK);
    lm_analyze_opts o;
    memset(&o, 0, sizeof o);
    o.rank = &ranks;
    lm_analysis *a = NULL;
    CHECK(lm_analyze_run(w, cat, &o, &a, &d) == LM_EINVAL);
    CHECK(strstr(d.message, "ranks in the data: 0:2, 3") != NULL);
    lm_idset_fini(&ranks);
  }
  /* The rank table against a naive count over the parts. */
  {
    lm_analyze_opts o;
    memset(&o, 0, sizeof o);
    lm_analysis *a = NULL;
    CHECK(lm_analyze_run(w, cat, &o, &a, &d) == LM_OK);
    const lm_rank_table *t = a ? a->ranks : NULL;
    CHECK(t && t->n_rows == 3);
    double times[3], sum = 0, max = 0;
    int slowest = 0, fastest = 0;
    for (int i = 0; i < 3; i++) {
      times[i] = total_ns(parts[i]);
      sum += times[i];
      if (times[i] > max) max = times[i];
      if (times[i] > times[slowest]) slowest = i;
      if (times[i] < times[fastest]) fastest = i;
    }
    for (int i = 0; t && i < 3; i++) {
      CHECK(t->rows[i].rank == rank_of[i]);
      CHECK(t->rows[i].dispatches == parts[i]->pmc->n_rows);
      CHECK_NEAR(t->rows[i].total_ns, times[i], 1e-6 * times[i]);
    }
    if (t) {
      CHECK(t->slowest == rank_of[slowest]);
      CHECK(t->fastest == rank_of[fastest]);
      CHECK_NEAR(t->imbalance, max / (sum / 3), 1e-12);
      CHECK(t->n_kernels > 0 && t->n_kernels <= LM_RANK_KERNELS);
      for (size_t k = 1; k < t->n_kernels; k++)
        CHECK(t->kernels[k].n_ranks < 2 || isnan(t->kernels[k].ratio) || t->kernels[k].ratio <= t->kernels[k - 1].ratio);
    }
    /* The kept form of an analysis keeps the rank table. */
    lm_buf b = {0};
    lm_analysis *back = NULL;
    CHECK(a && lm_analysis_serialize(a, &b) == LM_OK);
    CHECK(lm_analysis_deserialize(b.data, b.len, w, cat, &back, &d) == LM_OK);
    CHECK(back && back->ranks && back->ranks->n_rows == 3 && back->ranks->slowest == t->slowest &&
          back->ranks->imbalance == t->imbalance);
    lm_analysis_free(back);
    lm_buf_fini(&b);
    /* A kept rank table naming a rank the workload does not have (past
     * its largest, or negative) does not read back. */
    for (int bad = 0; a && a->ranks && bad < 2; bad++) {
      lm_rank_row *last = &a->ranks->rows[a->ranks->n_rows - 1], *first = &a->ranks->rows[0];
      int32_t was_last = last->rank, was_first = first->rank;
      int32_t from = bad == 0 ? was_last : was_first, to = bad == 0 ? 11 : -2;
      lm_rank_table *rt = a->ranks;
      int32_t was_slowest = rt->slowest, was_fastest = rt->fastest;
      int32_t *refs = calloc(2 * rt->n_kernels + 1, sizeof *refs);
      if (!refs) break;
      /* (everything that names the rank names the new one) */
      (bad == 0 ? last : first)->rank = to;
      if (rt->slowest == from) rt->slowest = to;
      if (rt->fastest == from) rt->fastest = to;
      for (size_t k = 0; k < rt->n_kernels; k++) {
        refs[2 * k] = rt->kernels[k].max_rank;
        refs[2 * k + 1] = rt->kernels[k].min_rank;
        if (rt->kernels[k].max_rank == from) rt->kernels[k].max_rank = to;
        if (rt->kernels[k].min_rank == from) rt->kernels[k].min_rank = to;
      }
      lm_buf_fini(&b);
      back = NULL;
      CHECK(lm_analysis_serialize(a, &b) == LM_OK);
      CHECK(lm_analysis_deserialize(b.data, b.len, w, cat, &back, &d) == LM_EDATA && back == NULL);
      CHECK(strstr(d.message, "not a rank of the workload") != NULL);
      lm_analysis_free(back);
      last->rank = was_last;
      first->rank = was_first;
      rt->slowest = was_slowest;
      rt->fastest = was_fastest;
      for (size_t k = 0; k < rt->n_kernels; k++) {
        rt->kernels[k].max_rank = refs[2 * k];
        rt->kernels[k].min_rank = refs[2 * k + 1];
      }
      free(refs);
    }
    lm_buf_fini(&b);
    lm_analysis_free(a);
  }
  /* Ranks survive a database round trip (the store's import). */
  {
    char path[4096];
    snprintf(path, sizeof path, "%s/merged.db", dir);
    lm_sql *db = NULL;
    lm_workload *back = NULL;
    CHECK(lm_sql_open(path, LM_DB_CREATE, &db, &d) == LM_OK && lm_db_schema(db, 1, &d) == LM_OK &&
          lm_db_write_workload(db, w, "m", NULL, dir, NULL, &d) == LM_OK &&
          lm_db_read_workload(db, "m", NULL, &back, &d) == LM_OK);
    CHECK(back && back->row_rank && back->pmc->n_rows == n);
    for (size_t r = 0; back && back->row_rank && r < n; r++)
      if (back->row_rank[r] != w->row_rank[r]) {
        CHECK(0);
        break;
      }
    /* Every part's own system information and roofline come back: one
     * rank's analysis from the database is that part's alone. */
    CHECK(back && back->n_parts == 3);
    for (size_t p = 0; back && p < back->n_parts && p < 3; p++) {
      CHECK(back->part_rank[p] == rank_of[p]);
      const lm_sysinfo *x = &back->part_sysinfo[p], *y = &parts[p]->sysinfo;
      CHECK(x->n_fields == y->n_fields);
      for (size_t i = 0; i < x->n_fields && i < y->n_fields; i++)
        CHECK(strcmp(x->names[i], y->names[i]) == 0 && strcmp(x->texts[i], y->texts[i]) == 0);
      const lm_table *rx = p ? back->part_roofline[p] : back->roofline, *ry = parts[p]->roofline;
      CHECK((rx == NULL) == (ry == NULL));
      CHECK(!rx || !ry || (rx->n_rows == ry->n_rows && rx->n_cols == ry->n_cols));
    }
    CHECK(strcmp(lm_sysinfo_text(&parts[0]->sysinfo, "timestamp"), lm_sysinfo_text(&parts[2]->sysinfo, "timestamp")) !=
          0); /* the parts' own information differs */
    for (int i = 0; back && i < 3; i++) {
      lm_idset ranks = {0};
      char spec[16];
      snprintf(spec, sizeof spec, "%d", rank_of[i]);
      CHECK(lm_idset_parse(&ranks, spec, "--rank", &d) == LM_OK);
      lm_analyze_opts o, none;
      memset(&o, 0, sizeof o);
      memset(&none, 0, sizeof none);
      o.rank = &ranks;
      lm_analysis *a = NULL, *b = NULL;
      CHECK(lm_analyze_run(back, cat, &o, &a, &d) == LM_OK);
      CHECK(lm_analyze_run(parts[i], cat, &none, &b, &d) == LM_OK);
      CHECK(a && b && same_cells(a, b));
      lm_analysis_free(a);
      lm_analysis_free(b);
      lm_idset_fini(&ranks);
    }
    lm_workload_free(back);
    back = NULL;
    /* A part numbered out of order is named, not trusted. */
    CHECK(lm_sql_exec(db, "UPDATE rank_sysinfo SET part = 7 WHERE part = 2", 0, &d) == LM_OK);
    CHECK(lm_db_read_workload(db, "m", NULL, &back, &d) == LM_EDATA);
    CHECK_STR(d.field, "rank_sysinfo.part");
    CHECK(strstr(d.message, "corrupt database") != NULL);
    lm_workload_free(back);
    back = NULL;
    /* A store of schema version 3 (before the ranks' tables) is read as
     * it is, with the first rank's system information, read-only and
     * after its upgrade to 4. */
    CHECK(lm_sql_exec(db, "DROP TABLE rank_sysinfo; DROP TABLE set_rank; DELETE FROM column_data WHERE source "
                          "LIKE 'roofline@%'; UPDATE lumen_meta SET value = '3' WHERE key = 'schema_version'",
                      0, &d) == LM_OK);
    lm_sql_close(db);
    for (int mode = 0; mode < 2; mode++) {
      db = NULL;
      CHECK(lm_sql_open(path, mode ? LM_DB_WRITE : LM_DB_READ, &db, &d) == LM_OK && lm_db_schema(db, 0, &d) == LM_OK);
      lm_stmt *q = NULL;
      CHECK(lm_sql_prepare(db, "SELECT value FROM lumen_meta WHERE key = 'schema_version'", &q, &d) == LM_OK &&
            lm_stmt_step(q) == 1);
      CHECK_STR(q ? lm_stmt_text(q, 0) : "", mode ? "6" : "3");
      lm_stmt_free(q);
      CHECK(lm_db_read_workload(db, "m", NULL, &back, &d) == LM_OK);
      CHECK(back && back->n_parts == 0 && back->row_rank && back->pmc->n_rows == n);
      CHECK(back && strcmp(lm_sysinfo_text(&back->sysinfo, "workload_name"),
                           lm_sysinfo_text(&parts[0]->sysinfo, "workload_name")) == 0);
      lm_analyze_opts o;
      memset(&o, 0, sizeof o);
      lm_analysis *a = NULL, *b = NULL;
      CHECK(back && lm_analyze_run(back, cat, &o, &a, &d) == LM_OK && lm_analyze_run(w, cat, &o, &b, &d) == LM_OK);
      CHECK(a && b && same_cells(a, b));
      lm_analysis_free(a);
      lm_analysis_free(b);
      lm_workload_free(back);
      back = NULL;
      lm_sql_close(db);
    }
    db = NULL;
    unlink(path);
  }
  /* A part of another architecture is refused, naming the field. */
  {
    char other[4096];
    snprintf(other, sizeof other, "%s/workloads/vcopy/MI100", shared);
    CHECK(write_part(dir, 5, other));
    lm_workload *bad = NULL;
    CHECK(lm_workload_read(dir, &bad, &d) == LM_EDATA);
    CHECK(strcmp(d.field, "gpu_arch") == 0);
    CHECK(strstr(d.message, "rank 5 ran on gfx908") != NULL);
  }
  /* The merged tables' statistics on threads: what one pass gives, with
   * blanks, fractions and text at the ends of the threads' row ranges. */
  {
    size_t rows = 10007;
    lm_table *t = lm_table_create("t.csv", "t", rows, 4);
    CHECK(t != NULL);
    if (t) {
      lm_column *ints = lm_table_add_column(t, "ints", 0), *frac = lm_table_add_column(t, "frac", 0);
      lm_column *gaps = lm_table_add_column(t, "gaps", 0), *text = lm_table_add_column(t, "text", 1);
      int32_t empty = lm_table_intern(t, ""), word = lm_table_intern(t, "x");
      for (size_t r = 0; r < rows; r++) {
        ints->values[r] = (double)r;
        frac->values[r] = r == rows - 1 ? 0.5 : 1.0;
        gaps->values[r] = r % 1251 == 0 || r == rows / 2 ? LM_NAN : 2.0;
        text->text_ids[r] = r % 97 == 0 ? -1 : r % 89 == 0 ? empty : word;
      }
      CHECK(lm_table_finish(t) == LM_OK);
      size_t missing[4], n_text[4];
      uint8_t all_int[4], *marks = malloc(rows);
      for (int c = 0; c < 4; c++) {
        missing[c] = t->cols[c].n_missing;
        n_text[c] = t->cols[c].n_text;
        all_int[c] = t->cols[c].all_int;
      }
      memcpy(marks, t->row_missing, rows);
      CHECK(missing[2] > 8 && missing[3] > 100 && !all_int[1] && all_int[0]);
      for (int k = 1; k <= 8; k++) {
        memset(t->row_missing, 7, rows);
        for (int c = 0; c < 4; c++) t->cols[c].n_missing = 12345, t->cols[c].all_int = 9;
        t->cols[3].n_text = 12345; /* (numeric columns keep theirs) */
        CHECK(lm_table_finish_threads(t, k) == LM_OK);
        int same = memcmp(marks, t->row_missing, rows) == 0;
        for (int c = 0; c < 4; c++)
          same = same && t->cols[c].n_missing == missing[c] && t->cols[c].n_text == n_text[c] &&
                 t->cols[c].all_int == all_int[c];
        CHECK(same);
      }
      free(marks);
      lm_table_free(t);
    }
  }

  lm_workload_free(w);
  for (int i = 0; i < 3; i++) lm_workload_free(parts[i]);
  char cmd[8192];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  CHECK(system(cmd) == 0);
  return check_report("test_ranks");
}
