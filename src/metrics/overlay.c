/*
 * overlay.c - reference-version overlays over definition trees.
 *
 * lumen reproduces more than one version of the reference tool. Each
 * metric is defined once, in the semantics of the oldest version (3.0);
 * what a newer version changes is written as an overlay file, a YAML
 * document with an `overlay: '<version>'` key that patches the parsed
 * definition trees before they are compiled: a table's title, columns or
 * rows, one row's keys, a quantity, the default normalization, a new or
 * removed table. Overlays of every version up to the one asked for are
 * applied in version order, so a next version is one more small overlay.
 * The format is described in docs/metric-format.md, section 11.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "metrics/internal.h"

const char *const lm_compat_versions[] = {"3.0", "3.3", NULL};

int lm_compat_cmp(const char *a, const char *b) {
  long am = strtol(a, NULL, 10), bm = strtol(b, NULL, 10);
  const char *ad = strchr(a, '.'), *bd = strchr(b, '.');
  long an = ad ? strtol(ad + 1, NULL, 10) : 0,
       bn = bd ? strtol(bd + 1, NULL, 10) : 0;
  if (am != bm)
    return am < bm ? -1 : 1;
  return an < bn ? -1 : an > bn;
}

int lm_compat_known(const char *version) {
  for (const char *const *v = lm_compat_versions; *v; v++)
    if (strcmp(*v, version) == 0)
      return 1;
  return 0;
}

typedef struct patcher {
  lm_arena *arena;
  lm_diag *diag;
  const char *file; /* the overlay being applied */
  ynode **roots;    /* the definition files (panels, quantities, arch) */
  const char *const *names;
  size_t n;
} patcher;

static lm_status fail_at(patcher *p, const ynode *y, const char *field,
                         const char *msg, const char *what) {
  return lm_diag_set(p->diag, LM_EPARSE, p->file, y ? y->line : 1,
                     y ? y->column : 1, field, "%s%s%s", msg, what ? ": " : "",
                     what ? what : "");
}

static ynode *map_get(ynode *map, const char *key) {
  if (!map || map->type != Y_MAP)
    return NULL;
  for (size_t i = 0; i + 1 < map->n_items; i += 2)
    if (strcmp(map->items[i]->text, key) == 0)
      return map->items[i + 1];
  return NULL;
}

/* Make room for one more item at position at (0..n_items). */
static lm_status insert_items(patcher *p, ynode *parent, size_t at,
                              ynode *const *items, size_t k) {
  ynode **grown =
      lm_arena_alloc(p->arena, (parent->n_items + k) * sizeof *grown);
  if (!grown)
    return LM_ENOMEM;
  if (at)
    memcpy(grown, parent->items, at * sizeof *grown);
  memcpy(grown + at, items, k * sizeof *grown);
  if (parent->n_items > at)
    memcpy(grown + at + k, parent->items + at,
           (parent->n_items - at) * sizeof *grown);
  parent->items = grown;
  parent->n_items += k;
  return LM_OK;
}

static void remove_items(ynode *parent, size_t at, size_t k) {
  memmove(parent->items + at, parent->items + at + k,
          (parent->n_items - at - k) * sizeof *parent->items);
  parent->n_items -= k;
}

/* Set key to value in a mapping (replacing, or appending the pair). */
static lm_status map_set(patcher *p, ynode *map, ynode *key, ynode *value) {
  for (size_t i = 0; i + 1 < map->n_items; i += 2)
    if (strcmp(map->items[i]->text, key->text) == 0) {
      map->items[i + 1] = value;
      return LM_OK;
    }
  ynode *pair[2] = {key, value};
  return insert_items(p, map, map->n_items, pair, 2);
}

static int map_remove(ynode *map, const char *key) {
  for (size_t i = 0; i + 1 < map->n_items; i += 2)
    if (strcmp(map->items[i]->text, key) == 0) {
      remove_items(map, i, 2);
      return 1;
    }
  return 0;
}

