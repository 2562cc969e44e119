/*
 * ranks.h - the rank.R parts of an MPI profile read as one workload: the
 * parts listed in rank order, loaded one at a time (or through an
 * lm_part_source when other processes load them), their rows merged with
 * each row's rank and host, and the wire format that carries a part
 * between processes.
 */
#ifndef LUMEN_RANKS_H
#define LUMEN_RANKS_H

#include <stddef.h>

#include "base/base.h"
#include "model/model.h"

/* lm_ranks_present: 1 when dir holds rank.R folders (R a number), the
 * parts `mpirun -np N lumen profile -w DIR` writes. */
int lm_ranks_present(const char *dir);

/* lm_ranks_read: the rank.R parts of dir read as one workload, rows in
 * rank order, each row with its rank (w->row_rank) and host; w->n_parts
 * says how many parts. Parts are loaded one at a time (opts->parts: through
 * that source, whose loads must give what the folder reader gives; NULL
 * opts: every column, read here), their columns opts->choose's. A column
 * some parts lack is blank on their rows. With opts->ranks only the parts
 * of those ranks (by their folders' names, rank.R) and the first part's
 * system information and roofline, which are the merged workload's
 * whatever the selection, so that the analysis of the selected ranks is
 * the one of every part read. Every part is read when the selection holds
 * no part's rank, or when a part read is a --split ranks share. Errors: no
 * parts, a part that cannot be read (its own error), parts of different
 * architectures. */
lm_status lm_ranks_read(const char *dir, const lm_workload_options *opts, lm_workload **out, lm_diag *diag);

/* lm_ranks_part_dirs: the part folders a read with opts (NULL: every part)
 * reads, in the order it reads them, from arena (opts->ranks: the selected
 * ranks' parts, after the first part, read for its system information
 * alone when not selected; every part when the selection holds none).
 * Errors: the folder cannot be read, two parts for one rank. No parts is
 * not an error (*n = 0). */
lm_status lm_ranks_part_dirs(const char *dir, const lm_workload_options *opts, lm_arena *arena, const char ***dirs,
                             size_t *n, lm_diag *diag);

/* lm_ranks_wire_pack: append w (as lm_workload_read loads it: no deferred
 * columns left unread) to out as one message for lm_ranks_wire_unpack.
 * Errors: out of memory, a deferred column that cannot be read. */
lm_status lm_ranks_wire_pack(const lm_workload *w, lm_buf *out, lm_diag *diag);

/* lm_ranks_wire_unpack: the workload packed in data[0..len), every table,
 * value bit and text id as packed; free with lm_workload_free. With
 * borrow (and data 8-byte aligned) the value columns of the dispatch and
 * accumulate tables point into data, which must then outlive them (the
 * system information and roofline tables are copied either way). Errors:
 * a message cut short or inconsistent (LM_EDATA), out of memory. */
lm_status lm_ranks_wire_unpack(const void *data, size_t len, int borrow, lm_workload **out, lm_diag *diag);

#endif
