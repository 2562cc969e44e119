/*
 * records.c - the CSV record parser: the body of a file, record after
 * record, straight into the column arrays (csv.c reads the header, sizes
 * the columns and runs the parts). This is the loader's hot path: runs of
 * deferred plain numbers are stepped over sixty-four and sixteen bytes at
 * a time (csv_scan.h), the other fields one by one; quoted fields, text
 * cells and errors are the slow paths. A part read through windows meets
 * every record whole in one window, or turns irregular and the file is
 * parsed again serially.
 */
#include <errno.h>
#include <string.h>
#include <sys/mman.h>

#include "csv/csv_file.h"
#include "csv/csv_parse.h"
#include "csv/csv_scan.h"

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

lm_status lm_csv_intern_text(part *pt, const char *s, size_t n, int32_t *id) {
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

/* Step over a run of deferred columns (and of those loaded on the way)
 * from column c while their fields are plain integers or decimals, looking
 * at digits, points and commas only, and convert those of loaded columns.
 * *pp moves past the last field stepped over; returns the column of the
 * field it stopped at, which the field-by-field path takes from there. */
static inline size_t step_run(part *pt, size_t row, const char **pp, const char *limit,
                              size_t c) {
  const parse_ctx *ctx = pt->ctx;
  const char *p = *pp;
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
  *pp = p;
  return c;
}

/* The quoted field of column c at *pp (its opening quote): [*fs, *fe) its
 * body, *pp past the closing quote. Returns 0, or 1 when the part stops
 * here: a quote that does not close (an error in the final range, else
 * the part is irregular: it may close in the next window) or a newline
 * inside the quotes of a bounded part (it is parsed again serially). */
static int scan_quoted(part *pt, const char **pp, const char *end, int final, size_t c, long line,
                       const char **fs, const char **fe) {
  const char *p = *pp;
  *fs = ++p;
  for (;;) {
    const char *q = memchr(p, '"', (size_t)(end - p));
    if (!q && !final) {
      pt->irregular = 1; /* it may close in the next window */
      return 1;
    }
    if (!q) {
      pt->status = lm_diag_set(&pt->diag, LM_EPARSE, pt->ctx->path, line, (long)c + 1,
                               pt->ctx->cols[c].name, "unterminated quoted field (file truncated?)");
      return 1;
    }
    if (memchr(p, '\n', (size_t)(q - p))) pt->irregular = 1;
    if (q + 1 < end && q[1] == '"') {
      p = q + 2;
      continue;
    }
    *fe = q;
    p = q + 1;
    break;
  }
  *pp = p;
  return pt->irregular && pt->expect_rows; /* redo serially */
}

/* After field c, ending at *pp: a separator (stepped over) or the end of
 * the record, in a record no longer than allowed. Returns 0, or 1 with
 * the part's error set. */
static inline int field_end(part *pt, const char **pp, const char *end, const char *record_start,
                            size_t c, long line, int quoted) {
  const parse_ctx *ctx = pt->ctx;
  const size_t n_cols = ctx->n_cols;
  const char *p = *pp;
  if ((size_t)(p - record_start) > ctx->max_record) {
    pt->status = lm_diag_set(&pt->diag, LM_ELIMIT, ctx->path, line,
                             (long)c + 1, NULL,
                             "record longer than %zu bytes",
                             ctx->max_record);
    return 1;
  }
  /* After the field: a separator, or the end of the record. */
  int last = c + 1 == n_cols;
  if (quoted && p < end && *p != ',' && *p != '\n' && *p != '\r') {
    pt->status = lm_diag_set(&pt->diag, LM_EPARSE, ctx->path, line, (long)c + 1, ctx->cols[c].name,
                             "text after a closing quote (a quote inside a quoted field must be "
                             "doubled)");
    return 1;
  }
  if (p + 1 < end && *p == '\r' && p[1] != '\n') {
    pt->status = lm_diag_set(&pt->diag, LM_EPARSE, ctx->path, line, (long)c + 1, NULL,
                             "a line ends in a lone CR (old Mac line endings): convert the "
                             "file to LF or CRLF line endings");
    return 1;
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
      return 1;
    }
    *pp = p + 1;
  } else if (!last) {
    pt->status = lm_diag_set(
        &pt->diag, LM_EPARSE, ctx->path, line, (long)c + 1, NULL,
        "expected %zu fields as in the header, found %zu%s", n_cols, c + 1,
        p >= end ? " (file truncated?)" : "");
    return 1;
  } else if (p < end && *p != '\n' && *p != '\r') {
    pt->status = lm_diag_set(&pt->diag, LM_EPARSE, ctx->path, line,
                             (long)c + 1, ctx->cols[c].name,
                             "text after a closing quote");
    return 1;
  }
  return 0;
}

/* A cell of column c that is not a number ([vs, ve), kind from
 * lm_parse_number): counted, the first of a numeric column kept for the
 * message that names it. */
static void note_text(part *pt, size_t c, long line, const char *vs, const char *ve) {
  if (!pt->ctx->keep_text[c]) {
    if (pt->n_text[c]++ == 0) {
      pt->first_text_line[c] = line;
      size_t n = (size_t)(ve - vs);
      pt->first_text[c] = lm_arena_strndup(
          pt->arena, vs, n < FIRST_TEXT_MAX ? n : FIRST_TEXT_MAX);
    }
  } else {
    pt->n_text[c]++;
  }
}

/* The cell of column c in row row, field [fs, fe) (quoted: a quoted
 * field's body; int_cell: all digits, int_value its value when loaded):
 * converted and stored, or checked and counted when the column is
 * deferred. Returns 0, or 1 with the part's error set. */
