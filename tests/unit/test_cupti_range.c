/* test_cupti_range.c - the GPU-free half of the CUPTI backend
 * (backend/cupti_range.h).
 *
 * Decoding: CUPTI can evaluate a counter-data image on the host, but only
 * a GPU session can fill one, so the matching of ranges to launches and
 * the hand-over of values are tested through a counter-data source fed by
 * this file. The source models what CUPTI's auto-range image gives: ranges
 * named by their launch's number, possibly fewer than the launches
 * (dropped ranges), values per metric with NaN where there is none. The
 * expected values are computed here from the launch number, so a decoder
 * that hands a launch another launch's range fails. The real image source
 * is only built and refused here: libnvperf_host crashes on an image CUPTI
 * did not fill, so it cannot be fed test data.
 *
 * Config images: built through CUPTI's Host API for GH100 (skipped without
 * CUDA); their pass counts must equal what lm_cupti_host_passes gives each
 * set alone, and a set with an unknown metric must fail naming the set. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "backend/cupti_range.h"
#include "check.h"
#include "metrics/metrics.h"

/* ----------------------------------------------------- test data source */

typedef struct fake {
  size_t n;
  const char *names[8];
  int fail_eval;
} fake;

static lm_status fake_ranges(void *ctx, size_t *n, lm_diag *diag) {
  (void)diag;
  *n = ((fake *)ctx)->n;
  return LM_OK;
}

static lm_status fake_name(void *ctx, size_t r, const char **name, lm_diag *diag) {
  (void)diag;
  *name = ((fake *)ctx)->names[r];
  return LM_OK;
}

/* The value of metric m in range r: 1000 * (the number in its name) + m,
 * and NaN for a metric named "none". Non-numeric names: 1000 * position. */
static double expected(const char *range_name, size_t position, size_t m) {
  char *end = NULL;
  long k = strtol(range_name, &end, 10);
  if (!end || *end) k = (long)position;
  return 1000.0 * (double)k + (double)m;
}

static lm_status fake_eval(void *ctx, size_t r, const char *const *metrics, size_t n,
                           double *values, lm_diag *diag) {
  fake *f = ctx;
  if (f->fail_eval) return lm_fail(diag, LM_EIO, NULL, "made-up failure");
  for (size_t m = 0; m < n; m++)
    values[m] = strcmp(metrics[m], "none") == 0 ? (double)NAN : expected(f->names[r], r, m);
  return LM_OK;
}

typedef struct got {
  size_t calls;
  int has[8];
  double v[8][3];
} got;

static void take(void *user, size_t launch, const double *values) {
  got *g = user;
  g->calls++;
  if (launch >= 8) return;
  g->has[launch] = values != NULL;
  for (size_t m = 0; values && m < 3; m++) g->v[launch][m] = values[m];
}

static const char *const metrics[] = {"dram__bytes.sum", "none", "gpu__time_duration.sum"};

