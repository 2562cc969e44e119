/* test_nvml.c - power and temperature sampling through NVML, without a
 * GPU: a stand-in NVML library (fake_nvml.c) is loaded through
 * LUMEN_NVML_LIBRARY, the path a user names another NVML with. Its
 * readings follow a modelled workload that this test switches on and off
 * around its "dispatches"; the test never knows the values, it checks
 * properties: samples come in time order per GPU, a dispatch's composed
 * power lies within the samples during it (or the two around it when it is
 * shorter than the sampling period), dispatches on a busy GPU draw more
 * than the idle GPU; a library that fails to initialise, lacks a call or
 * is absent gives one line saying so and the workload composes without
 * power; a GPU without a power sensor leaves the power blank, not 0; the
 * samples and columns survive an import into a store and an export. */
#include <dlfcn.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "backend/backend.h"
#include "check.h"
#include "sql/sql.h"
#include "db/db.h"
#include "load/load.h"
#include "collect/collect.h"
#include "store/store.h"

#ifndef FAKE_NVML_DIR
#define FAKE_NVML_DIR "."
#endif

/* ------------------------------------------------------ the samples */

static char *samples;
static size_t n_samples_bytes, cap_samples;

#if defined(__GNUC__)
__attribute__((format(printf, 1, 2)))
#endif
static void sink(const char *fmt, ...) {
  char line[256];
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(line, sizeof line, fmt, ap);
  va_end(ap);
  if (n <= 0) return;
  if (n_samples_bytes + (size_t)n + 1 > cap_samples) {
    size_t grown = (cap_samples + (size_t)n + 1) * 2;
    char *p = realloc(samples, grown);
    if (!p) return;
    samples = p;
    cap_samples = grown;
  }
  memcpy(samples + n_samples_bytes, line, (size_t)n + 1);
  n_samples_bytes += (size_t)n;
}

typedef struct reading {
  int gpu;
  double t, power, temp;
} reading;

/* parse: the C lines the sampler emitted (power and temperature NaN for
 * "-"); -1 on a malformed line. */
static int parse(reading *out, int cap) {
  int n = 0;
  for (const char *p = samples; p && *p && n < cap; n++) {
    int gpu;
    unsigned long long t;
    double sclk, mclk;
    char power[32], temp[32];
    if (sscanf(p, "C\t%d\t%llu\t%lf\t%lf\t%31s\t%31s", &gpu, &t, &sclk, &mclk, power, temp) != 6) return -1;
    out[n] = (reading){gpu, (double)t, strcmp(power, "-") ? atof(power) : LM_NAN,
                       strcmp(temp, "-") ? atof(temp) : LM_NAN};
    p = strchr(p, '\n');
    if (p) p++;
  }
  return n;
}

/* ------------------------------------------------------ the workload */

typedef struct dispatch {
  int gpu;
  unsigned long long start, end;
} dispatch;

static void sleep_us(long us) {
  struct timespec ts = {0, us * 1000};
  nanosleep(&ts, NULL);
}

static char *scratch_dir(void) {
  static char dir[64];
  snprintf(dir, sizeof dir, "/tmp/lumen-nvml-XXXXXX");
  return mkdtemp(dir);
}

static void remove_dir(const char *dir) {
  char cmd[300];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  CHECK(system(cmd) == 0);
}

/* Sample t every millisecond for `ms` milliseconds. */
static void sample_for(lm_telemetry *t, int ms) {
  for (int i = 0; i < ms; i++) {
    lm_telemetry_sample(t, sink);
    sleep_us(1000);
  }
}

/* run_workload: dispatches on GPU 0 (long ones spanning several samples,
 * short ones between two samples), sampled as the tool library samples;
 * returns how many dispatches ran. */
static int run_workload(lm_telemetry *t, void (*busy)(unsigned int, int), dispatch *d, int cap) {
  int n = 0;
  sample_for(t, 5);
  for (int k = 0; k < cap; k++) {
    d[n].gpu = 0;
    busy(0, 1);
    d[n].start = lm_clock_ns();
    if (k % 2 == 0) {
      sample_for(t, 6);
    } else {
      unsigned long long until = d[n].start + 150000; /* 0.15 ms: no sample inside */
      while (lm_clock_ns() < until) {
      }
    }
    d[n].end = lm_clock_ns();
    busy(0, 0);
    n++;
    sample_for(t, 4);
  }
  return n;
}

/* compose: a records file with the dispatches, their durations and the
 * sampler's lines, ingested and composed; the workload read back. */
