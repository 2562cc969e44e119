/*
 * fold.c - the growing table of a read of another tool's files: one row
 * per dispatch, columns in one block grown by doubling as dispatches
 * arrive (or reserved once from the reader's estimate) and counters
 * appear (a counter first seen late is NaN, "not collected", on earlier
 * rows), kernel names interned once. A row's cells are set NaN when it is
 * added, so moving the columns copies their rows and writes nothing else.
 */
#include "fold/fold.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

/* Every column lives in one block mapped on its own (huge pages: a fault
 * per 2 MiB, no clearing by the allocator): column i at i * cap_rows, the
 * facts first, then the counters, room for block_cols in all. Rows or
 * columns past the room move the columns to a larger block. */
static lm_status relocate(lm_fold *f, size_t rows, size_t cols, lm_diag *diag) {
  double *block = lm_alloc_dense(rows * cols * sizeof *block);
  if (!block) return lm_oom(diag, f->path);
  for (size_t k = 0; k < LM_FOLD_MAX_FACTS; k++) {
    if (f->n_rows) memcpy(block + k * rows, f->facts[k], f->n_rows * sizeof *block);
    f->facts[k] = block + k * rows;
  }
  for (size_t c = 0; c < f->n_counters; c++) {
    double *to = block + (LM_FOLD_MAX_FACTS + c) * rows;
    if (f->n_rows) memcpy(to, f->counters[c], f->n_rows * sizeof *block);
    f->counters[c] = to;
  }
  if (f->block) lm_free_huge(f->block, f->cap_rows * f->block_cols * sizeof *block);
  f->block = block;
  f->block_cols = cols;
  return LM_OK;
}

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
  if (f->block) lm_free_huge(f->block, f->cap_rows * f->block_cols * sizeof *f->block);
  for (size_t i = 0; i < f->n_kernels; i++) lm_free(f->kernels[i]);
  for (size_t i = 0; i < f->n_counters; i++) lm_free(f->counter_names[i]);
  for (size_t i = 0; i < f->n_dense; i++) lm_free(f->dense[i].rows);
  lm_free(f->dense);
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

lm_status lm_fold_reserve(lm_fold *f, size_t rows, lm_diag *diag) {
  if (rows <= f->cap_rows) return LM_OK;
  size_t cols = f->block_cols ? f->block_cols : LM_FOLD_MAX_FACTS + 32;
  if (rows > SIZE_MAX / sizeof(double) / cols) return lm_fail(diag, LM_ELIMIT, f->path, "%zu dispatches", rows);
  lm_status st = relocate(f, rows, cols, diag);
  if (st != LM_OK) return st;
  int32_t *k = lm_realloc(f->kernel, rows * sizeof *k);
  if (!k) return lm_oom(diag, f->path);
  f->kernel = k;
  f->cap_rows = rows;
  return LM_OK;
}

lm_status lm_fold_drop_rows(lm_fold *f, lm_diag *diag) {
  f->n_rows = 0;
  f->has_last = 0;
  for (size_t i = 0; i < f->n_dense; i++) lm_free(f->dense[i].rows);
  f->n_dense = 0;
  lm_map_free(f->ids);
  f->ids = lm_map_new();
  return f->ids ? LM_OK : lm_oom(diag, f->path);
}

lm_status lm_fold_add_row(lm_fold *f, size_t *row, lm_diag *diag) {
  if (f->n_rows == f->cap_rows) {
    lm_status st = lm_fold_reserve(f, f->cap_rows ? 2 * f->cap_rows : 1024, diag);
    if (st != LM_OK) return st;
  }
  size_t r = f->n_rows++;
  for (size_t k = 0; k < LM_ARRAY_LEN(f->facts); k++) f->facts[k][r] = LM_NAN;
  for (size_t c = 0; c < f->n_counters; c++) f->counters[c][r] = LM_NAN;
  f->kernel[r] = -1;
  *row = r;
  return LM_OK;
}

/* Dispatch ids below this that are plain decimal numbers without leading
 * zeros (what every profiler writes) are found by index in their group's array; others by
 * key in the map. The rule depends on the id alone, so an id is always
 * found where it was put. */
enum { DENSE_IDS = 1 << 24 };

