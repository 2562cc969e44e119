/*
 * wire.c - one loaded workload as a flat byte message and back: the parts
 * `lumen analyze --mpi` sends to process 0.
 *
 * The message holds exactly what the merge reads (tables with column
 * statistics and text ids, system information, regions, executions, each
 * row's rank, host and clock source), values as their 64-bit patterns, so the
 * merged result is the same to the bit. The layout is native (one binary, one
 * kind of machine): uint64 counts, strings with their length (NULL distinct
 * from ""), value arrays 8-byte aligned so that they stay where they arrived.
 * Unpacking refuses a short or inconsistent message.
 */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "db/db.h"
#include "ranks/ranks.h"

#define NO_STRING UINT64_MAX

/* ------------------------------------------------------------- writing */

static void put_u64(lm_buf *b, uint64_t v) { lm_buf_append(b, (const char *)&v, sizeof v); }

static void put_bytes(lm_buf *b, const void *p, size_t n) {
  if (n) lm_buf_append(b, p, n);
}

/* Zero bytes up to a multiple of 8, so that value arrays lie aligned in a
 * message that starts aligned (and can be used where they lie). */
static void put_align(lm_buf *b) {
  static const char zeros[8] = {0};
  if (b->len % 8) lm_buf_append(b, zeros, 8 - b->len % 8);
}

static void put_str(lm_buf *b, const char *s) {
  if (!s) {
    put_u64(b, NO_STRING);
    return;
  }
  size_t n = strlen(s);
  put_u64(b, n);
  put_bytes(b, s, n);
}

static lm_status put_table(lm_buf *b, const lm_table *t, lm_diag *diag) {
  put_u64(b, t != NULL);
  if (!t) return LM_OK;
  put_str(b, t->path);
  put_str(b, t->name);
  put_u64(b, t->n_rows);
  put_u64(b, t->n_cols);
  put_u64(b, t->n_strings);
  for (size_t i = 0; i < t->n_strings; i++) put_str(b, t->strings[i]);
  for (size_t c = 0; c < t->n_cols; c++) {
    const lm_column *col = &t->cols[c];
    const double *values = lm_table_values(t, c, diag);
    if (!values && t->n_rows) return diag ? diag->status : LM_EIO;
    put_str(b, col->name);
    put_u64(b, (uint64_t)lm_table_find(t, col->name)); /* a name twice: the index lookups give */
    put_u64(b, col->text_ids != NULL);
    put_u64(b, col->all_int);
    put_u64(b, col->n_missing);
    put_u64(b, col->n_text);
    put_u64(b, (uint64_t)col->first_text_line);
    put_str(b, col->first_text);
    put_align(b);
    put_bytes(b, values, t->n_rows * sizeof *values);
    if (col->text_ids) put_bytes(b, col->text_ids, t->n_rows * sizeof *col->text_ids);
  }
  put_u64(b, t->row_missing != NULL);
  if (t->row_missing) put_bytes(b, t->row_missing, t->n_rows);
  return LM_OK;
}

lm_status lm_ranks_wire_pack(const lm_workload *w, lm_buf *out, lm_diag *diag) {
  lm_status st;
  size_t n = w->pmc ? w->pmc->n_rows : 0;
  put_str(out, w->path);
  put_str(out, w->arch);
  put_str(out, w->simulated);
  put_u64(out, w->n_parts);
  if ((st = put_table(out, w->pmc, diag)) != LM_OK) return st;
  put_u64(out, w->n_levels);
  for (size_t i = 0; i < w->n_levels; i++)
    if ((st = put_table(out, w->levels[i], diag)) != LM_OK) return st;
  if ((st = put_table(out, w->sysinfo_table, diag)) != LM_OK) return st;
  put_u64(out, w->sysinfo.n_fields);
  for (size_t i = 0; i < w->sysinfo.n_fields; i++) {
    put_str(out, w->sysinfo.names[i]);
    put_str(out, w->sysinfo.texts[i]);
    put_bytes(out, &w->sysinfo.values[i], sizeof(double));
  }
  if ((st = put_table(out, w->roofline, diag)) != LM_OK) return st;
  put_u64(out, w->n_regions);
  for (size_t i = 0; i < w->n_regions; i++) put_str(out, w->region_names[i]);
  put_u64(out, w->row_regions != NULL);
  if (w->row_regions) put_bytes(out, w->row_regions, n * sizeof *w->row_regions);
  const lm_executions *x = w->exec;
  put_u64(out, x != NULL);
  if (x) {
    size_t cells = x->n_rows * (size_t)x->n_sets;
    put_u64(out, x->n_rows);
    put_u64(out, (uint64_t)x->n_sets);
    put_u64(out, (uint64_t)x->n_shared);
    for (int32_t q = 0; q < x->n_shared; q++) put_str(out, x->shared[q]);
    put_bytes(out, x->values, cells * (size_t)x->n_shared * sizeof *x->values);
    put_bytes(out, x->runs, cells * sizeof *x->runs);
    put_u64(out, x->n_prov);
    for (size_t i = 0; i < x->n_prov; i++) {
      put_str(out, x->prov_source[i]);
      put_str(out, x->prov_column[i]);
      put_bytes(out, x->prov_sets[i], x->n_rows * sizeof(int16_t));
    }
  }
  put_u64(out, w->row_clock_source != NULL);
  for (size_t r = 0; w->row_clock_source && r < n; r++) put_str(out, w->row_clock_source[r]);
  put_u64(out, w->row_rank != NULL);
  if (w->row_rank) put_bytes(out, w->row_rank, n * sizeof *w->row_rank);
  put_u64(out, w->row_host != NULL);
  for (size_t r = 0; w->row_host && r < n; r++) put_str(out, w->row_host[r]);
  put_u64(out, (uint64_t)w->split_ranks);
  put_u64(out, (uint64_t)w->split_sets_total);
  put_u64(out, (uint64_t)w->n_split_set);
  if (w->n_split_set > 0) put_bytes(out, w->split_set, (size_t)w->n_split_set * sizeof *w->split_set);
  return out->failed ? lm_oom(diag, w->path) : LM_OK;
}

