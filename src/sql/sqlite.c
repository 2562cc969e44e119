/*
 * sqlite.c - the SQLite engine of sql.h: a file opened in the mode asked
 * (read-only, immutable when nothing beside it may change it), checked
 * before it is trusted: no FIFO in its place, not cut short, a hot
 * journal rolled back where this process may. SQLite is called directly.
 */
#include <ctype.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sql/sql_private.h"

/* SQLite opens its files with blocking calls: a FIFO named as the store
 * (or as its journal, write-ahead log or shared-memory file) would hang
 * the command. Each must be a regular file or absent; what else is there
 * is named (lm_path_kind opens nothing). */
static lm_status files_regular(const char *url, lm_diag *diag) {
  static const char *const suffixes[] = {"", "-journal", "-wal", "-shm"};
  for (size_t i = 0; i < sizeof suffixes / sizeof *suffixes; i++) {
    char path[4200];
    if ((size_t)snprintf(path, sizeof path, "%s%s", url, suffixes[i]) >= sizeof path)
      return lm_fail(diag, LM_EINVAL, url, "the database path is too long");
    lm_diag why;
    lm_diag_clear(&why);
    lm_status st = lm_path_kind(path, 0, &why);
    if (st == LM_OK || st == LM_ENOTFOUND) continue;
    if (diag) *diag = why;
    return st;
  }
  return LM_OK;
}

/* Whether an SQLite file is shorter than its header says: a copy or a
 * download cut short. The header (the first 100 bytes) gives the page
 * size (offset 16, big-endian; 1 means 65536) and the page count (offset
 * 28), valid when the number at 92 equals the change counter at 24. */
static int sqlite_truncated(const char *path, char *why, size_t cap) {
  int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) return 0;
  unsigned char h[100];
  struct stat sb;
  ssize_t n = fstat(fd, &sb) == 0 && S_ISREG(sb.st_mode) ? read(fd, h, sizeof h) : -1;
  close(fd);
  if (n < 16 || memcmp(h, "SQLite format 3", 16) != 0) return 0;
  if (n < (ssize_t)sizeof h) {
    snprintf(why, cap, "truncated: the file holds %zd bytes, less than an SQLite header", n);
    return 1;
  }
  uint32_t page = (uint32_t)h[16] << 8 | h[17];
  if (page == 1) page = 65536;
  uint32_t changes = (uint32_t)h[24] << 24 | (uint32_t)h[25] << 16 | (uint32_t)h[26] << 8 | h[27];
  uint32_t pages = (uint32_t)h[28] << 24 | (uint32_t)h[29] << 16 | (uint32_t)h[30] << 8 | h[31];
  uint32_t valid_for = (uint32_t)h[92] << 24 | (uint32_t)h[93] << 16 | (uint32_t)h[94] << 8 | h[95];
  unsigned long long want = (unsigned long long)page * pages;
  if (valid_for != changes || !pages || (unsigned long long)sb.st_size >= want) return 0;
  snprintf(why, cap, "truncated: the file holds %lld bytes of the %llu its header declares (%u pages of %u); "
           "restore it from a copy",
           (long long)sb.st_size, want, pages, page);
  return 1;
}

int lm_sql_truncated(const lm_sql *sql, char *why, size_t cap) {
  return sql && sql->engine == ENGINE_SQLITE && sqlite_truncated(sql->where, why, cap);
}

/* A read-only connection cannot roll back a hot journal (a writer killed
 * mid-transaction leaves one; the data is intact): reading then fails with
 * SQLITE_READONLY_ROLLBACK. Where this process may write the file, one
 * read-write connection rolls it back, as any writer would, and the
 * read-only one is opened again; elsewhere the message says who can. */
static lm_status probe_readable(lm_sql *s, const char *url, lm_diag *diag) {
  for (int attempt = 0;; attempt++) {
    sqlite3_stmt *q = NULL;
    int rc = sqlite3_prepare_v2(s->db, "SELECT 1 FROM sqlite_master LIMIT 1", -1, &q, NULL);
    if (rc == SQLITE_OK) rc = sqlite3_step(q);
    int ext = sqlite3_extended_errcode(s->db);
    sqlite3_finalize(q);
    if (rc == SQLITE_ROW || rc == SQLITE_DONE) return LM_OK;
    char cut[200];
    if (sqlite_truncated(url, cut, sizeof cut)) return lm_fail(diag, LM_EDATA, url, "%s", cut);
    if (ext != SQLITE_READONLY_ROLLBACK || attempt > 0)
      return lm_fail(diag, LM_EIO, url, "cannot read the database: %s", sqlite3_errstr(ext));
    if (access(url, W_OK) != 0)
      return lm_fail(diag, LM_EIO, url,
                     "the database has an unfinished write (a writer was killed; the data is "
                     "intact) that only a user who may write the file can roll back: run "
                     "`lumen db list --db %s` as that user",
                     url);
    sqlite3 *rw = NULL;
    if (sqlite3_open_v2(url, &rw, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, NULL) == SQLITE_OK) {
      sqlite3_busy_timeout(rw, 60000);
      sqlite3_exec(rw, "SELECT 1 FROM sqlite_master LIMIT 1", NULL, NULL, NULL);
    }
    sqlite3_close(rw);
    sqlite3_close(s->db);
    s->db = NULL;
    if (sqlite3_open_v2(url, &s->db, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX, NULL) != SQLITE_OK)
      return lm_fail(diag, LM_EIO, url, "cannot open the database: %s",
                     s->db ? sqlite3_errmsg(s->db) : "out of memory");
    sqlite3_busy_timeout(s->db, 60000);
  }
}

