/*
 * analyze.h - from a loaded workload and a compiled catalog to the tables a
 * user reads: dispatch selection (GPU, kernel, dispatch, instance), the
 * top-kernels and dispatch-list tables, system info, roofline peaks, and
 * every metric table evaluated over the selection.
 *
 * The result is plain data (cells of numbers or text) that the report
 * module renders as terminal tables, CSV or JSON, and that comparisons
 * line up side by side.
 */
#ifndef LUMEN_ANALYZE_H
#define LUMEN_ANALYZE_H

#include <stddef.h>
#include <stdint.h>

#include "base/base.h"
#include "metrics/metrics.h"
#include "model/model.h"

/* ----------------------------------------------------------- options */

/* The values of the options that take a name from a closed set. Each
 * family has one table (lm_*_names, NULL-terminated, in the order
 * messages list the names) that the command line and the server both
 * parse with; 0 is "not given" and has no name. */

/* --norm, norm=: the normalization the metric tables divide by. Not
 * given: the catalog's first. */
typedef enum lm_norm_kind {
  LM_NORM_DEFAULT = 0,
  LM_NORM_PER_WAVE,
  LM_NORM_PER_CYCLE,
  LM_NORM_PER_SECOND,
  LM_NORM_PER_KERNEL
} lm_norm_kind;
extern const lm_keyword lm_norm_names[];

/* --time-unit: the unit of the top-kernels table's times. Not given:
 * nanoseconds (a distinct value: the store's cache keys tell them apart). */
typedef enum lm_time_unit {
  LM_TIME_UNIT_DEFAULT = 0,
  LM_TIME_UNIT_S,
  LM_TIME_UNIT_MS,
  LM_TIME_UNIT_US,
  LM_TIME_UNIT_NS
} lm_time_unit;
extern const lm_keyword lm_time_unit_names[];

/* --weight, weight=: how averages over dispatches weigh each one. Not
 * given: by count. */
typedef enum lm_weight_kind { LM_WEIGHT_DEFAULT = 0, LM_WEIGHT_COUNT, LM_WEIGHT_TIME } lm_weight_kind;
extern const lm_keyword lm_weight_names[];

/* --clock, clock=: the clocks the peaks are computed at. Not given: the
 * maximum. */
typedef enum lm_clock_kind { LM_CLOCK_DEFAULT = 0, LM_CLOCK_MAX, LM_CLOCK_MEASURED } lm_clock_kind;
extern const lm_keyword lm_clock_names[];

/* lm_norm_kind_parse, lm_time_unit_parse, lm_weight_kind_parse,
 * lm_clock_kind_parse: 1 with *out set when name (may be NULL) is one of
 * the family's names; else 0 and *out untouched. */
int lm_norm_kind_parse(const char *name, lm_norm_kind *out);
int lm_time_unit_parse(const char *name, lm_time_unit *out);
int lm_weight_kind_parse(const char *name, lm_weight_kind *out);
int lm_clock_kind_parse(const char *name, lm_clock_kind *out);

/* lm_norm_kind_name, lm_time_unit_name, lm_weight_kind_name,
 * lm_clock_kind_name: the name of a value (static text); NULL for the
 * "not given" value and for a value outside the family. */
const char *lm_norm_kind_name(lm_norm_kind norm);
const char *lm_time_unit_name(lm_time_unit unit);
const char *lm_weight_kind_name(lm_weight_kind weight);
const char *lm_clock_kind_name(lm_clock_kind clock);

/* lm_time_unit_ns: nanoseconds in one unit (1 where not given). */
double lm_time_unit_ns(lm_time_unit unit);

/* lm_analyze_norm_index: the index into catalog->norms of norm: 0 for
 * LM_NORM_DEFAULT, -1 when the catalog has no normalization of its name. */
int32_t lm_analyze_norm_index(const lm_catalog *catalog, lm_norm_kind norm);

