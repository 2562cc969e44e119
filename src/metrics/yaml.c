/*
 * yaml.c - a small document tree over libyaml's event parser.
 *
 * Metric definitions are read once (at build time for the built-ins, at
 * start-up for --metrics-dir), so a tree with every node's line and column
 * is the simplest shape to validate against and to report errors from.
 * Anchors and aliases are resolved to the anchored node.
 */
#include <string.h>
#include <yaml.h>

#include "metrics/internal.h"

#define MAX_NESTING 64

typedef struct anchor {
  const char *name;
  ynode *node;
} anchor;

typedef struct loader {
  yaml_parser_t parser;
  lm_arena *arena;
  const char *file;
  lm_diag *diag;
  anchor *anchors;
  size_t n_anchors, cap_anchors;
} loader;

static lm_status parse_error(loader *ld) {
  const yaml_parser_t *p = &ld->parser;
  return lm_diag_set(ld->diag, LM_EPARSE, ld->file, (long)p->problem_mark.line + 1,
                     (long)p->problem_mark.column + 1, NULL, "YAML: %s%s%s",
                     p->problem ? p->problem : "syntax error",
                     p->context ? " " : "", p->context ? p->context : "");
}

static lm_status add_item(loader *ld, ynode *parent, ynode *child, size_t *cap) {
  if (parent->n_items == *cap) {
    size_t grown_cap = *cap ? *cap * 2 : 8;
    ynode **grown = lm_arena_alloc(ld->arena, grown_cap * sizeof *grown);
    if (!grown) return LM_ENOMEM;
    if (parent->n_items) memcpy(grown, parent->items, parent->n_items * sizeof *grown);
    parent->items = grown;
    *cap = grown_cap;
  }
  parent->items[parent->n_items++] = child;
  return LM_OK;
}

static lm_status remember(loader *ld, const yaml_char_t *name, ynode *node) {
  if (!name) return LM_OK;
  if (ld->n_anchors == ld->cap_anchors) {
    size_t cap = ld->cap_anchors ? ld->cap_anchors * 2 : 8;
    anchor *grown = lm_arena_alloc(ld->arena, cap * sizeof *grown);
    if (!grown) return LM_ENOMEM;
    if (ld->n_anchors) memcpy(grown, ld->anchors, ld->n_anchors * sizeof *grown);
    ld->anchors = grown;
    ld->cap_anchors = cap;
  }
  ld->anchors[ld->n_anchors].name = lm_arena_strdup(ld->arena, (const char *)name);
  ld->anchors[ld->n_anchors].node = node;
  if (!ld->anchors[ld->n_anchors].name) return LM_ENOMEM;
  ld->n_anchors++;
  return LM_OK;
}

/* Read one node whose first event is `ev` (already taken). */
static lm_status read_node(loader *ld, yaml_event_t *ev, int depth, ynode **out) {
  lm_status status = LM_OK;
  if (depth > MAX_NESTING)
    return lm_diag_set(ld->diag, LM_ELIMIT, ld->file, (long)ev->start_mark.line + 1,
                       (long)ev->start_mark.column + 1, NULL,
                       "YAML nested more than %d levels", MAX_NESTING);
  if (ev->type == YAML_ALIAS_EVENT) {
    const char *name = (const char *)ev->data.alias.anchor;
    for (size_t i = ld->n_anchors; i-- > 0;) {
      if (strcmp(ld->anchors[i].name, name) == 0) {
        *out = ld->anchors[i].node;
        return LM_OK;
      }
    }
    return lm_diag_set(ld->diag, LM_EPARSE, ld->file, (long)ev->start_mark.line + 1,
                       (long)ev->start_mark.column + 1, NULL,
                       "YAML alias *%s has no anchor", name);
  }
  ynode *node = lm_arena_alloc(ld->arena, sizeof *node);
  if (!node) return LM_ENOMEM;
  node->line = (long)ev->start_mark.line + 1;
  node->column = (long)ev->start_mark.column + 1;
  if (ev->type == YAML_SCALAR_EVENT) {
    node->type = Y_SCALAR;
    node->text = lm_arena_strndup(ld->arena, (const char *)ev->data.scalar.value,
                                  ev->data.scalar.length);
    if (!node->text) return LM_ENOMEM;
    node->plain = ev->data.scalar.style == YAML_PLAIN_SCALAR_STYLE;
    node->is_null = node->plain && (ev->data.scalar.length == 0 ||
                                    strcmp(node->text, "null") == 0 ||
                                    strcmp(node->text, "~") == 0 ||
                                    strcmp(node->text, "Null") == 0 ||
                                    strcmp(node->text, "NULL") == 0);
    *out = node;
    return remember(ld, ev->data.scalar.anchor, node);
  }
  if (ev->type != YAML_SEQUENCE_START_EVENT && ev->type != YAML_MAPPING_START_EVENT)
    return lm_diag_set(ld->diag, LM_EPARSE, ld->file, node->line, node->column,
                       NULL, "unexpected YAML structure");
  int is_map = ev->type == YAML_MAPPING_START_EVENT;
  node->type = is_map ? Y_MAP : Y_SEQ;
  status = remember(ld, is_map ? ev->data.mapping_start.anchor
                               : ev->data.sequence_start.anchor, node);
  if (status != LM_OK) return status;
  size_t cap = 0;
  for (;;) {
    yaml_event_t child_ev;
    if (!yaml_parser_parse(&ld->parser, &child_ev)) return parse_error(ld);
    if (child_ev.type == YAML_SEQUENCE_END_EVENT || child_ev.type == YAML_MAPPING_END_EVENT) {
      yaml_event_delete(&child_ev);
      break;
    }
    ynode *child = NULL;
    status = read_node(ld, &child_ev, depth + 1, &child);
    yaml_event_delete(&child_ev);
    if (status != LM_OK) return status;
    if (is_map && (node->n_items % 2 == 0) && child->type != Y_SCALAR)
      return lm_diag_set(ld->diag, LM_EPARSE, ld->file, child->line, child->column,
                         NULL, "a mapping key must be a plain value");
    if (is_map && node->n_items % 2 == 0) {
      for (size_t k = 0; k < node->n_items; k += 2)
        if (strcmp(node->items[k]->text, child->text) == 0)
          return lm_diag_set(ld->diag, LM_EPARSE, ld->file, child->line,
                             child->column, child->text, "duplicate key");
    }
    status = add_item(ld, node, child, &cap);
    if (status != LM_OK) return status;
  }
  *out = node;
  return LM_OK;
}