/* The URI that opens file path immutable (out, cap bytes), when no
 * journal or WAL file lies beside it (an unfinished write, which an
 * ordinary open rolls back or reads through) and it fits; else 0. */
static int fixed_uri(const char *path, char *out, size_t cap) {
  char side[4200];
  static const char *const suffixes[] = {"-journal", "-wal"};
  for (size_t i = 0; i < 2; i++) {
    if ((size_t)snprintf(side, sizeof side, "%s%s", path, suffixes[i]) >= sizeof side) return 0;
    if (access(side, F_OK) == 0) return 0;
  }
  size_t n = (size_t)snprintf(out, cap, "file:");
  for (const unsigned char *p = (const unsigned char *)path; *p; p++) {
    if (n + 4 >= cap) return 0;
    if (isalnum(*p) || strchr("/._-~", *p)) out[n++] = (char)*p;
    else n += (size_t)snprintf(out + n, cap - n, "%%%02X", *p);
  }
  static const char query[] = "?immutable=1";
  if (n + sizeof query > cap) return 0;
  memcpy(out + n, query, sizeof query);
  return 1;
}

static lm_status sqlite_open(lm_sql *s, const char *url, int mode, lm_sql **out, lm_diag *diag) {
  lm_status st_probe;
  s->engine = ENGINE_SQLITE;
  s->owned = 1;
  snprintf(s->where, sizeof s->where, "%s", url);
  lm_status kind = files_regular(url, diag);
  if (kind != LM_OK) {
    lm_free(s);
    return kind;
  }
  if (mode != LM_DB_CREATE) {
    struct stat sb;
    if (stat(url, &sb) != 0) {
      lm_free(s);
      return lm_fail(diag, LM_ENOTFOUND, url, "no such database");
    }
  }
  int flags = mode == LM_DB_CREATE  ? SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE
              : mode == LM_DB_WRITE ? SQLITE_OPEN_READWRITE
                                    : SQLITE_OPEN_READONLY;
  char fixed[4200];
  const char *open_as = url;
  if (mode == LM_DB_READ_FIXED && fixed_uri(url, fixed, sizeof fixed)) {
    open_as = fixed;
    flags |= SQLITE_OPEN_URI;
  }
  if (mode == LM_DB_READ_FIXED) mode = LM_DB_READ;
  if (sqlite3_open_v2(open_as, &s->db, flags | SQLITE_OPEN_NOMUTEX, NULL) != SQLITE_OK) {
    lm_status st =
        lm_fail(diag, LM_EIO, url, "cannot open the database: %s", s->db ? sqlite3_errmsg(s->db) : "out of memory");
    lm_sql_close(s);
    return st;
  }
  sqlite3_busy_timeout(s->db, 60000);
  if (mode == LM_DB_READ && (st_probe = probe_readable(s, url, diag)) != LM_OK) {
    lm_sql_close(s);
    return st_probe;
  }
  /* Large pages suit column blobs (fewer overflow pages); reads through a
   * memory map skip a copy. page_size only affects a new, empty file. */
  sqlite3_exec(s->db, "PRAGMA foreign_keys = ON; PRAGMA mmap_size = 2147418112", NULL, NULL, NULL);
  if (mode == LM_DB_CREATE) sqlite3_exec(s->db, "PRAGMA page_size = 65536", NULL, NULL, NULL);
  *out = s;
  return LM_OK;
}

lm_sql *lm_sql_wrap_sqlite(sqlite3 *db) {
  lm_sql *s = lm_calloc(1, sizeof *s);
  if (!s) return NULL;
  s->engine = ENGINE_SQLITE;
  s->ops = &lm_sql_sqlite;
  s->db = db;
  const char *f = sqlite3_db_filename(db, "main");
  snprintf(s->where, sizeof s->where, "%s", f ? f : "");
  return s;
}

void lm_sql_name_by_file(lm_sql *s) {
  if (s->engine != ENGINE_SQLITE) return;
  const char *f = sqlite3_db_filename(s->db, "main");
  snprintf(s->where, sizeof s->where, "%s", f ? f : "");
}

