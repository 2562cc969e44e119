/*
 * cupti_host.c - the CUPTI Profiler Host API through dlopen, the CUDA
 * driver's GPU count and device descriptions (libcuda, opened per query), and
 * the decoding of counter-data images (cupti_range.h; GPU-free).
 *
 * The types come from CUDA's cupti_profiler_host.h, compiled as C with an
 * empty <string> on a private include path (included, never used). Every
 * query makes a fresh host object: one keeps the metrics added to it and an
 * unknown name leaves it unusable, so a shared one would let a query spoil
 * the next; a fresh one is cheap (docs/perf.md). Without the CUDA headers at
 * build time every call fails with a reason.
 */
#include "backend/cupti_host.h"
#include "backend/cupti_range.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/dl.h"

/* The CUDA driver, started: its entry points (cuda.h's attribute values:
 * CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT 16, COMPUTE_CAPABILITY_MAJOR
 * and MINOR 75 and 76; CUresult 0 is success) and its GPU count. */
typedef struct cuda_driver {
  lm_dl_lib lib;
  int (*init)(unsigned);
  int (*count)(int *);
  int (*get)(int *, int);
  int (*attr)(int *, int, int);
  int (*name)(char *, int, int);
  int n_gpus;
} cuda_driver;

/* Opens libcuda.so.1 and starts it (cuInit, cuDeviceGetCount; with
 * `devices`, the device queries must be there too): 0, or -1 with why
 * (drv->lib, open or not, is closed with lm_dl_close). */
static int driver_open(cuda_driver *drv, int devices, char *why, size_t cap) {
  memset(drv, 0, sizeof *drv);
  const char *names[] = {"libcuda.so.1"};
  if (lm_dl_open(&drv->lib, names, 1, 0, NULL) != LM_OK) {
    snprintf(why, cap, "no NVIDIA driver (libcuda.so.1 not found)");
    return -1;
  }
  const lm_dl_sym syms[] = {{"cuInit", &drv->init, 0, NULL},
                            {"cuDeviceGetCount", &drv->count, 0, NULL},
                            {"cuDeviceGet", &drv->get, 0, NULL},
                            {"cuDeviceGetAttribute", &drv->attr, 0, NULL},
                            {"cuDeviceGetName", &drv->name, 0, NULL}};
  lm_dl_resolve(&drv->lib, syms, sizeof syms / sizeof *syms, NULL);
  int found = drv->init && drv->count && (!devices || (drv->get && drv->attr && drv->name));
  int r = found ? drv->init(0) : -1;
  if (r == 0) r = drv->count(&drv->n_gpus);
  if (r != 0) {
    snprintf(why, cap, "the CUDA driver did not start (cuInit: error %d): no usable NVIDIA GPU", r);
    return -1;
  }
  return 0;
}

int lm_cuda_driver_probe(char *why, size_t cap) {
  cuda_driver drv;
  int n = driver_open(&drv, 0, why, cap) == 0 ? drv.n_gpus : -1;
  lm_dl_close(&drv.lib);
  if (n >= 0) snprintf(why, cap, "%d NVIDIA GPU%s", n, n == 1 ? "" : "s");
  return n;
}

int lm_cuda_device_info(int index, lm_cuda_device *out, char *why, size_t cap) {
  memset(out, 0, sizeof *out);
  cuda_driver drv;
  int rc = -1, dev = 0;
  if (driver_open(&drv, 1, why, cap) != 0) goto done;
  if (index < 0 || index >= drv.n_gpus) {
    snprintf(why, cap, "the CUDA driver reports %d NVIDIA GPU%s, none with index %d", drv.n_gpus,
             drv.n_gpus == 1 ? "" : "s", index);
  } else if (drv.get(&dev, index) != 0 || drv.attr(&out->major, 75, dev) != 0 ||
             drv.attr(&out->minor, 76, dev) != 0 || drv.attr(&out->sms, 16, dev) != 0) {
    snprintf(why, cap, "the CUDA driver does not describe GPU %d", index);
  } else {
    if (drv.name(out->name, (int)sizeof out->name, dev) != 0) out->name[0] = '\0';
    snprintf(why, cap, "%s, compute capability %d.%d", out->name, out->major, out->minor);
    rc = 0;
  }
done:
  lm_dl_close(&drv.lib);
  return rc;
}

