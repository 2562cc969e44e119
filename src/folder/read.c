/*
 * read.c - reading an Omniperf/rocprofiler-compute workload folder.
 *
 * The folder is read as it is and never written: pmc_perf.csv (one row per
 * dispatch), the SQ_*.csv accumulate tables that metrics reach through
 * their source (coll_level), sysinfo.csv, and roofline.csv and
 * timestamps.csv when present, and the mark lumen export leaves on a
 * replay of the simulated device (LM_ORIGIN_FILE). Refusals follow the
 * reference tool so that scripts see the same outcome: a folder without
 * pmc_perf.csv, and a pmc_perf.csv in which every row has an empty cell.
 * A folder holding only the rank.R parts of an MPI profile is merged by
 * src/ranks, chosen in src/load.
 */
#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "csv/csv.h"
#include "sql/sql.h"
#include "db/db.h"
#include "folder/folder.h"

static const char *const pmc_text_columns[] = {"Kernel_Name", "Counter_Name", NULL};
static const char *const rocpd_text_columns[] = {"Kernel_Name", "Counter_Name", "Start_Timestamp",
                                                 "End_Timestamp", NULL};

static char *join_path(lm_arena *arena, const char *dir, const char *name) {
  size_t n = strlen(dir), m = strlen(name);
  char *path = lm_arena_alloc(arena, n + m + 2);
  if (!path) return NULL;
  memcpy(path, dir, n);
  if (n && dir[n - 1] != '/') path[n++] = '/';
  memcpy(path + n, name, m + 1);
  return path;
}

/* Whether the folder holds file `path`: 1 (a regular file, or a link to
 * one inside the folder), 0 (nothing there), or -1 with diag filled (a
 * folder, FIFO or device under that name, or a link leading out). */
static int file_present(const char *path, lm_diag *diag) {
  lm_diag why;
  lm_status st = lm_path_kind(path, LM_OPEN_CONTAINED, &why);
  if (st == LM_OK) return 1;
  if (st == LM_ENOTFOUND) return 0;
  if (diag) *diag = why;
  return -1;
}

int lm_folder_has_own(const char *dir) {
  lm_arena *arena = lm_arena_new(256);
  if (!arena) return 1;
  const char *db = join_path(arena, dir, LM_WORKLOAD_DB), *pmc = join_path(arena, dir, "pmc_perf.csv");
  /* A broken entry (-1) is the reader's to report: it counts as present. */
  int own = !db || !pmc || file_present(db, NULL) != 0 || file_present(pmc, NULL) != 0;
  lm_arena_free(arena);
  return own;
}

/* The dispatch facts analysis reads by name, as the reference writes them. */
static const char *const fact_columns[] = {
    "Dispatch_ID", "GPU_ID", "Grid_Size", "Workgroup_Size", "LDS_Per_Workgroup", "Scratch_Per_Workitem",
    "Arch_VGPR", "Accum_VGPR", "SGPR", "Start_Timestamp", "End_Timestamp", "GRBM_GUI_ACTIVE", "SQ_WAVES", NULL};

/* A column of t named `name` but for case (when t has no `name` itself),
 * or NULL. */
static const char *case_twin(const lm_table *t, const char *name) {
  for (size_t c = 0; c < t->n_cols; c++)
    if (strcasecmp(t->cols[c].name, name) == 0 && strcmp(t->cols[c].name, name) != 0) return t->cols[c].name;
  return NULL;
}

