/*
 * serialize.c - an analysis as bytes and back, so a store can answer a
 * view again without loading a single counter column.
 *
 * The format is private to one lumen build (the cache key carries the
 * version and the definitions' digest). Invariant: reading is total: any
 * bytes give either an analysis that every reader can use as a fresh one,
 * or a refusal saying what is wrong; every length, count and table is
 * checked against the bytes left, the workload and the catalog, so a
 * damaged or hostile entry costs a recomputation, never a crash. Layout:
 * docs/workload-format.md ("Kept analyses").
 */
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "analyze/analyze.h"

#define MAGIC "LMAN0002"

static void put_u32(lm_buf *b, uint32_t v) {
  unsigned char x[4] = {(unsigned char)v, (unsigned char)(v >> 8), (unsigned char)(v >> 16),
                        (unsigned char)(v >> 24)};
  lm_buf_append(b, (const char *)x, 4);
}

static void put_f64(lm_buf *b, double v) {
  uint64_t u;
  memcpy(&u, &v, 8);
  put_u32(b, (uint32_t)u);
  put_u32(b, (uint32_t)(u >> 32));
}

static void put_str(lm_buf *b, const char *s) {
  if (!s) {
    put_u32(b, 0xffffffffu);
    return;
  }
  size_t n = strlen(s);
  put_u32(b, (uint32_t)n);
  lm_buf_append(b, s, n);
}

static void put_strs(lm_buf *b, const char *const *v, int32_t n) {
  put_u32(b, v ? 1 : 0);
  for (int32_t i = 0; v && i < n; i++) put_str(b, v[i]);
}

lm_status lm_analysis_serialize(const lm_analysis *a, lm_buf *b) {
  lm_buf_append(b, MAGIC, 8);
  put_str(b, a->norm);
  put_f64(b, (double)a->n_selected);
  put_u32(b, (uint32_t)a->n_tables);
  for (int32_t t = 0; t < a->n_tables; t++) {
    const lm_rtable *r = &a->tables[t];
    put_u32(b, (uint32_t)r->def);
    put_str(b, r->id);
    put_str(b, r->title);
    put_str(b, r->panel_title);
    put_u32(b, (uint32_t)r->panel_id);
    put_u32(b, (uint32_t)(r->kind | (r->style << 8) | (r->comparable << 16)));
    put_u32(b, (uint32_t)r->shown);
    put_u32(b, (uint32_t)r->n_cols);
    put_strs(b, r->titles, r->n_cols);
    for (int32_t c = 0; c < r->n_cols; c++) put_u32(b, r->roles ? r->roles[c] : 0);
    put_u32(b, (uint32_t)r->n_rows);
    for (int32_t i = 0; i < r->n_rows * r->n_cols; i++) {
      const lm_cell *cell = &r->cells[i];
      put_u32(b, (uint32_t)(cell->kind | (cell->integer << 8)));
      if (cell->kind == LM_CELL_NUMBER) put_f64(b, cell->num);
      else if (cell->kind == LM_CELL_TEXT) put_str(b, cell->text);
    }
    put_strs(b, r->row_ids, r->n_rows);
    put_strs(b, r->row_sources, r->n_rows);
    put_strs(b, r->row_descs, r->n_rows);
    put_strs(b, r->row_formulas, r->n_rows);
    put_str(b, r->note);
    put_u32(b, r->row_spread ? 1 : 0);
    for (int32_t i = 0; r->row_spread && i < r->n_rows; i++) put_f64(b, r->row_spread[i]);
  }
  /* How far the executions differed (lumen profiles). */
  const lm_spread *sp = a->spread;
  put_u32(b, sp ? 1 : 0);
  if (sp) {
    put_u32(b, (uint32_t)sp->n_sets);
    put_u32(b, (uint32_t)sp->n_shared);
    put_strs(b, sp->shared, sp->n_shared);
    put_f64(b, (double)sp->n_flagged);
    put_u32(b, (uint32_t)sp->n_kernels);
    for (size_t k = 0; k < sp->n_kernels; k++) {
      const lm_kernel_spread *ks = &sp->kernels[k];
      put_str(b, ks->kernel);
      put_f64(b, (double)ks->rows);
      put_f64(b, (double)ks->rows_over);
      put_f64(b, ks->max_spread);
      for (int32_t q = 0; q < sp->n_shared; q++) put_f64(b, ks->spread[q]);
    }
  }
  /* The rank table (several MPI ranks). */
  const lm_rank_table *rt = a->ranks;
  put_u32(b, rt ? 1 : 0);
  if (rt) {
    put_u32(b, (uint32_t)rt->slowest);
    put_u32(b, (uint32_t)rt->fastest);
    put_f64(b, rt->imbalance);
    put_u32(b, (uint32_t)rt->n_rows);
    for (size_t i = 0; i < rt->n_rows; i++) {
      const lm_rank_row *x = &rt->rows[i];
      put_u32(b, (uint32_t)x->rank);
      put_str(b, x->host);
      put_f64(b, (double)x->dispatches);
      put_f64(b, x->total_ns);
      put_f64(b, x->mean_ns);
      put_f64(b, x->busy_cycles);
      put_f64(b, x->waves);
    }
    put_u32(b, (uint32_t)rt->n_kernels);
    for (size_t k = 0; k < rt->n_kernels; k++) {
      const lm_rank_kernel *x = &rt->kernels[k];
      put_str(b, x->kernel);
      put_f64(b, (double)x->n_ranks);
      put_u32(b, (uint32_t)x->max_rank);
      put_u32(b, (uint32_t)x->min_rank);
      put_f64(b, x->max_ns);
      put_f64(b, x->min_ns);
      put_f64(b, x->ratio);
    }
  }
  return b->failed ? LM_ENOMEM : LM_OK;
}

