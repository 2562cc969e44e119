/*
 * cupti_host.c - the CUPTI Profiler Host API through dlopen.
 *
 * The types come from CUDA's own header (cupti_profiler_host.h, compiled
 * here as C with an empty <string> on a private include path: the header
 * includes it but uses nothing from it). Every query makes a fresh host
 * object: CUPTI's object keeps the metrics added to it, and an unknown
 * name leaves it unusable, so sharing one across queries would let one
 * query spoil the next. A host object costs well under a millisecond.
 * It also decodes counter-data images (cupti_range.h: the Range Profiler's
 * image queries and the Host API's evaluation, both GPU-free).
 * Without the CUDA headers at build time every call fails with a reason.
 */
#include "backend/cupti_host.h"
#include "backend/cupti_range.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <dlfcn.h>

int lm_cuda_driver_probe(char *why, size_t cap) {
  void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    snprintf(why, cap, "no NVIDIA driver (libcuda.so.1 not found)");
    return -1;
  }
  int (*cu_init)(unsigned) = NULL;
  int (*cu_count)(int *) = NULL;
  void *sym = dlsym(lib, "cuInit");
  memcpy(&cu_init, &sym, sizeof sym);
  sym = dlsym(lib, "cuDeviceGetCount");
  memcpy(&cu_count, &sym, sizeof sym);
  int n = 0, r = cu_init && cu_count ? cu_init(0) : -1;
  if (r == 0) r = cu_count(&n);
  dlclose(lib);
  if (r != 0) {
    snprintf(why, cap, "the CUDA driver did not start (cuInit: error %d): no usable NVIDIA GPU", r);
    return -1;
  }
  snprintf(why, cap, "%d NVIDIA GPU%s", n, n == 1 ? "" : "s");
  return n;
}

/* The driver entry points lm_cuda_device_info calls, with the values of
 * cuda.h's CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT (16) and
 * COMPUTE_CAPABILITY_MAJOR/MINOR (75, 76); CUresult 0 is success. */
int lm_cuda_device_info(int index, lm_cuda_device *out, char *why, size_t cap) {
  memset(out, 0, sizeof *out);
  void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    snprintf(why, cap, "no NVIDIA driver (libcuda.so.1 not found)");
    return -1;
  }
  int (*cu_init)(unsigned) = NULL, (*cu_count)(int *) = NULL, (*cu_get)(int *, int) = NULL;
  int (*cu_attr)(int *, int, int) = NULL, (*cu_name)(char *, int, int) = NULL;
  void *sym = dlsym(lib, "cuInit");
  memcpy(&cu_init, &sym, sizeof sym);
  sym = dlsym(lib, "cuDeviceGetCount");
  memcpy(&cu_count, &sym, sizeof sym);
  sym = dlsym(lib, "cuDeviceGet");
  memcpy(&cu_get, &sym, sizeof sym);
  sym = dlsym(lib, "cuDeviceGetAttribute");
  memcpy(&cu_attr, &sym, sizeof sym);
  sym = dlsym(lib, "cuDeviceGetName");
  memcpy(&cu_name, &sym, sizeof sym);
  int rc = -1, n = 0, dev = 0;
  int r = cu_init && cu_count && cu_get && cu_attr && cu_name ? cu_init(0) : -1;
  if (r == 0) r = cu_count(&n);
  if (r != 0) {
    snprintf(why, cap, "the CUDA driver did not start (cuInit: error %d): no usable NVIDIA GPU", r);
  } else if (index < 0 || index >= n) {
    snprintf(why, cap, "the CUDA driver reports %d NVIDIA GPU%s, none with index %d", n,
             n == 1 ? "" : "s", index);
  } else if (cu_get(&dev, index) != 0 || cu_attr(&out->major, 75, dev) != 0 ||
             cu_attr(&out->minor, 76, dev) != 0 || cu_attr(&out->sms, 16, dev) != 0) {
    snprintf(why, cap, "the CUDA driver does not describe GPU %d", index);
  } else {
    if (cu_name(out->name, (int)sizeof out->name, dev) != 0) out->name[0] = '\0';
    snprintf(why, cap, "%s, compute capability %d.%d", out->name, out->major, out->minor);
    rc = 0;
  }
  dlclose(lib);
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
  void *lib;
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

static void *try_open(const char *path, char *why, size_t cap) {
  if (!path || !*path) return NULL;
  void *lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    const char *e = dlerror();
    snprintf(why, cap, "%s", e ? e : path);
  }
  return lib;
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
  return lm_diag_set(diag, LM_ENOTFOUND, NULL, 0, 0, NULL,
                     "CUPTI cannot be loaded into an AddressSanitizer build (libcupti opens "
                     "libnvperf_host with RTLD_DEEPBIND): use a build without LUMEN_SANITIZE");
#endif
  lm_cupti_host *h = lm_calloc(1, sizeof *h);
  if (!h) return lm_diag_set(diag, LM_ENOMEM, NULL, 0, 0, NULL, "out of memory");
  const char *env = getenv("LUMEN_CUPTI_LIBRARY");
  const char *candidates[] = {env, LUMEN_CUPTI_LIBRARY, "libcupti.so.13", "libcupti.so"};
  char why[512] = "libcupti.so not found";
  for (size_t i = 0; i < sizeof candidates / sizeof candidates[0] && !h->lib; i++) {
    if (i > 0 && env && *env) break; /* a named library is the only one tried */
    h->lib = try_open(candidates[i], why, sizeof why);
    if (h->lib) snprintf(h->path, sizeof h->path, "%s", candidates[i]);
  }
  if (!h->lib) {
    lm_free(h);
    return lm_diag_set(diag, LM_ENOTFOUND, NULL, 0, 0, NULL,
                       "cannot load CUPTI (%s): install the CUDA toolkit or set "
                       "LUMEN_CUPTI_LIBRARY to libcupti.so",
                       why);
  }
  /* dlsym returns void *; POSIX guarantees the conversion to a function
   * pointer, which ISO C leaves undefined, hence the memcpy. */
