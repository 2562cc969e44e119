/*
 * collect.h - the parts of `lumen profile` that its files share (internal
 * to the collect library): running the application (app.c), recording
 * runs in the workload's database (record.c), composing dispatch rows from
 * the recorded runs (compose.c), and the run loop (collect.c).
 */
#ifndef LUMEN_COLLECT_H
#define LUMEN_COLLECT_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "backend/cupti_host.h"
#include "backend/rocprofiler_abi.h"
#include "db/db.h"
#include "profile/profile.h"

/* Options read back for --resume: owned strings. */
typedef struct lm_stored_opts {
  char **argv;
  int argc;
  char **items, **kernels, **regions;
  size_t n_items, n_kernels, n_regions;
  char *instance, *dispatch, *gpu, *name;
  int replay, key_grid;
  double timeout; /* seconds per run, 0: none */
} lm_stored_opts;

typedef struct lm_set_info {
  char **counters; /* NULL-terminated */
  char *accumulate;
} lm_set_info;

typedef struct lm_run_spec {
  int id;
  int mode;   /* lm_replay */
  int pass;
  /* assigned (key, selected) -> set */
  char **assign_key;
  int64_t *assign_instance;
  int *assign_set;
  int64_t *assign_group; /* the composed row each assignment completes */
  size_t n_assign;
  int n_sets;
} lm_run_spec;

typedef struct lm_progress {
  int enabled;
  int run, runs;
  int n_sets;
  long dispatches;
  unsigned char *seen_sets;
  char *buf;
  size_t len, cap;
  off_t read_at;          /* of the file being read */
  char files[16][64];     /* the records files read so far (their names) */
  off_t file_at[16];      /* and how far */
  int n_files;
} lm_progress;

/* ------------------------------------------------------ the backends */

/* A counter backend as `lumen profile` sees it (PAPI-style: one table of
 * functions per vendor). The core (collect.c) decides what is collected
 * and when; a backend only finds its device, prices and checks the counter
 * sets for it, and names what a run of the application needs in its
 * environment. rocprofiler.c: rocprofiler-sdk; cupti.c: CUPTI. */
typedef struct lm_collector lm_collector;
struct lm_collector {
  const char *name;        /* "rocprofiler-sdk", "cupti" */
  char arch[64];           /* the device's architecture: "gfx90a", "sm_90" */
  char chip[64];           /* NVIDIA: CUPTI's chip name ("GH100"); "" on AMD */
  char model[256];         /* the device's product name, "" when not known before a run */
  char origin[4200];       /* the workload's origin: LM_ORIGIN_SIMULATED... or the device */
  char simulated[1024];    /* the recording a simulated device replays, "" when measured */
  const lm_sysinfo *info;   /* the device's system information when the backend has it
                              before any run (rocprofiler-sdk: the agent's); NULL: the
                              tool library reports it (S lines of the records) */
  const lm_table *roofline; /* the roofline table standing for the benchmarks (the
                              simulated device's recording), NULL: none */
  char env[4][4200];       /* NAME=VALUE added to each run's environment */
  int n_env;
  /* plan: the counter sets of the metrics selected by items for this
   * device under replay (lm_replay or LM_REPLAY_KERNEL). */
  lm_status (*plan)(lm_collector *c, const lm_catalog *cat, const char *const *items,
                    size_t n_items, int replay, lm_plan **out, lm_diag *diag);
  /* check_sets (NULL: nothing to check): the stored sets against the
   * device before the first run; may revise them (*sets reloaded). */
  lm_status (*check_sets)(lm_collector *c, lm_sql *db, int64_t wid, lm_set_info **sets,
                          int *n_sets, int explicit_items, lm_diag *diag);
  void (*close)(lm_collector *c);
  void *impl;
};

/* lm_collect_rocp_open: rocprofiler-sdk with a GPU agent. LM_ENOTFOUND
 * with the reason when there is none. */
