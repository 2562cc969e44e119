/*
 * emit.c - writing a compiled catalog as C source, and the one order in which
 * a catalog's strings are visited.
 *
 * The build compiles metrics/<arch>/ and links the result in, so no built-in
 * formula is parsed at run time. The arrays hold no pointers, which the
 * loader would rewrite at every start, page by page; their strings go to one
 * shared, de-duplicated block, each catalog lists where its strings start in
 * it in lm_catalog_visit_strings' order, and builtin.c puts the pointers back
 * when a catalog is first asked for. Why: docs/streaming.md, "The catalogs
 * without pointers".
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "metrics/internal.h"

void lm_catalog_visit_strings(const lm_catalog *c, lm_string_slot_fn fn, void *ctx) {
  fn(&c->arch, ctx);
  fn(&c->products, ctx);
  for (int32_t i = 0; i < c->n_inputs; i++) {
    fn(&c->inputs[i].source, ctx);
    fn(&c->inputs[i].column, ctx);
  }
  for (int32_t i = 0; i < c->n_sysvars; i++) fn(&c->sysvars[i], ctx);
  for (int32_t i = 0; i < c->n_norms; i++) {
    fn(&c->norms[i].name, ctx);
    fn(&c->norms[i].unit, ctx);
  }
  for (int32_t i = 0; i < c->n_panels; i++) fn(&c->panels[i].title, ctx);
  for (int32_t i = 0; i < c->n_tables; i++) {
    fn(&c->tables[i].id, ctx);
    fn(&c->tables[i].title, ctx);
  }
  for (int32_t i = 0; i < c->n_cols; i++) fn(&c->cols[i].title, ctx);
  for (int32_t i = 0; i < c->n_rows; i++) {
    fn(&c->rows[i].name, ctx);
    fn(&c->rows[i].desc, ctx);
    fn(&c->rows[i].source, ctx);
  }
  for (int32_t i = 0; i < c->n_cells; i++) {
    fn(&c->cells[i].text, ctx);
    fn(&c->cells[i].formula, ctx);
  }
  for (int32_t i = 0; i < c->n_counters; i++) fn(&c->counters[i], ctx);
  for (int32_t i = 0; i < c->n_limits; i++) fn(&c->limits[i].block, ctx);
  for (int32_t i = 0; i < c->n_aliases; i++) {
    fn(&c->aliases[i].block, ctx);
    fn(&c->aliases[i].uses, ctx);
  }
  fn(&c->accumulate, ctx);
  fn(&c->digest, ctx);
  fn(&c->vendor, ctx);
  fn(&c->chip, ctx);
  fn(&c->compat, ctx);
  for (int32_t i = 0; i < c->n_unmeasurable; i++) {
    fn(&c->unmeasurable[i].what, ctx);
    fn(&c->unmeasurable[i].why, ctx);
    fn(&c->unmeasurable[i].counters, ctx);
  }
}

struct lm_string_pool {
  lm_map *offsets; /* string -> its offset in text */
  lm_buf text;     /* the strings, each followed by its NUL */
};

lm_string_pool *lm_string_pool_new(void) {
  lm_string_pool *pool = lm_calloc(1, sizeof *pool);
  if (pool && !(pool->offsets = lm_map_new())) {
    lm_free(pool);
    pool = NULL;
  }
  return pool;
}

void lm_string_pool_free(lm_string_pool *pool) {
  if (!pool) return;
  lm_map_free(pool->offsets);
  lm_buf_fini(&pool->text);
  lm_free(pool);
}

/* The offset of s in the pool, adding it when new; LM_IMAGE_NULL for NULL
 * and on failure (pool->text.failed is then set). */
static uint32_t pool_offset(lm_string_pool *pool, const char *s) {
  if (!s) return LM_IMAGE_NULL;
  int64_t at;
  if (lm_map_get(pool->offsets, s, &at)) return (uint32_t)at;
  size_t n = strlen(s);
  if (pool->text.len + n + 1 >= LM_IMAGE_NULL || lm_map_put(pool->offsets, s, (int64_t)pool->text.len) != LM_OK) {
    pool->text.failed = 1;
    return LM_IMAGE_NULL;
  }
  at = (int64_t)pool->text.len;
  lm_buf_append(&pool->text, s, n + 1);
  return (uint32_t)at;
}

