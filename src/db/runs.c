/*
 * runs.c - the bookkeeping tables of a profile in a lumen workload
 * database (docs/workload-format.md): the options and counter sets it was
 * started with, its runs, the dispatch records, values, regions and clock
 * samples its tool library wrote, the processes of each run, and the log.
 *
 * `lumen profile` decides what to write (src/collect/record.c); the SQL is
 * here, one function per statement it needs, over the SQLite handle of
 * the workload's own file (profiles are always SQLite: the store copies
 * them elsewhere). Writers of many rows (a run's records) keep their
 * statements prepared for the run (lm_db_records).
 */
#include <math.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db/db.h"

static lm_status fail(sqlite3 *db, lm_diag *diag) { return lm_db_error(db, diag); }

lm_status lm_db_error(sqlite3 *db, lm_diag *diag) {
  return lm_fail(diag, LM_EIO, sqlite3_db_filename(db, "main"), "%s", sqlite3_errmsg(db));
}

lm_status lm_db_exec(sqlite3 *db, const char *sql, lm_diag *diag) {
  char *err = NULL;
  if (sqlite3_exec(db, sql, NULL, NULL, &err) == SQLITE_OK) return LM_OK;
  lm_status st = lm_fail(diag, LM_EIO, sqlite3_db_filename(db, "main"), "%s", err ? err : "?");
  sqlite3_free(err);
  return st;
}

/* bind_opt: an integer, or NULL where it is `none`. */
static void bind_opt(sqlite3_stmt *s, int i, int64_t v, int64_t none) {
  if (v == none) sqlite3_bind_null(s, i);
  else sqlite3_bind_int64(s, i, v);
}

static void bind_text_or_null(sqlite3_stmt *s, int i, const char *v) {
  if (v && *v) sqlite3_bind_text(s, i, v, -1, SQLITE_TRANSIENT);
  else sqlite3_bind_null(s, i);
}

/* --------------------------------------------------------------- options */

lm_status lm_db_put_option(sqlite3 *db, int64_t wid, const char *key, int pos, const char *value,
                           lm_diag *diag) {
  sqlite3_stmt *s = NULL;
  if (sqlite3_prepare_v2(db, "INSERT OR REPLACE INTO profile_option(workload_id, key, position, value) "
                             "VALUES (?,?,?,?)", -1, &s, NULL) != SQLITE_OK)
    return fail(db, diag);
  sqlite3_bind_int64(s, 1, wid);
  sqlite3_bind_text(s, 2, key, -1, SQLITE_STATIC);
  sqlite3_bind_int(s, 3, pos);
  sqlite3_bind_text(s, 4, value ? value : "", -1, SQLITE_STATIC);
  lm_status st = sqlite3_step(s) == SQLITE_DONE ? LM_OK : fail(db, diag);
  sqlite3_finalize(s);
  return st;
}

lm_status lm_db_each_option(sqlite3 *db, int64_t wid, lm_db_option_fn fn, void *user, lm_diag *diag) {
  sqlite3_stmt *s = NULL;
  if (sqlite3_prepare_v2(db, "SELECT key, value FROM profile_option WHERE workload_id = ? "
                             "ORDER BY key, position", -1, &s, NULL) != SQLITE_OK)
    return fail(db, diag);
  sqlite3_bind_int64(s, 1, wid);
  int rc, go = 1;
  while (go && (rc = sqlite3_step(s)) == SQLITE_ROW) {
    const char *k = (const char *)sqlite3_column_text(s, 0);
    const char *v = (const char *)sqlite3_column_text(s, 1);
    go = fn(k ? k : "", v ? v : "", user) == 0;
  }
  lm_status st = !go || rc == SQLITE_DONE ? LM_OK : fail(db, diag);
  sqlite3_finalize(s);
  return st;
}

/* ------------------------------------------------------------- the plan */

