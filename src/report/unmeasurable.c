/*
 * unmeasurable.c - what an architecture's counters cannot measure
 * (arch.yaml's not_measurable), said once per report: a short block before
 * the summary and the panels in text, a list in each workload's entry in
 * JSON. Architectures without such statements add nothing, so their
 * output is unchanged.
 */
#include <cjson/cJSON.h>
#include <string.h>

#include "report/internal.h"
#include "report/report.h"

/* Whether the catalog of runs[k] is one an earlier run already showed. */
static int shown_before(const lm_analysis *const *runs, size_t k) {
  for (size_t j = 0; j < k; j++)
    if (runs[j]->catalog == runs[k]->catalog || strcmp(runs[j]->catalog->arch, runs[k]->catalog->arch) == 0)
      return 1;
  return 0;
}

void lm_report_unmeasurable_text(const lm_analysis *const *runs, size_t n, size_t width, lm_buf *out) {
  if (width == 0) width = (size_t)-1;
  else if (width < 40) width = 40;
  for (size_t k = 0; k < n; k++) {
    const lm_catalog *cat = runs[k]->catalog;
    if (!cat || !cat->n_unmeasurable || lm_workload_totals(runs[k]->workload) || shown_before(runs, k)) continue;
    lm_buf head = {0};
    lm_buf_printf(&head, "Not measurable with the counters of %s (no panel shows these):", cat->arch);
    lm_report_wrap(out, "", lm_buf_cstr(&head), 2, width);
    lm_buf_fini(&head);
    for (int32_t i = 0; i < cat->n_unmeasurable; i++) {
      lm_buf line = {0};
      lm_buf_printf(&line, "%s: %s", cat->unmeasurable[i].what, cat->unmeasurable[i].why);
      lm_report_wrap(out, "  - ", lm_buf_cstr(&line), 4, width);
      lm_buf_fini(&line);
    }
    lm_buf_putc(out, '\n');
  }
}

void *lm_report_unmeasurable_json(const lm_catalog *catalog) {
  if (!catalog || !catalog->n_unmeasurable) return NULL;
  cJSON *list = cJSON_CreateArray();
  for (int32_t i = 0; list && i < catalog->n_unmeasurable; i++) {
    cJSON *x = cJSON_CreateObject();
    cJSON_AddStringToObject(x, "what", catalog->unmeasurable[i].what);
    cJSON_AddStringToObject(x, "why", catalog->unmeasurable[i].why);
    cJSON_AddItemToArray(list, x);
  }
  return list;
}
