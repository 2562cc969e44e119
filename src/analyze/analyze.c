/*
 * analyze.c - dispatch selection and assembly of the result tables.
 *
 * Selection follows the reference tool where scripts depend on it: the
 * top-kernels and dispatch-list tables cover the dispatches left after the
 * GPU and dispatch filters, not the kernel filter; --kernel-index N picks
 * row N of that table; metrics then cover the dispatches of the chosen
 * kernels. Dispatch filters (-d) match the Dispatch_ID column everywhere
 * (the reference tool uses row positions for metrics; see
 * docs/compatibility.md). Metric tables are evaluated in one bulk pass over
 * the selected rows for all shown tables together.
 */
#define PCRE2_CODE_UNIT_WIDTH 8
#include <ctype.h>
#include <math.h>
#include <pcre2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyze/analyze.h"

/* ---------------------------------------------------------- helpers */

char *lm_unit_text(const char *unit, const char *norm_word, int capitalize, char *out,
                   size_t cap) {
  size_t at = 0;
  const char *p = unit;
  while (*p && at + 1 < cap) {
    if (strncmp(p, "$normUnit", 9) == 0) {
      for (const char *w = norm_word; *w && at + 1 < cap; w++) out[at++] = *w;
      p += 9;
    } else {
      out[at++] = *p++;
    }
  }
  out[at] = '\0';
  if (capitalize) {
    for (size_t i = 0; i < at; i++) {
      unsigned char c = (unsigned char)out[i];
      out[i] = (char)(i == 0 ? toupper(c) : tolower(c));
    }
  }
  return out;
}

void lm_analysis_free(lm_analysis *a) {
  if (a) lm_arena_free(a->arena);
}

const lm_rtable *lm_analysis_find(const lm_analysis *a, const char *id) {
  for (int32_t i = 0; i < a->n_tables; i++)
    if (strcmp(a->tables[i].id, id) == 0) return &a->tables[i];
  return NULL;
}

typedef struct ctx {
  const lm_workload *w;
  const lm_catalog *cat;
  const lm_analyze_opts *o;
  lm_analysis *an;
  lm_arena *arena;
  lm_diag *diag;
  lm_status status;
  const lm_table *pmc;
  const lm_sysinfo *info; /* table 1.1: the selected rank's (merged MPI parts), or NULL */
  long col_kernel, col_dispatch, col_gpu, col_start, col_end, col_grbm;
} ctx;

static void *alloc(ctx *c, size_t bytes) {
  void *p = lm_arena_alloc(c->arena, bytes ? bytes : 1);
  if (!p && c->status == LM_OK)
    c->status = lm_diag_set(c->diag, LM_ENOMEM, NULL, 0, 0, NULL, "out of memory");
  return p;
}

const char *const lm_analyze_columns[] = {
    "Dispatch_ID", "GPU_ID", "Kernel_Name", "Start_Timestamp", "End_Timestamp", "GRBM_GUI_ACTIVE",
    "Measured_SCLK_MHz", "Measured_MCLK_MHz",
    /* the summary's kernel facts */
    "Grid_Size", "Workgroup_Size", "LDS_Per_Workgroup", "Scratch_Per_Workitem", "Arch_VGPR",
    "Accum_VGPR", "SGPR", "wave_size",
    /* the roofline's points */
    "SQ_INSTS_VALU_ADD_F16", "SQ_INSTS_VALU_MUL_F16", "SQ_INSTS_VALU_TRANS_F16",
    "SQ_INSTS_VALU_FMA_F16", "SQ_INSTS_VALU_ADD_F32", "SQ_INSTS_VALU_MUL_F32",
    "SQ_INSTS_VALU_TRANS_F32", "SQ_INSTS_VALU_FMA_F32", "SQ_INSTS_VALU_ADD_F64",
    "SQ_INSTS_VALU_MUL_F64", "SQ_INSTS_VALU_TRANS_F64", "SQ_INSTS_VALU_FMA_F64",
    "SQ_INSTS_VALU_MFMA_MOPS_F16", "SQ_INSTS_VALU_MFMA_MOPS_BF16", "SQ_INSTS_VALU_MFMA_MOPS_F32",
    "SQ_INSTS_VALU_MFMA_MOPS_F64", "TCP_TOTAL_CACHE_ACCESSES_sum", "TCP_TCC_READ_REQ_sum",
    "TCP_TCC_WRITE_REQ_sum", "TCP_TCC_ATOMIC_WITH_RET_REQ_sum", "TCP_TCC_ATOMIC_WITHOUT_RET_REQ_sum",
    "TCC_EA_RDREQ_sum", "TCC_EA_RDREQ_32B_sum", "TCC_EA_WRREQ_sum", "TCC_EA_WRREQ_64B_sum",
    "TCC_EA0_RDREQ_sum", "TCC_EA0_RDREQ_32B_sum", "TCC_EA0_WRREQ_sum", "TCC_EA0_WRREQ_64B_sum",
    "TCC_BUBBLE_sum", "SQ_LDS_IDX_ACTIVE", "SQ_LDS_BANK_CONFLICT", NULL};

static double cell_value(const lm_table *t, long col, size_t row) {
  const double *v = col < 0 ? NULL : lm_table_values(t, (size_t)col, NULL);
  return v ? v[row] : LM_NAN;
}

static int32_t kernel_id(const ctx *c, size_t row) {
  return c->pmc->cols[c->col_kernel].text_ids ? c->pmc->cols[c->col_kernel].text_ids[row] : -1;
}

static const char *kernel_name(const ctx *c, size_t row) {
  const char *name = lm_table_text(c->pmc, (size_t)c->col_kernel, row);
  return name ? name : "";
}

static double dispatch_id(const ctx *c, size_t row) {
  return c->col_dispatch >= 0 ? cell_value(c->pmc, c->col_dispatch, row) : (double)row;
}

/* --------------------------------------------------------- top stats */

typedef struct group {
  int32_t name_id;
  size_t count;
  double sum;
  double *durations;
  size_t n_dur;
  double median;
} group;

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* By total duration, then name (the strings of the pmc table, ctx). */
static int cmp_group(const void *a, const void *b, void *table) {
  const lm_table *pmc = table;
  const group *x = a, *y = b;
  if (x->sum != y->sum) {
    if (isnan(x->sum)) return 1;
    if (isnan(y->sum)) return -1;
    return x->sum < y->sum ? 1 : -1;
  }
  return strcmp(pmc->strings[x->name_id], pmc->strings[y->name_id]);
}

