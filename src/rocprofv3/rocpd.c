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
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "rocprofv3/rocprofv3_private.h"
#include "sql/sql.h"

/* The queries of the two layouts: rocpd's views (a dispatch's counter
 * events name it by pid and dispatch id, the counter as counter_name) and
 * the earlier one (by event id, the counter as name). %s: the VGPR column. */
static const char dispatch_query[] =
    "SELECT guid, pid, dispatch_id, name, agent_type_index, grid_x * grid_y * grid_z,"
    " workgroup_x * workgroup_y * workgroup_z, lds_size, scratch_size, %s, accum_vgpr_count,"
    " sgpr_count, start, \"end\", %s FROM kernels ORDER BY guid, pid, dispatch_id";
static const char event_query[] = "SELECT pid, dispatch_id, counter_name, counter_value, guid FROM pmc_events";
static const char event_query_by_id[] = "SELECT 0, event_id, name, value, guid FROM pmc_events";
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

/* A dispatch's counter events: (run, pid, dispatch id) or (run, 0, event
 * id) -> fold row. */
typedef struct event_row {
  uint32_t guid; /* index in the runs' guids */
  uint32_t row;
  int64_t a, b;
} event_row;

/* The dispatches' keys (sorted once read, the last dispatch of a key
 * kept, as a map's put would), and the runs' guids. */
typedef struct events {
  int by_id; /* the earlier layout: events name their dispatch by event id */
  event_row *e;
  size_t n, cap, next; /* next: the entry after the last one found */
  int sorted;
  char **guids;
  size_t n_guids;
} events;

