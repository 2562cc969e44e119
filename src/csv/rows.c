/*
 * rows.c - a CSV file read one record at a time, for the readers of other
 * tools' long formats (one row per dispatch and counter), whose files run
 * to gigabytes and are folded as they stream: memory stays one window of
 * the file plus the longest record. Fields come back unquoted and
 * NUL-terminated; a quoted field may hold commas, doubled quotes and line
 * breaks (line numbers count them). A UTF-8 byte-order mark is skipped.
 */
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "csv/csv.h"

enum { WINDOW = 1 << 20 };

struct lm_csv_rows {
  char *path;
  int fd;
  char *buf; /* window of the file: [pos, len) not yet parsed */
  size_t pos, len, cap;
  int eof;
  size_t max_record;
  long line;        /* line of the next record's first byte */
  long record_line; /* line of the record last returned */
  char *out;        /* the record's unquoted fields, NUL-separated */
  size_t out_cap;
  size_t *offsets; /* each field's start in out */
  const char **fields;
  size_t cap_fields; /* room in offsets and fields */
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
  r->out_cap = 4096;
  r->out = lm_malloc(r->out_cap);
  r->cap_fields = 64;
  r->fields = lm_malloc(r->cap_fields * sizeof *r->fields);
  r->offsets = lm_malloc(r->cap_fields * sizeof *r->offsets);
  lm_status st = LM_OK;
  if (!r->path || !r->buf || !r->out || !r->fields || !r->offsets) {
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
  lm_free(r->out);
  lm_free(r->fields);
  lm_free(r->offsets);
  lm_free(r);
}

long lm_csv_rows_line(const lm_csv_rows *r) { return r->record_line; }

const char *lm_csv_rows_path(const lm_csv_rows *r) { return r->path; }

/* Read more of the file after the unparsed bytes; 0 at the end. */
static lm_status fill(lm_csv_rows *r, lm_diag *diag) {
  if (r->pos > 0) {
    memmove(r->buf, r->buf + r->pos, r->len - r->pos);
    r->len -= r->pos;
    r->pos = 0;
  }
  if (r->len == r->cap) {
    if (r->cap >= r->max_record + WINDOW)
      return lm_fail_at(diag, LM_ELIMIT, r->path, r->line, NULL, "record longer than %zu bytes", r->max_record);
    char *grown = lm_realloc(r->buf, r->cap * 2);
    if (!grown) return lm_oom(diag, r->path);
    r->buf = grown;
    r->cap *= 2;
  }
  for (;;) {
    ssize_t n = read(r->fd, r->buf + r->len, r->cap - r->len);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return lm_fail(diag, LM_EIO, r->path, "read failed: %s", strerror(errno));
    if (n == 0) r->eof = 1;
    r->len += (size_t)n;
    return LM_OK;
  }
}

static lm_status put(lm_csv_rows *r, size_t at, char c, lm_diag *diag) {
  if (at >= r->max_record)
    return lm_fail_at(diag, LM_ELIMIT, r->path, r->line, NULL, "record longer than %zu bytes", r->max_record);
  if (at >= r->out_cap) {
    char *grown = lm_realloc(r->out, r->out_cap * 2);
    if (!grown) return lm_oom(diag, r->path);
    r->out = grown;
    r->out_cap *= 2;
  }
  r->out[at] = c;
  return LM_OK;
}

static lm_status grow_fields(lm_csv_rows *r, lm_diag *diag) {
  size_t *offsets = lm_realloc(r->offsets, 2 * r->cap_fields * sizeof *offsets);
  if (!offsets) return lm_oom(diag, r->path);
  r->offsets = offsets;
  const char **fields = lm_realloc(r->fields, 2 * r->cap_fields * sizeof *fields);
  if (!fields) return lm_oom(diag, r->path);
  r->fields = fields;
  r->cap_fields *= 2;
  return LM_OK;
}

/* Parse one record from [pos, len) when it is complete there: 1 with the
 * fields' starts as offsets into out, 0 when more bytes are needed. */
static int parse(lm_csv_rows *r, size_t *offsets_n, lm_status *st, lm_diag *diag) {
  size_t p = r->pos, o = 0, n = 0;
  long lines = 0;
  int quoted = 0, at_start = 1;
  if (r->line == 1 && p == 0 && r->len >= 3 && (unsigned char)r->buf[0] == 0xEF && (unsigned char)r->buf[1] == 0xBB &&
      (unsigned char)r->buf[2] == 0xBF)
    p = 3;
  r->offsets[n++] = 0;
  for (;;) {
    if (p >= r->len) {
      if (!r->eof) return 0;
      if (quoted) {
        *st = lm_fail_at(diag, LM_EPARSE, r->path, r->line, NULL, "quoted field not closed before the end of the file");
        return 1;
      }
      break;
    }
    char c = r->buf[p];
    if (quoted) {
      if (c == '"') {
        if (p + 1 >= r->len && !r->eof) return 0;
        if (p + 1 < r->len && r->buf[p + 1] == '"') {
          if ((*st = put(r, o++, '"', diag)) != LM_OK) return 1;
          p += 2;
          continue;
        }
        quoted = 0;
        p++;
        continue;
      }
      if (c == '\n') lines++;
      if ((*st = put(r, o++, c, diag)) != LM_OK) return 1;
      p++;
      continue;
    }
    if (c == '"' && at_start) {
      quoted = 1;
      at_start = 0;
      p++;
      continue;
    }
    if (c == ',') {
      if ((*st = put(r, o++, '\0', diag)) != LM_OK) return 1;
      if (n == r->cap_fields && (*st = grow_fields(r, diag)) != LM_OK) return 1;
      r->offsets[n++] = o;
      at_start = 1;
      p++;
      continue;
    }
    if (c == '\n' || c == '\r') {
      p++;
      if (c == '\r') {
        if (p >= r->len && !r->eof) return 0;
        if (p < r->len && r->buf[p] == '\n') p++;
      }
      lines++;
      break;
    }
    at_start = 0;
    if ((*st = put(r, o++, c, diag)) != LM_OK) return 1;
    p++;
  }
  if ((*st = put(r, o, '\0', diag)) != LM_OK) return 1;
  r->pos = p;
  r->record_line = r->line;
  r->line += lines;
  *offsets_n = n;
  return 1;
}

lm_status lm_csv_rows_next(lm_csv_rows *r, const char *const **fields, size_t *n_fields, lm_diag *diag) {
  *fields = NULL;
  *n_fields = 0;
  size_t n = 0;
  lm_status st = LM_OK;
  for (;;) {
    /* Blank lines between records are skipped, as every CSV reader does. */
    while (r->pos < r->len && (r->buf[r->pos] == '\n' || r->buf[r->pos] == '\r')) {
      if (r->buf[r->pos] == '\n') r->line++;
      r->pos++;
    }
    if (r->pos >= r->len) {
      if (r->eof) return LM_OK; /* the end: *n_fields 0 */
      if ((st = fill(r, diag)) != LM_OK) return st;
      continue;
    }
    if (parse(r, &n, &st, diag)) break;
    if ((st = fill(r, diag)) != LM_OK) return st;
  }
  if (st != LM_OK) return st;
  for (size_t i = 0; i < n; i++) r->fields[i] = r->out + r->offsets[i];
  *fields = r->fields;
  *n_fields = n;
  return LM_OK;
}
