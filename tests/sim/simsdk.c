/*
 * simsdk.c - a SIMULATED rocprofiler-sdk, for tests and demonstrations only:
 * the subset of the SDK's C ABI lumen uses (declared in sim/sdk_abi.h, not
 * lumen's headers) over a recorded folder (LUMEN_SIM_RECORDING). Nothing it
 * reports is a measurement: it says so through lumen_device_replay, which no
 * real SDK exports.
 *
 * Built as librocprofiler-sdk.so, found through LUMEN_ROCPROFILER_SDK; its
 * agents carry the recording's system information (sysinfo.csv, or a
 * rocprofv3 run's agent_info.csv), laid out as the driver describes a CDNA
 * or an RDNA GPU, and read by lumen's hardware code.
 * LUMEN_SIMSDK_LAYOUT (0.5, 0.6, 7.0, dev) picks the SDK modelled,
 * LUMEN_SIMSDK_VERSION the version reported (docs/rocprofiler-sdk.md).
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "load/load.h"
#include "sim/simsdk.h"

#define EXPORT __attribute__((visibility("default")))
#define N_AGENTS SIMSDK_AGENTS

static struct {
  pthread_mutex_t lock;
  int loaded, failed;
  lm_workload *rec;
  sdk_agent agents[N_AGENTS];
  sdk_agent_cache caches[3];
  sdk_agent_mem_bank mem_bank;
  char arch[64], product[128];
  char recording[4096];
} G = {.lock = PTHREAD_MUTEX_INITIALIZER};

static double sysinfo_number(const char *name, double fallback) {
  long i = G.rec ? lm_sysinfo_find(&G.rec->sysinfo, name) : -1;
  return i >= 0 && G.rec->sysinfo.values[i] == G.rec->sysinfo.values[i] ? G.rec->sysinfo.values[i]
                                                                        : fallback;
}

/* gfx90a -> 90010, gfx942 -> 90402, gfx908 -> 90008, gfx1100 -> 110000,
 * gfx1201 -> 120001 (major * 10000 + minor * 100 + stepping, the agent's
 * numbering; the last two gfx digits are hexadecimal, the major the rest). */
static uint32_t gfx_version(const char *arch) {
  size_t n = strlen(arch);
  if (n < 6 || strncmp(arch, "gfx", 3) != 0) return 0;
  const char *v = arch + 3;
  size_t len = strlen(v);
  unsigned major = 0;
  for (size_t i = 0; i + 2 < len; i++) major = major * 10 + (unsigned)(v[i] - '0');
  char minor_c = v[len - 2], step_c = v[len - 1];
  unsigned minor = (unsigned)(minor_c >= 'a' ? minor_c - 'a' + 10 : minor_c - '0');
  unsigned step = (unsigned)(step_c >= 'a' ? step_c - 'a' + 10 : step_c - '0');
  return major * 10000 + minor * 100 + step;
}

/* RDNA (gfx10xx, gfx11xx, gfx12xx): two shader arrays per engine and
 * wave32 by default, where CDNA has one array per engine and wave64. */
static int rdna(const char *arch) {
  return strlen(arch) == 7 && strncmp(arch, "gfx1", 4) == 0 && arch[4] >= '0' && arch[4] <= '2';
}

