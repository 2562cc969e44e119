/* test_builtin.c - the built-in catalogs made from their images
 * (src/metrics/builtin.c): each one, in every reference version lumen has,
 * equals field by field, string by string, a fresh run-time compile of its
 * metrics/<arch> folder; lookups give one catalog per architecture and
 * version however many threads ask for it first. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "metrics/internal.h"

#ifndef LUMEN_METRICS_SOURCE
#error "LUMEN_METRICS_SOURCE must name the metrics/ folder"
#endif

typedef struct strings {
  const char **v;
  size_t n, cap;
} strings;

static void collect(const char *const *slot, void *ctx) {
  strings *s = ctx;
  if (s->n == s->cap) {
    s->cap = s->cap ? s->cap * 2 : 1024;
    s->v = realloc(s->v, s->cap * sizeof *s->v);
    if (!s->v) abort();
  }
  s->v[s->n++] = *slot;
}

static size_t string_differences(const lm_catalog *a, const lm_catalog *b) {
  strings sa = {0}, sb = {0};
  lm_catalog_visit_strings(a, collect, &sa);
  lm_catalog_visit_strings(b, collect, &sb);
  size_t bad = sa.n != sb.n;
  for (size_t i = 0; i < sa.n && i < sb.n; i++) {
    int same = (!sa.v[i] && !sb.v[i]) || (sa.v[i] && sb.v[i] && strcmp(sa.v[i], sb.v[i]) == 0);
    if (!same && bad++ < 5)
      fprintf(stderr, "  %s %s: string %zu: \"%s\" != \"%s\"\n", a->arch, a->compat, i,
              sa.v[i] ? sa.v[i] : "(null)", sb.v[i] ? sb.v[i] : "(null)");
  }
  free(sa.v);
  free(sb.v);
  return bad;
}

/* Every field that is not a string, including the arrays' terminators. */
static size_t number_differences(const lm_catalog *a, const lm_catalog *b) {
  size_t bad = 0;
#define SAME(x) bad += !((a->x) == (b->x))
  SAME(l2_channels_per_xcd);
  SAME(lds_banks_per_cu);
  SAME(pipes_per_gpu);
  SAME(sqc_per_xcd);
  SAME(n_nodes);
  SAME(n_inputs);
  SAME(n_sysvars);
  SAME(n_norms);
  SAME(n_norm_slots);
  SAME(n_panels);
  SAME(n_tables);
  SAME(n_cols);
  SAME(n_rows);
  SAME(n_cells);
  SAME(n_counters);
  SAME(n_limits);
  SAME(n_aliases);
  SAME(n_unmeasurable);
  if (bad) return bad;
  for (int32_t i = 0; i < a->n_nodes; i++) {
    SAME(nodes[i].op);
    SAME(nodes[i].vector);
    SAME(nodes[i].chan);
    SAME(nodes[i].stage);
    SAME(nodes[i].masked);
    SAME(nodes[i].a);
    SAME(nodes[i].b);
    SAME(nodes[i].c);
    bad += memcmp(&a->nodes[i].k, &b->nodes[i].k, sizeof(double)) != 0;
  }
  for (int32_t i = 0; i < a->n_inputs; i++) SAME(inputs[i].index);
  for (int32_t i = 0; i < a->n_norm_slots * a->n_norms; i++) SAME(norm_nodes[i]);
  for (int32_t i = 0; i < a->n_panels; i++) {
    SAME(panels[i].id);
    SAME(panels[i].first_table);
    SAME(panels[i].n_tables);
  }
  for (int32_t i = 0; i < a->n_tables; i++) {
    SAME(tables[i].kind);
    SAME(tables[i].style);
    SAME(tables[i].comparable);
    SAME(tables[i].channels);
    SAME(tables[i].first_col);
    SAME(tables[i].n_cols);
    SAME(tables[i].first_row);
    SAME(tables[i].n_rows);
  }
  for (int32_t i = 0; i < a->n_cols; i++) {
    SAME(cols[i].role);
    SAME(cols[i].agg);
  }
  for (int32_t i = 0; i < a->n_rows; i++) SAME(rows[i].first_cell);
  for (int32_t i = 0; i < a->n_cells; i++) {
    SAME(cells[i].node);
    SAME(cells[i].corrected);
  }
  for (int32_t i = 0; i < a->n_limits; i++) SAME(limits[i].limit);
  /* the terminating entries that lists are walked to */
  bad += a->sysvars[a->n_sysvars] != NULL || a->counters[a->n_counters] != NULL;
  bad += a->inputs[a->n_inputs].source != NULL || a->cells[a->n_cells].node != -1;
  bad += a->tables[a->n_tables].id != NULL || a->norms[a->n_norms].name != NULL;
#undef SAME
  return bad;
}

