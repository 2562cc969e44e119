/*
 * rocprofiler_abi.h - the part of rocprofiler-sdk's C ABI that lumen uses,
 * declared by lumen so that it builds without ROCm, after the public headers
 * of SDK 0.5 (ROCm 6.3, the first with dispatch counting), 0.6 and 1.0;
 * docs/rocprofiler-sdk.md gives each fact its header and line.
 *
 * Only what lumen reads or writes is declared: a struct the SDK hands over up
 * to the last field lumen reads, a struct lumen fills whole. Where the
 * versions differ (the tracing record, the client id) both forms are declared
 * and the adapter uses the loaded SDK's (lm_rocp_api.layout). Functions are
 * never linked: lm_rocp_load resolves them at run time.
 */
#ifndef LUMEN_ROCPROFILER_ABI_H
#define LUMEN_ROCPROFILER_ABI_H

#include <stddef.h>
#include <stdint.h>

#include "base/dl.h"

/* Status codes (rocprofiler_status_t): the ones lumen tells apart, the
 * same in every SDK version (docs/rocprofiler-sdk.md). 39 is
 * AGENT_ARCH_NOT_SUPPORTED, not a hardware limit. */
typedef int rocp_status;
enum {
  ROCP_STATUS_SUCCESS = 0,
  ROCP_STATUS_ERROR = 1,
  ROCP_STATUS_ERROR_COUNTER_NOT_FOUND = 8,
  ROCP_STATUS_ERROR_INCOMPATIBLE_ABI = 18,
  ROCP_STATUS_ERROR_DIM_NOT_FOUND = 23, /* a counter without dimensions (derived ones) */
  ROCP_STATUS_ERROR_EXCEEDS_HW_LIMIT = 38,
  ROCP_STATUS_ERROR_AGENT_ARCH_NOT_SUPPORTED = 39
};

/* Handles: one 64-bit value each. */
typedef struct { uint64_t handle; } rocp_context_id;
typedef struct { uint64_t handle; } rocp_agent_id;
typedef struct { uint64_t handle; } rocp_queue_id;
typedef struct { uint64_t handle; } rocp_counter_id;
typedef struct { uint64_t handle; } rocp_counter_config_id; /* 0.5: "profile config" */

typedef union {
  uint64_t value;
  void *ptr;
} rocp_user_data;

typedef struct {
  uint32_t x, y, z;
} rocp_dim3;

/* rocprofiler_agent_type_t */
enum { ROCP_AGENT_TYPE_NONE = 0, ROCP_AGENT_TYPE_CPU = 1, ROCP_AGENT_TYPE_GPU = 2 };
/* rocprofiler_agent_version_t */
enum { ROCP_AGENT_INFO_VERSION_0 = 1 };

/* rocprofiler_agent_cache_t: one cache of an agent, from the driver's
 * topology (KFD): size in KiB, level 1.., type the HsaCacheType bits. */
typedef struct rocp_agent_cache {
  uint64_t processor_id_low;
  uint64_t size; /* KiB */
  uint32_t level;
  uint32_t cache_line_size, cache_lines_per_tag, association, latency;
  uint32_t type; /* ROCP_CACHE_* bits */
} rocp_agent_cache;
enum { ROCP_CACHE_DATA = 1u << 0, ROCP_CACHE_INSTRUCTION = 1u << 1, ROCP_CACHE_CPU = 1u << 2,
       ROCP_CACHE_HSACU = 1u << 3 };

/* rocprofiler_agent_mem_bank_t: one memory bank (heap type and flags are
 * 32-bit words). */
typedef struct rocp_agent_mem_bank {
  uint32_t heap_type, flags;
  uint32_t width;       /* bits of the memory interface */
  uint32_t mem_clk_max; /* MHz */
  uint64_t size_in_bytes;
} rocp_agent_mem_bank;

/* rocprofiler_agent_v0_t, up to logical_node_type_id. The three HSA
 * unions (engine version, firmware id, capability) are 32-bit words. */
