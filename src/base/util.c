/*
 * util.c - small helpers: whole-file reads, Python-compatible float text,
 * case-insensitive comparison.
 *
 * lm_format_double reproduces Python's repr() so that lumen's CSV and JSON
 * numbers read exactly like the reference tool's: the shortest digit string
 * that round-trips, fixed notation for exponents -4..15, a trailing ".0".
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/base.h"

int lm_str_ieq(const char *a, const char *b) {
  for (;; a++, b++) {
    int ca = (unsigned char)*a, cb = (unsigned char)*b;
    if (ca >= 'A' && ca <= 'Z') ca += 32;
    if (cb >= 'A' && cb <= 'Z') cb += 32;
    if (ca != cb) return 0;
    if (!ca) return 1;
  }
}

lm_status lm_make_dirs(const char *dir, const char *what, const char *hint, lm_diag *diag) {
  char path[4096];
  if (snprintf(path, sizeof path, "%s", dir) >= (int)sizeof path)
    return lm_diag_set(diag, LM_ELIMIT, NULL, 0, 0, NULL, "a folder path over %zu bytes", sizeof path);
  for (char *p = path + 1; *p; p++) {
    if (*p != '/') continue;
    *p = '\0';
    if (mkdir(path, 0777) != 0 && errno != EEXIST) goto fail;
    *p = '/';
  }
  if (mkdir(path, 0777) != 0 && errno != EEXIST) goto fail;
  return LM_OK;
fail:
  if (hint && (errno == EACCES || errno == EROFS))
    return lm_diag_set(diag, LM_EIO, path, 0, 0, NULL, "cannot create %s: %s (%s)", what, strerror(errno), hint);
  return lm_diag_set(diag, LM_EIO, path, 0, 0, NULL, "cannot create %s: %s", what, strerror(errno));
}

lm_status lm_read_file(const char *path, size_t max_bytes, char **out,
                       size_t *out_len, lm_diag *diag) {
  lm_status status = LM_OK;
  char *data = NULL;
  FILE *f = fopen(path, "rb");
  *out = NULL;
  if (!f)
    return lm_diag_set(diag, LM_EIO, path, 0, 0, NULL, "cannot open: %s",
                       strerror(errno));
  struct stat st;
  if (fstat(fileno(f), &st) != 0 || !S_ISREG(st.st_mode)) {
    status = lm_diag_set(diag, LM_EIO, path, 0, 0, NULL, "not a regular file");
    goto done;
  }
  if ((size_t)st.st_size > max_bytes) {
    status = lm_diag_set(diag, LM_ELIMIT, path, 0, 0, NULL,
                         "file is %lld bytes, over the %zu-byte limit",
                         (long long)st.st_size, max_bytes);
    goto done;
  }
  size_t size = (size_t)st.st_size;
  data = lm_malloc(size + 1);
  if (!data) {
    status = lm_diag_set(diag, LM_ENOMEM, path, 0, 0, NULL, "out of memory");
    goto done;
  }
  size_t got = fread(data, 1, size, f);
  if (got != size && ferror(f)) {
    status = lm_diag_set(diag, LM_EIO, path, 0, 0, NULL, "read failed: %s",
                         strerror(errno));
    goto done;
  }
  data[got] = '\0';
  *out = data;
  if (out_len) *out_len = got;
  data = NULL;
done:
  lm_free(data);
  fclose(f);
  return status;
}

char *lm_format_double(double value, char *out) {
  if (isnan(value)) {
    strcpy(out, "nan");
    return out;
  }
  if (isinf(value)) {
    strcpy(out, value < 0 ? "-inf" : "inf");
    return out;
  }
  if (value == 0) {
    strcpy(out, signbit(value) ? "-0.0" : "0.0");
    return out;
  }
  char sci[40];
  for (int precision = 0; precision < 17; precision++) {
    snprintf(sci, sizeof sci, "%.*e", precision, value);
    if (strtod(sci, NULL) == value) break;
  }
  /* sci is "[-]d[.ddd]e[+-]XX": split into sign, digits and exponent. */
  const char *p = sci;
  int negative = 0;
  if (*p == '-') {
    negative = 1;
    p++;
  }
  char digits[24];
  int n_digits = 0;
  for (; *p && *p != 'e'; p++)
    if (*p != '.') digits[n_digits++] = *p;
  while (n_digits > 1 && digits[n_digits - 1] == '0') n_digits--;
  digits[n_digits] = '\0';
  int exponent = atoi(p + 1);
  int decpt = exponent + 1; /* value = 0.digits * 10^decpt */
  char *o = out;
  if (negative) *o++ = '-';
  if (decpt > -4 && decpt <= 16) {
    if (decpt <= 0) {
      *o++ = '0';
      *o++ = '.';
      for (int i = 0; i < -decpt; i++) *o++ = '0';
      memcpy(o, digits, (size_t)n_digits);
      o += n_digits;
    } else if (decpt >= n_digits) {
      memcpy(o, digits, (size_t)n_digits);
      o += n_digits;
      for (int i = n_digits; i < decpt; i++) *o++ = '0';
      *o++ = '.';
      *o++ = '0';
    } else {
      memcpy(o, digits, (size_t)decpt);
      o += decpt;
      *o++ = '.';
      memcpy(o, digits + decpt, (size_t)(n_digits - decpt));
      o += n_digits - decpt;
    }
    *o = '\0';
  } else {
    *o++ = digits[0];
    if (n_digits > 1) {
      *o++ = '.';
      memcpy(o, digits + 1, (size_t)(n_digits - 1));
      o += n_digits - 1;
    }
    sprintf(o, "e%c%02d", exponent < 0 ? '-' : '+', abs(exponent));
  }
  return out;
}
