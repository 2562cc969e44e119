/* fuzz_expr.c - libFuzzer target for the metric expression parser and the
 * compiler behind it: parse, print, re-parse (the printed form must parse),
 * and compile a one-cell definition. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "metrics/metrics.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size > (1u << 18)) return 0; /* realistic formulas are far shorter; long ones test the depth limits */
  char *text = malloc(size + 1);
  if (!text) return 0;
  memcpy(text, data, size);
  text[size] = '\0';
  lm_arena *arena = lm_arena_new(4096);
  lm_expr *e = NULL;
  lm_diag diag;
  if (arena && lm_expr_parse(text, arena, &e, &diag) == LM_OK) {
    lm_buf printed = {0};
    lm_expr_print(e, &printed);
    lm_expr *again = NULL;
    /* The printer must write what the parser reads back; only its extra
     * parentheses may hit the nesting limit. */
    if (!printed.failed && lm_expr_parse(lm_buf_cstr(&printed), arena, &again, &diag) != LM_OK &&
        !strstr(diag.message, "nested too deeply"))
      abort();
    lm_buf_fini(&printed);
    /* Compile it as the one cell of a metric table. */
    lm_buf def = {0};
    lm_buf_puts(&def, "panel: 2\ntitle: t\ntables:\n- id: '2.1'\n  columns: {Metric: name, Avg: value}\n"
                      "  rows:\n  - metric: m\n    Avg: '");
    for (const char *p = text; *p; p++) {
      if (*p == '\'') lm_buf_putc(&def, '\'');
      if (*p != '\n' && *p != '\r') lm_buf_putc(&def, *p);
    }
    lm_buf_puts(&def, "'\n");
    const char *names[] = {"arch.yaml", "quantities.yaml", "02_t.yaml"};
    const char *texts[] = {"arch: gfxfuzz\n",
                           "normalizations:\n  per_wave: {expr: SQ_WAVES, unit: wave}\n"
                           "quantities:\n  duration: End_Timestamp - Start_Timestamp\n",
                           lm_buf_cstr(&def)};
    lm_catalog *cat = NULL;
    if (!def.failed && lm_metrics_compile_texts(names, texts, 3, &cat, &diag) == LM_OK)
      lm_catalog_free(cat);
    lm_buf_fini(&def);
  }
  lm_arena_free(arena);
  free(text);
  return 0;
}