static void set_cell(lm_rtable *t, int32_t row, int32_t col, lm_cell cell) {
  t->cells[(size_t)row * (size_t)t->n_cols + (size_t)col] = cell;
}

static lm_cell num_cell(double v, int integer) {
  lm_cell cell = {LM_CELL_NUMBER, (uint8_t)integer, v, NULL};
  if (isnan(v)) cell.kind = LM_CELL_EMPTY;
  return cell;
}

static lm_cell text_cell(const char *s) {
  lm_cell cell = {LM_CELL_TEXT, 0, LM_NAN, s};
  return cell;
}

static const char *fmt_index(ctx *c, long i) {
  /* (lm_format_fixed: "%ld" without printf, one per dispatch) */
  char buf[48];
  int n = lm_format_fixed(buf, sizeof buf, (double)i, 0);
  return lm_arena_strndup(c->arena, buf, n > 0 ? (size_t)n : 0);
}

/* Build 0.1 (top kernels) over `rows`; marks rows whose kernels are chosen
 * by --kernel-index in chosen_names (by string id). */
static lm_status build_top(ctx *c, lm_rtable *t, const size_t *rows, size_t n,
                           uint8_t *chosen_names) {
  const lm_table *pmc = c->pmc;
  size_t n_names = pmc->n_strings;
  group *groups = lm_calloc(n_names ? n_names : 1, sizeof *groups);
  lm_status status = LM_OK;
  if (!groups) return lm_diag_set(c->diag, LM_ENOMEM, NULL, 0, 0, NULL, "out of memory");
  for (size_t i = 0; i < n; i++) {
    int32_t k = kernel_id(c, rows[i]);
    if (k < 0) continue;
    groups[k].count++;
  }
  for (size_t k = 0; k < n_names; k++) {
    groups[k].name_id = (int32_t)k;
    if (groups[k].count) {
      groups[k].durations = lm_malloc(groups[k].count * sizeof(double));
      if (!groups[k].durations) {
        status = LM_ENOMEM;
        goto done;
      }
    }
  }
  for (size_t i = 0; i < n; i++) {
    int32_t k = kernel_id(c, rows[i]);
    if (k < 0) continue;
    double d = cell_value(pmc, c->col_end, rows[i]) - cell_value(pmc, c->col_start, rows[i]);
    groups[k].durations[groups[k].n_dur++] = d;
  }
  size_t n_groups = 0;
  double total = 0;
  for (size_t k = 0; k < n_names; k++) {
    group *g = &groups[k];
    if (!g->count) continue;
    double sum = 0;
    size_t valid = 0;
    for (size_t i = 0; i < g->n_dur; i++)
      if (!isnan(g->durations[i])) {
        sum += g->durations[i];
        g->durations[valid++] = g->durations[i];
      }
    g->sum = sum;
    qsort(g->durations, valid, sizeof(double), cmp_double);
    g->median = lm_quantile_sorted(g->durations, valid, 0.5);
    g->n_dur = valid;
    groups[n_groups++] = *g;
    if (&groups[n_groups - 1] != g) g->durations = NULL;
    total += sum;
  }
  lm_sort(groups, n_groups, sizeof *groups, cmp_group, (void *)pmc);

  int with_s = c->o->n_kernel_index > 0;
  double div = lm_time_unit_ns(c->o->time_unit);
  const char *tu = lm_time_unit_name(c->o->time_unit);
  if (!tu) tu = "ns";
  t->n_cols = with_s ? 8 : 7;
  t->titles = alloc(c, (size_t)t->n_cols * sizeof(char *));
  t->roles = alloc(c, (size_t)t->n_cols);
  t->n_rows = (int32_t)n_groups;
  t->cells = alloc(c, (size_t)t->n_rows * (size_t)t->n_cols * sizeof(lm_cell));
  t->row_ids = alloc(c, (size_t)t->n_rows * sizeof(char *));
  if (c->status != LM_OK) {
    status = c->status;
    goto done;
  }
  char title[32];
  t->titles[0] = "";
  t->titles[1] = "Kernel_Name";
  t->titles[2] = "Count";
  snprintf(title, sizeof title, "Sum(%s)", tu);
  t->titles[3] = lm_arena_strdup(c->arena, title);
  snprintf(title, sizeof title, "Mean(%s)", tu);
  t->titles[4] = lm_arena_strdup(c->arena, title);
  snprintf(title, sizeof title, "Median(%s)", tu);
  t->titles[5] = lm_arena_strdup(c->arena, title);
  t->titles[6] = "Pct";
  if (with_s) t->titles[7] = "S";
  uint8_t roles[8] = {LM_RCOL_INDEX, LM_RCOL_NAME, LM_RCOL_VALUE, LM_RCOL_VALUE,
                      LM_RCOL_VALUE, LM_RCOL_VALUE, LM_RCOL_VALUE, LM_RCOL_TEXT};
  memcpy(t->roles, roles, (size_t)t->n_cols);
  for (size_t i = 0; i < n_groups; i++) {
    const group *g = &groups[i];
    int32_t r = (int32_t)i;
    t->row_ids[r] = fmt_index(c, (long)i);
    set_cell(t, r, 0, num_cell((double)i, 1));
    set_cell(t, r, 1, text_cell(pmc->strings[g->name_id]));
    set_cell(t, r, 2, num_cell((double)g->count, 1));
    set_cell(t, r, 3, num_cell(g->sum / div, 0));
    set_cell(t, r, 4, num_cell(g->n_dur ? g->sum / (double)g->n_dur / div : LM_NAN, 0));
    set_cell(t, r, 5, num_cell(g->median / div, 0));
    set_cell(t, r, 6, num_cell(g->sum / total * 100, 0));
    if (with_s) set_cell(t, r, 7, text_cell(""));
  }
  for (size_t k = 0; k < c->o->n_kernel_index; k++) {
    long idx = c->o->kernel_index[k];
    if (idx < 0 || (size_t)idx >= n_groups) {
      status = lm_diag_set(c->diag, LM_EINVAL, NULL, 0, 0, NULL,
                           "--kernel-index %ld: the top-kernels table has %zu row%s%s", idx,
                           n_groups, n_groups == 1 ? "" : "s",
                           n_groups ? " (counted from 0)" : "");
      goto done;
    }
    chosen_names[groups[idx].name_id] = 1;
    set_cell(t, (int32_t)idx, 7, text_cell("*"));
  }
done:
  for (size_t k = 0; k < n_names; k++) lm_free(groups[k].durations);
  lm_free(groups);
  if (status == LM_ENOMEM)
    status = lm_diag_set(c->diag, LM_ENOMEM, NULL, 0, 0, NULL, "out of memory");
  return status;
}

