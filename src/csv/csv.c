/*
 * csv.c - the CSV column loader.
 *
 * pmc_perf.csv files run to thousands of columns and, scaled up, hundreds
 * of megabytes, so this is a hot path written by hand. The file is mapped,
 * newlines are counted to size the column arrays exactly, and the records
 * are parsed straight into the columns, in two halves on two threads when
 * the file is large. A record normally holds no newline inside quotes; if a
 * thread meets one, its row numbering would be off, so the parallel result
 * is dropped and the file is parsed again serially. Numbers are read by
 * number.c, so every value is the correctly rounded double. Parsed pages
 * are released as we go so the mapping does not add the file's size to the
 * peak memory. Columns can be deferred: their cells are checked and
 * counted while scanning for delimiters, not converted, and the table keeps
 * the mapping and each record's offset to read them back (csv/fetch.c).
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "csv/csv_file.h"
#include "csv/csv_scan.h"
#include "csv/csv.h"

#define DEFAULT_MAX_RECORD ((size_t)64 << 20)
#define PARALLEL_MIN_BYTES ((size_t)8 << 20)
#define RELEASE_CHUNK ((size_t)32 << 20)
/* From this size on the newline count gives back the pages it has read
 * too: below it, keeping the file mapped for the parse costs less than
 * faulting its pages in again (a 460 MB file took 0.2 to 0.4 s more CPU
 * time in four of five alternate runs when they were given back). */
#define COUNT_RELEASE_MIN ((size_t)1 << 30)
#define FIRST_TEXT_MAX 64
#define DEFAULT_LOAD_CAP ((size_t)384 << 20)

/* Digits, a point and digits ("0.0", "131072.5"): a number for certain. */
static int plain_decimal(const char *s, const char *e) {
  const char *p = s;
  while (p < e && (unsigned)(*p - '0') < 10) p++;
  if (p == s || p == e || *p != '.') return 0;
  for (p++; p < e; p++)
    if ((unsigned)(*p - '0') >= 10) return 0;
  return 1;
}

/* The value of [s, e), digits with at most one point between them, as the
 * field path below converts it. */
static double plain_number(const char *s, const char *e) {
  double v = LM_NAN;
  int is_int;
  if (!lm_csv_fast_number(s, e, &v)) lm_parse_number(s, e, &v, &is_int);
  return v;
}

/* -------------------------------------------------------------- parsing */

typedef struct parse_ctx {
  const char *data;
  size_t len;
  const char *path;
  size_t max_record;
  size_t n_cols;
  lm_column *cols;     /* shared column arrays */
  uint8_t *keep_text;  /* per column: intern its cells */
  uint8_t *row_missing;
  int release_pages;   /* madvise parsed pages away (mapped files) */
  uint8_t *skip;       /* per column: deferred, checked but not converted */
  size_t *next_fast;   /* per column: the first one from it on that is loaded
                          but stepped over with the deferred (n_cols: none) */
  size_t *skip_run;    /* per column: the deferred (or next_fast) columns from it
                          on before the
                          next loaded one (the last column excluded) */
  size_t *row_offset;  /* per row: where its record starts (deferred tables) */
  int fd;              /* the open file, read through windows; -1: data only */
  size_t window;       /* bytes read at once */
} parse_ctx;

/* What one thread parses: records [start, end) of the data, written to
 * rows first_row.. . Text cells are interned per thread. */
typedef struct part {
  parse_ctx *ctx;
  size_t start, end;
  size_t first_row;
  size_t expect_rows;  /* newline count of the range: an upper bound */
  size_t rows;         /* records parsed */
  size_t row;          /* the next record's row */
  long first_line;     /* line number of the first record */
  long line;           /* the next record's line */
  int irregular;       /* met a newline inside quotes */
  lm_map *intern;      /* text -> local id */
  lm_arena *arena;
  const char **strings;
  size_t n_strings, cap_strings;
  /* per column counters, merged after the threads join */
  size_t *n_missing, *n_text;
  long *first_text_line;
  const char **first_text;
  uint8_t *not_int;
  lm_status status;
  lm_diag diag;
} part;

static lm_status intern_text(part *pt, const char *s, size_t n, int32_t *id) {
  int64_t found;
  if (lm_map_getn(pt->intern, s, n, &found)) {
    *id = (int32_t)found;
    return LM_OK;
  }
  if (pt->n_strings == pt->cap_strings) {
    size_t cap = pt->cap_strings ? pt->cap_strings * 2 : 64;
    const char **grown = lm_realloc(pt->strings, cap * sizeof *grown);
    if (!grown) return LM_ENOMEM;
    pt->strings = grown;
    pt->cap_strings = cap;
  }
  char *copy = lm_arena_strndup(pt->arena, s, n);
  if (!copy || lm_map_putn(pt->intern, s, n, (int64_t)pt->n_strings) != LM_OK)
    return LM_ENOMEM;
  pt->strings[pt->n_strings] = copy;
  *id = (int32_t)pt->n_strings++;
  return LM_OK;
}

/* Unquote a quoted field body [s, e) (doubled quotes become one) into the
 * scratch buffer. */
static lm_status unquote(const char *s, const char *e, lm_buf *scratch) {
  lm_buf_reset(scratch);
  for (const char *p = s; p < e; p++) {
    lm_buf_putc(scratch, *p);
    if (*p == '"') p++; /* skip the second quote of a pair */
  }
  return scratch->failed ? LM_ENOMEM : LM_OK;
}

/* The fields of columns c.. that end at the commas of mask (bit i: byte
 * p + i), plain numbers all: those of loaded columns converted. */
static void load_fields(const parse_ctx *ctx, size_t row, const char *p, uint64_t commas, size_t c) {
  const char *fs = p;
  for (; commas; commas &= commas - 1, c++) {
    const char *fe = p + __builtin_ctzll(commas);
    if (ctx->cols[c].values) ctx->cols[c].values[row] = plain_number(fs, fe);
    fs = fe + 1;
  }
}