/* ------------------------------------------------------------ reading */

typedef struct reader {
  const unsigned char *p, *end;
  lm_arena *arena;
  int bad;       /* something is wrong: every get_ returns 0 or NULL */
  int nomem;     /* ... and it was memory */
  char why[200]; /* the first thing found wrong */
} reader;

#if defined(__GNUC__)
__attribute__((format(printf, 2, 3)))
#endif
static void wrong(reader *r, const char *fmt, ...) {
  if (!r->bad) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r->why, sizeof r->why, fmt, ap);
    va_end(ap);
  }
  r->bad = 1;
}

static void out_of_memory(reader *r) {
  if (!r->bad) r->nomem = 1;
  wrong(r, "out of memory");
}

static uint32_t get_u32(reader *r) {
  if (r->bad) return 0;
  if (r->end - r->p < 4) {
    wrong(r, "its bytes end early");
    return 0;
  }
  uint32_t v = (uint32_t)r->p[0] | (uint32_t)r->p[1] << 8 | (uint32_t)r->p[2] << 16 | (uint32_t)r->p[3] << 24;
  r->p += 4;
  return v;
}

/* A signed 32-bit value (two's complement, without the implementation's
 * conversion of a large unsigned one). */
static int32_t get_i32(reader *r) {
  uint32_t v = get_u32(r);
  return v <= (uint32_t)INT32_MAX ? (int32_t)v : (int32_t)(v - 2147483648u) - INT32_MAX - 1;
}

static double get_f64(reader *r) {
  uint64_t lo = get_u32(r), hi = get_u32(r);
  uint64_t u = lo | hi << 32;
  double v;
  memcpy(&v, &u, 8);
  return v;
}

/* A count written as a double: a whole number from 0 to max (max below
 * 2^53), checked before it is converted (a NaN or 1e300 converted to
 * size_t is undefined). */
static size_t get_size(reader *r, size_t max, const char *what) {
  double v = get_f64(r);
  if (r->bad) return 0;
  if (!(v >= 0 && v <= (double)max) || v != (double)(size_t)v) {
    wrong(r, "%s is %g, not a count from 0 to %zu", what, v, max);
    return 0;
  }
  return (size_t)v;
}

/* A flag word: 0 or 1. */
static int get_flag(reader *r, const char *what) {
  uint32_t v = get_u32(r);
  if (v > 1) wrong(r, "the flag of %s is %u, not 0 or 1", what, v);
  return v == 1;
}

/* A string, or NULL for the NULL mark (or when something is wrong). */
static const char *get_str(reader *r) {
  uint32_t n = get_u32(r);
  if (r->bad || n == 0xffffffffu) return NULL;
  if ((size_t)(r->end - r->p) < n) {
    wrong(r, "a string of %u bytes where %zu are left", n, (size_t)(r->end - r->p));
    return NULL;
  }
  if (memchr(r->p, '\0', n)) {
    wrong(r, "a string holds a NUL byte");
    return NULL;
  }
  char *s = lm_arena_alloc(r->arena, (size_t)n + 1);
  if (!s) {
    out_of_memory(r);
    return NULL;
  }
  memcpy(s, r->p, n);
  s[n] = '\0';
  r->p += n;
  return s;
}

/* n strings after a presence flag; NULL when absent. Entries may be NULL:
 * check_analysis says which may. */
static const char **get_strs(reader *r, int32_t n, const char *what) {
  if (!get_flag(r, what)) return NULL;
  const char **v = lm_arena_alloc(r->arena, (size_t)(n > 0 ? n : 1) * sizeof *v);
  if (!v) {
    out_of_memory(r);
    return NULL;
  }
  for (int32_t i = 0; i < n && !r->bad; i++) v[i] = get_str(r);
  return v;
}

/* A count read from the data, checked against what could be left. */
static int32_t get_count(reader *r, size_t min_bytes_each, const char *what) {
  uint32_t n = get_u32(r);
  if (r->bad) return 0;
  if (n > (uint32_t)INT32_MAX || (min_bytes_each && (size_t)(r->end - r->p) / min_bytes_each < n)) {
    wrong(r, "%s (%u) is more than its bytes hold", what, n);
    return 0;
  }
  return (int32_t)n;
}

