/*
 * rocprofiler_agent.c - a GPU's system information from rocprofiler-sdk's
 * description of its agent (rocprofiler_agent_v0_t: the driver's topology
 * as the SDK reads it), under the field names of the reference tool's
 * sysinfo.csv, and whether the SDK found replays a recorded workload.
 *
 * The mapping only reads the agent struct, so a hand-made agent tests it
 * and the same code serves every SDK, including one that derives its
 * agents from a recording's sysinfo.csv. Fields the driver
 * does not describe (L2 channels, scalar caches, host facts) are not its
 * business: `lumen profile` adds them from the architecture and the host.
 */
#include <stdio.h>
#include <string.h>

#include "backend/backend.h"
#include "backend/rocprofiler.h"

static void put_u(lm_rocp_field_fn put, void *user, const char *key, uint64_t v) {
  if (!v) return;
  char text[32];
  snprintf(text, sizeof text, "%llu", (unsigned long long)v);
  put(key, text, user);
}

/* The size (KiB) of the first cache of this level that holds data (not
 * instructions only), 0 when the agent lists none. */
static uint64_t cache_kib(const rocp_agent *a, uint32_t level) {
  for (uint32_t i = 0; a->caches && i < a->caches_count; i++) {
    const rocp_agent_cache *c = &a->caches[i];
    if (c->level == level && (c->type & ROCP_CACHE_DATA) && c->size) return c->size;
  }
  return 0;
}

void lm_rocp_agent_sysinfo(const rocp_agent *a, lm_rocp_field_fn put, void *user) {
  if (!a || !put) return;
  if (a->name && *a->name) put("gpu_arch", a->name, user);
  const char *model = a->product_name && *a->product_name ? a->product_name : a->model_name;
  if (model && *model) put("gpu_model", model, user);
  put_u(put, user, "gpu_l1", cache_kib(a, 1));
  put_u(put, user, "gpu_l2", cache_kib(a, 2));
  put_u(put, user, "cu_per_gpu", a->cu_count);
  put_u(put, user, "simd_per_cu", a->simd_per_cu);
  /* Shader engines: the driver counts shader arrays and arrays per engine. */
  if (a->array_count && a->simd_arrays_per_engine)
    put_u(put, user, "se_per_gpu", a->array_count / a->simd_arrays_per_engine);
  put_u(put, user, "wave_size", a->wave_front_size);
  put_u(put, user, "workgroup_max_size", a->workgroup_max_size);
  uint64_t waves = a->max_waves_per_cu ? a->max_waves_per_cu
                                       : (uint64_t)a->max_waves_per_simd * a->simd_per_cu;
  put_u(put, user, "max_waves_per_cu", waves);
  put_u(put, user, "max_sclk", a->max_engine_clk_fcompute);
  uint32_t mclk = 0;
  for (uint32_t i = 0; a->mem_banks && i < a->mem_banks_count; i++)
    if (a->mem_banks[i].mem_clk_max > mclk) mclk = a->mem_banks[i].mem_clk_max;
  put_u(put, user, "max_mclk", mclk);
  put_u(put, user, "num_xcd", a->num_xcc ? a->num_xcc : 1);
}

int lm_rocp_replay(const lm_rocp_api *api, char *recording, size_t cap) {
  if (cap) recording[0] = '\0';
  const char *(*replay)(void) = NULL;
  const lm_dl_sym sym = {LM_DEVICE_REPLAY, &replay, 0, NULL};
  lm_dl_resolve(&api->lib, &sym, 1, NULL);
  if (!replay) return 0;
  const char *rec = replay();
  snprintf(recording, cap, "%s", rec ? rec : "");
  return 1;
}
