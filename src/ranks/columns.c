/*
 * columns.c - the merged tables of an MPI profile's rank.R parts, column by
 * column: appending a part's rows, summing the parts' statistics, sharing
 * columns of one value, decoding a part's columns straight into the merged
 * tables, and the merged order of columns and text ids (the parts' order,
 * whatever order they were read in).
 *
 * When every part comes from its database, the merged columns exist before
 * pass 2 and each part decodes into its rows there: no table of its own, no
 * copy, counts added up rather than recounted. Invariant: the merged tables
 * equal appended copies, bit for bit and statistic for statistic.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "ranks/ranks.h"
#include "ranks/merge.h"

void lm_ranks_blank(lm_column *c, size_t from, size_t to) {
  for (size_t r = from; r < to; r++) {
    c->values[r] = LM_NAN;
    if (c->text_ids) c->text_ids[r] = -1;
  }
}

/* Append the rows of table src at row offset `at` of the merged source s.
 * With col_set (combining the parts of a --split ranks profile, at = 0):
 * per column of src the plan's set its values came from (-1: not a
 * counter); a column already there is replaced only by one from a lower
 * set, so that every value comes from the first set that has it, as in a
 * profile that collected every set. */
/* The merged table of source s (of `total` rows, room for at least
 * min_width columns) and its per-column bookkeeping. */
static lm_status make_table(merge *m, source *s, size_t total, size_t min_width) {
  /* Kernel_Name and the measured clocks are not column_data rows. */
  size_t width = s->n_names + (strcmp(s->name, "pmc_perf") == 0 ? 24 : 1);
  if (width < min_width) width = min_width;
  s->table = lm_table_create(m->dir, s->name, total, width);
  s->filled = lm_arena_alloc(m->arena, width * sizeof *s->filled);
  s->best = lm_arena_alloc(m->arena, width * sizeof *s->best);
  s->written = lm_arena_alloc(m->arena, width * sizeof *s->written);
  s->first_part = lm_arena_alloc(m->arena, width * sizeof *s->first_part);
  s->first_pos = lm_arena_alloc(m->arena, width * sizeof *s->first_pos);
  s->text_part = lm_arena_alloc(m->arena, width * sizeof *s->text_part);
  s->missing = lm_arena_alloc(m->arena, width * sizeof *s->missing);
  s->not_int = lm_arena_alloc(m->arena, width * sizeof *s->not_int);
  s->uniform = lm_arena_alloc(m->arena, width * sizeof *s->uniform);
  s->part_value = lm_arena_alloc(m->arena, width * sizeof *s->part_value);
  s->part_col = lm_arena_alloc(m->arena, width * sizeof *s->part_col);
  if (!s->table || !s->filled || !s->best || !s->written || !s->first_part || !s->first_pos || !s->text_part ||
      !s->missing || !s->not_int || !s->uniform || !s->part_value || !s->part_col)
    return lm_oom(m->diag, m->dir);
  memset(s->table->row_missing, 0, total);
  return LM_OK;
}

/* Column `name` added to s's merged table, its bookkeeping started;
 * part_index and pos: the part that adds it and its place there
 * (SIZE_MAX: added ahead of the parts, set by the first that appends it).
 * Errors: no room (a name pass 1 did not see), out of memory. */
static lm_status add_merged(merge *m, source *s, const char *name, int with_text, int split, size_t part_index,
                            size_t pos, const char *part_dir) {
  lm_table *t = s->table;
  if (!lm_table_add_column(t, name, with_text))
    return lm_fail_at(m->diag, LM_EDATA, part_dir, 0, name,
                      "column not named when the part was first read (did it change while being read?)");
  size_t k = t->n_cols - 1;
  s->filled[k] = 0;
  s->missing[k] = 0;
  s->not_int[k] = 0;
  s->best[k] = -1;
  s->first_part[k] = part_index;
  s->first_pos[k] = pos;
  if (!split && !(s->written[k] = lm_arena_alloc(m->arena, m->n_parts + 1))) return lm_oom(m->diag, m->dir);
  if (!split) memset(s->written[k], 0, m->n_parts + 1);
  s->uniform[k] = !split && !with_text && m->stats;
  s->part_value[k] = NULL;
  s->part_col[k] = NULL;
  if (s->uniform[k] && !(s->part_value[k] = lm_arena_alloc(m->arena, (m->n_parts + 1) * sizeof(double))))
    return lm_oom(m->diag, m->dir);
  return LM_OK;
}

