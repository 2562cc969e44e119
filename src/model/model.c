/*
 * model.c - accessors and destructors for tables, system info and
 * workloads. Construction lives in io/, which knows the file formats.
 */
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <string.h>

#include "model/model.h"

/* A table of n_rows rows and room for max_cols columns, over `block`
 * (bytes long) when given, else over a block of its own. */
static lm_table *create(const char *path, const char *name, size_t n_rows, size_t max_cols, void *block, size_t bytes) {
  lm_arena *arena = lm_arena_new(1 << 14);
  if (!arena) return NULL;
  lm_table *t = lm_arena_alloc(arena, sizeof *t);
  if (!t) goto fail;
  t->arena = arena;
  t->path = lm_arena_strdup(arena, path);
  t->name = lm_arena_strdup(arena, name);
  t->n_rows = n_rows;
  t->max_cols = max_cols;
  t->cols = lm_arena_alloc(arena, (max_cols ? max_cols : 1) * sizeof *t->cols);
  t->row_missing = lm_arena_alloc(arena, n_rows ? n_rows : 1);
  t->by_name = lm_map_new();
  t->string_index = lm_map_new();
  size_t rows = n_rows ? n_rows : 1, cols = max_cols ? max_cols : 1;
  if (rows > SIZE_MAX / sizeof(double) / cols) goto fail;
  t->block_bytes = block ? bytes : rows * sizeof(double) * cols;
  t->block = block ? block : lm_alloc_huge(t->block_bytes);
  if (!t->path || !t->name || !t->cols || !t->row_missing || !t->by_name || !t->string_index ||
      !t->block)
    goto fail;
  return t;
fail:
  if (t) {
    lm_map_free(t->by_name);
    lm_map_free(t->string_index);
    if (!block) lm_free_huge(t->block, t->block_bytes);
  }
  lm_arena_free(arena);
  return NULL;
}

lm_table *lm_table_create(const char *path, const char *name, size_t n_rows, size_t max_cols) {
  return create(path, name, n_rows, max_cols, NULL, 0);
}

lm_table *lm_table_create_over(const char *path, const char *name, size_t n_rows, size_t max_cols, void *block,
                               size_t block_bytes) {
  return block ? create(path, name, n_rows, max_cols, block, block_bytes) : NULL;
}

lm_column *lm_table_add_column_at(lm_table *t, const char *name, double *values, int with_text) {
  if (t->n_cols >= t->max_cols) return NULL;
  lm_column *c = &t->cols[t->n_cols];
  memset(c, 0, sizeof *c);
  c->name = lm_arena_strdup(t->arena, name);
  c->values = values;
  if (with_text) {
    c->text_ids = lm_arena_alloc(t->arena, (t->n_rows ? t->n_rows : 1) * sizeof(int32_t));
    for (size_t r = 0; c->text_ids && r < t->n_rows; r++) c->values[r] = LM_NAN;
  }
  if (!c->name || (with_text && !c->text_ids)) return NULL;
  if (lm_map_put(t->by_name, name, (int64_t)t->n_cols) != LM_OK) return NULL;
  t->n_cols++;
  return c;
}

lm_column *lm_table_add_column(lm_table *t, const char *name, int with_text) {
  if (t->n_cols >= t->max_cols) return NULL;
  lm_column *c = &t->cols[t->n_cols];
  memset(c, 0, sizeof *c);
  c->name = lm_arena_strdup(t->arena, name);
  size_t rows = t->n_rows ? t->n_rows : 1;
  c->values = (double *)t->block + t->n_cols * rows;
  if (with_text) {
    c->text_ids = lm_arena_alloc(t->arena, rows * sizeof(int32_t));
    for (size_t r = 0; c->text_ids && r < t->n_rows; r++) c->values[r] = LM_NAN;
  }
  if (!c->name || (with_text && !c->text_ids)) return NULL;
  if (lm_map_put(t->by_name, name, (int64_t)t->n_cols) != LM_OK) return NULL;
  t->n_cols++;
  return c;
}

int32_t lm_table_intern(lm_table *t, const char *s) {
  int64_t id;
  if (lm_map_get(t->string_index, s, &id)) return (int32_t)id;
  if (t->n_strings == t->cap_strings) {
    size_t cap = t->cap_strings ? t->cap_strings * 2 : 16;
    const char **grown = lm_arena_alloc(t->arena, cap * sizeof *grown);
    if (!grown) return -1;
    if (t->n_strings) memcpy(grown, t->strings, t->n_strings * sizeof *grown);
    t->strings = grown;
    t->cap_strings = cap;
  }
  char *copy = lm_arena_strdup(t->arena, s);
  if (!copy || lm_map_put(t->string_index, s, (int64_t)t->n_strings) != LM_OK) return -1;
  t->strings[t->n_strings] = copy;
  return (int32_t)t->n_strings++;
}

