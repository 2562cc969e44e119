/*
 * split_out.c - `lumen profile --split ranks -- mpirun -np N APP`: lumen
 * outside the MPI job, rank r collecting the plan's sets r, r+N, ... (set r
 * mod sets when N is at least the number of sets).
 *
 * It writes the rank.R parts that lumen inside mpirun writes, composed by the
 * same code, so reading (ranks/split.c), `lumen db import`, --rank and --mpi
 * treat both alike. lumen learns N from the first run's records and runs
 * ceil(sets / N) times in all. Invariant: a run's records go into their own
 * rank's part, and a later run of another N is an error. docs/mpi.md,
 * "Splitting the counter sets over ranks".
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "collect/collect.h"
#include "sql/sql.h"
#include "db/db.h"

typedef struct part_db {
  lm_sql *db;
  int64_t wid;
  lm_set_info *sets; /* the rank's share of the plan */
  int n_sets;
  lm_run_spec spec;  /* its current run */
  int running;
  int complete;      /* composed before a --resume */
  int new_runs;      /* runs this lumen added */
} part_db;

typedef struct split_ctx {
  const lm_profile_opts *o;
  lm_collector *col;
  const lm_plan *plan;
  lm_set_info *sets; /* the whole plan, after the device's check */
  int n_sets;
  lm_stored_opts opt;
  part_db *parts;
  int n_ranks, n_runs;
  int next_id; /* the next application run's number (LUMEN_PASS, file names) */
  int fresh;   /* this lumen began the profile (not --resume) */
  int checked; /* the first run's selection was checked */
  int discard; /* nothing is kept: remove the parts and what this lumen made */
} split_ctx;

/* The rank of a records file BASE.rankR.PID[-K] of base, or -1. */
static int records_rank(const char *name, const char *base) {
  size_t n = strlen(base);
  if (strncmp(name, base, n) != 0 || strncmp(name + n, ".rank", 5) != 0) return -1;
  const char *p = name + n + 5;
  char *end;
  long r = strtol(p, &end, 10);
  if (end == p || *end != '.' || r < 0 || r > 100000000) return -1;
  return (int)r;
}

/* The size its process's launcher gave (the records' P line), or -1. */
static int records_size(const char *path) {
  FILE *f = fopen(path, "r");
  if (!f) return -1;
  char line[2048];
  int size = -1;
  for (int i = 0; i < 2 && fgets(line, sizeof line, f); i++) {
    if (strncmp(line, "P\t", 2) != 0) continue;
    char *save = NULL, *tok = strtok_r(line, "\t", &save);
    for (int k = 0; tok && k < 4; k++) tok = strtok_r(NULL, "\t", &save);
    size = tok ? atoi(tok) : -1;
  }
  fclose(f);
  return size;
}

/* The job's number of ranks from a run's records (prefix.rankR.PID):
 * *size 0 when no process of a rank wrote any; LM_EDATA when they
 * disagree. Every such file is removed with remove_all. */
static lm_status scan_ranks(const char *prefix, int run, int *size, int remove_all, lm_diag *diag) {
  *size = 0;
  char dir[4096];
  snprintf(dir, sizeof dir, "%s", prefix);
  char *slash = strrchr(dir, '/');
  const char *base = slash ? slash + 1 : dir;
  if (slash) *slash = '\0';
  DIR *d = opendir(slash ? (dir[0] ? dir : "/") : ".");
  if (!d) return LM_OK;
  lm_status st = LM_OK;
  int first_rank = -1;
  struct dirent *e;
  while ((e = readdir(d)) != NULL) {
    int rank = records_rank(e->d_name, base);
    if (rank < 0) continue;
    char path[8192];
    snprintf(path, sizeof path, "%s/%s", slash ? (dir[0] ? dir : "") : ".", e->d_name);
    if (remove_all) {
      unlink(path);
      continue;
    }
    /* A process stopped before it wrote its first lines says nothing of
     * the job's size (its part reads what the file holds). */
    int n = records_size(path);
    if (n < 0) continue;
    if (st == LM_OK && (n < 2 || rank >= n || (*size && n != *size)))
      st = lm_fail(diag, LM_EDATA, path,
                   "run %d: rank %d says the job has %d ranks, rank %d %d (one MPI job, every rank "
                   "under the same mpirun?)",
                   run, rank, n, first_rank, *size);
    if (*size == 0) {
      *size = n;
      first_rank = rank;
    }
  }
  closedir(d);
  return st;
}

