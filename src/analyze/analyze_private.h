/*
 * analyze_private.h - the analyze module's internals shared by analyze.c
 * (the result tables, lm_analyze_run) and rows.c (which dispatches the
 * filters select, lm_analyze_rows) and by nothing else: other modules use
 * analyze.h, and nothing here is an interface they may rely on.
 */
#ifndef LUMEN_ANALYZE_PRIVATE_H
#define LUMEN_ANALYZE_PRIVATE_H

#include <stddef.h>
#include <stdint.h>

#include "analyze/analyze.h"

/* One analysis, or one selection of rows, under way. */
typedef struct lm_analyze_ctx {
  const lm_workload *w;
  const lm_catalog *cat;     /* NULL for a selection alone */
  const lm_analyze_opts *o;
  lm_analysis *an;           /* the result being built (lm_analyze_run) */
  lm_arena *arena;           /* the result's: tables, titles, cells */
  lm_diag *diag;
  lm_status status;          /* the first failure of an allocation */
  const lm_table *pmc;
  const lm_sysinfo *info;    /* table 1.1: the selected rank's (merged MPI parts), or NULL */
  long col_kernel, col_dispatch, col_gpu, col_start, col_end, col_grbm; /* in pmc, -1 when absent */
} lm_analyze_ctx;

/* The number in column col of row `row` of t, NaN where the column is
 * absent or the cell holds none. */
static inline double cell_value(const lm_table *t, long col, size_t row) {
  const double *v = col < 0 ? NULL : lm_table_values(t, (size_t)col, NULL);
  return v ? v[row] : LM_NAN;
}

/* The string id of row's kernel name in c->pmc, -1 where it has none. */
static inline int32_t kernel_id(const lm_analyze_ctx *c, size_t row) {
  return c->pmc->cols[c->col_kernel].text_ids ? c->pmc->cols[c->col_kernel].text_ids[row] : -1;
}

/* Row's Dispatch_ID, or its position where the workload has none. */
static inline double dispatch_id(const lm_analyze_ctx *c, size_t row) {
  return c->col_dispatch >= 0 ? cell_value(c->pmc, c->col_dispatch, row) : (double)row;
}

/* lm_analyze_find_columns: c->pmc = pmc and the columns of it that
 * selection and the top tables read (c->col_*). (rows.c) */
void lm_analyze_find_columns(lm_analyze_ctx *c, const lm_table *pmc);

/* lm_analyze_select: the rows of the GPU, rank, region and dispatch
 * filters (*top_rows, the rows of the top-kernels and dispatch tables)
 * and, of those, the rows the kernel and instance filters keep
 * (*metric_rows); *chosen: a flag per kernel-name string, zeroed, for
 * lm_analyze_top to mark the kernels --kernel-index picks. Free the three
 * arrays with lm_free: on failure the row arrays are left NULL, *chosen
 * (when allocated) is the caller's to free all the same. Errors (in
 * c->diag): no dispatch, a filter that matches none (naming what the
 * data holds), a pattern that does not compile or match, out of memory.
 * The row arrays must be NULL on entry. (rows.c) */
lm_status lm_analyze_select(lm_analyze_ctx *c, size_t **top_rows, size_t *n_top, size_t **metric_rows,
                            size_t *n_metric, uint8_t **chosen);

/* lm_analyze_keep_chosen: keep, in order, the rows among rows[0, n) whose
 * kernels are marked in chosen; returns how many. (rows.c) */
size_t lm_analyze_keep_chosen(const lm_analyze_ctx *c, size_t *rows, size_t n, const uint8_t *chosen);

/* lm_analyze_top: build table 0.1 (top kernels) over rows[0, n) in c's
 * arena, and mark in chosen_names (by string id) the kernels
 * --kernel-index picks. Errors: an index past the table's end, out of
 * memory. (analyze.c) */
lm_status lm_analyze_top(lm_analyze_ctx *c, lm_rtable *t, const size_t *rows, size_t n, uint8_t *chosen_names);

/* lm_analyze_top_shape: table 0.1's columns (with "S" under
 * --kernel-index) and room for n_rows rows, in c's arena.
 * lm_analyze_top_row: row i of it (times in ns, shown in the time unit
 * asked for; NaN is a blank cell, unknown). (analyze.c) */
lm_status lm_analyze_top_shape(lm_analyze_ctx *c, lm_rtable *t, size_t n_rows);
void lm_analyze_top_row(lm_analyze_ctx *c, lm_rtable *t, size_t i, const char *kernel, size_t count, double sum_ns,
                        double mean_ns, double median_ns, double pct);

/* lm_analyze_kernel_filters: the -k patterns, evaluated once per kernel
 * name of c->pmc: kernel_ok[s] = 1 for the names they keep. Errors: a
 * pattern that does not compile, whose matching fails or reaches its
 * limits, or that c->o->check stops. (rows.c) */
lm_status lm_analyze_kernel_filters(lm_analyze_ctx *c, uint8_t *kernel_ok);

/* lm_analyze_totals_check: the options a workload of per-kernel totals
 * only can answer (lm_workload_totals): no dispatch, GPU, instance, rank
 * or region filter, no --clock measured, and no -b item but the top
 * kernels ("0", "0.1"); each other one is an error that says why.
 * lm_analyze_top_totals: table 0.1 from those totals, narrowed by -k,
 * longest total first; the median is unknown (blank), the Pct of each
 * kernel its share of every kernel's time. Errors: a -k that keeps no
 * kernel, a --kernel-index past the table, a damaged totals table.
 * (totals.c) */
lm_status lm_analyze_totals_check(lm_analyze_ctx *c);
lm_status lm_analyze_top_totals(lm_analyze_ctx *c, lm_rtable *t);

/* lm_analyze_mark_uncollected: in an analysis of a workload read from
 * another tool's files (workload->format set), the first value cell of
 * each blank metric row whose formula reads a counter the workload lacks
 * says "not collected" (uncollected.c). */
lm_status lm_analyze_mark_uncollected(lm_analysis *an, lm_diag *diag);

#endif
