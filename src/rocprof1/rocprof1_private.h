/*
 * rocprof1_private.h - shared by the files of src/rocprof1: the table of
 * dispatches as it grows (the shared fold of src/fold: one row per Index,
 * columns by name; a value never set is NaN, "not collected").
 */
#ifndef LUMEN_ROCPROF1_PRIVATE_H
#define LUMEN_ROCPROF1_PRIVATE_H

#include <stddef.h>
#include <stdint.h>

#include "base/base.h"
#include "fold/fold.h"
#include "model/model.h"
#include "rocprof1/rocprof1.h"

/* The rows of a rocprof read: the shared table (src/fold), keyed by Index
 * text, the Index values its first fact, every other column (facts
 * included, by their pmc_perf names) a counter. */
typedef struct lm_r1_rows {
  lm_fold *t;
} lm_r1_rows;

enum { LM_R1_DISPATCH = 0 }; /* the fact holding each row's Index */

lm_status lm_r1_rows_new(const char *path, lm_r1_rows **out, lm_diag *diag);
void lm_r1_rows_free(lm_r1_rows *rows);
/* lm_r1_finish: the workload of rows: pmc_perf (Dispatch_ID, the facts
 * fact_names present, Kernel_Name, every other column), GPU ids numbered
 * in info's order of GPU agents (else of their ids), and system
 * information from info, else assumed for arch. where names the files. */
lm_status lm_r1_finish(lm_r1_rows *rows, const lm_rocminfo *info, const char *info_path, const char *arch,
                       const char *const *fact_names, int n_facts, lm_workload **out, lm_diag *diag);

/* lm_r1_results_header: 1 for a header of a results file (Index,
 * KernelName, gpu-id). */
int lm_r1_results_header(const char *const *fields, size_t n);

/* The columns of a results header: where each pmc_perf column (or
 * counter) of it goes. */
typedef struct lm_r1_header {
  long index, kernel;
  size_t n;
  long *col;    /* per field: the rows' column, -1 for a field not read */
  int *counter; /* per field: 1 for a counter (a number or blank) */
  long *alias;  /* per field: the "_sum" column of a counter, or -1 */
  char **name;  /* per field: its name in the file (owned, for errors) */
} lm_r1_header;

/* lm_r1_header_read: the columns of header fields f (n of them) in rows:
 * the pmc_perf column of each fixed one, every other one a counter. */
lm_status lm_r1_header_read(lm_r1_rows *rows, const char *const *f, size_t n, lm_r1_header *h, lm_diag *diag);
void lm_r1_header_free(lm_r1_header *h);
/* lm_r1_record: one record (fields f, n of them; at line of path) into
 * rows: its Index's row (kernel names must agree), its facts where not
 * yet known, its counters (the last one read wins). */
lm_status lm_r1_record(lm_r1_rows *rows, const char *path, long line, const lm_r1_header *h, const char *const *f,
                       size_t n, lm_diag *diag);

/* lm_r1_stats_header: 1 for a header of rocprof's kernel statistics
 * (Name, Calls, TotalDurationNs). lm_r1_is_stats: 1 when the CSV file at
 * path has one. (stats.c) */
int lm_r1_stats_header(const char *const *fields, size_t n);
int lm_r1_is_stats(const char *path);
/* lm_r1_stats_read: the kernel statistics file at path as a workload of
 * per-kernel totals only (LM_TOTALS_SOURCE), system information assumed
 * for arch when given, else none. Errors name the file, line and field. */
lm_status lm_r1_stats_read(const char *path, const char *arch, lm_workload **out, lm_diag *diag);

/* lm_r1_is_db: 1 when path is an SQLite file with rocprof's table KERN. */
int lm_r1_is_db(const char *path);
/* lm_r1_db_read: the rows of results.db's table KERN (rocprof's copy of
 * results.csv) into rows; errors name the row as a line. */
lm_status lm_r1_db_read(lm_r1_rows *rows, const char *path, lm_diag *diag);

#endif
