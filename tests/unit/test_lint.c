/* test_lint.c - the built-in definitions: every architecture compiles (the
 * built-in catalog and a fresh run-time compile of metrics/<arch> agree),
 * every counter a metric names is in the architecture's counter list, and
 * the panel/table/row ids are the reference tool's. */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "metrics/metrics.h"

#ifndef LUMEN_METRICS_SOURCE
#error "LUMEN_METRICS_SOURCE must name the metrics/ folder"
#endif

int main(void) {
  const char *const *archs = lm_metrics_builtin_list();
  int n = 0;
  for (const char *const *a = archs; *a; a++, n++) {
    const lm_catalog *b = lm_metrics_builtin(*a);
    CHECK(b != NULL);
    if (!b) continue;
    lm_diag d;
    lm_status st = lm_catalog_check_counters(b, &d);
    CHECK(st == LM_OK);
    if (st != LM_OK) fprintf(stderr, "%s: %s %s\n", *a, d.field, d.message);
    char dir[4096];
    snprintf(dir, sizeof dir, "%s/%s", LUMEN_METRICS_SOURCE, *a);
    lm_catalog *c = NULL;
    char overlay[4096];
    snprintf(overlay, sizeof overlay, "%s/compat-3.3", LUMEN_METRICS_SOURCE);
    const char *overlays[] = {overlay};
    st = lm_metrics_compile_dir_compat(dir, overlays, 1, b->compat, &c, &d);
    CHECK(st == LM_OK);
    if (st != LM_OK) {
      char line[1024];
      fprintf(stderr, "%s\n", lm_diag_format(&d, line, sizeof line));
      continue;
    }
    CHECK(c->n_nodes == b->n_nodes && c->n_tables == b->n_tables && c->n_rows == b->n_rows);
    CHECK(strcmp(c->arch, *a) == 0);
    int nvidia = strcmp(b->vendor, "nvidia") == 0;
    CHECK(nvidia || strcmp(b->vendor, "amd") == 0);
    CHECK(strcmp(c->vendor, b->vendor) == 0 && strcmp(c->chip, b->chip) == 0);
    /* What the chip cannot measure: the same statements in both; the
     * Radeon ones say FLOPs are among them, by the counters they lack. */
    CHECK(c->n_unmeasurable == b->n_unmeasurable);
    for (int32_t i = 0; i < b->n_unmeasurable && i < c->n_unmeasurable; i++)
      CHECK(strcmp(c->unmeasurable[i].what, b->unmeasurable[i].what) == 0 &&
            strcmp(c->unmeasurable[i].why, b->unmeasurable[i].why) == 0 &&
            strcmp(c->unmeasurable[i].counters, b->unmeasurable[i].counters) == 0);
    static const char *const radeon[] = {"gfx1100", "gfx1101", "gfx1102", "gfx1200", "gfx1201", NULL};
    for (const char *const *r = radeon; *r; r++)
      if (strcmp(*r, *a) == 0)
        CHECK(b->n_unmeasurable > 0 && lm_catalog_unmeasurable(b, "SQ_INSTS_VALU_ADD_F32_sum") != NULL &&
              strstr(lm_catalog_unmeasurable(b, "SQ_INSTS_VALU_ADD_F32_sum")->what, "FLOP") != NULL);
    /* AMD Instinct: panels 0-18 with the reference tool's ids. AMD Radeon
     * (gfx1xxx): the reference tool's numbers for the panels their few
     * counters fill, 0 to 17 (no per-channel counters, so no panel 18),
     * with GL2 in 17.1. NVIDIA: panels 0-11
     * (speed of light, memory chart, roofline, launch, occupancy, compute,
     * memory, scheduler, warp state, instructions) and a chip name for the
     * CUPTI Host API. Every table id starts with its panel's number. */
    if (nvidia) {
      CHECK(b->n_panels == 12 && b->panels[0].id == 0 && b->panels[b->n_panels - 1].id == 11);
      CHECK(b->chip[0] != '\0' && lm_metrics_builtin_find(b->chip) == b);
      CHECK(lm_catalog_find_table(b, "4.1") >= 0 && lm_catalog_find_table(b, "6.1") >= 0 &&
            lm_catalog_find_table(b, "10.2") >= 0);
    } else if (strncmp(*a, "gfx1", 4) == 0) {
      CHECK(b->n_panels >= 8 && b->panels[0].id == 0 && b->panels[b->n_panels - 1].id == 17);
      CHECK(lm_catalog_find_table(b, "17.1") >= 0 && lm_catalog_find_table(b, "7.2") >= 0);
    } else {
      CHECK(b->n_panels >= 16 && b->panels[0].id == 0 && b->panels[b->n_panels - 1].id == 18);
      CHECK(lm_catalog_find_table(b, "18.2") >= 0);
    }
    CHECK(lm_metrics_builtin_find(b->arch) == b);
    for (int32_t p = 0; p < b->n_panels; p++)
      for (int32_t t = b->panels[p].first_table;
           t < b->panels[p].first_table + b->panels[p].n_tables; t++)
        CHECK(atoi(b->tables[t].id) == b->panels[p].id);
    /* Every row has a description of ours. */
    int undescribed = 0;
    for (int32_t r = 0; r < b->n_rows; r++) undescribed += b->rows[r].desc[0] == '\0';
    CHECK(undescribed == 0);
    CHECK(lm_catalog_find_table(b, "2.1") >= 0 && lm_catalog_find_table(b, "3.1") >= 0);
    lm_catalog_free(c);
  }
  CHECK(n == 21);
  CHECK(lm_metrics_builtin("gfx1030") == NULL);
  CHECK(lm_metrics_builtin_find("gh100") == lm_metrics_builtin("sm_90"));
  CHECK(lm_metrics_builtin_find("GA100") == lm_metrics_builtin("sm_80"));
  CHECK(lm_metrics_builtin_find("SM_100") == lm_metrics_builtin("sm_100"));
  CHECK(lm_metrics_builtin_find("gfx90a") == lm_metrics_builtin("gfx90a"));
  CHECK(lm_metrics_builtin_find("gv100") == lm_metrics_builtin("sm_70"));
  CHECK(lm_metrics_builtin_find("TU104") == lm_metrics_builtin("sm_75"));
  CHECK(lm_metrics_builtin_find("ga102") == lm_metrics_builtin("sm_86"));
  CHECK(lm_metrics_builtin_find("AD102") == lm_metrics_builtin("sm_89"));
  CHECK(lm_metrics_builtin_find("GP100") == NULL);
  /* Every AMD Instinct architecture but gfx906 has 3.3 semantics (the
   * reference dropped it; Radeon and other vendors have no reference
   * versions); gfx950 has no
   * 3.0 ones, and its default catalog is the 3.3 one. */
  for (const char *const *a = archs; *a; a++) {
    if (strcmp(*a, "gfx906") == 0 || strncmp(*a, "sm_", 3) == 0 || strncmp(*a, "gfx1", 4) == 0) {
      CHECK(lm_metrics_builtin_compat(*a, "3.3") == NULL);
      continue;
    }
    const lm_catalog *c33 = lm_metrics_builtin_compat(*a, "3.3");
    CHECK(c33 != NULL && strcmp(c33->compat, "3.3") == 0);
    const lm_catalog *c30 = lm_metrics_builtin_compat(*a, "3.0");
    CHECK((c30 == NULL) == (strcmp(*a, "gfx950") == 0));
    if (c30 && c33) CHECK(strcmp(c30->digest, c33->digest) != 0);
  }
  CHECK(strcmp(lm_metrics_builtin("gfx950")->compat, "3.3") == 0);
  CHECK(strcmp(lm_metrics_builtin("gfx90a")->compat, "3.0") == 0);
  return check_report("test_lint");
}
