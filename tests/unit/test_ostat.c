/* test_ostat.c - medians and quantiles found in passes (metrics/ostat.c)
 * against the in-memory path (fold.c).
 *
 * Random operands of every count from 1 to 1,000 and then up to 10,000
 * (ties, NaN, "not available", -0, infinities, subnormals, values packed
 * in one binade so that the top bits do not separate them, values apart
 * only in the last bits, and arbitrary bit patterns) are split between two workers and fed in random chunks,
 * pass after pass, as the evaluator does; the budget is zero (count down
 * to the whole key), a few values (collect after one or two refinements)
 * or ample (collect at once). Every result must have the bits of
 * lm_fold_order_values and lm_fold_order on the kept values. */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "metrics/internal.h"

#define N_MAX 10000

static int same_bits(double a, double b) { return memcmp(&a, &b, sizeof a) == 0; }

static uint64_t rng = 0x9E3779B97F4A7C15ULL;
static uint64_t next(void) {
  rng ^= rng << 13;
  rng ^= rng >> 7;
  rng ^= rng << 17;
  return rng;
}

static double from_bits(uint64_t u) {
  double x;
  memcpy(&x, &u, sizeof x);
  return x;
}

/* A value of kind `style`: 0 mixed, 1 packed in one binade, 2 few ties,
 * 3 apart only in the lowest mantissa bits (the last digit decides). */
static double random_value(int style, int masked) {
  uint64_t k = next() % 100;
  if (k < 3) return LM_NAN;
  if (masked && k < 8) return lm_na_value();
  if (style == 1) return 1048576.0 + (double)(next() % 5000); /* one binade */
  if (style == 2) return (double)(next() % 3) - 1.0;
  if (style == 3) return from_bits(0x3FF0000000000000ULL | (next() % 3000));
  if (k < 10) return 0.0;
  if (k < 12) return -0.0;
  if (k < 13) return LM_INF;
  if (k < 14) return -LM_INF;
  if (k < 17) return from_bits(next() % 0x000FFFFFFFFFFFFFULL + 1) * (k % 2 ? 1 : -1); /* subnormal */
  if (k < 35) return (double)(next() % 8);
  if (k < 60) return (double)(next() % 1000000);
  if (k < 80) {
    double x = from_bits(next());
    return isnan(x) ? 1.5 : x; /* any bit pattern */
  }
  return ((double)(int64_t)(next() % 2000001) - 1000000.0) / 7.0;
}

static void feed(lm_ostat *s, const double *v, size_t n, size_t split) {
  for (int w = 0; w < 2; w++) {
    size_t i = w ? split : 0, end = w ? n : split;
    while (i < end) {
      size_t len = 1 + next() % 300;
      if (len > end - i) len = end - i;
      lm_ostat_add(s, w, v + i, len);
      i += len;
    }
  }
}

/* The passes of the evaluator (eval_order.c, lm_eval_bounded_passes) for one operand. */
static int passes(lm_ostat *s, const double *v, size_t n, size_t budget) {
  size_t split = n > 1 ? next() % n : n;
  int n_passes = 1;
  CHECK(lm_ostat_prepare(s, LM_OSTAT_COUNT, 2) == LM_OK);
  feed(s, v, n, split);
  lm_ostat_finish(s, 2);
  for (size_t pending; (pending = lm_ostat_pending(s)) > 0; n_passes++) {
    int mode = pending <= budget / sizeof(uint64_t) ? LM_OSTAT_COLLECT : LM_OSTAT_REFINE;
    CHECK(lm_ostat_prepare(s, mode, 2) == LM_OK);
    feed(s, v, n, split);
    lm_ostat_finish(s, 2);
    if (n_passes > 8) {
      CHECK(!"too many passes");
      break;
    }
  }
  return n_passes;
}

static double *vals, *out, *tmp;