/* One part of the profile, DIR/rank.R: its database, the options, the
 * plan checked on the device and the rank's share of it. */
static lm_status make_part(split_ctx *x, int rank, lm_diag *diag) {
  part_db *p = &x->parts[rank];
  char dir[4200], db_path[4400];
  snprintf(dir, sizeof dir, "%s/rank.%d", x->o->dir, rank);
  snprintf(db_path, sizeof db_path, "%s/%s", dir, LM_WORKLOAD_DB);
  lm_status st = lm_make_dirs(dir, "the rank's part of the workload", "choose a writable place with -w", diag);
  if (st == LM_OK) st = lm_db_open(db_path, LM_DB_CREATE, &p->db, diag);
  if (st == LM_OK) st = lm_db_begin(p->db, diag);
  if (st != LM_OK) return st;
  lm_collector *col = x->col;
  st = lm_db_create_workload(p->db, x->o->name, NULL, "lumen", col->origin, col->arch, col->model, 0, 0, &p->wid,
                             diag);
  if (st == LM_OK) st = lm_collect_store_options(p->db, p->wid, x->o, diag);
  if (st == LM_OK) st = lm_collect_put_option(p->db, p->wid, "split_outside", 0, "1", diag);
  if (st == LM_OK) st = lm_collect_store_plan(p->db, p->wid, x->plan, diag);
  if (st == LM_OK) st = lm_db_commit(p->db, diag);
  else lm_db_rollback(p->db);
  if (st != LM_OK) return st;
  /* The device's check splits the plan as it did before the first run. */
  if (col->check_sets) {
    lm_set_info *sets = NULL;
    int n = 0;
    if ((st = lm_collect_load_plan(p->db, p->wid, &sets, &n, diag)) != LM_OK) return st;
    st = col->check_sets(col, p->db, p->wid, &sets, &n, x->o->n_items > 0, diag);
    lm_collect_sets_fini(sets, n);
    if (st != LM_OK) return st;
  }
  if ((st = lm_db_begin(p->db, diag)) != LM_OK) return st;
  st = lm_collect_split_plan(p->db, p->wid, rank, x->n_ranks, diag);
  if (st == LM_OK) st = lm_db_commit(p->db, diag);
  else lm_db_rollback(p->db);
  if (st == LM_OK) st = lm_collect_load_plan(p->db, p->wid, &p->sets, &p->n_sets, diag);
  if (st == LM_OK)
    lm_collect_note(p->db, p->wid, LM_LOG_DEBUG, "MPI rank %d of %d, profiled by lumen outside mpirun: this "
                    "folder is the rank's part of the workload", rank, x->n_ranks);
  return st;
}

/* The parts' runs of application run k begin (each in its own database). */
static lm_status begin_parts(split_ctx *x, int k, int mode, lm_diag *diag) {
  for (int q = 0; q < x->n_ranks; q++) {
    part_db *p = &x->parts[q];
    if (mode == LM_REPLAY_APP && k >= p->n_sets) continue; /* its share is done */
    if (lm_collect_run_done(p->db, p->wid, lm_collect_mode_name(mode), mode == LM_REPLAY_APP ? k : -1))
      continue; /* before a --resume */
    memset(&p->spec, 0, sizeof p->spec);
    p->spec.id = lm_collect_next_run_id(p->db, p->wid);
    p->spec.mode = mode;
    p->spec.pass = mode == LM_REPLAY_APP ? k : 0;
    p->spec.n_sets = p->n_sets;
    lm_status st = lm_collect_run_begin(p->db, p->wid, &p->spec, diag);
    if (st != LM_OK) return st;
    p->running = 1;
  }
  return LM_OK;
}

/* write_config: the tool's configuration of run spec (records into
 * records) at config_path, with each rank keeping its share. */
static lm_status write_config(split_ctx *x, const lm_run_spec *spec, const char *records, const char *config_path,
                              lm_diag *diag) {
  lm_collect_job job = {x->col->arch, x->sets, x->n_sets, &x->opt, x->o->telemetry};
  lm_tool_config cfg;
  lm_status st = lm_collect_tool_config(&job, spec, records, &cfg, diag);
  if (st != LM_OK) return st;
  cfg.split_ranks = 1;
  st = lm_tool_config_write(&cfg, config_path, diag);
  lm_collect_tool_config_fini(&cfg);
  return st;
}

