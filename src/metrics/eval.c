/*
 * eval.c - the bulk evaluator: runs a catalog's graph over all selected
 * dispatches of a workload at once.
 *
 * Only the nodes that the requested tables need are run (marked backwards
 * from their cells; $denom marks just the chosen normalization). Nodes are
 * in topological order by construction. Evaluation goes by stage: scalars
 * of stage s (system-info constants, results of aggregates), then one pass
 * over the dispatches, in chunks that stay in cache, computing every
 * per-dispatch node of stage s and feeding the aggregates that reduce them
 * (stage s + 1). Per-channel nodes of template rows are run once per
 * channel inside the chunk loop. From 4,096 selected dispatches on, the
 * range is split in two halves (two threads where there are two
 * processors), each folded in row order (fold.c) and merged afterwards, so
 * results depend on the row count only. Order statistics (median,
 * quantiles, standard deviation) keep their operand's values, each worker
 * its rows' in the narrowest exact form (one value, 16- or 32-bit
 * integers, doubles: kept_part), so that constant and small-integer
 * operands take a fraction of the memory that has to be faulted in; above
 * a memory budget medians and quantiles are found by extra passes instead
 * (eval_order.c, ostat.c), which compute only what their operands read.
 *
 * Input columns that the workload left in its file (lm_column.deferred)
 * are read by each worker for a block of selected rows at a time
 * (lm_table_fetch) into block buffers that the chunks then copy from:
 * memory is then set by the block size and the kept operands, not by the
 * file, and the values and their order of folding are those of a loaded
 * column.
 *
 * Within a chunk, an input whose rows all hold one value, and every node
 * whose per-dispatch operands all do, is computed for one row and read as
 * a scalar; folding such a chunk takes n copies of the value at once
 * (lm_fold_add_same, the same bits). Aggregates that fold one operand the
 * same way share one fold. Input chunks are read where they lie.
 *
 * Missing data is decided before any arithmetic: a node is missing when
 * an input column or table is absent from the workload, and so is every
 * node computed from it (the reference tool shows such cells blank).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "metrics/eval_internal.h"

#define CHUNK 256
#define BLOCK_ROWS 2048
#define MAX_CHANNELS 4096
#define PARALLEL_MIN_ROWS 4096

/* The nodes whose values `node` reads, in ops[0..3) (-1 where none); for
 * $denom, the chosen normalization only. Leaves read none. */
void lm_eval_operands(const lm_catalog *cat, int32_t node, int32_t norm, int32_t ops[3]) {
  const lm_node *n = &cat->nodes[node];
  ops[0] = ops[1] = ops[2] = -1;
  switch ((lm_op)n->op) {
  case LM_OP_CONST: case LM_OP_INPUT: case LM_OP_SYSVAR: return;
  case LM_OP_NORM: ops[0] = cat->norm_nodes[n->a * cat->n_norms + norm]; return;
  case LM_OP_NEG: case LM_OP_NOT: case LM_OP_ROUND: case LM_OP_TO_INT: ops[0] = n->a; return;
  default:
    ops[0] = n->a;
    if (!LM_OP_IS_AGGREGATE(n->op)) ops[1] = n->b;
    if (n->op == LM_OP_WHERE) ops[2] = n->c;
    return;
  }
}

void lm_eval_free(lm_eval *ev) {
  if (!ev) return;
  lm_free(ev->slot);
  lm_free(ev->vals);
  lm_free(ev->miss);
  lm_free(ev->table_channels);
  lm_free(ev);
}

int32_t lm_eval_channels(const lm_eval *ev, int32_t table) {
  return ev->table_channels[table];
}

int lm_eval_node(const lm_eval *ev, int32_t node, int32_t ch, double *value) {
  if (node < 0 || node >= ev->cat->n_nodes || ev->slot[node] < 0) return 0;
  if (ch < 0 || ch >= ev->n_ch) ch = 0;
  int32_t s = slot_of(ev, node, ch);
  if (ev->miss[s]) return 0;
  double v = ev->vals[s];
  if (isnan(v)) return 0;
  *value = v;
  return 1;
}

/* ------------------------------------------------------------- kernels */

typedef struct operand {
  const double *p; /* NULL for a scalar */
  double s;
} operand;

/* A per-dispatch operand whose chunk holds one value is read as a scalar:
 * the expressions below give the same bits either way. */
static operand get_operand(const run *r, const worker *w, int32_t node, int32_t ch) {
  operand o = {NULL, 0};
  const lm_node *n = &r->cat->nodes[node];
  if (n->vector) {
    const double *buf = w->src[r->buf_index[node]];
    if (w->uni[r->buf_index[node]]) o.s = buf[0];
    else o.p = buf;
  } else {
    o.s = r->ev->vals[slot_of(r->ev, node, ch)];
  }
  return o;
}

/* Whether the len values at p have one bit pattern: the first few are
 * looked at alone (values that differ mostly differ there), the rest in a
 * loop without an exit, which vectorizes. */
static int same_bits(const double *p, size_t len) {
  uint64_t first, diff = 0;
  memcpy(&first, p, sizeof first);
  for (size_t i = 1; i < len && i < 4; i++) {
    uint64_t u;
    memcpy(&u, p + i, sizeof u);
    if (u != first) return 0;
  }
  for (size_t i = 4; i < len; i++) {
    uint64_t u;
    memcpy(&u, p + i, sizeof u);
    diff |= u ^ first;
  }
  return diff == 0;
}

/* Input node `node` for rows [first, first + len) of the selection: its
 * values are read where they are (w->src) when they lie in a row, else
 * gathered into its buffer; returns 1 when they all hold one value, which
 * is then written to the buffer's first slot only. */
static int load_input(run *r, worker *w, int32_t node, int32_t ch, size_t first, size_t len) {
  const lm_node *n = &r->cat->nodes[node];
  double *out = w->bufs + (size_t)r->buf_index[node] * r->chunk_stride;
  const double *src = NULL;
  w->src[r->buf_index[node]] = out;
  if (r->fetch_index[node] >= 0 && r->def_col[node][n->chan ? ch : 0] >= 0) {
    src = w->fetched + (size_t)(r->fetch_index[node] + (n->chan ? ch : 0)) * r->fetch_stride +
          (first - w->block_first);
  } else {
    const double *col = r->cols[node][n->chan ? ch : 0];
    size_t col_rows = r->col_rows[node][n->chan ? ch : 0];
    const size_t *rows = r->req->rows + first;
    if (r->contiguous && rows[len - 1] < col_rows) {
      src = col + rows[0];
    } else {
      for (size_t i = 0; i < len; i++) out[i] = rows[i] < col_rows ? col[rows[i]] : LM_NAN;
      return same_bits(out, len);
    }
  }
  if (same_bits(src, len)) {
    out[0] = src[0];
    return 1;
  }
  w->src[r->buf_index[node]] = src;
  return 0;
}