int lm_cuda_admin_only(const char *text) {
  const char *at = text ? strstr(text, "RmProfilingAdminOnly:") : NULL;
  if (!at) return -1;
  at += strlen("RmProfilingAdminOnly:");
  while (*at == ' ' || *at == '\t') at++;
  return *at == '1' ? 1 : *at == '0' ? 0 : -1;
}

int lm_cuda_has_sys_admin(const char *text) {
  const char *at = text ? strstr(text, "CapEff:") : NULL;
  if (!at) return -1;
  char *end = NULL;
  unsigned long long caps = strtoull(at + strlen("CapEff:"), &end, 16);
  if (end == at + strlen("CapEff:")) return -1;
  return (int)(caps >> 21 & 1); /* CAP_SYS_ADMIN is capability 21 */
}

#ifdef LUMEN_HAVE_CUPTI
#include <cupti_profiler_host.h>
#include <cupti_range_profiler.h>
#include <cupti_result.h>

#ifndef LUMEN_CUPTI_LIBRARY
#define LUMEN_CUPTI_LIBRARY ""
#endif

typedef CUptiResult (*init_fn)(CUpti_Profiler_Host_Initialize_Params *);
typedef CUptiResult (*deinit_fn)(CUpti_Profiler_Host_Deinitialize_Params *);
typedef CUptiResult (*chips_fn)(CUpti_Profiler_Host_GetSupportedChips_Params *);
typedef CUptiResult (*props_fn)(CUpti_Profiler_Host_GetMetricProperties_Params *);
typedef CUptiResult (*add_fn)(CUpti_Profiler_Host_ConfigAddMetrics_Params *);
typedef CUptiResult (*size_fn)(CUpti_Profiler_Host_GetConfigImageSize_Params *);
typedef CUptiResult (*image_fn)(CUpti_Profiler_Host_GetConfigImage_Params *);
typedef CUptiResult (*passes_fn)(CUpti_Profiler_Host_GetNumOfPasses_Params *);
typedef CUptiResult (*version_fn)(uint32_t *);
typedef CUptiResult (*errstr_fn)(CUptiResult, const char **);
typedef CUptiResult (*eval_fn)(CUpti_Profiler_Host_EvaluateToGpuValues_Params *);
typedef CUptiResult (*data_info_fn)(CUpti_RangeProfiler_GetCounterDataInfo_Params *);
typedef CUptiResult (*range_info_fn)(CUpti_RangeProfiler_CounterData_GetRangeInfo_Params *);

struct lm_cupti_host {
  lm_dl_lib lib;
  char path[1024];
  uint32_t version;
  size_t n_chips;
  const char *const *chips;
  init_fn init;
  deinit_fn deinit;
  chips_fn get_chips;
  props_fn props;
  add_fn add;
  size_fn image_size;
  image_fn image;
  passes_fn passes;
  errstr_fn errstr;
  eval_fn evaluate;          /* the rest: decoding counter data */
  data_info_fn data_info;
  range_info_fn range_info;
};

static const char *result_text(const lm_cupti_host *h, CUptiResult r) {
  const char *s = NULL;
  if (h->errstr && h->errstr(r, &s) == CUPTI_SUCCESS && s) return s;
  return "unknown CUPTI error";
}

int lm_cupti_host_built(void) { return 1; }

/* AddressSanitizer refuses libraries opened with RTLD_DEEPBIND, which
 * libcupti uses for libnvperf_host: under it, loading CUPTI would abort. */
#if defined(__SANITIZE_ADDRESS__)
#define UNDER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define UNDER_ASAN 1
#endif
#endif