lm_status lm_table_finish(lm_table *t) {
  memset(t->row_missing, 0, t->n_rows);
  for (size_t c = 0; c < t->n_cols; c++) {
    lm_column *col = &t->cols[c];
    col->all_int = 1;
    col->n_missing = 0;
    for (size_t r = 0; r < t->n_rows; r++) {
      double v = col->values[r];
      if (col->text_ids) {
        int32_t id = col->text_ids[r];
        if (id < 0 || !t->strings[id][0]) {
          col->n_missing++;
          t->row_missing[r] = 1;
        }
        continue;
      }
      if (isnan(v)) {
        col->n_missing++;
        t->row_missing[r] = 1;
      } else if (v != floor(v)) {
        col->all_int = 0;
      }
    }
    if (col->text_ids) {
      col->all_int = 0;
      col->n_text = t->n_rows - col->n_missing;
    }
  }
  return LM_OK;
}

/* lm_table_finish_threads: each thread counts its rows' blanks and
 * integers per column and marks its own rows; the sums are what one pass
 * over every row gives. */
typedef struct finisher {
  lm_table *t;
  size_t from, to;
  size_t *missing; /* per column */
  uint8_t *not_int;
} finisher;

static void *finish_rows(void *arg) {
  finisher *f = arg;
  lm_table *t = f->t;
  memset(t->row_missing + f->from, 0, f->to - f->from);
  for (size_t c = 0; c < t->n_cols; c++) {
    const lm_column *col = &t->cols[c];
    size_t missing = 0;
    uint8_t not_int = 0;
    for (size_t r = f->from; r < f->to; r++) {
      if (col->text_ids) {
        int32_t id = col->text_ids[r];
        if (id < 0 || !t->strings[id][0]) {
          missing++;
          t->row_missing[r] = 1;
        }
        continue;
      }
      double v = col->values[r];
      if (isnan(v)) {
        missing++;
        t->row_missing[r] = 1;
      } else if (v != floor(v)) {
        not_int = 1;
      }
    }
    f->missing[c] = missing;
    f->not_int[c] = not_int;
  }
  return NULL;
}

lm_status lm_table_finish_threads(lm_table *t, int n_threads) {
  size_t n = n_threads < 1 ? 1 : n_threads > 8 ? 8 : (size_t)n_threads;
  if (n > t->n_rows) n = t->n_rows;
  if (n <= 1 || t->n_cols == 0) return lm_table_finish(t);
  finisher f[8];
  pthread_t threads[8];
  size_t *missing = lm_calloc(n * t->n_cols, sizeof *missing);
  uint8_t *not_int = lm_calloc(n * t->n_cols, 1);
  if (!missing || !not_int) {
    lm_free(missing);
    lm_free(not_int);
    return lm_table_finish(t);
  }
  for (size_t k = 0; k < n; k++) {
    f[k].t = t;
    f[k].from = t->n_rows * k / n;
    f[k].to = t->n_rows * (k + 1) / n;
    f[k].missing = missing + k * t->n_cols;
    f[k].not_int = not_int + k * t->n_cols;
  }
  int started[8] = {0};
  for (size_t k = 1; k < n; k++) started[k] = pthread_create(&threads[k], NULL, finish_rows, &f[k]) == 0;
  finish_rows(&f[0]);
  for (size_t k = 1; k < n; k++) {
    if (started[k]) pthread_join(threads[k], NULL);
    else finish_rows(&f[k]);
  }
  for (size_t c = 0; c < t->n_cols; c++) {
    lm_column *col = &t->cols[c];
    col->n_missing = 0;
    col->all_int = 1;
    for (size_t k = 0; k < n; k++) {
      col->n_missing += f[k].missing[c];
      if (f[k].not_int[c]) col->all_int = 0;
    }
    if (col->text_ids) {
      col->all_int = 0;
      col->n_text = t->n_rows - col->n_missing;
    }
  }
  lm_free(missing);
  lm_free(not_int);
  return LM_OK;
}

void lm_table_free(lm_table *table) {
  if (!table) return;
  if (table->fetch_release) table->fetch_release(table->fetch_state);
  lm_map_free(table->by_name);
  lm_map_free(table->string_index);
  lm_free_huge(table->block, table->block_bytes);
  lm_arena_free(table->arena);
  /* The table struct itself lives in its arena. */
}

