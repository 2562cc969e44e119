/* test_metrics.c - unit tests of the metric language: parsing with
 * Python's precedences, printing, error positions, and what the compiler
 * shares, folds and refuses. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "metrics/metrics.h"

static char *roundtrip(lm_arena *a, const char *text) {
  lm_expr *e = NULL;
  lm_diag d;
  if (lm_expr_parse(text, a, &e, &d) != LM_OK) return NULL;
  lm_buf b = {0};
  lm_expr_print(e, &b);
  char *out = lm_arena_strdup(a, lm_buf_cstr(&b));
  lm_buf_fini(&b);
  return out;
}

static void test_parse(void) {
  lm_arena *a = lm_arena_new(4096);
  CHECK_STR(roundtrip(a, "1 + 2 * 3"), "(1 + (2 * 3))");
  CHECK_STR(roundtrip(a, "-2 ** 2"), "(-(2 ** 2))");
  CHECK_STR(roundtrip(a, "2 ** -1"), "(2 ** (-1))");
  CHECK_STR(roundtrip(a, "a - b - c"), "((a - b) - c)");
  CHECK_STR(roundtrip(a, "x / y if y != 0 else None"), "((x / y) if (y != 0) else None)");
  CHECK_STR(roundtrip(a, "a if b else c if d else e"), "(a if b else (c if d else e))");
  CHECK_STR(roundtrip(a, "not a == b and c or d"), "(((not (a == b)) and c) or d)");
  CHECK_STR(roundtrip(a, "TCC_HIT[17] + TCC_HIT[ch]"), "(TCC_HIT[17] + TCC_HIT[ch])");
  CHECK_STR(roundtrip(a, "AVG(100 * $denom, 3)"), "AVG((100 * $denom), 3)");
  CHECK_STR(roundtrip(a, "8.1097E+14"), "810970000000000");
  CHECK_STR(roundtrip(a, "0.00128"), "0.00128");
  /* CUPTI metric names: a dot followed by a letter continues a name. */
  CHECK_STR(roundtrip(a, "dram__bytes_read.sum / sm__throughput.avg.pct_of_peak_sustained_elapsed"),
            "(dram__bytes_read.sum / sm__throughput.avg.pct_of_peak_sustained_elapsed)");
  CHECK_STR(roundtrip(a, "lts__t_sector_hit_rate.pct*2"), "(lts__t_sector_hit_rate.pct * 2)");
  lm_expr *e;
  lm_diag d;
  CHECK(lm_expr_parse("(a + b", a, &e, &d) == LM_EPARSE);
  CHECK(d.column == 7 && strstr(d.message, "')'"));
  CHECK(lm_expr_parse("a + * b", a, &e, &d) == LM_EPARSE && d.column == 5);
  CHECK(lm_expr_parse("a = b", a, &e, &d) == LM_EPARSE && strstr(d.message, "=="));
  CHECK(lm_expr_parse("a < b < c", a, &e, &d) == LM_EPARSE && strstr(d.message, "chained"));
  CHECK(lm_expr_parse("x if y", a, &e, &d) == LM_EPARSE && strstr(d.message, "else"));
  CHECK(lm_expr_parse("A[x]", a, &e, &d) == LM_EPARSE);
  CHECK(lm_expr_parse("$", a, &e, &d) == LM_EPARSE);
  CHECK(lm_expr_parse("1 2", a, &e, &d) == LM_EPARSE && d.column == 3);
  CHECK(lm_expr_parse("a.5", a, &e, &d) == LM_EPARSE);
  CHECK(lm_expr_parse("a.", a, &e, &d) == LM_EPARSE);
  /* Deep nesting is refused, not a stack overflow. */
  char deep[2048];
  memset(deep, '(', 1000);
  strcpy(deep + 1000, "1");
  CHECK(lm_expr_parse(deep, a, &e, &d) == LM_EPARSE && strstr(d.message, "nested"));
  lm_arena_free(a);
}

