/*
 * lumen_db.c - lumen's own workload format: a SQLite database.
 *
 * One schema serves a lumen workload folder (lumen.db, holding one
 * workload, as `lumen profile` writes it) and the team store (many
 * workloads). Per-dispatch facts (kernel, GPU, launch parameters,
 * timestamps) are rows of `dispatch`; counter values are stored column by
 * column, one BLOB of little-endian doubles per (source table, counter),
 * because analysis reads whole columns and a 100,000-dispatch workload has
 * a thousand of them: a row per value would be a hundred million rows.
 * The full schema is documented in docs/workload-format.md.
 */
#include <math.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "io/io.h"

#define SCHEMA_VERSION "1"

static const char *const schema_sql =
    "PRAGMA foreign_keys = ON;\n"
    "CREATE TABLE IF NOT EXISTS lumen_meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);\n"
    "CREATE TABLE IF NOT EXISTS workload(\n"
    "  id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE, team TEXT NOT NULL DEFAULT '',\n"
    "  source TEXT NOT NULL, origin TEXT NOT NULL DEFAULT '', created TEXT NOT NULL,\n"
    "  arch TEXT NOT NULL, gpu_model TEXT NOT NULL DEFAULT '', n_dispatches INTEGER NOT NULL,\n"
    "  fingerprint TEXT NOT NULL DEFAULT '', complete INTEGER NOT NULL DEFAULT 1);\n"
    "CREATE TABLE IF NOT EXISTS sysinfo(\n"
    "  workload_id INTEGER NOT NULL REFERENCES workload(id) ON DELETE CASCADE,\n"
    "  position INTEGER NOT NULL, key TEXT NOT NULL, value TEXT NOT NULL,\n"
    "  PRIMARY KEY(workload_id, key));\n"
    "CREATE TABLE IF NOT EXISTS kernel(\n"
    "  workload_id INTEGER NOT NULL REFERENCES workload(id) ON DELETE CASCADE,\n"
    "  id INTEGER NOT NULL, name TEXT NOT NULL, PRIMARY KEY(workload_id, id));\n"
    "CREATE TABLE IF NOT EXISTS dispatch(\n"
    "  workload_id INTEGER NOT NULL REFERENCES workload(id) ON DELETE CASCADE,\n"
    "  row INTEGER NOT NULL, dispatch_id INTEGER, kernel_id INTEGER, gpu_id INTEGER,\n"
    "  grid_size INTEGER, workgroup_size INTEGER, lds_per_workgroup INTEGER,\n"
    "  scratch_per_workitem INTEGER, arch_vgpr INTEGER, accum_vgpr INTEGER, sgpr INTEGER,\n"
    "  wave_size INTEGER, start_ns REAL, end_ns REAL, instance INTEGER, pid INTEGER,\n"
    "  tid INTEGER, sclk_mhz REAL, mclk_mhz REAL, PRIMARY KEY(workload_id, row));\n"
    "CREATE TABLE IF NOT EXISTS column_data(\n"
    "  workload_id INTEGER NOT NULL REFERENCES workload(id) ON DELETE CASCADE,\n"
    "  source TEXT NOT NULL, position INTEGER NOT NULL, name TEXT NOT NULL,\n"
    "  n_rows INTEGER NOT NULL, data BLOB NOT NULL, first_text TEXT, first_text_line INTEGER,\n"
    "  runs BLOB, sets BLOB, PRIMARY KEY(workload_id, source, name));\n"
    "CREATE TABLE IF NOT EXISTS region(\n"
    "  workload_id INTEGER NOT NULL REFERENCES workload(id) ON DELETE CASCADE,\n"
    "  id INTEGER NOT NULL, name TEXT NOT NULL, PRIMARY KEY(workload_id, id));\n"
    "CREATE TABLE IF NOT EXISTS dispatch_region(\n"
    "  workload_id INTEGER NOT NULL REFERENCES workload(id) ON DELETE CASCADE,\n"
    "  row INTEGER NOT NULL, region_id INTEGER NOT NULL,\n"
    "  PRIMARY KEY(workload_id, row, region_id));\n"
    "CREATE TABLE IF NOT EXISTS log(\n"
    "  workload_id INTEGER NOT NULL REFERENCES workload(id) ON DELETE CASCADE,\n"
    "  seq INTEGER NOT NULL, t_ns INTEGER, level TEXT NOT NULL, message TEXT NOT NULL,\n"
    "  PRIMARY KEY(workload_id, seq));\n"
    /* What `lumen profile` planned and collected, run by run. */
    "CREATE TABLE IF NOT EXISTS profile_option(\n"
    "  workload_id INTEGER NOT NULL REFERENCES workload(id) ON DELETE CASCADE,\n"
    "  key TEXT NOT NULL, position INTEGER NOT NULL, value TEXT NOT NULL,\n"
    "  PRIMARY KEY(workload_id, key, position));\n"
    "CREATE TABLE IF NOT EXISTS profile_set(\n"
    "  workload_id INTEGER NOT NULL REFERENCES workload(id) ON DELETE CASCADE,\n"
    "  set_id INTEGER NOT NULL, position INTEGER NOT NULL, counter TEXT NOT NULL,\n"
    "  block TEXT NOT NULL, accumulate TEXT, why TEXT NOT NULL,\n"
    "  PRIMARY KEY(workload_id, set_id, position));\n"
    "CREATE TABLE IF NOT EXISTS profile_run(\n"
    "  workload_id INTEGER NOT NULL REFERENCES workload(id) ON DELETE CASCADE,\n"
    "  id INTEGER NOT NULL, mode TEXT NOT NULL, pass INTEGER, started TEXT NOT NULL,\n"
    "  finished TEXT, status TEXT NOT NULL, exit_code INTEGER, signal INTEGER,\n"
    "  n_dispatches INTEGER, PRIMARY KEY(workload_id, id));\n"
    "CREATE TABLE IF NOT EXISTS profile_record(\n"
    "  workload_id INTEGER NOT NULL REFERENCES workload(id) ON DELETE CASCADE,\n"
    "  run_id INTEGER NOT NULL, dispatch_id INTEGER NOT NULL, kernel TEXT NOT NULL,\n"
    "  instance INTEGER, selected INTEGER, set_id INTEGER, gpu_id INTEGER, pid INTEGER,\n"
    "  tid INTEGER, grid_size INTEGER, workgroup_size INTEGER, lds_per_workgroup INTEGER,\n"
    "  scratch_per_workitem INTEGER, arch_vgpr INTEGER, accum_vgpr INTEGER, sgpr INTEGER,\n"
    "  start_ns REAL, end_ns REAL, regions TEXT, cycle_key TEXT, row_group INTEGER,\n"
    "  PRIMARY KEY(workload_id, run_id, dispatch_id));\n"
    "CREATE TABLE IF NOT EXISTS profile_value(\n"
    "  workload_id INTEGER NOT NULL REFERENCES workload(id) ON DELETE CASCADE,\n"
    "  run_id INTEGER NOT NULL, dispatch_id INTEGER NOT NULL, column_name TEXT NOT NULL,\n"
    "  value REAL, PRIMARY KEY(workload_id, run_id, dispatch_id, column_name));\n"
    "CREATE TABLE IF NOT EXISTS profile_region(\n"
    "  workload_id INTEGER NOT NULL REFERENCES workload(id) ON DELETE CASCADE,\n"
    "  run_id INTEGER NOT NULL, id INTEGER NOT NULL, name TEXT NOT NULL,\n"
    "  PRIMARY KEY(workload_id, run_id, id));\n"
    "CREATE TABLE IF NOT EXISTS clock_sample(\n"
    "  workload_id INTEGER NOT NULL REFERENCES workload(id) ON DELETE CASCADE,\n"
    "  run_id INTEGER NOT NULL, gpu_id INTEGER NOT NULL, t_ns REAL NOT NULL,\n"
    "  sclk_mhz REAL, mclk_mhz REAL);\n";

