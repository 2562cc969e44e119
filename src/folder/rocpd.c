/*
 * rocpd.c - pmc_perf.csv as the rocpd-based profiler writes it: one row
 * per (dispatch, counter) in `Counter_Name` / `Counter_Value` columns.
 *
 * lumen pivots it to one row per dispatch the way the reference tool
 * (3.3) does, so every value matches: groups by dispatch id, kernel,
 * grid, workgroup and LDS size; durations the median of the group's rows
 * from the integer timestamps; ids renumbered from 0. lm_rocpd_levels
 * builds the SQ_* tables from the <table>_ACCUM columns, so metrics find
 * their sources as in the older layout. The rules in full:
 * docs/compatibility.md ("The rocpd layout").
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "folder/folder.h"

static const char *const group_cols[] = {"Dispatch_ID", "Kernel_Name",
                                         "Grid_Size", "Workgroup_Size",
                                         "LDS_Per_Workgroup"};
static const char *const first_cols[] = {"GPU_ID",
                                         "Grid_Size",
                                         "Workgroup_Size",
                                         "LDS_Per_Workgroup",
                                         "Scratch_Per_Workitem",
                                         "Arch_VGPR",
                                         "Accum_VGPR",
                                         "SGPR",
                                         "Kernel_ID"};

typedef struct sorter {
  const lm_table *t;
  long cols[5];
} sorter;

static int cmp_num(double a, double b) {
  if (isnan(a) || isnan(b))
    return isnan(a) - isnan(b);
  return (a > b) - (a < b);
}

/* Two rows by the group columns (context: a sorter), then file order. */
static int cmp_rows(const void *pa, const void *pb, void *ctx) {
  const sorter *S = ctx;
  size_t a = *(const size_t *)pa, b = *(const size_t *)pb;
  for (int k = 0; k < 5; k++) {
    long c = S->cols[k];
    int d;
    if (k == 1) {
      const char *x = lm_table_text(S->t, (size_t)c, a), *y = lm_table_text(S->t, (size_t)c, b);
      d = strcmp(x ? x : "", y ? y : "");
    } else {
      d = cmp_num(S->t->cols[c].values[a], S->t->cols[c].values[b]);
    }
    if (d)
      return d;
  }
  return (a > b) - (a < b);
}

/* End - Start of row r: from the integers written in the file when their
 * text was kept (timestamps in ns exceed 2^53, where a double loses the
 * last digits), else from the numbers. */
static double duration_of(const lm_table *in, long c_start, long c_end,
                          size_t r) {
  const char *a = lm_table_text(in, (size_t)c_start, r);
  const char *b = lm_table_text(in, (size_t)c_end, r);
  if (a && b) {
    char *ea = NULL, *eb = NULL;
    long long x = strtoll(a, &ea, 10), y = strtoll(b, &eb, 10);
    if (ea != a && eb != b && *ea == '\0' && *eb == '\0')
      return (double)(y - x);
  }
  return in->cols[c_end].values[r] - in->cols[c_start].values[r];
}

static int cmp_double(const void *pa, const void *pb) {
  return cmp_num(*(const double *)pa, *(const double *)pb);
}

int lm_rocpd_is_long(const lm_table *pmc) {
  return lm_table_find(pmc, "Counter_Name") >= 0 &&
         lm_table_find(pmc, "Counter_Value") >= 0;
}

/* The columns the pivot reads, by index into need (the group columns,
 * the first-row columns, the timestamps, the counter name and value);
 * else the error naming the first one missing. */
#define N_NEED (5 + 9 + 4)
static lm_status find_needed(const lm_table *in, long need[N_NEED], lm_diag *diag) {
  const char *need_names[N_NEED];
  size_t n_need = 0;
  for (size_t k = 0; k < 5; k++)
    need_names[n_need++] = group_cols[k];
  for (size_t k = 0; k < 9; k++)
    need_names[n_need++] = first_cols[k];
  need_names[n_need++] = "Start_Timestamp";
  need_names[n_need++] = "End_Timestamp";
  need_names[n_need++] = "Counter_Name";
  need_names[n_need++] = "Counter_Value";
  for (size_t k = 0; k < n_need; k++)
    if ((need[k] = lm_table_find(in, need_names[k])) < 0)
      return lm_fail_at(diag, LM_EDATA, in->path, 1, need_names[k],
                        "missing column: a pmc_perf.csv with one row per counter "
                        "(Counter_Name, Counter_Value) needs it");
  return LM_OK;
}

/* Sort the n rows (order) by the group columns and number the groups in
 * sorted order: group_of[r] is row r's, first[g] the group's first row in
 * file order (the reference takes .iloc[0] of a group, which keeps file
 * order). Returns the number of groups. */
