/*
 * ncu_private.h - shared by the files of src/ncu: the fold of an export's
 * records into one row per launch (the shared fold of src/fold: a metric
 * first seen late is NaN on earlier rows) and the device's attributes.
 */
#ifndef LUMEN_NCU_PRIVATE_H
#define LUMEN_NCU_PRIVATE_H

#include <stddef.h>
#include <stdint.h>

#include "base/base.h"
#include "fold/fold.h"
#include "model/model.h"

/* Facts of a launch that are not metrics; the last four are filled when
 * the fold is finished. */
enum { NF_GPU, NF_GRID, NF_BLOCK, NF_VGPR, NF_LDS, NF_START, NF_END, N_NCU_FACTS };

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

/* The fold of an export: the shared table (src/fold; its counters are
 * the metrics, in their base units) and what only Nsight Compute needs. */
typedef struct lm_ncu_fold {
  lm_fold *t;
  lm_map *warned; /* units already warned about */
  double attr[N_NCU_ATTRS];
  char model[128];  /* device__attribute_display_name */
  char arch[32];    /* from the CC column */
  int has_duration; /* gpu__time_duration.sum seen */
} lm_ncu_fold;

lm_status lm_ncu_fold_new(const char *path, lm_ncu_fold **out, lm_diag *diag);
void lm_ncu_fold_free(lm_ncu_fold *fold);
/* lm_ncu_fold_finish: the workload of the fold (pmc_perf, system
 * information for arch when the file does not say its own). */
lm_status lm_ncu_fold_finish(lm_ncu_fold *fold, const char *arch, lm_workload **out, lm_diag *diag);

#endif
