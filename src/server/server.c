/*
 * server.c - `lumen serve`: HTTP (libmicrohttpd), the JSON API and the
 * embedded GUI; this file holds the request path (checks, access control,
 * dispatch to api.c, summary.c and rows.c) and the daemon's start and stop.
 *
 * Built for hostile or careless clients: a thread per connection, limits on
 * connections overall and per address and on header memory, idle timeouts, no
 * request bodies, a rate limit off loopback, a bound on the evaluations at
 * once. Read-only: workloads are named by ids the server hands out ("f0",
 * "db:NAME"), never by paths; static files come from a fixed table. Answers
 * and caches: respond.c, cache.c. docs/serve.md.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>

#include "server/server.h"
#include "server/internal.h"
#include "store/store.h"
#include "load/load.h"

#define MAX_CLIENTS 1024
/* Request headers lumen reads (name and value bytes together); larger
 * ones are a 431. MHD's per-connection memory is set above this, so that
 * such requests still reach the handler and get a JSON answer. */
#define MAX_HEADER_BYTES 16384
#define CONNECTION_MEMORY ((size_t)640 << 10)

typedef struct client {
  struct in6_addr addr;
  double tokens;
  double last;
} client;

/* The rate limiter's clients. */
static struct {
  pthread_mutex_t lock;
  client clients[MAX_CLIENTS];
  size_t n_clients;
} R = {.lock = PTHREAD_MUTEX_INITIALIZER};

/* ------------------------------------------------------- request budget */

/* The request this connection's thread answers (a thread per connection):
 * its connection, and when its kernel patterns began to be matched (0:
 * not yet). Unset on other threads (the warm-up), which have no budget. */
static _Thread_local struct {
  struct MHD_Connection *c;
  double match_started;
} current;

/* Whether the client of fd has closed its end (or reset it): a peek that
 * reads the end of the stream. Pipelined bytes or nothing yet: still there. */
static int client_gone(int fd) {
  char byte;
  ssize_t n = recv(fd, &byte, 1, MSG_PEEK | MSG_DONTWAIT);
  return n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR);
}

lm_status lm_server_request_check(void *cls, lm_diag *diag) {
  (void)cls;
  if (!current.c) return LM_OK;
  double now = lm_server_now();
  if (current.match_started == 0) current.match_started = now;
  if (now - current.match_started > LM_SERVER_MATCH_BUDGET_S)
    return lm_fail(diag, LM_EINVAL, NULL,
                   "k=: matching the kernel patterns against the kernel names took over %g s: simplify the patterns",
                   LM_SERVER_MATCH_BUDGET_S);
  const union MHD_ConnectionInfo *fd = lm_mhd.get_connection_info(current.c, MHD_CONNECTION_INFO_CONNECTION_FD);
  if (fd && client_gone(fd->connect_fd))
    return lm_fail(diag, LM_EIO, NULL, "the client closed the connection before its answer was ready");
  return LM_OK;
}

/* -------------------------------------------------------------- warm-up */

/* The opening view of each folder (its analysis and summary with no
 * filter, what the GUI asks first) is evaluated once in the background
 * after the start, so that the first visitor is answered from memory;
 * /api/health says when it is done ("warm"). Only as many folders as the
 * workload cache keeps are prepared. */
#define WARM_FOLDERS 4
static pthread_t warm_thread;
static int warm_started;
static atomic_int warm_done, warm_stop;

static void *warm_up(void *arg) {
  (void)arg;
  for (size_t i = 0; i < lm_server_g.n_folders && i < WARM_FOLDERS && !atomic_load(&warm_stop); i++) {
    char raw[64];
    int n = snprintf(raw, sizeof raw, "w=%s", lm_server_g.folders[i].id);
    lm_query q;
    lm_diag d;
    lm_diag_clear(&d);
    if (lm_query_parse(raw, (size_t)n, &q, &d) == LM_OK) {
      char *text = NULL;
      size_t len = 0;
      int busy = 0;
      lm_server_analysis_answer(&q, &text, &len, &busy, &d);
      lm_free(text);
      text = NULL;
      if (!atomic_load(&warm_stop)) lm_server_summary_answer(&q, &text, &len, &busy, &d);
      lm_free(text);
    }
    lm_query_fini(&q);
  }
  atomic_store(&warm_done, 1);
  return NULL;
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
  if (!a) return lm_server_send_error(c, MHD_HTTP_NOT_FOUND, "not found");
  if (lm_server_g.opts->web_dir) {
    /* Development: the same file names, read from a folder. */
    char file[4096];
    snprintf(file, sizeof file, "%s%s", lm_server_g.opts->web_dir, a->path);
    char *text = NULL;
    size_t len = 0;
    if (lm_read_file(file, (size_t)16 << 20, &text, &len, NULL) == LM_OK) {
      enum MHD_Result ok = lm_server_send(c, MHD_HTTP_OK, a->type, text, len, 1, 0);
      lm_free(text);
      return ok;
    }
  }
  return lm_server_send(c, MHD_HTTP_OK, a->type, a->data, a->size, 0, 1);
}

