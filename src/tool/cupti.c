/*
 * cupti.c - the CUPTI adapter of the tool library: liblumen_tool.so exports
 * InitializeInjection, which the CUDA driver calls during cuInit when
 * CUDA_INJECTION64_PATH names it. It only translates: the core (core.h)
 * chooses each launch's counter set; the adapter runs that set's config
 * through CUPTI's Range Profiler (auto range, kernel replay), hands the
 * decoded values back and turns NVTX ranges into lumen regions. Invariant:
 * one launch is one Range Profiler session, so a range always belongs to its
 * launch and configs switch freely between launches. CUPTI and the driver are
 * the process's own, opened and resolved with lm_dl (base/dl.h); versions:
 * docs/nvidia.md, "CUPTI by version".
 */
#include <dlfcn.h> /* RTLD_GLOBAL, RTLD_NOLOAD */
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cuda.h>
#include <cupti_callbacks.h>
#include <cupti_driver_cbid.h>
#include <cupti_nvtx_cbid.h>
#include <cupti_profiler_target.h>
#include <cupti_range_profiler.h>
#include <cupti_result.h>
#include <cupti_target.h>
#include <cupti_version.h>

/* CUDA 12's generated_nvtx_meta.h uses the NVTX types without including
 * them (13.0's includes these four itself): they come first. */
#include <nvtx3/nvToolsExt.h>
#include <nvtx3/nvToolsExtCuda.h>
#include <nvtx3/nvToolsExtCudaRt.h>
#include <nvtx3/nvToolsExtSync.h>

#include <generated_nvtx_meta.h>

#include "backend/cupti_range.h"
#include "base/dl.h"
#include "tool/core.h"

#define EXPORT __attribute__((visibility("default")))
#define MAX_CONTEXTS 64
#define MAX_KERNELS 65536

/* The parameters CUPTI passes for the launch calls (the layout of
 * generated_cuda_meta.h's cuLaunchKernel_params and cuLaunchKernelEx_params;
 * that header needs the driver's legacy types, so the two are restated). */
typedef struct launch_params {
  CUfunction f;
  unsigned int gridDimX, gridDimY, gridDimZ;
  unsigned int blockDimX, blockDimY, blockDimZ;
  unsigned int sharedMemBytes;
  CUstream hStream;
  void **kernelParams;
  void **extra;
} launch_params;

typedef struct launch_ex_params {
  const CUlaunchConfig *config;
  CUfunction f;
  void **kernelParams;
  void **extra;
} launch_ex_params;

/* cuptiSubscribe_v2's parameters (CUpti_SubscriberParams, cupti_callbacks.h
 * from CUDA 13.0; docs/nvidia.md, "CUPTI by version"), declared here so
 * that lumen builds with older headers and passes them to a 13.x library
 * it loads. */
typedef struct subscriber_params {
  size_t structSize;
  const char *subscriberName;
  char *
      oldSubscriberName; /* where CUPTI names the subscriber already attached */
  size_t oldSubscriberSize;
} subscriber_params;
#define SUBSCRIBER_PARAMS_SIZE                                                 \
  (offsetof(subscriber_params, oldSubscriberSize) + sizeof(size_t))

