/*
 * rocprofv3.h - reading what rocprofv3 writes as CSV: the counter
 * collection (one row per dispatch and counter), the kernel trace (one row
 * per dispatch, timestamps only) and the agent information beside them,
 * folded into one workload with one row per dispatch. The layouts, what is
 * read and what is assumed: docs/formats.md.
 */
#ifndef LUMEN_ROCPROFV3_H
#define LUMEN_ROCPROFV3_H

#include "base/base.h"
#include "model/model.h"

/* lm_rocprofv3_detect: 1 when path is a rocprofv3 counter collection or
 * kernel trace CSV file (by its header, whatever its name), or a folder
 * holding such files (directly or in the folders rocprofv3 makes inside
 * its output folder: host/process); 0 otherwise. Reads a few first lines. */
int lm_rocprofv3_detect(const char *path);

/* lm_rocprofv3_read: the workload in path (a file or folder as above):
 * the counter collections' rows folded per dispatch into pmc_perf's
 * columns (counters of the TA, TCC, TCP and TD blocks, which rocprofv3
 * sums over their instances, also under their "_sum" names), timestamps
 * from the kernel trace where the collection has none, system information
 * from the agent information, else assumed from the architecture (given
 * by arch, or from the agent information; a warning lists what was
 * assumed). Streams: memory holds the folded table, not the file. Errors
 * name the file, line and field. opts may be NULL. */
lm_status lm_rocprofv3_read(const char *path, const char *arch, const lm_workload_options *opts, lm_workload **out,
                            lm_diag *diag);

#endif
