/*
 * telemetry.c - GPU clock samplers: the simulated SDK device's clock log
 * (found in the process with dlsym: simsdk_clock_samples), rocm-smi and
 * NVML. The SMI libraries are opened with dlopen and called
 * through prototypes declared here (NVML ships no header on this system;
 * rocm-smi's header gives the types), so lumen builds and runs without
 * them and says why there is no telemetry.
 */
#include <dlfcn.h>
#include <fcntl.h>
#include <unistd.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "backend/backend.h"
#include "backend/cupti_host.h"

typedef enum { SAMPLER_SIM, SAMPLER_RSMI, SAMPLER_NVML } sampler_kind;

/* rocm-smi: the few calls used, with the library's own types. */
typedef int rsmi_status_t;
typedef struct {
  uint32_t num_supported;
  uint32_t current;
  uint64_t frequency[33];
} rsmi_frequencies_t;
enum { RSMI_CLK_TYPE_SYS = 0, RSMI_CLK_TYPE_MEM = 4 };

/* NVML: opaque device handles, clock ids. */
typedef void *nvmlDevice_t;
enum { NVML_CLOCK_SM = 1, NVML_CLOCK_MEM = 2 };

struct lm_telemetry {
  sampler_kind kind;
  void *lib;
  uint32_t n_gpus;
  /* simulated device */
  size_t (*sim_samples)(size_t from, int *gpu, unsigned long long *t_ns, double *sclk, double *mclk,
                        size_t cap);
  size_t next_sample;
  /* rocm-smi */
  rsmi_status_t (*rsmi_shut_down)(void);
  rsmi_status_t (*rsmi_dev_gpu_clk_freq_get)(uint32_t, int, rsmi_frequencies_t *);
  /* NVML */
  int (*nvml_shutdown)(void);
  int (*nvml_clock)(nvmlDevice_t, int, unsigned int *);
  nvmlDevice_t devices[64];
};

unsigned long long lm_clock_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_BOOTTIME, &ts);
  return (unsigned long long)ts.tv_sec * 1000000000ULL + (unsigned long long)ts.tv_nsec;
}

lm_telemetry *lm_telemetry_open_sim(void) {
  void *f = dlsym(RTLD_DEFAULT, "simsdk_clock_samples");
  if (!f) return NULL;
  lm_telemetry *t = calloc(1, sizeof *t);
  if (!t) return NULL;
  t->kind = SAMPLER_SIM;
  *(void **)&t->sim_samples = f;
  return t;
}

static void *open_first(const char *const *names, char *why, size_t cap) {
  for (const char *const *n = names; *n; n++) {
    void *lib = dlopen(*n, RTLD_NOW | RTLD_LOCAL);
    if (lib) return lib;
  }
  snprintf(why, cap, "%s not found (%s)", names[0], dlerror());
  return NULL;
}

lm_telemetry *lm_telemetry_open_rocm_smi(char *why, size_t cap) {
  static const char *const names[] = {"librocm_smi64.so", "librocm_smi64.so.7", "librocm_smi64.so.6",
                                      "librocm_smi64.so.5", "librocm_smi64.so.1", NULL};
  void *lib = open_first(names, why, cap);
  if (!lib) return NULL;
  rsmi_status_t (*init)(uint64_t) = (rsmi_status_t (*)(uint64_t))dlsym(lib, "rsmi_init");
  rsmi_status_t (*count)(uint32_t *) = (rsmi_status_t (*)(uint32_t *))dlsym(lib, "rsmi_num_monitor_devices");
  lm_telemetry *t = calloc(1, sizeof *t);
  if (!t || !init || !count) {
    snprintf(why, cap, "librocm_smi64 lacks rsmi_init");
    goto fail;
  }
  t->kind = SAMPLER_RSMI;
  t->lib = lib;
  t->rsmi_shut_down = (rsmi_status_t (*)(void))dlsym(lib, "rsmi_shut_down");
  t->rsmi_dev_gpu_clk_freq_get =
      (rsmi_status_t (*)(uint32_t, int, rsmi_frequencies_t *))dlsym(lib, "rsmi_dev_gpu_clk_freq_get");
  rsmi_status_t st = init(0);
  if (st != 0) {
    snprintf(why, cap, "rsmi_init failed (status %d): no AMD GPU or driver", st);
    goto fail;
  }
  if (count(&t->n_gpus) != 0 || t->n_gpus == 0) {
    snprintf(why, cap, "rocm-smi sees no AMD GPU");
    if (t->rsmi_shut_down) t->rsmi_shut_down();
    goto fail;
  }
  return t;
fail:
  free(t);
  dlclose(lib);
  return NULL;
}

