/*
 * compose.c - the SQL of composing a profile (docs/workload-format.md):
 * reading back the records and values of a profile's successful runs, and
 * writing the composed workload (dispatch rows, counter columns with the
 * run and set of each value, regions, measured clocks and their source)
 * over the rows of an earlier composition, then marking it complete.
 *
 * src/collect/compose.c decides how records line up into rows; this file
 * only moves rows in and out. Reads hand each row to a callback, so a
 * profile of many runs is never held twice; the per-row writes of one
 * composition share statements prepared once (lm_db_composer), inside the
 * caller's transaction.
 */
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db/db.h"

static lm_status fail(sqlite3 *db, lm_diag *diag) { return lm_db_error(db, diag); }

static const char *text_or_empty(sqlite3_stmt *s, int i) {
  const char *t = (const char *)sqlite3_column_text(s, i);
  return t ? t : "";
}

/* ------------------------------------------------------------- reading */

lm_status lm_db_each_composable(sqlite3 *db, int64_t wid, lm_db_stored_record_fn fn, void *user, lm_diag *diag) {
  sqlite3_stmt *s = NULL;
  if (sqlite3_prepare_v2(db,
                         "SELECT r.run_id, r.dispatch_id, r.kernel, r.instance, r.selected, r.set_id, "
                         "r.gpu_id, r.pid, r.tid, r.grid_size, r.workgroup_size, r.lds_per_workgroup, "
                         "r.scratch_per_workitem, r.arch_vgpr, r.accum_vgpr, r.sgpr, r.start_ns, "
                         "r.end_ns, r.regions, r.cycle_key, u.mode, r.row_group, COALESCE(p.slot, 0) "
                         "FROM profile_record r JOIN "
                         "profile_run u ON u.workload_id = r.workload_id AND u.id = r.run_id LEFT JOIN "
                         "profile_process p ON p.workload_id = r.workload_id AND p.run_id = r.run_id AND "
                         "p.pid = r.pid WHERE "
                         "r.workload_id = ? AND u.status = 'ok' AND r.set_id >= 0 AND r.row_group IS NOT NULL "
                         "ORDER BY r.run_id, p.slot, r.pid, r.dispatch_id", -1, &s, NULL) != SQLITE_OK)
    return fail(db, diag);
  sqlite3_bind_int64(s, 1, wid);
  int rc;
  lm_status st = LM_OK;
  while (st == LM_OK && (rc = sqlite3_step(s)) == SQLITE_ROW) {
    lm_db_stored_record r;
    memset(&r, 0, sizeof r);
    r.run = sqlite3_column_int(s, 0);
    r.rec.dispatch_id = sqlite3_column_int64(s, 1);
    r.rec.kernel = text_or_empty(s, 2);
    r.rec.instance = sqlite3_column_int64(s, 3);
    r.rec.selected = sqlite3_column_int64(s, 4);
    r.rec.set = sqlite3_column_int(s, 5);
    r.rec.gpu = sqlite3_column_int(s, 6);
    r.rec.pid = sqlite3_column_int64(s, 7);
    r.rec.tid = sqlite3_column_int64(s, 8);
    r.rec.grid = sqlite3_column_int64(s, 9);
    r.rec.workgroup = sqlite3_column_int64(s, 10);
    r.rec.lds = sqlite3_column_int64(s, 11);
    r.rec.scratch = sqlite3_column_int64(s, 12);
    r.rec.arch_vgpr = sqlite3_column_int64(s, 13);
    r.rec.accum_vgpr = sqlite3_column_int64(s, 14);
    r.rec.sgpr = sqlite3_column_int64(s, 15);
    r.rec.start_ns = sqlite3_column_double(s, 16);
    r.rec.end_ns = sqlite3_column_double(s, 17);
    r.rec.regions = text_or_empty(s, 18);
    r.rec.cycle_key = text_or_empty(s, 19);
    r.mode = text_or_empty(s, 20);
    r.rec.row_group = sqlite3_column_int64(s, 21);
    r.slot = sqlite3_column_int(s, 22);
    st = fn(&r, user, diag);
  }
  if (st == LM_OK && rc != SQLITE_DONE) st = fail(db, diag);
  sqlite3_finalize(s);
  return st;
}

