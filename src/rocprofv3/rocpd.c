/*
 * rocpd.c - rocprofv3's SQLite output (rocpd, its default format since
 * ROCm 7) read through the views the database itself defines: `kernels`
 * (one row per dispatch), `pmc_events` (one row per dispatch and counter
 * instance, summed per counter here as the CSV output sums them) and
 * `rocpd_info_agent` for the GPUs. The views, not the tables (whose names
 * carry a run's UUID), are the documented interface. The dispatches are
 * read sorted by run, process and dispatch (few rows); the counter events,
 * many times more, in the order they are stored, without a join, sort or
 * grouping, matched to their dispatch by run, pid and dispatch id (by run
 * and event id in the earlier layout) in a sorted array, the entry after
 * the last match tried first: one dispatch's events are stored together.
 */
#include <ctype.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "rocprofv3/rocprofv3_private.h"
#include "sql/sql.h"

/* The queries of the two layouts. rocpd's (ROCm 7): the dispatches from
 * its `kernels` view with their ids, then each one's event id from the
 * table under it (dispatch_events_query), the counter events from
 * the table under `pmc_events` (`rocpd_pmc_event`, a counter by its id in
 * `rocpd_info_pmc`), so no join is stepped per event. The earlier layout:
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

/* A dispatch's counter events: (run, event id) -> fold row. */
typedef struct event_row {
  uint32_t guid; /* index in the runs' guids */
  uint32_t row;
  int64_t id;
} event_row;

/* A counter of rocpd_info_pmc: its run and id, its name, and its column
 * once an event of it is read (SIZE_MAX before). */
typedef struct pmc {
  uint32_t guid;
  int64_t id;
  char *name;
  size_t col;
} pmc;

/* The dispatches' keys (sorted once read, the last dispatch of a key
 * kept, as a map's put would), the counters (sorted), and the runs'
 * guids. */
typedef struct events {
  int plain; /* the earlier layout: counter names in the events */
  event_row *e;
  size_t n, cap, next; /* next: the entry after the last one found */
  int sorted;
  pmc *p;
  size_t n_p, next_p;
  char **guids;
  size_t n_guids;
} events;

static void events_free(events *ev) {
  for (size_t i = 0; i < ev->n_guids; i++) lm_free(ev->guids[i]);
  for (size_t i = 0; i < ev->n_p; i++) lm_free(ev->p[i].name);
  lm_free(ev->guids);
  lm_free(ev->e);
  lm_free(ev->p);
}

/* The index of guid among the runs' (added when add is set), or -1. */
static long guid_index(events *ev, const char *guid, int add) {
  for (size_t i = ev->n_guids; i-- > 0;)
    if (strcmp(ev->guids[i], guid) == 0) return (long)i;
  if (!add) return -1;
  char **g = lm_realloc(ev->guids, (ev->n_guids + 1) * sizeof *g);
  if (!g) return -2;
  ev->guids = g;
  if (!(g[ev->n_guids] = lm_strdup(guid))) return -2;
  return (long)ev->n_guids++;
}

/* The index of the run whose guid is the n bytes at g, or -1. */
static long guid_index_n(const events *ev, const char *g, size_t n) {
  for (size_t i = ev->n_guids; i-- > 0;)
    if (strncmp(ev->guids[i], g, n) == 0 && ev->guids[i][n] == '\0') return (long)i;
  return -1;
}

/* (run, id) order, shared by both arrays (pmc's prefix matches). */
static int before(uint32_t g, int64_t id, uint32_t g2, int64_t id2) { return g != g2 ? g < g2 : id < id2; }

static int cmp_event(const void *a, const void *b, void *ctx) {
  (void)ctx;
  const event_row *x = a, *y = b;
  if (x->guid != y->guid || x->id != y->id) return before(x->guid, x->id, y->guid, y->id) ? -1 : 1;
  return (x->row > y->row) - (x->row < y->row);
}

static int cmp_pmc(const void *a, const void *b, void *ctx) {
  (void)ctx;
  const pmc *x = a, *y = b;
  if (x->guid != y->guid || x->id != y->id) return before(x->guid, x->id, y->guid, y->id) ? -1 : 1;
  return 0;
}

/* Sort the ids read, keeping the last dispatch of each. */
static void events_sort(events *ev) {
  if (!ev->sorted) lm_sort(ev->e, ev->n, sizeof *ev->e, cmp_event, NULL);
  size_t m = 0;
  for (size_t i = 0; i < ev->n; i++) {
    if (m > 0 && ev->e[m - 1].guid == ev->e[i].guid && ev->e[m - 1].id == ev->e[i].id) m--;
    ev->e[m++] = ev->e[i];
  }
  ev->n = m;
}

