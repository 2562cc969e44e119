/*
 * fold.c - folding per-dispatch values into aggregates, block by block.
 *
 * The evaluator never needs a whole column at once: AVG, MIN, MAX, SUM and
 * COUNT keep a running state (lm_fold) that takes the rows of a block in
 * order, so folding a column in blocks of any size gives the same bits as
 * folding it in one go, and the states of consecutive row ranges merge.
 * MEDIAN, QUANTILE and STD need the values themselves: the evaluator keeps
 * just the operands they read (one double per selected dispatch), and this
 * file sorts them by a radix sort and reads the statistics off the result.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "metrics/internal.h"

void lm_fold_init(lm_fold *f) {
  memset(f, 0, sizeof *f);
  f->min = LM_INF;
  f->max = -LM_INF;
}

void lm_fold_add(lm_fold *f, const double *v, size_t n, const double *weights, int masked) {
  if (weights) {
    /* Time weighting: each dispatch counts by its weight. */
    double wsum = f->wsum, wx = f->wx;
    for (size_t i = 0; i < n; i++) {
      double x = v[i];
      if (masked && lm_is_na(x)) continue;
      if (isnan(x)) {
        if (masked) f->nan = 1;
        continue;
      }
      wsum += weights[i];
      wx += weights[i] * x;
      f->count++;
    }
    f->wsum = wsum;
    f->wx = wx;
    return;
  }
  double sum = f->sum, mn = f->min, mx = f->max;
  size_t count = f->count;
  if (masked) {
    /* Skip "not available"; any other NaN makes the aggregate NaN. */
    for (size_t i = 0; i < n; i++) {
      double x = v[i];
      if (lm_is_na(x)) continue;
      if (isnan(x)) {
        f->nan = 1;
        continue;
      }
      sum += x;
      count++;
      if (x < mn) mn = x;
      if (x > mx) mx = x;
    }
  } else {
    for (size_t i = 0; i < n; i++) {
      double x = v[i];
      if (isnan(x)) continue;
      sum += x;
      count++;
      if (x < mn) mn = x;
      if (x > mx) mx = x;
    }
  }
  f->sum = sum;
  f->min = mn;
  f->max = mx;
  f->count = count;
}

/* One value into a running state, as lm_fold_add's loops take it. */
static inline __attribute__((always_inline)) void fold_one(double x, int masked, double *sum, size_t *count,
                                                           double *mn, double *mx, int *nan) {
  if (masked && lm_is_na(x)) return;
  if (isnan(x)) {
    if (masked) *nan = 1;
    return;
  }
  *sum += x;
  (*count)++;
  if (x < *mn) *mn = x;
  if (x > *mx) *mx = x;
}

void lm_fold_add2(lm_fold *f, const double *v, lm_fold *g, const double *u, size_t n, int masked) {
  double s1 = f->sum, mn1 = f->min, mx1 = f->max, s2 = g->sum, mn2 = g->min, mx2 = g->max;
  size_t c1 = f->count, c2 = g->count;
  int nan1 = f->nan, nan2 = g->nan;
  if (masked) {
    for (size_t i = 0; i < n; i++) {
      fold_one(v[i], 1, &s1, &c1, &mn1, &mx1, &nan1);
      fold_one(u[i], 1, &s2, &c2, &mn2, &mx2, &nan2);
    }
  } else {
    for (size_t i = 0; i < n; i++) {
      fold_one(v[i], 0, &s1, &c1, &mn1, &mx1, &nan1);
      fold_one(u[i], 0, &s2, &c2, &mn2, &mx2, &nan2);
    }
  }
  f->sum = s1;
  f->min = mn1;
  f->max = mx1;
  f->count = c1;
  f->nan = nan1;
  g->sum = s2;
  g->min = mn2;
  g->max = mx2;
  g->count = c2;
  g->nan = nan2;
}

/* The exponent of the lowest set bit of finite, nonzero x: x is an odd
 * integer times 2^result. */
