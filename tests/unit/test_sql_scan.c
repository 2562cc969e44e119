/* test_sql_scan.c - the page reader of SQLite tables (src/sql/scan.c)
 * against SQLite itself: every row and column of each table, read by the
 * scan, equals what SELECT * ... ORDER BY rowid gives (NULLs, integers of
 * every stored width, doubles bit for bit, text and blob bytes), over
 * b-trees with interior pages at three page sizes, overflow chains,
 * reserved bytes, columns added later and the rowid column; the scan
 * declines what it cannot read so; and a damaged image (random bytes,
 * cut short, a cycle of pages) ends the scan with an error naming a page,
 * never a read outside the image (run under ASan) nor a loop. */
#include <math.h>
#include <sqlite3.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "sql/sql.h"

static char dir[4096];

static void path_of(char *out, size_t cap, const char *name) { snprintf(out, cap, "%s/%s", dir, name); }

static void exec(sqlite3 *db, const char *sql) {
  char *err = NULL;
  if (sqlite3_exec(db, sql, NULL, NULL, &err) != SQLITE_OK) {
    fprintf(stderr, "%s: %s\n", sql, err ? err : "?");
    CHECK(0);
  }
  sqlite3_free(err);
}

/* A new database file `name` of page_size (0: SQLite's default) and
 * `reserve` bytes per page (0: none; -1 when SQLite refuses them), the
 * script run; the connection stays open for the caller. */
static sqlite3 *create(const char *name, int page_size, int *reserve, const char *script) {
  char path[4200], q[64];
  path_of(path, sizeof path, name);
  unlink(path);
  sqlite3 *db = NULL;
  if (sqlite3_open(path, &db) != SQLITE_OK) {
    CHECK(0);
    return db;
  }
  if (reserve && *reserve > 0 && sqlite3_file_control(db, "main", SQLITE_FCNTL_RESERVE_BYTES, reserve) != SQLITE_OK)
    *reserve = -1;
  if (page_size) {
    snprintf(q, sizeof q, "PRAGMA page_size = %d", page_size);
    exec(db, q);
  }
  if (script) exec(db, script);
  return db;
}

static void make(const char *name, int page_size, const char *script) {
  sqlite3_close(create(name, page_size, NULL, script));
}

static int same_bits(double a, double b) { return memcmp(&a, &b, sizeof a) == 0; }

/* One value of the current row: the scan's column c against column i of
 * SQLite's statement; 1 when they agree. */
static int same_value(lm_sql_scan *s, int c, sqlite3_stmt *st, int i) {
  int type = sqlite3_column_type(st, i), null = lm_sql_scan_is_null(s, c);
  int64_t v = lm_sql_scan_int64(s, c);
  double d = lm_sql_scan_double(s, c);
  size_t n = 99;
  const char *x = lm_sql_scan_text(s, c, &n);
  switch (type) {
  case SQLITE_NULL: return null && isnan(d) && !x && n == 0 && v == 0;
  case SQLITE_INTEGER:
  case SQLITE_FLOAT:
    return !null && !x && n == 0 && v == sqlite3_column_int64(st, i) && same_bits(d, sqlite3_column_double(st, i));
  case SQLITE_TEXT: {
    int64_t want_v = sqlite3_column_int64(st, i);
    double want_d = sqlite3_column_double(st, i);
    const unsigned char *t = sqlite3_column_text(st, i);
    size_t len = (size_t)sqlite3_column_bytes(st, i);
    return !null && x && n == len && memcmp(x, t, len) == 0 && v == want_v && same_bits(d, want_d);
  }
  default: {
    const void *b = sqlite3_column_blob(st, i);
    size_t len = (size_t)sqlite3_column_bytes(st, i);
    return !null && x && n == len && (len == 0 || memcmp(x, b, len) == 0);
  }
  }
}

/* Every row and column of `table` in file `name`, scanned, against
 * SQLite's SELECT * FROM table ORDER BY rowid: the rows compared, or -1
 * when the scan does not open (status in *why). */
static long compare(const char *name, const char *table, lm_status *why) {
  char path[4200], q[256];
  path_of(path, sizeof path, name);
  lm_sql *sql = NULL;
  lm_sql_scan *s = NULL;
  sqlite3 *db = NULL;
  sqlite3_stmt *st = NULL;
  lm_diag d;
  long rows = -1, bad = 0;
  lm_status rc = lm_sql_open(path, LM_DB_READ, &sql, &d);
  CHECK(rc == LM_OK);
  if (rc != LM_OK) goto done;
  if ((rc = lm_sql_scan_open(sql, table, &s, &d)) != LM_OK) {
    CHECK(s == NULL);
    goto done;
  }
  snprintf(q, sizeof q, "SELECT * FROM \"%s\" ORDER BY rowid", table);
  CHECK(sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK);
  CHECK(sqlite3_prepare_v2(db, q, -1, &st, NULL) == SQLITE_OK);
  int n_cols = sqlite3_column_count(st);
  for (int i = 0; i < n_cols; i++) CHECK(lm_sql_scan_column(s, sqlite3_column_name(st, i)) == i);
  rows = 0;
  for (;;) {
    int want = sqlite3_step(st) == SQLITE_ROW, got = lm_sql_scan_next(s, &d);
    if (got < 0) fprintf(stderr, "%s: %s: %s\n", name, d.file, d.message);
    CHECK(got == want);
    if (got != want || !want) break;
    for (int i = 0; i < n_cols; i++)
      if (!same_value(s, i, st, i) && bad++ < 5)
        fprintf(stderr, "%s.%s row %ld column %s (type %d) differs\n", name, table, rows, sqlite3_column_name(st, i),
                sqlite3_column_type(st, i));
    rows++;
  }
  CHECK(bad == 0);
done:
  if (why) *why = rc;
  sqlite3_finalize(st);
  sqlite3_close(db);
  lm_sql_scan_free(s);
  lm_sql_close(sql);
  return rows;
}