static ynode *new_scalar(patcher *p, const char *text) {
  ynode *y = lm_arena_alloc(p->arena, sizeof *y);
  if (!y)
    return NULL;
  memset(y, 0, sizeof *y);
  y->type = Y_SCALAR;
  y->line = 1;
  y->column = 1;
  y->text = lm_arena_strdup(p->arena, text);
  return y->text ? y : NULL;
}

/* A shallow copy of a mapping without the keys listed in skip. */
static ynode *map_without(patcher *p, const ynode *map,
                          const char *const *skip) {
  ynode *copy = lm_arena_alloc(p->arena, sizeof *copy);
  if (!copy)
    return NULL;
  *copy = *map;
  copy->items = lm_arena_alloc(p->arena, (map->n_items ? map->n_items : 1) *
                                             sizeof *copy->items);
  if (!copy->items)
    return NULL;
  copy->n_items = 0;
  for (size_t i = 0; i + 1 < map->n_items; i += 2) {
    int skipped = 0;
    for (const char *const *s = skip; *s && !skipped; s++)
      skipped = strcmp(*s, map->items[i]->text) == 0;
    if (skipped)
      continue;
    copy->items[copy->n_items++] = map->items[i];
    copy->items[copy->n_items++] = map->items[i + 1];
  }
  return copy;
}

static const char *text_of(const ynode *y) {
  return y && y->type == Y_SCALAR ? y->text : NULL;
}

/* ------------------------------------------------------------ lookups */

static int is_panel_root(const patcher *p, size_t i) {
  return map_get(p->roots[i], "panel") && map_get(p->roots[i], "tables");
}

static ynode *find_panel(patcher *p, const char *number) {
  for (size_t i = 0; i < p->n; i++)
    if (is_panel_root(p, i) &&
        strcmp(text_of(map_get(p->roots[i], "panel"))
                   ? text_of(map_get(p->roots[i], "panel"))
                   : "",
               number) == 0)
      return p->roots[i];
  return NULL;
}

/* The tables sequence holding table id, and its index there. */
static ynode *find_table(patcher *p, const char *id, size_t *at) {
  for (size_t i = 0; i < p->n; i++) {
    if (!is_panel_root(p, i))
      continue;
    ynode *tables = map_get(p->roots[i], "tables");
    if (tables->type != Y_SEQ)
      continue;
    for (size_t k = 0; k < tables->n_items; k++) {
      const char *tid = text_of(map_get(tables->items[k], "id"));
      if (tid && strcmp(tid, id) == 0) {
        *at = k;
        return tables;
      }
    }
  }
  return NULL;
}

/* The row named name ("#N": the row at index N) in a rows sequence, or -1. */
static long find_row(const ynode *rows, const char *name) {
  if (name[0] == '#') {
    long k = strtol(name + 1, NULL, 10);
    return k >= 0 && (size_t)k < rows->n_items ? k : -1;
  }
  for (size_t k = 0; k < rows->n_items; k++) {
    const char *m = text_of(map_get(rows->items[k], "metric"));
    if (m && strcmp(m, name) == 0)
      return (long)k;
  }
  return -1;
}

/* Where an item with `after: X` / `before: X` goes in seq (by lookup), or
 * the end. Returns -1 when X names nothing. */
static long place(const ynode *seq, const ynode *spec,
                  long (*lookup)(const ynode *, const char *)) {
  const char *after = text_of(map_get((ynode *)spec, "after"));
  const char *before = text_of(map_get((ynode *)spec, "before"));
  if (after) {
    long k = lookup(seq, after);
    return k < 0 ? -1 : k + 1;
  }
  if (before)
    return lookup(seq, before);
  return (long)seq->n_items;
}

static long table_lookup(const ynode *tables, const char *id) {
  for (size_t k = 0; k < tables->n_items; k++) {
    const char *tid = text_of(map_get(tables->items[k], "id"));
    if (tid && strcmp(tid, id) == 0)
      return (long)k;
  }
  return -1;
}

/* ------------------------------------------------------------ patches */

static const char *const placement_keys[] = {"after", "before", NULL};
static const char *const new_table_skip[] = {"after", "before", "panel",
                                             "take_rows", NULL};

static lm_status substitute(patcher *p, ynode *row, const ynode *map);

