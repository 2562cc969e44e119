/*
 * rules.c - guided-analysis rules as data: one YAML file per architecture
 * family, parsed into conditions, verdicts and estimated gains written in
 * the metric language.
 *
 * A rule reads the metrics a catalog computes (value('L2 Cache Hit Rate'),
 * pct('VALU FLOPs'), or a metric id such as value('2.1.20')) and a few
 * per-kernel variables ($calls, $mean_ns, $share, ...). Every metric a rule
 * names is resolved against the catalog when the rules are loaded, so a
 * misspelt or missing metric is an error naming the rule file's line, not
 * a rule that silently never fires. Verdicts are text with {expression}
 * or {expression:.Nf} placeholders, filled in when the rule fires.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "metrics/internal.h"

static const char *const severities[] = {"info", "warning", "critical", NULL};

/* The per-kernel variables a rule may read as $name (besides the
 * system-information fields). */
const char *const lm_rule_vars[] = {"calls",     "total_ns",   "mean_ns",    "min_ns",     "max_ns",
                                    "share",     "cv",         "grid",       "workgroup",  "workgroups",
                                    "lds",       "scratch",    "arch_vgpr",  "accum_vgpr", "sgpr",
                                    "wave_size", "vgpr_waves", "max_waves_simd", "set_spread",
                                    "set_rows",  NULL};

static const char *const metric_funcs[] = {"value", "peak", "pct", NULL};

static int in_list(const char *const *list, const char *s) {
  for (; *list; list++)
    if (strcmp(*list, s) == 0) return 1;
  return 0;
}

static int is_metric_id(const char *s) {
  int dots = 0;
  for (const char *p = s; *p; p++) {
    if (*p == '.') dots++;
    else if (!isdigit((unsigned char)*p)) return 0;
  }
  return dots >= 2;
}

/* Whether the catalog has a metric row named (or numbered) `name`. */
static int catalog_has_metric(const lm_catalog *cat, const char *name) {
  if (is_metric_id(name)) {
    char table[32];
    const char *last = strrchr(name, '.');
    snprintf(table, sizeof table, "%.*s", (int)(last - name), name);
    int32_t t = lm_catalog_find_table(cat, table);
    if (t < 0 || cat->tables[t].kind != LM_TABLE_METRIC) return 0;
    long r = strtol(last + 1, NULL, 10);
    return r >= 0 && r < cat->tables[t].n_rows;
  }
  for (int32_t t = 0; t < cat->n_tables; t++) {
    const lm_tabledef *td = &cat->tables[t];
    if (td->kind != LM_TABLE_METRIC) continue;
    for (int32_t r = 0; r < td->n_rows; r++)
      if (strcmp(cat->rows[td->first_row + r].name, name) == 0) return 1;
  }
  return 0;
}

typedef struct checker {
  const lm_catalog *cat;
  const char *file;
  long line, column;
  lm_diag *diag;
} checker;

/* Check what expression e names: functions, metrics, variables. */
static lm_status check_expr(const checker *ck, const lm_expr *e) {
  if (!e) return LM_OK;
  switch ((lm_expr_kind)e->kind) {
  case LM_X_NUM:
  case LM_X_NONE: return LM_OK;
  case LM_X_STRING:
    return lm_diag_set(ck->diag, LM_EPARSE, ck->file, ck->line, ck->column, NULL,
                       "text '%s' outside value(), peak() or pct()", e->name);
  case LM_X_COL:
    return lm_diag_set(ck->diag, LM_EPARSE, ck->file, ck->line, ck->column, NULL,
                       "'%s': a rule reads metrics through value('NAME'), peak() or pct(), and "
                       "kernel facts as $variables",
                       e->name);
  case LM_X_VAR:
    if (in_list(lm_rule_vars, e->name) || in_list(lm_sysinfo_fields, e->name)) return LM_OK;
    return lm_diag_set(ck->diag, LM_EPARSE, ck->file, ck->line, ck->column, NULL,
                       "unknown variable $%s (see `lumen list rules -v` for the variables)", e->name);
  case LM_X_CALL:
    if (in_list(metric_funcs, e->name)) {
      if (e->n_args != 1 || e->args[0]->kind != LM_X_STRING)
        return lm_diag_set(ck->diag, LM_EPARSE, ck->file, ck->line, ck->column, NULL,
                           "%s() takes one metric name or id in quotes", e->name);
      if (ck->cat && !catalog_has_metric(ck->cat, e->args[0]->name))
        return lm_diag_set(ck->diag, LM_ENOTFOUND, ck->file, ck->line, ck->column, NULL,
                           "%s('%s'): %s has no such metric", e->name, e->args[0]->name, ck->cat->arch);
      return LM_OK;
    }
    if (strcmp(e->name, "MIN") == 0 || strcmp(e->name, "MAX") == 0 || strcmp(e->name, "ABS") == 0) {
      if ((e->n_args != 2 && e->name[0] == 'M') || (e->n_args != 1 && e->name[0] == 'A'))
        return lm_diag_set(ck->diag, LM_EPARSE, ck->file, ck->line, ck->column, NULL,
                           "%s() takes %s", e->name, e->name[0] == 'A' ? "one value" : "two values");
      for (int32_t i = 0; i < e->n_args; i++) {
        lm_status st = check_expr(ck, e->args[i]);
        if (st != LM_OK) return st;
      }
      return LM_OK;
    }
    return lm_diag_set(ck->diag, LM_EPARSE, ck->file, ck->line, ck->column, NULL,
                       "unknown function %s() in a rule (value, peak, pct, MIN, MAX, ABS)", e->name);
  default: {
    lm_status st = check_expr(ck, e->a);
    if (st == LM_OK) st = check_expr(ck, e->b);
    if (st == LM_OK) st = check_expr(ck, e->c);
    return st;
  }
  }
}

