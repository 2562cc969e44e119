/*
 * report.c - terminal, CSV and JSON renderings of analyses.
 *
 * One shape serves all three: a run's tables in catalog order, each a grid
 * of cells. A comparison lines later runs up with the first: metric rows
 * by metric id, top kernels by kernel name (the reference tool pairs them
 * by rank, which compares different kernels once their order changes; see
 * docs/compatibility.md), system info by field, anything else by position.
 * Terminal text is escaped (control characters and invalid UTF-8 become
 * \xNN) and cells are cut to a width; JSON is always valid UTF-8.
 */
#include <cjson/cJSON.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "report/internal.h"
#include "report/report.h"

/* ------------------------------------------------------------ matching */

/* A compared cell whose row the other workload does not have. */
#define ABSENT "absent"

static const lm_cell *cell_at(const lm_rtable *t, int32_t row, int32_t col) {
  return &t->cells[(size_t)row * (size_t)t->n_cols + (size_t)col];
}

static int32_t find_col(const lm_rtable *t, const char *title) {
  for (int32_t c = 0; c < t->n_cols; c++)
    if (strcmp(t->titles[c], title) == 0) return c;
  return -1;
}

/* The length of a kernel name without the suffix its ROCm version gave
 * the code object symbol: " [clone .kd]" (ROCm 5/6 demangled names),
 * ".kd" (rocprofv3), none (ROCm 7): the same kernel in each. */
static size_t name_stem(const char *s) {
  size_t n = strlen(s);
  static const char *const suffixes[] = {" [clone .kd]", ".kd"};
  for (size_t i = 0; i < 2; i++) {
    size_t k = strlen(suffixes[i]);
    if (n > k && memcmp(s + n - k, suffixes[i], k) == 0) n -= k;
  }
  while (n > 0 && s[n - 1] == ' ') n--;
  return n;
}

int lm_report_same_kernel(const char *a, const char *b) {
  size_t na = name_stem(a), nb = name_stem(b);
  return na == nb && memcmp(a, b, na) == 0;
}

/* The name of metric row r (its first name column), or NULL. */
static const char *metric_name(const lm_rtable *t, int32_t r) {
  for (int32_t c = 0; c < t->n_cols; c++)
    if (t->roles[c] == LM_RCOL_NAME) {
      const lm_cell *cell = cell_at(t, r, c);
      return cell->kind == LM_CELL_TEXT ? cell->text : NULL;
    }
  return NULL;
}

/* Two metric names mean the same (a row without a name matches any). */
static int same_name(const char *a, const char *b) { return !a || !b || strcmp(a, b) == 0; }

/* The row of `other` that corresponds to row `row` of `base`, or -1.
 * Kernels match by name, else by name without the ROCm suffix
 * (lm_report_same_kernel; *loose set to 1 when not NULL). */
static int32_t match_row_how(const lm_rtable *base, const lm_rtable *other, int32_t row, int *loose) {
  if (loose) *loose = 0;
  if (!other || !other->n_rows) return -1;
  if (base->kind == LM_TABLE_SYSINFO) {
    const char *id = base->row_ids[row];
    if (row < other->n_rows && strcmp(other->row_ids[row], id) == 0) return row;
    for (int32_t r = 0; r < other->n_rows; r++)
      if (strcmp(other->row_ids[r], id) == 0) return r;
    return -1;
  }
  if (base->kind == LM_TABLE_METRIC) {
    /* The same id with the same name; else the same name under another id
     * (another architecture's catalog numbers its rows its own way). */
    const char *id = base->row_ids[row], *name = metric_name(base, row);
    int32_t at = -1;
    if (row < other->n_rows && strcmp(other->row_ids[row], id) == 0) at = row;
    for (int32_t r = 0; r < other->n_rows && at < 0; r++)
      if (strcmp(other->row_ids[r], id) == 0) at = r;
    if (at >= 0 && same_name(name, metric_name(other, at))) return at;
    for (int32_t r = 0; r < other->n_rows && name; r++)
      if (same_name(name, metric_name(other, r))) return r;
    return -1;
  }
  if (base->kind == LM_TABLE_TOP_KERNELS) {
    int32_t kb = find_col(base, "Kernel_Name"), ko = find_col(other, "Kernel_Name");
    if (kb < 0 || ko < 0) return -1;
    const char *name = cell_at(base, row, kb)->text;
    for (int32_t r = 0; r < other->n_rows; r++)
      if (name && cell_at(other, r, ko)->text && strcmp(cell_at(other, r, ko)->text, name) == 0)
        return r;
    for (int32_t r = 0; r < other->n_rows; r++)
      if (name && cell_at(other, r, ko)->text && lm_report_same_kernel(cell_at(other, r, ko)->text, name)) {
        /* (unless that row has a kernel of the base of its very name) */
        int taken = 0;
        for (int32_t q = 0; q < base->n_rows && !taken; q++)
          taken = cell_at(base, q, kb)->text && strcmp(cell_at(base, q, kb)->text, cell_at(other, r, ko)->text) == 0;
        if (taken) continue;
        if (loose) *loose = 1;
        return r;
      }
    return -1;
  }
  return row < other->n_rows ? row : -1;
}

static int32_t match_row(const lm_rtable *base, const lm_rtable *other, int32_t row) {
  return match_row_how(base, other, row, NULL);
}

/* Under a compared top-kernels table: which rows were matched by name
 * without the ROCm suffix. */
