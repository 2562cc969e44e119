/*
 * model.h - the in-memory shape of profiling data.
 *
 * A table holds one CSV file column by column: numbers as double arrays
 * (NaN marks a blank or a "nan"), text columns as ids into the table's
 * interned string list, because a kernel name repeats on thousands of
 * dispatch rows. A workload is the set of tables of one profiled run plus
 * its system information.
 *
 * Every column array belongs to the table's arena and is lent out as const.
 */
#ifndef LUMEN_MODEL_H
#define LUMEN_MODEL_H

#include <stddef.h>
#include <stdint.h>

#include "base/base.h"

/* One column of a table. */
typedef struct lm_column {
  const char *name;    /* header text, unquoted */
  double *values;      /* n_rows numbers; NaN where blank or not a number */
  int32_t *text_ids;   /* n_rows ids into the table's strings, or NULL when
                          the column held only numbers and blanks */
  size_t n_missing;    /* cells that are blank or a NaN token */
  size_t n_text;       /* cells that are not numbers (0 for a numeric column) */
  long first_text_line;/* 1-based line of the first non-number cell, 0 if none */
  const char *first_text; /* that cell's text (truncated), or NULL */
  uint8_t all_int;     /* every number in the column is an integer */
  uint8_t deferred;    /* the values stay in the file (values NULL): read them
                          through lm_table_fetch or lm_table_values */
} lm_column;

struct lm_table;
/* How a table with deferred columns reads them back from its file: fill
 * out[k][i] with column cols[k] at row rows[i] (NaN for a blank or text
 * cell, and for a row at or past n_rows). Safe to call from two threads at
 * once. Errors name the file, line and field. */
typedef lm_status (*lm_table_fetch_fn)(const struct lm_table *table, const long *cols, size_t n_cols,
                                       const size_t *rows, size_t n_rows, double *const *out,
                                       lm_diag *diag);

/* One CSV file, loaded. */
typedef struct lm_table {
  char *path;          /* file the table came from (for diagnostics) */
  char *name;          /* file stem, e.g. "pmc_perf", "SQ_LEVEL_WAVES" */
  size_t n_rows;
  size_t n_cols;
  lm_column *cols;
  const char **strings;/* interned text cells, by id */
  size_t n_strings;
  uint8_t *row_missing;/* per row: 1 when any cell of the row is missing */
  lm_map *by_name;     /* column name -> index */
  lm_arena *arena;     /* owns everything above but the value block */
  void *block;         /* all value columns, one huge allocation */
  size_t block_bytes;
  size_t max_cols;     /* built tables: room for this many columns */
  size_t cap_strings;  /* built tables: capacity of strings */
  lm_map *string_index;/* built tables: string -> id */
  lm_table_fetch_fn fetch;   /* tables with deferred columns: the reader */
  void *fetch_state;         /* its state (the file mapping, record offsets) */
  void (*fetch_release)(void *state); /* frees fetch_state with the table */
} lm_table;

/* Building a table in memory (for sources other than CSV files): create
 * it for n_rows rows and at most max_cols columns, add columns and fill
 * the returned arrays, then finish it. Strings are interned in the table. */
lm_table *lm_table_create(const char *path, const char *name, size_t n_rows,
                          size_t max_cols);
/* lm_table_create_over: the same over a value block the caller filled
 * (from lm_alloc_huge or lm_alloc_dense, block_bytes long), which the
 * table then owns and frees; its columns are added with
 * lm_table_add_column_at. NULL when out of memory (the block stays the
 * caller's). */
lm_table *lm_table_create_over(const char *path, const char *name, size_t n_rows, size_t max_cols, void *block,
                               size_t block_bytes);
/* lm_table_add_column_at: a column whose n_rows values are `values`, in
 * the block of a table from lm_table_create_over; with with_text, a text
 * column whose ids the caller fills (the values are set NaN). */
lm_column *lm_table_add_column_at(lm_table *table, const char *name, double *values, int with_text);
/* lm_table_add_column: a numeric column (text_ids NULL) or, with
 * with_text, a text column whose ids the caller fills (numbers NaN).
 * Returns the column, or NULL when out of memory or columns. */
lm_column *lm_table_add_column(lm_table *table, const char *name, int with_text);
/* lm_table_intern: the id of string s in the table (added if new), or -1. */
int32_t lm_table_intern(lm_table *table, const char *s);
/* lm_table_finish: compute missing-value counts, integer flags and the
 * per-row missing marks. */
lm_status lm_table_finish(lm_table *table);
/* lm_table_finish_threads: the same, the rows split among n_threads
 * threads (1 to 8; fewer when there are fewer rows): every count, flag and
 * row mark as lm_table_finish sets them. */
lm_status lm_table_finish_threads(lm_table *table, int n_threads);

