/* test_store.c - the workload store, on SQLite and (with LUMEN_TEST_PG, a postgresql:// server)
 * on PostgreSQL: imports of Omniperf and lumen folders give the same
 * analysis as the folders; importing the same contents again, or from four
 * processes at once, keeps one copy; a different workload under a taken
 * name is refused; a failure in the middle of an import leaves nothing;
 * removal leaves no row behind; export and re-import find the same
 * workload; stored analyses come back cell for cell, a damaged one (cut
 * short, a title or id missing or out of range, counts past the workload)
 * is refused saying what is wrong; names with SQL metacharacters are just
 * names. Loading only the columns an analysis reads gives, for every
 * shared workload, the same analysis and roofline as loading them all; a
 * lumen folder written before the column codec is imported compact.
 * Listings count the rank parts of a workload and their distinct hosts,
 * also in a read-only version 3 store. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"
#include "store/store.h"
#include "sql/sql.h"
#include "db/db.h"
#include "load/load.h"

static char shared[2048];

static int same_cells(const lm_analysis *a, const lm_analysis *b) {
  if (a->n_tables != b->n_tables || a->n_selected != b->n_selected) return 0;
  for (int32_t t = 0; t < a->n_tables; t++) {
    const lm_rtable *x = &a->tables[t], *y = &b->tables[t];
    if (x->n_rows != y->n_rows || x->n_cols != y->n_cols || strcmp(x->id, y->id) != 0) return 0;
    for (int32_t i = 0; i < x->n_rows * x->n_cols; i++) {
      const lm_cell *p = &x->cells[i], *q = &y->cells[i];
      if (p->kind != q->kind || p->integer != q->integer) return 0;
      if (p->kind == LM_CELL_NUMBER && !(p->num == q->num || (isnan(p->num) && isnan(q->num)))) return 0;
      if (p->kind == LM_CELL_TEXT && strcmp(p->text, q->text) != 0) return 0;
    }
    for (int32_t r = 0; x->row_ids && r < x->n_rows; r++)
      if (!y->row_ids || strcmp(x->row_ids[r] ? x->row_ids[r] : "", y->row_ids[r] ? y->row_ids[r] : "") != 0)
        return 0;
  }
  return 1;
}

static int64_t count(lm_store *s, const char *sql) {
  lm_stmt *q = NULL;
  lm_diag d;
  int64_t n = -1;
  if (lm_sql_prepare(lm_store_sql(s), sql, &q, &d) == LM_OK && lm_stmt_step(q) == 1) n = lm_stmt_int64(q, 0);
  lm_stmt_free(q);
  return n;
}

static int64_t orphans(lm_store *s) {
  static const char *const tables[] = {"sysinfo", "kernel", "dispatch", "column_data", "region",
                                       "dispatch_region", "profile_run", "profile_record", "profile_value",
                                       "analysis_cache"};
  int64_t n = 0;
  for (size_t i = 0; i < sizeof tables / sizeof *tables; i++) {
    char sql[256];
    snprintf(sql, sizeof sql, "SELECT COUNT(*) FROM %s WHERE workload_id NOT IN (SELECT id FROM workload)",
             tables[i]);
    n += count(s, sql);
  }
  return n;
}

/* The analysis of a folder and of its copy in the store agree. */
static void check_same_as_folder(lm_store *s, const char *dir, const char *name) {
  lm_workload *w = NULL, *sw = NULL;
  lm_analysis *a = NULL, *b = NULL;
  lm_diag d;
  CHECK(lm_workload_read(dir, &w, &d) == LM_OK);
  if (!w) return;
  lm_analyze_opts o;
  memset(&o, 0, sizeof o);
  CHECK(lm_analyze_run(w, lm_metrics_builtin(w->arch), &o, &a, &d) == LM_OK);
  int cached = 0;
  CHECK(lm_store_analyze(s, name, NULL, &o, &sw, &b, &cached, &d) == LM_OK);
  CHECK(cached == 1); /* the import kept the default view */
  CHECK(a && b && same_cells(a, b));
  lm_analysis_free(b);
  lm_workload_free(sw);
  /* A filtered view is evaluated from the stored columns, then kept. */
  const char *k[] = {"vec"};
  o.kernels = k;
  o.n_kernels = 1;
  o.norm = LM_NORM_PER_KERNEL;
  lm_analysis_free(a);
  CHECK(lm_analyze_run(w, lm_metrics_builtin(w->arch), &o, &a, &d) == LM_OK);
  CHECK(lm_store_analyze(s, name, NULL, &o, &sw, &b, &cached, &d) == LM_OK && cached == 0);
  CHECK(a && b && same_cells(a, b));
  lm_analysis_free(b);
  lm_workload_free(sw);
  CHECK(lm_store_analyze(s, name, NULL, &o, &sw, &b, &cached, &d) == LM_OK && cached == 1);
  CHECK(a && b && same_cells(a, b));
  lm_analysis_free(b);
  lm_workload_free(sw);
  lm_analysis_free(a);
  lm_workload_free(w);
}

