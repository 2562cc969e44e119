/*
 * rocprofiler.c - the rocprofiler-sdk adapter of the tool library:
 * liblumen_tool.so exports rocprofiler_configure, which the SDK's
 * registration finds (LD_PRELOAD or ROCP_TOOL_LIBRARIES). It only translates:
 * the core (core.h) chooses each dispatch's counter set; the adapter returns
 * that set's config for the agent, turns the counter records that arrive
 * after completion into lumen's columns (backend/rocprofiler.h) and forwards
 * demangled kernel symbols and ROCTx ranges. Invariant: every config is built
 * in initialize, and the dispatch callback takes no lock. The SDK is the
 * process's own, resolved with lm_dl (rocprofiler_abi.h).
 * docs/rocprofiler-sdk.md.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "backend/rocprofiler.h"
#include "tool/core.h"

#define EXPORT __attribute__((visibility("default")))
#define MAX_GPUS 64
#define MAX_KERNELS 65536
#define NAME_CAP 16384 /* a demangled kernel name (template kernels are long) */

typedef struct set_config {
  rocp_counter_config_id config;
  lm_rocp_want *wants;
  int n_wants;
} set_config;

typedef struct gpu {
  rocp_agent_id id;
  int number; /* logical GPU number: the reference tool's GPU id */
  char name[64];
  set_config *sets;
} gpu;

typedef struct kernel_info {
  uint64_t id;
  char *name;
  uint32_t sgpr, arch_vgpr, accum_vgpr;
} kernel_info;

/* A dispatch between its callback and its records. */
typedef struct pending {
  lm_tool_dispatch d;
  lm_choice choice;
  int gpu_index;
} pending;

/* Kernels by id: open addressing over twice MAX_KERNELS slots, filled
 * under kernel_lock (a slot is published with release) and read by the
 * dispatch callback without a lock. Entries live as long as the library. */
#define KERNEL_SLOTS (2 * MAX_KERNELS)

static struct {
  lm_rocp_api api;
  rocp_context_id ctx;
  gpu gpus[MAX_GPUS];
  int n_gpus, n_sets;
  pthread_mutex_t kernel_lock;
  kernel_info *_Atomic kernels[KERNEL_SLOTS];
  size_t n_kernels;
} R = {.kernel_lock = PTHREAD_MUTEX_INITIALIZER};

/* The launching thread's id, asked of the kernel once per thread (a
 * forked child's thread asks again: its id differs). */
static _Thread_local unsigned long my_tid;

static void forget_tid(void) { my_tid = 0; }

static unsigned long thread_id(void) {
  if (!my_tid) my_tid = (unsigned long)syscall(SYS_gettid);
  return my_tid;
}

static rocp_status take_gpus(int version, const void **agents, size_t n, void *user) {
  (void)version;
  (void)user;
  for (size_t i = 0; i < n && R.n_gpus < MAX_GPUS; i++) {
    const rocp_agent *a = agents[i];
    if (a->type != ROCP_AGENT_TYPE_GPU) continue;
    gpu *g = &R.gpus[R.n_gpus++];
    g->id = a->id;
    g->number = a->logical_node_type_id;
    snprintf(g->name, sizeof g->name, "%s", a->name ? a->name : "?");
  }
  return ROCP_STATUS_SUCCESS;
}

static int gpu_of(rocp_agent_id agent) {
  for (int i = 0; i < R.n_gpus; i++)
    if (R.gpus[i].id.handle == agent.handle) return i;
  return -1;
}

