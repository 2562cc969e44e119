/* fuzz_sql_scan.c - libFuzzer target for the reader of SQLite tables from
 * their pages (src/sql/scan.c). The input is a database file's image; the
 * scan starts at each of its first pages (1 to 8) as a table's root, with
 * column 0 as the rowid and without, and reads every column of every
 * record with every accessor, to the end or to an error, which must name
 * a page. A NULL reads as NaN, no text and 0; text lies in the image or
 * the record (ASan sees a read past either); a scan that loops is
 * libFuzzer's timeout. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sql/sql.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

enum { MAX_ROOTS = 8, COLS = 64, LAST_COL = 1999 };

static volatile uint64_t sink;

/* Every accessor on column c of the current record. */
static void read_column(lm_sql_scan *s, int c, int ipk) {
  size_t n = 1;
  int null = lm_sql_scan_is_null(s, c);
  int64_t v = lm_sql_scan_int64(s, c);
  double d = lm_sql_scan_double(s, c);
  const char *x = lm_sql_scan_text(s, c, &n);
  if (c == ipk && c >= 0 && null) abort(); /* the rowid is never NULL */
  if (null && (!isnan(d) || x || n || v)) abort();
  if (!x && n) abort();
  uint64_t sum = (uint64_t)v + (d == d);
  for (size_t i = 0; x && i < n; i++) sum += (unsigned char)x[i];
  sink += sum;
}

/* The scan from root to its end or its error. */
static void scan(const uint8_t *data, size_t size, uint32_t root, int ipk) {
  lm_sql_scan *s = NULL;
  lm_diag d;
  memset(&d, 0, sizeof d);
  if (lm_sql_scan_memory(data, size, "fuzz", root, ipk, &s, &d) != LM_OK) {
    if (s || !d.message[0]) abort(); /* a refusal says why */
    return;
  }
  int r;
  while ((r = lm_sql_scan_next(s, &d)) == 1) {
    for (int c = -1; c < COLS; c++) read_column(s, c, ipk);
    read_column(s, LAST_COL, ipk);
  }
  if (r != 0 && (r != -1 || !strstr(d.message, "page "))) abort();
  lm_sql_scan_free(s);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 100) {
    scan(data, size, 1, -1); /* refused */
    return 0;
  }
  uint32_t ps = (uint32_t)data[16] << 8 | data[17];
  if (ps == 1) ps = 65536;
  size_t n_pages = ps >= 512 ? size / ps : 1;
  uint32_t roots = n_pages < MAX_ROOTS ? (uint32_t)n_pages : MAX_ROOTS;
  for (uint32_t root = 1; root <= (roots ? roots : 1); root++) scan(data, size, root, root % 2 ? -1 : 0);
  return 0;
}
