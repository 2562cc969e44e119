/*
 * codec.c - the compact encoding of a stored counter column (column_data.data
 * with codec = 1): 'C' one bit pattern for every row, 'I' integer tokens (0 a
 * blank, else 1 + zigzag of the difference to the previous integer) grouped
 * by byte position under zstd, 'S' the 8 bytes of every other double grouped
 * by byte position under zstd.
 *
 * Invariants: every 64-bit pattern comes back (NaN payloads, -0.0); decoding
 * checks every length against the row count, so a truncated or altered blob
 * is reported, never read past. Byte planes leave the redundancy to zstd and
 * decode without a branch per byte (layout: docs/workload-format.md).
 */
#include <math.h>
#include <stdint.h>
#include <string.h>
#include <zstd.h>

#include "columns/columns.h"

/* zstd's level 1: the fastest; higher levels gain little on these streams
 * and cost import time (docs/perf.md). */
#define ZSTD_LEVEL 1
/* Integers that stay exact as int64 deltas of each other. */
#define INT_LIMIT 4611686018427387904.0 /* 2^62 */

struct lm_colcodec {
  ZSTD_CCtx *cctx;
  ZSTD_DCtx *dctx;
  unsigned char *scratch; /* the stream before compression / after it */
  size_t scratch_cap;
  unsigned char *out;     /* the encoded blob */
  size_t out_cap;
};

lm_colcodec *lm_colcodec_new(void) {
  lm_colcodec *c = lm_calloc(1, sizeof *c);
  if (!c) return NULL;
  c->cctx = ZSTD_createCCtx();
  c->dctx = ZSTD_createDCtx();
  if (!c->cctx || !c->dctx) {
    lm_colcodec_free(c);
    return NULL;
  }
  return c;
}

void lm_colcodec_free(lm_colcodec *c) {
  if (!c) return;
  ZSTD_freeCCtx(c->cctx);
  ZSTD_freeDCtx(c->dctx);
  lm_free(c->scratch);
  lm_free(c->out);
  lm_free(c);
}

static int reserve(unsigned char **p, size_t *cap, size_t need) {
  if (need <= *cap) return 1;
  size_t grown = need + need / 4 + 64;
  unsigned char *q = lm_realloc(*p, grown);
  if (!q) return 0;
  *p = q;
  *cap = grown;
  return 1;
}

static uint64_t bits_of(double v) {
  uint64_t u;
  memcpy(&u, &v, sizeof u);
  return u;
}

static double of_bits(uint64_t u) {
  double v;
  memcpy(&v, &u, sizeof v);
  return v;
}

/* The NaN lumen writes for a blank cell. */
static uint64_t blank_bits(void) { return bits_of(LM_NAN); }

int lm_colcodec_int_tokens(const double *v, size_t n, uint64_t *tokens, size_t *width) {
  uint64_t blank = blank_bits(), all = 0;
  int64_t prev = 0;
  for (size_t i = 0; i < n; i++) {
    double x = v[i];
    if (bits_of(x) == blank) {
      tokens[i] = 0;
      continue;
    }
    if (!(fabs(x) < INT_LIMIT) || x != (double)(int64_t)x || (x == 0 && signbit(x))) return 0;
    int64_t k = (int64_t)x;
    uint64_t d = (uint64_t)k - (uint64_t)prev;
    tokens[i] = ((d << 1) ^ (uint64_t)((int64_t)d >> 63)) + 1;
    all |= tokens[i];
    prev = k;
  }
  size_t w = 1;
  while (w < 8 && (all >> (8 * w))) w++;
  *width = w;
  return 1;
}

void lm_colcodec_int_put_planes(const uint64_t *tokens, size_t n, size_t width, unsigned char *planes) {
  for (size_t b = 0; b < width; b++)
    for (size_t i = 0; i < n; i++) planes[b * n + i] = (unsigned char)(tokens[i] >> (8 * b));
}

static lm_status nomem(lm_diag *diag) { return lm_oom(diag, NULL); }

