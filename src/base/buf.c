/*
 * buf.c - growable text buffer.
 *
 * A failed allocation latches `failed` and turns later appends into no-ops,
 * so a writer that builds a large document checks for failure once.
 */
#include <stdio.h>
#include <string.h>

#include "base/base.h"

void lm_buf_fini(lm_buf *buf) {
  lm_free(buf->data);
  buf->data = NULL;
  buf->len = buf->cap = 0;
  buf->failed = 0;
}

void lm_buf_reset(lm_buf *buf) {
  buf->len = 0;
  if (buf->data) buf->data[0] = '\0';
}

static int reserve(lm_buf *buf, size_t extra) {
  if (buf->failed) return 0;
  if (buf->len + extra + 1 <= buf->cap) return 1;
  size_t cap = buf->cap ? buf->cap : 64;
  while (cap < buf->len + extra + 1) cap *= 2;
  char *grown = lm_realloc(buf->data, cap);
  if (!grown) {
    buf->failed = 1;
    return 0;
  }
  buf->data = grown;
  buf->cap = cap;
  return 1;
}

void lm_buf_append(lm_buf *buf, const char *s, size_t n) {
  if (!reserve(buf, n)) return;
  memcpy(buf->data + buf->len, s, n);
  buf->len += n;
  buf->data[buf->len] = '\0';
}

void lm_buf_puts(lm_buf *buf, const char *s) { lm_buf_append(buf, s, strlen(s)); }

void lm_buf_repeat(lm_buf *buf, const char *s, size_t n, size_t times) {
  if (!n || !times || n > ((size_t)-1 >> 1) / times || !reserve(buf, n * times)) return;
  /* One copy, then the copies so far doubled: a few calls, not `times`. */
  char *at = buf->data + buf->len;
  size_t total = n * times, done = n;
  memcpy(at, s, n);
  while (done < total) {
    size_t more = done < total - done ? done : total - done;
    memcpy(at + done, at, more);
    done += more;
  }
  buf->len += total;
  buf->data[buf->len] = '\0';
}

void lm_buf_putc(lm_buf *buf, char c) { lm_buf_append(buf, &c, 1); }

void lm_buf_vprintf(lm_buf *buf, const char *fmt, va_list ap) {
  if (buf->failed) return;
  /* Formatted straight into the room left; only text longer than that is
   * formatted a second time, after the buffer grows. */
  size_t room = buf->cap > buf->len ? buf->cap - buf->len : 0;
  va_list copy;
  va_copy(copy, ap);
  int n = vsnprintf(room ? buf->data + buf->len : NULL, room, fmt, copy);
  va_end(copy);
  if (n >= 0 && (size_t)n >= room && reserve(buf, (size_t)n)) vsnprintf(buf->data + buf->len, (size_t)n + 1, fmt, ap);
  if (n >= 0 && (size_t)n < buf->cap - buf->len) buf->len += (size_t)n;
  else if (room) buf->data[buf->len] = '\0'; /* a partial text is dropped */
}

void lm_buf_printf(lm_buf *buf, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  lm_buf_vprintf(buf, fmt, ap);
  va_end(ap);
}

const char *lm_buf_cstr(const lm_buf *buf) { return buf->data ? buf->data : ""; }

char *lm_buf_take(lm_buf *buf) {
  if (buf->failed) {
    lm_buf_fini(buf);
    return NULL;
  }
  char *out = buf->data ? buf->data : lm_strdup("");
  buf->data = NULL;
  buf->len = buf->cap = 0;
  return out;
}
