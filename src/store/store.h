/*
 * store.h - the workload store: many workloads in one database, SQLite
 * (a file, the default) or PostgreSQL (a team server), with the schema of
 * a lumen workload folder (docs/workload-format.md).
 *
 * Imports are atomic (one transaction) and idempotent: a workload is
 * identified by a fingerprint of its contents, and importing the same
 * contents again (even concurrently) finds the copy already there; a
 * match whose dispatch count, architecture or GPU differ is a collision,
 * and the workload is imported beside it. A
 * store also keeps finished analyses, keyed by lumen's version, the
 * definitions and the options, so a repeated view costs no evaluation.
 */
#ifndef LUMEN_STORE_H
#define LUMEN_STORE_H

#include <stddef.h>
#include <stdint.h>

#include "analyze/analyze.h"
#include "db/db.h"
#include "sql/sql.h"

typedef struct lm_store lm_store;

/* lm_store_default_path: ~/.local/share/lumen/lumen.db (XDG_DATA_HOME
 * respected), written into out. */
const char *lm_store_default_path(char *out, size_t cap);

/* lm_store_open: a store by URL (a SQLite path or postgresql://...). With
 * writable set, a missing SQLite file and its folder are created and the
 * schema is made; read-only opens refuse a missing store. */
lm_status lm_store_open(const char *url, int writable, lm_store **out, lm_diag *diag);
/* lm_store_open_existing: an existing store, written to when permitted
 * (to keep analyses), else read-only. */
lm_status lm_store_open_existing(const char *url, lm_store **out, lm_diag *diag);
void lm_store_close(lm_store *store);
const char *lm_store_where(const lm_store *store);
lm_sql *lm_store_sql(lm_store *store);

/* One stored workload. n_ranks: the rank.R parts of an MPI profile that
 * were imported as this workload (a folder of parts or a --split ranks
 * profile); n_hosts: the distinct hosts those parts name (their sysinfo
 * `hostname`). Both are 0 for a workload of one process, or of one
 * process that ran several ranks (its rows keep them, but there are no
 * parts), and for a store written before version 4 kept parts. */
typedef struct lm_store_entry {
  char name[256], team[128], source[32], origin[1024], created[32], arch[32], gpu_model[64];
  char fingerprint[40];
  int64_t id;
  size_t n_dispatches, n_ranks, n_hosts;
  int complete;
  char compat[8]; /* "3.3" when its system information has the layout of
                     rocprofiler-compute 3.3 (lm_sysinfo_compat), else "" */
} lm_store_entry;

/* lm_store_list: every workload (in name order), with its rank and host
 * counts from one query that reads rank_sysinfo by its key, never the
 * dispatch rows; free with free(). */
lm_status lm_store_list(lm_store *store, lm_store_entry **out, size_t *n, lm_diag *diag);
/* lm_store_get: one workload's entry. */
lm_status lm_store_get(lm_store *store, const char *name, lm_store_entry *out, lm_diag *diag);

typedef struct lm_import_result {
  char name[256];   /* the name it has in the store */
  int existed;      /* the same contents were already there */
  char collided[256]; /* a stored workload with the same fingerprint but
                         other facts (lm_store_same_workload), imported
                         beside it; "" when none */
  size_t n_dispatches;
} lm_import_result;

/* lm_store_import: a lumen workload folder or an Omniperf/rocprofiler-
 * compute folder. name NULL: the workload's own name (lumen) or one made
 * from the folder's path. team may be NULL. A different workload under
 * the same name is refused. A CSV folder is not loaded whole: its counter
 * columns are read back from the files in groups (lm_db_write_opts; at most
 * LUMEN_IMPORT_GROUP_BYTES of values at once when set), and the default
 * view is then evaluated from the stored columns and kept. */
lm_status lm_store_import(lm_store *store, const char *dir, const char *name, const char *team,
                          lm_import_result *result, lm_diag *diag);
/* lm_store_assume_arch: imports of files that do not record their GPU's
 * architecture (lm_workload_options.arch) read them as arch (NULL: they
 * are refused, the default). */