int simsdk_load(void) {
  pthread_mutex_lock(&G.lock);
  if (G.loaded || G.failed) {
    int ok = G.loaded;
    pthread_mutex_unlock(&G.lock);
    return ok ? 0 : -1;
  }
  const char *dir = getenv("LUMEN_SIM_RECORDING");
  lm_diag diag;
  if (!dir || !*dir || lm_workload_read(dir, &G.rec, &diag) != LM_OK) {
    G.failed = 1;
    pthread_mutex_unlock(&G.lock);
    return -1;
  }
  snprintf(G.arch, sizeof G.arch, "%s", G.rec->arch);
  snprintf(G.recording, sizeof G.recording, "%s", dir);
  long mi = lm_sysinfo_find(&G.rec->sysinfo, "gpu_model");
  snprintf(G.product, sizeof G.product, "%s", mi >= 0 ? G.rec->sysinfo.texts[mi] : "");
  /* The driver's description: a vector L1 (RDNA's GL0) and an instruction
   * cache per CU, the L2, and the memory bank with its top clock (HBM's
   * 4096-bit width on CDNA; RDNA's GDDR width is not in the recording). A
   * field the recording lacks stays 0, as the driver leaves what it does
   * not know. */
  int is_rdna = rdna(G.arch);
  uint32_t se = (uint32_t)sysinfo_number("se_per_gpu", 0), cu = (uint32_t)sysinfo_number("cu_per_gpu", 0);
  uint32_t simd = (uint32_t)sysinfo_number("simd_per_cu", 0), waves = (uint32_t)sysinfo_number("max_waves_per_cu", 0);
  uint32_t arrays_per_se = is_rdna ? 2 : 1;
  G.caches[0] = (sdk_agent_cache){0, (uint64_t)sysinfo_number("gpu_l1", 0), 1, 128, 1, 64, 0, SDK_CACHE_DATA | SDK_CACHE_HSACU};
  G.caches[1] = (sdk_agent_cache){0, 64, 1, 64, 1, 8, 0, SDK_CACHE_INSTRUCTION | SDK_CACHE_HSACU};
  G.caches[2] = (sdk_agent_cache){0, (uint64_t)sysinfo_number("gpu_l2", 0), 2, 128, 1, 16, 0, SDK_CACHE_DATA | SDK_CACHE_HSACU};
  G.mem_bank = (sdk_agent_mem_bank){1, 0, is_rdna ? 0 : 4096, (uint32_t)sysinfo_number("max_mclk", 0), 0};
  for (int i = 0; i < N_AGENTS; i++) {
    sdk_agent *a = &G.agents[i];
    memset(a, 0, sizeof *a);
    a->size = simsdk_agent_size();
    a->id.handle = SIMSDK_AGENT_BASE + (uint64_t)i;
    a->type = SDK_AGENT_TYPE_GPU;
    a->cu_count = cu;
    a->simd_per_cu = simd;
    a->simd_count = cu * simd;
    a->num_xcc = (uint32_t)sysinfo_number("num_xcd", 1);
    a->array_count = se * arrays_per_se;
    a->simd_arrays_per_engine = se ? arrays_per_se : 0;
    a->num_shader_banks = se;
    a->cu_per_simd_array = se ? cu / (se * arrays_per_se) : 0;
    a->max_waves_per_cu = waves;
    a->max_waves_per_simd = simd ? waves / simd : 0;
    a->wave_front_size = (uint32_t)sysinfo_number("wave_size", is_rdna ? 32 : 64);
    a->workgroup_max_size = (uint32_t)sysinfo_number("workgroup_max_size", 0);
    a->max_engine_clk_fcompute = (uint32_t)sysinfo_number("max_sclk", 0);
    a->lds_size_in_kb = 64;
    a->caches = G.caches;
    a->caches_count = 3;
    a->mem_banks = &G.mem_bank;
    a->mem_banks_count = 1;
    a->gfx_target_version = gfx_version(G.arch);
    a->name = G.arch;
    a->vendor_name = "AMD";
    a->product_name = G.product;
    a->model_name = G.product;
    a->node_id = (uint32_t)i + 1; /* node 0 is the CPU */
    a->logical_node_id = i + 1;
    a->logical_node_type_id = i;
  }
  G.loaded = 1;
  pthread_mutex_unlock(&G.lock);
  return 0;
}

const lm_workload *simsdk_recording(void) { return simsdk_load() == 0 ? G.rec : NULL; }

/* lumen_device_replay: the recording this simulated SDK replays, or NULL
 * when it has none. lumen's device extension for a device that replays
 * (no real SDK exports it): how lumen knows that what it collects is a
 * replay (LM_ORIGIN_SIMULATED). */
EXPORT const char *lumen_device_replay(void) { return simsdk_load() == 0 ? G.recording : NULL; }

/* -------------------------------------------------------- the ABI subset */