#if CUPTI_API_VERSION >= LM_CUPTI_API_13_0
#define SAME_OFFSET(m)                                                         \
  _Static_assert(offsetof(subscriber_params, m) ==                             \
                     offsetof(CUpti_SubscriberParams, m),                      \
                 #m)
SAME_OFFSET(structSize);
SAME_OFFSET(subscriberName);
SAME_OFFSET(oldSubscriberName);
SAME_OFFSET(oldSubscriberSize);
_Static_assert(SUBSCRIBER_PARAMS_SIZE == CUpti_SubscriberParams_STRUCT_SIZE,
               "struct size");
#endif
_Static_assert(SUBSCRIBER_PARAMS_SIZE == 32,
               "docs/nvidia.md: CUpti_SubscriberParams_STRUCT_SIZE");

/* The struct sizes docs/nvidia.md ("CUPTI by version") lists for CUDA
 * 13.0's headers: a 13.0 build that disagrees with the table fails here.
 * (Later headers may append members; 12.6's are not in the table.) */
#if CUPTI_API_VERSION / 100 == LM_CUPTI_API_13_0 / 100
#define TABLE_SIZE(type, bytes)                                                \
  _Static_assert(type##_STRUCT_SIZE == (bytes), #type)
TABLE_SIZE(CUpti_RangeProfiler_SetConfig_Params, 90);
TABLE_SIZE(CUpti_RangeProfiler_Enable_Params, 32);
TABLE_SIZE(CUpti_RangeProfiler_Disable_Params, 24);
TABLE_SIZE(CUpti_RangeProfiler_Start_Params, 24);
TABLE_SIZE(CUpti_RangeProfiler_Stop_Params, 41);
TABLE_SIZE(CUpti_RangeProfiler_DecodeData_Params, 32);
TABLE_SIZE(CUpti_RangeProfiler_GetCounterDataSize_Params, 64);
TABLE_SIZE(CUpti_RangeProfiler_CounterDataImage_Initialize_Params, 40);
TABLE_SIZE(CUpti_Profiler_Initialize_Params, 16);
TABLE_SIZE(CUpti_Device_GetChipName_Params, 32);
#endif

/* A CUDA context and its range profiler. */
typedef struct context {
  CUcontext ctx;
  int device;
  CUpti_RangeProfiler_Object *profiler;
  uint8_t **data;    /* per set: counter-data image */
  size_t *data_size; /* per set */
} context;

/* The launch in flight on this thread, between API enter and exit. */
typedef struct launch {
  int active;
  context *c;
  lm_tool_dispatch d;
  lm_choice choice;
  unsigned long long start_ns;
} launch;

static __thread launch in_flight;

static struct {
  lm_dl_lib lib; /* CUPTI, kept open while the process runs */
  CUpti_SubscriberHandle subscriber;
  pthread_mutex_t lock;
  int ready, failed;
  char chip[64];
  lm_cupti_host *host;
  lm_cupti_images images;
  char ***set_metrics; /* per set: the config's metrics (borrowed from the core's config) */
  size_t *set_n;
  context contexts[MAX_CONTEXTS];
  int n_contexts;
  atomic_ullong next_dispatch;
  atomic_int usable;       /* set up and not failed: the lock-free path is open */
  atomic_uint contexts_gen; /* counts contexts gone, so threads forget them */
  char **kernel_names; /* mangled; the kernel id is the index + 1 */
  size_t n_kernels;
  /* CUPTI */
  CUptiResult (*get_version)(uint32_t *);
  CUptiResult (*subscribe_v2)(CUpti_SubscriberHandle *, CUpti_CallbackFunc,
                              void *, subscriber_params *); /* CUDA 13.0 on */
  CUptiResult (*subscribe)(CUpti_SubscriberHandle *, CUpti_CallbackFunc,
                           void *);
  void *host_init; /* cuptiProfilerHostInitialize: only whether it is there */
  CUptiResult (*enable_callback)(uint32_t, CUpti_SubscriberHandle, CUpti_CallbackDomain,
                                 CUpti_CallbackId);
  CUptiResult (*enable_domain)(uint32_t, CUpti_SubscriberHandle, CUpti_CallbackDomain);
  CUptiResult (*result_string)(CUptiResult, const char **);
  CUptiResult (*profiler_init)(CUpti_Profiler_Initialize_Params *);
  CUptiResult (*chip_name)(CUpti_Device_GetChipName_Params *);
  CUptiResult (*rp_enable)(CUpti_RangeProfiler_Enable_Params *);
  CUptiResult (*rp_disable)(CUpti_RangeProfiler_Disable_Params *);
  CUptiResult (*rp_data_size)(CUpti_RangeProfiler_GetCounterDataSize_Params *);
  CUptiResult (*rp_data_init)(CUpti_RangeProfiler_CounterDataImage_Initialize_Params *);
  CUptiResult (*rp_set_config)(CUpti_RangeProfiler_SetConfig_Params *);
  CUptiResult (*rp_start)(CUpti_RangeProfiler_Start_Params *);
  CUptiResult (*rp_stop)(CUpti_RangeProfiler_Stop_Params *);
  CUptiResult (*rp_decode)(CUpti_RangeProfiler_DecodeData_Params *);
  /* CUDA driver */
  CUresult (*ctx_get_device)(CUdevice *);
  CUresult (*device_attribute)(int *, CUdevice_attribute, CUdevice);
  CUresult (*device_name)(char *, int, CUdevice);
  CUresult (*device_memory)(size_t *, CUdevice);
  CUresult (*driver_version)(int *);
  CUresult (*func_attribute)(int *, CUfunction_attribute, CUfunction);
} C = {.lock = PTHREAD_MUTEX_INITIALIZER};

/* Report a failed CUPTI call with its fix, and stop collecting. */
static void fail(const char *call, CUptiResult r) {
  const char *text = NULL;
  if (C.result_string) C.result_string(r, &text);
  char line[1024];
  lm_cupti_explain_chip((int)r, call, text, C.chip, line, sizeof line);
  C.failed = 1;
  atomic_store(&C.usable, 0);
  lm_tool_error(line);
}

static void fail_diag(const lm_diag *d) {
  C.failed = 1;
  atomic_store(&C.usable, 0);
  lm_tool_error(d->message);
}

/* ------------------------------------------------------------- set-up */

static void sysinfo_int(const char *key, long long v) {
  char text[32];
  snprintf(text, sizeof text, "%lld", v);
  lm_tool_sysinfo(key, text);
}

static void write_sysinfo(CUdevice dev, const char *arch) {
  char name[256] = "";
  int v = 0;
  size_t bytes = 0;
  if (C.device_name && C.device_name(name, (int)sizeof name, dev) == CUDA_SUCCESS)
    lm_tool_sysinfo("gpu_model", name);
  lm_tool_sysinfo("gpu_arch", arch);
  lm_tool_sysinfo("gpu_chip", C.chip);
  lm_tool_sysinfo("wave_size", "32");
  if (C.device_attribute(&v, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, dev) == CUDA_SUCCESS)
    sysinfo_int("cu_per_gpu", v);
  if (C.device_attribute(&v, CU_DEVICE_ATTRIBUTE_CLOCK_RATE, dev) == CUDA_SUCCESS && v > 0)
    sysinfo_int("max_sclk", v / 1000); /* kHz -> MHz */
  if (C.device_attribute(&v, CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE, dev) == CUDA_SUCCESS && v > 0)
    sysinfo_int("max_mclk", v / 1000);
  if (C.device_attribute(&v, CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE, dev) == CUDA_SUCCESS)
    sysinfo_int("gpu_l2", v / 1024); /* KiB */
  if (C.device_attribute(&v, CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK, dev) == CUDA_SUCCESS)
    sysinfo_int("workgroup_max_size", v);
  if (C.device_memory && C.device_memory(&bytes, dev) == CUDA_SUCCESS)
    sysinfo_int("gpu_memory", (long long)(bytes >> 20)); /* MiB */
  if (C.driver_version && C.driver_version(&v) == CUDA_SUCCESS) {
    char text[32];
    snprintf(text, sizeof text, "%d.%d", v / 1000, v % 1000 / 10);
    lm_tool_sysinfo("cuda_version", text); /* the driver's CUDA version */
  }
  /* The kernel driver's version: NVIDIA's procfs line. */
  FILE *f = fopen("/proc/driver/nvidia/version", "r");
  char line[512];
  if (f && fgets(line, sizeof line, f)) {
    /* "... Kernel Module  550.54.15 ..." or "... Kernel Module for x86_64  570.86.15 ...":
     * the first word after it that starts with a digit. */
    char *p = strstr(line, "Kernel Module");
    for (char *w = p ? strtok(p + 13, " \t\n") : NULL; w; w = strtok(NULL, " \t\n"))
      if (*w >= '0' && *w <= '9') {
        lm_tool_sysinfo("driver_version", w);
        break;
      }
  }
  if (f) fclose(f);
}

/* Everything that needs the initialized driver, once, on the first launch:
 * the profiler, the device's chip and architecture (checked against the
 * plan), the config images, the system information and the telemetry. */
static int set_up(CUdevice dev) {
  const lm_tool_config *cfg = lm_tool_config_now();
  if (!cfg) return -1;
  CUpti_Profiler_Initialize_Params ip = {CUpti_Profiler_Initialize_Params_STRUCT_SIZE, NULL};
  CUptiResult r = C.profiler_init(&ip);
  if (r != CUPTI_SUCCESS) {
    fail("cuptiProfilerInitialize", r);
    return -1;
  }
  CUpti_Device_GetChipName_Params cp;
  memset(&cp, 0, sizeof cp);
  cp.structSize = CUpti_Device_GetChipName_Params_STRUCT_SIZE;
  cp.deviceIndex = (size_t)dev;
  if ((r = C.chip_name(&cp)) != CUPTI_SUCCESS || !cp.pChipName) {
    fail("cuptiDeviceGetChipName", r);
    return -1;
  }
  snprintf(C.chip, sizeof C.chip, "%s", cp.pChipName);
  int major = 0, minor = 0;
  C.device_attribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev);
  C.device_attribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev);
  char arch[32];
  snprintf(arch, sizeof arch, "sm_%d%d", major, minor);
  if (lm_tool_attached(arch) != 0) return -1;
  write_sysinfo(dev, arch);
  lm_diag d;
  lm_diag_clear(&d);
  if (lm_cupti_host_open(&C.host, &d) != LM_OK ||
      lm_cupti_images_build(C.host, C.chip, (char *const *const *)cfg->set_counters, cfg->n_sets,
                            &C.images, &d) != LM_OK) {
    fail_diag(&d);
    return -1;
  }
  C.set_metrics = cfg->set_counters;
  C.set_n = lm_calloc((size_t)cfg->n_sets, sizeof *C.set_n);
  if (!C.set_n) {
    lm_tool_error("out of memory while setting up CUPTI");
    return -1;
  }
  for (int s = 0; s < cfg->n_sets; s++)
    while (cfg->set_counters[s][C.set_n[s]]) C.set_n[s]++;
  char why[256] = "";
  lm_telemetry *t = lm_telemetry_open_nvml(why, sizeof why);
  lm_tool_telemetry(t, why);
  return 0;
}

