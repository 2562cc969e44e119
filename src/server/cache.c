/*
 * cache.c - what `lumen serve` keeps between requests: loaded workloads
 * (at most MAX_LOADED, least recently used out, each loaded once however
 * many requests ask for it at the same time), answers by their canonical
 * selection, and the bound on evaluations that run at once. Memory is
 * bounded by the cache limit (--cache-mb): answers take at most a quarter
 * of it, loaded workloads the rest, counted by the bytes their tables
 * hold; a workload larger than its share is served and then dropped as
 * soon as no request holds it. One lock guards all of it: every critical section is a
 * table scan of a few hundred entries, never an evaluation.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "server/internal.h"
#include "store/store.h"
#include "load/load.h"

#define MAX_LOADED 4
#define MAX_ANSWERS 512
#define DEFAULT_CACHE_BYTES ((size_t)2048 << 20)

typedef struct answer {
  char *key;
  char *body;
  size_t len;
  unsigned long used;
} answer;

lm_server_state lm_server_g;

static struct {
  pthread_mutex_t lock;
  pthread_cond_t changed;
  lm_server_loaded loaded[MAX_LOADED];
  answer answers[MAX_ANSWERS];
  size_t answer_bytes, answer_limit;
  size_t workload_limit; /* bytes loaded workloads may hold together */
  unsigned long clock;
  int evaluations, max_evaluations;
} C = {.lock = PTHREAD_MUTEX_INITIALIZER, .changed = PTHREAD_COND_INITIALIZER};

void lm_server_cache_init(int max_evaluations, size_t cache_bytes) {
  C.max_evaluations = max_evaluations > 0 ? max_evaluations : 2;
  if (!cache_bytes) cache_bytes = DEFAULT_CACHE_BYTES;
  C.answer_limit = cache_bytes / 4;
  C.workload_limit = cache_bytes - C.answer_limit;
}

static size_t table_bytes(const lm_table *t) {
  return t ? t->block_bytes + lm_arena_bytes(t->arena) : 0;
}

/* What a loaded workload holds: its tables' value blocks and arenas. */
static size_t workload_bytes(const lm_workload *w) {
  size_t n = table_bytes(w->pmc) + table_bytes(w->sysinfo_table) + table_bytes(w->roofline);
  for (size_t i = 0; i < w->n_levels; i++) n += table_bytes(w->levels[i]);
  return n + (w->arena ? lm_arena_bytes(w->arena) : 0);
}

/* Take out, least recently used first, workloads nobody holds until the
 * loaded ones fit the limit (keep is never taken). Called with the lock
 * held; returns one workload to free after unlocking, or NULL. */
static lm_workload *over_limit(const lm_server_loaded *keep) {
  size_t total = 0;
  for (int i = 0; i < MAX_LOADED; i++) total += C.loaded[i].w ? C.loaded[i].bytes : 0;
  if (total <= C.workload_limit) return NULL;
  lm_server_loaded *victim = NULL;
  for (int i = 0; i < MAX_LOADED; i++) {
    lm_server_loaded *l = &C.loaded[i];
    if (l == keep || !l->w || l->refs || l->loading) continue;
    if (!victim || l->used < victim->used) victim = l;
  }
  if (!victim) return NULL;
  lm_workload *w = victim->w;
  memset(victim, 0, sizeof *victim);
  return w;
}

void lm_server_cache_fini(void) {
  for (int i = 0; i < MAX_LOADED; i++) lm_workload_free(C.loaded[i].w);
  for (int i = 0; i < MAX_ANSWERS; i++) {
    lm_free(C.answers[i].key);
    lm_free(C.answers[i].body);
  }
  memset(C.loaded, 0, sizeof C.loaded);
  memset(C.answers, 0, sizeof C.answers);
  C.answer_bytes = 0;
}

/* ----------------------------------------------------------- workloads */

int lm_server_is_store_id(const char *id) { return strncmp(id, "db:", 3) == 0; }

static const lm_server_folder *find_folder(const char *id) {
  for (size_t i = 0; i < lm_server_g.n_folders; i++)
    if (strcmp(lm_server_g.folders[i].id, id) == 0) return &lm_server_g.folders[i];
  return NULL;
}

static lm_status load_workload(const char *id, lm_workload **out, lm_diag *diag) {
  if (lm_server_is_store_id(id)) {
    if (!lm_server_g.opts->store) return lm_fail_at(diag, LM_ENOTFOUND, NULL, 0, "w", "no workload '%s'", id);
    lm_store *st = NULL;
    lm_status s = lm_store_open(lm_server_g.opts->store, 0, &st, diag);
    if (s == LM_OK) s = lm_store_load(st, id + 3, out, diag);
    lm_store_close(st);
    return s;
  }
  const lm_server_folder *f = find_folder(id);
  if (!f) return lm_fail_at(diag, LM_ENOTFOUND, NULL, 0, "w", "no workload '%.64s'", id);
  return lm_workload_read(f->path, out, diag);
}

