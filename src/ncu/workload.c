/*
 * workload.c - the fold of an Nsight Compute export as a workload: the
 * pmc_perf table (launch facts, then every metric in its base unit), the
 * architecture from the file (CC, compute capability metrics) or --arch,
 * and the system information from the device attributes, completed from
 * the architecture's typical product (the shared fold's finish) with a warning
 * naming every assumed field.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

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
    double *from = lm_fold_column(fold->t, sol_names[i][0]);
    if (!from || lm_fold_column(fold->t, sol_names[i][1])) continue;
    for (size_t r = 0; r < fold->t->n_rows; r++) {
      lm_status st = lm_fold_set(fold->t, sol_names[i][1], r, lm_fold_column(fold->t, sol_names[i][0])[r], diag);
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
  size_t n = fold->t->n_counters;
  for (size_t i = 0; i < n; i++) {
    const char *name = fold->t->counter_names[i];
    size_t len = strlen(name);
    int sm = strncmp(name, "sm__", 4) == 0, smsp = strncmp(name, "smsp__", 6) == 0;
    if ((!sm && !smsp) || len < 5 || strcmp(name + len - 4, ".sum") != 0 || len > 200) continue;
    char twin[256];
    snprintf(twin, sizeof twin, "%s%s", sm ? "smsp__" : "sm__", name + (sm ? 4 : 6));
    if (lm_fold_column(fold->t, twin)) continue;
    for (size_t r = 0; r < fold->t->n_rows; r++) {
      lm_status st = lm_fold_set(fold->t, twin, r, fold->t->counters[i][r], diag);
      if (st != LM_OK) return st;
    }
  }
  return LM_OK;
}

/* X.sum.per_second, where the file has X.sum and the duration but not the
 * rate: CUPTI's rate is the sum over gpu__time_duration.sum (nanoseconds
 * here, CUPTI's base unit). */
static lm_status add_rates(lm_ncu_fold *fold, lm_diag *diag) {
  /* (by index: columns move as columns are added) */
  int64_t di = -1;
  lm_map_get(fold->t->counter_index, "gpu__time_duration.sum", &di);
  size_t n = fold->t->n_counters;
  for (size_t i = 0; di >= 0 && i < n; i++) {
    const char *name = fold->t->counter_names[i];
    size_t len = strlen(name);
    if (len < 5 || len > 200 || strcmp(name + len - 4, ".sum") != 0) continue;
    char rate[256];
    snprintf(rate, sizeof rate, "%s.per_second", name);
    if (lm_fold_column(fold->t, rate)) continue;
    for (size_t r = 0; r < fold->t->n_rows; r++) {
      double d = fold->t->counters[di][r];
      lm_status st = lm_fold_set(fold->t, rate, r, d > 0 ? fold->t->counters[i][r] / (d * 1e-9) : LM_NAN, diag);
      if (st != LM_OK) return st;
    }
  }
  return LM_OK;
}

/* Launch facts the header lacks, from the launch__ metrics. */
static void complete_facts(lm_ncu_fold *fold) {
  const double *block = lm_fold_column(fold->t, "launch__block_size");
  const double *grid = lm_fold_column(fold->t, "launch__grid_size");
  for (size_t r = 0; r < fold->t->n_rows; r++) {
    if (isnan(fold->t->facts[NF_BLOCK][r]) && block) fold->t->facts[NF_BLOCK][r] = block[r];
    if (isnan(fold->t->facts[NF_GRID][r]) && grid) fold->t->facts[NF_GRID][r] = grid[r] * fold->t->facts[NF_BLOCK][r];
    if (isnan(fold->t->facts[NF_GPU][r])) fold->t->facts[NF_GPU][r] = 0;
  }
}

/* The facts pmc_perf takes from the metrics: registers, shared memory
 * and the launches laid end to end from 0 by their durations. */
static void table_facts(lm_ncu_fold *fold) {
  lm_fold *t = fold->t;
  const double *dur = lm_fold_column(t, "gpu__time_duration.sum");
  const double *regs = lm_fold_column(t, "launch__registers_per_thread");
  const double *smem = lm_fold_column(t, "launch__shared_mem_per_block");
  double clock = 0;
  for (size_t r = 0; r < t->n_rows; r++) {
    t->facts[NF_VGPR][r] = regs ? regs[r] : LM_NAN;
    t->facts[NF_LDS][r] = smem ? smem[r] : LM_NAN;
    double d = dur ? dur[r] : LM_NAN;
    t->facts[NF_START][r] = isnan(d) ? LM_NAN : clock;
    t->facts[NF_END][r] = isnan(d) ? LM_NAN : clock + d;
    if (!isnan(d)) clock += d;
  }
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
    lm_log(LM_LOG_WARN, "%s: the file says compute capability %s; --arch %s is ignored", fold->t->path, fold->arch, arch);
  return fold->arch[0] ? fold->arch : arch;
}

lm_status lm_ncu_fold_finish(lm_ncu_fold *fold, const char *arch, lm_workload **out, lm_diag *diag) {
  *out = NULL;
  lm_workload *w = NULL;
  lm_status st = LM_OK;
  if (fold->t->n_rows == 0) return lm_fail(diag, LM_EDATA, fold->t->path, "no launch rows: nothing to analyze");
  if ((st = add_aliases(fold, diag)) != LM_OK) return st;
  if ((st = add_rollup_twins(fold, diag)) != LM_OK) return st;
  if ((st = add_rates(fold, diag)) != LM_OK) return st;
  complete_facts(fold);
  const char *use = file_arch(fold, arch);
  if (!use || !*use)
    return lm_fail(diag, LM_EARCH, fold->t->path,
                   "the architecture is not recorded (no CC column, no compute capability metrics): give it with "
                   "--arch, e.g. --arch sm_70");
  static const char *const facts[N_NCU_FACTS] = {
      "GPU_ID", "Grid_Size", "Workgroup_Size", "Arch_VGPR", "LDS_Per_Workgroup", "Start_Timestamp", "End_Timestamp"};
  table_facts(fold);
  lm_fold_shape shape = {.format = "ncu", .fact_names = facts, .n_facts = N_NCU_FACTS, .skip = LM_FOLD_SKIP_TAKEN};
  if ((st = lm_fold_workload(fold->t, &shape, &w, diag)) != LM_OK) return st;
  char keys[8][24], values[8][128];
  const char *k[8], *v[8];
  size_t n = known_fields(fold, keys, values);
  for (size_t i = 0; i < n; i++) {
    k[i] = keys[i];
    v[i] = values[i];
  }
  st = lm_fold_sysinfo(w, fold->t->path, use, k, v, n, fold->t->path, diag);
  if (st != LM_OK) {
    lm_workload_free(w);
    return st;
  }
  *out = w;
  return LM_OK;
}
