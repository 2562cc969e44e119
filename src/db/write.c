/*
 * write.c - writing a loaded workload into lumen's database: the
 * workload row, its dispatch rows (the fixed launch columns) and its
 * counter columns, in the caller's transaction or one of its own.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "db/db.h"
#include "db/db_private.h"
#include "sql/sql.h"

static void bind_value(lm_stmt *s, int i, double v) {
  if (isnan(v)) lm_stmt_bind_null(s, i);
  else if (v == floor(v) && fabs(v) < 9e15) lm_stmt_bind_int64(s, i, (int64_t)v);
  else lm_stmt_bind_double(s, i, v);
}

static double col_value(const lm_table *t, long c, size_t r) {
  return c < 0 ? LM_NAN : t->cols[c].values[r];
}

int lm_db_dispatch_column(const char *name) {
  for (size_t k = 0; k < LM_DB_N_FIXED; k++)
    if (strcmp(lm_db_fixed_cols[k].csv, name) == 0) return 1;
  /* The measured clocks are dispatch columns too (sclk_mhz, mclk_mhz). */
  return strcmp(name, "Measured_SCLK_MHz") == 0 || strcmp(name, "Measured_MCLK_MHz") == 0;
}

/* Rows (workload, id, name) of a name table (kernel, region): ids are the
 * positions in names. */
static lm_status put_names(lm_sql *sql, int64_t wid, const char *table, const char *const *names, size_t n,
                           lm_diag *diag) {
  char text[128];
  snprintf(text, sizeof text, "INSERT INTO %s(workload_id, id, name) VALUES (?,?,?)", table);
  lm_stmt *s = NULL;
  lm_status st = lm_sql_prepare(sql, text, &s, diag);
  if (st != LM_OK) return st;
  for (size_t i = 0; i < n; i++) {
    lm_stmt_bind_int64(s, 1, wid);
    lm_stmt_bind_int64(s, 2, (int64_t)i);
    lm_stmt_bind_text(s, 3, names[i]);
    if (lm_stmt_step(s) < 0) return lm_db_stmt_fail(s, sql, table, diag);
    lm_stmt_reset(s);
  }
  lm_stmt_free(s);
  return LM_OK;
}

lm_status lm_db_create_workload(lm_sql *sql, const char *name, const char *team, const char *source,
                                const char *origin, const char *arch, const char *gpu_model,
                                size_t n_dispatches, int complete, int64_t *id_out, lm_diag *diag) {
  lm_stmt *s = NULL;
  char created[64];
  time_t now = time(NULL);
  strftime(created, sizeof created, "%Y-%m-%dT%H:%M:%SZ", gmtime(&now));
  lm_status st = lm_sql_prepare(sql,
                                "INSERT INTO workload(name, team, source, origin, created, arch, "
                                "gpu_model, n_dispatches, complete) VALUES (?,?,?,?,?,?,?,?,?) "
                                "RETURNING id",
                                &s, diag);
  if (st != LM_OK) return st;
  lm_stmt_bind_text(s, 1, name);
  lm_stmt_bind_text(s, 2, team ? team : "");
  lm_stmt_bind_text(s, 3, source);
  lm_stmt_bind_text(s, 4, origin ? origin : "");
  lm_stmt_bind_text(s, 5, created);
  lm_stmt_bind_text(s, 6, arch ? arch : "");
  lm_stmt_bind_text(s, 7, gpu_model ? gpu_model : "");
  lm_stmt_bind_int64(s, 8, (int64_t)n_dispatches);
  lm_stmt_bind_int64(s, 9, complete);
  int rc = lm_stmt_step(s);
  if (rc < 0) {
    if (lm_stmt_unique_violation(s)) {
      lm_stmt_free(s);
      return lm_fail(diag, LM_EINVAL, lm_sql_where(sql), "a workload named '%s' is already in the database", name);
    }
    return lm_db_stmt_fail(s, sql, "write the workload", diag);
  }
  if (rc == 1 && id_out) *id_out = lm_stmt_int64(s, 0);
  lm_stmt_free(s);
  return LM_OK;
}

