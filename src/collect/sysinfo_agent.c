/*
 * sysinfo_agent.c - the system information of a profile, from the device it ran
 * on: what rocprofiler-sdk reports about the GPU agent (the driver's
 * topology: backend/rocprofiler_agent.c), the top clocks rocm-smi lists
 * where the agent has none, the counts the driver does not report from
 * the architecture's facts (metrics/<arch>/arch.yaml), and the host's
 * name, kernel, CPU, distribution and memory. Fields are those of the
 * reference tool's sysinfo.csv, in its order; a field nothing supplies
 * stays empty (analysis then shows the metrics that need it without a
 * value), except hbm_bw: where the agent gives no memory clock or channel
 * count to derive it from (RDNA's), the architecture's typical product's
 * figure, with a warning. cur_sclk and cur_mclk are the top clocks, as
 * the reference records them; a measured clock per dispatch comes from
 * the samplers.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "backend/rocprofiler.h"
#include "collect/collect.h"
#include "devices/devices.h"

/* The fields of the reference tool's sysinfo.csv, in its order. */
static const char *const fields[] = {
    "workload_name", "command", "ip_blocks", "timestamp", "version", "hostname", "cpu_model",
    "sbios", "linux_distro", "linux_kernel_version", "amd_gpu_kernel_version", "cpu_memory",
    "gpu_memory", "rocm_version", "vbios", "compute_partition", "memory_partition", "gpu_model",
    "gpu_arch", "gpu_l1", "gpu_l2", "cu_per_gpu", "simd_per_cu", "se_per_gpu", "wave_size",
    "workgroup_max_size", "max_waves_per_cu", "max_sclk", "max_mclk", "cur_sclk", "cur_mclk",
    "total_l2_chan", "lds_banks_per_cu", "sqc_per_gpu", "pipes_per_gpu", "hbm_bw", "num_xcd"};
#define N_FIELDS (sizeof fields / sizeof *fields)

typedef struct builder {
  char text[N_FIELDS][256];
} builder;

static void put(const char *key, const char *value, void *user) {
  builder *b = user;
  for (size_t i = 0; i < N_FIELDS; i++)
    if (strcmp(fields[i], key) == 0) snprintf(b->text[i], sizeof b->text[i], "%s", value ? value : "");
}

static const char *get(const builder *b, const char *key) {
  for (size_t i = 0; i < N_FIELDS; i++)
    if (strcmp(fields[i], key) == 0) return b->text[i];
  return "";
}

static double number(const char *text) {
  char *end;
  double v = text && *text ? strtod(text, &end) : LM_NAN;
  return text && *text && *end == '\0' ? v : LM_NAN;
}

static void put_number(builder *b, const char *key, double v) {
  if (!(v > 0)) return;
  char text[64];
  snprintf(text, sizeof text, "%.15g", v);
  put(key, text, b);
}

/* The value after "key" and a colon or '=' on the first line of a text
 * file that starts with key (the /proc files, os-release). */
static void file_field(const char *path, const char *key, char *out, size_t cap) {
  FILE *f = fopen(path, "r");
  char line[1024];
  size_t n = strlen(key);
  while (f && fgets(line, sizeof line, f)) {
    if (strncmp(line, key, n) != 0) continue;
    char *v = line + n;
    while (*v == ' ' || *v == '\t' || *v == ':' || *v == '=' || *v == '"') v++;
    size_t len = strcspn(v, "\"\n");
    snprintf(out, cap, "%.*s", (int)len, v);
    break;
  }
  if (f) fclose(f);
}

static void host_fields(builder *b) {
  char text[256] = "";
  if (gethostname(text, sizeof text - 1) == 0) put("hostname", text, b);
  struct utsname u;
  if (uname(&u) == 0) put("linux_kernel_version", u.release, b);
  text[0] = '\0';
  file_field("/proc/cpuinfo", "model name", text, sizeof text);
  if (text[0]) put("cpu_model", text, b);
  text[0] = '\0';
  file_field("/etc/os-release", "PRETTY_NAME", text, sizeof text);
  if (text[0]) put("linux_distro", text, b);
  text[0] = '\0';
  file_field("/proc/meminfo", "MemTotal", text, sizeof text);
  text[strcspn(text, " ")] = '\0'; /* kB, as the reference records it */
  if (text[0]) put("cpu_memory", text, b);
}

/* No bandwidth to derive: the typical product's, said as the readers of
 * files without it say what they assume. */
static void assume_bandwidth(builder *b) {
  const char *arch = get(b, "gpu_arch");
  const char *bw = lm_devices_field(arch, "hbm_bw");
  if (!bw) return;
  put("hbm_bw", bw, b);
  lm_log(LM_LOG_WARN,
         "GPU agent %s: system information assumed from a typical %s (%s): hbm_bw %s (the agent gives no memory "
         "clock and channel count to derive it from)",
         arch, lm_devices_product(arch), arch, bw);
}

lm_status lm_collect_sysinfo(const rocp_agent *agent, const lm_catalog *cat, double smi_sclk,
                             double smi_mclk, int with_host, lm_arena *arena, lm_sysinfo *out,
                             lm_diag *diag) {
  memset(out, 0, sizeof *out);
  builder *b = lm_calloc(1, sizeof *b);
  if (!b) return lm_oom(diag, NULL);
  lm_rocp_agent_sysinfo(agent, put, b);
  if (!get(b, "max_sclk")[0]) put_number(b, "max_sclk", smi_sclk);
  if (!get(b, "max_mclk")[0]) put_number(b, "max_mclk", smi_mclk);
  put("cur_sclk", get(b, "max_sclk"), b);
  put("cur_mclk", get(b, "max_mclk"), b);
  double n_xcd = number(get(b, "num_xcd"));
  if (!(n_xcd >= 1)) n_xcd = 1;
  if (cat) {
    put_number(b, "total_l2_chan", (double)cat->l2_channels_per_xcd * n_xcd);
    put_number(b, "lds_banks_per_cu", cat->lds_banks_per_cu);
    put_number(b, "pipes_per_gpu", cat->pipes_per_gpu);
    put_number(b, "sqc_per_gpu", (double)cat->sqc_per_xcd * n_xcd);
  }
  /* HBM bandwidth (GB/s) as the reference computes it: 32 bytes per
   * channel per memory clock. */
  double mclk = number(get(b, "max_mclk")), chan = number(get(b, "total_l2_chan"));
  if (mclk > 0 && chan > 0) put_number(b, "hbm_bw", mclk / 1000.0 * 32.0 * chan);
  if (!get(b, "hbm_bw")[0]) assume_bandwidth(b);
  if (with_host) host_fields(b);
  out->n_fields = N_FIELDS;
  out->names = lm_arena_alloc(arena, N_FIELDS * sizeof *out->names);
  out->texts = lm_arena_alloc(arena, N_FIELDS * sizeof *out->texts);
  out->values = lm_arena_alloc(arena, N_FIELDS * sizeof *out->values);
  lm_status st = out->names && out->texts && out->values ? LM_OK : LM_ENOMEM;
  for (size_t i = 0; st == LM_OK && i < N_FIELDS; i++) {
    out->names[i] = fields[i];
    out->texts[i] = lm_arena_strdup(arena, b->text[i]);
    out->values[i] = number(b->text[i]);
    if (!out->texts[i]) st = LM_ENOMEM;
  }
  lm_free(b);
  if (st != LM_OK) {
    memset(out, 0, sizeof *out);
    return lm_oom(diag, NULL);
  }
  return LM_OK;
}
