/* test_sort_race.c - analyses evaluated on two threads at once, as lumen
 * serve evaluates them on its connection threads, give the top-kernels
 * order each gives alone. The order breaks ties in total duration by
 * kernel name, read from the workload's own strings: a comparator that
 * took them from a global read the other thread's workload (wrong order,
 * or a string id past its table). Workloads A (_mix/mix_MI200) and B
 * (_mix/mix_MI300X_A1, with fewer kernel names) get every duration 0 (all
 * ties, as on MI300 folders with zero timestamps). Under ThreadSanitizer
 * (LUMEN_TSAN, run by CI) the shared comparator state is reported at
 * once; in other builds the race shows as a crash or another order. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyze/analyze.h"
#include "check.h"
#include "load/load.h"

#define ROUNDS 2000

typedef struct job {
  const lm_workload *w;
  const lm_catalog *cat;
  char want[4096]; /* the order alone */
  int errors, differ;
} job;

/* The kernel names of table 0.1 (top kernels), in order, '|'-separated. */
static int top_order(const lm_workload *w, const lm_catalog *cat, char *out, size_t cap) {
  static const char *const blocks[] = {"0"};
  lm_analyze_opts o;
  memset(&o, 0, sizeof o);
  o.blocks = blocks;
  o.n_blocks = 1;
  lm_analysis *a = NULL;
  lm_diag d;
  if (lm_analyze_run(w, cat, &o, &a, &d) != LM_OK) return -1;
  const lm_rtable *t = lm_analysis_find(a, "0.1");
  size_t at = 0;
  out[0] = '\0';
  for (int32_t r = 0; t && r < t->n_rows && at < cap; r++) {
    const lm_cell *c = &t->cells[(size_t)r * (size_t)t->n_cols];
    at += (size_t)snprintf(out + at, cap - at, "%s|", c->kind == LM_CELL_TEXT && c->text ? c->text : "?");
  }
  int ok = t && t->n_rows > 0;
  lm_analysis_free(a);
  return ok ? 0 : -1;
}

/* Every duration 0, and each row named by another of the table's
 * strings: many kernels, all tied, ordered by name alone. */
static int all_ties(lm_workload *w) {
  lm_table *t = w->pmc;
  long s = lm_table_find(t, "Start_Timestamp"), e = lm_table_find(t, "End_Timestamp"),
       k = lm_table_find(t, "Kernel_Name");
  if (s < 0 || e < 0 || k < 0 || !t->cols[k].text_ids || !t->n_strings) return -1;
  memcpy(t->cols[e].values, t->cols[s].values, t->n_rows * sizeof(double));
  for (size_t r = 0; r < t->n_rows; r++) t->cols[k].text_ids[r] = (int32_t)(r % t->n_strings);
  return 0;
}

static void *loop(void *arg) {
  job *j = arg;
  char got[4096];
  for (int i = 0; i < ROUNDS; i++) {
    if (top_order(j->w, j->cat, got, sizeof got) != 0) j->errors++;
    else if (strcmp(got, j->want) != 0) j->differ++;
  }
  return NULL;
}

/* Folders in the rocpd layout, read on two threads at once: the pivot
 * sorts their rows, and its comparator once took the table from a global.
 * Each read gives the dispatch order one read alone gives. */
typedef struct read_job {
  const char *dir;
  char want[1024];
  int errors, differ;
} read_job;

static int dispatch_order(const char *dir, char *out, size_t cap) {
  lm_workload *w = NULL;
  lm_diag d;
  if (lm_workload_read(dir, &w, &d) != LM_OK) return -1;
  long c = lm_table_find(w->pmc, "Kernel_Name"), s = lm_table_find(w->pmc, "Start_Timestamp");
  size_t len = 0;
  out[0] = '\0';
  for (size_t r = 0; c >= 0 && r < w->pmc->n_rows && len < cap; r++) {
    const char *k = lm_table_text(w->pmc, (size_t)c, r);
    int n = snprintf(out + len, cap - len, "%s@%.0f|", k ? k : "", s >= 0 ? w->pmc->cols[s].values[r] : 0.0);
    len += n > 0 ? (size_t)n : 0;
  }
  lm_workload_free(w);
  return c >= 0 ? 0 : -1;
}

static void *read_loop(void *arg) {
  read_job *j = arg;
  char got[1024];
  for (int i = 0; i < 40; i++) {
    if (dispatch_order(j->dir, got, sizeof got) != 0)
      j->errors++;
    else if (strcmp(got, j->want) != 0)
      j->differ++;
  }
  return NULL;
}

static void test_rocpd_reads(const char *shared) {
  char dir[4096];
  snprintf(dir, sizeof dir, "%s/workloads-3.3/vcopy/MI300X_A1_rocpd", shared);
  read_job j[2] = {{dir, "", 0, 0}, {dir, "", 0, 0}};
  CHECK(dispatch_order(dir, j[0].want, sizeof j[0].want) == 0);
  memcpy(j[1].want, j[0].want, sizeof j[0].want);
  CHECK(strchr(j[0].want, '|') != NULL);
  pthread_t t[2];
  for (int i = 0; i < 2; i++) CHECK(pthread_create(&t[i], NULL, read_loop, &j[i]) == 0);
  for (int i = 0; i < 2; i++) pthread_join(t[i], NULL);
  CHECK(j[0].errors == 0 && j[1].errors == 0 && j[0].differ == 0 && j[1].differ == 0);
}

int main(void) {
  const char *shared = getenv("LUMEN_SHARED_DIR");
  char a_dir[4096], b_dir[4096];
  snprintf(a_dir, sizeof a_dir, "%s/workloads/_mix/mix_MI200", shared ? shared : "../shared");
  snprintf(b_dir, sizeof b_dir, "%s/workloads/_mix/mix_MI300X_A1", shared ? shared : "../shared");
  lm_workload *a = NULL, *b = NULL;
  lm_diag d;
  CHECK(lm_workload_read(a_dir, &a, &d) == LM_OK);
  CHECK(lm_workload_read(b_dir, &b, &d) == LM_OK);
  if (!a || !b) return check_report("test_sort_race");
  CHECK(all_ties(a) == 0);
  CHECK(all_ties(b) == 0);
  CHECK(a->pmc->n_strings > b->pmc->n_strings); /* A's ids run past B's strings */
  job ja = {a, lm_metrics_builtin(a->arch), "", 0, 0}, jb = {b, lm_metrics_builtin(b->arch), "", 0, 0};
  CHECK(top_order(a, ja.cat, ja.want, sizeof ja.want) == 0);
  CHECK(top_order(b, jb.cat, jb.want, sizeof jb.want) == 0);
  /* Alone, A's order is by name: several kernels, ascending. */
  CHECK(strchr(ja.want, '|') != strrchr(ja.want, '|'));
  pthread_t ta, tb;
  CHECK(pthread_create(&ta, NULL, loop, &ja) == 0);
  CHECK(pthread_create(&tb, NULL, loop, &jb) == 0);
  pthread_join(ta, NULL);
  pthread_join(tb, NULL);
  CHECK(ja.errors == 0 && jb.errors == 0);
  CHECK(ja.differ == 0);
  CHECK(jb.differ == 0);
  if (ja.differ || jb.differ) fprintf(stderr, "orders that differed: %d of A's, %d of B's\n", ja.differ, jb.differ);
  lm_workload_free(a);
  lm_workload_free(b);
  test_rocpd_reads(shared ? shared : "../shared");
  return check_report("test_sort_race");
}
