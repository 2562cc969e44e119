/*
 * backend_sim.c - the simulated GPU as a counter backend of the tool
 * library: it attaches through simgpu_tool_init (the way rocprofiler-sdk
 * finds rocprofiler_configure), creates one device configuration per
 * counter set (the device refuses a set over its limits), and translates
 * the device's callbacks into core calls. The device itself is test and
 * demonstration infrastructure: its counters are replayed, not measured.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/simgpu_tool.h"
#include "tool/core.h"

#define EXPORT __attribute__((visibility("default")))

static int *handles; /* device configuration per set */
static int n_handles;

/* The choice made at dispatch time, found again at completion (the
 * simulated device completes on the launching thread). */
static _Thread_local lm_choice last_choice;

static void facts(const simgpu_dispatch *d, lm_tool_dispatch *out) {
  const simgpu_launch_params *p = &d->params;
  out->dispatch_id = d->dispatch_id;
  out->kernel_id = d->kernel_id;
  out->kernel_name = d->kernel_name;
  out->gpu = d->gpu;
  out->tid = d->tid;
  out->grid = (uint64_t)p->grid.x * (p->grid.y ? p->grid.y : 1) * (p->grid.z ? p->grid.z : 1);
  out->workgroup = (uint64_t)p->workgroup.x * (p->workgroup.y ? p->workgroup.y : 1) *
                   (p->workgroup.z ? p->workgroup.z : 1);
  out->lds = p->lds_bytes;
  out->scratch = p->scratch_bytes;
  out->arch_vgpr = p->arch_vgprs;
  out->accum_vgpr = p->accum_vgprs;
  out->sgpr = p->sgprs;
}

static void sim_kernel(void *user, unsigned long long kernel_id, const char *name) {
  (void)user;
  lm_tool_kernel_symbol(kernel_id, name);
}

static int sim_dispatch(void *user, const simgpu_dispatch *d) {
  (void)user;
  lm_tool_dispatch f;
  facts(d, &f);
  int set = lm_tool_dispatch_begin(&f, &last_choice);
  return set >= 0 && set < n_handles ? handles[set] : 0;
}

static void sim_completed(void *user, const simgpu_dispatch *d, int config, unsigned long long start,
                          unsigned long long end, const simgpu_counter_value *values, int n) {
  (void)user;
  (void)config;
  lm_tool_dispatch f;
  facts(d, &f);
  lm_tool_value *v = n > 0 ? malloc((size_t)n * sizeof *v) : NULL;
  for (int i = 0; v && i < n; i++) {
    v[i].column = values[i].column;
    v[i].value = values[i].value;
  }
  lm_tool_dispatch_end(&f, &last_choice, start, end, v, v ? n : 0);
  free(v);
}

static void sim_marker(void *user, int op, unsigned long tid, const char *message,
                       unsigned long long id) {
  (void)user;
  static const int ops[] = {[SIMGPU_MARK_PUSH] = LM_TOOL_PUSH, [SIMGPU_MARK_POP] = LM_TOOL_POP,
                            [SIMGPU_MARK_START] = LM_TOOL_START, [SIMGPU_MARK_STOP] = LM_TOOL_STOP};
  if (op >= 0 && op < (int)(sizeof ops / sizeof *ops)) lm_tool_marker(ops[op], tid, message, id);
}

static void sim_shutdown(void *user) {
  (void)user;
  lm_tool_finish();
}

EXPORT int simgpu_tool_init(const simgpu_runtime_api *api, simgpu_tool_hooks *hooks) {
  const lm_tool_config *cfg = lm_tool_config_now();
  if (!cfg || api->abi != SIMGPU_TOOL_ABI) return -1;
  if (lm_tool_attached(api->arch) != 0) return -1;
  handles = calloc((size_t)cfg->n_sets + 1, sizeof *handles);
  if (!handles) return -1;
  for (int s = 0; s < cfg->n_sets; s++) {
    int n = 0;
    while (cfg->set_counters[s] && cfg->set_counters[s][n]) n++;
    char why[512] = "";
    handles[s] = api->create_config((const char *const *)cfg->set_counters[s], n,
                                    cfg->set_accumulate[s], why, sizeof why);
    if (handles[s] <= 0) {
      char msg[768];
      snprintf(msg, sizeof msg, "the device refused counter set %d: %s", s, why);
      lm_tool_error(msg);
      return -1;
    }
  }
  n_handles = cfg->n_sets;
  /* In a cycle of sets, successive instances repeat one recorded dispatch. */
  if (cfg->mode != LM_REPLAY_APP) api->set_instance_stride(cfg->n_sets);
  hooks->user = NULL;
  hooks->kernel_symbol = sim_kernel;
  hooks->dispatch = sim_dispatch;
  hooks->completed = sim_completed;
  hooks->marker = sim_marker;
  hooks->shutdown = sim_shutdown;
  /* Telemetry: the device's own clock log. */
  lm_tool_telemetry(lm_telemetry_open_sim(api));
  return 0;
}
