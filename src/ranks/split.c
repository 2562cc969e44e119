/*
 * split.c - the parts of a --split ranks profile combined into one
 * view: every rank collected a share of the plan's counter sets for the
 * same dispatches, so row r of the workload is row r of every part, each
 * counter taken from the first set that has it, as one process collecting
 * every set composes a row. Kept apart from ranks.c, which appends parts
 * one after the other, because the two share only the merged tables.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ranks/ranks.h"
#include "folder/folder.h"
#include "ranks/merge.h"

/* ------------------------------------------------------- --split ranks */

/* The launch parameters rows of different ranks must share to be combined. */
static const char *const launch_cols[] = {"Grid_Size", "Workgroup_Size", "LDS_Per_Workgroup", "Arch_VGPR",
                                          "Accum_VGPR"};

static void describe_row(lm_buf *b, const lm_table *t, size_t r) {
  long kc = lm_table_find(t, "Kernel_Name");
  const char *name = kc >= 0 ? lm_table_text(t, (size_t)kc, r) : NULL;
  lm_buf_printf(b, "%.120s (", name ? name : "?");
  for (size_t i = 0; i < LM_ARRAY_LEN(launch_cols); i++) {
    long c = lm_table_find(t, launch_cols[i]);
    lm_buf_printf(b, "%s%s %.0f", i ? ", " : "", launch_cols[i], c >= 0 ? t->cols[c].values[r] : LM_NAN);
  }
  lm_buf_puts(b, ")");
}

/* Whether the rows of part b (rank rb) are other dispatches than those of
 * the base part a (rank ra): 0 when each row has the same kernel and
 * launch parameters, else 1 with the first difference appended to why. */
static int rows_differ(const lm_table *a, int ra, const lm_table *b, int rb, lm_buf *why) {
  if (a->n_rows != b->n_rows) {
    lm_buf_printf(why, "rank %d has %zu dispatch rows, rank %d %zu", rb, b->n_rows, ra, a->n_rows);
    return 1;
  }
  long ka = lm_table_find(a, "Kernel_Name"), kb = lm_table_find(b, "Kernel_Name");
  for (size_t r = 0; r < a->n_rows; r++) {
    const char *na = ka >= 0 ? lm_table_text(a, (size_t)ka, r) : NULL;
    const char *nb = kb >= 0 ? lm_table_text(b, (size_t)kb, r) : NULL;
    int same = na && nb && strcmp(na, nb) == 0;
    for (size_t i = 0; same && i < LM_ARRAY_LEN(launch_cols); i++) {
      long ca = lm_table_find(a, launch_cols[i]), cb = lm_table_find(b, launch_cols[i]);
      double va = ca >= 0 ? a->cols[ca].values[r] : LM_NAN, vb = cb >= 0 ? b->cols[cb].values[r] : LM_NAN;
      same = va == vb || (isnan(va) && isnan(vb));
    }
    if (same) continue;
    lm_buf_printf(why, "row %zu: rank %d ran ", r, rb);
    describe_row(why, b, r);
    lm_buf_printf(why, ", rank %d ", ra);
    describe_row(why, a, r);
    return 1;
  }
  return 0;
}

/* The plan's set of each column of t (a table of part pw): the set its
 * first row's value came from, -1 for what no set collected. */
static int32_t *column_sets(const lm_workload *pw, const lm_table *t, const char *src, int level_set) {
  int32_t *v = lm_malloc((t->n_cols + 1) * sizeof *v);
  if (!v) return NULL;
  const lm_executions *x = pw->exec;
  for (size_t c = 0; c < t->n_cols; c++) {
    v[c] = level_set;
    for (size_t i = 0; x && i < x->n_prov; i++) {
      if (strcmp(x->prov_source[i], src) != 0 || strcmp(x->prov_column[i], t->cols[c].name) != 0) continue;
      int16_t local = -1;
      for (size_t r = 0; r < x->n_rows && local < 0; r++) local = x->prov_sets[i][r];
      v[c] = local >= 0 && local < pw->n_split_set ? pw->split_set[local] : -1;
      break;
    }
  }
  return v;
}

/* The executions of the combined rows: per row one per set of the plan,
 * from the rank that collected it; the shared quantities are those every
 * rank's part shares (the counters every set holds). */
