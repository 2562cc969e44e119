/* test_series.c - one metric per dispatch (lm_analyze_series) against its
 * oracle: the analysis of each dispatch alone (-d N), cell for cell, for a
 * ratio of aggregates, a plain average and a per-channel template row; a
 * kernel filter keeps that kernel's dispatches; unknown rows are refused. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyze/analyze.h"
#include "check.h"
#include "load/load.h"

/* The first value cell of row_id in the analysis, or NULL. */
static const lm_cell *value_of(const lm_analysis *a, const char *row_id) {
  char table[64];
  snprintf(table, sizeof table, "%s", row_id);
  *strrchr(table, '.') = '\0';
  const lm_rtable *t = lm_analysis_find(a, table);
  for (int32_t r = 0; t && r < t->n_rows; r++) {
    if (strcmp(t->row_ids[r], row_id) != 0) continue;
    for (int32_t c = 0; c < t->n_cols; c++)
      if (t->roles[c] == LM_RCOL_VALUE) return &t->cells[(size_t)r * (size_t)t->n_cols + (size_t)c];
  }
  return NULL;
}

int main(void) {
  const char *shared = getenv("LUMEN_SHARED_DIR");
  char dir[4096];
  snprintf(dir, sizeof dir, "%s/workloads/_mix/mix_MI200", shared ? shared : "../shared");
  lm_workload *w = NULL;
  lm_diag d;
  CHECK(lm_workload_read(dir, &w, &d) == LM_OK);
  if (!w) return check_report("test_series");
  const lm_catalog *cat = lm_metrics_builtin(w->arch);
  static const char *const rows[] = {"2.1.1", "7.1.0", "17.2.0", "18.4.5"};
  for (size_t k = 0; k < sizeof rows / sizeof rows[0]; k++) {
    lm_analyze_opts o;
    memset(&o, 0, sizeof o);
    lm_series *s = NULL;
    CHECK(lm_analyze_series(w, cat, &o, rows[k], &s, &d) == LM_OK);
    if (!s) continue;
    CHECK(s->n == w->pmc->n_rows);
    CHECK(s->name && s->column);
    size_t compared = 0;
    for (size_t i = 0; i < s->n; i++) {
      char spec[32];
      snprintf(spec, sizeof spec, "%.0f", s->dispatch_ids[i]);
      lm_idset one = {0};
      CHECK(lm_idset_parse(&one, spec, "-d", &d) == LM_OK);
      char table[64];
      snprintf(table, sizeof table, "%s", rows[k]);
      *strrchr(table, '.') = '\0';
      const char *blocks[1] = {table};
      lm_analyze_opts od = o;
      od.dispatch = &one;
      od.blocks = blocks;
      od.n_blocks = 1;
      lm_analysis *a = NULL;
      CHECK(lm_analyze_run(w, cat, &od, &a, &d) == LM_OK);
      const lm_cell *c = a ? value_of(a, rows[k]) : NULL;
      CHECK(c != NULL);
      if (c && c->kind == LM_CELL_NUMBER) {
        CHECK(s->values[i] == c->num || (isnan(s->values[i]) && isnan(c->num)));
        compared++;
      } else if (c) {
        CHECK(isnan(s->values[i]));
      }
      lm_analysis_free(a);
      lm_idset_fini(&one);
    }
    CHECK(compared > 0);
    lm_series_free(s);
  }
  /* A kernel filter: only that kernel's dispatches, in order. */
  lm_analyze_opts o;
  memset(&o, 0, sizeof o);
  const char *k[1] = {"fillBufferAligned"};
  o.kernels = k;
  o.n_kernels = 1;
  lm_series *s = NULL;
  CHECK(lm_analyze_series(w, cat, &o, "2.1.1", &s, &d) == LM_OK);
  long kc = lm_table_find(w->pmc, "Kernel_Name");
  size_t n = 0;
  for (size_t r = 0; r < w->pmc->n_rows; r++)
    n += strstr(w->pmc->strings[w->pmc->cols[kc].text_ids[r]], "fillBufferAligned") != NULL;
  CHECK(s && n > 0 && s->n == n);
  for (size_t i = 1; s && i < s->n; i++) CHECK(s->dispatch_ids[i] > s->dispatch_ids[i - 1]);
  lm_series_free(s);
  /* Rows that are not metric rows. */
  static const char *const bad[] = {"2.1.999", "0.2.0", "9.9.9", "2.1", "x", "2.1.-1"};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    s = NULL;
    CHECK(lm_analyze_series(w, cat, &o, bad[i], &s, &d) == LM_ENOTFOUND);
    CHECK(s == NULL);
    CHECK_STR(d.field, "m");
  }
  /* A streamed load (counter columns left in their files): the same values. */
  lm_workload_options wo = {.defer = 1};
  lm_workload *ws = NULL;
  CHECK(lm_workload_read_opts(dir, &wo, &ws, &d) == LM_OK);
  lm_analyze_opts all;
  memset(&all, 0, sizeof all);
  lm_series *whole = NULL, *streamed = NULL;
  CHECK(lm_analyze_series(w, cat, &all, "2.1.1", &whole, &d) == LM_OK);
  size_t n_deferred = 0;
  for (size_t c = 0; ws && c < ws->pmc->n_cols; c++) n_deferred += (size_t)lm_table_deferred(ws->pmc, c);
  CHECK(n_deferred > 0);
  CHECK(ws && lm_analyze_series(ws, cat, &all, "2.1.1", &streamed, &d) == LM_OK);
  CHECK(whole && streamed && whole->n == streamed->n);
  for (size_t i = 0; whole && streamed && i < whole->n && i < streamed->n; i++) {
    CHECK(whole->dispatch_ids[i] == streamed->dispatch_ids[i]);
    CHECK(whole->values[i] == streamed->values[i] || (isnan(whole->values[i]) && isnan(streamed->values[i])));
  }
  lm_series_free(whole);
  lm_series_free(streamed);
  lm_workload_free(ws);
  lm_series_free(NULL);
  lm_workload_free(w);
  return check_report("test_series");
}