static void decode_tests(void) {
  lm_diag d;
  size_t dropped = 99;
  /* Three launches, numbered from 0, delivered out of order. */
  fake f = {3, {"2", "0", "1"}, 0};
  lm_cupti_source src = {&f, fake_ranges, fake_name, fake_eval};
  got g;
  memset(&g, 0, sizeof g);
  CHECK(lm_cupti_decode(&src, 3, metrics, 3, take, &g, &dropped, &d) == LM_OK);
  CHECK(g.calls == 3 && dropped == 0);
  for (int i = 0; i < 3; i++) {
    CHECK(g.has[i]);
    CHECK_NEAR(g.v[i][0], 1000.0 * i, 0);
    CHECK(isnan(g.v[i][1]));
    CHECK_NEAR(g.v[i][2], 1000.0 * i + 2, 0);
  }
  /* Numbered from 1, the middle launch's range dropped: launch 2 keeps its
   * own values, not launch 1's. */
  fake f1 = {2, {"1", "3"}, 0};
  src.ctx = &f1;
  memset(&g, 0, sizeof g);
  CHECK(lm_cupti_decode(&src, 3, metrics, 3, take, &g, &dropped, &d) == LM_OK);
  CHECK(g.calls == 3 && dropped == 1);
  CHECK(g.has[0] && !g.has[1] && g.has[2]);
  CHECK_NEAR(g.v[0][0], 1000.0, 0);
  CHECK_NEAR(g.v[2][0], 3000.0, 0);
  /* Nested names: the leaf decides. */
  fake fn = {2, {"outer/0", "outer/1"}, 0};
  src.ctx = &fn;
  memset(&g, 0, sizeof g);
  CHECK(lm_cupti_decode(&src, 2, metrics, 1, take, &g, &dropped, &d) == LM_OK);
  CHECK(g.has[0] && g.has[1] && dropped == 0);
  /* Names that are not numbers: by position. */
  fake fp = {2, {"vcopy", "fma"}, 0};
  src.ctx = &fp;
  memset(&g, 0, sizeof g);
  CHECK(lm_cupti_decode(&src, 2, metrics, 3, take, &g, &dropped, &d) == LM_OK);
  CHECK_NEAR(g.v[1][2], 1002.0, 0);
  /* A range for a launch the session did not make: an error, no values. */
  fake fx = {2, {"0", "5"}, 0};
  src.ctx = &fx;
  memset(&g, 0, sizeof g);
  CHECK(lm_cupti_decode(&src, 2, metrics, 3, take, &g, &dropped, &d) == LM_EDATA);
  CHECK(g.calls == 0 && strstr(d.message, "launch 5") != NULL);
  /* Two ranges for one launch. */
  fake fd = {2, {"0", "0"}, 0};
  src.ctx = &fd;
  CHECK(lm_cupti_decode(&src, 2, metrics, 3, take, &g, NULL, &d) == LM_EDATA);
  CHECK(strstr(d.message, "two ranges") != NULL);
  /* The source's failure is passed on. */
  fake fe = {1, {"0"}, 1};
  src.ctx = &fe;
  CHECK(lm_cupti_decode(&src, 1, metrics, 3, take, &g, NULL, &d) == LM_EIO);
  CHECK(g.calls == 0);
  /* No range at all: every launch dropped, each reported. */
  fake f0 = {0, {NULL}, 0};
  src.ctx = &f0;
  memset(&g, 0, sizeof g);
  CHECK(lm_cupti_decode(&src, 2, metrics, 3, take, &g, &dropped, &d) == LM_OK);
  CHECK(g.calls == 2 && dropped == 2 && !g.has[0] && !g.has[1]);
}

/* ------------------------------------------------------------- errors */

