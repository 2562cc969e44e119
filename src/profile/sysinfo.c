/*
 * sysinfo.c - the system information of a profile whose backend learns
 * it inside the application (the CUPTI adapter writes it as S lines of
 * its records once the driver is up): the fields of the first successful
 * run's first process that reported any, behind the fields every workload
 * carries (name, command, blocks, time, lumen's version, host), which
 * composition fills in. One process's view is taken whole, never mixed
 * with another's: the processes of one application may drive different
 * GPUs.
 */
#include <math.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "profile/collect.h"

/* The leading fields of every workload's system information (the
 * reference tool's order); composition fills them. */
static const char *const leading[] = {"workload_name", "command", "ip_blocks", "timestamp", "version",
                                      "hostname", NULL};

static int is_leading(const char *key) {
  for (const char *const *k = leading; *k; k++)
    if (strcmp(*k, key) == 0) return 1;
  return 0;
}

static lm_status oom(lm_diag *diag) { return lm_diag_set(diag, LM_ENOMEM, NULL, 0, 0, NULL, "out of memory"); }

static double number_of(const char *text) {
  char *end = NULL;
  double v = text && *text ? strtod(text, &end) : LM_NAN;
  return end && *end == '\0' ? v : LM_NAN;
}

lm_status lm_collect_device_sysinfo(sqlite3 *db, int64_t wid, lm_workload **out, lm_diag *diag) {
  *out = NULL;
  sqlite3_stmt *q = NULL;
  lm_arena *arena = NULL;
  lm_status st = LM_OK;
  int run = -1;
  sqlite3_int64 pid = 0;
  char host[256] = "";
  const char *db_path = sqlite3_db_filename(db, "main");
  if (sqlite3_prepare_v2(db, "SELECT s.run_id, s.pid, p.host FROM profile_sysinfo s JOIN profile_run r ON "
                             "r.workload_id = s.workload_id AND r.id = s.run_id LEFT JOIN profile_process p "
                             "ON p.workload_id = s.workload_id AND p.run_id = s.run_id AND p.pid = s.pid "
                             "WHERE s.workload_id = ? AND r.status = 'ok' ORDER BY s.run_id, s.pid LIMIT 1",
                         -1, &q, NULL) != SQLITE_OK)
    return lm_collect_sql_error(db, diag);
  sqlite3_bind_int64(q, 1, wid);
  if (sqlite3_step(q) == SQLITE_ROW) {
    run = sqlite3_column_int(q, 0);
    pid = sqlite3_column_int64(q, 1);
    const unsigned char *h = sqlite3_column_text(q, 2);
    snprintf(host, sizeof host, "%s", h ? (const char *)h : "");
  }
  sqlite3_finalize(q);
  q = NULL;
  if (run < 0)
    return lm_diag_set(diag, LM_EDATA, db_path, 0, 0, "gpu_arch",
                       "no successful run reported the device's system information (the tool "
                       "library writes it at the first kernel launch)");
  size_t n = 0, cap = 0;
  if (sqlite3_prepare_v2(db, "SELECT COUNT(*) FROM profile_sysinfo WHERE workload_id = ? AND run_id = ? AND pid = ?",
                         -1, &q, NULL) != SQLITE_OK)
    return lm_collect_sql_error(db, diag);
  sqlite3_bind_int64(q, 1, wid);
  sqlite3_bind_int(q, 2, run);
  sqlite3_bind_int64(q, 3, pid);
  if (sqlite3_step(q) == SQLITE_ROW) cap = (size_t)sqlite3_column_int64(q, 0);
  sqlite3_finalize(q);
  q = NULL;
  cap += LM_ARRAY_LEN(leading);
  arena = lm_arena_new(1 << 12);
  lm_workload *w = arena ? lm_arena_alloc(arena, sizeof *w) : NULL;
  if (!w) {
    st = oom(diag);
    goto fail;
  }
  w->arena = arena;
  lm_sysinfo *si = &w->sysinfo;
  si->names = lm_arena_alloc(arena, cap * sizeof *si->names);
  si->texts = lm_arena_alloc(arena, cap * sizeof *si->texts);
  si->values = lm_arena_alloc(arena, cap * sizeof *si->values);
  if (!si->names || !si->texts || !si->values) {
    st = oom(diag);
    goto fail;
  }
  for (const char *const *k = leading; *k; k++) {
    si->names[n] = *k;
    si->texts[n] = strcmp(*k, "hostname") == 0 ? lm_arena_strdup(arena, host) : "";
    si->values[n++] = LM_NAN;
  }
  if (sqlite3_prepare_v2(db, "SELECT key, value FROM profile_sysinfo WHERE workload_id = ? AND run_id = ? AND "
                             "pid = ? ORDER BY position", -1, &q, NULL) != SQLITE_OK) {
    st = lm_collect_sql_error(db, diag);
    goto fail;
  }
  sqlite3_bind_int64(q, 1, wid);
  sqlite3_bind_int(q, 2, run);
  sqlite3_bind_int64(q, 3, pid);
  while (n < cap && sqlite3_step(q) == SQLITE_ROW) {
    const char *key = (const char *)sqlite3_column_text(q, 0);
    const char *value = (const char *)sqlite3_column_text(q, 1);
    if (!key || !*key || is_leading(key)) continue;
    si->names[n] = lm_arena_strdup(arena, key);
    si->texts[n] = lm_arena_strdup(arena, value ? value : "");
    if (!si->names[n] || !si->texts[n]) {
      st = oom(diag);
      goto fail;
    }
    si->values[n++] = number_of(value);
  }
  sqlite3_finalize(q);
  q = NULL;
  si->n_fields = n;
  w->arch = lm_sysinfo_text(si, "gpu_arch");
  if (!w->arch || !*w->arch) {
    st = lm_diag_set(diag, LM_EDATA, db_path, 0, 0, "gpu_arch",
                     "the system information of run %d (process %lld) has no gpu_arch", run, (long long)pid);
    goto fail;
  }
  *out = w;
  return LM_OK;
fail:
  sqlite3_finalize(q);
  lm_arena_free(arena);
  return st;
}
