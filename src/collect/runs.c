/*
 * runs.c - what each run of `lumen profile` is, decided by the core and
 * independent of the vendor: which backend collects (the one asked for, or
 * the first with a device), which runs a replay mode needs, and the
 * configuration the tool library reads for one run (counter sets, replay
 * mode, filters, assignments). Backends only translate these (rocprofiler.c,
 * cupti.c); keeping the decisions here makes them testable
 * without a GPU.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/backend.h"
#include "collect/collect.h"

int lm_collect_run_plan(int replay, int n_sets, int *modes, int *passes, int cap) {
  if (replay == LM_REPLAY_KERNEL && n_sets != 1) return -1;
  if (replay == LM_REPLAY_APP || replay == LM_REPLAY_KERNEL) {
    int n = 0;
    for (int p = 0; p < n_sets && n < cap; p++, n++) {
      modes[n] = LM_REPLAY_APP;
      passes[n] = p;
    }
    return n;
  }
  if (cap < 1) return 0;
  modes[0] = LM_REPLAY_INSTANCE;
  passes[0] = 0;
  return 1;
}

void lm_collect_tool_config_fini(lm_tool_config *cfg) {
  lm_free(cfg->set_counters);
  lm_free(cfg->set_accumulate);
  cfg->set_counters = NULL;
  cfg->set_accumulate = NULL;
}

lm_status lm_collect_tool_config(const lm_collect_job *job, const lm_run_spec *spec,
                                 const char *records, lm_tool_config *cfg, lm_diag *diag) {
  memset(cfg, 0, sizeof *cfg);
  snprintf(cfg->arch, sizeof cfg->arch, "%s", job->arch);
  cfg->mode = spec->mode;
  cfg->pass = spec->pass;
  cfg->key_grid = job->opt->key_grid;
  cfg->n_sets = job->n_sets;
  cfg->set_counters = lm_calloc((size_t)job->n_sets + 1, sizeof *cfg->set_counters);
  cfg->set_accumulate = lm_calloc((size_t)job->n_sets + 1, sizeof *cfg->set_accumulate);
  if (!cfg->set_counters || !cfg->set_accumulate) {
    lm_collect_tool_config_fini(cfg);
    return lm_oom(diag, NULL);
  }
  for (int s = 0; s < job->n_sets; s++) {
    cfg->set_counters[s] = job->sets[s].counters;
    cfg->set_accumulate[s] = job->sets[s].accumulate;
  }
  const lm_stored_opts *o = job->opt;
  cfg->kernels = o->kernels;
  cfg->n_kernels = o->n_kernels;
  cfg->instance = o->instance;
  cfg->dispatch = o->dispatch;
  cfg->gpu = o->gpu;
  cfg->regions = o->regions;
  cfg->n_regions = o->n_regions;
  cfg->assign_key = spec->assign_key;
  cfg->assign_instance = spec->assign_instance;
  cfg->assign_set = spec->assign_set;
  cfg->n_assign = spec->n_assign;
  snprintf(cfg->output, sizeof cfg->output, "%s", records);
  snprintf(cfg->telemetry, sizeof cfg->telemetry, "%s", job->telemetry ? job->telemetry : "auto");
  return LM_OK;
}

void lm_collect_close_backend(lm_collector *c) {
  if (c && c->close) c->close(c);
  if (c) c->close = NULL;
}

lm_status lm_collect_open_backend(lm_collector *c, const char *asked, const char *tool, lm_diag *diag) {
  memset(c, 0, sizeof *c);
  if (asked && strcmp(asked, "rocprofiler-sdk") == 0) {
    lm_diag why;
    lm_diag_clear(&why);
    lm_status st = lm_collect_rocp_open(c, &why);
    if (st == LM_ENOTFOUND)
      return lm_fail_at(diag, st, NULL, 0, "--backend", "rocprofiler-sdk cannot collect here: %s", why.message);
    if (st != LM_OK) *diag = why;
    return st;
  }
  if (asked && strcmp(asked, "cupti") == 0) return lm_collect_cupti_open(c, tool, diag);
  if (asked) {
    lm_backend_status b[8];
    size_t nb = lm_backends_probe(b, 8);
    for (size_t i = 0; i < nb; i++)
      if (strcmp(b[i].name, asked) == 0)
        return lm_fail_at(diag, LM_EINVAL, NULL, 0, "--backend",
                          "%s is a %s backend, not a counter backend (rocprofiler-sdk or cupti)", asked, b[i].kind);
    return lm_fail_at(diag, LM_EINVAL, NULL, 0, "--backend",
                      "no counter backend named '%s' (rocprofiler-sdk or cupti; see `lumen list "
                      "backends`)",
                      asked);
  }
  /* Automatic: rocprofiler-sdk with a GPU agent, else an NVIDIA GPU. A
   * backend whose device is there but unusable (unsupported chip, counters
   * restricted) answers with its own error. */
  lm_diag rocp;
  lm_diag_clear(&rocp);
  lm_status st = lm_collect_rocp_open(c, &rocp);
  if (st == LM_OK) return LM_OK;
  if (st != LM_ENOTFOUND) {
    *diag = rocp;
    return st;
  }
  lm_diag nv;
  lm_diag_clear(&nv);
  st = lm_collect_cupti_open(c, tool, &nv);
  if (st == LM_OK) return LM_OK;
  if (st != LM_ENOTFOUND) {
    *diag = nv;
    return st;
  }
  return lm_fail(diag, LM_ENOTFOUND, NULL,
                 "no usable counter backend: rocprofiler-sdk: %.700s; cupti: %.700s (see `lumen "
                 "list backends`)",
                 rocp.message, nv.message);
}
