/*
 * export.c - a workload written in the reference tool's folder layout
 * (pmc_perf.csv, the SQ_* accumulate tables, sysinfo.csv, roofline.csv), for
 * rocprofiler-compute, Omniperf or anything built on their files.
 *
 * Invariant: reading the folder back gives the tables the workload had:
 * numbers with 17 significant digits, text cells as read (quoted as CSV
 * requires), blanks blank. A workload read from a database has every dispatch
 * column but, of a text column, only the first cell: its empty dispatch
 * columns are left out, and that text fills its column's cells that hold no
 * number (write_table). A simulated replay stays marked as one
 * (LM_ORIGIN_FILE).
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>

#include "folder/folder.h"

static void put_text(FILE *f, const char *s) {
  int quote = strpbrk(s, ",\"\n\r") != NULL;
  if (!quote) {
    fputs(s, f);
    return;
  }
  fputc('"', f);
  for (; *s; s++) {
    if (*s == '"') fputc('"', f);
    fputc(*s, f);
  }
  fputc('"', f);
}

static void put_number(FILE *f, double v) {
  if (isnan(v)) return;
  if (v == floor(v) && fabs(v) < 1e17) fprintf(f, "%.0f", v);
  else fprintf(f, "%.17g", v);
}

/* Columns in the reference's order: dispatch facts first, then counters,
 * then timestamps (and lumen's measured clocks last). */
static const char *const leading[] = {"Dispatch_ID", "Kernel_Name", "GPU_ID", "Grid_Size",
                                      "Workgroup_Size", "LDS_Per_Workgroup", "Scratch_Per_Workitem",
                                      "Arch_VGPR", "Accum_VGPR", "SGPR", "Wave_Size"};
static const char *const trailing[] = {"Start_Timestamp", "End_Timestamp", "Measured_SCLK_MHz",
                                       "Measured_MCLK_MHz"};

/* Where the columns of t go: the first column of each leading name, then
 * every column not placed in table order (a repeated name among them, so
 * that reading the file back finds the same first one), then the first
 * column of each trailing name. order gets n_cols entries. */
static void column_order(const lm_table *t, size_t *order, uint8_t *placed) {
  size_t n = 0;
  long trail[sizeof trailing / sizeof *trailing];
  for (size_t i = 0; i < sizeof leading / sizeof *leading; i++) {
    long c = lm_table_find(t, leading[i]);
    if (c >= 0 && !placed[c]) {
      order[n++] = (size_t)c;
      placed[c] = 1;
    }
  }
  for (size_t i = 0; i < sizeof trailing / sizeof *trailing; i++) {
    trail[i] = lm_table_find(t, trailing[i]);
    if (trail[i] >= 0) placed[trail[i]] |= 2;
  }
  for (size_t c = 0; c < t->n_cols; c++)
    if (!placed[c]) order[n++] = c;
  for (size_t i = 0; i < sizeof trailing / sizeof *trailing; i++)
    if (trail[i] >= 0 && placed[trail[i]] == 2) {
      order[n++] = (size_t)trail[i];
      placed[trail[i]] = 1;
    }
}

/* Whether column c holds nothing: no number and no text on any row. */
static int column_empty(const lm_table *t, size_t c, const double *values) {
  if (t->cols[c].n_text && !t->cols[c].text_ids) return 0;
  for (size_t r = 0; r < t->n_rows; r++) {
    const char *text = lm_table_text(t, c, r);
    if (!isnan(values[r]) || (text && text[0])) return 0;
  }
  return 1;
}

/* Write table t as the CSV file path. A cell is written as the text the
 * table holds for it, else as its number; in a column that held text the
 * table no longer holds (a lumen database keeps only a column's first
 * text), the cells without a number get that first text, so that they read
 * back as text, not as blanks. With drop_empty, columns that hold nothing
 * are left out: the reader refuses a pmc_perf.csv with such a column, and
 * only the dispatch columns every lumen database has (the measured clocks
 * of an imported folder, say) can be empty in a table it accepted. */
