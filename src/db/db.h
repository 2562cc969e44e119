/*
 * db.h - lumen's workload database (SQLite, or PostgreSQL for a team
 * store): its schema, the writes and reads of workloads and their
 * counter columns, provenance and rank parts, and the bookkeeping tables
 * `lumen profile` keeps while it collects and composes. The layout is in
 * docs/workload-format.md.
 */
#ifndef LUMEN_DB_H
#define LUMEN_DB_H

#include <stddef.h>
#include <stdint.h>

#include "base/base.h"
#include "model/model.h"
#include "sql/sql.h"

/* A lumen workload folder holds its data in this file. */
#define LM_WORKLOAD_DB "lumen.db"

/* The most dispatches a workload in a lumen database may claim; a larger
 * or negative count is a corrupt database. */
#define LM_DB_MAX_DISPATCHES ((int64_t)1 << 32)

/* lm_db_open: open a lumen database read-only (LM_DB_READ), for writing
 * (LM_DB_WRITE), or creating it and its schema if needed (LM_DB_CREATE).
 * Refuses files of another format or schema version. Once open, messages
 * name an SQLite file by its absolute path (lm_sql_name_by_file).
 * lm_db_close: close it (NULL: no-op). */
lm_status lm_db_open(const char *path, int mode, lm_sql **out, lm_diag *diag);
void lm_db_close(lm_sql *db);

/* lm_db_schema: create the schema (create set) and check the database is
 * lumen's, of this schema version. Works on SQLite and PostgreSQL. */
lm_status lm_db_schema(lm_sql *sql, int create, lm_diag *diag);

/* lm_db_write_workload: add a loaded workload under `name` in one
 * transaction (nothing is written if it fails). team and origin may be
 * NULL. *id_out (may be NULL) receives its id. */
lm_status lm_db_write_workload(lm_sql *sql, const lm_workload *w, const char *name, const char *team,
                               const char *origin, int64_t *id_out, lm_diag *diag);

/* lm_db_create_workload: the workload's row only (complete = 0 while a
 * profile is still collecting); *id_out receives its id. */
lm_status lm_db_create_workload(lm_sql *sql, const char *name, const char *team, const char *source,
                                const char *origin, const char *arch, const char *gpu_model,
                                size_t n_dispatches, int complete, int64_t *id_out, lm_diag *diag);

/* How lm_db_write_tables and lm_db_put_columns write the counter columns.
 * Deferred columns (lm_workload_options.defer) are read back from their
 * files in groups of at most group_bytes of values (0: LM_DB_GROUP_BYTES),
 * so no more than one group is held at once. */
#define LM_DB_GROUP_BYTES ((size_t)256 << 20)
typedef struct lm_db_write_opts {
  size_t group_bytes;
  /* pmc columns visited first, in this order, each given to seen (with
   * its values) before it is written; every other column follows in table
   * order. The dispatch columns, which are not written as counter
   * columns, may be listed too. n_first 0: none. */
  const size_t *first;
  size_t n_first;
  lm_column_fn seen;
  void *seen_ctx;
} lm_db_write_opts;

/* lm_db_write_tables: system info, kernels, dispatches, regions and
 * counter columns of w under workload id wid, with its provenance and,
 * for merged rank.R parts, every part's system information
 * (lm_db_write_ranks), inside the caller's transaction, with options o
 * (NULL: the defaults). w may hold deferred columns; the dispatch columns
 * are loaded (lm_table_load) when they are deferred. */
lm_status lm_db_write_tables(lm_sql *sql, int64_t wid, const lm_workload *w, const lm_db_write_opts *o,
                             lm_diag *diag);

/* lm_db_put_columns: the counter columns of t as column_data rows of
 * `source` (compact), leaving out with skip_fixed (the pmc table) the
 * dispatch columns the dispatch table holds, inside the caller's
 * transaction, with options o (NULL: the defaults): t may hold deferred
 * columns, and with skip_fixed o's first columns are visited first, each
 * given to o->seen. */
lm_status lm_db_put_columns(lm_sql *sql, int64_t wid, const lm_table *t, const char *source, int skip_fixed,
                            const lm_db_write_opts *o, lm_diag *diag);

/* lm_db_dispatch_column: 1 when pmc_perf column `name` is stored in the
 * dispatch table rather than as a counter column. */
