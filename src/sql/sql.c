/*
 * sql.c - the two drivers behind sql.h.
 *
 * SQLite is called directly. PostgreSQL goes through libpq: a statement's
 * '?' placeholders become $1..$n, parameters travel as text (numbers,
 * text) or binary (blobs), and results come back in binary so that a
 * column of 100,000 doubles arrives as 800,000 bytes rather than 1.6 MB of
 * hex. Numbers are decoded from the server's big-endian form by type.
 * libpq is loaded on the first PostgreSQL connection (below). Built
 * without libpq, or where it cannot be loaded, a postgresql:// URL gets a
 * one-line error.
 */
#include <ctype.h>
#include <fcntl.h>
#include <endian.h>
#include <math.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sql/sql.h"

/* The advisory-lock key that serializes schema creation on PostgreSQL
 * (the bytes of "lumen"). */
#define LM_SQL_SCHEMA_LOCK "465826571630"

#ifdef LUMEN_HAVE_PQ
#include <dlfcn.h>
#include <libpq-fe.h>
#include <pthread.h>

/* libpq, with the Kerberos, LDAP and TLS libraries it brings, is loaded
 * on the first PostgreSQL connection rather than with every lumen process
 * (about 400 page faults, a sixth of the start-up of a small analyze): its
 * functions are called through this table, filled from the library that
 * the build found (soname libpq.so.5, stable since PostgreSQL 8.0). */
static struct pq_api {
  PGconn *(*connectdb)(const char *);
  ConnStatusType (*status)(const PGconn *);
  char *(*errorMessage)(const PGconn *);
  void (*finish)(PGconn *);
  PGresult *(*exec)(PGconn *, const char *);
  PGresult *(*execParams)(PGconn *, const char *, int, const Oid *, const char *const *, const int *, const int *,
                          int);
  ExecStatusType (*resultStatus)(const PGresult *);
  char *(*resultErrorMessage)(const PGresult *);
  char *(*resultErrorField)(const PGresult *, int);
  void (*clear)(PGresult *);
  int (*ntuples)(const PGresult *);
  int (*nfields)(const PGresult *);
  char *(*fname)(const PGresult *, int);
  Oid (*ftype)(const PGresult *, int);
  char *(*getvalue)(const PGresult *, int, int);
  int (*getlength)(const PGresult *, int, int);
  int (*getisnull)(const PGresult *, int, int);
} pq;
static char pq_error[256];
static pthread_once_t pq_once = PTHREAD_ONCE_INIT;

static void pq_load(void) {
  void *lib = dlopen("libpq.so.5", RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    snprintf(pq_error, sizeof pq_error, "%s", dlerror());
    return;
  }
  struct {
    const char *name;
    void **slot;
  } const syms[] = {
      {"PQconnectdb", (void **)&pq.connectdb},
      {"PQstatus", (void **)&pq.status},
      {"PQerrorMessage", (void **)&pq.errorMessage},
      {"PQfinish", (void **)&pq.finish},
      {"PQexec", (void **)&pq.exec},
      {"PQexecParams", (void **)&pq.execParams},
      {"PQresultStatus", (void **)&pq.resultStatus},
      {"PQresultErrorMessage", (void **)&pq.resultErrorMessage},
      {"PQresultErrorField", (void **)&pq.resultErrorField},
      {"PQclear", (void **)&pq.clear},
      {"PQntuples", (void **)&pq.ntuples},
      {"PQnfields", (void **)&pq.nfields},
      {"PQfname", (void **)&pq.fname},
      {"PQftype", (void **)&pq.ftype},
      {"PQgetvalue", (void **)&pq.getvalue},
      {"PQgetlength", (void **)&pq.getlength},
      {"PQgetisnull", (void **)&pq.getisnull},
  };
  for (size_t i = 0; i < sizeof syms / sizeof *syms; i++) {
    void *f = dlsym(lib, syms[i].name);
    if (!f) {
      snprintf(pq_error, sizeof pq_error, "libpq.so.5 has no %s", syms[i].name);
      memset(&pq, 0, sizeof pq);
      dlclose(lib);
      return;
    }
    *syms[i].slot = f;
  }
}

/* 1 when libpq is loaded (once, from any thread), else 0 with the reason
 * in pq_error. */
