/*
 * runs.c - the bookkeeping tables of a profile in a lumen workload
 * database (docs/workload-format.md): the options and counter sets it was
 * started with, its runs, the dispatch records, values, regions and clock
 * samples its tool library wrote, the processes of each run, and the log.
 *
 * `lumen profile` decides what to write (src/collect/record.c); the SQL is
 * here, one function per statement it needs, through lm_sql over the
 * workload's own file (profiles are always SQLite: the store copies them
 * elsewhere). Writers of many rows (a run's records) keep their
 * statements prepared for the run (lm_db_records).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db/db.h"

/* once: run s, a statement without rows, to its end; free it. */
static lm_status once(lm_stmt *s, lm_diag *diag) {
  lm_status st = lm_stmt_step(s) == 0 ? LM_OK : lm_stmt_fail(s, diag);
  lm_stmt_free(s);
  return st;
}

lm_status lm_db_exec(lm_sql *db, const char *sql, lm_diag *diag) { return lm_sql_exec(db, sql, 0, diag); }

/* bind_opt: an integer, or NULL where it is `none`. */
static void bind_opt(lm_stmt *s, int i, int64_t v, int64_t none) {
  if (v == none) lm_stmt_bind_null(s, i);
  else lm_stmt_bind_int64(s, i, v);
}

static void bind_text_or_null(lm_stmt *s, int i, const char *v) { lm_stmt_bind_text(s, i, v && *v ? v : NULL); }

/* --------------------------------------------------------------- options */

lm_status lm_db_put_option(lm_sql *db, int64_t wid, const char *key, int pos, const char *value, lm_diag *diag) {
  lm_stmt *s = NULL;
  lm_status st = lm_sql_prepare(db, "INSERT OR REPLACE INTO profile_option(workload_id, key, position, value) "
                                    "VALUES (?,?,?,?)", &s, diag);
  if (st != LM_OK) return st;
  lm_stmt_bind_int64(s, 1, wid);
  lm_stmt_bind_text(s, 2, key);
  lm_stmt_bind_int64(s, 3, pos);
  lm_stmt_bind_text(s, 4, value ? value : "");
  return once(s, diag);
}

lm_status lm_db_each_option(lm_sql *db, int64_t wid, lm_db_option_fn fn, void *user, lm_diag *diag) {
  lm_stmt *s = NULL;
  lm_status st = lm_sql_prepare(db, "SELECT key, value FROM profile_option WHERE workload_id = ? "
                                    "ORDER BY key, position", &s, diag);
  if (st != LM_OK) return st;
  lm_stmt_bind_int64(s, 1, wid);
  int rc, go = 1;
  while (go && (rc = lm_stmt_step(s)) == 1) go = fn(lm_stmt_text(s, 0), lm_stmt_text(s, 1), user) == 0;
  st = !go || rc == 0 ? LM_OK : lm_stmt_fail(s, diag);
  lm_stmt_free(s);
  return st;
}

/* ------------------------------------------------------------- the plan */

lm_status lm_db_put_plan(lm_sql *db, int64_t wid, const lm_db_plan_row *rows, size_t n, lm_diag *diag) {
  lm_stmt *s = NULL;
  lm_status st = lm_sql_prepare(db, "INSERT INTO profile_set(workload_id, set_id, position, counter, "
                                    "block, accumulate, why) VALUES (?,?,?,?,?,?,?)", &s, diag);
  if (st != LM_OK) return st;
  for (size_t i = 0; i < n && st == LM_OK; i++) {
    const lm_db_plan_row *r = &rows[i];
    lm_stmt_bind_int64(s, 1, wid);
    lm_stmt_bind_int64(s, 2, r->set);
    lm_stmt_bind_int64(s, 3, r->position);
    lm_stmt_bind_text(s, 4, r->counter);
    lm_stmt_bind_text(s, 5, r->block);
    lm_stmt_bind_text(s, 6, r->accumulate);
    lm_stmt_bind_text(s, 7, r->why);
    if (lm_stmt_step(s) != 0) st = lm_stmt_fail(s, diag);
    lm_stmt_reset(s);
  }
  lm_stmt_free(s);
  return st;
}

