/* test_base.c - unit tests of src/base: number text, buffers, maps, arenas,
 * diagnostics, allocation failures walked one by one, and optional
 * libraries opened at run time. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "base/dl.h"
#include "check.h"

static void test_format_double(void) {
  char b[48];
  CHECK_STR(lm_format_double(0.0, b), "0.0");
  CHECK_STR(lm_format_double(1638.4, b), "1638.4");
  CHECK_STR(lm_format_double(70, b), "70.0");
  CHECK_STR(lm_format_double(0.1 + 0.2, b), "0.30000000000000004");
  CHECK_STR(lm_format_double(1e16, b), "1e+16");
  CHECK_STR(lm_format_double(1e-5, b), "1e-05");
  CHECK_STR(lm_format_double(0.0001, b), "0.0001");
  CHECK_STR(lm_format_double(-2.5e-7, b), "-2.5e-07");
  CHECK_STR(lm_format_double(123456789012345678.0, b), "1.2345678901234568e+17");
  CHECK_STR(lm_format_double(1.0 / 0.0, b), "inf");
  CHECK_STR(lm_format_double(-1.0 / 0.0, b), "-inf");
  CHECK_STR(lm_format_double(LM_NAN, b), "nan");
  CHECK_STR(lm_format_double(427.0323563102217, b), "427.0323563102217");
  /* Round trip of awkward values. */
  double values[] = {5e-324, 1.7976931348623157e308, 0.1, 1.0 / 3, 2.675, 9007199254740993.0};
  for (size_t i = 0; i < LM_ARRAY_LEN(values); i++)
    CHECK(strtod(lm_format_double(values[i], b), NULL) == values[i]);
}

static void test_buf_and_map(void) {
  lm_buf b = {0};
  CHECK_STR(lm_buf_cstr(&b), "");
  for (int i = 0; i < 1000; i++) lm_buf_printf(&b, "%d,", i);
  CHECK(b.len > 3000);
  CHECK(strncmp(lm_buf_cstr(&b), "0,1,2,", 6) == 0);
  char *taken = lm_buf_take(&b);
  CHECK(taken && b.data == NULL && b.len == 0);
  lm_free(taken);

  lm_map *m = lm_map_new();
  char key[32];
  for (int i = 0; i < 5000; i++) {
    snprintf(key, sizeof key, "TCC_HIT[%d]", i);
    CHECK(lm_map_put(m, key, i) == LM_OK);
  }
  CHECK(lm_map_count(m) == 5000);
  int64_t v = -1;
  CHECK(lm_map_get(m, "TCC_HIT[4321]", &v) && v == 4321);
  CHECK(!lm_map_get(m, "TCC_HIT[5000]", &v));
  CHECK(lm_map_put(m, "TCC_HIT[7]", 70) == LM_OK);
  CHECK(lm_map_get(m, "TCC_HIT[7]", &v) && v == 70 && lm_map_count(m) == 5000);
  lm_map_free(m);
}

static void test_arena(void) {
  lm_arena *a = lm_arena_new(4096);
  char *big = lm_arena_alloc(a, 100000);
  CHECK(big != NULL);
  char *s = lm_arena_strdup(a, "hello");
  CHECK_STR(s, "hello");
  CHECK(((uintptr_t)lm_arena_alloc(a, 3) & 15) == 0);
  CHECK(lm_arena_bytes(a) >= 100000);
  /* Sizes whose rounding to 16 would wrap fail instead of returning a
   * tiny block (12.18). */
  CHECK(lm_arena_alloc(a, SIZE_MAX) == NULL);
  CHECK(lm_arena_alloc(a, SIZE_MAX - 7) == NULL);
  CHECK(lm_arena_alloc(a, SIZE_MAX - 15) == NULL);
  CHECK(lm_arena_alloc(a, 16) != NULL);
  lm_arena_free(a);
  lm_arena_free(NULL);

  /* Large one-off blocks (a mapping of their own outside sanitizer
   * builds) and small ones around them: zeroed, aligned, apart. */
  a = lm_arena_new(1 << 16);
  size_t sizes[] = {5u << 20, 24, (9u << 20) + 5, 100, 4u << 20};
  unsigned char *got[5];
  size_t zero = 1;
  for (size_t i = 0; i < 5; i++) {
    got[i] = lm_arena_alloc(a, sizes[i]);
    CHECK(got[i] != NULL && ((uintptr_t)got[i] & 15) == 0);
    if (!got[i]) continue;
    for (size_t k = 0; k < sizes[i]; k += 4093) zero &= got[i][k] == 0;
    zero &= got[i][sizes[i] - 1] == 0;
    memset(got[i], (int)(0xA0 + i), sizes[i]);
  }
  CHECK(zero);
  size_t intact = 1;
  for (size_t i = 0; i < 5; i++)
    if (got[i]) intact &= got[i][0] == 0xA0 + i && got[i][sizes[i] - 1] == 0xA0 + i;
  CHECK(intact);
  CHECK(lm_arena_bytes(a) >= (18u << 20));
  lm_arena_free(a);

  /* Dense blocks: page-aligned zero pages. */
  unsigned char *d = lm_alloc_dense((6u << 20) + 1);
  CHECK(d != NULL && ((uintptr_t)d & 4095) == 0);
  if (d) {
    CHECK(d[0] == 0 && d[6u << 20] == 0);
    d[6u << 20] = 1;
    lm_free_huge(d, (6u << 20) + 1);
  }
}

