/*
 * columns.c - the counter columns of one source (pmc_perf, an accumulate
 * table, roofline) read out of column_data, all or those a caller wants, and
 * written there through lm_table_each_column, in groups of columns.
 *
 * Names are listed without touching a blob; only the chosen columns are
 * fetched and decoded, one at a time, so one compressed column is held at
 * once. Columns of one value share an array per value; integer columns read
 * only through lm_table_fetch (LM_DB_WANT_LATER) keep their token planes and
 * are decoded block by block (lm_packed_fetch), so a view writes no
 * column-sized array. Stores without column_data.codec hold raw doubles
 * (read as such).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <xxhash.h>

#include "sql/sql.h"
#include "columns/columns.h"
#include "db/db.h"

/* Arrays of one repeated value shared by the columns of a table. */
#define MAX_SHARED 64

typedef struct shared {
  uint64_t bits[MAX_SHARED];
  double *values[MAX_SHARED];
  size_t n;
  size_t first_slot; /* the first constant column's place in the value
                        block when constants come last, else SIZE_MAX */
} shared;

/* The columns kept as token planes, read through lm_packed_fetch: each
 * one piece of every row (planes, then their marks), and where they lie:
 * one mapping reserved for the table's whole value block (virtual space;
 * only what is written is ever backed) on huge pages, filled from the
 * start, so that a view's few tens of megabytes of planes take few page
 * faults. This is the lm_packed's owner. */
typedef struct kept {
  unsigned char *region;
  size_t region_bytes, used;
  lm_piece pieces[]; /* t->max_cols */
} kept;

static void kept_release(void *state) {
  kept *k = state;
  if (!k) return;
  lm_free_huge(k->region, k->region_bytes);
  lm_free(k);
}

/* n bytes of the region, 8-aligned; NULL when it is full (it cannot be:
 * a column's planes and marks take less than its slot of the block). */
static void *region_take(kept *k, size_t n) {
  size_t at = (k->used + 7) & ~(size_t)7;
  if (at > k->region_bytes || k->region_bytes - at < n) return NULL;
  k->used = at + n;
  return k->region + at;
}

/* Keep column c of t as the token planes (width planes of t->n_rows bytes)
 * instead of decoding it, with its blank count and rows' missing marks;
 * LM_ENOMEM when out of memory, LM_EINVAL when the table reads its
 * deferred columns another way. */
static lm_status keep_planes(lm_table *t, size_t c, const unsigned char *planes, size_t width) {
  if (t->fetch && !lm_packed_of(t, kept_release)) return LM_EINVAL;
  size_t n = t->n_rows, n_marks = n / LM_COLCODEC_MARK_ROWS + 1;
  if (!t->fetch_state) {
    size_t slots = t->max_cols ? t->max_cols : 1;
    lm_packed *pk = lm_packed_new(slots);
    kept *k = lm_calloc(1, sizeof *k + slots * sizeof(lm_piece));
    /* room for every column's planes and marks */
    if (k) k->region_bytes = slots * (n * 8 + n_marks * sizeof(int64_t) + 8);
    if (!pk || !k || !(k->region = lm_alloc_huge(k->region_bytes))) {
      lm_packed_release(pk);
      lm_free(k);
      return LM_ENOMEM;
    }
    pk->n_pieces = 1;
    pk->every = n;
    pk->owner = k;
    pk->owner_free = kept_release;
    t->fetch_state = pk;
    t->fetch = lm_packed_fetch;
    t->fetch_release = lm_packed_release;
  }
  lm_packed *pk = t->fetch_state;
  kept *k = pk->owner;
  unsigned char *copy = region_take(k, n * width);
  int64_t *marks = region_take(k, n_marks * sizeof *marks);
  if (!copy || !marks) return LM_ENOMEM;
  memcpy(copy, planes, n * width);
  lm_column *col = &t->cols[c];
  col->n_missing = lm_colcodec_int_index(copy, width, n, marks, t->row_missing);
  col->all_int = 1;
  col->values = NULL;
  col->deferred = 1;
  lm_piece *pc = &k->pieces[c];
  pc->u.data = copy;
  pc->kind = LM_PIECE_INT_MARKS;
  pc->width = (uint8_t)width;
  pk->cols[c] = pc;
  return LM_OK;
}

