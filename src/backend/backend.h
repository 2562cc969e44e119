/*
 * backend.h - what lumen can collect with, here: counter backends (which
 * vendor runtime a tool library attaches to) and telemetry samplers (GPU
 * clocks, read from a background thread with the clock of dispatch
 * timestamps). Vendor libraries are loaded at run time, so one lumen binary
 * works (or says clearly why not) on any machine.
 */
#ifndef LUMEN_BACKEND_H
#define LUMEN_BACKEND_H

#include <stddef.h>

#include "base/base.h"

/* One row of `lumen list backends`. */
typedef struct lm_backend_status {
  const char *name;   /* "rocprofiler-sdk", "cupti", "rocm-smi", "nvml" */
  const char *kind;   /* "counters" or "telemetry" */
  int built;          /* compiled into this lumen */
  int usable;         /* can be used on this machine now */
  char why[512];      /* what decides usable */
} lm_backend_status;

/* lm_backends_probe: fill up to cap entries; returns how many. */
size_t lm_backends_probe(lm_backend_status *out, size_t cap);

/* ------------------------------------------------------ rocprofiler-sdk */

struct lm_rocp_api;
/* lm_rocp_load: open rocprofiler-sdk (already_loaded: only one the process
 * has loaded, as inside the profiled application), check its version
 * and choose the layout lumen reads it in (api->layout: 0.5 and 0.6, or
 * 1.0; a later 1.x in the 1.0 layout with api->newer set; other versions
 * are refused, naming the version), and resolve the functions lumen
 * calls. Returns 0, or -1 with the reason and the fix in why. */
int lm_rocp_load(struct lm_rocp_api *api, int already_loaded, char *why, size_t cap);
void lm_rocp_unload(struct lm_rocp_api *api);
/* lm_rocp_probe: whether rocprofiler-sdk can collect here (library,
 * version and layout, a GPU agent); why says which, or what was found:
 * "version 0.6.0 (0.5/0.6 layout, supported), 8 GPU agents". */
int lm_rocp_probe(char *why, size_t cap);

/* ----------------------------------------------------------- demangling */

/* lm_backend_demangle: the demangled form of an Itanium C++ symbol
 * ("_Z7vecCopyPdS_S_ii.kd" -> "vecCopy(double*, double*, double*, int,
 * int) [clone .kd]"), as the reference tool shows kernel names, through
 * the C++ runtime's __cxa_demangle (in the process, else libstdc++.so.6);
 * the name as it is when it is not mangled or cannot be demangled; "?"
 * for NULL. Writes into out (cap bytes, truncated) and returns out.
 * Thread-safe. */
const char *lm_backend_demangle(const char *name, char *out, size_t cap);

/* ------------------------------------------------------------ telemetry */

typedef struct lm_telemetry lm_telemetry;

/* Sink for samples: printf-like, one "C\t<gpu>\t<t_ns>\t<sclk>\t<mclk>\n"
 * line per reading; the SMI samplers add "\t<power_w>\t<temp_c>" (board
 * power in watts, GPU temperature in degrees C, "-" for a reading the
 * library does not give). */
typedef void (*lm_telemetry_emit)(const char *fmt, ...);

/* Device extensions: entry points a device library (an SDK, or a runtime
 * in the profiled process) may export beside its vendor's API, for what
 * that API has no call for. lumen looks them up by these names and never
 * needs them:
 *   const char *LM_DEVICE_REPLAY(void): the workload folder whose numbers
 *     the device replays, NULL when it measures. Workloads collected on
 *     it are marked as replays and take that folder's roofline table.
 *   const char *LM_DEVICE_CLOCK_SOURCE(void): the name of the device's
 *     own clock log as a sampler ("simulated device"), NULL without one.
 *   size_t LM_DEVICE_CLOCK_LOG(size_t from, int *gpu, unsigned long long
 *     *t_ns, double *sclk, double *mclk, size_t cap): up to cap entries of
 *     that log from entry `from` (GPU, time in ns on the clock of dispatch
 *     timestamps, clocks in MHz); the number written. */
#define LM_DEVICE_REPLAY "lumen_device_replay"
#define LM_DEVICE_CLOCK_SOURCE "lumen_device_clock_source"
#define LM_DEVICE_CLOCK_LOG "lumen_device_clock_log"

/* Samplers. lm_telemetry_open_device: the clock log a device library in
 * the process keeps (LM_DEVICE_CLOCK_LOG), NULL without one. The SMI ones return
 * NULL with the reason in why (one line) when their library, one of the
 * calls a clock sample needs, or a GPU is missing. lm_telemetry_open_nvml
 * opens only the library LUMEN_NVML_LIBRARY names when it is set, else
 * libnvidia-ml.so.1. */
lm_telemetry *lm_telemetry_open_device(void);
lm_telemetry *lm_telemetry_open_rocm_smi(char *why, size_t cap);
lm_telemetry *lm_telemetry_open_nvml(char *why, size_t cap);
/* lm_telemetry_name: the device clock log's source name, "rocm-smi" or
 * "nvml" (borrowed). */
const char *lm_telemetry_name(const lm_telemetry *t);
/* lm_telemetry_use: GPU gpu runs dispatches: the SMI samplers read only
 * the GPUs in use (a thread-safe mark; gpu 0..63). */
void lm_telemetry_use(lm_telemetry *t, int gpu);
/* lm_telemetry_leave: GPUs (bit per GPU id 0..63) whose clocks another
 * process samples: this sampler takes no readings of them. */
void lm_telemetry_leave(lm_telemetry *t, uint64_t gpus);
/* lm_telemetry_sample: take the readings available now. */
void lm_telemetry_sample(lm_telemetry *t, lm_telemetry_emit emit);
void lm_telemetry_close(lm_telemetry *t);
/* lm_telemetry_peak_clocks: the top SCLK and MCLK (MHz) rocm-smi lists
 * for GPU gpu (rocm-smi's device index); 0, or -1 when t is not rocm-smi
 * or lists neither (a clock it lacks is -1). */
int lm_telemetry_peak_clocks(lm_telemetry *t, int gpu, double *sclk_mhz, double *mclk_mhz);

/* lm_clock_ns: the clock of dispatch timestamps and samples
 * (CLOCK_BOOTTIME, as rocprofiler-sdk uses). */
unsigned long long lm_clock_ns(void);

#endif
