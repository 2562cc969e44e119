/*
 * fetch.c - reading deferred columns back from a CSV file.
 *
 * A table with deferred columns keeps its file open and every record's
 * offset; a fetch walks each wanted record (commas found by csv_scan.h,
 * nothing checked again: the loader did) and converts only the wanted
 * fields. Invariant: a fetched value is bit for bit what a full load
 * stores (the loader's number rules). Records are read with pread into a
 * half-megabyte window kept between fetches, not through a mapping, so
 * resident memory stays a batch's worth; why, with figures:
 * docs/streaming.md ("Reading through windows"), docs/perf.md.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "csv/csv_file.h"
#include "csv/csv_scan.h"
#include "csv/csv.h"

lm_csv_window *lm_csv_window_take(_Atomic(lm_csv_window *) *spare, size_t cap) {
  for (int i = 0; spare && i < 2; i++) {
    lm_csv_window *w = atomic_exchange(&spare[i], NULL);
    if (!w) continue;
    if (w->cap >= cap) return w;
    lm_free(w);
  }
  lm_csv_window *w = lm_malloc(sizeof *w + cap);
  if (w) w->cap = cap;
  return w;
}

void lm_csv_window_give(_Atomic(lm_csv_window *) *spare, lm_csv_window *w) {
  for (int i = 0; w && spare && i < 2; i++) {
    lm_csv_window *empty = NULL;
    if (atomic_compare_exchange_strong(&spare[i], &empty, w)) return;
  }
  lm_free(w);
}

void lm_csv_file_release(void *state) {
  lm_csv_file *f = state;
  if (!f) return;
  if (f->fd >= 0) close(f->fd);
  for (int i = 0; i < 2; i++) lm_free(atomic_load(&f->spare[i]));
  lm_free(f->row_offset);
  lm_free(f);
}

int lm_csv_read_at(int fd, char *dst, size_t n, size_t off, size_t *got) {
  *got = 0;
  while (*got < n) {
    ssize_t r = pread(fd, dst + *got, n - *got, (off_t)(off + *got));
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) return -1;
    if (r == 0) break;
    *got += (size_t)r;
  }
  return 0;
}

/* The value of field [s, e) as the loader converts it. */
static double field_value(const char *s, const char *e, int quoted, lm_buf *scratch) {
  double fast;
  if (!quoted && lm_csv_fast_number(s, e, &fast)) return fast;
  if (quoted && memchr(s, '"', (size_t)(e - s))) {
    lm_buf_reset(scratch);
    for (const char *p = s; p < e; p++) {
      lm_buf_putc(scratch, *p);
      if (*p == '"') p++;
    }
    if (scratch->failed) return LM_NAN;
    s = scratch->data;
    e = scratch->data + scratch->len;
  }
  double v = LM_NAN;
  int is_int;
  return lm_parse_number(s, e, &v, &is_int) == 1 ? v : LM_NAN;
}

/* Field c of a record at p, the slow way (quoted fields, line ends, the
 * end of the file): converts it into *dst when dst is not NULL; returns
 * where the next field starts, or NULL when the record ended before its
 * last wanted field (last). */
static const char *slow_field(const char *p, const char *end, long c, long last, double *dst,
                              lm_buf *scratch) {
  const char *fs, *fe;
  int quoted = p < end && *p == '"';
  if (quoted) {
    fs = ++p;
    for (;;) {
      const char *q = memchr(p, '"', (size_t)(end - p));
      if (!q) q = end;
      if (q + 1 < end && q[1] == '"') {
        p = q + 2;
        continue;
      }
      fe = q;
      p = q < end ? q + 1 : end;
      break;
    }
  } else {
    fs = p;
    while (p < end && *p != ',' && *p != '\n' && *p != '\r') p++;
    fe = p;
  }
  if (dst) *dst = field_value(fs, fe, quoted, scratch);
  if (p < end && *p == ',') return p + 1;
  return c < last ? NULL : p;
}

/* The value of the unquoted field [s, e) of a file ending at end: most
 * are short integers, converted eight bytes at once when the file holds
 * eight bytes from s. */
static inline double plain_value(const char *s, const char *e, const char *end, lm_buf *scratch) {
  size_t n = (size_t)(e - s);
  if (n - 1 < 8 && end - s >= 8) {
    uint64_t w;
    memcpy(&w, s, 8);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    w = __builtin_bswap64(w);
#endif
    /* The field's digits as values 0..9, the first in the low byte, moved
     * up so that the bytes past the field drop out and zeros lead. */
    uint64_t v = (w ^ 0x3030303030303030ULL) << (64 - 8 * n);
    if ((((v + 0x7676767676767676ULL) | v) & 0x8080808080808080ULL) == 0) {
      v = (v * 10 + (v >> 8)) & 0x00FF00FF00FF00FFULL;       /* pairs of digits */
      v = (v * 100 + (v >> 16)) & 0x0000FFFF0000FFFFULL;     /* groups of four */
      return (double)((v * 10000 + (v >> 32)) & 0xFFFFFFFFULL); /* all eight */
    }
  } else if (n - 1 < 15) {
    uint64_t u = 0;
    const char *p = s;
    while (p < e && (unsigned)(*p - '0') < 10) u = u * 10 + (uint64_t)(*p++ - '0');
    if (p == e) return (double)u;
  }
  return field_value(s, e, 0, scratch);
}

