/*
 * rocpd.c - rocprofv3's SQLite output (rocpd, its default format since
 * ROCm 7) read through the views the database itself defines: `kernels`
 * (one row per dispatch), `pmc_events` (one row per dispatch and counter
 * instance, summed per counter here as the CSV output sums them) and
 * `rocpd_info_agent` for the GPUs. The views, not the tables (whose names
 * carry a run's UUID), are the documented interface. The dispatches are
 * read sorted by process and dispatch (few rows); the counter events, many
 * times more, are read in the order they are stored, without a join, sort
 * or grouping, and matched to their dispatch by event id: the events of
 * one dispatch are stored together, so the last match is tried first.
 */
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "rocprofv3/rocprofv3_private.h"
#include "sql/sql.h"

static const char dispatch_query[] =
    "SELECT guid, pid, dispatch_id, name, agent_type_index, grid_x * grid_y * grid_z,"
    " workgroup_x * workgroup_y * workgroup_z, lds_size, scratch_size, arch_vgpr_count, accum_vgpr_count,"
    " sgpr_count, start, \"end\", event_id FROM kernels ORDER BY guid, pid, dispatch_id";
static const char event_query[] = "SELECT guid, event_id, name, value FROM pmc_events";

/* The GPU agents: sysinfo fields from the agent's properties (extdata). */
static const char agent_query[] =
    "SELECT type_index, COALESCE(json_extract(extdata, '$.name'), name), product_name,"
    " json_extract(extdata, '$.cu_count'), json_extract(extdata, '$.simd_per_cu'),"
    " json_extract(extdata, '$.wave_front_size'), json_extract(extdata, '$.workgroup_max_size'),"
    " json_extract(extdata, '$.max_waves_per_cu'), json_extract(extdata, '$.max_engine_clk_fcompute'),"
    " json_extract(extdata, '$.num_xcc'), json_extract(extdata, '$.array_count'),"
    " json_extract(extdata, '$.simd_arrays_per_engine')"
    " FROM rocpd_info_agent WHERE type = 'GPU' ORDER BY guid, type_index";
static const char *const agent_fields[] = {"cu_per_gpu",       "simd_per_cu", "wave_size", "workgroup_max_size",
                                           "max_waves_per_cu", "max_sclk",    "num_xcd"};

int lm_v3_rocpd_detect(const char *path) {
  int fd = -1;
  char head[16];
  if (lm_open_read(path, 0, &fd, NULL, NULL) != LM_OK) return 0;
  ssize_t n = read(fd, head, sizeof head);
  close(fd);
  if (n != (ssize_t)sizeof head || memcmp(head, "SQLite format 3", 16) != 0) return 0;
  lm_sql *sql = NULL;
  lm_stmt *s = NULL;
  int found = 0;
  if (lm_sql_open(path, LM_DB_READ, &sql, NULL) == LM_OK &&
      lm_sql_prepare(sql,
                     "SELECT count(*) FROM sqlite_master WHERE name IN ('kernels', 'pmc_events', "
                     "'rocpd_info_agent')",
                     &s, NULL) == LM_OK &&
      lm_stmt_step(s) == 1)
    found = lm_stmt_int64(s, 0) == 3;
  lm_stmt_free(s);
  lm_sql_close(sql);
  return found;
}

static lm_status read_agents(lm_sql *sql, const char *path, lm_v3_agents *a, lm_diag *diag) {
  lm_stmt *s = NULL;
  lm_status st = lm_sql_prepare(sql, agent_query, &s, diag);
  if (st != LM_OK) return st;
  a->where = path;
  int r;
  while ((r = lm_stmt_step(s)) == 1 && a->n < LM_V3_MAX_AGENTS) {
    a->node[a->n++] = (double)lm_stmt_int64(s, 0);
    if (a->n > 1) continue;
    snprintf(a->arch, sizeof a->arch, "%.*s", (int)strcspn(lm_stmt_text(s, 1), ":"), lm_stmt_text(s, 1));
    st = lm_v3_agents_keep(a, "gpu_model", lm_stmt_text(s, 2), path, diag);
    for (int f = 0; f < 7 && st == LM_OK; f++) {
      if (lm_stmt_is_null(s, 3 + f)) continue;
      char v[32];
      snprintf(v, sizeof v, "%lld", (long long)lm_stmt_int64(s, 3 + f));
      st = lm_v3_agents_keep(a, agent_fields[f], v, path, diag);
      if (st == LM_OK && f == 5) st = lm_v3_agents_keep(a, "cur_sclk", v, path, diag);
    }
    if (st == LM_OK && !lm_stmt_is_null(s, 10) && !lm_stmt_is_null(s, 11) && lm_stmt_int64(s, 11) > 0) {
      char v[32];
      snprintf(v, sizeof v, "%lld", (long long)(lm_stmt_int64(s, 10) / lm_stmt_int64(s, 11)));
      st = lm_v3_agents_keep(a, "se_per_gpu", v, path, diag);
    }
    if (st != LM_OK) break;
  }
  if (st == LM_OK && r < 0) st = lm_stmt_error(s, "reading the GPU agents", diag);
  lm_stmt_free(s);
  return st;
}