/* ------------------------------------------------------------ values */

static const int64_t widths[] = {0, 1, 127, -128, 32767, -32768, (INT64_C(1) << 23) - 1, -(INT64_C(1) << 23),
                                 INT32_MAX, INT32_MIN, (INT64_C(1) << 47) - 1, -(INT64_C(1) << 47), INT64_MAX,
                                 INT64_MIN, 128, -129, 32768, -32769, INT64_C(1) << 23, INT64_C(1) << 31,
                                 INT64_C(1) << 47, -(INT64_C(1) << 47) - 1, -1, 2};

/* Integers of every stored width, reals (those SQLite keeps as integers
 * in a REAL column too), text, blobs and NULLs, in typed and untyped
 * columns. */
static void test_values(void) {
  sqlite3 *db = create("values.db", 0, NULL, "CREATE TABLE t(i INTEGER, r REAL, x TEXT, b BLOB, a, n NUMERIC)");
  sqlite3_stmt *st = NULL;
  CHECK(sqlite3_prepare_v2(db, "INSERT INTO t VALUES (?, ?, ?, ?, ?, ?)", -1, &st, NULL) == SQLITE_OK);
  static const double reals[] = {3.0, 0.0, -0.0, -1.0, 0.1, -2.5, 1e308, -1e-308, 5e-324, 9007199254740992.0,
                                 1e19, -1e19, 123456789.0, 0.5, HUGE_VAL, -HUGE_VAL};
  static const char *texts[] = {"", "abc", "h\xc3\xa9llo w\xc3\xb6rld \xe2\x9c\x93 \xf0\x9f\x98\x80", "42", " -17 ",
                                "3.25", "1e3", "9223372036854775808", "-12abc", "\xe6\x97\xa5\xe6\x9c\xac"};
  static const unsigned char blob[300] = {0, 255, 1, 2, 3};
  size_t n_w = sizeof widths / sizeof *widths, n_r = sizeof reals / sizeof *reals, n_t = sizeof texts / sizeof *texts;
  for (size_t k = 0; k < n_w + n_r + n_t; k++) {
    if (k < n_w) sqlite3_bind_int64(st, 1, widths[k]);
    if (k < n_w) sqlite3_bind_int64(st, 2, widths[k]);
    if (k < n_r) sqlite3_bind_double(st, 2, reals[k]);
    if (k < n_r) sqlite3_bind_double(st, 5, reals[k]);
    if (k < n_t) sqlite3_bind_text(st, 3, texts[k], -1, SQLITE_STATIC);
    if (k >= n_w && k - n_w < n_t) sqlite3_bind_text(st, 1, texts[k - n_w], -1, SQLITE_STATIC);
    if (k % 3 == 0) sqlite3_bind_blob(st, 4, blob, (int)(k % sizeof blob), SQLITE_STATIC);
    if (k % 3 == 1) sqlite3_bind_zeroblob(st, 4, 0);
    if (k >= n_r && k - n_r < n_w) sqlite3_bind_int64(st, 5, widths[k - n_r]);
    if (k % 4 == 0) sqlite3_bind_text(st, 6, k % 8 ? "17" : "2.5", -1, SQLITE_STATIC);
    if (k % 4 == 1) sqlite3_bind_double(st, 6, (double)k);
    CHECK(sqlite3_step(st) == SQLITE_DONE);
    sqlite3_reset(st);
    sqlite3_clear_bindings(st);
  }
  exec(db, "INSERT INTO t DEFAULT VALUES");
  sqlite3_finalize(st);
  sqlite3_close(db);
  long rows = compare("values.db", "t", NULL);
  CHECK(rows == (long)(n_w + n_r + n_t) + 1);
}

/* Text read as a number, as SQLite's column functions read it: leading
 * spaces, a sign, digits, a point, an exponent, and nothing else (no
 * hexadecimal, no infinity or NaN spelled out), however long the text. */