/* Memory for n things, or NULL with the reader marked. */
static void *get_mem(reader *r, size_t n, size_t size) {
  void *p = lm_arena_alloc(r->arena, (n ? n : 1) * size);
  if (!p) out_of_memory(r);
  return p;
}

/* ------------------------------------------------------------ checking */

/* What lm_analyze_run builds, checked against the catalog the analysis was
 * kept with (the cache key carries its digest) and the workload it is
 * attached to: the report, the server and the summary read tables by
 * position, role and kind, so an analysis that passes here is one they can
 * read. */

static int same_text(const char *a, const char *b) { return a == b || (a && b && strcmp(a, b) == 0); }

/* The panel of catalog table i, as lm_analyze_run finds it (the last that
 * holds it), or NULL. */
static const lm_paneldef *panel_of(const lm_catalog *cat, int32_t i) {
  const lm_paneldef *found = NULL;
  for (int32_t p = 0; p < cat->n_panels; p++)
    if (i >= cat->panels[p].first_table && i < cat->panels[p].first_table + cat->panels[p].n_tables)
      found = &cat->panels[p];
  return found;
}

static uint8_t rcol_role(uint8_t col_role) {
  switch ((lm_col_role)col_role) {
  case LM_COL_NAME: return LM_RCOL_NAME;
  case LM_COL_VALUE: return LM_RCOL_VALUE;
  case LM_COL_UNIT: return LM_RCOL_UNIT;
  case LM_COL_TIPS: return LM_RCOL_TIPS;
  case LM_COL_TEXT: break;
  }
  return LM_RCOL_TEXT;
}

static const lm_cell *cell_of(const lm_rtable *t, int32_t row, int32_t col) {
  return &t->cells[(size_t)row * (size_t)t->n_cols + (size_t)col];
}

/* 1 when s is the decimal row index i ("0", "17"): the row ids of the
 * statistics and raw tables. */
static int is_index(const char *s, long i) {
  char text[24];
  snprintf(text, sizeof text, "%ld", i);
  return strcmp(s, text) == 0;
}

/* The index of metric row id "<table>.<index>" of table `table`, or -1. */
static long metric_index(const char *s, const char *table) {
  size_t n = strlen(table);
  if (strncmp(s, table, n) != 0 || s[n] != '.') return -1;
  const char *p = s + n + 1;
  if (!*p || (p[0] == '0' && p[1]) || strlen(p) > 9) return -1;
  long v = 0;
  for (; *p; p++) {
    if (*p < '0' || *p > '9') return -1;
    v = v * 10 + (*p - '0');
  }
  return v;
}

/* Column c of t titled `title` (NULL: any) with role `role`. */
static int col_is(const lm_rtable *t, int32_t c, const char *title, uint8_t role) {
  return (!title || strcmp(t->titles[c], title) == 0) && t->roles[c] == role;
}

/* The cell kinds a column may hold, as a mask of 1 << lm_cell_kind. */
#define ANY_CELL 7u
#define TEXT_CELL (1u << LM_CELL_TEXT)
#define NUMBER_CELL ((1u << LM_CELL_NUMBER) | (1u << LM_CELL_EMPTY))

static void check_cells(reader *r, const lm_rtable *t, int32_t col, unsigned kinds) {
  for (int32_t row = 0; row < t->n_rows && !r->bad; row++)
    if (!(kinds & (1u << cell_of(t, row, col)->kind)))
      wrong(r, "table %s: row %d, column %d holds a cell of kind %u", t->id, (int)row, (int)col,
            cell_of(t, row, col)->kind);
}

/* Column 0 of the statistics and raw tables: the row's index, as its id
 * and as an integer cell. */
static void check_index_column(reader *r, const lm_rtable *t) {
  for (int32_t row = 0; row < t->n_rows && !r->bad; row++) {
    const lm_cell *c = cell_of(t, row, 0);
    if (!is_index(t->row_ids[row], row) || c->kind != LM_CELL_NUMBER || c->num != (double)row)
      wrong(r, "table %s: row %d is labelled '%.24s'", t->id, (int)row, t->row_ids[row]);
  }
}