lm_telemetry *lm_telemetry_open_nvml(char *why, size_t cap) {
  static const char *const names[] = {"libnvidia-ml.so.1", "libnvidia-ml.so", NULL};
  void *lib = open_first(names, why, cap);
  if (!lib) return NULL;
  int (*init)(void) = (int (*)(void))dlsym(lib, "nvmlInit_v2");
  int (*count)(unsigned int *) = (int (*)(unsigned int *))dlsym(lib, "nvmlDeviceGetCount_v2");
  int (*handle)(unsigned int, nvmlDevice_t *) =
      (int (*)(unsigned int, nvmlDevice_t *))dlsym(lib, "nvmlDeviceGetHandleByIndex_v2");
  lm_telemetry *t = calloc(1, sizeof *t);
  if (!t || !init || !count || !handle) {
    snprintf(why, cap, "libnvidia-ml lacks nvmlInit_v2");
    goto fail;
  }
  t->kind = SAMPLER_NVML;
  t->lib = lib;
  t->nvml_shutdown = (int (*)(void))dlsym(lib, "nvmlShutdown");
  t->nvml_clock = (int (*)(nvmlDevice_t, int, unsigned int *))dlsym(lib, "nvmlDeviceGetClockInfo");
  int st = init();
  if (st != 0) {
    snprintf(why, cap, "nvmlInit failed (status %d): no NVIDIA GPU or driver", st);
    goto fail;
  }
  unsigned int n = 0;
  if (count(&n) != 0 || n == 0) {
    snprintf(why, cap, "NVML sees no NVIDIA GPU");
    if (t->nvml_shutdown) t->nvml_shutdown();
    goto fail;
  }
  t->n_gpus = n < 64 ? n : 64;
  for (uint32_t i = 0; i < t->n_gpus; i++) handle(i, &t->devices[i]);
  return t;
fail:
  free(t);
  dlclose(lib);
  return NULL;
}

void lm_telemetry_sample(lm_telemetry *t, lm_telemetry_emit emit) {
  if (!t) return;
  switch (t->kind) {
  case SAMPLER_SIM: {
    int gpu[256];
    unsigned long long t_ns[256];
    double sclk[256], mclk[256];
    size_t n;
    while ((n = t->sim_samples(t->next_sample, gpu, t_ns, sclk, mclk, 256)) > 0) {
      for (size_t i = 0; i < n; i++)
        emit("C\t%d\t%llu\t%.3f\t%.3f\n", gpu[i], t_ns[i], sclk[i], mclk[i]);
      t->next_sample += n;
    }
    return;
  }
  case SAMPLER_RSMI:
    for (uint32_t g = 0; g < t->n_gpus && t->rsmi_dev_gpu_clk_freq_get; g++) {
      rsmi_frequencies_t sys, mem;
      if (t->rsmi_dev_gpu_clk_freq_get(g, RSMI_CLK_TYPE_SYS, &sys) != 0 ||
          t->rsmi_dev_gpu_clk_freq_get(g, RSMI_CLK_TYPE_MEM, &mem) != 0 || sys.current >= 33 ||
          mem.current >= 33)
        continue;
      emit("C\t%u\t%llu\t%.3f\t%.3f\n", g, lm_clock_ns(), (double)sys.frequency[sys.current] / 1e6,
           (double)mem.frequency[mem.current] / 1e6);
    }
    return;
  case SAMPLER_NVML:
    for (uint32_t g = 0; g < t->n_gpus && t->nvml_clock; g++) {
      unsigned int sm = 0, mem = 0;
      if (t->nvml_clock(t->devices[g], NVML_CLOCK_SM, &sm) != 0 ||
          t->nvml_clock(t->devices[g], NVML_CLOCK_MEM, &mem) != 0)
        continue;
      emit("C\t%u\t%llu\t%u\t%u\n", g, lm_clock_ns(), sm, mem);
    }
    return;
  }
}

