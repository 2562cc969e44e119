/*
 * rocp_check.c - drives a rocprofiler-sdk library (the simulated one in the
 * tests) through lumen's loader and ABI declarations, the way the tool
 * library does: agents, the supported counters of the first GPU with their
 * dimensions (lumen's catalog), and counter configs. Prints what it saw, one fact per line,
 * for profile_test.sh to compare.
 *
 *   rocp_check COUNTER...   (one config with all of them, then one each)
 *   rocp_check --raw COUNTER
 *   rocp_check --agent      (the first GPU agent's fields, one per line)
 *
 * --raw reads the counter's info into plain words at the offsets of the
 * SDK headers' table (docs/rocprofiler-sdk.md), not through lumen's
 * structs: version 0 (name at 8 in every version), then version 1 (the
 * status, where the name is: 8 in the 7.0 branch, 16 in the development
 * line, and whether the dimensions are structs or pointers).
 */
#include <stdio.h>
#include <string.h>

#include "backend/backend.h"
#include "backend/rocprofiler.h"

static lm_rocp_api api;
static rocp_agent_id gpu;
static int n_gpus;
static rocp_counter_id ids[4096];
static size_t n_ids;

static const rocp_agent *first_agent;

static rocp_status agents(int version, const void **list, size_t n, void *user) {
  (void)version;
  (void)user;
  for (size_t i = 0; i < n; i++) {
    const rocp_agent *a = list[i];
    if (a->type != ROCP_AGENT_TYPE_GPU) continue;
    if (n_gpus++ == 0) {
      gpu = a->id;
      first_agent = a;
      printf("agent %d %s gfx_target_version=%u xcc=%u cu=%u\n", a->logical_node_type_id, a->name,
             a->gfx_target_version, a->num_xcc, a->cu_count);
    }
  }
  return ROCP_STATUS_SUCCESS;
}

static rocp_status counters(rocp_agent_id agent, rocp_counter_id *list, size_t n, void *user) {
  (void)agent;
  (void)user;
  for (size_t i = 0; i < n && n_ids < 4096; i++) ids[n_ids++] = list[i];
  return ROCP_STATUS_SUCCESS;
}

/* Through lumen's catalog (counter info version 0 and the SDK's
 * dimension iteration, as lumen reads counters on every version). */
static lm_rocp_catalog cat;

static int find(const char *name, rocp_counter_id *out) {
  for (size_t i = 0; i < cat.n; i++) {
    const lm_rocp_counter *c = &cat.counters[i];
    if (c->is_derived || strcmp(c->name, name) != 0) continue;
    *out = c->id;
    printf("counter %s block %s dimensions", c->name, c->block);
    for (int d = 0; d < c->n_dims; d++) printf(" %s x%zu", c->dims[d].name, c->dims[d].instances);
    printf("\n");
    return 1;
  }
  printf("counter %s not supported by agent 0\n", name);
  return 0;
}

static int raw(const char *name) {
  for (size_t i = 0; i < n_ids; i++) {
    uint64_t v0[16] = {0}, v1[16] = {0};
    if (api.query_counter_info(ids[i], 1, v0) != 0 || !v0[1] || strcmp((const char *)v0[1], name) != 0)
      continue;
    printf("raw %s v0 name@8\n", name);
    rocp_status st = api.query_counter_info(ids[i], 2, v1);
    if (st != 0) {
      printf("raw %s v1 status %d\n", name, st);
      return 1;
    }
    int at = v1[1] == v0[1] ? 8 : v1[2] == v0[1] ? 16 : -1;
    uint64_t n_dims = at == 8 ? v1[6] : v1[7];
    const void *dims = (const void *)(at == 8 ? v1[7] : v1[8]);
    /* The first dimension's name: the struct's first word (7.0), or the
     * first word of the struct the first pointer points to (dev). */
    const char *first = !n_dims || !dims ? "-" : at == 8 ? *(const char *const *)dims
                                                          : **(const char *const *const *)dims;
    printf("raw %s v1 name@%d dims %llu first %s as %s\n", name, at, (unsigned long long)n_dims, first,
           at == 8 ? "structs" : "pointers");
    return 1;
  }
  printf("raw %s not found\n", name);
  return 0;
}

/* The agent's layout fields, then its system information as lumen reads
 * it (lm_rocp_agent_sysinfo). */
static void put_field(const char *key, const char *value, void *user) {
  (void)user;
  printf("sysinfo %s=%s\n", key, value);
}

static void agent_fields(const rocp_agent *a) {
  printf("wave_front_size=%u simd_per_cu=%u simd_count=%u array_count=%u simd_arrays_per_engine=%u "
         "cu_per_simd_array=%u num_shader_banks=%u max_waves_per_simd=%u lds_size_in_kb=%u\n",
         a->wave_front_size, a->simd_per_cu, a->simd_count, a->array_count, a->simd_arrays_per_engine,
         a->cu_per_simd_array, a->num_shader_banks, a->max_waves_per_simd, a->lds_size_in_kb);
  for (uint32_t i = 0; a->caches && i < a->caches_count; i++)
    printf("cache level %u size %llu KiB line %u%s\n", a->caches[i].level, (unsigned long long)a->caches[i].size,
           a->caches[i].cache_line_size, a->caches[i].type & ROCP_CACHE_DATA ? " data" : " instruction");
  lm_rocp_agent_sysinfo(a, put_field, NULL);
}

int main(int argc, char **argv) {
  char why[512];
  if (lm_rocp_load(&api, 0, why, sizeof why) != 0) {
    printf("load: %s\n", why);
    return 1;
  }
  printf("version %u.%u.%u\n", api.major, api.minor, api.patch);
  api.query_available_agents(ROCP_AGENT_INFO_VERSION_0, agents, sizeof(rocp_agent), NULL);
  printf("gpus %d\n", n_gpus);
  if (!n_gpus || api.iterate_agent_supported_counters(gpu, counters, NULL) != 0) return 1;
  if (argc == 2 && strcmp(argv[1], "--agent") == 0) {
    agent_fields(first_agent);
    lm_rocp_unload(&api);
    return 0;
  }
  if (argc == 3 && strcmp(argv[1], "--raw") == 0) {
    raw(argv[2]);
    lm_rocp_unload(&api);
    return 0;
  }
  if (lm_rocp_catalog_load(&api, gpu, &cat, why, sizeof why) != 0) {
    printf("catalog: %s\n", why);
    return 1;
  }
  rocp_counter_id want[64];
  int n = 0;
  for (int i = 1; i < argc && n < 64; i++)
    if (find(argv[i], &want[n])) n++;
  rocp_counter_config_id cfg = {0};
  rocp_status st = api.create_counter_config(gpu, want, (size_t)n, &cfg);
  printf("config of %d: %s\n", n,
         st == 0 ? "accepted" : st == ROCP_STATUS_ERROR_EXCEEDS_HW_LIMIT ? "exceeds the hardware limit"
                                                                         : "refused");
  lm_rocp_catalog_fini(&cat);
  lm_rocp_unload(&api);
  return 0;
}
