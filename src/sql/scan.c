/*
 * scan.c - a table's records read straight from an SQLite file's pages.
 * A full scan of a table of millions of small rows through SQLite's
 * statements costs some 1,800 instructions a row (the virtual machine, a
 * call per column); the same rows are a few varints and fixed-width
 * numbers on leaf pages that lie in the file in the table's b-tree. The
 * walk follows SQLite's documented file format: interior table pages
 * (type 5) point to children by page number, leaf table pages (type 13)
 * hold cells of a payload size, a rowid and the record (a header of serial
 * types, then the values), a payload too large for its page continues on a
 * chain of overflow pages. Every offset is checked against its page, pages
 * against the file, and the walk against the file's page count (no cycle
 * can loop), so a damaged or hostile file gives an error naming its page.
 *
 * The file is mapped read-only. Reading it beside SQLite is only sound when
 * the file holds the whole database: with a write-ahead log or a hot
 * journal beside it (changes not yet in the file), or text other than
 * UTF-8, the scan declines and the caller reads through SQL. While a scan
 * is open it holds a read transaction, so no writer changes the file.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sql/sql_private.h"

enum { MAX_DEPTH = 64, MAX_COLS = 2000 };

struct lm_sql_scan {
  const uint8_t *file; /* the image */
  size_t size, mapped; /* mapped: bytes to unmap (0: not ours) */
  const char *where;
  uint32_t page_size, usable, n_pages, root;
  lm_sql *sql; /* holds the read transaction (NULL: none) */
  int ipk;     /* the column that is the rowid (INTEGER PRIMARY KEY), or -1 */
  int n_names; /* the table's columns, by name */
  char **names;
  /* Each named column's value in a record that lacks it (one older than
   * the column): its DEFAULT as SQLite reads it, a serial type and its
   * bytes (NULL when there are no names). */
  struct dflt {
    uint64_t type;
    uint8_t *bytes;
  } *dflt;
  /* The walk: a stack of interior pages and the next child of each. */
  struct {
    uint32_t page, next;
  } stack[MAX_DEPTH];
  int depth;
  uint32_t leaf, cell, n_cells; /* the leaf being read (0: none) */
  uint64_t visited;             /* pages entered, bounded by n_pages */
  /* The current record. */
  int64_t rowid;
  const uint8_t *rec; /* payload (on its page or in buf) */
  size_t rec_len;
  uint8_t *buf;
  size_t buf_cap;
  int n_cols;
  uint64_t *type; /* serial type of each column */
  size_t *offset; /* its value's offset in the payload */
  int cap_cols;
  char num[64]; /* a text value as a number */
};

/* A big-endian varint at p (below end) into *v: its length, 0 if cut.
 * The one-byte case (nearly every one) inline, the rest out of line. */
static size_t varint_long(const uint8_t *p, const uint8_t *end, uint64_t *v) {
  uint64_t x = 0;
  for (size_t i = 0; i < 9; i++) {
    if (p + i >= end) return 0;
    if (i == 8) {
      *v = (x << 8) | p[i];
      return 9;
    }
    x = (x << 7) | (p[i] & 0x7f);
    if (!(p[i] & 0x80)) {
      *v = x;
      return i + 1;
    }
  }
  return 0;
}

static inline size_t varint(const uint8_t *p, const uint8_t *end, uint64_t *v) {
  if (p < end && !(*p & 0x80)) {
    *v = *p;
    return 1;
  }
  return varint_long(p, end, v);
}

static uint32_t be16(const uint8_t *p) { return (uint32_t)p[0] << 8 | p[1]; }
static uint32_t be32(const uint8_t *p) { return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | be16(p + 2); }

/* The bytes a value of serial type t takes in the record. */
static uint64_t serial_len(uint64_t t) {
  static const uint8_t fixed[12] = {0, 1, 2, 3, 4, 6, 8, 8, 0, 0, 0, 0};
  return t < 12 ? fixed[t] : (t - 12) / 2;
}

static lm_status bad(lm_sql_scan *s, uint32_t page, const char *what, lm_diag *diag) {
  return lm_fail(diag, LM_EPARSE, s->where, "page %u: %s (the file is damaged)", page, what);
}

