/*
 * export.c - write a workload in the reference tool's folder layout
 * (pmc_perf.csv, the SQ_* accumulate tables, sysinfo.csv, roofline.csv),
 * so that a lumen profile can be read by rocprofiler-compute, Omniperf or
 * anything else built on their files.
 *
 * Tables are written column by column as they are held: numbers with 17
 * significant digits (integers without a fraction), so that reading the
 * files back gives the same doubles; text cells quoted as CSV requires;
 * blanks stay blank.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "io/io.h"

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

/* The reference's spelling of a column lumen names differently. */
static const char *csv_name(const char *name) {
  return strcmp(name, "Wave_Size") == 0 ? "wave_size" : name;
}

/* Columns in the reference's order: dispatch facts first, then counters,
 * then timestamps (and lumen's measured clocks last). */
static const char *const leading[] = {"Dispatch_ID", "Kernel_Name", "GPU_ID", "Grid_Size",
                                      "Workgroup_Size", "LDS_Per_Workgroup", "Scratch_Per_Workitem",
                                      "Arch_VGPR", "Accum_VGPR", "SGPR", "Wave_Size"};
static const char *const trailing[] = {"Start_Timestamp", "End_Timestamp", "Measured_SCLK_MHz",
                                       "Measured_MCLK_MHz"};

static int in_list(const char *name, const char *const *list, size_t n) {
  for (size_t i = 0; i < n; i++)
    if (strcmp(name, list[i]) == 0) return 1;
  return 0;
}

static lm_status write_table(const lm_table *t, const char *path, lm_diag *diag) {
  size_t *order = malloc((t->n_cols + 1) * sizeof *order), n = 0;
  if (!order) return lm_diag_set(diag, LM_ENOMEM, path, 0, 0, NULL, "out of memory");
  for (size_t i = 0; i < sizeof leading / sizeof *leading; i++) {
    long c = lm_table_find(t, leading[i]);
    if (c >= 0) order[n++] = (size_t)c;
  }
  for (size_t c = 0; c < t->n_cols; c++)
    if (!in_list(t->cols[c].name, leading, sizeof leading / sizeof *leading) &&
        !in_list(t->cols[c].name, trailing, sizeof trailing / sizeof *trailing))
      order[n++] = c;
  for (size_t i = 0; i < sizeof trailing / sizeof *trailing; i++) {
    long c = lm_table_find(t, trailing[i]);
    if (c >= 0) order[n++] = (size_t)c;
  }
  FILE *f = fopen(path, "w");
  if (!f) {
    free(order);
    return lm_diag_set(diag, LM_EIO, path, 0, 0, NULL, "cannot write: %s", strerror(errno));
  }
  for (size_t i = 0; i < n; i++) {
    if (i) fputc(',', f);
    put_text(f, csv_name(t->cols[order[i]].name));
  }
  fputc('\n', f);
  for (size_t r = 0; r < t->n_rows; r++) {
    for (size_t i = 0; i < n; i++) {
      size_t c = order[i];
      if (i) fputc(',', f);
      const char *text = t->cols[c].text_ids ? lm_table_text(t, c, r) : NULL;
      if (text) put_text(f, text);
      else put_number(f, t->cols[c].values[r]);
    }
    fputc('\n', f);
  }
  free(order);
  if (ferror(f) | (fclose(f) != 0))
    return lm_diag_set(diag, LM_EIO, path, 0, 0, NULL, "write failed: %s", strerror(errno));
  return LM_OK;
}

static lm_status write_sysinfo(const lm_sysinfo *info, const char *path, lm_diag *diag) {
  FILE *f = fopen(path, "w");
  if (!f) return lm_diag_set(diag, LM_EIO, path, 0, 0, NULL, "cannot write: %s", strerror(errno));
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
  if (ferror(f) | (fclose(f) != 0))
    return lm_diag_set(diag, LM_EIO, path, 0, 0, NULL, "write failed: %s", strerror(errno));
  return LM_OK;
}

lm_status lm_workload_export_omniperf(const lm_workload *w, const char *dir, lm_diag *diag) {
  struct stat sb;
  if (stat(dir, &sb) == 0)
    return lm_diag_set(diag, LM_EINVAL, dir, 0, 0, NULL,
                       "already exists; export writes a new folder and never overwrites");
  if (mkdir(dir, 0777) != 0)
    return lm_diag_set(diag, LM_EIO, dir, 0, 0, NULL, "cannot create the folder: %s", strerror(errno));
  char path[4096];
  lm_status st;
  snprintf(path, sizeof path, "%s/pmc_perf.csv", dir);
  if ((st = write_table(w->pmc, path, diag)) != LM_OK) return st;
  for (size_t i = 0; i < w->n_levels; i++) {
    snprintf(path, sizeof path, "%s/%s.csv", dir, w->levels[i]->name);
    if ((st = write_table(w->levels[i], path, diag)) != LM_OK) return st;
  }
  snprintf(path, sizeof path, "%s/sysinfo.csv", dir);
  if ((st = write_sysinfo(&w->sysinfo, path, diag)) != LM_OK) return st;
  if (w->roofline) {
    snprintf(path, sizeof path, "%s/roofline.csv", dir);
    if ((st = write_table(w->roofline, path, diag)) != LM_OK) return st;
  }
  return LM_OK;
}