static void build_dispatches(ctx *c, lm_rtable *t, const size_t *rows, size_t n) {
  t->n_cols = 4;
  t->titles = alloc(c, 4 * sizeof(char *));
  t->roles = alloc(c, 4);
  t->n_rows = (int32_t)n;
  t->cells = alloc(c, n * 4 * sizeof(lm_cell));
  t->row_ids = alloc(c, n * sizeof(char *));
  if (c->status != LM_OK) return;
  const char *titles[4] = {"", "Dispatch_ID", "Kernel_Name", "GPU_ID"};
  uint8_t roles[4] = {LM_RCOL_INDEX, LM_RCOL_VALUE, LM_RCOL_NAME, LM_RCOL_VALUE};
  memcpy(t->titles, titles, sizeof titles);
  memcpy(t->roles, roles, sizeof roles);
  for (size_t i = 0; i < n; i++) {
    int32_t r = (int32_t)i;
    t->row_ids[r] = fmt_index(c, (long)i);
    set_cell(t, r, 0, num_cell((double)i, 1));
    set_cell(t, r, 1, num_cell(dispatch_id(c, rows[i]), 1));
    set_cell(t, r, 2, text_cell(kernel_name(c, rows[i])));
    set_cell(t, r, 3, num_cell(cell_value(c->pmc, c->col_gpu, rows[i]), 1));
  }
}

static void build_sysinfo(ctx *c, lm_rtable *t) {
  const lm_sysinfo *info = c->info ? c->info : &c->w->sysinfo;
  t->n_cols = 2;
  t->titles = alloc(c, 2 * sizeof(char *));
  t->roles = alloc(c, 2);
  t->n_rows = (int32_t)info->n_fields;
  t->cells = alloc(c, info->n_fields * 2 * sizeof(lm_cell));
  t->row_ids = alloc(c, info->n_fields * sizeof(char *));
  if (c->status != LM_OK) return;
  t->titles[0] = "";
  t->titles[1] = "Info";
  t->roles[0] = LM_RCOL_INDEX;
  t->roles[1] = LM_RCOL_TEXT;
  for (size_t i = 0; i < info->n_fields; i++) {
    t->row_ids[i] = info->names[i];
    set_cell(t, (int32_t)i, 0, text_cell(info->names[i]));
    set_cell(t, (int32_t)i, 1, text_cell(info->texts[i]));
  }
}

static void build_raw_csv(ctx *c, lm_rtable *t, const lm_table *src) {
  t->n_cols = (int32_t)src->n_cols + 1;
  t->titles = alloc(c, (size_t)t->n_cols * sizeof(char *));
  t->roles = alloc(c, (size_t)t->n_cols);
  t->n_rows = (int32_t)src->n_rows;
  t->cells = alloc(c, src->n_rows * (size_t)t->n_cols * sizeof(lm_cell));
  t->row_ids = alloc(c, src->n_rows * sizeof(char *));
  if (c->status != LM_OK) return;
  t->titles[0] = "";
  t->roles[0] = LM_RCOL_INDEX;
  for (size_t k = 0; k < src->n_cols; k++) {
    t->titles[k + 1] = src->cols[k].name;
    t->roles[k + 1] = LM_RCOL_VALUE;
  }
  for (size_t r = 0; r < src->n_rows; r++) {
    t->row_ids[r] = fmt_index(c, (long)r);
    set_cell(t, (int32_t)r, 0, num_cell((double)r, 1));
    for (size_t k = 0; k < src->n_cols; k++) {
      const char *text = lm_table_text(src, k, r);
      set_cell(t, (int32_t)r, (int32_t)k + 1,
               text ? text_cell(text) : num_cell(cell_value(src, (long)k, r), src->cols[k].all_int));
    }
  }
}

/* Without roofline.csv the reference tool leaves the table's source name
 * in place of the numbers; CSV output keeps that shape, text says why. */
static void build_placeholder(ctx *c, lm_rtable *t) {
  t->n_cols = 2;
  t->n_rows = 1;
  t->titles = alloc(c, 2 * sizeof(char *));
  t->roles = alloc(c, 2);
  t->cells = alloc(c, 2 * sizeof(lm_cell));
  t->row_ids = alloc(c, sizeof(char *));
  if (c->status != LM_OK) return;
  t->titles[0] = "";
  t->titles[1] = "from_csv";
  t->roles[0] = LM_RCOL_INDEX;
  t->roles[1] = LM_RCOL_TEXT;
  t->row_ids[0] = "0";
  set_cell(t, 0, 0, num_cell(0, 1));
  set_cell(t, 0, 1, text_cell("roofline.csv"));
  t->note = "no roofline.csv in this workload: the roofline benchmark did not run "
            "(profiled with --no-roof, or on a GPU without roofline support)";
}

/* ------------------------------------------------------- metric tables */

static const char *expand_ch(ctx *c, const char *text, int32_t ch) {
  const char *at = strstr(text, "{ch}");
  if (!at) return text;
  lm_buf b = {0};
  const char *p = text;
  while ((at = strstr(p, "{ch}")) != NULL) {
    lm_buf_append(&b, p, (size_t)(at - p));
    lm_buf_printf(&b, "%d", (int)ch);
    p = at + 4;
  }
  lm_buf_puts(&b, p);
  const char *out = b.failed ? NULL : lm_arena_strdup(c->arena, lm_buf_cstr(&b));
  lm_buf_fini(&b);
  if (!out && c->status == LM_OK)
    c->status = lm_diag_set(c->diag, LM_ENOMEM, NULL, 0, 0, NULL, "out of memory");
  return out ? out : "";
}

