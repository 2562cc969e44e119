/*
 * emit.c - writing a compiled catalog as C source.
 *
 * The build runs the metric compiler over metrics/<arch>/ and links the
 * result in as constant arrays, so lumen never parses a built-in formula
 * at run time and the catalog costs nothing to load.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "metrics/internal.h"

static void emit_string(lm_buf *out, const char *s) {
  if (!s) {
    lm_buf_puts(out, "NULL");
    return;
  }
  lm_buf_putc(out, '"');
  for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
    if (*p == '"' || *p == '\\') lm_buf_printf(out, "\\%c", *p);
    else if (*p >= 32 && *p < 127 && *p != '?') lm_buf_putc(out, (char)*p);
    else lm_buf_printf(out, "\\%03o", *p); /* octal: never runs into a digit */
  }
  lm_buf_putc(out, '"');
}

static void emit_double(lm_buf *out, double v) {
  if (isnan(v)) lm_buf_puts(out, "LM_NAN");
  else if (isinf(v)) lm_buf_puts(out, v < 0 ? "-LM_INF" : "LM_INF");
  else lm_buf_printf(out, "%.17g", v);
}

lm_status lm_catalog_emit_c(const lm_catalog *c, const char *sym, lm_buf *out) {
  lm_buf_printf(out, "/* %s: compiled from metrics/%s by lumen-metricc. */\n\n",
                c->arch, c->arch);
  lm_buf_printf(out, "static const lm_node %s_nodes[] = {\n", sym);
  for (int32_t i = 0; i < c->n_nodes; i++) {
    const lm_node *n = &c->nodes[i];
    lm_buf_printf(out, "  {%u, %u, %u, %u, %u, %d, %d, %d, ", n->op, n->vector, n->chan,
                  n->stage, n->masked, (int)n->a, (int)n->b, (int)n->c);
    emit_double(out, n->k);
    lm_buf_puts(out, "},\n");
  }
  lm_buf_printf(out, "  {0, 0, 0, 0, 0, -1, -1, -1, 0}\n};\n\nstatic const lm_input %s_inputs[] = {\n", sym);
  for (int32_t i = 0; i < c->n_inputs; i++) {
    lm_buf_puts(out, "  {");
    emit_string(out, c->inputs[i].source);
    lm_buf_puts(out, ", ");
    emit_string(out, c->inputs[i].column);
    lm_buf_printf(out, ", %d},\n", (int)c->inputs[i].index);
  }
  lm_buf_printf(out, "  {NULL, NULL, 0}\n};\n\nstatic const char *const %s_sysvars[] = {\n", sym);
  for (int32_t i = 0; i < c->n_sysvars; i++) {
    lm_buf_puts(out, "  ");
    emit_string(out, c->sysvars[i]);
    lm_buf_puts(out, ",\n");
  }
  lm_buf_printf(out, "  NULL\n};\n\nstatic const lm_norm %s_norms[] = {\n", sym);
  for (int32_t i = 0; i < c->n_norms; i++) {
    lm_buf_puts(out, "  {");
    emit_string(out, c->norms[i].name);
    lm_buf_puts(out, ", ");
    emit_string(out, c->norms[i].unit);
    lm_buf_puts(out, "},\n");
  }
  lm_buf_printf(out, "  {NULL, NULL}\n};\n\nstatic const int32_t %s_norm_nodes[] = {", sym);
  for (int32_t i = 0; i < c->n_norm_slots * c->n_norms; i++)
    lm_buf_printf(out, "%s%d", i % 16 ? ", " : "\n  ", (int)c->norm_nodes[i]);
  lm_buf_printf(out, "%s\n  -1\n};\n\nstatic const lm_paneldef %s_panels[] = {\n",
                c->n_norm_slots > 0 && c->n_norms > 0 ? "," : "", sym);
  for (int32_t i = 0; i < c->n_panels; i++) {
    lm_buf_printf(out, "  {%d, ", (int)c->panels[i].id);
    emit_string(out, c->panels[i].title);
    lm_buf_printf(out, ", %d, %d},\n", (int)c->panels[i].first_table,
                  (int)c->panels[i].n_tables);
  }
  lm_buf_printf(out, "  {0, NULL, 0, 0}\n};\n\nstatic const lm_tabledef %s_tables[] = {\n", sym);
  for (int32_t i = 0; i < c->n_tables; i++) {
    const lm_tabledef *t = &c->tables[i];
    lm_buf_puts(out, "  {");
    emit_string(out, t->id);
    lm_buf_puts(out, ", ");
    emit_string(out, t->title);
    lm_buf_printf(out, ", %u, %u, %u, %d, %d, %d, %d, %d},\n", t->kind, t->style,
                  t->comparable, (int)t->channels, (int)t->first_col, (int)t->n_cols,
                  (int)t->first_row, (int)t->n_rows);
  }
  lm_buf_printf(out, "  {NULL, NULL, 0, 0, 0, -1, 0, 0, 0, 0}\n};\n\nstatic const lm_coldef %s_cols[] = {\n", sym);
  for (int32_t i = 0; i < c->n_cols; i++) {
    lm_buf_puts(out, "  {");
    emit_string(out, c->cols[i].title);
    lm_buf_printf(out, ", %u, %u},\n", c->cols[i].role, c->cols[i].agg);
  }
  lm_buf_printf(out, "  {NULL, 0, 0}\n};\n\nstatic const lm_rowdef %s_rows[] = {\n", sym);
  for (int32_t i = 0; i < c->n_rows; i++) {
    lm_buf_puts(out, "  {");
    emit_string(out, c->rows[i].name);
    lm_buf_puts(out, ", ");
    emit_string(out, c->rows[i].desc);
    lm_buf_puts(out, ", ");
    emit_string(out, c->rows[i].source);
    lm_buf_printf(out, ", %d},\n", (int)c->rows[i].first_cell);
  }
  lm_buf_printf(out, "  {NULL, NULL, NULL, 0}\n};\n\nstatic const lm_celldef %s_cells[] = {\n", sym);
  for (int32_t i = 0; i < c->n_cells; i++) {
    lm_buf_printf(out, "  {%d, %d, ", (int)c->cells[i].node, (int)c->cells[i].corrected);
    emit_string(out, c->cells[i].text);
    lm_buf_puts(out, ", ");
    emit_string(out, c->cells[i].formula);
    lm_buf_puts(out, "},\n");
  }
  lm_buf_printf(out, "  {-1, -1, NULL, NULL}\n};\n\nstatic const char *const %s_counters[] = {\n", sym);
  for (int32_t i = 0; i < c->n_counters; i++) {
    lm_buf_puts(out, "  ");
    emit_string(out, c->counters[i]);
    lm_buf_puts(out, ",\n");
  }
  lm_buf_printf(out, "  NULL\n};\n\nstatic const lm_block_limit %s_limits[] = {\n", sym);
  for (int32_t i = 0; i < c->n_limits; i++) {
    lm_buf_puts(out, "  {");
    emit_string(out, c->limits[i].block);
    lm_buf_printf(out, ", %d},\n", (int)c->limits[i].limit);
  }
  lm_buf_printf(out, "  {NULL, 0}\n};\n\nstatic const lm_block_alias %s_aliases[] = {\n", sym);
  for (int32_t i = 0; i < c->n_aliases; i++) {
    lm_buf_puts(out, "  {");
    emit_string(out, c->aliases[i].block);
    lm_buf_puts(out, ", ");
    emit_string(out, c->aliases[i].uses);
    lm_buf_puts(out, "},\n");
  }
  lm_buf_printf(out, "  {NULL, NULL}\n};\n\nconst lm_catalog %s = {\n  ", sym);
  emit_string(out, c->arch);
  lm_buf_puts(out, ", ");
  emit_string(out, c->products);
  lm_buf_printf(out,
                ", %d, %d, %d, %d,\n  %s_nodes, %d, %s_inputs, %d, %s_sysvars, %d,\n"
                "  %s_norms, %d, %s_norm_nodes, %d,\n  %s_panels, %d, %s_tables, %d,\n"
                "  %s_cols, %d, %s_rows, %d, %s_cells, %d,\n  %s_counters, %d, "
                "%s_limits, %d, %s_aliases, %d, ",
                (int)c->l2_channels_per_xcd, (int)c->lds_banks_per_cu, (int)c->pipes_per_gpu,
                (int)c->sqc_per_xcd, sym, (int)c->n_nodes, sym, (int)c->n_inputs,
                sym, (int)c->n_sysvars, sym, (int)c->n_norms, sym, (int)c->n_norm_slots,
                sym, (int)c->n_panels, sym, (int)c->n_tables, sym, (int)c->n_cols, sym,
                (int)c->n_rows, sym, (int)c->n_cells, sym, (int)c->n_counters, sym,
                (int)c->n_limits, sym, (int)c->n_aliases);
  emit_string(out, c->accumulate);
  lm_buf_puts(out, ", NULL, ");
  emit_string(out, c->digest);
  lm_buf_puts(out, ", ");
  emit_string(out, c->vendor);
  lm_buf_puts(out, ", ");
  emit_string(out, c->chip);
  lm_buf_puts(out, ", ");
  emit_string(out, c->compat ? c->compat : "3.0");
  lm_buf_puts(out, "\n};\n");
  return out->failed ? LM_ENOMEM : LM_OK;
}
