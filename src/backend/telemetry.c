/*
 * telemetry.c - GPU clock and power samplers: a device library's own
 * clock log (its LM_DEVICE_CLOCK_LOG extension, found in the process),
 * rocm-smi and NVML. The SMI libraries are opened at run time and called
 * through prototypes declared here (NVML ships no header on this system;
 * rocm-smi's header gives the types), so lumen builds and runs without
 * them and says why there is no telemetry. Clocks are what a sample needs;
 * board power and temperature are added where the library reads them and
 * left blank ("-") where it does not, never written as 0.
 */
#include <fcntl.h>
#include <unistd.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "backend/backend.h"
#include "backend/cupti_host.h"
#include "base/dl.h"

typedef enum { SAMPLER_DEVICE, SAMPLER_RSMI, SAMPLER_NVML } sampler_kind;

/* rocm-smi: the few calls used. rsmi_frequencies_t is read as bytes:
 * rocm-smi 5.x lays it out as {uint32 num_supported, uint32 current,
 * uint64 frequency[32]} (Hz), and later versions put a bool
 * (has_deep_sleep) first, which moves the rest by 4 and 8 bytes. The
 * layout is chosen by the library's major version and a reading is used
 * only when it is consistent (current < num_supported <= 32). */
typedef int rsmi_status_t;
#define RSMI_MAX_FREQS 32
typedef struct {
  uint64_t words[2 + RSMI_MAX_FREQS + 2];
} rsmi_freq_buffer;
typedef struct {
  uint32_t major, minor, patch;
  const char *build;
} rsmi_version_buf;
enum { RSMI_CLK_TYPE_SYS = 0, RSMI_CLK_TYPE_MEM = 4 };
/* rsmi_dev_temp_metric_get's sensor (edge) and metric (current value). */
enum { RSMI_TEMP_TYPE_EDGE = 0, RSMI_TEMP_CURRENT = 0 };

/* NVML: opaque device handles, clock ids, the GPU die's sensor. */
typedef void *nvmlDevice_t;
enum { NVML_CLOCK_SM = 1, NVML_CLOCK_MEM = 2, NVML_TEMPERATURE_GPU = 0 };

struct lm_telemetry {
  sampler_kind kind;
  lm_dl_lib lib;
  uint32_t n_gpus;
  /* a device library's clock log */
  size_t (*device_log)(size_t from, int *gpu, unsigned long long *t_ns, double *sclk, double *mclk,
                       size_t cap);
  const char *device_source; /* its name, borrowed from the library */
  size_t next_sample;
  /* rocm-smi */
  rsmi_status_t (*rsmi_shut_down)(void);
  rsmi_status_t (*rsmi_dev_gpu_clk_freq_get)(uint32_t, int, void *);
  rsmi_status_t (*rsmi_dev_power_ave_get)(uint32_t, uint32_t, uint64_t *); /* microwatts */
  rsmi_status_t (*rsmi_dev_temp_metric_get)(uint32_t, uint32_t, int, int64_t *); /* millidegrees */
  int rsmi_deep_sleep_field; /* the buffer starts with has_deep_sleep */
  uint64_t used;             /* GPUs that ran dispatches (bit per GPU) */
  uint64_t left;             /* GPUs another process samples (bit per GPU) */
  /* NVML */
  int (*nvml_shutdown)(void);
  int (*nvml_clock)(nvmlDevice_t, int, unsigned int *);
  int (*nvml_power)(nvmlDevice_t, unsigned int *);     /* milliwatts */
  int (*nvml_temp)(nvmlDevice_t, int, unsigned int *); /* degrees C */
  nvmlDevice_t devices[64];
};

unsigned long long lm_clock_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_BOOTTIME, &ts);
  return (unsigned long long)ts.tv_sec * 1000000000ULL + (unsigned long long)ts.tv_nsec;
}

lm_telemetry *lm_telemetry_open_device(void) {
  const char *(*source)(void) = NULL;
  void *log = NULL;
  const lm_dl_sym syms[] = {{LM_DEVICE_CLOCK_LOG, &log, 0, NULL}, {LM_DEVICE_CLOCK_SOURCE, &source, 0, NULL}};
  lm_dl_lib process;
  lm_dl_open_process(&process);
  lm_dl_resolve(&process, syms, sizeof syms / sizeof *syms, NULL);
  /* A device may keep no log, as a GPU whose clocks no sampler reads. */
  const char *name = log && source ? source() : NULL;
  if (!name) return NULL;
  lm_telemetry *t = calloc(1, sizeof *t);
  if (!t) return NULL;
  t->kind = SAMPLER_DEVICE;
  t->device_source = name;
  memcpy(&t->device_log, &log, sizeof log);
  return t;
}

