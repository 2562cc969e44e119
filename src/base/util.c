/*
 * util.c - small helpers: safe file opens and whole-file reads, Python-
 * compatible float text, case-insensitive comparison.
 *
 * Input files are opened without blocking (a FIFO or device under a file's
 * name is refused, not waited on) and, for folder contents, without
 * following a symbolic link out of the folder: a workload served over HTTP
 * must not become a way to read the server's other files.
 *
 * lm_format_double reproduces Python's repr() so that lumen's CSV and JSON
 * numbers read exactly like the reference tool's: the shortest digit string
 * that round-trips, fixed notation for exponents -4..15, a trailing ".0".
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

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
    return lm_fail(diag, LM_ELIMIT, NULL, "a folder path over %zu bytes", sizeof path);
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
    return lm_fail(diag, LM_EIO, path, "cannot create %s: %s (%s)", what, strerror(errno), hint);
  return lm_fail(diag, LM_EIO, path, "cannot create %s: %s", what, strerror(errno));
}

static const char *kind_of(mode_t mode) {
  if (S_ISDIR(mode)) return "a folder";
  if (S_ISFIFO(mode)) return "a FIFO (named pipe)";
  if (S_ISSOCK(mode)) return "a socket";
  if (S_ISCHR(mode) || S_ISBLK(mode)) return "a device";
  return "not a regular file";
}

/* Resolve the symbolic link `path` and check that its target lies inside
 * the folder that holds the link; on success *real is the target (owned). */
static lm_status resolve_inside(const char *path, char **real, lm_diag *diag) {
  lm_status status = LM_OK;
  char *dir = NULL, *real_dir = NULL;
  *real = realpath(path, NULL);
  if (!*real)
    return lm_fail(diag, errno == ENOENT ? LM_ENOTFOUND : LM_EIO, path,
                   "a symbolic link whose target cannot be opened: %s", strerror(errno));
  const char *slash = strrchr(path, '/');
  dir = slash ? lm_strndup(path, slash == path ? 1 : (size_t)(slash - path)) : lm_strdup(".");
  if (!dir) {
    status = lm_oom(diag, path);
    goto done;
  }
  real_dir = realpath(dir, NULL);
  size_t n = real_dir ? strlen(real_dir) : 0;
  int inside = real_dir && strncmp(*real, real_dir, n) == 0 &&
               ((*real)[n] == '/' || (n == 1 && real_dir[0] == '/'));
  if (!inside)
    status = lm_fail(diag, LM_EIO, path,
                     "a symbolic link to a file outside its folder: refused (copy the file "
                     "into the folder instead)");
done:
  if (status != LM_OK) {
    free(*real);
    *real = NULL;
  }
  free(real_dir);
  lm_free(dir);
  return status;
}

lm_status lm_open_read(const char *path, int flags, int *fd_out, size_t *size_out, lm_diag *diag) {
  lm_status status = LM_OK;
  char *real = NULL;
  int contained = (flags & LM_OPEN_CONTAINED) != 0;
  int base = O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY;
  int fd = open(path, base | (contained ? O_NOFOLLOW : 0));
  *fd_out = -1;
  if (fd < 0 && errno == ELOOP && contained) {
    if ((status = resolve_inside(path, &real, diag)) != LM_OK) goto done;
    fd = open(real, base | O_NOFOLLOW);
  }
  if (fd < 0) {
    status = lm_fail(diag, errno == ENOENT ? LM_ENOTFOUND : LM_EIO, path, "cannot open: %s", strerror(errno));
    goto done;
  }
  struct stat st;
  if (fstat(fd, &st) != 0) {
    status = lm_fail(diag, LM_EIO, path, "cannot read: %s", strerror(errno));
    goto done;
  }
  if (!S_ISREG(st.st_mode)) {
    status = lm_fail(diag, LM_EIO, path, "%s, not a regular file: refused", kind_of(st.st_mode));
    goto done;
  }
  /* A regular file never blocks; reads go back to the ordinary mode. */
  int fl = fcntl(fd, F_GETFL);
  if (fl >= 0) fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
  if (size_out) *size_out = (size_t)st.st_size;
  *fd_out = fd;
  fd = -1;
done:
  if (fd >= 0) close(fd);
  free(real);
  return status;
}

lm_status lm_path_kind(const char *path, int flags, lm_diag *diag) {
  struct stat st;
  if (lstat(path, &st) != 0)
    return lm_fail(diag, errno == ENOENT || errno == ENOTDIR ? LM_ENOTFOUND : LM_EIO, path, "cannot open: %s",
                   strerror(errno));
  if (S_ISLNK(st.st_mode)) {
    char *real = NULL;
    lm_status status = LM_OK;
    if (flags & LM_OPEN_CONTAINED) {
      status = resolve_inside(path, &real, diag);
      if (status != LM_OK) return status;
    } else if (!(real = realpath(path, NULL))) {
      return lm_fail(diag, errno == ENOENT ? LM_ENOTFOUND : LM_EIO, path,
                     "a symbolic link whose target cannot be opened: %s", strerror(errno));
    }
    if (stat(real, &st) != 0) status = lm_fail(diag, LM_EIO, path, "cannot open: %s", strerror(errno));
    free(real);
    if (status != LM_OK) return status;
  }
  if (!S_ISREG(st.st_mode)) return lm_fail(diag, LM_EIO, path, "%s, not a regular file: refused", kind_of(st.st_mode));
  return LM_OK;
}

static lm_status read_whole(const char *path, size_t max_bytes, int flags, char **out,
                            size_t *out_len, lm_diag *diag) {
  lm_status status = LM_OK;
  char *data = NULL;
  size_t size = 0;
  int fd = -1;
  *out = NULL;
  if ((status = lm_open_read(path, flags, &fd, &size, diag)) != LM_OK) return status;
  if (size > max_bytes) {
    status = lm_fail(diag, LM_ELIMIT, path, "file is %zu bytes, over the %zu-byte limit", size, max_bytes);
    goto done;
  }
  data = lm_malloc(size + 1);
  if (!data) {
    status = lm_oom(diag, path);
    goto done;
  }
  size_t got = 0;
  while (got < size) {
    ssize_t r = read(fd, data + got, size - got);
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) {
      status = lm_fail(diag, LM_EIO, path, "read failed: %s", strerror(errno));
      goto done;
    }
    if (r == 0) break; /* the file shrank while being read */
    got += (size_t)r;
  }
  data[got] = '\0';
  *out = data;
  if (out_len) *out_len = got;
  data = NULL;
done:
  lm_free(data);
  close(fd);
  return status;
}

lm_status lm_read_file(const char *path, size_t max_bytes, char **out, size_t *out_len,
                       lm_diag *diag) {
  return read_whole(path, max_bytes, LM_OPEN_CONTAINED, out, out_len, diag);
}

lm_status lm_read_file_any(const char *path, size_t max_bytes, char **out, size_t *out_len,
                           lm_diag *diag) {
  return read_whole(path, max_bytes, 0, out, out_len, diag);
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