typedef struct lm_analyze_opts {
  const char *const *kernels;  /* -k patterns (PCRE2); "!re" excludes */
  size_t n_kernels;
  const long *kernel_index;    /* --kernel-index: rows of the top-kernels table */
  size_t n_kernel_index;
  const lm_idset *dispatch;    /* -d, or NULL */
  const lm_idset *gpu;         /* -g, or NULL */
  const lm_idset *instance;    /* --instance, or NULL */
  const lm_idset *rank;        /* --rank: MPI ranks (workloads with ranks), or NULL */
  const char *const *blocks;   /* -b items: ids, metric names, hardware blocks */
  size_t n_blocks;
  lm_norm_kind norm;           /* --norm; LM_NORM_DEFAULT: the catalog's first */
  lm_time_unit time_unit;      /* --time-unit (default ns) */
  int threads;                 /* 0: automatic */
  size_t block_rows;           /* dispatches per block of streamed columns (0: default) */
  size_t stat_mem;             /* bytes for the operands of medians and quantiles
                                  (0: default); above it they take more passes */
  int stats_only;              /* only the top-kernels and dispatch tables */
  int corrected;               /* fix the reference tool's known mistakes:
                                  corrected formulas, units as written */
  const char *const *regions;  /* -r: dispatches inside any of these regions
                                  (lumen workloads with region markers) */
  size_t n_regions;
  int clock_measured;          /* --clock measured: peaks use the clocks
                                  sampled during the selected dispatches */
  int weight_time;             /* --weight time: averages over dispatches
                                  weighted by their durations */
  /* Called before the kernel patterns are matched and then every
   * LM_ANALYZE_CHECK_NAMES kernel names (NULL: never): a status other than
   * LM_OK, with its diag, ends the analysis with it (a server request over
   * its time budget, or whose client has gone). */
  lm_status (*check)(void *check_cls, lm_diag *diag);
  void *check_cls;
} lm_analyze_opts;

/* How many kernel-name matches run between two calls of opts->check. */
#define LM_ANALYZE_CHECK_NAMES 64

/* ------------------------------------------------------------ results */

typedef enum lm_cell_kind { LM_CELL_EMPTY, LM_CELL_NUMBER, LM_CELL_TEXT } lm_cell_kind;

typedef struct lm_cell {
  uint8_t kind;     /* lm_cell_kind */
  uint8_t integer;  /* a number to print without a fraction */
  double num;
  const char *text;
} lm_cell;

typedef enum lm_rcol_role {
  LM_RCOL_INDEX,  /* raw tables: the row label */
  LM_RCOL_NAME,
  LM_RCOL_VALUE,
  LM_RCOL_TEXT,
  LM_RCOL_UNIT,
  LM_RCOL_TIPS    /* hidden in text output */
} lm_rcol_role;

typedef struct lm_rtable {
  int32_t def;           /* index into the catalog's tables */
  const char *id;        /* "2.1" */
  const char *title;
  const char *panel_title;
  int32_t panel_id;
  uint8_t kind, style, comparable;
  int shown;             /* selected by -b (tables not shown have no rows) */
  int32_t n_cols;
  const char **titles;
  uint8_t *roles;        /* lm_rcol_role per column */
  int32_t n_rows;
  lm_cell *cells;        /* n_rows * n_cols, row-major */
  const char **row_ids;  /* metric tables: "2.1.3"; raw tables: the label */
  const char **row_sources; /* metric tables: coll_level */
  const char **row_descs;   /* metric tables: description */
  const char **row_formulas;/* metric tables: the row's main formula or "" */
  const char *note;      /* shown instead of the grid in text output */
  int32_t *row_defs;     /* metric tables: the catalog row of each row (not
                            kept in a stored analysis) */
  double *row_spread;    /* metric tables of a lumen profile: per row, how far
                            the executions its inputs came from differed
                            (relative spread of their shared counters, the
                            largest over the selected dispatches); NaN where
                            one execution fed it; NULL without executions */
} lm_rtable;

/* The spread threshold: a metric whose inputs came from executions whose
 * shared counters differ by more than this (relative) is flagged. */
#define LM_SPREAD_THRESHOLD 0.05

/* How far the executions of one kernel's dispatch rows differed (kernels
 * in the order of their first selected dispatch). */
typedef struct lm_kernel_spread {
  const char *kernel;
  size_t rows;           /* selected rows combining two executions or more */
  size_t rows_over;      /* rows where a shared counter differs by more than
                            LM_SPREAD_THRESHOLD */
  double *spread;        /* per shared quantity: the largest relative spread
                            (max - min) / mean over a row's executions */
  double max_spread;     /* the largest of those, NaN when rows is 0 */
} lm_kernel_spread;