#define LOOP2(expr)                                                    \
  do {                                                                 \
    if (A.p && B.p)                                                    \
      for (size_t i = 0; i < len; i++) { double a = A.p[i], b = B.p[i]; out[i] = (expr); } \
    else if (A.p)                                                      \
      for (size_t i = 0; i < len; i++) { double a = A.p[i], b = B.s; out[i] = (expr); } \
    else if (B.p)                                                      \
      for (size_t i = 0; i < len; i++) { double a = A.s, b = B.p[i]; out[i] = (expr); } \
    else                                                               \
      for (size_t i = 0; i < len; i++) { double a = A.s, b = B.s; out[i] = (expr); } \
  } while (0)

#define LOOP1(expr)                                                    \
  do {                                                                 \
    if (A.p)                                                           \
      for (size_t i = 0; i < len; i++) { double a = A.p[i]; out[i] = (expr); } \
    else                                                               \
      for (size_t i = 0; i < len; i++) { double a = A.s; out[i] = (expr); } \
  } while (0)

static inline double vmin(double a, double b) {
  return isnan(a) || isnan(b) ? LM_NAN : (b < a ? b : a);
}
static inline double vmax(double a, double b) {
  return isnan(a) || isnan(b) ? LM_NAN : (b > a ? b : a);
}

/* Compute per-dispatch node `node` (not an input) for the len rows of the
 * chunk, channel ch, into its buffer. Returns 1 if it poisoned. */
static int compute_plain(run *r, worker *w, int32_t node, int32_t ch, size_t len) {
  const lm_node *n = &r->cat->nodes[node];
  double *out = w->bufs + (size_t)r->buf_index[node] * r->chunk_stride;
  switch ((lm_op)n->op) {
  case LM_OP_NORM: {
    int32_t alt = r->cat->norm_nodes[n->a * r->cat->n_norms + r->req->norm];
    operand A = get_operand(r, w, alt, ch);
    if (A.p) memcpy(out, A.p, len * sizeof *out);
    else for (size_t i = 0; i < len; i++) out[i] = A.s;
    return 0;
  }
  default: break;
  }
  operand A = get_operand(r, w, n->a, ch);
  operand B = {NULL, 0}, C = {NULL, 0};
  if (n->b >= 0 && n->op != LM_OP_ROUND && n->op != LM_OP_TO_INT && n->op != LM_OP_NEG &&
      n->op != LM_OP_NOT)
    B = get_operand(r, w, n->b, ch);
  switch ((lm_op)n->op) {
  case LM_OP_NEG: LOOP1(-a); return 0;
  case LM_OP_NOT: LOOP1((double)(a == 0)); return 0;
  case LM_OP_ADD: LOOP2(a + b); return 0;
  case LM_OP_SUB: LOOP2(a - b); return 0;
  case LM_OP_MUL: LOOP2(a * b); return 0;
  case LM_OP_DIV: LOOP2(a / b); return 0;
  case LM_OP_MOD: LOOP2(lm_py_mod(a, b)); return 0;
  case LM_OP_POW: LOOP2(pow(a, b)); return 0;
  case LM_OP_EQ: LOOP2((double)(a == b)); return 0;
  case LM_OP_NE: LOOP2((double)(a != b)); return 0;
  case LM_OP_LT: LOOP2((double)(a < b)); return 0;
  case LM_OP_LE: LOOP2((double)(a <= b)); return 0;
  case LM_OP_GT: LOOP2((double)(a > b)); return 0;
  case LM_OP_GE: LOOP2((double)(a >= b)); return 0;
  case LM_OP_AND: LOOP2((double)(a != 0 && b != 0)); return 0;
  case LM_OP_OR: LOOP2((double)(a != 0 || b != 0)); return 0;
  case LM_OP_MIN2: LOOP2(vmin(a, b)); return 0;
  case LM_OP_MAX2: LOOP2(vmax(a, b)); return 0;
  case LM_OP_ROUND: {
    int digits = (int)n->k;
    LOOP1(lm_py_round(a, digits));
    return 0;
  }
  case LM_OP_TO_INT: {
    /* A column of counts converts to integers; a fractional or infinite
     * value cannot (the reference tool then shows the cell blank). */
    int bad = 0;
    for (size_t i = 0; i < len; i++) {
      double a = A.p ? A.p[i] : A.s;
      if (isinf(a) || (isfinite(a) && a != trunc(a))) bad = 1;
      out[i] = isnan(a) ? lm_na_value() : trunc(a) + 0.0;
    }
    return bad;
  }
  case LM_OP_WHERE: {
    C = get_operand(r, w, n->c, ch);
    for (size_t i = 0; i < len; i++) {
      double cond = B.p ? B.p[i] : B.s;
      out[i] = cond != 0 ? (A.p ? A.p[i] : A.s) : (C.p ? C.p[i] : C.s);
    }
    return 0;
  }
  default:
    for (size_t i = 0; i < len; i++) out[i] = LM_NAN;
    return 0;
  }
}

/* In masked node `node`, mark "not available" the rows where an operand's
 * value is (nullable arithmetic), in out[0, len). */
static void mask_na(run *r, worker *w, int32_t node, const int32_t ops[3], int32_t ch, double *out,
                    size_t len) {
  const lm_node *n = &r->cat->nodes[node];
  if (n->op == LM_OP_WHERE) {
    /* `x if c else None` on nullable values gives "not available". */
    for (int o = 0; o < 3; o += 2) {
      const lm_node *branch = &r->cat->nodes[ops[o]];
      if (branch->op != LM_OP_CONST || !isnan(branch->k)) continue;
      operand C = get_operand(r, w, n->b, ch);
      for (size_t i = 0; i < len; i++) {
        double cond = C.p ? C.p[i] : C.s;
        if ((cond != 0) == (o == 0)) out[i] = lm_na_value();
      }
    }
  }
  for (int o = 0; o < 3; o++) {
    if (ops[o] < 0 || !r->cat->nodes[ops[o]].masked) continue;
    const double *v = w->src[r->buf_index[ops[o]]];
    size_t step = w->uni[r->buf_index[ops[o]]] ? 0 : 1;
    for (size_t i = 0; i < len; i++)
      if (lm_is_na(v[i * step])) out[i] = lm_na_value();
  }
}

/* Compute a per-dispatch node for rows [first, first + len) of the
 * selection, channel ch, into its buffer, and note whether the chunk's
 * values are all one (then only the first slot need be read). Returns 1
 * if it poisoned. */
