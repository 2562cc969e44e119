/*
 * ranks.c - the rank table of an MPI workload in the reports: one line per
 * rank (host, dispatches, total and mean kernel time, busy cycles, waves),
 * the slowest and fastest rank with the load imbalance, and the kernels
 * whose per-rank time differs most. Text shows the first ranks and the
 * extremes when there are many; JSON ("ranks") carries every rank. A
 * --split ranks profile, whose ranks' sets are combined into one view,
 * says instead which rank collected each counter set ("split").
 */
#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "report/report.h"

/* The most ranks text lists before it shows only the extremes. */
#define TEXT_RANKS 32

static void time_text(lm_buf *out, double ns) {
  if (isnan(ns)) lm_buf_printf(out, "%12s", "n/a");
  else if (ns >= 1e9) lm_buf_printf(out, "%10.3f s", ns / 1e9);
  else if (ns >= 1e6) lm_buf_printf(out, "%9.3f ms", ns / 1e6);
  else if (ns >= 1e3) lm_buf_printf(out, "%9.3f us", ns / 1e3);
  else lm_buf_printf(out, "%9.0f ns", ns);
}

static void count_text(lm_buf *out, double v) {
  if (isnan(v)) lm_buf_printf(out, " %14s", "n/a");
  else lm_buf_printf(out, " %14.0f", v);
}

static void rank_line(lm_buf *out, const lm_rank_row *x, const lm_rank_table *t) {
  /* The host as recorded, escaped for the terminal (a name is the
   * process's own text: control bytes are shown, not sent) and cut to
   * the column's 20 characters. */
  const char *host = x->host ? x->host : "-";
  lm_buf_printf(out, "  %6d  ", (int)x->rank);
  size_t width = lm_text_escape(out, host, strlen(host), 20);
  lm_buf_printf(out, "%*s %10zu ", (int)(20 - (width < 20 ? width : 20)), "", x->dispatches);
  time_text(out, x->total_ns);
  lm_buf_puts(out, " ");
  time_text(out, x->mean_ns);
  count_text(out, x->busy_cycles);
  count_text(out, x->waves);
  if (x->rank == t->slowest) lm_buf_puts(out, "  slowest");
  else if (x->rank == t->fastest) lm_buf_puts(out, "  fastest");
  lm_buf_putc(out, '\n');
}

void lm_report_ranks_text(const lm_analysis *a, lm_buf *out) {
  const lm_rank_table *t = a->ranks;
  if (!t || !t->n_rows) return;
  lm_buf_puts(out, "\n");
  for (int i = 0; i < 80; i++) lm_buf_puts(out, "─");
  lm_buf_printf(out, "\nRanks: %zu MPI ranks in the selection; slowest rank %d, fastest rank %d, load imbalance "
                     "%.3f\n(max / mean of the per-rank kernel time).\n\n",
                t->n_rows, (int)t->slowest, (int)t->fastest, t->imbalance);
  lm_buf_printf(out, "  %6s  %-20s %10s %12s %12s %14s %14s\n", "rank", "host", "dispatches", "kernel time",
                "mean", "busy cycles", "waves");
  for (size_t i = 0; i < t->n_rows; i++) {
    const lm_rank_row *x = &t->rows[i];
    int extreme = x->rank == t->slowest || x->rank == t->fastest;
    if (t->n_rows > TEXT_RANKS && i >= TEXT_RANKS / 2 && !extreme) {
      if (i == TEXT_RANKS / 2) lm_buf_printf(out, "  ... (%zu ranks; all of them in --format json)\n", t->n_rows);
      continue;
    }
    rank_line(out, x, t);
  }
  if (!t->n_kernels) return;
  lm_buf_puts(out, "\n  Kernels whose time differs most between ranks (max / min of the per-rank total):\n");
  for (size_t k = 0; k < t->n_kernels; k++) {
    const lm_rank_kernel *x = &t->kernels[k];
    lm_buf_puts(out, "    ");
    lm_text_escape(out, x->kernel, strlen(x->kernel), 60);
    lm_buf_puts(out, "\n      ");
    if (isnan(x->ratio)) lm_buf_puts(out, "n/a");
    else lm_buf_printf(out, "%.3fx", x->ratio);
    lm_buf_printf(out, ": rank %d ", (int)x->max_rank);
    time_text(out, x->max_ns);
    lm_buf_printf(out, ", rank %d ", (int)x->min_rank);
    time_text(out, x->min_ns);
    if (x->n_ranks < t->n_rows) lm_buf_printf(out, "; ran on %zu of the %zu ranks", x->n_ranks, t->n_rows);
    lm_buf_putc(out, '\n');
  }
}

