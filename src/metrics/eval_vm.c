/*
 * eval_vm.c - the bulk evaluator's vector machine: one worker's pass over
 * its range of selected dispatches, LM_EVAL_CHUNK rows at a time, one
 * tight loop per operation, fed to the aggregates (eval.c plans passes).
 *
 * Invariant: every value, and its order of folding, is that of a loaded
 * column, whether an input is loaded, read back from its file in blocks
 * (deferred columns) or taken as one value for a whole chunk; so memory
 * is set by the block size and the kept operands, not by the file. The
 * one-value chunks, shared folds and block reads are described in
 * docs/streaming.md ("How the evaluator is organized").
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "metrics/eval_internal.h"

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
    st = lm_oom(&w->diag, NULL);
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
    len = w->end - first < LM_EVAL_CHUNK ? w->end - first : LM_EVAL_CHUNK;
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
