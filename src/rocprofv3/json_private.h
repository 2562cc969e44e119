/*
 * json_private.h - shared by json_scan.c (the JSON tokenizer: a file's
 * tokens as events), json.c (rocprofv3's JSON output parsed from those
 * events) and json_fold.c (each record folded as it completes): the
 * scanner's events, the fields the parse keeps of each record, and the
 * fold's entry points, called in document order.
 */
#ifndef LUMEN_ROCPROFV3_JSON_PRIVATE_H
#define LUMEN_ROCPROFV3_JSON_PRIVATE_H

#include <stddef.h>
#include <stdint.h>

#include "rocprofv3/rocprofv3_private.h"

/* Containers nest at most this deep. */
enum { LM_V3J_MAX_DEPTH = 128 };

/* The literals, as the literal event names them. */
enum { LM_V3J_NULL, LM_V3J_FALSE, LM_V3J_TRUE };

/* What the scanner hands over, token by token in document order. A
 * text (key or string, its escapes replaced, not NUL-terminated) is lent
 * for the event only. A number is its double (the one lm_parse_number
 * gives for its text); in_range 0 when no double holds its magnitude
 * (1e999). An event returns LM_OK to go on; any other status stops the
 * scan, which returns it. where (may be NULL) writes the path of the
 * open containers into out (capacity cap) for a syntax error. */
typedef struct lm_v3j_events {
  lm_status (*begin)(void *ctx, int is_array); /* '{' (is_array 0) or '[' */
  lm_status (*end)(void *ctx);                 /* '}' or ']' */
  lm_status (*key)(void *ctx, const char *text, size_t len);
  lm_status (*string)(void *ctx, const char *text, size_t len);
  lm_status (*number)(void *ctx, double value, int in_range);
  lm_status (*literal)(void *ctx, int which); /* LM_V3J_NULL, _FALSE, _TRUE */
  void (*where)(void *ctx, char *out, size_t cap);
} lm_v3j_events;

/* A JSON file scanned through a window of it. */
typedef struct lm_v3j_scan lm_v3j_scan;

/* lm_v3j_scan_open: open path (a regular file) to scan; free with
 * lm_v3j_scan_close (NULL: no-op). */
lm_status lm_v3j_scan_open(const char *path, lm_v3j_scan **out, lm_diag *diag);
void lm_v3j_scan_close(lm_v3j_scan *s);
/* lm_v3j_scan_run: hand the file's first JSON value to ev with ctx, token
 * by token; what follows it is not read. LM_OK when the value is whole;
 * an event's status when it stops the scan (diag as the event left it);
 * LM_EPARSE for text that is not JSON or ends early, naming the byte, its
 * line and the path, LM_ELIMIT for a token over 16 MiB, LM_EIO, LM_ENOMEM.
 * Containers nest at most LM_V3J_MAX_DEPTH deep: the begin event refuses
 * what would go deeper. */
lm_status lm_v3j_scan_run(lm_v3j_scan *s, const lm_v3j_events *ev, void *ctx, lm_diag *diag);
/* lm_v3j_scan_line: the line of the token last handed out. */
long lm_v3j_scan_line(const lm_v3j_scan *s);

/* The fields of one record as parsed. A number field holds a JSON number
 * or the number under an object's "handle" ({"handle": 7}); a text field
 * a string; an object field only says that its object began (its members
 * are fields of their own). Bit b of `set` says field b holds a value, of
 * `seen` that its key appeared: the first of a duplicated key is kept. */
enum { LM_V3J_NUMS = 14, LM_V3J_TEXTS = 2, LM_V3J_TEXT0 = LM_V3J_NUMS, LM_V3J_OBJ0 = LM_V3J_NUMS + LM_V3J_TEXTS };
typedef struct lm_v3j_record {
  double num[LM_V3J_NUMS];
  char *text[LM_V3J_TEXTS]; /* owned, NUL-terminated, reused by the next record */
  size_t text_cap[LM_V3J_TEXTS];
  uint32_t set, seen;
} lm_v3j_record;

/* The fields of each record (bits of lm_v3j_record). */
enum { A_ID, A_NODE, A_TYPE, A_CU, A_SIMD, A_WAVE, A_WGMAX, A_WAVES, A_CLK, A_XCC, A_ARRAYS, A_PER_SE };
enum { A_NAME = LM_V3J_TEXT0, A_PRODUCT };
enum { C_ID, C_NAME = LM_V3J_TEXT0 };
enum { S_KERNEL, S_LDS, S_VGPR, S_AGPR, S_SGPR, S_FORMATTED = LM_V3J_TEXT0, S_NAME };
enum { E_START, E_END, E_DATA = LM_V3J_OBJ0, E_INFO, E_RECORDS };
enum { I_DISPATCH, I_AGENT, I_KERNEL, I_SCRATCH, I_GX, I_GY, I_GZ, I_WX, I_WY, I_WZ, I_GRID = LM_V3J_OBJ0, I_WG };
enum { R_COUNTER, R_VALUE };
enum { T_START, T_END, T_INFO = LM_V3J_OBJ0 };

static inline int lm_v3j_has(const lm_v3j_record *r, int bit) { return (r->set >> bit) & 1u; }

/* The sections of a process object whose end the fold is told of. */
enum { LM_V3J_AGENTS = 1, LM_V3J_COUNTERS = 2, LM_V3J_SYMBOLS = 4, LM_V3J_COLLECTION = 8 };

/* The fold of one JSON file: what each process's records refer to by id,
 * and what waits for a section still to come. */
typedef struct lm_v3j lm_v3j;

/* lm_v3j_new: the fold of the JSON file path into fold, its GPU agents
 * into agents (when it holds none yet), its processes numbered as groups
 * from *group on. */
lm_status lm_v3j_new(const char *path, lm_v3_fold *fold, lm_v3_agents *agents, int *group, lm_v3j **out, lm_diag *diag);
void lm_v3j_free(lm_v3j *j);

/* Each of these folds what its record says, in document order; index is
 * the record's place in its array (entry: of the counter collection's
 * entry the record belongs to). They fail naming the field by its path. */
lm_status lm_v3j_process_begin(lm_v3j *j, size_t index, lm_diag *diag);
lm_status lm_v3j_agent(lm_v3j *j, const lm_v3j_record *r, size_t index, lm_diag *diag);
lm_status lm_v3j_counter(lm_v3j *j, const lm_v3j_record *r, size_t index, lm_diag *diag);
lm_status lm_v3j_symbol(lm_v3j *j, const lm_v3j_record *r, size_t index, lm_diag *diag);
void lm_v3j_entry_begin(lm_v3j *j);
lm_status lm_v3j_value(lm_v3j *j, const lm_v3j_record *r, size_t entry, size_t index, lm_diag *diag);
lm_status lm_v3j_entry(lm_v3j *j, const lm_v3j_record *e, const lm_v3j_record *info, size_t index, lm_diag *diag);
lm_status lm_v3j_trace(lm_v3j *j, const lm_v3j_record *t, const lm_v3j_record *info, size_t index, lm_diag *diag);
/* lm_v3j_section_end: section (LM_V3J_*) of the process is complete. */
lm_status lm_v3j_section_end(lm_v3j *j, int section, lm_diag *diag);
/* lm_v3j_process_end: resolve what waited for a later section (kernel
 * names, agents, counter names; the kernel trace when it came before the
 * collection). Its errors have no line: they are found at the end. */
lm_status lm_v3j_process_end(lm_v3j *j, lm_diag *diag);

#endif