/* The configs of one GPU agent, one per set. */
static int build_configs(gpu *g, const lm_tool_config *cfg) {
  char why[512], msg[1024];
  lm_rocp_catalog cat;
  if (lm_rocp_catalog_load(&R.api, g->id, &cat, why, sizeof why) != 0) {
    lm_tool_error(why);
    return -1;
  }
  int rc = 0;
  g->sets = lm_calloc((size_t)cfg->n_sets + 1, sizeof *g->sets);
  for (int s = 0; g->sets && s < cfg->n_sets && rc == 0; s++) {
    int n = 0;
    while (cfg->set_counters[s] && cfg->set_counters[s][n]) n++;
    set_config *sc = &g->sets[s];
    sc->wants = lm_calloc((size_t)n * 2 + 1, sizeof *sc->wants);
    rocp_counter_id *ids = lm_calloc((size_t)n * 2 + 1, sizeof *ids);
    size_t n_ids = 0;
    for (int i = 0; sc->wants && ids && i < n && rc == 0; i++) {
      int k = lm_rocp_resolve(&cat, cfg->set_counters[s][i], &sc->wants[sc->n_wants], 2);
      if (k == 0) {
        snprintf(msg, sizeof msg, "counter %s is not supported by agent %s (GPU %d)",
                 cfg->set_counters[s][i], g->name, g->number);
        lm_tool_error(msg);
        rc = -1;
      }
      for (int w = sc->n_wants; w < sc->n_wants + k; w++) {
        int dup = 0;
        for (size_t j = 0; j < n_ids && !dup; j++) dup = ids[j].handle == sc->wants[w].id.handle;
        if (!dup) ids[n_ids++] = sc->wants[w].id;
      }
      sc->n_wants += k;
    }
    if (rc == 0 && (!sc->wants || !ids)) {
      lm_tool_error("out of memory while building counter configs");
      rc = -1;
    }
    rocp_status st = rc == 0 ? R.api.create_counter_config(g->id, ids, n_ids, &sc->config) : 0;
    if (rc == 0 && st != ROCP_STATUS_SUCCESS) {
      snprintf(msg, sizeof msg, "rocprofiler-sdk refused counter set %d on agent %s (GPU %d): %s", s,
               g->name, g->number,
               st == ROCP_STATUS_ERROR_EXCEEDS_HW_LIMIT ? "it exceeds the hardware limits"
                                                         : "status not success");
      lm_tool_error(msg);
      rc = -1;
    }
    lm_free(ids);
  }
  if (!g->sets && rc == 0) {
    lm_tool_error("out of memory while building counter configs");
    rc = -1;
  }
  lm_rocp_catalog_fini(&cat);
  return rc;
}

/* ------------------------------------------------------------ callbacks */

static size_t kernel_slot(uint64_t id) { return (size_t)((id * 0x9e3779b97f4a7c15ULL) >> 47) % KERNEL_SLOTS; }

static const kernel_info *kernel_find(uint64_t id) {
  for (size_t h = kernel_slot(id);; h = (h + 1) % KERNEL_SLOTS) {
    const kernel_info *k = atomic_load_explicit(&R.kernels[h], memory_order_acquire);
    if (!k || k->id == id) return k;
  }
}

/* What lumen reads of a callback tracing record, the same in both
 * layouts (rocprofiler_abi.h): each layout's callback copies it out. */
typedef struct traced {
  int kind, operation, phase;
  uint64_t thread_id;
  const void *payload;
} traced;

static void code_object(const traced *rec) {
  if (rec->kind != ROCP_TRACING_CODE_OBJECT ||
      rec->operation != ROCP_CODE_OBJECT_DEVICE_KERNEL_SYMBOL_REGISTER || rec->phase != ROCP_PHASE_ENTER ||
      !rec->payload)
    return;
  const rocp_kernel_symbol *sym = rec->payload;
  /* The payload says its size: one shorter than the members read here is
   * not the layout lumen declares. */
  if (sym->size < offsetof(rocp_kernel_symbol, accum_vgpr_count) + sizeof sym->accum_vgpr_count ||
      !sym->kernel_name) {
    lm_tool_error("rocprofiler-sdk gave a kernel symbol record shorter than its declared layout");
    return;
  }
  /* The SDK names kernels by their mangled symbol; lumen, like the
   * reference tool, by the demangled one. */
  char *name = lm_malloc(NAME_CAP);
  if (!name) {
    lm_tool_error("out of memory while registering a kernel symbol");
    return;
  }
  lm_backend_demangle(sym->kernel_name, name, NAME_CAP);
  pthread_mutex_lock(&R.kernel_lock);
  if (!kernel_find(sym->kernel_id) && R.n_kernels < MAX_KERNELS) {
    kernel_info *k = lm_malloc(sizeof *k);
    if (k) {
      k->id = sym->kernel_id;
      k->name = lm_strdup(name);
      k->sgpr = sym->sgpr_count;
      k->arch_vgpr = sym->arch_vgpr_count;
      k->accum_vgpr = sym->accum_vgpr_count;
    }
    if (k && k->name) {
      size_t h = kernel_slot(k->id);
      while (atomic_load_explicit(&R.kernels[h], memory_order_relaxed)) h = (h + 1) % KERNEL_SLOTS;
      atomic_store_explicit(&R.kernels[h], k, memory_order_release);
      R.n_kernels++;
    } else {
      lm_free(k);
    }
  }
  pthread_mutex_unlock(&R.kernel_lock);
  lm_tool_kernel_symbol(sym->kernel_id, name);
  lm_free(name);
}