typedef struct rocp_agent {
  uint64_t size;
  rocp_agent_id id;
  int type; /* ROCP_AGENT_TYPE_* */
  uint32_t cpu_cores_count, simd_count, mem_banks_count, caches_count, io_links_count;
  uint32_t cpu_core_id_base, simd_id_base, max_waves_per_simd, lds_size_in_kb, gds_size_in_kb;
  uint32_t num_gws, wave_front_size, num_xcc, cu_count, array_count, num_shader_banks;
  uint32_t simd_arrays_per_engine, cu_per_simd_array, simd_per_cu, max_slots_scratch_cu;
  uint32_t gfx_target_version; /* e.g. 90010 for gfx90a, 90402 for gfx942 */
  uint16_t vendor_id, device_id;
  uint32_t location_id, domain, drm_render_minor;
  uint32_t num_sdma_engines, num_sdma_xgmi_engines, num_sdma_queues_per_engine, num_cp_queues;
  uint32_t max_engine_clk_ccompute, max_engine_clk_fcompute; /* MHz */
  uint32_t sdma_fw_version, fw_version, capability;
  uint32_t cu_per_engine, max_waves_per_cu, family_id, workgroup_max_size, grid_max_size;
  uint64_t local_mem_size, hive_id, gpu_id;
  rocp_dim3 workgroup_max_dim, grid_max_dim;
  const rocp_agent_mem_bank *mem_banks; /* mem_banks_count of them */
  const rocp_agent_cache *caches;       /* caches_count of them */
  const void *io_links;
  const char *name;         /* "gfx90a" */
  const char *vendor_name;
  const char *product_name; /* marketing name */
  const char *model_name;
  uint32_t node_id;
  int32_t logical_node_id;
  int32_t logical_node_type_id; /* 0.. among GPUs: the GPU id lumen reports */
} rocp_agent;

typedef rocp_status (*rocp_agents_cb)(int version, const void **agents, size_t n, void *user);

/* rocprofiler_counter_info_version_id_t */
enum { ROCP_COUNTER_INFO_VERSION_0 = 1, ROCP_COUNTER_INFO_VERSION_1 = 2 };

/* rocprofiler_counter_record_dimension_info_t (0.5/0.6:
 * rocprofiler_record_dimension_info_t): the same 24 bytes everywhere. */
typedef struct rocp_dimension {
  const char *name; /* "XCC", "SE", "INSTANCE", ... */
  size_t instance_size;
  uint64_t id;
} rocp_dimension;

/* rocprofiler_counter_info_v0_t, filled by the SDK into lumen's storage:
 * the same 48 bytes in every version. lumen reads counters through it and
 * their dimensions through rocprofiler_iterate_counter_dimensions, which
 * every version has (deprecated from 1.0 on). Version 1 is not used: 0.5
 * and 0.6 refuse it, and the ROCm 7.0 branch and the later development
 * line give two different layouts under the same version number. */
typedef struct rocp_counter_info {
  rocp_counter_id id;
  const char *name;
  const char *description;
  const char *block;
  const char *expression;
  uint8_t is_constant : 1;
  uint8_t is_derived : 1;
} rocp_counter_info;

/* rocprofiler_available_dimensions_cb_t: the dimensions of one counter,
 * an array of structs valid only during the call. */
typedef rocp_status (*rocp_dimensions_cb)(rocp_counter_id id, const rocp_dimension *dims, size_t n,
                                          void *user);

typedef rocp_status (*rocp_counters_cb)(rocp_agent_id agent, rocp_counter_id *counters, size_t n,
                                        void *user);

/* rocprofiler_kernel_dispatch_info_t: 128 bytes by contract. */
typedef struct rocp_dispatch_info {
  uint64_t size;
  rocp_agent_id agent_id;
  rocp_queue_id queue_id;
  uint64_t kernel_id;
  uint64_t dispatch_id;
  uint32_t private_segment_size; /* scratch per work-item */
  uint32_t group_segment_size;   /* LDS per workgroup */
  rocp_dim3 workgroup_size;
  rocp_dim3 grid_size;
  uint8_t reserved_padding[56];
} rocp_dispatch_info;

