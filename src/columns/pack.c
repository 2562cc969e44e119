/*
 * pack.c - a table's deferred columns read from their file once and kept
 * packed in memory, for a caller that reads every column more than once.
 *
 * Rows go in blocks of PACK_ROWS; a block of a column is one bit pattern, the
 * column codec's integer token planes (each block starting from 0), or its
 * doubles as they are, so every value keeps its bits and a counter takes a
 * byte or two a row. Two threads pack the two halves of the blocks, each into
 * a region of its own; the table then reads through lm_packed_fetch (a
 * block a piece) and the file is let go. Over the caller's cap the table
 * is left as it was.
 * docs/streaming.md, "Reading each file once".
 */
#include <stdint.h>
#include <string.h>

#include "columns/columns.h"

/* 256 rows: a block of every column of a counter file, as doubles, stays in
 * the processor's cache between its conversion and its packing (larger
 * blocks were slower: docs/perf.md). */
#define PACK_ROWS 256
_Static_assert(PACK_ROWS < LM_COLCODEC_MARK_ROWS, "a block's only mark is its first");

/* What the packs own (the lm_packed's owner): the pieces, per packed
 * column n_blocks of them, and the two regions they point into. */
typedef struct pack_state {
  size_t n_rows, n_blocks, n_packed;
  lm_piece *blocks; /* [packed index * n_blocks + block] */
  unsigned char *region[2];
  size_t reserved[2], used[2];
} pack_state;

static void pack_release(void *arg) {
  pack_state *ps = arg;
  if (!ps) return;
  for (int h = 0; h < 2; h++) lm_free_huge(ps->region[h], ps->reserved[h]);
  lm_free(ps->blocks);
  lm_free(ps);
}

/* One thread's share of the packing: blocks [b0, b1) into region half. */
typedef struct pack_job {
  const lm_table *t;
  pack_state *ps;
  const long *cols;
  size_t b0, b1;
  int half;
  size_t cap;      /* bytes this half may pack */
  double *buf;     /* n_packed * PACK_ROWS */
  double **at;     /* n_packed */
  uint64_t *tokens;/* PACK_ROWS */
  size_t rows[PACK_ROWS];
  int over;
  lm_status status;
  lm_diag diag;
} pack_job;

/* Room for bytes more in the job's region, or NULL when over its cap. */
static unsigned char *room(pack_job *j, size_t bytes) {
  pack_state *ps = j->ps;
  size_t start = (ps->used[j->half] + 7) & ~(size_t)7;
  if (start + bytes > j->cap) {
    j->over = 1;
    return NULL;
  }
  ps->used[j->half] = start + bytes;
  return ps->region[j->half] + start;
}

static void pack_block(pack_job *j, lm_piece *pb, const double *v, size_t n) {
  size_t r = 1, width = 1;
  while (r < n && memcmp(&v[r], &v[0], sizeof *v) == 0) r++;
  if (r == n) {
    pb->kind = LM_PIECE_SAME;
    memcpy(&pb->u.bits, &v[0], sizeof pb->u.bits);
    return;
  }
  unsigned char *p;
  if (lm_colcodec_int_tokens(v, n, j->tokens, &width)) {
    if (!(p = room(j, n * width))) return;
    lm_colcodec_int_put_planes(j->tokens, n, width, p);
    pb->u.data = p;
    pb->kind = LM_PIECE_INT;
    pb->width = (uint8_t)width;
    return;
  }
  if (!(p = room(j, n * sizeof *v))) return;
  memcpy(p, v, n * sizeof *v);
  pb->u.data = p;
  pb->kind = LM_PIECE_RAW;
}

static void *pack_run(void *arg) {
  pack_job *j = arg;
  pack_state *ps = j->ps;
  const lm_table *t = j->t;
  j->status = LM_OK;
  for (size_t b = j->b0; b < j->b1 && j->status == LM_OK && !j->over; b++) {
    size_t r0 = b * PACK_ROWS, n = ps->n_rows - r0 < PACK_ROWS ? ps->n_rows - r0 : PACK_ROWS;
    for (size_t i = 0; i < n; i++) j->rows[i] = r0 + i;
    for (size_t k = 0; k < ps->n_packed; k++) j->at[k] = j->buf + k * PACK_ROWS;
    if ((j->status = t->fetch(t, j->cols, ps->n_packed, j->rows, n, j->at, &j->diag)) != LM_OK) break;
    for (size_t k = 0; k < ps->n_packed && !j->over; k++)
      pack_block(j, &ps->blocks[k * ps->n_blocks + b], j->at[k], n);
  }
  return NULL;
}

