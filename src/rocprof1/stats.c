/*
 * stats.c - rocprof's kernel statistics (`rocprof --stats`,
 * results.stats.csv): one record per kernel with its calls and total and
 * mean durations, and no dispatches. Read as a workload of per-kernel
 * totals only (LM_TOTALS_SOURCE): an empty pmc_perf table whose
 * Kernel_Name strings are the kernels, in file order, and the totals
 * table beside it. Nothing the file derives is taken on trust: the mean
 * must be the total over the calls, the percentage is recomputed (a
 * stated one that disagrees is said), calls are whole and positive,
 * durations finite and not negative.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "csv/csv.h"
#include "db/db.h"
#include "devices/devices.h"
#include "rocprof1/rocprof1_private.h"

static long field_of(const char *const *f, size_t n, const char *name) {
  for (size_t i = 0; i < n; i++)
    if (strcmp(f[i], name) == 0) return (long)i;
  return -1;
}

int lm_r1_stats_header(const char *const *f, size_t n) {
  return field_of(f, n, "Name") >= 0 && field_of(f, n, "Calls") >= 0 && field_of(f, n, "TotalDurationNs") >= 0;
}

int lm_r1_is_stats(const char *path) {
  lm_csv_rows *rows = NULL;
  if (lm_csv_rows_open(path, 1 << 20, &rows, NULL) != LM_OK) return 0;
  const char *const *f;
  size_t n;
  int yes = lm_csv_rows_next(rows, &f, &n, NULL) == LM_OK && n && lm_r1_stats_header(f, n);
  lm_csv_rows_close(rows);
  return yes;
}

/* The kernels as they are read: parallel arrays grown by doubling. */
typedef struct kernels {
  lm_map *seen; /* name -> row */
  char **names;
  double *calls, *total, *stated_pct;
  long *line;
  size_t n, cap;
} kernels;

static void kernels_fini(kernels *k) {
  for (size_t i = 0; i < k->n; i++) lm_free(k->names[i]);
  lm_free(k->names);
  lm_free(k->calls);
  lm_free(k->total);
  lm_free(k->stated_pct);
  lm_free(k->line);
  lm_map_free(k->seen);
}

static int grow(kernels *k) {
  if (k->n < k->cap) return 1;
  size_t cap = k->cap ? 2 * k->cap : 64;
  char **names = lm_realloc(k->names, cap * sizeof *names);
  if (names) k->names = names;
  double *calls = lm_realloc(k->calls, cap * sizeof *calls);
  if (calls) k->calls = calls;
  double *total = lm_realloc(k->total, cap * sizeof *total);
  if (total) k->total = total;
  double *pct = lm_realloc(k->stated_pct, cap * sizeof *pct);
  if (pct) k->stated_pct = pct;
  long *line = lm_realloc(k->line, cap * sizeof *line);
  if (line) k->line = line;
  if (!names || !calls || !total || !pct || !line) return 0;
  k->cap = cap;
  return 1;
}

/* A field's text as a finite number in *v; errors name the field. */
static lm_status number(const char *path, long line, const char *name, const char *text, double *v, lm_diag *diag) {
  int is_int;
  int kind = lm_parse_number(text, text + strlen(text), v, &is_int);
  if (kind == 1 && !isnan(*v) && !isinf(*v)) return LM_OK;
  return lm_fail_at(diag, LM_EPARSE, path, line, name, "%s: \"%.40s\"",
                    kind == 2   ? "no value (a blank or nan)"
                    : kind == 3 ? "out of the range of a number"
                                : "not a number",
                    text);
}

/* The header's fields: Name, Calls, TotalDurationNs, AverageNs and
 * Percentage (the last two -1 when absent). */
typedef struct header {
  long name, calls, total, mean, pct;
  size_t n;
} header;

/* One record into k. Errors: a short record, a field that is not a
 * number, calls that are not a whole number above 0, a duration below 0,
 * a mean other than the total over the calls, a kernel listed twice. */