static lm_workload *compose(const char *dir, const dispatch *d, int n, const char *telemetry_line) {
  char path[512], records[512];
  snprintf(path, sizeof path, "%s/lumen.db", dir);
  snprintf(records, sizeof records, "%s/run_1.records", dir);
  char file[600];
  snprintf(file, sizeof file, "%s.4242", records);
  FILE *f = fopen(file, "w");
  if (!f) return NULL;
  fprintf(f, "lumen-records 1\nP\t4242\tnode7\t-1\t-1\t-1\t-\nA\tsm_90\n");
  fprintf(f, "S\tgpu_model\tNVIDIA H100 80GB HBM3\nS\tgpu_arch\tsm_90\nS\tcu_per_gpu\t132\nS\tmax_sclk\t1980\n");
  fprintf(f, "S\twave_size\t32\n%sK\t1\tstep(float*)\n", telemetry_line);
  for (int i = 0; i < n; i++) {
    fprintf(f, "D\t%d\t1\t%d\t%d\t0\t%d\t1\t65536\t256\t0\t0\t32\t0\t0\t%llu\t%llu\t-\tstep(float*)\n", i, i, i,
            d[i].gpu, d[i].start, d[i].end);
    fprintf(f, "V\t%d\tgpu__time_duration.sum=%llu\n", i, d[i].end - d[i].start);
  }
  fprintf(f, "%sEND\n", samples ? samples : "");
  if (fclose(f) != 0) return NULL;
  lm_sql *db = NULL;
  lm_diag diag;
  int64_t wid = 0;
  lm_workload *info = NULL, *w = NULL;
  CHECK(lm_db_open(path, LM_DB_CREATE, &db, &diag) == LM_OK);
  CHECK(lm_db_create_workload(db, "nv", NULL, "lumen", "cupti: test", "sm_90", "", 0, 0, &wid, &diag) == LM_OK);
  lm_run_spec spec;
  memset(&spec, 0, sizeof spec);
  spec.id = 1;
  spec.mode = LM_REPLAY_APP;
  spec.n_sets = 1;
  lm_run_outcome how = {0, 0, 0, 0};
  long n_dispatches = 0;
  int tool_ok = 0;
  char why[512];
  CHECK(lm_collect_run_begin(db, wid, &spec, &diag) == LM_OK);
  CHECK(lm_collect_run_end(db, wid, &spec, records, "ok", &how, &n_dispatches, &tool_ok, why, sizeof why, &diag) ==
        LM_OK);
  CHECK(n_dispatches == n);
  CHECK(lm_collect_device_sysinfo(db, wid, &info, &diag) == LM_OK);
  static char counter[] = "gpu__time_duration.sum";
  char *counters[] = {counter, NULL};
  lm_set_info set = {counters, NULL};
  lm_profile_summary summary;
  memset(&summary, 0, sizeof summary);
  char arg0[] = "step";
  char *argv[] = {arg0, NULL};
  if (info) {
    lm_status st = lm_collect_compose(db, wid, &set, 1, "SQ_ACCUM_PREV_HIRES", NULL, &info->sysinfo, NULL, "nv", argv, 1,
                                      NULL, &summary, &diag);
    if (st != LM_OK) fprintf(stderr, "compose: %s\n", diag.message);
    CHECK(st == LM_OK);
    CHECK(summary.dispatches == (size_t)n);
  }
  lm_workload_free(info);
  lm_db_close(db);
  if (lm_workload_read(dir, &w, &diag) != LM_OK) {
    fprintf(stderr, "read: %s\n", diag.message);
    return NULL;
  }
  return w;
}

static double column(const lm_workload *w, const char *name, size_t row) {
  long c = lm_table_find(w->pmc, name);
  return c < 0 ? LM_NAN : w->pmc->cols[c].values[row];
}

/* -------------------------------------------------------------- tests */

static void *open_fake(const char *variant, lm_telemetry **t, char *why, size_t cap) {
  char path[512];
  snprintf(path, sizeof path, "%s/lib%s.so", FAKE_NVML_DIR, variant);
  setenv("LUMEN_NVML_LIBRARY", path, 1);
  *t = lm_telemetry_open_nvml(why, cap);
  return dlopen(path, RTLD_NOW | RTLD_LOCAL);
}

