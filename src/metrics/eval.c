/*
 * eval.c - the bulk evaluator: runs a catalog's graph over all selected
 * dispatches of a workload at once, stage by stage.
 *
 * Invariants: only the nodes that the requested tables need are run; a
 * node is missing, decided before any arithmetic, when an input it reads
 * is absent; results depend on the selected row count only, never on the
 * machine (fixed split, folds in row order). This file marks the needed
 * nodes, resolves leaves, computes the scalars and plans each pass; the
 * passes run in eval_vm.c. Why stages, chunks, kept operands and the
 * memory budget: docs/streaming.md ("How the evaluator is organized").
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "metrics/eval_internal.h"

#define BLOCK_ROWS 2048
#define PARALLEL_MIN_ROWS 4096

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

/* -------------------------------------------------------------- leaves */

/* The columns of the needed input nodes, per channel (r->cols,
 * r->col_rows; deferred ones also in r->def_table, r->def_col), missing
 * where the workload lacks them. Errors: a counter column that holds
 * text, out of memory. */
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
    if (!r->cols[node] || !r->col_rows[node] || !r->def_col[node]) return lm_oom(diag, NULL);
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

/* ------------------------------------------------------ one vector pass */

/* This pass computes the per-dispatch nodes of its stage and, again, the
 * earlier-stage per-dispatch values they read (buffers do not outlive a
 * pass): in_pass[node] = 1 for each. Walk down from the last node so
 * consumers mark operands first. */
static void mark_pass(run *r, uint8_t *in_pass) {
  const lm_catalog *cat = r->cat;
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
}

/* The chunk buffers of the pass's nodes, the block buffers of its deferred
 * inputs and its lists of per-dispatch nodes (channel-invariant and per
 * channel). */
static void assign_buffers(run *r, const uint8_t *in_pass) {
  const lm_catalog *cat = r->cat;
  int32_t n_ch = r->ev->n_ch;
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
}

/* The aggregates the pass feeds; the operands of order statistics get a
 * keep index each. */
static void find_aggregates(run *r) {
  const lm_catalog *cat = r->cat;
  for (int32_t node = 0; node < cat->n_nodes; node++) {
    if (!r->needed[node]) continue;
    const lm_node *n = &cat->nodes[node];
    if (!LM_OP_IS_AGGREGATE(n->op) || cat->nodes[n->a].stage != r->stage) continue;
    r->agg[r->n_agg++] = node;
    if ((n->op == LM_OP_MEDIAN || n->op == LM_OP_QUANTILE || n->op == LM_OP_STD) &&
        r->keep_index[n->a] < 0)
      r->keep_index[n->a] = r->n_keep++;
  }
}

/* One fold per operand (and weighting), one copy of its kept values:
 * per operand node, its first aggregate and its first unweighted and
 * weighted folds. Errors: out of memory. */
static lm_status share_folds(run *r, lm_diag *diag) {
  const lm_catalog *cat = r->cat;
  int32_t *firsts = lm_malloc(3 * ((size_t)cat->n_nodes + 1) * sizeof *firsts);
  if (!firsts) return lm_oom(diag, NULL);
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
  return LM_OK;
}

/* Refresh missing flags of this pass's nodes: scalars they read may have
 * become missing after the first stage. */
static void refresh_missing(run *r, const uint8_t *in_pass) {
  const lm_catalog *cat = r->cat;
  lm_eval *ev = r->ev;
  for (int32_t node = 0; node < cat->n_nodes; node++) {
    if (!in_pass[node]) continue;
    const lm_node *n = &cat->nodes[node];
    int32_t ops[3];
    lm_eval_operands(cat, node, r->req->norm, ops);
    for (int32_t ch = 0; ch < (n->chan ? ev->n_ch : 1); ch++)
      for (int o = 0; o < 3; o++)
        if (ops[o] >= 0) ev->miss[slot_of(ev, node, ch)] |= ev->miss[slot_of(ev, ops[o], ch)];
  }
}

