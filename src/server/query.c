/*
 * query.c - the request parameter parser of `lumen serve`.
 *
 * Input is whatever a client sends, so the parser bounds everything: the
 * raw length, the number of values per parameter, each value's length.
 * Values are percent-decoded into one buffer ('+' is a space); an escape
 * that is not two hex digits, a NUL or another control character is
 * refused. Exact kernel names (kn) become anchored, quoted PCRE2 patterns
 * so that the analysis treats both kinds of kernel filter alike. The
 * canonical form of the selection is the key of the server's caches.
 * norm, weight and clock take their names from the analysis options'
 * tables and compat from the reference versions', as the CLI does.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "server/server.h"

static int hexval(int c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

/* Decode [p, end) into out; returns the length or -1. */
static long decode(const char *p, const char *end, char *out) {
  long n = 0;
  while (p < end) {
    int c = (unsigned char)*p++;
    if (c == '+') c = ' ';
    else if (c == '%') {
      if (end - p < 2) return -1;
      int hi = hexval((unsigned char)p[0]), lo = hexval((unsigned char)p[1]);
      if (hi < 0 || lo < 0) return -1;
      c = hi * 16 + lo;
      p += 2;
    }
    if (c < 0x20 || c == 0x7f) return -1;
    out[n++] = (char)c;
  }
  out[n] = '\0';
  return n;
}

/* A PCRE2 pattern matching exactly `name`: ^\Q...\E$ with any \E inside
 * split out. */
static char *exact_pattern(const char *name) {
  size_t n = strlen(name);
  char *out = lm_malloc(n * 6 + 8), *o = out;
  if (!out) return NULL;
  o += sprintf(o, "^\\Q");
  for (const char *p = name; *p; p++) {
    if (p[0] == '\\' && p[1] == 'E') {
      o += sprintf(o, "\\E\\\\E\\Q");
      p++;
      continue;
    }
    *o++ = *p;
  }
  sprintf(o, "\\E$");
  return out;
}

void lm_query_fini(lm_query *q) {
  lm_free(q->buf);
  for (size_t i = 0; i < q->n_kernels; i++)
    if (q->kernel_owned[i]) lm_free((char *)q->kernels[i]);
  lm_idset_fini(&q->dispatch);
  lm_idset_fini(&q->gpu);
  lm_idset_fini(&q->instance);
  lm_idset_fini(&q->rank);
  memset(q, 0, sizeof *q);
}

static lm_status one(const char **slot, const char *key, const char *value, lm_diag *diag) {
  if (*slot) return lm_fail_at(diag, LM_EINVAL, NULL, 0, key, "parameter '%s' is given twice", key);
  *slot = value;
  return LM_OK;
}

static lm_status not_one_of(const char *key, const char *value, const char *allowed, lm_diag *diag) {
  return lm_fail_at(diag, LM_EINVAL, NULL, 0, key, "%s=%.64s: expected one of %s", key, value, allowed);
}

/* value, one of the names of table, into *slot: once where once is set
 * (0 in *slot is "not given"). */
static lm_status choice(int *slot, int once, const char *key, const char *value, const lm_keyword *table,
                        lm_diag *diag) {
  int v;
  if (!lm_keyword_find(table, value, &v)) {
    lm_buf list = {0};
    lm_keyword_list(table, ", ", ", ", 0, &list);
    lm_status st = not_one_of(key, value, lm_buf_cstr(&list), diag);
    lm_buf_fini(&list);
    return st;
  }
  if (once && *slot) return lm_fail_at(diag, LM_EINVAL, NULL, 0, key, "parameter '%s' is given twice", key);
  *slot = v;
  return LM_OK;
}

/* compat: one of the reference versions lumen reproduces. */
static lm_status compat_version(lm_query *q, const char *value, lm_diag *diag) {
  if (lm_compat_known(value)) return one(&q->compat, "compat", value, diag);
  lm_buf list = {0};
  for (const char *const *v = lm_compat_versions; *v; v++)
    lm_buf_printf(&list, "%s%s", v == lm_compat_versions ? "" : ", ", *v);
  lm_status st = not_one_of("compat", value, lm_buf_cstr(&list), diag);
  lm_buf_fini(&list);
  return st;
}

static const lm_keyword corrected_names[] = {{"0", 0, NULL}, {"1", 1, NULL}, {NULL, 0, NULL}};
static const lm_keyword order_names[] = {{"asc", 0, NULL}, {"desc", 1, NULL}, {NULL, 0, NULL}};

