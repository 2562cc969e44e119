/*
 * cupti.c - the CUPTI backend of `lumen profile` (NVIDIA GPUs):
 * asks the CUDA driver about GPU 0 (loaded at run time: a lumen without a
 * driver still runs and says so), maps its compute capability to lumen's
 * architecture (sm_90) and that to CUPTI's chip (GH100, from the
 * architecture's definitions), checks that the counters are readable by
 * this user, prices the counter sets with CUPTI's Host API for that chip,
 * and names what a run needs: the driver injects liblumen_tool.so
 * (CUDA_INJECTION64_PATH), whose CUPTI adapter (src/tool/cupti.c)
 * collects. What is collected is decided by the core (collect.c) and, in
 * the application, by the tool's core (src/tool/core.c); the system
 * information comes back from the tool as S lines of the records.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "backend/cupti_range.h"
#include "collect/collect.h"

typedef struct cupti_impl {
  lm_cupti_host *host;
} cupti_impl;

/* The pass counter of lm_plan_build_passes: CUPTI's count for a config. */
typedef struct pass_ctx {
  lm_cupti_host *host;
  const char *chip;
} pass_ctx;

static lm_status count_passes(void *ctx, const char *const *names, size_t n, int32_t *passes,
                              size_t *image_bytes, lm_diag *diag) {
  pass_ctx *p = ctx;
  return lm_cupti_host_passes(p->host, p->chip, names, n, passes, image_bytes, NULL, diag);
}

static lm_status plan(lm_collector *c, const lm_catalog *cat, const char *const *items, size_t n_items,
                      int replay, lm_plan **out, lm_diag *diag) {
  cupti_impl *impl = c->impl;
  pass_ctx p = {impl->host, c->chip};
  /* auto starts as instance cycling: the sets are priced the same way. */
  int how = replay == LM_REPLAY_AUTO ? LM_REPLAY_INSTANCE : replay;
  return lm_plan_build_passes(cat, items, n_items, how, count_passes, &p, out, diag);
}

static void close_cupti(lm_collector *c) {
  cupti_impl *impl = c->impl;
  if (impl) lm_cupti_host_close(impl->host);
  lm_free(impl);
  c->impl = NULL;
}

lm_status lm_collect_cupti_check(lm_collector *c, const lm_cuda_device *dev, const char *params_text,
                                 int is_root, int has_chip, const char *why_cupti, lm_diag *diag) {
  snprintf(c->arch, sizeof c->arch, "sm_%d%d", dev->major, dev->minor);
  snprintf(c->model, sizeof c->model, "%s", dev->name);
  const lm_catalog *cat = lm_metrics_builtin(c->arch);
  if (!cat || !cat->vendor || strcmp(cat->vendor, "nvidia") != 0 || !cat->chip)
    return lm_fail(diag, LM_EINVAL, NULL,
                   "unsupported NVIDIA GPU: %s is compute capability %d.%d (%s), and lumen has "
                   "definitions for %s only (docs/adding-an-architecture.md)",
                   dev->name[0] ? dev->name : "GPU 0", dev->major, dev->minor, c->arch, lm_cupti_lumen_chips());
  snprintf(c->chip, sizeof c->chip, "%s", cat->chip);
  if (has_chip < 0)
    return lm_fail(diag, LM_ENOTFOUND, NULL,
                   "%s has an NVIDIA %s, but CUPTI is not "
                   "usable: %s",
                   c->model[0] ? c->model : "GPU 0", c->arch, why_cupti ? why_cupti : "?");
  if (!has_chip)
    return lm_fail(diag, LM_EINVAL, NULL,
                   "unsupported chip: this CUPTI does not know %s (%s); use the CUPTI of a "
                   "CUDA toolkit that supports it (LUMEN_CUPTI_LIBRARY names the library); lumen "
                   "has definitions for %s",
                   c->chip, c->model[0] ? c->model : c->arch, lm_cupti_lumen_chips());
  if (!is_root && lm_cuda_admin_only(params_text) == 1)
    return lm_fail(diag, LM_EINVAL, NULL,
                   "the NVIDIA driver lets only administrators read the GPU performance "
                   "counters (CUPTI_ERROR_INSUFFICIENT_PRIVILEGES): profile as root (or with "
                   "CAP_SYS_ADMIN), or load "
                   "the driver with NVreg_RestrictProfilingToAdminUsers=0 (a line `options "
                   "nvidia NVreg_RestrictProfilingToAdminUsers=0` under /etc/modprobe.d/, then "
                   "reload the driver or reboot; docs/nvidia.md, \"Permissions\")");
  snprintf(c->origin, sizeof c->origin, "cupti: %s (%s)", c->model[0] ? c->model : c->arch, c->chip);
  return LM_OK;
}

