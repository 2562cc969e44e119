/*
 * kept_damage.c - damage the kept analysis of a workload's default view in
 * a lumen store (SQLite or PostgreSQL) in one named way, so that tests can
 * check that lumen refuses it and recomputes. The view is evaluated afresh
 * from the stored columns (whatever is kept now), changed, and written
 * through lumen's own serializer (its bytes then cut or patched for some
 * damages) under the key lumen keeps it by.
 * Usage: kept_damage DB WORKLOAD HOW   (HOW: kept_damage -h lists them)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store/store.h"

static const char *const hows[] = {
    "null_titles",     /* every table's column titles missing */
    "null_row_ids",    /* every table's row ids missing */
    "null_title",      /* the last column title of every table missing */
    "null_row_id",     /* the last row id of every table missing */
    "truncated",       /* the bytes cut in half */
    "count_bytes",     /* one more table than the bytes hold */
    "count_workload",  /* the dispatch list longer than the workload */
    "selected_over",   /* more dispatches selected than the workload has */
    "calls_over",      /* a kernel called more often than the workload has dispatches */
    "kind_range",      /* table kinds and styles out of range */
    "def_range",       /* a table's definition index out of range */
    "row_id_range",    /* a metric row id past its table's rows */
    "channel_row_range", /* a template (per-channel) row id past its rows times the most channels */
    "role_range",      /* a column role out of range */
    "top_narrow",      /* the top-kernels table without its name column */
    NULL};

static int is(const char *how, const char *name) { return strcmp(how, name) == 0; }

/* A copy of t with n_rows rows, the last row repeated into the new ones. */
static int grow_rows(lm_arena *arena, lm_rtable *t, int32_t n_rows) {
  if (t->n_rows <= 0 || t->n_cols <= 0) return 0;
  lm_cell *cells = lm_arena_alloc(arena, (size_t)n_rows * (size_t)t->n_cols * sizeof *cells);
  const char **ids = lm_arena_alloc(arena, (size_t)n_rows * sizeof *ids);
  if (!cells || !ids) return 0;
  for (int32_t r = 0; r < n_rows; r++) {
    int32_t from = r < t->n_rows ? r : t->n_rows - 1;
    memcpy(&cells[(size_t)r * (size_t)t->n_cols], &t->cells[(size_t)from * (size_t)t->n_cols],
           (size_t)t->n_cols * sizeof *cells);
    ids[r] = t->row_ids ? t->row_ids[from] : NULL;
  }
  t->cells = cells;
  t->row_ids = t->row_ids ? ids : NULL;
  t->n_rows = n_rows;
  return 1;
}

/* Change the analysis as `how` says; 0 when it has nothing to change. */
static int damage(lm_analysis *a, const char *how) {
  int changed = is(how, "truncated") || is(how, "count_bytes"); /* (the bytes, below) */
  for (int32_t i = 0; i < a->n_tables; i++) {
    lm_rtable *t = &a->tables[i];
    if (is(how, "null_titles") && t->titles) t->titles = NULL, changed = 1;
    if (is(how, "null_row_ids") && t->row_ids) t->row_ids = NULL, changed = 1;
    if (is(how, "null_title") && t->titles && t->n_cols > 0) t->titles[t->n_cols - 1] = NULL, changed = 1;
    if (is(how, "null_row_id") && t->row_ids && t->n_rows > 0) t->row_ids[t->n_rows - 1] = NULL, changed = 1;
    if (is(how, "kind_range")) t->kind = 200, t->style = 201, changed = 1;
    if (is(how, "def_range") && !changed) t->def = 1 << 20, changed = 1;
    if (is(how, "role_range") && t->roles && t->n_cols > 0 && !changed) t->roles[0] = 99, changed = 1;
    if (is(how, "row_id_range") && t->kind == LM_TABLE_METRIC && t->n_rows > 0 && !changed) {
      char id[80];
      snprintf(id, sizeof id, "%s.99999", t->id);
      t->row_ids[t->n_rows - 1] = lm_arena_strdup(a->arena, id);
      changed = 1;
    }
    if (is(how, "channel_row_range") && t->kind == LM_TABLE_METRIC && t->n_rows > 0 && !changed &&
        a->catalog->tables[t->def].channels >= 0) {
      char id[80];
      snprintf(id, sizeof id, "%s.%ld", t->id, (long)a->catalog->tables[t->def].n_rows * LM_METRICS_MAX_CHANNELS);
      t->row_ids[t->n_rows - 1] = lm_arena_strdup(a->arena, id);
      changed = 1;
    }
    if (is(how, "top_narrow") && t->kind == LM_TABLE_TOP_KERNELS && t->n_cols > 1) {
      /* The index column alone: every row keeps its first cell. */
      for (int32_t r = 0; r < t->n_rows; r++) t->cells[r] = t->cells[(size_t)r * (size_t)t->n_cols];
      t->n_cols = 1;
      changed = 1;
    }
    if (is(how, "calls_over") && t->kind == LM_TABLE_TOP_KERNELS && t->n_rows > 0 && t->n_cols > 2) {
      t->cells[2].num += (double)a->workload->pmc->n_rows;
      changed = 1;
    }
    if (is(how, "count_workload") && t->kind == LM_TABLE_DISPATCHES) {
      if (!grow_rows(a->arena, t, t->n_rows + 1000)) return 0;
      changed = 1;
    }
  }
  if (is(how, "selected_over")) a->n_selected = a->workload->pmc->n_rows + 1, changed = 1;
  return changed;
}

