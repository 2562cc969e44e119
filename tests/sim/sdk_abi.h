/*
 * sdk_abi.h - the simulated rocprofiler-sdk's own declarations of the SDK
 * types and values it implements, written from the table of
 * docs/rocprofiler-sdk.md (the SDK's public headers, per version), not
 * from lumen's backend/rocprofiler_abi.h. The two are kept apart on
 * purpose: a value or layout lumen gets wrong is then answered by the
 * simulation with the SDK's, and a test sees the disagreement.
 *
 * The layouts are those of the development line (SDK 1.0.0 with a sized
 * counter_info_v1 whose dimensions are an array of pointers), plus the
 * older variants the simulation can take instead (sdk_layout); where an
 * older version differs otherwise, the table says how. Offsets are
 * checked at compile time (x86-64 LP64) against the table.
 */
#ifndef LUMEN_SIM_SDK_ABI_H
#define LUMEN_SIM_SDK_ABI_H

#include <stddef.h>
#include <stdint.h>

/* rocprofiler_status_t (fwd.h): the same values in 0.5, 0.6, 7.0, dev. */
typedef int sdk_status;
enum {
  SDK_STATUS_SUCCESS = 0,
  SDK_STATUS_ERROR = 1,
  SDK_STATUS_ERROR_COUNTER_NOT_FOUND = 8,
  SDK_STATUS_ERROR_INCOMPATIBLE_ABI = 18,
  SDK_STATUS_ERROR_DIM_NOT_FOUND = 23,
  SDK_STATUS_ERROR_EXCEEDS_HW_LIMIT = 38,
  SDK_STATUS_ERROR_AGENT_ARCH_NOT_SUPPORTED = 39
};

/* The SDK versions whose layouts the simulation can take
 * (LUMEN_SIMSDK_LAYOUT: 0.5, 0.6, 7.0 or dev; dev by default). */
typedef enum { SDK_LAYOUT_05, SDK_LAYOUT_06, SDK_LAYOUT_70, SDK_LAYOUT_DEV } sdk_layout;

/* Handles: one uint64_t each. */
typedef struct { uint64_t handle; } sdk_context_id;
typedef struct { uint64_t handle; } sdk_agent_id;
typedef struct { uint64_t handle; } sdk_queue_id;
typedef struct { uint64_t handle; } sdk_counter_id;
typedef struct { uint64_t handle; } sdk_counter_config_id;

/* rocprofiler_user_data_t */
typedef union {
  uint64_t value;
  void *ptr;
} sdk_user_data;

/* rocprofiler_dim3_t */
typedef struct {
  uint32_t x, y, z;
} sdk_dim3;

/* rocprofiler_agent_type_t, rocprofiler_agent_version_t */
enum { SDK_AGENT_TYPE_NONE = 0, SDK_AGENT_TYPE_CPU = 1, SDK_AGENT_TYPE_GPU = 2 };
enum { SDK_AGENT_INFO_VERSION_0 = 1 };

/* rocprofiler_agent_cache_t; type holds the HsaCacheType bits. */
typedef struct sdk_agent_cache {
  uint64_t processor_id_low;
  uint64_t size; /* KiB */
  uint32_t level, cache_line_size, cache_lines_per_tag, association, latency;
  uint32_t type;
} sdk_agent_cache;
enum { SDK_CACHE_DATA = 1u << 0, SDK_CACHE_INSTRUCTION = 1u << 1, SDK_CACHE_CPU = 1u << 2,
       SDK_CACHE_HSACU = 1u << 3 };

/* rocprofiler_agent_mem_bank_t */
typedef struct sdk_agent_mem_bank {
  uint32_t heap_type, flags, width, mem_clk_max;
  uint64_t size_in_bytes;
} sdk_agent_mem_bank;

/* rocprofiler_agent_v0_t up to logical_node_type_id (offset 288); the
 * members after it differ between versions and the simulation sets none
 * of them. The HSA engine version, firmware id and capability are 32-bit
 * unions. */