/* Parse the records of [p, end), which holds file bytes from base_off at
 * base, continuing the part's rows and lines (pt->row, pt->line). final:
 * end is the part's end; else it is a window's, just past a newline, and a
 * quoted field that does not close before it makes the part irregular. */
static void parse_range(part *pt, const char *base, size_t base_off, const char *p,
                        const char *end, int final) {
  parse_ctx *ctx = pt->ctx;
  const size_t n_cols = ctx->n_cols;
  size_t row = pt->row;
  long line = pt->line;
  lm_buf scratch = {0};
  const char *released = p;
  int release = ctx->release_pages && base == ctx->data;

  while (p < end) {
    const char *record_start = p;
    if (pt->expect_rows && row - pt->first_row >= pt->expect_rows) {
      pt->irregular = 1; /* more records than newlines: quoted newlines */
      break;
    }
    /* Skip a blank line (a trailing empty line, or CRLF debris). */
    if (*p == '\n' || (*p == '\r' && p + 1 < end && p[1] == '\n')) {
      p += *p == '\r' ? 2 : 1;
      line++;
      if (pt->expect_rows) pt->expect_rows--;
      continue;
    }
    int missing_in_row = 0;
    /* Scan no further than the longest record allowed. */
    const char *limit = (size_t)(end - p) > ctx->max_record
                            ? p + ctx->max_record + 1 : end;
    for (size_t c = 0; c < n_cols; c++) {
      if (ctx->skip_run[c]) {
        /* A run of deferred columns: step over fields that are plain
         * integers or decimals, looking at digits, points and commas
         * only; anything else is
         * left to the field-by-field path below. */
        size_t stop = c + ctx->skip_run[c];
        while (c < stop) {
          /* Sixteen bytes at a time (csv_scan.h) while the fields they end
           * are plain integers or decimals of the run: p then moves past
           * the last comma of the sixteen. */
          while (c + 8 < stop && limit - p >= 64 && *p != ',') {
            /* The same, sixty-four bytes at a time, while the run is long. */
            lm_csv_marks64 m = lm_csv_marks64_at(p);
            uint64_t commas = m.comma;
            if (!commas) break;
            int end_comma = 63 - __builtin_clzll(commas);
            uint64_t region = end_comma == 63 ? ~0ULL : (2ULL << end_comma) - 1;
            uint64_t points = m.point & region;
            if (((m.digit | commas | points) & region) != region || (commas & (commas << 1))) break;
            if (points) {
              if ((points & 1) || (points & (commas << 1)) || (points & (commas >> 1))) break;
              uint64_t rest = points;
              unsigned ok = 1;
              while (rest && ok) {
                uint64_t here = rest & (0ULL - rest);
                rest ^= here;
                ok = !rest || (commas & ((rest & (0ULL - rest)) - here)) != 0;
              }
              if (!ok) break;
            }
            size_t n = lm_csv_count64(commas);
            if (c + n > stop) break;
            if (ctx->next_fast[c] < c + n) load_fields(ctx, row, p, commas, c);
            for (uint64_t rest = points; rest; rest &= rest - 1) {
              uint64_t here = rest & (0ULL - rest);
              pt->not_int[c + lm_csv_count64(commas & (here - 1))] = 1;
            }
            p += end_comma + 1;
            c += n;
          }
          while (c < stop && limit - p >= 16 && *p != ',') {
            lm_csv_marks m = lm_csv_marks16(p);
            unsigned commas = m.comma;
            if (!commas) break;
            int end_comma = 31 - __builtin_clz(commas);
            unsigned region = (2u << end_comma) - 1; /* bytes up to the last comma */
            unsigned points = m.point & region;
            /* only digits, points and commas; no empty field (p is not at a
             * comma, no two commas touch) */
            if (((m.digit | commas | points) & region) != region || (commas & (commas << 1))) break;
            if (points) {
              /* each point between digits, at most one per field */
              if ((points & 1) || (points & (commas << 1)) || (points & (commas >> 1))) break;
              unsigned rest = points, ok = 1;
              while (rest && ok) {
                unsigned here = rest & (0u - rest);
                rest ^= here;
                ok = !rest || (commas & ((rest & (0u - rest)) - here)) != 0;
              }
              if (!ok) break;
            }
            size_t n = lm_csv_count16(commas);
            if (c + n > stop) break;
            if (ctx->next_fast[c] < c + n) load_fields(ctx, row, p, commas, c);
            for (unsigned rest = points; rest; rest &= rest - 1) {
              /* "131072.0": a number, not an integer */
              unsigned here = rest & (0u - rest);
              pt->not_int[c + lm_csv_count16(commas & (here - 1))] = 1;
            }
            p += end_comma + 1;
            c += n;
          }
          if (c >= stop) break;
          const char *q = p;
          while (q < limit && (unsigned)(*q - '0') < 10) q++;
          if (q == p || q >= limit) break;
          if (*q == '.') {
            /* "131072.0": a number, not an integer */
            const char *d = ++q;
            while (q < limit && (unsigned)(*q - '0') < 10) q++;
            if (q == d || q >= limit || *q != ',' || q - p > 300) break;
            pt->not_int[c] = 1;
          } else if (*q != ',' || q - p > 300) {
            break;
          }
          if (ctx->next_fast[c] == c) ctx->cols[c].values[row] = plain_number(p, q);
          p = q + 1;
          c++;
        }
      }
      const char *fs, *fe;
      int quoted = 0, int_cell = 0;
      double int_value = 0;
      if (p < end && *p == '"') {
        quoted = 1;
        fs = ++p;
        for (;;) {
          const char *q = memchr(p, '"', (size_t)(end - p));
          if (!q && !final) {
            pt->irregular = 1; /* it may close in the next window */
            goto out;
          }
          if (!q) {
            pt->status = lm_diag_set(&pt->diag, LM_EPARSE, ctx->path, line,
                                     (long)c + 1, ctx->cols[c].name,
                                     "unterminated quoted field (file truncated?)");
            goto fail;
          }
          if (memchr(p, '\n', (size_t)(q - p))) pt->irregular = 1;
          if (q + 1 < end && q[1] == '"') {
            p = q + 2;
            continue;
          }
          fe = q;
          p = q + 1;
          break;
        }
        if (pt->irregular && pt->expect_rows) goto out; /* redo serially */
      } else if (ctx->skip[c]) {
        /* A deferred column: find the delimiter, noting whether the field
         * is all digits (then it is a plain integer, nothing to convert). */
        fs = p;
        unsigned other = 0;
        while (p < limit && *p != ',' && *p != '\n' && *p != '\r') other |= (unsigned)(*p++ - '0') >= 10;
        fe = p;
        /* (no more than 300 digits: a longer number may not fit a double) */
        int_cell = fe > fs && !other && fe - fs <= 300;
      } else {
        fs = p;
        /* Read leading digits as we scan: most cells are short integers. */
        uint64_t u = 0;
        while (p < limit && (unsigned)(*p - '0') < 10) u = u * 10 + (uint64_t)(*p++ - '0');
        int digits = (int)(p - fs);
        while (p < limit && *p != ',' && *p != '\n' && *p != '\r') p++;
        fe = p;
        int_cell = digits > 0 && digits < 16 && p == fs + digits;
        int_value = (double)u;
      }
      if ((size_t)(p - record_start) > ctx->max_record) {
        pt->status = lm_diag_set(&pt->diag, LM_ELIMIT, ctx->path, line,
                                 (long)c + 1, NULL,
                                 "record longer than %zu bytes",
                                 ctx->max_record);
        goto fail;
      }
      /* After the field: a separator, or the end of the record. */
      int last = c + 1 == n_cols;
      if (quoted && p < end && *p != ',' && *p != '\n' && *p != '\r') {
        pt->status = lm_diag_set(&pt->diag, LM_EPARSE, ctx->path, line, (long)c + 1, ctx->cols[c].name,
                                 "text after a closing quote (a quote inside a quoted field must be "
                                 "doubled)");
        goto fail;
      }
      if (p + 1 < end && *p == '\r' && p[1] != '\n') {
        pt->status = lm_diag_set(&pt->diag, LM_EPARSE, ctx->path, line, (long)c + 1, NULL,
                                 "a line ends in a lone CR (old Mac line endings): convert the "
                                 "file to LF or CRLF line endings");
        goto fail;
      }
      if (p < end && *p == ',') {
        if (last) {
          size_t extra = 0;
          for (const char *q = p; q < end && *q != '\n'; q++)
            if (*q == ',') extra++;
          pt->status = lm_diag_set(
              &pt->diag, LM_EPARSE, ctx->path, line, (long)n_cols + 1, NULL,
              "expected %zu fields as in the header, found %zu", n_cols,
              n_cols + extra);
          goto fail;
        }
        p++;
      } else if (!last) {
        pt->status = lm_diag_set(
            &pt->diag, LM_EPARSE, ctx->path, line, (long)c + 1, NULL,
            "expected %zu fields as in the header, found %zu%s", n_cols, c + 1,
            p >= end ? " (file truncated?)" : "");
        goto fail;
      } else if (p < end && *p != '\n' && *p != '\r') {
        pt->status = lm_diag_set(&pt->diag, LM_EPARSE, ctx->path, line,
                                 (long)c + 1, ctx->cols[c].name,
                                 "text after a closing quote");
        goto fail;
      }
      /* Convert. */
      lm_column *col = &ctx->cols[c];
      const char *vs = fs, *ve = fe;
      if (quoted && memchr(fs, '"', (size_t)(fe - fs))) {
        if (unquote(fs, fe, &scratch) != LM_OK) goto nomem;
        vs = scratch.data;
        ve = scratch.data + scratch.len;
      }
      double v = int_value;
      int is_int = 1, kind = 1;
      if (ctx->skip[c] && (int_cell || (!quoted && ve - vs <= 300 && plain_decimal(vs, ve)))) {
        if (!int_cell) pt->not_int[c] = 1; /* "131072.0": a number, not an integer */
        continue;
      }
      if (!int_cell) kind = lm_parse_number(vs, ve, &v, &is_int);
      if (kind == 3) {
        pt->status = lm_diag_set(&pt->diag, LM_EDATA, ctx->path, line, (long)c + 1, col->name,
                                 "number out of the range of a double: '%.*s%s'",
                                 (int)(ve - vs > 40 ? 40 : ve - vs), vs, ve - vs > 40 ? "..." : "");
        goto fail;
      }
      if (kind == 0 && memchr(vs, '\0', (size_t)(ve - vs))) {
        pt->status = lm_diag_set(&pt->diag, LM_EPARSE, ctx->path, line, (long)c + 1, col->name,
                                 "a NUL byte inside the field (a binary or corrupt file?)");
        goto fail;
      }
      if (kind == 0 && !quoted && !ctx->keep_text[c] && memchr(vs, '"', (size_t)(ve - vs))) {
        pt->status = lm_diag_set(&pt->diag, LM_EPARSE, ctx->path, line, (long)c + 1, col->name,
                                 "a quote inside an unquoted field (a field holding quotes must "
                                 "be quoted, its quotes doubled)");
        goto fail;
      }
      if (!ctx->skip[c]) col->values[row] = v;
      if (kind == 2) {
        pt->n_missing[c]++;
        missing_in_row = 1;
      } else if (kind == 0) {
        if (!ctx->skip[c]) col->values[row] = LM_NAN;
        if (!ctx->keep_text[c]) {
          if (pt->n_text[c]++ == 0) {
            pt->first_text_line[c] = line;
            size_t n = (size_t)(ve - vs);
            pt->first_text[c] = lm_arena_strndup(
                pt->arena, vs, n < FIRST_TEXT_MAX ? n : FIRST_TEXT_MAX);
          }
        } else {
          pt->n_text[c]++;
        }
      } else if (!is_int) {
        pt->not_int[c] = 1;
      }
      if (ctx->keep_text[c]) {
        /* A missing-value token reads as an empty text, as a blank does. */
        int32_t id;
        if (kind == 2) ve = vs;
        if (intern_text(pt, vs, (size_t)(ve - vs), &id) != LM_OK) goto nomem;
        col->text_ids[row] = id;
      }
    }
    /* End of record. */
    if (p < end && *p == '\r') p++;
    if (p < end && *p == '\n') p++;
    ctx->row_missing[row] = (uint8_t)missing_in_row;
    if (ctx->row_offset) ctx->row_offset[row] = base_off + (size_t)(record_start - base);
    row++;
    line++;
    if (release && (size_t)(p - released) >= RELEASE_CHUNK) {
      /* Give back fully parsed pages of the mapping. */
      uintptr_t from = ((uintptr_t)released + 4095) & ~(uintptr_t)4095;
      uintptr_t to = (uintptr_t)(p - 1) & ~(uintptr_t)4095;
      if (to > from) madvise((void *)from, to - from, MADV_DONTNEED);
      released = p;
    }
  }
out:
  pt->row = row;
  pt->line = line;
  lm_buf_fini(&scratch);
  return;
nomem:
  pt->status = lm_diag_set(&pt->diag, LM_ENOMEM, ctx->path, line, 0, NULL,
                           "out of memory");
fail:
  pt->row = row;
  pt->line = line;
  lm_buf_fini(&scratch);
}