/* ROCTx: push/pop nest per thread; a start/stop range is process-wide
 * and may end on another thread, so it is known by the id that
 * roctxRangeStartA returns (seen in its EXIT phase) and roctxRangeStop
 * passes. */
static void marker(const traced *rec) {
  const rocp_marker_data *m = rec->payload;
  if (rec->kind != ROCP_TRACING_MARKER_CORE_API || !m) return;
  unsigned long tid = (unsigned long)rec->thread_id;
  if (rec->phase == ROCP_PHASE_ENTER && rec->operation == ROCP_MARKER_roctxRangePushA)
    lm_tool_marker(LM_TOOL_PUSH, tid, m->arg.message, 0);
  else if (rec->phase == ROCP_PHASE_ENTER && rec->operation == ROCP_MARKER_roctxRangePop)
    lm_tool_marker(LM_TOOL_POP, tid, NULL, 0);
  else if (rec->phase == ROCP_PHASE_EXIT && rec->operation == ROCP_MARKER_roctxRangeStartA)
    lm_tool_marker(LM_TOOL_START, tid, m->arg.message, m->retval.range_id);
  else if (rec->phase == ROCP_PHASE_ENTER && rec->operation == ROCP_MARKER_roctxRangeStop)
    lm_tool_marker(LM_TOOL_STOP, tid, NULL, m->arg.range_id);
}

/* The callbacks of each layout: the 64-byte record of 1.0, the 56-byte
 * one of 0.5/0.6. */
#define TRACED(r) {(r).kind, (r).operation, (r).phase, (r).thread_id, (r).payload}
static void on_code_object(rocp_tracing_record rec, rocp_user_data *user_data, void *arg) {
  (void)user_data;
  (void)arg;
  traced t = TRACED(rec);
  code_object(&t);
}
static void on_code_object_0x(rocp_tracing_record_0x rec, rocp_user_data *user_data, void *arg) {
  (void)user_data;
  (void)arg;
  traced t = TRACED(rec);
  code_object(&t);
}
static void on_marker(rocp_tracing_record rec, rocp_user_data *user_data, void *arg) {
  (void)user_data;
  (void)arg;
  traced t = TRACED(rec);
  marker(&t);
}
static void on_marker_0x(rocp_tracing_record_0x rec, rocp_user_data *user_data, void *arg) {
  (void)user_data;
  (void)arg;
  traced t = TRACED(rec);
  marker(&t);
}

/* The tracing callback of the loaded SDK's layout, in the type the
 * service's declaration takes (the SDK calls it with its own record). */
static rocp_tracing_cb tracing_cb(rocp_tracing_cb cb_1x, rocp_tracing_cb_0x cb_0x) {
  if (R.api.layout != LM_ROCP_LAYOUT_0X) return cb_1x;
  rocp_tracing_cb cb;
  void (*generic)(void) = (void (*)(void))cb_0x;
  memcpy(&cb, &generic, sizeof cb);
  return cb;
}

static uint64_t volume(rocp_dim3 d) {
  return (uint64_t)(d.x ? d.x : 1) * (d.y ? d.y : 1) * (d.z ? d.z : 1);
}