lm_status lm_collect_rocp_open(lm_collector *c, lm_diag *diag);
/* lm_collect_cupti_open: an NVIDIA GPU (the CUDA driver, GPU 0), its
 * architecture and chip, counter access and CUPTI; tool is the library
 * the driver injects. LM_ENOTFOUND when there is no driver or GPU,
 * LM_EINVAL for a device lumen cannot profile (unsupported chip, counters
 * restricted to administrators), each with the fix. */
lm_status lm_collect_cupti_open(lm_collector *c, const char *tool, lm_diag *diag);
/* lm_collect_cupti_check: the device facts against lumen's definitions
 * (arch sm_XY from the compute capability, a catalog for it, CUPTI's host
 * support for its chip, counter access); fills c->arch, c->chip, c->model.
 * params_text: the driver's parameters (NULL: unknown); is_root: the
 * process may read restricted counters (root, or CAP_SYS_ADMIN); has_chip: CUPTI's Host API knows the chip (-1:
 * CUPTI not loadable, why_cupti says why). */
lm_status lm_collect_cupti_check(lm_collector *c, const lm_cuda_device *dev, const char *params_text,
                                 int is_root, int has_chip, const char *why_cupti, lm_diag *diag);
/* lm_collect_cupti_env: the environment of a run under CUPTI: the driver
 * injects tool (CUDA_INJECTION64_PATH), the tool loads the libcupti lumen
 * planned with (LUMEN_CUPTI_LIBRARY), and NVTX is forwarded to CUPTI
 * (NVTX_INJECTION64_PATH) unless the user's environment names another
 * injection (user_nvtx non-NULL). Fills c->env. */
void lm_collect_cupti_env(lm_collector *c, const char *tool, const char *cupti_lib,
                          const char *user_nvtx);
/* lm_collect_open_backend: the backend asked for (NULL: rocprofiler-sdk
 * when it has a GPU agent, else CUPTI when the CUDA driver reports an
 * NVIDIA GPU); the error names what each backend lacks. */
lm_status lm_collect_open_backend(lm_collector *c, const char *asked, const char *tool, lm_diag *diag);
void lm_collect_close_backend(lm_collector *c);

/* ------------------------------------------------- the runs and their spec */

/* lm_collect_run_plan: the runs a replay mode needs before any gap is
 * known: application replay (and kernel replay, whose plan is one set) one
 * run per set, modes[i] = LM_REPLAY_APP and passes[i] = i; instance
 * cycling and auto one LM_REPLAY_INSTANCE run (auto adds runs for the
 * gaps afterwards). Returns the number of runs (at most cap), or -1 for
 * kernel replay with more than one set. */
int lm_collect_run_plan(int replay, int n_sets, int *modes, int *passes, int cap);

/* What every run of one profile shares (the tool's configuration but the
 * run's own part). Borrowed pointers. */
typedef struct lm_collect_job {
  const char *arch;
  const lm_set_info *sets;
  int n_sets;
  const lm_stored_opts *opt;
  const char *telemetry; /* "auto" (NULL) or "none" */
} lm_collect_job;

/* lm_collect_tool_config: the configuration the tool library reads for
 * run spec (records into `records`). cfg's arrays are allocated
 * (lm_collect_tool_config_fini), its strings borrowed from job and spec. */
lm_status lm_collect_tool_config(const lm_collect_job *job, const lm_run_spec *spec,
                                 const char *records, lm_tool_config *cfg, lm_diag *diag);
void lm_collect_tool_config_fini(lm_tool_config *cfg);

/* lm_collect_device_sysinfo: the system information the tool library
 * reported (S lines) in the profile's first successful run, from its
 * first process, with the fields a workload carries (workload_name,
 * command, ip_blocks, timestamp, hostname) ahead of them, as a workload
 * holding only system information (lm_workload_free). LM_EDATA when no run
 * reported any (naming the field missing). */