lm_status lm_db_each_plan_counter(lm_sql *db, int64_t wid, lm_db_plan_fn fn, void *user, lm_diag *diag) {
  lm_stmt *s = NULL;
  lm_status st = lm_sql_prepare(db, "SELECT set_id, counter, accumulate FROM profile_set WHERE workload_id = ? "
                                    "ORDER BY set_id, position", &s, diag);
  if (st != LM_OK) return st;
  lm_stmt_bind_int64(s, 1, wid);
  int rc;
  while (st == LM_OK && (rc = lm_stmt_step(s)) == 1) {
    const char *acc = lm_stmt_is_null(s, 2) ? NULL : lm_stmt_text(s, 2);
    st = fn((int)lm_stmt_int64(s, 0), lm_stmt_text(s, 1), acc, user, diag);
  }
  if (st == LM_OK && rc != 0) st = lm_stmt_fail(s, diag);
  lm_stmt_free(s);
  return st;
}

/* ------------------------------------------------------------------ runs */

lm_status lm_db_run_begin(lm_sql *db, int64_t wid, int run, const char *mode, int pass, const char *started,
                          lm_diag *diag) {
  lm_stmt *s = NULL;
  lm_status st = lm_sql_prepare(db, "INSERT OR REPLACE INTO profile_run(workload_id, id, mode, pass, "
                                    "started, status) VALUES (?,?,?,?,?, 'running')", &s, diag);
  if (st != LM_OK) return st;
  lm_stmt_bind_int64(s, 1, wid);
  lm_stmt_bind_int64(s, 2, run);
  lm_stmt_bind_text(s, 3, mode);
  bind_opt(s, 4, pass, -1);
  lm_stmt_bind_text(s, 5, started);
  return once(s, diag);
}

void lm_db_run_forget(lm_sql *db, int64_t wid, int run) {
  lm_stmt *s = NULL;
  if (lm_sql_prepare(db, "DELETE FROM profile_run WHERE workload_id = ? AND id = ?", &s, NULL) != LM_OK) return;
  lm_stmt_bind_int64(s, 1, wid);
  lm_stmt_bind_int64(s, 2, run);
  once(s, NULL);
}

lm_status lm_db_run_finish(lm_sql *db, int64_t wid, int run, const char *finished, const char *status,
                           int exit_code, int sig, long n_dispatches, lm_diag *diag) {
  lm_stmt *s = NULL;
  lm_status st = lm_sql_prepare(db, "UPDATE profile_run SET finished = ?, status = ?, exit_code = ?, "
                                    "signal = ?, n_dispatches = ? WHERE workload_id = ? AND id = ?", &s, diag);
  if (st != LM_OK) return st;
  lm_stmt_bind_text(s, 1, finished);
  lm_stmt_bind_text(s, 2, status);
  bind_opt(s, 3, exit_code < 0 ? -1 : exit_code, -1);
  bind_opt(s, 4, sig, 0);
  lm_stmt_bind_int64(s, 5, n_dispatches);
  lm_stmt_bind_int64(s, 6, wid);
  lm_stmt_bind_int64(s, 7, run);
  return once(s, diag);
}

/* count: the integer a one-row query of (wid, ...) gives; `none` when it
 * cannot be prepared or gives no row. */
static int64_t count(lm_stmt *s, int64_t none) {
  int64_t n = lm_stmt_step(s) == 1 ? lm_stmt_int64(s, 0) : none;
  lm_stmt_free(s);
  return n;
}

int lm_db_run_done(lm_sql *db, int64_t wid, const char *mode, int pass) {
  lm_stmt *s = NULL;
  if (lm_sql_prepare(db, "SELECT COUNT(*) FROM profile_run WHERE workload_id = ? AND mode = ? AND "
                         "(pass = ? OR ? < 0) AND status = 'ok'", &s, NULL) != LM_OK)
    return 0;
  lm_stmt_bind_int64(s, 1, wid);
  lm_stmt_bind_text(s, 2, mode);
  lm_stmt_bind_int64(s, 3, pass);
  lm_stmt_bind_int64(s, 4, pass);
  return (int)count(s, 0);
}

int lm_db_next_run_id(lm_sql *db, int64_t wid) {
  lm_stmt *s = NULL;
  if (lm_sql_prepare(db, "SELECT COALESCE(MAX(id), 0) + 1 FROM profile_run WHERE workload_id = ?", &s, NULL) !=
      LM_OK)
    return 1;
  lm_stmt_bind_int64(s, 1, wid);
  return (int)count(s, 1);
}

