/*
 * guard.c - the server's defence against slow and greedy clients, and the
 * request checks that need no workload.
 *
 * libmicrohttpd's idle timeout restarts with every byte, so a client that
 * sends a header line every few seconds holds its connection for ever (64 of
 * them every slot of an address; on loopback all local users share one). The
 * guard tracks each open connection; a watchdog thread shuts the socket of
 * one whose headers are late, and an address at its limit drops its oldest
 * connection still sending headers, so a client that completes its request
 * promptly always gets in. docs/serve.md, "Safety".
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "server/internal.h"
#include "server/server.h"

typedef struct conn {
  int used;
  int fd;
  int in_headers; /* waiting for a request's headers since `since` */
  int dropped;
  struct in6_addr addr;
  double since;
} conn;

#define MAX_CONNS (LM_GUARD_MAX_CONNECTIONS + 64)

static struct {
  pthread_mutex_t lock;
  pthread_cond_t wake;
  conn conns[MAX_CONNS];
  double header_s;
  int running;
  pthread_t thread;
  unsigned long dropped;
} G = {.lock = PTHREAD_MUTEX_INITIALIZER, .wake = PTHREAD_COND_INITIALIZER};

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static struct in6_addr key_of(const struct sockaddr *sa) {
  struct in6_addr key;
  memset(&key, 0, sizeof key);
  if (sa && sa->sa_family == AF_INET)
    memcpy(&key, &((const struct sockaddr_in *)(const void *)sa)->sin_addr, 4);
  else if (sa && sa->sa_family == AF_INET6)
    key = ((const struct sockaddr_in6 *)(const void *)sa)->sin6_addr;
  return key;
}

/* Close a connection's socket for reading and writing; its own thread
 * then sees the end and lets MHD close it. Called with the lock held. */
static void drop(conn *e) {
  if (e->dropped) return;
  e->dropped = 1;
  shutdown(e->fd, SHUT_RDWR);
  G.dropped++;
}

static void *watchdog(void *arg) {
  (void)arg;
  pthread_mutex_lock(&G.lock);
  while (G.running) {
    double t = now_s();
    for (int i = 0; i < MAX_CONNS; i++) {
      conn *e = &G.conns[i];
      if (e->used && e->in_headers && !e->dropped && t - e->since > G.header_s) drop(e);
    }
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_nsec += 200 * 1000 * 1000;
    if (until.tv_nsec >= 1000000000L) {
      until.tv_sec++;
      until.tv_nsec -= 1000000000L;
    }
    pthread_cond_timedwait(&G.wake, &G.lock, &until);
  }
  pthread_mutex_unlock(&G.lock);
  return NULL;
}

lm_status lm_guard_start(double header_s, lm_diag *diag) {
  pthread_mutex_lock(&G.lock);
  memset(G.conns, 0, sizeof G.conns);
  G.header_s = header_s > 0 ? header_s : 10;
  G.running = 1;
  G.dropped = 0;
  pthread_mutex_unlock(&G.lock);
  if (pthread_create(&G.thread, NULL, watchdog, NULL) != 0) {
    G.running = 0;
    return lm_fail(diag, LM_EIO, NULL, "cannot start the connection watchdog");
  }
  return LM_OK;
}

void lm_guard_stop(void) {
  pthread_mutex_lock(&G.lock);
  int was = G.running;
  G.running = 0;
  pthread_cond_signal(&G.wake);
  pthread_mutex_unlock(&G.lock);
  if (was) pthread_join(G.thread, NULL);
}

enum MHD_Result lm_guard_accept(void *cls, const struct sockaddr *addr, socklen_t addrlen) {
  (void)cls;
  (void)addrlen;
  struct in6_addr key = key_of(addr);
  enum MHD_Result ok = MHD_YES;
  pthread_mutex_lock(&G.lock);
  int held = 0, total = 0;
  conn *oldest = NULL;
  for (int i = 0; i < MAX_CONNS; i++) {
    conn *e = &G.conns[i];
    if (!e->used || e->dropped) continue;
    total++;
    if (memcmp(&e->addr, &key, sizeof key) != 0) continue;
    held++;
    if (e->in_headers && (!oldest || e->since < oldest->since)) oldest = e;
  }
  if (held >= LM_GUARD_PER_ADDRESS || total >= LM_GUARD_MAX_CONNECTIONS) {
    /* Room for the newcomer: the address's longest wait for headers goes
     * (when the whole server is full, anyone's longest wait). */
    if (!oldest && total >= LM_GUARD_MAX_CONNECTIONS)
      for (int i = 0; i < MAX_CONNS; i++) {
        conn *e = &G.conns[i];
        if (e->used && !e->dropped && e->in_headers && (!oldest || e->since < oldest->since)) oldest = e;
      }
    if (oldest) drop(oldest);
    else ok = MHD_NO;
  }
  pthread_mutex_unlock(&G.lock);
  return ok;
}

