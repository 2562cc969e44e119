/*
 * rows.c - a CSV file read one record at a time, for the readers of other
 * tools' long formats (one row per dispatch and counter), whose files run
 * to gigabytes and are folded as they stream: memory stays one window of
 * the file plus the longest record.
 *
 * A record is scanned once, byte by byte through a table of the four
 * bytes that matter (comma, quote, LF, CR), writing nothing; when it is
 * complete in the window its delimiters become NULs, so fields point into
 * the window and no byte is copied but a doubled quote's. A scan that
 * needs more of the file starts again after the window is refilled. A
 * UTF-8 byte-order mark is skipped; CRLF and LF endings are read alike.
 */
#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "csv/csv.h"
#include "csv/csv_scan.h"

enum { WINDOW = 1 << 20 };

struct lm_csv_rows {
  char *path;
  int fd;
  char *buf;           /* window of the file: [pos, len) not yet parsed; one
                          byte beyond len always exists (a final NUL) */
  size_t pos, len, cap;
  size_t base; /* the file offset of buf[0] */
  int eof;
  size_t max_record;
  long line;           /* line of the next record's first byte */
  long record_line;    /* line of the record last returned */
  const char **fields;
  size_t *starts, *ends; /* each field's content, scanned */
  unsigned char *doubled;/* 1: the field holds doubled quotes */
  size_t cap_fields;
};

lm_status lm_csv_rows_open(const char *path, size_t max_record, lm_csv_rows **out, lm_diag *diag) {
  *out = NULL;
  lm_csv_rows *r = lm_calloc(1, sizeof *r);
  if (!r) return lm_oom(diag, path);
  r->fd = -1;
  r->max_record = max_record ? max_record : (size_t)64 << 20;
  r->line = 1;
  r->path = lm_malloc(strlen(path) + 1);
  r->cap = WINDOW;
  r->buf = lm_malloc(r->cap);
  r->cap_fields = 64;
  r->fields = lm_malloc(r->cap_fields * sizeof *r->fields);
  r->starts = lm_malloc(r->cap_fields * sizeof *r->starts);
  r->ends = lm_malloc(r->cap_fields * sizeof *r->ends);
  r->doubled = lm_malloc(r->cap_fields);
  lm_status st = LM_OK;
  if (!r->path || !r->buf || !r->fields || !r->starts || !r->ends || !r->doubled) {
    st = lm_oom(diag, path);
    goto done;
  }
  memcpy(r->path, path, strlen(path) + 1);
  st = lm_open_read(path, 0, &r->fd, NULL, diag);
done:
  if (st != LM_OK) {
    lm_csv_rows_close(r);
    return st;
  }
  *out = r;
  return LM_OK;
}

void lm_csv_rows_close(lm_csv_rows *r) {
  if (!r) return;
  if (r->fd >= 0) close(r->fd);
  lm_free(r->path);
  lm_free(r->buf);
  lm_free(r->fields);
  lm_free(r->starts);
  lm_free(r->ends);
  lm_free(r->doubled);
  lm_free(r);
}

long lm_csv_rows_line(const lm_csv_rows *r) { return r->record_line; }

size_t lm_csv_rows_offset(const lm_csv_rows *r) { return r->base + r->pos; }

size_t lm_csv_rows_size(const lm_csv_rows *r) {
  struct stat sb;
  return r->fd >= 0 && fstat(r->fd, &sb) == 0 && S_ISREG(sb.st_mode) ? (size_t)sb.st_size : 0;
}

const char *lm_csv_rows_path(const lm_csv_rows *r) { return r->path; }

static lm_status too_long(lm_csv_rows *r, lm_diag *diag) {
  return lm_fail_at(diag, LM_ELIMIT, r->path, r->line, NULL, "record longer than %zu bytes", r->max_record);
}

/* Read more of the file after the unparsed bytes (at most cap - 1 in the
 * window, so that a NUL fits after the last record). */
static lm_status fill(lm_csv_rows *r, lm_diag *diag) {
  if (r->pos > 0) {
    memmove(r->buf, r->buf + r->pos, r->len - r->pos);
    r->base += r->pos;
    r->len -= r->pos;
    r->pos = 0;
  }
  if (r->len + 1 >= r->cap) {
    if (r->len > r->max_record) return too_long(r, diag);
    char *grown = lm_realloc(r->buf, r->cap * 2);
    if (!grown) return lm_oom(diag, r->path);
    r->buf = grown;
    r->cap *= 2;
  }
  for (;;) {
    ssize_t n = read(r->fd, r->buf + r->len, r->cap - 1 - r->len);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return lm_fail(diag, LM_EIO, r->path, "read failed: %s", strerror(errno));
    if (n == 0) r->eof = 1;
    r->len += (size_t)n;
    return LM_OK;
  }
}

static lm_status grow_fields(lm_csv_rows *r, lm_diag *diag) {
  size_t cap = 2 * r->cap_fields;
  const char **fields = lm_realloc(r->fields, cap * sizeof *fields);
  if (!fields) return lm_oom(diag, r->path);
  r->fields = fields;
  size_t *starts = lm_realloc(r->starts, cap * sizeof *starts);
  if (!starts) return lm_oom(diag, r->path);
  r->starts = starts;
  size_t *ends = lm_realloc(r->ends, cap * sizeof *ends);
  if (!ends) return lm_oom(diag, r->path);
  r->ends = ends;
  unsigned char *doubled = lm_realloc(r->doubled, cap);
  if (!doubled) return lm_oom(diag, r->path);
  r->doubled = doubled;
  r->cap_fields = cap;
  return LM_OK;
}

/* Bytes that end the plain run of a field: comma, quote, LF, CR. */
static const unsigned char special[256] = {['\n'] = 1, ['\r'] = 1, ['"'] = 1, [','] = 1};

