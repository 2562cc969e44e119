/*
 * store.c - the workload store over sql.h (SQLite or PostgreSQL).
 *
 * Everything a workload holds hangs off its `workload` row, so an import
 * is one transaction that inserts the row and its tables, a removal is one
 * DELETE that cascades, and copying a workload between a folder and a
 * store is the same row copy in either direction. Idempotency rests on
 * the (team, fingerprint) look-up inside the import's write transaction
 * (XXH3-128 of the contents): two imports of the same contents, even at
 * the same moment from two processes, leave one copy, and the loser is
 * told where the winner put it. A match whose row facts differ is a
 * collision, never a reason to drop the import.
 */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <xxhash.h>

#include "store/store.h"

#ifndef LUMEN_VERSION
#define LUMEN_VERSION "0.0.0"
#endif

struct lm_store {
  lm_sql *sql;
  int writable;
};

/* The tables of a workload other than `workload` itself, parents first. */
static const char *const workload_tables[] = {
    "sysinfo",        "kernel",     "dispatch",      "column_data",    "region",
    "dispatch_region", "log",       "profile_option", "profile_set",   "profile_run",
    "profile_record", "profile_value", "profile_region", "clock_sample", "profile_telemetry",
    "execution",      "execution_value", "dispatch_clock", "profile_process", "power_sample",
    "rank_sysinfo",   "set_rank"};

const char *lm_store_default_path(char *out, size_t cap) {
  const char *xdg = getenv("XDG_DATA_HOME"), *home = getenv("HOME");
  if (xdg && *xdg) snprintf(out, cap, "%s/lumen/lumen.db", xdg);
  else snprintf(out, cap, "%s/.local/share/lumen/lumen.db", home && *home ? home : ".");
  return out;
}

static int is_pg(const char *url) {
  return strncmp(url, "postgresql://", 13) == 0 || strncmp(url, "postgres://", 11) == 0;
}

/* The folder a SQLite store file goes in. */
static lm_status make_parent(const char *path, lm_diag *diag) {
  char dir[PATH_MAX];
  snprintf(dir, sizeof dir, "%s", path);
  char *slash = strrchr(dir, '/');
  if (!slash || slash == dir) return LM_OK;
  *slash = '\0';
  return lm_make_dirs(dir, "the store's folder", "choose another --db", diag);
}

lm_status lm_store_open(const char *url, int writable, lm_store **out, lm_diag *diag) {
  *out = NULL;
  lm_status st;
  if (!url || !*url) return lm_diag_set(diag, LM_EINVAL, NULL, 0, 0, "--db", "an empty store URL");
  if (writable && !is_pg(url) && (st = make_parent(url, diag)) != LM_OK) return st;
  lm_store *s = lm_calloc(1, sizeof *s);
  if (!s) return lm_diag_set(diag, LM_ENOMEM, url, 0, 0, NULL, "out of memory");
  s->writable = writable;
  st = lm_sql_open(url, writable ? LM_DB_CREATE : LM_DB_READ, &s->sql, diag);
  if (st == LM_OK) st = lm_db_schema(s->sql, writable, diag);
  if (st != LM_OK) {
    if (st == LM_ENOTFOUND && !writable)
      lm_diag_set(diag, LM_ENOTFOUND, url, 0, 0, NULL,
                  "no store here (`lumen db import` creates one; --db names another)");
    lm_store_close(s);
    return st;
  }
  *out = s;
  return LM_OK;
}

lm_status lm_store_open_existing(const char *url, lm_store **out, lm_diag *diag) {
  *out = NULL;
  if (!url || !*url) return lm_diag_set(diag, LM_EINVAL, NULL, 0, 0, "--db", "an empty store URL");
  lm_store *s = lm_calloc(1, sizeof *s);
  if (!s) return lm_diag_set(diag, LM_ENOMEM, url, 0, 0, NULL, "out of memory");
  lm_diag ignored;
  s->writable = 1;
  lm_status st = lm_sql_open(url, LM_DB_WRITE, &s->sql, &ignored);
  if (st == LM_OK && !is_pg(url) && access(url, W_OK) != 0) {
    lm_sql_close(s->sql);
    s->sql = NULL;
    st = LM_EIO;
  }
  if (st != LM_OK) {
    s->writable = 0;
    st = lm_sql_open(url, LM_DB_READ, &s->sql, diag);
  }
  if (st == LM_OK) st = lm_db_schema(s->sql, 0, diag);
  if (st != LM_OK) {
    if (st == LM_ENOTFOUND)
      lm_diag_set(diag, LM_ENOTFOUND, url, 0, 0, NULL,
                  "no store here (`lumen db import` creates one; --db names another)");
    lm_store_close(s);
    return st;
  }
  *out = s;
  return LM_OK;
}

void lm_store_close(lm_store *s) {
  if (!s) return;
  lm_sql_close(s->sql);
  lm_free(s);
}

const char *lm_store_where(const lm_store *s) { return lm_sql_where(s->sql); }
lm_sql *lm_store_sql(lm_store *s) { return s->sql; }

/* ----------------------------------------------------------------- list */

/* The entry of each workload, with its parts and hosts counted in
 * rank_sysinfo through its primary key (workload_id, part, key): the cost
 * grows with the parts' system information, not with the dispatches. A
 * store without the table (read-only, before version 4) counts none. */
static const char *entry_cols =
    "SELECT id, name, team, source, origin, created, arch, gpu_model, n_dispatches, complete, fingerprint";
static const char *rank_cols =
    ", (SELECT COUNT(DISTINCT r.part) FROM rank_sysinfo r WHERE r.workload_id = workload.id), "
    "(SELECT COUNT(DISTINCT r.value) FROM rank_sysinfo r WHERE r.workload_id = workload.id "
    "AND r.key = 'hostname' AND r.value <> '')";

static int has_table(lm_sql *sql, const char *table);

/* Whether the workload's system information has the layout of
 * rocprofiler-compute 3.3 (lm_sysinfo_compat), through the sysinfo key. */
static const char *layout_col =
    ", (SELECT COUNT(*) FROM sysinfo y WHERE y.workload_id = workload.id AND y.key = 'num_hbm_channels')";

static void entry_sql(lm_store *s, const char *tail, char *out, size_t cap) {
  snprintf(out, cap, "%s%s%s FROM workload %s", entry_cols,
           has_table(s->sql, "rank_sysinfo") ? rank_cols : ", 0, 0", layout_col, tail);
}

static void fill_entry(lm_stmt *q, lm_store_entry *e) {
  memset(e, 0, sizeof *e);
  e->id = lm_stmt_int64(q, 0);
  snprintf(e->name, sizeof e->name, "%s", lm_stmt_text(q, 1));
  snprintf(e->team, sizeof e->team, "%s", lm_stmt_text(q, 2));
  snprintf(e->source, sizeof e->source, "%s", lm_stmt_text(q, 3));
  snprintf(e->origin, sizeof e->origin, "%s", lm_stmt_text(q, 4));
  snprintf(e->created, sizeof e->created, "%s", lm_stmt_text(q, 5));
  snprintf(e->arch, sizeof e->arch, "%s", lm_stmt_text(q, 6));
  snprintf(e->gpu_model, sizeof e->gpu_model, "%s", lm_stmt_text(q, 7));
  e->n_dispatches = (size_t)lm_stmt_int64(q, 8);
  e->complete = (int)lm_stmt_int64(q, 9);
  snprintf(e->fingerprint, sizeof e->fingerprint, "%s", lm_stmt_text(q, 10));
  int64_t ranks = lm_stmt_int64(q, 11), hosts = lm_stmt_int64(q, 12);
  e->n_ranks = ranks > 0 ? (size_t)ranks : 0;
  e->n_hosts = hosts > 0 ? (size_t)hosts : 0;
  if (lm_stmt_int64(q, 13) > 0) snprintf(e->compat, sizeof e->compat, "3.3");
}

