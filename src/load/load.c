/*
 * load.c - what a path holds, read as one workload. A folder that holds
 * neither a lumen database nor pmc_perf.csv but rank.R parts is an MPI
 * profile, merged by src/ranks; every other path goes to the reference
 * folder reader, which also says what a path holds when it is not a
 * workload. Readers of other tools' formats are chosen here.
 */
#include <string.h>

#include "db/db.h"
#include "folder/folder.h"
#include "ranks/ranks.h"
#include "load/load.h"

/* Whether dir has no entry called name (a broken entry is the folder
 * reader's to report, so it counts as present). */
static int absent(const char *dir, const char *name) {
  size_t n = strlen(dir), m = strlen(name);
  char *path = lm_malloc(n + m + 2);
  if (!path) return 0;
  memcpy(path, dir, n);
  path[n] = '/';
  memcpy(path + n + 1, name, m + 1);
  lm_status st = lm_path_kind(path, LM_OPEN_CONTAINED, NULL);
  lm_free(path);
  return st == LM_ENOTFOUND;
}

lm_status lm_workload_read(const char *dir, lm_workload **out, lm_diag *diag) {
  return lm_workload_read_opts(dir, NULL, out, diag);
}

lm_status lm_workload_read_opts(const char *dir, const lm_workload_options *opts, lm_workload **out,
                                lm_diag *diag) {
  *out = NULL;
  if (absent(dir, LM_WORKLOAD_DB) && absent(dir, "pmc_perf.csv") && lm_ranks_present(dir))
    return lm_ranks_read(dir, opts, out, diag);
  return lm_folder_read(dir, opts, out, diag);
}
