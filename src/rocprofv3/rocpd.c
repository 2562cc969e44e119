/*
 * rocpd.c - rocprofv3's SQLite output (rocpd, its default format since
 * ROCm 7): the rows its views give - `kernels` (one per dispatch),
 * `pmc_events` (one per dispatch and counter instance, summed per counter
 * here as the CSV output sums them), `rocpd_info_agent` for the GPUs - read
 * as cheaply as the file allows. The counter events, many times the
 * dispatches, come from their table's pages (sql/scan.c) in stored order,
 * matched to their dispatch by (run, event id) in a sorted array and to
 * their counter by id; the dispatches from rocpd_kernel_dispatch's pages
 * with the view's joins made in rocpd_kernels.c. When the pages cannot be
 * read so (a write-ahead log beside the file, another view), the same rows
 * come through SQLite, without a join, sort or grouping per event. The
 * earlier layout (plain tables under the view names) is read the same way.
 */
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "rocprofv3/rocpd_private.h"

/* The queries of the two layouts, through SQLite. rocpd's (ROCm 7): the
 * dispatches from its `kernels` view with their ids, then each one's event
 * id from the table under it (dispatch_events_query), the counter events
 * from the table under `pmc_events` (`rocpd_pmc_event`, a counter by its
 * id in `rocpd_info_pmc`), so no join is stepped per event. The earlier layout:
 * plain tables under the view names, events by event id, the counter as
 * name. %s: the VGPR column, the event id's expression, then the order:
 * none first (the stored order is the dispatches' order in every database
 * seen; sorting costs as much as the read), then by run, process and
 * dispatch id when the stored order was not that. An event's run is
 * compared in SQL with ?1 (the first run's), its text read only when
 * another. */
static const char dispatch_query[] =
    "SELECT guid, pid, dispatch_id, name, agent_type_index, grid_x * grid_y * grid_z,"
    " workgroup_x * workgroup_y * workgroup_z, lds_size, scratch_size, %s, accum_vgpr_count,"
    " sgpr_count, start, \"end\", %s FROM kernels%s";
static const char dispatch_order[] = " ORDER BY guid, pid, dispatch_id";
/* A dispatch's event id, by the dispatch's id in rocpd_kernel_dispatch,
 * when its process is listed (the rule of `pmc_events`' join). */
static const char dispatch_events_query[] =
    "SELECT KD.guid, KD.id, KD.event_id FROM rocpd_kernel_dispatch KD JOIN rocpd_info_process P"
    " ON P.id = KD.pid AND P.guid = KD.guid";
static const char event_query[] = "SELECT pmc_id, event_id, value, guid = ?1, guid FROM rocpd_pmc_event";
static const char event_query_plain[] = "SELECT name, event_id, value, guid = ?1, guid FROM pmc_events";
static const char counter_query[] = "SELECT guid, id, name FROM rocpd_info_pmc";
/* The GPU agents: sysinfo fields from the agent's properties (extdata). */
static const char agent_query[] =
    "SELECT type_index, COALESCE(json_extract(extdata, '$.name'), name), product_name,"
    " json_extract(extdata, '$.cu_count'), json_extract(extdata, '$.simd_per_cu'),"
    " json_extract(extdata, '$.wave_front_size'), json_extract(extdata, '$.workgroup_max_size'),"
    " json_extract(extdata, '$.max_waves_per_cu'), json_extract(extdata, '$.max_engine_clk_fcompute'),"
    " json_extract(extdata, '$.num_xcc'), json_extract(extdata, '$.array_count'),"
    " json_extract(extdata, '$.simd_arrays_per_engine')"
    " FROM rocpd_info_agent WHERE type = 'GPU' ORDER BY guid, type_index";
static const char *const agent_fields[] = {"cu_per_gpu",       "simd_per_cu", "wave_size", "workgroup_max_size",
                                           "max_waves_per_cu", "max_sclk",    "num_xcd"};