lm_status lm_colcodec_encode(lm_colcodec *c, const double *values, size_t n, const void **blob, size_t *len,
                             lm_diag *diag) {
  *blob = NULL;
  *len = 0;
  if (!reserve(&c->out, &c->out_cap, 9)) return nomem(diag);
  uint64_t first = n ? bits_of(values[0]) : 0;
  size_t same = 1;
  while (same < n && bits_of(values[same]) == first) same++;
  if (n == 0 || same == n) {
    c->out[0] = 'C';
    for (int b = 0; b < 8; b++) c->out[1 + b] = (unsigned char)(first >> (8 * b));
    *blob = c->out;
    *len = 9;
    return LM_OK;
  }
  size_t raw = 0, head = 1;
  char kind;
  if (!reserve(&c->scratch, &c->scratch_cap, n * 16)) return nomem(diag);
  /* Tokens first (in the upper half of scratch), then their planes. */
  uint64_t *tokens = (uint64_t *)(void *)(c->scratch + n * 8);
  size_t width = 1;
  if (lm_colcodec_int_tokens(values, n, tokens, &width)) {
    kind = 'I';
    lm_colcodec_int_put_planes(tokens, n, width, c->scratch);
    raw = width * n;
    head = 2;
    if (!reserve(&c->out, &c->out_cap, 2)) return nomem(diag);
    c->out[1] = (unsigned char)width;
  } else {
    kind = 'S';
    raw = n * 8;
    for (size_t i = 0; i < n; i++) {
      uint64_t u = bits_of(values[i]);
      for (int b = 0; b < 8; b++) c->scratch[(size_t)b * n + i] = (unsigned char)(u >> (8 * b));
    }
  }
  size_t bound = ZSTD_compressBound(raw);
  if (!reserve(&c->out, &c->out_cap, bound + head)) return nomem(diag);
  size_t z = ZSTD_compressCCtx(c->cctx, c->out + head, bound, c->scratch, raw, ZSTD_LEVEL);
  if (ZSTD_isError(z))
    return lm_fail_at(diag, LM_EIO, NULL, 0, "column_data.data", "compression failed: %s", ZSTD_getErrorName(z));
  c->out[0] = (unsigned char)kind;
  *blob = c->out;
  *len = z + head;
  return LM_OK;
}

int lm_colcodec_constant(const void *blob, size_t len, double *value) {
  const unsigned char *p = blob;
  if (len != 9 || p[0] != 'C') return 0;
  uint64_t u = 0;
  for (int b = 0; b < 8; b++) u |= (uint64_t)p[1 + b] << (8 * b);
  *value = of_bits(u);
  return 1;
}

static lm_status corrupt(lm_diag *diag, const char *what) {
  return lm_fail_at(diag, LM_EDATA, NULL, 0, "column_data.data", "%s", what);
}

/* Decompress the frame of an 'I' or 'S' blob into scratch, refusing a
 * frame that does not say its size or says one above `most`. */
static lm_status inflate(lm_colcodec *c, const unsigned char *p, size_t len, size_t most, size_t *raw,
                         lm_diag *diag) {
  unsigned long long size = ZSTD_getFrameContentSize(p, len);
  if (size == ZSTD_CONTENTSIZE_ERROR || size == ZSTD_CONTENTSIZE_UNKNOWN)
    return corrupt(diag, "not a compressed column (truncated or altered)");
  if (size > most) return corrupt(diag, "the compressed column is larger than its rows");
  if (!reserve(&c->scratch, &c->scratch_cap, (size_t)size + 1)) return nomem(diag);
  size_t got = ZSTD_decompressDCtx(c->dctx, c->scratch, (size_t)size, p, len);
  if (ZSTD_isError(got) || got != size) return corrupt(diag, "the compressed column is truncated or altered");
  *raw = got;
  return LM_OK;
}

