/* test_fold.c - folding aggregates block by block (metrics/fold.c).
 *
 * Columns of random values (with NaN, "not available", infinities, -0,
 * repeated values) are folded whole and in blocks of many sizes, down to
 * one row; every aggregate must come out with the same bits, and equal a
 * naive twin written here: sums in row order, a qsort for the order
 * statistics. Edge cases: no rows, one row, odd and even counts, masked
 * operands, weights, and two halves merged as the evaluator merges them. */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "metrics/internal.h"

#define N_MAX 5000

static int same_bits(double a, double b) { return memcmp(&a, &b, sizeof a) == 0; }

static uint64_t rng = 88172645463325252ULL;
static uint64_t next(void) {
  rng ^= rng << 13;
  rng ^= rng >> 7;
  rng ^= rng << 17;
  return rng;
}

/* A value of the kinds counters and metrics take. */
static double random_value(int masked) {
  uint64_t k = next() % 100;
  if (k < 5) return LM_NAN;
  if (masked && k < 10) return lm_na_value();
  if (k < 12) return 0.0;
  if (k < 13) return -0.0;
  if (k < 30) return (double)(next() % 8);             /* repeats */
  if (k < 60) return (double)(next() % 1000000);        /* counts */
  return ((double)(int64_t)(next() % 2000001) - 1000000.0) / 7.0; /* fractions */
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  if (x < y) return -1;
  if (x > y) return 1;
  return signbit(y) - signbit(x); /* -0 before +0 */
}

typedef struct naive {
  double sum, min, max, wsum, wx;
  size_t count;
  int nan;
  double sorted[N_MAX];
  size_t n_sorted;
} naive;

static void naive_fold(const double *v, const double *w, size_t n, int masked, naive *out) {
  memset(out, 0, sizeof *out);
  out->min = LM_INF;
  out->max = -LM_INF;
  for (size_t i = 0; i < n; i++) {
    if (lm_is_na(v[i]) && masked) continue;
    if (isnan(v[i])) {
      out->nan |= masked;
      continue;
    }
    out->sum += v[i];
    if (w) out->wsum += w[i], out->wx += w[i] * v[i];
    out->count++;
    if (v[i] < out->min) out->min = v[i];
    if (v[i] > out->max) out->max = v[i];
    out->sorted[out->n_sorted++] = v[i];
  }
  qsort(out->sorted, out->n_sorted, sizeof(double), cmp_double);
}

static const int ops[] = {LM_OP_AVG, LM_OP_MIN, LM_OP_MAX, LM_OP_SUM, LM_OP_COUNT};

/* Fold v in blocks of `block` rows (keeping the values, as the evaluator
 * does for order statistics) and compare with the whole fold and the twin. */