lm_status lm_csv_fetch(const lm_table *t, const long *cols, size_t n_cols, const size_t *rows,
                       size_t n_rows, double *const *out, lm_diag *diag) {
  lm_csv_file *f = t->fetch_state;
  lm_status st = LM_OK;
  lm_buf scratch = {0};
  long last = -1;
  for (size_t k = 0; k < n_cols; k++)
    if (cols[k] > last && !t->cols[cols[k]].values) last = cols[k];
  /* slot[c]: the first request of column c, -1 when not wanted. */
  int32_t *slot = lm_malloc((size_t)(last + 1 > 0 ? last + 1 : 1) * sizeof *slot);
  if (!slot) return lm_oom(diag, t->path);
  for (long c = 0; c <= last; c++) slot[c] = -1;
  /* Loaded columns are copied below, not read from the file. */
  for (size_t k = n_cols; k-- > 0;)
    if (!t->cols[cols[k]].values) slot[cols[k]] = (int32_t)k;
  const char *end = f->data + f->len;
  /* Through windows: win holds file bytes [win_at, win_at + win_len);
   * read_to is where the last wanted record ends. */
  lm_csv_window *win = NULL;
  size_t win_at = 0, win_len = 0, read_to = 0;
  if (f->fd >= 0 && last >= 0) {
    for (size_t i = 0; i < n_rows; i++) {
      size_t row = rows[i];
      size_t re = row + 1 < f->n_rows ? f->row_offset[row + 1] : f->len;
      if (row < f->n_rows && re > read_to) read_to = re;
    }
    win = lm_csv_window_take(f->spare, f->window);
    if (!win) {
      st = lm_oom(diag, t->path);
      goto done;
    }
  }
  for (size_t i = 0; last >= 0 && i < n_rows; i++) {
    size_t row = rows[i];
    if (row >= f->n_rows) {
      for (size_t k = 0; k < n_cols; k++) out[k][i] = LM_NAN;
      continue;
    }
    const char *rec = win ? NULL : f->data + f->row_offset[row];
    if (win) {
      size_t rs = f->row_offset[row], re = row + 1 < f->n_rows ? f->row_offset[row + 1] : f->len;
      if (rs < win_at || re > win_at + win_len) {
        /* The window from this record on, as far as the wanted records
         * go (and at least this whole record). */
        size_t want = read_to - rs < f->window ? read_to - rs : f->window;
        if (want < re - rs) want = re - rs;
        if (want > win->cap) {
          lm_csv_window_give(NULL, win);
          if (!(win = lm_csv_window_take(NULL, want))) {
            st = lm_oom(diag, t->path);
            goto done;
          }
        }
        size_t got;
        if (lm_csv_read_at(f->fd, win->data, want, rs, &got) != 0) {
          st = lm_fail_at(diag, LM_EIO, t->path, (long)row + 2, NULL, "cannot read: %s", strerror(errno));
          goto done;
        }
        if (got < re - rs) {
          st = lm_fail_at(diag, LM_EDATA, t->path, (long)row + 2, NULL,
                          "the record is shorter than when the file was loaded (was the file "
                          "changed while being read?)");
          goto done;
        }
        win_at = rs;
        win_len = got;
      }
      rec = win->data + (rs - win_at);
      end = win->data + win_len;
    }
    /* fs: where field c starts; q: the next sixteen bytes to look at. The
     * loader checked every field of the record, so its commas are found
     * sixteen bytes at a time and only the wanted fields are converted;
     * a quote, a line end or the end of the file takes one field the slow
     * way. */
    const char *fs = rec, *q = fs;
    long c = 0;
    while (c <= last) {
      if (end - q >= 16) {
        lm_csv_marks m = lm_csv_marks16(q);
        unsigned commas = m.comma & (m.stop ? (m.stop & (0u - m.stop)) - 1 : 0xFFFFu);
        while (commas && c <= last) {
          const char *d = q + __builtin_ctz(commas);
          commas &= commas - 1;
          if (slot[c] >= 0) out[slot[c]][i] = plain_value(fs, d, end, &scratch);
          c++;
          fs = d + 1;
        }
        if (c > last) break;
        if (!m.stop) {
          q += 16;
          continue;
        }
      }
      /* A stop byte (or the file's last bytes) in the field at fs. */
      const char *next = slow_field(fs, end, c, last, slot[c] >= 0 ? &out[slot[c]][i] : NULL, &scratch);
      if (!next) {
        /* The record ended early: the file changed since it was loaded. */
        st = lm_diag_set(diag, LM_EDATA, t->path, (long)row + 2, c + 2, NULL,
                         "the record is shorter than when the file was loaded (was the file "
                         "changed while being read?)");
        goto done;
      }
      c++;
      fs = q = next;
    }
  }
  for (size_t k = 0; k < n_cols; k++) {
    const double *loaded = t->cols[cols[k]].values;
    if (loaded)
      for (size_t i = 0; i < n_rows; i++) out[k][i] = rows[i] < f->n_rows ? loaded[rows[i]] : LM_NAN;
    else if (slot[cols[k]] != (int32_t)k)
      memcpy(out[k], out[slot[cols[k]]], n_rows * sizeof(double));
  }
done:
  lm_csv_window_give(f->spare, win);
  lm_buf_fini(&scratch);
  lm_free(slot);
  return st;
}
