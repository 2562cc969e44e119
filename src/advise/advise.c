/*
 * advise.c - the per-kernel summary and the rule evaluator.
 *
 * The kernels come from the top-kernels table of the user's selection (so
 * the order and the names are the ones the panels show); each is then
 * analyzed alone with --kernel-index, and the rules read that analysis's
 * cells by metric name or id. Rule expressions are small trees walked
 * directly: a rule reads a handful of cells once per kernel, where a
 * compiled program would buy nothing. A metric that is missing (an absent
 * counter, a blank cell) is NaN, and a comparison with NaN is false, so a
 * rule whose inputs are missing does not fire.
 */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "advise/advise.h"

enum {
  V_CALLS, V_TOTAL, V_MEAN, V_MIN, V_MAX, V_SHARE, V_CV, V_GRID, V_WG, V_WGS, V_LDS, V_SCRATCH, V_AVGPR,
  V_ACCVGPR, V_SGPR, V_WAVE, V_VGPR_WAVES, V_MAX_WAVES, V_SET_SPREAD, V_SET_ROWS, V__COUNT
};

/* ------------------------------------------------------- metric lookup */

static int is_metric_id(const char *s) {
  int dots = 0;
  for (const char *p = s; *p; p++) {
    if (*p == '.') dots++;
    else if (!isdigit((unsigned char)*p)) return 0;
  }
  return dots >= 2;
}

static int32_t col_titled(const lm_rtable *t, const char *const *titles) {
  for (const char *const *want = titles; *want; want++)
    for (int32_t c = 0; c < t->n_cols; c++)
      if (t->roles[c] == LM_RCOL_VALUE && strcmp(t->titles[c], *want) == 0) return c;
  return -1;
}

/* The cell of metric `name` (or id) in column kind 0 value, 1 peak, 2 pct. */
static double metric_cell(const lm_analysis *a, const char *name, int kind, const char **unit) {
  static const char *const value_cols[] = {"Avg", "Value", "Mean", "Count", NULL};
  static const char *const peak_cols[] = {"Peak", NULL};
  static const char *const pct_cols[] = {"Pct of Peak", "Pct", NULL};
  const char *const *cols = kind == 0 ? value_cols : kind == 1 ? peak_cols : pct_cols;
  int by_id = is_metric_id(name);
  for (int32_t ti = 0; ti < a->n_tables; ti++) {
    const lm_rtable *t = &a->tables[ti];
    if (t->kind != LM_TABLE_METRIC || !t->n_rows) continue;
    int32_t name_col = -1;
    for (int32_t c = 0; c < t->n_cols; c++)
      if (t->roles[c] == LM_RCOL_NAME) {
        name_col = c;
        break;
      }
    for (int32_t r = 0; r < t->n_rows; r++) {
      const lm_cell *nc = name_col >= 0 ? &t->cells[(size_t)r * (size_t)t->n_cols + (size_t)name_col] : NULL;
      int match = by_id ? t->row_ids && strcmp(t->row_ids[r], name) == 0
                        : nc && nc->kind == LM_CELL_TEXT && nc->text && strcmp(nc->text, name) == 0;
      if (!match) continue;
      int32_t c = col_titled(t, cols);
      if (c < 0) return LM_NAN;
      if (unit) {
        *unit = "";
        for (int32_t u = 0; u < t->n_cols; u++) {
          const lm_cell *uc = &t->cells[(size_t)r * (size_t)t->n_cols + (size_t)u];
          if (t->roles[u] == LM_RCOL_UNIT && uc->kind == LM_CELL_TEXT && uc->text) *unit = uc->text;
        }
      }
      const lm_cell *cell = &t->cells[(size_t)r * (size_t)t->n_cols + (size_t)c];
      return cell->kind == LM_CELL_NUMBER ? cell->num : LM_NAN;
    }
  }
  return LM_NAN;
}

/* Whether metric `name` (a name or an id) has a value cell that says its
 * counters were not collected (a workload read from another tool's
 * files). */
static int not_collected(const lm_analysis *a, const char *name) {
  int by_id = is_metric_id(name);
  for (int32_t ti = 0; ti < a->n_tables; ti++) {
    const lm_rtable *t = &a->tables[ti];
    if (t->kind != LM_TABLE_METRIC) continue;
    int32_t name_col = -1;
    for (int32_t c = 0; c < t->n_cols && name_col < 0; c++)
      if (t->roles[c] == LM_RCOL_NAME) name_col = c;
    for (int32_t r = 0; r < t->n_rows; r++) {
      const lm_cell *row = &t->cells[(size_t)r * (size_t)t->n_cols];
      int match = by_id ? t->row_ids && strcmp(t->row_ids[r], name) == 0
                        : name_col >= 0 && row[name_col].kind == LM_CELL_TEXT && row[name_col].text &&
                              strcmp(row[name_col].text, name) == 0;
      if (!match) continue;
      for (int32_t c = 0; c < t->n_cols; c++)
        if (t->roles[c] == LM_RCOL_VALUE && row[c].kind == LM_CELL_TEXT && row[c].text &&
            strcmp(row[c].text, "not collected") == 0)
          return 1;
      return 0;
    }
  }
  return 0;
}

