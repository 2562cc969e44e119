/* test_query.c - the request parameter parser of `lumen serve`: values
 * are decoded, exact kernel names become anchored quoted patterns that
 * match only themselves, limits and bad input are refused with the
 * parameter named, and the canonical form tells selections apart. */
#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "server/server.h"

static lm_status parse(const char *text, lm_query *q, lm_diag *d) {
  return lm_query_parse(text, strlen(text), q, d);
}

static int matches(const char *pattern, const char *subject) {
  int err;
  PCRE2_SIZE off;
  pcre2_code *re = pcre2_compile((PCRE2_SPTR)pattern, PCRE2_ZERO_TERMINATED, PCRE2_UTF, &err, &off, NULL);
  if (!re) return -1;
  pcre2_match_data *md = pcre2_match_data_create_from_pattern(re, NULL);
  int hit = pcre2_match(re, (PCRE2_SPTR)subject, PCRE2_ZERO_TERMINATED, 0, 0, md, NULL) >= 0;
  pcre2_match_data_free(md);
  pcre2_code_free(re);
  return hit;
}

int main(void) {
  lm_query q;
  lm_diag d;
  CHECK(parse("w=f0&base=db%3Amy%20run&k=gemm%7Cconv&norm=per_kernel&d=0:10,12&g=2&i=::4&r=solve+loop&b=2,10.1"
              "&corrected=1&clock=measured&weight=count&token=t&_=9",
              &q, &d) == LM_OK);
  CHECK_STR(q.w, "f0");
  CHECK_STR(q.base, "db:my run");
  CHECK(q.n_kernels == 1);
  CHECK_STR(q.kernels[0], "gemm|conv");
  CHECK(q.norm == LM_NORM_PER_KERNEL);
  CHECK(q.dispatch.n == 2 && q.gpu.n == 1 && q.instance.n == 1);
  CHECK(lm_idset_has(&q.dispatch, 12) && lm_idset_has(&q.dispatch, 9) && !lm_idset_has(&q.dispatch, 10));
  CHECK(lm_idset_has(&q.instance, 8) && !lm_idset_has(&q.instance, 9));
  CHECK_STR(q.regions[0], "solve loop");
  CHECK(q.n_blocks == 2);
  CHECK_STR(q.blocks[1], "10.1");
  CHECK(q.corrected == 1);
  CHECK(q.clock == LM_CLOCK_MEASURED && q.weight == LM_WEIGHT_COUNT);
  CHECK_STR(q.token, "t");
  CHECK(strstr(q.canonical, "token") == NULL); /* the token is not part of the selection */
  char first[sizeof q.canonical];
  snprintf(first, sizeof first, "%s", q.canonical);
  lm_query_fini(&q);
  /* Another order of the same parameters: the same selection. */
  CHECK(parse("b=2,10.1&i=::4&g=2&d=0:10,12&r=solve%20loop&norm=per_kernel&k=gemm|conv&base=db:my%20run&w=f0"
              "&clock=measured&corrected=1&weight=count",
              &q, &d) == LM_OK);
  CHECK_STR(q.canonical, first);
  lm_query_fini(&q);
  CHECK(parse("w=f0&norm=per_cycle", &q, &d) == LM_OK);
  CHECK(strcmp(q.canonical, first) != 0);
  lm_query_fini(&q);
  /* MPI ranks: the -d grammar; a selection of its own. */
  CHECK(parse("w=f0&rank=1,4:6", &q, &d) == LM_OK);
  CHECK(q.rank.n == 2 && lm_idset_has(&q.rank, 1) && lm_idset_has(&q.rank, 5) && !lm_idset_has(&q.rank, 6));
  snprintf(first, sizeof first, "%s", q.canonical);
  lm_query_fini(&q);
  CHECK(parse("w=f0&rank=1", &q, &d) == LM_OK);
  CHECK(strcmp(q.canonical, first) != 0);
  lm_query_fini(&q);
  CHECK(parse("w=f0&rank=x", &q, &d) == LM_EINVAL);
  lm_query_fini(&q);

  /* Exact names match themselves only, whatever characters they hold. */
  const char *names[] = {"void k<float>(int*, float) [clone .kd]", "a.b+c?(d)|e", "back\\Eslash\\Q", "plain"};
  for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
    lm_buf b = {0};
    lm_buf_puts(&b, "w=f0&kn=");
    for (const unsigned char *p = (const unsigned char *)names[i]; *p; p++) lm_buf_printf(&b, "%%%02X", *p);
    CHECK(parse(lm_buf_cstr(&b), &q, &d) == LM_OK);
    CHECK(q.n_kernels == 1);
    CHECK(matches(q.kernels[0], names[i]) == 1);
    char longer[256];
    snprintf(longer, sizeof longer, "x%s", names[i]);
    CHECK(matches(q.kernels[0], longer) == 0);
    CHECK(matches(q.kernels[0], "plainx") == 0);
    lm_query_fini(&q);
    lm_buf_fini(&b);
  }

  /* Refusals name the parameter. */
  static const struct {
    const char *text, *needle;
  } bad[] = {
      {"w=f0&zz=1", "unknown parameter 'zz'"},
      {"w=f0&w=f1", "given twice"},
      {"w=f0&k=%zz", "bad %-escape"},
      {"w=f0&k=%4", "bad %-escape"},
      {"w=f0&k=a%0Ab", "control character"},
      {"w=f0&norm=per_year", "norm=per_year: expected one of per_wave, per_cycle, per_second, per_kernel"},
      {"w=f0&weight=heavy", "weight=heavy: expected one of count, time"},
      {"w=f0&clock=min", "clock=min: expected one of max, measured"},
      {"w=f0&compat=3.1", "compat=3.1: expected one of 3.0, 3.3"},
      {"w=f0&t=0.2&order=up", "order=up: expected one of asc, desc"},
      {"w=f0&norm=per_wave&norm=per_wave", "parameter 'norm' is given twice"},
      {"w=f0&clock=max&clock=measured", "parameter 'clock' is given twice"},
      {"w=f0&d=3:x", "d"},
      {"w=&norm=per_wave", "empty"},
      {"w=f0&corrected=yes", "corrected=yes: expected one of 0, 1"},
      {"%3D=1", "unknown parameter"},
  };
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    lm_status st = parse(bad[i].text, &q, &d);
    CHECK(st != LM_OK);
    CHECK(st == LM_OK || strstr(d.message, bad[i].needle) != NULL);
    if (st == LM_OK || !strstr(d.message, bad[i].needle))
      fprintf(stderr, "'%s': %s (expected '%s')\n", bad[i].text, d.message, bad[i].needle);
    lm_query_fini(&q);
  }
  /* Limits. */
  lm_buf many = {0};
  lm_buf_puts(&many, "w=f0");
  for (int i = 0; i <= LM_QUERY_MAX_ITEMS; i++) lm_buf_printf(&many, "&k=k%d", i);
  CHECK(parse(lm_buf_cstr(&many), &q, &d) == LM_ELIMIT);
  lm_query_fini(&q);
  lm_buf_fini(&many);
  char *huge = malloc(LM_QUERY_MAX_BYTES + 16);
  memset(huge, 'a', LM_QUERY_MAX_BYTES + 15);
  huge[LM_QUERY_MAX_BYTES + 15] = '\0';
  CHECK(lm_query_parse(huge, strlen(huge), &q, &d) == LM_ELIMIT);
  lm_query_fini(&q);
  free(huge);
  CHECK(lm_query_parse("w=f0\0&k=x", 9, &q, &d) == LM_EINVAL);
  lm_query_fini(&q);
  CHECK(parse("", &q, &d) == LM_OK && q.w == NULL);
  CHECK(q.offset == -1 && q.limit == -1 && q.sort == -1 && q.table == NULL);
  lm_query_fini(&q);
  /* Paging a long table: not part of the selection. */
  CHECK(parse("w=f0&t=0.2&offset=200&limit=50&sort=1&order=desc&filter=Vec%20Copy", &q, &d) == LM_OK);
  CHECK_STR(q.table, "0.2");
  CHECK(q.offset == 200 && q.limit == 50 && q.sort == 1);
  CHECK_STR(q.order, "desc");
  CHECK_STR(q.filter, "Vec Copy");
  snprintf(first, sizeof first, "%s", q.canonical);
  lm_query_fini(&q);
  CHECK(parse("w=f0", &q, &d) == LM_OK);
  CHECK_STR(q.canonical, first);
  lm_query_fini(&q);
  const char *bad_pages[] = {"offset=-1", "offset=1e3", "offset=", "limit=0", "limit=1001", "sort=x", "order=up",
                             "offset=1&offset=2", "t=", "limit=99999999999999999999"};
  for (size_t i = 0; i < sizeof bad_pages / sizeof *bad_pages; i++) {
    CHECK(parse(bad_pages[i], &q, &d) == LM_EINVAL);
    lm_query_fini(&q);
  }
  CHECK(parse("limit=1000&offset=1000000000", &q, &d) == LM_OK && q.limit == 1000);
  lm_query_fini(&q);
  CHECK(parse("offset=1000000001", &q, &d) == LM_EINVAL);
  CHECK(strcmp(d.field, "offset") == 0);
  lm_query_fini(&q);
  /* The metric of /api/series: one value, 1 to 64 characters; not part
   * of the selection. */
  CHECK(parse("w=f0&m=2.1.0", &q, &d) == LM_OK);
  CHECK_STR(q.metric, "2.1.0");
  CHECK_STR(q.canonical, first);
  lm_query_fini(&q);
  CHECK(parse("m=2.1.0&m=2.1.1", &q, &d) == LM_EINVAL && strcmp(d.field, "m") == 0);
  lm_query_fini(&q);
  CHECK(parse("m=", &q, &d) == LM_EINVAL);
  lm_query_fini(&q);
  CHECK(parse("m=11111111111111111111111111111111111111111111111111111111111111111", &q, &d) == LM_EINVAL);
  lm_query_fini(&q);
  return check_report("test_query");
}