lm_status lm_cupti_host_open(lm_cupti_host **out, lm_diag *diag) {
  *out = NULL;
#ifdef UNDER_ASAN
  return lm_fail(diag, LM_ENOTFOUND, NULL,
                 "CUPTI cannot be loaded into an AddressSanitizer build (libcupti opens "
                 "libnvperf_host with RTLD_DEEPBIND): use a build without LUMEN_SANITIZE");
#endif
  lm_cupti_host *h = lm_calloc(1, sizeof *h);
  if (!h) return lm_oom(diag, NULL);
  /* A library named by LUMEN_CUPTI_LIBRARY is the only one tried. */
  const char *env = getenv("LUMEN_CUPTI_LIBRARY");
  const char *named[] = {env};
  const char *candidates[] = {LUMEN_CUPTI_LIBRARY, "libcupti.so.13", "libcupti.so"};
  int from_env = env && *env;
  if (lm_dl_open(&h->lib, from_env ? named : candidates, from_env ? 1 : sizeof candidates / sizeof *candidates, 0,
                 NULL) != LM_OK) {
    lm_status st = lm_fail(diag, LM_ENOTFOUND, NULL,
                           "cannot load CUPTI (%s): install the CUDA toolkit or set "
                           "LUMEN_CUPTI_LIBRARY to libcupti.so",
                           h->lib.error);
    lm_free(h);
    return st;
  }
  snprintf(h->path, sizeof h->path, "%s", h->lib.name);
  /* The Host API's planning calls are required; the rest (error strings,
   * the version, decoding counter data) are used where present. */
  version_fn get_version = NULL;
  const lm_dl_sym syms[] = {
      {"cuptiProfilerHostInitialize", &h->init, 1, NULL},
      {"cuptiProfilerHostDeinitialize", &h->deinit, 1, NULL},
      {"cuptiProfilerHostGetSupportedChips", &h->get_chips, 1, NULL},
      {"cuptiProfilerHostGetMetricProperties", &h->props, 1, NULL},
      {"cuptiProfilerHostConfigAddMetrics", &h->add, 1, NULL},
      {"cuptiProfilerHostGetConfigImageSize", &h->image_size, 1, NULL},
      {"cuptiProfilerHostGetConfigImage", &h->image, 1, NULL},
      {"cuptiProfilerHostGetNumOfPasses", &h->passes, 1, NULL},
      {"cuptiGetResultString", &h->errstr, 0, NULL},
      {"cuptiProfilerHostEvaluateToGpuValues", &h->evaluate, 0, NULL},
      {"cuptiRangeProfilerGetCounterDataInfo", &h->data_info, 0, NULL},
      {"cuptiRangeProfilerCounterDataGetRangeInfo", &h->range_info, 0, NULL},
      {"cuptiGetVersion", &get_version, 0, NULL},
  };
  if (lm_dl_resolve(&h->lib, syms, sizeof syms / sizeof *syms, NULL) != LM_OK) {
    lm_status st = lm_fail(diag, LM_ENOTFOUND, NULL,
                           "%s has no Profiler Host API (CUPTI from CUDA 12.6 or later "
                           "is needed)",
                           h->path);
    lm_cupti_host_close(h);
    return st;
  }
  if (get_version) get_version(&h->version);
  CUpti_Profiler_Host_GetSupportedChips_Params cp;
  memset(&cp, 0, sizeof cp);
  cp.structSize = CUpti_Profiler_Host_GetSupportedChips_Params_STRUCT_SIZE;
  CUptiResult r = h->get_chips(&cp);
  if (r != CUPTI_SUCCESS) {
    lm_status st = lm_fail(diag, LM_EIO, NULL, "CUPTI: listing chips: %s", result_text(h, r));
    lm_cupti_host_close(h);
    return st;
  }
  h->n_chips = cp.numChips;
  h->chips = cp.ppChipNames;
  *out = h;
  return LM_OK;
}

void lm_cupti_host_close(lm_cupti_host *h) {
  if (!h) return;
  lm_dl_close(&h->lib);
  lm_free(h);
}

void lm_cupti_host_describe(const lm_cupti_host *h, char *out, size_t cap) {
  snprintf(out, cap, "CUPTI API %u, %zu chips, %s", (unsigned)h->version, h->n_chips, h->path);
}

const char *lm_cupti_host_path(const lm_cupti_host *h) { return h ? h->path : ""; }

int lm_cupti_host_has_chip(lm_cupti_host *h, const char *chip) {
  for (size_t i = 0; i < h->n_chips; i++)
    if (h->chips[i] && strcmp(h->chips[i], chip) == 0) return 1;
  return 0;
}