lm_status lm_db_runs_interrupt(lm_sql *db, int64_t wid, const char *finished, int *n_changed, lm_diag *diag) {
  *n_changed = 0;
  lm_stmt *s = NULL;
  lm_status st = lm_sql_prepare(db, "UPDATE profile_run SET status = 'interrupted', finished = ? WHERE "
                                    "workload_id = ? AND status = 'running'", &s, diag);
  if (st != LM_OK) return st;
  lm_stmt_bind_text(s, 1, finished);
  lm_stmt_bind_int64(s, 2, wid);
  st = lm_stmt_step(s) == 0 ? LM_OK : lm_stmt_fail(s, diag);
  if (st == LM_OK) *n_changed = (int)lm_stmt_changes(s);
  lm_stmt_free(s);
  return st;
}

lm_status lm_db_only_workload(lm_sql *db, const char *path, int64_t *wid, int *complete, lm_diag *diag) {
  lm_stmt *s = NULL;
  lm_status st = lm_sql_prepare(db, "SELECT id, complete FROM workload ORDER BY id LIMIT 1", &s, diag);
  if (st != LM_OK) return st;
  if (lm_stmt_step(s) == 1) {
    *wid = lm_stmt_int64(s, 0);
    *complete = (int)lm_stmt_int64(s, 1);
  } else {
    st = lm_fail(diag, LM_ENOTFOUND, path, "holds no workload to resume");
  }
  lm_stmt_free(s);
  return st;
}

/* ------------------------------------------------------- a run's records */

struct lm_db_records {
  int64_t wid;
  int run;
  lm_stmt *rec, *val, *clk, *pwr, *reg, *tel, *sys;
  int n_sys; /* S lines so far: their positions */
};

lm_status lm_db_records_open(lm_sql *db, int64_t wid, int run, lm_db_records **out, lm_diag *diag) {
  *out = NULL;
  lm_db_records *r = lm_calloc(1, sizeof *r);
  if (!r) return lm_oom(diag, NULL);
  r->wid = wid;
  r->run = run;
  lm_status st;
  if ((st = lm_sql_prepare(db, "INSERT OR REPLACE INTO profile_record(workload_id, run_id, dispatch_id, "
                               "kernel, instance, selected, set_id, gpu_id, pid, tid, grid_size, "
                               "workgroup_size, lds_per_workgroup, scratch_per_workitem, arch_vgpr, "
                               "accum_vgpr, sgpr, start_ns, end_ns, regions, cycle_key, row_group) VALUES "
                               "(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)", &r->rec, diag)) != LM_OK ||
      (st = lm_sql_prepare(db, "INSERT OR REPLACE INTO profile_value(workload_id, run_id, dispatch_id, "
                               "column_name, value, pid) VALUES (?,?,?,?,?,?)", &r->val, diag)) != LM_OK ||
      (st = lm_sql_prepare(db, "INSERT INTO clock_sample(workload_id, run_id, gpu_id, t_ns, sclk_mhz, "
                               "mclk_mhz) VALUES (?,?,?,?,?,?)", &r->clk, diag)) != LM_OK ||
      (st = lm_sql_prepare(db, "INSERT INTO power_sample(workload_id, run_id, gpu_id, t_ns, power_w, temp_c) "
                               "VALUES (?,?,?,?,?,?)", &r->pwr, diag)) != LM_OK ||
      (st = lm_sql_prepare(db, "INSERT OR REPLACE INTO profile_region(workload_id, run_id, id, name) "
                               "VALUES (?,?,?,?)", &r->reg, diag)) != LM_OK ||
      (st = lm_sql_prepare(db, "INSERT OR REPLACE INTO profile_telemetry(workload_id, run_id, sampler, note) "
                               "VALUES (?,?,?,?)", &r->tel, diag)) != LM_OK ||
      (st = lm_sql_prepare(db, "INSERT OR REPLACE INTO profile_sysinfo(workload_id, run_id, pid, position, key, "
                               "value) VALUES (?,?,?,?,?,?)", &r->sys, diag)) != LM_OK) {
    lm_db_records_close(r);
    return st;
  }
  *out = r;
  return LM_OK;
}

