/*
 * compile_files.c - the metric definition files, read into the builder:
 * arch.yaml's facts (counters, per-block limits, peaks' inputs), the named
 * quantities (macros over the source of the row that uses them) and the
 * panels with their tables, rows and cells, every formula compiled into
 * the architecture's one graph as it is read. Positions of errors are the
 * file's, down to the column inside a formula where the YAML scalar allows.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "metrics/compile_internal.h"

/* ------------------------------------------------------- definition files */


static const char *scalar(builder *b, const char *file, const ynode *y, const char *what) {
  if (!y) return NULL;
  if (y->type != Y_SCALAR) {
    lm_metrics_error_at(b, file, y->line, y->column, what, "expected a single value");
    return NULL;
  }
  return y->text;
}

/* Parse a formula held by YAML scalar y; returns the tree or NULL. */
static const lm_expr *parse_formula(builder *b, const char *file, const ynode *y,
                                    int *exact) {
  lm_expr *e = NULL;
  lm_diag pd;
  lm_diag_clear(&pd);
  *exact = y->plain && !strchr(y->text, '\n') && y->line > 0;
  if (lm_expr_parse(y->text, b->tmp, &e, &pd) != LM_OK) {
    if (pd.status == LM_ENOMEM) {
      b->status = lm_fail_at(b->diag, LM_ENOMEM, file, y->line, NULL, "out of memory");
      return NULL;
    }
    lm_metrics_error_at(b, file, y->line, *exact ? y->column + pd.column - 1 : y->column, NULL,
             "%s (in \"%.80s\")", pd.message, y->text);
    return NULL;
  }
  return e;
}

/* Compile a formula scalar into a node. */
static int32_t formula_node(builder *b, const char *file, const ynode *y,
                            const char *source, int template_ok) {
  int exact;
  const lm_expr *e = parse_formula(b, file, y, &exact);
  if (!e) return -1;
  /* For a one-line plain scalar, column + 0-based offset is exact. */
  ctx c = {source, template_ok, file, y->line, y->column, exact};
  return lm_metrics_compile_expr(b, e, &c);
}

static lm_status check_keys(builder *b, const char *file, const ynode *map,
                            const char *const *allowed, const char *where) {
  if (!map || map->type != Y_MAP) {
    if (map) lm_metrics_error_at(b, file, map->line, map->column, NULL, "%s must be a mapping", where);
    return b->status;
  }
  for (size_t i = 0; i < map->n_items; i += 2) {
    const char *key = map->items[i]->text;
    int ok = 0;
    for (const char *const *a = allowed; *a && !ok; a++) ok = strcmp(*a, key) == 0;
    if (!ok) {
      lm_buf list = {0};
      for (const char *const *a = allowed; *a; a++)
        lm_buf_printf(&list, "%s%s", a == allowed ? "" : ", ", *a);
      lm_metrics_error_at(b, file, map->items[i]->line, map->items[i]->column, key,
               "unknown key in %s (known: %s)", where, lm_buf_cstr(&list));
      lm_buf_fini(&list);
      return b->status;
    }
  }
  return LM_OK;
}

