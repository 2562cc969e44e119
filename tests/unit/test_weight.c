/* test_weight.c - time weighting (--weight time): an average over
 * dispatches weighs each by its duration; with one dispatch selected it
 * equals count weighting; counts, sums, minima and maxima do not change. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyze/analyze.h"
#include "check.h"
#include "load/load.h"

static const lm_cell *cell_of(const lm_analysis *a, const char *table, const char *row, int col) {
  const lm_rtable *t = lm_analysis_find(a, table);
  for (int32_t r = 0; t && r < t->n_rows; r++)
    if (t->row_ids && strcmp(t->row_ids[r], row) == 0) return &t->cells[r * t->n_cols + col];
  return NULL;
}

int main(void) {
  const char *shared = getenv("LUMEN_SHARED_DIR");
  char dir[4096];
  snprintf(dir, sizeof dir, "%s/workloads/_mix/mix_MI200", shared ? shared : "../shared");
  lm_workload *w = NULL;
  lm_diag d;
  CHECK(lm_workload_read(dir, &w, &d) == LM_OK);
  if (!w) return check_report("test_weight");
  const lm_catalog *cat = lm_metrics_builtin(w->arch);
  lm_analyze_opts o;
  memset(&o, 0, sizeof o);
  lm_analysis *count = NULL, *time = NULL;
  CHECK(lm_analyze_run(w, cat, &o, &count, &d) == LM_OK);
  o.weight_time = 1;
  CHECK(lm_analyze_run(w, cat, &o, &time, &d) == LM_OK);
  /* 7.1.0 Grid Size: AVG(Grid_Size), Min, Max (columns 1, 2, 3). */
  const lm_table *t = w->pmc;
  long g = lm_table_find(t, "Grid_Size"), s = lm_table_find(t, "Start_Timestamp"), e = lm_table_find(t, "End_Timestamp");
  double wx = 0, ws = 0, plain = 0;
  for (size_t r = 0; r < t->n_rows; r++) {
    double dur = t->cols[e].values[r] - t->cols[s].values[r];
    wx += dur * t->cols[g].values[r];
    ws += dur;
    plain += t->cols[g].values[r];
  }
  const lm_cell *tc = cell_of(time, "7.1", "7.1.0", 1), *cc = cell_of(count, "7.1", "7.1.0", 1);
  CHECK(tc && cc);
  if (tc && cc) {
    CHECK_NEAR(tc->num, wx / ws, 1e-9 * (wx / ws));
    CHECK_NEAR(cc->num, plain / (double)t->n_rows, 1e-9);
    CHECK(tc->num != cc->num);
    CHECK(cell_of(time, "7.1", "7.1.0", 2)->num == cell_of(count, "7.1", "7.1.0", 2)->num); /* Min */
    CHECK(cell_of(time, "7.1", "7.1.0", 3)->num == cell_of(count, "7.1", "7.1.0", 3)->num); /* Max */
  }
  /* The top-kernels table does not depend on weighting. */
  const lm_rtable *ta = lm_analysis_find(time, "0.1"), *tb = lm_analysis_find(count, "0.1");
  CHECK(ta && tb && ta->n_rows == tb->n_rows);
  for (int32_t i = 0; ta && tb && i < ta->n_rows * ta->n_cols; i++)
    CHECK(ta->cells[i].kind != LM_CELL_NUMBER || ta->cells[i].num == tb->cells[i].num);
  lm_analysis_free(count);
  lm_analysis_free(time);
  /* One dispatch: both weightings agree everywhere. */
  lm_idset one = {0};
  CHECK(lm_idset_parse(&one, "5", "-d", &d) == LM_OK);
  o.dispatch = &one;
  o.weight_time = 0;
  CHECK(lm_analyze_run(w, cat, &o, &count, &d) == LM_OK);
  o.weight_time = 1;
  CHECK(lm_analyze_run(w, cat, &o, &time, &d) == LM_OK);
  int differ = 0;
  for (int32_t k = 0; count && time && k < count->n_tables; k++) {
    const lm_rtable *x = &count->tables[k], *y = &time->tables[k];
    for (int32_t i = 0; i < x->n_rows * x->n_cols; i++) {
      const lm_cell *p = &x->cells[i], *q = &y->cells[i];
      if (p->kind != q->kind) differ++;
      else if (p->kind == LM_CELL_NUMBER && !(p->num == q->num || (isnan(p->num) && isnan(q->num))) &&
               fabs(p->num - q->num) > 1e-9 * fabs(p->num))
        differ++;
    }
  }
  CHECK(differ == 0);
  lm_analysis_free(count);
  lm_analysis_free(time);
  lm_idset_fini(&one);
  lm_workload_free(w);
  return check_report("test_weight");
}