lm_status lm_colcodec_int_planes(lm_colcodec *c, const void *blob, size_t len, size_t n,
                                 const unsigned char **planes, size_t *width, lm_diag *diag) {
  const unsigned char *p = blob;
  size_t raw = 0;
  lm_status st;
  *planes = NULL;
  *width = 0;
  if (len == 0 || !p) return corrupt(diag, "an empty encoded column");
  if (p[0] != 'I') return LM_OK;
  if (len < 2 || p[1] < 1 || p[1] > 8) return corrupt(diag, "a bad integer width");
  if (n > SIZE_MAX / 8) return corrupt(diag, "too many rows");
  if ((st = inflate(c, p + 2, len - 2, n * p[1], &raw, diag)) != LM_OK) return st;
  if (raw != n * p[1]) return corrupt(diag, "the column holds another number of rows");
  *planes = c->scratch;
  *width = p[1];
  return LM_OK;
}

/* The token of row i (0: blank, else 1 + zigzag delta). */
static inline uint64_t token_at(const unsigned char *s, size_t width, size_t n, size_t i) {
  uint64_t u = s[i];
  for (size_t b = 1; b < width; b++) u |= (uint64_t)s[b * n + i] << (8 * b);
  return u;
}

static inline int64_t step_int(int64_t prev, uint64_t u) {
  u -= 1;
  return (int64_t)((uint64_t)prev + ((u >> 1) ^ (0 - (u & 1))));
}

/* The walks below, with the width a constant where it is small (the
 * common widths then read one or two bytes per row without a loop). The
 * index walk marks every `every` rows (LM_COLCODEC_MARK_ROWS for the
 * index; any stride for lm_colcodec_int_marks). */
static inline __attribute__((always_inline)) size_t index_w(const unsigned char *planes, size_t width,
                                                            size_t n, size_t every, int64_t *marks,
                                                            uint8_t *row_missing) {
  int64_t prev = 0;
  size_t blanks = 0;
  for (size_t m = 0; m * every < n; m++) {
    marks[m] = prev;
    size_t end = (m + 1) * every < n ? (m + 1) * every : n;
    size_t blank_here = 0;
    for (size_t i = m * every; i < end; i++) {
      uint64_t u = token_at(planes, width, n, i);
      prev = u ? step_int(prev, u) : prev;
      blank_here += u == 0;
    }
    if (blank_here && row_missing)
      for (size_t i = m * every; i < end; i++)
        if (token_at(planes, width, n, i) == 0) row_missing[i] = 1;
    blanks += blank_here;
  }
  if (n % every == 0) marks[n / every] = prev;
  return blanks;
}

static size_t index_every(const unsigned char *planes, size_t width, size_t n, size_t every, int64_t *marks,
                          uint8_t *row_missing) {
  switch (width) {
  case 1: return index_w(planes, 1, n, every, marks, row_missing);
  case 2: return index_w(planes, 2, n, every, marks, row_missing);
  case 3: return index_w(planes, 3, n, every, marks, row_missing);
  case 4: return index_w(planes, 4, n, every, marks, row_missing);
  default: return index_w(planes, width, n, every, marks, row_missing);
  }
}

size_t lm_colcodec_int_index(const unsigned char *planes, size_t width, size_t n, int64_t *marks,
                             uint8_t *row_missing) {
  return index_every(planes, width, n, LM_COLCODEC_MARK_ROWS, marks, row_missing);
}

void lm_colcodec_int_marks(const unsigned char *planes, size_t width, size_t n, size_t every, int64_t *marks) {
  if (every) index_every(planes, width, n, every, marks, NULL);
}

/* Rows [first, first + k) (all below n), from the mark before them,
 * without a branch per row. */
static inline __attribute__((always_inline)) void range_w(const unsigned char *planes, size_t width, size_t n,
                                                          const int64_t *marks, size_t first, size_t k,
                                                          double *out) {
  size_t pos = first / LM_COLCODEC_MARK_ROWS * LM_COLCODEC_MARK_ROWS;
  int64_t prev = marks[first / LM_COLCODEC_MARK_ROWS];
  for (; pos < first; pos++) {
    uint64_t u = token_at(planes, width, n, pos);
    prev = u ? step_int(prev, u) : prev;
  }
  for (size_t i = 0; i < k; i++) {
    uint64_t u = token_at(planes, width, n, first + i);
    prev = u ? step_int(prev, u) : prev;
    out[i] = u ? (double)prev : LM_NAN;
  }
}