static cJSON *num_or_null(double v) { return isnan(v) || isinf(v) ? cJSON_CreateNull() : cJSON_CreateNumber(v); }

void *lm_report_ranks_json(const lm_rank_table *t) {
  cJSON *o = cJSON_CreateObject();
  if (!o) return NULL;
  cJSON_AddNumberToObject(o, "n_ranks", (double)t->n_rows);
  cJSON_AddNumberToObject(o, "slowest", t->slowest);
  cJSON_AddNumberToObject(o, "fastest", t->fastest);
  cJSON_AddItemToObject(o, "imbalance", num_or_null(t->imbalance));
  cJSON *rows = cJSON_AddArrayToObject(o, "ranks");
  for (size_t i = 0; i < t->n_rows; i++) {
    const lm_rank_row *x = &t->rows[i];
    cJSON *j = cJSON_CreateObject();
    cJSON_AddNumberToObject(j, "rank", x->rank);
    if (x->host) cJSON_AddStringToObject(j, "host", x->host);
    else cJSON_AddNullToObject(j, "host");
    cJSON_AddNumberToObject(j, "dispatches", (double)x->dispatches);
    cJSON_AddItemToObject(j, "kernel_time_ns", num_or_null(x->total_ns));
    cJSON_AddItemToObject(j, "mean_ns", num_or_null(x->mean_ns));
    cJSON_AddItemToObject(j, "busy_cycles", num_or_null(x->busy_cycles));
    cJSON_AddItemToObject(j, "waves", num_or_null(x->waves));
    cJSON_AddItemToArray(rows, j);
  }
  cJSON *ks = cJSON_AddArrayToObject(o, "kernels");
  for (size_t k = 0; k < t->n_kernels; k++) {
    const lm_rank_kernel *x = &t->kernels[k];
    cJSON *j = cJSON_CreateObject();
    cJSON_AddStringToObject(j, "name", x->kernel);
    cJSON_AddNumberToObject(j, "ranks", (double)x->n_ranks);
    cJSON_AddItemToObject(j, "ratio", num_or_null(x->ratio));
    cJSON_AddNumberToObject(j, "max_rank", x->max_rank);
    cJSON_AddItemToObject(j, "max_ns", num_or_null(x->max_ns));
    cJSON_AddNumberToObject(j, "min_rank", x->min_rank);
    cJSON_AddItemToObject(j, "min_ns", num_or_null(x->min_ns));
    cJSON_AddItemToArray(ks, j);
  }
  return o;
}

void lm_report_split_text(const lm_analysis *a, lm_buf *out) {
  const lm_workload *w = a->workload;
  if (!w || !w->set_rank) return;
  lm_buf_puts(out, "\n");
  for (int i = 0; i < 80; i++) lm_buf_puts(out, "─");
  lm_buf_printf(out, "\nCounter sets split over %d ranks (--split ranks): each dispatch row combines the\n"
                     "sets its ranks collected of the same dispatch.\n",
                w->split_ranks);
  for (int32_t r = 0; r < w->split_ranks; r++) {
    int n = 0;
    for (int g = 0; g < w->split_sets_total; g++) n += w->set_rank[g] == r;
    if (!n) continue;
    lm_buf_printf(out, "  rank %d: set%s", (int)r, n > 1 ? "s" : "");
    for (int g = 0, k = 0; g < w->split_sets_total; g++)
      if (w->set_rank[g] == r) lm_buf_printf(out, "%s %d", k++ ? "," : "", g);
    lm_buf_putc(out, '\n');
  }
  int missing = 0;
  for (int g = 0; g < w->split_sets_total; g++) missing += w->set_rank[g] < 0;
  if (missing) lm_buf_printf(out, "  %d set%s collected by no rank\n", missing, missing > 1 ? "s" : "");
}

void *lm_report_split_json(const lm_workload *w) {
  if (!w || !w->set_rank) return NULL;
  cJSON *o = cJSON_CreateObject();
  if (!o) return NULL;
  cJSON_AddNumberToObject(o, "ranks", w->split_ranks);
  cJSON_AddNumberToObject(o, "sets", w->split_sets_total);
  cJSON *by = cJSON_AddArrayToObject(o, "set_rank");
  for (int g = 0; g < w->split_sets_total; g++)
    cJSON_AddItemToArray(by, w->set_rank[g] >= 0 ? cJSON_CreateNumber(w->set_rank[g]) : cJSON_CreateNull());
  return o;
}