static lm_status patch_rows(patcher *p, ynode *table, const ynode *patch,
                            const char *id) {
  ynode *rows = map_get(table, "rows");
  if (!rows || rows->type != Y_SEQ)
    return fail_at(p, patch, id, "the table has no rows to patch", NULL);
  for (size_t i = 0; i + 1 < patch->n_items; i += 2) {
    const ynode *key = patch->items[i], *val = patch->items[i + 1];
    long k = find_row(rows, key->text);
    if (k < 0)
      return fail_at(p, key, id, "no such row in the table", key->text);
    if (val->type == Y_SCALAR && val->is_null) {
      remove_items(rows, (size_t)k, 1);
      continue;
    }
    if (val->type != Y_MAP)
      return fail_at(p, val, key->text,
                     "a row patch is a mapping of keys to set, or null", NULL);
    ynode *row = map_without(p, rows->items[k], (const char *const[]){NULL});
    if (!row)
      return LM_ENOMEM;
    for (size_t j = 0; j + 1 < val->n_items; j += 2) {
      if (strcmp(val->items[j]->text, "substitute") == 0) {
        lm_status st = substitute(p, row, val->items[j + 1]);
        if (st != LM_OK)
          return st;
        continue;
      }
      if (strcmp(val->items[j]->text, "after") == 0 ||
          strcmp(val->items[j]->text, "before") == 0)
        continue; /* moved below */
      if (strcmp(val->items[j]->text, "drop_keys") == 0) {
        const ynode *list = val->items[j + 1];
        for (size_t q = 0; list->type == Y_SEQ && q < list->n_items; q++)
          if (list->items[q]->type == Y_SCALAR)
            map_remove(row, list->items[q]->text);
        continue;
      }
      if (map_set(p, row, val->items[j], val->items[j + 1]) != LM_OK)
        return LM_ENOMEM;
    }
    rows->items[k] = row;
    if (map_get((ynode *)val, "after") || map_get((ynode *)val, "before")) {
      remove_items(rows, (size_t)k, 1);
      long to = place(rows, val, find_row);
      if (to < 0)
        return fail_at(p, val, key->text,
                       "after/before names no row of the table", NULL);
      if (insert_items(p, rows, (size_t)to, &row, 1) != LM_OK)
        return LM_ENOMEM;
    }
  }
  return LM_OK;
}

static lm_status add_rows(patcher *p, ynode *table, const ynode *list,
                          const char *id) {
  ynode *rows = map_get(table, "rows");
  if (!rows || rows->type != Y_SEQ || list->type != Y_SEQ)
    return fail_at(p, list, id,
                   "add_rows is a list of rows for a table with rows", NULL);
  for (size_t i = 0; i < list->n_items; i++) {
    const ynode *spec = list->items[i];
    if (spec->type != Y_MAP)
      return fail_at(p, spec, id, "a row is a mapping", NULL);
    long at = place(rows, spec, find_row);
    if (at < 0)
      return fail_at(p, spec, id, "after/before names no row of the table",
                     NULL);
    ynode *row = map_without(p, spec, placement_keys);
    if (!row || insert_items(p, rows, (size_t)at, &row, 1) != LM_OK)
      return LM_ENOMEM;
  }
  return LM_OK;
}

static lm_status patch_table(patcher *p, ynode *tables, size_t at,
                             const ynode *patch, const char *id) {
  ynode *table = map_without(p, tables->items[at], (const char *const[]){NULL});
  if (!table)
    return LM_ENOMEM;
  tables->items[at] = table;
  for (size_t i = 0; i + 1 < patch->n_items; i += 2) {
    ynode *key = patch->items[i], *val = patch->items[i + 1];
    lm_status st = LM_OK;
    if (strcmp(key->text, "rows") == 0 && val->type == Y_MAP)
      st = patch_rows(p, table, val, id);
    else if (strcmp(key->text, "add_rows") == 0)
      st = add_rows(p, table, val, id);
    else if (strcmp(key->text, "after") == 0 ||
             strcmp(key->text, "before") == 0)
      continue; /* moved below, once the other keys are set */
    else if (strcmp(key->text, "drop_keys") == 0) {
      for (size_t q = 0; val->type == Y_SEQ && q < val->n_items; q++)
        if (val->items[q]->type == Y_SCALAR)
          map_remove(table, val->items[q]->text);
    } else
      st = map_set(p, table, key, val);
    if (st != LM_OK)
      return st;
  }
  if (map_get((ynode *)patch, "after") || map_get((ynode *)patch, "before")) {
    remove_items(tables, at, 1);
    long to = place(tables, patch, table_lookup);
    if (to < 0) {
      insert_items(p, tables, at, &table, 1);
      return fail_at(p, patch, id, "after/before names no table of the panel",
                     NULL);
    }
    if (insert_items(p, tables, (size_t)to, &table, 1) != LM_OK)
      return LM_ENOMEM;
  }
  return LM_OK;
}