/* What the pass computes, into r: its nodes and their buffers, its
 * aggregates and their folds. Errors: out of memory. */
static lm_status plan_pass(run *r, lm_diag *diag) {
  r->n_vec_inv = r->n_vec_ch = r->n_agg = r->n_bufs = r->n_keep = 0;
  uint8_t *in_pass = lm_calloc((size_t)r->cat->n_nodes + 1, 1);
  if (!in_pass) return lm_oom(diag, NULL);
  mark_pass(r, in_pass);
  assign_buffers(r, in_pass);
  find_aggregates(r);
  lm_status st = share_folds(r, diag);
  if (st == LM_OK) refresh_missing(r, in_pass);
  lm_free(in_pass);
  return st;
}

/* No dispatch selected: every aggregate is missing (sums and counts are 0). */
static void no_rows(run *r) {
  const lm_catalog *cat = r->cat;
  lm_eval *ev = r->ev;
  for (int32_t k = 0; k < r->n_agg; k++) {
    const lm_node *n = &cat->nodes[r->agg[k]];
    for (int32_t ch = 0; ch < (n->chan ? ev->n_ch : 1); ch++) {
      int32_t s = slot_of(ev, r->agg[k], ch);
      if (n->op == LM_OP_SUM || n->op == LM_OP_COUNT) ev->vals[s] = 0;
      else ev->vals[s] = LM_NAN;
    }
  }
}

/* The workers of one pass and what sizes their memory. */
typedef struct pass {
  worker workers[2];
  int n_workers;
  int parallel;   /* run two workers on two threads */
  size_t n_accs;  /* folds per worker */
  size_t n_kept;  /* kept operand channels whose values the workers keep */
  size_t n_slots; /* slots of the needed nodes (a worker's poison flags) */
} pass;

/* Each aggregate's first fold (one per channel where its operand has
 * channels), and which kept operands keep their values (not the bounded
 * ones). Errors: out of memory. */
static lm_status count_folds(run *r, pass *p) {
  const lm_catalog *cat = r->cat;
  int32_t n_ch = r->ev->n_ch;
  if (!(r->acc_first = lm_malloc(((size_t)r->n_agg + 1) * sizeof *r->acc_first))) return LM_ENOMEM;
  for (int32_t k = 0; k < r->n_agg; k++) {
    r->acc_first[k] = p->n_accs;
    p->n_accs += cat->nodes[cat->nodes[r->agg[k]].a].chan ? (size_t)n_ch : 1;
  }
  if (r->n_keep) {
    size_t n_k = (size_t)r->n_keep * (size_t)n_ch;
    if (!(r->kept = lm_calloc(n_k, 1))) return LM_ENOMEM;
    for (size_t k = 0; k < n_k; k++) {
      r->kept[k] = !(r->ostat && r->bounded[k / (size_t)n_ch]);
      p->n_kept += r->kept[k];
    }
  }
  return LM_OK;
}

/* Worker i of p: its rows and its buffers, folds, poison flags and kept
 * parts. Errors: out of memory (what was allocated is p's to free). */
