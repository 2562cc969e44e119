/*
 * simsdk.h - what the files of the simulated rocprofiler-sdk share, and
 * the device interface its simulated runtime (simgpu.c) drives. Test and
 * demo infrastructure: nothing here measures anything.
 *
 * simsdk.c implements the SDK's ABI subset (agents, counters, configs,
 * contexts, services); simdevice.c is the device below it: it registers
 * the tool (rocprofiler_configure), executes launches by replaying
 * recorded dispatches, calls the tool's dispatch callback on the launching
 * thread and delivers counter records from its own completion thread.
 */
#ifndef LUMEN_SIMSDK_H
#define LUMEN_SIMSDK_H

#include "sim/sdk_abi.h"
#include "model/model.h"

#define SIMSDK_AGENTS 8
#define SIMSDK_AGENT_BASE 0x1000

/* simsdk_load: read the recording (LUMEN_SIM_RECORDING) once; 0 or -1. */
int simsdk_load(void);
/* simsdk_recording: the recording, or NULL when it cannot be read. */
const lm_workload *simsdk_recording(void);
/* lumen_device_replay: the recording's folder, NULL without one (lumen's
 * device extension through which a device says that it replays). */
const char *lumen_device_replay(void);
/* simsdk_layout: the SDK version the simulation takes the layouts of
 * (LUMEN_SIMSDK_LAYOUT: sdk_layout), or -1 for a value it does not know. */
int simsdk_layout(void);
/* simsdk_agent_size: the size of an agent's description in that version. */
size_t simsdk_agent_size(void);
/* simsdk_agent_index: 0.. for a GPU agent handle, -1 otherwise. */
int simsdk_agent_index(sdk_agent_id agent);
sdk_agent_id simsdk_agent_id(int index);

/* The SDK functions the simulation exports, under the SDK's names and with
 * the SDK's signatures (sim/sdk_abi.h). */
sdk_status rocprofiler_get_version(uint32_t *major, uint32_t *minor, uint32_t *patch);
sdk_status rocprofiler_query_available_agents(int version, sdk_agents_cb cb, size_t agent_size,
                                               void *user);
sdk_status rocprofiler_create_context(sdk_context_id *ctx);
sdk_status rocprofiler_start_context(sdk_context_id ctx);
sdk_status rocprofiler_stop_context(sdk_context_id ctx);
sdk_status rocprofiler_configure_callback_dispatch_counting_service(sdk_context_id ctx,
                                                                     sdk_dispatch_cb dispatch_cb,
                                                                     void *dispatch_arg,
                                                                     sdk_record_cb record_cb,
                                                                     void *record_arg);
sdk_status rocprofiler_configure_callback_tracing_service(sdk_context_id ctx, int kind,
                                                           const int32_t *operations, size_t n,
                                                           sdk_tracing_cb cb, void *arg);
sdk_status rocprofiler_iterate_agent_supported_counters(sdk_agent_id agent, sdk_counters_cb cb,
                                                         void *user);
sdk_status rocprofiler_query_counter_info(sdk_counter_id id, int version, void *info);
sdk_status rocprofiler_iterate_counter_dimensions(sdk_counter_id id, sdk_dimensions_cb cb, void *user);
sdk_status rocprofiler_query_record_counter_id(uint64_t instance, sdk_counter_id *counter);
sdk_status rocprofiler_query_record_dimension_position(uint64_t instance, uint64_t dim,
                                                        size_t *pos);
sdk_status rocprofiler_create_counter_config(sdk_agent_id agent, sdk_counter_id *counters,
                                              size_t n, sdk_counter_config_id *config);

/* ---------------------------------------------- counters (simsdk.c) */

/* One counter of the simulated agents. Hardware counters have an XCC
 * dimension, and those of per-instance blocks (TCC channels, TCP/TA/TD
 * per compute unit) an INSTANCE dimension within each XCC; derived X_sum
 * counters (reduce(X, sum)) have none. */
typedef struct simsdk_counter {
  const char *name;
  const char *block; /* hardware block, or the base counter's block */
  int base;          /* derived: index of X; hardware: -1 */
  size_t n_xcc, n_inst;
} simsdk_counter;

enum { SIMSDK_DIM_XCC = 1, SIMSDK_DIM_INSTANCE = 2 };

/* simsdk_counter_get: counter index i (0-based; the id is i + 1), or NULL. */
const simsdk_counter *simsdk_counter_get(size_t i);
/* simsdk_record_id: the instance id of a record of counter i. */
uint64_t simsdk_record_id(size_t i, size_t xcc, size_t inst);
/* simsdk_config_counters: the counters (indexes) of a config and its
 * agent; 0, or -1 when the handle is unknown. Borrowed. */
int simsdk_config_counters(sdk_counter_config_id cfg, const size_t **list, size_t *n, int *agent);

/* Services of started contexts, for the device. */
typedef struct simsdk_services {
  sdk_dispatch_cb dispatch_cb;
  void *dispatch_arg;
  sdk_record_cb record_cb;
  void *record_arg;
  sdk_tracing_cb code_object_cb;
  void *code_object_arg;
  sdk_context_id code_object_ctx;
  sdk_tracing_cb marker_cb;
  void *marker_arg;
  sdk_context_id marker_ctx;
} simsdk_services;
/* simsdk_services_now: the callbacks of the contexts started now. */
void simsdk_services_now(simsdk_services *out);

/* ---------------------------------------------------- names (mangle.c) */

/* simsdk_mangle: the Itanium-mangled symbol of a demangled kernel name
 * that is a plain C++ function signature ("vecCopy(double*, double*,
 * double*, int, int) [clone .kd]" -> "_Z7vecCopyPdS_S_ii.kd"): builtin
 * types, one-identifier class names, const, pointers and references, in
 * a plain or namespace-qualified function. Returns 0, or -1 (out left as
 * it was) for anything else or when it does not fit in cap. */
int simsdk_mangle(const char *name, char *out, size_t cap);

/* ------------------------------------------------ device (simdevice.c) */

typedef struct simsdk_launch {
  uint32_t grid[3], workgroup[3];
  uint32_t lds, scratch, arch_vgpr, accum_vgpr, sgpr;
} simsdk_launch;

/* simsdk_device_init: register the tool in the process, if any (once). */
int simsdk_device_init(void);
/* simsdk_device_launch: execute kernel `name` on GPU `gpu`: 0, or -1 with
 * the reason in why. */
int simsdk_device_launch(const char *name, const simsdk_launch *l, int gpu, char *why, size_t cap);
/* simsdk_device_wait: every launch so far has completed (its records were
 * delivered). */
void simsdk_device_wait(void);
/* simsdk_device_marker: a ROCTx call (SDK_MARKER_*) on this thread:
 * message for a mark, push or start; range_id the id a start returned or
 * a stop passes (0 otherwise). */
void simsdk_device_marker(int op, const char *message, uint64_t range_id);
/* lumen_device_clock_log: the device's clock log from index `from` (lumen's
 * device extension for a device's own clock log, found with dlsym): GPU,
 * time (ns, the clock of dispatch timestamps) and clocks (MHz). */
size_t lumen_device_clock_log(size_t from, int *gpu, unsigned long long *t_ns, double *sclk,
                              double *mclk, size_t cap);
/* lumen_device_clock_source: "simulated device", the name lumen gives the
 * log's samples, or NULL when the device is modelled without a clock log
 * (LUMEN_SIMSDK_CLOCKS=none), as a GPU whose clocks no sampler reads;
 * lumen then estimates them. */
const char *lumen_device_clock_source(void);

#endif
