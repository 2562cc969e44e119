/*
 * csv.h - the CSV column loader: a file or buffer read into an lm_table,
 * column by column, numbers converted as a correctly rounding strtod
 * would, and optionally left in the file (deferred) until a view fetches
 * them. Errors name the file, line, column and field.
 */
#ifndef LUMEN_CSV_H
#define LUMEN_CSV_H

#include <stddef.h>

#include "base/base.h"
#include "model/model.h"

/* Options of the CSV loader. A zeroed struct asks for the defaults. */
typedef struct lm_csv_options {
  size_t max_record;              /* longest record in bytes (default 64 MiB) */
  const char *const *text_columns;/* NULL-terminated names whose cells are
                                     also kept as text (e.g. "Kernel_Name") */
  int all_text;                   /* keep every column's cells as text */
  int threads;                    /* 0: decide from the file size; 1: serial */
  int defer;                      /* leave the values of every numeric column
                                     not named in eager_columns in the file
                                     (lm_column.deferred), read later through
                                     lm_table_fetch; their cells are still checked
                                     and counted, not converted. lm_csv_parse:
                                     the buffer must then outlive the table */
  const char *const *eager_columns; /* NULL-terminated: columns loaded anyway */
  size_t window;                  /* lm_csv_read: bytes read from the file at
                                     once (0: 512 KiB; small ones for tests) */
  int (*load_want)(void *ctx, const char *table, const char *column);
                                  /* with defer: the columns it accepts (nonzero
                                     for the table's name, the file's without
                                     ".csv") are loaded after all, converted as
                                     the file is indexed, when they fit
                                     load_cap bytes as doubles; else they stay
                                     deferred */
  void *load_ctx;
  size_t load_cap;                /* 0: 384 MiB */
} lm_csv_options;

/* lm_csv_read: load the CSV file at path into a new table (*out, free with
 * lm_table_free). The first record is the header. Every record must have
 * as many fields as the header; a malformed file gives LM_EPARSE with the
 * file, line and column in diag. Numbers are read exactly like a correctly
 * rounding strtod. */
lm_status lm_csv_read(const char *path, const lm_csv_options *options,
                      lm_table **out, lm_diag *diag);

/* lm_csv_parse: the same on an in-memory buffer; `path` names it in
 * diagnostics and in the table. data need not be NUL-terminated. */
lm_status lm_csv_parse(const char *data, size_t len, const char *path,
                       const lm_csv_options *options, lm_table **out,
                       lm_diag *diag);

/* lm_parse_number: parse one CSV cell [s, e) as a number the way the
 * reference tool's CSV reader does. Returns 1 and sets *value (and *is_int
 * when the text is an integer) for a number, 2 for a missing-value token
 * (blank, "nan", "NULL", ...; *value = NaN), 3 for a decimal number out
 * of the range of a double ("1e309", 400 nines), 0 for other text. */
int lm_parse_number(const char *s, const char *e, double *value, int *is_int);

/* A CSV file read one record at a time (lm_csv_rows_*): for long formats
 * folded as they stream, whatever the file's size. */
typedef struct lm_csv_rows lm_csv_rows;

/* lm_csv_rows_open: open path (a regular file, never blocking on a FIFO)
 * for reading records of at most max_record bytes (0: 64 MiB). */
lm_status lm_csv_rows_open(const char *path, size_t max_record, lm_csv_rows **out, lm_diag *diag);
/* lm_csv_rows_next: the next record's fields (*n_fields of them, unquoted
 * and NUL-terminated, valid until the next call); *n_fields 0 at the end
 * of the file. Blank lines are skipped, a byte-order mark is dropped.
 * Errors (a read error, an unclosed quote, a record over the limit) name
 * the file and line. */
lm_status lm_csv_rows_next(lm_csv_rows *rows, const char *const **fields, size_t *n_fields, lm_diag *diag);
/* lm_csv_rows_line: the line on which the record last returned starts. */
long lm_csv_rows_line(const lm_csv_rows *rows);
/* lm_csv_rows_offset: the byte offset in the file after the record last
 * returned (0 before the first). */
size_t lm_csv_rows_offset(const lm_csv_rows *rows);
/* lm_csv_rows_size: the file's size in bytes when it is a regular file,
 * else 0. */
size_t lm_csv_rows_size(const lm_csv_rows *rows);
/* lm_csv_rows_path: the file's path, as given to lm_csv_rows_open. */
const char *lm_csv_rows_path(const lm_csv_rows *rows);
/* lm_csv_rows_close: close the file and free the reader. NULL is a no-op. */
void lm_csv_rows_close(lm_csv_rows *rows);

#endif
