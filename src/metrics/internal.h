/*
 * internal.h - declarations shared by the files of the metrics module only.
 */
#ifndef LUMEN_METRICS_INTERNAL_H
#define LUMEN_METRICS_INTERNAL_H

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

/* The fields of sysinfo.csv that formulas may name as $field. */
extern const char *const lm_sysinfo_fields[];

#endif
