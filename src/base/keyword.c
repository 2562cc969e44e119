/*
 * keyword.c - tables of the names an option accepts. A table is searched
 * linearly: the sets are a handful of names, looked up once per command
 * or request, and the table order is the order messages list them in.
 */
#include <string.h>

#include "base/base.h"

int lm_keyword_find(const lm_keyword *table, const char *name, int *value) {
  if (!name) return 0;
  for (const lm_keyword *c = table; c->name; c++)
    if (strcmp(c->name, name) == 0) {
      *value = c->value;
      return 1;
    }
  return 0;
}

const char *lm_keyword_name(const lm_keyword *table, int value) {
  for (const lm_keyword *c = table; c->name; c++)
    if (c->value == value) return c->name;
  return NULL;
}

void lm_keyword_list(const lm_keyword *table, const char *sep, const char *last_sep, int with_what,
                     lm_buf *out) {
  for (const lm_keyword *c = table; c->name; c++) {
    if (c != table) lm_buf_puts(out, c[1].name ? sep : last_sep);
    lm_buf_puts(out, c->name);
    if (with_what && c->what) lm_buf_printf(out, " (%s)", c->what);
  }
}