lm_status lm_db_put_plan(sqlite3 *db, int64_t wid, const lm_db_plan_row *rows, size_t n, lm_diag *diag) {
  sqlite3_stmt *s = NULL;
  if (sqlite3_prepare_v2(db, "INSERT INTO profile_set(workload_id, set_id, position, counter, "
                             "block, accumulate, why) VALUES (?,?,?,?,?,?,?)", -1, &s, NULL) != SQLITE_OK)
    return fail(db, diag);
  lm_status st = LM_OK;
  for (size_t i = 0; i < n && st == LM_OK; i++) {
    const lm_db_plan_row *r = &rows[i];
    sqlite3_bind_int64(s, 1, wid);
    sqlite3_bind_int(s, 2, r->set);
    sqlite3_bind_int(s, 3, r->position);
    sqlite3_bind_text(s, 4, r->counter, -1, SQLITE_STATIC);
    sqlite3_bind_text(s, 5, r->block, -1, SQLITE_STATIC);
    if (r->accumulate) sqlite3_bind_text(s, 6, r->accumulate, -1, SQLITE_STATIC);
    else sqlite3_bind_null(s, 6);
    sqlite3_bind_text(s, 7, r->why, -1, SQLITE_STATIC);
    if (sqlite3_step(s) != SQLITE_DONE) st = fail(db, diag);
    sqlite3_reset(s);
  }
  sqlite3_finalize(s);
  return st;
}

lm_status lm_db_each_plan_counter(sqlite3 *db, int64_t wid, lm_db_plan_fn fn, void *user, lm_diag *diag) {
  sqlite3_stmt *s = NULL;
  if (sqlite3_prepare_v2(db, "SELECT set_id, counter, accumulate FROM profile_set WHERE workload_id = ? "
                             "ORDER BY set_id, position", -1, &s, NULL) != SQLITE_OK)
    return fail(db, diag);
  sqlite3_bind_int64(s, 1, wid);
  int rc;
  lm_status st = LM_OK;
  while (st == LM_OK && (rc = sqlite3_step(s)) == SQLITE_ROW) {
    const char *counter = (const char *)sqlite3_column_text(s, 1);
    const char *acc = sqlite3_column_type(s, 2) == SQLITE_NULL ? NULL : (const char *)sqlite3_column_text(s, 2);
    st = fn(sqlite3_column_int(s, 0), counter ? counter : "", acc, user, diag);
  }
  if (st == LM_OK && rc != SQLITE_DONE) st = fail(db, diag);
  sqlite3_finalize(s);
  return st;
}

/* ------------------------------------------------------------------ runs */

lm_status lm_db_run_begin(sqlite3 *db, int64_t wid, int run, const char *mode, int pass,
                          const char *started, lm_diag *diag) {
  sqlite3_stmt *s = NULL;
  if (sqlite3_prepare_v2(db, "INSERT OR REPLACE INTO profile_run(workload_id, id, mode, pass, "
                             "started, status) VALUES (?,?,?,?,?, 'running')", -1, &s, NULL) != SQLITE_OK)
    return fail(db, diag);
  sqlite3_bind_int64(s, 1, wid);
  sqlite3_bind_int(s, 2, run);
  sqlite3_bind_text(s, 3, mode, -1, SQLITE_STATIC);
  bind_opt(s, 4, pass, -1);
  sqlite3_bind_text(s, 5, started, -1, SQLITE_STATIC);
  lm_status st = sqlite3_step(s) == SQLITE_DONE ? LM_OK : fail(db, diag);
  sqlite3_finalize(s);
  return st;
}

void lm_db_run_forget(sqlite3 *db, int64_t wid, int run) {
  sqlite3_stmt *s = NULL;
  if (sqlite3_prepare_v2(db, "DELETE FROM profile_run WHERE workload_id = ? AND id = ?", -1, &s, NULL) !=
      SQLITE_OK)
    return;
  sqlite3_bind_int64(s, 1, wid);
  sqlite3_bind_int(s, 2, run);
  sqlite3_step(s);
  sqlite3_finalize(s);
}

lm_status lm_db_run_finish(sqlite3 *db, int64_t wid, int run, const char *finished, const char *status,
                           int exit_code, int sig, long n_dispatches, lm_diag *diag) {
  sqlite3_stmt *s = NULL;
  if (sqlite3_prepare_v2(db, "UPDATE profile_run SET finished = ?, status = ?, exit_code = ?, "
                             "signal = ?, n_dispatches = ? WHERE workload_id = ? AND id = ?",
                         -1, &s, NULL) != SQLITE_OK)
    return fail(db, diag);
  sqlite3_bind_text(s, 1, finished, -1, SQLITE_STATIC);
  sqlite3_bind_text(s, 2, status, -1, SQLITE_STATIC);
  if (exit_code >= 0) sqlite3_bind_int(s, 3, exit_code);
  else sqlite3_bind_null(s, 3);
  bind_opt(s, 4, sig, 0);
  sqlite3_bind_int64(s, 5, n_dispatches);
  sqlite3_bind_int64(s, 6, wid);
  sqlite3_bind_int(s, 7, run);
  lm_status st = sqlite3_step(s) == SQLITE_DONE ? LM_OK : fail(db, diag);
  sqlite3_finalize(s);
  return st;
}

