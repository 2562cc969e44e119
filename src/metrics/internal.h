/*
 * internal.h - declarations shared by the files of the metrics module only.
 */
#ifndef LUMEN_METRICS_INTERNAL_H
#define LUMEN_METRICS_INTERNAL_H

#include <stdint.h>
#include <string.h>

#include "metrics/metrics.h"

/* A YAML document as a small tree: scalars, sequences and mappings (a
 * mapping's items alternate key, value), each with its position. */
typedef enum ynode_type { Y_SCALAR, Y_SEQ, Y_MAP } ynode_type;

typedef struct ynode {
  ynode_type type;
  long line;          /* 1-based */
  long column;        /* 1-based */
  int plain;          /* scalar written without quotes or block style */
  int is_null;        /* plain scalar null, ~ or empty */
  const char *text;   /* scalar text */
  size_t n_items;
  struct ynode **items;
} ynode;

/* yaml_load: parse one YAML document from text; `file` names it in
 * diagnostics. Nodes live in arena. */
lm_status lm_yaml_load(const char *file, const char *text, size_t len,
                       lm_arena *arena, ynode **root, lm_diag *diag);

/* lm_yaml_top_list_has: whether the list of plain strings under `key` in
 * the document's top-level mapping holds `value` (1) or not (0), read with
 * the parser's events up to the list's end only; -1 when that cannot be
 * told so (no such key, not such a list, a syntax error before its end). */
int lm_yaml_top_list_has(const char *text, size_t len, const char *key, const char *value);

/* yaml_get: the value of key in a mapping node, or NULL. */
const ynode *lm_yaml_get(const ynode *map, const char *key);

/* lm_scalar_op: the value of operation op on scalar operands (see ops.c).
 * Aggregates and leaves are not handled here. */
double lm_scalar_op(int op, double a, double b, double c, double k);

/* lm_overlay_applies: 1 if the overlay's `archs:` list (none: every
 * architecture) names one of archs. */
int lm_overlay_applies(const ynode *overlay, const char *const *archs, size_t n_archs);

/* lm_overlay_apply: patch the n definition trees roots (named names; panel
 * files, quantities.yaml, arch.yaml) with one overlay document, allocating
 * from arena. Errors name the overlay file, line and column. */
lm_status lm_overlay_apply(const char *file, const ynode *overlay, ynode **roots,
                           const char *const *names, size_t n, lm_arena *arena, lm_diag *diag);

/* lm_overlay_drops_empty_rows: 1 if the overlay sets `drop_empty_rows:
 * true` (the version leaves out rows that have no formula). */
int lm_overlay_drops_empty_rows(const ynode *overlay);

/* lm_overlay_drop_empty_rows: remove from the n definition trees every row
 * of a table without channels that has no formula (no expr, peak, pct or
 * explicit value cell), except per-channel tables and the memory chart.
 * Run once after all overlays of a build. */
void lm_overlay_drop_empty_rows(ynode **roots, size_t n);

/* ------------------------------------------ built-in catalogs (emit.c) */

/* A built-in catalog as the build emits it (see emit.c): `shape` is the
 * catalog with every string NULL, and refs[i] the offset in
 * lm_builtin_strings of the i-th string in lm_catalog_visit_strings' order
 * (LM_IMAGE_NULL: NULL). arch, chip and compat are there to look a catalog
 * up without making it. */
#define LM_IMAGE_NULL UINT32_MAX
#define LM_BUILTIN_MAX 256

typedef struct lm_catalog_image {
  const lm_catalog *shape;
  const uint32_t *refs;
  size_t n_refs;
  const char *arch, *chip, *compat;
} lm_catalog_image;

/* Defined by the generated builtin_metrics.c: the images, ended by one
 * with a NULL shape (at most LM_BUILTIN_MAX), the strings they refer to
 * and the architectures, NULL-terminated. */
extern const lm_catalog_image lm_builtin_images[];
extern const char lm_builtin_strings[];
extern const char *const lm_builtin_arch_names[];

/* lm_catalog_visit_strings: call fn with the address of every string field
 * of c (its own, then those of each array entry, arrays in declaration
 * order), always in the same order: the emitted refs and the catalog made
 * from them agree through it. */