static lm_status parse_checked(lm_ruleset *set, const checker *ck0, const ynode *y, lm_expr **out) {
  checker ck = *ck0;
  ck.line = y->line;
  ck.column = y->column;
  lm_diag pd;
  lm_diag_clear(&pd);
  if (lm_expr_parse(y->text, set->arena, out, &pd) != LM_OK)
    return lm_diag_set(ck.diag, pd.status, ck.file, y->line, y->column + pd.column - 1, NULL, "%s", pd.message);
  return check_expr(&ck, *out);
}

/* Split a verdict into text and {expression[:.Nf]} pieces, checking each. */
static lm_status parse_template(lm_ruleset *set, const checker *ck, const ynode *y, lm_rule_text *out) {
  const char *s = y->text;
  size_t cap = 8;
  out->parts = lm_arena_alloc(set->arena, cap * sizeof *out->parts);
  if (!out->parts) return lm_fail_at(ck->diag, LM_ENOMEM, ck->file, y->line, NULL, "out of memory");
  while (*s) {
    const char *open = strchr(s, '{');
    size_t n_text = open ? (size_t)(open - s) : strlen(s);
    if ((size_t)out->n_parts + 2 > cap) {
      lm_rule_part *grown = lm_arena_alloc(set->arena, 2 * cap * sizeof *grown);
      if (!grown) return lm_fail_at(ck->diag, LM_ENOMEM, ck->file, y->line, NULL, "out of memory");
      memcpy(grown, out->parts, cap * sizeof *grown);
      out->parts = grown;
      cap *= 2;
    }
    if (n_text) {
      lm_rule_part *p = &out->parts[out->n_parts++];
      p->text = lm_arena_strndup(set->arena, s, n_text);
      p->digits = -1;
    }
    if (!open) break;
    const char *close = strchr(open, '}');
    if (!close)
      return lm_diag_set(ck->diag, LM_EPARSE, ck->file, y->line, y->column, NULL, "a '{' without its '}'");
    const char *fmt = NULL;
    for (const char *q = close; q > open; q--)
      if (*q == ':') {
        fmt = q;
        break;
      }
    lm_rule_part *p = &out->parts[out->n_parts++];
    p->digits = 1;
    if (fmt) {
      if (fmt[1] != '.' || !isdigit((unsigned char)fmt[2]) || fmt[3] != 'f' || fmt + 4 != close)
        return lm_diag_set(ck->diag, LM_EPARSE, ck->file, y->line, y->column, NULL,
                           "a format must be ':.Nf' (N digits after the point)");
      p->digits = fmt[2] - '0';
    }
    char *expr_text = lm_arena_strndup(set->arena, open + 1, (size_t)((fmt ? fmt : close) - open - 1));
    if (!expr_text) return lm_fail_at(ck->diag, LM_ENOMEM, ck->file, y->line, NULL, "out of memory");
    ynode fake = *y;
    fake.text = expr_text;
    lm_status st = parse_checked(set, ck, &fake, &p->expr);
    if (st != LM_OK) return st;
    s = close + 1;
  }
  return LM_OK;
}

