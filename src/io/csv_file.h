/*
 * csv_file.h - inside io: the file behind a CSV table loaded with deferred
 * columns (csv.c writes it, csv_fetch.c reads records back from it).
 */
#ifndef LUMEN_IO_CSV_FILE_H
#define LUMEN_IO_CSV_FILE_H
#include <stddef.h>

#include "model/model.h"

/* The mapping of the file and where each row's record starts. */
typedef struct lm_csv_file {
  const char *data;    /* the whole file */
  size_t len;
  int mapped;          /* data is a read-only mapping the table owns (else
                          the caller's buffer, which outlives the table) */
  size_t *row_offset;  /* n_rows offsets into data */
  size_t n_rows;
} lm_csv_file;

/* lm_csv_fetch: the lm_table_fetch_fn of such tables. Records were checked
 * when the table was loaded, so a value reads as the loader would have
 * stored it: the same number, NaN for blank, missing-value tokens and text. */
lm_status lm_csv_fetch(const lm_table *t, const long *cols, size_t n_cols, const size_t *rows,
                       size_t n_rows, double *const *out, lm_diag *diag);

/* lm_csv_file_release: unmap the file (when mapped) and free the state. */
void lm_csv_file_release(void *state);

#endif