static void test_text_numbers(void) {
  static const char *texts[] = {
      "0x10", "-0x10", "0X1p3", "inf", "-inf", "nan", "-nan", "infinity", "  12", "\t12", "\n12", "\v12", "\f12",
      "\r12", "1.5e400", "-1.5e400", ".5", "5.", "+7", "1,5", "12e", "12e+", "12e-3", "0.1e-400", "1e-320", "-0",
      "-", "", ".", "-.5", "1e5x", "9223372036854775807", "-9223372036854775808", "-9223372036854775809",
      "18446744073709551616", "12345678901234567890123", "0.30000000000000004441",
      "000000000000000000000000000000000000000000000000000000000000000000000000000000123",
      "1.00000000000000000000000000000000000000000000000000000000000000000000000000000e5",
      "-00000000000000000000000000000000000000000000000000000000000000000000000000000.25e2",
      "123456789012345678901234567890123456789012345678901234567890123456789012345678.5e-10",
      "1e0000000000000000000000000000005", "1e-99999999999999", "1e99999999999999", "7E2", "7e+2x"};
  sqlite3 *db = create("numbers.db", 0, NULL, "CREATE TABLE t(x TEXT)");
  sqlite3_stmt *st = NULL;
  CHECK(sqlite3_prepare_v2(db, "INSERT INTO t VALUES (?)", -1, &st, NULL) == SQLITE_OK);
  size_t n = sizeof texts / sizeof *texts;
  for (size_t k = 0; k < n; k++) {
    sqlite3_bind_text(st, 1, texts[k], -1, SQLITE_STATIC);
    CHECK(sqlite3_step(st) == SQLITE_DONE);
    sqlite3_reset(st);
  }
  sqlite3_finalize(st);
  sqlite3_close(db);
  CHECK(compare("numbers.db", "t", NULL) == (long)n);
}

/* The rowid column (INTEGER PRIMARY KEY): its value is the rowid, never
 * NULL; a table without one, a table with rowids out of insertion order. */
static void test_rowid(void) {
  char script[8192];
  int at = snprintf(script, sizeof script,
                    "CREATE TABLE p(v TEXT, id INTEGER PRIMARY KEY, w REAL);"
                    "CREATE TABLE q(id INT PRIMARY KEY, v);"
                    "CREATE TABLE r(a, b);"
                    "CREATE TABLE z(a, b);"
                    "INSERT INTO r VALUES (1, 'one'), (NULL, NULL);");
  for (size_t k = 0; k < sizeof widths / sizeof *widths; k++)
    at += snprintf(script + at, sizeof script - (size_t)at,
                   "INSERT INTO p VALUES ('v%zu', %lld, 0.5); INSERT INTO q VALUES (%lld, %zu);", k,
                   (long long)widths[k], (long long)widths[k], k);
  CHECK(at < (int)sizeof script);
  make("rowid.db", 0, script);
  CHECK(compare("rowid.db", "p", NULL) == (long)(sizeof widths / sizeof *widths));
  CHECK(compare("rowid.db", "q", NULL) == (long)(sizeof widths / sizeof *widths));
  CHECK(compare("rowid.db", "r", NULL) == 2);
  CHECK(compare("rowid.db", "z", NULL) == 0); /* empty: its root a leaf without cells */
  /* INTEGER PRIMARY KEY DESC is a column of its own beside the rowid
   * (SQLite's quirk); PRIMARY KEY (id DESC) is the rowid. */
  make("desc.db", 0,
       "CREATE TABLE d(id INTEGER PRIMARY KEY DESC, x);"
       "CREATE TABLE e(id INTEGER, x, PRIMARY KEY (id DESC));"
       "INSERT INTO d VALUES (5, 'a'), (-3, 'b'), (70000, NULL);"
       "INSERT INTO e VALUES (5, 'a'), (-3, 'b'), (70000, NULL);");
  CHECK(compare("desc.db", "d", NULL) == 3);
  CHECK(compare("desc.db", "e", NULL) == 3);
}

/* ------------------------------------------------------------- b-trees */

/* `rows` rows of table t in one transaction: an integer of varied width,
 * a real, text of varied length (sometimes NULL). */
static void fill(const char *name, int page_size, long rows) {
  sqlite3 *db = create(name, page_size, NULL, "CREATE TABLE t(id INTEGER PRIMARY KEY, a INTEGER, r REAL, s TEXT)");
  sqlite3_stmt *st = NULL;
  exec(db, "BEGIN");
  CHECK(sqlite3_prepare_v2(db, "INSERT INTO t(a, r, s) VALUES (?, ?, ?)", -1, &st, NULL) == SQLITE_OK);
  uint64_t x = 88172645463325252u;
  char text[64];
  for (long i = 0; i < rows; i++) {
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    sqlite3_bind_int64(st, 1, (int64_t)(x >> (x % 63 + 1)) * (i % 2 ? 1 : -1));
    sqlite3_bind_double(st, 2, (double)(x % 100000) / 7.0);
    if (i % 10 != 9) {
      snprintf(text, sizeof text, "row %ld %.*s", i, (int)(x % 40), "abcdefghijklmnopqrstuvwxyz0123456789ABCD");
      sqlite3_bind_text(st, 3, text, -1, SQLITE_TRANSIENT);
    }
    CHECK(sqlite3_step(st) == SQLITE_DONE);
    sqlite3_reset(st);
    sqlite3_clear_bindings(st);
  }
  exec(db, "COMMIT");
  sqlite3_finalize(st);
  sqlite3_close(db);
}

