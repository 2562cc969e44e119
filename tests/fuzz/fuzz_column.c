/* fuzz_column.c - libFuzzer target for the stored-column codec and every
 * reader of its blobs (a store hands them back as they are). The first
 * byte picks what the rest is:
 *   even: a blob (its row count from the next two bytes) read by every
 *         reader: random damage;
 *   odd:  doubles to encode: they come back bit for bit; then the blob with
 *         one structured damage (byte 1 says which, byte 2 where or how
 *         much): a byte changed or dropped, cut short, another encoding's
 *         tag, another integer width, a byte of the compressed frame's
 *         header changed, bytes appended, or read as another row count.
 * Every reader decodes or refuses, never reads past: lm_colcodec_decode,
 * lm_colcodec_constant, and for the integer encoding its planes with their
 * index, marks, rows (in and out of order, past the end) and ranges. What
 * decodes encodes and decodes again to the same bits, the constant is
 * every row's value, and the planes give what decode gives. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "columns/columns.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static lm_colcodec *codec;

static int same_bits(const double *a, const double *b, size_t n) { return !n || memcmp(a, b, n * sizeof *a) == 0; }

static void again(const double *v, size_t n) {
  const void *blob = NULL;
  size_t len = 0;
  lm_diag d;
  if (lm_colcodec_encode(codec, v, n, &blob, &len, &d) != LM_OK) return;
  unsigned char *copy = malloc(len);
  double *back = malloc((n ? n : 1) * sizeof *back);
  if (copy && back) {
    memcpy(copy, blob, len);
    if (lm_colcodec_decode(codec, copy, len, n, back, &d) != LM_OK || !same_bits(back, v, n)) abort();
  }
  free(copy);
  free(back);
}

/* The integer readers over blob's planes, into by_rows (every row, in
 * order, then scattered) and by_range; 1 when the blob has planes. */
static int read_planes(const unsigned char *blob, size_t len, size_t n, double *by_rows, double *by_range) {
  const unsigned char *planes = NULL;
  size_t width = 0;
  lm_diag d;
  if (lm_colcodec_int_planes(codec, blob, len, n, &planes, &width, &d) != LM_OK || !planes) return 0;
  size_t n_marks = n / LM_COLCODEC_MARK_ROWS + 2;
  int64_t *marks = malloc(n_marks * sizeof *marks), *every = malloc((n + 2) * sizeof *every);
  uint8_t *missing = calloc(n + 1, 1);
  size_t *rows = malloc((2 * n + 3) * sizeof *rows);
  double *scattered = malloc((2 * n + 3) * sizeof *scattered);
  if (!marks || !every || !missing || !rows || !scattered) abort();
  size_t blanks = lm_colcodec_int_index(planes, width, n, marks, missing);
  for (size_t e = 1; e <= 3; e++) lm_colcodec_int_marks(planes, width, n, e, every);
  /* in order: one run */
  for (size_t i = 0; i < n; i++) rows[i] = i;
  lm_colcodec_int_rows(planes, width, n, marks, rows, n, by_rows);
  size_t nan_rows = 0;
  for (size_t i = 0; i < n; i++) nan_rows += isnan(by_rows[i]) != 0;
  if (nan_rows != blanks) abort();
  for (size_t i = 0; i < n; i++)
    if (missing[i] != (isnan(by_rows[i]) != 0)) abort();
  /* backwards, each twice, and past the end */
  size_t k = 0;
  for (size_t i = n; i-- > 0;) rows[k++] = i, rows[k++] = i;
  rows[k++] = n;
  rows[k++] = n + LM_COLCODEC_MARK_ROWS;
  lm_colcodec_int_rows(planes, width, n, marks, rows, k, scattered);
  for (size_t i = 0; i + 2 < k; i++)
    if (!same_bits(&scattered[i], &by_rows[rows[i]], 1)) abort();
  if (!isnan(scattered[k - 1]) || !isnan(scattered[k - 2])) abort();
  /* ranges: the whole, and from the middle */
  lm_colcodec_int_range(planes, width, n, marks, 0, n, by_range);
  if (n > 1) lm_colcodec_int_range(planes, width, n, marks, n / 2, n - n / 2, scattered);
  if (n > 1 && !same_bits(scattered, &by_range[n / 2], n - n / 2)) abort();
  free(marks);
  free(every);
  free(missing);
  free(rows);
  free(scattered);
  return 1;
}