/* ---------------------------------------------------------- evaluation */

static int truthy(double v) { return !isnan(v) && v != 0; }

static double sysinfo_var(const lm_analysis *a, const char *name) {
  const char *text = lm_sysinfo_text(&a->workload->sysinfo, name);
  if (!text || !*text) return LM_NAN;
  char *end = NULL;
  double v = strtod(text, &end);
  return end && *end == '\0' ? v : LM_NAN;
}

double lm_advise_eval(const lm_expr *e, const lm_analysis *a, const double *vars) {
  switch ((lm_expr_kind)e->kind) {
  case LM_X_NUM: return e->num;
  case LM_X_NONE:
  case LM_X_STRING:
  case LM_X_COL: return LM_NAN;
  case LM_X_VAR:
    for (int i = 0; lm_rule_vars[i]; i++)
      if (strcmp(lm_rule_vars[i], e->name) == 0) return vars[i];
    return sysinfo_var(a, e->name);
  case LM_X_CALL: {
    if (!strcmp(e->name, "value") || !strcmp(e->name, "peak") || !strcmp(e->name, "pct")) {
      int kind = e->name[0] == 'v' ? 0 : e->name[1] == 'e' ? 1 : 2;
      return e->n_args == 1 && e->args[0]->kind == LM_X_STRING ? metric_cell(a, e->args[0]->name, kind, NULL)
                                                                : LM_NAN;
    }
    double x = e->n_args > 0 ? lm_advise_eval(e->args[0], a, vars) : LM_NAN;
    double y = e->n_args > 1 ? lm_advise_eval(e->args[1], a, vars) : LM_NAN;
    if (!strcmp(e->name, "MIN")) return isnan(x) || isnan(y) ? LM_NAN : (x < y ? x : y);
    if (!strcmp(e->name, "MAX")) return isnan(x) || isnan(y) ? LM_NAN : (x > y ? x : y);
    if (!strcmp(e->name, "ABS")) return fabs(x);
    return LM_NAN;
  }
  case LM_X_UNARY: {
    double x = lm_advise_eval(e->a, a, vars);
    if (e->op == '-') return -x;
    if (e->op == 'n') return truthy(x) ? 0 : 1;
    return x;
  }
  case LM_X_IF:
    return truthy(lm_advise_eval(e->b, a, vars)) ? lm_advise_eval(e->a, a, vars) : lm_advise_eval(e->c, a, vars);
  case LM_X_BINARY:
  case LM_X_COMPARE: {
    double x = lm_advise_eval(e->a, a, vars);
    if (e->op == '&') return truthy(x) ? (truthy(lm_advise_eval(e->b, a, vars)) ? 1 : 0) : 0;
    if (e->op == '|') return truthy(x) ? 1 : (truthy(lm_advise_eval(e->b, a, vars)) ? 1 : 0);
    double y = lm_advise_eval(e->b, a, vars);
    if (e->kind == LM_X_COMPARE && (isnan(x) || isnan(y))) return 0;
    switch (e->op) {
    case '+': return x + y;
    case '-': return x - y;
    case '*': return x * y;
    case '/': return y == 0 ? LM_NAN : x / y;
    case '%': return y == 0 ? LM_NAN : fmod(x, y);
    case 'p': return pow(x, y);
    case '=': return x == y;
    case '!': return x != y;
    case '<': return x < y;
    case '>': return x > y;
    case 'l': return x <= y;
    case 'g': return x >= y;
    default: return LM_NAN;
    }
  }
  }
  return LM_NAN;
}

/* A verdict with its placeholders filled in ("n/a" for a missing value). */
static char *fill(const lm_rule_text *t, const lm_analysis *a, const double *vars, lm_arena *arena) {
  lm_buf b = {0};
  for (int32_t i = 0; i < t->n_parts; i++) {
    const lm_rule_part *p = &t->parts[i];
    if (p->digits < 0) {
      lm_buf_puts(&b, p->text);
      continue;
    }
    double v = lm_advise_eval(p->expr, a, vars);
    if (!isfinite(v)) lm_buf_puts(&b, "n/a");
    else lm_buf_printf(&b, "%.*f", p->digits, v);
  }
  char *s = lm_buf_take(&b);
  char *out = s ? lm_arena_strdup(arena, s) : NULL;
  lm_free(s);
  return out;
}

/* --------------------------------------------------------- kernel facts */