/* The b-tree type of table t's root page in file name (5: interior). */
static int root_type(const char *name, uint32_t *root) {
  char path[4200];
  path_of(path, sizeof path, name);
  sqlite3 *db = NULL;
  sqlite3_stmt *st = NULL;
  int type = -1;
  sqlite3_open(path, &db);
  if (sqlite3_prepare_v2(db, "SELECT rootpage FROM sqlite_master WHERE name = 't'", -1, &st, NULL) == SQLITE_OK &&
      sqlite3_step(st) == SQLITE_ROW) {
    *root = (uint32_t)sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    st = NULL;
    FILE *f = fopen(path, "rb");
    unsigned char b[2] = {0};
    if (f && fseek(f, 16, SEEK_SET) == 0 && fread(b, 1, 2, f) == 2) {
      long ps = b[0] << 8 | b[1];
      if (ps == 1) ps = 65536;
      long at = (*root - 1) * ps + (*root == 1 ? 100 : 0);
      if (fseek(f, at, SEEK_SET) == 0 && fread(b, 1, 1, f) == 1) type = b[0];
    }
    if (f) fclose(f);
  }
  sqlite3_finalize(st);
  sqlite3_close(db);
  return type;
}

/* 50,000 rows: interior pages at page sizes 512, 4096 (the default) and
 * 65536. */
static void test_btree(void) {
  static const int sizes[] = {512, 0, 65536};
  static const char *names[] = {"big512.db", "big4096.db", "big65536.db"};
  for (int k = 0; k < 3; k++) {
    fill(names[k], sizes[k], 50000);
    uint32_t root = 0;
    CHECK(root_type(names[k], &root) == 5);
    CHECK(compare(names[k], "t", NULL) == 50000);
  }
}

/* Rows larger than a page (page size 1024): text and blobs of every
 * length around the largest kept on the page, of 10 KB and 200 KB, each
 * followed by another column; with and without reserved bytes per page. */
static void overflow(const char *name, int reserve) {
  int r = reserve;
  sqlite3 *db = create(name, 1024, &r, "CREATE TABLE t(a INTEGER, big, after TEXT, n)");
  if (r < 0) {
    printf("skipped: this SQLite does not reserve %d bytes per page\n", reserve);
    sqlite3_close(db);
    return;
  }
  static const size_t lens[] = {10 * 1024, 200 * 1024, 0, 1, 100};
  unsigned char *big = malloc(200 * 1024 + 1);
  CHECK(big != NULL);
  if (!big) return;
  for (size_t i = 0; i <= 200 * 1024; i++) big[i] = (unsigned char)('a' + (i * 7 + i / 251) % 26);
  sqlite3_stmt *st = NULL;
  exec(db, "BEGIN");
  CHECK(sqlite3_prepare_v2(db, "INSERT INTO t VALUES (?, ?, ?, ?)", -1, &st, NULL) == SQLITE_OK);
  long n = 0;
  for (size_t len = 700; len < 4200; len += len < 1100 ? 1 : 37, n++) {
    sqlite3_bind_int64(st, 1, (int64_t)len);
    if (len % 2) sqlite3_bind_text(st, 2, (const char *)big, (int)len, SQLITE_STATIC);
    else sqlite3_bind_blob(st, 2, big, (int)len, SQLITE_STATIC);
    sqlite3_bind_text(st, 3, "after", -1, SQLITE_STATIC);
    sqlite3_bind_int64(st, 4, -(int64_t)len);
    CHECK(sqlite3_step(st) == SQLITE_DONE);
    sqlite3_reset(st);
  }
  for (size_t k = 0; k < 2 * sizeof lens / sizeof *lens; k++, n++) {
    size_t len = lens[k / 2];
    sqlite3_bind_int64(st, 1, (int64_t)k);
    if (k % 2) sqlite3_bind_text(st, 2, (const char *)big, (int)len, SQLITE_STATIC);
    else sqlite3_bind_blob(st, 2, big, (int)len, SQLITE_STATIC);
    sqlite3_bind_text(st, 3, (const char *)big + 3, (int)(len / 3 % 3000), SQLITE_STATIC);
    sqlite3_bind_double(st, 4, (double)k / 3.0);
    CHECK(sqlite3_step(st) == SQLITE_DONE);
    sqlite3_reset(st);
  }
  exec(db, "COMMIT");
  sqlite3_finalize(st);
  sqlite3_close(db);
  free(big);
  char path[4200];
  path_of(path, sizeof path, name);
  FILE *f = fopen(path, "rb");
  unsigned char hdr[21] = {0};
  CHECK(f && fread(hdr, 1, sizeof hdr, f) == sizeof hdr && hdr[20] == (unsigned char)reserve);
  if (f) fclose(f);
  CHECK(compare(name, "t", NULL) == n);
}

static void test_overflow(void) {
  overflow("overflow.db", 0);
  overflow("reserved.db", 32);
  overflow("reserved200.db", 200);
}