lm_status lm_db_each_composable_value(sqlite3 *db, int64_t wid, lm_db_stored_value_fn fn, void *user,
                                      lm_diag *diag) {
  sqlite3_stmt *s = NULL;
  if (sqlite3_prepare_v2(db, "SELECT v.run_id, v.dispatch_id, v.column_name, v.value, v.pid FROM profile_value v "
                             "JOIN profile_run u ON u.workload_id = v.workload_id AND u.id = v.run_id "
                             "WHERE v.workload_id = ? AND u.status = 'ok'", -1, &s, NULL) != SQLITE_OK)
    return fail(db, diag);
  sqlite3_bind_int64(s, 1, wid);
  int rc;
  lm_status st = LM_OK;
  while (st == LM_OK && (rc = sqlite3_step(s)) == SQLITE_ROW) {
    double value = sqlite3_column_type(s, 3) == SQLITE_NULL ? LM_NAN : sqlite3_column_double(s, 3);
    st = fn(sqlite3_column_int(s, 0), sqlite3_column_int64(s, 4), sqlite3_column_int64(s, 1), text_or_empty(s, 2),
            value, user, diag);
  }
  if (st == LM_OK && rc != SQLITE_DONE) st = fail(db, diag);
  sqlite3_finalize(s);
  return st;
}

/* ------------------------------------------------------------- writing */

lm_status lm_db_clear_composed(sqlite3 *db, int64_t wid, lm_diag *diag) {
  static const char *const clear[] = {"DELETE FROM sysinfo WHERE workload_id = ?",
                                      "DELETE FROM kernel WHERE workload_id = ?",
                                      "DELETE FROM dispatch WHERE workload_id = ?",
                                      "DELETE FROM column_data WHERE workload_id = ?",
                                      "DELETE FROM region WHERE workload_id = ?",
                                      "DELETE FROM dispatch_region WHERE workload_id = ?",
                                      "DELETE FROM execution WHERE workload_id = ?",
                                      "DELETE FROM execution_value WHERE workload_id = ?",
                                      "DELETE FROM dispatch_clock WHERE workload_id = ?"};
  for (size_t i = 0; i < LM_ARRAY_LEN(clear); i++) {
    sqlite3_stmt *s = NULL;
    if (sqlite3_prepare_v2(db, clear[i], -1, &s, NULL) != SQLITE_OK) return fail(db, diag);
    sqlite3_bind_int64(s, 1, wid);
    lm_status st = sqlite3_step(s) == SQLITE_DONE ? LM_OK : fail(db, diag);
    sqlite3_finalize(s);
    if (st != LM_OK) return st;
  }
  return LM_OK;
}

lm_status lm_db_complete_workload(sqlite3 *db, int64_t wid, size_t n_dispatches, lm_diag *diag) {
  sqlite3_stmt *s = NULL;
  if (sqlite3_prepare_v2(db, "UPDATE workload SET complete = 1, n_dispatches = ? WHERE id = ?", -1, &s, NULL) !=
      SQLITE_OK)
    return fail(db, diag);
  sqlite3_bind_int64(s, 1, (sqlite3_int64)n_dispatches);
  sqlite3_bind_int64(s, 2, wid);
  lm_status st = sqlite3_step(s) == SQLITE_DONE ? LM_OK : fail(db, diag);
  sqlite3_finalize(s);
  return st;
}

struct lm_db_composer {
  sqlite3 *db;
  int64_t wid;
  sqlite3_stmt *src;   /* column_data: the run and set of each value */
  sqlite3_stmt *row;   /* dispatch: a row's instance, process, thread, clocks */
  sqlite3_stmt *clk;   /* clock_sample: the mean over a span */
  sqlite3_stmt *rname; /* profile_region: a run's region by id */
  sqlite3_stmt *drow;  /* dispatch_region */
  sqlite3_stmt *reg;   /* region */
  sqlite3_stmt *tel;   /* profile_telemetry: a run's sampler */
  sqlite3_stmt *csrc;  /* dispatch_clock */
  sqlite3_stmt *pin;   /* power_sample: the mean over a span */
  sqlite3_stmt *pnear; /* power_sample: the last before and first after a span */
};

