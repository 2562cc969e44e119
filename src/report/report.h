/*
 * report.h - rendering analyses: terminal tables, CSV (one file per table,
 * full precision, the reference tool's column titles) and one JSON
 * document. Several analyses render as a comparison with the first one as
 * the baseline.
 */
#ifndef LUMEN_REPORT_H
#define LUMEN_REPORT_H

#include <stddef.h>

#include "advise/advise.h"
#include "analyze/analyze.h"
#include "base/base.h"

typedef struct lm_report_opts {
  int decimal;          /* digits after the point in text output (default 2) */
  size_t max_stat_num;  /* rows of the top-kernels and dispatch tables shown
                           in text (default 10; 0 = all) */
  int width;            /* terminal width for wrapping (0: no wrapping) */
  int verbose;          /* text: 1 adds each metric's description, 2 its formula */
  const char *const *names; /* json: shown instead of each run's path (the
                               server names workloads by id), or NULL */
  const lm_summary *summary; /* json: the guided-analysis summary of the
                                first run, added as "summary", or NULL */
  int color;            /* text: ANSI colours (percentages near a peak or near
                           zero, finding severities); only for terminals */
  size_t json_max_rows; /* json: the tables with a row per dispatch or per
                           kernel keep their first json_max_rows rows and
                           say how many they had ("rows_total"); 0: all
                           rows (the server pages the rest) */
  const lm_summary *const *summaries; /* json: the summary of every run of
                           a comparison, added as "summaries", or NULL */
  size_t n_summaries;
} lm_report_opts;

/* lm_report_text: render runs[0..n) as terminal tables into out. */
lm_status lm_report_text(const lm_analysis *const *runs, size_t n,
                         const lm_report_opts *opts, lm_buf *out);

/* lm_report_csv_dir: write one <table id>.csv per shown table into dir
 * (created if needed). Metric tables: Metric_ID, the table's columns,
 * coll_level and Tips (as the reference tool's full tables); raw tables:
 * the row label first. Numbers at full precision. With several runs, each
 * value column of a later run is followed by its Δ% column. */
lm_status lm_report_csv_dir(const lm_analysis *const *runs, size_t n,
                            const char *dir, lm_diag *diag);

/* lm_report_csv_stream: the same tables into one stream, each preceded by
 * a line "# <id> <title>" and followed by a blank line. */
lm_status lm_report_csv_stream(const lm_analysis *const *runs, size_t n,
                               lm_buf *out);

/* lm_report_json: one JSON document with every shown table. */
lm_status lm_report_json(const lm_analysis *const *runs, size_t n,
                         const lm_report_opts *opts, lm_buf *out);

/* lm_report_long_table: whether t has a row per dispatch or per kernel
 * (the tables json_max_rows cuts and the server pages). */
int lm_report_long_table(const lm_rtable *t);

/* lm_report_json_cell: one cell as JSON, as lm_report_json writes it
 * (null when empty or NaN, "inf"/"-inf", a number or a string); a cJSON *
 * the caller adds to a document or deletes; NULL when out of memory. */
void *lm_report_json_cell(const lm_cell *cell);

/* lm_report_delta_pct: Δ% of other against base, the one definition every
 * output uses: 100 × (other − base) / |base| at full precision; with a zero
 * base, 0 when other is 0 and undefined (returns 0) otherwise. After
 * lm_report_delta_variant(1): the reference tool's variant (values rounded
 * to `decimal` digits first, a zero base divides by 1). Returns 1 and sets
 * *pct when defined. */
int lm_report_delta_pct(double base, double other, int decimal, double *pct);
void lm_report_delta_variant(int reference);

/* lm_report_summary_text: the summary of workload w as text whose lines
 * are at most width characters (at least 40). */
lm_status lm_report_summary_text(const lm_summary *summary, const lm_workload *w, size_t width, int color,
                                 lm_buf *out);