/* The context's profiler and its counter-data images, made on its first
 * profiled launch. Called with C.lock held. */
static context *context_of(CUcontext ctx) {
  for (int i = 0; i < C.n_contexts; i++)
    if (C.contexts[i].ctx == ctx && C.contexts[i].profiler) return &C.contexts[i];
  if (C.n_contexts == MAX_CONTEXTS) {
    lm_tool_error("more CUDA contexts than lumen can profile (64)");
    return NULL;
  }
  context *c = &C.contexts[C.n_contexts];
  memset(c, 0, sizeof *c);
  c->ctx = ctx;
  CUdevice dev = 0;
  if (C.ctx_get_device(&dev) == CUDA_SUCCESS) c->device = (int)dev;
  CUpti_RangeProfiler_Enable_Params ep;
  memset(&ep, 0, sizeof ep);
  ep.structSize = CUpti_RangeProfiler_Enable_Params_STRUCT_SIZE;
  ep.ctx = ctx;
  CUptiResult r = C.rp_enable(&ep);
  if (r != CUPTI_SUCCESS) {
    fail("cuptiRangeProfilerEnable", r);
    return NULL;
  }
  c->profiler = ep.pRangeProfilerObject;
  int n_sets = C.images.n_sets;
  c->data = lm_calloc((size_t)n_sets, sizeof *c->data);
  c->data_size = lm_calloc((size_t)n_sets, sizeof *c->data_size);
  for (int s = 0; c->data && c->data_size && s < n_sets; s++) {
    CUpti_RangeProfiler_GetCounterDataSize_Params sp;
    memset(&sp, 0, sizeof sp);
    sp.structSize = CUpti_RangeProfiler_GetCounterDataSize_Params_STRUCT_SIZE;
    sp.pRangeProfilerObject = c->profiler;
    sp.pMetricNames = (const char **)C.set_metrics[s];
    sp.numMetrics = C.set_n[s];
    sp.maxNumOfRanges = 1; /* one launch per session */
    sp.maxNumRangeTreeNodes = 1;
    if ((r = C.rp_data_size(&sp)) != CUPTI_SUCCESS) {
      fail("cuptiRangeProfilerGetCounterDataSize", r);
      return NULL;
    }
    c->data_size[s] = sp.counterDataSize;
    c->data[s] = lm_malloc(sp.counterDataSize ? sp.counterDataSize : 1);
    if (!c->data[s]) {
      fail("allocating the counter-data image", (CUptiResult)LM_CUPTI_OUT_OF_MEMORY);
      return NULL;
    }
  }
  if (!c->data || !c->data_size) {
    fail("allocating the counter-data images", (CUptiResult)LM_CUPTI_OUT_OF_MEMORY);
    return NULL;
  }
  C.n_contexts++;
  return c;
}