int lm_table_kept_planes(const lm_table *t, size_t c, const unsigned char **planes, size_t *width) {
  const lm_packed *pk = lm_packed_of(t, kept_release);
  if (!pk || c >= t->n_cols || !pk->cols[c]) return 0;
  *planes = pk->cols[c]->u.data;
  *width = pk->cols[c]->width;
  return 1;
}

/* Whether column_data has a column (codec: schema version 3; checksum:
 * 6), asked of the catalog, so that the question fails no transaction on
 * either engine. */
static int has_data_column(lm_sql *sql, const char *column) {
  lm_stmt *q = NULL;
  lm_diag ignored;
  int found = 0;
  if (lm_sql_prepare(sql,
                     lm_sql_is_postgres(sql)
                         ? "SELECT 1 FROM information_schema.columns WHERE table_schema = current_schema() AND "
                           "table_name = 'column_data' AND column_name = ?"
                         : "SELECT 1 FROM pragma_table_info('column_data') WHERE name = ?",
                     &q, &ignored) == LM_OK) {
    lm_stmt_bind_text(q, 1, column);
    found = lm_stmt_step(q) == 1;
  }
  lm_stmt_free(q);
  return found;
}
static int has_codec_column(lm_sql *sql) { return has_data_column(sql, "codec"); }

int64_t lm_db_column_checksum(const void *data, size_t n) {
  uint64_t h = XXH3_64bits(data, n);
  int64_t v;
  memcpy(&v, &h, sizeof v); /* stored as SQL's signed 64-bit integer */
  return v;
}

/* A column's data against its stored checksum (NULL: written before
 * checksums, not checked). */
static lm_status check_sum(lm_stmt *q, int col, const void *data, size_t n, const char *path, const char *workload,
                           const char *name, const char *source, lm_diag *diag) {
  if (col < 0 || lm_stmt_is_null(q, col)) return LM_OK;
  int64_t want = lm_stmt_int64(q, col), got = lm_db_column_checksum(data, n);
  if (want == got) return LM_OK;
  return lm_fail_at(diag, LM_EDATA, path, 0, "column_data.checksum",
                    "workload '%.200s', column '%.100s' of %.40s: its data does not match its checksum (%zu bytes; "
                    "a damaged store: restore it from a copy, or import the workload again)",
                    workload, name, source, n);
}

/* The array of n copies of v, made once per value. When the constant
 * columns come last, the i-th value takes the place in the value block of
 * the i-th constant column (whose own values are shared, so that place is
 * free; the value that needs it came with that column or a later one):
 * the arrays then lie side by side in the block's huge pages instead of
 * each in fresh small ones. Otherwise they come from t's arena. */
static double *shared_values(shared *sh, lm_table *t, double v) {
  uint64_t bits;
  memcpy(&bits, &v, sizeof bits);
  for (size_t i = 0; i < sh->n; i++)
    if (sh->bits[i] == bits) return sh->values[i];
  if (sh->n == MAX_SHARED) return NULL;
  size_t rows = t->n_rows ? t->n_rows : 1;
  double *values = sh->first_slot != SIZE_MAX && sh->first_slot + sh->n < t->n_cols
                       ? (double *)t->block + (sh->first_slot + sh->n) * rows
                       : lm_arena_alloc(t->arena, rows * sizeof *values);
  if (!values) return NULL;
  for (size_t r = 0; r < t->n_rows; r++) values[r] = v;
  sh->bits[sh->n] = bits;
  sh->values[sh->n++] = values;
  return values;
}

/* What lm_table_finish computes, for one numeric column just filled:
 * blanks (marked in the table's rows) and whether every number is an
 * integer (known for the integer encoding). */