/* Page n (1-based) of the image, its b-tree header after the file's
 * header on page 1. */
static const uint8_t *page_at(const lm_sql_scan *s, uint32_t n, const uint8_t **hdr) {
  const uint8_t *p = s->file + (size_t)(n - 1) * s->page_size;
  *hdr = n == 1 ? p + 100 : p;
  return p;
}

/* Enter page n: pushed when interior, the leaf when a leaf. Every
 * RELEASE pages the pages read are let go (they stay in the page cache;
 * one read again faults back in), so resident memory stays bounded. */
enum { RELEASE = 256 };
static lm_status enter(lm_sql_scan *s, uint32_t n, lm_diag *diag) {
  if (n < 1 || n > s->n_pages) return bad(s, n, "a child page beyond the file's end", diag);
  if (++s->visited > s->n_pages) return bad(s, n, "the table's pages form a cycle", diag);
  if (s->mapped && s->visited % RELEASE == 0) madvise((void *)s->file, s->mapped, MADV_DONTNEED);
  const uint8_t *hdr;
  const uint8_t *p = page_at(s, n, &hdr);
  (void)p;
  uint32_t cells = be16(hdr + 3);
  if (hdr[0] == 13) {
    if ((size_t)(hdr - p) + 8 + 2 * (size_t)cells > s->usable) return bad(s, n, "more cells than fit", diag);
    s->leaf = n;
    s->cell = 0;
    s->n_cells = cells;
    return LM_OK;
  }
  if (hdr[0] != 5) return bad(s, n, "not a page of a table's b-tree", diag);
  if ((size_t)(hdr - p) + 12 + 2 * (size_t)cells > s->usable) return bad(s, n, "more cells than fit", diag);
  if (s->depth == MAX_DEPTH) return bad(s, n, "a b-tree deeper than any SQLite writes", diag);
  s->stack[s->depth].page = n;
  s->stack[s->depth].next = 0;
  s->depth++;
  return LM_OK;
}

/* The payload of the cell at off on leaf page n: local part, then the
 * overflow chain gathered into buf. */
static lm_status payload(lm_sql_scan *s, uint32_t n, const uint8_t *p, size_t off, lm_diag *diag) {
  const uint8_t *end = p + s->usable, *c = p + off;
  uint64_t len, rowid;
  size_t k = varint(c, end, &len);
  if (!k) return bad(s, n, "a cut cell", diag);
  c += k;
  if (!(k = varint(c, end, &rowid))) return bad(s, n, "a cut cell", diag);
  c += k;
  s->rowid = (int64_t)rowid;
  uint64_t u = s->usable, x = u - 35;
  if (len <= x) {
    if (len > (uint64_t)(end - c)) return bad(s, n, "a cell past its page", diag);
    s->rec = c;
    s->rec_len = (size_t)len;
    return LM_OK;
  }
  if (len > ((uint64_t)s->n_pages + 1) * u) return bad(s, n, "a record larger than the file", diag);
  uint64_t m = ((u - 12) * 32 / 255) - 23, local = m + (len - m) % (u - 4);
  if (local > x) local = m;
  if (local + 4 > (uint64_t)(end - c)) return bad(s, n, "a cell past its page", diag);
  if (len > s->buf_cap) {
    uint8_t *b = lm_realloc(s->buf, (size_t)len);
    if (!b) return lm_oom(diag, s->where);
    s->buf = b;
    s->buf_cap = (size_t)len;
  }
  memcpy(s->buf, c, (size_t)local);
  size_t have = (size_t)local;
  uint32_t next = be32(c + local);
  for (uint32_t hops = 0; have < len; hops++) {
    if (next < 1 || next > s->n_pages || hops > s->n_pages) return bad(s, n, "a broken overflow chain", diag);
    const uint8_t *o = s->file + (size_t)(next - 1) * s->page_size;
    size_t take = (size_t)(len - have) < u - 4 ? (size_t)(len - have) : (size_t)(u - 4);
    memcpy(s->buf + have, o + 4, take);
    have += take;
    next = be32(o);
  }
  s->rec = s->buf;
  s->rec_len = (size_t)len;
  return LM_OK;
}