/* Whether values[0..n) hold one value (the same bits) in every row. */
static int one_value(const double *values, size_t n) {
  for (size_t r = 1; r < n; r++)
    if (memcmp(&values[r], &values[0], sizeof *values) != 0) return 0;
  return n > 0;
}

lm_status lm_ranks_append(merge *m, source *s, const lm_table *src, size_t at, size_t total, const char *part_dir,
                        const int32_t *col_set, size_t part_index, const lm_ranks_pack *pack) {
  lm_status st = LM_OK;
  if (!s->table && (st = make_table(m, s, total, src->n_cols)) != LM_OK) return st;
  lm_table *t = s->table;
  int32_t *ids = NULL;
  if (src->n_strings && !(ids = lm_malloc(src->n_strings * sizeof *ids))) return lm_oom(m->diag, m->dir);
  for (size_t i = 0; i < src->n_strings; i++) ids[i] = -2;
  for (size_t c = 0; c < src->n_cols; c++) {
    const lm_column *sc = &src->cols[c];
    /* A column packed on the reading thread stays so (only with
     * merge.stats: the merged statistics are the parts' sums). */
    int packed = pack && !col_set && m->stats && lm_ranks_packed(pack, c);
    const double *sv = sc->values;
    if (!packed && lm_table_deferred(src, c) && !(sv = lm_table_values(src, c, m->diag))) {
      st = m->diag ? m->diag->status : LM_EDATA;
      break;
    }
    long k = lm_table_find(t, sc->name);
    if (k < 0) {
      if ((st = add_merged(m, s, sc->name, sc->text_ids != NULL, col_set != NULL, part_index, c, part_dir)) != LM_OK)
        break;
      k = (long)t->n_cols - 1;
    }
    lm_column *dc = &t->cols[k];
    if (col_set) {
      if (s->filled[k] && (col_set[c] < 0 || (s->best[k] >= 0 && s->best[k] <= col_set[c]))) continue;
      s->filled[k] = 0;
      s->best[k] = col_set[c];
      lm_ranks_blank(dc, s->filled[k], at);
    } else {
      if (s->written[k][part_index]) continue; /* a name twice in one part: the first */
      s->written[k][part_index] = 1;
      if (part_index < s->first_part[k]) {
        s->first_part[k] = part_index;
        s->first_pos[k] = c;
      }
    }
    int in_place = sv == dc->values + at; /* decoded there (place_part) */
    if (packed) {
      if (!s->part_col[k]) {
        if (!(s->part_col[k] = lm_arena_alloc(t->arena, (m->n_parts + 1) * sizeof(int32_t)))) {
          st = lm_oom(m->diag, m->dir);
          break;
        }
        for (size_t p = 0; p <= m->n_parts; p++) s->part_col[k][p] = -1;
      }
      s->part_col[k][part_index] = (int32_t)c;
      s->uniform[k] = 0;
    } else if (!col_set && s->uniform[k] && !in_place && !sc->text_ids && one_value(sv, src->n_rows)) {
      /* One value in the part: its rows wait (finish_uniform). */
      s->written[k][part_index] = 2;
      s->part_value[k][part_index] = sv[0];
    } else {
      if (!col_set) s->uniform[k] = 0;
      if (!in_place) memcpy(dc->values + at, sv, src->n_rows * sizeof(double));
    }
    int stats = m->stats && !col_set;
    if (dc->text_ids) {
      for (size_t r = 0; r < src->n_rows; r++) {
        int32_t id = sc->text_ids ? sc->text_ids[r] : -1;
        if (id >= 0 && (size_t)id < src->n_strings) {
          if (ids[id] == -2) ids[id] = lm_table_intern(t, src->strings[id]);
          id = ids[id];
        }
        dc->text_ids[at + r] = id < 0 ? -1 : id;
        if (stats && (id < 0 || !t->strings[id][0])) {
          s->missing[k]++;
          t->row_missing[at + r] = 1;
        }
      }
    } else if (stats && !sc->text_ids) {
      /* The part's read counted the column as lm_table_finish does. */
      s->missing[k] += sc->n_missing;
      if (!sc->all_int) s->not_int[k] = 1;
    } else if (stats) {
      for (size_t r = 0; r < src->n_rows; r++) {
        double v = sv[r];
        if (isnan(v)) {
          s->missing[k]++;
          t->row_missing[at + r] = 1;
        } else if (v != floor(v)) {
          s->not_int[k] = 1;
        }
      }
    }
    /* The example of a text cell is the lowest part's, whatever order the
     * parts' rows arrive in. */
    if (sc->first_text && (!dc->first_text || part_index < s->text_part[k])) {
      dc->first_text = lm_arena_strdup(t->arena, sc->first_text);
      dc->first_text_line = sc->first_text_line;
      s->text_part[k] = part_index;
    }
    s->filled[k] = at + src->n_rows;
  }
  /* The rows the part's read marked as holding a blank (in any column,
   * and every column of the part is here). */
  if (st == LM_OK && m->stats && !col_set && src->row_missing)
    for (size_t r = 0; r < src->n_rows; r++) t->row_missing[at + r] |= src->row_missing[r];
  lm_free(ids);
  return st;
}

