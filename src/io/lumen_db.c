/*
 * lumen_db.c - lumen's own workload format and store schema.
 *
 * One schema serves a lumen workload folder (lumen.db, holding one
 * workload, as `lumen profile` writes it) and the team store (many
 * workloads). Per-dispatch facts (kernel, GPU, launch parameters,
 * timestamps) are rows of `dispatch`; counter values are stored column by
 * column, one compressed BLOB per (source table, counter) (column_codec.c),
 * because analysis reads whole columns and a 100,000-dispatch workload has
 * a thousand of them: a row per value would be a hundred million rows.
 * The same code runs on SQLite and PostgreSQL through sql.h. The full
 * schema is documented in docs/workload-format.md.
 */
#include <math.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "io/io.h"
#include "io/sql.h"

/* 2: profile records are keyed by process (pid), profile_process lists
 * the processes of each run, and dispatch rows carry the MPI rank and host
 * of their process. 3: column_data.codec says how each column's data is
 * encoded (NULL or 0: raw doubles, as versions 1 and 2 wrote them; 1:
 * compact). 4: the merged rank.R parts of an MPI profile keep every
 * part's system information and roofline, and a combined --split ranks
 * profile the rank of each set (rank_store.c). 5: workload.fingerprint is
 * XXH3-128 of the workload's contents (fingerprint.c); the fingerprints of
 * earlier versions, made by another hash, are cleared on upgrade and the
 * store computes them again. 6: column_data.checksum is XXH3-64 of each
 * column's data (as a signed 64-bit integer), checked when it is read;
 * columns written before hold none (NULL) and are read unchecked. Older
 * databases are upgraded when opened for writing. */
#define SCHEMA_VERSION "6"

/* Version 4's tables; upgrading a version 3 database creates them. */
#define RANK_TABLES                                                                               \
  "CREATE TABLE IF NOT EXISTS rank_sysinfo(\n"                                                   \
  "  workload_id INTEGER NOT NULL REFERENCES workload(id) ON DELETE CASCADE,\n"                  \
  "  part INTEGER NOT NULL, rank INTEGER NOT NULL, position INTEGER NOT NULL,\n"                 \
  "  key TEXT NOT NULL, value TEXT NOT NULL, PRIMARY KEY(workload_id, part, key));\n"            \
  "CREATE TABLE IF NOT EXISTS set_rank(\n"                                                       \
  "  workload_id INTEGER NOT NULL REFERENCES workload(id) ON DELETE CASCADE,\n"                  \
  "  set_id INTEGER NOT NULL, rank INTEGER, ranks INTEGER NOT NULL,\n"                           \
  "  PRIMARY KEY(workload_id, set_id));\n"

/* Board power and temperature readings (NULL: the sampler had none). A
 * table added within schema version 3: a database opened for writing
 * gains it when it lacks it; readers never need it. */
#define POWER_TABLES                                                                              \
  "CREATE TABLE IF NOT EXISTS power_sample(\n"                                                    \
  "  workload_id INTEGER NOT NULL REFERENCES workload(id) ON DELETE CASCADE,\n"                   \
  "  run_id INTEGER NOT NULL, gpu_id INTEGER NOT NULL, t_ns REAL NOT NULL,\n"                     \
  "  power_w REAL, temp_c REAL);\n"                                                               \
  "CREATE INDEX IF NOT EXISTS power_sample_at ON power_sample(workload_id, run_id, gpu_id, t_ns);\n"

static const char *const schema_sql =
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
    "  tid INTEGER, sclk_mhz REAL, mclk_mhz REAL, rank INTEGER, host TEXT,\n"
    "  PRIMARY KEY(workload_id, row));\n"
    "CREATE TABLE IF NOT EXISTS column_data(\n"
    "  workload_id INTEGER NOT NULL REFERENCES workload(id) ON DELETE CASCADE,\n"
    "  source TEXT NOT NULL, position INTEGER NOT NULL, name TEXT NOT NULL,\n"
    "  n_rows INTEGER NOT NULL, data BLOB NOT NULL, first_text TEXT, first_text_line INTEGER,\n"
    "  runs BLOB, sets BLOB, codec INTEGER, checksum INTEGER, PRIMARY KEY(workload_id, source, position),\n"
    "  UNIQUE(workload_id, source, name));\n"
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
    "  instance INTEGER, selected INTEGER, set_id INTEGER, gpu_id INTEGER, pid INTEGER NOT NULL,\n"
    "  tid INTEGER, grid_size INTEGER, workgroup_size INTEGER, lds_per_workgroup INTEGER,\n"
    "  scratch_per_workitem INTEGER, arch_vgpr INTEGER, accum_vgpr INTEGER, sgpr INTEGER,\n"
    "  start_ns REAL, end_ns REAL, regions TEXT, cycle_key TEXT, row_group INTEGER,\n"
    "  PRIMARY KEY(workload_id, run_id, pid, dispatch_id));\n"
    "CREATE TABLE IF NOT EXISTS profile_value(\n"
    "  workload_id INTEGER NOT NULL REFERENCES workload(id) ON DELETE CASCADE,\n"
    "  run_id INTEGER NOT NULL, pid INTEGER NOT NULL, dispatch_id INTEGER NOT NULL,\n"
    "  column_name TEXT NOT NULL, value REAL,\n"
    "  PRIMARY KEY(workload_id, run_id, pid, dispatch_id, column_name));\n"
    "CREATE TABLE IF NOT EXISTS profile_process(\n"
    "  workload_id INTEGER NOT NULL REFERENCES workload(id) ON DELETE CASCADE,\n"
    "  run_id INTEGER NOT NULL, pid INTEGER NOT NULL, slot INTEGER NOT NULL, host TEXT,\n"
    "  rank INTEGER, size INTEGER, local_rank INTEGER, launcher TEXT, gpus TEXT,\n"
    "  n_dispatches INTEGER NOT NULL, finished INTEGER NOT NULL, error TEXT,\n"
    "  PRIMARY KEY(workload_id, run_id, pid));\n"
    "CREATE TABLE IF NOT EXISTS profile_region(\n"
    "  workload_id INTEGER NOT NULL REFERENCES workload(id) ON DELETE CASCADE,\n"
    "  run_id INTEGER NOT NULL, id INTEGER NOT NULL, name TEXT NOT NULL,\n"
    "  PRIMARY KEY(workload_id, run_id, id));\n"
    "CREATE TABLE IF NOT EXISTS profile_sysinfo(\n"
    "  workload_id INTEGER NOT NULL REFERENCES workload(id) ON DELETE CASCADE,\n"
    "  run_id INTEGER NOT NULL, pid INTEGER NOT NULL, position INTEGER NOT NULL,\n"
    "  key TEXT NOT NULL, value TEXT NOT NULL, PRIMARY KEY(workload_id, run_id, pid, key));\n"
    "CREATE TABLE IF NOT EXISTS profile_telemetry(\n"
    "  workload_id INTEGER NOT NULL REFERENCES workload(id) ON DELETE CASCADE,\n"
    "  run_id INTEGER NOT NULL, sampler TEXT NOT NULL, note TEXT NOT NULL,\n"
    "  PRIMARY KEY(workload_id, run_id));\n"
    /* Where each dispatch row's values came from (docs/workload-format.md). */
    "CREATE TABLE IF NOT EXISTS execution(\n"
    "  workload_id INTEGER NOT NULL REFERENCES workload(id) ON DELETE CASCADE,\n"
    "  row INTEGER NOT NULL, set_id INTEGER NOT NULL, run_id INTEGER, duration_ns REAL,\n"
    "  PRIMARY KEY(workload_id, row, set_id));\n"
    "CREATE TABLE IF NOT EXISTS execution_value(\n"
    "  workload_id INTEGER NOT NULL REFERENCES workload(id) ON DELETE CASCADE,\n"
    "  row INTEGER NOT NULL, set_id INTEGER NOT NULL, name TEXT NOT NULL, value REAL,\n"
    "  PRIMARY KEY(workload_id, row, set_id, name));\n"
    "CREATE TABLE IF NOT EXISTS dispatch_clock(\n"
    "  workload_id INTEGER NOT NULL REFERENCES workload(id) ON DELETE CASCADE,\n"
    "  row INTEGER NOT NULL, source TEXT NOT NULL, PRIMARY KEY(workload_id, row));\n"
    "CREATE TABLE IF NOT EXISTS clock_sample(\n"
    "  workload_id INTEGER NOT NULL REFERENCES workload(id) ON DELETE CASCADE,\n"
    "  run_id INTEGER NOT NULL, gpu_id INTEGER NOT NULL, t_ns REAL NOT NULL,\n"
    "  sclk_mhz REAL, mclk_mhz REAL);\n"
    POWER_TABLES
    RANK_TABLES
    /* Results of analyses, so that a store answers a repeated view at once:
     * keyed by the lumen version, the definitions and the options. */
    "CREATE TABLE IF NOT EXISTS analysis_cache(\n"
    "  workload_id INTEGER NOT NULL REFERENCES workload(id) ON DELETE CASCADE,\n"
    "  key TEXT NOT NULL, created TEXT NOT NULL, data BLOB NOT NULL,\n"
    "  PRIMARY KEY(workload_id, key));\n"
    "CREATE INDEX IF NOT EXISTS workload_fingerprint ON workload(fingerprint);\n";

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


