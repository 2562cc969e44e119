/* test_eval_oracle.c - the bulk evaluator against a naive twin.
 *
 * Random formulas over random data (with NaN, zeros, blanks and a column
 * that is absent) are compiled into a metric table and run by the bulk
 * evaluator; the same formula trees are walked here recursively, one value
 * at a time, with the reference tool's semantics written out directly.
 * Every cell must agree. */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "load/load.h"
#include "metrics/metrics.h"

#define ROWS_MAX 64

/* ------------------------------------------------------------- the twin */

typedef struct nval {
  int vec;            /* 1: per dispatch */
  int missing;        /* an absent column was used, or TO_INT failed */
  int masked;         /* nullable: na[] marks "not available" */
  double s;
  double v[ROWS_MAX];
  uint8_t na[ROWS_MAX];
} nval;

typedef struct env {
  size_t n;
  const lm_table *pmc;
  const lm_sysinfo *sys;
  const double *weights; /* time weighting of AVG, or NULL */
} env;

static double py_min(double a, double b) { return b < a ? b : a; }
static double py_max(double a, double b) { return b > a ? b : a; }

/* Ascending, with -0 before +0 (the evaluator's radix sort order). */
static int cmp_d(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  if (x == y) return (signbit(y) != 0) - (signbit(x) != 0);
  return (x > y) - (x < y);
}

static double binop(char op, double a, double b) {
  switch (op) {
  case '+': return a + b;
  case '-': return a - b;
  case '*': return a * b;
  case '/': return a / b;
  case '%': return lm_py_mod(a, b);
  case 'p': return pow(a, b);
  case '&': return a != 0 && b != 0;
  case '|': return a != 0 || b != 0;
  case '=': return a == b;
  case '!': return a != b;
  case '<': return a < b;
  case '>': return a > b;
  case 'l': return a <= b;
  default: return a >= b;
  }
}

static void naive(const env *E, const lm_expr *e, nval *out);

/* Reduce a vector the way pandas does (skipna), or for a nullable vector
 * the way its masked reductions do (NaN from arithmetic is not skipped by
 * mean/min/max/std/quantile; the median skips it). */
static double reduce(const env *E, const char *fn, const nval *x, double q) {
  double vals[ROWS_MAX], wts[ROWS_MAX];
  size_t k = 0;
  int nan_seen = 0;
  for (size_t i = 0; i < E->n; i++) {
    if (x->masked && x->na[i]) continue;
    if (isnan(x->v[i])) {
      nan_seen = 1;
      continue;
    }
    wts[k] = E->weights ? E->weights[i] : 1;
    vals[k++] = x->v[i];
  }
  if (x->masked && nan_seen && strcmp(fn, "MEDIAN") != 0 && strcmp(fn, "COUNT") != 0) return LM_NAN;
  if (strcmp(fn, "COUNT") == 0) return (double)k;
  /* Sums in dispatch order, as pandas adds a column. */
  double sum = 0;
  for (size_t i = 0; i < k; i++) sum += vals[i];
  if (strcmp(fn, "SUM") == 0) return sum;
  if (k == 0) return LM_NAN;
  if (strcmp(fn, "AVG") == 0 && E->weights) {
    double wsum = 0, wx = 0;
    for (size_t i = 0; i < k; i++) {
      wsum += wts[i];
      wx += wts[i] * vals[i];
    }
    return wsum > 0 ? wx / wsum : LM_NAN;
  }
  if (strcmp(fn, "AVG") == 0) return sum / (double)k;
  /* Extremes scanned in dispatch order: the first of equal values wins. */
  double mn = vals[0], mx = vals[0];
  for (size_t i = 1; i < k; i++) {
    if (vals[i] < mn) mn = vals[i];
    if (vals[i] > mx) mx = vals[i];
  }
  if (strcmp(fn, "MIN") == 0) return mn;
  if (strcmp(fn, "MAX") == 0) return mx;
  qsort(vals, k, sizeof *vals, cmp_d);
  if (strcmp(fn, "MEDIAN") == 0) return k % 2 ? vals[k / 2] : (vals[k / 2 - 1] + vals[k / 2]) / 2;
  if (strcmp(fn, "QUANTILE") == 0) return lm_quantile_sorted(vals, k, q);
  if (strcmp(fn, "STD") == 0) {
    if (k < 2) return LM_NAN;
    double m = 0, ss = 0;
    for (size_t i = 0; i < k; i++) m += vals[i];
    m /= (double)k;
    for (size_t i = 0; i < k; i++) ss += (vals[i] - m) * (vals[i] - m);
    return sqrt(ss / (double)(k - 1));
  }
  return LM_NAN;
}

