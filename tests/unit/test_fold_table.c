/* test_fold_table.c - the shared fold of other tools' files (src/fold).
 *
 * Rows and columns grow past their first capacities; a counter first seen
 * late is NaN on the rows before it; dispatch ids find their rows again
 * (the last one and older ones, per group); kernel names are interned
 * once; the finish lays out pmc_perf as the shape says and warns once,
 * naming every assumed system information field. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "fold/fold.h"

static char warned[2048];
static int n_warned;

static void sink(lm_log_level level, const char *message, void *user) {
  (void)user;
  if (level != LM_LOG_WARN) return;
  n_warned++;
  snprintf(warned, sizeof warned, "%s", message);
}

/* 3000 dispatches (past the first 1024 rows), 40 counters (past 32), the
 * last counter first seen at row 2000. */
static void test_growth(lm_fold *f) {
  lm_diag diag = {0};
  char id[32], name[32];
  for (int r = 0; r < 3000; r++) {
    snprintf(id, sizeof id, "%d", r);
    size_t row;
    int added;
    CHECK(lm_fold_row(f, id, &row, &added, &diag) == LM_OK);
    CHECK(added == 1 && row == (size_t)r);
    CHECK(lm_fold_row(f, id, &row, &added, &diag) == LM_OK); /* the last id */
    CHECK(added == 0 && row == (size_t)r);
    int32_t k;
    CHECK(lm_fold_intern(f, r % 2 ? "odd" : "even", &k, &diag) == LM_OK);
    f->kernel[row] = k;
    f->facts[0][row] = 2.0 * r;
    for (int c = 0; c < 40; c++) {
      if (c == 39 && r < 2000) continue;
      snprintf(name, sizeof name, "C%d", c);
      CHECK(lm_fold_set(f, name, row, r + c / 100.0, &diag) == LM_OK);
    }
  }
  CHECK(f->n_rows == 3000 && f->n_counters == 40 && f->n_kernels == 2);
  const double *late = lm_fold_column(f, "C39");
  CHECK(late && isnan(late[0]) && isnan(late[1999]) && late[2000] == 2000.39);
  CHECK(lm_fold_column(f, "C0")[2999] == 2999);
  CHECK(f->tag[0] == LM_FOLD_TAG_UNSET && !lm_fold_column(f, "C40"));
  size_t row;
  int added;
  CHECK(lm_fold_row(f, "17", &row, &added, &diag) == LM_OK && row == 17 && !added); /* an older id */
  f->group = 1; /* another run: the same id is another dispatch */
  CHECK(lm_fold_row(f, "17", &row, &added, &diag) == LM_OK);
  CHECK(!added && row == 17); /* the last id is compared first */
  f->has_last = 0;
  CHECK(lm_fold_row(f, "17", &row, &added, &diag) == LM_OK && added && row == 3000);
  CHECK(f->kernel[3000] == -1 && isnan(f->facts[0][3000]) && isnan(lm_fold_column(f, "C0")[3000]));
  const char *key = lm_fold_key(f, "17", &diag);
  CHECK_STR(key, "1:17");
  size_t c5, c6;
  CHECK(lm_fold_counter(f, "C5", &c5, &diag) == LM_OK && lm_fold_counter(f, "C6", &c6, &diag) == LM_OK);
  CHECK(c5 == 5 && c6 == 6 && f->guess == 7);
}

