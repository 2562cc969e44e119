/*
 * tool.c - liblumen_tool: the library `lumen profile` loads into the
 * application (LD_PRELOAD; ROCP_TOOL_LIBRARIES or CUDA_INJECTION64_PATH for
 * the vendor runtimes).
 *
 * At load time it reads its configuration (LUMEN_TOOL_CONFIG: the counter
 * sets, the replay mode, the filters) and builds the policy. A backend
 * then attaches it to the GPU runtime: here the simulated device's
 * simgpu_tool_init. Dispatches are decided by the vendor-neutral policy;
 * their timestamps, counters and regions are appended to a records file
 * that `lumen profile` reads after the run. lumen's region markers are
 * defined here too, so that they take over the no-op markers library when
 * the program runs under lumen. A background thread samples GPU clocks.
 */
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define LUMEN_MARKERS
#include "lumen/markers.h"
#include "profile/profile.h"
#include "sim/simgpu_tool.h"
#include "backend/backend.h"

#define EXPORT __attribute__((visibility("default")))

static struct {
  int active;
  lm_tool_config cfg;
  lm_policy *policy;
  pthread_mutex_t out_lock;
  FILE *out;
  unsigned long records;
  int *handles;          /* device configuration per set */
  const simgpu_runtime_api *sim;
  pthread_t sampler;
  int sampler_running;
  volatile int stop;
  lm_telemetry *telemetry;
  int regions_written;
} T = {.out_lock = PTHREAD_MUTEX_INITIALIZER};

static unsigned long tid(void) { return (unsigned long)syscall(SYS_gettid); }

#if defined(__GNUC__)
__attribute__((format(printf, 1, 2)))
#endif
static void emit(const char *fmt, ...) {
  if (!T.out) return;
  va_list ap;
  pthread_mutex_lock(&T.out_lock);
  va_start(ap, fmt);
  vfprintf(T.out, fmt, ap);
  va_end(ap);
  /* Each record reaches the file at once: a program that crashes keeps
   * what it collected up to the crash. */
  fflush(T.out);
  T.records++;
  pthread_mutex_unlock(&T.out_lock);
}

/* Text fields are written as they are, with tabs and newlines made spaces. */
static void clean(const char *in, char *out, size_t cap) {
  size_t i = 0;
  for (; in && *in && i + 1 < cap; in++) out[i++] = (*in == '\t' || *in == '\n' || *in == '\r') ? ' ' : *in;
  out[i] = '\0';
}

static void tool_error(const char *what) {
  emit("E\t%s\n", what);
  fprintf(stderr, "lumen tool: %s\n", what);
}

__attribute__((constructor)) static void tool_load(void) {
  const char *path = getenv("LUMEN_TOOL_CONFIG");
  if (!path) return;
  lm_diag d;
  if (lm_tool_config_read(path, &T.cfg, &d) != LM_OK) {
    char line[1024];
    fprintf(stderr, "lumen tool: %s\n", lm_diag_format(&d, line, sizeof line));
    return;
  }
  T.out = fopen(T.cfg.output, "w");
  if (!T.out) {
    fprintf(stderr, "lumen tool: cannot write %s: %s\n", T.cfg.output, strerror(errno));
    return;
  }
  setvbuf(T.out, NULL, _IOFBF, 1 << 20);
  emit("lumen-records 1\nP\t%ld\n", (long)getpid());
  if (lm_policy_new(&T.cfg, &T.policy, &d) != LM_OK) {
    char line[1024];
    tool_error(lm_diag_format(&d, line, sizeof line));
    return;
  }
  T.active = 1;
}

static void stop_sampler(void) {
  if (T.sampler_running) {
    T.stop = 1;
    pthread_join(T.sampler, NULL);
    T.sampler_running = 0;
  }
}

