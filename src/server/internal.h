/*
 * internal.h - what the server's files share and nothing outside them
 * sees: the connection guard (guard.c) that bounds how long a client may
 * take to send its headers and keeps slots free for new clients, the
 * request checks that do not need a workload (Host header, token), the
 * answers every endpoint sends (respond.c), the workload and answer caches
 * (cache.c), and the endpoints (api.c, summary.c, rows.c, series.c), which server.c
 * dispatches to.
 */
#ifndef LUMEN_SERVER_INTERNAL_H
#define LUMEN_SERVER_INTERNAL_H

#include <cjson/cJSON.h>
#include <microhttpd.h>
#include <stdint.h>
#include <sys/socket.h>

#include "analyze/analyze.h"
#include "base/base.h"
#include "server/server.h"

/* Connections one address may hold; when it is reached, the address's
 * oldest connection still sending headers is dropped for the new one. */
#define LM_GUARD_PER_ADDRESS 64
/* The most connections overall (MHD's limit is set a little higher, so
 * that the guard decides). */
#define LM_GUARD_MAX_CONNECTIONS 512

/* The libmicrohttpd entry points the server calls (mhd.c), with the
 * header's signatures; filled by lm_server_mhd_load. */
typedef struct lm_mhd_api {
  struct MHD_Daemon *(*start_daemon)(unsigned int flags, uint16_t port, MHD_AcceptPolicyCallback apc, void *apc_cls,
                                     MHD_AccessHandlerCallback dh, void *dh_cls, ...);
  void (*stop_daemon)(struct MHD_Daemon *daemon);
  const union MHD_DaemonInfo *(*get_daemon_info)(struct MHD_Daemon *daemon, enum MHD_DaemonInfoType type, ...);
  const union MHD_ConnectionInfo *(*get_connection_info)(struct MHD_Connection *c, enum MHD_ConnectionInfoType type,
                                                          ...);
  int (*get_connection_values)(struct MHD_Connection *c, enum MHD_ValueKind kind, MHD_KeyValueIterator it,
                               void *it_cls);
  int (*get_connection_values_n)(struct MHD_Connection *c, enum MHD_ValueKind kind, MHD_KeyValueIteratorN it,
                                 void *it_cls);
  const char *(*lookup_connection_value)(struct MHD_Connection *c, enum MHD_ValueKind kind, const char *key);
  struct MHD_Response *(*create_response_from_buffer)(size_t size, void *buffer, enum MHD_ResponseMemoryMode mode);
  enum MHD_Result (*add_response_header)(struct MHD_Response *r, const char *header, const char *content);
  enum MHD_Result (*queue_response)(struct MHD_Connection *c, unsigned int status, struct MHD_Response *r);
  void (*destroy_response)(struct MHD_Response *r);
} lm_mhd_api;
extern lm_mhd_api lm_mhd;

/* lm_server_mhd_load: open libmicrohttpd and fill lm_mhd (once; later
 * calls return LM_OK). LM_EIO, naming the library, when it cannot be
 * opened or lacks an entry point. Call before the daemon starts. */
lm_status lm_server_mhd_load(lm_diag *diag);

/* lm_guard_start: start the watchdog thread that closes connections whose
 * request headers are not complete header_s seconds after the connection
 * opened or its previous request ended. LM_EIO when no thread starts. */
lm_status lm_guard_start(double header_s, lm_diag *diag);
/* lm_guard_stop: stop the watchdog (after MHD_stop_daemon). */
void lm_guard_stop(void);
/* MHD callbacks: the accept policy, and connection start/close. */
enum MHD_Result lm_guard_accept(void *cls, const struct sockaddr *addr, socklen_t addrlen);
void lm_guard_notify(void *cls, struct MHD_Connection *c, void **socket_context,
                     enum MHD_ConnectionNotificationCode code);
/* lm_guard_headers_done: c's request headers are complete (first call of
 * the request handler); lm_guard_request_done: its request has ended. */
void lm_guard_headers_done(struct MHD_Connection *c);
void lm_guard_request_done(struct MHD_Connection *c);
/* lm_guard_dropped: connections closed by the guard so far. */
unsigned long lm_guard_dropped(void);

/* lm_is_loopback: whether a client address is a loopback one (127/8,
 * ::1, or ::ffff:127.x). NULL is not. */