static const char *scalar_of(const ynode *map, const char *key) {
  const ynode *y = lm_yaml_get(map, key);
  return y && y->type == Y_SCALAR ? y->text : NULL;
}

/* Load one rules file into set (rules appended). */
static lm_status load_text(lm_ruleset *set, const char *file, const char *text, const lm_catalog *cat,
                           lm_diag *diag) {
  ynode *root = NULL;
  lm_status st = lm_yaml_load(file, text, strlen(text), set->arena, &root, diag);
  if (st != LM_OK) return st;
  if (root->type != Y_MAP) return lm_diag_set(diag, LM_EPARSE, file, 1, 1, NULL, "expected a mapping");
  static const char *const top_keys[] = {"family", "archs", "rules", NULL};
  static const char *const rule_keys[] = {"id", "severity", "when", "verdict", "explain", "uses",
                                          "gain", "source", NULL};
  for (size_t i = 0; i < root->n_items; i += 2)
    if (!in_list(top_keys, root->items[i]->text))
      return lm_diag_set(diag, LM_EPARSE, file, root->items[i]->line, root->items[i]->column,
                         root->items[i]->text, "unknown key (family, archs, rules)");
  const ynode *archs = lm_yaml_get(root, "archs");
  if (archs && archs->type == Y_SEQ && cat) {
    int mine = 0;
    for (size_t i = 0; i < archs->n_items; i++)
      if (archs->items[i]->type == Y_SCALAR && strcmp(archs->items[i]->text, cat->arch) == 0) mine = 1;
    if (!mine) return LM_OK; /* rules of another family */
  }
  const ynode *rules = lm_yaml_get(root, "rules");
  if (!rules || rules->type != Y_SEQ)
    return lm_diag_set(diag, LM_EPARSE, file, root->line, root->column, "rules", "expected a list of rules");
  checker ck = {cat, lm_arena_strdup(set->arena, file), 0, 0, diag};
  for (size_t i = 0; i < rules->n_items; i++) {
    const ynode *r = rules->items[i];
    if (r->type != Y_MAP) return lm_diag_set(diag, LM_EPARSE, file, r->line, r->column, NULL, "expected a rule");
    for (size_t k = 0; k < r->n_items; k += 2)
      if (!in_list(rule_keys, r->items[k]->text))
        return lm_diag_set(diag, LM_EPARSE, file, r->items[k]->line, r->items[k]->column, r->items[k]->text,
                           "unknown key in a rule (id, severity, when, verdict, explain, uses, gain, source)");
    lm_rule rule;
    memset(&rule, 0, sizeof rule);
    rule.file = ck.file;
    rule.line = r->line;
    const char *id = scalar_of(r, "id"), *sev = scalar_of(r, "severity");
    const ynode *when = lm_yaml_get(r, "when"), *verdict = lm_yaml_get(r, "verdict");
    if (!id || !when || when->type != Y_SCALAR || !verdict || verdict->type != Y_SCALAR)
      return lm_diag_set(diag, LM_EPARSE, file, r->line, r->column, id, "a rule needs id, when and verdict");
    for (size_t k = 0; k < set->n_rules; k++)
      if (strcmp(set->rules[k].id, id) == 0)
        return lm_diag_set(diag, LM_EPARSE, file, r->line, r->column, id, "rule id used twice");
    rule.id = lm_arena_strdup(set->arena, id);
    rule.severity = 1;
    if (sev) {
      int s = -1;
      for (int k = 0; severities[k]; k++)
        if (strcmp(severities[k], sev) == 0) s = k;
      if (s < 0)
        return lm_diag_set(diag, LM_EPARSE, file, r->line, r->column, "severity",
                           "'%s': expected info, warning or critical", sev);
      rule.severity = s;
    }
    if ((st = parse_checked(set, &ck, when, &rule.when)) != LM_OK) return st;
    if ((st = parse_template(set, &ck, verdict, &rule.verdict)) != LM_OK) return st;
    const ynode *gain = lm_yaml_get(r, "gain");
    if (gain && gain->type == Y_SCALAR && (st = parse_checked(set, &ck, gain, &rule.gain)) != LM_OK) return st;
    const char *explain = scalar_of(r, "explain"), *source = scalar_of(r, "source");
    rule.explain = lm_arena_strdup(set->arena, explain ? explain : "");
    rule.source = lm_arena_strdup(set->arena, source ? source : "");
    if (!source || !source[0])
      return lm_diag_set(diag, LM_EPARSE, file, r->line, r->column, id,
                         "a rule needs a source: the guide its threshold comes from");
    const ynode *uses = lm_yaml_get(r, "uses");
    if (uses && uses->type == Y_SEQ) {
      rule.uses = lm_arena_alloc(set->arena, (uses->n_items + 1) * sizeof *rule.uses);
      if (!rule.uses) return lm_oom(diag, file);
      for (size_t k = 0; k < uses->n_items; k++) {
        const ynode *u = uses->items[k];
        if (u->type != Y_SCALAR) continue;
        if (cat && !catalog_has_metric(cat, u->text))
          return lm_diag_set(diag, LM_ENOTFOUND, file, u->line, u->column, "uses", "'%s': %s has no such metric",
                             u->text, cat->arch);
        rule.uses[rule.n_uses++] = lm_arena_strdup(set->arena, u->text);
      }
    }
    if (set->n_rules == set->cap) {
      size_t cap = set->cap ? set->cap * 2 : 16;
      lm_rule *grown = lm_arena_alloc(set->arena, cap * sizeof *grown);
      if (!grown) return lm_oom(diag, file);
      if (set->n_rules) memcpy(grown, set->rules, set->n_rules * sizeof *grown);
      set->rules = grown;
      set->cap = cap;
    }
    set->rules[set->n_rules++] = rule;
  }
  return LM_OK;
}

