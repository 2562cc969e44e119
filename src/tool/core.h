/*
 * core.h - the vendor-neutral core of the tool library, as its backends
 * see it. A backend (rocprofiler.c: rocprofiler-sdk, real or
 * simulated; cupti.c: CUPTI's range profiler) translates its
 * runtime's callbacks into these calls and hands
 * the chosen counter set to its runtime; everything else
 * (filters, set choice, regions, records, telemetry) is the core's.
 */
#ifndef LUMEN_TOOL_CORE_H
#define LUMEN_TOOL_CORE_H

#include <stdint.h>

#include "backend/backend.h"
#include "profile/profile.h"

/* A dispatch as a backend reports it. */
typedef struct lm_tool_dispatch {
  uint64_t dispatch_id;
  uint64_t kernel_id;
  const char *kernel_name;
  int gpu;
  unsigned long tid;  /* launching thread */
  uint64_t grid, workgroup;
  uint32_t lds, scratch, arch_vgpr, accum_vgpr, sgpr;
} lm_tool_dispatch;

typedef struct lm_tool_value {
  const char *column; /* "SQ_WAVES", "TCC_HIT[3]", "TCC_HIT_sum" */
  double value;
} lm_tool_value;

enum { LM_TOOL_PUSH, LM_TOOL_POP, LM_TOOL_START, LM_TOOL_STOP };

/* lm_tool_config_now: the configuration read at load time, or NULL when
 * the library is not collecting (not under lumen, or after an error). */
const lm_tool_config *lm_tool_config_now(void);
/* lm_tool_attached: a backend attached to a device of architecture arch;
 * returns 0, or -1 (reported) when the plan was made for another one. */
int lm_tool_attached(const char *arch);
/* lm_tool_expect_finalize: the back end's runtime finalizes the tool
 * (rocprofiler-sdk calls the client's finalizer, which calls
 * lm_tool_finish); should the library unload first, its records end with
 * END unfinalized, and lumen warns that late dispatches may be missing. */
void lm_tool_expect_finalize(void);
/* lm_tool_error: report an error in the records and stop collecting. */
void lm_tool_error(const char *what);
void lm_tool_kernel_symbol(uint64_t kernel_id, const char *name);
/* lm_tool_dispatch_begin: the set this dispatch collects (-1: none); the
 * choice is kept for lm_tool_dispatch_end. Called on the launching thread. */
int lm_tool_dispatch_begin(const lm_tool_dispatch *d, lm_choice *choice);
/* lm_tool_dispatch_end: timestamps (the telemetry clock) and the values of
 * the chosen set. */
void lm_tool_dispatch_end(const lm_tool_dispatch *d, const lm_choice *choice, uint64_t start_ns,
                          uint64_t end_ns, const lm_tool_value *values, int n);
/* lm_tool_marker: a region or range event (LM_TOOL_*) from the runtime's
 * own annotations (ROCTx, NVTX, the simulated device's ranges). */
void lm_tool_marker(int op, unsigned long tid, const char *name, uint64_t id);
/* lm_tool_sysinfo: one field of the device's system information (the
 * workload's sysinfo names: gpu_model, cu_per_gpu, max_sclk, ...). */
void lm_tool_sysinfo(const char *key, const char *value);
/* lm_tool_telemetry: start sampling t from a background thread (owned),
 * and record the run's sampler; t NULL: none works, why says why. */
void lm_tool_telemetry(lm_telemetry *t, const char *why);
/* lm_tool_finish: flush everything; idempotent (also run at unload). */
void lm_tool_finish(void);

#endif