lm_status lm_db_write_tables(lm_sql *sql, int64_t wid, const lm_workload *w, const lm_db_write_opts *o,
                             lm_diag *diag) {
  lm_stmt *s = NULL;
  lm_status st;
  /* The dispatch columns are written row by row: loaded first. */
  long dispatch_cols[LM_DB_N_FIXED + 2];
  size_t n_dispatch_cols = 0;
  for (size_t k = 0; k < LM_DB_N_FIXED + 2; k++) {
    long c = lm_table_find(w->pmc, k < LM_DB_N_FIXED ? lm_db_fixed_cols[k].csv
                                   : k == LM_DB_N_FIXED ? "Measured_SCLK_MHz" : "Measured_MCLK_MHz");
    if (c >= 0 && lm_table_deferred(w->pmc, (size_t)c)) dispatch_cols[n_dispatch_cols++] = c;
  }
  if (n_dispatch_cols && (st = lm_table_load(w->pmc, dispatch_cols, n_dispatch_cols, diag)) != LM_OK) return st;
  /* System information. */
  if ((st = lm_sql_prepare(sql, "INSERT INTO sysinfo(workload_id, position, key, value) VALUES (?,?,?,?)",
                           &s, diag)) != LM_OK)
    return st;
  for (size_t i = 0; i < w->sysinfo.n_fields; i++) {
    lm_stmt_bind_int64(s, 1, wid);
    lm_stmt_bind_int64(s, 2, (int64_t)i);
    lm_stmt_bind_text(s, 3, w->sysinfo.names[i]);
    lm_stmt_bind_text(s, 4, w->sysinfo.texts[i] ? w->sysinfo.texts[i] : "");
    if (lm_stmt_step(s) < 0) return lm_db_stmt_fail(s, sql, "write system info", diag);
    lm_stmt_reset(s);
  }
  lm_stmt_free(s);

  /* Kernels: the pmc table's interned names keep their ids. */
  const lm_table *pmc = w->pmc;
  long kcol = lm_table_find(pmc, "Kernel_Name");
  if ((st = put_names(sql, wid, "kernel", pmc->strings, pmc->n_strings, diag)) != LM_OK) return st;

  /* Dispatches. */
  long fixed_idx[LM_DB_N_FIXED];
  for (size_t k = 0; k < LM_DB_N_FIXED; k++) fixed_idx[k] = lm_table_find(pmc, lm_db_fixed_cols[k].csv);
  long sclk = lm_table_find(pmc, "Measured_SCLK_MHz"), mclk = lm_table_find(pmc, "Measured_MCLK_MHz");
  if ((st = lm_sql_prepare(sql,
                           "INSERT INTO dispatch(workload_id, row, kernel_id, dispatch_id, gpu_id, "
                           "grid_size, workgroup_size, lds_per_workgroup, scratch_per_workitem, "
                           "arch_vgpr, accum_vgpr, sgpr, wave_size, start_ns, end_ns, sclk_mhz, "
                           "mclk_mhz, rank, host) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                           &s, diag)) != LM_OK)
    return st;
  for (size_t r = 0; r < pmc->n_rows; r++) {
    lm_stmt_bind_int64(s, 1, wid);
    lm_stmt_bind_int64(s, 2, (int64_t)r);
    int32_t kid = kcol >= 0 && pmc->cols[kcol].text_ids ? pmc->cols[kcol].text_ids[r] : -1;
    if (kid >= 0) lm_stmt_bind_int64(s, 3, kid);
    else lm_stmt_bind_null(s, 3);
    for (size_t k = 0; k < LM_DB_N_FIXED; k++) {
      double v = col_value(pmc, fixed_idx[k], r);
      /* timestamps are stored as REAL */
      if (k >= 10) lm_stmt_bind_double(s, 4 + (int)k, v);
      else bind_value(s, 4 + (int)k, v);
    }
    lm_stmt_bind_double(s, 16, col_value(pmc, sclk, r));
    lm_stmt_bind_double(s, 17, col_value(pmc, mclk, r));
    if (w->row_rank && w->row_rank[r] >= 0) lm_stmt_bind_int64(s, 18, w->row_rank[r]);
    else lm_stmt_bind_null(s, 18);
    if (w->row_host && w->row_host[r]) lm_stmt_bind_text(s, 19, w->row_host[r]);
    else lm_stmt_bind_null(s, 19);
    if (lm_stmt_step(s) < 0) return lm_db_stmt_fail(s, sql, "write dispatches", diag);
    lm_stmt_reset(s);
  }
  lm_stmt_free(s);

  /* Regions. */
  if (w->n_regions && w->row_regions) {
    if ((st = put_names(sql, wid, "region", w->region_names, w->n_regions, diag)) != LM_OK) return st;
    if ((st = lm_sql_prepare(sql, "INSERT INTO dispatch_region(workload_id, row, region_id) VALUES (?,?,?)",
                             &s, diag)) != LM_OK)
      return st;
    for (size_t r = 0; r < pmc->n_rows; r++)
      for (size_t i = 0; i < w->n_regions && i < 64; i++) {
        if (!(w->row_regions[r] & (1ULL << i))) continue;
        lm_stmt_bind_int64(s, 1, wid);
        lm_stmt_bind_int64(s, 2, (int64_t)r);
        lm_stmt_bind_int64(s, 3, (int64_t)i);
        if (lm_stmt_step(s) < 0) return lm_db_stmt_fail(s, sql, "write regions", diag);
        lm_stmt_reset(s);
      }
    lm_stmt_free(s);
  }

  /* Counter columns: pmc_perf, the SQ_* accumulate tables, roofline. */
  st = lm_db_put_columns(sql, wid, pmc, "pmc_perf", 1, o, diag);
  for (size_t i = 0; st == LM_OK && i < w->n_levels; i++)
    st = lm_db_put_columns(sql, wid, w->levels[i], w->levels[i]->name, 0, o, diag);
  if (st == LM_OK && w->roofline) st = lm_db_put_columns(sql, wid, w->roofline, "roofline", 0, o, diag);
  if (st == LM_OK) st = lm_db_write_provenance(sql, wid, w, diag);
  if (st == LM_OK) st = lm_db_write_ranks(sql, wid, w, diag);
  return st;
}

lm_status lm_db_write_workload(lm_sql *sql, const lm_workload *w, const char *name, const char *team,
                               const char *origin, int64_t *id_out, lm_diag *diag) {
  lm_status st = lm_sql_begin(sql, diag);
  if (st != LM_OK) return st;
  const char *model = lm_sysinfo_text(&w->sysinfo, "gpu_model");
  int64_t wid = 0;
  st = lm_db_create_workload(sql, name, team, "omniperf", origin, w->arch, model, w->pmc->n_rows, 1, &wid,
                             diag);
  if (st == LM_OK) st = lm_db_write_tables(sql, wid, w, NULL, diag);
  if (st == LM_OK) st = lm_sql_commit(sql, diag);
  if (st != LM_OK) {
    lm_sql_rollback(sql);
    return st;
  }
  if (id_out) *id_out = wid;
  return LM_OK;
}
