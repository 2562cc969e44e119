/*
 * simsdk.h - what the simulated GPU runtime (simgpu.c) and the simulated
 * rocprofiler-sdk (simsdk.c) share inside the simulation. Test and demo
 * infrastructure: nothing here measures anything.
 */
#ifndef LUMEN_SIMSDK_H
#define LUMEN_SIMSDK_H

#include "backend/rocprofiler_abi.h"
#include "model/model.h"

/* simsdk_load: read the recording (LUMEN_SIM_RECORDING) once; 0 or -1. */
int simsdk_load(void);
/* simsdk_recording: the recording, or NULL when it cannot be read. */
const lm_workload *simsdk_recording(void);

/* The SDK functions the simulation exports, under the SDK's names and with
 * the signatures of rocprofiler_abi.h. */
rocp_status rocprofiler_get_version(uint32_t *major, uint32_t *minor, uint32_t *patch);
rocp_status rocprofiler_query_available_agents(int version, rocp_agents_cb cb, size_t agent_size,
                                               void *user);
rocp_status rocprofiler_create_context(rocp_context_id *ctx);
rocp_status rocprofiler_start_context(rocp_context_id ctx);
rocp_status rocprofiler_stop_context(rocp_context_id ctx);
rocp_status rocprofiler_configure_callback_dispatch_counting_service(rocp_context_id ctx,
                                                                     rocp_dispatch_cb dispatch_cb,
                                                                     void *dispatch_arg,
                                                                     rocp_record_cb record_cb,
                                                                     void *record_arg);
rocp_status rocprofiler_configure_callback_tracing_service(rocp_context_id ctx, int kind,
                                                           const int32_t *operations, size_t n,
                                                           rocp_tracing_cb cb, void *arg);
rocp_status rocprofiler_iterate_agent_supported_counters(rocp_agent_id agent, rocp_counters_cb cb,
                                                         void *user);
rocp_status rocprofiler_query_counter_info(rocp_counter_id id, int version, void *info);
rocp_status rocprofiler_query_record_counter_id(uint64_t instance, rocp_counter_id *counter);
rocp_status rocprofiler_query_record_dimension_position(uint64_t instance, uint64_t dim,
                                                        size_t *pos);
rocp_status rocprofiler_create_counter_config(rocp_agent_id agent, rocp_counter_id *counters,
                                              size_t n, rocp_counter_config_id *config);

#endif
