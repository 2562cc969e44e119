/*
 * packed.c - the merged counter columns of an MPI profile's rank.R parts that
 * only the evaluator reads (LM_DB_WANT_LATER), kept packed.
 *
 * Each part's integer columns become token planes of the merge's own, in the
 * column codec's integer form (lm_colcodec_int_tokens), one to three bytes a
 * row where a double takes eight; anything else is copied as doubles. The
 * merged column is a deferred column read through lm_packed_fetch, a part a
 * piece, which decodes the rows a block asks for. Invariants: every value
 * keeps its bits, and these columns cost their packed size, never a
 * column-sized array. docs/mpi.md, "Reading what the analysis needs".
 */
#include <stdint.h>
#include <string.h>

#include "columns/columns.h"
#include "db/db.h"
#include "ranks/ranks.h"
#include "ranks/merge.h"

struct lm_ranks_pack {
  size_t n_cols, n_rows;
  const unsigned char **planes; /* per column of the part's table: NULL
                                   where not packed; followed by their
                                   marks (an LM_PIECE_INT_FINE piece) */
  uint8_t *width;
  unsigned char *block;         /* every plane and mark */
};

void lm_ranks_pack_free(lm_ranks_pack *pk) {
  if (!pk) return;
  lm_free(pk->planes);
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
  size_t n_marks = n / LM_COLCODEC_MARK_ROWS + 1, n_fine = n / LM_COLCODEC_FINE_ROWS + 1;
  size_t marks_bytes = (n_marks + n_fine) * sizeof(int64_t);
  lm_status st = LM_OK;
  lm_ranks_pack *pk = lm_calloc(1, sizeof *pk);
  uint64_t *tokens = lm_malloc(n * sizeof *tokens);
  size_t *offset = lm_malloc(src->n_cols * sizeof *offset);
  size_t used = 0, cap = 0;
  if (!pk || !tokens || !offset) goto nomem;
  pk->n_cols = src->n_cols;
  pk->n_rows = n;
  pk->planes = lm_calloc(src->n_cols, sizeof *pk->planes);
  pk->width = lm_calloc(src->n_cols, 1);
  if (!pk->planes || !pk->width) goto nomem;
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
    int64_t *marks = (int64_t *)(void *)(pk->block + at_marks), *fine = marks + n_marks;
    lm_colcodec_int_marks(planes, width, n, LM_COLCODEC_FINE_ROWS, fine);
    for (size_t k = 0; k < n_marks; k++) marks[k] = fine[k * (LM_COLCODEC_MARK_ROWS / LM_COLCODEC_FINE_ROWS)];
    pk->width[c] = (uint8_t)width;
    used = need;
  }
  /* the block no longer moves: the pointers into it */
  for (size_t c = 0; c < src->n_cols; c++)
    if (pk->width[c]) pk->planes[c] = pk->block + offset[c];
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

/* The packs of a merged table's parts, kept as they are read: the
 * table's fetch_state until lm_ranks_finish_packed, then the owner of its
 * lm_packed. */
typedef struct packed_parts {
  size_t n_parts;
  lm_ranks_pack **packs; /* per part: its packed columns (NULL: none) */
} packed_parts;

static void parts_release(void *state) {
  packed_parts *pp = state;
  if (!pp) return;
  for (size_t p = 0; p < pp->n_parts; p++) lm_ranks_pack_free(pp->packs[p]);
  /* The rest lives in the table's arena. */
}

/* The packs of s's merged table, made with its first pack and released
 * with the table (so that a read that fails frees the packs kept so far);
 * NULL when out of memory. */