int lm_v3_rocpd_detect(const char *path) {
  int fd = -1;
  char head[16];
  if (lm_open_read(path, 0, &fd, NULL, NULL) != LM_OK) return 0;
  ssize_t n = read(fd, head, sizeof head);
  close(fd);
  if (n != (ssize_t)sizeof head || memcmp(head, "SQLite format 3", 16) != 0) return 0;
  lm_sql *sql = NULL;
  lm_stmt *s = NULL;
  int found = 0;
  if (lm_sql_open(path, LM_DB_READ, &sql, NULL) == LM_OK &&
      lm_sql_prepare(sql,
                     "SELECT count(*) FROM sqlite_master WHERE name IN ('kernels', 'pmc_events', "
                     "'rocpd_info_agent')",
                     &s, NULL) == LM_OK &&
      lm_stmt_step(s) == 1)
    found = lm_stmt_int64(s, 0) == 3;
  lm_stmt_free(s);
  lm_sql_close(sql);
  return found;
}

static lm_status read_agents(lm_sql *sql, const char *path, lm_v3_agents *a, lm_diag *diag) {
  lm_stmt *s = NULL;
  lm_status st = lm_sql_prepare(sql, agent_query, &s, diag);
  if (st != LM_OK) return st;
  a->where = path;
  int r;
  while ((r = lm_stmt_step(s)) == 1 && a->n < LM_V3_MAX_AGENTS) {
    a->node[a->n++] = (double)lm_stmt_int64(s, 0);
    if (a->n > 1) continue;
    snprintf(a->arch, sizeof a->arch, "%.*s", (int)strcspn(lm_stmt_text(s, 1), ":"), lm_stmt_text(s, 1));
    st = lm_v3_agents_keep(a, "gpu_model", lm_stmt_text(s, 2), path, diag);
    for (int f = 0; f < 7 && st == LM_OK; f++) {
      if (lm_stmt_is_null(s, 3 + f)) continue;
      char v[32];
      snprintf(v, sizeof v, "%lld", (long long)lm_stmt_int64(s, 3 + f));
      st = lm_v3_agents_keep(a, agent_fields[f], v, path, diag);
      if (st == LM_OK && f == 5) st = lm_v3_agents_keep(a, "cur_sclk", v, path, diag);
    }
    if (st == LM_OK && !lm_stmt_is_null(s, 10) && !lm_stmt_is_null(s, 11) && lm_stmt_int64(s, 11) > 0) {
      char v[32];
      snprintf(v, sizeof v, "%lld", (long long)(lm_stmt_int64(s, 10) / lm_stmt_int64(s, 11)));
      st = lm_v3_agents_keep(a, "se_per_gpu", v, path, diag);
    }
    if (st != LM_OK) break;
  }
  if (st == LM_OK && r < 0) st = lm_stmt_error(s, "reading the GPU agents", diag);
  lm_stmt_free(s);
  return st;
}

/* rocpd_info_pmc's counters of the runs read (a counter of another run
 * names no dispatch), keyed by run and id. */
static lm_status read_counters(lm_sql *sql, const char *path, lm_v3_rocpd *ev, lm_diag *diag) {
  lm_stmt *s = NULL;
  size_t cap = 0;
  lm_status st = lm_sql_prepare(sql, counter_query, &s, diag);
  if (st != LM_OK) return st;
  int r;
  while ((r = lm_stmt_step(s)) == 1) {
    const char *gt = lm_stmt_text(s, 0);
    long g = lm_v3_rocpd_run(ev, gt, strlen(gt), 0);
    if (g < 0 || lm_stmt_is_null(s, 2)) continue;
    lm_v3_pmc *grown = lm_grow(ev->p, &cap, ev->n_p, sizeof *grown);
    if (!grown) break;
    ev->p = grown;
    lm_v3_pmc *p = &ev->p[ev->n_p];
    *p = (lm_v3_pmc){lm_strdup(lm_stmt_text(s, 2)), SIZE_MAX};
    if (!p->name) break;
    if ((st = lm_v3_keys_push(&ev->pmc_keys, (uint32_t)g, lm_stmt_int64(s, 1), ev->n_p++, path, diag)) != LM_OK) break;
  }
  if (st == LM_OK && r == 1)
    st = lm_oom(diag, path);
  else if (st == LM_OK && r < 0)
    st = lm_stmt_error(s, "reading the counters (rocpd_info_pmc)", diag);
  lm_stmt_free(s);
  lm_v3_keys_sort(&ev->pmc_keys);
  return st;
}

