/*
 * read.c - rocprof (v1) results files, one row per dispatch, read record
 * by record (lm_csv_rows) into one row per Index. The fixed columns
 * (which rocprof versions add to over time: vgpr became arch_vgpr and
 * accum_vgpr, wave_size and the timestamps came later) map to pmc_perf's;
 * every other column is a counter, wherever it stands. Files of one
 * folder are passes of one run, as rocprof writes one file per pass:
 * their rows are merged by Index, whose kernel name must agree. Files
 * are recognised by their header, never by their name; results.db (db.c)
 * is read where no results CSV file is, the kernel statistics (stats.c)
 * where neither is.
 */
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "csv/csv.h"
#include "devices/devices.h"
#include "rocprof1/rocprof1_private.h"

enum { MAX_FILES = 256, MAX_ROCMINFO = 16 << 20 };

/* The fixed columns: the pmc_perf column each is read into (NULL: not
 * read, such as queue, process, signal and the other timestamps). */
static const char *const fixed[][2] = {{"Index", NULL},
                                       {"KernelName", NULL},
                                       {"gpu-id", "GPU_ID"},
                                       {"queue-id", NULL},
                                       {"queue-index", NULL},
                                       {"pid", NULL},
                                       {"tid", NULL},
                                       {"grd", "Grid_Size"},
                                       {"wgr", "Workgroup_Size"},
                                       {"lds", "LDS_Per_Workgroup"},
                                       {"scr", "Scratch_Per_Workitem"},
                                       {"vgpr", "Arch_VGPR"},
                                       {"arch_vgpr", "Arch_VGPR"},
                                       {"accum_vgpr", "Accum_VGPR"},
                                       {"sgpr", "SGPR"},
                                       {"fbar", NULL},
                                       {"wave_size", "wave_size"},
                                       {"sig", NULL},
                                       {"obj", NULL},
                                       {"DispatchNs", NULL},
                                       {"BeginNs", "Start_Timestamp"},
                                       {"EndNs", "End_Timestamp"},
                                       {"CompleteNs", NULL},
                                       {"DurationNs", NULL}};

/* pmc_perf's kernel facts, in its order. */
static const char *const fact_names[] = {
    "GPU_ID",     "Grid_Size", "Workgroup_Size", "LDS_Per_Workgroup", "Scratch_Per_Workitem", "Arch_VGPR",
    "Accum_VGPR", "SGPR",      "wave_size",      "Start_Timestamp",   "End_Timestamp"};

static long find_field(const char *const *f, size_t n, const char *name) {
  for (size_t i = 0; i < n; i++)
    if (strcmp(f[i], name) == 0) return (long)i;
  return -1;
}

int lm_r1_results_header(const char *const *f, size_t n) {
  return find_field(f, n, "Index") >= 0 && find_field(f, n, "KernelName") >= 0 && find_field(f, n, "gpu-id") >= 0;
}

/* 1 when the CSV file at path has a results header. */
static int is_results(const char *path) {
  lm_csv_rows *rows = NULL;
  if (lm_csv_rows_open(path, 1 << 20, &rows, NULL) != LM_OK) return 0;
  const char *const *f;
  size_t n;
  int yes = lm_csv_rows_next(rows, &f, &n, NULL) == LM_OK && n && lm_r1_results_header(f, n);
  lm_csv_rows_close(rows);
  return yes;
}

static int ends_with(const char *s, const char *suffix) {
  size_t n = strlen(s), k = strlen(suffix);
  return n >= k && strcmp(s + n - k, suffix) == 0;
}

typedef struct files {
  char *paths[MAX_FILES];
  size_t n;
} files;