int lm_db_dispatch_column(const char *name);

/* lm_db_write_provenance: a lumen profile's executions (w->exec: the
 * executions of each row, their shared counters, the set of each value)
 * and the clock source of each row; nothing when w has neither. */
lm_status lm_db_write_provenance(lm_sql *sql, int64_t wid, const lm_workload *w, lm_diag *diag);
/* lm_db_read_provenance: the same, read back into w (from w's arena);
 * w->exec and w->row_clock_source stay NULL for a workload without them. */
lm_status lm_db_read_provenance(lm_sql *sql, int64_t wid, lm_workload *w, lm_diag *diag);

/* lm_db_sysinfo_build: fields keys/values (n of them, none NULL) as system
 * information: *table (one row; set even on failure, the caller frees it)
 * holds the texts, info's arrays come from arena. A NULL key or value (a
 * copy the caller did not check) is refused with LM_EINVAL, never read as
 * an empty field. (rank_store.c) */
lm_status lm_db_sysinfo_build(const char *path, char **keys, char **values, size_t n, lm_arena *arena,
                              lm_table **table, lm_sysinfo *info, lm_diag *diag);

/* lm_db_write_ranks: what merged rank.R parts hold besides their rows:
 * each part's rank, system information and roofline (w->part_*), and the
 * rank that collected each set of a combined --split ranks profile
 * (w->set_rank); nothing for other workloads. Inside the caller's
 * transaction. */
lm_status lm_db_write_ranks(lm_sql *sql, int64_t wid, const lm_workload *w, lm_diag *diag);
/* lm_db_read_ranks: the same, read back into w (after its system info;
 * from w's arena, the tables owned by w); with `full` set also the parts'
 * rooflines and, for one rank's part of a --split ranks profile, the sets
 * it holds (w->split_*). Databases before schema version 4 have no parts:
 * w keeps the first rank's only. `workload` names it in messages. */
lm_status lm_db_read_ranks(lm_sql *sql, int64_t wid, const char *workload, lm_workload *w, int full,
                           lm_diag *diag);

/* lm_db_find_workload: the id, dispatch count and completeness of the
 * workload `name` (NULL: the first one). */
lm_status lm_db_find_workload(lm_sql *sql, const char *name, int64_t *wid, size_t *n_rows, int *complete,
                              lm_diag *diag);

/* lm_db_read_info: the workload's system info, regions and dispatch count
 * (an empty pmc_perf table of that many rows), without counter columns. */
lm_status lm_db_read_info(lm_sql *sql, const char *name, lm_workload **out, lm_diag *diag);

/* lm_db_read_workload: load the workload `name` (NULL: the first one) as
 * the same tables an Omniperf folder gives, with only the counter columns
 * that the want function opts->choose gives for its architecture (read
 * first, from its system information) accepts, decoded where opts->place
 * says (opts NULL, or no choose: every column; no place: in the tables'
 * memory). The columns left out are absent from the tables, as in a
 * folder without them. Columns that hold one value in every row may share
 * one array: the tables are read-only. */
lm_status lm_db_read_workload(lm_sql *sql, const char *name, const struct lm_workload_options *opts,
                              lm_workload **out, lm_diag *diag);

/* lm_db_count_columns: how many of the counter columns of `source` of
 * workload wid want (NULL: all) accepts (no column data is read). */
lm_status lm_db_count_columns(lm_sql *sql, int64_t wid, const char *source, lm_db_want_fn want, void *ctx,
                              size_t *n, lm_diag *diag);

/* lm_db_load_columns: add those columns to t (made with room for them and
 * t->n_rows rows; lm_table_finish already run on the columns it has), in
 * stored order (with want set: those that hold one value in every row
 * last), fetching and decoding one at a time, with their blank counts,
 * integer flags and rows' missing marks as lm_table_finish sets them.
 * Columns that want marks LM_DB_WANT_LATER and that hold integers stay
 * as their token planes (a byte or a few per row instead of eight) and
 * are decoded by the table's fetch, block by block.
 * A column whose data does not match its rows or encoding gives LM_EDATA
 * naming the workload (`workload`, for messages), the column and the
 * field (column_data.n_rows, column_data.data, column_data.codec). Each
 * column is decoded where place (NULL: nowhere else) puts it; a column
 * that holds one value in every row keeps sharing the table's array. */
