/*
 * csv_parse.h - what the files of src/csv share while loading a table:
 * the parse context (the columns and what to do with each), a part (the
 * records one thread parses, with its own counters and interned text)
 * and the functions over a part. csv.c sizes the table and runs the parts;
 * records.c parses their records.
 */
#ifndef LUMEN_CSV_PARSE_H
#define LUMEN_CSV_PARSE_H
#include <stddef.h>
#include <stdint.h>

#include "csv/csv.h"

/* Parsed bytes of a mapping are given back in chunks of this size. */
#define RELEASE_CHUNK ((size_t)32 << 20)
/* The first text cell of a numeric column is kept up to this many bytes. */
#define FIRST_TEXT_MAX 64

typedef struct parse_ctx {
  const char *data;
  size_t len;
  const char *path;
  size_t max_record;
  size_t n_cols;
  lm_column *cols;     /* shared column arrays */
  uint8_t *keep_text;  /* per column: intern its cells */
  uint8_t *row_missing;
  int release_pages;   /* madvise parsed pages away (mapped files) */
  uint8_t *skip;       /* per column: deferred, checked but not converted */
  size_t *next_fast;   /* per column: the first one from it on that is loaded
                          but stepped over with the deferred (n_cols: none) */
  size_t *skip_run;    /* per column: the deferred (or next_fast) columns from it
                          on before the
                          next loaded one (the last column excluded) */
  size_t *row_offset;  /* per row: where its record starts (deferred tables) */
  int fd;              /* the open file, read through windows; -1: data only */
  size_t window;       /* bytes read at once */
} parse_ctx;

/* What one thread parses: records [start, end) of the data, written to
 * rows first_row.. . Text cells are interned per thread. */
typedef struct part {
  parse_ctx *ctx;
  size_t start, end;
  size_t first_row;
  size_t expect_rows;  /* newline count of the range: an upper bound */
  size_t rows;         /* records parsed */
  size_t row;          /* the next record's row */
  long first_line;     /* line number of the first record */
  long line;           /* the next record's line */
  int irregular;       /* met a newline inside quotes */
  lm_map *intern;      /* text -> local id */
  lm_arena *arena;
  const char **strings;
  size_t n_strings, cap_strings;
  /* per column counters, merged after the threads join */
  size_t *n_missing, *n_text;
  long *first_text_line;
  const char **first_text;
  uint8_t *not_int;
  lm_status status;
  lm_diag diag;
} part;

/* lm_csv_part_init: an empty part of ctx whose strings go to arena
 * (borrowed); LM_ENOMEM when its counters cannot be allocated (call
 * lm_csv_part_fini either way). */
lm_status lm_csv_part_init(part *pt, parse_ctx *ctx, lm_arena *arena);

/* lm_csv_part_fini: frees what lm_csv_part_init allocated, not the arena. */
void lm_csv_part_fini(part *pt);

/* lm_csv_parse_part: the thread body: parses records [start, end) of the
 * part (arg, a part *) into rows first_row.., through windows when the
 * file is open and the part bounded; the outcome in its status, diag,
 * rows and irregular. Returns NULL. */
void *lm_csv_parse_part(void *arg);

/* lm_csv_intern_text: the id of text s[0, n) among the part's strings,
 * added (copied into its arena) when new; LM_ENOMEM. */
lm_status lm_csv_intern_text(part *pt, const char *s, size_t n, int32_t *id);

#endif