static void check_blocks(const double *v, const double *w, size_t n, size_t block, int masked) {
  static double kept[N_MAX], sorted[N_MAX], tmp[N_MAX], sorted_whole[N_MAX];
  static naive twin;
  lm_fold whole, blocks;
  lm_fold_init(&whole);
  lm_fold_add(&whole, v, n, w, masked);
  lm_fold_init(&blocks);
  for (size_t first = 0; first < n; first += block) {
    size_t len = n - first < block ? n - first : block;
    lm_fold_add(&blocks, v + first, len, w ? w + first : NULL, masked);
    memcpy(kept + first, v + first, len * sizeof *v);
  }
  naive_fold(v, w, n, masked, &twin);
  for (size_t i = 0; i < sizeof ops / sizeof *ops; i++) {
    double a = lm_fold_result(&blocks, ops[i], w != NULL), b = lm_fold_result(&whole, ops[i], w != NULL);
    CHECK(same_bits(a, b));
  }
  CHECK(blocks.count == twin.count);
  CHECK(same_bits(blocks.sum, w ? 0.0 : twin.sum));
  if (w) {
    CHECK(same_bits(blocks.wsum, twin.wsum) && same_bits(blocks.wx, twin.wx));
    double avg = lm_fold_result(&blocks, LM_OP_AVG, 1);
    CHECK(twin.nan || !twin.count ? isnan(avg) : same_bits(avg, twin.wx / twin.wsum));
  } else {
    double avg = lm_fold_result(&blocks, LM_OP_AVG, 0);
    CHECK(twin.nan || !twin.count ? isnan(avg) : same_bits(avg, twin.sum / (double)twin.count));
    CHECK(twin.nan || !twin.count ? isnan(lm_fold_result(&blocks, LM_OP_MIN, 0))
                                  : lm_fold_result(&blocks, LM_OP_MIN, 0) == twin.min);
    CHECK(twin.nan || !twin.count ? isnan(lm_fold_result(&blocks, LM_OP_MAX, 0))
                                  : lm_fold_result(&blocks, LM_OP_MAX, 0) == twin.max);
  }
  CHECK(lm_fold_result(&blocks, LM_OP_COUNT, 0) == (double)twin.count);
  /* Order statistics from the kept values. */
  int nan_blocks, nan_whole;
  size_t m = lm_fold_sorted(kept, n, masked, sorted, tmp, &nan_blocks);
  size_t m2 = lm_fold_sorted(v, n, masked, sorted_whole, tmp, &nan_whole);
  CHECK(m == twin.n_sorted && m2 == m && nan_blocks == nan_whole && nan_blocks == twin.nan);
  int sorted_ok = 1;
  /* (the insertion sort of short inputs keeps -0 and +0 as they came) */
  for (size_t i = 0; i < m && i < twin.n_sorted; i++) sorted_ok &= sorted[i] == twin.sorted[i];
  CHECK(sorted_ok);
  double med = lm_fold_order(LM_OP_MEDIAN, 0, sorted, m, nan_blocks);
  double want = m == 0 ? LM_NAN
                : m % 2 ? twin.sorted[m / 2]
                        : (twin.sorted[m / 2 - 1] + twin.sorted[m / 2]) / 2;
  CHECK(med == want || (isnan(med) && isnan(want)));
  for (double q = 0; q <= 1.0; q += 0.25) {
    double a = lm_fold_order(LM_OP_QUANTILE, q, sorted, m, nan_blocks);
    double b = lm_fold_order(LM_OP_QUANTILE, q, sorted_whole, m2, nan_whole);
    CHECK(same_bits(a, b) || (isnan(a) && isnan(b)));
    if (m && !twin.nan) {
      double pos = q * (double)(m - 1), lo = floor(pos);
      size_t i = (size_t)lo, j = i + 1 < m ? i + 1 : i;
      double naive_q = twin.sorted[i] + (twin.sorted[j] - twin.sorted[i]) * (pos - lo);
      CHECK_NEAR(a, naive_q, 1e-9 * (fabs(naive_q) + 1));
    }
  }
  /* A selection of the places that median and quartiles read gives the
   * bits a full sort gives. */
  {
    static double sel[N_MAX];
    const int sel_ops[4] = {LM_OP_QUANTILE, LM_OP_MEDIAN, LM_OP_QUANTILE, LM_OP_QUANTILE};
    const double sel_ks[4] = {0.25, 0, 0.75, 0.1};
    int nan_sel;
    size_t ms = lm_fold_order_values(kept, n, masked, sel_ops, sel_ks, 4, sel, tmp, &nan_sel);
    CHECK(ms == m && nan_sel == nan_blocks);
    for (int i = 0; i < 4; i++) {
      double a = lm_fold_order(sel_ops[i], sel_ks[i], sel, ms, nan_sel);
      double b = lm_fold_order(sel_ops[i], sel_ks[i], sorted_whole, m2, nan_whole);
      CHECK(same_bits(a, b) || (isnan(a) && isnan(b)));
    }
  }
  double sd = lm_fold_order(LM_OP_STD, 0, sorted, m, nan_blocks);
  if (m >= 2 && !twin.nan) {
    double mean = 0, ss = 0;
    for (size_t i = 0; i < m; i++) mean += twin.sorted[i];
    mean /= (double)m;
    for (size_t i = 0; i < m; i++) ss += (twin.sorted[i] - mean) * (twin.sorted[i] - mean);
    CHECK_NEAR(sd, sqrt(ss / (double)(m - 1)), 1e-12 * (sd + 1));
  } else {
    CHECK(isnan(sd));
  }
}