lm_status lm_metrics_load_arch(builder *b, const file_ctx *f) {
  static const char *const keys[] = {"arch", "products", "l2_channels_per_xcd",
                                     "lds_banks_per_cu", "pipes_per_gpu", "sqc_per_xcd",
                                     "block_limits", "shared_limits", "accumulate",
                                     "counters", "vendor", "chip", "base", "since",
                                     "not_measurable", NULL};
  if (check_keys(b, f->name, f->root, keys, "arch.yaml") != LM_OK) return b->status;
  const char *arch = scalar(b, f->name, lm_yaml_get(f->root, "arch"), "arch");
  if (!arch) {
    if (b->status == LM_OK)
      lm_metrics_error_at(b, f->name, 1, 1, "arch", "missing: the architecture name (e.g. gfx90a)");
    return b->status;
  }
  b->arch = lm_arena_strdup(b->arena, arch);
  const char *products = scalar(b, f->name, lm_yaml_get(f->root, "products"), "products");
  b->products = lm_arena_strdup(b->arena, products ? products : "");
  const ynode *vendor_node = lm_yaml_get(f->root, "vendor");
  const char *vendor = scalar(b, f->name, vendor_node, "vendor");
  if (vendor && strcmp(vendor, "amd") != 0 && strcmp(vendor, "nvidia") != 0)
    return lm_metrics_error_at(b, f->name, vendor_node->line, vendor_node->column, "vendor",
                    "unknown vendor '%s' (known: amd, nvidia)", vendor), b->status;
  b->vendor = lm_arena_strdup(b->arena, vendor ? vendor : "amd");
  const char *chip = scalar(b, f->name, lm_yaml_get(f->root, "chip"), "chip");
  b->chip = lm_arena_strdup(b->arena, chip ? chip : "");
  const char *chan = scalar(b, f->name, lm_yaml_get(f->root, "l2_channels_per_xcd"), "l2_channels_per_xcd");
  b->l2_channels = chan ? atoi(chan) : 0;
  /* Counts the driver does not report, for the system information of a
   * profile (0: not known for this architecture). */
  const char *banks = scalar(b, f->name, lm_yaml_get(f->root, "lds_banks_per_cu"), "lds_banks_per_cu");
  const char *pipes = scalar(b, f->name, lm_yaml_get(f->root, "pipes_per_gpu"), "pipes_per_gpu");
  const char *sqc = scalar(b, f->name, lm_yaml_get(f->root, "sqc_per_xcd"), "sqc_per_xcd");
  b->lds_banks_per_cu = banks ? atoi(banks) : 0;
  b->pipes_per_gpu = pipes ? atoi(pipes) : 0;
  b->sqc_per_xcd = sqc ? atoi(sqc) : 0;
  const ynode *limits = lm_yaml_get(f->root, "block_limits");
  if (limits) {
    if (limits->type != Y_MAP)
      return lm_metrics_error_at(b, f->name, limits->line, limits->column, "block_limits",
                      "expected a mapping of block: counters per pass"), b->status;
    for (size_t i = 0; i < limits->n_items; i += 2) {
      const char *v = scalar(b, f->name, limits->items[i + 1], limits->items[i]->text);
      if (!v) return b->status;
      lm_block_limit bl = {lm_arena_strdup(b->arena, limits->items[i]->text), atoi(v)};
      if (!bl.block || !VEC_PUSH(b, b->limits, bl)) return b->status = LM_ENOMEM;
    }
  }
  const ynode *aliases = lm_yaml_get(f->root, "shared_limits");
  if (aliases) {
    if (aliases->type != Y_MAP)
      return lm_metrics_error_at(b, f->name, aliases->line, aliases->column, "shared_limits",
                      "expected a mapping of block: block whose budget it uses"), b->status;
    for (size_t i = 0; i < aliases->n_items; i += 2) {
      const char *v = scalar(b, f->name, aliases->items[i + 1], aliases->items[i]->text);
      if (!v) return b->status;
      lm_block_alias ba = {lm_arena_strdup(b->arena, aliases->items[i]->text),
                           lm_arena_strdup(b->arena, v)};
      if (!ba.block || !ba.uses || !VEC_PUSH(b, b->aliases, ba)) return b->status = LM_ENOMEM;
    }
  }
  const char *accumulate = scalar(b, f->name, lm_yaml_get(f->root, "accumulate"), "accumulate");
  b->accumulate = lm_arena_strdup(b->arena, accumulate ? accumulate : "");
  const ynode *counters = lm_yaml_get(f->root, "counters");
  if (counters) {
    if (counters->type != Y_SEQ)
      return lm_metrics_error_at(b, f->name, counters->line, counters->column, "counters",
                      "expected a list of counter names"), b->status;
    for (size_t i = 0; i < counters->n_items; i++) {
      const char *v = scalar(b, f->name, counters->items[i], "counters");
      if (!v) return b->status;
      const char *copy = lm_arena_strdup(b->arena, v);
      if (!copy || !VEC_PUSH(b, b->counters, copy)) return b->status = LM_ENOMEM;
    }
  }
  const ynode *unmeasurable = lm_yaml_get(f->root, "not_measurable");
  if (unmeasurable) return lm_metrics_load_unmeasurable(b, f->name, unmeasurable);
  return b->status;
}