/* take_rows: {from: ID, first: ROW, last: ROW} moves that run of rows
 * (first and last included) out of table ID into the new table, which
 * takes the source's columns and source unless it sets its own. */
static lm_status take_rows(patcher *p, ynode *table, const ynode *take) {
  const char *from = text_of(map_get((ynode *)take, "from"));
  const char *first = text_of(map_get((ynode *)take, "first"));
  const char *last = text_of(map_get((ynode *)take, "last"));
  if (take->type != Y_MAP || !from || !first || !last)
    return fail_at(p, take, "take_rows",
                   "expected {from: table id, first: row, last: row}", NULL);
  size_t at;
  ynode *seq = find_table(p, from, &at);
  if (!seq)
    return fail_at(p, take, "take_rows", "no table has this id", from);
  ynode *src = seq->items[at];
  ynode *rows = map_get(src, "rows");
  if (!rows || rows->type != Y_SEQ)
    return fail_at(p, take, "take_rows", "the table has no rows", from);
  long a = find_row(rows, first), b = find_row(rows, last);
  if (a < 0 || b < a)
    return fail_at(p, take, "take_rows",
                   "first and last name no run of rows of the table",
                   a < 0 ? first : last);
  ynode *moved = lm_arena_alloc(p->arena, sizeof *moved);
  size_t k = (size_t)(b - a + 1);
  if (!moved)
    return LM_ENOMEM;
  memset(moved, 0, sizeof *moved);
  moved->type = Y_SEQ;
  moved->line = take->line;
  moved->column = take->column;
  if (insert_items(p, moved, 0, rows->items + a, k) != LM_OK)
    return LM_ENOMEM;
  remove_items(rows, (size_t)a, k);
  static const char *const inherited[] = {"columns", "source", NULL};
  for (const char *const *key = inherited; *key; key++) {
    ynode *v = map_get(src, *key);
    ynode *name = new_scalar(p, *key);
    if (!name)
      return LM_ENOMEM;
    if (v && !map_get(table, *key) && map_set(p, table, name, v) != LM_OK)
      return LM_ENOMEM;
  }
  ynode *rkey = new_scalar(p, "rows");
  if (!rkey || map_set(p, table, rkey, moved) != LM_OK)
    return LM_ENOMEM;
  return LM_OK;
}

static lm_status new_table(patcher *p, const ynode *key, const ynode *patch) {
  const char *panel = text_of(map_get((ynode *)patch, "panel"));
  if (!panel)
    return fail_at(p, key, key->text,
                   "no table has this id; a new table needs `panel:`", NULL);
  ynode *root = find_panel(p, panel);
  if (!root)
    return fail_at(p, patch, "panel", "no panel has this number", panel);
  ynode *tables = map_get(root, "tables");
  long at = place(tables, patch, table_lookup);
  if (at < 0)
    return fail_at(p, patch, key->text,
                   "after/before names no table of the panel", NULL);
  ynode *table = map_without(p, patch, new_table_skip);
  ynode *idkey = new_scalar(p, "id");
  if (!table || !idkey)
    return LM_ENOMEM;
  ynode *id = new_scalar(p, key->text);
  if (!id)
    return LM_ENOMEM;
  ynode *pair[2] = {idkey, id};
  if (insert_items(p, table, 0, pair, 2) != LM_OK)
    return LM_ENOMEM;
  const ynode *take = map_get((ynode *)patch, "take_rows");
  if (take) {
    lm_status st = take_rows(p, table, take);
    if (st != LM_OK)
      return st;
  }
  return insert_items(p, tables, (size_t)at, &table, 1);
}