typedef struct split_exec {
  int32_t n_sets, n_shared;
  const char **shared;
  uint8_t *everywhere;  /* per shared quantity: every part had it */
  double *values;
  int32_t *runs;
} split_exec;

static void exec_add(merge *m, split_exec *e, const lm_workload *pw, size_t n_rows) {
  const lm_executions *px = pw->exec;
  if (!px || !e->values) return;
  for (int32_t k = 0; k < e->n_shared; k++) {
    int32_t q = -1;
    for (int32_t j = 0; j < px->n_shared && q < 0; j++)
      if (strcmp(px->shared[j], e->shared[k]) == 0) q = j;
    if (q < 0) e->everywhere[k] = 0;
  }
  for (int32_t j = 0; j < px->n_sets && j < pw->n_split_set; j++) {
    int32_t g = pw->split_set[j];
    for (size_t r = 0; r < n_rows && r < px->n_rows; r++) {
      size_t to = r * (size_t)e->n_sets + (size_t)g, from = r * (size_t)px->n_sets + (size_t)j;
      if (e->runs[to] >= 0 || px->runs[from] < 0) continue; /* a lower rank has it */
      e->runs[to] = px->runs[from];
      for (int32_t k = 0; k < e->n_shared; k++)
        for (int32_t q = 0; q < px->n_shared; q++)
          if (strcmp(px->shared[q], e->shared[k]) == 0) {
            e->values[to * (size_t)e->n_shared + (size_t)k] = px->values[from * (size_t)px->n_shared + (size_t)q];
            break;
          }
    }
  }
  (void)m;
}

/* The combined executions as the workload keeps them (shared quantities
 * every part had), with the set of every counter column. */
static lm_status exec_finish(merge *m, lm_workload *w, split_exec *e) {
  if (!e->values) return LM_OK;
  size_t n_rows = w->pmc->n_rows;
  lm_executions *x = lm_arena_alloc(m->arena, sizeof *x);
  if (!x) return LM_ENOMEM;
  int32_t keep = 0;
  for (int32_t k = 0; k < e->n_shared; k++) keep += e->everywhere[k];
  x->n_rows = n_rows;
  x->n_sets = e->n_sets;
  x->n_shared = keep;
  x->shared = lm_arena_alloc(m->arena, ((size_t)keep + 1) * sizeof *x->shared);
  x->values = lm_arena_alloc(m->arena, (n_rows * (size_t)e->n_sets * (size_t)keep + 1) * sizeof *x->values);
  x->runs = e->runs;
  if (!x->shared || !x->values) return LM_ENOMEM;
  for (int32_t k = 0, q = 0; k < e->n_shared; k++)
    if (e->everywhere[k]) x->shared[q++] = e->shared[k];
  for (size_t i = 0; i < n_rows * (size_t)e->n_sets; i++)
    for (int32_t k = 0, q = 0; k < e->n_shared; k++)
      if (e->everywhere[k]) x->values[i * (size_t)keep + (size_t)q++] = e->values[i * (size_t)e->n_shared + (size_t)k];
  /* Provenance: the set each counter column's values came from. */
  size_t n_prov = 0;
  for (size_t i = 0; i < m->n_sources; i++)
    for (size_t c = 0; m->sources[i].table && c < m->sources[i].table->n_cols; c++) n_prov += m->sources[i].best[c] >= 0;
  x->prov_source = lm_arena_alloc(m->arena, (n_prov + 1) * sizeof *x->prov_source);
  x->prov_column = lm_arena_alloc(m->arena, (n_prov + 1) * sizeof *x->prov_column);
  x->prov_sets = lm_arena_alloc(m->arena, (n_prov + 1) * sizeof *x->prov_sets);
  if (!x->prov_source || !x->prov_column || !x->prov_sets) return LM_ENOMEM;
  for (size_t i = 0; i < m->n_sources; i++) {
    const source *s = &m->sources[i];
    for (size_t c = 0; s->table && c < s->table->n_cols; c++) {
      if (s->best[c] < 0) continue;
      int16_t *sets = lm_arena_alloc(m->arena, (n_rows + 1) * sizeof *sets);
      if (!sets) return LM_ENOMEM;
      for (size_t r = 0; r < n_rows; r++) sets[r] = isnan(s->table->cols[c].values[r]) ? -1 : (int16_t)s->best[c];
      x->prov_source[x->n_prov] = s->name;
      x->prov_column[x->n_prov] = s->table->cols[c].name;
      x->prov_sets[x->n_prov++] = sets;
    }
  }
  w->exec = x;
  return LM_OK;
}