static void emit_string(lm_buf *out, const char *s, size_t n) {
  lm_buf_putc(out, '"');
  for (const unsigned char *p = (const unsigned char *)s; p < (const unsigned char *)s + n; p++) {
    if (*p == '"' || *p == '\\') lm_buf_printf(out, "\\%c", *p);
    else if (*p >= 32 && *p < 127 && *p != '?') lm_buf_putc(out, (char)*p);
    else lm_buf_printf(out, "\\%03o", *p); /* octal: never runs into a digit */
  }
  lm_buf_putc(out, '"');
}

lm_status lm_string_pool_emit_c(const lm_string_pool *pool, const char *symbol, lm_buf *out) {
  lm_buf_printf(out, "const char %s[] =\n", symbol);
  if (pool->text.len == 0) lm_buf_puts(out, "  \"\"");
  /* One literal per string, with its NUL written out: the compiler joins them. */
  for (size_t at = 0; at < pool->text.len;) {
    size_t n = strlen(pool->text.data + at);
    lm_buf_puts(out, "  ");
    emit_string(out, pool->text.data + at, n);
    lm_buf_puts(out, " \"\\0\"");
    at += n + 1;
    if (at < pool->text.len) lm_buf_putc(out, '\n');
  }
  lm_buf_puts(out, ";\n");
  return out->failed || pool->text.failed ? LM_ENOMEM : LM_OK;
}

static void emit_double(lm_buf *out, double v) {
  if (isnan(v)) lm_buf_puts(out, "LM_NAN");
  else if (isinf(v)) lm_buf_puts(out, v < 0 ? "-LM_INF" : "LM_INF");
  else lm_buf_printf(out, "%.17g", v);
}

typedef struct ref_emit {
  lm_string_pool *pool;
  lm_buf *out;
  size_t n;
} ref_emit;

static void emit_ref(const char *const *slot, void *ctx) {
  ref_emit *r = ctx;
  uint32_t at = pool_offset(r->pool, *slot);
  const char *sep = r->n == 0 ? "\n  " : r->n % 8 ? ", " : ",\n  ";
  if (at == LM_IMAGE_NULL) lm_buf_printf(r->out, "%sLM_IMAGE_NULL", sep);
  else lm_buf_printf(r->out, "%s%u", sep, (unsigned)at);
  r->n++;
}

