/*
 * store.c - the workload store over sql.h (SQLite or PostgreSQL): opens,
 * lists, imports, removes, exports and loads.
 *
 * Everything a workload holds hangs off its `workload` row: an import is
 * one transaction, a removal one cascading DELETE. Invariant: two imports
 * of the same contents leave one copy (the (team, fingerprint) look-up is
 * inside the write transaction), and a fingerprint match whose row facts
 * differ is a collision, never a dropped import. The fingerprint is in
 * fingerprint.c, kept analyses in kept.c, shared parts in
 * store_private.h; docs/workload-format.md ("The store").
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "store/store_private.h"
#include "sql/sql.h"
#include "columns/columns.h"
#include "db/db.h"
#include "load/load.h"

/* The tables of a workload other than `workload` itself, parents first. */
static const char *const workload_tables[] = {
    "sysinfo",        "kernel",     "dispatch",      "column_data",    "region",
    "dispatch_region", "log",       "profile_option", "profile_set",   "profile_run",
    "profile_record", "profile_value", "profile_region", "clock_sample", "profile_telemetry",
    "execution",      "execution_value", "dispatch_clock", "profile_process", "power_sample",
    "rank_sysinfo",   "set_rank"};

const char *lm_store_default_path(char *out, size_t cap) {
  const char *xdg = getenv("XDG_DATA_HOME"), *home = getenv("HOME");
  if (xdg && *xdg) snprintf(out, cap, "%s/lumen/lumen.db", xdg);
  else snprintf(out, cap, "%s/.local/share/lumen/lumen.db", home && *home ? home : ".");
  return out;
}

static int is_pg(const char *url) {
  return strncmp(url, "postgresql://", 13) == 0 || strncmp(url, "postgres://", 11) == 0;
}

/* The folder a SQLite store file goes in. */
static lm_status make_parent(const char *path, lm_diag *diag) {
  char dir[PATH_MAX];
  snprintf(dir, sizeof dir, "%s", path);
  char *slash = strrchr(dir, '/');
  if (!slash || slash == dir) return LM_OK;
  *slash = '\0';
  return lm_make_dirs(dir, "the store's folder", "choose another --db", diag);
}

lm_status lm_store_open(const char *url, int writable, lm_store **out, lm_diag *diag) {
  *out = NULL;
  lm_status st;
  if (!url || !*url) return lm_fail_at(diag, LM_EINVAL, NULL, 0, "--db", "an empty store URL");
  if (writable && !is_pg(url) && (st = make_parent(url, diag)) != LM_OK) return st;
  lm_store *s = lm_calloc(1, sizeof *s);
  if (!s) return lm_oom(diag, url);
  s->writable = writable;
  st = lm_sql_open(url, writable ? LM_DB_CREATE : LM_DB_READ, &s->sql, diag);
  if (st == LM_OK) st = lm_db_schema(s->sql, writable, diag);
  if (st != LM_OK) {
    if (st == LM_ENOTFOUND && !writable)
      lm_fail(diag, LM_ENOTFOUND, url, "no store here (`lumen db import` creates one; --db names another)");
    lm_store_close(s);
    return st;
  }
  *out = s;
  return LM_OK;
}

lm_status lm_store_open_existing(const char *url, lm_store **out, lm_diag *diag) {
  *out = NULL;
  if (!url || !*url) return lm_fail_at(diag, LM_EINVAL, NULL, 0, "--db", "an empty store URL");
  lm_store *s = lm_calloc(1, sizeof *s);
  if (!s) return lm_oom(diag, url);
  lm_diag ignored;
  s->writable = 1;
  lm_status st = lm_sql_open(url, LM_DB_WRITE, &s->sql, &ignored);
  if (st == LM_OK && !is_pg(url) && access(url, W_OK) != 0) {
    lm_sql_close(s->sql);
    s->sql = NULL;
    st = LM_EIO;
  }
  if (st != LM_OK) {
    s->writable = 0;
    st = lm_sql_open(url, LM_DB_READ, &s->sql, diag);
  }
  if (st == LM_OK) st = lm_db_schema(s->sql, 0, diag);
  if (st != LM_OK) {
    if (st == LM_ENOTFOUND)
      lm_fail(diag, LM_ENOTFOUND, url, "no store here (`lumen db import` creates one; --db names another)");
    lm_store_close(s);
    return st;
  }
  *out = s;
  return LM_OK;
}

void lm_store_close(lm_store *s) {
  if (!s) return;
  lm_sql_close(s->sql);
  lm_free(s);
}

const char *lm_store_where(const lm_store *s) { return lm_sql_where(s->sql); }
lm_sql *lm_store_sql(lm_store *s) { return s->sql; }

/* ----------------------------------------------------------------- list */

/* The entry of each workload, with its parts and hosts counted in
 * rank_sysinfo through its primary key (workload_id, part, key): the cost
 * grows with the parts' system information, not with the dispatches. A
 * store without the table (read-only, before version 4) counts none. */
static const char *entry_cols =
    "SELECT id, name, team, source, origin, created, arch, gpu_model, n_dispatches, complete, fingerprint";
static const char *rank_cols =
    ", (SELECT COUNT(DISTINCT r.part) FROM rank_sysinfo r WHERE r.workload_id = workload.id), "
    "(SELECT COUNT(DISTINCT r.value) FROM rank_sysinfo r WHERE r.workload_id = workload.id "
    "AND r.key = 'hostname' AND r.value <> '')";

static int has_table(lm_sql *sql, const char *table);

/* Whether the workload's system information has the layout of
 * rocprofiler-compute 3.3 (lm_sysinfo_compat), through the sysinfo key. */
static const char *layout_col =
    ", (SELECT COUNT(*) FROM sysinfo y WHERE y.workload_id = workload.id AND y.key = 'num_hbm_channels')";

