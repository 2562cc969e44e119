/*
 * simapp.c - a test application for `lumen profile` on the simulated GPU
 * (libsimgpu, which replays a recorded workload: no real measurement).
 *
 * It launches kernels in iterations, like a solver loop: iteration i
 * launches every kernel whose count is above i. Options shape the cases
 * the integration tests need: several threads, region markers (lumen's own
 * and ROCTx-style ranges of the runtime), a kernel count that changes from
 * run to run, and a crash in a chosen run.
 *
 *   simapp [-g GPU] [-t THREADS] [-R NAME:FROM:TO] [-S NAME:FROM:TO] [-X NAME:FROM:TO]
 *          [--vary NAME] [--crash-run N] [--crash-after K] [--fail-run N]
 *          [--hang-run N] [--pid-file FILE] [--spawn]
 *          NAME:COUNT[:GRID[:WORKGROUP[:LDS]]] ...
 *
 * -R marks iterations FROM..TO-1 as lumen region NAME (per thread); -S does
 * the same with the runtime's range push/pop; -X with the runtime's
 * process-wide start/stop ranges (roctxRangeStartA / roctxRangeStop), each
 * stopped from another thread than the one that started it, and free to
 * overlap without nesting. --vary NAME launches NAME one
 * more time per run number (LUMEN_PASS, set by lumen profile), which makes
 * its count differ between runs. --crash-run N kills the program with
 * SIGSEGV after K launches in run N; --fail-run N exits with status 3;
 * --hang-run N stops making progress after K launches in run N (it waits
 * forever, as a deadlocked program does). --pid-file FILE appends the
 * program's pid to FILE at start; --spawn also starts a child process that
 * waits forever (its pid goes to FILE too), as a program that leaves a
 * helper process behind. --procs N forks N-1 more processes before the
 * runtime starts, one per GPU (process k launches on GPU -g + k), and waits
 * for them, as a program with a process per GPU does. -g local takes the
 * GPU from the MPI launcher's local rank (OMPI_COMM_WORLD_LOCAL_RANK,
 * MPI_LOCALRANKID or SLURM_LOCALID), as MPI programs pick theirs.
 * --crash-rank R: the MPI rank R (OMPI_COMM_WORLD_RANK or PMI_RANK) dies by
 * SIGSEGV a moment after its launches completed, when the other ranks
 * have ended. --extra-rank R K launches every kernel K more times in rank R
 * (ranks with uneven kernel counts).
 */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define LUMEN_MARKERS
#include "lumen/markers.h"
#include "lumen/simgpu.h"

#define MAX_LAUNCHES 32
#define MAX_MARKS 8

typedef struct launch {
  char name[1200];
  int count;
  simgpu_launch_params params;
} launch;

typedef struct mark {
  char name[128];
  int from, to;
  int runtime; /* 0 -R: lumen markers; 1 -S: the runtime's push/pop; 2 -X: its start/stop */
} mark;

static launch launches[MAX_LAUNCHES];
static int n_launches;
static mark marks[MAX_MARKS];
static int n_marks;
static int gpu, crash_run = -1, crash_after = 0, fail_run = -1, hang_run = -1, run_number;
static const char *vary, *pid_file;
static int spawn, procs = 1, crash_rank = -1, extra_rank = -1, extra_count;

static int mpi_rank(void) {
  const char *v = getenv("OMPI_COMM_WORLD_RANK");
  if (!v) v = getenv("PMI_RANK");
  return v ? atoi(v) : -1;
}

/* local_gpu: the GPU of an MPI rank, by its local rank (0 without one). */
static int local_gpu(void) {
  const char *vars[] = {"OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID", "SLURM_LOCALID", NULL};
  for (const char **v = vars; *v; v++)
    if (getenv(*v)) return atoi(getenv(*v));
  return 0;
}

static void note_pid(long pid) {
  FILE *f = pid_file ? fopen(pid_file, "a") : NULL;
  if (!f) return;
  fprintf(f, "%ld\n", pid);
  fclose(f);
}
static long total;
static pthread_mutex_t total_lock = PTHREAD_MUTEX_INITIALIZER;

