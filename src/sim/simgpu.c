/*
 * simgpu.c - the simulated GPU runtime (test and demonstration device).
 *
 * It replays a recorded workload folder (LUMEN_SIM_RECORDING): a launch of
 * kernel K gets the timestamps and counters of a recorded dispatch of K,
 * the n-th instance the (n / stride)-th recorded one, cycling. Counter
 * configurations are checked against the per-block limits of the recorded
 * architecture, and a dispatch reports only the columns of its chosen
 * configuration. Clock readings are logged for every dispatch (two per
 * dispatch, at its start and end, at a clock that depends on the kernel) so
 * that a tool's telemetry sampler has something to attribute. Tool
 * callbacks for a launch run on the launching thread; the symbol and
 * dispatch decisions are taken in launch order.
 */
#include <dlfcn.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "io/io.h"
#include "metrics/metrics.h"
#include "sim/simgpu_tool.h"

#define EXPORT __attribute__((visibility("default")))
#define MAX_CONFIGS 64
#define MAX_KERNELS 4096

typedef struct config {
  int n;
  long *cols;        /* column index in `tables[i]` */
  const lm_table **tables;
} config;

typedef struct kernel {
  char *launched; /* the name the program launches */
  char *name;     /* the name reported to tools */
  unsigned long long id;
  size_t *rows;      /* recorded pmc rows of the kernel it replays */
  size_t n_rows;
  unsigned long long instances;
  double clock_factor;
} kernel;

static struct {
  pthread_mutex_t lock;
  int ready, failed;
  lm_workload *rec;
  const lm_catalog *cat;
  simgpu_runtime_api api;
  simgpu_tool_hooks hooks;
  int tool;
  config configs[MAX_CONFIGS + 1];
  int n_configs;
  int stride;
  kernel kernels[MAX_KERNELS];
  int n_kernels;
  char **rec_names;  /* recorded kernel names, in first-seen order */
  int n_rec_names;
  unsigned long long next_dispatch;
  simgpu_clock_sample *clocks;
  size_t n_clocks, cap_clocks;
  char roofline[4096];
  unsigned long long next_range;
} S = {.lock = PTHREAD_MUTEX_INITIALIZER, .stride = 1};

static unsigned long thread_id(void) { return (unsigned long)syscall(SYS_gettid); }

static int block_limit(const char *block) {
  for (int32_t i = 0; S.cat && i < S.cat->n_limits; i++)
    if (strcmp(S.cat->limits[i].block, block) == 0) return S.cat->limits[i].limit;
  return 1;
}

static void block_of(const char *counter, char *out, size_t cap) {
  size_t n = strcspn(counter, "_");
  if (n >= cap) n = cap - 1;
  memcpy(out, counter, n);
  out[n] = '\0';
  for (int32_t i = 0; S.cat && i < S.cat->n_aliases; i++)
    if (strcmp(S.cat->aliases[i].block, out) == 0) snprintf(out, cap, "%s", S.cat->aliases[i].uses);
}

/* Columns of table t that hardware counter `base` yields. */
static int matches(const char *column, const char *base) {
  size_t n = strlen(base);
  if (strncmp(column, base, n) != 0) return 0;
  const char *rest = column + n;
  return *rest == '\0' || strcmp(rest, "_sum") == 0 || (*rest == '[' && strchr(rest, ']'));
}

