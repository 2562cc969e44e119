/*
 * metrics.h - the metric language and its compiler and evaluator.
 *
 * Definition files (YAML) are parsed into expression trees, compiled into one
 * graph per architecture (each distinct computation one node) and a catalog
 * of panels, tables and cells pointing at its nodes, which a bulk evaluator
 * runs over all selected dispatches at once. Built-in catalogs are compiled
 * at build time (lm_metrics_builtin), --metrics-dir at run time
 * (lm_metrics_compile_dir). Semantics are the reference tool's: arithmetic
 * per dispatch, aggregates skip NaN, `x if c else None` drops a dispatch, an
 * absent counter blanks the cell. docs/metric-format.md.
 */
#ifndef LUMEN_METRICS_H
#define LUMEN_METRICS_H

#include <stddef.h>
#include <stdint.h>

#include "base/base.h"
#include "model/model.h"

/* ------------------------------------------------------------ expressions */

typedef enum lm_expr_kind {
  LM_X_NUM,    /* numeric literal: num */
  LM_X_NONE,   /* None */
  LM_X_COL,    /* counter or column: name, index */
  LM_X_VAR,    /* $name: name */
  LM_X_UNARY,  /* op a: '-', '+', 'n' (not) */
  LM_X_BINARY, /* a op b: '+', '-', '*', '/', '%', 'p' (**), '&' (and), '|' (or) */
  LM_X_COMPARE,/* a op b: '=', '!', '<', '>', 'l' (<=), 'g' (>=) */
  LM_X_IF,     /* a if b else c */
  LM_X_CALL,   /* name(args) */
  LM_X_STRING  /* string literal: name */
} lm_expr_kind;

#define LM_INDEX_NONE (-1)
#define LM_INDEX_CHANNEL (-2) /* NAME[ch]: the channel of a template row */

typedef struct lm_expr {
  uint8_t kind;  /* lm_expr_kind */
  char op;       /* operator, see lm_expr_kind */
  int32_t pos;   /* byte offset in the source text */
  double num;
  const char *name;
  int32_t index; /* COL: LM_INDEX_NONE, LM_INDEX_CHANNEL or a channel number */
  struct lm_expr *a, *b, *c;
  struct lm_expr **args;
  int32_t n_args;
  int32_t height; /* levels of operators below and at this node (a leaf: 1) */
} lm_expr;

/* The most levels of operators a formula may have: a left-deep chain
 * `a + b + c + ...` of more terms is refused at parse time, so that every
 * walk over a tree stays within a small, fixed stack. */
#define LM_EXPR_MAX_HEIGHT 1000

/* lm_expr_parse: parse `text` (a Python-style expression) into a tree
 * allocated from arena. On error returns LM_EPARSE with diag->column set to
 * the 1-based character position and a message saying what is wrong. */
lm_status lm_expr_parse(const char *text, lm_arena *arena, lm_expr **out,
                        lm_diag *diag);

/* lm_expr_print: write the tree back as fully parenthesized text. */
void lm_expr_print(const lm_expr *expr, lm_buf *out);

/* ------------------------------------------------------------ the catalog */

typedef enum lm_op {
  LM_OP_CONST,  /* k */
  LM_OP_INPUT,  /* column a of the catalog's inputs */
  LM_OP_SYSVAR, /* system-info field a of the catalog's sysvars */
  LM_OP_NORM,   /* normalization slot a: one node per normalization */
  LM_OP_NEG,
  LM_OP_NOT,
  LM_OP_ADD, LM_OP_SUB, LM_OP_MUL, LM_OP_DIV, LM_OP_MOD, LM_OP_POW,
  LM_OP_EQ, LM_OP_NE, LM_OP_LT, LM_OP_LE, LM_OP_GT, LM_OP_GE,
  LM_OP_AND, LM_OP_OR,
  LM_OP_WHERE,  /* a where b holds, else c */
  LM_OP_MIN2,   /* MIN(a, b): Python min on scalars */
  LM_OP_MAX2,   /* MAX(a, b): Python max on scalars, NaN-propagating
                   element-wise maximum on vectors */
  LM_OP_ROUND,  /* round a to k digits, half to even */
  LM_OP_TO_INT, /* truncate toward zero */
  LM_OP_CONCAT, /* text: str(a) + str(b); only at the top of a cell */
  /* aggregates: vector a -> scalar */
  LM_OP_AVG, LM_OP_MIN, LM_OP_MAX, LM_OP_MEDIAN, LM_OP_STD,
  LM_OP_QUANTILE, /* quantile k */
  LM_OP_SUM, LM_OP_COUNT,
  LM_OP__COUNT
} lm_op;

