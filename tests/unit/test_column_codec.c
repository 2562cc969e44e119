/* test_column_codec.c - the compact encoding of stored counter columns:
 * every kind of column (random, constant, all zero, blanks between
 * integers, NaNs with other payloads, huge magnitudes, denormals, -0.0)
 * comes back with the same 64-bit patterns; each encoding kind is the one
 * chosen for its columns; a truncated or altered blob is refused with a
 * reason, every byte flip and every cut, never a crash or a read out of
 * bounds (run it under AddressSanitizer); integer columns read row by row
 * from their token planes give the bits of the whole decode. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <zstd.h>

#include "check.h"
#include "columns/columns.h"

static uint64_t rng = 0x243F6A8885A308D3ULL;
static uint64_t next(void) {
  rng ^= rng << 13;
  rng ^= rng >> 7;
  rng ^= rng << 17;
  return rng;
}

static double of_bits(uint64_t u) {
  double v;
  memcpy(&v, &u, sizeof v);
  return v;
}

/* Encode and decode; 1 when every bit pattern came back. *kind gets the
 * blob's encoding letter, *len its size. */
static int roundtrip(lm_colcodec *c, const double *v, size_t n, char *kind, size_t *len) {
  const void *blob = NULL;
  lm_diag d;
  if (lm_colcodec_encode(c, v, n, &blob, len, &d) != LM_OK) return 0;
  unsigned char *copy = malloc(*len);
  memcpy(copy, blob, *len);
  *kind = (char)copy[0];
  double *back = malloc((n ? n : 1) * sizeof *back);
  int ok = lm_colcodec_decode(c, copy, *len, n, back, &d) == LM_OK && (n == 0 || memcmp(back, v, n * sizeof *v) == 0);
  free(back);
  free(copy);
  return ok;
}

static void kinds(lm_colcodec *c) {
  enum { N = 5000 };
  double *v = malloc(N * sizeof *v);
  char kind;
  size_t len;

  for (size_t i = 0; i < N; i++) v[i] = 0;
  CHECK(roundtrip(c, v, N, &kind, &len) && kind == 'C' && len == 9);
  for (size_t i = 0; i < N; i++) v[i] = 4096;
  CHECK(roundtrip(c, v, N, &kind, &len) && kind == 'C');
  double k;
  const void *blob;
  lm_diag d;
  CHECK(lm_colcodec_encode(c, v, N, &blob, &len, &d) == LM_OK && lm_colcodec_constant(blob, len, &k) && k == 4096);
  for (size_t i = 0; i < N; i++) v[i] = LM_NAN;
  CHECK(roundtrip(c, v, N, &kind, &len) && kind == 'C');
  CHECK(roundtrip(c, v, 0, &kind, &len) && kind == 'C');
  CHECK(roundtrip(c, v, 1, &kind, &len) && kind == 'C');

  /* Counters: integers, some blank; a rising timestamp. */
  for (size_t i = 0; i < N; i++) v[i] = i % 7 == 3 ? LM_NAN : (double)(next() % 100000);
  CHECK(roundtrip(c, v, N, &kind, &len) && kind == 'I');
  CHECK(!lm_colcodec_constant(blob, len, &k));
  for (size_t i = 0; i < N; i++) v[i] = 1.7e15 + (double)i * 20000 + (double)(next() % 1000);
  CHECK(roundtrip(c, v, N, &kind, &len) && kind == 'I' && len < N * 4);
  /* The extremes of the integer encoding, both signs. */
  for (size_t i = 0; i < N; i++) v[i] = (i & 1) ? 4611686018427387903.0 * 0.999 : -4611686018427387904.0 * 0.999;
  v[5] = -1;
  v[6] = 0;
  CHECK(roundtrip(c, v, N, &kind, &len) && kind == 'I');

  /* What the integer encoding cannot keep goes the general way: -0.0, a
   * NaN of another payload, magnitudes past 2^62, fractions. */
  for (size_t i = 0; i < N; i++) v[i] = (double)(i % 13);
  v[17] = -0.0;
  CHECK(roundtrip(c, v, N, &kind, &len) && kind == 'S');
  v[17] = 0;
  v[99] = of_bits(0x7FF8000000000123ULL); /* a NaN with a payload */
  v[100] = of_bits(0xFFF8000000000000ULL); /* -nan */
  CHECK(roundtrip(c, v, N, &kind, &len) && kind == 'S');
  for (size_t i = 0; i < N; i++) v[i] = (i % 3 ? 1e300 : -1.5e19) * (double)(i + 1);
  v[4] = HUGE_VAL;
  v[5] = -HUGE_VAL;
  CHECK(roundtrip(c, v, N, &kind, &len) && kind == 'S');
  for (size_t i = 0; i < N; i++) v[i] = of_bits(next() & 0x000FFFFFFFFFFFFFULL); /* denormals */
  CHECK(roundtrip(c, v, N, &kind, &len) && kind == 'S');
  for (size_t i = 0; i < N; i++) v[i] = of_bits(next()); /* any pattern at all, NaNs included */
  CHECK(roundtrip(c, v, N, &kind, &len) && kind == 'S');
  for (size_t i = 0; i < N; i++) v[i] = i % 5 ? (double)(next() % 1000) / 7.0 : LM_NAN;
  CHECK(roundtrip(c, v, N, &kind, &len) && kind == 'S');
  free(v);
}

