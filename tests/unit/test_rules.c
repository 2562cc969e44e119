/* test_rules.c - unit tests of the rules as data (src/metrics/rules.c),
 * their evaluation (src/advise) and the summary's name shortening
 * (src/report/summary.c). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "advise/advise.h"
#include "check.h"
#include "metrics/internal.h"
#include "report/report.h"

/* Every built-in rule loads against every built-in architecture: a rule
 * naming a metric that some architecture lacks fails here. */
static void test_builtin_rules(void) {
  for (const char *const *n = lm_metrics_builtin_list(); *n; n++) {
    const lm_catalog *cat = lm_metrics_builtin(*n);
    lm_ruleset *rules = NULL;
    lm_diag d;
    lm_diag_clear(&d);
    lm_status st = lm_rules_load_texts(cat, lm_rules_builtin(), &rules, &d);
    if (st != LM_OK) fprintf(stderr, "%s: %s\n", *n, d.message);
    CHECK(st == LM_OK);
    /* cdna.yaml for AMD Instinct, rdna.yaml for Radeon (gfx1*), nvidia.yaml for the sm_* architectures; a file
     * never applies to the other vendor. */
    int nvidia = strcmp(cat->vendor, "nvidia") == 0;
    int rdna = strncmp(*n, "gfx1", 4) == 0;
    if (rdna) CHECK(rules && rules->n_rules >= 5);
    else if (!nvidia) CHECK(rules && rules->n_rules >= 8);
    else CHECK(rules && rules->n_rules >= 15);
    for (size_t i = 0; rules && i < rules->n_rules; i++) {
      const lm_rule *r = &rules->rules[i];
      CHECK(r->source[0] != '\0');
      CHECK(r->explain[0] != '\0');
      CHECK(strstr(r->file, nvidia ? "nvidia.yaml" : rdna ? "rdna.yaml" : "cdna.yaml") != NULL);
      /* NVIDIA thresholds name NVIDIA's guides (or say they are lumen's). */
      if (nvidia)
        CHECK(strstr(r->source, "Nsight Compute") || strstr(r->source, "CUDA C++ Best Practices") ||
              strncmp(r->source, "lumen", 5) == 0);
      /* Every metric a rule names as its support exists in this catalog. */
      for (int32_t u = 0; u < r->n_uses; u++) {
        int found = 0;
        for (int32_t row = 0; row < cat->n_rows && !found; row++)
          found = cat->rows[row].name && strcmp(cat->rows[row].name, r->uses[u]) == 0;
        if (!found) fprintf(stderr, "%s: rule %s uses '%s', which it lacks\n", *n, r->id, r->uses[u]);
        CHECK(found);
      }
    }
    lm_rules_free(rules);
  }
}

static lm_status load_one(const char *text, lm_diag *d) {
  const lm_catalog *cat = lm_metrics_builtin("gfx90a");
  lm_rules_text files[] = {{"t.yaml", text}, {NULL, NULL}};
  lm_ruleset *rules = NULL;
  lm_diag_clear(d);
  lm_status st = lm_rules_load_texts(cat, files, &rules, d);
  lm_rules_free(rules);
  return st;
}