lm_status lm_yaml_load(const char *file, const char *text, size_t len,
                       lm_arena *arena, ynode **root, lm_diag *diag) {
  loader ld = {0};
  lm_status status = LM_OK;
  yaml_event_t ev;
  int have_event = 0;
  *root = NULL;
  ld.arena = arena;
  ld.file = file;
  ld.diag = diag;
  if (!yaml_parser_initialize(&ld.parser)) return lm_oom(diag, file);
  yaml_parser_set_input_string(&ld.parser, (const unsigned char *)text, len);
  /* stream start, document start */
  for (;;) {
    if (!yaml_parser_parse(&ld.parser, &ev)) {
      status = parse_error(&ld);
      goto done;
    }
    have_event = 1;
    if (ev.type == YAML_STREAM_END_EVENT) {
      status = lm_diag_set(diag, LM_EPARSE, file, 1, 1, NULL, "empty YAML document");
      goto done;
    }
    if (ev.type == YAML_STREAM_START_EVENT || ev.type == YAML_DOCUMENT_START_EVENT) {
      yaml_event_delete(&ev);
      have_event = 0;
      continue;
    }
    break;
  }
  status = read_node(&ld, &ev, 0, root);
  if (status == LM_ENOMEM && (!diag || diag->status != LM_ENOMEM)) lm_oom(diag, file);
done:
  if (have_event) yaml_event_delete(&ev);
  yaml_parser_delete(&ld.parser);
  return status;
}

const ynode *lm_yaml_get(const ynode *map, const char *key) {
  if (!map || map->type != Y_MAP) return NULL;
  for (size_t i = 0; i + 1 < map->n_items; i += 2)
    if (strcmp(map->items[i]->text, key) == 0) return map->items[i + 1];
  return NULL;
}

/* The next event into ev; 0 at a syntax error or the end of the stream. */
static int next_event(yaml_parser_t *p, yaml_event_t *ev) {
  if (!yaml_parser_parse(p, ev)) return 0;
  if (ev->type == YAML_STREAM_END_EVENT) {
    yaml_event_delete(ev);
    return 0;
  }
  return 1;
}

static int top_list_has(const char *text, size_t len, const char *key, const char *value);

int lm_yaml_top_list_has(const char *text, size_t len, const char *key, const char *value) {
  /* The parser reads its whole input ahead of the first token (some 60
   * instructions a byte): a list near the top is read from the first
   * kilobytes alone; a prefix that ends before the list does gives -1,
   * and the whole text is read then. */
  enum { PREFIX = 2048 };
  int answer = len > PREFIX ? top_list_has(text, PREFIX, key, value) : -1;
  return answer >= 0 ? answer : top_list_has(text, len, key, value);
}

static int top_list_has(const char *text, size_t len, const char *key, const char *value) {
  yaml_parser_t p;
  yaml_event_t ev;
  /* state 0: before the mapping, 1: at a key, 2: skipping a value, 3: in
   * key's list, 4: after key, before its value */
  int answer = 0, depth = 0, state = 0, complete = 0;
  if (!yaml_parser_initialize(&p)) return -1;
  yaml_parser_set_input_string(&p, (const unsigned char *)text, len);
  while (next_event(&p, &ev)) {
    yaml_event_type_t t = ev.type;
    int stop = 0;
    if (state == 0) {
      if (t == YAML_MAPPING_START_EVENT) state = 1;
      else if (t != YAML_STREAM_START_EVENT && t != YAML_DOCUMENT_START_EVENT) stop = 1;
    } else if (state == 1) {
      if (t != YAML_SCALAR_EVENT) stop = 1; /* the mapping's end, or a key that is not text */
      else if (strcmp((const char *)ev.data.scalar.value, key) == 0) state = 4;
      else {
        state = 2;
        depth = 0;
      }
    } else if (state == 4) {
      if (t == YAML_SEQUENCE_START_EVENT) state = 3;
      else stop = 1; /* not a list */
    } else if (state == 2) {
      if (t == YAML_SEQUENCE_START_EVENT || t == YAML_MAPPING_START_EVENT) depth++;
      else if (t == YAML_SEQUENCE_END_EVENT || t == YAML_MAPPING_END_EVENT) depth--;
      if (depth == 0) state = 1;
    } else {
      if (t == YAML_SCALAR_EVENT) answer |= strcmp((const char *)ev.data.scalar.value, value) == 0;
      else {
        complete = t == YAML_SEQUENCE_END_EVENT; /* else an item that is not text */
        stop = 1;
      }
    }
    yaml_event_delete(&ev);
    if (stop) break;
  }
  yaml_parser_delete(&p);
  return complete ? answer : -1;
}