lm_status lm_db_load_columns(lm_sql *sql, int64_t wid, const char *workload, const char *source,
                             lm_db_want_fn want, void *ctx, lm_db_place_fn place, void *place_ctx, lm_table *t,
                             lm_diag *diag);
/* lm_table_kept_planes: 1 when column c of t, read by lm_db_load_columns,
 * stayed as its token planes (LM_DB_WANT_LATER, integers): then *planes
 * (*width planes of t->n_rows bytes, grouped by byte position: per row 0
 * for a blank, else 1 + the zigzag of the difference to the previous
 * integer, the first from 0) and *width, owned by t. 0 for any other
 * column. */
int lm_table_kept_planes(const lm_table *t, size_t c, const unsigned char **planes, size_t *width);

/* ------------------------------------ a profile's bookkeeping (runs.c) */

/* The tables `lumen profile` keeps while it collects, in the workload's
 * own SQLite file (docs/workload-format.md: profile_option, profile_set,
 * profile_run, profile_record, profile_value, clock_sample,
 * profile_region, profile_telemetry, profile_process, log). Every
 * function that can fail fills diag with the file and SQLite's message. */

/* lm_db_exec: statements without results (BEGIN IMMEDIATE, COMMIT, ...). */
lm_status lm_db_exec(lm_sql *db, const char *sql, lm_diag *diag);

/* lm_db_put_option: one value of a profile option (position pos of key). */
lm_status lm_db_put_option(lm_sql *db, int64_t wid, const char *key, int pos, const char *value,
                           lm_diag *diag);
/* lm_db_each_option: fn for every stored option value, by key then
 * position (strings borrowed for the call); fn returns non-zero to stop. */
typedef int (*lm_db_option_fn)(const char *key, const char *value, void *user);
lm_status lm_db_each_option(lm_sql *db, int64_t wid, lm_db_option_fn fn, void *user, lm_diag *diag);

/* One counter of the plan: its set, its place in the set, its block, the
 * set's accumulate table (NULL: none) and why it was planned. */
typedef struct lm_db_plan_row {
  int set, position;
  const char *counter, *block, *accumulate, *why;
} lm_db_plan_row;
lm_status lm_db_put_plan(lm_sql *db, int64_t wid, const lm_db_plan_row *rows, size_t n, lm_diag *diag);
/* lm_db_each_plan_counter: fn for every planned counter, by set then
 * position (accumulate NULL where the set has none); an error fn returns
 * stops the walk and is returned. */
typedef lm_status (*lm_db_plan_fn)(int set, const char *counter, const char *accumulate, void *user,
                                   lm_diag *diag);
lm_status lm_db_each_plan_counter(lm_sql *db, int64_t wid, lm_db_plan_fn fn, void *user, lm_diag *diag);

/* Runs. lm_db_run_begin: run `run` of mode ("app", "instance",
 * "assigned") and pass (-1: none), status 'running', started at `started`
 * (ISO 8601). lm_db_run_forget: remove a run that never started.
 * lm_db_run_finish: how it ended (exit_code -1 and sig 0: none). */
lm_status lm_db_run_begin(lm_sql *db, int64_t wid, int run, const char *mode, int pass,
                          const char *started, lm_diag *diag);
void lm_db_run_forget(lm_sql *db, int64_t wid, int run);
lm_status lm_db_run_finish(lm_sql *db, int64_t wid, int run, const char *finished, const char *status,
                           int exit_code, int sig, long n_dispatches, lm_diag *diag);
/* lm_db_run_done: how many runs of mode (and pass; -1 any) ended 'ok'. */
int lm_db_run_done(lm_sql *db, int64_t wid, const char *mode, int pass);
/* lm_db_next_run_id: one more than the highest run id (1 for none). */
int lm_db_next_run_id(lm_sql *db, int64_t wid);
/* lm_db_runs_interrupt: runs left 'running' become 'interrupted',
 * finished now; *n_changed of them. */
lm_status lm_db_runs_interrupt(lm_sql *db, int64_t wid, const char *finished, int *n_changed, lm_diag *diag);
/* lm_db_only_workload: the first (the only) workload of a profile's
 * database and whether it is complete; LM_ENOTFOUND naming path without. */