/* A part of an open file, read with pread through a window that ends just
 * past a newline, so that every record lies in one window; one that does
 * not (longer than the longest record allowed, or a quoted field that goes
 * on past a newline) makes the part irregular, and the file is then parsed
 * again serially from its mapping. */
static void parse_windows(part *pt) {
  parse_ctx *ctx = pt->ctx;
  size_t at = pt->start, cap = ctx->window;
  lm_csv_window *win = lm_csv_window_take(NULL, cap);
  if (!win) goto nomem;
  while (at < pt->end && pt->status == LM_OK && !pt->irregular) {
    size_t want = pt->end - at < win->cap ? pt->end - at : win->cap, got;
    if (lm_csv_read_at(ctx->fd, win->data, want, at, &got) != 0) {
      pt->status = lm_diag_set(&pt->diag, LM_EIO, ctx->path, pt->line, 0, NULL, "cannot read: %s",
                               strerror(errno));
      break;
    }
    if (got < want) {
      pt->status = lm_diag_set(&pt->diag, LM_EIO, ctx->path, pt->line, 0, NULL,
                               "the file became shorter while being read");
      break;
    }
    int final = at + got == pt->end;
    size_t len = got;
    if (!final) {
      const char *nl = win->data + got;
      while (nl > win->data && nl[-1] != '\n') nl--;
      if (nl == win->data) {
        /* One line longer than the window: a larger one, up to the longest
         * record allowed (past it the serial parse reports the record). */
        if (cap > ctx->max_record + 2) {
          pt->irregular = 1;
          break;
        }
        cap *= 2;
        lm_csv_window_give(NULL, win);
        if (!(win = lm_csv_window_take(NULL, cap))) goto nomem;
        continue;
      }
      len = (size_t)(nl - win->data);
    }
    parse_range(pt, win->data, at, win->data, win->data + len, final);
    at += len;
  }
  lm_csv_window_give(NULL, win);
  return;
nomem:
  pt->status = lm_diag_set(&pt->diag, LM_ENOMEM, ctx->path, pt->line, 0, NULL, "out of memory");
}