/* A column added after rows exist: the old rows read NULL there. */
static void test_added_column(void) {
  make("added.db", 512,
       "CREATE TABLE t(a INTEGER, b TEXT);"
       "INSERT INTO t VALUES (1, 'x'), (2, NULL);"
       "ALTER TABLE t ADD COLUMN c REAL;"
       "ALTER TABLE t ADD COLUMN d TEXT;"
       "INSERT INTO t VALUES (3, 'y', 2.5, 'new'), (4, 'z', NULL, NULL);"
       "UPDATE t SET b = 'w' WHERE a = 2;");
  CHECK(compare("added.db", "t", NULL) == 4);
  /* With a DEFAULT, the old rows read it, with the column's affinity. */
  make("defaults.db", 512,
       "CREATE TABLE t(a INTEGER, b TEXT);"
       "INSERT INTO t VALUES (1, 'x'), (2, NULL);"
       "ALTER TABLE t ADD COLUMN c DEFAULT 7;"
       "ALTER TABLE t ADD COLUMN d TEXT DEFAULT 'hi';"
       "ALTER TABLE t ADD COLUMN e REAL DEFAULT -2.5;"
       "ALTER TABLE t ADD COLUMN f BLOB DEFAULT x'0102';"
       "ALTER TABLE t ADD COLUMN g DEFAULT NULL;"
       "ALTER TABLE t ADD COLUMN h DEFAULT TRUE;"
       "ALTER TABLE t ADD COLUMN i REAL DEFAULT 3;"
       "ALTER TABLE t ADD COLUMN j INTEGER DEFAULT '12';"
       "ALTER TABLE t ADD COLUMN k TEXT DEFAULT 4.5;"
       "ALTER TABLE t ADD COLUMN l JSONB DEFAULT '{}';"
       "ALTER TABLE t ADD COLUMN m NUMERIC DEFAULT '3.0';"
       "ALTER TABLE t ADD COLUMN n TEXT DEFAULT '';"
       "INSERT INTO t VALUES (3, 'y', 1, 'a', 1.5, x'00', 4, 5, 6.5, 7, 'k', '[]', 8, 'n');"
       "INSERT INTO t(a) VALUES (4);"
       "CREATE TABLE u(a DEFAULT (1 + 1), b DEFAULT CURRENT_TIMESTAMP, c TEXT DEFAULT 'it''s', d DEFAULT (abs(-3)),"
       " e VARCHAR(10) DEFAULT +5);"
       "INSERT INTO u DEFAULT VALUES; INSERT INTO u VALUES (1, 2, 3, 4, 5);");
  CHECK(compare("defaults.db", "t", NULL) == 4);
  CHECK(compare("defaults.db", "u", NULL) == 2);
}

/* Column names: each at its place, -1 for one not there. */
static void test_columns(void) {
  char path[4200];
  path_of(path, sizeof path, "values.db");
  lm_sql *sql = NULL;
  lm_sql_scan *s = NULL;
  lm_diag d;
  CHECK(lm_sql_open(path, LM_DB_READ, &sql, &d) == LM_OK);
  CHECK(lm_sql_scan_open(sql, "t", &s, &d) == LM_OK);
  if (s) {
    static const char *names[] = {"i", "r", "x", "b", "a", "n"};
    for (int i = 0; i < 6; i++) CHECK(lm_sql_scan_column(s, names[i]) == i);
    CHECK(lm_sql_scan_column(s, "nope") == -1);
    CHECK(lm_sql_scan_column(s, "") == -1);
    /* Before the first row and past the columns: NULL. */
    CHECK(lm_sql_scan_is_null(s, 0) && lm_sql_scan_is_null(s, 99) && lm_sql_scan_is_null(s, -1));
    CHECK(lm_sql_scan_next(s, &d) == 1);
    size_t n = 1;
    CHECK(lm_sql_scan_is_null(s, 6) && isnan(lm_sql_scan_double(s, -1)) && !lm_sql_scan_text(s, 7, &n) && n == 0);
  }
  lm_sql_scan_free(s);
  lm_sql_close(sql);
  /* Opened immutable (a file nobody writes), the same rows. */
  s = NULL;
  CHECK(lm_sql_open(path, LM_DB_READ_FIXED, &sql, &d) == LM_OK);
  CHECK(lm_sql_scan_open(sql, "t", &s, &d) == LM_OK);
  long rows = 0;
  while (s && lm_sql_scan_next(s, &d) == 1) rows++;
  CHECK(rows == 51);
  lm_sql_scan_free(s);
  lm_sql_close(sql);
}

/* ------------------------------------------------------------ declines */

/* lm_sql_scan_open on sql's table: LM_ENOTFOUND, no scan, no message. */
static void declines(lm_sql *sql, const char *table) {
  lm_sql_scan *s = (lm_sql_scan *)&s;
  lm_diag d;
  lm_status rc = lm_sql_scan_open(sql, table, &s, &d);
  if (rc != LM_ENOTFOUND) fprintf(stderr, "table %s: status %d, not LM_ENOTFOUND\n", table, (int)rc);
  CHECK(rc == LM_ENOTFOUND && s == NULL);
  lm_sql_scan_free(rc == LM_OK ? s : NULL);
}

/* What the scan does not read (the caller reads it through SQL): no
 * such table, a view, WITHOUT ROWID, a virtual table, text in UTF-16, a
 * write-ahead log with frames not yet in the file, a database in memory
 * or in a temporary file. */
