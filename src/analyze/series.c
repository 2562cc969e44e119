/*
 * series.c - one metric's value for each selected dispatch: what the
 * analysis restricted to that one dispatch (-d N) shows in the metric's
 * first value column.
 *
 * Each dispatch is evaluated on its own (a one-row request over the one
 * table that holds the metric), so a value built from aggregates (a ratio
 * of two averages) is the one-dispatch value, exactly as `lumen analyze
 * -d N` prints it, and not an approximation taken from inside the bulk
 * pass. The catalog's graph is the same; only the selection differs.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyze/analyze.h"

void lm_series_free(lm_series *s) {
  if (!s) return;
  lm_free(s->dispatch_ids);
  lm_free(s->values);
  lm_free(s);
}

/* Split "2.1.7" into the table "2.1" (into table, cap bytes) and the row
 * index 7; 0 when it has no such shape. */
static int split_row_id(const char *row_id, char *table, size_t cap, long *index) {
  const char *dot = strrchr(row_id, '.');
  if (!dot || dot == row_id || (size_t)(dot - row_id) >= cap || !dot[1]) return 0;
  char *end = NULL;
  long v = strtol(dot + 1, &end, 10);
  if (*end || v < 0 || dot[1] < '0' || dot[1] > '9') return 0;
  memcpy(table, row_id, (size_t)(dot - row_id));
  table[dot - row_id] = '\0';
  *index = v;
  return 1;
}

lm_status lm_analyze_series(const lm_workload *w, const lm_catalog *cat, const lm_analyze_opts *o,
                            const char *row_id, lm_series **out, lm_diag *diag) {
  lm_status st = LM_OK;
  size_t *rows = NULL, n_rows = 0;
  uint8_t *mask = NULL;
  lm_eval *ev = NULL;
  lm_series *s = NULL;
  *out = NULL;
  char table_id[64];
  long index = 0;
  int32_t ti = -1;
  if (split_row_id(row_id, table_id, sizeof table_id, &index)) ti = lm_catalog_find_table(cat, table_id);
  if (ti < 0 || cat->tables[ti].kind != LM_TABLE_METRIC) {
    st = lm_fail_at(diag, LM_ENOTFOUND, NULL, 0, "m", "%.64s: no such metric row (such as 2.1.0)", row_id);
    goto done;
  }
  const lm_tabledef *td = &cat->tables[ti];
  /* The first value column: Avg, Value, ... */
  int32_t value_col = -1;
  for (int32_t ci = 0; ci < td->n_cols && value_col < 0; ci++)
    if (cat->cols[td->first_col + ci].role == LM_COL_VALUE) value_col = ci;
  int32_t norm = lm_analyze_norm_index(cat, o->norm);
  if (norm < 0) {
    st = lm_fail_at(diag, LM_EINVAL, NULL, 0, "norm", "%s: not a normalization of %s", lm_norm_kind_name(o->norm),
                    cat->arch);
    goto done;
  }
  st = lm_analyze_rows(w, o, &rows, &n_rows, diag);
  if (st != LM_OK) goto done;
  if (n_rows == 0) {
    st = lm_fail(diag, LM_EINVAL, NULL, "no dispatch matches the filters");
    goto done;
  }
  mask = lm_calloc((size_t)cat->n_tables, 1);
  s = lm_calloc(1, sizeof *s);
  if (!mask || !s) goto nomem;
  mask[ti] = 1;
  s->dispatch_ids = lm_malloc(n_rows * sizeof *s->dispatch_ids);
  s->values = lm_malloc(n_rows * sizeof *s->values);
  if (!s->dispatch_ids || !s->values) goto nomem;
  /* (lm_table_values reads a column a streamed workload left in its file) */
  long col_dispatch = lm_table_find(w->pmc, "Dispatch_ID");
  long col_grbm = lm_table_find(w->pmc, "GRBM_GUI_ACTIVE");
  const double *ids = col_dispatch >= 0 ? lm_table_values(w->pmc, (size_t)col_dispatch, diag) : NULL;
  const double *busy = col_grbm >= 0 ? lm_table_values(w->pmc, (size_t)col_grbm, diag) : NULL;
  if ((col_dispatch >= 0 && !ids) || (col_grbm >= 0 && !busy)) {
    st = diag ? diag->status : LM_EIO;
    goto done;
  }
  const char *ip_blocks = lm_sysinfo_text(&w->sysinfo, "ip_blocks");
  int check_busy = busy && !(ip_blocks && strcmp(ip_blocks, "roofline") == 0);
  const lm_rowdef *rd = NULL;
  int32_t ch = 0;
  for (size_t i = 0; i < n_rows; i++) {
    size_t row = rows[i];
    s->dispatch_ids[i] = ids ? ids[row] : (double)row;
    s->values[i] = LM_NAN;
    /* A dispatch the analysis would refuse (the GPU never busy) has no
     * value rather than an untrustworthy one. */
    if (check_busy && busy[row] == 0) continue;
    lm_eval_request req = {w, &rows[i], 1, norm, mask, 1, o->corrected, NULL, o->block_rows,
                           o->stat_mem};
    st = lm_eval_run(cat, &req, &ev, diag);
    if (st != LM_OK) goto done;
    if (!rd) {
      /* Template rows (one per channel) are numbered row * channels + ch. */
      int32_t n_ch = td->channels >= 0 ? lm_eval_channels(ev, ti) : 1;
      long ri = td->channels >= 0 ? index / (n_ch > 0 ? n_ch : 1) : index;
      ch = td->channels >= 0 ? (int32_t)(index % (n_ch > 0 ? n_ch : 1)) : 0;
      if (ri >= td->n_rows || value_col < 0) {
        st = lm_fail_at(diag, LM_ENOTFOUND, NULL, 0, "m", "%.64s: no such metric row (table %s has %d)", row_id, td->id,
                        (int)(td->n_rows * (td->channels >= 0 ? n_ch : 1)));
        goto done;
      }
      rd = &cat->rows[td->first_row + ri];
      s->name = rd->name;
      s->column = cat->cols[td->first_col + value_col].title;
      for (int32_t ci = 0; ci < td->n_cols; ci++)
        if (cat->cols[td->first_col + ci].role == LM_COL_UNIT) s->unit = cat->cells[rd->first_cell + ci].text;
      s->channel = ch;
    }
    const lm_celldef *cell = &cat->cells[rd->first_cell + value_col];
    int32_t node = o->corrected && cell->corrected >= 0 ? cell->corrected : cell->node;
    double v;
    if (node >= 0 && cat->nodes[node].op != LM_OP_CONCAT && lm_eval_node(ev, node, ch, &v)) s->values[i] = v;
    lm_eval_free(ev);
    ev = NULL;
  }
  s->n = n_rows;
  *out = s;
  s = NULL;
  goto done;
nomem:
  st = lm_oom(diag, NULL);
done:
  lm_eval_free(ev);
  lm_series_free(s);
  lm_free(mask);
  lm_free(rows);
  return st;
}