void lm_colcodec_int_range(const unsigned char *planes, size_t width, size_t n, const int64_t *marks,
                           size_t first, size_t k, double *out) {
  switch (width) {
  case 1: range_w(planes, 1, n, marks, first, k, out); return;
  case 2: range_w(planes, 2, n, marks, first, k, out); return;
  case 3: range_w(planes, 3, n, marks, first, k, out); return;
  case 4: range_w(planes, 4, n, marks, first, k, out); return;
  default: range_w(planes, width, n, marks, first, k, out); return;
  }
}

static inline __attribute__((always_inline)) void rows_w(const unsigned char *planes, size_t width, size_t n,
                                                         const int64_t *marks, const size_t *rows, size_t k,
                                                         double *out) {
  size_t pos = 0; /* the next row to step over */
  int64_t prev = marks[0];
  int run = k && rows[k - 1] < n;
  for (size_t i = 1; i < k && run; i++) run = rows[i] == rows[i - 1] + 1;
  if (run) {
    /* A run of rows (a block of a contiguous selection). */
    range_w(planes, width, n, marks, rows[0], k, out);
    return;
  }
  for (size_t i = 0; i < k; i++) {
    size_t r = rows[i];
    if (r >= n) {
      out[i] = LM_NAN;
      continue;
    }
    if (r < pos || r - pos > LM_COLCODEC_MARK_ROWS) {
      pos = r / LM_COLCODEC_MARK_ROWS * LM_COLCODEC_MARK_ROWS;
      prev = marks[r / LM_COLCODEC_MARK_ROWS];
    }
    for (; pos < r; pos++) {
      uint64_t u = token_at(planes, width, n, pos);
      if (u) prev = step_int(prev, u);
    }
    uint64_t u = token_at(planes, width, n, r);
    pos = r + 1;
    if (u == 0) {
      out[i] = LM_NAN;
      continue;
    }
    prev = step_int(prev, u);
    out[i] = (double)prev;
  }
}

void lm_colcodec_int_rows(const unsigned char *planes, size_t width, size_t n, const int64_t *marks,
                          const size_t *rows, size_t k, double *out) {
  switch (width) {
  case 1: rows_w(planes, 1, n, marks, rows, k, out); return;
  case 2: rows_w(planes, 2, n, marks, rows, k, out); return;
  case 3: rows_w(planes, 3, n, marks, rows, k, out); return;
  case 4: rows_w(planes, 4, n, marks, rows, k, out); return;
  default: rows_w(planes, width, n, marks, rows, k, out); return;
  }
}

lm_status lm_colcodec_decode(lm_colcodec *c, const void *blob, size_t len, size_t n, double *values,
                             lm_diag *diag) {
  const unsigned char *p = blob;
  double k;
  if (len == 0 || !p) return corrupt(diag, "an empty encoded column");
  if (lm_colcodec_constant(blob, len, &k)) {
    for (size_t i = 0; i < n; i++) values[i] = k;
    return LM_OK;
  }
  size_t raw = 0;
  lm_status st;
  if (p[0] == 'S') {
    if (n > SIZE_MAX / 8) return corrupt(diag, "too many rows");
    if ((st = inflate(c, p + 1, len - 1, n * 8, &raw, diag)) != LM_OK) return st;
    if (raw != n * 8) return corrupt(diag, "the column holds another number of rows");
    const unsigned char *s = c->scratch;
    for (size_t i = 0; i < n; i++) {
      uint64_t u = 0;
      for (int b = 0; b < 8; b++) u |= (uint64_t)s[(size_t)b * n + i] << (8 * b);
      values[i] = of_bits(u);
    }
    return LM_OK;
  }
  if (p[0] == 'I') {
    const unsigned char *s = NULL;
    size_t width = 0;
    if ((st = lm_colcodec_int_planes(c, blob, len, n, &s, &width, diag)) != LM_OK) return st;
    /* every row from the first, whose mark is 0 */
    const int64_t first_mark[1] = {0};
    if (n) lm_colcodec_int_range(s, width, n, first_mark, 0, n, values);
    return LM_OK;
  }
  return corrupt(diag, "an unknown column encoding");
}
