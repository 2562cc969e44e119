/*
 * rocpd_kernels.c - rocpd's `kernels` view made from the tables under it.
 * Through SQLite the view costs some 8,000 instructions a dispatch: each
 * row of rocpd_kernel_dispatch looks up its agent, event, region name,
 * kernel symbol, queue, process and thread by rowid and compares their
 * runs as text. All of those tables but the events are small (a row per
 * agent, kernel, queue, process, thread or string), so they are read once
 * into sorted keys, the dispatches are read from their table's pages, and
 * each join is a binary search here. The events table may hold every
 * traced API call; it is read whole only when it is not much larger than
 * the dispatches, else each dispatch's event is looked up.
 *
 * The view is made here only when its statement has the joins this file
 * makes (rocpd's `kernels` since the view joined processes and threads);
 * any other is read through SQLite.
 */
#include <math.h>
#include <string.h>

#include "rocprofv3/rocpd_private.h"

/* The joins of the view made here, as its statement has them once spaces
 * and quotes are dropped, and the columns read from it. */
static const char *const view_parts[] = {
    "FROMrocpd_kernel_dispatchK",
    "INNERJOINrocpd_info_agentAONA.id=K.agent_idANDA.guid=K.guid",
    "INNERJOINrocpd_eventEONE.id=K.event_idANDE.guid=K.guid",
    "INNERJOINrocpd_stringRONR.id=K.region_name_idANDR.guid=K.guid",
    "INNERJOINrocpd_info_kernel_symbolSONS.id=K.kernel_idANDS.guid=K.guid",
    "LEFTJOINrocpd_info_queueQONQ.id=K.queue_idANDQ.guid=K.guid",
    "INNERJOINrocpd_info_processPONP.id=Q.pidANDP.guid=Q.guid",
    "INNERJOINrocpd_info_threadTONT.id=K.tidANDT.guid=K.guid",
    "S.display_nameASname",
    "P.pid,",
    "A.type_indexASagent_type_index",
    "K.group_segment_sizeASlds_size",
    "K.private_segment_sizeASscratch_size",
    "S.arch_vgpr_countASvgpr_count",
    "S.accum_vgpr_count,",
    "S.sgpr_count,",
};

/* The columns of rocpd_kernel_dispatch read. */
enum {
  K_GUID,
  K_PID,
  K_TID,
  K_AGENT,
  K_KERNEL,
  K_DISPATCH,
  K_QUEUE,
  K_START,
  K_END,
  K_SCRATCH,
  K_LDS,
  K_WG_X,
  K_WG_Y,
  K_WG_Z,
  K_GRID_X,
  K_GRID_Y,
  K_GRID_Z,
  K_REGION,
  K_EVENT,
  K_N
};
static const char *const k_names[K_N] = {"guid",
                                         "pid",
                                         "tid",
                                         "agent_id",
                                         "kernel_id",
                                         "dispatch_id",
                                         "queue_id",
                                         "start",
                                         "end",
                                         "private_segment_size",
                                         "group_segment_size",
                                         "workgroup_size_x",
                                         "workgroup_size_y",
                                         "workgroup_size_z",
                                         "grid_size_x",
                                         "grid_size_y",
                                         "grid_size_z",
                                         "region_name_id",
                                         "event_id"};

/* A kernel symbol: its name (interned at its first dispatch) and
 * registers. */
typedef struct symbol {
  char *name;
  int32_t kernel; /* -1 until interned */
  double vgpr, accum, sgpr;
} symbol;

/* A queue's process (by its id in rocpd_info_process), when it has one. */
typedef struct queue_row {
  int has_pid;
  int64_t pid;
} queue_row;

/* The small tables, as (run, id) -> index into their values. */
typedef struct tables {
  lm_v3_keys agent, symbol, queue, process, thread, string, event;
  double *agent_type;
  symbol *sym;
  queue_row *queues;
  int64_t *process_pid;
  size_t n_sym, cap_agent, cap_sym, cap_queue, cap_process;
  lm_stmt *event_lookup; /* when the events are not read whole */
} tables;

static void tables_free(tables *t) {
  lm_v3_keys *k[] = {&t->agent, &t->symbol, &t->queue, &t->process, &t->thread, &t->string, &t->event};
  for (size_t i = 0; i < LM_ARRAY_LEN(k); i++) lm_v3_keys_free(k[i]);
  for (size_t i = 0; i < t->n_sym; i++) lm_free(t->sym[i].name);
  lm_free(t->sym);
  lm_free(t->agent_type);
  lm_free(t->queues);
  lm_free(t->process_pid);
  lm_stmt_free(t->event_lookup);
}