static int pq_ready(void) {
  pthread_once(&pq_once, pq_load);
  return pq.connectdb != NULL;
}

#define PQconnectdb pq.connectdb
#define PQstatus pq.status
#define PQerrorMessage pq.errorMessage
/* These two are called on every statement and connection, PostgreSQL
 * or not (with NULL for SQLite's), as libpq allows. */
static void pq_finish(PGconn *c) {
  if (c && pq.finish) pq.finish(c);
}
static void pq_clear(PGresult *r) {
  if (r && pq.clear) pq.clear(r);
}
#define PQfinish pq_finish
#define PQexec pq.exec
#define PQexecParams pq.execParams
#define PQresultStatus pq.resultStatus
#define PQresultErrorMessage pq.resultErrorMessage
#define PQresultErrorField pq.resultErrorField
#define PQclear pq_clear
#define PQntuples pq.ntuples
#define PQnfields pq.nfields
#define PQfname pq.fname
#define PQftype pq.ftype
#define PQgetvalue pq.getvalue
#define PQgetlength pq.getlength
#define PQgetisnull pq.getisnull
#else
typedef struct pg_conn PGconn;
typedef struct pg_result PGresult;
#endif

enum { ENGINE_SQLITE, ENGINE_PG };

struct lm_sql {
  int engine;
  sqlite3 *db;
  int owned;
  PGconn *pg;
  char where[512];
};

struct lm_stmt {
  lm_sql *sql;
  sqlite3_stmt *st;
  int last_rc;
  /* PostgreSQL */
  char *text;
  int n_params;
  char **values;
  int *lengths, *formats;
  PGresult *res;
  int executed, row, n_rows;
  char error[512];
  int unique;
  /* A parameter that could not be bound (out of memory): the next step
   * fails with it instead of running with the parameter missing. */
  lm_status bind_status;
};

static int is_pg_url(const char *url) {
  return strncmp(url, "postgresql://", 13) == 0 || strncmp(url, "postgres://", 11) == 0;
}

/* ----------------------------------------------------------- connection */

static void pg_where(const char *url, char *out, size_t cap) {
  /* postgresql://user:secret@host/db -> postgresql://user@host/db */
  const char *scheme = strstr(url, "://");
  const char *at = scheme ? strchr(scheme + 3, '@') : NULL;
  const char *colon = scheme ? strchr(scheme + 3, ':') : NULL;
  if (at && colon && colon < at)
    snprintf(out, cap, "%.*s%s", (int)(colon - url), url, at);
  else
    snprintf(out, cap, "%s", url);
}

/* SQLite opens its files with blocking calls: a FIFO named as the store
 * (or as its journal, write-ahead log or shared-memory file) would hang
 * the command. Each must be a regular file or absent; what else is there
 * is named (lm_path_kind opens nothing). */
