/*
 * packed.c - the merged counter columns of an MPI profile's rank.R parts that
 * only the evaluator reads (LM_DB_WANT_LATER), kept packed.
 *
 * Each part's integer columns become token planes of the merge's own, in the
 * column codec's integer form (lm_colcodec_int_tokens), one to three
 * bytes a row where a double takes eight; anything else is copied as doubles.
 * The merged column is a deferred column whose fetch decodes the rows a block
 * asks for. Invariants: every value keeps its bits, and these columns cost
 * their packed size, never a column-sized array. docs/mpi.md, "Reading what
 * the analysis needs".
 */
#include <stdint.h>
#include <string.h>

#include "columns/columns.h"
#include "db/db.h"
#include "ranks/ranks.h"
#include "ranks/merge.h"

/* Rows between two of the finer marks: a run of rows that starts inside a
 * part is decoded from the nearest one before it, so a block of dispatches
 * that begins in the middle of a part steps over at most this many
 * tokens (LM_COLCODEC_MARK_ROWS would be about half a part). */
#define SUB_ROWS 128
_Static_assert(LM_COLCODEC_MARK_ROWS % SUB_ROWS == 0, "coarse marks fall on fine ones");

struct lm_ranks_pack {
  size_t n_cols, n_rows;
  const unsigned char **planes; /* per column of the part's table: NULL
                                   where not packed */
  const int64_t **marks;        /* the integer before every
                                   LM_COLCODEC_MARK_ROWS-th row, as
                                   lm_colcodec_int_index gives them */
  const int64_t **sub;          /* ... before every SUB_ROWS-th row */
  uint8_t *width;
  unsigned char *block;         /* every plane and mark */
};

void lm_ranks_pack_free(lm_ranks_pack *pk) {
  if (!pk) return;
  lm_free(pk->planes);
  lm_free(pk->marks);
  lm_free(pk->sub);
  lm_free(pk->width);
  lm_free(pk->block);
  lm_free(pk);
}

int lm_ranks_packed(const lm_ranks_pack *pk, size_t c) { return pk && c < pk->n_cols && pk->planes[c]; }

/* Whether values[0..n) hold one bit pattern. */
static int same_bits(const double *values, size_t n) {
  for (size_t r = 1; r < n; r++)
    if (memcmp(&values[r], &values[0], sizeof *values) != 0) return 0;
  return 1;
}

/* Whether column c of src is one to pack: only the evaluator reads it,
 * decoded into the scratch or held by a part loaded elsewhere. */
static int to_pack(const merge *m, const lm_table *src, size_t c, const double *scratch, size_t n_scratch,
                   int elsewhere) {
  const unsigned char *planes;
  size_t width;
  if (lm_table_kept_planes(src, c, &planes, &width)) return 1;
  const double *v = src->cols[c].values;
  if (!v || src->cols[c].text_ids) return 0;
  if (v >= scratch && v < scratch + n_scratch) return 1;
  return elsewhere && lm_ranks_evaluator_only(m, src->name, src->cols[c].name);
}