static void check_metric(reader *r, const lm_rtable *t, const lm_tabledef *td, const lm_catalog *cat) {
  if (t->n_cols != td->n_cols) {
    wrong(r, "table %s: %d columns where its definition has %d", t->id, (int)t->n_cols, (int)td->n_cols);
    return;
  }
  for (int32_t c = 0; c < t->n_cols && !r->bad; c++) {
    const lm_coldef *cd = &cat->cols[td->first_col + c];
    if (!same_text(t->titles[c], cd->title) || t->roles[c] != rcol_role(cd->role))
      wrong(r, "table %s: column %d is not '%.40s' of its definition", t->id, (int)c, cd->title ? cd->title : "");
    check_cells(r, t, c, t->roles[c] == LM_RCOL_VALUE ? ANY_CELL : TEXT_CELL);
  }
  if (t->n_rows > 0 && (!t->row_sources || !t->row_descs || !t->row_formulas)) {
    wrong(r, "table %s: rows without their sources, descriptions or formulas", t->id);
    return;
  }
  /* A template row's index is its row times the channel count plus its
   * channel: past the rows times the most channels, it is no row. */
  long limit = td->channels < 0 ? (long)td->n_rows : (long)td->n_rows * LM_METRICS_MAX_CHANNELS;
  long last = -1;
  for (int32_t row = 0; row < t->n_rows && !r->bad; row++) {
    long index = metric_index(t->row_ids[row], td->id);
    if (index <= last || index >= limit) {
      wrong(r, "table %s: row %d has id '%.24s', not a row of the table after the one before", t->id, (int)row,
            t->row_ids[row]);
      break;
    }
    last = index;
    if (!t->row_descs[row] || !t->row_formulas[row]) {
      wrong(r, "table %s: row %s has no description or formula", t->id, t->row_ids[row]);
      break;
    }
    /* (the row of a template's channel is not known here) */
    const lm_rowdef *rd = td->channels < 0 ? &cat->rows[td->first_row + index] : NULL;
    if (rd && (!same_text(t->row_sources[row], rd->source) || !same_text(t->row_descs[row], rd->desc)))
      wrong(r, "table %s: row %s is not the one its definition describes", t->id, t->row_ids[row]);
  }
}

static void check_top(reader *r, const lm_rtable *t, size_t n_dispatches) {
  static const char *const titles[8] = {"", "Kernel_Name", "Count", "Sum(", "Mean(", "Median(", "Pct", "S"};
  static const uint8_t roles[8] = {LM_RCOL_INDEX, LM_RCOL_NAME,  LM_RCOL_VALUE, LM_RCOL_VALUE,
                                   LM_RCOL_VALUE, LM_RCOL_VALUE, LM_RCOL_VALUE, LM_RCOL_TEXT};
  if (t->n_cols != 7 && t->n_cols != 8) {
    wrong(r, "table %s: %d columns, not the top kernels' 7 or 8", t->id, (int)t->n_cols);
    return;
  }
  for (int32_t c = 0; c < t->n_cols && !r->bad; c++) {
    /* Sum(ns), Mean(ns), Median(ns): in the time unit asked for */
    int timed = c >= 3 && c <= 5;
    size_t n = strlen(t->titles[c]);
    if (!col_is(t, c, timed ? NULL : titles[c], roles[c]) ||
        (timed && (strncmp(t->titles[c], titles[c], strlen(titles[c])) != 0 || t->titles[c][n - 1] != ')')))
      wrong(r, "table %s: column %d is '%.40s', not the top kernels' %s", t->id, (int)c, t->titles[c], titles[c]);
  }
  if ((size_t)t->n_rows > n_dispatches) {
    wrong(r, "table %s: %d kernels in a workload of %zu dispatches", t->id, (int)t->n_rows, n_dispatches);
    return;
  }
  check_index_column(r, t);
  check_cells(r, t, 1, TEXT_CELL);
  for (int32_t c = 3; c < 7; c++) check_cells(r, t, c, NUMBER_CELL);
  if (t->n_cols == 8) check_cells(r, t, 7, TEXT_CELL);
  size_t calls = 0;
  for (int32_t row = 0; row < t->n_rows && !r->bad; row++) {
    const lm_cell *c = cell_of(t, row, 2);
    if (c->kind != LM_CELL_NUMBER || !(c->num >= 1 && c->num <= (double)n_dispatches) ||
        c->num != (double)(size_t)c->num || (calls += (size_t)c->num) > n_dispatches)
      wrong(r, "table %s: row %d counts more calls than the workload's %zu dispatches", t->id, (int)row,
            n_dispatches);
  }
}

static void check_dispatches(reader *r, const lm_rtable *t, size_t n_dispatches) {
  static const char *const titles[4] = {"", "Dispatch_ID", "Kernel_Name", "GPU_ID"};
  static const uint8_t roles[4] = {LM_RCOL_INDEX, LM_RCOL_VALUE, LM_RCOL_NAME, LM_RCOL_VALUE};
  if (t->n_cols != 4) {
    wrong(r, "table %s: %d columns, not the dispatch list's 4", t->id, (int)t->n_cols);
    return;
  }
  for (int32_t c = 0; c < 4 && !r->bad; c++)
    if (!col_is(t, c, titles[c], roles[c]))
      wrong(r, "table %s: column %d is '%.40s', not the dispatch list's %s", t->id, (int)c, t->titles[c], titles[c]);
  if ((size_t)t->n_rows > n_dispatches) {
    wrong(r, "table %s: %d rows in a workload of %zu dispatches", t->id, (int)t->n_rows, n_dispatches);
    return;
  }
  check_index_column(r, t);
  check_cells(r, t, 1, NUMBER_CELL);
  check_cells(r, t, 2, TEXT_CELL);
  check_cells(r, t, 3, NUMBER_CELL);
}

