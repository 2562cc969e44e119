/*
 * simdevice.c - the device below the SIMULATED rocprofiler-sdk (test and
 * demonstration infrastructure: it replays a recording, never measures).
 *
 * It registers the process's tool as the SDK does. The n-th launch of a
 * kernel replays its recorded dispatch n mod R; a replay beyond the recording
 * differs by up to 2%, so no two instances repeat an execution. Dispatch
 * callbacks run on the launching thread in launch order; counter records come
 * later from a completion thread (at most QUEUE_PACKETS launches wait).
 * Kernels are announced mangled through code-object tracing, ROCTx through
 * marker tracing. docs/rocprofiler-sdk.md.
 */
#include <dlfcn.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "sim/simsdk.h"

#define EXPORT __attribute__((visibility("default")))
#define MAX_KERNELS 4096
#define QUEUE_PACKETS 1024 /* launches queued and not yet completed */


typedef struct kernel {
  char *launched; /* the name the program launches */
  char *name;     /* the name it has in the recording */
  char *symbol;   /* the code object symbol reported to tools: the name
                     mangled where it is a plain signature (mangle.c) */
  uint64_t id;
  size_t *rows;   /* recorded pmc rows it replays */
  size_t n_rows;
  uint64_t instances;
  double clock_factor;
} kernel;

typedef struct job {
  struct job *next;
  sdk_dispatch_data data;
  sdk_counter_config_id config;
  sdk_user_data user_data;
  sdk_record_cb record_cb;
  void *record_arg;
  size_t row;
  uint64_t execution; /* 0: the recorded execution; k: its k-th replay */
  int gpu;
  double sclk;
} job;

typedef struct clock_sample {
  int gpu;
  unsigned long long t_ns;
  double sclk_mhz, mclk_mhz;
} clock_sample;

static struct {
  pthread_mutex_t lock;
  pthread_cond_t cond;
  int ready, failed;
  uint64_t run_offset; /* LUMEN_SIMSDK_RERUNS=vary: each process (each run
                          of an application replay) is a new execution */
  const lm_workload *rec;
  kernel kernels[MAX_KERNELS];
  int n_kernels;
  const char **rec_names;
  int n_rec_names;
  uint64_t next_dispatch;
  job *head, *tail;
  uint64_t queued, completed;
  pthread_t completer;
  int completer_running, stopping;
  pthread_cond_t space; /* room in the queue (QUEUE_PACKETS) */
  int space_waiters;
  clock_sample *clocks;
  size_t n_clocks, cap_clocks;
  const sdk_configure_result *tool;
  /* The client id lent to the tool, in the layout's form; the SDK keeps
   * its own copy of the handle and finalizes the tool only while the
   * lent one still holds it. */
  union {
    sdk_client_id v1;
    sdk_client_id_05 v05;
  } client;
  uint32_t client_handle;
} D = {.lock = PTHREAD_MUTEX_INITIALIZER, .cond = PTHREAD_COND_INITIALIZER, .space = PTHREAD_COND_INITIALIZER};

static unsigned long thread_id(void) { return (unsigned long)syscall(SYS_gettid); }

static double sysinfo_number(const char *name, double fallback) {
  long i = lm_sysinfo_find(&D.rec->sysinfo, name);
  return i >= 0 && !isnan(D.rec->sysinfo.values[i]) ? D.rec->sysinfo.values[i] : fallback;
}

/* ------------------------------------------------------------ values */

/* A deterministic deviation in [-2%, +2%] for replay `execution` of
 * recorded row `row` (0 for the recorded execution itself). */
static double deviation(size_t row, uint64_t execution, size_t what) {
  if (execution == 0) return 0;
  uint64_t h = 1469598103934665603ULL;
  uint64_t parts[3] = {row, execution, what};
  for (int i = 0; i < 3; i++) {
    h ^= parts[i] + 0x9e3779b97f4a7c15ULL;
    h *= 1099511628211ULL;
    h ^= h >> 29;
  }
  return ((double)(h % 4001) - 2000.0) / 100000.0;
}