static int same_roofline(const lm_roofline *a, const lm_roofline *b) {
  if (!a || !b) return a == b;
  if (a->n_points != b->n_points || (a->missing == NULL) != (b->missing == NULL)) return 0;
  if (a->missing && strcmp(a->missing, b->missing) != 0) return 0;
  for (size_t i = 0; i < a->n_points; i++) {
    const lm_roof_point *p = &a->points[i], *q = &b->points[i];
    double x[] = {p->duration_ns, p->flops, p->valu_flops, p->bytes_l1, p->bytes_l2, p->bytes_hbm, p->bytes_lds};
    double y[] = {q->duration_ns, q->flops, q->valu_flops, q->bytes_l1, q->bytes_l2, q->bytes_hbm, q->bytes_lds};
    if (strcmp(p->kernel, q->kernel) != 0 || p->calls != q->calls) return 0;
    for (size_t k = 0; k < sizeof x / sizeof *x; k++)
      if (!(x[k] == y[k] || (isnan(x[k]) && isnan(y[k])))) return 0;
  }
  return 1;
}

/* One folder: every column and only the analysis's columns give the same
 * analyses (default view; a kernel and another normalization; the
 * statistics) and roofline. Returns 1 when fewer columns were loaded. */
static int selective_one(lm_store *s, const char *dir) {
  lm_workload *w = NULL, *all = NULL, *some = NULL;
  lm_diag d;
  if (lm_workload_read(dir, &w, &d) != LM_OK) return 0; /* folders the reference refuses */
  const lm_catalog *cat = lm_metrics_builtin(w->arch);
  lm_import_result res;
  int fewer = 0;
  if (!cat || lm_store_import(s, dir, NULL, NULL, &res, &d) != LM_OK) {
    lm_workload_free(w);
    return 0;
  }
  CHECK(lm_store_load(s, res.name, &all, &d) == LM_OK);
  CHECK(lm_store_load_for(s, res.name, cat, &some, &d) == LM_OK);
  if (all && some) {
    fewer = some->pmc->n_cols < all->pmc->n_cols;
    const char *k[] = {"vec"};
    for (int v = 0; v < 3; v++) {
      lm_analyze_opts o;
      memset(&o, 0, sizeof o);
      if (v == 1) {
        o.kernels = k;
        o.n_kernels = 1;
        o.norm = LM_NORM_PER_KERNEL;
      }
      o.stats_only = v == 2;
      lm_analysis *a = NULL, *b = NULL;
      lm_status sa = lm_analyze_run(all, cat, &o, &a, &d), sb = lm_analyze_run(some, cat, &o, &b, &d);
      CHECK(sa == sb);
      if (sa == LM_OK && sb == LM_OK && !same_cells(a, b)) {
        CHECK(!"the analysis of the chosen columns differs");
        fprintf(stderr, "  %s (view %d)\n", dir, v);
      }
      lm_analysis_free(a);
      lm_analysis_free(b);
      if (v == 0) {
        lm_roofline *ra = NULL, *rb = NULL;
        sa = lm_roofline_compute(all, &o, 10, &ra, &d);
        sb = lm_roofline_compute(some, &o, 10, &rb, &d);
        CHECK(sa == sb && same_roofline(ra, rb));
        lm_roofline_free(ra);
        lm_roofline_free(rb);
      }
    }
  }
  lm_workload_free(all);
  lm_workload_free(some);
  lm_workload_free(w);
  return fewer;
}