/* A fresh host object for chip, or NULL with diag set. */
static CUpti_Profiler_Host_Object *host_object(lm_cupti_host *h, const char *chip, lm_diag *diag) {
  if (!lm_cupti_host_has_chip(h, chip)) {
    lm_fail(diag, LM_EARCH, NULL, "CUPTI (API %u) does not know the chip '%s'", (unsigned)h->version, chip);
    return NULL;
  }
  CUpti_Profiler_Host_Initialize_Params ip;
  memset(&ip, 0, sizeof ip);
  ip.structSize = CUpti_Profiler_Host_Initialize_Params_STRUCT_SIZE;
  ip.profilerType = CUPTI_PROFILER_TYPE_RANGE_PROFILER;
  ip.pChipName = chip;
  CUptiResult r = h->init(&ip);
  if (r != CUPTI_SUCCESS || !ip.pHostObject) {
    lm_fail(diag, LM_EIO, NULL, "CUPTI: host object for %s: %s", chip, result_text(h, r));
    return NULL;
  }
  return ip.pHostObject;
}

static void host_free(lm_cupti_host *h, CUpti_Profiler_Host_Object *o) {
  if (!o) return;
  CUpti_Profiler_Host_Deinitialize_Params dp;
  memset(&dp, 0, sizeof dp);
  dp.structSize = CUpti_Profiler_Host_Deinitialize_Params_STRUCT_SIZE;
  dp.pHostObject = o;
  h->deinit(&dp);
}

static CUptiResult add_metrics(lm_cupti_host *h, CUpti_Profiler_Host_Object *o,
                               const char *const *names, size_t n) {
  CUpti_Profiler_Host_ConfigAddMetrics_Params ap;
  memset(&ap, 0, sizeof ap);
  ap.structSize = CUpti_Profiler_Host_ConfigAddMetrics_Params_STRUCT_SIZE;
  ap.pHostObject = o;
  ap.ppMetricNames = (const char **)names;
  ap.numMetrics = n;
  return h->add(&ap);
}

lm_status lm_cupti_host_check(lm_cupti_host *h, const char *chip, const char *const *names,
                              size_t n, uint8_t *bad, size_t *n_bad, lm_diag *diag) {
  *n_bad = 0;
  CUpti_Profiler_Host_Object *o = host_object(h, chip, diag);
  if (!o) return diag ? diag->status : LM_EIO;
  for (size_t i = 0; i < n; i++) {
    CUpti_Profiler_Host_GetMetricProperties_Params pp;
    memset(&pp, 0, sizeof pp);
    pp.structSize = CUpti_Profiler_Host_GetMetricProperties_Params_STRUCT_SIZE;
    pp.pHostObject = o;
    pp.pMetricName = names[i];
    int unknown = h->props(&pp) != CUPTI_SUCCESS;
    if (!unknown) {
      /* Described is not enough: the config must accept it too. A failed
       * add spoils the object, so each name gets a fresh one. */
      CUpti_Profiler_Host_Object *one = host_object(h, chip, diag);
      if (!one) {
        host_free(h, o);
        return diag ? diag->status : LM_EIO;
      }
      unknown = add_metrics(h, one, &names[i], 1) != CUPTI_SUCCESS;
      host_free(h, one);
    }
    if (bad) bad[i] = (uint8_t)unknown;
    *n_bad += (size_t)unknown;
  }
  host_free(h, o);
  return LM_OK;
}