/* The system information the table shows: the workload's, or one rank's
 * (a selection of one rank of an MPI profile). */
static int same_sysinfo(const lm_rtable *t, const lm_sysinfo *info) {
  if ((size_t)t->n_rows != info->n_fields) return 0;
  for (int32_t row = 0; row < t->n_rows; row++) {
    const lm_cell *name = cell_of(t, row, 0), *text = cell_of(t, row, 1);
    if (!same_text(t->row_ids[row], info->names[row]) || name->kind != LM_CELL_TEXT ||
        !same_text(name->text, info->names[row]) || text->kind != LM_CELL_TEXT ||
        !same_text(text->text, info->texts[row]))
      return 0;
  }
  return 1;
}

static void check_sysinfo(reader *r, const lm_rtable *t, const lm_workload *w) {
  if (t->n_cols != 2 || !col_is(t, 0, "", LM_RCOL_INDEX) || !col_is(t, 1, "Info", LM_RCOL_TEXT)) {
    wrong(r, "table %s: not the system information's columns", t->id);
    return;
  }
  int found = same_sysinfo(t, &w->sysinfo);
  for (size_t p = 0; !found && w->part_sysinfo && p < w->n_parts; p++) found = same_sysinfo(t, &w->part_sysinfo[p]);
  if (!found) wrong(r, "table %s: not the workload's system information", t->id);
}

static void check_roofline(reader *r, const lm_rtable *t) {
  if (t->note) {
    /* no roofline.csv: its name in place of the numbers */
    if (t->n_cols != 2 || t->n_rows != 1 || !col_is(t, 0, "", LM_RCOL_INDEX) ||
        !col_is(t, 1, "from_csv", LM_RCOL_TEXT))
      wrong(r, "table %s: a note with other than the placeholder row", t->id);
    check_index_column(r, t);
    check_cells(r, t, 1, TEXT_CELL);
    return;
  }
  if (t->n_cols < 1 || !col_is(t, 0, "", LM_RCOL_INDEX)) {
    wrong(r, "table %s: not a table of roofline.csv", t->id);
    return;
  }
  for (int32_t c = 1; c < t->n_cols && !r->bad; c++)
    if (t->roles[c] != LM_RCOL_VALUE) wrong(r, "table %s: column %d is not a value column", t->id, (int)c);
  check_index_column(r, t);
}

/* Table i against catalog table i. *metric_rows adds its metric rows. */
static void check_table(reader *r, const lm_rtable *t, int32_t i, const lm_workload *w, const lm_catalog *cat,
                        size_t *metric_rows) {
  const lm_tabledef *td = &cat->tables[i];
  const lm_paneldef *pd = panel_of(cat, i);
  const char *id = td->id ? td->id : "?";
  if (t->def != i || !t->id || !same_text(t->id, td->id)) {
    wrong(r, "table %d is not table %s of the definitions", (int)i, id);
    return;
  }
  if (!same_text(t->title, td->title) || t->kind != td->kind || t->style != td->style ||
      t->comparable != td->comparable || t->panel_id != (pd ? pd->id : 0) ||
      !same_text(t->panel_title, pd ? pd->title : NULL)) {
    wrong(r, "table %s: its title, kind, style or panel differ from its definition", id);
    return;
  }
  int stats = td->kind == LM_TABLE_TOP_KERNELS || td->kind == LM_TABLE_DISPATCHES;
  if ((t->shown != 0 && t->shown != 1) || (stats && !t->shown)) {
    wrong(r, "table %s: shown is %d", id, t->shown);
    return;
  }
  /* What every table needs: a title for each column, a known role, an id
   * for each row; metric data in metric tables only. */
  if (t->n_cols > 0 && !t->titles) wrong(r, "table %s: no column titles", id);
  for (int32_t c = 0; c < t->n_cols && !r->bad; c++) {
    if (!t->titles[c]) wrong(r, "table %s: column %d has no title", id, (int)c);
    else if (t->roles[c] > LM_RCOL_TIPS) wrong(r, "table %s: column %d has role %u", id, (int)c, t->roles[c]);
  }
  if (t->n_rows > 0 && !t->n_cols) wrong(r, "table %s: rows without columns", id);
  if (t->n_rows > 0 && !t->row_ids) wrong(r, "table %s: no row ids", id);
  for (int32_t row = 0; row < t->n_rows && !r->bad; row++)
    if (!t->row_ids[row]) wrong(r, "table %s: row %d has no id", id, (int)row);
  for (size_t k = 0; k < (size_t)t->n_rows * (size_t)t->n_cols && !r->bad; k++)
    if (t->cells[k].kind == LM_CELL_NUMBER && isnan(t->cells[k].num))
      wrong(r, "table %s: a number cell holds NaN", id);
  if (td->kind != LM_TABLE_METRIC && (t->row_sources || t->row_descs || t->row_formulas || t->row_spread))
    wrong(r, "table %s: metric rows' data in a table of another kind", id);
  if (t->note && td->kind != LM_TABLE_ROOFLINE) wrong(r, "table %s: a note in a table that has none", id);
  if (r->bad) return;
  if (!t->shown) {
    if (t->n_cols || t->n_rows || t->titles || t->row_ids || t->row_sources || t->row_descs || t->row_formulas ||
        t->row_spread || t->note)
      wrong(r, "table %s: not shown, yet it has columns or rows", id);
    return;
  }
  switch ((lm_table_kind)td->kind) {
  case LM_TABLE_METRIC:
    check_metric(r, t, td, cat);
    *metric_rows += (size_t)t->n_rows;
    break;
  case LM_TABLE_TOP_KERNELS: check_top(r, t, w->pmc ? w->pmc->n_rows : 0); break;
  case LM_TABLE_DISPATCHES: check_dispatches(r, t, w->pmc ? w->pmc->n_rows : 0); break;
  case LM_TABLE_SYSINFO: check_sysinfo(r, t, w); break;
  case LM_TABLE_ROOFLINE: check_roofline(r, t); break;
  default: wrong(r, "table %s: a kind lumen does not know", id); break;
  }
}