static void events_free(events *ev) {
  for (size_t i = 0; i < ev->n_guids; i++) lm_free(ev->guids[i]);
  lm_free(ev->guids);
  lm_free(ev->e);
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

static int cmp_event(const void *a, const void *b, void *ctx) {
  (void)ctx;
  const event_row *x = a, *y = b;
  if (x->guid != y->guid) return x->guid < y->guid ? -1 : 1;
  if (x->a != y->a) return x->a < y->a ? -1 : 1;
  if (x->b != y->b) return x->b < y->b ? -1 : 1;
  return (x->row > y->row) - (x->row < y->row);
}

static int before(const event_row *x, const event_row *key) {
  return x->guid != key->guid ? x->guid < key->guid : x->a != key->a ? x->a < key->a : x->b < key->b;
}

static int same(const event_row *x, const event_row *y) { return x->guid == y->guid && x->a == y->a && x->b == y->b; }

/* Sort the ids read, keeping the last dispatch of each. */
static void events_sort(events *ev) {
  if (!ev->sorted) lm_sort(ev->e, ev->n, sizeof *ev->e, cmp_event, NULL);
  size_t m = 0;
  for (size_t i = 0; i < ev->n; i++) {
    if (m > 0 && same(&ev->e[m - 1], &ev->e[i])) m--;
    ev->e[m++] = ev->e[i];
  }
  ev->n = m;
}

/* The row of the dispatch of key, or -1: the entry after the last found
 * is tried first (the events follow their dispatches' order). */
static int64_t event_find(events *ev, const event_row *key) {
  size_t i = ev->next;
  if (!(i < ev->n && same(&ev->e[i], key))) {
    size_t lo = 0, hi = ev->n;
    while (lo < hi) {
      size_t mid = lo + (hi - lo) / 2;
      if (before(&ev->e[mid], key))
        lo = mid + 1;
      else
        hi = mid;
    }
    if (lo == ev->n || !same(&ev->e[lo], key)) return -1;
    i = lo;
  }
  ev->next = i + 1;
  return ev->e[i].row;
}

/* The dispatch read last: its run, process and id, and its row. */
typedef struct last_dispatch {
  int have;
  uint32_t guid;
  int64_t pid, id;
  size_t row;
} last_dispatch;

/* One row of the dispatch query into the fold (rows of the same run,
 * process and dispatch id, which follow each other, are one); its key ->
 * its row. */
static lm_status fold_dispatch(lm_v3_fold *fold, lm_stmt *s, events *ev, last_dispatch *last, lm_diag *diag) {
  long g = guid_index(ev, lm_stmt_text(s, 0), 1);
  if (g < 0) return lm_oom(diag, fold->t->path);
  int64_t pid = lm_stmt_int64(s, 1), id = lm_stmt_int64(s, 2);
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
  if (ev->n == ev->cap) {
    size_t cap = ev->cap ? 2 * ev->cap : 1024;
    event_row *e = lm_realloc(ev->e, cap * sizeof *e);
    if (!e) return lm_oom(diag, fold->t->path);
    ev->e = e;
    ev->cap = cap;
  }
  event_row x = {(uint32_t)g, (uint32_t)last->row, ev->by_id ? 0 : pid, lm_stmt_int64(s, 14)};
  if (ev->n > 0 && cmp_event(&ev->e[ev->n - 1], &x, NULL) > 0) ev->sorted = 0;
  ev->e[ev->n++] = x;
  return LM_OK;
}

/* Counter name of row += v: the first instance sets the cell (and its
 * "_sum" twin), the others add to both. The counter expected next is tried
 * first, then *last, the counter of the last event (one counter's
 * instances follow each other). */
static lm_status add_value(lm_v3_fold *fold, const char *name, size_t row, double v, size_t *last, lm_diag *diag) {
  lm_fold *t = fold->t;
  size_t k = t->guess;
  if (k < t->n_counters && strcmp(t->counter_names[k], name) == 0) {
    t->guess = k + 1 < t->n_counters ? k + 1 : 0;
  } else if ((k = *last) >= t->n_counters || strcmp(t->counter_names[k], name) != 0) {
    lm_status st = lm_fold_counter_lookup(t, name, &k, diag);
    if (st != LM_OK) return st;
  }
  *last = k;
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

/* The counter events, in stored order, into their dispatches' rows. The
 * run of each is compared as text with the run of the one before (a filter
 * on the run in SQL costs more than the whole comparison here). */
static lm_status fold_events(lm_v3_fold *fold, lm_sql *sql, events *ev, lm_diag *diag) {
  lm_stmt *s = NULL;
  lm_status st = lm_sql_prepare(sql, ev->by_id ? event_query_by_id : event_query, &s, diag);
  if (st != LM_OK) return st;
  events_sort(ev);
  int64_t row = -1;
  event_row key = {0}, last = {.guid = UINT32_MAX};
  long guid = -1;
  size_t last_counter = (size_t)-1;
  int r;
  while ((r = lm_stmt_step(s)) == 1) {
    if (lm_stmt_is_null(s, 2)) continue;
    const char *g = lm_stmt_text(s, 4);
    if (guid < 0 || strcmp(ev->guids[guid], g) != 0) guid = guid_index(ev, g, 0);
    key = (event_row){guid < 0 ? UINT32_MAX - 1 : (uint32_t)guid, 0, lm_stmt_int64(s, 0), lm_stmt_int64(s, 1)};
    if (!same(&key, &last)) {
      row = guid < 0 ? -1 : event_find(ev, &key); /* no dispatch: the join's */
      last = key;
    }
    if (row >= 0 &&
        (st = add_value(fold, lm_stmt_text(s, 2), (size_t)row, lm_stmt_double(s, 3), &last_counter, diag)) != LM_OK)
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

lm_status lm_v3_rocpd_read(const char *path, lm_v3_fold *fold, lm_v3_agents *agents, lm_diag *diag) {
  lm_sql *sql = NULL;
  lm_stmt *s = NULL;
  events ev = {.sorted = 1};
  last_dispatch last = {0};
  lm_status st = lm_sql_open(path, LM_DB_READ, &sql, diag);
  if (st != LM_OK) goto done;
  if ((st = read_agents(sql, path, agents, diag)) != LM_OK) goto done;
  ev.by_id = !has_column(sql, "pmc_events", "counter_name");
  char query[sizeof dispatch_query + 32];
  snprintf(query, sizeof query, dispatch_query,
           has_column(sql, "kernels", "arch_vgpr_count") ? "arch_vgpr_count" : "vgpr_count",
           ev.by_id ? "event_id" : "dispatch_id");
  if ((st = lm_sql_prepare(sql, query, &s, diag)) != LM_OK) goto done;
  fold->gpus_numbered = 1;
  fold->t->has_last = 0;
  int r;
  while ((r = lm_stmt_step(s)) == 1)
    if ((st = fold_dispatch(fold, s, &ev, &last, diag)) != LM_OK) goto done;
  if (r < 0) {
    st = lm_stmt_error(s, "reading the kernel dispatches", diag);
    goto done;
  }
  st = fold_events(fold, sql, &ev, diag);
done:
  lm_stmt_free(s);
  lm_sql_close(sql);
  events_free(&ev);
  return st;
}