/* ------------------------------------------------------------- reading */

typedef struct reader {
  const unsigned char *start, *p, *end;
  lm_arena *arena; /* strings of the workload itself */
  int bad;
} reader;

static uint64_t get_u64(reader *r) {
  uint64_t v = 0;
  if (r->bad || (size_t)(r->end - r->p) < sizeof v) {
    r->bad = 1;
    return 0;
  }
  memcpy(&v, r->p, sizeof v);
  r->p += sizeof v;
  return v;
}

/* n items of size bytes each, or NULL (and bad) past the end. */
static const void *get_bytes(reader *r, uint64_t n, size_t size) {
  if (r->bad || (size && n > (uint64_t)(r->end - r->p) / size)) {
    r->bad = 1;
    return NULL;
  }
  const void *at = r->p;
  r->p += n * size;
  return at;
}

static void copy_bytes(reader *r, void *to, uint64_t n, size_t size) {
  const void *from = get_bytes(r, n, size);
  if (from && n) memcpy(to, from, n * size);
}

static void get_align(reader *r) {
  size_t at = (size_t)(r->p - r->start);
  if (at % 8 && !r->bad) {
    if ((size_t)(r->end - r->p) < 8 - at % 8) r->bad = 1;
    else r->p += 8 - at % 8;
  }
}

/* A string copied into arena a (NULL stays NULL). */
static const char *get_str(reader *r, lm_arena *a) {
  uint64_t n = get_u64(r);
  if (r->bad || n == NO_STRING) return NULL;
  const char *s = get_bytes(r, n, 1);
  if (!s) return NULL;
  char *copy = lm_arena_strndup(a, s, n);
  if (!copy) r->bad = 2;
  return copy;
}

/* A count of items that each take at least min_bytes of the message. */
static size_t get_count(reader *r, size_t min_bytes) {
  uint64_t n = get_u64(r);
  if (!r->bad && min_bytes && n > (uint64_t)(r->end - r->p) / min_bytes) r->bad = 1;
  return r->bad ? 0 : (size_t)n;
}