static void loose_matches_text(const lm_analysis *const *runs, size_t n, const lm_rtable *t, lm_buf *out) {
  if (t->kind != LM_TABLE_TOP_KERNELS) return;
  for (size_t k = 1; k < n; k++) {
    const lm_rtable *ot = lm_analysis_find(runs[k], t->id);
    lm_buf rows = {0};
    for (int32_t r = 0; ot && r < t->n_rows; r++) {
      int loose = 0;
      if (match_row_how(t, ot, r, &loose) >= 0 && loose) lm_buf_printf(&rows, "%s%s", rows.len ? ", " : "", t->row_ids[r]);
    }
    if (rows.len)
      lm_buf_printf(out,
                    "(row%s %s: matched with workload [%zu] by kernel name without the suffix its ROCm version "
                    "adds: \".kd\", \" [clone .kd]\")\n",
                    strchr(lm_buf_cstr(&rows), ',') ? "s" : "", lm_buf_cstr(&rows), k + 1);
    lm_buf_fini(&rows);
  }
}

/* Under a compared table: how many of its rows another workload lacks (no
 * kernel, or no metric, of that name), each shown as ABSENT. */
static void absent_rows_text(const lm_analysis *const *runs, size_t n, const lm_rtable *t, lm_buf *out) {
  if (t->kind != LM_TABLE_TOP_KERNELS && t->kind != LM_TABLE_METRIC) return;
  for (size_t k = 1; k < n; k++) {
    const lm_rtable *ot = lm_analysis_find(runs[k], t->id);
    int32_t absent = 0;
    for (int32_t r = 0; r < t->n_rows; r++) absent += match_row(t, ot, r) < 0;
    if (absent)
      lm_buf_printf(out,
                    "(%d of %d row%s %s no counterpart in workload [%zu]: no %s of the same name; shown as \"%s\")\n",
                    absent, t->n_rows, t->n_rows == 1 ? "" : "s", absent == 1 ? "has" : "have", k + 1,
                    t->kind == LM_TABLE_TOP_KERNELS ? "kernel" : "metric", ABSENT);
  }
}

static int comparable_col(const lm_rtable *t, int32_t col) {
  if (!t->comparable || t->roles[col] != LM_RCOL_VALUE) return 0;
  if (t->kind == LM_TABLE_METRIC || t->kind == LM_TABLE_TOP_KERNELS) return 1;
  return 0;
}

static double num_or_zero(const lm_cell *c) {
  return c && c->kind == LM_CELL_NUMBER ? c->num : 0;
}

/* ---------------------------------------------------------------- text */

typedef struct grid {
  size_t n_rows, n_cols;
  char **cells;      /* (n_rows + 1) * n_cols, row 0 is the header; owned */
  uint8_t *right;    /* per column: right-align */
  uint8_t *role;     /* per column: lm_rcol_role (Metric_ID: LM_RCOL_INDEX) */
  const char **raw;  /* per cell: the unwrapped text of name cells, or NULL (borrowed) */
} grid;

static void grid_free(grid *g) {
  if (g->cells)
    for (size_t i = 0; i < (g->n_rows + 1) * g->n_cols; i++) lm_free(g->cells[i]);
  lm_free(g->cells);
  lm_free(g->right);
  lm_free(g->role);
  lm_free(g->raw);
}

static size_t utf8_width(const char *s, size_t n) { return lm_report_width(s, n); }

/* Split text into lines of at most `width` characters, at most `max_lines`
 * lines, the last ending in "..." when cut. */
static char *wrap(const char *raw, size_t width, size_t max_lines) {
  lm_buf b = {0};
  char *text = lm_text_safe(raw, width * max_lines + 1);
  if (!text) return NULL;
  size_t len = strlen(text), at = 0, lines = 0;
  while (at < len && lines < max_lines) {
    size_t take = len - at < width ? len - at : width;
    if (lines) lm_buf_putc(&b, '\n');
    if (lines + 1 == max_lines && at + take < len && take > 3) {
      lm_buf_append(&b, text + at, take - 3);
      lm_buf_puts(&b, "...");
    } else {
      lm_buf_append(&b, text + at, take);
    }
    at += take;
    lines++;
  }
  lm_free(text);
  return lm_buf_take(&b);
}

/* The widest a text cell is shown in a terminal table; longer ones are cut
 * with a marker (a 5 MB host name must not make a 5 MB-wide table). */
#define CELL_MAX_WIDTH 200

static char *fmt_number(const lm_cell *c, int decimal) {
  char buf[64];
  if (c->kind == LM_CELL_EMPTY) return lm_strdup("");
  if (c->kind == LM_CELL_TEXT) return lm_text_safe(c->text, CELL_MAX_WIDTH);
  if (isnan(c->num)) return lm_strdup("");
  if (isinf(c->num)) return lm_strdup(c->num < 0 ? "-inf" : "inf");
  snprintf(buf, sizeof buf, "%.*f", c->integer ? 0 : decimal, c->num);
  return lm_strdup(buf);
}

/* Δ%: one definition for text, CSV, JSON and the GUI (docs/compatibility.md):
 * 100 × (other − base) / base on the full-precision values; with a zero
 * base it is 0 when other is 0 too and undefined otherwise. The reference
 * tool's variant (--delta reference) rounds both values to the shown
 * digits first and divides by 1 when the base is 0. */
static int delta_reference;

void lm_report_delta_variant(int reference) { delta_reference = reference; }

int lm_report_delta_pct(double base, double other, int decimal, double *pct) {
  if (!isfinite(base) || !isfinite(other)) return 0;
  if (delta_reference) {
    double scale = pow(10, decimal);
    double diff = nearbyint((other - base) * scale) / scale;
    *pct = diff / (base == 0 ? 1 : base) * 100;
    return 1;
  }
  if (base == 0) {
    if (other != 0) return 0;
    *pct = 0;
    return 1;
  }
  *pct = (other - base) / fabs(base) * 100;
  return 1;
}

static char *fmt_delta(double base, double other, int decimal) {
  char buf[96];
  double scale = pow(10, decimal), pct;
  double shown = nearbyint(other * scale) / scale;
  if (!lm_report_delta_pct(base, other, decimal, &pct)) snprintf(buf, sizeof buf, "%.*f (n/a)", decimal, shown);
  else snprintf(buf, sizeof buf, "%.*f (%.*f%%)", decimal, shown, decimal, nearbyint(pct * scale) / scale);
  return lm_strdup(buf);
}