int lm_is_loopback(const struct sockaddr *sa);
/* lm_same_secret: a and b equal, compared in time that does not depend on
 * where they differ. */
int lm_same_secret(const char *a, const char *b);

/* lm_host_allowed: whether a Host header value names the loopback server
 * itself (127.0.0.1, localhost or [::1], with an optional port); NULL (an
 * HTTP/1.0 request without Host) is allowed. A page whose name was
 * rebound to 127.0.0.1 sends its own name and is refused. */
int lm_host_allowed(const char *host);

/* ------------------------------------------------------------ the state */

/* A served folder: its id ("f0"), path and display name. */
typedef struct lm_server_folder {
  char id[32];
  char path[4096];
  char name[4200];  /* the last two path components */
} lm_server_folder;

/* What lm_server_run sets up once and the endpoints read (one server per
 * process). */
typedef struct lm_server_state {
  const lm_server_opts *opts;
  lm_server_folder *folders; /* the -w folders that could be read */
  size_t n_folders;
  int loopback;              /* bound to a loopback address: Host is checked */
} lm_server_state;
extern lm_server_state lm_server_g;

/* ------------------------------------------------------------ responses */

/* lm_server_now: seconds on the monotonic clock. */
double lm_server_now(void);
/* lm_server_send_header: queue an answer with the headers every answer
 * carries (security headers; Cache-Control from cacheable), plus header
 * (or NULL, e.g. "Set-Cookie") with value. body is copied when copy, else
 * it must outlive the response (static data). */
enum MHD_Result lm_server_send_header(struct MHD_Connection *c, unsigned status, const char *type,
                                      const void *body, size_t len, int copy, int cacheable, const char *header,
                                      const char *value);
/* lm_server_send: lm_server_send_header without an extra header. */
enum MHD_Result lm_server_send(struct MHD_Connection *c, unsigned status, const char *type, const void *body,
                               size_t len, int copy, int cacheable);
/* lm_server_print_json: cJSON's text of o, repaired to valid UTF-8;
 * free with free(). NULL when out of memory. */
char *lm_server_print_json(const cJSON *o);
/* lm_server_send_error_header: {"error": msg, "status": status}, with
 * header (or NULL) set to value. */
enum MHD_Result lm_server_send_error_header(struct MHD_Connection *c, unsigned status, const char *header,
                                            const char *value, const char *msg);
