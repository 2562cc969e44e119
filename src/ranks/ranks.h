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

/* ------------------------------------------ lumen analyze --mpi (mpi.c) */

/* The parts read by the processes of mpirun: mpi.c, built only where
 * Open MPI is found, as the module lumen-mpi.so beside the binary, which
 * opens it for --mpi alone and looks up this table under LM_RANKS_MPI_API
 * (docs/mpi.md). */
#define LM_RANKS_MPI_API "lumen_mpi_api"
typedef struct lm_ranks_mpi lm_ranks_mpi;
typedef struct lm_ranks_mpi_api {
  /* begin: start MPI (a singleton without mpirun); this process's number
   * (0 analyses and prints), or -1 when MPI does not start. fatal (may be
   * NULL) is given the reason before the module ends the whole job. */
  int (*begin)(lm_ranks_mpi **out, void (*fatal)(const lm_diag *diag));
  /* source: where process 0 takes the parts from (NULL: one process). */
  const lm_part_source *(*source)(lm_ranks_mpi *m);
  /* settle: after process 0's read (ok or not): what the others still
   * send is taken, and rounds not started are called off. */
  void (*settle)(lm_ranks_mpi *m);
  /* worker: a process other than 0 loads and sends its parts (their
   * counter columns those opts->choose picks, the choice process 0 makes);
   * the exit status process 0 ends with. */
  int (*worker)(lm_ranks_mpi *m, const char *dir, const lm_workload_options *opts);
  /* end: process 0 tells the others its status; MPI is finalized and m
   * freed. Returns status. NULL m: a no-op. */
  int (*end)(lm_ranks_mpi *m, int status);
} lm_ranks_mpi_api;

#endif
