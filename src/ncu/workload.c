/*
 * workload.c - the fold of an Nsight Compute export as a workload: the
 * pmc_perf table (launch facts, then every metric in its base unit), the
 * architecture from the file (CC, compute capability metrics) or --arch,
 * and the system information from the device attributes, completed from
 * the architecture's typical product (lm_devices_sysinfo) with a warning
 * naming every assumed field.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "devices/devices.h"
#include "ncu/ncu_private.h"

/* The GPU Speed Of Light section's rows, as the details page names them
 * without --metrics (by version), and the CUPTI metric each shows. */
static const char *const sol_names[][2] = {
    {"Duration", "gpu__time_duration.sum"},
    {"Elapsed Cycles", "gpc__cycles_elapsed.max"},
    {"SM Active Cycles", "sm__cycles_active.avg"},
    {"SM Frequency", "sm__cycles_elapsed.avg.per_second"},
    {"DRAM Frequency", "dram__cycles_elapsed.avg.per_second"},
    {"SM [%]", "sm__throughput.avg.pct_of_peak_sustained_elapsed"},
    {"Compute (SM) Throughput", "sm__throughput.avg.pct_of_peak_sustained_elapsed"},
    {"Memory [%]", "gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed"},
    {"Memory Throughput", "gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed"},
    {"SOL DRAM", "gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed"},
    {"DRAM Throughput", "gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed"},
    {"SOL L1/TEX Cache", "l1tex__throughput.avg.pct_of_peak_sustained_active"},
    {"L1/TEX Cache Throughput", "l1tex__throughput.avg.pct_of_peak_sustained_active"},
    {"SOL L2 Cache", "lts__throughput.avg.pct_of_peak_sustained_elapsed"},
    {"L2 Cache Throughput", "lts__throughput.avg.pct_of_peak_sustained_elapsed"}};

/* A section row shown under its display name is also stored under the
 * CUPTI name when the file does not hold that metric itself. */
static lm_status add_aliases(lm_ncu_fold *fold, lm_diag *diag) {
  for (size_t i = 0; i < LM_ARRAY_LEN(sol_names); i++) {
    double *from = lm_ncu_fold_column(fold, sol_names[i][0]);
    if (!from || lm_ncu_fold_column(fold, sol_names[i][1])) continue;
    for (size_t r = 0; r < fold->n_rows; r++) {
      lm_status st = lm_ncu_fold_set(fold, sol_names[i][1], r, lm_ncu_fold_column(fold, sol_names[i][0])[r], diag);
      if (st != LM_OK) return st;
    }
  }
  return LM_OK;
}

/* A sum over all SMs equals the sum over all their sub-partitions: an
 * sm__X.sum metric (as `ncu --metrics` users often name them) is also
 * stored as smsp__X.sum, the name the definitions read, and the other
 * way round, where the file does not hold that name itself. */
static lm_status add_rollup_twins(lm_ncu_fold *fold, lm_diag *diag) {
  size_t n = fold->n_metrics;
  for (size_t i = 0; i < n; i++) {
    const char *name = fold->metric_names[i];
    size_t len = strlen(name);
    int sm = strncmp(name, "sm__", 4) == 0, smsp = strncmp(name, "smsp__", 6) == 0;
    if ((!sm && !smsp) || len < 5 || strcmp(name + len - 4, ".sum") != 0 || len > 200) continue;
    char twin[256];
    snprintf(twin, sizeof twin, "%s%s", sm ? "smsp__" : "sm__", name + (sm ? 4 : 6));
    if (lm_ncu_fold_column(fold, twin)) continue;
    for (size_t r = 0; r < fold->n_rows; r++) {
      lm_status st = lm_ncu_fold_set(fold, twin, r, fold->metrics[i][r], diag);
      if (st != LM_OK) return st;
    }
  }
  return LM_OK;
}

/* X.sum.per_second, where the file has X.sum and the duration but not the
 * rate: CUPTI's rate is the sum over gpu__time_duration.sum (nanoseconds
 * here, CUPTI's base unit). */