void lm_db_records_close(lm_db_records *r) {
  if (!r) return;
  lm_stmt_free(r->rec);
  lm_stmt_free(r->val);
  lm_stmt_free(r->clk);
  lm_stmt_free(r->pwr);
  lm_stmt_free(r->reg);
  lm_stmt_free(r->tel);
  lm_stmt_free(r->sys);
  lm_free(r);
}

/* step: run a prepared insert once and make it ready for the next. */
static lm_status step(lm_stmt *s, lm_diag *diag) {
  lm_status st = lm_stmt_step(s) == 0 ? LM_OK : lm_stmt_fail(s, diag);
  lm_stmt_reset(s);
  return st;
}

/* bind_run: the workload and run, the first two parameters of each insert. */
static lm_stmt *bind_run(lm_db_records *r, lm_stmt *s) {
  lm_stmt_bind_int64(s, 1, r->wid);
  lm_stmt_bind_int64(s, 2, r->run);
  return s;
}

lm_status lm_db_records_dispatch(lm_db_records *r, const lm_db_record *d, lm_diag *diag) {
  lm_stmt *s = bind_run(r, r->rec);
  lm_stmt_bind_int64(s, 3, d->dispatch_id);
  lm_stmt_bind_text(s, 4, d->kernel);
  lm_stmt_bind_int64(s, 5, d->instance);
  lm_stmt_bind_int64(s, 6, d->selected);
  lm_stmt_bind_int64(s, 7, d->set);
  lm_stmt_bind_int64(s, 8, d->gpu);
  lm_stmt_bind_int64(s, 9, d->pid);
  lm_stmt_bind_int64(s, 10, d->tid);
  const int64_t sizes[7] = {d->grid, d->workgroup, d->lds, d->scratch, d->arch_vgpr, d->accum_vgpr, d->sgpr};
  for (int k = 0; k < 7; k++) lm_stmt_bind_int64(s, 11 + k, sizes[k]);
  lm_stmt_bind_double(s, 18, d->start_ns);
  lm_stmt_bind_double(s, 19, d->end_ns);
  lm_stmt_bind_text(s, 20, d->regions ? d->regions : "");
  lm_stmt_bind_text(s, 21, d->cycle_key ? d->cycle_key : "");
  bind_opt(s, 22, d->row_group, -1);
  return step(s, diag);
}

lm_status lm_db_records_value(lm_db_records *r, int64_t dispatch_id, int64_t pid, const char *column,
                              double value, lm_diag *diag) {
  lm_stmt *s = bind_run(r, r->val);
  lm_stmt_bind_int64(s, 3, dispatch_id);
  lm_stmt_bind_text(s, 4, column);
  lm_stmt_bind_double(s, 5, value); /* NaN binds NULL */
  lm_stmt_bind_int64(s, 6, pid);
  return step(s, diag);
}

/* sample: a clock or power sample (two readings, NaN stored as NULL). */
static lm_status sample(lm_db_records *r, lm_stmt *s, int gpu, double t_ns, double a, double b, lm_diag *diag) {
  bind_run(r, s);
  lm_stmt_bind_int64(s, 3, gpu);
  lm_stmt_bind_double(s, 4, t_ns);
  lm_stmt_bind_double(s, 5, a);
  lm_stmt_bind_double(s, 6, b);
  return step(s, diag);
}

lm_status lm_db_records_clock(lm_db_records *r, int gpu, double t_ns, double sclk_mhz, double mclk_mhz,
                              lm_diag *diag) {
  return sample(r, r->clk, gpu, t_ns, sclk_mhz, mclk_mhz, diag);
}

lm_status lm_db_records_power(lm_db_records *r, int gpu, double t_ns, double power_w, double temp_c,
                              lm_diag *diag) {
  return sample(r, r->pwr, gpu, t_ns, power_w, temp_c, diag);
}

lm_status lm_db_records_region(lm_db_records *r, int id, const char *name, lm_diag *diag) {
  lm_stmt *s = bind_run(r, r->reg);
  lm_stmt_bind_int64(s, 3, id);
  lm_stmt_bind_text(s, 4, name);
  return step(s, diag);
}

