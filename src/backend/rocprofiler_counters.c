/*
 * rocprofiler_counters.c - an agent's counters through rocprofiler-sdk,
 * how lumen's hardware counters map onto them (rocprofiler.h), and the
 * check of a counter set against the SDK's per-block limits before the
 * first run: a set the SDK refuses is split greedily, in the order of the
 * plan, which keeps the counters of one metric together where they fit.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/rocprofiler.h"

typedef struct collect_ids {
  rocp_counter_id *ids;
  size_t n;
} collect_ids;

static rocp_status take_ids(rocp_agent_id agent, rocp_counter_id *list, size_t n, void *user) {
  (void)agent;
  collect_ids *c = user;
  c->ids = malloc((n + 1) * sizeof *c->ids);
  if (!c->ids) return ROCP_STATUS_ERROR;
  memcpy(c->ids, list, n * sizeof *list);
  c->n = n;
  return ROCP_STATUS_SUCCESS;
}

int lm_rocp_catalog_load(const lm_rocp_api *api, rocp_agent_id agent, lm_rocp_catalog *out,
                         char *why, size_t cap) {
  memset(out, 0, sizeof *out);
  collect_ids c = {0};
  rocp_status st = api->iterate_agent_supported_counters(agent, take_ids, &c);
  if (st != ROCP_STATUS_SUCCESS || !c.ids) {
    free(c.ids);
    snprintf(why, cap, "rocprofiler-sdk cannot list the counters of agent %llu (status %d)",
             (unsigned long long)agent.handle, st);
    return -1;
  }
  out->info = calloc(c.n + 1, sizeof *out->info);
  if (!out->info) {
    free(c.ids);
    snprintf(why, cap, "out of memory");
    return -1;
  }
  out->ids = c.ids;
  for (size_t i = 0; i < c.n; i++)
    if (api->query_counter_info(c.ids[i], ROCP_COUNTER_INFO_VERSION_1, &out->info[out->n]) ==
            ROCP_STATUS_SUCCESS &&
        out->info[out->n].name) {
      out->ids[out->n] = c.ids[i];
      out->n++;
    }
  return 0;
}

void lm_rocp_catalog_fini(lm_rocp_catalog *c) {
  free(c->ids);
  free(c->info);
  memset(c, 0, sizeof *c);
}

static const rocp_counter_info *find(const lm_rocp_catalog *cat, const char *name, int derived) {
  for (size_t i = 0; i < cat->n; i++)
    if ((int)cat->info[i].is_derived == derived && strcmp(cat->info[i].name, name) == 0)
      return &cat->info[i];
  return NULL;
}

int lm_rocp_resolve(const lm_rocp_catalog *cat, const char *name, lm_rocp_want *out, int cap) {
  const rocp_counter_info *x = find(cat, name, 0);
  if (!x || cap < 2) return 0;
  const rocp_dimension *xcc = NULL, *inst = NULL;
  for (uint64_t d = 0; d < x->dimensions_count; d++) {
    const rocp_dimension *dim = x->dimensions[d];
    if (strcmp(dim->name, "XCC") == 0) xcc = dim;
    else if (dim->instance_size > 1 && !inst) inst = dim;
  }
  int n = 0;
  memset(out, 0, (size_t)cap * sizeof *out);
  if (!inst) {
    out[n].id = x->id;
    out[n].form = LM_ROCP_TOTAL;
    snprintf(out[n].column, sizeof out[n].column, "%.240s", name);
    return n + 1;
  }
  char sum[240];
  snprintf(sum, sizeof sum, "%.200s_sum", name);
  const rocp_counter_info *derived = find(cat, sum, 1);
  out[n].id = derived ? derived->id : x->id;
  out[n].form = LM_ROCP_TOTAL;
  snprintf(out[n].column, sizeof out[n].column, "%s", sum);
  n++;
  if (x->block && strcmp(x->block, "TCC") == 0) {
    out[n].id = x->id;
    out[n].form = LM_ROCP_CHANNELS;
    snprintf(out[n].column, sizeof out[n].column, "%.240s", name);
    out[n].n_inst = inst->instance_size;
    out[n].dim_inst = inst->id;
    out[n].dim_xcc = xcc ? xcc->id : 0;
    n++;
  }
  return n;
}

typedef struct first_gpu {
  rocp_agent_id id;
  int32_t best;
  const char *name;
  const rocp_agent *agent;
} first_gpu;

static rocp_status pick_gpu(int version, const void **agents, size_t n, void *user) {
  (void)version;
  first_gpu *f = user;
  for (size_t i = 0; i < n; i++) {
    const rocp_agent *a = agents[i];
    if (a->type != ROCP_AGENT_TYPE_GPU || (f->name && a->logical_node_type_id >= f->best)) continue;
    f->id = a->id;
    f->best = a->logical_node_type_id;
    f->name = a->name;
    f->agent = a;
  }
  return ROCP_STATUS_SUCCESS;
}

int lm_rocp_first_gpu(const lm_rocp_api *api, rocp_agent_id *agent, char *arch, size_t arch_cap,
                      const rocp_agent **info, char *why, size_t cap) {
  first_gpu f = {{0}, 0, NULL, NULL};
  rocp_status st = api->query_available_agents(ROCP_AGENT_INFO_VERSION_0, pick_gpu, sizeof(rocp_agent), &f);
  if (st != ROCP_STATUS_SUCCESS || !f.name) {
    snprintf(why, cap, "rocprofiler-sdk %u.%u.%u reports no GPU agent", api->major, api->minor,
             api->patch);
    return -1;
  }
  *agent = f.id;
  if (info) *info = f.agent;
  snprintf(arch, arch_cap, "%s", f.name);
  return 0;
}

/* Whether the SDK accepts one config of these wants. */
static int accepted(const lm_rocp_api *api, rocp_agent_id agent, const lm_rocp_want *w, size_t n,
                    rocp_status *st) {
  rocp_counter_id ids[1024];
  size_t m = 0;
  for (size_t i = 0; i < n && m < 1024; i++) {
    int dup = 0;
    for (size_t k = 0; k < m && !dup; k++) dup = ids[k].handle == w[i].id.handle;
    if (!dup) ids[m++] = w[i].id;
  }
  rocp_counter_config_id cfg = {0};
  *st = api->create_counter_config(agent, ids, m, &cfg);
  return *st == ROCP_STATUS_SUCCESS;
}