typedef struct sdk_agent {
  uint64_t size;
  sdk_agent_id id;
  int type;
  uint32_t cpu_cores_count, simd_count, mem_banks_count, caches_count, io_links_count;
  uint32_t cpu_core_id_base, simd_id_base, max_waves_per_simd, lds_size_in_kb, gds_size_in_kb;
  uint32_t num_gws, wave_front_size, num_xcc, cu_count, array_count, num_shader_banks;
  uint32_t simd_arrays_per_engine, cu_per_simd_array, simd_per_cu, max_slots_scratch_cu;
  uint32_t gfx_target_version;
  uint16_t vendor_id, device_id;
  uint32_t location_id, domain, drm_render_minor;
  uint32_t num_sdma_engines, num_sdma_xgmi_engines, num_sdma_queues_per_engine, num_cp_queues;
  uint32_t max_engine_clk_ccompute, max_engine_clk_fcompute;
  uint32_t sdma_fw_version, fw_version, capability;
  uint32_t cu_per_engine, max_waves_per_cu, family_id, workgroup_max_size, grid_max_size;
  uint64_t local_mem_size, hive_id, gpu_id;
  sdk_dim3 workgroup_max_dim, grid_max_dim;
  const sdk_agent_mem_bank *mem_banks;
  const sdk_agent_cache *caches;
  const void *io_links;
  const char *name, *vendor_name, *product_name, *model_name;
  uint32_t node_id;
  int32_t logical_node_id, logical_node_type_id;
  /* The members after it, which the simulation leaves at 0: the struct
   * is 296 bytes in 0.5, 304 in 0.6 and 7.0, 312 in the development line,
   * and its size member says which. */
  uint8_t tail[16];
} sdk_agent;

typedef sdk_status (*sdk_agents_cb)(int version, const void **agents, size_t n, void *user);

/* rocprofiler_counter_info_version_id_t: VERSION_1 exists from 1.0.0. */
enum { SDK_COUNTER_INFO_VERSION_0 = 1, SDK_COUNTER_INFO_VERSION_1 = 2 };

/* rocprofiler_counter_record_dimension_info_t (0.5/0.6:
 * rocprofiler_record_dimension_info_t, the same members). */
typedef struct sdk_dimension {
  const char *name;
  size_t instance_size;
  uint64_t id;
} sdk_dimension;

/* rocprofiler_counter_info_v0_t: 48 bytes in every version. */
typedef struct sdk_counter_info_v0 {
  sdk_counter_id id;
  const char *name, *description, *block, *expression;
  uint8_t is_constant : 1;
  uint8_t is_derived : 1;
} sdk_counter_info_v0;

/* rocprofiler_counter_info_v1_t of the ROCm 7.0 branch (1.0.0): no size,
 * the dimensions an array of structs, the instance ids: 80 bytes. */
typedef struct sdk_counter_info_v1_70 {
  sdk_counter_id id;
  const char *name, *description, *block, *expression;
  uint8_t is_constant : 1;
  uint8_t is_derived : 1;
  uint64_t dimensions_count;
  const sdk_dimension *dimensions;
  uint64_t instance_ids_count;
  const uint64_t *instance_ids;
} sdk_counter_info_v1_70;

/* rocprofiler_counter_info_v1_t of the development line: 88 bytes. */
typedef struct sdk_counter_info_v1 {
  uint64_t size;
  sdk_counter_id id;
  const char *name, *description, *block, *expression;
  uint8_t is_constant : 1;
  uint8_t is_derived : 1;
  uint64_t dimensions_count;
  const sdk_dimension **dimensions;
  uint64_t dimensions_instances_count;
  const void **dimensions_instances;
} sdk_counter_info_v1;

/* rocprofiler_available_dimensions_cb_t: an array of structs (0.5/0.6
 * counters.h, deprecated/counters.h from 1.0 on). */
typedef sdk_status (*sdk_dimensions_cb)(sdk_counter_id id, const sdk_dimension *dims, size_t n, void *user);

typedef sdk_status (*sdk_counters_cb)(sdk_agent_id agent, sdk_counter_id *counters, size_t n,
                                      void *user);

/* rocprofiler_kernel_dispatch_info_t: 128 bytes in every version. */
typedef struct sdk_dispatch_info {
  uint64_t size;
  sdk_agent_id agent_id;
  sdk_queue_id queue_id;
  uint64_t kernel_id, dispatch_id;
  uint32_t private_segment_size, group_segment_size;
  sdk_dim3 workgroup_size, grid_size;
  uint8_t reserved_padding[56];
} sdk_dispatch_info;

/* The correlation id of a dispatch counting record: 16 bytes in every
 * version (0.5/0.6 name it rocprofiler_correlation_id_t, later versions
 * rocprofiler_async_correlation_id_t). */
typedef struct {
  uint64_t internal;
  sdk_user_data external;
} sdk_async_correlation_id;

/* rocprofiler_dispatch_counting_service_data_t: 168 bytes. */
typedef struct sdk_dispatch_data {
  uint64_t size;
  sdk_async_correlation_id correlation_id;
  uint64_t start_timestamp, end_timestamp;
  sdk_dispatch_info dispatch_info;
} sdk_dispatch_data;