lm_status lm_db_records_telemetry(lm_db_records *r, const char *sampler, const char *note, lm_diag *diag) {
  lm_stmt *s = bind_run(r, r->tel);
  lm_stmt_bind_text(s, 3, sampler);
  lm_stmt_bind_text(s, 4, note);
  return step(s, diag);
}

lm_status lm_db_records_sysinfo(lm_db_records *r, int64_t pid, const char *key, const char *value, lm_diag *diag) {
  lm_stmt *s = bind_run(r, r->sys);
  lm_stmt_bind_int64(s, 3, pid);
  lm_stmt_bind_int64(s, 4, r->n_sys++);
  lm_stmt_bind_text(s, 5, key);
  lm_stmt_bind_text(s, 6, value);
  return step(s, diag);
}

/* ------------------------------------------------------------- processes */

lm_status lm_db_put_process(lm_sql *db, int64_t wid, int run, const lm_db_process *p, lm_diag *diag) {
  lm_stmt *s = NULL;
  lm_status st = lm_sql_prepare(db, "INSERT OR REPLACE INTO profile_process(workload_id, run_id, pid, slot, host, "
                                    "rank, size, local_rank, launcher, gpus, n_dispatches, finished, error) "
                                    "VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)", &s, diag);
  if (st != LM_OK) return st;
  lm_stmt_bind_int64(s, 1, wid);
  lm_stmt_bind_int64(s, 2, run);
  lm_stmt_bind_int64(s, 3, p->pid);
  lm_stmt_bind_int64(s, 4, p->slot);
  lm_stmt_bind_text(s, 5, p->host ? p->host : "");
  bind_opt(s, 6, p->rank, -1);
  bind_opt(s, 7, p->size, -1);
  bind_opt(s, 8, p->local_rank, -1);
  bind_text_or_null(s, 9, p->launcher);
  lm_stmt_bind_text(s, 10, p->gpus ? p->gpus : "");
  lm_stmt_bind_int64(s, 11, p->n_dispatches);
  lm_stmt_bind_int64(s, 12, p->finished);
  bind_text_or_null(s, 13, p->error);
  return once(s, diag);
}

/* ------------------------------------------------------------------- log */

lm_status lm_db_add_log(lm_sql *db, int64_t wid, int64_t t_ns, const char *level, const char *message,
                        lm_diag *diag) {
  lm_stmt *s = NULL;
  lm_status st = lm_sql_prepare(db, "INSERT INTO log(workload_id, seq, t_ns, level, message) SELECT ?, "
                                    "COALESCE(MAX(seq), 0) + 1, ?, ?, ? FROM log WHERE workload_id = ?", &s, diag);
  if (st != LM_OK) return st;
  lm_stmt_bind_int64(s, 1, wid);
  lm_stmt_bind_int64(s, 2, t_ns);
  lm_stmt_bind_text(s, 3, level);
  lm_stmt_bind_text(s, 4, message);
  lm_stmt_bind_int64(s, 5, wid);
  return once(s, diag);
}

/* ---------------------------------------------------------- transactions */

lm_status lm_db_begin(lm_sql *db, lm_diag *diag) { return lm_sql_begin(db, diag); }

lm_status lm_db_commit(lm_sql *db, lm_diag *diag) { return lm_sql_commit(db, diag); }

void lm_db_rollback(lm_sql *db) { lm_sql_rollback(db); }

const char *lm_db_path(lm_sql *db) { return lm_sql_where(db); }

/* ------------------------------------------------------ editing the plan */

/* plan_edit: one statement over (wid, set, counter[, new_set]). */
static lm_status plan_edit(lm_sql *db, const char *sql, int64_t wid, int set, const char *counter, int new_set,
                           lm_diag *diag) {
  lm_stmt *s = NULL;
  lm_status st = lm_sql_prepare(db, sql, &s, diag);
  if (st != LM_OK) return st;
  lm_stmt_bind_int64(s, 1, wid);
  lm_stmt_bind_int64(s, 2, set);
  lm_stmt_bind_text(s, 3, counter);
  if (new_set >= 0) lm_stmt_bind_int64(s, 4, new_set);
  return once(s, diag);
}

lm_status lm_db_plan_drop(lm_sql *db, int64_t wid, int set, const char *counter, lm_diag *diag) {
  return plan_edit(db, "DELETE FROM profile_set WHERE workload_id = ? AND set_id = ? AND counter = ?", wid, set,
                   counter, -1, diag);
}