lm_status lm_ranks_pack_table(const merge *m, const lm_table *src, const double *scratch, size_t n_scratch,
                              int elsewhere, lm_ranks_pack **out, lm_diag *diag) {
  *out = NULL;
  size_t n = src->n_rows, n_packed = 0;
  if (!n || !scratch) return LM_OK;
  for (size_t c = 0; c < src->n_cols; c++) n_packed += to_pack(m, src, c, scratch, n_scratch, elsewhere);
  if (!n_packed) return LM_OK;
  size_t n_marks = n / LM_COLCODEC_MARK_ROWS + 1, n_sub = n / SUB_ROWS + 1;
  size_t marks_bytes = (n_marks + n_sub) * sizeof(int64_t);
  lm_status st = LM_OK;
  lm_ranks_pack *pk = lm_calloc(1, sizeof *pk);
  uint64_t *tokens = lm_malloc(n * sizeof *tokens);
  size_t *offset = lm_malloc(src->n_cols * sizeof *offset);
  size_t used = 0, cap = 0;
  if (!pk || !tokens || !offset) goto nomem;
  pk->n_cols = src->n_cols;
  pk->n_rows = n;
  pk->planes = lm_calloc(src->n_cols, sizeof *pk->planes);
  pk->marks = lm_calloc(src->n_cols, sizeof *pk->marks);
  pk->sub = lm_calloc(src->n_cols, sizeof *pk->sub);
  pk->width = lm_calloc(src->n_cols, 1);
  if (!pk->planes || !pk->marks || !pk->sub || !pk->width) goto nomem;
  for (size_t c = 0; c < src->n_cols; c++) {
    const unsigned char *kept = NULL;
    size_t width = 1;
    /* Left as its stored token planes by the part's read: taken as they
     * are. Else one value (shared or kept as that value by the merge) or
     * a value the integer form does not hold leaves the column as it is. */
    if (!lm_table_kept_planes(src, c, &kept, &width) &&
        (!to_pack(m, src, c, scratch, n_scratch, elsewhere) || same_bits(src->cols[c].values, n) ||
         !lm_colcodec_int_tokens(src->cols[c].values, n, tokens, &width)))
      continue;
    /* the planes, then both kinds of marks 8-aligned */
    size_t at_marks = (used + n * width + 7) & ~(size_t)7, need = at_marks + marks_bytes;
    if (need > cap) {
      size_t grown = cap ? cap : n_packed * (n * 2 + marks_bytes + 8);
      while (grown < need) grown *= 2;
      unsigned char *b = lm_realloc(pk->block, grown);
      if (!b) goto nomem;
      pk->block = b;
      cap = grown;
    }
    offset[c] = used;
    unsigned char *planes = pk->block + used;
    if (kept) memcpy(planes, kept, n * width);
    else lm_colcodec_int_put_planes(tokens, n, width, planes);
    /* the coarse marks are every few fine ones */
    int64_t *coarse = (int64_t *)(void *)(pk->block + at_marks), *sub = coarse + n_marks;
    lm_colcodec_int_marks(planes, width, n, SUB_ROWS, sub);
    for (size_t k = 0; k < n_marks; k++) coarse[k] = sub[k * (LM_COLCODEC_MARK_ROWS / SUB_ROWS)];
    pk->width[c] = (uint8_t)width;
    used = need;
  }
  /* the block no longer moves: the pointers into it */
  for (size_t c = 0; c < src->n_cols; c++) {
    if (!pk->width[c]) continue;
    size_t at_marks = (offset[c] + n * pk->width[c] + 7) & ~(size_t)7;
    pk->planes[c] = pk->block + offset[c];
    pk->marks[c] = (const int64_t *)(const void *)(pk->block + at_marks);
    pk->sub[c] = pk->marks[c] + n_marks;
  }
  if (used) {
    *out = pk;
    pk = NULL;
  }
  goto done;
nomem:
  st = lm_oom(diag, src->path);
done:
  lm_ranks_pack_free(pk);
  lm_free(tokens);
  lm_free(offset);
  return st;
}

/* A merged table's packed columns: the fetch_state of the table. */
typedef struct packed_state {
  size_t n_parts;
  size_t *at, *rows;        /* per part: its first merged row, its rows */
  lm_ranks_pack **packs;    /* per part: its packed columns (NULL: none) */
  int32_t **part_col;       /* per column of the table: see source.part_col */
  double **part_value;      /* per column: the one value of each part
                               (part_col LM_RANKS_PART_VALUE) */
  double **values;          /* per column: the rows of the other parts */
} packed_state;

/* The part holding merged row r (< the table's rows): the last with a
 * first row at or below r, which is one with rows (empty parts share
 * their first row with the next). */
static size_t part_of(const packed_state *ps, size_t r) {
  size_t lo = 0, hi = ps->n_parts;
  while (hi - lo > 1) {
    size_t mid = lo + (hi - lo) / 2;
    if (ps->at[mid] <= r) lo = mid;
    else hi = mid;
  }
  return lo;
}

