/*
 * sql.h - one small SQL interface over SQLite and PostgreSQL, so that the
 * store's schema, writes and reads are written once and give the same
 * results on both.
 *
 * Statements use '?' placeholders (the PostgreSQL driver numbers them),
 * the portable subset of SQL both engines share (CREATE TABLE IF NOT
 * EXISTS, INSERT ... ON CONFLICT, RETURNING), and the type words INTEGER,
 * REAL, TEXT and BLOB, which the PostgreSQL driver maps to BIGINT, DOUBLE
 * PRECISION, TEXT and BYTEA in schema statements. Values come back typed:
 * integers, doubles, text and blobs, NULL testable.
 */
#ifndef LUMEN_SQL_H
#define LUMEN_SQL_H

#include <stddef.h>
#include <stdint.h>

#include "base/base.h"

typedef struct lm_sql lm_sql;
typedef struct lm_stmt lm_stmt;
typedef struct sqlite3 sqlite3;

/* Open modes (also used by lm_db_open). */
enum { LM_DB_READ = 0, LM_DB_CREATE = 1, LM_DB_WRITE = 2, LM_DB_READ_FIXED = 3 };

/* lm_sql_open: a SQLite file path or a postgresql:// (postgres://) URL.
 * LM_DB_CREATE creates a missing SQLite file; schema creation is the
 * caller's (lm_db_schema). LM_DB_READ_FIXED reads, as LM_DB_READ, a file
 * that nobody writes while it is read (a finished rank's part): opened
 * immutable (no locks, no checks for changes) when no journal or WAL file
 * lies beside it, else as LM_DB_READ; messages name the file the same. */
lm_status lm_sql_open(const char *url, int mode, lm_sql **out, lm_diag *diag);
/* lm_sql_wrap_sqlite: use an open SQLite handle (not closed by lm_sql_close). */
lm_sql *lm_sql_wrap_sqlite(sqlite3 *db);
void lm_sql_close(lm_sql *sql);
/* lm_sql_detach: hand the SQLite handle of sql to the caller (who closes
 * it with sqlite3_close) and free sql; NULL for PostgreSQL. */
sqlite3 *lm_sql_detach(lm_sql *sql);
/* lm_sql_where: the database as shown in messages (a path, or the URL
 * without its password). */
const char *lm_sql_where(const lm_sql *sql);
int lm_sql_is_postgres(const lm_sql *sql);
/* lm_sql_truncated: 1 when sql is an SQLite file shorter than its header
 * declares (a copy cut short), with the sizes in why; else 0. */
int lm_sql_truncated(const lm_sql *sql, char *why, size_t cap);
/* lm_sql_name_by_file: from now on messages (and lm_sql_where) name an
 * SQLite database by its file as SQLite resolved it (an absolute path; ""
 * for one in memory), as lm_sql_wrap_sqlite does, rather than by the path
 * it was opened with; nothing changes for PostgreSQL. */
void lm_sql_name_by_file(lm_sql *sql);

/* lm_sql_exec: statements without results (several, separated by ';').
 * With schema set, type words are mapped for the engine. */
lm_status lm_sql_exec(lm_sql *sql, const char *text, int schema, lm_diag *diag);
/* Transactions: begin takes the write lock at once (no upgrade deadlocks). */
lm_status lm_sql_begin(lm_sql *sql, lm_diag *diag);
lm_status lm_sql_commit(lm_sql *sql, lm_diag *diag);
void lm_sql_rollback(lm_sql *sql);

lm_status lm_sql_prepare(lm_sql *sql, const char *text, lm_stmt **out, lm_diag *diag);
/* Binding, 1-based. Text and blobs are copied. A NaN double binds NULL. */
void lm_stmt_bind_int64(lm_stmt *s, int i, int64_t v);
void lm_stmt_bind_double(lm_stmt *s, int i, double v);
void lm_stmt_bind_text(lm_stmt *s, int i, const char *v); /* NULL binds NULL */
void lm_stmt_bind_blob(lm_stmt *s, int i, const void *p, size_t n);
/* lm_stmt_bind_blob_borrowed: the same without the copy on SQLite (large
 * blobs): p must stay as it is until the statement is freed or the
 * parameter bound again. */