static int compute_vector(run *r, worker *w, int32_t node, int32_t ch, size_t first,
                          size_t len) {
  const lm_node *n = &r->cat->nodes[node];
  int32_t buf = r->buf_index[node];
  if (n->op == LM_OP_INPUT) {
    w->uni[buf] = (uint8_t)load_input(r, w, node, ch, first, len);
    return 0;
  }
  /* When every per-dispatch operand holds one value in this chunk, so
   * does the result: compute it for the first row only. */
  int32_t ops[3];
  lm_eval_operands(r->cat, node, r->req->norm, ops);
  int uni = 1;
  for (int o = 0; o < 3 && uni; o++)
    if (ops[o] >= 0 && r->cat->nodes[ops[o]].vector && !w->uni[r->buf_index[ops[o]]]) uni = 0;
  if (uni) len = 1;
  int bad = compute_plain(r, w, node, ch, len);
  double *out = w->bufs + (size_t)buf * r->chunk_stride;
  w->src[buf] = out;
  if (n->masked && n->op != LM_OP_TO_INT) mask_na(r, w, node, ops, ch, out, len);
  /* Values that came out all one (0 / x, a ratio of constants) make what
   * reads them cheaper too. */
  w->uni[buf] = (uint8_t)(uni || same_bits(out, len));
  return bad;
}

/* Run the fold left waiting, alone. */
static void flush_fold(worker *w, size_t len) {
  if (w->pend) lm_fold_add(w->pend, w->pend_v, len, NULL, w->pend_masked);
  w->pend = NULL;
}

/* The narrowest form that holds x with its bits: KEPT_I16, KEPT_I32 or
 * KEPT_F64 (fractions, -0.0, NaN, large values). */
static int form_of(double x) {
  if (x >= -32768.0 && x <= 32767.0) {
    int16_t i = (int16_t)x;
    if ((double)i == x && (i || !signbit(x))) return KEPT_I16;
  } else if (x >= -2147483648.0 && x <= 2147483647.0) {
    int32_t i = (int32_t)x;
    if ((double)i == x) return KEPT_I32;
  }
  return KEPT_F64;
}

static const size_t form_bytes[] = {0, 0, sizeof(int16_t), sizeof(int32_t), sizeof(double)};

/* Row i (of the worker's range) of part s, which holds it in an array. */
static double array_value(const kept_part *s, size_t i) {
  if (s->mode == KEPT_I16) return ((const int16_t *)s->at)[i];
  if (s->mode == KEPT_I32) return ((const int32_t *)s->at)[i];
  return ((const double *)s->at)[i];
}

/* Change part s of worker w to form `mode` (wider than its own, or an
 * array form from KEPT_SAME), carrying the rows it holds. */
static void widen(worker *w, kept_part *s, int mode) {
  size_t at = (w->region_used + 63) & ~(size_t)63;
  void *to = w->region + at;
  w->region_used = at + (w->end - w->begin) * form_bytes[mode];
  double one;
  memcpy(&one, &s->bits, sizeof one);
  for (size_t i = s->from - w->begin; i < s->upto - w->begin; i++) {
    double x = s->mode == KEPT_SAME ? one : array_value(s, i);
    if (mode == KEPT_I16) ((int16_t *)to)[i] = (int16_t)x;
    else if (mode == KEPT_I32) ((int32_t *)to)[i] = (int32_t)x;
    else ((double *)to)[i] = x;
  }
  s->at = to;
  s->mode = (uint8_t)mode;
}

/* Keep rows [first, first + len) of an operand (v, or v[0] for all of them
 * when uni) in the worker's part of it, widening the part as needed. */
static void keep_values(worker *w, size_t ki, const double *v, int uni, size_t first, size_t len) {
  kept_part *s = &w->kept[ki];
  size_t m = uni ? 1 : len;
  if (s->mode == KEPT_NONE) {
    memcpy(&s->bits, v, sizeof s->bits);
    s->mode = KEPT_SAME;
    s->from = s->upto = first;
  }
  if (s->mode == KEPT_SAME) {
    size_t same = first == s->upto;
    for (size_t i = 0; same && i < m; i++) {
      uint64_t b;
      memcpy(&b, &v[i], sizeof b);
      same = b == s->bits;
    }
    if (same) {
      s->upto = first + len;
      return;
    }
  }
  int need = s->mode >= KEPT_I16 ? s->mode : KEPT_I16;
  if (s->mode == KEPT_SAME) {
    double one;
    memcpy(&one, &s->bits, sizeof one);
    int f = form_of(one);
    if (f > need) need = f;
  }
  for (size_t i = 0; i < m && need < KEPT_F64; i++) {
    int f = form_of(v[i]);
    if (f > need) need = f;
  }
  if (need != s->mode) widen(w, s, need);
  if (first + len > s->upto) s->upto = first + len;
  size_t o = first - w->begin;
  if (s->mode == KEPT_I16) {
    int16_t *d = (int16_t *)s->at + o;
    for (size_t i = 0; i < len; i++) d[i] = (int16_t)v[uni ? 0 : i];
  } else if (s->mode == KEPT_I32) {
    int32_t *d = (int32_t *)s->at + o;
    for (size_t i = 0; i < len; i++) d[i] = (int32_t)v[uni ? 0 : i];
  } else if (uni) {
    for (size_t i = 0; i < len; i++) ((double *)s->at)[o + i] = v[0];
  } else {
    memcpy((double *)s->at + o, v, len * sizeof *v);
  }
}

void lm_eval_kept_values(const worker *workers, int n_workers, size_t k, double *out) {
  for (int wi = 0; wi < n_workers; wi++) {
    const worker *w = &workers[wi];
    const kept_part *s = &w->kept[k];
    double *o = out + w->begin;
    size_t n = w->end - w->begin;
    if (s->mode == KEPT_I16) {
      for (size_t i = 0; i < n; i++) o[i] = ((const int16_t *)s->at)[i];
    } else if (s->mode == KEPT_I32) {
      for (size_t i = 0; i < n; i++) o[i] = ((const int32_t *)s->at)[i];
    } else if (s->mode == KEPT_F64) {
      memcpy(o, s->at, n * sizeof *o);
    } else {
      double one;
      memcpy(&one, &s->bits, sizeof one);
      for (size_t i = 0; i < n; i++) o[i] = 0;
      if (s->mode == KEPT_SAME)
        for (size_t i = s->from - w->begin; i < s->upto - w->begin; i++) o[i] = one;
    }
  }
}

/* Feed aggregate k (channel ch) with the chunk. Unweighted folds of
 * varying values go two by two (lm_fold_add2): a fold may wait for the
 * next one, until flush_fold; each keeps its own order of additions. */
