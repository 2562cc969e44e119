/*
 * identify.c - what a path that is not a workload holds, in words a user
 * can act on.
 *
 * Users point lumen at what they have on disk: the output of rocprofv3,
 * rocprof (v1) or Nsight Compute, or the folder above a workload. Each of
 * these is recognized by the header line of its CSV files (names change
 * between versions and users rename files; the columns are what the tool
 * wrote) or, for binary reports, by the extension; a folder is recognized
 * by the files and the workload folders directly inside it. Only the first
 * line of a few files is read, each through lm_open_read (never blocking on
 * a FIFO), so a look at a large folder stays cheap.
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "db/db.h"
#include "folder/folder.h"

enum { MAX_LOOKS = 64, MAX_SUGGESTIONS = 4 };

/* The first line of a regular file (up to cap - 1 bytes), without a
 * byte-order mark; 0 when it cannot be read. */
static int first_line(const char *path, char *out, size_t cap) {
  int fd = -1;
  if (lm_open_read(path, 0, &fd, NULL, NULL) != LM_OK) return 0;
  ssize_t n = read(fd, out, cap - 1);
  close(fd);
  if (n <= 0) return 0;
  out[n] = '\0';
  char *nl = strpbrk(out, "\r\n");
  if (nl) *nl = '\0';
  if ((unsigned char)out[0] == 0xEF && (unsigned char)out[1] == 0xBB && (unsigned char)out[2] == 0xBF)
    memmove(out, out + 3, strlen(out + 3) + 1);
  return 1;
}

/* Whether a CSV header names column `name` (quoted or not). */
static int has_col(const char *header, const char *name) {
  size_t n = strlen(name);
  for (const char *p = header; *p;) {
    const char *f = p;
    if (*f == '"') f++;
    if (strncmp(f, name, n) == 0 && (f[n] == '"' || f[n] == ',' || f[n] == '\0')) return 1;
    const char *comma = strchr(p, ',');
    if (!comma) break;
    p = comma + 1;
  }
  return 0;
}

static int ends_with(const char *s, const char *suffix) {
  size_t n = strlen(s), k = strlen(suffix);
  return n >= k && strcmp(s + n - k, suffix) == 0;
}

static const char *const what_to_do =
    "lumen reads rocprofiler-compute (Omniperf) workload folders and its own profiles: "
    "collect one with `lumen profile -- APP` or `rocprof-compute profile`";

/* What a file is, by its name and first line, written to out; 0 when it
 * is none of the formats known here. */
static int identify_file(const char *path, char *out, size_t cap) {
  const char *base = strrchr(path, '/');
  base = base ? base + 1 : path;
  if (ends_with(base, ".ncu-rep")) {
    snprintf(out, cap,
             "%s is an Nsight Compute report; export it with `ncu --import %s --csv --page raw > %.*s.csv`", base,
             base, (int)(strlen(base) - 8), base);
    return 1;
  }
  if (ends_with(base, ".nsys-rep") || ends_with(base, ".qdrep")) {
    snprintf(out, cap, "%s is an Nsight Systems report (a timeline without hardware counters); %s", base,
             what_to_do);
    return 1;
  }
  if (ends_with(base, ".rocpd") || (ends_with(base, "_results.db"))) {
    snprintf(out, cap, "%s looks like a rocprofv3 rocpd database; %s", base, what_to_do);
    return 1;
  }
  if (!ends_with(base, ".csv")) return 0;
  char head[4096];
  if (!first_line(path, head, sizeof head)) return 0;
  if (has_col(head, "Counter_Name") && has_col(head, "Counter_Value") && has_col(head, "Dispatch_Id")) {
    snprintf(out, cap, "%s is a rocprofv3 counter collection (one row per dispatch and counter); %s", base,
             what_to_do);
    return 1;
  }
  if (has_col(head, "Kind") && has_col(head, "Kernel_Name") && has_col(head, "Start_Timestamp") &&
      !has_col(head, "Counter_Name")) {
    snprintf(out, cap, "%s is a rocprofv3 kernel trace (timestamps, no hardware counters); %s", base, what_to_do);
    return 1;
  }
  if (has_col(head, "KernelName") && has_col(head, "gpu-id")) {
    snprintf(out, cap, "%s is rocprof (v1) output (one row per dispatch); %s", base, what_to_do);
    return 1;
  }
  if (has_col(head, "Name") && has_col(head, "Calls") && has_col(head, "TotalDurationNs")) {
    snprintf(out, cap,
             "%s is a rocprof kernel statistics file (per-kernel totals, no dispatches); lumen reads the "
             "results.csv that `rocprof --stats` writes beside it (one row per dispatch): give -w that file or its "
             "folder",
             base);
    return 1;
  }
  if (has_col(head, "Kernel Name") && has_col(head, "ID") && (has_col(head, "Metric Name") || has_col(head, "Process ID"))) {
    snprintf(out, cap, "%s is an Nsight Compute CSV export; lumen reads it given as the file (-w %s)", base,
             path);
    return 1;
  }
  return 0;
}