/* The record's header: each column's serial type and offset. */
static lm_status record(lm_sql_scan *s, uint32_t n, lm_diag *diag) {
  const uint8_t *r = s->rec, *end = r + s->rec_len;
  uint64_t hlen, t;
  size_t k = varint(r, end, &hlen);
  if (!k || hlen > s->rec_len || hlen < k) return bad(s, n, "a record's header past the record", diag);
  const uint8_t *h = r + k, *hend = r + hlen;
  uint64_t at = hlen;
  s->n_cols = 0;
  while (h < hend) {
    if (!(k = varint(h, hend, &t)) || t == 10 || t == 11) return bad(s, n, "a bad record header", diag);
    h += k;
    if (s->n_cols == s->cap_cols) {
      if (s->cap_cols >= MAX_COLS) return bad(s, n, "a record of too many columns", diag);
      int cap = s->cap_cols ? 2 * s->cap_cols : 16;
      uint64_t *ty = lm_realloc(s->type, (size_t)cap * sizeof *ty);
      if (ty) s->type = ty;
      size_t *of = lm_realloc(s->offset, (size_t)cap * sizeof *of);
      if (of) s->offset = of;
      if (!ty || !of) return lm_oom(diag, s->where);
      s->cap_cols = cap;
    }
    s->type[s->n_cols] = t;
    s->offset[s->n_cols++] = (size_t)at;
    at += serial_len(t);
    if (at > s->rec_len) return bad(s, n, "a record's values past the record", diag);
  }
  return LM_OK;
}

int lm_sql_scan_next(lm_sql_scan *s, lm_diag *diag) {
  for (;;) {
    if (s->leaf) {
      if (s->cell < s->n_cells) {
        const uint8_t *hdr;
        const uint8_t *p = page_at(s, s->leaf, &hdr);
        size_t off = be16(hdr + 8 + 2 * s->cell++);
        if (off < (size_t)(hdr - p) + 8 || off >= s->usable) {
          bad(s, s->leaf, "a cell outside its page", diag);
          return -1;
        }
        if (payload(s, s->leaf, p, off, diag) != LM_OK || record(s, s->leaf, diag) != LM_OK) return -1;
        return 1;
      }
      s->leaf = 0;
    }
    if (s->depth == 0) {
      if (s->root == 0) return 0;
      uint32_t r = s->root;
      s->root = 0;
      if (enter(s, r, diag) != LM_OK) return -1;
      continue;
    }
    const uint8_t *hdr;
    uint32_t n = s->stack[s->depth - 1].page;
    const uint8_t *p = page_at(s, n, &hdr);
    uint32_t i = s->stack[s->depth - 1].next++, cells = be16(hdr + 3), child;
    if (i < cells) {
      size_t off = be16(hdr + 12 + 2 * i);
      if (off < (size_t)(hdr - p) + 12 || off + 4 > s->usable) {
        bad(s, n, "a cell outside its page", diag);
        return -1;
      }
      child = be32(p + off);
    } else if (i == cells) {
      child = be32(hdr + 8);
    } else {
      s->depth--;
      continue;
    }
    if (enter(s, child, diag) != LM_OK) return -1;
  }
}

/* Column col's value: its serial type and bytes (when the record has
 * fewer columns, the column was added to the table later: its default). */
static uint64_t value(const lm_sql_scan *s, int col, const uint8_t **v) {
  if (col < 0 || !s->rec) return 0;
  if (col >= s->n_cols) {
    if (col >= s->n_names || !s->dflt) return 0;
    *v = s->dflt[col].bytes;
    return s->dflt[col].type;
  }
  *v = s->rec + s->offset[col];
  return s->type[col];
}

static int64_t integer_at(const uint8_t *v, uint64_t t) {
  switch (t) {
    case 1:
      return (int8_t)v[0];
    case 2:
      return (int16_t)be16(v);
    case 4:
      return (int32_t)be32(v);
    case 6:
      return (int64_t)((uint64_t)be32(v) << 32 | be32(v + 4));
    default:
      break;
  }
  int n = t == 3 ? 3 : 6;                        /* 24 and 48 bits */
  uint64_t x = (v[0] & 0x80) ? ~UINT64_C(0) : 0; /* sign-extended */
  for (int i = 0; i < n; i++) x = (x << 8) | v[i];
  return (int64_t)x;
}

