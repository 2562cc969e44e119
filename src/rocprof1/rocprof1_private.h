/*
 * rocprof1_private.h - shared by the files of src/rocprof1: the table of
 * dispatches as it grows (one row per Index, columns by name, grown by
 * doubling; a value never set is NaN, "not collected").
 */
#ifndef LUMEN_ROCPROF1_PRIVATE_H
#define LUMEN_ROCPROF1_PRIVATE_H

#include <stddef.h>
#include <stdint.h>

#include "base/base.h"
#include "model/model.h"
#include "rocprof1/rocprof1.h"

typedef struct lm_r1_rows {
  const char *path;
  lm_map *index; /* Index text -> row */
  size_t n_rows, cap_rows;
  double *dispatch; /* per row: the Index */
  int32_t *kernel;  /* per row: kernel name id, -1 unknown */
  lm_map *names;    /* kernel name -> id */
  char **kernels;
  size_t n_kernels, cap_kernels;
  lm_map *col_index; /* column name -> index */
  char **col_names;
  double **cols; /* per column: cap_rows values */
  size_t n_cols, cap_cols;
} lm_r1_rows;

lm_status lm_r1_rows_new(const char *path, lm_r1_rows **out, lm_diag *diag);
void lm_r1_rows_free(lm_r1_rows *rows);
/* lm_r1_row: the row of Index text id (value index), added when new. */
lm_status lm_r1_row(lm_r1_rows *rows, const char *id, double index, size_t *row, int *added, lm_diag *diag);
/* lm_r1_kernel: the id of kernel name s. */
lm_status lm_r1_kernel(lm_r1_rows *rows, const char *s, int32_t *id, lm_diag *diag);
/* lm_r1_column: the index of column `name`, added (all NaN) when new. */
lm_status lm_r1_column(lm_r1_rows *rows, const char *name, size_t *col, lm_diag *diag);
/* lm_r1_finish: the workload of rows: pmc_perf (Dispatch_ID, the facts
 * fact_names present, Kernel_Name, every other column), GPU ids numbered
 * in info's order of GPU agents (else of their ids), and system
 * information from info, else assumed for arch. where names the files. */
lm_status lm_r1_finish(lm_r1_rows *rows, const lm_rocminfo *info, const char *info_path, const char *arch,
                       const char *const *fact_names, int n_facts, lm_workload **out, lm_diag *diag);

#endif