/* The evaluator's two halves: states of [0, h) and [h, n) merged. */
static void check_halves(const double *v, size_t n, size_t h) {
  lm_fold a, b, total;
  lm_fold_init(&a);
  lm_fold_init(&b);
  lm_fold_init(&total);
  for (size_t i = 0; i < h; i++) lm_fold_add(&a, v + i, 1, NULL, 0); /* blocks of one row */
  lm_fold_add(&b, v + h, n - h, NULL, 0);
  lm_fold_merge(&total, &a);
  lm_fold_merge(&total, &b);
  double s0 = 0, s1 = 0;
  size_t count = 0;
  for (size_t i = 0; i < n; i++) {
    if (isnan(v[i])) continue;
    if (i < h) s0 += v[i];
    else s1 += v[i];
    count++;
  }
  CHECK(same_bits(lm_fold_result(&total, LM_OP_SUM, 0), 0.0 + s0 + s1));
  CHECK(total.count == count);
}

/* lm_fold_add_same against lm_fold_add of the copies, from a state that
 * already holds `start` (folded the ordinary way): every field to the bit. */
static void check_same(double start, double x, size_t n, const double *w, int masked) {
  static double copies[N_MAX];
  lm_fold want, got;
  lm_fold_init(&want);
  lm_fold_add(&want, &start, 1, w, masked);
  got = want;
  for (size_t i = 0; i < n; i++) copies[i] = x;
  lm_fold_add(&want, copies, n, w ? w + 1 : NULL, masked);
  lm_fold_add_same(&got, x, n, w ? w + 1 : NULL, masked);
  CHECK(same_bits(want.sum, got.sum) && same_bits(want.min, got.min) && same_bits(want.max, got.max));
  CHECK(same_bits(want.wsum, got.wsum) && same_bits(want.wx, got.wx));
  CHECK(want.count == got.count && want.nan == got.nan);
}