static lm_status packed_fetch(const lm_table *t, const long *cols, size_t n_cols, const size_t *rows,
                              size_t n_rows, double *const *out, lm_diag *diag) {
  const packed_state *ps = t->fetch_state;
  size_t *local = NULL;
  for (size_t k = 0; k < n_cols; k++) {
    if (cols[k] < 0 || (size_t)cols[k] >= t->n_cols) {
      lm_free(local);
      return lm_fail(diag, LM_EINVAL, t->path, "no such column");
    }
    size_t c = (size_t)cols[k];
    const int32_t *pc = ps->part_col[c];
    double *o = out[k];
    if (!pc) {
      const double *v = t->cols[c].values;
      for (size_t i = 0; i < n_rows; i++) o[i] = rows[i] < t->n_rows ? v[rows[i]] : LM_NAN;
      continue;
    }
    const double *v = ps->values[c];
    if (!local && !(local = lm_malloc((n_rows ? n_rows : 1) * sizeof *local))) return lm_oom(diag, t->path);
    size_t p = 0;
    for (size_t i = 0; i < n_rows;) {
      size_t r = rows[i];
      if (r >= t->n_rows) {
        o[i++] = LM_NAN;
        continue;
      }
      if (r < ps->at[p] || r - ps->at[p] >= ps->rows[p]) p = part_of(ps, r);
      size_t lo = ps->at[p], n = ps->rows[p], j = i;
      while (j < n_rows && rows[j] >= lo && rows[j] - lo < n) j++;
      if (pc[p] == LM_RANKS_PART_VALUE) {
        for (size_t q = i; q < j; q++) o[q] = ps->part_value[c][p];
      } else if (pc[p] < 0) {
        for (size_t q = i; q < j; q++) o[q] = v[rows[q]];
      } else {
        const lm_ranks_pack *pk = ps->packs[p];
        size_t pcol = (size_t)pc[p];
        int run = 1;
        for (size_t q = i; q < j; q++) {
          local[q - i] = rows[q] - lo;
          run &= q == i || rows[q] == rows[q - 1] + 1;
        }
        if (run) {
          /* From the finer mark before the run: the planes from that row
           * on (their stride stays the part's rows), that mark first. */
          size_t base = local[0] / SUB_ROWS * SUB_ROWS;
          for (size_t q = 0; q < j - i; q++) local[q] -= base;
          lm_colcodec_int_rows(pk->planes[pcol] + base, pk->width[pcol], pk->n_rows, pk->sub[pcol] + base / SUB_ROWS,
                               local, j - i, o + i);
        } else {
          lm_colcodec_int_rows(pk->planes[pcol], pk->width[pcol], pk->n_rows, pk->marks[pcol], local, j - i, o + i);
        }
      }
      i = j;
    }
  }
  lm_free(local);
  return LM_OK;
}

static void packed_release(void *state) {
  packed_state *ps = state;
  if (!ps) return;
  for (size_t p = 0; p < ps->n_parts; p++) lm_ranks_pack_free(ps->packs[p]);
  /* The rest lives in the table's arena. */
}

/* The packed state of s's merged table, made with its first pack and
 * released with the table (so that a read that fails frees the packs
 * kept so far); NULL when out of memory. */
static packed_state *state_of(merge *m, source *s) {
  lm_table *t = s->table;
  if (t->fetch_state) return t->fetch_release == packed_release ? t->fetch_state : NULL;
  packed_state *ps = lm_arena_alloc(t->arena, sizeof *ps);
  if (!ps) return NULL;
  memset(ps, 0, sizeof *ps);
  ps->n_parts = m->n_parts;
  if (!(ps->packs = lm_arena_alloc(t->arena, (m->n_parts + 1) * sizeof *ps->packs))) return NULL;
  memset(ps->packs, 0, (m->n_parts + 1) * sizeof *ps->packs);
  t->fetch_state = ps;
  t->fetch_release = packed_release;
  return ps;
}

lm_status lm_ranks_keep_pack(merge *m, source *s, lm_ranks_pack *pk, size_t part_index) {
  if (!pk) return LM_OK;
  packed_state *ps = s && s->table ? state_of(m, s) : NULL;
  if (!ps || ps->packs[part_index]) {
    lm_ranks_pack_free(pk);
    return lm_oom(m->diag, m->dir);
  }
  ps->packs[part_index] = pk;
  return LM_OK;
}

lm_status lm_ranks_finish_packed(merge *m, source *s, const part *parts, size_t n_parts) {
  lm_table *t = s->table;
  int any = 0;
  for (size_t c = 0; c < t->n_cols && !any; c++) any = s->part_col[c] != NULL;
  if (!any) return LM_OK;
  packed_state *ps = state_of(m, s);
  if (!ps) goto nomem;
  ps->at = lm_arena_alloc(t->arena, (n_parts + 1) * sizeof *ps->at);
  ps->rows = lm_arena_alloc(t->arena, (n_parts + 1) * sizeof *ps->rows);
  ps->part_col = lm_arena_alloc(t->arena, (t->n_cols + 1) * sizeof *ps->part_col);
  ps->values = lm_arena_alloc(t->arena, (t->n_cols + 1) * sizeof *ps->values);
  ps->part_value = lm_arena_alloc(t->arena, (t->n_cols + 1) * sizeof *ps->part_value);
  if (!ps->at || !ps->rows || !ps->part_col || !ps->values || !ps->part_value) goto nomem;
  for (size_t p = 0; p < n_parts; p++) {
    ps->at[p] = parts[p].at;
    ps->rows[p] = parts[p].n_rows;
  }
  for (size_t c = 0; c < t->n_cols; c++) {
    lm_column *col = &t->cols[c];
    ps->part_col[c] = s->part_col[c];
    ps->part_value[c] = s->part_value[c];
    ps->values[c] = col->values;
    if (!s->part_col[c]) continue;
    col->values = NULL;
    col->deferred = 1;
  }
  t->fetch = packed_fetch;
  return LM_OK;
nomem:
  return lm_oom(m->diag, m->dir);
}