static void test_declines(void) {
  make("declines.db", 512,
       "CREATE TABLE t(a INTEGER PRIMARY KEY, b);"
       "INSERT INTO t VALUES (1, 'x');"
       "CREATE VIEW v AS SELECT * FROM t;"
       "CREATE TABLE w(a INTEGER PRIMARY KEY, b) WITHOUT ROWID;"
       "CREATE TABLE w2(a TEXT PRIMARY KEY, b)\nWITHOUT\tROWID;"
       "CREATE TABLE w3(a INTEGER PRIMARY KEY, b INTEGER) STRICT, WITHOUT ROWID;"
       "CREATE TABLE w4(a TEXT PRIMARY KEY, b) /* keyed */ WITHOUT ROWID;"
       "INSERT INTO w VALUES (1, 2); INSERT INTO w2 VALUES ('k', 2);"
       "INSERT INTO w3 VALUES (1, 2); INSERT INTO w4 VALUES ('k', 2);"
       "CREATE VIRTUAL TABLE e USING rtree(id, a, b);");
  make("utf16.db", 512, "PRAGMA encoding = 'UTF-16le'; CREATE TABLE t(a, b); INSERT INTO t VALUES (1, 'x');");
  char path[4200];
  lm_sql *sql = NULL;
  lm_diag d;
  path_of(path, sizeof path, "declines.db");
  CHECK(lm_sql_open(path, LM_DB_READ, &sql, &d) == LM_OK);
  if (sql) {
    static const char *tables[] = {"nope", "v", "w", "w2", "w3", "w4", "e", "sqlite_autoindex_w2_1", "", "x'y"};
    for (size_t i = 0; i < sizeof tables / sizeof *tables; i++) declines(sql, tables[i]);
  }
  lm_sql_close(sql);
  CHECK(compare("declines.db", "t", NULL) == 1);
  lm_status why = LM_OK;
  CHECK(compare("utf16.db", "t", &why) == -1 && why == LM_ENOTFOUND);
  /* Generated columns: a stored one lies in the record, a virtual one
   * does not; SQLite's table_info names neither. Read right, or declined. */
  make("generated.db", 512,
       "CREATE TABLE g(a, b AS (a * 2) STORED, c, v AS (a + 1) VIRTUAL, e);"
       "INSERT INTO g(a, c, e) VALUES (1, 'c1', 'e1'), (2, 'c2', 'e2');");
  long n = compare("generated.db", "g", &why);
  CHECK(n == 2 || (n == -1 && why == LM_ENOTFOUND));

  /* A writer holding frames in the write-ahead log. */
  sqlite3 *w = create("wal.db", 512, NULL,
                      "PRAGMA journal_mode = WAL; PRAGMA wal_autocheckpoint = 0;"
                      "CREATE TABLE t(a, b); INSERT INTO t VALUES (1, 'x'), (2, 'y');");
  struct stat st;
  char wal[4300];
  path_of(path, sizeof path, "wal.db");
  snprintf(wal, sizeof wal, "%s-wal", path);
  CHECK(stat(wal, &st) == 0 && st.st_size > 0);
  why = LM_OK;
  CHECK(compare("wal.db", "t", &why) == -1 && why == LM_ENOTFOUND);
  sqlite3_close(w); /* the last connection checkpoints and removes the log */
  CHECK(stat(wal, &st) != 0);
  CHECK(compare("wal.db", "t", NULL) == 2);

  /* In memory, and in a temporary file: no file to map. */
  static const char *names[] = {":memory:", ""};
  for (int i = 0; i < 2; i++) {
    sqlite3 *db = NULL;
    CHECK(sqlite3_open(names[i], &db) == SQLITE_OK);
    exec(db, "CREATE TABLE t(a, b); INSERT INTO t VALUES (1, 2);");
    lm_sql *m = lm_sql_wrap_sqlite(db);
    CHECK(m != NULL);
    if (m) declines(m, "t");
    lm_sql_close(m);
    sqlite3_close(db);
  }
}

/* The scan holds a read transaction while open (a writer's commit waits)
 * and ends it when freed; one the caller holds stays the caller's. */
static void test_transaction(void) {
  char path[4200];
  path_of(path, sizeof path, "txn.db");
  make("txn.db", 0, "CREATE TABLE t(a); INSERT INTO t VALUES (1), (2);");
  sqlite3 *db = NULL, *writer = NULL;
  CHECK(sqlite3_open(path, &db) == SQLITE_OK && sqlite3_open(path, &writer) == SQLITE_OK);
  lm_sql *sql = lm_sql_wrap_sqlite(db);
  lm_sql_scan *s = NULL;
  lm_diag d;
  CHECK(lm_sql_scan_open(sql, "t", &s, &d) == LM_OK);
  CHECK(lm_sql_scan_next(s, &d) == 1 && lm_sql_scan_int64(s, 0) == 1);
  CHECK(sqlite3_exec(writer, "INSERT INTO t VALUES (3)", NULL, NULL, NULL) == SQLITE_BUSY);
  CHECK(lm_sql_scan_next(s, &d) == 1 && lm_sql_scan_int64(s, 0) == 2 && lm_sql_scan_next(s, &d) == 0);
  lm_sql_scan_free(s);
  s = NULL;
  CHECK(sqlite3_get_autocommit(db));
  CHECK(sqlite3_exec(writer, "INSERT INTO t VALUES (3)", NULL, NULL, NULL) == SQLITE_OK);
  exec(db, "BEGIN");
  CHECK(lm_sql_scan_open(sql, "t", &s, &d) == LM_OK);
  lm_sql_scan_free(s);
  CHECK(!sqlite3_get_autocommit(db));
  exec(db, "COMMIT");
  lm_sql_close(sql);
  sqlite3_close(db);
  sqlite3_close(writer);
}

