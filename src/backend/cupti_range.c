/*
 * cupti_range.c - the GPU-free half of collection through CUPTI's Range
 * Profiler: error wording, demangling, config images per counter set and
 * the decoding of auto ranges into per-launch values.
 *
 * Matching ranges to launches is by the number CUPTI gives each auto range
 * (its launch's place in the session), not by position, so that a dropped
 * range cannot shift the values of every later launch onto the wrong one.
 */
#include "backend/cupti_range.h"
#include "backend/backend.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef LUMEN_HAVE_CUPTI
#include <cupti_result.h>
#include <cupti_version.h>
#define SAME(ours, theirs) _Static_assert((int)(ours) == (int)(theirs), #theirs)
SAME(LM_CUPTI_INSUFFICIENT_PRIVILEGES, CUPTI_ERROR_INSUFFICIENT_PRIVILEGES);
SAME(LM_CUPTI_OUT_OF_MEMORY, CUPTI_ERROR_OUT_OF_MEMORY);
SAME(LM_CUPTI_NOT_SUPPORTED, CUPTI_ERROR_NOT_SUPPORTED);
SAME(LM_CUPTI_MULTIPLE_SUBSCRIBERS, CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED);
SAME(LM_CUPTI_VIRTUALIZED_INSUFFICIENT_PRIVILEGES,
     CUPTI_ERROR_VIRTUALIZED_DEVICE_INSUFFICIENT_PRIVILEGES);
#if CUPTI_API_VERSION >=                                                       \
    LM_CUPTI_API_12_8 /* 12.6's list ends at CMP_DEVICE (42) */
SAME(LM_CUPTI_MIG_DEVICE_NOT_SUPPORTED, CUPTI_ERROR_MIG_DEVICE_NOT_SUPPORTED);
#endif
SAME(LM_CUPTI_CMP_DEVICE_NOT_SUPPORTED, CUPTI_ERROR_CMP_DEVICE_NOT_SUPPORTED);
SAME(LM_CUPTI_INVALID_DEVICE, CUPTI_ERROR_INVALID_DEVICE);
SAME(LM_CUPTI_NOT_INITIALIZED, CUPTI_ERROR_NOT_INITIALIZED);
#endif

/* ------------------------------------------------------------- errors */

/* The CUDA release of a CUPTI API version, for messages. */
static void cuda_of(uint32_t version, char *out, size_t cap) {
  if (version >= 100000)
    snprintf(out, cap, "CUDA %u.%u", version / 10000, version / 100 % 100);
  else if (version >= LM_CUPTI_API_12_6)
    snprintf(out, cap, "CUDA 12.6 or later");
  else if (version >= 19)
    snprintf(out, cap, "CUDA 12.0 to 12.5");
  else if (version > 0)
    snprintf(out, cap, "CUDA 11 or older");
  else
    snprintf(out, cap, "version unknown: no cuptiGetVersion");
}

lm_status lm_cupti_library_check(const char *path, uint32_t version,
                                 int has_host, int has_range, char *why,
                                 size_t cap) {
  char cuda[64];
  cuda_of(version, cuda, sizeof cuda);
  const char *lib = path && *path ? path : "libcupti";
  if (has_host && has_range) {
    snprintf(why, cap, "%s: CUPTI API %u (%s)", lib, (unsigned)version, cuda);
    return LM_OK;
  }
  if (version < LM_CUPTI_API_12_6)
    snprintf(why, cap,
             "%s is too old: CUPTI API %u (%s); lumen needs CUPTI API %d or "
             "later (CUDA 12.6 "
             "Update 2 or later, for the Profiler Host and Range Profiler "
             "APIs): install a newer "
             "CUDA toolkit or set LUMEN_CUPTI_LIBRARY to its libcupti.so",
             lib, (unsigned)version, cuda, LM_CUPTI_API_12_6);
  else if (version == LM_CUPTI_API_12_6 && has_host)
    snprintf(why, cap,
             "%s is CUPTI API %u from CUDA 12.6 before Update 2: it has the "
             "Profiler Host API but "
             "not the Range Profiler API (cupti_range_profiler.h, added in "
             "CUDA 12.6 Update 2), "
             "which lumen collects with: install CUDA 12.6 Update 2 or later, "
             "or set "
             "LUMEN_CUPTI_LIBRARY to its libcupti.so",
             lib, (unsigned)version);
  else
    snprintf(
        why, cap,
        "%s (CUPTI API %u, %s) lacks the %s%s%s API lumen needs, although its "
        "version "
        "should have it: set LUMEN_CUPTI_LIBRARY to a complete libcupti.so",
        lib, (unsigned)version, cuda, has_host ? "" : "Profiler Host",
        !has_host && !has_range ? " and the " : "",
        has_range ? "" : "Range Profiler");
  return LM_EINVAL;
}

