/*
 * load.c - what a path holds, read as one workload. A folder that holds
 * neither a lumen database nor pmc_perf.csv but rank.R parts is an MPI
 * profile, merged by src/ranks; every other path goes to the reference
 * folder reader, which also says what a path holds when it is not a
 * workload. Readers of other tools' formats are chosen here, by what the
 * path holds (rocprofv3's CSV files, rocprof's results files, Nsight
 * Compute's CSV exports), never by its name.
 */
#include "load/load.h"

#include "folder/folder.h"
#include "ncu/ncu.h"
#include "ranks/ranks.h"
#include "rocprof1/rocprof1.h"
#include "rocprofv3/rocprofv3.h"

lm_status lm_workload_read(const char *dir, lm_workload **out, lm_diag *diag) {
  return lm_workload_read_opts(dir, NULL, out, diag);
}

lm_status lm_workload_read_opts(const char *dir, const lm_workload_options *opts, lm_workload **out,
                                lm_diag *diag) {
  *out = NULL;
  if (!lm_folder_has_own(dir)) {
    if (lm_ranks_present(dir)) return lm_ranks_read(dir, opts, out, diag);
    if (lm_rocprofv3_detect(dir)) return lm_rocprofv3_read(dir, opts ? opts->arch : NULL, opts, out, diag);
    if (lm_rocprof1_detect(dir)) return lm_rocprof1_read(dir, opts ? opts->arch : NULL, opts, out, diag);
    if (lm_ncu_detect(dir)) return lm_ncu_read(dir, opts ? opts->arch : NULL, opts, out, diag);
  }
  return lm_folder_read(dir, opts, out, diag);
}