lm_status lm_collect_device_sysinfo(lm_sql *db, int64_t wid, lm_workload **out, lm_diag *diag);

/* ------------------------------------------------------------- app.c */

/* How a run ended. */
typedef struct lm_run_outcome {
  int exit_code;   /* its exit status, or -1 when killed */
  int sig;         /* the signal that killed it, or 0 */
  int timed_out;   /* stopped at its deadline */
  int interrupted; /* the signal lumen received (and forwarded), or 0 */
} lm_run_outcome;

/* lm_collect_run_app: run the application once with the tool library
 * preloaded and env[0..n_env) ("NAME=VALUE") added to its environment, in its own process group, stopped after timeout_s seconds
 * (0: no limit). Returns LM_OK when it ran to completion (exit 0), LM_EDATA
 * when it failed, timed out or was stopped (*out says how), another code
 * (diag filled) when it could not be started. */
lm_status lm_collect_run_app(char *const *argv, const char *tool, const char *config_path,
                             const char *records, int pass, double timeout_s,
                             char const (*env)[4200], int n_env, lm_progress *prog,
                             lm_run_outcome *out, lm_diag *diag);
/* lm_collect_signal_text: "11 (SIGSEGV)" into buf. */
const char *lm_collect_signal_text(int sig, char *buf, size_t cap);
/* lm_collect_check_program: prog can be started (found on PATH when its
 * name has no '/', and executable). */
lm_status lm_collect_check_program(const char *prog, lm_diag *diag);

/* ---------------------------------------------------------- record.c */

void lm_collect_now_text(char *out, size_t cap);
/* Options of the profile (for --resume): one row per value. */
lm_status lm_collect_put_option(lm_sql *db, int64_t wid, const char *key, int pos,
                                const char *value, lm_diag *diag);
lm_status lm_collect_store_options(lm_sql *db, int64_t wid, const lm_profile_opts *o,
                                   lm_diag *diag);
/* lm_collect_read_options: fills out (owned; lm_collect_stored_fini). */
lm_status lm_collect_read_options(lm_sql *db, int64_t wid, lm_stored_opts *out, lm_diag *diag);
void lm_collect_stored_fini(lm_stored_opts *s);
/* The plan's counter sets: stored once, loaded by every run. */
lm_status lm_collect_store_plan(lm_sql *db, int64_t wid, const lm_plan *plan, lm_diag *diag);
lm_status lm_collect_load_plan(lm_sql *db, int64_t wid, lm_set_info **out, int *n_out,
                               lm_diag *diag);
void lm_collect_sets_fini(lm_set_info *sets, int n);
/* lm_collect_records_files: the records files of a run (PREFIX.PID, one
 * per process that loaded the tool library), NULL-terminated, owned
 * (lm_collect_records_files_free); returns their number, or -1 when out
 * of memory (*out NULL). */
int lm_collect_records_files(const char *prefix, char ***out);
void lm_collect_records_files_free(char **list);
/* lm_collect_ingest: read a run's records files (every process's) into
 * the database, with a profile_process row per process: its pid, host,
 * MPI rank, GPUs and slot (its rank, or its place by lowest GPU then pid:
 * the same process in every run). Sets *tool_ok when every process's tool
 * finished (END) without an error; otherwise why names the processes that
 * did not, with their rank. No file at all is not an error (why says so). */
lm_status lm_collect_ingest(lm_sql *db, int64_t wid, const lm_run_spec *spec, const char *prefix,
                            long *n_dispatches, int *tool_ok, char *why, size_t why_cap,
                            lm_diag *diag);
const char *lm_collect_mode_name(int mode);
/* lm_collect_note: a message for the user (lm_log) and for the workload's
 * log table, in its own statement (a profile that stops later keeps it). */
