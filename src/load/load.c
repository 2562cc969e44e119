/*
 * load.c - what a path holds, read as one workload. A folder that holds
 * neither a lumen database nor pmc_perf.csv but rank.R parts is an MPI
 * profile, merged by src/ranks; every other path goes to the reference
 * folder reader, which also says what a path holds when it is not a
 * workload. Readers of other tools' formats are chosen here.
 */
#include "folder/folder.h"
#include "load/load.h"
#include "ranks/ranks.h"

lm_status lm_workload_read(const char *dir, lm_workload **out, lm_diag *diag) {
  return lm_workload_read_opts(dir, NULL, out, diag);
}

lm_status lm_workload_read_opts(const char *dir, const lm_workload_options *opts, lm_workload **out,
                                lm_diag *diag) {
  *out = NULL;
  if (!lm_folder_has_own(dir) && lm_ranks_present(dir))
    return lm_ranks_read(dir, opts, out, diag);
  return lm_folder_read(dir, opts, out, diag);
}