/* The fixed dispatch columns, as pmc_perf.csv names them. */
typedef struct fixed_col {
  const char *csv;
  const char *sql;
} fixed_col;

static const fixed_col fixed_cols[] = {
    {"Dispatch_ID", "dispatch_id"},
    {"GPU_ID", "gpu_id"},
    {"Grid_Size", "grid_size"},
    {"Workgroup_Size", "workgroup_size"},
    {"LDS_Per_Workgroup", "lds_per_workgroup"},
    {"Scratch_Per_Workitem", "scratch_per_workitem"},
    {"Arch_VGPR", "arch_vgpr"},
    {"Accum_VGPR", "accum_vgpr"},
    {"SGPR", "sgpr"},
    {"Wave_Size", "wave_size"},
    {"Start_Timestamp", "start_ns"},
    {"End_Timestamp", "end_ns"},
};

static lm_status db_error(sqlite3 *db, const char *path, lm_diag *diag, const char *what) {
  return lm_diag_set(diag, LM_EIO, path, 0, 0, NULL, "%s: %s", what,
                     db ? sqlite3_errmsg(db) : "cannot open");
}

lm_status lm_db_open(const char *path, int mode, sqlite3 **out, lm_diag *diag) {
  sqlite3 *db = NULL;
  int create = mode == LM_DB_CREATE;
  int flags = create ? SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE
              : mode == LM_DB_WRITE ? SQLITE_OPEN_READWRITE : SQLITE_OPEN_READONLY;
  *out = NULL;
  if (!create) {
    struct stat st;
    if (stat(path, &st) != 0)
      return lm_diag_set(diag, LM_ENOTFOUND, path, 0, 0, NULL, "no such database");
  }
  if (sqlite3_open_v2(path, &db, flags | SQLITE_OPEN_NOMUTEX, NULL) != SQLITE_OK) {
    lm_status st = db_error(db, path, diag, "cannot open the database");
    sqlite3_close(db);
    return st;
  }
  sqlite3_busy_timeout(db, 10000);
  char *err = NULL;
  if (create) {
    if (sqlite3_exec(db, schema_sql, NULL, NULL, &err) != SQLITE_OK ||
        sqlite3_exec(db,
                     "INSERT OR IGNORE INTO lumen_meta(key, value) VALUES "
                     "('schema_version', '" SCHEMA_VERSION "'), ('format', 'lumen');",
                     NULL, NULL, &err) != SQLITE_OK) {
      lm_status st = lm_diag_set(diag, LM_EIO, path, 0, 0, NULL, "cannot create the schema: %s",
                                 err ? err : "?");
      sqlite3_free(err);
      sqlite3_close(db);
      return st;
    }
  } else {
    sqlite3_exec(db, "PRAGMA foreign_keys = ON;", NULL, NULL, NULL);
  }
  /* Refuse databases of another format or a newer schema. */
  sqlite3_stmt *q = NULL;
  const char *version = NULL;
  if (sqlite3_prepare_v2(db, "SELECT value FROM lumen_meta WHERE key = 'schema_version'", -1, &q,
                         NULL) == SQLITE_OK &&
      sqlite3_step(q) == SQLITE_ROW)
    version = (const char *)sqlite3_column_text(q, 0);
  if (!version || strcmp(version, SCHEMA_VERSION) != 0) {
    lm_status st = lm_diag_set(diag, LM_EDATA, path, 0, 0, NULL,
                               version ? "schema version %s; this lumen reads version "
                                         SCHEMA_VERSION
                                       : "not a lumen database%s",
                               version ? version : "");
    sqlite3_finalize(q);
    sqlite3_close(db);
    return st;
  }
  sqlite3_finalize(q);
  *out = db;
  return LM_OK;
}