lm_status lm_db_composer_open(sqlite3 *db, int64_t wid, lm_db_composer **out, lm_diag *diag) {
  *out = NULL;
  lm_db_composer *c = lm_calloc(1, sizeof *c);
  if (!c) return lm_oom(diag, NULL);
  c->db = db;
  c->wid = wid;
  if (sqlite3_prepare_v2(db, "UPDATE column_data SET runs = ?, sets = ? WHERE workload_id = ? AND "
                             "source = ? AND name = ?", -1, &c->src, NULL) != SQLITE_OK ||
      sqlite3_prepare_v2(db, "UPDATE dispatch SET instance = ?1, pid = ?2, tid = ?3, sclk_mhz = ?4, "
                             "mclk_mhz = ?5, rank = (SELECT rank FROM profile_process WHERE workload_id "
                             "= ?6 AND run_id = ?8 AND pid = ?2), host = (SELECT host FROM profile_process "
                             "WHERE workload_id = ?6 AND run_id = ?8 AND pid = ?2) WHERE workload_id = ?6 "
                             "AND row = ?7", -1, &c->row, NULL) != SQLITE_OK ||
      sqlite3_prepare_v2(db, "SELECT AVG(sclk_mhz), AVG(mclk_mhz), COUNT(*) FROM clock_sample WHERE "
                             "workload_id = ? AND run_id = ? AND gpu_id = ? AND t_ns BETWEEN ? AND ?",
                         -1, &c->clk, NULL) != SQLITE_OK ||
      sqlite3_prepare_v2(db, "SELECT name FROM profile_region WHERE workload_id = ? AND run_id = ? AND id = ?",
                         -1, &c->rname, NULL) != SQLITE_OK ||
      sqlite3_prepare_v2(db, "INSERT OR IGNORE INTO dispatch_region(workload_id, row, region_id) VALUES (?,?,?)",
                         -1, &c->drow, NULL) != SQLITE_OK ||
      sqlite3_prepare_v2(db, "INSERT OR IGNORE INTO region(workload_id, id, name) VALUES (?,?,?)", -1, &c->reg,
                         NULL) != SQLITE_OK ||
      sqlite3_prepare_v2(db, "SELECT sampler FROM profile_telemetry WHERE workload_id = ? AND run_id = ?", -1,
                         &c->tel, NULL) != SQLITE_OK ||
      sqlite3_prepare_v2(db, "INSERT INTO dispatch_clock(workload_id, row, source) VALUES (?,?,?)", -1, &c->csrc,
                         NULL) != SQLITE_OK ||
      sqlite3_prepare_v2(db, "SELECT AVG(power_w), AVG(temp_c), COUNT(*) FROM power_sample WHERE "
                             "workload_id = ?1 AND run_id = ?2 AND gpu_id = ?3 AND t_ns BETWEEN ?4 AND ?5",
                         -1, &c->pin, NULL) != SQLITE_OK ||
      sqlite3_prepare_v2(db, "SELECT power_w, temp_c FROM (SELECT * FROM (SELECT power_w, temp_c FROM power_sample "
                             "WHERE workload_id = ?1 AND run_id = ?2 AND gpu_id = ?3 AND t_ns < ?4 AND t_ns >= ?4 "
                             "- 5e7 ORDER BY t_ns DESC LIMIT 1) UNION ALL SELECT * FROM (SELECT power_w, temp_c "
                             "FROM power_sample WHERE workload_id = ?1 AND run_id = ?2 AND gpu_id = ?3 AND t_ns > "
                             "?5 AND t_ns <= ?5 + 5e7 ORDER BY t_ns LIMIT 1))",
                         -1, &c->pnear, NULL) != SQLITE_OK) {
    lm_status st = fail(db, diag);
    lm_db_composer_close(c);
    return st;
  }
  *out = c;
  return LM_OK;
}

void lm_db_composer_close(lm_db_composer *c) {
  if (!c) return;
  sqlite3_finalize(c->src);
  sqlite3_finalize(c->row);
  sqlite3_finalize(c->clk);
  sqlite3_finalize(c->rname);
  sqlite3_finalize(c->drow);
  sqlite3_finalize(c->reg);
  sqlite3_finalize(c->tel);
  sqlite3_finalize(c->csrc);
  sqlite3_finalize(c->pin);
  sqlite3_finalize(c->pnear);
  lm_free(c);
}

