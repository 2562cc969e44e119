/*
 * json_scan.c - the JSON tokenizer under rocprofv3's JSON reader (json.c):
 * the first value of a file handed over as events in document order, the
 * file read in blocks into one reusable window, so that memory does not
 * grow with the file. Every token is whole in the window when its event
 * comes: one cut by the window's end is scanned again after the next read,
 * one longer than the window grows it, up to MAX_WINDOW. A NUL kept after
 * the window's last byte stops every inner loop, so they test no bounds;
 * whitespace and strings are searched sixteen bytes at a time. A number is
 * converted as it is checked, to the double lm_parse_number gives: exactly
 * when its mantissa and power of ten are exact doubles, else by strtod.
 * The grammar is RFC 8259's; UTF-8 is not checked.
 */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "rocprofv3/json_private.h"

enum { WINDOW = 1 << 18, PAD = 32 };
#define MAX_WINDOW ((size_t)16 << 20)

struct lm_v3j_scan {
  char *path;
  int fd;
  char *buf;             /* [0, len) the window; buf[len] is NUL and PAD bytes
                            beyond it are readable */
  size_t len, cap, base; /* base: the file offset of buf[0] */
  size_t token;          /* the window offset of the token last handed out */
  int eof;
  unsigned char is_array[LM_V3J_MAX_DEPTH]; /* of each open container */
};

lm_status lm_v3j_scan_open(const char *path, lm_v3j_scan **out, lm_diag *diag) {
  *out = NULL;
  lm_v3j_scan *s = lm_calloc(1, sizeof *s);
  if (!s) return lm_oom(diag, path);
  s->fd = -1;
  s->cap = WINDOW;
  s->path = lm_strdup(path);
  s->buf = lm_calloc(1, WINDOW + PAD);
  lm_status st = s->path && s->buf ? lm_open_read(path, 0, &s->fd, NULL, diag) : lm_oom(diag, path);
  if (st != LM_OK) {
    lm_v3j_scan_close(s);
    return st;
  }
  *out = s;
  return LM_OK;
}

void lm_v3j_scan_close(lm_v3j_scan *s) {
  if (!s) return;
  if (s->fd >= 0) close(s->fd);
  lm_free(s->path);
  lm_free(s->buf);
  lm_free(s);
}

/* The line of window offset at: one more than the line feeds before it,
 * those of the bytes the window has left behind read again. */
static long line_of(const lm_v3j_scan *s, size_t at) {
  long line = 1;
  char block[1 << 16];
  for (size_t off = 0; off < s->base;) {
    size_t want = s->base - off < sizeof block ? s->base - off : sizeof block;
    ssize_t n = pread(s->fd, block, want, (off_t)off);
    if (n <= 0) break;
    for (const char *q = block; (q = memchr(q, '\n', (size_t)(block + n - q))) != NULL; q++) line++;
    off += (size_t)n;
  }
  for (const char *q = s->buf; (q = memchr(q, '\n', (size_t)(s->buf + at - q))) != NULL; q++) line++;
  return line;
}

long lm_v3j_scan_line(const lm_v3j_scan *s) { return line_of(s, s->token); }

/* Read more of the file, keeping the window's bytes from keep on (moved
 * to its start); the window grows when they fill it. */
static lm_status refill(lm_v3j_scan *s, size_t keep, lm_diag *diag) {
  if (keep > 0) {
    memmove(s->buf, s->buf + keep, s->len - keep);
    s->base += keep;
    s->len -= keep;
  }
  if (s->len == s->cap) {
    if (s->cap >= MAX_WINDOW)
      return lm_fail_at(diag, LM_ELIMIT, s->path, line_of(s, 0), NULL,
                        "a JSON token (string or number) longer than %zu MiB", MAX_WINDOW >> 20);
    char *grown = lm_realloc(s->buf, 2 * s->cap + PAD);
    if (!grown) return lm_oom(diag, s->path);
    s->buf = grown;
    s->cap *= 2;
  }
  ssize_t n;
  do {
    n = read(s->fd, s->buf + s->len, s->cap - s->len);
  } while (n < 0 && errno == EINTR);
  if (n < 0) return lm_fail(diag, LM_EIO, s->path, "read failed: %s", strerror(errno));
  if (n == 0) s->eof = 1;
  s->len += (size_t)n;
  memset(s->buf + s->len, 0, PAD);
  return LM_OK;
}