/* Whether part p's workload pw belongs with the first one read (base,
 * NULL for the first): the same split and architecture (else the error),
 * the same dispatches (else *differ is set and the difference logged). */
static lm_status check_part(const merge *m, const lm_workload *pw, const lm_workload *base, const part *p,
                            int first_rank, lm_buf *why, int *differ) {
  if (!pw->split_ranks || (base && (pw->split_ranks != base->split_ranks ||
                                    pw->split_sets_total != base->split_sets_total)))
    return lm_fail_at(m->diag, LM_EDATA, p->dir, 0, "profile_option.split_ranks",
                      "rank %d's share of the counter sets is of another split (%d ranks, %d sets) than rank %d's",
                      p->rank, pw->split_ranks, pw->split_sets_total, first_rank);
  if (base && strcmp(pw->arch, base->arch) != 0)
    return lm_fail_at(m->diag, LM_EDATA, p->dir, 0, "gpu_arch", "rank %d ran on %s, rank %d on %s", p->rank, pw->arch,
                      first_rank, base->arch);
  if (base && rows_differ(base->pmc, first_rank, pw->pmc, p->rank, why)) {
    lm_log(LM_LOG_WARN, "%s: the ranks of this --split ranks profile ran different dispatches, so their counter "
                        "sets are not combined (each rank's rows are shown, with its own sets): %s",
           m->dir, lm_buf_cstr(why));
    *differ = 1;
  }
  return LM_OK;
}

/* What the first part read (pw) sizes: the split of w, its sets' ranks
 * (none yet), and the execution facts e gathers over n_rows rows. */
static lm_status first_part(merge *m, lm_workload *w, split_exec *e, const lm_workload *pw, size_t n_rows) {
  w->split_ranks = pw->split_ranks;
  w->split_sets_total = pw->split_sets_total;
  w->set_rank = lm_arena_alloc(m->arena, (size_t)pw->split_sets_total * sizeof *w->set_rank);
  if (!w->set_rank) return LM_ENOMEM;
  for (int g = 0; g < pw->split_sets_total; g++) w->set_rank[g] = -1;
  if (!pw->exec) return LM_OK;
  e->n_sets = pw->split_sets_total;
  e->n_shared = pw->exec->n_shared;
  e->shared = lm_arena_alloc(m->arena, ((size_t)e->n_shared + 1) * sizeof *e->shared);
  e->everywhere = lm_arena_alloc(m->arena, (size_t)e->n_shared + 1);
  size_t cells = n_rows * (size_t)e->n_sets;
  e->values = lm_arena_alloc(m->arena, (cells * (size_t)e->n_shared + 1) * sizeof *e->values);
  e->runs = lm_arena_alloc(m->arena, (cells + 1) * sizeof *e->runs);
  if (!e->shared || !e->everywhere || !e->values || !e->runs) return LM_ENOMEM;
  for (int32_t k = 0; k < e->n_shared; k++) {
    e->shared[k] = lm_ranks_intern(m, pw->exec->shared[k]);
    e->everywhere[k] = 1;
  }
  for (size_t c = 0; c < cells * (size_t)e->n_shared; c++) e->values[c] = LM_NAN;
  for (size_t c = 0; c < cells; c++) e->runs[c] = -1;
  return LM_OK;
}

/* The tables of part i (pw, read from p->dir) appended to the sources:
 * counter columns by their sets, the rest from the lowest rank. */
static lm_status append_part(merge *m, const lm_workload *pw, const part *p, size_t i, size_t n_rows) {
  lm_status st = LM_OK;
  int32_t *col_set = column_sets(pw, pw->pmc, "pmc_perf", -1);
  if (!col_set) goto nomem;
  if ((st = lm_ranks_append(m, lm_ranks_source(m, "pmc_perf", 1), pw->pmc, 0, n_rows, p->dir, col_set, i,
                            NULL)) != LM_OK)
    goto done;
  lm_free(col_set);
  col_set = NULL;
  for (size_t k = 0; k < pw->n_levels; k++) {
    const lm_table *t = pw->levels[k];
    source *s = lm_ranks_source(m, t->name, 1);
    if (!s) goto nomem;
    if (t->n_rows != n_rows) {
      st = lm_fail(m->diag, LM_EDATA, t->path, "%zu rows for %zu dispatches", t->n_rows, n_rows);
      goto done;
    }
    if (!(col_set = column_sets(pw, t, t->name, pw->split_set[0]))) goto nomem;
    if ((st = lm_ranks_append(m, s, t, 0, n_rows, p->dir, col_set, i, NULL)) != LM_OK) goto done;
    lm_free(col_set);
    col_set = NULL;
  }
  goto done;
nomem:
  st = lm_oom(m->diag, m->dir);
done:
  lm_free(col_set);
  return st;
}