static const char *concat_text(ctx *c, const lm_eval *ev, const lm_node *n, int32_t ch) {
  char a[40] = "", b[40] = "", buf[96];
  double v;
  strcpy(a, "None");
  strcpy(b, "None");
  if (lm_eval_node(ev, n->a, ch, &v)) lm_format_double(v, a);
  if (lm_eval_node(ev, n->b, ch, &v)) lm_format_double(v, b);
  snprintf(buf, sizeof buf, "%s%s", a, b);
  return lm_arena_strdup(c->arena, buf);
}

static void build_metric_table(ctx *c, lm_rtable *t, const lm_tabledef *td, const lm_eval *ev,
                               const lm_selection *sel, const char *norm_word) {
  const lm_catalog *cat = c->cat;
  int32_t n_ch = td->channels >= 0 ? lm_eval_channels(ev, (int32_t)(td - cat->tables)) : 1;
  int templated = td->channels >= 0;
  int32_t total = templated ? td->n_rows * n_ch : td->n_rows;
  t->n_cols = td->n_cols;
  t->titles = alloc(c, (size_t)t->n_cols * sizeof(char *));
  t->roles = alloc(c, (size_t)t->n_cols);
  t->cells = alloc(c, (size_t)(total ? total : 1) * (size_t)t->n_cols * sizeof(lm_cell));
  t->row_ids = alloc(c, (size_t)(total ? total : 1) * sizeof(char *));
  t->row_sources = alloc(c, (size_t)(total ? total : 1) * sizeof(char *));
  t->row_descs = alloc(c, (size_t)(total ? total : 1) * sizeof(char *));
  t->row_formulas = alloc(c, (size_t)(total ? total : 1) * sizeof(char *));
  t->row_defs = alloc(c, (size_t)(total ? total : 1) * sizeof(int32_t));
  if (c->status != LM_OK) return;
  for (int32_t ci = 0; ci < td->n_cols; ci++) {
    const lm_coldef *cd = &cat->cols[td->first_col + ci];
    t->titles[ci] = cd->title;
    t->roles[ci] = cd->role == LM_COL_NAME ? LM_RCOL_NAME
                   : cd->role == LM_COL_VALUE ? LM_RCOL_VALUE
                   : cd->role == LM_COL_UNIT ? LM_RCOL_UNIT
                   : cd->role == LM_COL_TIPS ? LM_RCOL_TIPS : LM_RCOL_TEXT;
  }
  int32_t out_row = 0;
  for (int32_t ri = 0; ri < td->n_rows; ri++) {
    const lm_rowdef *rd = &cat->rows[td->first_row + ri];
    for (int32_t ch = 0; ch < (templated ? n_ch : 1); ch++) {
      int32_t index = templated ? ri * n_ch + ch : ri;
      if (!lm_selection_row(cat, sel, (int32_t)(td - cat->tables), td->first_row + ri, index))
        continue;
      char id[64];
      snprintf(id, sizeof id, "%s.%d", td->id, (int)index);
      t->row_ids[out_row] = lm_arena_strdup(c->arena, id);
      t->row_sources[out_row] = rd->source;
      t->row_descs[out_row] = rd->desc;
      t->row_formulas[out_row] = "";
      t->row_defs[out_row] = td->first_row + ri;
      for (int32_t ci = 0; ci < td->n_cols; ci++) {
        const lm_coldef *cd = &cat->cols[td->first_col + ci];
        const lm_celldef *cell = &cat->cells[rd->first_cell + ci];
        lm_cell out = {LM_CELL_EMPTY, 0, LM_NAN, NULL};
        switch ((lm_col_role)cd->role) {
        case LM_COL_NAME: out = text_cell(expand_ch(c, rd->name, ch)); break;
        case LM_COL_TIPS: out = text_cell(""); break;
        case LM_COL_TEXT: out = text_cell(expand_ch(c, cell->text ? cell->text : "", ch)); break;
        case LM_COL_UNIT: {
          char unit[256];
          lm_unit_text(cell->text ? cell->text : "", norm_word, !c->o->corrected, unit, sizeof unit);
          out = text_cell(lm_arena_strdup(c->arena, unit));
          break;
        }
        case LM_COL_VALUE: {
          double v;
          if (cell->node >= 0 && cat->nodes[cell->node].op == LM_OP_CONCAT)
            out = text_cell(concat_text(c, ev, &cat->nodes[cell->node], ch));
          else if (c->o->corrected && cell->corrected >= 0) {
            if (lm_eval_node(ev, cell->corrected, ch, &v)) out = num_cell(v, 0);
          } else if (cell->node >= 0 && lm_eval_node(ev, cell->node, ch, &v))
            out = num_cell(v, 0);
          if (cell->formula && !t->row_formulas[out_row][0])
            t->row_formulas[out_row] = cell->formula;
          break;
        }
        }
        set_cell(t, out_row, ci, out);
      }
      out_row++;
    }
  }
  t->n_rows = out_row;
}

/* ------------------------------------------------------------- run */

