/*
 * files.c - which rocprofv3 files a path holds, and the workload made of
 * their fold: the pmc_perf table and the system information of the GPU
 * agent (agent_info.csv), completed from the architecture's facts.
 *
 * Files are recognised by their header, never by their name (a rocpd
 * database or JSON output by its content, among the .db and .json files of
 * a folder); the name's
 * prefix before "counter_collection.csv", "kernel_trace.csv" or
 * "agent_info.csv" ties the files of one process together.
 */
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "csv/csv.h"
#include "devices/devices.h"
#include "rocprofv3/rocprofv3_private.h"

enum { KIND_AGENT = 3, MAX_FILES = 4096 };

static const char *const suffixes[] = {"counter_collection.csv", "kernel_trace.csv", "agent_info.csv"};

/* What a CSV file is, by its first record: LM_V3_*, KIND_AGENT or 0. */
static int file_kind(const char *path) {
  lm_csv_rows *rows = NULL;
  if (lm_csv_rows_open(path, 1 << 20, &rows, NULL) != LM_OK) return 0;
  const char *const *f;
  size_t n;
  int kind = 0;
  if (lm_csv_rows_next(rows, &f, &n, NULL) == LM_OK && n) {
    kind = lm_rocprofv3_header_kind(f, n);
    int node = 0, type = 0;
    for (size_t i = 0; i < n; i++) {
      node |= strcmp(f[i], "Node_Id") == 0;
      type |= strcmp(f[i], "Agent_Type") == 0;
    }
    if (!kind && node && type) kind = KIND_AGENT;
  }
  lm_csv_rows_close(rows);
  return kind;
}

/* The run a file belongs to: folder plus the name's prefix before a
 * known suffix (the whole name when it has none). */
static void run_of(const char *path, char *out, size_t cap) {
  size_t n = strlen(path);
  for (size_t s = 0; s < LM_ARRAY_LEN(suffixes); s++) {
    size_t k = strlen(suffixes[s]);
    if (n >= k && strcmp(path + n - k, suffixes[s]) == 0) {
      snprintf(out, cap, "%.*s", (int)(n - k), path);
      return;
    }
  }
  snprintf(out, cap, "%s", path);
}

typedef struct found {
  char **paths;
  int *kinds;
  size_t n, cap;
} found;

static lm_status add_found(found *fd, const char *path, int kind, const char *where, lm_diag *diag) {
  if (fd->n == MAX_FILES) return lm_fail(diag, LM_ELIMIT, where, "more than %d rocprofv3 files", MAX_FILES);
  if (fd->n == fd->cap) {
    size_t cap = fd->cap ? 2 * fd->cap : 16;
    char **p = lm_realloc(fd->paths, cap * sizeof *p);
    if (!p) return lm_oom(diag, where);
    fd->paths = p;
    int *k = lm_realloc(fd->kinds, cap * sizeof *k);
    if (!k) return lm_oom(diag, where);
    fd->kinds = k;
    fd->cap = cap;
  }
  size_t len = strlen(path) + 1;
  fd->paths[fd->n] = lm_malloc(len);
  if (!fd->paths[fd->n]) return lm_oom(diag, where);
  memcpy(fd->paths[fd->n], path, len);
  fd->kinds[fd->n++] = kind;
  return LM_OK;
}

/* The CSV files of dir with a rocprofv3 header, and those of its folders
 * down to depth more levels. */
static lm_status scan(const char *dir, int depth, found *fd, lm_diag *diag) {
  DIR *d = opendir(dir);
  if (!d) return LM_OK;
  lm_status st = LM_OK;
  struct dirent *e;
  char path[4096];
  while (st == LM_OK && (e = readdir(d)) != NULL) {
    if (e->d_name[0] == '.') continue;
    if ((size_t)snprintf(path, sizeof path, "%s/%s", dir, e->d_name) >= sizeof path) continue;
    struct stat s;
    if (lstat(path, &s) != 0) continue;
    size_t len = strlen(e->d_name);
    if (S_ISDIR(s.st_mode)) {
      if (depth > 0) st = scan(path, depth - 1, fd, diag);
    } else if (S_ISREG(s.st_mode) && len > 4 && strcmp(e->d_name + len - 4, ".csv") == 0) {
      int kind = file_kind(path);
      if (kind) st = add_found(fd, path, kind, dir, diag);
    } else if (S_ISREG(s.st_mode) && len > 3 && strcmp(e->d_name + len - 3, ".db") == 0 && lm_v3_rocpd_detect(path)) {
      st = add_found(fd, path, LM_V3_ROCPD, dir, diag);
    } else if (S_ISREG(s.st_mode) && len > 5 && strcmp(e->d_name + len - 5, ".json") == 0 && lm_v3_json_detect(path)) {
      st = add_found(fd, path, LM_V3_JSON, dir, diag);
    }
  }
  closedir(d);
  return st;
}

/* The files beside file (same run) of the other kinds. */
static lm_status siblings(const char *file, found *fd, lm_diag *diag) {
  char run[4096], path[4200];
  run_of(file, run, sizeof run);
  if (strcmp(run, file) == 0) return LM_OK;
  for (size_t s = 0; s < LM_ARRAY_LEN(suffixes); s++) {
    snprintf(path, sizeof path, "%s%s", run, suffixes[s]);
    if (strcmp(path, file) == 0 || lm_path_kind(path, 0, NULL) != LM_OK) continue;
    int kind = file_kind(path);
    if (kind) {
      lm_status st = add_found(fd, path, kind, file, diag);
      if (st != LM_OK) return st;
    }
  }
  return LM_OK;
}