int simsdk_layout(void) {
  const char *v = getenv("LUMEN_SIMSDK_LAYOUT");
  if (!v || !*v || strcmp(v, "dev") == 0) return SDK_LAYOUT_DEV;
  if (strcmp(v, "0.5") == 0) return SDK_LAYOUT_05;
  if (strcmp(v, "0.6") == 0) return SDK_LAYOUT_06;
  if (strcmp(v, "7.0") == 0) return SDK_LAYOUT_70;
  return -1;
}

/* The version of the layout (0.5.0, 0.6.0, 1.0.0 for 7.0 and dev), or
 * LUMEN_SIMSDK_VERSION's. An unknown layout fails the call: a test that
 * names one must not run on another. */
EXPORT sdk_status rocprofiler_get_version(uint32_t *major, uint32_t *minor, uint32_t *patch) {
  int layout = simsdk_layout();
  if (layout < 0) {
    fprintf(stderr, "simulated rocprofiler-sdk: LUMEN_SIMSDK_LAYOUT=%s is not one of 0.5, 0.6, 7.0, dev\n",
            getenv("LUMEN_SIMSDK_LAYOUT"));
    return SDK_STATUS_ERROR;
  }
  unsigned a = layout == SDK_LAYOUT_05 || layout == SDK_LAYOUT_06 ? 0 : 1;
  unsigned b = layout == SDK_LAYOUT_05 ? 5 : layout == SDK_LAYOUT_06 ? 6 : 0, c = 0;
  const char *v = getenv("LUMEN_SIMSDK_VERSION");
  if (v && *v && sscanf(v, "%u.%u.%u", &a, &b, &c) < 2) a = 1, b = 0, c = 0;
  *major = a;
  *minor = b;
  *patch = c;
  return SDK_STATUS_SUCCESS;
}

/* The size of rocprofiler_agent_v0_t in the layout's version (agent.h):
 * 296 in 0.5, 304 in 0.6 and 7.0, 312 in the development line. */
size_t simsdk_agent_size(void) {
  switch (simsdk_layout()) {
  case SDK_LAYOUT_05: return 296;
  case SDK_LAYOUT_06:
  case SDK_LAYOUT_70: return 304;
  default: return sizeof(sdk_agent);
  }
}

EXPORT sdk_status rocprofiler_query_available_agents(int version, sdk_agents_cb cb,
                                                      size_t agent_size, void *user) {
  if (version != SDK_AGENT_INFO_VERSION_0 || agent_size > simsdk_agent_size()) return SDK_STATUS_ERROR;
  const void *list[N_AGENTS];
  size_t n = 0;
  if (simsdk_load() == 0)
    for (int i = 0; i < N_AGENTS; i++) list[n++] = &G.agents[i];
  return cb(SDK_AGENT_INFO_VERSION_0, list, n, user);
}

/* ------------------------------------------------------------ contexts */

static uint64_t next_context = 1;

EXPORT sdk_status rocprofiler_create_context(sdk_context_id *ctx) {
  if (ctx->handle != 0) return SDK_STATUS_ERROR; /* the SDK rejects a used handle */
  pthread_mutex_lock(&G.lock);
  ctx->handle = next_context++;
  pthread_mutex_unlock(&G.lock);
  return SDK_STATUS_SUCCESS;
}

/* -------------------------------------------------------------- services */

/* The services each context configured; a context's callbacks run only
 * while it is started. */
#define MAX_CONTEXTS 16
static struct {
  int started[MAX_CONTEXTS];
  sdk_dispatch_cb dispatch_cb[MAX_CONTEXTS];
  void *dispatch_arg[MAX_CONTEXTS];
  sdk_record_cb record_cb[MAX_CONTEXTS];
  void *record_arg[MAX_CONTEXTS];
  sdk_tracing_cb tracing_cb[MAX_CONTEXTS][16];
  void *tracing_arg[MAX_CONTEXTS][16];
} S;

static int context_valid(sdk_context_id ctx) {
  return ctx.handle > 0 && ctx.handle < next_context && ctx.handle < MAX_CONTEXTS;
}