static lm_status build_grid(const lm_analysis *const *runs, size_t n_runs, int32_t ti,
                            const lm_report_opts *o, grid *g) {
  const lm_rtable *t = &runs[0]->tables[ti];
  int metric = t->kind == LM_TABLE_METRIC;
  /* Columns: [Metric_ID | index] + visible columns + comparison columns. */
  int32_t src_cols[256];
  int32_t run_of[256];
  size_t nc = 0;
  if (metric) {
    src_cols[nc] = -1;
    run_of[nc++] = 0;
  }
  for (int32_t c = 0; c < t->n_cols && nc + n_runs < 256; c++) {
    if (t->roles[c] == LM_RCOL_TIPS) continue;
    src_cols[nc] = c;
    run_of[nc++] = 0;
    if (t->kind == LM_TABLE_SYSINFO && c == 1)
      for (size_t r = 1; r < n_runs; r++) {
        src_cols[nc] = c;
        run_of[nc++] = (int32_t)r;
      }
    else if (comparable_col(t, c))
      for (size_t r = 1; r < n_runs; r++) {
        src_cols[nc] = c;
        run_of[nc++] = (int32_t)r;
      }
  }
  /* A lumen profile's metrics fed by executions that disagree: one more
   * column, "Sets differ", with the spread of the flagged rows. */
  if (metric && n_runs == 1 && lm_report_any_flagged(t) && nc < 256) {
    src_cols[nc] = -2;
    run_of[nc++] = 0;
  }
  size_t max_rows = (size_t)t->n_rows;
  int stat_table = t->kind == LM_TABLE_TOP_KERNELS || t->kind == LM_TABLE_DISPATCHES;
  if (stat_table && o->max_stat_num && max_rows > o->max_stat_num) max_rows = o->max_stat_num;
  g->n_rows = max_rows;
  g->n_cols = nc;
  g->cells = lm_calloc((max_rows + 1) * nc, sizeof(char *));
  g->right = lm_calloc(nc ? nc : 1, 1);
  g->role = lm_calloc(nc ? nc : 1, 1);
  g->raw = lm_calloc((max_rows + 1) * nc, sizeof *g->raw);
  if (!g->cells || !g->right || !g->role || !g->raw) return LM_ENOMEM;
  for (size_t k = 0; k < nc; k++) {
    char title[256];
    if (src_cols[k] == -2) snprintf(title, sizeof title, "Sets differ");
    else if (src_cols[k] < 0) snprintf(title, sizeof title, "Metric_ID");
    else if (run_of[k] > 0) snprintf(title, sizeof title, "%s [%d]", t->titles[src_cols[k]],
                                     (int)run_of[k] + 1);
    else snprintf(title, sizeof title, "%s", t->titles[src_cols[k]]);
    g->cells[k] = lm_text_safe(title, CELL_MAX_WIDTH);
    if (!g->cells[k]) return LM_ENOMEM;
    g->right[k] = src_cols[k] == -2 || (src_cols[k] >= 0 && t->roles[src_cols[k]] == LM_RCOL_VALUE);
    g->role[k] = src_cols[k] >= 0 ? t->roles[src_cols[k]] : src_cols[k] == -2 ? LM_RCOL_TEXT : LM_RCOL_INDEX;
  }
  for (size_t r = 0; r < max_rows; r++) {
    for (size_t k = 0; k < nc; k++) {
      char *text;
      int32_t c = src_cols[k];
      if (c == -2) {
        text = lm_report_flag_text(t, (int32_t)r);
      } else if (c < 0) {
        text = lm_text_safe(t->row_ids[r], CELL_MAX_WIDTH);
      } else if (run_of[k] == 0) {
        const lm_cell *cell = cell_at(t, (int32_t)r, c);
        if (cell->kind == LM_CELL_TEXT && t->roles[c] == LM_RCOL_NAME) g->raw[(r + 1) * nc + k] = cell->text;
        if (cell->kind == LM_CELL_TEXT && t->roles[c] == LM_RCOL_NAME &&
            t->kind == LM_TABLE_TOP_KERNELS)
          text = wrap(cell->text, 40, 3);
        else if (cell->kind == LM_CELL_TEXT && t->roles[c] == LM_RCOL_NAME &&
                 t->kind == LM_TABLE_DISPATCHES)
          text = wrap(cell->text, 80, 4);
        else
          text = fmt_number(cell, o->decimal);
      } else {
        const lm_rtable *ot = lm_analysis_find(runs[run_of[k]], t->id);
        int32_t orow = ot ? match_row(t, ot, (int32_t)r) : -1;
        int32_t ocol = ot ? find_col(ot, t->titles[c]) : -1;
        const lm_cell *oc = orow >= 0 && ocol >= 0 ? cell_at(ot, orow, ocol) : NULL;
        if (t->kind == LM_TABLE_SYSINFO)
          text = oc ? fmt_number(oc, o->decimal) : lm_strdup("");
        else if (orow < 0)
          text = lm_strdup(ABSENT);
        else
          text = fmt_delta(num_or_zero(cell_at(t, (int32_t)r, c)), num_or_zero(oc), o->decimal);
      }
      if (!text) return LM_ENOMEM;
      g->cells[(r + 1) * nc + k] = text;
    }
  }
  return LM_OK;
}

/* Text from definitions or data, escaped for the terminal. */
static void put_safe(lm_buf *out, const char *s) {
  if (s) lm_text_escape(out, s, strlen(s), CELL_MAX_WIDTH);
}

static void line_of(lm_buf *out, const size_t *widths, size_t nc, const char *left,
                    const char *fill, const char *mid, const char *right) {
  lm_buf_puts(out, left);
  for (size_t k = 0; k < nc; k++) {
    lm_buf_repeat(out, fill, strlen(fill), widths[k] + 2);
    lm_buf_puts(out, k + 1 < nc ? mid : right);
  }
  lm_buf_putc(out, '\n');
}