/* -------------------------------------------------------------- damage */

static unsigned char *slurp(const char *name, size_t *size) {
  char path[4200];
  path_of(path, sizeof path, name);
  FILE *f = fopen(path, "rb");
  unsigned char *p = NULL;
  long n = -1;
  if (f && fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) > 0 && fseek(f, 0, SEEK_SET) == 0 &&
      (p = malloc((size_t)n)) != NULL && fread(p, 1, (size_t)n, f) != (size_t)n) {
    free(p);
    p = NULL;
  }
  if (f) fclose(f);
  *size = p ? (size_t)n : 0;
  CHECK(p != NULL);
  return p;
}

static volatile uint64_t sink;

/* A scan of image (exactly size bytes) from root to its end, reading
 * every column with every accessor: 1 when it ends, -1 when it stops
 * with a diagnostic naming a page, -2 when the image is refused. */
static int scan_image(const unsigned char *image, size_t size, uint32_t root, int ipk, long *rows) {
  lm_sql_scan *s = NULL;
  lm_diag d;
  memset(&d, 0, sizeof d);
  if (lm_sql_scan_memory(image, size, "image", root, ipk, &s, &d) != LM_OK) {
    CHECK(s == NULL && d.message[0]);
    return -2;
  }
  int r;
  *rows = 0;
  while ((r = lm_sql_scan_next(s, &d)) == 1) {
    for (int c = 0; c < 4; c++) {
      size_t n = 0;
      const char *x = lm_sql_scan_text(s, c, &n);
      uint64_t sum = (uint64_t)lm_sql_scan_is_null(s, c);
      for (size_t i = 0; x && i < n; i++) sum += (unsigned char)x[i];
      if (!x) { /* text as a number reads no other bytes, and costs */
        double v = lm_sql_scan_double(s, c);
        sum += (uint64_t)lm_sql_scan_int64(s, c) + (v == v);
      }
      sink += sum;
    }
    ++*rows;
  }
  lm_sql_scan_free(s);
  if (r == 0) return 1;
  int names_page = strstr(d.message, "page ") != NULL && strcmp(d.file, "image") == 0;
  if (r != -1 || !names_page) fprintf(stderr, "a damaged image: %d, %s: %s\n", r, d.file, d.message);
  CHECK(r == -1 && names_page);
  return -1;
}

static uint64_t rng = 0x9e3779b97f4a7c15u;
static uint64_t next_rand(void) {
  rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
  return rng;
}

/* The 50,000 rows at page size 512, damaged: single bytes and runs of
 * bytes changed at random (a quarter on interior pages, a quarter in
 * page headers and cell pointers), cut at page boundaries and at random
 * offsets. Each copy is exactly its size, so that ASan sees any read
 * past it. */
static void test_damage(void) {
  size_t size = 0;
  unsigned char *orig = slurp("big512.db", &size), *img = malloc(size ? size : 1);
  uint32_t root = 0;
  CHECK(root_type("big512.db", &root) == 5);
  if (!orig || !img) goto done;
  memcpy(img, orig, size);
  long rows = 0;
  CHECK(scan_image(img, size, root, 0, &rows) == 1 && rows == 50000);
  size_t ps = 512, n_pages = size / ps, n_interior = 0;
  uint32_t interior[256];
  for (size_t p = 1; p < n_pages && n_interior < 256; p++)
    if (orig[p * ps] == 5) interior[n_interior++] = (uint32_t)p + 1;
  CHECK(n_interior > 1);
  long outcome[3] = {0, 0, 0}; /* ended, stopped, refused */
  for (int k = 0; k < 2000; k++) {
    size_t page = next_rand() % n_pages, at, len = k % 2 ? 1 : 2 + next_rand() % 15;
    if (k % 4 == 1 && n_interior) page = interior[next_rand() % n_interior] - 1;
    at = page * ps + (k % 4 == 2 ? next_rand() % 48 : next_rand() % ps);
    if (k % 16 == 15) at = next_rand() % size;
    if (at + len > size) len = size - at;
    for (size_t i = 0; i < len; i++) img[at + i] = (unsigned char)(k % 8 == 6 ? 0xff : next_rand());
    int r = scan_image(img, size, root, k % 3 ? 0 : -1, &rows);
    outcome[r == 1 ? 0 : r == -1 ? 1 : 2]++;
    memcpy(img + at, orig + at, len);
  }
  for (int k = 0; k < 200; k++) {
    size_t cut = k % 2 ? (next_rand() % (n_pages + 1)) * ps : next_rand() % size;
    unsigned char *part = malloc(cut ? cut : 1);
    if (!part) break;
    memcpy(part, orig, cut);
    int r = scan_image(part, cut, root, 0, &rows);
    CHECK(r != 1 || rows == 50000);
    outcome[r < 0 ? -r : 0]++;
    free(part);
  }
  printf("damaged images: %ld read to the end, %ld stopped at a page, %ld refused\n", outcome[0], outcome[1],
         outcome[2]);
done:
  free(orig);
  free(img);
}