int main(void) {
  static double v[N_MAX], w[N_MAX];
  static const size_t sizes[] = {0, 1, 2, 3, 4, 63, 64, 65, 256, 257, 1000, N_MAX};
  static const size_t blocks[] = {1, 2, 3, 7, 64, 255, 256, 257, 8192};
  for (size_t si = 0; si < sizeof sizes / sizeof *sizes; si++) {
    size_t n = sizes[si];
    for (int masked = 0; masked < 2; masked++) {
      for (size_t i = 0; i < n; i++) {
        v[i] = random_value(masked);
        w[i] = (double)(next() % 1000);
      }
      for (size_t bi = 0; bi < sizeof blocks / sizeof *blocks; bi++) {
        check_blocks(v, NULL, n, blocks[bi], masked);
        check_blocks(v, w, n, blocks[bi], masked);
      }
      if (n >= 2) check_halves(v, n, n / 2);
    }
  }
  /* Copies of one value: integers, fractions whose sums round, sums at the
   * edge of exactness (2^53), tiny and huge magnitudes, zeros of both
   * signs, infinities, NaN and "not available". */
  static const double xs[] = {0.0, -0.0, 1.0, -3.0, 0.5, 0.1, 1.0 / 3.0, 1e-300, 4.9e-324, 1e300,
                              4503599627370496.0, 9007199254740991.0, 12345.6789, -2.5e-7, LM_INF,
                              -LM_INF, LM_NAN, 0};
  static const double starts[] = {0.0, -0.0, 7.0, 0.3, -1e16, 9007199254740992.0, 1e-310, LM_INF,
                                  LM_NAN};
  static const size_t counts[] = {0, 1, 2, 255, 256, 4999};
  for (size_t xi = 0; xi < sizeof xs / sizeof *xs; xi++)
    for (size_t si = 0; si < sizeof starts / sizeof *starts; si++)
      for (size_t ci = 0; ci < sizeof counts / sizeof *counts; ci++)
        for (int masked = 0; masked < 2; masked++) {
          double x = xi + 1 == sizeof xs / sizeof *xs ? lm_na_value() : xs[xi];
          check_same(starts[si], x, counts[ci], NULL, masked);
          check_same(starts[si], x, counts[ci], w, masked);
        }
  for (int i = 0; i < 2000; i++) {
    double x = random_value(1), start = random_value(0);
    check_same(start, x, (size_t)(next() % 300), NULL, i & 1);
  }
  /* Two folds in one loop: the bits of folding each alone. */
  for (int i = 0; i < 400; i++) {
    static double u[300];
    int masked = i & 1;
    size_t n = (size_t)(next() % 300);
    for (size_t j = 0; j < n; j++) {
      v[j] = random_value(masked);
      u[j] = random_value(masked);
    }
    lm_fold f1, g1, f2, g2;
    lm_fold_init(&f1);
    lm_fold_init(&g1);
    double start = random_value(0);
    lm_fold_add(&f1, &start, 1, NULL, masked);
    f2 = f1;
    g2 = g1;
    lm_fold_add(&f1, v, n, NULL, masked);
    lm_fold_add(&g1, u, n, NULL, masked);
    lm_fold_add2(&f2, v, &g2, u, n, masked);
    CHECK(same_bits(f1.sum, f2.sum) && same_bits(f1.min, f2.min) && same_bits(f1.max, f2.max) &&
          f1.count == f2.count && f1.nan == f2.nan);
    CHECK(same_bits(g1.sum, g2.sum) && same_bits(g1.min, g2.min) && same_bits(g1.max, g2.max) &&
          g1.count == g2.count && g1.nan == g2.nan);
  }
  /* No rows: SUM and COUNT are 0, the rest has no value. */
  lm_fold f;
  lm_fold_init(&f);
  CHECK(isnan(lm_fold_result(&f, LM_OP_AVG, 0)) && isnan(lm_fold_result(&f, LM_OP_MIN, 0)));
  CHECK(lm_fold_result(&f, LM_OP_SUM, 0) == 0 && lm_fold_result(&f, LM_OP_COUNT, 0) == 0);
  CHECK(isnan(lm_fold_order(LM_OP_MEDIAN, 0, v, 0, 0)));
  /* One row, odd and even medians, written out. */
  double one[1] = {42.5}, odd[3] = {1, 5, 9}, even[4] = {1, 2, 8, 9};
  CHECK(lm_fold_order(LM_OP_MEDIAN, 0, one, 1, 0) == 42.5);
  CHECK(isnan(lm_fold_order(LM_OP_STD, 0, one, 1, 0)));
  CHECK(lm_fold_order(LM_OP_MEDIAN, 0, odd, 3, 0) == 5);
  CHECK(lm_fold_order(LM_OP_MEDIAN, 0, even, 4, 0) == 5);
  /* Only NaN: the aggregate of a masked operand is NaN, COUNT is 0. */
  double nans[3] = {LM_NAN, LM_NAN, lm_na_value()};
  lm_fold_init(&f);
  lm_fold_add(&f, nans, 3, NULL, 1);
  CHECK(isnan(lm_fold_result(&f, LM_OP_SUM, 0)) && lm_fold_result(&f, LM_OP_COUNT, 0) == 0);
  lm_fold_init(&f);
  lm_fold_add(&f, nans, 3, NULL, 0);
  CHECK(lm_fold_result(&f, LM_OP_SUM, 0) == 0 && isnan(lm_fold_result(&f, LM_OP_AVG, 0)));
  /* The radix sort orders -0 before +0 and matches qsort on big inputs. */
  static double a[N_MAX], b[N_MAX], tmp[N_MAX];
  for (size_t i = 0; i < N_MAX; i++) {
    double x = random_value(0);
    a[i] = b[i] = isnan(x) ? -0.0 : x;
  }
  lm_sort_values(a, tmp, N_MAX);
  qsort(b, N_MAX, sizeof *b, cmp_double);
  int same = 1;
  for (size_t i = 0; i < N_MAX; i++) same &= same_bits(a[i], b[i]);
  CHECK(same);
  return check_report("test_fold");
}
