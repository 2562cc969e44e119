/*
 * collect.c - `lumen profile`: plan, run the application with the tool
 * library, keep every finished run, and compose the workload.
 *
 * Invariant: each run is committed to the database before the next starts, so
 * a profile stopped at run k keeps runs 1..k-1 and --resume goes on. In
 * application replay the n-th selected instance of a kernel in every run is
 * one dispatch row; in instance cycling each run of instances through all
 * sets is one (docs/workload-format.md); rows that miss a set are left out
 * and reported. Filters that select nothing in a whole run stop the profile,
 * naming the kernels: a new one leaves nothing, a resumed one keeps its runs.
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "backend/backend.h"
#include "collect/collect.h"
#include "sql/sql.h"
#include "db/db.h"
#include "ranks/ranks.h"

static void run_spec_fini(lm_run_spec *r) {
  for (size_t i = 0; i < r->n_assign; i++) lm_free(r->assign_key[i]);
  lm_free(r->assign_key);
  lm_free(r->assign_instance);
  lm_free(r->assign_set);
  lm_free(r->assign_group);
  memset(r, 0, sizeof *r);
}

/* Signals while a new workload is created (its folder, database, plan
 * and the device check, before the first run): recorded, and acted on
 * once the creation has ended, by removing what was created. A signal's
 * default action would leave a folder with a half-written database that
 * neither --resume nor a new profile accepts. */
static const int creation_signals[] = {SIGINT, SIGTERM, SIGHUP};
static volatile sig_atomic_t g_creation_signal;
static void note_creation_signal(int sig) {
  if (!g_creation_signal) g_creation_signal = sig;
}

typedef struct creation_guard {
  int on;
  struct sigaction saved[3];
} creation_guard;

/* guard_creation: hold the creation signals (noted, not acted on) until
 * unguard_creation. */
static void guard_creation(creation_guard *g) {
  struct sigaction act;
  memset(&act, 0, sizeof act);
  act.sa_handler = note_creation_signal;
  sigemptyset(&act.sa_mask);
  g_creation_signal = 0;
  for (int i = 0; i < 3; i++) {
    sigaction(creation_signals[i], NULL, &g->saved[i]);
    /* a signal the caller ignores (nohup, a background job) stays ignored */
    if (g->saved[i].sa_handler != SIG_IGN) sigaction(creation_signals[i], &act, NULL);
  }
  g->on = 1;
}

/* The signal received while the guard was on (0: none); restores the
 * earlier dispositions. */
static int unguard_creation(creation_guard *g) {
  if (!g->on) return 0;
  for (int i = 0; i < 3; i++) sigaction(creation_signals[i], &g->saved[i], NULL);
  g->on = 0;
  return g_creation_signal;
}

/* One `lumen profile`: what lm_profile_run holds and frees at its end. */
typedef struct profile_ctx {
  lm_sql *db;
  int64_t wid;
  const char *dir;
  const char *tool;
  const char *arch;
  lm_set_info *sets;
  int n_sets;
  lm_stored_opts opt;
  lm_progress prog;
  int runs_done, runs_planned;
  lm_profile_summary *summary;
  const char *telemetry; /* the tool's clock sampler: "auto" or "none" */
  lm_collector *col;     /* the backend */
  int fresh;             /* this lumen created the workload (not --resume) */
  int checked;           /* check_selected ran after a run of this lumen */
  int discard;           /* nothing is kept: remove what this lumen wrote */
  char made_from[4096];  /* the first folder of dir this lumen created, or "" */
  char db_path[4096];    /* dir's workload database */
  int lock_fd;           /* the folder's lock (lm_collect_lock_folder), -1: none */
  int was_complete;      /* --resume of a workload that was complete */
  creation_guard guard;  /* signals held while a new workload is created */
  lm_plan *plan;         /* the plan of a new workload */
  lm_run_spec spec;      /* the run being made */
  lm_workload *rec;      /* the system information the tool library reported */
} profile_ctx;

/* remove_records: the records files of a run (one per process). */
static void remove_records(const char *prefix) {
  char **files = NULL;
  lm_collect_records_files(prefix, &files);
  for (char **f = files; f && *f; f++) unlink(*f);
  lm_collect_records_files_free(files);
}