static lm_status add_rates(lm_ncu_fold *fold, lm_diag *diag) {
  size_t n = fold->n_metrics;
  for (size_t i = 0; i < n; i++) {
    const double *dur = lm_ncu_fold_column(fold, "gpu__time_duration.sum");
    const char *name = fold->metric_names[i];
    size_t len = strlen(name);
    if (!dur || len < 5 || len > 200 || strcmp(name + len - 4, ".sum") != 0) continue;
    char rate[256];
    snprintf(rate, sizeof rate, "%s.per_second", name);
    if (lm_ncu_fold_column(fold, rate)) continue;
    for (size_t r = 0; r < fold->n_rows; r++) {
      double d = lm_ncu_fold_column(fold, "gpu__time_duration.sum")[r];
      lm_status st = lm_ncu_fold_set(fold, rate, r, d > 0 ? fold->metrics[i][r] / (d * 1e-9) : LM_NAN, diag);
      if (st != LM_OK) return st;
    }
  }
  return LM_OK;
}

/* Launch facts the header lacks, from the launch__ metrics. */
static void complete_facts(lm_ncu_fold *fold) {
  const double *block = lm_ncu_fold_column(fold, "launch__block_size");
  const double *grid = lm_ncu_fold_column(fold, "launch__grid_size");
  for (size_t r = 0; r < fold->n_rows; r++) {
    if (isnan(fold->facts[NF_BLOCK][r]) && block) fold->facts[NF_BLOCK][r] = block[r];
    if (isnan(fold->facts[NF_GRID][r]) && grid) fold->facts[NF_GRID][r] = grid[r] * fold->facts[NF_BLOCK][r];
    if (isnan(fold->facts[NF_GPU][r])) fold->facts[NF_GPU][r] = 0;
  }
}

/* The pmc_perf table: Dispatch_ID, launch facts, Kernel_Name, metrics. */
static lm_status build_table(lm_ncu_fold *fold, lm_table **out, lm_diag *diag) {
  static const char *const facts[] = {
      "GPU_ID", "Grid_Size", "Workgroup_Size", "Arch_VGPR", "LDS_Per_Workgroup", "Start_Timestamp", "End_Timestamp"};
  size_t n = fold->n_rows;
  const char *path = fold->path;
  const double *dur = lm_ncu_fold_column(fold, "gpu__time_duration.sum");
  const double *regs = lm_ncu_fold_column(fold, "launch__registers_per_thread");
  const double *smem = lm_ncu_fold_column(fold, "launch__shared_mem_per_block");
  lm_table *t = lm_table_create(path, "pmc_perf", n, 2 + LM_ARRAY_LEN(facts) + fold->n_metrics);
  *out = t;
  if (!t) return lm_oom(diag, path);
  lm_column *c = lm_table_add_column(t, "Dispatch_ID", 0), *col[LM_ARRAY_LEN(facts)];
  if (!c) return lm_oom(diag, path);
  for (size_t r = 0; r < n; r++) c->values[r] = (double)r;
  for (size_t k = 0; k < LM_ARRAY_LEN(facts); k++)
    if (!(col[k] = lm_table_add_column(t, facts[k], 0))) return lm_oom(diag, path);
  double clock = 0; /* launches laid end to end from 0 */
  for (size_t r = 0; r < n; r++) {
    col[0]->values[r] = fold->facts[NF_GPU][r];
    col[1]->values[r] = fold->facts[NF_GRID][r];
    col[2]->values[r] = fold->facts[NF_BLOCK][r];
    col[3]->values[r] = regs ? regs[r] : LM_NAN;
    col[4]->values[r] = smem ? smem[r] : LM_NAN;
    double d = dur ? dur[r] : LM_NAN;
    col[5]->values[r] = isnan(d) ? LM_NAN : clock;
    col[6]->values[r] = isnan(d) ? LM_NAN : clock + d;
    if (!isnan(d)) clock += d;
  }
  if (!(c = lm_table_add_column(t, "Kernel_Name", 1))) return lm_oom(diag, path);
  for (size_t r = 0; r < n; r++) {
    int32_t id = lm_table_intern(t, fold->kernels[fold->kernel[r]]);
    if (id < 0) return lm_oom(diag, path);
    c->text_ids[r] = id;
  }
  for (size_t k = 0; k < fold->n_metrics; k++) {
    if (lm_table_find(t, fold->metric_names[k]) >= 0) continue;
    if (!(c = lm_table_add_column(t, fold->metric_names[k], 0))) return lm_oom(diag, path);
    memcpy(c->values, fold->metrics[k], n * sizeof(double));
  }
  return lm_table_finish(t);
}

