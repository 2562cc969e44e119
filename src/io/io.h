/*
 * io.h - reading profiling data from disk: the CSV column loader and the
 * Omniperf/rocprofiler-compute workload folder reader.
 *
 * Readers never write into the folders they read.
 */
#ifndef LUMEN_IO_H
#define LUMEN_IO_H

#include <stddef.h>

#include "base/base.h"
#include "model/model.h"
#include "io/sql.h"

/* Options of the CSV loader. A zeroed struct asks for the defaults. */
typedef struct lm_csv_options {
  size_t max_record;              /* longest record in bytes (default 64 MiB) */
  const char *const *text_columns;/* NULL-terminated names whose cells are
                                     also kept as text (e.g. "Kernel_Name") */
  int all_text;                   /* keep every column's cells as text */
  int threads;                    /* 0: decide from the file size; 1: serial */
} lm_csv_options;

/* lm_rocpd_is_long: 1 if pmc has the rocpd-based profiler's one row per
 * counter layout (Counter_Name and Counter_Value columns). */
int lm_rocpd_is_long(const lm_table *pmc);

/* lm_rocpd_pivot: that layout turned into one row per dispatch, the way the
 * reference tool 3.3 does it (see rocpd.c). Errors: a launch column missing
 * (LM_EDATA, naming it), out of memory. */
lm_status lm_rocpd_pivot(const lm_table *in, lm_table **out, lm_diag *diag);

/* lm_rocpd_n_levels: how many accumulate tables lm_rocpd_levels makes from
 * a pivoted rocpd table (its <name>_ACCUM columns). */
size_t lm_rocpd_n_levels(const lm_table *wide);

/* lm_rocpd_levels: for each <name>_ACCUM column of wide, a table <name>
 * holding wide's numeric columns with SQ_ACCUM_PREV_HIRES = <name>_ACCUM
 * (the reference's reading of accumulate metrics in this layout). out has
 * room for lm_rocpd_n_levels(wide) tables; *n_out is set to the count. The
 * caller frees them. Errors: out of memory. */
lm_status lm_rocpd_levels(const lm_table *wide, lm_table **out, size_t *n_out,
                          lm_diag *diag);

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

/* lm_workload_read: load an Omniperf/rocprofiler-compute workload folder:
 * pmc_perf.csv, the SQ_*.csv accumulate tables, sysinfo.csv and, when
 * present, roofline.csv. Refuses folders the reference tool refuses (no
 * pmc_perf.csv; every row with a missing cell). */
lm_status lm_workload_read(const char *dir, lm_workload **out, lm_diag *diag);

/* lm_workload_export_omniperf: write w as a new folder `dir` in the
 * reference tool's layout (pmc_perf.csv, SQ_*.csv, sysinfo.csv,
 * roofline.csv). Refuses a folder that exists. */
lm_status lm_workload_export_omniperf(const lm_workload *w, const char *dir, lm_diag *diag);

/* ------------------------------------------------ lumen workloads (SQLite) */

/* A lumen workload folder holds its data in this file. */
#define LM_WORKLOAD_DB "lumen.db"



/* A workload's origin starts with this when a simulated device produced
 * it; the recording it replayed follows. */
#define LM_ORIGIN_SIMULATED "simulated device replaying "

/* The most dispatches a workload in a lumen database may claim; a larger
 * or negative count is a corrupt database. */
#define LM_DB_MAX_DISPATCHES ((int64_t)1 << 32)

/* lm_db_open: open a lumen database read-only (LM_DB_READ), for writing
 * (LM_DB_WRITE), or creating it and its schema if needed (LM_DB_CREATE).
 * Refuses files of another format or schema version. */
lm_status lm_db_open(const char *path, int mode, sqlite3 **out, lm_diag *diag);
void lm_db_close(sqlite3 *db);

/* lm_db_schema: create the schema (create set) and check the database is
 * lumen's, of this schema version. Works on SQLite and PostgreSQL. */
lm_status lm_db_schema(lm_sql *sql, int create, lm_diag *diag);

/* lm_db_write_workload: add a loaded workload under `name` in one
 * transaction (nothing is written if it fails). team and origin may be
 * NULL. *id_out (may be NULL) receives its id. */
lm_status lm_db_write_workload(lm_sql *sql, const lm_workload *w, const char *name, const char *team,
                               const char *origin, int64_t *id_out, lm_diag *diag);

/* lm_db_create_workload: the workload's row only (complete = 0 while a
 * profile is still collecting); *id_out receives its id. */
lm_status lm_db_create_workload(lm_sql *sql, const char *name, const char *team, const char *source,
                                const char *origin, const char *arch, const char *gpu_model,
                                size_t n_dispatches, int complete, int64_t *id_out, lm_diag *diag);

/* lm_db_write_tables: system info, kernels, dispatches, regions and
 * counter columns of w under workload id wid, inside the caller's
 * transaction. */
lm_status lm_db_write_tables(lm_sql *sql, int64_t wid, const lm_workload *w, lm_diag *diag);

/* lm_db_write_provenance: a lumen profile's executions (w->exec: the
 * executions of each row, their shared counters, the set of each value)
 * and the clock source of each row; nothing when w has neither. */
lm_status lm_db_write_provenance(lm_sql *sql, int64_t wid, const lm_workload *w, lm_diag *diag);
/* lm_db_read_provenance: the same, read back into w (from w's arena);
 * w->exec and w->row_clock_source stay NULL for a workload without them. */
lm_status lm_db_read_provenance(lm_sql *sql, int64_t wid, lm_workload *w, lm_diag *diag);

/* lm_db_find_workload: the id, dispatch count and completeness of the
 * workload `name` (NULL: the first one). */
lm_status lm_db_find_workload(lm_sql *sql, const char *name, int64_t *wid, size_t *n_rows, int *complete,
                              lm_diag *diag);

/* lm_db_read_info: the workload's system info, regions and dispatch count
 * (an empty pmc_perf table of that many rows), without counter columns. */
lm_status lm_db_read_info(lm_sql *sql, const char *name, lm_workload **out, lm_diag *diag);

/* lm_db_read_workload: load the workload `name` (NULL: the first one) as
 * the same tables an Omniperf folder gives. */
lm_status lm_db_read_workload(lm_sql *sql, const char *name, lm_workload **out, lm_diag *diag);

#endif
