/*
 * select.c - what -b items select in a catalog: panels, tables, metric
 * ids, metric names and hardware blocks. Shared by analyze (which tables
 * and rows to show) and profile (which counters to collect), so the same
 * item means the same thing in both.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "metrics/internal.h"

void lm_selection_fini(lm_selection *sel) {
  for (size_t i = 0; i < sel->n_metric_ids; i++) lm_free(sel->metric_ids[i]);
  lm_free(sel->metric_ids);
  lm_free(sel->tables);
  lm_free(sel->rows);
  memset(sel, 0, sizeof *sel);
}

/* Does any cell of row definition `row` read a counter of `block`? */
static int row_uses_block(const lm_catalog *cat, const lm_tabledef *td, int32_t row,
                          const char *block, uint8_t *seen, int32_t *stack) {
  size_t bl = strlen(block);
  int top = 0;
  memset(seen, 0, (size_t)cat->n_nodes);
  for (int32_t ci = 0; ci < td->n_cols; ci++) {
    int32_t node = cat->cells[cat->rows[row].first_cell + ci].node;
    if (node >= 0 && !seen[node]) {
      seen[node] = 1;
      stack[top++] = node;
    }
  }
  while (top > 0) {
    const lm_node *n = &cat->nodes[stack[--top]];
    if (n->op == LM_OP_INPUT) {
      const char *col = cat->inputs[n->a].column;
      if (strncmp(col, block, bl) == 0 && col[bl] == '_') return 1;
      continue;
    }
    int32_t ops[16];
    int n_ops = 0;
    if (n->op == LM_OP_NORM) {
      for (int32_t i = 0; i < cat->n_norms && i < 16; i++)
        ops[n_ops++] = cat->norm_nodes[n->a * cat->n_norms + i];
    } else if (n->op != LM_OP_CONST && n->op != LM_OP_SYSVAR) {
      ops[n_ops++] = n->a;
      ops[n_ops++] = n->b;
      ops[n_ops++] = n->c;
    }
    for (int o = 0; o < n_ops; o++)
      if (ops[o] >= 0 && !seen[ops[o]]) {
        seen[ops[o]] = 1;
        stack[top++] = ops[o];
      }
  }
  return 0;
}

lm_status lm_catalog_select(const lm_catalog *cat, const char *const *items, size_t n_items,
                            lm_selection *sel, lm_diag *diag) {
  memset(sel, 0, sizeof *sel);
  sel->any = n_items > 0;
  sel->tables = lm_calloc((size_t)cat->n_tables + 1, 1);
  sel->rows = lm_calloc((size_t)cat->n_rows + 1, 1);
  sel->metric_ids = lm_calloc(n_items + 1, sizeof(char *));
  uint8_t *seen = lm_malloc((size_t)cat->n_nodes + 1);
  int32_t *stack = lm_malloc(((size_t)cat->n_nodes + 1) * sizeof *stack);
  lm_status status = LM_OK;
  if (!sel->tables || !sel->rows || !sel->metric_ids || !seen || !stack) {
    status = lm_oom(diag, NULL);
    goto done;
  }
  for (size_t i = 0; i < n_items; i++) {
    const char *item = items[i];
    int matched = 0, dots = 0, numeric = item[0] != '\0';
    for (const char *p = item; *p; p++) {
      if (*p == '.') dots++;
      else if (!isdigit((unsigned char)*p)) numeric = 0;
    }
    if (numeric && dots == 0) {
      long panel = strtol(item, NULL, 10);
      for (int32_t p = 0; p < cat->n_panels; p++)
        if (cat->panels[p].id == panel) {
          for (int32_t t = 0; t < cat->panels[p].n_tables; t++)
            sel->tables[cat->panels[p].first_table + t] = 1;
          matched = 1;
        }
    } else if (numeric && dots == 1) {
      int32_t t = lm_catalog_find_table(cat, item);
      if (t >= 0) sel->tables[t] = matched = 1;
    } else if (numeric && dots == 2) {
      char table_id[64];
      size_t n = (size_t)(strrchr(item, '.') - item);
      if (n < sizeof table_id) {
        memcpy(table_id, item, n);
        table_id[n] = '\0';
        if (lm_catalog_find_table(cat, table_id) >= 0) {
          sel->metric_ids[sel->n_metric_ids] = lm_strdup(item);
          if (!sel->metric_ids[sel->n_metric_ids++]) {
            status = lm_oom(diag, NULL);
            goto done;
          }
          matched = 1;
        }
      }
    } else {
      int is_block = item[0] != '\0';
      for (const char *p = item; *p; p++)
        if (!isupper((unsigned char)*p) && !isdigit((unsigned char)*p)) is_block = 0;
      for (int32_t t = 0; t < cat->n_tables; t++) {
        const lm_tabledef *td = &cat->tables[t];
        for (int32_t r = td->first_row; r < td->first_row + td->n_rows; r++)
          if (lm_str_ieq(cat->rows[r].name, item) ||
              (is_block && row_uses_block(cat, td, r, item, seen, stack)))
            sel->rows[r] = matched = 1;
      }
    }
    if (!matched) {
      status = lm_fail(diag, LM_EINVAL, NULL,
                       "-b %s: no panel, table, metric or hardware block of that name in "
                       "the %s definitions (see `lumen list metrics --arch %s`)",
                       item, cat->arch, cat->arch);
      goto done;
    }
  }
done:
  lm_free(seen);
  lm_free(stack);
  if (status != LM_OK) lm_selection_fini(sel);
  return status;
}

int lm_selection_row(const lm_catalog *cat, const lm_selection *sel, int32_t table, int32_t row,
                     int32_t index) {
  if (!sel->any || sel->tables[table] || sel->rows[row]) return 1;
  char id[64];
  snprintf(id, sizeof id, "%s.%d", cat->tables[table].id, (int)index);
  for (size_t k = 0; k < sel->n_metric_ids; k++)
    if (strcmp(sel->metric_ids[k], id) == 0) return 1;
  return 0;
}

int lm_selection_table(const lm_catalog *cat, const lm_selection *sel, int32_t table) {
  if (!sel->any || sel->tables[table]) return 1;
  const lm_tabledef *td = &cat->tables[table];
  for (int32_t r = td->first_row; r < td->first_row + td->n_rows; r++)
    if (sel->rows[r]) return 1;
  size_t n = strlen(td->id);
  for (size_t k = 0; k < sel->n_metric_ids; k++)
    if (strncmp(sel->metric_ids[k], td->id, n) == 0 && sel->metric_ids[k][n] == '.') return 1;
  return 0;
}