lm_status lm_metrics_load_quantities(builder *b, const file_ctx *f) {
  static const char *const keys[] = {"normalizations", "quantities", NULL};
  static const char *const qkeys[] = {"expr", "source", "desc", "unit", NULL};
  if (check_keys(b, f->name, f->root, keys, "quantities.yaml") != LM_OK) return b->status;
  const ynode *norms = lm_yaml_get(f->root, "normalizations");
  if (norms && norms->type == Y_MAP) {
    for (size_t i = 0; i < norms->n_items; i += 2) {
      const ynode *key = norms->items[i], *val = norms->items[i + 1];
      const ynode *expr = val->type == Y_MAP ? lm_yaml_get(val, "expr") : val;
      const ynode *unit = val->type == Y_MAP ? lm_yaml_get(val, "unit") : NULL;
      if (val->type == Y_MAP && check_keys(b, f->name, val, qkeys, "a normalization") != LM_OK)
        return b->status;
      if (!expr || expr->type != Y_SCALAR)
        return lm_metrics_error_at(b, f->name, val->line, val->column, key->text,
                        "a normalization needs an expr"), b->status;
      norm_def nd;
      memset(&nd, 0, sizeof nd);
      nd.norm.name = lm_arena_strdup(b->arena, key->text);
      const char *u = unit && unit->type == Y_SCALAR ? unit->text : key->text;
      nd.norm.unit = lm_arena_strdup(b->arena, u);
      nd.expr = parse_formula(b, f->name, expr, &nd.exact);
      nd.file = f->name;
      nd.line = expr->line;
      nd.column = expr->column;
      if (!nd.expr) return b->status;
      if (!nd.norm.name || !nd.norm.unit || !VEC_PUSH(b, b->norms, nd)) return b->status = LM_ENOMEM;
    }
  } else if (norms) {
    return lm_metrics_error_at(b, f->name, norms->line, norms->column, "normalizations",
                    "expected a mapping"), b->status;
  }
  const ynode *qs = lm_yaml_get(f->root, "quantities");
  if (qs && qs->type != Y_MAP)
    return lm_metrics_error_at(b, f->name, qs->line, qs->column, "quantities",
                    "expected a mapping of name: formula"), b->status;
  for (size_t i = 0; qs && i < qs->n_items; i += 2) {
    const ynode *key = qs->items[i], *val = qs->items[i + 1];
    const ynode *expr = val->type == Y_MAP ? lm_yaml_get(val, "expr") : val;
    const ynode *source = val->type == Y_MAP ? lm_yaml_get(val, "source") : NULL;
    if (val->type == Y_MAP && check_keys(b, f->name, val, qkeys, "a quantity") != LM_OK)
      return b->status;
    if (!expr || expr->type != Y_SCALAR)
      return lm_metrics_error_at(b, f->name, val->line, val->column, key->text,
                      "a quantity needs an expr"), b->status;
    if (strcmp(key->text, "denom") == 0 || strcmp(key->text, "normUnit") == 0 ||
        lm_metrics_is_sysinfo_field(key->text))
      return lm_metrics_error_at(b, f->name, key->line, key->column, key->text,
                      "this name is taken by a built-in variable"), b->status;
    if (lm_map_get(b->quant_index, key->text, NULL))
      return lm_metrics_error_at(b, f->name, key->line, key->column, key->text,
                      "quantity defined twice"), b->status;
    quantity q;
    memset(&q, 0, sizeof q);
    q.name = lm_arena_strdup(b->arena, key->text);
    q.expr = parse_formula(b, f->name, expr, &q.exact);
    q.file = f->name;
    q.line = expr->line;
    q.column = expr->column;
    if (!q.expr) return b->status;
    if (source) {
      const char *s = scalar(b, f->name, source, "source");
      if (!s) return b->status;
      q.source = lm_arena_strdup(b->arena, s);
    }
    if (!q.name || !VEC_PUSH(b, b->quants, q)) return b->status = LM_ENOMEM;
    if (lm_map_put(b->quant_index, q.name, b->quants.n - 1) != LM_OK)
      return b->status = LM_ENOMEM;
  }
  return b->status;
}