lm_status lm_store_list(lm_store *s, lm_store_entry **out, size_t *n, lm_diag *diag) {
  *out = NULL;
  *n = 0;
  char text[768];
  entry_sql(s, "ORDER BY name", text, sizeof text);
  lm_stmt *q = NULL;
  lm_status st = lm_sql_prepare(s->sql, text, &q, diag);
  if (st != LM_OK) return st;
  size_t cap = 0;
  int rc;
  while ((rc = lm_stmt_step(q)) == 1) {
    if (*n == cap) {
      cap = cap ? cap * 2 : 16;
      lm_store_entry *grown = lm_realloc(*out, cap * sizeof *grown);
      if (!grown) {
        lm_stmt_free(q);
        return lm_diag_set(diag, LM_ENOMEM, NULL, 0, 0, NULL, "out of memory");
      }
      *out = grown;
    }
    fill_entry(q, &(*out)[(*n)++]);
  }
  if (rc < 0) st = lm_stmt_error(q, "list workloads", diag);
  lm_stmt_free(q);
  return st;
}

lm_status lm_store_get(lm_store *s, const char *name, lm_store_entry *out, lm_diag *diag) {
  char text[768];
  entry_sql(s, "WHERE name = ?", text, sizeof text);
  lm_stmt *q = NULL;
  lm_status st = lm_sql_prepare(s->sql, text, &q, diag);
  if (st != LM_OK) return st;
  lm_stmt_bind_text(q, 1, name);
  int rc = lm_stmt_step(q);
  if (rc == 1) fill_entry(q, out);
  else if (rc == 0)
    st = lm_diag_set(diag, LM_ENOTFOUND, lm_store_where(s), 0, 0, NULL, "no workload named '%s' in the store",
                     name);
  else st = lm_stmt_error(q, "read", diag);
  lm_stmt_free(q);
  return st;
}

/* ----------------------------------------------------------- fingerprint */

/* The fingerprint is XXH3-128 (libxxhash) of a content stream made in one
 * canonical order, fed to the hash as it is made (a column at a time):
 *
 *   system info   u64 count, then name\0 value\0 of each field in stored
 *                 order, workload_name left out
 *   tables        u64 count, then pmc_perf, the other tables in name
 *                 order, the roofline last; each: name\0, u64 rows,
 *                 u64 columns, each column (numeric, holding a value, in
 *                 case-insensitive name order) as its lowercased name\0
 *                 and its rows' doubles, then u64 kernel names and
 *                 Kernel_Name\0 of each row (pmc_perf only; else 0)
 *   regions       u64 count, name\0 of each; u64 1 and each row's u64
 *                 region bits, or u64 0; u64 1 and each row's i32 rank,
 *                 or u64 0
 *
 * Integers and doubles are little-endian; every part says how long it is,
 * so two different workloads never make the same stream. */
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "the fingerprint hashes the columns' doubles as little-endian bytes"
#endif

typedef struct hasher {
  XXH3_state_t *state;
} hasher;

static void mix(hasher *h, const void *data, size_t n) {
  if (n) XXH3_128bits_update(h->state, data, n);
}

static void mix_str(hasher *h, const char *s) { mix(h, s ? s : "", s ? strlen(s) + 1 : 1); }

static void mix_u64(hasher *h, uint64_t v) {
  unsigned char le[8];
  for (int i = 0; i < 8; i++) le[i] = (unsigned char)(v >> (8 * i));
  mix(h, le, sizeof le);
}

/* A table's contents, independent of how it was stored: numeric columns
 * that hold any value, in case-insensitive name order, then the kernel
 * names. (A CSV keeps blank and text columns that a database drops.) */
static int cmp_cols(const void *x, const void *y, void *ctx) {
  const lm_table *t = ctx;
  return strcasecmp(t->cols[*(const size_t *)x].name, t->cols[*(const size_t *)y].name);
}

/* The columns mix_table mixes, in its order, into a new array (*n of
 * them; NULL when out of memory). */
static size_t *mixed_columns(const lm_table *t, size_t *n) {
  size_t *order = malloc((t->n_cols + 1) * sizeof *order), k = 0;
  *n = 0;
  if (!order) return NULL;
  for (size_t c = 0; c < t->n_cols; c++) {
    const lm_column *col = &t->cols[c];
    if (col->text_ids || col->n_text || col->n_missing == t->n_rows) continue;
    order[k++] = c;
  }
  lm_sort(order, k, sizeof *order, cmp_cols, (void *)t);
  *n = k;
  return order;
}

/* One column's share of a table's mix, as lm_table_each_column gives it. */
typedef struct column_mix {
  hasher *h;
  const lm_table *t;
} column_mix;

static lm_status mix_column(void *ctx, size_t c, const double *values, lm_diag *diag) {
  (void)diag;
  column_mix *m = ctx;
  char lower[256];
  size_t j = 0;
  for (const char *p = m->t->cols[c].name; *p && j + 1 < sizeof lower; p++)
    lower[j++] = (char)tolower((unsigned char)*p);
  lower[j] = '\0';
  mix_str(m->h, lower);
  mix(m->h, values, m->t->n_rows * sizeof(double));
  return LM_OK;
}

/* A table's name, rows and the number of its n_mixed columns that follow. */
static void mix_table_head(hasher *h, const lm_table *t, size_t n_mixed) {
  mix_str(h, t->name);
  mix_u64(h, t->n_rows);
  mix_u64(h, n_mixed);
}

static void mix_table_tail(hasher *h, const lm_table *t) {
  long kc = strcmp(t->name, "pmc_perf") == 0 ? lm_table_find(t, "Kernel_Name") : -1;
  mix_u64(h, kc >= 0 ? t->n_rows : 0);
  for (size_t r = 0; kc >= 0 && r < t->n_rows; r++) mix_str(h, lm_table_text(t, (size_t)kc, r));
}

static lm_status mix_table(hasher *h, const lm_table *t, lm_diag *diag) {
  size_t k = 0, *order = mixed_columns(t, &k);
  if (!order) return lm_diag_set(diag, LM_ENOMEM, t->path, 0, 0, NULL, "out of memory");
  mix_table_head(h, t, k);
  column_mix m = {h, t};
  lm_status st = lm_table_each_column(t, order, k, LM_DB_GROUP_BYTES, mix_column, &m, diag);
  free(order);
  if (st == LM_OK) mix_table_tail(h, t);
  return st;
}

static int cmp_tables(const void *x, const void *y) {
  return strcmp((*(lm_table *const *)x)->name, (*(lm_table *const *)y)->name);
}

static void hasher_fini(hasher *h) {
  XXH3_freeState(h->state);
  h->state = NULL;
}

/* A new hash of w (free with hasher_fini), its system info and the
 * number of its tables mixed. */
static lm_status mix_head(hasher *h, const lm_workload *w, lm_diag *diag) {
  h->state = XXH3_createState();
  if (!h->state || XXH3_128bits_reset(h->state) != XXH_OK) {
    hasher_fini(h);
    return lm_diag_set(diag, LM_ENOMEM, NULL, 0, 0, NULL, "out of memory");
  }
  /* The name and time of a profile say nothing of its contents. */
  uint64_t n_fields = 0;
  for (size_t i = 0; i < w->sysinfo.n_fields; i++) n_fields += strcmp(w->sysinfo.names[i], "workload_name") != 0;
  mix_u64(h, n_fields);
  for (size_t i = 0; i < w->sysinfo.n_fields; i++) {
    if (strcmp(w->sysinfo.names[i], "workload_name") == 0) continue;
    mix_str(h, w->sysinfo.names[i]);
    mix_str(h, w->sysinfo.texts[i]);
  }
  mix_u64(h, 1 + (uint64_t)w->n_levels + (w->roofline ? 1 : 0));
  return LM_OK;
}

/* What follows the pmc table in a fingerprint, and the digits (32, of
 * XXH3-128's canonical big-endian form). */