static void accumulate(run *r, worker *w, int32_t k, int32_t ch, size_t first, size_t len) {
  int32_t node = r->agg[k];
  const lm_node *n = &r->cat->nodes[node];
  const double *v = w->src[r->buf_index[n->a]];
  int uni = w->uni[r->buf_index[n->a]];
  if (r->keep_index[n->a] >= 0) {
    size_t ki = (size_t)r->keep_index[n->a] * (size_t)r->ev->n_ch + (size_t)ch;
    if (r->ostat && r->bounded[r->keep_index[n->a]]) {
      if (uni) {
        /* the statistics read every row's value (v is the buffer) */
        double *own = w->bufs + (size_t)r->buf_index[n->a] * r->chunk_stride;
        for (size_t i = 1; i < len; i++) own[i] = own[0];
      }
      if (r->feeds[k]) lm_ostat_add(&r->ostat[ki], w->id, v, len);
    } else if (!r->opass && r->keeper[k]) {
      keep_values(w, ki, v, uni, first, len);
    }
    if (n->op != LM_OP_AVG && n->op != LM_OP_MIN && n->op != LM_OP_MAX &&
        n->op != LM_OP_SUM && n->op != LM_OP_COUNT)
      return;
  }
  if (r->opass || r->fold_of[k] != k) return;
  lm_fold *a = &w->accs[r->acc_first[k] + (size_t)ch];
  const double *weights = n->op == LM_OP_AVG && r->req->weights ? r->req->weights + first : NULL;
  int masked = r->cat->nodes[n->a].masked;
  if (uni) {
    lm_fold_add_same(a, v[0], len, weights, masked);
  } else if (weights) {
    lm_fold_add(a, v, len, weights, masked);
  } else if (w->pend && w->pend_masked == masked) {
    lm_fold_add2(w->pend, w->pend_v, a, v, len, masked);
    w->pend = NULL;
  } else {
    flush_fold(w, len);
    w->pend = a;
    w->pend_v = v;
    w->pend_masked = masked;
  }
}

/* Read the deferred columns of this pass for selected rows [first, first
 * + len) into the worker's block buffers, one fetch per table. */
static lm_status fetch_block(run *r, worker *w, size_t first, size_t len) {
  const lm_catalog *cat = r->cat;
  lm_status st = LM_OK;
  long *cols = lm_malloc((size_t)r->n_fetch * sizeof *cols);
  double **outs = lm_malloc((size_t)r->n_fetch * sizeof *outs);
  uint8_t *done = lm_calloc((size_t)cat->n_nodes, 1);
  if (!cols || !outs || !done) {
    st = lm_diag_set(&w->diag, LM_ENOMEM, NULL, 0, 0, NULL, "out of memory");
    goto out;
  }
  w->block_first = first;
  for (int32_t node = 0; node < cat->n_nodes && st == LM_OK; node++) {
    if (r->fetch_index[node] < 0 || done[node] || (r->opass && !r->onode[node])) continue;
    const lm_table *t = r->def_table[node];
    size_t n = 0;
    /* Every deferred input of this pass from the same table. */
    for (int32_t other = node; other < cat->n_nodes; other++) {
      if (r->fetch_index[other] < 0 || done[other] || r->def_table[other] != t ||
          (r->opass && !r->onode[other]))
        continue;
      done[other] = 1;
      int32_t chans = cat->nodes[other].chan ? r->ev->n_ch : 1;
      for (int32_t ch = 0; ch < chans; ch++) {
        if (r->def_col[other][ch] < 0) continue;
        cols[n] = r->def_col[other][ch];
        outs[n++] = w->fetched + (size_t)(r->fetch_index[other] + ch) * r->fetch_stride;
      }
    }
    if (n) st = lm_table_fetch(t, cols, n, r->req->rows + first, len, outs, &w->diag);
  }
out:
  lm_free(cols);
  lm_free(outs);
  lm_free(done);
  return st;
}

void *lm_eval_work(void *arg) {
  worker *w = arg;
  run *r = w->r;
  const lm_eval *ev = r->ev;
  int32_t n_ch = ev->n_ch;
  size_t block_end = w->begin;
  for (size_t first = w->begin, len = 0; first < w->end; first += len) {
    len = w->end - first < CHUNK ? w->end - first : CHUNK;
    if (r->n_fetch) {
      /* Deferred columns come a block at a time; a chunk stays in one. */
      if (first >= block_end) {
        size_t n = w->end - first < r->block_rows ? w->end - first : r->block_rows;
        uint64_t t0 = lm_phase_begin();
        w->status = fetch_block(r, w, first, n);
        /* (a part of "evaluate", summed over the threads that read) */
        lm_phase_end("block reads, thread time", t0);
        if (w->status != LM_OK) return NULL;
        block_end = first + n;
      }
      if (len > block_end - first) len = block_end - first;
    }
    for (int32_t i = 0; i < r->n_vec_inv; i++) {
      int32_t node = r->vec_inv[i];
      if (ev->miss[slot_of(ev, node, 0)] || (r->opass && !r->onode[node])) continue;
      if (compute_vector(r, w, node, 0, first, len)) w->poison[slot_of(ev, node, 0)] = 1;
    }
    for (int32_t k = 0; k < r->n_agg; k++) {
      const lm_node *n = &r->cat->nodes[r->agg[k]];
      if (!r->cat->nodes[n->a].chan && !ev->miss[slot_of(ev, n->a, 0)])
        accumulate(r, w, k, 0, first, len);
    }
    flush_fold(w, len);
    if (!r->n_vec_ch) continue;
    for (int32_t ch = 0; ch < n_ch; ch++) {
      for (int32_t i = 0; i < r->n_vec_ch; i++) {
        int32_t node = r->vec_ch[i];
        if (ev->miss[slot_of(ev, node, ch)] || (r->opass && !r->onode[node])) continue;
        if (compute_vector(r, w, node, ch, first, len)) w->poison[slot_of(ev, node, ch)] = 1;
      }
      for (int32_t k = 0; k < r->n_agg; k++) {
        const lm_node *n = &r->cat->nodes[r->agg[k]];
        if (r->cat->nodes[n->a].chan && !ev->miss[slot_of(ev, n->a, ch)])
          accumulate(r, w, k, ch, first, len);
      }
      flush_fold(w, len);
    }
  }
  return NULL;
}

/* --------------------------------------------------------- order stats */

/* ----------------------------------------------------------------- run */