int lm_db_run_done(sqlite3 *db, int64_t wid, const char *mode, int pass) {
  sqlite3_stmt *s = NULL;
  int found = 0;
  if (sqlite3_prepare_v2(db, "SELECT COUNT(*) FROM profile_run WHERE workload_id = ? AND mode = ? AND "
                             "(pass = ? OR ? < 0) AND status = 'ok'", -1, &s, NULL) != SQLITE_OK)
    return 0;
  sqlite3_bind_int64(s, 1, wid);
  sqlite3_bind_text(s, 2, mode, -1, SQLITE_STATIC);
  sqlite3_bind_int(s, 3, pass);
  sqlite3_bind_int(s, 4, pass);
  if (sqlite3_step(s) == SQLITE_ROW) found = sqlite3_column_int(s, 0);
  sqlite3_finalize(s);
  return found;
}

int lm_db_next_run_id(sqlite3 *db, int64_t wid) {
  sqlite3_stmt *s = NULL;
  int id = 1;
  if (sqlite3_prepare_v2(db, "SELECT COALESCE(MAX(id), 0) + 1 FROM profile_run WHERE workload_id = ?", -1, &s,
                         NULL) != SQLITE_OK)
    return 1;
  sqlite3_bind_int64(s, 1, wid);
  if (sqlite3_step(s) == SQLITE_ROW) id = sqlite3_column_int(s, 0);
  sqlite3_finalize(s);
  return id;
}

lm_status lm_db_runs_interrupt(sqlite3 *db, int64_t wid, const char *finished, int *n_changed, lm_diag *diag) {
  *n_changed = 0;
  sqlite3_stmt *s = NULL;
  if (sqlite3_prepare_v2(db, "UPDATE profile_run SET status = 'interrupted', finished = ? WHERE "
                             "workload_id = ? AND status = 'running'", -1, &s, NULL) != SQLITE_OK)
    return fail(db, diag);
  sqlite3_bind_text(s, 1, finished, -1, SQLITE_STATIC);
  sqlite3_bind_int64(s, 2, wid);
  lm_status st = sqlite3_step(s) == SQLITE_DONE ? LM_OK : fail(db, diag);
  sqlite3_finalize(s);
  if (st == LM_OK) *n_changed = sqlite3_changes(db);
  return st;
}

lm_status lm_db_only_workload(sqlite3 *db, const char *path, int64_t *wid, int *complete, lm_diag *diag) {
  sqlite3_stmt *s = NULL;
  if (sqlite3_prepare_v2(db, "SELECT id, complete FROM workload ORDER BY id LIMIT 1", -1, &s, NULL) != SQLITE_OK)
    return fail(db, diag);
  lm_status st = LM_OK;
  if (sqlite3_step(s) == SQLITE_ROW) {
    *wid = sqlite3_column_int64(s, 0);
    *complete = sqlite3_column_int(s, 1);
  } else {
    st = lm_fail(diag, LM_ENOTFOUND, path, "holds no workload to resume");
  }
  sqlite3_finalize(s);
  return st;
}

/* ------------------------------------------------------- a run's records */

struct lm_db_records {
  sqlite3 *db;
  int64_t wid;
  int run;
  sqlite3_stmt *rec, *val, *clk, *pwr, *reg, *tel, *sys;
  int n_sys; /* S lines so far: their positions */
};