lm_status lm_db_plan_move(lm_sql *db, int64_t wid, int set, const char *counter, int new_set, lm_diag *diag) {
  return plan_edit(db, "UPDATE profile_set SET set_id = ?4, accumulate = NULL WHERE workload_id = ?1 AND "
                       "set_id = ?2 AND counter = ?3", wid, set, counter, new_set, diag);
}

lm_status lm_db_plan_copy(lm_sql *db, int64_t wid, int set, const char *counter, int new_set, lm_diag *diag) {
  return plan_edit(db, "INSERT INTO profile_set(workload_id, set_id, position, counter, block, accumulate, why) "
                       "SELECT workload_id, ?4, position, counter, block, NULL, why FROM profile_set WHERE "
                       "workload_id = ?1 AND set_id = ?2 AND counter = ?3", wid, set, counter, new_set, diag);
}

lm_status lm_db_plan_n_sets(lm_sql *db, int64_t wid, int *n_sets, lm_diag *diag) {
  *n_sets = 0;
  lm_stmt *s = NULL;
  lm_status st = lm_sql_prepare(db, "SELECT COUNT(DISTINCT set_id) FROM profile_set WHERE workload_id = ?", &s, diag);
  if (st != LM_OK) return st;
  lm_stmt_bind_int64(s, 1, wid);
  if (lm_stmt_step(s) == 1) *n_sets = (int)lm_stmt_int64(s, 0);
  else st = lm_stmt_fail(s, diag);
  lm_stmt_free(s);
  return st;
}

lm_status lm_db_plan_keep_sets(lm_sql *db, int64_t wid, const int *keep, int n, lm_diag *diag) {
  lm_stmt *del = NULL, *ren = NULL;
  /* Mark the kept sets (negative, so no renumbering collides), drop the
   * others, then give the kept ones their new numbers. */
  lm_status st =
      lm_sql_prepare(db, "UPDATE profile_set SET set_id = -1 - ?3 WHERE workload_id = ?1 AND set_id = ?2", &ren, diag);
  if (st == LM_OK)
    st = lm_sql_prepare(db, "DELETE FROM profile_set WHERE workload_id = ? AND set_id >= 0", &del, diag);
  for (int k = 0; k < n && st == LM_OK; k++) {
    lm_stmt_bind_int64(ren, 1, wid);
    lm_stmt_bind_int64(ren, 2, keep[k]);
    lm_stmt_bind_int64(ren, 3, k);
    st = step(ren, diag);
  }
  if (st == LM_OK) {
    lm_stmt_bind_int64(del, 1, wid);
    if (lm_stmt_step(del) != 0) st = lm_stmt_fail(del, diag);
  }
  if (st == LM_OK) {
    char sql[160];
    snprintf(sql, sizeof sql, "UPDATE profile_set SET set_id = -1 - set_id WHERE workload_id = %lld AND set_id < 0",
             (long long)wid);
    st = lm_db_exec(db, sql, diag);
  }
  lm_stmt_free(ren);
  lm_stmt_free(del);
  return st;
}

/* ------------------------------------------------- a run's kernels seen */

int lm_db_run_n_selected(lm_sql *db, int64_t wid, int64_t run) {
  lm_stmt *s = NULL;
  if (lm_sql_prepare(db, "SELECT COUNT(*) FROM profile_record WHERE workload_id = ? AND (run_id = ? OR ? < 0) "
                         "AND selected >= 0", &s, NULL) != LM_OK)
    return 0;
  lm_stmt_bind_int64(s, 1, wid);
  lm_stmt_bind_int64(s, 2, run);
  lm_stmt_bind_int64(s, 3, run);
  return (int)count(s, 0);
}

int64_t lm_db_first_full_run(lm_sql *db, int64_t wid) {
  lm_stmt *s = NULL;
  if (lm_sql_prepare(db, "SELECT COALESCE(MIN(r.id), 0) FROM profile_run r WHERE r.workload_id = ? AND "
                         "r.status = 'ok' AND EXISTS (SELECT 1 FROM profile_record p WHERE p.workload_id = "
                         "r.workload_id AND p.run_id = r.id)", &s, NULL) != LM_OK)
    return 0;
  lm_stmt_bind_int64(s, 1, wid);
  return count(s, 0);
}

