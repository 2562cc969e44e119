/*
 * totals.c - the analysis of a workload of per-kernel totals only (a
 * file of kernel statistics, lm_workload_totals): the top-kernels table
 * from the totals, and nothing that needs dispatches. Its rows are the
 * kernels -k keeps (unlike a workload of dispatches, where -k narrows the
 * metrics: here the table is all there is to narrow); the median is not
 * known and stays blank, never 0; Pct is each kernel's share of the time
 * of every kernel in the file, so a filter does not change it.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "analyze/analyze_private.h"

/* An option the totals cannot answer: the error naming it. */
static lm_status cannot(lm_analyze_ctx *c, const char *option, const char *what) {
  return lm_fail(c->diag, LM_EINVAL, c->w->path,
                 "%s: the file holds per-kernel totals only (no dispatches): %s", option, what);
}

lm_status lm_analyze_totals_check(lm_analyze_ctx *c) {
  const lm_analyze_opts *o = c->o;
  if (o->dispatch && o->dispatch->n) return cannot(c, "-d", "there are no dispatches to select; only the top kernels can be shown");
  if (o->gpu && o->gpu->n) return cannot(c, "-g", "the GPU of each kernel is not known; only the top kernels can be shown");
  if (o->instance && o->instance->n) return cannot(c, "--instance", "there are no dispatches to select; only the top kernels can be shown");
  if (o->rank && o->rank->n) return cannot(c, "--rank", "no MPI rank is recorded; only the top kernels can be shown");
  if (o->n_regions) return cannot(c, "-r", "no region is recorded; only the top kernels can be shown");
  if (o->clock_measured) return cannot(c, "--clock measured", "no clock was sampled; only the top kernels can be shown");
  for (size_t i = 0; i < o->n_blocks; i++)
    if (strcmp(o->blocks[i], "0") != 0 && strcmp(o->blocks[i], "0.1") != 0) {
      char option[160];
      snprintf(option, sizeof option, "-b %.140s", o->blocks[i]);
      return cannot(c, option, "no panel, table or metric but the top kernels (-b 0 or 0.1) can be shown");
    }
  return LM_OK;
}

/* The totals' rows in table order: by total time, then name. */
typedef struct entry {
  const char *name;
  double calls, total, mean;
} entry;

static int cmp_entry(const void *a, const void *b, void *unused) {
  (void)unused;
  const entry *x = a, *y = b;
  if (x->total != y->total) return x->total < y->total ? 1 : -1;
  return strcmp(x->name, y->name);
}

lm_status lm_analyze_top_totals(lm_analyze_ctx *c, lm_rtable *t) {
  const lm_table *tot = lm_workload_totals(c->w), *pmc = c->w->pmc;
  static const char *const names[4] = {"Kernel_ID", "Calls", "TotalDurationNs", "MeanNs"};
  const double *v[4];
  for (int k = 0; k < 4; k++) {
    long col = lm_table_find(tot, names[k]);
    if (col < 0) return lm_fail_at(c->diag, LM_EDATA, c->w->path, 0, names[k], "missing from the kernel totals");
    if (!(v[k] = lm_table_values(tot, (size_t)col, c->diag))) return c->diag ? c->diag->status : LM_EIO;
  }
  uint8_t *keep = lm_malloc(pmc->n_strings ? pmc->n_strings : 1);
  entry *rows = lm_malloc((tot->n_rows ? tot->n_rows : 1) * sizeof *rows);
  lm_status st = keep && rows ? LM_OK : lm_oom(c->diag, NULL);
  c->pmc = pmc;
  if (st == LM_OK) st = lm_analyze_kernel_filters(c, keep);
  size_t n = 0;
  double all = 0;
  for (size_t r = 0; st == LM_OK && r < tot->n_rows; r++) {
    double id = v[0][r];
    if (!(id >= 0 && id < (double)pmc->n_strings) || id != floor(id) || !(v[1][r] >= 1) || !(v[2][r] >= 0)) {
      st = lm_fail_at(c->diag, LM_EDATA, c->w->path, (long)r + 1, LM_TOTALS_SOURCE,
                      "row %zu: kernel %g, %g calls, %g ns is not a kernel's totals (a damaged workload)", r, id,
                      v[1][r], v[2][r]);
      break;
    }
    all += v[2][r];
    if (keep[(size_t)id]) rows[n++] = (entry){pmc->strings[(size_t)id], v[1][r], v[2][r], v[3][r]};
  }
  if (st == LM_OK && n == 0)
    st = lm_fail(c->diag, LM_EINVAL, c->w->path, "-k: no kernel of the file matches (%zu kernels)", tot->n_rows);
  if (st == LM_OK) {
    lm_sort(rows, n, sizeof *rows, cmp_entry, NULL);
    st = lm_analyze_top_shape(c, t, n);
  }
  for (size_t i = 0; st == LM_OK && i < n; i++)
    lm_analyze_top_row(c, t, i, rows[i].name, (size_t)rows[i].calls, rows[i].total, rows[i].mean, LM_NAN,
                       all > 0 ? rows[i].total / all * 100 : LM_NAN);
  for (size_t k = 0; st == LM_OK && k < c->o->n_kernel_index; k++) {
    long idx = c->o->kernel_index[k];
    if (idx < 0 || (size_t)idx >= n) {
      st = lm_fail(c->diag, LM_EINVAL, NULL, "--kernel-index %ld: the top-kernels table has %zu row%s (counted from 0)",
                   idx, n, n == 1 ? "" : "s");
      break;
    }
    t->cells[(size_t)idx * (size_t)t->n_cols + 7] = (lm_cell){LM_CELL_TEXT, 0, LM_NAN, "*"};
  }
  lm_free(keep);
  lm_free(rows);
  return st;
}
