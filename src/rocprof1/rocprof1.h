/*
 * rocprof1.h - reading what rocprof (v1) writes: results.csv, one row per
 * dispatch (kernel facts, then counters and/or timestamps), several such
 * files of one folder merged by their Index, and the rocminfo text saved
 * beside them for the system information. The layouts, what is read and
 * what is assumed: docs/formats.md.
 */
#ifndef LUMEN_ROCPROF1_H
#define LUMEN_ROCPROF1_H

#include <stddef.h>

#include "base/base.h"
#include "model/model.h"

/* lm_rocprof1_detect: 1 when path is a rocprof (v1) results CSV file (by
 * its header: Index, KernelName, gpu-id; whatever its name), results.db,
 * a kernel statistics file (`--stats`: Name, Calls, TotalDurationNs) or a
 * folder holding one directly; 0 otherwise. Reads the first line of a few
 * files. */
int lm_rocprof1_detect(const char *path);

/* lm_rocprof1_read: the workload in path (a file or folder as above): one
 * pmc_perf row per Index (files of one folder are passes of one run,
 * merged by Index; a kernel name that differs at one Index is an error),
 * the fixed columns mapped to pmc_perf's, every other column a counter
 * (those of the TA, TCC, TCP and TD blocks also under their "_sum" names),
 * system information from the rocminfo text beside the files (the first
 * GPU agent), the rest assumed from the architecture (from rocminfo, else
 * arch; a warning lists what was assumed). Streams: memory holds the
 * table, not the file. A kernel statistics file, or a folder holding one
 * and no results file, is read as per-kernel totals only
 * (lm_workload_totals; arch optional). Errors name the file, line and
 * field. opts may be NULL. */
lm_status lm_rocprof1_read(const char *path, const char *arch, const lm_workload_options *opts, lm_workload **out,
                           lm_diag *diag);

enum { LM_ROCMINFO_FIELDS = 16, LM_ROCMINFO_GPUS = 256 };

/* What rocminfo's text says of the GPU agents. */
typedef struct lm_rocminfo {
  char arch[64];                        /* the first GPU's Name ("gfx90a"), "" if none */
  size_t n_fields;                      /* sysinfo fields of the first GPU agent */
  char keys[LM_ROCMINFO_FIELDS][32];    /* sysinfo.csv names ("cu_per_gpu") */
  char values[LM_ROCMINFO_FIELDS][128]; /* their values ("104", "8192") */
  double nodes[LM_ROCMINFO_GPUS];       /* the GPU agents' Node, in order */
  size_t n_gpus;                        /* GPU agents (at most LM_ROCMINFO_GPUS kept) */
} lm_rocminfo;

/* lm_rocprof1_rocminfo: parse rocminfo's text (len bytes, need not end in
 * NUL) into info: the GPU agents' nodes, and of the first GPU agent its
 * architecture, marketing name (gpu_model), compute units, SIMDs per CU,
 * shader engines, wave size, maximum workgroup size and waves per CU,
 * maximum clock (max_sclk and cur_sclk) and L1 and L2 sizes in KB. Returns
 * 1 when the text is rocminfo's (it has "HSA Agents"), else 0. */
int lm_rocprof1_rocminfo(const char *text, size_t len, lm_rocminfo *info);

#endif