/* Every reader of blob as a column of n rows. */
static void read_all(const unsigned char *blob, size_t len, size_t n) {
  double *v = malloc((n ? n : 1) * sizeof *v), *by_rows = malloc((n ? n : 1) * sizeof *v),
         *by_range = malloc((n ? n : 1) * sizeof *v);
  if (!v || !by_rows || !by_range) abort();
  int planes = read_planes(blob, len, n, by_rows, by_range);
  lm_diag d;
  lm_status st = lm_colcodec_decode(codec, blob, len, n, v, &d);
  if (st != LM_OK && !d.message[0]) abort(); /* a refusal says why */
  if (planes && (st != LM_OK || !same_bits(v, by_rows, n) || !same_bits(v, by_range, n))) abort();
  double k;
  if (lm_colcodec_constant(blob, len, &k)) {
    if (st != LM_OK) abort();
    for (size_t i = 0; i < n; i++)
      if (!same_bits(&v[i], &k, 1)) abort();
  }
  if (st == LM_OK) again(v, n);
  free(v);
  free(by_rows);
  free(by_range);
}

/* The blob with one structured damage; the row count to read it as. */
static size_t damage(unsigned char *p, size_t *len, size_t cap, size_t n, uint8_t kind, uint8_t at, uint8_t bits) {
  static const unsigned char tags[4] = {'C', 'I', 'S', 'X'};
  static const unsigned char widths[8] = {0, 1, 2, 3, 4, 8, 9, 255};
  size_t l = *len;
  switch (kind % 8) {
  case 0: p[at % l] ^= (unsigned char)(bits | 1); break;
  case 1: *len = at % l; break;
  case 2: p[0] = tags[at % 4]; break;
  case 3: if (l > 1) p[1] = widths[at % 8]; break;
  case 4: { /* another row count */
    size_t counts[6] = {0, n ? n - 1 : 0, n + 1, 2 * n, n + LM_COLCODEC_MARK_ROWS, n / 2};
    return counts[at % 6];
  }
  case 5: /* the frame's header, after the tag (and width) */
    if (l > 2) p[1 + (p[0] == 'I') + at % 14 % (l - 2)] ^= (unsigned char)(bits | 1);
    break;
  case 6: { /* bytes after the frame: a copy of its start, or 0xff */
    size_t extra = (size_t)at % 32 + 1;
    if (l + extra > cap) break;
    for (size_t i = 0; i < extra; i++) p[l + i] = bits & 1 ? p[i % l] : 0xff;
    *len = l + extra;
    break;
  }
  case 7:
    if (l > 1) {
      memmove(p + at % l, p + at % l + 1, l - at % l - 1);
      *len = l - 1;
    }
    break;
  }
  return n;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (!codec && !(codec = lm_colcodec_new())) return 0;
  if (size < 3) return 0;
  lm_diag d;
  if (!(data[0] & 1)) {
    size_t n = (size_t)data[1] | (size_t)data[2] << 8;
    read_all(data + 3, size - 3, n);
    return 0;
  }
  size_t n = (size - 3) / sizeof(double);
  double *v = malloc((n ? n : 1) * sizeof *v);
  if (!v) return 0;
  if (n) memcpy(v, data + 3, n * sizeof *v);
  again(v, n);
  const void *blob = NULL;
  size_t len = 0;
  if (lm_colcodec_encode(codec, v, n, &blob, &len, &d) == LM_OK && len) {
    size_t cap = len + 32;
    unsigned char *bad = malloc(cap);
    if (bad) {
      memcpy(bad, blob, len);
      size_t as = damage(bad, &len, cap, n, data[1], data[2], data[0]);
      read_all(bad, len, as);
    }
    free(bad);
  }
  free(v);
  return 0;
}