static void entry_sql(lm_store *s, const char *tail, char *out, size_t cap) {
  snprintf(out, cap, "%s%s%s FROM workload %s", entry_cols,
           has_table(s->sql, "rank_sysinfo") ? rank_cols : ", 0, 0", layout_col, tail);
}

static void fill_entry(lm_stmt *q, lm_store_entry *e) {
  memset(e, 0, sizeof *e);
  e->id = lm_stmt_int64(q, 0);
  snprintf(e->name, sizeof e->name, "%s", lm_stmt_text(q, 1));
  snprintf(e->team, sizeof e->team, "%s", lm_stmt_text(q, 2));
  snprintf(e->source, sizeof e->source, "%s", lm_stmt_text(q, 3));
  snprintf(e->origin, sizeof e->origin, "%s", lm_stmt_text(q, 4));
  snprintf(e->created, sizeof e->created, "%s", lm_stmt_text(q, 5));
  snprintf(e->arch, sizeof e->arch, "%s", lm_stmt_text(q, 6));
  snprintf(e->gpu_model, sizeof e->gpu_model, "%s", lm_stmt_text(q, 7));
  e->n_dispatches = (size_t)lm_stmt_int64(q, 8);
  e->complete = (int)lm_stmt_int64(q, 9);
  snprintf(e->fingerprint, sizeof e->fingerprint, "%s", lm_stmt_text(q, 10));
  int64_t ranks = lm_stmt_int64(q, 11), hosts = lm_stmt_int64(q, 12);
  e->n_ranks = ranks > 0 ? (size_t)ranks : 0;
  e->n_hosts = hosts > 0 ? (size_t)hosts : 0;
  if (lm_stmt_int64(q, 13) > 0) snprintf(e->compat, sizeof e->compat, "3.3");
}

lm_status lm_store_list(lm_store *s, lm_store_entry **out, size_t *n, lm_diag *diag) {
  *out = NULL;
  *n = 0;
  char text[768];
  entry_sql(s, "ORDER BY name", text, sizeof text);
  lm_stmt *q = NULL;
  lm_status st = lm_sql_prepare(s->sql, text, &q, diag);
  if (st != LM_OK) return st;
  size_t cap = 0;
  int rc;
  while ((rc = lm_stmt_step(q)) == 1) {
    if (*n == cap) {
      cap = cap ? cap * 2 : 16;
      lm_store_entry *grown = lm_realloc(*out, cap * sizeof *grown);
      if (!grown) {
        lm_stmt_free(q);
        return lm_oom(diag, NULL);
      }
      *out = grown;
    }
    fill_entry(q, &(*out)[(*n)++]);
  }
  if (rc < 0) st = lm_stmt_error(q, "list workloads", diag);
  lm_stmt_free(q);
  return st;
}

lm_status lm_store_get(lm_store *s, const char *name, lm_store_entry *out, lm_diag *diag) {
  char text[768];
  entry_sql(s, "WHERE name = ?", text, sizeof text);
  lm_stmt *q = NULL;
  lm_status st = lm_sql_prepare(s->sql, text, &q, diag);
  if (st != LM_OK) return st;
  lm_stmt_bind_text(q, 1, name);
  int rc = lm_stmt_step(q);
  if (rc == 1) fill_entry(q, out);
  else if (rc == 0)
    st = lm_fail(diag, LM_ENOTFOUND, lm_store_where(s), "no workload named '%s' in the store", name);
  else st = lm_stmt_error(q, "read", diag);
  lm_stmt_free(q);
  return st;
}

/* --------------------------------------------------------------- import */

static lm_status check_name(const char *name, lm_diag *diag) {
  size_t n = strlen(name);
  if (n == 0 || n > 200) return lm_fail_at(diag, LM_EINVAL, NULL, 0, "-n", "a workload name has 1 to 200 characters");
  for (const char *p = name; *p; p++)
    if ((unsigned char)*p < 0x20 || *p == 0x7f)
      return lm_fail_at(diag, LM_EINVAL, NULL, 0, "-n", "a workload name has no control characters");
  return LM_OK;
}

/* A name from the folder: its last component, or parent_last when the
 * last one is the GPU (the reference tool's NAME/GPU layout). */
static void name_from_dir(const char *dir, const lm_workload *w, char *out, size_t cap) {
  char path[PATH_MAX];
  snprintf(path, sizeof path, "%s", dir);
  size_t n = strlen(path);
  while (n > 1 && path[n - 1] == '/') path[--n] = '\0';
  char *base = strrchr(path, '/');
  const char *last = base ? base + 1 : path;
  const char *model = lm_sysinfo_text(&w->sysinfo, "gpu_model");
  int gpu_folder = (model && strcmp(model, last) == 0) || strncmp(last, "MI", 2) == 0;
  if (gpu_folder && base && base > path) {
    *base = '\0';
    char *pb = strrchr(path, '/');
    snprintf(out, cap, "%s_%s", pb ? pb + 1 : path, last);
  } else {
    snprintf(out, cap, "%s", last);
  }
}

/* Tables that a workload written by an earlier lumen may lack (the clock
 * samplers, the executions of each row, the clock sources, the power
 * samples, the ranks' system information and sets). */
static int optional_table(const char *table) {
  static const char *const optional[] = {"profile_telemetry", "execution", "execution_value", "dispatch_clock",
                                         "profile_process", "power_sample", "rank_sysinfo", "set_rank"};
  for (size_t i = 0; i < LM_ARRAY_LEN(optional); i++)
    if (strcmp(optional[i], table) == 0) return 1;
  return 0;
}