/* rocprofiler_async_correlation_id_t */
typedef struct {
  uint64_t internal;
  rocp_user_data external;
} rocp_async_correlation_id;

/* rocprofiler_dispatch_counting_service_data_t (passed by value). */
typedef struct rocp_dispatch_data {
  uint64_t size;
  rocp_async_correlation_id correlation_id;
  uint64_t start_timestamp, end_timestamp; /* ns, CLOCK_BOOTTIME */
  rocp_dispatch_info dispatch_info;
} rocp_dispatch_data;

/* rocprofiler_counter_record_t (0.5: rocprofiler_record_counter_t). */
typedef struct rocp_counter_record {
  uint64_t id; /* instance id: counter and dimension positions */
  double counter_value;
  uint64_t dispatch_id;
  rocp_user_data user_data;
  rocp_agent_id agent_id;
} rocp_counter_record;

typedef void (*rocp_dispatch_cb)(rocp_dispatch_data data, rocp_counter_config_id *config,
                                 rocp_user_data *user_data, void *arg);
typedef void (*rocp_record_cb)(rocp_dispatch_data data, rocp_counter_record *records, size_t n,
                               rocp_user_data user_data, void *arg);

/* Callback tracing. */
enum {
  ROCP_TRACING_MARKER_CORE_API = 7, /* rocprofiler_callback_tracing_kind_t */
  ROCP_TRACING_CODE_OBJECT = 10
};
enum { ROCP_CODE_OBJECT_DEVICE_KERNEL_SYMBOL_REGISTER = 2 };
enum { ROCP_PHASE_NONE = 0, ROCP_PHASE_ENTER = 1, ROCP_PHASE_EXIT = 2 }; /* LOAD = ENTER */
/* rocprofiler_marker_core_api_id_t */
enum {
  ROCP_MARKER_roctxMarkA = 0,
  ROCP_MARKER_roctxRangePushA = 1,
  ROCP_MARKER_roctxRangePop = 2,
  ROCP_MARKER_roctxRangeStartA = 3,
  ROCP_MARKER_roctxRangeStop = 4
};

/* rocprofiler_correlation_id_t: with ancestor from 1.0 on, without it in
 * 0.5/0.6. */
typedef struct {
  uint64_t internal;
  rocp_user_data external;
  uint64_t ancestor;
} rocp_correlation_id;
typedef struct {
  uint64_t internal;
  rocp_user_data external;
} rocp_correlation_id_0x;

/* rocprofiler_callback_tracing_record_t (passed by value): 64 bytes from
 * 1.0 on, 56 in 0.5/0.6 (the correlation id is 8 bytes shorter, so kind,
 * operation, phase and payload sit 8 bytes lower). A tool registers the
 * callback of its SDK's layout: passed by value, the record is copied
 * into the callee's argument area at the caller's size. */
typedef struct rocp_tracing_record {
  rocp_context_id context_id;
  uint64_t thread_id;
  rocp_correlation_id correlation_id;
  int kind;
  int32_t operation;
  int phase;
  void *payload;
} rocp_tracing_record;
typedef struct rocp_tracing_record_0x {
  rocp_context_id context_id;
  uint64_t thread_id;
  rocp_correlation_id_0x correlation_id;
  int kind;
  int32_t operation;
  int phase;
  void *payload;
} rocp_tracing_record_0x;

typedef void (*rocp_tracing_cb)(rocp_tracing_record record, rocp_user_data *user_data, void *arg);
typedef void (*rocp_tracing_cb_0x)(rocp_tracing_record_0x record, rocp_user_data *user_data, void *arg);

/* rocprofiler_callback_tracing_code_object_kernel_symbol_register_data_t,
 * up to accum_vgpr_count. */
typedef struct rocp_kernel_symbol {
  uint64_t size;
  uint64_t kernel_id;
  uint64_t code_object_id;
  const char *kernel_name; /* mangled */
  uint64_t kernel_object;
  uint32_t kernarg_segment_size, kernarg_segment_alignment;
  uint32_t group_segment_size, private_segment_size;
  uint32_t sgpr_count, arch_vgpr_count, accum_vgpr_count;
} rocp_kernel_symbol;