/* rocprofiler_counter_record_t (0.5/0.6: rocprofiler_record_counter_t). */
typedef struct sdk_counter_record {
  uint64_t id;
  double counter_value;
  uint64_t dispatch_id;
  sdk_user_data user_data;
  sdk_agent_id agent_id;
} sdk_counter_record;

typedef void (*sdk_dispatch_cb)(sdk_dispatch_data data, sdk_counter_config_id *config,
                                sdk_user_data *user_data, void *arg);
typedef void (*sdk_record_cb)(sdk_dispatch_data data, sdk_counter_record *records, size_t n,
                              sdk_user_data user_data, void *arg);

/* rocprofiler_callback_tracing_kind_t, the code object operation, the
 * callback phase (LOAD = ENTER, UNLOAD = EXIT) and
 * rocprofiler_marker_core_api_id_t. */
enum { SDK_TRACING_MARKER_CORE_API = 7, SDK_TRACING_CODE_OBJECT = 10 };
enum { SDK_CODE_OBJECT_DEVICE_KERNEL_SYMBOL_REGISTER = 2 };
enum { SDK_PHASE_NONE = 0, SDK_PHASE_ENTER = 1, SDK_PHASE_EXIT = 2 };
enum {
  SDK_MARKER_roctxMarkA = 0,
  SDK_MARKER_roctxRangePushA = 1,
  SDK_MARKER_roctxRangePop = 2,
  SDK_MARKER_roctxRangeStartA = 3,
  SDK_MARKER_roctxRangeStop = 4
};

/* rocprofiler_correlation_id_t from 7.0 on (with ancestor: 24 bytes;
 * 0.5/0.6 have no ancestor: 16). */
typedef struct {
  uint64_t internal;
  sdk_user_data external;
  uint64_t ancestor;
} sdk_correlation_id;

/* rocprofiler_callback_tracing_record_t (passed by value): 64 bytes from
 * 7.0 on, 56 in 0.5/0.6. */
typedef struct sdk_tracing_record {
  sdk_context_id context_id;
  uint64_t thread_id;
  sdk_correlation_id correlation_id;
  int kind;
  int32_t operation;
  int phase;
  void *payload;
} sdk_tracing_record;

typedef void (*sdk_tracing_cb)(sdk_tracing_record record, sdk_user_data *user_data, void *arg);

/* The 0.5/0.6 record: the correlation id without ancestor, 56 bytes. */
typedef struct {
  uint64_t internal;
  sdk_user_data external;
} sdk_correlation_id_05;
typedef struct sdk_tracing_record_05 {
  sdk_context_id context_id;
  uint64_t thread_id;
  sdk_correlation_id_05 correlation_id;
  int kind;
  int32_t operation;
  int phase;
  void *payload;
} sdk_tracing_record_05;
typedef void (*sdk_tracing_cb_05)(sdk_tracing_record_05 record, sdk_user_data *user_data, void *arg);

/* rocprofiler_callback_tracing_code_object_kernel_symbol_register_data_t
 * up to accum_vgpr_count (later members differ between versions). */
typedef struct sdk_kernel_symbol {
  uint64_t size, kernel_id, code_object_id;
  const char *kernel_name;
  uint64_t kernel_object;
  uint32_t kernarg_segment_size, kernarg_segment_alignment;
  uint32_t group_segment_size, private_segment_size;
  uint32_t sgpr_count, arch_vgpr_count, accum_vgpr_count;
} sdk_kernel_symbol;

/* rocprofiler_callback_tracing_marker_api_data_t: size, the arguments
 * (rocprofiler_marker_api_args_t, a 16-byte union) and the return value
 * (an 8-byte union): 32 bytes. */
typedef struct sdk_marker_data {
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
} sdk_marker_data;

/* rocprofiler_client_id_t from 7.0 on (0.5/0.6: no size, name at 0 and
 * handle at 8). */
typedef struct {
  size_t size;
  const char *name;
  uint32_t handle;
} sdk_client_id;
typedef void (*sdk_client_finalize)(sdk_client_id id);
/* The 0.5/0.6 client id: 16 bytes. */
typedef struct {
  const char *name;
  uint32_t handle;
} sdk_client_id_05;
typedef void (*sdk_client_finalize_05)(sdk_client_id_05 id);

/* rocprofiler_tool_configure_result_t: 32 bytes in every version. */
typedef struct sdk_configure_result {
  size_t size;
  int (*initialize)(sdk_client_finalize finalize, void *tool_data);
  void (*finalize)(void *tool_data);
  void *tool_data;
} sdk_configure_result;