void lm_collect_cupti_env(lm_collector *c, const char *tool, const char *cupti_lib,
                          const char *user_nvtx) {
  c->n_env = 0;
  snprintf(c->env[c->n_env++], sizeof c->env[0], "CUDA_INJECTION64_PATH=%s", tool);
  if (cupti_lib && *cupti_lib) {
    snprintf(c->env[c->n_env++], sizeof c->env[0], "LUMEN_CUPTI_LIBRARY=%s", cupti_lib);
    /* CUPTI sees NVTX ranges only when NVTX injects it. */
    if (!user_nvtx || !*user_nvtx)
      snprintf(c->env[c->n_env++], sizeof c->env[0], "NVTX_INJECTION64_PATH=%s", cupti_lib);
  }
}

/* The driver's parameters, for the counter-access check ("" when the
 * file is absent: then CUPTI's own error says it at the first launch). */
static void read_params(char *out, size_t cap) {
  out[0] = '\0';
  FILE *f = fopen("/proc/driver/nvidia/params", "r");
  if (!f) return;
  size_t n = fread(out, 1, cap - 1, f);
  out[n] = '\0';
  fclose(f);
}

lm_status lm_collect_cupti_open(lm_collector *c, const char *tool, lm_diag *diag) {
  memset(c, 0, sizeof *c);
  c->name = "cupti";
  c->plan = plan;
  c->close = close_cupti;
  if (!lm_cupti_host_built())
    return lm_fail(diag, LM_ENOTFOUND, NULL,
                   "this lumen was built without the CUDA toolkit, so it has no CUPTI collector "
                   "(rebuild with CUDAToolkit_ROOT naming a CUDA 12.6+ installation)");
  lm_cuda_device dev;
  char why[512];
  if (lm_cuda_device_info(0, &dev, why, sizeof why) != 0)
    return lm_fail(diag, LM_ENOTFOUND, NULL,
                   "no NVIDIA GPU to profile: %s; install the NVIDIA driver on a machine with "
                   "an NVIDIA GPU (`nvidia-smi` lists the GPUs it sees)",
                   why);
  cupti_impl *impl = lm_calloc(1, sizeof *impl);
  if (!impl) return lm_oom(diag, NULL);
  c->impl = impl;
  lm_diag host_diag;
  lm_diag_clear(&host_diag);
  int has_chip = -1;
  if (lm_cupti_host_open(&impl->host, &host_diag) == LM_OK) has_chip = 0;
  char params[8192];
  read_params(params, sizeof params);
  /* The chip is the architecture's (its definitions name it): ask the
   * Host API whether it knows it. */
  char arch[64];
  snprintf(arch, sizeof arch, "sm_%d%d", dev.major, dev.minor);
  const lm_catalog *cat = lm_metrics_builtin(arch);
  if (has_chip == 0 && cat && cat->chip) has_chip = lm_cupti_host_has_chip(impl->host, cat->chip);
  /* Root, or a user holding CAP_SYS_ADMIN, may read restricted counters. */
  char status[8192] = "";
  FILE *sf = fopen("/proc/self/status", "r");
  if (sf) {
    size_t n = fread(status, 1, sizeof status - 1, sf);
    status[n] = '\0';
    fclose(sf);
  }
  int admin = geteuid() == 0 || lm_cuda_has_sys_admin(status) == 1;
  lm_status st = lm_collect_cupti_check(c, &dev, params, admin, has_chip, host_diag.message, diag);
  if (st != LM_OK) {
    close_cupti(c);
    return st;
  }
  lm_collect_cupti_env(c, tool, lm_cupti_host_path(impl->host), getenv("NVTX_INJECTION64_PATH"));
  return LM_OK;
}