/* ------------------------------------------------------ access control */

/* Token bucket per client address. */
static int rate_ok(const struct sockaddr *sa) {
  double rate = lm_server_g.opts->rate;
  if (rate <= 0) {
    if (lm_is_loopback(sa)) return 1;
    rate = 50;
  }
  struct in6_addr key;
  memset(&key, 0, sizeof key);
  if (sa && sa->sa_family == AF_INET) memcpy(&key, &((const struct sockaddr_in *)(const void *)sa)->sin_addr, 4);
  else if (sa && sa->sa_family == AF_INET6) key = ((const struct sockaddr_in6 *)(const void *)sa)->sin6_addr;
  double t = lm_server_now();
  int ok = 0;
  pthread_mutex_lock(&R.lock);
  client *cl = NULL;
  for (size_t i = 0; i < R.n_clients && !cl; i++)
    if (memcmp(&R.clients[i].addr, &key, sizeof key) == 0) cl = &R.clients[i];
  if (!cl) {
    size_t slot = R.n_clients < MAX_CLIENTS ? R.n_clients++ : 0;
    if (R.n_clients == MAX_CLIENTS) /* forget the longest idle */
      for (size_t i = 1; i < MAX_CLIENTS; i++)
        if (R.clients[i].last < R.clients[slot].last) slot = i;
    cl = &R.clients[slot];
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
  pthread_mutex_unlock(&R.lock);
  return ok;
}

/* Whether the request carries the token: in the Authorization header, in
 * the cookie, or (only when allow_query: a page being opened from a
 * shared link) in the query string. API calls never take it from the
 * query, which ends up in logs and browser history. */
static int authorized(struct MHD_Connection *c, const lm_query *q, int allow_query) {
  const char *token = lm_server_g.opts->token;
  if (!token) return 1;
  const char *h = lm_mhd.lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_AUTHORIZATION);
  if (h && strncmp(h, "Bearer ", 7) == 0 && lm_same_secret(h + 7, token)) return 1;
  const char *cookie = lm_mhd.lookup_connection_value(c, MHD_COOKIE_KIND, "lumen_token");
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
  lm_mhd.get_connection_values(c, MHD_HEADER_KIND, add_header_bytes, &n);
  return n;
}

/* The Host headers of a request: how many, and whether one holds a NUL
 * or another control byte (a name that reads one way here and another to
 * a proxy or the browser). */
typedef struct host_count {
  int n, bad;
} host_count;

static enum MHD_Result count_host(void *cls, enum MHD_ValueKind kind, const char *key, size_t key_size,
                                  const char *value, size_t value_size) {
  (void)kind;
  host_count *h = cls;
  if (!key || key_size != 4 || strncasecmp(key, "Host", 4) != 0) return MHD_YES;
  h->n++;
  for (size_t i = 0; value && i < value_size; i++)
    if ((unsigned char)value[i] < 0x20 || value[i] == 0x7F) h->bad = 1;
  if (!value || value_size == 0) h->bad = 1;
  return MHD_YES;
}