/* One row of the dispatch query into the fold (rows of the same run,
 * process and dispatch id, which follow each other, are one); its event
 * id -> its row. *unordered is set (and nothing added) at a row out of
 * the sorted query's order when the query is not sorted. */
static lm_status fold_dispatch(lm_v3_fold *fold, lm_stmt *s, lm_v3_rocpd *ev, lm_v3_last *last, int *unordered,
                               lm_diag *diag) {
  const char *guid = lm_stmt_text(s, 0);
  int64_t pid = lm_stmt_int64(s, 1), id = lm_stmt_int64(s, 2);
  if (unordered && !lm_v3_rocpd_in_order(ev, last, guid, pid, id)) {
    *unordered = 1;
    return LM_OK;
  }
  long g = lm_v3_rocpd_run(ev, guid, strlen(guid), 1);
  if (g < 0) return lm_oom(diag, fold->t->path);
  lm_status st;
  if (!last->have || last->guid != (uint32_t)g || last->pid != pid || last->id != id) {
    size_t row;
    if ((st = lm_fold_add_row(fold->t, &row, diag)) != LM_OK) return st;
    int32_t k;
    if ((st = lm_fold_intern(fold->t, lm_stmt_text(s, 3), &k, diag)) != LM_OK) return st;
    fold->t->kernel[row] = k;
    for (int f = 0; f < LM_V3_N_FACTS; f++) fold->t->facts[f][row] = lm_stmt_double(s, 4 + f);
    *last = (lm_v3_last){1, (uint32_t)g, pid, id, row};
  }
  if (lm_stmt_is_null(s, 14)) return LM_OK;
  return lm_v3_keys_push(&ev->ev, (uint32_t)g, lm_stmt_int64(s, 14), last->row, fold->t->path, diag);
}

/* Counter k (named name) of row += v: the first instance sets the cell
 * (and its "_sum" twin), the others add to both. */
static lm_status add_value(lm_v3_fold *fold, size_t k, const char *name, size_t row, double v, lm_diag *diag) {
  lm_fold *t = fold->t;
  double cur = t->counters[k][row];
  if (isnan(cur)) {
    if (t->tag[k] == LM_V3_ALIAS_UNKNOWN) {
      t->guess = k; /* the put finds it at once */
      return lm_v3_fold_put(fold, name, row, v, diag);
    }
    t->counters[k][row] = v;
    if (t->tag[k] >= 0) {
      size_t a = (size_t)t->tag[k];
      t->counters[a][row] = v;
      if (t->guess == a) t->guess = a + 1 < t->n_counters ? a + 1 : 0;
    }
    return LM_OK;
  }
  t->counters[k][row] = cur + v;
  if (t->tag[k] >= 0) t->counters[t->tag[k]][row] = cur + v;
  return LM_OK;
}

/* The column of counter name: the counter expected next, then *last (the
 * counter of the event before: one counter's instances follow each
 * other), then a lookup. */
static lm_status counter_column(lm_fold *t, const char *name, size_t *last, size_t *k, lm_diag *diag) {
  *k = t->guess;
  if (*k < t->n_counters && strcmp(t->counter_names[*k], name) == 0) {
    t->guess = *k + 1 < t->n_counters ? *k + 1 : 0;
  } else if ((*k = *last) >= t->n_counters || strcmp(t->counter_names[*k], name) != 0) {
    lm_status st = lm_fold_counter_lookup(t, name, k, diag);
    if (st != LM_OK) return st;
  }
  *last = *k;
  return LM_OK;
}

/* Where the events read have got: the row of the dispatch of the last
 * event (-1: none known), and the counter column of the last named one. */