lm_status lm_table_pack(lm_table *t, size_t cap, int *packed, lm_diag *diag) {
  *packed = 0;
  size_t n_def = 0;
  for (size_t c = 0; c < t->n_cols; c++) n_def += lm_table_deferred(t, c);
  if (!n_def || !t->n_rows || !t->fetch) return LM_OK;
  lm_status st = LM_OK;
  pack_job jobs[2];
  memset(jobs, 0, sizeof jobs);
  long *cols = lm_malloc(n_def * sizeof *cols);
  pack_state *ps = lm_calloc(1, sizeof *ps);
  lm_packed *pk = lm_packed_new(t->n_cols);
  if (!cols || !ps || !pk) goto nomem;
  ps->n_rows = t->n_rows;
  ps->n_blocks = (t->n_rows + PACK_ROWS - 1) / PACK_ROWS;
  ps->n_packed = n_def;
  ps->blocks = lm_calloc(ps->n_blocks * n_def, sizeof *ps->blocks);
  if (!ps->blocks) goto nomem;
  for (size_t c = 0, k = 0; c < t->n_cols; c++)
    if (lm_table_deferred(t, c)) {
      pk->cols[c] = ps->blocks + k * ps->n_blocks;
      cols[k++] = (long)c;
    }
  pk->n_pieces = ps->n_blocks;
  pk->every = PACK_ROWS;
  size_t mid = ps->n_blocks >= 2 ? ps->n_blocks / 2 : ps->n_blocks;
  int n_jobs = ps->n_blocks >= 2 ? 2 : 1;
  for (int h = 0; h < n_jobs; h++) {
    pack_job *j = &jobs[h];
    j->t = t;
    j->ps = ps;
    j->cols = cols;
    j->half = h;
    j->b0 = h ? mid : 0;
    j->b1 = h || n_jobs == 1 ? ps->n_blocks : mid;
    /* the half's share of the cap, no more than its rows as doubles */
    size_t rows = (j->b1 - j->b0) * PACK_ROWS, raw = rows * n_def * sizeof(double) + 8 * (j->b1 - j->b0) * n_def;
    j->cap = n_jobs == 2 ? cap / 2 : cap;
    if (j->cap > raw) j->cap = raw;
    ps->reserved[h] = j->cap ? j->cap : 1;
    ps->region[h] = lm_alloc_huge(ps->reserved[h]);
    j->buf = lm_malloc(n_def * PACK_ROWS * sizeof *j->buf);
    j->at = lm_malloc(n_def * sizeof *j->at);
    j->tokens = lm_malloc(PACK_ROWS * sizeof *j->tokens);
    if (!ps->region[h] || !j->buf || !j->at || !j->tokens) goto nomem;
  }
  if (n_jobs == 2) lm_run_pair(pack_run, &jobs[0], &jobs[1]);
  else pack_run(&jobs[0]);
  for (int h = 0; h < n_jobs; h++)
    if (jobs[h].status != LM_OK) {
      st = jobs[h].status;
      if (diag) *diag = jobs[h].diag;
      goto done;
    }
  if (jobs[0].over || jobs[1].over) goto done; /* left as it was */
  /* The file is let go; the packs answer from now on. */
  if (t->fetch_release) t->fetch_release(t->fetch_state);
  pk->owner = ps;
  pk->owner_free = pack_release;
  t->fetch_state = pk;
  t->fetch = lm_packed_fetch;
  t->fetch_release = lm_packed_release;
  ps = NULL;
  pk = NULL;
  *packed = 1;
  goto done;
nomem:
  st = lm_oom(diag, t->path);
done:
  for (int h = 0; h < 2; h++) {
    lm_free(jobs[h].buf);
    lm_free(jobs[h].at);
    lm_free(jobs[h].tokens);
  }
  pack_release(ps);
  lm_packed_release(pk);
  lm_free(cols);
  return st;
}

size_t lm_table_packed_bytes(const lm_table *t) {
  const lm_packed *pk = lm_packed_of(t, pack_release);
  if (!pk) return 0;
  const pack_state *ps = pk->owner;
  return ps->used[0] + ps->used[1] + ps->n_blocks * ps->n_packed * sizeof(lm_piece);
}
