/*
 * cupti_host.h - CUPTI's Profiler Host API, loaded at run time: the part of
 * CUPTI that needs no GPU. Given a chip name ("GH100") it says which metrics
 * the chip has, builds the config image for a list of metrics and counts
 * the passes that image needs. lumen uses it to check its NVIDIA metric
 * files and to plan counter sets on any machine; the library is opened with
 * dlopen so that a lumen without CUDA still builds and runs.
 */
#ifndef LUMEN_CUPTI_HOST_H
#define LUMEN_CUPTI_HOST_H

#include <stddef.h>
#include <stdint.h>

#include "base/base.h"

typedef struct lm_cupti_host lm_cupti_host;

/* lm_cupti_host_built: 1 when lumen was built with the CUPTI headers. */
int lm_cupti_host_built(void);

/* lm_cupti_host_open: load libcupti (LUMEN_CUPTI_LIBRARY names it, else
 * the one found when lumen was built, else the loader's search path) and
 * resolve the Host API. Fails with LM_ENOTFOUND and a reason when lumen was
 * built without the CUDA headers or the library cannot be loaded. Free
 * with lm_cupti_host_close. */
lm_status lm_cupti_host_open(lm_cupti_host **out, lm_diag *diag);
void lm_cupti_host_close(lm_cupti_host *h);

/* lm_cupti_host_describe: "CUPTI API 130001, 30 chips" and the library
 * path, for `lumen list backends`. */
void lm_cupti_host_describe(const lm_cupti_host *h, char *out, size_t cap);

/* lm_cupti_host_has_chip: 1 when the Host API supports `chip`. */
int lm_cupti_host_has_chip(lm_cupti_host *h, const char *chip);

/* lm_cupti_host_check: which of names[0..n) the chip lacks. For each
 * unknown name, bad[i] is set to 1 (bad may be NULL); *n_bad receives the
 * count. A name is known when CUPTI describes it and accepts it in a
 * config. Fails only when the chip itself is unknown. */
lm_status lm_cupti_host_check(lm_cupti_host *h, const char *chip, const char *const *names,
                              size_t n, uint8_t *bad, size_t *n_bad, lm_diag *diag);

/* lm_cupti_host_passes: build the config image for names[0..n) on chip and
 * ask CUPTI how many passes it needs. *image_bytes (may be NULL) receives
 * the image's size; image (may be NULL) receives a copy of the image, which
 * the caller frees with lm_free. */
lm_status lm_cupti_host_passes(lm_cupti_host *h, const char *chip, const char *const *names,
                               size_t n, int32_t *passes, size_t *image_bytes, uint8_t **image,
                               lm_diag *diag);

/* lm_cuda_driver_probe: the number of NVIDIA GPUs the CUDA driver
 * (libcuda.so.1, loaded at run time) reports, or -1 with the reason in why
 * when there is no driver or it fails to start. */
int lm_cuda_driver_probe(char *why, size_t cap);

/* What the CUDA driver says about one GPU, before any profiling. */
typedef struct lm_cuda_device {
  int major, minor; /* compute capability: 9.0 on H100/H200 */
  int sms;          /* streaming multiprocessors */
  char name[256];   /* "NVIDIA H100 80GB HBM3" */
} lm_cuda_device;

/* lm_cuda_device_info: the driver's facts about GPU `index` (the CUDA
 * ordinal). Returns 0, or -1 with the reason in why (no driver, no such
 * GPU, the driver did not start). */
int lm_cuda_device_info(int index, lm_cuda_device *out, char *why, size_t cap);

/* lm_cuda_admin_only: whether the text of the driver's parameters
 * (/proc/driver/nvidia/params) restricts the performance counters to
 * administrators ("RmProfilingAdminOnly: 1", which the module option
 * NVreg_RestrictProfilingToAdminUsers sets). 1 restricted, 0 not, -1 when
 * the text does not say. */
int lm_cuda_admin_only(const char *params_text);
/* lm_cuda_has_sys_admin: whether a process status text (/proc/self/status)
 * holds CAP_SYS_ADMIN among its effective capabilities ("CapEff:", hex),
 * which lets a user who is not root read restricted counters. 1 yes, 0 no,
 * -1 when the text does not say. */
int lm_cuda_has_sys_admin(const char *status_text);

/* lm_cupti_host_path: the libcupti file the host opened ("" when unknown);
 * borrowed. */
const char *lm_cupti_host_path(const lm_cupti_host *h);

#endif