void lm_store_assume_arch(lm_store *store, const char *arch);
/* lm_store_remove: delete a workload and everything of it. */
lm_status lm_store_remove(lm_store *store, const char *name, lm_diag *diag);
/* lm_store_export: write workload `name` as a new lumen workload folder. */
lm_status lm_store_export(lm_store *store, const char *name, const char *dir, lm_diag *diag);
/* lm_store_load: the workload's tables, as analysis reads them. */
lm_status lm_store_load(lm_store *store, const char *name, lm_workload **out, lm_diag *diag);
/* lm_store_load_for: the workload with only the counter columns that an
 * analysis with catalog cat reads (its formulas' inputs, the columns the
 * top-kernels table, the roofline and the summary read): every analysis,
 * roofline and summary with cat gives the same results from it as from
 * lm_store_load, from a fraction of the columns. cat NULL: without the
 * formulas' inputs (enough for a roofline, and for a summary that is
 * given the analysis of its only kernel). */
lm_status lm_store_load_for(lm_store *store, const char *name, const lm_catalog *cat, lm_workload **out,
                            lm_diag *diag);
/* lm_store_load_info: the workload without its counter columns (system
 * info and dispatch count), enough to report a cached analysis. */
lm_status lm_store_load_info(lm_store *store, const char *name, lm_workload **out, lm_diag *diag);

/* lm_store_totals_catalog: built-in definitions whose top-kernels table
 * (which reads no counter) lays out the analysis of per-kernel totals of
 * no known architecture (lm_workload_totals), or NULL when lumen has
 * none. Only table 0.1 of it is ever shown. */
const lm_catalog *lm_store_totals_catalog(void);

/* lm_workload_fingerprint: 32 hex digits, XXH3-128 of a workload's
 * contents in a canonical order (fingerprint.c; docs/workload-format.md), its
 * deferred columns read back from their files. Errors: a column that
 * cannot be read, out of memory. */
lm_status lm_workload_fingerprint(const lm_workload *w, char out[33], lm_diag *diag);

/* What an import compares, besides the fingerprint, before it takes a
 * stored workload for the one it imports: facts of the workload's row.
 * NULL texts read as empty. */
typedef struct lm_store_facts {
  size_t n_dispatches;
  const char *arch, *gpu_model;
} lm_store_facts;

/* lm_store_same_workload: whether a workload with the facts `incoming`,
 * whose fingerprint equals that of a stored workload with the facts
 * `stored`, is that workload (1: the import finds it there) or another
 * one whose fingerprint collides (0: it is imported all the same). */
int lm_store_same_workload(const lm_store_facts *stored, const lm_store_facts *incoming);

/* Analysis cache. lm_store_cache_key: the key of an analysis of a workload
 * with these options and definitions (into out). */
void lm_store_cache_key(const lm_catalog *cat, const lm_analyze_opts *o, char *out, size_t cap);
/* lm_store_cache_get: LM_OK with *data (free with free()) or LM_ENOTFOUND. */
lm_status lm_store_cache_get(lm_store *store, const char *name, const char *key, void **data, size_t *len,
                             lm_diag *diag);
lm_status lm_store_cache_put(lm_store *store, const char *name, const char *key, const void *data, size_t len,
                             lm_diag *diag);

/* lm_store_kept: the analysis kept for workload `name` with catalog cat
 * and options o, attached to the workload's info (no counter columns):
 * LM_OK; LM_ENOTFOUND when none is kept, with LUMEN_STORE_CACHE=off, or
 * when the one kept is not a valid analysis of the workload (then a warning
 * says what is wrong with it, once per process, and a writable store
 * removes it, so that the caller recomputes it from the stored columns);
 * another error when the store cannot be read. Free both when done. */
lm_status lm_store_kept(lm_store *store, const char *name, const lm_catalog *cat, const lm_analyze_opts *o,
                        lm_workload **info, lm_analysis **out, lm_diag *diag);

/* lm_store_analyze: the analysis of workload `name` with options o, from
 * the cache when it is there (then *workload holds only system info),
 * else evaluated from the columns it reads (lm_store_load_for, so
 * *workload holds only those) and, when the store is writable, kept. Free both with
 * lm_analysis_free and lm_workload_free. */
lm_status lm_store_analyze(lm_store *store, const char *name, const lm_catalog *override,
                           const lm_analyze_opts *o, lm_workload **workload, lm_analysis **out,
                           int *cached, lm_diag *diag);

#endif