static lm_status mix_rest(hasher *h, const lm_workload *w, char out[33], lm_diag *diag) {
  lm_status st = LM_OK;
  lm_table **levels = malloc((w->n_levels + 1) * sizeof *levels);
  if (!levels) return lm_diag_set(diag, LM_ENOMEM, NULL, 0, 0, NULL, "out of memory");
  memcpy(levels, w->levels, w->n_levels * sizeof *levels);
  qsort(levels, w->n_levels, sizeof *levels, cmp_tables);
  for (size_t i = 0; st == LM_OK && i < w->n_levels; i++) st = mix_table(h, levels[i], diag);
  free(levels);
  if (st == LM_OK && w->roofline) st = mix_table(h, w->roofline, diag);
  if (st != LM_OK) return st;
  mix_u64(h, w->n_regions);
  for (size_t i = 0; i < w->n_regions; i++) mix_str(h, w->region_names[i]);
  mix_u64(h, w->row_regions ? 1 : 0);
  for (size_t r = 0; w->row_regions && r < w->pmc->n_rows; r++) mix_u64(h, w->row_regions[r]);
  mix_u64(h, w->row_rank ? 1 : 0);
  if (w->row_rank) mix(h, w->row_rank, w->pmc->n_rows * sizeof *w->row_rank);
  XXH128_canonical_t digest;
  XXH128_canonicalFromHash(&digest, XXH3_128bits_digest(h->state));
  for (size_t i = 0; i < sizeof digest.digest; i++) snprintf(out + 2 * i, 3, "%02x", digest.digest[i]);
  return LM_OK;
}

lm_status lm_workload_fingerprint(const lm_workload *w, char out[33], lm_diag *diag) {
  hasher h;
  lm_status st = mix_head(&h, w, diag);
  if (st == LM_OK) st = mix_table(&h, w->pmc, diag);
  if (st == LM_OK) st = mix_rest(&h, w, out, diag);
  hasher_fini(&h);
  return st;
}

/* --------------------------------------------------------------- import */

static lm_status check_name(const char *name, lm_diag *diag) {
  size_t n = strlen(name);
  if (n == 0 || n > 200)
    return lm_diag_set(diag, LM_EINVAL, NULL, 0, 0, "-n", "a workload name has 1 to 200 characters");
  for (const char *p = name; *p; p++)
    if ((unsigned char)*p < 0x20 || *p == 0x7f)
      return lm_diag_set(diag, LM_EINVAL, NULL, 0, 0, "-n", "a workload name has no control characters");
  return LM_OK;
}

/* A name from the folder: its last component, or parent_last when the
 * last one is the GPU (the reference tool's NAME/GPU layout). */
static void name_from_dir(const char *dir, const lm_workload *w, char *out, size_t cap) {
  char path[PATH_MAX];
  snprintf(path, sizeof path, "%s", dir);
  size_t n = strlen(path);
  while (n > 1 && path[n - 1] == '/') path[--n] = '\0';
  char *base = strrchr(path, '/');
  const char *last = base ? base + 1 : path;
  const char *model = lm_sysinfo_text(&w->sysinfo, "gpu_model");
  int gpu_folder = (model && strcmp(model, last) == 0) || strncmp(last, "MI", 2) == 0;
  if (gpu_folder && base && base > path) {
    *base = '\0';
    char *pb = strrchr(path, '/');
    snprintf(out, cap, "%s_%s", pb ? pb + 1 : path, last);
  } else {
    snprintf(out, cap, "%s", last);
  }
}

/* Tables that a workload written by an earlier lumen may lack (the clock
 * samplers, the executions of each row, the clock sources, the power
 * samples, the ranks' system information and sets). */
static int optional_table(const char *table) {
  static const char *const optional[] = {"profile_telemetry", "execution", "execution_value", "dispatch_clock",
                                         "profile_process", "power_sample", "rank_sysinfo", "set_rank"};
  for (size_t i = 0; i < LM_ARRAY_LEN(optional); i++)
    if (strcmp(optional[i], table) == 0) return 1;
  return 0;
}

static int has_table(lm_sql *sql, const char *table) {
  char text[128];
  snprintf(text, sizeof text, "SELECT 1 FROM %s LIMIT 0", table);
  lm_stmt *q = NULL;
  lm_diag ignored;
  if (lm_sql_prepare(sql, text, &q, &ignored) != LM_OK) return 0;
  lm_stmt_free(q);
  return 1;
}

/* A raw column (codec NULL or 0, as databases before version 3 hold
 * them) of column_data row q, bound compact into ins instead: data at
 * parameter data_col + 1, the codec at codec_param. *bound is 0 when the
 * row is not raw (copied as it is). An encoding that fails (out of
 * memory) is an error, not a raw copy. */
static lm_status bind_compact(lm_stmt *q, lm_stmt *ins, int data_col, int rows_col, int codec_col,
                              int codec_param, lm_colcodec *codec, int *bound, lm_diag *diag) {
  *bound = 0;
  if (data_col < 0 || rows_col < 0 || (codec_col >= 0 && !lm_stmt_is_null(q, codec_col) &&
                                       lm_stmt_int64(q, codec_col) != LM_CODEC_RAW))
    return LM_OK;
  size_t len = 0;
  const void *raw = lm_stmt_blob(q, data_col, &len);
  int64_t rows = lm_stmt_int64(q, rows_col);
  if (rows < 0 || (uint64_t)rows != len / sizeof(double) || len % sizeof(double)) return LM_OK;
  double *values = lm_malloc(len ? len : 1);
  if (!values) return lm_diag_set(diag, LM_ENOMEM, NULL, 0, 0, NULL, "out of memory");
  if (len) memcpy(values, raw, len);
  const void *blob = NULL;
  size_t n = 0;
  lm_status st = lm_colcodec_encode(codec, values, (size_t)rows, &blob, &n, diag);
  if (st == LM_OK) {
    lm_stmt_bind_blob(ins, data_col + 1, blob, n);
    lm_stmt_bind_int64(ins, codec_param, LM_CODEC_COMPACT);
    *bound = 1;
  }
  lm_free(values);
  return st;
}

/* Copy the rows of `table` of workload from_wid into to_wid. Raw counter
 * columns (from a folder written before the codec) are written compact,
 * one at a time. */
static lm_status copy_table(lm_sql *from, int64_t from_wid, lm_sql *to, int64_t to_wid, const char *table,
                            lm_diag *diag) {
  char text[256];
  snprintf(text, sizeof text, "SELECT * FROM %s WHERE workload_id = ?", table);
  lm_stmt *q = NULL, *ins = NULL;
  lm_colcodec *codec = NULL;
  lm_status st = lm_sql_prepare(from, text, &q, diag);
  if (st != LM_OK) return st;
  lm_stmt_bind_int64(q, 1, from_wid);
  int rc, n_cols = 0, wid_col = -1, data_col = -1, rows_col = -1, codec_col = -1, codec_param = 0;
  int columns = strcmp(table, "column_data") == 0;
  if (columns && !(codec = lm_colcodec_new())) {
    lm_stmt_free(q);
    return lm_diag_set(diag, LM_ENOMEM, NULL, 0, 0, NULL, "out of memory");
  }
  while ((rc = lm_stmt_step(q)) == 1) {
    if (!ins) {
      n_cols = lm_stmt_columns(q);
      lm_buf b = {0};
      lm_buf_printf(&b, "INSERT INTO %s(", table);
      for (int c = 0; c < n_cols; c++) {
        const char *name = lm_stmt_column_name(q, c);
        if (strcmp(name, "workload_id") == 0) wid_col = c;
        if (columns && strcmp(name, "data") == 0) data_col = c;
        if (columns && strcmp(name, "n_rows") == 0) rows_col = c;
        if (columns && strcmp(name, "codec") == 0) codec_col = c;
        lm_buf_printf(&b, "%s%s", c ? ", " : "", name);
      }
      /* A source without the codec column: its columns are all raw. */
      codec_param = codec_col >= 0 ? codec_col + 1 : n_cols + 1;
      if (columns && codec_col < 0) lm_buf_puts(&b, ", codec");
      lm_buf_puts(&b, ") VALUES (");
      for (int c = 0; c < n_cols; c++) lm_buf_puts(&b, c ? ", ?" : "?");
      if (columns && codec_col < 0) lm_buf_puts(&b, ", ?");
      lm_buf_puts(&b, ")");
      st = b.failed ? lm_diag_set(diag, LM_ENOMEM, NULL, 0, 0, NULL, "out of memory")
                    : lm_sql_prepare(to, lm_buf_cstr(&b), &ins, diag);
      lm_buf_fini(&b);
      if (st != LM_OK) break;
    }
    for (int c = 0; c < n_cols; c++) {
      if (c == wid_col) {
        lm_stmt_bind_int64(ins, c + 1, to_wid);
        continue;
      }
      size_t len;
      const void *p;
      switch (lm_stmt_kind(q, c)) {
      case 'i': lm_stmt_bind_int64(ins, c + 1, lm_stmt_int64(q, c)); break;
      case 'r': lm_stmt_bind_double(ins, c + 1, lm_stmt_double(q, c)); break;
      case 't': lm_stmt_bind_text(ins, c + 1, lm_stmt_text(q, c)); break;
      case 'b':
        p = lm_stmt_blob(q, c, &len);
        lm_stmt_bind_blob(ins, c + 1, p, len);
        break;
      default: lm_stmt_bind_null(ins, c + 1); break;
      }
    }
    int bound = 0;
    if (columns &&
        (st = bind_compact(q, ins, data_col, rows_col, codec_col, codec_param, codec, &bound, diag)) != LM_OK)
      break;
    if (columns && !bound && codec_col < 0) lm_stmt_bind_null(ins, codec_param);
    if (lm_stmt_step(ins) < 0) {
      st = lm_stmt_error(ins, table, diag);
      break;
    }
    lm_stmt_reset(ins);
  }
  if (st == LM_OK && rc < 0) st = lm_stmt_error(q, table, diag);
  lm_colcodec_free(codec);
  lm_stmt_free(ins);
  lm_stmt_free(q);
  return st;
}

