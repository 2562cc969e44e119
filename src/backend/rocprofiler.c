/*
 * rocprofiler.c - finding rocprofiler-sdk at run time: open the library
 * (LUMEN_ROCPROFILER_SDK names it, else the loader's search path and
 * /opt/rocm/lib), resolve the functions lumen calls (rocprofiler_abi.h),
 * refuse a version older than the dispatch counting API, and count its GPU
 * agents. One lumen binary and one tool library thus work on any machine,
 * and `lumen list backends` says precisely why the SDK is not usable.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/backend.h"
#include "backend/rocprofiler.h"
#include "base/dl.h"

static const char *const fix =
    "install rocprofiler-sdk 0.5 or later (ROCm 6.3+) and put its lib folder on LD_LIBRARY_PATH, "
    "or set LUMEN_ROCPROFILER_SDK to the library's path";

int lm_rocp_load(lm_rocp_api *api, int already_loaded, char *why, size_t cap) {
  memset(api, 0, sizeof *api);
  const char *env = getenv("LUMEN_ROCPROFILER_SDK");
  const char *names[] = {"librocprofiler-sdk.so", "librocprofiler-sdk.so.1", "librocprofiler-sdk.so.0",
                         "/opt/rocm/lib/librocprofiler-sdk.so"};
  int flags = already_loaded ? RTLD_NOLOAD : 0;
  lm_dl_lib *lib = &api->lib;
  lm_diag d;
  lm_diag_clear(&d);
  if (env && *env) {
    if (lm_dl_open(lib, &env, 1, flags, &d) != LM_OK) {
      snprintf(why, cap, "LUMEN_ROCPROFILER_SDK=%s cannot be loaded: %s", env, lib->error);
      return -1;
    }
  } else if (lm_dl_open(lib, names, sizeof names / sizeof *names, flags, &d) != LM_OK) {
    /* The simulated SDK is never looked for: a recording named without it
     * is most likely a test setup missing its second variable. */
    const char *rec = getenv("LUMEN_SIM_RECORDING");
    snprintf(why, cap, "librocprofiler-sdk.so not found: %s%s", fix,
             rec && *rec ? " (LUMEN_SIM_RECORDING is set, but the simulated SDK that replays it is loaded only "
                           "where LUMEN_ROCPROFILER_SDK names it: build/src/sim/librocprofiler-sdk.so)"
                         : "");
    return -1;
  }
  const lm_dl_sym version[] = {{"rocprofiler_get_version", &api->get_version, 0, NULL}};
  lm_dl_resolve(lib, version, 1, NULL);
  if (!api->get_version || api->get_version(&api->major, &api->minor, &api->patch) != 0) {
    snprintf(why, cap, "the library found does not report its version (is it rocprofiler-sdk?): %s",
             fix);
    goto fail;
  }
  if (api->major * 100 + api->minor < LM_ROCP_MIN_MAJOR * 100 + LM_ROCP_MIN_MINOR) {
    snprintf(why, cap,
             "version %u.%u.%u found; lumen needs %d.%d or later (ROCm 6.3+), the first with the "
             "dispatch counting API: %s",
             api->major, api->minor, api->patch, LM_ROCP_MIN_MAJOR, LM_ROCP_MIN_MINOR, fix);
    goto fail;
  }
  /* The layout, from the version: 0.5 and 0.6 have the short tracing
   * record and client id; 1.0 the long ones. A later 1.x is read in the
   * 1.0 layout where the sizes it reports agree (the agents' here, the
   * client id's in the tool library); a development version between 0.6
   * and 1.0, or a later major version, is refused. */
  if (api->major == 0 && (api->minor == 5 || api->minor == 6)) {
    api->layout = LM_ROCP_LAYOUT_0X;
  } else if (api->major == 1) {
    api->layout = LM_ROCP_LAYOUT_1X;
    api->newer = api->minor > 0;
  } else {
    snprintf(why, cap,
             "version %u.%u.%u found; lumen knows the layouts of 0.5, 0.6 and 1.0 (ROCm 6.3 to 7.x), and "
             "reads a later 1.x in the 1.0 layout: install one of those versions",
             api->major, api->minor, api->patch);
    goto fail;
  }
  /* Every entry point lumen calls but stopping a context, which lumen
   * does only when it can. The counter config had another name in 0.5. */
  const lm_dl_sym syms[] = {
      {"rocprofiler_create_context", &api->create_context, 1, NULL},
      {"rocprofiler_start_context", &api->start_context, 1, NULL},
      {"rocprofiler_stop_context", &api->stop_context, 0, NULL},
      {"rocprofiler_query_available_agents", &api->query_available_agents, 1, NULL},
      {"rocprofiler_iterate_agent_supported_counters", &api->iterate_agent_supported_counters, 1, NULL},
      {"rocprofiler_query_counter_info", &api->query_counter_info, 1, NULL},
      {"rocprofiler_iterate_counter_dimensions", &api->iterate_counter_dimensions, 1, NULL},
      {"rocprofiler_create_counter_config", &api->create_counter_config, 1, "rocprofiler_create_profile_config"},
      {"rocprofiler_configure_callback_dispatch_counting_service",
       &api->configure_callback_dispatch_counting_service, 1, NULL},
      {"rocprofiler_configure_callback_tracing_service", &api->configure_callback_tracing_service, 1, NULL},
      {"rocprofiler_query_record_counter_id", &api->query_record_counter_id, 1, NULL},
      {"rocprofiler_query_record_dimension_position", &api->query_record_dimension_position, 1, NULL},
  };
  if (lm_dl_resolve(lib, syms, sizeof syms / sizeof *syms, &d) != LM_OK) {
    snprintf(why, cap, "version %u.%u.%u lacks %s: %s", api->major, api->minor, api->patch, d.field, fix);
    goto fail;
  }
  return 0;