static double varied(double v, size_t row, uint64_t execution, size_t what) {
  double d = deviation(row, execution, what);
  if (d == 0 || isnan(v)) return v;
  double out = v * (1 + d);
  return v == floor(v) ? floor(out + 0.5) : out;
}

static double cell(const lm_table *t, const char *column, size_t row, int *found) {
  long c = t ? lm_table_find(t, column) : -1;
  *found = c >= 0 && row < t->n_rows && !isnan(t->cols[c].values[row]);
  return *found ? t->cols[c].values[row] : 0;
}

typedef struct records {
  sdk_counter_record *r;
  size_t n, cap;
} records;

static void add_record(records *out, size_t counter, size_t xcc, size_t inst, double v,
                       const job *j) {
  if (out->n == out->cap) {
    size_t cap = out->cap ? out->cap * 2 : 256;
    sdk_counter_record *grown = realloc(out->r, cap * sizeof *grown);
    if (!grown) return;
    out->r = grown;
    out->cap = cap;
  }
  sdk_counter_record *r = &out->r[out->n++];
  r->id = simsdk_record_id(counter, xcc, inst);
  r->counter_value = v;
  r->dispatch_id = j->data.dispatch_info.dispatch_id;
  r->user_data = j->user_data;
  r->agent_id = j->data.dispatch_info.agent_id;
}

/* A total spread over n positions so that the positions add up to it
 * exactly (integers split evenly, the remainder to the first ones; other
 * values whole in position 0). */
static void add_split(records *out, size_t counter, const simsdk_counter *c, double total,
                      const job *j) {
  size_t n = c->n_xcc * c->n_inst;
  int whole = total == floor(total) && fabs(total) < 9e15;
  double q = whole ? floor(total / (double)n) : 0, rest = whole ? total - q * (double)n : 0;
  for (size_t g = 0; g < n; g++) {
    double v = whole ? q + ((double)g < rest ? 1 : 0) : (g == 0 ? total : 0);
    add_record(out, counter, g / c->n_inst, g % c->n_inst, v, j);
  }
}

/* The records of counter i for job j, from table t (the pmc table, or the
 * level table of the config's accumulate counter). */
static void counter_records(records *out, size_t i, const lm_table *t, const job *j) {
  const simsdk_counter *c = simsdk_counter_get(i);
  char col[320];
  int found;
  if (c->base >= 0) { /* derived X_sum */
    const simsdk_counter *x = simsdk_counter_get((size_t)c->base);
    double v = cell(t, c->name, j->row, &found);
    if (!found) {
      snprintf(col, sizeof col, "%s[0]", x->name);
      cell(t, col, j->row, &found);
      if (found) {
        v = 0;
        for (size_t g = 0; g < x->n_xcc * x->n_inst; g++) {
          int f;
          snprintf(col, sizeof col, "%s[%zu]", x->name, g);
          v += cell(t, col, j->row, &f);
        }
      } else {
        v = cell(t, x->name, j->row, &found);
      }
    }
    if (found) add_record(out, i, 0, 0, varied(v, j->row, j->execution, i), j);
    return;
  }
  if (c->n_inst > 1) {
    snprintf(col, sizeof col, "%s[0]", c->name);
    cell(t, col, j->row, &found);
    if (found) { /* per channel, numbered across XCCs */
      for (size_t g = 0; g < c->n_xcc * c->n_inst; g++) {
        snprintf(col, sizeof col, "%s[%zu]", c->name, g);
        double v = cell(t, col, j->row, &found);
        if (found)
          add_record(out, i, g / c->n_inst, g % c->n_inst, varied(v, j->row, j->execution, i * 4096 + g), j);
      }
      return;
    }
  }
  double v = cell(t, c->name, j->row, &found);
  if (!found && c->n_inst == 1) {
    snprintf(col, sizeof col, "%s_sum", c->name);
    v = cell(t, col, j->row, &found);
  }
  if (found) add_split(out, i, c, varied(v, j->row, j->execution, i), j);
}