static void check_spread(reader *r, const lm_spread *sp, size_t n_selected, size_t metric_rows) {
  if (sp->n_sets < 1 || sp->n_shared < 1 || !sp->shared) {
    wrong(r, "the executions' spread has %d sets and %d shared quantities", (int)sp->n_sets, (int)sp->n_shared);
    return;
  }
  for (int32_t q = 0; q < sp->n_shared && !r->bad; q++)
    if (!sp->shared[q]) wrong(r, "the executions' spread: shared quantity %d has no name", (int)q);
  if (sp->n_kernels > n_selected || sp->n_flagged > metric_rows)
    wrong(r, "the executions' spread lists %zu kernels and flags %zu metrics of %zu dispatches and %zu metrics",
          sp->n_kernels, sp->n_flagged, n_selected, metric_rows);
  for (size_t k = 0; k < sp->n_kernels && !r->bad; k++)
    if (sp->kernels[k].rows > n_selected || sp->kernels[k].rows_over > sp->kernels[k].rows)
      wrong(r, "the executions' spread: kernel %zu counts more rows than selected", k);
}

static int has_rank(const lm_rank_table *rt, int32_t rank) {
  for (size_t i = 0; i < rt->n_rows; i++)
    if (rt->rows[i].rank == rank) return 1;
  return 0;
}

/* The largest MPI rank of w's dispatches (from its rows, else its parts);
 * INT32_MAX where w does not say. */
static int32_t workload_max_rank(const lm_workload *w) {
  int32_t max = -1;
  if (w->row_rank && w->pmc)
    for (size_t i = 0; i < w->pmc->n_rows; i++)
      if (w->row_rank[i] > max) max = w->row_rank[i];
  for (size_t p = 0; max < 0 && w->part_rank && p < w->n_parts; p++)
    if (w->part_rank[p] > max) max = w->part_rank[p];
  return max < 0 ? INT32_MAX : max;
}

/* The rank table: ranks in order, each one of the workload's (from 0 to
 * its largest), counting at most the dispatches selected. */
static void check_ranks(reader *r, const lm_rank_table *rt, size_t n_selected, const lm_workload *w) {
  int32_t max_rank = workload_max_rank(w);
  if (rt->n_rows < 2 || rt->n_kernels > LM_RANK_KERNELS) {
    wrong(r, "a rank table of %zu ranks and %zu kernels", rt->n_rows, rt->n_kernels);
    return;
  }
  size_t dispatches = 0;
  for (size_t i = 0; i < rt->n_rows && !r->bad; i++) {
    if (rt->rows[i].rank < 0 || rt->rows[i].rank > max_rank)
      wrong(r, "the rank table has rank %d, not a rank of the workload (0 to %d)", (int)rt->rows[i].rank,
            (int)max_rank);
    else if (i && rt->rows[i].rank <= rt->rows[i - 1].rank) wrong(r, "the rank table is not in rank order");
    if ((dispatches += rt->rows[i].dispatches) > n_selected)
      wrong(r, "the rank table counts more than the %zu dispatches selected", n_selected);
  }
  if (!r->bad && (!has_rank(rt, rt->slowest) || !has_rank(rt, rt->fastest)))
    wrong(r, "the rank table's slowest or fastest rank is not one of its ranks");
  for (size_t k = 0; k < rt->n_kernels && !r->bad; k++) {
    const lm_rank_kernel *x = &rt->kernels[k];
    if (x->n_ranks < 1 || x->n_ranks > rt->n_rows || !has_rank(rt, x->max_rank) || !has_rank(rt, x->min_rank))
      wrong(r, "the rank table: kernel %zu names ranks it does not have", k);
  }
}