static const struct {
  const char *name;
  uint8_t role;
  uint8_t agg;
} roles[] = {
    {"name", LM_COL_NAME, 0},      {"tips", LM_COL_TIPS, 0},
    {"unit", LM_COL_UNIT, 0},      {"text", LM_COL_TEXT, 0},
    {"value", LM_COL_VALUE, 0},    {"peak", LM_COL_VALUE, 0},
    {"pct", LM_COL_VALUE, 0},      {"mean", LM_COL_VALUE, LM_OP_AVG},
    {"min", LM_COL_VALUE, LM_OP_MIN}, {"max", LM_COL_VALUE, LM_OP_MAX},
    {"median", LM_COL_VALUE, LM_OP_MEDIAN}, {"std", LM_COL_VALUE, LM_OP_STD},
    {"q1", LM_COL_VALUE, LM_OP_QUANTILE},   {"q3", LM_COL_VALUE, LM_OP_QUANTILE},
    {"sum", LM_COL_VALUE, LM_OP_SUM},       {"count", LM_COL_VALUE, LM_OP_COUNT},
};

static const char *table_id_text(builder *b, const char *file, const ynode *y,
                                 int32_t panel) {
  const char *id = scalar(b, file, y, "id");
  if (!id) return NULL;
  char prefix[32];
  snprintf(prefix, sizeof prefix, "%d.", (int)panel);
  size_t n = strlen(prefix);
  if (strncmp(id, prefix, n) != 0 || !id[n] || strspn(id + n, "0123456789") != strlen(id + n)) {
    lm_metrics_error_at(b, file, y->line, y->column, "id",
             "table id '%s' must be '%d.<number>' in panel %d", id, (int)panel, (int)panel);
    return NULL;
  }
  return lm_arena_strdup(b->arena, id);
}

/* One metric table being compiled (compile_metric_table). The steps below
 * return -1 where the table's compilation stops, b->status saying why
 * (as lm_metrics_error_at does), else 0. */
typedef struct table_ctx {
  builder *b;
  const char *file;
  const ynode *cols;       /* `columns:`, title: role */
  lm_tabledef *td;
  const char *source;      /* the table's source (pmc_perf unless it names one) */
  int templated;           /* the table has `channels:` */
  int32_t n_cols;
  int32_t value_col;       /* the first mean or value column, -1 */
  int32_t peak_col;        /* the last peak column, -1 */
} table_ctx;

/* One row of it. */
typedef struct row_ctx {
  const ynode *row;
  const char *source;      /* the row's source */
  const char *name;        /* its metric name (b's arena) */
  const ynode *expr_y;     /* `expr:`, or NULL */
  int32_t expr_node;       /* its node, -1 */
  const ynode *corr;       /* `corrected:`, or NULL */
  int32_t corr_expr;       /* the node of its expr, -1 */
  int32_t first_cell;      /* the row's first cell in b->cells */
} row_ctx;

/* The table's columns, from their roles (b->cols); value_col, peak_col. */
static int compile_columns(table_ctx *t) {
  builder *b = t->b;
  const ynode *cols = t->cols;
  t->td->first_col = b->cols.n;
  t->n_cols = (int32_t)(cols->n_items / 2);
  t->value_col = t->peak_col = -1;
  for (int32_t i = 0; i < t->n_cols; i++) {
    const ynode *title = cols->items[2 * i], *role = cols->items[2 * i + 1];
    const char *role_name = scalar(b, t->file, role, title->text);
    if (!role_name) return -1;
    size_t r = LM_ARRAY_LEN(roles);
    for (size_t k = 0; k < LM_ARRAY_LEN(roles); k++)
      if (strcmp(roles[k].name, role_name) == 0) r = k;
    if (r == LM_ARRAY_LEN(roles))
      return lm_metrics_error_at(b, t->file, role->line, role->column, title->text,
                      "unknown column role '%s' (known: name, value, mean, min, max, "
                      "median, std, q1, q3, sum, count, peak, pct, unit, text, tips)",
                      role_name);
    lm_coldef cd = {lm_arena_strdup(b->arena, title->text), roles[r].role, roles[r].agg};
    if (!cd.title || !VEC_PUSH(b, b->cols, cd)) return b->status = LM_ENOMEM, -1;
    if (t->value_col < 0 && (strcmp(role_name, "mean") == 0 || strcmp(role_name, "value") == 0))
      t->value_col = i;
    if (strcmp(role_name, "peak") == 0) t->peak_col = i;
  }
  t->td->n_cols = t->n_cols;
  return 0;
}

