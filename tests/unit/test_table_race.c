/* test_table_race.c - one workload analysed on two threads at once, as
 * lumen serve shares a loaded workload between connection threads. A
 * workload loaded from a store for an analysis (lm_store_load_for, as
 * analyze --db loads it) keeps counter columns packed until read
 * (lm_table_deferred); the first analysis to read a column fills it into
 * the table, under a const pointer (lm_table_values). Two threads filling
 * at once raced on the column and the table's arena. Each round loads the
 * workload afresh (nothing filled yet), runs the two analyses together
 * and compares both with an analysis of a separate copy. Under
 * ThreadSanitizer (LUMEN_TSAN, run by CI) an unguarded fill is reported
 * at once. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "analyze/analyze.h"
#include "check.h"
#include "store/store.h"

#define ROUNDS 8

typedef struct job {
  const lm_workload *w;
  const lm_catalog *cat;
  char got[1 << 16];
  int status, backwards;
} job;

/* The analysis as text: every number cell of every table, in order. */
static int digest(const lm_workload *w, const lm_catalog *cat, char *out, size_t cap) {
  lm_analyze_opts o;
  memset(&o, 0, sizeof o);
  lm_analysis *a = NULL;
  lm_diag d;
  if (lm_analyze_run(w, cat, &o, &a, &d) != LM_OK) return -1;
  size_t at = 0;
  out[0] = '\0';
  for (int32_t t = 0; t < a->n_tables && at + 32 < cap; t++) {
    const lm_rtable *rt = &a->tables[t];
    for (size_t i = 0; i < (size_t)rt->n_rows * (size_t)rt->n_cols && at + 32 < cap; i++)
      if (rt->cells[i].kind == LM_CELL_NUMBER) at += (size_t)snprintf(out + at, cap - at, "%.6g ", rt->cells[i].num);
  }
  lm_analysis_free(a);
  return 0;
}

/* Every column's values through lm_table_values (which fills a deferred
 * column on first use), from the first column or the last: a sum per
 * column, appended to out. */
static int values_digest(const lm_table *t, int backwards, char *out, size_t cap) {
  size_t at = strlen(out);
  for (size_t k = 0; k < t->n_cols; k++) {
    size_t c = backwards ? t->n_cols - 1 - k : k;
    if (!lm_table_values(t, c, NULL)) return -1;
  }
  for (size_t c = 0; c < t->n_cols && at + 32 < cap; c++) {
    double sum = 0;
    for (size_t r = 0; r < t->n_rows; r++) sum += t->cols[c].values[r] == t->cols[c].values[r] ? t->cols[c].values[r] : 0;
    at += (size_t)snprintf(out + at, cap - at, "%.9g ", sum);
  }
  return 0;
}

static void *run(void *arg) {
  job *j = arg;
  j->status = digest(j->w, j->cat, j->got, sizeof j->got);
  if (j->status == 0) j->status = values_digest(j->w->pmc, j->backwards, j->got, sizeof j->got);
  return NULL;
}

int main(void) {
  const char *shared = getenv("LUMEN_SHARED_DIR");
  char dir[4096], tmp[] = "/tmp/lumen-table-race-XXXXXX", url[4200];
  snprintf(dir, sizeof dir, "%s/workloads/_mix/mix_MI200", shared ? shared : "../shared");
  CHECK(mkdtemp(tmp) != NULL);
  snprintf(url, sizeof url, "%s/s.db", tmp);
  lm_store *s = NULL;
  lm_diag d;
  lm_import_result res;
  CHECK(lm_store_open(url, 1, &s, &d) == LM_OK);
  CHECK(s && lm_store_import(s, dir, "mix", NULL, &res, &d) == LM_OK);
  const lm_catalog *cat = lm_metrics_builtin("gfx90a");
  lm_workload *ref = NULL;
  CHECK(s && lm_store_load_for(s, "mix", cat, &ref, &d) == LM_OK);
  if (!ref) return check_report("test_table_race");
  size_t deferred = 0;
  for (size_t c = 0; c < ref->pmc->n_cols; c++) deferred += lm_table_deferred(ref->pmc, c);
  CHECK(deferred > 10); /* the store keeps counter columns packed */
  static char want[1 << 16];
  CHECK(digest(ref, cat, want, sizeof want) == 0);
  CHECK(values_digest(ref->pmc, 0, want, sizeof want) == 0);
  CHECK(strlen(want) > 100);
  int differ = 0;
  for (int r = 0; r < ROUNDS; r++) {
    lm_workload *w = NULL;
    CHECK(lm_store_load_for(s, "mix", cat, &w, &d) == LM_OK);
    if (!w) break;
    static job a, b;
    a.w = b.w = w;
    a.cat = b.cat = cat;
    a.backwards = 0;
    b.backwards = 1;
    pthread_t ta, tb;
    CHECK(pthread_create(&ta, NULL, run, &a) == 0);
    CHECK(pthread_create(&tb, NULL, run, &b) == 0);
    pthread_join(ta, NULL);
    pthread_join(tb, NULL);
    CHECK(a.status == 0 && b.status == 0);
    differ += strcmp(a.got, want) != 0;
    differ += strcmp(b.got, want) != 0;
    lm_workload_free(w);
  }
  CHECK(differ == 0);
  lm_workload_free(ref);
  lm_store_close(s);
  static const char *const leftovers[] = {"", "-wal", "-shm", "-journal"};
  for (size_t i = 0; i < sizeof leftovers / sizeof *leftovers; i++) {
    char f[4300];
    snprintf(f, sizeof f, "%s%s", url, leftovers[i]);
    unlink(f);
  }
  rmdir(tmp);
  return check_report("test_table_race");
}