lm_status lm_collect_split_plan(lm_sql *db, int64_t wid, int of_rank, int n_ranks, lm_diag *diag) {
  lm_rank_info rank;
  rank.rank = of_rank;
  rank.size = n_ranks;
  if (of_rank < 0 || n_ranks < 2 || of_rank >= n_ranks)
    return lm_fail_at(diag, LM_EINVAL, NULL, 0, "--split", "ranks: rank %d of %d is not a rank of an MPI job", of_rank,
                      n_ranks);
  int n_sets = 0;
  lm_status st = lm_db_plan_n_sets(db, wid, &n_sets, diag);
  if (st != LM_OK) return st;
  int *mine = lm_calloc((size_t)(n_sets > 0 ? n_sets : 1), sizeof *mine);
  if (!mine) return lm_oom(diag, NULL);
  int n = lm_split_sets(rank.rank, rank.size, n_sets, mine);
  char num[32];
  /* The others' sets go; this rank's are renumbered in order. */
  st = lm_db_plan_keep_sets(db, wid, mine, n, diag);
  if (st == LM_OK) st = lm_collect_put_option(db, wid, "split", 0, "ranks", diag);
  snprintf(num, sizeof num, "%d", rank.size);
  if (st == LM_OK) st = lm_collect_put_option(db, wid, "split_ranks", 0, num, diag);
  snprintf(num, sizeof num, "%d", n_sets);
  if (st == LM_OK) st = lm_collect_put_option(db, wid, "split_sets_total", 0, num, diag);
  for (int k = 0; st == LM_OK && k < n; k++) {
    snprintf(num, sizeof num, "%d", mine[k]);
    st = lm_collect_put_option(db, wid, "split_set", k, num, diag);
  }
  lm_buf list = {0};
  for (int k = 0; k < n; k++) lm_buf_printf(&list, "%s%d", k ? ", " : "", mine[k]);
  if (st == LM_OK)
    lm_collect_note(db, wid, LM_LOG_INFO, "--split ranks: rank %d of %d collects %d of the %d counter sets (%s)",
                    rank.rank, rank.size, n, n_sets, lm_buf_cstr(&list));
  lm_buf_fini(&list);
  lm_free(mine);
  return st;
}

/* One application run, committed to the database when it ends. */
static lm_status run_once(profile_ctx *x, const lm_run_spec *spec, lm_diag *diag);

/* One run of the application, timed for --self-time. */
static lm_status do_run(profile_ctx *x, const lm_run_spec *spec, lm_diag *diag) {
  uint64_t t0 = lm_phase_begin();
  lm_status st = run_once(x, spec, diag);
  lm_phase_end("application run", t0);
  return st;
}

