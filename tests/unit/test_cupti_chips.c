/* test_cupti_chips.c - every NVIDIA metric folder against its chip: CUPTI's
 * Profiler Host API (no GPU needed) must know each metric name the folder
 * lists, and the list must build into a config image with a pass count.
 * A made-up name must be refused, so the check can fail. Skipped (exit
 * 77) where lumen was built without CUDA or libcupti cannot be loaded. */
#include <stdlib.h>
#include <string.h>

#include "backend/cupti_host.h"
#include "check.h"
#include "metrics/metrics.h"

int main(void) {
  lm_cupti_host *h = NULL;
  lm_diag d;
  lm_diag_clear(&d);
  if (lm_cupti_host_open(&h, &d) != LM_OK) {
    printf("SKIP: CUPTI Profiler Host API unavailable: %s\n", d.message);
    return 77;
  }
  char desc[256];
  lm_cupti_host_describe(h, desc, sizeof desc);
  printf("%s\n", desc);
  int n_nvidia = 0;
  for (const char *const *a = lm_metrics_builtin_list(); *a; a++) {
    const lm_catalog *c = lm_metrics_builtin(*a);
    if (strcmp(c->vendor, "nvidia") != 0) continue;
    n_nvidia++;
    CHECK(lm_cupti_host_has_chip(h, c->chip));
    CHECK(lm_catalog_check_counters(c, &d) == LM_OK);
    uint8_t *bad = calloc((size_t)c->n_counters + 1, 1);
    size_t n_bad = 0;
    CHECK(bad != NULL);
    if (!bad) continue;
    lm_status st = lm_cupti_host_check(h, c->chip, c->counters, (size_t)c->n_counters, bad, &n_bad, &d);
    CHECK(st == LM_OK);
    CHECK(n_bad == 0);
    for (int32_t i = 0; i < c->n_counters; i++)
      if (bad[i]) fprintf(stderr, "%s (%s): unknown metric %s\n", c->arch, c->chip, c->counters[i]);
    free(bad);
    int32_t passes = 0;
    size_t bytes = 0;
    uint8_t *image = NULL;
    st = lm_cupti_host_passes(h, c->chip, c->counters, (size_t)c->n_counters, &passes, &bytes,
                              &image, &d);
    CHECK(st == LM_OK && passes >= 1 && bytes > 0 && image != NULL);
    printf("%s (%s): %d metrics known, one config: %d passes, %zu bytes\n", c->arch, c->chip,
           (int)c->n_counters, (int)passes, bytes);
    lm_free(image);
    /* The check can fail: made-up names are refused, real ones kept. */
    const char *probe[] = {"dram__bytes.sum.no_such_submetric", "dram__bytes.sum",
                           "no_such_unit__cycles.sum"};
    uint8_t probe_bad[3] = {0, 0, 0};
    CHECK(lm_cupti_host_check(h, c->chip, probe, 3, probe_bad, &n_bad, &d) == LM_OK);
    CHECK(n_bad == 2 && probe_bad[0] && !probe_bad[1] && probe_bad[2]);
    CHECK(lm_cupti_host_passes(h, c->chip, probe + 1, 1, &passes, NULL, NULL, &d) == LM_OK &&
          passes == 1);
    CHECK(lm_cupti_host_passes(h, c->chip, probe, 1, &passes, NULL, NULL, &d) == LM_ENOTFOUND);
  }
  CHECK(n_nvidia == 7);
  const char *one[] = {"dram__bytes.sum"};
  int32_t passes;
  CHECK(!lm_cupti_host_has_chip(h, "GX999"));
  CHECK(lm_cupti_host_passes(h, "GX999", one, 1, &passes, NULL, NULL, &d) == LM_EARCH);
  lm_cupti_host_close(h);
  return check_report("test_cupti_chips");
}