lm_status lm_db_each_run_kernel(lm_sql *db, int64_t wid, int64_t run, lm_db_kernel_fn fn, void *user,
                                lm_diag *diag) {
  lm_stmt *s = NULL;
  lm_status st = lm_sql_prepare(db, "SELECT kernel, COUNT(*) FROM profile_record WHERE workload_id = ? AND "
                                    "run_id = ? GROUP BY kernel ORDER BY MIN(dispatch_id)", &s, diag);
  if (st != LM_OK) return st;
  lm_stmt_bind_int64(s, 1, wid);
  lm_stmt_bind_int64(s, 2, run);
  int rc, go = 1;
  while (go && (rc = lm_stmt_step(s)) == 1) go = fn(lm_stmt_text(s, 0), (int)lm_stmt_int64(s, 1), user) == 0;
  st = !go || rc == 0 ? LM_OK : lm_stmt_fail(s, diag);
  lm_stmt_free(s);
  return st;
}

/* ------------------------------------------- system information (S lines) */

lm_status lm_db_sysinfo_source(lm_sql *db, int64_t wid, int *found, int *run, int64_t *pid, char *host,
                               size_t host_cap, lm_diag *diag) {
  *found = 0;
  if (host_cap) host[0] = '\0';
  lm_stmt *s = NULL;
  lm_status st = lm_sql_prepare(db, "SELECT s.run_id, s.pid, p.host FROM profile_sysinfo s JOIN profile_run r ON "
                                    "r.workload_id = s.workload_id AND r.id = s.run_id LEFT JOIN profile_process p "
                                    "ON p.workload_id = s.workload_id AND p.run_id = s.run_id AND p.pid = s.pid "
                                    "WHERE s.workload_id = ? AND r.status = 'ok' ORDER BY s.run_id, s.pid LIMIT 1",
                                &s, diag);
  if (st != LM_OK) return st;
  lm_stmt_bind_int64(s, 1, wid);
  int rc = lm_stmt_step(s);
  if (rc == 1) {
    *found = 1;
    *run = (int)lm_stmt_int64(s, 0);
    *pid = lm_stmt_int64(s, 1);
    if (host_cap) snprintf(host, host_cap, "%s", lm_stmt_text(s, 2));
  } else if (rc != 0) {
    st = lm_stmt_fail(s, diag);
  }
  lm_stmt_free(s);
  return st;
}

lm_status lm_db_sysinfo_count(lm_sql *db, int64_t wid, int run, int64_t pid, size_t *n, lm_diag *diag) {
  *n = 0;
  lm_stmt *s = NULL;
  lm_status st = lm_sql_prepare(db, "SELECT COUNT(*) FROM profile_sysinfo WHERE workload_id = ? AND run_id = ? AND "
                                    "pid = ?", &s, diag);
  if (st != LM_OK) return st;
  lm_stmt_bind_int64(s, 1, wid);
  lm_stmt_bind_int64(s, 2, run);
  lm_stmt_bind_int64(s, 3, pid);
  if (lm_stmt_step(s) == 1) *n = (size_t)lm_stmt_int64(s, 0);
  else st = lm_stmt_fail(s, diag);
  lm_stmt_free(s);
  return st;
}

lm_status lm_db_each_sysinfo(lm_sql *db, int64_t wid, int run, int64_t pid, lm_db_sysinfo_fn fn, void *user,
                             lm_diag *diag) {
  lm_stmt *s = NULL;
  lm_status st = lm_sql_prepare(db, "SELECT key, value FROM profile_sysinfo WHERE workload_id = ? AND run_id = ? "
                                    "AND pid = ? ORDER BY position", &s, diag);
  if (st != LM_OK) return st;
  lm_stmt_bind_int64(s, 1, wid);
  lm_stmt_bind_int64(s, 2, run);
  lm_stmt_bind_int64(s, 3, pid);
  int rc;
  while (st == LM_OK && (rc = lm_stmt_step(s)) == 1) st = fn(lm_stmt_text(s, 0), lm_stmt_text(s, 1), user, diag);
  if (st == LM_OK && rc != 0) st = lm_stmt_fail(s, diag);
  lm_stmt_free(s);
  return st;
}
