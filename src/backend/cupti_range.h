/*
 * cupti_range.h - the host side of collection through CUPTI's Range
 * Profiler, kept apart from the injection adapter (src/tool/cupti.c)
 * so that it can be tested without a GPU: the config image of each counter
 * set (Profiler Host API), the decoding of a counter-data image into
 * lumen's columns (one per CUPTI metric name, as the sm_* files name them),
 * the matching of auto ranges to the launches that made them, kernel-name
 * demangling and the wording of CUPTI's errors.
 *
 * Counter data reaches the decoder through lm_cupti_source: the adapter
 * uses the one over a real counter-data image (lm_cupti_source_image); a
 * test can feed its own.
 */
#ifndef LUMEN_CUPTI_RANGE_H
#define LUMEN_CUPTI_RANGE_H

#include <stddef.h>
#include <stdint.h>

#include "backend/cupti_host.h"
#include "base/base.h"

/* ------------------------------------------------------------- errors */

/* The CUptiResult values lumen explains (cupti_result.h; checked against
 * the header when it is present at build time). */
enum {
  LM_CUPTI_SUCCESS = 0,
  LM_CUPTI_INVALID_DEVICE = 2,
  LM_CUPTI_INVALID_OPERATION = 7,
  LM_CUPTI_OUT_OF_MEMORY = 8,
  LM_CUPTI_NOT_INITIALIZED = 15,
  LM_CUPTI_NOT_SUPPORTED = 27,
  LM_CUPTI_VIRTUALIZED_DEVICE_NOT_SUPPORTED = 33,
  LM_CUPTI_INSUFFICIENT_PRIVILEGES = 35,
  LM_CUPTI_MULTIPLE_SUBSCRIBERS = 39,
  LM_CUPTI_VIRTUALIZED_INSUFFICIENT_PRIVILEGES = 40,
  LM_CUPTI_CMP_DEVICE_NOT_SUPPORTED = 42,
  LM_CUPTI_MIG_DEVICE_NOT_SUPPORTED = 43,
  LM_CUPTI_UNKNOWN = 999
};

/* CUPTI API versions (cuptiGetVersion, CUPTI_API_VERSION in
 * cupti_version.h; docs/nvidia.md, "CUPTI by version"): 24 is CUDA 12.6
 * (its first release and Update 2 alike), 26 is 12.8, and from 13.0 on
 * the value is xxyyzz (130000 for 13.0). Macros, for #if. */
#define LM_CUPTI_API_12_6                                                      \
  24 /* Profiler Host API; Range Profiler from Update 2 */
#define LM_CUPTI_API_12_8 26 /* CUPTI_ERROR_MIG_DEVICE_NOT_SUPPORTED */
#define LM_CUPTI_API_13_0                                                      \
  130000 /* cuptiSubscribe_v2, CUpti_SubscriberParams                          \
          */

/* lm_cupti_library_check: whether a loaded libcupti can collect for lumen,
 * from what it says about itself: version (cuptiGetVersion's value; 0 when
 * it has no cuptiGetVersion), has_host (the Profiler Host API's functions
 * resolve) and has_range (the Range Profiler's functions resolve). lumen
 * needs both APIs, which CUDA 12.6 Update 2 (API 24) was the first to
 * ship. Returns LM_OK, or LM_EINVAL with the true reason in why (cap
 * bytes): the version found and the version needed. path (may be NULL)
 * names the library in the message. */
lm_status lm_cupti_library_check(const char *path, uint32_t version,
                                 int has_host, int has_range, char *why,
                                 size_t cap);

/* lm_cupti_explain: one line for a failed CUPTI call: what failed, CUPTI's
 * own text (cupti_text, may be NULL) and, for the usual failures, the fix
 * (the driver setting that allows counter access, the chip that is not
 * supported, the memory that ran out). Returns the lm_status that fits
 * (LM_EINVAL for permissions and unsupported devices, LM_ENOMEM, LM_EIO). */
lm_status lm_cupti_explain(int result, const char *call, const char *cupti_text, char *out,
                           size_t cap);
/* lm_cupti_explain_chip: the same, naming the device's chip (NULL or "":
 * not known) where CUPTI does not support the device, next to the chips
 * lumen has definitions for. */