/* check_ranks: the job's size after run id (size ranks; 0: none wrote
 * records): the first run needs an MPI job of 2 or more ranks (its error
 * says how the application failed when no rank wrote records), a later
 * one the first run's number of ranks. */
static lm_status check_ranks(split_ctx *x, int id, int had_parts, int size, lm_status run_st,
                             const lm_run_outcome *how, lm_diag *diag) {
  const char *app = x->opt.argv[0];
  lm_status st = LM_OK;
  if (!had_parts && size == 0 && run_st != LM_OK) {
    char sigbuf[64];
    if (how->sig)
      st = lm_fail(diag, LM_EDATA, app,
                   "run 1 (--split ranks): the application was killed by "
                   "signal %s before any MPI rank wrote records",
                   lm_collect_signal_text(how->sig, sigbuf, sizeof sigbuf));
    else
      st = lm_fail(diag, LM_EDATA, app,
                   "run 1 (--split ranks): the application %s before any "
                   "MPI rank wrote records",
                   how->timed_out     ? "timed out"
                   : how->interrupted ? "was interrupted"
                                      : "failed");
    if (how->exit_code > 0)
      st = lm_fail(diag, LM_EDATA, app,
                   "run 1 (--split ranks): the application exited with "
                   "status %d before any MPI rank wrote records",
                   how->exit_code);
  }
  if (st == LM_OK && !had_parts && size == 0)
    st = lm_fail_at(diag, LM_EINVAL, app, 0, "--split",
                    "ranks: no process of the application had an MPI rank of a job of 2 or more ranks; with "
                    "lumen outside, start the ranks under mpirun (lumen profile --split ranks -- mpirun -np N "
                    "APP), or run lumen inside it (mpirun -np N lumen profile --split ranks -- APP)");
  if (st == LM_OK && had_parts && size && size != x->n_ranks)
    st = lm_fail_at(diag, LM_EDATA, app, 0, "--split",
                    "ranks: run %d had %d ranks, the first run %d: every run of a --split ranks profile needs "
                    "the same number of ranks (-np); the runs so far are kept in the parts",
                    id, size, x->n_ranks);
  return st;
}

/* make_parts: after the first run, a part per rank of the job's size
 * ranks, the runs the largest share needs, and the parts' first runs. */
static lm_status make_parts(split_ctx *x, int size, int mode, lm_diag *diag) {
  x->parts = lm_calloc((size_t)size, sizeof *x->parts);
  if (!x->parts) return lm_oom(diag, NULL);
  x->n_ranks = size;
  lm_status st = LM_OK;
  for (int q = 0; st == LM_OK && q < size; q++) st = make_part(x, q, diag);
  x->n_runs = 1;
  for (int q = 0; st == LM_OK && mode == LM_REPLAY_APP && q < size; q++)
    if (x->parts[q].n_sets > x->n_runs) x->n_runs = x->parts[q].n_sets;
  if (st == LM_OK) st = begin_parts(x, 0, mode, diag);
  return st;
}

/* end_parts: every running part's run ends with status; its rank's
 * records (records.rankR) go into it while st is LM_OK (which the first
 * failure replaces). The ranks whose tool did not finish are named in
 * failed, the dispatches added to *n_dispatches. */
static lm_status end_parts(split_ctx *x, lm_status st, const char *records, const char *status,
                           const lm_run_outcome *how, lm_buf *failed, long *n_dispatches, lm_diag *diag) {
  char rank_records[4200];
  for (int q = 0; q < x->n_ranks; q++) {
    part_db *p = &x->parts[q];
    if (!p->running) continue;
    p->running = 0;
    snprintf(rank_records, sizeof rank_records, "%s.rank%d", records, q);
    if (st != LM_OK) continue;
    long n = 0;
    int tool_ok = 0;
    char why[1024];
    st = lm_collect_run_end(p->db, p->wid, &p->spec, rank_records, status, how, &n, &tool_ok, why, sizeof why,
                            diag);
    *n_dispatches += n;
    p->new_runs++;
    if (st == LM_OK && !tool_ok)
      lm_buf_printf(failed, "%srank %d: %s", failed->len ? "; " : "", q, why[0] ? why : "did not finish");
  }
  return st;
}

/* run_failed: the error of application run id (the k-th of its mode) that
 * failed, or whose ranks named in failed did not finish. */
