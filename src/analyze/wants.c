/*
 * wants.c - which counter columns an analysis reads, so that a reader of
 * stored columns (a lumen database, the store, the rank.R parts of an MPI
 * profile) loads those and leaves the rest on disk. The catalog's inputs
 * say what the formulas read; the list below is what the tables outside
 * the evaluator (top kernels, roofline, summary, rank table) read by name.
 * A column wrongly left out would show as "n/a", so the list errs on the
 * side of reading more.
 */
#include <ctype.h>
#include <string.h>

#include "analyze/analyze.h"

/* Columns that analysis reads by name besides the formulas' inputs: the
 * busy cycles of the top-kernels table, the waves of the rank table, the
 * wave size of the summary's occupancy, and the counters of the roofline
 * points (both generations of the HBM counters' names). The dispatch
 * columns come with every load. */
static const char *const analysis_columns[] = {
    "GRBM_GUI_ACTIVE", "SQ_WAVES", "wave_size", "SQ_LDS_IDX_ACTIVE", "SQ_LDS_BANK_CONFLICT",
    "SQ_INSTS_VALU_ADD_F16", "SQ_INSTS_VALU_MUL_F16", "SQ_INSTS_VALU_TRANS_F16", "SQ_INSTS_VALU_FMA_F16",
    "SQ_INSTS_VALU_ADD_F32", "SQ_INSTS_VALU_MUL_F32", "SQ_INSTS_VALU_TRANS_F32", "SQ_INSTS_VALU_FMA_F32",
    "SQ_INSTS_VALU_ADD_F64", "SQ_INSTS_VALU_MUL_F64", "SQ_INSTS_VALU_TRANS_F64", "SQ_INSTS_VALU_FMA_F64",
    "SQ_INSTS_VALU_MFMA_MOPS_F16", "SQ_INSTS_VALU_MFMA_MOPS_BF16", "SQ_INSTS_VALU_MFMA_MOPS_F32",
    "SQ_INSTS_VALU_MFMA_MOPS_F64", "TCP_TOTAL_CACHE_ACCESSES_sum", "TCP_TCC_READ_REQ_sum",
    "TCP_TCC_WRITE_REQ_sum", "TCP_TCC_ATOMIC_WITH_RET_REQ_sum", "TCP_TCC_ATOMIC_WITHOUT_RET_REQ_sum",
    "TCC_EA_RDREQ_sum", "TCC_EA_RDREQ_32B_sum", "TCC_EA_WRREQ_sum", "TCC_EA_WRREQ_64B_sum",
    "TCC_EA0_RDREQ_sum", "TCC_EA0_RDREQ_32B_sum", "TCC_EA0_WRREQ_sum", "TCC_EA0_WRREQ_64B_sum",
    "TCC_BUBBLE_sum"};

/* "NAME[k]" for input column `base`: 1 when k is index (or any channel). */
static int indexed_name(const char *name, const char *base, int32_t index) {
  size_t n = strlen(base);
  if (strncmp(name, base, n) != 0 || name[n] != '[') return 0;
  const char *p = name + n + 1;
  if (!isdigit((unsigned char)*p)) return 0;
  long k = 0;
  for (; isdigit((unsigned char)*p) && k < 1000000; p++) k = k * 10 + (*p - '0');
  if (p[0] != ']' || p[1] != '\0') return 0;
  return index == LM_INDEX_CHANNEL || k == index;
}

int lm_analyze_wants(void *ctx, const char *source, const char *name) {
  const lm_catalog *cat = ctx;
  if (strcmp(source, "roofline") == 0) return 1;
  if (strcmp(source, "pmc_perf") == 0)
    for (size_t i = 0; i < LM_ARRAY_LEN(analysis_columns); i++)
      if (strcmp(analysis_columns[i], name) == 0) return 1;
  for (int32_t i = 0; cat && i < cat->n_inputs; i++) {
    const lm_input *in = &cat->inputs[i];
    if (strcmp(in->source, source) != 0) continue;
    if (in->index == LM_INDEX_NONE ? strcmp(in->column, name) == 0 : indexed_name(name, in->column, in->index))
      return 1;
  }
  return 0;
}

