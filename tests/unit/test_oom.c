/* test_oom.c - out of memory, end to end: each allocation of reading a
 * real workload folder, opening a store, importing the folder into it,
 * loading it back, analysing it and reading the kept analysis fails in
 * turn (lm_alloc_fail_after). Every operation either gives what the run
 * without failures gave (system information field by field, table sizes,
 * every counter value, every analysis cell) or fails with LM_ENOMEM;
 * never a success with other data (an empty field, a missing row), and a
 * failed import leaves no workload behind. The sweep fails every
 * allocation up to a bound, then steps geometrically, so it runs in
 * seconds; run it under ASan too for crashes and leaks. A system
 * information field without its text is refused, not read as empty. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "store/store.h"
#include "db/db.h"
#include "load/load.h"
#include "profile/profile.h"

static char shared[2048];

/* Allocations failed one by one up to DENSE, then every n + n/STEP. */
enum { DENSE = 3000, STEP = 12, MAX_TRIES = 100000000 };

static long next_n(long n) { return n < DENSE ? n + 1 : n + n / STEP; }

static int same_double(double a, double b) { return a == b || (isnan(a) && isnan(b)); }

static int same_sysinfo(const lm_sysinfo *a, const lm_sysinfo *b) {
  if (a->n_fields != b->n_fields) return 0;
  for (size_t i = 0; i < a->n_fields; i++)
    if (strcmp(a->names[i], b->names[i]) != 0 || strcmp(a->texts[i], b->texts[i]) != 0 ||
        !same_double(a->values[i], b->values[i]))
      return 0;
  return 1;
}

/* The same columns by name, with the same values in every row. */
static int same_table(const lm_table *a, const lm_table *b) {
  if (!a || !b) return a == b;
  if (a->n_rows != b->n_rows || a->n_cols != b->n_cols) return 0;
  lm_diag d;
  for (size_t c = 0; c < a->n_cols; c++) {
    size_t k = 0;
    while (k < b->n_cols && strcmp(a->cols[c].name, b->cols[k].name) != 0) k++;
    if (k == b->n_cols) return 0;
    const double *x = lm_table_values(a, c, &d), *y = lm_table_values(b, k, &d);
    if (!x || !y) return 0;
    for (size_t r = 0; r < a->n_rows; r++) {
      const char *p = lm_table_text(a, c, r), *q = lm_table_text(b, k, r);
      if (!same_double(x[r], y[r]) || (p == NULL) != (q == NULL) || (p && strcmp(p, q) != 0)) return 0;
    }
  }
  return 1;
}

static int same_workload(const lm_workload *a, const lm_workload *b) {
  return same_sysinfo(&a->sysinfo, &b->sysinfo) && strcmp(a->arch, b->arch) == 0 && same_table(a->pmc, b->pmc);
}

static int same_cells(const lm_analysis *a, const lm_analysis *b) {
  if (a->n_tables != b->n_tables || a->n_selected != b->n_selected) return 0;
  for (int32_t t = 0; t < a->n_tables; t++) {
    const lm_rtable *x = &a->tables[t], *y = &b->tables[t];
    if (x->n_rows != y->n_rows || x->n_cols != y->n_cols || strcmp(x->id, y->id) != 0) return 0;
    for (int32_t i = 0; i < x->n_rows * x->n_cols; i++) {
      const lm_cell *p = &x->cells[i], *q = &y->cells[i];
      if (p->kind != q->kind || p->integer != q->integer) return 0;
      if (p->kind == LM_CELL_NUMBER && !same_double(p->num, q->num)) return 0;
      if (p->kind == LM_CELL_TEXT && strcmp(p->text, q->text) != 0) return 0;
    }
  }
  return 1;
}

/* One sweep's bookkeeping: failures seen, and whether it ended. */
typedef struct sweep {
  const char *what;
  long failed, n;
  int done;
} sweep;

/* After an attempt with n allocations allowed: a failure must be LM_ENOMEM
 * (in the diagnostic too); a success ends the sweep. */