/* The system information fields the device attributes give. */
static size_t known_fields(const lm_ncu_fold *fold, char keys[][24], char values[][128]) {
  size_t n = 0;
  const double *a = fold->attr;
  double sclk = !isnan(a[NA_SCLK]) ? a[NA_SCLK] : a[NA_CLOCK_RATE];
  double mclk = !isnan(a[NA_MCLK]) ? a[NA_MCLK] : a[NA_MEM_RATE];
  const struct {
    const char *key;
    double v;
  } nums[] = {{"cu_per_gpu", a[NA_SMS]},
              {"max_sclk", sclk / 1e6},
              {"max_mclk", mclk / 1e6},
              {"gpu_l2", a[NA_L2] / 1024},
              {"workgroup_max_size", a[NA_WG_MAX]},
              {"wave_size", a[NA_WARP]}};
  if (fold->model[0]) {
    snprintf(keys[n], sizeof keys[n], "gpu_model");
    snprintf(values[n], sizeof values[n], "%s", fold->model);
    n++;
  }
  for (size_t i = 0; i < LM_ARRAY_LEN(nums); i++) {
    if (isnan(nums[i].v)) continue;
    snprintf(keys[n], sizeof keys[n], "%s", nums[i].key);
    snprintf(values[n], sizeof values[n], "%.15g", nums[i].v);
    n++;
  }
  return n;
}

/* The architecture: the file's (CC, compute capability metrics), else arch. */
static const char *file_arch(lm_ncu_fold *fold, const char *arch) {
  if (!fold->arch[0] && !isnan(fold->attr[NA_CC_MAJOR]) && !isnan(fold->attr[NA_CC_MINOR]))
    snprintf(fold->arch, sizeof fold->arch, "sm_%.0f%.0f", fold->attr[NA_CC_MAJOR], fold->attr[NA_CC_MINOR]);
  if (fold->arch[0] && arch && *arch && strcmp(fold->arch, arch) != 0)
    lm_log(LM_LOG_WARN, "%s: the file says compute capability %s; --arch %s is ignored", fold->path, fold->arch, arch);
  return fold->arch[0] ? fold->arch : arch;
}

lm_status lm_ncu_fold_finish(lm_ncu_fold *fold, const char *arch, lm_workload **out, lm_diag *diag) {
  *out = NULL;
  lm_workload *w = NULL;
  lm_status st = LM_OK;
  if (fold->n_rows == 0) return lm_fail(diag, LM_EDATA, fold->path, "no launch rows: nothing to analyze");
  if ((st = add_aliases(fold, diag)) != LM_OK) return st;
  if ((st = add_rollup_twins(fold, diag)) != LM_OK) return st;
  if ((st = add_rates(fold, diag)) != LM_OK) return st;
  complete_facts(fold);
  const char *use = file_arch(fold, arch);
  if (!use || !*use)
    return lm_fail(diag, LM_EARCH, fold->path,
                   "the architecture is not recorded (no CC column, no compute capability metrics): give it with "
                   "--arch, e.g. --arch sm_70");
  lm_arena *arena = lm_arena_new(1 << 12);
  if (!arena) return lm_oom(diag, fold->path);
  w = lm_arena_alloc(arena, sizeof *w);
  if (!w) {
    lm_arena_free(arena);
    return lm_oom(diag, fold->path);
  }
  w->arena = arena;
  w->path = lm_arena_strdup(arena, fold->path);
  w->format = "ncu";
  if (!w->path) {
    st = lm_oom(diag, fold->path);
    goto done;
  }
  if ((st = build_table(fold, &w->pmc, diag)) != LM_OK) goto done;
  char keys[8][24], values[8][128];
  const char *k[8], *v[8];
  size_t n = known_fields(fold, keys, values);
  for (size_t i = 0; i < n; i++) {
    k[i] = keys[i];
    v[i] = values[i];
  }
  char assumed[1024];
  st = lm_devices_sysinfo(w, use, k, v, n, fold->path, assumed, sizeof assumed, diag);
  if (st == LM_OK && assumed[0])
    lm_log(LM_LOG_WARN, "%s: system information assumed from a typical %s (%s): %s", fold->path,
           lm_devices_product(use) ? lm_devices_product(use) : use, use, assumed);
done:
  if (st != LM_OK) {
    lm_workload_free(w);
    return st;
  }
  *out = w;
  return LM_OK;
}
