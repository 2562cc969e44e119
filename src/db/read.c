/*
 * read.c - reading a workload back from lumen's database: its dispatch
 * rows, the counter columns a caller wants (by architecture), system
 * information, regions, rank parts and origin. Only the columns asked for
 * are decoded.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "db/db.h"
#include "db/db_private.h"
#include "sql/sql.h"

/* need_arch: a workload with dispatches (per-kernel totals, which have
 * none, may not know their architecture; timestamps alone record it as
 * an empty gpu_arch). */
static lm_status read_sysinfo_rows(lm_sql *sql, int64_t wid, int need_arch, lm_workload *w, lm_diag *diag) {
  const char *path = lm_sql_where(sql);
  lm_stmt *s = NULL;
  lm_status st = lm_sql_prepare(sql, "SELECT key, value FROM sysinfo WHERE workload_id = ? ORDER BY position",
                                &s, diag);
  if (st != LM_OK) return st;
  /* Rows into a growing list first: both engines step forward only. */
  size_t n = 0, cap = 0;
  char **keys = NULL, **values = NULL;
  lm_stmt_bind_int64(s, 1, wid);
  int rc;
  while ((rc = lm_stmt_step(s)) == 1) {
    if (n == cap) {
      cap = cap ? cap * 2 : 64;
      char **gk = lm_realloc(keys, cap * sizeof *gk);
      if (gk) keys = gk;
      char **gv = lm_realloc(values, cap * sizeof *gv);
      if (gv) values = gv;
      if (!gk || !gv) {
        st = lm_oom(diag, path);
        break;
      }
    }
    /* A NULL in the database is an empty text; a copy that fails is an
     * error, never an empty field. */
    const char *key = lm_stmt_text(s, 0), *value = lm_stmt_text(s, 1);
    keys[n] = lm_strdup(key ? key : "");
    values[n] = lm_strdup(value ? value : "");
    n++;
    if (!keys[n - 1] || !values[n - 1]) {
      st = lm_oom(diag, path);
      break;
    }
  }
  if (st == LM_OK && rc < 0) st = lm_stmt_error(s, "read system info", diag);
  lm_stmt_free(s);
  if (st == LM_OK)
    st = lm_db_sysinfo_build(path, keys, values, n, w->arena, &w->sysinfo_table, &w->sysinfo, diag);
  for (size_t k = 0; k < n; k++) {
    lm_free(keys[k]);
    lm_free(values[k]);
  }
  lm_free(keys);
  lm_free(values);
  w->arch = lm_sysinfo_text(&w->sysinfo, "gpu_arch");
  /* (an empty gpu_arch: a file of timestamps that did not record it) */
  if (st == LM_OK && need_arch && (!w->arch || !w->arch[0]) && lm_sysinfo_find(&w->sysinfo, "gpu_arch") < 0)
    st = lm_fail_at(diag, LM_EDATA, path, 0, "gpu_arch", "missing from the workload's system info");
  return st;
}

/* The count that query `text` (parameters wid and arg, when not NULL)
 * gives, in *n. A query that fails is an error, never a count of 0. */
static lm_status count_of(lm_sql *sql, const char *text, int64_t wid, const char *arg, int64_t *n,
                          lm_diag *diag) {
  lm_stmt *s = NULL;
  *n = 0;
  lm_status st = lm_sql_prepare(sql, text, &s, diag);
  if (st != LM_OK) return st;
  lm_stmt_bind_int64(s, 1, wid);
  if (arg) lm_stmt_bind_text(s, 2, arg);
  int rc = lm_stmt_step(s);
  if (rc == 1) *n = lm_stmt_int64(s, 0);
  else
    st = rc == 0 ? lm_fail(diag, LM_EIO, lm_sql_where(sql), "a count without its row")
                 : lm_stmt_error(s, "count rows", diag);
  lm_stmt_free(s);
  return st;
}