static int attempt_ended(sweep *s, lm_status st, const lm_diag *d) {
  lm_alloc_fail_after(-1);
  if (st == LM_OK) {
    s->done = 1;
    return 1;
  }
  if (st != LM_ENOMEM || d->status != LM_ENOMEM) {
    fprintf(stderr, "%s: allocation %ld failed: status %d (%s), diagnostic %d: %s\n", s->what, s->n, (int)st,
            lm_strerror(st), (int)d->status, d->message);
    CHECK(st == LM_ENOMEM && d->status == LM_ENOMEM);
  }
  s->failed++;
  return 0;
}

static void report(const sweep *s) {
  printf("%s: %ld allocation failures, success after %ld allowed\n", s->what, s->failed, s->n);
  CHECK(s->done && s->failed > 0);
}

static size_t n_workloads(lm_store *store) {
  lm_store_entry *list = NULL;
  size_t n = 0;
  lm_diag d;
  CHECK(lm_store_list(store, &list, &n, &d) == LM_OK);
  lm_free(list);
  return n;
}

static void test_read(const char *dir, const lm_workload *ref) {
  sweep s = {"read the folder", 0, 0, 0};
  for (; s.n < MAX_TRIES; s.n = next_n(s.n)) {
    lm_workload *w = NULL;
    lm_diag d;
    lm_diag_clear(&d);
    lm_alloc_fail_after(s.n);
    lm_status st = lm_workload_read(dir, &w, &d);
    int ended = attempt_ended(&s, st, &d);
    if (ended) CHECK(w && same_workload(w, ref));
    lm_workload_free(w);
    if (ended) break;
  }
  report(&s);
}

static void test_analyze(const lm_workload *w, const lm_catalog *cat, const lm_analysis *ref) {
  sweep s = {"analyze", 0, 0, 0};
  lm_analyze_opts o;
  memset(&o, 0, sizeof o);
  for (; s.n < MAX_TRIES; s.n = next_n(s.n)) {
    lm_analysis *a = NULL;
    lm_diag d;
    lm_diag_clear(&d);
    lm_alloc_fail_after(s.n);
    lm_status st = lm_analyze_run(w, cat, &o, &a, &d);
    int ended = attempt_ended(&s, st, &d);
    if (ended) CHECK(a && same_cells(a, ref));
    lm_analysis_free(a);
    if (ended) break;
  }
  report(&s);
}

/* Opening (creating) a store at url; the last open store is kept. */
static lm_store *test_open(const char *url) {
  sweep s = {"open a store", 0, 0, 0};
  lm_store *store = NULL;
  for (; s.n < MAX_TRIES; s.n = next_n(s.n)) {
    lm_diag d;
    lm_diag_clear(&d);
    lm_alloc_fail_after(s.n);
    lm_status st = lm_store_open(url, 1, &store, &d);
    if (attempt_ended(&s, st, &d)) break;
    CHECK(store == NULL);
  }
  report(&s);
  return store;
}

/* Import: a failed one leaves no workload; the one that succeeds loads
 * back as the folder reads. */
static void test_import(lm_store *store, const char *dir, const lm_workload *ref) {
  sweep s = {"import", 0, 0, 0};
  for (; s.n < MAX_TRIES; s.n = next_n(s.n)) {
    lm_import_result r;
    lm_diag d;
    lm_diag_clear(&d);
    lm_alloc_fail_after(s.n);
    lm_status st = lm_store_import(store, dir, "mix", NULL, &r, &d);
    if (attempt_ended(&s, st, &d)) {
      CHECK(r.existed == 0 && r.n_dispatches == ref->pmc->n_rows);
      break;
    }
    CHECK(n_workloads(store) == 0);
  }
  report(&s);
  CHECK(n_workloads(store) == 1);
}

/* Loading: as a load without failures gives (the store keeps fewer
 * columns than the folder has: the empty ones), with the folder's system
 * information. */
