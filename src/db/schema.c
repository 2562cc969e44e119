/*
 * schema.c - the schema of lumen's workload database, its version, the
 * upgrades from older versions, and opening a database file.
 *
 * One schema serves a lumen workload folder (lumen.db, holding one
 * workload, as `lumen profile` writes it) and the team store (many
 * workloads), on SQLite and PostgreSQL alike (sql.h). Counter values are
 * stored column by column (columns.c); the layout is documented in
 * docs/workload-format.md.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "db/db.h"
#include "db/db_private.h"
#include "sql/sql.h"

/* 2: profile records are keyed by process (pid), profile_process lists
 * the processes of each run, and dispatch rows carry the MPI rank and host
 * of their process. 3: column_data.codec says how each column's data is
 * encoded (NULL or 0: raw doubles, as versions 1 and 2 wrote them; 1:
 * compact). 4: the merged rank.R parts of an MPI profile keep every
 * part's system information and roofline, and a combined --split ranks
 * profile the rank of each set (db/ranks.c). 5: workload.fingerprint is
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
  if (st_meta == LM_ENOMEM) return lm_oom(diag, lm_sql_where(sql));
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
    return lm_fail(diag, LM_EDATA, lm_sql_where(sql), "%s", cut);
  if (st_meta != LM_OK) return st_meta;
  if (!version[0]) return lm_fail(diag, LM_EDATA, lm_sql_where(sql), "not a lumen database");
  if (has_format && strcmp(format, "lumen") != 0)
    return lm_fail_at(diag, LM_EDATA, lm_sql_where(sql), 0, "lumen_meta.format",
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
    return lm_fail(diag, LM_EDATA, lm_sql_where(sql), "schema version %s; this lumen reads version " SCHEMA_VERSION,
                   version);
  return LM_OK;
}

lm_status lm_db_open(const char *path, int mode, lm_sql **out, lm_diag *diag) {
  *out = NULL;
  lm_sql *sql = NULL;
  lm_status st = lm_sql_open(path, mode, &sql, diag);
  if (st == LM_OK) st = lm_db_schema(sql, mode == LM_DB_CREATE, diag);
  if (st == LM_OK && mode == LM_DB_WRITE) st = lm_sql_exec(sql, POWER_TABLES, 1, diag);
  if (st != LM_OK) {
    lm_sql_close(sql);
    return st;
  }
  lm_sql_name_by_file(sql);
  *out = sql;
  return LM_OK;
}

void lm_db_close(lm_sql *db) { lm_sql_close(db); }

/* The fixed dispatch columns, as pmc_perf.csv names them and as the
 * dispatch table's columns. */
const lm_db_fixed_col lm_db_fixed_cols[LM_DB_N_FIXED] = {
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

lm_status lm_db_stmt_fail(lm_stmt *s, lm_sql *sql, const char *what, lm_diag *diag) {
  lm_status st = s ? lm_stmt_error(s, what, diag) : lm_fail(diag, LM_EIO, lm_sql_where(sql), "%s failed", what);
  lm_stmt_free(s);
  return st;
}