/* Interior pages that point back: to themselves, to their parent, and a
 * leaf's overflow chain that points to itself. The scan stops, or ends,
 * and never loops. */
static void test_cycles(void) {
  fill("cycle.db", 512, 5000);
  size_t size = 0, ps = 512;
  uint32_t root = 0;
  CHECK(root_type("cycle.db", &root) == 5);
  unsigned char *orig = slurp("cycle.db", &size), *img = malloc(size ? size : 1);
  long rows = 0;
  if (!orig || !img || root < 2) goto done;
  unsigned char *r = orig + (root - 1) * ps;
  uint32_t child = (uint32_t)r[8] << 24 | (uint32_t)r[9] << 16 | (uint32_t)r[10] << 8 | r[11];
  /* root's right child is root */
  memcpy(img, orig, size);
  unsigned char *ri = img + (root - 1) * ps;
  ri[8] = (unsigned char)(root >> 24), ri[9] = (unsigned char)(root >> 16), ri[10] = (unsigned char)(root >> 8);
  ri[11] = (unsigned char)root;
  CHECK(scan_image(img, size, root, 0, &rows) == -1);
  /* root's right child is interior and points to root */
  memcpy(img, orig, size);
  unsigned char *c = img + (child - 1) * ps;
  CHECK(c[0] == 5);
  c[8] = (unsigned char)(root >> 24), c[9] = (unsigned char)(root >> 16), c[10] = (unsigned char)(root >> 8);
  c[11] = (unsigned char)root;
  CHECK(scan_image(img, size, root, 0, &rows) == -1);
  /* every child of root is root's right child: each page entered more
   * than once, the file's page count reached */
  memcpy(img, orig, size);
  unsigned n_cells = (unsigned)ri[3] << 8 | ri[4];
  for (unsigned i = 0; i < n_cells; i++) {
    size_t off = (size_t)ri[12 + 2 * i] << 8 | ri[13 + 2 * i];
    memcpy(ri + off, ri + 8, 4);
  }
  int got = scan_image(img, size, root, 0, &rows);
  CHECK(got == -1 || (got == 1 && rows <= 5000 * (long)(n_cells + 1)));
done:
  free(orig);
  free(img);
  /* an overflow page whose next page is itself */
  make("chain.db", 1024, "CREATE TABLE t(a, b); INSERT INTO t VALUES (1, zeroblob(20000)), (2, 'x');");
  orig = slurp("chain.db", &size);
  CHECK(root_type("chain.db", &root) == 13);
  if (!orig) return;
  ps = 1024;
  for (size_t p = 2; p < size / ps; p++) /* an overflow page: not a b-tree page's first byte, not the root */
    if (p + 1 != root && orig[p * ps] == 0 && orig[p * ps + 1] == 0) {
      unsigned char *o = orig + p * ps;
      o[0] = (unsigned char)((p + 1) >> 24), o[1] = (unsigned char)((p + 1) >> 16);
      o[2] = (unsigned char)((p + 1) >> 8), o[3] = (unsigned char)(p + 1);
      break;
    }
  got = scan_image(orig, size, root, -1, &rows);
  CHECK(got == -1 || (got == 1 && rows == 2));
  free(orig);
}

/* Removes the files of a finished run. */
static void clean(void) {
  static const char *names[] = {"values.db", "rowid.db", "big512.db", "big4096.db", "big65536.db", "overflow.db",
                                "reserved.db", "reserved200.db", "added.db", "defaults.db", "declines.db", "desc.db",
                                "generated.db", "numbers.db", "utf16.db", "wal.db", "txn.db", "cycle.db", "chain.db"};
  char path[4200];
  for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
    path_of(path, sizeof path, names[i]);
    unlink(path);
    strcat(path, "-wal");
    unlink(path);
    path[strlen(path) - 4] = '\0';
    strcat(path, "-shm");
    unlink(path);
    path[strlen(path) - 4] = '\0';
    strcat(path, "-journal");
    unlink(path);
  }
  CHECK(rmdir(dir) == 0);
}


int main(void) {
  const char *tmp = getenv("TMPDIR");
  snprintf(dir, sizeof dir, "%s/lumen-scan-XXXXXX", tmp && tmp[0] ? tmp : "/tmp");
  if (!mkdtemp(dir)) {
    perror(dir);
    return 1;
  }
  test_values();
  test_text_numbers();
  test_rowid();
  test_btree();
  test_overflow();
  test_added_column();
  test_columns();
  test_declines();
  test_transaction();
  test_damage();
  test_cycles();
  clean();
  return check_report("test_sql_scan");
}