static void context_gone(CUcontext ctx) {
  pthread_mutex_lock(&C.lock);
  atomic_fetch_add_explicit(&C.contexts_gen, 1, memory_order_release);
  for (int i = 0; i < C.n_contexts; i++) {
    context *c = &C.contexts[i];
    if (c->ctx != ctx || !c->profiler) continue;
    CUpti_RangeProfiler_Disable_Params dp;
    memset(&dp, 0, sizeof dp);
    dp.structSize = CUpti_RangeProfiler_Disable_Params_STRUCT_SIZE;
    dp.pRangeProfilerObject = c->profiler;
    C.rp_disable(&dp);
    c->profiler = NULL;
    for (int s = 0; c->data && s < C.images.n_sets; s++) lm_free(c->data[s]);
    lm_free(c->data);
    lm_free(c->data_size);
    c->data = NULL;
    c->data_size = NULL;
  }
  pthread_mutex_unlock(&C.lock);
}

/* ------------------------------------------------------------ launches */

/* The kernel id of a mangled name (ids from 1), announcing new kernels to
 * the core with their demangled names. Called with C.lock held. */
static uint64_t kernel_id(const char *mangled) {
  if (!mangled) mangled = "?";
  for (size_t i = 0; i < C.n_kernels; i++)
    if (strcmp(C.kernel_names[i], mangled) == 0) return i + 1;
  if (C.n_kernels >= MAX_KERNELS) return 0;
  char **grown = lm_realloc(C.kernel_names, (C.n_kernels + 1) * sizeof *grown);
  if (!grown) return 0;
  C.kernel_names = grown;
  if (!(grown[C.n_kernels] = lm_strdup(mangled))) return 0;
  uint64_t id = ++C.n_kernels;
  char name[4096];
  lm_tool_kernel_symbol(id, lm_cupti_demangle(mangled, name, sizeof name));
  return id;
}

static int func_attr(CUfunction f, CUfunction_attribute a) {
  int v = 0;
  if (f && C.func_attribute && C.func_attribute(&v, a, f) != CUDA_SUCCESS) v = 0;
  return v;
}

