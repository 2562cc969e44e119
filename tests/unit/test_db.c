/* test_db.c - the lumen workload database: every shared workload folder,
 * written to a database and read back, gives exactly the same analysis
 * (every cell of every table); names are unique; a bad file is refused.
 * A database in the layout of schema version 2 (raw columns, no codec),
 * made here from the folders' values, reads the same, read-only and
 * after its upgrade; a damaged compact column is named, not trusted.
 * A profile's tables are written and read back through their io functions
 * (bookkeeping, plan edits, S lines, composition), and a read-only file or
 * one without the schema gives a diagnostic naming it.
 * With LUMEN_TEST_PG (a postgresql:// server) set, the same round trips run on PostgreSQL. */
#include <dirent.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "analyze/analyze.h"
#include "check.h"
#include "sql/sql.h"
#include "db/db.h"
#include "load/load.h"

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

/* Every other column, by its position in the name's characters. */
static int want_some(void *ctx, const char *source, const char *name) {
  (void)ctx;
  (void)source;
  size_t sum = 0;
  for (const char *p = name; *p; p++) sum += (unsigned char)*p;
  return sum % 2 == 0;
}

static int want_all(void *ctx, const char *source, const char *name) {
  (void)ctx;
  (void)source;
  (void)name;
  return 1;
}

/* Every column of got that from has holds, bit for bit (any NaN for a
 * NaN), the values of from's column. Returns the columns compared. */
static size_t same_columns(const lm_table *from, const lm_table *got, size_t *bad) {
  size_t n = 0;
  for (size_t c = 0; got && c < got->n_cols; c++) {
    /* (the dispatch columns a folder may lack are always there) */
    long k = lm_table_find(from, got->cols[c].name);
    if (k < 0) continue;
    if (got->n_rows != from->n_rows) {
      (*bad)++;
      continue;
    }
    const lm_column *a = &from->cols[k], *b = &got->cols[c];
    if (!a->values || !b->values) continue;
    n++;
    for (size_t r = 0; r < got->n_rows; r++)
      if (!(memcmp(&a->values[r], &b->values[r], sizeof(double)) == 0 ||
            (isnan(a->values[r]) && isnan(b->values[r])))) {
        if ((*bad)++ < 3)
          fprintf(stderr, "  %s %s row %zu: %g != %g\n", got->name, b->name, r, a->values[r], b->values[r]);
        break;
      }
  }
  return n;
}

/* The read's choice of columns: the want function of chosen_columns,
 * and the architecture it was asked for. */
typedef struct {
  lm_db_want_fn want;
  char arch[64];
} choice;

static lm_db_want_fn choose_want(void *ctx, const char *arch, const char *compat, void **want_ctx) {
  (void)compat;
  choice *c = ctx;
  snprintf(c->arch, sizeof c->arch, "%s", arch ? arch : "(null)");
  *want_ctx = NULL;
  return c->want;
}

/* The columns read back with a choice of columns (constants last, those
 * of one value sharing one array): the values written, in every table;
 * the choice is made for the workload's architecture, and a column it
 * leaves out is absent. */
static void chosen_columns(lm_sql *db, const lm_workload *w) {
  lm_db_want_fn wants[] = {want_all, want_some};
  size_t n_cols[2] = {0, 0};
  for (int k = 0; k < 2; k++) {
    lm_workload *got = NULL;
    lm_diag d;
    choice c = {wants[k], ""};
    lm_workload_options opts;
    memset(&opts, 0, sizeof opts);
    opts.choose = choose_want;
    opts.choose_ctx = &c;
    CHECK(lm_db_read_workload(db, "w", &opts, &got, &d) == LM_OK);
    if (!got) continue;
    CHECK_STR(c.arch, w->arch ? w->arch : "(null)");
    n_cols[k] = got->pmc->n_cols;
    size_t bad = 0, n = same_columns(w->pmc, got->pmc, &bad);
    for (size_t i = 0; i < got->n_levels && i < w->n_levels; i++) n += same_columns(w->levels[i], got->levels[i], &bad);
    CHECK(bad == 0);
    CHECK(n > 0);
    lm_workload_free(got);
  }
  CHECK(n_cols[1] <= n_cols[0]);
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
      lm_db_read_workload(db, "w", NULL, &back, &d) == LM_OK) {
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
    chosen_columns(db, w);
    /* The same name twice is refused, and leaves the first intact. */
    CHECK(lm_db_write_workload(db, w, "w", NULL, dir, NULL, &d) == LM_EINVAL);
    lm_workload_free(back);
    back = NULL;
    CHECK(lm_db_read_workload(db, "w", NULL, &back, &d) == LM_OK);
  } else {
    char line[1024];
    fprintf(stderr, "%s: %s\n", dir, lm_diag_format(&d, line, sizeof line));
  }
  lm_sql_close(db);
  lm_workload_free(w);
  lm_workload_free(back);
  return ok;
}

/* The table of w that column_data rows of `source` came from. */
static const lm_table *source_table(const lm_workload *w, const char *source) {
  if (strcmp(source, "pmc_perf") == 0) return w->pmc;
  if (strcmp(source, "roofline") == 0) return w->roofline;
  for (size_t i = 0; i < w->n_levels; i++)
    if (strcmp(w->levels[i]->name, source) == 0) return w->levels[i];
  return NULL;
}

/* Rewrite workload `name` as version 2 wrote it: every column's data the
 * raw doubles of the folder's table, no codec column, version '2'. */
