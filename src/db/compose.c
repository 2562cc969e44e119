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
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db/db.h"

/* real0: a REAL column read as SQLite's own accessor reads it (NULL as 0). */
static double real0(lm_stmt *s, int col) { return lm_stmt_is_null(s, col) ? 0.0 : lm_stmt_double(s, col); }

/* ------------------------------------------------------------- reading */

/* stored_record: the current row of lm_db_each_composable's query. */
static void stored_record(lm_stmt *s, lm_db_stored_record *r) {
  memset(r, 0, sizeof *r);
  r->run = (int)lm_stmt_int64(s, 0);
  r->rec.dispatch_id = lm_stmt_int64(s, 1);
  r->rec.kernel = lm_stmt_text(s, 2);
  r->rec.instance = lm_stmt_int64(s, 3);
  r->rec.selected = lm_stmt_int64(s, 4);
  r->rec.set = (int)lm_stmt_int64(s, 5);
  r->rec.gpu = (int)lm_stmt_int64(s, 6);
  r->rec.pid = lm_stmt_int64(s, 7);
  r->rec.tid = lm_stmt_int64(s, 8);
  r->rec.grid = lm_stmt_int64(s, 9);
  r->rec.workgroup = lm_stmt_int64(s, 10);
  r->rec.lds = lm_stmt_int64(s, 11);
  r->rec.scratch = lm_stmt_int64(s, 12);
  r->rec.arch_vgpr = lm_stmt_int64(s, 13);
  r->rec.accum_vgpr = lm_stmt_int64(s, 14);
  r->rec.sgpr = lm_stmt_int64(s, 15);
  r->rec.start_ns = real0(s, 16);
  r->rec.end_ns = real0(s, 17);
  r->rec.regions = lm_stmt_text(s, 18);
  r->rec.cycle_key = lm_stmt_text(s, 19);
  r->mode = lm_stmt_text(s, 20);
  r->rec.row_group = lm_stmt_int64(s, 21);
  r->slot = (int)lm_stmt_int64(s, 22);
}

lm_status lm_db_each_composable(lm_sql *db, int64_t wid, lm_db_stored_record_fn fn, void *user, lm_diag *diag) {
  lm_stmt *s = NULL;
  lm_status st = lm_sql_prepare(db,
                                "SELECT r.run_id, r.dispatch_id, r.kernel, r.instance, r.selected, r.set_id, "
                                "r.gpu_id, r.pid, r.tid, r.grid_size, r.workgroup_size, r.lds_per_workgroup, "
                                "r.scratch_per_workitem, r.arch_vgpr, r.accum_vgpr, r.sgpr, r.start_ns, "
                                "r.end_ns, r.regions, r.cycle_key, u.mode, r.row_group, COALESCE(p.slot, 0) "
                                "FROM profile_record r JOIN "
                                "profile_run u ON u.workload_id = r.workload_id AND u.id = r.run_id LEFT JOIN "
                                "profile_process p ON p.workload_id = r.workload_id AND p.run_id = r.run_id AND "
                                "p.pid = r.pid WHERE "
                                "r.workload_id = ? AND u.status = 'ok' AND r.set_id >= 0 AND r.row_group IS NOT NULL "
                                "ORDER BY r.run_id, p.slot, r.pid, r.dispatch_id",
                                &s, diag);
  if (st != LM_OK) return st;
  lm_stmt_bind_int64(s, 1, wid);
  int rc;
  while (st == LM_OK && (rc = lm_stmt_step(s)) == 1) {
    lm_db_stored_record r;
    stored_record(s, &r);
    st = fn(&r, user, diag);
  }
  if (st == LM_OK && rc != 0) st = lm_stmt_fail(s, diag);
  lm_stmt_free(s);
  return st;
}

lm_status lm_db_each_composable_value(lm_sql *db, int64_t wid, lm_db_stored_value_fn fn, void *user,
                                      lm_diag *diag) {
  lm_stmt *s = NULL;
  lm_status st = lm_sql_prepare(db, "SELECT v.run_id, v.dispatch_id, v.column_name, v.value, v.pid FROM "
                                    "profile_value v JOIN profile_run u ON u.workload_id = v.workload_id AND "
                                    "u.id = v.run_id WHERE v.workload_id = ? AND u.status = 'ok'", &s, diag);
  if (st != LM_OK) return st;
  lm_stmt_bind_int64(s, 1, wid);
  int rc;
  while (st == LM_OK && (rc = lm_stmt_step(s)) == 1)
    st = fn((int)lm_stmt_int64(s, 0), lm_stmt_int64(s, 4), lm_stmt_int64(s, 1), lm_stmt_text(s, 2),
            lm_stmt_double(s, 3), user, diag); /* NULL reads NaN */
  if (st == LM_OK && rc != 0) st = lm_stmt_fail(s, diag);
  lm_stmt_free(s);
  return st;
}