static lm_status files_regular(const char *url, lm_diag *diag) {
  static const char *const suffixes[] = {"", "-journal", "-wal", "-shm"};
  for (size_t i = 0; i < sizeof suffixes / sizeof *suffixes; i++) {
    char path[4200];
    if ((size_t)snprintf(path, sizeof path, "%s%s", url, suffixes[i]) >= sizeof path)
      return lm_diag_set(diag, LM_EINVAL, url, 0, 0, NULL, "the database path is too long");
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
    if (sqlite_truncated(url, cut, sizeof cut)) return lm_diag_set(diag, LM_EDATA, url, 0, 0, NULL, "%s", cut);
    if (ext != SQLITE_READONLY_ROLLBACK || attempt > 0)
      return lm_diag_set(diag, LM_EIO, url, 0, 0, NULL, "cannot read the database: %s",
                         sqlite3_errstr(ext));
    if (access(url, W_OK) != 0)
      return lm_diag_set(diag, LM_EIO, url, 0, 0, NULL,
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
      return lm_diag_set(diag, LM_EIO, url, 0, 0, NULL, "cannot open the database: %s",
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

lm_status lm_sql_open(const char *url, int mode, lm_sql **out, lm_diag *diag) {
  lm_status st_probe;
  *out = NULL;
  lm_sql *s = lm_calloc(1, sizeof *s);
  if (!s) return lm_diag_set(diag, LM_ENOMEM, url, 0, 0, NULL, "out of memory");
  if (is_pg_url(url)) {
    pg_where(url, s->where, sizeof s->where);
#ifdef LUMEN_HAVE_PQ
    if (!pq_ready()) {
      lm_status st = lm_diag_set(diag, LM_EIO, s->where, 0, 0, NULL,
                                 "a PostgreSQL store needs the PostgreSQL client library: %s", pq_error);
      lm_free(s);
      return st;
    }
    s->engine = ENGINE_PG;
    s->pg = PQconnectdb(url);
    if (PQstatus(s->pg) != CONNECTION_OK) {
      char msg[512];
      snprintf(msg, sizeof msg, "%s", PQerrorMessage(s->pg));
      msg[strcspn(msg, "\n")] = '\0';
      lm_status st = lm_diag_set(diag, LM_EIO, s->where, 0, 0, NULL, "cannot connect: %s", msg);
      lm_sql_close(s);
      return st;
    }
    PGresult *r = PQexec(s->pg, mode == LM_DB_READ || mode == LM_DB_READ_FIXED
                                    ? "SET client_min_messages = warning; SET default_transaction_read_only = on"
                                    : "SET client_min_messages = warning");
    PQclear(r);
    *out = s;
    return LM_OK;
#else
    lm_free(s);
    return lm_diag_set(diag, LM_EINVAL, url, 0, 0, "--db",
                       "this lumen was built without PostgreSQL support (libpq)");
#endif
  }
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
      return lm_diag_set(diag, LM_ENOTFOUND, url, 0, 0, NULL, "no such database");
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
    lm_status st = lm_diag_set(diag, LM_EIO, url, 0, 0, NULL, "cannot open the database: %s",
                               s->db ? sqlite3_errmsg(s->db) : "out of memory");
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
  s->db = db;
  const char *f = sqlite3_db_filename(db, "main");
  snprintf(s->where, sizeof s->where, "%s", f ? f : "");
  return s;
}

void lm_sql_close(lm_sql *s) {
  if (!s) return;
  if (s->db && s->owned) sqlite3_close(s->db);
#ifdef LUMEN_HAVE_PQ
  if (s->pg) PQfinish(s->pg);
#endif
  lm_free(s);
}

sqlite3 *lm_sql_detach(lm_sql *s) {
  if (!s) return NULL;
  sqlite3 *db = s->db;
  s->db = NULL;
  lm_sql_close(s);
  return db;
}

const char *lm_sql_where(const lm_sql *s) { return s->where; }
int lm_sql_is_postgres(const lm_sql *s) { return s->engine == ENGINE_PG; }

/* Schema text for PostgreSQL: INTEGER PRIMARY KEY -> BIGSERIAL PRIMARY KEY,
 * INTEGER -> BIGINT, REAL -> DOUBLE PRECISION, BLOB -> BYTEA (whole
 * upper-case words); PRAGMA statements dropped. */
static char *pg_schema(const char *in) {
  size_t cap = strlen(in) * 2 + 64;
  char *out = lm_malloc(cap), *o = out;
  if (!out) return NULL;
  static const struct {
    const char *from, *to;
  } map[] = {{"INTEGER PRIMARY KEY", "BIGSERIAL PRIMARY KEY"},
             {"INTEGER", "BIGINT"},
             {"REAL", "DOUBLE PRECISION"},
             {"BLOB", "BYTEA"}};
  for (const char *p = in; *p;) {
    if (strncmp(p, "PRAGMA", 6) == 0 && (p == in || p[-1] == '\n' || p[-1] == ';')) {
      const char *end = strchr(p, ';');
      p = end ? end + 1 : p + strlen(p);
      continue;
    }
    int done = 0;
    if (p == in || !(isalnum((unsigned char)p[-1]) || p[-1] == '_')) {
      for (size_t k = 0; k < sizeof map / sizeof *map && !done; k++) {
        size_t n = strlen(map[k].from);
        if (strncmp(p, map[k].from, n) == 0 && !(isalnum((unsigned char)p[n]) || p[n] == '_')) {
          o += sprintf(o, "%s", map[k].to);
          p += n;
          done = 1;
        }
      }
    }
    if (!done) *o++ = *p++;
  }
  *o = '\0';
  return out;
}

lm_status lm_sql_exec(lm_sql *s, const char *text, int schema, lm_diag *diag) {
  if (s->engine == ENGINE_SQLITE) {
    char *err = NULL;
    if (sqlite3_exec(s->db, text, NULL, NULL, &err) == SQLITE_OK) return LM_OK;
    lm_status st = lm_diag_set(diag, LM_EIO, s->where, 0, 0, NULL, "%s", err ? err : "?");
    sqlite3_free(err);
    return st;
  }
#ifdef LUMEN_HAVE_PQ
  char *mapped = schema ? pg_schema(text) : NULL;
  if (schema && !mapped) return lm_diag_set(diag, LM_ENOMEM, s->where, 0, 0, NULL, "out of memory");
  if (mapped) {
    /* CREATE ... IF NOT EXISTS races on PostgreSQL's catalogs when two
     * first imports meet (duplicate key in pg_type): take a transaction-
     * level advisory lock first, so that one creates and the other sees. */
    static const char lock[] = "SELECT pg_advisory_xact_lock(" LM_SQL_SCHEMA_LOCK "); ";
    char *locked = lm_malloc(sizeof lock + strlen(mapped));
    if (!locked) {
      lm_free(mapped);
      return lm_diag_set(diag, LM_ENOMEM, s->where, 0, 0, NULL, "out of memory");
    }
    memcpy(locked, lock, sizeof lock - 1);
    strcpy(locked + sizeof lock - 1, mapped);
    lm_free(mapped);
    mapped = locked;
  }
  PGresult *r = PQexec(s->pg, mapped ? mapped : text);
  lm_free(mapped);
  ExecStatusType rs = PQresultStatus(r);
  lm_status st = LM_OK;
  if (rs != PGRES_COMMAND_OK && rs != PGRES_TUPLES_OK) {
    char msg[512];
    snprintf(msg, sizeof msg, "%s", PQresultErrorMessage(r));
    msg[strcspn(msg, "\n")] = '\0';
    st = lm_diag_set(diag, LM_EIO, s->where, 0, 0, NULL, "%s", msg);
  }
  PQclear(r);
  return st;
#else
  (void)schema;
  return lm_diag_set(diag, LM_EINVAL, s->where, 0, 0, NULL, "no PostgreSQL support");
#endif
}

lm_status lm_sql_begin(lm_sql *s, lm_diag *diag) {
  /* As SQLite's BEGIN IMMEDIATE: one writer at a time, decided at the
   * start, so that check-then-insert (fingerprints, names) cannot race. */
  return lm_sql_exec(s,
                     s->engine == ENGINE_SQLITE ? "BEGIN IMMEDIATE"
                                                : "BEGIN; SELECT pg_advisory_xact_lock(" LM_SQL_SCHEMA_LOCK ")",
                     0, diag);
}

lm_status lm_sql_commit(lm_sql *s, lm_diag *diag) { return lm_sql_exec(s, "COMMIT", 0, diag); }

void lm_sql_rollback(lm_sql *s) { lm_sql_exec(s, "ROLLBACK", 0, NULL); }

/* ------------------------------------------------------------ statements */

lm_status lm_sql_prepare(lm_sql *sql, const char *text, lm_stmt **out, lm_diag *diag) {
  *out = NULL;
  lm_stmt *s = lm_calloc(1, sizeof *s);
  if (!s) return lm_diag_set(diag, LM_ENOMEM, sql->where, 0, 0, NULL, "out of memory");
  s->sql = sql;
  if (sql->engine == ENGINE_SQLITE) {
    if (sqlite3_prepare_v2(sql->db, text, -1, &s->st, NULL) != SQLITE_OK) {
      lm_status st = lm_diag_set(diag, LM_EIO, sql->where, 0, 0, NULL, "%s", sqlite3_errmsg(sql->db));
      lm_free(s);
      return st;
    }
    *out = s;
    return LM_OK;
  }
  /* '?' -> $n outside quoted text. */
  size_t cap = strlen(text) * 4 + 16;
  s->text = lm_malloc(cap);
  if (!s->text) {
    lm_free(s);
    return lm_diag_set(diag, LM_ENOMEM, sql->where, 0, 0, NULL, "out of memory");
  }
  char *o = s->text;
  char quote = 0;
  for (const char *p = text; *p; p++) {
    if (quote) {
      if (*p == quote) quote = 0;
      *o++ = *p;
    } else if (*p == '\'' || *p == '"') {
      quote = *p;
      *o++ = *p;
    } else if (*p == '?') {
      o += sprintf(o, "$%d", ++s->n_params);
    } else {
      *o++ = *p;
    }
  }
  *o = '\0';
  int n = s->n_params ? s->n_params : 1;
  s->values = lm_calloc((size_t)n, sizeof *s->values);
  s->lengths = lm_calloc((size_t)n, sizeof *s->lengths);
  s->formats = lm_calloc((size_t)n, sizeof *s->formats);
  if (!s->values || !s->lengths || !s->formats) {
    lm_stmt_free(s);
    return lm_diag_set(diag, LM_ENOMEM, sql->where, 0, 0, NULL, "out of memory");
  }
  *out = s;
  return LM_OK;
}

/* Keep the first failure of a SQLite bind (rc) for the next step. */
static void sqlite_bound(lm_stmt *s, int rc) {
  if (rc == SQLITE_OK || s->bind_status != LM_OK) return;
  s->bind_status = rc == SQLITE_NOMEM ? LM_ENOMEM : rc == SQLITE_TOOBIG ? LM_ELIMIT : LM_EIO;
}

static void pg_param(lm_stmt *s, int i, const void *data, size_t n, int binary) {
  if (i < 1 || i > s->n_params) return;
  lm_free(s->values[i - 1]);
  s->values[i - 1] = NULL;
  s->lengths[i - 1] = 0;
  s->formats[i - 1] = binary;
  if (!data) return;
  s->values[i - 1] = lm_malloc(n + 1);
  if (!s->values[i - 1]) {
    s->bind_status = LM_ENOMEM;
    return;
  }
  if (n) memcpy(s->values[i - 1], data, n);
  s->values[i - 1][n] = '\0';
  s->lengths[i - 1] = (int)n;
}

void lm_stmt_bind_int64(lm_stmt *s, int i, int64_t v) {
  if (s->st) {
    sqlite_bound(s, sqlite3_bind_int64(s->st, i, (sqlite3_int64)v));
    return;
  }
  char b[32];
  int n = snprintf(b, sizeof b, "%lld", (long long)v);
  pg_param(s, i, b, (size_t)n, 0);
}

void lm_stmt_bind_double(lm_stmt *s, int i, double v) {
  if (isnan(v)) {
    lm_stmt_bind_null(s, i);
    return;
  }
  if (s->st) {
    sqlite_bound(s, sqlite3_bind_double(s->st, i, v));
    return;
  }
  char b[40];
  int n = isinf(v) ? snprintf(b, sizeof b, "%s", v > 0 ? "Infinity" : "-Infinity")
                   : snprintf(b, sizeof b, "%.17g", v);
  pg_param(s, i, b, (size_t)n, 0);
}

void lm_stmt_bind_text(lm_stmt *s, int i, const char *v) {
  if (!v) {
    lm_stmt_bind_null(s, i);
    return;
  }
  if (s->st) {
    sqlite_bound(s, sqlite3_bind_text(s->st, i, v, -1, SQLITE_TRANSIENT));
    return;
  }
  pg_param(s, i, v, strlen(v), 0);
}

void lm_stmt_bind_blob(lm_stmt *s, int i, const void *p, size_t n) {
  if (s->st) {
    sqlite_bound(s, sqlite3_bind_blob64(s->st, i, n ? p : "", n, SQLITE_TRANSIENT));
    return;
  }
  pg_param(s, i, n ? p : "", n, 1);
}

void lm_stmt_bind_blob_borrowed(lm_stmt *s, int i, const void *p, size_t n) {
  if (s->st) {
    sqlite_bound(s, sqlite3_bind_blob64(s->st, i, n ? p : "", n, SQLITE_STATIC));
    return;
  }
  pg_param(s, i, n ? p : "", n, 1);
}

void lm_stmt_bind_null(lm_stmt *s, int i) {
  if (s->st) {
    sqlite_bound(s, sqlite3_bind_null(s->st, i));
    return;
  }
  pg_param(s, i, NULL, 0, 0);
}

int lm_stmt_step(lm_stmt *s) {
  if (s->bind_status != LM_OK) {
    snprintf(s->error, sizeof s->error, "a parameter could not be bound: %s", lm_strerror(s->bind_status));
    return -1;
  }
  if (s->st) {
    s->last_rc = sqlite3_step(s->st);
    if (s->last_rc == SQLITE_ROW) return 1;
    if (s->last_rc == SQLITE_DONE) return 0;
    int ext = sqlite3_extended_errcode(s->sql->db);
    s->unique = ext == SQLITE_CONSTRAINT_UNIQUE || ext == SQLITE_CONSTRAINT_PRIMARYKEY;
    snprintf(s->error, sizeof s->error, "%s", sqlite3_errmsg(s->sql->db));
    return -1;
  }
#ifdef LUMEN_HAVE_PQ
  if (!s->executed) {
    s->res = PQexecParams(s->sql->pg, s->text, s->n_params, NULL, (const char *const *)s->values,
                          s->lengths, s->formats, 1);
    s->executed = 1;
    s->row = -1;
    ExecStatusType rs = PQresultStatus(s->res);
    if (rs != PGRES_COMMAND_OK && rs != PGRES_TUPLES_OK) {
      const char *state = PQresultErrorField(s->res, PG_DIAG_SQLSTATE);
      s->unique = state && strcmp(state, "23505") == 0;
      snprintf(s->error, sizeof s->error, "%s", PQresultErrorMessage(s->res));
      s->error[strcspn(s->error, "\n")] = '\0';
      return -1;
    }
    s->n_rows = rs == PGRES_TUPLES_OK ? PQntuples(s->res) : 0;
  }
  if (s->row + 1 < s->n_rows) {
    s->row++;
    return 1;
  }
  return 0;
#else
  snprintf(s->error, sizeof s->error, "no PostgreSQL support");
  return -1;
#endif
}

void lm_stmt_reset(lm_stmt *s) {
  if (s->st) {
    sqlite3_reset(s->st);
    return;
  }
#ifdef LUMEN_HAVE_PQ
  PQclear(s->res);
#endif
  s->res = NULL;
  s->executed = 0;
  s->row = -1;
  s->n_rows = 0;
}

void lm_stmt_free(lm_stmt *s) {
  if (!s) return;
  if (s->st) sqlite3_finalize(s->st);
#ifdef LUMEN_HAVE_PQ
  PQclear(s->res);
#endif
  for (int i = 0; s->values && i < s->n_params; i++) lm_free(s->values[i]);
  lm_free(s->values);
  lm_free(s->lengths);
  lm_free(s->formats);
  lm_free(s->text);
  lm_free(s);
}

lm_status lm_stmt_error(lm_stmt *s, const char *what, lm_diag *diag) {
  return lm_diag_set(diag, s->bind_status != LM_OK ? s->bind_status : LM_EIO, s->sql->where, 0, 0, NULL, "%s: %s", what,
                     s->error[0] ? s->error : "database error");
}

int lm_stmt_unique_violation(const lm_stmt *s) { return s->unique; }

/* ----------------------------------------------------------------- rows */

#ifdef LUMEN_HAVE_PQ
enum { OID_BOOL = 16, OID_BYTEA = 17, OID_INT8 = 20, OID_INT2 = 21, OID_INT4 = 23, OID_FLOAT4 = 700,
       OID_FLOAT8 = 701 };

static uint64_t be_u64(const char *p) {
  uint64_t v;
  memcpy(&v, p, 8);
  return be64toh(v);
}
#endif

int lm_stmt_columns(const lm_stmt *s) {
  if (s->st) return sqlite3_column_count(s->st);
#ifdef LUMEN_HAVE_PQ
  return s->res ? PQnfields(s->res) : 0;
#else
  return 0;
#endif
}

const char *lm_stmt_column_name(lm_stmt *s, int col) {
  if (s->st) {
    const char *n = sqlite3_column_name(s->st, col);
    return n ? n : "";
  }
#ifdef LUMEN_HAVE_PQ
  const char *n = s->res ? PQfname(s->res, col) : NULL;
  return n ? n : "";
#else
  return "";
#endif
}

int lm_stmt_kind(lm_stmt *s, int col) {
  if (s->st) {
    switch (sqlite3_column_type(s->st, col)) {
    case SQLITE_INTEGER: return 'i';
    case SQLITE_FLOAT: return 'r';
    case SQLITE_TEXT: return 't';
    case SQLITE_BLOB: return 'b';
    default: return 'n';
    }
  }
#ifdef LUMEN_HAVE_PQ
  if (!s->res || PQgetisnull(s->res, s->row, col)) return 'n';
  switch ((int)PQftype(s->res, col)) {
  case OID_BOOL:
  case OID_INT2:
  case OID_INT4:
  case OID_INT8: return 'i';
  case OID_FLOAT4:
  case OID_FLOAT8: return 'r';
  case OID_BYTEA: return 'b';
  default: return 't';
  }
#else
  return 'n';
#endif
}

int lm_stmt_is_null(lm_stmt *s, int col) { return lm_stmt_kind(s, col) == 'n'; }

int64_t lm_stmt_int64(lm_stmt *s, int col) {
  if (s->st) return (int64_t)sqlite3_column_int64(s->st, col);
#ifdef LUMEN_HAVE_PQ
  if (!s->res || PQgetisnull(s->res, s->row, col)) return 0;
  const char *p = PQgetvalue(s->res, s->row, col);
  switch ((int)PQftype(s->res, col)) {
  case OID_BOOL: return p[0] != 0;
  case OID_INT2: {
    uint16_t v;
    memcpy(&v, p, 2);
    return (int16_t)be16toh(v);
  }
  case OID_INT4: {
    uint32_t v;
    memcpy(&v, p, 4);
    return (int32_t)be32toh(v);
  }
  case OID_INT8: return (int64_t)be_u64(p);
  case OID_FLOAT4:
  case OID_FLOAT8: return (int64_t)lm_stmt_double(s, col);
  default: return strtoll(p, NULL, 10);
  }
#else
  return 0;
#endif
}

double lm_stmt_double(lm_stmt *s, int col) {
  if (s->st)
    return sqlite3_column_type(s->st, col) == SQLITE_NULL ? LM_NAN : sqlite3_column_double(s->st, col);
#ifdef LUMEN_HAVE_PQ
  if (!s->res || PQgetisnull(s->res, s->row, col)) return LM_NAN;
  const char *p = PQgetvalue(s->res, s->row, col);
  switch ((int)PQftype(s->res, col)) {
  case OID_FLOAT8: {
    uint64_t bits = be_u64(p);
    double d;
    memcpy(&d, &bits, 8);
    return d;
  }
  case OID_FLOAT4: {
    uint32_t bits;
    memcpy(&bits, p, 4);
    bits = be32toh(bits);
    float f;
    memcpy(&f, &bits, 4);
    return (double)f;
  }
  case OID_BOOL:
  case OID_INT2:
  case OID_INT4:
  case OID_INT8: return (double)lm_stmt_int64(s, col);
  default: return strtod(p, NULL);
  }
#else
  return LM_NAN;
#endif
}

const char *lm_stmt_text(lm_stmt *s, int col) {
  if (s->st) {
    const unsigned char *t = sqlite3_column_text(s->st, col);
    return t ? (const char *)t : "";
  }
#ifdef LUMEN_HAVE_PQ
  if (!s->res || PQgetisnull(s->res, s->row, col)) return "";
  return PQgetvalue(s->res, s->row, col);
#else
  return "";
#endif
}

const void *lm_stmt_blob(lm_stmt *s, int col, size_t *len) {
  if (s->st) {
    *len = (size_t)sqlite3_column_bytes(s->st, col);
    const void *p = sqlite3_column_blob(s->st, col);
    return p ? p : "";
  }
#ifdef LUMEN_HAVE_PQ
  if (!s->res || PQgetisnull(s->res, s->row, col)) {
    *len = 0;
    return "";
  }
  *len = (size_t)PQgetlength(s->res, s->row, col);
  return PQgetvalue(s->res, s->row, col);
#else
  *len = 0;
  return "";
#endif
}