static lm_status run_once(profile_ctx *x, const lm_run_spec *spec, lm_diag *diag) {
  char config_path[4096], records[4096], why[1024];
  snprintf(config_path, sizeof config_path, "%s/run_%d.config", x->dir, spec->id);
  snprintf(records, sizeof records, "%s/run_%d.records", x->dir, spec->id);
  lm_collect_job job = {x->arch, x->sets, x->n_sets, &x->opt, x->telemetry};
  lm_tool_config cfg;
  lm_status st = lm_collect_tool_config(&job, spec, records, &cfg, diag);
  if (st != LM_OK) return st;
  st = lm_tool_config_write(&cfg, config_path, diag);
  lm_collect_tool_config_fini(&cfg);
  if (st != LM_OK) return st;
  remove_records(records);

  /* The run is known before it starts: a profile killed now shows it. */
  if ((st = lm_collect_run_begin(x->db, x->wid, spec, diag)) != LM_OK) return st;

  if (!x->prog.enabled) {
    char what[64] = "";
    if (spec->mode == LM_REPLAY_APP) snprintf(what, sizeof what, ", set %d", spec->pass);
    else if (spec->mode == LM_REPLAY_ASSIGNED) snprintf(what, sizeof what, ", %zu missing", spec->n_assign);
    lm_collect_note(x->db, x->wid, LM_LOG_INFO, "run %d/%d (%s%s): %s", x->runs_done + 1, x->runs_planned,
         lm_collect_mode_name(spec->mode), what, x->opt.argv[0]);
  }
  x->prog.run = x->runs_done;
  x->prog.runs = x->runs_planned;
  x->prog.read_at = 0;
  x->prog.n_files = 0;
  x->prog.len = 0;
  lm_run_outcome how;
  lm_diag run_diag;
  lm_diag_clear(&run_diag);
  lm_status run_st = lm_collect_run_app(x->opt.argv, x->tool, config_path, records, spec->id,
                                        x->opt.timeout, (char const(*)[4200])x->col->env,
                                        x->col->n_env, &x->prog, &how, &run_diag);
  if (x->prog.enabled) fputc('\n', stderr);
  if (run_st != LM_OK && run_st != LM_EDATA) {
    /* The program could not be started at all. */
    lm_collect_run_forget(x->db, x->wid, spec->id);
    unlink(config_path);
    *diag = run_diag;
    return run_st;
  }
  /* Keep what the run wrote, whatever happened. */
  long n_dispatches = 0;
  int tool_ok = 0;
  const char *status = how.timed_out ? "timeout" : how.interrupted ? "interrupted"
                       : run_st == LM_OK ? "ok" : "failed";
  st = lm_collect_run_end(x->db, x->wid, spec, records, status, &how, &n_dispatches, &tool_ok, why,
                          sizeof why, diag);
  if (st != LM_OK) return st;
  /* The run is in the database: its files are no longer needed. */
  remove_records(records);
  unlink(config_path);
  x->runs_done++;
  x->summary->runs++;
  if (run_st == LM_OK && tool_ok) {
    if (x->prog.enabled)
      lm_collect_note(x->db, x->wid, LM_LOG_DEBUG, "run %d: %ld dispatches", spec->id, n_dispatches);
    return LM_OK;
  }
  char what[256];
  if (spec->mode == LM_REPLAY_APP)
    snprintf(what, sizeof what, "run %d (application replay, set %d of %d)", spec->id, spec->pass,
             x->n_sets);
  else
    snprintf(what, sizeof what, "run %d (%s)", spec->id,
             spec->mode == LM_REPLAY_INSTANCE ? "instance cycling" : "filling missing sets");
  char sigbuf[64];
  /* Which processes of several did not finish (pid, host, rank). */
  const char *procs = strncmp(why, "process ", 8) == 0 ? why : "";
  const char *sep = procs[0] ? "; " : "";
  if (how.timed_out)
    return lm_fail(diag, LM_EDATA, x->opt.argv[0],
                   "%s: the application did not finish within --timeout %g s and was stopped "
                   "after %ld dispatches; earlier runs are kept (`lumen profile --resume -w %s` "
                   "runs it again)",
                   what, x->opt.timeout, n_dispatches, x->dir);
  if (how.interrupted)
    return lm_fail(diag, LM_EDATA, x->opt.argv[0],
                   "%s: interrupted by signal %s (passed on to the application) after %ld "
                   "dispatches; earlier runs are kept (`lumen profile --resume -w %s` continues)",
                   what, lm_collect_signal_text(how.interrupted, sigbuf, sizeof sigbuf), n_dispatches, x->dir);
  if (how.sig)
    return lm_fail(diag, LM_EDATA, x->opt.argv[0],
                   "%s: the application was killed by signal %s after %ld dispatches%s%s; earlier "
                   "runs are kept (`lumen profile --resume -w %s` continues)",
                   what, lm_collect_signal_text(how.sig, sigbuf, sizeof sigbuf), n_dispatches, sep, procs, x->dir);
  if (how.exit_code != 0)
    return lm_fail(diag, LM_EDATA, x->opt.argv[0],
                   "%s: the application exited with status %d%s%s; earlier runs are kept "
                   "(`lumen profile --resume -w %s` continues)",
                   what, how.exit_code, sep, procs, x->dir);
  return lm_fail(diag, LM_EDATA, x->opt.argv[0], "%s: %s", what,
                 why[0] ? why : "the tool library did not finish its records");
}

lm_status lm_collect_lock_folder(const char *dir, int *fd_out, lm_diag *diag) {
  int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return lm_fail(diag, LM_EIO, dir, "cannot open the folder: %s", strerror(errno));
  if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
    int err = errno;
    close(fd);
    if (err == EWOULDBLOCK)
      return lm_fail(diag, LM_EINVAL, dir, "another `lumen profile` is writing this workload; wait for it to end");
    return lm_fail(diag, LM_EIO, dir, "cannot lock the folder: %s", strerror(err));
  }
  *fd_out = fd;
  return LM_OK;
}

int lm_collect_dir_is_empty(const char *dir) {
  DIR *d = opendir(dir);
  if (!d) return errno == ENOENT;
  struct dirent *e;
  int empty = 1;
  while (empty && (e = readdir(d)) != NULL)
    empty = strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0;
  closedir(d);
  return empty;
}

/* copy_list: n strings into a new array *out (room for n + 1), *n_out of
 * them copied; 0 when out of memory (what was copied stays for the
 * caller to free). */
static int copy_list(const char *const *v, size_t n, char ***out, size_t *n_out) {
  *out = lm_calloc(n + 1, sizeof **out);
  for (size_t i = 0; *out && i < n; i++) {
    if (!((*out)[i] = lm_strdup(v[i]))) return 0;
    (*n_out)++;
  }
  return *out != NULL;
}

/* copy_text: a copy of v into *out (NULL stays NULL); 0 when out of memory. */
static int copy_text(const char *v, char **out) {
  *out = v ? lm_strdup(v) : NULL;
  return !v || *out;
}