#define LM_OP_IS_AGGREGATE(op) ((op) >= LM_OP_AVG && (op) <= LM_OP_COUNT)

typedef struct lm_node {
  uint8_t op;     /* lm_op */
  uint8_t vector; /* 1: one value per dispatch; 0: one value per workload */
  uint8_t chan;   /* 1: depends on the channel of a template row */
  uint8_t stage;  /* aggregation depth: a vector node of stage s may use
                     scalars of stage <= s; its aggregate has stage s+1 */
  uint8_t masked; /* per-dispatch values with "not available" marks: the
                     result of TO_INT on a column and what is computed from
                     it (the reference's nullable integers, whose NaNs from
                     arithmetic are not skipped by AVG, MIN, MAX, STD) */
  int32_t a, b, c;/* operand nodes, or table indices for leaves */
  double k;       /* constant, quantile or digits */
} lm_node;

/* A column read by the program. */
typedef struct lm_input {
  const char *source; /* "pmc_perf" or the stem of an SQ_*.csv table */
  const char *column; /* column name; for indexed inputs the base name */
  int32_t index;      /* LM_INDEX_NONE, LM_INDEX_CHANNEL, or a fixed index */
} lm_input;

/* A normalization unit choice ($denom). */
typedef struct lm_norm {
  const char *name;   /* "per_wave", ... */
  const char *unit;   /* word replacing $normUnit in units: "wave", ... */
} lm_norm;

typedef enum lm_col_role {
  LM_COL_NAME,   /* the row's name (Metric, Channel) */
  LM_COL_VALUE,  /* an evaluated number */
  LM_COL_TEXT,   /* plain text */
  LM_COL_UNIT,   /* a unit: $normUnit replaced, shown capitalized */
  LM_COL_TIPS    /* the reference tool's hidden tips column */
} lm_col_role;

typedef struct lm_coldef {
  const char *title;
  uint8_t role;      /* lm_col_role */
  uint8_t agg;       /* for VALUE columns defined as an aggregate: lm_op, else 0 */
} lm_coldef;

typedef struct lm_rowdef {
  const char *name;  /* display name; "{ch}" in template rows */
  const char *desc;  /* what the metric means (ours), may be "" */
  const char *source;/* where its counters come from ("pmc_perf", ...) */
  int32_t first_cell;/* cells[first_cell .. first_cell + n_cols) */
} lm_rowdef;

typedef struct lm_celldef {
  int32_t node;      /* VALUE cells: the node, or -1 for an empty cell */
  int32_t corrected; /* the node shown with --corrected where the reference
                        tool's formula is wrong, or -1 (same as node) */
  const char *text;  /* TEXT/UNIT cells: the text (may be "") */
  const char *formula; /* the formula as written, for -v and JSON */
} lm_celldef;

typedef enum lm_table_kind {
  LM_TABLE_METRIC,
  LM_TABLE_TOP_KERNELS,
  LM_TABLE_DISPATCHES,
  LM_TABLE_SYSINFO,
  LM_TABLE_ROOFLINE
} lm_table_kind;

typedef enum lm_style {
  LM_STYLE_NONE, LM_STYLE_BAR, LM_STYLE_MULTI_BAR, LM_STYLE_BOX,
  LM_STYLE_MEM_CHART, LM_STYLE_ROOFLINE
} lm_style;

typedef struct lm_tabledef {
  const char *id;      /* "2.1" */
  const char *title;   /* may be "" */
  uint8_t kind;        /* lm_table_kind */
  uint8_t style;       /* lm_style */
  uint8_t comparable;  /* shown with Δ% in comparisons */
  int32_t channels;    /* node giving the template row count, or -1 */
  int32_t first_col, n_cols;
  int32_t first_row, n_rows;
} lm_tabledef;

typedef struct lm_paneldef {
  int32_t id;          /* 2 for "2. System Speed-of-Light" */
  const char *title;
  int32_t first_table, n_tables;
} lm_paneldef;

/* Per-block counter limits of one architecture. */
typedef struct lm_block_limit {
  const char *block;   /* "SQ", "TCC", ... */
  int32_t limit;
} lm_block_limit;

/* A block whose counters use another block's budget (SQC uses SQ's). */
typedef struct lm_block_alias {
  const char *block;
  const char *uses;
} lm_block_alias;

/* Something the architecture's counters cannot measure at all (arch.yaml's
 * not_measurable), said once instead of as empty metrics. */
typedef struct lm_unmeasurable {
  const char *what;     /* "FLOP counts and WMMA operations" */
  const char *why;      /* the reason, one sentence */
  const char *counters; /* patterns ('*': any characters) of the counters the
                           chip lacks for it, separated by spaces; "" if none */
} lm_unmeasurable;

