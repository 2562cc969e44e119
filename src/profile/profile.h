/*
 * profile.h - collection policy, independent of any GPU vendor: which
 * counters the asked-for metrics need, how they are packed into counter
 * sets under the hardware's per-block limits, and (in the files that
 * follow) which set each dispatch gets.
 */
#ifndef LUMEN_PROFILE_H
#define LUMEN_PROFILE_H

#include <stddef.h>
#include <stdint.h>

#include "base/base.h"
#include "metrics/metrics.h"

/* ---------------------------------------------------------------- plans */

/* One hardware counter in a set. Values of per-instance counters come with
 * all their instances (TCC_HIT gives TCC_HIT[0..n] and TCC_HIT_sum). */
typedef struct lm_plan_counter {
  const char *name;     /* hardware counter: "SQ_WAVES", "TCC_HIT", "SQ_ACCUM_PREV_HIRES" */
  const char *block;    /* budget it uses: "SQ", "TCC", ... */
  const char *why;      /* metric ids that need it ("2.1.8, 11.2.2 and 4 more") */
  int32_t set;
  uint8_t replica;      /* an extra copy (cycle counters in every set) */
} lm_plan_counter;

typedef struct lm_plan_set {
  const char *accumulate; /* the level counter this set accumulates, or NULL */
  int32_t first, n;       /* counters[first .. first + n) */
  int32_t passes;         /* passes the set needs: 1 on AMD, CUPTI's count
                             for its config image on NVIDIA */
  size_t image_bytes;     /* NVIDIA: size of the set's config image */
} lm_plan_set;

typedef struct lm_plan {
  const char *arch;
  int32_t n_sets;
  lm_plan_set *sets;
  int32_t n_counters;
  lm_plan_counter *counters; /* grouped by set, in set order */
  int32_t lower_bound;       /* fewest sets any packing could use */
  int32_t n_missing;         /* counters the metrics name that the
                                architecture cannot collect */
  const char **missing;
  /* NVIDIA plans (lm_plan_build_passes); chip is NULL in AMD plans. */
  const char *chip;          /* "GH100" */
  int replay;                /* LM_REPLAY_APP, LM_REPLAY_INSTANCE, LM_REPLAY_KERNEL */
  int32_t total_passes;      /* sum of the sets' passes: application runs
                                (app), kernel instances per key (instance)
                                or passes of each kernel (kernel) */
  int32_t one_config_passes; /* passes of one config holding every metric */
  int32_t packed_sets, packed_passes; /* what the greedy packing found (0 when
                                         not tried: kernel replay) */
  lm_arena *arena;
} lm_plan;

/* lm_plan_row_fn / lm_plan_each_row: visit every metric row of cat that
 * the selection sel covers, in catalog order, with its metric id ("2.1.3",
 * or "18.5.*" for the template rows of a per-channel table, visited once);
 * the walk both planners share. */
typedef void (*lm_plan_row_fn)(const lm_catalog *cat, const lm_tabledef *td, int32_t row, const char *metric_id,
                               void *user);
void lm_plan_each_row(const lm_catalog *cat, const lm_selection *sel, lm_plan_row_fn visit, void *user);

/* lm_plan_build: the counter sets for the metrics selected by -b items
 * (none: every metric). Counters are packed with as few sets as the
 * per-block limits allow (the lower bound: each accumulate counter in a set
 * of its own, then the most loaded block decides), keeping the counters of
 * one ratio in one set where they fit. Free with lm_plan_free. */
lm_status lm_plan_build(const lm_catalog *catalog, const char *const *items, size_t n_items,
                        lm_plan **out, lm_diag *diag);
void lm_plan_free(lm_plan *plan);

/* lm_pass_count: how many passes a config holding names[0..n) needs
 * (CUPTI's count for its config image), and the image's size. */
typedef lm_status (*lm_pass_count)(void *ctx, const char *const *names, size_t n,
                                   int32_t *passes, size_t *image_bytes, lm_diag *diag);

#define LM_REPLAY_KERNEL 4 /* NVIDIA: CUPTI replays each kernel, one run */

/* lm_plan_build_passes: the sets for an architecture without per-block
 * limits (NVIDIA), where `count` says what a set costs. Kernel replay: one
 * config with every metric (one run; its passes replay each kernel).
 * Application replay and instance cycling: metrics are packed greedily,
 * those needing most passes first, each into the set whose pass count it
 * raises least, or a new set when that is cheaper, so that the sum of
 * passes (application runs, or kernel instances) is the least found; one
 * config with everything is kept instead when it needs fewer passes.
 * chip names the chip in the printed plan. Free with lm_plan_free. */
lm_status lm_plan_build_passes(const lm_catalog *catalog, const char *const *items,
                               size_t n_items, int replay, lm_pass_count count, void *ctx,
                               lm_plan **out, lm_diag *diag);