static void count_column(lm_table *t, lm_column *c, int integers) {
  size_t n = t->n_rows, missing = 0;
  const double *v = c->values;
  uint8_t *rows = t->row_missing;
  int all_int = 1;
  if (integers) {
    for (size_t r = 0; r < n; r++)
      if (isnan(v[r])) {
        missing++;
        rows[r] = 1;
      }
  } else {
    for (size_t r = 0; r < n; r++) {
      double x = v[r];
      if (isnan(x)) {
        missing++;
        rows[r] = 1;
      } else if (all_int && fabs(x) < 4503599627370496.0 && x != (double)(int64_t)x) {
        all_int = 0; /* beyond 2^52 every double is an integer */
      }
    }
  }
  c->n_missing = missing;
  c->all_int = (uint8_t)all_int;
}

static lm_status list_columns(lm_sql *sql, int64_t wid, const char *source, lm_stmt **out, lm_diag *diag) {
  lm_status st = lm_sql_prepare(sql,
                                "SELECT position, name FROM column_data WHERE workload_id = ? AND source = ? "
                                "ORDER BY position",
                                out, diag);
  if (st != LM_OK) return st;
  lm_stmt_bind_int64(*out, 1, wid);
  lm_stmt_bind_text(*out, 2, source);
  return LM_OK;
}

lm_status lm_db_count_columns(lm_sql *sql, int64_t wid, const char *source, lm_db_want_fn want, void *ctx,
                              size_t *n, lm_diag *diag) {
  lm_stmt *q = NULL;
  *n = 0;
  lm_status st = list_columns(sql, wid, source, &q, diag);
  if (st != LM_OK) return st;
  int rc;
  while ((rc = lm_stmt_step(q)) == 1)
    if (!want || want(ctx, source, lm_stmt_text(q, 1))) (*n)++;
  if (rc < 0) st = lm_stmt_error(q, "read the columns", diag);
  lm_stmt_free(q);
  return st;
}

/* The listing of a source's columns with what the data query would
 * give, and the data itself when it is a constant's few bytes. */
static lm_status list_with_constants(lm_sql *sql, int64_t wid, const char *source, int codec, int sums,
                                     lm_stmt **out, lm_diag *diag) {
  lm_status st = lm_sql_prepare(sql,
                                !codec ? "SELECT position, name, n_rows, first_text, first_text_line, NULL, NULL, NULL "
                                         "FROM column_data WHERE workload_id = ? AND source = ? ORDER BY position"
                                : sums ? "SELECT position, name, n_rows, first_text, first_text_line, codec, "
                                         "CASE WHEN codec = 1 AND length(data) = 9 THEN data END, checksum "
                                         "FROM column_data WHERE workload_id = ? AND source = ? ORDER BY position"
                                       : "SELECT position, name, n_rows, first_text, first_text_line, codec, "
                                         "CASE WHEN codec = 1 AND length(data) = 9 THEN data END, NULL "
                                         "FROM column_data WHERE workload_id = ? AND source = ? ORDER BY position",
                                out, diag);
  if (st != LM_OK) return st;
  lm_stmt_bind_int64(*out, 1, wid);
  lm_stmt_bind_text(*out, 2, source);
  return LM_OK;
}