static lm_status apply_tables(patcher *p, const ynode *tables) {
  if (tables->type != Y_MAP)
    return fail_at(p, tables, "tables", "expected a mapping of table id: patch",
                   NULL);
  /* Resolve every target first, so that renumbering (17.4 -> 17.5 while
   * 17.5 -> 17.6) patches the tables the overlay names by their old ids. */
  size_t n = tables->n_items / 2;
  ynode **targets = lm_arena_alloc(p->arena, (n ? n : 1) * sizeof *targets);
  if (!targets)
    return LM_ENOMEM;
  for (size_t i = 0; i < n; i++) {
    size_t at;
    ynode *seq = find_table(p, tables->items[2 * i]->text, &at);
    targets[i] = seq ? seq->items[at] : NULL;
  }
  for (size_t i = 0; i < n; i++) {
    const ynode *key = tables->items[2 * i], *val = tables->items[2 * i + 1];
    if (!targets[i]) {
      if (val->type != Y_MAP)
        return fail_at(p, key, key->text, "no table has this id", NULL);
      lm_status st = new_table(p, key, val);
      if (st != LM_OK)
        return st;
      continue;
    }
    ynode *seq = NULL;
    size_t at = 0;
    for (size_t r = 0; r < p->n && !seq; r++) {
      if (!is_panel_root(p, r))
        continue;
      ynode *ts = map_get(p->roots[r], "tables");
      for (size_t k = 0; ts->type == Y_SEQ && k < ts->n_items; k++)
        if (ts->items[k] == targets[i]) {
          seq = ts;
          at = k;
        }
    }
    if (!seq)
      return fail_at(p, key, key->text,
                     "the table was removed earlier in this overlay", NULL);
    if (val->type == Y_SCALAR && val->is_null) {
      remove_items(seq, at, 1);
      continue;
    }
    if (val->type != Y_MAP)
      return fail_at(p, val, key->text, "a table patch is a mapping, or null",
                     NULL);
    lm_status st = patch_table(p, seq, at, val, key->text);
    if (st != LM_OK)
      return st;
  }
  return LM_OK;
}

/* quantities / normalizations: set, replace or (null) remove entries. */
static lm_status apply_entries(patcher *p, ynode *quantities_root,
                               const char *section, const ynode *entries) {
  if (entries->type != Y_MAP)
    return fail_at(p, entries, section, "expected a mapping", NULL);
  if (!quantities_root)
    return fail_at(p, entries, section,
                   "the definitions have no quantities.yaml", NULL);
  ynode *map = map_get(quantities_root, section);
  if (!map) {
    ynode *key = new_scalar(p, section);
    map = lm_arena_alloc(p->arena, sizeof *map);
    if (!key || !map)
      return LM_ENOMEM;
    memset(map, 0, sizeof *map);
    map->type = Y_MAP;
    if (map_set(p, quantities_root, key, map) != LM_OK)
      return LM_ENOMEM;
  }
  for (size_t i = 0; i + 1 < entries->n_items; i += 2) {
    const ynode *val = entries->items[i + 1];
    if (val->type == Y_SCALAR && val->is_null) {
      if (!map_remove(map, entries->items[i]->text))
        return fail_at(p, entries->items[i], section, "no such entry",
                       entries->items[i]->text);
    } else if (map_set(p, map, entries->items[i], entries->items[i + 1]) !=
               LM_OK) {
      return LM_ENOMEM;
    }
  }
  return LM_OK;
}

static lm_status default_norm(patcher *p, ynode *quantities_root,
                              const ynode *name) {
  ynode *norms =
      quantities_root ? map_get(quantities_root, "normalizations") : NULL;
  const char *want = text_of(name);
  for (size_t i = 0; norms && want && i + 1 < norms->n_items; i += 2)
    if (strcmp(norms->items[i]->text, want) == 0) {
      ynode *pair[2] = {norms->items[i], norms->items[i + 1]};
      remove_items(norms, i, 2);
      return insert_items(p, norms, 0, pair, 2);
    }
  return fail_at(p, name, "default_norm", "no normalization has this name",
                 want);
}