static int make_version2(lm_sql *db, const lm_workload *w, lm_diag *d) {
  lm_stmt *q = NULL, *up = NULL;
  int ok = lm_sql_prepare(db, "SELECT source, name FROM column_data", &q, d) == LM_OK &&
           lm_sql_prepare(db, "UPDATE column_data SET data = ?, codec = NULL WHERE source = ? AND name = ?", &up,
                          d) == LM_OK;
  int n = 0;
  char source[256], name[256];
  /* Both engines step forward only: collect, then update. */
  char (*rows)[2][256] = calloc(4096, sizeof *rows);
  while (ok && rows && n < 4096 && lm_stmt_step(q) == 1) {
    snprintf(rows[n][0], 256, "%s", lm_stmt_text(q, 0));
    snprintf(rows[n][1], 256, "%s", lm_stmt_text(q, 1));
    n++;
  }
  ok = ok && lm_sql_begin(db, d) == LM_OK; /* one transaction, not one per column */
  for (int i = 0; ok && rows && i < n; i++) {
    snprintf(source, sizeof source, "%s", rows[i][0]);
    snprintf(name, sizeof name, "%s", rows[i][1]);
    const lm_table *t = source_table(w, source);
    long c = t ? lm_table_find(t, name) : -1;
    if (c < 0) {
      ok = 0;
      break;
    }
    lm_stmt_bind_blob(up, 1, t->cols[c].values, t->n_rows * sizeof(double));
    lm_stmt_bind_text(up, 2, source);
    lm_stmt_bind_text(up, 3, name);
    ok = lm_stmt_step(up) >= 0;
    lm_stmt_reset(up);
  }
  free(rows);
  lm_stmt_free(q);
  lm_stmt_free(up);
  ok = ok && lm_sql_commit(db, d) == LM_OK;
  return ok && n > 0 &&
         lm_sql_exec(db, "ALTER TABLE column_data DROP COLUMN codec; ALTER TABLE column_data DROP COLUMN checksum; "
                         "UPDATE lumen_meta SET value = '2' WHERE key = 'schema_version'", 0, d) == LM_OK;
}

static int same_analysis(const lm_workload *a, const lm_workload *b) {
  const lm_catalog *cat = lm_metrics_builtin(a->arch);
  lm_analyze_opts o;
  memset(&o, 0, sizeof o);
  lm_analysis *x = NULL, *y = NULL;
  lm_diag d;
  lm_status sa = lm_analyze_run(a, cat, &o, &x, &d), sb = lm_analyze_run(b, cat, &o, &y, &d);
  int ok = sa == sb && (sa != LM_OK || same_cells(x, y));
  lm_analysis_free(x);
  lm_analysis_free(y);
  return ok;
}

static char *meta_version(lm_sql *db, char *out, size_t cap) {
  lm_stmt *q = NULL;
  lm_diag d;
  out[0] = '\0';
  if (lm_sql_prepare(db, "SELECT value FROM lumen_meta WHERE key = 'schema_version'", &q, &d) == LM_OK &&
      lm_stmt_step(q) == 1)
    snprintf(out, cap, "%s", lm_stmt_text(q, 0));
  lm_stmt_free(q);
  return out;
}

/* One folder through a version 2 database: read-only as it is, then
 * opened for writing (upgraded, its columns still raw) next to a workload
 * written compact. */
static void old_layout(const char *dir, const char *url) {
  lm_workload *w = NULL, *back = NULL;
  lm_diag d;
  char version[16];
  CHECK(lm_workload_read(dir, &w, &d) == LM_OK);
  if (!w) return;
  int pg = strncmp(url, "postgres", 8) == 0;
  if (!pg) unlink(url);
  lm_sql *db = NULL;
  CHECK(lm_sql_open(url, LM_DB_CREATE, &db, &d) == LM_OK && lm_db_schema(db, 1, &d) == LM_OK);
  if (pg) {
    /* A clean slate: a previous version-2 run left a database without the codec. */
    lm_sql_exec(db, "DROP TABLE IF EXISTS column_data CASCADE", 0, &d);
    lm_sql_exec(db, "DELETE FROM workload", 0, &d);
    lm_sql_exec(db, "UPDATE lumen_meta SET value = '3' WHERE key = 'schema_version'", 0, &d);
    lm_sql_close(db);
    db = NULL;
    CHECK(lm_sql_open(url, LM_DB_CREATE, &db, &d) == LM_OK && lm_db_schema(db, 1, &d) == LM_OK);
  }
  CHECK(lm_db_write_workload(db, w, "old", NULL, dir, NULL, &d) == LM_OK);
  CHECK(make_version2(db, w, &d));
  lm_sql_close(db);

  /* Read-only: read as it is. */
  db = NULL;
  CHECK(lm_sql_open(url, LM_DB_READ, &db, &d) == LM_OK && lm_db_schema(db, 0, &d) == LM_OK);
  CHECK_STR(meta_version(db, version, sizeof version), "2");
  lm_status rs = lm_db_read_workload(db, "old", NULL, &back, &d);
  CHECK(rs == LM_OK);
  if (rs != LM_OK) fprintf(stderr, "%s (%s): %s\n", dir, url, d.message);
  CHECK(back && same_analysis(w, back));
  lm_workload_free(back);
  back = NULL;
  lm_sql_close(db);

  /* Writable: upgraded to 3, 4, 5 and 6; the raw columns read on, a new workload is compact. */
  db = NULL;
  CHECK(lm_sql_open(url, LM_DB_WRITE, &db, &d) == LM_OK && lm_db_schema(db, 0, &d) == LM_OK);
  CHECK_STR(meta_version(db, version, sizeof version), "6");
  CHECK(lm_db_write_workload(db, w, "new", NULL, dir, NULL, &d) == LM_OK);
  lm_stmt *q = NULL;
  CHECK(lm_sql_prepare(db, "SELECT COUNT(*), COUNT(codec) FROM column_data", &q, &d) == LM_OK && lm_stmt_step(q) == 1);
  int64_t all = lm_stmt_int64(q, 0), compact = lm_stmt_int64(q, 1);
  CHECK(compact > 0 && all == 2 * compact);
  lm_stmt_free(q);
  const char *names[2] = {"old", "new"};
  for (int i = 0; i < 2; i++) {
    CHECK(lm_db_read_workload(db, names[i], NULL, &back, &d) == LM_OK);
    CHECK(back && same_analysis(w, back));
    lm_workload_free(back);
    back = NULL;
  }
  lm_sql_close(db);
  lm_workload_free(w);
}

