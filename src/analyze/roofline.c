/*
 * roofline.c - the roofline the reference tool draws: ceilings from the
 * micro-benchmark's roofline.csv and one point per kernel at each memory
 * level, arithmetic intensity (FLOPs per byte) against achieved GFLOP/s.
 *
 * The counts follow the reference's definitions: FLOPs are 64 lanes times
 * the VALU add, multiply, transcendental and (twice) fused multiply-add
 * instructions of F16, F32 and F64, plus 512 times the MFMA operation
 * counters; bytes are 64 per L1 access and per L2 request, and per HBM
 * request 32 or 64 by size (MI300 adds the 128-byte bubbles). Points are
 * means per call of each kernel over the selected dispatches, ranked by
 * total duration.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "analyze/analyze.h"

typedef struct acc {
  int32_t kernel;
  size_t calls;
  double duration, flops, valu, l1, l2, hbm, lds;
  double ops[LM_ROOF_TYPES];
} acc;

const char *lm_roof_type_name(lm_roof_type type) {
  static const char *const names[] = {"VALU FP16", "VALU FP32", "VALU FP64", "MFMA F8",  "MFMA F16",
                                      "MFMA BF16", "MFMA F32",  "MFMA F64",  "MFMA I8"};
  return (unsigned)type < LM_ROOF_TYPES ? names[type] : "";
}

const char *lm_roofline_type_name(const lm_roofline *r, lm_roof_type type) {
  static const char *const nv[] = {"FP16",        "FP32",        "FP64",        "Tensor F8",  "Tensor FP16",
                                   "Tensor BF16", "Tensor TF32", "Tensor FP64", "Tensor INT8"};
  if (r && r->nvidia) return (unsigned)type < LM_ROOF_TYPES ? nv[type] : "";
  return lm_roof_type_name(type);
}

static double col_at(const lm_table *t, long c, size_t r) {
  const double *values = c < 0 ? NULL : lm_table_values(t, (size_t)c, NULL);
  if (!values) return 0;
  double v = values[r];
  return isnan(v) ? 0 : v;
}

/* A column, remembering the first one that is missing. */
static long need(const lm_table *t, const char *name, const char **missing) {
  long c = lm_table_find(t, name);
  if (c < 0 && !*missing) *missing = name;
  return c;
}

static int cmp_total(const void *x, const void *y) {
  const acc *a = x, *b = y;
  double ta = a->duration, tb = b->duration;
  return (ta < tb) - (ta > tb);
}

static double roof_value(const lm_table *t, size_t row, const char *name) {
  for (size_t c = 0; t && c < t->n_cols; c++)
    if (strcasecmp(t->cols[c].name, name) == 0) {
      const double *v = lm_table_values(t, c, NULL);
      return v ? v[row] : LM_NAN;
    }
  return LM_NAN;
}

void lm_roofline_free(lm_roofline *r) {
  if (r) lm_arena_free(r->arena);
}

/* The group of a row's kernel, or NULL. */
static acc *group_of(const lm_table *t, long kcol, acc *groups, size_t row) {
  int32_t k = kcol >= 0 && t->cols[kcol].text_ids ? t->cols[kcol].text_ids[row] : -1;
  return k < 0 ? NULL : &groups[k];
}

/* AMD: the reference's counts (see the file's head) of the selected rows,
 * added to their kernels' groups. */