static lm_status stmt_fail(lm_stmt *s, lm_sql *sql, const char *what, lm_diag *diag) {
  lm_status st = s ? lm_stmt_error(s, what, diag)
                   : lm_diag_set(diag, LM_EIO, lm_sql_where(sql), 0, 0, NULL, "%s failed", what);
  lm_stmt_free(s);
  return st;
}

/* upgrade_v1: version 1 to 2 in one transaction. Dispatch rows gain rank
 * and host (unknown: NULL); the profile tables are rebuilt with the
 * process id in their keys (a version 1 profile had one process per run,
 * whose pid its records hold). */
static lm_status upgrade_v1(lm_sql *sql, lm_diag *diag) {
  static const char *const steps =
      "BEGIN;\n"
      "ALTER TABLE dispatch ADD COLUMN rank INTEGER;\n"
      "ALTER TABLE dispatch ADD COLUMN host TEXT;\n"
      "ALTER TABLE profile_record RENAME TO profile_record_v1;\n"
      "ALTER TABLE profile_value RENAME TO profile_value_v1;\n";
  static const char *const copy =
      "INSERT INTO profile_record SELECT workload_id, run_id, dispatch_id, kernel, instance, selected, "
      "set_id, gpu_id, COALESCE(pid, 0), tid, grid_size, workgroup_size, lds_per_workgroup, "
      "scratch_per_workitem, arch_vgpr, accum_vgpr, sgpr, start_ns, end_ns, regions, cycle_key, "
      "row_group FROM profile_record_v1;\n"
      "INSERT INTO profile_value SELECT v.workload_id, v.run_id, COALESCE((SELECT r.pid FROM "
      "profile_record_v1 r WHERE r.workload_id = v.workload_id AND r.run_id = v.run_id AND "
      "r.dispatch_id = v.dispatch_id), 0), v.dispatch_id, v.column_name, v.value FROM profile_value_v1 v;\n"
      "DROP TABLE profile_record_v1;\n"
      "DROP TABLE profile_value_v1;\n"
      "UPDATE lumen_meta SET value = '2' WHERE key = 'schema_version';\n"
      "COMMIT;\n";
  lm_status st = lm_sql_exec(sql, steps, 1, diag);
  if (st == LM_OK) st = lm_sql_exec(sql, schema_sql, 1, diag);
  if (st == LM_OK) st = lm_sql_exec(sql, copy, 1, diag);
  if (st != LM_OK) lm_sql_exec(sql, "ROLLBACK", 0, NULL); /* no lock first: the transaction may have failed */
  return st;
}

/* One upgrade step's statements, a transaction of their own: rolled back
 * when one fails (without taking a lock first: the transaction may have
 * failed already). */
static lm_status run_upgrade(lm_sql *sql, const char *steps, lm_diag *diag) {
  lm_status st = lm_sql_exec(sql, steps, 1, diag);
  if (st != LM_OK) lm_sql_exec(sql, "ROLLBACK", 0, NULL);
  return st;
}

/* upgrade_v2: version 2 to 3. Columns already stored keep their raw
 * doubles (codec NULL); new ones are written compact. */
static lm_status upgrade_v2(lm_sql *sql, lm_diag *diag) {
  static const char *const steps =
      "BEGIN;\n"
      "ALTER TABLE column_data ADD COLUMN codec INTEGER;\n"
      "UPDATE lumen_meta SET value = '3' WHERE key = 'schema_version';\n"
      "COMMIT;\n";
  return run_upgrade(sql, steps, diag);
}

/* upgrade_v3: version 3 to 4. The workloads already stored keep the first
 * rank's system information only, and no split (read as before). */
static lm_status upgrade_v3(lm_sql *sql, lm_diag *diag) {
  static const char *const steps =
      "BEGIN;\n" RANK_TABLES "UPDATE lumen_meta SET value = '4' WHERE key = 'schema_version';\n"
      "COMMIT;\n";
  return run_upgrade(sql, steps, diag);
}

