/*
 * spread.c - how much the executions behind a lumen profile's dispatch
 * rows differed. A row combines one execution per counter set (instance
 * cycling: successive instances of a kernel; application replay: the same
 * dispatch in successive runs), and every set also holds the counters all
 * sets share (GRBM_GUI_ACTIVE) and its own duration. Their relative
 * spread, (max - min) / mean over a row's executions, says how alike the
 * executions were: per kernel (the largest over its rows, per shared
 * quantity) and per metric (over the executions its inputs came from
 * only: a metric fed by one set is exact whatever the others did).
 * Nothing here is an error bar of a counter: it is a measured
 * disagreement between executions, reported beside the values.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "analyze/analyze.h"

/* (max - min) / mean of the shared quantity k over the executions of row
 * r in mask; NaN with fewer than two values or a mean that is not > 0. */
static double row_spread(const lm_executions *x, size_t r, int32_t k, uint64_t mask) {
  double lo = LM_INF, hi = -LM_INF, sum = 0;
  int n = 0;
  for (int32_t s = 0; s < x->n_sets && s < 64; s++) {
    if (!(mask & (1ULL << s)) || x->runs[r * (size_t)x->n_sets + (size_t)s] < 0) continue;
    double v = x->values[(r * (size_t)x->n_sets + (size_t)s) * (size_t)x->n_shared + (size_t)k];
    if (isnan(v)) continue;
    if (v < lo) lo = v;
    if (v > hi) hi = v;
    sum += v;
    n++;
  }
  if (n < 2 || !(sum > 0)) return LM_NAN;
  return (hi - lo) / (sum / n);
}

/* The largest spread of any shared quantity over the given rows. */
static double rows_spread(const lm_executions *x, const size_t *rows, size_t n_rows, uint64_t mask) {
  double worst = LM_NAN;
  for (size_t i = 0; i < n_rows; i++)
    for (int32_t k = 0; k < x->n_shared; k++) {
      double d = row_spread(x, rows[i], k, mask);
      if (!isnan(d) && (isnan(worst) || d > worst)) worst = d;
    }
  return worst;
}

static int popcount64(uint64_t m) {
  int n = 0;
  for (; m; m &= m - 1) n++;
  return n;
}

/* The provenance entry of catalog input in, or -1. Indexed inputs read
 * channel columns NAME[n], which all come from NAME's set. */
static long input_prov(const lm_executions *x, const lm_input *in) {
  char indexed[256];
  snprintf(indexed, sizeof indexed, "%s[%d]", in->column, in->index >= 0 ? (int)in->index : 0);
  for (size_t p = 0; p < x->n_prov; p++) {
    if (strcmp(x->prov_source[p], in->source) != 0) continue;
    if (strcmp(x->prov_column[p], in->column) == 0 ||
        (in->index != LM_INDEX_NONE && strcmp(x->prov_column[p], indexed) == 0))
      return (long)p;
  }
  return -1;
}

/* The sets the inputs under node come from (their union over the rows). */
static uint64_t node_sets(const lm_catalog *cat, int32_t node, int32_t norm, const uint64_t *input_mask,
                          int32_t *stamp, int32_t gen, int32_t *stack) {
  uint64_t mask = 0;
  int32_t top = 0;
  stack[top++] = node;
  while (top > 0) {
    int32_t i = stack[--top];
    if (i < 0 || i >= cat->n_nodes || stamp[i] == gen) continue;
    stamp[i] = gen;
    const lm_node *n = &cat->nodes[i];
    switch ((lm_op)n->op) {
    case LM_OP_INPUT:
      if (n->a >= 0 && n->a < cat->n_inputs) mask |= input_mask[n->a];
      break;
    case LM_OP_CONST:
    case LM_OP_SYSVAR: break;
    case LM_OP_NORM:
      if (cat->n_norms && n->a >= 0 && n->a < cat->n_norm_slots)
        stack[top++] = cat->norm_nodes[(size_t)n->a * (size_t)cat->n_norms + (size_t)norm];
      break;
    default:
      /* Each node is pushed at most once (stamped), so three per node fit. */
      if (n->a >= 0) stack[top++] = n->a;
      if (n->b >= 0) stack[top++] = n->b;
      if (n->c >= 0) stack[top++] = n->c;
      break;
    }
  }
  return mask;
}

