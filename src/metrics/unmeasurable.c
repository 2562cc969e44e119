/*
 * unmeasurable.c - what an architecture's counters cannot measure at all
 * (arch.yaml's not_measurable): read into the builder, and looked up by
 * the counter a view needs. A statement names the quantity, says why, and
 * may list patterns of the counters the chip lacks for it; a pattern that
 * matches a counter of the architecture's own list is an error, so a
 * statement cannot claim a counter the chip has is missing.
 */
#include <string.h>

#include "metrics/compile_internal.h"

/* Whether text matches pattern, where '*' stands for any characters. */
static int matches(const char *pattern, size_t n, const char *text) {
  const char *star = NULL, *retry = NULL;
  const char *p = pattern, *end = pattern + n;
  while (*text) {
    if (p < end && *p == '*') {
      star = ++p;
      retry = text;
    } else if (p < end && *p == *text) {
      p++;
      text++;
    } else if (star) {
      p = star;
      text = ++retry;
    } else {
      return 0;
    }
  }
  while (p < end && *p == '*') p++;
  return p == end;
}

/* Whether one of the space-separated patterns matches counter. */
static int any_matches(const char *patterns, const char *counter) {
  for (const char *p = patterns; *p;) {
    while (*p == ' ') p++;
    size_t n = strcspn(p, " ");
    if (n && matches(p, n, counter)) return 1;
    p += n;
  }
  return 0;
}

/* The text of scalar y of statement item, or NULL with the error recorded
 * (required says whether a missing key is one). */
static const char *text_of(builder *b, const char *file, const ynode *item, const char *key, int required) {
  const ynode *y = lm_yaml_get(item, key);
  if (!y) {
    if (required)
      lm_metrics_error_at(b, file, item->line, item->column, key,
                          "a not_measurable statement needs '%s'", key);
    return NULL;
  }
  if (y->type != Y_SCALAR || !y->text[0]) {
    lm_metrics_error_at(b, file, y->line, y->column, key, "expected a non-empty single value");
    return NULL;
  }
  return y->text;
}

/* The counter patterns of one statement, joined by spaces into *out;
 * each checked against the architecture's counters. Returns b->status. */
static lm_status read_patterns(builder *b, const char *file, const ynode *list, const char **out) {
  lm_buf joined = {0};
  if (list->type != Y_SEQ) {
    lm_metrics_error_at(b, file, list->line, list->column, "counters",
                        "expected a list of counter names or patterns");
    goto done;
  }
  for (size_t i = 0; i < list->n_items; i++) {
    const ynode *y = list->items[i];
    if (y->type != Y_SCALAR || !y->text[0] || strchr(y->text, ' ')) {
      lm_metrics_error_at(b, file, y->line, y->column, "counters",
                          "expected a counter name or pattern ('*': any characters)");
      goto done;
    }
    for (int32_t c = 0; c < b->counters.n; c++)
      if (matches(y->text, strlen(y->text), b->counters.v[c])) {
        lm_metrics_error_at(b, file, y->line, y->column, "counters",
                            "'%s' matches %s, a counter of this architecture: a statement "
                            "lists only counters the chip lacks", y->text, b->counters.v[c]);
        goto done;
      }
    lm_buf_printf(&joined, "%s%s", i ? " " : "", y->text);
  }
  if (joined.failed || !(*out = lm_arena_strdup(b->arena, lm_buf_cstr(&joined)))) b->status = LM_ENOMEM;
done:
  lm_buf_fini(&joined);
  return b->status;
}

lm_status lm_metrics_load_unmeasurable(builder *b, const char *file, const ynode *list) {
  static const char *const keys[] = {"what", "why", "counters", NULL};
  if (list->type != Y_SEQ)
    return lm_metrics_error_at(b, file, list->line, list->column, "not_measurable",
                               "expected a list of statements (what, why, counters)"), b->status;
  for (size_t i = 0; i < list->n_items; i++) {
    const ynode *item = list->items[i];
    if (item->type != Y_MAP)
      return lm_metrics_error_at(b, file, item->line, item->column, "not_measurable",
                                 "a statement is a mapping of what, why and counters"), b->status;
    for (size_t k = 0; k < item->n_items; k += 2) {
      const ynode *key = item->items[k];
      int known = 0;
      for (const char *const *a = keys; *a && !known; a++) known = strcmp(*a, key->text) == 0;
      if (!known)
        return lm_metrics_error_at(b, file, key->line, key->column, key->text,
                                   "unknown key in a not_measurable statement (known: what, why, counters)"),
               b->status;
    }
    const char *what = text_of(b, file, item, "what", 1);
    const char *why = what ? text_of(b, file, item, "why", 1) : NULL;
    if (!why) return b->status;
    lm_unmeasurable u = {lm_arena_strdup(b->arena, what), lm_arena_strdup(b->arena, why), ""};
    const ynode *patterns = lm_yaml_get(item, "counters");
    if (patterns && read_patterns(b, file, patterns, &u.counters) != LM_OK) return b->status;
    if (!u.what || !u.why || !VEC_PUSH(b, b->unmeasurable, u)) return b->status = LM_ENOMEM;
  }
  return b->status;
}

const lm_unmeasurable *lm_catalog_unmeasurable(const lm_catalog *catalog, const char *counter) {
  if (!catalog || !counter) return NULL;
  /* Readers keep a counter summed over its instances as NAME_sum. */
  size_t n = strlen(counter);
  char base[256];
  if (n > 4 && n - 4 < sizeof base && strcmp(counter + n - 4, "_sum") == 0) {
    memcpy(base, counter, n - 4);
    base[n - 4] = '\0';
    counter = base;
  }
  for (int32_t i = 0; i < catalog->n_unmeasurable; i++)
    if (any_matches(catalog->unmeasurable[i].counters, counter)) return &catalog->unmeasurable[i];
  return NULL;
}