static void error_tests(void) {
  char line[1024];
  CHECK(lm_cupti_explain(LM_CUPTI_INSUFFICIENT_PRIVILEGES, "cuptiRangeProfilerStart",
                         "CUPTI_ERROR_INSUFFICIENT_PRIVILEGES", line, sizeof line) == LM_EINVAL);
  CHECK(strstr(line, "NVreg_RestrictProfilingToAdminUsers=0") != NULL);
  CHECK(strstr(line, "docs/nvidia.md") != NULL);
  CHECK(strstr(line, "cuptiRangeProfilerStart") != NULL && strstr(line, "error 35") != NULL);
  CHECK(strstr(line, "/etc/modprobe.d") != NULL && strstr(line, "root") != NULL);
  CHECK(strstr(line, "CAP_SYS_ADMIN") != NULL && strchr(line, '\n') == NULL);
  CHECK(lm_cupti_explain(LM_CUPTI_OUT_OF_MEMORY, "cuptiRangeProfilerSetConfig", NULL, line,
                         sizeof line) == LM_ENOMEM);
  CHECK(strstr(line, "counter-data") != NULL);
  /* fewer metrics per pass: fewer of them, or split into sets */
  CHECK(strstr(line, "fewer metrics per pass") != NULL && strstr(line, "-b") != NULL);
  CHECK(strstr(line, "--replay app") != NULL && strstr(line, "--replay kernel") != NULL);
  CHECK(lm_cupti_explain(LM_CUPTI_NOT_SUPPORTED, "cuptiRangeProfilerEnable", "", line,
                         sizeof line) == LM_EINVAL);
  CHECK(strstr(line, "does not support this device or chip") != NULL);
  CHECK(strstr(line, lm_cupti_lumen_chips()) != NULL);
  /* the device's chip named, next to lumen's */
  CHECK(lm_cupti_explain_chip(LM_CUPTI_NOT_SUPPORTED, "cuptiRangeProfilerEnable", NULL, "GB202", line,
                              sizeof line) == LM_EINVAL);
  CHECK(strstr(line, "this device (chip GB202)") != NULL && strstr(line, "GH100 (sm_90)") != NULL);
  CHECK(lm_cupti_explain_chip(LM_CUPTI_INVALID_DEVICE, "cuptiProfilerInitialize", NULL, "", line,
                              sizeof line) == LM_EINVAL);
  CHECK(strstr(line, "this device or chip") != NULL);
  CHECK(lm_cupti_explain_chip(LM_CUPTI_OUT_OF_MEMORY, "x", NULL, "GH100", line, sizeof line) == LM_ENOMEM);
  /* the chips named are exactly those of the built-in NVIDIA definitions */
  char want[256] = "";
  for (const char *const *a = lm_metrics_builtin_list(); *a; a++) {
    const lm_catalog *cat = lm_metrics_builtin(*a);
    if (!cat || !cat->vendor || strcmp(cat->vendor, "nvidia") != 0) continue;
    size_t at = strlen(want);
    snprintf(want + at, sizeof want - at, "%s%s (%s)", at ? ", " : "", cat->chip, *a);
  }
  CHECK_STR(lm_cupti_lumen_chips(), want);
  /* counter access for a user who is not root */
  CHECK(lm_cuda_has_sys_admin("Name:\tx\nCapInh:\t0000000000000000\nCapEff:\t0000000000200000\n") == 1);
  CHECK(lm_cuda_has_sys_admin("CapEff:\t000001ffffffffff\n") == 1);
  CHECK(lm_cuda_has_sys_admin("CapEff:\t0000000000000000\n") == 0);
  CHECK(lm_cuda_has_sys_admin("CapEff:\t00000000001fffff\n") == 0);
  CHECK(lm_cuda_has_sys_admin("Name:\tx\n") == -1 && lm_cuda_has_sys_admin(NULL) == -1);
  CHECK(lm_cupti_explain(LM_CUPTI_MULTIPLE_SUBSCRIBERS, "cuptiSubscribe_v2", NULL, line,
                         sizeof line) == LM_EINVAL);
  CHECK(strstr(line, "another CUPTI tool") != NULL);
  CHECK(lm_cupti_explain(LM_CUPTI_MIG_DEVICE_NOT_SUPPORTED, "x", NULL, line, sizeof line) ==
        LM_EINVAL);
  CHECK(lm_cupti_explain(LM_CUPTI_UNKNOWN, "cuptiProfilerInitialize", "CUPTI_ERROR_UNKNOWN", line,
                         sizeof line) == LM_EIO);
  CHECK_STR(line, "CUPTI: cuptiProfilerInitialize failed (error 999: CUPTI_ERROR_UNKNOWN)");
  char tiny[8];
  lm_cupti_explain(LM_CUPTI_INSUFFICIENT_PRIVILEGES, "x", NULL, tiny, sizeof tiny);
  CHECK(strlen(tiny) == 7);
}

static void demangle_tests(void) {
  char out[256];
  CHECK_STR(lm_cupti_demangle("vcopy", out, sizeof out), "vcopy");
  CHECK_STR(lm_cupti_demangle("_Znot a name", out, sizeof out), "_Znot a name");
  CHECK_STR(lm_cupti_demangle(NULL, out, sizeof out), "?");
  /* libstdc++ is on every machine that builds lumen (the toolchain has it). */
  CHECK_STR(lm_cupti_demangle("_Z5vcopyPKfPfm", out, sizeof out),
            "vcopy(float const*, float*, unsigned long)");
  CHECK_STR(lm_cupti_demangle("_Z9fma_chainILi64EEvPfi", out, sizeof out),
            "void fma_chain<64>(float*, int)");
  char small[6];
  CHECK_STR(lm_cupti_demangle("_Z5vcopyPKfPfm", small, sizeof small), "vcopy");
}

/* --------------------------------------------------- config images (CUDA) */