static void *parse_part(void *arg) {
  part *pt = arg;
  parse_ctx *ctx = pt->ctx;
  pt->row = pt->first_row;
  pt->line = pt->first_line;
  if (ctx->fd >= 0 && pt->expect_rows)
    parse_windows(pt);
  else
    parse_range(pt, ctx->data, 0, ctx->data + pt->start, ctx->data + pt->end, 1);
  pt->rows = pt->row - pt->first_row;
  return NULL;
}

/* Parse the header record starting at data; fills names and returns the
 * offset just past it. */
static lm_status parse_header(const char *data, size_t len, const char *path,
                              size_t max_record, lm_arena *arena,
                              const char ***names_out, size_t *n_out,
                              size_t *consumed, lm_diag *diag) {
  size_t cap = 64, n = 0, i = 0;
  const char **names = lm_arena_alloc(arena, cap * sizeof *names);
  lm_buf scratch = {0};
  lm_status status = LM_OK;
  if (!names) return lm_diag_set(diag, LM_ENOMEM, path, 1, 0, NULL, "out of memory");
  if (len >= 3 && memcmp(data, "\xEF\xBB\xBF", 3) == 0) i = 3;
  {
    const char *nl = memchr(data, '\n', len);
    size_t first = nl ? (size_t)(nl - data) : len;
    if ((len >= 2 && ((unsigned char)data[0] == 0xFF || (unsigned char)data[0] == 0xFE) &&
         ((unsigned char)data[1] == 0xFE || (unsigned char)data[1] == 0xFF)) ||
        memchr(data, '\0', first < 4096 ? first : 4096)) {
      status = lm_diag_set(diag, LM_EPARSE, path, 1, 0, NULL,
                           "the file is UTF-16 (or holds NUL bytes): save it as UTF-8 text");
      goto done;
    }
  }
  if (i >= len || data[i] == '\n' || data[i] == '\r') {
    status = lm_diag_set(diag, LM_EPARSE, path, 1, 0, NULL,
                         "empty file: no header line");
    goto done;
  }
  for (;;) {
    const char *fs, *fe;
    if (i > max_record) {
      status = lm_diag_set(diag, LM_ELIMIT, path, 1, (long)n + 1, NULL,
                           "header longer than %zu bytes", max_record);
      goto done;
    }
    lm_buf_reset(&scratch);
    if (i < len && data[i] == '"') {
      i++;
      for (;; i++) {
        if (i >= len) {
          status = lm_diag_set(diag, LM_EPARSE, path, 1, (long)n + 1, NULL,
                               "unterminated quoted header field");
          goto done;
        }
        if (i > max_record) break; /* reported below */
        if (data[i] == '"') {
          if (i + 1 < len && data[i + 1] == '"') {
            lm_buf_putc(&scratch, '"');
            i++;
            continue;
          }
          i++;
          break;
        }
        lm_buf_putc(&scratch, data[i]);
      }
    } else {
      size_t s = i;
      while (i < len && i <= max_record && data[i] != ',' && data[i] != '\n' && data[i] != '\r') i++;
      lm_buf_append(&scratch, data + s, i - s);
    }
    if (i > max_record) {
      status = lm_diag_set(diag, LM_ELIMIT, path, 1, (long)n + 1, NULL,
                           "header longer than %zu bytes (reached in field %zu)", max_record,
                           n + 1);
      goto done;
    }
    fs = lm_buf_cstr(&scratch);
    fe = fs + scratch.len;
    if (scratch.failed) goto nomem;
    if (n == cap) {
      const char **grown = lm_arena_alloc(arena, 2 * cap * sizeof *grown);
      if (!grown) goto nomem;
      memcpy(grown, names, cap * sizeof *grown);
      names = grown;
      cap *= 2;
    }
    names[n] = lm_arena_strndup(arena, fs, (size_t)(fe - fs));
    if (!names[n]) goto nomem;
    n++;
    if (i < len && data[i] == ',') {
      i++;
      continue;
    }
    int cr = i < len && data[i] == '\r';
    if (cr) i++;
    if (i < len && data[i] == '\n') i++;
    else if (i < len && cr) {
      status = lm_diag_set(diag, LM_EPARSE, path, 1, 0, NULL,
                           "lines end in a lone CR (old Mac line endings): convert the file to LF "
                           "or CRLF line endings");
      goto done;
    } else if (i < len) {
      status = lm_diag_set(diag, LM_EPARSE, path, 1, (long)n, NULL,
                           "text after a closing quote in the header");
      goto done;
    }
    break;
  }
  *names_out = names;
  *n_out = n;
  *consumed = i;
  goto done;
nomem:
  status = lm_diag_set(diag, LM_ENOMEM, path, 1, 0, NULL, "out of memory");
done:
  lm_buf_fini(&scratch);
  return status;
}

