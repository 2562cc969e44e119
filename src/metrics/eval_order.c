/*
 * eval_order.c - finishing a pass of the bulk evaluator: the aggregates'
 * values from the workers' folds, and the order statistics. Medians,
 * quantiles and standard deviations of a kept operand are read off its
 * values ordered once per channel (fold.c); above the memory budget the
 * medians and quantiles are found by reading the blocks again instead
 * (ostat.c), and this file decides which operands and runs those passes.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "metrics/eval_internal.h"

typedef struct finalize_job {
  run *r;
  worker *workers;
  int n_workers;
  int32_t begin, end; /* aggregates [begin, end) of r->agg */
  lm_status status;
} finalize_job;

static void *finalize_range(void *arg) {
  finalize_job *job = arg;
  run *r = job->r;
  worker *workers = job->workers;
  int n_workers = job->n_workers;
  const lm_catalog *cat = r->cat;
  lm_eval *ev = r->ev;
  int32_t n_ch = ev->n_ch;
  size_t n_rows = r->req->n_rows;
  double *scratch = NULL, *tmp = NULL, *one = NULL;
  job->status = LM_OK;
  if (r->n_keep) {
    scratch = lm_malloc((n_rows ? n_rows : 1) * sizeof *scratch);
    tmp = lm_malloc((n_rows ? n_rows : 1) * sizeof *tmp);
    one = lm_malloc((n_rows ? n_rows : 1) * sizeof *one);
    if (!scratch || !tmp || !one) {
      lm_free(scratch);
      lm_free(tmp);
      lm_free(one);
      job->status = LM_ENOMEM;
      return NULL;
    }
  }
  /* Aggregates of one operand are consecutive: go through them channel
   * by channel, so that the operand's values are ordered once per channel
   * for all its order statistics. */
  for (int32_t group = job->begin, group_end; group < job->end; group = group_end) {
    int32_t a = cat->nodes[r->agg[group]].a;
    int ops[8];
    double ks[8];
    size_t n_ops = 0;
    for (group_end = group; group_end < job->end && cat->nodes[r->agg[group_end]].a == a; group_end++) {
      const lm_node *n = &cat->nodes[r->agg[group_end]];
      if (n->op != LM_OP_MEDIAN && n->op != LM_OP_QUANTILE && n->op != LM_OP_STD) continue;
      if (n_ops < 8) {
        ops[n_ops] = n->op;
        ks[n_ops] = n->k;
      } else {
        ops[0] = LM_OP_STD; /* many: order them all */
      }
      n_ops++;
    }
    int32_t chans = cat->nodes[a].chan ? n_ch : 1;
    for (int32_t k = group; k < group_end; k++)
      if (cat->nodes[r->agg[k]].chan) chans = n_ch;
    for (int32_t ch = 0; ch < chans; ch++) {
      int ordered = 0, nan_seen = 0;
      size_t n_ordered = 0;
      for (int32_t k = group; k < group_end; k++) {
        int32_t node = r->agg[k];
        const lm_node *n = &cat->nodes[node];
        if (ch > 0 && !n->chan) continue;
        int32_t s = slot_of(ev, node, ch);
        int32_t so = slot_of(ev, n->a, ch);
        ev->miss[s] |= ev->miss[so];
        if (ev->miss[s]) continue;
        int poisoned = 0;
        for (int i = 0; i < n_workers; i++) poisoned |= workers[i].poison[so];
        if (poisoned) {
          ev->miss[s] = 1;
          continue;
        }
        double result = LM_NAN;
        int32_t ki = r->keep_index[n->a];
        if (r->ostat && ki >= 0 && r->bounded[ki] &&
            (n->op == LM_OP_MEDIAN || n->op == LM_OP_QUANTILE)) {
          result = lm_ostat_result(&r->ostat[(size_t)ki * (size_t)n_ch + (size_t)ch], n->op, n->k);
        } else if (n->op == LM_OP_MEDIAN || n->op == LM_OP_QUANTILE || n->op == LM_OP_STD) {
          if (!ordered) {
            /* the operand's values in row order, from the workers' parts */
            lm_eval_kept_values(workers, n_workers, (size_t)r->keep_index[n->a] * (size_t)n_ch + (size_t)ch, one);
            n_ordered = lm_fold_order_values(one, n_rows, cat->nodes[n->a].masked, ops,
                                             n_ops < 8 ? ks : NULL, n_ops < 8 ? n_ops : 1,
                                             scratch, tmp, &nan_seen);
            ordered = 1;
          }
          result = lm_fold_order(n->op, n->k, scratch, n_ordered, nan_seen);
        } else {
          lm_fold total;
          lm_fold_init(&total);
          for (int i = 0; i < n_workers; i++)
            lm_fold_merge(&total, &workers[i].accs[r->acc_first[r->fold_of[k]] + (size_t)ch]);
          result = lm_fold_result(&total, n->op, r->req->weights != NULL);
        }
        ev->vals[s] = result;
      }
    }
  }
  lm_free(scratch);
  lm_free(tmp);
  lm_free(one);
  return NULL;
}

/* Finish the aggregates of a pass; order statistics (sorting) are split
 * between two threads when there are many rows. Aggregates are grouped by
 * operand in r->agg, so a split keeps most sorted copies shared. */