/* A compact column cut short or of an unknown encoding: an error that
 * names the workload, the column and the field. */
static void damaged(const char *dir, const char *url) {
  lm_workload *w = NULL, *back = NULL;
  lm_diag d;
  CHECK(lm_workload_read(dir, &w, &d) == LM_OK);
  if (!w) return;
  if (strncmp(url, "postgres", 8) != 0) unlink(url);
  lm_sql *db = NULL;
  CHECK(lm_sql_open(url, LM_DB_CREATE, &db, &d) == LM_OK && lm_db_schema(db, 1, &d) == LM_OK);
  lm_sql_exec(db, "DELETE FROM workload WHERE name = 'cut'", 0, &d);
  CHECK(lm_db_write_workload(db, w, "cut", NULL, dir, NULL, &d) == LM_OK);
  /* The longest column of the workload, cut by one byte. */
  lm_stmt *q = NULL, *up = NULL;
  char source[128] = "", name[256] = "";
  unsigned char *cut = NULL;
  size_t len = 0;
  CHECK(lm_sql_prepare(db, "SELECT c.source, c.name, c.data FROM column_data c JOIN workload w ON w.id = "
                           "c.workload_id WHERE w.name = 'cut' ORDER BY length(c.data) DESC", &q, &d) == LM_OK);
  if (q && lm_stmt_step(q) == 1) {
    snprintf(source, sizeof source, "%s", lm_stmt_text(q, 0));
    snprintf(name, sizeof name, "%s", lm_stmt_text(q, 1));
    const void *p = lm_stmt_blob(q, 2, &len);
    cut = malloc(len ? len : 1);
    if (cut && len) memcpy(cut, p, len);
  }
  lm_stmt_free(q);
  CHECK(cut && len > 9);
  /* One bit flipped, the length kept: the checksum names the column. */
  CHECK(lm_sql_prepare(db, "UPDATE column_data SET data = ? WHERE source = ? AND name = ? AND workload_id = "
                           "(SELECT id FROM workload WHERE name = 'cut')", &up, &d) == LM_OK);
  if (up && cut) {
    cut[len / 2] ^= 0x10;
    lm_stmt_bind_blob(up, 1, cut, len);
    lm_stmt_bind_text(up, 2, source);
    lm_stmt_bind_text(up, 3, name);
    CHECK(lm_stmt_step(up) >= 0);
    cut[len / 2] ^= 0x10;
  }
  lm_stmt_free(up);
  up = NULL;
  CHECK(lm_db_read_workload(db, "cut", NULL, &back, &d) == LM_EDATA);
  CHECK_STR(d.field, "column_data.checksum");
  CHECK(strstr(d.message, "workload 'cut'") != NULL && strstr(d.message, name) != NULL);
  CHECK(strstr(d.message, "does not match its checksum") != NULL);
  lm_workload_free(back);
  back = NULL;
  /* Cut short, without a checksum (as written before checksums): the
   * decoder finds it. */
  CHECK(lm_sql_prepare(db, "UPDATE column_data SET data = ?, checksum = NULL WHERE source = ? AND name = ? AND "
                           "workload_id = (SELECT id FROM workload WHERE name = 'cut')", &up, &d) == LM_OK);
  if (up && cut) {
    lm_stmt_bind_blob(up, 1, cut, len - 1);
    lm_stmt_bind_text(up, 2, source);
    lm_stmt_bind_text(up, 3, name);
    CHECK(lm_stmt_step(up) >= 0);
  }
  lm_stmt_free(up);
  free(cut);
  CHECK(lm_db_read_workload(db, "cut", NULL, &back, &d) == LM_EDATA);
  CHECK_STR(d.field, "column_data.data");
  CHECK(strstr(d.message, "workload 'cut'") != NULL);
  CHECK(strstr(d.message, name) != NULL);
  CHECK(strstr(d.message, "corrupt database") != NULL);
  lm_workload_free(back);
  back = NULL;
  CHECK(lm_sql_exec(db, "UPDATE column_data SET codec = 7 WHERE workload_id = "
                        "(SELECT id FROM workload WHERE name = 'cut')", 0, &d) == LM_OK);
  CHECK(lm_db_read_workload(db, "cut", NULL, &back, &d) == LM_EDATA);
  CHECK_STR(d.field, "column_data.codec");
  CHECK(strstr(d.message, "encoding 7") != NULL);
  lm_workload_free(back);
  lm_sql_exec(db, "DELETE FROM workload WHERE name = 'cut'", 0, &d);
  lm_sql_close(db);
  lm_workload_free(w);
}

