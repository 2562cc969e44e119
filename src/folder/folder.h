/*
 * folder.h - the reference tool's folder layout (Omniperf and
 * rocprofiler-compute): reading one workload folder (its CSV files, or the
 * lumen database a profile left in it), the rocpd-based one-row-per-
 * counter layout, telling what a path holds when it is not such a folder,
 * and writing a workload back in that layout. Readers never write into
 * the folders they read.
 */
#ifndef LUMEN_FOLDER_H
#define LUMEN_FOLDER_H

#include <stddef.h>

#include "base/base.h"
#include "model/model.h"

/* lm_folder_read: load one workload folder: pmc_perf.csv, the SQ_*.csv
 * accumulate tables, sysinfo.csv and, when present, roofline.csv, or the
 * lumen database (LM_WORKLOAD_DB) the folder holds, with opts (NULL: load
 * all; see lm_workload_options). Refuses folders the reference tool
 * refuses (no pmc_perf.csv; every row with a missing cell). A folder of
 * rank.R parts is not read here (lm_workload_read_opts merges them). */
lm_status lm_folder_read(const char *dir, const lm_workload_options *opts, lm_workload **out, lm_diag *diag);

/* lm_folder_has_own: 1 when dir has an entry for a workload of its own
 * (its lumen database or pmc_perf.csv, even a broken one, which
 * lm_folder_read then reports), or when that cannot be told (out of
 * memory); 0 when it has neither (a folder of rank.R parts, or none). */
int lm_folder_has_own(const char *dir);

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

/* lm_folder_export: write w as a new folder `dir` in the
 * reference tool's layout (pmc_perf.csv, SQ_*.csv, sysinfo.csv,
 * roofline.csv, and LM_ORIGIN_FILE for a replay of the simulated device),
 * every column under the name it has in w; lm_workload_read gives back
 * w's tables. Text cells are written where w holds them (read w with
 * lm_workload_options.keep_text). Refuses a folder that exists. */
lm_status lm_folder_export(const lm_workload *w, const char *dir, lm_diag *diag);

/* lm_folder_identify: what path holds when it is not a workload, as a
 * sentence for an error message written to out (cap bytes): another
 * tool's output (rocprofv3 counter collections and kernel traces, rocprof
 * v1 results and statistics, Nsight Compute CSV exports and reports),
 * with what to do about it, or, for a folder, the workload folders
 * directly inside it ("did you mean -w DIR/SUB"). 1 when it found
 * something to say, else 0 (out empty). Reads only the first line of a
 * few files, none of which blocks (FIFOs and devices are passed over). */
int lm_folder_identify(const char *path, char *out, size_t cap);

#endif