static void amd_accumulate(const lm_workload *w, const size_t *rows, size_t n, acc *groups, const char **missing,
                           const char **missing_ops) {
  const lm_table *t = w->pmc;
  static const char *const valu[] = {"SQ_INSTS_VALU_ADD_F16", "SQ_INSTS_VALU_MUL_F16", "SQ_INSTS_VALU_TRANS_F16",
                                     "SQ_INSTS_VALU_FMA_F16", "SQ_INSTS_VALU_ADD_F32", "SQ_INSTS_VALU_MUL_F32",
                                     "SQ_INSTS_VALU_TRANS_F32", "SQ_INSTS_VALU_FMA_F32", "SQ_INSTS_VALU_ADD_F64",
                                     "SQ_INSTS_VALU_MUL_F64", "SQ_INSTS_VALU_TRANS_F64", "SQ_INSTS_VALU_FMA_F64"};
  static const char *const mfma[] = {"SQ_INSTS_VALU_MFMA_MOPS_F16", "SQ_INSTS_VALU_MFMA_MOPS_BF16",
                                     "SQ_INSTS_VALU_MFMA_MOPS_F32", "SQ_INSTS_VALU_MFMA_MOPS_F64"};
  long vc[12], mc[4];
  for (int i = 0; i < 12; i++) vc[i] = need(t, valu[i], missing);
  for (int i = 0; i < 4; i++) mc[i] = need(t, mfma[i], missing);
  for (int i = 0; i < 12; i++) need(t, valu[i], missing_ops);
  for (int i = 0; i < 4; i++) need(t, mfma[i], missing_ops);
  /* F8 and I8 matrix operations: not in the reference's count, but the
   * work of their kernels (absent on GPUs without them: no work). */
  long f8 = lm_table_find(t, "SQ_INSTS_VALU_MFMA_MOPS_F8"), i8 = lm_table_find(t, "SQ_INSTS_VALU_MFMA_MOPS_I8");
  long l1 = need(t, "TCP_TOTAL_CACHE_ACCESSES_sum", missing);
  long l2[4] = {need(t, "TCP_TCC_READ_REQ_sum", missing), need(t, "TCP_TCC_WRITE_REQ_sum", missing),
                need(t, "TCP_TCC_ATOMIC_WITH_RET_REQ_sum", missing),
                need(t, "TCP_TCC_ATOMIC_WITHOUT_RET_REQ_sum", missing)};
  int mi300 = w->arch && strncmp(w->arch, "gfx94", 5) == 0;
  long rd = need(t, mi300 ? "TCC_EA0_RDREQ_sum" : "TCC_EA_RDREQ_sum", missing);
  long rd32 = need(t, mi300 ? "TCC_EA0_RDREQ_32B_sum" : "TCC_EA_RDREQ_32B_sum", missing);
  long wr = need(t, mi300 ? "TCC_EA0_WRREQ_sum" : "TCC_EA_WRREQ_sum", missing);
  long wr64 = need(t, mi300 ? "TCC_EA0_WRREQ_64B_sum" : "TCC_EA_WRREQ_64B_sum", missing);
  long bubble = mi300 ? need(t, "TCC_BUBBLE_sum", missing) : -1;
  long lds_active = lm_table_find(t, "SQ_LDS_IDX_ACTIVE"), lds_conflict = lm_table_find(t, "SQ_LDS_BANK_CONFLICT");
  long kcol = lm_table_find(t, "Kernel_Name"), ts = lm_table_find(t, "Start_Timestamp"),
       te = lm_table_find(t, "End_Timestamp");
  long banks_at = lm_sysinfo_find(&w->sysinfo, "lds_banks_per_cu");
  double banks = banks_at >= 0 && !isnan(w->sysinfo.values[banks_at]) ? w->sysinfo.values[banks_at] : 32;

  for (size_t i = 0; i < n; i++) {
    size_t row = rows[i];
    acc *g = group_of(t, kcol, groups, row);
    if (!g) continue;
    double v = 0;
    for (int j = 0; j < 12; j++) v += col_at(t, vc[j], row) * ((j % 4) == 3 ? 2 : 1);
    v *= 64;
    double m = 0;
    for (int j = 0; j < 4; j++) m += col_at(t, mc[j], row);
    for (int type = 0; type < 3; type++) /* valu[] holds F16, F32, F64 in blocks of four */
      for (int j = 0; j < 4; j++) g->ops[type] += 64 * col_at(t, vc[type * 4 + j], row) * (j == 3 ? 2 : 1);
    g->ops[LM_ROOF_MFMA_F16] += 512 * col_at(t, mc[0], row);
    g->ops[LM_ROOF_MFMA_BF16] += 512 * col_at(t, mc[1], row);
    g->ops[LM_ROOF_MFMA_F32] += 512 * col_at(t, mc[2], row);
    g->ops[LM_ROOF_MFMA_F64] += 512 * col_at(t, mc[3], row);
    g->ops[LM_ROOF_MFMA_F8] += 512 * col_at(t, f8, row);
    g->ops[LM_ROOF_MFMA_I8] += 512 * col_at(t, i8, row);
    g->calls++;
    g->duration += col_at(t, te, row) - col_at(t, ts, row);
    g->valu += v;
    g->flops += v + 512 * m;
    g->l1 += 64 * col_at(t, l1, row);
    g->l2 += 64 * (col_at(t, l2[0], row) + col_at(t, l2[1], row) + col_at(t, l2[2], row) + col_at(t, l2[3], row));
    double r32 = col_at(t, rd32, row), w64 = col_at(t, wr64, row);
    if (mi300) {
      double b = col_at(t, bubble, row);
      g->hbm += 128 * b + 32 * r32 + 64 * (col_at(t, rd, row) - b - r32) + 32 * (col_at(t, wr, row) - w64) + 64 * w64;
    } else {
      g->hbm += 32 * r32 + 64 * (col_at(t, rd, row) - r32) + 64 * w64 + 32 * (col_at(t, wr, row) - w64);
    }
    g->lds += (col_at(t, lds_active, row) - col_at(t, lds_conflict, row)) * 4 * banks;
  }
}