/* The chips of lumen's NVIDIA definition folders (metrics/sm_*, chip: in
 * arch.yaml); unit/test_cupti_range checks this list against the built-in
 * catalogs, so that it cannot drift from them. */
static const char lumen_chips[] =
    "GV100 (sm_70), TU104 (sm_75), GA100 (sm_80), GA102 (sm_86), AD102 (sm_89), GH100 (sm_90), "
    "GB100 (sm_100)";

const char *lm_cupti_lumen_chips(void) { return lumen_chips; }

lm_status lm_cupti_explain(int result, const char *call, const char *cupti_text, char *out,
                           size_t cap) {
  return lm_cupti_explain_chip(result, call, cupti_text, NULL, out, cap);
}

lm_status lm_cupti_explain_chip(int result, const char *call, const char *cupti_text, const char *chip,
                                char *out, size_t cap) {
  char fix[512] = "";
  lm_status st = LM_EIO;
  switch (result) {
  case LM_CUPTI_INSUFFICIENT_PRIVILEGES:
  case LM_CUPTI_VIRTUALIZED_INSUFFICIENT_PRIVILEGES:
    snprintf(fix, sizeof fix,
             ": this user may not read the GPU performance counters; load the NVIDIA kernel module "
             "with NVreg_RestrictProfilingToAdminUsers=0 (e.g. `options nvidia "
             "NVreg_RestrictProfilingToAdminUsers=0` in /etc/modprobe.d, then reload the driver), or "
             "profile as root or with CAP_SYS_ADMIN (see docs/nvidia.md, \"Permissions\")");
    st = LM_EINVAL;
    break;
  case LM_CUPTI_NOT_SUPPORTED:
  case LM_CUPTI_INVALID_DEVICE:
    snprintf(fix, sizeof fix,
             ": CUPTI's range profiler does not support this device%s%s%s (it needs compute capability "
             "7.5 or newer and a CUPTI that knows the chip: use a newer CUDA toolkit, or see `lumen "
             "list backends`); lumen has definitions for %s",
             chip && *chip ? " (chip " : "", chip && *chip ? chip : "", chip && *chip ? ")" : " or chip",
             lumen_chips);
    st = LM_EINVAL;
    break;
  case LM_CUPTI_VIRTUALIZED_DEVICE_NOT_SUPPORTED:
  case LM_CUPTI_MIG_DEVICE_NOT_SUPPORTED:
  case LM_CUPTI_CMP_DEVICE_NOT_SUPPORTED:
    snprintf(fix, sizeof fix,
             ": performance counters are not available on this kind of device (virtual GPU, MIG "
             "instance or CMP board); profile on a full physical GPU");
    st = LM_EINVAL;
    break;
  case LM_CUPTI_OUT_OF_MEMORY:
    /* The counter-data image grows with the metrics of a config; kernel
     * replay also keeps a copy of the kernel's memory between passes. */
    snprintf(fix, sizeof fix,
             ": out of memory for the counter-data image or the replay buffers; collect fewer metrics "
             "per pass: select fewer (-b), or let lumen split them into sets (--replay app or "
             "--replay instance; --replay kernel puts every metric into one config), or free device "
             "memory (kernel replay saves the kernel's memory between passes)");
    st = LM_ENOMEM;
    break;
  case LM_CUPTI_MULTIPLE_SUBSCRIBERS:
    snprintf(fix, sizeof fix,
             ": another CUPTI tool (Nsight Systems, Nsight Compute, a tracer) is attached to the "
             "application; run it without that tool");
    st = LM_EINVAL;
    break;
  case LM_CUPTI_NOT_INITIALIZED:
    snprintf(fix, sizeof fix, ": no usable NVIDIA GPU or driver in this process");
    break;
  default: break;
  }
  snprintf(out, cap, "CUPTI: %s failed (error %d: %s)%s", call ? call : "a call", result,
           cupti_text && *cupti_text ? cupti_text : "no description", fix);
  return st;
}

/* --------------------------------------------------------- demangling */

const char *lm_cupti_demangle(const char *name, char *out, size_t cap) {
  return lm_backend_demangle(name, out, cap);
}

/* ---------------------------------------------- config per counter set */