/* lm_table_free: release a table and its arena. NULL is a no-op. */
void lm_table_free(lm_table *table);

/* lm_table_find: index of the column named `name`, or -1. */
long lm_table_find(const lm_table *table, const char *name);

/* lm_table_deferred: 1 when column col of the table stays in its file. */
int lm_table_deferred(const lm_table *table, size_t col);

/* lm_table_fetch: values of deferred (or loaded) columns cols[0..n_cols)
 * at rows rows[0..n_rows) into out[k][0..n_rows); see lm_table_fetch_fn. */
lm_status lm_table_fetch(const lm_table *table, const long *cols, size_t n_cols, const size_t *rows,
                         size_t n_rows, double *const *out, lm_diag *diag);

/* lm_table_values: the n_rows values of column col, reading a deferred
 * column from its file on first use and keeping it in the table (so the
 * table changes under a const pointer; fills of one table are serialized,
 * so several threads may call this and lm_table_load on one table). NULL
 * (and diag) when it cannot be read. lm_table_load does the same for
 * several columns in one pass over the file. */
const double *lm_table_values(const lm_table *table, size_t col, lm_diag *diag);
lm_status lm_table_load(const lm_table *table, const long *cols, size_t n_cols, lm_diag *diag);

/* A visitor of lm_table_each_column: column col's n_rows values (borrowed
 * until it returns). An error stops the walk and is returned. */
typedef lm_status (*lm_column_fn)(void *ctx, size_t col, const double *values, lm_diag *diag);

/* lm_table_each_column: fn for columns order[0..n) of the table, in that
 * order, without keeping them: a loaded column's own values, a deferred
 * one read back from the file in groups of consecutive entries of order
 * whose values take at most budget bytes together (at least one column a
 * group; one pass over the file's records per group, its two halves
 * read on two threads), the group's buffers reused. The table is not
 * changed. Errors: out of memory, a read's error,
 * fn's error. */
lm_status lm_table_each_column(const lm_table *table, const size_t *order, size_t n, size_t budget,
                               lm_column_fn fn, void *ctx, lm_diag *diag);

/* A visitor of lm_table_each_group: the group's n columns cols[0..n) with
 * their values values[k] (borrowed until it returns, the table's n_rows
 * each). An error stops the walk and is returned. */
typedef lm_status (*lm_group_fn)(void *ctx, const size_t *cols, const double *const *values, size_t n,
                                 lm_diag *diag);

/* lm_table_each_group: lm_table_each_column, fn called once per group with
 * all of its columns, so that a visitor can work on them side by side. */
lm_status lm_table_each_group(const lm_table *table, const size_t *order, size_t n, size_t budget,
                              lm_group_fn fn, void *ctx, lm_diag *diag);

/* lm_table_text: text of cell (row, col) for a text column, or NULL when
 * the column is numeric or the cell holds a number. Borrowed. */
const char *lm_table_text(const lm_table *table, size_t col, size_t row);

/* System information: sysinfo.csv, one row of named fields. */
typedef struct lm_sysinfo {
  size_t n_fields;
  const char **names;  /* field names, in file order */
  const char **texts;  /* raw text of each field */
  double *values;      /* numeric value, NaN when not a number */
} lm_sysinfo;

/* lm_sysinfo_find: index of field `name`, or -1. */
long lm_sysinfo_find(const lm_sysinfo *info, const char *name);
/* lm_sysinfo_text: text of field `name`, or NULL. Borrowed. */
const char *lm_sysinfo_text(const lm_sysinfo *info, const char *name);
/* lm_sysinfo_compat: the rocprofiler-compute version whose semantics the
 * layout of this sysinfo.csv belongs to: "3.3" for the layout of 3.3 and
 * later (a num_hbm_channels field), NULL for the older layouts (3.0 to
 * 3.2: hbm_bw) and lumen's own profiles, which the default semantics
 * read. A static string. */
const char *lm_sysinfo_compat(const lm_sysinfo *info);
/* lm_sysinfo_derive: the value of field `name`, missing from info, that
 * the other layout defines, computed from the fields info has: hbm_bw
 * (GB/s) from max_mclk and num_hbm_channels, num_hbm_channels from hbm_bw
 * and max_mclk (32 bytes per channel per memory clock). 1 with *value set,
 * or 0 when the field is not one of these or its sources are missing. */
int lm_sysinfo_derive(const lm_sysinfo *info, const char *name, double *value);

/* Where the values of a lumen profile's dispatch rows came from. A row
 * combines one execution per counter set (application replay: one per
 * run; instance cycling: successive instances of the kernel), and every
 * set carries some counters all sets share (GRBM_GUI_ACTIVE at least) and
 * its own timestamps: those say how far the executions of one row
 * differed, which analysis reports. Absent (NULL) for imported folders. */