static int has_table(lm_sql *sql, const char *table) {
  char text[128];
  snprintf(text, sizeof text, "SELECT 1 FROM %s LIMIT 0", table);
  lm_stmt *q = NULL;
  lm_diag ignored;
  if (lm_sql_prepare(sql, text, &q, &ignored) != LM_OK) return 0;
  lm_stmt_free(q);
  return 1;
}

/* A raw column (codec NULL or 0, as databases before version 3 hold
 * them) of column_data row q, bound compact into ins instead: data at
 * parameter data_col + 1, the codec at codec_param. *bound is 0 when the
 * row is not raw (copied as it is). An encoding that fails (out of
 * memory) is an error, not a raw copy. */
static lm_status bind_compact(lm_stmt *q, lm_stmt *ins, int data_col, int rows_col, int codec_col,
                              int codec_param, lm_colcodec *codec, int *bound, int64_t *sum, lm_diag *diag) {
  *bound = 0;
  if (data_col < 0 || rows_col < 0 || (codec_col >= 0 && !lm_stmt_is_null(q, codec_col) &&
                                       lm_stmt_int64(q, codec_col) != LM_CODEC_RAW))
    return LM_OK;
  size_t len = 0;
  const void *raw = lm_stmt_blob(q, data_col, &len);
  int64_t rows = lm_stmt_int64(q, rows_col);
  if (rows < 0 || (uint64_t)rows != len / sizeof(double) || len % sizeof(double)) return LM_OK;
  double *values = lm_malloc(len ? len : 1);
  if (!values) return lm_oom(diag, NULL);
  if (len) memcpy(values, raw, len);
  const void *blob = NULL;
  size_t n = 0;
  lm_status st = lm_colcodec_encode(codec, values, (size_t)rows, &blob, &n, diag);
  if (st == LM_OK) {
    lm_stmt_bind_blob(ins, data_col + 1, blob, n);
    lm_stmt_bind_int64(ins, codec_param, LM_CODEC_COMPACT);
    *sum = lm_db_column_checksum(blob, n);
    *bound = 1;
  }
  lm_free(values);
  return st;
}

/* Copy the rows of `table` of workload from_wid into to_wid. Raw counter
 * columns (from a folder written before the codec) are written compact,
 * one at a time. Each counter column is written with the checksum of its
 * data (schema version 6); one that comes with a checksum is checked
 * first, so that damage is not carried into the store. */
static lm_status copy_table(lm_sql *from, int64_t from_wid, lm_sql *to, int64_t to_wid, const char *table,
                            lm_diag *diag) {
  char text[256];
  snprintf(text, sizeof text, "SELECT * FROM %s WHERE workload_id = ?", table);
  lm_stmt *q = NULL, *ins = NULL;
  lm_colcodec *codec = NULL;
  lm_status st = lm_sql_prepare(from, text, &q, diag);
  if (st != LM_OK) return st;
  lm_stmt_bind_int64(q, 1, from_wid);
  int rc, n_cols = 0, wid_col = -1, data_col = -1, rows_col = -1, codec_col = -1, codec_param = 0;
  int sum_col = -1, sum_param = 0, name_col = -1;
  int columns = strcmp(table, "column_data") == 0;
  if (columns && !(codec = lm_colcodec_new())) {
    lm_stmt_free(q);
    return lm_oom(diag, NULL);
  }
  while ((rc = lm_stmt_step(q)) == 1) {
    if (!ins) {
      n_cols = lm_stmt_columns(q);
      lm_buf b = {0};
      lm_buf_printf(&b, "INSERT INTO %s(", table);
      for (int c = 0; c < n_cols; c++) {
        const char *name = lm_stmt_column_name(q, c);
        if (strcmp(name, "workload_id") == 0) wid_col = c;
        if (columns && strcmp(name, "data") == 0) data_col = c;
        if (columns && strcmp(name, "n_rows") == 0) rows_col = c;
        if (columns && strcmp(name, "codec") == 0) codec_col = c;
        if (columns && strcmp(name, "checksum") == 0) sum_col = c;
        if (columns && strcmp(name, "name") == 0) name_col = c;
        lm_buf_printf(&b, "%s%s", c ? ", " : "", name);
      }
      /* A source without the codec column: its columns are all raw. */
      codec_param = codec_col >= 0 ? codec_col + 1 : n_cols + 1;
      if (columns && codec_col < 0) lm_buf_puts(&b, ", codec");
      sum_param = sum_col >= 0 ? sum_col + 1 : n_cols + 1 + (codec_col < 0);
      if (columns && sum_col < 0) lm_buf_puts(&b, ", checksum");
      lm_buf_puts(&b, ") VALUES (");
      for (int c = 0; c < n_cols; c++) lm_buf_puts(&b, c ? ", ?" : "?");
      if (columns && codec_col < 0) lm_buf_puts(&b, ", ?");
      if (columns && sum_col < 0) lm_buf_puts(&b, ", ?");
      lm_buf_puts(&b, ")");
      st = b.failed ? lm_oom(diag, NULL) : lm_sql_prepare(to, lm_buf_cstr(&b), &ins, diag);
      lm_buf_fini(&b);
      if (st != LM_OK) break;
    }
    for (int c = 0; c < n_cols; c++) {
      if (c == wid_col) {
        lm_stmt_bind_int64(ins, c + 1, to_wid);
        continue;
      }
      size_t len;
      const void *p;
      switch (lm_stmt_kind(q, c)) {
      case 'i': lm_stmt_bind_int64(ins, c + 1, lm_stmt_int64(q, c)); break;
      case 'r': lm_stmt_bind_double(ins, c + 1, lm_stmt_double(q, c)); break;
      case 't': lm_stmt_bind_text(ins, c + 1, lm_stmt_text(q, c)); break;
      case 'b':
        p = lm_stmt_blob(q, c, &len);
        lm_stmt_bind_blob(ins, c + 1, p, len);
        break;
      default: lm_stmt_bind_null(ins, c + 1); break;
      }
    }
    int bound = 0;
    int64_t sum = 0;
    if (columns &&
        (st = bind_compact(q, ins, data_col, rows_col, codec_col, codec_param, codec, &bound, &sum, diag)) != LM_OK)
      break;
    if (columns && !bound && codec_col < 0) lm_stmt_bind_null(ins, codec_param);
    if (columns && !bound && data_col >= 0) {
      size_t len = 0;
      const void *data = lm_stmt_blob(q, data_col, &len);
      sum = lm_db_column_checksum(data, len);
      if (sum_col >= 0 && !lm_stmt_is_null(q, sum_col) && lm_stmt_int64(q, sum_col) != sum) {
        st = lm_fail_at(diag, LM_EDATA, lm_sql_where(from), 0, "column_data.checksum",
                        "column '%.100s': its data does not match its checksum (%zu bytes; a damaged workload "
                        "database: profile or import it again from its source)",
                        name_col >= 0 ? lm_stmt_text(q, name_col) : "?", len);
        break;
      }
    }
    if (columns) lm_stmt_bind_int64(ins, sum_param, sum);
    if (lm_stmt_step(ins) < 0) {
      st = lm_stmt_error(ins, table, diag);
      break;
    }
    lm_stmt_reset(ins);
  }
  if (st == LM_OK && rc < 0) st = lm_stmt_error(q, table, diag);
  lm_colcodec_free(codec);
  lm_stmt_free(ins);
  lm_stmt_free(q);
  return st;
}