typedef struct lm_spread {
  int32_t n_sets;        /* executions per row */
  int32_t n_shared;
  const char **shared;   /* "duration", then the counters every set holds */
  lm_kernel_spread *kernels; /* in the order of the top-kernels table */
  size_t n_kernels;
  size_t n_flagged;      /* metric rows flagged */
} lm_spread;

/* One MPI rank in the rank table: its share of the selected dispatches. */
typedef struct lm_rank_row {
  int32_t rank;
  const char *host;      /* NULL where unknown */
  size_t dispatches;
  double total_ns;       /* summed kernel durations */
  double mean_ns;        /* per dispatch */
  double busy_cycles;    /* summed GRBM_GUI_ACTIVE, NaN when not collected */
  double waves;          /* summed SQ_WAVES, NaN when not collected */
} lm_rank_row;

/* A kernel whose time differs between ranks. */
typedef struct lm_rank_kernel {
  const char *kernel;
  size_t n_ranks;        /* ranks that ran it */
  int32_t max_rank, min_rank;
  double max_ns, min_ns; /* the largest and smallest per-rank total time */
  double ratio;          /* max_ns / min_ns (NaN when min_ns is 0) */
} lm_rank_kernel;

/* The rank table of a workload with several MPI ranks among the selected
 * dispatches. */
typedef struct lm_rank_table {
  lm_rank_row *rows;     /* by rank */
  size_t n_rows;
  int32_t slowest, fastest; /* ranks with the largest and smallest total time */
  double imbalance;      /* max / mean of the per-rank total times */
  lm_rank_kernel *kernels; /* the kernels whose per-rank time differs most,
                            largest ratio first (kernels on one rank: last) */
  size_t n_kernels;
} lm_rank_table;

/* How many kernels the rank table lists. */
#define LM_RANK_KERNELS 5

typedef struct lm_analysis {
  lm_arena *arena;
  const lm_workload *workload;
  const lm_catalog *catalog;
  const char *norm;          /* normalization name used */
  size_t n_selected;         /* dispatches the metrics cover */
  int32_t n_tables;
  lm_rtable *tables;
  lm_spread *spread;         /* lumen profiles: how far the executions of
                                each row differed; NULL otherwise */
  lm_rank_table *ranks;      /* several MPI ranks selected: per rank; NULL otherwise */
} lm_analysis;

/* lm_analyze_run: select dispatches and evaluate. Errors: a filter that
 * matches nothing, a GPU id not in the data, a dispatch with
 * GRBM_GUI_ACTIVE = 0 among the selected ones, an unknown -b item. A
 * workload of per-kernel totals only (lm_workload_totals) gets the
 * top-kernels table from them, -k narrowing it, and no other table;
 * options that need dispatches are refused, saying why (totals.c). */
lm_status lm_analyze_run(const lm_workload *workload, const lm_catalog *catalog,
                         const lm_analyze_opts *opts, lm_analysis **out,
                         lm_diag *diag);
void lm_analysis_free(lm_analysis *analysis);

/* lm_analyze_columns: the pmc_perf columns that analysis, the roofline
 * and the summary read per dispatch outside the metric evaluator (the
 * evaluator streams the rest), NULL-terminated: what a caller loading a
 * workload with deferred columns should load anyway. A deferred column
 * read by them is loaded on first use, so the list is about speed only. */
extern const char *const lm_analyze_columns[];

/* lm_analyze_wants: 1 when an analysis with catalog ctx (an lm_catalog *,
 * NULL: none) reads counter column `name` of `source` ("pmc_perf", an
 * accumulate table, "roofline"): its formulas' inputs (an indexed input
 * reads every channel's column), the columns the top-kernels, roofline,
 * summary and rank tables read by name, and every roofline column. The
 * signature is lm_db_want_fn's (io.h), for the readers of stored columns. */
int lm_analyze_wants(void *ctx, const char *source, const char *name);

/* lm_analyze_wants_index_new: lm_analyze_wants for catalog cat (NULL:
 * none), answered through a hash table of its inputs built once, instead
 * of comparing the name with every input (a thousand inputs and as many
 * columns took 21 M instructions, half of a small analysis). NULL when out
 * of memory. The catalog must outlive the index. */
typedef struct lm_wants_index lm_wants_index;
lm_wants_index *lm_analyze_wants_index_new(const lm_catalog *cat);
void lm_analyze_wants_index_free(lm_wants_index *ix); /* NULL is a no-op */
/* lm_analyze_wants_indexed: lm_analyze_wants' answer; ctx is an
 * lm_wants_index. Reads only: safe from several threads. */