/* NVIDIA: CUPTI's thread-level operation counts (a fused multiply-add
 * counts two) on the CUDA cores, the tensor path's operations, and the
 * bytes through DRAM, L2 and L1/TEX; the duration from the timestamps,
 * else gpu__time_duration.sum. */
static void nvidia_accumulate(const lm_workload *w, const size_t *rows, size_t n, acc *groups, const char **missing,
                              const char **missing_ops) {
  const lm_table *t = w->pmc;
  static const char *const fp[3][3] = {
      {"smsp__sass_thread_inst_executed_op_hadd_pred_on.sum", "smsp__sass_thread_inst_executed_op_hmul_pred_on.sum",
       "smsp__sass_thread_inst_executed_op_hfma_pred_on.sum"},
      {"smsp__sass_thread_inst_executed_op_fadd_pred_on.sum", "smsp__sass_thread_inst_executed_op_fmul_pred_on.sum",
       "smsp__sass_thread_inst_executed_op_ffma_pred_on.sum"},
      {"smsp__sass_thread_inst_executed_op_dadd_pred_on.sum", "smsp__sass_thread_inst_executed_op_dmul_pred_on.sum",
       "smsp__sass_thread_inst_executed_op_dfma_pred_on.sum"}};
  static const char *const tensor[3] = {"sm__ops_path_tensor_src_fp16_dst_fp16.sum",
                                        "sm__ops_path_tensor_src_fp16_dst_fp32.sum",
                                        "sm__ops_path_tensor_src_bf16_dst_fp32.sum"};
  long fc[3][3], tc[3];
  for (int ty = 0; ty < 3; ty++)
    for (int j = 0; j < 3; j++) fc[ty][j] = need(t, fp[ty][j], missing_ops);
  /* (chips without a tensor path of a kind have no such counter: no work) */
  for (int j = 0; j < 3; j++) tc[j] = lm_table_find(t, tensor[j]);
  *missing = *missing_ops;
  long dram = need(t, "dram__bytes.sum", missing), lts = need(t, "lts__t_bytes.sum", missing),
       l1 = need(t, "l1tex__t_bytes.sum", missing);
  long kcol = lm_table_find(t, "Kernel_Name"), ts = lm_table_find(t, "Start_Timestamp"),
       te = lm_table_find(t, "End_Timestamp"), dur = lm_table_find(t, "gpu__time_duration.sum");
  for (size_t i = 0; i < n; i++) {
    size_t row = rows[i];
    acc *g = group_of(t, kcol, groups, row);
    if (!g) continue;
    double cuda = 0;
    for (int ty = 0; ty < 3; ty++) {
      double ops = col_at(t, fc[ty][0], row) + col_at(t, fc[ty][1], row) + 2 * col_at(t, fc[ty][2], row);
      g->ops[LM_ROOF_VALU_F16 + ty] += ops;
      cuda += ops;
    }
    double t16 = col_at(t, tc[0], row) + col_at(t, tc[1], row), tbf16 = col_at(t, tc[2], row);
    g->ops[LM_ROOF_MFMA_F16] += t16;
    g->ops[LM_ROOF_MFMA_BF16] += tbf16;
    g->calls++;
    double d = col_at(t, te, row) - col_at(t, ts, row);
    g->duration += d > 0 ? d : col_at(t, dur, row);
    g->valu += cuda;
    g->flops += cuda + t16 + tbf16;
    g->l1 += col_at(t, l1, row);
    g->l2 += col_at(t, lts, row);
    g->hbm += col_at(t, dram, row);
  }
}

