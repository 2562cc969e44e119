/*
 * simgpu.c - the simulated GPU runtime (lumen/simgpu.h), a test and
 * demonstration stand-in for HIP: programs launch kernels through it, and
 * it hands every launch, range and mark to the simulated rocprofiler-sdk's
 * device (simdevice.c), which replays a recording and drives whatever tool
 * registered with the SDK. It holds no profiling logic of its own.
 */
#include <stdio.h>

#include "lumen/simgpu.h"
#include "sim/simsdk.h"

#define EXPORT __attribute__((visibility("default")))

EXPORT int simgpu_init(void) {
  if (simsdk_device_init() != 0) {
    fprintf(stderr, "simgpu: set LUMEN_SIM_RECORDING to a readable recorded workload folder\n");
    return -1;
  }
  return 0;
}

static unsigned dim(unsigned v) { return v ? v : 1; }

EXPORT int simgpu_launch(const char *name, const simgpu_launch_params *p, int gpu) {
  simsdk_launch l = {{p->grid.x, dim(p->grid.y), dim(p->grid.z)},
                     {p->workgroup.x, dim(p->workgroup.y), dim(p->workgroup.z)},
                     p->lds_bytes, p->scratch_bytes, p->arch_vgprs, p->accum_vgprs, p->sgprs};
  char why[512];
  if (simsdk_device_launch(name, &l, gpu, why, sizeof why) != 0) {
    fprintf(stderr, "simgpu: %s\n", why);
    return -1;
  }
  return 0;
}

EXPORT void simgpu_synchronize(void) { simsdk_device_wait(); }

EXPORT void simgpu_range_push(const char *message) {
  simsdk_device_marker(SDK_MARKER_roctxRangePushA, message, 0);
}

EXPORT void simgpu_range_pop(void) { simsdk_device_marker(SDK_MARKER_roctxRangePop, NULL, 0); }

/* Process-wide ranges, as roctxRangeStartA / roctxRangeStop: the runtime
 * numbers them (from 1, as ROCTx does) and a range may stop on another
 * thread than the one that started it. */
EXPORT unsigned long long simgpu_range_start(const char *message) {
  static unsigned long long next;
  unsigned long long id = __atomic_add_fetch(&next, 1, __ATOMIC_RELAXED);
  simsdk_device_marker(SDK_MARKER_roctxRangeStartA, message, id);
  return id;
}

EXPORT void simgpu_range_stop(unsigned long long id) {
  simsdk_device_marker(SDK_MARKER_roctxRangeStop, NULL, id);
}