typedef struct race {
  const char *arch, *compat;
  const lm_catalog *got[64];
} race;

static void *ask_many(void *p) {
  race *r = p;
  for (int i = 0; i < 64; i++)
    r->got[i] = i % 2 ? lm_metrics_builtin_compat(r->arch, r->compat) : lm_metrics_builtin_find(r->arch);
  return NULL;
}

int main(void) {
  /* Threads race for the first use of one catalog (it is made by the
   * first of them): all get the same one. Run before anything else. */
  race races[8];
  pthread_t th[8];
  for (int t = 0; t < 8; t++) {
    races[t].arch = "gfx942";
    races[t].compat = "3.0";
    CHECK(pthread_create(&th[t], NULL, ask_many, &races[t]) == 0);
  }
  for (int t = 0; t < 8; t++) pthread_join(th[t], NULL);
  const lm_catalog *first = races[0].got[0];
  CHECK(first != NULL && strcmp(first->arch, "gfx942") == 0);
  size_t other = 0;
  for (int t = 0; t < 8; t++)
    for (int i = 0; i < 64; i++) other += races[t].got[i] != first;
  CHECK(other == 0);

  size_t n_catalogs = 0;
  for (const char *const *a = lm_metrics_builtin_list(); *a; a++) {
    for (const char *const *v = lm_compat_versions; *v; v++) {
      const lm_catalog *b = lm_metrics_builtin_compat(*a, *v);
      if (!b) continue;
      n_catalogs++;
      CHECK(lm_metrics_builtin_compat(*a, *v) == b);
      CHECK(strcmp(b->arch, *a) == 0 && strcmp(b->compat, *v) == 0);
      CHECK(b->arena == NULL);
      char dir[4096], overlay[4096];
      snprintf(dir, sizeof dir, "%s/%s", LUMEN_METRICS_SOURCE, *a);
      snprintf(overlay, sizeof overlay, "%s/compat-3.3", LUMEN_METRICS_SOURCE);
      const char *overlays[] = {overlay};
      lm_catalog *c = NULL;
      lm_diag d;
      lm_status st = lm_metrics_compile_dir_compat(dir, overlays, 1, *v, &c, &d);
      CHECK(st == LM_OK);
      if (st != LM_OK) continue;
      size_t numbers = number_differences(b, c), texts = numbers ? 0 : string_differences(b, c);
      if (numbers || texts) fprintf(stderr, "%s %s: %zu numbers, %zu strings differ\n", *a, *v, numbers, texts);
      CHECK(numbers == 0 && texts == 0);
      lm_catalog_free(c);
    }
  }
  /* Twenty-one architectures: gfx908 to gfx942 in two versions, gfx906 in
   * 3.0, gfx950 in 3.3, the seven Radeon and the seven NVIDIA ones without
   * reference versions. */
  CHECK(n_catalogs == 26);
  /* The strings of different catalogs are shared where equal. */
  const lm_catalog *c30 = lm_metrics_builtin_compat("gfx90a", "3.0"), *c33 = lm_metrics_builtin_compat("gfx90a", "3.3");
  CHECK(c30 && c33 && c30 != c33 && c30->vendor == c33->vendor);
  return check_report("test_builtin");
}
