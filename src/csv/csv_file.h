/*
 * csv_file.h - inside io: the file behind a CSV table loaded with deferred
 * columns (csv.c writes it, csv/fetch.c reads records back from it).
 */
#ifndef LUMEN_IO_CSV_FILE_H
#define LUMEN_IO_CSV_FILE_H
#include <stdatomic.h>
#include <stddef.h>

#include "model/model.h"

/* Bytes of the file a read asks for at once: a window stays in the
 * processor's cache while its records are parsed. */
#define LM_CSV_WINDOW ((size_t)512 << 10)

/* A reusable buffer for reading the file through windows. */
typedef struct lm_csv_window {
  size_t cap; /* bytes at data */
  char data[];
} lm_csv_window;

/* The file and where each row's record starts. */
typedef struct lm_csv_file {
  const char *data;    /* the caller's buffer, which outlives the table
                          (lm_csv_parse); NULL when fd is open */
  size_t len;
  int fd;              /* the open file, read through windows; -1: read
                          data in place */
  size_t window;       /* bytes read at once */
  size_t *row_offset;  /* n_rows offsets into data */
  size_t n_rows;
  _Atomic(lm_csv_window *) spare[2]; /* buffers kept between fetches */
} lm_csv_file;

/* lm_csv_fetch: the lm_table_fetch_fn of such tables. Records were checked
 * when the table was loaded, so a value reads as the loader would have
 * stored it: the same number, NaN for blank, missing-value tokens and text. */
lm_status lm_csv_fetch(const lm_table *t, const long *cols, size_t n_cols, const size_t *rows,
                       size_t n_rows, double *const *out, lm_diag *diag);

/* lm_csv_window_take: a buffer of at least cap bytes, from spare (a slot
 * array of two, NULL for none) when one there is large enough, else new;
 * NULL when out of memory. lm_csv_window_give: back to a free slot of
 * spare, else freed. Both safe from several threads on one spare. */
lm_csv_window *lm_csv_window_take(_Atomic(lm_csv_window *) *spare, size_t cap);
void lm_csv_window_give(_Atomic(lm_csv_window *) *spare, lm_csv_window *w);

/* lm_csv_read_at: file bytes [off, off + n) of fd into dst; *got: how many
 * there were (fewer at the end of the file). 0, or -1 on a read error
 * (errno set). */
int lm_csv_read_at(int fd, char *dst, size_t n, size_t off, size_t *got);

/* lm_csv_file_release: close the file (when open) and free the state. */
void lm_csv_file_release(void *state);

#endif