static lm_ruleset *new_set(void) {
  lm_ruleset *set = calloc(1, sizeof *set);
  if (set && !(set->arena = lm_arena_new(1 << 14))) {
    free(set);
    return NULL;
  }
  return set;
}

lm_status lm_rules_load_texts(const lm_catalog *cat, const lm_rules_text *files, lm_ruleset **out,
                              lm_diag *diag) {
  lm_status st = LM_OK;
  *out = NULL;
  lm_ruleset *set = new_set();
  if (!set) return lm_oom(diag, NULL);
  for (size_t i = 0; files && files[i].name && st == LM_OK; i++) {
    /* A file of another family is skipped before it is parsed whole: its
     * `archs` list comes first, and parsing is most of the cost of rules. */
    if (cat && lm_yaml_top_list_has(files[i].text, strlen(files[i].text), "archs", cat->arch) == 0) continue;
    st = load_text(set, files[i].name, files[i].text, cat, diag);
  }
  if (st != LM_OK) {
    lm_rules_free(set);
    return st;
  }
  *out = set;
  return LM_OK;
}

static int cmp_names(const void *a, const void *b) {
  return strcmp(*(const char *const *)a, *(const char *const *)b);
}

lm_status lm_rules_add_dir(lm_ruleset *set, const lm_catalog *cat, const char *dir, lm_diag *diag) {
  lm_status st = LM_OK;
  char *text = NULL;
  DIR *d = opendir(dir);
  if (!d)
    return lm_fail_at(diag, errno == ENOENT ? LM_ENOTFOUND : LM_EIO, dir, 0, "--rules-dir",
                      "cannot open the rules folder: %s", strerror(errno));
  const char *names[256];
  size_t n = 0;
  struct dirent *e;
  while ((e = readdir(d)) != NULL && n < LM_ARRAY_LEN(names)) {
    size_t len = strlen(e->d_name);
    if (len > 5 && strcmp(e->d_name + len - 5, ".yaml") == 0) {
      if (!(names[n] = lm_arena_strdup(set->arena, e->d_name))) {
        st = lm_oom(diag, dir);
        goto done;
      }
      n++;
    }
  }
  qsort(names, n, sizeof *names, cmp_names);
  if (n == 0) st = lm_fail_at(diag, LM_ENOTFOUND, dir, 0, "--rules-dir", "no .yaml rule files in this folder");
  for (size_t i = 0; i < n && st == LM_OK; i++) {
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, names[i]);
    if ((st = lm_read_file(path, (size_t)4 << 20, &text, NULL, diag)) == LM_OK) st = load_text(set, path, text, cat, diag);
    lm_free(text);
    text = NULL;
  }
done:
  closedir(d);
  return st;
}

void lm_rules_free(lm_ruleset *set) {
  if (!set) return;
  lm_arena_free(set->arena);
  free(set);
}

const char *lm_rule_severity_name(int severity) {
  return severity >= 0 && severity <= 2 ? severities[severity] : "?";
}