static lm_status set_fingerprint(lm_sql *sql, int64_t wid, const char *fp, lm_diag *diag) {
  lm_stmt *q = NULL;
  lm_status st = lm_sql_prepare(sql, "UPDATE workload SET fingerprint = ? WHERE id = ?", &q, diag);
  if (st != LM_OK) return st;
  lm_stmt_bind_text(q, 1, fp);
  lm_stmt_bind_int64(q, 2, wid);
  if (lm_stmt_step(q) < 0)
    st = lm_stmt_unique_violation(q) ? lm_fail(diag, LM_EDATA, NULL, "duplicate")
                                     : lm_stmt_error(q, "write the fingerprint", diag);
  lm_stmt_free(q);
  return st;
}

/* Copy workload from_wid of `from` as a new workload `name` of `to`. */
static lm_status copy_workload(lm_sql *from, int64_t from_wid, lm_sql *to, const char *name, const char *team,
                               const char *origin, const char *fingerprint, int64_t *new_wid, lm_diag *diag) {
  lm_stmt *q = NULL;
  lm_status st = lm_sql_prepare(from, "SELECT source, arch, gpu_model, n_dispatches, complete, origin "
                                      "FROM workload WHERE id = ?", &q, diag);
  if (st != LM_OK) return st;
  lm_stmt_bind_int64(q, 1, from_wid);
  if (lm_stmt_step(q) != 1) {
    st = lm_stmt_error(q, "read the workload", diag);
    lm_stmt_free(q);
    return st;
  }
  char source[32], arch[32], model[64], old_origin[1024];
  snprintf(source, sizeof source, "%s", lm_stmt_text(q, 0));
  snprintf(arch, sizeof arch, "%s", lm_stmt_text(q, 1));
  snprintf(model, sizeof model, "%s", lm_stmt_text(q, 2));
  size_t n = (size_t)lm_stmt_int64(q, 3);
  int complete = (int)lm_stmt_int64(q, 4);
  snprintf(old_origin, sizeof old_origin, "%s", lm_stmt_text(q, 5));
  lm_stmt_free(q);
  /* A replay of the simulated device stays marked as one in the store. */
  int simulated = strncmp(old_origin, LM_ORIGIN_SIMULATED, strlen(LM_ORIGIN_SIMULATED)) == 0;
  st = lm_db_create_workload(to, name, team, source, origin && !simulated ? origin : old_origin, arch, model, n,
                             complete,
                             new_wid, diag);
  if (st == LM_OK && fingerprint) st = set_fingerprint(to, *new_wid, fingerprint, diag);
  for (size_t i = 0; st == LM_OK && i < LM_ARRAY_LEN(workload_tables); i++)
    if (!optional_table(workload_tables[i]) || has_table(from, workload_tables[i]))
      st = copy_table(from, from_wid, to, *new_wid, workload_tables[i], diag);
  return st;
}

int lm_store_same_workload(const lm_store_facts *stored, const lm_store_facts *incoming) {
  const char *arch_a = stored->arch ? stored->arch : "", *arch_b = incoming->arch ? incoming->arch : "";
  const char *model_a = stored->gpu_model ? stored->gpu_model : "";
  const char *model_b = incoming->gpu_model ? incoming->gpu_model : "";
  return stored->n_dispatches == incoming->n_dispatches && strcmp(arch_a, arch_b) == 0 &&
         strcmp(model_a, model_b) == 0;
}

/* The workload of this team with fingerprint fp that lm_store_same_workload
 * takes for one with the facts `facts`: 1 with its name in name. 0 when
 * there is none, with collided naming a workload of the same fingerprint
 * and other facts ("" when none has the fingerprint). */