long lm_table_find(const lm_table *table, const char *name) {
  int64_t index;
  if (!table || !table->by_name || !lm_map_get(table->by_name, name, &index))
    return -1;
  return (long)index;
}

const char *lm_table_text(const lm_table *table, size_t col, size_t row) {
  const lm_column *c = &table->cols[col];
  if (!c->text_ids || row >= table->n_rows) return NULL;
  int32_t id = c->text_ids[row];
  if (id < 0 || (size_t)id >= table->n_strings) return NULL;
  return table->strings[id];
}

long lm_sysinfo_find(const lm_sysinfo *info, const char *name) {
  for (size_t i = 0; i < info->n_fields; i++)
    if (strcmp(info->names[i], name) == 0) return (long)i;
  return -1;
}

const char *lm_sysinfo_text(const lm_sysinfo *info, const char *name) {
  long i = lm_sysinfo_find(info, name);
  return i < 0 ? NULL : info->texts[i];
}

/* The layouts differ in how they give the HBM peak: 3.0-3.2 wrote hbm_bw
 * (GB/s), 3.3 writes num_hbm_channels and computes the peak from it and
 * the memory clock (32 bytes per channel per memory clock). */
const char *lm_sysinfo_compat(const lm_sysinfo *info) {
  return lm_sysinfo_find(info, "num_hbm_channels") >= 0 ? "3.3" : NULL;
}

static double field_value(const lm_sysinfo *info, const char *name) {
  long i = lm_sysinfo_find(info, name);
  return i < 0 ? LM_NAN : info->values[i];
}

int lm_sysinfo_derive(const lm_sysinfo *info, const char *name, double *value) {
  double mclk = field_value(info, "max_mclk");
  if (!(mclk > 0) || !isfinite(mclk)) return 0;
  if (strcmp(name, "hbm_bw") == 0) {
    double channels = field_value(info, "num_hbm_channels");
    if (!(channels > 0) || !isfinite(channels)) return 0;
    *value = mclk / 1000 * 32 * channels;
    return 1;
  }
  if (strcmp(name, "num_hbm_channels") == 0) {
    double bw = field_value(info, "hbm_bw");
    if (!(bw > 0) || !isfinite(bw)) return 0;
    *value = round(bw / (mclk / 1000 * 32));
    return *value > 0;
  }
  return 0;
}

void lm_workload_free(lm_workload *workload) {
  if (!workload) return;
  lm_table_free(workload->pmc);
  for (size_t i = 0; i < workload->n_levels; i++)
    lm_table_free(workload->levels[i]);
  lm_table_free(workload->sysinfo_table);
  lm_table_free(workload->roofline);
  for (size_t i = 0; workload->part_tables && i < workload->n_parts; i++) lm_table_free(workload->part_tables[i]);
  for (size_t i = 0; workload->part_roofline && i < workload->n_parts; i++)
    lm_table_free(workload->part_roofline[i]);
  lm_arena_free(workload->arena);
}

const lm_table *lm_workload_source(const lm_workload *workload,
                                   const char *name) {
  if (strcmp(name, "pmc_perf") == 0) return workload->pmc;
  for (size_t i = 0; i < workload->n_levels; i++)
    if (strcmp(workload->levels[i]->name, name) == 0) return workload->levels[i];
  return NULL;
}

const lm_table *lm_workload_totals(const lm_workload *w) {
  if (!w || !w->pmc || w->pmc->n_rows) return NULL;
  return lm_workload_source(w, LM_TOTALS_SOURCE);
}

/* Filling a deferred column changes the table under a const pointer
 * (lm_table_values, lm_table_load), and two threads may read one table
 * (lumen serve shares loaded workloads): the fills of a table are
 * serialized, and whether a column is still deferred is read under the
 * same lock. The locks are striped by table address. */
#define FILL_LOCKS 16
#define L4 PTHREAD_MUTEX_INITIALIZER, PTHREAD_MUTEX_INITIALIZER, PTHREAD_MUTEX_INITIALIZER, PTHREAD_MUTEX_INITIALIZER
static pthread_mutex_t fill_locks[FILL_LOCKS] = {L4, L4, L4, L4};
#undef L4

static pthread_mutex_t *fill_lock(const lm_table *t) {
  return &fill_locks[((uintptr_t)t / sizeof(lm_table)) % FILL_LOCKS];
}

static int deferred_locked(const lm_table *table, size_t col) {
  return col < table->n_cols && table->cols[col].deferred && !table->cols[col].values;
}