static lm_status init_worker(run *r, pass *p, int i) {
  size_t n_rows = r->req->n_rows;
  int32_t n_ch = r->ev->n_ch;
  worker *w = &p->workers[i];
  w->r = r;
  w->id = i;
  /* Split on a chunk boundary so each chunk's rows stay together. */
  size_t half = (n_rows / 2 + LM_EVAL_CHUNK - 1) / LM_EVAL_CHUNK * LM_EVAL_CHUNK;
  w->begin = p->n_workers == 1 ? 0 : (i == 0 ? 0 : half);
  w->end = p->n_workers == 1 ? n_rows : (i == 0 ? half : n_rows);
  w->bufs = lm_malloc((size_t)(r->n_bufs ? r->n_bufs : 1) * r->chunk_stride * sizeof(double));
  if (r->n_fetch) {
    /* On huge pages: a fetch writes each row across every buffer. */
    w->fetched = lm_alloc_dense((size_t)r->n_fetch * r->fetch_stride * sizeof(double));
    if (!w->fetched) return LM_ENOMEM;
  }
  w->uni = lm_calloc((size_t)(r->n_bufs ? r->n_bufs : 1), 1);
  w->src = lm_calloc((size_t)(r->n_bufs ? r->n_bufs : 1), sizeof *w->src);
  if (!w->src) return LM_ENOMEM;
  w->accs = lm_malloc((p->n_accs ? p->n_accs : 1) * sizeof(lm_fold));
  w->poison = lm_calloc(p->n_slots ? p->n_slots : 1, 1);
  w->kept = lm_calloc(r->n_keep ? (size_t)r->n_keep * (size_t)n_ch : 1, sizeof *w->kept);
  if (!w->bufs || !w->uni || !w->accs || !w->poison || !w->kept) return LM_ENOMEM;
  if (p->n_kept) {
    /* Room for every kept operand's rows of this worker in each of the
     * integer forms and as doubles (a part widens at most twice); only
     * what is written is ever backed. */
    w->region_bytes = p->n_kept * ((w->end - w->begin) * 14 + 3 * 64);
    if (!(w->region = lm_alloc_huge(w->region_bytes))) return LM_ENOMEM;
  }
  for (size_t k = 0; k < p->n_accs; k++) lm_fold_init(&w->accs[k]);
  return LM_OK;
}

/* Everything the workers of the pass need before they run: the bounded
 * order statistics, the buffers' sizes, the folds and the workers. Errors:
 * out of memory. */
static lm_status start_workers(run *r, pass *p, lm_diag *diag) {
  const lm_catalog *cat = r->cat;
  lm_eval *ev = r->ev;
  size_t n_rows = r->req->n_rows;
  int32_t n_ch = ev->n_ch;
  if (lm_eval_plan_bounded(r, n_rows) != LM_OK) goto nomem;
  /* Buffers hold a chunk (a block) of rows, or all the pass's rows when
   * fewer; each aggregate has a fold per channel only when its operand
   * has channels. A few dispatches then touch a few pages, not megabytes. */
  r->chunk_stride = n_rows < LM_EVAL_CHUNK ? (n_rows + 7) / 8 * 8 : LM_EVAL_CHUNK;
  r->fetch_stride = (n_rows < r->block_rows ? n_rows : r->block_rows) + 8;
  if (count_folds(r, p) != LM_OK) goto nomem;
  /* Two halves, each summed in row order, whenever there are many rows
   * (and when two threads are asked for): the sums then do not depend on
   * the number of processors or on the block size of streamed columns. */
  int threads = r->req->threads;
  p->parallel = 1;
  if (threads <= 0) {
    p->parallel = sysconf(_SC_NPROCESSORS_ONLN) > 1;
    threads = n_rows >= PARALLEL_MIN_ROWS ? 2 : 1;
  }
  p->n_workers = threads > 1 && n_rows >= 2 * LM_EVAL_CHUNK ? 2 : 1;
  for (int32_t node = 0; node < cat->n_nodes; node++)
    if (ev->slot[node] >= 0) p->n_slots = (size_t)slot_of(ev, node, cat->nodes[node].chan ? n_ch - 1 : 0) + 1;
  for (int i = 0; i < p->n_workers; i++)
    if (init_worker(r, p, i) != LM_OK) goto nomem;
  for (size_t i = 0; r->ostat && i < (size_t)r->n_keep * (size_t)n_ch; i++)
    if (r->ostat[i].n_ops && lm_ostat_prepare(&r->ostat[i], LM_OSTAT_COUNT, p->n_workers) != LM_OK)
      goto nomem;
  return LM_OK;
nomem:
  return lm_oom(diag, NULL);
}