/* The ways NVML may be unusable: one line each, and no sampler. */
static void test_unusable(void) {
  char why[256];
  lm_telemetry *t = NULL;
  setenv("LUMEN_NVML_LIBRARY", "/no/such/libnvidia-ml.so.1", 1);
  CHECK(lm_telemetry_open_nvml(why, sizeof why) == NULL);
  CHECK(strstr(why, "/no/such/libnvidia-ml.so.1") != NULL && !strchr(why, '\n'));
  void *h = open_fake("fake_nvml_noinit", &t, why, sizeof why);
  CHECK(h && t == NULL && strstr(why, "nvmlInit failed") && !strchr(why, '\n'));
  if (h) dlclose(h);
  h = open_fake("fake_nvml_noclock", &t, why, sizeof why);
  CHECK(h && t == NULL && strstr(why, "nvmlDeviceGetClockInfo") && !strchr(why, '\n'));
  if (h) dlclose(h);
  /* lumen list backends says the same. */
  lm_backend_status b[8];
  size_t n = lm_backends_probe(b, 8);
  CHECK(n == 5 && strcmp(b[4].name, "nvml") == 0 && !b[4].usable && strstr(b[4].why, "nvmlDeviceGetClockInfo"));
  unsetenv("LUMEN_NVML_LIBRARY");
}

/* A sampler that never opened: the workload composes, without power. */
static void test_without_power(void) {
  char *dir = scratch_dir();
  if (!dir) return;
  dispatch d[3];
  unsigned long long t0 = lm_clock_ns();
  for (int i = 0; i < 3; i++) d[i] = (dispatch){0, t0 + (unsigned long long)i * 1000000, t0 + i * 1000000ULL + 500000};
  free(samples);
  samples = NULL;
  n_samples_bytes = cap_samples = 0;
  lm_workload *w = compose(dir, d, 3, "T\tnone\tnvmlInit failed (status 9): no NVIDIA GPU or driver\n");
  CHECK(w != NULL);
  if (w) {
    CHECK(w->pmc->n_rows == 3);
    CHECK(lm_table_find(w->pmc, "Measured_Power_W") < 0 && lm_table_find(w->pmc, "Measured_Temp_C") < 0);
    CHECK(lm_table_find(w->pmc, "gpu__time_duration.sum") >= 0);
  }
  lm_workload_free(w);
  remove_dir(dir);
}