lm_status lm_db_only_workload(lm_sql *db, const char *path, int64_t *wid, int *complete, lm_diag *diag);

/* One dispatch a run's tool library recorded. */
typedef struct lm_db_record {
  int64_t dispatch_id;
  const char *kernel;
  int64_t instance, selected;
  int set, gpu;                     /* set -1: not collected */
  int64_t pid, tid;
  int64_t grid, workgroup, lds, scratch, arch_vgpr, accum_vgpr, sgpr;
  double start_ns, end_ns;
  const char *regions, *cycle_key;  /* region ids "1,3", the policy's key */
  int64_t row_group;                /* the composed row it belongs to, -1: none */
} lm_db_record;

/* A run's records writer: statements prepared once for the run, inside
 * the caller's transaction. Close with lm_db_records_close (NULL: no-op). */
typedef struct lm_db_records lm_db_records;
lm_status lm_db_records_open(lm_sql *db, int64_t wid, int run, lm_db_records **out, lm_diag *diag);
void lm_db_records_close(lm_db_records *r);
lm_status lm_db_records_dispatch(lm_db_records *r, const lm_db_record *d, lm_diag *diag);
/* A counter value of a dispatch of process pid (NaN is stored as NULL). */
lm_status lm_db_records_value(lm_db_records *r, int64_t dispatch_id, int64_t pid, const char *column,
                              double value, lm_diag *diag);
/* lm_db_column_checksum: the checksum stored with a column's data
 * (column_data.checksum, schema version 6): XXH3-64 of its bytes, as a
 * signed 64-bit integer. */
int64_t lm_db_column_checksum(const void *data, size_t n);
/* lm_db_records_clock: a clock sample of GPU gpu at t_ns (a clock that is
 * NaN, not given, is stored as NULL). */
lm_status lm_db_records_clock(lm_db_records *r, int gpu, double t_ns, double sclk_mhz, double mclk_mhz,
                              lm_diag *diag);
/* lm_db_records_power: a power reading of GPU gpu at t_ns (watts, degrees
 * C; NaN: the sampler had none, stored as NULL, never as 0). */
lm_status lm_db_records_power(lm_db_records *r, int gpu, double t_ns, double power_w, double temp_c,
                              lm_diag *diag);
lm_status lm_db_records_region(lm_db_records *r, int id, const char *name, lm_diag *diag);
/* The run's clock sampler ("none": clocks will be estimated) and why. */
lm_status lm_db_records_telemetry(lm_db_records *r, const char *sampler, const char *note, lm_diag *diag);
/* lm_db_records_sysinfo: one S line of process pid (a system-information
 * field the tool library read inside the application), in arrival order. */
lm_status lm_db_records_sysinfo(lm_db_records *r, int64_t pid, const char *key, const char *value, lm_diag *diag);

/* One process of a run (rank, size, local_rank -1 and launcher/error
 * NULL or "" where unknown). */
typedef struct lm_db_process {
  int64_t pid;
  int slot;
  const char *host;
  int rank, size, local_rank;
  const char *launcher, *gpus;
  int64_t n_dispatches;
  int finished;
  const char *error;
} lm_db_process;
lm_status lm_db_put_process(lm_sql *db, int64_t wid, int run, const lm_db_process *p, lm_diag *diag);

/* lm_db_add_log: one message of the workload's log, after the last. */
lm_status lm_db_add_log(lm_sql *db, int64_t wid, int64_t t_ns, const char *level, const char *message,
                        lm_diag *diag);

/* Transactions of a profile's database. lm_db_begin: BEGIN IMMEDIATE
 * (the write lock is taken at once, so a second writer fails here, not
 * halfway through). lm_db_commit: COMMIT; when it fails (a busy
 * database) the transaction may still be open. lm_db_rollback: ROLLBACK,
 * a no-op without an open transaction (it cannot report anything: it is
 * what callers do after an error they already report). */
lm_status lm_db_begin(lm_sql *db, lm_diag *diag);
lm_status lm_db_commit(lm_sql *db, lm_diag *diag);
void lm_db_rollback(lm_sql *db);

/* lm_db_path: the file of db's main database (borrowed, valid while db is
 * open; "" for an in-memory one), for diagnostics and table names. */
