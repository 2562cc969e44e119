/*
 * fold.h - the growing per-dispatch table the readers of other tools'
 * files fold their records into, and its finish into a workload.
 *
 * One row per dispatch (found by its id text within a group, the last id
 * compared first), fact columns, an interned kernel name per row, and
 * counter columns added as names appear. Columns grow by doubling; a
 * value never set is NaN ("not collected"), so a counter first seen late
 * is NaN on the rows before it. Vendor specifics stay in the readers: each
 * counter carries a tag the reader owns (LM_FOLD_TAG_UNSET when new).
 */
#ifndef LUMEN_FOLD_H
#define LUMEN_FOLD_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "base/base.h"
#include "model/model.h"

enum { LM_FOLD_MAX_FACTS = 16 };
/* The last two fact slots are the table's Dispatch_ID and Kernel_Name
 * (lm_fold_workload): readers use the slots below LM_FOLD_SPARE_ID. */
enum { LM_FOLD_SPARE_ID = LM_FOLD_MAX_FACTS - 2, LM_FOLD_SPARE_KERNEL = LM_FOLD_MAX_FACTS - 1 };
enum { LM_FOLD_TAG_UNSET = -2 };

/* The rows of a group's dispatch ids that are small decimal numbers: row
 * + 1 at each id, 0 where none. */
typedef struct lm_fold_dense {
  int group;
  uint32_t *rows;
  size_t cap;
} lm_fold_dense;

typedef struct lm_fold {
  const char *path;
  lm_map *ids; /* "<group>:<dispatch id>" -> row, for ids not dense */
  lm_fold_dense *dense;
  size_t n_dense;
  int group;   /* the group of the records being folded (a file's run) */
  char *key;   /* the key of the record being folded */
  size_t key_cap;
  char last_id[128]; /* the dispatch id text of the last record */
  size_t last_len;
  int has_last;
  size_t last_row;
  size_t guess; /* the counter expected next (one after the last) */
  size_t n_rows, cap_rows;
  double *facts[LM_FOLD_MAX_FACTS]; /* per fact: cap_rows values, NaN unknown */
  int32_t *kernel;                  /* per row: kernel name id, -1 unknown */
  lm_map *names;                    /* kernel name -> id */
  char **kernels;
  size_t n_kernels, cap_kernels;
  lm_map *counter_index; /* counter name -> index */
  char **counter_names;
  double **counters; /* per counter: cap_rows values */
  long *tag;         /* per counter: the reader's, LM_FOLD_TAG_UNSET when new */
  size_t n_counters, cap_counters;
  double *block; /* every column: block_cols of cap_rows values */
  size_t block_cols;
} lm_fold;

/* lm_fold_new: an empty fold; path names it in errors (kept, not copied). */
lm_status lm_fold_new(const char *path, lm_fold **out, lm_diag *diag);
void lm_fold_free(lm_fold *fold);
/* lm_fold_key: the key of dispatch id text in the current group (valid
 * until the next call), or NULL when out of memory. */
const char *lm_fold_key(lm_fold *fold, const char *id, lm_diag *diag);
/* lm_fold_add_row: a new dispatch row (facts and counters NaN, kernel -1),
 * not keyed. */
lm_status lm_fold_add_row(lm_fold *fold, size_t *row, lm_diag *diag);
/* lm_fold_drop_rows: every row and dispatch id gone (the columns, their
 * room and the interned kernel names stay), for a reader that starts its
 * dispatches again in another order. */
lm_status lm_fold_drop_rows(lm_fold *fold, lm_diag *diag);
/* lm_fold_reserve: room for `rows` rows without growing (a reader's
 * estimate of the dispatches to come; too high costs address space only,
 * too low only the growth it would have saved). */
lm_status lm_fold_reserve(lm_fold *fold, size_t rows, lm_diag *diag);
/* lm_fold_row: the row of dispatch id text in the current group, added
 * (and keyed) when new (*added 1, when added is not NULL); the last id
 * is compared first. */
static inline lm_status lm_fold_row(lm_fold *fold, const char *id, size_t *row, int *added, lm_diag *diag);
/* lm_fold_row_lookup: lm_fold_row past the last id (by index or key). */
lm_status lm_fold_row_lookup(lm_fold *fold, const char *id, size_t *row, int *added, lm_diag *diag);
/* lm_fold_find: 1 when dispatch id text has a row in the current group
 * (in *row, when not NULL), else 0; adds nothing. */