static void test_power(const char *variant, int has_power) {
  char why[256] = "";
  lm_telemetry *t = NULL;
  void *h = open_fake(variant, &t, why, sizeof why);
  CHECK(h != NULL && t != NULL);
  if (!h || !t) {
    fprintf(stderr, "%s: %s %s\n", variant, why, dlerror());
    lm_telemetry_close(t);
    return;
  }
  void (*busy)(unsigned int, int) = NULL;
  void *sym = dlsym(h, "fake_nvml_busy");
  memcpy(&busy, &sym, sizeof sym);
  CHECK(busy != NULL);
  if (!busy) return;
  free(samples);
  samples = NULL;
  n_samples_bytes = cap_samples = 0;
  dispatch d[10];
  int n = run_workload(t, busy, d, 10);
  lm_telemetry_close(t);
  dlclose(h);
  unsetenv("LUMEN_NVML_LIBRARY");

  static reading r[4096];
  int n_r = parse(r, 4096);
  CHECK(n_r > 50);
  /* Time order per GPU, both GPUs sampled, power blank exactly when the
   * sensor is missing, temperature always there. */
  double last[2] = {0, 0};
  int per_gpu[2] = {0, 0}, ordered = 1, blank_ok = 1;
  for (int i = 0; i < n_r; i++) {
    if (r[i].gpu < 0 || r[i].gpu > 1) continue;
    ordered &= r[i].t > last[r[i].gpu];
    last[r[i].gpu] = r[i].t;
    per_gpu[r[i].gpu]++;
    blank_ok &= has_power ? !isnan(r[i].power) && r[i].power > 0 : isnan(r[i].power);
    blank_ok &= !isnan(r[i].temp);
  }
  CHECK(ordered && blank_ok);
  CHECK(per_gpu[0] > 25 && per_gpu[1] == per_gpu[0]);

  char *dir = scratch_dir();
  if (!dir) return;
  lm_workload *w = compose(dir, d, n, "T\tnvml\tsampled every millisecond from a background thread\n");
  CHECK(w != NULL);
  if (!w) {
    remove_dir(dir);
    return;
  }
  CHECK(w->pmc->n_rows == (size_t)n);
  CHECK((lm_table_find(w->pmc, "Measured_Power_W") >= 0) == has_power);
  CHECK(lm_table_find(w->pmc, "Measured_Temp_C") >= 0);
  /* Each dispatch against the samples of its GPU: those inside it, else
   * the last before and the first after. Rows are in launch order. */
  double idle_sum = 0;
  int idle_n = 0;
  for (int i = 0; i < n_r; i++)
    if (r[i].gpu == 1 && !isnan(r[i].power)) {
      idle_sum += r[i].power;
      idle_n++;
    }
  int within = 1, n_short = 0, n_long = 0, hotter = 1;
  for (int i = 0; i < n; i++) {
    double lo[2] = {LM_INF, LM_INF}, hi[2] = {-LM_INF, -LM_INF};
    int inside = 0, before = -1, after = -1;
    for (int k = 0; k < n_r; k++) {
      if (r[k].gpu != d[i].gpu) continue;
      if (r[k].t >= (double)d[i].start && r[k].t <= (double)d[i].end) inside++;
      if (r[k].t < (double)d[i].start) before = k;
      if (r[k].t > (double)d[i].end && after < 0) after = k;
    }
    for (int k = 0; k < n_r; k++) {
      if (r[k].gpu != d[i].gpu) continue;
      int counts = inside ? r[k].t >= (double)d[i].start && r[k].t <= (double)d[i].end : k == before || k == after;
      if (!counts) continue;
      double v[2] = {r[k].power, r[k].temp};
      for (int j = 0; j < 2; j++) {
        if (v[j] < lo[j]) lo[j] = v[j];
        if (v[j] > hi[j]) hi[j] = v[j];
      }
    }
    if (inside) n_long++;
    else n_short++;
    double got[2] = {column(w, "Measured_Power_W", (size_t)i), column(w, "Measured_Temp_C", (size_t)i)};
    for (int j = 0; j < 2; j++) {
      if (j == 0 && !has_power) {
        within &= isnan(got[0]);
        continue;
      }
      int ok = !isnan(got[j]) && got[j] >= lo[j] - 1e-6 && got[j] <= hi[j] + 1e-6;
      if (!ok)
        fprintf(stderr, "dispatch %d: %s %.3f outside [%.3f, %.3f]\n", i, j ? "temp" : "power", got[j], lo[j],
                hi[j]);
      within &= ok;
    }
    /* A long dispatch keeps GPU 0 busy for milliseconds: it draws more
     * than the idle GPU 1 did on average. */
    if (has_power && inside && idle_n) hotter &= got[0] > idle_sum / idle_n;
  }
  CHECK(within && hotter);
  CHECK(n_long >= 4 && n_short >= 4);
  /* Through a store and back: the samples and the per-dispatch columns. */
  char store_url[512], out_dir[512];
  snprintf(store_url, sizeof store_url, "%s/store.db", dir);
  snprintf(out_dir, sizeof out_dir, "%s/back", dir);
  lm_store *store = NULL;
  lm_import_result res;
  lm_diag diag;
  lm_workload *back = NULL;
  CHECK(lm_store_open(store_url, 1, &store, &diag) == LM_OK);
  if (store) {
    CHECK(lm_store_import(store, dir, "nv", NULL, &res, &diag) == LM_OK);
    CHECK(lm_store_export(store, "nv", out_dir, &diag) == LM_OK);
    lm_store_close(store);
    CHECK(lm_workload_read(out_dir, &back, &diag) == LM_OK);
  }
  if (back) {
    for (int i = 0; i < n; i++)
      for (int j = 0; j < 2; j++) {
        const char *name = j ? "Measured_Temp_C" : "Measured_Power_W";
        double a = column(w, name, (size_t)i), b = column(back, name, (size_t)i);
        CHECK((isnan(a) && isnan(b)) || a == b);
      }
    char db_path[600];
    snprintf(db_path, sizeof db_path, "%s/lumen.db", out_dir);
    lm_sql *db = NULL;
    CHECK(lm_db_open(db_path, LM_DB_READ, &db, &diag) == LM_OK);
    lm_stmt *q = NULL;
    int n_power = -1;
    if (db && lm_sql_prepare(db, "SELECT COUNT(*) FROM power_sample", &q, &diag) == LM_OK && lm_stmt_step(q) == 1)
      n_power = (int)lm_stmt_int64(q, 0);
    lm_stmt_free(q);
    lm_db_close(db);
    CHECK(n_power == n_r); /* every reading has a temperature */
  }
  lm_workload_free(back);
  lm_workload_free(w);
  remove_dir(dir);
}

int main(void) {
  test_unusable();
  test_without_power();
  test_power("fake_nvml", 1);
  test_power("fake_nvml_nopower", 0);
  free(samples);
  return check_report("test_nvml");
}