static int cmp_names(const void *a, const void *b) {
  return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* List the SQ*.csv files of dir, sorted, count unmerged pass files and
 * say whether the folder holds LM_ORIGIN_FILE. */
static lm_status scan_dir(const char *dir, lm_arena *arena, const char ***sq_out,
                          size_t *n_sq_out, size_t *n_unmerged, int *has_origin, lm_diag *diag) {
  DIR *d = opendir(dir);
  if (!d)
    return lm_fail(diag, errno == ENOENT ? LM_ENOTFOUND : LM_EIO, dir, "cannot open workload folder: %s",
                   strerror(errno));
  size_t cap = 16, n = 0;
  const char **names = lm_arena_alloc(arena, cap * sizeof *names);
  lm_status status = LM_OK;
  *n_unmerged = 0;
  *has_origin = 0;
  if (!names) {
    status = lm_oom(diag, dir);
    goto done;
  }
  struct dirent *e;
  while ((e = readdir(d)) != NULL) {
    size_t len = strlen(e->d_name);
    if (strcmp(e->d_name, LM_ORIGIN_FILE) == 0) *has_origin = 1;
    if (len < 5 || strcmp(e->d_name + len - 4, ".csv") != 0) continue;
    if (strncmp(e->d_name, "pmc_perf_", 9) == 0) (*n_unmerged)++;
    if (strncmp(e->d_name, "SQ", 2) != 0) continue;
    if (n == cap) {
      const char **grown = lm_arena_alloc(arena, 2 * cap * sizeof *grown);
      if (!grown) goto nomem;
      memcpy(grown, names, cap * sizeof *grown);
      names = grown;
      cap *= 2;
    }
    names[n] = lm_arena_strdup(arena, e->d_name);
    if (!names[n]) goto nomem;
    n++;
  }
  qsort(names, n, sizeof *names, cmp_names);
  *sq_out = names;
  *n_sq_out = n;
  goto done;
nomem:
  status = lm_oom(diag, dir);
done:
  closedir(d);
  return status;
}

/* Read the CSV table at path with options (NULL: the defaults). With
 * keep_text, every column in which a cell is not a number keeps the text
 * of its cells as well: the file is read again, those columns added to
 * options' text columns, when the first read found such a column. */
static lm_status read_table(const char *path, const lm_csv_options *options, int keep_text, lm_table **out,
                            lm_diag *diag) {
  lm_status status = lm_csv_read(path, options, out, diag);
  if (status != LM_OK || !keep_text) return status;
  lm_table *first = *out;
  size_t n_named = 0, n_found = 0;
  for (size_t c = 0; c < first->n_cols; c++) n_found += first->cols[c].n_text && !first->cols[c].text_ids;
  if (!n_found) return LM_OK;
  for (const char *const *tc = options ? options->text_columns : NULL; tc && *tc; tc++) n_named++;
  const char **names = lm_malloc((n_named + n_found + 1) * sizeof *names);
  if (!names) {
    status = lm_oom(diag, path);
    goto done;
  }
  size_t n = 0;
  for (size_t i = 0; i < n_named; i++) names[n++] = options->text_columns[i];
  for (size_t c = 0; c < first->n_cols; c++)
    if (first->cols[c].n_text && !first->cols[c].text_ids) names[n++] = first->cols[c].name;
  names[n] = NULL;
  lm_csv_options again = {0};
  if (options) again = *options;
  again.text_columns = names;
  *out = NULL;
  status = lm_csv_read(path, &again, out, diag);
done:
  lm_free(names);
  if (*out != first) lm_table_free(first);
  return status;
}

static lm_status read_sysinfo(lm_workload *w, const char *path, lm_diag *diag) {
  lm_csv_options options = {0};
  options.all_text = 1;
  lm_status status = lm_csv_read(path, &options, &w->sysinfo_table, diag);
  if (status != LM_OK) {
    if (status == LM_ENOTFOUND) lm_fail(diag, status, path, "missing: a workload folder needs sysinfo.csv");
    return status;
  }
  const lm_table *t = w->sysinfo_table;
  if (t->n_rows < 1) return lm_fail_at(diag, LM_EDATA, path, 2, NULL, "no data row: sysinfo.csv must hold one row");
  if (t->n_rows > 1)
    lm_log(LM_LOG_WARN,
           "%s:3: sysinfo.csv holds %zu data rows; only the first describes the system (as in "
           "the reference tool), the others are ignored",
           path, t->n_rows);
  lm_sysinfo *info = &w->sysinfo;
  info->n_fields = t->n_cols;
  info->names = lm_arena_alloc(w->arena, t->n_cols * sizeof(char *));
  info->texts = lm_arena_alloc(w->arena, t->n_cols * sizeof(char *));
  info->values = lm_arena_alloc(w->arena, t->n_cols * sizeof(double));
  if (!info->names || !info->texts || !info->values) return lm_oom(diag, path);
  for (size_t c = 0; c < t->n_cols; c++) {
    info->names[c] = t->cols[c].name;
    const char *text = lm_table_text(t, c, 0);
    info->texts[c] = text ? text : "";
    info->values[c] = t->cols[c].values[0];
  }
  w->arch = lm_sysinfo_text(info, "gpu_arch");
  if (!w->arch || !w->arch[0])
    return lm_fail_at(diag, LM_EDATA, path, 1, "gpu_arch", "missing or empty: the architecture is read from it");
  return LM_OK;
}

/* The mark lumen export leaves in the folder of a replay of the simulated
 * device (LM_ORIGIN_FILE): w->simulated names the recording. A file that
 * says anything else marks nothing. */
static lm_status read_origin(lm_workload *w, const char *path, lm_diag *diag) {
  char *text = NULL;
  size_t len = 0;
  lm_status status = lm_read_file(path, 1 << 16, &text, &len, diag);
  if (status != LM_OK) return status;
  size_t n = strlen(LM_ORIGIN_SIMULATED);
  if (len >= n && strncmp(text, LM_ORIGIN_SIMULATED, n) == 0) {
    size_t end = strcspn(text + n, "\r\n");
    w->simulated = lm_arena_strndup(w->arena, text + n, end);
    if (!w->simulated) status = lm_oom(diag, path);
  }
  lm_free(text);
  return status;
}

/* Whether dir is a folder; else the error, naming what it is when known. */
static lm_status check_folder(const char *dir, lm_diag *diag) {
  struct stat st;
  if (stat(dir, &st) != 0) return lm_fail(diag, LM_ENOTFOUND, dir, "no such workload folder");
  if (!S_ISDIR(st.st_mode)) {
    char what[1024];
    if (lm_folder_identify(dir, what, sizeof what))
      return lm_fail(diag, LM_EINVAL, dir, "not a workload folder: %s", what);
    return lm_fail(diag, LM_EINVAL, dir,
                   "not a folder: a workload is a folder holding "
                   "pmc_perf.csv and sysinfo.csv");
  }
  return LM_OK;
}

/* The workload of the lumen database at db_path; w (the folder's, not
 * needed then) is freed either way. */
static lm_status read_database(lm_workload *w, const char *db_path, const lm_workload_options *opts,
                               lm_workload **out, lm_diag *diag) {
  lm_sql *db = NULL;
  lm_workload *loaded = NULL;
  lm_status status = lm_sql_open(db_path, opts && opts->fixed ? LM_DB_READ_FIXED : LM_DB_READ, &db, diag);
  if (status == LM_OK) status = lm_db_schema(db, 0, diag);
  if (status == LM_OK)
    status = lm_db_read_workload(db, NULL, opts, &loaded, diag);
  lm_sql_close(db);
  lm_workload_free(w);
  if (status == LM_OK) *out = loaded;
  return status;
}

/* The error of a folder without pmc_perf.csv: unmerged pass files, or
 * what the folder is when it is known. */
static lm_status missing_pmc(const char *dir, size_t n_unmerged, lm_diag *diag) {
  if (n_unmerged)
    return lm_fail(diag, LM_ENOTFOUND, dir,
                   "cannot find pmc_perf.csv (the folder holds %zu "
                   "unmerged pmc_perf_<n>.csv pass files: the "
                   "profiling run did not finish its merge step)",
                   n_unmerged);
  char what[1024];
  int known = lm_folder_identify(dir, what, sizeof what);
  return lm_fail(diag, LM_ENOTFOUND, dir, "cannot find pmc_perf.csv: not a workload folder%s%s", known ? "; " : "",
                 known ? what : "");
}

/* The CSV options of pmc_perf.csv and of the level tables, as opts asks
 * (deferred columns, those loaded on the way). */
static void csv_options(const lm_workload *w, const lm_workload_options *opts, lm_csv_options *pmc_options,
                        lm_csv_options *level_options) {
  pmc_options->text_columns = pmc_text_columns;
  if (opts && opts->defer) {
    pmc_options->defer = level_options->defer = 1;
    pmc_options->eager_columns = opts->eager_columns;
    /* An accumulate table holds the dispatch facts again (two thirds of
     * its columns); a caller that evaluates only its counters leaves
     * them in the file too. */
    level_options->eager_columns = opts->levels_lazy ? NULL : opts->eager_columns;
    if (opts->load_wanted && opts->choose) {
      void *want_ctx = NULL;
      lm_db_want_fn want = opts->choose(opts->choose_ctx, w->arch, lm_sysinfo_compat(&w->sysinfo), &want_ctx);
      pmc_options->load_want = level_options->load_want = want;
      pmc_options->load_ctx = level_options->load_ctx = want_ctx;
      pmc_options->load_cap = level_options->load_cap = opts->load_cap;
    }
  }
}

/* pmc_perf.csv into w->pmc; a rocpd long layout (*rocpd set) read again
 * and pivoted to the wide one. */
static lm_status read_pmc(lm_workload *w, const char *pmc_path, lm_csv_options *pmc_options, int keep_text,
                          int *rocpd, lm_diag *diag) {
  lm_status status = read_table(pmc_path, pmc_options, keep_text, &w->pmc, diag);
  if (status != LM_OK) return status;
  *rocpd = lm_rocpd_is_long(w->pmc);
  if (!*rocpd) return LM_OK;
  /* Read again keeping the timestamps' text: they exceed 2^53 ns, so only
   * the integers give the exact durations the reference computes. The
   * long layout is pivoted as a whole: nothing is deferred. */
  lm_table_free(w->pmc);
  w->pmc = NULL;
  pmc_options->text_columns = rocpd_text_columns;
  pmc_options->defer = 0;
  status = read_table(pmc_path, pmc_options, keep_text, &w->pmc, diag);
  if (status != LM_OK) return status;
  lm_table *wide = NULL;
  status = lm_rocpd_pivot(w->pmc, &wide, diag);
  if (status != LM_OK) return status;
  lm_table_free(w->pmc);
  w->pmc = wide;
  return LM_OK;
}

/* The dispatch table's checks: a kernel name column, a warning for each
 * fact column named in another case, and at least one complete row. */
static lm_status check_pmc(const lm_table *pmc, const char *pmc_path, lm_diag *diag) {
  if (lm_table_find(pmc, "Kernel_Name") < 0) {
    const char *twin = case_twin(pmc, "Kernel_Name");
    return lm_fail_at(diag, LM_EDATA, pmc_path, 1, "Kernel_Name",
                      "missing column: every dispatch row needs a kernel name%s%s%s", twin ? " (the file has '" : "",
                      twin ? twin : "", twin ? "': column names are case-sensitive)" : "");
  }
  for (const char *const *name = fact_columns; *name; name++) {
    const char *twin = lm_table_find(pmc, *name) < 0 ? case_twin(pmc, *name) : NULL;
    if (twin)
      lm_log(LM_LOG_WARN, "%s:1: field '%s': not the column '%s' the analysis reads (column names are "
             "case-sensitive): rename it, or it is left out", pmc_path, twin, *name);
  }
  size_t complete = 0;
  for (size_t r = 0; r < pmc->n_rows; r++) complete += !pmc->row_missing[r];
  if (complete) return LM_OK;
  long line = 0;
  const char *field = NULL;
  for (size_t c = 0; c < pmc->n_cols && !field; c++) {
    if (!pmc->cols[c].n_missing) continue;
    field = pmc->cols[c].name;
    const double *values = lm_table_values(pmc, c, NULL);
    for (size_t r = 0; values && r < pmc->n_rows; r++)
      if (isnan(values[r]) && !lm_table_text(pmc, c, r)) {
        line = (long)r + 2;
        break;
      }
  }
  return lm_fail_at(diag, LM_EDATA, pmc_path, line, field,
                    pmc->n_rows ? "every dispatch row has an empty cell (profiling "
                                  "data may be corrupt); the first one is here"
                                : "no dispatch rows");
}

/* The level tables: those of a rocpd layout, then the SQ files of the
 * folder (sq_names). */
static lm_status read_levels(lm_workload *w, const char *dir, const char **sq_names, size_t n_sq, int rocpd,
                             const lm_csv_options *level_options, int keep_text, lm_diag *diag) {
  size_t n_rocpd = rocpd ? lm_rocpd_n_levels(w->pmc) : 0;
  w->levels = lm_arena_alloc(w->arena, (n_sq + n_rocpd ? n_sq + n_rocpd : 1) * sizeof *w->levels);
  if (!w->levels) goto nomem;
  if (n_rocpd) {
    lm_status status = lm_rocpd_levels(w->pmc, w->levels, &w->n_levels, diag);
    if (status != LM_OK) return status;
  }
  for (size_t i = 0; i < n_sq; i++) {
    char *path = join_path(w->arena, dir, sq_names[i]);
    if (!path) goto nomem;
    lm_status status = read_table(path, level_options, keep_text, &w->levels[w->n_levels], diag);
    if (status != LM_OK) return status;
    w->n_levels++;
  }
  return LM_OK;
nomem:
  return lm_oom(diag, dir);
}

/* roofline.csv when present, and the origin file when the folder has one. */
static lm_status read_extras(lm_workload *w, const char *dir, int keep_text, int has_origin, lm_diag *diag) {
  char *roof_path = join_path(w->arena, dir, "roofline.csv");
  if (!roof_path) goto nomem;
  int roof_present = file_present(roof_path, diag);
  if (roof_present < 0) return diag ? diag->status : LM_EIO;
  if (roof_present) {
    lm_status status = read_table(roof_path, NULL, keep_text, &w->roofline, diag);
    if (status != LM_OK) return status;
  }
  if (has_origin) {
    char *origin_path = join_path(w->arena, dir, LM_ORIGIN_FILE);
    if (!origin_path) goto nomem;
    return read_origin(w, origin_path, diag);
  }
  return LM_OK;
nomem:
  return lm_oom(diag, dir);
}

lm_status lm_folder_read(const char *dir, const lm_workload_options *opts, lm_workload **out, lm_diag *diag) {
  lm_status status = LM_OK;
  lm_arena *arena = lm_arena_new(1 << 14);
  lm_workload *w = NULL;
  *out = NULL;
  if (!arena) return lm_oom(diag, dir);
  w = lm_arena_alloc(arena, sizeof *w);
  if (!w) {
    lm_arena_free(arena);
    return lm_oom(diag, dir);
  }
  w->arena = arena;
  w->path = lm_arena_strdup(arena, dir);
  if (!w->path) goto nomem;
  status = check_folder(dir, diag);
  if (status != LM_OK) goto fail;

  const char **sq_names = NULL;
  size_t n_sq = 0, n_unmerged = 0;
  int has_origin = 0;
  status = scan_dir(dir, arena, &sq_names, &n_sq, &n_unmerged, &has_origin, diag);
  if (status != LM_OK) goto fail;

  /* A lumen workload: its database. */
  char *db_path = join_path(arena, dir, LM_WORKLOAD_DB);
  if (!db_path) goto nomem;
  int db_present = file_present(db_path, diag);
  if (db_present < 0) {
    status = diag ? diag->status : LM_EIO;
    goto fail;
  }
  if (db_present) return read_database(w, db_path, opts, out, diag);

  char *pmc_path = join_path(arena, dir, "pmc_perf.csv");
  if (!pmc_path) goto nomem;
  int pmc_present = file_present(pmc_path, diag);
  if (pmc_present < 0) {
    status = diag ? diag->status : LM_EIO;
    goto fail;
  }
  if (!pmc_present) {
    status = missing_pmc(dir, n_unmerged, diag);
    goto fail;
  }

  char *sys_path = join_path(arena, dir, "sysinfo.csv");
  if (!sys_path) goto nomem;
  status = read_sysinfo(w, sys_path, diag);
  if (status != LM_OK) goto fail;

  lm_csv_options pmc_options = {0}, level_options = {0};
  csv_options(w, opts, &pmc_options, &level_options);
  int keep_text = opts && opts->keep_text, rocpd = 0;
  status = read_pmc(w, pmc_path, &pmc_options, keep_text, &rocpd, diag);
  if (status == LM_OK) status = check_pmc(w->pmc, pmc_path, diag);
  if (status == LM_OK) status = read_levels(w, dir, sq_names, n_sq, rocpd, &level_options, keep_text, diag);
  if (status == LM_OK) status = read_extras(w, dir, keep_text, has_origin, diag);
  if (status != LM_OK) goto fail;
  *out = w;
  return LM_OK;

nomem:
  status = lm_oom(diag, dir);
fail:
  lm_workload_free(w);
  return status;
}