void lm_db_close(sqlite3 *db) { sqlite3_close(db); }

/* ---------------------------------------------------------------- write */

static int bind_value(sqlite3_stmt *s, int i, double v) {
  if (isnan(v)) return sqlite3_bind_null(s, i);
  if (v == floor(v) && fabs(v) < 9e15) return sqlite3_bind_int64(s, i, (sqlite3_int64)v);
  return sqlite3_bind_double(s, i, v);
}

static double col_value(const lm_table *t, long c, size_t r) {
  return c < 0 ? LM_NAN : t->cols[c].values[r];
}

static lm_status put_columns(sqlite3 *db, const char *path, sqlite3_int64 wid, const lm_table *t,
                             const char *source, int skip_fixed, lm_diag *diag) {
  sqlite3_stmt *s = NULL;
  lm_status st = LM_OK;
  if (sqlite3_prepare_v2(db,
                         "INSERT INTO column_data(workload_id, source, position, name, n_rows, "
                         "data, first_text, first_text_line) VALUES (?,?,?,?,?,?,?,?)",
                         -1, &s, NULL) != SQLITE_OK)
    return db_error(db, path, diag, "prepare");
  int position = 0;
  for (size_t c = 0; c < t->n_cols; c++) {
    const lm_column *col = &t->cols[c];
    if (col->text_ids) continue; /* Kernel_Name: in the kernel table */
    int fixed = 0;
    for (size_t k = 0; skip_fixed && k < LM_ARRAY_LEN(fixed_cols); k++)
      fixed |= strcmp(fixed_cols[k].csv, col->name) == 0;
    if (fixed) continue;
    sqlite3_bind_int64(s, 1, wid);
    sqlite3_bind_text(s, 2, source, -1, SQLITE_STATIC);
    sqlite3_bind_int(s, 3, position++);
    sqlite3_bind_text(s, 4, col->name, -1, SQLITE_STATIC);
    sqlite3_bind_int64(s, 5, (sqlite3_int64)t->n_rows);
    sqlite3_bind_blob64(s, 6, col->values, t->n_rows * sizeof(double), SQLITE_STATIC);
    if (col->n_text) {
      sqlite3_bind_text(s, 7, col->first_text ? col->first_text : "", -1, SQLITE_STATIC);
      sqlite3_bind_int64(s, 8, col->first_text_line);
    } else {
      sqlite3_bind_null(s, 7);
      sqlite3_bind_null(s, 8);
    }
    if (sqlite3_step(s) != SQLITE_DONE) {
      st = db_error(db, path, diag, "write a column");
      break;
    }
    sqlite3_reset(s);
  }
  sqlite3_finalize(s);
  return st;
}