typedef struct event_at {
  int64_t row, id;
  uint32_t guid;
  size_t last_counter;
} event_at;

/* One counter event into its dispatch's row: run guid, event id, the
 * counter by name (the earlier layout) or by its id in rocpd_info_pmc,
 * value v. An event whose dispatch or counter is not known is left out,
 * as the view's inner joins leave it out. */
static inline __attribute__((always_inline)) lm_status fold_event(lm_v3_fold *fold, lm_v3_rocpd *ev, event_at *at,
                                                                  uint32_t guid, int64_t id, const char *name,
                                                                  int64_t pmc_id, double v, lm_diag *diag) {
  if (guid != at->guid || id != at->id) {
    at->row = lm_v3_keys_find(&ev->ev, guid, id);
    at->guid = guid;
    at->id = id;
  }
  if (at->row < 0) return LM_OK;
  size_t k;
  lm_status st;
  if (ev->plain) {
    st = counter_column(fold->t, name, &at->last_counter, &k, diag);
  } else {
    int64_t i = lm_v3_keys_find(&ev->pmc_keys, guid, pmc_id);
    if (i < 0) return LM_OK;
    lm_v3_pmc *p = &ev->p[i];
    st = p->col != SIZE_MAX ? LM_OK : lm_fold_counter_lookup(fold->t, p->name, &p->col, diag);
    name = p->name;
    k = p->col;
  }
  return st != LM_OK ? st : add_value(fold, k, name, (size_t)at->row, v, diag);
}

/* The counter events read straight from their table's pages (scan), in
 * stored order: rocpd_pmc_event's (a counter by its id) or, in the
 * earlier layout, pmc_events' (by its name). */
static lm_status fold_scanned(lm_v3_fold *fold, lm_sql_scan *scan, lm_v3_rocpd *ev, lm_diag *diag) {
  int c_event = lm_sql_scan_column(scan, "event_id"),
      c_counter = lm_sql_scan_column(scan, ev->plain ? "name" : "pmc_id"), c_value = lm_sql_scan_column(scan, "value"),
      c_guid = lm_sql_scan_column(scan, "guid");
  event_at at = {-1, 0, UINT32_MAX, (size_t)-1};
  long guid = -1;
  char name[256];
  int r;
  while ((r = lm_sql_scan_next(scan, diag)) == 1) {
    size_t n;
    const char *g = lm_sql_scan_text(scan, c_guid, &n);
    if (!g) continue;
    if ((guid < 0 || n != ev->guid_len[guid] || memcmp(ev->guids[guid], g, n) != 0) &&
        (guid = lm_v3_rocpd_run(ev, g, n, 0)) < 0)
      continue; /* no dispatch of that run */
    if (lm_sql_scan_is_null(scan, c_event) || lm_sql_scan_is_null(scan, c_counter)) continue;
    if (ev->plain) {
      const char *t = lm_sql_scan_text(scan, c_counter, &n);
      if (!t || n >= sizeof name) continue; /* a number, or no counter's name */
      memcpy(name, t, n);
      name[n] = '\0';
    }
    lm_status st =
        fold_event(fold, ev, &at, (uint32_t)guid, lm_sql_scan_int64(scan, c_event), ev->plain ? name : NULL,
                   ev->plain ? 0 : lm_sql_scan_int64(scan, c_counter), lm_sql_scan_double(scan, c_value), diag);
    if (st != LM_OK) return st;
  }
  return r < 0 ? (diag && diag->status ? diag->status : LM_EPARSE) : LM_OK;
}

/* The counter events through SQL, in stored order, into their
 * dispatches' rows. An event's run is compared in SQL with the first
 * run's (?1), its text read only when another. */