static int low_exponent(double x) {
  int e;
  double m = frexp(fabs(x), &e); /* x = m * 2^e, 0.5 <= m < 1 */
  uint64_t u = (uint64_t)ldexp(m, 53); /* the 53-bit significand */
  return e - 53 + __builtin_ctzll(u);
}

/* Whether adding x to sum n times, one at a time, is exact at every step:
 * sum and x are integer multiples of a power of two q, and |sum| + n|x|
 * stays within 2^53 q, so every partial sum is a representable multiple of
 * q and no addition rounds. */
static int adds_exactly(double sum, double x, size_t n) {
  if (!isfinite(sum) || !isfinite(x) || n > ((size_t)1 << 52)) return 0;
  int q = low_exponent(x);
  if (sum != 0) {
    int qs = low_exponent(sum);
    if (qs < q) q = qs;
  }
  /* Scaled by 2^-q the bound is exact: powers of two scale without
   * rounding, and the sum of two doubles under 2^54 is within one
   * rounding of the true value, which the comparison allows for. */
  double bound = ldexp(fabs(sum), -q) + ldexp(fabs(x), -q) * (double)n;
  return bound < 9007199254740992.0 / 2; /* 2^52: room for that rounding */
}

void lm_fold_add_same(lm_fold *f, double x, size_t n, const double *weights, int masked) {
  if (n == 0 || (masked && lm_is_na(x))) return;
  if (isnan(x)) {
    if (masked) f->nan = 1;
    return;
  }
  if (weights) {
    double wsum = f->wsum, wx = f->wx;
    for (size_t i = 0; i < n; i++) {
      wsum += weights[i];
      wx += weights[i] * x;
    }
    f->wsum = wsum;
    f->wx = wx;
    f->count += n;
    return;
  }
  /* The sum never holds -0 (it starts at +0, and a sum that comes back to
   * zero is +0), so adding a zero of either sign leaves its bits alone. */
  if (x != 0) {
    if (adds_exactly(f->sum, x, n)) {
      f->sum += x * (double)n;
    } else {
      double sum = f->sum;
      for (size_t i = 0; i < n; i++) sum += x;
      f->sum = sum;
    }
  }
  f->count += n;
  if (x < f->min) f->min = x;
  if (x > f->max) f->max = x;
}

void lm_fold_merge(lm_fold *into, const lm_fold *from) {
  into->nan |= from->nan;
  into->sum += from->sum;
  into->count += from->count;
  into->wsum += from->wsum;
  into->wx += from->wx;
  if (from->min < into->min) into->min = from->min;
  if (from->max > into->max) into->max = from->max;
}

double lm_fold_result(const lm_fold *f, int op, int weighted) {
  double result = LM_NAN;
  switch ((lm_op)op) {
  case LM_OP_AVG:
    if (weighted) result = f->count && f->wsum > 0 ? f->wx / f->wsum : LM_NAN;
    else result = f->count ? f->sum / (double)f->count : LM_NAN;
    break;
  case LM_OP_MIN: result = f->count ? f->min : LM_NAN; break;
  case LM_OP_MAX: result = f->count ? f->max : LM_NAN; break;
  case LM_OP_SUM: result = f->sum; break;
  case LM_OP_COUNT: result = (double)f->count; break;
  default: break;
  }
  if (f->nan && op != LM_OP_COUNT) result = LM_NAN;
  return result;
}

size_t lm_fold_sorted(const double *kept, size_t n, int masked, double *sorted, double *tmp,
                      int *nan_seen) {
  return lm_fold_order_values(kept, n, masked, NULL, NULL, 0, sorted, tmp, nan_seen);
}