lm_telemetry *lm_telemetry_open_rocm_smi(char *why, size_t cap) {
  static const char *const names[] = {"librocm_smi64.so", "librocm_smi64.so.7", "librocm_smi64.so.6",
                                      "librocm_smi64.so.5", "librocm_smi64.so.1"};
  lm_dl_lib lib;
  if (lm_dl_open(&lib, names, sizeof names / sizeof *names, 0, NULL) != LM_OK) {
    snprintf(why, cap, "%s not found (%s)", names[0], lib.error);
    return NULL;
  }
  rsmi_status_t (*init)(uint64_t) = NULL, (*count)(uint32_t *) = NULL, (*version)(rsmi_version_buf *) = NULL;
  lm_telemetry *t = calloc(1, sizeof *t);
  if (!t) {
    snprintf(why, cap, "librocm_smi64 lacks rsmi_init");
    goto fail;
  }
  const lm_dl_sym syms[] = {{"rsmi_init", &init, 1, NULL},
                            {"rsmi_num_monitor_devices", &count, 1, NULL},
                            {"rsmi_shut_down", &t->rsmi_shut_down, 0, NULL},
                            {"rsmi_dev_gpu_clk_freq_get", &t->rsmi_dev_gpu_clk_freq_get, 0, NULL},
                            {"rsmi_dev_power_ave_get", &t->rsmi_dev_power_ave_get, 0, NULL},
                            {"rsmi_dev_temp_metric_get", &t->rsmi_dev_temp_metric_get, 0, NULL},
                            {"rsmi_version_get", &version, 0, NULL}};
  if (lm_dl_resolve(&lib, syms, sizeof syms / sizeof *syms, NULL) != LM_OK) {
    snprintf(why, cap, "librocm_smi64 lacks rsmi_init");
    goto fail;
  }
  t->kind = SAMPLER_RSMI;
  t->lib = lib;
  rsmi_version_buf v = {0, 0, 0, NULL};
  if (version && version(&v) == 0) t->rsmi_deep_sleep_field = v.major >= 6;
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
  lm_dl_close(&lib);
  return NULL;
}

lm_telemetry *lm_telemetry_open_nvml(char *why, size_t cap) {
  /* LUMEN_NVML_LIBRARY names the one library to try (another NVML build,
   * or a stand-in); otherwise the driver's names. */
  static const char *const names[] = {"libnvidia-ml.so.1", "libnvidia-ml.so"};
  const char *env = getenv("LUMEN_NVML_LIBRARY");
  const char *named[] = {env};
  int from_env = env && *env;
  lm_dl_lib lib;
  if (lm_dl_open(&lib, from_env ? named : names, from_env ? 1 : sizeof names / sizeof *names, 0, NULL) != LM_OK) {
    snprintf(why, cap, "%s not found (%s)", from_env ? env : names[0], lib.error);
    return NULL;
  }
  int (*init)(void) = NULL, (*count)(unsigned int *) = NULL, (*handle)(unsigned int, nvmlDevice_t *) = NULL;
  lm_telemetry *t = calloc(1, sizeof *t);
  if (!t) {
    snprintf(why, cap, "out of memory");
    goto fail;
  }
  t->kind = SAMPLER_NVML;
  t->lib = lib;
  /* Clocks are what a sample needs; power and temperature are optional. */
  const lm_dl_sym syms[] = {{"nvmlInit_v2", &init, 1, NULL},
                            {"nvmlDeviceGetCount_v2", &count, 1, NULL},
                            {"nvmlDeviceGetHandleByIndex_v2", &handle, 1, NULL},
                            {"nvmlDeviceGetClockInfo", &t->nvml_clock, 1, NULL},
                            {"nvmlShutdown", &t->nvml_shutdown, 0, NULL},
                            {"nvmlDeviceGetPowerUsage", &t->nvml_power, 0, NULL},
                            {"nvmlDeviceGetTemperature", &t->nvml_temp, 0, NULL}};
  lm_diag d;
  lm_diag_clear(&d);
  if (lm_dl_resolve(&lib, syms, sizeof syms / sizeof *syms, &d) != LM_OK) {
    snprintf(why, cap, "%s lacks %s (not an NVML library, or too old)", from_env ? env : "libnvidia-ml", d.field);
    goto fail;
  }
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
  for (uint32_t i = 0; i < t->n_gpus; i++)
    if (handle(i, &t->devices[i]) != 0) t->devices[i] = NULL;
  return t;
fail:
  free(t);
  lm_dl_close(&lib);
  return NULL;
}

