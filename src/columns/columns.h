/*
 * columns.h - the packed column format shared by the store, the in-memory
 * packs and the merge of an MPI profile's parts: a column of doubles
 * encoded compactly (integers as byte planes of zigzag deltas, other
 * values zstd-compressed), the one fetch of a table whose columns are
 * kept packed (lm_packed), and the packing of a table's deferred columns
 * in memory. Every 64-bit pattern comes back unchanged. Format:
 * docs/workload-format.md.
 */
#ifndef LUMEN_COLUMNS_H
#define LUMEN_COLUMNS_H

#include <stddef.h>
#include <stdint.h>

#include "base/base.h"
#include "model/model.h"


/* How column_data.data holds a column (column_data.codec): 0 (or NULL, in
 * stores written before the codec) n little-endian doubles; 1 the compact
 * encoding of codec.c (docs/workload-format.md). */
enum { LM_CODEC_RAW = 0, LM_CODEC_COMPACT = 1 };

/* A column encoder and decoder with its compression contexts and scratch
 * space, reused from column to column. Not shared between threads. */
typedef struct lm_colcodec lm_colcodec;

/* lm_colcodec_new: NULL when out of memory. lm_colcodec_free(NULL) is a no-op. */
lm_colcodec *lm_colcodec_new(void);
void lm_colcodec_free(lm_colcodec *codec);

/* lm_colcodec_encode: the compact encoding of values[0..n). *blob points
 * into the codec (valid until its next call), *len its size. The 64-bit
 * pattern of every value comes back from lm_colcodec_decode unchanged
 * (NaN payloads, -0.0, denormals). Errors: out of memory. */
lm_status lm_colcodec_encode(lm_colcodec *codec, const double *values, size_t n, const void **blob,
                             size_t *len, lm_diag *diag);

/* lm_colcodec_decode: blob (len bytes, from lm_colcodec_encode) into
 * values[0..n). A blob that is not an encoding of exactly n values gives
 * LM_EDATA with field "column_data.data" and the reason (the caller adds
 * which workload and column); nothing is read or written out of bounds. */
lm_status lm_colcodec_decode(lm_colcodec *codec, const void *blob, size_t len, size_t n, double *values,
                             lm_diag *diag);

/* lm_colcodec_constant: 1 and *value when blob encodes one value repeated
 * in every row (an all-zero or constant column), else 0. */
int lm_colcodec_constant(const void *blob, size_t len, double *value);

/* Rows between two marks of lm_colcodec_int_index. */
#define LM_COLCODEC_MARK_ROWS 1024

/* lm_colcodec_int_planes: for a blob of the integer encoding ('I') of n
 * values, its token planes: *width planes of n bytes each, in the codec's
 * scratch (valid until its next call); *planes NULL for other encodings.
 * Checks as lm_colcodec_decode does (same errors). */
lm_status lm_colcodec_int_planes(lm_colcodec *codec, const void *blob, size_t len, size_t n,
                                 const unsigned char **planes, size_t *width, lm_diag *diag);

/* lm_colcodec_int_index: one walk over the planes of n rows: marks[m]
 * (n / LM_COLCODEC_MARK_ROWS + 1 entries) gets the integer before row m *
 * LM_COLCODEC_MARK_ROWS, row_missing[r] is set to 1 for a blank row (when
 * not NULL). Returns the number of blank rows. */
size_t lm_colcodec_int_index(const unsigned char *planes, size_t width, size_t n, int64_t *marks,
                             uint8_t *row_missing);

/* lm_colcodec_int_tokens: the integer form's tokens of values[0..n) into
 * tokens[0..n) (0 for a blank, the canonical NaN; else 1 + the zigzag of
 * the difference to the previous integer, the first from 0) and *width,
 * the bytes the largest needs (1 to 8): 1 when every value is a blank or
 * an integer the form keeps exactly (|v| < 2^62, not -0.0), else 0. */
int lm_colcodec_int_tokens(const double *values, size_t n, uint64_t *tokens, size_t *width);
/* lm_colcodec_int_put_planes: the tokens as width planes of n bytes
 * (planes[b * n + i]: byte b of token i), the layout lm_colcodec_int_rows
 * reads. */
void lm_colcodec_int_put_planes(const uint64_t *tokens, size_t n, size_t width, unsigned char *planes);
/* lm_colcodec_int_marks: marks[m] (n / every + 1 entries) gets the
 * integer before row m * every of the planes of n rows, as
 * lm_colcodec_int_index does for every = LM_COLCODEC_MARK_ROWS; every 0:
 * nothing is written. */