lm_status lm_db_load_columns(lm_sql *sql, int64_t wid, const char *workload, const char *source,
                             lm_db_want_fn want, void *ctx, lm_db_place_fn place, void *place_ctx, lm_table *t,
                             lm_diag *diag) {
  const char *path = lm_sql_where(sql);
  lm_stmt *q = NULL, *data = NULL;
  lm_colcodec *codec = NULL;
  shared sh;
  sh.n = 0;
  sh.first_slot = SIZE_MAX;
  size_t n_rows = t->n_rows;
  int rc = 0, has_codec = has_codec_column(sql), sums = has_codec && has_data_column(sql, "checksum");
  lm_status st = lm_sql_prepare(sql,
                                sums        ? "SELECT data, codec, checksum FROM column_data "
                                              "WHERE workload_id = ? AND source = ? AND position = ?"
                                : has_codec ? "SELECT data, codec, NULL FROM column_data "
                                              "WHERE workload_id = ? AND source = ? AND position = ?"
                                            : "SELECT data, NULL, NULL FROM column_data "
                                              "WHERE workload_id = ? AND source = ? AND position = ?",
                                &data, diag);
  if (st != LM_OK) return st;
  if (!(codec = lm_colcodec_new())) goto nomem;
  /* A chosen set goes in two passes, constants last, so that their slots
   * at the end of the table's value block are never touched. */
  for (int pass = 0; pass < (want ? 2 : 1); pass++) {
    if (want && pass == 1 && t->block) sh.first_slot = t->n_cols;
    if ((st = list_with_constants(sql, wid, source, has_codec, sums, &q, diag)) != LM_OK) goto done;
    while ((rc = lm_stmt_step(q)) == 1) {
      const char *name = lm_stmt_text(q, 1);
      int wanted = want ? want(ctx, source, name) : 1;
      if (!wanted) continue;
      size_t small = 0;
      const void *constant = lm_stmt_is_null(q, 6) ? NULL : lm_stmt_blob(q, 6, &small);
      double k = 0;
      if (constant && (st = check_sum(q, 7, constant, small, path, workload, name, source, diag)) != LM_OK) goto done;
      int is_constant = constant && lm_colcodec_constant(constant, small, &k);
      if (want && is_constant != pass) continue;
      lm_column *c = lm_table_add_column(t, name, 0);
      if (!c) goto nomem;
      int64_t rows = lm_stmt_int64(q, 2);
      int64_t kind = lm_stmt_is_null(q, 5) ? LM_CODEC_RAW : lm_stmt_int64(q, 5);
      size_t bytes = 0;
      const void *blob = NULL;
      if (!is_constant) {
        lm_stmt_bind_int64(data, 1, wid);
        lm_stmt_bind_text(data, 2, source);
        lm_stmt_bind_int64(data, 3, lm_stmt_int64(q, 0));
        if ((rc = lm_stmt_step(data)) != 1) {
          st = rc < 0
                   ? lm_stmt_error(data, "read a column", diag)
                   : lm_fail_at(diag, LM_EDATA, path, 0, "column_data", "column '%.100s' vanished while read", c->name);
          goto done;
        }
        blob = lm_stmt_blob(data, 0, &bytes);
        if ((st = check_sum(data, 2, blob, bytes, path, workload, c->name, source, diag)) != LM_OK) goto done;
      }
      if (rows < 0 || (uint64_t)rows != n_rows || (kind == LM_CODEC_RAW && bytes != n_rows * sizeof(double))) {
        st = lm_fail_at(diag, LM_EDATA, path, 0, "column_data.n_rows",
                        "column '%.100s': %zu bytes for %lld rows (expected %zu rows; corrupt database?)", c->name,
                        bytes, (long long)rows, n_rows);
        goto done;
      }
      if (!is_constant && place) {
        double *there = place(place_ctx, source, name, n_rows);
        if (there) c->values = there;
      }
      if (is_constant) {
        double *same = n_rows ? shared_values(&sh, t, k) : NULL;
        if (same) c->values = same;
        else
          for (size_t r = 0; r < n_rows; r++) c->values[r] = k;
        c->n_missing = isnan(k) ? n_rows : 0;
        c->all_int = isnan(k) || k == floor(k);
        if (isnan(k)) memset(t->row_missing, 1, n_rows);
      } else if (kind == LM_CODEC_RAW) {
        if (bytes) memcpy(c->values, blob, bytes);
        count_column(t, c, 0);
      } else if (kind != LM_CODEC_COMPACT) {
        st = lm_fail_at(diag, LM_EDATA, path, 0, "column_data.codec",
                        "workload '%.200s', column '%.100s' of %.40s: encoding %lld, which this lumen does not "
                        "know (written by a newer version?)",
                        workload, c->name, source, (long long)kind);
        goto done;
      } else {
        lm_diag why;
        const unsigned char *planes = NULL;
        size_t width = 0;
        lm_status got = wanted == LM_DB_WANT_LATER && n_rows
                            ? lm_colcodec_int_planes(codec, blob, bytes, n_rows, &planes, &width, &why)
                            : LM_OK;
        if (got == LM_OK && planes) {
          if ((got = keep_planes(t, t->n_cols - 1, planes, width)) == LM_ENOMEM) goto nomem;
          if (got != LM_OK) planes = NULL; /* decoded below, as any column */
          got = LM_OK;
        }
        if (got == LM_OK && !planes) got = lm_colcodec_decode(codec, blob, bytes, n_rows, c->values, &why);
        if (got != LM_OK) {
          st = lm_fail_at(diag, why.status, path, 0, why.field[0] ? why.field : "column_data.data",
                          "workload '%.200s', column '%.100s' of %.40s: %s (corrupt database?)", workload, c->name,
                          source, why.message);
          goto done;
        }
        if (!planes) count_column(t, c, ((const unsigned char *)blob)[0] == 'I');
      }
      if (!is_constant) lm_stmt_reset(data);
      if (!lm_stmt_is_null(q, 3)) {
        c->first_text = lm_arena_strdup(t->arena, lm_stmt_text(q, 3));
        c->first_text_line = (long)lm_stmt_int64(q, 4);
      }
    }
    if (rc < 0) {
      st = lm_stmt_error(q, "read the columns", diag);
      goto done;
    }
    lm_stmt_free(q);
    q = NULL;
  }
  goto done;
nomem:
  st = lm_oom(diag, path);
done:
  lm_colcodec_free(codec);
  lm_stmt_free(data);
  lm_stmt_free(q);
  return st;
}