/* The columns that want accepts of one source, in a new table. With
 * `dispatch` set, the pmc_perf table: the fixed dispatch columns and
 * Kernel_Name first. `workload` names the workload in messages. */
static lm_status read_source(lm_sql *sql, int64_t wid, const char *workload, const char *source, size_t n_rows,
                             int dispatch, lm_db_want_fn want, void *ctx, const lm_workload_options *opts,
                             lm_table **out, lm_diag *diag) {
  const char *path = lm_sql_where(sql);
  lm_stmt *s = NULL;
  int rc;
  *out = NULL;
  size_t n_cols = 0;
  lm_status st = lm_db_count_columns(sql, wid, source, want, ctx, &n_cols, diag);
  if (st != LM_OK) return st;
  size_t extra = dispatch ? LM_DB_N_FIXED + 3 : 0;
  lm_table *t = lm_table_create(path, source, n_rows, n_cols + extra);
  if (!t) return lm_oom(diag, path);
  if (dispatch) {
    lm_column *cols[LM_DB_N_FIXED];
    lm_column *kernel = NULL;
    for (size_t k = 0; k < LM_DB_N_FIXED; k++) {
      if (k == 10) kernel = lm_table_add_column(t, "Kernel_Name", 1);
      cols[k] = lm_table_add_column(t, lm_db_fixed_cols[k].csv, 0);
    }
    if (!kernel) goto nomem;
    for (size_t k = 0; k < LM_DB_N_FIXED; k++)
      if (!cols[k]) goto nomem;
    /* Kernel names, with their ids as in the kernel table. */
    if ((st = lm_sql_prepare(sql, "SELECT id, name FROM kernel WHERE workload_id = ? ORDER BY id", &s, diag)) != LM_OK)
      goto fail;
    lm_stmt_bind_int64(s, 1, wid);
    int32_t *remap = NULL;
    size_t n_remap = 0;
    while ((rc = lm_stmt_step(s)) == 1) {
      int64_t id = lm_stmt_int64(s, 0);
      if (id < 0 || id > 1000000000) continue;
      if ((size_t)id >= n_remap) {
        size_t grown = (size_t)id + 64;
        int32_t *r = lm_realloc(remap, grown * sizeof *r);
        if (!r) {
          lm_free(remap);
          goto nomem;
        }
        for (size_t i = n_remap; i < grown; i++) r[i] = -1;
        remap = r;
        n_remap = grown;
      }
      remap[id] = lm_table_intern(t, lm_stmt_text(s, 1));
    }
    if (rc < 0) {
      lm_free(remap);
      goto stmt_fail_;
    }
    lm_stmt_free(s);
    s = NULL;
    /* Clocks measured during each dispatch (lumen profiles with telemetry). */
    lm_column *sclk = lm_table_add_column(t, "Measured_SCLK_MHz", 0);
    lm_column *mclk = lm_table_add_column(t, "Measured_MCLK_MHz", 0);
    if (!sclk || !mclk) {
      lm_free(remap);
      goto nomem;
    }
    static const char *select_sql =
        "SELECT row, kernel_id, dispatch_id, gpu_id, grid_size, workgroup_size, "
        "lds_per_workgroup, scratch_per_workitem, arch_vgpr, accum_vgpr, sgpr, wave_size, "
        "start_ns, end_ns, sclk_mhz, mclk_mhz FROM dispatch WHERE workload_id = ? ORDER BY row";
    if ((st = lm_sql_prepare(sql, select_sql, &s, diag)) != LM_OK) {
      lm_free(remap);
      goto fail;
    }
    lm_stmt_bind_int64(s, 1, wid);
    size_t r = 0;
    while (r < n_rows && (rc = lm_stmt_step(s)) == 1) {
      int64_t kid = lm_stmt_is_null(s, 1) ? -1 : lm_stmt_int64(s, 1);
      kernel->text_ids[r] = kid >= 0 && (size_t)kid < n_remap ? remap[kid] : lm_table_intern(t, "");
      for (size_t k = 0; k < LM_DB_N_FIXED; k++) cols[k]->values[r] = lm_stmt_double(s, 2 + (int)k);
      sclk->values[r] = lm_stmt_double(s, 14);
      mclk->values[r] = lm_stmt_double(s, 15);
      r++;
    }
    lm_free(remap);
    if (rc < 0) goto stmt_fail_;
    lm_stmt_free(s);
    s = NULL;
    if (r != n_rows) {
      st = lm_fail(diag, LM_EDATA, path, "the workload lists %zu dispatches but holds %zu", n_rows, r);
      goto fail;
    }
  }
  /* The dispatch columns' counts here; the counter columns count theirs
   * as they are decoded. */
  lm_table_finish(t);
  uint64_t t_cols = lm_phase_begin();
  st = lm_db_load_columns(sql, wid, workload, source, want, ctx, opts ? opts->place : NULL,
                                 opts ? opts->place_ctx : NULL, t, diag);
  lm_phase_end("load: counter columns", t_cols);
  if (st != LM_OK) goto fail;
  /* Columns that held text when imported keep saying so. */
  for (size_t c = 0; c < t->n_cols; c++)
    if (t->cols[c].first_text) t->cols[c].n_text = 1;
  *out = t;
  return LM_OK;
nomem:
  st = lm_oom(diag, path);
  goto fail;
stmt_fail_:
  st = lm_stmt_error(s, "read", diag);
fail:
  lm_stmt_free(s);
  lm_table_free(t);
  return st;
}

