/*
 * read.c - an Nsight Compute CSV export streamed record by record
 * (lm_csv_rows) into one row per launch.
 *
 * The details page holds one record per launch and metric; the records
 * of one launch follow each other, so the launch at hand is looked up by
 * its ID only when the ID changes. Records without a metric name (rule
 * results) are passed over, and a record may stop after the value (the
 * rule columns left out). The raw page holds one record per launch with
 * the metrics as columns, and the units in the record under the header
 * (its ID cell empty). Launch IDs are renumbered from 0 in file order.
 */
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "csv/csv.h"
#include "ncu/ncu.h"
#include "ncu/ncu_private.h"

/* Columns that describe the launch, not a metric (raw page). */
static const char *const launch_columns[] = {
    "ID",           "Process ID",  "Process Name", "Host Name", "Kernel Name", "Kernel Time",   "Context",
    "Stream",       "Block Size",  "Grid Size",    "Device",    "CC",          "Function Name", "Demangled Name",
    "Mangled Name", "Section Name"};

typedef struct header {
  long id, kernel, device, cc, block, grid, name, unit, value;
  int raw; /* 1: the raw page */
} header;

static long find(const char *const *f, size_t n, const char *name) {
  for (size_t i = 0; i < n; i++)
    if (strcmp(f[i], name) == 0) return (long)i;
  return -1;
}

static int is_launch_column(const char *name) {
  for (size_t i = 0; i < LM_ARRAY_LEN(launch_columns); i++)
    if (strcmp(launch_columns[i], name) == 0) return 1;
  return 0;
}

/* 1 for a header of the details page, 2 of the raw page, else 0. */
static int read_header(const char *const *f, size_t n, header *h) {
  h->id = find(f, n, "ID");
  h->kernel = find(f, n, "Kernel Name");
  h->device = find(f, n, "Device");
  h->cc = find(f, n, "CC");
  h->block = find(f, n, "Block Size");
  h->grid = find(f, n, "Grid Size");
  h->name = find(f, n, "Metric Name");
  h->unit = find(f, n, "Metric Unit");
  h->value = find(f, n, "Metric Value");
  h->raw = 0;
  if (h->id < 0 || h->kernel < 0) return 0;
  if (h->name >= 0 && h->value >= 0) return 1;
  for (size_t i = 0; i < n; i++)
    if (strstr(f[i], "__")) {
      h->raw = 1;
      return 2;
    }
  return 0;
}

/* "(32, 32, 1)" (or "32"): the product of the dimensions. */
static int dims(const char *s, double *v) {
  double p = 1;
  int any = 0;
  while (*s) {
    if ((*s >= '0' && *s <= '9')) {
      char *end;
      double d = strtod(s, &end);
      p *= d;
      any = 1;
      s = end;
    } else if (*s == '(' || *s == ')' || *s == ',' || *s == ' ') {
      s++;
    } else {
      return 0;
    }
  }
  *v = any ? p : LM_NAN;
  return 1;
}

/* The launch facts of a record into row. */
static lm_status launch_facts(lm_ncu_fold *fold, const header *h, const char *const *f, size_t n, size_t row, long line,
                              lm_diag *diag) {
  const char *path = fold->t->path;
  double v;
  if (h->device >= 0 && h->device < (long)n) {
    if (lm_ncu_number(f[h->device], &v) == 0)
      return lm_fail_at(diag, LM_EPARSE, path, line, "Device", "not a number: \"%.40s\"", f[h->device]);
    fold->t->facts[NF_GPU][row] = v;
  }
  double block = LM_NAN, grid = LM_NAN;
  if (h->block >= 0 && h->block < (long)n && !dims(f[h->block], &block))
    return lm_fail_at(diag, LM_EPARSE, path, line, "Block Size", "not \"(x, y, z)\": \"%.40s\"", f[h->block]);
  if (h->grid >= 0 && h->grid < (long)n && !dims(f[h->grid], &grid))
    return lm_fail_at(diag, LM_EPARSE, path, line, "Grid Size", "not \"(x, y, z)\": \"%.40s\"", f[h->grid]);
  fold->t->facts[NF_BLOCK][row] = block;
  fold->t->facts[NF_GRID][row] = grid * block; /* in threads, as lumen's profiles record it */
  if (h->cc >= 0 && h->cc < (long)n && !fold->arch[0] && f[h->cc][0]) {
    int major, minor;
    if (sscanf(f[h->cc], "%d.%d", &major, &minor) != 2)
      return lm_fail_at(diag, LM_EPARSE, path, line, "CC", "not a compute capability: \"%.40s\"", f[h->cc]);
    snprintf(fold->arch, sizeof fold->arch, "sm_%d%d", major, minor);
  }
  return LM_OK;
}