typedef void (*lm_string_slot_fn)(const char *const *slot, void *ctx);
void lm_catalog_visit_strings(const lm_catalog *c, lm_string_slot_fn fn, void *ctx);

/* A set of strings laid end to end, each once, for the generated source. */
typedef struct lm_string_pool lm_string_pool;
lm_string_pool *lm_string_pool_new(void); /* NULL: out of memory */
void lm_string_pool_free(lm_string_pool *pool);
/* lm_string_pool_emit_c: the pool as C source defining `const char
 * symbol[]`. LM_ENOMEM when the pool or out ran out of memory. */
lm_status lm_string_pool_emit_c(const lm_string_pool *pool, const char *symbol, lm_buf *out);

/* lm_catalog_emit_c: write the catalog as C source defining `symbol`_shape
 * and `symbol`_refs (its strings added to pool), for an lm_catalog_image. */
lm_status lm_catalog_emit_c(const lm_catalog *catalog, const char *symbol, lm_string_pool *pool,
                            lm_buf *out);

/* The fields of sysinfo.csv that formulas may name as $field. */
extern const char *const lm_sysinfo_fields[];

/* ------------------------------------------------ folding (fold.c) */

/* "Not available" in a masked (nullable) vector: a NaN with a payload that
 * arithmetic never produces, so it can be told apart from the NaN of 0/0. */
#define LM_NA_BITS 0x7FF800000000DEADULL

static inline double lm_na_value(void) {
  uint64_t u = LM_NA_BITS;
  double d;
  memcpy(&d, &u, sizeof d);
  return d;
}

static inline int lm_is_na(double x) {
  uint64_t u;
  memcpy(&u, &x, sizeof u);
  return u == LM_NA_BITS;
}

/* The running state of AVG, MIN, MAX, SUM and COUNT over the rows folded
 * so far, in row order. */
typedef struct lm_fold {
  double sum, min, max;
  size_t count;
  int nan;          /* masked operand: a NaN that is not "not available" was seen */
  double wsum, wx;  /* weighted AVG: the weights and the weighted values */
} lm_fold;

/* lm_fold_init: the state of no rows. */
void lm_fold_init(lm_fold *f);
/* lm_fold_add: fold the next n values (weights: per value, for a weighted
 * AVG; NULL otherwise). Unmasked operands skip NaN; masked ones skip "not
 * available" and remember any other NaN. Folding a column block by block
 * gives the same state, to the bit, as folding it at once. */
void lm_fold_add(lm_fold *f, const double *v, size_t n, const double *weights, int masked);
/* lm_fold_add2: lm_fold_add(f, v, n, NULL, masked) and lm_fold_add(g, u,
 * n, NULL, masked) in one loop (two running sums that do not wait on each
 * other); the same bits as the two calls. */
void lm_fold_add2(lm_fold *f, const double *v, lm_fold *g, const double *u, size_t n, int masked);
/* lm_fold_add_same: lm_fold_add of n copies of x, to the same bits
 * (sums that no rounding touches are taken in one multiplication, the
 * others are added one at a time). */
void lm_fold_add_same(lm_fold *f, double x, size_t n, const double *weights, int masked);
/* lm_fold_merge: add the state of the rows that follow into's rows. */
void lm_fold_merge(lm_fold *into, const lm_fold *from);
/* lm_fold_result: the value of aggregate op (LM_OP_AVG .. LM_OP_COUNT but
 * the order statistics); NaN for no rows (SUM: 0, COUNT: 0). */
double lm_fold_result(const lm_fold *f, int op, int weighted);
/* lm_fold_sorted: the n kept values of an order statistic's operand,
 * without NaN, sorted into `sorted` (tmp: n scratch values); returns their
 * count. *nan_seen: a masked operand held a NaN from arithmetic. */
size_t lm_fold_sorted(const double *kept, size_t n, int masked, double *sorted, double *tmp,
                      int *nan_seen);
/* lm_fold_order_values: lm_fold_sorted for the order statistics ops[i]
 * (with quantiles ks[i]; ks NULL: order every value) of one operand, which
 * only puts the values they read in their sorted places (a selection)
 * unless one of them is STD or there are few values: lm_fold_order of any
 * of them then reads the same bits as after a full sort. After a selection
 * the other places of `out` hold unspecified bits. */