static int is_space(unsigned char c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; }
static int is_digit(unsigned char c) { return (unsigned)(c - '0') < 10; }

/* The offset of the first byte at or after p that is no whitespace (the
 * NUL after the window stops the search). */
static size_t skip_space(const char *b, size_t p) {
  if (!is_space((unsigned char)b[p])) return p;
  if (!is_space((unsigned char)b[++p])) return p;
#if defined(__SSE2__)
  for (;;) {
    __m128i x = _mm_loadu_si128((const __m128i *)(const void *)(b + p));
    __m128i sp = _mm_or_si128(_mm_cmpeq_epi8(x, _mm_set1_epi8(' ')), _mm_cmpeq_epi8(x, _mm_set1_epi8('\n')));
    __m128i tr = _mm_or_si128(_mm_cmpeq_epi8(x, _mm_set1_epi8('\t')), _mm_cmpeq_epi8(x, _mm_set1_epi8('\r')));
    unsigned other = ~(unsigned)_mm_movemask_epi8(_mm_or_si128(sp, tr)) & 0xFFFFu;
    if (other) return p + (size_t)__builtin_ctz(other);
    p += 16;
  }
#else
  while (is_space((unsigned char)b[p])) p++;
  return p;
#endif
}

/* The offset of the first quote, backslash or control character at or
 * after p (the NUL after the window is one). */
static size_t string_stop(const char *b, size_t p) {
#if defined(__SSE2__)
  for (;;) {
    __m128i x = _mm_loadu_si128((const __m128i *)(const void *)(b + p));
    __m128i qb = _mm_or_si128(_mm_cmpeq_epi8(x, _mm_set1_epi8('"')), _mm_cmpeq_epi8(x, _mm_set1_epi8('\\')));
    __m128i ctl = _mm_cmpeq_epi8(_mm_min_epu8(x, _mm_set1_epi8(0x1F)), x);
    unsigned stops = (unsigned)_mm_movemask_epi8(_mm_or_si128(qb, ctl));
    if (stops) return p + (size_t)__builtin_ctz(stops);
    p += 16;
  }
#else
  for (;; p++) {
    unsigned char c = (unsigned char)b[p];
    if (c == '"' || c == '\\' || c < 0x20) return p;
  }
#endif
}

