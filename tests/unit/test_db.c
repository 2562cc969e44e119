/* test_db.c - the lumen workload database: every shared workload folder,
 * written to a database and read back, gives exactly the same analysis
 * (every cell of every table); names are unique; a bad file is refused.
 * With LUMEN_TEST_PG (a postgresql:// server) set, the same round trips run on PostgreSQL. */
#include <dirent.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "analyze/analyze.h"
#include "check.h"
#include "io/io.h"

static int same_cells(const lm_analysis *a, const lm_analysis *b) {
  if (a->n_tables != b->n_tables) return 0;
  for (int32_t t = 0; t < a->n_tables; t++) {
    const lm_rtable *x = &a->tables[t], *y = &b->tables[t];
    if (x->n_rows != y->n_rows || x->n_cols != y->n_cols) return 0;
    for (int32_t i = 0; i < x->n_rows * x->n_cols; i++) {
      const lm_cell *p = &x->cells[i], *q = &y->cells[i];
      if (p->kind != q->kind) return 0;
      if (p->kind == LM_CELL_NUMBER && !(p->num == q->num || (isnan(p->num) && isnan(q->num))))
        return 0;
      if (p->kind == LM_CELL_TEXT && strcmp(p->text, q->text) != 0) return 0;
    }
  }
  return 1;
}

static int roundtrip(const char *dir, const char *url) {
  lm_workload *w = NULL, *back = NULL;
  lm_diag d;
  if (lm_workload_read(dir, &w, &d) != LM_OK) return -1; /* refused folders */
  if (strncmp(url, "postgres", 8) != 0) unlink(url);
  lm_sql *db = NULL;
  int ok = 0;
  if (lm_sql_open(url, LM_DB_CREATE, &db, &d) == LM_OK && lm_db_schema(db, 1, &d) == LM_OK &&
      lm_sql_exec(db, "DELETE FROM workload WHERE name = 'w'", 0, &d) == LM_OK &&
      lm_db_write_workload(db, w, "w", NULL, dir, NULL, &d) == LM_OK &&
      lm_db_read_workload(db, "w", &back, &d) == LM_OK) {
    const lm_catalog *cat = lm_metrics_builtin(w->arch);
    lm_analyze_opts o;
    memset(&o, 0, sizeof o);
    lm_analysis *a = NULL, *b = NULL;
    lm_status sa = lm_analyze_run(w, cat, &o, &a, &d);
    lm_status sb = lm_analyze_run(back, cat, &o, &b, &d);
    ok = sa == sb && (sa != LM_OK || same_cells(a, b));
    if (!ok) fprintf(stderr, "%s: analyses differ (%d, %d)\n", dir, sa, sb);
    lm_analysis_free(a);
    lm_analysis_free(b);
    /* The same name twice is refused, and leaves the first intact. */
    CHECK(lm_db_write_workload(db, w, "w", NULL, dir, NULL, &d) == LM_EINVAL);
    lm_workload_free(back);
    back = NULL;
    CHECK(lm_db_read_workload(db, "w", &back, &d) == LM_OK);
  } else {
    char line[1024];
    fprintf(stderr, "%s: %s\n", dir, lm_diag_format(&d, line, sizeof line));
  }
  lm_sql_close(db);
  lm_workload_free(w);
  lm_workload_free(back);
  return ok;
}

static int run_all(const char *root, const char *url) {
  DIR *d = opendir(root);
  CHECK(d != NULL);
  int n = 0;
  struct dirent *e;
  while (d && (e = readdir(d)) != NULL) {
    if (e->d_name[0] == '.') continue;
    char test_dir[8192];
    snprintf(test_dir, sizeof test_dir, "%s/%s", root, e->d_name);
    DIR *sub = opendir(test_dir);
    struct dirent *g;
    while (sub && (g = readdir(sub)) != NULL) {
      if (g->d_name[0] == '.') continue;
      char wl[16384];
      snprintf(wl, sizeof wl, "%s/%s", test_dir, g->d_name);
      struct stat st;
      if (stat(wl, &st) != 0 || !S_ISDIR(st.st_mode)) continue;
      int r = roundtrip(wl, url);
      if (r >= 0) {
        CHECK(r == 1);
        n++;
      }
    }
    if (sub) closedir(sub);
  }
  if (d) closedir(d);
  return n;
}

int main(void) {
  const char *shared = getenv("LUMEN_SHARED_DIR");
  if (!shared) shared = "../shared";
  char db_path[] = "/tmp/lumen-test-db-XXXXXX";
  int fd = mkstemp(db_path);
  if (fd >= 0) close(fd);
  char root[4096];
  snprintf(root, sizeof root, "%s/workloads", shared);
  int n = run_all(root, db_path);
  const char *server = getenv("LUMEN_TEST_PG");
  char pg[1024];
  snprintf(pg, sizeof pg, "%s/test_db", server ? server : "");
  if (server && *server) {
    int n_pg = run_all(root, pg);
    CHECK(n_pg == n);
    printf("PostgreSQL round trips: %d workloads\n", n_pg);
  }
  CHECK(n > 80);
  /* A file that is not a lumen database is refused. */
  FILE *f = fopen(db_path, "w");
  if (f) {
    fputs("not sqlite", f);
    fclose(f);
  }
  sqlite3 *db = NULL;
  lm_diag diag;
  CHECK(lm_db_open(db_path, LM_DB_READ, &db, &diag) != LM_OK);
  unlink(db_path);
  printf("round trips: %d workloads\n", n);
  return check_report("test_db");
}
