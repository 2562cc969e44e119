/*
 * merge.h - what the two readers of a folder of rank.R parts share
 * (private to src/ranks): read.c merges the parts row after row, split.c
 * combines the parts of a --split ranks profile set by set, both into the
 * merged tables of one source at a time.
 */
#ifndef LUMEN_RANKS_MERGE_H
#define LUMEN_RANKS_MERGE_H

#include "ranks/ranks.h"

typedef struct part {
  char *dir;
  int rank;
  size_t n_rows;
  int split; /* a rank's part of a --split ranks profile */
  size_t at; /* its first row in the merged tables */
  const char **region_names; /* its regions (numbered as in the part) */
  size_t n_regions;
  int db;        /* read from its lumen database (else a folder of CSV files) */
  char arch[64]; /* a database's gpu_arch, from pass 1 ("" unknown) */
  int info_only; /* the first part, outside a --rank selection: read for its
                    system information and roofline alone (no rows) */
  int left_out;  /* not in the --rank selection (its rows are not read) */
} part;

/* The merged columns of one source: how many its parts name (an upper
 * bound of the merged table's width) and, in pass 2, the table. */
typedef struct source {
  char *name;
  size_t n_names;
  lm_table *table;
  size_t *filled; /* per column: rows written so far (blank up to there) */
  int32_t *best;  /* combined --split ranks parts: per column, the plan's set
                     its values came from (the lowest that has it; -1 none) */
  uint8_t **written; /* parts read side by side: per column, per part, 1 once
                     that part's rows are in (the others are blanked last) */
  size_t *first_part, *first_pos; /* per column: the lowest part that has it
                     and its place there (the merged order of columns) */
  size_t *text_part; /* per column: the part its first_text comes from (the
                     lowest with one: parts append in any order) */
  size_t *missing;   /* with merge.stats: per column, blanks so far */
  uint8_t *not_int;  /* with merge.stats: per column, a number not an integer */
  uint8_t *uniform;  /* with merge.stats, per numeric column: 1 while every
                        part so far held one value, the same, in all its
                        rows (those rows are not written: written[k][p] is
                        2 and the value is in part_value[k][p]); 0 once
                        not (the column is then filled at the end) */
  double **part_value;
  int32_t **part_col; /* per column: NULL, or per part the part's column
                        that stays packed (kept as its read kept it:
                        token planes), -1 where the part's rows are in
                        the merged column's values, LM_RANKS_PART_VALUE
                        where the part held one value (part_value) */
} source;

#define LM_RANKS_PART_VALUE (-2)

/* A name counted in pass 1: its source and column. */
typedef struct counted {
  source *source;
  const char *name;
  int later; /* the want's LM_DB_WANT_LATER: read only by the evaluator
                (a candidate for packing) */
} counted;

typedef struct merge {
  const char *dir;
  size_t n_parts;    /* parts read side by side: how many (written flags) */
  lm_arena *arena;   /* the merged workload's */
  lm_map *names;     /* "source\037column" seen in pass 1 (of a database
                        part: those want accepts) */
  lm_db_want_fn want;/* the counter columns read from the parts' databases
                        (NULL: all), chosen after pass 1 */
  void *want_ctx;
  int stats;         /* every part read from its database: the merged tables'
                        statistics are the sums of the parts' (which their
                        reads computed), not a pass over every cell */
  int keep_planes;   /* parts' reads leave the integer columns only the
                        evaluator reads as their stored token planes
                        (LM_DB_WANT_LATER), which the merge packs as they
                        are (parts read here, with merge.stats) */
  size_t rows_left_out; /* dispatches of the parts a --rank selection
                        leaves out */
  struct counted *counted; /* the names counted in pass 1, in order */
  size_t n_counted, cap_counted;
  lm_map *placed;    /* "source\037column" -> index into dest: merged
                        columns made before pass 2, which parts read from
                        their databases decode into (NULL: none) */
  double **dest;
  lm_map *verdicts;  /* want's answer per "source\037column", asked once */
  source *sources;
  size_t n_sources, cap_sources;
  lm_map *strings;   /* hosts and clock sources, interned in arena */
  lm_diag *diag;
  int exec_state;    /* merged executions: 0 none yet, 1 made, 2 dropped */
  size_t without_exec; /* parts read without executions */
  size_t cap_prov;   /* room in the merged provenance arrays */
} merge;

/* lm_ranks_source: the merged source `name`, added when add is set (NULL
 * when absent, or out of memory). */
source *lm_ranks_source(merge *m, const char *name, int add);
/* lm_ranks_intern: s kept once in the merge's arena (NULL for NULL, or
 * out of memory). */
const char *lm_ranks_intern(merge *m, const char *s);
/* lm_ranks_blank: rows [from, to) of c blank (NaN, no text). */
void lm_ranks_blank(lm_column *c, size_t from, size_t to);
struct lm_ranks_pack;
/* lm_ranks_append: the rows of table src at row `at` of source s (of
 * `total` rows); col_set (combined --split ranks parts) says per column
 * the plan's set its values came from, a lower set replacing a higher
 * one. Errors: a column not named in pass 1, out of memory. */