lm_status lm_analyze_spread(lm_analysis *a, const size_t *rows, size_t n_rows, int32_t norm, lm_diag *diag) {
  const lm_workload *w = a->workload;
  const lm_executions *x = w->exec;
  const lm_catalog *cat = a->catalog;
  if (!x || x->n_rows != w->pmc->n_rows || x->n_sets < 1 || x->n_shared < 1) return LM_OK;
  lm_arena *arena = a->arena;
  lm_spread *sp = lm_arena_alloc(arena, sizeof *sp);
  if (!sp) goto nomem;
  memset(sp, 0, sizeof *sp);
  sp->n_sets = x->n_sets;
  sp->n_shared = x->n_shared;
  sp->shared = x->shared;
  uint64_t all = x->n_sets >= 64 ? ~0ULL : (1ULL << x->n_sets) - 1;

  /* Per kernel, in the order of the first selected row. */
  long kcol = lm_table_find(w->pmc, "Kernel_Name");
  const int32_t *kid = kcol >= 0 ? w->pmc->cols[kcol].text_ids : NULL;
  size_t n_names = w->pmc->n_strings;
  int32_t *slot = lm_arena_alloc(arena, (n_names + 1) * sizeof *slot);
  sp->kernels = lm_arena_alloc(arena, (n_names + 1) * sizeof *sp->kernels);
  if (!slot || !sp->kernels) goto nomem;
  for (size_t i = 0; i < n_names; i++) slot[i] = -1;
  for (size_t i = 0; kid && i < n_rows; i++) {
    size_t r = rows[i];
    int32_t k = kid[r];
    if (k < 0 || (size_t)k >= n_names) continue;
    if (slot[k] < 0) {
      lm_kernel_spread *ks = &sp->kernels[sp->n_kernels];
      memset(ks, 0, sizeof *ks);
      ks->kernel = w->pmc->strings[k];
      ks->max_spread = LM_NAN;
      ks->spread = lm_arena_alloc(arena, (size_t)x->n_shared * sizeof *ks->spread);
      if (!ks->spread) goto nomem;
      for (int32_t q = 0; q < x->n_shared; q++) ks->spread[q] = LM_NAN;
      slot[k] = (int32_t)sp->n_kernels++;
    }
    lm_kernel_spread *ks = &sp->kernels[slot[k]];
    int counted = 0, over = 0;
    for (int32_t q = 0; q < x->n_shared; q++) {
      double d = row_spread(x, r, q, all);
      if (isnan(d)) continue;
      counted = 1;
      over |= d > LM_SPREAD_THRESHOLD;
      if (isnan(ks->spread[q]) || d > ks->spread[q]) ks->spread[q] = d;
      if (isnan(ks->max_spread) || d > ks->max_spread) ks->max_spread = d;
    }
    ks->rows += (size_t)counted;
    ks->rows_over += (size_t)over;
  }

  /* Per metric: the executions its inputs came from. */
  uint64_t *input_mask = lm_arena_alloc(arena, ((size_t)cat->n_inputs + 1) * sizeof *input_mask);
  int32_t *stamp = lm_arena_alloc(arena, ((size_t)cat->n_nodes + 1) * sizeof *stamp);
  int32_t *stack = lm_arena_alloc(arena, (3 * (size_t)cat->n_nodes + 1) * sizeof *stack);
  if (!input_mask || !stamp || !stack) goto nomem;
  memset(stamp, 0, ((size_t)cat->n_nodes + 1) * sizeof *stamp);
  for (int32_t i = 0; i < cat->n_inputs; i++) {
    input_mask[i] = 0;
    /* A row's timestamps are the mean over all its executions. */
    const lm_input *in = &cat->inputs[i];
    if (!strcmp(in->source, "pmc_perf") &&
        (!strcmp(in->column, "Start_Timestamp") || !strcmp(in->column, "End_Timestamp"))) {
      input_mask[i] = all;
      continue;
    }
    long p = input_prov(x, &cat->inputs[i]);
    for (size_t j = 0; p >= 0 && j < n_rows; j++) {
      int16_t s = x->prov_sets[p][rows[j]];
      if (s >= 0 && s < 64) input_mask[i] |= 1ULL << s;
    }
  }
  /* Spreads of the masks met so far (metrics share a few combinations). */
  uint64_t memo_mask[256];
  double memo_value[256];
  int n_memo = 0;
  int32_t gen = 0;
  for (int32_t ti = 0; ti < a->n_tables; ti++) {
    lm_rtable *t = &a->tables[ti];
    if (t->kind != LM_TABLE_METRIC || !t->shown || !t->row_defs || t->n_rows <= 0) continue;
    t->row_spread = lm_arena_alloc(arena, (size_t)t->n_rows * sizeof *t->row_spread);
    if (!t->row_spread) goto nomem;
    for (int32_t r = 0; r < t->n_rows; r++) {
      t->row_spread[r] = LM_NAN;
      const lm_rowdef *rd = &cat->rows[t->row_defs[r]];
      const lm_tabledef *td = &cat->tables[t->def];
      uint64_t mask = 0;
      for (int32_t ci = 0; ci < td->n_cols; ci++) {
        const lm_celldef *cell = &cat->cells[rd->first_cell + ci];
        if (cat->cols[td->first_col + ci].role != LM_COL_VALUE || cell->node < 0) continue;
        mask |= node_sets(cat, cell->node, norm, input_mask, stamp, ++gen, stack);
      }
      if (popcount64(mask) < 2) continue;
      int m = 0;
      while (m < n_memo && memo_mask[m] != mask) m++;
      double d;
      if (m < n_memo) {
        d = memo_value[m];
      } else {
        d = rows_spread(x, rows, n_rows, mask);
        if (n_memo < 256) {
          memo_mask[n_memo] = mask;
          memo_value[n_memo++] = d;
        }
      }
      t->row_spread[r] = d;
      if (d > LM_SPREAD_THRESHOLD) sp->n_flagged++;
    }
  }
  a->spread = sp;
  return LM_OK;
nomem:
  return lm_oom(diag, NULL);
}