static lm_status run_failed(split_ctx *x, int id, int mode, int k, const lm_run_outcome *how,
                            const lm_buf *failed, long n_dispatches, lm_diag *diag) {
  const char *app = x->opt.argv[0], *dir = x->o->dir;
  char what[128], sigbuf[64];
  snprintf(what, sizeof what, "run %d (--split ranks, %s, each rank's set %d)", id, lm_collect_mode_name(mode), k);
  const char *sep = failed->len ? "; " : "", *procs = lm_buf_cstr(failed);
  if (how->timed_out)
    return lm_fail(diag, LM_EDATA, app,
                   "%s: the application did not finish within --timeout %g s and was stopped after %ld "
                   "dispatches%s%s; the earlier runs are kept (`lumen profile --resume -w %s` runs it again)",
                   what, x->opt.timeout, n_dispatches, sep, procs, dir);
  if (how->interrupted)
    return lm_fail(diag, LM_EDATA, app,
                   "%s: interrupted by signal %s (passed on to the application); the earlier runs are kept "
                   "(`lumen profile --resume -w %s` continues)",
                   what, lm_collect_signal_text(how->interrupted, sigbuf, sizeof sigbuf), dir);
  if (how->sig)
    return lm_fail(diag, LM_EDATA, app,
                   "%s: the application was killed by signal %s%s%s; what the ranks recorded is kept "
                   "(`lumen profile --resume -w %s` continues)",
                   what, lm_collect_signal_text(how->sig, sigbuf, sizeof sigbuf), sep, procs, dir);
  if (how->exit_code != 0)
    return lm_fail(diag, LM_EDATA, app,
                   "%s: the application exited with status %d%s%s; what the ranks recorded is kept "
                   "(`lumen profile --resume -w %s` continues)",
                   what, how->exit_code, sep, procs, dir);
  return lm_fail(diag, LM_EDATA, app, "%s: %s", what, procs);
}

/* Application run k (from 0) of every rank. */
static lm_status split_run(split_ctx *x, int k, lm_diag *diag) {
  const lm_profile_opts *o = x->o;
  char config_path[4096], records[4096];
  int id = x->next_id++;
  snprintf(config_path, sizeof config_path, "%s/run_%d.config", o->dir, id);
  snprintf(records, sizeof records, "%s/run_%d.records", o->dir, id);
  int mode = x->opt.replay == LM_REPLAY_INSTANCE ? LM_REPLAY_INSTANCE : LM_REPLAY_APP;
  int had_parts = x->parts != NULL;
  lm_run_spec spec;
  memset(&spec, 0, sizeof spec);
  spec.id = id;
  spec.mode = mode;
  spec.pass = mode == LM_REPLAY_APP ? k : 0;
  spec.n_sets = x->n_sets;
  lm_status st = write_config(x, &spec, records, config_path, diag);
  if (st != LM_OK) return st;
  int size = 0;
  scan_ranks(records, id, &size, 1, diag);
  if (had_parts && (st = begin_parts(x, k, mode, diag)) != LM_OK) return st;
  if (!had_parts)
    lm_log(LM_LOG_INFO, "run 1 (%s, --split ranks: each rank its share's first set): %s",
           lm_collect_mode_name(mode), x->opt.argv[0]);
  else
    lm_log(LM_LOG_INFO, "run %d/%d (%s, --split ranks: each rank its share's set %d): %s", k + 1, x->n_runs,
           lm_collect_mode_name(mode), k, x->opt.argv[0]);
  lm_progress prog;
  memset(&prog, 0, sizeof prog);
  lm_run_outcome how;
  lm_diag run_diag;
  lm_diag_clear(&run_diag);
  lm_status run_st = lm_collect_run_app(x->opt.argv, o->tool_library, config_path, records, spec.id, x->opt.timeout,
                                        (char const(*)[4200])x->col->env, x->col->n_env, &prog, &how, &run_diag);
  if (run_st != LM_OK && run_st != LM_EDATA) {
    for (int q = 0; q < x->n_ranks; q++)
      if (x->parts[q].running) {
        lm_collect_run_forget(x->parts[q].db, x->parts[q].wid, x->parts[q].spec.id);
        x->parts[q].running = 0;
      }
    unlink(config_path);
    *diag = run_diag;
    return run_st;
  }
  /* The job's ranks: known from the first run's records, the same after. */
  st = scan_ranks(records, id, &size, 0, diag);
  if (st == LM_OK) st = check_ranks(x, id, had_parts, size, run_st, &how, diag);
  if (st == LM_OK && !had_parts) st = make_parts(x, size, mode, diag);
  /* Every rank's records into its part. */
  const char *status = how.timed_out ? "timeout" : how.interrupted ? "interrupted" : run_st == LM_OK ? "ok" : "failed";
  lm_buf failed = {0};
  long n_dispatches = 0;
  st = end_parts(x, st, records, status, &how, &failed, &n_dispatches, diag);
  /* The records are in the parts (those of ranks whose share was done,
   * and of the launcher's own processes, hold nothing to keep). */
  scan_ranks(records, id, &size, 1, diag);
  char **files = NULL;
  lm_collect_records_files(records, &files);
  for (char **f = files; f && *f; f++) unlink(*f);
  lm_collect_records_files_free(files);
  unlink(config_path);
  if (st == LM_OK && (run_st != LM_OK || failed.len))
    st = run_failed(x, id, mode, k, &how, &failed, n_dispatches, diag);
  lm_buf_fini(&failed);
  return st;
}

