/*
 * fold.c - the growing table of a read of another tool's files: one row
 * per dispatch, columns grown by doubling as dispatches arrive and
 * counters appear (a counter first seen late is NaN, "not collected", on
 * earlier rows), kernel names interned once.
 */
#include <stdio.h>
#include <string.h>

#include "fold/fold.h"

lm_status lm_fold_new(const char *path, lm_fold **out, lm_diag *diag) {
  lm_fold *f = lm_calloc(1, sizeof *f);
  *out = f;
  if (!f) return lm_oom(diag, path);
  f->path = path;
  f->ids = lm_map_new();
  f->names = lm_map_new();
  f->counter_index = lm_map_new();
  if (!f->ids || !f->names || !f->counter_index) return lm_oom(diag, path);
  return LM_OK;
}

void lm_fold_free(lm_fold *f) {
  if (!f) return;
  for (size_t i = 0; i < LM_ARRAY_LEN(f->facts); i++) lm_free(f->facts[i]);
  for (size_t i = 0; i < f->n_kernels; i++) lm_free(f->kernels[i]);
  for (size_t i = 0; i < f->n_counters; i++) {
    lm_free(f->counter_names[i]);
    lm_free(f->counters[i]);
  }
  lm_free(f->kernels);
  lm_free(f->counter_names);
  lm_free(f->counters);
  lm_free(f->tag);
  lm_free(f->kernel);
  lm_free(f->key);
  lm_map_free(f->ids);
  lm_map_free(f->names);
  lm_map_free(f->counter_index);
  lm_free(f);
}

const char *lm_fold_key(lm_fold *f, const char *id, lm_diag *diag) {
  size_t need = strlen(id) + 24;
  if (need > f->key_cap) {
    char *grown = lm_realloc(f->key, need);
    if (!grown) {
      lm_oom(diag, f->path);
      return NULL;
    }
    f->key = grown;
    f->key_cap = need;
  }
  snprintf(f->key, f->key_cap, "%d:%s", f->group, id);
  return f->key;
}

/* Grow a column of old_cap values to cap, the new ones NaN. */
static double *grow_column(double *v, size_t old_cap, size_t cap) {
  double *grown = lm_realloc(v, cap * sizeof *grown);
  if (!grown) return NULL;
  for (size_t i = old_cap; i < cap; i++) grown[i] = LM_NAN;
  return grown;
}

lm_status lm_fold_add_row(lm_fold *f, size_t *row, lm_diag *diag) {
  if (f->n_rows == f->cap_rows) {
    size_t cap = f->cap_rows ? 2 * f->cap_rows : 1024;
    for (size_t k = 0; k < LM_ARRAY_LEN(f->facts); k++) {
      double *g = grow_column(f->facts[k], f->cap_rows, cap);
      if (!g) return lm_oom(diag, f->path);
      f->facts[k] = g;
    }
    for (size_t c = 0; c < f->n_counters; c++) {
      double *g = grow_column(f->counters[c], f->cap_rows, cap);
      if (!g) return lm_oom(diag, f->path);
      f->counters[c] = g;
    }
    int32_t *k = lm_realloc(f->kernel, cap * sizeof *k);
    if (!k) return lm_oom(diag, f->path);
    f->kernel = k;
    f->cap_rows = cap;
  }
  f->kernel[f->n_rows] = -1;
  *row = f->n_rows++;
  return LM_OK;
}

lm_status lm_fold_row_lookup(lm_fold *f, const char *id, size_t *row, int *added, lm_diag *diag) {
  size_t len = strlen(id);
  if (added) *added = 0;
  const char *key = lm_fold_key(f, id, diag);
  if (!key) return LM_ENOMEM;
  int64_t found;
  if (lm_map_get(f->ids, key, &found)) {
    *row = (size_t)found;
  } else {
    lm_status st = lm_fold_add_row(f, row, diag);
    if (st != LM_OK) return st;
    if (lm_map_put(f->ids, key, (int64_t)*row) != LM_OK) return lm_oom(diag, f->path);
    if (added) *added = 1;
  }
  f->last_row = *row;
  f->has_last = 0;
  if (len < sizeof f->last_id) {
    memcpy(f->last_id, id, len);
    f->last_len = len;
    f->has_last = 1;
  }
  return LM_OK;
}

lm_status lm_fold_intern(lm_fold *f, const char *s, int32_t *id, lm_diag *diag) {
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

/* A new counter column `name` (NaN on every row); its index in *index. */
static lm_status add_counter(lm_fold *f, const char *name, size_t *index, lm_diag *diag) {
  if (f->n_counters == f->cap_counters) {
    size_t cap = f->cap_counters ? 2 * f->cap_counters : 32;
    char **names = lm_realloc(f->counter_names, cap * sizeof *names);
    if (!names) return lm_oom(diag, f->path);
    f->counter_names = names;
    double **cols = lm_realloc(f->counters, cap * sizeof *cols);
    if (!cols) return lm_oom(diag, f->path);
    f->counters = cols;
    long *tag = lm_realloc(f->tag, cap * sizeof *tag);
    if (!tag) return lm_oom(diag, f->path);
    f->tag = tag;
    f->cap_counters = cap;
  }
  double *col = grow_column(NULL, 0, f->cap_rows);
  char *c = lm_strdup(name);
  if ((!col && f->cap_rows) || !c || lm_map_put(f->counter_index, name, (int64_t)f->n_counters) != LM_OK) {
    lm_free(col);
    lm_free(c);
    return lm_oom(diag, f->path);
  }
  f->counter_names[f->n_counters] = c;
  f->counters[f->n_counters] = col;
  f->tag[f->n_counters] = LM_FOLD_TAG_UNSET;
  *index = f->n_counters++;
  return LM_OK;
}

lm_status lm_fold_counter_lookup(lm_fold *f, const char *name, size_t *index, lm_diag *diag) {
  int64_t found;
  if (lm_map_get(f->counter_index, name, &found)) {
    *index = (size_t)found;
  } else {
    lm_status st = add_counter(f, name, index, diag);
    if (st != LM_OK) return st;
  }
  f->guess = *index + 1 < f->n_counters ? *index + 1 : 0;
  return LM_OK;
}

lm_status lm_fold_set(lm_fold *f, const char *name, size_t row, double v, lm_diag *diag) {
  size_t k;
  lm_status st = lm_fold_counter(f, name, &k, diag);
  if (st != LM_OK) return st;
  f->counters[k][row] = v;
  return LM_OK;
}

double *lm_fold_column(const lm_fold *f, const char *name) {
  int64_t found;
  return lm_map_get(f->counter_index, name, &found) ? f->counters[found] : NULL;
}