void lm_colcodec_int_marks(const unsigned char *planes, size_t width, size_t n, size_t every, int64_t *marks);
/* lm_colcodec_int_rows: the values lm_colcodec_decode gives at rows[0..k)
 * (in any order; NaN for a row at or past n) into out, from the planes and
 * the marks of lm_colcodec_int_index. Reads only; safe from two threads. */
void lm_colcodec_int_rows(const unsigned char *planes, size_t width, size_t n, const int64_t *marks,
                          const size_t *rows, size_t k, double *out);
/* lm_colcodec_int_range: the same for rows first .. first + k - 1, all
 * below n. */
void lm_colcodec_int_range(const unsigned char *planes, size_t width, size_t n, const int64_t *marks,
                           size_t first, size_t k, double *out);

/* A table's packed columns, read through lm_packed_fetch: each packed
 * column is cut into the same pieces of rows (the in-memory packs' blocks,
 * an MPI profile's parts, or one piece of every row), and each piece is
 * one bit pattern, doubles, or the integer token planes above. */
enum {
  LM_PIECE_SAME,      /* every row: the bits u.bits */
  LM_PIECE_RAW,       /* u.data: the piece's doubles */
  LM_PIECE_INT,       /* u.data: the token planes, at most
                         LM_COLCODEC_MARK_ROWS rows (one mark, 0) */
  LM_PIECE_INT_MARKS, /* ... any rows, followed (8-aligned) by their
                         marks of lm_colcodec_int_index */
  LM_PIECE_INT_FINE   /* ... followed by those marks and marks every
                         LM_COLCODEC_FINE_ROWS rows (lm_colcodec_int_marks) */
};

/* Rows between two of the finer marks of an LM_PIECE_INT_FINE piece: a
 * run of rows that starts inside the piece is decoded from the one
 * before it, stepping over at most this many tokens. */
#define LM_COLCODEC_FINE_ROWS 128

/* One piece of a packed column. */
typedef struct lm_piece {
  union {
    uint64_t bits;    /* LM_PIECE_SAME */
    const void *data; /* the others: doubles or planes (8-aligned) */
  } u;
  uint8_t kind;  /* LM_PIECE_* */
  uint8_t width; /* integer pieces: bytes a token (the planes) */
} lm_piece;

/* The fetch_state of a table read through lm_packed_fetch. */
typedef struct lm_packed {
  size_t n_pieces;   /* pieces of every packed column */
  size_t every;      /* rows of a piece (the last may have fewer); 0: at
                        and len say */
  const size_t *at;  /* every 0: each piece's first row, ascending (an
                        empty piece shares it with the next) */
  const size_t *len; /* every 0: each piece's rows */
  const lm_piece **cols; /* per column of the table: its n_pieces pieces;
                            NULL: a loaded column (its values) */
  void *owner;       /* what holds the pieces, planes and doubles */
  void (*owner_free)(void *owner); /* frees owner with the table */
} lm_packed;

/* lm_packed_new: a state for a table of n_cols columns (every cols[c]
 * NULL), owning nothing yet; NULL when out of memory. */
lm_packed *lm_packed_new(size_t n_cols);
/* lm_packed_release: frees the state and its owner (owner_free); NULL is
 * a no-op. A table's fetch_release. */
void lm_packed_release(void *state);
/* lm_packed_fetch: the lm_table_fetch_fn of a table whose fetch_state is
 * an lm_packed: each run of rows in one piece decoded from that piece. */
lm_status lm_packed_fetch(const lm_table *t, const long *cols, size_t n_cols, const size_t *rows, size_t n_rows,
                          double *const *out, lm_diag *diag);
/* lm_packed_of: t's lm_packed when it reads through lm_packed_fetch and
 * its owner is freed by owner_free (NULL: any owner), else NULL. */
lm_packed *lm_packed_of(const lm_table *t, void (*owner_free)(void *owner));
/* lm_piece_marks: the marks that follow the n rows of an
 * LM_PIECE_INT_MARKS or LM_PIECE_INT_FINE piece. */
const int64_t *lm_piece_marks(const lm_piece *pc, size_t n);

/* lm_table_pack: every deferred column of t read from its file in one
 * pass (two threads) and kept packed in memory (pack.c), t's fetch
 * then reading the packs and the file let go: for a caller that reads the
 * columns more than once. *packed is 1 then; 0, with t as it was, when
 * the packs would take more than cap bytes (or t has no deferred
 * column). Errors: the file's (as its fetch reports them), out of memory
 * (t as it was). */
lm_status lm_table_pack(lm_table *t, size_t cap, int *packed, lm_diag *diag);
/* lm_table_packed_bytes: the memory of t's packs (0 when not packed). */
size_t lm_table_packed_bytes(const lm_table *t);

#endif
