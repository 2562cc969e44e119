/*
 * fold.c - the growing table of an Nsight Compute read: one row per
 * launch, columns grown by doubling as launches arrive and metrics appear
 * (a metric first seen late is NaN, "not collected", on earlier rows).
 */
#include <string.h>

#include "ncu/ncu_private.h"

lm_status lm_ncu_fold_new(const char *path, lm_ncu_fold **out, lm_diag *diag) {
  lm_ncu_fold *f = lm_calloc(1, sizeof *f);
  *out = f;
  if (!f) return lm_oom(diag, path);
  f->path = path;
  for (int i = 0; i < N_NCU_ATTRS; i++) f->attr[i] = LM_NAN;
  f->names = lm_map_new();
  f->index = lm_map_new();
  f->ids = lm_map_new();
  f->warned = lm_map_new();
  if (!f->names || !f->index || !f->ids || !f->warned) return lm_oom(diag, path);
  return LM_OK;
}

void lm_ncu_fold_free(lm_ncu_fold *f) {
  if (!f) return;
  for (int i = 0; i < N_NCU_FACTS; i++) lm_free(f->facts[i]);
  for (size_t i = 0; i < f->n_kernels; i++) lm_free(f->kernels[i]);
  for (size_t i = 0; i < f->n_metrics; i++) {
    lm_free(f->metric_names[i]);
    lm_free(f->metrics[i]);
  }
  lm_free(f->kernels);
  lm_free(f->metric_names);
  lm_free(f->metrics);
  lm_free(f->kernel);
  lm_map_free(f->names);
  lm_map_free(f->index);
  lm_map_free(f->ids);
  lm_map_free(f->warned);
  lm_free(f);
}

/* A column of old_cap values grown to cap, the new ones NaN. */
static double *grow(double *v, size_t old_cap, size_t cap) {
  double *g = lm_realloc(v, cap * sizeof *g);
  if (!g) return NULL;
  for (size_t i = old_cap; i < cap; i++) g[i] = LM_NAN;
  return g;
}

/* The id of kernel name s, interned when new. */
static lm_status intern(lm_ncu_fold *f, const char *s, int32_t *id, lm_diag *diag) {
  int64_t found;
  if (lm_map_get(f->names, s, &found)) {
    *id = (int32_t)found;
    return LM_OK;
  }
  if (f->n_kernels == f->cap_kernels) {
    size_t cap = f->cap_kernels ? 2 * f->cap_kernels : 64;
    char **g = lm_realloc(f->kernels, cap * sizeof *g);
    if (!g) return lm_oom(diag, f->path);
    f->kernels = g;
    f->cap_kernels = cap;
  }
  if (f->n_kernels >= INT32_MAX) return lm_fail(diag, LM_ELIMIT, f->path, "more than 2^31 kernel names");
  char *c = lm_strdup(s);
  if (!c) return lm_oom(diag, f->path);
  f->kernels[f->n_kernels] = c;
  if (lm_map_put(f->names, s, (int64_t)f->n_kernels) != LM_OK) return lm_oom(diag, f->path);
  *id = (int32_t)f->n_kernels++;
  return LM_OK;
}

lm_status lm_ncu_fold_add_row(lm_ncu_fold *f, const char *kernel, size_t *row, lm_diag *diag) {
  if (f->n_rows == f->cap_rows) {
    size_t cap = f->cap_rows ? 2 * f->cap_rows : 256;
    for (int k = 0; k < N_NCU_FACTS; k++) {
      double *g = grow(f->facts[k], f->cap_rows, cap);
      if (!g) return lm_oom(diag, f->path);
      f->facts[k] = g;
    }
    for (size_t c = 0; c < f->n_metrics; c++) {
      double *g = grow(f->metrics[c], f->cap_rows, cap);
      if (!g) return lm_oom(diag, f->path);
      f->metrics[c] = g;
    }
    int32_t *k = lm_realloc(f->kernel, cap * sizeof *k);
    if (!k) return lm_oom(diag, f->path);
    f->kernel = k;
    f->cap_rows = cap;
  }
  int32_t id = 0;
  lm_status st = intern(f, kernel, &id, diag);
  if (st != LM_OK) return st;
  f->kernel[f->n_rows] = id;
  *row = f->n_rows++;
  return LM_OK;
}

double *lm_ncu_fold_column(const lm_ncu_fold *f, const char *name) {
  int64_t found;
  return lm_map_get(f->index, name, &found) ? f->metrics[found] : NULL;
}

lm_status lm_ncu_fold_set(lm_ncu_fold *f, const char *name, size_t row, double v, lm_diag *diag) {
  int64_t found;
  if (!lm_map_get(f->index, name, &found)) {
    if (f->n_metrics == f->cap_metrics) {
      size_t cap = f->cap_metrics ? 2 * f->cap_metrics : 32;
      char **names = lm_realloc(f->metric_names, cap * sizeof *names);
      if (!names) return lm_oom(diag, f->path);
      f->metric_names = names;
      double **cols = lm_realloc(f->metrics, cap * sizeof *cols);
      if (!cols) return lm_oom(diag, f->path);
      f->metrics = cols;
      f->cap_metrics = cap;
    }
    double *col = grow(NULL, 0, f->cap_rows);
    char *c = lm_strdup(name);
    if (!col || !c || lm_map_put(f->index, name, (int64_t)f->n_metrics) != LM_OK) {
      lm_free(col);
      lm_free(c);
      return lm_oom(diag, f->path);
    }
    f->metric_names[f->n_metrics] = c;
    f->metrics[f->n_metrics] = col;
    found = (int64_t)f->n_metrics++;
  }
  f->metrics[found][row] = v;
  return LM_OK;
}
