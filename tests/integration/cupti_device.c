/*
 * cupti_device.c - the `device` tests of the CUPTI backend: the CUDA test
 * applications run with liblumen_tool injected (CUDA_INJECTION64_PATH),
 * and what it records is checked against physics, not against itself.
 * Without an NVIDIA GPU it exits 77 (skipped) and says why.
 *
 *   cupti_device TOOL APPS_DIR CASE     CASE: vcopy | fma | replay | multi
 *
 * vcopy:  DRAM bytes of each launch = 2 * N * 4 within 5%; bandwidth between
 *         half of the DRAM peak and the peak.
 * fma:    2 * FFMA instructions = the FLOPs the code performs, exactly.
 * replay: one set with every metric (kernel replay), two sets in two runs
 *         (application replay) and two sets cycled over instances in one
 *         run agree on DRAM bytes and FFMA counts within 2%.
 * multi:  NVTX ranges become regions; -k selects kernels (the others run
 *         unprofiled: no values); repeated kernels count instances.
 *
 * The cases below go through `lumen profile --backend cupti` (the 4th
 * argument is the lumen binary) and read the composed workload back; each
 * also runs `lumen analyze` on it (text and JSON must succeed):
 *
 * profile_vcopy: application replay, the full metric set; every row's DRAM
 *         bytes = 2 * N * 4 within 5 %, bandwidth within (peak/2, peak].
 * profile_fma: kernel replay; 2 * FFMA = the FLOPs the code performs.
 * profile_modes: vcopy in kernel replay, application replay and instance
 *         cycling; the mean DRAM bytes per row of the three agree within 2 %.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "backend/cupti_host.h"
#include "load/load.h"
#include "profile/profile.h"

#define VCOPY_N 67108864.0 /* floats per buffer (the app's default) */
#define FMA_FFMA (1024.0 * 256 * 4 * 4096)

typedef struct rec {
  char kernel[256];
  long long instance;
  int set;
  char regions[128];
  double dram_read, dram_write, dram_peak, dram_hz, ffma, duration;
  int has_values;
} rec;

static rec recs[256];
static int n_recs;
static char kernels[64][256];
static char region_names[16][128];
static int failures;

#define EXPECT(cond, ...)                                                                          \
  do {                                                                                             \
    if (!(cond)) {                                                                                 \
      failures++;                                                                                  \
      fprintf(stderr, "FAIL: " __VA_ARGS__);                                                       \
      fputc('\n', stderr);                                                                         \
    }                                                                                              \
  } while (0)

/* Run app (argv) with the tool, sets[] as the plan, mode/pass; read the
 * records into recs (appending). */