static void deliver(job *j) {
  const size_t *list = NULL;
  size_t n = 0;
  int agent = -1;
  records out = {0};
  if (j->config.handle && simsdk_config_counters(j->config, &list, &n, &agent) == 0 &&
      agent == simsdk_agent_index(j->data.dispatch_info.agent_id)) {
    /* An accumulate config: its level counter and SQ_ACCUM_PREV_HIRES come
     * from the level counter's own table. */
    const lm_table *level = NULL;
    for (size_t k = 0; k < n && !level; k++) {
      const char *name = simsdk_counter_get(list[k])->name;
      if (strcmp(name, "pmc_perf") != 0) level = lm_workload_source(D.rec, name);
    }
    for (size_t k = 0; k < n; k++) {
      const char *name = simsdk_counter_get(list[k])->name;
      int from_level = level && (strcmp(name, "SQ_ACCUM_PREV_HIRES") == 0 ||
                                 lm_workload_source(D.rec, name) == level);
      counter_records(&out, list[k], from_level ? level : D.rec->pmc, j);
    }
  }
  j->record_cb(j->data, out.r, out.n, j->user_data, j->record_arg);
  free(out.r);
}

/* ----------------------------------------------------- completion thread */

static void *completer_main(void *arg) {
  (void)arg;
  pthread_mutex_lock(&D.lock);
  for (;;) {
    while (!D.head && !D.stopping) pthread_cond_wait(&D.cond, &D.lock);
    if (!D.head) break;
    job *j = D.head;
    D.head = j->next;
    if (!D.head) D.tail = NULL;
    pthread_mutex_unlock(&D.lock);
    if (j->record_cb && j->config.handle) deliver(j);
    pthread_mutex_lock(&D.lock);
    D.completed++;
    pthread_cond_broadcast(&D.cond);
    /* Launches waiting for room go on once the queue is half empty. */
    if (D.space_waiters && D.queued - D.completed <= QUEUE_PACKETS / 2) pthread_cond_broadcast(&D.space);
    free(j);
  }
  pthread_mutex_unlock(&D.lock);
  return NULL;
}

EXPORT void simsdk_device_wait(void) {
  pthread_mutex_lock(&D.lock);
  while (D.completed < D.queued) pthread_cond_wait(&D.cond, &D.lock);
  pthread_mutex_unlock(&D.lock);
}

static int old_layout(void) { return simsdk_layout() == SDK_LAYOUT_05 || simsdk_layout() == SDK_LAYOUT_06; }

/* The handle in the client id lent to the tool: a tool that writes its
 * name where the layout has the handle has overwritten it. */
static uint32_t lent_handle(void) { return old_layout() ? D.client.v05.handle : D.client.v1.handle; }

/* Finalizing a client, as the SDK does: only the client whose handle both
 * the SDK's record and the lent id still hold, once. */
static void finalize_client(uint32_t handle) {
  if (handle != D.client_handle || lent_handle() != D.client_handle || !D.tool) return;
  const sdk_configure_result *tool = D.tool;
  D.tool = NULL;
  if (tool->finalize) tool->finalize(tool->tool_data);
}

static void finalize_request(sdk_client_id id) { finalize_client(id.handle); }
static void finalize_request_05(sdk_client_id_05 id) { finalize_client(id.handle); }

/* A callback tracing record delivered in the layout's form: 0.5 and 0.6
 * pass the 56-byte record, without the correlation id's ancestor, to a
 * callback registered with whatever type the tool declared. */
