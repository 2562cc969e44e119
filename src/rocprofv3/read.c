/*
 * read.c - rocprofv3's CSV files folded into one row per dispatch.
 *
 * A counter collection holds one row per (dispatch, counter); the rows of
 * one dispatch usually follow each other, so the fold keeps the last
 * dispatch at hand and looks others up by id only when the id changes.
 * Memory is the folded table (dispatches x counters), never the file.
 * Dispatch ids are renumbered from 0 in the order dispatches first appear,
 * as the reference renumbers its rocpd rows; the kernel trace completes
 * the timestamps. Column names differ between rocprofv3 versions: each
 * pmc_perf column lists the names it is read from (docs/formats.md).
 */
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "csv/csv.h"
#include "devices/devices.h"
#include "rocprofv3/rocprofv3.h"
#include "rocprofv3/rocprofv3_private.h"

/* The dispatch facts, in pmc_perf's order, and the rocprofv3 columns each
 * is read from (the first present). */
enum { F_GRID = LM_V3_GRID, F_WG = LM_V3_WG, N_FACTS = LM_V3_N_FACTS };
const char *const lm_v3_fact_names[N_FACTS] = {
    "GPU_ID",    "Grid_Size",  "Workgroup_Size", "LDS_Per_Workgroup", "Scratch_Per_Workitem",
    "Arch_VGPR", "Accum_VGPR", "SGPR",           "Start_Timestamp",   "End_Timestamp"};
static const char *const fact_sources[N_FACTS][4] = {{"Agent_Id", NULL},
                                                     {"Grid_Size", NULL},
                                                     {"Workgroup_Size", NULL},
                                                     {"LDS_Block_Size", "Group_Segment_Size", "LDS_Size", NULL},
                                                     {"Scratch_Size", "Private_Segment_Size", NULL},
                                                     {"VGPR_Count", "Arch_VGPR_Count", NULL},
                                                     {"Accum_VGPR_Count", NULL},
                                                     {"SGPR_Count", NULL},
                                                     {"Start_Timestamp", NULL},
                                                     {"End_Timestamp", NULL}};

/* A number cell, or NaN for a blank; "Agent 2" is agent 2. */
static int cell_number(const char *s, double *v) {
  if (strncmp(s, "Agent ", 6) == 0) s += 6;
  int is_int;
  int kind = lm_parse_number(s, s + strlen(s), v, &is_int);
  if (kind == 2) return 1;
  return kind == 1;
}

/* The columns of a header: the index of each fact, of the dispatch id,
 * kernel name, counter name and value (-1 where absent), and the grid and
 * workgroup dimensions of a kernel trace. */
typedef struct header {
  long fact[N_FACTS];
  long id, kernel, counter, value;
  long grid_xyz[3], wg_xyz[3];
} header;

static long find_field(const char *const *f, size_t n, const char *name) {
  for (size_t i = 0; i < n; i++)
    if (strcmp(f[i], name) == 0) return (long)i;
  return -1;
}

static void read_header(const char *const *f, size_t n, header *h) {
  for (int k = 0; k < N_FACTS; k++) {
    h->fact[k] = -1;
    for (int s = 0; fact_sources[k][s] && h->fact[k] < 0; s++) h->fact[k] = find_field(f, n, fact_sources[k][s]);
  }
  h->id = find_field(f, n, "Dispatch_Id");
  h->kernel = find_field(f, n, "Kernel_Name");
  h->counter = find_field(f, n, "Counter_Name");
  h->value = find_field(f, n, "Counter_Value");
  static const char *const gx[3] = {"Grid_Size_X", "Grid_Size_Y", "Grid_Size_Z"};
  static const char *const wx[3] = {"Workgroup_Size_X", "Workgroup_Size_Y", "Workgroup_Size_Z"};
  for (int d = 0; d < 3; d++) {
    h->grid_xyz[d] = find_field(f, n, gx[d]);
    h->wg_xyz[d] = find_field(f, n, wx[d]);
  }
}