lm_status lm_collect_copy_opts(const lm_profile_opts *o, lm_stored_opts *s, lm_diag *diag) {
  memset(s, 0, sizeof *s);
  size_t argc = 0;
  int ok = copy_list((const char *const *)o->argv, (size_t)o->argc, &s->argv, &argc);
  s->argc = (int)argc;
  ok = ok && copy_list(o->items, o->n_items, &s->items, &s->n_items);
  ok = ok && copy_list(o->kernels, o->n_kernels, &s->kernels, &s->n_kernels);
  ok = ok && copy_list(o->regions, o->n_regions, &s->regions, &s->n_regions);
  ok = ok && copy_text(o->instance, &s->instance) && copy_text(o->dispatch, &s->dispatch) &&
       copy_text(o->gpu, &s->gpu) && copy_text(o->name ? o->name : "", &s->name);
  s->replay = o->replay;
  s->key_grid = o->key_grid;
  s->timeout = o->timeout;
  return ok ? LM_OK : lm_oom(diag, NULL);
}

/* The kernels a run launched, for the message when none was selected. */
typedef struct kernels_seen {
  lm_buf names; /* the first ten, "'k' (n dispatches), ..." */
  size_t n_names;
} kernels_seen;

static int see_kernel(const char *kernel, int n_dispatches, void *user) {
  kernels_seen *k = user;
  if (k->n_names < 10)
    lm_buf_printf(&k->names, "%s'%s' (%d dispatch%s)", k->n_names ? ", " : "", kernel, n_dispatches,
                  n_dispatches == 1 ? "" : "es");
  k->n_names++;
  return 0;
}

/* put_word: v as one shell word: as it is when it needs no quotes, else
 * in single quotes (a quote inside as '\''). */
static void put_word(lm_buf *b, const char *v) {
  int plain = *v != '\0';
  for (const char *c = v; plain && *c; c++)
    plain = (*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') ||
            strchr("_-.,:/+=@%", *c);
  if (plain) {
    lm_buf_puts(b, v);
    return;
  }
  lm_buf_putc(b, '\'');
  for (const char *c = v; *c; c++) {
    if (*c == '\'') lm_buf_puts(b, "'\\''");
    else lm_buf_putc(b, *c);
  }
  lm_buf_putc(b, '\'');
}

/* filters_text: the profile's filters as its command line gave them
 * ("-k nomatch -g 1"); "the filters" when it gave none. */
static void filters_text(const lm_stored_opts *o, lm_buf *b) {
  for (size_t i = 0; i < o->n_kernels; i++) {
    lm_buf_printf(b, "%s-k ", b->len ? " " : "");
    put_word(b, o->kernels[i]);
  }
  const char *flags[] = {"--instance", "-d", "-g"}, *values[] = {o->instance, o->dispatch, o->gpu};
  for (size_t i = 0; i < 3; i++) {
    if (!values[i]) continue;
    lm_buf_printf(b, "%s%s ", b->len ? " " : "", flags[i]);
    put_word(b, values[i]);
  }
  for (size_t i = 0; i < o->n_regions; i++) {
    lm_buf_printf(b, "%s-r ", b->len ? " " : "");
    put_word(b, o->regions[i]);
  }
  if (!b->len) lm_buf_printf(b, "the filters");
}

lm_status lm_collect_unselected(lm_sql *db, int64_t wid, int64_t run, const lm_stored_opts *opt,
                                const char *dir, int discarded, lm_diag *diag) {
  kernels_seen seen = {{0}, 0};
  lm_buf filters = {0};
  lm_db_each_run_kernel(db, wid, run, see_kernel, &seen, NULL);
  filters_text(opt, &filters);
  const char *fate = discarded ? "no workload was written (profile again with filters that match)"
                               : "the folder's runs are kept, but --resume keeps these filters and cannot "
                                 "complete it (profile again into a new folder)";
  size_t n_names = seen.n_names;
  lm_status st =
      n_names ? lm_fail(diag, LM_EINVAL, dir, "%s selected none of the %zu kernel%s the application launched: %s%s; %s",
                        lm_buf_cstr(&filters), n_names, n_names == 1 ? "" : "s", lm_buf_cstr(&seen.names),
                        n_names > 10 ? ", ..." : "", fate)
              : lm_fail(diag, LM_EDATA, dir, "the application launched no GPU kernel in run %lld; %s", (long long)run,
                        discarded ? "no workload was written" : "the folder's runs are kept");
  lm_buf_fini(&seen.names);
  lm_buf_fini(&filters);
  return st;
}

/* check_selected: LM_OK when some run of the workload selected a
 * dispatch; else the error of lm_collect_unselected over run `run_id`,
 * and a workload this lumen created is to be removed (x->discard). */
static lm_status check_selected(profile_ctx *x, int64_t run_id, lm_diag *diag) {
  if (lm_db_run_n_selected(x->db, x->wid, -1) > 0) return LM_OK;
  x->discard = x->fresh;
  return lm_collect_unselected(x->db, x->wid, run_id, &x->opt, x->dir, x->discard, diag);
}

void lm_collect_first_missing(const char *dir, char *out, size_t cap) {
  char path[4096];
  struct stat sb;
  out[0] = '\0';
  snprintf(path, sizeof path, "%s", dir);
  for (char *p = path + 1;; p++) {
    if (*p != '/' && *p != '\0') continue;
    char c = *p;
    *p = '\0';
    if (stat(path, &sb) != 0 && errno == ENOENT) {
      snprintf(out, cap, "%s", path);
      return;
    }
    if (!c) return;
    *p = c;
  }
}

void lm_collect_discard(const char *dir, const char *made_from) {
  static const char *const files[] = {"", "-journal", "-wal", "-shm"};
  char path[4096];
  for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
    snprintf(path, sizeof path, "%s/%s%s", dir, LM_WORKLOAD_DB, files[i]);
    unlink(path);
  }
  if (!made_from[0]) return;
  snprintf(path, sizeof path, "%s", dir);
  size_t floor = strlen(made_from), len = strlen(path);
  while (len > 1 && path[len - 1] == '/') path[--len] = '\0';
  while (len >= floor && rmdir(path) == 0) {
    char *slash = strrchr(path, '/');
    if (!slash || slash == path) break;
    *slash = '\0';
    len = (size_t)(slash - path);
  }
}

