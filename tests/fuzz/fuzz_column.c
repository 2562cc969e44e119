/* fuzz_column.c - libFuzzer target for the stored-column codec. The first
 * byte picks what the rest is:
 *   even: a blob to decode (its row count from the next two bytes): it
 *         decodes or is refused, never read past; what decodes encodes
 *         and decodes again to the same bits;
 *   odd:  doubles to encode: they come back bit for bit, and the blob
 *         with one byte changed (where the next bytes say) or cut short
 *         decodes or is refused, never crashes. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "io/io.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static lm_colcodec *codec;

static void again(const double *v, size_t n) {
  const void *blob = NULL;
  size_t len = 0;
  lm_diag d;
  if (lm_colcodec_encode(codec, v, n, &blob, &len, &d) != LM_OK) return;
  unsigned char *copy = malloc(len);
  double *back = malloc((n ? n : 1) * sizeof *back);
  if (copy && back) {
    memcpy(copy, blob, len);
    if (lm_colcodec_decode(codec, copy, len, n, back, &d) != LM_OK || (n && memcmp(back, v, n * sizeof *v) != 0))
      abort();
  }
  free(copy);
  free(back);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (!codec && !(codec = lm_colcodec_new())) return 0;
  if (size < 3) return 0;
  lm_diag d;
  if (!(data[0] & 1)) {
    size_t n = (size_t)data[1] | (size_t)data[2] << 8;
    double *v = malloc((n ? n : 1) * sizeof *v);
    if (v && lm_colcodec_decode(codec, data + 3, size - 3, n, v, &d) == LM_OK) again(v, n);
    free(v);
    return 0;
  }
  size_t at = (size_t)data[1] | (size_t)data[2] << 8, n = (size - 3) / sizeof(double);
  double *v = malloc((n ? n : 1) * sizeof *v);
  if (!v) return 0;
  if (n) memcpy(v, data + 3, n * sizeof *v);
  again(v, n);
  const void *blob = NULL;
  size_t len = 0;
  if (lm_colcodec_encode(codec, v, n, &blob, &len, &d) == LM_OK && len) {
    unsigned char *bad = malloc(len);
    if (bad) {
      memcpy(bad, blob, len);
      bad[at % len] ^= (unsigned char)(data[0] | 1);
      lm_colcodec_decode(codec, bad, len, n, v, &d);
      lm_colcodec_decode(codec, bad, at % len, n, v, &d);
    }
    free(bad);
  }
  free(v);
  return 0;
}
