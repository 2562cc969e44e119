/*
 * err.c - status texts and diagnostics.
 *
 * A diagnostic is a fixed-size struct so that filling it can never fail:
 * the error path must not allocate.
 */
#include <stdio.h>
#include <string.h>

#include "base/base.h"

const char *lm_strerror(lm_status status) {
  switch (status) {
  case LM_OK: return "ok";
  case LM_ENOMEM: return "out of memory";
  case LM_EIO: return "input/output error";
  case LM_EPARSE: return "parse error";
  case LM_EINVAL: return "invalid argument";
  case LM_ENOTFOUND: return "not found";
  case LM_EDATA: return "unusable data";
  case LM_EARCH: return "unsupported architecture";
  case LM_ELIMIT: return "size limit exceeded";
  }
  return "unknown error";
}

static void copy_field(char *dst, size_t cap, const char *src) {
  if (!src) {
    dst[0] = '\0';
    return;
  }
  size_t n = strlen(src);
  if (n >= cap) n = cap - 1;
  memcpy(dst, src, n);
  dst[n] = '\0';
}

/* Fill diag from a va_list: the one body behind every form. */
#if defined(__GNUC__)
__attribute__((format(printf, 7, 0)))
#endif
static lm_status diag_vset(lm_diag *diag, lm_status status, const char *file, long line, long column,
                           const char *field, const char *fmt, va_list ap) {
  if (!diag) return status;
  diag->status = status;
  copy_field(diag->file, sizeof diag->file, file);
  copy_field(diag->field, sizeof diag->field, field);
  diag->line = line;
  diag->column = column;
  vsnprintf(diag->message, sizeof diag->message, fmt, ap);
  return status;
}

lm_status lm_diag_set(lm_diag *diag, lm_status status, const char *file, long line, long column,
                      const char *field, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  diag_vset(diag, status, file, line, column, field, fmt, ap);
  va_end(ap);
  return status;
}

lm_status lm_fail(lm_diag *diag, lm_status status, const char *file, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  diag_vset(diag, status, file, 0, 0, NULL, fmt, ap);
  va_end(ap);
  return status;
}

lm_status lm_fail_at(lm_diag *diag, lm_status status, const char *file, long line, const char *field,
                     const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  diag_vset(diag, status, file, line, 0, field, fmt, ap);
  va_end(ap);
  return status;
}

lm_status lm_oom(lm_diag *diag, const char *file) { return lm_fail(diag, LM_ENOMEM, file, "out of memory"); }

void lm_diag_clear(lm_diag *diag) {
  if (!diag) return;
  diag->status = LM_OK;
  diag->file[0] = '\0';
  diag->field[0] = '\0';
  diag->message[0] = '\0';
  diag->line = 0;
  diag->column = 0;
}

char *lm_diag_format(const lm_diag *diag, char *out, size_t cap) {
  if (cap == 0) return out;
  size_t at = 0;
  int n;
#define ADD(...)                                                    \
  do {                                                              \
    if (at < cap) {                                                 \
      n = snprintf(out + at, cap - at, __VA_ARGS__);                \
      if (n > 0) at += (size_t)n < cap - at ? (size_t)n : cap - at; \
    }                                                               \
  } while (0)
  out[0] = '\0';
  if (diag->file[0]) {
    ADD("%s", diag->file);
    if (diag->line > 0) ADD(":%ld", diag->line);
    if (diag->column > 0) ADD(":%ld", diag->column);
    ADD(": ");
  }
  if (diag->field[0]) ADD("field '%s': ", diag->field);
  ADD("%s", diag->message[0] ? diag->message : lm_strerror(diag->status));
#undef ADD
  /* Keep the diagnostic on one line whatever the message held. */
  for (char *p = out; *p; p++)
    if (*p == '\n' || *p == '\r') *p = ' ';
  return out;
}