/* Every cut and many single-byte changes of a blob of each kind: an error
 * or (for a change zstd cannot see, such as a value byte) another column
 * of the right length, never a crash. */
static void damage(lm_colcodec *c) {
  enum { N = 700 };
  double v[N], back[N];
  for (int kind = 0; kind < 3; kind++) {
    for (size_t i = 0; i < N; i++)
      v[i] = kind == 0 ? 5.0 : kind == 1 ? (double)(i * 3 + next() % 5) : (double)i / 3.0;
    const void *blob;
    size_t len;
    lm_diag d;
    CHECK(lm_colcodec_encode(c, v, N, &blob, &len, &d) == LM_OK);
    unsigned char *good = malloc(len), *bad = malloc(len);
    memcpy(good, blob, len);
    int refused_cuts = 0;
    for (size_t cut = 0; cut < len; cut++) {
      memcpy(bad, good, cut);
      lm_status st = lm_colcodec_decode(c, bad, cut, N, back, &d);
      if (st == LM_EDATA) {
        refused_cuts++;
        CHECK_STR(d.field, "column_data.data");
        CHECK(d.message[0] != '\0');
      }
    }
    CHECK(refused_cuts == (int)len); /* every truncation is refused */
    int refused = 0;
    for (size_t at = 0; at < len; at++) {
      memcpy(bad, good, len);
      bad[at] ^= (unsigned char)(1u << (next() % 8));
      if (lm_colcodec_decode(c, bad, len, N, back, &d) != LM_OK) refused++;
    }
    if (kind > 0) CHECK(refused > 0);
    /* The right blob for another row count is refused too. */
    CHECK(kind == 0 || lm_colcodec_decode(c, good, len, N - 1, back, &d) == LM_EDATA);
    CHECK(kind == 0 || lm_colcodec_decode(c, good, len, N + 1, back, &d) == LM_EDATA);
    free(good);
    free(bad);
  }
  double one;
  lm_diag d;
  CHECK(lm_colcodec_decode(c, "X123", 4, 1, &one, &d) == LM_EDATA);
  CHECK(strstr(d.message, "unknown column encoding") != NULL);
  CHECK(lm_colcodec_decode(c, "", 0, 1, &one, &d) == LM_EDATA);
}

/* Integer blobs made by hand: 'I', the token width, then a zstd frame of
 * the tokens' bytes grouped by position (0 a blank, else 1 + zigzag of the
 * change from the previous integer). */