static double real_at(const uint8_t *v) {
  uint64_t x = (uint64_t)be32(v) << 32 | be32(v + 4);
  double d;
  memcpy(&d, &x, sizeof d);
  return d;
}

static int digit(const char *p, const char *end) { return p < end && *p >= '0' && *p <= '9'; }

/* A text value's number as SQLite reads one, NUL-terminated in s->num for
 * strtod and strtoll: the longest start of the text in SQLite's grammar
 * (spaces, a sign, digits, a point and digits, an exponent; no
 * hexadecimal, no infinity or NaN spelled out), less the zeros that do
 * not count (the integer part's leading ones, the fraction's trailing
 * ones), digits past the buffer's room counted in the exponent; NULL when
 * that start has no digit (*negative: it has a '-'). */
static const char *number_text(lm_sql_scan *s, const uint8_t *v, uint64_t t, int *negative) {
  const char *p = (const char *)v, *end = p + serial_len(t);
  char *o = s->num, *cap = s->num + sizeof s->num - 16; /* room for the exponent */
  int digits = 0;
  long exp = 0, dropped = 0;
  while (p < end && (*p == ' ' || (*p >= '\t' && *p <= '\r'))) p++;
  *negative = p < end && *p == '-';
  if (p < end && (*p == '-' || *p == '+')) *o++ = *p++;
  while (p < end && *p == '0' && digit(p + 1, end)) p++;
  for (; digit(p, end); p++, digits = 1) {
    if (o < cap) *o++ = *p;
    else dropped++;
  }
  if (p < end && *p == '.') {
    const char *f = ++p, *last;
    while (digit(p, end)) p++;
    for (last = p; last > f && last[-1] == '0';) last--;
    digits |= p > f;
    if (o < cap) *o++ = '.';
    while (f < last && o < cap) *o++ = *f++;
  }
  if (digits && p < end && (*p == 'e' || *p == 'E')) {
    const char *e = p + 1;
    int minus = e < end && *e == '-';
    if (e < end && (*e == '-' || *e == '+')) e++;
    for (; digit(e, end); e++)
      if (exp < 1000000000) exp = exp * 10 + (*e - '0'); /* beyond: out of range alike */
    if (minus) exp = -exp;
  }
  exp += dropped;
  *o = '\0';
  if (exp) snprintf(o, 16, "e%d", (int)(exp > 999999999 ? 999999999 : exp < -999999999 ? -999999999 : exp));
  return digits ? s->num : NULL;
}

int64_t lm_sql_scan_int64(lm_sql_scan *s, int col) {
  if (col == s->ipk && col >= 0) return s->rowid;
  const uint8_t *v = NULL;
  uint64_t t = value(s, col, &v);
  if (t >= 1 && t <= 6) return integer_at(v, t);
  if (t == 8 || t == 9) return (int64_t)(t - 8);
  if (t == 7) {
    double d = real_at(v);
    return d != d ? 0 : d >= 9.2233720368547758e18 ? INT64_MAX : d <= -9.2233720368547758e18 ? INT64_MIN : (int64_t)d;
  }
  int negative;
  const char *x = t >= 13 && t % 2 == 1 ? number_text(s, v, t, &negative) : NULL;
  return x ? strtoll(x, NULL, 10) : 0;
}

double lm_sql_scan_double(lm_sql_scan *s, int col) {
  if (col == s->ipk && col >= 0) return (double)s->rowid;
  const uint8_t *v = NULL;
  uint64_t t = value(s, col, &v);
  if (t == 7) return real_at(v);
  if (t >= 1 && t <= 6) return (double)integer_at(v, t);
  if (t == 8 || t == 9) return (double)(t - 8);
  if (t == 0) return LM_NAN;
  int negative = 0;
  const char *x = t >= 13 && t % 2 == 1 ? number_text(s, v, t, &negative) : NULL;
  return x ? strtod(x, NULL) : negative ? -0.0 : 0.0;
}

int lm_sql_scan_is_null(const lm_sql_scan *s, int col) {
  const uint8_t *v;
  return !(col == s->ipk && col >= 0) && value(s, col, &v) == 0;
}