static lm_status select_rows(ctx *c, size_t **top_rows, size_t *n_top, size_t **metric_rows,
                             size_t *n_metric, uint8_t **chosen) {
  const lm_table *pmc = c->pmc;
  size_t n = pmc->n_rows;
  size_t *top = lm_malloc((n ? n : 1) * sizeof *top);
  size_t *met = lm_malloc((n ? n : 1) * sizeof *met);
  uint8_t *kernel_ok = lm_malloc(pmc->n_strings ? pmc->n_strings : 1);
  *chosen = lm_calloc(pmc->n_strings ? pmc->n_strings : 1, 1);
  int32_t *instance = lm_malloc((n ? n : 1) * sizeof *instance);
  size_t *seen_count = lm_calloc(pmc->n_strings ? pmc->n_strings : 1, sizeof *seen_count);
  lm_status status = LM_OK;
  if (!top || !met || !kernel_ok || !*chosen || !instance || !seen_count) goto nomem;

  if (n == 0) {
    status = lm_diag_set(c->diag, LM_EDATA, c->w->path, 0, 0, NULL, "the workload holds no dispatch");
    goto fail;
  }
  /* Regions: a bit mask over the workload's region names. */
  uint64_t region_mask = 0;
  if (c->o->n_regions) {
    if (!c->w->n_regions || !c->w->row_regions) {
      status = lm_diag_set(c->diag, LM_EINVAL, c->w->path, 0, 0, NULL,
                           "-r: this workload carries no region markers (only lumen profiles "
                           "of programs with region markers have them)");
      goto fail;
    }
    for (size_t i = 0; i < c->o->n_regions; i++) {
      size_t k = 0;
      while (k < c->w->n_regions && strcmp(c->w->region_names[k], c->o->regions[i]) != 0) k++;
      if (k == c->w->n_regions || k >= 64) {
        lm_buf names = {0};
        for (size_t q = 0; q < c->w->n_regions; q++)
          lm_buf_printf(&names, "%s%s", q ? ", " : "", c->w->region_names[q]);
        status = lm_diag_set(c->diag, LM_EINVAL, c->w->path, 0, 0, NULL,
                             "-r %s: no such region in this workload (regions: %s)",
                             c->o->regions[i], lm_buf_cstr(&names));
        lm_buf_fini(&names);
        goto fail;
      }
      region_mask |= 1ULL << k;
    }
  }

  /* --rank: the MPI ranks of a workload that records them. */
  const lm_idset *ranks = c->o->rank && c->o->rank->n ? c->o->rank : NULL;
  if (ranks && !c->w->row_rank) {
    status = lm_diag_set(c->diag, LM_EINVAL, c->w->path, 0, 0, NULL,
                         c->w->set_rank ? "--rank: the ranks of this --split ranks profile collected shares of the "
                                          "counter sets of the same dispatches, combined into one view (one rank's "
                                          "share alone: -w DIR/rank.R)"
                                        : "--rank: this workload records no MPI ranks (profiles of MPI programs do)");
    goto fail;
  }
  if (ranks) {
    size_t hit = 0;
    for (size_t r = 0; r < n && !hit; r++) hit = c->w->row_rank[r] >= 0 && lm_idset_has(ranks, c->w->row_rank[r]);
    if (!hit) {
      lm_buf list = {0};
      lm_analyze_rank_list(c->w, &list);
      status = lm_diag_set(c->diag, LM_EINVAL, NULL, 0, 0, NULL,
                           "--rank: no dispatch of the rank(s) asked for (ranks in the data: %s)", lm_buf_cstr(&list));
      lm_buf_fini(&list);
      goto fail;
    }
  }

  /* GPU, dispatch and region filters: the rows of the top-stats tables. */
  size_t nt = 0, on_gpu = 0;
  for (size_t r = 0; r < n; r++) {
    if (region_mask && !(c->w->row_regions[r] & region_mask)) continue;
    if (ranks && (c->w->row_rank[r] < 0 || !lm_idset_has(ranks, c->w->row_rank[r]))) continue;
    if (c->o->gpu && c->o->gpu->n) {
      double g = cell_value(pmc, c->col_gpu, r);
      if (isnan(g) || !lm_idset_has(c->o->gpu, (int64_t)g)) continue;
    }
    on_gpu++;
    if (c->o->dispatch && c->o->dispatch->n) {
      double d = dispatch_id(c, r);
      if (isnan(d) || !lm_idset_has(c->o->dispatch, (int64_t)d)) continue;
    }
    top[nt++] = r;
  }
  if (c->o->gpu && c->o->gpu->n && on_gpu == 0) {
    lm_buf gpus = {0};
    double last = LM_NAN;
    for (size_t r = 0; r < n; r++) {
      double g = cell_value(pmc, c->col_gpu, r);
      int dup = 0;
      for (size_t q = 0; q < r && !dup; q++) dup = cell_value(pmc, c->col_gpu, q) == g;
      if (!dup && !isnan(g)) lm_buf_printf(&gpus, "%s%.0f", isnan(last) ? "" : ", ", g), last = g;
    }
    status = lm_diag_set(c->diag, LM_EINVAL, NULL, 0, 0, NULL,
                         "-g: no dispatch ran on the GPU(s) asked for (GPU ids in the data: %s)",
                         lm_buf_cstr(&gpus));
    lm_buf_fini(&gpus);
    goto fail;
  }
  if (nt == 0) {
    /* Say which ids there are (on the selected GPUs): ranges of
     * consecutive ids, the first few of them. */
    lm_buf ids = {0};
    double lo = LM_NAN, hi = LM_NAN;
    size_t shown = 0, n_ids = 0;
    for (size_t r = 0; r <= n; r++) {
      double d = LM_NAN;
      if (r < n) {
        if (c->o->gpu && c->o->gpu->n) {
          double g = cell_value(pmc, c->col_gpu, r);
          if (isnan(g) || !lm_idset_has(c->o->gpu, (int64_t)g)) continue;
        }
        d = dispatch_id(c, r);
        if (isnan(d)) continue;
        n_ids++;
        if (!isnan(hi) && d == hi + 1) {
          hi = d;
          continue;
        }
      }
      if (!isnan(lo) && shown < 8) {
        if (lo == hi) lm_buf_printf(&ids, "%s%.0f", shown ? ", " : "", lo);
        else lm_buf_printf(&ids, "%s%.0f:%.0f", shown ? ", " : "", lo, hi + 1);
        shown++;
      } else if (!isnan(lo) && shown == 8) {
        lm_buf_puts(&ids, ", ...");
        shown++;
      }
      lo = hi = d;
    }
    status = lm_diag_set(c->diag, LM_EINVAL, NULL, 0, 0, NULL,
                         region_mask ? "-r/-d: no dispatch in the region(s) with the ids asked for%s"
                                     : "-d: no dispatch with the ids asked for%s (Dispatch_ID values%s: %s)",
                         c->o->gpu && c->o->gpu->n ? " on the selected GPU(s)" : "",
                         c->o->gpu && c->o->gpu->n ? " there" : "", n_ids ? lm_buf_cstr(&ids) : "none");
    lm_buf_fini(&ids);
    goto fail;
  }
  *top_rows = top;
  *n_top = nt;
  top = NULL;

  /* Kernel name filters, evaluated once per distinct name. */
  int any_include = 0;
  for (size_t s = 0; s < pmc->n_strings; s++) kernel_ok[s] = 1;
  pcre2_match_data *md = NULL;
  for (size_t k = 0; k < c->o->n_kernels; k++) {
    const char *pattern = c->o->kernels[k];
    int exclude = pattern[0] == '!';
    if (exclude) pattern++;
    else any_include = 1;
    int err;
    PCRE2_SIZE erroff;
    pcre2_code *re = pcre2_compile((PCRE2_SPTR)pattern, PCRE2_ZERO_TERMINATED, PCRE2_UTF,
                                   &err, &erroff, NULL);
    if (!re) {
      PCRE2_UCHAR msg[256];
      pcre2_get_error_message(err, msg, sizeof msg);
      status = lm_diag_set(c->diag, LM_EINVAL, NULL, 0, (long)erroff + 1, NULL,
                           "-k '%s': %s at offset %zu", c->o->kernels[k], (char *)msg,
                           (size_t)erroff);
      goto fail;
    }
    md = pcre2_match_data_create_from_pattern(re, NULL);
    /* Bounded work per name: a pattern that backtracks without end (say
     * (a+)+$) stops at the limit, and that is an error, not a non-match
     * that would silently change the selection. */
    pcre2_match_context *mc = pcre2_match_context_create(NULL);
    if (mc) {
      pcre2_set_match_limit(mc, LM_REGEX_MATCH_LIMIT);
      pcre2_set_depth_limit(mc, LM_REGEX_DEPTH_LIMIT);
    }
    int failed = 0;
    for (size_t s = 0; s < pmc->n_strings && md && !failed; s++) {
      int rc = pcre2_match(re, (PCRE2_SPTR)pmc->strings[s], PCRE2_ZERO_TERMINATED, 0, 0, md, mc);
      if (rc < 0 && rc != PCRE2_ERROR_NOMATCH) {
        PCRE2_UCHAR msg[256];
        pcre2_get_error_message(rc, msg, sizeof msg);
        status = lm_diag_set(c->diag, LM_EINVAL, NULL, 0, 0, NULL,
                             "-k '%s': matching it against a kernel name failed (%s): simplify the pattern",
                             c->o->kernels[k], (char *)msg);
        failed = 1;
        break;
      }
      int hit = rc >= 0;
      if (exclude && hit) kernel_ok[s] = 0;
      if (!exclude) kernel_ok[s] = (uint8_t)(kernel_ok[s] | (hit ? 2 : 0));
    }
    pcre2_match_context_free(mc);
    pcre2_match_data_free(md);
    md = NULL;
    pcre2_code_free(re);
    if (failed) goto fail;
  }
  if (any_include)
    for (size_t s = 0; s < pmc->n_strings; s++) kernel_ok[s] = kernel_ok[s] == 3;
  /* Instance numbers: per kernel, in dispatch order over the whole run;
   * in a workload of MPI ranks, per rank and kernel (each rank's process
   * counts its own), as in each rank's part alone. */
  int32_t max_rank = -1;
  for (size_t r = 0; c->w->row_rank && r < n; r++)
    if (c->w->row_rank[r] > max_rank) max_rank = c->w->row_rank[r];
  size_t *per_rank = NULL;
  if (max_rank >= 0 && max_rank < 65536) {
    per_rank = lm_calloc(((size_t)max_rank + 1) * (pmc->n_strings ? pmc->n_strings : 1), sizeof *per_rank);
    if (!per_rank) goto nomem;
  }
  for (size_t r = 0; r < n; r++) {
    int32_t k = kernel_id(c, r);
    int32_t rank = per_rank ? c->w->row_rank[r] : -1;
    size_t *count = k < 0 ? NULL : rank >= 0 ? &per_rank[(size_t)rank * pmc->n_strings + (size_t)k] : &seen_count[k];
    instance[r] = count ? (int32_t)(*count)++ : -1;
  }
  lm_free(per_rank);
  /* --kernel-index picks rows of the top-kernels table: built by caller
   * into *chosen beforehand. Apply every filter. */
  size_t nm = 0;
  for (size_t i = 0; i < *n_top; i++) {
    size_t r = (*top_rows)[i];
    int32_t k = kernel_id(c, r);
    if (k >= 0 && !kernel_ok[k]) continue;
    if (c->o->instance && c->o->instance->n && !lm_idset_has(c->o->instance, instance[r]))
      continue;
    met[nm++] = r;
  }
  *metric_rows = met;
  *n_metric = nm;
  met = NULL;
  goto done;
nomem:
  status = lm_diag_set(c->diag, LM_ENOMEM, NULL, 0, 0, NULL, "out of memory");
fail:
  lm_free(*top_rows);
  *top_rows = NULL;
done:
  lm_free(top);
  lm_free(met);
  lm_free(kernel_ok);
  lm_free(instance);
  lm_free(seen_count);
  return status;
}