static void broadcast(const env *E, nval *x) {
  if (x->vec) return;
  for (size_t i = 0; i < E->n; i++) {
    x->v[i] = x->s;
    x->na[i] = 0;
  }
  x->vec = 1;
}

static void naive(const env *E, const lm_expr *e, nval *out) {
  memset(out, 0, sizeof *out);
  switch ((lm_expr_kind)e->kind) {
  case LM_X_NUM: out->s = e->num; return;
  case LM_X_NONE: out->s = LM_NAN; return;
  case LM_X_STRING: out->missing = 1; return;
  case LM_X_VAR: {
    if (strcmp(e->name, "denom") == 0) {
      long c = lm_table_find(E->pmc, "SQ_WAVES");
      out->vec = 1;
      for (size_t i = 0; i < E->n; i++) out->v[i] = E->pmc->cols[c].values[i];
      return;
    }
    long i = lm_sysinfo_find(E->sys, e->name);
    out->s = i >= 0 ? E->sys->values[i] : LM_NAN;
    out->missing = i < 0;
    return;
  }
  case LM_X_COL: {
    long c = lm_table_find(E->pmc, e->name);
    out->vec = 1;
    if (c < 0) {
      out->missing = 1;
      return;
    }
    for (size_t i = 0; i < E->n; i++) out->v[i] = E->pmc->cols[c].values[i];
    return;
  }
  case LM_X_UNARY: {
    naive(E, e->a, out);
    if (e->op == '+') return;
    if (!out->vec) out->s = e->op == '-' ? -out->s : out->s == 0;
    else
      for (size_t i = 0; i < E->n; i++) out->v[i] = e->op == '-' ? -out->v[i] : out->v[i] == 0;
    return;
  }
  case LM_X_BINARY:
  case LM_X_COMPARE: {
    nval *a = malloc(sizeof *a), *b = malloc(sizeof *b);
    naive(E, e->a, a);
    naive(E, e->b, b);
    out->missing = a->missing || b->missing;
    if (!a->vec && !b->vec) {
      out->s = binop(e->op, a->s, b->s);
    } else {
      out->masked = a->masked || b->masked;
      broadcast(E, a);
      broadcast(E, b);
      out->vec = 1;
      for (size_t i = 0; i < E->n; i++) {
        out->v[i] = binop(e->op, a->v[i], b->v[i]);
        out->na[i] = a->na[i] || b->na[i];
      }
    }
    free(a);
    free(b);
    return;
  }
  case LM_X_IF: {
    nval *a = malloc(sizeof *a), *c = malloc(sizeof *c), *b = malloc(sizeof *b);
    naive(E, e->a, a);
    naive(E, e->b, c);
    naive(E, e->c, b);
    out->missing = a->missing || b->missing || c->missing;
    if (!a->vec && !b->vec && !c->vec) {
      out->s = c->s != 0 ? a->s : b->s;
    } else {
      out->masked = a->masked || b->masked || c->masked;
      int body_none = e->a->kind == LM_X_NONE, else_none = e->c->kind == LM_X_NONE;
      broadcast(E, a);
      broadcast(E, b);
      broadcast(E, c);
      out->vec = 1;
      for (size_t i = 0; i < E->n; i++) {
        out->v[i] = c->v[i] != 0 ? a->v[i] : b->v[i];
        out->na[i] = c->v[i] != 0 ? a->na[i] : b->na[i];
        if (a->na[i] || b->na[i] || c->na[i]) out->na[i] = 1;
        /* None chosen in a nullable result is "not available". */
        if (out->masked && ((c->v[i] != 0 && body_none) || (c->v[i] == 0 && else_none)))
          out->na[i] = 1;
      }
    }
    free(a);
    free(b);
    free(c);
    return;
  }
  case LM_X_CALL: {
    const char *fn = e->name;
    nval *x = malloc(sizeof *x), *y = malloc(sizeof *y);
    naive(E, e->args[0], x);
    if (e->n_args > 1) naive(E, e->args[1], y);
    else memset(y, 0, sizeof *y);
    out->missing = x->missing || y->missing;
    int one = e->n_args == 1;
    if ((one && (!strcmp(fn, "AVG") || !strcmp(fn, "MIN") || !strcmp(fn, "MAX") ||
                 !strcmp(fn, "MEDIAN") || !strcmp(fn, "STD") || !strcmp(fn, "SUM") ||
                 !strcmp(fn, "COUNT"))) ||
        !strcmp(fn, "QUANTILE")) {
      out->s = x->vec ? reduce(E, fn, x, y->s) : x->s;
    } else if (!strcmp(fn, "MIN") || !strcmp(fn, "MAX")) {
      int is_min = !strcmp(fn, "MIN");
      if (!x->vec && !y->vec) {
        out->s = is_min ? py_min(x->s, y->s) : py_max(x->s, y->s);
      } else {
        out->masked = x->masked || y->masked;
        broadcast(E, x);
        broadcast(E, y);
        out->vec = 1;
        for (size_t i = 0; i < E->n; i++) {
          double a = x->v[i], b = y->v[i];
          out->v[i] = isnan(a) || isnan(b) ? LM_NAN : is_min ? py_min(a, b) : py_max(a, b);
          out->na[i] = x->na[i] || y->na[i];
        }
      }
    } else if (!strcmp(fn, "ROUND")) {
      *out = *x;
      out->missing = x->missing;
      if (!x->vec) out->s = lm_py_round(x->s, (int)y->s);
      else
        for (size_t i = 0; i < E->n; i++) out->v[i] = lm_py_round(x->v[i], (int)y->s);
    } else if (!strcmp(fn, "TO_INT")) {
      *out = *x;
      if (!x->vec) {
        out->s = trunc(x->s) + 0.0;
      } else {
        out->masked = 1;
        for (size_t i = 0; i < E->n; i++) {
          double a = x->v[i];
          int na = x->na[i] || isnan(a);
          if (!na && (isinf(a) || a != trunc(a))) out->missing = 1; /* cannot convert */
          out->na[i] = (uint8_t)na;
          out->v[i] = trunc(a) + 0.0;
        }
      }
    } else if (!strcmp(fn, "MOD")) {
      if (!x->vec && !y->vec) {
        out->s = lm_py_mod(x->s, y->s);
      } else {
        out->masked = x->masked || y->masked;
        broadcast(E, x);
        broadcast(E, y);
        out->vec = 1;
        for (size_t i = 0; i < E->n; i++) {
          out->v[i] = lm_py_mod(x->v[i], y->v[i]);
          out->na[i] = x->na[i] || y->na[i];
        }
      }
    } else {
      out->missing = 1;
    }
    free(x);
    free(y);
    return;
  }
  }
}