/* ------------------------------------------------------------- writing */

/* done: run a prepared write once and make it ready for the next. */
static lm_status done(lm_stmt *s, lm_diag *diag) {
  lm_status st = lm_stmt_step(s) == 0 ? LM_OK : lm_stmt_fail(s, diag);
  lm_stmt_reset(s);
  return st;
}

lm_status lm_db_clear_composed(lm_sql *db, int64_t wid, lm_diag *diag) {
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
    lm_stmt *s = NULL;
    lm_status st = lm_sql_prepare(db, clear[i], &s, diag);
    if (st != LM_OK) return st;
    lm_stmt_bind_int64(s, 1, wid);
    st = done(s, diag);
    lm_stmt_free(s);
    if (st != LM_OK) return st;
  }
  return LM_OK;
}

lm_status lm_db_complete_workload(lm_sql *db, int64_t wid, size_t n_dispatches, lm_diag *diag) {
  lm_stmt *s = NULL;
  lm_status st = lm_sql_prepare(db, "UPDATE workload SET complete = 1, n_dispatches = ? WHERE id = ?", &s, diag);
  if (st != LM_OK) return st;
  lm_stmt_bind_int64(s, 1, (int64_t)n_dispatches);
  lm_stmt_bind_int64(s, 2, wid);
  st = done(s, diag);
  lm_stmt_free(s);
  return st;
}

struct lm_db_composer {
  int64_t wid;
  lm_stmt *src;   /* column_data: the run and set of each value */
  lm_stmt *row;   /* dispatch: a row's instance, process, thread, clocks */
  lm_stmt *clk;   /* clock_sample: the mean over a span */
  lm_stmt *rname; /* profile_region: a run's region by id */
  lm_stmt *drow;  /* dispatch_region */
  lm_stmt *reg;   /* region */
  lm_stmt *tel;   /* profile_telemetry: a run's sampler */
  lm_stmt *csrc;  /* dispatch_clock */
  lm_stmt *pin;   /* power_sample: the mean over a span */
  lm_stmt *pnear; /* power_sample: the last before and first after a span */
};

/* The composer's statements, in the order of its fields from src. */
static const char *const composer_sql[] = {
    "UPDATE column_data SET runs = ?, sets = ? WHERE workload_id = ? AND source = ? AND name = ?",
    "UPDATE dispatch SET instance = ?1, pid = ?2, tid = ?3, sclk_mhz = ?4, mclk_mhz = ?5, rank = (SELECT rank "
    "FROM profile_process WHERE workload_id = ?6 AND run_id = ?8 AND pid = ?2), host = (SELECT host FROM "
    "profile_process WHERE workload_id = ?6 AND run_id = ?8 AND pid = ?2) WHERE workload_id = ?6 AND row = ?7",
    "SELECT AVG(sclk_mhz), AVG(mclk_mhz), COUNT(*) FROM clock_sample WHERE workload_id = ? AND run_id = ? AND "
    "gpu_id = ? AND t_ns BETWEEN ? AND ?",
    "SELECT name FROM profile_region WHERE workload_id = ? AND run_id = ? AND id = ?",
    "INSERT OR IGNORE INTO dispatch_region(workload_id, row, region_id) VALUES (?,?,?)",
    "INSERT OR IGNORE INTO region(workload_id, id, name) VALUES (?,?,?)",
    "SELECT sampler FROM profile_telemetry WHERE workload_id = ? AND run_id = ?",
    "INSERT INTO dispatch_clock(workload_id, row, source) VALUES (?,?,?)",
    "SELECT AVG(power_w), AVG(temp_c), COUNT(*) FROM power_sample WHERE workload_id = ?1 AND run_id = ?2 AND "
    "gpu_id = ?3 AND t_ns BETWEEN ?4 AND ?5",
    "SELECT power_w, temp_c FROM (SELECT * FROM (SELECT power_w, temp_c FROM power_sample WHERE workload_id = ?1 "
    "AND run_id = ?2 AND gpu_id = ?3 AND t_ns < ?4 AND t_ns >= ?4 - 5e7 ORDER BY t_ns DESC LIMIT 1) UNION ALL "
    "SELECT * FROM (SELECT power_w, temp_c FROM power_sample WHERE workload_id = ?1 AND run_id = ?2 AND gpu_id = "
    "?3 AND t_ns > ?5 AND t_ns <= ?5 + 5e7 ORDER BY t_ns LIMIT 1))",
};

