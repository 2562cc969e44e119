/*
 * server.c - `lumen serve`: HTTP (libmicrohttpd), the JSON API and the
 * embedded GUI.
 *
 * Design for hostile or merely careless clients: one thread per
 * connection (a long evaluation or a slow reader holds only its own), a
 * connection limit overall and per address, a header/URI memory limit, a
 * timeout for idle connections, no request bodies, a per-client request
 * rate limit for non-loopback clients, and a bound on how many
 * evaluations run at once. Everything is read-only: workloads are named
 * by ids the server hands out ("f0" for the first -w folder, "db:NAME" for
 * a store entry), never by paths, and static files come from a fixed
 * table. Answers are cached by their canonical selection, and loaded
 * workloads are kept (least recently used first out), so a GUI that asks
 * again is answered from memory.
 */
#include <arpa/inet.h>
#include <cjson/cJSON.h>
#include <errno.h>
#include <math.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

#include "report/report.h"
#include "server/server.h"
#include "server/internal.h"
#include "store/store.h"

#define MAX_LOADED 4
#define MAX_ANSWERS 512
#define MAX_ANSWER_BYTES ((size_t)256 << 20)
#define MAX_CLIENTS 1024
/* Request headers lumen reads (name and value bytes together); larger
 * ones are a 431. MHD's per-connection memory is set above this, so that
 * such requests still reach the handler and get a JSON answer. */
#define MAX_HEADER_BYTES 16384
#define CONNECTION_MEMORY ((size_t)640 << 10)

typedef struct folder {
  char id[32];
  char path[4096];
  char name[4200];
} folder;

typedef struct loaded {
  char id[600];
  lm_workload *w;
  unsigned long used;
  int refs;
  int loading;
} loaded;

typedef struct answer {
  char *key;
  char *body;
  size_t len;
  unsigned long used;
} answer;

typedef struct client {
  struct in6_addr addr;
  double tokens;
  double last;
} client;

static struct {
  const lm_server_opts *o;
  folder *folders;
  size_t n_folders;
  pthread_mutex_t lock;
  pthread_cond_t changed;
  loaded loaded[MAX_LOADED];
  answer answers[MAX_ANSWERS];
  size_t answer_bytes;
  unsigned long clock;
  client clients[MAX_CLIENTS];
  size_t n_clients;
  int evaluations, max_evaluations;
  int loopback; /* bound to a loopback address: the Host header is checked */
} S = {.lock = PTHREAD_MUTEX_INITIALIZER, .changed = PTHREAD_COND_INITIALIZER};

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* ------------------------------------------------------------ responses */

/* Queue a response with the headers every answer carries; header (or
 * NULL, e.g. "Set-Cookie") is added with value. */
static enum MHD_Result send_body_header(struct MHD_Connection *c, unsigned status, const char *type,
                                        const void *body, size_t len, int copy, int cacheable, const char *header,
                                        const char *value) {
  struct MHD_Response *r = MHD_create_response_from_buffer(
      len, (void *)body, copy ? MHD_RESPMEM_MUST_COPY : MHD_RESPMEM_PERSISTENT);
  if (!r) return MHD_NO;
  MHD_add_response_header(r, "Content-Type", type);
  MHD_add_response_header(r, "X-Content-Type-Options", "nosniff");
  MHD_add_response_header(r, "Referrer-Policy", "no-referrer");
  MHD_add_response_header(r, "X-Frame-Options", "DENY");
  MHD_add_response_header(r, "Content-Security-Policy",
                          "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; "
                          "connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'");
  MHD_add_response_header(r, "Cache-Control", cacheable ? "private, max-age=300" : "no-store");
  if (header) MHD_add_response_header(r, header, value);
  enum MHD_Result ok = MHD_queue_response(c, status, r);
  MHD_destroy_response(r);
  return ok;
}

static enum MHD_Result send_body(struct MHD_Connection *c, unsigned status, const char *type, const void *body,
                                 size_t len, int copy, int cacheable) {
  return send_body_header(c, status, type, body, len, copy, cacheable, NULL, NULL);
}

/* cJSON's text of o, repaired to valid UTF-8 (names come from the data
 * byte for byte); free with free(). NULL when out of memory. */
static char *print_json(const cJSON *o) {
  char *text = cJSON_PrintUnformatted(o);
  if (!text) return NULL;
  char *fixed = lm_json_utf8_fix(text);
  if (!fixed) return text;
  cJSON_free(text);
  return fixed;
}

