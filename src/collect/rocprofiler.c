/*
 * rocprofiler.c - the rocprofiler-sdk backend of `lumen profile`: finds
 * the SDK and its first GPU agent, plans the counter sets under the
 * architecture's per-block limits and checks them against the agent's own
 * counter catalog before the first run (splitting a set the SDK refuses).
 * It decides nothing about what is collected: that is the core's
 * (collect.c). The system information is the device's: the SDK's
 * description of the agent, rocm-smi's top clocks where the agent has
 * none, and the architecture's facts (sysinfo_agent.c). Whether the
 * numbers are replays the SDK says itself, through the device extension
 * that names the recorded workload it replays (backend.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/backend.h"
#include "backend/rocprofiler.h"
#include "collect/collect.h"
#include "sql/sql.h"
#include "db/db.h"
#include "load/load.h"

typedef struct rocp_impl {
  lm_rocp_api api;
  rocp_agent_id agent;
  lm_arena *arena;          /* the system information's strings */
  lm_sysinfo info;
  lm_workload *recording;   /* the workload a replaying device replays (its roofline) */
} rocp_impl;

/* check_sets: every set against the device (the first GPU agent), before
 * the first run. A counter the agent lacks is an error naming it when the
 * metrics were asked for with -b; in a full profile it is left out with a
 * warning (the metrics that read it show no value). A set the SDK refuses
 * is split: the counters that do not fit move to a new set (with the
 * counters every set carries), which gets a run of its own; the reason is
 * noted. The revised plan replaces the stored one. */
static lm_status check_sets(lm_collector *col, lm_sql *db, int64_t wid, lm_set_info **sets_io,
                            int *n_sets_io, int explicit_items, lm_diag *diag) {
  rocp_impl *impl = col->impl;
  const lm_rocp_api *api = &impl->api;
  rocp_agent_id agent = impl->agent;
  const char *arch = col->arch;
  lm_set_info *sets = *sets_io;
  int n_sets = *n_sets_io;
  lm_rocp_catalog cat;
  char why[512];
  if (lm_rocp_catalog_load(api, agent, &cat, why, sizeof why) != 0) return lm_fail(diag, LM_EINVAL, NULL, "%s", why);
  lm_status st = lm_db_begin(db, diag);
  int n_original = n_sets;
  for (int s = 0; st == LM_OK && s < n_sets; s++) {
    int n = 0;
    while (sets[s].counters && sets[s].counters[n]) n++;
    int *stay = lm_calloc((size_t)n + 1, sizeof *stay), *copy = lm_calloc((size_t)n + 1, sizeof *copy);
    int *lacking = lm_calloc((size_t)n + 1, sizeof *lacking), *part = lm_calloc((size_t)n + 1, sizeof *part);
    if (!stay || !copy || !lacking || !part) st = lm_oom(diag, NULL);
    for (int i = 0; st == LM_OK && i < n; i++) {
      const char *c = sets[s].counters[i];
      int in_all = 1;
      for (int t = 0; t < n_original && in_all; t++) {
        int found = 0;
        for (char **k = sets[t].counters; k && *k && !found; k++) found = strcmp(*k, c) == 0;
        in_all = found;
      }
      copy[i] = in_all && n_original > 1;
      stay[i] = copy[i] || (sets[s].accumulate && (strcmp(c, sets[s].accumulate) == 0 ||
                                                      strcmp(c, "SQ_ACCUM_PREV_HIRES") == 0));
    }
    int moved = st == LM_OK ? lm_rocp_check_set(api, &cat, agent, (const char *const *)sets[s].counters,
                                                n, stay, lacking, part, why, sizeof why)
                            : 0;
    if (st == LM_OK && moved < 0) st = lm_fail(diag, LM_EINVAL, NULL, "counter set %d on %s: %s", s, arch, why);
    for (int i = 0; st == LM_OK && i < n; i++) {
      if (!lacking[i]) continue;
      const char *c = sets[s].counters[i];
      if (explicit_items) {
        st = lm_fail_at(diag, LM_EINVAL, NULL, 0, "-b",
                        "counter %s is not supported by agent %s (GPU 0, rocprofiler-sdk %u.%u.%u): "
                        "the metrics asked for cannot be collected on this device",
                        c, arch, api->major, api->minor, api->patch);
        break;
      }
      lm_collect_note(db, wid, LM_LOG_WARN,
                      "counter %s is not supported by agent %s (GPU 0): left out; the metrics "
                      "reading it will show no value", c, arch);
      st = lm_db_plan_drop(db, wid, s, c, diag);
    }
    if (st == LM_OK && moved > 0) {
      int fresh = n_sets;
      for (int i = 0; st == LM_OK && i < n; i++) {
        const char *c = sets[s].counters[i];
        if (part[i])
          st = lm_db_plan_move(db, wid, s, c, fresh, diag);
        else if (copy[i])
          st = lm_db_plan_copy(db, wid, s, c, fresh, diag);
      }
      if (st == LM_OK)
        lm_collect_note(db, wid, LM_LOG_INFO,
                        "counter set %d: rocprofiler-sdk refused it on %s (over the hardware limits); "
                        "split: %d counter%s moved to set %d, which gets a run of its own", s, arch,
                        moved, moved == 1 ? "" : "s", fresh);
    }
    int any_lacking = 0;
    for (int i = 0; lacking && i < n; i++) any_lacking |= lacking[i];
    lm_free(stay);
    lm_free(copy);
    lm_free(lacking);
    lm_free(part);
    if (st == LM_OK && (moved > 0 || any_lacking)) {
      /* Reload: the loop goes on over the sets as they are now. */
      lm_collect_sets_fini(sets, n_sets);
      sets = NULL;
      n_sets = 0;
      st = lm_collect_load_plan(db, wid, &sets, &n_sets, diag);
    }
  }
  if (st == LM_OK) st = lm_db_commit(db, diag);
  else lm_db_rollback(db);
  lm_rocp_catalog_fini(&cat);
  *sets_io = sets;
  *n_sets_io = n_sets;
  return st;
}