static void test_finish(lm_fold *f) {
  lm_diag diag = {0};
  static const char *const facts[] = {"GPU_ID"};
  lm_fold_shape shape = {.format = "test", .fact_names = facts, .n_facts = 1};
  lm_workload *w = NULL;
  CHECK(lm_fold_workload(f, &shape, &w, &diag) == LM_OK);
  if (!w) return;
  lm_table *t = w->pmc;
  CHECK(t->n_rows == 3001 && t->n_cols == 3 + 40);
  CHECK_STR(t->cols[0].name, "Dispatch_ID");
  CHECK_STR(t->cols[1].name, "GPU_ID");
  CHECK_STR(t->cols[2].name, "Kernel_Name");
  CHECK_STR(t->cols[3].name, "C0");
  CHECK(t->cols[0].values[2999] == 2999 && t->cols[1].values[3] == 6);
  CHECK_STR(lm_table_text(t, 2, 3), "odd");
  CHECK_STR(lm_table_text(t, 2, 3000), "");
  const char *keys[] = {"gpu_model", "cu_per_gpu"}, *values[] = {"Test GPU", "8"};
  n_warned = 0;
  lm_log_set(sink, NULL, LM_LOG_WARN);
  CHECK(lm_fold_sysinfo(w, "run.csv", "gfx942", keys, values, 2, "agents.csv", &diag) == LM_OK);
  lm_log_set(NULL, NULL, LM_LOG_WARN);
  CHECK(n_warned == 1);
  CHECK(strstr(warned, "run.csv: system information assumed from a typical MI300X (gfx942): ") == warned);
  CHECK(strstr(warned, "simd_per_cu") && strstr(warned, "max_sclk") && !strstr(warned, "cu_per_gpu"));
  CHECK(!strstr(warned, "gpu_model"));
  CHECK_STR(lm_sysinfo_text(&w->sysinfo, "cu_per_gpu"), "8");
  lm_workload_free(w);
}

/* Ids past the dense range, or not plain numbers, are found by key; the
 * dense ones by index, per group; lm_fold_find adds nothing. A reserve
 * keeps the rows; a counter added past the block's columns moves them
 * and keeps every value. */
static void test_ids_and_reserve(void) {
  lm_fold *f = NULL;
  lm_diag diag = {0};
  CHECK(lm_fold_new("ids.csv", &f, &diag) == LM_OK);
  if (!f) return;
  static const char *const ids[] = {"5", "16777215", "16777216", "0x10", "005", "-1", "99999999999"};
  size_t row, n = sizeof ids / sizeof *ids;
  int added;
  for (size_t i = 0; i < n; i++) {
    CHECK(!lm_fold_find(f, ids[i], &row));
    CHECK(lm_fold_row(f, ids[i], &row, &added, &diag) == LM_OK && added && row == i);
    CHECK(lm_fold_set(f, "A", row, (double)i, &diag) == LM_OK);
  }
  /* ("005" is another id than "5", as it always was by key) */
  CHECK(f->n_rows == n);
  f->has_last = 0;
  for (size_t i = 0; i < n; i++) CHECK(lm_fold_find(f, ids[i], &row) && row == i);
  CHECK(f->n_rows == n);
  f->group = 2;
  CHECK(!lm_fold_find(f, "5", &row) && !lm_fold_find(f, "0x10", &row));
  f->group = 0;
  CHECK(lm_fold_reserve(f, 100000, &diag) == LM_OK && f->cap_rows == 100000);
  CHECK(lm_fold_column(f, "A")[6] == 6 && isnan(f->facts[3][2]));
  char name[16];
  for (int c = 0; c < 100; c++) {
    snprintf(name, sizeof name, "B%d", c);
    CHECK(lm_fold_set(f, name, 1, c, &diag) == LM_OK);
  }
  CHECK(lm_fold_column(f, "A")[6] == 6 && lm_fold_column(f, "B0")[1] == 0 && lm_fold_column(f, "B99")[1] == 99);
  CHECK(isnan(lm_fold_column(f, "B99")[0]) && isnan(lm_fold_column(f, "B0")[6]));
  CHECK(lm_fold_row(f, "12345", &row, &added, &diag) == LM_OK && added && row == n);
  CHECK(isnan(lm_fold_column(f, "B50")[row]) && f->kernel[row] == -1);
  lm_fold_free(f);
}

int main(void) {
  lm_fold *f = NULL;
  lm_diag diag = {0};
  CHECK(lm_fold_new("run.csv", &f, &diag) == LM_OK);
  if (f) {
    test_growth(f);
    test_finish(f);
  }
  lm_fold_free(f);
  test_ids_and_reserve();
  return check_report("test_fold_table");
}