/* A table; with borrow its value columns point into the message. */
static lm_table *get_table(reader *r, int borrow) {
  if (!get_u64(r)) return NULL;
  const char *path = get_str(r, r->arena), *name = get_str(r, r->arena);
  size_t n_rows = get_count(r, 0), n_cols = get_count(r, 8 * 8);
  if (r->bad) return NULL;
  if (n_rows > (uint64_t)LM_DB_MAX_DISPATCHES || (n_cols && n_rows > (size_t)(r->end - r->p) / n_cols / 8)) {
    r->bad = 1;
    return NULL;
  }
  lm_table *t = lm_table_create(path ? path : "", name ? name : "", n_rows, n_cols);
  if (!t) {
    r->bad = 2;
    return NULL;
  }
  size_t n_strings = get_count(r, 8);
  for (size_t i = 0; !r->bad && i < n_strings; i++) {
    const char *s = get_str(r, t->arena);
    if (!s || lm_table_intern(t, s) != (int32_t)i) r->bad = r->bad ? r->bad : 1;
  }
  size_t *lookup = lm_malloc((n_cols + 1) * sizeof *lookup);
  if (!lookup) r->bad = 2;
  for (size_t c = 0; !r->bad && c < n_cols; c++) {
    const char *cname = get_str(r, t->arena);
    uint64_t found = get_u64(r), with_text = get_u64(r), all_int = get_u64(r);
    uint64_t n_missing = get_u64(r), n_text = get_u64(r), first_line = get_u64(r);
    const char *first_text = get_str(r, t->arena);
    if (r->bad || !cname || found >= n_cols) {
      r->bad = r->bad ? r->bad : 1;
      break;
    }
    lm_column *col = lm_table_add_column(t, cname, with_text != 0);
    if (!col) {
      r->bad = 2;
      break;
    }
    lookup[c] = (size_t)found;
    get_align(r);
    if (borrow && n_rows) {
      const void *at = get_bytes(r, n_rows, sizeof(double));
      if (at) col->values = (double *)(uintptr_t)at;
    } else {
      copy_bytes(r, col->values, n_rows, sizeof(double));
    }
    if (col->text_ids) copy_bytes(r, col->text_ids, n_rows, sizeof(int32_t));
    for (size_t i = 0; col->text_ids && !r->bad && i < n_rows; i++)
      if (col->text_ids[i] >= (int32_t)t->n_strings) r->bad = 1;
    col->all_int = (uint8_t)(all_int != 0);
    col->n_missing = (size_t)n_missing;
    col->n_text = (size_t)n_text;
    col->first_text_line = (long)first_line;
    col->first_text = first_text;
  }
  /* A name given twice: the lookup finds the column the original did. */
  for (size_t c = 0; !r->bad && c < n_cols; c++)
    if (lookup[c] != c && lm_map_put(t->by_name, t->cols[c].name, (int64_t)lookup[c]) != LM_OK) r->bad = 2;
  lm_free(lookup);
  if (!r->bad && get_u64(r)) copy_bytes(r, t->row_missing, n_rows, 1);
  if (r->bad) {
    lm_table_free(t);
    return NULL;
  }
  return t;
}

