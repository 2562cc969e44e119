/*
 * compile.c - metric definitions (YAML) to a catalog over one shared graph.
 *
 * Every formula of an architecture is compiled into a single graph in
 * which a node stands for one distinct computation: building a node first
 * looks it up by (operation, operands, constant), so a named quantity, a
 * repeated subexpression or the value a Pct-of-Peak cell divides by are
 * computed once however many cells use them. Operations whose operands are
 * all constants are folded unless the result would be NaN or infinite (a
 * division by zero stays in the graph and yields inf at run time, as the
 * reference tool does). System-info variables are leaves folded once per
 * workload by the evaluator, not here: the same catalog serves every GPU.
 *
 * A named quantity is a macro over the source (pmc_perf or an SQ_* table)
 * of the row that uses it, unless it names its own source: this is how the
 * reference tool's textual substitution behaves, and it keeps rows that
 * read accumulate tables exact.
 */
#include <dirent.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "metrics/internal.h"

const char *const lm_sysinfo_fields[] = {
    "workload_name", "command", "ip_blocks", "timestamp", "version", "hostname",
    "cpu_model", "sbios", "linux_distro", "linux_kernel_version",
    "amd_gpu_kernel_version", "cpu_memory", "gpu_memory", "rocm_version",
    "vbios", "compute_partition", "memory_partition", "gpu_series",
    "gpu_model", "gpu_arch", "chip_id", "gpu_l1", "gpu_l2", "cu_per_gpu",
    "simd_per_cu", "se_per_gpu", "wave_size", "workgroup_max_size",
    "max_waves_per_cu", "max_sclk", "max_mclk", "cur_sclk", "cur_mclk",
    "total_l2_chan", "lds_banks_per_cu", "sqc_per_gpu", "pipes_per_gpu",
    "hbm_bw", "num_xcd", "num_hbm_channels", "gpu_chip_id", NULL};

/* A growable array of any element type. */
#define VEC(T) struct { T *v; int32_t n, cap; }
#define VEC_PUSH(b, vec, item)                                           \
  (((vec).n < (vec).cap || grow(&(vec).v, &(vec).cap, sizeof *(vec).v)) \
       ? ((vec).v[(vec).n] = (item), (vec).n++, 1)                       \
       : ((b)->status = LM_ENOMEM, 0))

static int grow(void *vp, int32_t *cap, size_t elem) {
  void **p = vp;
  int32_t n = *cap ? *cap * 2 : 16;
  void *fresh = lm_realloc(*p, (size_t)n * elem);
  if (!fresh) return 0;
  *p = fresh;
  *cap = n;
  return 1;
}

typedef struct quantity {
  const char *name;
  const lm_expr *expr;
  const char *source; /* pinned source, or NULL */
  const char *file;
  long line, column;
  int exact;          /* column + expression offset is exact */
  int busy;
} quantity;

typedef struct norm_def {
  lm_norm norm;
  const lm_expr *expr;
  const char *file;
  long line, column;
  int exact;
} norm_def;

/* Where a formula came from, for error positions. */
typedef struct ctx {
  const char *source;
  int template_ok;
  const char *file;
  long line, column;
  int exact;
} ctx;

typedef struct builder {
  lm_arena *arena; /* the catalog's */
  lm_arena *tmp;   /* trees and scratch, freed after compiling */
  lm_diag *diag;
  lm_status status;
  VEC(lm_node) nodes;
  lm_map *node_index;
  VEC(lm_input) inputs;
  lm_map *input_index;
  VEC(const char *) sysvars;
  lm_map *sysvar_index;
  VEC(norm_def) norms;
  VEC(int32_t) norm_nodes;
  VEC(const char *) norm_slot_source;
  VEC(quantity) quants;
  lm_map *quant_index;
  lm_map *quant_memo;
  VEC(lm_paneldef) panels;
  VEC(lm_tabledef) tables;
  VEC(lm_coldef) cols;
  VEC(lm_rowdef) rows;
  VEC(lm_celldef) cells;
  VEC(const char *) counters;
  VEC(lm_block_limit) limits;
  VEC(lm_block_alias) aliases;
  const char *arch, *products, *accumulate, *vendor, *chip;
  int32_t l2_channels, lds_banks_per_cu, pipes_per_gpu, sqc_per_xcd;
  int depth;       /* compile_expr calls under way (one stack frame each) */
  int quant_depth; /* quantities being expanded, one inside the other */
} builder;

/* Quantities may refer to quantities this many levels deep; and a formula
 * with the quantities it reaches expanded may be this deep in all (each
 * level is one frame of compile_expr: the stack stays small). */
#define MAX_QUANTITY_DEPTH 64
#define MAX_COMPILE_DEPTH 4000