static int create_config(const char *const *counters, int n, const char *accumulate, char *why,
                         size_t cap) {
  pthread_mutex_lock(&S.lock);
  int handle = 0;
  if (S.n_configs >= MAX_CONFIGS) {
    snprintf(why, cap, "the simulated device holds at most %d configurations", MAX_CONFIGS);
    goto done;
  }
  /* Per-block limits, like hardware counter registers. */
  for (int i = 0; i < n; i++) {
    char block[32], other[32];
    block_of(counters[i], block, sizeof block);
    int used = 0;
    for (int j = 0; j < n; j++) {
      block_of(counters[j], other, sizeof other);
      used += strcmp(block, other) == 0;
    }
    if (used > block_limit(block)) {
      snprintf(why, cap, "%d %s counters in one set: the %s limit of %s is %d", used, block,
               S.rec->arch, block, block_limit(block));
      goto done;
    }
  }
  const lm_table *level = accumulate ? lm_workload_source(S.rec, accumulate) : NULL;
  config *c = &S.configs[S.n_configs + 1];
  size_t cap_cols = 0;
  c->n = 0;
  c->cols = NULL;
  c->tables = NULL;
  for (int i = 0; i < n; i++) {
    const lm_table *tables[2] = {level, S.rec->pmc};
    int found = 0;
    for (int t = 0; t < 2 && !found; t++) {
      if (!tables[t]) continue;
      for (size_t k = 0; k < tables[t]->n_cols; k++) {
        if (!matches(tables[t]->cols[k].name, counters[i])) continue;
        if ((size_t)c->n == cap_cols) {
          cap_cols = cap_cols ? cap_cols * 2 : 64;
          c->cols = realloc(c->cols, cap_cols * sizeof *c->cols);
          c->tables = realloc(c->tables, cap_cols * sizeof *c->tables);
          if (!c->cols || !c->tables) {
            snprintf(why, cap, "out of memory");
            goto done;
          }
        }
        c->cols[c->n] = (long)k;
        c->tables[c->n] = tables[t];
        c->n++;
        found = 1;
      }
    }
  }
  handle = ++S.n_configs;
done:
  pthread_mutex_unlock(&S.lock);
  return handle;
}

static void set_instance_stride(int stride) {
  pthread_mutex_lock(&S.lock);
  S.stride = stride > 0 ? stride : 1;
  pthread_mutex_unlock(&S.lock);
}

static size_t clock_samples(size_t from, simgpu_clock_sample *out, size_t cap) {
  pthread_mutex_lock(&S.lock);
  size_t n = 0;
  for (size_t i = from; i < S.n_clocks && n < cap; i++) out[n++] = S.clocks[i];
  pthread_mutex_unlock(&S.lock);
  return n;
}

static void log_clock(int gpu, unsigned long long t, double sclk, double mclk) {
  if (S.n_clocks == S.cap_clocks) {
    size_t cap = S.cap_clocks ? S.cap_clocks * 2 : 256;
    simgpu_clock_sample *grown = realloc(S.clocks, cap * sizeof *grown);
    if (!grown) return;
    S.clocks = grown;
    S.cap_clocks = cap;
  }
  S.clocks[S.n_clocks++] = (simgpu_clock_sample){gpu, t, sclk, mclk};
}

static double sysinfo_number(const char *name, double fallback) {
  long i = lm_sysinfo_find(&S.rec->sysinfo, name);
  return i >= 0 && !isnan(S.rec->sysinfo.values[i]) ? S.rec->sysinfo.values[i] : fallback;
}

static void shutdown_tool(void) {
  if (S.tool && S.hooks.shutdown) S.hooks.shutdown(S.hooks.user);
  S.tool = 0;
}