/* Every part's dispatch rows, as a rank's lumen inside mpirun composes them. */
static lm_status compose_parts(split_ctx *x, const lm_catalog *cat, lm_profile_summary *summary, lm_diag *diag) {
  char ip_blocks[1024] = "";
  for (size_t i = 0, at = 0; i < x->opt.n_items && at < sizeof ip_blocks - 1; i++)
    at += (size_t)snprintf(ip_blocks + at, sizeof ip_blocks - at, "%s%s", i ? "|" : "", x->opt.items[i]);
  lm_status st = LM_OK;
  for (int q = 0; st == LM_OK && q < x->n_ranks; q++) {
    part_db *p = &x->parts[q];
    if (p->complete && !p->new_runs) continue;
    lm_workload *rec = NULL;
    const lm_sysinfo *info = x->col->info;
    const lm_table *roofline = x->col->roofline;
    if (!info) {
      if ((st = lm_collect_device_sysinfo(p->db, p->wid, &rec, diag)) != LM_OK) break;
      info = &rec->sysinfo;
      roofline = NULL;
    }
    lm_profile_summary part;
    memset(&part, 0, sizeof part);
    const char *accumulator = cat->accumulate ? cat->accumulate : "SQ_ACCUM_PREV_HIRES";
    st = lm_collect_compose(p->db, p->wid, p->sets, p->n_sets, accumulator, cat,
                            info, roofline, x->opt.name, x->opt.argv, x->opt.argc, ip_blocks[0] ? ip_blocks : NULL,
                            &part, diag);
    lm_workload_free(rec);
    if (st == LM_OK && part.dispatches == 0)
      st = lm_fail(diag, LM_EDATA, x->o->dir,
                   "rank %d: no selected dispatch got all %d of its counter "
                   "sets (%s)",
                   q, p->n_sets, part.dropped ? part.dropped_detail : "no dispatch was selected");
    summary->dispatches += part.dispatches;
    if (part.dropped && !summary->dropped)
      snprintf(summary->dropped_detail, sizeof summary->dropped_detail, "rank %d: %.2000s", q, part.dropped_detail);
    summary->dropped += part.dropped;
  }
  return st;
}

/* LM_OK when some part's runs selected a dispatch; else the error of
 * filters that select nothing, over rank 0's run (the processes of a job
 * run the same program), and a profile this lumen began is discarded. */
static lm_status check_selected(split_ctx *x, lm_diag *diag) {
  for (int q = 0; q < x->n_ranks; q++)
    if (lm_db_run_n_selected(x->parts[q].db, x->parts[q].wid, -1) > 0) return LM_OK;
  x->discard = x->fresh;
  return lm_collect_unselected(x->parts[0].db, x->parts[0].wid, x->parts[0].spec.id, &x->opt, x->o->dir,
                               x->discard, diag);
}

/* Whether every part has run k (from 0) of its share. */
static int parts_done(const split_ctx *x, int k, int mode) {
  for (int q = 0; q < x->n_ranks; q++) {
    const part_db *p = &x->parts[q];
    if (mode == LM_REPLAY_APP && k >= p->n_sets) continue;
    if (!lm_collect_run_done(p->db, p->wid, lm_collect_mode_name(mode), mode == LM_REPLAY_APP ? k : -1)) return 0;
  }
  return 1;
}