lm_status lm_db_composer_open(lm_sql *db, int64_t wid, lm_db_composer **out, lm_diag *diag) {
  *out = NULL;
  lm_db_composer *c = lm_calloc(1, sizeof *c);
  if (!c) return lm_oom(diag, NULL);
  c->wid = wid;
  lm_stmt **slots[] = {&c->src, &c->row, &c->clk, &c->rname, &c->drow, &c->reg, &c->tel, &c->csrc, &c->pin,
                       &c->pnear};
  _Static_assert(LM_ARRAY_LEN(slots) == LM_ARRAY_LEN(composer_sql), "one statement per field");
  lm_status st = LM_OK;
  for (size_t i = 0; i < LM_ARRAY_LEN(slots) && st == LM_OK; i++)
    st = lm_sql_prepare(db, composer_sql[i], slots[i], diag);
  if (st != LM_OK) {
    lm_db_composer_close(c);
    return st;
  }
  *out = c;
  return LM_OK;
}

void lm_db_composer_close(lm_db_composer *c) {
  if (!c) return;
  lm_stmt_free(c->src);
  lm_stmt_free(c->row);
  lm_stmt_free(c->clk);
  lm_stmt_free(c->rname);
  lm_stmt_free(c->drow);
  lm_stmt_free(c->reg);
  lm_stmt_free(c->tel);
  lm_stmt_free(c->csrc);
  lm_stmt_free(c->pin);
  lm_stmt_free(c->pnear);
  lm_free(c);
}

lm_status lm_db_composer_sources(lm_db_composer *c, const char *source, const char *column, const int16_t *runs,
                                 const int16_t *sets, size_t n_rows, lm_diag *diag) {
  lm_stmt *s = c->src;
  const int16_t *blobs[2] = {runs, sets};
  for (int k = 0; k < 2; k++) {
    if (blobs[k]) lm_stmt_bind_blob_borrowed(s, 1 + k, blobs[k], n_rows * sizeof(int16_t));
    else lm_stmt_bind_null(s, 1 + k);
  }
  lm_stmt_bind_int64(s, 3, c->wid);
  lm_stmt_bind_text(s, 4, source);
  lm_stmt_bind_text(s, 5, column);
  lm_status st = done(s, diag);
  lm_stmt_bind_null(s, 1); /* the blobs are the caller's */
  lm_stmt_bind_null(s, 2);
  return st;
}

/* A sample query's parameters: workload, run, GPU and the time span. */
static void bind_window(lm_stmt *s, int64_t wid, int run, int gpu, double t0_ns, double t1_ns) {
  lm_stmt_bind_int64(s, 1, wid);
  lm_stmt_bind_int64(s, 2, run);
  lm_stmt_bind_int64(s, 3, gpu);
  lm_stmt_bind_double(s, 4, t0_ns);
  lm_stmt_bind_double(s, 5, t1_ns);
}

lm_status lm_db_composer_clock(lm_db_composer *c, int run, int gpu, double t0_ns, double t1_ns, double *sclk_mhz,
                               double *mclk_mhz, lm_diag *diag) {
  *sclk_mhz = *mclk_mhz = LM_NAN;
  lm_stmt *s = c->clk;
  bind_window(s, c->wid, run, gpu, t0_ns, t1_ns);
  lm_status st = LM_OK;
  if (lm_stmt_step(s) != 1) {
    st = lm_stmt_fail(s, diag);
  } else if (lm_stmt_int64(s, 2) > 0) {
    *sclk_mhz = real0(s, 0);
    *mclk_mhz = real0(s, 1);
  }
  lm_stmt_reset(s);
  return st;
}

/* mean_of: the means of the non-NULL powers and temperatures (columns 0
 * and 1) over the rows of s (NaN when none), and how many rows s gave;
 * 0 when the step failed. */
static int mean_of(lm_stmt *s, double *power, double *temp, int *n_rows) {
  double sum[2] = {0, 0};
  int n[2] = {0, 0}, rc;
  *n_rows = 0;
  while ((rc = lm_stmt_step(s)) == 1) {
    (*n_rows)++;
    for (int k = 0; k < 2; k++)
      if (!lm_stmt_is_null(s, k)) {
        sum[k] += lm_stmt_double(s, k);
        n[k]++;
      }
  }
  *power = n[0] ? sum[0] / n[0] : LM_NAN;
  *temp = n[1] ? sum[1] / n[1] : LM_NAN;
  return rc == 0;
}