/* Whether dir/name is a workload folder (pmc_perf.csv, a lumen database
 * or MPI rank parts). */
static int is_workload(const char *dir, const char *name) {
  char path[4096];
  static const char *const marks[] = {"pmc_perf.csv", LM_WORKLOAD_DB, "rank.0"};
  for (size_t i = 0; i < 3; i++) {
    if ((size_t)snprintf(path, sizeof path, "%s/%s/%s", dir, name, marks[i]) >= sizeof path) return 0;
    struct stat st;
    if (stat(path, &st) == 0) return 1;
  }
  return 0;
}

/* Two of the names kept in place (char arrays of one length). */
static int cmp_names(const void *a, const void *b) { return strcmp((const char *)a, (const char *)b); }

int lm_folder_identify(const char *path, char *out, size_t cap) {
  if (!cap) return 0;
  out[0] = '\0';
  struct stat st;
  if (stat(path, &st) != 0) return 0;
  if (!S_ISDIR(st.st_mode)) return S_ISREG(st.st_mode) ? identify_file(path, out, cap) : 0;
  DIR *d = opendir(path);
  if (!d) return 0;
  struct dirent *e;
  /* Names kept in place: no suggestion is lost to a failed copy. */
  char subs[MAX_LOOKS][sizeof e->d_name];
  size_t n_subs = 0, n_more = 0, looks = 0;
  int found = 0;
  char file[4096];
  while ((e = readdir(d)) != NULL) {
    if (e->d_name[0] == '.') continue;
    if ((size_t)snprintf(file, sizeof file, "%s/%s", path, e->d_name) >= sizeof file) continue;
    struct stat es;
    if (stat(file, &es) != 0) continue;
    if (S_ISDIR(es.st_mode)) {
      if (is_workload(path, e->d_name)) {
        if (n_subs < MAX_LOOKS) {
          snprintf(subs[n_subs++], sizeof subs[0], "%s", e->d_name);
        } else {
          n_more++;
        }
      }
    } else if (!found && S_ISREG(es.st_mode) && looks++ < MAX_LOOKS) {
      found = identify_file(file, out, cap);
    }
  }
  closedir(d);
  if (!found && n_subs) {
    qsort(subs, n_subs, sizeof *subs, cmp_names);
    size_t len = 0;
    int w = snprintf(out, cap, "it holds workload folder%s: did you mean ", n_subs + n_more > 1 ? "s" : "");
    len = w > 0 ? (size_t)w : 0;
    const char *sep = strcmp(path, "/") == 0 || ends_with(path, "/") ? "" : "/";
    for (size_t i = 0; i < n_subs && i < MAX_SUGGESTIONS && len < cap; i++) {
      w = snprintf(out + len, cap - len, "%s-w %s%s%s", i ? ", " : "", path, sep, subs[i]);
      len += w > 0 ? (size_t)w : 0;
    }
    if (len < cap && n_subs + n_more > MAX_SUGGESTIONS)
      snprintf(out + len, cap - len, " (and %zu more)", n_subs + n_more - MAX_SUGGESTIONS);
    found = 1;
  }
  return found;
}