/* resume_workload: --resume of the workload in o->dir: its folder locked,
 * its database open, its stored options (a new --replay or --timeout
 * stored over theirs), runs a lumen that died left 'running' recovered,
 * and its plan loaded. Another command is refused, and so are filters
 * that selected nothing in a whole run. */
static lm_status resume_workload(profile_ctx *x, const lm_profile_opts *o, lm_diag *diag) {
  lm_status st;
  if ((st = lm_collect_lock_folder(o->dir, &x->lock_fd, diag)) != LM_OK) return st;
  if ((st = lm_db_open(x->db_path, LM_DB_WRITE, &x->db, diag)) != LM_OK) return st;
  int complete = 0;
  if ((st = lm_collect_only_workload(x->db, x->db_path, &x->wid, &complete, diag)) != LM_OK) return st;
  if ((st = lm_collect_read_options(x->db, x->wid, &x->opt, diag)) != LM_OK) return st;
  x->was_complete = complete;
  if (o->replay >= 0 && o->replay != x->opt.replay) {
    /* e.g. an instance-cycling profile continued with --replay auto */
    char num[16];
    snprintf(num, sizeof num, "%d", o->replay);
    if ((st = lm_collect_put_option(x->db, x->wid, "replay", 0, num, diag)) != LM_OK) return st;
    x->opt.replay = o->replay;
  }
  if (x->opt.argc == 0) return lm_fail_at(diag, LM_EDATA, x->db_path, 0, "profile_option", "no command to resume");
  if (o->timeout > 0 && o->timeout != x->opt.timeout) {
    char num[32];
    snprintf(num, sizeof num, "%.17g", o->timeout);
    if ((st = lm_collect_put_option(x->db, x->wid, "timeout", 0, num, diag)) != LM_OK) return st;
    x->opt.timeout = o->timeout;
  }
  /* A run that a lumen which died left 'running', and its files. */
  int recovered = 0;
  if ((st = lm_collect_recover(x->db, x->wid, o->dir, &recovered, diag)) != LM_OK) return st;
  if (recovered)
    lm_collect_note(x->db, x->wid, LM_LOG_INFO, "%d run%s left unfinished by an earlier lumen marked interrupted",
                    recovered, recovered == 1 ? "" : "s");
  if (o->argc > 0) {
    int same = o->argc == x->opt.argc;
    for (int i = 0; same && i < o->argc; i++) same = strcmp(o->argv[i], x->opt.argv[i]) == 0;
    if (!same)
      return lm_fail(diag, LM_EINVAL, o->dir,
                     "--resume continues the profile of `%s ...` with its own command and "
                     "options; leave out the command, or profile into a new folder",
                     x->opt.argv[0]);
  }
  if ((st = lm_collect_load_plan(x->db, x->wid, &x->sets, &x->n_sets, diag)) != LM_OK) return st;
  /* A whole run that launched kernels and selected none: the stored
   * filters select nothing in the next one either. */
  int64_t full = lm_db_run_n_selected(x->db, x->wid, -1) == 0 ? lm_db_first_full_run(x->db, x->wid) : 0;
  return full > 0 ? check_selected(x, full, diag) : LM_OK;
}

/* store_workload: in one transaction, the new workload's row, its
 * options, the plan and, with --split ranks, this rank's share of it. */
