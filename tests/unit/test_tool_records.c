/*
 * test_tool_records.c - the dispatch lines of the tool library's records
 * file (src/tool/core.c) against printf's text of the same fields: the
 * test runs itself again under LUMEN_TOOL_CONFIG, so that core.c, built
 * into this program, collects as it would inside an application; the
 * child records dispatches whose numbers are at the edges (0, the largest
 * 64-bit counts, negative instances, doubles past 2^53, -0, NaN,
 * infinities, subnormals) and the parent compares the file byte for byte.
 * Then the child's allocations fail in turn (lm_alloc_fail_after, which
 * the tool's allocations go through): the file holds the same lines, or
 * those of the dispatches before the failure and the tool's error.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"
#include "tool/core.h"

static const double values[] = {0.0,
                                -0.0,
                                1.0,
                                -1.0,
                                12345678.0,
                                9007199254740991.0,
                                -9007199254740991.0,
                                9007199254740992.0,
                                18446744073709551616.0,
                                1e300,
                                0.1,
                                2.5,
                                -1e-7,
                                5e-324,
                                1.7976931348623157e308,
                                (double)NAN,
                                (double)INFINITY,
                                -(double)INFINITY};
#define N_VALUES (sizeof values / sizeof *values)

/* Dispatch k of the test: every field at an edge in turn. */
static void dispatch_k(int k, lm_tool_dispatch *d, lm_choice *c, uint64_t *start, uint64_t *end) {
  memset(d, 0, sizeof *d);
  memset(c, 0, sizeof *c);
  d->dispatch_id = k == 2 ? UINT64_MAX : (uint64_t)k + 1;
  d->kernel_id = k == 2 ? UINT64_MAX - 1 : 7;
  d->gpu = k == 1 ? -1 : 2;
  d->tid = k == 2 ? (unsigned long)-1 : 4242;
  d->grid = k == 2 ? UINT64_MAX : 1024;
  d->workgroup = 256;
  d->lds = k == 2 ? UINT32_MAX : 0;
  d->scratch = 16;
  d->arch_vgpr = 128;
  d->accum_vgpr = 0;
  d->sgpr = 96;
  c->set = k == 1 ? -1 : 0;
  c->instance = k == 1 ? -5 : k == 2 ? INT64_MIN : 0;
  c->selected = k == 2 ? INT64_MAX : -1;
  snprintf(c->key, sizeof c->key, "vcopy|%d", k);
  snprintf(c->regions, sizeof c->regions, "%s", k == 0 ? "1,2" : "");
  *start = k == 2 ? UINT64_MAX - 1 : 1000;
  *end = k == 2 ? UINT64_MAX : 2000;
}

/* The child: the test's dispatches recorded, with the allocations from
 * LUMEN_TEST_FAIL_AFTER on failing. Exit 0, or 10 when one failed. */
static int child(void) {
  if (!lm_tool_config_now()) return 3;
  const char *fail_after = getenv("LUMEN_TEST_FAIL_AFTER");
  long n_fail = fail_after ? atol(fail_after) : -1;
  lm_tool_value v[N_VALUES];
  char names[N_VALUES][16];
  for (size_t i = 0; i < N_VALUES; i++) {
    snprintf(names[i], sizeof names[i], "C%zu", i);
    v[i].column = names[i];
    v[i].value = values[i];
  }
  lm_alloc_fail_after(n_fail);
  for (int k = 0; k < 3; k++) {
    lm_tool_dispatch d;
    lm_choice c;
    uint64_t start, end;
    dispatch_k(k, &d, &c, &start, &end);
    lm_tool_dispatch_end(&d, &c, start, end, v, (int)N_VALUES);
  }
  long made = lm_alloc_fail_after(-1);
  lm_tool_finish();
  return n_fail >= 0 && made > n_fail ? 10 : 0;
}

/* Run the child with allocations failing from fail_after (-1: none);
 * its D and V lines into got, its E line into error. Returns its exit
 * status, or -1. */
static int run_child(char **argv, const char *dir, const char *config, long fail_after, char *got, size_t cap,
                     char *error, size_t error_cap) {
  got[0] = error[0] = '\0';
  pid_t pid = fork();
  if (pid == 0) {
    char n[32];
    snprintf(n, sizeof n, "%ld", fail_after);
    setenv("LUMEN_TOOL_CONFIG", config, 1);
    if (fail_after >= 0) setenv("LUMEN_TEST_FAIL_AFTER", n, 1);
    execv("/proc/self/exe", argv);
    _exit(4);
  }
  int status = -1;
  if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status)) return -1;
  char path[600], line[8192];
  snprintf(path, sizeof path, "%s/records.%ld", dir, (long)pid);
  FILE *f = fopen(path, "r");
  if (!f) return -1;
  size_t at = 0;
  while (fgets(line, sizeof line, f)) {
    size_t n = strlen(line);
    if ((line[0] == 'D' || line[0] == 'V') && line[1] == '\t' && at + n < cap) {
      memcpy(got + at, line, n + 1);
      at += n;
    } else if (line[0] == 'E' && line[1] == '\t') {
      size_t e = strlen(line + 2) < error_cap ? strlen(line + 2) : error_cap - 1;
      memcpy(error, line + 2, e);
      error[e] = '\0';
    }
  }
  fclose(f);
  unlink(path);
  return WEXITSTATUS(status);
}