int main(int argc, char **argv) {
  if (argc != 4) {
    fprintf(stderr, "usage: kept_damage DB WORKLOAD HOW\nHOW:");
    for (const char *const *h = hows; *h; h++) fprintf(stderr, " %s", *h);
    fputc('\n', stderr);
    return 2;
  }
  const char *how = argv[3];
  int known = 0;
  for (const char *const *h = hows; *h; h++) known |= is(how, *h);
  if (!known) {
    fprintf(stderr, "kept_damage: unknown damage '%s'\n", how);
    return 2;
  }
  lm_store *s = NULL;
  lm_workload *w = NULL;
  lm_analysis *a = NULL;
  lm_buf b = {0};
  lm_diag d;
  int rc = 1;
  lm_store_entry e;
  if (lm_store_open(argv[1], 1, &s, &d) != LM_OK || lm_store_get(s, argv[2], &e, &d) != LM_OK) {
    fprintf(stderr, "kept_damage: %s\n", d.message);
    goto done;
  }
  const lm_catalog *cat = e.compat[0] ? lm_metrics_builtin_compat(e.arch, e.compat) : lm_metrics_builtin(e.arch);
  lm_analyze_opts o;
  memset(&o, 0, sizeof o);
  if (!cat || lm_store_load_for(s, argv[2], cat, &w, &d) != LM_OK || lm_analyze_run(w, cat, &o, &a, &d) != LM_OK) {
    fprintf(stderr, "kept_damage: no analysis of '%s': %s\n", argv[2], cat ? d.message : "no definitions");
    goto done;
  }
  if (!damage(a, how)) {
    fprintf(stderr, "kept_damage: '%s' has nothing to damage in '%s'\n", argv[2], how);
    goto done;
  }
  if (lm_analysis_serialize(a, &b) != LM_OK) goto done;
  size_t len = b.len;
  if (is(how, "truncated")) len /= 2;
  if (is(how, "count_bytes")) {
    /* magic, norm (length and bytes), dispatches selected, then the
     * number of tables */
    size_t at = 8 + 4 + strlen(a->norm ? a->norm : "") + 8;
    unsigned char *p = (unsigned char *)b.data + at;
    uint32_t n = ((uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24) + 1;
    for (int k = 0; k < 4; k++) p[k] = (unsigned char)(n >> (8 * k));
  }
  char key[1024];
  lm_store_cache_key(cat, &o, key, sizeof key);
  if (lm_store_cache_put(s, argv[2], key, b.data, len, &d) != LM_OK) {
    fprintf(stderr, "kept_damage: %s\n", d.message);
    goto done;
  }
  rc = 0;
done:
  lm_buf_fini(&b);
  lm_analysis_free(a);
  lm_workload_free(w);
  lm_store_close(s);
  return rc;
}
