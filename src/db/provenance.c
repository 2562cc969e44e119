/*
 * provenance.c - where the values of a lumen profile's dispatch rows came
 * from: the executions each row combines (one per counter set, with its
 * run and duration), the counters every set holds for each of them, the
 * set each stored value was taken from (column_data.sets), and the source
 * of each row's clocks. Imported folders have none of this; their
 * workloads load with w->exec and w->row_clock_source NULL. Values are few
 * (rows x sets x a handful of shared counters), so they are rows of plain
 * tables, readable with any SQL client.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sql/sql.h"
#include "db/db.h"

static lm_status fail_stmt(lm_stmt *s, lm_sql *sql, const char *what, lm_diag *diag) {
  lm_status st = s ? lm_stmt_error(s, what, diag) : lm_fail(diag, LM_EIO, lm_sql_where(sql), "%s failed", what);
  lm_stmt_free(s);
  return st;
}

static void bind_or_null(lm_stmt *s, int i, double v) {
  if (isnan(v)) lm_stmt_bind_null(s, i);
  else lm_stmt_bind_double(s, i, v);
}

lm_status lm_db_write_provenance(lm_sql *sql, int64_t wid, const lm_workload *w, lm_diag *diag) {
  const lm_executions *x = w->exec;
  lm_stmt *s = NULL;
  lm_status st;
  if (x && x->n_sets > 0 && x->n_shared > 0) {
    if ((st = lm_sql_prepare(sql, "INSERT INTO execution(workload_id, row, set_id, run_id, duration_ns) "
                                  "VALUES (?,?,?,?,?)", &s, diag)) != LM_OK)
      return st;
    for (size_t r = 0; r < x->n_rows; r++)
      for (int32_t k = 0; k < x->n_sets; k++) {
        size_t at = r * (size_t)x->n_sets + (size_t)k;
        if (x->runs[at] < 0) continue;
        lm_stmt_bind_int64(s, 1, wid);
        lm_stmt_bind_int64(s, 2, (int64_t)r);
        lm_stmt_bind_int64(s, 3, k);
        lm_stmt_bind_int64(s, 4, x->runs[at]);
        bind_or_null(s, 5, x->values[at * (size_t)x->n_shared]);
        if (lm_stmt_step(s) < 0) return fail_stmt(s, sql, "write executions", diag);
        lm_stmt_reset(s);
      }
    lm_stmt_free(s);
    if ((st = lm_sql_prepare(sql, "INSERT INTO execution_value(workload_id, row, set_id, name, value) "
                                  "VALUES (?,?,?,?,?)", &s, diag)) != LM_OK)
      return st;
    for (size_t r = 0; r < x->n_rows; r++)
      for (int32_t k = 0; k < x->n_sets; k++) {
        size_t at = r * (size_t)x->n_sets + (size_t)k;
        if (x->runs[at] < 0) continue;
        for (int32_t c = 1; c < x->n_shared; c++) {
          lm_stmt_bind_int64(s, 1, wid);
          lm_stmt_bind_int64(s, 2, (int64_t)r);
          lm_stmt_bind_int64(s, 3, k);
          lm_stmt_bind_text(s, 4, x->shared[c]);
          bind_or_null(s, 5, x->values[at * (size_t)x->n_shared + (size_t)c]);
          if (lm_stmt_step(s) < 0) return fail_stmt(s, sql, "write shared counters", diag);
          lm_stmt_reset(s);
        }
      }
    lm_stmt_free(s);
  }
  if (x && x->n_prov) {
    if ((st = lm_sql_prepare(sql, "UPDATE column_data SET sets = ? WHERE workload_id = ? AND source = ? "
                                  "AND name = ?", &s, diag)) != LM_OK)
      return st;
    for (size_t i = 0; i < x->n_prov; i++) {
      lm_stmt_bind_blob(s, 1, x->prov_sets[i], x->n_rows * sizeof(int16_t));
      lm_stmt_bind_int64(s, 2, wid);
      lm_stmt_bind_text(s, 3, x->prov_source[i]);
      lm_stmt_bind_text(s, 4, x->prov_column[i]);
      if (lm_stmt_step(s) < 0) return fail_stmt(s, sql, "write value sets", diag);
      lm_stmt_reset(s);
    }
    lm_stmt_free(s);
  }
  if (w->row_clock_source) {
    if ((st = lm_sql_prepare(sql, "INSERT INTO dispatch_clock(workload_id, row, source) VALUES (?,?,?)", &s,
                             diag)) != LM_OK)
      return st;
    for (size_t r = 0; r < w->pmc->n_rows; r++) {
      if (!w->row_clock_source[r]) continue;
      lm_stmt_bind_int64(s, 1, wid);
      lm_stmt_bind_int64(s, 2, (int64_t)r);
      lm_stmt_bind_text(s, 3, w->row_clock_source[r]);
      if (lm_stmt_step(s) < 0) return fail_stmt(s, sql, "write clock sources", diag);
      lm_stmt_reset(s);
    }
    lm_stmt_free(s);
  }
  return LM_OK;
}

/* The index of name in names[0..*n), added when new (names from arena). */
static int32_t intern(lm_arena *arena, const char ***names, int32_t *n, int32_t *cap, const char *name) {
  for (int32_t i = 0; i < *n; i++)
    if (strcmp((*names)[i], name) == 0) return i;
  if (*n == *cap) {
    int32_t ncap = *cap ? *cap * 2 : 8;
    const char **grown = lm_arena_alloc(arena, (size_t)ncap * sizeof *grown);
    if (!grown) return -1;
    if (*n) memcpy(grown, *names, (size_t)*n * sizeof *grown);
    *names = grown;
    *cap = ncap;
  }
  (*names)[*n] = lm_arena_strdup(arena, name);
  return (*names)[*n] ? (*n)++ : -1;
}