static int run(const char *tool, char *const *argv, char ***sets, int n_sets, int mode, int pass,
               char **kernel_filter) {
  lm_tool_config cfg;
  memset(&cfg, 0, sizeof cfg);
  snprintf(cfg.arch, sizeof cfg.arch, "%s", getenv("LUMEN_DEVICE_ARCH"));
  cfg.mode = mode;
  cfg.pass = pass;
  cfg.n_sets = n_sets;
  cfg.set_counters = sets;
  char *accumulate[4] = {NULL, NULL, NULL, NULL};
  cfg.set_accumulate = accumulate;
  cfg.kernels = kernel_filter;
  cfg.n_kernels = kernel_filter ? 1 : 0;
  char dir[] = "/tmp/lumen-cupti-XXXXXX";
  if (!mkdtemp(dir)) return -1;
  snprintf(cfg.output, sizeof cfg.output, "%s/records", dir);
  snprintf(cfg.telemetry, sizeof cfg.telemetry, "auto");
  char config[4200];
  snprintf(config, sizeof config, "%s/config", dir);
  lm_diag d;
  if (lm_tool_config_write(&cfg, config, &d) != LM_OK) {
    fprintf(stderr, "config: %s\n", d.message);
    return -1;
  }
  pid_t pid = fork();
  if (pid == 0) {
    setenv("LUMEN_TOOL_CONFIG", config, 1);
    setenv("CUDA_INJECTION64_PATH", tool, 1);
    setenv("NVTX_INJECTION64_PATH", LUMEN_CUPTI_LIB, 1);
    execv(argv[0], argv);
    _exit(127);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  FILE *f = fopen(cfg.output, "r");
  char line[8192];
  int ended = 0;
  while (f && fgets(line, sizeof line, f)) {
    line[strcspn(line, "\n")] = '\0';
    char *field[24];
    int nf = 0;
    for (char *p = line; p && nf < 24; nf++) {
      field[nf] = p;
      p = strchr(p, '\t');
      if (p) *p++ = '\0';
    }
    if (!strcmp(field[0], "E")) fprintf(stderr, "tool error: %s\n", field[1]);
    if (!strcmp(field[0], "END")) ended = 1;
    if (!strcmp(field[0], "K") && nf >= 3 && atoi(field[1]) < 64)
      snprintf(kernels[atoi(field[1])], sizeof kernels[0], "%s", field[2]);
    if (!strcmp(field[0], "G") && nf >= 3 && atoi(field[1]) < 16)
      snprintf(region_names[atoi(field[1])], sizeof region_names[0], "%s", field[2]);
    if (!strcmp(field[0], "D") && nf >= 19 && n_recs < 256) {
      rec *r = &recs[n_recs++];
      memset(r, 0, sizeof *r);
      int k = atoi(field[2]);
      snprintf(r->kernel, sizeof r->kernel, "%s", k < 64 ? kernels[k] : "?");
      r->instance = atoll(field[3]);
      r->set = atoi(field[5]);
      snprintf(r->regions, sizeof r->regions, "%s", field[17]);
    }
    if (!strcmp(field[0], "V") && n_recs > 0) {
      rec *r = &recs[n_recs - 1];
      r->has_values = 1;
      for (int i = 2; i < nf; i++) {
        char *eq = strrchr(field[i], '=');
        if (!eq) continue;
        *eq = '\0';
        double v = strtod(eq + 1, NULL);
        if (!strcmp(field[i], "dram__bytes_read.sum")) r->dram_read = v;
        if (!strcmp(field[i], "dram__bytes_write.sum")) r->dram_write = v;
        if (!strcmp(field[i], "dram__bytes.sum.peak_sustained")) r->dram_peak = v;
        if (!strcmp(field[i], "dram__cycles_elapsed.avg.per_second")) r->dram_hz = v;
        if (!strcmp(field[i], "smsp__sass_thread_inst_executed_op_ffma_pred_on.sum")) r->ffma = v;
        if (!strcmp(field[i], "gpu__time_duration.sum")) r->duration = v;
      }
    }
  }
  if (f) fclose(f);
  EXPECT(WIFEXITED(status) && WEXITSTATUS(status) == 0, "%s exited with %d", argv[0], status);
  EXPECT(ended, "%s: the records have no END", argv[0]);
  return 0;
}

static char m_read[] = "dram__bytes_read.sum", m_write[] = "dram__bytes_write.sum",
            m_peak[] = "dram__bytes.sum.peak_sustained",
            m_hz[] = "dram__cycles_elapsed.avg.per_second",
            m_ffma[] = "smsp__sass_thread_inst_executed_op_ffma_pred_on.sum",
            m_time[] = "gpu__time_duration.sum";

static double near(double a, double b) { return fabs(a - b) / (b != 0 ? fabs(b) : 1); }

/* lumen PROFILE ARGS... -- APP ARGS: run it; 0 when it exited 0. */
static int run_lumen(char *const *argv) {
  pid_t pid = fork();
  if (pid == 0) {
    execv(argv[0], argv);
    _exit(127);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128;
}

/* Profile app through `lumen profile --backend cupti --replay MODE` into a
 * fresh folder, analyze it, and load it. NULL (a failure counted) when
 * any step fails. */
static lm_workload *profile(const char *lumen, const char *mode, char *const *app, char *dir, size_t cap) {
  char tmpl[] = "/tmp/lumen-cupti-wl-XXXXXX";
  if (!mkdtemp(tmpl)) return NULL;
  snprintf(dir, cap, "%s/wl", tmpl);
  char *argv[32];
  int n = 0;
  argv[n++] = (char *)lumen;
  argv[n++] = (char *)"profile";
  argv[n++] = (char *)"--backend";
  argv[n++] = (char *)"cupti";
  argv[n++] = (char *)"--replay";
  argv[n++] = (char *)mode;
  argv[n++] = (char *)"-n";
  argv[n++] = (char *)"dev";
  argv[n++] = (char *)"-w";
  argv[n++] = dir;
  argv[n++] = (char *)"--";
  for (int i = 0; app[i] && n < 30; i++) argv[n++] = app[i];
  argv[n] = NULL;
  int rc = run_lumen(argv);
  EXPECT(rc == 0, "lumen profile --replay %s %s: exit %d", mode, app[0], rc);
  if (rc != 0) return NULL;
  char *text[] = {(char *)lumen, (char *)"analyze", (char *)"-w", dir, NULL};
  char *json[] = {(char *)lumen, (char *)"analyze", (char *)"-w", dir, (char *)"--format", (char *)"json",
                  (char *)"-o", (char *)"/dev/null", NULL};
  EXPECT(run_lumen(text) == 0, "lumen analyze -w %s failed", dir);
  EXPECT(run_lumen(json) == 0, "lumen analyze --format json -w %s failed", dir);
  lm_workload *w = NULL;
  lm_diag d;
  if (lm_workload_read(dir, &w, &d) != LM_OK) {
    EXPECT(0, "reading %s: %s", dir, d.message);
    return NULL;
  }
  EXPECT(w->arch && !strcmp(w->arch, getenv("LUMEN_DEVICE_ARCH")), "workload arch %s", w->arch ? w->arch : "?");
  EXPECT(w->pmc && w->pmc->n_rows > 0, "%s: no dispatch rows", dir);
  return w;
}

/* Column name of the workload's pmc table, row r (NaN when absent). */
static double cell(const lm_workload *w, const char *name, size_t r) {
  long c = lm_table_find(w->pmc, name);
  return c >= 0 && r < w->pmc->n_rows ? w->pmc->cols[c].values[r] : (double)NAN;
}

static double mean_dram_bytes(const lm_workload *w) {
  double sum = 0;
  for (size_t r = 0; r < w->pmc->n_rows; r++)
    sum += cell(w, m_read, r) + cell(w, m_write, r);
  return sum / (double)w->pmc->n_rows;
}

int main(int argc, char **argv) {
  if (argc != 4 && argc != 5) return 2;
  char why[256];
  int gpus = lm_cuda_driver_probe(why, sizeof why);
  if (gpus <= 0) {
    printf("SKIP: no NVIDIA GPU: %s\n", why);
    return 77;
  }
  if (!getenv("LUMEN_DEVICE_ARCH")) {
    printf("SKIP: LUMEN_DEVICE_ARCH (sm_80, sm_90, sm_100) not set\n");
    return 77;
  }
  const char *tool = argv[1], *apps = argv[2], *which = argv[3];
  char vcopy[4096], fma[4096], multi[4096];
  snprintf(vcopy, sizeof vcopy, "%s/cuda_vcopy", apps);
  snprintf(fma, sizeof fma, "%s/cuda_fma", apps);
  snprintf(multi, sizeof multi, "%s/cuda_multi", apps);
  char *vcopy_argv[] = {vcopy, NULL}, *fma_argv[] = {fma, NULL}, *multi_argv[] = {multi, NULL};
  char *all[] = {m_read, m_write, m_peak, m_hz, m_ffma, m_time, NULL};
  char *mem[] = {m_read, m_write, m_peak, m_hz, m_time, NULL}, *ffma[] = {m_ffma, m_time, NULL};
  char **one[] = {all}, **two[] = {mem, ffma};
  if (!strcmp(which, "vcopy")) {
    run(tool, vcopy_argv, one, 1, LM_REPLAY_APP, 0, NULL);
    EXPECT(n_recs == 2, "vcopy: %d records, 2 launches", n_recs);
    for (int i = 0; i < n_recs; i++) {
      rec *r = &recs[i];
      double bytes = r->dram_read + r->dram_write, want = 2 * VCOPY_N * 4;
      double bw = bytes / (r->duration * 1e-9), peak = r->dram_peak * r->dram_hz;
      printf("vcopy %d: %.0f DRAM bytes (expected %.0f), %.1f GB/s of %.1f GB/s peak\n", i, bytes,
             want, bw / 1e9, peak / 1e9);
      EXPECT(r->has_values && near(bytes, want) < 0.05, "vcopy DRAM bytes %.0f, expected %.0f",
             bytes, want);
      EXPECT(bw > 0.5 * peak && bw <= peak, "vcopy bandwidth %.3g outside (peak/2, peak] = %.3g",
             bw, peak);
    }
  } else if (!strcmp(which, "fma")) {
    run(tool, fma_argv, one, 1, LM_REPLAY_APP, 0, NULL);
    EXPECT(n_recs == 1 && recs[0].has_values, "fma: %d records", n_recs);
    printf("fma: %.0f FLOPs (expected %.0f)\n", 2 * recs[0].ffma, 2 * FMA_FFMA);
    EXPECT(recs[0].ffma == FMA_FFMA, "fma FFMA %.0f, expected %.0f", recs[0].ffma, FMA_FFMA);
  } else if (!strcmp(which, "replay")) {
    run(tool, vcopy_argv, one, 1, LM_REPLAY_APP, 0, NULL); /* kernel replay: one set */
    int kernel_at = n_recs;
    run(tool, vcopy_argv, two, 2, LM_REPLAY_APP, 0, NULL); /* application replay: run per set */
    run(tool, vcopy_argv, two, 2, LM_REPLAY_APP, 1, NULL);
    int app_at = n_recs;
    char *cyc_argv[] = {vcopy, (char *)"67108864", (char *)"4", NULL};
    run(tool, cyc_argv, two, 2, LM_REPLAY_INSTANCE, 0, NULL); /* instance cycling */
    EXPECT(n_recs == app_at + 4, "replay: %d records", n_recs);
    double kbytes = recs[0].dram_read + recs[0].dram_write;
    double abytes = recs[kernel_at].dram_read + recs[kernel_at].dram_write;
    double cbytes = 0;
    for (int i = app_at; i < n_recs; i++)
      if (recs[i].set == 0) cbytes = recs[i].dram_read + recs[i].dram_write;
    printf("replay: DRAM bytes kernel %.0f, app %.0f, instance %.0f\n", kbytes, abytes, cbytes);
    EXPECT(near(abytes, kbytes) < 0.02 && near(cbytes, kbytes) < 0.02,
           "replay modes disagree by more than 2%% on DRAM bytes");
    int sets_seen[2] = {0, 0};
    for (int i = app_at; i < n_recs; i++)
      if (recs[i].set >= 0 && recs[i].set < 2) sets_seen[recs[i].set]++;
    EXPECT(sets_seen[0] == 2 && sets_seen[1] == 2, "instance cycling: sets %d/%d of 4 instances",
           sets_seen[0], sets_seen[1]);
  } else if (!strcmp(which, "multi")) {
    char *filter[] = {(char *)"scale", NULL};
    run(tool, multi_argv, one, 1, LM_REPLAY_APP, 0, filter);
    int scale = 0, others = 0, in_solve = 0;
    for (int i = 0; i < n_recs; i++) {
      int is_scale = strstr(recs[i].kernel, "scale") != NULL;
      scale += is_scale && recs[i].has_values;
      others += !is_scale && recs[i].has_values;
      int id = atoi(recs[i].regions);
      if (is_scale && id > 0 && id < 16 && !strcmp(region_names[id], "solve")) in_solve++;
      EXPECT(strchr(recs[i].kernel, '(') != NULL, "kernel name not demangled: %s", recs[i].kernel);
    }
    printf("multi: %d records, scale profiled %d times, %d in region solve\n", n_recs, scale,
           in_solve);
    EXPECT(n_recs == 8, "multi: %d launches recorded, expected 8", n_recs);
    EXPECT(scale == 3 && others == 0, "-k scale: %d scale and %d other launches profiled", scale,
           others);
    EXPECT(in_solve == 3, "NVTX: %d scale launches in region solve, expected 3", in_solve);
  } else if (!strncmp(which, "profile_", 8) && argc == 5) {
    const char *lumen = argv[4];
    char dir[4096];
    if (!strcmp(which, "profile_vcopy")) {
      lm_workload *w = profile(lumen, "app", vcopy_argv, dir, sizeof dir);
      for (size_t r = 0; w && r < w->pmc->n_rows; r++) {
        double bytes = cell(w, m_read, r) + cell(w, m_write, r), want = 2 * VCOPY_N * 4;
        double bw = bytes / (cell(w, m_time, r) * 1e-9), peak = cell(w, m_peak, r) * cell(w, m_hz, r);
        printf("profile vcopy row %zu: %.0f DRAM bytes (expected %.0f), %.1f of %.1f GB/s\n", r, bytes, want,
               bw / 1e9, peak / 1e9);
        EXPECT(near(bytes, want) < 0.05, "row %zu: DRAM bytes %.0f, expected %.0f", r, bytes, want);
        EXPECT(bw > 0.5 * peak && bw <= peak, "row %zu: bandwidth %.3g outside (peak/2, peak] = %.3g", r, bw, peak);
      }
      EXPECT(w && w->pmc->n_rows == 2, "vcopy: %zu rows, 2 launches", w ? w->pmc->n_rows : 0);
      lm_workload_free(w);
    } else if (!strcmp(which, "profile_fma")) {
      lm_workload *w = profile(lumen, "kernel", fma_argv, dir, sizeof dir);
      double got = w ? cell(w, m_ffma, 0) : (double)NAN;
      printf("profile fma: %.0f FLOPs (expected %.0f)\n", 2 * got, 2 * FMA_FFMA);
      EXPECT(got == FMA_FFMA, "fma FFMA %.0f, expected %.0f", got, FMA_FFMA);
      lm_workload_free(w);
    } else if (!strcmp(which, "profile_modes")) {
      char *many[] = {vcopy, (char *)"16777216", (char *)"64", NULL};
      lm_workload *k = profile(lumen, "kernel", many, dir, sizeof dir);
      lm_workload *a = profile(lumen, "app", many, dir, sizeof dir);
      lm_workload *c = profile(lumen, "instance", many, dir, sizeof dir);
      double kb = k ? mean_dram_bytes(k) : (double)NAN, ab = a ? mean_dram_bytes(a) : (double)NAN;
      double cb = c ? mean_dram_bytes(c) : (double)NAN;
      printf("profile modes: DRAM bytes per row: kernel %.0f, app %.0f, instance %.0f (expected %.0f)\n", kb, ab,
             cb, 2 * 16777216.0 * 4);
      EXPECT(near(ab, kb) < 0.02 && near(cb, kb) < 0.02, "replay modes disagree by more than 2%% on DRAM bytes");
      EXPECT(near(kb, 2 * 16777216.0 * 4) < 0.05, "kernel replay: DRAM bytes %.0f", kb);
      lm_workload_free(k);
      lm_workload_free(a);
      lm_workload_free(c);
    } else {
      return 2;
    }
  } else {
    return 2;
  }
  printf("%s: %s\n", which, failures ? "FAILED" : "passed");
  return failures ? 1 : 0;
}