/* rocprofiler_callback_tracing_marker_api_data_t: the arguments (a union
 * of 16 bytes in 1.x: its largest members are a name and a pointer) and
 * the return value. roctxMarkA / roctxRangePushA / roctxRangeStartA pass
 * their message, roctxRangeStop its range id; roctxRangeStartA returns the
 * id of the range it started (in the EXIT phase). */
typedef struct rocp_marker_data {
  uint64_t size;
  union {
    const char *message;
    uint64_t range_id;
    const void *words[2];
  } arg;
  union {
    int32_t i32;
    int64_t i64;
    uint64_t range_id;
  } retval;
} rocp_marker_data;

/* Registration. rocprofiler_client_id_t, lent to rocprofiler_configure:
 * from 1.0 on it opens with its size; 0.5/0.6 have no size, so their
 * name is at 0 and the SDK's handle at 8. A tool writes only the name, at
 * its layout's place: the SDK finalizes a client only while the id it
 * lent still holds the handle it gave. */
typedef struct {
  size_t size;
  const char *name;
  const uint32_t handle;
} rocp_client_id;
typedef struct {
  const char *name;
  const uint32_t handle;
} rocp_client_id_0x;
/* The finalizer the SDK hands to initialize takes the id by value in its
 * layout's form; lumen never calls it (the SDK finalizes at exit). */
typedef void (*rocp_client_finalize)(rocp_client_id id);
typedef struct rocp_configure_result {
  size_t size;
  int (*initialize)(rocp_client_finalize finalize, void *tool_data);
  void (*finalize)(void *tool_data);
  void *tool_data;
} rocp_configure_result;

/* The tool's entry point (registration.h), defined by lumen's tool
 * library and looked up by the SDK's registration. */
rocp_configure_result *rocprofiler_configure(uint32_t version, const char *runtime_version,
                                             uint32_t priority, void *client_id);

/* The layouts lumen reads, chosen from the version the SDK reports. */
typedef enum {
  LM_ROCP_LAYOUT_0X, /* 0.5 (ROCm 6.3), 0.6 (ROCm 6.4) */
  LM_ROCP_LAYOUT_1X  /* 1.0 (ROCm 7.0 and the later development line) */
} lm_rocp_layout;

/* The functions lumen calls, resolved with lm_dl_resolve (lm_rocp_load). */
typedef struct lm_rocp_api {
  lm_dl_lib lib; /* the SDK; its handle NULL when none is loaded */
  uint32_t major, minor, patch;
  lm_rocp_layout layout;
  int newer; /* a 1.x later than 1.0, read in the 1.0 layout */
  rocp_status (*get_version)(uint32_t *major, uint32_t *minor, uint32_t *patch);
  rocp_status (*create_context)(rocp_context_id *ctx);
  rocp_status (*start_context)(rocp_context_id ctx);
  rocp_status (*stop_context)(rocp_context_id ctx);
  rocp_status (*query_available_agents)(int version, rocp_agents_cb cb, size_t agent_size,
                                        void *user);
  rocp_status (*iterate_agent_supported_counters)(rocp_agent_id agent, rocp_counters_cb cb,
                                                  void *user);
  rocp_status (*query_counter_info)(rocp_counter_id id, int version, void *info);
  rocp_status (*iterate_counter_dimensions)(rocp_counter_id id, rocp_dimensions_cb cb, void *user);
  /* rocprofiler_create_counter_config, or 0.5's create_profile_config. */
  rocp_status (*create_counter_config)(rocp_agent_id agent, rocp_counter_id *counters, size_t n,
                                       rocp_counter_config_id *config);
  rocp_status (*configure_callback_dispatch_counting_service)(rocp_context_id ctx,
                                                              rocp_dispatch_cb dispatch_cb,
                                                              void *dispatch_arg,
                                                              rocp_record_cb record_cb,
                                                              void *record_arg);
  rocp_status (*configure_callback_tracing_service)(rocp_context_id ctx, int kind,
                                                    const int32_t *operations, size_t n,
                                                    rocp_tracing_cb cb, void *arg);
  rocp_status (*query_record_counter_id)(uint64_t instance, rocp_counter_id *counter);
  rocp_status (*query_record_dimension_position)(uint64_t instance, uint64_t dim, size_t *pos);
} lm_rocp_api;