int lm_ranks_evaluator_only(const merge *m, const char *src, const char *name) {
  char key[1024];
  int64_t verdict = 0;
  snprintf(key, sizeof key, "%s\037%s", src, name);
  return lm_map_get(m->names, key, &verdict) && verdict == LM_DB_WANT_LATER;
}

/* The columns whose parts each held one value (merge.stats): one array
 * of that value for the whole column when every part held the same one
 * and none lacks it (the tables are read-only: columns of one value share
 * it, as a part's read shares them), so their rows take no memory of
 * their own; else the parts' rows are filled with their values. Before
 * the blanks of the parts that lack a column. */
lm_status lm_ranks_finish_uniform(merge *m, source *s, const part *parts, size_t n_parts) {
  lm_table *t = s->table;
  double *shared[8];
  uint64_t shared_bits[8];
  size_t n_shared = 0;
  for (size_t c = 0; c < t->n_cols; c++) {
    lm_column *col = &t->cols[c];
    if (!s->part_value || !s->part_value[c]) continue;
    int same = s->uniform[c];
    uint64_t bits = 0;
    int have = 0;
    for (size_t p = 0; same && p < n_parts; p++) {
      if (!parts[p].n_rows) continue;
      if (s->written[c][p] != 2) {
        same = 0;
        break;
      }
      uint64_t b;
      memcpy(&b, &s->part_value[c][p], sizeof b);
      if (have && b != bits) same = 0;
      bits = b;
      have = 1;
    }
    if (same && have) {
      size_t i = 0;
      while (i < n_shared && shared_bits[i] != bits) i++;
      if (i == n_shared && n_shared < 8) {
        double v;
        memcpy(&v, &bits, sizeof v);
        if (!(shared[i] = lm_arena_alloc(t->arena, (t->n_rows + 1) * sizeof(double)))) return lm_oom(m->diag, m->dir);
        for (size_t r = 0; r < t->n_rows; r++) shared[i][r] = v;
        shared_bits[n_shared++] = bits;
      }
      if (i < n_shared) {
        col->values = shared[i];
        continue;
      }
    }
    /* Values that differ from part to part: when only the evaluator reads
     * the column and no part's rows are in the merged values (each part
     * held one value, or stayed packed, or lacks the column), the column
     * is read through its parts' values (lm_ranks_finish_packed) and its
     * rows are not filled. */
    int pieces = lm_ranks_evaluator_only(m, s->name, col->name);
    for (size_t p = 0; p < n_parts && pieces; p++)
      if (parts[p].n_rows && s->written[c][p] == 1 && !(s->part_col[c] && s->part_col[c][p] >= 0)) pieces = 0;
    if (pieces && !s->part_col[c]) {
      if (!(s->part_col[c] = lm_arena_alloc(t->arena, (m->n_parts + 1) * sizeof(int32_t))))
        return lm_oom(m->diag, m->dir);
      for (size_t p = 0; p <= m->n_parts; p++) s->part_col[c][p] = -1;
    }
    for (size_t p = 0; p < n_parts; p++)
      if (s->written[c][p] == 2 && pieces) s->part_col[c][p] = LM_RANKS_PART_VALUE;
      else if (s->written[c][p] == 2)
        for (size_t r = parts[p].at; r < parts[p].at + parts[p].n_rows; r++) col->values[r] = s->part_value[c][p];
  }
  return LM_OK;
}