static int parse_launch(const char *spec, launch *l) {
  /* NAME may contain ':' (C++ names do); the numbers are the last fields. */
  char copy[1200];
  snprintf(copy, sizeof copy, "%s", spec);
  long nums[4] = {1, 1048576, 256, 0};
  int n_nums = 0;
  char *fields[5];
  int nf = 0;
  char *end = copy + strlen(copy);
  while (nf < 4) {
    char *colon = NULL;
    for (char *p = end - 1; p >= copy; p--)
      if (*p == ':') {
        colon = p;
        break;
      }
    if (!colon) break;
    char *tail;
    long v = strtol(colon + 1, &tail, 10);
    if (tail == colon + 1 || *tail) break;
    fields[nf++] = colon + 1;
    (void)v;
    *colon = '\0';
    end = colon;
  }
  for (int i = nf - 1; i >= 0; i--) nums[n_nums++] = strtol(fields[i], NULL, 10);
  if (n_nums == 0) return 0;
  snprintf(l->name, sizeof l->name, "%s", copy);
  l->count = (int)nums[0];
  memset(&l->params, 0, sizeof l->params);
  l->params.grid.x = (unsigned)(n_nums > 1 ? nums[1] : 1048576);
  l->params.grid.y = l->params.grid.z = 1;
  l->params.workgroup.x = (unsigned)(n_nums > 2 ? nums[2] : 256);
  l->params.workgroup.y = l->params.workgroup.z = 1;
  l->params.lds_bytes = (unsigned)(n_nums > 3 ? nums[3] : 0);
  return 1;
}

static void count_launch(void) {
  pthread_mutex_lock(&total_lock);
  long done = ++total;
  pthread_mutex_unlock(&total_lock);
  if (run_number == crash_run && done == crash_after) {
    simgpu_synchronize(); /* what was launched has completed */
    fprintf(stderr, "simapp: crashing in run %d as asked\n", run_number);
    fflush(stderr);
    signal(SIGSEGV, SIG_DFL); /* die by the signal, even under a sanitizer */
    raise(SIGSEGV);
  }
  if (run_number == hang_run && done == crash_after) {
    simgpu_synchronize();
    fprintf(stderr, "simapp: hanging in run %d as asked\n", run_number);
    fflush(stderr);
    for (;;) pause();
  }
}

static void *stop_range(void *arg) {
  simgpu_range_stop(*(unsigned long long *)arg);
  return NULL;
}

/* A start/stop range ends on a thread of its own. */
static void stop_elsewhere(unsigned long long id) {
  pthread_t t;
  if (pthread_create(&t, NULL, stop_range, &id) != 0) {
    simgpu_range_stop(id);
    return;
  }
  pthread_join(t, NULL);
}

static void *worker(void *arg) {
  (void)arg;
  int iterations = 0;
  for (int k = 0; k < n_launches; k++) {
    int c = launches[k].count + (vary && strcmp(vary, launches[k].name) == 0 ? run_number : 0);
    if (c > iterations) iterations = c;
  }
  unsigned long long range_ids[MAX_MARKS] = {0};
  for (int i = 0; i < iterations; i++) {
    for (int m = 0; m < n_marks; m++)
      if (marks[m].from == i) {
        if (marks[m].runtime == 2) range_ids[m] = simgpu_range_start(marks[m].name);
        else if (marks[m].runtime) simgpu_range_push(marks[m].name);
        else LUMEN_REGION_BEGIN(marks[m].name);
      }
    for (int k = 0; k < n_launches; k++) {
      int c = launches[k].count + (vary && strcmp(vary, launches[k].name) == 0 ? run_number : 0);
      if (i >= c) continue;
      if (simgpu_launch(launches[k].name, &launches[k].params, gpu) != 0) exit(4);
      count_launch();
    }
    /* Start/stop ranges end in the order they started (they overlap);
     * push/pop and lumen's regions in reverse (they nest). */
    for (int m = 0; m < n_marks; m++)
      if (marks[m].to == i + 1 && marks[m].runtime == 2) stop_elsewhere(range_ids[m]);
    for (int m = n_marks - 1; m >= 0; m--)
      if (marks[m].to == i + 1) {
        if (marks[m].runtime == 1) simgpu_range_pop();
        else if (marks[m].runtime == 0) LUMEN_REGION_END(marks[m].name);
      }
  }
  return NULL;
}

static int parse_mark(const char *spec, int runtime) {
  if (n_marks >= MAX_MARKS) return 0;
  mark *m = &marks[n_marks];
  char name[128];
  int from, to;
  if (sscanf(spec, "%127[^:]:%d:%d", name, &from, &to) != 3 || from < 0 || to <= from) return 0;
  snprintf(m->name, sizeof m->name, "%s", name);
  m->from = from;
  m->to = to;
  m->runtime = runtime;
  n_marks++;
  return 1;
}