static lm_status record(kernels *k, const char *path, long line, const header *h, const char *const *f, size_t n,
                        const char *const *titles, lm_diag *diag) {
  if (n < h->n)
    return lm_fail_at(diag, LM_EPARSE, path, line, titles[n], "record has %zu fields, the header %zu", n, h->n);
  double calls, total, mean = LM_NAN, pct = LM_NAN;
  lm_status st = number(path, line, "Calls", f[h->calls], &calls, diag);
  if (st == LM_OK) st = number(path, line, "TotalDurationNs", f[h->total], &total, diag);
  if (st == LM_OK && h->mean >= 0) st = number(path, line, "AverageNs", f[h->mean], &mean, diag);
  if (st == LM_OK && h->pct >= 0) st = number(path, line, "Percentage", f[h->pct], &pct, diag);
  if (st != LM_OK) return st;
  if (calls < 1 || calls != floor(calls) || calls > 9e15)
    return lm_fail_at(diag, LM_EDATA, path, line, "Calls", "%s calls: a kernel's calls are a whole number above 0",
                      f[h->calls]);
  if (total < 0)
    return lm_fail_at(diag, LM_EDATA, path, line, "TotalDurationNs", "%s: a duration cannot be negative",
                      f[h->total]);
  /* rocprof writes the mean as the integer quotient: within 1 ns of it. */
  if (!isnan(mean) && !(fabs(mean - total / calls) <= 1 + 1e-9 * total / calls))
    return lm_fail_at(diag, LM_EDATA, path, line, "AverageNs",
                      "%s is not TotalDurationNs / Calls (%.17g / %.17g = %.17g)", f[h->mean], total, calls,
                      total / calls);
  int64_t seen;
  if (lm_map_get(k->seen, f[h->name], &seen))
    return lm_fail_at(diag, LM_EDATA, path, line, "Name", "kernel \"%.80s\" is listed twice (line %ld too)",
                      f[h->name], k->line[seen]);
  if (!grow(k) || !(k->names[k->n] = lm_strdup(f[h->name]))) return lm_oom(diag, path);
  if (lm_map_put(k->seen, f[h->name], (int64_t)k->n) != LM_OK) {
    lm_free(k->names[k->n]);
    return lm_oom(diag, path);
  }
  k->calls[k->n] = calls;
  k->total[k->n] = total;
  k->stated_pct[k->n] = pct;
  k->line[k->n++] = line;
  return LM_OK;
}

/* Every record of the file at path into k. */
static lm_status read_records(const char *path, kernels *k, lm_diag *diag) {
  lm_csv_rows *rows = NULL;
  char **titles = NULL;
  header h = {-1, -1, -1, -1, -1, 0};
  lm_status st = lm_csv_rows_open(path, 0, &rows, diag);
  if (st != LM_OK) return st;
  const char *const *f;
  size_t n;
  if ((st = lm_csv_rows_next(rows, &f, &n, diag)) != LM_OK) goto done;
  if (n == 0 || !lm_r1_stats_header(f, n)) {
    st = lm_fail_at(diag, LM_EPARSE, path, 1, NULL,
                    "not a rocprof kernel statistics file: the header lacks Name, Calls or TotalDurationNs");
    goto done;
  }
  h = (header){field_of(f, n, "Name"),      field_of(f, n, "Calls"),      field_of(f, n, "TotalDurationNs"),
               field_of(f, n, "AverageNs"), field_of(f, n, "Percentage"), n};
  if (!(titles = lm_calloc(n, sizeof *titles))) {
    st = lm_oom(diag, path);
    goto done;
  }
  for (size_t i = 0; i < n; i++)
    if (!(titles[i] = lm_strdup(f[i]))) {
      st = lm_oom(diag, path);
      goto done;
    }
  for (;;) {
    if ((st = lm_csv_rows_next(rows, &f, &n, diag)) != LM_OK || n == 0) break;
    if (n == 1 && !f[0][0]) continue;
    st = record(k, lm_csv_rows_path(rows), lm_csv_rows_line(rows), &h, f, n, (const char *const *)titles, diag);
    if (st != LM_OK) break;
  }
  if (st == LM_OK && k->n == 0) st = lm_fail(diag, LM_EDATA, path, "a header and no kernels: nothing to analyze");
done:
  for (size_t i = 0; titles && i < h.n; i++) lm_free(titles[i]);
  lm_free(titles);
  lm_csv_rows_close(rows);
  return st;
}

/* A stated percentage that is not the kernel's share of the total time
 * is said (once); the table's own is computed from the totals. */