const char *lm_sql_scan_text(lm_sql_scan *s, int col, size_t *len) {
  const uint8_t *v = NULL;
  uint64_t t = value(s, col, &v);
  if (t >= 12) {
    *len = (size_t)serial_len(t);
    return (const char *)v;
  }
  *len = 0;
  return NULL;
}

int lm_sql_scan_column(const lm_sql_scan *s, const char *name) {
  for (int i = 0; i < s->n_names; i++)
    if (strcmp(s->names[i], name) == 0) return i;
  return -1;
}

/* The names and defaults of s's columns, freed. */
static void free_columns(lm_sql_scan *s) {
  for (int i = 0; i < s->n_names; i++) {
    lm_free(s->names[i]);
    lm_free(s->dflt[i].bytes);
  }
  lm_free(s->names);
  lm_free(s->dflt);
  s->names = NULL;
  s->dflt = NULL;
  s->n_names = 0;
}

void lm_sql_scan_free(lm_sql_scan *s) {
  if (!s) return;
  if (s->mapped) munmap((void *)s->file, s->mapped);
  if (s->sql) sqlite3_exec(s->sql->db, "COMMIT", NULL, NULL, NULL);
  free_columns(s);
  lm_free(s->buf);
  lm_free(s->type);
  lm_free(s->offset);
  lm_free(s);
}

lm_status lm_sql_scan_memory(const void *image, size_t size, const char *where, uint32_t root, int ipk,
                             lm_sql_scan **out, lm_diag *diag) {
  *out = NULL;
  const uint8_t *f = image;
  if (size < 100 || memcmp(f, "SQLite format 3", 16) != 0)
    return lm_fail(diag, LM_EPARSE, where, "not an SQLite database");
  uint32_t ps = be16(f + 16) == 1 ? 65536 : be16(f + 16);
  if (ps < 512 || (ps & (ps - 1)) != 0 || f[20] > ps - 480 || f[56 + 3] > 1 || f[56] || f[57] || f[58])
    return lm_fail(diag, LM_EPARSE, where, "an SQLite header this reader does not take (page size %u)", ps);
  lm_sql_scan *s = lm_calloc(1, sizeof *s);
  if (!s) return lm_oom(diag, where);
  s->file = f;
  s->size = size;
  s->where = where;
  s->page_size = ps;
  s->usable = ps - f[20];
  s->n_pages = (uint32_t)(size / ps > UINT32_MAX - 1 ? UINT32_MAX - 1 : size / ps);
  s->root = root;
  s->ipk = ipk;
  *out = s;
  return LM_OK;
}

/* 1 when file-suffix exists and is not empty (changes not in the file). */
static int beside(const char *file, const char *suffix) {
  char p[4096];
  struct stat st;
  if ((size_t)snprintf(p, sizeof p, "%s%s", file, suffix) >= sizeof p) return 1;
  return stat(p, &st) == 0 && st.st_size > 0;
}

/* 1 when the table's CREATE statement makes it WITHOUT ROWID (an index
 * b-tree, which this reader does not walk). */
static int without_rowid(const char *sql) {
  for (const char *p = sql; (p = strchr(p, ')')) != NULL; p++) {
    const char *q = p + 1;
    while (*q == ' ' || *q == '\n' || *q == '\t' || *q == '\r') q++;
    if (strncasecmp(q, "WITHOUT", 7) == 0) return 1;
  }
  return 0;
}

/* The value that SQLite gives a record lacking a column of declared type
 * `type` and DEFAULT expr (its text, without its parentheses): expr with
 * the column's affinity, as a row of such a table in a database in memory
 * (*mem, opened on first use) stores it. LM_ENOTFOUND when SQLite does
 * not evaluate it so. */