static lm_status set_fingerprint(lm_sql *sql, int64_t wid, const char *fp, lm_diag *diag) {
  lm_stmt *q = NULL;
  lm_status st = lm_sql_prepare(sql, "UPDATE workload SET fingerprint = ? WHERE id = ?", &q, diag);
  if (st != LM_OK) return st;
  lm_stmt_bind_text(q, 1, fp);
  lm_stmt_bind_int64(q, 2, wid);
  if (lm_stmt_step(q) < 0)
    st = lm_stmt_unique_violation(q) ? lm_diag_set(diag, LM_EDATA, NULL, 0, 0, NULL, "duplicate")
                                     : lm_stmt_error(q, "write the fingerprint", diag);
  lm_stmt_free(q);
  return st;
}

/* Copy workload from_wid of `from` as a new workload `name` of `to`. */
static lm_status copy_workload(lm_sql *from, int64_t from_wid, lm_sql *to, const char *name, const char *team,
                               const char *origin, const char *fingerprint, int64_t *new_wid, lm_diag *diag) {
  lm_stmt *q = NULL;
  lm_status st = lm_sql_prepare(from, "SELECT source, arch, gpu_model, n_dispatches, complete, origin "
                                      "FROM workload WHERE id = ?", &q, diag);
  if (st != LM_OK) return st;
  lm_stmt_bind_int64(q, 1, from_wid);
  if (lm_stmt_step(q) != 1) {
    st = lm_stmt_error(q, "read the workload", diag);
    lm_stmt_free(q);
    return st;
  }
  char source[32], arch[32], model[64], old_origin[1024];
  snprintf(source, sizeof source, "%s", lm_stmt_text(q, 0));
  snprintf(arch, sizeof arch, "%s", lm_stmt_text(q, 1));
  snprintf(model, sizeof model, "%s", lm_stmt_text(q, 2));
  size_t n = (size_t)lm_stmt_int64(q, 3);
  int complete = (int)lm_stmt_int64(q, 4);
  snprintf(old_origin, sizeof old_origin, "%s", lm_stmt_text(q, 5));
  lm_stmt_free(q);
  /* A replay of the simulated device stays marked as one in the store. */
  int simulated = strncmp(old_origin, LM_ORIGIN_SIMULATED, strlen(LM_ORIGIN_SIMULATED)) == 0;
  st = lm_db_create_workload(to, name, team, source, origin && !simulated ? origin : old_origin, arch, model, n,
                             complete,
                             new_wid, diag);
  if (st == LM_OK && fingerprint) st = set_fingerprint(to, *new_wid, fingerprint, diag);
  for (size_t i = 0; st == LM_OK && i < LM_ARRAY_LEN(workload_tables); i++)
    if (!optional_table(workload_tables[i]) || has_table(from, workload_tables[i]))
      st = copy_table(from, from_wid, to, *new_wid, workload_tables[i], diag);
  return st;
}

int lm_store_same_workload(const lm_store_facts *stored, const lm_store_facts *incoming) {
  const char *arch_a = stored->arch ? stored->arch : "", *arch_b = incoming->arch ? incoming->arch : "";
  const char *model_a = stored->gpu_model ? stored->gpu_model : "";
  const char *model_b = incoming->gpu_model ? incoming->gpu_model : "";
  return stored->n_dispatches == incoming->n_dispatches && strcmp(arch_a, arch_b) == 0 &&
         strcmp(model_a, model_b) == 0;
}

/* The workload of this team with fingerprint fp that lm_store_same_workload
 * takes for one with the facts `facts`: 1 with its name in name. 0 when
 * there is none, with collided naming a workload of the same fingerprint
 * and other facts ("" when none has the fingerprint). */
static int find_fingerprint(lm_sql *sql, const char *fp, const char *team, const lm_store_facts *facts,
                            char *name, size_t cap, char *collided, size_t collided_cap) {
  lm_stmt *q = NULL;
  lm_diag ignored;
  int found = 0;
  collided[0] = '\0';
  if (lm_sql_prepare(sql, "SELECT name, n_dispatches, arch, gpu_model FROM workload "
                          "WHERE fingerprint = ? AND team = ? ORDER BY id",
                     &q, &ignored) != LM_OK)
    return 0;
  lm_stmt_bind_text(q, 1, fp);
  lm_stmt_bind_text(q, 2, team);
  while (!found && lm_stmt_step(q) == 1) {
    int64_t n = lm_stmt_int64(q, 1);
    lm_store_facts stored = {n > 0 ? (size_t)n : 0, lm_stmt_text(q, 2), lm_stmt_text(q, 3)};
    if (lm_store_same_workload(&stored, facts)) {
      snprintf(name, cap, "%s", lm_stmt_text(q, 0));
      found = 1;
    } else if (!collided[0]) {
      snprintf(collided, collided_cap, "%s", lm_stmt_text(q, 0));
    }
  }
  lm_stmt_free(q);
  return found;
}

/* A fingerprint match that lm_store_same_workload takes for another
 * workload: said once, and the import goes on beside it. */
static void note_collision(lm_import_result *res, const char *dir, const char *fp, const char *other) {
  if (!other[0] || res->collided[0]) return;
  snprintf(res->collided, sizeof res->collided, "%s", other);
  lm_log(LM_LOG_WARN,
         "%s: its fingerprint %s is that of '%s' in the store, whose dispatch count, architecture or GPU "
         "differ: imported beside it as '%s'",
         dir, fp, other, res->name);
}

/* The fingerprints of the store's finished workloads that have none: those
 * of a store upgraded from schema version 4 or earlier, whose fingerprints
 * were made by another hash and cleared (lumen_db.c), computed from the
 * stored columns, once. A workload that cannot be read keeps none (it is
 * said, and the import goes on: at worst the same contents are stored
 * twice). Errors: the store cannot be read or written, out of memory. */