static void test_selective(const char *tmp) {
  char url[4200], root[4096];
  snprintf(url, sizeof url, "%s/selective.db", tmp);
  snprintf(root, sizeof root, "%s/workloads", shared);
  lm_store *s = NULL;
  lm_diag d;
  CHECK(lm_store_open(url, 1, &s, &d) == LM_OK);
  if (!s) return;
  DIR *top = opendir(root);
  struct dirent *e;
  int n = 0, fewer = 0;
  while (top && (e = readdir(top)) != NULL) {
    if (e->d_name[0] == '.') continue;
    char group[8192];
    snprintf(group, sizeof group, "%s/%s", root, e->d_name);
    DIR *sub = opendir(group);
    struct dirent *g;
    while (sub && (g = readdir(sub)) != NULL) {
      if (g->d_name[0] == '.') continue;
      char dir[16384];
      snprintf(dir, sizeof dir, "%s/%s", group, g->d_name);
      struct stat st;
      if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode)) continue;
      fewer += selective_one(s, dir);
      n++;
    }
    if (sub) closedir(sub);
  }
  if (top) closedir(top);
  printf("chosen columns: %d folders, %d with fewer columns loaded\n", n, fewer);
  CHECK(n > 80 && fewer > 60);
  lm_store_close(s);
}

/* A lumen folder whose lumen.db is in version 2's layout (raw columns, no
 * codec column) is imported with its columns compact. */
static void test_old_folder(const char *tmp) {
  char dir[4200], db_path[4300], wl[4096], url[4300];
  snprintf(wl, sizeof wl, "%s/workloads/vcopy/MI200", shared);
  snprintf(dir, sizeof dir, "%s/old_folder", tmp);
  snprintf(db_path, sizeof db_path, "%s/lumen.db", dir);
  snprintf(url, sizeof url, "%s/old_import.db", tmp);
  mkdir(dir, 0777);
  lm_workload *w = NULL;
  lm_diag d;
  CHECK(lm_workload_read(wl, &w, &d) == LM_OK);
  if (!w) return;
  lm_sql *db = NULL;
  CHECK(lm_sql_open(db_path, LM_DB_CREATE, &db, &d) == LM_OK && lm_db_schema(db, 1, &d) == LM_OK);
  CHECK(lm_db_write_workload(db, w, "old", NULL, wl, NULL, &d) == LM_OK);
  /* Version 2 wrote each column as its raw doubles. */
  lm_stmt *up = NULL;
  CHECK(lm_sql_prepare(db, "UPDATE column_data SET data = ?, codec = NULL WHERE source = 'pmc_perf' AND name = ?",
                       &up, &d) == LM_OK);
  CHECK(lm_sql_begin(db, &d) == LM_OK);
  for (size_t c = 0; up && c < w->pmc->n_cols; c++) {
    lm_stmt_bind_blob(up, 1, w->pmc->cols[c].values, w->pmc->n_rows * sizeof(double));
    lm_stmt_bind_text(up, 2, w->pmc->cols[c].name);
    CHECK(lm_stmt_step(up) >= 0);
    lm_stmt_reset(up);
  }
  lm_stmt_free(up);
  CHECK(lm_sql_commit(db, &d) == LM_OK);
  CHECK(lm_sql_exec(db, "DELETE FROM column_data WHERE source != 'pmc_perf'; "
                        "ALTER TABLE column_data DROP COLUMN codec; "
                        "UPDATE lumen_meta SET value = '2' WHERE key = 'schema_version'", 0, &d) == LM_OK);
  lm_sql_close(db);
  lm_store *s = NULL;
  CHECK(lm_store_open(url, 1, &s, &d) == LM_OK);
  lm_import_result res;
  CHECK(s && lm_store_import(s, dir, NULL, NULL, &res, &d) == LM_OK);
  if (s) {
    CHECK(count(s, "SELECT COUNT(*) FROM column_data") > 100);
    CHECK(count(s, "SELECT COUNT(*) FROM column_data WHERE codec IS NULL OR codec != 1") == 0);
    lm_workload *back = NULL;
    CHECK(lm_store_load(s, "old", &back, &d) == LM_OK);
    for (size_t c = 0; back && c < w->pmc->n_cols; c++) {
      long k = lm_table_find(back->pmc, w->pmc->cols[c].name);
      CHECK(k >= 0);
      if (k >= 0) CHECK(memcmp(back->pmc->cols[k].values, w->pmc->cols[c].values, w->pmc->n_rows * 8) == 0);
    }
    lm_workload_free(back);
  }
  lm_store_close(s);
  lm_workload_free(w);
}