static int decode_tokens(lm_colcodec *c, int width, const unsigned char *planes, size_t n_bytes, size_t n_rows,
                         double *back, lm_diag *d) {
  unsigned char blob[256];
  blob[0] = 'I';
  blob[1] = (unsigned char)width;
  size_t z = ZSTD_compress(blob + 2, sizeof blob - 2, planes, n_bytes, 1);
  if (ZSTD_isError(z)) return -99;
  return lm_colcodec_decode(c, blob, z + 2, n_rows, back, d);
}

static void tokens(lm_colcodec *c) {
  double back[4];
  lm_diag d;
  /* 5 -> +2, 0 -> blank, 2 -> -1, 3 -> +1 */
  static const unsigned char one[] = {0x05, 0x00, 0x02, 0x03};
  CHECK(decode_tokens(c, 1, one, sizeof one, 4, back, &d) == LM_OK);
  CHECK(back[0] == 2 && isnan(back[1]) && back[2] == 1 && back[3] == 2);
  /* Two bytes wide, low bytes first: 0x0201 -> +256, 0x0003 -> +1. */
  static const unsigned char two[] = {0x01, 0x03, 0x02, 0x00};
  CHECK(decode_tokens(c, 2, two, sizeof two, 2, back, &d) == LM_OK);
  CHECK(back[0] == 256 && back[1] == 257);
  CHECK(decode_tokens(c, 1, one, sizeof one, 3, back, &d) == LM_EDATA);
  CHECK(strstr(d.message, "larger than its rows") != NULL);
  CHECK(decode_tokens(c, 1, one, 3, 4, back, &d) == LM_EDATA);
  CHECK(strstr(d.message, "another number of rows") != NULL);
  CHECK(decode_tokens(c, 0, one, sizeof one, 4, back, &d) == LM_EDATA);
  CHECK(decode_tokens(c, 9, one, sizeof one, 4, back, &d) == LM_EDATA);
  CHECK(strstr(d.message, "bad integer width") != NULL);
}

/* The token planes read row by row (lm_colcodec_int_index, _int_rows)
 * give the bits of the whole decode: integer columns of widths 1 to 8,
 * with blanks, read at runs of rows, rows that skip ahead or go back,
 * repeated rows, one row at a time and rows past the end; the marks at
 * any stride (lm_colcodec_int_marks). */