static int find_fingerprint(lm_sql *sql, const char *fp, const char *team, const lm_store_facts *facts,
                            char *name, size_t cap, char *collided, size_t collided_cap) {
  lm_stmt *q = NULL;
  lm_diag ignored;
  int found = 0;
  collided[0] = '\0';
  if (lm_sql_prepare(sql, "SELECT name, n_dispatches, arch, gpu_model FROM workload "
                          "WHERE fingerprint = ? AND team = ? ORDER BY id",
                     &q, &ignored) != LM_OK)
    return 0;
  lm_stmt_bind_text(q, 1, fp);
  lm_stmt_bind_text(q, 2, team);
  while (!found && lm_stmt_step(q) == 1) {
    int64_t n = lm_stmt_int64(q, 1);
    lm_store_facts stored = {n > 0 ? (size_t)n : 0, lm_stmt_text(q, 2), lm_stmt_text(q, 3)};
    if (lm_store_same_workload(&stored, facts)) {
      snprintf(name, cap, "%s", lm_stmt_text(q, 0));
      found = 1;
    } else if (!collided[0]) {
      snprintf(collided, collided_cap, "%s", lm_stmt_text(q, 0));
    }
  }
  lm_stmt_free(q);
  return found;
}

/* A fingerprint match that lm_store_same_workload takes for another
 * workload: said once, and the import goes on beside it. */
static void note_collision(lm_import_result *res, const char *dir, const char *fp, const char *other) {
  if (!other[0] || res->collided[0]) return;
  snprintf(res->collided, sizeof res->collided, "%s", other);
  lm_log(LM_LOG_WARN,
         "%s: its fingerprint %s is that of '%s' in the store, whose dispatch count, architecture or GPU "
         "differ: imported beside it as '%s'",
         dir, fp, other, res->name);
}

/* The fingerprints of the store's finished workloads that have none: those
 * of a store upgraded from schema version 4 or earlier, whose fingerprints
 * were made by another hash and cleared (db/db.c), computed from the
 * stored columns, once. A workload that cannot be read keeps none (it is
 * said, and the import goes on: at worst the same contents are stored
 * twice). Errors: the store cannot be read or written, out of memory. */
static lm_status refresh_fingerprints(lm_store *s, lm_diag *diag) {
  lm_stmt *q = NULL;
  char (*names)[256] = NULL;
  size_t n = 0, cap = 0;
  lm_status st = lm_sql_prepare(s->sql, "SELECT name FROM workload WHERE fingerprint = '' AND complete = 1 "
                                        "ORDER BY id", &q, diag);
  if (st != LM_OK) return st;
  int rc;
  while ((rc = lm_stmt_step(q)) == 1) {
    if (n == cap) {
      cap = cap ? 2 * cap : 8;
      char(*grown)[256] = realloc(names, cap * sizeof *names);
      if (!grown) {
        st = lm_oom(diag, NULL);
        goto cleanup;
      }
      names = grown;
    }
    snprintf(names[n++], sizeof *names, "%s", lm_stmt_text(q, 0));
  }
  if (rc < 0) st = lm_stmt_error(q, "list the workloads without a fingerprint", diag);
  lm_stmt_free(q);
  q = NULL;
  if (st != LM_OK || !n) goto cleanup;
  lm_log(LM_LOG_INFO, "%s: computing the fingerprints of %zu workloads (XXH3-128 since schema version 5)",
         lm_store_where(s), n);
  for (size_t i = 0; i < n && st == LM_OK; i++) {
    lm_workload *w = NULL;
    lm_diag why;
    memset(&why, 0, sizeof why);
    char fp[33];
    lm_status rs = lm_db_read_workload(s->sql, names[i], NULL, &w, &why);
    if (rs == LM_OK) rs = lm_workload_fingerprint(w, fp, &why);
    lm_workload_free(w);
    if (rs == LM_ENOMEM) {
      st = lm_oom(diag, NULL);
    } else if (rs != LM_OK) {
      lm_log(LM_LOG_WARN, "%s: '%s' keeps no fingerprint: %s", lm_store_where(s), names[i], why.message);
    } else if ((st = lm_sql_prepare(s->sql, "UPDATE workload SET fingerprint = ? WHERE name = ? AND fingerprint = ''",
                                    &q, diag)) == LM_OK) {
      lm_stmt_bind_text(q, 1, fp);
      lm_stmt_bind_text(q, 2, names[i]);
      if (lm_stmt_step(q) < 0) st = lm_stmt_error(q, "write the fingerprint", diag);
      lm_stmt_free(q);
      q = NULL;
    }
  }
cleanup:
  lm_stmt_free(q);
  free(names);
  return st;
}

static int name_taken(lm_sql *sql, const char *name) {
  int64_t wid;
  lm_diag ignored;
  return lm_db_find_workload(sql, name, &wid, NULL, NULL, &ignored) == LM_OK;
}

/* The bytes of counter values an import holds at once: LM_DB_GROUP_BYTES,
 * or LUMEN_IMPORT_GROUP_BYTES (at least one column; for tests and
 * measurements). */
static size_t group_bytes_or(size_t otherwise) {
  const char *text = getenv("LUMEN_IMPORT_GROUP_BYTES");
  char *end = NULL;
  unsigned long long v = text && *text ? strtoull(text, &end, 10) : 0;
  return end && !*end && v ? (size_t)v : otherwise;
}

static size_t group_bytes(void) { return group_bytes_or(LM_DB_GROUP_BYTES); }

/* The packs of a folder's columns may take four times a group's bytes
 * (a group of doubles then takes little: PACKED_GROUP_BYTES, which keep
 * in cache while they are hashed and encoded). */
#define PACKED_GROUP_BYTES ((size_t)8 << 20)
static size_t pack_bytes(void) { return 4 * group_bytes(); }

/* One import under way (lm_store_import): the workload read from the
 * folder and a lumen folder's database are its to free. */