static int hex_value(unsigned char c) {
  if (is_digit(c)) return c - '0';
  c |= 0x20;
  return c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

/* A scan's outcome for one token: whole, cut by the window's end, or not
 * valid (at holds the offending byte, why what is wrong). */
enum { WHOLE = 1, CUT = 0, WRONG = -1 };
typedef struct token {
  size_t end; /* WHOLE: the offset after the token */
  size_t at;
  const char *why;
  int escaped; /* a string holds escapes */
} token;

static int wrong(token *t, size_t at, const char *why) {
  t->at = at;
  t->why = why;
  return WRONG;
}

/* The rest of a string from q, the first quote, backslash or control
 * character in it. */
static int string_rest(const char *b, size_t len, size_t q, token *t) {
  for (;;) {
    unsigned char c = (unsigned char)b[q];
    if (c == '"') {
      t->end = q + 1;
      return WHOLE;
    }
    if (q == len) return CUT;
    if (c != '\\') return wrong(t, q, "a control character inside a string (escape it)");
    t->escaped = 1;
    if (q + 1 == len) return CUT;
    unsigned char e = (unsigned char)b[q + 1];
    if (e == 'u') {
      for (size_t i = 2; i < 6; i++) {
        if (q + i == len) return CUT;
        if (hex_value((unsigned char)b[q + i]) < 0) return wrong(t, q, "\\u not followed by four hex digits");
      }
      q += 6;
    } else if (e && strchr("\"\\/bfnrt", e)) {
      q += 2;
    } else {
      return wrong(t, q, "a backslash that begins no JSON escape");
    }
    q = string_stop(b, q);
  }
}

/* The string whose opening quote is at p (most end at their first stop). */
static inline int scan_string(const char *b, size_t len, size_t p, token *t) {
  size_t q = string_stop(b, p + 1);
  t->escaped = 0;
  if (b[q] == '"') {
    t->end = q + 1;
    return WHOLE;
  }
  return string_rest(b, len, q, t);
}

static unsigned hex4(const char *s) {
  unsigned v = 0;
  for (int i = 0; i < 4; i++) v = v << 4 | (unsigned)hex_value((unsigned char)s[i]);
  return v;
}

/* Write code point cp as UTF-8 at o: the bytes written. */
static size_t utf8(char *o, unsigned cp) {
  if (cp < 0x80) {
    o[0] = (char)cp;
    return 1;
  }
  if (cp < 0x800) {
    o[0] = (char)(0xC0 | cp >> 6);
    o[1] = (char)(0x80 | (cp & 0x3F));
    return 2;
  }
  if (cp < 0x10000) {
    o[0] = (char)(0xE0 | cp >> 12);
    o[1] = (char)(0x80 | (cp >> 6 & 0x3F));
    o[2] = (char)(0x80 | (cp & 0x3F));
    return 3;
  }
  o[0] = (char)(0xF0 | cp >> 18);
  o[1] = (char)(0x80 | (cp >> 12 & 0x3F));
  o[2] = (char)(0x80 | (cp >> 6 & 0x3F));
  o[3] = (char)(0x80 | (cp & 0x3F));
  return 4;
}

/* The n bytes at s (a string's inside, its escapes checked) with their
 * escapes replaced, in place (the text never grows): its new length. A
 * surrogate pair becomes its code point, a lone surrogate U+FFFD. */
static size_t unescape(char *s, size_t n) {
  size_t o = 0;
  for (size_t i = 0; i < n;) {
    if (s[i] != '\\') {
      s[o++] = s[i++];
      continue;
    }
    char e = s[i + 1];
    i += 2;
    if (e != 'u') {
      static const char from[] = "bfnrt", to[] = "\b\f\n\r\t";
      const char *k = strchr(from, e);
      s[o++] = k ? to[k - from] : e;
      continue;
    }
    unsigned cp = hex4(s + i);
    i += 4;
    if (cp >= 0xD800 && cp < 0xDC00 && i + 6 <= n && s[i] == '\\' && s[i + 1] == 'u') {
      unsigned low = hex4(s + i + 2);
      if (low >= 0xDC00 && low < 0xE000) {
        cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
        i += 6;
      }
    }
    if (cp >= 0xD800 && cp < 0xE000) cp = 0xFFFD;
    o += utf8(s + o, cp);
  }
  return o;
}

static const double pow10_exact[] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,  1e8,  1e9,  1e10, 1e11,
                                     1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};

/* The number at p: *value, and *in_range 0 when no double holds its
 * magnitude. At the file's end (eof) a number may end the window. */