/* lm_server_send_error: an error answer with a printf-formatted message. */
enum MHD_Result lm_server_send_error(struct MHD_Connection *c, unsigned status, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
/* lm_server_send_json: o as a 200 answer (500 when out of memory). */
enum MHD_Result lm_server_send_json(struct MHD_Connection *c, cJSON *o);
/* lm_server_send_diag: d as an error answer whose status follows d's
 * lm_status (404, 400, 414, 503, 500); the server's file is left out. */
enum MHD_Result lm_server_send_diag(struct MHD_Connection *c, const lm_diag *d);

/* --------------------------------------------------------------- caches */

/* A loaded workload, borrowed by requests (refs) and kept for later ones. */
typedef struct lm_server_loaded {
  char id[600];
  lm_workload *w;
  size_t bytes;       /* memory the workload holds (tables and arenas) */
  unsigned long used; /* clock of the last use */
  int refs;
  int loading;
} lm_server_loaded;

/* lm_server_cache_init: at most max_evaluations (default 2) evaluations
 * at once, and cache_bytes (0: 2 GiB) for kept answers (a quarter) and
 * loaded workloads (the rest). lm_server_cache_fini: free every kept
 * workload and answer (after the daemon stopped). */
void lm_server_cache_init(int max_evaluations, size_t cache_bytes);
void lm_server_cache_fini(void);
/* lm_server_is_store_id: whether id names a store entry ("db:NAME"). */
int lm_server_is_store_id(const char *id);
/* lm_server_acquire: borrow workload id, loading it once whoever asks
 * first (others wait). Release with lm_server_release (NULL: no-op). */
lm_status lm_server_acquire(const char *id, lm_server_loaded **out, lm_diag *diag);
void lm_server_release(lm_server_loaded *l);
/* lm_server_begin_evaluation: 1 when a heavy request may run (at most
 * max_evaluations at once; waits up to 60 s), 0 when busy. Pair with
 * lm_server_end_evaluation. */
int lm_server_begin_evaluation(void);
void lm_server_end_evaluation(void);
/* lm_server_cached_answer: a copy (free()) of the answer kept for key and
 * its length, or NULL. lm_server_keep_answer: keep a copy of body under
 * key (the least recently used answers make room). */
char *lm_server_cached_answer(const char *key, size_t *len);
void lm_server_keep_answer(const char *key, const char *body, size_t len);
/* lm_server_send_cached: when an answer for key is kept, send it, set *ok
 * and return 1; else 0. */
int lm_server_send_cached(struct MHD_Connection *c, const char *key, enum MHD_Result *ok);
/* lm_server_opts_from_query: analysis options for q's selection, checked
 * with lm_server_request_check; o borrows q's arrays. */
void lm_server_opts_from_query(const lm_query *q, lm_analyze_opts *o);
/* The time a request's kernel patterns may take to match, from its first
 * match to its last, in seconds. */
#define LM_SERVER_MATCH_BUDGET_S 5.0
/* lm_server_request_check: the analysis options' check (cls unused), for
 * the request the calling connection thread answers: LM_EINVAL once its
 * matching is over LM_SERVER_MATCH_BUDGET_S, LM_EIO once its client has
 * closed the connection; LM_OK elsewhere (the warm-up thread). */
lm_status lm_server_request_check(void *cls, lm_diag *diag);
/* lm_server_catalog_of: the built-in catalog of arch in reference version
 * compat (the request's compat=), else in that of the workload's own
 * layout (lm_sysinfo_compat, or a store entry's compat), else the default;
 * NULL when lumen has none. */
const lm_catalog *lm_server_catalog_of(const char *arch, const char *compat, const char *layout);
/* lm_server_analysis_of: the analysis of workload id for o: from the
 * store's kept analyses when they match, else evaluated on the loaded
 * workload. *held is the workload to release and *info a workload to
 * free (either may be NULL); free *out with lm_analysis_free. */
lm_status lm_server_analysis_of(const char *id, const char *compat, const lm_analyze_opts *o, lm_analysis **out,
                                lm_server_loaded **held, lm_workload **info, lm_diag *diag);

/* ------------------------------------------------------------ endpoints */

/* Rows of a long table (dispatches, top kernels) that /api/analysis
 * keeps, and that one /api/rows page holds unless limit= says otherwise. */
#define LM_SERVER_PAGE_ROWS 100

/* Each answers one endpoint for a parsed query (see docs/serve.md). */
enum MHD_Result lm_server_api_workloads(struct MHD_Connection *c);
enum MHD_Result lm_server_api_info(struct MHD_Connection *c, const lm_query *q);
enum MHD_Result lm_server_api_analysis(struct MHD_Connection *c, const lm_query *q);
enum MHD_Result lm_server_api_summary(struct MHD_Connection *c, const lm_query *q);
enum MHD_Result lm_server_api_roofline(struct MHD_Connection *c, const lm_query *q);
enum MHD_Result lm_server_api_rows(struct MHD_Connection *c, const lm_query *q);
enum MHD_Result lm_server_api_series(struct MHD_Connection *c, const lm_query *q);
/* Points /api/series answers at most: beyond, buckets of dispatches with
 * their minimum and maximum (about 100 kB of JSON whatever the count). */
#define LM_SERVER_SERIES_POINTS 1000
/* lm_server_analysis_answer, lm_server_summary_answer: the answer of
 * /api/analysis or /api/summary for q, from the cache or evaluated and
 * kept: LM_OK with *text (free()) of *len bytes; else a status and diag,
 * with *busy set when no evaluation could start within a minute (503). */
lm_status lm_server_analysis_answer(const lm_query *q, char **text, size_t *len, int *busy, lm_diag *diag);
lm_status lm_server_summary_answer(const lm_query *q, char **text, size_t *len, int *busy, lm_diag *diag);

/* lm_server_send_answer: the JSON answer `answer` makes for q (400 without
 * a workload, 503 while the evaluations are busy, d's error otherwise). */
typedef lm_status (*lm_server_answer_fn)(const lm_query *q, char **text, size_t *len, int *busy, lm_diag *diag);
enum MHD_Result lm_server_send_answer(struct MHD_Connection *c, const lm_query *q, lm_server_answer_fn answer);
/* lm_server_api_fini: free what the endpoints keep (the workload list). */
void lm_server_api_fini(void);

#endif
