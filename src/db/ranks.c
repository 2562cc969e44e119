/*
 * ranks.c - what the merged rank.R parts of an MPI profile keep in a lumen
 * database besides their rows: every part's system information (rank_sysinfo)
 * and roofline (column_data source "roofline@P", P > 0), and, for a --split
 * ranks profile, the rank that collected each set (set_rank). Part 0's are
 * also the workload's own (sysinfo, "roofline"), so a reader of one workload
 * reads the first rank's; a reader asked for one rank takes its part. A
 * rank's own part of a --split ranks profile lists its sets in its profile
 * options. The rows every workload has are db/db.c's
 * (docs/workload-format.md).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "csv/csv.h"
#include "sql/sql.h"
#include "db/db.h"

lm_status lm_db_sysinfo_build(const char *path, char **keys, char **values, size_t n, lm_arena *arena,
                              lm_table **table, lm_sysinfo *info, lm_diag *diag) {
  memset(info, 0, sizeof *info);
  *table = NULL;
  /* A missing key or value is the caller's failed copy, not an empty field. */
  for (size_t i = 0; i < n; i++)
    if (!keys[i] || !values[i])
      return lm_fail(diag, LM_EINVAL, path, "system information field %zu without its %s", i,
                     keys[i] ? "value" : "key");
  lm_table *t = lm_table_create(path, "sysinfo", 1, n);
  *table = t;
  if (!t) return lm_oom(diag, path);
  info->names = lm_arena_alloc(arena, (n ? n : 1) * sizeof(char *));
  info->texts = lm_arena_alloc(arena, (n ? n : 1) * sizeof(char *));
  info->values = lm_arena_alloc(arena, (n ? n : 1) * sizeof(double));
  if (!info->names || !info->texts || !info->values) return lm_oom(diag, path);
  for (size_t i = 0; i < n; i++) {
    lm_column *c = lm_table_add_column(t, keys[i], 1);
    int32_t id = lm_table_intern(t, values[i]);
    if (!c || id < 0) return lm_oom(diag, path);
    c->text_ids[0] = id;
    double v;
    int is_int;
    const char *text = t->strings[id];
    if (lm_parse_number(text, text + strlen(text), &v, &is_int) != 1) v = LM_NAN;
    c->values[0] = v;
    info->names[i] = c->name;
    info->texts[i] = text;
    info->values[i] = v;
    info->n_fields = i + 1;
  }
  return lm_table_finish(t);
}

lm_status lm_db_write_ranks(lm_sql *sql, int64_t wid, const lm_workload *w, lm_diag *diag) {
  lm_stmt *s = NULL;
  lm_status st = LM_OK;
  if (w->n_parts && w->part_rank && w->part_sysinfo) {
    if ((st = lm_sql_prepare(sql, "INSERT INTO rank_sysinfo(workload_id, part, rank, position, key, value) "
                                  "VALUES (?,?,?,?,?,?)", &s, diag)) != LM_OK)
      return st;
    for (size_t p = 0; p < w->n_parts; p++) {
      const lm_sysinfo *info = &w->part_sysinfo[p];
      for (size_t i = 0; i < info->n_fields; i++) {
        lm_stmt_bind_int64(s, 1, wid);
        lm_stmt_bind_int64(s, 2, (int64_t)p);
        lm_stmt_bind_int64(s, 3, w->part_rank[p]);
        lm_stmt_bind_int64(s, 4, (int64_t)i);
        lm_stmt_bind_text(s, 5, info->names[i]);
        lm_stmt_bind_text(s, 6, info->texts[i] ? info->texts[i] : "");
        if (lm_stmt_step(s) < 0) {
          st = lm_stmt_error(s, "write the ranks' system info", diag);
          lm_stmt_free(s);
          return st;
        }
        lm_stmt_reset(s);
      }
    }
    lm_stmt_free(s);
    s = NULL;
    for (size_t p = 1; st == LM_OK && w->part_roofline && p < w->n_parts; p++) {
      if (!w->part_roofline[p]) continue;
      char source[32];
      snprintf(source, sizeof source, "roofline@%zu", p);
      st = lm_db_put_columns(sql, wid, w->part_roofline[p], source, 0, NULL, diag);
    }
  }
  if (st != LM_OK || !w->set_rank) return st;
  if ((st = lm_sql_prepare(sql, "INSERT INTO set_rank(workload_id, set_id, rank, ranks) VALUES (?,?,?,?)", &s,
                           diag)) != LM_OK)
    return st;
  for (int g = 0; g < w->split_sets_total; g++) {
    lm_stmt_bind_int64(s, 1, wid);
    lm_stmt_bind_int64(s, 2, g);
    if (w->set_rank[g] >= 0) lm_stmt_bind_int64(s, 3, w->set_rank[g]);
    else lm_stmt_bind_null(s, 3);
    lm_stmt_bind_int64(s, 4, w->split_ranks);
    if (lm_stmt_step(s) < 0) {
      st = lm_stmt_error(s, "write the split's sets", diag);
      break;
    }
    lm_stmt_reset(s);
  }
  lm_stmt_free(s);
  return st;
}