typedef struct import {
  lm_store *s;
  const char *dir;
  const char *team;
  lm_import_result *res;
  lm_diag *diag;
  lm_workload *w;              /* the folder's workload, counter columns deferred */
  lm_sql *folder;              /* a lumen folder's database (read), or NULL */
  int lumen_folder;            /* dir holds a lumen database: its row is copied */
  int64_t folder_wid;          /* that database's workload row */
  char fp[33];                 /* the contents' fingerprint, "" until known */
  char chosen[256];            /* the name in the store */
  char origin[PATH_MAX];       /* where the workload came from */
  lm_store_facts facts;        /* the facts of the row the import writes */
  char folder_arch[32], folder_model[64]; /* a lumen folder's facts */
  lm_db_write_opts write_opts;
  char existing[256];          /* the stored workload with these contents */
  char collided[256];          /* one whose fingerprint matched but not its facts */
} import;

/* A folder's CSV columns are read once, into packs, rather than once per
 * group of the fingerprint's order and again for the default view (the
 * rank parts of an MPI profile are packed already). *all_packed is
 * cleared when some columns would not fit. Errors: a column that cannot
 * be read. */
static lm_status pack_columns(import *im, int *all_packed) {
  lm_workload *w = im->w;
  lm_diag *diag = im->diag;
  lm_status st = LM_OK;
  uint64_t t_pack = lm_phase_begin();
  size_t left = pack_bytes();
  for (size_t i = 0; i <= w->n_levels && st == LM_OK; i++) {
    lm_table *t = i ? w->levels[i - 1] : w->pmc;
    int packed = 0;
    st = lm_table_pack(t, left, &packed, diag);
    if (st == LM_ENOMEM) {
      /* (the packs' address space, say, where memory is not overcommitted) */
      lm_log(LM_LOG_DEBUG, "%s: %s: read in groups instead", t->path, diag ? diag->message : "out of memory");
      st = LM_OK;
    }
    if (st != LM_OK) break;
    size_t used = lm_table_packed_bytes(t);
    left = used < left ? left - used : 0;
    for (size_t c = 0; c < t->n_cols && !packed; c++)
      if (lm_table_deferred(t, c)) {
        lm_log(LM_LOG_DEBUG, "%s: its packed columns would exceed %zu MiB: read in groups", t->path,
               pack_bytes() >> 20);
        *all_packed = 0;
        break;
      }
  }
  lm_phase_end("import: pack the columns", t_pack);
  return st;
}

/* The name in the store (im->chosen): `name` when given, else a lumen
 * folder's own, the name the rank parts of an MPI profile were profiled
 * under, or one made from the folder's path. A lumen folder's database
 * is opened (im->folder) and its row's facts read. Errors: the database
 * cannot be opened or read. */
static lm_status choose_name(import *im, const char *name, const char *db_path) {
  lm_workload *w = im->w;
  if (im->lumen_folder) {
    lm_status st = lm_sql_open(db_path, LM_DB_READ, &im->folder, im->diag);
    if (st != LM_OK) return st;
    lm_store_entry e;
    lm_stmt *q = NULL;
    if ((st = lm_sql_prepare(im->folder, "SELECT id, name, n_dispatches, arch, gpu_model FROM workload ORDER BY id",
                             &q, im->diag)) != LM_OK)
      return st;
    if (lm_stmt_step(q) == 1) {
      im->folder_wid = lm_stmt_int64(q, 0);
      snprintf(e.name, sizeof e.name, "%s", lm_stmt_text(q, 1));
      int64_t n = lm_stmt_int64(q, 2);
      snprintf(im->folder_arch, sizeof im->folder_arch, "%s", lm_stmt_text(q, 3));
      snprintf(im->folder_model, sizeof im->folder_model, "%s", lm_stmt_text(q, 4));
      im->facts = (lm_store_facts){n > 0 ? (size_t)n : 0, im->folder_arch, im->folder_model};
    } else {
      e.name[0] = '\0';
    }
    lm_stmt_free(q);
    snprintf(im->chosen, sizeof im->chosen, "%s", name ? name : e.name);
  } else if (name) {
    snprintf(im->chosen, sizeof im->chosen, "%s", name);
  } else if (w->n_parts && lm_sysinfo_text(&w->sysinfo, "workload_name") &&
             lm_sysinfo_text(&w->sysinfo, "workload_name")[0]) {
    /* The rank.R parts of an MPI profile: the name they were profiled under. */
    snprintf(im->chosen, sizeof im->chosen, "%s", lm_sysinfo_text(&w->sysinfo, "workload_name"));
  } else {
    name_from_dir(im->dir, w, im->chosen, sizeof im->chosen);
  }
  return LM_OK;
}

/* The contents are in the store already (im->existing): the transaction
 * is rolled back and the result names that workload. */
static lm_status found_stored(import *im) {
  lm_sql_rollback(im->s->sql);
  snprintf(im->res->name, sizeof im->res->name, "%s", im->existing);
  im->res->existed = 1;
  return LM_OK;
}

/* Write a folder that is not a lumen folder as workload *wid, inside the
 * transaction; the first attempt learns the fingerprint while it writes,
 * and *found is set (found_stored done) when those contents turn out to be
 * stored already. Errors: those of the writes. */
static lm_status write_folder(import *im, int64_t *wid, int *found) {
  lm_store *s = im->s;
  lm_workload *w = im->w;
  const char *model = lm_sysinfo_text(&w->sysinfo, "gpu_model");
  lm_status st = lm_db_create_workload(s->sql, im->chosen, im->team,
                                       w->format    ? w->format
                                       : w->n_parts ? "lumen"
                                                    : "omniperf",
                                       im->origin, w->arch, model, w->pmc->n_rows, 1, wid, im->diag);
  if (st == LM_OK && im->fp[0]) {
    st = set_fingerprint(s->sql, *wid, im->fp, im->diag);
    if (st == LM_OK) st = lm_db_write_tables(s->sql, *wid, w, &im->write_opts, im->diag);
  } else if (st == LM_OK) {
    st = lm_store_write_fingerprinted(s->sql, *wid, w, &im->write_opts, im->fp, im->diag);
    if (st == LM_OK && find_fingerprint(s->sql, im->fp, im->team, &im->facts, im->existing, sizeof im->existing,
                                        im->collided, sizeof im->collided)) {
      *found = 1;
      return found_stored(im);
    }
    if (st == LM_OK) st = set_fingerprint(s->sql, *wid, im->fp, im->diag);
  }
  return st;
}