static lm_status fold_events(lm_v3_fold *fold, lm_sql *sql, lm_v3_rocpd *ev, lm_diag *diag) {
  lm_stmt *s = NULL;
  lm_status st = lm_sql_prepare(sql, ev->plain ? event_query_plain : event_query, &s, diag);
  if (st != LM_OK) return st;
  if (ev->n_guids > 0) lm_stmt_bind_text(s, 1, ev->guids[0]);
  event_at at = {-1, 0, UINT32_MAX, (size_t)-1};
  long guid = -1;
  int r;
  while ((r = lm_stmt_step(s)) == 1) {
    if (lm_stmt_int64(s, 3) == 1) {
      guid = 0;
    } else {
      const char *g = lm_stmt_text(s, 4);
      if (guid <= 0 || strcmp(ev->guids[guid], g) != 0) guid = lm_v3_rocpd_run(ev, g, strlen(g), 0);
      if (guid < 0) continue; /* no dispatch of that run */
    }
    if (lm_stmt_is_null(s, 0) || lm_stmt_is_null(s, 1)) continue;
    if ((st = fold_event(fold, ev, &at, (uint32_t)guid, lm_stmt_int64(s, 1), ev->plain ? lm_stmt_text(s, 0) : NULL,
                         ev->plain ? 0 : lm_stmt_int64(s, 0), lm_stmt_double(s, 2), diag)) != LM_OK)
      break;
  }
  if (st == LM_OK && r < 0) st = lm_stmt_error(s, "reading the counter events", diag);
  lm_stmt_free(s);
  return st;
}

/* 1 when view (or table) `view` has column col. */
static int has_column(lm_sql *sql, const char *view, const char *col) {
  char q[96];
  snprintf(q, sizeof q, "SELECT * FROM %s LIMIT 0", view);
  lm_stmt *s = NULL;
  int found = 0;
  if (lm_sql_prepare(sql, q, &s, NULL) == LM_OK)
    for (int c = 0; c < lm_stmt_columns(s) && !found; c++) found = strcmp(lm_stmt_column_name(s, c), col) == 0;
  lm_stmt_free(s);
  return found;
}

/* The dispatches' keys from (run, dispatch id in rocpd_kernel_dispatch),
 * as the view's rows give them, to (run, event id). */
static lm_status dispatch_events(lm_sql *sql, const char *path, lm_v3_rocpd *ev, lm_diag *diag) {
  lm_v3_keys by_event = {0};
  lm_stmt *s = NULL;
  lm_status st = lm_sql_prepare(sql, dispatch_events_query, &s, diag);
  if (st != LM_OK) goto done;
  int r;
  while ((r = lm_stmt_step(s)) == 1) {
    const char *gt = lm_stmt_text(s, 0);
    long g = lm_v3_rocpd_run(ev, gt, strlen(gt), 0);
    if (g < 0 || lm_stmt_is_null(s, 2)) continue;
    int64_t row = lm_v3_keys_find(&ev->ev, (uint32_t)g, lm_stmt_int64(s, 1));
    if (row >= 0 &&
        (st = lm_v3_keys_push(&by_event, (uint32_t)g, lm_stmt_int64(s, 2), (size_t)row, path, diag)) != LM_OK)
      goto done;
  }
  if (r < 0) {
    st = lm_stmt_error(s, "reading the kernel dispatches' events", diag);
    goto done;
  }
  lm_v3_keys_sort(&by_event);
  lm_v3_keys swap = ev->ev;
  ev->ev = by_event;
  by_event = swap;
done:
  lm_stmt_free(s);
  lm_v3_keys_free(&by_event);
  return st;
}

/* Room in the fold for the dispatches of `table` (counted by SQLite from
 * its pages, without reading its rows), so the columns are not moved as
 * they grow. */
static lm_status reserve(lm_sql *sql, const char *table, lm_fold *t, lm_diag *diag) {
  char q[64];
  snprintf(q, sizeof q, "SELECT count(*) FROM %s", table);
  lm_stmt *s = NULL;
  lm_status st = lm_sql_prepare(sql, q, &s, diag);
  if (st == LM_OK && lm_stmt_step(s) == 1 && lm_stmt_int64(s, 0) > 0)
    st = lm_fold_reserve(t, (size_t)lm_stmt_int64(s, 0) + 16, diag);
  lm_stmt_free(s);
  return st;
}