/* A store of version 3 (no rank_sysinfo) opened read-only lists its
 * workloads, without ranks or hosts. */
static void test_old_list(const char *tmp) {
  char url[4300], wl[4096];
  snprintf(url, sizeof url, "%s/old_list.db", tmp);
  snprintf(wl, sizeof wl, "%s/workloads/vcopy/MI200", shared);
  lm_store *s = NULL;
  lm_diag d;
  lm_import_result r;
  CHECK(lm_store_open(url, 1, &s, &d) == LM_OK && lm_store_import(s, wl, "v", NULL, &r, &d) == LM_OK);
  CHECK(s && lm_sql_exec(lm_store_sql(s), "DROP TABLE rank_sysinfo; DROP TABLE set_rank; "
                         "UPDATE lumen_meta SET value = '3' WHERE key = 'schema_version'", 0, &d) == LM_OK);
  lm_store_close(s);
  s = NULL;
  CHECK(lm_store_open(url, 0, &s, &d) == LM_OK);
  lm_store_entry *e = NULL;
  size_t n = 0;
  CHECK(s && lm_store_list(s, &e, &n, &d) == LM_OK && n == 1);
  CHECK(e && n == 1 && strcmp(e[0].name, "v") == 0 && e[0].n_dispatches == 3 && e[0].n_ranks == 0 &&
        e[0].n_hosts == 0);
  free(e);
  CHECK(count(s, "SELECT COUNT(*) FROM lumen_meta WHERE key = 'schema_version' AND value = '3'") == 1);
  lm_store_close(s);
}

