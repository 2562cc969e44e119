/*
 * ostat.c - exact medians and quantiles without keeping the operand, for when
 * the order statistics' operands would not fit the memory budget.
 *
 * The evaluator reads the blocks again: a pass counts the top 11 bits of each
 * value's monotone key (fold.c), which places every wanted rank in a bucket;
 * further passes collect a bucket's keys when they fit the budget, else count
 * its next 11 bits, down to the whole key. Invariant: the ranks and the
 * arithmetic on their values are the in-memory path's, so results have the
 * same bits (its stable sort under 64 values included). docs/streaming.md,
 * "Medians and quartiles in bounded memory".
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "metrics/internal.h"

static inline uint64_t key_of(double x) {
  uint64_t u;
  memcpy(&u, &x, sizeof u);
  return (u >> 63) ? ~u : (u | 0x8000000000000000ULL);
}

static inline double value_of(uint64_t u) {
  u = (u >> 63) ? (u & 0x7FFFFFFFFFFFFFFFULL) : ~u;
  double x;
  memcpy(&x, &u, sizeof x);
  return x;
}

/* The digit below `hi` known bits: its width and shift. */
static inline int digit_width(int hi) {
  return 64 - hi < LM_OSTAT_DIGIT ? 64 - hi : LM_OSTAT_DIGIT;
}
static inline int digit_shift(int hi) { return 64 - hi - digit_width(hi); }
static inline int in_prefix(uint64_t key, uint64_t prefix, int hi) {
  return hi == 0 || (key >> (64 - hi)) == prefix;
}

static lm_ostat_hist *hist_new(void) {
  lm_ostat_hist *h = lm_calloc(1, sizeof *h);
  if (!h) return NULL;
  for (size_t b = 0; b < LM_OSTAT_BUCKETS; b++) h->min[b] = UINT64_MAX;
  return h;
}

static void hist_add(lm_ostat_hist *h, uint64_t key, int shift) {
  size_t b = (size_t)(key >> shift) & (LM_OSTAT_BUCKETS - 1);
  h->count[b]++;
  if (key < h->min[b]) h->min[b] = key;
  if (key > h->max[b]) h->max[b] = key;
}

void lm_ostat_init(lm_ostat *s, const int *ops, const double *ks, int n_ops, int masked) {
  memset(s, 0, sizeof *s);
  for (int i = 0; i < n_ops && i < LM_OSTAT_MAX_OPS; i++) {
    s->ops[i] = ops[i];
    s->ks[i] = ks[i];
  }
  s->n_ops = n_ops < LM_OSTAT_MAX_OPS ? n_ops : LM_OSTAT_MAX_OPS;
  s->masked = masked;
}

void lm_ostat_fini(lm_ostat *s) {
  for (int w = 0; w < 2; w++) lm_free(s->h0[w]);
  for (size_t j = 0; j < s->n_ranks; j++) {
    for (int w = 0; w < 2; w++) lm_free(s->r[j].h[w]);
    lm_free(s->r[j].buf);
  }
  memset(s, 0, sizeof *s);
}

lm_status lm_ostat_prepare(lm_ostat *s, int mode, int n_workers) {
  s->mode = mode;
  if (mode == LM_OSTAT_COUNT) {
    for (int w = 0; w < n_workers; w++)
      if (!s->h0[w] && !(s->h0[w] = hist_new())) return LM_ENOMEM;
    return LM_OK;
  }
  for (size_t j = 0; j < s->n_ranks; j++) {
    lm_ostat_rank *q = &s->r[j];
    if (q->done || q->owner != (int)j) continue;
    if (mode == LM_OSTAT_REFINE) {
      for (int w = 0; w < n_workers; w++)
        if (!(q->h[w] = hist_new())) return LM_ENOMEM;
    } else {
      q->buf = lm_malloc((q->count ? q->count : 1) * sizeof *q->buf);
      if (!q->buf) return LM_ENOMEM;
      q->fill[0] = 0;
      q->fill[1] = q->cw[0];
    }
  }
  return LM_OK;
}

void lm_ostat_add(lm_ostat *s, int worker, const double *v, size_t n) {
  if (s->mode == LM_OSTAT_COUNT) {
    lm_ostat_hist *h = s->h0[worker];
    for (size_t i = 0; i < n; i++) {
      double x = v[i];
      if (isnan(x)) {
        if (!lm_is_na(x)) s->nan[worker] = 1;
        continue;
      }
      hist_add(h, key_of(x), digit_shift(0));
      if (s->n_few[worker] < LM_OSTAT_FEW) s->few[worker][s->n_few[worker]++] = x;
    }
    return;
  }
  for (size_t i = 0; i < n; i++) {
    double x = v[i];
    if (isnan(x)) continue;
    uint64_t key = key_of(x);
    for (size_t j = 0; j < s->n_ranks; j++) {
      lm_ostat_rank *q = &s->r[j];
      if (q->done || q->owner != (int)j || !in_prefix(key, q->prefix, q->hi)) continue;
      if (s->mode == LM_OSTAT_REFINE) hist_add(q->h[worker], key, digit_shift(q->hi));
      else q->buf[q->fill[worker]++] = key;
    }
  }
}

/* Rank j's bucket in the histograms h[0..n_workers) of the digit below its
 * prefix: narrow the prefix to it; done when its key is known. */
