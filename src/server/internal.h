/*
 * internal.h - what the server's files share and nothing outside them
 * sees: the connection guard (guard.c) that bounds how long a client may
 * take to send its headers and keeps slots free for new clients, and the
 * request checks that do not need a workload (Host header, token).
 */
#ifndef LUMEN_SERVER_INTERNAL_H
#define LUMEN_SERVER_INTERNAL_H

#include <microhttpd.h>
#include <sys/socket.h>

#include "base/base.h"

/* Connections one address may hold; when it is reached, the address's
 * oldest connection still sending headers is dropped for the new one. */
#define LM_GUARD_PER_ADDRESS 64
/* The most connections overall (MHD's limit is set a little higher, so
 * that the guard decides). */
#define LM_GUARD_MAX_CONNECTIONS 512

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

#endif