static enum MHD_Result send_error(struct MHD_Connection *c, unsigned status, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

/* An error answer: {"error": message, "status": code}, with header (or
 * NULL) set to value. */
static enum MHD_Result send_error_header(struct MHD_Connection *c, unsigned status, const char *header,
                                         const char *value, const char *msg) {
  cJSON *o = cJSON_CreateObject();
  cJSON_AddStringToObject(o, "error", msg);
  cJSON_AddNumberToObject(o, "status", status);
  char *text = print_json(o);
  cJSON_Delete(o);
  enum MHD_Result ok = send_body_header(c, status, "application/json", text ? text : "{}", text ? strlen(text) : 2,
                                        1, 0, header, value);
  free(text);
  return ok;
}

static enum MHD_Result send_error(struct MHD_Connection *c, unsigned status, const char *fmt, ...) {
  char msg[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  return send_error_header(c, status, NULL, NULL, msg);
}

static enum MHD_Result send_json(struct MHD_Connection *c, cJSON *o) {
  char *text = print_json(o);
  if (!text) return send_error(c, MHD_HTTP_INTERNAL_SERVER_ERROR, "out of memory");
  enum MHD_Result ok = send_body(c, MHD_HTTP_OK, "application/json", text, strlen(text), 1, 0);
  free(text);
  return ok;
}

static unsigned status_of(lm_status st) {
  switch (st) {
  case LM_ENOTFOUND: return MHD_HTTP_NOT_FOUND;
  case LM_EINVAL:
  case LM_EPARSE:
  case LM_EDATA:
  case LM_EARCH: return MHD_HTTP_BAD_REQUEST;
  case LM_ELIMIT: return MHD_HTTP_URI_TOO_LONG;
  case LM_ENOMEM: return MHD_HTTP_SERVICE_UNAVAILABLE;
  default: return MHD_HTTP_INTERNAL_SERVER_ERROR;
  }
}

static enum MHD_Result send_diag(struct MHD_Connection *c, const lm_diag *d) {
  char line[2048];
  /* The message names the problem, never a file of the server. */
  lm_diag copy = *d;
  copy.file[0] = '\0';
  lm_diag_format(&copy, line, sizeof line);
  return send_error(c, status_of(d->status), "%s", line);
}

/* ----------------------------------------------------------- workloads */

static int is_store_id(const char *id) { return strncmp(id, "db:", 3) == 0; }

static const folder *find_folder(const char *id) {
  for (size_t i = 0; i < S.n_folders; i++)
    if (strcmp(S.folders[i].id, id) == 0) return &S.folders[i];
  return NULL;
}

static lm_status load_workload(const char *id, lm_workload **out, lm_diag *diag) {
  if (is_store_id(id)) {
    if (!S.o->store) return lm_diag_set(diag, LM_ENOTFOUND, NULL, 0, 0, "w", "no workload '%s'", id);
    lm_store *st = NULL;
    lm_status s = lm_store_open(S.o->store, 0, &st, diag);
    if (s == LM_OK) s = lm_store_load(st, id + 3, out, diag);
    lm_store_close(st);
    return s;
  }
  const folder *f = find_folder(id);
  if (!f) return lm_diag_set(diag, LM_ENOTFOUND, NULL, 0, 0, "w", "no workload '%.64s'", id);
  return lm_workload_read(f->path, out, diag);
}

/* Borrow a loaded workload (loading it once, whoever asks first). */
static lm_status acquire(const char *id, loaded **out, lm_diag *diag) {
  pthread_mutex_lock(&S.lock);
  for (;;) {
    loaded *hit = NULL;
    for (int i = 0; i < MAX_LOADED; i++)
      if (S.loaded[i].id[0] && strcmp(S.loaded[i].id, id) == 0) hit = &S.loaded[i];
    if (hit && hit->loading) {
      pthread_cond_wait(&S.changed, &S.lock);
      continue;
    }
    if (hit) {
      hit->refs++;
      hit->used = ++S.clock;
      pthread_mutex_unlock(&S.lock);
      *out = hit;
      return LM_OK;
    }
    /* A free slot, or the least recently used one nobody holds. */
    loaded *slot = NULL;
    for (int i = 0; i < MAX_LOADED; i++) {
      loaded *l = &S.loaded[i];
      if (l->loading || l->refs) continue;
      if (!slot || !l->id[0] || (slot->id[0] && l->used < slot->used)) slot = l;
    }
    if (!slot) {
      pthread_cond_wait(&S.changed, &S.lock);
      continue;
    }
    lm_workload *old = slot->w;
    slot->w = NULL;
    snprintf(slot->id, sizeof slot->id, "%s", id);
    slot->loading = 1;
    pthread_mutex_unlock(&S.lock);
    lm_workload_free(old);
    lm_workload *w = NULL;
    lm_status st = load_workload(id, &w, diag);
    pthread_mutex_lock(&S.lock);
    slot->loading = 0;
    if (st != LM_OK) {
      slot->id[0] = '\0';
      pthread_cond_broadcast(&S.changed);
      pthread_mutex_unlock(&S.lock);
      return st;
    }
    slot->w = w;
    slot->refs = 1;
    slot->used = ++S.clock;
    pthread_cond_broadcast(&S.changed);
    pthread_mutex_unlock(&S.lock);
    *out = slot;
    return LM_OK;
  }
}

static void release(loaded *l) {
  if (!l) return;
  pthread_mutex_lock(&S.lock);
  l->refs--;
  pthread_cond_broadcast(&S.changed);
  pthread_mutex_unlock(&S.lock);
}

/* At most max_evaluations heavy requests at once; others wait up to 60 s. */
static int begin_evaluation(void) {
  pthread_mutex_lock(&S.lock);
  struct timespec until;
  clock_gettime(CLOCK_REALTIME, &until);
  until.tv_sec += 60;
  while (S.evaluations >= S.max_evaluations)
    if (pthread_cond_timedwait(&S.changed, &S.lock, &until) == ETIMEDOUT) {
      pthread_mutex_unlock(&S.lock);
      return 0;
    }
  S.evaluations++;
  pthread_mutex_unlock(&S.lock);
  return 1;
}

static void end_evaluation(void) {
  pthread_mutex_lock(&S.lock);
  S.evaluations--;
  pthread_cond_broadcast(&S.changed);
  pthread_mutex_unlock(&S.lock);
}

/* ------------------------------------------------------------- answers */

static char *cached_answer(const char *key, size_t *len) {
  char *copy = NULL;
  pthread_mutex_lock(&S.lock);
  for (int i = 0; i < MAX_ANSWERS; i++)
    if (S.answers[i].key && strcmp(S.answers[i].key, key) == 0) {
      S.answers[i].used = ++S.clock;
      copy = malloc(S.answers[i].len + 1);
      if (copy) {
        memcpy(copy, S.answers[i].body, S.answers[i].len + 1);
        *len = S.answers[i].len;
      }
      break;
    }
  pthread_mutex_unlock(&S.lock);
  return copy;
}

static void keep_answer(const char *key, const char *body, size_t len) {
  if (len > MAX_ANSWER_BYTES / 4) return;
  char *k = strdup(key), *b = malloc(len + 1);
  if (!k || !b) {
    free(k);
    free(b);
    return;
  }
  memcpy(b, body, len);
  b[len] = '\0';
  pthread_mutex_lock(&S.lock);
  for (;;) {
    int empty = -1, oldest = -1;
    for (int i = 0; i < MAX_ANSWERS; i++) {
      if (!S.answers[i].key) {
        if (empty < 0) empty = i;
      } else if (oldest < 0 || S.answers[i].used < S.answers[oldest].used) {
        oldest = i;
      }
    }
    if (empty >= 0 && S.answer_bytes + len <= MAX_ANSWER_BYTES) {
      S.answers[empty] = (answer){k, b, len, ++S.clock};
      S.answer_bytes += len;
      break;
    }
    if (oldest < 0) {
      free(k);
      free(b);
      break;
    }
    S.answer_bytes -= S.answers[oldest].len;
    free(S.answers[oldest].key);
    free(S.answers[oldest].body);
    memset(&S.answers[oldest], 0, sizeof S.answers[oldest]);
  }
  pthread_mutex_unlock(&S.lock);
}

/* -------------------------------------------------------------- queries */

static void opts_from_query(const lm_query *q, lm_analyze_opts *o) {
  memset(o, 0, sizeof *o);
  o->kernels = q->kernels;
  o->n_kernels = q->n_kernels;
  o->dispatch = &q->dispatch;
  o->gpu = &q->gpu;
  o->instance = &q->instance;
  o->blocks = q->blocks;
  o->n_blocks = q->n_blocks;
  o->norm = q->norm;
  o->regions = q->regions;
  o->n_regions = q->n_regions;
  o->corrected = q->corrected;
  o->clock_measured = q->clock && strcmp(q->clock, "measured") == 0;
  o->weight_time = q->weight && strcmp(q->weight, "time") == 0;
  o->threads = 1;
}

/* The built-in catalog of arch in reference version compat (NULL: the
 * default one). */
static const lm_catalog *catalog_of(const char *arch, const char *compat) {
  return compat ? lm_metrics_builtin_compat(arch, compat) : lm_metrics_builtin(arch);
}

/* One analysis: from the store's kept analyses when possible, else
 * evaluated on the loaded workload. *held is the workload to release. */
static lm_status analysis_of(const char *id, const char *compat, const lm_analyze_opts *o,
                             lm_analysis **out, loaded **held, lm_workload **info, lm_diag *diag) {
  *out = NULL;
  *held = NULL;
  *info = NULL;
  if (is_store_id(id) && S.o->store) {
    lm_store *st = NULL;
    lm_store_entry e;
    if (lm_store_open(S.o->store, 0, &st, diag) != LM_OK) return diag->status;
    lm_status s = lm_store_get(st, id + 3, &e, diag);
    const lm_catalog *cat = s == LM_OK ? catalog_of(e.arch, compat) : NULL;
    lm_diag ignored;
    if (cat && lm_store_kept(st, id + 3, cat, o, info, out, &ignored) == LM_OK) {
      lm_store_close(st);
      return LM_OK;
    }
    lm_store_close(st);
    if (s != LM_OK) return s;
  }
  lm_status s = acquire(id, held, diag);
  if (s != LM_OK) return s;
  const lm_catalog *cat = catalog_of((*held)->w->arch, compat);
  if (!cat)
    return lm_diag_set(diag, LM_EARCH, NULL, 0, 0, compat ? "compat" : "w",
                       "%s has no metric definitions%s%s", (*held)->w->arch,
                       compat ? " in the semantics of rocprofiler-compute " : "", compat ? compat : "");
  return lm_analyze_run((*held)->w, cat, o, out, diag);
}

/* ------------------------------------------------------------ endpoints */

/* The list is read again at most every two seconds: imports show up
 * quickly, and a busy GUI does not query the store on every call. */
static char *workloads_text;
static double workloads_at;

static enum MHD_Result api_workloads(struct MHD_Connection *c) {
  pthread_mutex_lock(&S.lock);
  char *hit = workloads_text && now_s() - workloads_at < 2 ? strdup(workloads_text) : NULL;
  pthread_mutex_unlock(&S.lock);
  if (hit) {
    enum MHD_Result ok = send_body(c, MHD_HTTP_OK, "application/json", hit, strlen(hit), 1, 0);
    free(hit);
    return ok;
  }
  cJSON *o = cJSON_CreateObject(), *list = cJSON_AddArrayToObject(o, "workloads");
  for (size_t i = 0; i < S.n_folders; i++) {
    cJSON *e = cJSON_CreateObject();
    cJSON_AddStringToObject(e, "id", S.folders[i].id);
    cJSON_AddStringToObject(e, "name", S.folders[i].name);
    cJSON_AddStringToObject(e, "kind", "folder");
    cJSON_AddItemToArray(list, e);
  }
  if (S.o->store) {
    lm_store *st = NULL;
    lm_store_entry *entries = NULL;
    size_t n = 0;
    lm_diag d;
    if (lm_store_open(S.o->store, 0, &st, &d) == LM_OK && lm_store_list(st, &entries, &n, &d) == LM_OK) {
      for (size_t i = 0; i < n; i++) {
        if (!entries[i].complete) continue;
        cJSON *e = cJSON_CreateObject();
        char id[300];
        snprintf(id, sizeof id, "db:%s", entries[i].name);
        cJSON_AddStringToObject(e, "id", id);
        cJSON_AddStringToObject(e, "name", entries[i].name);
        cJSON_AddStringToObject(e, "kind", "store");
        cJSON_AddStringToObject(e, "team", entries[i].team);
        cJSON_AddStringToObject(e, "arch", entries[i].arch);
        cJSON_AddStringToObject(e, "gpu_model", entries[i].gpu_model);
        cJSON_AddNumberToObject(e, "dispatches", (double)entries[i].n_dispatches);
        cJSON_AddItemToArray(list, e);
      }
    } else {
      char line[1024];
      lm_diag copy = d;
      copy.file[0] = '\0';
      cJSON_AddStringToObject(o, "store_error", lm_diag_format(&copy, line, sizeof line));
    }
    free(entries);
    lm_store_close(st);
  }
  char *text = print_json(o);
  cJSON_Delete(o);
  if (!text) return send_error(c, MHD_HTTP_INTERNAL_SERVER_ERROR, "out of memory");
  pthread_mutex_lock(&S.lock);
  free(workloads_text);
  workloads_text = strdup(text);
  workloads_at = now_s();
  pthread_mutex_unlock(&S.lock);
  enum MHD_Result ok = send_body(c, MHD_HTTP_OK, "application/json", text, strlen(text), 1, 0);
  free(text);
  return ok;
}

static enum MHD_Result api_info(struct MHD_Connection *c, const lm_query *q) {
  if (!q->w) return send_error(c, MHD_HTTP_BAD_REQUEST, "w: which workload?");
  if (!begin_evaluation()) return send_error(c, MHD_HTTP_SERVICE_UNAVAILABLE, "busy; try again");
  loaded *l = NULL;
  lm_diag d;
  lm_status st = acquire(q->w, &l, &d);
  end_evaluation();
  if (st != LM_OK) return send_diag(c, &d);
  const lm_workload *w = l->w;
  cJSON *o = cJSON_CreateObject();
  cJSON_AddStringToObject(o, "id", q->w);
  cJSON_AddStringToObject(o, "arch", w->arch ? w->arch : "");
  if (w->simulated) cJSON_AddStringToObject(o, "simulated", w->simulated);
  cJSON_AddNumberToObject(o, "dispatches", (double)w->pmc->n_rows);
  cJSON *si = cJSON_AddObjectToObject(o, "sysinfo");
  for (size_t i = 0; i < w->sysinfo.n_fields; i++)
    cJSON_AddStringToObject(si, w->sysinfo.names[i], w->sysinfo.texts[i] ? w->sysinfo.texts[i] : "");
  /* Kernels with their dispatch counts and total time, longest first. */
  long kc = lm_table_find(w->pmc, "Kernel_Name"), gc = lm_table_find(w->pmc, "GPU_ID"),
       ts = lm_table_find(w->pmc, "Start_Timestamp"), te = lm_table_find(w->pmc, "End_Timestamp");
  size_t nk = w->pmc->n_strings;
  double *total = calloc(nk + 1, sizeof *total);
  size_t *count = calloc(nk + 1, sizeof *count);
  cJSON *kernels = cJSON_AddArrayToObject(o, "kernels"), *gpus = cJSON_AddArrayToObject(o, "gpus");
  double seen_gpus[64];
  size_t n_gpus = 0;
  for (size_t r = 0; total && count && r < w->pmc->n_rows; r++) {
    int32_t k = kc >= 0 && w->pmc->cols[kc].text_ids ? w->pmc->cols[kc].text_ids[r] : -1;
    if (k >= 0) {
      count[k]++;
      if (ts >= 0 && te >= 0) total[k] += w->pmc->cols[te].values[r] - w->pmc->cols[ts].values[r];
    }
    double g = gc >= 0 ? w->pmc->cols[gc].values[r] : LM_NAN;
    int dup = isnan(g);
    for (size_t i = 0; i < n_gpus && !dup; i++) dup = seen_gpus[i] == g;
    if (!dup && n_gpus < 64) seen_gpus[n_gpus++] = g;
  }
  for (size_t done = 0; total && count && done < nk; done++) {
    size_t best = nk;
    for (size_t k = 0; k < nk; k++)
      if (count[k] && (best == nk || total[k] > total[best])) best = k;
    if (best == nk) break;
    cJSON *e = cJSON_CreateObject();
    cJSON_AddStringToObject(e, "name", w->pmc->strings[best]);
    cJSON_AddNumberToObject(e, "count", (double)count[best]);
    cJSON_AddNumberToObject(e, "total_ns", total[best]);
    cJSON_AddItemToArray(kernels, e);
    count[best] = 0;
  }
  for (size_t i = 0; i < n_gpus; i++) cJSON_AddItemToArray(gpus, cJSON_CreateNumber(seen_gpus[i]));
  cJSON *regions = cJSON_AddArrayToObject(o, "regions");
  for (size_t i = 0; i < w->n_regions; i++) cJSON_AddItemToArray(regions, cJSON_CreateString(w->region_names[i]));
  const lm_catalog *cat = w->arch ? lm_metrics_builtin(w->arch) : NULL;
  cJSON *norms = cJSON_AddArrayToObject(o, "norms");
  for (int32_t i = 0; cat && i < cat->n_norms; i++) cJSON_AddItemToArray(norms, cJSON_CreateString(cat->norms[i].name));
  cJSON_AddBoolToObject(o, "roofline", w->roofline != NULL);
  free(total);
  free(count);
  release(l);
  enum MHD_Result ok = send_json(c, o);
  cJSON_Delete(o);
  return ok;
}

/* Answer from the cache when an answer for key is kept: 1 and *ok set. */
static int send_cached(struct MHD_Connection *c, const char *key, enum MHD_Result *ok) {
  size_t len = 0;
  char *hit = cached_answer(key, &len);
  if (!hit) return 0;
  *ok = send_body(c, MHD_HTTP_OK, "application/json", hit, len, 1, 0);
  free(hit);
  return 1;
}

static enum MHD_Result api_analysis(struct MHD_Connection *c, const lm_query *q) {
  if (!q->w) return send_error(c, MHD_HTTP_BAD_REQUEST, "w: which workload?");
  char key[sizeof q->canonical + 16];
  snprintf(key, sizeof key, "analysis|%s", q->canonical);
  enum MHD_Result ok;
  if (send_cached(c, key, &ok)) return ok;
  if (!begin_evaluation()) return send_error(c, MHD_HTTP_SERVICE_UNAVAILABLE, "busy; try again");
  lm_analyze_opts o;
  opts_from_query(q, &o);
  lm_analysis *runs[2] = {NULL, NULL};
  loaded *held[2] = {NULL, NULL};
  lm_workload *info[2] = {NULL, NULL};
  lm_diag d;
  lm_status st = LM_OK;
  size_t n = 0;
  /* The baseline first, as on the command line: others compare with it. */
  const char *ids[2] = {q->base ? q->base : q->w, q->base ? q->w : NULL};
  for (int i = 0; i < 2 && ids[i] && st == LM_OK; i++, n++) st = analysis_of(ids[i], q->compat, &o, &runs[i], &held[i], &info[i], &d);
  lm_buf out = {0};
  if (st == LM_OK) {
    lm_report_opts ro = {2, 10, 0, 0, ids, NULL, 0};
    st = lm_report_json((const lm_analysis *const *)runs, n, &ro, &out);
    if (st != LM_OK) lm_diag_set(&d, st, NULL, 0, 0, NULL, "out of memory");
  }
  for (int i = 0; i < 2; i++) {
    lm_analysis_free(runs[i]);
    release(held[i]);
    lm_workload_free(info[i]);
  }
  end_evaluation();
  if (st != LM_OK) {
    lm_buf_fini(&out);
    return send_diag(c, &d);
  }
  keep_answer(key, lm_buf_cstr(&out), out.len);
  ok = send_body(c, MHD_HTTP_OK, "application/json", lm_buf_cstr(&out), out.len, 1, 0);
  lm_buf_fini(&out);
  return ok;
}

static void add_num(cJSON *o, const char *name, double v) {
  if (isnan(v) || isinf(v)) cJSON_AddNullToObject(o, name);
  else cJSON_AddNumberToObject(o, name, v);
}

/* The guided-analysis summary of one workload for the selection: the
 * "summary" object of `lumen analyze --summary --format json`. */
static enum MHD_Result api_summary(struct MHD_Connection *c, const lm_query *q) {
  if (!q->w) return send_error(c, MHD_HTTP_BAD_REQUEST, "w: which workload?");
  char key[sizeof q->canonical + 16];
  snprintf(key, sizeof key, "summary|%s", q->canonical);
  enum MHD_Result ok;
  if (send_cached(c, key, &ok)) return ok;
  if (!begin_evaluation()) return send_error(c, MHD_HTTP_SERVICE_UNAVAILABLE, "busy; try again");
  lm_analyze_opts o;
  opts_from_query(q, &o);
  loaded *l = NULL;
  lm_ruleset *rules = NULL;
  lm_summary *sum = NULL;
  lm_diag d;
  lm_diag_clear(&d);
  lm_status st = acquire(q->w, &l, &d);
  const lm_catalog *cat = st == LM_OK ? lm_metrics_builtin(l->w->arch) : NULL;
  if (st == LM_OK && !cat) st = lm_diag_set(&d, LM_EARCH, NULL, 0, 0, "w", "%s has no metric definitions", l->w->arch);
  if (st == LM_OK) st = lm_rules_load_texts(cat, lm_rules_builtin(), &rules, &d);
  if (st == LM_OK) st = lm_advise_summary(l->w, cat, rules, &o, NULL, 5, &sum, &d);
  char *text = NULL;
  if (st == LM_OK) {
    cJSON *root = cJSON_CreateObject();
    cJSON_AddItemToObject(root, "summary", (cJSON *)lm_report_summary_json(sum));
    text = print_json(root);
    cJSON_Delete(root);
    if (!text) st = lm_diag_set(&d, LM_ENOMEM, NULL, 0, 0, NULL, "out of memory");
  }
  lm_summary_free(sum);
  lm_rules_free(rules);
  release(l);
  end_evaluation();
  if (st != LM_OK) return send_diag(c, &d);
  keep_answer(key, text, strlen(text));
  ok = send_body(c, MHD_HTTP_OK, "application/json", text, strlen(text), 1, 0);
  free(text);
  return ok;
}

static enum MHD_Result api_roofline(struct MHD_Connection *c, const lm_query *q) {
  if (!q->w) return send_error(c, MHD_HTTP_BAD_REQUEST, "w: which workload?");
  if (!begin_evaluation()) return send_error(c, MHD_HTTP_SERVICE_UNAVAILABLE, "busy; try again");
  lm_analyze_opts o;
  opts_from_query(q, &o);
  loaded *l = NULL;
  lm_roofline *r = NULL;
  lm_diag d;
  lm_status st = acquire(q->w, &l, &d);
  if (st == LM_OK) st = lm_roofline_compute(l->w, &o, 10, &r, &d);
  release(l);
  end_evaluation();
  if (st != LM_OK) return send_diag(c, &d);
  cJSON *j = cJSON_CreateObject(), *ceil = cJSON_AddObjectToObject(j, "ceilings");
  add_num(ceil, "HBM", r->hbm_bw);
  add_num(ceil, "L2", r->l2_bw);
  add_num(ceil, "L1", r->l1_bw);
  add_num(ceil, "LDS", r->lds_bw);
  add_num(ceil, "FP32", r->fp32);
  add_num(ceil, "FP64", r->fp64);
  add_num(ceil, "MFMA_BF16", r->mfma_bf16);
  add_num(ceil, "MFMA_F16", r->mfma_f16);
  add_num(ceil, "MFMA_F32", r->mfma_f32);
  add_num(ceil, "MFMA_F64", r->mfma_f64);
  add_num(ceil, "MFMA_I8", r->mfma_i8);
  if (r->missing) cJSON_AddStringToObject(j, "missing_counter", r->missing);
  cJSON *pts = cJSON_AddArrayToObject(j, "points");
  for (size_t i = 0; i < r->n_points; i++) {
    const lm_roof_point *p = &r->points[i];
    cJSON *e = cJSON_CreateObject();
    cJSON_AddStringToObject(e, "kernel", p->kernel);
    cJSON_AddNumberToObject(e, "calls", (double)p->calls);
    add_num(e, "duration_ns", p->duration_ns);
    add_num(e, "flops", p->flops);
    add_num(e, "gflops_per_s", p->duration_ns > 0 ? p->flops / p->duration_ns : 0);
    cJSON *ai = cJSON_AddObjectToObject(e, "ai");
    add_num(ai, "L1", p->bytes_l1 > 0 ? p->flops / p->bytes_l1 : 0);
    add_num(ai, "L2", p->bytes_l2 > 0 ? p->flops / p->bytes_l2 : 0);
    add_num(ai, "HBM", p->bytes_hbm > 0 ? p->flops / p->bytes_hbm : 0);
    cJSON_AddItemToArray(pts, e);
  }
  lm_roofline_free(r);
  enum MHD_Result ok = send_json(c, j);
  cJSON_Delete(j);
  return ok;
}

/* --------------------------------------------------------- static files */

static const lm_web_asset *find_asset(const char *path) {
  if (strcmp(path, "/") == 0) path = "/index.html";
  for (size_t i = 0; i < lm_web_n_assets; i++)
    if (strcmp(lm_web_assets[i].path, path) == 0) return &lm_web_assets[i];
  return NULL;
}

static enum MHD_Result send_asset(struct MHD_Connection *c, const char *path) {
  const lm_web_asset *a = find_asset(path);
  if (!a) return send_error(c, MHD_HTTP_NOT_FOUND, "not found");
  if (S.o->web_dir) {
    /* Development: the same file names, read from a folder. */
    char file[4096];
    snprintf(file, sizeof file, "%s%s", S.o->web_dir, a->path);
    char *text = NULL;
    size_t len = 0;
    if (lm_read_file(file, (size_t)16 << 20, &text, &len, NULL) == LM_OK) {
      enum MHD_Result ok = send_body(c, MHD_HTTP_OK, a->type, text, len, 1, 0);
      lm_free(text);
      return ok;
    }
  }
  return send_body(c, MHD_HTTP_OK, a->type, a->data, a->size, 0, 1);
}

/* ------------------------------------------------------ access control */

/* Token bucket per client address. */
static int rate_ok(const struct sockaddr *sa) {
  double rate = S.o->rate;
  if (rate <= 0) {
    if (lm_is_loopback(sa)) return 1;
    rate = 50;
  }
  struct in6_addr key;
  memset(&key, 0, sizeof key);
  if (sa && sa->sa_family == AF_INET) memcpy(&key, &((const struct sockaddr_in *)(const void *)sa)->sin_addr, 4);
  else if (sa && sa->sa_family == AF_INET6) key = ((const struct sockaddr_in6 *)(const void *)sa)->sin6_addr;
  double t = now_s();
  int ok = 0;
  pthread_mutex_lock(&S.lock);
  client *cl = NULL;
  for (size_t i = 0; i < S.n_clients && !cl; i++)
    if (memcmp(&S.clients[i].addr, &key, sizeof key) == 0) cl = &S.clients[i];
  if (!cl) {
    size_t slot = S.n_clients < MAX_CLIENTS ? S.n_clients++ : 0;
    if (S.n_clients == MAX_CLIENTS) /* forget the longest idle */
      for (size_t i = 1; i < MAX_CLIENTS; i++)
        if (S.clients[i].last < S.clients[slot].last) slot = i;
    cl = &S.clients[slot];
    cl->addr = key;
    cl->tokens = rate * 2;
    cl->last = t;
  }
  cl->tokens += (t - cl->last) * rate;
  if (cl->tokens > rate * 2) cl->tokens = rate * 2;
  cl->last = t;
  if (cl->tokens >= 1) {
    cl->tokens -= 1;
    ok = 1;
  }
  pthread_mutex_unlock(&S.lock);
  return ok;
}

/* Whether the request carries the token: in the Authorization header, in
 * the cookie, or (only when allow_query: a page being opened from a
 * shared link) in the query string. API calls never take it from the
 * query, which ends up in logs and browser history. */
static int authorized(struct MHD_Connection *c, const lm_query *q, int allow_query) {
  const char *token = S.o->token;
  if (!token) return 1;
  const char *h = MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_AUTHORIZATION);
  if (h && strncmp(h, "Bearer ", 7) == 0 && lm_same_secret(h + 7, token)) return 1;
  const char *cookie = MHD_lookup_connection_value(c, MHD_COOKIE_KIND, "lumen_token");
  if (cookie && lm_same_secret(cookie, token)) return 1;
  return allow_query && q->token && lm_same_secret(q->token, token);
}

/* ------------------------------------------------------------- dispatch */

typedef struct request {
  char *query;   /* the raw query string, captured before parsing */
  size_t query_len;
  int escaped_path; /* the path held %-escapes: no file or endpoint has any */
  int seen;
} request;

static enum MHD_Result add_header_bytes(void *cls, enum MHD_ValueKind kind, const char *key, const char *value) {
  (void)kind;
  *(size_t *)cls += (key ? strlen(key) : 0) + (value ? strlen(value) : 0) + 4;
  return MHD_YES;
}

static size_t header_bytes(struct MHD_Connection *c) {
  size_t n = 0;
  MHD_get_connection_values(c, MHD_HEADER_KIND, add_header_bytes, &n);
  return n;
}

static void *on_uri(void *cls, const char *uri, struct MHD_Connection *c) {
  (void)cls;
  (void)c;
  request *r = calloc(1, sizeof *r);
  if (!r) return NULL;
  const char *qm = uri ? strchr(uri, '?') : NULL;
  const char *pct = uri ? strchr(uri, '%') : NULL;
  r->escaped_path = pct && (!qm || pct < qm);
  if (qm) {
    r->query_len = strlen(qm + 1);
    r->query = malloc(r->query_len + 1);
    if (r->query) memcpy(r->query, qm + 1, r->query_len + 1);
    else r->query_len = 0;
  }
  return r;
}

static void on_completed(void *cls, struct MHD_Connection *c, void **con_cls, enum MHD_RequestTerminationCode code) {
  (void)cls;
  (void)code;
  lm_guard_request_done(c);
  request *r = *con_cls;
  if (r) {
    free(r->query);
    free(r);
  }
  *con_cls = NULL;
}

static enum MHD_Result handle(void *cls, struct MHD_Connection *c, const char *url, const char *method,
                              const char *version, const char *upload_data, size_t *upload_size, void **con_cls) {
  (void)cls;
  (void)version;
  (void)upload_data;
  request *req = *con_cls;
  if (!req) return MHD_NO;
  if (!req->seen) {
    req->seen = 1;
    lm_guard_headers_done(c);
    /* On loopback, only requests for this machine's own names: a page
     * whose host name was rebound to 127.0.0.1 still sends its own. */
    if (S.loopback &&
        !lm_host_allowed(MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_HOST)))
      return send_error(c, MHD_HTTP_MISDIRECTED_REQUEST,
                        "this server answers only requests for 127.0.0.1, localhost or [::1] (Host header)");
    if (header_bytes(c) > MAX_HEADER_BYTES)
      return send_error(c, MHD_HTTP_REQUEST_HEADER_FIELDS_TOO_LARGE, "the request headers are over %d bytes",
                        MAX_HEADER_BYTES);
    /* Refuse bodies before they arrive: nothing here takes one. */
    const char *cl = MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_LENGTH);
    const char *te = MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_TRANSFER_ENCODING);
    if ((cl && strcmp(cl, "0") != 0) || te) return send_error(c, MHD_HTTP_CONTENT_TOO_LARGE, "no request bodies");
    if (strcmp(method, "GET") != 0 && strcmp(method, "HEAD") != 0)
      return send_error_header(c, MHD_HTTP_METHOD_NOT_ALLOWED, "Allow", "GET, HEAD",
                               "only GET and HEAD: the server is read-only");
    return MHD_YES;
  }
  if (*upload_size) {
    *upload_size = 0;
    return MHD_YES;
  }
  const union MHD_ConnectionInfo *ci = MHD_get_connection_info(c, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
  if (!rate_ok(ci ? ci->client_addr : NULL)) return send_error(c, MHD_HTTP_TOO_MANY_REQUESTS, "too many requests");
  lm_query q;
  lm_diag d;
  lm_status st = lm_query_parse(req->query ? req->query : "", req->query_len, &q, &d);
  if (st != LM_OK) {
    /* Who may not ask learns nothing about the question. */
    lm_query empty;
    memset(&empty, 0, sizeof empty);
    enum MHD_Result ok = authorized(c, &empty, 0) ? send_diag(c, &d)
                                               : send_error(c, MHD_HTTP_UNAUTHORIZED, "a token is required");
    lm_query_fini(&q);
    return ok;
  }
  enum MHD_Result ok;
  uint64_t t_request = lm_phase_begin();
  if (req->escaped_path) {
    ok = send_error(c, MHD_HTTP_NOT_FOUND, "not found");
  } else if (!authorized(c, &q, strncmp(url, "/api/", 5) != 0)) {
    ok = send_error(c, MHD_HTTP_UNAUTHORIZED, "a token is required (Authorization: Bearer TOKEN)");
  } else if (strncmp(url, "/api/", 5) != 0) {
    /* A page opened with ?token=... keeps it in a cookie for its requests. */
    if (S.o->token && q.token) {
      char cookie[512];
      snprintf(cookie, sizeof cookie, "lumen_token=%s; HttpOnly; SameSite=Strict; Path=/", S.o->token);
      const lm_web_asset *a = find_asset(url);
      ok = a ? send_body_header(c, MHD_HTTP_OK, a->type, a->data, a->size, 0, 0, "Set-Cookie", cookie)
             : send_error(c, MHD_HTTP_NOT_FOUND, "not found");
    } else {
      ok = send_asset(c, url);
    }
  } else if (strcmp(url, "/api/health") == 0) {
    ok = send_body(c, MHD_HTTP_OK, "application/json", "{\"ok\":true}", 11, 0, 0);
  } else if (strcmp(url, "/api/workloads") == 0) {
    ok = api_workloads(c);
  } else if (strcmp(url, "/api/info") == 0) {
    ok = api_info(c, &q);
  } else if (strcmp(url, "/api/analysis") == 0) {
    ok = api_analysis(c, &q);
  } else if (strcmp(url, "/api/summary") == 0) {
    ok = api_summary(c, &q);
  } else if (strcmp(url, "/api/roofline") == 0) {
    ok = api_roofline(c, &q);
  } else {
    ok = send_error(c, MHD_HTTP_NOT_FOUND, "no such endpoint");
  }
  /* --self-time: wall time per endpoint. */
  lm_phase_end(strcmp(url, "/api/analysis") == 0   ? "request /api/analysis"
               : strcmp(url, "/api/summary") == 0  ? "request /api/summary"
               : strcmp(url, "/api/roofline") == 0 ? "request /api/roofline"
               : strncmp(url, "/api/", 5) == 0     ? "request /api/ (other)"
                                                   : "request page",
               t_request);
  lm_query_fini(&q);
  return ok;
}