/* The newlines of s[0, n); release: give the counted pages of a mapped
 * file back as it goes (else a large file would be resident whole before
 * the parse gives its pages back). */
static size_t count_newlines(const char *s, size_t n, int release) {
  size_t count = 0;
  const char *end = s + n, *released = s;
  while (s < end) {
    const char *q = memchr(s, '\n', (size_t)(end - s));
    if (!q) {
      count++; /* a last record without a newline */
      break;
    }
    count++;
    s = q + 1;
    if (release && (size_t)(s - released) >= RELEASE_CHUNK) {
      uintptr_t from = ((uintptr_t)released + 4095) & ~(uintptr_t)4095;
      uintptr_t to = (uintptr_t)(s - 1) & ~(uintptr_t)4095;
      if (to > from) madvise((void *)from, to - from, MADV_DONTNEED);
      released = s;
    }
  }
  return count;
}

/* The same for file bytes [off, off + n) of fd, read through a window:
 * nothing is mapped. -1 when the file cannot be read or is shorter. */
static long count_newlines_fd(int fd, size_t off, size_t n, size_t window) {
  lm_csv_window *win = lm_csv_window_take(NULL, window);
  long count = 0;
  int open_line = 0;
  if (!win) return -1;
  while (n) {
    size_t want = n < win->cap ? n : win->cap, got;
    if (lm_csv_read_at(fd, win->data, want, off, &got) != 0 || got < want) {
      count = -1;
      break;
    }
    for (const char *s = win->data, *end = s + got; s < end;) {
      const char *q = memchr(s, '\n', (size_t)(end - s));
      open_line = !q;
      if (!q) break;
      count++;
      s = q + 1;
    }
    off += got;
    n -= got;
  }
  lm_csv_window_give(NULL, win);
  return count < 0 ? -1 : count + open_line; /* a last record without a newline */
}

typedef struct count_job {
  const char *s;
  size_t n;
  int release;
  int fd;     /* >= 0: count file bytes [off, off + n) of it instead */
  size_t off, window;
  long count; /* -1: the file could not be read */
} count_job;

static void *count_thread(void *arg) {
  count_job *job = arg;
  job->count = job->fd >= 0 ? count_newlines_fd(job->fd, job->off, job->n, job->window)
                            : (long)count_newlines(job->s, job->n, job->release);
  return NULL;
}

static void part_fini(part *pt) {
  lm_map_free(pt->intern);
  lm_free(pt->strings);
  lm_free(pt->n_missing);
  lm_free(pt->n_text);
  lm_free(pt->first_text_line);
  lm_free(pt->first_text);
  lm_free(pt->not_int);
  /* pt->arena is handed to the table or freed by the caller */
}