#if defined(__GNUC__)
__attribute__((format(printf, 4, 5)))
#endif
void lm_collect_note(lm_sql *db, int64_t wid, lm_log_level level, const char *fmt, ...);
/* lm_collect_run_done: a run of this mode (and pass; -1 any) finished well. */
int lm_collect_run_done(lm_sql *db, int64_t wid, const char *mode, int pass);
int lm_collect_next_run_id(lm_sql *db, int64_t wid);
/* lm_collect_only_workload: the one workload of a lumen database. */
lm_status lm_collect_only_workload(lm_sql *db, const char *path, int64_t *wid, int *complete,
                                   lm_diag *diag);

/* lm_collect_run_begin: the run's row, status 'running', before it starts
 * (a profile killed during the run shows it). */
lm_status lm_collect_run_begin(lm_sql *db, int64_t wid, const lm_run_spec *spec, lm_diag *diag);
/* lm_collect_run_forget: remove the row of a run that never started. */
void lm_collect_run_forget(lm_sql *db, int64_t wid, int run);
/* lm_collect_run_end: in one transaction, ingest the run's records file
 * and record how it ended: status "ok" (downgraded to "failed" when the
 * tool did not finish cleanly), "failed", "timeout" or "interrupted". */
lm_status lm_collect_run_end(lm_sql *db, int64_t wid, const lm_run_spec *spec, const char *records,
                             const char *status, const lm_run_outcome *how, long *n_dispatches,
                             int *tool_ok, char *why, size_t why_cap, lm_diag *diag);
/* lm_collect_recover: before a --resume, mark runs left 'running' by a
 * lumen that died as 'interrupted' (*n_recovered of them) and remove the
 * run_N.config / run_N.records files left in dir. The caller holds the
 * folder's lock, so no run is active. */
lm_status lm_collect_recover(lm_sql *db, int64_t wid, const char *dir, int *n_recovered,
                             lm_diag *diag);

/* ---------------------------------------------------------- collect.c */

/* lm_collect_lock_folder: one `lumen profile` at a time per workload
 * folder (an advisory lock on the folder, released when lumen ends however
 * it ends), so that a run left 'running' in the database is known to be
 * dead. *fd_out is the lock's descriptor (close it to release). */
lm_status lm_collect_lock_folder(const char *dir, int *fd_out, lm_diag *diag);
/* lm_collect_dir_is_empty: dir is missing or an empty folder. */
int lm_collect_dir_is_empty(const char *dir);
/* lm_collect_copy_opts: the profile's options as --resume reads them back
 * (owned: lm_collect_stored_fini, also after a failure). LM_ENOMEM when a
 * copy cannot be made. */
lm_status lm_collect_copy_opts(const lm_profile_opts *o, lm_stored_opts *s, lm_diag *diag);
/* lm_collect_unselected: the error of filters that selected no dispatch
 * of any run (the caller has checked): it names opt's filters as a
 * command line gives them and the kernels run `run` of db's workload wid
 * launched (LM_EINVAL), or says that run launched none (LM_EDATA).
 * Filters are fixed for the life of a workload, so no later run can
 * select more: `discarded` says the workload this lumen began is removed
 * (lm_collect_discard), else that the folder's runs are kept. */
lm_status lm_collect_unselected(lm_sql *db, int64_t wid, int64_t run, const lm_stored_opts *opt,
                                const char *dir, int discarded, lm_diag *diag);
/* lm_collect_first_missing: into out[0..cap), the shortest leading part
 * of dir (up to a '/' or its end) that does not exist: the first folder
 * that creating dir makes; "" when dir exists. */
void lm_collect_first_missing(const char *dir, char *out, size_t cap);
/* lm_collect_discard: remove what a profile that keeps nothing wrote in
 * dir: its database (with SQLite's side files), then every folder from dir
 * up to made_from (lm_collect_first_missing before dir was made; "": dir
 * was there, empty, and stays). Folders go with rmdir, so one that holds
 * anything else stays. Close the database first. */