/* upgrade_v4: version 4 to 5. The fingerprints, made by the hash before
 * XXH3-128, are cleared: a store computes them again before its next
 * import (lm_store_import), rather than comparing hashes of two kinds. */
static lm_status upgrade_v4(lm_sql *sql, lm_diag *diag) {
  static const char *const steps =
      "BEGIN;\n"
      "UPDATE workload SET fingerprint = '';\n"
      "UPDATE lumen_meta SET value = '5' WHERE key = 'schema_version';\n"
      "COMMIT;\n";
  return run_upgrade(sql, steps, diag);
}

/* upgrade_v5: version 5 to 6. The columns already stored keep no
 * checksum (read unchecked); new ones get theirs. */
static lm_status upgrade_v5(lm_sql *sql, lm_diag *diag) {
  static const char *const steps =
      "BEGIN;\n"
      "ALTER TABLE column_data ADD COLUMN checksum INTEGER;\n"
      "UPDATE lumen_meta SET value = '" SCHEMA_VERSION "' WHERE key = 'schema_version';\n"
      "COMMIT;\n";
  static const char *const mark =
      "UPDATE lumen_meta SET value = '" SCHEMA_VERSION "' WHERE key = 'schema_version'";
  /* A table that has the column already (its version number set back by
   * hand) only gets the number. */
  lm_stmt *probe = NULL;
  lm_diag ignored;
  int has = lm_sql_prepare(sql, "SELECT checksum FROM column_data LIMIT 0", &probe, &ignored) == LM_OK &&
            lm_stmt_step(probe) >= 0; /* (PostgreSQL checks the statement when it runs) */
  lm_stmt_free(probe);
  if (has) return lm_sql_exec(sql, mark, 0, diag);
  return run_upgrade(sql, steps, diag);
}

lm_status lm_db_schema(lm_sql *sql, int create, lm_diag *diag) {
  lm_status st;
  if (create) {
    if ((st = lm_sql_exec(sql, schema_sql, 1, diag)) != LM_OK) return st;
    if ((st = lm_sql_exec(sql,
                          "INSERT INTO lumen_meta(key, value) VALUES ('schema_version', '" SCHEMA_VERSION
                          "'), ('format', 'lumen') ON CONFLICT DO NOTHING",
                          0, diag)) != LM_OK)
      return st;
  }
  /* Refuse databases of another format or a newer schema. */
  lm_stmt *q = NULL;
  char version[64] = "", format[64] = "";
  int has_format = 0;
  /* Out of memory is an error, not a foreign database; a database
   * without lumen_meta is one. */
  lm_diag meta_diag;
  lm_status st_meta = lm_sql_prepare(sql, "SELECT key, value FROM lumen_meta WHERE key IN ('schema_version', "
                                          "'format')", &q, &meta_diag);
  if (st_meta == LM_ENOMEM) return lm_diag_set(diag, LM_ENOMEM, lm_sql_where(sql), 0, 0, NULL, "out of memory");
  st_meta = LM_OK;
  int rc_meta = 0;
  while (q && (rc_meta = lm_stmt_step(q)) == 1) {
    const char *key = lm_stmt_text(q, 0), *value = lm_stmt_text(q, 1);
    if (!key || !value) continue;
    if (strcmp(key, "format") == 0) {
      has_format = 1;
      snprintf(format, sizeof format, "%s", value);
    } else {
      snprintf(version, sizeof version, "%s", value);
    }
  }
  if (rc_meta < 0) st_meta = lm_stmt_error(q, "read lumen_meta", diag);
  lm_stmt_free(q);
  char cut[200];
  if (!version[0] && lm_sql_truncated(sql, cut, sizeof cut))
    return lm_diag_set(diag, LM_EDATA, lm_sql_where(sql), 0, 0, NULL, "%s", cut);
  if (st_meta != LM_OK) return st_meta;
  if (!version[0])
    return lm_diag_set(diag, LM_EDATA, lm_sql_where(sql), 0, 0, NULL, "not a lumen database");
  if (has_format && strcmp(format, "lumen") != 0)
    return lm_diag_set(diag, LM_EDATA, lm_sql_where(sql), 0, 0, "lumen_meta.format",
                       "format '%.40s': not a lumen database (lumen writes 'lumen')", format);
  /* Older versions are upgraded where they may be written; read-only,
   * they are read as they are (version 1's analysis tables are version
   * 2's without ranks; both store raw columns, without a codec; up to
   * version 3, one system information per workload and no split; up to
   * version 4, fingerprints of the earlier hash, which no import reads; up
   * to version 5, columns without checksums). */
  if (strcmp(version, "1") == 0 || strcmp(version, "2") == 0 || strcmp(version, "3") == 0 ||
      strcmp(version, "4") == 0 || strcmp(version, "5") == 0) {
    lm_diag ignored_upgrade;
    int v = version[0] - '0';
    if ((v >= 2 || upgrade_v1(sql, &ignored_upgrade) == LM_OK) &&
        (v >= 3 || upgrade_v2(sql, &ignored_upgrade) == LM_OK) &&
        (v >= 4 || upgrade_v3(sql, &ignored_upgrade) == LM_OK) &&
        (v >= 5 || upgrade_v4(sql, &ignored_upgrade) == LM_OK))
      upgrade_v5(sql, &ignored_upgrade);
    return LM_OK;
  }
  if (strcmp(version, SCHEMA_VERSION) != 0)
    return lm_diag_set(diag, LM_EDATA, lm_sql_where(sql), 0, 0, NULL,
                       "schema version %s; this lumen reads version " SCHEMA_VERSION, version);
  return LM_OK;
}

lm_status lm_db_open(const char *path, int mode, sqlite3 **out, lm_diag *diag) {
  *out = NULL;
  lm_sql *sql = NULL;
  lm_status st = lm_sql_open(path, mode, &sql, diag);
  if (st == LM_OK) st = lm_db_schema(sql, mode == LM_DB_CREATE, diag);
  if (st == LM_OK && mode == LM_DB_WRITE) st = lm_sql_exec(sql, POWER_TABLES, 1, diag);
  if (st != LM_OK) {
    lm_sql_close(sql);
    return st;
  }
  *out = lm_sql_detach(sql);
  return LM_OK;
}

void lm_db_close(sqlite3 *db) { sqlite3_close(db); }

/* ---------------------------------------------------------------- write */

static void bind_value(lm_stmt *s, int i, double v) {
  if (isnan(v)) lm_stmt_bind_null(s, i);
  else if (v == floor(v) && fabs(v) < 9e15) lm_stmt_bind_int64(s, i, (int64_t)v);
  else lm_stmt_bind_double(s, i, v);
}

static double col_value(const lm_table *t, long c, size_t r) {
  return c < 0 ? LM_NAN : t->cols[c].values[r];
}