#define RESOLVE(field, symbol)                                                                   \
  do {                                                                                           \
    void *sym = dlsym(h->lib, symbol);                                                           \
    memcpy(&h->field, &sym, sizeof sym);                                                         \
  } while (0)
  RESOLVE(init, "cuptiProfilerHostInitialize");
  RESOLVE(deinit, "cuptiProfilerHostDeinitialize");
  RESOLVE(get_chips, "cuptiProfilerHostGetSupportedChips");
  RESOLVE(props, "cuptiProfilerHostGetMetricProperties");
  RESOLVE(add, "cuptiProfilerHostConfigAddMetrics");
  RESOLVE(image_size, "cuptiProfilerHostGetConfigImageSize");
  RESOLVE(image, "cuptiProfilerHostGetConfigImage");
  RESOLVE(passes, "cuptiProfilerHostGetNumOfPasses");
  RESOLVE(errstr, "cuptiGetResultString");
  RESOLVE(evaluate, "cuptiProfilerHostEvaluateToGpuValues");
  RESOLVE(data_info, "cuptiRangeProfilerGetCounterDataInfo");
  RESOLVE(range_info, "cuptiRangeProfilerCounterDataGetRangeInfo");
#undef RESOLVE
  version_fn get_version = NULL;
  {
    void *sym = dlsym(h->lib, "cuptiGetVersion");
    memcpy(&get_version, &sym, sizeof sym);
  }
  if (!h->init || !h->deinit || !h->get_chips || !h->props || !h->add || !h->image_size ||
      !h->image || !h->passes) {
    lm_status st = lm_diag_set(diag, LM_ENOTFOUND, NULL, 0, 0, NULL,
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
    lm_status st = lm_diag_set(diag, LM_EIO, NULL, 0, 0, NULL, "CUPTI: listing chips: %s",
                               result_text(h, r));
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
  if (h->lib) dlclose(h->lib);
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
    lm_diag_set(diag, LM_EARCH, NULL, 0, 0, NULL,
                "CUPTI (API %u) does not know the chip '%s'", (unsigned)h->version, chip);
    return NULL;
  }
  CUpti_Profiler_Host_Initialize_Params ip;
  memset(&ip, 0, sizeof ip);
  ip.structSize = CUpti_Profiler_Host_Initialize_Params_STRUCT_SIZE;
  ip.profilerType = CUPTI_PROFILER_TYPE_RANGE_PROFILER;
  ip.pChipName = chip;
  CUptiResult r = h->init(&ip);
  if (r != CUPTI_SUCCESS || !ip.pHostObject) {
    lm_diag_set(diag, LM_EIO, NULL, 0, 0, NULL, "CUPTI: host object for %s: %s", chip,
                result_text(h, r));
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
    st = lm_diag_set(diag, LM_ENOTFOUND, NULL, 0, 0, NULL,
                     "CUPTI: %s does not accept the metrics %s%s%s: %s", chip, names[0],
                     n > 1 ? " ..." : "", n > 1 ? " (one of them is unknown)" : "",
                     result_text(h, r));
    goto done;
  }
  CUpti_Profiler_Host_GetConfigImageSize_Params sp;
  memset(&sp, 0, sizeof sp);
  sp.structSize = CUpti_Profiler_Host_GetConfigImageSize_Params_STRUCT_SIZE;
  sp.pHostObject = o;
  r = h->image_size(&sp);
  if (r == CUPTI_SUCCESS && !(img = lm_malloc(sp.configImageSize ? sp.configImageSize : 1))) {
    st = lm_diag_set(diag, LM_ENOMEM, NULL, 0, 0, NULL, "out of memory");
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
    st = lm_diag_set(diag, LM_EIO, NULL, 0, 0, NULL, "CUPTI: config image for %s: %s", chip,
                     result_text(h, r));
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
  return lm_diag_set(diag, st, NULL, 0, 0, NULL, "%s", line);
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
  return lm_diag_set(diag, st, NULL, 0, 0, NULL, "%s", line);
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
  return lm_diag_set(diag, st, NULL, 0, 0, NULL, "%s", line);
}

lm_status lm_cupti_source_image_new(lm_cupti_host *h, const char *chip, const char *const *metrics,
                                    size_t n_metrics, const uint8_t *image, size_t bytes,
                                    lm_cupti_source *out, lm_diag *diag) {
  memset(out, 0, sizeof *out);
  if (!h->evaluate || !h->data_info || !h->range_info)
    return lm_diag_set(diag, LM_ENOTFOUND, NULL, 0, 0, NULL,
                       "%s cannot decode counter data (no Range Profiler: CUDA 12.6 or later "
                       "is needed)", h->path);
  image_source *s = lm_calloc(1, sizeof *s);
  if (!s) return lm_diag_set(diag, LM_ENOMEM, NULL, 0, 0, NULL, "out of memory");
  s->h = h;
  s->image = image;
  s->bytes = bytes;
  s->object = host_object(h, chip, diag);
  CUptiResult r = s->object ? add_metrics(h, s->object, metrics, n_metrics) : CUPTI_SUCCESS;
  if (!s->object || r != CUPTI_SUCCESS) {
    lm_status st = s->object ? lm_diag_set(diag, LM_ENOTFOUND, NULL, 0, 0, NULL,
                                           "CUPTI: %s does not accept the metrics to decode: %s",
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
  return lm_diag_set(diag, LM_ENOTFOUND, NULL, 0, 0, NULL,
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