/* ------------------------------------------------------- random formulas */

static const char *const vec_cols[] = {"A", "B", "C", "Z", "N", "SQ_WAVES", "MISSING_CTR"};
static const char *const scal_vars[] = {"$cu_per_gpu", "$num_xcd", "$max_sclk"};
static const char *const consts[] = {"0", "1", "2", "3.5", "100", "1000000000", "0.25"};

static void gen_vec(lm_buf *b, int depth);
static void gen_scal(lm_buf *b, int depth);

static void gen_vec(lm_buf *b, int depth) {
  int choice = depth <= 0 ? 0 : rand() % 11;
  switch (choice) {
  case 0: case 1:
    lm_buf_puts(b, vec_cols[rand() % (rand() % 8 == 0 ? 7 : 6)]);
    return;
  case 2: case 3: {
    static const char *const ops[] = {"+", "-", "*", "/", "%"};
    lm_buf_putc(b, '(');
    gen_vec(b, depth - 1);
    lm_buf_printf(b, " %s ", ops[rand() % 5]);
    if (rand() % 2) gen_vec(b, depth - 1);
    else gen_scal(b, depth - 1);
    lm_buf_putc(b, ')');
    return;
  }
  case 4: {
    static const char *const cmps[] = {"!=", "==", ">", "<=", ">=", "<"};
    lm_buf_putc(b, '(');
    gen_vec(b, depth - 1);
    lm_buf_puts(b, " if ");
    gen_vec(b, depth - 1);
    lm_buf_printf(b, " %s ", cmps[rand() % 6]);
    gen_scal(b, 0);
    lm_buf_puts(b, " else ");
    if (rand() % 2) lm_buf_puts(b, "None");
    else gen_vec(b, depth - 1);
    lm_buf_putc(b, ')');
    return;
  }
  case 5:
    lm_buf_puts(b, rand() % 2 ? "MIN(" : "MAX(");
    gen_vec(b, depth - 1);
    lm_buf_puts(b, ", ");
    gen_scal(b, depth - 1);
    lm_buf_putc(b, ')');
    return;
  case 6:
    lm_buf_puts(b, "ROUND(");
    gen_vec(b, depth - 1);
    lm_buf_printf(b, ", %d)", rand() % 3);
    return;
  case 7:
    lm_buf_puts(b, "TO_INT(");
    gen_vec(b, depth - 1);
    lm_buf_putc(b, ')');
    return;
  case 8:
    lm_buf_puts(b, "MOD(");
    gen_vec(b, depth - 1);
    lm_buf_puts(b, ", ");
    gen_scal(b, 0);
    lm_buf_putc(b, ')');
    return;
  case 9:
    lm_buf_puts(b, "(0.5 - ");
    gen_vec(b, depth - 1);
    lm_buf_putc(b, ')');
    return;
  default:
    lm_buf_puts(b, "(");
    gen_vec(b, depth - 1);
    lm_buf_puts(b, " / $denom)");
    return;
  }
}