lm_status lm_db_records_open(sqlite3 *db, int64_t wid, int run, lm_db_records **out, lm_diag *diag) {
  *out = NULL;
  lm_db_records *r = lm_calloc(1, sizeof *r);
  if (!r) return lm_oom(diag, NULL);
  r->db = db;
  r->wid = wid;
  r->run = run;
  if (sqlite3_prepare_v2(db, "INSERT OR REPLACE INTO profile_record(workload_id, run_id, dispatch_id, "
                             "kernel, instance, selected, set_id, gpu_id, pid, tid, grid_size, "
                             "workgroup_size, lds_per_workgroup, scratch_per_workitem, arch_vgpr, "
                             "accum_vgpr, sgpr, start_ns, end_ns, regions, cycle_key, row_group) VALUES "
                             "(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)", -1, &r->rec, NULL) != SQLITE_OK ||
      sqlite3_prepare_v2(db, "INSERT OR REPLACE INTO profile_value(workload_id, run_id, dispatch_id, "
                             "column_name, value, pid) VALUES (?,?,?,?,?,?)", -1, &r->val, NULL) != SQLITE_OK ||
      sqlite3_prepare_v2(db, "INSERT INTO clock_sample(workload_id, run_id, gpu_id, t_ns, sclk_mhz, "
                             "mclk_mhz) VALUES (?,?,?,?,?,?)", -1, &r->clk, NULL) != SQLITE_OK ||
      sqlite3_prepare_v2(db, "INSERT INTO power_sample(workload_id, run_id, gpu_id, t_ns, power_w, temp_c) "
                             "VALUES (?,?,?,?,?,?)", -1, &r->pwr, NULL) != SQLITE_OK ||
      sqlite3_prepare_v2(db, "INSERT OR REPLACE INTO profile_region(workload_id, run_id, id, name) "
                             "VALUES (?,?,?,?)", -1, &r->reg, NULL) != SQLITE_OK ||
      sqlite3_prepare_v2(db, "INSERT OR REPLACE INTO profile_telemetry(workload_id, run_id, sampler, note) "
                             "VALUES (?,?,?,?)", -1, &r->tel, NULL) != SQLITE_OK ||
      sqlite3_prepare_v2(db, "INSERT OR REPLACE INTO profile_sysinfo(workload_id, run_id, pid, position, key, "
                             "value) VALUES (?,?,?,?,?,?)", -1, &r->sys, NULL) != SQLITE_OK) {
    lm_status st = fail(db, diag);
    lm_db_records_close(r);
    return st;
  }
  *out = r;
  return LM_OK;
}

void lm_db_records_close(lm_db_records *r) {
  if (!r) return;
  sqlite3_finalize(r->rec);
  sqlite3_finalize(r->val);
  sqlite3_finalize(r->clk);
  sqlite3_finalize(r->pwr);
  sqlite3_finalize(r->reg);
  sqlite3_finalize(r->tel);
  sqlite3_finalize(r->sys);
  lm_free(r);
}

/* step: run a prepared insert once and make it ready for the next. */
static lm_status step(lm_db_records *r, sqlite3_stmt *s, lm_diag *diag) {
  lm_status st = sqlite3_step(s) == SQLITE_DONE ? LM_OK : fail(r->db, diag);
  sqlite3_reset(s);
  return st;
}

lm_status lm_db_records_dispatch(lm_db_records *r, const lm_db_record *d, lm_diag *diag) {
  sqlite3_stmt *s = r->rec;
  sqlite3_bind_int64(s, 1, r->wid);
  sqlite3_bind_int(s, 2, r->run);
  sqlite3_bind_int64(s, 3, d->dispatch_id);
  sqlite3_bind_text(s, 4, d->kernel, -1, SQLITE_TRANSIENT);
  sqlite3_bind_int64(s, 5, d->instance);
  sqlite3_bind_int64(s, 6, d->selected);
  sqlite3_bind_int(s, 7, d->set);
  sqlite3_bind_int(s, 8, d->gpu);
  sqlite3_bind_int64(s, 9, d->pid);
  sqlite3_bind_int64(s, 10, d->tid);
  const int64_t sizes[7] = {d->grid, d->workgroup, d->lds, d->scratch, d->arch_vgpr, d->accum_vgpr, d->sgpr};
  for (int k = 0; k < 7; k++) sqlite3_bind_int64(s, 11 + k, sizes[k]);
  sqlite3_bind_double(s, 18, d->start_ns);
  sqlite3_bind_double(s, 19, d->end_ns);
  sqlite3_bind_text(s, 20, d->regions ? d->regions : "", -1, SQLITE_TRANSIENT);
  sqlite3_bind_text(s, 21, d->cycle_key ? d->cycle_key : "", -1, SQLITE_TRANSIENT);
  bind_opt(s, 22, d->row_group, -1);
  return step(r, s, diag);
}

