/*
 * rows.c - /api/rows: one page of a long table (the dispatch list, the
 * top kernels), filtered and sorted on the server, so that a workload of
 * 100,000 dispatches costs the GUI a page of rows and not the whole list.
 *
 * Each request evaluates only the table it pages (the selection with -b
 * set to that table: no metric is evaluated for the dispatch list), then
 * filters the rows, sorts an index of them and writes the page. Sorting
 * keys are copied into one array so that the comparison needs no context
 * and ties keep the table's order (the sort is stable by row number).
 * Answers are cached like the others, by the selection and the page.
 */
#include <cjson/cJSON.h>
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report/report.h"
#include "server/internal.h"

typedef struct sort_key {
  int32_t row;
  int8_t rank; /* 0 a number, 1 a text, 2 empty (always last) */
  int8_t desc;
  double num;
  const char *text;
} sort_key;

static int compare_keys(const void *pa, const void *pb) {
  const sort_key *a = pa, *b = pb;
  int c = 0;
  if (a->rank != b->rank) return a->rank < b->rank ? -1 : 1;
  if (a->rank == 0) c = a->num < b->num ? -1 : a->num > b->num ? 1 : 0;
  else if (a->rank == 1) c = strcmp(a->text, b->text);
  if (a->desc) c = -c;
  if (c) return c;
  return a->row < b->row ? -1 : a->row > b->row;
}

/* Whether text contains needle (lowercased ASCII), ignoring ASCII case. */
static int contains(const char *text, const char *needle, size_t n) {
  if (!text) return 0;
  for (const char *p = text; *p; p++) {
    size_t i = 0;
    while (i < n && p[i] && tolower((unsigned char)p[i]) == needle[i]) i++;
    if (i == n) return 1;
  }
  return 0;
}

static int row_matches(const lm_rtable *t, int32_t r, const char *needle, size_t n) {
  if (contains(t->row_ids[r], needle, n)) return 1;
  for (int32_t c = 0; c < t->n_cols; c++) {
    const lm_cell *cell = &t->cells[(size_t)r * (size_t)t->n_cols + (size_t)c];
    if (t->roles[c] != LM_RCOL_TIPS && cell->kind == LM_CELL_TEXT && contains(cell->text, needle, n)) return 1;
  }
  return 0;
}

/* The page of t that q asks for, as JSON text (free()); NULL when out of
 * memory or, with *bad_sort set, when the sort column does not exist. */
static char *page_of(const lm_rtable *t, const lm_query *q, int *bad_sort) {
  *bad_sort = 0;
  /* Visible columns (tips are never shown) and the table column of each. */
  int32_t *visible = lm_malloc(((size_t)t->n_cols + 1) * sizeof *visible);
  sort_key *keys = lm_malloc(((size_t)t->n_rows + 1) * sizeof *keys);
  char needle[300] = "";
  char *text = NULL;
  cJSON *o = NULL;
  if (!visible || !keys) goto done;
  int32_t n_visible = 0;
  for (int32_t c = 0; c < t->n_cols; c++)
    if (t->roles[c] != LM_RCOL_TIPS) visible[n_visible++] = c;
  if (q->sort >= n_visible) {
    *bad_sort = 1;
    goto done;
  }
  size_t n_needle = 0;
  if (q->filter)
    for (const char *p = q->filter; *p && n_needle + 1 < sizeof needle; p++)
      needle[n_needle++] = (char)tolower((unsigned char)*p);
  needle[n_needle] = '\0';
  int32_t sort_col = q->sort >= 0 ? visible[q->sort] : -1;
  int8_t desc = q->order && strcmp(q->order, "desc") == 0;
  size_t n_matched = 0;
  for (int32_t r = 0; r < t->n_rows; r++) {
    if (n_needle && !row_matches(t, r, needle, n_needle)) continue;
    sort_key *k = &keys[n_matched++];
    *k = (sort_key){r, 2, desc, 0, NULL};
    if (sort_col < 0) continue;
    const lm_cell *cell = &t->cells[(size_t)r * (size_t)t->n_cols + (size_t)sort_col];
    if (cell->kind == LM_CELL_NUMBER && !isnan(cell->num)) {
      k->rank = 0;
      k->num = cell->num;
    } else if (cell->kind == LM_CELL_TEXT && cell->text) {
      k->rank = 1;
      k->text = cell->text;
    }
  }
  if (sort_col >= 0) qsort(keys, n_matched, sizeof *keys, compare_keys);
  size_t offset = q->offset > 0 ? (size_t)q->offset : 0;
  size_t limit = q->limit > 0 ? (size_t)q->limit : LM_SERVER_PAGE_ROWS;
  o = cJSON_CreateObject();
  if (!o) goto done;
  cJSON_AddStringToObject(o, "table", t->id);
  cJSON_AddStringToObject(o, "title", t->title ? t->title : "");
  cJSON *cols = cJSON_AddArrayToObject(o, "columns");
  for (int32_t i = 0; i < n_visible; i++) cJSON_AddItemToArray(cols, cJSON_CreateString(t->titles[visible[i]]));
  cJSON_AddNumberToObject(o, "rows_total", t->n_rows);
  cJSON_AddNumberToObject(o, "rows_matched", (double)n_matched);
  cJSON_AddNumberToObject(o, "offset", (double)offset);
  cJSON_AddNumberToObject(o, "limit", (double)limit);
  if (q->sort >= 0) cJSON_AddNumberToObject(o, "sort", (double)q->sort);
  else cJSON_AddNullToObject(o, "sort");
  cJSON_AddStringToObject(o, "order", desc ? "desc" : "asc");
  cJSON *rows = cJSON_AddArrayToObject(o, "rows");
  for (size_t i = offset; i < n_matched && i - offset < limit; i++) {
    int32_t r = keys[i].row;
    cJSON *jr = cJSON_CreateObject();
    cJSON_AddStringToObject(jr, "id", t->row_ids[r]);
    cJSON *cells = cJSON_AddArrayToObject(jr, "cells");
    for (int32_t c = 0; c < n_visible; c++)
      cJSON_AddItemToArray(cells, lm_report_json_cell(&t->cells[(size_t)r * (size_t)t->n_cols + (size_t)visible[c]]));
    cJSON_AddItemToArray(rows, jr);
  }
  text = lm_server_print_json(o);
done:
  cJSON_Delete(o);
  lm_free(visible);
  lm_free(keys);
  return text;
}