static void deliver_tracing(sdk_tracing_cb cb, const sdk_tracing_record *tr, sdk_user_data *ud, void *arg) {
  if (!old_layout()) {
    cb(*tr, ud, arg);
    return;
  }
  sdk_tracing_record_05 r = {tr->context_id, tr->thread_id, {tr->correlation_id.internal, tr->correlation_id.external},
                             tr->kind, tr->operation, tr->phase, tr->payload};
  sdk_tracing_cb_05 cb05;
  *(void **)&cb05 = *(void **)&cb;
  cb05(r, ud, arg);
}

static void device_shutdown(void) {
  simsdk_device_wait();
  pthread_mutex_lock(&D.lock);
  D.stopping = 1;
  pthread_cond_broadcast(&D.cond);
  int running = D.completer_running;
  D.completer_running = 0;
  pthread_cond_broadcast(&D.space);
  pthread_mutex_unlock(&D.lock);
  if (running) pthread_join(D.completer, NULL);
  finalize_client(D.client_handle);
  D.tool = NULL;
}


/* ---------------------------------------------------------- registration */

typedef const sdk_configure_result *(*configure_fn)(uint32_t version, const char *runtime_version,
                                                     uint32_t priority, sdk_client_id *client);

EXPORT int simsdk_device_init(void) {
  pthread_mutex_lock(&D.lock);
  if (D.ready || D.failed) {
    int ok = D.ready;
    pthread_mutex_unlock(&D.lock);
    return ok ? 0 : -1;
  }
  D.rec = simsdk_recording();
  if (!D.rec) {
    D.failed = 1;
    pthread_mutex_unlock(&D.lock);
    return -1;
  }
  const lm_table *pmc = D.rec->pmc;
  long kc = lm_table_find(pmc, "Kernel_Name");
  /* By default every run replays the recording itself (application replay
   * then reproduces the reference's merged rows exactly); with
   * LUMEN_SIMSDK_RERUNS=vary each process is another execution, deviating
   * by up to 2% as a rerun on a real GPU would. */
  const char *reruns = getenv("LUMEN_SIMSDK_RERUNS");
  if (reruns && strcmp(reruns, "vary") == 0) D.run_offset = 1 + ((uint64_t)getpid() % 100000u) * 16u;
  D.rec_names = calloc(pmc->n_rows + 1, sizeof *D.rec_names);
  for (size_t r = 0; D.rec_names && kc >= 0 && r < pmc->n_rows; r++) {
    const char *name = lm_table_text(pmc, (size_t)kc, r);
    int seen = 0;
    for (int i = 0; i < D.n_rec_names && !seen; i++) seen = strcmp(D.rec_names[i], name) == 0;
    if (!seen) D.rec_names[D.n_rec_names++] = name;
  }
  if (pthread_create(&D.completer, NULL, completer_main, NULL) == 0) D.completer_running = 1;
  D.ready = 1;
  pthread_mutex_unlock(&D.lock);
  /* The tool of the process, found as the SDK's registration finds it. */
  configure_fn configure = NULL;
  *(void **)&configure = dlsym(RTLD_DEFAULT, "rocprofiler_configure");
  uint32_t major, minor, patch;
  rocprofiler_get_version(&major, &minor, &patch);
  D.client_handle = 1;
  if (old_layout()) D.client.v05 = (sdk_client_id_05){"", D.client_handle};
  else D.client.v1 = (sdk_client_id){sizeof D.client.v1, "", D.client_handle};
  sdk_client_finalize finalize = finalize_request;
  if (old_layout()) *(void **)&finalize = (void *)finalize_request_05;
  const sdk_configure_result *res =
      configure ? configure(major * 10000 + minor * 100 + patch, "simulated", 0, &D.client.v1) : NULL;
  if (res && res->initialize && res->initialize(finalize, res->tool_data) == 0) D.tool = res;
  atexit(device_shutdown);
  return 0;
}

/* ---------------------------------------------------------------- launch */