int lm_table_deferred(const lm_table *table, size_t col) {
  pthread_mutex_t *m = fill_lock(table);
  pthread_mutex_lock(m);
  int deferred = deferred_locked(table, col);
  pthread_mutex_unlock(m);
  return deferred;
}

lm_status lm_table_fetch(const lm_table *t, const long *cols, size_t n_cols, const size_t *rows,
                         size_t n_rows, double *const *out, lm_diag *diag) {
  int any_deferred = 0;
  for (size_t k = 0; k < n_cols; k++) {
    if (cols[k] < 0 || (size_t)cols[k] >= t->n_cols) return lm_fail(diag, LM_EINVAL, t->path, "no such column");
    any_deferred |= lm_table_deferred(t, (size_t)cols[k]);
  }
  if (any_deferred) {
    if (!t->fetch) return lm_fail(diag, LM_EINVAL, t->path, "no reader for deferred columns");
    return t->fetch(t, cols, n_cols, rows, n_rows, out, diag);
  }
  for (size_t k = 0; k < n_cols; k++) {
    const double *v = t->cols[cols[k]].values;
    for (size_t i = 0; i < n_rows; i++) out[k][i] = rows[i] < t->n_rows ? v[rows[i]] : LM_NAN;
  }
  return LM_OK;
}

/* lm_table_load with the table's fill lock held. */
static lm_status load_locked(const lm_table *table, const long *cols, size_t n_cols, lm_diag *diag) {
  lm_table *t = (lm_table *)table; /* a cache fill: see the contract */
  lm_status st = LM_OK;
  size_t n_def = 0, rows = t->n_rows ? t->n_rows : 1;
  long *want = lm_malloc((n_cols ? n_cols : 1) * sizeof *want);
  double **out = lm_malloc((n_cols ? n_cols : 1) * sizeof *out);
  size_t *all = lm_malloc(rows * sizeof *all);
  if (!want || !out || !all) goto nomem;
  for (size_t k = 0; k < n_cols; k++) {
    if (cols[k] < 0 || !deferred_locked(t, (size_t)cols[k])) continue;
    int dup = 0;
    for (size_t j = 0; j < n_def; j++) dup |= want[j] == cols[k];
    if (dup) continue;
    out[n_def] = lm_arena_alloc(t->arena, rows * sizeof(double));
    if (!out[n_def]) goto nomem;
    want[n_def++] = cols[k];
  }
  for (size_t r = 0; r < t->n_rows; r++) all[r] = r;
  if (n_def) st = t->fetch(t, want, n_def, all, t->n_rows, out, diag);
  for (size_t k = 0; st == LM_OK && k < n_def; k++) t->cols[want[k]].values = out[k];
  goto done;
nomem:
  st = lm_oom(diag, t->path);
done:
  lm_free(want);
  lm_free(out);
  lm_free(all);
  return st;
}

lm_status lm_table_load(const lm_table *table, const long *cols, size_t n_cols, lm_diag *diag) {
  pthread_mutex_t *m = fill_lock(table);
  pthread_mutex_lock(m);
  lm_status st = load_locked(table, cols, n_cols, diag);
  pthread_mutex_unlock(m);
  return st;
}

const double *lm_table_values(const lm_table *table, size_t col, lm_diag *diag) {
  if (col >= table->n_cols) return NULL;
  long c = (long)col;
  pthread_mutex_t *m = fill_lock(table);
  pthread_mutex_lock(m);
  const double *values = NULL;
  if (!deferred_locked(table, col) || load_locked(table, &c, 1, diag) == LM_OK) values = table->cols[col].values;
  pthread_mutex_unlock(m);
  return values;
}

/* Rows a deferred group is read in at a time. */
#define EACH_BLOCK_ROWS 8192

/* One thread's share of a group read: blocks of rows [r0, r1). */
typedef struct group_read {
  const lm_table *t;
  const long *want;
  size_t n_def, r0, r1;
  const size_t *all;
  double **out;
  double **at; /* n_def pointers of scratch */
  lm_diag diag;
  lm_status status;
} group_read;

static void *read_blocks(void *arg) {
  group_read *g = arg;
  g->status = LM_OK;
  /* In blocks of rows: the fetch gives back the pages of the file that
   * each block read. */
  for (size_t r0 = g->r0; r0 < g->r1 && g->status == LM_OK; r0 += EACH_BLOCK_ROWS) {
    size_t nb = g->r1 - r0 < EACH_BLOCK_ROWS ? g->r1 - r0 : EACH_BLOCK_ROWS;
    for (size_t d = 0; d < g->n_def; d++) g->at[d] = g->out[d] + r0;
    g->status = g->t->fetch(g->t, g->want, g->n_def, g->all + r0, nb, g->at, &g->diag);
  }
  return NULL;
}