lm_status lm_db_create_workload(sqlite3 *db, const char *name, const char *team,
                                const char *source, const char *origin, const char *arch,
                                const char *gpu_model, size_t n_dispatches, int complete,
                                int64_t *id_out, lm_diag *diag) {
  const char *path = sqlite3_db_filename(db, "main");
  sqlite3_stmt *s = NULL;
  char created[64];
  time_t now = time(NULL);
  strftime(created, sizeof created, "%Y-%m-%dT%H:%M:%SZ", gmtime(&now));
  if (sqlite3_prepare_v2(db,
                         "INSERT INTO workload(name, team, source, origin, created, arch, "
                         "gpu_model, n_dispatches, complete) VALUES (?,?,?,?,?,?,?,?,?)",
                         -1, &s, NULL) != SQLITE_OK)
    return db_error(db, path, diag, "write the workload");
  sqlite3_bind_text(s, 1, name, -1, SQLITE_STATIC);
  sqlite3_bind_text(s, 2, team ? team : "", -1, SQLITE_STATIC);
  sqlite3_bind_text(s, 3, source, -1, SQLITE_STATIC);
  sqlite3_bind_text(s, 4, origin ? origin : "", -1, SQLITE_STATIC);
  sqlite3_bind_text(s, 5, created, -1, SQLITE_STATIC);
  sqlite3_bind_text(s, 6, arch ? arch : "", -1, SQLITE_STATIC);
  sqlite3_bind_text(s, 7, gpu_model ? gpu_model : "", -1, SQLITE_STATIC);
  sqlite3_bind_int64(s, 8, (sqlite3_int64)n_dispatches);
  sqlite3_bind_int(s, 9, complete);
  lm_status st = LM_OK;
  if (sqlite3_step(s) != SQLITE_DONE) {
    if (sqlite3_extended_errcode(db) == SQLITE_CONSTRAINT_UNIQUE)
      st = lm_diag_set(diag, LM_EINVAL, path, 0, 0, NULL,
                       "a workload named '%s' is already in the database", name);
    else
      st = db_error(db, path, diag, "write the workload");
  } else if (id_out) {
    *id_out = sqlite3_last_insert_rowid(db);
  }
  sqlite3_finalize(s);
  return st;
}