lm_status lm_cupti_host_passes(lm_cupti_host *h, const char *chip, const char *const *names,
                               size_t n, int32_t *passes, size_t *image_bytes, uint8_t **image,
                               lm_diag *diag) {
  *passes = 0;
  if (image_bytes) *image_bytes = 0;
  if (image) *image = NULL;
  lm_status st = LM_OK;
  uint8_t *img = NULL;
  CUpti_Profiler_Host_Object *o = host_object(h, chip, diag);
  if (!o) return diag ? diag->status : LM_EIO;
  CUptiResult r = add_metrics(h, o, names, n);
  if (r != CUPTI_SUCCESS) {
    st = lm_fail(diag, LM_ENOTFOUND, NULL, "CUPTI: %s does not accept the metrics %s%s%s: %s", chip, names[0],
                 n > 1 ? " ..." : "", n > 1 ? " (one of them is unknown)" : "", result_text(h, r));
    goto done;
  }
  CUpti_Profiler_Host_GetConfigImageSize_Params sp;
  memset(&sp, 0, sizeof sp);
  sp.structSize = CUpti_Profiler_Host_GetConfigImageSize_Params_STRUCT_SIZE;
  sp.pHostObject = o;
  r = h->image_size(&sp);
  if (r == CUPTI_SUCCESS && !(img = lm_malloc(sp.configImageSize ? sp.configImageSize : 1))) {
    st = lm_oom(diag, NULL);
    goto done;
  }
  if (r == CUPTI_SUCCESS) {
    CUpti_Profiler_Host_GetConfigImage_Params gp;
    memset(&gp, 0, sizeof gp);
    gp.structSize = CUpti_Profiler_Host_GetConfigImage_Params_STRUCT_SIZE;
    gp.pHostObject = o;
    gp.configImageSize = sp.configImageSize;
    gp.pConfigImage = img;
    r = h->image(&gp);
  }
  if (r == CUPTI_SUCCESS) {
    CUpti_Profiler_Host_GetNumOfPasses_Params np;
    memset(&np, 0, sizeof np);
    np.structSize = CUpti_Profiler_Host_GetNumOfPasses_Params_STRUCT_SIZE;
    np.configImageSize = sp.configImageSize;
    np.pConfigImage = img;
    r = h->passes(&np);
    *passes = (int32_t)np.numOfPasses;
  }
  if (r != CUPTI_SUCCESS) {
    st = lm_fail(diag, LM_EIO, NULL, "CUPTI: config image for %s: %s", chip, result_text(h, r));
    goto done;
  }
  if (image_bytes) *image_bytes = sp.configImageSize;
  if (image) {
    *image = img;
    img = NULL;
  }
done:
  lm_free(img);
  host_free(h, o);
  return st;
}

/* ------------------------------------------- counter data (cupti_range.h) */

typedef struct image_source {
  lm_cupti_host *h;
  CUpti_Profiler_Host_Object *object; /* holds the set's metrics */
  const uint8_t *image;
  size_t bytes;
} image_source;

static lm_status image_ranges(void *ctx, size_t *n, lm_diag *diag) {
  image_source *s = ctx;
  CUpti_RangeProfiler_GetCounterDataInfo_Params p;
  memset(&p, 0, sizeof p);
  p.structSize = CUpti_RangeProfiler_GetCounterDataInfo_Params_STRUCT_SIZE;
  p.pCounterDataImage = s->image;
  p.counterDataImageSize = s->bytes;
  CUptiResult r = s->h->data_info(&p);
  *n = r == CUPTI_SUCCESS ? p.numTotalRanges : 0;
  if (r == CUPTI_SUCCESS) return LM_OK;
  char line[1024];
  lm_status st = lm_cupti_explain((int)r, "cuptiRangeProfilerGetCounterDataInfo",
                                  result_text(s->h, r), line, sizeof line);
  return lm_fail(diag, st, NULL, "%s", line);
}

static lm_status image_range_name(void *ctx, size_t range, const char **name, lm_diag *diag) {
  image_source *s = ctx;
  CUpti_RangeProfiler_CounterData_GetRangeInfo_Params p;
  memset(&p, 0, sizeof p);
  p.structSize = CUpti_RangeProfiler_CounterData_GetRangeInfo_Params_STRUCT_SIZE;
  p.pCounterDataImage = s->image;
  p.counterDataImageSize = s->bytes;
  p.rangeIndex = range;
  p.rangeDelimiter = "/";
  CUptiResult r = s->h->range_info(&p);
  *name = r == CUPTI_SUCCESS ? p.rangeName : NULL;
  if (r == CUPTI_SUCCESS) return LM_OK;
  char line[1024];
  lm_status st = lm_cupti_explain((int)r, "cuptiRangeProfilerCounterDataGetRangeInfo",
                                  result_text(s->h, r), line, sizeof line);
  return lm_fail(diag, st, NULL, "%s", line);
}

static lm_status image_evaluate(void *ctx, size_t range, const char *const *metrics, size_t n,
                                double *values, lm_diag *diag) {
  image_source *s = ctx;
  CUpti_Profiler_Host_EvaluateToGpuValues_Params p;
  memset(&p, 0, sizeof p);
  p.structSize = CUpti_Profiler_Host_EvaluateToGpuValues_Params_STRUCT_SIZE;
  p.pHostObject = s->object;
  p.pCounterDataImage = s->image;
  p.counterDataImageSize = s->bytes;
  p.rangeIndex = range;
  p.ppMetricNames = (const char **)metrics;
  p.numMetrics = n;
  p.pMetricValues = values;
  CUptiResult r = s->h->evaluate(&p);
  if (r == CUPTI_SUCCESS) return LM_OK;
  char line[1024];
  lm_status st = lm_cupti_explain((int)r, "cuptiProfilerHostEvaluateToGpuValues",
                                  result_text(s->h, r), line, sizeof line);
  return lm_fail(diag, st, NULL, "%s", line);
}