typedef struct lm_catalog {
  const char *arch;            /* "gfx90a" */
  const char *products;        /* "MI210, MI250, MI250X" */
  int32_t l2_channels_per_xcd;
  int32_t lds_banks_per_cu;    /* arch facts for a profile's system info; 0: unknown */
  int32_t pipes_per_gpu;
  int32_t sqc_per_xcd;         /* scalar caches per XCD */
  const lm_node *nodes;
  int32_t n_nodes;
  const lm_input *inputs;
  int32_t n_inputs;
  const char *const *sysvars;  /* system-info field names */
  int32_t n_sysvars;
  const lm_norm *norms;
  int32_t n_norms;
  const int32_t *norm_nodes;   /* n_norm_slots * n_norms node ids */
  int32_t n_norm_slots;
  const lm_paneldef *panels;
  int32_t n_panels;
  const lm_tabledef *tables;
  int32_t n_tables;
  const lm_coldef *cols;
  int32_t n_cols;
  const lm_rowdef *rows;
  int32_t n_rows;
  const lm_celldef *cells;
  int32_t n_cells;
  const char *const *counters; /* hardware counters of this architecture */
  int32_t n_counters;
  const lm_block_limit *limits;
  int32_t n_limits;
  const lm_block_alias *aliases;
  int32_t n_aliases;
  const char *accumulate;      /* the accumulator counter (SQ_ACCUM_PREV_HIRES),
                                  "" if none: sources other than pmc_perf name
                                  the level counter it accumulates */
  lm_arena *arena;             /* owner for run-time catalogs; NULL built-in */
  const char *digest;          /* 16 hex digits identifying the definitions
                                  (a hash of their source texts) */
  const char *vendor;          /* "amd" (default) or "nvidia" */
  const char *chip;            /* the vendor's chip name ("GH100": what the
                                  CUPTI Profiler Host API is asked about),
                                  "" if none */
  const char *compat;          /* the reference version whose semantics the
                                  catalog reproduces: "3.0", "3.3" */
  const lm_unmeasurable *unmeasurable; /* what the chip cannot measure */
  int32_t n_unmeasurable;
} lm_catalog;

/* ------------------------------------------------- reference versions */

/* The versions of the reference tool (rocprofiler-compute) whose analyze
 * semantics lumen reproduces, oldest first, NULL-terminated. The first is
 * the default. */
extern const char *const lm_compat_versions[];

/* lm_compat_known: 1 if version is one of lm_compat_versions. */
int lm_compat_known(const char *version);

/* lm_compat_cmp: <0, 0, >0 as version a is older than, equal to or newer
 * than b ("3.0" < "3.3" < "3.10"). */
int lm_compat_cmp(const char *a, const char *b);

/* lm_metrics_builtin: the catalog compiled into lumen for `arch` in the
 * default reference version (3.0), or in the oldest one the architecture
 * has when it is newer (gfx950: 3.3); NULL for an unknown architecture. */
const lm_catalog *lm_metrics_builtin(const char *arch);

/* lm_metrics_builtin_find: the built-in catalog whose arch or chip is
 * `name`, compared without regard to case ("sm_90", "gh100", "GH100"), or
 * NULL. */
const lm_catalog *lm_metrics_builtin_find(const char *name);
/* lm_metrics_builtin_compat: the built-in catalog of `arch` in reference
 * version `compat` ("3.0", "3.3"), or NULL when lumen has none (unknown
 * architecture, or one the version does not support). */
const lm_catalog *lm_metrics_builtin_compat(const char *arch, const char *compat);

/* lm_metrics_builtin_list: the built-in architectures, NULL-terminated. */
const char *const *lm_metrics_builtin_list(void);

/* lm_metrics_compile_dir: compile the definitions in dir (one folder of
 * YAML files: arch.yaml, quantities.yaml and one file per panel) into a new
 * catalog (free with lm_catalog_free). Errors name file:line:column. */
lm_status lm_metrics_compile_dir(const char *dir, lm_catalog **out,
                                 lm_diag *diag);

/* lm_metrics_compile_dir_compat: compile dir for reference version compat
 * (NULL: the oldest the definitions support). When dir/arch.yaml names a
 * `base:`, the sibling folder of that name supplies every file but
 * arch.yaml. The *.yaml files of overlay_dirs are overlays (files with an
 * `overlay:` key, see overlay.c); those of versions up to compat that name
 * the architecture (or its base) are applied, as are dir's own. Errors:
 * LM_EINVAL when compat is older than the definitions' `since:` or not a
 * known version, otherwise as lm_metrics_compile_dir. */