static int dense_id(const char *id, size_t len, size_t *v) {
  /* (canonical only: "005" stays another id than "5", as by key) */
  if (len == 0 || len > 8 || (len > 1 && id[0] == '0')) return 0;
  size_t x = 0;
  for (size_t i = 0; i < len; i++) {
    if (id[i] < '0' || id[i] > '9') return 0;
    x = x * 10 + (size_t)(id[i] - '0');
  }
  *v = x;
  return x < DENSE_IDS;
}

/* The slot of dense id v in the current group's array (grown to hold
 * it), or NULL when out of memory. */
static uint32_t *dense_slot(lm_fold *f, size_t v, int grow) {
  lm_fold_dense *d = NULL;
  for (size_t i = 0; i < f->n_dense && !d; i++)
    if (f->dense[i].group == f->group) d = &f->dense[i];
  if (!d) {
    if (!grow) return NULL;
    lm_fold_dense *g = lm_realloc(f->dense, (f->n_dense + 1) * sizeof *g);
    if (!g) return NULL;
    f->dense = g;
    d = &f->dense[f->n_dense++];
    memset(d, 0, sizeof *d);
    d->group = f->group;
  }
  if (v >= d->cap) {
    if (!grow) return NULL;
    size_t cap = d->cap ? d->cap : 4096;
    while (cap <= v) cap *= 2;
    uint32_t *rows = lm_calloc(cap, sizeof *rows);
    if (!rows) return NULL;
    if (d->cap) memcpy(rows, d->rows, d->cap * sizeof *rows);
    lm_free(d->rows);
    d->rows = rows;
    d->cap = cap;
  }
  return &d->rows[v];
}

int lm_fold_find(lm_fold *f, const char *id, size_t *row) {
  size_t v;
  if (dense_id(id, strlen(id), &v)) {
    uint32_t *slot = dense_slot(f, v, 0);
    if (!slot || !*slot) return 0;
    if (row) *row = *slot - 1;
    return 1;
  }
  lm_diag ignored;
  const char *key = lm_fold_key(f, id, &ignored);
  int64_t found;
  if (!key || !lm_map_get(f->ids, key, &found)) return 0;
  if (row) *row = (size_t)found;
  return 1;
}

lm_status lm_fold_row_lookup(lm_fold *f, const char *id, size_t *row, int *added, lm_diag *diag) {
  size_t len = strlen(id), v;
  if (added) *added = 0;
  if (dense_id(id, len, &v) && f->n_rows < UINT32_MAX - 1) {
    uint32_t *slot = dense_slot(f, v, 1);
    if (!slot) return lm_oom(diag, f->path);
    if (*slot) {
      *row = *slot - 1;
    } else {
      lm_status st = lm_fold_add_row(f, row, diag);
      if (st != LM_OK) return st;
      /* (the slot's array is not moved by adding a row) */
      *slot = (uint32_t)(*row + 1);
      if (added) *added = 1;
    }
  } else {
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
  if (lm_map_put(f->names, s, (int64_t)f->n_kernels) != LM_OK) {
    lm_free(c);
    return lm_oom(diag, f->path);
  }
  f->kernels[f->n_kernels] = c;
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
  if (!f->cap_rows) {
    lm_status st = lm_fold_reserve(f, 1024, diag);
    if (st != LM_OK) return st;
  }
  if (LM_FOLD_MAX_FACTS + f->n_counters == f->block_cols) {
    if (f->block_cols > SIZE_MAX / sizeof(double) / f->cap_rows / 2)
      return lm_fail(diag, LM_ELIMIT, f->path, "%zu counters", f->n_counters);
    lm_status st = relocate(f, f->cap_rows, 2 * f->block_cols, diag);
    if (st != LM_OK) return st;
  }
  char *c = lm_strdup(name);
  if (!c || lm_map_put(f->counter_index, name, (int64_t)f->n_counters) != LM_OK) {
    lm_free(c);
    return lm_oom(diag, f->path);
  }
  double *col = f->block + (LM_FOLD_MAX_FACTS + f->n_counters) * f->cap_rows;
  for (size_t r = 0; r < f->n_rows; r++) col[r] = LM_NAN;
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