static void one(size_t n, int style, int masked, size_t budget, const int *ops,
                const double *ks, int n_ops, int *max_passes) {
  for (size_t i = 0; i < n; i++) vals[i] = random_value(style, masked);
  int nan_seen = 0;
  size_t m = lm_fold_order_values(vals, n, masked, ops, ks, (size_t)n_ops, out, tmp, &nan_seen);
  lm_ostat s;
  lm_ostat_init(&s, ops, ks, n_ops, masked);
  int p = passes(&s, vals, n, budget);
  if (p > *max_passes) *max_passes = p;
  for (int i = 0; i < n_ops; i++) {
    double want = lm_fold_order(ops[i], ks[i], out, m, nan_seen);
    double got = lm_ostat_result(&s, ops[i], ks[i]);
    if (!same_bits(want, got)) {
      CHECK(same_bits(want, got));
      fprintf(stderr, "n %zu style %d masked %d budget %zu op %d k %g: want %.17g got %.17g\n",
              n, style, masked, budget, ops[i], ks[i], want, got);
    }
  }
  lm_ostat_fini(&s);
}

int main(void) {
  vals = malloc(N_MAX * sizeof *vals);
  out = malloc(N_MAX * sizeof *out);
  tmp = malloc(N_MAX * sizeof *tmp);
  static const int median[] = {LM_OP_MEDIAN};
  static const int quartiles[] = {LM_OP_QUANTILE, LM_OP_QUANTILE};
  static const int all[] = {LM_OP_MEDIAN, LM_OP_QUANTILE, LM_OP_QUANTILE, LM_OP_QUANTILE,
                            LM_OP_QUANTILE};
  static const double no_k[] = {0}, q13[] = {0.25, 0.75}, q_all[] = {0, 0.25, 0.75, 0, 1};
  static const size_t budgets[] = {0, 64, 1 << 20};
  int max_passes[3] = {0, 0, 0};
  size_t cases = 0;
  for (size_t n = 1; n <= N_MAX; n += n < 1000 ? 1 : 1 + next() % 97) {
    for (int b = 0; b < 3; b++) {
      int style = (int)((n + (size_t)b) % 4), masked = (int)(n % 2);
      size_t budget = budgets[b];
      one(n, style, masked, budget, median, no_k, 1, &max_passes[b]);
      one(n, style, !masked, budget, quartiles, q13, 2, &max_passes[b]);
      double ks[2] = {(double)(next() % 1001) / 1000.0, (double)(next() % 7) / 6.0};
      one(n, (style + 1) % 4, masked, budget, quartiles, ks, 2, &max_passes[b]);
      one(n, (style + 2) % 4, masked, budget, all, q_all, 5, &max_passes[b]);
      cases += 4;
    }
  }
  /* All values NaN or "not available": no ranks, nothing pending. */
  for (size_t i = 0; i < 100; i++) vals[i] = i % 2 ? LM_NAN : lm_na_value();
  for (int masked = 0; masked < 2; masked++) {
    lm_ostat s;
    lm_ostat_init(&s, all, q_all, 5, masked);
    CHECK(passes(&s, vals, 100, 0) == 1);
    CHECK(isnan(lm_ostat_result(&s, LM_OP_MEDIAN, 0)));
    CHECK(isnan(lm_ostat_result(&s, LM_OP_QUANTILE, 0.5)));
    lm_ostat_fini(&s);
  }
  /* The budget decides how many passes: zero counts down the key, an
   * ample one collects after the first. */
  CHECK(max_passes[0] == 6);
  CHECK(max_passes[1] >= max_passes[2] && max_passes[0] > max_passes[2]);
  CHECK(max_passes[2] <= 2);
  fprintf(stderr, "%zu cases; most passes: %d (budget 0), %d (64 bytes), %d (1 MiB)\n", cases,
          max_passes[0], max_passes[1], max_passes[2]);
  free(vals);
  free(out);
  free(tmp);
  return check_report("test_ostat");
}
