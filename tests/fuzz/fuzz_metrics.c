/* fuzz_metrics.c - libFuzzer target for whole definition folders: the
 * input is a quantities.yaml and a panel file, separated by a line
 * "--8<--", compiled together with a fixed arch.yaml. It reaches what
 * fuzz_expr cannot: quantities that use quantities (chains, cycles, deep
 * nesting), normalizations, YAML structure around formulas, and inputs of
 * realistic size (tens of kilobytes). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "metrics/metrics.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size > (1u << 20)) return 0;
  char *text = malloc(size + 1);
  if (!text) return 0;
  memcpy(text, data, size);
  text[size] = '\0';
  if (strlen(text) != size) { /* NULs: the YAML reader takes text */
    free(text);
    return 0;
  }
  char *panel = strstr(text, "\n--8<--\n");
  const char *panel_text = "panel: 2\ntitle: t\ntables:\n- id: '2.1'\n  columns: {Metric: name, Avg: mean}\n"
                           "  rows:\n  - metric: m\n    Avg: $q0\n";
  if (panel) {
    *panel = '\0';
    panel_text = panel + 8;
  }
  const char *names[] = {"arch.yaml", "quantities.yaml", "02_t.yaml"};
  const char *texts[] = {"arch: gfxfuzz\ncounters: [SQ_WAVES, GRBM_GUI_ACTIVE]\n", text, panel_text};
  lm_catalog *cat = NULL;
  lm_diag diag;
  if (lm_metrics_compile_texts(names, texts, 3, &cat, &diag) == LM_OK) lm_catalog_free(cat);
  free(text);
  return 0;
}