static void old_and_damaged(const char *root, const char *url) {
  static const char *const dirs[] = {"vcopy/MI200", "_mix/mix_MI200", "_edge/blank_sq_insts_salu_row2",
                                     "_mix/mix_MI300X_A1"};
  for (size_t i = 0; i < sizeof dirs / sizeof *dirs; i++) {
    char dir[8192];
    snprintf(dir, sizeof dir, "%s/%s", root, dirs[i]);
    old_layout(dir, url);
    damaged(dir, url);
  }
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

/* A profile's bookkeeping (io/profile_db.c): what is written reads back,
 * and errors name the database. */
typedef struct option_seen {
  char text[512];
} option_seen;

static int see_option(const char *key, const char *value, void *user) {
  option_seen *o = user;
  size_t at = strlen(o->text);
  snprintf(o->text + at, sizeof o->text - at, "%s=%s;", key, value);
  return 0;
}

static lm_status see_counter(int set, const char *counter, const char *accumulate, void *user, lm_diag *diag) {
  (void)diag;
  option_seen *o = user;
  size_t at = strlen(o->text);
  snprintf(o->text + at, sizeof o->text - at, "%d:%s:%s;", set, counter, accumulate ? accumulate : "-");
  return LM_OK;
}

static void profile_tables(void) {
  char path[] = "/tmp/lumen-test-profile-XXXXXX";
  int fd = mkstemp(path);
  if (fd >= 0) close(fd);
  unlink(path);
  lm_sql *db = NULL;
  lm_diag d;
  CHECK(lm_db_open(path, LM_DB_CREATE, &db, &d) == LM_OK);
  if (!db) return;
  int64_t wid = 0;
  CHECK(lm_db_create_workload(db, "p", NULL, "lumen", "test", "gfx90a", "MI200", 0, 0, &wid, &d) == LM_OK);
  int64_t got = 0;
  int complete = 1;
  CHECK(lm_db_only_workload(db, path, &got, &complete, &d) == LM_OK && got == wid && complete == 0);
  CHECK(lm_db_put_option(db, wid, "argv", 1, "-n", &d) == LM_OK);
  CHECK(lm_db_put_option(db, wid, "argv", 0, "app", &d) == LM_OK);
  CHECK(lm_db_put_option(db, wid, "argv", 0, "app2", &d) == LM_OK); /* replaces */
  option_seen o = {""};
  CHECK(lm_db_each_option(db, wid, see_option, &o, &d) == LM_OK);
  CHECK_STR(o.text, "argv=app2;argv=-n;");
  lm_db_plan_row plan[] = {{1, 0, "SQ_LEVEL_WAVES", "SQ", "SQ_LEVEL_WAVES", "level"},
                           {0, 1, "SQ_BUSY_CYCLES", "SQ", NULL, "b"},
                           {0, 0, "GRBM_GUI_ACTIVE", "GRBM", NULL, "a"}};
  CHECK(lm_db_put_plan(db, wid, plan, 3, &d) == LM_OK);
  o.text[0] = '\0';
  CHECK(lm_db_each_plan_counter(db, wid, see_counter, &o, &d) == LM_OK);
  CHECK_STR(o.text, "0:GRBM_GUI_ACTIVE:-;0:SQ_BUSY_CYCLES:-;1:SQ_LEVEL_WAVES:SQ_LEVEL_WAVES;");
  CHECK(lm_db_put_plan(db, wid, plan, 1, &d) != LM_OK); /* the same counter twice */
  CHECK(d.file[0] && strcmp(d.file, path) == 0);
  /* Runs. */
  CHECK(lm_db_next_run_id(db, wid) == 1);
  CHECK(lm_db_run_begin(db, wid, 1, "app", 0, "2026-01-01T00:00:00Z", &d) == LM_OK);
  CHECK(lm_db_run_begin(db, wid, 2, "instance", -1, "2026-01-01T00:00:01Z", &d) == LM_OK);
  CHECK(lm_db_next_run_id(db, wid) == 3);
  CHECK(lm_db_run_done(db, wid, "app", 0) == 0);
  CHECK(lm_db_run_finish(db, wid, 1, "2026-01-01T00:00:02Z", "ok", 0, 0, 3, &d) == LM_OK);
  CHECK(lm_db_run_done(db, wid, "app", 0) == 1 && lm_db_run_done(db, wid, "app", -1) == 1);
  CHECK(lm_db_run_done(db, wid, "app", 1) == 0);
  int n = 0;
  CHECK(lm_db_runs_interrupt(db, wid, "2026-01-01T00:00:03Z", &n, &d) == LM_OK && n == 1);
  CHECK(lm_db_run_done(db, wid, "instance", -1) == 0);
  lm_db_run_forget(db, wid, 2);
  CHECK(lm_db_next_run_id(db, wid) == 2);
  /* A run's records. */
  lm_db_records *r = NULL;
  CHECK(lm_db_records_open(db, wid, 1, &r, &d) == LM_OK);
  lm_db_record rec = {7, "k(int)", 0, 0, 0, 2, 100, 101, 1024, 256, 0, 0, 8, 0, 16, 10, 20, "1", "k", 0};
  CHECK(lm_db_records_dispatch(r, &rec, &d) == LM_OK);
  rec.dispatch_id = 8;
  rec.set = -1;
  rec.row_group = -1;
  CHECK(lm_db_records_dispatch(r, &rec, &d) == LM_OK);
  CHECK(lm_db_records_value(r, 7, 100, "SQ_WAVES", 4, &d) == LM_OK);
  CHECK(lm_db_records_value(r, 7, 100, "TCC_HIT[0]", LM_NAN, &d) == LM_OK);
  CHECK(lm_db_records_clock(r, 2, 15, 1700, 1600, &d) == LM_OK);
  CHECK(lm_db_records_region(r, 1, "solve", &d) == LM_OK);
  CHECK(lm_db_records_telemetry(r, "none", "no sampler", &d) == LM_OK);
  lm_db_records_close(r);
  lm_db_records_close(NULL);
  lm_db_process proc = {100, 0, "host", -1, -1, -1, "", "2", 2, 1, NULL};
  CHECK(lm_db_put_process(db, wid, 1, &proc, &d) == LM_OK);
  CHECK(lm_db_add_log(db, wid, 1, "info", "one", &d) == LM_OK);
  CHECK(lm_db_add_log(db, wid, 2, "info", "two", &d) == LM_OK);
  static const char *const checks[][2] = {
      {"SELECT COUNT(*) || ',' || SUM(row_group IS NULL) FROM profile_record", "2,1"},
      {"SELECT value IS NULL FROM profile_value WHERE column_name = 'TCC_HIT[0]'", "1"},
      {"SELECT value FROM profile_value WHERE column_name = 'SQ_WAVES'", "4.0"},
      {"SELECT sclk_mhz FROM clock_sample", "1700.0"},
      {"SELECT name FROM profile_region", "solve"},
      {"SELECT sampler FROM profile_telemetry", "none"},
      {"SELECT (rank IS NULL) || (launcher IS NULL) || (error IS NULL) FROM profile_process", "111"},
      {"SELECT group_concat(seq || message, ' ') FROM log", "1one 2two"},
      {"SELECT status || (exit_code = 0) || n_dispatches FROM profile_run", "ok13"}};
  for (size_t i = 0; i < sizeof checks / sizeof *checks; i++) {
    lm_stmt *s = NULL;
    const char *text = NULL;
    if (lm_sql_prepare(db, checks[i][0], &s, &d) == LM_OK && lm_stmt_step(s) == 1) text = lm_stmt_text(s, 0);
    CHECK_STR(text, checks[i][1]);
    lm_stmt_free(s);
  }
  CHECK(lm_db_exec(db, "BEGIN IMMEDIATE", &d) == LM_OK && lm_db_exec(db, "COMMIT", &d) == LM_OK);
  CHECK(lm_db_exec(db, "NOT SQL", &d) == LM_EIO);
  lm_db_close(db);
  unlink(path);
}

/* query_text: the first column of the first row of sql, "" without one. */
static void query_text(lm_sql *db, const char *sql, char *out, size_t cap) {
  lm_stmt *s = NULL;
  out[0] = '\0';
  if (lm_sql_prepare(db, sql, &s, NULL) == LM_OK && lm_stmt_step(s) == 1)
    snprintf(out, cap, "%s", lm_stmt_is_null(s, 0) ? "NULL" : lm_stmt_text(s, 0));
  lm_stmt_free(s);
}

#define CHECK_QUERY(db, sql, want)                 \
  do {                                             \
    char got_[256];                                \
    query_text(db, sql, got_, sizeof got_);        \
    CHECK_STR(got_, want);                         \
  } while (0)

static int see_kernel(const char *kernel, int n, void *user) {
  option_seen *o = user;
  size_t at = strlen(o->text);
  snprintf(o->text + at, sizeof o->text - at, "%s:%d;", kernel, n);
  return 0;
}

static lm_status see_field(const char *key, const char *value, void *user, lm_diag *diag) {
  (void)diag;
  option_seen *o = user;
  size_t at = strlen(o->text);
  snprintf(o->text + at, sizeof o->text - at, "%s=%s;", key, value);
  return LM_OK;
}

static lm_status see_record(const lm_db_stored_record *r, void *user, lm_diag *diag) {
  (void)diag;
  option_seen *o = user;
  size_t at = strlen(o->text);
  snprintf(o->text + at, sizeof o->text - at, "%d:%d:%s:%lld:%s:%d:%lld:%s;", r->run, r->slot, r->mode,
           (long long)r->rec.dispatch_id, r->rec.kernel, r->rec.set, (long long)r->rec.row_group, r->rec.regions);
  return LM_OK;
}

static lm_status stop_record(const lm_db_stored_record *r, void *user, lm_diag *diag) {
  (void)r;
  (void)user;
  return lm_fail(diag, LM_EDATA, NULL, "stop");
}

typedef struct values_seen {
  int n, n_nan;
  double sum;
} values_seen;

static lm_status see_value(int run, int64_t pid, int64_t did, const char *column, double value, void *user,
                           lm_diag *diag) {
  (void)diag;
  values_seen *v = user;
  v->n++;
  if (isnan(value)) v->n_nan++;
  else v->sum += value;
  CHECK(run == 1 && pid == 100 && (did == 7 || did == 9) && *column);
  return LM_OK;
}

/* The SQL of `lumen profile` beyond its bookkeeping: editing the plan,
 * the kernels a run saw, the S lines, reading records back for
 * composition and writing the composed rows, transactions; and the
 * diagnostics of a read-only database and of a file without the schema. */
static void compose_tables(void) {
  char path[] = "/tmp/lumen-test-compose-XXXXXX";
  int fd = mkstemp(path);
  if (fd >= 0) close(fd);
  unlink(path);
  lm_sql *db = NULL;
  lm_diag d;
  CHECK(lm_db_open(path, LM_DB_CREATE, &db, &d) == LM_OK);
  if (!db) return;
  CHECK(strcmp(lm_db_path(db), path) == 0);
  int64_t wid = 0;
  CHECK(lm_db_create_workload(db, "c", NULL, "lumen", "test", "gfx90a", "MI200", 0, 0, &wid, &d) == LM_OK);
  CHECK(wid == 1); /* the rows written by hand below */
  /* The plan, edited the way a refused set is split. */
  lm_db_plan_row plan[] = {{0, 0, "GRBM_GUI_ACTIVE", "GRBM", NULL, "a"},
                           {0, 1, "SQ_BUSY_CYCLES", "SQ", NULL, "b"},
                           {1, 0, "SQ_LEVEL_WAVES", "SQ", "SQ_LEVEL_WAVES", "level"}};
  CHECK(lm_db_put_plan(db, wid, plan, 3, &d) == LM_OK);
  CHECK(lm_db_plan_move(db, wid, 1, "SQ_LEVEL_WAVES", 3, &d) == LM_OK);
  CHECK(lm_db_plan_drop(db, wid, 0, "SQ_BUSY_CYCLES", &d) == LM_OK);
  CHECK(lm_db_plan_copy(db, wid, 0, "GRBM_GUI_ACTIVE", 2, &d) == LM_OK);
  CHECK(lm_db_plan_drop(db, wid, 0, "NOT_THERE", &d) == LM_OK);
  option_seen o = {""};
  CHECK(lm_db_each_plan_counter(db, wid, see_counter, &o, &d) == LM_OK);
  CHECK_STR(o.text, "0:GRBM_GUI_ACTIVE:-;2:GRBM_GUI_ACTIVE:-;3:SQ_LEVEL_WAVES:-;");
  memset(&d, 0, sizeof d);
  CHECK(lm_db_plan_copy(db, wid, 0, "GRBM_GUI_ACTIVE", 2, &d) == LM_EIO); /* already there */
  CHECK(d.file[0] && strcmp(d.file, path) == 0 && d.message[0]);
  /* Two runs, the second failed: only the first is composed. */
  CHECK(lm_db_run_begin(db, wid, 1, "app", 0, "2026-01-01T00:00:00Z", &d) == LM_OK);
  CHECK(lm_db_run_finish(db, wid, 1, "2026-01-01T00:00:01Z", "ok", 0, 0, 3, &d) == LM_OK);
  CHECK(lm_db_run_begin(db, wid, 2, "instance", -1, "2026-01-01T00:00:02Z", &d) == LM_OK);
  CHECK(lm_db_run_finish(db, wid, 2, "2026-01-01T00:00:03Z", "failed", 1, 0, 1, &d) == LM_OK);
  CHECK(lm_db_begin(db, &d) == LM_OK);
  lm_db_records *r = NULL;
  CHECK(lm_db_records_open(db, wid, 1, &r, &d) == LM_OK);
  lm_db_record rec = {7, "k(int)", 4, 0, 0, 2, 100, 101, 1024, 256, 0, 0, 8, 0, 16, 10, 20, "1,2", "k", 0};
  CHECK(lm_db_records_dispatch(r, &rec, &d) == LM_OK);
  rec.dispatch_id = 8, rec.set = -1, rec.selected = -1, rec.row_group = -1;
  CHECK(lm_db_records_dispatch(r, &rec, &d) == LM_OK);
  lm_db_record rec9 = {9, "m", 0, 1, 1, 2, 100, 101, 64, 64, 0, 0, 8, 0, 16, 30, 40, "", "m", 1};
  CHECK(lm_db_records_dispatch(r, &rec9, &d) == LM_OK);
  CHECK(lm_db_records_value(r, 7, 100, "SQ_WAVES", 4, &d) == LM_OK);
  CHECK(lm_db_records_value(r, 7, 100, "TCC_HIT[0]", LM_NAN, &d) == LM_OK);
  CHECK(lm_db_records_value(r, 9, 100, "SQ_LEVEL_WAVES", 2, &d) == LM_OK);
  CHECK(lm_db_records_clock(r, 2, 12, 1700, 1600, &d) == LM_OK);
  CHECK(lm_db_records_clock(r, 2, 18, 1500, 1400, &d) == LM_OK);
  CHECK(lm_db_records_clock(r, 2, 30, 100, 100, &d) == LM_OK); /* after the span */
  CHECK(lm_db_records_clock(r, 3, 15, 5, 5, &d) == LM_OK);     /* another GPU */
  CHECK(lm_db_records_region(r, 1, "solve", &d) == LM_OK);
  CHECK(lm_db_records_region(r, 2, "io", &d) == LM_OK);
  CHECK(lm_db_records_telemetry(r, "amdsmi", "sampled", &d) == LM_OK);
  CHECK(lm_db_records_sysinfo(r, 100, "gpu_arch", "gfx90a", &d) == LM_OK);
  CHECK(lm_db_records_sysinfo(r, 100, "num_xcd", "1", &d) == LM_OK);
  lm_db_records_close(r);
  CHECK(lm_db_records_open(db, wid, 2, &r, &d) == LM_OK);
  rec.dispatch_id = 7, rec.set = 0, rec.selected = 0, rec.row_group = 0;
  CHECK(lm_db_records_dispatch(r, &rec, &d) == LM_OK);
  CHECK(lm_db_records_value(r, 7, 100, "SQ_WAVES", 99, &d) == LM_OK);
  lm_db_records_close(r);
  lm_db_process proc = {100, 3, "h1", 5, 8, 1, "mpirun", "2", 3, 1, NULL};
  CHECK(lm_db_put_process(db, wid, 1, &proc, &d) == LM_OK);
  CHECK(lm_db_commit(db, &d) == LM_OK);
  /* What the run saw. */
  CHECK(lm_db_run_n_selected(db, wid, 1) == 2 && lm_db_run_n_selected(db, wid, 3) == 0);
  o.text[0] = '\0';
  CHECK(lm_db_each_run_kernel(db, wid, 1, see_kernel, &o, &d) == LM_OK);
  CHECK_STR(o.text, "k(int):2;m:1;");
  /* The S lines. */
  int found = 0, run = 0;
  int64_t pid = 0;
  char host[64];
  size_t n_lines = 0;
  CHECK(lm_db_sysinfo_source(db, wid, &found, &run, &pid, host, sizeof host, &d) == LM_OK);
  CHECK(found == 1 && run == 1 && pid == 100);
  CHECK_STR(host, "h1");
  CHECK(lm_db_sysinfo_count(db, wid, run, pid, &n_lines, &d) == LM_OK && n_lines == 2);
  o.text[0] = '\0';
  CHECK(lm_db_each_sysinfo(db, wid, run, pid, see_field, &o, &d) == LM_OK);
  CHECK_STR(o.text, "gpu_arch=gfx90a;num_xcd=1;");
  CHECK(lm_db_sysinfo_source(db, wid + 1, &found, &run, &pid, host, sizeof host, &d) == LM_OK && found == 0);
  /* Records and values for composition: run 1's, with a set and a row. */
  o.text[0] = '\0';
  CHECK(lm_db_each_composable(db, wid, see_record, &o, &d) == LM_OK);
  CHECK_STR(o.text, "1:3:app:7:k(int):0:0:1,2;1:3:app:9:m:1:1:;");
  CHECK(lm_db_each_composable(db, wid, stop_record, NULL, &d) == LM_EDATA);
  values_seen v = {0, 0, 0};
  CHECK(lm_db_each_composable_value(db, wid, see_value, &v, &d) == LM_OK);
  CHECK(v.n == 3 && v.n_nan == 1 && v.sum == 6);
  /* A composition over stale rows. */
  static const char *const stale =
      "INSERT INTO dispatch(workload_id, row) VALUES (1, 0), (1, 5);"
      "INSERT INTO region(workload_id, id, name) VALUES (1, 0, 'old');"
      "INSERT INTO dispatch_clock(workload_id, row, source) VALUES (1, 5, 'old');";
  CHECK(lm_db_exec(db, stale, &d) == LM_OK);
  CHECK(lm_db_begin(db, &d) == LM_OK);
  CHECK(lm_db_clear_composed(db, wid, &d) == LM_OK);
  lm_db_rollback(db); /* undone */
  CHECK_QUERY(db, "SELECT COUNT(*) FROM dispatch", "2");
  CHECK(lm_db_begin(db, &d) == LM_OK);
  CHECK(lm_db_clear_composed(db, wid, &d) == LM_OK);
  CHECK_QUERY(db, "SELECT (SELECT COUNT(*) FROM dispatch) + (SELECT COUNT(*) FROM region) + "
                  "(SELECT COUNT(*) FROM dispatch_clock)", "0");
  CHECK(lm_db_exec(db, "INSERT INTO dispatch(workload_id, row) VALUES (1, 0), (1, 1);"
                       "INSERT INTO column_data(workload_id, source, position, name, n_rows, data) VALUES "
                       "(1, 'pmc_perf', 0, 'SQ_WAVES', 2, x'00')", &d) == LM_OK);
  lm_db_composer *c = NULL;
  CHECK(lm_db_composer_open(db, wid, &c, &d) == LM_OK);
  if (c) {
    const int16_t runs[2] = {1, 1}, sets[2] = {0, -1};
    CHECK(lm_db_composer_sources(c, "pmc_perf", "SQ_WAVES", runs, sets, 2, &d) == LM_OK);
    double sclk = 0, mclk = 0;
    CHECK(lm_db_composer_clock(c, 1, 2, 10, 20, &sclk, &mclk, &d) == LM_OK && sclk == 1600 && mclk == 1500);
    CHECK(lm_db_composer_clock(c, 1, 2, 21, 25, &sclk, &mclk, &d) == LM_OK && isnan(sclk) && isnan(mclk));
    char sampler[32];
    CHECK(lm_db_composer_sampler(c, 1, sampler, sizeof sampler, &d) == LM_OK);
    CHECK_STR(sampler, "amdsmi");
    CHECK(lm_db_composer_sampler(c, 2, sampler, sizeof sampler, &d) == LM_OK);
    CHECK_STR(sampler, "");
    CHECK(lm_db_composer_clock_source(c, 0, "amdsmi", &d) == LM_OK);
    CHECK(lm_db_composer_clock_source(c, 0, "again", &d) == LM_EIO); /* one source per row */
    CHECK(lm_db_composer_row(c, 0, 1, 4, 100, 101, 1600, LM_NAN, &d) == LM_OK);
    const char *name = NULL;
    CHECK(lm_db_composer_region_name(c, 1, 2, &name, &d) == LM_OK && name && strcmp(name, "io") == 0);
    CHECK(lm_db_composer_region_name(c, 1, 9, &name, &d) == LM_OK && name == NULL);
    CHECK(lm_db_composer_region(c, 0, 0, "io", &d) == LM_OK);
    CHECK(lm_db_composer_region(c, 0, 0, "io", &d) == LM_OK); /* once */
    CHECK(lm_db_composer_region(c, 1, 0, "io", &d) == LM_OK);
  }
  lm_db_composer_close(c);
  lm_db_composer_close(NULL);
  CHECK(lm_db_complete_workload(db, wid, 2, &d) == LM_OK);
  CHECK(lm_db_commit(db, &d) == LM_OK);
  CHECK_QUERY(db, "SELECT hex(runs) || ',' || hex(sets) FROM column_data", "01000100,0000FFFF");
  CHECK_QUERY(db, "SELECT instance || ',' || pid || ',' || tid || ',' || sclk_mhz || ',' || "
                  "(mclk_mhz IS NULL) || ',' || rank || ',' || host FROM dispatch WHERE row = 0",
              "4,100,101,1600.0,1,5,h1");
  CHECK_QUERY(db, "SELECT group_concat(source) FROM dispatch_clock", "amdsmi");
  CHECK_QUERY(db, "SELECT COUNT(*) || ',' || name FROM region", "1,io");
  CHECK_QUERY(db, "SELECT group_concat(row || ':' || region_id) FROM dispatch_region", "0:0,1:0");
  CHECK_QUERY(db, "SELECT complete || ',' || n_dispatches FROM workload", "1,2");
  lm_db_close(db);
  /* Read-only: reads work, every write names the file. */
  db = NULL;
  CHECK(lm_db_open(path, LM_DB_READ, &db, &d) == LM_OK);
  if (db) {
    CHECK(lm_db_sysinfo_source(db, wid, &found, &run, &pid, host, sizeof host, &d) == LM_OK && found == 1);
    memset(&d, 0, sizeof d);
    CHECK(lm_db_plan_drop(db, wid, 0, "GRBM_GUI_ACTIVE", &d) == LM_EIO);
    CHECK(d.file[0] && strcmp(d.file, path) == 0 && d.message[0]);
    memset(&d, 0, sizeof d);
    CHECK(lm_db_complete_workload(db, wid, 3, &d) == LM_EIO && d.file[0] && strcmp(d.file, path) == 0);
    memset(&d, 0, sizeof d);
    CHECK(lm_db_clear_composed(db, wid, &d) == LM_EIO && d.file[0] && strcmp(d.file, path) == 0);
    c = NULL;
    CHECK(lm_db_composer_open(db, wid, &c, &d) == LM_OK);
    memset(&d, 0, sizeof d);
    CHECK(c && lm_db_composer_row(c, 0, 1, 4, 100, 101, 1, 1, &d) == LM_EIO && d.file[0] &&
          strcmp(d.file, path) == 0);
    lm_db_composer_close(c);
    lm_db_close(db);
  }
  unlink(path);
  /* A SQLite file without lumen's tables: every read names the file. */
  db = NULL;
  CHECK(lm_sql_open(path, LM_DB_CREATE, &db, &d) == LM_OK);
  if (db) {
    CHECK(lm_db_run_n_selected(db, 1, 1) == 0);
    memset(&d, 0, sizeof d);
    CHECK(lm_db_each_run_kernel(db, 1, 1, see_kernel, &o, &d) == LM_EIO && d.file[0] && strcmp(d.file, path) == 0);
    CHECK(lm_db_each_composable(db, 1, see_record, &o, &d) == LM_EIO && strstr(d.message, "profile_record"));
    CHECK(lm_db_each_composable_value(db, 1, see_value, &v, &d) == LM_EIO && strstr(d.message, "profile_value"));
    CHECK(lm_db_sysinfo_source(db, 1, &found, &run, &pid, host, sizeof host, &d) == LM_EIO);
    CHECK(lm_db_sysinfo_count(db, 1, 1, 1, &n_lines, &d) == LM_EIO);
    CHECK(lm_db_each_sysinfo(db, 1, 1, 1, see_field, &o, &d) == LM_EIO);
    c = NULL;
    CHECK(lm_db_composer_open(db, 1, &c, &d) == LM_EIO && c == NULL);
    CHECK(lm_db_commit(db, &d) == LM_EIO); /* no transaction */
    lm_sql_close(db);
  }
  unlink(path);
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
  old_and_damaged(root, db_path);
  if (server && *server) {
    snprintf(pg, sizeof pg, "%s/test_db", server);
    old_and_damaged(root, pg);
  }
  /* A file that is not a lumen database is refused. */
  FILE *f = fopen(db_path, "w");
  if (f) {
    fputs("not sqlite", f);
    fclose(f);
  }
  lm_sql *db = NULL;
  lm_diag diag;
  CHECK(lm_db_open(db_path, LM_DB_READ, &db, &diag) != LM_OK);
  unlink(db_path);
  profile_tables();
  compose_tables();
  printf("round trips: %d workloads\n", n);
  return check_report("test_db");
}
