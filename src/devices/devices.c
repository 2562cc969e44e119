/*
 * devices.c - the figures of one typical product per architecture, in the
 * fields of its vendor's system information (AMD: sysinfo.csv; NVIDIA:
 * lumen's CUPTI profiles), for files that record no system information
 * (or part of it). Figures copied from
 * real sysinfo.csv files where one of that product exists, else from the
 * vendor's data sheet; docs/formats.md names the source of each row.
 * Also the "_sum" names of counters of blocks with instances, which every
 * reader of a profiler that sums over instances adds.
 */
#include "devices/devices.h"

#include <stdio.h>
#include <string.h>

#include "db/db.h"

/* Each vendor's fields, in the order its profiles write them: AMD's as
 * sysinfo.csv (the layout of rocprofiler-compute 3.0, hbm_bw in GB/s),
 * NVIDIA's as lumen's CUPTI profiles (clocks in MHz, gpu_l2 in KiB,
 * gpu_memory in MiB), with the DRAM bandwidth in GB/s as hbm_bw. */
static const char *const amd_fields[] = {"gpu_model",          "gpu_arch",         "gpu_l1",        "gpu_l2",
                                         "cu_per_gpu",         "simd_per_cu",      "se_per_gpu",    "wave_size",
                                         "workgroup_max_size", "max_waves_per_cu", "max_sclk",      "max_mclk",
                                         "cur_sclk",           "cur_mclk",         "total_l2_chan", "lds_banks_per_cu",
                                         "sqc_per_gpu",        "pipes_per_gpu",    "hbm_bw",        "num_xcd"};
static const char *const nvidia_fields[] = {"gpu_model", "gpu_arch", "gpu_l2",   "cu_per_gpu", "wave_size",
                                            "workgroup_max_size", "max_sclk", "max_mclk", "gpu_memory", "hbm_bw"};
enum { MAX_FIELDS = 20 };

static const struct vendor {
  const char *const *fields;
  size_t n;
} amd = {amd_fields, LM_ARRAY_LEN(amd_fields)}, nvidia = {nvidia_fields, LM_ARRAY_LEN(nvidia_fields)};

/* A product: its vendor's fields' values ("" where no figure is known). */
static const struct product {
  const char *arch;
  const struct vendor *vendor;
  const char *values[MAX_FIELDS];
} products[] = {
    {"gfx906", &amd, {"MI50", "gfx906", "16",   "4096", "60", "4",  "4",  "64", "1024", "40",
                "1725", "1000",   "1725", "1000", "16", "32", "16", "4",  "1024", "1"}},
    {"gfx908", &amd, {"MI100", "gfx908", "16",   "8192", "120", "4",  "8",  "64", "1024",   "40",
                "1502",  "1200",   "1502", "1200", "32",  "32", "64", "4",  "1228.8", "1"}},
    {"gfx90a", &amd, {"MI250X", "gfx90a", "16",   "8192", "110", "4",  "8",  "64", "1024",   "32",
                "1700",   "1600",   "1700", "1600", "32",  "32", "56", "4",  "1638.4", "1"}},
    {"gfx940", &amd, {"MI300X", "gfx940", "32",   "4096", "304", "4",  "32",  "64", "1024",   "32",
                "2100",   "1300",   "2100", "1300", "128", "32", "160", "4",  "5324.8", "8"}},
    {"gfx941", &amd, {"MI300X", "gfx941", "32",   "4096", "304", "4",  "32",  "64", "1024",   "32",
                "2100",   "1300",   "2100", "1300", "128", "32", "160", "4",  "5324.8", "8"}},
    {"gfx942", &amd, {"MI300X", "gfx942", "32",   "4096", "304", "4",  "32",  "64", "1024",   "32",
                "2100",   "1300",   "2100", "1300", "128", "32", "160", "4",  "5324.8", "8"}},
    {"gfx950", &amd, {"MI355X", "gfx950", "32",   "4096", "256", "4",  "32",  "64", "1024", "32",
                "2400",   "2000",   "2400", "2000", "128", "64", "128", "4",  "8192", "8"}},
    {"gfx1100", &amd, {"Radeon RX 7900 XTX", "gfx1100", "32", "6144", "96", "2", "6", "32", "1024", "32",
                "2500", "", "2500", "", "", "", "", "", "960", "1"}},
    {"gfx1101", &amd, {"Radeon RX 7800 XT", "gfx1101", "32", "4096", "60", "2", "3", "32", "1024", "32",
                "2430", "", "2430", "", "", "", "", "", "624", "1"}},
    {"gfx1102", &amd, {"Radeon RX 7600", "gfx1102", "32", "2048", "32", "2", "2", "32", "1024", "32",
                "2655", "", "2655", "", "", "", "", "", "288", "1"}},
    {"gfx1150", &amd, {"Radeon 890M", "gfx1150", "32", "2048", "16", "2", "1", "32", "1024", "32",
                "2900", "", "2900", "", "", "", "", "", "120", "1"}},
    {"gfx1151", &amd, {"Radeon 8060S", "gfx1151", "32", "2048", "40", "2", "2", "32", "1024", "32",
                "2900", "", "2900", "", "", "", "", "", "256", "1"}},
    {"gfx1200", &amd, {"Radeon RX 9060 XT", "gfx1200", "", "", "32", "2", "2", "32", "1024", "32",
                "3130", "", "3130", "", "", "", "", "", "320", "1"}},
    {"gfx1201", &amd, {"Radeon RX 9070 XT", "gfx1201", "", "", "64", "2", "4", "32", "1024", "32",
                "2970", "", "2970", "", "", "", "", "", "640", "1"}},
    /* gpu_model, gpu_arch, gpu_l2, cu_per_gpu, wave_size, workgroup_max_size,
     * max_sclk, max_mclk, gpu_memory, hbm_bw */
    {"sm_70", &nvidia, {"Tesla V100-SXM2-32GB", "sm_70", "6144", "80", "32", "1024", "1530", "877", "32768", "900"}},
    {"sm_75", &nvidia, {"Tesla T4", "sm_75", "4096", "40", "32", "1024", "1590", "5001", "15360", "320"}},
    {"sm_80", &nvidia, {"NVIDIA A100-SXM4-80GB", "sm_80", "40960", "108", "32", "1024", "1410", "1593", "81920",
                        "2039"}},
    {"sm_86", &nvidia, {"NVIDIA A10", "sm_86", "6144", "72", "32", "1024", "1695", "6251", "24576", "600"}},
    {"sm_89", &nvidia, {"NVIDIA L4", "sm_89", "49152", "58", "32", "1024", "2040", "6251", "24576", "300"}},
    {"sm_90", &nvidia, {"NVIDIA H100 80GB HBM3", "sm_90", "51200", "132", "32", "1024", "1980", "2619", "81920",
                        "3350"}},
    {"sm_100", &nvidia, {"NVIDIA B200", "sm_100", "", "148", "32", "1024", "1965", "", "", "8000"}},
};