static void launch_enter(CUpti_CallbackId cbid, const CUpti_CallbackData *cb) {
  launch *l = &in_flight;
  memset(l, 0, sizeof *l);
  CUfunction f = NULL;
  unsigned grid[3] = {1, 1, 1}, block[3] = {1, 1, 1}, dyn_shared = 0;
  if (cbid == CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx ||
      cbid == CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx_ptsz) {
    const launch_ex_params *p = cb->functionParams;
    f = p->f;
    if (p->config) {
      grid[0] = p->config->gridDimX, grid[1] = p->config->gridDimY, grid[2] = p->config->gridDimZ;
      block[0] = p->config->blockDimX, block[1] = p->config->blockDimY;
      block[2] = p->config->blockDimZ;
      dyn_shared = p->config->sharedMemBytes;
    }
  } else { /* cuLaunchKernel, cuLaunchCooperativeKernel and _ptsz: one layout */
    const launch_params *p = cb->functionParams;
    f = p->f;
    grid[0] = p->gridDimX, grid[1] = p->gridDimY, grid[2] = p->gridDimZ;
    block[0] = p->blockDimX, block[1] = p->blockDimY, block[2] = p->blockDimZ;
    dyn_shared = p->sharedMemBytes;
  }
  /* The thread's last kernel and context: launching it again in the same
   * context takes no lock (the set-up, a new kernel or context do). */
  static __thread struct {
    const char *mangled; /* the core's copy (lives as long as the library) */
    uint64_t id;
    CUcontext ctx;
    context *c;
    unsigned gen;
  } last;
  const char *mangled = cb->symbolName ? cb->symbolName : "?";
  unsigned gen = atomic_load_explicit(&C.contexts_gen, memory_order_acquire);
  lm_tool_dispatch *d = &l->d;
  context *c = NULL;
  if (atomic_load_explicit(&C.usable, memory_order_acquire) && last.mangled && last.ctx == cb->context &&
      last.gen == gen && strcmp(last.mangled, mangled) == 0) {
    if (!lm_tool_config_now()) return;
    d->dispatch_id = atomic_fetch_add(&C.next_dispatch, 1);
    d->kernel_id = last.id;
    d->kernel_name = last.mangled;
    c = last.c;
  } else {
    pthread_mutex_lock(&C.lock);
    CUdevice dev = 0;
    if (!C.ready && !C.failed) {
      C.ctx_get_device(&dev);
      C.ready = set_up(dev) == 0;
      C.failed |= !C.ready;
      atomic_store_explicit(&C.usable, C.ready && !C.failed, memory_order_release);
    }
    if (!C.ready || C.failed || !lm_tool_config_now()) {
      pthread_mutex_unlock(&C.lock);
      return;
    }
    d->dispatch_id = atomic_fetch_add(&C.next_dispatch, 1); /* from 0, as -d counts (and the AMD runtimes) */
    d->kernel_id = kernel_id(mangled);
    d->kernel_name = d->kernel_id ? C.kernel_names[d->kernel_id - 1] : NULL;
    c = context_of(cb->context);
    pthread_mutex_unlock(&C.lock);
    if (c && d->kernel_id) {
      last.mangled = d->kernel_name;
      last.id = d->kernel_id;
      last.ctx = cb->context;
      last.c = c;
      last.gen = gen;
    }
  }
  if (!c) return;
  char demangled[4096];
  d->kernel_name = lm_cupti_demangle(d->kernel_name, demangled, sizeof demangled);
  d->gpu = c->device;
  d->tid = (unsigned long)syscall(SYS_gettid);
  d->workgroup = (uint64_t)block[0] * block[1] * block[2];
  d->grid = (uint64_t)grid[0] * grid[1] * grid[2] * d->workgroup; /* threads, as on AMD */
  d->lds = dyn_shared + (uint32_t)func_attr(f, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES);
  d->scratch = (uint32_t)func_attr(f, CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES);
  d->arch_vgpr = (uint32_t)func_attr(f, CU_FUNC_ATTRIBUTE_NUM_REGS);
  int set = lm_tool_dispatch_begin(d, &l->choice);
  d->kernel_name = NULL; /* the demangled copy lives on this stack frame only */
  if (set < 0 || set >= C.images.n_sets) {
    /* Not selected: the kernel runs unprofiled, recorded without values. */
    l->choice.set = -1;
    lm_tool_dispatch_end(d, &l->choice, 0, 0, NULL, 0);
    return;
  }
  CUpti_RangeProfiler_CounterDataImage_Initialize_Params ip;
  memset(&ip, 0, sizeof ip);
  ip.structSize = CUpti_RangeProfiler_CounterDataImage_Initialize_Params_STRUCT_SIZE;
  ip.pRangeProfilerObject = c->profiler;
  ip.counterDataSize = c->data_size[set];
  ip.pCounterData = c->data[set];
  CUptiResult r = C.rp_data_init(&ip);
  if (r != CUPTI_SUCCESS) return fail("cuptiRangeProfilerCounterDataImageInitialize", r);
  CUpti_RangeProfiler_SetConfig_Params sp;
  memset(&sp, 0, sizeof sp);
  sp.structSize = CUpti_RangeProfiler_SetConfig_Params_STRUCT_SIZE;
  sp.pRangeProfilerObject = c->profiler;
  sp.configSize = C.images.bytes[set];
  sp.pConfig = C.images.image[set];
  sp.counterDataImageSize = c->data_size[set];
  sp.pCounterDataImage = c->data[set];
  sp.range = CUPTI_AutoRange;
  sp.replayMode = CUPTI_KernelReplay;
  sp.maxRangesPerPass = 1;
  sp.numNestingLevels = 1;
  sp.minNestingLevel = 1;
  sp.passIndex = 0;
  sp.targetNestingLevel = 1;
  if ((r = C.rp_set_config(&sp)) != CUPTI_SUCCESS) return fail("cuptiRangeProfilerSetConfig", r);
  CUpti_RangeProfiler_Start_Params st;
  memset(&st, 0, sizeof st);
  st.structSize = CUpti_RangeProfiler_Start_Params_STRUCT_SIZE;
  st.pRangeProfilerObject = c->profiler;
  if ((r = C.rp_start(&st)) != CUPTI_SUCCESS) return fail("cuptiRangeProfilerStart", r);
  l->c = c;
  l->start_ns = lm_clock_ns();
  l->active = 1;
}

