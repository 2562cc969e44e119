/*
 * serialize.c - an analysis as bytes and back, so that a store can keep
 * the result of an evaluation and answer the same view again without
 * loading a single counter column.
 *
 * The format is private to one lumen build (the cache key carries the
 * version and the definitions' digest): a magic word, then every result
 * table with its titles, roles, cells and row labels. Integers are
 * little-endian; strings are a 32-bit length (0xffffffff for NULL) and the
 * bytes. Reading checks every length against what is left, so a damaged
 * entry is refused, never trusted.
 */
#include <stdint.h>
#include <string.h>

#include "analyze/analyze.h"

#define MAGIC "LMAN0002"

static void put_u32(lm_buf *b, uint32_t v) {
  unsigned char x[4] = {(unsigned char)v, (unsigned char)(v >> 8), (unsigned char)(v >> 16),
                        (unsigned char)(v >> 24)};
  lm_buf_append(b, (const char *)x, 4);
}

static void put_f64(lm_buf *b, double v) {
  uint64_t u;
  memcpy(&u, &v, 8);
  put_u32(b, (uint32_t)u);
  put_u32(b, (uint32_t)(u >> 32));
}

static void put_str(lm_buf *b, const char *s) {
  if (!s) {
    put_u32(b, 0xffffffffu);
    return;
  }
  size_t n = strlen(s);
  put_u32(b, (uint32_t)n);
  lm_buf_append(b, s, n);
}

static void put_strs(lm_buf *b, const char *const *v, int32_t n) {
  put_u32(b, v ? 1 : 0);
  for (int32_t i = 0; v && i < n; i++) put_str(b, v[i]);
}

lm_status lm_analysis_serialize(const lm_analysis *a, lm_buf *b) {
  lm_buf_append(b, MAGIC, 8);
  put_str(b, a->norm);
  put_f64(b, (double)a->n_selected);
  put_u32(b, (uint32_t)a->n_tables);
  for (int32_t t = 0; t < a->n_tables; t++) {
    const lm_rtable *r = &a->tables[t];
    put_u32(b, (uint32_t)r->def);
    put_str(b, r->id);
    put_str(b, r->title);
    put_str(b, r->panel_title);
    put_u32(b, (uint32_t)r->panel_id);
    put_u32(b, (uint32_t)(r->kind | (r->style << 8) | (r->comparable << 16)));
    put_u32(b, (uint32_t)r->shown);
    put_u32(b, (uint32_t)r->n_cols);
    put_strs(b, r->titles, r->n_cols);
    for (int32_t c = 0; c < r->n_cols; c++) put_u32(b, r->roles ? r->roles[c] : 0);
    put_u32(b, (uint32_t)r->n_rows);
    for (int32_t i = 0; i < r->n_rows * r->n_cols; i++) {
      const lm_cell *cell = &r->cells[i];
      put_u32(b, (uint32_t)(cell->kind | (cell->integer << 8)));
      if (cell->kind == LM_CELL_NUMBER) put_f64(b, cell->num);
      else if (cell->kind == LM_CELL_TEXT) put_str(b, cell->text);
    }
    put_strs(b, r->row_ids, r->n_rows);
    put_strs(b, r->row_sources, r->n_rows);
    put_strs(b, r->row_descs, r->n_rows);
    put_strs(b, r->row_formulas, r->n_rows);
    put_str(b, r->note);
    put_u32(b, r->row_spread ? 1 : 0);
    for (int32_t i = 0; r->row_spread && i < r->n_rows; i++) put_f64(b, r->row_spread[i]);
  }
  /* How far the executions differed (lumen profiles). */
  const lm_spread *sp = a->spread;
  put_u32(b, sp ? 1 : 0);
  if (sp) {
    put_u32(b, (uint32_t)sp->n_sets);
    put_u32(b, (uint32_t)sp->n_shared);
    put_strs(b, sp->shared, sp->n_shared);
    put_f64(b, (double)sp->n_flagged);
    put_u32(b, (uint32_t)sp->n_kernels);
    for (size_t k = 0; k < sp->n_kernels; k++) {
      const lm_kernel_spread *ks = &sp->kernels[k];
      put_str(b, ks->kernel);
      put_f64(b, (double)ks->rows);
      put_f64(b, (double)ks->rows_over);
      put_f64(b, ks->max_spread);
      for (int32_t q = 0; q < sp->n_shared; q++) put_f64(b, ks->spread[q]);
    }
  }
  /* The rank table (several MPI ranks). */
  const lm_rank_table *rt = a->ranks;
  put_u32(b, rt ? 1 : 0);
  if (rt) {
    put_u32(b, (uint32_t)rt->slowest);
    put_u32(b, (uint32_t)rt->fastest);
    put_f64(b, rt->imbalance);
    put_u32(b, (uint32_t)rt->n_rows);
    for (size_t i = 0; i < rt->n_rows; i++) {
      const lm_rank_row *x = &rt->rows[i];
      put_u32(b, (uint32_t)x->rank);
      put_str(b, x->host);
      put_f64(b, (double)x->dispatches);
      put_f64(b, x->total_ns);
      put_f64(b, x->mean_ns);
      put_f64(b, x->busy_cycles);
      put_f64(b, x->waves);
    }
    put_u32(b, (uint32_t)rt->n_kernels);
    for (size_t k = 0; k < rt->n_kernels; k++) {
      const lm_rank_kernel *x = &rt->kernels[k];
      put_str(b, x->kernel);
      put_f64(b, (double)x->n_ranks);
      put_u32(b, (uint32_t)x->max_rank);
      put_u32(b, (uint32_t)x->min_rank);
      put_f64(b, x->max_ns);
      put_f64(b, x->min_ns);
      put_f64(b, x->ratio);
    }
  }
  return b->failed ? LM_ENOMEM : LM_OK;
}