/* Whether key is the title of one of the table's columns. */
static int is_column(const table_ctx *t, const char *key) {
  int ok = 0;
  for (int32_t ci = 0; ci < t->n_cols && !ok; ci++)
    ok = strcmp(t->b->cols.v[t->td->first_col + ci].title, key) == 0;
  return ok;
}

/* Validate a row's keys: fixed ones plus the column titles. */
static int check_row_keys(table_ctx *t, const ynode *row) {
  for (size_t k = 0; k < row->n_items; k += 2) {
    const char *key = row->items[k]->text;
    static const char *const fixed[] = {"metric", "expr", "unit", "peak", "pct",
                                        "desc", "source", "corrected", NULL};
    int ok = 0;
    for (const char *const *f = fixed; *f && !ok; f++) ok = strcmp(*f, key) == 0;
    if (!ok) ok = is_column(t, key);
    if (!ok)
      return lm_metrics_error_at(t->b, t->file, row->items[k]->line, row->items[k]->column, key,
                      "unknown key in a row: neither metric, expr, unit, peak, pct, "
                      "desc, source, corrected nor a column title");
  }
  return 0;
}

/* corrected: {expr: ..., <column>: ...} replaces cells where the
 * reference tool's formula is demonstrably wrong (--corrected): its keys
 * checked, its expr compiled (rc->corr_expr). */
static int compile_corrected(table_ctx *t, row_ctx *rc) {
  builder *b = t->b;
  const ynode *corr = rc->corr;
  if (!corr) return 0;
  if (corr->type != Y_MAP)
    return lm_metrics_error_at(b, t->file, corr->line, corr->column, "corrected",
                    "expected a mapping of expr or column title to formula");
  for (size_t k = 0; k < corr->n_items; k += 2) {
    const char *key = corr->items[k]->text;
    int ok = strcmp(key, "expr") == 0;
    if (!ok) ok = is_column(t, key);
    if (!ok)
      return lm_metrics_error_at(b, t->file, corr->items[k]->line, corr->items[k]->column, key,
                      "unknown key in corrected: neither expr nor a column title");
  }
  const ynode *ce = lm_yaml_get(corr, "expr");
  if (ce && !ce->is_null && (rc->corr_expr = formula_node(b, t->file, ce, rc->source, t->templated)) < 0)
    return -1;
  return 0;
}

/* The node of value cell ci (and its corrected node): its own formula
 * (`explicit`), else the row's expr under the column's aggregate, else
 * for a pct column the value over the peak. */