lm_status lm_db_records_value(lm_db_records *r, int64_t dispatch_id, int64_t pid, const char *column,
                              double value, lm_diag *diag) {
  sqlite3_stmt *s = r->val;
  sqlite3_bind_int64(s, 1, r->wid);
  sqlite3_bind_int(s, 2, r->run);
  sqlite3_bind_int64(s, 3, dispatch_id);
  sqlite3_bind_text(s, 4, column, -1, SQLITE_TRANSIENT);
  if (value != value) sqlite3_bind_null(s, 5);
  else sqlite3_bind_double(s, 5, value);
  sqlite3_bind_int64(s, 6, pid);
  return step(r, s, diag);
}

lm_status lm_db_records_clock(lm_db_records *r, int gpu, double t_ns, double sclk_mhz, double mclk_mhz,
                              lm_diag *diag) {
  sqlite3_stmt *s = r->clk;
  sqlite3_bind_int64(s, 1, r->wid);
  sqlite3_bind_int(s, 2, r->run);
  sqlite3_bind_int(s, 3, gpu);
  sqlite3_bind_double(s, 4, t_ns);
  if (isnan(sclk_mhz)) sqlite3_bind_null(s, 5);
  else sqlite3_bind_double(s, 5, sclk_mhz);
  if (isnan(mclk_mhz)) sqlite3_bind_null(s, 6);
  else sqlite3_bind_double(s, 6, mclk_mhz);
  return step(r, s, diag);
}

lm_status lm_db_records_power(lm_db_records *r, int gpu, double t_ns, double power_w, double temp_c,
                              lm_diag *diag) {
  sqlite3_stmt *s = r->pwr;
  sqlite3_bind_int64(s, 1, r->wid);
  sqlite3_bind_int(s, 2, r->run);
  sqlite3_bind_int(s, 3, gpu);
  sqlite3_bind_double(s, 4, t_ns);
  if (isnan(power_w)) sqlite3_bind_null(s, 5);
  else sqlite3_bind_double(s, 5, power_w);
  if (isnan(temp_c)) sqlite3_bind_null(s, 6);
  else sqlite3_bind_double(s, 6, temp_c);
  return step(r, s, diag);
}

lm_status lm_db_records_region(lm_db_records *r, int id, const char *name, lm_diag *diag) {
  sqlite3_stmt *s = r->reg;
  sqlite3_bind_int64(s, 1, r->wid);
  sqlite3_bind_int(s, 2, r->run);
  sqlite3_bind_int(s, 3, id);
  sqlite3_bind_text(s, 4, name, -1, SQLITE_TRANSIENT);
  return step(r, s, diag);
}

lm_status lm_db_records_telemetry(lm_db_records *r, const char *sampler, const char *note, lm_diag *diag) {
  sqlite3_stmt *s = r->tel;
  sqlite3_bind_int64(s, 1, r->wid);
  sqlite3_bind_int(s, 2, r->run);
  sqlite3_bind_text(s, 3, sampler, -1, SQLITE_TRANSIENT);
  sqlite3_bind_text(s, 4, note, -1, SQLITE_TRANSIENT);
  return step(r, s, diag);
}

lm_status lm_db_records_sysinfo(lm_db_records *r, int64_t pid, const char *key, const char *value, lm_diag *diag) {
  sqlite3_stmt *s = r->sys;
  sqlite3_bind_int64(s, 1, r->wid);
  sqlite3_bind_int(s, 2, r->run);
  sqlite3_bind_int64(s, 3, pid);
  sqlite3_bind_int(s, 4, r->n_sys++);
  sqlite3_bind_text(s, 5, key, -1, SQLITE_TRANSIENT);
  sqlite3_bind_text(s, 6, value, -1, SQLITE_TRANSIENT);
  return step(r, s, diag);
}

/* ------------------------------------------------------------- processes */

