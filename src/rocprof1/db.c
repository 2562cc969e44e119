/*
 * db.c - results.db, the SQLite copy rocprof (v1) makes of results.csv:
 * one table, KERN, with the columns of results.csv (kernel names kept
 * with their quotes, "\"name\""). Its rows go through the same column
 * mapping as the CSV file's records; a row's number stands for the line.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rocprof1/rocprof1_private.h"
#include "sql/sql.h"

enum { MAX_COLUMNS = 4096 };

/* The file starts as an SQLite database does. */
static int sqlite_magic(const char *path) {
  int fd = -1;
  if (lm_open_read(path, 0, &fd, NULL, NULL) != LM_OK) return 0;
  char head[16];
  ssize_t n = read(fd, head, sizeof head);
  close(fd);
  return n == (ssize_t)sizeof head && memcmp(head, "SQLite format 3", 16) == 0;
}

int lm_r1_is_db(const char *path) {
  if (!sqlite_magic(path)) return 0;
  lm_sql *sql = NULL;
  lm_stmt *st = NULL;
  int yes = 0;
  if (lm_sql_open(path, LM_DB_READ_FIXED, &sql, NULL) != LM_OK) return 0;
  if (lm_sql_prepare(sql, "SELECT * FROM KERN LIMIT 0", &st, NULL) == LM_OK) {
    int n = lm_stmt_columns(st);
    const char *names[3] = {"Index", "KernelName", "gpu-id"};
    yes = 1;
    for (int k = 0; k < 3 && yes; k++) {
      int found = 0;
      for (int c = 0; c < n && !found; c++) found = strcmp(lm_stmt_column_name(st, c), names[k]) == 0;
      yes = found;
    }
  }
  lm_stmt_free(st);
  lm_sql_close(sql);
  return yes;
}

/* A kernel name without the quotes rocprof keeps in the database. */
static const char *unquote(const char *s, char **buf, size_t *cap) {
  size_t n = strlen(s);
  if (n < 2 || s[0] != '"' || s[n - 1] != '"') return s;
  if (n > *cap) {
    char *grown = lm_realloc(*buf, n);
    if (!grown) return NULL;
    *buf = grown;
    *cap = n;
  }
  memcpy(*buf, s + 1, n - 2);
  (*buf)[n - 2] = '\0';
  return *buf;
}

lm_status lm_r1_db_read(lm_r1_rows *r, const char *path, lm_diag *diag) {
  lm_sql *sql = NULL;
  lm_stmt *st = NULL;
  lm_r1_header h = {0};
  const char **fields = NULL;
  char *name = NULL;
  size_t name_cap = 0;
  lm_status status = lm_sql_open(path, LM_DB_READ_FIXED, &sql, diag);
  if (status != LM_OK) return status;
  if ((status = lm_sql_prepare(sql, "SELECT * FROM KERN ORDER BY rowid", &st, diag)) != LM_OK) goto done;
  int n = lm_stmt_columns(st);
  if (n <= 0 || n > MAX_COLUMNS) {
    status = lm_fail(diag, LM_EDATA, path, "table KERN has %d columns", n);
    goto done;
  }
  fields = lm_calloc((size_t)n, sizeof *fields);
  if (!fields) {
    status = lm_oom(diag, path);
    goto done;
  }
  for (int c = 0; c < n; c++) fields[c] = lm_stmt_column_name(st, c);
  if (!lm_r1_results_header(fields, (size_t)n)) {
    status = lm_fail(diag, LM_EPARSE, path, "table KERN lacks Index, KernelName or gpu-id");
    goto done;
  }
  if ((status = lm_r1_header_read(r, fields, (size_t)n, &h, diag)) != LM_OK) goto done;
  long row = 0;
  int step;
  while ((step = lm_stmt_step(st)) == 1) {
    row++;
    for (int c = 0; c < n; c++) fields[c] = lm_stmt_text(st, c);
    fields[h.kernel] = unquote(fields[h.kernel], &name, &name_cap);
    if (!fields[h.kernel]) {
      status = lm_oom(diag, path);
      goto done;
    }
    if ((status = lm_r1_record(r, path, row, &h, fields, (size_t)n, diag)) != LM_OK) goto done;
  }
  if (step < 0) status = lm_stmt_error(st, "reading table KERN", diag);
done:
  lm_free(name);
  lm_free(fields);
  lm_r1_header_free(&h);
  lm_stmt_free(st);
  lm_sql_close(sql);
  return status;
}