typedef struct decoded {
  const char *const *metrics;
  size_t n;
  lm_tool_value *values;
  int n_values;
  double duration_ns;
  int got;
} decoded;

static void take_values(void *user, size_t launch_index, const double *values) {
  decoded *out = user;
  (void)launch_index;
  if (!values) return;
  out->got = 1;
  for (size_t m = 0; m < out->n; m++) {
    if (isnan(values[m])) continue; /* n/a, not a zero */
    out->values[out->n_values].column = out->metrics[m];
    out->values[out->n_values++].value = values[m];
    if (strcmp(out->metrics[m], "gpu__time_duration.sum") == 0) out->duration_ns = values[m];
  }
}

static void launch_exit(void) {
  launch *l = &in_flight;
  if (!l->active) return;
  l->active = 0;
  int set = l->choice.set;
  CUpti_RangeProfiler_Stop_Params sp;
  memset(&sp, 0, sizeof sp);
  sp.structSize = CUpti_RangeProfiler_Stop_Params_STRUCT_SIZE;
  sp.pRangeProfilerObject = l->c->profiler;
  CUptiResult r = C.rp_stop(&sp);
  if (r != CUPTI_SUCCESS) return fail("cuptiRangeProfilerStop", r);
  if (!sp.isAllPassSubmitted) {
    lm_tool_error("CUPTI's kernel replay did not submit every pass of the counter set");
    return;
  }
  CUpti_RangeProfiler_DecodeData_Params dp;
  memset(&dp, 0, sizeof dp);
  dp.structSize = CUpti_RangeProfiler_DecodeData_Params_STRUCT_SIZE;
  dp.pRangeProfilerObject = l->c->profiler;
  if ((r = C.rp_decode(&dp)) != CUPTI_SUCCESS) return fail("cuptiRangeProfilerDecodeData", r);
  unsigned long long end_ns = lm_clock_ns();
  decoded out = {(const char *const *)C.set_metrics[set], C.set_n[set], NULL, 0, -1, 0};
  out.values = lm_calloc(out.n + 1, sizeof *out.values);
  lm_cupti_source src;
  lm_diag d;
  lm_diag_clear(&d);
  if (!out.values) {
    lm_tool_error("out of memory while decoding counter data");
    return;
  }
  if (lm_cupti_source_image_new(C.host, C.chip, out.metrics, out.n, l->c->data[set],
                                l->c->data_size[set], &src, &d) != LM_OK ||
      lm_cupti_decode(&src, 1, out.metrics, out.n, take_values, &out, NULL, &d) != LM_OK) {
    lm_cupti_source_image_free(&src);
    lm_free(out.values);
    fail_diag(&d);
    return;
  }
  lm_cupti_source_image_free(&src);
  /* Start: the host's clock at launch. End: start plus CUPTI's duration
   * of the kernel where the set has it, else the host's clock after the
   * session (which includes the replays). */
  if (out.duration_ns >= 0) end_ns = l->start_ns + (unsigned long long)llround(out.duration_ns);
  if (!out.got) l->choice.set = -1; /* the range was dropped: no values */
  lm_tool_dispatch_end(&l->d, &l->choice, l->start_ns, end_ns, out.values, out.n_values);
  lm_free(out.values);
}

/* ---------------------------------------------------------------- NVTX */

