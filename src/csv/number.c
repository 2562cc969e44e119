/*
 * number.c - reading one CSV cell as a number, as the reference tool's CSV
 * reader does: an exact fast path (Clinger's: a mantissa and a power of ten
 * that are both exact doubles) and strtod for the rest, so every value is
 * the correctly rounded double; its missing-value tokens; inf.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "csv/csv.h"

static const double pow10_exact[] = {
    1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,  1e8,  1e9,  1e10, 1e11,
    1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};

/* The reference tool's reader treats these as missing values. */
static const char *const na_tokens[] = {
    "#N/A", "#N/A N/A", "#NA", "-1.#IND", "-1.#QNAN", "-NaN", "-nan",
    "1.#IND", "1.#QNAN", "<NA>", "N/A", "NA", "NULL", "NaN", "None",
    "n/a", "nan", "null"};

static int is_na_token(const char *s, size_t n) {
  if (n == 0 || n > 8) return n == 0;
  for (size_t i = 0; i < LM_ARRAY_LEN(na_tokens); i++)
    if (na_tokens[i][0] == s[0] && strlen(na_tokens[i]) == n && memcmp(na_tokens[i], s, n) == 0)
      return 1;
  return 0;
}

/* A number the fast path cannot take: 1 and *value, 0 when the text is
 * not a decimal number, 3 when it is one that no double holds (its
 * magnitude overflows: "1e309", four hundred nines). */
static int slow_number(const char *s, size_t n, double *value) {
  char small[128];
  char *tmp = n < sizeof small ? small : lm_malloc(n + 1);
  int result = 0;
  if (!tmp) return 0;
  memcpy(tmp, s, n);
  tmp[n] = '\0';
  /* strtod accepts hex floats and "infinity" spellings; keep only those the
   * reference reader accepts: decimal numbers and inf. */
  for (size_t i = 0; i < n; i++)
    if (tmp[i] == 'x' || tmp[i] == 'X' || tmp[i] == 'p' || tmp[i] == 'P' || tmp[i] == 'n' ||
        tmp[i] == 'N')
      goto done;
  char *end;
  errno = 0;
  double v = strtod(tmp, &end);
  if (end != tmp + n) goto done;
  if (errno == ERANGE && isinf(v)) {
    result = 3;
    goto done;
  }
  *value = v;
  result = 1;
done:
  if (tmp != small) lm_free(tmp);
  return result;
}

int lm_parse_number(const char *s, const char *e, double *value, int *is_int) {
  while (s < e && (*s == ' ' || *s == '\t')) s++;
  while (e > s && (e[-1] == ' ' || e[-1] == '\t')) e--;
  *is_int = 0;
  if (s == e) {
    *value = LM_NAN;
    return 2;
  }
  const char *p = s;
  int negative = 0;
  if (*p == '-' || *p == '+') {
    negative = *p == '-';
    p++;
  }
  uint64_t mantissa = 0;
  int digits = 0, dropped = 0, exp10 = 0, any = 0;
  while (p < e && (unsigned)(*p - '0') < 10) {
    if (digits < 19) {
      mantissa = mantissa * 10 + (uint64_t)(*p - '0');
      if (mantissa) digits++;
    } else {
      dropped++;
    }
    any = 1;
    p++;
  }
  exp10 = dropped;
  int integer = 1;
  if (p < e && *p == '.') {
    integer = 0;
    p++;
    while (p < e && (unsigned)(*p - '0') < 10) {
      if (digits < 19) {
        mantissa = mantissa * 10 + (uint64_t)(*p - '0');
        if (mantissa) digits++;
        exp10--;
      } else {
        dropped++;
      }
      any = 1;
      p++;
    }
  }
  if (!any) goto not_plain;
  if (p < e && (*p == 'e' || *p == 'E')) {
    integer = 0;
    p++;
    int exp_negative = 0, exp_value = 0, exp_digits = 0;
    if (p < e && (*p == '-' || *p == '+')) {
      exp_negative = *p == '-';
      p++;
    }
    while (p < e && (unsigned)(*p - '0') < 10) {
      if (exp_value < 100000) exp_value = exp_value * 10 + (*p - '0');
      exp_digits++;
      p++;
    }
    if (!exp_digits) goto not_plain;
    exp10 += exp_negative ? -exp_value : exp_value;
  }
  if (p != e) goto not_plain;
  *is_int = integer;
  if (dropped == 0 && mantissa <= (1ULL << 53)) {
    double m = (double)mantissa;
    if (exp10 == 0) {
      *value = negative ? -m : m;
      return 1;
    }
    if (exp10 > 0 && exp10 <= 22) {
      *value = negative ? -(m * pow10_exact[exp10]) : m * pow10_exact[exp10];
      return 1;
    }
    if (exp10 < 0 && exp10 >= -22) {
      *value = negative ? -(m / pow10_exact[-exp10]) : m / pow10_exact[-exp10];
      return 1;
    }
  }
  int slow = slow_number(s, (size_t)(e - s), value);
  if (slow) return slow;
  *is_int = 0;
  return 0;
not_plain:
  if (is_na_token(s, (size_t)(e - s))) {
    *value = LM_NAN;
    return 2;
  }
  {
    size_t n = (size_t)(e - s);
    const char *q = s;
    if (*q == '-' || *q == '+') q++, n--;
    if ((n == 3 && (memcmp(q, "inf", 3) == 0 || memcmp(q, "Inf", 3) == 0)) ||
        (n == 8 && (memcmp(q, "Infinity", 8) == 0 ||
                    memcmp(q, "infinity", 8) == 0))) {
      *value = *s == '-' ? -LM_INF : LM_INF;
      return 1;
    }
  }
  return 0;
}