/* A launch's new row: its kernel name and facts. */
static lm_status new_launch(lm_ncu_fold *fold, const header *h, const char *const *f, size_t n, size_t row,
                            long line, lm_diag *diag) {
  int32_t id = 0;
  lm_status st = lm_fold_intern(fold->t, f[h->kernel], &id, diag);
  if (st != LM_OK) return st;
  fold->t->kernel[row] = id;
  return launch_facts(fold, h, f, n, row, line, diag);
}

/* The device attributes lumen's system information takes. */
static const char *const attr_names[N_NCU_ATTRS] = {"device__attribute_multiprocessor_count",
                                                    "device__attribute_max_gpu_frequency_khz",
                                                    "device__attribute_clock_rate",
                                                    "device__attribute_max_mem_frequency_khz",
                                                    "device__attribute_memory_clock_rate",
                                                    "device__attribute_l2_cache_size",
                                                    "device__attribute_max_threads_per_block",
                                                    "device__attribute_warp_size",
                                                    "device__attribute_compute_capability_major",
                                                    "device__attribute_compute_capability_minor"};

static void keep_attr(lm_ncu_fold *fold, const char *name, const char *unit, double v) {
  for (int a = 0; a < N_NCU_ATTRS; a++) {
    if (strcmp(name, attr_names[a]) != 0 || !isnan(fold->attr[a])) continue;
    /* Clocks: in kHz when the unit is not printed (the CUDA attribute's). */
    if (!unit[0] && (a == NA_SCLK || a == NA_CLOCK_RATE || a == NA_MCLK || a == NA_MEM_RATE)) v *= 1e3;
    fold->attr[a] = v;
  }
}

/* One metric value of row: name, unit and value cells; field names the
 * value's column in errors. */
static lm_status metric(lm_ncu_fold *fold, size_t row, const char *name, const char *unit, const char *text, long line,
                        const char *field, lm_diag *diag) {
  const char *path = fold->t->path;
  int cupti = strstr(name, "__") != NULL;
  double v, scale;
  if (strcmp(name, "device__attribute_display_name") == 0) {
    if (!fold->model[0]) snprintf(fold->model, sizeof fold->model, "%s", text);
    return LM_OK;
  }
  if (lm_ncu_number(text, &v) == 0) {
    /* Text values (cache configurations, names) are no counters. */
    if (!cupti || strncmp(name, "device__", 8) == 0 || strncmp(name, "launch__", 8) == 0 ||
        strncmp(name, "profiler__", 10) == 0)
      return LM_OK;
    return lm_fail_at(diag, LM_EPARSE, path, line, field, "%s: not a number: \"%.40s\"", name, text);
  }
  if (!lm_ncu_unit_scale(unit, &scale)) {
    if (cupti)
      return lm_fail_at(diag, LM_EPARSE, path, line, field,
                        "%s: unit \"%.40s\" is not one lumen converts (docs/formats.md)", name, unit);
    if (!lm_map_get(fold->warned, unit, NULL)) {
      lm_log(LM_LOG_WARN, "%s:%ld: unit \"%s\" (of %s) is not one lumen converts: values in it are kept as they are",
             path, line, unit, name);
      if (lm_map_put(fold->warned, unit, 1) != LM_OK) return lm_oom(diag, path);
    }
    scale = 1;
  }
  v *= scale;
  keep_attr(fold, name, unit, v);
  if (strcmp(name, "gpu__time_duration.sum") == 0) fold->has_duration = 1;
  return lm_fold_set(fold->t, name, row, v, diag);
}

