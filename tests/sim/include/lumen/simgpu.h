/*
 * lumen/simgpu.h - a simulated GPU runtime, for tests and demonstrations
 * of `lumen profile` on machines without a GPU. It is NOT a measurement:
 * every counter value it reports is replayed from a recorded workload
 * folder named by the environment variable LUMEN_SIM_RECORDING.
 *
 * A program launches named kernels with launch parameters, from any
 * number of threads; the runtime gives each launch the timestamps and
 * counter values of a recorded dispatch of the same kernel (or of a
 * recorded kernel chosen by the name's position, when the recording has
 * no kernel of that name).
 */
#ifndef LUMEN_SIMGPU_H
#define LUMEN_SIMGPU_H

#ifdef __cplusplus
extern "C" {
#endif

typedef struct simgpu_dim3 {
  unsigned x, y, z;
} simgpu_dim3;

typedef struct simgpu_launch_params {
  simgpu_dim3 grid;       /* work-items */
  simgpu_dim3 workgroup;  /* work-items per workgroup */
  unsigned lds_bytes;     /* LDS per workgroup */
  unsigned scratch_bytes; /* scratch per work-item */
  unsigned arch_vgprs, accum_vgprs, sgprs;
} simgpu_launch_params;

/* simgpu_init: set up the runtime (idempotent). Returns 0, or -1 with a
 * message on stderr when LUMEN_SIM_RECORDING is unset or unreadable. */
int simgpu_init(void);

/* simgpu_launch: run kernel `name` on GPU `gpu` (0-based). Returns 0 or -1. */
int simgpu_launch(const char *name, const simgpu_launch_params *params, int gpu);

/* simgpu_synchronize: wait for every launch to finish. */
void simgpu_synchronize(void);

/* Annotations in the style of ROCTx, delivered to tools as ROCTx calls: a
 * per-thread range stack (push/pop) and process-wide ranges (start returns
 * an id, stop takes it, from any thread; they need not nest). */
void simgpu_range_push(const char *message);
void simgpu_range_pop(void);
unsigned long long simgpu_range_start(const char *message);
void simgpu_range_stop(unsigned long long id);

#ifdef __cplusplus
}
#endif

#endif