/* ---------------------------------------------------------------- write */

/* Writing one source's counter columns: the statement, the codec, each
 * column's position among the written ones (-1: not written) and which
 * columns the caller sees first. */
typedef struct put_state {
  lm_stmt *s;
  lm_colcodec *codec;
  const lm_table *t;
  int64_t wid;
  const char *source;
  int *position;
  uint8_t *seen_first;
  lm_column_fn seen;
  void *seen_ctx;
} put_state;

static lm_status put_one(void *ctx, size_t c, const double *values, lm_diag *diag) {
  put_state *p = ctx;
  const lm_column *col = &p->t->cols[c];
  lm_status st = LM_OK;
  if (p->position[c] < 0) return LM_OK;
  lm_stmt *s = p->s;
  lm_stmt_bind_int64(s, 1, p->wid);
  lm_stmt_bind_text(s, 2, p->source);
  lm_stmt_bind_int64(s, 3, p->position[c]);
  lm_stmt_bind_text(s, 4, col->name);
  lm_stmt_bind_int64(s, 5, (int64_t)p->t->n_rows);
  const void *blob = NULL;
  size_t len = 0;
  if ((st = lm_colcodec_encode(p->codec, values, p->t->n_rows, &blob, &len, diag)) != LM_OK) return st;
  lm_stmt_bind_blob(s, 6, blob, len);
  lm_stmt_bind_int64(s, 10, lm_db_column_checksum(blob, len));
  if (col->n_text) {
    lm_stmt_bind_text(s, 7, col->first_text ? col->first_text : "");
    lm_stmt_bind_int64(s, 8, col->first_text_line);
  } else {
    lm_stmt_bind_null(s, 7);
    lm_stmt_bind_null(s, 8);
  }
  lm_stmt_bind_int64(s, 9, LM_CODEC_COMPACT);
  if (lm_stmt_step(s) < 0) return lm_stmt_error(s, "write a column", diag);
  lm_stmt_reset(s);
  return LM_OK;
}

/* One side of a group: the caller's visits (seen) or the writes, each
 * in the group's order. */
typedef struct put_side {
  put_state *p;
  const size_t *cols;
  const double *const *values;
  size_t n;
  int writes;
  lm_status status;
  lm_diag diag;
} put_side;

