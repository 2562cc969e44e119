/*
 * rocpd.c - rocprofv3's SQLite output (rocpd, its default format since
 * ROCm 7) read through the views the database itself defines: `kernels`
 * (one row per dispatch) joined with `pmc_events` (one row per dispatch
 * and counter instance, summed per counter here as the CSV output sums
 * them), and `rocpd_info_agent` for the GPUs. The views, not the tables
 * (whose names carry a run's UUID), are the documented interface. Rows
 * arrive sorted by process and dispatch, one statement, streamed into the
 * same fold as the CSV files.
 */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "rocprofv3/rocprofv3_private.h"
#include "sql/sql.h"

static const char dispatch_query[] =
    "SELECT K.guid, K.pid, K.dispatch_id, K.name, K.agent_type_index,"
    " K.grid_x * K.grid_y * K.grid_z, K.workgroup_x * K.workgroup_y * K.workgroup_z,"
    " K.lds_size, K.scratch_size, K.arch_vgpr_count, K.accum_vgpr_count, K.sgpr_count,"
    " K.start, K.end, P.name, SUM(P.value)"
    " FROM kernels K LEFT JOIN pmc_events P ON P.event_id = K.event_id AND P.guid = K.guid"
    " GROUP BY K.guid, K.pid, K.dispatch_id, P.name"
    " ORDER BY K.guid, K.pid, K.dispatch_id, P.name";

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

/* One row of the dispatch query into the fold. */
static lm_status fold_row(lm_v3_fold *fold, lm_stmt *s, lm_diag *diag) {
  char id[96];
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
  if (lm_stmt_is_null(s, 14)) return LM_OK; /* a dispatch without counters */
  return lm_v3_fold_put(fold, lm_stmt_text(s, 14), row, lm_stmt_double(s, 15), diag);
}

lm_status lm_v3_rocpd_read(const char *path, lm_v3_fold *fold, lm_v3_agents *agents, lm_diag *diag) {
  lm_sql *sql = NULL;
  lm_stmt *s = NULL;
  lm_status st = lm_sql_open(path, LM_DB_READ, &sql, diag);
  if (st != LM_OK) return st;
  if ((st = read_agents(sql, path, agents, diag)) != LM_OK) goto done;
  if ((st = lm_sql_prepare(sql, dispatch_query, &s, diag)) != LM_OK) goto done;
  fold->gpus_numbered = 1;
  fold->t->has_last = 0;
  int r;
  while ((r = lm_stmt_step(s)) == 1)
    if ((st = fold_row(fold, s, diag)) != LM_OK) goto done;
  if (r < 0) st = lm_stmt_error(s, "reading the kernel dispatches and their counters", diag);
done:
  lm_stmt_free(s);
  lm_sql_close(sql);
  return st;
}
