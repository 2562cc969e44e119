/*
 * kept.c - the analyses a store keeps. A finished analysis of a workload
 * is stored in analysis_cache under a key of lumen's version, the
 * catalog's architecture and digest and every option, so that a repeated
 * view is one row read back instead of an evaluation over the columns, and
 * a new lumen or changed definitions never meet an old result.
 *
 * An import keeps the default view of its workload (lm_store_precompute),
 * so the first look at it costs no evaluation either. A kept analysis is
 * checked against its workload when read back: one that fails is
 * recomputed from the stored columns, removed where the store is writable,
 * and said once per process. LUMEN_STORE_CACHE=off keeps and reads nothing.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <xxhash.h>

#include "store/store_private.h"
#include "sql/sql.h"
#include "db/db.h"

#ifndef LUMEN_VERSION
#define LUMEN_VERSION "0.0.0"
#endif

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
  const char *norm = lm_norm_kind_name(o->norm), *unit = lm_time_unit_name(o->time_unit);
  lm_buf_printf(&b, "|norm=%s|t=%s|s=%d|c=%d|m=%d|w=%d", norm ? norm : "", unit ? unit : "", o->stats_only,
                o->corrected, o->clock_measured, o->weight_time);
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
    if (!*data)
      st = lm_oom(diag, NULL);
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

const lm_catalog *lm_store_totals_catalog(void) {
  for (const char *const *a = lm_metrics_builtin_list(); *a; a++) {
    const lm_catalog *cat = lm_metrics_builtin(*a);
    if (cat && strcmp(cat->vendor, "amd") == 0) return cat;
  }
  return NULL;
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
  /* Per-kernel totals (the only workloads without dispatches) need no
   * architecture, and their analysis is never kept: it reads a few rows. */
  int totals = e.complete && e.n_dispatches == 0;
  const lm_catalog *cat = override      ? override
                          : !e.arch[0]  ? lm_store_totals_catalog()
                          : e.compat[0] ? lm_metrics_builtin_compat(e.arch, e.compat)
                                        : lm_metrics_builtin(e.arch);
  if (!cat)
    return lm_fail_at(diag, LM_EARCH, lm_store_where(s), 0, "gpu_arch",
                      "workload '%s' is %s, which lumen has no definitions for", name, e.arch);
  lm_diag ignored;
  if (e.complete && !totals && lm_store_kept(s, name, cat, o, workload, out, &ignored) == LM_OK) {
    *cached = 1;
    return LM_OK;
  }
  if ((st = lm_store_load_for(s, name, cat, workload, diag)) != LM_OK) return st;
  if ((st = lm_analyze_run(*workload, cat, o, out, diag)) != LM_OK) return st;
  if (!totals) keep(s, name, cat, o, *out);
  return LM_OK;
}

/* The default view (every panel, no filter) of a new workload, kept so
 * that the first look at it costs no evaluation. From the folder's own
 * tables when given (w, still open: the columns it reads come from the
 * CSV files in blocks, which is cheaper than loading and decoding them
 * from the store; the stored columns are the same numbers, so is the
 * view), else from the columns just stored (lm_store_analyze). None for
 * per-kernel totals, whose analysis is never kept. */
void lm_store_precompute(lm_store *s, const char *name, const lm_workload *w) {
  if (!cache_on() || lm_workload_totals(w)) return;
  lm_analyze_opts o;
  memset(&o, 0, sizeof o);
  lm_analysis *an = NULL;
  lm_diag ignored;
  const char *layout = w ? lm_sysinfo_compat(&w->sysinfo) : NULL;
  const lm_catalog *cat = !w                       ? NULL
                          : !(w->arch && *w->arch) ? lm_store_totals_catalog()
                          : layout                 ? lm_metrics_builtin_compat(w->arch, layout)
                                                   : lm_metrics_builtin(w->arch);
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
