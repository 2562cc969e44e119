/*
 * uncollected.c - "not collected" instead of a blank, for workloads read
 * from other tools' files, which hold the counters their user asked for
 * and no others. A metric row whose values are all blank and whose
 * formula reads a counter column the workload lacks says so in its first
 * value cell (in a row with other values, such as a constant peak, its
 * first blank cell whose formula reads one); a blank for any other reason (a division by zero, a filter)
 * stays blank, and so does every cell of a workload folder, as the
 * reference shows them.
 */
#include <stdio.h>
#include <string.h>

#include "analyze/analyze_private.h"

enum { UNKNOWN = 0, PRESENT = 1, MISSING = 2 };

/* Whether the workload holds the column an input node reads. */
static int input_present(const lm_workload *w, const lm_input *in) {
  const lm_table *t = lm_workload_source(w, in->source);
  if (!t) return 0;
  if (in->index == LM_INDEX_NONE) return lm_table_find(t, in->column) >= 0;
  char name[256];
  snprintf(name, sizeof name, "%s[%d]", in->column, in->index >= 0 ? (int)in->index : 0);
  return lm_table_find(t, name) >= 0;
}

/* MISSING when node reads, anywhere below it, a column w lacks. memo holds
 * each node's answer once known. */
static int reads_missing(const lm_workload *w, const lm_catalog *cat, int32_t norm, int32_t node, uint8_t *memo,
                         int depth) {
  if (node < 0 || node >= cat->n_nodes || depth > 200) return PRESENT;
  if (memo[node] != UNKNOWN) return memo[node];
  const lm_node *n = &cat->nodes[node];
  int r = PRESENT;
  if (n->op == LM_OP_INPUT) {
    r = input_present(w, &cat->inputs[n->a]) ? PRESENT : MISSING;
  } else if (n->op == LM_OP_NORM) {
    if (norm >= 0) r = reads_missing(w, cat, norm, cat->norm_nodes[n->a * cat->n_norms + norm], memo, depth + 1);
  } else if (n->op != LM_OP_CONST && n->op != LM_OP_SYSVAR) {
    int32_t kids[3] = {n->a, n->b, n->c};
    int arity = n->op == LM_OP_WHERE ? 3
                : (n->op == LM_OP_NEG || n->op == LM_OP_NOT || n->op == LM_OP_ROUND || n->op == LM_OP_TO_INT ||
                   LM_OP_IS_AGGREGATE(n->op))
                    ? 1
                    : 2;
    for (int k = 0; k < arity && r == PRESENT; k++) r = reads_missing(w, cat, norm, kids[k], memo, depth + 1);
  }
  memo[node] = (uint8_t)r;
  return r;
}

lm_status lm_analyze_mark_uncollected(lm_analysis *an, lm_diag *diag) {
  const lm_workload *w = an->workload;
  const lm_catalog *cat = an->catalog;
  if (!w || !w->format || !cat || cat->n_nodes <= 0) return LM_OK;
  uint8_t *memo = lm_calloc((size_t)cat->n_nodes, 1);
  if (!memo) return lm_oom(diag, w->path);
  int32_t norm = -1;
  for (int32_t i = 0; an->norm && i < cat->n_norms; i++)
    if (strcmp(cat->norms[i].name, an->norm) == 0) norm = i;
  for (int32_t ti = 0; ti < an->n_tables; ti++) {
    lm_rtable *t = &an->tables[ti];
    if (t->kind != LM_TABLE_METRIC || !t->shown || !t->row_defs || t->def < 0) continue;
    for (int32_t r = 0; r < t->n_rows; r++) {
      const lm_rowdef *rd = &cat->rows[t->row_defs[r]];
      /* first: the first value cell; gap: the first blank one whose own
       * formula reads a missing counter (a row with a constant peak) */
      int blank = 1, missing = 0, first = -1, gap = -1;
      for (int32_t c = 0; c < t->n_cols; c++) {
        if (t->roles[c] != LM_RCOL_VALUE) continue;
        if (first < 0) first = c;
        int empty = t->cells[(size_t)r * (size_t)t->n_cols + (size_t)c].kind == LM_CELL_EMPTY;
        if (!empty) blank = 0;
        const lm_celldef *cd = &cat->cells[rd->first_cell + c];
        if (cd->node >= 0 && reads_missing(w, cat, norm, cd->node, memo, 0) == MISSING) {
          missing = 1;
          if (empty && gap < 0) gap = c;
        }
      }
      if (!blank) first = gap;
      if (missing && first >= 0) {
        lm_cell *cell = &t->cells[(size_t)r * (size_t)t->n_cols + (size_t)first];
        cell->kind = LM_CELL_TEXT;
        cell->text = "not collected";
      }
    }
  }
  lm_free(memo);
  return LM_OK;
}
