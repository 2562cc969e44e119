/*
 * ncu.h - reading Nsight Compute's CSV exports (`ncu --csv`): the details
 * page (one row per launch and metric, with or without rule columns) and
 * the raw page (one row per launch, metrics as columns, a row of units
 * under the header), of every version from 2020 on. Values are scaled to
 * the base units of CUPTI's metrics (bytes, ns, cycles, per second) that
 * lumen's NVIDIA definitions read. Layouts, units, what is assumed:
 * docs/formats.md ("Nsight Compute CSV").
 */
#ifndef LUMEN_NCU_H
#define LUMEN_NCU_H

#include "base/base.h"
#include "model/model.h"

/* lm_ncu_detect: 1 when path is a regular file whose header is that of an
 * Nsight Compute CSV export (details or raw page), or a folder holding
 * exactly one such file directly (among its first 64 files), else 0.
 * Reads first lines only, never blocking on a FIFO. */
int lm_ncu_detect(const char *path);

/* lm_ncu_read: the workload of the export at path (or of the one export
 * in folder path, read as that file): one pmc_perf row per
 * launch (Dispatch_ID from 0 in file order, kernel, GPU, grid and block
 * in threads, timestamps 0-based from the launches' durations), each
 * metric a column in its base unit; system information from the
 * device__attribute_* metrics, else assumed from the architecture's
 * typical product (a warning lists the assumed fields). The architecture
 * is the file's (CC column or compute capability metrics), else arch
 * (LM_EARCH when neither says). Errors name the file, line and field.
 * opts may be NULL. */
lm_status lm_ncu_read(const char *path, const char *arch, const lm_workload_options *opts, lm_workload **out,
                      lm_diag *diag);

/* lm_ncu_number: an Nsight Compute value cell: a number, with or without
 * thousands separators ("1,073,741,824"). 1 and *v for a number; 2 and
 * *v NaN for a missing value ("", "n/a", "N/A", "nan"); 0 otherwise. */
int lm_ncu_number(const char *s, double *v);

/* lm_ncu_unit_scale: the factor that brings a value in Nsight Compute
 * unit `unit` to the base unit of CUPTI's metric of that kind: bytes,
 * nanoseconds for a time, per second for a rate ("Gbyte/second" 1e9,
 * "usecond" 1e3, "cycle/nsecond" 1e9, "%" 1). 1 and *scale for a unit
 * it knows (an empty unit: 1), 0 otherwise. */
int lm_ncu_unit_scale(const char *unit, double *scale);

#endif