EXPORT sdk_status rocprofiler_start_context(sdk_context_id ctx) {
  if (!context_valid(ctx)) return SDK_STATUS_ERROR;
  pthread_mutex_lock(&G.lock);
  S.started[ctx.handle] = 1;
  pthread_mutex_unlock(&G.lock);
  return SDK_STATUS_SUCCESS;
}

EXPORT sdk_status rocprofiler_stop_context(sdk_context_id ctx) {
  if (!context_valid(ctx)) return SDK_STATUS_ERROR;
  pthread_mutex_lock(&G.lock);
  S.started[ctx.handle] = 0;
  pthread_mutex_unlock(&G.lock);
  return SDK_STATUS_SUCCESS;
}

EXPORT sdk_status rocprofiler_configure_callback_dispatch_counting_service(
    sdk_context_id ctx, sdk_dispatch_cb dispatch_cb, void *dispatch_arg, sdk_record_cb record_cb,
    void *record_arg) {
  if (!context_valid(ctx) || !dispatch_cb || !record_cb) return SDK_STATUS_ERROR;
  pthread_mutex_lock(&G.lock);
  S.dispatch_cb[ctx.handle] = dispatch_cb;
  S.dispatch_arg[ctx.handle] = dispatch_arg;
  S.record_cb[ctx.handle] = record_cb;
  S.record_arg[ctx.handle] = record_arg;
  pthread_mutex_unlock(&G.lock);
  return SDK_STATUS_SUCCESS;
}

EXPORT sdk_status rocprofiler_configure_callback_tracing_service(sdk_context_id ctx, int kind,
                                                                  const int32_t *operations,
                                                                  size_t n, sdk_tracing_cb cb,
                                                                  void *arg) {
  (void)operations;
  (void)n;
  if (!context_valid(ctx) || kind < 0 || kind >= 16 || !cb) return SDK_STATUS_ERROR;
  pthread_mutex_lock(&G.lock);
  S.tracing_cb[ctx.handle][kind] = cb;
  S.tracing_arg[ctx.handle][kind] = arg;
  pthread_mutex_unlock(&G.lock);
  return SDK_STATUS_SUCCESS;
}

void simsdk_services_now(simsdk_services *out) {
  memset(out, 0, sizeof *out);
  pthread_mutex_lock(&G.lock);
  for (uint64_t c = 1; c < next_context && c < MAX_CONTEXTS; c++) {
    if (!S.started[c]) continue;
    if (S.dispatch_cb[c] && !out->dispatch_cb) {
      out->dispatch_cb = S.dispatch_cb[c];
      out->dispatch_arg = S.dispatch_arg[c];
      out->record_cb = S.record_cb[c];
      out->record_arg = S.record_arg[c];
    }
    if (S.tracing_cb[c][SDK_TRACING_CODE_OBJECT] && !out->code_object_cb) {
      out->code_object_cb = S.tracing_cb[c][SDK_TRACING_CODE_OBJECT];
      out->code_object_arg = S.tracing_arg[c][SDK_TRACING_CODE_OBJECT];
      out->code_object_ctx.handle = c;
    }
    if (S.tracing_cb[c][SDK_TRACING_MARKER_CORE_API] && !out->marker_cb) {
      out->marker_cb = S.tracing_cb[c][SDK_TRACING_MARKER_CORE_API];
      out->marker_arg = S.tracing_arg[c][SDK_TRACING_MARKER_CORE_API];
      out->marker_ctx.handle = c;
    }
  }
  pthread_mutex_unlock(&G.lock);
}

/* -------------------------------------------------------------- counters */

/* The counters of the simulated agents are those rocprofiler-sdk defines
 * for the recording's architecture (sdk_counters.inc: facts from the SDK's
 * published definitions), not the recording's columns nor lumen's metric
 * files; a counter the recording holds no value for is listed all the
 * same, and its records are left out ("no value"). */
static const struct {
  const char *name, *kind, *archs;
} defs[] = {
#include "sim/sdk_counters.inc"
};

#define MAX_COUNTERS 1024
static struct {
  int ready;
  size_t n;
  simsdk_counter c[MAX_COUNTERS];
  sdk_dimension dim[MAX_COUNTERS][2];
  const sdk_dimension *dim_ptr[MAX_COUNTERS][2];
} C;