/* The n-th line (0-based) of a multi-line cell, as [start, len). */
static int cell_line(const char *s, size_t n, const char **start, size_t *len) {
  const char *p = s;
  for (size_t i = 0; i < n; i++) {
    p = strchr(p, '\n');
    if (!p) return 0;
    p++;
  }
  const char *e = strchr(p, '\n');
  *start = p;
  *len = e ? (size_t)(e - p) : strlen(p);
  return 1;
}

/* The width a grid takes as a box table. */
static size_t grid_width(const grid *g) {
  size_t total = 1;
  for (size_t k = 0; k < g->n_cols; k++) {
    size_t w = 0;
    for (size_t r = 0; r <= g->n_rows; r++) {
      const char *ls;
      size_t ll;
      for (size_t i = 0; cell_line(g->cells[r * g->n_cols + k], i, &ls, &ll); i++)
        if (utf8_width(ls, ll) > w) w = utf8_width(ls, ll);
    }
    total += w + 3;
  }
  return total;
}

/* Append piece to a line being filled up to width, starting a new line
 * (indented) when it does not fit. */
static void put_piece(lm_buf *out, size_t *col, const char *piece, size_t width, size_t indent) {
  size_t w = utf8_width(piece, strlen(piece));
  if (*col > indent && *col + 3 + w > width) {
    lm_buf_putc(out, '\n');
    for (size_t i = 0; i < indent; i++) lm_buf_putc(out, ' ');
    *col = indent;
  } else if (*col > indent) {
    lm_buf_puts(out, " · ");
    *col += 3;
  }
  if (*col + w > width && width > *col + 1) {
    char *cut = lm_text_safe(piece, width - *col);
    lm_buf_puts(out, cut ? cut : "");
    *col += cut ? utf8_width(cut, strlen(cut)) : 0;
    lm_free(cut);
  } else {
    lm_buf_puts(out, piece);
    *col += w;
  }
}

/* s without its line breaks, appended in runs. */
static void put_without_newlines(lm_buf *out, const char *s) {
  for (const char *nl; (nl = strchr(s, '\n')) != NULL; s = nl + 1) lm_buf_append(out, s, (size_t)(nl - s));
  lm_buf_puts(out, s);
}

/* A table too wide for the terminal, as one block per row: the row's id
 * and name, then "Title value unit" pieces wrapped to width. */
static void render_blocks(const grid *g, size_t width, lm_buf *out) {
  size_t nc = g->n_cols;
  int32_t unit_col = -1;
  for (size_t k = 0; k < nc; k++)
    if (g->role[k] == LM_RCOL_UNIT && unit_col < 0) unit_col = (int32_t)k;
  /* Names shortened to the line, distinct where the full names differ. */
  int32_t name_col = -1;
  for (size_t k = 0; k < nc && name_col < 0; k++)
    if (g->role[k] == LM_RCOL_NAME && g->raw[nc + k]) name_col = (int32_t)k;
  char **names = NULL;
  if (name_col >= 0) {
    const char **full = lm_calloc(g->n_rows + 1, sizeof *full);
    if (full) {
      for (size_t r = 1; r <= g->n_rows; r++) full[r - 1] = g->raw[r * nc + (size_t)name_col] ? g->raw[r * nc + (size_t)name_col] : "";
      names = lm_report_short_names(full, g->n_rows, width > 12 ? width - 8 : width);
      lm_free(full);
    }
  }
  /* (one buffer for every row's lead and piece, emptied before each) */
  lm_buf lead = {0}, piece = {0};
  for (size_t r = 1; r <= g->n_rows; r++) {
    lm_buf_reset(&lead);
    for (size_t k = 0; k < nc; k++) {
      if (g->role[k] != LM_RCOL_INDEX && g->role[k] != LM_RCOL_NAME) continue;
      const char *c = (int32_t)k == name_col && names && names[r - 1] ? names[r - 1] : g->cells[r * nc + k];
      if (!*c) continue;
      if (lead.len) lm_buf_puts(&lead, "  ");
      put_without_newlines(&lead, c);
    }
    size_t col = 0;
    lm_buf_puts(out, r > 1 ? "" : "");
    put_piece(out, &col, lm_buf_cstr(&lead), width, 4);
    const char *unit = unit_col >= 0 ? g->cells[r * nc + (size_t)unit_col] : "";
    lm_buf_putc(out, '\n');
    lm_buf_puts(out, "    ");
    col = 4;
    int any = 0;
    for (size_t k = 0; k < nc; k++) {
      if (g->role[k] == LM_RCOL_INDEX || g->role[k] == LM_RCOL_NAME || g->role[k] == LM_RCOL_UNIT) continue;
      const char *c = g->cells[r * nc + k];
      if (!*c) continue;
      lm_buf_reset(&piece);
      lm_buf_puts(&piece, g->cells[k]);
      lm_buf_putc(&piece, ' ');
      put_without_newlines(&piece, c);
      const char *title = g->cells[k];
      /* (a unit follows numbers only: not "absent" or "not collected") */
      int number = strchr("0123456789-+.", *c) != NULL;
      if (*unit && number && g->role[k] == LM_RCOL_VALUE && !strstr(title, "Pct") && !strstr(title, "Count") &&
          !strchr(c, '%')) {
        lm_buf_putc(&piece, ' ');
        lm_buf_puts(&piece, unit);
      }
      put_piece(out, &col, lm_buf_cstr(&piece), width, 4);
      any = 1;
    }
    if (!any) lm_buf_puts(out, "(no values)");
    lm_buf_putc(out, '\n');
  }
  lm_buf_fini(&lead);
  lm_buf_fini(&piece);
  for (size_t r = 0; names && r < g->n_rows; r++) lm_free(names[r]);
  lm_free(names);
}