/* The runs the parts still need, then their dispatch rows. */
static lm_status run_and_compose(split_ctx *x, const lm_catalog *cat, lm_profile_summary *summary, lm_diag *diag) {
  int mode = x->opt.replay == LM_REPLAY_INSTANCE ? LM_REPLAY_INSTANCE : LM_REPLAY_APP;
  lm_status st = LM_OK;
  for (int k = 0; st == LM_OK && k < x->n_runs; k++) {
    if (x->parts && parts_done(x, k, mode)) continue;
    st = split_run(x, k, diag);
    if (st == LM_OK) summary->runs++;
    /* Filters that select nothing stop after the first run (collect.c). */
    if (st == LM_OK && x->fresh && !x->checked && x->n_ranks > 0) {
      x->checked = 1;
      st = check_selected(x, diag);
    }
  }
  if (st == LM_OK) st = compose_parts(x, cat, summary, diag);
  if (st == LM_OK) {
    summary->ranks = x->n_ranks;
    summary->sets = x->n_sets;
  }
  return st;
}

/* A context for one profile: nothing planned yet, application runs
 * numbered from 1. */
static split_ctx ctx_start(const lm_profile_opts *o, lm_collector *col) {
  split_ctx x;
  memset(&x, 0, sizeof x);
  x.o = o;
  x.col = col;
  x.next_id = 1;
  return x;
}

static void ctx_fini(split_ctx *x, lm_status st, lm_diag *diag) {
  for (int q = 0; x->parts && q < x->n_ranks; q++) {
    part_db *p = &x->parts[q];
    if (st != LM_OK && p->db) {
      char line[2048];
      lm_collect_note(p->db, p->wid, LM_LOG_DEBUG, "stopped: %s", lm_diag_format(diag, line, sizeof line));
    }
    lm_collect_sets_fini(p->sets, p->n_sets);
    lm_db_close(p->db);
  }
  lm_free(x->parts);
  lm_collect_sets_fini(x->sets, x->n_sets);
  lm_collect_stored_fini(&x->opt);
}

lm_status lm_collect_split_outside(const lm_profile_opts *o, lm_collector *col, const lm_catalog *cat,
                                   lm_profile_summary *summary, lm_diag *diag) {
  split_ctx x = ctx_start(o, col);
  lm_plan *plan = NULL;
  lm_sql *plan_db = NULL;
  int64_t plan_wid = 0;
  int lock_fd = -1;
  char made_from[4096] = ""; /* the first folder of o->dir this lumen makes */
  lm_status st = LM_OK;
  if (o->replay >= 0 && o->replay != LM_REPLAY_APP && o->replay != LM_REPLAY_INSTANCE) {
    st = lm_fail_at(diag, LM_EINVAL, NULL, 0, "--replay",
                    "--split ranks with lumen outside mpirun takes --replay app or instance");
    goto done;
  }
  if (o->argc < 1) {
    st = lm_fail(diag, LM_EINVAL, NULL, "no application to profile (lumen profile -n NAME -- APP ARGS)");
    goto done;
  }
  if ((st = lm_collect_check_program(o->argv[0], diag)) != LM_OK) goto done;
  if (!lm_collect_dir_is_empty(o->dir)) {
    st =
        lm_fail(diag, LM_EINVAL, o->dir, "already exists; lumen never overwrites a workload (choose another -w or -n)");
    goto done;
  }
  int plan_replay = o->replay < 0 ? LM_REPLAY_APP : o->replay;
  if ((st = col->plan(col, cat, o->items, o->n_items, plan_replay, &plan, diag)) != LM_OK) goto done;
  x.plan = plan;
  lm_collect_first_missing(o->dir, made_from, sizeof made_from);
  if ((st = lm_make_dirs(o->dir, "the workload folder", "choose a writable place with -w", diag)) != LM_OK) goto done;
  if ((st = lm_collect_lock_folder(o->dir, &lock_fd, diag)) != LM_OK) goto done;
  x.fresh = 1;
  /* The whole plan, checked on the device, in a database of its own in
   * memory: the processes take their shares of it. */
  if ((st = lm_db_open(":memory:", LM_DB_CREATE, &plan_db, diag)) != LM_OK) goto done;
  st = lm_db_create_workload(plan_db, o->name, NULL, "lumen", col->origin, col->arch, col->model, 0, 0, &plan_wid,
                             diag);
  if (st == LM_OK) st = lm_collect_store_plan(plan_db, plan_wid, plan, diag);
  if (st == LM_OK) st = lm_collect_load_plan(plan_db, plan_wid, &x.sets, &x.n_sets, diag);
  if (st == LM_OK && col->check_sets)
    st = col->check_sets(col, plan_db, plan_wid, &x.sets, &x.n_sets, o->n_items > 0, diag);
  if (st != LM_OK) goto done;
  if (x.n_sets == 0) {
    st = lm_fail_at(diag, LM_EDATA, o->dir, 0, "profile_set", "the plan has no counter sets");
    goto done;
  }
  if ((st = lm_collect_copy_opts(o, &x.opt, diag)) != LM_OK) goto done;
  if (x.opt.replay < 0) x.opt.replay = LM_REPLAY_APP;
  snprintf(summary->simulated, sizeof summary->simulated, "%s", col->simulated);
  x.n_runs = 1; /* until the first run says how many ranks share the sets */
  st = run_and_compose(&x, cat, summary, diag);
done:
  ctx_fini(&x, st, diag);
  lm_db_close(plan_db);
  lm_plan_free(plan);
  if (lock_fd >= 0) close(lock_fd);
  for (int q = 0; x.discard && q < x.n_ranks; q++) {
    char part[4200];
    snprintf(part, sizeof part, "%s/rank.%d", o->dir, q);
    lm_collect_discard(part, part);
  }
  if (x.discard) lm_collect_discard(o->dir, made_from);
  return st;
}