static double mean_col(const lm_table *t, const char *name, const size_t *rows, size_t n) {
  long c = lm_table_find(t, name);
  const double *values = c < 0 ? NULL : lm_table_values(t, (size_t)c, NULL);
  if (!values || !n) return LM_NAN;
  double sum = 0;
  size_t k = 0;
  for (size_t i = 0; i < n; i++) {
    double v = values[rows[i]];
    if (!isnan(v)) sum += v, k++;
  }
  return k ? sum / (double)k : LM_NAN;
}

/* Waves per SIMD the vector registers allow, and the most a SIMD holds. */
static void vgpr_limits(const char *arch, double arch_vgpr, double accum_vgpr, double *waves, double *max_waves) {
  int unified = !strcmp(arch, "gfx90a") || !strncmp(arch, "gfx94", 5) || !strncmp(arch, "gfx95", 5);
  *max_waves = unified ? 8 : 10;
  if (isnan(arch_vgpr)) {
    *waves = LM_NAN;
    return;
  }
  double acc = isnan(accum_vgpr) ? 0 : accum_vgpr;
  double regs = unified ? arch_vgpr + acc : (arch_vgpr > acc ? arch_vgpr : acc);
  double granule = unified ? 8 : 4, file = unified ? 512 : 256;
  double used = ceil((regs > 1 ? regs : 1) / granule) * granule;
  double w = floor(file / used);
  *waves = w < *max_waves ? w : *max_waves;
}

static void kernel_facts(const lm_workload *w, const char *arch, const size_t *rows, size_t n, double total_all,
                         double *v) {
  const lm_table *t = w->pmc;
  long cs = lm_table_find(t, "Start_Timestamp"), ce = lm_table_find(t, "End_Timestamp");
  double sum = 0, sq = 0, mn = LM_INF, mx = -LM_INF;
  size_t k = 0;
  const double *starts = cs >= 0 ? lm_table_values(t, (size_t)cs, NULL) : NULL;
  const double *ends = ce >= 0 ? lm_table_values(t, (size_t)ce, NULL) : NULL;
  for (size_t i = 0; starts && ends && i < n; i++) {
    double d = ends[rows[i]] - starts[rows[i]];
    if (isnan(d)) continue;
    sum += d, sq += d * d, k++;
    if (d < mn) mn = d;
    if (d > mx) mx = d;
  }
  for (int i = 0; i < V__COUNT; i++) v[i] = LM_NAN;
  v[V_CALLS] = (double)n;
  if (k) {
    double mean = sum / (double)k, var = sq / (double)k - mean * mean;
    v[V_TOTAL] = sum, v[V_MEAN] = mean, v[V_MIN] = mn, v[V_MAX] = mx;
    v[V_SHARE] = total_all > 0 ? sum / total_all : LM_NAN;
    v[V_CV] = mean > 0 ? sqrt(var > 0 ? var : 0) / mean : LM_NAN;
  }
  v[V_GRID] = mean_col(t, "Grid_Size", rows, n);
  v[V_WG] = mean_col(t, "Workgroup_Size", rows, n);
  v[V_WGS] = v[V_WG] > 0 ? ceil(v[V_GRID] / v[V_WG]) : LM_NAN;
  v[V_LDS] = mean_col(t, "LDS_Per_Workgroup", rows, n);
  v[V_SCRATCH] = mean_col(t, "Scratch_Per_Workitem", rows, n);
  v[V_AVGPR] = mean_col(t, "Arch_VGPR", rows, n);
  v[V_ACCVGPR] = mean_col(t, "Accum_VGPR", rows, n);
  v[V_SGPR] = mean_col(t, "SGPR", rows, n);
  v[V_WAVE] = mean_col(t, "wave_size", rows, n);
  if (isnan(v[V_WAVE])) {
    const char *ws = lm_sysinfo_text(&w->sysinfo, "wave_size");
    v[V_WAVE] = ws && *ws ? atof(ws) : 64;
  }
  vgpr_limits(arch, v[V_AVGPR], v[V_ACCVGPR], &v[V_VGPR_WAVES], &v[V_MAX_WAVES]);
}

/* --------------------------------------------------------------- summary */

static int cmp_findings(const void *x, const void *y) {
  const lm_finding *a = x, *b = y;
  if (a->rule->severity != b->rule->severity) return b->rule->severity - a->rule->severity;
  double ga = isnan(a->gain) ? -1 : a->gain, gb = isnan(b->gain) ? -1 : b->gain;
  return (ga < gb) - (ga > gb);
}

static int cmp_pct(const void *x, const void *y) {
  const lm_highlight *a = x, *b = y;
  double pa = isnan(a->pct) ? -1 : a->pct, pb = isnan(b->pct) ? -1 : b->pct;
  return (pa < pb) - (pa > pb);
}

/* Whether a speed-of-light metric bounds throughput, and how: memory
 * bandwidth, an issue unit or pipeline, occupancy. Counts of active units
 * (Active CUs: how many the launch covered), IPC, hit rates, latencies and
 * bank conflicts describe a kernel but are not a ceiling it runs into. */