/* lm_report_summary_compare_text: the summaries s[0..n) of workloads
 * w[0..n) side by side: each kernel of the baseline's (s[0]) with the same
 * kernel of each other (by name, or by name without a ROCm suffix): time,
 * limiters, roofline verdict and the change in percent, the findings that
 * appeared or went away; then the kernels only the others list. Lines at
 * most width characters (at least 40). */
lm_status lm_report_summary_compare_text(const lm_summary *const *s, const lm_workload *const *w, size_t n,
                                         size_t width, lm_buf *out);

/* lm_report_summary_json: the summary as a cJSON object (returned as
 * void *, so that this header needs no cJSON; the caller owns it). */
void *lm_report_summary_json(const lm_summary *summary);

/* What the architectures cannot measure (unmeasurable.c), once per
 * report. lm_report_unmeasurable_text: the block of statements of each
 * architecture among runs[0..n) that has any (once per architecture;
 * nothing for per-kernel totals), lines of at most width characters (0:
 * no wrapping), followed by a blank line; nothing when none has any.
 * lm_report_unmeasurable_json: the "not_measurable" list of catalog
 * (objects with what and why; a cJSON *), or NULL when it has none. */
void lm_report_unmeasurable_text(const lm_analysis *const *runs, size_t n, size_t width, lm_buf *out);
void *lm_report_unmeasurable_json(const lm_catalog *catalog);

/* Execution spread of a lumen profile (spread.c). lm_report_any_flagged:
 * table t has a row whose inputs came from executions that disagree by
 * more than LM_SPREAD_THRESHOLD. lm_report_flag_text: the "Sets differ"
 * cell of row r ("12.3%" or ""; lm_free it). lm_report_spread_text: the
 * per-kernel block after the tables (nothing without executions).
 * lm_report_spread_json: the "spread" object (a cJSON *). */
int lm_report_any_flagged(const lm_rtable *t);
char *lm_report_flag_text(const lm_rtable *t, int32_t r);
void lm_report_spread_text(const lm_analysis *a, lm_buf *out);
void *lm_report_spread_json(const lm_spread *spread);

/* The rank table of an MPI workload (ranks.c): lm_report_ranks_text the
 * block after the tables (nothing without a->ranks), lm_report_ranks_json
 * the "ranks" object (a cJSON *). */
void lm_report_ranks_text(const lm_analysis *a, lm_buf *out);
void *lm_report_ranks_json(const lm_rank_table *ranks);
/* lm_report_split_text / lm_report_split_json: which rank collected each
 * counter set of a --split ranks profile read as one view (nothing, or
 * NULL, for other workloads). */
void lm_report_split_text(const lm_analysis *a, lm_buf *out);
void *lm_report_split_json(const lm_workload *w);
/* lm_report_same_kernel: 1 when two recorded kernel names are the same
 * kernel under the suffixes ROCm versions give code object symbols
 * ("vecCopy(...) [clone .kd]", "vecCopy(...).kd", "vecCopy(...)"); the
 * comparisons match top kernels this way when their names differ. */
int lm_report_same_kernel(const char *a, const char *b);

/* lm_report_short_name: a kernel name shortened to at most width
 * characters (argument list first, then nested template arguments, then
 * the middle), escaped for a terminal; with focus != (size_t)-1 the
 * character at that index stays visible. Free with lm_free. */
char *lm_report_short_name(const char *name, size_t width, size_t focus);

/* lm_report_short_names: lm_report_short_name for n names, made distinct
 * where the full names differ (both of two names that would look alike
 * show where they differ). An array of n strings; free each and the array
 * with lm_free. NULL when out of memory. */
char **lm_report_short_names(const char *const *full, size_t n, size_t width);

/* lm_report_list_rules: one line per rule (id, severity, condition), with
 * explanation, source and file when verbose. */
void lm_report_list_rules(const lm_ruleset *rules, int verbose, lm_buf *out);

/* lm_report_list_metrics: the panel/table/metric tree of a catalog, with
 * descriptions when verbose. */
void lm_report_list_metrics(const lm_catalog *catalog, int verbose, lm_buf *out);

#endif