/* The schema version of the database in *version (0 when it does not
 * say). A query that fails is an error, not version 0. */
static lm_status schema_version(lm_sql *sql, int *version, lm_diag *diag) {
  lm_stmt *q = NULL;
  *version = 0;
  lm_status st = lm_sql_prepare(sql, "SELECT value FROM lumen_meta WHERE key = 'schema_version'", &q, diag);
  if (st != LM_OK) return st;
  int rc = lm_stmt_step(q);
  if (rc == 1 && lm_stmt_text(q, 0)) *version = atoi(lm_stmt_text(q, 0));
  if (rc < 0) st = lm_stmt_error(q, "read the schema version", diag);
  lm_stmt_free(q);
  return st;
}

/* The rows of rank_sysinfo, part by part, into w's part arrays. */
static lm_status read_parts(lm_sql *sql, int64_t wid, lm_workload *w, lm_diag *diag) {
  const char *path = lm_sql_where(sql);
  lm_stmt *s = NULL;
  lm_status st = lm_sql_prepare(sql, "SELECT part, rank, key, value FROM rank_sysinfo WHERE workload_id = ? "
                                     "ORDER BY part, position", &s, diag);
  if (st != LM_OK) return st;
  lm_stmt_bind_int64(s, 1, wid);
  size_t n = 0, cap = 0;
  int64_t *parts = NULL, *ranks = NULL;
  char **keys = NULL, **values = NULL;
  int rc;
  /* Rows into growing lists first: both engines step forward only. */
  while ((rc = lm_stmt_step(s)) == 1) {
    if (n == cap) {
      cap = cap ? 2 * cap : 64;
      int64_t *gp = lm_realloc(parts, cap * sizeof *gp);
      if (gp) parts = gp;
      int64_t *gr = lm_realloc(ranks, cap * sizeof *gr);
      if (gr) ranks = gr;
      char **gk = lm_realloc(keys, cap * sizeof *gk);
      if (gk) keys = gk;
      char **gv = lm_realloc(values, cap * sizeof *gv);
      if (gv) values = gv;
      if (!gp || !gr || !gk || !gv) {
        st = lm_oom(diag, path);
        break;
      }
    }
    parts[n] = lm_stmt_int64(s, 0);
    ranks[n] = lm_stmt_int64(s, 1);
    keys[n] = lm_strdup(lm_stmt_text(s, 2) ? lm_stmt_text(s, 2) : "");
    values[n] = lm_strdup(lm_stmt_text(s, 3) ? lm_stmt_text(s, 3) : "");
    n++;
    if (!keys[n - 1] || !values[n - 1]) {
      st = lm_oom(diag, path);
      break;
    }
  }
  if (st == LM_OK && rc < 0) st = lm_stmt_error(s, "read the ranks' system info", diag);
  lm_stmt_free(s);
  /* Parts are numbered 0, 1, ... in row order, each with one rank. */
  size_t n_parts = 0;
  for (size_t i = 0; st == LM_OK && i < n; i++) {
    int fresh = i == 0 || parts[i] != parts[i - 1];
    if ((fresh && parts[i] != (int64_t)n_parts) || (!fresh && ranks[i] != ranks[i - 1]) || ranks[i] < 0 ||
        ranks[i] > INT32_MAX)
      st = lm_fail_at(diag, LM_EDATA, path, 0, "rank_sysinfo.part",
                      "part %lld (rank %lld) out of order (corrupt database?)", (long long)parts[i],
                      (long long)ranks[i]);
    n_parts += fresh;
  }
  if (st == LM_OK && n_parts) {
    w->part_rank = lm_arena_alloc(w->arena, n_parts * sizeof *w->part_rank);
    w->part_sysinfo = lm_arena_alloc(w->arena, n_parts * sizeof *w->part_sysinfo);
    w->part_tables = lm_arena_alloc(w->arena, n_parts * sizeof *w->part_tables);
    w->part_roofline = lm_arena_alloc(w->arena, n_parts * sizeof *w->part_roofline);
    if (!w->part_rank || !w->part_sysinfo || !w->part_tables || !w->part_roofline)
      st = lm_oom(diag, path);
    else {
      memset(w->part_tables, 0, n_parts * sizeof *w->part_tables);
      memset(w->part_roofline, 0, n_parts * sizeof *w->part_roofline);
      w->n_parts = n_parts;
    }
  }
  for (size_t i = 0, p = 0; st == LM_OK && i < n; p++) {
    size_t end = i;
    while (end < n && parts[end] == parts[i]) end++;
    w->part_rank[p] = (int32_t)ranks[i];
    /* Part 0's is the workload's own, read from sysinfo. */
    if (p == 0) w->part_sysinfo[0] = w->sysinfo;
    else
      st = lm_db_sysinfo_build(path, keys + i, values + i, end - i, w->arena, &w->part_tables[p],
                               &w->part_sysinfo[p], diag);
    i = end;
  }
  for (size_t i = 0; i < n; i++) {
    lm_free(keys[i]);
    lm_free(values[i]);
  }
  lm_free(parts);
  lm_free(ranks);
  lm_free(keys);
  lm_free(values);
  return st;
}

