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
  size_t m = 0;
  *nan_seen = 0;
  for (size_t i = 0; i < n; i++) {
    if (!isnan(kept[i])) sorted[m++] = kept[i];
    else if (!lm_is_na(kept[i])) *nan_seen = 1;
  }
  if (!masked) *nan_seen = 0;
  lm_sort_values(sorted, tmp, m);
  return m;
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