static void test_diag(void) {
  lm_diag d;
  char line[256];
  lm_diag_set(&d, LM_EPARSE, "pmc_perf.csv", 7, 3, "SQ_WAVES", "'abc' is not a number\nreally");
  CHECK_STR(lm_diag_format(&d, line, sizeof line),
            "pmc_perf.csv:7:3: field 'SQ_WAVES': 'abc' is not a number really");
  lm_diag_clear(&d);
  CHECK(d.status == LM_OK);
  CHECK_STR(lm_strerror(LM_ENOMEM), "out of memory");
  /* The short forms fill what they name and clear the rest. */
  lm_diag_set(&d, LM_EPARSE, "old.csv", 9, 9, "OLD", "old");
  CHECK(lm_fail(&d, LM_EIO, "sysinfo.csv", "cannot read: %s", "gone") == LM_EIO);
  CHECK(d.status == LM_EIO && d.line == 0 && d.column == 0 && d.field[0] == '\0');
  CHECK_STR(lm_diag_format(&d, line, sizeof line), "sysinfo.csv: cannot read: gone");
  CHECK(lm_fail_at(&d, LM_EDATA, "pmc_perf.csv", 12, "GPU_ID", "%d is not a GPU", -1) == LM_EDATA);
  CHECK(d.line == 12 && d.column == 0);
  CHECK_STR(lm_diag_format(&d, line, sizeof line), "pmc_perf.csv:12: field 'GPU_ID': -1 is not a GPU");
  CHECK(lm_oom(&d, NULL) == LM_ENOMEM && d.status == LM_ENOMEM && d.file[0] == '\0');
  CHECK_STR(d.message, "out of memory");
  CHECK(lm_fail(NULL, LM_EINVAL, "x", "y") == LM_EINVAL && lm_oom(NULL, "x") == LM_ENOMEM);
}

/* Every allocation of a map build fails in turn: no crash, no leak. */
static void test_alloc_failures(void) {
  long failures = 0, n;
  for (n = 0; n < 500; n++) {
    lm_alloc_fail_after(n);
    lm_map *m = lm_map_new();
    lm_status st = m ? LM_OK : LM_ENOMEM;
    for (int i = 0; st == LM_OK && i < 50; i++) {
      char key[16];
      snprintf(key, sizeof key, "k%d", i);
      st = lm_map_put(m, key, i);
    }
    lm_map_free(m);
    lm_alloc_fail_after(-1);
    if (st == LM_OK) break;
    CHECK(st == LM_ENOMEM);
    failures++;
  }
  /* Every allocation point up to the first complete build was failed once. */
  CHECK(n < 500 && failures == n && failures > 5);
  /* Aligned blocks: at the alignment, any size (rounded up for C11), and
   * failed on demand like the others. */
  unsigned char *line = lm_aligned_alloc(64, 100);
  CHECK(line && (uintptr_t)line % 64 == 0);
  if (line) memset(line, 1, 128);
  lm_free(line);
  lm_free(lm_aligned_alloc(64, 0));
  lm_alloc_fail_after(0);
  CHECK(lm_aligned_alloc(64, 64) == NULL);
  CHECK(lm_alloc_fail_after(-1) == 1);
}

/* Safe text for terminals and JSON (12.4, 12.10). */
/* lm_grow: doubling from 16, enough for a far index, the old array kept
 * when the allocation fails or the size overflows. */