static lm_status store_workload(profile_ctx *x, const lm_profile_opts *o, lm_diag *diag) {
  lm_status st = lm_db_begin(x->db, diag);
  if (st != LM_OK) return st;
  snprintf(x->summary->simulated, sizeof x->summary->simulated, "%s", x->col->simulated);
  st = lm_db_create_workload(x->db, o->name, NULL, "lumen", x->col->origin, x->col->arch, x->col->model, 0, 0, &x->wid,
                             diag);
  if (st == LM_OK) st = lm_collect_store_options(x->db, x->wid, o, diag);
  if (st == LM_OK) st = lm_collect_store_plan(x->db, x->wid, x->plan, diag);
  lm_rank_info me;
  if (st == LM_OK && o->split_ranks)
    st = lm_rank_detect_env(&me) ? lm_collect_split_plan(x->db, x->wid, me.rank, me.size, diag)
                                 : lm_collect_split_plan(x->db, x->wid, -1, 0, diag);
  if (st == LM_OK) st = lm_db_commit(x->db, diag);
  else lm_db_rollback(x->db);
  return st;
}

/* create_workload: a new workload in o->dir (which must not hold one):
 * the plan for cat's metrics, the folder, locked, and its database with
 * the workload, its options and its plan, checked on the device. Signals
 * are held from the folder's creation to the end (guard_creation); one
 * that came stops the profile with nothing kept. exists: the database is
 * there already. */
static lm_status create_workload(profile_ctx *x, const lm_profile_opts *o, const lm_catalog *cat, int exists,
                                 lm_diag *diag) {
  lm_collector *col = x->col;
  lm_status st;
  if (o->argc < 1)
    return lm_fail(diag, LM_EINVAL, NULL, "no application to profile (lumen profile -n NAME -- APP ARGS)");
  if ((st = lm_collect_check_program(o->argv[0], diag)) != LM_OK) return st;
  if (exists || !lm_collect_dir_is_empty(o->dir))
    return lm_fail(diag, LM_EINVAL, o->dir,
                   "already exists; lumen never overwrites a workload (choose another -w or -n, "
                   "or add --resume to continue an unfinished profile)");
  /* A bad -b fails before anything is created. */
  uint64_t t_plan = lm_phase_begin();
  int plan_replay = o->replay < 0 ? LM_REPLAY_APP : o->replay;
  if ((st = col->plan(col, cat, o->items, o->n_items, plan_replay, &x->plan, diag)) != LM_OK) return st;
  lm_phase_end("plan counter sets", t_plan);
  /* What this lumen creates, to remove should it keep nothing. Inside
   * an MPI job dir is the rank's part, in a folder the other ranks
   * share: only the part is its own. */
  guard_creation(&x->guard);
  lm_rank_info part;
  if (lm_rank_detect_env(&part) && part.size > 1)
    snprintf(x->made_from, sizeof x->made_from, "%s", access(o->dir, F_OK) == 0 ? "" : o->dir);
  else
    lm_collect_first_missing(o->dir, x->made_from, sizeof x->made_from);
  if ((st = lm_make_dirs(o->dir, "the workload folder", "choose a writable place with -w", diag)) != LM_OK)
    return st;
  if ((st = lm_collect_lock_folder(o->dir, &x->lock_fd, diag)) != LM_OK) return st;
  x->fresh = 1;
  if ((st = lm_db_open(x->db_path, LM_DB_CREATE, &x->db, diag)) != LM_OK) return st;
  if ((st = lm_collect_copy_opts(o, &x->opt, diag)) != LM_OK) return st;
  if (x->opt.replay < 0) x->opt.replay = LM_REPLAY_APP;
  if ((st = store_workload(x, o, diag)) != LM_OK) return st;
  if ((st = lm_collect_load_plan(x->db, x->wid, &x->sets, &x->n_sets, diag)) != LM_OK) return st;
  lm_rank_info rank;
  if (lm_rank_detect_env(&rank) && rank.size > 1)
    lm_collect_note(x->db, x->wid, LM_LOG_DEBUG, "MPI rank %d of %d (local rank %d, from %s): this "
                    "folder is the rank's part of the workload", rank.rank, rank.size, rank.local_rank,
                    rank.launcher);
  /* The sets on the device, before the first run. */
  if (col->check_sets &&
      (st = col->check_sets(col, x->db, x->wid, &x->sets, &x->n_sets, o->n_items > 0, diag)) != LM_OK)
    return st;
  int sig = unguard_creation(&x->guard);
  if (sig) {
    char name[32];
    x->discard = x->fresh;
    return lm_fail(diag, LM_EDATA, o->dir, "interrupted by signal %s before the first run: nothing was kept",
                   lm_collect_signal_text(sig, name, sizeof name));
  }
  return LM_OK;
}

/* run_per_set: application (or kernel) replay: one run per set, each
 * set's run skipped when a finished one is recorded. Filters that select
 * nothing stop after the first run. */