static void gen_scal(lm_buf *b, int depth) {
  int choice = depth <= 0 ? rand() % 2 : rand() % 9;
  switch (choice) {
  case 0: lm_buf_puts(b, consts[rand() % 7]); return;
  case 1: lm_buf_puts(b, scal_vars[rand() % 3]); return;
  case 2: {
    static const char *const aggs[] = {"AVG", "MIN", "MAX", "MEDIAN", "STD", "SUM", "COUNT"};
    lm_buf_printf(b, "%s(", aggs[rand() % 7]);
    gen_vec(b, depth - 1);
    lm_buf_putc(b, ')');
    return;
  }
  case 3:
    lm_buf_puts(b, "QUANTILE(");
    gen_vec(b, depth - 1);
    lm_buf_puts(b, rand() % 2 ? ", 0.25)" : ", 0.75)");
    return;
  case 4: case 5: {
    static const char *const ops[] = {"+", "-", "*", "/"};
    lm_buf_putc(b, '(');
    gen_scal(b, depth - 1);
    lm_buf_printf(b, " %s ", ops[rand() % 4]);
    gen_scal(b, depth - 1);
    lm_buf_putc(b, ')');
    return;
  }
  case 6:
    lm_buf_puts(b, rand() % 2 ? "MIN(" : "MAX(");
    gen_scal(b, depth - 1);
    lm_buf_puts(b, ", ");
    gen_scal(b, depth - 1);
    lm_buf_putc(b, ')');
    return;
  case 7:
    lm_buf_puts(b, "ROUND(");
    gen_scal(b, depth - 1);
    lm_buf_puts(b, ", 0)");
    return;
  default:
    lm_buf_puts(b, "TO_INT(");
    gen_scal(b, depth - 1);
    lm_buf_putc(b, ')');
    return;
  }
}

/* ------------------------------------------------------------ the data */

static int write_file(const char *path, const char *text) {
  FILE *f = fopen(path, "w");
  if (!f) return 0;
  fputs(text, f);
  return fclose(f) == 0;
}

static lm_workload *make_workload(char *dir, size_t rows) {
  lm_buf b = {0};
  lm_buf_puts(&b, "Dispatch_ID,Kernel_Name,GPU_ID,A,B,C,Z,N,SQ_WAVES\n");
  for (size_t r = 0; r < rows; r++) {
    char n_cell[32] = "";
    if (rand() % 4) snprintf(n_cell, sizeof n_cell, "%d", rand() % 7);
    /* Counters are non-negative integers (pandas computes them as int64,
     * which has no -0: keeping them non-negative keeps double arithmetic
     * exact); B is a float column. */
    lm_buf_printf(&b, "%zu,k%d,0,%d,%d.%d,%ld,0,%s,%d\n", r, (int)(r % 3), rand() % 21,
                  rand() % 50, rand() % 100, (long)(rand() % 1000000) * 1000 + rand() % 1000,
                  n_cell, rand() % 3 ? rand() % 64 : 0);
  }
  char path[256];
  snprintf(path, sizeof path, "%s/pmc_perf.csv", dir);
  write_file(path, lm_buf_cstr(&b));
  lm_buf_fini(&b);
  snprintf(path, sizeof path, "%s/sysinfo.csv", dir);
  write_file(path, "gpu_arch,cu_per_gpu,num_xcd,max_sclk\ngfxtest,104,1,1700\n");
  lm_workload *w = NULL;
  lm_diag d;
  if (lm_workload_read(dir, &w, &d) != LM_OK) {
    char line[512];
    fprintf(stderr, "%s\n", lm_diag_format(&d, line, sizeof line));
  }
  return w;
}