static void test_grow(void) {
  size_t cap = 0;
  int *a = lm_grow(NULL, &cap, 0, sizeof *a);
  CHECK(a != NULL && cap == 16);
  for (int i = 0; i < 16; i++) a[i] = i;
  CHECK(lm_grow(a, &cap, 15, sizeof *a) == a && cap == 16);
  int *b = lm_grow(a, &cap, 16, sizeof *a);
  CHECK(b != NULL && cap == 32 && b[15] == 15);
  a = b;
  b = lm_grow(a, &cap, 1000, sizeof *a);
  CHECK(b != NULL && cap == 1024 && b[7] == 7);
  a = b;
  lm_alloc_fail_after(0);
  CHECK(lm_grow(a, &cap, 1024, sizeof *a) == NULL && cap == 1024);
  lm_alloc_fail_after(-1);
  CHECK(a[9] == 9);
  CHECK(lm_grow(a, &cap, SIZE_MAX / 2, sizeof *a) == NULL && cap == 1024);
  CHECK(lm_grow(a, &cap, SIZE_MAX - 1, 1) == NULL && cap == 1024);
  lm_free(a);
}

static void test_text(void) {
  char *t = lm_text_safe("a\x1b[2Jb\x07", 0);
  CHECK_STR(t, "a\\x1b[2Jb\\x07");
  lm_free(t);
  t = lm_text_safe("caf\xc3\xa9 \xff\xc3", 0); /* valid é, a stray byte, a cut sequence */
  CHECK_STR(t, "caf\xc3\xa9 \\xff\\xc3");
  lm_free(t);
  t = lm_text_safe("\xc2\x9b" "1m", 0); /* C1 CSI */
  CHECK_STR(t, "\\xc2\\x9b1m");
  lm_free(t);
  t = lm_text_safe("\xed\xa0\x80\xc0\xaf", 0); /* a surrogate and an overlong '/' */
  CHECK_STR(t, "\\xed\\xa0\\x80\\xc0\\xaf");
  lm_free(t);
  t = lm_text_safe("abcdefghij", 5);
  CHECK_STR(t, "abcd…");
  lm_free(t);
  t = lm_text_safe("abcde", 5);
  CHECK_STR(t, "abcde");
  lm_free(t);
  t = lm_text_safe(NULL, 0);
  CHECK_STR(t, "");
  lm_free(t);
  CHECK(lm_utf8_valid("caf\xc3\xa9", 5));
  CHECK(!lm_utf8_valid("\xf4\x90\x80\x80", 4)); /* past U+10FFFF */
  CHECK(lm_json_utf8_fix("{\"a\":\"caf\xc3\xa9\"}") == NULL);
  char *j = lm_json_utf8_fix("{\"a\":\"x\xff\xfey\"}");
  CHECK_STR(j, "{\"a\":\"x\\ufffd\\ufffdy\"}");
  lm_free(j);
}

/* lm_sort: the comparator gets the context it was given (indexes sorted
 * by the values they point at, descending), short arrays are left as is. */
static int by_value_desc(const void *a, const void *b, void *values) {
  const double *v = values;
  double x = v[*(const int *)a], y = v[*(const int *)b];
  return (x < y) - (x > y);
}

static void test_sort(void) {
  double values[] = {3, 9, 1, 7, 5};
  int idx[] = {0, 1, 2, 3, 4};
  lm_sort(idx, 5, sizeof *idx, by_value_desc, values);
  CHECK(idx[0] == 1 && idx[1] == 3 && idx[2] == 4 && idx[3] == 0 && idx[4] == 2);
  int one[] = {4};
  lm_sort(one, 1, sizeof *one, by_value_desc, values);
  lm_sort(NULL, 0, sizeof *one, by_value_desc, values);
  CHECK(one[0] == 4);
}

/* lm_dl_open and lm_dl_resolve on libm: the first name that loads, a real
 * symbol that works, an absent optional one left NULL, an older name
 * taken for an absent one, and a missing required symbol refused by name;
 * a list where nothing loads names its first library; the process's own
 * symbols (lm_dl_open_process). */