static void on_nvtx(CUpti_CallbackId cbid, const CUpti_NvtxData *nv) {
  unsigned long tid = (unsigned long)syscall(SYS_gettid);
  const void *p = nv->functionParams;
  switch (cbid) {
  case CUPTI_CBID_NVTX_nvtxRangePushA:
    lm_tool_marker(LM_TOOL_PUSH, tid, ((const nvtxRangePushA_params *)p)->message, 0);
    break;
  case CUPTI_CBID_NVTX_nvtxRangePushEx:
  case CUPTI_CBID_NVTX_nvtxDomainRangePushEx: {
    const nvtxEventAttributes_t *a =
        cbid == CUPTI_CBID_NVTX_nvtxRangePushEx
            ? ((const nvtxRangePushEx_params *)p)->eventAttrib
            : ((const nvtxDomainRangePushEx_params *)p)->core.eventAttrib;
    const char *msg = a && a->messageType == NVTX_MESSAGE_TYPE_ASCII ? a->message.ascii : "?";
    lm_tool_marker(LM_TOOL_PUSH, tid, msg, 0);
    break;
  }
  case CUPTI_CBID_NVTX_nvtxRangePop:
  case CUPTI_CBID_NVTX_nvtxDomainRangePop: lm_tool_marker(LM_TOOL_POP, tid, NULL, 0); break;
  case CUPTI_CBID_NVTX_nvtxRangeStartA:
  case CUPTI_CBID_NVTX_nvtxRangeStartEx: {
    const char *msg = "?";
    if (cbid == CUPTI_CBID_NVTX_nvtxRangeStartA) msg = ((const nvtxRangeStartA_params *)p)->message;
    else {
      const nvtxEventAttributes_t *a = ((const nvtxRangeStartEx_params *)p)->eventAttrib;
      if (a && a->messageType == NVTX_MESSAGE_TYPE_ASCII) msg = a->message.ascii;
    }
    const nvtxRangeId_t *id = nv->functionReturnValue;
    if (id) lm_tool_marker(LM_TOOL_START, tid, msg, (uint64_t)*id);
    break;
  }
  case CUPTI_CBID_NVTX_nvtxRangeEnd:
    lm_tool_marker(LM_TOOL_STOP, tid, NULL, (uint64_t)((const nvtxRangeEnd_params *)p)->id);
    break;
  default: break;
  }
}

/* ------------------------------------------------------------ callbacks */

static void CUPTIAPI on_callback(void *user, CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
                                 const void *data) {
  (void)user;
  if (domain == CUPTI_CB_DOMAIN_DRIVER_API) {
    const CUpti_CallbackData *cb = data;
    if (cb->callbackSite == CUPTI_API_ENTER) launch_enter(cbid, cb);
    else launch_exit();
  } else if (domain == CUPTI_CB_DOMAIN_NVTX) {
    on_nvtx(cbid, data);
  } else if (domain == CUPTI_CB_DOMAIN_RESOURCE &&
             cbid == CUPTI_CBID_RESOURCE_CONTEXT_DESTROY_STARTING) {
    context_gone(((const CUpti_ResourceData *)data)->context);
  }
}

static void at_exit(void) { lm_tool_finish(); }

/* InitializeInjection: called by the CUDA driver during cuInit when
 * CUDA_INJECTION64_PATH names this library. Returns 1 (the driver goes on
 * either way; lumen's errors are in its records). */