/* done: run a prepared write once and make it ready for the next. */
static lm_status done(lm_db_composer *c, sqlite3_stmt *s, lm_diag *diag) {
  lm_status st = sqlite3_step(s) == SQLITE_DONE ? LM_OK : fail(c->db, diag);
  sqlite3_reset(s);
  return st;
}

lm_status lm_db_composer_sources(lm_db_composer *c, const char *source, const char *column, const int16_t *runs,
                                 const int16_t *sets, size_t n_rows, lm_diag *diag) {
  sqlite3_stmt *s = c->src;
  sqlite3_bind_blob64(s, 1, runs, n_rows * sizeof(int16_t), SQLITE_STATIC);
  sqlite3_bind_blob64(s, 2, sets, n_rows * sizeof(int16_t), SQLITE_STATIC);
  sqlite3_bind_int64(s, 3, c->wid);
  sqlite3_bind_text(s, 4, source, -1, SQLITE_STATIC);
  sqlite3_bind_text(s, 5, column, -1, SQLITE_STATIC);
  lm_status st = done(c, s, diag);
  sqlite3_clear_bindings(s); /* the blobs are the caller's */
  return st;
}

/* A sample query's parameters: workload, run, GPU and the time span. */
static void bind_window(sqlite3_stmt *s, int64_t wid, int run, int gpu, double t0_ns, double t1_ns) {
  sqlite3_bind_int64(s, 1, wid);
  sqlite3_bind_int(s, 2, run);
  sqlite3_bind_int(s, 3, gpu);
  sqlite3_bind_double(s, 4, t0_ns);
  sqlite3_bind_double(s, 5, t1_ns);
}

lm_status lm_db_composer_clock(lm_db_composer *c, int run, int gpu, double t0_ns, double t1_ns, double *sclk_mhz,
                               double *mclk_mhz, lm_diag *diag) {
  *sclk_mhz = *mclk_mhz = LM_NAN;
  sqlite3_stmt *s = c->clk;
  bind_window(s, c->wid, run, gpu, t0_ns, t1_ns);
  lm_status st = LM_OK;
  if (sqlite3_step(s) != SQLITE_ROW) {
    st = fail(c->db, diag);
  } else if (sqlite3_column_int(s, 2) > 0) {
    *sclk_mhz = sqlite3_column_double(s, 0);
    *mclk_mhz = sqlite3_column_double(s, 1);
  }
  sqlite3_reset(s);
  return st;
}

/* mean_of: the means of the non-NULL powers and temperatures (columns 0
 * and 1) over the rows of s (NaN when none), and how many rows s gave;
 * 0 when the step failed. */
static int mean_of(sqlite3_stmt *s, double *power, double *temp, int *n_rows) {
  double sum[2] = {0, 0};
  int n[2] = {0, 0}, rc;
  *n_rows = 0;
  while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
    (*n_rows)++;
    for (int k = 0; k < 2; k++)
      if (sqlite3_column_type(s, k) != SQLITE_NULL) {
        sum[k] += sqlite3_column_double(s, k);
        n[k]++;
      }
  }
  *power = n[0] ? sum[0] / n[0] : LM_NAN;
  *temp = n[1] ? sum[1] / n[1] : LM_NAN;
  return rc == SQLITE_DONE;
}

lm_status lm_db_composer_power(lm_db_composer *c, int run, int gpu, double t0_ns, double t1_ns, double *power_w,
                               double *temp_c, lm_diag *diag) {
  *power_w = *temp_c = LM_NAN;
  sqlite3_stmt *s = c->pin;
  bind_window(s, c->wid, run, gpu, t0_ns, t1_ns);
  lm_status st = LM_OK;
  int inside = 0;
  if (sqlite3_step(s) != SQLITE_ROW) {
    st = fail(c->db, diag);
  } else if ((inside = sqlite3_column_int(s, 2)) > 0) {
    if (sqlite3_column_type(s, 0) != SQLITE_NULL) *power_w = sqlite3_column_double(s, 0);
    if (sqlite3_column_type(s, 1) != SQLITE_NULL) *temp_c = sqlite3_column_double(s, 1);
  }
  sqlite3_reset(s);
  if (st != LM_OK || inside > 0) return st;
  /* No sample inside: the two that bracket the span, when both exist. */
  s = c->pnear;
  bind_window(s, c->wid, run, gpu, t0_ns, t1_ns);
  double power, temp;
  int n_rows = 0;
  if (!mean_of(s, &power, &temp, &n_rows)) st = fail(c->db, diag);
  else if (n_rows == 2) {
    *power_w = power;
    *temp_c = temp;
  }
  sqlite3_reset(s);
  return st;
}