/* The current frequency of clock `type` of GPU g in MHz, or -1. */
static double rsmi_clock(lm_telemetry *t, uint32_t g, int type) {
  rsmi_freq_buffer b;
  memset(&b, 0, sizeof b);
  if (t->rsmi_dev_gpu_clk_freq_get(g, type, &b) != 0) return -1;
  const unsigned char *bytes = (const unsigned char *)b.words;
  size_t at = t->rsmi_deep_sleep_field ? 4 : 0;
  uint32_t n, current;
  memcpy(&n, bytes + at, sizeof n);
  memcpy(&current, bytes + at + 4, sizeof current);
  if (n == 0 || n > RSMI_MAX_FREQS || current >= n) return -1;
  uint64_t hz;
  memcpy(&hz, bytes + (t->rsmi_deep_sleep_field ? 16 : 8) + (size_t)current * 8, sizeof hz);
  return (double)hz / 1e6;
}

/* The highest frequency rocm-smi lists for clock `type` of GPU g (MHz),
 * or -1. */
static double rsmi_top_clock(lm_telemetry *t, uint32_t g, int type) {
  rsmi_freq_buffer b;
  memset(&b, 0, sizeof b);
  if (!t->rsmi_dev_gpu_clk_freq_get || t->rsmi_dev_gpu_clk_freq_get(g, type, &b) != 0) return -1;
  const unsigned char *bytes = (const unsigned char *)b.words;
  uint32_t n;
  memcpy(&n, bytes + (t->rsmi_deep_sleep_field ? 4 : 0), sizeof n);
  if (n == 0 || n > RSMI_MAX_FREQS) return -1;
  uint64_t top = 0;
  for (uint32_t i = 0; i < n; i++) {
    uint64_t hz;
    memcpy(&hz, bytes + (t->rsmi_deep_sleep_field ? 16 : 8) + (size_t)i * 8, sizeof hz);
    if (hz > top) top = hz;
  }
  return top ? (double)top / 1e6 : -1;
}

int lm_telemetry_peak_clocks(lm_telemetry *t, int gpu, double *sclk_mhz, double *mclk_mhz) {
  *sclk_mhz = *mclk_mhz = -1;
  if (!t || t->kind != SAMPLER_RSMI || gpu < 0 || (uint32_t)gpu >= t->n_gpus) return -1;
  *sclk_mhz = rsmi_top_clock(t, (uint32_t)gpu, RSMI_CLK_TYPE_SYS);
  *mclk_mhz = rsmi_top_clock(t, (uint32_t)gpu, RSMI_CLK_TYPE_MEM);
  return *sclk_mhz > 0 || *mclk_mhz > 0 ? 0 : -1;
}

const char *lm_telemetry_name(const lm_telemetry *t) {
  if (!t) return "none";
  return t->kind == SAMPLER_DEVICE ? t->device_source : t->kind == SAMPLER_RSMI ? "rocm-smi" : "nvml";
}

void lm_telemetry_use(lm_telemetry *t, int gpu) {
  /* Read first: once the bit is set, a dispatch writes no shared line. */
  if (t && gpu >= 0 && gpu < 64 && !(__atomic_load_n(&t->used, __ATOMIC_RELAXED) >> gpu & 1))
    __atomic_fetch_or(&t->used, 1ULL << gpu, __ATOMIC_RELAXED);
}

void lm_telemetry_leave(lm_telemetry *t, uint64_t gpus) {
  if (t) t->left = gpus;
}

static int left_to_others(const lm_telemetry *t, int gpu) { return gpu >= 0 && gpu < 64 && (t->left >> gpu & 1); }