static void test_rule_errors(void) {
  lm_diag d;
  const char *head = "archs: [gfx90a]\nrules:\n- id: r\n  source: s\n";
  char text[1024];
  snprintf(text, sizeof text, "%s  when: value('No Such Metric') > 1\n  verdict: v\n", head);
  CHECK(load_one(text, &d) == LM_ENOTFOUND);
  CHECK(d.line == 5 && strstr(d.message, "gfx90a has no such metric"));
  snprintf(text, sizeof text, "%s  when: $nope > 1\n  verdict: v\n", head);
  CHECK(load_one(text, &d) == LM_EPARSE && strstr(d.message, "unknown variable $nope"));
  snprintf(text, sizeof text, "%s  when: SQ_WAVES > 1\n  verdict: v\n", head);
  CHECK(load_one(text, &d) == LM_EPARSE && strstr(d.message, "value('NAME')"));
  snprintf(text, sizeof text, "%s  when: $calls > 1\n  verdict: 'x {$calls:.2g}'\n", head);
  CHECK(load_one(text, &d) == LM_EPARSE && strstr(d.message, ":.Nf"));
  snprintf(text, sizeof text, "%s  when: $calls > 1\n  verdict: 'x {$calls'\n", head);
  CHECK(load_one(text, &d) == LM_EPARSE && strstr(d.message, "'}'"));
  CHECK(load_one("archs: [gfx90a]\nrules:\n- id: r\n  when: $calls > 1\n  verdict: v\n", &d) == LM_EPARSE);
  CHECK(strstr(d.message, "needs a source") != NULL);
  snprintf(text, sizeof text, "%s  when: $calls > 1\n  verdict: v\n- id: r\n  source: s\n  when: 1\n  verdict: w\n",
           head);
  CHECK(load_one(text, &d) == LM_EPARSE && strstr(d.message, "twice"));
  snprintf(text, sizeof text, "%s  when: $calls > 1\n  verdict: v\n", head);
  CHECK(load_one(text, &d) == LM_OK);
  /* Files for other architectures are skipped, whatever they name. */
  CHECK(load_one("archs: [gfx942]\nrules:\n- id: r\n  source: s\n  when: value('Nothing') > 1\n  verdict: v\n",
                 &d) == LM_OK);
}

/* The evaluator: missing metrics are NaN and comparisons with NaN false. */
static void test_eval(void) {
  lm_arena *arena = lm_arena_new(4096);
  lm_analysis a;
  memset(&a, 0, sizeof a);
  double vars[32];
  for (int i = 0; i < 32; i++) vars[i] = i;
  const char *cases[][2] = {{"$calls + 2 * $mean_ns", "4"},  /* calls = 0, mean_ns = 2 */
                            {"value('Missing') > 1", "0"},
                            {"not (value('Missing') > 1)", "1"},
                            {"MAX($share, 3) if $cv > 5 else -1", "5"}, /* share = 5, cv = 6 */
                            {"MIN(value('Missing'), 1)", "nan"},
                            {"$calls / 0", "nan"}};
  for (size_t i = 0; i < LM_ARRAY_LEN(cases); i++) {
    lm_expr *e = NULL;
    lm_diag d;
    CHECK(lm_expr_parse(cases[i][0], arena, &e, &d) == LM_OK);
    double v = lm_advise_eval(e, &a, vars);
    if (strcmp(cases[i][1], "nan") == 0) CHECK(isnan(v));
    else CHECK_NEAR(v, atof(cases[i][1]), 1e-12);
  }
  lm_arena_free(arena);
}

static size_t chars(const char *s) {
  size_t n = 0;
  for (; *s; s++) n += ((unsigned char)*s & 0xC0) != 0x80;
  return n;
}

static void test_short_names(void) {
  const char *plus = "void rocprim::detail::block_reduce_kernel<true, rocprim::detail::wrapped_reduce_config<"
                     "rocprim::default_config, float>, float*, float*, float, rocprim::plus<float> >(float*, "
                     "unsigned long, float*, float, rocprim::plus<float>) [clone .kd]";
  char *s = lm_report_short_name(plus, 76, (size_t)-1);
  CHECK(s && chars(s) <= 76);
  /* Without a focus: arguments, then template arguments, go first. */
  CHECK_STR(s, "void rocprim::detail::block_reduce_kernel<…>(…)");
  lm_free(s);
  s = lm_report_short_name("short(int)", 76, (size_t)-1);
  CHECK_STR(s, "short(int)");
  lm_free(s);
  /* A focus keeps the differing part visible. */
  size_t at = (size_t)(strstr(plus, "plus") - plus);
  s = lm_report_short_name(plus, 40, at);
  CHECK(s && chars(s) <= 40 && strstr(s, "plus"));
  lm_free(s);
  /* Control characters never survive. */
  s = lm_report_short_name("k\x1b[2J", 76, (size_t)-1);
  CHECK(s && !strchr(s, '\x1b'));
  lm_free(s);
}