/* A poisoned per-dispatch value poisons what is computed from it. */
static void spread_poison(run *r, pass *p) {
  const lm_catalog *cat = r->cat;
  lm_eval *ev = r->ev;
  for (int i = 0; i < p->n_workers; i++) {
    for (int32_t node = 0; node < cat->n_nodes; node++) {
      if (!r->needed[node] || r->buf_index[node] < 0) continue;
      const lm_node *n = &cat->nodes[node];
      int32_t ops[3];
      lm_eval_operands(cat, node, r->req->norm, ops);
      for (int32_t ch = 0; ch < (n->chan ? ev->n_ch : 1); ch++) {
        uint8_t *poison = &p->workers[i].poison[slot_of(ev, node, ch)];
        for (int o = 0; o < 3; o++)
          if (ops[o] >= 0 && cat->nodes[ops[o]].vector)
            *poison |= p->workers[i].poison[slot_of(ev, ops[o], ch)];
      }
    }
  }
}

/* Run the started workers over their rows, then the bounded order
 * statistics' extra passes, and give the aggregates their values. Errors:
 * a worker's (its diagnostic), out of memory. */
static lm_status run_workers(run *r, pass *p, lm_diag *diag) {
  worker *workers = p->workers;
  if (p->n_workers == 2 && p->parallel) lm_run_pair(lm_eval_work, &workers[0], &workers[1]);
  else for (int i = 0; i < p->n_workers; i++) lm_eval_work(&workers[i]);
  for (int i = 0; i < p->n_workers; i++)
    if (workers[i].status != LM_OK) {
      if (diag) *diag = workers[i].diag;
      return workers[i].status;
    }
  spread_poison(r, p);
  if (r->ostat) {
    lm_status status = lm_eval_bounded_passes(r, workers, p->n_workers, p->parallel);
    if (status != LM_OK && status != LM_ENOMEM) {
      for (int i = 0; i < p->n_workers; i++)
        if (workers[i].status != LM_OK && diag) *diag = workers[i].diag;
      return status;
    }
    if (status != LM_OK) goto nomem;
  }
  if (lm_eval_finalize(r, workers, p->n_workers) != LM_OK) goto nomem;
  return LM_OK;
nomem:
  return lm_oom(diag, NULL);
}

/* Free what the pass allocated: its workers' memory and, in r, its folds,
 * kept flags and bounded order statistics. */
static void end_pass(run *r, pass *p) {
  for (int i = 0; i < 2; i++) {
    worker *w = &p->workers[i];
    lm_free_huge(w->fetched, (size_t)r->n_fetch * r->fetch_stride * sizeof(double));
    lm_free(w->bufs);
    lm_free(w->uni);
    lm_free((void *)w->src);
    lm_free(w->accs);
    lm_free(w->poison);
    lm_free(w->kept);
    lm_free_huge(w->region, w->region_bytes);
  }
  lm_free(r->kept);
  lm_free(r->acc_first);
  r->kept = NULL;
  r->acc_first = NULL;
  if (r->ostat) {
    for (size_t i = 0; i < (size_t)r->n_keep * (size_t)r->ev->n_ch; i++) lm_ostat_fini(&r->ostat[i]);
    lm_free(r->ostat);
    r->ostat = NULL;
  }
  lm_free(r->bounded);
  lm_free(r->feeds);
  lm_free(r->onode);
  r->bounded = r->feeds = r->onode = NULL;
}

/* The pass of stage r->stage over the selected dispatches: every
 * per-dispatch node it needs, and the aggregates they feed. */
static lm_status vector_pass(run *r, lm_diag *diag) {
  pass p;
  memset(&p, 0, sizeof p);
  lm_status status = plan_pass(r, diag);
  if (status != LM_OK) return status;
  if (!r->n_vec_inv && !r->n_vec_ch) return LM_OK;
  if (r->req->n_rows == 0) {
    no_rows(r);
    return LM_OK;
  }
  status = start_workers(r, &p, diag);
  if (status == LM_OK) status = run_workers(r, &p, diag);
  end_pass(r, &p);
  return status;
}

/* ---------------------------------------------------------------- run */

/* 1. Mark what the requested tables need, and find channel counts.
 * Errors: a channel count that is not a whole number in range. */