static size_t group_rows(const lm_table *in, const long *need, size_t n, size_t *order, size_t *group_of,
                         size_t *first) {
  for (size_t r = 0; r < n; r++)
    order[r] = r;
  sorter S = {.t = in};
  for (int k = 0; k < 5; k++)
    S.cols[k] = need[k];
  lm_sort(order, n, sizeof *order, cmp_rows, &S);
  size_t n_groups = 0;
  for (size_t i = 0; i < n; i++) {
    size_t r = order[i];
    int same = 0;
    if (i > 0) {
      size_t p = order[i - 1];
      size_t a[2] = {p, r};
      same = 1;
      for (int k = 0; k < 5 && same; k++) {
        long c = need[k];
        if (k == 1) {
          const char *x = lm_table_text(in, (size_t)c, a[0]),
                     *y = lm_table_text(in, (size_t)c, a[1]);
          same = strcmp(x ? x : "", y ? y : "") == 0;
        } else {
          same =
              cmp_num(in->cols[c].values[a[0]], in->cols[c].values[a[1]]) == 0;
        }
      }
    }
    if (!same)
      first[n_groups++] = r;
    group_of[r] = n_groups - 1;
    if (r < first[n_groups - 1])
      first[n_groups - 1] = r;
  }
  return n_groups;
}

/* The counter names of column c_name, numbered in order of first
 * appearance into names; *n_counters their number. */
static lm_status name_counters(const lm_table *in, long c_name, lm_map *names, size_t *n_counters) {
  *n_counters = 0;
  for (size_t r = 0; r < in->n_rows; r++) {
    const char *name = lm_table_text(in, (size_t)c_name, r);
    if (!name)
      continue;
    if (!lm_map_get(names, name, NULL)) {
      if (lm_map_put(names, name, (int64_t)*n_counters) != LM_OK)
        return LM_ENOMEM;
      (*n_counters)++;
    }
  }
  return LM_OK;
}

/* The columns taken from each group's first row (the GPU ids ranked
 * densely from 0) and the kernel name. */
static lm_status add_first_cols(lm_table *t, const lm_table *in, const long *need, const size_t *first,
                                size_t n_groups, double *scratch) {
  for (size_t k = 0; k < 9; k++) {
    lm_column *c = lm_table_add_column(t, first_cols[k], 0);
    if (!c)
      return LM_ENOMEM;
    for (size_t g = 0; g < n_groups; g++)
      c->values[g] = in->cols[need[5 + k]].values[first[g]];
    if (k == 0) {
      /* GPU ids ranked densely from 0. */
      memcpy(scratch, c->values, n_groups * sizeof *scratch);
      qsort(scratch, n_groups, sizeof *scratch, cmp_double);
      for (size_t g = 0; g < n_groups; g++) {
        double rank = 0;
        for (size_t q = 0; q < n_groups && scratch[q] < c->values[g]; q++)
          if (q == 0 || scratch[q] != scratch[q - 1])
            rank++;
        c->values[g] = isnan(c->values[g]) ? c->values[g] : rank;
      }
    }
  }
  lm_column *kernel = lm_table_add_column(t, "Kernel_Name", 1);
  if (!kernel)
    return LM_ENOMEM;
  for (size_t g = 0; g < n_groups; g++) {
    const char *name = lm_table_text(in, (size_t)need[1], first[g]);
    kernel->text_ids[g] = lm_table_intern(t, name ? name : "");
    if (kernel->text_ids[g] < 0)
      return LM_ENOMEM;
  }
  return LM_OK;
}

/* One column per counter (names), in order of first appearance: each
 * group's value from its row of that counter, NaN where it has none. */
static lm_status add_counters(lm_table *t, const lm_table *in, long c_name, long c_value, lm_map *names,
                              size_t n_counters, const size_t *group_of, size_t n_groups) {
  size_t n = in->n_rows;
  lm_column **counters = lm_arena_alloc(
      t->arena, (n_counters ? n_counters : 1) * sizeof *counters);
  if (!counters)
    return LM_ENOMEM;
  for (size_t r = 0, k = 0; r < n && k < n_counters; r++) {
    const char *name = lm_table_text(in, (size_t)c_name, r);
    int64_t idx;
    if (!name || !lm_map_get(names, name, &idx) || (size_t)idx != k)
      continue;
    if (!(counters[k] = lm_table_add_column(t, name, 0)))
      return LM_ENOMEM;
    for (size_t g = 0; g < n_groups; g++)
      counters[k]->values[g] = (double)NAN;
    k++;
  }
  for (size_t r = 0; r < n; r++) {
    const char *name = lm_table_text(in, (size_t)c_name, r);
    int64_t idx;
    if (name && lm_map_get(names, name, &idx))
      counters[idx]->values[group_of[r]] = in->cols[c_value].values[r];
  }
  return LM_OK;
}

/* The timestamps of each group: it starts at 0 and ends at the median
 * duration of its rows; the dispatch ids number the groups. */