/* The rooflines of parts 1, 2, ... (column_data sources "roofline@P"). */
static lm_status read_rooflines(lm_sql *sql, int64_t wid, const char *workload, lm_workload *w, lm_diag *diag) {
  const char *path = lm_sql_where(sql);
  lm_stmt *s = NULL;
  lm_status st = lm_sql_prepare(sql, "SELECT source, MAX(n_rows) FROM column_data WHERE workload_id = ? AND "
                                     "source LIKE 'roofline@%' GROUP BY source", &s, diag);
  if (st != LM_OK) return st;
  lm_stmt_bind_int64(s, 1, wid);
  /* Sources first, then their columns: one statement at a time. */
  size_t n = 0;
  long part[256];
  int64_t rows[256];
  while (n < 256 && lm_stmt_step(s) == 1) {
    const char *source = lm_stmt_text(s, 0);
    char *end = NULL;
    long p = source ? strtol(source + strlen("roofline@"), &end, 10) : -1;
    rows[n] = lm_stmt_int64(s, 1);
    if (p < 1 || (size_t)p >= w->n_parts || !end || *end || rows[n] < 0 || rows[n] > LM_DB_MAX_DISPATCHES) {
      st = lm_fail_at(diag, LM_EDATA, path, 0, "column_data.source",
                      "'%.40s': not the roofline of a part of this workload (corrupt database?)", source ? source : "");
      break;
    }
    part[n++] = p;
  }
  lm_stmt_free(s);
  for (size_t i = 0; st == LM_OK && i < n; i++) {
    char source[32];
    snprintf(source, sizeof source, "roofline@%ld", part[i]);
    size_t n_cols = 0;
    if ((st = lm_db_count_columns(sql, wid, source, NULL, NULL, &n_cols, diag)) != LM_OK) break;
    lm_table *t = lm_table_create(path, "roofline", (size_t)rows[i], n_cols);
    if (!t) return lm_oom(diag, path);
    lm_table_finish(t);
    lm_table_free(w->part_roofline[part[i]]);
    w->part_roofline[part[i]] = t;
    if ((st = lm_db_load_columns(sql, wid, workload, source, NULL, NULL, NULL, NULL, t, diag)) != LM_OK) break;
    for (size_t c = 0; c < t->n_cols; c++)
      if (t->cols[c].first_text) t->cols[c].n_text = 1;
  }
  return st;
}