static lm_status mark_needed(run *r, lm_diag *diag) {
  const lm_catalog *cat = r->cat;
  const lm_eval_request *req = r->req;
  lm_eval *ev = r->ev;
  ev->n_ch = 1;
  for (int32_t t = 0; t < cat->n_tables; t++) {
    const lm_tabledef *td = &cat->tables[t];
    ev->table_channels[t] = 1;
    if (req->tables && !req->tables[t]) continue;
    if (td->kind != LM_TABLE_METRIC) continue;
    for (int32_t row = td->first_row; row < td->first_row + td->n_rows; row++)
      for (int32_t c = 0; c < td->n_cols; c++) {
        const lm_celldef *cell = &cat->cells[cat->rows[row].first_cell + c];
        mark(r, req->corrected && cell->corrected >= 0 ? cell->corrected : cell->node);
      }
    if (td->channels >= 0) {
      double n_ch = 0;
      if (!scalar_tree(r, td->channels, &n_ch) || n_ch < 0 || n_ch > LM_METRICS_MAX_CHANNELS ||
          n_ch != floor(n_ch))
        return lm_fail(diag, LM_EDATA, NULL,
                       "table %s: the channel count is not a whole number between 0 "
                       "and %d (check total_l2_chan in sysinfo.csv)",
                       td->id, LM_METRICS_MAX_CHANNELS);
      ev->table_channels[t] = (int32_t)n_ch;
      if ((int32_t)n_ch > ev->n_ch) ev->n_ch = (int32_t)n_ch;
    }
  }
  for (int32_t node = cat->n_nodes - 1; node >= 0; node--) {
    if (!r->needed[node]) continue;
    int32_t ops[3];
    lm_eval_operands(cat, node, req->norm, ops);
    for (int o = 0; o < 3; o++) mark(r, ops[o]);
  }
  return LM_OK;
}

/* 2. Slots for every needed node (per channel for channel nodes), and the
 * per-node arrays of the run; *max_stage: the last stage of a needed
 * node. Errors: out of memory. */
static lm_status alloc_slots(run *r, int32_t *max_stage, lm_diag *diag) {
  const lm_catalog *cat = r->cat;
  lm_eval *ev = r->ev;
  int32_t nn = cat->n_nodes;
  size_t n_slots = 0;
  *max_stage = 0;
  for (int32_t node = 0; node < nn; node++) {
    ev->slot[node] = -1;
    if (!r->needed[node]) continue;
    ev->slot[node] = (int32_t)n_slots;
    n_slots += cat->nodes[node].chan ? (size_t)ev->n_ch : 1;
    if (cat->nodes[node].stage > *max_stage) *max_stage = cat->nodes[node].stage;
  }
  ev->vals = lm_malloc((n_slots ? n_slots : 1) * sizeof *ev->vals);
  ev->miss = lm_calloc(n_slots ? n_slots : 1, 1);
  r->cols = lm_calloc((size_t)(nn ? nn : 1), sizeof *r->cols);
  r->col_rows = lm_calloc((size_t)(nn ? nn : 1), sizeof *r->col_rows);
  r->vec_inv = lm_malloc((size_t)(nn ? nn : 1) * sizeof(int32_t));
  r->vec_ch = lm_malloc((size_t)(nn ? nn : 1) * sizeof(int32_t));
  r->agg = lm_malloc((size_t)(nn ? nn : 1) * sizeof(int32_t));
  r->fold_of = lm_malloc((size_t)(nn ? nn : 1) * sizeof(int32_t));
  r->keeper = lm_malloc((size_t)(nn ? nn : 1));
  r->buf_index = lm_malloc((size_t)(nn ? nn : 1) * sizeof(int32_t));
  r->keep_index = lm_malloc((size_t)(nn ? nn : 1) * sizeof(int32_t));
  r->fetch_index = lm_malloc((size_t)(nn ? nn : 1) * sizeof(int32_t));
  r->def_table = lm_calloc((size_t)(nn ? nn : 1), sizeof *r->def_table);
  r->def_col = lm_calloc((size_t)(nn ? nn : 1), sizeof *r->def_col);
  r->block_rows = r->req->block_rows ? r->req->block_rows : BLOCK_ROWS;
  r->stat_mem = r->req->stat_mem ? r->req->stat_mem : LM_STAT_MEM_DEFAULT;
  if (!r->fetch_index || !r->def_table || !r->def_col || !r->fold_of || !r->keeper ||
      !ev->vals || !ev->miss || !r->cols || !r->col_rows || !r->vec_inv || !r->vec_ch || !r->agg ||
      !r->buf_index || !r->keep_index)
    return lm_oom(diag, NULL);
  return LM_OK;
}