static void *on_uri(void *cls, const char *uri, struct MHD_Connection *c) {
  (void)cls;
  (void)c;
  request *r = lm_calloc(1, sizeof *r);
  if (!r) return NULL;
  const char *qm = uri ? strchr(uri, '?') : NULL;
  const char *pct = uri ? strchr(uri, '%') : NULL;
  r->escaped_path = pct && (!qm || pct < qm);
  if (qm) {
    r->query_len = strlen(qm + 1);
    r->query = lm_malloc(r->query_len + 1);
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
    lm_free(r->query);
    lm_free(r);
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
    /* One Host header, printable (RFC 9112 3.2: a request without one, or
     * with several, is answered 400): which name was asked for must not
     * depend on who reads the request. */
    host_count hosts = {0, 0};
    lm_mhd.get_connection_values_n(c, MHD_HEADER_KIND, count_host, &hosts);
    if (hosts.n != 1 || hosts.bad)
      return lm_server_send_error(c, MHD_HTTP_BAD_REQUEST, "%s", hosts.n == 0 ? "no Host header"
                                                                 : hosts.n > 1 ? "more than one Host header"
                                                                               : "a Host header with a control byte");
    /* On loopback, only requests for this machine's own names: a page
     * whose host name was rebound to 127.0.0.1 still sends its own. */
    if (lm_server_g.loopback &&
        !lm_host_allowed(lm_mhd.lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_HOST)))
      return lm_server_send_error(c, MHD_HTTP_MISDIRECTED_REQUEST,
                        "this server answers only requests for 127.0.0.1, localhost or [::1] (Host header)");
    if (header_bytes(c) > MAX_HEADER_BYTES)
      return lm_server_send_error(c, MHD_HTTP_REQUEST_HEADER_FIELDS_TOO_LARGE, "the request headers are over %d bytes",
                        MAX_HEADER_BYTES);
    /* Refuse bodies before they arrive: nothing here takes one. */
    const char *cl = lm_mhd.lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_LENGTH);
    const char *te = lm_mhd.lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_TRANSFER_ENCODING);
    if ((cl && strcmp(cl, "0") != 0) || te) return lm_server_send_error(c, MHD_HTTP_CONTENT_TOO_LARGE, "no request bodies");
    if (strcmp(method, "GET") != 0 && strcmp(method, "HEAD") != 0)
      return lm_server_send_error_header(c, MHD_HTTP_METHOD_NOT_ALLOWED, "Allow", "GET, HEAD",
                               "only GET and HEAD: the server is read-only");
    return MHD_YES;
  }
  if (*upload_size) {
    *upload_size = 0;
    return MHD_YES;
  }
  const union MHD_ConnectionInfo *ci = lm_mhd.get_connection_info(c, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
  if (!rate_ok(ci ? ci->client_addr : NULL)) return lm_server_send_error(c, MHD_HTTP_TOO_MANY_REQUESTS, "too many requests");
  lm_query q;
  lm_diag d;
  lm_status st = lm_query_parse(req->query ? req->query : "", req->query_len, &q, &d);
  if (st != LM_OK) {
    /* Who may not ask learns nothing about the question. */
    lm_query empty;
    memset(&empty, 0, sizeof empty);
    enum MHD_Result ok = authorized(c, &empty, 0) ? lm_server_send_diag(c, &d)
                                               : lm_server_send_error(c, MHD_HTTP_UNAUTHORIZED, "a token is required");
    lm_query_fini(&q);
    return ok;
  }
  enum MHD_Result ok;
  uint64_t t_request = lm_phase_begin();
  current.c = c;
  current.match_started = 0;
  if (req->escaped_path) {
    ok = lm_server_send_error(c, MHD_HTTP_NOT_FOUND, "not found");
  } else if (!authorized(c, &q, strncmp(url, "/api/", 5) != 0)) {
    ok = lm_server_send_error(c, MHD_HTTP_UNAUTHORIZED, "a token is required (Authorization: Bearer TOKEN)");
  } else if (strncmp(url, "/api/", 5) != 0) {
    /* A page opened with ?token=... keeps it in a cookie for its requests. */
    if (lm_server_g.opts->token && q.token) {
      char cookie[512];
      snprintf(cookie, sizeof cookie, "lumen_token=%s; HttpOnly; SameSite=Strict; Path=/", lm_server_g.opts->token);
      const lm_web_asset *a = find_asset(url);
      ok = a ? lm_server_send_header(c, MHD_HTTP_OK, a->type, a->data, a->size, 0, 0, "Set-Cookie", cookie)
             : lm_server_send_error(c, MHD_HTTP_NOT_FOUND, "not found");
    } else {
      ok = send_asset(c, url);
    }
  } else if (strcmp(url, "/api/health") == 0) {
    ok = atomic_load(&warm_done) ? lm_server_send(c, MHD_HTTP_OK, "application/json", "{\"ok\":true,\"warm\":true}", 23, 0, 0)
                                 : lm_server_send(c, MHD_HTTP_OK, "application/json", "{\"ok\":true,\"warm\":false}", 24, 0, 0);
  } else if (strcmp(url, "/api/workloads") == 0) {
    ok = lm_server_api_workloads(c);
  } else if (strcmp(url, "/api/info") == 0) {
    ok = lm_server_api_info(c, &q);
  } else if (strcmp(url, "/api/analysis") == 0) {
    ok = lm_server_api_analysis(c, &q);
  } else if (strcmp(url, "/api/summary") == 0) {
    ok = lm_server_api_summary(c, &q);
  } else if (strcmp(url, "/api/roofline") == 0) {
    ok = lm_server_api_roofline(c, &q);
  } else if (strcmp(url, "/api/rows") == 0) {
    ok = lm_server_api_rows(c, &q);
  } else if (strcmp(url, "/api/series") == 0) {
    ok = lm_server_api_series(c, &q);
  } else {
    ok = lm_server_send_error(c, MHD_HTTP_NOT_FOUND, "no such endpoint");
  }
  /* --self-time: wall time per endpoint. */
  lm_phase_end(strcmp(url, "/api/analysis") == 0   ? "request /api/analysis"
               : strcmp(url, "/api/summary") == 0  ? "request /api/summary"
               : strcmp(url, "/api/roofline") == 0 ? "request /api/roofline"
               : strcmp(url, "/api/rows") == 0     ? "request /api/rows"
               : strcmp(url, "/api/series") == 0   ? "request /api/series"
               : strncmp(url, "/api/", 5) == 0     ? "request /api/ (other)"
                                                   : "request page",
               t_request);
  current.c = NULL;
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
  lm_server_g.opts = o;
  lm_server_cache_init(o->threads, o->cache_mb > 0 ? (size_t)o->cache_mb << 20 : 0);
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
      return lm_fail_at(diag, LM_EINVAL, NULL, 0, "--listen", "%s is not an IP address", host);
  } else {
    sa4.sin_family = AF_INET;
    sa4.sin_port = htons((uint16_t)port);
    if (inet_pton(AF_INET, host, &sa4.sin_addr) != 1)
      return lm_fail_at(diag, LM_EINVAL, NULL, 0, "--listen", "%s is not an IP address", host);
  }
  int loopback = v6 ? IN6_IS_ADDR_LOOPBACK(&sa6.sin6_addr) : (ntohl(sa4.sin_addr.s_addr) >> 24) == 127;
  lm_server_g.loopback = loopback;
  if (o->token && lm_token_check(o->token, "--token", diag) != LM_OK) return diag->status;
  if (!loopback && (!o->token || strlen(o->token) < 16))
    return lm_fail_at(diag, LM_EINVAL, NULL, 0, "--listen",
                      "listening on %s (not loopback) needs --token or --token-file with a secret of at least "
                      "16 characters",
                      host);
  /* Folders: validate now, load on first use. */
  lm_server_g.folders = lm_calloc(o->n_folders + 1, sizeof *lm_server_g.folders);
  if (!lm_server_g.folders) return lm_oom(diag, NULL);
  lm_server_g.n_folders = 0;
  size_t n_refused = 0;
  for (size_t i = 0; i < o->n_folders; i++) {
    lm_server_folder *f = &lm_server_g.folders[lm_server_g.n_folders];
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
    lm_server_g.n_folders++;
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
  if (n_refused && !lm_server_g.n_folders && !o->store) {
    lm_free(lm_server_g.folders);
    lm_server_g.folders = NULL;
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
  if (lm_server_mhd_load(diag) != LM_OK ||
      lm_guard_start(o->header_timeout > 0 ? o->header_timeout : 10, diag) != LM_OK) {
    lm_free(lm_server_g.folders);
    lm_server_g.folders = NULL;
    return diag->status;
  }
  struct MHD_Daemon *d = lm_mhd.start_daemon(
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
    lm_free(lm_server_g.folders);
    lm_server_g.folders = NULL;
    return lm_fail_at(diag, LM_EIO, NULL, 0, "--listen", "cannot listen on %s:%d (%s)", host, port,
                      errno ? strerror(errno) : "in use?");
  }
  const union MHD_DaemonInfo *info = lm_mhd.get_daemon_info(d, MHD_DAEMON_INFO_BIND_PORT);
  int bound = info ? info->port : port;
  lm_log(LM_LOG_INFO, "serving %zu folder(s)%s%s on http://%s%s%s:%d/%s", lm_server_g.n_folders, o->store ? " and the store " : "",
         o->store ? o->store : "", v6 ? "[" : "", host, v6 ? "]" : "", bound, o->token ? " (token required)" : "");
  /* A line on stdout that scripts can wait for. */
  printf("listening on http://%s%s%s:%d/\n", v6 ? "[" : "", host, v6 ? "]" : "", bound);
  fflush(stdout);
  atomic_store(&warm_done, 0);
  atomic_store(&warm_stop, 0);
  warm_started = pthread_create(&warm_thread, NULL, warm_up, NULL) == 0;
  if (!warm_started) atomic_store(&warm_done, 1);
  int sig = 0;
  sigwait(&stop, &sig);
  lm_log(LM_LOG_INFO, "stopping (signal %d)", sig);
  atomic_store(&warm_stop, 1);
  if (warm_started) pthread_join(warm_thread, NULL);
  warm_started = 0;
  lm_mhd.stop_daemon(d);
  lm_guard_stop();
  lm_server_cache_fini();
  lm_server_api_fini();
  lm_free(lm_server_g.folders);
  lm_server_g.folders = NULL;
  return LM_OK;
}
