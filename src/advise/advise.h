/*
 * advise.h - guided analysis: what limits each top kernel.
 *
 * For each of the kernels that take the most time, the summary holds its
 * share of the time, a few speed-of-light highlights, its place on the
 * roofline, and the rules (metrics/rules/, data) that fire on its own
 * metrics, most severe first. It is computed from per-kernel analyses of
 * the same selection the user asked for, so its numbers are the panels'
 * numbers for that kernel alone.
 */
#ifndef LUMEN_ADVISE_H
#define LUMEN_ADVISE_H

#include "analyze/analyze.h"
#include "metrics/metrics.h"

/* A rule that fired on a kernel. */
typedef struct lm_finding {
  const lm_rule *rule;
  char *verdict;      /* the verdict with its values filled in */
  double gain;        /* estimated fraction of the kernel's time a fix saves, NaN if none */
  const char *above;  /* a metric the rule uses that is above its peak (so
                         the verdict rests on a peak that cannot be right),
                         or NULL */
  double above_pct;   /* ... its percentage of peak */
  struct lm_evidence *evidence; /* the metrics the rule reads (its `uses`)
                                   with their values for this kernel */
  size_t n_evidence;
} lm_finding;

/* A metric a finding rests on, as the panels show it for the kernel. */
typedef struct lm_evidence {
  const char *metric;
  double value, pct; /* NaN when missing; pct when the metric has a peak */
  const char *unit;
} lm_evidence;

/* What a speed-of-light metric says limits throughput. */
typedef enum lm_limiter_kind {
  LM_LIMIT_MEMORY,    /* bandwidth of a memory level */
  LM_LIMIT_ISSUE,     /* an issue unit or pipeline: utilization, FLOPs */
  LM_LIMIT_OCCUPANCY  /* wavefronts resident */
} lm_limiter_kind;

/* A speed-of-light highlight: one metric of the first metric table. */
typedef struct lm_highlight {
  const char *name;
  double value, peak, pct; /* NaN when not available */
  const char *unit;
  lm_limiter_kind kind;
} lm_highlight;

typedef struct lm_kernel_summary {
  const char *name;
  size_t calls;
  double total_ns, mean_ns, share; /* share of the selection's time, 0..1 */
  lm_highlight *highlights; /* the top limiters, by % of peak (at most 100 %) */
  size_t n_highlights;
  lm_highlight *above;      /* limiters above 100 % of their peak: not
                               ranked, the peak (or a count) cannot be right */
  size_t n_above;
  /* Roofline position: arithmetic intensity at HBM (operations per byte),
   * achieved GFLOP/s (all types), the attainable GFLOP/s (the work at the
   * ceiling that bounds it: its operations of each type at that type's
   * peak, its bytes at each memory level's bandwidth) and the percentage
   * achieved; NaN with `roof_reason` set when the point cannot be placed. */
  double intensity, gflops, attainable, roof_pct;
  const char *roof_bound;  /* "memory" or "compute" */
  const char *roof_limit;  /* what bounds it: "HBM", "L2", "L1", "LDS", or a
                              unit and type ("MFMA BF16", "VALU FP32") */
  const char *roof_type;   /* the type and unit doing most of the work (by
                              time at their peaks), as roof_limit's names */
  const char *roof_source; /* "roofline.csv" or "theoretical peaks" */
  const char *roof_reason;
  const char *roof_memory;   /* the device memory's name: "HBM" (AMD) or "DRAM" */
  const char *roof_partial;  /* placed from the arithmetic collected alone: a
                                counter of the rest that was not, or NULL */
  const lm_unmeasurable *roof_unmeasurable; /* not placed because what it
                                needs cannot be measured on this chip
                                (the catalog's statement), or NULL */
  double roof_bw, roof_peak; /* for a plot: GB/s at roof_memory, GFLOP/s of roof_type */
  lm_finding *findings;
  size_t n_findings;
  size_t n_rules;             /* the rules applied to it */
  size_t n_unknown_rules;     /* those that did not fire because a metric they
                                 read was not collected (other tools' files) */
  const char *unknown_metric; /* the first such metric (the rules' text) */
} lm_kernel_summary;

typedef struct lm_summary {
  lm_kernel_summary *kernels;
  size_t n_kernels;
  size_t n_total_kernels; /* kernels in the selection (the summary shows the top ones) */
  double total_ns;
  const char *rules_error; /* why no rule could be evaluated, or NULL */
  lm_implausible *implausible; /* sysinfo.csv fields that cannot be right
                                  (lm_analyze_check_sysinfo) */
  size_t n_implausible;
  lm_ruleset *rules;       /* owned when set: freed with the summary */
  lm_arena *arena;
} lm_summary;

/* lm_advise_summary: the summary of the top `top` kernels (by total time)
 * of the dispatches o selects (every filter, --kernel-index included: a
 * kernel with no selected dispatch is not listed; -b is ignored; each
 * kernel is analyzed alone). whole, when not NULL, is the caller's
 * analysis of that same selection with every table (no --kernel-index, no
 * -b): its top-kernels table ranks the kernels, and a selection of one
 * kernel is summarized from it instead of being evaluated again. rules may
 * be NULL (no findings). Free with lm_summary_free. */
lm_status lm_advise_summary(const lm_workload *w, const lm_catalog *cat, const lm_ruleset *rules,
                            const lm_analyze_opts *o, const lm_analysis *whole, size_t top, lm_summary **out,
                            lm_diag *diag);
void lm_summary_free(lm_summary *summary);

/* lm_advise_eval: evaluate rule expression e for kernel facts `vars`
 * (names lm_rule_vars, same order) over analysis a; NaN when a metric it
 * reads is missing. Exposed for tests. */
double lm_advise_eval(const lm_expr *e, const lm_analysis *a, const double *vars);

#endif