/* -------------------------------------------------------------- the test */

static int agree(int have, double v, const nval *x) {
  int naive_blank = x->missing || isnan(x->s);
  if (!have || isnan(v)) return naive_blank;
  if (naive_blank) return 0;
  if (isinf(v) || isinf(x->s)) return v == x->s;
  double scale = fabs(v) > fabs(x->s) ? fabs(v) : fabs(x->s);
  return fabs(v - x->s) <= 1e-9 * scale + 1e-12;
}

static void run_round(unsigned seed, size_t rows, int formulas) {
  srand(seed);
  char dir[] = "/tmp/lumen-oracle-XXXXXX";
  if (!mkdtemp(dir)) return;
  lm_workload *w = make_workload(dir, rows);
  CHECK(w != NULL);
  if (!w) return;
  /* One table: each row a random per-dispatch formula under every
   * aggregate, plus a random single-value formula. */
  lm_buf def = {0};
  lm_buf_puts(&def, "panel: 2\ntitle: oracle\ntables:\n- id: '2.1'\n  columns: {Metric: name, "
                    "Avg: mean, Min: min, Max: max, Median: median, Std: std, Q1: q1, Q3: q3, "
                    "Sum: sum, Count: count, Value: value}\n  rows:\n");
  char **vec_text = calloc((size_t)formulas, sizeof *vec_text);
  char **scal_text = calloc((size_t)formulas, sizeof *scal_text);
  for (int i = 0; i < formulas; i++) {
    lm_buf v = {0}, s = {0};
    gen_vec(&v, 4);
    gen_scal(&s, 4);
    vec_text[i] = lm_buf_take(&v);
    scal_text[i] = lm_buf_take(&s);
    lm_buf_printf(&def, "  - metric: m%d\n    expr: \"%s\"\n    Value: \"%s\"\n", i, vec_text[i],
                  scal_text[i]);
  }
  const char *names[] = {"arch.yaml", "quantities.yaml", "02_oracle.yaml"};
  const char *texts[] = {"arch: gfxtest\n",
                         "normalizations:\n  per_wave: {expr: SQ_WAVES, unit: wave}\n",
                         lm_buf_cstr(&def)};
  lm_catalog *cat = NULL;
  lm_diag d;
  lm_status st = lm_metrics_compile_texts(names, texts, 3, &cat, &d);
  CHECK(st == LM_OK);
  if (st != LM_OK) {
    char line[1024];
    fprintf(stderr, "%s\n", lm_diag_format(&d, line, sizeof line));
  }
  size_t *sel = malloc(rows * sizeof *sel);
  for (size_t r = 0; r < rows; r++) sel[r] = r;
  lm_eval *ev = NULL;
  /* Every third round weighs AVG by positive weights (time weighting),
   * some of them zero. */
  double *weights = NULL;
  if (seed % 3 == 0) {
    weights = malloc(rows * sizeof *weights);
    for (size_t r = 0; r < rows; r++) weights[r] = (r * 7 + (size_t)seed) % 5 == 0 ? 0 : 1.0 + (double)((r * 13 + (size_t)seed) % 97);
  }
  lm_eval_request req = {w, sel, rows, 0, NULL, seed % 2 ? 2 : 1, 0, weights, 0, 0};
  if (cat) CHECK(lm_eval_run(cat, &req, &ev, &d) == LM_OK);
  /* A budget of one byte for the order statistics: medians and
   * quantiles come from passes over the rows instead (ostat.c), with the
   * same bits in every cell. */
  /* Budgets that fit the values of a few operands: those are kept, the
   * others found by passes. */
  const size_t budgets[] = {1, rows * sizeof(double) * 3, rows * sizeof(double) * 11 + 5};
  for (size_t bi = 0; bi < sizeof budgets / sizeof *budgets; bi++) {
    lm_eval *bounded = NULL;
    lm_eval_request breq = req;
    breq.stat_mem = budgets[bi];
    if (cat) CHECK(lm_eval_run(cat, &breq, &bounded, &d) == LM_OK);
    for (int32_t c = 0; ev && bounded && c < cat->n_cells; c++) {
      double a = 0, b = 0;
      int ha = lm_eval_node(ev, cat->cells[c].node, 0, &a);
      int hb = lm_eval_node(bounded, cat->cells[c].node, 0, &b);
      CHECK(ha == hb && (!ha || memcmp(&a, &b, sizeof a) == 0));
    }
    lm_eval_free(bounded);
  }
  env E = {rows, w->pmc, &w->sysinfo, weights};
  static const char *const aggs[] = {"AVG", "MIN", "MAX", "MEDIAN", "STD", "QUANTILE",
                                     "QUANTILE", "SUM", "COUNT"};
  static const double qs[] = {0, 0, 0, 0, 0, 0.25, 0.75, 0, 0};
  lm_arena *arena = lm_arena_new(1 << 16);
  int mismatches = 0;
  for (int i = 0; ev && i < formulas; i++) {
    const lm_rowdef *rd = &cat->rows[cat->tables[0].first_row + i];
    lm_expr *ve = NULL, *se = NULL;
    CHECK(lm_expr_parse(vec_text[i], arena, &ve, &d) == LM_OK);
    CHECK(lm_expr_parse(scal_text[i], arena, &se, &d) == LM_OK);
    if (!ve || !se) continue;
    nval *x = malloc(sizeof *x), *r = malloc(sizeof *r);
    naive(&E, ve, x);
    if (getenv("LUMEN_ORACLE_DUMP") && i == atoi(getenv("LUMEN_ORACLE_DUMP")))
      for (size_t k = 0; k < E.n; k++)
        fprintf(stderr, "  row %zu: naive %.17g%s\n", k, x->v[k], x->na[k] ? " NA" : "");
    for (int a = 0; a < 9; a++) {
      memset(r, 0, sizeof *r);
      r->missing = x->missing;
      r->s = x->vec ? reduce(&E, aggs[a], x, qs[a]) : x->s;
      double v = LM_NAN;
      int have = lm_eval_node(ev, cat->cells[rd->first_cell + 1 + a].node, 0, &v);
      if (!agree(have, v, r)) {
        if (mismatches++ < 5)
          fprintf(stderr, "seed %u row %d %s(%s): bulk %s %.17g, naive %s %.17g\n", seed, i,
                  aggs[a], vec_text[i], have ? "" : "blank", v, r->missing ? "blank" : "",
                  r->s);
      }
    }
    naive(&E, se, r);
    double v = LM_NAN;
    int have = lm_eval_node(ev, cat->cells[rd->first_cell + 10].node, 0, &v);
    if (!agree(have, v, r) && mismatches++ < 5)
      fprintf(stderr, "seed %u row %d value %s: bulk %s %.17g, naive %s %.17g\n", seed, i,
              scal_text[i], have ? "" : "blank", v, r->missing ? "blank" : "", r->s);
    free(x);
    free(r);
  }
  CHECK(mismatches == 0);
  for (int i = 0; i < formulas; i++) {
    lm_free(vec_text[i]);
    lm_free(scal_text[i]);
  }
  free(vec_text);
  free(scal_text);
  free(sel);
  free(weights);
  lm_arena_free(arena);
  lm_eval_free(ev);
  lm_catalog_free(cat);
  lm_buf_fini(&def);
  lm_workload_free(w);
  char path[256];
  snprintf(path, sizeof path, "%s/pmc_perf.csv", dir);
  unlink(path);
  snprintf(path, sizeof path, "%s/sysinfo.csv", dir);
  unlink(path);
  rmdir(dir);
}

int main(void) {
  unsigned rounds = getenv("LUMEN_ORACLE_ROUNDS") ? (unsigned)atoi(getenv("LUMEN_ORACLE_ROUNDS")) : 40;
  unsigned first = getenv("LUMEN_ORACLE_SEED") ? (unsigned)atoi(getenv("LUMEN_ORACLE_SEED")) : 1;
  if (getenv("LUMEN_ORACLE_SEED")) rounds = first;
  for (unsigned seed = first; seed <= rounds; seed++) run_round(seed, seed % 3 ? 37 : 64, 60);
  return check_report("test_eval_oracle");
}