static void planes(lm_colcodec *c) {
  enum { N = 5000 };
  static double v[N], whole[N], got[N + 10];
  static size_t rows[N + 10];
  static int64_t marks[N / LM_COLCODEC_MARK_ROWS + 1];
  static uint8_t missing[N];
  static const uint64_t spans[] = {100, 60000, 16000000, 3000000000ULL, 1ULL << 40, 1ULL << 61};
  for (size_t si = 0; si < sizeof spans / sizeof *spans; si++) {
    size_t blanks = 0;
    for (size_t i = 0; i < N; i++) {
      int blank = next() % 11 == 0;
      blanks += (size_t)blank;
      v[i] = blank ? LM_NAN : (double)(int64_t)(next() % spans[si]) - (double)(spans[si] / 3);
    }
    const void *blob = NULL;
    size_t len = 0, width = 0;
    const unsigned char *pl = NULL;
    lm_diag d;
    CHECK(lm_colcodec_encode(c, v, N, &blob, &len, &d) == LM_OK && ((const char *)blob)[0] == 'I');
    unsigned char *copy = malloc(len);
    memcpy(copy, blob, len);
    CHECK(lm_colcodec_decode(c, copy, len, N, whole, &d) == LM_OK);
    CHECK(lm_colcodec_int_planes(c, copy, len, N, &pl, &width, &d) == LM_OK && pl && width >= 1 && width <= 8);
    unsigned char *kept = malloc(N * width);
    memcpy(kept, pl, N * width);
    memset(missing, 0, sizeof missing);
    CHECK(lm_colcodec_int_index(kept, width, N, marks, missing) == blanks);
    size_t marked = 0;
    for (size_t i = 0; i < N; i++) marked += missing[i] == isnan(v[i]);
    CHECK(marked == N);
    /* The marks at any stride: those of the index at its own, else the
     * last integer before each marked row (0 before the first), with the
     * mark after the last row where the rows are a multiple of the
     * stride (1,000 and 8 divide N), and nothing past the entries. */
    static int64_t fine[N + 2];
    static const size_t strides[] = {LM_COLCODEC_MARK_ROWS, 128, 1000, 97, 8, 1};
    for (size_t k = 0; k < sizeof strides / sizeof *strides; k++) {
      size_t every = strides[k], good = 0, n_marks = N / every + 1;
      for (size_t j = 0; j < n_marks; j++) fine[j] = INT64_MIN;
      fine[n_marks] = 12345;
      lm_colcodec_int_marks(kept, width, N, every, fine);
      int64_t prev = 0;
      for (size_t r = 0; r <= N; r++) {
        if (r % every == 0 && (r < N || N % every == 0)) good += fine[r / every] == prev;
        if (r < N && !isnan(v[r])) prev = (int64_t)v[r];
      }
      CHECK(good == n_marks);
      CHECK(fine[n_marks] == 12345);
      if (every == LM_COLCODEC_MARK_ROWS) CHECK(memcmp(fine, marks, sizeof marks) == 0);
    }
    for (int pattern = 0; pattern < 5; pattern++) {
      size_t k = 0;
      for (size_t i = 0; i < N + 10; i++) {
        switch (pattern) {
        case 0: rows[k++] = i; break;                                  /* every row, then past the end */
        case 1: if (next() % 3 == 0) rows[k++] = i; break;             /* a sparse selection */
        case 2: rows[k++] = (size_t)(next() % (N + 5)); break;         /* anywhere, back and forth */
        case 3: rows[k++] = N - 1 - i % N; break;                      /* backwards */
        default: rows[k++] = i / 2 % N; break;                         /* each row twice */
        }
      }
      lm_colcodec_int_rows(kept, width, N, marks, rows, k, got);
      int same = 1;
      for (size_t i = 0; i < k; i++) {
        double want = rows[i] < N ? whole[rows[i]] : LM_NAN;
        same &= memcmp(&want, &got[i], sizeof want) == 0;
      }
      CHECK(same);
    }
    /* Ranges: from any row (at a mark, just before and after one), of
     * any length up to the last row. */
    for (int trial = 0; trial < 200; trial++) {
      size_t first = trial < 3 ? (size_t)trial * LM_COLCODEC_MARK_ROWS - (trial > 0)
                               : (size_t)(next() % N);
      if (first >= N) first = N - 1;
      size_t k = (size_t)(next() % (N - first)) + 1;
      lm_colcodec_int_range(kept, width, N, marks, first, k, got);
      int same = 1;
      for (size_t i = 0; i < k; i++) same &= memcmp(&whole[first + i], &got[i], sizeof(double)) == 0;
      CHECK(same);
    }
    free(kept);
    free(copy);
  }
  /* Other encodings have no planes. */
  for (size_t i = 0; i < N; i++) v[i] = (double)i / 3.0;
  const void *blob = NULL;
  size_t len = 0, width = 9;
  const unsigned char *pl = (const unsigned char *)"x";
  lm_diag d;
  CHECK(lm_colcodec_encode(c, v, N, &blob, &len, &d) == LM_OK);
  CHECK(lm_colcodec_int_planes(c, blob, len, N, &pl, &width, &d) == LM_OK && !pl && width == 0);
}

int main(void) {
  lm_colcodec *c = lm_colcodec_new();
  CHECK(c != NULL);
  if (!c) return check_report("test_column_codec");
  kinds(c);
  damage(c);
  tokens(c);
  planes(c);
  lm_colcodec_free(c);
  lm_colcodec_free(NULL);
  return check_report("test_column_codec");
}