/* Region names and, per dispatch row, the regions it ran in. */
static lm_status read_regions(lm_sql *sql, int64_t wid, lm_workload *w, lm_diag *diag) {
  const char *path = lm_sql_where(sql);
  lm_stmt *s = NULL;
  lm_status st = lm_sql_prepare(sql, "SELECT id, name FROM region WHERE workload_id = ? ORDER BY id", &s, diag);
  if (st != LM_OK) return st;
  lm_stmt_bind_int64(s, 1, wid);
  size_t cap = 0;
  while (lm_stmt_step(s) == 1) {
    if (w->n_regions == cap) {
      cap = cap ? cap * 2 : 8;
      const char **grown = lm_arena_alloc(w->arena, cap * sizeof *grown);
      if (!grown) break;
      if (w->n_regions) memcpy(grown, w->region_names, w->n_regions * sizeof *grown);
      w->region_names = grown;
    }
    w->region_names[w->n_regions++] = lm_arena_strdup(w->arena, lm_stmt_text(s, 1));
  }
  lm_stmt_free(s);
  if (!w->n_regions) return LM_OK;
  w->row_regions = lm_arena_alloc(w->arena, (w->pmc->n_rows + 1) * sizeof *w->row_regions);
  if (!w->row_regions) return lm_oom(diag, path);
  memset(w->row_regions, 0, (w->pmc->n_rows + 1) * sizeof *w->row_regions);
  if ((st = lm_sql_prepare(sql, "SELECT row, region_id FROM dispatch_region WHERE workload_id = ?", &s, diag)) != LM_OK)
    return st;
  lm_stmt_bind_int64(s, 1, wid);
  while (lm_stmt_step(s) == 1) {
    int64_t row = lm_stmt_int64(s, 0), id = lm_stmt_int64(s, 1);
    if (row >= 0 && (size_t)row < w->pmc->n_rows && id >= 0 && id < 64) w->row_regions[row] |= 1ULL << id;
  }
  lm_stmt_free(s);
  return LM_OK;
}