/* After the commit: the collision said, the folder closed, the default
 * view kept. */
static void finish(import *im) {
  note_collision(im->res, im->dir, im->fp, im->collided);
  lm_sql_close(im->folder);
  im->folder = NULL;
  uint64_t t_view = lm_phase_begin();
  lm_store_precompute(im->s, im->chosen, im->lumen_folder ? NULL : im->w);
  lm_phase_end("import: the default view", t_view);
  lm_workload_free(im->w);
  im->w = NULL;
}

/* One transaction that stores the workload, or finds its contents stored.
 * *again: 0 when the import is over (done or failed), 1 when it lost a
 * race with an import of the same contents or name and should look again,
 * 2 when the name is taken and the fingerprint, now known, decides. */
static lm_status try_write(import *im, int *again) {
  lm_store *s = im->s;
  lm_diag *diag = im->diag;
  *again = 0;
  lm_status st = lm_sql_begin(s->sql, diag);
  if (st != LM_OK) return st;
  im->collided[0] = '\0';
  if (im->fp[0] && find_fingerprint(s->sql, im->fp, im->team, &im->facts, im->existing, sizeof im->existing,
                                    im->collided, sizeof im->collided))
    return found_stored(im);
  if (name_taken(s->sql, im->chosen)) {
    lm_sql_rollback(s->sql);
    if (!im->fp[0]) {
      /* That workload may be these contents: look again knowing them. */
      if ((st = lm_workload_fingerprint(im->w, im->fp, diag)) != LM_OK) return st;
      *again = 2;
      return LM_OK;
    }
    return lm_fail_at(diag, LM_EINVAL, lm_store_where(s), 0, "-n",
                      "a different workload named '%s' is already in the store (`lumen db rm %s` "
                      "first, or import under another -n)",
                      im->chosen, im->chosen);
  }
  int64_t wid = 0;
  int found = 0;
  uint64_t t_write = lm_phase_begin();
  if (im->lumen_folder)
    st = copy_workload(im->folder, im->folder_wid, s->sql, im->chosen, im->team, im->origin, im->fp, &wid, diag);
  else
    st = write_folder(im, &wid, &found);
  if (found) return st;
  lm_phase_end("import: write the tables", t_write);
  uint64_t t_commit = lm_phase_begin();
  if (st == LM_OK) st = lm_sql_commit(s->sql, diag);
  lm_phase_end("import: commit", t_commit);
  if (st == LM_OK) {
    finish(im);
    return LM_OK;
  }
  lm_sql_rollback(s->sql);
  /* Lost a race with an import of the same contents or name: look again. */
  *again = st == LM_EDATA || (st == LM_EINVAL && strstr(diag->message, "already in the database"));
  return st;
}

void lm_store_assume_arch(lm_store *s, const char *arch) { snprintf(s->arch, sizeof s->arch, "%s", arch ? arch : ""); }

lm_status lm_store_import(lm_store *s, const char *dir, const char *name, const char *team,
                          lm_import_result *res, lm_diag *diag) {
  memset(res, 0, sizeof *res);
  if (!s->writable) return lm_fail(diag, LM_EINVAL, lm_store_where(s), "opened read-only");
import im;
  memset(&im, 0, sizeof im);
  im.s = s;
  im.dir = dir;
  im.team = team ? team : "";
  im.res = res;
  im.diag = diag;
  /* The counter columns stay in their files until written (a lumen
   * folder's database is read whole). */
  lm_workload_options wo = {.defer = 1, .eager_columns = lm_analyze_columns, .arch = s->arch[0] ? s->arch : NULL};
  uint64_t t_read = lm_phase_begin();
  lm_status st = lm_workload_read_opts(dir, &wo, &im.w, diag);
  if (st != LM_OK) return st;
  lm_phase_end("import: read the folder", t_read);
  lm_workload *w = im.w;
  int all_packed = !w->n_parts;
  if (!w->n_parts && (st = pack_columns(&im, &all_packed)) != LM_OK) goto done;
  char db_path[PATH_MAX];
  snprintf(db_path, sizeof db_path, "%s/%s", dir, LM_WORKLOAD_DB);
  struct stat sb;
  im.lumen_folder = stat(db_path, &sb) == 0;
  if (!realpath(dir, im.origin)) snprintf(im.origin, sizeof im.origin, "%s", dir);
  if (im.lumen_folder && (st = lm_workload_fingerprint(w, im.fp, diag)) != LM_OK) goto done;
  /* The facts of the row the import writes (a lumen folder's is copied). */
  im.facts = (lm_store_facts){w->pmc->n_rows, w->arch, lm_sysinfo_text(&w->sysinfo, "gpu_model")};
  if ((st = choose_name(&im, name, db_path)) != LM_OK) goto done;
  /* A replay of the simulated device stays marked as one in the store. */
  if (!im.lumen_folder && w->simulated) {
    snprintf(im.origin, sizeof im.origin, "%s%s", LM_ORIGIN_SIMULATED, w->simulated);
  }
  if ((st = check_name(im.chosen, diag)) != LM_OK) goto done;
  snprintf(res->name, sizeof res->name, "%s", im.chosen);
  res->n_dispatches = w->pmc->n_rows;
  im.write_opts.group_bytes = all_packed ? group_bytes_or(PACKED_GROUP_BYTES) : group_bytes();
  if ((st = refresh_fingerprints(s, diag)) != LM_OK) goto done;
  for (int attempt = 0; attempt < 2; attempt++) {
    /* After a lost race the fingerprint decides before anything is written. */
    if (!im.fp[0] && attempt && (st = lm_workload_fingerprint(im.w, im.fp, diag)) != LM_OK) goto done;
    int again;
    st = try_write(&im, &again);
    if (again == 2) attempt--;
    else if (!again) break;
  }
done:
  lm_sql_close(im.folder);
  lm_workload_free(im.w);
  return st;
}