/* lm_plan_print: the plan as text: one block per set, each counter with
 * why it is needed; the last line is "sets: N (lower bound L)", or for an
 * NVIDIA plan "sets: N, passes: P (...)". */
void lm_plan_print(const lm_plan *plan, int verbose, lm_buf *out);

/* lm_plan_block: the budget a counter uses, e.g. "SQ" for SQC_DCACHE_HITS.
 * Writes into out (cap bytes). */
const char *lm_plan_block(const lm_catalog *catalog, const char *counter, char *out, size_t cap);

/* lm_plan_counter_base: the hardware counter a metric column reads:
 * "TCC_HIT_sum" and "TCC_HIT[3]" both read "TCC_HIT". */
const char *lm_plan_counter_base(const char *column, char *out, size_t cap);

/* ------------------------------------------------------- collection */

typedef enum lm_replay {
  LM_REPLAY_APP,      /* one application run per set, every dispatch one set */
  LM_REPLAY_INSTANCE, /* one run: successive instances of a kernel cycle sets */
  LM_REPLAY_ASSIGNED  /* a run that collects assigned (instance, set) pairs */
} lm_replay;

/* What the tool library inside the application is told (a small text file
 * written by `lumen profile`, named by LUMEN_TOOL_CONFIG). */
typedef struct lm_tool_config {
  char arch[64];
  int mode;               /* lm_replay */
  int pass;               /* LM_REPLAY_APP: the set this run collects */
  int key_grid;           /* cycle per kernel and launch parameters */
  int n_sets;
  char ***set_counters;   /* per set: NULL-terminated counter names */
  char **set_accumulate;  /* per set: the level counter, or NULL */
  char **kernels;         /* -k patterns ("!re" excludes) */
  size_t n_kernels;
  char *instance, *dispatch, *gpu; /* --instance, -d, -g specs, or NULL */
  char **regions;         /* -r names */
  size_t n_regions;
  /* LM_REPLAY_ASSIGNED: (key, selected instance) -> set */
  char **assign_key;
  int64_t *assign_instance;
  int *assign_set;
  size_t n_assign;
  char output[4096];      /* records file */
  char telemetry[32];     /* sampler: "auto", "none", ... */
  int split_ranks;        /* --split ranks outside mpirun: each rank takes its share */
} lm_tool_config;

lm_status lm_tool_config_write(const lm_tool_config *c, const char *path, lm_diag *diag);
lm_status lm_tool_config_read(const char *path, lm_tool_config *c, lm_diag *diag);
void lm_tool_config_fini(lm_tool_config *c);
/* lm_tool_config_take_share: with c->split_ranks, a process of MPI rank
 * r->rank of r->size (2 or more) keeps only its share of the sets
 * (lm_split_sets, renumbered from 0, as a rank's lumen inside mpirun
 * keeps them), collects in application replay its share's set c->pass
 * (none when its share has fewer sets) and writes its records to
 * OUTPUT.rankR (then .PID). Returns 1 when it did that, 0 when the
 * config is left as it is (no split, or no rank: a launcher's own
 * process), -1 when out of memory. */
struct lm_rank_info;
int lm_tool_config_take_share(lm_tool_config *c, const struct lm_rank_info *r);

/* The per-dispatch decision, made on the launching thread. */
typedef struct lm_policy lm_policy;

typedef struct lm_dispatch_facts {
  uint64_t dispatch_id;
  uint64_t kernel_id;
  const char *kernel_name;
  int gpu;
  unsigned long tid;
  uint64_t grid, workgroup, lds;
} lm_dispatch_facts;

typedef struct lm_choice {
  int set;              /* -1: collect nothing */
  int64_t instance;     /* per-kernel instance number, all dispatches */
  int64_t selected;     /* per-key number among selected dispatches */
  char key[512];        /* cycling key: name, or name|grid|workgroup|lds */
  char regions[512];    /* active region ids, comma separated */
} lm_choice;

lm_status lm_policy_new(const lm_tool_config *cfg, lm_policy **out, lm_diag *diag);
void lm_policy_free(lm_policy *p);
/* lm_policy_kernel: a kernel symbol is known (its name filter is decided
 * once, here). LM_EINVAL with diag once a kernel pattern has given up on
 * a name (PCRE2's limits: see lm_regex_match), this one or an earlier
 * one; that name is left out. Thread-safe. */
lm_status lm_policy_kernel(lm_policy *p, uint64_t kernel_id, const char *name, lm_diag *diag);
/* lm_policy_choose: which set this dispatch collects. Thread-safe. */
void lm_policy_choose(lm_policy *p, const lm_dispatch_facts *d, lm_choice *out);
/* Regions: a per-thread stack and process-wide ranges. Returns the
 * region's id (names are interned; ids from 1). Thread-safe. */