static int arch_listed(const char *archs, const char *arch) {
  size_t n = strlen(arch);
  for (const char *p = strstr(archs, arch); p; p = strstr(p + 1, arch))
    if ((p == archs || p[-1] == ' ') && (p[n] == ' ' || p[n] == '\0')) return 1;
  return 0;
}

/* Per-instance blocks: TCC and TCA (CDNA's L2) and GL2C (RDNA's) per
 * channel, TCP, TA and TD per compute unit. Other blocks report one value
 * per XCC. Without a recorded channel count, an RDNA GL2C has as many
 * instances as aqlprofile's block tables give it (gfx11 32, gfx1200 16,
 * gfx1201 32), a CDNA L2 16. */
static size_t instances_of(const char *block) {
  size_t xcc = G.agents[0].num_xcc ? G.agents[0].num_xcc : 1;
  if (strcmp(block, "TCC") == 0 || strcmp(block, "TCA") == 0 || strcmp(block, "GL2C") == 0) {
    double fallback = strcmp(G.arch, "gfx1200") == 0 ? 16 : rdna(G.arch) ? 32 : 16;
    size_t ch = (size_t)sysinfo_number("total_l2_chan", fallback);
    return ch / xcc ? ch / xcc : 1;
  }
  if (strcmp(block, "TCP") == 0 || strcmp(block, "TA") == 0 || strcmp(block, "TD") == 0)
    return G.agents[0].cu_count / xcc ? G.agents[0].cu_count / xcc : 1;
  return 1;
}

static void counters_ready(void) {
  pthread_mutex_lock(&G.lock);
  if (!C.ready && G.rec) {
    size_t xcc = G.agents[0].num_xcc ? G.agents[0].num_xcc : 1;
    for (int pass = 0; pass < 2; pass++)
      for (size_t d = 0; d < sizeof defs / sizeof *defs && C.n < MAX_COUNTERS; d++) {
        int derived = defs[d].kind[0] == '=';
        if (derived != pass || !arch_listed(defs[d].archs, G.arch)) continue;
        simsdk_counter *c = &C.c[C.n];
        c->name = defs[d].name;
        c->base = -1;
        if (derived) {
          for (size_t k = 0; k < C.n && c->base < 0; k++)
            if (C.c[k].base < 0 && strcmp(C.c[k].name, defs[d].kind + 1) == 0) c->base = (int)k;
          if (c->base < 0) continue;
          c->block = C.c[c->base].block;
          c->n_xcc = c->n_inst = 1;
        } else {
          c->block = defs[d].kind;
          c->n_xcc = xcc;
          c->n_inst = instances_of(c->block);
          C.dim[C.n][0] = (sdk_dimension){"XCC", c->n_xcc, SIMSDK_DIM_XCC};
          C.dim[C.n][1] = (sdk_dimension){"INSTANCE", c->n_inst, SIMSDK_DIM_INSTANCE};
          C.dim_ptr[C.n][0] = &C.dim[C.n][0];
          C.dim_ptr[C.n][1] = &C.dim[C.n][1];
        }
        C.n++;
      }
    C.ready = 1;
  }
  pthread_mutex_unlock(&G.lock);
}

const simsdk_counter *simsdk_counter_get(size_t i) {
  counters_ready();
  return i < C.n ? &C.c[i] : NULL;
}

int simsdk_agent_index(sdk_agent_id agent) {
  uint64_t i = agent.handle - SIMSDK_AGENT_BASE;
  return agent.handle >= SIMSDK_AGENT_BASE && i < SIMSDK_AGENTS ? (int)i : -1;
}

sdk_agent_id simsdk_agent_id(int index) {
  sdk_agent_id id = {SIMSDK_AGENT_BASE + (uint64_t)index};
  return id;
}

EXPORT sdk_status rocprofiler_iterate_agent_supported_counters(sdk_agent_id agent,
                                                                sdk_counters_cb cb, void *user) {
  if (simsdk_load() != 0 || simsdk_agent_index(agent) < 0) return SDK_STATUS_ERROR;
  counters_ready();
  sdk_counter_id ids[MAX_COUNTERS];
  for (size_t i = 0; i < C.n; i++) ids[i].handle = i + 1;
  return cb(agent, ids, C.n, user);
}