fail:
  lm_dl_close(lib);
  return -1;
}

void lm_rocp_unload(lm_rocp_api *api) { lm_dl_close(&api->lib); }

const char *lm_rocp_layout_text(const lm_rocp_api *api, char *buf, size_t cap) {
  if (api->newer)
    snprintf(buf, cap, "version %u.%u.%u (newer than 1.0; read in the 1.0 layout, whose sizes it reports)",
             api->major, api->minor, api->patch);
  else
    snprintf(buf, cap, "version %u.%u.%u (%s layout, supported)", api->major, api->minor, api->patch,
             api->layout == LM_ROCP_LAYOUT_0X ? "0.5/0.6" : "1.0");
  return buf;
}

typedef struct gpu_count {
  size_t n, short_size; /* GPUs; agents whose size is below what lumen reads */
} gpu_count;

static rocp_status count_gpus(int version, const void **agents, size_t n, void *user) {
  (void)version;
  gpu_count *c = user;
  for (size_t i = 0; i < n; i++) {
    const rocp_agent *a = agents[i];
    if (a->size < sizeof(rocp_agent)) c->short_size++;
    else if (a->type == ROCP_AGENT_TYPE_GPU) c->n++;
  }
  return ROCP_STATUS_SUCCESS;
}

int lm_rocp_probe(char *why, size_t cap) {
  lm_rocp_api api;
  if (lm_rocp_load(&api, 0, why, cap) != 0) return 0;
  gpu_count c = {0, 0};
  char v[160];
  lm_rocp_layout_text(&api, v, sizeof v);
  rocp_status st = api.query_available_agents(ROCP_AGENT_INFO_VERSION_0, count_gpus, sizeof(rocp_agent), &c);
  int usable = st == ROCP_STATUS_SUCCESS && c.n > 0 && !c.short_size;
  if (st != ROCP_STATUS_SUCCESS)
    snprintf(why, cap, "%s cannot list agents (status %d)", v, st);
  else if (c.short_size)
    snprintf(why, cap, "%s describes its agents in fewer bytes than the %zu lumen reads: not this layout", v,
             sizeof(rocp_agent));
  else if (!c.n)
    snprintf(why, cap, "%s found, but it reports no GPU agent (is the amdgpu driver "
                       "loaded, and may this user open /dev/kfd?)", v);
  else
    snprintf(why, cap, "%s, %zu GPU agent%s", v, c.n, c.n == 1 ? "" : "s");
  lm_rocp_unload(&api);
  return usable;
}