lm_status lm_db_put_process(sqlite3 *db, int64_t wid, int run, const lm_db_process *p, lm_diag *diag) {
  sqlite3_stmt *s = NULL;
  if (sqlite3_prepare_v2(db, "INSERT OR REPLACE INTO profile_process(workload_id, run_id, pid, slot, host, "
                             "rank, size, local_rank, launcher, gpus, n_dispatches, finished, error) "
                             "VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)", -1, &s, NULL) != SQLITE_OK)
    return fail(db, diag);
  sqlite3_bind_int64(s, 1, wid);
  sqlite3_bind_int(s, 2, run);
  sqlite3_bind_int64(s, 3, p->pid);
  sqlite3_bind_int(s, 4, p->slot);
  sqlite3_bind_text(s, 5, p->host ? p->host : "", -1, SQLITE_STATIC);
  bind_opt(s, 6, p->rank, -1);
  bind_opt(s, 7, p->size, -1);
  bind_opt(s, 8, p->local_rank, -1);
  bind_text_or_null(s, 9, p->launcher);
  sqlite3_bind_text(s, 10, p->gpus ? p->gpus : "", -1, SQLITE_STATIC);
  sqlite3_bind_int64(s, 11, p->n_dispatches);
  sqlite3_bind_int(s, 12, p->finished);
  bind_text_or_null(s, 13, p->error);
  lm_status st = sqlite3_step(s) == SQLITE_DONE ? LM_OK : fail(db, diag);
  sqlite3_finalize(s);
  return st;
}

/* ------------------------------------------------------------------- log */

lm_status lm_db_add_log(sqlite3 *db, int64_t wid, int64_t t_ns, const char *level, const char *message,
                        lm_diag *diag) {
  sqlite3_stmt *s = NULL;
  if (sqlite3_prepare_v2(db, "INSERT INTO log(workload_id, seq, t_ns, level, message) SELECT ?, "
                             "COALESCE(MAX(seq), 0) + 1, ?, ?, ? FROM log WHERE workload_id = ?",
                         -1, &s, NULL) != SQLITE_OK)
    return fail(db, diag);
  sqlite3_bind_int64(s, 1, wid);
  sqlite3_bind_int64(s, 2, t_ns);
  sqlite3_bind_text(s, 3, level, -1, SQLITE_STATIC);
  sqlite3_bind_text(s, 4, message, -1, SQLITE_TRANSIENT);
  sqlite3_bind_int64(s, 5, wid);
  lm_status st = sqlite3_step(s) == SQLITE_DONE ? LM_OK : fail(db, diag);
  sqlite3_finalize(s);
  return st;
}

/* ---------------------------------------------------------- transactions */

lm_status lm_db_begin(sqlite3 *db, lm_diag *diag) { return lm_db_exec(db, "BEGIN IMMEDIATE", diag); }

lm_status lm_db_commit(sqlite3 *db, lm_diag *diag) { return lm_db_exec(db, "COMMIT", diag); }

void lm_db_rollback(sqlite3 *db) { lm_db_exec(db, "ROLLBACK", NULL); }

const char *lm_db_path(sqlite3 *db) { return sqlite3_db_filename(db, "main"); }

/* ------------------------------------------------------ editing the plan */

/* plan_edit: one statement over (wid, set, counter[, new_set]). */
static lm_status plan_edit(sqlite3 *db, const char *sql, int64_t wid, int set, const char *counter, int new_set,
                           lm_diag *diag) {
  sqlite3_stmt *s = NULL;
  if (sqlite3_prepare_v2(db, sql, -1, &s, NULL) != SQLITE_OK) return fail(db, diag);
  sqlite3_bind_int64(s, 1, wid);
  sqlite3_bind_int(s, 2, set);
  sqlite3_bind_text(s, 3, counter, -1, SQLITE_STATIC);
  if (new_set >= 0) sqlite3_bind_int(s, 4, new_set);
  lm_status st = sqlite3_step(s) == SQLITE_DONE ? LM_OK : fail(db, diag);
  sqlite3_finalize(s);
  return st;
}

lm_status lm_db_plan_drop(sqlite3 *db, int64_t wid, int set, const char *counter, lm_diag *diag) {
  return plan_edit(db, "DELETE FROM profile_set WHERE workload_id = ? AND set_id = ? AND counter = ?", wid, set,
                   counter, -1, diag);
}

lm_status lm_db_plan_move(sqlite3 *db, int64_t wid, int set, const char *counter, int new_set, lm_diag *diag) {
  return plan_edit(db, "UPDATE profile_set SET set_id = ?4, accumulate = NULL WHERE workload_id = ?1 AND "
                       "set_id = ?2 AND counter = ?3", wid, set, counter, new_set, diag);
}

lm_status lm_db_plan_copy(sqlite3 *db, int64_t wid, int set, const char *counter, int new_set, lm_diag *diag) {
  return plan_edit(db, "INSERT INTO profile_set(workload_id, set_id, position, counter, block, accumulate, why) "
                       "SELECT workload_id, ?4, position, counter, block, NULL, why FROM profile_set WHERE "
                       "workload_id = ?1 AND set_id = ?2 AND counter = ?3", wid, set, counter, new_set, diag);
}