lm_status lm_db_composer_sampler(lm_db_composer *c, int run, char *sampler, size_t cap, lm_diag *diag) {
  if (cap) sampler[0] = '\0';
  sqlite3_stmt *s = c->tel;
  sqlite3_bind_int64(s, 1, c->wid);
  sqlite3_bind_int(s, 2, run);
  int rc = sqlite3_step(s);
  lm_status st = LM_OK;
  if (rc == SQLITE_ROW) {
    const char *t = (const char *)sqlite3_column_text(s, 0);
    if (t && cap) snprintf(sampler, cap, "%s", t);
  } else if (rc != SQLITE_DONE) {
    st = fail(c->db, diag);
  }
  sqlite3_reset(s);
  return st;
}

lm_status lm_db_composer_clock_source(lm_db_composer *c, size_t row, const char *source, lm_diag *diag) {
  sqlite3_stmt *s = c->csrc;
  sqlite3_bind_int64(s, 1, c->wid);
  sqlite3_bind_int64(s, 2, (sqlite3_int64)row);
  sqlite3_bind_text(s, 3, source, -1, SQLITE_TRANSIENT);
  return done(c, s, diag);
}

lm_status lm_db_composer_row(lm_db_composer *c, size_t row, int run, int64_t instance, int64_t pid, int64_t tid,
                             double sclk_mhz, double mclk_mhz, lm_diag *diag) {
  sqlite3_stmt *s = c->row;
  sqlite3_bind_int64(s, 1, instance);
  sqlite3_bind_int64(s, 2, pid);
  sqlite3_bind_int64(s, 3, tid);
  if (sclk_mhz != sclk_mhz) sqlite3_bind_null(s, 4);
  else sqlite3_bind_double(s, 4, sclk_mhz);
  if (mclk_mhz != mclk_mhz) sqlite3_bind_null(s, 5);
  else sqlite3_bind_double(s, 5, mclk_mhz);
  sqlite3_bind_int64(s, 6, c->wid);
  sqlite3_bind_int64(s, 7, (sqlite3_int64)row);
  sqlite3_bind_int(s, 8, run);
  return done(c, s, diag);
}

lm_status lm_db_composer_region_name(lm_db_composer *c, int run, int id, const char **name, lm_diag *diag) {
  *name = NULL;
  sqlite3_stmt *s = c->rname;
  sqlite3_reset(s); /* the previous call's name ends here */
  sqlite3_bind_int64(s, 1, c->wid);
  sqlite3_bind_int(s, 2, run);
  sqlite3_bind_int(s, 3, id);
  int rc = sqlite3_step(s);
  if (rc == SQLITE_ROW) *name = text_or_empty(s, 0);
  else if (rc != SQLITE_DONE) return fail(c->db, diag);
  return LM_OK;
}

lm_status lm_db_composer_region(lm_db_composer *c, size_t row, int64_t region_id, const char *name,
                                lm_diag *diag) {
  sqlite3_stmt *s = c->reg;
  sqlite3_bind_int64(s, 1, c->wid);
  sqlite3_bind_int64(s, 2, region_id);
  sqlite3_bind_text(s, 3, name, -1, SQLITE_TRANSIENT);
  lm_status st = done(c, s, diag);
  if (st != LM_OK) return st;
  s = c->drow;
  sqlite3_bind_int64(s, 1, c->wid);
  sqlite3_bind_int64(s, 2, (sqlite3_int64)row);
  sqlite3_bind_int64(s, 3, region_id);
  return done(c, s, diag);
}