/* The merged statistics from the parts' (merge.stats): what
 * lm_table_finish gives, without a pass over every cell. Before
 * canonical_columns, which reorders the columns and not these arrays. */
void lm_ranks_finish_stats(source *s) {
  lm_table *t = s->table;
  for (size_t c = 0; c < t->n_cols; c++) {
    lm_column *col = &t->cols[c];
    col->n_missing = s->missing[c];
    col->all_int = !s->not_int[c];
    if (col->text_ids) {
      col->all_int = 0;
      col->n_text = t->n_rows - col->n_missing;
    }
  }
}

/* Before pass 2, when every part is read from its database: the merged
 * tables with a column for every name pass 1 counted, so that a part's
 * read decodes its columns straight into its rows of them (place_part)
 * instead of into a table of its own that the merge copies and frees.
 * The sources the counted names hold (their sources' order is pass 1's). */
lm_status lm_ranks_place_columns(merge *m, size_t total) {
  lm_status st = LM_OK;
  if (!(m->placed = lm_map_new()) || !(m->dest = lm_arena_alloc(m->arena, (m->n_counted + 1) * sizeof *m->dest)))
    return lm_oom(m->diag, m->dir);
  for (size_t i = 0; st == LM_OK && i < m->n_counted; i++) {
    source *s = m->counted[i].source;
    if (!s->table && (st = make_table(m, s, total, 0)) != LM_OK) break;
    if ((st = add_merged(m, s, m->counted[i].name, 0, 0, SIZE_MAX, 0, m->dir)) != LM_OK) break;
    char key[1024];
    snprintf(key, sizeof key, "%s\037%s", s->name, m->counted[i].name);
    m->dest[i] = s->table->cols[s->table->n_cols - 1].values;
    if (lm_map_put(m->placed, key, (int64_t)i) != LM_OK) st = lm_oom(m->diag, m->dir);
  }
  return st;
}

/* Where a part's read decodes column (src, name): its rows of the merged
 * column, each once (a name twice in a part keeps its first, as the
 * merge does), or for a column only the evaluator reads, the thread's
 * scratch (packed from there, or else copied); NULL for anything else.
 * Read-only on the merge. */
double *lm_ranks_place(void *ctx, const char *src, const char *name, size_t n_rows) {
  lm_ranks_placement *pl = ctx;
  int64_t i;
  char key[1024];
  snprintf(key, sizeof key, "%s\037%s", src, name);
  if (n_rows != pl->n_rows || !pl->used || !lm_map_get(pl->m->placed, key, &i) || pl->used[i]) return NULL;
  pl->used[i] = 1;
  if (pl->scratch && pl->m->counted[i].later) return pl->scratch + (size_t)i * n_rows;
  return pl->m->dest[i] + pl->at;
}

