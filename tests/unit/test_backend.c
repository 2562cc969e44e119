/* test_backend.c - what `lumen list backends` reports, and the samplers:
 * every backend has a row with a reason; the simulated device's sampler
 * passes on its clock log once, in order; the SMI samplers fail cleanly
 * with a reason where there is no GPU (always so on a build machine). */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/backend.h"
#include "backend/cupti_host.h"
#include "check.h"

static char lines[4096];
static int n_lines;

#if defined(__GNUC__)
__attribute__((format(printf, 1, 2)))
#endif
static void sink(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  size_t at = strlen(lines);
  vsnprintf(lines + at, sizeof lines - at, fmt, ap);
  va_end(ap);
  n_lines++;
}

static struct {
  int gpu;
  unsigned long long t;
  double sclk, mclk;
} log_[3] = {{2, 100, 1700, 1600}, {2, 200, 1530, 1600}, {3, 300, 1000, 800}};
static size_t n_log = 2;

/* A device library's own clock log, as the sampler finds it in the
 * process (dlsym: the device extension of backend.h). */
const char *lumen_device_clock_source(void);
size_t lumen_device_clock_log(size_t from, int *gpu, unsigned long long *t_ns, double *sclk,
                              double *mclk, size_t cap);
__attribute__((visibility("default"))) const char *lumen_device_clock_source(void) { return "test device"; }
__attribute__((visibility("default"))) size_t lumen_device_clock_log(size_t from, int *gpu,
                                                                     unsigned long long *t_ns,
                                                                     double *sclk, double *mclk,
                                                                     size_t cap) {
  size_t n = 0;
  for (size_t i = from; i < n_log && n < cap; i++, n++) {
    gpu[n] = log_[i].gpu;
    t_ns[n] = log_[i].t;
    sclk[n] = log_[i].sclk;
    mclk[n] = log_[i].mclk;
  }
  return n;
}

int main(void) {
  lm_backend_status b[16];
  size_t n = lm_backends_probe(b, 16);
  CHECK(n == 5);
  const char *names[] = {"rocprofiler-sdk", "cupti", "cupti-host", "rocm-smi", "nvml"};
  for (size_t i = 0; i < n && i < 5; i++) {
    CHECK_STR(b[i].name, names[i]);
    CHECK(b[i].why[0] != '\0');
    CHECK(!b[i].usable || b[i].built);
  }
  CHECK(lm_backends_probe(b, 2) == 2);
  /* CUPTI: collection is built with the CUDA headers, usable only where
   * CUPTI loads and the driver has a GPU (the reason names what is
   * missing); the Host API row is usable exactly when its library loads. */
  n = lm_backends_probe(b, 16);
  CHECK(b[1].built == lm_cupti_host_built());
  if (!b[1].built) CHECK(!b[1].usable && strncmp(b[1].why, "not built: ", 11) == 0);
  char driver[200];
  int gpus = lm_cuda_driver_probe(driver, sizeof driver);
  if (b[1].built && gpus <= 0) {
    CHECK(!b[1].usable && strncmp(b[1].why, "built; not usable: ", 19) == 0);
    CHECK(strstr(b[1].why, "NVIDIA") != NULL || strstr(b[1].why, "CUPTI") != NULL);
  }
  if (b[1].usable) CHECK(gpus > 0 && strstr(b[1].why, "CUDA_INJECTION64_PATH") != NULL);
  CHECK(strcmp(b[2].kind, "planning") == 0);
  CHECK(b[2].usable == (b[2].built && strstr(b[2].why, "Profiler Host API (CUPTI API") != NULL));
  int host_usable = b[2].usable;
  setenv("LUMEN_CUPTI_LIBRARY", "/no/such/libcupti.so", 1);
  n = lm_backends_probe(b, 16);
  CHECK(!b[2].usable);
  CHECK(!host_usable || strstr(b[2].why, "/no/such/libcupti.so") != NULL);
  CHECK(!b[1].usable);
  if (host_usable) CHECK(strstr(b[1].why, "/no/such/libcupti.so") != NULL);
  unsetenv("LUMEN_CUPTI_LIBRARY");

  lm_telemetry *t = lm_telemetry_open_device();
  CHECK(t != NULL);
  CHECK_STR(lm_telemetry_name(t), "test device");
  lm_telemetry_sample(t, sink);
  CHECK(n_lines == 2);
  CHECK(strcmp(lines, "C\t2\t100\t1700.000\t1600.000\nC\t2\t200\t1530.000\t1600.000\n") == 0);
  lm_telemetry_sample(t, sink); /* nothing new */
  CHECK(n_lines == 2);
  n_log = 3;
  lm_telemetry_sample(t, sink);
  CHECK(n_lines == 3 && strstr(lines, "C\t3\t300\t1000.000\t800.000\n") != NULL);
  lm_telemetry_close(t);
  lm_telemetry_close(NULL);
  lm_telemetry_sample(NULL, sink);

  char why[200] = "";
  lm_telemetry *smi = lm_telemetry_open_nvml(why, sizeof why);
  if (!smi) CHECK(why[0] != '\0');
  lm_telemetry_close(smi);
  CHECK(lm_clock_ns() > 0);

  /* Kernel names as the reference tool shows them: the SDK's symbols
   * demangled (templates, namespaces, the code object's .kd clone), and
   * names that are not mangled, or not validly, as they are. */
  char name[1024];
  CHECK_STR(lm_backend_demangle("_Z7vecCopyPdS_S_ii.kd", name, sizeof name),
            "vecCopy(double*, double*, double*, int, int) [clone .kd]");
  CHECK_STR(lm_backend_demangle("_ZN2ns4axpyEfPKfPfm.kd", name, sizeof name),
            "ns::axpy(float, float const*, float*, unsigned long) [clone .kd]");
  CHECK_STR(lm_backend_demangle("_Z9fma_chainILi64EEvPfi", name, sizeof name), "void fma_chain<64>(float*, int)");
  CHECK_STR(lm_backend_demangle("_ZN7rocprim6detail19block_reduce_kernelILb1EfEEvPfm.kd", name, sizeof name),
            "void rocprim::detail::block_reduce_kernel<true, float>(float*, unsigned long) [clone .kd]");
  CHECK_STR(lm_backend_demangle("__amd_rocclr_fillBufferAligned.kd", name, sizeof name),
            "__amd_rocclr_fillBufferAligned.kd");
  CHECK_STR(lm_backend_demangle("_Z3bad(", name, sizeof name), "_Z3bad(");
  CHECK_STR(lm_backend_demangle(NULL, name, sizeof name), "?");
  char small[8];
  CHECK_STR(lm_backend_demangle("_Z7vecCopyPdS_S_ii.kd", small, sizeof small), "vecCopy");
  return check_report("test_backend");
}