/* 1 when the view's statement has every join and column made here. */
static int view_is_known(lm_sql *sql) {
  lm_stmt *s = NULL;
  int known = 0;
  if (lm_sql_prepare(sql, "SELECT sql FROM sqlite_master WHERE type = 'view' AND name = 'kernels'", &s, NULL) ==
          LM_OK &&
      lm_stmt_step(s) == 1) {
    const char *q = lm_stmt_text(s, 0);
    size_t n = strlen(q), m = 0;
    char *flat = lm_malloc(n + 1);
    if (flat) {
      for (; *q; q++)
        if (!strchr(" \t\r\n`\"", *q)) flat[m++] = *q;
      flat[m] = '\0';
      known = 1;
      for (size_t i = 0; i < LM_ARRAY_LEN(view_parts) && known; i++) known = strstr(flat, view_parts[i]) != NULL;
      /* No other join: the known ones and the stream's (LEFT JOIN). */
      size_t joins = 0;
      for (const char *p = flat; (p = strstr(p, "JOIN")) != NULL; p += 4) joins++;
      known = known && joins == 8 && strstr(flat, "LEFTJOINrocpd_info_streamSTONST.id=K.stream_idANDST.guid=K.guid");
      lm_free(flat);
    }
  }
  lm_stmt_free(s);
  return known;
}

/* Reads query's rows (guid, id, values...) into keys; each row's index
 * is the count before it, and take stores its values (NULL: none). */
typedef lm_status (*take_fn)(tables *t, lm_stmt *s, size_t i, lm_diag *diag);

static lm_status load(lm_sql *sql, const char *path, lm_v3_rocpd *r, tables *t, const char *query, lm_v3_keys *k,
                      take_fn take, lm_diag *diag) {
  lm_stmt *s = NULL;
  lm_status st = lm_sql_prepare(sql, query, &s, diag);
  if (st != LM_OK) return st;
  int rc;
  size_t i = 0;
  while ((rc = lm_stmt_step(s)) == 1) {
    const char *g = lm_stmt_text(s, 0);
    long run = lm_v3_rocpd_run(r, g, strlen(g), 0);
    if (run < 0 || lm_stmt_is_null(s, 1)) continue; /* no dispatch of that run, or never joined */
    if ((st = lm_v3_keys_push(k, (uint32_t)run, lm_stmt_int64(s, 1), i, path, diag)) != LM_OK ||
        (take && (st = take(t, s, i, diag)) != LM_OK))
      break;
    i++;
  }
  if (st == LM_OK && rc < 0) st = lm_stmt_error(s, query, diag);
  lm_stmt_free(s);
  lm_v3_keys_sort(k);
  return st;
}

static lm_status take_agent(tables *t, lm_stmt *s, size_t i, lm_diag *diag) {
  double *a = lm_grow(t->agent_type, &t->cap_agent, i, sizeof *a);
  if (!a) return lm_oom(diag, NULL);
  t->agent_type = a;
  a[i] = lm_stmt_double(s, 2);
  return LM_OK;
}

static lm_status take_symbol(tables *t, lm_stmt *s, size_t i, lm_diag *diag) {
  symbol *y = lm_grow(t->sym, &t->cap_sym, i, sizeof *y);
  if (!y) return lm_oom(diag, NULL);
  t->sym = y;
  t->sym[i] =
      (symbol){lm_strdup(lm_stmt_text(s, 2)), -1, lm_stmt_double(s, 3), lm_stmt_double(s, 4), lm_stmt_double(s, 5)};
  t->n_sym = i + 1;
  return t->sym[i].name ? LM_OK : lm_oom(diag, NULL);
}

static lm_status take_queue(tables *t, lm_stmt *s, size_t i, lm_diag *diag) {
  queue_row *q = lm_grow(t->queues, &t->cap_queue, i, sizeof *q);
  if (!q) return lm_oom(diag, NULL);
  t->queues = q;
  t->queues[i] = (queue_row){!lm_stmt_is_null(s, 2), lm_stmt_int64(s, 2)};
  return LM_OK;
}

static lm_status take_process(tables *t, lm_stmt *s, size_t i, lm_diag *diag) {
  int64_t *pid = lm_grow(t->process_pid, &t->cap_process, i, sizeof *pid);
  if (!pid) return lm_oom(diag, NULL);
  t->process_pid = pid;
  t->process_pid[i] = lm_stmt_int64(s, 2);
  return LM_OK;
}

/* The events of the runs: read whole (their ids) when the table is at
 * most four times the dispatches, else a statement finds each one. */