/* A record of the details page. */
static lm_status details_record(lm_ncu_fold *fold, const header *h, const char *const *f, size_t n, long line,
                                lm_diag *diag) {
  if (h->name < (long)n && !f[h->name][0]) return LM_OK; /* a rule's record */
  if (h->name >= (long)n || h->value >= (long)n || h->id >= (long)n || h->kernel >= (long)n)
    return lm_fail_at(diag, LM_EPARSE, fold->t->path, line, "Metric Value", "record has %zu fields, the header more", n);
  size_t row;
  int added;
  lm_status st = lm_fold_row(fold->t, f[h->id], &row, &added, diag);
  if (st == LM_OK && added) st = new_launch(fold, h, f, n, row, line, diag);
  if (st != LM_OK) return st;
  const char *unit = h->unit >= 0 && h->unit < (long)n ? f[h->unit] : "";
  return metric(fold, row, f[h->name], unit, f[h->value], line, "Metric Value", diag);
}

/* Copy the header (raw page: metric names) and the units record. */
typedef struct raw_page {
  char **names, **units;
  size_t n;
} raw_page;

static void raw_free(raw_page *r) {
  for (size_t i = 0; i < r->n; i++) {
    lm_free(r->names ? r->names[i] : NULL);
    lm_free(r->units ? r->units[i] : NULL);
  }
  lm_free(r->names);
  lm_free(r->units);
}

static char *dup(const char *s) {
  size_t n = strlen(s) + 1;
  char *c = lm_malloc(n);
  if (c) memcpy(c, s, n);
  return c;
}

static lm_status raw_names(raw_page *r, const char *const *f, size_t n, const char *path, lm_diag *diag) {
  r->names = lm_calloc(n ? n : 1, sizeof *r->names);
  r->units = lm_calloc(n ? n : 1, sizeof *r->units);
  if (!r->names || !r->units) return lm_oom(diag, path);
  r->n = n;
  for (size_t i = 0; i < n; i++)
    if (!(r->names[i] = dup(f[i])) || !(r->units[i] = dup(""))) return lm_oom(diag, path);
  return LM_OK;
}

/* A record of the raw page: the units record, or one launch. */
static lm_status raw_record(lm_ncu_fold *fold, const header *h, raw_page *r, const char *const *f, size_t n, long line,
                            lm_diag *diag) {
  if (h->id < (long)n && !f[h->id][0]) { /* the units */
    for (size_t i = 0; i < n && i < r->n; i++) {
      char *u = dup(f[i]);
      if (!u) return lm_oom(diag, fold->t->path);
      lm_free(r->units[i]);
      r->units[i] = u;
    }
    return LM_OK;
  }
  if (h->id >= (long)n || h->kernel >= (long)n)
    return lm_fail_at(diag, LM_EPARSE, fold->t->path, line, "Kernel Name", "record has %zu fields, the header %zu", n,
                      r->n);
  size_t row;
  lm_status st = lm_fold_add_row(fold->t, &row, diag);
  if (st == LM_OK) st = new_launch(fold, h, f, n, row, line, diag);
  for (size_t i = 0; i < n && i < r->n && st == LM_OK; i++) {
    if (is_launch_column(r->names[i]) || !f[i][0]) continue;
    st = metric(fold, row, r->names[i], r->units[i], f[i], line, r->names[i], diag);
  }
  return st;
}

