/*
 * ranks.c - the rank table of an MPI workload: per rank of the selected
 * dispatches its host, dispatch count, total kernel time and the summed
 * busy cycles and waves; the slowest and fastest rank, the load imbalance
 * (max / mean of the per-rank totals), and the kernels whose per-rank
 * time differs most (max / min over the ranks that ran them). One pass
 * over the selected rows into a rank x kernel grid of times: ranks and
 * kernels are few next to the rows.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analyze/analyze.h"

static int cmp_int32(const void *x, const void *y) {
  int32_t a = *(const int32_t *)x, b = *(const int32_t *)y;
  return (a > b) - (a < b);
}

/* The distinct ranks of rows (all rows when rows is NULL), sorted; *n of
 * them. NULL when out of memory or there are none. */
static int32_t *distinct_ranks(const lm_workload *w, const size_t *rows, size_t n_rows, size_t *n) {
  *n = 0;
  int32_t *v = lm_malloc((n_rows ? n_rows : 1) * sizeof *v);
  if (!v) return NULL;
  size_t k = 0;
  int32_t last = -2;
  for (size_t i = 0; i < n_rows; i++) {
    int32_t r = w->row_rank[rows ? rows[i] : i];
    if (r < 0 || r == last) continue; /* rows come in runs of one rank */
    v[k++] = last = r;
  }
  qsort(v, k, sizeof *v, cmp_int32);
  size_t m = 0;
  for (size_t i = 0; i < k; i++)
    if (!m || v[m - 1] != v[i]) v[m++] = v[i];
  *n = m;
  return v;
}

void lm_analyze_rank_list(const lm_workload *w, lm_buf *b) {
  size_t n = 0;
  int32_t *v = w->row_rank ? distinct_ranks(w, NULL, w->pmc->n_rows, &n) : NULL;
  if (!n) lm_buf_puts(b, "none");
  for (size_t i = 0; i < n;) {
    size_t j = i;
    while (j + 1 < n && v[j + 1] == v[j] + 1) j++;
    if (i) lm_buf_puts(b, ", ");
    if (j == i) lm_buf_printf(b, "%d", (int)v[i]);
    else lm_buf_printf(b, "%d:%d", (int)v[i], (int)v[j] + 1);
    i = j + 1;
  }
  lm_free(v);
}

static int find_rank(const int32_t *ranks, size_t n, int32_t r) {
  size_t lo = 0, hi = n;
  while (lo < hi) {
    size_t mid = (lo + hi) / 2;
    if (ranks[mid] < r) lo = mid + 1;
    else hi = mid;
  }
  return lo < n && ranks[lo] == r ? (int)lo : -1;
}

static int cmp_kernels(const void *x, const void *y) {
  const lm_rank_kernel *a = x, *b = y;
  /* Kernels every compared rank ran (a finite ratio) first, by ratio. */
  int fa = !isnan(a->ratio) && a->n_ranks > 1, fb = !isnan(b->ratio) && b->n_ranks > 1;
  if (fa != fb) return fb - fa;
  if (fa && a->ratio != b->ratio) return a->ratio < b->ratio ? 1 : -1;
  return (a->max_ns < b->max_ns) - (a->max_ns > b->max_ns);
}