/* A decimal number in [0, max] into *out (once). */
static lm_status number(long *out, const char *key, const char *value, long max, lm_diag *diag) {
  if (*out >= 0) return lm_fail_at(diag, LM_EINVAL, NULL, 0, key, "parameter '%s' is given twice", key);
  long v = 0;
  const char *p = value;
  for (; *p >= '0' && *p <= '9' && v <= max; p++) v = v * 10 + (*p - '0');
  if (p == value || *p || v > max)
    return lm_fail_at(diag, LM_EINVAL, NULL, 0, key, "%s=%.32s: expected a whole number from 0 to %ld", key, value,
                      max);
  *out = v;
  return LM_OK;
}

static int valid_id(const char *v) {
  size_t n = strlen(v);
  return n > 0 && n <= 512;
}

lm_status lm_query_parse(const char *raw, size_t len, lm_query *q, lm_diag *diag) {
  memset(q, 0, sizeof *q);
  q->offset = q->limit = q->sort = -1;
  if (len > LM_QUERY_MAX_BYTES)
    return lm_fail(diag, LM_ELIMIT, NULL, "the query has %zu bytes; at most %d", len, LM_QUERY_MAX_BYTES);
  if (len && memchr(raw, '\0', len)) return lm_fail(diag, LM_EINVAL, NULL, "a NUL in the query");
  q->buf = lm_malloc(len + 1);
  if (!q->buf) return lm_oom(diag, NULL);
  char *out = q->buf;
  const char *p = raw, *end = raw + len;
  lm_status st = LM_OK;
  while (p < end && st == LM_OK) {
    const char *amp = memchr(p, '&', (size_t)(end - p));
    const char *stop = amp ? amp : end;
    if (stop == p) {
      p = stop + 1;
      continue;
    }
    const char *eq = memchr(p, '=', (size_t)(stop - p));
    const char *kend = eq ? eq : stop;
    char key[32];
    long kn = (kend - p) < (long)sizeof key ? decode(p, kend, key) : -1;
    if (kn <= 0) {
      st = lm_fail(diag, LM_EINVAL, NULL, "a malformed parameter name");
      break;
    }
    char *value = out;
    long vn = eq ? decode(eq + 1, stop, value) : (value[0] = '\0', 0);
    if (vn < 0) {
      st = lm_fail_at(diag, LM_EINVAL, NULL, 0, key, "parameter '%s': a bad %%-escape or a control character", key);
      break;
    }
    out += vn + 1;
    p = amp ? amp + 1 : end;
    if (strcmp(key, "w") == 0 || strcmp(key, "base") == 0) {
      if (!valid_id(value))
        st = lm_fail_at(diag, LM_EINVAL, NULL, 0, key, "%s: an empty or over-long id", key);
      else st = one(key[0] == 'w' ? &q->w : &q->base, key, value, diag);
    } else if (strcmp(key, "k") == 0 || strcmp(key, "kn") == 0) {
      if (q->n_kernels >= LM_QUERY_MAX_ITEMS || vn > 1024 || vn == 0) {
        st = lm_fail_at(diag, LM_ELIMIT, NULL, 0, key, "%s: at most %d kernel filters of 1 to 1024 characters", key,
                        LM_QUERY_MAX_ITEMS);
      } else if (key[1] == 'n') {
        char *pat = exact_pattern(value);
        if (!pat)
          st = lm_oom(diag, NULL);
        else {
          q->kernel_owned[q->n_kernels] = 1;
          q->kernels[q->n_kernels++] = pat;
        }
      } else {
        q->kernels[q->n_kernels++] = value;
      }
    } else if (strcmp(key, "r") == 0) {
      if (q->n_regions >= LM_QUERY_MAX_ITEMS || vn == 0 || vn > 256)
        st = lm_fail_at(diag, LM_ELIMIT, NULL, 0, key, "r: at most %d regions of 1 to 256 characters",
                        LM_QUERY_MAX_ITEMS);
      else q->regions[q->n_regions++] = value;
    } else if (strcmp(key, "b") == 0) {
      /* comma lists, like -b */
      char *save = NULL;
      for (char *tok = strtok_r(value, ",", &save); tok && st == LM_OK; tok = strtok_r(NULL, ",", &save)) {
        if (q->n_blocks >= LM_ARRAY_LEN(q->blocks) || strlen(tok) > 256)
          st = lm_fail_at(diag, LM_ELIMIT, NULL, 0, key, "b: at most %zu items", LM_ARRAY_LEN(q->blocks));
        else q->blocks[q->n_blocks++] = tok;
      }
    } else if (strcmp(key, "d") == 0 || strcmp(key, "g") == 0 || strcmp(key, "i") == 0 ||
               strcmp(key, "rank") == 0) {
      lm_idset *set = key[0] == 'd' ? &q->dispatch : key[0] == 'g' ? &q->gpu : key[0] == 'r' ? &q->rank : &q->instance;
      const char *flag = key[0] == 'd' ? "d" : key[0] == 'g' ? "g" : key[0] == 'r' ? "rank" : "i";
      if (vn > 1024 || set->n > 256)
        st = lm_fail_at(diag, LM_ELIMIT, NULL, 0, key, "%s: too long", key);
      else if (vn) st = lm_idset_parse(set, value, flag, diag);
    } else if (strcmp(key, "norm") == 0) {
      int v = (int)q->norm;
      st = choice(&v, 1, key, value, lm_norm_names, diag);
      q->norm = (lm_norm_kind)v;
    } else if (strcmp(key, "compat") == 0) {
      st = compat_version(q, value, diag);
    } else if (strcmp(key, "weight") == 0) {
      int v = (int)q->weight;
      st = choice(&v, 1, key, value, lm_weight_names, diag);
      q->weight = (lm_weight_kind)v;
    } else if (strcmp(key, "clock") == 0) {
      int v = (int)q->clock;
      st = choice(&v, 1, key, value, lm_clock_names, diag);
      q->clock = (lm_clock_kind)v;
    } else if (strcmp(key, "corrected") == 0) {
      st = choice(&q->corrected, 0, key, value, corrected_names, diag);
    } else if (strcmp(key, "t") == 0) {
      if (vn == 0 || vn > 32)
        st = lm_fail_at(diag, LM_EINVAL, NULL, 0, key, "t: a table id such as 0.2");
      else st = one(&q->table, key, value, diag);
    } else if (strcmp(key, "offset") == 0) {
      st = number(&q->offset, key, value, LM_QUERY_MAX_OFFSET, diag);
    } else if (strcmp(key, "limit") == 0) {
      st = number(&q->limit, key, value, LM_QUERY_MAX_LIMIT, diag);
      if (st == LM_OK && q->limit == 0)
        st = lm_fail_at(diag, LM_EINVAL, NULL, 0, key, "limit=0: expected 1 to %d rows", LM_QUERY_MAX_LIMIT);
    } else if (strcmp(key, "sort") == 0) {
      st = number(&q->sort, key, value, 4096, diag);
    } else if (strcmp(key, "order") == 0) {
      int ignored = 0;
      st = choice(&ignored, 0, key, value, order_names, diag);
      if (st == LM_OK) st = one(&q->order, key, value, diag);
    } else if (strcmp(key, "filter") == 0) {
      if (vn > 256)
        st = lm_fail_at(diag, LM_ELIMIT, NULL, 0, key, "filter: at most 256 characters");
      else st = one(&q->filter, key, value, diag);
    } else if (strcmp(key, "m") == 0) {
      if (vn == 0 || vn > 64)
        st = lm_fail_at(diag, LM_EINVAL, NULL, 0, key, "m: a metric row id such as 2.1.0");
      else st = one(&q->metric, key, value, diag);
    } else if (strcmp(key, "token") == 0) {
      st = one(&q->token, key, value, diag);
    } else if (strcmp(key, "_") == 0) {
      /* cache buster: ignored */
    } else {
      st = lm_fail_at(diag, LM_EINVAL, NULL, 0, key, "unknown parameter '%.31s'", key);
    }
  }
  if (st != LM_OK) return st;
  /* The canonical selection (token excluded). */
  lm_buf b = {0};
  const char *norm = lm_norm_kind_name(q->norm), *weight = lm_weight_kind_name(q->weight),
             *clock = lm_clock_kind_name(q->clock);
  lm_buf_printf(&b, "w=%s|base=%s|norm=%s|weight=%s|clock=%s|c=%d|compat=%s", q->w ? q->w : "",
                q->base ? q->base : "", norm ? norm : "", weight ? weight : "", clock ? clock : "", q->corrected,
                q->compat ? q->compat : "");
  for (size_t i = 0; i < q->n_kernels; i++) lm_buf_printf(&b, "|k=%s", q->kernels[i]);
  for (size_t i = 0; i < q->n_regions; i++) lm_buf_printf(&b, "|r=%s", q->regions[i]);
  for (size_t i = 0; i < q->n_blocks; i++) lm_buf_printf(&b, "|b=%s", q->blocks[i]);
  const lm_idset *sets[4] = {&q->dispatch, &q->gpu, &q->instance, &q->rank};
  for (int s = 0; s < 4; s++)
    for (size_t i = 0; i < sets[s]->n; i++)
      lm_buf_printf(&b, "|%c=%d:%lld:%lld:%lld", "dgiR"[s], sets[s]->items[i].kind, (long long)sets[s]->items[i].a,
                    (long long)sets[s]->items[i].b, (long long)sets[s]->items[i].step);
  if (b.failed || b.len >= sizeof q->canonical)
    st = lm_fail(diag, LM_ELIMIT, NULL, "query too large");
  else memcpy(q->canonical, b.data ? b.data : "", b.len + 1);
  lm_buf_fini(&b);
  return st;
}