static const struct product *find(const char *arch) {
  for (size_t i = 0; arch && i < sizeof products / sizeof *products; i++)
    if (strcmp(products[i].arch, arch) == 0) return &products[i];
  return NULL;
}

const char *lm_devices_product(const char *arch) {
  const struct product *p = find(arch);
  return p ? p->values[0] : NULL;
}

const char *lm_devices_field(const char *arch, const char *field) {
  const struct product *p = find(arch);
  for (size_t f = 0; p && field && f < p->vendor->n; f++)
    if (strcmp(p->vendor->fields[f], field) == 0) return p->values[f] && p->values[f][0] ? p->values[f] : NULL;
  return NULL;
}

static int known(const char *const *keys, size_t n, const char *name) {
  for (size_t i = 0; i < n; i++)
    if (strcmp(keys[i], name) == 0) return 1;
  return 0;
}

lm_status lm_devices_sysinfo(lm_workload *w, const char *arch, const char *const *keys, const char *const *values,
                             size_t n_known, const char *path, char *assumed, size_t cap, lm_diag *diag) {
  if (cap) assumed[0] = '\0';
  const struct product *p = find(arch);
  if (!p && !(known(keys, n_known, "cu_per_gpu") && known(keys, n_known, "max_sclk")))
    return lm_fail(diag, LM_EARCH, path,
                   "architecture %s: lumen knows no product of it to assume its system information from",
                   arch && *arch ? arch : "(none recorded)");
  size_t n = n_known + MAX_FIELDS + 1, len = 0;
  char **k = lm_calloc(n, sizeof *k), **v = lm_calloc(n, sizeof *v);
  lm_status st = LM_OK;
  if (!k || !v) {
    st = lm_oom(diag, path);
    goto done;
  }
  size_t m = 0;
  for (size_t i = 0; i < n_known; i++, m++) {
    k[m] = (char *)keys[i];
    v[m] = (char *)values[i];
  }
  if (!known(keys, n_known, "gpu_arch") && arch) {
    k[m] = (char *)"gpu_arch";
    v[m++] = (char *)arch;
  }
  for (size_t f = 0; p && f < p->vendor->n; f++) {
    const char *field = p->vendor->fields[f];
    if (!p->values[f] || !p->values[f][0] || known((const char *const *)k, m, field)) continue;
    k[m] = (char *)field;
    v[m++] = (char *)p->values[f];
    if (len < cap) {
      int wrote = snprintf(assumed + len, cap - len, "%s%s %s", len ? ", " : "", field, p->values[f]);
      len += wrote > 0 ? (size_t)wrote : 0;
    }
  }
  st = lm_db_sysinfo_build(path, k, v, m, w->arena, &w->sysinfo_table, &w->sysinfo, diag);
  if (st == LM_OK) w->arch = lm_sysinfo_text(&w->sysinfo, "gpu_arch");
done:
  lm_free(k);
  lm_free(v);
  return st;
}

int lm_devices_sum_alias(const char *name, char *out, size_t cap) {
  static const char *const blocks[] = {"TA_", "TCC_", "TCP_", "TD_"};
  size_t n = strlen(name);
  if (strchr(name, '[') || (n > 4 && strcmp(name + n - 4, "_sum") == 0)) return 0;
  for (size_t b = 0; b < LM_ARRAY_LEN(blocks); b++)
    if (strncmp(name, blocks[b], strlen(blocks[b])) == 0) return (size_t)snprintf(out, cap, "%s_sum", name) < cap;
  return 0;
}
