/*
 * idset.c - sets of non-negative integers written as comma lists of N,
 * START:STOP[:STEP] and >N: dispatch ids, GPU ids and instance numbers, in
 * lumen analyze, in the server's queries and inside the profiled
 * application alike.
 */
#include <ctype.h>
#include <stdint.h>

#include "base/base.h"

static int parse_int(const char **p, int64_t *out) {
  const char *s = *p;
  if (!isdigit((unsigned char)*s)) return 0;
  int64_t v = 0;
  while (isdigit((unsigned char)*s)) {
    if (v > (INT64_MAX - 9) / 10) return 0;
    v = v * 10 + (*s - '0');
    s++;
  }
  *p = s;
  *out = v;
  return 1;
}

lm_status lm_idset_parse(lm_idset *set, const char *text, const char *flag, lm_diag *diag) {
  const char *p = text;
  for (;;) {
    while (*p == ' ') p++;
    lm_idset_item item = {0, 0, -1, 1};
    if (*p == '>') {
      p++;
      while (*p == ' ') p++;
      item.kind = 2;
      if (!parse_int(&p, &item.a)) goto bad;
    } else {
      int64_t a = -1;
      int have_a = parse_int(&p, &a);
      if (*p == ':') {
        item.kind = 1;
        item.a = have_a ? a : 0;
        p++;
        int64_t b = -1;
        if (parse_int(&p, &b)) item.b = b;
        if (*p == ':') {
          p++;
          int64_t step;
          if (parse_int(&p, &step)) {
            if (step == 0) goto bad;
            item.step = step;
          }
        }
      } else {
        if (!have_a) goto bad;
        item.a = a;
      }
    }
    while (*p == ' ') p++;
    lm_idset_item *grown = lm_realloc(set->items, (set->n + 1) * sizeof *grown);
    if (!grown) return lm_oom(diag, NULL);
    set->items = grown;
    set->items[set->n++] = item;
    if (*p == ',') {
      p++;
      continue;
    }
    if (*p == '\0') return LM_OK;
    goto bad;
  }
bad:
  return lm_fail(diag, LM_EINVAL, NULL,
                 "%s '%s': expected numbers, ranges START:STOP[:STEP] or >N, "
                 "separated by commas",
                 flag, text);
}

void lm_idset_fini(lm_idset *set) {
  lm_free(set->items);
  set->items = NULL;
  set->n = 0;
}

int lm_idset_has(const lm_idset *set, int64_t v) {
  for (size_t i = 0; i < set->n; i++) {
    const lm_idset_item *it = &set->items[i];
    switch (it->kind) {
    case 0: if (v == it->a) return 1; break;
    case 2: if (v > it->a) return 1; break;
    default:
      if (v >= it->a && (it->b < 0 || v < it->b) && (v - it->a) % it->step == 0) return 1;
      break;
    }
  }
  return 0;
}