int lm_db_dispatch_column(const char *name) {
  for (size_t k = 0; k < LM_ARRAY_LEN(fixed_cols); k++)
    if (strcmp(fixed_cols[k].csv, name) == 0) return 1;
  /* The measured clocks are dispatch columns too (sclk_mhz, mclk_mhz). */
  return strcmp(name, "Measured_SCLK_MHz") == 0 || strcmp(name, "Measured_MCLK_MHz") == 0;
}

/* Rows (workload, id, name) of a name table (kernel, region): ids are the
 * positions in names. */
static lm_status put_names(lm_sql *sql, int64_t wid, const char *table, const char *const *names, size_t n,
                           lm_diag *diag) {
  char text[128];
  snprintf(text, sizeof text, "INSERT INTO %s(workload_id, id, name) VALUES (?,?,?)", table);
  lm_stmt *s = NULL;
  lm_status st = lm_sql_prepare(sql, text, &s, diag);
  if (st != LM_OK) return st;
  for (size_t i = 0; i < n; i++) {
    lm_stmt_bind_int64(s, 1, wid);
    lm_stmt_bind_int64(s, 2, (int64_t)i);
    lm_stmt_bind_text(s, 3, names[i]);
    if (lm_stmt_step(s) < 0) return stmt_fail(s, sql, table, diag);
    lm_stmt_reset(s);
  }
  lm_stmt_free(s);
  return LM_OK;
}

lm_status lm_db_create_workload(lm_sql *sql, const char *name, const char *team, const char *source,
                                const char *origin, const char *arch, const char *gpu_model,
                                size_t n_dispatches, int complete, int64_t *id_out, lm_diag *diag) {
  lm_stmt *s = NULL;
  char created[64];
  time_t now = time(NULL);
  strftime(created, sizeof created, "%Y-%m-%dT%H:%M:%SZ", gmtime(&now));
  lm_status st = lm_sql_prepare(sql,
                                "INSERT INTO workload(name, team, source, origin, created, arch, "
                                "gpu_model, n_dispatches, complete) VALUES (?,?,?,?,?,?,?,?,?) "
                                "RETURNING id",
                                &s, diag);
  if (st != LM_OK) return st;
  lm_stmt_bind_text(s, 1, name);
  lm_stmt_bind_text(s, 2, team ? team : "");
  lm_stmt_bind_text(s, 3, source);
  lm_stmt_bind_text(s, 4, origin ? origin : "");
  lm_stmt_bind_text(s, 5, created);
  lm_stmt_bind_text(s, 6, arch ? arch : "");
  lm_stmt_bind_text(s, 7, gpu_model ? gpu_model : "");
  lm_stmt_bind_int64(s, 8, (int64_t)n_dispatches);
  lm_stmt_bind_int64(s, 9, complete);
  int rc = lm_stmt_step(s);
  if (rc < 0) {
    if (lm_stmt_unique_violation(s)) {
      lm_stmt_free(s);
      return lm_diag_set(diag, LM_EINVAL, lm_sql_where(sql), 0, 0, NULL,
                         "a workload named '%s' is already in the database", name);
    }
    return stmt_fail(s, sql, "write the workload", diag);
  }
  if (rc == 1 && id_out) *id_out = lm_stmt_int64(s, 0);
  lm_stmt_free(s);
  return LM_OK;
}

lm_status lm_db_write_tables(lm_sql *sql, int64_t wid, const lm_workload *w, lm_diag *diag) {
  return lm_db_write_tables_with(sql, wid, w, NULL, diag);
}