static int cmp_paths(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* Split found files by kind into files, numbering their runs. */
static lm_status split(found *fd, lm_v3_files *files, lm_diag *diag, const char *path) {
  size_t n = fd->n;
  files->counters = lm_calloc(n + 1, sizeof(char *));
  files->traces = lm_calloc(n + 1, sizeof(char *));
  files->agents = lm_calloc(n + 1, sizeof(char *));
  files->counter_group = lm_calloc(n + 1, sizeof(int));
  files->trace_group = lm_calloc(n + 1, sizeof(int));
  files->agent_group = lm_calloc(n + 1, sizeof(int));
  files->rocpd = lm_calloc(n + 1, sizeof(char *));
  files->json = lm_calloc(n + 1, sizeof(char *));
  char **runs = lm_calloc(n + 1, sizeof(char *));
  lm_status st = LM_OK;
  if (!files->counters || !files->traces || !files->agents || !files->counter_group || !files->trace_group ||
      !files->agent_group || !files->rocpd || !files->json || !runs) {
    st = lm_oom(diag, path);
    goto done;
  }
  /* Sorted by path, so that the dispatch order is the same every time. */
  char **order = lm_calloc(n + 1, sizeof(char *));
  if (!order) {
    st = lm_oom(diag, path);
    goto done;
  }
  for (size_t i = 0; i < n; i++) order[i] = fd->paths[i];
  qsort(order, n, sizeof *order, cmp_paths);
  size_t n_runs = 0;
  for (size_t o = 0; o < n; o++) {
    size_t i = 0;
    while (fd->paths[i] != order[o]) i++;
    char run[4096];
    run_of(fd->paths[i], run, sizeof run);
    size_t g = 0;
    while (g < n_runs && strcmp(runs[g], run) != 0) g++;
    if (g == n_runs) {
      runs[g] = lm_malloc(strlen(run) + 1);
      if (!runs[g]) {
        st = lm_oom(diag, path);
        break;
      }
      strcpy(runs[g], run);
      n_runs++;
    }
    if (fd->kinds[i] == LM_V3_COUNTERS) {
      files->counter_group[files->n_counters] = (int)g;
      files->counters[files->n_counters++] = fd->paths[i];
    } else if (fd->kinds[i] == LM_V3_ROCPD) {
      files->rocpd[files->n_rocpd++] = fd->paths[i];
    } else if (fd->kinds[i] == LM_V3_JSON) {
      files->json[files->n_json++] = fd->paths[i];
    } else if (fd->kinds[i] == LM_V3_TRACE) {
      files->trace_group[files->n_traces] = (int)g;
      files->traces[files->n_traces++] = fd->paths[i];
    } else {
      files->agent_group[files->n_agents] = (int)g;
      files->agents[files->n_agents++] = fd->paths[i];
    }
    fd->paths[i] = NULL;
  }
  lm_free(order);
done:
  for (size_t g = 0; runs && g < n; g++) lm_free(runs[g]);
  lm_free(runs);
  return st;
}

lm_status lm_v3_find_files(const char *path, lm_v3_files *files, lm_diag *diag) {
  memset(files, 0, sizeof *files);
  found fd = {0};
  struct stat s;
  lm_status st = LM_OK;
  if (stat(path, &s) != 0) return lm_fail(diag, LM_ENOTFOUND, path, "no such file or folder");
  if (S_ISDIR(s.st_mode)) {
    st = scan(path, 2, &fd, diag);
  } else if (S_ISREG(s.st_mode)) {
    int kind = file_kind(path);
    if (kind == LM_V3_COUNTERS || kind == LM_V3_TRACE) {
      st = add_found(&fd, path, kind, path, diag);
      if (st == LM_OK) st = siblings(path, &fd, diag);
    } else if (lm_v3_rocpd_detect(path)) {
      st = add_found(&fd, path, LM_V3_ROCPD, path, diag);
    } else if (lm_v3_json_detect(path)) {
      st = add_found(&fd, path, LM_V3_JSON, path, diag);
    }
  }
  if (st == LM_OK) st = split(&fd, files, diag, path);
  for (size_t i = 0; i < fd.n; i++) lm_free(fd.paths[i]);
  lm_free(fd.paths);
  lm_free(fd.kinds);
  if (st != LM_OK) lm_v3_files_free(files);
  return st;
}

void lm_v3_files_free(lm_v3_files *files) {
  for (size_t i = 0; files->counters && i < files->n_counters; i++) lm_free(files->counters[i]);
  for (size_t i = 0; files->traces && i < files->n_traces; i++) lm_free(files->traces[i]);
  for (size_t i = 0; files->agents && i < files->n_agents; i++) lm_free(files->agents[i]);
  for (size_t i = 0; files->rocpd && i < files->n_rocpd; i++) lm_free(files->rocpd[i]);
  for (size_t i = 0; files->json && i < files->n_json; i++) lm_free(files->json[i]);
  lm_free(files->rocpd);
  lm_free(files->json);
  lm_free(files->counters);
  lm_free(files->traces);
  lm_free(files->agents);
  lm_free(files->counter_group);
  lm_free(files->trace_group);
  lm_free(files->agent_group);
  memset(files, 0, sizeof *files);
}