static void locate(lm_ostat_rank *q, lm_ostat_hist *const *h, int n_workers) {
  int width = digit_width(q->hi);
  size_t before = 0;
  for (size_t b = 0; b < LM_OSTAT_BUCKETS; b++) {
    size_t c = 0;
    uint64_t mn = UINT64_MAX, mx = 0;
    for (int w = 0; w < n_workers; w++) {
      c += h[w]->count[b];
      if (h[w]->min[b] < mn) mn = h[w]->min[b];
      if (h[w]->count[b] && h[w]->max[b] > mx) mx = h[w]->max[b];
    }
    if (q->within >= before + c) {
      before += c;
      continue;
    }
    q->within -= before;
    q->prefix = q->hi == 0 ? b : (q->prefix << width) | b;
    q->hi += width;
    q->count = c;
    for (int w = 0; w < n_workers; w++) q->cw[w] = h[w]->count[b];
    if (mn == mx || q->within == 0 || q->hi == 64) q->done = 1, q->key = mn;
    else if (q->within == c - 1) q->done = 1, q->key = mx;
    return;
  }
}

static int cmp_size(const void *a, const void *b) {
  size_t x = *(const size_t *)a, y = *(const size_t *)b;
  return (x > y) - (x < y);
}

/* Ranks sharing a bucket share its histograms and collected keys. */
static void share(lm_ostat *s) {
  for (size_t j = 0; j < s->n_ranks; j++) {
    lm_ostat_rank *q = &s->r[j];
    q->owner = (int)j;
    for (size_t i = 0; i < j; i++)
      if (!s->r[i].done && s->r[i].owner == (int)i && s->r[i].hi == q->hi &&
          s->r[i].prefix == q->prefix) {
        q->owner = (int)i;
        break;
      }
  }
}

void lm_ostat_finish(lm_ostat *s, int n_workers) {
  if (s->mode == LM_OSTAT_COUNT) {
    size_t m = 0;
    for (int w = 0; w < n_workers; w++)
      for (size_t b = 0; b < LM_OSTAT_BUCKETS; b++) m += s->h0[w]->count[b];
    s->m = m;
    s->nan_seen = s->masked && (s->nan[0] || s->nan[1]);
    /* the ranks lm_fold_order_values places */
    size_t ranks[2 * LM_OSTAT_MAX_OPS], n = 0;
    for (int i = 0; i < s->n_ops && m > 0; i++) {
      if (s->ops[i] == LM_OP_MEDIAN) {
        ranks[n++] = m / 2;
        if (m % 2 == 0) ranks[n++] = m / 2 - 1;
      } else if (s->ops[i] == LM_OP_QUANTILE) {
        size_t lo = 0, hi = 0;
        double frac;
        lm_quantile_ranks(m, s->ks[i], &lo, &hi, &frac);
        ranks[n++] = lo;
        ranks[n++] = hi;
      }
    }
    qsort(ranks, n, sizeof *ranks, cmp_size);
    /* Few values: all of them, in row order, sorted as fold.c sorts. */
    double few[2 * LM_OSTAT_FEW], tmp[2 * LM_OSTAT_FEW];
    if (m < LM_OSTAT_FEW) {
      memcpy(few, s->few[0], s->n_few[0] * sizeof *few);
      memcpy(few + s->n_few[0], s->few[1], s->n_few[1] * sizeof *few);
      lm_sort_values(few, tmp, m);
    }
    s->n_ranks = 0;
    for (size_t i = 0; i < n; i++)
      if (i == 0 || ranks[i] != ranks[i - 1]) {
        lm_ostat_rank *q = &s->r[s->n_ranks++];
        memset(q, 0, sizeof *q);
        q->rank = q->within = ranks[i];
        if (m < LM_OSTAT_FEW) q->done = 1, q->key = key_of(few[q->rank]);
        else locate(q, s->h0, n_workers);
      }
    for (int w = 0; w < 2; w++) {
      lm_free(s->h0[w]);
      s->h0[w] = NULL;
    }
  } else {
    for (size_t j = 0; j < s->n_ranks; j++) {
      lm_ostat_rank *q = &s->r[j];
      if (q->done) continue;
      lm_ostat_rank *o = &s->r[q->owner];
      if (s->mode == LM_OSTAT_REFINE) {
        locate(q, o->h, n_workers);
      } else {
        lm_select_keys(o->buf, o->count, q->within);
        q->key = o->buf[q->within];
        q->done = 1;
      }
    }
    for (size_t j = 0; j < s->n_ranks; j++) {
      for (int w = 0; w < 2; w++) {
        lm_free(s->r[j].h[w]);
        s->r[j].h[w] = NULL;
      }
      lm_free(s->r[j].buf);
      s->r[j].buf = NULL;
    }
  }
  share(s);
}

size_t lm_ostat_pending(const lm_ostat *s) {
  size_t total = 0;
  for (size_t j = 0; j < s->n_ranks; j++)
    if (!s->r[j].done && s->r[j].owner == (int)j) total += s->r[j].count;
  return total;
}

static double at(const lm_ostat *s, size_t rank) {
  for (size_t j = 0; j < s->n_ranks; j++)
    if (s->r[j].rank == rank) return value_of(s->r[j].key);
  return LM_NAN; /* not reached: every read rank was placed */
}

double lm_ostat_result(const lm_ostat *s, int op, double k) {
  size_t m = s->m;
  if (op == LM_OP_MEDIAN)
    return m == 0 ? LM_NAN : m % 2 ? at(s, m / 2) : (at(s, m / 2 - 1) + at(s, m / 2)) / 2;
  if (s->nan_seen || op != LM_OP_QUANTILE || m == 0) return LM_NAN;
  size_t lo = 0, hi = 0;
  double frac = 0;
  if (lm_quantile_ranks(m, k, &lo, &hi, &frac)) return at(s, lo);
  return lm_quantile_mix(at(s, lo), at(s, hi), frac);
}