/* The colour of a cell's text: a percentage-of-peak value near the peak
 * (>= 80: bold) or near zero (< 1: dim); NULL for no colour. */
static const char *cell_color(const grid *g, size_t r, size_t k) {
  if (r == 0 || !g->right[k] || !strstr(g->cells[k], "Pct")) return NULL;
  const char *c = g->cells[r * g->n_cols + k];
  if (!*c || strchr(c, '(')) return NULL;
  char *end = NULL;
  double v = strtod(c, &end);
  if (end == c) return NULL;
  if (v >= 80) return "\033[1;33m";
  if (v < 1) return "\033[2m";
  return NULL;
}

static void render_grid(const grid *g, int color, lm_buf *out) {
  size_t nc = g->n_cols;
  size_t *widths = lm_calloc(nc ? nc : 1, sizeof *widths);
  if (!widths) {
    out->failed = 1;
    return;
  }
  for (size_t r = 0; r <= g->n_rows; r++)
    for (size_t k = 0; k < nc; k++) {
      const char *s = g->cells[r * nc + k];
      const char *ls;
      size_t ll;
      for (size_t i = 0; cell_line(s, i, &ls, &ll); i++) {
        size_t w = utf8_width(ls, ll);
        if (w > widths[k]) widths[k] = w;
      }
    }
  line_of(out, widths, nc, "╒", "═", "╤", "╕");
  for (size_t r = 0; r <= g->n_rows; r++) {
    size_t lines = 1;
    for (size_t k = 0; k < nc; k++) {
      size_t n = 1;
      for (const char *p = g->cells[r * nc + k]; *p; p++) n += *p == '\n';
      if (n > lines) lines = n;
    }
    for (size_t l = 0; l < lines; l++) {
      lm_buf_puts(out, "│");
      for (size_t k = 0; k < nc; k++) {
        const char *ls = "";
        size_t ll = 0;
        cell_line(g->cells[r * nc + k], l, &ls, &ll);
        size_t pad = widths[k] - utf8_width(ls, ll);
        lm_buf_putc(out, ' ');
        if (g->right[k] && r > 0) lm_buf_repeat(out, " ", 1, pad);
        const char *tint = color && ll ? cell_color(g, r, k) : NULL;
        if (tint) lm_buf_puts(out, tint);
        lm_buf_append(out, ls, ll);
        if (tint) lm_buf_puts(out, "\033[0m");
        if (!(g->right[k] && r > 0)) lm_buf_repeat(out, " ", 1, pad);
        lm_buf_puts(out, " │");
      }
      lm_buf_putc(out, '\n');
    }
    if (r == 0) line_of(out, widths, nc, "╞", "═", "╪", "╡");
    else if (r < g->n_rows) line_of(out, widths, nc, "├", "─", "┼", "┤");
  }
  line_of(out, widths, nc, "╘", "═", "╧", "╛");
  lm_free(widths);
}

lm_status lm_report_text(const lm_analysis *const *runs, size_t n, const lm_report_opts *o,
                         lm_buf *out) {
  const lm_analysis *a = runs[0];
  int32_t last_panel = -1;
  for (size_t k = 0; k < n; k++)
    if (runs[k]->workload->simulated) {
      lm_buf_puts(out, "NOTE: ");
      put_safe(out, runs[k]->workload->path);
      lm_buf_puts(out, " comes from the simulated device replaying ");
      put_safe(out, runs[k]->workload->simulated);
      lm_buf_puts(out, ": its numbers are replays of a recording, not measurements.\n");
    }
  for (int32_t ti = 0; ti < a->n_tables; ti++) {
    const lm_rtable *t = &a->tables[ti];
    if (!t->shown || !t->n_cols) continue;
    if (t->panel_id != last_panel) {
      lm_buf_puts(out, "\n");
      for (int i = 0; i < (o->width > 0 && o->width < 80 ? o->width : 80); i++) lm_buf_puts(out, "─");
      lm_buf_printf(out, "\n%d. ", (int)t->panel_id);
      put_safe(out, t->panel_title);
      lm_buf_putc(out, '\n');
      last_panel = t->panel_id;
    }
    if (t->title && t->title[0]) {
      put_safe(out, t->id);
      lm_buf_putc(out, ' ');
      put_safe(out, t->title);
      lm_buf_putc(out, '\n');
    }
    if (t->note) {
      lm_buf_printf(out, "(%s)\n", t->note);
      continue;
    }
    if (t->n_rows == 0) {
      lm_buf_puts(out, "(no rows)\n");
      continue;
    }
    grid g;
    memset(&g, 0, sizeof g);
    lm_status st = build_grid(runs, n, ti, o, &g);
    if (st == LM_OK && o->width > 0 && grid_width(&g) > (size_t)o->width) render_blocks(&g, (size_t)o->width, out);
    else if (st == LM_OK) render_grid(&g, o->color, out);
    grid_free(&g);
    if (st != LM_OK) return st;
    if (n > 1) loose_matches_text(runs, n, t, out);
    if (n > 1) absent_rows_text(runs, n, t, out);
    if (o->verbose && t->kind == LM_TABLE_METRIC && t->row_descs) {
      size_t width = o->width > 0 ? (size_t)o->width : (size_t)-1;
      for (int32_t r = 0; r < t->n_rows; r++) {
        size_t indent = 4 + strlen(t->row_ids[r]);
        char lead[160];
        if (t->row_descs[r] && t->row_descs[r][0]) {
          snprintf(lead, sizeof lead, "  %s  ", t->row_ids[r]);
          lm_report_wrap(out, lead, t->row_descs[r], indent, width);
        }
        if (o->verbose > 1 && t->row_formulas[r] && t->row_formulas[r][0]) {
          snprintf(lead, sizeof lead, "  %*s  = ", (int)strlen(t->row_ids[r]), "");
          lm_report_wrap(out, lead, t->row_formulas[r], indent + 2, width);
        }
      }
    }
  }
  if (n == 1) lm_report_spread_text(a, out);
  if (n == 1) lm_report_ranks_text(a, out);
  if (n == 1) lm_report_split_text(a, out);
  return out->failed ? LM_ENOMEM : LM_OK;
}

