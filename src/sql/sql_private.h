/*
 * sql_private.h - what the files of src/sql share and nothing else reads:
 * the connection and the statement, and the table of functions each
 * engine fills (sqlite.c, postgres.c). sql.c holds the interface of sql.h
 * and calls the engine of the connection through its table; a statement
 * belongs to the engine of the connection that prepared it.
 */
#ifndef LUMEN_SQL_PRIVATE_H
#define LUMEN_SQL_PRIVATE_H
#include <sqlite3.h>

#include "sql/sql.h"

/* The advisory-lock key that serializes schema creation on PostgreSQL
 * (the bytes of "lumen"). */
#define LM_SQL_SCHEMA_LOCK "465826571630"

/* libpq's handles (libpq-fe.h names them the same). */
typedef struct pg_conn PGconn;
typedef struct pg_result PGresult;

enum { ENGINE_SQLITE, ENGINE_PG };

typedef struct lm_sql_engine lm_sql_engine;

struct lm_sql {
  int engine;
  const lm_sql_engine *ops; /* the functions of the engine */
  sqlite3 *db;
  int owned;
  PGconn *pg;
  char where[512];
};

struct lm_stmt {
  lm_sql *sql;
  sqlite3_stmt *st;
  int last_rc;
  int64_t changes; /* the rows the last run changed; set by step, both engines */
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

/* A parameter as the interface received it: kind 'i' (i), 'r' (d, a
 * finite or infinite double), 't' (p, NUL-terminated, n its length), 'b'
 * (p, n bytes, never NULL; borrowed: SQLite may keep the pointer) or 'n'
 * (NULL). */
typedef struct lm_sql_value {
  int kind;
  int64_t i;
  double d;
  const void *p;
  size_t n;
  int borrowed;
} lm_sql_value;

/* An engine: each function does for one engine what the function of
 * sql.h of the same name does (the statement functions get only
 * statements of the engine's connections). */
struct lm_sql_engine {
  /* open: connect s (allocated, zeroed) to url; on success *out = s, on
   * failure s is freed. */
  lm_status (*open)(lm_sql *s, const char *url, int mode, lm_sql **out, lm_diag *diag);
  /* close: release the connection, not s. */
  void (*close)(lm_sql *s);
  lm_status (*exec)(lm_sql *s, const char *text, int schema, lm_diag *diag);
  /* prepare: fill st (allocated, zeroed, st->sql set); on failure the
   * caller frees st with lm_stmt_free. */
  lm_status (*prepare)(lm_stmt *st, const char *text, lm_diag *diag);
  void (*bind)(lm_stmt *st, int i, const lm_sql_value *v);
  int (*step)(lm_stmt *st);
  void (*reset)(lm_stmt *st);
  /* finalize: release what prepare and step allocated, not st. */
  void (*finalize)(lm_stmt *st);
  int (*columns)(const lm_stmt *st);
  const char *(*column_name)(lm_stmt *st, int col);
  int (*kind)(lm_stmt *st, int col);
  int64_t (*int64)(lm_stmt *st, int col);
  double (*real)(lm_stmt *st, int col);
  const char *(*text)(lm_stmt *st, int col);
  const void *(*blob)(lm_stmt *st, int col, size_t *len);
};

/* The two engines. */
extern const lm_sql_engine lm_sql_sqlite;
extern const lm_sql_engine lm_sql_postgres;

#endif