lm_status lm_db_composer_power(lm_db_composer *c, int run, int gpu, double t0_ns, double t1_ns, double *power_w,
                               double *temp_c, lm_diag *diag) {
  *power_w = *temp_c = LM_NAN;
  lm_stmt *s = c->pin;
  bind_window(s, c->wid, run, gpu, t0_ns, t1_ns);
  lm_status st = LM_OK;
  int64_t inside = 0;
  if (lm_stmt_step(s) != 1) {
    st = lm_stmt_fail(s, diag);
  } else if ((inside = lm_stmt_int64(s, 2)) > 0) {
    if (!lm_stmt_is_null(s, 0)) *power_w = lm_stmt_double(s, 0);
    if (!lm_stmt_is_null(s, 1)) *temp_c = lm_stmt_double(s, 1);
  }
  lm_stmt_reset(s);
  if (st != LM_OK || inside > 0) return st;
  /* No sample inside: the two that bracket the span, when both exist. */
  s = c->pnear;
  bind_window(s, c->wid, run, gpu, t0_ns, t1_ns);
  double power, temp;
  int n_rows = 0;
  if (!mean_of(s, &power, &temp, &n_rows)) st = lm_stmt_fail(s, diag);
  else if (n_rows == 2) {
    *power_w = power;
    *temp_c = temp;
  }
  lm_stmt_reset(s);
  return st;
}

lm_status lm_db_composer_sampler(lm_db_composer *c, int run, char *sampler, size_t cap, lm_diag *diag) {
  if (cap) sampler[0] = '\0';
  lm_stmt *s = c->tel;
  lm_stmt_bind_int64(s, 1, c->wid);
  lm_stmt_bind_int64(s, 2, run);
  int rc = lm_stmt_step(s);
  lm_status st = LM_OK;
  if (rc == 1) {
    if (cap) snprintf(sampler, cap, "%s", lm_stmt_text(s, 0));
  } else if (rc != 0) {
    st = lm_stmt_fail(s, diag);
  }
  lm_stmt_reset(s);
  return st;
}

lm_status lm_db_composer_clock_source(lm_db_composer *c, size_t row, const char *source, lm_diag *diag) {
  lm_stmt *s = c->csrc;
  lm_stmt_bind_int64(s, 1, c->wid);
  lm_stmt_bind_int64(s, 2, (int64_t)row);
  lm_stmt_bind_text(s, 3, source);
  return done(s, diag);
}

lm_status lm_db_composer_row(lm_db_composer *c, size_t row, int run, int64_t instance, int64_t pid, int64_t tid,
                             double sclk_mhz, double mclk_mhz, lm_diag *diag) {
  lm_stmt *s = c->row;
  lm_stmt_bind_int64(s, 1, instance);
  lm_stmt_bind_int64(s, 2, pid);
  lm_stmt_bind_int64(s, 3, tid);
  lm_stmt_bind_double(s, 4, sclk_mhz); /* NaN binds NULL */
  lm_stmt_bind_double(s, 5, mclk_mhz);
  lm_stmt_bind_int64(s, 6, c->wid);
  lm_stmt_bind_int64(s, 7, (int64_t)row);
  lm_stmt_bind_int64(s, 8, run);
  return done(s, diag);
}

lm_status lm_db_composer_region_name(lm_db_composer *c, int run, int id, const char **name, lm_diag *diag) {
  *name = NULL;
  lm_stmt *s = c->rname;
  lm_stmt_reset(s); /* the previous call's name ends here */
  lm_stmt_bind_int64(s, 1, c->wid);
  lm_stmt_bind_int64(s, 2, run);
  lm_stmt_bind_int64(s, 3, id);
  int rc = lm_stmt_step(s);
  if (rc == 1) *name = lm_stmt_text(s, 0);
  else if (rc != 0) return lm_stmt_fail(s, diag);
  return LM_OK;
}

lm_status lm_db_composer_region(lm_db_composer *c, size_t row, int64_t region_id, const char *name,
                                lm_diag *diag) {
  lm_stmt *s = c->reg;
  lm_stmt_bind_int64(s, 1, c->wid);
  lm_stmt_bind_int64(s, 2, region_id);
  lm_stmt_bind_text(s, 3, name);
  lm_status st = done(s, diag);
  if (st != LM_OK) return st;
  s = c->drow;
  lm_stmt_bind_int64(s, 1, c->wid);
  lm_stmt_bind_int64(s, 2, (int64_t)row);
  lm_stmt_bind_int64(s, 3, region_id);
  return done(s, diag);
}
