/*
 * simsdk.c - a SIMULATED rocprofiler-sdk, for tests and demonstrations
 * only: it implements the subset of the SDK's C ABI that lumen uses
 * (backend/rocprofiler_abi.h) over a recorded workload folder
 * (LUMEN_SIM_RECORDING). Nothing it reports is a measurement.
 *
 * It is built as librocprofiler-sdk.so in the build tree and found, like
 * the real one, through LUMEN_ROCPROFILER_SDK or the loader's path. The
 * agents are GPUs of the recording's architecture (gpu_arch, cu_per_gpu,
 * num_xcd, max_sclk of its sysinfo.csv). LUMEN_SIMSDK_VERSION (e.g. 0.4.2)
 * makes it report another SDK version, so that version checks can be
 * tested.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/rocprofiler_abi.h"
#include "io/io.h"
#include "sim/simsdk.h"

#define EXPORT __attribute__((visibility("default")))
#define N_AGENTS 8

static struct {
  pthread_mutex_t lock;
  int loaded, failed;
  lm_workload *rec;
  rocp_agent agents[N_AGENTS];
  char arch[64], product[128];
} G = {.lock = PTHREAD_MUTEX_INITIALIZER};

static double sysinfo_number(const char *name, double fallback) {
  long i = G.rec ? lm_sysinfo_find(&G.rec->sysinfo, name) : -1;
  return i >= 0 && G.rec->sysinfo.values[i] == G.rec->sysinfo.values[i] ? G.rec->sysinfo.values[i]
                                                                        : fallback;
}

/* gfx90a -> 90010, gfx942 -> 90402, gfx908 -> 90008 (major, minor, stepping
 * in the agent's numbering; the last two gfx digits are hexadecimal). */
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
  long mi = lm_sysinfo_find(&G.rec->sysinfo, "gpu_model");
  snprintf(G.product, sizeof G.product, "%s (simulated)", mi >= 0 ? G.rec->sysinfo.texts[mi] : "GPU");
  for (int i = 0; i < N_AGENTS; i++) {
    rocp_agent *a = &G.agents[i];
    memset(a, 0, sizeof *a);
    a->size = sizeof *a;
    a->id.handle = 0x1000 + (uint64_t)i;
    a->type = ROCP_AGENT_TYPE_GPU;
    a->cu_count = (uint32_t)sysinfo_number("cu_per_gpu", 104);
    a->num_xcc = (uint32_t)sysinfo_number("num_xcd", 1);
    a->num_shader_banks = (uint32_t)sysinfo_number("se_per_gpu", 8);
    a->simd_per_cu = (uint32_t)sysinfo_number("simd_per_cu", 4);
    a->wave_front_size = (uint32_t)sysinfo_number("wave_size", 64);
    a->max_engine_clk_fcompute = (uint32_t)sysinfo_number("max_sclk", 1700);
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

/* -------------------------------------------------------- the ABI subset */

EXPORT rocp_status rocprofiler_get_version(uint32_t *major, uint32_t *minor, uint32_t *patch) {
  unsigned a = 1, b = 0, c = 0;
  const char *v = getenv("LUMEN_SIMSDK_VERSION");
  if (v && *v && sscanf(v, "%u.%u.%u", &a, &b, &c) < 2) a = 1, b = 0, c = 0;
  *major = a;
  *minor = b;
  *patch = c;
  return ROCP_STATUS_SUCCESS;
}

EXPORT rocp_status rocprofiler_query_available_agents(int version, rocp_agents_cb cb,
                                                      size_t agent_size, void *user) {
  if (version != ROCP_AGENT_INFO_VERSION_0 || agent_size > sizeof(rocp_agent)) return ROCP_STATUS_ERROR;
  const void *list[N_AGENTS];
  size_t n = 0;
  if (simsdk_load() == 0)
    for (int i = 0; i < N_AGENTS; i++) list[n++] = &G.agents[i];
  return cb(ROCP_AGENT_INFO_VERSION_0, list, n, user);
}

/* ------------------------------------------------------------ contexts */

static uint64_t next_context = 1;

EXPORT rocp_status rocprofiler_create_context(rocp_context_id *ctx) {
  if (ctx->handle != 0) return ROCP_STATUS_ERROR; /* the SDK rejects a used handle */
  pthread_mutex_lock(&G.lock);
  ctx->handle = next_context++;
  pthread_mutex_unlock(&G.lock);
  return ROCP_STATUS_SUCCESS;
}

static int context_valid(rocp_context_id ctx) { return ctx.handle > 0 && ctx.handle < next_context; }

EXPORT rocp_status rocprofiler_start_context(rocp_context_id ctx) {
  return context_valid(ctx) ? ROCP_STATUS_SUCCESS : ROCP_STATUS_ERROR;
}

EXPORT rocp_status rocprofiler_stop_context(rocp_context_id ctx) {
  return context_valid(ctx) ? ROCP_STATUS_SUCCESS : ROCP_STATUS_ERROR;
}

/* -------------------------------------------------------------- services */

/* The services a tool configured; the simulated runtime that would drive
 * them (dispatch callbacks, records, symbols, markers) is not part of this
 * file yet. */
static struct {
  rocp_dispatch_cb dispatch_cb;
  void *dispatch_arg;
  rocp_record_cb record_cb;
  void *record_arg;
  rocp_tracing_cb tracing_cb[16];
  void *tracing_arg[16];
} S;

EXPORT rocp_status rocprofiler_configure_callback_dispatch_counting_service(
    rocp_context_id ctx, rocp_dispatch_cb dispatch_cb, void *dispatch_arg, rocp_record_cb record_cb,
    void *record_arg) {
  if (!context_valid(ctx) || !dispatch_cb || !record_cb) return ROCP_STATUS_ERROR;
  S.dispatch_cb = dispatch_cb;
  S.dispatch_arg = dispatch_arg;
  S.record_cb = record_cb;
  S.record_arg = record_arg;
  return ROCP_STATUS_SUCCESS;
}

EXPORT rocp_status rocprofiler_configure_callback_tracing_service(rocp_context_id ctx, int kind,
                                                                  const int32_t *operations,
                                                                  size_t n, rocp_tracing_cb cb,
                                                                  void *arg) {
  (void)operations;
  (void)n;
  if (!context_valid(ctx) || kind < 0 || kind >= 16 || !cb) return ROCP_STATUS_ERROR;
  S.tracing_cb[kind] = cb;
  S.tracing_arg[kind] = arg;
  return ROCP_STATUS_SUCCESS;
}

/* -------------------------------------------------------------- counters */

/* The counters of the simulated agents are the hardware counters the
 * recording holds (not lumen's definitions): every column whose name is a
 * counter's. Dimensions follow how the reference tool reported them:
 * X[0..n) columns are one counter X with an INSTANCE dimension of n; a
 * counter recorded only as X_sum (summed over its block's instances) has an
 * INSTANCE dimension of one per compute unit; other counters have an XCC
 * dimension (one instance per XCD). */
#define MAX_COUNTERS 1024
static struct {
  int ready;
  size_t n;
  char *name[MAX_COUNTERS];
  char block[MAX_COUNTERS][16];
  size_t instances[MAX_COUNTERS];
  unsigned char plain[MAX_COUNTERS], summed[MAX_COUNTERS];
  rocp_dimension dim[MAX_COUNTERS];
  const rocp_dimension *dim_ptr[MAX_COUNTERS];
} C;

/* The counter a column holds (base) and how: 0 plain, 1 an instance
 * X[n], 2 a sum X_sum; -1: not a counter's column. */
static int counter_name(const char *col, char *base, size_t cap) {
  size_t n = strcspn(col, "[");
  if (n >= cap) return -1;
  memcpy(base, col, n);
  base[n] = '\0';
  int how = col[n] == '[' ? 1 : 0;
  if (n > 4 && strcmp(base + n - 4, "_sum") == 0) {
    base[n - 4] = '\0';
    how = 2;
  }
  if (!strchr(base, '_') || strcmp(base, "GPU_ID") == 0) return -1;
  for (const char *p = base; *p; p++)
    if (!((*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') || *p == '_')) return -1;
  return how;
}

static void add_columns(const lm_table *t) {
  for (size_t k = 0; t && k < t->n_cols; k++) {
    char base[256];
    int how = counter_name(t->cols[k].name, base, sizeof base);
    if (how < 0) continue;
    size_t i = 0;
    while (i < C.n && strcmp(C.name[i], base) != 0) i++;
    if (i == C.n) {
      if (C.n == MAX_COUNTERS) return;
      C.name[i] = strdup(base);
      if (!C.name[i]) return;
      snprintf(C.block[i], sizeof C.block[i], "%.*s", (int)strcspn(base, "_"), base);
      C.n++;
    }
    if (how == 1) C.instances[i]++;
    else if (how == 2) C.summed[i] = 1;
    else C.plain[i] = 1;
  }
}

static void counters_ready(void) {
  pthread_mutex_lock(&G.lock);
  if (!C.ready && G.rec) {
    add_columns(G.rec->pmc);
    for (size_t l = 0; l < G.rec->n_levels; l++) add_columns(G.rec->levels[l]);
    for (size_t i = 0; i < C.n; i++) {
      int per_instance = C.instances[i] || (C.summed[i] && !C.plain[i]);
      C.dim[i].name = per_instance ? "INSTANCE" : "XCC";
      C.dim[i].instance_size = C.instances[i]   ? C.instances[i]
                               : per_instance ? G.agents[0].cu_count
                                              : G.agents[0].num_xcc;
      C.dim[i].id = per_instance ? 1 : 0;
      C.dim_ptr[i] = &C.dim[i];
    }
    C.ready = 1;
  }
  pthread_mutex_unlock(&G.lock);
}

static int agent_index(rocp_agent_id agent) {
  uint64_t i = agent.handle - 0x1000;
  return agent.handle >= 0x1000 && i < N_AGENTS ? (int)i : -1;
}

EXPORT rocp_status rocprofiler_iterate_agent_supported_counters(rocp_agent_id agent,
                                                                rocp_counters_cb cb, void *user) {
  if (simsdk_load() != 0 || agent_index(agent) < 0) return ROCP_STATUS_ERROR;
  counters_ready();
  rocp_counter_id ids[MAX_COUNTERS];
  for (size_t i = 0; i < C.n; i++) ids[i].handle = i + 1;
  return cb(agent, ids, C.n, user);
}

EXPORT rocp_status rocprofiler_query_counter_info(rocp_counter_id id, int version, void *info) {
  if (id.handle < 1 || id.handle > C.n) return ROCP_STATUS_ERROR_COUNTER_NOT_FOUND;
  size_t i = id.handle - 1;
  if (version != ROCP_COUNTER_INFO_VERSION_1) return ROCP_STATUS_ERROR;
  rocp_counter_info *out = info;
  memset(out, 0, sizeof *out);
  out->size = sizeof *out;
  out->id = id;
  out->name = C.name[i];
  out->description = "simulated counter (replayed from a recording)";
  out->block = C.block[i];
  out->expression = "";
  out->dimensions_count = 1;
  out->dimensions = &C.dim_ptr[i];
  out->dimensions_instances_count = C.dim[i].instance_size;
  return ROCP_STATUS_SUCCESS;
}

/* A record's instance id: the counter id above 16 bits, the position in
 * its one dimension below. */
EXPORT rocp_status rocprofiler_query_record_counter_id(uint64_t instance, rocp_counter_id *counter) {
  counter->handle = instance >> 16;
  return counter->handle >= 1 && counter->handle <= C.n ? ROCP_STATUS_SUCCESS
                                                        : ROCP_STATUS_ERROR_COUNTER_NOT_FOUND;
}

EXPORT rocp_status rocprofiler_query_record_dimension_position(uint64_t instance, uint64_t dim,
                                                               size_t *pos) {
  uint64_t c = instance >> 16;
  if (c < 1 || c > C.n) return ROCP_STATUS_ERROR_COUNTER_NOT_FOUND;
  *pos = C.dim[c - 1].id == dim ? (size_t)(instance & 0xffff) : 0;
  return ROCP_STATUS_SUCCESS;
}

/* --------------------------------------------------------------- configs */

/* Per-block limits: the most distinct counters of each block that the
 * reference tool put in one pass of the recording (perfmon/pmc_perf_N.txt:
 * what that hardware accepted), unless LUMEN_SIMSDK_LIMITS (e.g.
 * "TCP=2,SQ=4") says less. A config over a limit is refused. */
#define MAX_CONFIGS 512
static struct {
  int n;
  size_t *counters[MAX_CONFIGS];
  size_t n_counters[MAX_CONFIGS];
  int agent[MAX_CONFIGS];
} K;

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
  const char *env = getenv("LUMEN_SIMSDK_LIMITS");
  size_t len = strlen(block);
  for (const char *p = env; p && *p; p = strchr(p, ',') ? strchr(p, ',') + 1 : NULL)
    if (strncmp(p, block, len) == 0 && p[len] == '=') limit = atoi(p + len + 1);
  return limit > 0 ? limit : 1;
}

EXPORT rocp_status rocprofiler_create_counter_config(rocp_agent_id agent, rocp_counter_id *counters,
                                                     size_t n, rocp_counter_config_id *config) {
  int a = agent_index(agent);
  if (a < 0 || !config || (n && !counters)) return ROCP_STATUS_ERROR;
  counters_ready();
  pthread_mutex_lock(&G.lock);
  rocp_status st = ROCP_STATUS_SUCCESS;
  size_t base_n = 0, *base = NULL;
  if (config->handle >= 1 && config->handle <= (uint64_t)K.n) {
    base = K.counters[config->handle - 1];
    base_n = K.n_counters[config->handle - 1];
  }
  size_t *list = malloc((base_n + n + 1) * sizeof *list);
  if (!list || K.n == MAX_CONFIGS) {
    free(list);
    pthread_mutex_unlock(&G.lock);
    return ROCP_STATUS_ERROR;
  }
  size_t m = 0;
  for (size_t i = 0; i < base_n; i++) list[m++] = base[i];
  for (size_t i = 0; i < n && st == ROCP_STATUS_SUCCESS; i++) {
    if (counters[i].handle < 1 || counters[i].handle > C.n) st = ROCP_STATUS_ERROR_COUNTER_NOT_FOUND;
    else list[m++] = counters[i].handle - 1;
  }
  for (size_t i = 0; i < m && st == ROCP_STATUS_SUCCESS; i++) {
    int used = 0;
    for (size_t j = 0; j < m; j++) used += strcmp(C.block[list[i]], C.block[list[j]]) == 0;
    if (used > recorded_limit(C.block[list[i]])) st = ROCP_STATUS_ERROR_EXCEEDS_HW_LIMIT;
  }
  if (st == ROCP_STATUS_SUCCESS) {
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

/* The simulation's state lives as long as the library: unloading it (a
 * probe's dlclose, or the end of the process) frees it. */
__attribute__((destructor)) static void simsdk_unload(void) {
  for (size_t i = 0; i < C.n; i++) free(C.name[i]);
  for (int i = 0; i < K.n; i++) free(K.counters[i]);
  lm_workload_free(G.rec);
  memset(&C, 0, sizeof C);
  memset(&K, 0, sizeof K);
  G.rec = NULL;
  G.loaded = 0;
}