static void test_load(lm_store *store, const lm_workload *folder) {
  sweep s = {"load from the store", 0, 0, 0};
  lm_workload *ref = NULL;
  lm_diag d0;
  CHECK(lm_store_load(store, "mix", &ref, &d0) == LM_OK);
  if (!ref) return;
  CHECK(same_sysinfo(&ref->sysinfo, &folder->sysinfo) && ref->pmc->n_rows == folder->pmc->n_rows);
  for (; s.n < MAX_TRIES; s.n = next_n(s.n)) {
    lm_workload *w = NULL;
    lm_diag d;
    lm_diag_clear(&d);
    lm_alloc_fail_after(s.n);
    lm_status st = lm_store_load(store, "mix", &w, &d);
    int ended = attempt_ended(&s, st, &d);
    if (ended && !(w && same_workload(w, ref))) {
      fprintf(stderr, "%s: other data with %ld allocations allowed\n", s.what, s.n);
      CHECK(w && same_workload(w, ref));
    }
    lm_workload_free(w);
    if (ended) break;
  }
  report(&s);
  lm_workload_free(ref);
}

/* The kept default view, read back with its workload's information. */
static void test_store_analyze(lm_store *store, const lm_analysis *ref) {
  sweep s = {"analyze from the store", 0, 0, 0};
  lm_analyze_opts o;
  memset(&o, 0, sizeof o);
  for (; s.n < MAX_TRIES; s.n = next_n(s.n)) {
    lm_workload *w = NULL;
    lm_analysis *a = NULL;
    int cached = 0;
    lm_diag d;
    lm_diag_clear(&d);
    lm_alloc_fail_after(s.n);
    lm_status st = lm_store_analyze(store, "mix", NULL, &o, &w, &a, &cached, &d);
    int ended = attempt_ended(&s, st, &d);
    if (ended) CHECK(a && same_cells(a, ref));
    lm_analysis_free(a);
    lm_workload_free(w);
    if (ended) break;
  }
  report(&s);
}

/* A field whose key or value is missing (a failed copy) is an error, not
 * an empty field. */
static void test_sysinfo_build(void) {
  char arch[] = "gpu_arch", model[] = "gpu_model", gfx[] = "gfx90a", mi210[] = "MI210";
  char *keys[] = {arch, model};
  char *values[] = {gfx, NULL};
  lm_arena *arena = lm_arena_new(0);
  lm_table *t = NULL;
  lm_sysinfo info;
  lm_diag d;
  CHECK(arena != NULL);
  if (!arena) return;
  CHECK(lm_db_sysinfo_build("x.db", keys, values, 2, arena, &t, &info, &d) != LM_OK);
  lm_table_free(t);
  t = NULL;
  values[1] = mi210;
  CHECK(lm_db_sysinfo_build("x.db", keys, values, 2, arena, &t, &info, &d) == LM_OK);
  CHECK(info.n_fields == 2 && strcmp(info.texts[1], "MI210") == 0);
  lm_table_free(t);
  lm_arena_free(arena);
}

/* The in-app policy (its per-kernel and per-key states come from
 * lm_aligned_alloc): making it fails with LM_ENOMEM or works, and each
 * dispatch then gets the set, instance and selected number of the run
 * without failures, or collects nothing (set -1): an allocation that
 * fails never makes a dispatch collect another set. */
enum { POLICY_DISPATCHES = 24 };

static lm_status run_policy(const lm_tool_config *cfg, lm_choice *out) {
  static const char *const names[] = {"vecCopy", "vecAdd", "reduce"};
  lm_policy *p = NULL;
  lm_diag d;
  lm_diag_clear(&d);
  lm_status st = lm_policy_new(cfg, &p, &d);
  for (int i = 0; st == LM_OK && i < POLICY_DISPATCHES; i++) {
    lm_dispatch_facts f;
    memset(&f, 0, sizeof f);
    f.dispatch_id = (uint64_t)i + 1;
    f.kernel_id = (uint64_t)(i % 3) + 1;
    f.kernel_name = names[i % 3];
    f.grid = i % 2 ? 1024 : 2048; /* two keys per kernel with key_grid */
    f.workgroup = 256;
    lm_policy_choose(p, &f, &out[i]);
  }
  lm_policy_free(p);
  return st;
}

