/* test_eval_kept.c - the order statistics of kept operands whose rows
 * hold one value for a while.
 *
 * The bulk evaluator does not write out a kept operand's values while
 * every row so far held the same one (eval_vm.c, keep_values): a run of one
 * value is written only when a row differs, and an operand that held one
 * value throughout is read off that value. Columns here are built to hit
 * each case on one and on two threads (the second thread starts at row
 * 5,120 of 10,000): one value throughout, a run that ends inside the first
 * thread's rows, a different single value in each thread's rows, a run
 * that ends at the very last row, one blank throughout and values that
 * vary from the first row, blanks up to the last row, and integers that
 * widen from 16 to 32 bits and to doubles (-0.0 among them). Values are
 * kept as 16- or 32-bit integers while they fit, so the widening must
 * carry every earlier row. Medians, quantiles and standard deviations must
 * have the bits of the same formulas applied here to the sorted values. */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "load/load.h"
#include "metrics/metrics.h"

#define ROWS 10000

enum { K_ONE, K_ENDS, K_HALVES, K_LAST, K_VARY, K_WIDENS, K_WIDE, K_ZERO, N_COLS };
static const char *const col_names[N_COLS] = {"ONE",   "ENDS", "HALVES", "LAST",
                                              "VARY", "WIDENS", "WIDE", "ZERO"};

static double cell_value(int c, size_t r) {
  switch (c) {
  case K_ONE: return 7;
  case K_ENDS: return r < 3000 ? 3 : (double)(r % 10);
  case K_HALVES: return r < 5120 ? 1 : 2;
  case K_LAST: return r + 1 < ROWS ? 5 : 4;
  /* 16-bit integers, then 32-bit ones, then larger, then fractions, in
   * each thread's rows */
  case K_WIDENS: {
    size_t q = r % 5120;
    double v = (double)(r % 97) - 40;
    return q < 1000 ? v : q < 2000 ? v * 1000 : q < 3000 ? v * 1e7 : q < 4000 ? v / 8 : v;
  }
  /* a 32-bit integer from the first row on, then one 16-bit one */
  case K_WIDE: return r == 7000 ? 3 : 100000 + (double)(r % 13);
  /* -0.0 keeps its sign (it is not a 16-bit integer): the median is -0 */
  case K_ZERO: return r % 10 < 7 ? -0.0 : (double)(r % 3);
  default: return (double)((r * 7919) % 1001);
  }
}

static int write_file(const char *path, const char *text) {
  FILE *f = fopen(path, "w");
  if (!f) return 0;
  fputs(text, f);
  return fclose(f) == 0;
}

/* Ascending, -0 before +0 (the evaluator's order). */
static int cmp_d(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  if (x == y) return (signbit(y) != 0) - (signbit(x) != 0);
  return (x > y) - (x < y);
}

/* What the evaluator computes from n sorted values. */
static double expect(const char *stat, const double *s, size_t n) {
  if (strcmp(stat, "median") == 0) return n % 2 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
  if (strcmp(stat, "q1") == 0) return lm_quantile_sorted(s, n, 0.25);
  if (strcmp(stat, "q3") == 0) return lm_quantile_sorted(s, n, 0.75);
  double mean = 0, ss = 0;
  for (size_t i = 0; i < n; i++) mean += s[i];
  mean /= (double)n;
  for (size_t i = 0; i < n; i++) ss += (s[i] - mean) * (s[i] - mean);
  return sqrt(ss / (double)(n - 1));
}