/* The pmc columns selection and the top tables read. */
static void find_columns(ctx *c, const lm_table *pmc) {
  c->pmc = pmc;
  c->col_kernel = lm_table_find(pmc, "Kernel_Name");
  c->col_dispatch = lm_table_find(pmc, "Dispatch_ID");
  c->col_gpu = lm_table_find(pmc, "GPU_ID");
  c->col_start = lm_table_find(pmc, "Start_Timestamp");
  c->col_end = lm_table_find(pmc, "End_Timestamp");
  c->col_grbm = lm_table_find(pmc, "GRBM_GUI_ACTIVE");
}

lm_status lm_analyze_rows(const lm_workload *w, const lm_analyze_opts *o, size_t **rows, size_t *n,
                          lm_diag *diag) {
  ctx c;
  memset(&c, 0, sizeof c);
  c.w = w;
  c.o = o;
  c.diag = diag;
  find_columns(&c, w->pmc);
  *rows = NULL;
  *n = 0;
  if (c.col_kernel < 0)
    return lm_diag_set(diag, LM_EDATA, c.pmc->path, 0, 0, "Kernel_Name", "no kernel names in the workload");
  size_t *top = NULL, n_top = 0;
  uint8_t *chosen = NULL;
  lm_status st = select_rows(&c, &top, &n_top, rows, n, &chosen);
  if (st == LM_OK && o->n_kernel_index) {
    /* --kernel-index: the rows of the top-kernels table asked for, the
     * table built as lm_analyze_run builds it (same order, same refusal
     * of an index past its end). */
    lm_rtable scratch;
    memset(&scratch, 0, sizeof scratch);
    c.arena = lm_arena_new(1 << 12);
    if (!c.arena) st = lm_diag_set(diag, LM_ENOMEM, NULL, 0, 0, NULL, "out of memory");
    if (st == LM_OK) st = build_top(&c, &scratch, top, n_top, chosen);
    size_t kept = 0;
    for (size_t i = 0; st == LM_OK && i < *n; i++) {
      int32_t k = kernel_id(&c, (*rows)[i]);
      if (k >= 0 && chosen[k]) (*rows)[kept++] = (*rows)[i];
    }
    if (st == LM_OK) *n = kept;
    lm_arena_free(c.arena);
    if (st != LM_OK) {
      lm_free(*rows);
      *rows = NULL;
      *n = 0;
    }
  }
  lm_free(top);
  lm_free(chosen);
  return st;
}