/* The row of the dispatch of (guid, id), or -1: the entry after the last
 * found is tried first (the events follow their dispatches' order). */
static int64_t event_find(events *ev, uint32_t guid, int64_t id) {
  size_t i = ev->next;
  if (!(i < ev->n && ev->e[i].guid == guid && ev->e[i].id == id)) {
    size_t lo = 0, hi = ev->n;
    while (lo < hi) {
      size_t mid = lo + (hi - lo) / 2;
      if (before(ev->e[mid].guid, ev->e[mid].id, guid, id))
        lo = mid + 1;
      else
        hi = mid;
    }
    if (lo == ev->n || ev->e[lo].guid != guid || ev->e[lo].id != id) return -1;
    i = lo;
  }
  ev->next = i + 1;
  return ev->e[i].row;
}

/* The counter (guid, id) of rocpd_info_pmc, or NULL: the one after the
 * last found is tried first (a dispatch's events list the counters in one
 * order). */
static pmc *pmc_find(events *ev, uint32_t guid, int64_t id) {
  size_t i = ev->next_p;
  if (!(i < ev->n_p && ev->p[i].guid == guid && ev->p[i].id == id)) {
    size_t lo = 0, hi = ev->n_p;
    while (lo < hi) {
      size_t mid = lo + (hi - lo) / 2;
      if (before(ev->p[mid].guid, ev->p[mid].id, guid, id))
        lo = mid + 1;
      else
        hi = mid;
    }
    if (lo == ev->n_p || ev->p[lo].guid != guid || ev->p[lo].id != id) return NULL;
    i = lo;
  }
  ev->next_p = i + 1;
  return &ev->p[i];
}

/* rocpd_info_pmc's counters of the runs read (a counter of another run
 * names no dispatch), sorted by run and id. */
static lm_status read_counters(lm_sql *sql, const char *path, events *ev, lm_diag *diag) {
  lm_stmt *s = NULL;
  size_t cap = 0;
  lm_status st = lm_sql_prepare(sql, counter_query, &s, diag);
  if (st != LM_OK) return st;
  int r;
  while ((r = lm_stmt_step(s)) == 1) {
    long g = guid_index(ev, lm_stmt_text(s, 0), 0);
    if (g < 0 || lm_stmt_is_null(s, 2)) continue;
    if (ev->n_p == cap) {
      size_t c = cap ? 2 * cap : 64;
      pmc *p = lm_realloc(ev->p, c * sizeof *p);
      if (!p) break;
      ev->p = p;
      cap = c;
    }
    pmc *p = &ev->p[ev->n_p];
    *p = (pmc){(uint32_t)g, lm_stmt_int64(s, 1), lm_strdup(lm_stmt_text(s, 2)), SIZE_MAX};
    if (!p->name) break;
    ev->n_p++;
  }
  if (r == 1)
    st = lm_oom(diag, path);
  else if (r < 0)
    st = lm_stmt_error(s, "reading the counters (rocpd_info_pmc)", diag);
  lm_stmt_free(s);
  if (st == LM_OK) lm_sort(ev->p, ev->n_p, sizeof *ev->p, cmp_pmc, NULL);
  return st;
}

/* The dispatch read last: its run, process and id, and its row. */
typedef struct last_dispatch {
  int have;
  uint32_t guid;
  int64_t pid, id;
  size_t row;
} last_dispatch;

/* 1 when the dispatch (guid, pid, id) comes after last's in the order
 * the sorted query gives (the same dispatch does not). */
static int in_order(const events *ev, const last_dispatch *last, const char *guid, int64_t pid, int64_t id) {
  if (!last->have) return 1;
  int c = strcmp(ev->guids[last->guid], guid);
  return c != 0 ? c < 0 : last->pid != pid ? last->pid < pid : last->id <= id;
}

/* (guid, id) -> row added to ev. */
static lm_status push(events *ev, uint32_t guid, int64_t id, size_t row, const char *path, lm_diag *diag) {
  if (ev->n == ev->cap) {
    size_t cap = ev->cap ? 2 * ev->cap : 1024;
    event_row *e = lm_realloc(ev->e, cap * sizeof *e);
    if (!e) return lm_oom(diag, path);
    ev->e = e;
    ev->cap = cap;
  }
  event_row x = {guid, (uint32_t)row, id};
  if (ev->n > 0 && cmp_event(&ev->e[ev->n - 1], &x, NULL) > 0) ev->sorted = 0;
  ev->e[ev->n++] = x;
  return LM_OK;
}