int main(int argc, char **argv) {
  int threads = 1;
  const char *pass = getenv("LUMEN_PASS");
  run_number = pass ? atoi(pass) : 0;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    const char *v = i + 1 < argc ? argv[i + 1] : NULL;
    if (strcmp(a, "-g") == 0 && v) gpu = strcmp(v, "local") == 0 ? local_gpu() : atoi(v), i++;
    else if (strcmp(a, "--procs") == 0 && v) procs = atoi(argv[++i]);
    else if (strcmp(a, "--crash-rank") == 0 && v) crash_rank = atoi(argv[++i]);
    else if (strcmp(a, "--extra-rank") == 0 && v && i + 2 < argc) {
      extra_rank = atoi(argv[++i]);
      extra_count = atoi(argv[++i]);
    }
    else if (strcmp(a, "-t") == 0 && v) threads = atoi(argv[++i]);
    else if ((strcmp(a, "-R") == 0 || strcmp(a, "-S") == 0 || strcmp(a, "-X") == 0) && v) {
      if (!parse_mark(argv[++i], a[1] == 'S' ? 1 : a[1] == 'X' ? 2 : 0)) {
        fprintf(stderr, "simapp: bad mark %s (NAME:FROM:TO)\n", v);
        return 2;
      }
    } else if (strcmp(a, "--vary") == 0 && v) vary = argv[++i];
    else if (strcmp(a, "--crash-run") == 0 && v) crash_run = atoi(argv[++i]);
    else if (strcmp(a, "--crash-after") == 0 && v) crash_after = atoi(argv[++i]);
    else if (strcmp(a, "--fail-run") == 0 && v) fail_run = atoi(argv[++i]);
    else if (strcmp(a, "--hang-run") == 0 && v) hang_run = atoi(argv[++i]);
    else if (strcmp(a, "--pid-file") == 0 && v) pid_file = argv[++i];
    else if (strcmp(a, "--spawn") == 0) spawn = 1;
    else if (a[0] != '-' && n_launches < MAX_LAUNCHES) {
      if (!parse_launch(a, &launches[n_launches])) {
        fprintf(stderr, "simapp: bad launch %s (NAME:COUNT[:GRID[:WORKGROUP[:LDS]]])\n", a);
        return 2;
      }
      n_launches++;
    } else {
      fprintf(stderr, "simapp: unknown argument %s\n", a);
      return 2;
    }
  }
  if (threads < 1 || threads > 64 || n_launches == 0) {
    fprintf(stderr, "usage: simapp [-g GPU] [-t THREADS] NAME:COUNT[:GRID[:WG[:LDS]]] ...\n");
    return 2;
  }
  note_pid((long)getpid());
  if (spawn) {
    fflush(NULL);
    pid_t child = fork();
    if (child == 0) {
      for (;;) pause();
    }
    if (child > 0) note_pid((long)child);
  }
  pid_t children[16];
  int n_children = 0;
  if (procs < 1 || procs > 16) {
    fprintf(stderr, "simapp: --procs takes 1 to 16\n");
    return 2;
  }
  for (int k = 1; k < procs; k++) {
    fflush(NULL);
    pid_t child = fork();
    if (child < 0) return 4;
    if (child == 0) {
      gpu += k;
      n_children = 0;
      break;
    }
    children[n_children++] = child;
  }
  if (extra_rank >= 0 && extra_rank == mpi_rank())
    for (int k = 0; k < n_launches; k++) launches[k].count += extra_count;
  if (simgpu_init() != 0) return 4;
  if (crash_after == 0) crash_after = 1;
  pthread_t tids[64];
  for (int t = 0; t < threads; t++) pthread_create(&tids[t], NULL, worker, NULL);
  for (int t = 0; t < threads; t++) pthread_join(tids[t], NULL);
  simgpu_synchronize();
  printf("simapp: %ld launches on GPU %d\n", total, gpu);
  if (crash_rank >= 0 && crash_rank == mpi_rank()) {
    fflush(NULL);
    usleep(500000);
    fprintf(stderr, "simapp: rank %d crashing as asked\n", crash_rank);
    signal(SIGSEGV, SIG_DFL);
    raise(SIGSEGV);
  }
  int failed = 0;
  for (int k = 0; k < n_children; k++) {
    int status;
    if (waitpid(children[k], &status, 0) < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0) failed = 1;
  }
  if (failed) {
    fprintf(stderr, "simapp: a child process failed\n");
    return 5;
  }
  if (run_number == fail_run) {
    fprintf(stderr, "simapp: failing in run %d as asked\n", run_number);
    return 3;
  }
  return 0;
}