static lm_status refresh_fingerprints(lm_store *s, lm_diag *diag) {
  lm_stmt *q = NULL;
  char (*names)[256] = NULL;
  size_t n = 0, cap = 0;
  lm_status st = lm_sql_prepare(s->sql, "SELECT name FROM workload WHERE fingerprint = '' AND complete = 1 "
                                        "ORDER BY id", &q, diag);
  if (st != LM_OK) return st;
  int rc;
  while ((rc = lm_stmt_step(q)) == 1) {
    if (n == cap) {
      cap = cap ? 2 * cap : 8;
      char(*grown)[256] = realloc(names, cap * sizeof *names);
      if (!grown) {
        st = lm_diag_set(diag, LM_ENOMEM, NULL, 0, 0, NULL, "out of memory");
        goto cleanup;
      }
      names = grown;
    }
    snprintf(names[n++], sizeof *names, "%s", lm_stmt_text(q, 0));
  }
  if (rc < 0) st = lm_stmt_error(q, "list the workloads without a fingerprint", diag);
  lm_stmt_free(q);
  q = NULL;
  if (st != LM_OK || !n) goto cleanup;
  lm_log(LM_LOG_INFO, "%s: computing the fingerprints of %zu workloads (XXH3-128 since schema version 5)",
         lm_store_where(s), n);
  for (size_t i = 0; i < n && st == LM_OK; i++) {
    lm_workload *w = NULL;
    lm_diag why;
    memset(&why, 0, sizeof why);
    char fp[33];
    lm_status rs = lm_db_read_workload(s->sql, names[i], &w, &why);
    if (rs == LM_OK) rs = lm_workload_fingerprint(w, fp, &why);
    lm_workload_free(w);
    if (rs == LM_ENOMEM) {
      st = lm_diag_set(diag, LM_ENOMEM, NULL, 0, 0, NULL, "out of memory");
    } else if (rs != LM_OK) {
      lm_log(LM_LOG_WARN, "%s: '%s' keeps no fingerprint: %s", lm_store_where(s), names[i], why.message);
    } else if ((st = lm_sql_prepare(s->sql, "UPDATE workload SET fingerprint = ? WHERE name = ? AND fingerprint = ''",
                                    &q, diag)) == LM_OK) {
      lm_stmt_bind_text(q, 1, fp);
      lm_stmt_bind_text(q, 2, names[i]);
      if (lm_stmt_step(q) < 0) st = lm_stmt_error(q, "write the fingerprint", diag);
      lm_stmt_free(q);
      q = NULL;
    }
  }
cleanup:
  lm_stmt_free(q);
  free(names);
  return st;
}

static int name_taken(lm_sql *sql, const char *name) {
  int64_t wid;
  lm_diag ignored;
  return lm_db_find_workload(sql, name, &wid, NULL, NULL, &ignored) == LM_OK;
}

static int cache_on(void);

static void keep(lm_store *s, const char *name, const lm_catalog *cat, const lm_analyze_opts *o,
                 const lm_analysis *an);

/* The default view (every panel, no filter) of a new workload, kept so
 * that the first look at it costs no evaluation. From the folder's own
 * tables when given (w, still open: the columns it reads come from the
 * CSV files in blocks, which is cheaper than loading and decoding them
 * from the store; the stored columns are the same numbers, so is the
 * view), else from the columns just stored (lm_store_analyze). */
static void precompute(lm_store *s, const char *name, const lm_workload *w) {
  if (!cache_on()) return;
  lm_analyze_opts o;
  memset(&o, 0, sizeof o);
  lm_analysis *an = NULL;
  lm_diag ignored;
  const char *layout = w ? lm_sysinfo_compat(&w->sysinfo) : NULL;
  const lm_catalog *cat = !w ? NULL : layout ? lm_metrics_builtin_compat(w->arch, layout) : lm_metrics_builtin(w->arch);
  if (cat && lm_analyze_run(w, cat, &o, &an, &ignored) == LM_OK) {
    keep(s, name, cat, &o, an);
  } else {
    lm_analysis_free(an);
    an = NULL;
    lm_workload *stored = NULL;
    int cached = 0;
    lm_store_analyze(s, name, NULL, &o, &stored, &an, &cached, &ignored);
    lm_workload_free(stored);
  }
  lm_analysis_free(an);
}

/* The bytes of counter values an import holds at once: LM_DB_GROUP_BYTES,
 * or LUMEN_IMPORT_GROUP_BYTES (at least one column; for tests and
 * measurements). */
static size_t group_bytes_or(size_t otherwise) {
  const char *text = getenv("LUMEN_IMPORT_GROUP_BYTES");
  char *end = NULL;
  unsigned long long v = text && *text ? strtoull(text, &end, 10) : 0;
  return end && !*end && v ? (size_t)v : otherwise;
}

static size_t group_bytes(void) { return group_bytes_or(LM_DB_GROUP_BYTES); }

/* The packs of a folder's columns may take four times a group's bytes
 * (a group of doubles then takes little: PACKED_GROUP_BYTES, which keep
 * in cache while they are hashed and encoded). */
#define PACKED_GROUP_BYTES ((size_t)8 << 20)
static size_t pack_bytes(void) { return 4 * group_bytes(); }

/* One side of a fingerprinted write whose columns are packed: the pmc
 * table's mix, or the writing of every table. */
typedef struct write_side {
  int mixes;
  column_mix m;
  const size_t *order;
  size_t k, budget;
  lm_sql *sql;
  int64_t wid;
  const lm_workload *w;
  const lm_db_write_opts *o;
  lm_status st;
  lm_diag diag;
} write_side;

static void *write_side_run(void *arg) {
  write_side *j = arg;
  if (j->mixes) j->st = lm_table_each_column(j->m.t, j->order, j->k, j->budget, mix_column, &j->m, &j->diag);
  else j->st = lm_db_write_tables_with(j->sql, j->wid, j->w, j->o, &j->diag);
  return NULL;
}

/* Whether the pmc table's columns are all read from memory (loaded, or
 * packed: lm_table_pack), and the dispatch columns loaded, so that the
 * mix can read them while the writer writes. */
static int mix_aside(const lm_table *pmc) {
  if (!lm_table_packed_bytes(pmc))
    for (size_t c = 0; c < pmc->n_cols; c++)
      if (lm_table_deferred(pmc, c)) return 0;
  for (size_t c = 0; c < pmc->n_cols; c++)
    if (lm_table_deferred(pmc, c) && lm_db_dispatch_column(pmc->cols[c].name)) return 0;
  return 1;
}

/* lm_db_write_tables_with o, computing w's fingerprint (into fp) from the
 * pmc columns as they are written, so they are read from the file once. */
static lm_status write_fingerprinted(lm_sql *sql, int64_t wid, const lm_workload *w, const lm_db_write_opts *o,
                                     char fp[33], lm_diag *diag) {
  hasher h;
  lm_status st = mix_head(&h, w, diag);
  if (st != LM_OK) return st;
  size_t k = 0, *order = mixed_columns(w->pmc, &k);
  if (!order) {
    hasher_fini(&h);
    return lm_diag_set(diag, LM_ENOMEM, NULL, 0, 0, NULL, "out of memory");
  }
  mix_table_head(&h, w->pmc, k);
  column_mix m = {&h, w->pmc};
  if (mix_aside(w->pmc)) {
    /* The mix (XXH3 over every value, in the fingerprint's order) on one thread, the writing on another. */
    write_side sides[2];
    memset(sides, 0, sizeof sides);
    sides[0].mixes = 1;
    sides[0].m = m;
    sides[0].order = order;
    sides[0].k = k;
    sides[0].budget = o->group_bytes ? o->group_bytes : LM_DB_GROUP_BYTES;
    sides[1].sql = sql;
    sides[1].wid = wid;
    sides[1].w = w;
    sides[1].o = o;
    lm_run_pair(write_side_run, &sides[1], &sides[0]);
    st = sides[1].st != LM_OK ? sides[1].st : sides[0].st;
    if (st != LM_OK && diag) *diag = sides[1].st != LM_OK ? sides[1].diag : sides[0].diag;
  } else {
    lm_db_write_opts with = *o;
    with.first = order;
    with.n_first = k;
    with.seen = mix_column;
    with.seen_ctx = &m;
    st = lm_db_write_tables_with(sql, wid, w, &with, diag);
  }
  free(order);
  if (st == LM_OK) {
    mix_table_tail(&h, w->pmc);
    st = mix_rest(&h, w, fp, diag);
  }
  hasher_fini(&h);
  return st;
}

