/*
 * mangle.c - Itanium C++ name mangling for the simulated SDK (test
 * infrastructure): a real SDK names kernels by their mangled code object
 * symbols ("_Z7vecCopyPdS_S_ii.kd") while a recording holds the demangled
 * names, so the simulation hands out the mangled symbol and lumen's
 * demangling gives the name back. A small grammar is covered: plain or
 * namespace-qualified names, then parameters of builtin types, class names,
 * const, pointers, references, substitutions (S_, S0_, ...) of repeated
 * non-builtin types, and " [clone .kd]" as ".kd". Anything else is refused,
 * and the simulation reports that name as recorded.
 */
#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "sim/simsdk.h"

#define MAX_SUBS 64

typedef struct mangler {
  char subs[MAX_SUBS][256]; /* canonical manglings of the candidates, in order */
  int n_subs;
  char out[4096];
  size_t len;
  int failed;
} mangler;

static void emit(mangler *m, const char *s) {
  size_t n = strlen(s);
  if (m->len + n + 1 > sizeof m->out) {
    m->failed = 1;
    return;
  }
  memcpy(m->out + m->len, s, n + 1);
  m->len += n;
}

/* The reference to candidate i: S_, S0_, ..., S9_, SA_, ..., SZ_, S10_. */
static void sub_ref(int i, char *out, size_t cap) {
  if (i == 0) {
    snprintf(out, cap, "S_");
    return;
  }
  char digits[16];
  int n = 0;
  for (unsigned v = (unsigned)(i - 1); n == 0 || v; v /= 36) digits[n++] = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ"[v % 36];
  size_t at = 0;
  out[at++] = 'S';
  while (n && at + 2 < cap) out[at++] = digits[--n];
  out[at++] = '_';
  out[at] = '\0';
}

static int find_sub(const mangler *m, const char *canon) {
  for (int i = 0; i < m->n_subs; i++)
    if (strcmp(m->subs[i], canon) == 0) return i;
  return -1;
}

static void add_sub(mangler *m, const char *canon) {
  if (m->n_subs < MAX_SUBS) snprintf(m->subs[m->n_subs++], sizeof m->subs[0], "%s", canon);
  else m->failed = 1;
}

static const struct {
  const char *words, *code;
} builtins[] = {{"void", "v"},
                {"bool", "b"},
                {"char", "c"},
                {"signed char", "a"},
                {"unsigned char", "h"},
                {"short", "s"},
                {"short int", "s"},
                {"unsigned short", "t"},
                {"unsigned short int", "t"},
                {"int", "i"},
                {"signed", "i"},
                {"signed int", "i"},
                {"unsigned", "j"},
                {"unsigned int", "j"},
                {"long", "l"},
                {"long int", "l"},
                {"unsigned long", "m"},
                {"unsigned long int", "m"},
                {"long long", "x"},
                {"long long int", "x"},
                {"unsigned long long", "y"},
                {"unsigned long long int", "y"},
                {"float", "f"},
                {"double", "d"},
                {"long double", "e"}};

static int is_ident(const char *s) {
  if (!*s || !(isalpha((unsigned char)*s) || *s == '_')) return 0;
  for (; *s; s++)
    if (!isalnum((unsigned char)*s) && *s != '_') return 0;
  return 1;
}