int lm_analyze_wants_indexed(void *ctx, const char *source, const char *name);

/* lm_analyze_rows: the pmc rows the filters of o select (kernels,
 * --kernel-index, dispatches, GPUs, instances, regions), in order: the
 * rows whose metrics lm_analyze_run evaluates.
 * Free *rows with lm_free. */
lm_status lm_analyze_rows(const lm_workload *workload, const lm_analyze_opts *opts, size_t **rows, size_t *n,
                          lm_diag *diag);

/* ------------------------------------------------------- plausibility */

/* A system-information field that cannot be right for the GPU. */
typedef struct lm_implausible {
  const char *field;  /* the sysinfo.csv field (static) */
  char value[32];     /* as recorded ("blank" when empty) */
  double expected;    /* what the architecture's facts give; NaN when they
                         give only a range */
  char why[200];      /* the facts, in words */
} lm_implausible;

/* lm_analyze_check_sysinfo: the fields of w's system information that
 * cannot be right for an AMD GPU of cat's architecture (clocks out of any
 * GPU's range, more compute units than its XCDs hold, L2 channels other
 * than the architecture's count per XCD, an HBM bandwidth other than 32
 * bytes per channel per memory clock). Writes up to cap of them to out
 * and returns how many there are (possibly more than cap); 0 for other
 * vendors. Reads only. */
size_t lm_analyze_check_sysinfo(const lm_workload *w, const lm_catalog *cat, lm_implausible *out, size_t cap);

/* ------------------------------------------------------------ roofline */

/* The data types and units that do a kernel's arithmetic, each with its
 * own ceiling: VALU FP16/FP32/FP64 (64 lanes per instruction, fused
 * multiply-adds twice) and the matrix cores (512 operations per MFMA MOPS
 * count) in F8, F16, BF16, F32, F64 and I8 (integer operations). */
typedef enum lm_roof_type {
  LM_ROOF_VALU_F16, LM_ROOF_VALU_F32, LM_ROOF_VALU_F64, LM_ROOF_MFMA_F8, LM_ROOF_MFMA_F16, LM_ROOF_MFMA_BF16,
  LM_ROOF_MFMA_F32, LM_ROOF_MFMA_F64, LM_ROOF_MFMA_I8, LM_ROOF_TYPES
} lm_roof_type;
/* lm_roof_type_name: "VALU FP32", "MFMA BF16", ... */
const char *lm_roof_type_name(lm_roof_type type);

/* One kernel's point: means per call over the selected dispatches. */
typedef struct lm_roof_point {
  const char *kernel;
  size_t calls;
  double duration_ns;    /* mean duration */
  double flops;          /* VALU + MFMA floating-point operations (the
                            reference's count: no F8, no I8) */
  double valu_flops;
  double type_ops[LM_ROOF_TYPES]; /* operations of each type and unit */
  double bytes_l1, bytes_l2, bytes_hbm, bytes_lds;
} lm_roof_point;

typedef struct lm_roofline {
  /* Ceilings from roofline.csv (the first selected GPU's row), GB/s and
   * GFLOP/s; NaN when the workload has no benchmark results. */
  double hbm_bw, l2_bw, l1_bw, lds_bw, fp32, fp64, mfma_bf16, mfma_f16, mfma_f32, mfma_f64, mfma_i8;
  double type_peak[LM_ROOF_TYPES]; /* the ceiling of each type (GFLOP/s or
                            GOP/s) from roofline.csv, NaN where it has none */
  lm_roof_point *points;  /* the top kernels by total duration */
  size_t n_points;
  const char *missing;    /* a counter the points need that is absent, or NULL */
  const char *missing_ops; /* a counter of the arithmetic that is absent, or NULL */
  int nvidia;              /* 1: an NVIDIA workload, whose types are FP16, FP32,
                              FP64 (CUDA cores, in the VALU slots) and the
                              tensor cores (in the MFMA F16 and BF16 slots) */
  lm_arena *arena;
} lm_roofline;

/* lm_roofline_type_name: the name of a type in r's vendor's words ("VALU
 * FP32", "MFMA BF16"; on NVIDIA "FP32", "Tensor BF16"). */
const char *lm_roofline_type_name(const lm_roofline *r, lm_roof_type type);