/* The declarations, tied to the table of docs/rocprofiler-sdk.md where
 * lumen is built for x86-64 LP64 (the table's offsets are for that ABI):
 * those the same in SDK 0.5, 0.6, the ROCm 7.0 branch and the development
 * line, and both forms of the tracing record and the client id. */
#if defined(__x86_64__) && defined(__LP64__)
_Static_assert(ROCP_STATUS_ERROR_COUNTER_NOT_FOUND == 8 && ROCP_STATUS_ERROR_EXCEEDS_HW_LIMIT == 38 &&
                   ROCP_STATUS_ERROR_AGENT_ARCH_NOT_SUPPORTED == 39,
               "rocprofiler_status_t values (fwd.h)");
_Static_assert(ROCP_AGENT_TYPE_GPU == 2 && ROCP_AGENT_INFO_VERSION_0 == 1 && ROCP_COUNTER_INFO_VERSION_0 == 1,
               "agent type, agent and counter info versions");
_Static_assert(ROCP_TRACING_MARKER_CORE_API == 7 && ROCP_TRACING_CODE_OBJECT == 10 &&
                   ROCP_CODE_OBJECT_DEVICE_KERNEL_SYMBOL_REGISTER == 2 && ROCP_PHASE_ENTER == 1 &&
                   ROCP_PHASE_EXIT == 2 && ROCP_MARKER_roctxRangeStop == 4,
               "callback tracing kinds, operations and phases");
_Static_assert(sizeof(rocp_dim3) == 12 && sizeof(rocp_user_data) == 8, "dim3, user data");
_Static_assert(sizeof(rocp_agent_cache) == 40 && offsetof(rocp_agent_cache, level) == 16 &&
                   offsetof(rocp_agent_cache, type) == 36,
               "rocprofiler_agent_cache_t");
_Static_assert(sizeof(rocp_agent_mem_bank) == 24 && offsetof(rocp_agent_mem_bank, mem_clk_max) == 12 &&
                   offsetof(rocp_agent_mem_bank, size_in_bytes) == 16,
               "rocprofiler_agent_mem_bank_t");
_Static_assert(offsetof(rocp_agent, type) == 16 && offsetof(rocp_agent, max_waves_per_simd) == 48 &&
                   offsetof(rocp_agent, wave_front_size) == 64 && offsetof(rocp_agent, num_xcc) == 68 &&
                   offsetof(rocp_agent, cu_count) == 72 && offsetof(rocp_agent, array_count) == 76 &&
                   offsetof(rocp_agent, simd_arrays_per_engine) == 84 && offsetof(rocp_agent, simd_per_cu) == 92 &&
                   offsetof(rocp_agent, gfx_target_version) == 100 &&
                   offsetof(rocp_agent, max_engine_clk_fcompute) == 140 &&
                   offsetof(rocp_agent, max_waves_per_cu) == 160 && offsetof(rocp_agent, workgroup_max_size) == 168 &&
                   offsetof(rocp_agent, local_mem_size) == 176 && offsetof(rocp_agent, mem_banks) == 224 &&
                   offsetof(rocp_agent, caches) == 232 && offsetof(rocp_agent, name) == 248 &&
                   offsetof(rocp_agent, product_name) == 264 && offsetof(rocp_agent, model_name) == 272 &&
                   offsetof(rocp_agent, logical_node_type_id) == 288 && sizeof(rocp_agent) == 296,
               "rocprofiler_agent_v0_t up to logical_node_type_id");
_Static_assert(ROCP_STATUS_ERROR_INCOMPATIBLE_ABI == 18 && ROCP_STATUS_ERROR_DIM_NOT_FOUND == 23,
               "rocprofiler_status_t values (fwd.h)");
_Static_assert(sizeof(rocp_dimension) == 24 && offsetof(rocp_dimension, instance_size) == 8 &&
                   offsetof(rocp_dimension, id) == 16,
               "counter record dimension info");
