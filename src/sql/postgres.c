/*
 * postgres.c - the PostgreSQL engine of sql.h, through libpq: a
 * statement's '?' placeholders become $1..$n, parameters travel as text
 * (numbers, text) or binary (blobs), and results come back in binary so
 * that a column of 100,000 doubles arrives as 800,000 bytes rather than
 * 1.6 MB of hex. Numbers are decoded from the server's big-endian form by
 * type. libpq is loaded on the first PostgreSQL connection (below). Built
 * without libpq, or where it cannot be loaded, a postgresql:// URL gets a
 * one-line error.
 */
#include <ctype.h>
#include <endian.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/dl.h"
#include "sql/sql_private.h"

#ifdef LUMEN_HAVE_PQ
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
  char *(*cmdTuples)(PGresult *);
} pq;
static char pq_error[sizeof(((lm_diag *)0)->message)];
static pthread_once_t pq_once = PTHREAD_ONCE_INIT;

static void pq_load(void) {
  static const char *const names[] = {"libpq.so.5"};
  lm_dl_sym syms[] = {
      {"PQconnectdb", &pq.connectdb, 1, NULL},
      {"PQstatus", &pq.status, 1, NULL},
      {"PQerrorMessage", &pq.errorMessage, 1, NULL},
      {"PQfinish", &pq.finish, 1, NULL},
      {"PQexec", &pq.exec, 1, NULL},
      {"PQexecParams", &pq.execParams, 1, NULL},
      {"PQresultStatus", &pq.resultStatus, 1, NULL},
      {"PQresultErrorMessage", &pq.resultErrorMessage, 1, NULL},
      {"PQresultErrorField", &pq.resultErrorField, 1, NULL},
      {"PQclear", &pq.clear, 1, NULL},
      {"PQntuples", &pq.ntuples, 1, NULL},
      {"PQnfields", &pq.nfields, 1, NULL},
      {"PQfname", &pq.fname, 1, NULL},
      {"PQftype", &pq.ftype, 1, NULL},
      {"PQgetvalue", &pq.getvalue, 1, NULL},
      {"PQgetlength", &pq.getlength, 1, NULL},
      {"PQgetisnull", &pq.getisnull, 1, NULL},
      {"PQcmdTuples", &pq.cmdTuples, 1, NULL},
  };
  lm_dl_lib lib;
  lm_diag d;
  if (lm_dl_open(&lib, names, LM_ARRAY_LEN(names), 0, &d) != LM_OK) {
    snprintf(pq_error, sizeof pq_error, "%s", lib.error);
    return;
  }
  if (lm_dl_resolve(&lib, syms, LM_ARRAY_LEN(syms), &d) != LM_OK) {
    snprintf(pq_error, sizeof pq_error, "%s", d.message);
    memset(&pq, 0, sizeof pq);
    lm_dl_close(&lib);
  }
}

/* 1 when libpq is loaded (once, from any thread), else 0 with the reason
 * in pq_error. */
static int pq_ready(void) {
  pthread_once(&pq_once, pq_load);
  return pq.connectdb != NULL;
}

/* These two are called on every statement and connection, PostgreSQL
 * or not (with NULL for SQLite's), as libpq allows. */
static void pq_finish(PGconn *c) {
  if (c && pq.finish) pq.finish(c);
}
static void pq_clear(PGresult *r) {
  if (r && pq.clear) pq.clear(r);
}
#endif

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

static lm_status pg_open(lm_sql *s, const char *url, int mode, lm_sql **out, lm_diag *diag) {
  pg_where(url, s->where, sizeof s->where);
#ifdef LUMEN_HAVE_PQ
    if (!pq_ready()) {
      lm_status st =
          lm_fail(diag, LM_EIO, s->where, "a PostgreSQL store needs the PostgreSQL client library: %s", pq_error);
      lm_free(s);
      return st;
    }
    s->engine = ENGINE_PG;
    s->pg = pq.connectdb(url);
    if (pq.status(s->pg) != CONNECTION_OK) {
      char msg[512];
      snprintf(msg, sizeof msg, "%s", pq.errorMessage(s->pg));
      msg[strcspn(msg, "\n")] = '\0';
      lm_status st = lm_fail(diag, LM_EIO, s->where, "cannot connect: %s", msg);
      lm_sql_close(s);
      return st;
    }
    PGresult *r = pq.exec(s->pg, mode == LM_DB_READ || mode == LM_DB_READ_FIXED
                                    ? "SET client_min_messages = warning; SET default_transaction_read_only = on"
                                    : "SET client_min_messages = warning");
    pq_clear(r);
    *out = s;
    return LM_OK;
#else
    (void)mode, (void)out;
    lm_free(s);
    return lm_fail_at(diag, LM_EINVAL, url, 0, "--db", "this lumen was built without PostgreSQL support (libpq)");
#endif
}