lm_status lm_db_find_workload(lm_sql *sql, const char *name, int64_t *wid, size_t *n_rows, int *complete,
                              lm_diag *diag) {
  lm_stmt *s = NULL;
  lm_status st = lm_sql_prepare(sql,
                                name ? "SELECT id, n_dispatches, complete FROM workload WHERE name = ?"
                                     : "SELECT id, n_dispatches, complete FROM workload ORDER BY id",
                                &s, diag);
  if (st != LM_OK) return st;
  if (name) lm_stmt_bind_text(s, 1, name);
  int rc = lm_stmt_step(s);
  if (rc < 0) return lm_db_stmt_fail(s, sql, "read", diag);
  if (rc == 0) {
    lm_stmt_free(s);
    return lm_fail(diag, LM_ENOTFOUND, lm_sql_where(sql),
                   name ? "no workload named '%s' in the database" : "the database holds no workload%s",
                   name ? name : "");
  }
  *wid = lm_stmt_int64(s, 0);
  int64_t n = lm_stmt_int64(s, 1);
  if (complete) *complete = (int)lm_stmt_int64(s, 2);
  lm_stmt_free(s);
  if (n < 0 || n > LM_DB_MAX_DISPATCHES)
    return lm_fail_at(diag, LM_EDATA, lm_sql_where(sql), 0, "workload.n_dispatches",
                      "%lld is not a dispatch count (corrupt database?)", (long long)n);
  if (n_rows) *n_rows = (size_t)n;
  return LM_OK;
}

/* The MPI rank and host of each dispatch row (w->row_rank, w->row_host),
 * when any row has a rank. A version 1 database has neither column. */
static lm_status read_ranks(lm_sql *sql, int64_t wid, lm_workload *w, lm_diag *diag) {
  const char *path = lm_sql_where(sql);
  int64_t version_1 = 0;
  lm_status st = count_of(sql, "SELECT COUNT(*) FROM lumen_meta WHERE key = 'schema_version' AND value = '1' AND ? >= 0",
                          0, NULL, &version_1, diag);
  if (st != LM_OK || version_1 > 0) return st;
  lm_stmt *s = NULL;
  st = lm_sql_prepare(sql, "SELECT row, rank, host FROM dispatch WHERE workload_id = ? AND rank IS NOT NULL",
                                &s, diag);
  if (st != LM_OK) return st;
  lm_stmt_bind_int64(s, 1, wid);
  size_t n_rows = w->pmc->n_rows;
  lm_map *hosts = lm_map_new();
  const char **host_names = NULL;
  size_t n_hosts = 0, cap_hosts = 0;
  int rc;
  if (!hosts) goto nomem;
  while ((rc = lm_stmt_step(s)) == 1) {
    int64_t row = lm_stmt_int64(s, 0), rank = lm_stmt_int64(s, 1);
    if (row < 0 || (size_t)row >= n_rows || rank < 0 || rank > INT32_MAX) continue;
    if (!w->row_rank) {
      w->row_rank = lm_arena_alloc(w->arena, (n_rows + 1) * sizeof *w->row_rank);
      w->row_host = lm_arena_alloc(w->arena, (n_rows + 1) * sizeof *w->row_host);
      if (!w->row_rank || !w->row_host) goto nomem;
      for (size_t r = 0; r < n_rows; r++) w->row_rank[r] = -1;
      memset(w->row_host, 0, (n_rows + 1) * sizeof *w->row_host);
    }
    w->row_rank[row] = (int32_t)rank;
    const char *host = lm_stmt_is_null(s, 2) ? NULL : lm_stmt_text(s, 2);
    if (!host) continue;
    int64_t id;
    if (!lm_map_get(hosts, host, &id)) {
      if (n_hosts == cap_hosts) {
        cap_hosts = cap_hosts ? 2 * cap_hosts : 16;
        const char **grown = lm_arena_alloc(w->arena, cap_hosts * sizeof *grown);
        if (!grown) goto nomem;
        if (n_hosts) memcpy(grown, host_names, n_hosts * sizeof *grown);
        host_names = grown;
      }
      host_names[n_hosts] = lm_arena_strdup(w->arena, host);
      if (!host_names[n_hosts] || lm_map_put(hosts, host, (int64_t)n_hosts) != LM_OK) goto nomem;
      id = (int64_t)n_hosts++;
    }
    w->row_host[row] = host_names[id];
  }
  if (rc < 0) st = lm_stmt_error(s, "read ranks", diag);
  lm_stmt_free(s);
  lm_map_free(hosts);
  return st;
nomem:
  lm_stmt_free(s);
  lm_map_free(hosts);
  return lm_oom(diag, path);
}