static lm_status resolve_inputs(run *r, lm_diag *diag) {
  const lm_catalog *cat = r->cat;
  lm_eval *ev = r->ev;
  for (int32_t node = 0; node < cat->n_nodes; node++) {
    if (!r->needed[node] || cat->nodes[node].op != LM_OP_INPUT) continue;
    const lm_node *n = &cat->nodes[node];
    const lm_input *in = &cat->inputs[n->a];
    int32_t n_slots = n->chan ? ev->n_ch : 1;
    r->cols[node] = lm_calloc((size_t)n_slots, sizeof(double *));
    r->col_rows[node] = lm_calloc((size_t)n_slots, sizeof(size_t));
    r->def_col[node] = lm_malloc((size_t)n_slots * sizeof(long));
    if (!r->cols[node] || !r->col_rows[node] || !r->def_col[node])
      return lm_diag_set(diag, LM_ENOMEM, NULL, 0, 0, NULL, "out of memory");
    const lm_table *t = lm_workload_source(r->req->workload, in->source);
    for (int32_t ch = 0; ch < n_slots; ch++) {
      int32_t s = slot_of(ev, node, ch);
      r->def_col[node][ch] = -1;
      ev->miss[s] = 1;
      if (!t) continue;
      char name[512];
      if (in->index == LM_INDEX_NONE) snprintf(name, sizeof name, "%s", in->column);
      else snprintf(name, sizeof name, "%s[%d]", in->column,
                    (int)(in->index == LM_INDEX_CHANNEL ? ch : in->index));
      long c = lm_table_find(t, name);
      if (c < 0) continue;
      const lm_column *col = &t->cols[c];
      if (col->n_text > 0 && col->n_text + col->n_missing >= t->n_rows && col->text_ids)
        continue; /* a text column such as Kernel_Name: not a number */
      if (col->n_text > 0)
        return lm_diag_set(diag, LM_EDATA, t->path, col->first_text_line, c + 1, name,
                           "'%s' is not a number (a counter column must hold numbers)",
                           col->first_text ? col->first_text : "");
      if (lm_table_deferred(t, (size_t)c)) {
        r->def_table[node] = t;
        r->def_col[node][ch] = c;
      }
      r->cols[node][ch] = col->values;
      r->col_rows[node][ch] = t->n_rows;
      ev->miss[s] = 0;
    }
  }
  return LM_OK;
}

/* Evaluate a stage-0 scalar node tree directly (for channel counts). */
static int scalar_tree(const run *r, int32_t node, double *out) {
  const lm_catalog *cat = r->cat;
  const lm_node *n = &cat->nodes[node];
  switch ((lm_op)n->op) {
  case LM_OP_CONST: *out = n->k; return 1;
  case LM_OP_SYSVAR: {
    long i = lm_sysinfo_find(&r->req->workload->sysinfo, cat->sysvars[n->a]);
    if (i < 0) return 0;
    *out = r->req->workload->sysinfo.values[i];
    return !isnan(*out);
  }
  default: break;
  }
  if (n->vector || n->stage > 0 || LM_OP_IS_AGGREGATE(n->op) || n->op == LM_OP_INPUT ||
      n->op == LM_OP_NORM || n->op == LM_OP_CONCAT)
    return 0;
  double a = 0, b = 0, c = 0;
  if (n->a >= 0 && !scalar_tree(r, n->a, &a)) return 0;
  if (n->op != LM_OP_ROUND && n->op != LM_OP_TO_INT && n->b >= 0 && !scalar_tree(r, n->b, &b))
    return 0;
  if (n->op == LM_OP_WHERE && !scalar_tree(r, n->c, &c)) return 0;
  *out = lm_scalar_op(n->op, a, b, c, n->k);
  return 1;
}

static void mark(run *r, int32_t node) {
  if (node >= 0) r->needed[node] = 1;
}