static int limiter_kind(const char *name, lm_limiter_kind *kind) {
  static const char *const never[] = {"Hit Rate", "Active Threads", "Latency", "Active CUs", "Conflicts", "IPC",
                                      "Frequency", "Cycles", "Duration", NULL};
  for (const char *const *p = never; *p; p++)
    if (strstr(name, *p)) return 0;
  if (strstr(name, "Occupancy")) {
    *kind = LM_LIMIT_OCCUPANCY;
    return 1;
  }
  if (strstr(name, " BW") || strstr(name, "Bandwidth") || strstr(name, "Memory Throughput") ||
      strstr(name, "DRAM") || strstr(name, "L1/TEX") || strstr(name, "L2 Cache Throughput")) {
    *kind = LM_LIMIT_MEMORY;
    return 1;
  }
  /* (Radeon's "VALU Instruction Rate" against one instruction per SIMD
   * per cycle is CDNA's "VALU Utilization": an issue unit at its peak.) */
  if (strstr(name, "Utilization") || strstr(name, "FLOPs") || strstr(name, "IOPs") || strstr(name, "OPs") ||
      strstr(name, "Compute (SM) Throughput") || strstr(name, "Pipe") || strstr(name, "Instruction Rate")) {
    *kind = LM_LIMIT_ISSUE;
    return 1;
  }
  return 0;
}

/* Above 100 % of a peak by more than rounding. */
#define ABOVE_PEAK 100.5

/* The top limiters: the rows of the first metric table that bound
 * throughput, by percentage of peak; those above their peak apart. */
static lm_status highlights(const lm_analysis *a, lm_arena *arena, lm_kernel_summary *k) {
  const lm_rtable *t = NULL;
  for (int32_t ti = 0; ti < a->n_tables && !t; ti++)
    if (a->tables[ti].kind == LM_TABLE_METRIC && a->tables[ti].n_rows) t = &a->tables[ti];
  if (!t) return LM_OK;
  static const char *const pct_cols[] = {"Pct of Peak", "Pct", NULL};
  if (col_titled(t, pct_cols) < 0) return LM_OK;
  lm_highlight *all = lm_arena_alloc(arena, (size_t)t->n_rows * sizeof *all);
  if (!all) return LM_ENOMEM;
  size_t n = 0;
  int32_t name_col = -1;
  for (int32_t c = 0; c < t->n_cols; c++)
    if (t->roles[c] == LM_RCOL_NAME && name_col < 0) name_col = c;
  for (int32_t r = 0; name_col >= 0 && r < t->n_rows; r++) {
    const lm_cell *nc = &t->cells[(size_t)r * (size_t)t->n_cols + (size_t)name_col];
    if (nc->kind != LM_CELL_TEXT || !nc->text) continue;
    lm_highlight h;
    h.name = nc->text;
    h.value = metric_cell(a, t->row_ids[r], 0, &h.unit);
    h.peak = metric_cell(a, t->row_ids[r], 1, NULL);
    h.pct = metric_cell(a, t->row_ids[r], 2, NULL);
    if (!isfinite(h.pct) || !isfinite(h.peak) || !(h.peak > 0)) continue;
    if (!limiter_kind(h.name, &h.kind)) continue;
    /* The analysis goes before the summary does: keep copies. */
    h.name = lm_arena_strdup(arena, h.name);
    h.unit = lm_arena_strdup(arena, h.unit ? h.unit : "");
    if (!h.name || !h.unit) return LM_ENOMEM;
    all[n++] = h;
  }
  qsort(all, n, sizeof *all, cmp_pct);
  size_t n_above = 0;
  while (n_above < n && all[n_above].pct > ABOVE_PEAK) n_above++;
  k->above = all;
  k->n_above = n_above;
  k->highlights = all + n_above;
  k->n_highlights = n - n_above < 4 ? n - n_above : 4;
  return LM_OK;
}

/* The metrics a finding's rule reads, with this kernel's values, and the
 * first of them that is above its peak. */
static lm_status finding_evidence(const lm_analysis *a, lm_arena *arena, lm_finding *f) {
  f->above = NULL;
  f->above_pct = LM_NAN;
  f->n_evidence = 0;
  f->evidence = lm_arena_alloc(arena, (f->rule->n_uses ? (size_t)f->rule->n_uses : 1) * sizeof *f->evidence);
  if (!f->evidence) return LM_ENOMEM;
  for (int32_t m = 0; m < f->rule->n_uses; m++) {
    lm_evidence *e = &f->evidence[f->n_evidence];
    const char *unit = NULL;
    e->metric = f->rule->uses[m];
    e->value = metric_cell(a, e->metric, 0, &unit);
    e->pct = metric_cell(a, e->metric, 2, NULL);
    e->unit = lm_arena_strdup(arena, unit ? unit : "");
    if (!e->unit) return LM_ENOMEM;
    if (isnan(e->value) && isnan(e->pct)) continue;
    f->n_evidence++;
    if (!f->above && isfinite(e->pct) && e->pct > ABOVE_PEAK) {
      f->above = e->metric;
      f->above_pct = e->pct;
    }
  }
  return LM_OK;
}

