/*
 * ncu_private.h - shared by the files of src/ncu: the fold of an export's
 * records into one row per launch, its columns grown as launches arrive
 * and metrics appear (a metric first seen late is NaN on earlier rows).
 */
#ifndef LUMEN_NCU_PRIVATE_H
#define LUMEN_NCU_PRIVATE_H

#include <stddef.h>
#include <stdint.h>

#include "base/base.h"
#include "model/model.h"

/* Facts of a launch that are not metrics. */
enum { NF_GPU, NF_GRID, NF_BLOCK, NF_DURATION, N_NCU_FACTS };

/* device__attribute_* metrics read into the system information. */
enum {
  NA_SMS,
  NA_SCLK,
  NA_CLOCK_RATE,
  NA_MCLK,
  NA_MEM_RATE,
  NA_L2,
  NA_WG_MAX,
  NA_WARP,
  NA_CC_MAJOR,
  NA_CC_MINOR,
  N_NCU_ATTRS
};

typedef struct lm_ncu_fold {
  const char *path;
  size_t n_rows, cap_rows;
  double *facts[N_NCU_FACTS]; /* per fact: cap_rows values, NaN unknown */
  int32_t *kernel;            /* per row: kernel name id */
  lm_map *names;              /* kernel name -> id */
  char **kernels;
  size_t n_kernels, cap_kernels;
  lm_map *index; /* metric name -> column */
  char **metric_names;
  double **metrics;
  size_t n_metrics, cap_metrics;
  lm_map *ids;    /* launch ID text -> row (details page) */
  lm_map *warned; /* units already warned about */
  double attr[N_NCU_ATTRS];
  char model[128];  /* device__attribute_display_name */
  char arch[32];    /* from the CC column */
  int has_duration; /* gpu__time_duration.sum seen */
} lm_ncu_fold;

lm_status lm_ncu_fold_new(const char *path, lm_ncu_fold **out, lm_diag *diag);
void lm_ncu_fold_free(lm_ncu_fold *fold);
/* lm_ncu_fold_add_row: a new launch row (facts NaN, kernel name id). */
lm_status lm_ncu_fold_add_row(lm_ncu_fold *fold, const char *kernel, size_t *row, lm_diag *diag);
/* lm_ncu_fold_set: metric `name` of row = v. */
lm_status lm_ncu_fold_set(lm_ncu_fold *fold, const char *name, size_t row, double v, lm_diag *diag);
/* lm_ncu_fold_column: the values of metric name, or NULL. */
double *lm_ncu_fold_column(const lm_ncu_fold *fold, const char *name);
/* lm_ncu_fold_finish: the workload of the fold (pmc_perf, system
 * information for arch when the file does not say its own). */
lm_status lm_ncu_fold_finish(lm_ncu_fold *fold, const char *arch, lm_workload **out, lm_diag *diag);

#endif
