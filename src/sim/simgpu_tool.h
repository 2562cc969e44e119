/*
 * simgpu_tool.h - how a profiling tool attaches to the simulated GPU
 * runtime, in the manner of rocprofiler-sdk's rocprofiler_configure: at
 * start-up the runtime looks up simgpu_tool_init in the process (a tool
 * library loaded with LD_PRELOAD provides it), hands it the runtime's
 * services and receives the tool's callbacks.
 *
 * The runtime answers like a device: counter configurations are checked
 * against the architecture's per-block limits (a set over a limit is
 * refused), and a dispatch returns only the counters of the configuration
 * the tool chose for it.
 */
#ifndef LUMEN_SIMGPU_TOOL_H
#define LUMEN_SIMGPU_TOOL_H

#include <stddef.h>

#include "lumen/simgpu.h"

#define SIMGPU_TOOL_ABI 1

typedef struct simgpu_counter_value {
  const char *column; /* "SQ_WAVES", "TCC_HIT[3]", "TCC_HIT_sum", ... */
  double value;
} simgpu_counter_value;

typedef struct simgpu_clock_sample {
  int gpu;
  unsigned long long t_ns; /* the device clock of dispatch timestamps */
  double sclk_mhz, mclk_mhz;
} simgpu_clock_sample;

typedef struct simgpu_dispatch {
  unsigned long long dispatch_id; /* 0, 1, ... in launch order */
  unsigned long long kernel_id;
  const char *kernel_name;
  int gpu;
  unsigned long tid;              /* launching thread */
  simgpu_launch_params params;
} simgpu_dispatch;

enum { SIMGPU_MARK_PUSH, SIMGPU_MARK_POP, SIMGPU_MARK_START, SIMGPU_MARK_STOP };

typedef struct simgpu_runtime_api {
  int abi;
  const char *arch;      /* from the recording's system info */
  int n_gpus;
  /* System info of the device (the recording's), as field/text pairs. */
  size_t n_sysinfo;
  const char *const *sysinfo_names;
  const char *const *sysinfo_texts;
  const char *roofline_csv; /* path of the recording's roofline.csv, or NULL */
  /* create_config: a counter configuration from hardware counter names;
   * `accumulate` names the level counter an accumulate set samples (NULL
   * otherwise). Returns a handle >= 1, or 0 with the reason in why. */
  int (*create_config)(const char *const *counters, int n, const char *accumulate, char *why,
                       size_t cap);
  /* set_instance_stride: successive instances of a kernel repeat the same
   * recorded dispatch this many times (a steady kernel across one cycle of
   * counter sets). Default 1. */
  void (*set_instance_stride)(int stride);
  /* clock_samples: clock readings logged since sample index `from`. */
  size_t (*clock_samples)(size_t from, simgpu_clock_sample *out, size_t cap);
} simgpu_runtime_api;

typedef struct simgpu_tool_hooks {
  void *user;
  void (*kernel_symbol)(void *user, unsigned long long kernel_id, const char *name);
  /* dispatch: the configuration handle for this dispatch; 0 collects none. */
  int (*dispatch)(void *user, const simgpu_dispatch *d);
  void (*completed)(void *user, const simgpu_dispatch *d, int config, unsigned long long start_ns,
                    unsigned long long end_ns, const simgpu_counter_value *values, int n_values);
  void (*marker)(void *user, int op, unsigned long tid, const char *message,
                 unsigned long long id);
  void (*shutdown)(void *user);
} simgpu_tool_hooks;

/* Provided by a tool; the runtime calls it once if it exists. Returns 0
 * when the tool attaches. */
int simgpu_tool_init(const simgpu_runtime_api *api, simgpu_tool_hooks *hooks);

#endif