lm_status lm_analyze_ranks(lm_analysis *a, const size_t *rows, size_t n_rows, lm_diag *diag) {
  const lm_workload *w = a->workload;
  a->ranks = NULL;
  if (!w->row_rank || !n_rows) return LM_OK;
  const lm_table *pmc = w->pmc;
  size_t n_ranks = 0;
  int32_t *ranks = distinct_ranks(w, rows, n_rows, &n_ranks);
  double *grid = NULL;
  lm_status st = LM_OK;
  if (!ranks) goto nomem;
  if (n_ranks < 2) goto done;
  long kcol = lm_table_find(pmc, "Kernel_Name"), cs = lm_table_find(pmc, "Start_Timestamp"),
       ce = lm_table_find(pmc, "End_Timestamp"), cg = lm_table_find(pmc, "GRBM_GUI_ACTIVE"),
       cw = lm_table_find(pmc, "SQ_WAVES");
  size_t n_kernels = pmc->n_strings ? pmc->n_strings : 1;
  lm_rank_table *t = lm_arena_alloc(a->arena, sizeof *t);
  lm_rank_row *rr = lm_arena_alloc(a->arena, n_ranks * sizeof *rr);
  grid = lm_calloc(n_ranks * n_kernels, sizeof *grid);
  uint8_t *ran = lm_calloc(n_ranks * n_kernels, 1);
  if (!t || !rr || !grid || !ran) {
    lm_free(ran);
    goto nomem;
  }
  for (size_t i = 0; i < n_ranks; i++) {
    rr[i].rank = ranks[i];
    rr[i].busy_cycles = cg >= 0 ? 0 : LM_NAN;
    rr[i].waves = cw >= 0 ? 0 : LM_NAN;
  }
  int last_rank = -2, at = -1;
  for (size_t i = 0; i < n_rows; i++) {
    size_t r = rows[i];
    int32_t rank = w->row_rank[r];
    if (rank < 0) continue;
    if (rank != last_rank) at = find_rank(ranks, n_ranks, last_rank = rank);
    if (at < 0) continue;
    lm_rank_row *x = &rr[at];
    if (!x->host && w->row_host) x->host = w->row_host[r];
    double d = cs >= 0 && ce >= 0 ? pmc->cols[ce].values[r] - pmc->cols[cs].values[r] : LM_NAN;
    x->dispatches++;
    if (!isnan(d)) x->total_ns += d;
    if (cg >= 0 && !isnan(pmc->cols[cg].values[r])) x->busy_cycles += pmc->cols[cg].values[r];
    if (cw >= 0 && !isnan(pmc->cols[cw].values[r])) x->waves += pmc->cols[cw].values[r];
    int32_t k = kcol >= 0 && pmc->cols[kcol].text_ids ? pmc->cols[kcol].text_ids[r] : -1;
    if (k >= 0 && (size_t)k < n_kernels) {
      grid[(size_t)at * n_kernels + (size_t)k] += isnan(d) ? 0 : d;
      ran[(size_t)at * n_kernels + (size_t)k] = 1;
    }
  }
  double sum = 0, max = -1, min = LM_INF;
  t->slowest = t->fastest = ranks[0];
  for (size_t i = 0; i < n_ranks; i++) {
    lm_rank_row *x = &rr[i];
    x->mean_ns = x->dispatches ? x->total_ns / (double)x->dispatches : LM_NAN;
    sum += x->total_ns;
    if (x->total_ns > max) max = x->total_ns, t->slowest = x->rank;
    if (x->total_ns < min) min = x->total_ns, t->fastest = x->rank;
  }
  t->imbalance = sum > 0 ? max / (sum / (double)n_ranks) : LM_NAN;
  /* Kernels: per-rank totals over the ranks that ran them. */
  lm_rank_kernel *ks = lm_arena_alloc(a->arena, n_kernels * sizeof *ks);
  if (!ks) {
    lm_free(ran);
    goto nomem;
  }
  size_t nk = 0;
  for (size_t k = 0; k < pmc->n_strings; k++) {
    lm_rank_kernel kk;
    memset(&kk, 0, sizeof kk);
    kk.max_ns = -1;
    kk.min_ns = LM_INF;
    for (size_t i = 0; i < n_ranks; i++) {
      if (!ran[i * n_kernels + k]) continue;
      double v = grid[i * n_kernels + k];
      kk.n_ranks++;
      if (v > kk.max_ns) kk.max_ns = v, kk.max_rank = ranks[i];
      if (v < kk.min_ns) kk.min_ns = v, kk.min_rank = ranks[i];
    }
    if (!kk.n_ranks) continue;
    kk.kernel = pmc->strings[k];
    kk.ratio = kk.min_ns > 0 ? kk.max_ns / kk.min_ns : LM_NAN;
    ks[nk++] = kk;
  }
  lm_free(ran);
  qsort(ks, nk, sizeof *ks, cmp_kernels);
  t->rows = rr;
  t->n_rows = n_ranks;
  t->kernels = ks;
  t->n_kernels = nk < LM_RANK_KERNELS ? nk : LM_RANK_KERNELS;
  a->ranks = t;
  goto done;
nomem:
  st = lm_oom(diag, NULL);
done:
  lm_free(ranks);
  lm_free(grid);
  return st;
}