/* Timestamps: each part's are the mean over its sets; weigh them, as
 * differences to the first part's (base; pw itself when it is that). */
static void add_timestamps(double *start_sum, double *end_sum, const lm_workload *pw, const lm_workload *base,
                           size_t n_rows) {
  long cs = lm_table_find(pw->pmc, "Start_Timestamp"), ce = lm_table_find(pw->pmc, "End_Timestamp");
  long bs = base ? lm_table_find(base->pmc, "Start_Timestamp") : cs, be = base ? lm_table_find(base->pmc, "End_Timestamp") : ce;
  const lm_workload *b = base ? base : pw;
  for (size_t r = 0; cs >= 0 && ce >= 0 && bs >= 0 && be >= 0 && r < n_rows; r++) {
    start_sum[r] += pw->n_split_set * (pw->pmc->cols[cs].values[r] - b->pmc->cols[bs].values[r]);
    end_sum[r] += pw->n_split_set * (pw->pmc->cols[ce].values[r] - b->pmc->cols[be].values[r]);
  }
}

/* The tables take their final shape: blanks filled, the timestamps the
 * first part's plus the weighed mean of the differences, then w->pmc and
 * w->levels (still owned by the sources). */
static lm_status finish_tables(merge *m, lm_workload *w, const double *start_sum, const double *end_sum,
                               size_t n_rows) {
  w->levels = lm_arena_alloc(m->arena, (m->n_sources + 1) * sizeof *w->levels);
  if (!w->levels) return LM_ENOMEM;
  for (size_t i = 0; i < m->n_sources; i++) {
    source *s = &m->sources[i];
    if (!s->table) continue;
    for (size_t c = 0; c < s->table->n_cols; c++) lm_ranks_blank(&s->table->cols[c], s->filled[c], n_rows);
    if (strcmp(s->name, "pmc_perf") == 0) {
      long cs = lm_table_find(s->table, "Start_Timestamp"), ce = lm_table_find(s->table, "End_Timestamp");
      int total = w->split_sets_total;
      for (size_t r = 0; cs >= 0 && ce >= 0 && r < n_rows; r++) {
        s->table->cols[cs].values[r] += start_sum[r] / total;
        s->table->cols[ce].values[r] += end_sum[r] / total;
      }
    }
    lm_table_finish(s->table);
    for (size_t c = 0; c < s->table->n_cols; c++)
      if (s->table->cols[c].first_text && !s->table->cols[c].text_ids) s->table->cols[c].n_text = 1;
    if (strcmp(s->name, "pmc_perf") == 0) w->pmc = s->table;
    else w->levels[w->n_levels++] = s->table;
  }
  return LM_OK;
}

/* Sets no rank collected (fewer ranks ran than the job had): a warning. */
static void warn_missing_sets(const lm_workload *w, const char *dir) {
  lm_buf missing = {0};
  for (int g = 0; g < w->split_sets_total; g++)
    if (w->set_rank[g] < 0) lm_buf_printf(&missing, "%s%d", missing.len ? ", " : "", g);
  if (missing.len)
    lm_log(LM_LOG_WARN, "%s: no rank's part holds counter set%s %s of the %d (a rank's part is missing?): "
                        "metrics that need them are n/a", dir, strchr(lm_buf_cstr(&missing), ',') ? "s" : "",
           lm_buf_cstr(&missing), w->split_sets_total);
  lm_buf_fini(&missing);
}

/* The parts of a --split ranks profile as one workload: row r combines
 * row r of every rank, each counter from the first set of the plan that
 * has it, the timestamps the mean over every set's execution (as one
 * process collecting every set composes them). When a rank ran other
 * dispatches (kernels, launch parameters), *differ is set, the
 * difference is logged, and nothing is combined. */