void lm_analyze_clock_sources(const lm_workload *w, const size_t *rows, size_t n_rows) {
  if (!w->row_clock_source) return;
  /* A few distinct sources at most: count them in order of appearance. */
  const char *names[8];
  size_t counts[8], n_names = 0, unknown = 0;
  for (size_t i = 0; i < n_rows; i++) {
    const char *src = w->row_clock_source[rows[i]];
    if (!src) {
      unknown++;
      continue;
    }
    size_t k = 0;
    while (k < n_names && strcmp(names[k], src) != 0) k++;
    if (k == n_names) {
      if (n_names == 8) continue;
      names[n_names] = src;
      counts[n_names++] = 0;
    }
    counts[k]++;
  }
  char text[1024];
  size_t at = 0;
  for (size_t k = 0; k < n_names && at < sizeof text - 200; k++) {
    int estimate = strcmp(names[k], "estimate") == 0;
    at += (size_t)snprintf(text + at, sizeof text - at, "%s%zu %s %s", k ? ", " : "", counts[k],
                           estimate ? "estimated from" : "sampled by",
                           estimate ? "GRBM_GUI_ACTIVE / duration" : names[k]);
  }
  if (unknown && at < sizeof text - 100)
    snprintf(text + at, sizeof text - at, "%s%zu without a clock", at ? ", " : "", unknown);
  lm_log(LM_LOG_INFO, "--clock measured: clocks of the dispatches: %s", text);
}