static void tool_finish(void) {
  if (!T.active) return;
  stop_sampler();
  if (T.telemetry) lm_telemetry_sample(T.telemetry, emit);
  lm_telemetry_close(T.telemetry);
  T.telemetry = NULL;
  /* Region names, for the ids in dispatch records. */
  for (int id = 1; T.policy && lm_policy_region_name(T.policy, id); id++) {
    char name[512];
    clean(lm_policy_region_name(T.policy, id), name, sizeof name);
    emit("G\t%d\t%s\n", id, name);
  }
  emit("END\n");
  pthread_mutex_lock(&T.out_lock);
  if (T.out) {
    fflush(T.out);
    fsync(fileno(T.out));
  }
  pthread_mutex_unlock(&T.out_lock);
  T.active = 0;
}

__attribute__((destructor)) static void tool_unload(void) { tool_finish(); }

static void *sampler_main(void *arg) {
  (void)arg;
  struct timespec period = {0, 1000000}; /* 1 ms */
  while (!T.stop) {
    lm_telemetry_sample(T.telemetry, emit);
    nanosleep(&period, NULL);
  }
  return NULL;
}

/* ------------------------------------------------- the simulated device */

static void sim_kernel(void *user, unsigned long long kernel_id, const char *name) {
  (void)user;
  if (!T.active) return;
  lm_policy_kernel(T.policy, kernel_id, name);
  char clean_name[4096];
  clean(name, clean_name, sizeof clean_name);
  emit("K\t%llu\t%s\n", kernel_id, clean_name);
}

/* The choice made at dispatch time, found again at completion (the
 * simulated device completes on the launching thread). */
static _Thread_local lm_choice last_choice;

static int sim_dispatch(void *user, const simgpu_dispatch *d) {
  (void)user;
  if (!T.active) return 0;
  lm_dispatch_facts f;
  f.dispatch_id = d->dispatch_id;
  f.kernel_id = d->kernel_id;
  f.kernel_name = d->kernel_name;
  f.gpu = d->gpu;
  f.tid = d->tid;
  f.grid = (uint64_t)d->params.grid.x * (d->params.grid.y ? d->params.grid.y : 1) *
           (d->params.grid.z ? d->params.grid.z : 1);
  f.workgroup = (uint64_t)d->params.workgroup.x * (d->params.workgroup.y ? d->params.workgroup.y : 1) *
                (d->params.workgroup.z ? d->params.workgroup.z : 1);
  f.lds = d->params.lds_bytes;
  lm_policy_choose(T.policy, &f, &last_choice);
  int set = last_choice.set;
  return set >= 0 && set < T.cfg.n_sets ? T.handles[set] : 0;
}

static void sim_completed(void *user, const simgpu_dispatch *d, int config,
                          unsigned long long start, unsigned long long end,
                          const simgpu_counter_value *values, int n) {
  (void)user;
  (void)config;
  if (!T.active) return;
  const lm_choice *c = &last_choice;
  const simgpu_launch_params *p = &d->params;
  char key[1024];
  clean(c->key, key, sizeof key);
  emit("D\t%llu\t%llu\t%lld\t%lld\t%d\t%d\t%lu\t%llu\t%llu\t%u\t%u\t%u\t%u\t%u\t%llu\t%llu\t%s\t%s\n",
       d->dispatch_id, d->kernel_id, (long long)c->instance, (long long)c->selected, c->set,
       d->gpu, d->tid,
       (unsigned long long)p->grid.x * (p->grid.y ? p->grid.y : 1) * (p->grid.z ? p->grid.z : 1),
       (unsigned long long)p->workgroup.x * (p->workgroup.y ? p->workgroup.y : 1) *
           (p->workgroup.z ? p->workgroup.z : 1),
       p->lds_bytes, p->scratch_bytes, p->arch_vgprs, p->accum_vgprs, p->sgprs, start, end,
       c->regions[0] ? c->regions : "-", key);
  if (c->set < 0 || n <= 0) return;
  /* Values on one line: column=value pairs. */
  size_t cap = 64 + (size_t)n * 48, at = 0;
  char *line = malloc(cap);
  if (!line) return;
  at += (size_t)snprintf(line, cap, "V\t%llu", d->dispatch_id);
  for (int i = 0; i < n && at < cap; i++)
    at += (size_t)snprintf(line + at, cap - at, "\t%s=%.17g", values[i].column, values[i].value);
  emit("%s\n", line);
  free(line);
}