lm_status lm_db_plan_n_sets(sqlite3 *db, int64_t wid, int *n_sets, lm_diag *diag) {
  *n_sets = 0;
  sqlite3_stmt *s = NULL;
  if (sqlite3_prepare_v2(db, "SELECT COUNT(DISTINCT set_id) FROM profile_set WHERE workload_id = ?", -1, &s, NULL) !=
      SQLITE_OK)
    return fail(db, diag);
  sqlite3_bind_int64(s, 1, wid);
  int rc = sqlite3_step(s);
  if (rc == SQLITE_ROW) *n_sets = sqlite3_column_int(s, 0);
  lm_status st = rc == SQLITE_ROW ? LM_OK : fail(db, diag);
  sqlite3_finalize(s);
  return st;
}

lm_status lm_db_plan_keep_sets(sqlite3 *db, int64_t wid, const int *keep, int n, lm_diag *diag) {
  sqlite3_stmt *del = NULL, *ren = NULL;
  lm_status st = LM_OK;
  /* Mark the kept sets (negative, so no renumbering collides), drop the
   * others, then give the kept ones their new numbers. */
  if (sqlite3_prepare_v2(db, "UPDATE profile_set SET set_id = -1 - ?3 WHERE workload_id = ?1 AND set_id = ?2", -1,
                         &ren, NULL) != SQLITE_OK ||
      sqlite3_prepare_v2(db, "DELETE FROM profile_set WHERE workload_id = ? AND set_id >= 0", -1, &del, NULL) !=
          SQLITE_OK) {
    st = fail(db, diag);
    goto done;
  }
  for (int k = 0; k < n && st == LM_OK; k++) {
    sqlite3_bind_int64(ren, 1, wid);
    sqlite3_bind_int(ren, 2, keep[k]);
    sqlite3_bind_int(ren, 3, k);
    if (sqlite3_step(ren) != SQLITE_DONE) st = fail(db, diag);
    sqlite3_reset(ren);
  }
  if (st == LM_OK) {
    sqlite3_bind_int64(del, 1, wid);
    if (sqlite3_step(del) != SQLITE_DONE) st = fail(db, diag);
  }
  if (st == LM_OK) {
    char sql[160];
    snprintf(sql, sizeof sql, "UPDATE profile_set SET set_id = -1 - set_id WHERE workload_id = %lld AND set_id < 0",
             (long long)wid);
    st = lm_db_exec(db, sql, diag);
  }
done:
  sqlite3_finalize(ren);
  sqlite3_finalize(del);
  return st;
}

/* ------------------------------------------------- a run's kernels seen */

int lm_db_run_n_selected(sqlite3 *db, int64_t wid, int64_t run) {
  sqlite3_stmt *s = NULL;
  int n = 0;
  if (sqlite3_prepare_v2(db, "SELECT COUNT(*) FROM profile_record WHERE workload_id = ? AND (run_id = ? OR ? < 0) "
                             "AND selected >= 0", -1, &s, NULL) == SQLITE_OK) {
    sqlite3_bind_int64(s, 1, wid);
    sqlite3_bind_int64(s, 2, run);
    sqlite3_bind_int64(s, 3, run);
    if (sqlite3_step(s) == SQLITE_ROW) n = sqlite3_column_int(s, 0);
  }
  sqlite3_finalize(s);
  return n;
}

int64_t lm_db_first_full_run(sqlite3 *db, int64_t wid) {
  sqlite3_stmt *s = NULL;
  int64_t run = 0;
  if (sqlite3_prepare_v2(db, "SELECT COALESCE(MIN(r.id), 0) FROM profile_run r WHERE r.workload_id = ? AND "
                             "r.status = 'ok' AND EXISTS (SELECT 1 FROM profile_record p WHERE p.workload_id = "
                             "r.workload_id AND p.run_id = r.id)", -1, &s, NULL) == SQLITE_OK) {
    sqlite3_bind_int64(s, 1, wid);
    if (sqlite3_step(s) == SQLITE_ROW) run = sqlite3_column_int64(s, 0);
  }
  sqlite3_finalize(s);
  return run;
}