/* The roofline verdict. Each unit and memory level needs some time at
 * its ceiling for the kernel's work: its operations of each data type at
 * that type's peak (the units counted one after the other, a lower bound
 * when they overlap), its bytes at each level's bandwidth. The longest of
 * these is what bounds the kernel, and its share of the measured duration
 * is how close the kernel came to the attainable. This places a BF16
 * matrix kernel against the BF16 matrix-core peak, not the FP32 vector
 * one, and a kernel of mixed work against every ceiling it uses. */
static void place_on_roofline(const lm_roofline *roof, const lm_analysis *a, lm_kernel_summary *k) {
  k->intensity = k->gflops = k->attainable = k->roof_pct = k->roof_bw = k->roof_peak = LM_NAN;
  k->roof_memory = roof && roof->nvidia ? "DRAM" : "HBM";
  const lm_roof_point *p = NULL;
  for (size_t i = 0; roof && i < roof->n_points; i++)
    if (strcmp(roof->points[i].kernel, k->name) == 0) p = &roof->points[i];
  if (!p) {
    k->roof_reason = roof && roof->missing ? "a counter the roofline needs was not collected" : "no roofline point";
    k->roof_unmeasurable = roof ? lm_catalog_unmeasurable(a->catalog, roof->missing) : NULL;
    return;
  }
  double ops = 0;
  for (int t = 0; t < LM_ROOF_TYPES; t++) ops += p->type_ops[t];
  if (!(ops > 0)) {
    k->roof_reason = roof->missing_ops ? "the arithmetic counters were not collected (no FLOP count)"
                                       : "no floating-point work: not on the FLOP roofline";
    k->roof_unmeasurable = lm_catalog_unmeasurable(a->catalog, roof->missing_ops);
    return;
  }
  if (!(p->duration_ns > 0)) {
    k->roof_reason = "no duration measured";
    return;
  }
  k->roof_partial = roof->missing_ops;
  /* Ceilings: roofline.csv's, else the speed-of-light table's peaks (on
   * NVIDIA the roofline panel's: FP16/FP32/FP64 on the CUDA cores, the
   * tensor cores against their dense FP16 peak). */
  static const char *const amd_type_metric[LM_ROOF_TYPES] = {
      "VALU FLOPs",        "VALU FLOPs",       "VALU FLOPs",       "MFMA FLOPs (F8)", "MFMA FLOPs (F16)",
      "MFMA FLOPs (BF16)", "MFMA FLOPs (F32)", "MFMA FLOPs (F64)", "MFMA IOPs (Int8)"};
  static const char *const nv_type_metric[LM_ROOF_TYPES] = {"FP16 FLOPs",   "FP32 FLOPs",   "FP64 FLOPs",
                                                            "Tensor FLOPs", "Tensor FLOPs", "Tensor FLOPs",
                                                            "Tensor FLOPs", "Tensor FLOPs", "Tensor FLOPs"};
  const char *const *type_metric = roof->nvidia ? nv_type_metric : amd_type_metric;
  int measured = !isnan(roof->hbm_bw) && !isnan(roof->fp32);
  k->roof_source = measured ? "roofline.csv" : "theoretical peaks";
  double level_bw[4] = {roof->hbm_bw, roof->l2_bw, roof->l1_bw, roof->lds_bw};
  double level_bytes[4] = {p->bytes_hbm, p->bytes_l2, p->bytes_l1, p->bytes_lds};
  static const char *const amd_level_metric[4] = {"L2-Fabric Read BW", "L2 Cache BW", "vL1D Cache BW",
                                                  "Theoretical LDS Bandwidth"};
  static const char *const nv_level_metric[4] = {"DRAM Bandwidth", "L2 Bandwidth", "L1 Bandwidth", ""};
  const char *const *level_metric = roof->nvidia ? nv_level_metric : amd_level_metric;
  static const char *const amd_level_name[4] = {"HBM", "L2", "L1", "LDS"};
  static const char *const nv_level_name[4] = {"DRAM", "L2", "L1", "shared memory"};
  const char *const *level_name = roof->nvidia ? nv_level_name : amd_level_name;
  for (int l = 0; l < 4; l++)
    if (!measured || isnan(level_bw[l]))
      level_bw[l] = *level_metric[l] ? metric_cell(a, level_metric[l], 1, NULL) : LM_NAN;
  /* No DRAM ceiling in the panels (an export without the peak metrics):
   * the device's memory bandwidth from its system information. */
  if (!(level_bw[0] > 0)) level_bw[0] = sysinfo_var(a, "hbm_bw");
  double compute_ns = 0, longest_type_ns = -1;
  int main_type = -1;
  for (int t = 0; t < LM_ROOF_TYPES; t++) {
    if (!(p->type_ops[t] > 0)) continue;
    double peak = measured ? roof->type_peak[t] : LM_NAN;
    if (isnan(peak)) peak = metric_cell(a, type_metric[t], 1, NULL);
    if (!(peak > 0)) {
      k->roof_reason = "no peak known for this GPU's arithmetic";
      k->roof_type = lm_roofline_type_name(roof, (lm_roof_type)t);
      return;
    }
    double ns = p->type_ops[t] / peak;
    compute_ns += ns;
    if (ns > longest_type_ns) longest_type_ns = ns, main_type = t, k->roof_peak = peak;
  }
  double memory_ns = -1;
  int level = -1;
  for (int l = 0; l < 4; l++) {
    if (!(level_bw[l] > 0) || !(level_bytes[l] > 0)) continue;
    double ns = level_bytes[l] / level_bw[l];
    if (ns > memory_ns) memory_ns = ns, level = l;
  }
  if (level < 0) { /* without a memory side, no bound can be told */
    k->roof_peak = LM_NAN;
    k->roof_reason = roof->missing ? "the memory counters were not collected (no byte count)"
                                   : "no memory traffic or no memory ceiling known";
    return;
  }
  k->roof_type = lm_roofline_type_name(roof, (lm_roof_type)main_type);
  k->roof_bw = level_bw[0];
  k->intensity = p->bytes_hbm > 0 ? ops / p->bytes_hbm : LM_NAN;
  k->gflops = ops / p->duration_ns;
  double bound_ns = compute_ns > memory_ns ? compute_ns : memory_ns;
  if (compute_ns >= memory_ns) {
    k->roof_bound = "compute";
    k->roof_limit = k->roof_type;
  } else {
    k->roof_bound = "memory";
    k->roof_limit = level_name[level];
  }
  k->attainable = ops / bound_ns;
  k->roof_pct = bound_ns / p->duration_ns * 100;
}