static lm_status plan(lm_collector *c, const lm_catalog *cat, const char *const *items, size_t n_items,
                      int replay, lm_plan **out, lm_diag *diag) {
  (void)c;
  if (replay == LM_REPLAY_KERNEL)
    return lm_fail_at(diag, LM_EINVAL, NULL, 0, "--replay",
                      "kernel replay is CUPTI's (NVIDIA); %s GPUs use app or instance", cat->arch);
  return lm_plan_build(cat, items, n_items, out, diag);
}

static void close_rocp(lm_collector *c) {
  rocp_impl *impl = c->impl;
  if (impl) {
    lm_rocp_unload(&impl->api);
    lm_workload_free(impl->recording);
    lm_arena_free(impl->arena);
  }
  lm_free(impl);
  c->impl = NULL;
  c->info = NULL;
  c->roofline = NULL;
}

lm_status lm_collect_rocp_open(lm_collector *c, lm_diag *diag) {
  memset(c, 0, sizeof *c);
  c->name = "rocprofiler-sdk";
  c->plan = plan;
  c->check_sets = check_sets;
  c->close = close_rocp;
  rocp_impl *impl = lm_calloc(1, sizeof *impl);
  if (!impl) return lm_oom(diag, NULL);
  c->impl = impl;
  char why[512];
  const rocp_agent *agent_info = NULL;
  if (lm_rocp_load(&impl->api, 0, why, sizeof why) != 0 ||
      lm_rocp_first_gpu(&impl->api, &impl->agent, c->arch, sizeof c->arch, &agent_info, why, sizeof why) != 0) {
    close_rocp(c);
    return lm_fail(diag, LM_ENOTFOUND, NULL, "%s", why);
  }
  char recording[4096];
  int replayed = lm_rocp_replay(&impl->api, recording, sizeof recording);
  /* rocm-smi's top clocks where the agent has none (a device that
   * replays is not one rocm-smi sees). */
  double smi_sclk = -1, smi_mclk = -1;
  if (!replayed) {
    lm_telemetry *smi = lm_telemetry_open_rocm_smi(why, sizeof why);
    lm_telemetry_peak_clocks(smi, agent_info->logical_node_type_id, &smi_sclk, &smi_mclk);
    lm_telemetry_close(smi);
  }
  lm_status st = LM_OK;
  if (!(impl->arena = lm_arena_new(1 << 12))) {
    st = lm_oom(diag, NULL);
    goto fail;
  }
  if ((st = lm_collect_sysinfo(agent_info, lm_metrics_builtin(c->arch), smi_sclk, smi_mclk, 1, impl->arena,
                               &impl->info, diag)) != LM_OK)
    goto fail;
  c->info = &impl->info;
  /* lumen does not run the roofline microbenchmarks: a device's workload
   * has no roofline table, except on a device that replays a recording,
   * whose table stands for their result. */
  if (replayed) {
    if ((st = lm_workload_read(recording, &impl->recording, diag)) != LM_OK) goto fail;
    c->roofline = impl->recording->roofline;
  }
  const char *model = lm_sysinfo_text(&impl->info, "gpu_model");
  snprintf(c->model, sizeof c->model, "%s", model ? model : "");
  /* Numbers from a device that replays are never measurements:
   * the workload says so wherever it is read (docs/workload-format.md). */
  if (replayed) {
    snprintf(c->origin, sizeof c->origin, "%s%.4000s", LM_ORIGIN_SIMULATED, recording);
    snprintf(c->simulated, sizeof c->simulated, "%.1000s", recording);
  } else {
    snprintf(c->origin, sizeof c->origin, "%.256s%s%s (GPU %d)", c->model, c->model[0] ? ", " : "", c->arch,
             (int)agent_info->logical_node_type_id);
  }
  return LM_OK;
fail:
  close_rocp(c);
  return st;
}