/* Replays of the simulated device are marked as such: w->simulated. */
static void read_origin(lm_sql *sql, int64_t wid, lm_workload *w) {
  lm_stmt *o = NULL;
  lm_diag ignored;
  if (lm_sql_prepare(sql, "SELECT origin, source FROM workload WHERE id = ?", &o, &ignored) != LM_OK) return;
  lm_stmt_bind_int64(o, 1, wid);
  if (lm_stmt_step(o) == 1) {
    const char *origin = lm_stmt_text(o, 0), *source = lm_stmt_text(o, 1);
    size_t n = strlen(LM_ORIGIN_SIMULATED);
    if (origin && strncmp(origin, LM_ORIGIN_SIMULATED, n) == 0) w->simulated = lm_arena_strdup(w->arena, origin + n);
    /* Another tool's files: the format they were read from (lm_workload.format). */
    if (source && *source && strcmp(source, "omniperf") != 0 && strcmp(source, "lumen") != 0)
      w->format = lm_arena_strdup(w->arena, source);
  }
  lm_stmt_free(o);
}

/* The workload's name, for messages. */
static void workload_name(lm_sql *sql, int64_t wid, char *out, size_t cap) {
  lm_stmt *q = NULL;
  lm_diag ignored;
  out[0] = '\0';
  if (lm_sql_prepare(sql, "SELECT name FROM workload WHERE id = ?", &q, &ignored) != LM_OK) return;
  lm_stmt_bind_int64(q, 1, wid);
  if (lm_stmt_step(q) == 1) snprintf(out, cap, "%s", lm_stmt_text(q, 0));
  lm_stmt_free(q);
}

/* The columns opts->choose picks once the architecture is read, decoded
 * where opts->place says. */
