/*
 * csv.c - the CSV column loader: the header, the newline count, the
 * column arrays, the parts (records.c parses their records) and their
 * merge into one table.
 *
 * A hot path written by hand (thousands of columns, hundreds of MB):
 * newlines are counted to size the columns exactly, records are parsed
 * straight into them, on two threads for large files. Invariant: the
 * result is that of a serial parse (a quoted newline drops the parallel
 * one), every number the correctly rounded double (number.c). Deferred
 * columns, pages and figures: docs/streaming.md, docs/perf.md.
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
#include "csv/csv_parse.h"
#include "csv/csv.h"

#define DEFAULT_MAX_RECORD ((size_t)64 << 20)
#define PARALLEL_MIN_BYTES ((size_t)8 << 20)
/* From this size on the newline count gives back the pages it has read
 * too: below it, keeping the file mapped for the parse costs less than
 * faulting its pages in again (a 460 MB file took 0.2 to 0.4 s more CPU
 * time in four of five alternate runs when they were given back). */
#define COUNT_RELEASE_MIN ((size_t)1 << 30)
#define DEFAULT_LOAD_CAP ((size_t)384 << 20)

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
  if (!names) return lm_fail_at(diag, LM_ENOMEM, path, 1, NULL, "out of memory");
  if (len >= 3 && memcmp(data, "\xEF\xBB\xBF", 3) == 0) i = 3;
  {
    const char *nl = memchr(data, '\n', len);
    size_t first = nl ? (size_t)(nl - data) : len;
    if ((len >= 2 && ((unsigned char)data[0] == 0xFF || (unsigned char)data[0] == 0xFE) &&
         ((unsigned char)data[1] == 0xFE || (unsigned char)data[1] == 0xFF)) ||
        memchr(data, '\0', first < 4096 ? first : 4096)) {
      status =
          lm_fail_at(diag, LM_EPARSE, path, 1, NULL, "the file is UTF-16 (or holds NUL bytes): save it as UTF-8 text");
      goto done;
    }
  }
  if (i >= len || data[i] == '\n' || data[i] == '\r') {
    status = lm_fail_at(diag, LM_EPARSE, path, 1, NULL, "empty file: no header line");
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
      status = lm_fail_at(diag, LM_EPARSE, path, 1, NULL,
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
  status = lm_fail_at(diag, LM_ENOMEM, path, 1, NULL, "out of memory");
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
        if (lm_csv_intern_text(p0, pk->strings[s], strlen(pk->strings[s]),
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

/* The table's columns named from the header (names): a repeated name
 * gets ".1", ".2", ... as the reference reader does, with a warning; and
 * per column whether its cells are kept as text (keep_text) and whether it
 * is deferred (skip), as options ask. */
static lm_status name_columns(lm_table *t, const char **names, const lm_csv_options *options,
                              uint8_t *keep_text, uint8_t *skip) {
  for (size_t c = 0; c < t->n_cols; c++) {
    const char *name = names[c];
    /* Repeated names get ".1", ".2", ... as the reference reader does. */
    if (lm_map_get(t->by_name, name, NULL)) {
      for (int k = 1;; k++) {
        char candidate[1024];
        snprintf(candidate, sizeof candidate, "%s.%d", names[c], k);
        if (!lm_map_get(t->by_name, candidate, NULL)) {
          name = lm_arena_strdup(t->arena, candidate);
          if (!name) return LM_ENOMEM;
          lm_log(LM_LOG_WARN,
                 "%s:1:%zu: field '%s': a second column of this name; it is read as '%s' and "
                 "the first one is used, as the reference tool does",
                 t->path, c + 1, names[c], name);
          break;
        }
      }
    }
    t->cols[c].name = name;
    if (lm_map_put(t->by_name, name, (int64_t)c) != LM_OK) return LM_ENOMEM;
    keep_text[c] = (uint8_t)options->all_text;
    /* (the first characters compared inline: most names differ there) */
    for (const char *const *tc = options->text_columns; tc && *tc; tc++)
      if (**tc == names[c][0] && strcmp(*tc, names[c]) == 0) keep_text[c] = 1;
    /* Deferred: the numeric columns that were not asked for. */
    skip[c] = (uint8_t)(options->defer && !keep_text[c]);
    for (const char *const *ec = options->eager_columns; skip[c] && ec && *ec; ec++)
      if (**ec == name[0] && strcmp(*ec, name) == 0) skip[c] = 0;
  }
  return LM_OK;
}

/* The newlines of the body's two halves (counts[0], counts[1]; one half
 * when want_threads is 1), counted in parallel, through windows of fd when
 * it is open; release: give counted pages of the mapping back. */
static lm_status count_body(const parse_ctx *ctx, size_t header_len, size_t split, int want_threads,
                            int release, size_t counts[2], lm_diag *diag) {
  const char *body = ctx->data + header_len;
  size_t body_len = ctx->len - header_len;
  if (want_threads != 2) {
    counts[0] = count_newlines(body, body_len, release);
    return LM_OK;
  }
  /* An open file is read through windows (the parse then too). */
  count_job jobs[2] = {{body, split, release, ctx->fd, header_len, ctx->window, 0},
                       {body + split, body_len - split, release, ctx->fd, header_len + split, ctx->window, 0}};
  lm_run_pair(count_thread, &jobs[0], &jobs[1]);
  if (jobs[0].count < 0 || jobs[1].count < 0)
    return lm_fail(diag, LM_EIO, ctx->path,
                   "cannot read the file (a read error, or it became shorter while "
                   "being read)");
  counts[0] = (size_t)jobs[0].count;
  counts[1] = (size_t)jobs[1].count;
  return LM_OK;
}

/* The deferred columns the caller will read anyway (options->load_want),
 * loaded when they fit for total rows: marked in fast, no longer skipped;
 * they are stepped over with the deferred ones, and the plain numbers
 * among them converted on the way. Then the runs of columns stepped over
 * (skip_run) and where the next loaded one of them is (next_fast). */
static void plan_steps(const lm_table *t, const lm_csv_options *options, size_t total, uint8_t *skip,
                       uint8_t *fast, size_t *skip_run, size_t *next_fast) {
  if (options->defer && options->load_want) {
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
  next_fast[t->n_cols] = t->n_cols;
  for (size_t c = t->n_cols; c-- > 0;) next_fast[c] = fast[c] ? c : next_fast[c + 1];
  for (size_t c = t->n_cols - 1; c-- > 0;) skip_run[c] = skip[c] || fast[c] ? skip_run[c + 1] + 1 : 0;
}

/* The first part's error, or the second's when both halves were regular
 * (an irregular half is parsed again). */
static lm_status part_error(const part *pt, lm_diag *diag) {
  if (diag) *diag = pt->diag;
  return pt->status;
}

/* Close the gap left by blank lines in the first half: the second half's
 * rows move up to follow the first half's. */
static void close_gap(lm_table *t, const parse_ctx *ctx, part *parts, size_t counted) {
  size_t gap_from = counted, to = parts[0].rows;
  if (ctx->row_offset)
    memmove(ctx->row_offset + to, ctx->row_offset + gap_from, parts[1].rows * sizeof(size_t));
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

/* Parse the body in *n_parts parts (initialized, their ranges set): two
 * in parallel, or one. Two that meet a quoted newline are dropped (their
 * strings with *side) and the body parsed again as one. t->n_rows set;
 * an error is the failed part's (diag filled). */
static lm_status parse_parts(lm_table *t, parse_ctx *ctx, part *parts, int *n_parts, lm_arena *arena,
                             lm_arena **side, size_t header_len, const size_t counts[2], lm_diag *diag) {
  if (*n_parts == 1) {
    lm_csv_parse_part(&parts[0]);
    if (parts[0].status != LM_OK) return part_error(&parts[0], diag);
    t->n_rows = parts[0].rows;
    return LM_OK;
  }
  lm_run_pair(lm_csv_parse_part, &parts[0], &parts[1]);
  int regular = !parts[0].irregular && !parts[1].irregular;
  if (parts[0].status != LM_OK || parts[1].status != LM_OK) {
    part *bad = parts[0].status != LM_OK ? &parts[0] : &parts[1];
    if (regular || bad == &parts[0]) return part_error(bad, diag);
  }
  if (regular) {
    t->n_rows = parts[0].rows + parts[1].rows;
    if (parts[0].rows < counts[0]) close_gap(t, ctx, parts, counts[0]);
    return LM_OK;
  }
  /* Quoted newlines: the line-count split is not a record split. Parse
   * again from the start, on one thread, without a row bound. */
  for (int k = 0; k < *n_parts; k++) lm_csv_part_fini(&parts[k]);
  lm_arena_free(*side);
  *side = NULL;
  *n_parts = 1;
  if (lm_csv_part_init(&parts[0], ctx, arena) != LM_OK) return lm_oom(diag, ctx->path);
  parts[0].start = header_len;
  parts[0].end = ctx->len;
  parts[0].first_line = 2;
  parts[0].expect_rows = 0;
  lm_csv_parse_part(&parts[0]);
  if (parts[0].status != LM_OK) return part_error(&parts[0], diag);
  t->n_rows = parts[0].rows;
  return LM_OK;
}

/* The table's path and name (its file name without the extension). */
static lm_status name_table(lm_table *t, const char *path) {
  t->path = lm_arena_strdup(t->arena, path);
  const char *base = strrchr(path, '/');
  base = base ? base + 1 : path;
  const char *dot = strrchr(base, '.');
  t->name = lm_arena_strndup(t->arena, base, dot ? (size_t)(dot - base) : strlen(base));
  return t->path && t->name ? LM_OK : LM_ENOMEM;
}

/* The records of each part: the body from header_len, split at split for
 * two parts, each bounded by its newline count; one part is not bounded
 * (serial: quoted newlines are fine). */
static void set_ranges(part *parts, int n_parts, size_t header_len, size_t split, size_t len,
                       const size_t counts[2]) {
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
  } else {
    parts[0].end = len;
    parts[0].expect_rows = 0; /* serial: quoted newlines are fine */
  }
}

/* The table takes the file (see lm_csv_read) to read its deferred columns
 * back: through windows when it is open, else in the caller's buffer. */
static void keep_file(lm_table *t, lm_csv_file *file, const parse_ctx *ctx) {
  file->data = ctx->fd >= 0 ? NULL : ctx->data;
  file->len = ctx->len;
  file->fd = ctx->fd;
  file->window = ctx->window;
  file->n_rows = t->n_rows;
  t->fetch = lm_csv_fetch;
  t->fetch_state = file;
  t->fetch_release = lm_csv_file_release;
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
  if (!arena) return lm_oom(diag, path);

  t = lm_arena_alloc(arena, sizeof *t);
  if (!t) goto nomem;
  t->arena = arena;
  if (name_table(t, path) != LM_OK) goto nomem;

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
  if (name_columns(t, names, options, keep_text, skip) != LM_OK) goto nomem;

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
  status = count_body(&ctx, header_len, split, want_threads, mapped && len >= COUNT_RELEASE_MIN, counts, diag);
  if (status != LM_OK) goto fail;
  size_t total = counts[0] + counts[1];
  size_t *next_fast = skip_run + t->n_cols + 1;
  plan_steps(t, options, total, skip, fast, skip_run, next_fast);
  int any_skip = 0;
  for (size_t c = 0; c < t->n_cols; c++) any_skip |= skip[c];
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
    if (lm_csv_part_init(&parts[k], &ctx, k == 0 ? arena : side) != LM_OK) goto nomem;
  set_ranges(parts, n_parts, header_len, split, len, counts);
  status = parse_parts(t, &ctx, parts, &n_parts, arena, &side, header_len, counts, diag);
  if (status != LM_OK) goto fail;
  if (merge_parts(t, parts, n_parts, keep_text) != LM_OK) goto nomem;
  /* The strings of the second part were copied by lm_csv_intern_text into the
   * table's arena; the side arena can go. */
  for (int k = 0; k < n_parts; k++) lm_csv_part_fini(&parts[k]);
  n_parts = 0;
  lm_arena_free(side);
  lm_free(keep_text);
  lm_free(skip);
  lm_free(skip_run);
  lm_free(fast);
  if (file) keep_file(t, file, &ctx);
  *out = t;
  return LM_OK;

nomem:
  status = lm_oom(diag, path);
fail:
  for (int k = 0; k < n_parts; k++) lm_csv_part_fini(&parts[k]);
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
    return lm_fail_at(diag, LM_EPARSE, path, 1, NULL, "empty file: no header line");
  }
  void *map = mmap(NULL, len, PROT_READ, MAP_PRIVATE, fd, 0);
  if (map == MAP_FAILED) {
    int err = errno;
    close(fd);
    return lm_fail(diag, LM_EIO, path, "cannot map: %s", strerror(err));
  }
  madvise(map, len, MADV_SEQUENTIAL);
  lm_status status = parse_buffer(map, len, path, options, 1, fd, out, diag);
  /* A table with deferred columns keeps the file open to read them later,
   * through windows; the mapping is not needed after the parse. */
  munmap(map, len);
  if (status != LM_OK || !(*out)->fetch_state) close(fd);
  return status;
}