lm_status lm_table_each_group(const lm_table *t, const size_t *order, size_t n, size_t budget, lm_group_fn fn,
                              void *ctx, lm_diag *diag) {
  size_t rows = t->n_rows ? t->n_rows : 1, per_col = rows * sizeof(double);
  size_t group = budget / per_col;
  if (group < 1) group = 1;
  if (group > n) group = n ? n : 1;
  lm_status st = LM_OK;
  long *want = lm_malloc(group * sizeof *want);
  double **out = lm_calloc(group, sizeof *out), **at = lm_malloc(2 * group * sizeof *at);
  const double **given = lm_malloc(group * sizeof *given);
  size_t *all = NULL;
  /* The group's columns side by side in one block written whole: huge
   * pages, a fault per 2 MiB instead of per 4 KiB. */
  double *slab = NULL;
  if (!want || !out || !at || !given) goto nomem;
  for (size_t i = 0; i < n && st == LM_OK;) {
    size_t end = i + group < n ? i + group : n, n_def = 0;
    for (size_t k = i; k < end; k++) {
      if (order[k] >= t->n_cols) {
        st = lm_fail(diag, LM_EINVAL, t->path, "no such column");
        goto done;
      }
      if (!lm_table_deferred(t, order[k])) continue;
      if (!slab) {
        if (!(slab = lm_alloc_dense(group * per_col))) goto nomem;
        for (size_t g = 0; g < group; g++) out[g] = slab + g * rows;
      }
      want[n_def++] = (long)order[k];
    }
    if (n_def) {
      if (!all) {
        if (!(all = lm_malloc(rows * sizeof *all))) goto nomem;
        for (size_t r = 0; r < t->n_rows; r++) all[r] = r;
      }
      if (!t->fetch) {
        st = lm_fail(diag, LM_EINVAL, t->path, "no reader for deferred columns");
        goto done;
      }
      /* The two halves of the rows on two threads (the fetch may be
       * called from two at once), split at a block; the values do not
       * depend on the split, and an error is the one of the first
       * failing block in row order, as read in one go. */
      size_t n_blocks = (t->n_rows + EACH_BLOCK_ROWS - 1) / EACH_BLOCK_ROWS;
      size_t mid = n_blocks >= 2 ? (n_blocks / 2) * EACH_BLOCK_ROWS : t->n_rows;
      group_read halves[2] = {{t, want, n_def, 0, mid, all, out, at, {0}, LM_OK},
                              {t, want, n_def, mid, t->n_rows, all, out, at + group, {0}, LM_OK}};
      if (n_blocks >= 2) {
        lm_run_pair(read_blocks, &halves[0], &halves[1]);
      } else {
        read_blocks(&halves[0]);
      }
      for (int h = 0; h < 2; h++)
        if (halves[h].status != LM_OK) {
          st = halves[h].status;
          if (diag) *diag = halves[h].diag;
          goto done;
        }
    }
    for (size_t k = i, d = 0; k < end; k++)
      given[k - i] = lm_table_deferred(t, order[k]) ? out[d++] : t->cols[order[k]].values;
    st = fn(ctx, order + i, given, end - i, diag);
    i = end;
  }
  goto done;
nomem:
  st = lm_oom(diag, t->path);
done:
  lm_free_huge(slab, group * per_col);
  lm_free(out);
  lm_free(at);
  lm_free((void *)given);
  lm_free(want);
  lm_free(all);
  return st;
}

/* Each column of a group in turn, for lm_table_each_column. */
typedef struct column_walk {
  lm_column_fn fn;
  void *ctx;
} column_walk;

static lm_status walk_group(void *ctx, const size_t *cols, const double *const *values, size_t n, lm_diag *diag) {
  const column_walk *cw = ctx;
  lm_status st = LM_OK;
  for (size_t k = 0; k < n && st == LM_OK; k++) st = cw->fn(cw->ctx, cols[k], values[k], diag);
  return st;
}

lm_status lm_table_each_column(const lm_table *t, const size_t *order, size_t n, size_t budget, lm_column_fn fn,
                               void *ctx, lm_diag *diag) {
  column_walk cw = {fn, ctx};
  return lm_table_each_group(t, order, n, budget, walk_group, &cw, diag);
}