static int value_cell(table_ctx *t, row_ctx *rc, int32_t ci, const ynode *explicit,
                      lm_celldef *cell) {
  builder *b = t->b;
  const lm_coldef *cd = &b->cols.v[t->td->first_col + ci];
  const char *role_name = t->cols->items[2 * ci + 1]->text;
  if (explicit) {
    if (explicit->type != Y_SCALAR)
      return lm_metrics_error_at(b, t->file, explicit->line, explicit->column, cd->title,
                      "expected a formula");
    if (!explicit->is_null) {
      cell->node = formula_node(b, t->file, explicit, rc->source, t->templated);
      if (cell->node < 0) return -1;
      cell->formula = lm_arena_strdup(b->arena, explicit->text);
      if (b->nodes.v[cell->node].vector)
        return lm_metrics_error_at(b, t->file, explicit->line, explicit->column, cd->title,
                        "this cell gives one value per dispatch: wrap it in an "
                        "aggregate such as AVG(...)");
    }
  } else if (cd->agg && rc->expr_node >= 0) {
    double k = strcmp(role_name, "q1") == 0 ? 0.25 : strcmp(role_name, "q3") == 0 ? 0.75 : 0;
    cell->node = lm_metrics_make_node(b, cd->agg, rc->expr_node, -1, -1, k);
    cell->formula = lm_arena_strdup(b->arena, rc->expr_y->text);
  } else if (strcmp(role_name, "pct") == 0 && t->value_col >= 0 && t->peak_col >= 0 &&
             t->value_col < ci && t->peak_col < ci) {
    const lm_celldef *vc = &b->cells.v[rc->first_cell + t->value_col];
    const lm_celldef *pc = &b->cells.v[rc->first_cell + t->peak_col];
    int32_t v = vc->node, p = pc->node;
    if (v >= 0 && p >= 0)
      cell->node = lm_metrics_make_node(b, LM_OP_DIV, lm_metrics_make_node(b, LM_OP_MUL, lm_metrics_make_const(b, 100), v, -1, 0),
                            p, -1, 0);
    /* With a corrected value or peak, the percentage follows it. */
    int32_t cv = vc->corrected >= 0 ? vc->corrected : v;
    int32_t cp = pc->corrected >= 0 ? pc->corrected : p;
    if ((vc->corrected >= 0 || pc->corrected >= 0) && cv >= 0 && cp >= 0)
      cell->corrected = lm_metrics_make_node(
          b, LM_OP_DIV, lm_metrics_make_node(b, LM_OP_MUL, lm_metrics_make_const(b, 100), cv, -1, 0), cp, -1, 0);
  }
  if (cell->node >= 0 && b->nodes.v[cell->node].chan && !t->templated)
    return lm_metrics_error_at(b, t->file, rc->row->line, rc->row->column, cd->title,
                    "a per-channel value outside a table with `channels:`");
  return 0;
}

/* Cell ci of the row, appended to b->cells. */
static int compile_cell(table_ctx *t, row_ctx *rc, int32_t ci) {
  builder *b = t->b;
  const ynode *row = rc->row;
  const lm_coldef *cd = &b->cols.v[t->td->first_col + ci];
  const char *role_name = t->cols->items[2 * ci + 1]->text;
  lm_celldef cell = {-1, -1, NULL, NULL};
  if (rc->corr && cd->role == LM_COL_VALUE) {
    const ynode *cc = lm_yaml_get(rc->corr, cd->title);
    if (cc && !cc->is_null) {
      if ((cell.corrected = formula_node(b, t->file, cc, rc->source, t->templated)) < 0) return -1;
      if (b->nodes.v[cell.corrected].vector)
        return lm_metrics_error_at(b, t->file, cc->line, cc->column, cd->title,
                        "this cell gives one value per dispatch: wrap it in an "
                        "aggregate such as AVG(...)");
    } else if (rc->corr_expr >= 0 && cd->agg) {
      double k = strcmp(role_name, "q1") == 0 ? 0.25 : strcmp(role_name, "q3") == 0 ? 0.75 : 0;
      cell.corrected = lm_metrics_make_node(b, cd->agg, rc->corr_expr, -1, -1, k);
    }
  }
  const ynode *explicit = lm_yaml_get(row, cd->title);
  if (!explicit && strcmp(role_name, "peak") == 0) explicit = lm_yaml_get(row, "peak");
  if (!explicit && strcmp(role_name, "pct") == 0) explicit = lm_yaml_get(row, "pct");
  switch ((lm_col_role)cd->role) {
  case LM_COL_NAME: cell.text = rc->name; break;
  case LM_COL_TIPS: cell.text = ""; break;
  case LM_COL_UNIT: {
    const char *u = scalar(b, t->file, explicit ? explicit : lm_yaml_get(row, "unit"), "unit");
    cell.text = lm_arena_strdup(b->arena, u ? u : "");
    break;
  }
  case LM_COL_TEXT: {
    const char *tx = scalar(b, t->file, explicit, cd->title);
    cell.text = lm_arena_strdup(b->arena, tx && !(explicit && explicit->is_null) ? tx : "");
    break;
  }
  case LM_COL_VALUE:
    if (value_cell(t, rc, ci, explicit, &cell) < 0) return -1;
    break;
  }
  if (b->status != LM_OK) return -1;
  if (!VEC_PUSH(b, b->cells, cell)) return b->status = LM_ENOMEM, -1;
  return 0;
}