static void test_dl(void) {
  lm_dl_lib lib;
  lm_diag d;
  lm_diag_clear(&d);
  const char *names[] = {NULL, "libnot-a-lumen-library.so.9", "libm.so.6", "libm.so"};
  CHECK(lm_dl_open(&lib, names, LM_ARRAY_LEN(names), 0, &d) == LM_OK);
  CHECK(lib.handle != NULL);
  CHECK_STR(lib.name, "libm.so.6");
  double (*cos_fn)(double) = NULL, (*hypot_fn)(double, double) = NULL;
  void *absent = &d;
  lm_dl_sym ok[] = {{"cos", &cos_fn, 1, NULL},
                    {"lumen_no_such_symbol", &absent, 0, NULL},
                    {"lumen_no_such_hypot", &hypot_fn, 1, "hypot"}};
  CHECK(lm_dl_resolve(&lib, ok, LM_ARRAY_LEN(ok), &d) == LM_OK);
  CHECK(cos_fn != NULL && cos_fn(0.0) == 1.0);
  CHECK(hypot_fn != NULL && hypot_fn(3.0, 4.0) == 5.0);
  CHECK(absent == NULL);
  lm_dl_sym missing[] = {{"sin", &cos_fn, 1, NULL}, {"lumen_no_such_symbol", &absent, 1, NULL}};
  CHECK(lm_dl_resolve(&lib, missing, LM_ARRAY_LEN(missing), &d) == LM_ENOTFOUND);
  CHECK_STR(d.message, "libm.so.6 has no lumen_no_such_symbol");
  CHECK_STR(d.field, "lumen_no_such_symbol");
  CHECK_STR(d.file, "libm.so.6");
  lm_dl_close(&lib);
  CHECK(lib.handle == NULL);
  lm_dl_close(&lib);
  const char *none[] = {"libnot-a-lumen-library.so.9", "", "libnot-a-lumen-library.so.8"};
  CHECK(lm_dl_open(&lib, none, LM_ARRAY_LEN(none), 0, &d) == LM_ENOTFOUND);
  CHECK(lib.handle == NULL);
  CHECK(strstr(lib.error, "libnot-a-lumen-library.so.8") != NULL);
  CHECK(strncmp(d.message, "cannot load libnot-a-lumen-library.so.9: ", 41) == 0);
  /* The process's own symbols: what the caller links against, nothing
   * opened; a symbol no object has is refused naming the process. */
  lm_dl_open_process(&lib);
  CHECK(lib.handle == NULL && lib.process == 1);
  size_t (*strlen_fn)(const char *) = NULL;
  lm_dl_sym own[] = {{"strlen", &strlen_fn, 1, NULL}, {"lumen_no_such_symbol", &absent, 0, NULL}};
  absent = &d;
  CHECK(lm_dl_resolve(&lib, own, LM_ARRAY_LEN(own), &d) == LM_OK);
  CHECK(strlen_fn != NULL && strlen_fn("lumen") == 5);
  CHECK(absent == NULL);
  own[1].required = 1;
  CHECK(lm_dl_resolve(&lib, own, LM_ARRAY_LEN(own), &d) == LM_ENOTFOUND);
  CHECK_STR(d.message, "the process has no lumen_no_such_symbol");
  lm_dl_close(&lib);
  CHECK(lib.process == 0);
  CHECK(lm_dl_resolve(&lib, own, 1, NULL) == LM_ENOTFOUND && strlen_fn == NULL);
}

/* A pattern that backtracks without end, on a long kernel name, stops at
 * the match limit as an error naming both, never as a non-match; an
 * ordinary pattern still matches and misses. */
static void test_regex(void) {
  char name[4200];
  memset(name, 'a', 4000);
  strcpy(name + 4000, "b");
  lm_regex *re = NULL;
  lm_diag d;
  lm_diag_clear(&d);
  CHECK(lm_regex_compile("-k '(a+)+$'", "(a+)+$", &re, &d) == LM_OK);
  int hit = -1;
  CHECK(lm_regex_match(re, "kernel name", name, &hit, &d) == LM_EINVAL);
  CHECK(hit == 0);
  CHECK(strncmp(d.message, "-k '(a+)+$': gave up matching it against kernel name 'aaaa", 58) == 0);
  CHECK(strstr(d.message, "limit") != NULL);
  CHECK(strstr(d.message, "...' (") != NULL);
  CHECK(strchr(d.message, '\n') == NULL);
  CHECK(lm_regex_match(re, "kernel name", "aaa", &hit, &d) == LM_OK && hit == 1);
  CHECK(lm_regex_match(re, "kernel name", "aab", &hit, &d) == LM_OK && hit == 0);
  lm_regex_free(re);
  lm_regex_free(NULL);
  lm_diag_clear(&d);
  CHECK(lm_regex_compile("-k 'a('", "a(", &re, &d) == LM_EINVAL && re == NULL);
  CHECK(strncmp(d.message, "-k 'a(': missing closing parenthesis at offset 2", 48) == 0);
  CHECK(d.column == 3);
}

int main(void) {
  test_format_double();
  test_buf_and_map();
  test_arena();
  test_grow();
  test_text();
  test_diag();
  test_alloc_failures();
  test_sort();
  test_dl();
  test_regex();
  return check_report("test_base");
}