lm_status lm_store_import(lm_store *s, const char *dir, const char *name, const char *team,
                          lm_import_result *res, lm_diag *diag) {
  memset(res, 0, sizeof *res);
  if (!s->writable) return lm_diag_set(diag, LM_EINVAL, lm_store_where(s), 0, 0, NULL, "opened read-only");
  if (!team) team = "";
  lm_workload *w = NULL;
  lm_sql *folder = NULL;
  /* The counter columns stay in their files until written (a lumen
   * folder's database is read whole). */
  lm_workload_options wo = {.defer = 1, .eager_columns = lm_analyze_columns};
  uint64_t t_read = lm_phase_begin();
  lm_status st = lm_workload_read_opts(dir, &wo, &w, diag);
  if (st != LM_OK) return st;
  lm_phase_end("import: read the folder", t_read);
  /* A folder's CSV columns are read once, into packs, rather than once
   * per group of the fingerprint's order and again for the default view
   * (the rank parts of an MPI profile are packed already). */
  int all_packed = !w->n_parts;
  if (!w->n_parts) {
    uint64_t t_pack = lm_phase_begin();
    size_t left = pack_bytes();
    for (size_t i = 0; i <= w->n_levels && st == LM_OK; i++) {
      lm_table *t = i ? w->levels[i - 1] : w->pmc;
      int packed = 0;
      st = lm_table_pack(t, left, &packed, diag);
      if (st == LM_ENOMEM) {
        /* (the packs' address space, say, where memory is not overcommitted) */
        lm_log(LM_LOG_DEBUG, "%s: %s: read in groups instead", t->path, diag ? diag->message : "out of memory");
        st = LM_OK;
      }
      if (st != LM_OK) break;
      size_t used = lm_table_packed_bytes(t);
      left = used < left ? left - used : 0;
      for (size_t c = 0; c < t->n_cols && !packed; c++)
        if (lm_table_deferred(t, c)) {
          lm_log(LM_LOG_DEBUG, "%s: its packed columns would exceed %zu MiB: read in groups", t->path,
                 pack_bytes() >> 20);
          all_packed = 0;
          break;
        }
    }
    lm_phase_end("import: pack the columns", t_pack);
    if (st != LM_OK) {
      lm_workload_free(w);
      return st;
    }
  }
  char db_path[PATH_MAX], fp[33] = "", chosen[256], origin[PATH_MAX];
  snprintf(db_path, sizeof db_path, "%s/%s", dir, LM_WORKLOAD_DB);
  struct stat sb;
  int lumen_folder = stat(db_path, &sb) == 0;
  if (!realpath(dir, origin)) snprintf(origin, sizeof origin, "%s", dir);
  if (lumen_folder && (st = lm_workload_fingerprint(w, fp, diag)) != LM_OK) goto done;
  int64_t folder_wid = 0;
  /* The facts of the row the import writes (a lumen folder's is copied). */
  lm_store_facts facts = {w->pmc->n_rows, w->arch, lm_sysinfo_text(&w->sysinfo, "gpu_model")};
  char folder_arch[32], folder_model[64];
  if (lumen_folder) {
    if ((st = lm_sql_open(db_path, LM_DB_READ, &folder, diag)) != LM_OK) goto done;
    lm_store_entry e;
    lm_stmt *q = NULL;
    if ((st = lm_sql_prepare(folder, "SELECT id, name, n_dispatches, arch, gpu_model FROM workload ORDER BY id", &q,
                             diag)) != LM_OK)
      goto done;
    if (lm_stmt_step(q) == 1) {
      folder_wid = lm_stmt_int64(q, 0);
      snprintf(e.name, sizeof e.name, "%s", lm_stmt_text(q, 1));
      int64_t n = lm_stmt_int64(q, 2);
      snprintf(folder_arch, sizeof folder_arch, "%s", lm_stmt_text(q, 3));
      snprintf(folder_model, sizeof folder_model, "%s", lm_stmt_text(q, 4));
      facts = (lm_store_facts){n > 0 ? (size_t)n : 0, folder_arch, folder_model};
    } else {
      e.name[0] = '\0';
    }
    lm_stmt_free(q);
    snprintf(chosen, sizeof chosen, "%s", name ? name : e.name);
  } else if (name) {
    snprintf(chosen, sizeof chosen, "%s", name);
  } else if (w->n_parts && lm_sysinfo_text(&w->sysinfo, "workload_name") &&
             lm_sysinfo_text(&w->sysinfo, "workload_name")[0]) {
    /* The rank.R parts of an MPI profile: the name they were profiled under. */
    snprintf(chosen, sizeof chosen, "%s", lm_sysinfo_text(&w->sysinfo, "workload_name"));
  } else {
    name_from_dir(dir, w, chosen, sizeof chosen);
  }
  /* A replay of the simulated device stays marked as one in the store. */
  if (!lumen_folder && w->simulated) {
    snprintf(origin, sizeof origin, "%s%s", LM_ORIGIN_SIMULATED, w->simulated);
  }
  if ((st = check_name(chosen, diag)) != LM_OK) goto done;
  snprintf(res->name, sizeof res->name, "%s", chosen);
  res->n_dispatches = w->pmc->n_rows;
  lm_db_write_opts write_opts;
  memset(&write_opts, 0, sizeof write_opts);
  write_opts.group_bytes = all_packed ? group_bytes_or(PACKED_GROUP_BYTES) : group_bytes();
  if ((st = refresh_fingerprints(s, diag)) != LM_OK) goto done;

  for (int attempt = 0; attempt < 2; attempt++) {
    /* After a lost race the fingerprint decides before anything is written. */
    if (!fp[0] && attempt && (st = lm_workload_fingerprint(w, fp, diag)) != LM_OK) goto done;
    if ((st = lm_sql_begin(s->sql, diag)) != LM_OK) goto done;
    char existing[256], collided[256] = "";
    if (fp[0] && find_fingerprint(s->sql, fp, team, &facts, existing, sizeof existing, collided, sizeof collided)) {
      lm_sql_rollback(s->sql);
      snprintf(res->name, sizeof res->name, "%s", existing);
      res->existed = 1;
      st = LM_OK;
      goto done;
    }
    if (name_taken(s->sql, chosen)) {
      lm_sql_rollback(s->sql);
      if (!fp[0]) {
        /* That workload may be these contents: look again knowing them. */
        if ((st = lm_workload_fingerprint(w, fp, diag)) != LM_OK) goto done;
        attempt--;
        continue;
      }
      st = lm_diag_set(diag, LM_EINVAL, lm_store_where(s), 0, 0, "-n",
                       "a different workload named '%s' is already in the store (`lumen db rm %s` "
                       "first, or import under another -n)", chosen, chosen);
      goto done;
    }
    int64_t wid = 0;
    uint64_t t_write = lm_phase_begin();
    if (lumen_folder) {
      st = copy_workload(folder, folder_wid, s->sql, chosen, team, origin, fp, &wid, diag);
    } else {
      const char *model = lm_sysinfo_text(&w->sysinfo, "gpu_model");
      st = lm_db_create_workload(s->sql, chosen, team, w->n_parts ? "lumen" : "omniperf", origin, w->arch, model,
                                 w->pmc->n_rows, 1, &wid, diag);
      if (st == LM_OK && fp[0]) {
        st = set_fingerprint(s->sql, wid, fp, diag);
        if (st == LM_OK) st = lm_db_write_tables_with(s->sql, wid, w, &write_opts, diag);
      } else if (st == LM_OK) {
        /* The first attempt learns the fingerprint while it writes. */
        st = write_fingerprinted(s->sql, wid, w, &write_opts, fp, diag);
        if (st == LM_OK &&
            find_fingerprint(s->sql, fp, team, &facts, existing, sizeof existing, collided, sizeof collided)) {
          lm_sql_rollback(s->sql);
          snprintf(res->name, sizeof res->name, "%s", existing);
          res->existed = 1;
          goto done;
        }
        if (st == LM_OK) st = set_fingerprint(s->sql, wid, fp, diag);
      }
    }
    lm_phase_end("import: write the tables", t_write);
    uint64_t t_commit = lm_phase_begin();
    if (st == LM_OK) st = lm_sql_commit(s->sql, diag);
    lm_phase_end("import: commit", t_commit);
    if (st == LM_OK) {
      note_collision(res, dir, fp, collided);
      lm_sql_close(folder);
      folder = NULL;
      uint64_t t_view = lm_phase_begin();
      precompute(s, chosen, lumen_folder ? NULL : w);
      lm_phase_end("import: the default view", t_view);
      lm_workload_free(w);
      w = NULL;
      goto done;
    }
    lm_sql_rollback(s->sql);
    /* Lost a race with an import of the same contents or name: look again. */
    if (st != LM_EDATA && !(st == LM_EINVAL && strstr(diag->message, "already in the database"))) goto done;
  }
done:
  lm_sql_close(folder);
  lm_workload_free(w);
  return st;
}