void lm_telemetry_sample(lm_telemetry *t, lm_telemetry_emit emit) {
  if (!t) return;
  switch (t->kind) {
  case SAMPLER_DEVICE: {
    int gpu[256];
    unsigned long long t_ns[256];
    double sclk[256], mclk[256];
    size_t n;
    while ((n = t->device_log(t->next_sample, gpu, t_ns, sclk, mclk, 256)) > 0) {
      for (size_t i = 0; i < n; i++)
        if (!left_to_others(t, gpu[i])) emit("C\t%d\t%llu\t%.3f\t%.3f\n", gpu[i], t_ns[i], sclk[i], mclk[i]);
      t->next_sample += n;
    }
    return;
  }
  case SAMPLER_RSMI: {
    /* Only the GPUs that run dispatches (device index = GPU id). */
    uint64_t used = __atomic_load_n(&t->used, __ATOMIC_RELAXED);
    for (uint32_t g = 0; g < t->n_gpus && g < 64 && t->rsmi_dev_gpu_clk_freq_get; g++) {
      if (!(used & (1ULL << g)) || left_to_others(t, (int)g)) continue;
      double sys_mhz = rsmi_clock(t, g, RSMI_CLK_TYPE_SYS), mem_mhz = rsmi_clock(t, g, RSMI_CLK_TYPE_MEM);
      if (!(sys_mhz > 0) || !(mem_mhz > 0)) continue;
      char power[32] = "-", temp[32] = "-";
      uint64_t uw = 0;
      int64_t mdeg = 0;
      if (t->rsmi_dev_power_ave_get && t->rsmi_dev_power_ave_get(g, 0, &uw) == 0)
        snprintf(power, sizeof power, "%.3f", (double)uw / 1e6);
      if (t->rsmi_dev_temp_metric_get &&
          t->rsmi_dev_temp_metric_get(g, RSMI_TEMP_TYPE_EDGE, RSMI_TEMP_CURRENT, &mdeg) == 0)
        snprintf(temp, sizeof temp, "%.3f", (double)mdeg / 1e3);
      emit("C\t%u\t%llu\t%.3f\t%.3f\t%s\t%s\n", g, lm_clock_ns(), sys_mhz, mem_mhz, power, temp);
    }
    return;
  }
  case SAMPLER_NVML:
    for (uint32_t g = 0; g < t->n_gpus && t->nvml_clock; g++) {
      unsigned int sm = 0, mem = 0, mw = 0, deg = 0;
      if (left_to_others(t, (int)g) || !t->devices[g]) continue;
      unsigned long long at = lm_clock_ns();
      if (t->nvml_clock(t->devices[g], NVML_CLOCK_SM, &sm) != 0 ||
          t->nvml_clock(t->devices[g], NVML_CLOCK_MEM, &mem) != 0)
        continue;
      /* A GPU without a power or temperature sensor answers
       * NVML_ERROR_NOT_SUPPORTED: the reading stays blank. */
      char power[32] = "-", temp[32] = "-";
      if (t->nvml_power && t->nvml_power(t->devices[g], &mw) == 0) snprintf(power, sizeof power, "%.3f", mw / 1e3);
      if (t->nvml_temp && t->nvml_temp(t->devices[g], NVML_TEMPERATURE_GPU, &deg) == 0)
        snprintf(temp, sizeof temp, "%u", deg);
      emit("C\t%u\t%llu\t%u\t%u\t%s\t%s\n", g, at, sm, mem, power, temp);
    }
    return;
  }
}

void lm_telemetry_close(lm_telemetry *t) {
  if (!t) return;
  if (t->kind == SAMPLER_RSMI && t->rsmi_shut_down) t->rsmi_shut_down();
  if (t->kind == SAMPLER_NVML && t->nvml_shutdown) t->nvml_shutdown();
  lm_dl_close(&t->lib);
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
      snprintf(b->why, sizeof b->why, "built; not usable: %s; `lumen profile --backend cupti` needs an "
               "NVIDIA GPU and its driver", gpus == 0 ? "the CUDA driver reports no NVIDIA GPU" : driver);
    else
      snprintf(b->why, sizeof b->why, "%s: `lumen profile --backend cupti` (also chosen when "
               "rocprofiler-sdk has no GPU), CUPTI's range profiler injected through "
               "CUDA_INJECTION64_PATH", driver);
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
      snprintf(b->why, sizeof b->why, "Profiler Host API (%.150s): --plan --arch "
                                      "sm_70|sm_75|sm_80|sm_86|sm_89|sm_90|sm_100, no GPU needed", desc);
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
    snprintf(b->why, sizeof b->why, "%s", t ? "AMD GPU clocks, power and temperature" : why);
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
    snprintf(b->why, sizeof b->why, "%s",
             t ? "NVIDIA GPU clocks, power and temperature (LUMEN_NVML_LIBRARY names another library)" : why);
    lm_telemetry_close(t);
  }
  return n;
}