void lm_stmt_bind_blob_borrowed(lm_stmt *s, int i, const void *p, size_t n);
void lm_stmt_bind_null(lm_stmt *s, int i);
/* lm_stmt_step: 1 for a row, 0 when done, -1 on an error (then
 * lm_stmt_error fills a diagnostic). */
int lm_stmt_step(lm_stmt *s);
/* lm_stmt_reset: ready to bind and run again. */
void lm_stmt_reset(lm_stmt *s);
void lm_stmt_free(lm_stmt *s);
lm_status lm_stmt_error(lm_stmt *s, const char *what, lm_diag *diag);
/* lm_stmt_fail: the same with the engine's message alone (no `what`). */
lm_status lm_stmt_fail(lm_stmt *s, lm_diag *diag);
/* lm_stmt_unique_violation: the last step broke a UNIQUE or PRIMARY KEY
 * constraint. */
int lm_stmt_unique_violation(const lm_stmt *s);
/* lm_stmt_changes: the rows changed by s, an INSERT, UPDATE or DELETE
 * without RETURNING whose last step ran it to its end (lm_stmt_step gave
 * 0); 0 for a query, and after lm_stmt_reset. */
int64_t lm_stmt_changes(lm_stmt *s);

/* Columns of the current row, 0-based. */
int lm_stmt_columns(const lm_stmt *s);
const char *lm_stmt_column_name(lm_stmt *s, int col);
int lm_stmt_is_null(lm_stmt *s, int col);
int64_t lm_stmt_int64(lm_stmt *s, int col);
double lm_stmt_double(lm_stmt *s, int col); /* NULL reads NaN */
const char *lm_stmt_text(lm_stmt *s, int col); /* NULL reads "" */
const void *lm_stmt_blob(lm_stmt *s, int col, size_t *len);
/* lm_stmt_kind: 'i' integer, 'r' real, 't' text, 'b' blob, 'n' NULL. */
int lm_stmt_kind(lm_stmt *s, int col);

/* Scans: a table's records read straight from an SQLite file's pages
 * (scan.c), for tables of millions of rows read once whole. */
typedef struct lm_sql_scan lm_sql_scan;
/* lm_sql_scan_open: a scan, in rowid order, of rowid table `table` (its
 * name in sqlite_master, not a view) of the SQLite file sql has open,
 * holding a read transaction until freed. LM_ENOTFOUND, with no
 * diagnostic, when it cannot be read so (PostgreSQL, a database in
 * memory, a write-ahead log or journal beside the file, text not UTF-8,
 * no such table, WITHOUT ROWID, generated columns): the caller reads it
 * through SQL. */
lm_status lm_sql_scan_open(lm_sql *sql, const char *table, lm_sql_scan **out, lm_diag *diag);
/* lm_sql_scan_memory: a scan over an SQLite file's image in memory (kept
 * by the caller) from b-tree root page root, column ipk being the rowid
 * (-1: none), without column names; where names it in errors. */
lm_status lm_sql_scan_memory(const void *image, size_t size, const char *where, uint32_t root, int ipk,
                             lm_sql_scan **out, lm_diag *diag);
/* lm_sql_scan_column: the position of column name in the table, or -1. */
int lm_sql_scan_column(const lm_sql_scan *s, const char *name);
/* lm_sql_scan_next: 1 with the next record current, 0 after the last, -1
 * (diagnostic naming the file and page) on a damaged page. */
int lm_sql_scan_next(lm_sql_scan *s, lm_diag *diag);
/* Values of the current record's column col, converted as SQLite's
 * column functions convert them; a column the record lacks (one added to
 * the table after the row) reads its DEFAULT as SQLite reads it (NULL
 * without one). Text is not NUL-terminated and lives until the next
 * record (NULL for NULL and numbers). */
int lm_sql_scan_is_null(const lm_sql_scan *s, int col);
int64_t lm_sql_scan_int64(lm_sql_scan *s, int col);
double lm_sql_scan_double(lm_sql_scan *s, int col); /* NULL reads NaN */
const char *lm_sql_scan_text(lm_sql_scan *s, int col, size_t *len);
void lm_sql_scan_free(lm_sql_scan *s);

#endif