/* One row of the dispatch query into the fold (rows of the same run,
 * process and dispatch id, which follow each other, are one); its event
 * id -> its row. *unordered is set (and nothing added) at a row out of
 * the sorted query's order when the query is not sorted. */
static lm_status fold_dispatch(lm_v3_fold *fold, lm_stmt *s, events *ev, last_dispatch *last, int *unordered,
                               lm_diag *diag) {
  const char *guid = lm_stmt_text(s, 0);
  int64_t pid = lm_stmt_int64(s, 1), id = lm_stmt_int64(s, 2);
  if (unordered && !in_order(ev, last, guid, pid, id)) {
    *unordered = 1;
    return LM_OK;
  }
  long g = guid_index(ev, guid, 1);
  if (g < 0) return lm_oom(diag, fold->t->path);
  lm_status st;
  if (!last->have || last->guid != (uint32_t)g || last->pid != pid || last->id != id) {
    size_t row;
    if ((st = lm_fold_add_row(fold->t, &row, diag)) != LM_OK) return st;
    int32_t k;
    if ((st = lm_fold_intern(fold->t, lm_stmt_text(s, 3), &k, diag)) != LM_OK) return st;
    fold->t->kernel[row] = k;
    for (int f = 0; f < LM_V3_N_FACTS; f++) fold->t->facts[f][row] = lm_stmt_double(s, 4 + f);
    *last = (last_dispatch){1, (uint32_t)g, pid, id, row};
  }
  if (lm_stmt_is_null(s, 14)) return LM_OK;
  return push(ev, (uint32_t)g, lm_stmt_int64(s, 14), last->row, fold->t->path, diag);
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

/* An event of dispatch (run, event id) into its row: counter k (name)
 * += v. Events of a dispatch, or a counter, not known are left out, as
 * the view's inner joins leave them out. *row caches the row of
 * (*last_guid, *last_id). */
typedef struct event_at {
  int64_t row, id;
  uint32_t guid;
} event_at;

static int64_t event_row_of(events *ev, event_at *at, uint32_t guid, int64_t id) {
  if (guid != at->guid || id != at->id) {
    at->row = event_find(ev, guid, id);
    at->guid = guid;
    at->id = id;
  }
  return at->row;
}

/* The column of counter p, found once. */
static lm_status pmc_column(lm_fold *t, pmc *p, lm_diag *diag) {
  return p->col != SIZE_MAX ? LM_OK : lm_fold_counter_lookup(t, p->name, &p->col, diag);
}

/* The counter events read straight from their table's pages (scan), in
 * stored order: rocpd_pmc_event's (a counter by its id) or, in the
 * earlier layout, pmc_events' (by its name). */
static lm_status fold_scanned(lm_v3_fold *fold, lm_sql_scan *scan, events *ev, lm_diag *diag) {
  int c_event = lm_sql_scan_column(scan, "event_id"),
      c_counter = lm_sql_scan_column(scan, ev->plain ? "name" : "pmc_id"), c_value = lm_sql_scan_column(scan, "value"),
      c_guid = lm_sql_scan_column(scan, "guid");
  event_at at = {.guid = UINT32_MAX};
  long guid = -1;
  size_t last_counter = (size_t)-1, guid_len = 0;
  char name[256];
  lm_status st = LM_OK;
  int r;
  while ((r = lm_sql_scan_next(scan, diag)) == 1) {
    size_t n;
    const char *g = lm_sql_scan_text(scan, c_guid, &n);
    if (!g) continue;
    if (guid < 0 || n != guid_len || memcmp(ev->guids[guid], g, n) != 0) {
      if ((guid = guid_index_n(ev, g, n)) < 0) continue; /* no dispatch of that run */
      guid_len = n;
    }
    if (lm_sql_scan_is_null(scan, c_event) || lm_sql_scan_is_null(scan, c_counter)) continue;
    int64_t row = event_row_of(ev, &at, (uint32_t)guid, lm_sql_scan_int64(scan, c_event));
    if (row < 0) continue;
    size_t k;
    const char *counter;
    if (ev->plain) {
      const char *t = lm_sql_scan_text(scan, c_counter, &n);
      if (!t || n >= sizeof name) continue; /* a number, or no counter's name */
      memcpy(name, t, n);
      name[n] = '\0';
      counter = name;
      st = counter_column(fold->t, name, &last_counter, &k, diag);
    } else {
      pmc *p = pmc_find(ev, (uint32_t)guid, lm_sql_scan_int64(scan, c_counter));
      if (!p) continue;
      st = pmc_column(fold->t, p, diag);
      counter = p->name;
      k = p->col;
    }
    if (st != LM_OK ||
        (st = add_value(fold, k, counter, (size_t)row, lm_sql_scan_double(scan, c_value), diag)) != LM_OK)
      return st;
  }
  return r < 0 ? (diag && diag->status ? diag->status : LM_EPARSE) : LM_OK;
}

/* The counter events through SQL, in stored order, into their
 * dispatches' rows. An event's run is compared in SQL with the first
 * run's (?1), its text read only when another. */
static lm_status fold_events(lm_v3_fold *fold, lm_sql *sql, events *ev, lm_diag *diag) {
  lm_stmt *s = NULL;
  lm_status st = lm_sql_prepare(sql, ev->plain ? event_query_plain : event_query, &s, diag);
  if (st != LM_OK) return st;
  if (ev->n_guids > 0) lm_stmt_bind_text(s, 1, ev->guids[0]);
  event_at at = {.guid = UINT32_MAX};
  long guid = -1;
  size_t last_counter = (size_t)-1;
  int r;
  while ((r = lm_stmt_step(s)) == 1) {
    if (lm_stmt_int64(s, 3) == 1) {
      guid = 0;
    } else {
      const char *g = lm_stmt_text(s, 4);
      if (guid <= 0 || strcmp(ev->guids[guid], g) != 0) guid = guid_index(ev, g, 0);
      if (guid < 0) continue; /* no dispatch of that run */
    }
    if (lm_stmt_is_null(s, 0) || lm_stmt_is_null(s, 1)) continue;
    int64_t row = event_row_of(ev, &at, (uint32_t)guid, lm_stmt_int64(s, 1));
    if (row < 0) continue;
    size_t k;
    const char *name;
    if (ev->plain) {
      name = lm_stmt_text(s, 0);
      st = counter_column(fold->t, name, &last_counter, &k, diag);
    } else {
      pmc *p = pmc_find(ev, (uint32_t)guid, lm_stmt_int64(s, 0));
      if (!p) continue;
      st = pmc_column(fold->t, p, diag);
      name = p->name;
      k = p->col;
    }
    if (st != LM_OK || (st = add_value(fold, k, name, (size_t)row, lm_stmt_double(s, 2), diag)) != LM_OK) break;
  }
  if (st == LM_OK && r < 0) st = lm_stmt_error(s, "reading the counter events", diag);
  lm_stmt_free(s);
  return st;
}

/* The table under rocpd's view `view` (`SELECT * FROM` its UUID-named
 * table) into table (cap bytes), or "" when it is another view; the name
 * itself when it is a table. */
static void table_under(lm_sql *sql, const char *view, char *table, size_t cap) {
  table[0] = '\0';
  lm_stmt *s = NULL;
  if (lm_sql_prepare(sql, "SELECT type, sql FROM sqlite_master WHERE name = ?", &s, NULL) == LM_OK &&
      (lm_stmt_bind_text(s, 1, view), lm_stmt_step(s) == 1)) {
    if (strcmp(lm_stmt_text(s, 0), "table") == 0) {
      snprintf(table, cap, "%s", view);
    } else {
      /* The statement without spaces, quotes and brackets, after AS. */
      const char *q = lm_stmt_text(s, 1);
      char flat[512], low[512];
      size_t n = 0;
      for (; *q && n + 1 < sizeof flat; q++)
        if (!strchr(" \t\r\n`\"[];", *q)) {
          low[n] = (char)tolower((unsigned char)*q);
          flat[n++] = *q;
        }
      flat[n] = low[n] = '\0';
      const char *as = strstr(low, "asselect*from"), *from = as ? flat + (as - low) + 13 : NULL;
      if (from && strncmp(from, view, strlen(view)) == 0 && strlen(from) < cap) snprintf(table, cap, "%s", from);
    }
  }
  lm_stmt_free(s);
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

/* The dispatches' keys from (run, dispatch id in rocpd_kernel_dispatch)
 * to (run, event id): the table read from its pages (its processes
 * checked here) when it can be, else through SQL. */
static lm_status dispatch_events(lm_sql *sql, const char *path, events *ev, lm_diag *diag) {
  events by_event = {.sorted = 1}, procs = {.sorted = 1};
  lm_sql_scan *scan = NULL;
  lm_stmt *s = NULL;
  char table[160];
  table_under(sql, "rocpd_kernel_dispatch", table, sizeof table);
  lm_status st = table[0] ? lm_sql_scan_open(sql, table, &scan, diag) : LM_ENOTFOUND;
  int c_guid = -1, c_id = -1, c_event = -1, c_pid = -1;
  if (st == LM_OK) {
    c_guid = lm_sql_scan_column(scan, "guid"), c_id = lm_sql_scan_column(scan, "id");
    c_event = lm_sql_scan_column(scan, "event_id"), c_pid = lm_sql_scan_column(scan, "pid");
  }
  if (st == LM_OK && c_guid >= 0 && c_id >= 0 && c_event >= 0 && c_pid >= 0) {
    /* The processes listed, as (run, id) keys. */
    if ((st = lm_sql_prepare(sql, "SELECT guid, id FROM rocpd_info_process", &s, diag)) != LM_OK) goto done;
    int r;
    while ((r = lm_stmt_step(s)) == 1) {
      long g = guid_index(ev, lm_stmt_text(s, 0), 0);
      if (g >= 0 && !lm_stmt_is_null(s, 1) &&
          (st = push(&procs, (uint32_t)g, lm_stmt_int64(s, 1), 0, path, diag)) != LM_OK)
        goto done;
    }
    if (r < 0) {
      st = lm_stmt_error(s, "reading the processes (rocpd_info_process)", diag);
      goto done;
    }
    events_sort(&procs);
    while ((r = lm_sql_scan_next(scan, diag)) == 1) {
      size_t n;
      const char *gt = lm_sql_scan_text(scan, c_guid, &n);
      long g = gt ? guid_index_n(ev, gt, n) : -1;
      if (g < 0 || lm_sql_scan_is_null(scan, c_event) || lm_sql_scan_is_null(scan, c_pid) ||
          event_find(&procs, (uint32_t)g, lm_sql_scan_int64(scan, c_pid)) < 0)
        continue;
      int64_t row = event_find(ev, (uint32_t)g, lm_sql_scan_int64(scan, c_id));
      if (row >= 0 &&
          (st = push(&by_event, (uint32_t)g, lm_sql_scan_int64(scan, c_event), (size_t)row, path, diag)) != LM_OK)
        goto done;
    }
    if (r < 0) {
      st = diag && diag->status ? diag->status : LM_EPARSE;
      goto done;
    }
  } else {
    if (st != LM_OK && st != LM_ENOTFOUND) goto done;
    if ((st = lm_sql_prepare(sql, dispatch_events_query, &s, diag)) != LM_OK) goto done;
    int r;
    while ((r = lm_stmt_step(s)) == 1) {
      long g = guid_index(ev, lm_stmt_text(s, 0), 0);
      if (g < 0 || lm_stmt_is_null(s, 2)) continue;
      int64_t row = event_find(ev, (uint32_t)g, lm_stmt_int64(s, 1));
      if (row >= 0 && (st = push(&by_event, (uint32_t)g, lm_stmt_int64(s, 2), (size_t)row, path, diag)) != LM_OK)
        goto done;
    }
    if (r < 0) {
      st = lm_stmt_error(s, "reading the kernel dispatches' events", diag);
      goto done;
    }
  }
  events_sort(&by_event);
  event_row *swap = ev->e;
  ev->e = by_event.e, ev->n = by_event.n, ev->cap = by_event.cap, ev->next = 0;
  by_event.e = swap;
  st = LM_OK;
done:
  lm_sql_scan_free(scan);
  lm_stmt_free(s);
  lm_free(by_event.e);
  lm_free(procs.e);
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
  events ev = {.sorted = 1};
  last_dispatch last = {0};
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
  /* The stored order first; sorted when it was not the dispatches'. */
  int unordered = 0;
  for (int sorted = 0; sorted < 2; sorted++) {
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
    if ((st = lm_fold_drop_rows(fold->t, diag)) != LM_OK) goto done;
    ev.n = 0;
    ev.sorted = 1;
    last = (last_dispatch){0};
  }
  events_sort(&ev);
  if (!ev.plain &&
      ((st = dispatch_events(sql, path, &ev, diag)) != LM_OK || (st = read_counters(sql, path, &ev, diag)) != LM_OK))
    goto done;
  /* rocpd's events straight from their table's pages when it can be read
   * so and has the columns, else through SQL. */
  char table[160] = "pmc_events";
  if (!ev.plain) table_under(sql, "rocpd_pmc_event", table, sizeof table);
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
  events_free(&ev);
  return st;
}
