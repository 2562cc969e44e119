/*
 * rocprofv3_private.h - shared by the files of src/rocprofv3: the files
 * one path holds, and the fold of their rows into one table.
 */
#ifndef LUMEN_ROCPROFV3_PRIVATE_H
#define LUMEN_ROCPROFV3_PRIVATE_H

#include <stddef.h>
#include <stdint.h>

#include "base/base.h"
#include "fold/fold.h"
#include "model/model.h"

enum { LM_V3_COUNTERS = 1, LM_V3_TRACE = 2, LM_V3_ROCPD = 4, LM_V3_JSON = 8 };
enum { LM_V3_ALIAS_NONE = -1, LM_V3_ALIAS_UNKNOWN = LM_FOLD_TAG_UNSET };

/* lm_rocprofv3_header_kind: LM_V3_COUNTERS or LM_V3_TRACE for a header
 * of those files, else 0. */
int lm_rocprofv3_header_kind(const char *const *fields, size_t n);

/* The rocprofv3 files of a path, each with its run: files written by one
 * process share a prefix ("<pid>_") and a folder, hence a group. */
typedef struct lm_v3_files {
  char **counters, **traces, **agents, **rocpd, **json;
  int *counter_group, *trace_group, *agent_group;
  size_t n_counters, n_traces, n_agents, n_rocpd, n_json;
} lm_v3_files;

/* lm_v3_find_files: the files of path (a file: it alone and the files of
 * its run beside it; a folder: those in it and in folders up to two
 * levels down), sorted by name. */
lm_status lm_v3_find_files(const char *path, lm_v3_files *files, lm_diag *diag);
void lm_v3_files_free(lm_v3_files *files);

enum { LM_V3_MAX_AGENTS = 256, LM_V3_AGENT_KEYS = 16 };

/* What the agent information says of the GPU agents. */
typedef struct lm_v3_agents {
  double node[LM_V3_MAX_AGENTS]; /* GPU agents' ids, in file order */
  size_t n;
  char *keys[LM_V3_AGENT_KEYS], *values[LM_V3_AGENT_KEYS]; /* sysinfo fields of the first GPU */
  size_t n_keys;
  char arch[64];
  const char *where; /* the file they come from */
} lm_v3_agents;

/* lm_v3_agents_keep: field key = value of the agents' system information
 * (copied; an empty value is skipped). */
lm_status lm_v3_agents_keep(lm_v3_agents *a, const char *key, const char *value, const char *path, lm_diag *diag);
void lm_v3_agents_free(lm_v3_agents *a);

/* The fold of a rocprofv3 read: the shared table (src/fold; its group is
 * the run of the file being folded, its counter tags the "_sum" twins,
 * LM_V3_ALIAS_*) and what only rocprofv3 needs. */
typedef struct lm_v3_fold {
  lm_fold *t;
  int trace_only_new; /* 1: a kernel trace adds dispatches (no collection) */
  int gpus_numbered;  /* 1: GPU_ID already holds GPU indexes (rocpd) */
} lm_v3_fold;

lm_status lm_v3_fold_new(const char *path, lm_v3_fold **out, lm_diag *diag);
void lm_v3_fold_free(lm_v3_fold *fold);
/* lm_v3_fold_put: counter `name` of row = v, and its "_sum" twin for the
 * blocks whose metrics read sums over instances (TCC_HIT -> TCC_HIT_sum). */
lm_status lm_v3_fold_put(lm_v3_fold *fold, const char *name, size_t row, double v, lm_diag *diag);
/* lm_v3_fold_file: fold one file of kind want_kind into fold. */
lm_status lm_v3_fold_file(lm_v3_fold *fold, const char *file, int want_kind, lm_diag *diag);
/* lm_v3_fold_finish: the workload of the fold: pmc_perf (Dispatch_ID, the
 * facts fact_names, Kernel_Name, the counters) and system information
 * from agents (read from the files' agent_info.csv when agents->n is 0),
 * else assumed for arch. */
lm_status lm_v3_fold_finish(lm_v3_fold *fold, const lm_v3_files *files, lm_v3_agents *agents, const char *arch,
                            const char *const *fact_names, int n_facts, lm_workload **out, lm_diag *diag);

/* The facts a fold's rows hold, in pmc_perf's order (read.c). */
enum {
  LM_V3_GPU,
  LM_V3_GRID,
  LM_V3_WG,
  LM_V3_LDS,
  LM_V3_SCRATCH,
  LM_V3_VGPR,
  LM_V3_AGPR,
  LM_V3_SGPR,
  LM_V3_START,
  LM_V3_END,
  LM_V3_N_FACTS
};
extern const char *const lm_v3_fact_names[LM_V3_N_FACTS];

/* lm_v3_rocpd_detect: 1 when path is a rocpd SQLite database (rocpd.c). */
int lm_v3_rocpd_detect(const char *path);
/* lm_v3_rocpd_read: fold the kernel dispatches and their counters of the
 * rocpd database at path, and its GPU agents into agents. */
lm_status lm_v3_rocpd_read(const char *path, lm_v3_fold *fold, lm_v3_agents *agents, lm_diag *diag);

/* lm_v3_json_detect: 1 when path is rocprofv3's JSON output (a JSON
 * object whose first key is "rocprofiler-sdk-tool"; json.c). */
int lm_v3_json_detect(const char *path);
/* lm_v3_json_read: fold the counter collection and kernel trace of each
 * process of the JSON output at path, each as its own group numbered from
 * *group on (advanced past them), and its GPU agents into agents when
 * agents holds none yet. */
lm_status lm_v3_json_read(const char *path, lm_v3_fold *fold, lm_v3_agents *agents, int *group, lm_diag *diag);

#endif
