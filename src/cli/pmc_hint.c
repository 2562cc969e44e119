/*
 * pmc_hint.c - what to collect next, for a workload read from another
 * tool's files whose panels show "not collected": the planner packs the
 * missing counters of those panels into sets within the hardware's
 * per-block limits, and each set becomes one `--pmc` list of rocprofv3
 * (one pass of the application), or one `--metrics` list of Nsight
 * Compute.
 */
#include <stdio.h>
#include <string.h>

#include "analyze/analyze.h"
#include "cli/cli.h"
#include "profile/profile.h"

/* Whether the workload holds counter `name` in any of the forms a reader
 * stores it: as it is, summed (name_sum) or per instance (name[0]). */
static int collected(const lm_table *pmc, const char *name) {
  char alt[300];
  if (lm_table_find(pmc, name) >= 0) return 1;
  snprintf(alt, sizeof alt, "%s_sum", name);
  if (lm_table_find(pmc, alt) >= 0) return 1;
  snprintf(alt, sizeof alt, "%s[0]", name);
  return lm_table_find(pmc, alt) >= 0;
}

void cli_pmc_hint(const lm_analysis *an, const char *path) {
  const lm_workload *w = an->workload;
  const lm_catalog *cat = an->catalog;
  if (!w || !w->format || !w->pmc || !cat) return;
  char ids[64][12];
  const char *items[64];
  size_t n_items = 0;
  for (int32_t ti = 0; ti < an->n_tables && n_items < 64; ti++) {
    const lm_rtable *t = &an->tables[ti];
    int uncollected = 0;
    for (size_t i = 0; t->shown && i < (size_t)t->n_rows * (size_t)t->n_cols && !uncollected; i++)
      uncollected =
          t->cells[i].kind == LM_CELL_TEXT && t->cells[i].text && strcmp(t->cells[i].text, "not collected") == 0;
    if (!uncollected) continue;
    snprintf(ids[n_items], sizeof ids[0], "%d", (int)t->panel_id);
    int seen = 0;
    for (size_t k = 0; k < n_items; k++) seen |= strcmp(items[k], ids[n_items]) == 0;
    if (!seen) {
      items[n_items] = ids[n_items];
      n_items++;
    }
  }
  if (!n_items) return;
  lm_plan *plan = NULL;
  lm_diag diag;
  int nvidia = cat->vendor && strcmp(cat->vendor, "nvidia") == 0;
  if (nvidia || lm_plan_build(cat, items, n_items, &plan, &diag) != LM_OK) {
    /* NVIDIA has no per-block limits: one list of every metric. */
    lm_log(LM_LOG_INFO,
           "%s: panels show metrics not collected; `lumen profile --plan --arch %s -b PANEL` lists "
           "the counters each panel needs",
           path, cat->arch);
    return;
  }
  lm_buf line = {0};
  int sets = 0;
  for (int32_t s = 0; s < plan->n_sets; s++) {
    const lm_plan_set *set = &plan->sets[s];
    if (set->accumulate) continue; /* accumulated levels: not a plain --pmc */
    int started = 0;
    for (int32_t c = set->first; c < set->first + set->n; c++) {
      const lm_plan_counter *pc = &plan->counters[c];
      if (pc->replica || collected(w->pmc, pc->name)) continue;
      lm_buf_printf(&line, "%s%s", started ? " " : " --pmc ", pc->name);
      started = 1;
    }
    sets += started;
  }
  if (sets) {
    lm_buf panels = {0};
    for (size_t k = 0; k < n_items; k++) lm_buf_printf(&panels, "%s%s", k ? ", " : "", items[k]);
    lm_log(LM_LOG_WARN,
           "%s: panel%s %s show%s metrics not collected; rocprofv3 collects their counters in %d "
           "run%s: rocprofv3%s -- APP",
           path, n_items > 1 ? "s" : "", lm_buf_cstr(&panels), n_items > 1 ? "" : "s", sets, sets > 1 ? "s" : "",
           lm_buf_cstr(&line));
    lm_buf_fini(&panels);
  }
  lm_buf_fini(&line);
  lm_plan_free(plan);
}