void lm_guard_notify(void *cls, struct MHD_Connection *c, void **socket_context,
                     enum MHD_ConnectionNotificationCode code) {
  (void)cls;
  pthread_mutex_lock(&G.lock);
  if (code == MHD_CONNECTION_NOTIFY_STARTED) {
    const union MHD_ConnectionInfo *fd = lm_mhd.get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
    const union MHD_ConnectionInfo *ad = lm_mhd.get_connection_info(c, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
    *socket_context = NULL;
    for (int i = 0; fd && i < MAX_CONNS; i++)
      if (!G.conns[i].used) {
        conn *e = &G.conns[i];
        memset(e, 0, sizeof *e);
        e->used = 1;
        e->fd = fd->connect_fd;
        e->in_headers = 1;
        e->since = now_s();
        e->addr = key_of(ad ? ad->client_addr : NULL);
        *socket_context = e;
        break;
      }
  } else if (*socket_context) {
    ((conn *)*socket_context)->used = 0;
    *socket_context = NULL;
  }
  pthread_mutex_unlock(&G.lock);
}

static void mark(struct MHD_Connection *c, int in_headers) {
  const union MHD_ConnectionInfo *info = lm_mhd.get_connection_info(c, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
  if (!info || !info->socket_context) return;
  pthread_mutex_lock(&G.lock);
  conn *e = info->socket_context;
  e->in_headers = in_headers;
  e->since = now_s();
  pthread_mutex_unlock(&G.lock);
}

void lm_guard_headers_done(struct MHD_Connection *c) { mark(c, 0); }
void lm_guard_request_done(struct MHD_Connection *c) { mark(c, 1); }

unsigned long lm_guard_dropped(void) {
  pthread_mutex_lock(&G.lock);
  unsigned long n = G.dropped;
  pthread_mutex_unlock(&G.lock);
  return n;
}

/* ------------------------------------------------------------- checks */

int lm_is_loopback(const struct sockaddr *sa) {
  if (!sa) return 0;
  if (sa->sa_family == AF_INET)
    return (ntohl(((const struct sockaddr_in *)(const void *)sa)->sin_addr.s_addr) >> 24) == 127;
  if (sa->sa_family == AF_INET6) {
    const struct in6_addr *a = &((const struct sockaddr_in6 *)(const void *)sa)->sin6_addr;
    return IN6_IS_ADDR_LOOPBACK(a) || (IN6_IS_ADDR_V4MAPPED(a) && a->s6_addr[12] == 127);
  }
  return 0;
}

int lm_same_secret(const char *a, const char *b) {
  size_t na = strlen(a), nb = strlen(b);
  unsigned diff = (unsigned)(na ^ nb);
  for (size_t i = 0; i < na; i++) diff |= (unsigned char)a[i] ^ (unsigned char)b[i % (nb ? nb : 1)];
  return diff == 0;
}


int lm_host_allowed(const char *host) {
  if (!host) return 1;
  static const char *const names[] = {"127.0.0.1", "localhost", "[::1]"};
  for (size_t i = 0; i < LM_ARRAY_LEN(names); i++) {
    size_t n = strlen(names[i]);
    if (strncasecmp(host, names[i], n) != 0) continue;
    const char *rest = host + n;
    if (!*rest) return 1;
    if (*rest != ':' || !rest[1]) continue;
    size_t digits = strspn(rest + 1, "0123456789");
    if (digits && digits <= 5 && !rest[1 + digits]) return 1;
  }
  return 0;
}

lm_status lm_token_check(const char *token, const char *flag, lm_diag *diag) {
  size_t n = strlen(token), blank = 0;
  for (size_t i = 0; i < n; i++) {
    unsigned char ch = (unsigned char)token[i];
    if (ch < 0x20 || ch == 0x7F)
      return lm_fail_at(diag, LM_EINVAL, NULL, 0, flag, "the token holds a control character (byte %zu)", i + 1);
    if (ch == ' ' || ch == '\t') blank++;
  }
  if (n == 0 || blank == n) return lm_fail_at(diag, LM_EINVAL, NULL, 0, flag, "the token is blank");
  for (size_t i = 0; i < n; i++) {
    unsigned char ch = (unsigned char)token[i];
    if (ch >= 0x80 || ch == ' ' || ch == '"' || ch == ',' || ch == ';' || ch == '\\')
      return lm_fail_at(diag, LM_EINVAL, NULL, 0, flag,
                        "the token may hold only printable ASCII without spaces, quotes, commas, "
                        "semicolons or backslashes (it is sent back as a cookie)");
  }
  return LM_OK;
}