int lm_rocprofv3_header_kind(const char *const *f, size_t n) {
  if (find_field(f, n, "Dispatch_Id") < 0 || find_field(f, n, "Kernel_Name") < 0) return 0;
  if (find_field(f, n, "Counter_Name") >= 0 && find_field(f, n, "Counter_Value") >= 0) return LM_V3_COUNTERS;
  if (find_field(f, n, "Start_Timestamp") >= 0 && find_field(f, n, "End_Timestamp") >= 0) return LM_V3_TRACE;
  return 0;
}

/* One record of a counter collection or kernel trace into the fold. */
static lm_status fold_record(lm_v3_fold *fold, const lm_csv_rows *rows, const header *h, const char *const *f, size_t n,
                             lm_diag *diag) {
  const char *path = lm_csv_rows_path(rows);
  long line = lm_csv_rows_line(rows);
  if (h->id >= (long)n)
    return lm_fail_at(diag, LM_EPARSE, path, line, "Dispatch_Id", "record has %zu fields, the header more", n);
  size_t row;
  lm_status st = lm_fold_row(fold->t, f[h->id], &row, NULL, diag);
  if (st != LM_OK) return st;
  if (fold->t->kernel[row] < 0 && h->kernel >= 0 && h->kernel < (long)n) {
    int32_t id;
    if ((st = lm_fold_intern(fold->t, f[h->kernel], &id, diag)) != LM_OK) return st;
    fold->t->kernel[row] = id;
  }
  for (int k = 0; k < N_FACTS; k++) {
    long c = h->fact[k];
    if (c < 0 || c >= (long)n || !isnan(fold->t->facts[k][row])) continue;
    double v;
    if (!cell_number(f[c], &v))
      return lm_fail_at(diag, LM_EPARSE, path, line, fact_sources[k][0], "not a number: \"%.40s\"", f[c]);
    fold->t->facts[k][row] = v;
  }
  for (int d = 0, which = 0; which < 2; which++) {
    const long *xyz = which ? h->wg_xyz : h->grid_xyz;
    int fact = which ? F_WG : F_GRID;
    if (h->fact[fact] >= 0 || xyz[0] < 0 || !isnan(fold->t->facts[fact][row])) continue;
    double product = 1;
    for (d = 0; d < 3; d++) {
      double v = 1;
      if (xyz[d] >= 0 && xyz[d] < (long)n && !cell_number(f[xyz[d]], &v))
        return lm_fail_at(diag, LM_EPARSE, path, line, which ? "Workgroup_Size" : "Grid_Size", "not a number");
      product *= v;
    }
    fold->t->facts[fact][row] = product;
  }
  if (h->counter < 0) return LM_OK;
  if (h->value >= (long)n || h->counter >= (long)n)
    return lm_fail_at(diag, LM_EPARSE, path, line, "Counter_Value", "record has %zu fields, the header more", n);
  double v;
  if (!cell_number(f[h->value], &v))
    return lm_fail_at(diag, LM_EPARSE, path, line, "Counter_Value", "not a number: \"%.40s\"", f[h->value]);
  const char *name = f[h->counter];
  if (!name[0]) return lm_fail_at(diag, LM_EPARSE, path, line, "Counter_Name", "empty");
  return lm_v3_fold_put(fold, name, row, v, diag);
}

/* Room for the dispatches of a file of `size` bytes, estimated from its
 * first dispatch's records [start, end) (two rows are in the fold); at
 * most one per 64 bytes, the shortest a record with its counter can be. */
static lm_status reserve(lm_fold *t, size_t size, size_t start, size_t end, lm_diag *diag) {
  if (end <= start || size <= end) return LM_OK;
  size_t per = end - start, rest = (size - end) / per, most = size / 64;
  if (rest > most) rest = most;
  return lm_fold_reserve(t, t->n_rows + rest + rest / 16 + 16, diag);
}