int lm_rocp_check_set(const lm_rocp_api *api, const lm_rocp_catalog *cat, rocp_agent_id agent,
                      const char *const *counters, int n, const int *keep, int *lacking, int *part,
                      char *why, size_t cap) {
  lm_rocp_want *all = calloc((size_t)n * 2 + 1, sizeof *all), *kept = calloc((size_t)n * 2 + 1, sizeof *kept);
  int *first = calloc((size_t)n + 1, sizeof *first), *count = calloc((size_t)n + 1, sizeof *count);
  int moved = -1;
  if (!all || !kept || !first || !count) {
    snprintf(why, cap, "out of memory");
    goto done;
  }
  size_t n_all = 0;
  for (int i = 0; i < n; i++) {
    first[i] = (int)n_all;
    count[i] = lm_rocp_resolve(cat, counters[i], &all[n_all], 2);
    lacking[i] = count[i] == 0;
    part[i] = 0;
    n_all += (size_t)count[i];
  }
  rocp_status st;
  moved = 0;
  if (accepted(api, agent, all, n_all, &st)) goto done;
  if (st != ROCP_STATUS_ERROR_EXCEEDS_HW_LIMIT) {
    snprintf(why, cap, "rocprofiler-sdk refused the counter config (status %d)", st);
    moved = -1;
    goto done;
  }
  /* Greedy: what must stay first, then the others in order. */
  size_t n_kept = 0;
  for (int pass = 0; pass < 2; pass++)
    for (int i = 0; i < n; i++) {
      if (lacking[i] || (pass == 0) != (keep && keep[i])) continue;
      memcpy(&kept[n_kept], &all[first[i]], (size_t)count[i] * sizeof *kept);
      if (pass == 0 || accepted(api, agent, kept, n_kept + (size_t)count[i], &st)) {
        n_kept += (size_t)count[i];
      } else {
        part[i] = 1;
        moved++;
      }
    }
  if (moved == 0) {
    snprintf(why, cap, "rocprofiler-sdk refuses even the counters every set carries");
    moved = -1;
  }
done:
  free(all);
  free(kept);
  free(first);
  free(count);
  return moved;
}
