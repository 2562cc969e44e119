/*
 * profile.h - collection policy, independent of any GPU vendor: which
 * counters the asked-for metrics need, how they are packed into counter
 * sets under the hardware's per-block limits, and (in the files that
 * follow) which set each dispatch gets.
 */
#ifndef LUMEN_PROFILE_H
#define LUMEN_PROFILE_H

#include <stddef.h>
#include <stdint.h>

#include "base/base.h"
#include "metrics/metrics.h"

/* ---------------------------------------------------------------- plans */

/* One hardware counter in a set. Values of per-instance counters come with
 * all their instances (TCC_HIT gives TCC_HIT[0..n] and TCC_HIT_sum). */
typedef struct lm_plan_counter {
  const char *name;     /* hardware counter: "SQ_WAVES", "TCC_HIT", "SQ_ACCUM_PREV_HIRES" */
  const char *block;    /* budget it uses: "SQ", "TCC", ... */
  const char *why;      /* metric ids that need it ("2.1.8, 11.2.2 and 4 more") */
  int32_t set;
  uint8_t replica;      /* an extra copy (cycle counters in every set) */
} lm_plan_counter;

typedef struct lm_plan_set {
  const char *accumulate; /* the level counter this set accumulates, or NULL */
  int32_t first, n;       /* counters[first .. first + n) */
} lm_plan_set;

typedef struct lm_plan {
  const char *arch;
  int32_t n_sets;
  lm_plan_set *sets;
  int32_t n_counters;
  lm_plan_counter *counters; /* grouped by set, in set order */
  int32_t lower_bound;       /* fewest sets any packing could use */
  int32_t n_missing;         /* counters the metrics name that the
                                architecture cannot collect */
  const char **missing;
  lm_arena *arena;
} lm_plan;

/* lm_plan_build: the counter sets for the metrics selected by -b items
 * (none: every metric). Counters are packed with as few sets as the
 * per-block limits allow (the lower bound: each accumulate counter in a set
 * of its own, then the most loaded block decides), keeping the counters of
 * one ratio in one set where they fit. Free with lm_plan_free. */
lm_status lm_plan_build(const lm_catalog *catalog, const char *const *items, size_t n_items,
                        lm_plan **out, lm_diag *diag);
void lm_plan_free(lm_plan *plan);

/* lm_plan_print: the plan as text: one block per set, each counter with
 * why it is needed; the last line is "sets: N (lower bound L)". */
void lm_plan_print(const lm_plan *plan, int verbose, lm_buf *out);

/* lm_plan_block: the budget a counter uses, e.g. "SQ" for SQC_DCACHE_HITS.
 * Writes into out (cap bytes). */
const char *lm_plan_block(const lm_catalog *catalog, const char *counter, char *out, size_t cap);

/* lm_plan_counter_base: the hardware counter a metric column reads:
 * "TCC_HIT_sum" and "TCC_HIT[3]" both read "TCC_HIT". */
const char *lm_plan_counter_base(const char *column, char *out, size_t cap);

#endif