static lm_status load_events(lm_sql *sql, const char *path, lm_v3_rocpd *r, tables *t, size_t dispatches,
                             lm_diag *diag) {
  lm_stmt *s = NULL;
  int64_t max = 0;
  if (lm_sql_prepare(sql, "SELECT max(id) FROM rocpd_event", &s, diag) == LM_OK && lm_stmt_step(s) == 1)
    max = lm_stmt_int64(s, 0);
  lm_stmt_free(s);
  if (max >= 0 && (uint64_t)max <= 4 * (uint64_t)dispatches + 1024)
    return load(sql, path, r, t, "SELECT guid, id FROM rocpd_event", &t->event, NULL, diag);
  return lm_sql_prepare(sql, "SELECT 1 FROM rocpd_event WHERE id = ?1 AND guid = ?2", &t->event_lookup, diag);
}

static int has(lm_v3_keys *k, uint32_t run, int64_t id) { return lm_v3_keys_find(k, run, id) >= 0; }

static int event_exists(tables *t, const lm_v3_rocpd *r, uint32_t run, int64_t id) {
  if (!t->event_lookup) return has(&t->event, run, id);
  lm_stmt_reset(t->event_lookup);
  lm_stmt_bind_int64(t->event_lookup, 1, id);
  lm_stmt_bind_text(t->event_lookup, 2, r->guids[run]);
  return lm_stmt_step(t->event_lookup) == 1;
}

/* a * b * c of integer columns as SQLite computes it: an integer, a
 * double when that overflows, NaN (NULL) when one is NULL. */
static double product(lm_sql_scan *scan, int a, int b, int c) {
  if (lm_sql_scan_is_null(scan, a) || lm_sql_scan_is_null(scan, b) || lm_sql_scan_is_null(scan, c)) return LM_NAN;
  int64_t x = lm_sql_scan_int64(scan, a), y = lm_sql_scan_int64(scan, b), z = lm_sql_scan_int64(scan, c), xy, xyz;
  if (!__builtin_mul_overflow(x, y, &xy) && !__builtin_mul_overflow(xy, z, &xyz)) return (double)xyz;
  return (double)x * (double)y * (double)z;
}

/* One dispatch of the table into the fold, when every join of the view
 * finds its row. */
static lm_status dispatch(lm_sql_scan *scan, const int *c, lm_v3_fold *fold, lm_v3_rocpd *r, tables *t,
                          lm_v3_last *last, int *unordered, lm_diag *diag) {
  size_t n;
  const char *gt = lm_sql_scan_text(scan, c[K_GUID], &n);
  if (!gt) return LM_OK;
  for (int k = K_TID; k <= K_QUEUE; k++)
    if (k != K_DISPATCH && lm_sql_scan_is_null(scan, c[k])) return LM_OK;
  if (lm_sql_scan_is_null(scan, c[K_REGION]) || lm_sql_scan_is_null(scan, c[K_EVENT])) return LM_OK;
  long g = lm_v3_rocpd_run(r, gt, n, 1);
  if (g < 0) return lm_oom(diag, fold->t->path);
  uint32_t run = (uint32_t)g;
  int64_t agent = lm_v3_keys_find(&t->agent, run, lm_sql_scan_int64(scan, c[K_AGENT]));
  int64_t sym = lm_v3_keys_find(&t->symbol, run, lm_sql_scan_int64(scan, c[K_KERNEL]));
  int64_t queue = lm_v3_keys_find(&t->queue, run, lm_sql_scan_int64(scan, c[K_QUEUE]));
  if (agent < 0 || sym < 0 || queue < 0 || !t->queues[queue].has_pid ||
      !has(&t->thread, run, lm_sql_scan_int64(scan, c[K_TID])) ||
      !has(&t->string, run, lm_sql_scan_int64(scan, c[K_REGION])))
    return LM_OK;
  int64_t proc = lm_v3_keys_find(&t->process, run, t->queues[queue].pid);
  int64_t event = lm_sql_scan_int64(scan, c[K_EVENT]);
  if (proc < 0 || !event_exists(t, r, run, event)) return LM_OK;
  int64_t pid = t->process_pid[proc], id = lm_sql_scan_int64(scan, c[K_DISPATCH]);
  if (!lm_v3_rocpd_in_order(r, last, r->guids[run], pid, id)) {
    *unordered = 1;
    return LM_OK;
  }
  lm_status st;
  if (!last->have || last->guid != run || last->pid != pid || last->id != id) {
    size_t row;
    symbol *y = &t->sym[sym];
    if (y->kernel < 0 && (st = lm_fold_intern(fold->t, y->name, &y->kernel, diag)) != LM_OK) return st;
    if ((st = lm_fold_add_row(fold->t, &row, diag)) != LM_OK) return st;
    fold->t->kernel[row] = y->kernel;
    const double facts[LM_V3_N_FACTS] = {t->agent_type[agent],
                                         product(scan, c[K_GRID_X], c[K_GRID_Y], c[K_GRID_Z]),
                                         product(scan, c[K_WG_X], c[K_WG_Y], c[K_WG_Z]),
                                         lm_sql_scan_double(scan, c[K_LDS]),
                                         lm_sql_scan_double(scan, c[K_SCRATCH]),
                                         y->vgpr,
                                         y->accum,
                                         y->sgpr,
                                         lm_sql_scan_double(scan, c[K_START]),
                                         lm_sql_scan_double(scan, c[K_END])};
    for (int f = 0; f < LM_V3_N_FACTS; f++) fold->t->facts[f][row] = facts[f];
    *last = (lm_v3_last){1, run, pid, id, row};
  }
  /* Its counter events, when its own process is listed (pmc_events). */
  if (!has(&t->process, run, lm_sql_scan_int64(scan, c[K_PID]))) return LM_OK;
  return lm_v3_keys_push(&r->ev, run, event, last->row, fold->t->path, diag);
}

