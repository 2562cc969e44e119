/* fuzz_query.c - libFuzzer target for `lumen serve`'s request parameter
 * parser: any bytes are parsed or refused with a message; what is
 * accepted has a canonical form, respects the limits, and parses to the
 * same canonical form when its values are written back as a query. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "server/server.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void put(lm_buf *b, const char *key, const char *v) {
  lm_buf_printf(b, "%s%s=", b->len ? "&" : "", key);
  for (const unsigned char *p = (const unsigned char *)v; *p; p++) lm_buf_printf(b, "%%%02X", *p);
}

static size_t prefix_len(const char *c) {
  size_t n = strlen(c);
  const char *marks[4] = {"|d=", "|g=", "|i=", "|R="};
  for (int i = 0; i < 4; i++) {
    const char *m = strstr(c, marks[i]);
    if (m && (size_t)(m - c) < n) n = (size_t)(m - c);
  }
  return n;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  lm_query q;
  lm_diag d;
  lm_status st = lm_query_parse((const char *)data, size, &q, &d);
  if (st != LM_OK) {
    if (!d.message[0]) abort(); /* a refusal always says why */
    lm_query_fini(&q);
    return 0;
  }
  if (q.n_kernels > LM_QUERY_MAX_ITEMS || q.n_regions > LM_QUERY_MAX_ITEMS) abort();
  if (strlen(q.canonical) >= sizeof q.canonical) abort();
  /* Written back (exact names are already patterns: send them as k). */
  lm_buf b = {0};
  if (q.w) put(&b, "w", q.w);
  if (q.base) put(&b, "base", q.base);
  if (q.norm) put(&b, "norm", lm_norm_kind_name(q.norm));
  if (q.weight) put(&b, "weight", lm_weight_kind_name(q.weight));
  if (q.clock) put(&b, "clock", lm_clock_kind_name(q.clock));
  if (q.corrected) put(&b, "corrected", "1");
  if (q.compat) put(&b, "compat", q.compat);
  for (size_t i = 0; i < q.n_kernels; i++) put(&b, "k", q.kernels[i]);
  for (size_t i = 0; i < q.n_regions; i++) put(&b, "r", q.regions[i]);
  for (size_t i = 0; i < q.n_blocks; i++) put(&b, "b", q.blocks[i]);
  if (!b.failed && b.len <= LM_QUERY_MAX_BYTES) {
    lm_query again;
    if (lm_query_parse(b.data ? b.data : "", b.len, &again, &d) == LM_OK) {
      /* Dispatch, GPU, instance and rank sets are not written back: compare the
       * canonical forms up to them. */
      size_t nx = prefix_len(q.canonical), ny = prefix_len(again.canonical);
      if (nx != ny || memcmp(q.canonical, again.canonical, nx) != 0) abort();
    }
    lm_query_fini(&again);
  }
  lm_buf_fini(&b);
  lm_query_fini(&q);
  return 0;
}