static lm_status read_executions(lm_sql *sql, int64_t wid, lm_workload *w, lm_diag *diag) {
  const char *path = lm_sql_where(sql);
  size_t n_rows = w->pmc->n_rows;
  lm_stmt *s = NULL;
  lm_diag ignored;
  /* A workload written before these tables existed has none. */
  if (lm_sql_prepare(sql, "SELECT MAX(set_id), COUNT(*) FROM execution WHERE workload_id = ?", &s, &ignored) !=
      LM_OK)
    return LM_OK;
  lm_status st;
  lm_stmt_bind_int64(s, 1, wid);
  int64_t max_set = -1, n_exec = 0;
  if (lm_stmt_step(s) == 1 && !lm_stmt_is_null(s, 0)) {
    max_set = lm_stmt_int64(s, 0);
    n_exec = lm_stmt_int64(s, 1);
  }
  lm_stmt_free(s);
  s = NULL;
  if (n_exec <= 0 || max_set < 0) return LM_OK;
  if (max_set > 4096)
    return lm_fail_at(diag, LM_EDATA, path, 0, "execution.set_id", "%lld is not a set number", (long long)max_set);
  lm_executions *x = lm_arena_alloc(w->arena, sizeof *x);
  if (!x) goto nomem;
  memset(x, 0, sizeof *x);
  x->n_rows = n_rows;
  x->n_sets = (int32_t)max_set + 1;
  /* Names first: duration, then every shared counter. */
  int32_t cap = 0;
  if (intern(w->arena, &x->shared, &x->n_shared, &cap, "duration") < 0) goto nomem;
  if ((st = lm_sql_prepare(sql, "SELECT DISTINCT name FROM execution_value WHERE workload_id = ? ORDER BY name",
                           &s, diag)) != LM_OK)
    return st;
  lm_stmt_bind_int64(s, 1, wid);
  int rc;
  while ((rc = lm_stmt_step(s)) == 1)
    if (intern(w->arena, &x->shared, &x->n_shared, &cap, lm_stmt_text(s, 0)) < 0) goto nomem;
  if (rc < 0) return fail_stmt(s, sql, "read shared counters", diag);
  lm_stmt_free(s);
  s = NULL;
  size_t n_slots = n_rows * (size_t)x->n_sets;
  x->runs = lm_arena_alloc(w->arena, (n_slots + 1) * sizeof *x->runs);
  x->values = lm_arena_alloc(w->arena, (n_slots * (size_t)x->n_shared + 1) * sizeof *x->values);
  if (!x->runs || !x->values) goto nomem;
  for (size_t i = 0; i < n_slots; i++) x->runs[i] = -1;
  for (size_t i = 0; i < n_slots * (size_t)x->n_shared; i++) x->values[i] = LM_NAN;
  if ((st = lm_sql_prepare(sql, "SELECT row, set_id, run_id, duration_ns FROM execution WHERE workload_id = ?",
                           &s, diag)) != LM_OK)
    return st;
  lm_stmt_bind_int64(s, 1, wid);
  while ((rc = lm_stmt_step(s)) == 1) {
    int64_t row = lm_stmt_int64(s, 0), set = lm_stmt_int64(s, 1);
    if (row < 0 || (size_t)row >= n_rows || set < 0 || set >= x->n_sets) continue;
    size_t at = (size_t)row * (size_t)x->n_sets + (size_t)set;
    x->runs[at] = lm_stmt_is_null(s, 2) ? 0 : (int32_t)lm_stmt_int64(s, 2);
    x->values[at * (size_t)x->n_shared] = lm_stmt_double(s, 3);
  }
  if (rc < 0) return fail_stmt(s, sql, "read executions", diag);
  lm_stmt_free(s);
  s = NULL;
  if ((st = lm_sql_prepare(sql, "SELECT row, set_id, name, value FROM execution_value WHERE workload_id = ?", &s,
                           diag)) != LM_OK)
    return st;
  lm_stmt_bind_int64(s, 1, wid);
  while ((rc = lm_stmt_step(s)) == 1) {
    int64_t row = lm_stmt_int64(s, 0), set = lm_stmt_int64(s, 1);
    if (row < 0 || (size_t)row >= n_rows || set < 0 || set >= x->n_sets) continue;
    int32_t k = intern(w->arena, &x->shared, &x->n_shared, &cap, lm_stmt_text(s, 2));
    if (k < 0 || k >= x->n_shared) continue;
    x->values[((size_t)row * (size_t)x->n_sets + (size_t)set) * (size_t)x->n_shared + (size_t)k] =
        lm_stmt_double(s, 3);
  }
  if (rc < 0) return fail_stmt(s, sql, "read shared counters", diag);
  lm_stmt_free(s);
  s = NULL;
  /* The set each value came from. */
  if ((st = lm_sql_prepare(sql, "SELECT source, name, sets FROM column_data WHERE workload_id = ? AND sets IS "
                                "NOT NULL ORDER BY source, position", &s, diag)) != LM_OK)
    return st;
  lm_stmt_bind_int64(s, 1, wid);
  size_t cap_prov = 0;
  while ((rc = lm_stmt_step(s)) == 1) {
    size_t bytes = 0;
    const void *data = lm_stmt_blob(s, 2, &bytes);
    /* A column of an accumulate table has as many rows as pmc_perf. */
    if (!data || bytes != n_rows * sizeof(int16_t)) continue;
    if (x->n_prov == cap_prov) {
      size_t ncap = cap_prov ? cap_prov * 2 : 64;
      const char **gs = lm_arena_alloc(w->arena, ncap * sizeof *gs);
      const char **gc = lm_arena_alloc(w->arena, ncap * sizeof *gc);
      int16_t **gp = lm_arena_alloc(w->arena, ncap * sizeof *gp);
      if (!gs || !gc || !gp) goto nomem;
      if (x->n_prov) {
        memcpy(gs, x->prov_source, x->n_prov * sizeof *gs);
        memcpy(gc, x->prov_column, x->n_prov * sizeof *gc);
        memcpy(gp, x->prov_sets, x->n_prov * sizeof *gp);
      }
      x->prov_source = gs;
      x->prov_column = gc;
      x->prov_sets = gp;
      cap_prov = ncap;
    }
    int16_t *sets = lm_arena_alloc(w->arena, bytes + sizeof(int16_t));
    const char *src = lm_arena_strdup(w->arena, lm_stmt_text(s, 0));
    const char *col = lm_arena_strdup(w->arena, lm_stmt_text(s, 1));
    if (!sets || !src || !col) goto nomem;
    memcpy(sets, data, bytes);
    x->prov_source[x->n_prov] = src;
    x->prov_column[x->n_prov] = col;
    x->prov_sets[x->n_prov++] = sets;
  }
  if (rc < 0) return fail_stmt(s, sql, "read value sets", diag);
  lm_stmt_free(s);
  w->exec = x;
  return LM_OK;
nomem:
  lm_stmt_free(s);
  return lm_oom(diag, path);
}