lm_status lm_v3_rocpd_kernels(lm_sql *sql, lm_v3_fold *fold, lm_v3_rocpd *r, int *unordered, lm_diag *diag) {
  const char *path = fold->t->path;
  tables t = {0};
  lm_sql_scan *scan = NULL;
  lm_v3_last last = {0};
  char table[160];
  int c[K_N];
  *unordered = 0;
  lm_v3_rocpd_table_under(sql, "rocpd_kernel_dispatch", table, sizeof table);
  lm_status st = view_is_known(sql) && table[0] ? lm_sql_scan_open(sql, table, &scan, diag) : LM_ENOTFOUND;
  if (st != LM_OK) goto done;
  for (int k = 0; k < K_N; k++)
    if ((c[k] = lm_sql_scan_column(scan, k_names[k])) < 0) {
      st = LM_ENOTFOUND;
      goto done;
    }
  /* The runs, in the dispatches' order, before the tables keyed by them. */
  lm_stmt *s = NULL;
  if ((st = lm_sql_prepare(sql, "SELECT DISTINCT guid FROM rocpd_info_agent", &s, diag)) != LM_OK) goto done;
  while (lm_stmt_step(s) == 1) {
    const char *g = lm_stmt_text(s, 0);
    if (lm_v3_rocpd_run(r, g, strlen(g), 1) < 0) {
      lm_stmt_free(s);
      st = lm_oom(diag, path);
      goto done;
    }
  }
  lm_stmt_free(s);
  if ((st = load(sql, path, r, &t, "SELECT guid, id, type_index FROM rocpd_info_agent", &t.agent, take_agent, diag)) !=
          LM_OK ||
      (st = load(sql, path, r, &t,
                 "SELECT guid, id, display_name, arch_vgpr_count, accum_vgpr_count, sgpr_count"
                 " FROM rocpd_info_kernel_symbol",
                 &t.symbol, take_symbol, diag)) != LM_OK ||
      (st = load(sql, path, r, &t, "SELECT guid, id, pid FROM rocpd_info_queue", &t.queue, take_queue, diag)) !=
          LM_OK ||
      (st = load(sql, path, r, &t, "SELECT guid, id, pid FROM rocpd_info_process", &t.process, take_process, diag)) !=
          LM_OK ||
      (st = load(sql, path, r, &t, "SELECT guid, id FROM rocpd_info_thread", &t.thread, NULL, diag)) != LM_OK ||
      (st = load(sql, path, r, &t, "SELECT guid, id FROM rocpd_string", &t.string, NULL, diag)) != LM_OK ||
      (st = load_events(sql, path, r, &t, fold->t->cap_rows, diag)) != LM_OK)
    goto done;
  int rc = 0;
  while (!*unordered && (rc = lm_sql_scan_next(scan, diag)) == 1)
    if ((st = dispatch(scan, c, fold, r, &t, &last, unordered, diag)) != LM_OK) goto done;
  if (!*unordered && rc < 0) st = diag && diag->status ? diag->status : LM_EPARSE;
done:
  /* A table not read so, or a statement the file's schema refuses (an
   * older rocpd): the view is read instead. */
  if (st != LM_OK && st != LM_ENOMEM && st != LM_EPARSE) {
    lm_diag_clear(diag);
    st = LM_ENOTFOUND;
  }
  lm_sql_scan_free(scan);
  tables_free(&t);
  return st;
}