/* Counter info as the layout's SDK gives it: version 0 (48 bytes) in
 * every layout; version 1 from 1.0.0 on, in the 7.0 branch's layout (no
 * size, dimensions as structs) or the development line's (size first,
 * dimensions as pointers); 0.5 and 0.6 refuse version 1 as
 * INCOMPATIBLE_ABI, as they refuse every version but 0. */
EXPORT sdk_status rocprofiler_query_counter_info(sdk_counter_id id, int version, void *info) {
  counters_ready();
  if (id.handle < 1 || id.handle > C.n) return SDK_STATUS_ERROR_COUNTER_NOT_FOUND;
  size_t i = id.handle - 1;
  int layout = simsdk_layout();
  const simsdk_counter *c = &C.c[i];
  const char *description = "simulated counter (replayed from a recording)";
  const char *block = c->base < 0 ? c->block : "";
  const char *expression = c->base < 0 ? "" : "reduce(X,sum)";
  uint64_t n_dims = c->base < 0 ? 2 : 0;
  if (version == SDK_COUNTER_INFO_VERSION_0) {
    sdk_counter_info_v0 *out = info;
    memset(out, 0, sizeof *out);
    *out = (sdk_counter_info_v0){.id = id, .name = c->name, .description = description, .block = block,
                                 .expression = expression, .is_derived = c->base >= 0};
    return SDK_STATUS_SUCCESS;
  }
  if (version != SDK_COUNTER_INFO_VERSION_1 || layout == SDK_LAYOUT_05 || layout == SDK_LAYOUT_06)
    return SDK_STATUS_ERROR_INCOMPATIBLE_ABI;
  if (layout == SDK_LAYOUT_70) {
    sdk_counter_info_v1_70 *out = info;
    memset(out, 0, sizeof *out);
    *out = (sdk_counter_info_v1_70){.id = id, .name = c->name, .description = description, .block = block,
                                    .expression = expression, .is_derived = c->base >= 0,
                                    .dimensions_count = n_dims, .dimensions = n_dims ? C.dim[i] : NULL};
    return SDK_STATUS_SUCCESS;
  }
  sdk_counter_info_v1 *out = info;
  memset(out, 0, sizeof *out);
  out->size = sizeof *out;
  out->id = id;
  out->name = c->name;
  out->description = description;
  out->block = block;
  out->expression = expression;
  out->is_derived = c->base >= 0;
  out->dimensions_count = n_dims;
  out->dimensions = n_dims ? C.dim_ptr[i] : NULL;
  out->dimensions_instances_count = c->n_xcc * c->n_inst;
  return SDK_STATUS_SUCCESS;
}

/* The dimensions of a counter, as every version gives them: an array of
 * structs that lives only during the call (the SDK builds it on its
 * stack), none for a derived counter (DIM_NOT_FOUND). */
EXPORT sdk_status rocprofiler_iterate_counter_dimensions(sdk_counter_id id, sdk_dimensions_cb cb, void *user) {
  counters_ready();
  if (id.handle < 1 || id.handle > C.n) return SDK_STATUS_ERROR_COUNTER_NOT_FOUND;
  size_t i = id.handle - 1;
  if (C.c[i].base >= 0) return SDK_STATUS_ERROR_DIM_NOT_FOUND;
  sdk_dimension dims[2] = {C.dim[i][0], C.dim[i][1]};
  cb(id, dims, 2, user);
  return SDK_STATUS_SUCCESS;
}

/* A record's instance id: the counter id above bit 24, the XCC position in
 * bits 16..23, the instance within the XCC below. */
uint64_t simsdk_record_id(size_t i, size_t xcc, size_t inst) {
  return ((uint64_t)(i + 1) << 24) | ((uint64_t)xcc << 16) | (uint64_t)inst;
}