void lm_telemetry_close(lm_telemetry *t) {
  if (!t) return;
  if (t->kind == SAMPLER_RSMI && t->rsmi_shut_down) t->rsmi_shut_down();
  if (t->kind == SAMPLER_NVML && t->nvml_shutdown) t->nvml_shutdown();
  if (t->lib) dlclose(t->lib);
  free(t);
}

size_t lm_backends_probe(lm_backend_status *out, size_t cap) {
  size_t n = 0;
  if (n < cap) {
    lm_backend_status *b = &out[n++];
    memset(b, 0, sizeof *b);
    b->name = "rocprofiler-sdk";
    b->kind = "counters";
    b->built = 1;
    b->usable = lm_rocp_probe(b->why, sizeof b->why);
  }
  if (n < cap) {
    lm_backend_status *b = &out[n++];
    memset(b, 0, sizeof *b);
    b->name = "cupti";
    b->kind = "counters";
    /* The adapter (liblumen_tool's InitializeInjection) is compiled under
     * the same condition as the Host API: the CUDA headers. */
    b->built = lm_cupti_host_built();
    char driver[160];
    int gpus = lm_cuda_driver_probe(driver, sizeof driver);
    lm_cupti_host *h = NULL;
    lm_diag d;
    lm_diag_clear(&d);
    int cupti = lm_cupti_host_open(&h, &d) == LM_OK;
    lm_cupti_host_close(h);
    b->usable = cupti && gpus > 0;
    if (!b->built)
      snprintf(b->why, sizeof b->why, "not built: %.400s", d.message);
    else if (!cupti)
      snprintf(b->why, sizeof b->why, "built; not usable: %.400s", d.message);
    else if (gpus <= 0)
      snprintf(b->why, sizeof b->why, "built; not usable: %s",
               gpus == 0 ? "the CUDA driver reports no NVIDIA GPU" : driver);
    else
      snprintf(b->why, sizeof b->why, "range profiler through CUDA_INJECTION64_PATH: %s", driver);
  }
  if (n < cap) {
    lm_backend_status *b = &out[n++];
    memset(b, 0, sizeof *b);
    b->name = "cupti-host";
    b->kind = "planning";
    lm_cupti_host *h = NULL;
    lm_diag d;
    lm_diag_clear(&d);
    if (lm_cupti_host_open(&h, &d) == LM_OK) {
      b->built = b->usable = 1;
      char desc[160];
      lm_cupti_host_describe(h, desc, sizeof desc);
      snprintf(b->why, sizeof b->why, "Profiler Host API (%.150s): --plan --arch sm_80|sm_90|sm_100, "
                                      "no GPU needed", desc);
      lm_cupti_host_close(h);
    } else {
      b->built = lm_cupti_host_built();
      snprintf(b->why, sizeof b->why, "%.250s", d.message);
    }
  }
  if (n < cap) {
    lm_backend_status *b = &out[n++];
    memset(b, 0, sizeof *b);
    b->name = "rocm-smi";
    b->kind = "telemetry";
    b->built = 1;
    char why[200];
    /* rocm-smi prints its own complaints on stderr when there is no AMD
     * GPU; the probe reports the reason in one line instead. */
    fflush(stderr);
    int saved = dup(2), devnull = open("/dev/null", O_WRONLY | O_CLOEXEC);
    if (saved >= 0 && devnull >= 0) dup2(devnull, 2);
    lm_telemetry *t = lm_telemetry_open_rocm_smi(why, sizeof why);
    if (saved >= 0 && devnull >= 0) dup2(saved, 2);
    if (saved >= 0) close(saved);
    if (devnull >= 0) close(devnull);
    b->usable = t != NULL;
    snprintf(b->why, sizeof b->why, "%s", t ? "AMD GPU clocks" : why);
    lm_telemetry_close(t);
  }
  if (n < cap) {
    lm_backend_status *b = &out[n++];
    memset(b, 0, sizeof *b);
    b->name = "nvml";
    b->kind = "telemetry";
    b->built = 1;
    char why[200];
    lm_telemetry *t = lm_telemetry_open_nvml(why, sizeof why);
    b->usable = t != NULL;
    snprintf(b->why, sizeof b->why, "%s", t ? "NVIDIA GPU clocks" : why);
    lm_telemetry_close(t);
  }
  return n;
}