static int scan_number(char *b, size_t len, size_t p, int eof, token *t, double *value, int *in_range) {
  size_t q = p;
  int negative = b[q] == '-';
  q += (size_t)negative;
  uint64_t mantissa = 0;
  int digits = 0, dropped = 0, exp10 = 0;
  if (b[q] == '0') {
    q++;
  } else if (is_digit((unsigned char)b[q])) {
    for (; is_digit((unsigned char)b[q]); q++) {
      if (digits < 19) {
        mantissa = mantissa * 10 + (uint64_t)(b[q] - '0');
        digits += mantissa != 0;
      } else {
        dropped++;
      }
    }
  } else {
    return q == len ? CUT : wrong(t, q, "a number's '-' not followed by a digit");
  }
  exp10 = dropped;
  if (b[q] == '.') {
    if (!is_digit((unsigned char)b[++q]))
      return q == len ? CUT : wrong(t, q, "a number's point not followed by a digit");
    for (; is_digit((unsigned char)b[q]); q++) {
      if (digits < 19) {
        mantissa = mantissa * 10 + (uint64_t)(b[q] - '0');
        digits += mantissa != 0;
        exp10--;
      } else {
        dropped++;
      }
    }
  }
  if (b[q] == 'e' || b[q] == 'E') {
    int exp_negative = 0, exp_value = 0;
    if (b[++q] == '-' || b[q] == '+') exp_negative = b[q++] == '-';
    if (!is_digit((unsigned char)b[q])) return q == len ? CUT : wrong(t, q, "a number's exponent without digits");
    for (; is_digit((unsigned char)b[q]); q++)
      if (exp_value < 100000) exp_value = exp_value * 10 + (b[q] - '0');
    exp10 += exp_negative ? -exp_value : exp_value;
  }
  if (q == len && !eof) return CUT; /* more digits may follow */
  t->end = q;
  *in_range = 1;
  for (; exp10 < 0 && mantissa % 10 == 0; exp10++) mantissa /= 10; /* 5.0 is 5: no division */
  if (dropped == 0 && mantissa <= (1ULL << 53) && exp10 >= -22 && exp10 <= 22) {
    double m = (double)mantissa;
    m = exp10 < 0 ? m / pow10_exact[-exp10] : m * pow10_exact[exp10];
    *value = negative ? -m : m;
    return WHOLE;
  }
  char after = b[q]; /* the byte after the number, for a moment a NUL */
  b[q] = 0;
  errno = 0;
  double v = strtod(b + p, NULL);
  b[q] = after;
  if (errno == ERANGE && isinf(v)) *in_range = 0;
  *value = v;
  return WHOLE;
}

/* The literal (true, false, null) that begins at p: *which. */
static int scan_literal(const char *b, size_t len, size_t p, token *t, int *which) {
  static const char *const words[] = {[LM_V3J_NULL] = "null", [LM_V3J_FALSE] = "false", [LM_V3J_TRUE] = "true"};
  *which = b[p] == 'n' ? LM_V3J_NULL : b[p] == 'f' ? LM_V3J_FALSE : LM_V3J_TRUE;
  const char *word = words[*which];
  for (size_t i = 0; word[i]; i++) {
    if (p + i == len) return CUT;
    if (b[p + i] != word[i]) return wrong(t, p + i, *which == LM_V3J_NULL ? "not null" : "not true or false");
  }
  t->end = p + strlen(word);
  return WHOLE;
}

/* A syntax error at window offset at: what, the path of the open
 * containers, the byte (counted from 1) and its line; at the file's end,
 * that it may be cut short (the byte is then the file's size). */
static lm_status syntax(const lm_v3j_scan *s, const lm_v3j_events *ev, void *ctx, size_t at, const char *why,
                        lm_diag *diag) {
  char where[128] = "";
  if (ev->where) ev->where(ctx, where, sizeof where);
  int ends = at == s->len && s->eof;
  return lm_fail_at(diag, LM_EPARSE, s->path, line_of(s, at), where[0] ? where : NULL,
                    "not valid JSON at byte %zu: %s%s", s->base + at + !ends, ends ? "the document is incomplete" : why,
                    ends ? " (the file ends early: truncated?)" : "");
}

/* What the scan expects next. */
enum { VALUE, FIRST_VALUE, KEY, FIRST_KEY, COLON, AFTER };

/* One byte c out of place at at: what was expected, the byte shown. */
static lm_status unexpected(const lm_v3j_scan *s, const lm_v3j_events *ev, void *ctx, int state, int in_array,
                            size_t at, lm_diag *diag) {
  static const char *const wanted[] = {[VALUE] = "a value",         [FIRST_VALUE] = "a value or ']'",
                                       [KEY] = "a key (a string)",  [FIRST_KEY] = "a key (a string) or '}'",
                                       [COLON] = "':' after a key", [AFTER] = "',' or '}'"};
  unsigned char c = (unsigned char)s->buf[at];
  char why[96];
  const char *want = state == AFTER && in_array ? "',' or ']'" : wanted[state];
  if (c > ' ' && c < 0x7F)
    snprintf(why, sizeof why, "'%c' where %s belongs%s", c, want,
             state <= FIRST_VALUE && (c == 'N' || c == 'I') ? " (NaN and Infinity are not JSON)" : "");
  else
    snprintf(why, sizeof why, "byte 0x%02X where %s belongs", c, want);
  return syntax(s, ev, ctx, at, why, diag);
}

