/*
 * workload.c - the dispatches of rocprof (v1) files as a workload: the
 * pmc_perf table, GPU ids numbered from 0 in rocminfo's order of GPU
 * agents, and the first GPU agent's system information, completed by the
 * shared fold's finish with a warning that names every assumed field.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rocprof1/rocprof1_private.h"

lm_status lm_r1_rows_new(const char *path, lm_r1_rows **out, lm_diag *diag) {
  lm_r1_rows *r = lm_calloc(1, sizeof *r);
  *out = r;
  if (!r) return lm_oom(diag, path);
  return lm_fold_new(path, &r->t, diag);
}

void lm_r1_rows_free(lm_r1_rows *r) {
  if (!r) return;
  lm_fold_free(r->t);
  lm_free(r);
}

static int cmp_double(const void *x, const void *y) {
  double a = *(const double *)x, b = *(const double *)y;
  return (a > b) - (a < b);
}

/* GPU_ID (gpu-id, the agent's node): GPU agents numbered in rocminfo's
 * order, else in the order of their ids. */
static lm_status number_gpus(lm_fold *r, const lm_rocminfo *info, lm_diag *diag) {
  double *gpu = lm_fold_column(r, "GPU_ID");
  if (!gpu) return LM_OK;
  double *ids = NULL;
  size_t n_ids = 0;
  if (info->n_gpus == 0) {
    ids = lm_malloc((r->n_rows + 1) * sizeof *ids);
    if (!ids) return lm_oom(diag, r->path);
    for (size_t i = 0; i < r->n_rows; i++)
      if (!isnan(gpu[i])) ids[n_ids++] = gpu[i];
    if (n_ids) qsort(ids, n_ids, sizeof *ids, cmp_double);
  }
  const double *list = info->n_gpus ? info->nodes : ids;
  size_t n_list = info->n_gpus ? info->n_gpus : n_ids;
  for (size_t i = 0; i < r->n_rows; i++) {
    if (isnan(gpu[i])) continue;
    double index = 0;
    int seen = 0;
    for (size_t k = 0; k < n_list && !seen; k++) {
      if (list[k] == gpu[i])
        seen = 1;
      else if (k + 1 < n_list && list[k + 1] != list[k])
        index++;
    }
    if (seen) gpu[i] = index;
  }
  lm_free(ids);
  return LM_OK;
}

lm_status lm_r1_finish(lm_r1_rows *r, const lm_rocminfo *info, const char *info_path, const char *arch,
                       const char *const *fact_names, int n_facts, lm_workload **out, lm_diag *diag) {
  *out = NULL;
  lm_workload *w = NULL;
  lm_status st = LM_OK;
  lm_fold *t = r->t;
  if (t->n_rows == 0) return lm_fail(diag, LM_EDATA, t->path, "no dispatch rows: nothing to analyze");
  if ((st = number_gpus(t, info, diag)) != LM_OK) return st;
  if (n_facts > LM_FOLD_MAX_FACTS) return lm_fail(diag, LM_ELIMIT, t->path, "more than 16 facts");
  const char *names[LM_FOLD_MAX_FACTS];
  const double *facts[LM_FOLD_MAX_FACTS];
  int present = 0;
  for (int k = 0; k < n_facts; k++) {
    const double *v = lm_fold_column(t, fact_names[k]);
    if (!v) continue;
    names[present] = fact_names[k];
    facts[present++] = v;
  }
  lm_fold_shape shape = {.format = "rocprof",
                         .fact_names = names,
                         .n_facts = present,
                         .fact_rows = facts,
                         .dispatch_ids = t->facts[LM_R1_DISPATCH],
                         .skip = LM_FOLD_SKIP_FACTS};
  if ((st = lm_fold_workload(t, &shape, &w, diag)) != LM_OK) return st;
  const char *use = info->arch[0] ? info->arch : arch;
  if (info->arch[0] && arch && *arch && strcmp(info->arch, arch) != 0)
    lm_log(LM_LOG_WARN, "%s: rocminfo says %s; --arch %s is ignored", info_path, info->arch, arch);
  const char *keys[LM_ROCMINFO_FIELDS], *values[LM_ROCMINFO_FIELDS];
  for (size_t i = 0; i < info->n_fields; i++) {
    keys[i] = info->keys[i];
    values[i] = info->values[i];
  }
  if (!use || !*use) {
    st = lm_fold_no_arch(w, present, keys, values, info->n_fields, "no rocminfo text beside the results", "gfx90a",
                         diag);
    goto done;
  }
  st = lm_fold_sysinfo(w, t->path, use, keys, values, info->n_fields, info_path ? info_path : t->path, diag);
done:
  if (st != LM_OK) {
    lm_workload_free(w);
    return st;
  }
  *out = w;
  return LM_OK;
}