lm_status lm_v3_fold_file(lm_v3_fold *fold, const char *file, int want_kind, lm_diag *diag) {
  lm_csv_rows *rows = NULL;
  lm_status st = lm_csv_rows_open(file, 0, &rows, diag);
  if (st != LM_OK) return st;
  const char *const *f;
  size_t n;
  header h;
  if ((st = lm_csv_rows_next(rows, &f, &n, diag)) != LM_OK) goto done;
  if (n == 0) {
    st = lm_fail_at(diag, LM_EDATA, file, 1, NULL, "empty file: no header");
    goto done;
  }
  int kind = lm_rocprofv3_header_kind(f, n);
  if (kind != want_kind) {
    st = lm_fail_at(diag, LM_EPARSE, file, 1, NULL, "not a rocprofv3 %s: the header lacks %s",
                    want_kind == LM_V3_COUNTERS ? "counter collection" : "kernel trace",
                    want_kind == LM_V3_COUNTERS ? "Counter_Name or Counter_Value" : "Start_Timestamp");
    goto done;
  }
  read_header(f, n, &h);
  /* A collection folds its timestamps; a trace completes missing ones. */
  fold->t->has_last = 0;
  size_t first_row = fold->t->n_rows, header_end = lm_csv_rows_offset(rows), before = header_end;
  int reserved = 0;
  for (;;) {
    if (!reserved && fold->t->n_rows >= first_row + 2) {
      /* The first dispatch's bytes tell how many the file holds. */
      reserved = 1;
      if ((st = reserve(fold->t, lm_csv_rows_size(rows), header_end, before, diag)) != LM_OK) break;
    }
    before = lm_csv_rows_offset(rows);
    if ((st = lm_csv_rows_next(rows, &f, &n, diag)) != LM_OK || n == 0) break;
    if (n == 1 && !f[0][0]) continue;
    if (kind == LM_V3_TRACE && fold->trace_only_new == 0) {
      /* Trace beside a collection: only dispatches the collection has. */
      if (h.id >= (long)n) continue;
      if (!lm_fold_find(fold->t, f[h.id], NULL)) continue;
    }
    if ((st = fold_record(fold, rows, &h, f, n, diag)) != LM_OK) break;
  }
done:
  lm_csv_rows_close(rows);
  return st;
}

int lm_rocprofv3_detect(const char *path) {
  lm_v3_files files;
  lm_diag diag;
  if (lm_v3_find_files(path, &files, &diag) != LM_OK) return 0;
  int found = files.n_counters + files.n_traces + files.n_rocpd + files.n_json > 0;
  lm_v3_files_free(&files);
  return found;
}

lm_status lm_rocprofv3_read(const char *path, const char *arch, const lm_workload_options *opts, lm_workload **out,
                            lm_diag *diag) {
  (void)opts;
  *out = NULL;
  lm_v3_files files;
  lm_v3_fold *fold = NULL;
  lm_v3_agents agents;
  memset(&agents, 0, sizeof agents);
  lm_status st = lm_v3_find_files(path, &files, diag);
  if (st != LM_OK) return st;
  if (files.n_counters + files.n_traces + files.n_rocpd + files.n_json == 0) {
    st = lm_fail(diag, LM_ENOTFOUND, path,
                 "no rocprofv3 counter collection, kernel trace, rocpd database or JSON output");
    goto done;
  }
  if ((st = lm_v3_fold_new(path, &fold, diag)) != LM_OK) goto done;
  for (size_t i = 0; i < files.n_counters && st == LM_OK; i++) {
    fold->t->group = files.counter_group[i];
    st = lm_v3_fold_file(fold, files.counters[i], LM_V3_COUNTERS, diag);
  }
  for (size_t i = 0; i < files.n_rocpd && st == LM_OK; i++) st = lm_v3_rocpd_read(files.rocpd[i], fold, &agents, diag);
  int group = -(1 << 30); /* JSON processes: groups apart from the CSV runs' */
  for (size_t i = 0; i < files.n_json && st == LM_OK; i++)
    st = lm_v3_json_read(files.json[i], fold, &agents, &group, diag);
  fold->trace_only_new = files.n_counters == 0;
  for (size_t i = 0; i < files.n_traces && st == LM_OK; i++) {
    fold->t->group = files.trace_group[i];
    st = lm_v3_fold_file(fold, files.traces[i], LM_V3_TRACE, diag);
  }
  if (st != LM_OK) goto done;
  st = lm_v3_fold_finish(fold, &files, &agents, arch, lm_v3_fact_names, N_FACTS, out, diag);
done:
  lm_v3_agents_free(&agents);
  lm_v3_fold_free(fold);
  lm_v3_files_free(&files);
  return st;
}