lm_status lm_catalog_emit_c(const lm_catalog *c, const char *sym, lm_string_pool *pool, lm_buf *out) {
  lm_buf_printf(out, "/* %s (%s): compiled from metrics/%s by lumen-metricc. */\n\n", c->arch,
                c->compat, c->arch);
  lm_buf_printf(out, "static const lm_node %s_nodes[] = {\n", sym);
  for (int32_t i = 0; i < c->n_nodes; i++) {
    const lm_node *n = &c->nodes[i];
    lm_buf_printf(out, "  {%u, %u, %u, %u, %u, %d, %d, %d, ", n->op, n->vector, n->chan, n->stage,
                  n->masked, (int)n->a, (int)n->b, (int)n->c);
    emit_double(out, n->k);
    lm_buf_puts(out, "},\n");
  }
  /* Every array keeps its terminating entry; the strings are NULL here. */
  lm_buf_printf(out, "  {0, 0, 0, 0, 0, -1, -1, -1, 0}\n};\n\nstatic const lm_input %s_inputs[] = {\n", sym);
  for (int32_t i = 0; i < c->n_inputs; i++)
    lm_buf_printf(out, "  {NULL, NULL, %d},\n", (int)c->inputs[i].index);
  lm_buf_printf(out, "  {NULL, NULL, 0}\n};\n\nstatic const char *const %s_sysvars[%d];\n", sym,
                (int)c->n_sysvars + 1);
  lm_buf_printf(out, "static const lm_norm %s_norms[%d];\n", sym, (int)c->n_norms + 1);
  lm_buf_printf(out, "\nstatic const int32_t %s_norm_nodes[] = {", sym);
  for (int32_t i = 0; i < c->n_norm_slots * c->n_norms; i++)
    lm_buf_printf(out, "%s%d", i % 16 ? ", " : "\n  ", (int)c->norm_nodes[i]);
  lm_buf_printf(out, "%s\n  -1\n};\n\nstatic const lm_paneldef %s_panels[] = {\n",
                c->n_norm_slots > 0 && c->n_norms > 0 ? "," : "", sym);
  for (int32_t i = 0; i < c->n_panels; i++)
    lm_buf_printf(out, "  {%d, NULL, %d, %d},\n", (int)c->panels[i].id, (int)c->panels[i].first_table,
                  (int)c->panels[i].n_tables);
  lm_buf_printf(out, "  {0, NULL, 0, 0}\n};\n\nstatic const lm_tabledef %s_tables[] = {\n", sym);
  for (int32_t i = 0; i < c->n_tables; i++) {
    const lm_tabledef *t = &c->tables[i];
    lm_buf_printf(out, "  {NULL, NULL, %u, %u, %u, %d, %d, %d, %d, %d},\n", t->kind, t->style, t->comparable,
                  (int)t->channels, (int)t->first_col, (int)t->n_cols, (int)t->first_row, (int)t->n_rows);
  }
  lm_buf_printf(out, "  {NULL, NULL, 0, 0, 0, -1, 0, 0, 0, 0}\n};\n\nstatic const lm_coldef %s_cols[] = {\n", sym);
  for (int32_t i = 0; i < c->n_cols; i++)
    lm_buf_printf(out, "  {NULL, %u, %u},\n", c->cols[i].role, c->cols[i].agg);
  lm_buf_printf(out, "  {NULL, 0, 0}\n};\n\nstatic const lm_rowdef %s_rows[] = {\n", sym);
  for (int32_t i = 0; i < c->n_rows; i++)
    lm_buf_printf(out, "  {NULL, NULL, NULL, %d},\n", (int)c->rows[i].first_cell);
  lm_buf_printf(out, "  {NULL, NULL, NULL, 0}\n};\n\nstatic const lm_celldef %s_cells[] = {\n", sym);
  for (int32_t i = 0; i < c->n_cells; i++)
    lm_buf_printf(out, "  {%d, %d, NULL, NULL},\n", (int)c->cells[i].node, (int)c->cells[i].corrected);
  lm_buf_printf(out, "  {-1, -1, NULL, NULL}\n};\n\nstatic const char *const %s_counters[%d];\n", sym,
                (int)c->n_counters + 1);
  lm_buf_printf(out, "\nstatic const lm_block_limit %s_limits[] = {\n", sym);
  for (int32_t i = 0; i < c->n_limits; i++) lm_buf_printf(out, "  {NULL, %d},\n", (int)c->limits[i].limit);
  lm_buf_printf(out, "  {NULL, 0}\n};\n\nstatic const lm_block_alias %s_aliases[%d];\n", sym,
                (int)c->n_aliases + 1);
  lm_buf_printf(out, "static const lm_unmeasurable %s_unmeasurable[%d];\n", sym, (int)c->n_unmeasurable + 1);
  lm_buf_printf(out,
                "\nstatic const lm_catalog %s_shape = {\n  NULL, NULL, %d, %d, %d, %d,\n"
                "  %s_nodes, %d, %s_inputs, %d, %s_sysvars, %d,\n"
                "  %s_norms, %d, %s_norm_nodes, %d,\n  %s_panels, %d, %s_tables, %d,\n"
                "  %s_cols, %d, %s_rows, %d, %s_cells, %d,\n  %s_counters, %d, "
                "%s_limits, %d, %s_aliases, %d,\n  NULL, NULL, NULL, NULL, NULL, NULL,\n  %s_unmeasurable, %d\n};\n\n",
                sym, (int)c->l2_channels_per_xcd, (int)c->lds_banks_per_cu, (int)c->pipes_per_gpu,
                (int)c->sqc_per_xcd, sym, (int)c->n_nodes, sym, (int)c->n_inputs, sym, (int)c->n_sysvars, sym,
                (int)c->n_norms, sym, (int)c->n_norm_slots, sym, (int)c->n_panels, sym, (int)c->n_tables, sym,
                (int)c->n_cols, sym, (int)c->n_rows, sym, (int)c->n_cells, sym, (int)c->n_counters, sym,
                (int)c->n_limits, sym, (int)c->n_aliases, sym, (int)c->n_unmeasurable);
  lm_buf_printf(out, "static const uint32_t %s_refs[] = {", sym);
  ref_emit r = {pool, out, 0};
  lm_catalog_visit_strings(c, emit_ref, &r);
  lm_buf_puts(out, "\n};\n");
  if (pool->text.failed) return LM_ENOMEM;
  return out->failed ? LM_ENOMEM : LM_OK;
}