/* A system-info field the metrics read and the workload lacks: the error,
 * saying which semantics would read this folder as it is. */
static lm_status missing_sysvar(const run *r, const char *field, lm_diag *diag) {
  const lm_sysinfo *info = &r->req->workload->sysinfo;
  const lm_catalog *cat = r->cat;
  const char *layout = lm_sysinfo_compat(info);
  const char *own = layout ? layout : lm_compat_versions[0];
  char hint[200] = "";
  if (strcmp(own, cat->compat ? cat->compat : lm_compat_versions[0]) != 0)
    snprintf(hint, sizeof hint,
             " (this sysinfo.csv has the layout of rocprofiler-compute %s, read in its own semantics "
             "without --compat or with --compat %s)",
             layout ? "3.3 and later" : "3.0 to 3.2", own);
  return lm_fail_at(diag, LM_EDATA, r->req->workload->sysinfo_table ? r->req->workload->sysinfo_table->path : NULL, 1,
                    field, "missing: the metrics need this system-info field%s", hint);
}

/* 3. Leaves: columns and system information. Errors: those of
 * resolve_inputs, a system-info field the workload lacks. */
static lm_status resolve_leaves(run *r, lm_diag *diag) {
  const lm_catalog *cat = r->cat;
  lm_eval *ev = r->ev;
  lm_status status = resolve_inputs(r, diag);
  if (status != LM_OK) return status;
  for (int32_t node = 0; node < cat->n_nodes; node++) {
    if (!r->needed[node]) continue;
    const lm_node *n = &cat->nodes[node];
    if (n->op == LM_OP_CONST) {
      ev->vals[ev->slot[node]] = n->k;
    } else if (n->op == LM_OP_SYSVAR) {
      const lm_sysinfo *info = &r->req->workload->sysinfo;
      long i = lm_sysinfo_find(info, cat->sysvars[n->a]);
      double derived;
      if (i < 0 && lm_sysinfo_derive(info, cat->sysvars[n->a], &derived)) {
        /* A field of the other rocprofiler-compute layout, computed from
         * the fields this one has (the HBM peak from channels and clock). */
        ev->vals[ev->slot[node]] = derived;
        continue;
      }
      if (i < 0) return missing_sysvar(r, cat->sysvars[n->a], diag);
      if (isnan(info->values[i]))
        ev->miss[ev->slot[node]] = 1; /* blank or text: cells using it stay blank */
      else
        ev->vals[ev->slot[node]] = info->values[i];
    }
  }
  return LM_OK;
}

/* 4. Missing propagates to everything computed from a missing value. */
static void propagate_missing(run *r) {
  const lm_catalog *cat = r->cat;
  lm_eval *ev = r->ev;
  for (int32_t node = 0; node < cat->n_nodes; node++) {
    if (!r->needed[node]) continue;
    const lm_node *n = &cat->nodes[node];
    if (n->op == LM_OP_CONST || n->op == LM_OP_SYSVAR || n->op == LM_OP_INPUT) continue;
    int32_t ops[3];
    lm_eval_operands(cat, node, r->req->norm, ops);
    for (int32_t ch = 0; ch < (n->chan ? ev->n_ch : 1); ch++) {
      uint8_t m = 0;
      for (int o = 0; o < 3; o++)
        if (ops[o] >= 0) m |= ev->miss[slot_of(ev, ops[o], ch)];
      ev->miss[slot_of(ev, node, ch)] = m;
    }
  }
}