EXPORT int simgpu_init(void) {
  pthread_mutex_lock(&S.lock);
  if (S.ready || S.failed) {
    int ok = S.ready;
    pthread_mutex_unlock(&S.lock);
    return ok ? 0 : -1;
  }
  const char *dir = getenv("LUMEN_SIM_RECORDING");
  lm_diag diag;
  if (!dir || !*dir) {
    fprintf(stderr, "simgpu: set LUMEN_SIM_RECORDING to a recorded workload folder\n");
    S.failed = 1;
    pthread_mutex_unlock(&S.lock);
    return -1;
  }
  if (lm_workload_read(dir, &S.rec, &diag) != LM_OK) {
    char line[1024];
    fprintf(stderr, "simgpu: %s\n", lm_diag_format(&diag, line, sizeof line));
    S.failed = 1;
    pthread_mutex_unlock(&S.lock);
    return -1;
  }
  S.cat = lm_metrics_builtin(S.rec->arch);
  /* Recorded kernel names in first-seen order. */
  const lm_table *pmc = S.rec->pmc;
  long kc = lm_table_find(pmc, "Kernel_Name");
  S.rec_names = calloc(pmc->n_strings + 1, sizeof *S.rec_names);
  for (size_t r = 0; S.rec_names && r < pmc->n_rows; r++) {
    const char *name = lm_table_text(pmc, (size_t)kc, r);
    int seen = 0;
    for (int i = 0; i < S.n_rec_names && !seen; i++) seen = strcmp(S.rec_names[i], name) == 0;
    if (!seen) S.rec_names[S.n_rec_names++] = (char *)name;
  }
  snprintf(S.roofline, sizeof S.roofline, "%s/roofline.csv", dir);
  S.api.abi = SIMGPU_TOOL_ABI;
  S.api.arch = S.rec->arch;
  S.api.n_gpus = 8;
  S.api.n_sysinfo = S.rec->sysinfo.n_fields;
  S.api.sysinfo_names = S.rec->sysinfo.names;
  S.api.sysinfo_texts = S.rec->sysinfo.texts;
  S.api.roofline_csv = access(S.roofline, R_OK) == 0 ? S.roofline : NULL;
  S.api.create_config = create_config;
  S.api.set_instance_stride = set_instance_stride;
  S.api.clock_samples = clock_samples;
  S.ready = 1;
  pthread_mutex_unlock(&S.lock);
  /* A tool in the process? (lumen's, through LD_PRELOAD) */
  int (*init)(const simgpu_runtime_api *, simgpu_tool_hooks *) =
      (int (*)(const simgpu_runtime_api *, simgpu_tool_hooks *))dlsym(RTLD_DEFAULT,
                                                                       "simgpu_tool_init");
  if (init && init(&S.api, &S.hooks) == 0) {
    S.tool = 1;
    atexit(shutdown_tool);
  }
  return 0;
}

static kernel *kernel_for(const char *name) {
  for (int i = 0; i < S.n_kernels; i++)
    if (strcmp(S.kernels[i].launched, name) == 0) return &S.kernels[i];
  if (S.n_kernels >= MAX_KERNELS) return NULL;
  kernel *k = &S.kernels[S.n_kernels];
  memset(k, 0, sizeof *k);
  k->launched = strdup(name);
  k->name = strdup(name);
  k->id = (unsigned long long)S.n_kernels + 1;
  /* Replay the recorded kernel of the same name, or the one at the same
   * position among recorded names. */
  const char *source = NULL;
  for (int i = 0; i < S.n_rec_names && !source; i++)
    if (strcmp(S.rec_names[i], name) == 0) source = S.rec_names[i];
  /* A source-level name ("vecCopy(double*, ...)") stands for its code
   * object symbol ("vecCopy(double*, ...) [clone .kd]"), which is the name
   * the runtime reports, as real runtimes do. */
  size_t len = strlen(name);
  for (int i = 0; i < S.n_rec_names && !source; i++)
    if (strncmp(S.rec_names[i], name, len) == 0 && S.rec_names[i][len] == ' ') {
      source = S.rec_names[i];
      free(k->name);
      k->name = strdup(source);
    }
  if (!source && S.n_rec_names) source = S.rec_names[S.n_kernels % S.n_rec_names];
  const lm_table *pmc = S.rec->pmc;
  long kc = lm_table_find(pmc, "Kernel_Name");
  k->rows = malloc((pmc->n_rows + 1) * sizeof *k->rows);
  for (size_t r = 0; k->rows && source && r < pmc->n_rows; r++)
    if (strcmp(lm_table_text(pmc, (size_t)kc, r), source) == 0) k->rows[k->n_rows++] = r;
  k->clock_factor = 1.0 - 0.1 * (double)(S.n_kernels % 3);
  S.n_kernels++;
  return k;
}

static double value_at(const lm_table *t, long col, size_t row) {
  return row < t->n_rows ? t->cols[col].values[row] : LM_NAN;
}