lm_status lm_cupti_source_image_new(lm_cupti_host *h, const char *chip, const char *const *metrics,
                                    size_t n_metrics, const uint8_t *image, size_t bytes,
                                    lm_cupti_source *out, lm_diag *diag) {
  memset(out, 0, sizeof *out);
  if (!h->evaluate || !h->data_info || !h->range_info)
    return lm_fail(diag, LM_ENOTFOUND, NULL,
                   "%s cannot decode counter data (no Range Profiler: CUDA 12.6 or later "
                   "is needed)",
                   h->path);
  image_source *s = lm_calloc(1, sizeof *s);
  if (!s) return lm_oom(diag, NULL);
  s->h = h;
  s->image = image;
  s->bytes = bytes;
  s->object = host_object(h, chip, diag);
  CUptiResult r = s->object ? add_metrics(h, s->object, metrics, n_metrics) : CUPTI_SUCCESS;
  if (!s->object || r != CUPTI_SUCCESS) {
    lm_status st = s->object ? lm_fail(diag, LM_ENOTFOUND, NULL, "CUPTI: %s does not accept the metrics to decode: %s",
                                       chip, result_text(h, r))
                             : (diag ? diag->status : LM_EIO);
    host_free(h, s->object);
    lm_free(s);
    return st;
  }
  out->ctx = s;
  out->n_ranges = image_ranges;
  out->range_name = image_range_name;
  out->evaluate = image_evaluate;
  return LM_OK;
}

void lm_cupti_source_image_free(lm_cupti_source *src) {
  image_source *s = src ? src->ctx : NULL;
  if (!s) return;
  host_free(s->h, s->object);
  lm_free(s);
  src->ctx = NULL;
}

#else /* no CUDA headers at build time */

int lm_cupti_host_built(void) { return 0; }

lm_status lm_cupti_host_open(lm_cupti_host **out, lm_diag *diag) {
  *out = NULL;
  return lm_fail(diag, LM_ENOTFOUND, NULL,
                 "lumen was built without the CUDA toolkit (CUPTI headers not found): "
                 "rebuild with CUDAToolkit_ROOT pointing at a CUDA 12.6+ installation");
}
void lm_cupti_host_close(lm_cupti_host *h) { (void)h; }
void lm_cupti_host_describe(const lm_cupti_host *h, char *out, size_t cap) {
  (void)h;
  snprintf(out, cap, "not built");
}
const char *lm_cupti_host_path(const lm_cupti_host *h) {
  (void)h;
  return "";
}
int lm_cupti_host_has_chip(lm_cupti_host *h, const char *chip) {
  (void)h;
  (void)chip;
  return 0;
}
lm_status lm_cupti_host_check(lm_cupti_host *h, const char *chip, const char *const *names,
                              size_t n, uint8_t *bad, size_t *n_bad, lm_diag *diag) {
  (void)h, (void)chip, (void)names, (void)n, (void)bad;
  *n_bad = 0;
  return lm_cupti_host_open(&h, diag);
}
lm_status lm_cupti_host_passes(lm_cupti_host *h, const char *chip, const char *const *names,
                               size_t n, int32_t *passes, size_t *image_bytes, uint8_t **image,
                               lm_diag *diag) {
  (void)h, (void)chip, (void)names, (void)n, (void)image_bytes, (void)image;
  *passes = 0;
  return lm_cupti_host_open(&h, diag);
}

lm_status lm_cupti_source_image_new(lm_cupti_host *h, const char *chip, const char *const *metrics,
                                    size_t n_metrics, const uint8_t *image, size_t bytes,
                                    lm_cupti_source *out, lm_diag *diag) {
  (void)chip, (void)metrics, (void)n_metrics, (void)image, (void)bytes;
  memset(out, 0, sizeof *out);
  return lm_cupti_host_open(&h, diag);
}
void lm_cupti_source_image_free(lm_cupti_source *src) { (void)src; }

#endif