EXPORT sdk_status rocprofiler_query_record_counter_id(uint64_t instance, sdk_counter_id *counter) {
  counter->handle = instance >> 24;
  return counter->handle >= 1 && counter->handle <= C.n ? SDK_STATUS_SUCCESS
                                                        : SDK_STATUS_ERROR_COUNTER_NOT_FOUND;
}

EXPORT sdk_status rocprofiler_query_record_dimension_position(uint64_t instance, uint64_t dim,
                                                               size_t *pos) {
  uint64_t c = instance >> 24;
  if (c < 1 || c > C.n) return SDK_STATUS_ERROR_COUNTER_NOT_FOUND;
  if (dim == SIMSDK_DIM_XCC) *pos = (size_t)((instance >> 16) & 0xff);
  else if (dim == SIMSDK_DIM_INSTANCE) *pos = (size_t)(instance & 0xffff);
  else return SDK_STATUS_ERROR;
  return SDK_STATUS_SUCCESS;
}

/* --------------------------------------------------------------- configs */

/* Per-block limits: the most distinct counters of each block that the
 * reference tool put in one pass of the recording (perfmon/pmc_perf_N.txt:
 * what that hardware accepted); for an RDNA recording without pass files
 * (a rocprofv3 run), the counter registers of aqlprofile's block tables;
 * unless LUMEN_SIMSDK_LIMITS (e.g. "TCP=2,SQ=4") says otherwise. A config
 * over a limit is refused. */
#define MAX_CONFIGS 512
static struct {
  int n;
  size_t *counters[MAX_CONFIGS];
  size_t n_counters[MAX_CONFIGS];
  int agent[MAX_CONFIGS];
} K;

/* Counter registers of the blocks the SDK defines RDNA 3 and 4 counters
 * in (aqlprofile's gfx11 and gfx12 block tables). gfx12 has 8 registers
 * in its SQG block and 16 in its SQC block for what the SDK counts as one
 * SQ block; 8 is taken. */
static int rdna_limit(const char *block) {
  static const struct {
    const char *block;
    int registers;
  } limits[] = {{"SQ", 8}, {"GL2C", 4}, {"TA", 2}, {"GRBM", 2}};
  for (size_t i = 0; i < sizeof limits / sizeof *limits; i++)
    if (strcmp(limits[i].block, block) == 0) return limits[i].registers;
  return 0;
}

static int recorded_limit(const char *block) {
  static char blocks[64][16];
  static int limits[64], n_blocks = -1;
  if (n_blocks < 0) {
    n_blocks = 0;
    const char *dir = getenv("LUMEN_SIM_RECORDING");
    for (int p = 0; dir && p < 256; p++) {
      char path[4096], line[65536];
      snprintf(path, sizeof path, "%s/perfmon/pmc_perf_%d.txt", dir, p);
      FILE *f = fopen(path, "r");
      if (!f) continue;
      while (fgets(line, sizeof line, f)) {
        if (strncmp(line, "pmc:", 4) != 0) continue;
        char seen[256][64];
        int n_seen = 0, count[64] = {0};
        for (char *save = NULL, *tok = strtok_r(line + 4, " \t\n", &save); tok;
             tok = strtok_r(NULL, " \t\n", &save)) {
          char base[64];
          snprintf(base, sizeof base, "%.*s", (int)strcspn(tok, "["), tok);
          size_t bl = strlen(base);
          if (bl > 4 && strcmp(base + bl - 4, "_sum") == 0) base[bl - 4] = '\0';
          int dup = 0;
          for (int s = 0; s < n_seen && !dup; s++) dup = strcmp(seen[s], base) == 0;
          if (dup || n_seen == 256) continue;
          snprintf(seen[n_seen++], sizeof seen[0], "%s", base);
          char b[16];
          snprintf(b, sizeof b, "%.*s", (int)strcspn(base, "_"), base);
          int k = 0;
          while (k < n_blocks && strcmp(blocks[k], b) != 0) k++;
          if (k == n_blocks && n_blocks < 64) snprintf(blocks[n_blocks++], sizeof blocks[0], "%s", b);
          if (k < 64 && ++count[k] > limits[k]) limits[k] = count[k];
        }
      }
      fclose(f);
    }
  }
  int limit = 0;
  for (int k = 0; k < n_blocks; k++)
    if (strcmp(blocks[k], block) == 0) limit = limits[k];
  if (n_blocks == 0 && rdna(G.arch)) limit = rdna_limit(block);
  const char *env = getenv("LUMEN_SIMSDK_LIMITS");
  size_t len = strlen(block);
  for (const char *p = env; p && *p; p = strchr(p, ',') ? strchr(p, ',') + 1 : NULL)
    if (strncmp(p, block, len) == 0 && p[len] == '=') limit = atoi(p + len + 1);
  return limit > 0 ? limit : 1;
}