/* Borrow a loaded workload (loading it once, whoever asks first). */
lm_status lm_server_acquire(const char *id, lm_server_loaded **out, lm_diag *diag) {
  pthread_mutex_lock(&C.lock);
  for (;;) {
    lm_server_loaded *hit = NULL;
    for (int i = 0; i < MAX_LOADED; i++)
      if (C.loaded[i].id[0] && strcmp(C.loaded[i].id, id) == 0) hit = &C.loaded[i];
    if (hit && hit->loading) {
      pthread_cond_wait(&C.changed, &C.lock);
      continue;
    }
    if (hit) {
      hit->refs++;
      hit->used = ++C.clock;
      pthread_mutex_unlock(&C.lock);
      *out = hit;
      return LM_OK;
    }
    /* A free slot, or the least recently used one nobody holds. */
    lm_server_loaded *slot = NULL;
    for (int i = 0; i < MAX_LOADED; i++) {
      lm_server_loaded *l = &C.loaded[i];
      if (l->loading || l->refs) continue;
      if (!slot || !l->id[0] || (slot->id[0] && l->used < slot->used)) slot = l;
    }
    if (!slot) {
      pthread_cond_wait(&C.changed, &C.lock);
      continue;
    }
    lm_workload *old = slot->w;
    slot->w = NULL;
    snprintf(slot->id, sizeof slot->id, "%s", id);
    slot->loading = 1;
    pthread_mutex_unlock(&C.lock);
    lm_workload_free(old);
    lm_workload *w = NULL;
    lm_status st = load_workload(id, &w, diag);
    pthread_mutex_lock(&C.lock);
    slot->loading = 0;
    if (st != LM_OK) {
      slot->id[0] = '\0';
      pthread_cond_broadcast(&C.changed);
      pthread_mutex_unlock(&C.lock);
      return st;
    }
    slot->w = w;
    slot->bytes = workload_bytes(w);
    slot->refs = 1;
    slot->used = ++C.clock;
    lm_workload *drop;
    while ((drop = over_limit(slot))) {
      pthread_mutex_unlock(&C.lock);
      lm_workload_free(drop);
      pthread_mutex_lock(&C.lock);
    }
    pthread_cond_broadcast(&C.changed);
    pthread_mutex_unlock(&C.lock);
    *out = slot;
    return LM_OK;
  }
}

void lm_server_release(lm_server_loaded *l) {
  if (!l) return;
  pthread_mutex_lock(&C.lock);
  l->refs--;
  /* A workload over the limit on its own goes when its last user does. */
  lm_workload *drop = over_limit(NULL);
  pthread_cond_broadcast(&C.changed);
  pthread_mutex_unlock(&C.lock);
  lm_workload_free(drop);
}

/* At most max_evaluations heavy requests at once; others wait up to 60 s. */
int lm_server_begin_evaluation(void) {
  pthread_mutex_lock(&C.lock);
  struct timespec until;
  clock_gettime(CLOCK_REALTIME, &until);
  until.tv_sec += 60;
  while (C.evaluations >= C.max_evaluations)
    if (pthread_cond_timedwait(&C.changed, &C.lock, &until) == ETIMEDOUT) {
      pthread_mutex_unlock(&C.lock);
      return 0;
    }
  C.evaluations++;
  pthread_mutex_unlock(&C.lock);
  return 1;
}

void lm_server_end_evaluation(void) {
  pthread_mutex_lock(&C.lock);
  C.evaluations--;
  pthread_cond_broadcast(&C.changed);
  pthread_mutex_unlock(&C.lock);
}

/* ------------------------------------------------------------- answers */

char *lm_server_cached_answer(const char *key, size_t *len) {
  char *copy = NULL;
  pthread_mutex_lock(&C.lock);
  for (int i = 0; i < MAX_ANSWERS; i++)
    if (C.answers[i].key && strcmp(C.answers[i].key, key) == 0) {
      C.answers[i].used = ++C.clock;
      copy = lm_malloc(C.answers[i].len + 1);
      if (copy) {
        memcpy(copy, C.answers[i].body, C.answers[i].len + 1);
        *len = C.answers[i].len;
      }
      break;
    }
  pthread_mutex_unlock(&C.lock);
  return copy;
}