const char *lm_db_path(lm_sql *db);

/* Editing the stored plan (a backend splitting a set the device refuses):
 * lm_db_plan_drop: counter leaves set `set`. lm_db_plan_move: it moves to
 * set new_set, which has no accumulate table. lm_db_plan_copy: a copy of
 * it (same position, block and reason) goes to new_set, without an
 * accumulate table. A counter not in the set changes nothing; a move or
 * copy onto a position new_set already holds gives an error. */
lm_status lm_db_plan_drop(lm_sql *db, int64_t wid, int set, const char *counter, lm_diag *diag);
lm_status lm_db_plan_move(lm_sql *db, int64_t wid, int set, const char *counter, int new_set, lm_diag *diag);
lm_status lm_db_plan_copy(lm_sql *db, int64_t wid, int set, const char *counter, int new_set, lm_diag *diag);
/* lm_db_plan_n_sets: how many counter sets the stored plan has.
 * lm_db_plan_keep_sets: only sets keep[0..n) stay (a rank's share under
 * --split ranks), renumbered 0..n-1 in that order; the others are removed. */
lm_status lm_db_plan_n_sets(lm_sql *db, int64_t wid, int *n_sets, lm_diag *diag);
lm_status lm_db_plan_keep_sets(lm_sql *db, int64_t wid, const int *keep, int n, lm_diag *diag);

/* lm_db_run_n_selected: how many records of run `run` (of every run when
 * run < 0) the filters selected (0 too when they cannot be read: the
 * caller then lists the kernels, or says there were none). */
int lm_db_run_n_selected(lm_sql *db, int64_t wid, int64_t run);
/* lm_db_first_full_run: the id of the first run that ended 'ok' and
 * recorded dispatches (the application ran whole and launched kernels);
 * 0 when there is none or it cannot be read. */
int64_t lm_db_first_full_run(lm_sql *db, int64_t wid);
/* lm_db_each_run_kernel: fn for every kernel run `run` recorded, in the
 * order of its first dispatch, with how many dispatches it had (kernel
 * borrowed for the call); fn returns non-zero to stop. */
typedef int (*lm_db_kernel_fn)(const char *kernel, int n_dispatches, void *user);
lm_status lm_db_each_run_kernel(lm_sql *db, int64_t wid, int64_t run, lm_db_kernel_fn fn, void *user,
                                lm_diag *diag);

/* lm_db_sysinfo_source: the process whose S lines give the workload's
 * system information: the first (by run, then pid) of a run that ended
 * 'ok' with any. *found 0 when there is none; else *run, *pid and its host
 * (profile_process.host, "" when unknown) into host[0..host_cap). */
lm_status lm_db_sysinfo_source(lm_sql *db, int64_t wid, int *found, int *run, int64_t *pid, char *host,
                               size_t host_cap, lm_diag *diag);
/* lm_db_sysinfo_count: how many S lines process pid of run `run` wrote. */
lm_status lm_db_sysinfo_count(lm_sql *db, int64_t wid, int run, int64_t pid, size_t *n, lm_diag *diag);
/* lm_db_each_sysinfo: fn for each of those lines in arrival order (key and
 * value borrowed for the call, NULL where not stored); an error fn returns
 * stops the walk and is returned. */
typedef lm_status (*lm_db_sysinfo_fn)(const char *key, const char *value, void *user, lm_diag *diag);
lm_status lm_db_each_sysinfo(lm_sql *db, int64_t wid, int run, int64_t pid, lm_db_sysinfo_fn fn, void *user,
                             lm_diag *diag);

/* ----------------------------------------- composing a profile (compose.c) */

/* A record of a successful run, as composition reads it back: the run,
 * its mode ("app", "instance", "assigned"), the slot of its process
 * (profile_process.slot, 0 when unknown) and the record (strings "" where
 * not stored, borrowed for the call; row_group always set). */
typedef struct lm_db_stored_record {
  int run;
  const char *mode;
  int slot;
  lm_db_record rec;
} lm_db_stored_record;
typedef lm_status (*lm_db_stored_record_fn)(const lm_db_stored_record *r, void *user, lm_diag *diag);
/* lm_db_each_composable: fn for every record with a set (set >= 0) and a
 * row group, of the runs that ended 'ok', by run, process slot, pid and
 * dispatch id; an error fn returns stops the walk and is returned. */