/* ----------------------------------------------------------------- CSV */

static void csv_field(lm_buf *out, const char *s) {
  if (strpbrk(s, ",\"\n\r")) {
    lm_buf_putc(out, '"');
    for (const char *p = s; *p; p++) {
      if (*p == '"') lm_buf_putc(out, '"');
      lm_buf_putc(out, *p);
    }
    lm_buf_putc(out, '"');
  } else {
    lm_buf_puts(out, s);
  }
}

static void csv_number(lm_buf *out, const lm_cell *c) {
  char buf[48];
  if (!c || c->kind == LM_CELL_EMPTY || (c->kind == LM_CELL_NUMBER && isnan(c->num))) return;
  if (c->kind == LM_CELL_TEXT) {
    csv_field(out, c->text ? c->text : "");
    return;
  }
  if (c->integer && fabs(c->num) < 1e18) snprintf(buf, sizeof buf, "%.0f", c->num);
  else lm_format_double(c->num, buf);
  lm_buf_puts(out, buf);
}

static void csv_table(const lm_analysis *const *runs, size_t n, const lm_rtable *t, lm_buf *out) {
  int metric = t->kind == LM_TABLE_METRIC;
  int has_tips = 0;
  /* Header. */
  if (metric) lm_buf_puts(out, "Metric_ID");
  int first = !metric;
  for (int32_t c = 0; c < t->n_cols; c++) {
    if (t->roles[c] == LM_RCOL_TIPS) {
      has_tips = 1;
      continue;
    }
    if (!first) lm_buf_putc(out, ',');
    first = 0;
    csv_field(out, t->titles[c]);
    if (comparable_col(t, c) || (t->kind == LM_TABLE_SYSINFO && c == 1))
      for (size_t r = 1; r < n; r++) {
        lm_buf_printf(out, ",%s [%d]", t->titles[c], (int)r + 1);
        if (t->kind != LM_TABLE_SYSINFO) lm_buf_printf(out, ",%s [%d] Delta%%", t->titles[c], (int)r + 1);
      }
  }
  if (metric) lm_buf_puts(out, ",coll_level");
  if (has_tips) lm_buf_puts(out, ",Tips");
  lm_buf_putc(out, '\n');
  for (int32_t r = 0; r < t->n_rows; r++) {
    first = 1;
    if (metric) {
      csv_field(out, t->row_ids[r]);
      first = 0;
    }
    for (int32_t c = 0; c < t->n_cols; c++) {
      if (t->roles[c] == LM_RCOL_TIPS) continue;
      if (!first) lm_buf_putc(out, ',');
      first = 0;
      const lm_cell *cell = cell_at(t, r, c);
      if (t->roles[c] == LM_RCOL_INDEX && cell->kind == LM_CELL_TEXT) csv_field(out, cell->text);
      else csv_number(out, cell);
      int cmp = comparable_col(t, c), info = t->kind == LM_TABLE_SYSINFO && c == 1;
      if (!cmp && !info) continue;
      for (size_t k = 1; k < n; k++) {
        const lm_rtable *ot = lm_analysis_find(runs[k], t->id);
        int32_t orow = ot ? match_row(t, ot, r) : -1;
        int32_t ocol = ot ? find_col(ot, t->titles[c]) : -1;
        const lm_cell *oc = orow >= 0 && ocol >= 0 ? cell_at(ot, orow, ocol) : NULL;
        lm_buf_putc(out, ',');
        csv_number(out, oc);
        if (info) continue;
        lm_buf_putc(out, ',');
        double pct;
        if (oc && oc->kind == LM_CELL_NUMBER && cell->kind == LM_CELL_NUMBER &&
            lm_report_delta_pct(cell->num, oc->num, 2, &pct)) {
          char buf[48];
          lm_buf_puts(out, lm_format_double(pct, buf));
        }
      }
    }
    if (metric) {
      lm_buf_putc(out, ',');
      csv_field(out, t->row_sources && t->row_sources[r] ? t->row_sources[r] : "");
    }
    if (has_tips) lm_buf_putc(out, ',');
    lm_buf_putc(out, '\n');
  }
}

static lm_status make_dir(const char *dir, lm_diag *diag) {
  char path[4096];
  if (strlen(dir) >= sizeof path) return lm_fail(diag, LM_EINVAL, dir, "path too long");
  strcpy(path, dir);
  for (char *p = path + 1; *p; p++) {
    if (*p != '/') continue;
    *p = '\0';
    if (mkdir(path, 0777) != 0 && errno != EEXIST)
      return lm_fail(diag, LM_EIO, path, "cannot create folder: %s", strerror(errno));
    *p = '/';
  }
  if (mkdir(path, 0777) != 0 && errno != EEXIST)
    return lm_fail(diag, LM_EIO, path, "cannot create folder: %s", strerror(errno));
  struct stat st;
  if (stat(path, &st) != 0 || !S_ISDIR(st.st_mode)) return lm_fail(diag, LM_EIO, path, "not a folder");
  return LM_OK;
}

lm_status lm_report_csv_dir(const lm_analysis *const *runs, size_t n, const char *dir,
                            lm_diag *diag) {
  lm_status status = make_dir(dir, diag);
  if (status != LM_OK) return status;
  const lm_analysis *a = runs[0];
  lm_buf b = {0};
  for (int32_t ti = 0; ti < a->n_tables; ti++) {
    const lm_rtable *t = &a->tables[ti];
    if (!t->shown || !t->n_cols) continue;
    lm_buf_reset(&b);
    csv_table(runs, n, t, &b);
    if (b.failed) {
      status = lm_oom(diag, NULL);
      break;
    }
    char path[4096];
    snprintf(path, sizeof path, "%s/%s.csv", dir, t->id);
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(b.data ? b.data : "", 1, b.len, f) != b.len || fclose(f) != 0) {
      if (f) fclose(f);
      status = lm_fail(diag, LM_EIO, path, "cannot write: %s", strerror(errno));
      break;
    }
  }
  lm_buf_fini(&b);
  return status;
}