EXPORT int InitializeInjection(void);
EXPORT int InitializeInjection(void) {
  if (!lm_tool_config_now()) return 1; /* not under lumen */
  const char *names[] = {getenv("LUMEN_CUPTI_LIBRARY"), "libcupti.so.13",
                         "libcupti.so.12", "libcupti.so"};
  if (lm_dl_open(&C.lib, names, sizeof names / sizeof *names, RTLD_GLOBAL, NULL) != LM_OK) {
    lm_tool_error(
        "cannot load CUPTI (libcupti.so): install the CUDA toolkit's CUPTI or "
        "set LUMEN_CUPTI_LIBRARY");
    return 1;
  }
  const char *path = C.lib.name;
  /* None is required here: what is missing is named below. */
  const lm_dl_sym cupti_syms[] = {
      {"cuptiGetVersion", &C.get_version, 0, NULL},
      {"cuptiSubscribe_v2", &C.subscribe_v2, 0, NULL},
      {"cuptiSubscribe", &C.subscribe, 0, NULL},
      {"cuptiProfilerHostInitialize", &C.host_init, 0, NULL},
      {"cuptiEnableCallback", &C.enable_callback, 0, NULL},
      {"cuptiEnableDomain", &C.enable_domain, 0, NULL},
      {"cuptiGetResultString", &C.result_string, 0, NULL},
      {"cuptiProfilerInitialize", &C.profiler_init, 0, NULL},
      {"cuptiDeviceGetChipName", &C.chip_name, 0, NULL},
      {"cuptiRangeProfilerEnable", &C.rp_enable, 0, NULL},
      {"cuptiRangeProfilerDisable", &C.rp_disable, 0, NULL},
      {"cuptiRangeProfilerGetCounterDataSize", &C.rp_data_size, 0, NULL},
      {"cuptiRangeProfilerCounterDataImageInitialize", &C.rp_data_init, 0, NULL},
      {"cuptiRangeProfilerSetConfig", &C.rp_set_config, 0, NULL},
      {"cuptiRangeProfilerStart", &C.rp_start, 0, NULL},
      {"cuptiRangeProfilerStop", &C.rp_stop, 0, NULL},
      {"cuptiRangeProfilerDecodeData", &C.rp_decode, 0, NULL},
  };
  lm_dl_resolve(&C.lib, cupti_syms, sizeof cupti_syms / sizeof *cupti_syms, NULL);
  /* What the library is before what it lacks: a CUPTI older than 12.6
   * Update 2 is named with its version, not taken for a broken one. */
  uint32_t version = 0;
  if (C.get_version && C.get_version(&version) != CUPTI_SUCCESS)
    version = 0;
  int has_range = C.rp_enable && C.rp_disable && C.rp_data_size &&
                  C.rp_data_init && C.rp_set_config && C.rp_start &&
                  C.rp_stop && C.rp_decode;
  char why[768];
  if (lm_cupti_library_check(path, version, C.host_init != NULL, has_range, why,
                             sizeof why) != LM_OK) {
    lm_tool_error(why);
    return 1;
  }
  if ((!C.subscribe && !C.subscribe_v2) || !C.enable_callback ||
      !C.enable_domain || !C.profiler_init || !C.chip_name) {
    snprintf(
        why, sizeof why,
        "%s (CUPTI API %u) lacks the Callback or Profiler API (cuptiSubscribe, "
        "cuptiEnableCallback, cuptiProfilerInitialize): set "
        "LUMEN_CUPTI_LIBRARY to a "
        "complete libcupti.so",
        path, (unsigned)version);
    lm_tool_error(why);
    return 1;
  }
  /* The driver that called us, never a second one: kept open (it is the
   * process's). */
  static const char *const driver[] = {"libcuda.so.1"};
  lm_dl_lib cuda;
  lm_dl_open(&cuda, driver, 1, RTLD_NOLOAD, NULL);
  const lm_dl_sym cuda_syms[] = {
      {"cuCtxGetDevice", &C.ctx_get_device, 0, NULL},
      {"cuDeviceGetAttribute", &C.device_attribute, 0, NULL},
      {"cuDeviceGetName", &C.device_name, 0, NULL},
      {"cuDeviceTotalMem_v2", &C.device_memory, 0, NULL},
      {"cuDriverGetVersion", &C.driver_version, 0, NULL},
      {"cuFuncGetAttribute", &C.func_attribute, 0, NULL},
  };
  lm_dl_resolve(&cuda, cuda_syms, sizeof cuda_syms / sizeof *cuda_syms, NULL);
  if (!C.ctx_get_device || !C.device_attribute) {
    lm_tool_error(
        "the CUDA driver (libcuda.so.1) is not loaded in this process");
    return 1;
  }
  /* The subscribe call the library has, whatever the headers lumen was
   * built with: cuptiSubscribe_v2 (CUDA 13.0 on) names lumen to other
   * tools; cuptiSubscribe is in every version. */
  CUptiResult r;
  const char *call = C.subscribe_v2 ? "cuptiSubscribe_v2" : "cuptiSubscribe";
  if (C.subscribe_v2) {
    subscriber_params params;
    memset(&params, 0, sizeof params);
    params.structSize = SUBSCRIBER_PARAMS_SIZE;
    params.subscriberName = "lumen";
    r = C.subscribe_v2(&C.subscriber, on_callback, NULL, &params);
  } else {
    r = C.subscribe(&C.subscriber, on_callback, NULL);
  }
  if (r != CUPTI_SUCCESS) {
    fail(call, r);
    return 1;
  }
  static const CUpti_CallbackId launches[] = {
      CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel,
      CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz,
      CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx,
      CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx_ptsz,
      CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel,
      CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel_ptsz};
  for (size_t i = 0; i < sizeof launches / sizeof launches[0] && r == CUPTI_SUCCESS; i++)
    r = C.enable_callback(1, C.subscriber, CUPTI_CB_DOMAIN_DRIVER_API, launches[i]);
  if (r == CUPTI_SUCCESS)
    r = C.enable_callback(1, C.subscriber, CUPTI_CB_DOMAIN_RESOURCE,
                          CUPTI_CBID_RESOURCE_CONTEXT_DESTROY_STARTING);
  if (r == CUPTI_SUCCESS) r = C.enable_domain(1, C.subscriber, CUPTI_CB_DOMAIN_NVTX);
  if (r != CUPTI_SUCCESS) {
    fail("cuptiEnableCallback", r);
    return 1;
  }
  atexit(at_exit);
  return 1;
}
