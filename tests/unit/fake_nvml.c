/*
 * fake_nvml.c - a stand-in for libnvidia-ml for tests on machines without
 * an NVIDIA GPU, loaded by lumen through LUMEN_NVML_LIBRARY exactly as the
 * driver's library would be. It models two GPUs whose readings evolve with
 * time (CLOCK_BOOTTIME, the clock of dispatch timestamps): a GPU marked
 * busy (fake_nvml_busy) boosts its SM clock towards its maximum, its board
 * power follows the clock's cube with a lag (NVML reports a filtered
 * power), and its die temperature follows the power slowly; an idle GPU
 * relaxes back. Small pseudo-random noise is added. The readings are not
 * known to the tests, which check only how lumen orders and attributes
 * them. Variants (compile definitions): FAKE_NVML_NO_POWER answers
 * NVML_ERROR_NOT_SUPPORTED for power, FAKE_NVML_INIT_FAILS fails
 * nvmlInit_v2, FAKE_NVML_NO_CLOCKS lacks nvmlDeviceGetClockInfo.
 */
#include <math.h>
#include <stdint.h>
#include <time.h>

#define EXPORT __attribute__((visibility("default")))

enum { NVML_SUCCESS = 0, NVML_ERROR_INVALID_ARGUMENT = 2, NVML_ERROR_NOT_SUPPORTED = 3,
       NVML_ERROR_DRIVER_NOT_LOADED = 9 };
enum { N_GPUS = 2 };

/* The calls NVML exports that lumen uses (its own library has no header
 * here), and the test's switch. */
EXPORT int nvmlInit_v2(void);
EXPORT int nvmlShutdown(void);
EXPORT int nvmlDeviceGetCount_v2(unsigned int *n);
EXPORT int nvmlDeviceGetHandleByIndex_v2(unsigned int i, void **out);
EXPORT int nvmlDeviceGetClockInfo(void *handle, int type, unsigned int *mhz);
EXPORT int nvmlDeviceGetPowerUsage(void *handle, unsigned int *mw);
EXPORT int nvmlDeviceGetTemperature(void *handle, int sensor, unsigned int *deg);
EXPORT void fake_nvml_busy(unsigned int i, int on);

typedef struct gpu {
  int busy;
  double t;       /* seconds of the last update */
  double sclk;    /* MHz */
  double power;   /* W, filtered */
  double temp;    /* degrees C */
  uint64_t noise; /* generator state */
} gpu;

static gpu G[N_GPUS];
static int initialized;

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_BOOTTIME, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static double jitter(gpu *g) {
  g->noise = g->noise * 6364136223846793005ULL + 1442695040888963407ULL;
  return ((double)(g->noise >> 11) / 9007199254740992.0 - 0.5) * 0.02; /* +-1 % */
}

/* Advance GPU g's state to now: first-order lags towards the busy or
 * idle targets, with time constants of a few milliseconds (clock, power)
 * and a fraction of a second (temperature). */
static void advance(gpu *g) {
  double t = now_s(), dt = t - g->t;
  if (dt <= 0) return;
  g->t = t;
  double target_clk = g->busy ? 1980 : 345;
  g->sclk += (target_clk - g->sclk) * (1 - exp(-dt / 0.002));
  double f = g->sclk / 1980;
  double target_w = 72 + (g->busy ? 560 : 40) * f * f * f;
  g->power += (target_w - g->power) * (1 - exp(-dt / 0.004));
  g->temp += (30 + g->power * 0.08 - g->temp) * (1 - exp(-dt / 0.4));
}

static gpu *device(void *handle) {
  gpu *g = handle;
  return initialized && g >= G && g < G + N_GPUS ? g : NULL;
}

EXPORT int nvmlInit_v2(void) {
#ifdef FAKE_NVML_INIT_FAILS
  return NVML_ERROR_DRIVER_NOT_LOADED;
#else
  double t = now_s();
  for (int i = 0; i < N_GPUS; i++) {
    G[i] = (gpu){0, t, 345, 75, 34 + i, 0x9e3779b97f4a7c15ULL * (uint64_t)(i + 1)};
  }
  initialized = 1;
  return NVML_SUCCESS;
#endif
}

EXPORT int nvmlShutdown(void) {
  initialized = 0;
  return NVML_SUCCESS;
}

EXPORT int nvmlDeviceGetCount_v2(unsigned int *n) {
  *n = initialized ? N_GPUS : 0;
  return initialized ? NVML_SUCCESS : NVML_ERROR_DRIVER_NOT_LOADED;
}

EXPORT int nvmlDeviceGetHandleByIndex_v2(unsigned int i, void **out) {
  if (!initialized || i >= N_GPUS) return NVML_ERROR_INVALID_ARGUMENT;
  *out = &G[i];
  return NVML_SUCCESS;
}

#ifndef FAKE_NVML_NO_CLOCKS
EXPORT int nvmlDeviceGetClockInfo(void *handle, int type, unsigned int *mhz) {
  gpu *g = device(handle);
  if (!g || (type != 1 && type != 2)) return NVML_ERROR_INVALID_ARGUMENT;
  advance(g);
  *mhz = type == 1 ? (unsigned int)lround(g->sclk * (1 + jitter(g) / 4)) : (g->busy ? 2619 : 1593);
  return NVML_SUCCESS;
}
#endif

EXPORT int nvmlDeviceGetPowerUsage(void *handle, unsigned int *mw) {
  gpu *g = device(handle);
  if (!g) return NVML_ERROR_INVALID_ARGUMENT;
#ifdef FAKE_NVML_NO_POWER
  (void)mw;
  return NVML_ERROR_NOT_SUPPORTED;
#else
  advance(g);
  *mw = (unsigned int)lround(g->power * (1 + jitter(g)) * 1000);
  return NVML_SUCCESS;
#endif
}

EXPORT int nvmlDeviceGetTemperature(void *handle, int sensor, unsigned int *deg) {
  gpu *g = device(handle);
  if (!g || sensor != 0) return NVML_ERROR_INVALID_ARGUMENT;
  advance(g);
  *deg = (unsigned int)lround(g->temp);
  return NVML_SUCCESS;
}

/* fake_nvml_busy: the test's workload starts (on 1) or stops (0) on GPU i. */
EXPORT void fake_nvml_busy(unsigned int i, int on) {
  if (i >= N_GPUS) return;
  advance(&G[i]);
  G[i].busy = on;
}