static lm_catalog *compile(const char *panel, const char *quantities, lm_diag *d) {
  const char *names[] = {"arch.yaml", "quantities.yaml", "02_p.yaml"};
  const char *texts[] = {"arch: gfxtest\ncounters: [A, B, SQ_WAVES]\n",
                         quantities ? quantities
                                    : "normalizations:\n  per_wave: {expr: SQ_WAVES, unit: wave}\n"
                                      "  per_kernel: {expr: 1, unit: kernel}\n"
                                      "quantities:\n  twice: 2 * A\n  pinned: {expr: B, source: pmc_perf}\n",
                         panel};
  lm_catalog *c = NULL;
  lm_diag_clear(d);
  lm_metrics_compile_texts(names, texts, 3, &c, d);
  return c;
}

static const char *const head =
    "panel: 2\ntitle: P\ntables:\n- id: '2.1'\n  columns: {Metric: name, Avg: mean, Max: max, "
    "Peak: peak, Pct: pct}\n  rows:\n";

static void test_compile(void) {
  lm_diag d;
  char def[2048];
  /* Shared subexpressions: three rows, one computation. */
  snprintf(def, sizeof def,
           "%s  - {metric: a, expr: 'A / $denom'}\n  - {metric: b, expr: 'A / $denom'}\n"
           "  - {metric: c, expr: '$twice / 2', peak: '$cu_per_gpu * 2 / 1000'}\n", head);
  lm_catalog *c = compile(def, NULL, &d);
  CHECK(c != NULL);
  if (c) {
    const lm_celldef *r0 = &c->cells[c->rows[0].first_cell];
    const lm_celldef *r1 = &c->cells[c->rows[1].first_cell];
    CHECK(r0[1].node == r1[1].node && r0[2].node == r1[2].node);
    /* pct defaults to 100 * value / peak, and is absent without a peak. */
    const lm_celldef *r2 = &c->cells[c->rows[2].first_cell];
    CHECK(r2[4].node >= 0 && c->nodes[r2[4].node].op == LM_OP_DIV);
    CHECK(r0[4].node < 0);
    CHECK(c->n_norms == 2 && c->n_norm_slots == 1);
    CHECK(lm_catalog_check_counters(c, &d) == LM_OK);
  }
  lm_catalog_free(c);
  /* Constant folding: 2 * 3 folds, 1 / 0 does not. */
  snprintf(def, sizeof def, "%s  - {metric: a, Avg: '2 * 3 + 1'}\n  - {metric: b, Avg: '1 / 0'}\n",
           head);
  c = compile(def, NULL, &d);
  CHECK(c != NULL);
  if (c) {
    const lm_node *n0 = &c->nodes[c->cells[c->rows[0].first_cell + 1].node];
    const lm_node *n1 = &c->nodes[c->cells[c->rows[1].first_cell + 1].node];
    CHECK(n0->op == LM_OP_CONST && n0->k == 7);
    CHECK(n1->op == LM_OP_DIV);
  }
  lm_catalog_free(c);
}

static void test_compile_errors(void) {
  lm_diag d;
  char def[2048];
  snprintf(def, sizeof def, "%s  - {metric: a, expr: A / +}\n", head);
  CHECK(compile(def, NULL, &d) == NULL);
  CHECK(strcmp(d.file, "02_p.yaml") == 0 && d.line == 7 && d.column == 28);
  snprintf(def, sizeof def, "%s  - {metric: a, expr: FOO(A)}\n", head);
  CHECK(compile(def, NULL, &d) == NULL && strstr(d.message, "unknown function FOO"));
  snprintf(def, sizeof def, "%s  - {metric: a, expr: $nope}\n", head);
  CHECK(compile(def, NULL, &d) == NULL && strstr(d.message, "unknown variable $nope"));
  snprintf(def, sizeof def, "%s  - {metric: a, Avg: A + 1}\n", head);
  CHECK(compile(def, NULL, &d) == NULL && strstr(d.message, "aggregate"));
  snprintf(def, sizeof def, "%s  - {metric: a, expr: 'A[ch]'}\n", head);
  CHECK(compile(def, NULL, &d) == NULL && strstr(d.message, "channels"));
  snprintf(def, sizeof def, "%s  - {metric: a, exp: A}\n", head);
  CHECK(compile(def, NULL, &d) == NULL && strstr(d.message, "unknown key") &&
        strcmp(d.field, "exp") == 0);
  snprintf(def, sizeof def, "%s  - {metric: a, expr: $loop}\n", head);
  CHECK(compile(def, "quantities:\n  loop: $loop + 1\n", &d) == NULL &&
        strstr(d.message, "itself"));
  snprintf(def, sizeof def, "%s  - {metric: a, expr: 'QUANTILE(A, 2)'}\n", head);
  CHECK(compile(def, NULL, &d) == NULL && strstr(d.message, "between 0 and 1"));
  CHECK(compile("panel: x\n", NULL, &d) == NULL);
  CHECK(compile("panel: 2\ntitle: t\ntables:\n- id: '3.1'\n  kind: sysinfo\n", NULL, &d) == NULL &&
        strstr(d.message, "must be '2."));
  CHECK(compile("panel: [unclosed\n", NULL, &d) == NULL && strstr(d.message, "YAML"));
  /* Missing arch.yaml. */
  const char *names[] = {"02_p.yaml"};
  const char *texts[] = {"panel: 2\ntitle: t\ntables: []\n"};
  lm_catalog *c = NULL;
  CHECK(lm_metrics_compile_texts(names, texts, 1, &c, &d) != LM_OK && strstr(d.message, "arch.yaml"));
}