typedef struct reader {
  const unsigned char *p, *end;
  lm_arena *arena;
  int bad;
} reader;

static uint32_t get_u32(reader *r) {
  if (r->end - r->p < 4) {
    r->bad = 1;
    return 0;
  }
  uint32_t v = (uint32_t)r->p[0] | (uint32_t)r->p[1] << 8 | (uint32_t)r->p[2] << 16 | (uint32_t)r->p[3] << 24;
  r->p += 4;
  return v;
}

static double get_f64(reader *r) {
  uint64_t lo = get_u32(r), hi = get_u32(r);
  uint64_t u = lo | hi << 32;
  double v;
  memcpy(&v, &u, 8);
  return v;
}

static const char *get_str(reader *r) {
  uint32_t n = get_u32(r);
  if (r->bad || n == 0xffffffffu) return NULL;
  if ((size_t)(r->end - r->p) < n) {
    r->bad = 1;
    return NULL;
  }
  char *s = lm_arena_alloc(r->arena, (size_t)n + 1);
  if (!s) {
    r->bad = 1;
    return NULL;
  }
  memcpy(s, r->p, n);
  s[n] = '\0';
  r->p += n;
  return s;
}

static const char **get_strs(reader *r, int32_t n) {
  if (!get_u32(r) || r->bad) return NULL;
  const char **v = lm_arena_alloc(r->arena, (size_t)(n > 0 ? n : 1) * sizeof *v);
  if (!v) {
    r->bad = 1;
    return NULL;
  }
  for (int32_t i = 0; i < n && !r->bad; i++) v[i] = get_str(r);
  return v;
}

/* A count read from the data, checked against what could be left. */
static int32_t get_count(reader *r, size_t min_bytes_each) {
  uint32_t n = get_u32(r);
  if (r->bad || n > (uint32_t)INT32_MAX || (min_bytes_each && (size_t)(r->end - r->p) / min_bytes_each < n)) {
    r->bad = 1;
    return 0;
  }
  return (int32_t)n;
}

