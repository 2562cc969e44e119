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

/* The fields of sysinfo.csv that formulas may name as $field. */
extern const char *const lm_sysinfo_fields[];

#endif