/* ------------------------------------------------------------ renames */

static int ident_char(char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
         (c >= '0' && c <= '9') || c == '_';
}

/* text with every identifier that starts with from starting with to
 * instead; NULL when nothing changes (or out of memory: *oom set). */
static const char *rename_in(patcher *p, const char *text, const char *from,
                             const char *to, int *oom) {
  size_t nf = strlen(from);
  const char *hit = NULL;
  for (const char *q = strstr(text, from); q && !hit; q = strstr(q + 1, from))
    if (q == text || !ident_char(q[-1]))
      hit = q;
  if (!hit)
    return NULL;
  lm_buf out = {0};
  const char *q = text;
  while (*q) {
    if (strncmp(q, from, nf) == 0 && (q == text || !ident_char(q[-1]))) {
      lm_buf_printf(&out, "%s", to);
      q += nf;
    } else {
      lm_buf_printf(&out, "%c", *q++);
    }
  }
  const char *copy = lm_arena_strdup(p->arena, lm_buf_cstr(&out));
  lm_buf_fini(&out);
  if (!copy)
    *oom = 1;
  return copy;
}

/* Rename in every formula under y: scalars other than the prose and
 * naming keys (metric, desc, title, unit). */
static lm_status rename_tree(patcher *p, ynode *y, const char *from,
                             const char *to) {
  static const char *const prose[] = {"metric", "desc", "title", "unit", NULL};
  int oom = 0;
  if (y->type == Y_SCALAR) {
    const char *t = y->text ? rename_in(p, y->text, from, to, &oom) : NULL;
    if (t)
      y->text = t;
    return oom ? LM_ENOMEM : LM_OK;
  }
  for (size_t i = 0; i < y->n_items; i++) {
    if (y->type == Y_MAP && i % 2 == 0) {
      int skip = 0;
      for (const char *const *k = prose; *k && !skip; k++)
        skip = strcmp(*k, y->items[i]->text) == 0;
      i += (size_t)skip; /* skip the key, and the value of a prose key */
      continue;
    }
    lm_status st = rename_tree(p, y->items[i], from, to);
    if (st != LM_OK)
      return st;
  }
  return LM_OK;
}

/* A row patch's substitute: {OLD: NEW}: in the row's formulas, every name
 * that starts with OLD starts with NEW instead ($denom: $duration turns
 * an amount per normalization unit into a rate). */
static lm_status substitute(patcher *p, ynode *row, const ynode *map) {
  if (map->type != Y_MAP)
    return fail_at(p, map, "substitute", "expected a mapping of old: new",
                   NULL);
  for (size_t i = 0; i + 1 < map->n_items; i += 2) {
    const char *from = text_of(map->items[i]);
    const char *to = text_of(map->items[i + 1]);
    if (!from || !to || !from[0])
      return fail_at(p, map->items[i], "substitute",
                     "expected a mapping of old: new", NULL);
    for (size_t k = 0; k + 1 < row->n_items; k += 2) {
      ynode *key = row->items[k], *val = row->items[k + 1];
      if (strcmp(key->text, "metric") == 0 || strcmp(key->text, "desc") == 0 ||
          strcmp(key->text, "unit") == 0 || val->type != Y_SCALAR || !val->text)
        continue;
      int oom = 0;
      const char *t = rename_in(p, val->text, from, to, &oom);
      if (oom)
        return LM_ENOMEM;
      if (t) {
        /* A new node: the original may be shared with other trees. */
        ynode *copy = new_scalar(p, t);
        if (!copy)
          return LM_ENOMEM;
        copy->line = val->line;
        copy->column = val->column;
        copy->plain = val->plain;
        row->items[k + 1] = copy;
      }
    }
  }
  return LM_OK;
}

/* rename_counters: {OLD_PREFIX: NEW_PREFIX}: the newer version reads the
 * counters under other names. Formulas are rewritten, and the renamed
 * counters join arch.yaml's list (a recording that lacks them then shows
 * blank cells, as the reference does). */