double lm_fold_order(int op, double k, const double *sorted, size_t n, int nan_seen) {
  /* The median takes the middle value(s) directly; quantiles interpolate
   * (NaN next to an infinity, as numpy does). A masked operand's NaN makes
   * quantiles and STD NaN; the median skips it. */
  if (op == LM_OP_MEDIAN)
    return n == 0 ? LM_NAN : n % 2 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
  if (nan_seen) return LM_NAN;
  if (op == LM_OP_QUANTILE) return lm_quantile_sorted(sorted, n, k);
  if (op != LM_OP_STD || n < 2) return LM_NAN;
  double mean = 0;
  for (size_t i = 0; i < n; i++) mean += sorted[i];
  mean /= (double)n;
  double ss = 0;
  for (size_t i = 0; i < n; i++) ss += (sorted[i] - mean) * (sorted[i] - mean);
  return sqrt(ss / (double)(n - 1));
}

/* Sort doubles (no NaN) by an LSD radix sort on their bit patterns, 11
 * bits per pass. All six digit histograms come from one read; a pass whose
 * digit is the same in every value (common: counters are small integers,
 * whose low mantissa bits are zero) is skipped. */
void lm_sort_values(double *v, double *tmp, size_t n) {
  if (n < 64) {
    for (size_t i = 1; i < n; i++) {
      double x = v[i];
      size_t j = i;
      while (j > 0 && v[j - 1] > x) {
        v[j] = v[j - 1];
        j--;
      }
      v[j] = x;
    }
    return;
  }
  enum { PASSES = 6, DIGITS = 2048 };
  static _Thread_local size_t count[PASSES][DIGITS];
  memset(count, 0, sizeof count);
  uint64_t *a = (uint64_t *)(void *)v, *b = (uint64_t *)(void *)tmp;
  for (size_t i = 0; i < n; i++) {
    uint64_t u;
    memcpy(&u, &v[i], sizeof u);
    u = (u >> 63) ? ~u : (u | 0x8000000000000000ULL);
    a[i] = u;
    for (int p = 0; p < PASSES; p++) count[p][(u >> (p * 11)) & (DIGITS - 1)]++;
  }
  for (int pass = 0; pass < PASSES; pass++) {
    int shift = pass * 11;
    size_t *c = count[pass];
    if (c[(a[0] >> shift) & (DIGITS - 1)] == n) continue; /* one digit value */
    size_t sum = 0;
    for (int d = 0; d < DIGITS; d++) {
      size_t k = c[d];
      c[d] = sum;
      sum += k;
    }
    for (size_t i = 0; i < n; i++) b[c[(a[i] >> shift) & (DIGITS - 1)]++] = a[i];
    uint64_t *t = a;
    a = b;
    b = t;
  }
  for (size_t i = 0; i < n; i++) {
    uint64_t u = a[i];
    u = (u >> 63) ? (u & 0x7FFFFFFFFFFFFFFFULL) : ~u;
    memcpy(&v[i], &u, sizeof u);
  }
}

/* ------------------------------------------------------------ selection */

/* The radix sort's total order as unsigned keys: -0 before +0. */
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

/* Put the k-th smallest of keys[lo, hi) at k, smaller ones before it and
 * larger ones after (three-way partitions, so repeated values cost no
 * more than distinct ones). *eq_lo, *eq_hi: a range around k whose keys
 * all equal the k-th (at least [k, k + 1)), so that other ranks in it are
 * placed too. */
static void select_key(uint64_t *keys, size_t lo, size_t hi, size_t k, size_t *eq_lo, size_t *eq_hi) {
  *eq_lo = k;
  *eq_hi = k + 1;
  while (hi - lo > 16) {
    uint64_t a = keys[lo], b = keys[lo + (hi - lo) / 2], c = keys[hi - 1];
    uint64_t pivot = a < b ? (b < c ? b : (a < c ? c : a)) : (a < c ? a : (b < c ? c : b));
    size_t lt = lo, i = lo, gt = hi;
    while (i < gt) {
      uint64_t x = keys[i];
      if (x < pivot) {
        keys[i++] = keys[lt];
        keys[lt++] = x;
      } else if (x > pivot) {
        keys[i] = keys[--gt];
        keys[gt] = x;
      } else {
        i++;
      }
    }
    if (k < lt) {
      hi = lt;
    } else if (k >= gt) {
      lo = gt;
    } else {
      *eq_lo = lt;
      *eq_hi = gt;
      return;
    }
  }
  for (size_t i = lo + 1; i < hi; i++) {
    uint64_t x = keys[i];
    size_t j = i;
    while (j > lo && keys[j - 1] > x) {
      keys[j] = keys[j - 1];
      j--;
    }
    keys[j] = x;
  }
}