EXPORT int simgpu_launch(const char *name, const simgpu_launch_params *params, int gpu) {
  if (simgpu_init() != 0) return -1;
  pthread_mutex_lock(&S.lock);
  int fresh = 0;
  for (int i = 0; i < S.n_kernels && !fresh; i++) fresh = strcmp(S.kernels[i].launched, name) == 0;
  fresh = !fresh;
  kernel *k = kernel_for(name);
  if (!k || !k->n_rows) {
    pthread_mutex_unlock(&S.lock);
    fprintf(stderr, "simgpu: the recording has no dispatch to replay for %s\n", name);
    return -1;
  }
  simgpu_dispatch d;
  d.dispatch_id = S.next_dispatch++;
  d.kernel_id = k->id;
  d.kernel_name = k->name;
  d.gpu = gpu;
  d.tid = thread_id();
  d.params = *params;
  size_t row = k->rows[(k->instances / (unsigned long long)S.stride) % k->n_rows];
  k->instances++;
  /* Register and scratch needs belong to the compiled kernel: when the
   * program leaves them 0, they come from the recorded dispatch. */
  const lm_table *rt = S.rec->pmc;
  unsigned *fill[] = {&d.params.arch_vgprs, &d.params.accum_vgprs, &d.params.sgprs,
                      &d.params.scratch_bytes};
  static const char *const fill_cols[] = {"Arch_VGPR", "Accum_VGPR", "SGPR", "Scratch_Per_Workitem"};
  for (size_t i = 0; i < sizeof fill / sizeof fill[0]; i++) {
    long col = lm_table_find(rt, fill_cols[i]);
    double v = col >= 0 ? value_at(rt, col, row) : LM_NAN;
    if (*fill[i] == 0 && !isnan(v) && v > 0) *fill[i] = (unsigned)v;
  }
  /* A new kernel symbol is announced before any of its dispatches. */
  if (S.tool && fresh && S.hooks.kernel_symbol) S.hooks.kernel_symbol(S.hooks.user, d.kernel_id, k->name);
  /* The tool decides in dispatch order, like packets entering one queue. */
  int handle = S.tool && S.hooks.dispatch ? S.hooks.dispatch(S.hooks.user, &d) : 0;
  pthread_mutex_unlock(&S.lock);
  const lm_table *pmc = S.rec->pmc;
  double start = value_at(pmc, lm_table_find(pmc, "Start_Timestamp"), row);
  double end = value_at(pmc, lm_table_find(pmc, "End_Timestamp"), row);
  if (isnan(start)) start = 0;
  if (isnan(end)) end = start;
  simgpu_counter_value *values = NULL;
  int n = 0;
  pthread_mutex_lock(&S.lock);
  double max_sclk = sysinfo_number("max_sclk", 1000), mclk = sysinfo_number("max_mclk", 1000);
  log_clock(gpu, (unsigned long long)start, max_sclk * k->clock_factor, mclk);
  log_clock(gpu, (unsigned long long)end, max_sclk * k->clock_factor, mclk);
  if (handle > 0 && handle <= S.n_configs) {
    const config *c = &S.configs[handle];
    values = malloc(((size_t)c->n + 1) * sizeof *values);
    for (int i = 0; values && i < c->n; i++) {
      values[n].column = c->tables[i]->cols[c->cols[i]].name;
      values[n].value = value_at(c->tables[i], c->cols[i], row);
      n++;
    }
  }
  pthread_mutex_unlock(&S.lock);
  if (S.tool && S.hooks.completed)
    S.hooks.completed(S.hooks.user, &d, handle, (unsigned long long)start,
                      (unsigned long long)end, values, n);
  free(values);
  return 0;
}

EXPORT void simgpu_synchronize(void) {}

static void marker(int op, const char *message, unsigned long long id) {
  if (simgpu_init() != 0) return;
  if (S.tool && S.hooks.marker) S.hooks.marker(S.hooks.user, op, thread_id(), message, id);
}

EXPORT void simgpu_range_push(const char *message) { marker(SIMGPU_MARK_PUSH, message, 0); }
EXPORT void simgpu_range_pop(void) { marker(SIMGPU_MARK_POP, NULL, 0); }

EXPORT unsigned long long simgpu_range_start(const char *message) {
  pthread_mutex_lock(&S.lock);
  unsigned long long id = ++S.next_range;
  pthread_mutex_unlock(&S.lock);
  marker(SIMGPU_MARK_START, message, id);
  return id;
}

EXPORT void simgpu_range_stop(unsigned long long id) { marker(SIMGPU_MARK_STOP, NULL, id); }