/* The table's offsets, on the ABI every SDK build uses (x86-64 LP64). */
#if defined(__x86_64__) && defined(__LP64__)
_Static_assert(sizeof(sdk_agent_cache) == 40 && offsetof(sdk_agent_cache, type) == 36, "agent cache");
_Static_assert(sizeof(sdk_agent_mem_bank) == 24 && offsetof(sdk_agent_mem_bank, size_in_bytes) == 16,
               "agent mem bank");
_Static_assert(offsetof(sdk_agent, type) == 16 && offsetof(sdk_agent, gfx_target_version) == 100 &&
                   offsetof(sdk_agent, max_engine_clk_fcompute) == 140 &&
                   offsetof(sdk_agent, max_waves_per_cu) == 160 && offsetof(sdk_agent, local_mem_size) == 176 &&
                   offsetof(sdk_agent, workgroup_max_dim) == 200 && offsetof(sdk_agent, mem_banks) == 224 &&
                   offsetof(sdk_agent, caches) == 232 && offsetof(sdk_agent, name) == 248 &&
                   offsetof(sdk_agent, product_name) == 264 && offsetof(sdk_agent, model_name) == 272 &&
                   offsetof(sdk_agent, node_id) == 280 && offsetof(sdk_agent, logical_node_type_id) == 288,
               "agent v0");
_Static_assert(sizeof(sdk_dimension) == 24, "dimension info");
_Static_assert(sizeof(sdk_agent) == 312, "rocprofiler_agent_v0_t of the development line");
_Static_assert(sizeof(sdk_counter_info_v1) == 88 && offsetof(sdk_counter_info_v1, id) == 8 &&
                   offsetof(sdk_counter_info_v1, name) == 16 && offsetof(sdk_counter_info_v1, expression) == 40 &&
                   offsetof(sdk_counter_info_v1, dimensions_count) == 56 &&
                   offsetof(sdk_counter_info_v1, dimensions) == 64 &&
                   offsetof(sdk_counter_info_v1, dimensions_instances) == 80,
               "counter info v1 (development line)");
_Static_assert(sizeof(sdk_counter_info_v0) == 48 && offsetof(sdk_counter_info_v0, expression) == 32,
               "counter info v0");
_Static_assert(sizeof(sdk_counter_info_v1_70) == 80 && offsetof(sdk_counter_info_v1_70, name) == 8 &&
                   offsetof(sdk_counter_info_v1_70, dimensions_count) == 48 &&
                   offsetof(sdk_counter_info_v1_70, dimensions) == 56 &&
                   offsetof(sdk_counter_info_v1_70, instance_ids) == 72,
               "counter info v1 (ROCm 7.0 branch)");
_Static_assert(sizeof(sdk_dispatch_info) == 128 && offsetof(sdk_dispatch_info, private_segment_size) == 40 &&
                   offsetof(sdk_dispatch_info, workgroup_size) == 48 && offsetof(sdk_dispatch_info, grid_size) == 60,
               "kernel dispatch info");
_Static_assert(sizeof(sdk_dispatch_data) == 168 && offsetof(sdk_dispatch_data, start_timestamp) == 24 &&
                   offsetof(sdk_dispatch_data, dispatch_info) == 40,
               "dispatch counting service data");
_Static_assert(sizeof(sdk_counter_record) == 40 && offsetof(sdk_counter_record, agent_id) == 32, "counter record");
_Static_assert(sizeof(sdk_tracing_record) == 64 && offsetof(sdk_tracing_record, kind) == 40 &&
                   offsetof(sdk_tracing_record, phase) == 48 && offsetof(sdk_tracing_record, payload) == 56,
               "callback tracing record (7.0 and later)");
_Static_assert(offsetof(sdk_kernel_symbol, kernel_name) == 24 && offsetof(sdk_kernel_symbol, group_segment_size) == 48 &&
                   offsetof(sdk_kernel_symbol, accum_vgpr_count) == 64,
               "kernel symbol register data");
_Static_assert(sizeof(sdk_marker_data) == 32 && offsetof(sdk_marker_data, retval) == 24, "marker api data");
_Static_assert(sizeof(sdk_client_id) == 24 && offsetof(sdk_client_id, handle) == 16, "client id (7.0 and later)");
_Static_assert(sizeof(sdk_tracing_record_05) == 56 && offsetof(sdk_tracing_record_05, kind) == 32 &&
                   offsetof(sdk_tracing_record_05, payload) == 48,
               "callback tracing record (0.5/0.6)");
_Static_assert(sizeof(sdk_client_id_05) == 16 && offsetof(sdk_client_id_05, handle) == 8, "client id (0.5/0.6)");
_Static_assert(sizeof(sdk_configure_result) == 32, "configure result");
#endif

#endif