lm_status lm_store_remove(lm_store *s, const char *name, lm_diag *diag) {
  if (!s->writable) return lm_fail(diag, LM_EINVAL, lm_store_where(s), "opened read-only");
  int64_t wid;
  lm_status st = lm_sql_begin(s->sql, diag);
  if (st != LM_OK) return st;
  if ((st = lm_db_find_workload(s->sql, name, &wid, NULL, NULL, diag)) != LM_OK) {
    lm_sql_rollback(s->sql);
    lm_fail(diag, LM_ENOTFOUND, lm_store_where(s), "no workload named '%s' in the store", name);
    return LM_ENOTFOUND;
  }
  /* Children first: a store made by an older SQLite may lack cascades. */
  lm_stmt *q = NULL;
  for (size_t i = 0; st == LM_OK && i <= LM_ARRAY_LEN(workload_tables) + 1; i++) {
    char text[128];
    if (i < LM_ARRAY_LEN(workload_tables))
      snprintf(text, sizeof text, "DELETE FROM %s WHERE workload_id = ?",
               workload_tables[LM_ARRAY_LEN(workload_tables) - 1 - i]);
    else if (i == LM_ARRAY_LEN(workload_tables))
      snprintf(text, sizeof text, "DELETE FROM analysis_cache WHERE workload_id = ?");
    else
      snprintf(text, sizeof text, "DELETE FROM workload WHERE id = ?");
    if ((st = lm_sql_prepare(s->sql, text, &q, diag)) != LM_OK) break;
    lm_stmt_bind_int64(q, 1, wid);
    if (lm_stmt_step(q) < 0) st = lm_stmt_error(q, "remove", diag);
    lm_stmt_free(q);
  }
  if (st == LM_OK) st = lm_sql_commit(s->sql, diag);
  if (st != LM_OK) lm_sql_rollback(s->sql);
  return st;
}

lm_status lm_store_export(lm_store *s, const char *name, const char *dir, lm_diag *diag) {
  int64_t wid;
  lm_status st = lm_db_find_workload(s->sql, name, &wid, NULL, NULL, diag);
  if (st != LM_OK) return lm_fail(diag, LM_ENOTFOUND, lm_store_where(s), "no workload named '%s' in the store", name);
  struct stat sb;
  if (stat(dir, &sb) == 0) return lm_fail(diag, LM_EINVAL, dir, "already exists; export writes a new folder");
  if (mkdir(dir, 0777) != 0) return lm_fail(diag, LM_EIO, dir, "cannot create the folder: %s", strerror(errno));
  char db_path[PATH_MAX];
  snprintf(db_path, sizeof db_path, "%s/%s", dir, LM_WORKLOAD_DB);
  lm_sql *out = NULL;
  if ((st = lm_sql_open(db_path, LM_DB_CREATE, &out, diag)) == LM_OK && (st = lm_db_schema(out, 1, diag)) == LM_OK &&
      (st = lm_sql_begin(out, diag)) == LM_OK) {
    int64_t new_wid = 0;
    lm_store_entry e;
    if ((st = lm_store_get(s, name, &e, diag)) == LM_OK)
      st = copy_workload(s->sql, wid, out, name, e.team, NULL, e.fingerprint[0] ? e.fingerprint : NULL, &new_wid,
                         diag);
    if (st == LM_OK) st = lm_sql_commit(out, diag);
    else lm_sql_rollback(out);
  }
  lm_sql_close(out);
  if (st != LM_OK) {
    unlink(db_path);
    rmdir(dir);
  }
  return st;
}

lm_status lm_store_load(lm_store *s, const char *name, lm_workload **out, lm_diag *diag) {
  return lm_db_read_workload(s->sql, name, NULL, out, diag);
}

/* What a view from the store reads: lm_analyze_wants' columns; of those,
 * the formulas' inputs that analysis does not also read by name (what
 * lm_analyze_wants accepts without a catalog) are read only by the
 * evaluator, through lm_table_fetch, so they may stay encoded until a
 * block needs them. */
static int view_wants(void *ctx, const char *source, const char *name) {
  if (!lm_analyze_wants_indexed(ctx, source, name)) return 0;
  return lm_analyze_wants(NULL, source, name) ? 1 : LM_DB_WANT_LATER;
}

/* view_wants for every architecture: the index is the catalog's. */
static lm_db_want_fn view_choose(void *ctx, const char *arch, const char *compat, void **want_ctx) {
  (void)arch;
  (void)compat;
  *want_ctx = ctx;
  return view_wants;
}

lm_status lm_store_load_for(lm_store *s, const char *name, const lm_catalog *cat, lm_workload **out,
                            lm_diag *diag) {
  lm_wants_index *ix = lm_analyze_wants_index_new(cat);
  if (!ix) return lm_oom(diag, NULL);
  lm_workload_options opts;
  memset(&opts, 0, sizeof opts);
  opts.choose = view_choose;
  opts.choose_ctx = ix;
  lm_status st = lm_db_read_workload(s->sql, name, &opts, out, diag);
  lm_analyze_wants_index_free(ix);
  return st;
}

lm_status lm_store_load_info(lm_store *s, const char *name, lm_workload **out, lm_diag *diag) {
  return lm_db_read_info(s->sql, name, out, diag);
}