static void pg_close(lm_sql *s) {
#ifdef LUMEN_HAVE_PQ
  if (s->pg) pq_finish(s->pg);
#else
  (void)s;
#endif
}

#ifdef LUMEN_HAVE_PQ
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
#endif

static lm_status pg_exec(lm_sql *s, const char *text, int schema, lm_diag *diag) {
#ifdef LUMEN_HAVE_PQ
  char *mapped = schema ? pg_schema(text) : NULL;
  if (schema && !mapped) return lm_oom(diag, s->where);
  if (mapped) {
    /* CREATE ... IF NOT EXISTS races on PostgreSQL's catalogs when two
     * first imports meet (duplicate key in pg_type): take a transaction-
     * level advisory lock first, so that one creates and the other sees. */
    static const char lock[] = "SELECT pg_advisory_xact_lock(" LM_SQL_SCHEMA_LOCK "); ";
    char *locked = lm_malloc(sizeof lock + strlen(mapped));
    if (!locked) {
      lm_free(mapped);
      return lm_oom(diag, s->where);
    }
    memcpy(locked, lock, sizeof lock - 1);
    strcpy(locked + sizeof lock - 1, mapped);
    lm_free(mapped);
    mapped = locked;
  }
  PGresult *r = pq.exec(s->pg, mapped ? mapped : text);
  lm_free(mapped);
  ExecStatusType rs = pq.resultStatus(r);
  lm_status st = LM_OK;
  if (rs != PGRES_COMMAND_OK && rs != PGRES_TUPLES_OK) {
    char msg[512];
    snprintf(msg, sizeof msg, "%s", pq.resultErrorMessage(r));
    msg[strcspn(msg, "\n")] = '\0';
    st = lm_fail(diag, LM_EIO, s->where, "%s", msg);
  }
  pq_clear(r);
  return st;
#else
  (void)text, (void)schema;
  return lm_fail(diag, LM_EINVAL, s->where, "no PostgreSQL support");
#endif
}