static lm_status default_of(sqlite3 **mem, const char *type, const char *expr, struct dflt *out, const char *where,
                            lm_diag *diag) {
  sqlite3_stmt *st = NULL;
  lm_status rc = LM_ENOTFOUND;
  char *q = sqlite3_mprintf("DROP TABLE IF EXISTS d; CREATE TABLE d(c %s DEFAULT (%s));"
                            "INSERT INTO d DEFAULT VALUES",
                            type ? type : "", expr);
  if (!q || (!*mem && sqlite3_open_v2(":memory:", mem, SQLITE_OPEN_READWRITE, NULL) != SQLITE_OK) ||
      sqlite3_exec(*mem, q, NULL, NULL, NULL) != SQLITE_OK ||
      sqlite3_prepare_v2(*mem, "SELECT c FROM d", -1, &st, NULL) != SQLITE_OK || sqlite3_step(st) != SQLITE_ROW)
    goto done;
  int t = sqlite3_column_type(st, 0);
  const void *v = t == SQLITE_TEXT ? (const void *)sqlite3_column_text(st, 0) : sqlite3_column_blob(st, 0);
  size_t n = t == SQLITE_INTEGER || t == SQLITE_FLOAT ? 8 : (size_t)sqlite3_column_bytes(st, 0);
  rc = LM_OK;
  if (t == SQLITE_NULL) goto done;
  if (!(out->bytes = lm_malloc(n ? n : 1))) {
    rc = lm_oom(diag, where);
    goto done;
  }
  if (t == SQLITE_INTEGER || t == SQLITE_FLOAT) {
    double d = sqlite3_column_double(st, 0);
    uint64_t x = (uint64_t)sqlite3_column_int64(st, 0);
    if (t == SQLITE_FLOAT) memcpy(&x, &d, sizeof x);
    for (int i = 0; i < 8; i++) out->bytes[i] = (uint8_t)(x >> (56 - 8 * i));
    out->type = t == SQLITE_INTEGER ? 6 : 7;
  } else {
    if (n) memcpy(out->bytes, v, n);
    out->type = (t == SQLITE_TEXT ? 13 : 12) + 2 * (uint64_t)n;
  }
done:
  sqlite3_finalize(st);
  sqlite3_free(q);
  return rc;
}

/* The table's root page, its columns and its rowid column, from SQLite. */
static lm_status table_info(lm_sql *sql, const char *table, uint32_t *root, lm_sql_scan *s, lm_diag *diag) {
  sqlite3_stmt *st = NULL;
  sqlite3 *mem = NULL;
  lm_status rc = LM_ENOTFOUND;
  if (sqlite3_prepare_v2(sql->db, "SELECT rootpage, sql FROM sqlite_master WHERE type = 'table' AND name = ?1", -1, &st,
                         NULL) != SQLITE_OK)
    goto done;
  sqlite3_bind_text(st, 1, table, -1, SQLITE_STATIC);
  if (sqlite3_step(st) != SQLITE_ROW) goto done;
  const char *text = (const char *)sqlite3_column_text(st, 1);
  int64_t r = sqlite3_column_int64(st, 0);
  if (r < 1 || r > UINT32_MAX || !text || without_rowid(text)) goto done;
  *root = (uint32_t)r;
  sqlite3_finalize(st);
  st = NULL;
  char q[300];
  if ((size_t)snprintf(q, sizeof q, "SELECT name, type, pk, hidden, dflt_value FROM pragma_table_xinfo('%s')",
                       table) >= sizeof q ||
      strchr(table, '\'') || sqlite3_prepare_v2(sql->db, q, -1, &st, NULL) != SQLITE_OK)
    goto done;
  int pks = 0, ipk = -1;
  while (sqlite3_step(st) == SQLITE_ROW) {
    /* Generated columns are read through SQL: records lack the virtual
     * ones, which moves every column after them. */
    if (sqlite3_column_int(st, 3) != 0) goto done;
    char **n = lm_realloc(s->names, (size_t)(s->n_names + 1) * sizeof *n);
    if (n) s->names = n;
    struct dflt *dv = n ? lm_realloc(s->dflt, (size_t)(s->n_names + 1) * sizeof *dv) : NULL;
    if (dv) s->dflt = dv;
    if (!n || !dv || !(n[s->n_names] = lm_strdup((const char *)sqlite3_column_text(st, 0)))) {
      rc = lm_oom(diag, s->where);
      goto done;
    }
    dv[s->n_names] = (struct dflt){0, NULL};
    const char *type = (const char *)sqlite3_column_text(st, 1);
    if (sqlite3_column_int(st, 2) > 0) {
      pks++;
      if (type && strcasecmp(type, "INTEGER") == 0) ipk = s->n_names;
    }
    s->n_names++;
    const char *expr = (const char *)sqlite3_column_text(st, 4);
    if (expr && (rc = default_of(&mem, type, expr, &dv[s->n_names - 1], s->where, diag)) != LM_OK) goto done;
    rc = LM_ENOTFOUND;
  }
  s->ipk = pks == 1 ? ipk : -1;
  /* INTEGER PRIMARY KEY DESC makes a column of its own, with an index,
   * not the rowid (the rowid has none). */
  if (s->ipk >= 0) {
    sqlite3_finalize(st);
    st = NULL;
    if ((size_t)snprintf(q, sizeof q, "SELECT 1 FROM pragma_index_list('%s') WHERE origin = 'pk'", table) >= sizeof q ||
        sqlite3_prepare_v2(sql->db, q, -1, &st, NULL) != SQLITE_OK)
      goto done;
    if (sqlite3_step(st) == SQLITE_ROW) s->ipk = -1;
  }
  rc = s->n_names > 0 ? LM_OK : LM_ENOTFOUND;
done:
  sqlite3_finalize(st);
  sqlite3_close(mem);
  return rc;
}