static int cmp_paths(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* The regular files of dir ending in suffix that pass `want`, sorted. */
static lm_status list_dir(const char *dir, const char *suffix, int (*want)(const char *), files *fs, lm_diag *diag) {
  DIR *d = opendir(dir);
  if (!d) return LM_OK;
  lm_status st = LM_OK;
  struct dirent *e;
  char path[4096];
  while (st == LM_OK && (e = readdir(d)) != NULL) {
    if (e->d_name[0] == '.' || !ends_with(e->d_name, suffix)) continue;
    if ((size_t)snprintf(path, sizeof path, "%s/%s", dir, e->d_name) >= sizeof path) continue;
    struct stat s;
    if (stat(path, &s) != 0 || !S_ISREG(s.st_mode) || (want && !want(path))) continue;
    if (fs->n == MAX_FILES) {
      st = lm_fail(diag, LM_ELIMIT, dir, "more than %d rocprof files", MAX_FILES);
      break;
    }
    if (!(fs->paths[fs->n] = lm_malloc(strlen(path) + 1))) {
      st = lm_oom(diag, dir);
      break;
    }
    strcpy(fs->paths[fs->n++], path);
  }
  closedir(d);
  if (fs->n) qsort(fs->paths, fs->n, sizeof *fs->paths, cmp_paths);
  return st;
}

static void files_free(files *fs) {
  for (size_t i = 0; i < fs->n; i++) lm_free(fs->paths[i]);
  fs->n = 0;
}

int lm_rocprof1_detect(const char *path) {
  struct stat s;
  if (stat(path, &s) != 0) return 0;
  if (S_ISREG(s.st_mode)) return is_results(path) || lm_r1_is_db(path) || lm_r1_is_stats(path);
  if (!S_ISDIR(s.st_mode)) return 0;
  files fs = {0};
  lm_status st = list_dir(path, ".csv", is_results, &fs, NULL);
  if (st == LM_OK && fs.n == 0) st = list_dir(path, ".db", lm_r1_is_db, &fs, NULL);
  if (st == LM_OK && fs.n == 0) st = list_dir(path, ".csv", lm_r1_is_stats, &fs, NULL);
  int found = st == LM_OK && fs.n > 0;
  files_free(&fs);
  return found;
}

lm_status lm_r1_header_read(lm_r1_rows *r, const char *const *f, size_t n, lm_r1_header *h, lm_diag *diag) {
  h->n = n;
  h->index = find_field(f, n, "Index");
  h->kernel = find_field(f, n, "KernelName");
  h->col = lm_calloc(n, sizeof *h->col);
  h->counter = lm_calloc(n, sizeof *h->counter);
  h->alias = lm_calloc(n, sizeof *h->alias);
  h->name = lm_calloc(n, sizeof *h->name);
  if (!h->col || !h->counter || !h->alias || !h->name) return lm_oom(diag, r->t->path);
  for (size_t i = 0; i < n; i++) {
    h->col[i] = h->alias[i] = -1;
    if (!(h->name[i] = lm_malloc(strlen(f[i]) + 1))) return lm_oom(diag, r->t->path);
    strcpy(h->name[i], f[i]);
    const char *target = f[i];
    int is_fixed = 0;
    for (size_t k = 0; k < LM_ARRAY_LEN(fixed) && !is_fixed; k++)
      if (strcmp(f[i], fixed[k][0]) == 0) {
        is_fixed = 1;
        target = fixed[k][1];
      }
    if (!target || !target[0]) continue;
    size_t c;
    lm_status st = lm_fold_counter(r->t, target, &c, diag);
    if (st != LM_OK) return st;
    h->col[i] = (long)c;
    h->counter[i] = !is_fixed;
    char alias[256];
    if (!is_fixed && lm_devices_sum_alias(f[i], alias, sizeof alias)) {
      if ((st = lm_fold_counter(r->t, alias, &c, diag)) != LM_OK) return st;
      h->alias[i] = (long)c;
    }
  }
  return LM_OK;
}

void lm_r1_header_free(lm_r1_header *h) {
  lm_free(h->col);
  lm_free(h->counter);
  lm_free(h->alias);
  for (size_t i = 0; h->name && i < h->n; i++) lm_free(h->name[i]);
  lm_free(h->name);
}

/* A number cell ("" is NaN); 0 when it is not one. */
static int cell_number(const char *s, double *v) {
  int is_int;
  int kind = lm_parse_number(s, s + strlen(s), v, &is_int);
  return kind == 1 || kind == 2;
}

/* One record into the rows: its Index's row (kernel names must agree),
 * its facts where not yet known, its counters (the last file wins). */
lm_status lm_r1_record(lm_r1_rows *r, const char *path, long line, const lm_r1_header *h, const char *const *f,
                       size_t n, lm_diag *diag) {
  if (n < h->n)
    return lm_fail_at(diag, LM_EPARSE, path, line, h->name[n], "record has %zu fields, the header %zu", n, h->n);
  double index;
  if (!cell_number(f[h->index], &index) || isnan(index))
    return lm_fail_at(diag, LM_EPARSE, path, line, "Index", "not a number: \"%.40s\"", f[h->index]);
  size_t row;
  int added;
  lm_status st = lm_fold_row(r->t, f[h->index], &row, &added, diag);
  if (st != LM_OK) return st;
  if (added) r->t->facts[LM_R1_DISPATCH][row] = index;
  int32_t kernel;
  if ((st = lm_fold_intern(r->t, f[h->kernel], &kernel, diag)) != LM_OK) return st;
  if (r->t->kernel[row] >= 0 && r->t->kernel[row] != kernel)
    return lm_fail_at(diag, LM_EDATA, path, line, "KernelName",
                      "Index %s names \"%.60s\" here but \"%.60s\" earlier (the files of a folder must be passes "
                      "of one run)",
                      f[h->index], f[h->kernel], r->t->kernels[r->t->kernel[row]]);
  r->t->kernel[row] = kernel;
  for (size_t i = 0; i < h->n; i++) {
    if (h->col[i] < 0) continue;
    double *cell = &r->t->counters[h->col[i]][row];
    if (!h->counter[i] && !isnan(*cell)) continue;
    double v;
    if (!cell_number(f[i], &v))
      return lm_fail_at(diag, LM_EPARSE, path, line, h->name[i], "not a number: \"%.40s\"", f[i]);
    *cell = v;
    if (h->alias[i] >= 0) r->t->counters[h->alias[i]][row] = v;
  }
  return LM_OK;
}

/* One results file into the rows. */
static lm_status read_file(lm_r1_rows *r, const char *file, lm_diag *diag) {
  lm_csv_rows *rows = NULL;
  lm_r1_header h = {0};
  lm_status st = lm_csv_rows_open(file, 0, &rows, diag);
  if (st != LM_OK) return st;
  const char *const *f;
  size_t n;
  if ((st = lm_csv_rows_next(rows, &f, &n, diag)) != LM_OK) goto done;
  if (n == 0 || !lm_r1_results_header(f, n)) {
    st = lm_fail_at(diag, LM_EPARSE, file, 1, NULL,
                    "not a rocprof results file: the header lacks Index, KernelName "
                    "or gpu-id");
    goto done;
  }
  if ((st = lm_r1_header_read(r, f, n, &h, diag)) != LM_OK) goto done;
  for (;;) {
    if ((st = lm_csv_rows_next(rows, &f, &n, diag)) != LM_OK || n == 0) break;
    if (n == 1 && !f[0][0]) continue;
    if ((st = lm_r1_record(r, lm_csv_rows_path(rows), lm_csv_rows_line(rows), &h, f, n, diag)) != LM_OK) break;
  }
done:
  lm_r1_header_free(&h);
  lm_csv_rows_close(rows);
  return st;
}

/* Whether the file at path is rocminfo's text (it names its HSA agents). */
static int is_rocminfo(const char *path) {
  char *text = NULL;
  size_t len = 0;
  if (lm_read_file(path, MAX_ROCMINFO, &text, &len, NULL) != LM_OK) return 0;
  int yes = strstr(text, "HSA Agents") != NULL;
  lm_free(text);
  return yes;
}

/* The rocminfo text in dir (the first by name), parsed into info; its
 * path in where ("" when none). */
static lm_status find_rocminfo(const char *dir, lm_rocminfo *info, char *where, size_t cap, lm_diag *diag) {
  memset(info, 0, sizeof *info);
  where[0] = '\0';
  files fs = {0};
  lm_status st = list_dir(dir, ".txt", is_rocminfo, &fs, diag);
  if (st == LM_OK && fs.n) {
    char *text = NULL;
    size_t len = 0;
    st = lm_read_file(fs.paths[0], MAX_ROCMINFO, &text, &len, diag);
    if (st == LM_OK) {
      lm_rocprof1_rocminfo(text, len, info);
      snprintf(where, cap, "%s", fs.paths[0]);
    }
    lm_free(text);
  }
  files_free(&fs);
  return st;
}

lm_status lm_rocprof1_read(const char *path, const char *arch, const lm_workload_options *opts, lm_workload **out,
                           lm_diag *diag) {
  (void)opts;
  *out = NULL;
  files fs = {0};
  lm_r1_rows *r = NULL;
  lm_rocminfo *info = lm_calloc(1, sizeof *info);
  char dir[4096], where[4096];
  lm_status st = LM_OK;
  int db = 0; /* the files are results.db's, not CSV */
  if (!info) return lm_oom(diag, path);
  struct stat s;
  if (stat(path, &s) != 0) {
    st = lm_fail(diag, LM_ENOTFOUND, path, "no such file or folder");
    goto done;
  }
  if (S_ISDIR(s.st_mode)) {
    snprintf(dir, sizeof dir, "%s", path);
    st = list_dir(path, ".csv", is_results, &fs, diag);
    if (st == LM_OK && fs.n == 0 && (st = list_dir(path, ".db", lm_r1_is_db, &fs, diag)) == LM_OK) db = fs.n > 0;
    if (st == LM_OK && fs.n == 0) {
      /* No dispatches: the kernel statistics alone (one file of them). */
      if ((st = list_dir(path, ".csv", lm_r1_is_stats, &fs, diag)) == LM_OK && fs.n > 1)
        st = lm_fail(diag, LM_EINVAL, path, "%zu rocprof kernel statistics files and no results file: give -w one of "
                     "them (%s, ...)", fs.n, fs.paths[0]);
      if (st == LM_OK && fs.n == 1) st = lm_r1_stats_read(fs.paths[0], arch, out, diag);
      if (st != LM_OK || fs.n == 1) goto done;
    }
  } else if (lm_r1_is_stats(path)) {
    st = lm_r1_stats_read(path, arch, out, diag);
    goto done;
  } else {
    db = lm_r1_is_db(path);
    const char *slash = strrchr(path, '/');
    if (slash == path)
      snprintf(dir, sizeof dir, "/");
    else
      snprintf(dir, sizeof dir, "%.*s", slash ? (int)(slash - path) : 1, slash ? path : ".");
    if (!(fs.paths[0] = lm_malloc(strlen(path) + 1)))
      st = lm_oom(diag, path);
    else
      strcpy(fs.paths[fs.n++], path);
  }
  if (st == LM_OK && fs.n == 0) st = lm_fail(diag, LM_ENOTFOUND, path, "no rocprof results CSV file");
  if (st == LM_OK) st = lm_r1_rows_new(path, &r, diag);
  for (size_t i = 0; i < fs.n && st == LM_OK; i++)
    st = db ? lm_r1_db_read(r, fs.paths[i], diag) : read_file(r, fs.paths[i], diag);
  if (st == LM_OK) st = find_rocminfo(dir, info, where, sizeof where, diag);
  if (st == LM_OK)
    st = lm_r1_finish(r, info, where[0] ? where : NULL, arch, fact_names, (int)LM_ARRAY_LEN(fact_names), out, diag);
done:
  lm_r1_rows_free(r);
  files_free(&fs);
  lm_free(info);
  return st;
}