static lm_status run_per_set(profile_ctx *x, lm_diag *diag) {
  int replay = x->opt.replay;
  lm_run_spec *spec = &x->spec;
  lm_status st = LM_OK;
  int *modes = lm_calloc((size_t)x->n_sets + 1, sizeof *modes), *passes = lm_calloc((size_t)x->n_sets + 1, sizeof *passes);
  int n_runs = modes && passes ? lm_collect_run_plan(replay, x->n_sets, modes, passes, x->n_sets) : -2;
  if (n_runs < 0) {
    st = n_runs == -2 ? lm_oom(diag, NULL)
                      : lm_fail_at(diag, LM_EDATA, x->db_path, 0, "profile_set",
                                   "kernel replay needs one counter set; the plan has %d", x->n_sets);
    goto done;
  }
  x->runs_planned = n_runs;
  for (int r = 0; r < n_runs && st == LM_OK; r++) {
    if (lm_collect_run_done(x->db, x->wid, "app", passes[r])) {
      x->runs_done++;
      continue;
    }
    spec->id = lm_collect_next_run_id(x->db, x->wid);
    spec->n_sets = x->n_sets;
    spec->mode = modes[r];
    spec->pass = passes[r];
    st = do_run(x, spec, diag);
    /* Filters that select nothing stop after the first run, naming the
     * kernels the application launched. */
    if (st == LM_OK && !x->checked) {
      x->checked = 1;
      st = check_selected(x, spec->id, diag);
    }
  }
done:
  lm_free(modes);
  lm_free(passes);
  return st;
}

/* run_cycling: instance cycling: one run through every set, unless a
 * finished one is recorded; with auto, then runs that fill the rows
 * still missing sets, at most one per set. */
static lm_status run_cycling(profile_ctx *x, lm_diag *diag) {
  lm_run_spec *spec = &x->spec;
  lm_status st;
  x->runs_planned = 1;
  if (!lm_collect_run_done(x->db, x->wid, "instance", -1)) {
    spec->id = lm_collect_next_run_id(x->db, x->wid);
    spec->n_sets = x->n_sets;
    spec->mode = LM_REPLAY_INSTANCE;
    if ((st = do_run(x, spec, diag)) != LM_OK) return st;
    x->checked = 1;
    if ((st = check_selected(x, spec->id, diag)) != LM_OK) return st;
  } else {
    x->runs_done++;
  }
  /* auto: extra runs only for what is still missing. */
  for (int round = 0; x->opt.replay == LM_REPLAY_AUTO && round < x->n_sets; round++) {
    run_spec_fini(spec);
    size_t gaps = 0;
    if ((st = lm_collect_plan_gaps(x->db, x->wid, x->n_sets, spec, &gaps, diag)) != LM_OK) return st;
    if (gaps == 0 || spec->n_assign == 0) break;
    x->runs_planned = x->runs_done + 1;
    spec->id = lm_collect_next_run_id(x->db, x->wid);
    spec->n_sets = x->n_sets;
    spec->mode = LM_REPLAY_ASSIGNED;
    lm_collect_note(x->db, x->wid, LM_LOG_INFO,
                    "%zu dispatch rows miss counter sets: one more run collects %zu of them", gaps,
                    spec->n_assign);
    if ((st = do_run(x, spec, diag)) != LM_OK) return st;
  }
  return LM_OK;
}

/* compose_workload: the workload's rows from the recorded runs, with the
 * device's system information; LM_EDATA when no row got every set (the
 * runs are kept). */
static lm_status compose_workload(profile_ctx *x, const lm_profile_opts *o, const lm_catalog *cat,
                                  lm_diag *diag) {
  lm_profile_summary *summary = x->summary;
  lm_status st;
  char ip_blocks[1024] = "";
  for (size_t i = 0, at = 0; i < x->opt.n_items && at < sizeof ip_blocks - 1; i++)
    at += (size_t)snprintf(ip_blocks + at, sizeof ip_blocks - at, "%s%s", i ? "|" : "", x->opt.items[i]);
  /* The device's system information: the backend's, or what the tool
   * library reported from inside the application. */
  const lm_sysinfo *info = x->col->info;
  const lm_table *roofline = x->col->roofline;
  if (!info) {
    if ((st = lm_collect_device_sysinfo(x->db, x->wid, &x->rec, diag)) != LM_OK) return st;
    info = &x->rec->sysinfo;
    roofline = NULL;
  }
  uint64_t t_compose = lm_phase_begin();
  st = lm_collect_compose(x->db, x->wid, x->sets, x->n_sets, cat->accumulate ? cat->accumulate : "SQ_ACCUM_PREV_HIRES",
                          cat, info, roofline, x->opt.name, x->opt.argv, x->opt.argc, ip_blocks[0] ? ip_blocks : NULL,
                          summary, diag);
  lm_phase_end("compose dispatch rows", t_compose);
  if (st != LM_OK) return st;
  lm_collect_note(x->db, x->wid, LM_LOG_DEBUG, "composed %zu dispatch rows from %d counter sets%s%s",
                  summary->dispatches, x->n_sets, summary->dropped ? "; left out: " : "",
                  summary->dropped ? summary->dropped_detail : "");
  if (summary->dispatches == 0)
    return lm_fail(diag, LM_EDATA, o->dir,
                   "no selected dispatch got all %d counter sets (%s); the runs are kept: "
                   "`lumen profile --resume --replay auto -w %s` runs the application again "
                   "for the missing sets",
                   x->n_sets, summary->dropped ? summary->dropped_detail : "no dispatch was selected", o->dir);
  return LM_OK;
}