/* A summary under way (lm_advise_summary): what it holds until it ends. */
typedef struct summ {
  const lm_workload *w;
  const lm_catalog *cat;
  const lm_ruleset *rules;   /* or NULL */
  const lm_analysis *whole;  /* the caller's analysis of the selection, or NULL */
  lm_diag *diag;
  lm_summary *s;             /* the result */
  lm_analyze_opts base;      /* the caller's options without --kernel-index and -b */
  lm_analysis *stats;        /* a statistics-only analysis that ranks the kernels (no whole) */
  lm_analysis *ka;           /* the analysis of the kernel being summarized */
  lm_roofline *roof;         /* or NULL */
  const lm_rtable *tk;       /* the top-kernels table, or NULL */
  long kcol;                 /* Kernel_Name in the pmc table, -1 */
  size_t *rows, n_rows;      /* the rows of the selection */
  size_t *mine;              /* room for one kernel's rows */
  size_t *calls;             /* per row of tk: its selected dispatches */
  size_t *order;             /* the rows of tk that have some, in its order */
  size_t n_sel;
  lm_map *names;             /* kernel name -> its row of tk */
} summ;

/* The kernels, in the top-kernels table's order (m->tk), and those the
 * selection keeps (m->order, m->n_sel); m->tk is NULL when the catalog has
 * no such table. Errors: those of the analyses, out of memory. */
static lm_status rank_kernels(summ *m, const lm_analyze_opts *o) {
  lm_status st;
  /* The caller's analysis of this selection has the table; else a
   * statistics-only run makes it. */
  const lm_analysis *ranked = m->whole;
  if (!ranked) {
    lm_analyze_opts so = m->base;
    so.stats_only = 1;
    if ((st = lm_analyze_run(m->w, m->cat, &so, &m->stats, m->diag)) != LM_OK) return st;
    ranked = m->stats;
  }
  for (int32_t i = 0; i < ranked->n_tables && !m->tk; i++)
    if (ranked->tables[i].kind == LM_TABLE_TOP_KERNELS) m->tk = &ranked->tables[i];
  if (!m->tk) return LM_OK;
  const lm_rtable *tk = m->tk;
  /* The rows the user's selection keeps (--kernel-index included). */
  if ((st = lm_analyze_rows(m->w, o, &m->rows, &m->n_rows, m->diag)) != LM_OK) return st;
  m->kcol = lm_table_find(m->w->pmc, "Kernel_Name");
  m->mine = lm_malloc((m->n_rows ? m->n_rows : 1) * sizeof *m->mine);
  /* The top-kernels table covers the dispatches left after the GPU,
   * dispatch and region filters, not the kernel filters (as the
   * reference's does): a kernel that -k, --instance or --kernel-index
   * leaves out is a row of it with no selected dispatch, and has nothing
   * to summarize. Each selected row is counted against its kernel's row
   * of the table (names looked up once each). */
  size_t n_tk = (size_t)tk->n_rows;
  m->calls = lm_calloc(n_tk ? n_tk : 1, sizeof *m->calls);
  m->order = lm_malloc((n_tk ? n_tk : 1) * sizeof *m->order);
  m->names = lm_map_new();
  if (!m->mine || !m->calls || !m->order || !m->names) goto nomem;
  for (size_t i = 0; i < n_tk; i++) {
    const lm_cell *nc = &tk->cells[i * (size_t)tk->n_cols + 1];
    if (nc->kind == LM_CELL_TEXT && nc->text && !lm_map_get(m->names, nc->text, NULL) &&
        lm_map_put(m->names, nc->text, (int64_t)i) != LM_OK)
      goto nomem;
  }
  for (size_t r = 0; m->kcol >= 0 && r < m->n_rows; r++) {
    const char *name = lm_table_text(m->w->pmc, (size_t)m->kcol, m->rows[r]);
    int64_t at;
    if (name && lm_map_get(m->names, name, &at)) m->calls[at]++;
  }
  for (size_t i = 0; i < n_tk; i++)
    if (m->calls[i] > 0) m->order[m->n_sel++] = i;
  return LM_OK;
nomem:
  return lm_oom(m->diag, NULL);
}