static lm_status part_init(part *pt, parse_ctx *ctx, lm_arena *arena) {
  memset(pt, 0, sizeof *pt);
  pt->ctx = ctx;
  pt->arena = arena;
  pt->intern = lm_map_new();
  pt->n_missing = lm_calloc(ctx->n_cols, sizeof *pt->n_missing);
  pt->n_text = lm_calloc(ctx->n_cols, sizeof *pt->n_text);
  pt->first_text_line = lm_calloc(ctx->n_cols, sizeof *pt->first_text_line);
  pt->first_text = lm_calloc(ctx->n_cols, sizeof *pt->first_text);
  pt->not_int = lm_calloc(ctx->n_cols, sizeof *pt->not_int);
  if (!pt->intern || !pt->n_missing || !pt->n_text || !pt->first_text_line ||
      !pt->first_text || !pt->not_int)
    return LM_ENOMEM;
  return LM_OK;
}

/* Allocate the column arrays of a table for n_rows rows. */
static lm_status alloc_columns(lm_table *t, const uint8_t *keep_text, const uint8_t *skip,
                               size_t n_rows) {
  size_t rows = n_rows ? n_rows : 1, n_loaded = 0;
  for (size_t c = 0; c < t->n_cols; c++) n_loaded += !skip[c];
  /* Every loaded value column in one block, column after column: written
   * once by the parser, so it needs no zeroing. */
  if (rows > SIZE_MAX / sizeof(double) / (n_loaded ? n_loaded : 1)) return LM_ENOMEM;
  t->block_bytes = rows * sizeof(double) * (n_loaded ? n_loaded : 1);
  t->block = lm_alloc_dense(t->block_bytes);
  if (!t->block) return LM_ENOMEM;
  for (size_t c = 0, k = 0; c < t->n_cols; c++) {
    t->cols[c].deferred = skip[c];
    if (skip[c]) continue;
    t->cols[c].values = (double *)t->block + k++ * rows;
    if (keep_text[c]) {
      t->cols[c].text_ids = lm_arena_alloc(t->arena, rows * sizeof(int32_t));
      if (!t->cols[c].text_ids) return LM_ENOMEM;
    }
  }
  t->row_missing = lm_arena_alloc(t->arena, rows);
  return t->row_missing ? LM_OK : LM_ENOMEM;
}

/* Copy per-thread results into the table: counters, strings and, for the
 * second part, text ids remapped into the first part's string numbering. */
static lm_status merge_parts(lm_table *t, part *parts, int n_parts,
                             const uint8_t *keep_text) {
  part *p0 = &parts[0];
  for (int k = 1; k < n_parts; k++) {
    part *pk = &parts[k];
    int32_t *remap = NULL;
    if (pk->n_strings) {
      remap = lm_malloc(pk->n_strings * sizeof *remap);
      if (!remap) return LM_ENOMEM;
      for (size_t s = 0; s < pk->n_strings; s++) {
        if (intern_text(p0, pk->strings[s], strlen(pk->strings[s]),
                        &remap[s]) != LM_OK) {
          lm_free(remap);
          return LM_ENOMEM;
        }
      }
    }
    for (size_t c = 0; c < t->n_cols; c++) {
      if (keep_text[c] && remap)
        for (size_t r = pk->first_row; r < pk->first_row + pk->rows; r++)
          t->cols[c].text_ids[r] = remap[t->cols[c].text_ids[r]];
      p0->n_missing[c] += pk->n_missing[c];
      if (pk->n_text[c] && !p0->n_text[c]) {
        p0->first_text_line[c] = pk->first_text_line[c];
        p0->first_text[c] = pk->first_text[c]
                                ? lm_arena_strdup(p0->arena, pk->first_text[c])
                                : NULL;
      }
      p0->n_text[c] += pk->n_text[c];
      p0->not_int[c] |= pk->not_int[c];
    }
    lm_free(remap);
  }
  for (size_t c = 0; c < t->n_cols; c++) {
    lm_column *col = &t->cols[c];
    col->n_missing = p0->n_missing[c];
    col->n_text = p0->n_text[c];
    col->first_text_line = p0->first_text_line[c];
    col->first_text = p0->first_text[c];
    col->all_int = !p0->not_int[c] && !col->n_text;
  }
  t->strings = lm_arena_alloc(t->arena, (p0->n_strings + 1) * sizeof(char *));
  if (!t->strings) return LM_ENOMEM;
  if (p0->n_strings) memcpy(t->strings, p0->strings, p0->n_strings * sizeof(char *));
  t->n_strings = p0->n_strings;
  return LM_OK;
}