static lm_status write_table(const lm_table *t, const char *path, int drop_empty, lm_diag *diag) {
  lm_status st = LM_OK;
  FILE *f = NULL;
  size_t *order = lm_malloc((t->n_cols + 1) * sizeof *order), n = 0;
  uint8_t *placed = lm_calloc(t->n_cols + 1, 1);
  const double **values = lm_calloc(t->n_cols + 1, sizeof *values);
  if (!order || !placed || !values) {
    st = lm_oom(diag, path);
    goto done;
  }
  for (size_t c = 0; c < t->n_cols; c++)
    if (!(values[c] = lm_table_values(t, c, diag))) {
      st = diag ? diag->status : LM_EIO;
      goto done;
    }
  column_order(t, order, placed);
  for (size_t i = 0; i < t->n_cols; i++)
    if (!drop_empty || t->n_rows == 0 || !column_empty(t, order[i], values[order[i]])) order[n++] = order[i];
  f = fopen(path, "w");
  if (!f) {
    st = lm_fail(diag, LM_EIO, path, "cannot write: %s", strerror(errno));
    goto done;
  }
  for (size_t i = 0; i < n; i++) {
    if (i) fputc(',', f);
    put_text(f, t->cols[order[i]].name);
  }
  fputc('\n', f);
  for (size_t r = 0; r < t->n_rows; r++) {
    for (size_t i = 0; i < n; i++) {
      const lm_column *col = &t->cols[order[i]];
      const char *text = lm_table_text(t, order[i], r);
      double v = values[order[i]][r];
      if (!text && isnan(v) && col->n_text && !col->text_ids) text = col->first_text;
      if (i) fputc(',', f);
      if (text) put_text(f, text);
      else put_number(f, v);
    }
    fputc('\n', f);
  }
  int failed = ferror(f);
  if ((fclose(f) != 0) | failed) st = lm_fail(diag, LM_EIO, path, "write failed: %s", strerror(errno));
done:
  lm_free(order);
  lm_free(placed);
  lm_free(values);
  return st;
}

static lm_status write_sysinfo(const lm_sysinfo *info, const char *path, lm_diag *diag) {
  FILE *f = fopen(path, "w");
  if (!f) return lm_fail(diag, LM_EIO, path, "cannot write: %s", strerror(errno));
  for (size_t i = 0; i < info->n_fields; i++) {
    if (i) fputc(',', f);
    put_text(f, info->names[i]);
  }
  fputc('\n', f);
  for (size_t i = 0; i < info->n_fields; i++) {
    if (i) fputc(',', f);
    put_text(f, info->texts[i] ? info->texts[i] : "");
  }
  fputc('\n', f);
  int failed = ferror(f);
  if ((fclose(f) != 0) | failed) return lm_fail(diag, LM_EIO, path, "write failed: %s", strerror(errno));
  return LM_OK;
}

/* The mark of a replay of the simulated device (LM_ORIGIN_FILE). */
static lm_status write_origin(const char *recording, const char *path, lm_diag *diag) {
  FILE *f = fopen(path, "w");
  if (!f) return lm_fail(diag, LM_EIO, path, "cannot write: %s", strerror(errno));
  fprintf(f, "%s%s\n", LM_ORIGIN_SIMULATED, recording);
  int failed = ferror(f);
  if ((fclose(f) != 0) | failed) return lm_fail(diag, LM_EIO, path, "write failed: %s", strerror(errno));
  return LM_OK;
}

lm_status lm_folder_export(const lm_workload *w, const char *dir, lm_diag *diag) {
  struct stat sb;
  if (stat(dir, &sb) == 0)
    return lm_fail(diag, LM_EINVAL, dir, "already exists; export writes a new folder and never overwrites");
  if (mkdir(dir, 0777) != 0) return lm_fail(diag, LM_EIO, dir, "cannot create the folder: %s", strerror(errno));
  char path[4096];
  lm_status st;
  snprintf(path, sizeof path, "%s/pmc_perf.csv", dir);
  if ((st = write_table(w->pmc, path, 1, diag)) != LM_OK) return st;
  for (size_t i = 0; i < w->n_levels; i++) {
    snprintf(path, sizeof path, "%s/%s.csv", dir, w->levels[i]->name);
    if ((st = write_table(w->levels[i], path, 0, diag)) != LM_OK) return st;
  }
  snprintf(path, sizeof path, "%s/sysinfo.csv", dir);
  if ((st = write_sysinfo(&w->sysinfo, path, diag)) != LM_OK) return st;
  if (w->roofline) {
    snprintf(path, sizeof path, "%s/roofline.csv", dir);
    if ((st = write_table(w->roofline, path, 0, diag)) != LM_OK) return st;
  }
  if (w->simulated) {
    snprintf(path, sizeof path, "%s/%s", dir, LM_ORIGIN_FILE);
    if ((st = write_origin(w->simulated, path, diag)) != LM_OK) return st;
  }
  return LM_OK;
}