/* What a part's options say about its split. */
typedef struct split_opts {
  int outside, ranks, total, n_set, bad;
  int set[4096];
} split_opts;

static int take_split_option(const char *key, const char *value, void *user) {
  split_opts *so = user;
  if (strcmp(key, "split_outside") == 0) so->outside = atoi(value);
  else if (strcmp(key, "split_ranks") == 0) so->ranks = atoi(value);
  else if (strcmp(key, "split_sets_total") == 0) so->total = atoi(value);
  else if (strcmp(key, "split_set") == 0) {
    if (so->n_set < 4096) so->set[so->n_set++] = atoi(value);
    else so->bad = 1;
  }
  return 0;
}

/* Part q read back for --resume; the whole plan's sets it holds are
 * copied into x->sets. */
static lm_status open_part(split_ctx *x, int q, split_opts *so, lm_diag *diag) {
  part_db *p = &x->parts[q];
  char dir[4200], db_path[4400];
  snprintf(dir, sizeof dir, "%s/rank.%d", x->o->dir, q);
  snprintf(db_path, sizeof db_path, "%s/%s", dir, LM_WORKLOAD_DB);
  lm_status st = lm_db_open(db_path, LM_DB_WRITE, &p->db, diag);
  if (st == LM_OK) st = lm_collect_only_workload(p->db, db_path, &p->wid, &p->complete, diag);
  memset(so, 0, sizeof *so);
  if (st == LM_OK) st = lm_db_each_option(p->db, p->wid, take_split_option, so, diag);
  if (st == LM_OK) st = lm_collect_load_plan(p->db, p->wid, &p->sets, &p->n_sets, diag);
  if (st != LM_OK) return st;
  if (so->ranks != x->n_ranks || so->total != x->n_sets || !so->outside || so->bad || so->n_set != p->n_sets)
    return lm_fail_at(diag, LM_EDATA, db_path, 0, "profile_option.split_ranks",
                      "rank %d's part is not of this --split ranks profile (%d ranks, %d sets)", q, x->n_ranks,
                      x->n_sets);
  for (int k = 0; k < so->n_set; k++) {
    int g = so->set[k];
    if (g < 0 || g >= x->n_sets)
      return lm_fail_at(diag, LM_EDATA, db_path, 0, "profile_option.split_set",
                        "set %d of %d sets: not a set of the plan", g, x->n_sets);
    if (x->sets[g].counters) continue;
    size_t n = 0;
    while (p->sets[k].counters && p->sets[k].counters[n]) n++;
    x->sets[g].counters = lm_calloc(n + 1, sizeof *x->sets[g].counters);
    if (!x->sets[g].counters) return lm_oom(diag, NULL);
    for (size_t i = 0; i < n; i++)
      if (!(x->sets[g].counters[i] = lm_strdup(p->sets[k].counters[i]))) return lm_oom(diag, NULL);
    if (p->sets[k].accumulate && !(x->sets[g].accumulate = lm_strdup(p->sets[k].accumulate))) return lm_oom(diag, NULL);
  }
  int recovered = 0;
  st = lm_collect_recover(p->db, p->wid, dir, &recovered, diag);
  if (st == LM_OK && recovered)
    lm_collect_note(p->db, p->wid, LM_LOG_INFO, "rank %d: %d run%s left unfinished by an earlier lumen marked "
                    "interrupted", q, recovered, recovered == 1 ? "" : "s");
  int next = lm_collect_next_run_id(p->db, p->wid);
  if (next > x->next_id) x->next_id = next;
  return st;
}