static lm_status parse_buffer(const char *data, size_t len, const char *path,
                              const lm_csv_options *options, int mapped, int fd,
                              lm_table **out, lm_diag *diag) {
  lm_status status = LM_OK;
  lm_arena *arena = lm_arena_new(1 << 16);
  lm_arena *side = NULL; /* strings of the second part */
  lm_table *t = NULL;
  part parts[2];
  int n_parts = 0;
  uint8_t *keep_text = NULL, *skip = NULL;
  size_t *skip_run = NULL;
  uint8_t *fast = NULL;
  lm_csv_file *file = NULL;
  lm_csv_options defaults = {0};
  if (!options) options = &defaults;
  size_t max_record = options->max_record ? options->max_record : DEFAULT_MAX_RECORD;
  memset(parts, 0, sizeof parts);
  *out = NULL;
  if (!arena) return lm_diag_set(diag, LM_ENOMEM, path, 0, 0, NULL, "out of memory");

  t = lm_arena_alloc(arena, sizeof *t);
  if (!t) goto nomem;
  t->arena = arena;
  t->path = lm_arena_strdup(arena, path);
  {
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    const char *dot = strrchr(base, '.');
    t->name = lm_arena_strndup(arena, base, dot ? (size_t)(dot - base) : strlen(base));
  }
  if (!t->path || !t->name) goto nomem;

  const char **names = NULL;
  size_t header_len = 0;
  status = parse_header(data, len, path, max_record, arena, &names, &t->n_cols,
                        &header_len, diag);
  if (status != LM_OK) goto fail;
  t->cols = lm_arena_alloc(arena, t->n_cols * sizeof *t->cols);
  t->by_name = lm_map_new();
  keep_text = lm_calloc(t->n_cols, 1);
  skip = lm_calloc(t->n_cols ? t->n_cols : 1, 1);
  if (!t->cols || !t->by_name || !keep_text || !skip) goto nomem;
  for (size_t c = 0; c < t->n_cols; c++) {
    const char *name = names[c];
    /* Repeated names get ".1", ".2", ... as the reference reader does. */
    if (lm_map_get(t->by_name, name, NULL)) {
      for (int k = 1;; k++) {
        char candidate[1024];
        snprintf(candidate, sizeof candidate, "%s.%d", names[c], k);
        if (!lm_map_get(t->by_name, candidate, NULL)) {
          name = lm_arena_strdup(arena, candidate);
          if (!name) goto nomem;
          lm_log(LM_LOG_WARN,
                 "%s:1:%zu: field '%s': a second column of this name; it is read as '%s' and "
                 "the first one is used, as the reference tool does",
                 path, c + 1, names[c], name);
          break;
        }
      }
    }
    t->cols[c].name = name;
    if (lm_map_put(t->by_name, name, (int64_t)c) != LM_OK) goto nomem;
    keep_text[c] = (uint8_t)options->all_text;
    /* (the first characters compared inline: most names differ there) */
    for (const char *const *tc = options->text_columns; tc && *tc; tc++)
      if (**tc == names[c][0] && strcmp(*tc, names[c]) == 0) keep_text[c] = 1;
    /* Deferred: the numeric columns that were not asked for. */
    skip[c] = (uint8_t)(options->defer && !keep_text[c]);
    for (const char *const *ec = options->eager_columns; skip[c] && ec && *ec; ec++)
      if (**ec == name[0] && strcmp(*ec, name) == 0) skip[c] = 0;
  }

  const char *body = data + header_len;
  size_t body_len = len - header_len;
  parse_ctx ctx = {data, len, path, max_record, t->n_cols, t->cols, keep_text,
                   NULL, mapped, skip, NULL, NULL, NULL, fd,
                   options->window ? options->window : LM_CSV_WINDOW};
  skip_run = lm_calloc(2 * (t->n_cols + 1), sizeof *skip_run);
  fast = lm_calloc(t->n_cols ? t->n_cols : 1, 1);
  if (!skip_run || !fast) goto nomem;

  int want_threads = options->threads > 0 ? options->threads
                                          : (body_len >= PARALLEL_MIN_BYTES ? 2 : 1);
  if (want_threads > 2) want_threads = 2;
  /* Split the body at a newline near its middle and count each half's
   * newlines (in parallel), which bounds each half's record count. */
  size_t split = body_len;
  if (want_threads == 2) {
    const char *mid = memchr(body + body_len / 2, '\n', body_len - body_len / 2);
    split = mid ? (size_t)(mid + 1 - body) : body_len;
    if (split >= body_len) want_threads = 1;
  }
  size_t counts[2] = {0, 0};
  int release = mapped && len >= COUNT_RELEASE_MIN;
  if (want_threads == 2) {
    /* An open file is read through windows (the parse then too). */
    count_job jobs[2] = {{body, split, release, fd, header_len, ctx.window, 0},
                         {body + split, body_len - split, release, fd, header_len + split, ctx.window, 0}};
    lm_run_pair(count_thread, &jobs[0], &jobs[1]);
    if (jobs[0].count < 0 || jobs[1].count < 0) {
      status = lm_diag_set(diag, LM_EIO, path, 0, 0, NULL,
                           "cannot read the file (a read error, or it became shorter while "
                           "being read)");
      goto fail;
    }
    counts[0] = (size_t)jobs[0].count;
    counts[1] = (size_t)jobs[1].count;
  } else {
    counts[0] = count_newlines(body, body_len, release);
  }
  size_t total = counts[0] + counts[1];
  if (options->defer && options->load_want) {
    /* The deferred columns the caller will read anyway, loaded when they
     * fit: they are stepped over with the deferred ones, and the plain
     * numbers among them converted on the way. */
    size_t n_fast = 0, cap = options->load_cap ? options->load_cap : DEFAULT_LOAD_CAP;
    for (size_t c = 0; c < t->n_cols; c++) {
      fast[c] = skip[c] && options->load_want(options->load_ctx, t->name, t->cols[c].name);
      n_fast += fast[c];
    }
    if (n_fast && total <= cap / sizeof(double) / n_fast)
      for (size_t c = 0; c < t->n_cols; c++) skip[c] &= !fast[c];
    else
      memset(fast, 0, t->n_cols);
  }
  int any_skip = 0;
  for (size_t c = 0; c < t->n_cols; c++) any_skip |= skip[c];
  /* Runs of columns stepped over (the deferred, and those loaded on the way
   * along with them), and where the next of the latter is. */
  size_t *next_fast = skip_run + t->n_cols + 1;
  next_fast[t->n_cols] = t->n_cols;
  for (size_t c = t->n_cols; c-- > 0;) next_fast[c] = fast[c] ? c : next_fast[c + 1];
  for (size_t c = t->n_cols - 1; c-- > 0;) skip_run[c] = skip[c] || fast[c] ? skip_run[c + 1] + 1 : 0;
  ctx.skip_run = skip_run;
  ctx.next_fast = next_fast;
  status = alloc_columns(t, keep_text, skip, total);
  if (status != LM_OK) goto nomem;
  ctx.row_missing = t->row_missing;
  if (any_skip) {
    file = lm_calloc(1, sizeof *file);
    if (!file) goto nomem;
    file->row_offset = lm_malloc((total ? total : 1) * sizeof *file->row_offset);
    if (!file->row_offset) goto nomem;
    ctx.row_offset = file->row_offset;
  }

  side = lm_arena_new(1 << 16);
  if (!side) goto nomem;
  n_parts = want_threads;
  for (int k = 0; k < n_parts; k++)
    if (part_init(&parts[k], &ctx, k == 0 ? arena : side) != LM_OK) goto nomem;
  parts[0].start = header_len;
  parts[0].end = header_len + split;
  parts[0].first_row = 0;
  parts[0].expect_rows = counts[0];
  parts[0].first_line = 2;
  if (n_parts == 2) {
    parts[1].start = header_len + split;
    parts[1].end = len;
    parts[1].first_row = counts[0];
    parts[1].expect_rows = counts[1];
    parts[1].first_line = (long)counts[0] + 2;
    lm_run_pair(parse_part, &parts[0], &parts[1]);
    int regular = !parts[0].irregular && !parts[1].irregular;
    if (parts[0].status != LM_OK || parts[1].status != LM_OK) {
      part *bad = parts[0].status != LM_OK ? &parts[0] : &parts[1];
      if (regular || bad == &parts[0]) {
        if (diag) *diag = bad->diag;
        status = bad->status;
        goto fail;
      }
    }
    if (!regular) {
      /* Quoted newlines: the line-count split is not a record split. Parse
       * again from the start, on one thread, without a row bound. */
      for (int k = 0; k < n_parts; k++) part_fini(&parts[k]);
      lm_arena_free(side);
      side = NULL;
      n_parts = 1;
      if (part_init(&parts[0], &ctx, arena) != LM_OK) goto nomem;
      parts[0].start = header_len;
      parts[0].end = len;
      parts[0].first_line = 2;
      parts[0].expect_rows = 0;
      parse_part(&parts[0]);
      if (parts[0].status != LM_OK) {
        if (diag) *diag = parts[0].diag;
        status = parts[0].status;
        goto fail;
      }
      t->n_rows = parts[0].rows;
    } else {
      /* Close the gap left by blank lines in the first half. */
      t->n_rows = parts[0].rows + parts[1].rows;
      if (parts[0].rows < counts[0]) {
        size_t gap_from = counts[0], to = parts[0].rows;
        if (ctx.row_offset)
          memmove(ctx.row_offset + to, ctx.row_offset + gap_from, parts[1].rows * sizeof(size_t));
        for (size_t c = 0; c < t->n_cols; c++) {
          if (t->cols[c].values)
            memmove(t->cols[c].values + to, t->cols[c].values + gap_from,
                    parts[1].rows * sizeof(double));
          if (t->cols[c].text_ids)
            memmove(t->cols[c].text_ids + to, t->cols[c].text_ids + gap_from,
                    parts[1].rows * sizeof(int32_t));
        }
        memmove(t->row_missing + to, t->row_missing + gap_from, parts[1].rows);
        parts[1].first_row = to;
      }
    }
  } else {
    parts[0].end = len;
    parts[0].expect_rows = 0; /* serial: quoted newlines are fine */
    parse_part(&parts[0]);
    if (parts[0].status != LM_OK) {
      if (diag) *diag = parts[0].diag;
      status = parts[0].status;
      goto fail;
    }
    t->n_rows = parts[0].rows;
  }
  if (merge_parts(t, parts, n_parts, keep_text) != LM_OK) goto nomem;
  /* The strings of the second part were copied by intern_text into the
   * table's arena; the side arena can go. */
  for (int k = 0; k < n_parts; k++) part_fini(&parts[k]);
  n_parts = 0;
  lm_arena_free(side);
  lm_free(keep_text);
  lm_free(skip);
  lm_free(skip_run);
  lm_free(fast);
  if (file) {
    /* The table now owns the file (see lm_csv_read): read through windows
     * when it is open, else in the caller's buffer. */
    file->data = fd >= 0 ? NULL : data;
    file->len = len;
    file->fd = fd;
    file->window = ctx.window;
    file->n_rows = t->n_rows;
    t->fetch = lm_csv_fetch;
    t->fetch_state = file;
    t->fetch_release = lm_csv_file_release;
  }
  *out = t;
  return LM_OK;

nomem:
  status = lm_diag_set(diag, LM_ENOMEM, path, 0, 0, NULL, "out of memory");
fail:
  for (int k = 0; k < n_parts; k++) part_fini(&parts[k]);
  lm_arena_free(side);
  lm_free(keep_text);
  lm_free(skip);
  lm_free(skip_run);
  lm_free(fast);
  if (file) lm_free(file->row_offset);
  lm_free(file);
  if (t) {
    lm_map_free(t->by_name);
    lm_free_huge(t->block, t->block_bytes);
  }
  lm_arena_free(arena);
  return status;
}