lm_status lm_metrics_compile_dir_compat(const char *dir, const char *const *overlay_dirs,
                                        size_t n_overlay_dirs, const char *compat,
                                        lm_catalog **out, lm_diag *diag);

/* lm_metrics_compile_texts: the same from n in-memory files; names[i] is
 * the file name used in diagnostics (and to recognize arch.yaml and
 * quantities.yaml), texts[i] its content. */
lm_status lm_metrics_compile_texts(const char *const *names,
                                   const char *const *texts, size_t n,
                                   lm_catalog **out, lm_diag *diag);

/* lm_metrics_compile_texts_compat: the same for reference version compat
 * (NULL: the oldest the definitions support); files with an `overlay:`
 * key are overlays, applied as lm_metrics_compile_dir_compat says. */
lm_status lm_metrics_compile_texts_compat(const char *const *names,
                                          const char *const *texts, size_t n,
                                          const char *compat, lm_catalog **out,
                                          lm_diag *diag);

/* lm_catalog_free: release a run-time catalog; NULL and built-ins are no-ops. */
void lm_catalog_free(lm_catalog *catalog);

/* lm_catalog_find_table: index of the table with id "2.1", or -1. */
int32_t lm_catalog_find_table(const lm_catalog *catalog, const char *id);

/* lm_catalog_unmeasurable: the statement of catalog's not_measurable list
 * whose counter patterns match `counter` (a trailing "_sum" ignored): the
 * chip cannot give that counter, for the reason the statement says. NULL
 * when none matches. */
const lm_unmeasurable *lm_catalog_unmeasurable(const lm_catalog *catalog, const char *counter);

/* lm_catalog_check_counters: every counter an input names must be in the
 * catalog's counter list. Returns LM_OK, or LM_ENOTFOUND with the first
 * unknown counter in diag. Built-in table columns (timestamps, launch
 * parameters) are always allowed. */
lm_status lm_catalog_check_counters(const lm_catalog *catalog, lm_diag *diag);

/* ------------------------------------------------------------ selection */

/* What a list of -b items selects in a catalog. */
typedef struct lm_selection {
  int any;             /* items were given (else everything is selected) */
  uint8_t *tables;     /* per table: the whole table (panel or table id) */
  uint8_t *rows;       /* per row definition: by metric name or block */
  char **metric_ids;   /* explicit metric ids ("2.1.3"), owned */
  size_t n_metric_ids;
} lm_selection;

/* lm_catalog_select: resolve -b items: a panel ("2"), a table ("2.1"), a
 * metric id ("2.1.3"), a metric name (any case), or a hardware block
 * ("TCC": the metrics reading its counters). An item that matches nothing
 * is an LM_EINVAL error naming it. Free with lm_selection_fini. */
lm_status lm_catalog_select(const lm_catalog *catalog, const char *const *items, size_t n,
                            lm_selection *sel, lm_diag *diag);
void lm_selection_fini(lm_selection *sel);

/* lm_selection_row: 1 if template-expanded row `index` of table t (row
 * definition `row`) is selected. */
int lm_selection_row(const lm_catalog *catalog, const lm_selection *sel, int32_t table,
                     int32_t row, int32_t index);

/* lm_selection_table: 1 if table t shows at least one row. */
int lm_selection_table(const lm_catalog *catalog, const lm_selection *sel, int32_t table);

/* ----------------------------------------------------------- evaluation */

/* What to evaluate and over which dispatches. */
typedef struct lm_eval_request {
  const lm_workload *workload;
  const size_t *rows;      /* selected rows of pmc_perf, in order */
  size_t n_rows;
  int32_t norm;            /* index into catalog->norms */
  const uint8_t *tables;   /* per table: 1 to evaluate; NULL for all */
  int threads;             /* 0: automatic */
  int corrected;           /* evaluate the corrected cells where defined */
  const double *weights;   /* per selected row: the weight of AVG (time
                              weighting: the dispatch's duration); NULL:
                              every dispatch counts once */
  size_t block_rows;       /* deferred columns (lm_column.deferred) are read
                              from their file this many dispatches at a time
                              (0: the default, 2048) */
  size_t stat_mem;         /* bytes the operands of medians and quantiles
                              may keep (0: LM_STAT_MEM_DEFAULT); above it
                              they are found exactly by reading the blocks
                              again (ostat.c) */
} lm_eval_request;

#define LM_STAT_MEM_DEFAULT ((size_t)1280 * 1024 * 1024)

typedef struct lm_eval lm_eval;