lm_status lm_report_csv_stream(const lm_analysis *const *runs, size_t n, lm_buf *out) {
  const lm_analysis *a = runs[0];
  for (int32_t ti = 0; ti < a->n_tables; ti++) {
    const lm_rtable *t = &a->tables[ti];
    if (!t->shown || !t->n_cols) continue;
    lm_buf_printf(out, "# %s %s\n", t->id, t->title ? t->title : "");
    csv_table(runs, n, t, out);
    lm_buf_putc(out, '\n');
  }
  return out->failed ? LM_ENOMEM : LM_OK;
}

/* ---------------------------------------------------------------- JSON */

static cJSON *json_cell(const lm_cell *c) {
  if (!c || c->kind == LM_CELL_EMPTY) return cJSON_CreateNull();
  if (c->kind == LM_CELL_TEXT) return cJSON_CreateString(c->text ? c->text : "");
  if (isnan(c->num)) return cJSON_CreateNull();
  if (isinf(c->num)) return cJSON_CreateString(c->num < 0 ? "-inf" : "inf");
  return cJSON_CreateNumber(c->num);
}

void *lm_report_json_cell(const lm_cell *cell) { return json_cell(cell); }

int lm_report_long_table(const lm_rtable *t) {
  return t->kind == LM_TABLE_DISPATCHES || t->kind == LM_TABLE_TOP_KERNELS;
}

static cJSON *json_run_info(const lm_analysis *a, const char *name) {
  cJSON *o = cJSON_CreateObject();
  const lm_sysinfo *info = &a->workload->sysinfo;
  if (name) cJSON_AddStringToObject(o, "id", name);
  else cJSON_AddStringToObject(o, "path", a->workload->path);
  /* Per-kernel totals only, or timestamps of no known architecture: the
   * definitions only lay out the tables; the architecture is the
   * workload's, where it was given. */
  int totals = lm_workload_totals(a->workload) != NULL;
  if (!(a->workload->arch && a->workload->arch[0]))
    cJSON_AddNullToObject(o, "arch");
  else cJSON_AddStringToObject(o, "arch", totals ? a->workload->arch : a->catalog->arch);
  if (totals) cJSON_AddTrueToObject(o, "totals_only");
  cJSON *unmeasurable = totals ? NULL : (cJSON *)lm_report_unmeasurable_json(a->catalog);
  if (unmeasurable) cJSON_AddItemToObject(o, "not_measurable", unmeasurable);
  const char *model = lm_sysinfo_text(info, "gpu_model");
  cJSON_AddStringToObject(o, "gpu_model", model ? model : "");
  if (a->workload->simulated) cJSON_AddStringToObject(o, "simulated", a->workload->simulated);
  cJSON_AddStringToObject(o, "normalization", a->norm);
  cJSON_AddNumberToObject(o, "dispatches_selected", (double)a->n_selected);
  const lm_workload *w = a->workload;
  cJSON_AddNumberToObject(o, "dispatches_total", (double)(w->n_dispatches_all ? w->n_dispatches_all : w->pmc->n_rows));
  return o;
}