/* The columns of s->table in the order one part after the other gives:
 * the first part's, then what each next part adds, in its order. */
lm_status lm_ranks_canonical_columns(source *s) {
  lm_table *t = s->table;
  size_t n = t->n_cols;
  size_t *idx = lm_malloc((n + 1) * sizeof *idx);
  lm_column *cols = lm_malloc((n + 1) * sizeof *cols);
  if (!idx || !cols) {
    lm_free(idx);
    lm_free(cols);
    return LM_ENOMEM;
  }
  for (size_t i = 0; i < n; i++) idx[i] = i;
  for (size_t i = 1; i < n; i++) { /* insertion sort: stable, columns are nearly in order */
    size_t v = idx[i], j = i;
    while (j > 0 && (s->first_part[idx[j - 1]] > s->first_part[v] ||
                     (s->first_part[idx[j - 1]] == s->first_part[v] && s->first_pos[idx[j - 1]] > s->first_pos[v]))) {
      idx[j] = idx[j - 1];
      j--;
    }
    idx[j] = v;
  }
  for (size_t i = 0; i < n; i++) cols[i] = t->cols[idx[i]];
  lm_status st = LM_OK;
  /* the packed columns' parts go with their columns (finish_packed) */
  int32_t **part_col = lm_malloc((n + 1) * sizeof *part_col);
  double **part_value = lm_malloc((n + 1) * sizeof *part_value);
  if (!part_col || !part_value) st = LM_ENOMEM;
  for (size_t i = 0; part_col && part_value && i < n; i++) {
    part_col[i] = s->part_col[idx[i]];
    part_value[i] = s->part_value[idx[i]];
  }
  for (size_t i = 0; part_col && part_value && i < n; i++) {
    s->part_col[i] = part_col[i];
    s->part_value[i] = part_value[i];
  }
  lm_free(part_col);
  lm_free(part_value);
  for (size_t i = 0; i < n; i++) {
    t->cols[i] = cols[i];
    if (lm_map_put(t->by_name, t->cols[i].name, (int64_t)i) != LM_OK) st = LM_ENOMEM;
  }
  lm_free(idx);
  lm_free(cols);
  return st;
}

/* Text ids in the order of first appearance (column by column, row by
 * row), whatever order the parts were read in. */
lm_status lm_ranks_canonical_strings(lm_table *t) {
  if (t->n_strings < 2) return LM_OK;
  int32_t *order = lm_malloc(t->n_strings * sizeof *order);
  const char **sorted = lm_malloc(t->n_strings * sizeof *sorted);
  if (!order || !sorted) {
    lm_free(order);
    lm_free(sorted);
    return LM_ENOMEM;
  }
  for (size_t i = 0; i < t->n_strings; i++) order[i] = -1;
  int32_t next = 0;
  for (size_t c = 0; c < t->n_cols; c++)
    for (size_t r = 0; t->cols[c].text_ids && r < t->n_rows; r++) {
      int32_t id = t->cols[c].text_ids[r];
      if (id >= 0 && (size_t)id < t->n_strings && order[id] < 0) order[id] = next++;
    }
  for (size_t i = 0; i < t->n_strings; i++)
    if (order[i] < 0) order[i] = next++;
  for (size_t c = 0; c < t->n_cols; c++)
    for (size_t r = 0; t->cols[c].text_ids && r < t->n_rows; r++) {
      int32_t id = t->cols[c].text_ids[r];
      if (id >= 0 && (size_t)id < t->n_strings) t->cols[c].text_ids[r] = order[id];
    }
  for (size_t i = 0; i < t->n_strings; i++) sorted[order[i]] = t->strings[i];
  lm_status st = LM_OK;
  for (size_t i = 0; i < t->n_strings; i++) {
    t->strings[i] = sorted[i];
    if (lm_map_put(t->string_index, sorted[i], (int64_t)i) != LM_OK) st = LM_ENOMEM;
  }
  lm_free(order);
  lm_free(sorted);
  return st;
}
