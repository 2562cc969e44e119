/*
 * ops.c - the scalar meaning of each operation, shared by constant folding
 * in the compiler and by the evaluator, so that a folded constant and an
 * evaluated one can never disagree.
 *
 * Semantics are Python's where the reference tool runs Python: true
 * division (x/0 is ±inf, 0/0 NaN, as pandas gives for columns), floor
 * modulo, round-half-even, min/max that keep the first argument unless a
 * later one compares smaller/larger.
 */
#include <math.h>
#include <stdlib.h>

#include "metrics/internal.h"

double lm_py_mod(double a, double b) {
  if (b == 0 || isnan(a) || isnan(b) || isinf(a)) return LM_NAN;
  double r = fmod(a, b);
  if (r == 0) return copysign(0.0, b); /* Python: a zero takes b's sign */
  if ((r < 0) != (b < 0)) r += b;
  return r;
}

double lm_py_round(double x, int digits) {
  if (!isfinite(x)) return x;
  if (digits == 0) return nearbyint(x); /* default rounding: half to even */
  double scale = pow(10.0, digits);
  double y = nearbyint(x * scale) / scale;
  return isfinite(y) ? y : x;
}

int lm_quantile_ranks(size_t n, double q, size_t *lo, size_t *hi, double *frac) {
  double pos = q * (double)(n - 1);
  *lo = (size_t)floor(pos);
  if (*lo >= n - 1) {
    *lo = *hi = n - 1;
    *frac = 0;
    return 1;
  }
  *hi = *lo + 1;
  *frac = pos - (double)*lo;
  return 0;
}

double lm_quantile_mix(double a, double b, double frac) {
  /* numpy's linear interpolation, stable for equal neighbours */
  double diff = b - a;
  return frac >= 0.5 ? b - diff * (1 - frac) : a + diff * frac;
}

double lm_quantile_sorted(const double *sorted, size_t n, double q) {
  if (n == 0) return LM_NAN;
  size_t lo, hi;
  double frac;
  if (lm_quantile_ranks(n, q, &lo, &hi, &frac)) return sorted[n - 1];
  return lm_quantile_mix(sorted[lo], sorted[hi], frac);
}

static int cmp_value(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* Reorders v[lo, hi) so that v[k] holds the value of rank k, those
 * before it no larger and those after no smaller: Hoare's selection with
 * the middle element as pivot (which keeps each part smaller than the
 * whole); a range still large after 64 rounds (a crafted order) is sorted
 * instead. */
static void select_rank(double *v, size_t lo, size_t hi, size_t k) {
  for (int round = 0; hi - lo > 1; round++) {
    if (round == 64) {
      qsort(v + lo, hi - lo, sizeof *v, cmp_value);
      return;
    }
    double p = v[lo + (hi - 1 - lo) / 2];
    size_t i = lo, j = hi - 1;
    for (;;) {
      while (v[i] < p) i++;
      while (p < v[j]) j--;
      if (i >= j) break;
      double t = v[i];
      v[i++] = v[j];
      v[j--] = t;
    }
    /* [lo, j] <= p <= [j + 1, hi), lo <= j < hi - 1 */
    if (k <= j)
      hi = j + 1;
    else
      lo = j + 1;
  }
}

double lm_quantile_select(double *v, size_t n, double q) {
  if (n == 0) return LM_NAN;
  size_t lo, hi;
  double frac;
  int last = lm_quantile_ranks(n, q, &lo, &hi, &frac);
  select_rank(v, 0, n, lo);
  if (last) return v[n - 1];
  double next = v[hi];
  for (size_t i = hi + 1; i < n; i++)
    if (v[i] < next) next = v[i];
  return lm_quantile_mix(v[lo], next, frac);
}

double lm_scalar_op(int op, double a, double b, double c, double k) {
  switch ((lm_op)op) {
  case LM_OP_NEG: return -a;
  case LM_OP_NOT: return a == 0 ? 1 : 0;
  case LM_OP_ADD: return a + b;
  case LM_OP_SUB: return a - b;
  case LM_OP_MUL: return a * b;
  case LM_OP_DIV: return a / b;
  case LM_OP_MOD: return lm_py_mod(a, b);
  case LM_OP_POW: return pow(a, b);
  case LM_OP_EQ: return a == b;
  case LM_OP_NE: return a != b;
  case LM_OP_LT: return a < b;
  case LM_OP_LE: return a <= b;
  case LM_OP_GT: return a > b;
  case LM_OP_GE: return a >= b;
  case LM_OP_AND: return a != 0 && b != 0;
  case LM_OP_OR: return a != 0 || b != 0;
  case LM_OP_WHERE: return b != 0 ? a : c;
  case LM_OP_MIN2: return b < a ? b : a;
  case LM_OP_MAX2: return b > a ? b : a;
  case LM_OP_ROUND: return lm_py_round(a, (int)k);
  case LM_OP_TO_INT: return trunc(a) + 0.0; /* an integer has no -0 */
  default: return LM_NAN;
  }
}