/* One parameter ("char const**", "const float*", "MyType&"). */
static void param(mangler *m, const char *text, size_t n) {
  char words[256] = "", mods[64];
  size_t n_mods = 0;
  int leading_const = 0;
  const char *p = text, *end = text + n;
  while (p < end && !m->failed) {
    while (p < end && *p == ' ') p++;
    if (p == end) break;
    if (*p == '*' || *p == '&') {
      if (!words[0] || n_mods + 1 >= sizeof mods) m->failed = 1;
      else mods[n_mods++] = *p == '*' ? 'P' : 'R';
      p++;
      continue;
    }
    const char *w = p;
    while (p < end && (isalnum((unsigned char)*p) || *p == '_')) p++;
    if (p == w) {
      m->failed = 1;
      break;
    }
    size_t wl = (size_t)(p - w);
    if (wl == 5 && strncmp(w, "const", 5) == 0) {
      if (!words[0]) leading_const = 1;
      else if (n_mods + 1 < sizeof mods) mods[n_mods++] = 'K';
      continue;
    }
    if (n_mods) { /* a type word after a pointer */
      m->failed = 1;
      break;
    }
    size_t at = strlen(words);
    if (at + wl + 2 >= sizeof words) {
      m->failed = 1;
      break;
    }
    snprintf(words + at, sizeof words - at, "%s%.*s", at ? " " : "", (int)wl, w);
  }
  if (m->failed || !words[0]) {
    m->failed = 1;
    return;
  }
  char canon[256] = "", emitted[256] = "";
  for (size_t i = 0; i < sizeof builtins / sizeof *builtins && !canon[0]; i++)
    if (strcmp(builtins[i].words, words) == 0) {
      snprintf(canon, sizeof canon, "%s", builtins[i].code);
      snprintf(emitted, sizeof emitted, "%s", builtins[i].code);
    }
  if (!canon[0]) { /* a class named by one identifier: a candidate */
    if (!is_ident(words)) {
      m->failed = 1;
      return;
    }
    if (snprintf(canon, sizeof canon, "%zu%s", strlen(words), words) >= (int)sizeof canon) {
      m->failed = 1;
      return;
    }
    int s = find_sub(m, canon);
    if (s >= 0) sub_ref(s, emitted, sizeof emitted);
    else {
      snprintf(emitted, sizeof emitted, "%s", canon);
      add_sub(m, canon);
    }
  }
  /* Qualifiers and declarators, innermost first; each composite type is a
   * candidate once complete. */
  char all[66];
  size_t n_all = 0;
  if (leading_const) all[n_all++] = 'K';
  for (size_t i = 0; i < n_mods; i++) all[n_all++] = mods[i];
  for (size_t i = 0; i < n_all && !m->failed; i++) {
    char next_canon[256], next_emitted[256];
    if (snprintf(next_canon, sizeof next_canon, "%c%s", all[i], canon) >= (int)sizeof next_canon) {
      m->failed = 1;
      return;
    }
    int s = find_sub(m, next_canon);
    if (s >= 0) sub_ref(s, next_emitted, sizeof next_emitted);
    else {
      snprintf(next_emitted, sizeof next_emitted, "%c%.250s", all[i], emitted);
      add_sub(m, next_canon);
    }
    memcpy(canon, next_canon, sizeof canon);
    memcpy(emitted, next_emitted, sizeof emitted);
  }
  emit(m, emitted);
}

int simsdk_mangle(const char *name, char *out, size_t cap) {
  static const char clone_kd[] = " [clone .kd]";
  mangler m;
  memset(&m, 0, sizeof m);
  const char *open = strchr(name, '(');
  size_t len = strlen(name), suffix = 0;
  if (len > sizeof clone_kd - 1 && strcmp(name + len - (sizeof clone_kd - 1), clone_kd) == 0)
    suffix = sizeof clone_kd - 1;
  const char *close = len > suffix ? name + len - suffix - 1 : name;
  const char *again = open ? strchr(open + 1, '(') : NULL;
  if (!open || close <= open || *close != ')' || (again && again < close)) return -1;
  /* The function's name: identifiers joined by "::". */
  char qname[512];
  size_t qn = (size_t)(open - name);
  if (qn == 0 || qn >= sizeof qname) return -1;
  memcpy(qname, name, qn);
  qname[qn] = '\0';
  char *parts[16];
  int n_parts = 0;
  for (char *save = NULL, *t = strtok_r(qname, ":", &save); t; t = strtok_r(NULL, ":", &save)) {
    if (!is_ident(t) || n_parts == 16) return -1;
    parts[n_parts++] = t;
  }
  if (n_parts == 0 || strstr(name, ":::") || (qn >= 1 && name[qn - 1] == ':') || name[0] == ':') return -1;
  char piece[300];
  emit(&m, "_Z");
  if (n_parts > 1) emit(&m, "N");
  char prefix[256] = "";
  for (int i = 0; i < n_parts; i++) {
    snprintf(piece, sizeof piece, "%zu%s", strlen(parts[i]), parts[i]);
    emit(&m, piece);
    /* Namespace prefixes are candidates; the function's own name is not. */
    size_t at = strlen(prefix);
    if (snprintf(prefix + at, sizeof prefix - at, "%s", piece) >= (int)(sizeof prefix - at)) return -1;
    if (i + 1 < n_parts) add_sub(&m, prefix);
  }
  if (n_parts > 1) emit(&m, "E");
  /* Parameters, split at the commas (there are no templates to nest). */
  const char *p = open + 1;
  size_t n_params = 0;
  while (p < close && !m.failed) {
    const char *comma = memchr(p, ',', (size_t)(close - p));
    const char *stop = comma ? comma : close;
    param(&m, p, (size_t)(stop - p));
    n_params++;
    p = comma ? comma + 1 : close;
  }
  if (n_params == 0) emit(&m, "v");
  if (suffix) emit(&m, ".kd");
  if (m.failed || m.len + 1 > cap) return -1;
  memcpy(out, m.out, m.len + 1);
  return 0;
}