lm_status lm_eval_finalize(run *r, worker *workers, int n_workers) {
  finalize_job jobs[2] = {{r, workers, n_workers, 0, r->n_agg, LM_OK},
                          {r, workers, n_workers, r->n_agg, r->n_agg, LM_OK}};
  if (n_workers > 1 && r->n_keep > 1) {
    /* Split at an operand boundary near the middle. */
    int32_t mid = r->n_agg / 2;
    while (mid < r->n_agg && mid > 0 &&
           r->cat->nodes[r->agg[mid]].a == r->cat->nodes[r->agg[mid - 1]].a)
      mid++;
    jobs[0].end = mid;
    jobs[1].begin = mid;
    lm_run_pair(finalize_range, &jobs[0], &jobs[1]);
  } else {
    finalize_range(&jobs[0]);
  }
  return jobs[0].status != LM_OK ? jobs[0].status : jobs[1].status;
}

/* Over the budget, mark operands whose order statistics are all medians
 * and quantiles (a standard deviation sums the sorted values, so its
 * operand is kept) to be found by passes instead of kept: in the order of
 * the aggregates, as many as it takes for the others to fit the budget,
 * so that the later passes compute no more than they must. */
lm_status lm_eval_plan_bounded(run *r, size_t n_rows) {
  const lm_catalog *cat = r->cat;
  int32_t n_ch = r->ev->n_ch;
  /* what the kept values would take: a channel operand's per channel */
  double slots = 0;
  for (int32_t node = 0; node < cat->n_nodes; node++)
    if (r->needed[node] && r->keep_index[node] >= 0) slots += cat->nodes[node].chan ? n_ch : 1;
  if (slots * (double)n_rows * sizeof(double) <= (double)r->stat_mem || n_rows >= UINT32_MAX)
    return LM_OK;
  /* the slots that fit */
  double room = floor((double)r->stat_mem / ((double)n_rows * sizeof(double)));
  r->bounded = lm_calloc((size_t)r->n_keep, 1);
  r->feeds = lm_calloc((size_t)r->n_agg + 1, 1);
  r->ostat = lm_calloc((size_t)r->n_keep * (size_t)n_ch, sizeof *r->ostat);
  r->onode = lm_calloc((size_t)cat->n_nodes + 1, 1);
  if (!r->bounded || !r->feeds || !r->ostat || !r->onode) return LM_ENOMEM;
  for (int32_t k = 0; k < r->n_agg && slots > room; k++) {
    int32_t a = cat->nodes[r->agg[k]].a, ki = r->keep_index[a];
    if (ki < 0 || r->bounded[ki]) continue;
    int ops[LM_OSTAT_MAX_OPS];
    double ks[LM_OSTAT_MAX_OPS];
    int n_ops = 0, ok = 1;
    for (int32_t j = 0; j < r->n_agg; j++) {
      const lm_node *n = &cat->nodes[r->agg[j]];
      if (n->a != a) continue;
      if (n->op == LM_OP_STD || n->chan != cat->nodes[a].chan) ok = 0;
      if (n->op != LM_OP_MEDIAN && n->op != LM_OP_QUANTILE) continue;
      if (n_ops == LM_OSTAT_MAX_OPS) ok = 0;
      else ops[n_ops] = n->op, ks[n_ops++] = n->k;
    }
    if (!ok || !n_ops) continue;
    r->bounded[ki] = 1;
    slots -= cat->nodes[a].chan ? n_ch : 1;
    r->feeds[k] = 1;
    r->onode[a] = 1;
    for (int32_t ch = 0; ch < (cat->nodes[a].chan ? n_ch : 1); ch++)
      lm_ostat_init(&r->ostat[(size_t)ki * (size_t)n_ch + (size_t)ch], ops, ks, n_ops,
                    cat->nodes[a].masked);
  }
  /* The later passes compute only what the bounded operands read (nodes
   * come after their operands). */
  for (int32_t node = cat->n_nodes - 1; node >= 0; node--) {
    if (!r->onode[node] || r->buf_index[node] < 0) continue;
    int32_t ops[3];
    lm_eval_operands(cat, node, r->req->norm, ops);
    for (int o = 0; o < 3; o++)
      if (ops[o] >= 0 && cat->nodes[ops[o]].vector) r->onode[ops[o]] = 1;
  }
  return LM_OK;
}

/* After the pass that counted their top digits: read the blocks again
 * until every wanted rank of the bounded operands is known. */
lm_status lm_eval_bounded_passes(run *r, worker *workers, int n_workers, int parallel) {
  size_t n_states = (size_t)r->n_keep * (size_t)r->ev->n_ch;
  for (int mode = -1;; mode = -1) {
    size_t pending = 0;
    for (size_t i = 0; i < n_states; i++) {
      if (!r->ostat[i].n_ops) continue;
      lm_ostat_finish(&r->ostat[i], n_workers);
      pending += lm_ostat_pending(&r->ostat[i]);
    }
    if (!pending) break;
    mode = pending <= r->stat_mem / sizeof(uint64_t) ? LM_OSTAT_COLLECT : LM_OSTAT_REFINE;
    for (size_t i = 0; i < n_states; i++)
      if (r->ostat[i].n_ops && lm_ostat_prepare(&r->ostat[i], mode, n_workers) != LM_OK)
        return LM_ENOMEM;
    r->opass = 1;
    uint64_t t0 = lm_phase_begin();
    if (n_workers == 2 && parallel) lm_run_pair(lm_eval_work, &workers[0], &workers[1]);
    else for (int i = 0; i < n_workers; i++) lm_eval_work(&workers[i]);
    lm_phase_end(mode == LM_OSTAT_COLLECT ? "medians, collect pass" : "medians, count pass",
                 t0);
    r->opass = 0;
    for (int i = 0; i < n_workers; i++)
      if (workers[i].status != LM_OK) return workers[i].status;
  }
  return LM_OK;
}