int lm_fold_find(lm_fold *fold, const char *id, size_t *row);
/* lm_fold_intern: the id of kernel name s, interned when new. */
lm_status lm_fold_intern(lm_fold *fold, const char *s, int32_t *id, lm_diag *diag);
/* lm_fold_counter: the index of counter `name`'s column, added (NaN on
 * every row, tag LM_FOLD_TAG_UNSET) when new. Counters listed in the same
 * order per dispatch are found without a lookup. */
static inline lm_status lm_fold_counter(lm_fold *fold, const char *name, size_t *index, lm_diag *diag);
/* lm_fold_counter_lookup: lm_fold_counter past the expected next one. */
lm_status lm_fold_counter_lookup(lm_fold *fold, const char *name, size_t *index, lm_diag *diag);
/* lm_fold_set: counter `name` of row = v (its column added when new). */
lm_status lm_fold_set(lm_fold *fold, const char *name, size_t row, double v, lm_diag *diag);
/* lm_fold_column: the values of counter name, or NULL. Valid until a
 * row or counter is added: columns move as the fold grows. */
double *lm_fold_column(const lm_fold *fold, const char *name);

/* Counters left out of pmc_perf: none, those named like a fact, or those
 * named like any column before them (Dispatch_ID, a fact, Kernel_Name). */
enum { LM_FOLD_SKIP_NONE, LM_FOLD_SKIP_FACTS, LM_FOLD_SKIP_TAKEN };

/* The pmc_perf table a reader makes of its fold. */
typedef struct lm_fold_shape {
  const char *format;             /* the workload's format (a static string) */
  const char *const *fact_names;  /* the fact columns, after Dispatch_ID */
  int n_facts;                    /* at most LM_FOLD_SPARE_ID */
  const double *const *fact_rows; /* per fact: its values (a fold column), NULL: fold->facts */
  const double *dispatch_ids;     /* per row: Dispatch_ID (a fold column), NULL: the row number */
  int skip;                       /* which counters are left out (LM_FOLD_SKIP_*) */
} lm_fold_shape;

/* lm_fold_workload: a workload whose pmc_perf table is Dispatch_ID, the
 * facts, Kernel_Name ("" when unknown) and the counters, as shape says; no
 * system information yet. The table takes the fold's columns (none is
 * copied): afterwards the fold holds no column, only its names. */
lm_status lm_fold_workload(lm_fold *fold, const lm_fold_shape *shape, lm_workload **out, lm_diag *diag);
/* lm_fold_sysinfo: w's system information for architecture arch from the
 * n fields keys/values the file gave (where names their file), the others
 * assumed from arch's typical product with one warning (naming path) that
 * lists every assumed field. */
lm_status lm_fold_sysinfo(lm_workload *w, const char *path, const char *arch, const char *const *keys,
                          const char *const *values, size_t n, const char *where, lm_diag *diag);
/* lm_fold_no_arch: w's system information when neither the file nor
 * --arch names its architecture. A workload of timestamps only (pmc_perf
 * has no column past Dispatch_ID, its n_facts facts and Kernel_Name) gets
 * the n fields keys/values alone, gpu_arch empty and arch NULL (said at
 * debug level): its top kernels and dispatch list need no architecture,
 * and the analysis shows only them. With counters,
 * LM_EARCH saying what is missing and the --arch to give (example). */
lm_status lm_fold_no_arch(lm_workload *w, int n_facts, const char *const *keys, const char *const *values, size_t n,
                          const char *missing, const char *example, lm_diag *diag);

/* The hot paths, inline in the readers' record loops. */
static inline lm_status lm_fold_row(lm_fold *fold, const char *id, size_t *row, int *added, lm_diag *diag) {
  if (fold->has_last) {
    size_t len = strlen(id);
    if (len == fold->last_len && memcmp(fold->last_id, id, len) == 0) {
      if (added) *added = 0;
      *row = fold->last_row;
      return LM_OK;
    }
  }
  return lm_fold_row_lookup(fold, id, row, added, diag);
}

static inline lm_status lm_fold_counter(lm_fold *fold, const char *name, size_t *index, lm_diag *diag) {
  size_t g = fold->guess; /* each dispatch lists its counters in the same order */
  if (g < fold->n_counters && strcmp(fold->counter_names[g], name) == 0) {
    *index = g;
    fold->guess = g + 1 == fold->n_counters ? 0 : g + 1;
    return LM_OK;
  }
  return lm_fold_counter_lookup(fold, name, index, diag);
}

#endif