lm_status lm_cupti_images_build(lm_cupti_host *h, const char *chip, char *const *const *sets,
                                int n_sets, lm_cupti_images *out, lm_diag *diag) {
  memset(out, 0, sizeof *out);
  if (n_sets <= 0) return lm_fail(diag, LM_EINVAL, NULL, "no counter sets");
  out->image = lm_calloc((size_t)n_sets, sizeof *out->image);
  out->bytes = lm_calloc((size_t)n_sets, sizeof *out->bytes);
  out->passes = lm_calloc((size_t)n_sets, sizeof *out->passes);
  if (!out->image || !out->bytes || !out->passes)
    return lm_fail(diag, LM_ENOMEM, NULL, "out of memory for config images");
  out->n_sets = n_sets;
  for (int s = 0; s < n_sets; s++) {
    size_t n = 0;
    while (sets[s] && sets[s][n]) n++;
    if (n == 0) return lm_fail(diag, LM_EINVAL, NULL, "counter set %d has no metrics", s);
    lm_status st = lm_cupti_host_passes(h, chip, (const char *const *)sets[s], n, &out->passes[s],
                                        &out->bytes[s], &out->image[s], diag);
    if (st != LM_OK) {
      if (diag) {
        char inner[sizeof diag->message];
        snprintf(inner, sizeof inner, "%s", diag->message);
        lm_fail(diag, st, NULL, "counter set %d: %s", s, inner);
      }
      return st;
    }
  }
  return LM_OK;
}

void lm_cupti_images_fini(lm_cupti_images *im) {
  for (int s = 0; im->image && s < im->n_sets; s++) lm_free(im->image[s]);
  lm_free(im->image);
  lm_free(im->bytes);
  lm_free(im->passes);
  memset(im, 0, sizeof *im);
}

/* ------------------------------------------------------- counter data */

/* The launch number a range name gives, or -1 when it is not a number.
 * Nested auto ranges carry their parents' names before a '/'. */
static long long range_number(const char *name) {
  const char *leaf = name ? strrchr(name, '/') : NULL;
  leaf = leaf ? leaf + 1 : name;
  if (!leaf || !*leaf) return -1;
  long long v = 0;
  for (const char *p = leaf; *p; p++) {
    if (*p < '0' || *p > '9' || v > 100000000000LL) return -1;
    v = v * 10 + (*p - '0');
  }
  return v;
}

lm_status lm_cupti_decode(const lm_cupti_source *src, size_t n_launches,
                          const char *const *metrics, size_t n_metrics,
                          lm_cupti_values_fn on_values, void *user, size_t *n_dropped,
                          lm_diag *diag) {
  if (n_dropped) *n_dropped = n_launches;
  size_t n_ranges = 0;
  lm_status st = src->n_ranges(src->ctx, &n_ranges, diag);
  if (st != LM_OK) return st;
  long long *number = lm_calloc(n_ranges + 1, sizeof *number);
  long *range_of = lm_calloc(n_launches + 1, sizeof *range_of);
  double *values = lm_calloc((n_launches + 1) * (n_metrics + 1), sizeof *values);
  if (!number || !range_of || !values) {
    st = lm_fail(diag, LM_ENOMEM, NULL, "out of memory while decoding counter data");
    goto done;
  }
  /* Names first: the lowest numbered name says whether numbers start at 0. */
  long long lowest = -1;
  for (size_t r = 0; r < n_ranges; r++) {
    const char *name = NULL;
    if ((st = src->range_name(src->ctx, r, &name, diag)) != LM_OK) goto done;
    number[r] = range_number(name);
    if (number[r] >= 0 && (lowest < 0 || number[r] < lowest)) lowest = number[r];
  }
  long long base = lowest > 0 ? 1 : 0;
  for (size_t i = 0; i < n_launches; i++) range_of[i] = -1;
  for (size_t r = 0; r < n_ranges; r++) {
    long long launch = number[r] >= 0 ? number[r] - base : (long long)r;
    if (launch < 0 || (size_t)launch >= n_launches) {
      st = lm_fail(diag, LM_EDATA, NULL,
                   "counter data has range %zu (launch %lld) but the session made %zu "
                   "launch%s",
                   r, launch, n_launches, n_launches == 1 ? "" : "es");
      goto done;
    }
    if (range_of[launch] >= 0) {
      st = lm_fail(diag, LM_EDATA, NULL, "counter data has two ranges (%ld and %zu) for launch %lld", range_of[launch],
                   r, launch);
      goto done;
    }
    range_of[launch] = (long)r;
  }
  size_t dropped = 0;
  for (size_t i = 0; i < n_launches; i++) {
    double *v = values + i * n_metrics;
    if (range_of[i] < 0) {
      dropped++;
      continue;
    }
    for (size_t m = 0; m < n_metrics; m++) v[m] = (double)NAN;
    if (n_metrics && (st = src->evaluate(src->ctx, (size_t)range_of[i], metrics, n_metrics, v,
                                         diag)) != LM_OK)
      goto done;
  }
  for (size_t i = 0; i < n_launches; i++)
    on_values(user, i, range_of[i] >= 0 ? values + i * n_metrics : NULL);
  if (n_dropped) *n_dropped = dropped;
done:
  lm_free(number);
  lm_free(range_of);
  lm_free(values);
  return st;
}
