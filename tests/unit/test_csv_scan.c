/* test_csv_scan.c - unit tests of the delimiter masks (src/csv/csv_scan.h)
 * in their portable form (eight-byte words), which x86-64 builds do not
 * otherwise run: every mask against a byte-by-byte reading, on random
 * bytes, on every byte value in every position, and on CSV text. */
#define LM_CSV_SWAR 1
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "csv/csv_scan.h"

static size_t mismatches;

static void check_at(const char *p) {
  lm_csv_marks m = lm_csv_marks16(p);
  lm_csv_marks want = {0, 0, 0, 0};
  for (int i = 0; i < 16; i++) {
    unsigned char b = (unsigned char)p[i];
    if (b == ',') want.comma |= 1u << i;
    if (b == '"' || b == '\n' || b == '\r') want.stop |= 1u << i;
    if (b >= '0' && b <= '9') want.digit |= 1u << i;
    if (b == '.') want.point |= 1u << i;
  }
  if (m.comma != want.comma || m.stop != want.stop || m.digit != want.digit || m.point != want.point) {
    if (mismatches++ < 5)
      fprintf(stderr, "marks differ: comma %04x/%04x stop %04x/%04x digit %04x/%04x point %04x/%04x\n",
              m.comma, want.comma, m.stop, want.stop, m.digit, want.digit, m.point, want.point);
  }
}

int main(void) {
  char buf[64];
  /* every byte value at every position, among digits and among commas */
  for (int fill = 0; fill < 2; fill++)
    for (int pos = 0; pos < 16; pos++)
      for (int b = 0; b < 256; b++) {
        memset(buf, fill ? ',' : '7', sizeof buf);
        buf[pos] = (char)b;
        check_at(buf);
      }
  /* random bytes, and random picks from the bytes that matter */
  static const char near[] = ",\"\n\r.0123456789/:+-e \x80\xff";
  unsigned seed = 12345;
  for (int n = 0; n < 200000; n++) {
    for (int i = 0; i < 16; i++) {
      seed = seed * 1103515245u + 12345u;
      unsigned r = seed >> 8;
      buf[i] = n % 2 ? (char)(r & 0xFF) : near[r % (sizeof near - 1)];
    }
    check_at(buf);
  }
  /* a CSV record, at every offset */
  const char *rec = "0,\"k(a, b)\",1,2.5,,nan\r\n1,131072.0,99999999,\"x\"\"y\",-0\n";
  for (size_t i = 0; i + 16 <= strlen(rec); i++) check_at(rec + i);
  CHECK(mismatches == 0);
  return check_report("test_csv_scan");
}