lm_status lm_store_remove(lm_store *s, const char *name, lm_diag *diag) {
  if (!s->writable) return lm_diag_set(diag, LM_EINVAL, lm_store_where(s), 0, 0, NULL, "opened read-only");
  int64_t wid;
  lm_status st = lm_sql_begin(s->sql, diag);
  if (st != LM_OK) return st;
  if ((st = lm_db_find_workload(s->sql, name, &wid, NULL, NULL, diag)) != LM_OK) {
    lm_sql_rollback(s->sql);
    lm_diag_set(diag, LM_ENOTFOUND, lm_store_where(s), 0, 0, NULL, "no workload named '%s' in the store", name);
    return LM_ENOTFOUND;
  }
  /* Children first: a store made by an older SQLite may lack cascades. */
  lm_stmt *q = NULL;
  for (size_t i = 0; st == LM_OK && i <= LM_ARRAY_LEN(workload_tables) + 1; i++) {
    char text[128];
    if (i < LM_ARRAY_LEN(workload_tables))
      snprintf(text, sizeof text, "DELETE FROM %s WHERE workload_id = ?",
               workload_tables[LM_ARRAY_LEN(workload_tables) - 1 - i]);
    else if (i == LM_ARRAY_LEN(workload_tables))
      snprintf(text, sizeof text, "DELETE FROM analysis_cache WHERE workload_id = ?");
    else
      snprintf(text, sizeof text, "DELETE FROM workload WHERE id = ?");
    if ((st = lm_sql_prepare(s->sql, text, &q, diag)) != LM_OK) break;
    lm_stmt_bind_int64(q, 1, wid);
    if (lm_stmt_step(q) < 0) st = lm_stmt_error(q, "remove", diag);
    lm_stmt_free(q);
  }
  if (st == LM_OK) st = lm_sql_commit(s->sql, diag);
  if (st != LM_OK) lm_sql_rollback(s->sql);
  return st;
}

lm_status lm_store_export(lm_store *s, const char *name, const char *dir, lm_diag *diag) {
  int64_t wid;
  lm_status st = lm_db_find_workload(s->sql, name, &wid, NULL, NULL, diag);
  if (st != LM_OK)
    return lm_diag_set(diag, LM_ENOTFOUND, lm_store_where(s), 0, 0, NULL, "no workload named '%s' in the store",
                       name);
  struct stat sb;
  if (stat(dir, &sb) == 0)
    return lm_diag_set(diag, LM_EINVAL, dir, 0, 0, NULL, "already exists; export writes a new folder");
  if (mkdir(dir, 0777) != 0)
    return lm_diag_set(diag, LM_EIO, dir, 0, 0, NULL, "cannot create the folder: %s", strerror(errno));
  char db_path[PATH_MAX];
  snprintf(db_path, sizeof db_path, "%s/%s", dir, LM_WORKLOAD_DB);
  lm_sql *out = NULL;
  if ((st = lm_sql_open(db_path, LM_DB_CREATE, &out, diag)) == LM_OK && (st = lm_db_schema(out, 1, diag)) == LM_OK &&
      (st = lm_sql_begin(out, diag)) == LM_OK) {
    int64_t new_wid = 0;
    lm_store_entry e;
    if ((st = lm_store_get(s, name, &e, diag)) == LM_OK)
      st = copy_workload(s->sql, wid, out, name, e.team, NULL, e.fingerprint[0] ? e.fingerprint : NULL, &new_wid,
                         diag);
    if (st == LM_OK) st = lm_sql_commit(out, diag);
    else lm_sql_rollback(out);
  }
  lm_sql_close(out);
  if (st != LM_OK) {
    unlink(db_path);
    rmdir(dir);
  }
  return st;
}

lm_status lm_store_load(lm_store *s, const char *name, lm_workload **out, lm_diag *diag) {
  return lm_db_read_workload(s->sql, name, out, diag);
}

/* What a view from the store reads: lm_analyze_wants' columns; of those,
 * the formulas' inputs that analysis does not also read by name (what
 * lm_analyze_wants accepts without a catalog) are read only by the
 * evaluator, through lm_table_fetch, so they may stay encoded until a
 * block needs them. */
static int view_wants(void *ctx, const char *source, const char *name) {
  if (!lm_analyze_wants_indexed(ctx, source, name)) return 0;
  return lm_analyze_wants(NULL, source, name) ? 1 : LM_DB_WANT_LATER;
}

lm_status lm_store_load_for(lm_store *s, const char *name, const lm_catalog *cat, lm_workload **out,
                            lm_diag *diag) {
  lm_wants_index *ix = lm_analyze_wants_index_new(cat);
  if (!ix) return lm_diag_set(diag, LM_ENOMEM, NULL, 0, 0, NULL, "out of memory");
  lm_status st = lm_db_read_workload_columns(s->sql, name, view_wants, ix, out, diag);
  lm_analyze_wants_index_free(ix);
  return st;
}

lm_status lm_store_load_info(lm_store *s, const char *name, lm_workload **out, lm_diag *diag) {
  return lm_db_read_info(s->sql, name, out, diag);
}

/* ---------------------------------------------------------------- cache */

static void put_idset(lm_buf *b, const char *tag, const lm_idset *set) {
  if (!set || !set->n) return;
  lm_buf_printf(b, "|%s=", tag);
  for (size_t i = 0; i < set->n; i++)
    lm_buf_printf(b, "%d:%lld:%lld:%lld,", set->items[i].kind, (long long)set->items[i].a,
                  (long long)set->items[i].b, (long long)set->items[i].step);
}

void lm_store_cache_key(const lm_catalog *cat, const lm_analyze_opts *o, char *out, size_t cap) {
  lm_buf b = {0};
  lm_buf_printf(&b, "lumen " LUMEN_VERSION "|%s|%s", cat->arch, cat->digest ? cat->digest : "-");
  for (size_t i = 0; i < o->n_kernels; i++) lm_buf_printf(&b, "|k=%s", o->kernels[i]);
  for (size_t i = 0; i < o->n_kernel_index; i++) lm_buf_printf(&b, "|ki=%ld", o->kernel_index[i]);
  put_idset(&b, "d", o->dispatch);
  put_idset(&b, "g", o->gpu);
  put_idset(&b, "i", o->instance);
  put_idset(&b, "rank", o->rank);
  for (size_t i = 0; i < o->n_blocks; i++) lm_buf_printf(&b, "|b=%s", o->blocks[i]);
  for (size_t i = 0; i < o->n_regions; i++) lm_buf_printf(&b, "|r=%s", o->regions[i]);
  lm_buf_printf(&b, "|norm=%s|t=%s|s=%d|c=%d|m=%d|w=%d", o->norm ? o->norm : "", o->time_unit ? o->time_unit : "",
                o->stats_only, o->corrected, o->clock_measured, o->weight_time);
  /* Long keys are hashed into a fixed length. */
  const char *text = lm_buf_cstr(&b);
  size_t n = strlen(text);
  if (n < cap) {
    snprintf(out, cap, "%s", text);
  } else {
    XXH128_hash_t h = XXH3_128bits(text, n);
    snprintf(out, cap, "%.*s#%016llx%016llx", (int)(cap > 64 ? cap - 40 : 0), text,
             (unsigned long long)h.high64, (unsigned long long)h.low64);
  }
  lm_buf_fini(&b);
}