static void on_dispatch(rocp_dispatch_data data, rocp_counter_config_id *config,
                        rocp_user_data *user_data, void *arg) {
  (void)arg;
  config->handle = 0;
  user_data->ptr = NULL;
  /* On the stack: only a dispatch that collects outlives the callback. */
  pending on_stack, *p = &on_stack;
  memset(p, 0, sizeof *p);
  const rocp_dispatch_info *di = &data.dispatch_info;
  p->gpu_index = gpu_of(di->agent_id);
  lm_tool_dispatch *d = &p->d;
  d->dispatch_id = di->dispatch_id;
  d->kernel_id = di->kernel_id;
  /* The thread's last kernel is remembered; another is looked up without
   * a lock. Names live as long as the library. */
  static _Thread_local const kernel_info *last;
  if (!last || last->id != di->kernel_id) last = kernel_find(di->kernel_id);
  d->kernel_name = last ? last->name : NULL;
  d->sgpr = last ? last->sgpr : 0;
  d->arch_vgpr = last ? last->arch_vgpr : 0;
  d->accum_vgpr = last ? last->accum_vgpr : 0;
  d->gpu = p->gpu_index >= 0 ? R.gpus[p->gpu_index].number : -1;
  d->tid = thread_id();
  d->grid = volume(di->grid_size);
  d->workgroup = volume(di->workgroup_size);
  d->lds = di->group_segment_size;
  d->scratch = di->private_segment_size;
  int set = lm_tool_dispatch_begin(d, &p->choice);
  if (set >= 0 && set < R.n_sets && p->gpu_index >= 0 && R.gpus[p->gpu_index].sets) {
    pending *kept = lm_malloc(sizeof *kept);
    if (kept) {
      *kept = *p;
      *config = R.gpus[p->gpu_index].sets[set].config;
      user_data->ptr = kept;
      return;
    }
  }
  /* Nothing to collect: the SDK will deliver no record; the dispatch is
   * recorded now, without timestamps. */
  p->choice.set = -1;
  lm_tool_dispatch_end(d, &p->choice, 0, 0, NULL, 0);
}

/* A column of a dispatch's values: a TOTAL want's column (borrowed), or
 * a channel position's name made here. */
typedef struct column_sum {
  const char *name;
  char own[300];
  double value;
} column_sum;

#define STACK_COLUMNS 64 /* columns kept on the stack; more go to the heap */

static void on_records(rocp_dispatch_data data, rocp_counter_record *records, size_t n,
                       rocp_user_data user_data, void *arg) {
  (void)arg;
  pending *p = user_data.ptr;
  if (!p) return;
  const set_config *sc = &R.gpus[p->gpu_index].sets[p->choice.set];
  /* Columns: one per TOTAL want, one per channel position seen. */
  size_t cap = (size_t)sc->n_wants + n + 1, n_cols = 0;
  column_sum cols_here[STACK_COLUMNS];
  long total_here[STACK_COLUMNS];
  lm_tool_value values_here[STACK_COLUMNS];
  int small = cap <= STACK_COLUMNS;
  column_sum *cols = small ? cols_here : lm_calloc(cap, sizeof *cols);
  long *total_at = small ? total_here : lm_calloc(cap, sizeof *total_at);
  lm_tool_value *values = small ? values_here : lm_calloc(cap, sizeof *values);
  int ok = cols && total_at && values;
  for (int w = 0; ok && w < sc->n_wants; w++) total_at[w] = -1;
  for (size_t r = 0; ok && r < n; r++) {
    rocp_counter_id id;
    if (R.api.query_record_counter_id(records[r].id, &id) != ROCP_STATUS_SUCCESS) continue;
    for (int w = 0; w < sc->n_wants; w++) {
      const lm_rocp_want *want = &sc->wants[w];
      if (want->id.handle != id.handle) continue;
      long at = -1;
      if (want->form == LM_ROCP_TOTAL) {
        if (total_at[w] < 0) {
          total_at[w] = (long)n_cols;
          cols[n_cols].name = want->column;
          cols[n_cols++].value = 0;
        }
        at = total_at[w];
      } else {
        char name[300];
        size_t xcc = 0, inst = 0;
        if (want->dim_xcc) R.api.query_record_dimension_position(records[r].id, want->dim_xcc, &xcc);
        R.api.query_record_dimension_position(records[r].id, want->dim_inst, &inst);
        snprintf(name, sizeof name, "%s[%zu]", want->column, xcc * want->n_inst + inst);
        for (size_t c = 0; c < n_cols && at < 0; c++)
          if (strcmp(cols[c].name, name) == 0) at = (long)c;
        if (at < 0 && n_cols < cap) {
          at = (long)n_cols;
          memcpy(cols[n_cols].own, name, sizeof name);
          cols[n_cols].name = cols[n_cols].own;
          cols[n_cols++].value = 0;
        }
      }
      if (at >= 0) cols[at].value += records[r].counter_value;
    }
  }
  for (size_t c = 0; ok && c < n_cols; c++) {
    values[c].column = cols[c].name;
    values[c].value = cols[c].value;
  }
  if (!ok) lm_tool_error("out of memory while receiving counter records");
  else
    lm_tool_dispatch_end(&p->d, &p->choice, data.start_timestamp, data.end_timestamp, values,
                         (int)n_cols);
  if (!small) {
    lm_free(values);
    lm_free(cols);
    lm_free(total_at);
  }
  lm_free(p);
}