/* One row: its definition (b->rows) and its cells. */
static int compile_row(table_ctx *t, const ynode *row) {
  builder *b = t->b;
  const char *file = t->file;
  if (row->type != Y_MAP)
    return lm_metrics_error_at(b, file, row->line, row->column, NULL,
                    "a row must be a mapping (metric: name, ...)");
  if (check_row_keys(t, row) < 0) return -1;
  const char *name = scalar(b, file, lm_yaml_get(row, "metric"), "metric");
  if (!name) {
    if (b->status == LM_OK)
      lm_metrics_error_at(b, file, row->line, row->column, "metric", "a row needs `metric:` (its name)");
    return -1;
  }
  row_ctx rc = {row, t->source, NULL, NULL, -1, NULL, -1, 0};
  const ynode *rs = lm_yaml_get(row, "source");
  if (rs && !(rc.source = scalar(b, file, rs, "source"))) return -1;
  const char *desc = scalar(b, file, lm_yaml_get(row, "desc"), "desc");
  rc.expr_y = lm_yaml_get(row, "expr");
  if (rc.expr_y && !rc.expr_y->is_null) {
    rc.expr_node = formula_node(b, file, rc.expr_y, rc.source, t->templated);
    if (rc.expr_node < 0) return -1;
  }
  lm_rowdef rd = {lm_arena_strdup(b->arena, name),
                  lm_arena_strdup(b->arena, desc ? desc : ""),
                  lm_arena_strdup(b->arena, rc.source), b->cells.n};
  if (!rd.name || !rd.desc || !rd.source || !VEC_PUSH(b, b->rows, rd))
    return b->status = LM_ENOMEM, -1;
  rc.name = rd.name;
  rc.first_cell = b->cells.n;
  rc.corr = lm_yaml_get(row, "corrected");
  if (compile_corrected(t, &rc) < 0) return -1;
  for (int32_t ci = 0; ci < t->n_cols; ci++)
    if (compile_cell(t, &rc, ci) < 0) return -1;
  return 0;
}

/* Compile one metric table's columns, rows and cells. */
static lm_status compile_metric_table(builder *b, const char *file, const ynode *tn,
                                      lm_tabledef *td) {
  const ynode *cols = lm_yaml_get(tn, "columns");
  const ynode *rows = lm_yaml_get(tn, "rows");
  if (!cols || cols->type != Y_MAP || cols->n_items == 0)
    return lm_metrics_error_at(b, file, tn->line, tn->column, "columns",
                    "a metric table needs `columns:` (title: role)"), b->status;
  if (!rows || rows->type != Y_SEQ)
    return lm_metrics_error_at(b, file, tn->line, tn->column, "rows",
                    "a metric table needs `rows:` (a list)"), b->status;
  table_ctx t = {b, file, cols, td, "pmc_perf", td->channels >= 0, 0, -1, -1};
  const ynode *ts = lm_yaml_get(tn, "source");
  if (ts && !(t.source = scalar(b, file, ts, "source"))) return b->status;
  if (compile_columns(&t) < 0) return b->status;
  td->first_row = b->rows.n;
  for (size_t ri = 0; ri < rows->n_items; ri++)
    if (compile_row(&t, rows->items[ri]) < 0) return b->status;
  td->n_rows = b->rows.n - td->first_row;
  return b->status;
}

