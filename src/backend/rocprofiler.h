/*
 * rocprofiler.h - what lumen builds on rocprofiler-sdk's ABI
 * (rocprofiler_abi.h), shared by `lumen profile`, which checks the counter
 * sets on the device before the first run, and the tool library's adapter,
 * which collects them: an agent's counters by name, and how a hardware
 * counter is requested and turned into the reference tool's columns: X_sum
 * for a per-instance counter (the SDK's reduce(X, sum) where the agent has
 * it, else the sum of X's records), X[n] per TCC channel numbered across
 * XCCs, otherwise X, the sum of its records. docs/rocprofiler-sdk.md.
 */
#ifndef LUMEN_ROCPROFILER_H
#define LUMEN_ROCPROFILER_H

#include <stddef.h>
#include <stdint.h>

#include "backend/rocprofiler_abi.h"

/* One dimension of a counter (a copy of the SDK's, which lives only
 * during its callback). */
#define LM_ROCP_MAX_DIMS 8
typedef struct lm_rocp_dim {
  char name[32]; /* "XCC", "INSTANCE", "SE", ... */
  size_t instances;
  uint64_t id; /* for rocprofiler_query_record_dimension_position */
} lm_rocp_dim;

/* One counter of an agent. */
typedef struct lm_rocp_counter {
  rocp_counter_id id;
  const char *name, *block; /* borrowed from the SDK, valid while it is loaded */
  int is_derived;
  int n_dims;
  lm_rocp_dim dims[LM_ROCP_MAX_DIMS];
} lm_rocp_counter;

/* The counters of one agent. */
typedef struct lm_rocp_catalog {
  size_t n;
  lm_rocp_counter *counters;
} lm_rocp_catalog;

/* lm_rocp_catalog_load: the agent's supported counters with their names,
 * blocks and dimensions, read the same way in every SDK version (counter
 * info version 0 and the SDK's dimension iteration). A counter whose info
 * the SDK does not give is left out. Returns 0, or -1 with the reason in
 * why. Free with lm_rocp_catalog_fini. */
int lm_rocp_catalog_load(const lm_rocp_api *api, rocp_agent_id agent, lm_rocp_catalog *out,
                         char *why, size_t cap);
void lm_rocp_catalog_fini(lm_rocp_catalog *c);

enum { LM_ROCP_TOTAL, LM_ROCP_CHANNELS };

/* One SDK counter to request for a lumen counter, and what it gives. */
typedef struct lm_rocp_want {
  rocp_counter_id id;
  int form;            /* LM_ROCP_TOTAL: column = sum of the records;
                          LM_ROCP_CHANNELS: column[xcc * n_inst + inst] */
  char column[256];    /* "SQ_WAVES", "TCC_HIT_sum", or "TCC_HIT" (channels) */
  size_t n_inst;       /* CHANNELS: instances per XCC */
  uint64_t dim_xcc, dim_inst;
} lm_rocp_want;

/* lm_rocp_resolve: the SDK counters (at most cap) that hardware counter
 * `name` is collected with on this catalog's agent; 0 when it lacks it. */
int lm_rocp_resolve(const lm_rocp_catalog *cat, const char *name, lm_rocp_want *out, int cap);

/* lm_rocp_first_gpu: the first GPU agent (by logical GPU number); copies
 * its name (gfx target) into arch and, when info is not NULL, points *info
 * at the SDK's description of the agent (valid while the SDK is loaded).
 * Returns 0, or -1 with why. */
int lm_rocp_first_gpu(const lm_rocp_api *api, rocp_agent_id *agent, char *arch, size_t arch_cap,
                      const rocp_agent **info, char *why, size_t cap);

/* A system-information field: its name (the reference tool's sysinfo.csv
 * names) and its text. */
typedef void (*lm_rocp_field_fn)(const char *key, const char *value, void *user);

/* lm_rocp_agent_sysinfo: the system-information fields a GPU agent's
 * description supplies, each passed to put (borrowed strings, valid for
 * the call): gpu_arch, gpu_model, gpu_l1, gpu_l2, cu_per_gpu, simd_per_cu,
 * se_per_gpu, wave_size, workgroup_max_size, max_waves_per_cu, max_sclk,
 * max_mclk, num_xcd. A field the agent leaves at 0 (or without a cache or
 * memory bank to read it from) is not passed; num_xcd is 1 when the
 * driver does not count XCCs (drivers before multi-XCC GPUs). Pure: reads
 * only *a. */
void lm_rocp_agent_sysinfo(const rocp_agent *a, lm_rocp_field_fn put, void *user);

/* lm_rocp_layout_text: the SDK's version and layout as `lumen list
 * backends` and the errors name them, e.g. "version 0.6.0 (0.5/0.6
 * layout, supported)"; writes into buf and returns it. */
const char *lm_rocp_layout_text(const lm_rocp_api *api, char *buf, size_t cap);

/* lm_rocp_replay: whether the loaded library replays a recorded workload
 * instead of measuring, as it says through the device extension
 * LM_DEVICE_REPLAY (backend.h); when it does, the workload's folder is
 * copied into recording ("" otherwise). */
int lm_rocp_replay(const lm_rocp_api *api, char *recording, size_t cap);

/* lm_rocp_check_set: whether the counters of one set can be collected in
 * one config on agent: lacking[i] = 1 for a counter the agent lacks;
 * part[i] = 1 for a counter that must move to another set because the
 * SDK refused the config (greedy: counters are added in order while the
 * SDK accepts them; keep[i] = 1 marks counters that stay in any case,
 * such as the cycle counter every set carries). Returns the number of
 * counters moved (0: the set fits), or -1 with why. */
int lm_rocp_check_set(const lm_rocp_api *api, const lm_rocp_catalog *cat, rocp_agent_id agent,
                      const char *const *counters, int n, const int *keep, int *lacking, int *part,
                      char *why, size_t cap);

#endif