/* The system-information fields that cannot be right (at most 8), into
 * the summary. Errors: out of memory. */
static lm_status copy_implausible(summ *m) {
  lm_summary *s = m->s;
  lm_implausible bad[8];
  size_t n_bad = lm_analyze_check_sysinfo(m->w, m->cat, bad, 8);
  if (n_bad > 8) n_bad = 8;
  s->implausible = lm_arena_alloc(s->arena, (n_bad ? n_bad : 1) * sizeof *s->implausible);
  if (!s->implausible) return lm_oom(m->diag, NULL);
  memcpy(s->implausible, bad, n_bad * sizeof *bad);
  s->n_implausible = n_bad;
  return LM_OK;
}

/* The findings of the rules that fire for kernel k (analysis ka, facts
 * vars), most severe and largest gain first. Errors: out of memory. */
static lm_status apply_rules(summ *m, const lm_analysis *ka, const double *vars, lm_kernel_summary *k) {
  lm_arena *arena = m->s->arena;
  size_t n_rules = m->rules ? m->rules->n_rules : 0;
  k->n_rules = n_rules;
  k->findings = lm_arena_alloc(arena, (n_rules ? n_rules : 1) * sizeof *k->findings);
  if (!k->findings) return LM_ENOMEM;
  for (size_t r = 0; r < n_rules; r++) {
    const lm_rule *rule = &m->rules->rules[r];
    if (!truthy(lm_advise_eval(rule->when, ka, vars))) {
      /* A rule that did not fire because what it reads was not collected
       * is counted apart: it did not clear the kernel. */
      for (int32_t u = 0; u < rule->n_uses; u++)
        if (not_collected(ka, rule->uses[u])) {
          if (!k->n_unknown_rules++) k->unknown_metric = rule->uses[u];
          break;
        }
      continue;
    }
    lm_finding *f = &k->findings[k->n_findings++];
    f->rule = rule;
    f->verdict = fill(&rule->verdict, ka, vars, arena);
    if (!f->verdict) return LM_ENOMEM;
    f->gain = rule->gain ? lm_advise_eval(rule->gain, ka, vars) : LM_NAN;
    if (finding_evidence(ka, arena, f) != LM_OK) return LM_ENOMEM;
    if (!isnan(f->gain)) f->gain = f->gain < 0 ? 0 : f->gain > 1 ? 1 : f->gain;
  }
  qsort(k->findings, k->n_findings, sizeof *k->findings, cmp_findings);
  return LM_OK;
}

/* The summary of the kernel in row i of the top-kernels table, appended
 * to the summary's kernels: its times, then, from its analysis alone, its
 * limiters, roofline place and findings. Errors: out of memory. */