/* lm_roofline_compute: the reference tool's roofline (ceilings and the
 * kernel points at L1, L2 and HBM, by kernel, the `top` longest) for the
 * dispatches o selects. Free with lm_roofline_free. */
lm_status lm_roofline_compute(const lm_workload *workload, const lm_analyze_opts *opts, size_t top,
                              lm_roofline **out, lm_diag *diag);
void lm_roofline_free(lm_roofline *roofline);

/* lm_analysis_serialize: the analysis as bytes (appended to b), for a
 * cache; only this build of lumen reads them back. */
lm_status lm_analysis_serialize(const lm_analysis *analysis, lm_buf *b);
/* lm_analysis_deserialize: an analysis from lm_analysis_serialize bytes,
 * attached to workload w (its system info and dispatch count are what
 * reports show; a workload holding only those will do) and catalog cat
 * (the one it was made with). Any bytes that are not a valid analysis of w
 * with cat (cut short, a missing title, id or text, a count past the bytes
 * or past w's dispatches, a table other than cat defines, a value out of
 * its range) are refused with LM_EDATA and a message saying what is
 * wrong; LM_ENOMEM when out of memory. Free *out with lm_analysis_free. */
lm_status lm_analysis_deserialize(const void *data, size_t len, const lm_workload *w,
                                  const lm_catalog *cat, lm_analysis **out, lm_diag *diag);

/* lm_analyze_spread: fill a->spread and the metric tables' row_spread
 * from the workload's executions (nothing when it has none), for the
 * selected rows, with normalization norm. Called by lm_analyze_run. */
lm_status lm_analyze_spread(lm_analysis *a, const size_t *rows, size_t n_rows, int32_t norm, lm_diag *diag);

/* lm_analyze_ranks: fill a->ranks from the selected rows when they come
 * from two ranks or more (nothing otherwise). Called by lm_analyze_run. */
lm_status lm_analyze_ranks(lm_analysis *a, const size_t *rows, size_t n_rows, lm_diag *diag);
/* lm_analyze_rank_list: the ranks of w's rows as ranges ("0:4" for 0 to 3,
 * the grammar -d and --rank take), appended to b; "none" without ranks. */
void lm_analyze_rank_list(const lm_workload *w, lm_buf *b);

/* lm_analyze_clock_sources: log (info) where the clocks of the given rows
 * came from: "--clock measured: clocks of N dispatches sampled by
 * rocm-smi, M estimated from GRBM_GUI_ACTIVE / duration". Nothing for a
 * workload that does not record them. */
void lm_analyze_clock_sources(const lm_workload *w, const size_t *rows, size_t n_rows);

/* ------------------------------------------------------------ series */

/* One metric row's value per selected dispatch (lm_analyze_series). */
typedef struct lm_series {
  size_t n;              /* selected dispatches, in table order */
  double *dispatch_ids;  /* Dispatch_ID of each */
  double *values;        /* the value; NaN where it has none */
  const char *name;      /* the row's metric name (borrowed from the catalog) */
  const char *column;    /* the value column's title ("Avg") */
  const char *unit;      /* the unit cell as defined ($normUnit unexpanded), or NULL */
  int32_t channel;       /* the channel of a template row, else 0 */
} lm_series;

/* lm_analyze_series: for each dispatch o selects (kernels, dispatches,
 * GPUs, instances, regions), the value of metric row row_id ("2.1.0", as
 * in the JSON) in its table's first value column, as the analysis of that
 * dispatch alone shows it. A dispatch with GRBM_GUI_ACTIVE = 0 gets NaN.
 * Errors: an unknown row (LM_ENOTFOUND, field "m"), a filter that matches
 * nothing. Free *out with lm_series_free (NULL: no-op). */
lm_status lm_analyze_series(const lm_workload *workload, const lm_catalog *catalog, const lm_analyze_opts *opts,
                            const char *row_id, lm_series **out, lm_diag *diag);
void lm_series_free(lm_series *series);

/* lm_analysis_find: the result table with id "2.1", or NULL. */
const lm_rtable *lm_analysis_find(const lm_analysis *analysis, const char *id);

/* lm_unit_text: a unit as shown: $normUnit replaced by the normalization's
 * word and, when `capitalize`, Python's str.capitalize() applied (the
 * reference tool's display). Writes into out (cap bytes). */
char *lm_unit_text(const char *unit, const char *norm_word, int capitalize,
                   char *out, size_t cap);

#endif