/* The commas, quotes, LFs and CRs of the (at most 64) bytes at p before
 * len, one bit each. */
static uint64_t specials64(const char *b, size_t p, size_t len) {
  uint64_t bits = 0;
  if (p + 64 <= len) {
    for (int k = 0; k < 4; k++) {
      lm_csv_marks m = lm_csv_marks16(b + p + 16 * k);
      bits |= (uint64_t)(m.comma | m.stop) << (16 * k);
    }
    return bits;
  }
  for (size_t k = 0; p + k < len; k++)
    if (special[(unsigned char)b[p + k]]) bits |= (uint64_t)1 << k;
  return bits;
}

/* The record being scanned: the field open at `at` begins. */
static int open_field(lm_csv_rows *r, size_t n, size_t at, size_t *p, int *in_q, int *closed, lm_diag *diag) {
  if (n == r->cap_fields && grow_fields(r, diag) != LM_OK) return -1;
  r->doubled[n] = 0;
  *closed = 0;
  *in_q = at < r->len && r->buf[at] == '"';
  r->starts[n] = at + (size_t)*in_q;
  *p = at + (size_t)*in_q;
  return 0;
}

/* Scan the record at pos: each field's content [starts, ends) and whether
 * it holds doubled quotes; *next the offset after the record, *inner the
 * line feeds inside quotes. 1 when the record is complete in the window,
 * 0 when more of the file is needed, -2 for a quote left open at the end
 * of the file, -1 on an error (diag). Sixty-four bytes at a time: only
 * their commas, quotes and line ends are visited. Writes nothing, so a
 * scan that needs more bytes starts again after a refill. */
static int scan(lm_csv_rows *r, size_t *n_out, size_t *next, long *inner, lm_diag *diag) {
  const char *b = r->buf;
  size_t len = r->len, n = 0, p;
  int in_q, closed;
  *inner = 0;
  if (open_field(r, n, r->pos, &p, &in_q, &closed, diag)) return -1;
  for (size_t base = r->pos; base < len; base += 64) {
    uint64_t bits = specials64(b, base, len);
    while (bits) {
      size_t i = base + (size_t)__builtin_ctzll(bits);
      bits &= bits - 1;
      if (i < p) continue;
      char c = b[i];
      if (in_q) {
        if (c == '\n') (*inner)++;
        if (c != '"') continue;
        if (i + 1 >= len && !r->eof) return 0;
        if (i + 1 < len && b[i + 1] == '"') {
          r->doubled[n] = 1;
          p = i + 2;
          continue;
        }
        r->ends[n] = i;
        in_q = 0;
        closed = 1; /* text up to the delimiter is dropped */
        p = i + 1;
        continue;
      }
      if (c == '"') continue; /* a quote inside a plain field is kept */
      if (!closed) r->ends[n] = i;
      n++;
      if (c == ',') {
        if (open_field(r, n, i + 1, &p, &in_q, &closed, diag)) return -1;
        continue;
      }
      if (c == '\r') {
        if (i + 1 >= len && !r->eof) return 0;
        *next = i + 1 < len && b[i + 1] == '\n' ? i + 2 : i + 1;
      } else {
        *next = i + 1;
      }
      *n_out = n;
      return 1;
    }
  }
  if (!r->eof) return 0;
  if (in_q) return -2;
  if (!closed) r->ends[n] = len;
  *n_out = n + 1;
  *next = len;
  return 1;
}

/* The scanned record's fields, NUL-terminated and unquoted in place. */
static void finish(lm_csv_rows *r, size_t n) {
  char *b = r->buf;
  for (size_t i = 0; i < n; i++) {
    size_t s = r->starts[i], e = r->ends[i];
    if (r->doubled[i]) {
      size_t w = s;
      for (size_t q = s; q < e; q++) {
        b[w++] = b[q];
        if (b[q] == '"') q++; /* the second of a pair */
      }
      e = w;
    }
    b[e] = '\0';
    r->fields[i] = b + s;
  }
}

lm_status lm_csv_rows_next(lm_csv_rows *r, const char *const **fields, size_t *n_fields, lm_diag *diag) {
  *fields = NULL;
  *n_fields = 0;
  lm_status st;
  for (;;) {
    if (r->line == 1 && r->pos == 0 && r->len >= 3 && (unsigned char)r->buf[0] == 0xEF &&
        (unsigned char)r->buf[1] == 0xBB && (unsigned char)r->buf[2] == 0xBF)
      r->pos = 3;
    /* Blank lines between records are skipped, as every CSV reader does. */
    while (r->pos < r->len && (r->buf[r->pos] == '\n' || r->buf[r->pos] == '\r')) {
      if (r->buf[r->pos] == '\n') r->line++;
      r->pos++;
    }
    if (r->pos < r->len) {
      size_t n = 0, next = 0;
      long inner = 0;
      int got = scan(r, &n, &next, &inner, diag);
      if (got == -1) return diag ? diag->status : LM_ENOMEM;
      if (got == -2)
        return lm_fail_at(diag, LM_EPARSE, r->path, r->line, NULL,
                          "quoted field not closed before the end of the file");
      if (got == 1) {
        if (next - r->pos > r->max_record) return too_long(r, diag);
        finish(r, n);
        r->record_line = r->line;
        r->line += inner + 1;
        r->pos = next;
        *fields = r->fields;
        *n_fields = n;
        return LM_OK;
      }
    } else if (r->eof) {
      return LM_OK; /* the end: *n_fields 0 */
    }
    if (r->len - r->pos > r->max_record) return too_long(r, diag);
    if ((st = fill(r, diag)) != LM_OK) return st;
  }
}