void lm_collect_discard(const char *dir, const char *made_from);
/* lm_collect_split_plan: --split ranks: keep rank `rank`'s share of the
 * planned sets of n_ranks (lm_split_sets; renumbered from 0) and record
 * which sets of the whole plan they are: options split = "ranks",
 * split_ranks = N, split_sets_total = S and split_set (position k: the
 * plan's number of this part's set k). LM_EINVAL when rank is not one of
 * n_ranks (2 or more). */
lm_status lm_collect_split_plan(lm_sql *db, int64_t wid, int rank, int n_ranks, lm_diag *diag);

/* -------------------------------------------------------- split_out.c */

/* lm_collect_split_outside: `lumen profile --split ranks -- mpirun -np N
 * APP`: the ranks' processes each collect their share of the sets, and
 * lumen writes the profile as the rank.R parts lumen inside mpirun writes
 * (o->dir/rank.R), running the application ceil(sets / N) times (once
 * with instance cycling). col is the open backend, cat its metrics. A run
 * that fails names the ranks that did not finish; what they recorded stays
 * in the parts. summary: ranks, sets of the whole plan, runs, dispatches. */
lm_status lm_collect_split_outside(const lm_profile_opts *o, lm_collector *col, const lm_catalog *cat,
                                   lm_profile_summary *summary, lm_diag *diag);
/* lm_collect_split_resume: `lumen profile --resume -w DIR` of such a
 * profile: the runs its parts still miss, then their rows (nothing when
 * every part is complete: summary->sets 0). Parts written by lumen inside
 * mpirun are refused (LM_EINVAL: resume them inside mpirun). */
lm_status lm_collect_split_resume(const lm_profile_opts *o, lm_collector *col, const lm_catalog *cat,
                                  lm_profile_summary *summary, lm_diag *diag);

/* --------------------------------------------------------- sysinfo.c */

/* lm_collect_sysinfo: the system information of a profile on GPU agent
 * `agent` (the SDK's description; NULL: none), in the fields and order of
 * the reference tool's sysinfo.csv: the agent's fields, smi_sclk and
 * smi_mclk (MHz, rocm-smi's top clocks; <= 0 when unknown) where the
 * agent has no clock, cur_* equal to the top clocks, the channel, bank,
 * pipe and scalar-cache counts from the architecture's facts in cat
 * (NULL: none), hbm_bw from max_mclk and the channels or, without them,
 * the bandwidth of the architecture's typical product (lm_devices_field)
 * with one warning (empty when lumen knows no product), and with with_host
 * the host's fields. workload_name, command, timestamp and ip_blocks are
 * left empty for compose. Strings and arrays live in arena. */
lm_status lm_collect_sysinfo(const rocp_agent *agent, const lm_catalog *cat, double smi_sclk,
                             double smi_mclk, int with_host, lm_arena *arena, lm_sysinfo *out,
                             lm_diag *diag);

/* --------------------------------------------------------- compose.c */

/* lm_collect_compose: line the successful runs up into dispatch rows and
 * write the workload's tables (pmc_perf, level tables, the device's
 * system information `info` with this profile's name, command, time and
 * blocks, the roofline table when there is one (NULL: none), regions,
 * clocks per dispatch); rows that miss a set are counted and described in
 * summary. A total over instances recorded as X_sum is composed as X
 * where the metrics of cat (NULL: none) read X and no X_sum. */
lm_status lm_collect_compose(lm_sql *db, int64_t wid, const lm_set_info *sets, int n_sets,
                             const char *accumulator, const lm_catalog *cat, const lm_sysinfo *info,
                             const lm_table *roofline, const char *name,
                             char *const *argv, int argc, const char *ip_blocks,
                             lm_profile_summary *summary, lm_diag *diag);
/* lm_collect_plan_gaps: the rows still missing sets after the runs so
 * far (*n_gaps), and the assignments of the next run that fills them. */
lm_status lm_collect_plan_gaps(lm_sql *db, int64_t wid, int n_sets, lm_run_spec *run,
                               size_t *n_gaps, lm_diag *diag);

#endif