/* arch.yaml's not_measurable: optional, read into the catalog, looked up
 * by counter; a malformed one is an error naming arch.yaml, the line and
 * the field. */
static lm_catalog *compile_arch(const char *arch, lm_diag *d) {
  const char *names[] = {"arch.yaml", "02_p.yaml"};
  const char *texts[] = {arch, "panel: 2\ntitle: P\ntables:\n- id: '2.1'\n  columns: {Metric: name, Avg: mean}\n"
                               "  rows:\n  - {metric: a, expr: A}\n"};
  lm_catalog *c = NULL;
  lm_diag_clear(d);
  lm_metrics_compile_texts(names, texts, 2, &c, d);
  return c;
}

static int error_at(const lm_diag *d, long line, const char *field, const char *words) {
  return strcmp(d->file, "arch.yaml") == 0 && d->line == line &&
         strcmp(d->field, field) == 0 && strstr(d->message, words) != NULL;
}

static void test_unmeasurable(void) {
  lm_diag d;
  lm_catalog *c = compile_arch("arch: gfxtest\ncounters: [A, B]\n", &d);
  CHECK(c != NULL && c->n_unmeasurable == 0 && lm_catalog_unmeasurable(c, "X_1") == NULL);
  lm_catalog_free(c);
  c = compile_arch("arch: gfxtest\ncounters: [A, B]\nnot_measurable:\n"
                   "  - {what: FLOPs, why: no per-type counters, counters: [X_*_F32, Y]}\n"
                   "  - what: latency\n    why: no level counter\n",
                   &d);
  CHECK(c != NULL && c->n_unmeasurable == 2);
  if (c && c->n_unmeasurable == 2) {
    CHECK(strcmp(c->unmeasurable[0].what, "FLOPs") == 0 && strcmp(c->unmeasurable[0].why, "no per-type counters") == 0);
    CHECK(strcmp(c->unmeasurable[0].counters, "X_*_F32 Y") == 0 && strcmp(c->unmeasurable[1].counters, "") == 0);
    CHECK(lm_catalog_unmeasurable(c, "X_ADD_F32_sum") == &c->unmeasurable[0]);
    CHECK(lm_catalog_unmeasurable(c, "Y") == &c->unmeasurable[0]);
    CHECK(lm_catalog_unmeasurable(c, "X_ADD_F64") == NULL && lm_catalog_unmeasurable(c, "YY") == NULL);
  }
  lm_catalog_free(c);
  CHECK(compile_arch("arch: gfxtest\ncounters: [A]\nnot_measurable: FLOPs\n", &d) == NULL &&
        error_at(&d, 3, "not_measurable", "list"));
  CHECK(compile_arch("arch: gfxtest\ncounters: [A]\nnot_measurable:\n  - FLOPs\n", &d) == NULL &&
        error_at(&d, 4, "not_measurable", "mapping"));
  CHECK(compile_arch("arch: gfxtest\ncounters: [A]\nnot_measurable:\n  - {what: FLOPs}\n", &d) == NULL &&
        error_at(&d, 4, "why", "needs 'why'"));
  CHECK(compile_arch("arch: gfxtest\ncounters: [A]\nnot_measurable:\n  - {what: [F], why: w}\n", &d) == NULL &&
        error_at(&d, 4, "what", "single value"));
  CHECK(compile_arch("arch: gfxtest\ncounters: [A]\nnot_measurable:\n  - what: F\n    why: w\n    becase: x\n",
                     &d) == NULL &&
        error_at(&d, 6, "becase", "unknown key"));
  CHECK(compile_arch("arch: gfxtest\ncounters: [A]\nnot_measurable:\n  - what: F\n    why: w\n    counters: X\n",
                     &d) == NULL &&
        error_at(&d, 6, "counters", "list"));
  /* A pattern may not claim a counter the architecture has. */
  CHECK(compile_arch("arch: gfxtest\ncounters: [A, AB]\nnot_measurable:\n  - what: F\n    why: w\n"
                     "    counters: [X, 'A*']\n",
                     &d) == NULL &&
        error_at(&d, 6, "counters", "matches A,"));
}