static lm_status summarize_kernel(summ *m, size_t i) {
  lm_summary *s = m->s;
  const lm_rtable *tk = m->tk;
  lm_kernel_summary *k = &s->kernels[s->n_kernels];
  memset(k, 0, sizeof *k);
  k->intensity = k->gflops = k->attainable = k->roof_pct = k->roof_bw = k->roof_peak = LM_NAN;
  const lm_cell *nc = &tk->cells[i * (size_t)tk->n_cols + 1];
  k->name = lm_arena_strdup(s->arena, nc->text ? nc->text : "");
  if (!k->name) return LM_ENOMEM;
  size_t n_mine = 0;
  for (size_t r = 0; m->kcol >= 0 && r < m->n_rows; r++) {
    const char *name = lm_table_text(m->w->pmc, (size_t)m->kcol, m->rows[r]);
    if (name && strcmp(name, k->name) == 0) m->mine[n_mine++] = m->rows[r];
  }
  double vars[V__COUNT];
  kernel_facts(m->w, m->cat->arch, m->mine, n_mine, s->total_ns, vars);
  k->calls = n_mine;
  k->total_ns = vars[V_TOTAL];
  k->mean_ns = vars[V_MEAN];
  k->share = vars[V_SHARE];
  lm_analyze_opts ko = m->base;
  long index = (long)i;
  ko.kernel_index = &index;
  ko.n_kernel_index = 1;
  lm_diag kd;
  lm_diag_clear(&kd);
  /* One kernel in the selection: the caller's analysis is its own. */
  const lm_analysis *ka_used = m->whole && m->n_sel == 1 ? m->whole : NULL;
  if (!ka_used && lm_analyze_run(m->w, m->cat, &ko, &m->ka, &kd) == LM_OK) ka_used = m->ka;
  if (!ka_used) {
    /* A kernel that cannot be evaluated alone (every dispatch of it idle,
     * say) is still listed with its times. */
    k->roof_reason = lm_arena_strdup(s->arena, kd.message);
    s->n_kernels++;
    return LM_OK;
  }
  /* How far the executions of its rows differed (lumen profiles). */
  if (ka_used->spread && ka_used->spread->n_kernels) {
    vars[V_SET_SPREAD] = ka_used->spread->kernels[0].max_spread;
    vars[V_SET_ROWS] = (double)ka_used->spread->kernels[0].rows;
  }
  if (highlights(ka_used, s->arena, k) != LM_OK) return LM_ENOMEM;
  place_on_roofline(m->roof, ka_used, k);
  if (k->roof_unmeasurable) {
    /* Not a counter left out of the collection: one the chip lacks. */
    char reason[512];
    snprintf(reason, sizeof reason, "%s cannot be measured on %s", k->roof_unmeasurable->what, m->cat->arch);
    if (!(k->roof_reason = lm_arena_strdup(s->arena, reason))) return LM_ENOMEM;
  }
  /* (the roofline's strings end with it: the summary keeps its own) */
  if (k->roof_partial && !(k->roof_partial = lm_arena_strdup(s->arena, k->roof_partial))) return LM_ENOMEM;
  if (apply_rules(m, ka_used, vars, k) != LM_OK) return LM_ENOMEM;
  lm_analysis_free(m->ka);
  m->ka = NULL;
  s->n_kernels++;
  return LM_OK;
}

lm_status lm_advise_summary(const lm_workload *w, const lm_catalog *cat, const lm_ruleset *rules,
                            const lm_analyze_opts *o, const lm_analysis *whole, size_t top, lm_summary **out,
                            lm_diag *diag) {
  lm_status st = LM_OK;
  summ m;
  memset(&m, 0, sizeof m);
  *out = NULL;
  lm_summary *s = calloc(1, sizeof *s);
  if (!s || !(s->arena = lm_arena_new(1 << 14))) {
    free(s);
    return lm_oom(diag, NULL);
  }
  m.w = w;
  m.cat = cat;
  m.rules = rules;
  m.whole = whole;
  m.diag = diag;
  m.s = s;
  m.kcol = -1;
  m.base = *o;
  m.base.kernel_index = NULL;
  m.base.n_kernel_index = 0;
  m.base.blocks = NULL;
  m.base.n_blocks = 0;
  if ((st = rank_kernels(&m, o)) != LM_OK || !m.tk) goto done;
  /* The selection's total time, for shares. */
  double all_facts[V__COUNT];
  kernel_facts(w, cat->arch, m.rows, m.n_rows, 0, all_facts);
  s->total_ns = all_facts[V_TOTAL];
  s->n_total_kernels = m.n_sel;
  if ((st = copy_implausible(&m)) != LM_OK) goto done;
  size_t n = m.n_sel < top ? m.n_sel : top;
  s->kernels = lm_arena_alloc(s->arena, (n ? n : 1) * sizeof *s->kernels);
  if (!s->kernels) goto nomem;
  lm_status rs = lm_roofline_compute(w, &m.base, (size_t)m.tk->n_rows, &m.roof, NULL);
  if (rs != LM_OK) m.roof = NULL;
  for (size_t j = 0; j < n; j++)
    if (summarize_kernel(&m, m.order[j]) != LM_OK) goto nomem;
  goto done;
nomem:
  st = lm_oom(diag, NULL);
done:
  lm_analysis_free(m.stats);
  lm_analysis_free(m.ka);
  lm_roofline_free(m.roof);
  lm_free(m.rows);
  lm_free(m.mine);
  lm_free(m.calls);
  lm_free(m.order);
  lm_map_free(m.names);
  if (st != LM_OK) lm_summary_free(s);
  else *out = s;
  return st;
}

void lm_summary_free(lm_summary *s) {
  if (!s) return;
  lm_rules_free(s->rules);
  lm_arena_free(s->arena);
  free(s);
}