int main(void) {
  char dir[] = "/tmp/lumen-kept-XXXXXX";
  if (!mkdtemp(dir)) return 1;
  lm_buf b = {0};
  lm_buf_puts(&b, "Dispatch_ID,Kernel_Name,GPU_ID");
  for (int c = 0; c < N_COLS; c++) lm_buf_printf(&b, ",%s", col_names[c]);
  lm_buf_puts(&b, ",BLANK\n");
  for (size_t r = 0; r < ROWS; r++) {
    lm_buf_printf(&b, "%zu,k,0", r);
    for (int c = 0; c < N_COLS; c++) lm_buf_printf(&b, ",%.17g", cell_value(c, r));
    lm_buf_puts(&b, r + 1 < ROWS ? ",\n" : ",9\n");
  }
  char path[256];
  snprintf(path, sizeof path, "%s/pmc_perf.csv", dir);
  CHECK(write_file(path, lm_buf_cstr(&b)));
  snprintf(path, sizeof path, "%s/sysinfo.csv", dir);
  CHECK(write_file(path, "gpu_arch,cu_per_gpu\ngfxtest,104\n"));
  lm_buf_fini(&b);
  lm_workload *w = NULL;
  lm_diag d;
  CHECK(lm_workload_read(dir, &w, &d) == LM_OK);
  if (!w) {
    char line[512];
    fprintf(stderr, "%s\n", lm_diag_format(&d, line, sizeof line));
  }

  lm_buf def = {0};
  lm_buf_puts(&def, "panel: 2\ntitle: kept\ntables:\n- id: '2.1'\n  columns: {Metric: name, "
                    "Median: median, Std: std, Q1: q1, Q3: q3}\n  rows:\n");
  for (int c = 0; c < N_COLS; c++)
    lm_buf_printf(&def, "  - metric: %s\n    expr: \"%s * 2\"\n", col_names[c], col_names[c]);
  lm_buf_puts(&def, "  - metric: BLANK\n    expr: \"BLANK\"\n");
  const char *names[] = {"arch.yaml", "02_kept.yaml"};
  const char *texts[] = {"arch: gfxtest\n", lm_buf_cstr(&def)};
  lm_catalog *cat = NULL;
  CHECK(lm_metrics_compile_texts(names, texts, 2, &cat, &d) == LM_OK);
  static const char *const stats[] = {"median", "std", "q1", "q3"};
  size_t *sel = malloc(ROWS * sizeof *sel);
  double *sorted = malloc(ROWS * sizeof *sorted);
  for (size_t r = 0; r < ROWS; r++) sel[r] = r;
  for (int threads = 1; cat && w && threads <= 2; threads++) {
    lm_eval_request req = {w, sel, ROWS, 0, NULL, threads, 0, NULL, 0, 0};
    lm_eval *ev = NULL;
    CHECK(lm_eval_run(cat, &req, &ev, &d) == LM_OK);
    if (!ev) continue;
    for (int c = 0; c < N_COLS; c++) {
      for (size_t r = 0; r < ROWS; r++) sorted[r] = cell_value(c, r) * 2;
      qsort(sorted, ROWS, sizeof *sorted, cmp_d);
      const lm_rowdef *rd = &cat->rows[cat->tables[0].first_row + c];
      for (int s = 0; s < 4; s++) {
        double want = expect(stats[s], sorted, ROWS), have = LM_NAN;
        int ok = lm_eval_node(ev, cat->cells[rd->first_cell + 1 + s].node, 0, &have);
        CHECK(ok && memcmp(&have, &want, sizeof have) == 0);
        if (!ok || memcmp(&have, &want, sizeof have) != 0)
          fprintf(stderr, "  %d thread(s), %s %s: %.17g, expected %.17g\n", threads, col_names[c],
                  stats[s], have, want);
      }
    }
    /* Blank in every row but the last: the median and quantiles skip the
     * blanks (as pandas does); one value has no standard deviation. */
    const lm_rowdef *rd = &cat->rows[cat->tables[0].first_row + N_COLS];
    double v = 0;
    CHECK(lm_eval_node(ev, cat->cells[rd->first_cell + 1].node, 0, &v) == 1 && v == 9);
    CHECK(lm_eval_node(ev, cat->cells[rd->first_cell + 2].node, 0, &v) == 0);
    CHECK(lm_eval_node(ev, cat->cells[rd->first_cell + 3].node, 0, &v) == 1 && v == 9);
    CHECK(lm_eval_node(ev, cat->cells[rd->first_cell + 4].node, 0, &v) == 1 && v == 9);
    lm_eval_free(ev);
  }
  free(sel);
  free(sorted);
  lm_buf_fini(&def);
  lm_catalog_free(cat);
  lm_workload_free(w);
  snprintf(path, sizeof path, "%s/pmc_perf.csv", dir);
  unlink(path);
  snprintf(path, sizeof path, "%s/sysinfo.csv", dir);
  unlink(path);
  rmdir(dir);
  return check_report("test_eval_kept");
}
