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
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "collect/collect.h"
#include "sql/sql.h"
#include "db/db.h"

/* The leading fields of every workload's system information (the
 * reference tool's order); composition fills them. */
static const char *const leading[] = {"workload_name", "command", "ip_blocks", "timestamp", "version",
                                      "hostname", NULL};

static int is_leading(const char *key) {
  for (const char *const *k = leading; *k; k++)
    if (strcmp(*k, key) == 0) return 1;
  return 0;
}

static lm_status oom(lm_diag *diag) { return lm_oom(diag, NULL); }

static double number_of(const char *text) {
  char *end = NULL;
  double v = text && *text ? strtod(text, &end) : LM_NAN;
  return end && *end == '\0' ? v : LM_NAN;
}

/* What reading the S lines fills: the workload's system information. */
typedef struct sysinfo_fill {
  lm_arena *arena;
  lm_sysinfo *si;
  size_t n, cap;
} sysinfo_fill;

static lm_status add_field(const char *key, const char *value, void *user, lm_diag *diag) {
  sysinfo_fill *f = user;
  lm_sysinfo *si = f->si;
  if (f->n >= f->cap || !key || !*key || is_leading(key)) return LM_OK;
  si->names[f->n] = lm_arena_strdup(f->arena, key);
  si->texts[f->n] = lm_arena_strdup(f->arena, value ? value : "");
  if (!si->names[f->n] || !si->texts[f->n]) return oom(diag);
  si->values[f->n++] = number_of(value);
  return LM_OK;
}

lm_status lm_collect_device_sysinfo(lm_sql *db, int64_t wid, lm_workload **out, lm_diag *diag) {
  *out = NULL;
  lm_arena *arena = NULL;
  int run = -1, found = 0;
  int64_t pid = 0;
  char host[256] = "";
  const char *db_path = lm_db_path(db);
  lm_status st = lm_db_sysinfo_source(db, wid, &found, &run, &pid, host, sizeof host, diag);
  if (st != LM_OK) return st;
  if (!found)
    return lm_fail_at(diag, LM_EDATA, db_path, 0, "gpu_arch",
                      "no successful run reported the device's system information (the tool "
                      "library writes it at the first kernel launch)");
  size_t n = 0, cap = 0;
  if ((st = lm_db_sysinfo_count(db, wid, run, pid, &cap, diag)) != LM_OK) return st;
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
  sysinfo_fill fill = {arena, si, n, cap};
  if ((st = lm_db_each_sysinfo(db, wid, run, pid, add_field, &fill, diag)) != LM_OK) goto fail;
  si->n_fields = fill.n;
  w->arch = lm_sysinfo_text(si, "gpu_arch");
  if (!w->arch || !*w->arch) {
    st = lm_fail_at(diag, LM_EDATA, db_path, 0, "gpu_arch",
                    "the system information of run %d (process %lld) has no gpu_arch", run, (long long)pid);
    goto fail;
  }
  *out = w;
  return LM_OK;
fail:
  lm_arena_free(arena);
  return st;
}