static void test_policy(int key_grid) {
  char c0[] = "SQ_WAVES", c1[] = "TCC_HIT", c2[] = "TCC_MISS";
  char *set0[] = {c0, NULL}, *set1[] = {c1, NULL}, *set2[] = {c2, NULL};
  char **sets[] = {set0, set1, set2};
  char *accumulate[] = {NULL, NULL, NULL};
  lm_tool_config cfg;
  memset(&cfg, 0, sizeof cfg);
  snprintf(cfg.arch, sizeof cfg.arch, "gfx90a");
  cfg.mode = LM_REPLAY_INSTANCE;
  cfg.key_grid = key_grid;
  cfg.n_sets = 3;
  cfg.set_counters = sets;
  cfg.set_accumulate = accumulate;
  lm_choice ref[POLICY_DISPATCHES], got[POLICY_DISPATCHES];
  CHECK(run_policy(&cfg, ref) == LM_OK);
  sweep s = {key_grid ? "policy (key_grid)" : "policy", 0, 0, 0};
  long collected_under_failures = 0;
  for (; s.n < MAX_TRIES; s.n = next_n(s.n)) {
    memset(got, 0, sizeof got);
    lm_alloc_fail_after(s.n);
    lm_status st = run_policy(&cfg, got);
    long made = lm_alloc_fail_after(-1);
    if (st != LM_OK) {
      s.failed++;
      CHECK(st == LM_ENOMEM);
      continue;
    }
    int all = 1;
    for (int i = 0; i < POLICY_DISPATCHES; i++) {
      if (got[i].set < 0) {
        all &= ref[i].set < 0;
        continue;
      }
      collected_under_failures++;
      CHECK(got[i].set == ref[i].set && got[i].instance == ref[i].instance &&
            got[i].selected == ref[i].selected && strcmp(got[i].key, ref[i].key) == 0);
    }
    if (all && made <= s.n) {
      s.done = 1;
      break;
    }
    s.failed++;
  }
  report(&s);
  CHECK(collected_under_failures > 0);
}

int main(void) {
  setvbuf(stdout, NULL, _IOLBF, 0);
  const char *sh = getenv("LUMEN_SHARED_DIR");
  snprintf(shared, sizeof shared, "%s", sh ? sh : "../shared");
  test_sysinfo_build();
  test_policy(0);
  test_policy(1);
  char dir[4096];
  snprintf(dir, sizeof dir, "%s/workloads/_mix/mix_MI200", shared);
  lm_workload *ref = NULL;
  lm_analysis *ref_analysis = NULL;
  lm_diag d;
  CHECK(lm_workload_read(dir, &ref, &d) == LM_OK);
  if (!ref) return check_report("test_oom");
  const lm_catalog *cat = lm_metrics_builtin(ref->arch);
  lm_analyze_opts o;
  memset(&o, 0, sizeof o);
  CHECK(cat && lm_analyze_run(ref, cat, &o, &ref_analysis, &d) == LM_OK);
  if (!ref_analysis) return check_report("test_oom");

  test_read(dir, ref);
  test_analyze(ref, cat, ref_analysis);

  char tmp[] = "/tmp/lumen-test-oom-XXXXXX";
  if (!mkdtemp(tmp)) return 1;
  char url[4200];
  snprintf(url, sizeof url, "%s/store.db", tmp);
  lm_store *store = test_open(url);
  if (store) {
    test_import(store, dir, ref);
    test_load(store, ref);
    test_store_analyze(store, ref_analysis);
    lm_store_close(store);
  }
  lm_analysis_free(ref_analysis);
  lm_workload_free(ref);
  char rm[4300];
  snprintf(rm, sizeof rm, "rm -rf '%s'", tmp);
  if (system(rm) != 0) return 1;
  return check_report("test_oom");
}