void lm_select_keys(uint64_t *keys, size_t n, size_t k) {
  size_t eq_lo, eq_hi;
  if (k < n) select_key(keys, 0, n, k, &eq_lo, &eq_hi);
}

/* Place ranks[r0, r1) (ascending) within keys[lo, hi). */
static void place(uint64_t *keys, size_t lo, size_t hi, const size_t *ranks, size_t r0, size_t r1) {
  while (r0 < r1 && ranks[r0] < lo) r0++;
  while (r1 > r0 && ranks[r1 - 1] >= hi) r1--;
  if (r0 >= r1 || hi - lo < 2) return;
  size_t mid = r0 + (r1 - r0) / 2, k = ranks[mid], eq_lo, eq_hi;
  select_key(keys, lo, hi, k, &eq_lo, &eq_hi);
  /* the ranks in [eq_lo, eq_hi) hold the k-th key already */
  place(keys, lo, eq_lo, ranks, r0, mid);
  place(keys, eq_hi, hi, ranks, mid + 1, r1);
}

static int cmp_size(const void *a, const void *b) {
  size_t x = *(const size_t *)a, y = *(const size_t *)b;
  return (x > y) - (x < y);
}

size_t lm_fold_order_values(const double *kept, size_t n, int masked, const int *ops,
                            const double *ks, size_t n_ops, double *out, double *tmp,
                            int *nan_seen) {
  size_t m = 0;
  int full = !ks;
  for (size_t i = 0; i < n_ops && !full; i++) full = ops[i] != LM_OP_MEDIAN && ops[i] != LM_OP_QUANTILE;
  /* The values without NaN: as radix keys straight away when they will be
   * selected (most often), else as they are. */
  uint64_t *keys = (uint64_t *)(void *)out;
  int seen = 0;
  if (full || n < 64) {
    for (size_t i = 0; i < n; i++) {
      if (!isnan(kept[i])) out[m++] = kept[i];
      else if (!lm_is_na(kept[i])) seen = 1;
    }
  } else {
    for (size_t i = 0; i < n; i++) {
      if (!isnan(kept[i])) keys[m++] = key_of(kept[i]);
      else if (!lm_is_na(kept[i])) seen = 1;
    }
    if (m < 64) {
      for (size_t i = 0; i < m; i++) out[i] = value_of(keys[i]);
      full = 1;
    }
  }
  *nan_seen = masked ? seen : 0;
  if (full || m < 64) {
    lm_sort_values(out, tmp, m);
    return m;
  }
  size_t ranks[16], n_ranks = 0;
  for (size_t i = 0; i < n_ops; i++) {
    if (ops[i] == LM_OP_MEDIAN) {
      ranks[n_ranks++] = m / 2;
      if (m % 2 == 0) ranks[n_ranks++] = m / 2 - 1;
    } else {
      /* the positions lm_quantile_sorted reads */
      double pos = ks[i] * (double)(m - 1);
      size_t lo = (size_t)floor(pos);
      if (lo >= m - 1) {
        ranks[n_ranks++] = m - 1;
      } else {
        ranks[n_ranks++] = lo;
        ranks[n_ranks++] = lo + 1;
      }
    }
  }
  qsort(ranks, n_ranks, sizeof *ranks, cmp_size);
  place(keys, 0, m, ranks, 0, n_ranks);
  /* Only the wanted places are read: only they become values again (each
   * once: two statistics may read one place). */
  for (size_t i = 0; i < n_ranks; i++)
    if (i == 0 || ranks[i] != ranks[i - 1]) out[ranks[i]] = value_of(keys[ranks[i]]);
  return m;
}