size_t lm_fold_order_values(const double *kept, size_t n, int masked, const int *ops,
                            const double *ks, size_t n_ops, double *out, double *tmp,
                            int *nan_seen);
/* lm_fold_order: MEDIAN, QUANTILE (k) or STD of sorted values. */
double lm_fold_order(int op, double k, const double *sorted, size_t n, int nan_seen);
/* lm_sort_values: sort n doubles without NaN ascending (from 64 values on,
 * -0 before +0; shorter inputs keep equal values in their order). */
void lm_sort_values(double *v, double *tmp, size_t n);
/* lm_select_keys: put the k-th smallest of n radix keys (fold.c's order)
 * at keys[k]. */
void lm_select_keys(uint64_t *keys, size_t n, size_t k);

/* ---- bounded order statistics (ostat.c) */

#define LM_OSTAT_DIGIT 11
#define LM_OSTAT_BUCKETS ((size_t)1 << LM_OSTAT_DIGIT)
#define LM_OSTAT_MAX_OPS 8
#define LM_OSTAT_FEW 64

/* Per bucket of one digit of the keys: how many, the least and greatest. */
typedef struct lm_ostat_hist {
  uint32_t count[LM_OSTAT_BUCKETS];
  uint64_t min[LM_OSTAT_BUCKETS], max[LM_OSTAT_BUCKETS];
} lm_ostat_hist;

/* A wanted rank: the top `hi` bits of its key (prefix), its rank among
 * the keys with that prefix (within), how many have it (count, cw per
 * worker), and once done its key. */
typedef struct lm_ostat_rank {
  size_t rank, within, count, cw[2], fill[2];
  uint64_t prefix, key;
  int hi, done, owner;
  lm_ostat_hist *h[2];
  uint64_t *buf;
} lm_ostat_rank;

enum { LM_OSTAT_COUNT, LM_OSTAT_REFINE, LM_OSTAT_COLLECT };

/* The medians and quantiles of one operand (and channel) found in passes
 * over its values: COUNT (the top digit), then REFINE or COLLECT until
 * lm_ostat_pending is 0. Each pass: lm_ostat_prepare, lm_ostat_add from
 * each worker (0 or 1, each always given the same rows in the same order
 * of passes), lm_ostat_finish. */
typedef struct lm_ostat {
  int ops[LM_OSTAT_MAX_OPS];
  double ks[LM_OSTAT_MAX_OPS];
  int n_ops, masked, mode, nan_seen, nan[2];
  size_t m, n_ranks;
  lm_ostat_rank r[2 * LM_OSTAT_MAX_OPS];
  lm_ostat_hist *h0[2];
  /* each worker's first values in row order: under LM_OSTAT_FEW values
   * the in-memory path sorts them stably (-0 and +0 as they come) */
  double few[2][LM_OSTAT_FEW];
  size_t n_few[2];
} lm_ostat;

/* lm_ostat_init: for order statistics ops[i] (MEDIAN, QUANTILE ks[i]) of
 * an operand, masked as lm_fold_order_values takes it. */
void lm_ostat_init(lm_ostat *s, const int *ops, const double *ks, int n_ops, int masked);
/* lm_ostat_prepare: allocate for a pass of `mode`; LM_ENOMEM on failure. */
lm_status lm_ostat_prepare(lm_ostat *s, int mode, int n_workers);
/* lm_ostat_add: the next n values of the operand seen by `worker`. */
void lm_ostat_add(lm_ostat *s, int worker, const double *v, size_t n);
/* lm_ostat_finish: end the pass: narrow or settle the wanted ranks. */
void lm_ostat_finish(lm_ostat *s, int n_workers);
/* lm_ostat_pending: the values the unsettled ranks' buckets hold (what a
 * COLLECT pass would keep); 0 when every rank is known. */
size_t lm_ostat_pending(const lm_ostat *s);
/* lm_ostat_result: MEDIAN or QUANTILE k, the bits of lm_fold_order. */
double lm_ostat_result(const lm_ostat *s, int op, double k);
/* lm_ostat_fini: free what s holds. */
void lm_ostat_fini(lm_ostat *s);

#endif