EXPORT sdk_status rocprofiler_create_counter_config(sdk_agent_id agent, sdk_counter_id *counters,
                                                     size_t n, sdk_counter_config_id *config) {
  int a = simsdk_agent_index(agent);
  if (a < 0 || !config || (n && !counters)) return SDK_STATUS_ERROR;
  counters_ready();
  pthread_mutex_lock(&G.lock);
  sdk_status st = SDK_STATUS_SUCCESS;
  size_t base_n = 0, *base = NULL;
  if (config->handle >= 1 && config->handle <= (uint64_t)K.n) {
    base = K.counters[config->handle - 1];
    base_n = K.n_counters[config->handle - 1];
  }
  size_t *list = malloc((base_n + n + 1) * sizeof *list);
  if (!list || K.n == MAX_CONFIGS) {
    free(list);
    pthread_mutex_unlock(&G.lock);
    return SDK_STATUS_ERROR;
  }
  size_t m = 0;
  for (size_t i = 0; i < base_n; i++) list[m++] = base[i];
  for (size_t i = 0; i < n && st == SDK_STATUS_SUCCESS; i++) {
    if (counters[i].handle < 1 || counters[i].handle > C.n) st = SDK_STATUS_ERROR_COUNTER_NOT_FOUND;
    else list[m++] = counters[i].handle - 1;
  }
  /* Hardware counters used per block: a derived X_sum uses X's. */
  for (size_t i = 0; i < m && st == SDK_STATUS_SUCCESS; i++) {
    size_t hw_i = C.c[list[i]].base >= 0 ? (size_t)C.c[list[i]].base : list[i];
    int used = 0;
    for (size_t j = 0; j < m; j++) {
      size_t hw_j = C.c[list[j]].base >= 0 ? (size_t)C.c[list[j]].base : list[j];
      int dup = 0;
      for (size_t k = 0; k < j && !dup; k++)
        dup = (C.c[list[k]].base >= 0 ? (size_t)C.c[list[k]].base : list[k]) == hw_j;
      used += !dup && strcmp(C.c[hw_i].block, C.c[hw_j].block) == 0;
    }
    if (used > recorded_limit(C.c[hw_i].block)) st = SDK_STATUS_ERROR_EXCEEDS_HW_LIMIT;
  }
  if (st == SDK_STATUS_SUCCESS) {
    K.counters[K.n] = list;
    K.n_counters[K.n] = m;
    K.agent[K.n] = a;
    config->handle = (uint64_t)++K.n;
  } else {
    free(list);
  }
  pthread_mutex_unlock(&G.lock);
  return st;
}

int simsdk_config_counters(sdk_counter_config_id cfg, const size_t **list, size_t *n, int *agent) {
  pthread_mutex_lock(&G.lock);
  int ok = cfg.handle >= 1 && cfg.handle <= (uint64_t)K.n;
  if (ok) {
    *list = K.counters[cfg.handle - 1];
    *n = K.n_counters[cfg.handle - 1];
    *agent = K.agent[cfg.handle - 1];
  }
  pthread_mutex_unlock(&G.lock);
  return ok ? 0 : -1;
}

/* The simulation's state lives as long as the library: unloading it (a
 * probe's dlclose, or the end of the process) frees it. */
__attribute__((destructor)) static void simsdk_unload(void) {
  for (int i = 0; i < K.n; i++) free(K.counters[i]);
  lm_workload_free(G.rec);
  memset(&C, 0, sizeof C);
  memset(&K, 0, sizeof K);
  G.rec = NULL;
  G.loaded = 0;
}
