/*
 * compile.c - metric definitions (YAML) to a catalog over one shared graph.
 *
 * Invariant: a node stands for one distinct computation, looked up by
 * (operation, operands, constant) before it is built, so a quantity or a
 * repeated subexpression is computed once however many cells use it.
 * Constant operations are folded unless the result is NaN or infinite;
 * system-info variables stay leaves, so one catalog serves every GPU. A
 * named quantity is a macro over the using row's source, as the reference
 * substitutes text. docs/metric-format.md ("8.7 One graph per
 * architecture") says why.
 */
#include <dirent.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "metrics/compile_internal.h"

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

int lm_metrics_grow(void *vp, int32_t *cap, size_t elem) {
  void **p = vp;
  int32_t n = *cap ? *cap * 2 : 16;
  void *fresh = lm_realloc(*p, (size_t)n * elem);
  if (!fresh) return 0;
  *p = fresh;
  *cap = n;
  return 1;
}

int32_t lm_metrics_error_at(builder *b, const char *file, long line, long column,
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

int32_t lm_metrics_make_node(builder *b, uint8_t op, int32_t x, int32_t y, int32_t z,
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
      return lm_metrics_make_node(b, LM_OP_CONST, -1, -1, -1, r);
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

int32_t lm_metrics_make_const(builder *b, double k) {
  return lm_metrics_make_node(b, LM_OP_CONST, -1, -1, -1, k);
}

static int32_t make_input(builder *b, const char *source, const char *column,
                          int32_t index) {
  char key[1024];
  int len = snprintf(key, sizeof key, "%s\x1f%s\x1f%d", source, column, (int)index);
  if (len < 0 || (size_t)len >= sizeof key) {
    b->status = lm_fail_at(b->diag, LM_ELIMIT, NULL, 0, column, "column name too long");
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
  return lm_metrics_make_node(b, LM_OP_INPUT, id, -1, -1, 0);
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
  return lm_metrics_make_node(b, LM_OP_SYSVAR, id, -1, -1, 0);
}

/* $denom in a given source: one normalization slot per source. */
static int32_t make_norm(builder *b, const ctx *c, int32_t pos) {
  if (b->norms.n == 0)
    return lm_metrics_error_at(b, c->file, c->line, expr_column(c, pos), NULL,
                    "$denom needs the normalizations of quantities.yaml");
  int32_t slot = -1;
  for (int32_t i = 0; i < b->norm_slot_source.n; i++)
    if (strcmp(b->norm_slot_source.v[i], c->source) == 0) slot = i;
  if (slot < 0) {
    int32_t alts[16];
    int32_t per = b->norms.n;
    if (per > 16)
      return lm_metrics_error_at(b, c->file, c->line, c->column, NULL,
                      "more than 16 normalizations");
    for (int32_t i = 0; i < per; i++) {
      const norm_def *nd = &b->norms.v[i];
      ctx nc = {c->source, c->template_ok, nd->file, nd->line, nd->column, nd->exact};
      alts[i] = lm_metrics_compile_expr(b, nd->expr, &nc);
      if (alts[i] < 0) return -1;
    }
    for (int32_t i = 0; i < per; i++)
      if (!VEC_PUSH(b, b->norm_nodes, alts[i])) return -1;
    if (!VEC_PUSH(b, b->norm_slot_source, c->source)) return -1;
    slot = b->norm_slot_source.n - 1;
  }
  return lm_metrics_make_node(b, LM_OP_NORM, slot, -1, -1, 0);
}

int lm_metrics_is_sysinfo_field(const char *name) {
  for (const char *const *f = lm_sysinfo_fields; *f; f++)
    if (strcmp(*f, name) == 0) return 1;
  return 0;
}

static int32_t compile_var(builder *b, const lm_expr *e, const ctx *c) {
  if (strcmp(e->name, "denom") == 0) return make_norm(b, c, e->pos);
  if (strcmp(e->name, "normUnit") == 0)
    return lm_metrics_error_at(b, c->file, c->line, expr_column(c, e->pos), NULL,
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
      return lm_metrics_error_at(b, c->file, c->line, expr_column(c, e->pos), NULL,
                      "quantity $%s is defined in terms of itself", q->name);
    if (b->quant_depth >= MAX_QUANTITY_DEPTH)
      return lm_metrics_error_at(b, c->file, c->line, expr_column(c, e->pos), NULL,
                      "quantities nested more than %d deep at $%s (a quantity that uses a quantity "
                      "that uses ...): flatten the chain",
                      MAX_QUANTITY_DEPTH, q->name);
    q->busy = 1;
    b->quant_depth++;
    ctx qc = {source, c->template_ok, q->file, q->line, q->column, q->exact};
    int32_t node = lm_metrics_compile_expr(b, q->expr, &qc);
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
  if (!lm_metrics_is_sysinfo_field(e->name))
    return lm_metrics_error_at(b, c->file, c->line, expr_column(c, e->pos), NULL,
                    "unknown variable $%s: not a quantity of quantities.yaml "
                    "nor a sysinfo.csv field", e->name);
  return make_sysvar(b, e->name);
}

static int32_t const_arg(builder *b, const lm_expr *call, int32_t node,
                         const ctx *c, const char *what) {
  if (node < 0) return -1;
  if (b->nodes.v[node].op != LM_OP_CONST)
    return lm_metrics_error_at(b, c->file, c->line, expr_column(c, call->pos), NULL,
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
    return lm_metrics_error_at(b, c->file, c->line, expr_column(c, e->pos), NULL,
                    "unknown function %s() (known: AVG, MIN, MAX, MEDIAN, STD, "
                    "SUM, COUNT, QUANTILE, ROUND, TO_INT, MOD, CONCAT)", e->name);
  uint8_t op = e->n_args == 1 ? calls[which].op1 : e->n_args == 2 ? calls[which].op2 : 0;
  if (!op)
    return lm_metrics_error_at(b, c->file, c->line, expr_column(c, e->pos), NULL,
                    "%s() does not take %d argument%s", e->name, (int)e->n_args,
                    e->n_args == 1 ? "" : "s");
  int32_t x = lm_metrics_compile_expr(b, e->args[0], c);
  int32_t y = e->n_args > 1 ? lm_metrics_compile_expr(b, e->args[1], c) : -1;
  if (x < 0 || (e->n_args > 1 && y < 0)) return -1;
  if (op == LM_OP_QUANTILE || op == LM_OP_ROUND) {
    if (const_arg(b, e, y, c, op == LM_OP_ROUND ? "number of digits" : "quantile") < 0)
      return -1;
    double k = b->nodes.v[y].k;
    if (op == LM_OP_QUANTILE && !(k >= 0 && k <= 1))
      return lm_metrics_error_at(b, c->file, c->line, expr_column(c, e->pos), NULL,
                      "QUANTILE() takes a quantile between 0 and 1");
    if (op == LM_OP_ROUND && (k != floor(k) || fabs(k) > 15))
      return lm_metrics_error_at(b, c->file, c->line, expr_column(c, e->pos), NULL,
                      "ROUND() takes a whole number of digits");
    return lm_metrics_make_node(b, op, x, -1, -1, k);
  }
  return lm_metrics_make_node(b, op, x, y, -1, 0);
}

static int32_t compile_one(builder *b, const lm_expr *e, const ctx *c);

int32_t lm_metrics_compile_expr(builder *b, const lm_expr *e, const ctx *c) {
  if (b->status != LM_OK) return -1;
  if (b->depth >= MAX_COMPILE_DEPTH)
    return lm_metrics_error_at(b, c->file, c->line, expr_column(c, e->pos), NULL,
                    "formula too deep with its quantities expanded: more than %d levels",
                    MAX_COMPILE_DEPTH);
  b->depth++;
  int32_t node = compile_one(b, e, c);
  b->depth--;
  return node;
}

static int32_t compile_one(builder *b, const lm_expr *e, const ctx *c) {
  switch ((lm_expr_kind)e->kind) {
  case LM_X_NUM: return lm_metrics_make_const(b, e->num);
  case LM_X_NONE: return lm_metrics_make_const(b, LM_NAN);
  case LM_X_STRING:
    return lm_metrics_error_at(b, c->file, c->line, expr_column(c, e->pos), NULL,
                    "text is not a value a formula can compute with");
  case LM_X_VAR: return compile_var(b, e, c);
  case LM_X_COL:
    if (e->index == LM_INDEX_CHANNEL && !c->template_ok)
      return lm_metrics_error_at(b, c->file, c->line, expr_column(c, e->pos), NULL,
                      "%s[ch] is only valid in a table with `channels:`", e->name);
    return make_input(b, c->source, e->name, e->index);
  case LM_X_UNARY: {
    int32_t a = lm_metrics_compile_expr(b, e->a, c);
    if (a < 0) return -1;
    if (e->op == '+') return a;
    return lm_metrics_make_node(b, e->op == '-' ? LM_OP_NEG : LM_OP_NOT, a, -1, -1, 0);
  }
  case LM_X_BINARY:
  case LM_X_COMPARE: {
    int32_t a = lm_metrics_compile_expr(b, e->a, c);
    int32_t y = a < 0 ? -1 : lm_metrics_compile_expr(b, e->b, c);
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
    return lm_metrics_make_node(b, op, a, y, -1, 0);
  }
  case LM_X_IF: {
    int32_t body = lm_metrics_compile_expr(b, e->a, c);
    int32_t cond = body < 0 ? -1 : lm_metrics_compile_expr(b, e->b, c);
    int32_t other = cond < 0 ? -1 : lm_metrics_compile_expr(b, e->c, c);
    if (other < 0) return -1;
    return lm_metrics_make_node(b, LM_OP_WHERE, body, cond, other, 0);
  }
  case LM_X_CALL: return compile_call(b, e, c);
  }
  return -1;
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
    void *copy = lm_arena_alloc(b->arena, bytes ? bytes : 1);                  \
    if (!copy) goto nomem;                                                     \
    if (bytes) memcpy(copy, (vec).v, bytes);                                   \
    cat->field = copy;                                                         \
  } while (0)

lm_status lm_metrics_compile_texts(const char *const *names, const char *const *texts,
                                   size_t n, lm_catalog **out, lm_diag *diag) {
  return lm_metrics_compile_texts_compat(names, texts, n, NULL, out, diag);
}

static int is_overlay(const ynode *root) { return lm_yaml_get(root, "overlay") != NULL; }

/* A step that failed: its status, or LM_EPARSE where it left none. */
static lm_status failed(const builder *b) { return b->status != LM_OK ? b->status : LM_EPARSE; }

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
        lm_metrics_error_at(b, files[i].name, ver->line, ver->column, "overlay",
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

/* Parse every file (names[i], texts[i]) into files[i]. Errors: a file
 * that does not parse or is not a mapping, out of memory. */
static lm_status parse_files(builder *b, file_ctx *files, const char *const *names,
                             const char *const *texts, size_t n) {
  for (size_t i = 0; i < n; i++) {
    files[i].name = lm_arena_strdup(b->arena, names[i]);
    if (!files[i].name) return b->status = lm_oom(b->diag, NULL);
    ynode *root;
    lm_status st = lm_yaml_load(files[i].name, texts[i], strlen(texts[i]), b->tmp, &root, b->diag);
    if (st != LM_OK) return b->status = st;
    if (root->type != Y_MAP) {
      lm_metrics_error_at(b, files[i].name, root->line, root->column, NULL,
               "a definition file must be a mapping");
      return failed(b);
    }
    files[i].root = root;
  }
  return LM_OK;
}

/* The reference version, in *target: the one asked for (compat), or the
 * oldest the definitions support (arch.yaml's `since`, else 3.0); then
 * the overlays up to it are applied. Errors: an unknown version, one older
 * than the definitions, those of apply_overlays. */
static lm_status choose_version(builder *b, file_ctx *files, size_t n, const char *compat,
                                const char **target) {
  *target = compat;
  const ynode *arch_root = NULL;
  for (size_t i = 0; i < n; i++)
    if (strcmp(base_name(files[i].name), "arch.yaml") == 0) arch_root = files[i].root;
  const ynode *since = lm_yaml_get(arch_root, "since");
  const ynode *an = lm_yaml_get(arch_root, "arch"), *bn = lm_yaml_get(arch_root, "base");
  const char *oldest = since && since->type == Y_SCALAR ? since->text : lm_compat_versions[0];
  if (!lm_compat_known(oldest)) {
    lm_metrics_error_at(b, "arch.yaml", since->line, since->column, "since",
             "unknown reference version '%s'", oldest);
    return failed(b);
  }
  if (*target && !lm_compat_known(*target))
    return b->status = lm_fail_at(b->diag, LM_EINVAL, NULL, 0, "compat", "unknown reference version '%s'", *target);
  if (*target && lm_compat_cmp(*target, oldest) < 0)
    return b->status = lm_fail_at(b->diag, LM_EINVAL, NULL, 0, "compat",
                                  "%s has metric definitions only in rocprofiler-compute %s "
                                  "semantics and later; version %s does not support it",
                                  an && an->type == Y_SCALAR ? an->text : "this architecture", oldest, *target);
  if (!*target) *target = oldest;
  if (apply_overlays(b, files, n, *target, an && an->type == Y_SCALAR ? an->text : "",
                     bn && bn->type == Y_SCALAR ? bn->text : NULL) != LM_OK)
    return failed(b);
  return LM_OK;
}

/* Read arch.yaml, then quantities.yaml, then every panel file (overlays
 * left out). Errors: no arch.yaml (first_name names the folder's first
 * file), those of the loaders. */
static lm_status load_files(builder *b, file_ctx *files, size_t n, const char *first_name) {
  int have_arch = 0;
  for (size_t i = 0; i < n; i++) {
    if (is_overlay(files[i].root)) continue;
    if (strcmp(base_name(files[i].name), "arch.yaml") == 0) {
      if (lm_metrics_load_arch(b, &files[i]) != LM_OK) return failed(b);
      have_arch = 1;
    }
  }
  if (!have_arch)
    return b->status = lm_fail(b->diag, LM_EPARSE, first_name,
                               "no arch.yaml: a definition folder names its architecture there");
  for (size_t i = 0; i < n; i++)
    if (!is_overlay(files[i].root) && strcmp(base_name(files[i].name), "quantities.yaml") == 0 &&
        lm_metrics_load_quantities(b, &files[i]) != LM_OK)
      return failed(b);
  for (size_t i = 0; i < n; i++) {
    if (is_overlay(files[i].root)) continue;
    const char *base = base_name(files[i].name);
    if (strcmp(base, "arch.yaml") == 0 || strcmp(base, "quantities.yaml") == 0) continue;
    if (lm_metrics_load_panel(b, &files[i]) != LM_OK) return failed(b);
  }
  return LM_OK;
}

/* Panels in id order, tables following their panel. Errors: out of
 * memory. */
static lm_status order_tables(builder *b) {
  if (b->panels.n > 1) qsort(b->panels.v, (size_t)b->panels.n, sizeof *b->panels.v, cmp_panel);
  lm_tabledef *ordered = lm_malloc((size_t)(b->tables.n ? b->tables.n : 1) * sizeof *ordered);
  if (!ordered) return b->status = lm_oom(b->diag, NULL);
  int32_t at = 0;
  for (int32_t p = 0; p < b->panels.n; p++) {
    memcpy(ordered + at, b->tables.v + b->panels.v[p].first_table,
           (size_t)b->panels.v[p].n_tables * sizeof *ordered);
    b->panels.v[p].first_table = at;
    at += b->panels.v[p].n_tables;
  }
  if (b->tables.n) memcpy(b->tables.v, ordered, (size_t)b->tables.n * sizeof *ordered);
  lm_free(ordered);
  return LM_OK;
}

/* The definitions' identity: FNV-1a over the names and texts of the files
 * used (overlays of other versions or architectures left out), as 16 hex
 * digits in b's arena; NULL when out of memory. */
static const char *digest(builder *b, const file_ctx *files, const char *const *names,
                          const char *const *texts, size_t n) {
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
  return lm_arena_strdup(b->arena, hex);
}

/* Copy what b built into cat (in b's arena), for reference version
 * target. Errors: out of memory. */
static lm_status fill_catalog(builder *b, lm_catalog *cat, const char *target) {
  cat->arch = b->arch;
  cat->compat = lm_arena_strdup(b->arena, target);
  if (!cat->compat) goto nomem;
  cat->products = b->products;
  cat->vendor = b->vendor ? b->vendor : "amd";
  cat->chip = b->chip ? b->chip : "";
  cat->l2_channels_per_xcd = b->l2_channels;
  cat->lds_banks_per_cu = b->lds_banks_per_cu;
  cat->pipes_per_gpu = b->pipes_per_gpu;
  cat->sqc_per_xcd = b->sqc_per_xcd;
  COPY_OUT(nodes, b->nodes);
  cat->n_nodes = b->nodes.n;
  COPY_OUT(inputs, b->inputs);
  cat->n_inputs = b->inputs.n;
  COPY_OUT(sysvars, b->sysvars);
  cat->n_sysvars = b->sysvars.n;
  lm_norm *norms = lm_arena_alloc(b->arena, (size_t)(b->norms.n + 1) * sizeof *norms);
  if (!norms) goto nomem;
  for (int32_t i = 0; i < b->norms.n; i++) norms[i] = b->norms.v[i].norm;
  cat->norms = norms;
  cat->n_norms = b->norms.n;
  COPY_OUT(norm_nodes, b->norm_nodes);
  cat->n_norm_slots = b->norm_slot_source.n;
  COPY_OUT(panels, b->panels);
  cat->n_panels = b->panels.n;
  COPY_OUT(tables, b->tables);
  cat->n_tables = b->tables.n;
  COPY_OUT(cols, b->cols);
  cat->n_cols = b->cols.n;
  COPY_OUT(rows, b->rows);
  cat->n_rows = b->rows.n;
  COPY_OUT(cells, b->cells);
  cat->n_cells = b->cells.n;
  COPY_OUT(counters, b->counters);
  cat->n_counters = b->counters.n;
  COPY_OUT(limits, b->limits);
  cat->n_limits = b->limits.n;
  COPY_OUT(aliases, b->aliases);
  cat->n_aliases = b->aliases.n;
  COPY_OUT(unmeasurable, b->unmeasurable);
  cat->n_unmeasurable = b->unmeasurable.n;
  cat->accumulate = b->accumulate ? b->accumulate : "";
  cat->arena = b->arena;
  return LM_OK;
nomem:
  return b->status = lm_oom(b->diag, NULL);
}

lm_status lm_metrics_compile_texts_compat(const char *const *names, const char *const *texts,
                                          size_t n, const char *compat, lm_catalog **out,
                                          lm_diag *diag) {
  builder b;
  memset(&b, 0, sizeof b);
  lm_catalog *cat = NULL;
  file_ctx *files = NULL;
  const char *target = NULL;
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
  if (parse_files(&b, files, names, texts, n) != LM_OK) goto fail;
  if (choose_version(&b, files, n, compat, &target) != LM_OK) goto fail;
  if (load_files(&b, files, n, n ? names[0] : "") != LM_OK) goto fail;
  if (order_tables(&b) != LM_OK) goto fail;
  cat = lm_arena_alloc(b.arena, sizeof *cat);
  if (!cat) goto nomem;
  if (!(cat->digest = digest(&b, files, names, texts, n))) goto nomem;
  if (fill_catalog(&b, cat, target) != LM_OK) goto fail;
  *out = cat;
  b.arena = NULL;
  goto cleanup;

nomem:
  b.status = lm_oom(diag, NULL);
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
  lm_free(b.unmeasurable.v);
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
  if (!d) return lm_fail(diag, LM_ENOTFOUND, dir, "cannot open the metric definition folder");
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
  /* (no names: no array to sort; qsort must not be given NULL) */
  if (fl->n - first > 1) qsort(fl->names + first, fl->n - first, sizeof *fl->names, cmp_strings);
  return LM_OK;
nomem:
  closedir(d);
  return lm_oom(diag, dir);
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
    status = lm_fail(diag, LM_ENOTFOUND, dir, "no .yaml definition files in this folder");
    goto done;
  }
  texts = lm_calloc(fl.n, sizeof *texts);
  if (!texts) {
    status = lm_oom(diag, dir);
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
      "Start_Timestamp", "End_Timestamp", "Measured_Power_W", "Measured_Temp_C", NULL};
  for (int32_t i = 0; i < catalog->n_inputs; i++) {
    const char *name = catalog->inputs[i].column;
    int ok = 0;
    for (const char *const *b = builtin_columns; *b && !ok; b++) ok = strcmp(*b, name) == 0;
    for (int32_t c = 0; c < catalog->n_counters && !ok; c++)
      ok = strcmp(catalog->counters[c], name) == 0;
    if (!ok)
      return lm_fail_at(diag, LM_ENOTFOUND, NULL, 0, name,
                        "%s: counter not in the architecture's counter list (arch.yaml)", catalog->arch);
  }
  return LM_OK;
}