/* The scalar nodes of stage r->stage (not aggregates, constants or
 * system information), from the values of earlier stages. */
static void scalar_stage(run *r) {
  const lm_catalog *cat = r->cat;
  lm_eval *ev = r->ev;
  for (int32_t node = 0; node < cat->n_nodes; node++) {
    if (!r->needed[node]) continue;
    const lm_node *n = &cat->nodes[node];
    if (n->vector || n->stage != r->stage || LM_OP_IS_AGGREGATE(n->op) ||
        n->op == LM_OP_CONST || n->op == LM_OP_SYSVAR)
      continue;
    for (int32_t ch = 0; ch < (n->chan ? ev->n_ch : 1); ch++) {
      int32_t s = slot_of(ev, node, ch);
      /* An aggregate may have become missing while running (a TO_INT
       * that failed): look at the operands again. */
      int32_t ops[3];
      lm_eval_operands(cat, node, r->req->norm, ops);
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
}

/* Free the run's per-node arrays (not its lm_eval). Any of the three
 * lists may be missing when its allocation failed. */
static void free_run(run *r) {
  for (int32_t node = 0; node < r->cat->n_nodes; node++) {
    if (r->cols) lm_free(r->cols[node]);
    if (r->col_rows) lm_free(r->col_rows[node]);
    if (r->def_col) lm_free(r->def_col[node]);
  }
  lm_free(r->cols);
  lm_free(r->col_rows);
  lm_free(r->needed);
  lm_free(r->vec_inv);
  lm_free(r->vec_ch);
  lm_free(r->agg);
  lm_free(r->fold_of);
  lm_free(r->keeper);
  lm_free(r->buf_index);
  lm_free(r->keep_index);
  lm_free(r->fetch_index);
  lm_free(r->def_table);
  lm_free(r->def_col);
}

lm_status lm_eval_run(const lm_catalog *cat, const lm_eval_request *req, lm_eval **out,
                      lm_diag *diag) {
  lm_status status = LM_OK;
  run r;
  memset(&r, 0, sizeof r);
  *out = NULL;
  lm_eval *ev = lm_calloc(1, sizeof *ev);
  if (!ev) return lm_oom(diag, NULL);
  ev->cat = cat;
  int32_t nn = cat->n_nodes;
  r.cat = cat;
  r.req = req;
  r.ev = ev;
  r.needed = lm_calloc((size_t)(nn ? nn : 1), 1);
  ev->slot = lm_malloc((size_t)(nn ? nn : 1) * sizeof *ev->slot);
  ev->table_channels = lm_calloc((size_t)(cat->n_tables ? cat->n_tables : 1), sizeof(int32_t));
  if (!r.needed || !ev->slot || !ev->table_channels) {
    status = lm_oom(diag, NULL);
    goto done;
  }
  if (req->norm < 0 || (cat->n_norms && req->norm >= cat->n_norms)) {
    status = lm_fail(diag, LM_EINVAL, NULL, "no such normalization");
    goto done;
  }
  r.contiguous = 1;
  for (size_t i = 1; i < req->n_rows && r.contiguous; i++)
    r.contiguous = req->rows[i] == req->rows[i - 1] + 1;
  int32_t max_stage = 0;
  if ((status = mark_needed(&r, diag)) != LM_OK) goto done;
  if ((status = alloc_slots(&r, &max_stage, diag)) != LM_OK) goto done;
  if ((status = resolve_leaves(&r, diag)) != LM_OK) goto done;
  propagate_missing(&r);
  /* 5. Stages: the scalars of each, then its pass over the dispatches. */
  for (r.stage = 0; r.stage <= max_stage; r.stage++) {
    scalar_stage(&r);
    if ((status = vector_pass(&r, diag)) != LM_OK) goto done;
  }
done:
  free_run(&r);
  if (status != LM_OK) {
    lm_eval_free(ev);
    ev = NULL;
  }
  *out = ev;
  return status;
}