lm_status lm_collect_split_resume(const lm_profile_opts *o, lm_collector *col, const lm_catalog *cat,
                                  lm_profile_summary *summary, lm_diag *diag) {
  split_ctx x = ctx_start(o, col);
  int lock_fd = -1;
  split_opts *so = lm_calloc(1, sizeof *so);
  lm_status st = so ? lm_collect_lock_folder(o->dir, &lock_fd, diag) : lm_oom(diag, NULL);
  if (st != LM_OK) goto done;
  /* Rank 0's part says how many ranks and sets there are. */
  part_db first;
  memset(&first, 0, sizeof first);
  x.parts = &first;
  x.n_ranks = 1;
  char db_path[4400];
  snprintf(db_path, sizeof db_path, "%s/rank.0/%s", o->dir, LM_WORKLOAD_DB);
  st = lm_db_open(db_path, LM_DB_READ, &first.db, diag);
  if (st == LM_OK) st = lm_collect_only_workload(first.db, db_path, &first.wid, &first.complete, diag);
  if (st == LM_OK) st = lm_db_each_option(first.db, first.wid, take_split_option, so, diag);
  lm_db_close(first.db);
  x.parts = NULL;
  x.n_ranks = 0;
  if (st != LM_OK) goto done;
  if (!so->outside || so->ranks < 2 || so->total < 1) {
    st = lm_fail(diag, LM_EINVAL, o->dir,
                 "--resume: this folder holds the rank.R parts of an MPI profile made with lumen inside "
                 "mpirun; resume them there (mpirun -np N lumen profile --resume -w %s)",
                 o->dir);
    goto done;
  }
  x.n_ranks = so->ranks;
  x.n_sets = so->total;
  x.parts = lm_calloc((size_t)x.n_ranks, sizeof *x.parts);
  x.sets = lm_calloc((size_t)x.n_sets, sizeof *x.sets);
  if (!x.parts || !x.sets) {
    st = lm_oom(diag, NULL);
    goto done;
  }
  int all_complete = 1;
  for (int q = 0; st == LM_OK && q < x.n_ranks; q++) {
    st = open_part(&x, q, so, diag);
    all_complete &= x.parts[q].complete;
  }
  for (int g = 0; st == LM_OK && g < x.n_sets; g++)
    if (!x.sets[g].counters)
      st = lm_fail_at(diag, LM_EDATA, o->dir, 0, "profile_option.split_set",
                      "counter set %d of the plan is in no rank's part", g);
  if (st == LM_OK) st = lm_collect_read_options(x.parts[0].db, x.parts[0].wid, &x.opt, diag);
  if (st != LM_OK) goto done;
  if (o->replay >= 0 && o->replay != x.opt.replay) {
    st = lm_fail_at(diag, LM_EINVAL, o->dir, 0, "--replay",
                    "--resume of a --split ranks profile keeps the replay mode it had");
    goto done;
  }
  int same = o->argc == 0 || o->argc == x.opt.argc;
  for (int i = 0; same && i < o->argc; i++) same = strcmp(o->argv[i], x.opt.argv[i]) == 0;
  if (!same || x.opt.argc == 0) {
    st = lm_fail(diag, LM_EINVAL, o->dir,
                 "--resume continues the profile with its own command and options; leave out the command, "
                 "or profile into a new folder");
    goto done;
  }
  if (o->timeout > 0) x.opt.timeout = o->timeout;
  if (all_complete) {
    lm_log(LM_LOG_INFO, "%s: the profile is complete; nothing to resume", o->dir);
    goto done;
  }
  x.n_runs = 1;
  for (int q = 0; x.opt.replay == LM_REPLAY_APP && q < x.n_ranks; q++)
    if (x.parts[q].n_sets > x.n_runs) x.n_runs = x.parts[q].n_sets;
  snprintf(summary->simulated, sizeof summary->simulated, "%s", col->simulated);
  st = run_and_compose(&x, cat, summary, diag);
done:
  ctx_fini(&x, st, diag);
  lm_free(so);
  if (lock_fd >= 0) close(lock_fd);
  return st;
}
