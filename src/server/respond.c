/*
 * respond.c - how `lumen serve` answers: every response carries the same
 * security headers, JSON is repaired to valid UTF-8 before it leaves, and
 * every error is a JSON object {"error", "status"} whose message never
 * names a file of the server. One place for these rules keeps the
 * endpoints from drifting apart.
 */
#include <cjson/cJSON.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "report/report.h"
#include "server/internal.h"

double lm_server_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Queue a response with the headers every answer carries; header (or
 * NULL, e.g. "Set-Cookie") is added with value. */
enum MHD_Result lm_server_send_header(struct MHD_Connection *c, unsigned status, const char *type,
                                        const void *body, size_t len, int copy, int cacheable, const char *header,
                                        const char *value) {
  struct MHD_Response *r = lm_mhd.create_response_from_buffer(
      len, (void *)body, copy ? MHD_RESPMEM_MUST_COPY : MHD_RESPMEM_PERSISTENT);
  if (!r) return MHD_NO;
  lm_mhd.add_response_header(r, "Content-Type", type);
  lm_mhd.add_response_header(r, "X-Content-Type-Options", "nosniff");
  lm_mhd.add_response_header(r, "Referrer-Policy", "no-referrer");
  lm_mhd.add_response_header(r, "X-Frame-Options", "DENY");
  lm_mhd.add_response_header(r, "Content-Security-Policy",
                          "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; "
                          "connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'");
  lm_mhd.add_response_header(r, "Cache-Control", cacheable ? "private, max-age=300" : "no-store");
  if (header) lm_mhd.add_response_header(r, header, value);
  enum MHD_Result ok = lm_mhd.queue_response(c, status, r);
  lm_mhd.destroy_response(r);
  return ok;
}

enum MHD_Result lm_server_send(struct MHD_Connection *c, unsigned status, const char *type, const void *body,
                                 size_t len, int copy, int cacheable) {
  return lm_server_send_header(c, status, type, body, len, copy, cacheable, NULL, NULL);
}

/* cJSON's text of o, repaired to valid UTF-8 (names come from the data
 * byte for byte); free with free(). NULL when out of memory. */
char *lm_server_print_json(const cJSON *o) {
  char *text = cJSON_PrintUnformatted(o);
  if (!text) return NULL;
  char *fixed = lm_json_utf8_fix(text);
  if (!fixed) return text;
  cJSON_free(text);
  return fixed;
}

/* An error answer: {"error": message, "status": code}, with header (or
 * NULL) set to value. */
enum MHD_Result lm_server_send_error_header(struct MHD_Connection *c, unsigned status, const char *header,
                                         const char *value, const char *msg) {
  cJSON *o = cJSON_CreateObject();
  cJSON_AddStringToObject(o, "error", msg);
  cJSON_AddNumberToObject(o, "status", status);
  char *text = lm_server_print_json(o);
  cJSON_Delete(o);
  enum MHD_Result ok = lm_server_send_header(c, status, "application/json", text ? text : "{}", text ? strlen(text) : 2,
                                        1, 0, header, value);
  lm_free(text);
  return ok;
}

enum MHD_Result lm_server_send_error(struct MHD_Connection *c, unsigned status, const char *fmt, ...) {
  char msg[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  return lm_server_send_error_header(c, status, NULL, NULL, msg);
}

enum MHD_Result lm_server_send_json(struct MHD_Connection *c, cJSON *o) {
  char *text = lm_server_print_json(o);
  if (!text) return lm_server_send_error(c, MHD_HTTP_INTERNAL_SERVER_ERROR, "out of memory");
  enum MHD_Result ok = lm_server_send(c, MHD_HTTP_OK, "application/json", text, strlen(text), 1, 0);
  lm_free(text);
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

enum MHD_Result lm_server_send_diag(struct MHD_Connection *c, const lm_diag *d) {
  char line[2048];
  /* The message names the problem, never a file of the server. */
  lm_diag copy = *d;
  copy.file[0] = '\0';
  lm_diag_format(&copy, line, sizeof line);
  return lm_server_send_error(c, status_of(d->status), "%s", line);
}
