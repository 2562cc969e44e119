/*
 * fetch.c - the one fetch of packed columns (lm_packed_fetch): the store's
 * token planes kept by a read, the in-memory packs and an MPI profile's
 * merged parts all hand the table an lm_packed, cut into pieces of rows.
 *
 * A request's rows are taken piece by piece: the rows that fall in one
 * piece in a row are decoded from it at once, a run of them without a row
 * index (from the finer mark before it when the piece has them). Every
 * value comes back with the bits it was packed with.
 */
#include <stdint.h>
#include <string.h>

#include "columns/columns.h"

_Static_assert(LM_COLCODEC_MARK_ROWS % LM_COLCODEC_FINE_ROWS == 0, "coarse marks fall on fine ones");

lm_packed *lm_packed_new(size_t n_cols) {
  lm_packed *pk = lm_calloc(1, sizeof *pk);
  if (!pk) return NULL;
  if (!(pk->cols = lm_calloc(n_cols ? n_cols : 1, sizeof *pk->cols))) {
    lm_free(pk);
    return NULL;
  }
  return pk;
}

void lm_packed_release(void *state) {
  lm_packed *pk = state;
  if (!pk) return;
  if (pk->owner_free) pk->owner_free(pk->owner);
  lm_free(pk->cols);
  lm_free(pk);
}

lm_packed *lm_packed_of(const lm_table *t, void (*owner_free)(void *owner)) {
  if (t->fetch != lm_packed_fetch || !t->fetch_state) return NULL;
  lm_packed *pk = t->fetch_state;
  return !owner_free || pk->owner_free == owner_free ? pk : NULL;
}

const int64_t *lm_piece_marks(const lm_piece *pc, size_t n) {
  uintptr_t end = (uintptr_t)pc->u.data + n * pc->width;
  return (const int64_t *)(end + 7 - (end + 7) % 8);
}

/* Piece p's first row and rows. */
static void piece_rows(const lm_packed *pk, size_t n_rows, size_t p, size_t *lo, size_t *n) {
  if (pk->every) {
    *lo = p * pk->every;
    *n = n_rows - *lo < pk->every ? n_rows - *lo : pk->every;
  } else {
    *lo = pk->at[p];
    *n = pk->len[p];
  }
}

/* The piece holding row r (below the table's rows): the last with a first
 * row at or below r, which is one with rows. */
static size_t piece_of(const lm_packed *pk, size_t r) {
  if (pk->every) return r / pk->every;
  size_t lo = 0, hi = pk->n_pieces;
  while (hi - lo > 1) {
    size_t mid = lo + (hi - lo) / 2;
    if (pk->at[mid] <= r) lo = mid;
    else hi = mid;
  }
  return lo;
}

/* Rows rows[0..k) of a piece of n rows from row lo, all inside it, into
 * out; run: they follow each other. local: the rows counted from lo, for
 * integer pieces not in a run (NULL when lo is 0: rows then). */
static void piece_get(const lm_piece *pc, size_t n, size_t lo, const size_t *rows, const size_t *local, size_t k,
                      int run, double *out) {
  size_t first = rows[0] - lo;
  if (pc->kind == LM_PIECE_SAME) {
    double v;
    memcpy(&v, &pc->u.bits, sizeof v);
    for (size_t q = 0; q < k; q++) out[q] = v;
    return;
  }
  if (pc->kind == LM_PIECE_RAW) {
    const double *v = pc->u.data;
    if (run) memcpy(out, v + first, k * sizeof *v);
    else
      for (size_t q = 0; q < k; q++) out[q] = v[rows[q] - lo];
    return;
  }
  static const int64_t zero[1] = {0};
  const unsigned char *planes = pc->u.data;
  const int64_t *marks = pc->kind == LM_PIECE_INT ? zero : lm_piece_marks(pc, n);
  if (run && pc->kind == LM_PIECE_INT_FINE) {
    /* From the finer mark before the run: the planes from that row on
     * (their stride stays the piece's rows), that mark first. */
    size_t base = first / LM_COLCODEC_FINE_ROWS * LM_COLCODEC_FINE_ROWS;
    const int64_t *fine = marks + n / LM_COLCODEC_MARK_ROWS + 1;
    lm_colcodec_int_range(planes + base, pc->width, n, fine + base / LM_COLCODEC_FINE_ROWS, first - base, k, out);
  } else if (run) {
    lm_colcodec_int_range(planes, pc->width, n, marks, first, k, out);
  } else {
    lm_colcodec_int_rows(planes, pc->width, n, marks, local ? local : rows, k, out);
  }
}

lm_status lm_packed_fetch(const lm_table *t, const long *cols, size_t n_cols, const size_t *rows, size_t n_rows,
                          double *const *out, lm_diag *diag) {
  const lm_packed *pk = t->fetch_state;
  size_t *local = NULL;
  lm_status st = LM_OK;
  for (size_t k = 0; k < n_cols; k++) {
    long c = cols[k];
    if (c < 0 || (size_t)c >= t->n_cols) {
      st = lm_fail(diag, LM_EINVAL, t->path, "no such column");
      goto done;
    }
    const lm_piece *pieces = pk->cols[c];
    double *o = out[k];
    if (!pieces) {
      const double *v = t->cols[c].values;
      for (size_t i = 0; i < n_rows; i++) o[i] = v && rows[i] < t->n_rows ? v[rows[i]] : LM_NAN;
      continue;
    }
    size_t p = 0, lo = 0, n = 0;
    for (size_t i = 0; i < n_rows;) {
      size_t r = rows[i];
      if (r >= t->n_rows) {
        o[i++] = LM_NAN;
        continue;
      }
      if (r < lo || r - lo >= n) {
        p = piece_of(pk, r);
        piece_rows(pk, t->n_rows, p, &lo, &n);
      }
      size_t j = i + 1;
      while (j < n_rows && rows[j] >= lo && rows[j] - lo < n) j++;
      const lm_piece *pc = &pieces[p];
      size_t *at = NULL;
      int run = 1;
      for (size_t q = i + 1; q < j && run; q++) run = rows[q] == rows[q - 1] + 1;
      if (!run && lo && pc->kind != LM_PIECE_SAME && pc->kind != LM_PIECE_RAW) {
        /* the rows counted from the piece's first, for its row index */
        if (!local && !(local = lm_malloc(n_rows * sizeof *local))) {
          st = lm_oom(diag, t->path);
          goto done;
        }
        for (size_t q = i; q < j; q++) local[q - i] = rows[q] - lo;
        at = local;
      }
      piece_get(pc, n, lo, rows + i, at, j - i, run, o + i);
      i = j;
    }
  }
done:
  lm_free(local);
  return st;
}