void lm_server_keep_answer(const char *key, const char *body, size_t len) {
  if (len > C.answer_limit / 4) return;
  char *k = lm_strdup(key), *b = lm_malloc(len + 1);
  if (!k || !b) {
    lm_free(k);
    lm_free(b);
    return;
  }
  memcpy(b, body, len);
  b[len] = '\0';
  pthread_mutex_lock(&C.lock);
  for (;;) {
    int empty = -1, oldest = -1;
    for (int i = 0; i < MAX_ANSWERS; i++) {
      if (!C.answers[i].key) {
        if (empty < 0) empty = i;
      } else if (oldest < 0 || C.answers[i].used < C.answers[oldest].used) {
        oldest = i;
      }
    }
    if (empty >= 0 && C.answer_bytes + len <= C.answer_limit) {
      C.answers[empty] = (answer){k, b, len, ++C.clock};
      C.answer_bytes += len;
      break;
    }
    if (oldest < 0) {
      lm_free(k);
      lm_free(b);
      break;
    }
    C.answer_bytes -= C.answers[oldest].len;
    lm_free(C.answers[oldest].key);
    lm_free(C.answers[oldest].body);
    memset(&C.answers[oldest], 0, sizeof C.answers[oldest]);
  }
  pthread_mutex_unlock(&C.lock);
}

/* Answer from the cache when an answer for key is kept: 1 and *ok set. */
int lm_server_send_cached(struct MHD_Connection *c, const char *key, enum MHD_Result *ok) {
  size_t len = 0;
  char *hit = lm_server_cached_answer(key, &len);
  if (!hit) return 0;
  *ok = lm_server_send(c, MHD_HTTP_OK, "application/json", hit, len, 1, 0);
  lm_free(hit);
  return 1;
}

/* -------------------------------------------------------------- queries */

void lm_server_opts_from_query(const lm_query *q, lm_analyze_opts *o) {
  memset(o, 0, sizeof *o);
  o->kernels = q->kernels;
  o->n_kernels = q->n_kernels;
  o->dispatch = &q->dispatch;
  o->gpu = &q->gpu;
  o->instance = &q->instance;
  o->rank = &q->rank;
  o->blocks = q->blocks;
  o->n_blocks = q->n_blocks;
  o->norm = q->norm;
  o->regions = q->regions;
  o->n_regions = q->n_regions;
  o->corrected = q->corrected;
  o->clock_measured = q->clock == LM_CLOCK_MEASURED;
  o->weight_time = q->weight == LM_WEIGHT_TIME;
  o->threads = 1;
  o->check = lm_server_request_check;
}

/* The built-in catalog of arch in reference version compat (NULL: the
 * default one). */
const lm_catalog *lm_server_catalog_of(const char *arch, const char *compat, const char *layout) {
  if (!arch || !*arch) return NULL;
  if (!compat) compat = layout;
  return compat ? lm_metrics_builtin_compat(arch, compat) : lm_metrics_builtin(arch);
}

/* One analysis: from the store's kept analyses when possible, else
 * evaluated on the loaded workload. *held is the workload to release. */
lm_status lm_server_analysis_of(const char *id, const char *compat, const lm_analyze_opts *o,
                             lm_analysis **out, lm_server_loaded **held, lm_workload **info, lm_diag *diag) {
  *out = NULL;
  *held = NULL;
  *info = NULL;
  if (lm_server_is_store_id(id) && lm_server_g.opts->store) {
    lm_store *st = NULL;
    lm_store_entry e;
    if (lm_store_open(lm_server_g.opts->store, 0, &st, diag) != LM_OK) return diag->status;
    lm_status s = lm_store_get(st, id + 3, &e, diag);
    const lm_catalog *cat = s == LM_OK ? lm_server_catalog_of(e.arch, compat, e.compat[0] ? e.compat : NULL) : NULL;
    lm_diag ignored;
    if (cat && lm_store_kept(st, id + 3, cat, o, info, out, &ignored) == LM_OK) {
      lm_store_close(st);
      return LM_OK;
    }
    lm_store_close(st);
    if (s != LM_OK) return s;
  }
  lm_status s = lm_server_acquire(id, held, diag);
  if (s != LM_OK) return s;
  const lm_workload *w = (*held)->w;
  /* Per-kernel totals or timestamps of no known architecture: any
   * definitions lay out their top-kernels table and dispatch list. */
  const lm_catalog *cat = !(w->arch && *w->arch)
                              ? lm_store_totals_catalog()
                              : lm_server_catalog_of(w->arch, compat, lm_sysinfo_compat(&w->sysinfo));
  if (!cat)
    return lm_fail_at(diag, LM_EARCH, NULL, 0, compat ? "compat" : "w", "%s has no metric definitions%s%s",
                      w->arch ? w->arch : "(no architecture)", compat ? " in the semantics of rocprofiler-compute " : "",
                      compat ? compat : "");
  return lm_analyze_run((*held)->w, cat, o, out, diag);
}