lm_status lm_db_each_composable(lm_sql *db, int64_t wid, lm_db_stored_record_fn fn, void *user, lm_diag *diag);
/* lm_db_each_composable_value: fn for every counter value of those runs
 * (in no particular order; value NaN where stored as NULL, column
 * borrowed for the call); an error fn returns stops and is returned. */
typedef lm_status (*lm_db_stored_value_fn)(int run, int64_t pid, int64_t dispatch_id, const char *column,
                                           double value, void *user, lm_diag *diag);
lm_status lm_db_each_composable_value(lm_sql *db, int64_t wid, lm_db_stored_value_fn fn, void *user,
                                      lm_diag *diag);

/* lm_db_clear_composed: remove what an earlier composition of workload
 * wid wrote (system info, kernels, dispatches, columns, regions,
 * executions, clock sources), keeping the profile's own tables. Inside
 * the caller's transaction. */
lm_status lm_db_clear_composed(lm_sql *db, int64_t wid, lm_diag *diag);
/* lm_db_complete_workload: the workload is complete, with n_dispatches
 * rows. */
lm_status lm_db_complete_workload(lm_sql *db, int64_t wid, size_t n_dispatches, lm_diag *diag);

/* A composition's per-row writer: statements prepared once, used inside
 * the caller's transaction after lm_db_write_tables wrote the rows.
 * Close with lm_db_composer_close (NULL: no-op) before committing. */
typedef struct lm_db_composer lm_db_composer;
lm_status lm_db_composer_open(lm_sql *db, int64_t wid, lm_db_composer **out, lm_diag *diag);
void lm_db_composer_close(lm_db_composer *c);
/* lm_db_composer_sources: the run and set of each row's value of column
 * `column` of table `source` (n_rows of each; -1: no value), kept with
 * the column's data. */
lm_status lm_db_composer_sources(lm_db_composer *c, const char *source, const char *column, const int16_t *runs,
                                 const int16_t *sets, size_t n_rows, lm_diag *diag);
/* lm_db_composer_clock: the mean of run's clock samples of GPU gpu taken
 * in [t0_ns, t1_ns]; both NaN when there is none. */
lm_status lm_db_composer_clock(lm_db_composer *c, int run, int gpu, double t0_ns, double t1_ns, double *sclk_mhz,
                               double *mclk_mhz, lm_diag *diag);
/* lm_db_composer_power: run's board power (W) and temperature (degrees C)
 * of GPU gpu during [t0_ns, t1_ns]: the mean of the samples taken inside
 * it; for a dispatch shorter than the sampling period, which holds none,
 * the mean of the last sample before it and the first after it when both
 * exist and lie within 50 ms of it. NaN where there is no such reading. */
lm_status lm_db_composer_power(lm_db_composer *c, int run, int gpu, double t0_ns, double t1_ns, double *power_w,
                               double *temp_c, lm_diag *diag);
/* lm_db_composer_sampler: run's clock sampler into sampler[0..cap), ""
 * when the run stored none. */
lm_status lm_db_composer_sampler(lm_db_composer *c, int run, char *sampler, size_t cap, lm_diag *diag);
/* lm_db_composer_clock_source: where row's clock came from (a sampler's
 * name, "estimate"). */
lm_status lm_db_composer_clock_source(lm_db_composer *c, size_t row, const char *source, lm_diag *diag);
/* lm_db_composer_row: row's instance, process, thread and clocks (NaN:
 * not known), with the rank and host of that process in run `run`. */
lm_status lm_db_composer_row(lm_db_composer *c, size_t row, int run, int64_t instance, int64_t pid, int64_t tid,
                             double sclk_mhz, double mclk_mhz, lm_diag *diag);
/* lm_db_composer_region_name: the name of region `id` of run `run`
 * (borrowed until the next call or the close; NULL: no such region). */
lm_status lm_db_composer_region_name(lm_db_composer *c, int run, int id, const char **name, lm_diag *diag);
/* lm_db_composer_region: row ran inside workload region region_id named
 * name (the region is added once). */
lm_status lm_db_composer_region(lm_db_composer *c, size_t row, int64_t region_id, const char *name,
                                lm_diag *diag);


#endif