static lm_status rename_counters(patcher *p, const ynode *map, ynode *arch) {
  if (map->type != Y_MAP)
    return fail_at(p, map, "rename_counters",
                   "expected a mapping of old prefix: new prefix", NULL);
  ynode *list = arch ? map_get(arch, "counters") : NULL;
  for (size_t i = 0; i + 1 < map->n_items; i += 2) {
    const char *from = text_of(map->items[i]);
    const char *to = text_of(map->items[i + 1]);
    if (!from || !to || !from[0])
      return fail_at(p, map->items[i], "rename_counters",
                     "expected a mapping of old prefix: new prefix", NULL);
    for (size_t r = 0; r < p->n; r++) {
      if (p->roots[r] == arch)
        continue;
      lm_status st = rename_tree(p, p->roots[r], from, to);
      if (st != LM_OK)
        return st;
    }
    size_t n = list && list->type == Y_SEQ ? list->n_items : 0;
    for (size_t c = 0; c < n; c++) {
      int oom = 0;
      const char *t = text_of(list->items[c]);
      const char *renamed = t && strncmp(t, from, strlen(from)) == 0
                                ? rename_in(p, t, from, to, &oom)
                                : NULL;
      if (oom)
        return LM_ENOMEM;
      ynode *item = renamed ? new_scalar(p, renamed) : NULL;
      if (renamed &&
          (!item || insert_items(p, list, list->n_items, &item, 1) != LM_OK))
        return LM_ENOMEM;
    }
  }
  return LM_OK;
}

/* ------------------------------------------------------------ empty rows */

/* 1 when a row of table has no formula: no expr, peak or pct, and no
 * explicit cell in a column whose role computes a value. */
static int row_is_empty(const ynode *table, const ynode *row) {
  static const char *const formulas[] = {"expr", "peak", "pct", NULL};
  static const char *const inert[] = {"name", "unit", "text", "tips", NULL};
  const ynode *columns = lm_yaml_get(table, "columns");
  for (size_t i = 0; row->type == Y_MAP && i + 1 < row->n_items; i += 2) {
    const char *key = row->items[i]->text;
    const ynode *val = row->items[i + 1];
    if (val->type == Y_SCALAR && val->is_null)
      continue;
    for (const char *const *f = formulas; *f; f++)
      if (strcmp(*f, key) == 0)
        return 0;
    const char *role = text_of(lm_yaml_get(columns, key));
    if (!role)
      continue;
    int is_inert = 0;
    for (const char *const *r = inert; *r && !is_inert; r++)
      is_inert = strcmp(*r, role) == 0;
    if (!is_inert)
      return 0;
  }
  return 1;
}

void lm_overlay_drop_empty_rows(ynode **roots, size_t n) {
  for (size_t i = 0; i < n; i++) {
    ynode *tables = map_get(roots[i], "tables");
    if (!map_get(roots[i], "panel") || !tables || tables->type != Y_SEQ)
      continue;
    for (size_t t = 0; t < tables->n_items; t++) {
      ynode *table = tables->items[t];
      ynode *rows = map_get(table, "rows");
      /* Per-channel templates and the memory chart keep every row: the
       * chart places each value by its position. */
      const char *style = text_of(map_get(table, "style"));
      if (map_get(table, "channels") ||
          (style && !strcmp(style, "mem_chart")) || !rows ||
          rows->type != Y_SEQ)
        continue;
      for (size_t r = rows->n_items; r-- > 0;)
        if (row_is_empty(table, rows->items[r]))
          remove_items(rows, r, 1);
    }
  }
}

int lm_overlay_drops_empty_rows(const ynode *overlay) {
  const ynode *v = lm_yaml_get(overlay, "drop_empty_rows");
  return v && v->type == Y_SCALAR && strcmp(v->text, "true") == 0;
}

static const char *const overlay_keys[] = {
    "overlay", "archs",  "default_norm", "normalizations",  "quantities",
    "panels",  "tables", "counters",     "rename_counters", "drop_empty_rows",
    NULL};