/* The rank of each set of a --split ranks profile's plan. */
static lm_status read_set_rank(lm_sql *sql, int64_t wid, lm_workload *w, lm_diag *diag) {
  const char *path = lm_sql_where(sql);
  lm_stmt *s = NULL;
  lm_status st = lm_sql_prepare(sql, "SELECT set_id, rank, ranks FROM set_rank WHERE workload_id = ? ORDER BY set_id",
                                &s, diag);
  if (st != LM_OK) return st;
  lm_stmt_bind_int64(s, 1, wid);
  int n = 0, cap = 0, ranks = 0, rc;
  int32_t *by_set = NULL;
  while ((rc = lm_stmt_step(s)) == 1) {
    int64_t set = lm_stmt_int64(s, 0), rank = lm_stmt_is_null(s, 1) ? -1 : lm_stmt_int64(s, 1);
    int64_t of = lm_stmt_int64(s, 2);
    if (set != n || n >= 4096 || rank < -1 || rank >= of || of < 1 || of > INT32_MAX || (n && of != ranks)) {
      st = lm_fail_at(diag, LM_EDATA, path, 0, "set_rank.set_id",
                      "set %lld, rank %lld of %lld: not a split of the plan (corrupt database?)", (long long)set,
                      (long long)rank, (long long)of);
      break;
    }
    if (n == cap) {
      cap = cap ? 2 * cap : 16;
      int32_t *grown = lm_arena_alloc(w->arena, (size_t)cap * sizeof *grown);
      if (!grown) {
        st = lm_oom(diag, path);
        break;
      }
      if (n) memcpy(grown, by_set, (size_t)n * sizeof *grown);
      by_set = grown;
    }
    by_set[n++] = (int32_t)rank;
    ranks = (int)of;
  }
  if (st == LM_OK && rc < 0) st = lm_stmt_error(s, "read the split's sets", diag);
  lm_stmt_free(s);
  if (st == LM_OK && n) {
    w->set_rank = by_set;
    w->split_sets_total = n;
    w->split_ranks = ranks;
  }
  return st;
}

/* A rank's part of a --split ranks profile: the options that say which
 * sets of the whole plan it collected (w->split_*). */
static lm_status read_split(lm_sql *sql, int64_t wid, lm_workload *w, lm_diag *diag) {
  lm_stmt *s = NULL;
  lm_diag ignored;
  if (lm_sql_prepare(sql, "SELECT key, position, value FROM profile_option WHERE workload_id = ? AND key LIKE "
                          "'split%' ORDER BY key, position", &s, &ignored) != LM_OK)
    return LM_OK; /* a store made before profile options */
  lm_stmt_bind_int64(s, 1, wid);
  int split = 0, ranks = 0, total = 0, n = 0, cap = 0;
  int32_t *sets = NULL;
  while (lm_stmt_step(s) == 1) {
    const char *key = lm_stmt_text(s, 0), *value = lm_stmt_text(s, 2);
    if (!key || !value) continue;
    if (strcmp(key, "split") == 0) split = strcmp(value, "ranks") == 0;
    else if (strcmp(key, "split_ranks") == 0) ranks = atoi(value);
    else if (strcmp(key, "split_sets_total") == 0) total = atoi(value);
    else if (strcmp(key, "split_set") == 0 && n < 4096) {
      if (n == cap) {
        cap = cap ? 2 * cap : 16;
        int32_t *grown = lm_arena_alloc(w->arena, (size_t)cap * sizeof *grown);
        if (!grown) {
          lm_stmt_free(s);
          return lm_oom(diag, lm_sql_where(sql));
        }
        if (n) memcpy(grown, sets, (size_t)n * sizeof *grown);
        sets = grown;
      }
      sets[n++] = atoi(value);
    }
  }
  lm_stmt_free(s);
  if (!split) return LM_OK;
  for (int k = 0; k < n; k++)
    if (sets[k] < 0 || sets[k] >= total || (k && sets[k] <= sets[k - 1]))
      return lm_fail_at(diag, LM_EDATA, lm_sql_where(sql), 0, "profile_option.split_set",
                        "set %d of %d sets: not a set of the plan (corrupt database?)", sets[k], total);
  if (ranks < 2 || total < 1 || n < 1)
    return lm_fail_at(diag, LM_EDATA, lm_sql_where(sql), 0, "profile_option.split_ranks",
                      "a --split ranks profile of %d ranks and %d sets (corrupt database?)", ranks, total);
  w->split_ranks = ranks;
  w->split_sets_total = total;
  w->split_set = sets;
  w->n_split_set = n;
  return LM_OK;
}

lm_status lm_db_read_ranks(lm_sql *sql, int64_t wid, const char *workload, lm_workload *w, int full,
                           lm_diag *diag) {
  lm_status st = full ? read_split(sql, wid, w, diag) : LM_OK;
  int version = 0;
  if (st == LM_OK) st = schema_version(sql, &version, diag);
  if (st != LM_OK || version < 4) return st; /* before 4: the first rank's only, no combined split */
  st = read_parts(sql, wid, w, diag);
  if (st == LM_OK && full && w->n_parts > 1) st = read_rooflines(sql, wid, workload, w, diag);
  if (st == LM_OK) st = read_set_rank(sql, wid, w, diag);
  return st;
}