static int has(const char *text, const char *value) {
  return lm_yaml_top_list_has(text, strlen(text), "archs", value);
}

/* The family gate: a top-level list read from the parser's events only. */
static void test_top_list(void) {
  CHECK(has("family: x\narchs: [gfx90a, gfx942]\nrules: []\n", "gfx942") == 1);
  CHECK(has("family: x\narchs: [gfx90a, gfx942]\nrules: []\n", "sm_90") == 0);
  CHECK(has("archs:\n- sm_80\n- sm_90\n", "sm_90") == 1);
  CHECK(has("archs:\n- sm_80\n- sm_90\n", "sm_9") == 0);
  /* after a value with nested lists and mappings */
  CHECK(has("rules:\n- id: r\n  when: {a: [1, [2]], b: c}\n- x\narchs: [z]\n", "z") == 1);
  CHECK(has("rules:\n- id: r\n  when: {a: [1, [2]], b: c}\n- x\narchs: [z]\n", "x") == 0);
  /* undecided: no such list, not a list, an item that is not text, a
   * document that is not a mapping, the text ending inside the list */
  CHECK(has("family: x\nrules: []\n", "x") == -1);
  CHECK(has("archs: gfx90a\n", "gfx90a") == -1);
  CHECK(has("archs: [a, [b]]\n", "a") == -1);
  CHECK(has("archs: [a, {b: c}]\n", "zz") == -1);
  CHECK(has("- archs\n", "archs") == -1);
  CHECK(has("archs: [a, b", "a") == -1);
  CHECK(has("", "a") == -1);
  /* long texts: the list past the first kilobytes, cut by them, or
   * followed by kilobytes the parser would refuse */
  static char text[12000];
  size_t at = 0;
  for (int i = 0; i < 100; i++) at += (size_t)snprintf(text + at, sizeof text - at, "# comment line %d of forty chars\n", i);
  snprintf(text + at, sizeof text - at, "archs: [a, b]\nrules: []\n");
  CHECK(has(text, "b") == 1 && has(text, "c") == 0);
  at = (size_t)snprintf(text, sizeof text, "archs: [");
  for (int i = 0; i < 400; i++) at += (size_t)snprintf(text + at, sizeof text - at, "arch%d, ", i);
  snprintf(text + at, sizeof text - at, "last]\n");
  CHECK(at > 2048 && has(text, "last") == 1 && has(text, "arch399") == 1 && has(text, "arch400") == 0);
  at = (size_t)snprintf(text, sizeof text, "archs: [x]\nrules:\n");
  for (int i = 0; i < 300; i++) at += (size_t)snprintf(text + at, sizeof text - at, "- {id: r%d, when: '1'}\n", i);
  snprintf(text + at, sizeof text - at, "- [unclosed\n");
  CHECK(has(text, "x") == 1 && has(text, "y") == 0);
  /* decided before a later syntax error, which the full load reports */
  CHECK(has("archs: [a]\nrules: [", "b") == 0);
  lm_diag d;
  CHECK(load_one("archs: [gfx90a]\nrules: [", &d) == LM_EPARSE);
  /* a file of another family is skipped unread */
  CHECK(load_one("archs: [sm_90]\nrules: [\nbogus: 1\n", &d) == LM_OK);
  /* without the list, a file is read and checked whole */
  CHECK(load_one("bogus: 1\nrules: []\n", &d) == LM_EPARSE);
}

int main(void) {
  test_top_list();
  test_builtin_rules();
  test_rule_errors();
  test_eval();
  test_short_names();
  return check_report("test_rules");
}