lm_status lm_analysis_deserialize(const void *data, size_t len, const lm_workload *w,
                                  const lm_catalog *cat, lm_analysis **out, lm_diag *diag) {
  *out = NULL;
  if (len < 8 || memcmp(data, MAGIC, 8) != 0)
    return lm_diag_set(diag, LM_EDATA, NULL, 0, 0, NULL, "not a stored analysis of this lumen");
  lm_arena *arena = lm_arena_new(1 << 16);
  if (!arena) return lm_diag_set(diag, LM_ENOMEM, NULL, 0, 0, NULL, "out of memory");
  reader r = {(const unsigned char *)data + 8, (const unsigned char *)data + len, arena, 0};
  lm_analysis *a = lm_arena_alloc(arena, sizeof *a);
  if (!a) goto bad;
  memset(a, 0, sizeof *a);
  a->arena = arena;
  a->workload = w;
  a->catalog = cat;
  a->norm = get_str(&r);
  a->n_selected = (size_t)get_f64(&r);
  a->n_tables = get_count(&r, 16);
  a->tables = lm_arena_alloc(arena, (size_t)(a->n_tables ? a->n_tables : 1) * sizeof *a->tables);
  if (!a->tables) goto bad;
  for (int32_t t = 0; t < a->n_tables && !r.bad; t++) {
    lm_rtable *x = &a->tables[t];
    memset(x, 0, sizeof *x);
    x->def = (int32_t)get_u32(&r);
    x->id = get_str(&r);
    x->title = get_str(&r);
    x->panel_title = get_str(&r);
    x->panel_id = (int32_t)get_u32(&r);
    uint32_t flags = get_u32(&r);
    x->kind = (uint8_t)flags;
    x->style = (uint8_t)(flags >> 8);
    x->comparable = (uint8_t)(flags >> 16);
    x->shown = (int)get_u32(&r);
    x->n_cols = get_count(&r, 4);
    x->titles = get_strs(&r, x->n_cols);
    x->roles = lm_arena_alloc(arena, (size_t)(x->n_cols ? x->n_cols : 1));
    if (!x->roles) goto bad;
    for (int32_t c = 0; c < x->n_cols; c++) x->roles[c] = (uint8_t)get_u32(&r);
    x->n_rows = get_count(&r, 4 * (size_t)(x->n_cols ? x->n_cols : 1));
    if (r.bad) break;
    size_t n_cells = (size_t)x->n_rows * (size_t)x->n_cols;
    x->cells = lm_arena_alloc(arena, (n_cells ? n_cells : 1) * sizeof *x->cells);
    if (!x->cells) goto bad;
    for (size_t i = 0; i < n_cells && !r.bad; i++) {
      lm_cell *cell = &x->cells[i];
      uint32_t k = get_u32(&r);
      cell->kind = (uint8_t)k;
      cell->integer = (uint8_t)(k >> 8);
      cell->num = 0;
      cell->text = NULL;
      if (cell->kind == LM_CELL_NUMBER) cell->num = get_f64(&r);
      else if (cell->kind == LM_CELL_TEXT) cell->text = get_str(&r);
      if (cell->kind > LM_CELL_TEXT || (cell->kind == LM_CELL_TEXT && !cell->text)) r.bad = 1;
    }
    x->row_ids = get_strs(&r, x->n_rows);
    x->row_sources = get_strs(&r, x->n_rows);
    x->row_descs = get_strs(&r, x->n_rows);
    x->row_formulas = get_strs(&r, x->n_rows);
    x->note = get_str(&r);
    if (!x->id) r.bad = 1;
    if (get_u32(&r) && !r.bad) {
      if ((size_t)(r.end - r.p) / 8 < (size_t)x->n_rows) goto bad;
      x->row_spread = lm_arena_alloc(arena, (size_t)(x->n_rows ? x->n_rows : 1) * sizeof *x->row_spread);
      if (!x->row_spread) goto bad;
      for (int32_t i = 0; i < x->n_rows; i++) x->row_spread[i] = get_f64(&r);
    }
  }
  if (!r.bad && get_u32(&r) && !r.bad) {
    lm_spread *sp = lm_arena_alloc(arena, sizeof *sp);
    if (!sp) goto bad;
    memset(sp, 0, sizeof *sp);
    sp->n_sets = (int32_t)get_u32(&r);
    sp->n_shared = get_count(&r, 4);
    sp->shared = get_strs(&r, sp->n_shared);
    sp->n_flagged = (size_t)get_f64(&r);
    sp->n_kernels = (size_t)get_count(&r, 28);
    sp->kernels = lm_arena_alloc(arena, (sp->n_kernels + 1) * sizeof *sp->kernels);
    if (!sp->kernels || !sp->shared) goto bad;
    for (size_t k = 0; k < sp->n_kernels && !r.bad; k++) {
      lm_kernel_spread *ks = &sp->kernels[k];
      ks->kernel = get_str(&r);
      ks->rows = (size_t)get_f64(&r);
      ks->rows_over = (size_t)get_f64(&r);
      ks->max_spread = get_f64(&r);
      if ((size_t)(r.end - r.p) / 8 < (size_t)sp->n_shared) goto bad;
      ks->spread = lm_arena_alloc(arena, ((size_t)sp->n_shared + 1) * sizeof *ks->spread);
      if (!ks->spread || !ks->kernel) goto bad;
      for (int32_t q = 0; q < sp->n_shared; q++) ks->spread[q] = get_f64(&r);
    }
    a->spread = sp;
  }
  if (!r.bad && get_u32(&r) && !r.bad) {
    lm_rank_table *rt = lm_arena_alloc(arena, sizeof *rt);
    if (!rt) goto bad;
    rt->slowest = (int32_t)get_u32(&r);
    rt->fastest = (int32_t)get_u32(&r);
    rt->imbalance = get_f64(&r);
    rt->n_rows = (size_t)get_count(&r, 48);
    rt->rows = lm_arena_alloc(arena, (rt->n_rows + 1) * sizeof *rt->rows);
    if (!rt->rows) goto bad;
    for (size_t i = 0; i < rt->n_rows && !r.bad; i++) {
      lm_rank_row *x = &rt->rows[i];
      x->rank = (int32_t)get_u32(&r);
      x->host = get_str(&r);
      x->dispatches = (size_t)get_f64(&r);
      x->total_ns = get_f64(&r);
      x->mean_ns = get_f64(&r);
      x->busy_cycles = get_f64(&r);
      x->waves = get_f64(&r);
    }
    rt->n_kernels = (size_t)get_count(&r, 44);
    rt->kernels = lm_arena_alloc(arena, (rt->n_kernels + 1) * sizeof *rt->kernels);
    if (!rt->kernels) goto bad;
    for (size_t k = 0; k < rt->n_kernels && !r.bad; k++) {
      lm_rank_kernel *x = &rt->kernels[k];
      x->kernel = get_str(&r);
      x->n_ranks = (size_t)get_f64(&r);
      x->max_rank = (int32_t)get_u32(&r);
      x->min_rank = (int32_t)get_u32(&r);
      x->max_ns = get_f64(&r);
      x->min_ns = get_f64(&r);
      x->ratio = get_f64(&r);
      if (!x->kernel) r.bad = 1;
    }
    a->ranks = rt;
  }
  if (r.bad || r.p != r.end) goto bad;
  *out = a;
  return LM_OK;
bad:
  lm_arena_free(arena);
  return lm_diag_set(diag, LM_EDATA, NULL, 0, 0, NULL, "a stored analysis is damaged");
}
