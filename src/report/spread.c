/*
 * spread.c - the execution spread of a lumen profile in the reports. A
 * dispatch row combines one execution per counter set; where those
 * executions disagree (their shared counters and durations differ), the
 * metric tables get a "Sets differ" column for the metrics fed by more
 * than one of them, and a block after the tables lists per kernel the
 * largest relative spread of each shared quantity. JSON carries the same
 * numbers ("spread" per row and a top-level "spread" object).
 */
#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "report/report.h"

int lm_report_any_flagged(const lm_rtable *t) {
  for (int32_t r = 0; t->row_spread && r < t->n_rows; r++)
    if (t->row_spread[r] > LM_SPREAD_THRESHOLD) return 1;
  return 0;
}

char *lm_report_flag_text(const lm_rtable *t, int32_t r) {
  char text[32] = "";
  if (t->row_spread && t->row_spread[r] > LM_SPREAD_THRESHOLD)
    snprintf(text, sizeof text, "%.1f%%", t->row_spread[r] * 100);
  return lm_strdup(text);
}

static void pct(lm_buf *out, double v) {
  if (isnan(v)) lm_buf_puts(out, "n/a");
  else lm_buf_printf(out, "%.1f%%", v * 100);
}

void lm_report_spread_text(const lm_analysis *a, lm_buf *out) {
  const lm_spread *sp = a->spread;
  if (!sp || !sp->n_kernels) return;
  lm_buf_puts(out, "\n");
  for (int i = 0; i < 80; i++) lm_buf_puts(out, "─");
  lm_buf_printf(out, "\nExecution spread: each dispatch row combines %d executions (one per counter set);\n"
                     "relative spread (max - min) / mean of what every set measured, the largest\n"
                     "over a kernel's rows. Metrics fed by executions differing by more than %.0f%%\n"
                     "show it in their \"Sets differ\" column (%zu here).\n",
                (int)sp->n_sets, LM_SPREAD_THRESHOLD * 100, sp->n_flagged);
  for (size_t k = 0; k < sp->n_kernels; k++) {
    const lm_kernel_spread *ks = &sp->kernels[k];
    lm_buf_puts(out, "  ");
    lm_text_escape(out, ks->kernel ? ks->kernel : "", ks->kernel ? strlen(ks->kernel) : 0, 78);
    lm_buf_printf(out, "\n    %zu rows, %zu over %.0f%%:", ks->rows, ks->rows_over, LM_SPREAD_THRESHOLD * 100);
    for (int32_t q = 0; q < sp->n_shared; q++) {
      lm_buf_printf(out, " %s ", sp->shared[q]);
      pct(out, ks->spread[q]);
    }
    lm_buf_putc(out, '\n');
  }
}

static cJSON *num_or_null(double v) { return isnan(v) || isinf(v) ? cJSON_CreateNull() : cJSON_CreateNumber(v); }

void *lm_report_spread_json(const lm_spread *sp) {
  cJSON *o = cJSON_CreateObject();
  if (!o) return NULL;
  cJSON_AddNumberToObject(o, "sets", sp->n_sets);
  cJSON_AddNumberToObject(o, "threshold", LM_SPREAD_THRESHOLD);
  cJSON_AddNumberToObject(o, "flagged_metrics", (double)sp->n_flagged);
  cJSON *shared = cJSON_AddArrayToObject(o, "shared");
  for (int32_t q = 0; q < sp->n_shared; q++) cJSON_AddItemToArray(shared, cJSON_CreateString(sp->shared[q]));
  cJSON *kernels = cJSON_AddArrayToObject(o, "kernels");
  for (size_t k = 0; k < sp->n_kernels; k++) {
    const lm_kernel_spread *ks = &sp->kernels[k];
    cJSON *jk = cJSON_CreateObject();
    cJSON_AddStringToObject(jk, "name", ks->kernel);
    cJSON_AddNumberToObject(jk, "rows", (double)ks->rows);
    cJSON_AddNumberToObject(jk, "rows_over", (double)ks->rows_over);
    cJSON_AddItemToObject(jk, "max", num_or_null(ks->max_spread));
    cJSON *per = cJSON_AddObjectToObject(jk, "spread");
    for (int32_t q = 0; q < sp->n_shared; q++) cJSON_AddItemToObject(per, sp->shared[q], num_or_null(ks->spread[q]));
    cJSON_AddItemToArray(kernels, jk);
  }
  return o;
}