lm_status lm_ranks_wire_unpack(const void *data, size_t len, int borrow, lm_workload **out, lm_diag *diag) {
  *out = NULL;
  lm_arena *arena = lm_arena_new(1 << 12);
  lm_workload *w = arena ? lm_arena_alloc(arena, sizeof *w) : NULL;
  if (!w) {
    lm_arena_free(arena);
    return lm_oom(diag, NULL);
  }
  memset(w, 0, sizeof *w);
  w->arena = arena;
  if (borrow && (uintptr_t)data % 8) borrow = 0;
  reader r = {data, data, (const unsigned char *)data + len, arena, 0};
  w->path = (char *)get_str(&r, arena);
  const char *arch = get_str(&r, arena);
  w->simulated = get_str(&r, arena);
  size_t n_parts = get_count(&r, 0);
  w->pmc = get_table(&r, borrow);
  size_t n = w->pmc ? w->pmc->n_rows : 0;
  size_t n_levels = get_count(&r, 8);
  w->levels = lm_arena_alloc(arena, (n_levels + 1) * sizeof *w->levels);
  if (!w->levels) r.bad = 2;
  for (size_t i = 0; !r.bad && i < n_levels; i++)
    if ((w->levels[w->n_levels] = get_table(&r, borrow)) != NULL) w->n_levels++;
  w->sysinfo_table = get_table(&r, 0);
  size_t n_fields = get_count(&r, 24);
  /* The fields' strings live with the table that holds them, which a
   * merge keeps when the workload itself is freed. */
  lm_arena *info_arena = w->sysinfo_table ? w->sysinfo_table->arena : arena;
  w->sysinfo.names = lm_arena_alloc(arena, (n_fields + 1) * sizeof(char *));
  w->sysinfo.texts = lm_arena_alloc(arena, (n_fields + 1) * sizeof(char *));
  w->sysinfo.values = lm_arena_alloc(arena, (n_fields + 1) * sizeof(double));
  if (!w->sysinfo.names || !w->sysinfo.texts || !w->sysinfo.values) r.bad = 2;
  for (size_t i = 0; !r.bad && i < n_fields; i++) {
    w->sysinfo.names[i] = get_str(&r, info_arena);
    w->sysinfo.texts[i] = get_str(&r, info_arena);
    copy_bytes(&r, &w->sysinfo.values[i], 1, sizeof(double));
    if (!w->sysinfo.names[i]) r.bad = r.bad ? r.bad : 1;
    if (!r.bad) w->sysinfo.n_fields++;
  }
  w->arch = arch;
  w->roofline = get_table(&r, 0);
  size_t n_regions = get_count(&r, 8);
  w->region_names = lm_arena_alloc(arena, (n_regions + 1) * sizeof *w->region_names);
  if (!w->region_names) r.bad = 2;
  for (size_t i = 0; !r.bad && i < n_regions; i++) w->region_names[w->n_regions++] = get_str(&r, arena);
  if (get_u64(&r)) {
    w->row_regions = lm_arena_alloc(arena, (n + 1) * sizeof *w->row_regions);
    if (!w->row_regions) r.bad = 2;
    else copy_bytes(&r, w->row_regions, n, sizeof *w->row_regions);
  }
  if (get_u64(&r)) {
    lm_executions *x = lm_arena_alloc(arena, sizeof *x);
    if (!x) r.bad = 2;
    if (!r.bad) {
      memset(x, 0, sizeof *x);
      x->n_rows = get_count(&r, 0);
      x->n_sets = (int32_t)get_count(&r, 0);
      x->n_shared = (int32_t)get_count(&r, 8);
      if (x->n_rows != n || x->n_sets < 0 || x->n_shared < 0 ||
          (x->n_sets && x->n_rows > (size_t)(r.end - r.p) / (size_t)x->n_sets))
        r.bad = 1;
    }
    size_t cells = r.bad ? 0 : x->n_rows * (size_t)x->n_sets;
    if (!r.bad && x->n_shared && cells > (size_t)(r.end - r.p) / (size_t)x->n_shared) r.bad = 1;
    if (!r.bad) {
      x->shared = lm_arena_alloc(arena, ((size_t)x->n_shared + 1) * sizeof *x->shared);
      x->values = lm_arena_alloc(arena, (cells * (size_t)x->n_shared + 1) * sizeof *x->values);
      x->runs = lm_arena_alloc(arena, (cells + 1) * sizeof *x->runs);
      if (!x->shared || !x->values || !x->runs) r.bad = 2;
    }
    for (int32_t q = 0; !r.bad && q < x->n_shared; q++) x->shared[q] = get_str(&r, arena);
    if (!r.bad) {
      copy_bytes(&r, x->values, cells * (size_t)x->n_shared, sizeof *x->values);
      copy_bytes(&r, x->runs, cells, sizeof *x->runs);
      x->n_prov = get_count(&r, 16);
    }
    if (!r.bad) {
      x->prov_source = lm_arena_alloc(arena, (x->n_prov + 1) * sizeof *x->prov_source);
      x->prov_column = lm_arena_alloc(arena, (x->n_prov + 1) * sizeof *x->prov_column);
      x->prov_sets = lm_arena_alloc(arena, (x->n_prov + 1) * sizeof *x->prov_sets);
      if (!x->prov_source || !x->prov_column || !x->prov_sets) r.bad = 2;
    }
    for (size_t i = 0; !r.bad && i < x->n_prov; i++) {
      x->prov_source[i] = get_str(&r, arena);
      x->prov_column[i] = get_str(&r, arena);
      if (!(x->prov_sets[i] = lm_arena_alloc(arena, (x->n_rows + 1) * sizeof(int16_t)))) r.bad = 2;
      else copy_bytes(&r, x->prov_sets[i], x->n_rows, sizeof(int16_t));
      if (!r.bad && (!x->prov_source[i] || !x->prov_column[i])) r.bad = 1;
    }
    if (!r.bad) w->exec = x;
  }
  if (get_u64(&r)) {
    w->row_clock_source = lm_arena_alloc(arena, (n + 1) * sizeof *w->row_clock_source);
    if (!w->row_clock_source) r.bad = 2;
    for (size_t i = 0; !r.bad && i < n; i++) w->row_clock_source[i] = get_str(&r, arena);
  }
  if (get_u64(&r)) {
    w->row_rank = lm_arena_alloc(arena, (n + 1) * sizeof *w->row_rank);
    if (!w->row_rank) r.bad = 2;
    else copy_bytes(&r, w->row_rank, n, sizeof *w->row_rank);
  }
  if (get_u64(&r)) {
    w->row_host = lm_arena_alloc(arena, (n + 1) * sizeof *w->row_host);
    if (!w->row_host) r.bad = 2;
    for (size_t i = 0; !r.bad && i < n; i++) w->row_host[i] = get_str(&r, arena);
  }
  w->split_ranks = (int)get_u64(&r);
  w->split_sets_total = (int)get_u64(&r);
  size_t n_split = get_count(&r, sizeof(int32_t));
  if (n_split) {
    w->split_set = lm_arena_alloc(arena, n_split * sizeof *w->split_set);
    if (!w->split_set) r.bad = 2;
    else copy_bytes(&r, w->split_set, n_split, sizeof *w->split_set);
    w->n_split_set = (int)n_split;
  }
  if (!r.bad && (!w->pmc || r.p != r.end)) r.bad = 1;
  if (r.bad) {
    lm_workload_free(w);
    return r.bad == 2
               ? lm_oom(diag, NULL)
               : lm_fail(diag, LM_EDATA, NULL, "a workload message of %zu bytes is cut short or inconsistent", len);
  }
  /* Only the part count travels: the parts' own arrays stay behind (the
   * merge refuses a part that holds parts). */
  w->n_parts = n_parts;
  *out = w;
  return LM_OK;
}