static void run_suite(const char *url, const char *tmp) {
  lm_store *s = NULL;
  lm_diag d;
  printf("store: %s\n", url);
  CHECK(lm_store_open(url, 1, &s, &d) == LM_OK);
  if (!s) {
    char line[1024];
    fprintf(stderr, "%s\n", lm_diag_format(&d, line, sizeof line));
    return;
  }
  /* Start from nothing (a PostgreSQL database may hold an earlier run). */
  lm_store_entry *e = NULL;
  size_t n = 0;
  CHECK(lm_store_list(s, &e, &n, &d) == LM_OK);
  for (size_t i = 0; i < n; i++) CHECK(lm_store_remove(s, e[i].name, &d) == LM_OK);
  free(e);

  char vcopy[4096], mix[4096];
  snprintf(vcopy, sizeof vcopy, "%s/workloads/vcopy/MI200", shared);
  snprintf(mix, sizeof mix, "%s/workloads/_mix/mix_MI300X_A1", shared);
  lm_import_result r;
  CHECK(lm_store_import(s, vcopy, NULL, NULL, &r, &d) == LM_OK);
  CHECK_STR(r.name, "vcopy_MI200");
  CHECK(r.existed == 0 && r.n_dispatches == 3);
  check_same_as_folder(s, vcopy, "vcopy_MI200");
  /* Again: found, not duplicated, whatever name is asked for. */
  CHECK(lm_store_import(s, vcopy, "another", NULL, &r, &d) == LM_OK);
  CHECK(r.existed == 1);
  CHECK_STR(r.name, "vcopy_MI200");
  CHECK(count(s, "SELECT COUNT(*) FROM workload") == 1);
  /* A different workload under a taken name is refused. */
  CHECK(lm_store_import(s, mix, "vcopy_MI200", NULL, &r, &d) == LM_EINVAL);
  CHECK(strstr(d.message, "already in the store") != NULL);
  /* Names are data, whatever characters they hold. */
  const char *odd = "x'); DROP TABLE workload; --\"";
  CHECK(lm_store_import(s, mix, odd, "team 'a'", &r, &d) == LM_OK);
  CHECK(count(s, "SELECT COUNT(*) FROM workload") == 2);
  lm_store_entry got;
  CHECK(lm_store_get(s, odd, &got, &d) == LM_OK);
  CHECK_STR(got.team, "team 'a'");
  CHECK(got.n_dispatches == 24);
  /* Ranks and hosts come from the parts' system information: none for a
   * workload of one process; the parts and their distinct named hosts
   * (a part without a host names none) for one of parts. */
  CHECK(got.n_ranks == 0 && got.n_hosts == 0);
  for (int p = 0; p < 5; p++) {
    static const char *const hosts[] = {"node-a", "node-b", "node-a", "node-b", ""};
    char ins[512];
    snprintf(ins, sizeof ins,
             "INSERT INTO rank_sysinfo(workload_id, part, rank, position, key, value) VALUES "
             "(%lld, %d, %d, 0, 'hostname', '%s'), (%lld, %d, %d, 1, 'cpu_model', 'cpu %d')",
             (long long)got.id, p, 4 - p, hosts[p], (long long)got.id, p, 4 - p, p);
    CHECK(lm_sql_exec(lm_store_sql(s), ins, 0, &d) == LM_OK);
  }
  CHECK(lm_store_get(s, odd, &got, &d) == LM_OK);
  CHECK(got.n_ranks == 5 && got.n_hosts == 2);
  CHECK(lm_store_list(s, &e, &n, &d) == LM_OK && n == 2);
  for (size_t i = 0; e && i < n; i++)
    CHECK(strcmp(e[i].name, odd) == 0 ? e[i].n_ranks == 5 && e[i].n_hosts == 2
                                      : e[i].n_ranks == 0 && e[i].n_hosts == 0);
  free(e);
  e = NULL;
  CHECK(lm_sql_exec(lm_store_sql(s), "DELETE FROM rank_sysinfo", 0, &d) == LM_OK);
  /* The same contents under another team is another workload. */
  CHECK(lm_store_import(s, vcopy, NULL, "other", &r, &d) == LM_EINVAL); /* names are unique */
  CHECK(lm_store_import(s, vcopy, "vc-other", "other", &r, &d) == LM_OK && r.existed == 0);
  CHECK(count(s, "SELECT COUNT(*) FROM workload") == 3);
  CHECK(lm_store_remove(s, "vcopy_MI200", &d) == LM_OK);
  CHECK(lm_store_import(s, vcopy, "vc", "other", &r, &d) == LM_OK && r.existed == 1);

  /* Export to a lumen folder, import it back: the same workload. */
  char out_dir[4096];
  snprintf(out_dir, sizeof out_dir, "%s/export-%d", tmp, (int)getpid());
  CHECK(lm_store_export(s, odd, out_dir, &d) == LM_OK);
  CHECK(lm_store_export(s, odd, out_dir, &d) == LM_EINVAL); /* never overwrites */
  CHECK(lm_store_export(s, "nobody", out_dir, &d) == LM_ENOTFOUND);
  lm_workload *ew = NULL;
  CHECK(lm_workload_read(out_dir, &ew, &d) == LM_OK);
  lm_workload_free(ew);
  CHECK(lm_store_remove(s, odd, &d) == LM_OK);
  CHECK(lm_store_import(s, out_dir, NULL, "team 'a'", &r, &d) == LM_OK && r.existed == 0);
  CHECK_STR(r.name, odd); /* a lumen folder keeps its name */
  CHECK(lm_store_import(s, mix, NULL, "team 'a'", &r, &d) == LM_OK && r.existed == 1);
  char rm[8192];
  snprintf(rm, sizeof rm, "rm -rf '%s'", out_dir);
  CHECK(system(rm) == 0);

  /* A lumen profile folder (with its profile tables) imports too. */
  const char *profile = getenv("LUMEN_TEST_PROFILE_DIR");
  if (profile && *profile) {
    CHECK(lm_store_import(s, profile, "profiled", NULL, &r, &d) == LM_OK);
    CHECK(count(s, "SELECT COUNT(*) FROM profile_run r JOIN workload w ON w.id = r.workload_id "
                   "WHERE w.name = 'profiled'") > 0);
  }

  /* Removal leaves nothing behind; unknown names are refused. */
  CHECK(lm_store_remove(s, "vc-other", &d) == LM_OK);
  CHECK(lm_store_remove(s, "vc-other", &d) == LM_ENOTFOUND);
  CHECK(orphans(s) == 0);

  /* A damaged stored analysis is ignored and replaced. */
  CHECK(lm_store_import(s, vcopy, NULL, NULL, &r, &d) == LM_OK);
  lm_analyze_opts o;
  memset(&o, 0, sizeof o);
  char key[1024];
  lm_store_cache_key(lm_metrics_builtin("gfx90a"), &o, key, sizeof key);
  CHECK(lm_store_cache_put(s, "vcopy_MI200", key, "LMAN0001garbage", 15, &d) == LM_OK);
  lm_workload *sw = NULL;
  lm_analysis *an = NULL;
  int cached = 1;
  CHECK(lm_store_analyze(s, "vcopy_MI200", NULL, &o, &sw, &an, &cached, &d) == LM_OK && cached == 0);
  CHECK(an && an->n_selected == 3);
  lm_analysis_free(an);
  lm_workload_free(sw);
  CHECK(lm_store_analyze(s, "vcopy_MI200", NULL, &o, &sw, &an, &cached, &d) == LM_OK && cached == 1);
  lm_analysis_free(an);
  lm_workload_free(sw);

  /* Four processes import the same folder at once: one copy. */
  CHECK(lm_store_remove(s, "vcopy_MI200", &d) == LM_OK);
  lm_store_close(s);
  s = NULL;
  pid_t kids[4];
  for (int i = 0; i < 4; i++) {
    kids[i] = fork();
    if (kids[i] == 0) {
      lm_store *c = NULL;
      lm_diag cd;
      lm_import_result cr;
      int ok = lm_store_open(url, 1, &c, &cd) == LM_OK && lm_store_import(c, vcopy, NULL, NULL, &cr, &cd) == LM_OK;
      if (!ok) {
        char line[1024];
        fprintf(stderr, "concurrent import: %s\n", lm_diag_format(&cd, line, sizeof line));
      }
      lm_store_close(c);
      _exit(ok ? 0 : 1);
    }
  }
  for (int i = 0; i < 4; i++) {
    int status = 0;
    waitpid(kids[i], &status, 0);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  }
  CHECK(lm_store_open(url, 1, &s, &d) == LM_OK);
  if (!s) return;
  int64_t others = profile && *profile ? 2 : 1;
  CHECK(count(s, "SELECT COUNT(*) FROM workload WHERE name = 'vcopy_MI200'") == 1);
  CHECK(count(s, "SELECT COUNT(*) FROM workload") == others + 1);

  /* A failure in the middle of an import leaves nothing. */
  if (!lm_sql_is_postgres(lm_store_sql(s))) {
    CHECK(lm_sql_exec(lm_store_sql(s),
                      "CREATE TEMP TRIGGER fail_import BEFORE INSERT ON column_data "
                      "WHEN NEW.name = 'TCC_HIT_sum' BEGIN SELECT RAISE(ABORT, 'injected failure'); END",
                      0, &d) == LM_OK);
  } else {
    CHECK(lm_sql_exec(lm_store_sql(s),
                      "CREATE OR REPLACE FUNCTION lumen_test_fail() RETURNS trigger AS $$ BEGIN "
                      "IF NEW.name = 'TCC_HIT_sum' THEN RAISE EXCEPTION 'injected failure'; END IF; "
                      "RETURN NEW; END $$ LANGUAGE plpgsql; DROP TRIGGER IF EXISTS fail_import ON column_data; "
                      "CREATE TRIGGER fail_import BEFORE INSERT ON column_data FOR EACH ROW "
                      "EXECUTE FUNCTION lumen_test_fail()",
                      0, &d) == LM_OK);
  }
  int64_t rows_before = count(s, "SELECT COUNT(*) FROM dispatch");
  char mix200[4096];
  snprintf(mix200, sizeof mix200, "%s/workloads/_mix/mix_MI200", shared);
  CHECK(lm_store_import(s, mix200, NULL, NULL, &r, &d) != LM_OK);
  CHECK(strstr(d.message, "injected failure") != NULL);
  CHECK(count(s, "SELECT COUNT(*) FROM workload") == others + 1);
  CHECK(count(s, "SELECT COUNT(*) FROM dispatch") == rows_before);
  CHECK(orphans(s) == 0);
  if (lm_sql_is_postgres(lm_store_sql(s)))
    lm_sql_exec(lm_store_sql(s), "DROP TRIGGER IF EXISTS fail_import ON column_data", 0, &d);
  lm_store_close(s);

  /* Read-only opening of a missing store says so. */
  char missing[4096];
  snprintf(missing, sizeof missing, "%s/none/lumen.db", tmp);
  CHECK(lm_store_open(missing, 0, &s, &d) == LM_ENOTFOUND);
  CHECK(strstr(d.message, "no store here") != NULL);
}

