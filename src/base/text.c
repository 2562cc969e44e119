/*
 * text.c - text that is safe to show: names from a workload reach a
 * terminal and JSON readers, and a workload may be hostile.
 *
 * Terminal text keeps valid UTF-8 as it is and writes every control
 * character (C0, DEL, C1) and every byte that is not part of a valid UTF-8
 * sequence as a visible \xNN escape, so no escape sequence reaches the
 * terminal; a width cap cuts long cells with a marker. JSON text produced
 * by cJSON (which copies string bytes as they are) is repaired in one pass:
 * each invalid byte becomes \ufffd, so the output is always valid UTF-8.
 */
#include <string.h>

#include "base/base.h"

/* Length of the valid UTF-8 sequence at s (n bytes left), or 0 when the
 * bytes there are not one (overlong forms, surrogates and code points past
 * U+10FFFF are invalid). */
static size_t utf8_len(const unsigned char *s, size_t n) {
  unsigned c = s[0];
  size_t len;
  unsigned cp;
  if (c < 0x80) return 1;
  if (c >= 0xC2 && c <= 0xDF) len = 2, cp = c & 0x1F;
  else if (c >= 0xE0 && c <= 0xEF) len = 3, cp = c & 0x0F;
  else if (c >= 0xF0 && c <= 0xF4) len = 4, cp = c & 0x07;
  else return 0;
  if (n < len) return 0;
  for (size_t i = 1; i < len; i++) {
    if ((s[i] & 0xC0) != 0x80) return 0;
    cp = (cp << 6) | (s[i] & 0x3F);
  }
  if ((len == 3 && (cp < 0x800 || (cp >= 0xD800 && cp <= 0xDFFF))) || (len == 4 && (cp < 0x10000 || cp > 0x10FFFF)))
    return 0;
  return len;
}

/* The width of the character at s as written (escapes take 4 a byte), and
 * its length in bytes. */
static size_t shown(const unsigned char *s, size_t n, size_t *bytes, int *escape) {
  size_t len = utf8_len(s, n);
  int c1 = len == 2 && s[0] == 0xC2 && s[1] < 0xA0; /* U+0080..U+009F */
  *escape = len == 0 || c1 || s[0] < 0x20 || s[0] == 0x7F;
  *bytes = len ? len : 1;
  return *escape ? 4 * *bytes : 1;
}

size_t lm_text_escape(lm_buf *out, const char *text, size_t n, size_t max_width) {
  static const char hex[] = "0123456789abcdef";
  const unsigned char *s = (const unsigned char *)text;
  size_t total = 0, bytes;
  int escape;
  /* Printable ASCII that fits, the usual text: as it is. */
  size_t ascii = 0;
  while (ascii < n && s[ascii] >= 0x20 && s[ascii] < 0x7F) ascii++;
  if (ascii == n && (!max_width || n <= max_width)) {
    lm_buf_append(out, text, n);
    return n;
  }
  if (max_width)
    for (size_t i = 0; i < n && total <= max_width; i += bytes) total += shown(s + i, n - i, &bytes, &escape);
  size_t limit = max_width && total > max_width ? max_width - 1 : (size_t)-1, width = 0;
  size_t plain = 0; /* the bytes from here to i are written as they are, in one append */
  for (size_t i = 0; i < n; i += bytes) {
    size_t w = shown(s + i, n - i, &bytes, &escape);
    if (width + w > limit) {
      lm_buf_append(out, text + plain, i - plain);
      lm_buf_puts(out, "…");
      return width + 1;
    }
    if (escape) {
      lm_buf_append(out, text + plain, i - plain);
      for (size_t j = 0; j < bytes; j++) {
        char e[4] = {'\\', 'x', hex[s[i + j] >> 4], hex[s[i + j] & 15]};
        lm_buf_append(out, e, 4);
      }
      plain = i + bytes;
    }
    width += w;
  }
  lm_buf_append(out, text + plain, n - plain);
  return width;
}

char *lm_text_safe(const char *text, size_t max_width) {
  lm_buf b = {0};
  lm_text_escape(&b, text ? text : "", text ? strlen(text) : 0, max_width);
  if (!b.data && !b.failed) return lm_strdup("");
  return lm_buf_take(&b);
}

int lm_utf8_valid(const char *text, size_t n) {
  const unsigned char *s = (const unsigned char *)text;
  for (size_t i = 0; i < n;) {
    size_t len = utf8_len(s + i, n - i);
    if (!len) return 0;
    i += len;
  }
  return 1;
}

char *lm_json_utf8_fix(const char *json) {
  size_t n = strlen(json);
  if (lm_utf8_valid(json, n)) return NULL;
  lm_buf b = {0};
  const unsigned char *s = (const unsigned char *)json;
  for (size_t i = 0; i < n;) {
    size_t len = utf8_len(s + i, n - i);
    if (len) {
      lm_buf_append(&b, json + i, len);
      i += len;
    } else {
      lm_buf_puts(&b, "\\ufffd");
      i++;
    }
  }
  return b.failed ? NULL : lm_buf_take(&b);
}
