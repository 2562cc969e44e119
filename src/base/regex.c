/*
 * regex.c - the one place lumen matches a user's regular expression.
 * Every match runs under a PCRE2 match context with explicit match and
 * depth limits, so a pattern that backtracks without end costs a bounded
 * amount of work per subject; reaching a limit is an error naming the
 * pattern and the subject, never a non-match (which would silently change
 * a selection).
 */
#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>
#include <string.h>

#include "base/base.h"

struct lm_regex {
  pcre2_code *code;
  pcre2_match_context *limits;
  char *label;
};

lm_status lm_regex_compile(const char *label, const char *pattern, lm_regex **out, lm_diag *diag) {
  *out = NULL;
  lm_regex *re = lm_calloc(1, sizeof *re);
  if (!re || !(re->label = lm_strdup(label ? label : "pattern"))) {
    lm_free(re);
    return lm_oom(diag, NULL);
  }
  int err;
  PCRE2_SIZE erroff;
  re->code = pcre2_compile((PCRE2_SPTR)pattern, PCRE2_ZERO_TERMINATED, PCRE2_UTF, &err, &erroff, NULL);
  if (!re->code) {
    PCRE2_UCHAR msg[256];
    pcre2_get_error_message(err, msg, sizeof msg);
    lm_status st = lm_diag_set(diag, LM_EINVAL, NULL, 0, (long)erroff + 1, NULL, "%s: %s at offset %zu", re->label,
                               (char *)msg, (size_t)erroff);
    lm_regex_free(re);
    return st;
  }
  re->limits = pcre2_match_context_create(NULL);
  if (!re->limits) {
    lm_regex_free(re);
    return lm_oom(diag, NULL);
  }
  pcre2_set_match_limit(re->limits, LM_REGEX_MATCH_LIMIT);
  pcre2_set_depth_limit(re->limits, LM_REGEX_DEPTH_LIMIT);
  *out = re;
  return LM_OK;
}

lm_status lm_regex_match(const lm_regex *re, const char *what, const char *subject, int *hit, lm_diag *diag) {
  *hit = 0;
  pcre2_match_data *md = pcre2_match_data_create_from_pattern(re->code, NULL);
  if (!md) return lm_oom(diag, NULL);
  int rc = pcre2_match(re->code, (PCRE2_SPTR)subject, PCRE2_ZERO_TERMINATED, 0, 0, md, re->limits);
  pcre2_match_data_free(md);
  if (rc >= 0) *hit = 1;
  if (rc >= 0 || rc == PCRE2_ERROR_NOMATCH) return LM_OK;
  if (rc == PCRE2_ERROR_NOMEMORY) return lm_oom(diag, NULL);
  PCRE2_UCHAR msg[256];
  pcre2_get_error_message(rc, msg, sizeof msg);
  /* The subject cut to a readable length, on the message's one line. */
  char shown[160];
  size_t n = 0;
  for (const char *p = subject; *p && n + 1 < sizeof shown; p++) shown[n++] = (*p == '\n' || *p == '\r') ? ' ' : *p;
  shown[n] = '\0';
  return lm_fail(diag, LM_EINVAL, NULL, "%s: gave up matching it against %s '%s%s' (%s): simplify the pattern",
                 re->label, what ? what : "the text", shown, strlen(subject) > n ? "..." : "", (char *)msg);
}

void lm_regex_free(lm_regex *re) {
  if (!re) return;
  pcre2_match_context_free(re->limits);
  pcre2_code_free(re->code);
  lm_free(re->label);
  lm_free(re);
}