lm_status lm_db_read_provenance(lm_sql *sql, int64_t wid, lm_workload *w, lm_diag *diag) {
  lm_status st = read_executions(sql, wid, w, diag);
  if (st != LM_OK) return st;
  lm_stmt *s = NULL;
  lm_diag ignored;
  if (lm_sql_prepare(sql, "SELECT row, source FROM dispatch_clock WHERE workload_id = ?", &s, &ignored) != LM_OK)
    return LM_OK;
  lm_stmt_bind_int64(s, 1, wid);
  size_t n_rows = w->pmc->n_rows;
  int rc;
  while ((rc = lm_stmt_step(s)) == 1) {
    int64_t row = lm_stmt_int64(s, 0);
    if (row < 0 || (size_t)row >= n_rows) continue;
    if (!w->row_clock_source) {
      w->row_clock_source = lm_arena_alloc(w->arena, (n_rows + 1) * sizeof *w->row_clock_source);
      if (!w->row_clock_source) break;
      memset(w->row_clock_source, 0, (n_rows + 1) * sizeof *w->row_clock_source);
    }
    w->row_clock_source[row] = lm_arena_strdup(w->arena, lm_stmt_text(s, 1));
  }
  if (rc < 0) return fail_stmt(s, sql, "read clock sources", diag);
  lm_stmt_free(s);
  if (rc == 1) return lm_oom(diag, lm_sql_where(sql));
  return LM_OK;
}