static lm_status vector_pass(run *r, lm_diag *diag) {
  const lm_catalog *cat = r->cat;
  lm_eval *ev = r->ev;
  lm_status status = LM_OK;
  size_t n_rows = r->req->n_rows;
  int32_t n_ch = ev->n_ch;
  worker workers[2];
  int n_workers = 0;
  memset(workers, 0, sizeof workers);
  r->n_vec_inv = r->n_vec_ch = r->n_agg = r->n_bufs = r->n_keep = 0;
  /* This pass computes the per-dispatch nodes of its stage and, again, the
   * earlier-stage per-dispatch values they read (buffers do not outlive a
   * pass). Walk down from the last node so consumers mark operands first. */
  uint8_t *in_pass = lm_calloc((size_t)cat->n_nodes + 1, 1);
  if (!in_pass) return lm_diag_set(diag, LM_ENOMEM, NULL, 0, 0, NULL, "out of memory");
  for (int32_t node = cat->n_nodes - 1; node >= 0; node--) {
    const lm_node *n = &cat->nodes[node];
    if (!r->needed[node] || !n->vector) continue;
    if (n->stage == r->stage) in_pass[node] = 1;
    if (!in_pass[node]) continue;
    int32_t ops[3];
    lm_eval_operands(cat, node, r->req->norm, ops);
    for (int o = 0; o < 3; o++)
      if (ops[o] >= 0 && cat->nodes[ops[o]].vector) in_pass[ops[o]] = 1;
  }
  r->n_fetch = 0;
  for (int32_t node = 0; node < cat->n_nodes; node++) r->fetch_index[node] = -1;
  for (int32_t node = 0; node < cat->n_nodes; node++) {
    if (!r->needed[node]) continue;
    const lm_node *n = &cat->nodes[node];
    r->buf_index[node] = -1;
    r->keep_index[node] = -1;
    r->fetch_index[node] = -1;
    if (in_pass[node] && n->op == LM_OP_INPUT && r->def_table[node]) {
      r->fetch_index[node] = r->n_fetch;
      r->n_fetch += n->chan ? n_ch : 1;
    }
    if (in_pass[node]) {
      r->buf_index[node] = r->n_bufs++;
      if (n->chan) r->vec_ch[r->n_vec_ch++] = node;
      else r->vec_inv[r->n_vec_inv++] = node;
    }
  }
  for (int32_t node = 0; node < cat->n_nodes; node++) {
    if (!r->needed[node]) continue;
    const lm_node *n = &cat->nodes[node];
    if (!LM_OP_IS_AGGREGATE(n->op) || cat->nodes[n->a].stage != r->stage) continue;
    r->agg[r->n_agg++] = node;
    if ((n->op == LM_OP_MEDIAN || n->op == LM_OP_QUANTILE || n->op == LM_OP_STD) &&
        r->keep_index[n->a] < 0)
      r->keep_index[n->a] = r->n_keep++;
  }
  /* One fold per operand (and weighting), one copy of its kept values:
   * per operand node, its first aggregate and its first unweighted and
   * weighted folds. */
  int32_t *firsts = lm_malloc(3 * ((size_t)cat->n_nodes + 1) * sizeof *firsts);
  if (!firsts) {
    lm_free(in_pass);
    return lm_diag_set(diag, LM_ENOMEM, NULL, 0, 0, NULL, "out of memory");
  }
  memset(firsts, 0xFF, 3 * ((size_t)cat->n_nodes + 1) * sizeof *firsts); /* all -1 */
  for (int32_t k = 0; k < r->n_agg; k++) {
    const lm_node *n = &cat->nodes[r->agg[k]];
    int32_t *first = &firsts[3 * (size_t)n->a];
    r->keeper[k] = first[0] < 0;
    if (r->keeper[k]) first[0] = k;
    r->fold_of[k] = k;
    if (n->op != LM_OP_AVG && n->op != LM_OP_MIN && n->op != LM_OP_MAX && n->op != LM_OP_SUM &&
        n->op != LM_OP_COUNT)
      continue;
    int32_t *fold = &first[n->op == LM_OP_AVG && r->req->weights ? 2 : 1];
    if (*fold >= 0) r->fold_of[k] = *fold;
    else *fold = k;
  }
  lm_free(firsts);
  /* Refresh missing flags of this pass's nodes: scalars they read may have
   * become missing after the first stage. */
  for (int32_t node = 0; node < cat->n_nodes; node++) {
    if (!in_pass[node]) continue;
    const lm_node *n = &cat->nodes[node];
    int32_t ops[3];
    lm_eval_operands(cat, node, r->req->norm, ops);
    for (int32_t ch = 0; ch < (n->chan ? n_ch : 1); ch++)
      for (int o = 0; o < 3; o++)
        if (ops[o] >= 0) ev->miss[slot_of(ev, node, ch)] |= ev->miss[slot_of(ev, ops[o], ch)];
  }
  lm_free(in_pass);
  if (!r->n_vec_inv && !r->n_vec_ch) return LM_OK;
  if (n_rows == 0) {
    /* No dispatch selected: every aggregate is missing. */
    for (int32_t k = 0; k < r->n_agg; k++) {
      const lm_node *n = &cat->nodes[r->agg[k]];
      for (int32_t ch = 0; ch < (n->chan ? n_ch : 1); ch++) {
        int32_t s = slot_of(ev, r->agg[k], ch);
        if (n->op == LM_OP_SUM || n->op == LM_OP_COUNT) ev->vals[s] = 0;
        else ev->vals[s] = LM_NAN;
      }
    }
    return LM_OK;
  }
  if (lm_eval_plan_bounded(r, n_rows) != LM_OK) goto nomem;
  /* Buffers hold a chunk (a block) of rows, or all the pass's rows when
   * fewer; each aggregate has a fold per channel only when its operand
   * has channels. A few dispatches then touch a few pages, not megabytes. */
  r->chunk_stride = n_rows < CHUNK ? (n_rows + 7) / 8 * 8 : CHUNK;
  r->fetch_stride = (n_rows < r->block_rows ? n_rows : r->block_rows) + 8;
  if (!(r->acc_first = lm_malloc(((size_t)r->n_agg + 1) * sizeof *r->acc_first))) goto nomem;
  size_t n_accs = 0;
  for (int32_t k = 0; k < r->n_agg; k++) {
    r->acc_first[k] = n_accs;
    n_accs += cat->nodes[cat->nodes[r->agg[k]].a].chan ? (size_t)n_ch : 1;
  }
  size_t n_kept = 0;
  if (r->n_keep) {
    size_t n_k = (size_t)r->n_keep * (size_t)n_ch;
    if (!(r->kept = lm_calloc(n_k, 1))) goto nomem;
    for (size_t k = 0; k < n_k; k++) {
      r->kept[k] = !(r->ostat && r->bounded[k / (size_t)n_ch]);
      n_kept += r->kept[k];
    }
  }
  /* Two halves, each summed in row order, whenever there are many rows
   * (and when two threads are asked for): the sums then do not depend on
   * the number of processors or on the block size of streamed columns. */
  int threads = r->req->threads, parallel = 1;
  if (threads <= 0) {
    parallel = sysconf(_SC_NPROCESSORS_ONLN) > 1;
    threads = n_rows >= PARALLEL_MIN_ROWS ? 2 : 1;
  }
  n_workers = threads > 1 && n_rows >= 2 * CHUNK ? 2 : 1;
  size_t n_slots = 0;
  for (int32_t node = 0; node < cat->n_nodes; node++)
    if (ev->slot[node] >= 0) n_slots = (size_t)slot_of(ev, node, cat->nodes[node].chan ? n_ch - 1 : 0) + 1;
  for (int i = 0; i < n_workers; i++) {
    worker *w = &workers[i];
    w->r = r;
    w->id = i;
    /* Split on a chunk boundary so each chunk's rows stay together. */
    size_t half = (n_rows / 2 + CHUNK - 1) / CHUNK * CHUNK;
    w->begin = n_workers == 1 ? 0 : (i == 0 ? 0 : half);
    w->end = n_workers == 1 ? n_rows : (i == 0 ? half : n_rows);
    w->bufs = lm_malloc((size_t)(r->n_bufs ? r->n_bufs : 1) * r->chunk_stride * sizeof(double));
    if (r->n_fetch) {
      /* On huge pages: a fetch writes each row across every buffer. */
      w->fetched = lm_alloc_dense((size_t)r->n_fetch * r->fetch_stride * sizeof(double));
      if (!w->fetched) goto nomem;
    }
    w->uni = lm_calloc((size_t)(r->n_bufs ? r->n_bufs : 1), 1);
    w->src = lm_calloc((size_t)(r->n_bufs ? r->n_bufs : 1), sizeof *w->src);
    if (!w->src) goto nomem;
    w->accs = lm_malloc((n_accs ? n_accs : 1) * sizeof(lm_fold));
    w->poison = lm_calloc(n_slots ? n_slots : 1, 1);
    w->kept = lm_calloc(r->n_keep ? (size_t)r->n_keep * (size_t)n_ch : 1, sizeof *w->kept);
    if (!w->bufs || !w->uni || !w->accs || !w->poison || !w->kept) goto nomem;
    if (n_kept) {
      /* Room for every kept operand's rows of this worker in each of the
       * integer forms and as doubles (a part widens at most twice); only
       * what is written is ever backed. */
      w->region_bytes = n_kept * ((w->end - w->begin) * 14 + 3 * 64);
      if (!(w->region = lm_alloc_huge(w->region_bytes))) goto nomem;
    }
    for (size_t k = 0; k < n_accs; k++) lm_fold_init(&w->accs[k]);
  }
  for (size_t i = 0; r->ostat && i < (size_t)r->n_keep * (size_t)n_ch; i++)
    if (r->ostat[i].n_ops && lm_ostat_prepare(&r->ostat[i], LM_OSTAT_COUNT, n_workers) != LM_OK)
      goto nomem;
  if (n_workers == 2 && parallel) lm_run_pair(lm_eval_work, &workers[0], &workers[1]);
  else for (int i = 0; i < n_workers; i++) lm_eval_work(&workers[i]);
  for (int i = 0; i < n_workers; i++)
    if (workers[i].status != LM_OK) {
      status = workers[i].status;
      if (diag) *diag = workers[i].diag;
      goto done;
    }
  /* A poisoned per-dispatch value poisons what is computed from it. */
  for (int i = 0; i < n_workers; i++) {
    for (int32_t node = 0; node < cat->n_nodes; node++) {
      if (!r->needed[node] || r->buf_index[node] < 0) continue;
      const lm_node *n = &cat->nodes[node];
      int32_t ops[3];
      lm_eval_operands(cat, node, r->req->norm, ops);
      for (int32_t ch = 0; ch < (n->chan ? n_ch : 1); ch++) {
        uint8_t *p = &workers[i].poison[slot_of(ev, node, ch)];
        for (int o = 0; o < 3; o++)
          if (ops[o] >= 0 && cat->nodes[ops[o]].vector)
            *p |= workers[i].poison[slot_of(ev, ops[o], ch)];
      }
    }
  }
  if (r->ostat) {
    status = lm_eval_bounded_passes(r, workers, n_workers, parallel);
    if (status != LM_OK) {
      if (status != LM_ENOMEM) {
        for (int i = 0; i < n_workers; i++)
          if (workers[i].status != LM_OK && diag) *diag = workers[i].diag;
        goto done;
      }
      goto nomem;
    }
  }
  status = lm_eval_finalize(r, workers, n_workers);
  if (status != LM_OK) goto nomem;
  goto done;
nomem:
  status = lm_diag_set(diag, LM_ENOMEM, NULL, 0, 0, NULL, "out of memory");
done:
  for (int i = 0; i < 2; i++) {
    lm_free_huge(workers[i].fetched, (size_t)r->n_fetch * r->fetch_stride * sizeof(double));
    lm_free(workers[i].bufs);
    lm_free(workers[i].uni);
    lm_free((void *)workers[i].src);
    lm_free(workers[i].accs);
    lm_free(workers[i].poison);
    lm_free(workers[i].kept);
    lm_free_huge(workers[i].region, workers[i].region_bytes);
  }
  lm_free(r->kept);
  lm_free(r->acc_first);
  r->kept = NULL;
  r->acc_first = NULL;
  if (r->ostat) {
    for (size_t i = 0; i < (size_t)r->n_keep * (size_t)n_ch; i++) lm_ostat_fini(&r->ostat[i]);
    lm_free(r->ostat);
    r->ostat = NULL;
  }
  lm_free(r->bounded);
  lm_free(r->feeds);
  lm_free(r->onode);
  r->bounded = r->feeds = r->onode = NULL;
  return status;
}