int lm_overlay_applies(const ynode *overlay, const char *const *archs,
                       size_t n_archs) {
  const ynode *list = lm_yaml_get(overlay, "archs");
  if (!list)
    return 1;
  for (size_t i = 0; list->type == Y_SEQ && i < list->n_items; i++)
    for (size_t a = 0; a < n_archs; a++)
      if (list->items[i]->type == Y_SCALAR &&
          strcmp(list->items[i]->text, archs[a]) == 0)
        return 1;
  return 0;
}

lm_status lm_overlay_apply(const char *file, const ynode *overlay,
                           ynode **roots, const char *const *names, size_t n,
                           lm_arena *arena, lm_diag *diag) {
  patcher p = {arena, diag, file, roots, names, n};
  ynode *quantities = NULL, *arch = NULL;
  for (size_t i = 0; i < n; i++) {
    const char *slash = strrchr(names[i], '/');
    const char *base = slash ? slash + 1 : names[i];
    if (strcmp(base, "quantities.yaml") == 0)
      quantities = roots[i];
    if (strcmp(base, "arch.yaml") == 0)
      arch = roots[i];
  }
  for (size_t i = 0; i + 1 < overlay->n_items; i += 2) {
    const ynode *key = overlay->items[i];
    int known = 0;
    for (const char *const *k = overlay_keys; *k && !known; k++)
      known = strcmp(*k, key->text) == 0;
    if (!known) {
      lm_buf list = {0};
      for (const char *const *k = overlay_keys; *k; k++)
        lm_buf_printf(&list, "%s%s", k == overlay_keys ? "" : ", ", *k);
      lm_status st = lm_diag_set(
          diag, LM_EPARSE, file, key->line, key->column, key->text,
          "unknown key in an overlay (known: %s)", lm_buf_cstr(&list));
      lm_buf_fini(&list);
      return st;
    }
  }
  lm_status st = LM_OK;
  const ynode *v;
  if ((v = lm_yaml_get(overlay, "counters")) != NULL) {
    ynode *list = arch ? map_get(arch, "counters") : NULL;
    if (!list || list->type != Y_SEQ || v->type != Y_SEQ)
      return fail_at(&p, v, "counters",
                     "a list of counters to add to arch.yaml's list", NULL);
    st = insert_items(&p, list, list->n_items, v->items, v->n_items);
    if (st != LM_OK)
      return st;
  }
  if ((v = lm_yaml_get(overlay, "rename_counters")) != NULL &&
      (st = rename_counters(&p, v, arch)) != LM_OK)
    return st;
  if ((v = lm_yaml_get(overlay, "normalizations")) != NULL &&
      (st = apply_entries(&p, quantities, "normalizations", v)) != LM_OK)
    return st;
  if ((v = lm_yaml_get(overlay, "default_norm")) != NULL &&
      (st = default_norm(&p, quantities, v)) != LM_OK)
    return st;
  if ((v = lm_yaml_get(overlay, "quantities")) != NULL &&
      (st = apply_entries(&p, quantities, "quantities", v)) != LM_OK)
    return st;
  if ((v = lm_yaml_get(overlay, "panels")) != NULL) {
    if (v->type != Y_MAP)
      return fail_at(&p, v, "panels", "expected a mapping of panel: patch",
                     NULL);
    for (size_t i = 0; i + 1 < v->n_items; i += 2) {
      ynode *root = find_panel(&p, v->items[i]->text);
      const ynode *patch = v->items[i + 1];
      if (!root)
        return fail_at(&p, v->items[i], "panels", "no panel has this number",
                       v->items[i]->text);
      ynode *title = map_get((ynode *)patch, "title");
      ynode *tkey = new_scalar(&p, "title");
      if (!title || !tkey)
        return fail_at(&p, patch, "panels", "a panel patch sets `title:`",
                       NULL);
      if (map_set(&p, root, tkey, title) != LM_OK)
        return LM_ENOMEM;
    }
  }
  if ((v = lm_yaml_get(overlay, "tables")) != NULL &&
      (st = apply_tables(&p, v)) != LM_OK)
    return st;
  return LM_OK;
}