/* A scalar's token at p: its event, *st its status. */
static int scalar(lm_v3j_scan *s, const lm_v3j_events *ev, void *ctx, size_t p, token *t, lm_status *st) {
  char *b = s->buf;
  unsigned char c = (unsigned char)b[p];
  int got;
  if (c == '"') {
    if ((got = scan_string(b, s->len, p, t)) != WHOLE) return got;
    size_t n = t->end - p - 2;
    if (t->escaped) n = unescape(b + p + 1, n);
    *st = ev->string(ctx, b + p + 1, n);
  } else if (c == '-' || is_digit(c)) {
    double v;
    int in_range;
    if ((got = scan_number(b, s->len, p, s->eof, t, &v, &in_range)) != WHOLE) return got;
    *st = ev->number(ctx, v, in_range);
  } else if (c == 't' || c == 'f' || c == 'n') {
    int which;
    if ((got = scan_literal(b, s->len, p, t, &which)) != WHOLE) return got;
    *st = ev->literal(ctx, which);
  } else {
    return wrong(t, p, NULL);
  }
  return WHOLE;
}

lm_status lm_v3j_scan_run(lm_v3j_scan *s, const lm_v3j_events *ev, void *ctx, lm_diag *diag) {
  size_t p = 0, depth = 0;
  int state = VALUE, in_array = 0;
  lm_status st = LM_OK;
  for (;;) {
    token t;
    int got = WHOLE;
    char *b = s->buf;
    p = skip_space(b, p);
    unsigned char c = (unsigned char)b[p];
    s->token = p;
    if (p == s->len) {
      got = CUT;
    } else if (c == "}]"[in_array] && (state == AFTER || state == FIRST_KEY + in_array * (FIRST_VALUE - FIRST_KEY))) {
      if ((st = ev->end(ctx)) != LM_OK) return st;
      if (--depth == 0) return LM_OK; /* what follows the document is not read */
      in_array = s->is_array[depth - 1];
      state = AFTER;
      p++;
      continue;
    } else {
      switch (state) {
        case AFTER:
          if (c != ',') return unexpected(s, ev, ctx, state, in_array, p, diag);
          state = in_array ? VALUE : KEY;
          p++;
          continue;
        case KEY:
        case FIRST_KEY:
          if (c != '"') return unexpected(s, ev, ctx, state, 0, p, diag);
          if ((got = scan_string(b, s->len, p, &t)) != WHOLE) break;
          size_t n = t.end - p - 2;
          if (t.escaped) n = unescape(b + p + 1, n);
          if ((st = ev->key(ctx, b + p + 1, n)) != LM_OK) return st;
          p = t.end;
          state = COLON;
          if (b[p] == ':') { /* the colon right after its key */
            state = VALUE;
            p++;
          }
          continue;
        case COLON:
          if (b[p] != ':') return unexpected(s, ev, ctx, state, 0, p, diag);
          state = VALUE;
          p++;
          continue;
        default: /* VALUE, FIRST_VALUE */
          if (c == '{' || c == '[') {
            if ((st = ev->begin(ctx, c == '[')) != LM_OK) return st;
            if (depth == LM_V3J_MAX_DEPTH) return syntax(s, ev, ctx, p, "nested too deep", diag);
            in_array = s->is_array[depth++] = c == '[';
            state = in_array ? FIRST_VALUE : FIRST_KEY;
            p++;
            continue;
          }
          if ((got = scalar(s, ev, ctx, p, &t, &st)) == WHOLE) {
            if (st != LM_OK) return st;
            if (depth == 0) return LM_OK;
            state = AFTER;
            p = t.end;
            continue;
          }
          if (got == WRONG && !t.why) return unexpected(s, ev, ctx, state, 0, p, diag);
          break;
      }
    }
    if (got == WRONG) return syntax(s, ev, ctx, t.at, t.why, diag);
    if (s->eof) return syntax(s, ev, ctx, s->len, NULL, diag);
    if ((st = refill(s, p, diag)) != LM_OK) return st;
    p = 0;
  }
}