/* The key of an event: its id and its run's guid. */
static const char *event_key(char *buf, size_t cap, lm_stmt *s, int guid_col, int id_col) {
  snprintf(buf, cap, "%lld:%s", (long long)lm_stmt_int64(s, id_col), lm_stmt_text(s, guid_col));
  return buf;
}

/* One row of the dispatch query into the fold; its event id -> its row. */
static lm_status fold_dispatch(lm_v3_fold *fold, lm_stmt *s, lm_map *events, lm_diag *diag) {
  char id[96], key[160];
  snprintf(id, sizeof id, "%s:%lld:%lld", lm_stmt_text(s, 0), (long long)lm_stmt_int64(s, 1),
           (long long)lm_stmt_int64(s, 2));
  size_t row = fold->t->last_row;
  lm_status st;
  if (!fold->t->has_last || strcmp(fold->t->last_id, id) != 0) {
    if ((st = lm_fold_add_row(fold->t, &row, diag)) != LM_OK) return st;
    int32_t k;
    if ((st = lm_fold_intern(fold->t, lm_stmt_text(s, 3), &k, diag)) != LM_OK) return st;
    fold->t->kernel[row] = k;
    for (int f = 0; f < LM_V3_N_FACTS; f++) fold->t->facts[f][row] = lm_stmt_double(s, 4 + f);
    snprintf(fold->t->last_id, sizeof fold->t->last_id, "%s", id);
    fold->t->has_last = 1;
    fold->t->last_row = row;
  }
  if (lm_stmt_is_null(s, 14)) return LM_OK;
  if (lm_map_put(events, event_key(key, sizeof key, s, 0, 14), (int64_t)row) != LM_OK) return lm_oom(diag, fold->t->path);
  return LM_OK;
}

/* Counter name of row += v: the first instance sets the cell (and its
 * "_sum" twin), the others add to both. *last is the counter of the last
 * event, tried first (one counter's instances follow each other). */
static lm_status add_value(lm_v3_fold *fold, const char *name, size_t row, double v, size_t *last, lm_diag *diag) {
  size_t k = *last;
  if (k >= fold->t->n_counters || strcmp(fold->t->counter_names[k], name) != 0) {
    lm_status st = lm_fold_counter(fold->t, name, &k, diag);
    if (st != LM_OK) return st;
  }
  *last = k;
  double cur = fold->t->counters[k][row];
  if (isnan(cur)) {
    fold->t->guess = k; /* the put finds it at once */
    return lm_v3_fold_put(fold, name, row, v, diag);
  }
  fold->t->counters[k][row] = cur + v;
  if (fold->t->tag[k] >= 0) fold->t->counters[fold->t->tag[k]][row] = cur + v;
  return LM_OK;
}

/* The counter events, in stored order, into their dispatches' rows. */
static lm_status fold_events(lm_v3_fold *fold, lm_sql *sql, const lm_map *events, lm_diag *diag) {
  lm_stmt *s = NULL;
  lm_status st = lm_sql_prepare(sql, event_query, &s, diag);
  if (st != LM_OK) return st;
  char key[160], last_guid[128] = "";
  int64_t row = -1, last_event = -1;
  int have_last = 0;
  size_t last_counter = (size_t)-1;
  int r;
  while ((r = lm_stmt_step(s)) == 1) {
    if (lm_stmt_is_null(s, 2)) continue;
    int64_t event = lm_stmt_int64(s, 1);
    const char *guid = lm_stmt_text(s, 0);
    if (!have_last || event != last_event || strcmp(guid, last_guid) != 0) {
      if (!lm_map_get(events, event_key(key, sizeof key, s, 0, 1), &row)) row = -1; /* no dispatch: the join's */
      last_event = event;
      have_last = strlen(guid) < sizeof last_guid;
      if (have_last) memcpy(last_guid, guid, strlen(guid) + 1);
    }
    if (row >= 0 &&
        (st = add_value(fold, lm_stmt_text(s, 2), (size_t)row, lm_stmt_double(s, 3), &last_counter, diag)) != LM_OK)
      break;
  }
  if (st == LM_OK && r < 0) st = lm_stmt_error(s, "reading the counter events", diag);
  lm_stmt_free(s);
  return st;
}

lm_status lm_v3_rocpd_read(const char *path, lm_v3_fold *fold, lm_v3_agents *agents, lm_diag *diag) {
  lm_sql *sql = NULL;
  lm_stmt *s = NULL;
  lm_map *events = lm_map_new();
  if (!events) return lm_oom(diag, path);
  lm_status st = lm_sql_open(path, LM_DB_READ, &sql, diag);
  if (st != LM_OK) goto done;
  if ((st = read_agents(sql, path, agents, diag)) != LM_OK) goto done;
  if ((st = lm_sql_prepare(sql, dispatch_query, &s, diag)) != LM_OK) goto done;
  fold->gpus_numbered = 1;
  fold->t->has_last = 0;
  int r;
  while ((r = lm_stmt_step(s)) == 1)
    if ((st = fold_dispatch(fold, s, events, diag)) != LM_OK) goto done;
  if (r < 0) {
    st = lm_stmt_error(s, "reading the kernel dispatches", diag);
    goto done;
  }
  st = fold_events(fold, sql, events, diag);
done:
  lm_stmt_free(s);
  lm_sql_close(sql);
  lm_map_free(events);
  return st;
}