lm_status lm_v3_rocpd_read(const char *path, lm_v3_fold *fold, lm_v3_agents *agents, lm_diag *diag) {
  lm_sql *sql = NULL;
  lm_stmt *s = NULL;
  lm_sql_scan *scan = NULL;
  lm_v3_rocpd ev = {0};
  lm_v3_last last = {0};
  lm_status st = lm_sql_open(path, LM_DB_READ, &sql, diag);
  if (st != LM_OK) goto done;
  /* Pages through SQLite's bounded cache: mapped, every page of the file
   * next to the ones read would count as resident. */
  if ((st = lm_sql_exec(sql, "PRAGMA mmap_size = 0", 0, diag)) != LM_OK) goto done;
  if ((st = read_agents(sql, path, agents, diag)) != LM_OK) goto done;
  ev.plain = !has_column(sql, "pmc_events", "counter_name");
  const char *vgpr = has_column(sql, "kernels", "arch_vgpr_count") ? "arch_vgpr_count" : "vgpr_count";
  if ((st = reserve(sql, ev.plain ? "kernels" : "rocpd_kernel_dispatch", fold->t, diag)) != LM_OK) goto done;
  fold->gpus_numbered = 1;
  fold->t->has_last = 0;
  /* rocpd's dispatches from the tables under its view when they can be
   * read so, else through the view: the stored order first, sorted when
   * it was not the dispatches'. */
  int unordered = 0, from_tables = 0;
  if (!ev.plain) {
    if ((st = lm_v3_rocpd_kernels(sql, fold, &ev, &unordered, diag)) == LM_OK && !unordered)
      from_tables = 1;
    else if (st != LM_OK && st != LM_ENOTFOUND)
      goto done;
  }
  for (int sorted = unordered; !from_tables && sorted < 2; sorted++) {
    if (unordered) {
      if ((st = lm_fold_drop_rows(fold->t, diag)) != LM_OK) goto done;
      lm_v3_keys_free(&ev.ev);
      last = (lm_v3_last){0};
      unordered = 0;
    }
    char query[sizeof dispatch_query + sizeof dispatch_order + 64];
    snprintf(query, sizeof query, dispatch_query, vgpr, ev.plain ? "event_id" : "id", sorted ? dispatch_order : "");
    lm_stmt_free(s);
    if ((st = lm_sql_prepare(sql, query, &s, diag)) != LM_OK) goto done;
    int r;
    while ((r = lm_stmt_step(s)) == 1 && !unordered)
      if ((st = fold_dispatch(fold, s, &ev, &last, sorted ? NULL : &unordered, diag)) != LM_OK) goto done;
    if (r < 0) {
      st = lm_stmt_error(s, "reading the kernel dispatches", diag);
      goto done;
    }
    if (!unordered) break;
  }
  lm_v3_keys_sort(&ev.ev);
  if (!ev.plain && ((!from_tables && (st = dispatch_events(sql, path, &ev, diag)) != LM_OK) ||
                    (st = read_counters(sql, path, &ev, diag)) != LM_OK))
    goto done;
  /* rocpd's events straight from their table's pages when it can be read
   * so and has the columns, else through SQL. */
  char table[160] = "pmc_events";
  if (!ev.plain) lm_v3_rocpd_table_under(sql, "rocpd_pmc_event", table, sizeof table);
  if (table[0] && (st = lm_sql_scan_open(sql, table, &scan, diag)) != LM_ENOTFOUND) {
    if (st != LM_OK) goto done;
    if (lm_sql_scan_column(scan, "event_id") >= 0 && lm_sql_scan_column(scan, ev.plain ? "name" : "pmc_id") >= 0 &&
        lm_sql_scan_column(scan, "value") >= 0 && lm_sql_scan_column(scan, "guid") >= 0) {
      st = fold_scanned(fold, scan, &ev, diag);
      goto done;
    }
  }
  st = fold_events(fold, sql, &ev, diag);
done:
  lm_sql_scan_free(scan);
  lm_stmt_free(s);
  lm_sql_close(sql);
  lm_v3_rocpd_free(&ev);
  return st;
}