lm_status lm_db_each_run_kernel(sqlite3 *db, int64_t wid, int64_t run, lm_db_kernel_fn fn, void *user,
                                lm_diag *diag) {
  sqlite3_stmt *s = NULL;
  if (sqlite3_prepare_v2(db, "SELECT kernel, COUNT(*) FROM profile_record WHERE workload_id = ? AND run_id = ? "
                             "GROUP BY kernel ORDER BY MIN(dispatch_id)", -1, &s, NULL) != SQLITE_OK)
    return fail(db, diag);
  sqlite3_bind_int64(s, 1, wid);
  sqlite3_bind_int64(s, 2, run);
  int rc, go = 1;
  while (go && (rc = sqlite3_step(s)) == SQLITE_ROW) {
    const char *k = (const char *)sqlite3_column_text(s, 0);
    go = fn(k ? k : "", sqlite3_column_int(s, 1), user) == 0;
  }
  lm_status st = !go || rc == SQLITE_DONE ? LM_OK : fail(db, diag);
  sqlite3_finalize(s);
  return st;
}

/* ------------------------------------------- system information (S lines) */

lm_status lm_db_sysinfo_source(sqlite3 *db, int64_t wid, int *found, int *run, int64_t *pid, char *host,
                               size_t host_cap, lm_diag *diag) {
  *found = 0;
  if (host_cap) host[0] = '\0';
  sqlite3_stmt *s = NULL;
  if (sqlite3_prepare_v2(db, "SELECT s.run_id, s.pid, p.host FROM profile_sysinfo s JOIN profile_run r ON "
                             "r.workload_id = s.workload_id AND r.id = s.run_id LEFT JOIN profile_process p "
                             "ON p.workload_id = s.workload_id AND p.run_id = s.run_id AND p.pid = s.pid "
                             "WHERE s.workload_id = ? AND r.status = 'ok' ORDER BY s.run_id, s.pid LIMIT 1",
                         -1, &s, NULL) != SQLITE_OK)
    return fail(db, diag);
  sqlite3_bind_int64(s, 1, wid);
  int rc = sqlite3_step(s);
  lm_status st = LM_OK;
  if (rc == SQLITE_ROW) {
    *found = 1;
    *run = sqlite3_column_int(s, 0);
    *pid = sqlite3_column_int64(s, 1);
    const char *h = (const char *)sqlite3_column_text(s, 2);
    if (host_cap) snprintf(host, host_cap, "%s", h ? h : "");
  } else if (rc != SQLITE_DONE) {
    st = fail(db, diag);
  }
  sqlite3_finalize(s);
  return st;
}

lm_status lm_db_sysinfo_count(sqlite3 *db, int64_t wid, int run, int64_t pid, size_t *n, lm_diag *diag) {
  *n = 0;
  sqlite3_stmt *s = NULL;
  if (sqlite3_prepare_v2(db, "SELECT COUNT(*) FROM profile_sysinfo WHERE workload_id = ? AND run_id = ? AND "
                             "pid = ?", -1, &s, NULL) != SQLITE_OK)
    return fail(db, diag);
  sqlite3_bind_int64(s, 1, wid);
  sqlite3_bind_int(s, 2, run);
  sqlite3_bind_int64(s, 3, pid);
  lm_status st = LM_OK;
  if (sqlite3_step(s) == SQLITE_ROW) *n = (size_t)sqlite3_column_int64(s, 0);
  else st = fail(db, diag);
  sqlite3_finalize(s);
  return st;
}

lm_status lm_db_each_sysinfo(sqlite3 *db, int64_t wid, int run, int64_t pid, lm_db_sysinfo_fn fn, void *user,
                             lm_diag *diag) {
  sqlite3_stmt *s = NULL;
  if (sqlite3_prepare_v2(db, "SELECT key, value FROM profile_sysinfo WHERE workload_id = ? AND run_id = ? AND "
                             "pid = ? ORDER BY position", -1, &s, NULL) != SQLITE_OK)
    return fail(db, diag);
  sqlite3_bind_int64(s, 1, wid);
  sqlite3_bind_int(s, 2, run);
  sqlite3_bind_int64(s, 3, pid);
  int rc;
  lm_status st = LM_OK;
  while (st == LM_OK && (rc = sqlite3_step(s)) == SQLITE_ROW)
    st = fn((const char *)sqlite3_column_text(s, 0), (const char *)sqlite3_column_text(s, 1), user, diag);
  if (st == LM_OK && rc != SQLITE_DONE) st = fail(db, diag);
  sqlite3_finalize(s);
  return st;
}