lm_status lm_profile_run(const lm_profile_opts *o, lm_profile_summary *summary, lm_diag *diag) {
  memset(summary, 0, sizeof *summary);
  profile_ctx x;
  memset(&x, 0, sizeof x);
  x.summary = summary;
  x.dir = o->dir;
  x.tool = o->tool_library;
  x.telemetry = o->telemetry;
  x.lock_fd = -1;
  lm_status st = LM_OK;
  lm_collector col;
  memset(&col, 0, sizeof col);
  snprintf(x.db_path, sizeof x.db_path, "%s/%s", o->dir, LM_WORKLOAD_DB);

  /* The counter backend and its device, before anything is created. */
  if ((st = lm_collect_open_backend(&col, o->backend, o->tool_library, diag)) != LM_OK) return st;
  x.col = &col;
  x.arch = col.arch;
  const lm_catalog *cat = lm_metrics_builtin(col.arch);
  if (!cat) {
    st = lm_fail_at(diag, LM_EARCH, NULL, 0, "gpu_arch", "the device is %s, which lumen has no definitions for",
                    col.arch);
    goto done;
  }

  /* --split ranks with lumen outside mpirun: the ranks' parts (split_out.c). */
  lm_rank_info inside;
  if (o->split_ranks && !o->resume && !(lm_rank_detect_env(&inside) && inside.size > 1)) {
    st = lm_collect_split_outside(o, &col, cat, summary, diag);
    goto done;
  }
  struct stat sb;
  int exists = stat(x.db_path, &sb) == 0;
  if (o->resume && !exists && lm_ranks_present(o->dir)) {
    /* The parts of --split ranks outside mpirun (split_out.c). */
    st = lm_collect_split_resume(o, &col, cat, summary, diag);
    goto done;
  }
  if (o->resume && !exists) {
    st = lm_fail(diag, LM_ENOTFOUND, o->dir, "nothing to resume: no %s in this folder", LM_WORKLOAD_DB);
    goto done;
  }
  if ((st = o->resume ? resume_workload(&x, o, diag) : create_workload(&x, o, cat, exists, diag)) != LM_OK)
    goto done;
  if (x.n_sets == 0) {
    st = lm_fail_at(diag, LM_EDATA, x.db_path, 0, "profile_set", "the plan has no counter sets");
    goto done;
  }
  summary->sets = x.n_sets;
  x.prog.enabled = o->progress;
  x.prog.n_sets = x.n_sets;
  x.prog.seen_sets = lm_calloc((size_t)x.n_sets, 1);
  if (!x.prog.seen_sets) {
    st = lm_oom(diag, NULL);
    goto done;
  }

  /* The runs. */
  int replay = x.opt.replay;
  st = replay == LM_REPLAY_APP || replay == LM_REPLAY_KERNEL ? run_per_set(&x, diag) : run_cycling(&x, diag);
  if (st != LM_OK) goto done;
  if (x.was_complete && summary->runs == 0) {
    lm_log(LM_LOG_INFO, "%s: the profile is complete; nothing to resume", o->dir);
    summary->sets = 0;
    goto done;
  }
  st = compose_workload(&x, o, cat, diag);
done:
  if (unguard_creation(&x.guard)) x.discard = x.fresh; /* interrupted while failing */
  if (st != LM_OK && x.db && x.wid) {
    char line[2048];
    lm_collect_note(x.db, x.wid, LM_LOG_DEBUG, "stopped: %s", lm_diag_format(diag, line, sizeof line));
  }
  run_spec_fini(&x.spec);
  lm_free(x.prog.seen_sets);
  lm_free(x.prog.buf);
  lm_collect_sets_fini(x.sets, x.n_sets);
  lm_collect_stored_fini(&x.opt);
  lm_db_close(x.db);
  lm_plan_free(x.plan);
  lm_workload_free(x.rec);
  lm_collect_close_backend(&col);
  if (x.lock_fd >= 0) close(x.lock_fd);
  if (x.discard) lm_collect_discard(o->dir, x.made_from);
  return st;
}