/* Each damage of a real analysis (a as lm_analyze_run made it for w) is
 * refused, saying what is wrong: a table without titles or row ids, a null
 * id, a row id, kind or definition out of range, more dispatches or calls
 * than w has, a top-kernels table without its name column. a is restored. */
static void damaged_refused(const lm_workload *w, lm_analysis *a) {
  lm_rtable *top = NULL, *metric = NULL;
  for (int32_t t = 0; t < a->n_tables; t++) {
    lm_rtable *x = &a->tables[t];
    if (x->kind == LM_TABLE_TOP_KERNELS && !top) top = x;
    if (x->kind == LM_TABLE_METRIC && x->shown && x->n_rows > 1 && !metric) metric = x;
  }
  CHECK(top && metric);
  if (!top || !metric) return;
  char far_id[64];
  snprintf(far_id, sizeof far_id, "%s.99999", metric->id);
  for (int how = 0; how < 9; how++) {
    lm_rtable top_was = *top, metric_was = *metric;
    size_t selected_was = a->n_selected;
    const char *id_was = metric->row_ids[1];
    lm_cell count_was = top->cells[2];
    switch (how) {
    case 0: top->titles = NULL; break;
    case 1: metric->row_ids = NULL; break;
    case 2: metric->row_ids[1] = NULL; break;
    case 3: metric->row_ids[1] = far_id; break;
    case 4: top->kind = 77; break;
    case 5: metric->def = 1 << 20; break;
    case 6: a->n_selected = w->pmc->n_rows + 1; break;
    case 7: top->n_cols = 1; break;
    case 8: top->cells[2].num = (double)w->pmc->n_rows + 1; break;
    }
    lm_buf buf = {0};
    lm_analysis *b = NULL;
    lm_diag d;
    CHECK(lm_analysis_serialize(a, &buf) == LM_OK);
    CHECK(lm_analysis_deserialize(buf.data, buf.len, w, a->catalog, &b, &d) == LM_EDATA && !b);
    CHECK(strstr(d.message, "a stored analysis is damaged: ") != NULL);
    lm_buf_fini(&buf);
    *top = top_was;
    *metric = metric_was;
    a->n_selected = selected_was;
    metric->row_ids[1] = id_was;
    top->cells[2] = count_was;
  }
}