static int image_tests(void) {
  lm_cupti_host *h = NULL;
  lm_diag d;
  if (lm_cupti_host_open(&h, &d) != LM_OK) {
    fprintf(stderr, "test_cupti_range: config images skipped: %s\n", d.message);
    return 0;
  }
  char *set0[] = {(char *)"dram__bytes.sum", (char *)"gpu__time_duration.sum", NULL};
  char *set1[] = {(char *)"sm__throughput.avg.pct_of_peak_sustained_elapsed",
                  (char *)"smsp__sass_thread_inst_executed_op_ffma_pred_on.sum", NULL};
  char *const *sets[] = {set0, set1};
  lm_cupti_images im;
  CHECK(lm_cupti_images_build(h, "GH100", sets, 2, &im, &d) == LM_OK);
  CHECK(im.n_sets == 2);
  for (int s = 0; s < 2 && im.n_sets == 2; s++) {
    size_t n = 0;
    while (sets[s][n]) n++;
    int32_t passes = 0;
    size_t bytes = 0;
    CHECK(lm_cupti_host_passes(h, "GH100", (const char *const *)sets[s], n, &passes, &bytes, NULL,
                               &d) == LM_OK);
    CHECK(im.image[s] != NULL && im.bytes[s] == bytes && bytes > 0);
    CHECK(im.passes[s] == passes && passes >= 1);
  }
  /* The throughput metric alone needs several passes; two counters one. */
  if (im.n_sets == 2) CHECK(im.passes[0] == 1 && im.passes[1] > 1);
  lm_cupti_images_fini(&im);
  char *bad[] = {(char *)"dram__bytes.sum", (char *)"no__such_metric.sum", NULL};
  char *const *sets_bad[] = {set0, bad};
  CHECK(lm_cupti_images_build(h, "GH100", sets_bad, 2, &im, &d) == LM_ENOTFOUND);
  CHECK(strstr(d.message, "counter set 1") != NULL);
  lm_cupti_images_fini(&im);
  CHECK(lm_cupti_images_build(h, "NOCHIP", sets, 1, &im, &d) == LM_EARCH);
  lm_cupti_images_fini(&im);

  /* The real counter-data source: made for metrics the chip has, refused
   * for one it lacks. It is not fed a made-up image: libnvperf_host does
   * not check images and crashes on one CUPTI did not fill. */
  lm_cupti_source src;
  static const char *const names[] = {"dram__bytes.sum"};
  uint8_t none[1] = {0};
  CHECK(lm_cupti_source_image_new(h, "GH100", names, 1, none, 0, &src, &d) == LM_OK);
  CHECK(src.ctx && src.n_ranges && src.range_name && src.evaluate);
  lm_cupti_source_image_free(&src);
  CHECK(src.ctx == NULL);
  CHECK(lm_cupti_source_image_new(h, "GH100", (const char *const[]){"no__such.sum"}, 1, none, 0,
                                  &src, &d) == LM_ENOTFOUND);
  CHECK(lm_cupti_source_image_new(h, "NOCHIP", names, 1, none, 0, &src, &d) == LM_EARCH);
  lm_cupti_host_close(h);
  return 1;
}

/* A libcupti too old for lumen is named with its version and the version
 * needed, never taken for one without a Range Profiler by mistake. */
static void library_tests(void) {
  char why[768];
  /* CUDA 12.5 (API 23): neither API. */
  CHECK(lm_cupti_library_check("libcupti.so.12", 23, 0, 0, why, sizeof why) ==
        LM_EINVAL);
  CHECK(strstr(why, "too old: CUPTI API 23 (CUDA 12.0 to 12.5)") != NULL);
  CHECK(strstr(why, "needs CUPTI API 24 or later (CUDA 12.6 Update 2") != NULL);
  /* No cuptiGetVersion at all. */
  CHECK(lm_cupti_library_check(NULL, 0, 0, 0, why, sizeof why) == LM_EINVAL);
  CHECK(strstr(why, "libcupti is too old: CUPTI API 0 (version unknown") !=
        NULL);
  /* CUDA 12.6 before Update 2: the Host API without the Range Profiler. */
  CHECK(lm_cupti_library_check("x.so", 24, 1, 0, why, sizeof why) == LM_EINVAL);
  CHECK(strstr(why, "CUDA 12.6 before Update 2") != NULL);
  CHECK(strstr(why, "Range Profiler API (cupti_range_profiler.h") != NULL);
  /* A version that should have both but lacks one: said as such. */
  CHECK(lm_cupti_library_check("x.so", 130001, 1, 0, why, sizeof why) ==
        LM_EINVAL);
  CHECK(strstr(why,
               "(CUPTI API 130001, CUDA 13.0) lacks the Range Profiler API") !=
        NULL);
  CHECK(lm_cupti_library_check("x.so", 26, 0, 1, why, sizeof why) == LM_EINVAL);
  CHECK(strstr(why, "lacks the Profiler Host API") != NULL);
  /* Usable: 12.6 Update 2 and 13.x. */
  CHECK(lm_cupti_library_check("x.so", 24, 1, 1, why, sizeof why) == LM_OK);
  CHECK(lm_cupti_library_check("x.so", 130001, 1, 1, why, sizeof why) == LM_OK);
  CHECK(strstr(why, "CUPTI API 130001 (CUDA 13.0)") != NULL);
}

int main(void) {
  library_tests();
  decode_tests();
  error_tests();
  demangle_tests();
  image_tests();
  return check_report("test_cupti_range");
}