lm_status lm_ranks_split_combine(const merge *counts, part *parts, size_t n_parts, lm_workload **out, int *differ) {
  lm_diag *diag = counts->diag;
  const char *dir = counts->dir;
  *out = NULL;
  *differ = 0;
  merge m;
  memset(&m, 0, sizeof m);
  m.dir = dir;
  m.diag = diag;
  m.arena = lm_arena_new(1 << 14);
  m.strings = lm_map_new();
  lm_workload *w = m.arena ? lm_arena_alloc(m.arena, sizeof *w) : NULL;
  lm_workload *base = NULL, *pw = NULL;
  double *start_sum = NULL, *end_sum = NULL;
  split_exec e;
  memset(&e, 0, sizeof e);
  lm_buf why = {0};
  lm_status st = LM_OK;
  if (!w || !m.strings) goto nomem;
  w->arena = m.arena;
  w->path = lm_arena_strdup(m.arena, dir);
  for (size_t i = 0; i < counts->n_sources; i++) {
    source *s = lm_ranks_source(&m, counts->sources[i].name, 1);
    if (!s) goto nomem;
    s->n_names = counts->sources[i].n_names;
  }
  size_t n_rows = parts[0].n_rows;
  w->part_rank = lm_arena_alloc(m.arena, n_parts * sizeof *w->part_rank);
  w->part_sysinfo = lm_arena_alloc(m.arena, n_parts * sizeof *w->part_sysinfo);
  w->part_tables = lm_arena_alloc(m.arena, n_parts * sizeof *w->part_tables);
  w->part_roofline = lm_arena_alloc(m.arena, n_parts * sizeof *w->part_roofline);
  start_sum = lm_calloc(n_rows + 1, sizeof *start_sum);
  end_sum = lm_calloc(n_rows + 1, sizeof *end_sum);
  if (!w->path || !w->part_rank || !w->part_sysinfo || !w->part_tables || !w->part_roofline || !start_sum || !end_sum)
    goto nomem;
  for (size_t i = 0; i < n_parts; i++) {
    part *p = &parts[i];
    if ((st = lm_folder_read(p->dir, NULL, &pw, diag)) != LM_OK) goto fail;
    if ((st = check_part(&m, pw, base, p, parts[0].rank, &why, differ)) != LM_OK || *differ) goto fail;
    w->part_rank[i] = p->rank;
    if ((st = lm_ranks_adopt_info(&m, w, pw, i)) != LM_OK) goto fail;
    w->n_parts = i + 1;
    if (!base && first_part(&m, w, &e, pw, n_rows) != LM_OK) goto nomem;
    for (int k = 0; k < pw->n_split_set; k++)
      if (w->set_rank[pw->split_set[k]] < 0) w->set_rank[pw->split_set[k]] = p->rank;
    if ((st = append_part(&m, pw, p, i, n_rows)) != LM_OK) goto fail;
    add_timestamps(start_sum, end_sum, pw, base, n_rows);
    exec_add(&m, &e, pw, n_rows);
    if (!base) {
      base = pw; /* kept: the other ranks' rows are checked against it */
    } else {
      lm_workload_free(pw);
    }
    pw = NULL;
  }
  if (finish_tables(&m, w, start_sum, end_sum, n_rows) != LM_OK) goto nomem;
  if (exec_finish(&m, w, &e) != LM_OK) {
    w->pmc = NULL; /* the tables are freed with the sources */
    w->n_levels = 0;
    goto nomem;
  }
  for (size_t i = 0; i < m.n_sources; i++) m.sources[i].table = NULL;
  warn_missing_sets(w, dir);
  lm_workload_free(base);
  lm_free(start_sum);
  lm_free(end_sum);
  lm_buf_fini(&why);
  lm_map_free(m.strings);
  *out = w;
  return LM_OK;
nomem:
  st = lm_oom(diag, dir);
fail:
  lm_workload_free(pw);
  lm_workload_free(base);
  lm_free(start_sum);
  lm_free(end_sum);
  lm_buf_fini(&why);
  for (size_t i = 0; i < m.n_sources; i++) lm_table_free(m.sources[i].table);
  lm_map_free(m.strings);
  if (w) lm_workload_free(w);
  else lm_arena_free(m.arena);
  return *differ ? LM_OK : st;
}