enum MHD_Result lm_server_api_rows(struct MHD_Connection *c, const lm_query *q) {
  if (!q->w) return lm_server_send_error(c, MHD_HTTP_BAD_REQUEST, "w: which workload?");
  if (!q->table) return lm_server_send_error(c, MHD_HTTP_BAD_REQUEST, "t: which table? (such as t=0.2)");
  char key[sizeof q->canonical + 400];
  snprintf(key, sizeof key, "rows|%s|t=%s|o=%ld|l=%ld|s=%ld|%s|f=%s", q->canonical, q->table, q->offset, q->limit,
           q->sort, q->order ? q->order : "", q->filter ? q->filter : "");
  enum MHD_Result ok;
  if (lm_server_send_cached(c, key, &ok)) return ok;
  if (!lm_server_begin_evaluation()) return lm_server_send_error(c, MHD_HTTP_SERVICE_UNAVAILABLE, "busy; try again");
  lm_analyze_opts o;
  lm_server_opts_from_query(q, &o);
  /* Only the paged table is evaluated. */
  const char *blocks[1] = {q->table};
  o.blocks = blocks;
  o.n_blocks = 1;
  lm_analysis *a = NULL;
  lm_server_loaded *held = NULL;
  lm_workload *info = NULL;
  lm_diag d;
  lm_diag_clear(&d);
  char *text = NULL;
  int bad_sort = 0;
  lm_status st = lm_server_analysis_of(q->w, q->compat, &o, &a, &held, &info, &d);
  const lm_rtable *t = st == LM_OK ? lm_analysis_find(a, q->table) : NULL;
  if (st == LM_OK && (!t || !t->shown || !t->n_cols))
    st = lm_fail_at(&d, LM_ENOTFOUND, NULL, 0, "t", "t=%.32s: no such table in this workload", q->table);
  if (st == LM_OK) {
    text = page_of(t, q, &bad_sort);
    if (bad_sort)
      st = lm_fail_at(&d, LM_EINVAL, NULL, 0, "sort", "sort=%ld: table %s has no such column", q->sort, t->id);
    else if (!text)
      st = lm_oom(&d, NULL);
  }
  lm_analysis_free(a);
  lm_server_release(held);
  lm_workload_free(info);
  lm_server_end_evaluation();
  if (st != LM_OK) {
    lm_free(text);
    return lm_server_send_diag(c, &d);
  }
  size_t len = strlen(text);
  lm_server_keep_answer(key, text, len);
  ok = lm_server_send(c, MHD_HTTP_OK, "application/json", text, len, 1, 0);
  lm_free(text);
  return ok;
}
