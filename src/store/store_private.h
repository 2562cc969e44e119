/*
 * store_private.h - the store module's internals, shared by its files
 * (store.c, fingerprint.c, kept.c) and by nothing else: other modules use
 * store.h, and nothing here is an interface they may rely on.
 */
#ifndef LUMEN_STORE_PRIVATE_H
#define LUMEN_STORE_PRIVATE_H

#include <stdint.h>

#include "store/store.h"

/* An open store. */
struct lm_store {
  lm_sql *sql;  /* the connection, owned */
  int writable; /* imports, removals and kept analyses may write */
  char arch[64]; /* imports of files that record no architecture: the one
                    to assume ("" none: such files are refused) */
};

/* lm_store_write_fingerprinted: lm_db_write_tables(sql, wid, w, o),
 * computing w's fingerprint (lm_workload_fingerprint, into fp) from the
 * pmc columns as they are written, so they are read from their files
 * once; where they are all in memory the hash runs on a second thread
 * while the tables are written. Errors: those of the write, a column that
 * cannot be read, out of memory. (fingerprint.c) */
lm_status lm_store_write_fingerprinted(lm_sql *sql, int64_t wid, const lm_workload *w, const lm_db_write_opts *o,
                                       char fp[33], lm_diag *diag);

/* lm_store_precompute: evaluate and keep the default view (every panel,
 * no filter) of workload `name`, just imported: from w's tables when w is
 * given (still open) and they analyse, else from the stored columns
 * (lm_store_analyze). A view that cannot be made is left to the first
 * look at the workload; with LUMEN_STORE_CACHE=off nothing is made. (kept.c) */
void lm_store_precompute(lm_store *s, const char *name, const lm_workload *w);

#endif