lm_status lm_eval_run(const lm_catalog *cat, const lm_eval_request *req, lm_eval **out,
                      lm_diag *diag) {
  lm_status status = LM_OK;
  run r;
  memset(&r, 0, sizeof r);
  *out = NULL;
  lm_eval *ev = lm_calloc(1, sizeof *ev);
  if (!ev) return lm_diag_set(diag, LM_ENOMEM, NULL, 0, 0, NULL, "out of memory");
  ev->cat = cat;
  int32_t nn = cat->n_nodes;
  r.cat = cat;
  r.req = req;
  r.ev = ev;
  r.needed = lm_calloc((size_t)(nn ? nn : 1), 1);
  ev->slot = lm_malloc((size_t)(nn ? nn : 1) * sizeof *ev->slot);
  ev->table_channels = lm_calloc((size_t)(cat->n_tables ? cat->n_tables : 1), sizeof(int32_t));
  if (!r.needed || !ev->slot || !ev->table_channels) goto nomem;
  if (req->norm < 0 || (cat->n_norms && req->norm >= cat->n_norms)) {
    status = lm_diag_set(diag, LM_EINVAL, NULL, 0, 0, NULL, "no such normalization");
    goto fail;
  }

  r.contiguous = 1;
  for (size_t i = 1; i < req->n_rows && r.contiguous; i++)
    r.contiguous = req->rows[i] == req->rows[i - 1] + 1;

  /* 1. Mark what the requested tables need, and find channel counts. */
  ev->n_ch = 1;
  for (int32_t t = 0; t < cat->n_tables; t++) {
    const lm_tabledef *td = &cat->tables[t];
    ev->table_channels[t] = 1;
    if (req->tables && !req->tables[t]) continue;
    if (td->kind != LM_TABLE_METRIC) continue;
    for (int32_t row = td->first_row; row < td->first_row + td->n_rows; row++)
      for (int32_t c = 0; c < td->n_cols; c++) {
        const lm_celldef *cell = &cat->cells[cat->rows[row].first_cell + c];
        mark(&r, req->corrected && cell->corrected >= 0 ? cell->corrected : cell->node);
      }
    if (td->channels >= 0) {
      double n_ch = 0;
      if (!scalar_tree(&r, td->channels, &n_ch) || n_ch < 0 || n_ch > MAX_CHANNELS ||
          n_ch != floor(n_ch)) {
        status = lm_diag_set(diag, LM_EDATA, NULL, 0, 0, NULL,
                             "table %s: the channel count is not a whole number between 0 "
                             "and %d (check total_l2_chan in sysinfo.csv)", td->id,
                             MAX_CHANNELS);
        goto fail;
      }
      ev->table_channels[t] = (int32_t)n_ch;
      if ((int32_t)n_ch > ev->n_ch) ev->n_ch = (int32_t)n_ch;
    }
  }
  for (int32_t node = nn - 1; node >= 0; node--) {
    if (!r.needed[node]) continue;
    int32_t ops[3];
    lm_eval_operands(cat, node, req->norm, ops);
    for (int o = 0; o < 3; o++) mark(&r, ops[o]);
  }
  /* 2. Slots for every needed node (per channel for channel nodes). */
  size_t n_slots = 0;
  int32_t max_stage = 0;
  for (int32_t node = 0; node < nn; node++) {
    ev->slot[node] = -1;
    if (!r.needed[node]) continue;
    ev->slot[node] = (int32_t)n_slots;
    n_slots += cat->nodes[node].chan ? (size_t)ev->n_ch : 1;
    if (cat->nodes[node].stage > max_stage) max_stage = cat->nodes[node].stage;
  }
  ev->vals = lm_malloc((n_slots ? n_slots : 1) * sizeof *ev->vals);
  ev->miss = lm_calloc(n_slots ? n_slots : 1, 1);
  r.cols = lm_calloc((size_t)(nn ? nn : 1), sizeof *r.cols);
  r.col_rows = lm_calloc((size_t)(nn ? nn : 1), sizeof *r.col_rows);
  r.vec_inv = lm_malloc((size_t)(nn ? nn : 1) * sizeof(int32_t));
  r.vec_ch = lm_malloc((size_t)(nn ? nn : 1) * sizeof(int32_t));
  r.agg = lm_malloc((size_t)(nn ? nn : 1) * sizeof(int32_t));
  r.fold_of = lm_malloc((size_t)(nn ? nn : 1) * sizeof(int32_t));
  r.keeper = lm_malloc((size_t)(nn ? nn : 1));
  r.buf_index = lm_malloc((size_t)(nn ? nn : 1) * sizeof(int32_t));
  r.keep_index = lm_malloc((size_t)(nn ? nn : 1) * sizeof(int32_t));
  r.fetch_index = lm_malloc((size_t)(nn ? nn : 1) * sizeof(int32_t));
  r.def_table = lm_calloc((size_t)(nn ? nn : 1), sizeof *r.def_table);
  r.def_col = lm_calloc((size_t)(nn ? nn : 1), sizeof *r.def_col);
  r.block_rows = req->block_rows ? req->block_rows : BLOCK_ROWS;
  r.stat_mem = req->stat_mem ? req->stat_mem : LM_STAT_MEM_DEFAULT;
  if (!r.fetch_index || !r.def_table || !r.def_col || !r.fold_of || !r.keeper) goto nomem;
  if (!ev->vals || !ev->miss || !r.cols || !r.col_rows || !r.vec_inv || !r.vec_ch || !r.agg ||
      !r.buf_index || !r.keep_index)
    goto nomem;

  /* 3. Leaves: columns and system information. */
  status = resolve_inputs(&r, diag);
  if (status != LM_OK) goto fail;
  for (int32_t node = 0; node < nn; node++) {
    if (!r.needed[node]) continue;
    const lm_node *n = &cat->nodes[node];
    if (n->op == LM_OP_CONST) {
      ev->vals[ev->slot[node]] = n->k;
    } else if (n->op == LM_OP_SYSVAR) {
      const lm_sysinfo *info = &req->workload->sysinfo;
      long i = lm_sysinfo_find(info, cat->sysvars[n->a]);
      double derived;
      if (i < 0 && lm_sysinfo_derive(info, cat->sysvars[n->a], &derived)) {
        /* A field of the other rocprofiler-compute layout, computed from
         * the fields this one has (the HBM peak from channels and clock). */
        ev->vals[ev->slot[node]] = derived;
        continue;
      }
      if (i < 0) {
        /* Say which semantics would read this folder as it is. */
        const char *layout = lm_sysinfo_compat(info);
        const char *own = layout ? layout : lm_compat_versions[0];
        char hint[200] = "";
        if (strcmp(own, cat->compat ? cat->compat : lm_compat_versions[0]) != 0)
          snprintf(hint, sizeof hint,
                   " (this sysinfo.csv has the layout of rocprofiler-compute %s, read in its own semantics "
                   "without --compat or with --compat %s)",
                   layout ? "3.3 and later" : "3.0 to 3.2", own);
        status = lm_diag_set(diag, LM_EDATA, req->workload->sysinfo_table
                                                 ? req->workload->sysinfo_table->path : NULL,
                             1, 0, cat->sysvars[n->a], "missing: the metrics need this system-info field%s",
                             hint);
        goto fail;
      }
      if (isnan(info->values[i]))
        ev->miss[ev->slot[node]] = 1; /* blank or text: cells using it stay blank */
      else
        ev->vals[ev->slot[node]] = info->values[i];
    }
  }
  /* 4. Missing propagates to everything computed from a missing value. */
  for (int32_t node = 0; node < nn; node++) {
    if (!r.needed[node]) continue;
    const lm_node *n = &cat->nodes[node];
    if (n->op == LM_OP_CONST || n->op == LM_OP_SYSVAR || n->op == LM_OP_INPUT) continue;
    int32_t ops[3];
    lm_eval_operands(cat, node, req->norm, ops);
    for (int32_t ch = 0; ch < (n->chan ? ev->n_ch : 1); ch++) {
      uint8_t m = 0;
      for (int o = 0; o < 3; o++)
        if (ops[o] >= 0) m |= ev->miss[slot_of(ev, ops[o], ch)];
      ev->miss[slot_of(ev, node, ch)] = m;
    }
  }
  /* 5. Stages. */
  for (r.stage = 0; r.stage <= max_stage; r.stage++) {
    for (int32_t node = 0; node < nn; node++) {
      if (!r.needed[node]) continue;
      const lm_node *n = &cat->nodes[node];
      if (n->vector || n->stage != r.stage || LM_OP_IS_AGGREGATE(n->op) ||
          n->op == LM_OP_CONST || n->op == LM_OP_SYSVAR)
        continue;
      for (int32_t ch = 0; ch < (n->chan ? ev->n_ch : 1); ch++) {
        int32_t s = slot_of(ev, node, ch);
        /* An aggregate may have become missing while running (a TO_INT
         * that failed): look at the operands again. */
        int32_t ops[3];
        lm_eval_operands(cat, node, req->norm, ops);
        for (int o = 0; o < 3; o++)
          if (ops[o] >= 0) ev->miss[s] |= ev->miss[slot_of(ev, ops[o], ch)];
        if (ev->miss[s]) continue;
        if (n->op == LM_OP_CONCAT) {
          ev->vals[s] = LM_NAN;
          continue;
        }
        double a = ev->vals[slot_of(ev, n->a, ch)], b = 0, c = 0;
        if (n->b >= 0 && n->op != LM_OP_ROUND && n->op != LM_OP_TO_INT)
          b = ev->vals[slot_of(ev, n->b, ch)];
        if (n->op == LM_OP_WHERE) c = ev->vals[slot_of(ev, n->c, ch)];
        ev->vals[s] = lm_scalar_op(n->op, a, b, c, n->k);
      }
    }
    status = vector_pass(&r, diag);
    if (status != LM_OK) goto fail;
  }
  goto done;
nomem:
  status = lm_diag_set(diag, LM_ENOMEM, NULL, 0, 0, NULL, "out of memory");
fail:
  lm_eval_free(ev);
  ev = NULL;
done:
  /* Any of the three lists may be missing when its allocation failed. */
  for (int32_t node = 0; node < nn; node++) {
    if (r.cols) lm_free(r.cols[node]);
    if (r.col_rows) lm_free(r.col_rows[node]);
    if (r.def_col) lm_free(r.def_col[node]);
  }
  lm_free(r.cols);
  lm_free(r.col_rows);
  lm_free(r.needed);
  lm_free(r.vec_inv);
  lm_free(r.vec_ch);
  lm_free(r.agg);
  lm_free(r.fold_of);
  lm_free(r.keeper);
  lm_free(r.buf_index);
  lm_free(r.keep_index);
  lm_free(r.fetch_index);
  lm_free(r.def_table);
  lm_free(r.def_col);
  *out = ev;
  return status;
}
