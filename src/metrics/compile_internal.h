/*
 * compile_internal.h - what the metric compiler's files share: the
 * builder that collects one architecture's graph, tables and facts while
 * the definition files are read (compile_files.c) and assembled into a
 * catalog (compile.c), and the graph's node constructors.
 */
#ifndef LUMEN_METRICS_COMPILE_INTERNAL_H
#define LUMEN_METRICS_COMPILE_INTERNAL_H

#include "metrics/internal.h"

/* A growable array of any element type. */
#define VEC(T) struct { T *v; int32_t n, cap; }
#define VEC_PUSH(b, vec, item)                                           \
  (((vec).n < (vec).cap || lm_metrics_grow(&(vec).v, &(vec).cap, sizeof *(vec).v)) \
       ? ((vec).v[(vec).n] = (item), (vec).n++, 1)                       \
       : ((b)->status = LM_ENOMEM, 0))


typedef struct quantity {
  const char *name;
  const lm_expr *expr;
  const char *source; /* pinned source, or NULL */
  const char *file;
  long line, column;
  int exact;          /* column + expression offset is exact */
  int busy;
} quantity;

typedef struct norm_def {
  lm_norm norm;
  const lm_expr *expr;
  const char *file;
  long line, column;
  int exact;
} norm_def;

/* Where a formula came from, for error positions. */
typedef struct ctx {
  const char *source;
  int template_ok;
  const char *file;
  long line, column;
  int exact;
} ctx;

typedef struct builder {
  lm_arena *arena; /* the catalog's */
  lm_arena *tmp;   /* trees and scratch, freed after compiling */
  lm_diag *diag;
  lm_status status;
  VEC(lm_node) nodes;
  lm_map *node_index;
  VEC(lm_input) inputs;
  lm_map *input_index;
  VEC(const char *) sysvars;
  lm_map *sysvar_index;
  VEC(norm_def) norms;
  VEC(int32_t) norm_nodes;
  VEC(const char *) norm_slot_source;
  VEC(quantity) quants;
  lm_map *quant_index;
  lm_map *quant_memo;
  VEC(lm_paneldef) panels;
  VEC(lm_tabledef) tables;
  VEC(lm_coldef) cols;
  VEC(lm_rowdef) rows;
  VEC(lm_celldef) cells;
  VEC(const char *) counters;
  VEC(lm_block_limit) limits;
  VEC(lm_block_alias) aliases;
  VEC(lm_unmeasurable) unmeasurable;
  const char *arch, *products, *accumulate, *vendor, *chip;
  int32_t l2_channels, lds_banks_per_cu, pipes_per_gpu, sqc_per_xcd;
  int depth;       /* compile_expr calls under way (one stack frame each) */
  int quant_depth; /* quantities being expanded, one inside the other */
} builder;

/* Quantities may refer to quantities this many levels deep; and a formula
 * with the quantities it reaches expanded may be this deep in all (each
 * level is one frame of compile_expr: the stack stays small). */
#define MAX_QUANTITY_DEPTH 64
#define MAX_COMPILE_DEPTH 4000

/* One definition file, parsed. */
typedef struct file_ctx {
  const char *name;
  const ynode *root;
  int applied; /* an overlay applied to the others */
} file_ctx;

/* lm_metrics_grow: double the capacity of a VEC's array (elem bytes each);
 * 0 when out of memory (the array is unchanged). */
int lm_metrics_grow(void *vp, int32_t *cap, size_t elem);

/* lm_metrics_error_at: record a parse error at file:line:column (field)
 * in the builder unless one is recorded already; returns -1. */
#if defined(__GNUC__)
__attribute__((format(printf, 6, 7)))
#endif
int32_t lm_metrics_error_at(builder *b, const char *file, long line, long column, const char *field,
                            const char *fmt, ...);

/* lm_metrics_make_node: the graph node for (op, x, y, z, k), shared with
 * any equal one, constants folded; -1 on error (recorded in b). */
int32_t lm_metrics_make_node(builder *b, uint8_t op, int32_t x, int32_t y, int32_t z, double k);

/* lm_metrics_make_const: the node of constant k. */
int32_t lm_metrics_make_const(builder *b, double k);

/* lm_metrics_compile_expr: compile formula e in context c into the graph;
 * its node, or -1 with the error recorded in b. */
int32_t lm_metrics_compile_expr(builder *b, const lm_expr *e, const ctx *c);

/* lm_metrics_is_sysinfo_field: whether name is a system-information field. */
int lm_metrics_is_sysinfo_field(const char *name);

/* The definition files (compile_files.c): the architecture facts
 * (arch.yaml), the named quantities, and one panel with its tables. Each
 * returns b->status. */
lm_status lm_metrics_load_arch(builder *b, const file_ctx *f);
lm_status lm_metrics_load_quantities(builder *b, const file_ctx *f);
lm_status lm_metrics_load_panel(builder *b, const file_ctx *f);

/* lm_metrics_load_unmeasurable: arch.yaml's not_measurable list (YAML node
 * list of `file`) into b->unmeasurable, after b->counters is read (a
 * statement's counter patterns must match none of them). Returns
 * b->status. */
lm_status lm_metrics_load_unmeasurable(builder *b, const char *file, const ynode *list);

#endif