static void sim_marker(void *user, int op, unsigned long thread, const char *message,
                       unsigned long long id) {
  (void)user;
  if (!T.active) return;
  switch (op) {
  case SIMGPU_MARK_PUSH: lm_policy_region_push(T.policy, thread, message ? message : ""); break;
  case SIMGPU_MARK_POP: lm_policy_region_pop(T.policy, thread); break;
  case SIMGPU_MARK_START: lm_policy_range_start(T.policy, id, message ? message : ""); break;
  case SIMGPU_MARK_STOP: lm_policy_range_stop(T.policy, id); break;
  default: break;
  }
}

static void sim_shutdown(void *user) {
  (void)user;
  tool_finish();
}

EXPORT int simgpu_tool_init(const simgpu_runtime_api *api, simgpu_tool_hooks *hooks) {
  if (!T.active || api->abi != SIMGPU_TOOL_ABI) return -1;
  T.sim = api;
  if (strcmp(api->arch, T.cfg.arch) != 0) {
    char msg[256];
    snprintf(msg, sizeof msg, "the counter sets were planned for %s but the device is %s",
             T.cfg.arch, api->arch);
    tool_error(msg);
    T.active = 0;
    return -1;
  }
  T.handles = calloc((size_t)T.cfg.n_sets + 1, sizeof *T.handles);
  if (!T.handles) return -1;
  for (int s = 0; s < T.cfg.n_sets; s++) {
    int n = 0;
    while (T.cfg.set_counters[s] && T.cfg.set_counters[s][n]) n++;
    char why[512] = "";
    T.handles[s] = api->create_config((const char *const *)T.cfg.set_counters[s], n,
                                      T.cfg.set_accumulate[s], why, sizeof why);
    if (T.handles[s] <= 0) {
      char msg[768];
      snprintf(msg, sizeof msg, "the device refused counter set %d: %s", s, why);
      tool_error(msg);
      T.active = 0;
      return -1;
    }
  }
  /* In a cycle of sets, successive instances repeat one recorded dispatch. */
  if (T.cfg.mode != LM_REPLAY_APP) api->set_instance_stride(T.cfg.n_sets);
  hooks->user = NULL;
  hooks->kernel_symbol = sim_kernel;
  hooks->dispatch = sim_dispatch;
  hooks->completed = sim_completed;
  hooks->marker = sim_marker;
  hooks->shutdown = sim_shutdown;
  /* Telemetry: the device's own clock log. */
  if (strcmp(T.cfg.telemetry, "none") != 0) {
    T.telemetry = lm_telemetry_open_sim(api);
    if (T.telemetry && pthread_create(&T.sampler, NULL, sampler_main, NULL) == 0)
      T.sampler_running = 1;
  }
  emit("A\t%s\n", api->arch);
  return 0;
}

/* ------------------------------------------------------ lumen's markers */

EXPORT void lumen_region_begin(const char *name) {
  if (T.active) lm_policy_region_push(T.policy, tid(), name ? name : "");
}

EXPORT void lumen_region_end(const char *name) {
  (void)name;
  if (T.active) lm_policy_region_pop(T.policy, tid());
}

EXPORT unsigned long long lumen_range_start(const char *name) {
  static unsigned long long next = 1ULL << 40;
  if (!T.active) return 0;
  unsigned long long id = __atomic_fetch_add(&next, 1, __ATOMIC_RELAXED);
  lm_policy_range_start(T.policy, id, name ? name : "");
  return id;
}

EXPORT void lumen_range_stop(unsigned long long id) {
  if (T.active) lm_policy_range_stop(T.policy, id);
}

EXPORT void lumen_mark(const char *name) {
  if (!T.active) return;
  char clean_name[512];
  clean(name, clean_name, sizeof clean_name);
  struct timespec ts;
  clock_gettime(CLOCK_BOOTTIME, &ts);
  emit("M\t%lu\t%lld\t%s\n", tid(), (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec, clean_name);
}