/* lm_eval_run: evaluate every cell of the requested tables. The result
 * (free with lm_eval_free) answers lm_eval_cell. Fails with a diagnostic
 * when the data cannot be evaluated (a used column holds text, a needed
 * system-info field is missing). */
lm_status lm_eval_run(const lm_catalog *catalog, const lm_eval_request *req,
                      lm_eval **out, lm_diag *diag);
void lm_eval_free(lm_eval *eval);

/* The most channels a table's template rows may repeat over (a channel
 * count past it is refused when the table is evaluated). */
#define LM_METRICS_MAX_CHANNELS 4096

/* lm_eval_channels: the number of template rows of table t (its channel
 * count, at most LM_METRICS_MAX_CHANNELS), or 1 for a table without
 * template rows. */
int32_t lm_eval_channels(const lm_eval *eval, int32_t table);

/* lm_eval_node: the value of a scalar node for channel ch (0 for
 * invariant nodes). Returns 1 and sets *value when it has a value, 0 when
 * the value is missing (absent counter, None, NaN). */
int lm_eval_node(const lm_eval *eval, int32_t node, int32_t ch, double *value);

/* Helpers shared by the evaluators. */
double lm_py_mod(double a, double b);
double lm_py_round(double x, int digits);
double lm_quantile_sorted(const double *sorted, size_t n, double q);
/* lm_quantile_ranks: the ranks lo and hi (n > 0 values) whose values
 * quantile q interpolates, and the fraction; returns 1 when q reads the
 * largest value alone (lo = hi = n - 1). */
int lm_quantile_ranks(size_t n, double q, size_t *lo, size_t *hi, double *frac);
/* lm_quantile_mix: the interpolation of lm_quantile_sorted between a and b. */
double lm_quantile_mix(double a, double b, double frac);
/* lm_quantile_select: lm_quantile_sorted of v (n values, no NaN) sorted,
 * found by selection in linear time; v is reordered. */
double lm_quantile_select(double *v, size_t n, double q);

/* ---------------------------------------------------------------- rules */

/* Guided analysis: rules as data (see rules.c and docs/rules.md). */

/* A piece of a verdict: text, or an expression shown with `digits`
 * digits after the point (digits < 0 for a text piece). */
typedef struct lm_rule_part {
  const char *text;
  lm_expr *expr;
  int digits;
} lm_rule_part;

typedef struct lm_rule_text {
  lm_rule_part *parts;
  int32_t n_parts;
} lm_rule_text;

typedef struct lm_rule {
  const char *id;          /* "hbm-bound" */
  int severity;            /* 0 info, 1 warning, 2 critical */
  lm_expr *when;           /* the condition */
  lm_rule_text verdict;    /* one line, with {expression} placeholders */
  lm_expr *gain;           /* estimated fraction of the kernel's time a fix
                              saves (0..1), or NULL */
  const char *explain;     /* what it means on this hardware */
  const char *source;      /* where the threshold comes from */
  const char **uses;       /* the metrics that support it */
  int32_t n_uses;
  const char *file;
  long line;
} lm_rule;

typedef struct lm_ruleset {
  lm_rule *rules;
  size_t n_rules, cap;
  lm_arena *arena;
} lm_ruleset;

/* A rule file in memory: {name, text}; lists end in {NULL, NULL}. */
typedef struct lm_rules_text {
  const char *name;
  const char *text;
} lm_rules_text;

/* lm_rules_builtin: the rule files compiled into lumen (from
 * metrics/rules/ at build time; defined in the built-in library). */
const lm_rules_text *lm_rules_builtin(void);

/* The per-kernel variables rules read as $name, NULL-terminated. */
extern const char *const lm_rule_vars[];

/* lm_rules_load_texts: the rules of the given files that apply to catalog
 * cat's architecture (files whose `archs` list leaves out cat->arch are
 * skipped, unchecked: their other keys are not read). Every metric a rule names must exist in cat (with cat NULL
 * nothing is resolved). Errors name file:line. Free with lm_rules_free. */
lm_status lm_rules_load_texts(const lm_catalog *cat, const lm_rules_text *files, lm_ruleset **out,
                              lm_diag *diag);
/* lm_rules_add_dir: add the rules of every *.yaml in dir (a user's own,
 * --rules-dir) to set, under the same checks. */
lm_status lm_rules_add_dir(lm_ruleset *set, const lm_catalog *cat, const char *dir, lm_diag *diag);
void lm_rules_free(lm_ruleset *set); /* NULL is a no-op */

/* lm_rule_severity_name: "info", "warning" or "critical". */
const char *lm_rule_severity_name(int severity);

#endif