#if defined(__GNUC__)
__attribute__((format(printf, 2, 0)))
#endif
static void mhd_log(void *cls, const char *fmt, va_list ap) {
  (void)cls;
  char line[1024];
  vsnprintf(line, sizeof line, fmt, ap);
  line[strcspn(line, "\n")] = '\0';
  lm_log(LM_LOG_DEBUG, "http: %s", line);
}

/* ----------------------------------------------------------------- run */

lm_status lm_server_run(const lm_server_opts *o, lm_diag *diag) {
  S.o = o;
  S.max_evaluations = o->threads > 0 ? o->threads : 2;
  const char *host = o->host ? o->host : "127.0.0.1";
  int port = o->port >= 0 ? o->port : 8080; /* 0: any free port */
  struct sockaddr_in sa4;
  struct sockaddr_in6 sa6;
  memset(&sa4, 0, sizeof sa4);
  memset(&sa6, 0, sizeof sa6);
  int v6 = strchr(host, ':') != NULL;
  if (v6) {
    sa6.sin6_family = AF_INET6;
    sa6.sin6_port = htons((uint16_t)port);
    if (inet_pton(AF_INET6, host, &sa6.sin6_addr) != 1)
      return lm_diag_set(diag, LM_EINVAL, NULL, 0, 0, "--listen", "%s is not an IP address", host);
  } else {
    sa4.sin_family = AF_INET;
    sa4.sin_port = htons((uint16_t)port);
    if (inet_pton(AF_INET, host, &sa4.sin_addr) != 1)
      return lm_diag_set(diag, LM_EINVAL, NULL, 0, 0, "--listen", "%s is not an IP address", host);
  }
  int loopback = v6 ? IN6_IS_ADDR_LOOPBACK(&sa6.sin6_addr) : (ntohl(sa4.sin_addr.s_addr) >> 24) == 127;
  S.loopback = loopback;
  if (o->token && lm_token_check(o->token, "--token", diag) != LM_OK) return diag->status;
  if (!loopback && (!o->token || strlen(o->token) < 16))
    return lm_diag_set(diag, LM_EINVAL, NULL, 0, 0, "--listen",
                       "listening on %s (not loopback) needs --token or --token-file with a secret of at least "
                       "16 characters", host);
  /* Folders: validate now, load on first use. */
  S.folders = calloc(o->n_folders + 1, sizeof *S.folders);
  if (!S.folders) return lm_diag_set(diag, LM_ENOMEM, NULL, 0, 0, NULL, "out of memory");
  S.n_folders = 0;
  size_t n_refused = 0;
  for (size_t i = 0; i < o->n_folders; i++) {
    folder *f = &S.folders[S.n_folders];
    snprintf(f->id, sizeof f->id, "f%u", (unsigned)i);
    snprintf(f->path, sizeof f->path, "%s", o->folders[i]);
    lm_workload *w = NULL;
    lm_diag why;
    lm_diag_clear(&why);
    lm_status st = lm_workload_read(f->path, &w, &why);
    if (st != LM_OK) {
      /* One unreadable folder does not keep the others from being served. */
      char line[2048];
      lm_log(LM_LOG_WARN, "not serving %s: %s", f->path, lm_diag_format(&why, line, sizeof line));
      if (!n_refused++ && diag) *diag = why;
      continue;
    }
    lm_workload_free(w);
    S.n_folders++;
    /* The folder's last two path components name it. */
    char tmp[4096];
    snprintf(tmp, sizeof tmp, "%s", f->path);
    size_t n = strlen(tmp);
    while (n > 1 && tmp[n - 1] == '/') tmp[--n] = '\0';
    char *last = strrchr(tmp, '/');
    if (last && last != tmp) {
      *last = '\0';
      char *prev = strrchr(tmp, '/');
      snprintf(f->name, sizeof f->name, "%s/%s", prev ? prev + 1 : tmp, last + 1);
    } else {
      snprintf(f->name, sizeof f->name, "%s", last ? last + 1 : tmp);
    }
  }
  if (n_refused && !S.n_folders && !o->store) {
    free(S.folders);
    S.folders = NULL;
    return diag->status ? diag->status : LM_EIO;
  }
  if (o->store) {
    lm_store *st = NULL;
    if (lm_store_open(o->store, 0, &st, diag) != LM_OK) return diag->status;
    lm_store_close(st);
  }
  /* SIGINT/SIGTERM end the server: block them here, wait for them below. */
  sigset_t stop;
  sigemptyset(&stop);
  sigaddset(&stop, SIGINT);
  sigaddset(&stop, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &stop, NULL);
  signal(SIGPIPE, SIG_IGN);
  unsigned flags = MHD_USE_THREAD_PER_CONNECTION | MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_ERROR_LOG;
  if (v6) flags |= MHD_USE_IPv6;
  if (lm_guard_start(o->header_timeout > 0 ? o->header_timeout : 10, diag) != LM_OK) {
    free(S.folders);
    S.folders = NULL;
    return diag->status;
  }
  struct MHD_Daemon *d = MHD_start_daemon(
      flags, (uint16_t)port, lm_guard_accept, NULL, handle, NULL, MHD_OPTION_NOTIFY_CONNECTION, lm_guard_notify,
      NULL, MHD_OPTION_SOCK_ADDR,
      v6 ? (const struct sockaddr *)(const void *)&sa6 : (const struct sockaddr *)(const void *)&sa4,
      MHD_OPTION_URI_LOG_CALLBACK, on_uri, NULL, MHD_OPTION_NOTIFY_COMPLETED, on_completed, NULL,
      MHD_OPTION_CONNECTION_LIMIT, (unsigned)(LM_GUARD_MAX_CONNECTIONS + 32), MHD_OPTION_PER_IP_CONNECTION_LIMIT,
      (unsigned)(LM_GUARD_PER_ADDRESS + 16), MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)15,
      MHD_OPTION_CONNECTION_MEMORY_LIMIT, CONNECTION_MEMORY,
      MHD_OPTION_EXTERNAL_LOGGER, mhd_log, NULL, MHD_OPTION_END);
  if (!d) {
    lm_guard_stop();
    free(S.folders);
    S.folders = NULL;
    return lm_diag_set(diag, LM_EIO, NULL, 0, 0, "--listen", "cannot listen on %s:%d (%s)", host, port,
                       errno ? strerror(errno) : "in use?");
  }
  const union MHD_DaemonInfo *info = MHD_get_daemon_info(d, MHD_DAEMON_INFO_BIND_PORT);
  int bound = info ? info->port : port;
  lm_log(LM_LOG_INFO, "serving %zu folder(s)%s%s on http://%s%s%s:%d/%s", S.n_folders, o->store ? " and the store " : "",
         o->store ? o->store : "", v6 ? "[" : "", host, v6 ? "]" : "", bound, o->token ? " (token required)" : "");
  /* A line on stdout that scripts can wait for. */
  printf("listening on http://%s%s%s:%d/\n", v6 ? "[" : "", host, v6 ? "]" : "", bound);
  fflush(stdout);
  int sig = 0;
  sigwait(&stop, &sig);
  lm_log(LM_LOG_INFO, "stopping (signal %d)", sig);
  MHD_stop_daemon(d);
  lm_guard_stop();
  for (int i = 0; i < MAX_LOADED; i++) lm_workload_free(S.loaded[i].w);
  for (int i = 0; i < MAX_ANSWERS; i++) {
    free(S.answers[i].key);
    free(S.answers[i].body);
  }
  memset(S.loaded, 0, sizeof S.loaded);
  memset(S.answers, 0, sizeof S.answers);
  free(workloads_text);
  workloads_text = NULL;
  free(S.folders);
  S.folders = NULL;
  return LM_OK;
}