static packed_parts *parts_of(merge *m, source *s) {
  lm_table *t = s->table;
  if (t->fetch_state) return t->fetch_release == parts_release ? t->fetch_state : NULL;
  packed_parts *pp = lm_arena_alloc(t->arena, sizeof *pp);
  if (!pp) return NULL;
  memset(pp, 0, sizeof *pp);
  pp->n_parts = m->n_parts;
  if (!(pp->packs = lm_arena_alloc(t->arena, (m->n_parts + 1) * sizeof *pp->packs))) return NULL;
  memset(pp->packs, 0, (m->n_parts + 1) * sizeof *pp->packs);
  t->fetch_state = pp;
  t->fetch_release = parts_release;
  return pp;
}

lm_status lm_ranks_keep_pack(merge *m, source *s, lm_ranks_pack *pk, size_t part_index) {
  if (!pk) return LM_OK;
  packed_parts *pp = s && s->table ? parts_of(m, s) : NULL;
  if (!pp || pp->packs[part_index]) {
    lm_ranks_pack_free(pk);
    return lm_oom(m->diag, m->dir);
  }
  pp->packs[part_index] = pk;
  return LM_OK;
}

/* Column c's pieces, one a part: its one value, its packed planes, or its
 * rows of the merged column's doubles. */
static void part_pieces(const source *s, const packed_parts *pp, const part *parts, size_t n_parts, size_t c,
                        const double *values, lm_piece *pieces) {
  const int32_t *pc = s->part_col[c];
  for (size_t p = 0; p < n_parts; p++) {
    lm_piece *piece = &pieces[p];
    if (pc[p] == LM_RANKS_PART_VALUE) {
      piece->kind = LM_PIECE_SAME;
      memcpy(&piece->u.bits, &s->part_value[c][p], sizeof piece->u.bits);
    } else if (pc[p] < 0) {
      piece->kind = LM_PIECE_RAW;
      piece->u.data = values && parts[p].n_rows ? values + parts[p].at : values;
    } else {
      const lm_ranks_pack *pk = pp->packs[p];
      piece->kind = LM_PIECE_INT_FINE;
      piece->u.data = pk->planes[pc[p]];
      piece->width = pk->width[pc[p]];
    }
  }
}

lm_status lm_ranks_finish_packed(merge *m, source *s, const part *parts, size_t n_parts) {
  lm_table *t = s->table;
  int any = 0;
  for (size_t c = 0; c < t->n_cols && !any; c++) any = s->part_col[c] != NULL;
  if (!any) return LM_OK;
  packed_parts *pp = parts_of(m, s);
  lm_packed *pk = pp ? lm_packed_new(t->n_cols) : NULL;
  size_t *at = lm_arena_alloc(t->arena, (n_parts + 1) * sizeof *at);
  size_t *len = lm_arena_alloc(t->arena, (n_parts + 1) * sizeof *len);
  if (!pk || !at || !len) goto nomem;
  for (size_t p = 0; p < n_parts; p++) {
    at[p] = parts[p].at;
    len[p] = parts[p].n_rows;
  }
  pk->n_pieces = n_parts;
  pk->at = at;
  pk->len = len;
  for (size_t c = 0; c < t->n_cols; c++) {
    if (!s->part_col[c]) continue;
    lm_piece *pieces = lm_arena_alloc(t->arena, (n_parts + 1) * sizeof *pieces);
    if (!pieces) goto nomem;
    memset(pieces, 0, (n_parts + 1) * sizeof *pieces);
    part_pieces(s, pp, parts, n_parts, c, t->cols[c].values, pieces);
    pk->cols[c] = pieces;
  }
  /* The pieces answer from now on, owning the packs. */
  for (size_t c = 0; c < t->n_cols; c++)
    if (s->part_col[c]) {
      t->cols[c].values = NULL;
      t->cols[c].deferred = 1;
    }
  pk->owner = pp;
  pk->owner_free = parts_release;
  t->fetch_state = pk;
  t->fetch_release = lm_packed_release;
  t->fetch = lm_packed_fetch;
  return LM_OK;
nomem:
  lm_packed_release(pk);
  return lm_oom(m->diag, m->dir);
}
