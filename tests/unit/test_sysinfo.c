/* test_sysinfo.c - a device's system information from rocprofiler-sdk's
 * description of its agent: a hand-made MI300X-like agent (8 XCCs) gives
 * each field the reference tool's sysinfo.csv holds for such a GPU; an
 * agent that describes little gives only what it describes; the profile's
 * system information adds the architecture's counts, rocm-smi's clocks
 * where the agent has none, and the host's fields. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "backend/rocprofiler.h"
#include "check.h"
#include "metrics/metrics.h"
#include "collect/collect.h"
#include "devices/devices.h"

typedef struct fields {
  char keys[32][64], values[32][256];
  int n;
} fields;

static void put(const char *key, const char *value, void *user) {
  fields *f = user;
  if (f->n < 32) {
    snprintf(f->keys[f->n], sizeof f->keys[0], "%s", key);
    snprintf(f->values[f->n], sizeof f->values[0], "%s", value);
    f->n++;
  }
}

static const char *field(const fields *f, const char *key) {
  for (int i = 0; i < f->n; i++)
    if (strcmp(f->keys[i], key) == 0) return f->values[i];
  return NULL;
}

static rocp_agent_cache caches[3];
static rocp_agent_mem_bank banks[2];

static rocp_agent mi300x(void) {
  rocp_agent a;
  memset(&a, 0, sizeof a);
  a.size = sizeof a;
  a.type = ROCP_AGENT_TYPE_GPU;
  a.name = "gfx942";
  a.product_name = "AMD Instinct MI300X";
  a.model_name = "aqua_vanjaram";
  a.cu_count = 304;
  a.simd_per_cu = 4;
  a.array_count = 32;
  a.simd_arrays_per_engine = 1;
  a.num_shader_banks = 4;
  a.wave_front_size = 64;
  a.workgroup_max_size = 1024;
  a.max_waves_per_cu = 32;
  a.max_waves_per_simd = 8;
  a.max_engine_clk_fcompute = 2100;
  a.num_xcc = 8;
  /* An instruction cache first: it is not the L1 the reference reports. */
  caches[0] = (rocp_agent_cache){0, 64, 1, 64, 1, 8, 0, ROCP_CACHE_INSTRUCTION | ROCP_CACHE_HSACU};
  caches[1] = (rocp_agent_cache){0, 32, 1, 128, 1, 64, 0, ROCP_CACHE_DATA | ROCP_CACHE_HSACU};
  caches[2] = (rocp_agent_cache){0, 4096, 2, 128, 1, 16, 0, ROCP_CACHE_DATA | ROCP_CACHE_HSACU};
  a.caches = caches;
  a.caches_count = 3;
  banks[0] = (rocp_agent_mem_bank){1, 0, 8192, 1300, 192ULL << 30};
  banks[1] = (rocp_agent_mem_bank){2, 0, 64, 0, 1ULL << 30};
  a.mem_banks = banks;
  a.mem_banks_count = 2;
  return a;
}

static void agent_tests(void) {
  rocp_agent a = mi300x();
  fields f = {0};
  lm_rocp_agent_sysinfo(&a, put, &f);
  static const char *const want[][2] = {
      {"gpu_arch", "gfx942"},      {"gpu_model", "AMD Instinct MI300X"}, {"gpu_l1", "32"},
      {"gpu_l2", "4096"},          {"cu_per_gpu", "304"},                {"simd_per_cu", "4"},
      {"se_per_gpu", "32"},        {"wave_size", "64"},                  {"workgroup_max_size", "1024"},
      {"max_waves_per_cu", "32"},  {"max_sclk", "2100"},                 {"max_mclk", "1300"},
      {"num_xcd", "8"}};
  for (size_t i = 0; i < sizeof want / sizeof *want; i++) CHECK_STR(field(&f, want[i][0]), want[i][1]);
  CHECK(f.n == (int)(sizeof want / sizeof *want));

  /* An agent of an older driver: no XCC count, waves per SIMD only, no
   * caches, banks or product name. */
  rocp_agent old;
  memset(&old, 0, sizeof old);
  old.name = "gfx90a";
  old.model_name = "aldebaran";
  old.cu_count = 104;
  old.simd_per_cu = 4;
  old.max_waves_per_simd = 8;
  fields g = {0};
  lm_rocp_agent_sysinfo(&old, put, &g);
  CHECK_STR(field(&g, "gpu_model"), "aldebaran");
  CHECK_STR(field(&g, "max_waves_per_cu"), "32");
  CHECK_STR(field(&g, "num_xcd"), "1");
  CHECK(field(&g, "gpu_l1") == NULL && field(&g, "max_sclk") == NULL && field(&g, "max_mclk") == NULL);
  CHECK(field(&g, "se_per_gpu") == NULL && field(&g, "wave_size") == NULL);
  fields none = {0};
  lm_rocp_agent_sysinfo(NULL, put, &none);
  CHECK(none.n == 0);
}