lm_status lm_store_cache_get(lm_store *s, const char *name, const char *key, void **data, size_t *len,
                             lm_diag *diag) {
  *data = NULL;
  *len = 0;
  lm_stmt *q = NULL;
  lm_status st = lm_sql_prepare(s->sql,
                                "SELECT c.data FROM analysis_cache c JOIN workload w ON w.id = c.workload_id "
                                "WHERE w.name = ? AND c.key = ?",
                                &q, diag);
  if (st != LM_OK) return st;
  lm_stmt_bind_text(q, 1, name);
  lm_stmt_bind_text(q, 2, key);
  int rc = lm_stmt_step(q);
  if (rc == 1) {
    size_t n;
    const void *p = lm_stmt_blob(q, 0, &n);
    *data = lm_malloc(n ? n : 1);
    if (!*data) st = lm_diag_set(diag, LM_ENOMEM, NULL, 0, 0, NULL, "out of memory");
    else {
      memcpy(*data, p, n);
      *len = n;
    }
  } else {
    st = rc == 0 ? LM_ENOTFOUND : lm_stmt_error(q, "read the cache", diag);
  }
  lm_stmt_free(q);
  return st;
}

lm_status lm_store_cache_put(lm_store *s, const char *name, const char *key, const void *data, size_t len,
                             lm_diag *diag) {
  if (!s->writable) return LM_OK;
  int64_t wid;
  lm_status st = lm_db_find_workload(s->sql, name, &wid, NULL, NULL, diag);
  if (st != LM_OK) return st;
  char created[64];
  time_t now = time(NULL);
  strftime(created, sizeof created, "%Y-%m-%dT%H:%M:%SZ", gmtime(&now));
  lm_stmt *q = NULL;
  if ((st = lm_sql_prepare(s->sql,
                           "INSERT INTO analysis_cache(workload_id, key, created, data) VALUES (?,?,?,?) "
                           "ON CONFLICT(workload_id, key) DO UPDATE SET data = excluded.data, "
                           "created = excluded.created",
                           &q, diag)) != LM_OK)
    return st;
  lm_stmt_bind_int64(q, 1, wid);
  lm_stmt_bind_text(q, 2, key);
  lm_stmt_bind_text(q, 3, created);
  /* (data outlives the statement, freed below: an analysis of megabytes
   * is not copied once more) */
  lm_stmt_bind_blob_borrowed(q, 4, data, len);
  if (lm_stmt_step(q) < 0) st = lm_stmt_error(q, "write the cache", diag);
  lm_stmt_free(q);
  return st;
}

/* LUMEN_STORE_CACHE=off: evaluate every time and keep nothing (for
 * measurements and for checking a suspect kept analysis). */
static int cache_on(void) {
  const char *mode = getenv("LUMEN_STORE_CACHE");
  return !(mode && strcmp(mode, "off") == 0);
}

/* Keep an analysis of workload `name` under its key (writable stores). */
static void keep(lm_store *s, const char *name, const lm_catalog *cat, const lm_analyze_opts *o,
                 const lm_analysis *an) {
  if (!s->writable || !cache_on()) return;
  char key[1024];
  lm_store_cache_key(cat, o, key, sizeof key);
  lm_buf b = {0};
  lm_diag ignored;
  if (lm_analysis_serialize(an, &b) == LM_OK) lm_store_cache_put(s, name, key, b.data, b.len, &ignored);
  lm_buf_fini(&b);
}

/* Kept analyses found damaged by this process, so that each is said once
 * (a read-only store, a server's, cannot remove them): "where\nname\nkey". */
static pthread_mutex_t damaged_lock = PTHREAD_MUTEX_INITIALIZER;
static lm_map *damaged_seen;
#define DAMAGED_SEEN_MAX 4096

/* 1 the first time this process meets the damaged entry. */
static int first_damage(const lm_store *s, const char *name, const char *key) {
  lm_buf b = {0};
  lm_buf_printf(&b, "%s\n%s\n%s", lm_store_where(s), name, key);
  int first = 1;
  pthread_mutex_lock(&damaged_lock);
  if (!b.failed && (damaged_seen || (damaged_seen = lm_map_new()) != NULL)) {
    if (lm_map_get(damaged_seen, lm_buf_cstr(&b), NULL)) first = 0;
    else if (lm_map_count(damaged_seen) < DAMAGED_SEEN_MAX) lm_map_put(damaged_seen, lm_buf_cstr(&b), 1);
  }
  pthread_mutex_unlock(&damaged_lock);
  lm_buf_fini(&b);
  return first;
}

/* A kept analysis that does not read back as a valid analysis of its
 * workload: removed where the store is writable (the recomputed one takes
 * its place), and said once, with what is wrong with it. */
static void discard(lm_store *s, const char *name, const char *key, const char *why) {
  int removed = 0;
  int64_t wid;
  lm_diag ignored;
  lm_stmt *q = NULL;
  if (s->writable && lm_db_find_workload(s->sql, name, &wid, NULL, NULL, &ignored) == LM_OK &&
      lm_sql_prepare(s->sql, "DELETE FROM analysis_cache WHERE workload_id = ? AND key = ?", &q, &ignored) == LM_OK) {
    lm_stmt_bind_int64(q, 1, wid);
    lm_stmt_bind_text(q, 2, key);
    removed = lm_stmt_step(q) >= 0;
  }
  lm_stmt_free(q);
  if (first_damage(s, name, key))
    lm_log(LM_LOG_WARN, "%s: %s the kept analysis of '%s' and recomputing it from the stored columns (%s)",
           lm_store_where(s), removed ? "discarding" : "ignoring", name, why);
}

lm_status lm_store_kept(lm_store *s, const char *name, const lm_catalog *cat, const lm_analyze_opts *o,
                        lm_workload **info, lm_analysis **out, lm_diag *diag) {
  *info = NULL;
  *out = NULL;
  if (!cache_on()) return LM_ENOTFOUND;
  lm_diag local;
  lm_diag *d = diag ? diag : &local;
  char key[1024];
  lm_store_cache_key(cat, o, key, sizeof key);
  void *data = NULL;
  size_t len = 0;
  lm_status st = lm_store_cache_get(s, name, key, &data, &len, d);
  if (st != LM_OK) return st;
  st = lm_store_load_info(s, name, info, d);
  /* (checked against the workload's dispatches and system information) */
  int damaged = 0;
  if (st == LM_OK) damaged = (st = lm_analysis_deserialize(data, len, *info, cat, out, d)) == LM_EDATA;
  lm_free(data);
  if (st != LM_OK) {
    lm_workload_free(*info);
    *info = NULL;
  }
  if (damaged) {
    discard(s, name, key, d->message);
    return LM_ENOTFOUND;
  }
  return st;
}

lm_status lm_store_analyze(lm_store *s, const char *name, const lm_catalog *override, const lm_analyze_opts *o,
                           lm_workload **workload, lm_analysis **out, int *cached, lm_diag *diag) {
  *workload = NULL;
  *out = NULL;
  *cached = 0;
  lm_store_entry e;
  lm_status st = lm_store_get(s, name, &e, diag);
  if (st != LM_OK) return st;
  /* (a folder of rocprofiler-compute 3.3 in its own semantics) */
  const lm_catalog *cat = override     ? override
                          : e.compat[0] ? lm_metrics_builtin_compat(e.arch, e.compat)
                                        : lm_metrics_builtin(e.arch);
  if (!cat)
    return lm_diag_set(diag, LM_EARCH, lm_store_where(s), 0, 0, "gpu_arch",
                       "workload '%s' is %s, which lumen has no definitions for", name, e.arch);
  lm_diag ignored;
  if (e.complete && lm_store_kept(s, name, cat, o, workload, out, &ignored) == LM_OK) {
    *cached = 1;
    return LM_OK;
  }
  if ((st = lm_store_load_for(s, name, cat, workload, diag)) != LM_OK) return st;
  if ((st = lm_analyze_run(*workload, cat, o, out, diag)) != LM_OK) return st;
  keep(s, name, cat, o, *out);
  return LM_OK;
}