typedef struct lm_executions {
  size_t n_rows;         /* the pmc table's rows */
  int32_t n_sets;        /* executions per row (one per counter set) */
  int32_t n_shared;      /* shared quantities: [0] is "duration" (end - start, ns),
                            then the counters every set of a row holds */
  const char **shared;   /* their names */
  double *values;        /* [(row * n_sets + set) * n_shared + k]; NaN where
                            that execution has no value */
  int32_t *runs;         /* [row * n_sets + set]: its application run, -1 none */
  size_t n_prov;         /* counter columns with the set of each row's value */
  const char **prov_source;  /* "pmc_perf" or an accumulate table's name */
  const char **prov_column;
  int16_t **prov_sets;   /* per column: n_rows set numbers, -1 where none */
} lm_executions;

/* A loaded workload: one profiled run. */
typedef struct lm_workload {
  char *path;            /* folder it was read from */
  lm_table *pmc;         /* pmc_perf.csv: one row per dispatch */
  size_t n_dispatches_all; /* rank.R parts read under a --rank selection:
                            the dispatches of every part (0: pmc->n_rows) */
  lm_table **levels;     /* SQ_*.csv accumulate tables (coll_level sources) */
  size_t n_levels;
  lm_table *sysinfo_table;
  lm_sysinfo sysinfo;
  lm_table *roofline;    /* roofline.csv, or NULL */
  const char *arch;      /* gpu_arch from sysinfo, borrowed from sysinfo */
  size_t n_regions;      /* lumen workloads: user-code regions */
  const char **region_names;
  uint64_t *row_regions; /* per pmc row: bit r set when inside region r
                            (the first 64 regions); NULL without regions */
  const char *simulated; /* lumen workloads profiled on the simulated device:
                            the recording it replayed; NULL for measured data */
  lm_executions *exec;   /* lumen profiles: the executions of each row, or NULL */
  const char **row_clock_source; /* per pmc row: where its clocks came from
                            ("rocm-smi", "simulated device", "estimate"), NULL
                            entries where unknown; NULL array without telemetry */
  int32_t *row_rank;     /* per pmc row: the MPI rank of its process, -1 where
                            unknown; NULL when the workload records no ranks */
  const char **row_host; /* per pmc row: the host of its process (NULL entries
                            where unknown); NULL when row_rank is */
  size_t n_parts;        /* read from the DIR/rank.R parts of an MPI profile:
                            how many were merged; 0 for one database or folder */
  int32_t *part_rank;    /* merged parts: the rank of each part, in row order */
  lm_sysinfo *part_sysinfo; /* merged parts: each part's system information
                            (part 0's is also `sysinfo`) */
  lm_table **part_tables;/* merged parts: the tables holding those (owned;
                            entry 0 NULL: it is sysinfo_table) */
  lm_table **part_roofline; /* merged parts: each part's roofline.csv (owned,
                            NULL where absent; entry 0 NULL: it is roofline) */
  int split_ranks;       /* a rank's part of a --split ranks profile: the job's
                            rank count (0: not split) */
  int split_sets_total;  /* ... the number of sets of the whole plan */
  int32_t *split_set;    /* ... per set of this part: its number in the plan */
  int n_split_set;
  int32_t *set_rank;     /* the parts of a --split ranks profile combined into
                            one view: per set of the plan (split_sets_total),
                            the rank that collected it; NULL otherwise */
  const char *format;    /* read from another tool's files: their format
                            ("rocprofv3"); NULL for workload folders */
  lm_arena *arena;       /* owns path, level list and sysinfo arrays */
} lm_workload;

/* lm_workload_free: release a workload and all its tables. NULL is a no-op. */
void lm_workload_free(lm_workload *workload);

/* lm_workload_source: the table that a metric source name refers to:
 * "pmc_perf" or the stem of an SQ_*.csv file. NULL when absent. */
const lm_table *lm_workload_source(const lm_workload *workload,
                                   const char *name);

/* A workload read from a file of per-kernel totals and no dispatches
 * (rocprof's results.stats.csv) holds them in a table of this name among
 * its levels, one row per kernel: Kernel_ID (its name is string Kernel_ID
 * of the pmc table, which has no rows), Calls, TotalDurationNs and MeanNs
 * (TotalDurationNs / Calls). The store keeps it as any other table. */
#define LM_TOTALS_SOURCE "kernel_totals"

/* lm_workload_totals: that table when w holds per-kernel totals only (no
 * dispatch rows), else NULL. */
const lm_table *lm_workload_totals(const lm_workload *workload);

/* ----------------------------------------------- how a workload is read */

/* A workload's origin starts with this when a simulated device produced
 * it; the recording it replayed follows. */