static kernel *kernel_for(const char *name, int *fresh) {
  *fresh = 0;
  for (int i = 0; i < D.n_kernels; i++)
    if (strcmp(D.kernels[i].launched, name) == 0) return &D.kernels[i];
  if (D.n_kernels >= MAX_KERNELS) return NULL;
  kernel *k = &D.kernels[D.n_kernels];
  memset(k, 0, sizeof *k);
  const char *source = NULL, *reported = name;
  for (int i = 0; i < D.n_rec_names && !source; i++)
    if (strcmp(D.rec_names[i], name) == 0) source = D.rec_names[i];
  /* A source-level name ("vecCopy(double*, ...)") stands for its code
   * object symbol ("vecCopy(double*, ...) [clone .kd]"), the name the
   * runtime reports. */
  size_t len = strlen(name);
  for (int i = 0; i < D.n_rec_names && !source; i++)
    if (strncmp(D.rec_names[i], name, len) == 0 && D.rec_names[i][len] == ' ')
      source = reported = D.rec_names[i];
  /* Otherwise the launch is refused: replaying another kernel's counters
   * under this name would be a lie. LUMEN_SIMSDK_MAP=position maps it to
   * the recorded kernel at the same position (for applications written to
   * exercise other names against a recording, saying so). */
  const char *map = getenv("LUMEN_SIMSDK_MAP");
  if (!source && D.n_rec_names && map && strcmp(map, "position") == 0) {
    source = D.rec_names[D.n_kernels % D.n_rec_names];
    fprintf(stderr, "simulated device: kernel '%s' replays the recorded '%.120s' (LUMEN_SIMSDK_MAP=position)\n",
            name, source);
  }
  if (!source) return NULL;
  const lm_table *pmc = D.rec->pmc;
  long kc = lm_table_find(pmc, "Kernel_Name");
  k->launched = strdup(name);
  k->name = strdup(reported);
  char symbol[4096];
  k->symbol = strdup(simsdk_mangle(reported, symbol, sizeof symbol) == 0 ? symbol : reported);
  k->rows = malloc((pmc->n_rows + 1) * sizeof *k->rows);
  if (!k->launched || !k->name || !k->symbol || !k->rows) return NULL;
  for (size_t r = 0; source && kc >= 0 && r < pmc->n_rows; r++)
    if (strcmp(lm_table_text(pmc, (size_t)kc, r), source) == 0) k->rows[k->n_rows++] = r;
  k->id = (uint64_t)D.n_kernels + 1;
  k->clock_factor = 1.0 - 0.1 * (double)(D.n_kernels % 3);
  D.n_kernels++;
  *fresh = 1;
  return k;
}

static double row_value(size_t row, const char *column, double fallback) {
  int found;
  double v = cell(D.rec->pmc, column, row, &found);
  return found ? v : fallback;
}

static void log_clock(int gpu, unsigned long long t, double sclk, double mclk) {
  if (D.n_clocks == D.cap_clocks) {
    size_t cap = D.cap_clocks ? D.cap_clocks * 2 : 256;
    clock_sample *grown = realloc(D.clocks, cap * sizeof *grown);
    if (!grown) return;
    D.clocks = grown;
    D.cap_clocks = cap;
  }
  D.clocks[D.n_clocks++] = (clock_sample){gpu, t, sclk, mclk};
}

