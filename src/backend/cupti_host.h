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

#endif