int lm_policy_region_push(lm_policy *p, unsigned long tid, const char *name);
void lm_policy_region_pop(lm_policy *p, unsigned long tid);
int lm_policy_range_start(lm_policy *p, uint64_t range_id, const char *name);
void lm_policy_range_stop(lm_policy *p, uint64_t range_id);
/* lm_policy_region_name: the name of region id, or NULL. */
const char *lm_policy_region_name(lm_policy *p, int id);

/* ---------------------------------------------------------------- ranks */

/* An MPI process's place, as its launcher's environment gives it (-1 where
 * it does not say). */
typedef struct lm_rank_info {
  int rank, size, local_rank;
  int local_size;    /* ranks on this node (Open MPI, MVAPICH2, MPICH), or -1 */
  char launcher[16]; /* "openmpi", "mvapich2", "pmix", "pals", "pmi", "slurm" */
} lm_rank_info;

/* Looks a variable up (getenv, or a test's table); NULL when unset. */
typedef const char *(*lm_env_lookup)(const char *name, void *user);

/* lm_rank_detect: the rank of this process from the variables of the
 * first launcher that set a valid rank (MPI launchers before Slurm).
 * Returns 1 and fills out, or 0 (out: all -1) when no launcher did. */
int lm_rank_detect(lm_env_lookup get, void *user, lm_rank_info *out);
/* lm_rank_detect_env: lm_rank_detect over the process's environment. */
int lm_rank_detect_env(lm_rank_info *out);

/* lm_rank_samples_gpu: whether this process samples the clocks of its GPU
 * `gpu` (a device index as the process sees it). Where several ranks of a
 * node may share GPUs, one process per GPU samples, chosen without asking
 * the others: the GPU's node-wide id (through ROCR_VISIBLE_DEVICES,
 * HIP_VISIBLE_DEVICES or CUDA_VISIBLE_DEVICES when set) modulo the node's
 * rank count is its sampler's local rank. 1 (sample) when the rank, its
 * node's rank count or the GPU's node-wide id is unknown. */
int lm_rank_samples_gpu(const lm_rank_info *r, int gpu, lm_env_lookup get, void *user);
/* lm_rank_gpu_sampler: the local rank that samples GPU gpu by that rule,
 * or -1 where every process samples. */
int lm_rank_gpu_sampler(const lm_rank_info *r, int gpu, lm_env_lookup get, void *user);
/* The process's environment, as an lm_env_lookup. */
const char *lm_env_get(const char *name, void *user);

/* ---------------------------------------------------------- orchestration */

/* `lumen profile`: run the application once per needed pass with the tool
 * library loaded, commit every finished run, then compose the lumen
 * workload (dir/lumen.db) that `lumen analyze` reads. */
typedef struct lm_profile_opts {
  const char *name;            /* -n: workload name */
  const char *dir;             /* -w: the workload folder to write */
  char *const *argv;           /* the application and its arguments */
  int argc;
  const char *const *items;    /* -b */
  size_t n_items;
  const char *const *kernels;  /* -k */
  size_t n_kernels;
  const char *instance, *dispatch, *gpu; /* --instance, -d, -g (or NULL) */
  const char *const *regions;  /* -r */
  size_t n_regions;
  int replay;                  /* lm_replay: APP, INSTANCE; 3 = auto; -1: not
                                  given (app, or what --resume stored) */
  int key_grid;                /* --join grid */
  int resume;                  /* --resume: continue the workload in dir */
  const char *tool_library;    /* path of liblumen_tool.so */
  int progress;                /* draw progress on stderr */
  const char *backend;         /* --backend, or NULL for the first usable */
  double timeout;              /* --timeout: seconds per run (0: none; with
                                  --resume, 0 keeps the stored one) */
  const char *telemetry;       /* --telemetry: "auto" (NULL) or "none" */
  int split_ranks;             /* --split ranks: inside an MPI job, this rank
                                  collects only its share of the counter sets;
                                  outside (lumen profile -- mpirun ...), every
                                  rank's process does, into DIR/rank.R */
} lm_profile_opts;

/* lm_split_sets: the counter sets (of n_sets, numbered from 0) that rank
 * `rank` of `size` collects with --split ranks: every size-th set from
 * its rank when there are more sets than ranks, else the one set
 * rank % n_sets. Writes them in increasing order into out (room for
 * n_sets) and returns how many. */
int lm_split_sets(int rank, int size, int n_sets, int *out);

#define LM_REPLAY_AUTO 3

/* What a profile did, for the command's summary. */
typedef struct lm_profile_summary {
  int runs;
  int ranks;                /* --split ranks outside mpirun: the job's ranks, else 0 */
  int sets;
  size_t dispatches;        /* composed dispatch rows */
  size_t dropped;           /* selected dispatches without every set */
  char dropped_detail[2048];/* which kernels miss which sets */
  char simulated[1024];     /* the recording a simulated device replayed, "" when measured */
} lm_profile_summary;

lm_status lm_profile_run(const lm_profile_opts *opts, lm_profile_summary *summary, lm_diag *diag);

#endif