/* The table of catalog c with id, or NULL. */
static const lm_tabledef *table_of(const lm_catalog *c, const char *id) {
  for (int32_t t = 0; t < c->n_tables; t++)
    if (strcmp(c->tables[t].id, id) == 0) return &c->tables[t];
  return NULL;
}

static const char *row_name(const lm_catalog *c, const lm_tabledef *t, int32_t r) {
  return c->rows[t->first_row + r].name;
}

/* Overlay keys: take_rows splits a table, a row patch moves a row and
 * substitutes names in its formulas, rename_counters renames counters
 * everywhere (and adds them to arch.yaml's list), drop_empty_rows leaves
 * out rows without a formula. */
static void test_overlays(void) {
  const char *names[] = {"arch.yaml", "quantities.yaml", "02_p.yaml", "ov_1.yaml", "ov_2.yaml"};
  const char *texts[] = {
      "arch: gfxtest\ncounters: [OLD_A, B, SQ_WAVES]\n",
      "normalizations:\n  per_wave: {expr: SQ_WAVES, unit: wave}\n"
      "quantities:\n  duration: B + 1\n",
      "panel: 2\ntitle: P\ntables:\n- id: '2.1'\n  columns: {Metric: name, Avg: mean}\n"
      "  rows:\n  - {metric: a, expr: 'OLD_A / $denom'}\n  - {metric: b, expr: 'B / $denom'}\n"
      "  - {metric: c, expr: B}\n  - {metric: none}\n  - {metric: d, expr: B}\n",
      "overlay: '3.3'\ndrop_empty_rows: true\nrename_counters: {OLD_: NEW_}\ntables:\n"
      "  '2.1':\n    rows:\n      b: {substitute: {$denom: $duration}, after: c}\n",
      "overlay: '3.3'\ntables:\n  '2.2': {panel: 2, title: T, take_rows: {from: '2.1', first: c, "
      "last: b}}\n"};
  lm_catalog *c = NULL;
  lm_diag d;
  lm_diag_clear(&d);
  CHECK(lm_metrics_compile_texts_compat(names, texts, 5, "3.3", &c, &d) == LM_OK);
  if (c) {
    const lm_tabledef *t1 = table_of(c, "2.1"), *t2 = table_of(c, "2.2");
    CHECK(t1 && t2);
    /* 2.1 keeps a and d (none, without a formula, is left out); c and b
     * (b moved after c) went to 2.2, which took 2.1's columns. */
    if (t1 && t2) {
      CHECK(t1->n_rows == 2 && strcmp(row_name(c, t1, 0), "a") == 0 &&
            strcmp(row_name(c, t1, 1), "d") == 0);
      CHECK(t2->n_rows == 2 && strcmp(row_name(c, t2, 0), "c") == 0 &&
            strcmp(row_name(c, t2, 1), "b") == 0);
      CHECK(t2->n_cols == t1->n_cols);
      const lm_celldef *b = &c->cells[c->rows[t2->first_row + 1].first_cell];
      CHECK(b[1].formula && strstr(b[1].formula, "$duration") && !strstr(b[1].formula, "$denom"));
      const lm_celldef *a = &c->cells[c->rows[t1->first_row].first_cell];
      CHECK(a[1].formula && strstr(a[1].formula, "NEW_A"));
    }
    CHECK(lm_catalog_check_counters(c, &d) == LM_OK);
  }
  lm_catalog_free(c);
  /* Without the overlays' version nothing changes. */
  c = NULL;
  CHECK(lm_metrics_compile_texts_compat(names, texts, 5, "3.0", &c, &d) == LM_OK);
  if (c) CHECK(!table_of(c, "2.2") && table_of(c, "2.1")->n_rows == 5);
  lm_catalog_free(c);
  /* A run of rows that does not exist is an error naming the overlay. */
  texts[4] = "overlay: '3.3'\ntables:\n  '2.2': {panel: 2, take_rows: {from: '2.1', first: d, "
             "last: a}}\n";
  c = NULL;
  CHECK(lm_metrics_compile_texts_compat(names, texts, 5, "3.3", &c, &d) != LM_OK &&
        strcmp(d.file, "ov_2.yaml") == 0 && strstr(d.message, "no run of rows"));
  lm_catalog_free(c);
}