sqlite3 *lm_sql_detach(lm_sql *s) {
  if (!s) return NULL;
  sqlite3 *db = s->db;
  s->db = NULL;
  lm_sql_close(s);
  return db;
}

static void sqlite_close(lm_sql *s) {
  if (s->db && s->owned) sqlite3_close(s->db);
}

static lm_status sqlite_exec(lm_sql *s, const char *text, int schema, lm_diag *diag) {
  (void)schema;
  char *err = NULL;
  if (sqlite3_exec(s->db, text, NULL, NULL, &err) == SQLITE_OK) return LM_OK;
  lm_status st = lm_fail(diag, LM_EIO, s->where, "%s", err ? err : "?");
  sqlite3_free(err);
  return st;
}

static lm_status sqlite_prepare(lm_stmt *s, const char *text, lm_diag *diag) {
  lm_sql *sql = s->sql;
  if (sqlite3_prepare_v2(sql->db, text, -1, &s->st, NULL) != SQLITE_OK)
    return lm_fail(diag, LM_EIO, sql->where, "%s", sqlite3_errmsg(sql->db));
  return LM_OK;
}

/* Keep the first failure of a SQLite bind (rc) for the next step. */
static void sqlite_bound(lm_stmt *s, int rc) {
  if (rc == SQLITE_OK || s->bind_status != LM_OK) return;
  s->bind_status = rc == SQLITE_NOMEM ? LM_ENOMEM : rc == SQLITE_TOOBIG ? LM_ELIMIT : LM_EIO;
}

static void sqlite_bind(lm_stmt *s, int i, const lm_sql_value *v) {
  int rc;
  switch (v->kind) {
  case 'i': rc = sqlite3_bind_int64(s->st, i, (sqlite3_int64)v->i); break;
  case 'r': rc = sqlite3_bind_double(s->st, i, v->d); break;
  case 't': rc = sqlite3_bind_text(s->st, i, v->p, -1, SQLITE_TRANSIENT); break;
  case 'b': rc = sqlite3_bind_blob64(s->st, i, v->p, v->n, v->borrowed ? SQLITE_STATIC : SQLITE_TRANSIENT); break;
  default: rc = sqlite3_bind_null(s->st, i); break;
  }
  sqlite_bound(s, rc);
}

static int sqlite_step(lm_stmt *s) {
  s->changes = 0;
  s->last_rc = sqlite3_step(s->st);
  if (s->last_rc == SQLITE_ROW) return 1;
  if (s->last_rc == SQLITE_DONE) {
    if (!sqlite3_stmt_readonly(s->st)) s->changes = sqlite3_changes(s->sql->db);
    return 0;
  }
  int ext = sqlite3_extended_errcode(s->sql->db);
  s->unique = ext == SQLITE_CONSTRAINT_UNIQUE || ext == SQLITE_CONSTRAINT_PRIMARYKEY;
  snprintf(s->error, sizeof s->error, "%s", sqlite3_errmsg(s->sql->db));
  return -1;
}

static void sqlite_reset(lm_stmt *s) {
  s->changes = 0;
  sqlite3_reset(s->st);
}

static void sqlite_finalize(lm_stmt *s) {
  if (s->st) sqlite3_finalize(s->st);
}

static int sqlite_columns(const lm_stmt *s) { return sqlite3_column_count(s->st); }

static const char *sqlite_column_name(lm_stmt *s, int col) {
  const char *n = sqlite3_column_name(s->st, col);
  return n ? n : "";
}

static int sqlite_kind(lm_stmt *s, int col) {
  switch (sqlite3_column_type(s->st, col)) {
  case SQLITE_INTEGER: return 'i';
  case SQLITE_FLOAT: return 'r';
  case SQLITE_TEXT: return 't';
  case SQLITE_BLOB: return 'b';
  default: return 'n';
  }
}

static int64_t sqlite_integer(lm_stmt *s, int col) { return (int64_t)sqlite3_column_int64(s->st, col); }

static double sqlite_real(lm_stmt *s, int col) {
  return sqlite3_column_type(s->st, col) == SQLITE_NULL ? LM_NAN : sqlite3_column_double(s->st, col);
}

static const char *sqlite_text(lm_stmt *s, int col) {
  const unsigned char *t = sqlite3_column_text(s->st, col);
  return t ? (const char *)t : "";
}

static const void *sqlite_blob(lm_stmt *s, int col, size_t *len) {
  *len = (size_t)sqlite3_column_bytes(s->st, col);
  const void *p = sqlite3_column_blob(s->st, col);
  return p ? p : "";
}

const lm_sql_engine lm_sql_sqlite = {
    sqlite_open,    sqlite_close, sqlite_exec,    sqlite_prepare,     sqlite_bind,
    sqlite_step,    sqlite_reset, sqlite_finalize, sqlite_columns,    sqlite_column_name,
    sqlite_kind,    sqlite_integer, sqlite_real,    sqlite_text,        sqlite_blob,
};