lm_status lm_metrics_load_panel(builder *b, const file_ctx *f) {
  static const char *const keys[] = {"panel", "title", "tables", NULL};
  static const char *const tkeys[] = {"id", "title", "kind", "style", "comparable",
                                      "channels", "source", "columns", "rows", NULL};
  if (check_keys(b, f->name, f->root, keys, "a panel file") != LM_OK) return b->status;
  const char *pid = scalar(b, f->name, lm_yaml_get(f->root, "panel"), "panel");
  const char *title = scalar(b, f->name, lm_yaml_get(f->root, "title"), "title");
  const ynode *tables = lm_yaml_get(f->root, "tables");
  if (!pid || !title || !tables || tables->type != Y_SEQ) {
    if (b->status == LM_OK)
      lm_metrics_error_at(b, f->name, 1, 1, NULL,
               "a panel file needs `panel:` (its number), `title:` and `tables:` (a list)");
    return b->status;
  }
  char *end;
  long id = strtol(pid, &end, 10);
  if (*end || id < 0 || id > 9999)
    return lm_metrics_error_at(b, f->name, f->root->line, f->root->column, "panel",
                    "panel must be a whole number"), b->status;
  for (int32_t i = 0; i < b->panels.n; i++)
    if (b->panels.v[i].id == id)
      return lm_metrics_error_at(b, f->name, 1, 1, "panel", "panel %ld is defined twice", id), b->status;
  lm_paneldef pd = {(int32_t)id, lm_arena_strdup(b->arena, title), b->tables.n, 0};
  for (size_t ti = 0; ti < tables->n_items; ti++) {
    const ynode *t = tables->items[ti];
    if (check_keys(b, f->name, t, tkeys, "a table") != LM_OK) return b->status;
    lm_tabledef td;
    memset(&td, 0, sizeof td);
    td.channels = -1;
    td.comparable = 1;
    td.id = table_id_text(b, f->name, lm_yaml_get(t, "id"), (int32_t)id);
    if (!td.id) {
      if (b->status == LM_OK) lm_metrics_error_at(b, f->name, t->line, t->column, "id", "a table needs `id:`");
      return b->status;
    }
    for (int32_t k = 0; k < b->tables.n; k++)
      if (strcmp(b->tables.v[k].id, td.id) == 0)
        return lm_metrics_error_at(b, f->name, t->line, t->column, "id", "table %s is defined twice",
                        td.id), b->status;
    const char *tt = scalar(b, f->name, lm_yaml_get(t, "title"), "title");
    td.title = lm_arena_strdup(b->arena, tt ? tt : "");
    const char *kind = scalar(b, f->name, lm_yaml_get(t, "kind"), "kind");
    static const char *const kinds[] = {"metric", "top_kernels", "dispatches", "sysinfo",
                                        "roofline"};
    td.kind = LM_TABLE_METRIC;
    if (kind) {
      size_t k = LM_ARRAY_LEN(kinds);
      for (size_t i = 0; i < LM_ARRAY_LEN(kinds); i++)
        if (strcmp(kinds[i], kind) == 0) k = i;
      if (k == LM_ARRAY_LEN(kinds))
        return lm_metrics_error_at(b, f->name, t->line, t->column, "kind",
                        "unknown table kind '%s' (known: metric, top_kernels, "
                        "dispatches, sysinfo, roofline)", kind), b->status;
      td.kind = (uint8_t)k;
    }
    const char *style = scalar(b, f->name, lm_yaml_get(t, "style"), "style");
    if (style) {
      static const char *const styles[] = {"none", "bar", "multi_bar", "box", "mem_chart",
                                           "roofline"};
      size_t k = LM_ARRAY_LEN(styles);
      for (size_t i = 0; i < LM_ARRAY_LEN(styles); i++)
        if (strcmp(styles[i], style) == 0) k = i;
      if (k == LM_ARRAY_LEN(styles))
        return lm_metrics_error_at(b, f->name, t->line, t->column, "style",
                        "unknown style '%s' (known: bar, multi_bar, box, mem_chart, "
                        "roofline)", style), b->status;
      td.style = (uint8_t)k;
    }
    const char *comparable = scalar(b, f->name, lm_yaml_get(t, "comparable"), "comparable");
    if (comparable) td.comparable = strcmp(comparable, "false") != 0;
    const ynode *ch = lm_yaml_get(t, "channels");
    if (ch) {
      td.channels = formula_node(b, f->name, ch, "pmc_perf", 0);
      if (td.channels < 0) return b->status;
      if (b->nodes.v[td.channels].vector)
        return lm_metrics_error_at(b, f->name, ch->line, ch->column, "channels",
                        "the channel count must be one value, such as $total_l2_chan"),
               b->status;
    }
    if (td.kind == LM_TABLE_METRIC) {
      if (compile_metric_table(b, f->name, t, &td) != LM_OK) return b->status;
    } else {
      td.first_col = b->cols.n;
      td.first_row = b->rows.n;
    }
    if (!VEC_PUSH(b, b->tables, td)) return b->status = LM_ENOMEM;
    pd.n_tables++;
  }
  if (!VEC_PUSH(b, b->panels, pd)) return b->status = LM_ENOMEM;
  return b->status;
}