lm_status lm_sql_scan_open(lm_sql *sql, const char *table, lm_sql_scan **out, lm_diag *diag) {
  *out = NULL;
  if (sql->engine != ENGINE_SQLITE) return LM_ENOTFOUND;
  const char *file = sqlite3_db_filename(sql->db, "main");
  if (!file || !file[0] || beside(file, "-wal") || beside(file, "-journal")) return LM_ENOTFOUND;
  /* A read transaction for the scan's life: no writer changes the file. */
  int own_txn = sqlite3_get_autocommit(sql->db);
  if (own_txn && sqlite3_exec(sql->db, "BEGIN; SELECT count(*) FROM sqlite_master", NULL, NULL, NULL) != SQLITE_OK) {
    sqlite3_exec(sql->db, "ROLLBACK", NULL, NULL, NULL);
    return LM_ENOTFOUND;
  }
  lm_sql_scan tmp = {.where = sql->where};
  uint32_t root = 0;
  int fd = -1;
  void *map = MAP_FAILED;
  struct stat stt;
  lm_status st = table_info(sql, table, &root, &tmp, diag);
  if (st != LM_OK) goto done;
  st = LM_ENOTFOUND;
  if ((fd = open(file, O_RDONLY | O_CLOEXEC)) < 0 || fstat(fd, &stt) != 0 || !S_ISREG(stt.st_mode) || stt.st_size < 100)
    goto done;
  map = mmap(NULL, (size_t)stt.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
  if (map == MAP_FAILED) goto done;
  madvise(map, (size_t)stt.st_size, MADV_SEQUENTIAL);
  const uint8_t *f = map;
  if (f[18] == 2 && beside(file, "-wal")) goto done;
  if ((st = lm_sql_scan_memory(map, (size_t)stt.st_size, sql->where, root, tmp.ipk, out, diag)) != LM_OK) {
    st = LM_ENOTFOUND; /* SQLite reads what this reader does not take */
    goto done;
  }
  /* A table's b-tree (WITHOUT ROWID makes it an index's, however the
   * statement that says so is written). */
  size_t at = (size_t)(root - 1) * (*out)->page_size + (root == 1 ? 100 : 0);
  if (at >= (size_t)stt.st_size || (f[at] != 5 && f[at] != 13)) {
    lm_sql_scan_free(*out);
    *out = NULL;
    st = LM_ENOTFOUND;
    goto done;
  }
  (*out)->mapped = (size_t)stt.st_size;
  map = MAP_FAILED;
  (*out)->names = tmp.names;
  (*out)->dflt = tmp.dflt;
  (*out)->n_names = tmp.n_names;
  tmp.names = NULL;
  tmp.dflt = NULL;
  tmp.n_names = 0;
  if (own_txn) (*out)->sql = sql;
  own_txn = 0;
done:
  if (fd >= 0) close(fd);
  if (map != MAP_FAILED) munmap(map, (size_t)stt.st_size);
  free_columns(&tmp);
  if (own_txn) sqlite3_exec(sql->db, "COMMIT", NULL, NULL, NULL);
  if (st == LM_ENOTFOUND) lm_diag_clear(diag);
  return st;
}
