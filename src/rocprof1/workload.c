/*
 * workload.c - the dispatches of rocprof (v1) files as they grow, and as a
 * workload: the pmc_perf table, GPU ids numbered from 0 in rocminfo's
 * order of GPU agents, and the first GPU agent's system information,
 * completed from the architecture's typical product (lm_devices_sysinfo)
 * with a warning that names every assumed field.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "devices/devices.h"
#include "rocprof1/rocprof1_private.h"

lm_status lm_r1_rows_new(const char *path, lm_r1_rows **out, lm_diag *diag) {
  lm_r1_rows *r = lm_calloc(1, sizeof *r);
  *out = r;
  if (!r) return lm_oom(diag, path);
  r->path = path;
  r->index = lm_map_new();
  r->names = lm_map_new();
  r->col_index = lm_map_new();
  if (!r->index || !r->names || !r->col_index) return lm_oom(diag, path);
  return LM_OK;
}

void lm_r1_rows_free(lm_r1_rows *r) {
  if (!r) return;
  for (size_t i = 0; i < r->n_kernels; i++) lm_free(r->kernels[i]);
  for (size_t i = 0; i < r->n_cols; i++) {
    lm_free(r->col_names[i]);
    lm_free(r->cols[i]);
  }
  lm_free(r->kernels);
  lm_free(r->col_names);
  lm_free(r->cols);
  lm_free(r->kernel);
  lm_free(r->dispatch);
  lm_map_free(r->index);
  lm_map_free(r->names);
  lm_map_free(r->col_index);
  lm_free(r);
}

/* Grow a column of old_cap values to cap, the new ones NaN. */
static double *grow(double *v, size_t old_cap, size_t cap) {
  double *grown = lm_realloc(v, cap * sizeof *grown);
  if (!grown) return NULL;
  for (size_t i = old_cap; i < cap; i++) grown[i] = LM_NAN;
  return grown;
}

lm_status lm_r1_row(lm_r1_rows *r, const char *id, double index, size_t *row, int *added, lm_diag *diag) {
  int64_t found;
  *added = 0;
  if (lm_map_get(r->index, id, &found)) {
    *row = (size_t)found;
    return LM_OK;
  }
  if (r->n_rows == r->cap_rows) {
    size_t cap = r->cap_rows ? 2 * r->cap_rows : 1024;
    for (size_t c = 0; c < r->n_cols; c++) {
      double *g = grow(r->cols[c], r->cap_rows, cap);
      if (!g) return lm_oom(diag, r->path);
      r->cols[c] = g;
    }
    double *d = grow(r->dispatch, r->cap_rows, cap);
    if (!d) return lm_oom(diag, r->path);
    r->dispatch = d;
    int32_t *k = lm_realloc(r->kernel, cap * sizeof *k);
    if (!k) return lm_oom(diag, r->path);
    r->kernel = k;
    r->cap_rows = cap;
  }
  if (lm_map_put(r->index, id, (int64_t)r->n_rows) != LM_OK) return lm_oom(diag, r->path);
  r->kernel[r->n_rows] = -1;
  r->dispatch[r->n_rows] = index;
  *row = r->n_rows++;
  *added = 1;
  return LM_OK;
}

lm_status lm_r1_kernel(lm_r1_rows *r, const char *s, int32_t *id, lm_diag *diag) {
  int64_t found;
  if (lm_map_get(r->names, s, &found)) {
    *id = (int32_t)found;
    return LM_OK;
  }
  if (r->n_kernels >= INT32_MAX) return lm_fail(diag, LM_ELIMIT, r->path, "more than 2^31 kernel names");
  if (r->n_kernels == r->cap_kernels) {
    size_t cap = r->cap_kernels ? 2 * r->cap_kernels : 64;
    char **g = lm_realloc(r->kernels, cap * sizeof *g);
    if (!g) return lm_oom(diag, r->path);
    r->kernels = g;
    r->cap_kernels = cap;
  }
  char *c = lm_strdup(s);
  if (!c) return lm_oom(diag, r->path);
  r->kernels[r->n_kernels] = c;
  if (lm_map_put(r->names, s, (int64_t)r->n_kernels) != LM_OK) return lm_oom(diag, r->path);
  *id = (int32_t)r->n_kernels++;
  return LM_OK;
}

lm_status lm_r1_column(lm_r1_rows *r, const char *name, size_t *col, lm_diag *diag) {
  int64_t found;
  if (lm_map_get(r->col_index, name, &found)) {
    *col = (size_t)found;
    return LM_OK;
  }
  if (r->n_cols == r->cap_cols) {
    size_t cap = r->cap_cols ? 2 * r->cap_cols : 32;
    char **names = lm_realloc(r->col_names, cap * sizeof *names);
    if (!names) return lm_oom(diag, r->path);
    r->col_names = names;
    double **cols = lm_realloc(r->cols, cap * sizeof *cols);
    if (!cols) return lm_oom(diag, r->path);
    r->cols = cols;
    r->cap_cols = cap;
  }
  double *values = grow(NULL, 0, r->cap_rows ? r->cap_rows : 1);
  char *c = lm_strdup(name);
  if (!values || !c || lm_map_put(r->col_index, name, (int64_t)r->n_cols) != LM_OK) {
    lm_free(values);
    lm_free(c);
    return lm_oom(diag, r->path);
  }
  r->col_names[r->n_cols] = c;
  r->cols[r->n_cols] = values;
  *col = r->n_cols++;
  return LM_OK;
}

