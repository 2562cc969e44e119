/*
 * fingerprint.c - a workload's fingerprint: XXH3-128 (libxxhash) of its
 * contents as one length-framed stream in a canonical order (system info,
 * tables, regions; docs/workload-format.md), and the import's write that
 * computes it from the pmc columns while they are written.
 *
 * The stream goes to the hash a column at a time, never copied, from the
 * columns the import reads anyway (hashed on a second thread while the writer
 * writes, when they are in memory). Every part carries its length, so two
 * different workloads never make the same stream; what a match means for an
 * import is the store's to decide (store.c).
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <xxhash.h>

#include "store/store_private.h"
#include "sql/sql.h"
#include "columns/columns.h"
#include "db/db.h"

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
 *                 Kernel_Name\0 of each row (pmc_perf only; else 0;
 *                 a pmc_perf without rows, beside per-kernel totals:
 *                 u64 names and each of its kernel names\0 in id order)
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
  if (kc >= 0 && t->n_rows == 0) {
    /* Per-kernel totals: the names their Kernel_ID columns point to. */
    mix_u64(h, t->n_strings);
    for (size_t i = 0; i < t->n_strings; i++) mix_str(h, t->strings[i]);
    return;
  }
  mix_u64(h, kc >= 0 ? t->n_rows : 0);
  for (size_t r = 0; kc >= 0 && r < t->n_rows; r++) mix_str(h, lm_table_text(t, (size_t)kc, r));
}

static lm_status mix_table(hasher *h, const lm_table *t, lm_diag *diag) {
  size_t k = 0, *order = mixed_columns(t, &k);
  if (!order) return lm_oom(diag, t->path);
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
    return lm_oom(diag, NULL);
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
  if (!levels) return lm_oom(diag, NULL);
  /* A workload read from another tool's files has no levels (NULL). */
  if (w->n_levels) {
    memcpy(levels, w->levels, w->n_levels * sizeof *levels);
    qsort(levels, w->n_levels, sizeof *levels, cmp_tables);
  }
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

/* ----------------------------------------------- the fingerprinted write */

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
  else j->st = lm_db_write_tables(j->sql, j->wid, j->w, j->o, &j->diag);
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

/* lm_db_write_tables with o, computing w's fingerprint (into fp) from the
 * pmc columns as they are written, so they are read from the file once. */
lm_status lm_store_write_fingerprinted(lm_sql *sql, int64_t wid, const lm_workload *w, const lm_db_write_opts *o,
                                       char fp[33], lm_diag *diag) {
  hasher h;
  lm_status st = mix_head(&h, w, diag);
  if (st != LM_OK) return st;
  size_t k = 0, *order = mixed_columns(w->pmc, &k);
  if (!order) {
    hasher_fini(&h);
    return lm_oom(diag, NULL);
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
    st = lm_db_write_tables(sql, wid, w, &with, diag);
  }
  free(order);
  if (st == LM_OK) {
    mix_table_tail(&h, w->pmc);
    st = mix_rest(&h, w, fp, diag);
  }
  hasher_fini(&h);
  return st;
}
