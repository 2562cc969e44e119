/*
 * sql.c - the interface of sql.h over two engines: SQLite (sqlite.c),
 * called directly, and PostgreSQL (postgres.c), through libpq loaded on
 * the first connection. A connection holds the table of its engine's
 * functions (sql_private.h); what both engines do alike (the transaction
 * statements, NaN and NULL parameters, errors) is here, once.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "sql/sql_private.h"

static int is_pg_url(const char *url) {
  return strncmp(url, "postgresql://", 13) == 0 || strncmp(url, "postgres://", 11) == 0;
}

/* ----------------------------------------------------------- connection */

lm_status lm_sql_open(const char *url, int mode, lm_sql **out, lm_diag *diag) {
  *out = NULL;
  lm_sql *s = lm_calloc(1, sizeof *s);
  if (!s) return lm_oom(diag, url);
  s->ops = is_pg_url(url) ? &lm_sql_postgres : &lm_sql_sqlite;
  return s->ops->open(s, url, mode, out, diag);
}

void lm_sql_close(lm_sql *s) {
  if (!s) return;
  s->ops->close(s);
  lm_free(s);
}

const char *lm_sql_where(const lm_sql *s) { return s->where; }
int lm_sql_is_postgres(const lm_sql *s) { return s->engine == ENGINE_PG; }

lm_status lm_sql_exec(lm_sql *s, const char *text, int schema, lm_diag *diag) {
  return s->ops->exec(s, text, schema, diag);
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
  if (!s) return lm_oom(diag, sql->where);
  s->sql = sql;
  lm_status st = sql->ops->prepare(s, text, diag);
  if (st != LM_OK) {
    lm_stmt_free(s);
    return st;
  }
  *out = s;
  return LM_OK;
}

void lm_stmt_bind_int64(lm_stmt *s, int i, int64_t v) {
  lm_sql_value value = {.kind = 'i', .i = v};
  s->sql->ops->bind(s, i, &value);
}

void lm_stmt_bind_double(lm_stmt *s, int i, double v) {
  if (isnan(v)) {
    lm_stmt_bind_null(s, i);
    return;
  }
  lm_sql_value value = {.kind = 'r', .d = v};
  s->sql->ops->bind(s, i, &value);
}

void lm_stmt_bind_text(lm_stmt *s, int i, const char *v) {
  if (!v) {
    lm_stmt_bind_null(s, i);
    return;
  }
  lm_sql_value value = {.kind = 't', .p = v, .n = strlen(v)};
  s->sql->ops->bind(s, i, &value);
}

void lm_stmt_bind_blob(lm_stmt *s, int i, const void *p, size_t n) {
  lm_sql_value value = {.kind = 'b', .p = n ? p : "", .n = n};
  s->sql->ops->bind(s, i, &value);
}

void lm_stmt_bind_blob_borrowed(lm_stmt *s, int i, const void *p, size_t n) {
  lm_sql_value value = {.kind = 'b', .p = n ? p : "", .n = n, .borrowed = 1};
  s->sql->ops->bind(s, i, &value);
}

void lm_stmt_bind_null(lm_stmt *s, int i) {
  lm_sql_value value = {.kind = 'n'};
  s->sql->ops->bind(s, i, &value);
}

int lm_stmt_step(lm_stmt *s) {
  if (s->bind_status != LM_OK) {
    snprintf(s->error, sizeof s->error, "a parameter could not be bound: %s", lm_strerror(s->bind_status));
    return -1;
  }
  return s->sql->ops->step(s);
}

void lm_stmt_reset(lm_stmt *s) { s->sql->ops->reset(s); }

void lm_stmt_free(lm_stmt *s) {
  if (!s) return;
  s->sql->ops->finalize(s);
  lm_free(s);
}

lm_status lm_stmt_error(lm_stmt *s, const char *what, lm_diag *diag) {
  return lm_fail(diag, s->bind_status != LM_OK ? s->bind_status : LM_EIO, s->sql->where, "%s: %s", what,
                 s->error[0] ? s->error : "database error");
}

lm_status lm_stmt_fail(lm_stmt *s, lm_diag *diag) {
  return lm_fail(diag, s->bind_status != LM_OK ? s->bind_status : LM_EIO, s->sql->where, "%s",
                 s->error[0] ? s->error : "database error");
}

int lm_stmt_unique_violation(const lm_stmt *s) { return s->unique; }

int64_t lm_stmt_changes(lm_stmt *s) { return s->changes; }

/* ----------------------------------------------------------------- rows */

int lm_stmt_columns(const lm_stmt *s) { return s->sql->ops->columns(s); }

const char *lm_stmt_column_name(lm_stmt *s, int col) { return s->sql->ops->column_name(s, col); }

int lm_stmt_kind(lm_stmt *s, int col) { return s->sql->ops->kind(s, col); }

int lm_stmt_is_null(lm_stmt *s, int col) { return lm_stmt_kind(s, col) == 'n'; }

int64_t lm_stmt_int64(lm_stmt *s, int col) { return s->sql->ops->int64(s, col); }

double lm_stmt_double(lm_stmt *s, int col) { return s->sql->ops->real(s, col); }

const char *lm_stmt_text(lm_stmt *s, int col) { return s->sql->ops->text(s, col); }

const void *lm_stmt_blob(lm_stmt *s, int col, size_t *len) { return s->sql->ops->blob(s, col, len); }