EXPORT int simsdk_device_launch(const char *name, const simsdk_launch *l, int gpu, char *why, size_t cap) {
  if (simsdk_device_init() != 0) {
    snprintf(why, cap, "set LUMEN_SIM_RECORDING to a recorded workload folder");
    return -1;
  }
  if (gpu < 0 || gpu >= SIMSDK_AGENTS) {
    snprintf(why, cap, "no GPU %d (the simulated system has %d)", gpu, SIMSDK_AGENTS);
    return -1;
  }
  simsdk_services sv;
  simsdk_services_now(&sv);
  job *j = calloc(1, sizeof *j);
  if (!j) {
    snprintf(why, cap, "out of memory");
    return -1;
  }
  pthread_mutex_lock(&D.lock);
  /* A queue holds a bounded number of packets: a launch into a full one
   * waits for the device, as on a real queue. */
  if (D.completer_running && D.queued - D.completed >= QUEUE_PACKETS) {
    D.space_waiters++;
    while (D.completer_running && D.queued - D.completed > QUEUE_PACKETS / 2) pthread_cond_wait(&D.space, &D.lock);
    D.space_waiters--;
  }
  int fresh;
  kernel *k = kernel_for(name, &fresh);
  if (!k || !k->n_rows) {
    char names[512] = "", folder[1024] = "the recording";
    if (D.rec->sysinfo_table && D.rec->sysinfo_table->path) {
      snprintf(folder, sizeof folder, "%s", D.rec->sysinfo_table->path);
      char *slash = strrchr(folder, '/');
      if (slash && slash != folder) *slash = 0;
    }
    for (int i = 0, at = 0; i < D.n_rec_names && at < (int)sizeof names - 1; i++)
      at += snprintf(names + at, sizeof names - (size_t)at, "%s%s", i ? "; " : "", D.rec_names[i]);
    pthread_mutex_unlock(&D.lock);
    free(j);
    snprintf(why, cap, "kernel '%s' is not in the recording this simulated device replays (%s holds: %s)",
             name, folder, names);
    return -1;
  }
  size_t row = k->rows[k->instances % k->n_rows];
  j->execution = k->instances / k->n_rows + D.run_offset;
  j->row = row;
  j->gpu = gpu;
  k->instances++;
  if (fresh && sv.code_object_cb) {
    sdk_kernel_symbol sym;
    memset(&sym, 0, sizeof sym);
    sym.size = sizeof sym;
    sym.kernel_id = k->id;
    sym.code_object_id = 1;
    sym.kernel_name = k->symbol;
    sym.kernel_object = 0x10000 + k->id;
    sym.group_segment_size = l->lds;
    sym.private_segment_size = (uint32_t)row_value(row, "Scratch_Per_Workitem", 0);
    sym.sgpr_count = (uint32_t)row_value(row, "SGPR", 0);
    sym.arch_vgpr_count = (uint32_t)row_value(row, "Arch_VGPR", 0);
    sym.accum_vgpr_count = (uint32_t)row_value(row, "Accum_VGPR", 0);
    sdk_tracing_record tr;
    memset(&tr, 0, sizeof tr);
    tr.context_id = sv.code_object_ctx;
    tr.thread_id = thread_id();
    tr.kind = SDK_TRACING_CODE_OBJECT;
    tr.operation = SDK_CODE_OBJECT_DEVICE_KERNEL_SYMBOL_REGISTER;
    tr.phase = SDK_PHASE_ENTER;
    tr.payload = &sym;
    sdk_user_data ud = {0};
    deliver_tracing(sv.code_object_cb, &tr, &ud, sv.code_object_arg);
  }
  sdk_dispatch_data *d = &j->data;
  d->size = sizeof *d;
  d->dispatch_info.size = sizeof d->dispatch_info;
  d->dispatch_info.agent_id = simsdk_agent_id(gpu);
  d->dispatch_info.queue_id.handle = 0x100 + (uint64_t)gpu;
  d->dispatch_info.kernel_id = k->id;
  d->dispatch_info.dispatch_id = D.next_dispatch++;
  d->correlation_id.internal = d->dispatch_info.dispatch_id + 1;
  d->dispatch_info.private_segment_size =
      l->scratch ? l->scratch : (uint32_t)row_value(row, "Scratch_Per_Workitem", 0);
  d->dispatch_info.group_segment_size = l->lds;
  d->dispatch_info.workgroup_size = (sdk_dim3){l->workgroup[0], l->workgroup[1], l->workgroup[2]};
  d->dispatch_info.grid_size = (sdk_dim3){l->grid[0], l->grid[1], l->grid[2]};
  /* The tool chooses the config before the packet is queued, in launch
   * order (the queue is serialized under counting). */
  if (sv.dispatch_cb) {
    sv.dispatch_cb(*d, &j->config, &j->user_data, sv.dispatch_arg);
    j->record_cb = sv.record_cb;
    j->record_arg = sv.record_arg;
  }
  /* Timestamps: the recorded ones, shifted and stretched for a replay. */
  double start = row_value(row, "Start_Timestamp", 0), end = row_value(row, "End_Timestamp", start);
  double span = end - start;
  if (j->execution) {
    start += (double)j->execution * 1e9;
    span = floor(span * (1 + deviation(row, j->execution, 1u << 30)) + 0.5);
  }
  d->start_timestamp = (uint64_t)start;
  d->end_timestamp = (uint64_t)(start + span);
  double sclk = sysinfo_number("max_sclk", 1000) * k->clock_factor, mclk = sysinfo_number("max_mclk", 1000);
  log_clock(gpu, d->start_timestamp, sclk, mclk);
  log_clock(gpu, d->end_timestamp, sclk, mclk);
  /* Queue it for the completion thread. */
  if (D.tail) D.tail->next = j;
  else D.head = j;
  D.tail = j;
  D.queued++;
  pthread_cond_broadcast(&D.cond);
  int threaded = D.completer_running;
  pthread_mutex_unlock(&D.lock);
  if (!threaded) simsdk_device_wait();
  return 0;
}