/* A definition folder without a .yaml file is refused by name; its empty
 * file list (no array at all) is not handed to qsort, which UBSan reports
 * as a null pointer passed where the C library forbids one. */
static void test_empty_dir(void) {
  char dir[] = "/tmp/lumen-empty-defs-XXXXXX";
  if (!mkdtemp(dir)) {
    CHECK(0);
    return;
  }
  lm_catalog *c = NULL;
  lm_diag d;
  lm_diag_clear(&d);
  CHECK(lm_metrics_compile_dir(dir, &c, &d) == LM_ENOTFOUND && c == NULL);
  CHECK(strstr(d.message, "no .yaml definition files") != NULL);
  rmdir(dir);
}

static void test_ops(void) {
  CHECK(lm_py_mod(-7, 3) == 2 && lm_py_mod(7, -3) == -2 && isnan(lm_py_mod(1, 0)));
  CHECK(lm_py_round(2.5, 0) == 2 && lm_py_round(3.5, 0) == 4 && lm_py_round(-0.5, 0) == 0);
  double s[] = {1, 2, 3, 4};
  CHECK_NEAR(lm_quantile_sorted(s, 4, 0.25), 1.75, 1e-15);
  CHECK_NEAR(lm_quantile_sorted(s, 4, 0.5), 2.5, 1e-15);
  CHECK(isnan(lm_quantile_sorted(s, 0, 0.5)));
}

static int cmp_d(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* Selection gives, bit for bit, what sorting gives: random values with
 * and without repeats, sorted, reversed, equal, organ-pipe orders, every
 * size to 300 and every quantile the tools use. */
static void test_quantile_select(void) {
  static double v[300], w[300];
  const double qs[] = {0, 0.25, 0.5, 0.75, 0.9, 0.99, 1};
  unsigned seed = 12345;
  int bad = 0;
  for (int shape = 0; shape < 6; shape++)
    for (size_t n = 1; n <= 300; n++) {
      for (size_t i = 0; i < n; i++) {
        seed = seed * 1103515245u + 12345u;
        double r = (double)(seed >> 8) / 16777216.0;
        v[i] = shape == 0   ? r * 1e6
               : shape == 1 ? (double)((seed >> 8) % 7)
               : shape == 2 ? (double)i
               : shape == 3 ? (double)(n - i)
               : shape == 4 ? 42.0
                            : (double)(i < n / 2 ? i : n - i);
      }
      for (size_t q = 0; q < sizeof qs / sizeof *qs; q++) {
        memcpy(w, v, n * sizeof *v);
        qsort(w, n, sizeof *w, cmp_d);
        double want = lm_quantile_sorted(w, n, qs[q]);
        memcpy(w, v, n * sizeof *v);
        double got = lm_quantile_select(w, n, qs[q]);
        if (memcmp(&want, &got, sizeof got) != 0) bad++;
        /* w holds the same values, reordered */
        qsort(w, n, sizeof *w, cmp_d);
        double again = lm_quantile_sorted(w, n, qs[q]);
        if (memcmp(&want, &again, sizeof got) != 0) bad++;
      }
    }
  CHECK(bad == 0);
  CHECK(isnan(lm_quantile_select(v, 0, 0.5)));
}

int main(void) {
  test_parse();
  test_compile();
  test_compile_errors();
  test_unmeasurable();
  test_overlays();
  test_empty_dir();
  test_ops();
  test_quantile_select();
  return check_report("test_metrics");
}
