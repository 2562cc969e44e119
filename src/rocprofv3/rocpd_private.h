/*
 * rocpd_private.h - what the rocpd reader's files share (rocpd.c reads
 * the database, rocpd_kernels.c makes rocpd's `kernels` view from the
 * tables under it, rocpd_keys.c keeps the keys): the runs by guid, and
 * sorted arrays of (run, id) -> fold row, which match counter events to
 * their dispatches and dispatches to the rows they join.
 */
#ifndef LUMEN_ROCPD_PRIVATE_H
#define LUMEN_ROCPD_PRIVATE_H

#include "rocprofv3/rocprofv3_private.h"
#include "sql/sql.h"

/* (run, id) -> row: run is an index in the runs' guids. */
typedef struct lm_v3_key {
  uint32_t guid;
  uint32_t row;
  int64_t id;
} lm_v3_key;

/* Keys added in any order, then sorted once (the last row of a key kept,
 * as a map's put would) and found. */
typedef struct lm_v3_keys {
  lm_v3_key *e;
  size_t n, cap, next; /* next: the entry after the last one found */
  int unsorted;
} lm_v3_keys;

/* A counter of rocpd_info_pmc: its name, and its column once an event of
 * it is read (SIZE_MAX before); found by (run, id) in lm_v3_rocpd's
 * pmc_keys. */
typedef struct lm_v3_pmc {
  char *name;
  size_t col;
} lm_v3_pmc;

/* One read: the layout, the dispatches' keys (by event id), the counters
 * (keyed by run and id), and the runs' guids. */
typedef struct lm_v3_rocpd {
  int plain; /* the earlier layout: counter names in the events */
  lm_v3_keys ev, pmc_keys;
  lm_v3_pmc *p;
  size_t n_p;
  char **guids;
  size_t *guid_len;
  size_t n_guids;
} lm_v3_rocpd;

/* The dispatch added last: its run, process and id, and its row. */
typedef struct lm_v3_last {
  int have;
  uint32_t guid;
  int64_t pid, id;
  size_t row;
} lm_v3_last;

void lm_v3_rocpd_free(lm_v3_rocpd *r);
/* lm_v3_rocpd_run: the index of the run whose guid is the n bytes at g
 * (added when add is set), -1 when not there, -2 out of memory. */
long lm_v3_rocpd_run(lm_v3_rocpd *r, const char *g, size_t n, int add);
/* lm_v3_rocpd_in_order: 1 when dispatch (guid, pid, id) comes after
 * last's in `ORDER BY guid, pid, dispatch_id` (the same one does not). */
int lm_v3_rocpd_in_order(const lm_v3_rocpd *r, const lm_v3_last *last, const char *guid, int64_t pid, int64_t id);
/* lm_v3_rocpd_table_under: the table under rocpd's view `view` (`SELECT *
 * FROM` its UUID-named table) into table (cap bytes), or "" when it is
 * another view; the name itself when it is a table. */
void lm_v3_rocpd_table_under(lm_sql *sql, const char *view, char *table, size_t cap);

/* lm_v3_keys_push: (guid, id) -> row added; path names the file in errors. */
lm_status lm_v3_keys_push(lm_v3_keys *k, uint32_t guid, int64_t id, size_t row, const char *path, lm_diag *diag);
/* lm_v3_keys_sort: sorted, the last row of each key kept. */
void lm_v3_keys_sort(lm_v3_keys *k);
/* lm_v3_keys_search: the row of (guid, id) by binary search, or -1
 * (sorted keys). */
int64_t lm_v3_keys_search(lm_v3_keys *k, uint32_t guid, int64_t id);
/* lm_v3_keys_find: the row of (guid, id), or -1 (sorted keys); the entry
 * after the last found is tried first, inline (once per counter event). */
static inline int64_t lm_v3_keys_find(lm_v3_keys *k, uint32_t guid, int64_t id) {
  size_t i = k->next;
  if (i < k->n && k->e[i].guid == guid && k->e[i].id == id) {
    k->next = i + 1;
    return k->e[i].row;
  }
  return lm_v3_keys_search(k, guid, id);
}
void lm_v3_keys_free(lm_v3_keys *k);

/* lm_v3_rocpd_kernels: the dispatches of rocpd's `kernels` view made from
 * the tables under it (rocpd_kernel_dispatch read from its pages, the
 * view's inner joins made here with the small tables read once), in
 * stored order: each into the fold (rows of one run, process and dispatch
 * id that follow each other are one), its counter events' key (run,
 * event id) into r->ev when its process is listed (the rule of
 * `pmc_events`). *unordered is set, and nothing more added, at a dispatch
 * out of `ORDER BY guid, pid, dispatch_id`. LM_ENOTFOUND, nothing added,
 * when a table cannot be read so: the caller reads the view. */
lm_status lm_v3_rocpd_kernels(lm_sql *sql, lm_v3_fold *fold, lm_v3_rocpd *r, int *unordered, lm_diag *diag);

#endif