lm_status lm_cupti_explain_chip(int result, const char *call, const char *cupti_text, const char *chip,
                                char *out, size_t cap);
/* lm_cupti_lumen_chips: the chips of lumen's NVIDIA definitions, with
 * their folders ("GA100 (sm_80), ..."), for messages. */
const char *lm_cupti_lumen_chips(void);

/* --------------------------------------------------------- demangling */

/* lm_cupti_demangle: the demangled form of a C++ symbol ("_Z5vcopyPKfPfm"
 * -> "vcopy(float const*, float*, unsigned long)") through the C++
 * runtime's __cxa_demangle (found in the process or in libstdc++.so.6),
 * or the name as it is when it is not mangled or nothing can demangle it.
 * Writes into out (cap bytes) and returns out. */
const char *lm_cupti_demangle(const char *name, char *out, size_t cap);

/* -------------------------------------------------- config per counter set */

/* The config images of a collection: one per counter set, built on the
 * host for the device's chip. */
typedef struct lm_cupti_images {
  int n_sets;
  uint8_t **image; /* per set, owned */
  size_t *bytes;   /* per set */
  int32_t *passes; /* per set: CUPTI's pass count */
} lm_cupti_images;

/* lm_cupti_images_build: images for sets[0..n_sets) (each a NULL-terminated
 * list of CUPTI metric names) on chip. Fails with the first set CUPTI does
 * not accept (naming it). Free with lm_cupti_images_fini (also after a
 * failure). */
lm_status lm_cupti_images_build(lm_cupti_host *h, const char *chip, char *const *const *sets,
                                int n_sets, lm_cupti_images *out, lm_diag *diag);
void lm_cupti_images_fini(lm_cupti_images *im);

/* ------------------------------------------------------- counter data */

/* Where decoded ranges come from: a counter-data image (through CUPTI), or
 * test data. Each function returns LM_OK or fills diag. */
typedef struct lm_cupti_source {
  void *ctx;
  lm_status (*n_ranges)(void *ctx, size_t *n, lm_diag *diag);
  /* name: borrowed until the next call */
  lm_status (*range_name)(void *ctx, size_t range, const char **name, lm_diag *diag);
  /* values[0..n): one per metric, NaN where CUPTI has none */
  lm_status (*evaluate)(void *ctx, size_t range, const char *const *metrics, size_t n,
                        double *values, lm_diag *diag);
} lm_cupti_source;

/* What the decoder hands over for each launch of a session:
 * values[0..n_metrics) in the order of the set's metrics (NaN: not
 * available), or values NULL when CUPTI dropped the launch's range. */
typedef void (*lm_cupti_values_fn)(void *user, size_t launch, const double *values);

/* lm_cupti_decode: match the ranges of src to the n_launches launches of
 * one auto-range session and evaluate metrics[0..n_metrics) for each.
 * An auto range is named by the number of its launch in the session
 * (counted from 0 or from 1: the lowest name decides); a range whose name
 * is not a number is matched by its position. on_values is called once
 * per launch, in launch order. *n_dropped (may be NULL) receives the
 * launches without a range. Fails (LM_EDATA) on a range that matches no
 * launch or two ranges for one launch; no callback is made then. */
lm_status lm_cupti_decode(const lm_cupti_source *src, size_t n_launches,
                          const char *const *metrics, size_t n_metrics,
                          lm_cupti_values_fn on_values, void *user, size_t *n_dropped,
                          lm_diag *diag);

/* The source over a real counter-data image: ranges and names through the
 * Range Profiler's image queries, values through the Host API's
 * evaluation for chip. The image is borrowed and must be one the Range
 * Profiler filled: libnvperf_host does not check it (a corrupt image
 * crashes the process). Free with
 * lm_cupti_source_image_free. Fails where lumen was built without CUPTI. */
lm_status lm_cupti_source_image_new(lm_cupti_host *h, const char *chip, const char *const *metrics,
                                    size_t n_metrics, const uint8_t *image, size_t bytes,
                                    lm_cupti_source *out, lm_diag *diag);
void lm_cupti_source_image_free(lm_cupti_source *src);

#endif