#if defined(__GNUC__)
__attribute__((format(printf, 6, 7)))
#endif
static int32_t error_at(builder *b, const char *file, long line, long column,
                        const char *field, const char *fmt, ...) {
  if (b->status != LM_OK) return -1;
  char message[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(message, sizeof message, fmt, ap);
  va_end(ap);
  b->status = lm_diag_set(b->diag, LM_EPARSE, file, line, column, field, "%s", message);
  return -1;
}

static long expr_column(const ctx *c, int32_t pos) {
  return c->exact ? c->column + pos : c->column;
}

/* ------------------------------------------------------------ the graph */

typedef struct node_key {
  uint8_t op, vector, chan, stage;
  int32_t a, b, c;
  double k;
} node_key;

static int32_t make_node(builder *b, uint8_t op, int32_t x, int32_t y, int32_t z,
                         double k) {
  if (b->status != LM_OK) return -1;
  const lm_node *n = b->nodes.v;
  /* Commutative operations: order the operands so a+b and b+a are one node. */
  if ((op == LM_OP_ADD || op == LM_OP_MUL) && x > y) {
    int32_t t = x;
    x = y;
    y = t;
  }
  uint8_t vector = 0, chan = 0, stage = 0, masked = 0;
  int32_t operands[3] = {x, y, z};
  int n_ops = 0;
  switch ((lm_op)op) {
  case LM_OP_CONST: case LM_OP_INPUT: case LM_OP_SYSVAR: case LM_OP_NORM: break;
  case LM_OP_NEG: case LM_OP_NOT: case LM_OP_ROUND: case LM_OP_TO_INT:
    n_ops = 1;
    break;
  case LM_OP_WHERE: n_ops = 3; break;
  default: n_ops = LM_OP_IS_AGGREGATE(op) ? 1 : 2; break;
  }
  int all_const = n_ops > 0;
  for (int i = 0; i < n_ops; i++) {
    const lm_node *o = &n[operands[i]];
    vector |= o->vector;
    chan |= o->chan;
    masked |= o->masked;
    if (o->stage > stage) stage = o->stage;
    if (o->op != LM_OP_CONST || !isfinite(o->k)) all_const = 0;
  }
  if (op == LM_OP_INPUT) {
    vector = 1;
    chan = b->inputs.v[x].index == LM_INDEX_CHANNEL;
  }
  if (op == LM_OP_NORM) {
    vector = 1;
    int32_t per = b->norms.n;
    for (int32_t i = 0; i < per; i++) {
      const lm_node *alt = &n[b->norm_nodes.v[x * per + i]];
      chan |= alt->chan;
      if (alt->stage > stage) stage = alt->stage;
    }
  }
  if (LM_OP_IS_AGGREGATE(op)) {
    if (!n[x].vector) return x; /* aggregating one value gives that value */
    vector = 0;
    masked = 0;
    stage++;
  }
  if (op == LM_OP_TO_INT && vector) masked = 1;
  if (op == LM_OP_CONCAT) vector = 0;
  /* Constant folding: only finite results, never a division by zero. */
  if (all_const && op != LM_OP_CONCAT && !LM_OP_IS_AGGREGATE(op)) {
    double r = lm_scalar_op(op, n[x].k, n_ops > 1 ? n[y].k : 0,
                            n_ops > 2 ? n[z].k : 0, k);
    if (isfinite(r) && !(op == LM_OP_DIV && n[y].k == 0) &&
        !(op == LM_OP_MOD && n[y].k == 0))
      return make_node(b, LM_OP_CONST, -1, -1, -1, r);
  }
  node_key key;
  memset(&key, 0, sizeof key);
  key.op = op;
  key.vector = vector;
  key.chan = chan;
  key.stage = stage;
  key.a = x;
  key.b = y;
  key.c = z;
  key.k = k; /* compared bit for bit: -0 and +0 are different constants */
  int64_t found;
  if (lm_map_getn(b->node_index, (const char *)&key, sizeof key, &found))
    return (int32_t)found;
  lm_node node = {op, vector, chan, stage, masked, x, y, z, k};
  if (!VEC_PUSH(b, b->nodes, node)) return -1;
  if (lm_map_putn(b->node_index, (const char *)&key, sizeof key, b->nodes.n - 1) != LM_OK) {
    b->status = LM_ENOMEM;
    return -1;
  }
  return b->nodes.n - 1;
}

static int32_t make_const(builder *b, double k) {
  return make_node(b, LM_OP_CONST, -1, -1, -1, k);
}

static int32_t make_input(builder *b, const char *source, const char *column,
                          int32_t index) {
  char key[1024];
  int len = snprintf(key, sizeof key, "%s\x1f%s\x1f%d", source, column, (int)index);
  if (len < 0 || (size_t)len >= sizeof key) {
    b->status = lm_diag_set(b->diag, LM_ELIMIT, NULL, 0, 0, column, "column name too long");
    return -1;
  }
  int64_t found;
  int32_t id;
  if (lm_map_get(b->input_index, key, &found)) {
    id = (int32_t)found;
  } else {
    lm_input in = {lm_arena_strdup(b->arena, source), lm_arena_strdup(b->arena, column),
                   index};
    if (!in.source || !in.column || !VEC_PUSH(b, b->inputs, in)) {
      b->status = LM_ENOMEM;
      return -1;
    }
    id = b->inputs.n - 1;
    if (lm_map_put(b->input_index, key, id) != LM_OK) {
      b->status = LM_ENOMEM;
      return -1;
    }
  }
  return make_node(b, LM_OP_INPUT, id, -1, -1, 0);
}

static int32_t make_sysvar(builder *b, const char *name) {
  int64_t found;
  int32_t id;
  if (lm_map_get(b->sysvar_index, name, &found)) {
    id = (int32_t)found;
  } else {
    const char *copy = lm_arena_strdup(b->arena, name);
    if (!copy || !VEC_PUSH(b, b->sysvars, copy)) {
      b->status = LM_ENOMEM;
      return -1;
    }
    id = b->sysvars.n - 1;
    if (lm_map_put(b->sysvar_index, name, id) != LM_OK) {
      b->status = LM_ENOMEM;
      return -1;
    }
  }
  return make_node(b, LM_OP_SYSVAR, id, -1, -1, 0);
}

static int32_t compile_expr(builder *b, const lm_expr *e, const ctx *c);

/* $denom in a given source: one normalization slot per source. */
static int32_t make_norm(builder *b, const ctx *c, int32_t pos) {
  if (b->norms.n == 0)
    return error_at(b, c->file, c->line, expr_column(c, pos), NULL,
                    "$denom needs the normalizations of quantities.yaml");
  int32_t slot = -1;
  for (int32_t i = 0; i < b->norm_slot_source.n; i++)
    if (strcmp(b->norm_slot_source.v[i], c->source) == 0) slot = i;
  if (slot < 0) {
    int32_t alts[16];
    int32_t per = b->norms.n;
    if (per > 16)
      return error_at(b, c->file, c->line, c->column, NULL,
                      "more than 16 normalizations");
    for (int32_t i = 0; i < per; i++) {
      const norm_def *nd = &b->norms.v[i];
      ctx nc = {c->source, c->template_ok, nd->file, nd->line, nd->column, nd->exact};
      alts[i] = compile_expr(b, nd->expr, &nc);
      if (alts[i] < 0) return -1;
    }
    for (int32_t i = 0; i < per; i++)
      if (!VEC_PUSH(b, b->norm_nodes, alts[i])) return -1;
    if (!VEC_PUSH(b, b->norm_slot_source, c->source)) return -1;
    slot = b->norm_slot_source.n - 1;
  }
  return make_node(b, LM_OP_NORM, slot, -1, -1, 0);
}

static int is_sysinfo_field(const char *name) {
  for (const char *const *f = lm_sysinfo_fields; *f; f++)
    if (strcmp(*f, name) == 0) return 1;
  return 0;
}

static int32_t compile_var(builder *b, const lm_expr *e, const ctx *c) {
  if (strcmp(e->name, "denom") == 0) return make_norm(b, c, e->pos);
  if (strcmp(e->name, "normUnit") == 0)
    return error_at(b, c->file, c->line, expr_column(c, e->pos), NULL,
                    "$normUnit is text for units, not a number");
  int64_t qi;
  if (lm_map_get(b->quant_index, e->name, &qi)) {
    quantity *q = &b->quants.v[qi];
    const char *source = q->source ? q->source : c->source;
    char key[512];
    snprintf(key, sizeof key, "%s\x1f%s", q->name, source);
    int64_t memo;
    if (lm_map_get(b->quant_memo, key, &memo)) return (int32_t)memo;
    if (q->busy)
      return error_at(b, c->file, c->line, expr_column(c, e->pos), NULL,
                      "quantity $%s is defined in terms of itself", q->name);
    if (b->quant_depth >= MAX_QUANTITY_DEPTH)
      return error_at(b, c->file, c->line, expr_column(c, e->pos), NULL,
                      "quantities nested more than %d deep at $%s (a quantity that uses a quantity "
                      "that uses ...): flatten the chain",
                      MAX_QUANTITY_DEPTH, q->name);
    q->busy = 1;
    b->quant_depth++;
    ctx qc = {source, c->template_ok, q->file, q->line, q->column, q->exact};
    int32_t node = compile_expr(b, q->expr, &qc);
    b->quant_depth--;
    q = &b->quants.v[qi]; /* the vector may have moved */
    q->busy = 0;
    if (node < 0) return -1;
    if (lm_map_put(b->quant_memo, key, node) != LM_OK) {
      b->status = LM_ENOMEM;
      return -1;
    }
    return node;
  }
  if (!is_sysinfo_field(e->name))
    return error_at(b, c->file, c->line, expr_column(c, e->pos), NULL,
                    "unknown variable $%s: not a quantity of quantities.yaml "
                    "nor a sysinfo.csv field", e->name);
  return make_sysvar(b, e->name);
}

static int32_t const_arg(builder *b, const lm_expr *call, int32_t node,
                         const ctx *c, const char *what) {
  if (node < 0) return -1;
  if (b->nodes.v[node].op != LM_OP_CONST)
    return error_at(b, c->file, c->line, expr_column(c, call->pos), NULL,
                    "%s() takes a constant as its %s", call->name, what);
  return node;
}

static int32_t compile_call(builder *b, const lm_expr *e, const ctx *c) {
  static const struct {
    const char *name;
    uint8_t op1, op2; /* one-argument / two-argument forms, 0 if none */
  } calls[] = {
      {"AVG", LM_OP_AVG, 0},         {"MEDIAN", LM_OP_MEDIAN, 0},
      {"STD", LM_OP_STD, 0},         {"SUM", LM_OP_SUM, 0},
      {"COUNT", LM_OP_COUNT, 0},     {"MIN", LM_OP_MIN, LM_OP_MIN2},
      {"MAX", LM_OP_MAX, LM_OP_MAX2},{"QUANTILE", 0, LM_OP_QUANTILE},
      {"ROUND", 0, LM_OP_ROUND},     {"TO_INT", LM_OP_TO_INT, 0},
      {"MOD", 0, LM_OP_MOD},         {"CONCAT", 0, LM_OP_CONCAT},
  };
  size_t which = LM_ARRAY_LEN(calls);
  for (size_t i = 0; i < LM_ARRAY_LEN(calls); i++)
    if (strcmp(calls[i].name, e->name) == 0) which = i;
  if (which == LM_ARRAY_LEN(calls))
    return error_at(b, c->file, c->line, expr_column(c, e->pos), NULL,
                    "unknown function %s() (known: AVG, MIN, MAX, MEDIAN, STD, "
                    "SUM, COUNT, QUANTILE, ROUND, TO_INT, MOD, CONCAT)", e->name);
  uint8_t op = e->n_args == 1 ? calls[which].op1 : e->n_args == 2 ? calls[which].op2 : 0;
  if (!op)
    return error_at(b, c->file, c->line, expr_column(c, e->pos), NULL,
                    "%s() does not take %d argument%s", e->name, (int)e->n_args,
                    e->n_args == 1 ? "" : "s");
  int32_t x = compile_expr(b, e->args[0], c);
  int32_t y = e->n_args > 1 ? compile_expr(b, e->args[1], c) : -1;
  if (x < 0 || (e->n_args > 1 && y < 0)) return -1;
  if (op == LM_OP_QUANTILE || op == LM_OP_ROUND) {
    if (const_arg(b, e, y, c, op == LM_OP_ROUND ? "number of digits" : "quantile") < 0)
      return -1;
    double k = b->nodes.v[y].k;
    if (op == LM_OP_QUANTILE && !(k >= 0 && k <= 1))
      return error_at(b, c->file, c->line, expr_column(c, e->pos), NULL,
                      "QUANTILE() takes a quantile between 0 and 1");
    if (op == LM_OP_ROUND && (k != floor(k) || fabs(k) > 15))
      return error_at(b, c->file, c->line, expr_column(c, e->pos), NULL,
                      "ROUND() takes a whole number of digits");
    return make_node(b, op, x, -1, -1, k);
  }
  return make_node(b, op, x, y, -1, 0);
}

static int32_t compile_one(builder *b, const lm_expr *e, const ctx *c);

static int32_t compile_expr(builder *b, const lm_expr *e, const ctx *c) {
  if (b->status != LM_OK) return -1;
  if (b->depth >= MAX_COMPILE_DEPTH)
    return error_at(b, c->file, c->line, expr_column(c, e->pos), NULL,
                    "formula too deep with its quantities expanded: more than %d levels",
                    MAX_COMPILE_DEPTH);
  b->depth++;
  int32_t node = compile_one(b, e, c);
  b->depth--;
  return node;
}

static int32_t compile_one(builder *b, const lm_expr *e, const ctx *c) {
  switch ((lm_expr_kind)e->kind) {
  case LM_X_NUM: return make_const(b, e->num);
  case LM_X_NONE: return make_const(b, LM_NAN);
  case LM_X_STRING:
    return error_at(b, c->file, c->line, expr_column(c, e->pos), NULL,
                    "text is not a value a formula can compute with");
  case LM_X_VAR: return compile_var(b, e, c);
  case LM_X_COL:
    if (e->index == LM_INDEX_CHANNEL && !c->template_ok)
      return error_at(b, c->file, c->line, expr_column(c, e->pos), NULL,
                      "%s[ch] is only valid in a table with `channels:`", e->name);
    return make_input(b, c->source, e->name, e->index);
  case LM_X_UNARY: {
    int32_t a = compile_expr(b, e->a, c);
    if (a < 0) return -1;
    if (e->op == '+') return a;
    return make_node(b, e->op == '-' ? LM_OP_NEG : LM_OP_NOT, a, -1, -1, 0);
  }
  case LM_X_BINARY:
  case LM_X_COMPARE: {
    int32_t a = compile_expr(b, e->a, c);
    int32_t y = a < 0 ? -1 : compile_expr(b, e->b, c);
    if (y < 0) return -1;
    uint8_t op;
    switch (e->op) {
    case '+': op = LM_OP_ADD; break;
    case '-': op = LM_OP_SUB; break;
    case '*': op = LM_OP_MUL; break;
    case '/': op = LM_OP_DIV; break;
    case '%': op = LM_OP_MOD; break;
    case 'p': op = LM_OP_POW; break;
    case '&': op = LM_OP_AND; break;
    case '|': op = LM_OP_OR; break;
    case '=': op = LM_OP_EQ; break;
    case '!': op = LM_OP_NE; break;
    case '<': op = LM_OP_LT; break;
    case '>': op = LM_OP_GT; break;
    case 'l': op = LM_OP_LE; break;
    default: op = LM_OP_GE; break;
    }
    return make_node(b, op, a, y, -1, 0);
  }
  case LM_X_IF: {
    int32_t body = compile_expr(b, e->a, c);
    int32_t cond = body < 0 ? -1 : compile_expr(b, e->b, c);
    int32_t other = cond < 0 ? -1 : compile_expr(b, e->c, c);
    if (other < 0) return -1;
    return make_node(b, LM_OP_WHERE, body, cond, other, 0);
  }
  case LM_X_CALL: return compile_call(b, e, c);
  }
  return -1;
}

/* ------------------------------------------------------- definition files */

typedef struct file_ctx {
  const char *name;
  const ynode *root;
  int applied; /* an overlay applied to the others */
} file_ctx;

static const char *scalar(builder *b, const char *file, const ynode *y, const char *what) {
  if (!y) return NULL;
  if (y->type != Y_SCALAR) {
    error_at(b, file, y->line, y->column, what, "expected a single value");
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
      b->status = lm_diag_set(b->diag, LM_ENOMEM, file, y->line, 0, NULL, "out of memory");
      return NULL;
    }
    error_at(b, file, y->line, *exact ? y->column + pd.column - 1 : y->column, NULL,
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
  return compile_expr(b, e, &c);
}

static lm_status check_keys(builder *b, const char *file, const ynode *map,
                            const char *const *allowed, const char *where) {
  if (!map || map->type != Y_MAP) {
    if (map) error_at(b, file, map->line, map->column, NULL, "%s must be a mapping", where);
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
      error_at(b, file, map->items[i]->line, map->items[i]->column, key,
               "unknown key in %s (known: %s)", where, lm_buf_cstr(&list));
      lm_buf_fini(&list);
      return b->status;
    }
  }
  return LM_OK;
}

static lm_status load_arch(builder *b, const file_ctx *f) {
  static const char *const keys[] = {"arch", "products", "l2_channels_per_xcd",
                                     "lds_banks_per_cu", "pipes_per_gpu", "sqc_per_xcd",
                                     "block_limits", "shared_limits", "accumulate",
                                     "counters", "vendor", "chip", "base", "since", NULL};
  if (check_keys(b, f->name, f->root, keys, "arch.yaml") != LM_OK) return b->status;
  const char *arch = scalar(b, f->name, lm_yaml_get(f->root, "arch"), "arch");
  if (!arch) {
    if (b->status == LM_OK)
      error_at(b, f->name, 1, 1, "arch", "missing: the architecture name (e.g. gfx90a)");
    return b->status;
  }
  b->arch = lm_arena_strdup(b->arena, arch);
  const char *products = scalar(b, f->name, lm_yaml_get(f->root, "products"), "products");
  b->products = lm_arena_strdup(b->arena, products ? products : "");
  const ynode *vendor_node = lm_yaml_get(f->root, "vendor");
  const char *vendor = scalar(b, f->name, vendor_node, "vendor");
  if (vendor && strcmp(vendor, "amd") != 0 && strcmp(vendor, "nvidia") != 0)
    return error_at(b, f->name, vendor_node->line, vendor_node->column, "vendor",
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
      return error_at(b, f->name, limits->line, limits->column, "block_limits",
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
      return error_at(b, f->name, aliases->line, aliases->column, "shared_limits",
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
      return error_at(b, f->name, counters->line, counters->column, "counters",
                      "expected a list of counter names"), b->status;
    for (size_t i = 0; i < counters->n_items; i++) {
      const char *v = scalar(b, f->name, counters->items[i], "counters");
      if (!v) return b->status;
      const char *copy = lm_arena_strdup(b->arena, v);
      if (!copy || !VEC_PUSH(b, b->counters, copy)) return b->status = LM_ENOMEM;
    }
  }
  return b->status;
}

static lm_status load_quantities(builder *b, const file_ctx *f) {
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
        return error_at(b, f->name, val->line, val->column, key->text,
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
    return error_at(b, f->name, norms->line, norms->column, "normalizations",
                    "expected a mapping"), b->status;
  }
  const ynode *qs = lm_yaml_get(f->root, "quantities");
  if (qs && qs->type != Y_MAP)
    return error_at(b, f->name, qs->line, qs->column, "quantities",
                    "expected a mapping of name: formula"), b->status;
  for (size_t i = 0; qs && i < qs->n_items; i += 2) {
    const ynode *key = qs->items[i], *val = qs->items[i + 1];
    const ynode *expr = val->type == Y_MAP ? lm_yaml_get(val, "expr") : val;
    const ynode *source = val->type == Y_MAP ? lm_yaml_get(val, "source") : NULL;
    if (val->type == Y_MAP && check_keys(b, f->name, val, qkeys, "a quantity") != LM_OK)
      return b->status;
    if (!expr || expr->type != Y_SCALAR)
      return error_at(b, f->name, val->line, val->column, key->text,
                      "a quantity needs an expr"), b->status;
    if (strcmp(key->text, "denom") == 0 || strcmp(key->text, "normUnit") == 0 ||
        is_sysinfo_field(key->text))
      return error_at(b, f->name, key->line, key->column, key->text,
                      "this name is taken by a built-in variable"), b->status;
    if (lm_map_get(b->quant_index, key->text, NULL))
      return error_at(b, f->name, key->line, key->column, key->text,
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
    error_at(b, file, y->line, y->column, "id",
             "table id '%s' must be '%d.<number>' in panel %d", id, (int)panel, (int)panel);
    return NULL;
  }
  return lm_arena_strdup(b->arena, id);
}

/* Compile one metric table's columns, rows and cells. */
static lm_status compile_metric_table(builder *b, const char *file, const ynode *t,
                                      lm_tabledef *td) {
  const ynode *cols = lm_yaml_get(t, "columns");
  const ynode *rows = lm_yaml_get(t, "rows");
  if (!cols || cols->type != Y_MAP || cols->n_items == 0)
    return error_at(b, file, t->line, t->column, "columns",
                    "a metric table needs `columns:` (title: role)"), b->status;
  if (!rows || rows->type != Y_SEQ)
    return error_at(b, file, t->line, t->column, "rows",
                    "a metric table needs `rows:` (a list)"), b->status;
  const char *table_source = "pmc_perf";
  const ynode *ts = lm_yaml_get(t, "source");
  if (ts && !(table_source = scalar(b, file, ts, "source"))) return b->status;
  int templated = td->channels >= 0;

  td->first_col = b->cols.n;
  int32_t n_cols = (int32_t)(cols->n_items / 2);
  int32_t value_col = -1, peak_col = -1;
  for (int32_t i = 0; i < n_cols; i++) {
    const ynode *title = cols->items[2 * i], *role = cols->items[2 * i + 1];
    const char *role_name = scalar(b, file, role, title->text);
    if (!role_name) return b->status;
    size_t r = LM_ARRAY_LEN(roles);
    for (size_t k = 0; k < LM_ARRAY_LEN(roles); k++)
      if (strcmp(roles[k].name, role_name) == 0) r = k;
    if (r == LM_ARRAY_LEN(roles))
      return error_at(b, file, role->line, role->column, title->text,
                      "unknown column role '%s' (known: name, value, mean, min, max, "
                      "median, std, q1, q3, sum, count, peak, pct, unit, text, tips)",
                      role_name), b->status;
    lm_coldef cd = {lm_arena_strdup(b->arena, title->text), roles[r].role, roles[r].agg};
    if (!cd.title || !VEC_PUSH(b, b->cols, cd)) return b->status = LM_ENOMEM;
    if (value_col < 0 && (strcmp(role_name, "mean") == 0 || strcmp(role_name, "value") == 0))
      value_col = i;
    if (strcmp(role_name, "peak") == 0) peak_col = i;
  }
  td->n_cols = n_cols;
  td->first_row = b->rows.n;
  for (size_t ri = 0; ri < rows->n_items; ri++) {
    const ynode *row = rows->items[ri];
    if (row->type != Y_MAP)
      return error_at(b, file, row->line, row->column, NULL,
                      "a row must be a mapping (metric: name, ...)"), b->status;
    /* Validate keys: fixed ones plus the column titles. */
    for (size_t k = 0; k < row->n_items; k += 2) {
      const char *key = row->items[k]->text;
      static const char *const fixed[] = {"metric", "expr", "unit", "peak", "pct",
                                          "desc", "source", "corrected", NULL};
      int ok = 0;
      for (const char *const *f = fixed; *f && !ok; f++) ok = strcmp(*f, key) == 0;
      for (int32_t ci = 0; ci < n_cols && !ok; ci++)
        ok = strcmp(b->cols.v[td->first_col + ci].title, key) == 0;
      if (!ok)
        return error_at(b, file, row->items[k]->line, row->items[k]->column, key,
                        "unknown key in a row: neither metric, expr, unit, peak, pct, "
                        "desc, source, corrected nor a column title"), b->status;
    }
    const char *name = scalar(b, file, lm_yaml_get(row, "metric"), "metric");
    if (!name) {
      if (b->status == LM_OK)
        error_at(b, file, row->line, row->column, "metric", "a row needs `metric:` (its name)");
      return b->status;
    }
    const char *source = table_source;
    const ynode *rs = lm_yaml_get(row, "source");
    if (rs && !(source = scalar(b, file, rs, "source"))) return b->status;
    const char *desc = scalar(b, file, lm_yaml_get(row, "desc"), "desc");
    const ynode *expr_y = lm_yaml_get(row, "expr");
    int32_t expr_node = -1;
    if (expr_y && !expr_y->is_null) {
      expr_node = formula_node(b, file, expr_y, source, templated);
      if (expr_node < 0) return b->status;
    }
    lm_rowdef rd = {lm_arena_strdup(b->arena, name),
                    lm_arena_strdup(b->arena, desc ? desc : ""),
                    lm_arena_strdup(b->arena, source), b->cells.n};
    if (!rd.name || !rd.desc || !rd.source || !VEC_PUSH(b, b->rows, rd))
      return b->status = LM_ENOMEM;
    int32_t first_cell = b->cells.n;
    /* corrected: {expr: ..., <column>: ...} replaces cells where the
     * reference tool's formula is demonstrably wrong (--corrected). */
    const ynode *corr = lm_yaml_get(row, "corrected");
    int32_t corr_expr = -1;
    if (corr) {
      if (corr->type != Y_MAP)
        return error_at(b, file, corr->line, corr->column, "corrected",
                        "expected a mapping of expr or column title to formula"), b->status;
      for (size_t k = 0; k < corr->n_items; k += 2) {
        const char *key = corr->items[k]->text;
        int ok = strcmp(key, "expr") == 0;
        for (int32_t ci = 0; ci < n_cols && !ok; ci++)
          ok = strcmp(b->cols.v[td->first_col + ci].title, key) == 0;
        if (!ok)
          return error_at(b, file, corr->items[k]->line, corr->items[k]->column, key,
                          "unknown key in corrected: neither expr nor a column title"),
                 b->status;
      }
      const ynode *ce = lm_yaml_get(corr, "expr");
      if (ce && !ce->is_null && (corr_expr = formula_node(b, file, ce, source, templated)) < 0)
        return b->status;
    }
    for (int32_t ci = 0; ci < n_cols; ci++) {
      const lm_coldef *cd = &b->cols.v[td->first_col + ci];
      const char *role_name = cols->items[2 * ci + 1]->text;
      lm_celldef cell = {-1, -1, NULL, NULL};
      if (corr && cd->role == LM_COL_VALUE) {
        const ynode *cc = lm_yaml_get(corr, cd->title);
        if (cc && !cc->is_null) {
          if ((cell.corrected = formula_node(b, file, cc, source, templated)) < 0) return b->status;
          if (b->nodes.v[cell.corrected].vector)
            return error_at(b, file, cc->line, cc->column, cd->title,
                            "this cell gives one value per dispatch: wrap it in an "
                            "aggregate such as AVG(...)"), b->status;
        } else if (corr_expr >= 0 && cd->agg) {
          double k = strcmp(role_name, "q1") == 0 ? 0.25 : strcmp(role_name, "q3") == 0 ? 0.75 : 0;
          cell.corrected = make_node(b, cd->agg, corr_expr, -1, -1, k);
        }
      }
      const ynode *explicit = lm_yaml_get(row, cd->title);
      if (!explicit && strcmp(role_name, "peak") == 0) explicit = lm_yaml_get(row, "peak");
      if (!explicit && strcmp(role_name, "pct") == 0) explicit = lm_yaml_get(row, "pct");
      switch ((lm_col_role)cd->role) {
      case LM_COL_NAME: cell.text = rd.name; break;
      case LM_COL_TIPS: cell.text = ""; break;
      case LM_COL_UNIT: {
        const char *u = scalar(b, file, explicit ? explicit : lm_yaml_get(row, "unit"), "unit");
        cell.text = lm_arena_strdup(b->arena, u ? u : "");
        break;
      }
      case LM_COL_TEXT: {
        const char *tx = scalar(b, file, explicit, cd->title);
        cell.text = lm_arena_strdup(b->arena, tx && !(explicit && explicit->is_null) ? tx : "");
        break;
      }
      case LM_COL_VALUE:
        if (explicit) {
          if (explicit->type != Y_SCALAR)
            return error_at(b, file, explicit->line, explicit->column, cd->title,
                            "expected a formula"), b->status;
          if (!explicit->is_null) {
            cell.node = formula_node(b, file, explicit, source, templated);
            if (cell.node < 0) return b->status;
            cell.formula = lm_arena_strdup(b->arena, explicit->text);
            if (b->nodes.v[cell.node].vector)
              return error_at(b, file, explicit->line, explicit->column, cd->title,
                              "this cell gives one value per dispatch: wrap it in an "
                              "aggregate such as AVG(...)"), b->status;
          }
        } else if (cd->agg && expr_node >= 0) {
          double k = strcmp(role_name, "q1") == 0 ? 0.25 : strcmp(role_name, "q3") == 0 ? 0.75 : 0;
          cell.node = make_node(b, cd->agg, expr_node, -1, -1, k);
          cell.formula = lm_arena_strdup(b->arena, expr_y->text);
        } else if (strcmp(role_name, "pct") == 0 && value_col >= 0 && peak_col >= 0 &&
                   value_col < ci && peak_col < ci) {
          const lm_celldef *vc = &b->cells.v[first_cell + value_col];
          const lm_celldef *pc = &b->cells.v[first_cell + peak_col];
          int32_t v = vc->node, p = pc->node;
          if (v >= 0 && p >= 0)
            cell.node = make_node(b, LM_OP_DIV, make_node(b, LM_OP_MUL, make_const(b, 100), v, -1, 0),
                                  p, -1, 0);
          /* With a corrected value or peak, the percentage follows it. */
          int32_t cv = vc->corrected >= 0 ? vc->corrected : v;
          int32_t cp = pc->corrected >= 0 ? pc->corrected : p;
          if ((vc->corrected >= 0 || pc->corrected >= 0) && cv >= 0 && cp >= 0)
            cell.corrected = make_node(
                b, LM_OP_DIV, make_node(b, LM_OP_MUL, make_const(b, 100), cv, -1, 0), cp, -1, 0);
        }
        if (cell.node >= 0 && b->nodes.v[cell.node].chan && !templated)
          return error_at(b, file, row->line, row->column, cd->title,
                          "a per-channel value outside a table with `channels:`"), b->status;
        break;
      }
      if (b->status != LM_OK) return b->status;
      if (!VEC_PUSH(b, b->cells, cell)) return b->status = LM_ENOMEM;
    }
  }
  td->n_rows = b->rows.n - td->first_row;
  return b->status;
}

static lm_status load_panel(builder *b, const file_ctx *f) {
  static const char *const keys[] = {"panel", "title", "tables", NULL};
  static const char *const tkeys[] = {"id", "title", "kind", "style", "comparable",
                                      "channels", "source", "columns", "rows", NULL};
  if (check_keys(b, f->name, f->root, keys, "a panel file") != LM_OK) return b->status;
  const char *pid = scalar(b, f->name, lm_yaml_get(f->root, "panel"), "panel");
  const char *title = scalar(b, f->name, lm_yaml_get(f->root, "title"), "title");
  const ynode *tables = lm_yaml_get(f->root, "tables");
  if (!pid || !title || !tables || tables->type != Y_SEQ) {
    if (b->status == LM_OK)
      error_at(b, f->name, 1, 1, NULL,
               "a panel file needs `panel:` (its number), `title:` and `tables:` (a list)");
    return b->status;
  }
  char *end;
  long id = strtol(pid, &end, 10);
  if (*end || id < 0 || id > 9999)
    return error_at(b, f->name, f->root->line, f->root->column, "panel",
                    "panel must be a whole number"), b->status;
  for (int32_t i = 0; i < b->panels.n; i++)
    if (b->panels.v[i].id == id)
      return error_at(b, f->name, 1, 1, "panel", "panel %ld is defined twice", id), b->status;
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
      if (b->status == LM_OK) error_at(b, f->name, t->line, t->column, "id", "a table needs `id:`");
      return b->status;
    }
    for (int32_t k = 0; k < b->tables.n; k++)
      if (strcmp(b->tables.v[k].id, td.id) == 0)
        return error_at(b, f->name, t->line, t->column, "id", "table %s is defined twice",
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
        return error_at(b, f->name, t->line, t->column, "kind",
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
        return error_at(b, f->name, t->line, t->column, "style",
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
        return error_at(b, f->name, ch->line, ch->column, "channels",
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

/* ------------------------------------------------------------ assembling */

static int cmp_panel(const void *a, const void *b) {
  const lm_paneldef *x = a, *y = b;
  return (x->id > y->id) - (x->id < y->id);
}

static const char *base_name(const char *path) {
  const char *slash = strrchr(path, '/');
  return slash ? slash + 1 : path;
}

#define COPY_OUT(field, vec)                                                   \
  do {                                                                         \
    size_t bytes = (size_t)(vec).n * sizeof *(vec).v;                          \
    void *copy = lm_arena_alloc(b.arena, bytes ? bytes : 1);                    \
    if (!copy) goto nomem;                                                     \
    if (bytes) memcpy(copy, (vec).v, bytes);                                   \
    cat->field = copy;                                                         \
  } while (0)

lm_status lm_metrics_compile_texts(const char *const *names, const char *const *texts,
                                   size_t n, lm_catalog **out, lm_diag *diag) {
  return lm_metrics_compile_texts_compat(names, texts, n, NULL, out, diag);
}

static int is_overlay(const ynode *root) { return lm_yaml_get(root, "overlay") != NULL; }

/* Apply the overlays among files (those of versions up to target that name
 * the architecture or its base) to the other files, in version order. */
static lm_status apply_overlays(builder *b, file_ctx *files, size_t n, const char *target,
                                const char *arch, const char *base) {
  ynode **roots = lm_calloc(n ? n : 1, sizeof *roots);
  const char **names = lm_calloc(n ? n : 1, sizeof *names);
  if (!roots || !names) {
    lm_free(roots);
    lm_free(names);
    return b->status = LM_ENOMEM;
  }
  size_t n_defs = 0;
  for (size_t i = 0; i < n; i++)
    if (!is_overlay(files[i].root)) {
      roots[n_defs] = (ynode *)files[i].root;
      names[n_defs++] = files[i].name;
    }
  const char *archs[2] = {arch, base ? base : arch};
  int drop_empty = 0;
  for (const char *const *v = lm_compat_versions; *v && b->status == LM_OK; v++) {
    if (lm_compat_cmp(*v, target) > 0) break;
    for (size_t i = 0; i < n && b->status == LM_OK; i++) {
      const ynode *ov = files[i].root;
      if (!is_overlay(ov)) continue;
      const ynode *ver = lm_yaml_get(ov, "overlay");
      if (ver->type != Y_SCALAR || !lm_compat_known(ver->text)) {
        error_at(b, files[i].name, ver->line, ver->column, "overlay",
                 "unknown reference version '%s'", ver->type == Y_SCALAR ? ver->text : "");
        break;
      }
      if (strcmp(ver->text, *v) != 0 || !lm_overlay_applies(ov, archs, 2)) continue;
      lm_status st = lm_overlay_apply(files[i].name, ov, roots, names, n_defs, b->tmp, b->diag);
      if (st != LM_OK) b->status = st;
      files[i].applied = 1;
      drop_empty |= lm_overlay_drops_empty_rows(ov);
    }
  }
  if (drop_empty && b->status == LM_OK) lm_overlay_drop_empty_rows(roots, n_defs);
  lm_free(roots);
  lm_free(names);
  return b->status;
}

lm_status lm_metrics_compile_texts_compat(const char *const *names, const char *const *texts,
                                          size_t n, const char *compat, lm_catalog **out,
                                          lm_diag *diag) {
  builder b;
  memset(&b, 0, sizeof b);
  lm_catalog *cat = NULL;
  file_ctx *files = NULL;
  *out = NULL;
  b.diag = diag;
  b.arena = lm_arena_new(1 << 16);
  b.tmp = lm_arena_new(1 << 16);
  b.node_index = lm_map_new();
  b.input_index = lm_map_new();
  b.sysvar_index = lm_map_new();
  b.quant_index = lm_map_new();
  b.quant_memo = lm_map_new();
  files = lm_calloc(n ? n : 1, sizeof *files);
  if (!b.arena || !b.tmp || !b.node_index || !b.input_index || !b.sysvar_index ||
      !b.quant_index || !b.quant_memo || !files)
    goto nomem;

  /* Parse every file, then read arch.yaml and quantities.yaml first. */
  int have_arch = 0;
  for (size_t i = 0; i < n; i++) {
    files[i].name = lm_arena_strdup(b.arena, names[i]);
    if (!files[i].name) goto nomem;
    ynode *root;
    lm_status st = lm_yaml_load(files[i].name, texts[i], strlen(texts[i]), b.tmp, &root, diag);
    if (st != LM_OK) {
      b.status = st;
      goto fail;
    }
    if (root->type != Y_MAP) {
      error_at(&b, files[i].name, root->line, root->column, NULL,
               "a definition file must be a mapping");
      goto fail;
    }
    files[i].root = root;
  }
  /* The reference version: the one asked for, or the oldest the
   * definitions support (arch.yaml's `since`, else 3.0). */
  const char *target = compat;
  {
    const ynode *arch_root = NULL;
    for (size_t i = 0; i < n; i++)
      if (strcmp(base_name(files[i].name), "arch.yaml") == 0) arch_root = files[i].root;
    const ynode *since = lm_yaml_get(arch_root, "since");
    const ynode *an = lm_yaml_get(arch_root, "arch"), *bn = lm_yaml_get(arch_root, "base");
    const char *oldest = since && since->type == Y_SCALAR ? since->text : lm_compat_versions[0];
    if (!lm_compat_known(oldest)) {
      error_at(&b, "arch.yaml", since->line, since->column, "since",
               "unknown reference version '%s'", oldest);
      goto fail;
    }
    if (target && !lm_compat_known(target)) {
      b.status = lm_diag_set(diag, LM_EINVAL, NULL, 0, 0, "compat",
                             "unknown reference version '%s'", target);
      goto fail;
    }
    if (target && lm_compat_cmp(target, oldest) < 0) {
      b.status = lm_diag_set(diag, LM_EINVAL, NULL, 0, 0, "compat",
                             "%s has metric definitions only in rocprofiler-compute %s "
                             "semantics and later; version %s does not support it",
                             an && an->type == Y_SCALAR ? an->text : "this architecture",
                             oldest, target);
      goto fail;
    }
    if (!target) target = oldest;
    if (apply_overlays(&b, files, n, target, an && an->type == Y_SCALAR ? an->text : "",
                       bn && bn->type == Y_SCALAR ? bn->text : NULL) != LM_OK)
      goto fail;
  }
  for (size_t i = 0; i < n; i++) {
    if (is_overlay(files[i].root)) continue;
    if (strcmp(base_name(files[i].name), "arch.yaml") == 0) {
      if (load_arch(&b, &files[i]) != LM_OK) goto fail;
      have_arch = 1;
    }
  }
  if (!have_arch) {
    b.status = lm_diag_set(diag, LM_EPARSE, n ? names[0] : "", 0, 0, NULL,
                           "no arch.yaml: a definition folder names its architecture there");
    goto fail;
  }
  for (size_t i = 0; i < n; i++)
    if (!is_overlay(files[i].root) && strcmp(base_name(files[i].name), "quantities.yaml") == 0 &&
        load_quantities(&b, &files[i]) != LM_OK)
      goto fail;
  for (size_t i = 0; i < n; i++) {
    if (is_overlay(files[i].root)) continue;
    const char *base = base_name(files[i].name);
    if (strcmp(base, "arch.yaml") == 0 || strcmp(base, "quantities.yaml") == 0) continue;
    if (load_panel(&b, &files[i]) != LM_OK) goto fail;
  }
  /* Panels in id order, tables following their panel. */
  {
    qsort(b.panels.v, (size_t)b.panels.n, sizeof *b.panels.v, cmp_panel);
    lm_tabledef *ordered = lm_malloc((size_t)(b.tables.n ? b.tables.n : 1) * sizeof *ordered);
    if (!ordered) goto nomem;
    int32_t at = 0;
    for (int32_t p = 0; p < b.panels.n; p++) {
      memcpy(ordered + at, b.tables.v + b.panels.v[p].first_table,
             (size_t)b.panels.v[p].n_tables * sizeof *ordered);
      b.panels.v[p].first_table = at;
      at += b.panels.v[p].n_tables;
    }
    if (b.tables.n) memcpy(b.tables.v, ordered, (size_t)b.tables.n * sizeof *ordered);
    lm_free(ordered);
  }

  cat = lm_arena_alloc(b.arena, sizeof *cat);
  if (!cat) goto nomem;
  {
    /* The definitions' identity: FNV-1a over the names and texts of the
     * files used (overlays of other versions or architectures left out). */
    uint64_t h = 1469598103934665603ULL;
    for (size_t i = 0; i < n; i++) {
      if (is_overlay(files[i].root) && !files[i].applied) continue;
      const char *base = strrchr(names[i], '/');
      for (const char *p = base ? base + 1 : names[i]; *p; p++) h = (h ^ (unsigned char)*p) * 1099511628211ULL;
      for (const char *p = texts[i]; *p; p++) h = (h ^ (unsigned char)*p) * 1099511628211ULL;
      h = (h ^ 0xff) * 1099511628211ULL;
    }
    char hex[17];
    snprintf(hex, sizeof hex, "%016llx", (unsigned long long)h);
    cat->digest = lm_arena_strdup(b.arena, hex);
    if (!cat->digest) goto nomem;
  }
  cat->arch = b.arch;
  cat->compat = lm_arena_strdup(b.arena, target);
  if (!cat->compat) goto nomem;
  cat->products = b.products;
  cat->vendor = b.vendor ? b.vendor : "amd";
  cat->chip = b.chip ? b.chip : "";
  cat->l2_channels_per_xcd = b.l2_channels;
  cat->lds_banks_per_cu = b.lds_banks_per_cu;
  cat->pipes_per_gpu = b.pipes_per_gpu;
  cat->sqc_per_xcd = b.sqc_per_xcd;
  COPY_OUT(nodes, b.nodes);
  cat->n_nodes = b.nodes.n;
  COPY_OUT(inputs, b.inputs);
  cat->n_inputs = b.inputs.n;
  COPY_OUT(sysvars, b.sysvars);
  cat->n_sysvars = b.sysvars.n;
  {
    lm_norm *norms = lm_arena_alloc(b.arena, (size_t)(b.norms.n + 1) * sizeof *norms);
    if (!norms) goto nomem;
    for (int32_t i = 0; i < b.norms.n; i++) norms[i] = b.norms.v[i].norm;
    cat->norms = norms;
    cat->n_norms = b.norms.n;
  }
  COPY_OUT(norm_nodes, b.norm_nodes);
  cat->n_norm_slots = b.norm_slot_source.n;
  COPY_OUT(panels, b.panels);
  cat->n_panels = b.panels.n;
  COPY_OUT(tables, b.tables);
  cat->n_tables = b.tables.n;
  COPY_OUT(cols, b.cols);
  cat->n_cols = b.cols.n;
  COPY_OUT(rows, b.rows);
  cat->n_rows = b.rows.n;
  COPY_OUT(cells, b.cells);
  cat->n_cells = b.cells.n;
  COPY_OUT(counters, b.counters);
  cat->n_counters = b.counters.n;
  COPY_OUT(limits, b.limits);
  cat->n_limits = b.limits.n;
  COPY_OUT(aliases, b.aliases);
  cat->n_aliases = b.aliases.n;
  cat->accumulate = b.accumulate ? b.accumulate : "";
  cat->arena = b.arena;
  *out = cat;
  b.arena = NULL;
  goto cleanup;

nomem:
  b.status = lm_diag_set(diag, LM_ENOMEM, NULL, 0, 0, NULL, "out of memory");
fail:
  if (b.status == LM_OK) b.status = LM_EPARSE;
cleanup:
  lm_free(b.nodes.v);
  lm_free(b.inputs.v);
  lm_free(b.sysvars.v);
  lm_free(b.norms.v);
  lm_free(b.norm_nodes.v);
  lm_free(b.norm_slot_source.v);
  lm_free(b.quants.v);
  lm_free(b.panels.v);
  lm_free(b.tables.v);
  lm_free(b.cols.v);
  lm_free(b.rows.v);
  lm_free(b.cells.v);
  lm_free(b.counters.v);
  lm_free(b.limits.v);
  lm_free(b.aliases.v);
  lm_map_free(b.node_index);
  lm_map_free(b.input_index);
  lm_map_free(b.sysvar_index);
  lm_map_free(b.quant_index);
  lm_map_free(b.quant_memo);
  lm_free(files);
  lm_arena_free(b.tmp);
  lm_arena_free(b.arena);
  return b.status;
}

void lm_catalog_free(lm_catalog *catalog) {
  if (catalog && catalog->arena) lm_arena_free(catalog->arena);
}

int32_t lm_catalog_find_table(const lm_catalog *catalog, const char *id) {
  for (int32_t i = 0; i < catalog->n_tables; i++)
    if (strcmp(catalog->tables[i].id, id) == 0) return i;
  return -1;
}

static int cmp_strings(const void *a, const void *b) {
  return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* A list of definition files being gathered from folders. */
typedef struct file_list {
  char **names;
  size_t n, cap;
} file_list;

/* Append dir's *.yaml files in name order; skip_arch leaves out arch.yaml.
 * A folder that cannot be opened is an error naming it. */
static lm_status collect_yaml(const char *dir, int skip_arch, file_list *fl, lm_diag *diag) {
  DIR *d = opendir(dir);
  if (!d)
    return lm_diag_set(diag, LM_ENOTFOUND, dir, 0, 0, NULL,
                       "cannot open the metric definition folder");
  size_t first = fl->n;
  struct dirent *e;
  while ((e = readdir(d)) != NULL) {
    size_t len = strlen(e->d_name);
    if (len < 6 || strcmp(e->d_name + len - 5, ".yaml") != 0 || e->d_name[0] == '.') continue;
    if (skip_arch && strcmp(e->d_name, "arch.yaml") == 0) continue;
    if (fl->n == fl->cap) {
      size_t grown = fl->cap ? fl->cap * 2 : 32;
      char **fresh = lm_realloc(fl->names, grown * sizeof *fresh);
      if (!fresh) goto nomem;
      fl->names = fresh;
      fl->cap = grown;
    }
    size_t dl = strlen(dir);
    fl->names[fl->n] = lm_malloc(dl + len + 2);
    if (!fl->names[fl->n]) goto nomem;
    snprintf(fl->names[fl->n], dl + len + 2, "%s/%s", dir, e->d_name);
    fl->n++;
  }
  closedir(d);
  qsort(fl->names + first, fl->n - first, sizeof *fl->names, cmp_strings);
  return LM_OK;
nomem:
  closedir(d);
  return lm_diag_set(diag, LM_ENOMEM, dir, 0, 0, NULL, "out of memory");
}

/* The `base:` of dir/arch.yaml, copied into out (empty when none). */
static lm_status arch_base(const char *dir, char *out, size_t cap, lm_diag *diag) {
  char path[4096];
  out[0] = '\0';
  snprintf(path, sizeof path, "%s/arch.yaml", dir);
  char *text = NULL;
  if (lm_read_file(path, (size_t)16 << 20, &text, NULL, NULL) != LM_OK) return LM_OK;
  lm_arena *arena = lm_arena_new(1 << 12);
  ynode *root = NULL;
  lm_status st = arena ? lm_yaml_load(path, text, strlen(text), arena, &root, diag) : LM_ENOMEM;
  const ynode *base = st == LM_OK ? lm_yaml_get(root, "base") : NULL;
  if (base && base->type == Y_SCALAR) {
    if (strlen(base->text) >= cap || strchr(base->text, '/') || base->text[0] == '.')
      st = lm_diag_set(diag, LM_EPARSE, path, base->line, base->column, "base",
                       "expected the name of a sibling architecture folder");
    else
      snprintf(out, cap, "%s", base->text);
  }
  lm_arena_free(arena);
  lm_free(text);
  return st;
}

lm_status lm_metrics_compile_dir(const char *dir, lm_catalog **out, lm_diag *diag) {
  return lm_metrics_compile_dir_compat(dir, NULL, 0, NULL, out, diag);
}

lm_status lm_metrics_compile_dir_compat(const char *dir, const char *const *overlay_dirs,
                                        size_t n_overlay_dirs, const char *compat,
                                        lm_catalog **out, lm_diag *diag) {
  lm_status status = LM_OK;
  file_list fl = {0};
  char **texts = NULL;
  char base[256];
  *out = NULL;
  if ((status = arch_base(dir, base, sizeof base, diag)) != LM_OK) goto done;
  if (base[0]) {
    /* A derived architecture: the base's definitions, then the overlays,
     * then this folder's arch.yaml and overlays. */
    char bdir[4096];
    const char *slash = strrchr(dir, '/');
    int plen = slash ? (int)(slash - dir) : 1;
    snprintf(bdir, sizeof bdir, "%.*s/%s", plen, slash ? dir : ".", base);
    if ((status = collect_yaml(bdir, 1, &fl, diag)) != LM_OK) goto done;
  }
  for (size_t i = 0; i < n_overlay_dirs; i++)
    if ((status = collect_yaml(overlay_dirs[i], 1, &fl, diag)) != LM_OK) goto done;
  size_t before = fl.n;
  if ((status = collect_yaml(dir, 0, &fl, diag)) != LM_OK) goto done;
  if (fl.n == before) {
    status = lm_diag_set(diag, LM_ENOTFOUND, dir, 0, 0, NULL,
                         "no .yaml definition files in this folder");
    goto done;
  }
  texts = lm_calloc(fl.n, sizeof *texts);
  if (!texts) {
    status = lm_diag_set(diag, LM_ENOMEM, dir, 0, 0, NULL, "out of memory");
    goto done;
  }
  for (size_t i = 0; i < fl.n; i++) {
    status = lm_read_file(fl.names[i], (size_t)16 << 20, &texts[i], NULL, diag);
    if (status != LM_OK) goto done;
  }
  status = lm_metrics_compile_texts_compat((const char *const *)fl.names,
                                           (const char *const *)texts, fl.n, compat, out, diag);
done:
  for (size_t i = 0; i < fl.n; i++) {
    lm_free(fl.names[i]);
    if (texts) lm_free(texts[i]);
  }
  lm_free(fl.names);
  lm_free(texts);
  return status;
}

lm_status lm_catalog_check_counters(const lm_catalog *catalog, lm_diag *diag) {
  static const char *const builtin_columns[] = {
      "Dispatch_ID", "GPU_ID", "Grid_Size", "Workgroup_Size", "LDS_Per_Workgroup",
      "Scratch_Per_Workitem", "Arch_VGPR", "Accum_VGPR", "SGPR", "Wave_Size",
      "Start_Timestamp", "End_Timestamp", NULL};
  for (int32_t i = 0; i < catalog->n_inputs; i++) {
    const char *name = catalog->inputs[i].column;
    int ok = 0;
    for (const char *const *b = builtin_columns; *b && !ok; b++) ok = strcmp(*b, name) == 0;
    for (int32_t c = 0; c < catalog->n_counters && !ok; c++)
      ok = strcmp(catalog->counters[c], name) == 0;
    if (!ok)
      return lm_diag_set(diag, LM_ENOTFOUND, NULL, 0, 0, name,
                         "%s: counter not in the architecture's counter list (arch.yaml)",
                         catalog->arch);
  }
  return LM_OK;
}