static lm_status pg_prepare(lm_stmt *s, const char *text, lm_diag *diag) {
  lm_sql *sql = s->sql;
  /* '?' -> $n outside quoted text. */
  size_t cap = strlen(text) * 4 + 16;
  s->text = lm_malloc(cap);
  if (!s->text) return lm_oom(diag, sql->where);
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
  if (!s->values || !s->lengths || !s->formats) return lm_oom(diag, sql->where);
  return LM_OK;
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

static void pg_bind(lm_stmt *s, int i, const lm_sql_value *v) {
  char b[40];
  int n;
  switch (v->kind) {
  case 'i':
    n = snprintf(b, sizeof b, "%lld", (long long)v->i);
    pg_param(s, i, b, (size_t)n, 0);
    break;
  case 'r':
    n = isinf(v->d) ? snprintf(b, sizeof b, "%s", v->d > 0 ? "Infinity" : "-Infinity")
                    : snprintf(b, sizeof b, "%.17g", v->d);
    pg_param(s, i, b, (size_t)n, 0);
    break;
  case 't': pg_param(s, i, v->p, v->n, 0); break;
  case 'b': pg_param(s, i, v->p, v->n, 1); break;
  default: pg_param(s, i, NULL, 0, 0); break;
  }
}

static int pg_step(lm_stmt *s) {
#ifdef LUMEN_HAVE_PQ
  if (!s->executed) {
    s->changes = 0;
    s->res = pq.execParams(s->sql->pg, s->text, s->n_params, NULL, (const char *const *)s->values,
                          s->lengths, s->formats, 1);
    s->executed = 1;
    s->row = -1;
    ExecStatusType rs = pq.resultStatus(s->res);
    if (rs != PGRES_COMMAND_OK && rs != PGRES_TUPLES_OK) {
      const char *state = pq.resultErrorField(s->res, PG_DIAG_SQLSTATE);
      s->unique = state && strcmp(state, "23505") == 0;
      snprintf(s->error, sizeof s->error, "%s", pq.resultErrorMessage(s->res));
      s->error[strcspn(s->error, "\n")] = '\0';
      return -1;
    }
    s->n_rows = rs == PGRES_TUPLES_OK ? pq.ntuples(s->res) : 0;
    if (rs == PGRES_COMMAND_OK) s->changes = strtoll(pq.cmdTuples(s->res), NULL, 10);
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

static void pg_reset(lm_stmt *s) {
#ifdef LUMEN_HAVE_PQ
  pq_clear(s->res);
#endif
  s->res = NULL;
  s->executed = 0;
  s->changes = 0;
  s->row = -1;
  s->n_rows = 0;
}

static void pg_finalize(lm_stmt *s) {
#ifdef LUMEN_HAVE_PQ
  pq_clear(s->res);
#endif
  for (int i = 0; s->values && i < s->n_params; i++) lm_free(s->values[i]);
  lm_free(s->values);
  lm_free(s->lengths);
  lm_free(s->formats);
  lm_free(s->text);
}

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

static int pg_columns(const lm_stmt *s) {
#ifdef LUMEN_HAVE_PQ
  return s->res ? pq.nfields(s->res) : 0;
#else
  (void)s;
  return 0;
#endif
}

static const char *pg_column_name(lm_stmt *s, int col) {
#ifdef LUMEN_HAVE_PQ
  const char *n = s->res ? pq.fname(s->res, col) : NULL;
  return n ? n : "";
#else
  (void)s, (void)col;
  return "";
#endif
}

static int pg_kind(lm_stmt *s, int col) {
#ifdef LUMEN_HAVE_PQ
  if (!s->res || pq.getisnull(s->res, s->row, col)) return 'n';
  switch ((int)pq.ftype(s->res, col)) {
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
  (void)s, (void)col;
  return 'n';
#endif
}

static double pg_real(lm_stmt *s, int col);

static int64_t pg_integer(lm_stmt *s, int col) {
#ifdef LUMEN_HAVE_PQ
  if (!s->res || pq.getisnull(s->res, s->row, col)) return 0;
  const char *p = pq.getvalue(s->res, s->row, col);
  switch ((int)pq.ftype(s->res, col)) {
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
  case OID_FLOAT8: return (int64_t)pg_real(s, col);
  default: return strtoll(p, NULL, 10);
  }
#else
  (void)s, (void)col;
  return 0;
#endif
}

static double pg_real(lm_stmt *s, int col) {
#ifdef LUMEN_HAVE_PQ
  if (!s->res || pq.getisnull(s->res, s->row, col)) return LM_NAN;
  const char *p = pq.getvalue(s->res, s->row, col);
  switch ((int)pq.ftype(s->res, col)) {
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
  case OID_INT8: return (double)pg_integer(s, col);
  default: return strtod(p, NULL);
  }
#else
  (void)s, (void)col;
  return LM_NAN;
#endif
}

static const char *pg_text(lm_stmt *s, int col) {
#ifdef LUMEN_HAVE_PQ
  if (!s->res || pq.getisnull(s->res, s->row, col)) return "";
  return pq.getvalue(s->res, s->row, col);
#else
  (void)s, (void)col;
  return "";
#endif
}

static const void *pg_blob(lm_stmt *s, int col, size_t *len) {
#ifdef LUMEN_HAVE_PQ
  if (!s->res || pq.getisnull(s->res, s->row, col)) {
    *len = 0;
    return "";
  }
  *len = (size_t)pq.getlength(s->res, s->row, col);
  return pq.getvalue(s->res, s->row, col);
#else
  (void)s, (void)col;
  *len = 0;
  return "";
#endif
}

const lm_sql_engine lm_sql_postgres = {
    pg_open, pg_close,   pg_exec, pg_prepare,  pg_bind, pg_step, pg_reset, pg_finalize,
    pg_columns, pg_column_name, pg_kind, pg_integer, pg_real, pg_text, pg_blob,
};