_Static_assert(sizeof(rocp_counter_info) == 48 && offsetof(rocp_counter_info, name) == 8 &&
                   offsetof(rocp_counter_info, block) == 24 && offsetof(rocp_counter_info, expression) == 32,
               "rocprofiler_counter_info_v0_t");
_Static_assert(sizeof(rocp_tracing_record) == 64 && offsetof(rocp_tracing_record, correlation_id) == 16 &&
                   offsetof(rocp_tracing_record, kind) == 40 && offsetof(rocp_tracing_record, operation) == 44 &&
                   offsetof(rocp_tracing_record, phase) == 48 && offsetof(rocp_tracing_record, payload) == 56,
               "rocprofiler_callback_tracing_record_t (1.0)");
_Static_assert(sizeof(rocp_tracing_record_0x) == 56 && offsetof(rocp_tracing_record_0x, kind) == 32 &&
                   offsetof(rocp_tracing_record_0x, operation) == 36 && offsetof(rocp_tracing_record_0x, phase) == 40 &&
                   offsetof(rocp_tracing_record_0x, payload) == 48,
               "rocprofiler_callback_tracing_record_t (0.5/0.6)");
_Static_assert(sizeof(rocp_client_id) == 24 && offsetof(rocp_client_id, name) == 8 &&
                   offsetof(rocp_client_id, handle) == 16,
               "rocprofiler_client_id_t (1.0)");
_Static_assert(sizeof(rocp_client_id_0x) == 16 && offsetof(rocp_client_id_0x, name) == 0 &&
                   offsetof(rocp_client_id_0x, handle) == 8,
               "rocprofiler_client_id_t (0.5/0.6)");
_Static_assert(sizeof(rocp_dispatch_info) == 128 && offsetof(rocp_dispatch_info, dispatch_id) == 32 &&
                   offsetof(rocp_dispatch_info, private_segment_size) == 40 &&
                   offsetof(rocp_dispatch_info, workgroup_size) == 48 && offsetof(rocp_dispatch_info, grid_size) == 60,
               "rocprofiler_kernel_dispatch_info_t");
_Static_assert(sizeof(rocp_dispatch_data) == 168 && offsetof(rocp_dispatch_data, start_timestamp) == 24 &&
                   offsetof(rocp_dispatch_data, end_timestamp) == 32 && offsetof(rocp_dispatch_data, dispatch_info) == 40,
               "rocprofiler_dispatch_counting_service_data_t");
_Static_assert(sizeof(rocp_counter_record) == 40 && offsetof(rocp_counter_record, counter_value) == 8 &&
                   offsetof(rocp_counter_record, dispatch_id) == 16 && offsetof(rocp_counter_record, agent_id) == 32,
               "rocprofiler_counter_record_t");
_Static_assert(offsetof(rocp_kernel_symbol, kernel_name) == 24 && offsetof(rocp_kernel_symbol, group_segment_size) == 48 &&
                   offsetof(rocp_kernel_symbol, private_segment_size) == 52 &&
                   offsetof(rocp_kernel_symbol, sgpr_count) == 56 && offsetof(rocp_kernel_symbol, accum_vgpr_count) == 64,
               "kernel symbol register data");
_Static_assert(sizeof(rocp_marker_data) == 32 && offsetof(rocp_marker_data, arg) == 8 &&
                   offsetof(rocp_marker_data, retval) == 24,
               "rocprofiler_callback_tracing_marker_api_data_t");
_Static_assert(sizeof(rocp_configure_result) == 32 && offsetof(rocp_configure_result, tool_data) == 24,
               "rocprofiler_tool_configure_result_t");
#endif

/* The oldest SDK lumen accepts: its dispatch counting API. */
#define LM_ROCP_MIN_MAJOR 0
#define LM_ROCP_MIN_MINOR 5
/* The size of the 1.0 client id: a later 1.x whose client id reports
 * less is not read in the 1.0 layout. */
#define LM_ROCP_CLIENT_ID_1X_SIZE 24

#endif