lm_status lm_ranks_append(merge *m, source *s, const lm_table *src, size_t at, size_t total, const char *part_dir,
                          const int32_t *col_set, size_t part_index, const struct lm_ranks_pack *pack);
/* lm_ranks_place_columns: with merge.stats, before pass 2: a merged column
 * for every name pass 1 counted (in m->placed and m->dest). Errors: out of
 * memory. */
lm_status lm_ranks_place_columns(merge *m, size_t total);
/* Where one part's read decodes its columns (lm_ranks_place's context). */
typedef struct lm_ranks_placement {
  const merge *m;
  size_t at, n_rows; /* the part's first row in the merged tables, its rows */
  uint8_t *used;     /* per merged column: handed out for this part */
  double *scratch;   /* the reading thread's: n_rows values per merged
                        column, where the columns that may be packed are
                        decoded (NULL: into the merged tables) */
} lm_ranks_placement;
/* lm_ranks_place: an lm_db_place_fn: the part's rows of merged column
 * (src, name), each once; NULL for any other column. Read-only on the
 * merge, so the reader threads call it side by side. */
double *lm_ranks_place(void *ctx, const char *src, const char *name, size_t n_rows);
/* A part's table's packed columns (ranks/packed.c). */
typedef struct lm_ranks_pack lm_ranks_pack;
/* lm_ranks_evaluator_only: 1 when the want said that only the evaluator
 * reads column `name` of source `src` (LM_DB_WANT_LATER): such a column
 * may be left to lm_table_fetch. Read-only on the merge. */
int lm_ranks_evaluator_only(const merge *m, const char *src, const char *name);
/* lm_ranks_pack_table: the columns of src that only the evaluator reads
 * (left as their stored token planes by the part's read, whose planes are
 * copied as they are, decoded into the placement's scratch,
 * scratch[0..n_scratch), or, with
 * elsewhere, a part's own of a part loaded elsewhere) and that hold integers (|v| < 2^62 but -0.0,
 * blanks the canonical NaN), as token planes; *out NULL when none. On the
 * reading thread, before the merge's lock. Errors: out of memory.
 * lm_ranks_pack_free(NULL) is a no-op. */
lm_status lm_ranks_pack_table(const merge *m, const lm_table *src, const double *scratch, size_t n_scratch,
                              int elsewhere, lm_ranks_pack **out, lm_diag *diag);
void lm_ranks_pack_free(lm_ranks_pack *pk);
/* lm_ranks_packed: 1 when column c of the packed table is in pk. */
int lm_ranks_packed(const lm_ranks_pack *pk, size_t c);
/* lm_ranks_keep_pack: after part part_index's table was appended to s,
 * its pack (NULL: none) is s's, freed with the merged table (also on an
 * error). Errors: out of memory. */
lm_status lm_ranks_keep_pack(merge *m, source *s, lm_ranks_pack *pk, size_t part_index);
/* lm_ranks_finish_packed: the merged columns that some part left packed
 * become deferred columns of s's table, read back block by block through
 * lm_packed_fetch, a part a piece, which decodes each part's rows from its
 * planes (and takes the other parts' rows from the merged values). Last, after the columns took
 * their final order. Errors: out of memory. */
lm_status lm_ranks_finish_packed(merge *m, source *s, const part *parts, size_t n_parts);
/* lm_ranks_finish_stats: with merge.stats, the merged columns' blanks,
 * integers and text counts from the sums the appends kept. */
void lm_ranks_finish_stats(source *s);
/* lm_ranks_finish_uniform: with merge.stats, after the parts are in and
 * before the blanks of parts lacking a column: a column every part held
 * one same value in shares one array of it; the rows of the others'
 * parts that held one value are filled. Errors: out of memory. */
lm_status lm_ranks_finish_uniform(merge *m, source *s, const part *parts, size_t n_parts);
/* lm_ranks_canonical_columns: s's merged columns (with their packed
 * parts and part values) in the order one part after the other gives:
 * the first part's, then what each next part adds, in its order.
 * lm_ranks_canonical_strings: t's text ids in the order of first
 * appearance, whatever order the parts were read in. Errors: out of
 * memory. */
lm_status lm_ranks_canonical_columns(source *s);
lm_status lm_ranks_canonical_strings(lm_table *t);
/* lm_ranks_adopt_info: part i's system information (and roofline) moved
 * to w; part 0's is w's own. Errors: out of memory. */
lm_status lm_ranks_adopt_info(merge *m, lm_workload *w, lm_workload *pw, size_t i);
/* lm_ranks_split_combine: the parts of a --split ranks profile combined
 * row by row, each counter from the first set of the plan that has it
 * (counts: pass 1's names). *differ set (and LM_OK, *out NULL) when the
 * ranks ran other dispatches: the caller reads them as each rank's rows. */
lm_status lm_ranks_split_combine(const merge *counts, part *parts, size_t n_parts, lm_workload **out, int *differ);

#endif
