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

/* The dimensions of one counter, copied out of the SDK's array. */
static rocp_status take_dims(rocp_counter_id id, const rocp_dimension *dims, size_t n, void *user) {
  (void)id;
  lm_rocp_counter *c = user;
  c->n_dims = 0;
  for (size_t i = 0; i < n && c->n_dims < LM_ROCP_MAX_DIMS; i++) {
    lm_rocp_dim *d = &c->dims[c->n_dims++];
    snprintf(d->name, sizeof d->name, "%s", dims[i].name ? dims[i].name : "");
    d->instances = dims[i].instance_size;
    d->id = dims[i].id;
  }
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
  out->counters = calloc(c.n + 1, sizeof *out->counters);
  if (!out->counters) {
    free(c.ids);
    snprintf(why, cap, "out of memory");
    return -1;
  }
  for (size_t i = 0; i < c.n; i++) {
    rocp_counter_info info;
    memset(&info, 0, sizeof info);
    if (api->query_counter_info(c.ids[i], ROCP_COUNTER_INFO_VERSION_0, &info) != ROCP_STATUS_SUCCESS ||
        !info.name)
      continue;
    lm_rocp_counter *x = &out->counters[out->n];
    memset(x, 0, sizeof *x);
    x->id = c.ids[i];
    x->name = info.name;
    x->block = info.block ? info.block : "";
    x->is_derived = info.is_derived;
    /* Derived counters have no dimension (DIM_NOT_FOUND); any other
     * failure leaves the counter without dimensions too, read as one
     * total. */
    st = api->iterate_counter_dimensions(c.ids[i], take_dims, x);
    if (st != ROCP_STATUS_SUCCESS) x->n_dims = 0;
    out->n++;
  }
  free(c.ids);
  return 0;
}

void lm_rocp_catalog_fini(lm_rocp_catalog *c) {
  free(c->counters);
  memset(c, 0, sizeof *c);
}

static const lm_rocp_counter *find(const lm_rocp_catalog *cat, const char *name, int derived) {
  for (size_t i = 0; i < cat->n; i++)
    if (cat->counters[i].is_derived == derived && strcmp(cat->counters[i].name, name) == 0)
      return &cat->counters[i];
  return NULL;
}

int lm_rocp_resolve(const lm_rocp_catalog *cat, const char *name, lm_rocp_want *out, int cap) {
  const lm_rocp_counter *x = find(cat, name, 0);
  if (!x || cap < 2) return 0;
  const lm_rocp_dim *xcc = NULL, *inst = NULL;
  for (int d = 0; d < x->n_dims; d++) {
    const lm_rocp_dim *dim = &x->dims[d];
    if (strcmp(dim->name, "XCC") == 0) xcc = dim;
    else if (dim->instances > 1 && !inst) inst = dim;
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
  const lm_rocp_counter *derived = find(cat, sum, 1);
  out[n].id = derived ? derived->id : x->id;
  out[n].form = LM_ROCP_TOTAL;
  snprintf(out[n].column, sizeof out[n].column, "%s", sum);
  n++;
  if (strcmp(x->block, "TCC") == 0) {
    out[n].id = x->id;
    out[n].form = LM_ROCP_CHANNELS;
    snprintf(out[n].column, sizeof out[n].column, "%.240s", name);
    out[n].n_inst = inst->instances;
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
    /* An agent described in fewer bytes than lumen reads is not of a
     * layout lumen knows (lm_rocp_probe says so). */
    if (a->size < sizeof(rocp_agent) || a->type != ROCP_AGENT_TYPE_GPU ||
        (f->name && a->logical_node_type_id >= f->best))
      continue;
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