static inline int store_cell(part *pt, lm_buf *scratch, size_t row, long line, size_t c,
                             const char *fs, const char *fe, int quoted, int int_cell,
                             double int_value, int *missing_in_row) {
  const parse_ctx *ctx = pt->ctx;
  lm_column *col = &ctx->cols[c];
  const char *vs = fs, *ve = fe;
  if (quoted && memchr(fs, '"', (size_t)(fe - fs))) {
    if (unquote(fs, fe, scratch) != LM_OK) goto nomem;
    vs = scratch->data;
    ve = scratch->data + scratch->len;
  }
  double v = int_value;
  int is_int = 1, kind = 1;
  if (ctx->skip[c] && (int_cell || (!quoted && ve - vs <= 300 && plain_decimal(vs, ve)))) {
    if (!int_cell) pt->not_int[c] = 1; /* "131072.0": a number, not an integer */
    return 0;
  }
  if (!int_cell) kind = lm_parse_number(vs, ve, &v, &is_int);
  if (kind == 3) {
    pt->status = lm_diag_set(&pt->diag, LM_EDATA, ctx->path, line, (long)c + 1, col->name,
                             "number out of the range of a double: '%.*s%s'",
                             (int)(ve - vs > 40 ? 40 : ve - vs), vs, ve - vs > 40 ? "..." : "");
    return 1;
  }
  if (kind == 0 && memchr(vs, '\0', (size_t)(ve - vs))) {
    pt->status = lm_diag_set(&pt->diag, LM_EPARSE, ctx->path, line, (long)c + 1, col->name,
                             "a NUL byte inside the field (a binary or corrupt file?)");
    return 1;
  }
  if (kind == 0 && !quoted && !ctx->keep_text[c] && memchr(vs, '"', (size_t)(ve - vs))) {
    pt->status = lm_diag_set(&pt->diag, LM_EPARSE, ctx->path, line, (long)c + 1, col->name,
                             "a quote inside an unquoted field (a field holding quotes must "
                             "be quoted, its quotes doubled)");
    return 1;
  }
  if (!ctx->skip[c]) col->values[row] = v;
  if (kind == 2) {
    pt->n_missing[c]++;
    *missing_in_row = 1;
  } else if (kind == 0) {
    if (!ctx->skip[c]) col->values[row] = LM_NAN;
    note_text(pt, c, line, vs, ve);
  } else if (!is_int) {
    pt->not_int[c] = 1;
  }
  if (ctx->keep_text[c]) {
    /* A missing-value token reads as an empty text, as a blank does. */
    int32_t id;
    if (kind == 2) ve = vs;
    if (lm_csv_intern_text(pt, vs, (size_t)(ve - vs), &id) != LM_OK) goto nomem;
    col->text_ids[row] = id;
  }
  return 0;
nomem:
  pt->status = lm_fail_at(&pt->diag, LM_ENOMEM, ctx->path, line, NULL, "out of memory");
  return 1;
}

/* Give back the fully parsed pages of the mapping between *released and
 * p, once they add up to a chunk. */
static void release_parsed(const char **released, const char *p) {
  if ((size_t)(p - *released) < RELEASE_CHUNK) return;
  uintptr_t from = ((uintptr_t)*released + 4095) & ~(uintptr_t)4095;
  uintptr_t to = (uintptr_t)(p - 1) & ~(uintptr_t)4095;
  if (to > from) madvise((void *)from, to - from, MADV_DONTNEED);
  *released = p;
}

/* Parse the records of [p, end), which holds file bytes from base_off at
 * base, continuing the part's rows and lines (pt->row, pt->line). final:
 * end is the part's end; else it is a window's, just past a newline, and a
 * quoted field that does not close before it makes the part irregular.
 * The fields of a run of deferred columns go through step_run, the others
 * one by one: scanned here, then checked (field_end) and stored
 * (store_cell). */
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
      if (ctx->skip_run[c]) c = step_run(pt, row, &p, limit, c);
      const char *fs, *fe;
      int quoted = 0, int_cell = 0;
      double int_value = 0;
      if (p < end && *p == '"') {
        quoted = 1;
        if (scan_quoted(pt, &p, end, final, c, line, &fs, &fe)) goto out;
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
      if (field_end(pt, &p, end, record_start, c, line, quoted)) goto out;
      if (store_cell(pt, &scratch, row, line, c, fs, fe, quoted, int_cell, int_value,
                     &missing_in_row))
        goto out;
    }
    /* End of record. */
    if (p < end && *p == '\r') p++;
    if (p < end && *p == '\n') p++;
    ctx->row_missing[row] = (uint8_t)missing_in_row;
    if (ctx->row_offset) ctx->row_offset[row] = base_off + (size_t)(record_start - base);
    row++;
    line++;
    if (release) release_parsed(&released, p);
  }
out:
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
      pt->status = lm_fail_at(&pt->diag, LM_EIO, ctx->path, pt->line, NULL, "cannot read: %s", strerror(errno));
      break;
    }
    if (got < want) {
      pt->status = lm_fail_at(&pt->diag, LM_EIO, ctx->path, pt->line, NULL, "the file became shorter while being read");
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
  pt->status = lm_fail_at(&pt->diag, LM_ENOMEM, ctx->path, pt->line, NULL, "out of memory");
}

void *lm_csv_parse_part(void *arg) {
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

void lm_csv_part_fini(part *pt) {
  lm_map_free(pt->intern);
  lm_free(pt->strings);
  lm_free(pt->n_missing);
  lm_free(pt->n_text);
  lm_free(pt->first_text_line);
  lm_free(pt->first_text);
  lm_free(pt->not_int);
  /* pt->arena is handed to the table or freed by the caller */
}

lm_status lm_csv_part_init(part *pt, parse_ctx *ctx, lm_arena *arena) {
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