lm_status lm_analyze_run(const lm_workload *w, const lm_catalog *cat, const lm_analyze_opts *o,
                         lm_analysis **out, lm_diag *diag) {
  ctx c;
  memset(&c, 0, sizeof c);
  lm_eval *ev = NULL;
  size_t *top_rows = NULL, *metric_rows = NULL, n_top = 0, n_metric = 0;
  uint8_t *chosen = NULL, *eval_tables = NULL;
  lm_selection sel;
  memset(&sel, 0, sizeof sel);
  *out = NULL;
  c.w = w;
  c.cat = cat;
  c.o = o;
  c.diag = diag;
  find_columns(&c, w->pmc);
  c.arena = lm_arena_new(1 << 16);
  if (!c.arena) return lm_diag_set(diag, LM_ENOMEM, NULL, 0, 0, NULL, "out of memory");
  c.an = lm_arena_alloc(c.arena, sizeof *c.an);
  if (!c.an) goto nomem;
  c.an->arena = c.arena;
  c.an->workload = w;
  c.an->catalog = cat;

  /* Normalization. */
  int32_t norm = lm_analyze_norm_index(cat, o->norm);
  if (norm < 0) {
    lm_buf names = {0};
    lm_keyword_list(lm_norm_names, ", ", ", ", 0, &names);
    c.status = lm_diag_set(diag, LM_EINVAL, NULL, 0, 0, NULL, "--norm %s: not a normalization of %s (%s)",
                           lm_norm_kind_name(o->norm), cat->arch, lm_buf_cstr(&names));
    lm_buf_fini(&names);
    goto fail;
  }
  c.an->norm = cat->n_norms ? cat->norms[norm].name : "";
  const char *norm_word = cat->n_norms ? cat->norms[norm].unit : "";

  if (lm_catalog_select(cat, o->blocks, o->n_blocks, &sel, diag) != LM_OK) {
    c.status = diag ? diag->status : LM_EINVAL;
    goto fail;
  }
  if (select_rows(&c, &top_rows, &n_top, &metric_rows, &n_metric, &chosen) != LM_OK) {
    c.status = diag ? diag->status : LM_EINVAL;
    goto fail;
  }

  /* Result tables in catalog order. */
  c.an->n_tables = cat->n_tables;
  c.an->tables = alloc(&c, (size_t)cat->n_tables * sizeof *c.an->tables);
  eval_tables = lm_calloc((size_t)(cat->n_tables ? cat->n_tables : 1), 1);
  if (c.status != LM_OK || !eval_tables) goto nomem;
  lm_rtable *top_table = NULL;
  for (int32_t i = 0; i < cat->n_tables; i++) {
    const lm_tabledef *td = &cat->tables[i];
    lm_rtable *t = &c.an->tables[i];
    t->def = i;
    t->id = td->id;
    t->title = td->title;
    t->kind = td->kind;
    t->style = td->style;
    t->comparable = td->comparable;
    for (int32_t p = 0; p < cat->n_panels; p++)
      if (i >= cat->panels[p].first_table &&
          i < cat->panels[p].first_table + cat->panels[p].n_tables) {
        t->panel_id = cat->panels[p].id;
        t->panel_title = cat->panels[p].title;
      }
    if (td->kind == LM_TABLE_TOP_KERNELS || td->kind == LM_TABLE_DISPATCHES) {
      t->shown = 1;
    } else if (o->stats_only) {
      t->shown = 0;
    } else if (td->kind != LM_TABLE_METRIC) {
      t->shown = !sel.any || sel.tables[i];
    } else {
      t->shown = lm_selection_table(cat, &sel, i);
      eval_tables[i] = (uint8_t)t->shown;
    }
    if (td->kind == LM_TABLE_TOP_KERNELS && !top_table) top_table = t;
  }
  /* Top kernels first: --kernel-index needs its order. */
  if (top_table) {
    if ((c.status = build_top(&c, top_table, top_rows, n_top, chosen)) != LM_OK) goto fail;
  } else if (o->n_kernel_index) {
    c.status = lm_diag_set(diag, LM_EINVAL, NULL, 0, 0, NULL,
                           "--kernel-index needs a top-kernels table in the definitions");
    goto fail;
  }
  if (o->n_kernel_index) {
    size_t kept = 0;
    for (size_t i = 0; i < n_metric; i++) {
      int32_t k = kernel_id(&c, metric_rows[i]);
      if (k >= 0 && chosen[k]) metric_rows[kept++] = metric_rows[i];
    }
    n_metric = kept;
  }
  if (n_metric == 0) {
    c.status = lm_diag_set(diag, LM_EINVAL, NULL, 0, 0, NULL,
                           "no dispatch matches the filters (-k, --kernel-index, --instance)");
    goto fail;
  }
  c.an->n_selected = n_metric;
  /* The reference tool refuses dispatches whose GPU was never busy. */
  const char *ip_blocks = lm_sysinfo_text(&w->sysinfo, "ip_blocks");
  if (c.col_grbm >= 0 && !(ip_blocks && strcmp(ip_blocks, "roofline") == 0)) {
    for (size_t i = 0; i < n_metric; i++) {
      if (cell_value(c.pmc, c.col_grbm, metric_rows[i]) == 0) {
        c.status = lm_diag_set(
            diag, LM_EDATA, c.pmc->path, (long)metric_rows[i] + 2, c.col_grbm + 1,
            "GRBM_GUI_ACTIVE",
            "0 for dispatch %.0f: the GPU never counted as busy, so its counters cannot "
            "be trusted (leave it out with -d)", dispatch_id(&c, metric_rows[i]));
        goto fail;
      }
    }
  }
  /* One rank of the merged parts of an MPI profile: its own system
   * information (host, clocks), as its part alone would show. */
  lm_workload one_rank;
  const lm_workload *sw = w;
  if (w->n_parts > 1 && w->part_sysinfo && w->row_rank && n_top) {
    int32_t rank = w->row_rank[top_rows[0]];
    size_t i = 1;
    while (i < n_top && w->row_rank[top_rows[i]] == rank) i++;
    for (size_t p = 0; i == n_top && p < w->n_parts; p++)
      if (w->part_rank[p] == rank) {
        one_rank = *w;
        one_rank.sysinfo = w->part_sysinfo[p];
        if (p > 0) one_rank.roofline = w->part_roofline[p];
        sw = &one_rank;
        c.info = &w->part_sysinfo[p];
      }
  }
  /* --clock measured: the peaks ($max_sclk, $max_mclk) at the clocks the
   * selected dispatches ran at, weighted by their durations. */
  lm_workload measured;
  const lm_workload *ew = sw;
  if (o->clock_measured) {
    static const char *const cols[2] = {"Measured_SCLK_MHz", "Measured_MCLK_MHz"};
    static const char *const fields[2] = {"max_sclk", "max_mclk"};
    measured = *sw;
    measured.sysinfo.values = alloc(&c, (sw->sysinfo.n_fields + 1) * sizeof(double));
    if (c.status != LM_OK) goto nomem;
    memcpy(measured.sysinfo.values, sw->sysinfo.values, sw->sysinfo.n_fields * sizeof(double));
    for (int k = 0; k < 2; k++) {
      long col = lm_table_find(c.pmc, cols[k]);
      long field = lm_sysinfo_find(&sw->sysinfo, fields[k]);
      double sum = 0, weight = 0;
      for (size_t i = 0; col >= 0 && i < n_metric; i++) {
        double v = cell_value(c.pmc, col, metric_rows[i]);
        double d = cell_value(c.pmc, c.col_end, metric_rows[i]) - cell_value(c.pmc, c.col_start, metric_rows[i]);
        if (isnan(v) || !(d > 0)) continue;
        sum += v * d;
        weight += d;
      }
      if (k == 1 && !(weight > 0) && field >= 0 && w->row_clock_source) {
        /* Estimated clocks have no memory clock: the peak stays. */
        lm_log(LM_LOG_INFO, "--clock measured: no memory clock was sampled; max_mclk stays %.0f MHz",
               sw->sysinfo.values[field]);
        continue;
      }
      if (!(weight > 0) || field < 0) {
        c.status = lm_diag_set(diag, LM_EDATA, w->path, 0, 0, cols[k],
                               "--clock measured: no clock samples for the selected dispatches "
                               "(profile with lumen and telemetry, or use --clock max)");
        goto fail;
      }
      measured.sysinfo.values[field] = sum / weight;
      lm_log(LM_LOG_INFO, "--clock measured: %s = %.1f MHz over %zu dispatches", fields[k],
             sum / weight, n_metric);
    }
    lm_analyze_clock_sources(w, metric_rows, n_metric);
    ew = &measured;
  }
  /* --weight time: each dispatch's duration weighs its values. */
  double *weights = NULL;
  if (o->weight_time) {
    weights = alloc(&c, (n_metric ? n_metric : 1) * sizeof *weights);
    if (c.status != LM_OK) goto nomem;
    for (size_t i = 0; i < n_metric; i++) {
      double d = cell_value(c.pmc, c.col_end, metric_rows[i]) - cell_value(c.pmc, c.col_start, metric_rows[i]);
      weights[i] = d > 0 ? d : 0;
    }
  }
  lm_eval_request req = {ew,         metric_rows, n_metric, norm, eval_tables, o->threads,
                         o->corrected, weights, o->block_rows, o->stat_mem};
  uint64_t t0 = lm_phase_begin();
  if (lm_eval_run(cat, &req, &ev, diag) != LM_OK) {
    c.status = diag ? diag->status : LM_EDATA;
    goto fail;
  }
  lm_phase_end("evaluate", t0);
  for (int32_t i = 0; i < cat->n_tables && c.status == LM_OK; i++) {
    const lm_tabledef *td = &cat->tables[i];
    lm_rtable *t = &c.an->tables[i];
    switch ((lm_table_kind)td->kind) {
    case LM_TABLE_TOP_KERNELS:
      if (t != top_table) c.status = build_top(&c, t, top_rows, n_top, chosen);
      break;
    case LM_TABLE_DISPATCHES: build_dispatches(&c, t, top_rows, n_top); break;
    case LM_TABLE_SYSINFO:
      if (t->shown) build_sysinfo(&c, t);
      break;
    case LM_TABLE_ROOFLINE:
      if (t->shown && sw->roofline) build_raw_csv(&c, t, sw->roofline);
      else if (t->shown) build_placeholder(&c, t);
      break;
    case LM_TABLE_METRIC:
      if (t->shown) build_metric_table(&c, t, td, ev, &sel, norm_word);
      break;
    }
  }
  if (c.status != LM_OK) goto fail;
  if (lm_analyze_ranks(c.an, metric_rows, n_metric, diag) != LM_OK) {
    c.status = diag ? diag->status : LM_ENOMEM;
    goto fail;
  }
  if (lm_analyze_spread(c.an, metric_rows, n_metric, norm, diag) != LM_OK) {
    c.status = diag ? diag->status : LM_ENOMEM;
    goto fail;
  }
  *out = c.an;
  c.arena = NULL;
  goto done;
nomem:
  c.status = lm_diag_set(diag, LM_ENOMEM, NULL, 0, 0, NULL, "out of memory");
fail:
  if (c.status == LM_OK) c.status = LM_EINVAL;
done:
  lm_selection_fini(&sel);
  lm_eval_free(ev);
  lm_free(top_rows);
  lm_free(metric_rows);
  lm_free(chosen);
  lm_free(eval_tables);
  lm_arena_free(c.arena);
  return c.status;
}