/* ---------------------------------------------------------- registration */

static int tool_initialize(rocp_client_finalize finalize, void *tool_data) {
  (void)finalize;
  (void)tool_data;
  const lm_tool_config *cfg = lm_tool_config_now();
  if (!cfg) return -1;
  pthread_atfork(NULL, NULL, forget_tid);
  char why[512];
  if (lm_rocp_load(&R.api, 1, why, sizeof why) != 0) {
    lm_tool_error(why);
    return -1;
  }
  R.api.query_available_agents(ROCP_AGENT_INFO_VERSION_0, take_gpus, sizeof(rocp_agent), NULL);
  if (R.n_gpus == 0) {
    lm_tool_error("rocprofiler-sdk reports no GPU agent");
    return -1;
  }
  if (lm_tool_attached(R.gpus[0].name) != 0) return -1;
  lm_tool_expect_finalize();
  R.n_sets = cfg->n_sets;
  for (int i = 0; i < R.n_gpus; i++)
    if (build_configs(&R.gpus[i], cfg) != 0) return -1;
  R.ctx.handle = 0;
  if (R.api.create_context(&R.ctx) != ROCP_STATUS_SUCCESS ||
      R.api.configure_callback_tracing_service(R.ctx, ROCP_TRACING_CODE_OBJECT, NULL, 0,
                                               tracing_cb(on_code_object, on_code_object_0x),
                                               NULL) != ROCP_STATUS_SUCCESS ||
      R.api.configure_callback_tracing_service(R.ctx, ROCP_TRACING_MARKER_CORE_API, NULL, 0,
                                               tracing_cb(on_marker, on_marker_0x), NULL) != ROCP_STATUS_SUCCESS ||
      R.api.configure_callback_dispatch_counting_service(R.ctx, on_dispatch, NULL, on_records, NULL) !=
          ROCP_STATUS_SUCCESS ||
      R.api.start_context(R.ctx) != ROCP_STATUS_SUCCESS) {
    lm_tool_error("rocprofiler-sdk did not accept the context and its services");
    return -1;
  }
  /* Clocks: the device's own log where it keeps one, else rocm-smi. */
  lm_telemetry *t = lm_telemetry_open_device();
  if (!t) t = lm_telemetry_open_rocm_smi(why, sizeof why);
  lm_tool_telemetry(t, why);
  return 0;
}

static void tool_finalize(void *tool_data) {
  (void)tool_data;
  if (R.ctx.handle && R.api.stop_context) R.api.stop_context(R.ctx);
  lm_tool_finish();
}

/* rocprofiler_configure: called by the SDK's registration for every tool
 * in the process; lumen's takes part only when `lumen profile` configured
 * it (LUMEN_TOOL_CONFIG). version is the SDK's (major x 10000 + minor x
 * 100 + patch): it says where the client id holds its name. A version
 * lumen knows no layout of, or a later 1.x whose client id is smaller
 * than 1.0's, is not joined (lumen profile refuses those before the run;
 * this guards an SDK swapped in between). */
EXPORT rocp_configure_result *rocprofiler_configure(uint32_t version, const char *runtime_version,
                                                    uint32_t priority, void *client_id) {
  (void)runtime_version;
  (void)priority;
  static rocp_configure_result result = {sizeof(rocp_configure_result), tool_initialize, tool_finalize,
                                         NULL};
  if (!lm_tool_config_now()) return NULL;
  uint32_t major = version / 10000, minor = version / 100 % 100;
  char why[160];
  if (major == 0 && (minor == 5 || minor == 6)) {
    if (client_id) ((rocp_client_id_0x *)client_id)->name = "lumen";
    return &result;
  }
  if (major == 1 && client_id && ((rocp_client_id *)client_id)->size >= LM_ROCP_CLIENT_ID_1X_SIZE) {
    ((rocp_client_id *)client_id)->name = "lumen";
    return &result;
  }
  snprintf(why, sizeof why, "rocprofiler-sdk %u.%u.%u registers tools in a layout lumen does not know", major,
           minor, version % 100);
  lm_tool_error(why);
  return NULL;
}
