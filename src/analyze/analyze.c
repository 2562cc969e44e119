/*
 * analyze.c - assembly of the result tables.
 *
 * Selection (rows.c) follows the reference tool where scripts depend on
 * it: the top-kernels and dispatch-list tables cover the dispatches left
 * after the GPU and dispatch filters, not the kernel filter; --kernel-index
 * N picks row N of that table; metrics then cover the dispatches of the
 * chosen kernels. Dispatch filters (-d) match the Dispatch_ID column
 * everywhere (the reference tool uses row positions for metrics; see
 * docs/compatibility.md). Metric tables are evaluated in one bulk pass over
 * the selected rows for all shown tables together.
 */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyze/analyze_private.h"

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

static void *alloc(lm_analyze_ctx *c, size_t bytes) {
  void *p = lm_arena_alloc(c->arena, bytes ? bytes : 1);
  if (!p && c->status == LM_OK) c->status = lm_oom(c->diag, NULL);
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

static const char *kernel_name(const lm_analyze_ctx *c, size_t row) {
  const char *name = lm_table_text(c->pmc, (size_t)c->col_kernel, row);
  return name ? name : "";
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

/* By total duration, then name (table: the pmc table, whose strings the
 * names are; lm_sort passes it). */
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

/* i in decimal, in the arena (one per dispatch of a list: no printf). */
static const char *fmt_index(lm_analyze_ctx *c, long i) {
  char buf[24];
  size_t n = 0;
  unsigned long u = i < 0 ? 0UL - (unsigned long)i : (unsigned long)i;
  do {
    buf[sizeof buf - ++n] = (char)('0' + u % 10);
    u /= 10;
  } while (u);
  if (i < 0) buf[sizeof buf - ++n] = '-';
  return lm_arena_strndup(c->arena, buf + sizeof buf - n, n);
}

lm_status lm_analyze_top_shape(lm_analyze_ctx *c, lm_rtable *t, size_t n_rows) {
  int with_s = c->o->n_kernel_index > 0;
  const char *tu = lm_time_unit_name(c->o->time_unit);
  if (!tu) tu = "ns";
  t->n_cols = with_s ? 8 : 7;
  t->titles = alloc(c, (size_t)t->n_cols * sizeof(char *));
  t->roles = alloc(c, (size_t)t->n_cols);
  t->n_rows = (int32_t)n_rows;
  t->cells = alloc(c, (size_t)t->n_rows * (size_t)t->n_cols * sizeof(lm_cell));
  t->row_ids = alloc(c, (size_t)t->n_rows * sizeof(char *));
  if (c->status != LM_OK) return c->status;
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
  return LM_OK;
}

void lm_analyze_top_row(lm_analyze_ctx *c, lm_rtable *t, size_t i, const char *kernel, size_t count, double sum_ns,
                        double mean_ns, double median_ns, double pct) {
  double div = lm_time_unit_ns(c->o->time_unit);
  int32_t r = (int32_t)i;
  t->row_ids[r] = fmt_index(c, (long)i);
  set_cell(t, r, 0, num_cell((double)i, 1));
  set_cell(t, r, 1, text_cell(kernel));
  set_cell(t, r, 2, num_cell((double)count, 1));
  set_cell(t, r, 3, num_cell(sum_ns / div, 0));
  set_cell(t, r, 4, num_cell(mean_ns / div, 0));
  set_cell(t, r, 5, num_cell(median_ns / div, 0));
  set_cell(t, r, 6, num_cell(pct, 0));
  if (t->n_cols == 8) set_cell(t, r, 7, text_cell(""));
}

/* Table 0.1 over `rows` (analyze_private.h). */
lm_status lm_analyze_top(lm_analyze_ctx *c, lm_rtable *t, const size_t *rows, size_t n,
                         uint8_t *chosen_names) {
  const lm_table *pmc = c->pmc;
  size_t n_names = pmc->n_strings;
  group *groups = lm_calloc(n_names ? n_names : 1, sizeof *groups);
  lm_status status = LM_OK;
  if (!groups) return lm_oom(c->diag, NULL);
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
    g->median = lm_quantile_select(g->durations, valid, 0.5);
    g->n_dur = valid;
    groups[n_groups++] = *g;
    if (&groups[n_groups - 1] != g) g->durations = NULL;
    total += sum;
  }
  lm_sort(groups, n_groups, sizeof *groups, cmp_group, (void *)pmc);

  if ((status = lm_analyze_top_shape(c, t, n_groups)) != LM_OK) goto done;
  for (size_t i = 0; i < n_groups; i++) {
    const group *g = &groups[i];
    lm_analyze_top_row(c, t, i, pmc->strings[g->name_id], g->count, g->sum,
                       g->n_dur ? g->sum / (double)g->n_dur : LM_NAN, g->median, g->sum / total * 100);
  }
  for (size_t k = 0; k < c->o->n_kernel_index; k++) {
    long idx = c->o->kernel_index[k];
    if (idx < 0 || (size_t)idx >= n_groups) {
      status = lm_fail(c->diag, LM_EINVAL, NULL, "--kernel-index %ld: the top-kernels table has %zu row%s%s", idx,
                       n_groups, n_groups == 1 ? "" : "s", n_groups ? " (counted from 0)" : "");
      goto done;
    }
    chosen_names[groups[idx].name_id] = 1;
    set_cell(t, (int32_t)idx, 7, text_cell("*"));
  }
done:
  for (size_t k = 0; k < n_names; k++) lm_free(groups[k].durations);
  lm_free(groups);
  if (status == LM_ENOMEM) status = lm_oom(c->diag, NULL);
  return status;
}

static void build_dispatches(lm_analyze_ctx *c, lm_rtable *t, const size_t *rows, size_t n) {
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

static void build_sysinfo(lm_analyze_ctx *c, lm_rtable *t) {
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

static void build_raw_csv(lm_analyze_ctx *c, lm_rtable *t, const lm_table *src) {
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
static void build_placeholder(lm_analyze_ctx *c, lm_rtable *t) {
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

static const char *expand_ch(lm_analyze_ctx *c, const char *text, int32_t ch) {
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
  if (!out && c->status == LM_OK) c->status = lm_oom(c->diag, NULL);
  return out ? out : "";
}

static const char *concat_text(lm_analyze_ctx *c, const lm_eval *ev, const lm_node *n, int32_t ch) {
  char a[40] = "", b[40] = "", buf[96];
  double v;
  strcpy(a, "None");
  strcpy(b, "None");
  if (lm_eval_node(ev, n->a, ch, &v)) lm_format_double(v, a);
  if (lm_eval_node(ev, n->b, ch, &v)) lm_format_double(v, b);
  snprintf(buf, sizeof buf, "%s%s", a, b);
  return lm_arena_strdup(c->arena, buf);
}

static void build_metric_table(lm_analyze_ctx *c, lm_rtable *t, const lm_tabledef *td, const lm_eval *ev,
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

/* What lm_analyze_run holds while it works; freed at its end. */
typedef struct run {
  lm_analyze_ctx c;
  lm_selection sel;              /* the tables and rows -b shows */
  lm_eval *ev;
  size_t *top_rows, n_top;       /* the rows of the top-kernels and dispatch tables */
  size_t *metric_rows, n_metric; /* the rows whose metrics are evaluated */
  uint8_t *chosen;               /* per kernel-name string: picked by --kernel-index */
  uint8_t *eval_tables;          /* per table: its metrics are evaluated */
  int32_t norm;                  /* the normalization's index in the catalog */
  const char *norm_word;         /* its unit, for $normUnit */
  lm_rtable *top_table;          /* the first top-kernels table, or NULL */
  lm_workload one_rank;          /* what sw points to when one rank is selected */
  lm_workload measured;          /* what ew points to with --clock measured */
  const lm_workload *sw;         /* whose system information and roofline are shown */
  const lm_workload *ew;         /* what the metrics are evaluated over */
  double *weights;               /* --weight time: per metric row, or NULL */
} run;

/* --norm: its index in the catalog (the first without --norm). Errors: a
 * name the catalog does not have. */
static lm_status find_norm(run *r) {
  const lm_catalog *cat = r->c.cat;
  r->norm = lm_analyze_norm_index(cat, r->c.o->norm);
  if (r->norm < 0) {
    lm_buf names = {0};
    lm_keyword_list(lm_norm_names, ", ", ", ", 0, &names);
    lm_status st = lm_fail(r->c.diag, LM_EINVAL, NULL, "--norm %s: not a normalization of %s (%s)",
                           lm_norm_kind_name(r->c.o->norm), cat->arch, lm_buf_cstr(&names));
    lm_buf_fini(&names);
    return st;
  }
  r->c.an->norm = cat->n_norms ? cat->norms[r->norm].name : "";
  r->norm_word = cat->n_norms ? cat->norms[r->norm].unit : "";
  return LM_OK;
}

/* The result tables in catalog order, described (not built), each shown
 * or not; r->eval_tables: the metric tables to evaluate. Errors: out of
 * memory. */
static lm_status init_tables(run *r) {
  lm_analyze_ctx *c = &r->c;
  const lm_catalog *cat = c->cat;
  c->an->n_tables = cat->n_tables;
  c->an->tables = alloc(c, (size_t)cat->n_tables * sizeof *c->an->tables);
  r->eval_tables = lm_calloc((size_t)(cat->n_tables ? cat->n_tables : 1), 1);
  if (c->status != LM_OK || !r->eval_tables) return lm_oom(c->diag, NULL);
  for (int32_t i = 0; i < cat->n_tables; i++) {
    const lm_tabledef *td = &cat->tables[i];
    lm_rtable *t = &c->an->tables[i];
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
    } else if (c->o->stats_only) {
      t->shown = 0;
    } else if (td->kind != LM_TABLE_METRIC) {
      t->shown = !r->sel.any || r->sel.tables[i];
    } else {
      t->shown = lm_selection_table(cat, &r->sel, i);
      r->eval_tables[i] = (uint8_t)t->shown;
    }
    if (td->kind == LM_TABLE_TOP_KERNELS && !r->top_table) r->top_table = t;
  }
  return LM_OK;
}

/* The top-kernels table first (--kernel-index needs its order), then the
 * metric rows narrowed to the kernels --kernel-index picks. Errors: those
 * of lm_analyze_top, --kernel-index without a top-kernels table. */
static lm_status first_top(run *r) {
  lm_analyze_ctx *c = &r->c;
  if (r->top_table) {
    lm_status st = lm_analyze_top(c, r->top_table, r->top_rows, r->n_top, r->chosen);
    if (st != LM_OK) return st;
  } else if (c->o->n_kernel_index) {
    return lm_fail(c->diag, LM_EINVAL, NULL, "--kernel-index needs a top-kernels table in the definitions");
  }
  if (c->o->n_kernel_index) r->n_metric = lm_analyze_keep_chosen(c, r->metric_rows, r->n_metric, r->chosen);
  return LM_OK;
}

/* Errors: no metric row left, or one whose GPU was never busy (the
 * reference tool refuses those). */
static lm_status check_selection(run *r) {
  lm_analyze_ctx *c = &r->c;
  if (r->n_metric == 0)
    return lm_fail(c->diag, LM_EINVAL, NULL, "no dispatch matches the filters (-k, --kernel-index, --instance)");
  c->an->n_selected = r->n_metric;
  const char *ip_blocks = lm_sysinfo_text(&c->w->sysinfo, "ip_blocks");
  if (c->col_grbm >= 0 && !(ip_blocks && strcmp(ip_blocks, "roofline") == 0)) {
    for (size_t i = 0; i < r->n_metric; i++) {
      if (cell_value(c->pmc, c->col_grbm, r->metric_rows[i]) == 0)
        return lm_diag_set(
            c->diag, LM_EDATA, c->pmc->path, (long)r->metric_rows[i] + 2, c->col_grbm + 1,
            "GRBM_GUI_ACTIVE",
            "0 for dispatch %.0f: the GPU never counted as busy, so its counters cannot "
            "be trusted (leave it out with -d)", dispatch_id(c, r->metric_rows[i]));
    }
  }
  return LM_OK;
}

/* One rank of the merged parts of an MPI profile: its own system
 * information (host, clocks), as its part alone would show (r->sw). */
static void rank_view(run *r) {
  const lm_workload *w = r->c.w;
  r->sw = w;
  if (w->n_parts > 1 && w->part_sysinfo && w->row_rank && r->n_top) {
    int32_t rank = w->row_rank[r->top_rows[0]];
    size_t i = 1;
    while (i < r->n_top && w->row_rank[r->top_rows[i]] == rank) i++;
    for (size_t p = 0; i == r->n_top && p < w->n_parts; p++)
      if (w->part_rank[p] == rank) {
        r->one_rank = *w;
        r->one_rank.sysinfo = w->part_sysinfo[p];
        if (p > 0) r->one_rank.roofline = w->part_roofline[p];
        r->sw = &r->one_rank;
        r->c.info = &w->part_sysinfo[p];
      }
  }
}

/* --clock measured: the peaks ($max_sclk, $max_mclk) at the clocks the
 * selected dispatches ran at, weighted by their durations (r->ew).
 * Errors: no clock samples, out of memory. */
static lm_status measure_clocks(run *r) {
  lm_analyze_ctx *c = &r->c;
  const lm_workload *w = c->w, *sw = r->sw;
  r->ew = sw;
  if (!c->o->clock_measured) return LM_OK;
  static const char *const cols[2] = {"Measured_SCLK_MHz", "Measured_MCLK_MHz"};
  static const char *const fields[2] = {"max_sclk", "max_mclk"};
  r->measured = *sw;
  r->measured.sysinfo.values = alloc(c, (sw->sysinfo.n_fields + 1) * sizeof(double));
  if (c->status != LM_OK) return lm_oom(c->diag, NULL);
  memcpy(r->measured.sysinfo.values, sw->sysinfo.values, sw->sysinfo.n_fields * sizeof(double));
  for (int k = 0; k < 2; k++) {
    long col = lm_table_find(c->pmc, cols[k]);
    long field = lm_sysinfo_find(&sw->sysinfo, fields[k]);
    double sum = 0, weight = 0;
    for (size_t i = 0; col >= 0 && i < r->n_metric; i++) {
      double v = cell_value(c->pmc, col, r->metric_rows[i]);
      double d = cell_value(c->pmc, c->col_end, r->metric_rows[i]) - cell_value(c->pmc, c->col_start, r->metric_rows[i]);
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
    if (!(weight > 0) || field < 0)
      return lm_fail_at(c->diag, LM_EDATA, w->path, 0, cols[k],
                        "--clock measured: no clock samples for the selected dispatches "
                        "(profile with lumen and telemetry, or use --clock max)");
    r->measured.sysinfo.values[field] = sum / weight;
    lm_log(LM_LOG_INFO, "--clock measured: %s = %.1f MHz over %zu dispatches", fields[k],
           sum / weight, r->n_metric);
  }
  lm_analyze_clock_sources(w, r->metric_rows, r->n_metric);
  r->ew = &r->measured;
  return LM_OK;
}

/* --weight time: each dispatch's duration weighs its values (r->weights).
 * Errors: out of memory. */
static lm_status time_weights(run *r) {
  lm_analyze_ctx *c = &r->c;
  if (!c->o->weight_time) return LM_OK;
  r->weights = alloc(c, (r->n_metric ? r->n_metric : 1) * sizeof *r->weights);
  if (c->status != LM_OK) return lm_oom(c->diag, NULL);
  for (size_t i = 0; i < r->n_metric; i++) {
    double d = cell_value(c->pmc, c->col_end, r->metric_rows[i]) - cell_value(c->pmc, c->col_start, r->metric_rows[i]);
    r->weights[i] = d > 0 ? d : 0;
  }
  return LM_OK;
}

/* Every result table but the first top-kernels one (built already), from
 * the evaluated metrics; a failure is left in c.status. */
static void build_tables(run *r) {
  lm_analyze_ctx *c = &r->c;
  const lm_catalog *cat = c->cat;
  for (int32_t i = 0; i < cat->n_tables && c->status == LM_OK; i++) {
    const lm_tabledef *td = &cat->tables[i];
    lm_rtable *t = &c->an->tables[i];
    switch ((lm_table_kind)td->kind) {
    case LM_TABLE_TOP_KERNELS:
      if (t != r->top_table) c->status = lm_analyze_top(c, t, r->top_rows, r->n_top, r->chosen);
      break;
    case LM_TABLE_DISPATCHES: build_dispatches(c, t, r->top_rows, r->n_top); break;
    case LM_TABLE_SYSINFO:
      if (t->shown) build_sysinfo(c, t);
      break;
    case LM_TABLE_ROOFLINE:
      if (t->shown && r->sw->roofline) build_raw_csv(c, t, r->sw->roofline);
      else if (t->shown) build_placeholder(c, t);
      break;
    case LM_TABLE_METRIC:
      if (t->shown) build_metric_table(c, t, td, r->ev, &r->sel, r->norm_word);
      break;
    }
  }
}

/* A workload of per-kernel totals only: the top-kernels table from them
 * (totals.c), no other table shown. Errors: an option they cannot
 * answer, those of lm_analyze_top_totals. */
static lm_status run_totals(run *r) {
  lm_analyze_ctx *c = &r->c;
  lm_status st = lm_analyze_totals_check(c);
  if (st == LM_OK) st = init_tables(r);
  if (st != LM_OK) return st;
  if (!r->top_table) return lm_fail(c->diag, LM_EINVAL, NULL, "the definitions have no top-kernels table");
  for (int32_t i = 0; i < c->an->n_tables; i++) c->an->tables[i].shown = &c->an->tables[i] == r->top_table;
  return lm_analyze_top_totals(c, r->top_table);
}

/* A workload of timestamps of no known architecture: its top kernels and
 * dispatch list (panel 0) read no counter, and are all it can show. The
 * blocks to select (blocks/n_blocks), or an error naming the -b asked
 * beyond them. */
static lm_status timing_blocks(lm_analyze_ctx *c, const char *const **blocks, size_t *n_blocks) {
  static const char *const panel0[] = {"0"};
  for (size_t i = 0; i < c->o->n_blocks; i++) {
    const char *b = c->o->blocks[i];
    if (strcmp(b, "0") != 0 && strcmp(b, "0.1") != 0 && strcmp(b, "0.2") != 0)
      return lm_fail(c->diag, LM_EINVAL, c->w->path,
                     "-b %.80s: the architecture is not recorded, so no panel that reads counters can be shown; "
                     "the top kernels and the dispatch list (-b 0) can (--arch names the architecture)",
                     b);
  }
  if (!c->o->n_blocks) {
    *blocks = panel0;
    *n_blocks = 1;
  }
  return LM_OK;
}

lm_status lm_analyze_run(const lm_workload *w, const lm_catalog *cat, const lm_analyze_opts *o,
                         lm_analysis **out, lm_diag *diag) {
  run r;
  memset(&r, 0, sizeof r);
  lm_analyze_ctx *c = &r.c;
  *out = NULL;
  c->w = w;
  c->cat = cat;
  c->o = o;
  c->diag = diag;
  lm_analyze_find_columns(c, w->pmc);
  c->arena = lm_arena_new(1 << 16);
  if (!c->arena) return lm_oom(diag, NULL);
  c->an = lm_arena_alloc(c->arena, sizeof *c->an);
  if (!c->an) goto nomem;
  c->an->arena = c->arena;
  c->an->workload = w;
  c->an->catalog = cat;
  if ((c->status = find_norm(&r)) != LM_OK) goto fail;
  if (lm_workload_totals(w)) {
    if ((c->status = run_totals(&r)) != LM_OK) goto fail;
    *out = c->an;
    c->arena = NULL;
    goto done;
  }
  const char *const *blocks = o->blocks;
  size_t n_blocks = o->n_blocks;
  if (!(w->arch && *w->arch) && (c->status = timing_blocks(c, &blocks, &n_blocks)) != LM_OK) goto fail;
  if (lm_catalog_select(cat, blocks, n_blocks, &r.sel, diag) != LM_OK) {
    c->status = diag ? diag->status : LM_EINVAL;
    goto fail;
  }
  if (lm_analyze_select(c, &r.top_rows, &r.n_top, &r.metric_rows, &r.n_metric, &r.chosen) != LM_OK) {
    c->status = diag ? diag->status : LM_EINVAL;
    goto fail;
  }
  if ((c->status = init_tables(&r)) != LM_OK) goto fail;
  if ((c->status = first_top(&r)) != LM_OK) goto fail;
  if ((c->status = check_selection(&r)) != LM_OK) goto fail;
  rank_view(&r);
  if ((c->status = measure_clocks(&r)) != LM_OK) goto fail;
  if ((c->status = time_weights(&r)) != LM_OK) goto fail;
  lm_eval_request req = {r.ew,          r.metric_rows, r.n_metric,    r.norm,      r.eval_tables, o->threads,
                         o->corrected, r.weights,     o->block_rows, o->stat_mem};
  uint64_t t0 = lm_phase_begin();
  if (lm_eval_run(cat, &req, &r.ev, diag) != LM_OK) {
    c->status = diag ? diag->status : LM_EDATA;
    goto fail;
  }
  lm_phase_end("evaluate", t0);
  build_tables(&r);
  if (c->status != LM_OK) goto fail;
  if (lm_analyze_ranks(c->an, r.metric_rows, r.n_metric, diag) != LM_OK) {
    c->status = diag ? diag->status : LM_ENOMEM;
    goto fail;
  }
  if (lm_analyze_spread(c->an, r.metric_rows, r.n_metric, r.norm, diag) != LM_OK) {
    c->status = diag ? diag->status : LM_ENOMEM;
    goto fail;
  }
  if (lm_analyze_mark_uncollected(c->an, diag) != LM_OK) {
    c->status = diag ? diag->status : LM_ENOMEM;
    goto fail;
  }
  *out = c->an;
  c->arena = NULL;
  goto done;
nomem:
  c->status = lm_oom(diag, NULL);
fail:
  if (c->status == LM_OK) c->status = LM_EINVAL;
done:
  lm_selection_fini(&r.sel);
  lm_eval_free(r.ev);
  lm_free(r.top_rows);
  lm_free(r.metric_rows);
  lm_free(r.chosen);
  lm_free(r.eval_tables);
  lm_arena_free(c->arena);
  return c->status;
}