lm_status lm_db_read_workload(lm_sql *sql, const char *name, const lm_workload_options *opts, lm_workload **out,
                              lm_diag *diag) {
  lm_db_want_fn want = NULL;
  void *ctx = NULL;
  const char *path = lm_sql_where(sql);
  lm_stmt *s = NULL;
  lm_workload *w = NULL;
  *out = NULL;
  int64_t wid = 0;
  size_t n_rows = 0;
  int complete = 0;
  lm_status st = lm_db_find_workload(sql, name, &wid, &n_rows, &complete, diag);
  if (st != LM_OK) return st;
  if (!complete)
    return lm_fail(diag, LM_EDATA, path,
                   "the profile that writes this workload has not finished (continue it "
                   "with `lumen profile --resume -w DIR`)");
  {
    /* The count sizes every column: check it before anything is allocated. */
    int64_t held = 0;
    st = count_of(sql, "SELECT COUNT(*) FROM dispatch WHERE workload_id = ?", wid, NULL, &held, diag);
    if (st != LM_OK) return st;
    if (held != (int64_t)n_rows)
      return lm_fail_at(diag, LM_EDATA, path, 0, "workload.n_dispatches",
                        "the workload lists %zu dispatches but holds %lld (corrupt database?)", n_rows,
                        (long long)held);
  }
  lm_arena *arena = lm_arena_new(1 << 12);
  if (!arena) return lm_oom(diag, path);
  w = lm_arena_alloc(arena, sizeof *w);
  if (!w) {
    lm_arena_free(arena);
    return lm_oom(diag, path);
  }
  memset(w, 0, sizeof *w);
  w->arena = arena;
  w->path = lm_arena_strdup(arena, path);
  read_origin(sql, wid, w);
  char wname[256];
  workload_name(sql, wid, wname, sizeof wname);
  if ((st = read_sysinfo_rows(sql, wid, n_rows > 0, w, diag)) != LM_OK) goto fail;
  if (opts && opts->choose) want = opts->choose(opts->choose_ctx, w->arch, lm_sysinfo_compat(&w->sysinfo), &ctx);
  if ((st = read_source(sql, wid, wname, "pmc_perf", n_rows, 1, want, ctx, opts, &w->pmc, diag)) != LM_OK) goto fail;
  if ((st = read_regions(sql, wid, w, diag)) != LM_OK) goto fail;
  if ((st = read_ranks(sql, wid, w, diag)) != LM_OK) goto fail;
  /* Other sources: the SQ_* accumulate tables and roofline. */
  if ((st = lm_sql_prepare(sql,
                           "SELECT source, MAX(n_rows) FROM column_data WHERE workload_id = ? AND "
                           "source != 'pmc_perf' AND source NOT LIKE 'roofline@%' GROUP BY source "
                           "ORDER BY source",
                           &s, diag)) != LM_OK)
    goto fail;
  lm_stmt_bind_int64(s, 1, wid);
  char *sources[64];
  size_t rows[64], n_sources = 0;
  while (n_sources < 64 && lm_stmt_step(s) == 1) {
    sources[n_sources] = lm_arena_strdup(arena, lm_stmt_text(s, 0));
    rows[n_sources++] = (size_t)lm_stmt_int64(s, 1);
  }
  lm_stmt_free(s);
  s = NULL;
  w->levels = lm_arena_alloc(arena, (n_sources + 1) * sizeof *w->levels);
  if (!w->levels) goto nomem;
  for (size_t i = 0; i < n_sources; i++) {
    if (!sources[i]) goto nomem;
    lm_table *t = NULL;
    if ((st = read_source(sql, wid, wname, sources[i], rows[i], 0, want, ctx, opts, &t, diag)) != LM_OK) goto fail;
    if (strcmp(sources[i], "roofline") == 0) w->roofline = t;
    else w->levels[w->n_levels++] = t;
  }
  if ((st = lm_db_read_provenance(sql, wid, w, diag)) != LM_OK) goto fail;
  if ((st = lm_db_read_ranks(sql, wid, wname, w, 1, diag)) != LM_OK) goto fail;
  *out = w;
  return LM_OK;
nomem:
  st = lm_oom(diag, path);
fail:
  lm_stmt_free(s);
  lm_workload_free(w);
  return st;
}

lm_status lm_db_read_info(lm_sql *sql, const char *name, lm_workload **out, lm_diag *diag) {
  const char *path = lm_sql_where(sql);
  *out = NULL;
  int64_t wid = 0;
  size_t n_rows = 0;
  int complete = 0;
  lm_status st = lm_db_find_workload(sql, name, &wid, &n_rows, &complete, diag);
  if (st != LM_OK) return st;
  lm_arena *arena = lm_arena_new(1 << 12);
  lm_workload *w = arena ? lm_arena_alloc(arena, sizeof *w) : NULL;
  if (!w) {
    lm_arena_free(arena);
    return lm_oom(diag, path);
  }
  memset(w, 0, sizeof *w);
  w->arena = arena;
  w->path = lm_arena_strdup(arena, path);
  read_origin(sql, wid, w);
  st = read_sysinfo_rows(sql, wid, n_rows > 0, w, diag);
  if (st == LM_OK) {
    w->pmc = lm_table_create(path, "pmc_perf", n_rows, 1);
    if (!w->pmc)
      st = lm_oom(diag, path);
    else lm_table_finish(w->pmc);
  }
  if (st == LM_OK) st = read_regions(sql, wid, w, diag);
  if (st == LM_OK) st = read_ranks(sql, wid, w, diag);
  if (st == LM_OK) st = lm_db_read_ranks(sql, wid, "", w, 0, diag);
  if (st != LM_OK) {
    lm_workload_free(w);
    return st;
  }
  *out = w;
  return LM_OK;
}