static void check_analysis(reader *r, const lm_analysis *a, const lm_workload *w, const lm_catalog *cat) {
  int norm_known = !cat->n_norms && a->norm && !a->norm[0];
  for (int32_t i = 0; i < cat->n_norms && !norm_known; i++) norm_known = same_text(a->norm, cat->norms[i].name);
  if (!norm_known) wrong(r, "normalization '%.40s' is not one of %s", a->norm ? a->norm : "(none)", cat->arch);
  if (a->n_selected < 1) wrong(r, "no dispatch selected");
  if (!r->bad && a->n_tables != cat->n_tables)
    wrong(r, "%d tables where the definitions have %d", (int)a->n_tables, (int)cat->n_tables);
  size_t metric_rows = 0;
  for (int32_t i = 0; i < a->n_tables && !r->bad; i++) {
    check_table(r, &a->tables[i], i, w, cat, &metric_rows);
    /* the dispatch list covers the selection before the kernel filters */
    if (!r->bad && a->tables[i].kind == LM_TABLE_DISPATCHES && a->n_selected > (size_t)a->tables[i].n_rows)
      wrong(r, "%zu dispatches selected of the %d listed", a->n_selected, (int)a->tables[i].n_rows);
  }
  if (!r->bad && a->spread) check_spread(r, a->spread, a->n_selected, metric_rows);
  if (!r->bad && a->ranks) check_ranks(r, a->ranks, a->n_selected, w);
}

/* ------------------------------------------------------------ parsing */

static void get_table(reader *r, lm_rtable *x) {
  memset(x, 0, sizeof *x);
  x->def = get_i32(r);
  x->id = get_str(r);
  x->title = get_str(r);
  x->panel_title = get_str(r);
  x->panel_id = get_i32(r);
  uint32_t flags = get_u32(r);
  if (flags >> 24) wrong(r, "table flags %#x", flags);
  x->kind = (uint8_t)flags;
  x->style = (uint8_t)(flags >> 8);
  x->comparable = (uint8_t)(flags >> 16);
  x->shown = get_i32(r);
  x->n_cols = get_count(r, 4, "a column count");
  x->titles = get_strs(r, x->n_cols, "column titles");
  x->roles = get_mem(r, (size_t)x->n_cols, 1);
  for (int32_t c = 0; c < x->n_cols && !r->bad; c++) {
    uint32_t role = get_u32(r);
    if (role > 0xff) wrong(r, "column role %u", role);
    x->roles[c] = (uint8_t)role;
  }
  x->n_rows = get_count(r, 4 * (size_t)(x->n_cols ? x->n_cols : 1), "a row count");
  if (r->bad) return;
  size_t n_cells = (size_t)x->n_rows * (size_t)x->n_cols;
  x->cells = get_mem(r, n_cells, sizeof *x->cells);
  for (size_t i = 0; i < n_cells && !r->bad; i++) {
    lm_cell *cell = &x->cells[i];
    uint32_t k = get_u32(r);
    cell->kind = (uint8_t)k;
    cell->integer = (uint8_t)(k >> 8);
    cell->num = 0;
    cell->text = NULL;
    if (k >> 16 || cell->kind > LM_CELL_TEXT || cell->integer > 1) wrong(r, "a cell of kind %#x", k);
    else if (cell->kind == LM_CELL_NUMBER) cell->num = get_f64(r);
    else if (cell->kind == LM_CELL_TEXT && !(cell->text = get_str(r))) wrong(r, "a text cell without its text");
  }
  x->row_ids = get_strs(r, x->n_rows, "row ids");
  x->row_sources = get_strs(r, x->n_rows, "row sources");
  x->row_descs = get_strs(r, x->n_rows, "row descriptions");
  x->row_formulas = get_strs(r, x->n_rows, "row formulas");
  x->note = get_str(r);
  if (get_flag(r, "row spreads")) {
    if ((size_t)(r->end - r->p) / 8 < (size_t)x->n_rows) wrong(r, "row spreads past its end");
    x->row_spread = get_mem(r, (size_t)x->n_rows, sizeof *x->row_spread);
    for (int32_t i = 0; i < x->n_rows && !r->bad; i++) x->row_spread[i] = get_f64(r);
  }
}

