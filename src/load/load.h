/*
 * load.h - the one entry point that reads whatever a path holds as a
 * workload: a reference folder (CSV files or a lumen database) or the
 * rank.R parts of an MPI profile merged into one. New input formats plug
 * in here.
 */
#ifndef LUMEN_LOAD_H
#define LUMEN_LOAD_H

#include "base/base.h"
#include "model/model.h"

/* lm_workload_read: lm_workload_read_opts with every column loaded. */
lm_status lm_workload_read(const char *dir, lm_workload **out, lm_diag *diag);

/* lm_workload_read_opts: what dir holds read as one workload, with opts
 * (NULL: load all; model.h says what each option does). A
 * workload folder holding a lumen database is read from it, with the
 * counter columns opts->choose picks for its architecture (every column
 * without); the rank.R parts of an MPI profile likewise, the choice made
 * once for the first part's architecture (parts of another are refused).
 * A folder of CSV files is read with all its columns. */
lm_status lm_workload_read_opts(const char *dir, const lm_workload_options *opts, lm_workload **out,
                                lm_diag *diag);

#endif
