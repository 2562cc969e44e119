/*
 * eval_internal.h - what the parts of the bulk evaluator share: eval.c
 * plans and drives the passes over the dispatches, eval_vm.c runs one
 * worker's share of a pass, eval_order.c finishes the aggregates and
 * drives the order statistics' extra passes. Private to the metrics
 * module.
 */
#ifndef LUMEN_METRICS_EVAL_INTERNAL_H
#define LUMEN_METRICS_EVAL_INTERNAL_H

#include "metrics/internal.h"

/* Rows of a chunk: the per-dispatch values a pass computes at a time. */
#define LM_EVAL_CHUNK 256

struct lm_eval {
  const lm_catalog *cat;
  int32_t n_ch;
  int32_t *slot;          /* per node: first slot, -1 when not needed */
  double *vals;           /* per slot: scalar value */
  uint8_t *miss;          /* per slot: 1 when missing */
  int32_t *table_channels;/* per table */
};

/* Everything one run needs, shared read-only by the worker threads. */
typedef struct run {
  const lm_catalog *cat;
  const lm_eval_request *req;
  lm_eval *ev;
  uint8_t *needed;
  int contiguous;         /* the selection is rows k, k+1, ... */
  /* per INPUT node: column values per channel (n_ch entries for channel
   * inputs, 1 otherwise), NULL when missing */
  const double ***cols;
  size_t **col_rows;      /* rows in that column's table */
  /* per INPUT node whose column is deferred: its table and, per channel,
   * the column index (-1 where that channel's column is absent or loaded) */
  const lm_table **def_table;
  long **def_col;
  /* the deferred columns of the current pass, fetched per block: */
  int32_t *fetch_index;          /* per node: index of channel 0's buffer, -1 */
  int32_t n_fetch;
  size_t block_rows;
  size_t fetch_stride;           /* values between two columns' buffers: the
                                    block (or the pass's rows, when fewer)
                                    plus a cache line, so that a row's
                                    values do not all fall in one cache set */
  /* the current pass */
  int32_t stage;
  int32_t *vec_inv, n_vec_inv;   /* per-dispatch nodes, channel-invariant */
  int32_t *vec_ch, n_vec_ch;     /* per-dispatch nodes, per channel */
  int32_t *agg, n_agg;           /* aggregates fed by this pass */
  int32_t *fold_of;              /* per aggregate: the aggregate whose fold
                                    it reads (AVG, MIN, MAX, SUM and COUNT of
                                    one operand share one, weighted AVG apart) */
  uint8_t *keeper;               /* per aggregate: the first of its operand,
                                    which copies the kept values */
  int32_t *buf_index;            /* per node: index of its chunk buffer */
  int32_t n_bufs;
  size_t chunk_stride;           /* values between two chunk buffers: a
                                    chunk, or fewer rows when the pass has
                                    fewer (3 dispatches touch 3 values) */
  size_t *acc_first;             /* per aggregate: its first fold in a
                                    worker's accs (one per channel it has) */
  int32_t *keep_index;           /* per node: retained-values array, -1 */
  uint8_t *kept;                 /* per [keep index * n_ch + ch]: 1 when its
                                    values are kept (by the workers, see
                                    kept_part) */
  int32_t n_keep;
  /* over the memory budget: per keep index, 1 when its medians and
   * quantiles are found by passes (ostat.c) instead of kept values */
  uint8_t *bounded;
  lm_ostat *ostat;               /* [keep index * n_ch + ch] */
  uint8_t *feeds;                /* per aggregate: it feeds its operand's */
  uint8_t *onode;                /* per node: a bounded operand reads it */
  int opass;                     /* a later pass: only the bounded operands */
  size_t stat_mem;
} run;

/* One worker's share of a kept operand: the values of its rows
 * [w->begin, w->end), in the narrowest form that holds every one so far
 * with its bits. While every row held one value (constant columns are
 * common: idle blocks, configuration, zeros) that value and the rows
 * [from, upto) are all there is, so the operand takes no pages; per-
 * dispatch counters are integers, most of them small, and go as 16- or
 * 32-bit integers until a value does not fit, when the rows so far are
 * widened once. Rows never written read as 0. */
enum { KEPT_NONE, KEPT_SAME, KEPT_I16, KEPT_I32, KEPT_F64 };

typedef struct kept_part {
  uint64_t bits;   /* KEPT_SAME: the value */
  size_t from, upto;
  void *at;        /* the integer or double array of the worker's rows */
  uint8_t mode;
} kept_part;

typedef struct worker {
  run *r;
  int id;
  size_t begin, end;       /* selected-row range */
  double *fetched;         /* n_fetch * block_rows values of deferred columns */
  size_t block_first;      /* the selected row fetched[.][0] holds */
  lm_diag diag;            /* a fetch that failed */
  double *bufs;            /* n_bufs * chunk_stride */
  uint8_t *uni;            /* per buffer: 1 when the chunk's rows all hold one
                              value, kept in the buffer's first slot only */
  const double **src;      /* per buffer: where the chunk's values are read,
                              the buffer itself or, for an input, the
                              column or block they are in (not copied) */
  lm_fold *accs;           /* per aggregate per channel */
  lm_fold *pend;           /* a fold of this chunk waiting for a second one
                              of the same kind, to run the two together */
  const double *pend_v;
  int pend_masked;
  uint8_t *poison;         /* per node per channel */
  kept_part *kept;         /* per [keep index * n_ch + ch] */
  unsigned char *region;   /* where the parts' arrays lie (reserved space,
                              backed as written; on huge pages) */
  size_t region_bytes, region_used;
  lm_status status;
} worker;

static inline int32_t slot_of(const lm_eval *ev, int32_t node, int32_t ch) {
  return ev->slot[node] + (ev->cat->nodes[node].chan ? ch : 0);
}

/* lm_eval_operands: the nodes whose values `node` reads, in ops[0..3) (-1
 * where none); for $denom, the chosen normalization only. (eval_vm.c) */
void lm_eval_operands(const lm_catalog *cat, int32_t node, int32_t norm, int32_t ops[3]);
/* lm_eval_work: one worker's pass over its rows (a thread function: arg
 * is the worker; its status and diag tell how it went). (eval_vm.c) */
void *lm_eval_work(void *arg);
/* lm_eval_kept_values: kept operand k's n_rows values, in row order, into
 * out (from every worker's part). (eval_vm.c) */
void lm_eval_kept_values(const worker *workers, int n_workers, size_t k, double *out);
/* lm_eval_finalize: the values of the pass's aggregates from the workers'
 * folds, the kept operands and the bounded order statistics. */
lm_status lm_eval_finalize(run *r, worker *workers, int n_workers);
/* lm_eval_plan_bounded: when the kept operands of the pass would exceed
 * r->stat_mem, choose the operands whose medians and quantiles are found
 * by passes (r->bounded, r->ostat); LM_ENOMEM on failure. */
lm_status lm_eval_plan_bounded(run *r, size_t n_rows);
/* lm_eval_bounded_passes: after the pass that counted their top digits,
 * read the blocks again until every wanted rank is known; a failed read
 * returns the worker's status. */
lm_status lm_eval_bounded_passes(run *r, worker *workers, int n_workers, int parallel);

#endif
