/*
 * collect_micro.c - the micro-benchmark of the tool library's per-dispatch
 * path (bench/collect_micro.sh drives it). Two roles:
 *
 *   collect_micro config OUT ARCH RECORDS FILTER|- COUNTER...
 *       writes a tool configuration as `lumen profile` would: application
 *       replay collecting one set of COUNTERs, and the kernel filter
 *       FILTER (a regex; - for none), records into RECORDS.PID
 *   collect_micro launch N THREADS KERNEL
 *       the application: N launches of KERNEL in all, from THREADS threads,
 *       through the simulated GPU runtime; prints the launch loop's wall
 *       time in seconds (from the first launch to the end of the last
 *       one's completion)
 *
 * The script runs the application without the tool (the simulated
 * device's own time), with a filter that selects nothing, and collecting,
 * and divides the differences by N.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "lumen/simgpu.h"
#include "profile/profile.h"

typedef struct worker {
  long n;
  const char *kernel;
  int failed;
} worker;

static void *launch_loop(void *arg) {
  worker *w = arg;
  simgpu_launch_params p;
  memset(&p, 0, sizeof p);
  p.grid.x = 1 << 20;
  p.workgroup.x = 256;
  for (long i = 0; i < w->n && !w->failed; i++)
    if (simgpu_launch(w->kernel, &p, 0) != 0) w->failed = 1;
  return NULL;
}

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int launch(long n, int threads, const char *kernel) {
  if (threads < 1 || threads > 256 || n < threads) return 2;
  if (simgpu_init() != 0) return 1;
  worker w[256];
  pthread_t t[256];
  double t0 = now_s();
  for (int i = 0; i < threads; i++) {
    w[i] = (worker){n / threads + (i < n % threads), kernel, 0};
    if (pthread_create(&t[i], NULL, launch_loop, &w[i]) != 0) return 1;
  }
  int failed = 0;
  for (int i = 0; i < threads; i++) {
    pthread_join(t[i], NULL);
    failed |= w[i].failed;
  }
  simgpu_synchronize();
  double t1 = now_s();
  if (failed) return 1;
  printf("%.6f\n", t1 - t0);
  return 0;
}

static int config(const char *out, const char *arch, const char *records, const char *filter, char **counters,
                  int n_counters) {
  lm_tool_config c;
  memset(&c, 0, sizeof c);
  snprintf(c.arch, sizeof c.arch, "%s", arch);
  c.mode = LM_REPLAY_APP;
  c.pass = 0;
  c.n_sets = 1;
  char **set = calloc((size_t)n_counters + 1, sizeof *set);
  char **sets[1] = {set};
  char *acc[1] = {NULL};
  char *kernels[1] = {(char *)filter};
  if (!set) return 1;
  for (int i = 0; i < n_counters; i++) set[i] = counters[i];
  c.set_counters = sets;
  c.set_accumulate = acc;
  if (strcmp(filter, "-") != 0) {
    c.kernels = kernels;
    c.n_kernels = 1;
  }
  snprintf(c.output, sizeof c.output, "%s", records);
  snprintf(c.telemetry, sizeof c.telemetry, "none");
  lm_diag d;
  lm_status st = lm_tool_config_write(&c, out, &d);
  free(set);
  if (st != LM_OK) {
    char line[1024];
    fprintf(stderr, "collect_micro: %s\n", lm_diag_format(&d, line, sizeof line));
    return 1;
  }
  return 0;
}

int main(int argc, char **argv) {
  if (argc >= 5 && strcmp(argv[1], "launch") == 0) return launch(atol(argv[2]), atoi(argv[3]), argv[4]);
  if (argc >= 7 && strcmp(argv[1], "config") == 0) return config(argv[2], argv[3], argv[4], argv[5], argv + 6, argc - 6);
  fprintf(stderr, "usage: collect_micro launch N THREADS KERNEL | config OUT ARCH RECORDS FILTER|- COUNTER...\n");
  return 2;
}