lm_status lm_csv_parse(const char *data, size_t len, const char *path,
                       const lm_csv_options *options, lm_table **out,
                       lm_diag *diag) {
  return parse_buffer(data, len, path, options, 0, -1, out, diag);
}

lm_status lm_csv_read(const char *path, const lm_csv_options *options,
                      lm_table **out, lm_diag *diag) {
  *out = NULL;
  int fd = -1;
  size_t len = 0;
  lm_status opened = lm_open_read(path, LM_OPEN_CONTAINED, &fd, &len, diag);
  if (opened != LM_OK) return opened;
  if (len == 0) {
    close(fd);
    return lm_diag_set(diag, LM_EPARSE, path, 1, 0, NULL,
                       "empty file: no header line");
  }
  void *map = mmap(NULL, len, PROT_READ, MAP_PRIVATE, fd, 0);
  if (map == MAP_FAILED) {
    int err = errno;
    close(fd);
    return lm_diag_set(diag, LM_EIO, path, 0, 0, NULL, "cannot map: %s", strerror(err));
  }
  madvise(map, len, MADV_SEQUENTIAL);
  lm_status status = parse_buffer(map, len, path, options, 1, fd, out, diag);
  /* A table with deferred columns keeps the file open to read them later,
   * through windows; the mapping is not needed after the parse. */
  munmap(map, len);
  if (status != LM_OK || !(*out)->fetch_state) close(fd);
  return status;
}