static int cmp_double(const void *x, const void *y) {
  double a = *(const double *)x, b = *(const double *)y;
  return (a > b) - (a < b);
}

/* GPU_ID (gpu-id, the agent's node): GPU agents numbered in rocminfo's
 * order, else in the order of their ids. */
static lm_status number_gpus(lm_r1_rows *r, const lm_rocminfo *info, lm_diag *diag) {
  int64_t c;
  if (!lm_map_get(r->col_index, "GPU_ID", &c)) return LM_OK;
  double *gpu = r->cols[c];
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

static int is_fact(const char *name, const char *const *fact_names, int n_facts) {
  for (int k = 0; k < n_facts; k++)
    if (strcmp(name, fact_names[k]) == 0) return 1;
  return 0;
}

/* The pmc_perf table of the rows. */
static lm_status build_table(lm_r1_rows *r, const char *const *fact_names, int n_facts, lm_table **out, lm_diag *diag) {
  size_t n = r->n_rows;
  lm_table *t = lm_table_create(r->path, "pmc_perf", n, 2 + r->n_cols);
  *out = t;
  if (!t) return lm_oom(diag, r->path);
  lm_column *c = lm_table_add_column(t, "Dispatch_ID", 0);
  if (!c) return lm_oom(diag, r->path);
  memcpy(c->values, r->dispatch, n * sizeof(double));
  for (int k = 0; k < n_facts; k++) {
    int64_t at;
    if (!lm_map_get(r->col_index, fact_names[k], &at)) continue;
    if (!(c = lm_table_add_column(t, fact_names[k], 0))) return lm_oom(diag, r->path);
    memcpy(c->values, r->cols[at], n * sizeof(double));
  }
  if (!(c = lm_table_add_column(t, "Kernel_Name", 1))) return lm_oom(diag, r->path);
  for (size_t i = 0; i < n; i++) {
    int32_t id = lm_table_intern(t, r->kernel[i] >= 0 ? r->kernels[r->kernel[i]] : "");
    if (id < 0) return lm_oom(diag, r->path);
    c->text_ids[i] = id;
  }
  for (size_t k = 0; k < r->n_cols; k++) {
    if (is_fact(r->col_names[k], fact_names, n_facts)) continue;
    if (!(c = lm_table_add_column(t, r->col_names[k], 0))) return lm_oom(diag, r->path);
    memcpy(c->values, r->cols[k], n * sizeof(double));
  }
  return lm_table_finish(t);
}

lm_status lm_r1_finish(lm_r1_rows *r, const lm_rocminfo *info, const char *info_path, const char *arch,
                       const char *const *fact_names, int n_facts, lm_workload **out, lm_diag *diag) {
  *out = NULL;
  lm_workload *w = NULL;
  lm_status st = LM_OK;
  if (r->n_rows == 0) return lm_fail(diag, LM_EDATA, r->path, "no dispatch rows: nothing to analyze");
  if ((st = number_gpus(r, info, diag)) != LM_OK) return st;
  lm_arena *arena = lm_arena_new(1 << 12);
  if (!arena) return lm_oom(diag, r->path);
  w = lm_arena_alloc(arena, sizeof *w);
  if (!w) {
    lm_arena_free(arena);
    return lm_oom(diag, r->path);
  }
  w->arena = arena;
  w->path = lm_arena_strdup(arena, r->path);
  if (!w->path) {
    st = lm_oom(diag, r->path);
    goto done;
  }
  w->format = "rocprof";
  if ((st = build_table(r, fact_names, n_facts, &w->pmc, diag)) != LM_OK) goto done;
  const char *use = info->arch[0] ? info->arch : arch;
  if (info->arch[0] && arch && *arch && strcmp(info->arch, arch) != 0)
    lm_log(LM_LOG_WARN, "%s: rocminfo says %s; --arch %s is ignored", info_path, info->arch, arch);
  if (!use || !*use) {
    st = lm_fail(diag, LM_EARCH, r->path,
                 "the architecture is not recorded (no rocminfo text beside the results): give it with --arch, "
                 "e.g. --arch gfx90a");
    goto done;
  }
  const char *keys[LM_ROCMINFO_FIELDS], *values[LM_ROCMINFO_FIELDS];
  for (size_t i = 0; i < info->n_fields; i++) {
    keys[i] = info->keys[i];
    values[i] = info->values[i];
  }
  char assumed[1024];
  st = lm_devices_sysinfo(w, use, keys, values, info->n_fields, info_path ? info_path : r->path, assumed,
                          sizeof assumed, diag);
  if (st == LM_OK && assumed[0])
    lm_log(LM_LOG_WARN, "%s: system information assumed from a typical %s (%s): %s", r->path,
           lm_devices_product(use) ? lm_devices_product(use) : use, use, assumed);
done:
  if (st != LM_OK) {
    lm_workload_free(w);
    return st;
  }
  *out = w;
  return LM_OK;
}