static void *put_side_run(void *arg) {
  put_side *h = arg;
  put_state *p = h->p;
  for (size_t k = 0; k < h->n && h->status == LM_OK; k++) {
    size_t c = h->cols[k];
    if (h->writes) h->status = put_one(p, c, h->values[k], &h->diag);
    else if (p->seen_first[c]) h->status = p->seen(p->seen_ctx, c, h->values[k], &h->diag);
  }
  return NULL;
}

/* A group of columns: written, and given to the caller's seen where it
 * asks for them. The two are independent (the caller's work on the
 * values, the encoding and the insertions), so with a seen they go on two
 * threads side by side; the connection is used by one thread only. A
 * failure of the visits is reported before one of the writes. */
static lm_status put_group(void *ctx, const size_t *cols, const double *const *values, size_t n, lm_diag *diag) {
  put_state *p = ctx;
  int any_seen = 0;
  for (size_t k = 0; p->seen && k < n && !any_seen; k++) any_seen = p->seen_first[cols[k]];
  put_side sides[2] = {{p, cols, values, n, 1, LM_OK, {0}}, {p, cols, values, n, 0, LM_OK, {0}}};
  if (any_seen) lm_run_pair(put_side_run, &sides[0], &sides[1]);
  else put_side_run(&sides[0]);
  for (int h = 1; h >= 0; h--)
    if (sides[h].status != LM_OK) {
      if (diag) *diag = sides[h].diag;
      return sides[h].status;
    }
  return LM_OK;
}

lm_status lm_db_put_columns(lm_sql *sql, int64_t wid, const lm_table *t, const char *source, int skip_fixed,
                            const lm_db_write_opts *o, lm_diag *diag) {
  put_state p;
  memset(&p, 0, sizeof p);
  p.t = t;
  p.wid = wid;
  p.source = source;
  size_t n_cols = t->n_cols ? t->n_cols : 1, n_order = 0;
  size_t *order = lm_malloc(n_cols * sizeof *order);
  p.position = lm_malloc(n_cols * sizeof *p.position);
  p.seen_first = lm_calloc(n_cols, 1);
  p.codec = lm_colcodec_new();
  lm_status st = LM_OK;
  if (!order || !p.position || !p.seen_first || !p.codec) {
    st = lm_oom(diag, lm_sql_where(sql));
    goto done;
  }
  int position = 0;
  for (size_t c = 0; c < t->n_cols; c++) {
    const lm_column *col = &t->cols[c];
    /* Kernel_Name is in the kernel table, the dispatch columns in dispatch. */
    int fixed = col->text_ids != NULL || (skip_fixed && lm_db_dispatch_column(col->name));
    p.position[c] = fixed ? -1 : position++;
  }
  if (o && o->seen && skip_fixed) {
    p.seen = o->seen;
    p.seen_ctx = o->seen_ctx;
    for (size_t i = 0; i < o->n_first; i++)
      if (o->first[i] < t->n_cols && !p.seen_first[o->first[i]]) {
        p.seen_first[o->first[i]] = 1;
        order[n_order++] = o->first[i];
      }
  }
  for (size_t c = 0; c < t->n_cols; c++)
    if (p.position[c] >= 0 && !p.seen_first[c]) order[n_order++] = c;
  if ((st = lm_sql_prepare(sql,
                           "INSERT INTO column_data(workload_id, source, position, name, n_rows, "
                           "data, first_text, first_text_line, codec, checksum) VALUES (?,?,?,?,?,?,?,?,?,?)",
                           &p.s, diag)) != LM_OK)
    goto done;
  st = lm_table_each_group(t, order, n_order, o && o->group_bytes ? o->group_bytes : LM_DB_GROUP_BYTES, put_group,
                           &p, diag);
done:
  lm_colcodec_free(p.codec);
  lm_stmt_free(p.s);
  lm_free(order);
  lm_free(p.position);
  lm_free(p.seen_first);
  return st;
}