lm_status lm_roofline_compute(const lm_workload *w, const lm_analyze_opts *o, size_t top, lm_roofline **out,
                              lm_diag *diag) {
  *out = NULL;
  size_t *rows = NULL, n = 0;
  lm_status st = lm_analyze_rows(w, o, &rows, &n, diag);
  if (st != LM_OK) return st;
  lm_arena *arena = lm_arena_new(1 << 12);
  lm_roofline *r = arena ? lm_arena_alloc(arena, sizeof *r) : NULL;
  acc *groups = NULL;
  if (!r) goto nomem;
  memset(r, 0, sizeof *r);
  r->arena = arena;
  const lm_table *t = w->pmc;
  const char *missing = NULL, *missing_ops = NULL;
  groups = calloc(t->n_strings + 1, sizeof *groups);
  if (!groups) goto nomem;
  for (size_t s = 0; s < t->n_strings; s++) groups[s].kernel = (int32_t)s;
  r->nvidia = w->arch && strncmp(w->arch, "sm_", 3) == 0;
  if (r->nvidia)
    nvidia_accumulate(w, rows, n, groups, &missing, &missing_ops);
  else
    amd_accumulate(w, rows, n, groups, &missing, &missing_ops);
  r->missing = missing ? lm_arena_strdup(arena, missing) : NULL;
  r->missing_ops = missing_ops ? lm_arena_strdup(arena, missing_ops) : NULL;
  long gcol = lm_table_find(t, "GPU_ID");
  qsort(groups, t->n_strings, sizeof *groups, cmp_total);
  size_t kept = 0;
  while (kept < t->n_strings && kept < top && groups[kept].calls) kept++;
  r->points = lm_arena_alloc(arena, (kept ? kept : 1) * sizeof *r->points);
  if (!r->points) goto nomem;
  for (size_t i = 0; i < kept; i++) {
    const acc *g = &groups[i];
    lm_roof_point *p = &r->points[i];
    double c = (double)g->calls;
    p->kernel = lm_arena_strdup(arena, t->strings[g->kernel]);
    p->calls = g->calls;
    p->duration_ns = g->duration / c;
    p->flops = g->flops / c;
    p->valu_flops = g->valu / c;
    p->bytes_l1 = g->l1 / c;
    p->bytes_l2 = g->l2 / c;
    p->bytes_hbm = g->hbm / c;
    p->bytes_lds = g->lds / c;
    for (int type = 0; type < LM_ROOF_TYPES; type++) p->type_ops[type] = g->ops[type] / c;
  }
  r->n_points = kept;
  /* Ceilings: the benchmark row of the first selected dispatch's GPU, or
   * the first row. */
  const lm_table *roof = w->roofline;
  size_t rr = 0;
  if (roof && n && gcol >= 0) {
    const double *gpus = lm_table_values(t, (size_t)gcol, NULL);
    double gpu = gpus ? gpus[rows[0]] : LM_NAN;
    for (size_t i = 0; i < roof->n_rows; i++)
      if (roof_value(roof, i, "device") == gpu) rr = i;
  }
  int have = roof && roof->n_rows > 0;
  r->hbm_bw = have ? roof_value(roof, rr, "HBMBw") : LM_NAN;
  r->l2_bw = have ? roof_value(roof, rr, "L2Bw") : LM_NAN;
  r->l1_bw = have ? roof_value(roof, rr, "L1Bw") : LM_NAN;
  r->lds_bw = have ? roof_value(roof, rr, "LDSBw") : LM_NAN;
  r->fp32 = have ? roof_value(roof, rr, "FP32Flops") : LM_NAN;
  r->fp64 = have ? roof_value(roof, rr, "FP64Flops") : LM_NAN;
  r->mfma_bf16 = have ? roof_value(roof, rr, "MFMABF16Flops") : LM_NAN;
  r->mfma_f16 = have ? roof_value(roof, rr, "MFMAF16Flops") : LM_NAN;
  r->mfma_f32 = have ? roof_value(roof, rr, "MFMAF32Flops") : LM_NAN;
  r->mfma_f64 = have ? roof_value(roof, rr, "MFMAF64Flops") : LM_NAN;
  r->mfma_i8 = have ? roof_value(roof, rr, "MFMAI8Ops") : LM_NAN;
  static const char *const type_cols[LM_ROOF_TYPES] = {"FP16Flops",     "FP32Flops",    "FP64Flops",
                                                        "MFMAF8Flops",   "MFMAF16Flops", "MFMABF16Flops",
                                                        "MFMAF32Flops",  "MFMAF64Flops", "MFMAI8Ops"};
  for (int type = 0; type < LM_ROOF_TYPES; type++) {
    double v = have ? roof_value(roof, rr, type_cols[type]) : LM_NAN;
    r->type_peak[type] = v > 0 ? v : LM_NAN;
  }
  free(groups);
  lm_free(rows);
  *out = r;
  return LM_OK;
nomem:
  free(groups);
  lm_free(rows);
  lm_arena_free(arena);
  return lm_oom(diag, NULL);
}