/* The lines printf writes for the child's dispatches. */
static void expected(char *out, size_t cap) {
  size_t at = 0;
  for (int k = 0; k < 3; k++) {
    lm_tool_dispatch d;
    lm_choice c;
    uint64_t start, end;
    dispatch_k(k, &d, &c, &start, &end);
    at += (size_t)snprintf(out + at, cap - at,
                           "D\t%llu\t%llu\t%lld\t%lld\t%d\t%d\t%lu\t%llu\t%llu\t%u\t%u\t%u\t%u\t%u\t%llu\t%llu\t%s\t%s\n",
                           (unsigned long long)d.dispatch_id, (unsigned long long)d.kernel_id,
                           (long long)c.instance, (long long)c.selected, c.set, d.gpu, d.tid,
                           (unsigned long long)d.grid, (unsigned long long)d.workgroup, d.lds, d.scratch,
                           d.arch_vgpr, d.accum_vgpr, d.sgpr, (unsigned long long)start,
                           (unsigned long long)end, c.regions[0] ? c.regions : "-", c.key);
    if (c.set < 0) continue;
    at += (size_t)snprintf(out + at, cap - at, "V\t%llu", (unsigned long long)d.dispatch_id);
    for (size_t i = 0; i < N_VALUES; i++)
      at += (size_t)snprintf(out + at, cap - at, "\tC%zu=%.17g", i, values[i]);
    at += (size_t)snprintf(out + at, cap - at, "\n");
  }
}

int main(int argc, char **argv) {
  (void)argc;
  if (getenv("LUMEN_TOOL_CONFIG")) return child();
  char dir[] = "/tmp/lumen-tool-records-XXXXXX";
  CHECK(mkdtemp(dir) != NULL);
  lm_tool_config cfg;
  memset(&cfg, 0, sizeof cfg);
  snprintf(cfg.arch, sizeof cfg.arch, "gfx90a");
  cfg.n_sets = 1;
  char waves[] = "SQ_WAVES";
  char *counters[] = {waves, NULL};
  char **sets[] = {counters};
  char *accumulate[] = {NULL};
  cfg.set_counters = sets;
  cfg.set_accumulate = accumulate;
  snprintf(cfg.output, sizeof cfg.output, "%s/records", dir);
  snprintf(cfg.telemetry, sizeof cfg.telemetry, "none");
  char config[512];
  snprintf(config, sizeof config, "%s/config", dir);
  lm_diag d;
  CHECK(lm_tool_config_write(&cfg, config, &d) == LM_OK);
  char got[16384], want[16384], error[1024];
  CHECK(run_child(argv, dir, config, -1, got, sizeof got, error, sizeof error) == 0);
  CHECK_STR(error, "");
  expected(want, sizeof want);
  CHECK_STR(got, want);
  /* A few of them spelled out, so that printf itself is pinned too. */
  CHECK(strstr(got, "\tC1=-0\tC2=1\tC3=-1\tC4=12345678\tC5=9007199254740991\tC6=-9007199254740991\t"
                    "C7=9007199254740992\tC8=1.8446744073709552e+19\tC9=1.0000000000000001e+300\t") != NULL);
  CHECK(strstr(got, "\tC13=4.9406564584124654e-324\t") != NULL);
  CHECK(strstr(got, "\tC15=nan\tC16=inf\tC17=-inf\n") != NULL || strstr(got, "\tC15=-nan\tC16=inf\tC17=-inf\n"));
  CHECK(strstr(got, "D\t18446744073709551615\t18446744073709551614\t-9223372036854775808\t9223372036854775807\t0\t2\t"
                    "18446744073709551615\t18446744073709551615\t256\t4294967295\t") != NULL);
  CHECK(strstr(got, "D\t2\t7\t-5\t-1\t-1\t-1\t4242\t") != NULL);
  /* Allocations failing in turn: the same lines, or the whole dispatches
   * before the failure and an error that says so. */
  long n, failed = 0;
  for (n = 0; n < 100; n++) {
    int st = run_child(argv, dir, config, n, got, sizeof got, error, sizeof error);
    CHECK(st == 0 || st == 10);
    if (error[0]) {
      failed++;
      CHECK(strncmp(got, want, strlen(got)) == 0 && (!got[0] || got[strlen(got) - 1] == '\n'));
      CHECK(strstr(error, "out of memory") != NULL);
    } else {
      CHECK_STR(got, want);
    }
    if (st == 0) break;
  }
  CHECK(n < 100 && failed > 0);
  unlink(config);
  rmdir(dir);
  return check_report("test_tool_records");
}