#define LM_ORIGIN_SIMULATED "simulated device replaying "
/* A folder in the reference's layout (lumen export --omniperf) of such a
 * workload holds this file: LM_ORIGIN_SIMULATED, the recording and a
 * newline. The folder reader marks the workload simulated when it finds it
 * (the reference tool reads no such file). */
#define LM_ORIGIN_FILE "lumen_origin.txt"

/* Which counter columns a read loads: 1 for column `name` of `source`
 * ("pmc_perf", an accumulate table such as "SQ_LEVEL_WAVES", "roofline").
 * The dispatch columns (Kernel_Name, Dispatch_ID, GPU_ID, launch
 * parameters, timestamps, measured clocks) are always loaded. */
typedef int (*lm_db_want_fn)(void *ctx, const char *source, const char *name);
/* What a want function may return besides 0 and 1: the column is wanted
 * but only through lm_table_fetch or lm_table_values, so an integer column
 * may stay in its compact form until read (lm_table_deferred). */
#define LM_DB_WANT_LATER 2

/* The want function of a read of workloads of architecture arch (the
 * gpu_arch of their system information) whose system information has the
 * layout of rocprofiler-compute version compat (lm_sysinfo_compat; NULL:
 * the default), and its context (*want_ctx); NULL: every column. It must
 * give the same answer for the same arch and compat. */
typedef lm_db_want_fn (*lm_db_choose_fn)(void *ctx, const char *arch, const char *compat, void **want_ctx);

/* Where a read decodes counter column `name` of `source` (n_rows values):
 * memory of the caller's that outlives the table read (the column's
 * values then point there), or NULL for the table's own. The rank.R
 * merge decodes a part's columns straight into the merged tables. Called
 * from the reading thread; it must not change what other reads see. */
typedef double *(*lm_db_place_fn)(void *ctx, const char *source, const char *name, size_t n_rows);

/* Where the rank.R parts of an MPI profile come from when not from this
 * process's own reads (lumen analyze --mpi: other processes load them). */
struct lm_workload_options;
typedef struct lm_part_source {
  /* Called once the parts are listed and their shapes read, before any
   * part is loaded: n_parts parts, exchange 1 when they will come through
   * load, 0 when this process reads them itself (the ranks of a --split
   * ranks profile are combined here). An error stops the read. */
  lm_status (*plan)(void *ctx, size_t n_parts, int exchange, lm_diag *diag);
  /* Part i (folder dir), loaded as lm_workload_read would load it; called
   * in part order from one thread. The error is the part's own. The part
   * may use memory of the source's until the next call (the merge copies
   * its values and frees it first; its system information and roofline
   * tables, which the merged workload keeps, must be its own). A part
   * loaded here is read with opts (its columns: the merge's choice); one
   * loaded elsewhere must hold no counter column that opts leaves out. */
  lm_status (*load)(void *ctx, size_t i, const char *dir, const struct lm_workload_options *opts,
                    lm_workload **out, lm_diag *diag);
  void *ctx;
} lm_part_source;

typedef struct lm_workload_options {
  int defer;                        /* leave counter columns in their files
                                       (lm_csv_options.defer): evaluation then
                                       streams them in blocks of dispatches */
  const char *const *eager_columns; /* NULL-terminated: columns loaded anyway */
  int levels_lazy;                  /* with defer: the accumulate tables
                                       (SQ_*.csv) load none of eager_columns
                                       (a caller that reads them only
                                       through the evaluator) */
  const lm_part_source *parts;      /* a folder of rank.R parts: where they
                                       come from (NULL: read here) */
  lm_db_choose_fn choose;           /* the counter columns read from lumen
                                       databases (the folder's own, its
                                       parts'), chosen by architecture
                                       (NULL: every column) */
  void *choose_ctx;
  const lm_idset *ranks;            /* rank.R parts: read only those of these
                                       ranks (NULL or empty: all) */
  lm_db_place_fn place;             /* a lumen database's counter columns:
                                       where they are decoded (NULL: the
                                       tables' own memory) */
  void *place_ctx;
  int fixed;                        /* the folder's lumen database does not
                                       change while read (a finished rank's
                                       part): LM_DB_READ_FIXED */
  int load_wanted;                  /* with defer and choose: the CSV files'
                                       columns that choose's want function
                                       accepts are loaded after all when they
                                       fit (lm_csv_options.load_want) */
  size_t load_cap;                  /* lm_csv_options.load_cap (0: its default) */
  int keep_text;                    /* a folder of CSV files: every column
                                       of its tables that holds a cell other
                                       than a number keeps its cells' text
                                       (lm_column.text_ids), not only the
                                       kernel names (an export writes them
                                       back); such a file is read twice */
  const char *arch;                 /* files that do not record their GPU's
                                       architecture (a rocprofv3 counter
                                       collection without agent_info.csv):
                                       the architecture to assume (NULL:
                                       such a file is refused) */
} lm_workload_options;

#endif
