/*
 * wants.c - which counter columns an analysis reads, so that a reader of
 * stored columns (a lumen database, the store, the rank.R parts of an MPI
 * profile) loads those and leaves the rest on disk. The catalog's inputs
 * say what the formulas read; the list below is what the tables outside
 * the evaluator (top kernels, roofline, summary, rank table) read by name,
 * and every column of per-kernel totals (LM_TOTALS_SOURCE).
 * A column wrongly left out would show as "n/a", so the list errs on the
 * side of reading more.
 */
#include <ctype.h>
#include <stdio.h>
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
  if (strcmp(source, "roofline") == 0 || strcmp(source, LM_TOTALS_SOURCE) == 0) return 1;
  if (strcmp(source, "pmc_perf") == 0)
    for (size_t i = 0; i < LM_ARRAY_LEN(analysis_columns); i++)
      if (analysis_columns[i][0] == name[0] && strcmp(analysis_columns[i], name) == 0) return 1;
  for (int32_t i = 0; cat && i < cat->n_inputs; i++) {
    const lm_input *in = &cat->inputs[i];
    if (strcmp(in->source, source) != 0) continue;
    if (in->index == LM_INDEX_NONE ? strcmp(in->column, name) == 0 : indexed_name(name, in->column, in->index))
      return 1;
  }
  return 0;
}


/* The index: every key is the source, a unit separator and the column;
 * an indexed input's key ends in a second separator and its index, or "*"
 * for every channel. A catalog with a name too long for a key is asked
 * input by input, as lm_analyze_wants does. */
struct lm_wants_index {
  const lm_catalog *cat;
  lm_map *keys;
  int slow;
};

#define KEY_MAX 512

/* key for source, name and (when index_text) the index; 0 when too long. */
static size_t make_key(char *key, const char *source, const char *name, size_t name_len, const char *index_text) {
  size_t ns = strlen(source), ni = index_text ? strlen(index_text) + 1 : 0;
  if (ns + 1 + name_len + ni >= KEY_MAX) return 0;
  memcpy(key, source, ns);
  key[ns] = '\x1f';
  memcpy(key + ns + 1, name, name_len);
  if (index_text) {
    key[ns + 1 + name_len] = '\x1f';
    memcpy(key + ns + 2 + name_len, index_text, ni - 1);
  }
  return ns + 1 + name_len + ni;
}

lm_wants_index *lm_analyze_wants_index_new(const lm_catalog *cat) {
  lm_wants_index *ix = lm_calloc(1, sizeof *ix);
  if (!ix || !(ix->keys = lm_map_new())) goto nomem;
  ix->cat = cat;
  for (int32_t i = 0; cat && i < cat->n_inputs && !ix->slow; i++) {
    const lm_input *in = &cat->inputs[i];
    char key[KEY_MAX], index_text[16];
    snprintf(index_text, sizeof index_text, "%d", (int)in->index);
    size_t n = make_key(key, in->source, in->column, strlen(in->column),
                        in->index == LM_INDEX_NONE ? NULL : in->index == LM_INDEX_CHANNEL ? "*" : index_text);
    if (!n) ix->slow = 1;
    else if (lm_map_putn(ix->keys, key, n, 1) != LM_OK) goto nomem;
  }
  /* and the columns read by name */
  for (size_t i = 0; i < LM_ARRAY_LEN(analysis_columns); i++) {
    char key[KEY_MAX];
    size_t n = make_key(key, "pmc_perf", analysis_columns[i], strlen(analysis_columns[i]), NULL);
    if (lm_map_putn(ix->keys, key, n, 1) != LM_OK) goto nomem;
  }
  return ix;
nomem:
  lm_analyze_wants_index_free(ix);
  return NULL;
}

void lm_analyze_wants_index_free(lm_wants_index *ix) {
  if (!ix) return;
  lm_map_free(ix->keys);
  lm_free(ix);
}

int lm_analyze_wants_indexed(void *ctx, const char *source, const char *name) {
  const lm_wants_index *ix = ctx;
  if (ix->slow || strchr(source, '\x1f') || strchr(name, '\x1f')) return lm_analyze_wants((void *)ix->cat, source, name);
  if (strcmp(source, "roofline") == 0 || strcmp(source, LM_TOTALS_SOURCE) == 0) return 1;
  char key[KEY_MAX];
  size_t n = make_key(key, source, name, strlen(name), NULL), len = strlen(name);
  if (!n) return lm_analyze_wants((void *)ix->cat, source, name);
  if (lm_map_getn(ix->keys, key, n, NULL)) return 1;
  /* "BASE[k]": an input of that index, or of every channel */
  const char *open = len && name[len - 1] == ']' ? strrchr(name, '[') : NULL;
  if (!open || open == name) return 0;
  int32_t k = 0;
  const char *p = open + 1;
  if (!isdigit((unsigned char)*p)) return 0;
  for (; isdigit((unsigned char)*p) && k < 1000000; p++) k = k * 10 + (*p - '0');
  if (p[0] != ']' || p[1] != '\0') return 0;
  size_t base = (size_t)(open - name);
  if ((n = make_key(key, source, name, base, "*")) && lm_map_getn(ix->keys, key, n, NULL)) return 1;
  char index_text[16];
  snprintf(index_text, sizeof index_text, "%d", (int)k);
  return (n = make_key(key, source, name, base, index_text)) && lm_map_getn(ix->keys, key, n, NULL);
}