EXPORT void simsdk_device_marker(int op, const char *message, uint64_t range_id) {
  if (simsdk_device_init() != 0) return;
  simsdk_services sv;
  simsdk_services_now(&sv);
  if (!sv.marker_cb) return;
  sdk_marker_data m;
  memset(&m, 0, sizeof m);
  m.size = sizeof m;
  if (op == SDK_MARKER_roctxRangeStop) m.arg.range_id = range_id;
  else m.arg.message = message;
  sdk_tracing_record tr;
  memset(&tr, 0, sizeof tr);
  tr.context_id = sv.marker_ctx;
  tr.thread_id = thread_id();
  tr.kind = SDK_TRACING_MARKER_CORE_API;
  tr.operation = op;
  tr.payload = &m;
  sdk_user_data ud = {0};
  for (int phase = SDK_PHASE_ENTER; phase <= SDK_PHASE_EXIT; phase++) {
    tr.phase = phase;
    /* roctxRangeStartA has returned its id by the EXIT phase. */
    if (phase == SDK_PHASE_EXIT && op == SDK_MARKER_roctxRangeStartA) m.retval.range_id = range_id;
    deliver_tracing(sv.marker_cb, &tr, &ud, sv.marker_arg);
  }
}

EXPORT const char *lumen_device_clock_source(void) {
  const char *clocks = getenv("LUMEN_SIMSDK_CLOCKS");
  return clocks && strcmp(clocks, "none") == 0 ? NULL : "simulated device";
}

/* lumen_device_clock_log: the device's clock log from index `from` (for
 * lumen's sampler of a device's own log, found with dlsym). */
EXPORT size_t lumen_device_clock_log(size_t from, int *gpu, unsigned long long *t_ns, double *sclk,
                                     double *mclk, size_t cap) {
  pthread_mutex_lock(&D.lock);
  size_t n = 0;
  for (size_t i = from; i < D.n_clocks && n < cap; i++, n++) {
    gpu[n] = D.clocks[i].gpu;
    t_ns[n] = D.clocks[i].t_ns;
    sclk[n] = D.clocks[i].sclk_mhz;
    mclk[n] = D.clocks[i].mclk_mhz;
  }
  pthread_mutex_unlock(&D.lock);
  return n;
}