static const char *text(const lm_sysinfo *s, const char *key) {
  const char *t = lm_sysinfo_text(s, key);
  return t ? t : "(missing)";
}

static void profile_tests(void) {
  rocp_agent a = mi300x();
  lm_arena *arena = lm_arena_new(4096);
  lm_sysinfo s;
  lm_diag d;
  CHECK(lm_collect_sysinfo(&a, lm_metrics_builtin("gfx942"), -1, -1, 1, arena, &s, &d) == LM_OK);
  CHECK(s.n_fields == 37);
  CHECK_STR(s.names[0], "workload_name");
  CHECK_STR(s.names[36], "num_xcd");
  CHECK_STR(text(&s, "total_l2_chan"), "128"); /* 16 per XCD */
  CHECK_STR(text(&s, "sqc_per_gpu"), "160");
  CHECK_STR(text(&s, "lds_banks_per_cu"), "32");
  CHECK_STR(text(&s, "pipes_per_gpu"), "4");
  CHECK_STR(text(&s, "hbm_bw"), "5324.8");
  CHECK_STR(text(&s, "cur_sclk"), "2100");
  CHECK_STR(text(&s, "cur_mclk"), "1300");
  CHECK(s.values[lm_sysinfo_find(&s, "num_xcd")] == 8);
  CHECK_STR(text(&s, "workload_name"), "");
  CHECK(isnan(s.values[lm_sysinfo_find(&s, "vbios")]));
  CHECK(text(&s, "hostname")[0] != '\0');
  /* Without the agent's clocks, rocm-smi's; without the architecture's
   * facts, no channel count, hence the HBM bandwidth of the typical
   * product of the architecture (an MI300X), not one derived. */
  a.max_engine_clk_fcompute = 0;
  a.mem_banks_count = 0;
  CHECK(lm_collect_sysinfo(&a, NULL, 1900, 1200, 0, arena, &s, &d) == LM_OK);
  CHECK_STR(text(&s, "max_sclk"), "1900");
  CHECK_STR(text(&s, "max_mclk"), "1200");
  CHECK_STR(text(&s, "total_l2_chan"), "");
  CHECK_STR(text(&s, "hbm_bw"), lm_devices_field("gfx942", "hbm_bw"));
  CHECK_STR(text(&s, "hbm_bw"), "5324.8");
  /* An architecture lumen knows no product of: none. */
  a.name = "gfx9999";
  CHECK(lm_collect_sysinfo(&a, NULL, 1900, 1200, 0, arena, &s, &d) == LM_OK);
  CHECK_STR(text(&s, "hbm_bw"), "");
  CHECK(lm_devices_field("gfx9999", "hbm_bw") == NULL && lm_devices_field("gfx1100", "max_mclk") == NULL);
  CHECK_STR(lm_devices_field("gfx1100", "hbm_bw"), "960");
  CHECK_STR(text(&s, "hostname"), "");
  CHECK(lm_collect_sysinfo(&a, NULL, -1, -1, 0, arena, &s, &d) == LM_OK);
  CHECK_STR(text(&s, "max_sclk"), "");
  CHECK_STR(text(&s, "cur_mclk"), "");
  lm_arena_free(arena);
}

/* The writer's layout, and the field of the other layout derived from it. */
static void layout_tests(void) {
  const char *names33[] = {"gpu_arch", "max_mclk", "num_hbm_channels"};
  const char *texts33[] = {"gfx942", "1300", "128"};
  double values33[] = {LM_NAN, 1300, 128};
  lm_sysinfo s33 = {3, names33, texts33, values33};
  const char *names30[] = {"gpu_arch", "max_mclk", "hbm_bw"};
  const char *texts30[] = {"gfx90a", "1600", "1638.4"};
  double values30[] = {LM_NAN, 1600, 1638.4};
  lm_sysinfo s30 = {3, names30, texts30, values30};
  CHECK_STR(lm_sysinfo_compat(&s33) ? lm_sysinfo_compat(&s33) : "(null)", "3.3");
  CHECK(lm_sysinfo_compat(&s30) == NULL);
  double v = 0;
  CHECK(lm_sysinfo_derive(&s33, "hbm_bw", &v) == 1 && fabs(v - 5324.8) < 1e-9);
  CHECK(lm_sysinfo_derive(&s30, "num_hbm_channels", &v) == 1 && v == 32);
  CHECK(lm_sysinfo_derive(&s30, "hbm_bw", &v) == 0);      /* no channels to derive it from */
  CHECK(lm_sysinfo_derive(&s33, "max_sclk", &v) == 0);    /* not a derivable field */
  values33[1] = LM_NAN;                                    /* a blank memory clock */
  CHECK(lm_sysinfo_derive(&s33, "hbm_bw", &v) == 0);
  values30[1] = 0;                                         /* a zero clock */
  CHECK(lm_sysinfo_derive(&s30, "num_hbm_channels", &v) == 0);
}

int main(void) {
  agent_tests();
  profile_tests();
  layout_tests();
  return check_report("test_sysinfo");
}