static lm_status add_durations(lm_table *t, const lm_table *in, long c_start, long c_end, const size_t *order,
                               const size_t *group_of, size_t n_groups, double *scratch) {
  size_t n = in->n_rows;
  lm_column *end = lm_table_add_column(t, "End_Timestamp", 0);
  lm_column *start = lm_table_add_column(t, "Start_Timestamp", 0);
  lm_column *dispatch = lm_table_add_column(t, "Dispatch_ID", 0);
  if (!end || !start || !dispatch)
    return LM_ENOMEM;
  for (size_t g = 0, i = 0; g < n_groups; g++) {
    size_t m = 0;
    for (; i < n && group_of[order[i]] == g; i++) {
      size_t r = order[i];
      scratch[m++] = duration_of(in, c_start, c_end, r);
    }
    qsort(scratch, m, sizeof *scratch, cmp_double);
    end->values[g] = m == 0  ? (double)NAN
                     : m % 2 ? scratch[m / 2]
                             : (scratch[m / 2 - 1] + scratch[m / 2]) / 2;
    start->values[g] = 0;
    dispatch->values[g] = (double)g;
  }
  return LM_OK;
}

lm_status lm_rocpd_pivot(const lm_table *in, lm_table **out, lm_diag *diag) {
  lm_status st = LM_OK;
  size_t n = in->n_rows;
  size_t *order = NULL, *group_of = NULL, *first = NULL;
  double *scratch = NULL;
  lm_map *names = NULL;
  lm_table *t = NULL;
  *out = NULL;
  long need[N_NEED];
  if ((st = find_needed(in, need, diag)) != LM_OK)
    return st;
  long c_start = need[14], c_end = need[15], c_name = need[16],
       c_value = need[17];
  order = lm_malloc((n ? n : 1) * sizeof *order);
  group_of = lm_malloc((n ? n : 1) * sizeof *group_of);
  first = lm_malloc((n ? n : 1) * sizeof *first);
  scratch = lm_malloc((n ? n : 1) * sizeof *scratch);
  names = lm_map_new();
  if (!order || !group_of || !first || !scratch || !names)
    goto nomem;
  size_t n_groups = group_rows(in, need, n, order, group_of, first);
  size_t n_counters = 0;
  if (name_counters(in, c_name, names, &n_counters) != LM_OK)
    goto nomem;
  t = lm_table_create(in->path, in->name, n_groups, 9 + 1 + n_counters + 3);
  if (!t || add_first_cols(t, in, need, first, n_groups, scratch) != LM_OK ||
      add_counters(t, in, c_name, c_value, names, n_counters, group_of, n_groups) != LM_OK ||
      add_durations(t, in, c_start, c_end, order, group_of, n_groups, scratch) != LM_OK)
    goto nomem;
  if ((st = lm_table_finish(t)) != LM_OK)
    goto nomem;
  *out = t;
  t = NULL;
  goto done;
nomem:
  st = lm_oom(diag, in->path);
done:
  lm_table_free(t);
  lm_map_free(names);
  lm_free(order);
  lm_free(group_of);
  lm_free(first);
  lm_free(scratch);
  return st;
}

static const char ACCUM[] = "_ACCUM";

size_t lm_rocpd_n_levels(const lm_table *wide) {
  size_t n = 0, k = sizeof ACCUM - 1;
  for (size_t c = 0; c < wide->n_cols; c++) {
    size_t len = strlen(wide->cols[c].name);
    n += len > k && strcmp(wide->cols[c].name + len - k, ACCUM) == 0;
  }
  return n;
}

lm_status lm_rocpd_levels(const lm_table *wide, lm_table **out, size_t *n_out,
                          lm_diag *diag) {
  size_t k = sizeof ACCUM - 1, n = 0;
  *n_out = 0;
  for (size_t a = 0; a < wide->n_cols; a++) {
    const char *name = wide->cols[a].name;
    size_t len = strlen(name);
    if (len <= k || strcmp(name + len - k, ACCUM) != 0)
      continue;
    char stem[256];
    snprintf(stem, sizeof stem, "%.*s", (int)(len - k), name);
    lm_table *t =
        lm_table_create(wide->path, stem, wide->n_rows, wide->n_cols + 1);
    if (!t)
      goto nomem;
    out[n++] = t;
    for (size_t c = 0; c < wide->n_cols; c++) {
      const lm_column *src = &wide->cols[c];
      if (src->text_ids || strcmp(src->name, "SQ_ACCUM_PREV_HIRES") == 0)
        continue;
      lm_column *dst = lm_table_add_column(t, src->name, 0);
      if (!dst)
        goto nomem;
      memcpy(dst->values, src->values, wide->n_rows * sizeof *dst->values);
    }
    lm_column *acc = lm_table_add_column(t, "SQ_ACCUM_PREV_HIRES", 0);
    if (!acc)
      goto nomem;
    memcpy(acc->values, wide->cols[a].values,
           wide->n_rows * sizeof *acc->values);
    if (lm_table_finish(t) != LM_OK)
      goto nomem;
  }
  *n_out = n;
  return LM_OK;
nomem:
  for (size_t i = 0; i < n; i++)
    lm_table_free(out[i]);
  return lm_oom(diag, wide->path);
}
