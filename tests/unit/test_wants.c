/* test_wants.c - the columns an analysis reads (src/analyze/wants.c): the
 * hash index of a catalog's inputs gives lm_analyze_wants' answer for
 * every built-in architecture, on the inputs' own names, indexed names of
 * many forms, the shared workloads' column names and names of no input. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyze/analyze.h"
#include "check.h"
#include "metrics/metrics.h"

static size_t mismatches, accepted, asked;

static void same(lm_wants_index *ix, const lm_catalog *cat, const char *source, const char *name) {
  int slow = lm_analyze_wants((void *)cat, source, name), fast = lm_analyze_wants_indexed(ix, source, name);
  asked++;
  accepted += slow != 0;
  if (slow != fast) {
    if (mismatches < 10) fprintf(stderr, "  %s / %s: %d, indexed %d\n", source, name, slow, fast);
    mismatches++;
  }
}

/* Every column name of a shared workload's table, against source. */
static void header_names(lm_wants_index *ix, const lm_catalog *cat, const char *path, const char *source) {
  FILE *f = fopen(path, "rb");
  if (!f) return;
  static char line[1 << 20];
  if (fgets(line, sizeof line, f)) {
    line[strcspn(line, "\r\n")] = '\0';
    for (char *tok = strtok(line, ","); tok; tok = strtok(NULL, ",")) same(ix, cat, source, tok);
  }
  fclose(f);
}

int main(void) {
  static const char *const suffixes[] = {"",     "[0]", "[1]",  "[5]", "[31]", "[127]", "[128]", "[01]",
                                         "[9999999]", "[]", "[x]", "[1]x", "[1][2]", "[-1]", "x", "[3"};
  static const char *const sources[] = {"pmc_perf", "SQ_LEVEL_WAVES", "SQ_INST_LEVEL_VMEM", "roofline", "other"};
  const char *shared = getenv("LUMEN_SHARED_DIR");
  size_t n_arch = 0;
  for (const char *const *a = lm_metrics_builtin_list(); *a; a++, n_arch++) {
    const lm_catalog *cat = lm_metrics_builtin(*a);
    CHECK(cat != NULL);
    if (!cat) continue;
    lm_wants_index *ix = lm_analyze_wants_index_new(cat);
    CHECK(ix != NULL);
    if (!ix) continue;
    for (int32_t i = 0; i < cat->n_inputs; i++) {
      const lm_input *in = &cat->inputs[i];
      for (size_t s = 0; s < sizeof suffixes / sizeof *suffixes; s++) {
        char name[512];
        snprintf(name, sizeof name, "%s%s", in->column, suffixes[s]);
        same(ix, cat, in->source, name);
        for (size_t k = 0; k < sizeof sources / sizeof *sources; k++) same(ix, cat, sources[k], name);
      }
    }
    same(ix, cat, "pmc_perf", "GRBM_GUI_ACTIVE");
    same(ix, cat, "pmc_perf", "");
    same(ix, cat, "roofline", "anything");
    same(ix, cat, "pmc_perf", "TCC_HIT\x1f[1]");
    char path[4096];
    static const char *const files[] = {"vcopy/MI200/pmc_perf.csv", "vcopy/MI300X_A1/pmc_perf.csv",
                                        "vcopy/MI100/pmc_perf.csv", "vcopy/MI200/SQ_LEVEL_WAVES.csv"};
    for (size_t f = 0; shared && f < sizeof files / sizeof *files; f++) {
      snprintf(path, sizeof path, "%s/workloads/%s", shared, files[f]);
      header_names(ix, cat, path, f == 3 ? "SQ_LEVEL_WAVES" : "pmc_perf");
    }
    lm_analyze_wants_index_free(ix);
  }
  /* No catalog: the columns analysis reads by name only. */
  lm_wants_index *none = lm_analyze_wants_index_new(NULL);
  CHECK(none != NULL);
  if (none) {
    same(none, NULL, "pmc_perf", "SQ_WAVES");
    same(none, NULL, "pmc_perf", "TCC_HIT[0]");
    lm_analyze_wants_index_free(none);
  }
  lm_analyze_wants_index_free(NULL);
  CHECK(n_arch >= 3);
  CHECK(mismatches == 0);
  /* the answers are not all one way */
  CHECK(accepted > 1000 && accepted < asked / 2);
  return check_report("test_wants");
}