lm_status lm_db_write_tables_with(lm_sql *sql, int64_t wid, const lm_workload *w, const lm_db_write_opts *o,
                                  lm_diag *diag) {
  lm_stmt *s = NULL;
  lm_status st;
  /* The dispatch columns are written row by row: loaded first. */
  long dispatch_cols[LM_ARRAY_LEN(fixed_cols) + 2];
  size_t n_dispatch_cols = 0;
  for (size_t k = 0; k < LM_ARRAY_LEN(fixed_cols) + 2; k++) {
    long c = lm_table_find(w->pmc, k < LM_ARRAY_LEN(fixed_cols) ? fixed_cols[k].csv
                                   : k == LM_ARRAY_LEN(fixed_cols) ? "Measured_SCLK_MHz" : "Measured_MCLK_MHz");
    if (c >= 0 && lm_table_deferred(w->pmc, (size_t)c)) dispatch_cols[n_dispatch_cols++] = c;
  }
  if (n_dispatch_cols && (st = lm_table_load(w->pmc, dispatch_cols, n_dispatch_cols, diag)) != LM_OK) return st;
  /* System information. */
  if ((st = lm_sql_prepare(sql, "INSERT INTO sysinfo(workload_id, position, key, value) VALUES (?,?,?,?)",
                           &s, diag)) != LM_OK)
    return st;
  for (size_t i = 0; i < w->sysinfo.n_fields; i++) {
    lm_stmt_bind_int64(s, 1, wid);
    lm_stmt_bind_int64(s, 2, (int64_t)i);
    lm_stmt_bind_text(s, 3, w->sysinfo.names[i]);
    lm_stmt_bind_text(s, 4, w->sysinfo.texts[i] ? w->sysinfo.texts[i] : "");
    if (lm_stmt_step(s) < 0) return stmt_fail(s, sql, "write system info", diag);
    lm_stmt_reset(s);
  }
  lm_stmt_free(s);

  /* Kernels: the pmc table's interned names keep their ids. */
  const lm_table *pmc = w->pmc;
  long kcol = lm_table_find(pmc, "Kernel_Name");
  if ((st = put_names(sql, wid, "kernel", pmc->strings, pmc->n_strings, diag)) != LM_OK) return st;

  /* Dispatches. */
  long fixed_idx[LM_ARRAY_LEN(fixed_cols)];
  for (size_t k = 0; k < LM_ARRAY_LEN(fixed_cols); k++) fixed_idx[k] = lm_table_find(pmc, fixed_cols[k].csv);
  long sclk = lm_table_find(pmc, "Measured_SCLK_MHz"), mclk = lm_table_find(pmc, "Measured_MCLK_MHz");
  if ((st = lm_sql_prepare(sql,
                           "INSERT INTO dispatch(workload_id, row, kernel_id, dispatch_id, gpu_id, "
                           "grid_size, workgroup_size, lds_per_workgroup, scratch_per_workitem, "
                           "arch_vgpr, accum_vgpr, sgpr, wave_size, start_ns, end_ns, sclk_mhz, "
                           "mclk_mhz, rank, host) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                           &s, diag)) != LM_OK)
    return st;
  for (size_t r = 0; r < pmc->n_rows; r++) {
    lm_stmt_bind_int64(s, 1, wid);
    lm_stmt_bind_int64(s, 2, (int64_t)r);
    int32_t kid = kcol >= 0 && pmc->cols[kcol].text_ids ? pmc->cols[kcol].text_ids[r] : -1;
    if (kid >= 0) lm_stmt_bind_int64(s, 3, kid);
    else lm_stmt_bind_null(s, 3);
    for (size_t k = 0; k < LM_ARRAY_LEN(fixed_cols); k++) {
      double v = col_value(pmc, fixed_idx[k], r);
      /* timestamps are stored as REAL */
      if (k >= 10) lm_stmt_bind_double(s, 4 + (int)k, v);
      else bind_value(s, 4 + (int)k, v);
    }
    lm_stmt_bind_double(s, 16, col_value(pmc, sclk, r));
    lm_stmt_bind_double(s, 17, col_value(pmc, mclk, r));
    if (w->row_rank && w->row_rank[r] >= 0) lm_stmt_bind_int64(s, 18, w->row_rank[r]);
    else lm_stmt_bind_null(s, 18);
    if (w->row_host && w->row_host[r]) lm_stmt_bind_text(s, 19, w->row_host[r]);
    else lm_stmt_bind_null(s, 19);
    if (lm_stmt_step(s) < 0) return stmt_fail(s, sql, "write dispatches", diag);
    lm_stmt_reset(s);
  }
  lm_stmt_free(s);

  /* Regions. */
  if (w->n_regions && w->row_regions) {
    if ((st = put_names(sql, wid, "region", w->region_names, w->n_regions, diag)) != LM_OK) return st;
    if ((st = lm_sql_prepare(sql, "INSERT INTO dispatch_region(workload_id, row, region_id) VALUES (?,?,?)",
                             &s, diag)) != LM_OK)
      return st;
    for (size_t r = 0; r < pmc->n_rows; r++)
      for (size_t i = 0; i < w->n_regions && i < 64; i++) {
        if (!(w->row_regions[r] & (1ULL << i))) continue;
        lm_stmt_bind_int64(s, 1, wid);
        lm_stmt_bind_int64(s, 2, (int64_t)r);
        lm_stmt_bind_int64(s, 3, (int64_t)i);
        if (lm_stmt_step(s) < 0) return stmt_fail(s, sql, "write regions", diag);
        lm_stmt_reset(s);
      }
    lm_stmt_free(s);
  }

  /* Counter columns: pmc_perf, the SQ_* accumulate tables, roofline. */
  st = lm_db_put_columns_with(sql, wid, pmc, "pmc_perf", 1, o, diag);
  for (size_t i = 0; st == LM_OK && i < w->n_levels; i++)
    st = lm_db_put_columns_with(sql, wid, w->levels[i], w->levels[i]->name, 0, o, diag);
  if (st == LM_OK && w->roofline) st = lm_db_put_columns_with(sql, wid, w->roofline, "roofline", 0, o, diag);
  if (st == LM_OK) st = lm_db_write_provenance(sql, wid, w, diag);
  if (st == LM_OK) st = lm_db_write_ranks(sql, wid, w, diag);
  return st;
}

lm_status lm_db_write_workload(lm_sql *sql, const lm_workload *w, const char *name, const char *team,
                               const char *origin, int64_t *id_out, lm_diag *diag) {
  lm_status st = lm_sql_begin(sql, diag);
  if (st != LM_OK) return st;
  const char *model = lm_sysinfo_text(&w->sysinfo, "gpu_model");
  int64_t wid = 0;
  st = lm_db_create_workload(sql, name, team, "omniperf", origin, w->arch, model, w->pmc->n_rows, 1, &wid,
                             diag);
  if (st == LM_OK) st = lm_db_write_tables(sql, wid, w, diag);
  if (st == LM_OK) st = lm_sql_commit(sql, diag);
  if (st != LM_OK) {
    lm_sql_rollback(sql);
    return st;
  }
  if (id_out) *id_out = wid;
  return LM_OK;
}

/* ----------------------------------------------------------------- read */

static lm_status read_sysinfo_rows(lm_sql *sql, int64_t wid, lm_workload *w, lm_diag *diag) {
  const char *path = lm_sql_where(sql);
  lm_stmt *s = NULL;
  lm_status st = lm_sql_prepare(sql, "SELECT key, value FROM sysinfo WHERE workload_id = ? ORDER BY position",
                                &s, diag);
  if (st != LM_OK) return st;
  /* Rows into a growing list first: both engines step forward only. */
  size_t n = 0, cap = 0;
  char **keys = NULL, **values = NULL;
  lm_stmt_bind_int64(s, 1, wid);
  int rc;
  while ((rc = lm_stmt_step(s)) == 1) {
    if (n == cap) {
      cap = cap ? cap * 2 : 64;
      char **gk = lm_realloc(keys, cap * sizeof *gk);
      if (gk) keys = gk;
      char **gv = lm_realloc(values, cap * sizeof *gv);
      if (gv) values = gv;
      if (!gk || !gv) {
        st = lm_diag_set(diag, LM_ENOMEM, path, 0, 0, NULL, "out of memory");
        break;
      }
    }
    /* A NULL in the database is an empty text; a copy that fails is an
     * error, never an empty field. */
    const char *key = lm_stmt_text(s, 0), *value = lm_stmt_text(s, 1);
    keys[n] = lm_strdup(key ? key : "");
    values[n] = lm_strdup(value ? value : "");
    n++;
    if (!keys[n - 1] || !values[n - 1]) {
      st = lm_diag_set(diag, LM_ENOMEM, path, 0, 0, NULL, "out of memory");
      break;
    }
  }
  if (st == LM_OK && rc < 0) st = lm_stmt_error(s, "read system info", diag);
  lm_stmt_free(s);
  if (st == LM_OK)
    st = lm_db_sysinfo_build(path, keys, values, n, w->arena, &w->sysinfo_table, &w->sysinfo, diag);
  for (size_t k = 0; k < n; k++) {
    lm_free(keys[k]);
    lm_free(values[k]);
  }
  lm_free(keys);
  lm_free(values);
  w->arch = lm_sysinfo_text(&w->sysinfo, "gpu_arch");
  if (st == LM_OK && (!w->arch || !w->arch[0]))
    st = lm_diag_set(diag, LM_EDATA, path, 0, 0, "gpu_arch", "missing from the workload's system info");
  return st;
}

/* The count that query `text` (parameters wid and arg, when not NULL)
 * gives, in *n. A query that fails is an error, never a count of 0. */
static lm_status count_of(lm_sql *sql, const char *text, int64_t wid, const char *arg, int64_t *n,
                          lm_diag *diag) {
  lm_stmt *s = NULL;
  *n = 0;
  lm_status st = lm_sql_prepare(sql, text, &s, diag);
  if (st != LM_OK) return st;
  lm_stmt_bind_int64(s, 1, wid);
  if (arg) lm_stmt_bind_text(s, 2, arg);
  int rc = lm_stmt_step(s);
  if (rc == 1) *n = lm_stmt_int64(s, 0);
  else st = rc == 0 ? lm_diag_set(diag, LM_EIO, lm_sql_where(sql), 0, 0, NULL, "a count without its row")
                    : lm_stmt_error(s, "count rows", diag);
  lm_stmt_free(s);
  return st;
}

/* The columns that want accepts of one source, in a new table. With
 * `dispatch` set, the pmc_perf table: the fixed dispatch columns and
 * Kernel_Name first. `workload` names the workload in messages. */
static lm_status read_source(lm_sql *sql, int64_t wid, const char *workload, const char *source, size_t n_rows,
                             int dispatch, lm_db_want_fn want, void *ctx, const lm_workload_options *opts,
                             lm_table **out, lm_diag *diag) {
  const char *path = lm_sql_where(sql);
  lm_stmt *s = NULL;
  int rc;
  *out = NULL;
  size_t n_cols = 0;
  lm_status st = lm_db_count_columns(sql, wid, source, want, ctx, &n_cols, diag);
  if (st != LM_OK) return st;
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
    if ((st = lm_sql_prepare(sql, "SELECT id, name FROM kernel WHERE workload_id = ? ORDER BY id", &s, diag)) != LM_OK)
      goto fail;
    lm_stmt_bind_int64(s, 1, wid);
    int32_t *remap = NULL;
    size_t n_remap = 0;
    while ((rc = lm_stmt_step(s)) == 1) {
      int64_t id = lm_stmt_int64(s, 0);
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
      remap[id] = lm_table_intern(t, lm_stmt_text(s, 1));
    }
    if (rc < 0) {
      lm_free(remap);
      goto stmt_fail_;
    }
    lm_stmt_free(s);
    s = NULL;
    /* Clocks measured during each dispatch (lumen profiles with telemetry). */
    lm_column *sclk = lm_table_add_column(t, "Measured_SCLK_MHz", 0);
    lm_column *mclk = lm_table_add_column(t, "Measured_MCLK_MHz", 0);
    if (!sclk || !mclk) {
      lm_free(remap);
      goto nomem;
    }
    static const char *select_sql =
        "SELECT row, kernel_id, dispatch_id, gpu_id, grid_size, workgroup_size, "
        "lds_per_workgroup, scratch_per_workitem, arch_vgpr, accum_vgpr, sgpr, wave_size, "
        "start_ns, end_ns, sclk_mhz, mclk_mhz FROM dispatch WHERE workload_id = ? ORDER BY row";
    if ((st = lm_sql_prepare(sql, select_sql, &s, diag)) != LM_OK) {
      lm_free(remap);
      goto fail;
    }
    lm_stmt_bind_int64(s, 1, wid);
    size_t r = 0;
    while (r < n_rows && (rc = lm_stmt_step(s)) == 1) {
      int64_t kid = lm_stmt_is_null(s, 1) ? -1 : lm_stmt_int64(s, 1);
      kernel->text_ids[r] = kid >= 0 && (size_t)kid < n_remap ? remap[kid] : lm_table_intern(t, "");
      for (size_t k = 0; k < LM_ARRAY_LEN(fixed_cols); k++) cols[k]->values[r] = lm_stmt_double(s, 2 + (int)k);
      sclk->values[r] = lm_stmt_double(s, 14);
      mclk->values[r] = lm_stmt_double(s, 15);
      r++;
    }
    lm_free(remap);
    if (rc < 0) goto stmt_fail_;
    lm_stmt_free(s);
    s = NULL;
    if (r != n_rows) {
      st = lm_diag_set(diag, LM_EDATA, path, 0, 0, NULL, "the workload lists %zu dispatches but holds %zu",
                       n_rows, r);
      goto fail;
    }
  }
  /* The dispatch columns' counts here; the counter columns count theirs
   * as they are decoded. */
  lm_table_finish(t);
  uint64_t t_cols = lm_phase_begin();
  st = lm_db_load_columns_placed(sql, wid, workload, source, want, ctx, opts ? opts->place : NULL,
                                 opts ? opts->place_ctx : NULL, t, diag);
  lm_phase_end("load: counter columns", t_cols);
  if (st != LM_OK) goto fail;
  /* Columns that held text when imported keep saying so. */
  for (size_t c = 0; c < t->n_cols; c++)
    if (t->cols[c].first_text) t->cols[c].n_text = 1;
  *out = t;
  return LM_OK;
nomem:
  st = lm_diag_set(diag, LM_ENOMEM, path, 0, 0, NULL, "out of memory");
  goto fail;
stmt_fail_:
  st = lm_stmt_error(s, "read", diag);
fail:
  lm_stmt_free(s);
  lm_table_free(t);
  return st;
}

/* Region names and, per dispatch row, the regions it ran in. */
static lm_status read_regions(lm_sql *sql, int64_t wid, lm_workload *w, lm_diag *diag) {
  const char *path = lm_sql_where(sql);
  lm_stmt *s = NULL;
  lm_status st = lm_sql_prepare(sql, "SELECT id, name FROM region WHERE workload_id = ? ORDER BY id", &s, diag);
  if (st != LM_OK) return st;
  lm_stmt_bind_int64(s, 1, wid);
  size_t cap = 0;
  while (lm_stmt_step(s) == 1) {
    if (w->n_regions == cap) {
      cap = cap ? cap * 2 : 8;
      const char **grown = lm_arena_alloc(w->arena, cap * sizeof *grown);
      if (!grown) break;
      if (w->n_regions) memcpy(grown, w->region_names, w->n_regions * sizeof *grown);
      w->region_names = grown;
    }
    w->region_names[w->n_regions++] = lm_arena_strdup(w->arena, lm_stmt_text(s, 1));
  }
  lm_stmt_free(s);
  if (!w->n_regions) return LM_OK;
  w->row_regions = lm_arena_alloc(w->arena, (w->pmc->n_rows + 1) * sizeof *w->row_regions);
  if (!w->row_regions) return lm_diag_set(diag, LM_ENOMEM, path, 0, 0, NULL, "out of memory");
  memset(w->row_regions, 0, (w->pmc->n_rows + 1) * sizeof *w->row_regions);
  if ((st = lm_sql_prepare(sql, "SELECT row, region_id FROM dispatch_region WHERE workload_id = ?", &s, diag)) != LM_OK)
    return st;
  lm_stmt_bind_int64(s, 1, wid);
  while (lm_stmt_step(s) == 1) {
    int64_t row = lm_stmt_int64(s, 0), id = lm_stmt_int64(s, 1);
    if (row >= 0 && (size_t)row < w->pmc->n_rows && id >= 0 && id < 64) w->row_regions[row] |= 1ULL << id;
  }
  lm_stmt_free(s);
  return LM_OK;
}

lm_status lm_db_find_workload(lm_sql *sql, const char *name, int64_t *wid, size_t *n_rows, int *complete,
                              lm_diag *diag) {
  lm_stmt *s = NULL;
  lm_status st = lm_sql_prepare(sql,
                                name ? "SELECT id, n_dispatches, complete FROM workload WHERE name = ?"
                                     : "SELECT id, n_dispatches, complete FROM workload ORDER BY id",
                                &s, diag);
  if (st != LM_OK) return st;
  if (name) lm_stmt_bind_text(s, 1, name);
  int rc = lm_stmt_step(s);
  if (rc < 0) return stmt_fail(s, sql, "read", diag);
  if (rc == 0) {
    lm_stmt_free(s);
    return lm_diag_set(diag, LM_ENOTFOUND, lm_sql_where(sql), 0, 0, NULL,
                       name ? "no workload named '%s' in the database" : "the database holds no workload%s",
                       name ? name : "");
  }
  *wid = lm_stmt_int64(s, 0);
  int64_t n = lm_stmt_int64(s, 1);
  if (complete) *complete = (int)lm_stmt_int64(s, 2);
  lm_stmt_free(s);
  if (n < 0 || n > LM_DB_MAX_DISPATCHES)
    return lm_diag_set(diag, LM_EDATA, lm_sql_where(sql), 0, 0, "workload.n_dispatches",
                       "%lld is not a dispatch count (corrupt database?)", (long long)n);
  if (n_rows) *n_rows = (size_t)n;
  return LM_OK;
}

/* The MPI rank and host of each dispatch row (w->row_rank, w->row_host),
 * when any row has a rank. A version 1 database has neither column. */
static lm_status read_ranks(lm_sql *sql, int64_t wid, lm_workload *w, lm_diag *diag) {
  const char *path = lm_sql_where(sql);
  int64_t version_1 = 0;
  lm_status st = count_of(sql, "SELECT COUNT(*) FROM lumen_meta WHERE key = 'schema_version' AND value = '1' AND ? >= 0",
                          0, NULL, &version_1, diag);
  if (st != LM_OK || version_1 > 0) return st;
  lm_stmt *s = NULL;
  st = lm_sql_prepare(sql, "SELECT row, rank, host FROM dispatch WHERE workload_id = ? AND rank IS NOT NULL",
                                &s, diag);
  if (st != LM_OK) return st;
  lm_stmt_bind_int64(s, 1, wid);
  size_t n_rows = w->pmc->n_rows;
  lm_map *hosts = lm_map_new();
  const char **host_names = NULL;
  size_t n_hosts = 0, cap_hosts = 0;
  int rc;
  if (!hosts) goto nomem;
  while ((rc = lm_stmt_step(s)) == 1) {
    int64_t row = lm_stmt_int64(s, 0), rank = lm_stmt_int64(s, 1);
    if (row < 0 || (size_t)row >= n_rows || rank < 0 || rank > INT32_MAX) continue;
    if (!w->row_rank) {
      w->row_rank = lm_arena_alloc(w->arena, (n_rows + 1) * sizeof *w->row_rank);
      w->row_host = lm_arena_alloc(w->arena, (n_rows + 1) * sizeof *w->row_host);
      if (!w->row_rank || !w->row_host) goto nomem;
      for (size_t r = 0; r < n_rows; r++) w->row_rank[r] = -1;
      memset(w->row_host, 0, (n_rows + 1) * sizeof *w->row_host);
    }
    w->row_rank[row] = (int32_t)rank;
    const char *host = lm_stmt_is_null(s, 2) ? NULL : lm_stmt_text(s, 2);
    if (!host) continue;
    int64_t id;
    if (!lm_map_get(hosts, host, &id)) {
      if (n_hosts == cap_hosts) {
        cap_hosts = cap_hosts ? 2 * cap_hosts : 16;
        const char **grown = lm_arena_alloc(w->arena, cap_hosts * sizeof *grown);
        if (!grown) goto nomem;
        if (n_hosts) memcpy(grown, host_names, n_hosts * sizeof *grown);
        host_names = grown;
      }
      host_names[n_hosts] = lm_arena_strdup(w->arena, host);
      if (!host_names[n_hosts] || lm_map_put(hosts, host, (int64_t)n_hosts) != LM_OK) goto nomem;
      id = (int64_t)n_hosts++;
    }
    w->row_host[row] = host_names[id];
  }
  if (rc < 0) st = lm_stmt_error(s, "read ranks", diag);
  lm_stmt_free(s);
  lm_map_free(hosts);
  return st;
nomem:
  lm_stmt_free(s);
  lm_map_free(hosts);
  return lm_diag_set(diag, LM_ENOMEM, path, 0, 0, NULL, "out of memory");
}

/* Replays of the simulated device are marked as such: w->simulated. */
static void read_origin(lm_sql *sql, int64_t wid, lm_workload *w) {
  lm_stmt *o = NULL;
  lm_diag ignored;
  if (lm_sql_prepare(sql, "SELECT origin FROM workload WHERE id = ?", &o, &ignored) != LM_OK) return;
  lm_stmt_bind_int64(o, 1, wid);
  if (lm_stmt_step(o) == 1) {
    const char *origin = lm_stmt_text(o, 0);
    size_t n = strlen(LM_ORIGIN_SIMULATED);
    if (origin && strncmp(origin, LM_ORIGIN_SIMULATED, n) == 0) w->simulated = lm_arena_strdup(w->arena, origin + n);
  }
  lm_stmt_free(o);
}

/* The workload's name, for messages. */
static void workload_name(lm_sql *sql, int64_t wid, char *out, size_t cap) {
  lm_stmt *q = NULL;
  lm_diag ignored;
  out[0] = '\0';
  if (lm_sql_prepare(sql, "SELECT name FROM workload WHERE id = ?", &q, &ignored) != LM_OK) return;
  lm_stmt_bind_int64(q, 1, wid);
  if (lm_stmt_step(q) == 1) snprintf(out, cap, "%s", lm_stmt_text(q, 0));
  lm_stmt_free(q);
}

lm_status lm_db_read_workload(lm_sql *sql, const char *name, lm_workload **out, lm_diag *diag) {
  return lm_db_read_workload_columns(sql, name, NULL, NULL, out, diag);
}

/* The columns of want, or those opts->choose picks once the architecture
 * is read, decoded where opts->place says. */
static lm_status read_workload(lm_sql *sql, const char *name, lm_db_want_fn want, void *ctx,
                               const lm_workload_options *opts, lm_workload **out, lm_diag *diag);

lm_status lm_db_read_workload_columns(lm_sql *sql, const char *name, lm_db_want_fn want, void *ctx,
                                      lm_workload **out, lm_diag *diag) {
  return read_workload(sql, name, want, ctx, NULL, out, diag);
}

lm_status lm_db_read_workload_for(lm_sql *sql, const char *name, const lm_workload_options *opts,
                                  lm_workload **out, lm_diag *diag) {
  return read_workload(sql, name, NULL, NULL, opts, out, diag);
}

static lm_status read_workload(lm_sql *sql, const char *name, lm_db_want_fn want, void *ctx,
                               const lm_workload_options *opts, lm_workload **out, lm_diag *diag) {
  const char *path = lm_sql_where(sql);
  lm_stmt *s = NULL;
  lm_workload *w = NULL;
  *out = NULL;
  int64_t wid = 0;
  size_t n_rows = 0;
  int complete = 0;
  lm_status st = lm_db_find_workload(sql, name, &wid, &n_rows, &complete, diag);
  if (st != LM_OK) return st;
  if (!complete)
    return lm_diag_set(diag, LM_EDATA, path, 0, 0, NULL,
                       "the profile that writes this workload has not finished (continue it "
                       "with `lumen profile --resume -w DIR`)");
  {
    /* The count sizes every column: check it before anything is allocated. */
    int64_t held = 0;
    st = count_of(sql, "SELECT COUNT(*) FROM dispatch WHERE workload_id = ?", wid, NULL, &held, diag);
    if (st != LM_OK) return st;
    if (held != (int64_t)n_rows)
      return lm_diag_set(diag, LM_EDATA, path, 0, 0, "workload.n_dispatches",
                         "the workload lists %zu dispatches but holds %lld (corrupt database?)", n_rows,
                         (long long)held);
  }
  lm_arena *arena = lm_arena_new(1 << 12);
  if (!arena) return lm_diag_set(diag, LM_ENOMEM, path, 0, 0, NULL, "out of memory");
  w = lm_arena_alloc(arena, sizeof *w);
  if (!w) {
    lm_arena_free(arena);
    return lm_diag_set(diag, LM_ENOMEM, path, 0, 0, NULL, "out of memory");
  }
  memset(w, 0, sizeof *w);
  w->arena = arena;
  w->path = lm_arena_strdup(arena, path);
  read_origin(sql, wid, w);
  char wname[256];
  workload_name(sql, wid, wname, sizeof wname);
  if ((st = read_sysinfo_rows(sql, wid, w, diag)) != LM_OK) goto fail;
  if (opts && opts->choose) want = opts->choose(opts->choose_ctx, w->arch, lm_sysinfo_compat(&w->sysinfo), &ctx);
  if ((st = read_source(sql, wid, wname, "pmc_perf", n_rows, 1, want, ctx, opts, &w->pmc, diag)) != LM_OK) goto fail;
  if ((st = read_regions(sql, wid, w, diag)) != LM_OK) goto fail;
  if ((st = read_ranks(sql, wid, w, diag)) != LM_OK) goto fail;
  /* Other sources: the SQ_* accumulate tables and roofline. */
  if ((st = lm_sql_prepare(sql,
                           "SELECT source, MAX(n_rows) FROM column_data WHERE workload_id = ? AND "
                           "source != 'pmc_perf' AND source NOT LIKE 'roofline@%' GROUP BY source "
                           "ORDER BY source",
                           &s, diag)) != LM_OK)
    goto fail;
  lm_stmt_bind_int64(s, 1, wid);
  char *sources[64];
  size_t rows[64], n_sources = 0;
  while (n_sources < 64 && lm_stmt_step(s) == 1) {
    sources[n_sources] = lm_arena_strdup(arena, lm_stmt_text(s, 0));
    rows[n_sources++] = (size_t)lm_stmt_int64(s, 1);
  }
  lm_stmt_free(s);
  s = NULL;
  w->levels = lm_arena_alloc(arena, (n_sources + 1) * sizeof *w->levels);
  if (!w->levels) goto nomem;
  for (size_t i = 0; i < n_sources; i++) {
    if (!sources[i]) goto nomem;
    lm_table *t = NULL;
    if ((st = read_source(sql, wid, wname, sources[i], rows[i], 0, want, ctx, opts, &t, diag)) != LM_OK) goto fail;
    if (strcmp(sources[i], "roofline") == 0) w->roofline = t;
    else w->levels[w->n_levels++] = t;
  }
  if ((st = lm_db_read_provenance(sql, wid, w, diag)) != LM_OK) goto fail;
  if ((st = lm_db_read_ranks(sql, wid, wname, w, 1, diag)) != LM_OK) goto fail;
  *out = w;
  return LM_OK;
nomem:
  st = lm_diag_set(diag, LM_ENOMEM, path, 0, 0, NULL, "out of memory");
fail:
  lm_stmt_free(s);
  lm_workload_free(w);
  return st;
}

lm_status lm_db_read_info(lm_sql *sql, const char *name, lm_workload **out, lm_diag *diag) {
  const char *path = lm_sql_where(sql);
  *out = NULL;
  int64_t wid = 0;
  size_t n_rows = 0;
  int complete = 0;
  lm_status st = lm_db_find_workload(sql, name, &wid, &n_rows, &complete, diag);
  if (st != LM_OK) return st;
  lm_arena *arena = lm_arena_new(1 << 12);
  lm_workload *w = arena ? lm_arena_alloc(arena, sizeof *w) : NULL;
  if (!w) {
    lm_arena_free(arena);
    return lm_diag_set(diag, LM_ENOMEM, path, 0, 0, NULL, "out of memory");
  }
  memset(w, 0, sizeof *w);
  w->arena = arena;
  w->path = lm_arena_strdup(arena, path);
  read_origin(sql, wid, w);
  st = read_sysinfo_rows(sql, wid, w, diag);
  if (st == LM_OK) {
    w->pmc = lm_table_create(path, "pmc_perf", n_rows, 1);
    if (!w->pmc) st = lm_diag_set(diag, LM_ENOMEM, path, 0, 0, NULL, "out of memory");
    else lm_table_finish(w->pmc);
  }
  if (st == LM_OK) st = read_regions(sql, wid, w, diag);
  if (st == LM_OK) st = read_ranks(sql, wid, w, diag);
  if (st == LM_OK) st = lm_db_read_ranks(sql, wid, "", w, 0, diag);
  if (st != LM_OK) {
    lm_workload_free(w);
    return st;
  }
  *out = w;
  return LM_OK;
}