static void check_percentages(const char *path, const kernels *k) {
  double sum = 0;
  for (size_t i = 0; i < k->n; i++) sum += k->total[i];
  for (size_t i = 0; i < k->n; i++) {
    double share = sum > 0 ? k->total[i] / sum * 100 : 0;
    if (!isnan(k->stated_pct[i]) && fabs(k->stated_pct[i] - share) > 0.01) {
      lm_log(LM_LOG_WARN, "%s:%ld: field 'Percentage': %g is not the kernel's share of the total time (%.4g); "
             "the share is computed from TotalDurationNs", path, k->line[i], k->stated_pct[i], share);
      return;
    }
  }
}

/* The tables of w from k: pmc_perf without rows, and the totals. */
static lm_status build(lm_workload *w, const char *path, const kernels *k, lm_diag *diag) {
  lm_table *pmc = w->pmc = lm_table_create(path, "pmc_perf", 0, 1);
  lm_column *c = pmc ? lm_table_add_column(pmc, "Kernel_Name", 1) : NULL;
  if (!c) return lm_oom(diag, path);
  lm_table *t = lm_table_create(path, LM_TOTALS_SOURCE, k->n, 4);
  w->levels = lm_arena_alloc(w->arena, sizeof *w->levels);
  if (!t || !w->levels) {
    lm_table_free(t);
    return lm_oom(diag, path);
  }
  w->levels[w->n_levels++] = t;
  static const char *const names[4] = {"Kernel_ID", "Calls", "TotalDurationNs", "MeanNs"};
  lm_column *cols[4];
  for (int i = 0; i < 4; i++)
    if (!(cols[i] = lm_table_add_column(t, names[i], 0))) return lm_oom(diag, path);
  for (size_t i = 0; i < k->n; i++) {
    int32_t id = lm_table_intern(pmc, k->names[i]);
    if (id < 0) return lm_oom(diag, path);
    cols[0]->values[i] = id;
    cols[1]->values[i] = k->calls[i];
    cols[2]->values[i] = k->total[i];
    cols[3]->values[i] = k->total[i] / k->calls[i];
  }
  lm_status st = lm_table_finish(pmc);
  if (st == LM_OK) st = lm_table_finish(t);
  return st;
}

/* System information: the architecture's typical product with --arch
 * (said at info level: no panel that reads it is shown), else none. */
static lm_status sysinfo(lm_workload *w, const char *path, const char *arch, lm_diag *diag) {
  if (arch && *arch) {
    char assumed[1024];
    lm_status st = lm_devices_sysinfo(w, arch, NULL, NULL, 0, path, assumed, sizeof assumed, diag);
    if (st == LM_OK && assumed[0])
      lm_log(LM_LOG_INFO, "%s: system information assumed from a typical %s (%s): %s", path,
             lm_devices_product(arch) ? lm_devices_product(arch) : arch, arch, assumed);
    return st;
  }
  char *keys[1] = {(char *)"gpu_model"}, *values[1] = {(char *)""};
  return lm_db_sysinfo_build(path, keys, values, 1, w->arena, &w->sysinfo_table, &w->sysinfo, diag);
}

lm_status lm_r1_stats_read(const char *path, const char *arch, lm_workload **out, lm_diag *diag) {
  *out = NULL;
  kernels k;
  memset(&k, 0, sizeof k);
  lm_workload *w = NULL;
  lm_arena *arena = NULL;
  lm_status st = (k.seen = lm_map_new()) ? LM_OK : lm_oom(diag, path);
  if (st == LM_OK) st = read_records(path, &k, diag);
  if (st != LM_OK) goto done;
  check_percentages(path, &k);
  if (!(arena = lm_arena_new(1 << 12)) || !(w = lm_arena_alloc(arena, sizeof *w))) {
    lm_arena_free(arena);
    st = lm_oom(diag, path);
    goto done;
  }
  memset(w, 0, sizeof *w);
  w->arena = arena;
  w->format = "rocprof";
  if (!(w->path = lm_arena_strdup(arena, path))) st = lm_oom(diag, path);
  if (st == LM_OK) st = build(w, path, &k, diag);
  if (st == LM_OK) st = sysinfo(w, path, arch, diag);
  if (st != LM_OK) {
    lm_workload_free(w);
    w = NULL;
  }
done:
  kernels_fini(&k);
  *out = w;
  return st;
}