lm_status lm_report_json(const lm_analysis *const *runs, size_t n, const lm_report_opts *o,
                         lm_buf *out) {
  const lm_analysis *a = runs[0];
  cJSON *root = cJSON_CreateObject();
  if (!root) return LM_ENOMEM;
  cJSON_AddStringToObject(root, "tool", "lumen");
  cJSON *wl = cJSON_AddArrayToObject(root, "workloads");
  for (size_t k = 0; k < n; k++)
    cJSON_AddItemToArray(wl, json_run_info(runs[k], o && o->names ? o->names[k] : NULL));
  cJSON *panels = cJSON_AddArrayToObject(root, "panels");
  cJSON *panel = NULL, *tables = NULL;
  int32_t last_panel = -1;
  for (int32_t ti = 0; ti < a->n_tables; ti++) {
    const lm_rtable *t = &a->tables[ti];
    if (!t->shown || !t->n_cols) continue;
    if (t->panel_id != last_panel) {
      panel = cJSON_CreateObject();
      cJSON_AddNumberToObject(panel, "id", t->panel_id);
      cJSON_AddStringToObject(panel, "title", t->panel_title ? t->panel_title : "");
      tables = cJSON_AddArrayToObject(panel, "tables");
      cJSON_AddItemToArray(panels, panel);
      last_panel = t->panel_id;
    }
    static const char *const kinds[] = {"metric", "top_kernels", "dispatches", "sysinfo",
                                        "roofline"};
    static const char *const styles[] = {"none", "bar", "multi_bar", "box", "mem_chart",
                                         "roofline"};
    cJSON *jt = cJSON_CreateObject();
    cJSON_AddStringToObject(jt, "id", t->id);
    cJSON_AddStringToObject(jt, "title", t->title ? t->title : "");
    cJSON_AddStringToObject(jt, "kind", kinds[t->kind]);
    cJSON_AddStringToObject(jt, "style", styles[t->style]);
    cJSON *cols = cJSON_AddArrayToObject(jt, "columns");
    for (int32_t c = 0; c < t->n_cols; c++) {
      if (t->roles[c] == LM_RCOL_TIPS) continue;
      cJSON_AddItemToArray(cols, cJSON_CreateString(t->titles[c]));
    }
    /* A long table may be cut to its first rows; rows_total says so. */
    int32_t n_rows = t->n_rows;
    if (o && o->json_max_rows && lm_report_long_table(t) && (size_t)n_rows > o->json_max_rows) {
      n_rows = (int32_t)o->json_max_rows;
      cJSON_AddNumberToObject(jt, "rows_total", t->n_rows);
    }
    cJSON *rows = cJSON_AddArrayToObject(jt, "rows");
    for (int32_t r = 0; r < n_rows; r++) {
      cJSON *jr = cJSON_CreateObject();
      cJSON_AddStringToObject(jr, "id", t->row_ids[r]);
      if (t->row_sources) cJSON_AddStringToObject(jr, "source", t->row_sources[r]);
      if (t->row_descs && t->row_descs[r][0])
        cJSON_AddStringToObject(jr, "description", t->row_descs[r]);
      if (t->row_formulas && t->row_formulas[r][0])
        cJSON_AddStringToObject(jr, "formula", t->row_formulas[r]);
      if (t->row_spread && !isnan(t->row_spread[r])) {
        cJSON_AddNumberToObject(jr, "spread", t->row_spread[r]);
        cJSON_AddBoolToObject(jr, "sets_differ", t->row_spread[r] > LM_SPREAD_THRESHOLD);
      }
      cJSON *cells = cJSON_AddArrayToObject(jr, "cells");
      for (int32_t c = 0; c < t->n_cols; c++) {
        if (t->roles[c] == LM_RCOL_TIPS) continue;
        cJSON_AddItemToArray(cells, json_cell(cell_at(t, r, c)));
      }
      if (n > 1) {
        cJSON *cmp = cJSON_AddArrayToObject(jr, "compare");
        for (size_t k = 1; k < n; k++) {
          const lm_rtable *ot = lm_analysis_find(runs[k], t->id);
          int loose = 0;
          int32_t orow = ot ? match_row_how(t, ot, r, &loose) : -1;
          cJSON *jc = cJSON_CreateObject();
          if (loose) cJSON_AddStringToObject(jc, "matched_by", "kernel name without its ROCm suffix");
          cJSON *oc = cJSON_AddArrayToObject(jc, "cells");
          cJSON *dp = cJSON_AddArrayToObject(jc, "delta_pct");
          for (int32_t c = 0; c < t->n_cols; c++) {
            if (t->roles[c] == LM_RCOL_TIPS) continue;
            int32_t ocol = ot ? find_col(ot, t->titles[c]) : -1;
            const lm_cell *ocell = orow >= 0 && ocol >= 0 ? cell_at(ot, orow, ocol) : NULL;
            cJSON_AddItemToArray(oc, json_cell(ocell));
            const lm_cell *bcell = cell_at(t, r, c);
            double pct;
            if (comparable_col(t, c) && ocell && ocell->kind == LM_CELL_NUMBER &&
                bcell->kind == LM_CELL_NUMBER && lm_report_delta_pct(bcell->num, ocell->num, o ? o->decimal : 2, &pct))
              cJSON_AddItemToArray(dp, cJSON_CreateNumber(pct));
            else
              cJSON_AddItemToArray(dp, cJSON_CreateNull());
          }
          cJSON_AddItemToArray(cmp, jc);
        }
      }
      cJSON_AddItemToArray(rows, jr);
    }
    cJSON_AddItemToArray(tables, jt);
  }
  if (a->spread) cJSON_AddItemToObject(root, "spread", (cJSON *)lm_report_spread_json(a->spread));
  if (a->ranks) cJSON_AddItemToObject(root, "ranks", (cJSON *)lm_report_ranks_json(a->ranks));
  if (a->workload && a->workload->set_rank)
    cJSON_AddItemToObject(root, "split", (cJSON *)lm_report_split_json(a->workload));
  if (o && o->summary) cJSON_AddItemToObject(root, "summary", (cJSON *)lm_report_summary_json(o->summary));
  if (o && o->summaries) {
    cJSON *all = cJSON_AddArrayToObject(root, "summaries");
    for (size_t k = 0; k < o->n_summaries; k++)
      cJSON_AddItemToArray(all, (cJSON *)lm_report_summary_json(o->summaries[k]));
  }
  char *text = cJSON_PrintUnformatted(root);
  cJSON_Delete(root);
  if (!text) return LM_ENOMEM;
  /* Names are copied from the data byte for byte; JSON must be UTF-8. */
  char *fixed = lm_json_utf8_fix(text);
  lm_buf_puts(out, fixed ? fixed : text);
  lm_free(fixed);
  lm_buf_putc(out, '\n');
  cJSON_free(text);
  return out->failed ? LM_ENOMEM : LM_OK;
}

/* ------------------------------------------------------- list metrics */

void lm_report_list_metrics(const lm_catalog *cat, int verbose, lm_buf *out) {
  for (int32_t p = 0; p < cat->n_panels; p++) {
    const lm_paneldef *pd = &cat->panels[p];
    lm_buf_printf(out, "%d -> %s\n", (int)pd->id, pd->title);
    for (int32_t t = pd->first_table; t < pd->first_table + pd->n_tables; t++) {
      const lm_tabledef *td = &cat->tables[t];
      if (td->kind != LM_TABLE_METRIC) continue;
      lm_buf_printf(out, "\t%s -> %s\n", td->id, td->title);
      for (int32_t r = 0; r < td->n_rows; r++) {
        const lm_rowdef *rd = &cat->rows[td->first_row + r];
        if (td->channels >= 0)
          lm_buf_printf(out, "\t\t%s.<channel> -> %s (one row per L2 channel)\n", td->id,
                        strcmp(rd->name, "{ch}") == 0 ? "channel" : rd->name);
        else
          lm_buf_printf(out, "\t\t%s.%d -> %s\n", td->id, (int)r, rd->name);
        if (verbose && rd->desc[0]) lm_buf_printf(out, "\t\t\t%s\n", rd->desc);
      }
    }
  }
}
