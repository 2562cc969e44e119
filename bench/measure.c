/*
 * measure.c - run a command R times; print the median and minimum wall
 * time in milliseconds, the largest peak resident set size in MiB (of the
 * command or of any process it waited for) and the least CPU time (user +
 * system, its waited-for processes included) in milliseconds.
 * Usage: measure R COMMAND [ARGS...]   (the command's stdout is discarded)
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static int cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

int main(int argc, char **argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: measure R COMMAND [ARGS...]\n");
    return 2;
  }
  int runs = atoi(argv[1]);
  double wall[64], cpu_ms = -1;
  long peak_kb = 0;
  if (runs < 1 || runs > 64) runs = 5;
  for (int i = 0; i < runs; i++) {
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    pid_t pid = fork();
    if (pid == 0) {
      int null = open("/dev/null", O_WRONLY);
      dup2(null, 1);
      execvp(argv[2], argv + 2);
      _exit(127);
    }
    int status;
    struct rusage ru;
    wait4(pid, &status, 0, &ru);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
      fprintf(stderr, "measure: the command failed\n");
      return 1;
    }
    wall[i] = (double)(t1.tv_sec - t0.tv_sec) * 1e3 + (double)(t1.tv_nsec - t0.tv_nsec) / 1e6;
    if (ru.ru_maxrss > peak_kb) peak_kb = ru.ru_maxrss;
    double cpu = (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1e3 +
                 (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e3;
    if (cpu_ms < 0 || cpu < cpu_ms) cpu_ms = cpu;
  }
  qsort(wall, (size_t)runs, sizeof *wall, cmp);
  printf("%.1f %.1f %.1f %.1f\n", wall[runs / 2], wall[0], (double)peak_kb / 1024.0, cpu_ms);
  return 0;
}