static void test_serialize(void) {
  char dir[4096];
  snprintf(dir, sizeof dir, "%s/workloads/_mix/mix_MI200", shared);
  lm_workload *w = NULL;
  lm_diag d;
  CHECK(lm_workload_read(dir, &w, &d) == LM_OK);
  if (!w) return;
  lm_analyze_opts o;
  memset(&o, 0, sizeof o);
  lm_analysis *a = NULL, *b = NULL;
  CHECK(lm_analyze_run(w, lm_metrics_builtin(w->arch), &o, &a, &d) == LM_OK);
  lm_buf buf = {0};
  CHECK(lm_analysis_serialize(a, &buf) == LM_OK);
  CHECK(lm_analysis_deserialize(buf.data, buf.len, w, a->catalog, &b, &d) == LM_OK);
  CHECK(b && same_cells(a, b));
  CHECK_STR(b->norm, a->norm);
  lm_analysis_free(b);
  /* Every truncation and a flipped magic are refused. */
  int refused = 0, tries = 0;
  for (size_t cut = 0; cut < buf.len; cut += 1 + buf.len / 97, tries++) {
    b = NULL;
    if (lm_analysis_deserialize(buf.data, cut, w, a->catalog, &b, &d) != LM_OK) refused++;
    lm_analysis_free(b);
  }
  CHECK(refused == tries);
  buf.data[0] ^= 1;
  CHECK(lm_analysis_deserialize(buf.data, buf.len, w, a->catalog, &b, &d) == LM_EDATA);
  lm_buf_fini(&buf);
  damaged_refused(w, a);
  lm_analysis_free(a);
  /* Fingerprints: stable, and different for different contents. */
  char f1[33], f2[33], f3[33];
  CHECK(lm_workload_fingerprint(w, f1, &d) == LM_OK);
  CHECK(lm_workload_fingerprint(w, f2, &d) == LM_OK);
  CHECK_STR(f1, f2);
  /* A read that leaves the counter columns in the files gives the same. */
  lm_workload *deferred = NULL;
  lm_workload_options wo = {.defer = 1};
  CHECK(lm_workload_read_opts(dir, &wo, &deferred, &d) == LM_OK);
  if (deferred) {
    size_t n_deferred = 0;
    for (size_t c = 0; c < deferred->pmc->n_cols; c++) n_deferred += lm_table_deferred(deferred->pmc, c);
    CHECK(n_deferred > 100);
    CHECK(lm_workload_fingerprint(deferred, f3, &d) == LM_OK);
    CHECK_STR(f1, f3);
    lm_workload_free(deferred);
  }
  w->pmc->cols[w->pmc->n_cols - 1].values[0] += 1;
  CHECK(lm_workload_fingerprint(w, f2, &d) == LM_OK);
  CHECK(strcmp(f1, f2) != 0);
  lm_workload_free(w);
}

int main(void) {
  const char *sh = getenv("LUMEN_SHARED_DIR");
  snprintf(shared, sizeof shared, "%s", sh ? sh : "../shared");
  test_serialize();
  char tmp[] = "/tmp/lumen-test-store-XXXXXX";
  if (!mkdtemp(tmp)) return 1;
  char url[4096];
  snprintf(url, sizeof url, "%s/sub/store.db", tmp);
  run_suite(url, tmp);
  test_selective(tmp);
  test_old_folder(tmp);
  test_old_list(tmp);
  const char *server = getenv("LUMEN_TEST_PG");
  if (server && *server) {
    char pg[1024];
    snprintf(pg, sizeof pg, "%s/test_store", server);
    run_suite(pg, tmp);
  } else {
    printf("LUMEN_TEST_PG is not set: PostgreSQL part skipped\n");
  }
  char rm[4200];
  snprintf(rm, sizeof rm, "rm -rf '%s'", tmp);
  if (system(rm) != 0) return 1;
  return check_report("test_store");
}