lm_status lm_db_write_tables(sqlite3 *db, int64_t wid, const lm_workload *w, lm_diag *diag) {
  const char *path = sqlite3_db_filename(db, "main");
  sqlite3_stmt *s = NULL;
  lm_status st = LM_OK;
  /* System information. */
  if (sqlite3_prepare_v2(db, "INSERT INTO sysinfo(workload_id, position, key, value) VALUES (?,?,?,?)",
                         -1, &s, NULL) != SQLITE_OK)
    goto sql_fail;
  for (size_t i = 0; i < w->sysinfo.n_fields; i++) {
    sqlite3_bind_int64(s, 1, wid);
    sqlite3_bind_int(s, 2, (int)i);
    sqlite3_bind_text(s, 3, w->sysinfo.names[i], -1, SQLITE_STATIC);
    sqlite3_bind_text(s, 4, w->sysinfo.texts[i], -1, SQLITE_STATIC);
    if (sqlite3_step(s) != SQLITE_DONE) goto sql_fail;
    sqlite3_reset(s);
  }
  sqlite3_finalize(s);
  s = NULL;

  /* Kernels: the pmc table's interned names keep their ids. */
  const lm_table *pmc = w->pmc;
  long kcol = lm_table_find(pmc, "Kernel_Name");
  if (sqlite3_prepare_v2(db, "INSERT INTO kernel(workload_id, id, name) VALUES (?,?,?)", -1, &s,
                         NULL) != SQLITE_OK)
    goto sql_fail;
  for (size_t k = 0; k < pmc->n_strings; k++) {
    sqlite3_bind_int64(s, 1, wid);
    sqlite3_bind_int64(s, 2, (sqlite3_int64)k);
    sqlite3_bind_text(s, 3, pmc->strings[k], -1, SQLITE_STATIC);
    if (sqlite3_step(s) != SQLITE_DONE) goto sql_fail;
    sqlite3_reset(s);
  }
  sqlite3_finalize(s);
  s = NULL;

  /* Dispatches. */
  long fixed_idx[LM_ARRAY_LEN(fixed_cols)];
  for (size_t k = 0; k < LM_ARRAY_LEN(fixed_cols); k++)
    fixed_idx[k] = lm_table_find(pmc, fixed_cols[k].csv);
  if (sqlite3_prepare_v2(db,
                         "INSERT INTO dispatch(workload_id, row, kernel_id, dispatch_id, gpu_id, "
                         "grid_size, workgroup_size, lds_per_workgroup, scratch_per_workitem, "
                         "arch_vgpr, accum_vgpr, sgpr, wave_size, start_ns, end_ns) VALUES "
                         "(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                         -1, &s, NULL) != SQLITE_OK)
    goto sql_fail;
  for (size_t r = 0; r < pmc->n_rows; r++) {
    sqlite3_bind_int64(s, 1, wid);
    sqlite3_bind_int64(s, 2, (sqlite3_int64)r);
    int32_t kid = kcol >= 0 && pmc->cols[kcol].text_ids ? pmc->cols[kcol].text_ids[r] : -1;
    if (kid >= 0) sqlite3_bind_int(s, 3, kid);
    else sqlite3_bind_null(s, 3);
    for (size_t k = 0; k < LM_ARRAY_LEN(fixed_cols); k++)
      bind_value(s, 4 + (int)k, col_value(pmc, fixed_idx[k], r));
    if (sqlite3_step(s) != SQLITE_DONE) goto sql_fail;
    sqlite3_reset(s);
  }
  sqlite3_finalize(s);
  s = NULL;

  /* Counter columns: pmc_perf, the SQ_* accumulate tables, roofline. */
  st = put_columns(db, path, wid, pmc, "pmc_perf", 1, diag);
  for (size_t i = 0; st == LM_OK && i < w->n_levels; i++)
    st = put_columns(db, path, wid, w->levels[i], w->levels[i]->name, 0, diag);
  if (st == LM_OK && w->roofline) st = put_columns(db, path, wid, w->roofline, "roofline", 0, diag);
  return st;
sql_fail:
  st = db_error(db, path, diag, "write");
  sqlite3_finalize(s);
  return st;
}

lm_status lm_db_write_workload(sqlite3 *db, const lm_workload *w, const char *name,
                               const char *team, const char *origin, int64_t *id_out,
                               lm_diag *diag) {
  const char *path = sqlite3_db_filename(db, "main");
  char *err = NULL;
  if (sqlite3_exec(db, "BEGIN IMMEDIATE", NULL, NULL, &err) != SQLITE_OK) {
    lm_status st = lm_diag_set(diag, LM_EIO, path, 0, 0, NULL, "cannot start a transaction: %s", err);
    sqlite3_free(err);
    return st;
  }
  const char *model = lm_sysinfo_text(&w->sysinfo, "gpu_model");
  int64_t wid = 0;
  lm_status st = lm_db_create_workload(db, name, team, "omniperf", origin, w->arch, model,
                                       w->pmc->n_rows, 1, &wid, diag);
  if (st == LM_OK) st = lm_db_write_tables(db, wid, w, diag);
  if (st == LM_OK && sqlite3_exec(db, "COMMIT", NULL, NULL, &err) != SQLITE_OK) {
    st = lm_diag_set(diag, LM_EIO, path, 0, 0, NULL, "commit failed: %s", err);
    sqlite3_free(err);
  }
  if (st != LM_OK) {
    sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
    return st;
  }
  if (id_out) *id_out = wid;
  return LM_OK;
}

/* ----------------------------------------------------------------- read */

static lm_status read_sysinfo_rows(sqlite3 *db, const char *path, sqlite3_int64 wid,
                                   lm_workload *w, lm_diag *diag) {
  sqlite3_stmt *s = NULL;
  lm_status st = LM_OK;
  size_t n = 0;
  if (sqlite3_prepare_v2(db, "SELECT key, value FROM sysinfo WHERE workload_id = ? ORDER BY position",
                         -1, &s, NULL) != SQLITE_OK)
    return db_error(db, path, diag, "read system info");
  sqlite3_bind_int64(s, 1, wid);
  while (sqlite3_step(s) == SQLITE_ROW) n++;
  sqlite3_reset(s);
  lm_table *t = lm_table_create(path, "sysinfo", 1, n);
  if (!t) {
    sqlite3_finalize(s);
    return lm_diag_set(diag, LM_ENOMEM, path, 0, 0, NULL, "out of memory");
  }
  w->sysinfo_table = t;
  w->sysinfo.names = lm_arena_alloc(w->arena, (n ? n : 1) * sizeof(char *));
  w->sysinfo.texts = lm_arena_alloc(w->arena, (n ? n : 1) * sizeof(char *));
  w->sysinfo.values = lm_arena_alloc(w->arena, (n ? n : 1) * sizeof(double));
  if (!w->sysinfo.names || !w->sysinfo.texts || !w->sysinfo.values) {
    sqlite3_finalize(s);
    return lm_diag_set(diag, LM_ENOMEM, path, 0, 0, NULL, "out of memory");
  }
  size_t i = 0;
  while (i < n && sqlite3_step(s) == SQLITE_ROW) {
    const char *key = (const char *)sqlite3_column_text(s, 0);
    const char *value = (const char *)sqlite3_column_text(s, 1);
    lm_column *c = lm_table_add_column(t, key ? key : "", 1);
    int32_t id = lm_table_intern(t, value ? value : "");
    if (!c || id < 0) {
      st = lm_diag_set(diag, LM_ENOMEM, path, 0, 0, NULL, "out of memory");
      break;
    }
    c->text_ids[0] = id;
    double v;
    int is_int;
    const char *text = t->strings[id];
    if (lm_parse_number(text, text + strlen(text), &v, &is_int) != 1) v = LM_NAN;
    c->values[0] = v;
    w->sysinfo.names[i] = c->name;
    w->sysinfo.texts[i] = text;
    w->sysinfo.values[i] = v;
    i++;
  }
  w->sysinfo.n_fields = i;
  sqlite3_finalize(s);
  if (st == LM_OK) st = lm_table_finish(t);
  w->arch = lm_sysinfo_text(&w->sysinfo, "gpu_arch");
  if (st == LM_OK && (!w->arch || !w->arch[0]))
    st = lm_diag_set(diag, LM_EDATA, path, 0, 0, "gpu_arch", "missing from the workload's system info");
  return st;
}

/* Load the columns of one source into a new table. With `dispatch` set,
 * the pmc_perf table: the fixed dispatch columns and Kernel_Name first. */
static lm_status read_source(sqlite3 *db, const char *path, sqlite3_int64 wid, const char *source,
                             size_t n_rows, int dispatch, lm_table **out, lm_diag *diag) {
  sqlite3_stmt *s = NULL;
  lm_status st = LM_OK;
  size_t n_cols = 0;
  *out = NULL;
  if (sqlite3_prepare_v2(db,
                         "SELECT COUNT(*) FROM column_data WHERE workload_id = ? AND source = ?",
                         -1, &s, NULL) != SQLITE_OK)
    return db_error(db, path, diag, "read columns");
  sqlite3_bind_int64(s, 1, wid);
  sqlite3_bind_text(s, 2, source, -1, SQLITE_STATIC);
  if (sqlite3_step(s) == SQLITE_ROW) n_cols = (size_t)sqlite3_column_int64(s, 0);
  sqlite3_finalize(s);
  s = NULL;
  size_t extra = dispatch ? LM_ARRAY_LEN(fixed_cols) + 3 : 0;
  lm_table *t = lm_table_create(path, source, n_rows, n_cols + extra);
  if (!t) return lm_diag_set(diag, LM_ENOMEM, path, 0, 0, NULL, "out of memory");
  if (dispatch) {
    lm_column *cols[LM_ARRAY_LEN(fixed_cols)];
    lm_column *kernel = NULL;
    for (size_t k = 0; k < LM_ARRAY_LEN(fixed_cols); k++) {
      if (k == 10) kernel = lm_table_add_column(t, "Kernel_Name", 1);
      cols[k] = lm_table_add_column(t, fixed_cols[k].csv, 0);
    }
    if (!kernel) goto nomem;
    for (size_t k = 0; k < LM_ARRAY_LEN(fixed_cols); k++)
      if (!cols[k]) goto nomem;
    /* Kernel names, with their ids as in the kernel table. */
    if (sqlite3_prepare_v2(db, "SELECT id, name FROM kernel WHERE workload_id = ? ORDER BY id", -1,
                           &s, NULL) != SQLITE_OK)
      goto sql_fail;
    sqlite3_bind_int64(s, 1, wid);
    int32_t *remap = NULL;
    size_t n_remap = 0;
    while (sqlite3_step(s) == SQLITE_ROW) {
      int64_t id = sqlite3_column_int64(s, 0);
      if (id < 0 || id > 1000000000) continue;
      if ((size_t)id >= n_remap) {
        size_t grown = (size_t)id + 64;
        int32_t *r = lm_realloc(remap, grown * sizeof *r);
        if (!r) {
          lm_free(remap);
          goto nomem;
        }
        for (size_t i = n_remap; i < grown; i++) r[i] = -1;
        remap = r;
        n_remap = grown;
      }
      const char *name = (const char *)sqlite3_column_text(s, 1);
      remap[id] = lm_table_intern(t, name ? name : "");
    }
    sqlite3_finalize(s);
    s = NULL;
    /* Clocks measured during each dispatch (lumen profiles with telemetry). */
    lm_column *sclk = lm_table_add_column(t, "Measured_SCLK_MHz", 0);
    lm_column *mclk = lm_table_add_column(t, "Measured_MCLK_MHz", 0);
    if (!sclk || !mclk) goto nomem;
    static const char *select_sql =
        "SELECT row, kernel_id, dispatch_id, gpu_id, grid_size, workgroup_size, "
        "lds_per_workgroup, scratch_per_workitem, arch_vgpr, accum_vgpr, sgpr, wave_size, "
        "start_ns, end_ns, sclk_mhz, mclk_mhz FROM dispatch WHERE workload_id = ? ORDER BY row";
    if (sqlite3_prepare_v2(db, select_sql, -1, &s, NULL) != SQLITE_OK) {
      lm_free(remap);
      goto sql_fail;
    }
    sqlite3_bind_int64(s, 1, wid);
    size_t r = 0;
    while (r < n_rows && sqlite3_step(s) == SQLITE_ROW) {
      int64_t kid = sqlite3_column_type(s, 1) == SQLITE_NULL ? -1 : sqlite3_column_int64(s, 1);
      kernel->text_ids[r] = kid >= 0 && (size_t)kid < n_remap ? remap[kid] : lm_table_intern(t, "");
      for (size_t k = 0; k < LM_ARRAY_LEN(fixed_cols); k++)
        cols[k]->values[r] = sqlite3_column_type(s, 2 + (int)k) == SQLITE_NULL
                                 ? LM_NAN
                                 : sqlite3_column_double(s, 2 + (int)k);
      sclk->values[r] = sqlite3_column_type(s, 14) == SQLITE_NULL ? LM_NAN : sqlite3_column_double(s, 14);
      mclk->values[r] = sqlite3_column_type(s, 15) == SQLITE_NULL ? LM_NAN : sqlite3_column_double(s, 15);
      r++;
    }
    lm_free(remap);
    sqlite3_finalize(s);
    s = NULL;
    if (r != n_rows) {
      st = lm_diag_set(diag, LM_EDATA, path, 0, 0, NULL,
                       "the workload lists %zu dispatches but holds %zu", n_rows, r);
      goto fail;
    }
  }
  if (sqlite3_prepare_v2(db,
                         "SELECT name, n_rows, data, first_text, first_text_line FROM column_data "
                         "WHERE workload_id = ? AND source = ? ORDER BY position",
                         -1, &s, NULL) != SQLITE_OK)
    goto sql_fail;
  sqlite3_bind_int64(s, 1, wid);
  sqlite3_bind_text(s, 2, source, -1, SQLITE_STATIC);
  int rc;
  while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
    const char *name = (const char *)sqlite3_column_text(s, 0);
    size_t rows = (size_t)sqlite3_column_int64(s, 1);
    const void *data = sqlite3_column_blob(s, 2);
    size_t bytes = (size_t)sqlite3_column_bytes(s, 2);
    lm_column *c = lm_table_add_column(t, name ? name : "", 0);
    if (!c) goto nomem;
    if (rows != n_rows || bytes != rows * sizeof(double)) {
      st = lm_diag_set(diag, LM_EDATA, path, 0, 0, name,
                       "column of %zu bytes for %zu rows (expected %zu rows)", bytes, rows, n_rows);
      goto fail;
    }
    if (bytes) memcpy(c->values, data, bytes);
    if (sqlite3_column_type(s, 3) != SQLITE_NULL) {
      const char *ft = (const char *)sqlite3_column_text(s, 3);
      c->first_text = lm_arena_strdup(t->arena, ft ? ft : "");
      c->first_text_line = (long)sqlite3_column_int64(s, 4);
    }
  }
  if (rc != SQLITE_DONE) goto sql_fail;
  sqlite3_finalize(s);
  s = NULL;
  lm_table_finish(t);
  /* Columns that held text when imported keep saying so. */
  for (size_t c = 0; c < t->n_cols; c++)
    if (t->cols[c].first_text) t->cols[c].n_text = 1;
  *out = t;
  return LM_OK;
nomem:
  st = lm_diag_set(diag, LM_ENOMEM, path, 0, 0, NULL, "out of memory");
  goto fail;
sql_fail:
  st = db_error(db, path, diag, "read");
fail:
  sqlite3_finalize(s);
  lm_table_free(t);
  return st;
}

/* Region names and, per dispatch row, the regions it ran in. */
static lm_status read_regions(sqlite3 *db, const char *path, sqlite3_int64 wid, lm_workload *w,
                              lm_diag *diag) {
  sqlite3_stmt *s = NULL;
  if (sqlite3_prepare_v2(db, "SELECT id, name FROM region WHERE workload_id = ? ORDER BY id", -1,
                         &s, NULL) != SQLITE_OK)
    return db_error(db, path, diag, "read regions");
  sqlite3_bind_int64(s, 1, wid);
  size_t cap = 0;
  while (sqlite3_step(s) == SQLITE_ROW) {
    if (w->n_regions == cap) {
      cap = cap ? cap * 2 : 8;
      const char **grown = lm_arena_alloc(w->arena, cap * sizeof *grown);
      if (!grown) break;
      if (w->n_regions) memcpy(grown, w->region_names, w->n_regions * sizeof *grown);
      w->region_names = grown;
    }
    const char *name = (const char *)sqlite3_column_text(s, 1);
    w->region_names[w->n_regions++] = lm_arena_strdup(w->arena, name ? name : "");
  }
  sqlite3_finalize(s);
  if (!w->n_regions) return LM_OK;
  w->row_regions = lm_arena_alloc(w->arena, (w->pmc->n_rows + 1) * sizeof *w->row_regions);
  if (!w->row_regions) return lm_diag_set(diag, LM_ENOMEM, path, 0, 0, NULL, "out of memory");
  if (sqlite3_prepare_v2(db, "SELECT row, region_id FROM dispatch_region WHERE workload_id = ?", -1,
                         &s, NULL) != SQLITE_OK)
    return db_error(db, path, diag, "read regions");
  sqlite3_bind_int64(s, 1, wid);
  while (sqlite3_step(s) == SQLITE_ROW) {
    int64_t row = sqlite3_column_int64(s, 0), id = sqlite3_column_int64(s, 1);
    if (row >= 0 && (size_t)row < w->pmc->n_rows && id >= 0 && id < 64)
      w->row_regions[row] |= 1ULL << id;
  }
  sqlite3_finalize(s);
  return LM_OK;
}

lm_status lm_db_read_workload(sqlite3 *db, const char *name, lm_workload **out, lm_diag *diag) {
  const char *path = sqlite3_db_filename(db, "main");
  sqlite3_stmt *s = NULL;
  lm_status st = LM_OK;
  lm_workload *w = NULL;
  lm_arena *arena = NULL;
  *out = NULL;
  if (sqlite3_prepare_v2(db,
                         name ? "SELECT id, n_dispatches, complete FROM workload WHERE name = ?"
                              : "SELECT id, n_dispatches, complete FROM workload ORDER BY id",
                         -1, &s, NULL) != SQLITE_OK)
    return db_error(db, path, diag, "read");
  if (name) sqlite3_bind_text(s, 1, name, -1, SQLITE_STATIC);
  if (sqlite3_step(s) != SQLITE_ROW) {
    sqlite3_finalize(s);
    return lm_diag_set(diag, LM_ENOTFOUND, path, 0, 0, NULL,
                       name ? "no workload named '%s' in the database" : "the database holds no workload%s",
                       name ? name : "");
  }
  sqlite3_int64 wid = sqlite3_column_int64(s, 0);
  size_t n_rows = (size_t)sqlite3_column_int64(s, 1);
  int complete = sqlite3_column_int(s, 2);
  sqlite3_finalize(s);
  s = NULL;
  if (!complete)
    return lm_diag_set(diag, LM_EDATA, path, 0, 0, NULL,
                       "the profile that writes this workload has not finished (continue it "
                       "with `lumen profile --resume -w DIR`)");
  arena = lm_arena_new(1 << 12);
  if (!arena) return lm_diag_set(diag, LM_ENOMEM, path, 0, 0, NULL, "out of memory");
  w = lm_arena_alloc(arena, sizeof *w);
  if (!w) {
    lm_arena_free(arena);
    return lm_diag_set(diag, LM_ENOMEM, path, 0, 0, NULL, "out of memory");
  }
  w->arena = arena;
  w->path = lm_arena_strdup(arena, path);
  st = read_sysinfo_rows(db, path, wid, w, diag);
  if (st != LM_OK) goto fail;
  st = read_source(db, path, wid, "pmc_perf", n_rows, 1, &w->pmc, diag);
  if (st != LM_OK) goto fail;
  st = read_regions(db, path, wid, w, diag);
  if (st != LM_OK) goto fail;
  /* Other sources: the SQ_* accumulate tables and roofline. */
  if (sqlite3_prepare_v2(db,
                         "SELECT DISTINCT source FROM column_data WHERE workload_id = ? AND "
                         "source != 'pmc_perf' ORDER BY source",
                         -1, &s, NULL) != SQLITE_OK) {
    st = db_error(db, path, diag, "read");
    goto fail;
  }
  sqlite3_bind_int64(s, 1, wid);
  char *sources[64];
  size_t n_sources = 0;
  while (n_sources < 64 && sqlite3_step(s) == SQLITE_ROW)
    sources[n_sources++] = lm_arena_strdup(arena, (const char *)sqlite3_column_text(s, 0));
  sqlite3_finalize(s);
  s = NULL;
  w->levels = lm_arena_alloc(arena, (n_sources + 1) * sizeof *w->levels);
  if (!w->levels) goto nomem;
  for (size_t i = 0; i < n_sources; i++) {
    if (!sources[i]) goto nomem;
    int roofline = strcmp(sources[i], "roofline") == 0;
    sqlite3_stmt *q = NULL;
    size_t rows = n_rows;
    if (sqlite3_prepare_v2(db, "SELECT MAX(n_rows) FROM column_data WHERE workload_id = ? AND source = ?",
                           -1, &q, NULL) == SQLITE_OK) {
      sqlite3_bind_int64(q, 1, wid);
      sqlite3_bind_text(q, 2, sources[i], -1, SQLITE_STATIC);
      if (sqlite3_step(q) == SQLITE_ROW) rows = (size_t)sqlite3_column_int64(q, 0);
    }
    sqlite3_finalize(q);
    lm_table *t = NULL;
    st = read_source(db, path, wid, sources[i], rows, 0, &t, diag);
    if (st != LM_OK) goto fail;
    if (roofline) w->roofline = t;
    else w->levels[w->n_levels++] = t;
  }
  *out = w;
  return LM_OK;
nomem:
  st = lm_diag_set(diag, LM_ENOMEM, path, 0, 0, NULL, "out of memory");
fail:
  sqlite3_finalize(s);
  lm_workload_free(w);
  return st;
}