static lm_status read_file(lm_ncu_fold *fold, const char *path, lm_diag *diag) {
  lm_csv_rows *rows = NULL;
  raw_page raw = {0};
  lm_status st = lm_csv_rows_open(path, 0, &rows, diag);
  if (st != LM_OK) return st;
  const char *const *f;
  size_t n;
  header h;
  if ((st = lm_csv_rows_next(rows, &f, &n, diag)) != LM_OK) goto done;
  if (n == 0 || !read_header(f, n, &h)) {
    st = lm_fail_at(diag, LM_EPARSE, path, 1, NULL,
                    "not an Nsight Compute CSV export: the header lacks ID, Kernel Name and Metric Name or metrics");
    goto done;
  }
  if (h.raw && (st = raw_names(&raw, f, n, path, diag)) != LM_OK) goto done;
  for (;;) {
    if ((st = lm_csv_rows_next(rows, &f, &n, diag)) != LM_OK || n == 0) break;
    if (n == 1 && !f[0][0]) continue;
    long line = lm_csv_rows_line(rows);
    st = h.raw ? raw_record(fold, &h, &raw, f, n, line, diag) : details_record(fold, &h, f, n, line, diag);
    if (st != LM_OK) break;
  }
done:
  raw_free(&raw);
  lm_csv_rows_close(rows);
  return st;
}

/* Whether the regular file at path is an export (its header). */
static int is_export(const char *path) {
  lm_csv_rows *rows = NULL;
  lm_diag diag;
  if (lm_csv_rows_open(path, 1 << 20, &rows, &diag) != LM_OK) return 0;
  const char *const *f;
  size_t n;
  header h;
  int found = lm_csv_rows_next(rows, &f, &n, &diag) == LM_OK && n && read_header(f, n, &h);
  lm_csv_rows_close(rows);
  return found;
}

enum { MAX_LOOKS = 64 };

/* The one export directly in folder dir, into one (cap bytes): 1 when
 * there is exactly one among its first MAX_LOOKS files, else 0 (none, or
 * several: which one is meant is the user's to say). */
static int folder_export(const char *dir, char *one, size_t cap) {
  DIR *d = opendir(dir);
  if (!d) return 0;
  struct dirent *e;
  char path[4096];
  int found = 0, looks = 0;
  while (found < 2 && looks < MAX_LOOKS && (e = readdir(d)) != NULL) {
    if (e->d_name[0] == '.' || (size_t)snprintf(path, sizeof path, "%s/%s", dir, e->d_name) >= sizeof path) continue;
    struct stat s;
    if (stat(path, &s) != 0 || !S_ISREG(s.st_mode)) continue;
    looks++;
    if (is_export(path) && found++ == 0) snprintf(one, cap, "%s", path);
  }
  closedir(d);
  return found == 1;
}

int lm_ncu_detect(const char *path) {
  struct stat s;
  char one[4096];
  if (stat(path, &s) != 0) return 0;
  return S_ISDIR(s.st_mode) ? folder_export(path, one, sizeof one) : is_export(path);
}

lm_status lm_ncu_read(const char *path, const char *arch, const lm_workload_options *opts, lm_workload **out,
                      lm_diag *diag) {
  (void)opts;
  *out = NULL;
  struct stat s;
  char one[4096];
  if (stat(path, &s) == 0 && S_ISDIR(s.st_mode)) {
    if (!folder_export(path, one, sizeof one))
      return lm_fail(diag, LM_ENOTFOUND, path, "not one Nsight Compute CSV export in this folder: give -w the file");
    path = one;
  }
  lm_ncu_fold *fold = NULL;
  lm_status st = lm_ncu_fold_new(path, &fold, diag);
  if (st == LM_OK) st = read_file(fold, path, diag);
  if (st == LM_OK) st = lm_ncu_fold_finish(fold, arch, out, diag);
  lm_ncu_fold_free(fold);
  return st;
}