static void get_spread(reader *r, lm_spread *sp, size_t n_dispatches) {
  memset(sp, 0, sizeof *sp);
  sp->n_sets = get_i32(r);
  sp->n_shared = get_count(r, 4, "the shared quantities' count");
  sp->shared = get_strs(r, sp->n_shared, "the shared quantities");
  sp->n_flagged = get_size(r, (size_t)INT32_MAX, "the flagged metrics' count");
  sp->n_kernels = (size_t)get_count(r, 28, "the spread's kernel count");
  sp->kernels = get_mem(r, sp->n_kernels, sizeof *sp->kernels);
  for (size_t k = 0; k < sp->n_kernels && !r->bad; k++) {
    lm_kernel_spread *ks = &sp->kernels[k];
    if (!(ks->kernel = get_str(r))) wrong(r, "a kernel of the spread has no name");
    ks->rows = get_size(r, n_dispatches, "a kernel's rows");
    ks->rows_over = get_size(r, n_dispatches, "a kernel's rows over the threshold");
    ks->max_spread = get_f64(r);
    if (!r->bad && (size_t)(r->end - r->p) / 8 < (size_t)sp->n_shared) wrong(r, "spreads past its end");
    ks->spread = get_mem(r, (size_t)sp->n_shared, sizeof *ks->spread);
    for (int32_t q = 0; q < sp->n_shared && !r->bad; q++) ks->spread[q] = get_f64(r);
  }
}

static void get_ranks(reader *r, lm_rank_table *rt, size_t n_dispatches) {
  memset(rt, 0, sizeof *rt);
  rt->slowest = get_i32(r);
  rt->fastest = get_i32(r);
  rt->imbalance = get_f64(r);
  rt->n_rows = (size_t)get_count(r, 48, "the rank count");
  rt->rows = get_mem(r, rt->n_rows, sizeof *rt->rows);
  for (size_t i = 0; i < rt->n_rows && !r->bad; i++) {
    lm_rank_row *x = &rt->rows[i];
    x->rank = get_i32(r);
    x->host = get_str(r);
    x->dispatches = get_size(r, n_dispatches, "a rank's dispatches");
    x->total_ns = get_f64(r);
    x->mean_ns = get_f64(r);
    x->busy_cycles = get_f64(r);
    x->waves = get_f64(r);
  }
  rt->n_kernels = (size_t)get_count(r, 44, "the rank table's kernel count");
  rt->kernels = get_mem(r, rt->n_kernels, sizeof *rt->kernels);
  for (size_t k = 0; k < rt->n_kernels && !r->bad; k++) {
    lm_rank_kernel *x = &rt->kernels[k];
    if (!(x->kernel = get_str(r))) wrong(r, "a kernel of the rank table has no name");
    x->n_ranks = get_size(r, rt->n_rows, "a kernel's ranks");
    x->max_rank = get_i32(r);
    x->min_rank = get_i32(r);
    x->max_ns = get_f64(r);
    x->min_ns = get_f64(r);
    x->ratio = get_f64(r);
  }
}

lm_status lm_analysis_deserialize(const void *data, size_t len, const lm_workload *w, const lm_catalog *cat,
                                  lm_analysis **out, lm_diag *diag) {
  *out = NULL;
  if (len < 8 || memcmp(data, MAGIC, 8) != 0)
    return lm_fail(diag, LM_EDATA, NULL, "not a stored analysis of this lumen");
  lm_arena *arena = lm_arena_new(1 << 16);
  if (!arena) return lm_oom(diag, NULL);
  size_t n_dispatches = w->pmc ? w->pmc->n_rows : 0;
  reader r = {(const unsigned char *)data + 8, (const unsigned char *)data + len, arena, 0, 0, ""};
  lm_analysis *a = get_mem(&r, 1, sizeof *a);
  if (!a) goto bad;
  memset(a, 0, sizeof *a);
  a->arena = arena;
  a->workload = w;
  a->catalog = cat;
  a->norm = get_str(&r);
  a->n_selected = get_size(&r, n_dispatches, "dispatches selected");
  a->n_tables = get_count(&r, 16, "the table count");
  a->tables = get_mem(&r, (size_t)a->n_tables, sizeof *a->tables);
  for (int32_t t = 0; t < a->n_tables && !r.bad; t++) get_table(&r, &a->tables[t]);
  if (get_flag(&r, "the executions' spread")) {
    if ((a->spread = get_mem(&r, 1, sizeof *a->spread)) != NULL) get_spread(&r, a->spread, n_dispatches);
  }
  if (get_flag(&r, "the rank table")) {
    if ((a->ranks = get_mem(&r, 1, sizeof *a->ranks)) != NULL) get_ranks(&r, a->ranks, n_dispatches);
  }
  if (!r.bad && r.p != r.end) wrong(&r, "%zu bytes follow its end", (size_t)(r.end - r.p));
  if (!r.bad) check_analysis(&r, a, w, cat);
  if (r.bad) goto bad;
  *out = a;
  return LM_OK;
bad:
  lm_arena_free(arena);
  if (r.nomem) return lm_oom(diag, NULL);
  return lm_fail(diag, LM_EDATA, NULL, "a stored analysis is damaged: %s", r.why);
}
