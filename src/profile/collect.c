/*
 * collect.c - `lumen profile`: plan, run the application with the tool
 * library, keep every finished run, and compose the workload.
 *
 * Every run is committed to the workload's database before the next one
 * starts (its dispatch records, counter values, regions and clock samples),
 * so a profile stopped at run k keeps runs 1..k-1 and `--resume` carries on
 * from there. Composition then lines the runs up: in application replay the
 * n-th selected instance of a kernel in every run is one dispatch row; in
 * instance cycling each run of consecutive instances that went through all
 * sets is one row. Rows that miss a set are left out and reported.
 */
#if defined(__SANITIZE_ADDRESS__)
#define _GNU_SOURCE /* dl_iterate_phdr */
#endif
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "backend/backend.h"
#include "io/io.h"
#include "profile/profile.h"

/* ----------------------------------------------------------- utilities */

static void now_text(char *out, size_t cap) {
  time_t now = time(NULL);
  strftime(out, cap, "%Y-%m-%dT%H:%M:%SZ", gmtime(&now));
}

static lm_status exec_sql(sqlite3 *db, const char *sql, lm_diag *diag) {
  char *err = NULL;
  if (sqlite3_exec(db, sql, NULL, NULL, &err) == SQLITE_OK) return LM_OK;
  lm_status st = lm_diag_set(diag, LM_EIO, sqlite3_db_filename(db, "main"), 0, 0, NULL, "%s", err ? err : "?");
  sqlite3_free(err);
  return st;
}

static lm_status sql_error(sqlite3 *db, lm_diag *diag) {
  return lm_diag_set(diag, LM_EIO, sqlite3_db_filename(db, "main"), 0, 0, NULL, "%s", sqlite3_errmsg(db));
}

/* ------------------------------------------------------------- options */

static lm_status put_option(sqlite3 *db, int64_t wid, const char *key, int pos, const char *value,
                            lm_diag *diag) {
  sqlite3_stmt *s = NULL;
  if (sqlite3_prepare_v2(db, "INSERT OR REPLACE INTO profile_option(workload_id, key, position, value) "
                             "VALUES (?,?,?,?)", -1, &s, NULL) != SQLITE_OK)
    return sql_error(db, diag);
  sqlite3_bind_int64(s, 1, wid);
  sqlite3_bind_text(s, 2, key, -1, SQLITE_STATIC);
  sqlite3_bind_int(s, 3, pos);
  sqlite3_bind_text(s, 4, value ? value : "", -1, SQLITE_STATIC);
  lm_status st = sqlite3_step(s) == SQLITE_DONE ? LM_OK : sql_error(db, diag);
  sqlite3_finalize(s);
  return st;
}

/* Options read back for --resume: owned strings. */
typedef struct stored {
  char **argv;
  int argc;
  char **items, **kernels, **regions;
  size_t n_items, n_kernels, n_regions;
  char *instance, *dispatch, *gpu, *name;
  int replay, key_grid;
} stored;

static void stored_fini(stored *s) {
  for (int i = 0; i < s->argc; i++) free(s->argv[i]);
  free(s->argv);
  for (size_t i = 0; i < s->n_items; i++) free(s->items[i]);
  for (size_t i = 0; i < s->n_kernels; i++) free(s->kernels[i]);
  for (size_t i = 0; i < s->n_regions; i++) free(s->regions[i]);
  free(s->items);
  free(s->kernels);
  free(s->regions);
  free(s->instance);
  free(s->dispatch);
  free(s->gpu);
  free(s->name);
}

static lm_status read_options(sqlite3 *db, int64_t wid, stored *out, lm_diag *diag) {
  sqlite3_stmt *s = NULL;
  memset(out, 0, sizeof *out);
  if (sqlite3_prepare_v2(db, "SELECT key, value FROM profile_option WHERE workload_id = ? "
                             "ORDER BY key, position", -1, &s, NULL) != SQLITE_OK)
    return sql_error(db, diag);
  sqlite3_bind_int64(s, 1, wid);
  while (sqlite3_step(s) == SQLITE_ROW) {
    const char *k = (const char *)sqlite3_column_text(s, 0);
    const char *v = (const char *)sqlite3_column_text(s, 1);
    char ***list = NULL;
    size_t *n = NULL;
    if (strcmp(k, "argv") == 0) {
      char **grown = realloc(out->argv, (size_t)(out->argc + 2) * sizeof *grown);
      if (!grown) break;
      out->argv = grown;
      out->argv[out->argc++] = strdup(v);
      out->argv[out->argc] = NULL;
      continue;
    }
    if (strcmp(k, "block") == 0) list = &out->items, n = &out->n_items;
    else if (strcmp(k, "kernel") == 0) list = &out->kernels, n = &out->n_kernels;
    else if (strcmp(k, "region") == 0) list = &out->regions, n = &out->n_regions;
    if (list) {
      char **grown = realloc(*list, (*n + 1) * sizeof *grown);
      if (!grown) break;
      *list = grown;
      grown[(*n)++] = strdup(v);
      continue;
    }
    if (strcmp(k, "instance") == 0) out->instance = strdup(v);
    else if (strcmp(k, "dispatch") == 0) out->dispatch = strdup(v);
    else if (strcmp(k, "gpu") == 0) out->gpu = strdup(v);
    else if (strcmp(k, "name") == 0) out->name = strdup(v);
    else if (strcmp(k, "replay") == 0) out->replay = atoi(v);
    else if (strcmp(k, "key_grid") == 0) out->key_grid = atoi(v);
  }
  sqlite3_finalize(s);
  return LM_OK;
}

/* ------------------------------------------------------------- the plan */

typedef struct set_info {
  char **counters; /* NULL-terminated */
  char *accumulate;
} set_info;

static lm_status store_plan(sqlite3 *db, int64_t wid, const lm_plan *plan, lm_diag *diag) {
  sqlite3_stmt *s = NULL;
  if (sqlite3_prepare_v2(db, "INSERT INTO profile_set(workload_id, set_id, position, counter, "
                             "block, accumulate, why) VALUES (?,?,?,?,?,?,?)", -1, &s, NULL) != SQLITE_OK)
    return sql_error(db, diag);
  lm_status st = LM_OK;
  for (int32_t i = 0; i < plan->n_counters && st == LM_OK; i++) {
    const lm_plan_counter *c = &plan->counters[i];
    const lm_plan_set *ps = &plan->sets[c->set];
    sqlite3_bind_int64(s, 1, wid);
    sqlite3_bind_int(s, 2, c->set);
    sqlite3_bind_int(s, 3, i - ps->first);
    sqlite3_bind_text(s, 4, c->name, -1, SQLITE_STATIC);
    sqlite3_bind_text(s, 5, c->block, -1, SQLITE_STATIC);
    if (ps->accumulate) sqlite3_bind_text(s, 6, ps->accumulate, -1, SQLITE_STATIC);
    else sqlite3_bind_null(s, 6);
    sqlite3_bind_text(s, 7, c->why, -1, SQLITE_STATIC);
    if (sqlite3_step(s) != SQLITE_DONE) st = sql_error(db, diag);
    sqlite3_reset(s);
  }
  sqlite3_finalize(s);
  return st;
}

static void sets_fini(set_info *sets, int n) {
  for (int i = 0; sets && i < n; i++) {
    for (char **c = sets[i].counters; c && *c; c++) free(*c);
    free(sets[i].counters);
    free(sets[i].accumulate);
  }
  free(sets);
}

static lm_status load_plan(sqlite3 *db, int64_t wid, set_info **out, int *n_out, lm_diag *diag) {
  sqlite3_stmt *s = NULL;
  *out = NULL;
  *n_out = 0;
  if (sqlite3_prepare_v2(db, "SELECT set_id, counter, accumulate FROM profile_set WHERE workload_id = ? "
                             "ORDER BY set_id, position", -1, &s, NULL) != SQLITE_OK)
    return sql_error(db, diag);
  sqlite3_bind_int64(s, 1, wid);
  set_info *sets = NULL;
  int n = 0;
  size_t *counts = NULL;
  while (sqlite3_step(s) == SQLITE_ROW) {
    int id = sqlite3_column_int(s, 0);
    if (id < 0 || id > 4096) continue;
    if (id >= n) {
      set_info *grown = realloc(sets, (size_t)(id + 1) * sizeof *grown);
      size_t *gc = realloc(counts, (size_t)(id + 1) * sizeof *gc);
      if (!grown || !gc) {
        free(grown ? grown : sets);
        free(gc ? gc : counts);
        sqlite3_finalize(s);
        return lm_diag_set(diag, LM_ENOMEM, NULL, 0, 0, NULL, "out of memory");
      }
      sets = grown;
      counts = gc;
      for (int k = n; k <= id; k++) {
        memset(&sets[k], 0, sizeof sets[k]);
        counts[k] = 0;
      }
      n = id + 1;
    }
    char **grown = realloc(sets[id].counters, (counts[id] + 2) * sizeof *grown);
    if (!grown) continue;
    sets[id].counters = grown;
    grown[counts[id]++] = strdup((const char *)sqlite3_column_text(s, 1));
    grown[counts[id]] = NULL;
    if (sqlite3_column_type(s, 2) != SQLITE_NULL && !sets[id].accumulate)
      sets[id].accumulate = strdup((const char *)sqlite3_column_text(s, 2));
  }
  sqlite3_finalize(s);
  free(counts);
  *out = sets;
  *n_out = n;
  return LM_OK;
}

/* --------------------------------------------------------------- a run */

typedef struct run_spec {
  int id;
  int mode;   /* lm_replay */
  int pass;
  /* assigned (key, selected) -> set */
  char **assign_key;
  int64_t *assign_instance;
  int *assign_set;
  int64_t *assign_group; /* the composed row each assignment completes */
  size_t n_assign;
  int n_sets;
} run_spec;

typedef struct progress {
  int enabled;
  int run, runs;
  int n_sets;
  long dispatches;
  unsigned char *seen_sets;
  char *buf;
  size_t len, cap;
  off_t read_at;
} progress;

static void progress_poll(progress *p, const char *records) {
  if (!p->enabled) return;
  int fd = open(records, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return;
  char chunk[65536];
  ssize_t n;
  if (lseek(fd, p->read_at, SEEK_SET) == (off_t)-1) {
    close(fd);
    return;
  }
  while ((n = read(fd, chunk, sizeof chunk)) > 0) {
    p->read_at += n;
    for (ssize_t i = 0; i < n; i++) {
      if (p->len + 1 >= p->cap) {
        size_t cap = p->cap ? p->cap * 2 : 4096;
        char *grown = realloc(p->buf, cap);
        if (!grown) break;
        p->buf = grown;
        p->cap = cap;
      }
      if (chunk[i] != '\n') {
        if (p->len < 4096) p->buf[p->len++] = chunk[i];
        continue;
      }
      p->buf[p->len] = '\0';
      if (p->buf[0] == 'D' && p->buf[1] == '\t') {
        p->dispatches++;
        /* the fifth field is the set */
        char *f = p->buf;
        for (int k = 0; k < 5 && f; k++) {
          f = strchr(f, '\t');
          if (f) f++;
        }
        int set = f ? atoi(f) : -1;
        if (set >= 0 && set < p->n_sets) p->seen_sets[set] = 1;
      }
      p->len = 0;
    }
  }
  close(fd);
  int covered = 0;
  for (int s = 0; s < p->n_sets; s++) covered += p->seen_sets[s];
  int width = 24, done = p->runs ? (p->run * width) / p->runs : 0;
  fprintf(stderr, "\r\033[Klumen profile: run %d/%d [", p->run + 1, p->runs);
  for (int i = 0; i < width; i++) fputc(i < done ? '=' : i == done ? '>' : ' ', stderr);
  fprintf(stderr, "] %ld dispatches, sets %d/%d", p->dispatches, covered, p->n_sets);
  fflush(stderr);
}

#if defined(__SANITIZE_ADDRESS__)
#include <link.h>
/* In an AddressSanitizer build the tool library needs the ASan runtime
 * loaded before it: preload the runtime this lumen uses. */
static int find_asan(struct dl_phdr_info *info, size_t size, void *data) {
  (void)size;
  if (info->dlpi_name && strstr(info->dlpi_name, "libasan")) {
    snprintf((char *)data, 4096, "%s", info->dlpi_name);
    return 1;
  }
  return 0;
}
#endif

/* Run the application once. Returns LM_OK when it ran to completion
 * (exit 0); *exit_code / *sig describe how it ended. */
static lm_status run_app(char *const *argv, const char *tool, const char *config_path,
                         const char *records, int pass, progress *prog, int *exit_code, int *sig,
                         lm_diag *diag) {
  int pipe_fds[2];
  *exit_code = -1;
  *sig = 0;
  if (pipe(pipe_fds) != 0)
    return lm_diag_set(diag, LM_EIO, NULL, 0, 0, NULL, "pipe: %s", strerror(errno));
  fcntl(pipe_fds[1], F_SETFD, FD_CLOEXEC);
  pid_t pid = fork();
  if (pid < 0) {
    close(pipe_fds[0]);
    close(pipe_fds[1]);
    return lm_diag_set(diag, LM_EIO, NULL, 0, 0, NULL, "fork: %s", strerror(errno));
  }
  if (pid == 0) {
    close(pipe_fds[0]);
    char preload[8192], pass_text[32];
    const char *old = getenv("LD_PRELOAD");
    char runtime[4096] = "";
#if defined(__SANITIZE_ADDRESS__)
    dl_iterate_phdr(find_asan, runtime);
    if (runtime[0]) strcat(runtime, ":");
#endif
    snprintf(preload, sizeof preload, "%s%s%s%s", runtime, tool, old && *old ? ":" : "", old && *old ? old : "");
    snprintf(pass_text, sizeof pass_text, "%d", pass);
    setenv("LD_PRELOAD", preload, 1);
    setenv("LUMEN_TOOL_CONFIG", config_path, 1);
    setenv("LUMEN_PASS", pass_text, 1);
    execvp(argv[0], argv);
    int err = errno;
    ssize_t w = write(pipe_fds[1], &err, sizeof err);
    (void)w;
    _exit(127);
  }
  close(pipe_fds[1]);
  int exec_errno = 0;
  ssize_t got = read(pipe_fds[0], &exec_errno, sizeof exec_errno);
  close(pipe_fds[0]);
  int status = 0;
  if (got == (ssize_t)sizeof exec_errno) {
    waitpid(pid, &status, 0);
    if (exec_errno == ENOENT)
      return lm_diag_set(diag, LM_ENOTFOUND, argv[0], 0, 0, NULL,
                         "no such program (give its path, or put it on PATH)");
    if (exec_errno == EACCES)
      return lm_diag_set(diag, LM_EINVAL, argv[0], 0, 0, NULL,
                         "not executable (chmod +x %s, or run it through its interpreter)", argv[0]);
    return lm_diag_set(diag, LM_EIO, argv[0], 0, 0, NULL, "cannot run: %s", strerror(exec_errno));
  }
  for (;;) {
    pid_t r = waitpid(pid, &status, prog && prog->enabled ? WNOHANG : 0);
    if (r == pid) break;
    if (r < 0 && errno != EINTR) return lm_diag_set(diag, LM_EIO, NULL, 0, 0, NULL, "wait: %s", strerror(errno));
    if (prog && prog->enabled) {
      progress_poll(prog, records);
      struct timespec ts = {0, 200000000};
      nanosleep(&ts, NULL);
    }
  }
  if (prog) progress_poll(prog, records);
  if (WIFSIGNALED(status)) {
    *sig = WTERMSIG(status);
    return LM_EDATA;
  }
  *exit_code = WEXITSTATUS(status);
  return *exit_code == 0 ? LM_OK : LM_EDATA;
}

/* Read a records file into the database under run `run`. Sets *tool_ok
 * when the tool finished (END) without reporting an error; the tool's
 * first error goes to why. */
/* The composed row a record belongs to: in application replay the n-th
 * selected instance of a key in every run; in instance cycling each
 * n_sets consecutive instances; in a gap-filling run, the row it was
 * assigned to. -1: none. */
static int64_t row_group(const run_spec *spec, const char *key, int64_t selected, int set) {
  if (set < 0 || selected < 0) return -1;
  if (spec->mode == LM_REPLAY_APP) return selected;
  if (spec->mode == LM_REPLAY_INSTANCE) return selected / (spec->n_sets ? spec->n_sets : 1);
  for (size_t i = 0; i < spec->n_assign; i++)
    if (spec->assign_instance[i] == selected && spec->assign_set[i] == set &&
        strcmp(spec->assign_key[i], key) == 0)
      return spec->assign_group[i];
  return -1;
}

static lm_status ingest(sqlite3 *db, int64_t wid, const run_spec *spec, const char *path,
                        long *n_dispatches, int *tool_ok, char *why, size_t why_cap, lm_diag *diag) {
  int run = spec->id;
  FILE *f = fopen(path, "r");
  *tool_ok = 0;
  *n_dispatches = 0;
  why[0] = '\0';
  if (!f) {
    snprintf(why, why_cap, "the tool library wrote no records (was it loaded? a setuid "
                           "program ignores LD_PRELOAD)");
    return LM_OK;
  }
  sqlite3_stmt *rec = NULL, *val = NULL, *clk = NULL, *reg = NULL;
  lm_status st = LM_OK;
  if (sqlite3_prepare_v2(db, "INSERT OR REPLACE INTO profile_record(workload_id, run_id, dispatch_id, "
                             "kernel, instance, selected, set_id, gpu_id, pid, tid, grid_size, "
                             "workgroup_size, lds_per_workgroup, scratch_per_workitem, arch_vgpr, "
                             "accum_vgpr, sgpr, start_ns, end_ns, regions, cycle_key, row_group) VALUES "
                             "(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)", -1, &rec, NULL) != SQLITE_OK ||
      sqlite3_prepare_v2(db, "INSERT OR REPLACE INTO profile_value(workload_id, run_id, dispatch_id, "
                             "column_name, value) VALUES (?,?,?,?,?)", -1, &val, NULL) != SQLITE_OK ||
      sqlite3_prepare_v2(db, "INSERT INTO clock_sample(workload_id, run_id, gpu_id, t_ns, sclk_mhz, "
                             "mclk_mhz) VALUES (?,?,?,?,?,?)", -1, &clk, NULL) != SQLITE_OK ||
      sqlite3_prepare_v2(db, "INSERT OR REPLACE INTO profile_region(workload_id, run_id, id, name) "
                             "VALUES (?,?,?,?)", -1, &reg, NULL) != SQLITE_OK) {
    st = sql_error(db, diag);
    goto done;
  }
  /* Kernel ids of this run -> names. */
  char **kernels = NULL;
  size_t n_kernels = 0;
  long pid = 0;
  char *line = NULL;
  size_t cap = 0;
  ssize_t len;
  while ((len = getline(&line, &cap, f)) > 0) {
    if (line[len - 1] != '\n') break; /* a truncated last line */
    line[--len] = '\0';
    if (line[0] == 'V' && line[1] == '\t') {
      /* V <dispatch> <column>=<value>...: any number of values. */
      char *p = line + 2;
      sqlite3_int64 did = (sqlite3_int64)strtoull(p, &p, 10);
      while (p && *p == '\t') {
        char *item = p + 1;
        char *next = strchr(item, '\t');
        if (next) *next = '\0';
        char *eq = strrchr(item, '=');
        if (eq) {
          *eq = '\0';
          sqlite3_bind_int64(val, 1, wid);
          sqlite3_bind_int(val, 2, run);
          sqlite3_bind_int64(val, 3, did);
          sqlite3_bind_text(val, 4, item, -1, SQLITE_TRANSIENT);
          double v = strtod(eq + 1, NULL);
          if (isnan(v)) sqlite3_bind_null(val, 5);
          else sqlite3_bind_double(val, 5, v);
          if (sqlite3_step(val) != SQLITE_DONE) {
            st = sql_error(db, diag);
            break;
          }
          sqlite3_reset(val);
        }
        if (!next) break;
        *next = '\t';
        p = next;
      }
      if (st != LM_OK) break;
      continue;
    }
    char *fields[32];
    int nf = 0;
    for (char *p = line; nf < 32;) {
      fields[nf++] = p;
      char *tab = strchr(p, '\t');
      if (!tab) break;
      *tab = '\0';
      p = tab + 1;
    }
    const char *tag = fields[0];
    if (strcmp(tag, "END") == 0) {
      if (!why[0]) *tool_ok = 1;
    } else if (strcmp(tag, "E") == 0 && nf >= 2) {
      if (!why[0]) snprintf(why, why_cap, "%s", fields[1]);
    } else if (strcmp(tag, "P") == 0 && nf >= 2) {
      pid = atol(fields[1]);
    } else if (strcmp(tag, "K") == 0 && nf >= 3) {
      size_t id = (size_t)strtoull(fields[1], NULL, 10);
      if (id < 1000000) {
        if (id >= n_kernels) {
          char **grown = realloc(kernels, (id + 1) * sizeof *grown);
          if (!grown) continue;
          for (size_t k = n_kernels; k <= id; k++) grown[k] = NULL;
          kernels = grown;
          n_kernels = id + 1;
        }
        free(kernels[id]);
        kernels[id] = strdup(fields[2]);
      }
    } else if (strcmp(tag, "D") == 0 && nf >= 19) {
      size_t kid = (size_t)strtoull(fields[2], NULL, 10);
      const char *kname = kid < n_kernels && kernels[kid] ? kernels[kid] : "?";
      sqlite3_bind_int64(rec, 1, wid);
      sqlite3_bind_int(rec, 2, run);
      sqlite3_bind_int64(rec, 3, (sqlite3_int64)strtoull(fields[1], NULL, 10));
      sqlite3_bind_text(rec, 4, kname, -1, SQLITE_TRANSIENT);
      sqlite3_bind_int64(rec, 5, strtoll(fields[3], NULL, 10));
      sqlite3_bind_int64(rec, 6, strtoll(fields[4], NULL, 10));
      sqlite3_bind_int(rec, 7, atoi(fields[5]));
      sqlite3_bind_int(rec, 8, atoi(fields[6]));
      sqlite3_bind_int64(rec, 9, pid);
      sqlite3_bind_int64(rec, 10, strtoll(fields[7], NULL, 10));
      for (int k = 0; k < 7; k++) sqlite3_bind_int64(rec, 11 + k, strtoll(fields[8 + k], NULL, 10));
      sqlite3_bind_double(rec, 18, strtod(fields[15], NULL));
      sqlite3_bind_double(rec, 19, strtod(fields[16], NULL));
      sqlite3_bind_text(rec, 20, strcmp(fields[17], "-") ? fields[17] : "", -1, SQLITE_TRANSIENT);
      sqlite3_bind_text(rec, 21, fields[18], -1, SQLITE_TRANSIENT);
      int64_t group = row_group(spec, fields[18], strtoll(fields[4], NULL, 10), atoi(fields[5]));
      if (group >= 0) sqlite3_bind_int64(rec, 22, group);
      else sqlite3_bind_null(rec, 22);
      if (sqlite3_step(rec) != SQLITE_DONE) {
        st = sql_error(db, diag);
        break;
      }
      sqlite3_reset(rec);
      (*n_dispatches)++;
    } else if (strcmp(tag, "C") == 0 && nf >= 5) {
      sqlite3_bind_int64(clk, 1, wid);
      sqlite3_bind_int(clk, 2, run);
      sqlite3_bind_int(clk, 3, atoi(fields[1]));
      sqlite3_bind_double(clk, 4, strtod(fields[2], NULL));
      sqlite3_bind_double(clk, 5, strtod(fields[3], NULL));
      sqlite3_bind_double(clk, 6, strtod(fields[4], NULL));
      if (sqlite3_step(clk) != SQLITE_DONE) st = sql_error(db, diag);
      sqlite3_reset(clk);
    } else if (strcmp(tag, "G") == 0 && nf >= 3) {
      sqlite3_bind_int64(reg, 1, wid);
      sqlite3_bind_int(reg, 2, run);
      sqlite3_bind_int(reg, 3, atoi(fields[1]));
      sqlite3_bind_text(reg, 4, fields[2], -1, SQLITE_TRANSIENT);
      if (sqlite3_step(reg) != SQLITE_DONE) st = sql_error(db, diag);
      sqlite3_reset(reg);
    }
    if (st != LM_OK) break;
  }
  free(line);
  for (size_t k = 0; k < n_kernels; k++) free(kernels[k]);
  free(kernels);
done:
  sqlite3_finalize(rec);
  sqlite3_finalize(val);
  sqlite3_finalize(clk);
  sqlite3_finalize(reg);
  fclose(f);
  return st;
}

/* --------------------------------------------------------- composition */

typedef struct crec {
  int run, mode;
  int64_t did, instance, selected, group;
  char *kernel, *regions, *key;
  int set, gpu;
  int64_t pid, tid, grid, wg, lds, scratch, vgpr, agpr, sgpr;
  double start, end;
  char **cols;
  double *vals;
  int n_vals, cap_vals;
} crec;

typedef struct composite {
  int *members; /* per set: record index or -1 */
  int first;    /* the member that orders the row */
} composite;

typedef struct collected {
  crec *recs;
  size_t n_recs;
  composite *comps;
  size_t n_comps;
  int n_sets;
} collected;

static void collected_fini(collected *c) {
  for (size_t i = 0; i < c->n_recs; i++) {
    crec *r = &c->recs[i];
    free(r->kernel);
    free(r->regions);
    free(r->key);
    for (int k = 0; k < r->n_vals; k++) free(r->cols[k]);
    free(r->cols);
    free(r->vals);
  }
  free(c->recs);
  for (size_t i = 0; i < c->n_comps; i++) free(c->comps[i].members);
  free(c->comps);
  memset(c, 0, sizeof *c);
}

static char *dup_col(sqlite3_stmt *s, int i) {
  const unsigned char *t = sqlite3_column_text(s, i);
  return strdup(t ? (const char *)t : "");
}

/* Load the records (with a set) of the successful runs, their values, and
 * group them into composite rows. */
static lm_status load_collected(sqlite3 *db, int64_t wid, int n_sets, collected *c, lm_diag *diag) {
  memset(c, 0, sizeof *c);
  c->n_sets = n_sets;
  sqlite3_stmt *s = NULL;
  lm_status st = LM_OK;
  lm_map *by_dispatch = lm_map_new(), *groups = lm_map_new();
  if (!by_dispatch || !groups) goto nomem;
  if (sqlite3_prepare_v2(db,
                         "SELECT r.run_id, r.dispatch_id, r.kernel, r.instance, r.selected, r.set_id, "
                         "r.gpu_id, r.pid, r.tid, r.grid_size, r.workgroup_size, r.lds_per_workgroup, "
                         "r.scratch_per_workitem, r.arch_vgpr, r.accum_vgpr, r.sgpr, r.start_ns, "
                         "r.end_ns, r.regions, r.cycle_key, u.mode, r.row_group FROM profile_record r JOIN "
                         "profile_run u ON u.workload_id = r.workload_id AND u.id = r.run_id WHERE "
                         "r.workload_id = ? AND u.status = 'ok' AND r.set_id >= 0 AND r.row_group IS NOT NULL ORDER BY "
                         "r.run_id, r.dispatch_id", -1, &s, NULL) != SQLITE_OK)
    goto sql_fail;
  sqlite3_bind_int64(s, 1, wid);
  size_t cap = 0;
  int rc;
  while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
    if (c->n_recs == cap) {
      cap = cap ? cap * 2 : 256;
      crec *grown = realloc(c->recs, cap * sizeof *grown);
      if (!grown) goto nomem;
      c->recs = grown;
    }
    crec *r = &c->recs[c->n_recs];
    memset(r, 0, sizeof *r);
    r->run = sqlite3_column_int(s, 0);
    r->did = sqlite3_column_int64(s, 1);
    r->kernel = dup_col(s, 2);
    r->instance = sqlite3_column_int64(s, 3);
    r->selected = sqlite3_column_int64(s, 4);
    r->set = sqlite3_column_int(s, 5);
    r->gpu = sqlite3_column_int(s, 6);
    r->pid = sqlite3_column_int64(s, 7);
    r->tid = sqlite3_column_int64(s, 8);
    r->grid = sqlite3_column_int64(s, 9);
    r->wg = sqlite3_column_int64(s, 10);
    r->lds = sqlite3_column_int64(s, 11);
    r->scratch = sqlite3_column_int64(s, 12);
    r->vgpr = sqlite3_column_int64(s, 13);
    r->agpr = sqlite3_column_int64(s, 14);
    r->sgpr = sqlite3_column_int64(s, 15);
    r->start = sqlite3_column_double(s, 16);
    r->end = sqlite3_column_double(s, 17);
    r->regions = dup_col(s, 18);
    r->key = dup_col(s, 19);
    const char *mode = (const char *)sqlite3_column_text(s, 20);
    r->mode = mode && strcmp(mode, "app") == 0 ? LM_REPLAY_APP : LM_REPLAY_INSTANCE;
    if (!r->kernel || !r->regions || !r->key) goto nomem;
    char k[64];
    snprintf(k, sizeof k, "%d:%lld", r->run, (long long)r->did);
    if (lm_map_put(by_dispatch, k, (int64_t)c->n_recs) != LM_OK) goto nomem;
    c->n_recs++;
    if (r->set >= n_sets) continue;
    /* The composite row it belongs to. */
    int64_t group = sqlite3_column_int64(s, 21);
    r->group = group;
    char gk[1100];
    snprintf(gk, sizeof gk, "%d\x1f%s\x1f%lld", r->mode == LM_REPLAY_APP, r->key, (long long)group);
    int64_t ci;
    if (!lm_map_get(groups, gk, &ci)) {
      composite *grown = realloc(c->comps, (c->n_comps + 1) * sizeof *grown);
      if (!grown) goto nomem;
      c->comps = grown;
      composite *cp = &c->comps[c->n_comps];
      cp->members = malloc((size_t)(n_sets ? n_sets : 1) * sizeof *cp->members);
      if (!cp->members) goto nomem;
      for (int k2 = 0; k2 < n_sets; k2++) cp->members[k2] = -1;
      cp->first = (int)(c->n_recs - 1);
      ci = (int64_t)c->n_comps++;
      if (lm_map_put(groups, gk, ci) != LM_OK) goto nomem;
    }
    composite *cp = &c->comps[ci];
    if (cp->members[r->set] < 0) cp->members[r->set] = (int)(c->n_recs - 1);
  }
  if (rc != SQLITE_DONE) goto sql_fail;
  sqlite3_finalize(s);
  s = NULL;
  /* Values. */
  if (sqlite3_prepare_v2(db, "SELECT v.run_id, v.dispatch_id, v.column_name, v.value FROM profile_value v "
                             "JOIN profile_run u ON u.workload_id = v.workload_id AND u.id = v.run_id "
                             "WHERE v.workload_id = ? AND u.status = 'ok'", -1, &s, NULL) != SQLITE_OK)
    goto sql_fail;
  sqlite3_bind_int64(s, 1, wid);
  while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
    char k[64];
    snprintf(k, sizeof k, "%d:%lld", sqlite3_column_int(s, 0), (long long)sqlite3_column_int64(s, 1));
    int64_t ri;
    if (!lm_map_get(by_dispatch, k, &ri)) continue;
    crec *r = &c->recs[ri];
    if (r->n_vals == r->cap_vals) {
      int ncap = r->cap_vals ? r->cap_vals * 2 : 32;
      char **gc = realloc(r->cols, (size_t)ncap * sizeof *gc);
      if (gc) r->cols = gc;
      double *gv = realloc(r->vals, (size_t)ncap * sizeof *gv);
      if (gv) r->vals = gv;
      if (!gc || !gv) goto nomem;
      r->cap_vals = ncap;
    }
    r->cols[r->n_vals] = dup_col(s, 2);
    r->vals[r->n_vals] = sqlite3_column_type(s, 3) == SQLITE_NULL ? LM_NAN : sqlite3_column_double(s, 3);
    if (!r->cols[r->n_vals]) goto nomem;
    r->n_vals++;
  }
  if (rc != SQLITE_DONE) goto sql_fail;
  goto done;
nomem:
  st = lm_diag_set(diag, LM_ENOMEM, NULL, 0, 0, NULL, "out of memory");
  goto done;
sql_fail:
  st = sql_error(db, diag);
done:
  sqlite3_finalize(s);
  lm_map_free(by_dispatch);
  lm_map_free(groups);
  return st;
}

static int composite_complete(const collected *c, const composite *cp) {
  for (int s = 0; s < c->n_sets; s++)
    if (cp->members[s] < 0) return 0;
  return 1;
}

/* An ordering of complete rows: by the run and dispatch id of each row's
 * earliest record. */
static const collected *g_sort_c;
static int cmp_rows(const void *x, const void *y) {
  const composite *a = &g_sort_c->comps[*(const size_t *)x], *b = &g_sort_c->comps[*(const size_t *)y];
  const crec *ra = &g_sort_c->recs[a->first], *rb = &g_sort_c->recs[b->first];
  if (ra->run != rb->run) return ra->run < rb->run ? -1 : 1;
  return (ra->did > rb->did) - (ra->did < rb->did);
}

/* Names of the columns of set s that go to pmc_perf / to its level table. */
static int is_level_only(const char *col, const set_info *si, const char *accumulator) {
  if (!si->accumulate) return 0;
  size_t n = strlen(accumulator);
  if (strncmp(col, accumulator, n) == 0) return 1;
  n = strlen(si->accumulate);
  return strncmp(col, si->accumulate, n) == 0 && (col[n] == '\0' || col[n] == '[' || !strcmp(col + n, "_sum"));
}

typedef struct name_list {
  char **v;
  size_t n, cap;
  lm_map *index;
} name_list;

static int64_t name_add(name_list *l, const char *name) {
  int64_t i;
  if (lm_map_get(l->index, name, &i)) return i;
  if (l->n == l->cap) {
    size_t cap = l->cap ? l->cap * 2 : 64;
    char **grown = realloc(l->v, cap * sizeof *grown);
    if (!grown) return -1;
    l->v = grown;
    l->cap = cap;
  }
  l->v[l->n] = strdup(name);
  if (!l->v[l->n] || lm_map_put(l->index, name, (int64_t)l->n) != LM_OK) return -1;
  return (int64_t)l->n++;
}

static void name_list_fini(name_list *l) {
  for (size_t i = 0; i < l->n; i++) free(l->v[i]);
  free(l->v);
  lm_map_free(l->index);
}

static double exact_mean(const double *v, size_t n) {
  if (!n) return LM_NAN;
  double sum = 0;
  for (size_t i = 1; i < n; i++) sum += v[i] - v[0];
  return v[0] + sum / (double)n;
}

/* Fixed dispatch columns of a pmc_perf table, in pmc_perf.csv order. */
static const char *const fixed_names[] = {"Dispatch_ID", "GPU_ID", "Grid_Size", "Workgroup_Size",
                                          "LDS_Per_Workgroup", "Scratch_Per_Workitem", "Arch_VGPR",
                                          "Accum_VGPR", "SGPR", "Wave_Size"};

typedef struct provenance {
  char *source, *column;
  int16_t *runs, *sets;
} provenance;

static lm_status compose(sqlite3 *db, int64_t wid, const set_info *sets, int n_sets,
                         const char *accumulator, const lm_workload *rec_wl, const char *name,
                         char *const *argv, int argc, const char *ip_blocks,
                         lm_profile_summary *summary, lm_diag *diag) {
  collected c;
  lm_status st = load_collected(db, wid, n_sets, &c, diag);
  size_t *rows = NULL;
  name_list pmc_cols = {0}, regions = {0};
  lm_workload *w = NULL;
  lm_table *pmc = NULL, **levels = NULL;
  provenance *prov = NULL;
  size_t n_prov = 0;
  sqlite3_stmt *s = NULL;
  if (st != LM_OK) return st;
  pmc_cols.index = lm_map_new();
  regions.index = lm_map_new();
  rows = malloc((c.n_comps + 1) * sizeof *rows);
  levels = calloc((size_t)n_sets + 1, sizeof *levels);
  if (!pmc_cols.index || !regions.index || !rows || !levels) goto nomem;
  size_t n_rows = 0;
  summary->dropped = 0;
  summary->dropped_detail[0] = '\0';
  size_t detail_at = 0;
  for (size_t i = 0; i < c.n_comps; i++) {
    if (composite_complete(&c, &c.comps[i])) {
      rows[n_rows++] = i;
      continue;
    }
    summary->dropped++;
    const crec *r = &c.recs[c.comps[i].first];
    if (detail_at < sizeof summary->dropped_detail - 200) {
      int missing = 0, first_missing = -1;
      for (int k = 0; k < n_sets; k++)
        if (c.comps[i].members[k] < 0) {
          missing++;
          if (first_missing < 0) first_missing = k;
        }
      detail_at += (size_t)snprintf(summary->dropped_detail + detail_at,
                                    sizeof summary->dropped_detail - detail_at,
                                    "%s%.80s from instance %lld misses %d of %d sets (first: set %d)",
                                    detail_at ? "; " : "", r->kernel, (long long)r->instance,
                                    missing, n_sets, first_missing);
    }
  }
  g_sort_c = &c;
  qsort(rows, n_rows, sizeof *rows, cmp_rows);
  /* Columns: pmc_perf gets every value but the accumulate ones. */
  for (size_t i = 0; i < n_rows; i++) {
    const composite *cp = &c.comps[rows[i]];
    for (int k = 0; k < n_sets; k++) {
      const crec *r = &c.recs[cp->members[k]];
      for (int v = 0; v < r->n_vals; v++)
        if (!is_level_only(r->cols[v], &sets[k], accumulator) && name_add(&pmc_cols, r->cols[v]) < 0)
          goto nomem;
    }
  }
  const char *db_path = sqlite3_db_filename(db, "main");
  pmc = lm_table_create(db_path, "pmc_perf", n_rows, LM_ARRAY_LEN(fixed_names) + 3 + pmc_cols.n);
  if (!pmc) goto nomem;
  lm_column *fixed[LM_ARRAY_LEN(fixed_names)];
  for (size_t k = 0; k < LM_ARRAY_LEN(fixed_names); k++)
    if (!(fixed[k] = lm_table_add_column(pmc, fixed_names[k], 0))) goto nomem;
  lm_column *kcol = lm_table_add_column(pmc, "Kernel_Name", 1);
  lm_column **ccols = calloc(pmc_cols.n + 1, sizeof *ccols);
  if (!kcol || !ccols) {
    free(ccols);
    goto nomem;
  }
  prov = calloc(pmc_cols.n + (size_t)n_sets * 64 + 1, sizeof *prov);
  if (!prov) {
    free(ccols);
    goto nomem;
  }
  for (size_t k = 0; k < pmc_cols.n; k++) {
    ccols[k] = lm_table_add_column(pmc, pmc_cols.v[k], 0);
    prov[n_prov].source = strdup("pmc_perf");
    prov[n_prov].column = strdup(pmc_cols.v[k]);
    prov[n_prov].runs = calloc(n_rows + 1, sizeof(int16_t));
    prov[n_prov].sets = calloc(n_rows + 1, sizeof(int16_t));
    if (!ccols[k] || !prov[n_prov].runs || !prov[n_prov].sets) {
      free(ccols);
      goto nomem;
    }
    n_prov++;
    for (size_t r = 0; r < n_rows; r++) {
      ccols[k]->values[r] = LM_NAN;
      prov[k].runs[r] = prov[k].sets[r] = -1;
    }
  }
  lm_column *start_col = lm_table_add_column(pmc, "Start_Timestamp", 0);
  lm_column *end_col = lm_table_add_column(pmc, "End_Timestamp", 0);
  if (!start_col || !end_col) {
    free(ccols);
    goto nomem;
  }
  double wave = 64;
  long wi = lm_sysinfo_find(&rec_wl->sysinfo, "wave_size");
  if (wi >= 0 && !isnan(rec_wl->sysinfo.values[wi])) wave = rec_wl->sysinfo.values[wi];
  double *starts = malloc(((size_t)n_sets + 1) * sizeof *starts);
  double *ends = malloc(((size_t)n_sets + 1) * sizeof *ends);
  if (!starts || !ends) {
    free(starts);
    free(ends);
    free(ccols);
    goto nomem;
  }
  for (size_t i = 0; i < n_rows; i++) {
    const composite *cp = &c.comps[rows[i]];
    const crec *f = &c.recs[cp->first];
    /* Dispatch_ID numbers the composed rows in launch order (a row of
     * instance cycling spans several of the application's dispatches,
     * which profile_record keeps). */
    double attrs[] = {(double)i, f->gpu, (double)f->grid, (double)f->wg, (double)f->lds,
                      (double)f->scratch, (double)f->vgpr, (double)f->agpr, (double)f->sgpr, wave};
    for (size_t k = 0; k < LM_ARRAY_LEN(fixed_names); k++) fixed[k]->values[i] = attrs[k];
    kcol->text_ids[i] = lm_table_intern(pmc, f->kernel);
    for (int k = 0; k < n_sets; k++) {
      const crec *r = &c.recs[cp->members[k]];
      starts[k] = r->start;
      ends[k] = r->end;
      for (int v = 0; v < r->n_vals; v++) {
        int64_t ci;
        if (!lm_map_get(pmc_cols.index, r->cols[v], &ci)) continue;
        if (prov[ci].sets[i] >= 0) continue; /* the first set that has it */
        ccols[ci]->values[i] = r->vals[v];
        prov[ci].runs[i] = (int16_t)r->run;
        prov[ci].sets[i] = (int16_t)k;
      }
    }
    /* Timestamps: the mean over the runs, as the reference tool merges
     * passes (exact when they agree). */
    start_col->values[i] = exact_mean(starts, (size_t)n_sets);
    end_col->values[i] = exact_mean(ends, (size_t)n_sets);
  }
  free(starts);
  free(ends);
  free(ccols);
  lm_table_finish(pmc);
  /* Level tables: every value of each accumulate set. */
  size_t n_levels = 0;
  for (int k = 0; k < n_sets; k++) {
    if (!sets[k].accumulate) continue;
    name_list lc = {0};
    lc.index = lm_map_new();
    if (!lc.index) goto nomem;
    for (size_t i = 0; i < n_rows; i++) {
      const crec *r = &c.recs[c.comps[rows[i]].members[k]];
      for (int v = 0; v < r->n_vals; v++) name_add(&lc, r->cols[v]);
    }
    lm_table *t = lm_table_create(db_path, sets[k].accumulate, n_rows, 4 + lc.n);
    if (!t) {
      name_list_fini(&lc);
      goto nomem;
    }
    levels[n_levels++] = t;
    lm_column *d = lm_table_add_column(t, "Dispatch_ID", 0), *g = lm_table_add_column(t, "GPU_ID", 0);
    lm_column **vc = calloc(lc.n + 1, sizeof *vc);
    if (!d || !g || !vc) {
      free(vc);
      name_list_fini(&lc);
      goto nomem;
    }
    for (size_t j = 0; j < lc.n; j++) {
      vc[j] = lm_table_add_column(t, lc.v[j], 0);
      for (size_t i = 0; vc[j] && i < n_rows; i++) vc[j]->values[i] = LM_NAN;
    }
    lm_column *ts = lm_table_add_column(t, "Start_Timestamp", 0), *te = lm_table_add_column(t, "End_Timestamp", 0);
    for (size_t i = 0; ts && te && i < n_rows; i++) {
      const crec *r = &c.recs[c.comps[rows[i]].members[k]];
      d->values[i] = (double)c.recs[c.comps[rows[i]].first].did;
      g->values[i] = r->gpu;
      ts->values[i] = r->start;
      te->values[i] = r->end;
      for (int v = 0; v < r->n_vals; v++) {
        int64_t j;
        if (lm_map_get(lc.index, r->cols[v], &j) && vc[j]) vc[j]->values[i] = r->vals[v];
      }
    }
    free(vc);
    name_list_fini(&lc);
    lm_table_finish(t);
  }
  /* The workload in memory: the device's system info with this profile's
   * name, command and time. */
  lm_arena *arena = lm_arena_new(1 << 12);
  if (!arena) goto nomem;
  w = lm_arena_alloc(arena, sizeof *w);
  if (!w) {
    lm_arena_free(arena);
    goto nomem;
  }
  w->arena = arena;
  w->pmc = pmc;
  w->levels = levels;
  w->n_levels = n_levels;
  w->arch = rec_wl->arch;
  w->roofline = rec_wl->roofline;
  w->sysinfo = rec_wl->sysinfo;
  size_t nf = rec_wl->sysinfo.n_fields;
  w->sysinfo.texts = lm_arena_alloc(arena, (nf + 1) * sizeof(char *));
  if (!w->sysinfo.texts) goto nomem;
  char command[4096] = "", stamp[64];
  for (int i = 0, at = 0; i < argc && at < (int)sizeof command - 2; i++)
    at += snprintf(command + at, sizeof command - (size_t)at, "%s%s", i ? " " : "", argv[i]);
  time_t now = time(NULL);
  strftime(stamp, sizeof stamp, "%a %d %b %Y %I:%M:%S %p (%Z)", localtime(&now));
  for (size_t i = 0; i < nf; i++) {
    const char *field = rec_wl->sysinfo.names[i], *text = rec_wl->sysinfo.texts[i];
    if (strcmp(field, "workload_name") == 0) text = name;
    else if (strcmp(field, "command") == 0) text = command;
    else if (strcmp(field, "timestamp") == 0) text = stamp;
    else if (strcmp(field, "ip_blocks") == 0 && ip_blocks) text = ip_blocks;
    w->sysinfo.texts[i] = lm_arena_strdup(arena, text);
    if (!w->sysinfo.texts[i]) goto nomem;
  }
  if ((st = exec_sql(db, "BEGIN IMMEDIATE", diag)) != LM_OK) goto done;
  static const char *const clear[] = {"DELETE FROM sysinfo WHERE workload_id = ?",
                                      "DELETE FROM kernel WHERE workload_id = ?",
                                      "DELETE FROM dispatch WHERE workload_id = ?",
                                      "DELETE FROM column_data WHERE workload_id = ?",
                                      "DELETE FROM region WHERE workload_id = ?",
                                      "DELETE FROM dispatch_region WHERE workload_id = ?"};
  for (size_t i = 0; i < LM_ARRAY_LEN(clear); i++) {
    if (sqlite3_prepare_v2(db, clear[i], -1, &s, NULL) != SQLITE_OK) goto sql_fail_tx;
    sqlite3_bind_int64(s, 1, wid);
    sqlite3_step(s);
    sqlite3_finalize(s);
    s = NULL;
  }
  lm_sql *sql = lm_sql_wrap_sqlite(db);
  st = sql ? lm_db_write_tables(sql, wid, w, diag) : lm_diag_set(diag, LM_ENOMEM, NULL, 0, 0, NULL, "out of memory");
  lm_sql_close(sql);
  if (st != LM_OK) goto rollback;
  /* Where each value came from: the run and the set, per row. */
  if (sqlite3_prepare_v2(db, "UPDATE column_data SET runs = ?, sets = ? WHERE workload_id = ? AND "
                             "source = ? AND name = ?", -1, &s, NULL) != SQLITE_OK)
    goto sql_fail_tx;
  for (size_t k = 0; k < n_prov; k++) {
    sqlite3_bind_blob64(s, 1, prov[k].runs, n_rows * sizeof(int16_t), SQLITE_STATIC);
    sqlite3_bind_blob64(s, 2, prov[k].sets, n_rows * sizeof(int16_t), SQLITE_STATIC);
    sqlite3_bind_int64(s, 3, wid);
    sqlite3_bind_text(s, 4, prov[k].source, -1, SQLITE_STATIC);
    sqlite3_bind_text(s, 5, prov[k].column, -1, SQLITE_STATIC);
    if (sqlite3_step(s) != SQLITE_DONE) goto sql_fail_tx;
    sqlite3_reset(s);
  }
  sqlite3_finalize(s);
  s = NULL;
  /* Per row: instance, process, thread, regions and measured clocks. */
  sqlite3_stmt *up = NULL, *clk = NULL, *rn = NULL, *dr = NULL, *rg = NULL;
  int ok = sqlite3_prepare_v2(db, "UPDATE dispatch SET instance = ?, pid = ?, tid = ?, sclk_mhz = ?, "
                                  "mclk_mhz = ? WHERE workload_id = ? AND row = ?", -1, &up, NULL) == SQLITE_OK &&
           sqlite3_prepare_v2(db, "SELECT AVG(sclk_mhz), AVG(mclk_mhz), COUNT(*) FROM clock_sample WHERE "
                                  "workload_id = ? AND run_id = ? AND gpu_id = ? AND t_ns BETWEEN ? AND ?",
                              -1, &clk, NULL) == SQLITE_OK &&
           sqlite3_prepare_v2(db, "SELECT name FROM profile_region WHERE workload_id = ? AND run_id = ? "
                                  "AND id = ?", -1, &rn, NULL) == SQLITE_OK &&
           sqlite3_prepare_v2(db, "INSERT OR IGNORE INTO dispatch_region(workload_id, row, region_id) "
                                  "VALUES (?,?,?)", -1, &dr, NULL) == SQLITE_OK &&
           sqlite3_prepare_v2(db, "INSERT OR IGNORE INTO region(workload_id, id, name) VALUES (?,?,?)",
                              -1, &rg, NULL) == SQLITE_OK;
  for (size_t i = 0; ok && i < n_rows; i++) {
    const composite *cp = &c.comps[rows[i]];
    const crec *f = &c.recs[cp->first];
    double sclk = LM_NAN, mclk = LM_NAN;
    sqlite3_bind_int64(clk, 1, wid);
    sqlite3_bind_int(clk, 2, f->run);
    sqlite3_bind_int(clk, 3, f->gpu);
    sqlite3_bind_double(clk, 4, f->start);
    sqlite3_bind_double(clk, 5, f->end);
    if (sqlite3_step(clk) == SQLITE_ROW && sqlite3_column_int(clk, 2) > 0) {
      sclk = sqlite3_column_double(clk, 0);
      mclk = sqlite3_column_double(clk, 1);
    }
    sqlite3_reset(clk);
    sqlite3_bind_int64(up, 1, f->instance);
    sqlite3_bind_int64(up, 2, f->pid);
    sqlite3_bind_int64(up, 3, f->tid);
    if (isnan(sclk)) sqlite3_bind_null(up, 4);
    else sqlite3_bind_double(up, 4, sclk);
    if (isnan(mclk)) sqlite3_bind_null(up, 5);
    else sqlite3_bind_double(up, 5, mclk);
    sqlite3_bind_int64(up, 6, wid);
    sqlite3_bind_int64(up, 7, (sqlite3_int64)i);
    ok = sqlite3_step(up) == SQLITE_DONE;
    sqlite3_reset(up);
    /* Regions of every record of the row, by name. */
    for (int k = 0; ok && k < n_sets; k++) {
      const crec *r = &c.recs[cp->members[k]];
      char buf[512];
      snprintf(buf, sizeof buf, "%s", r->regions);
      for (char *tok = strtok(buf, ","); tok && ok; tok = strtok(NULL, ",")) {
        sqlite3_bind_int64(rn, 1, wid);
        sqlite3_bind_int(rn, 2, r->run);
        sqlite3_bind_int(rn, 3, atoi(tok));
        if (sqlite3_step(rn) == SQLITE_ROW) {
          const char *rname = (const char *)sqlite3_column_text(rn, 0);
          int64_t gid = name_add(&regions, rname ? rname : "");
          if (gid >= 0) {
            sqlite3_bind_int64(rg, 1, wid);
            sqlite3_bind_int64(rg, 2, gid);
            sqlite3_bind_text(rg, 3, rname ? rname : "", -1, SQLITE_TRANSIENT);
            sqlite3_step(rg);
            sqlite3_reset(rg);
            sqlite3_bind_int64(dr, 1, wid);
            sqlite3_bind_int64(dr, 2, (sqlite3_int64)i);
            sqlite3_bind_int64(dr, 3, gid);
            ok = sqlite3_step(dr) == SQLITE_DONE;
            sqlite3_reset(dr);
          }
        }
        sqlite3_reset(rn);
      }
    }
  }
  sqlite3_finalize(up);
  sqlite3_finalize(clk);
  sqlite3_finalize(rn);
  sqlite3_finalize(dr);
  sqlite3_finalize(rg);
  if (!ok) goto sql_fail_tx;
  if (sqlite3_prepare_v2(db, "UPDATE workload SET complete = 1, n_dispatches = ? WHERE id = ?", -1, &s,
                         NULL) != SQLITE_OK)
    goto sql_fail_tx;
  sqlite3_bind_int64(s, 1, (sqlite3_int64)n_rows);
  sqlite3_bind_int64(s, 2, wid);
  if (sqlite3_step(s) != SQLITE_DONE) goto sql_fail_tx;
  sqlite3_finalize(s);
  s = NULL;
  if ((st = exec_sql(db, "COMMIT", diag)) != LM_OK) goto rollback;
  summary->dispatches = n_rows;
  goto done;
sql_fail_tx:
  st = sql_error(db, diag);
rollback:
  sqlite3_finalize(s);
  s = NULL;
  exec_sql(db, "ROLLBACK", NULL);
  goto done;
nomem:
  st = lm_diag_set(diag, LM_ENOMEM, NULL, 0, 0, NULL, "out of memory");
done:
  sqlite3_finalize(s);
  for (size_t k = 0; prov && k < n_prov; k++) {
    free(prov[k].source);
    free(prov[k].column);
    free(prov[k].runs);
    free(prov[k].sets);
  }
  free(prov);
  if (w) lm_arena_free(w->arena);
  lm_table_free(pmc);
  for (int k = 0; levels && k < n_sets; k++) lm_table_free(levels[k]);
  free(levels);
  free(rows);
  name_list_fini(&pmc_cols);
  name_list_fini(&regions);
  collected_fini(&c);
  return st;
}

/* ------------------------------------------------------ the run loop */

static const char *mode_name(int mode) {
  return mode == LM_REPLAY_APP ? "app" : mode == LM_REPLAY_INSTANCE ? "instance" : "assigned";
}

/* Gaps after the runs so far, and the next run that fills them. A row
 * that misses set k gets a selected instance of its kernel assigned to
 * set k: one of its own instances first, then any other instance of the
 * same kernel (instance cycling assumes they behave alike), each instance
 * at most once per run. */
static int add_assignment(run_spec *run, size_t *cap, const char *key, int64_t selected, int set,
                          int64_t group) {
  if (run->n_assign == *cap) {
    size_t ncap = *cap ? *cap * 2 : 64;
    char **gk = realloc(run->assign_key, ncap * sizeof *gk);
    if (gk) run->assign_key = gk;
    int64_t *gi = realloc(run->assign_instance, ncap * sizeof *gi);
    if (gi) run->assign_instance = gi;
    int *gs = realloc(run->assign_set, ncap * sizeof *gs);
    if (gs) run->assign_set = gs;
    int64_t *gg = realloc(run->assign_group, ncap * sizeof *gg);
    if (gg) run->assign_group = gg;
    if (!gk || !gi || !gs || !gg) return 0;
    *cap = ncap;
  }
  run->assign_key[run->n_assign] = strdup(key);
  if (!run->assign_key[run->n_assign]) return 0;
  run->assign_instance[run->n_assign] = selected;
  run->assign_set[run->n_assign] = set;
  run->assign_group[run->n_assign] = group;
  run->n_assign++;
  return 1;
}

static lm_status plan_gaps(sqlite3 *db, int64_t wid, int n_sets, run_spec *run, size_t *n_gaps,
                           lm_diag *diag) {
  collected c;
  lm_status st = load_collected(db, wid, n_sets, &c, diag);
  *n_gaps = 0;
  if (st != LM_OK) return st;
  size_t cap = 0;
  char k[1100];
  lm_map *used = lm_map_new(), *pool_seen = lm_map_new();
  /* Every selected instance per key, in order: the pool. */
  int64_t *pool_sel = malloc((c.n_recs + 1) * sizeof *pool_sel);
  const char **pool_key = malloc((c.n_recs + 1) * sizeof *pool_key);
  size_t n_pool = 0;
  if (!used || !pool_seen || !pool_sel || !pool_key) goto nomem;
  for (size_t i = 0; i < c.n_recs; i++) {
    const crec *r = &c.recs[i];
    if (r->mode == LM_REPLAY_APP) continue;
    snprintf(k, sizeof k, "%s\x1f%lld", r->key, (long long)r->selected);
    int64_t dummy;
    if (lm_map_get(pool_seen, k, &dummy)) continue;
    if (lm_map_put(pool_seen, k, 1) != LM_OK) goto nomem;
    pool_sel[n_pool] = r->selected;
    pool_key[n_pool++] = r->key;
  }
  for (size_t i = 0; i < c.n_comps; i++) {
    const composite *cp = &c.comps[i];
    if (composite_complete(&c, cp)) continue;
    (*n_gaps)++;
    const crec *first = &c.recs[cp->first];
    if (first->mode == LM_REPLAY_APP) continue; /* app replay re-runs whole sets */
    int64_t group = first->group;
    size_t scan = 0;
    for (int set = 0; set < n_sets; set++) {
      if (cp->members[set] >= 0) continue;
      /* Its own instances first. */
      int64_t pick = -1, dummy;
      for (int m = 0; m < n_sets && pick < 0; m++) {
        if (cp->members[m] < 0) continue;
        snprintf(k, sizeof k, "%s\x1f%lld", first->key, (long long)c.recs[cp->members[m]].selected);
        if (!lm_map_get(used, k, &dummy)) pick = c.recs[cp->members[m]].selected;
      }
      for (; pick < 0 && scan < n_pool; scan++) {
        if (strcmp(pool_key[scan], first->key) != 0) continue;
        snprintf(k, sizeof k, "%s\x1f%lld", first->key, (long long)pool_sel[scan]);
        if (!lm_map_get(used, k, &dummy)) pick = pool_sel[scan];
      }
      if (pick < 0) break; /* every instance of the kernel is busy this run */
      snprintf(k, sizeof k, "%s\x1f%lld", first->key, (long long)pick);
      if (lm_map_put(used, k, 1) != LM_OK || !add_assignment(run, &cap, first->key, pick, set, group))
        goto nomem;
    }
  }
  goto done;
nomem:
  st = lm_diag_set(diag, LM_ENOMEM, NULL, 0, 0, NULL, "out of memory");
done:
  free(pool_sel);
  free(pool_key);
  lm_map_free(used);
  lm_map_free(pool_seen);
  collected_fini(&c);
  return st;
}

static void run_spec_fini(run_spec *r) {
  for (size_t i = 0; i < r->n_assign; i++) free(r->assign_key[i]);
  free(r->assign_key);
  free(r->assign_instance);
  free(r->assign_set);
  free(r->assign_group);
  memset(r, 0, sizeof *r);
}

static const char *signal_text(int sig, char *buf, size_t cap) {
  const char *name = sig == SIGSEGV ? "SIGSEGV" : sig == SIGABRT ? "SIGABRT" : sig == SIGKILL ? "SIGKILL"
                     : sig == SIGTERM ? "SIGTERM" : sig == SIGINT ? "SIGINT" : sig == SIGBUS ? "SIGBUS"
                     : sig == SIGFPE ? "SIGFPE" : sig == SIGILL ? "SIGILL" : NULL;
  if (name) snprintf(buf, cap, "%d (%s)", sig, name);
  else snprintf(buf, cap, "%d", sig);
  return buf;
}

typedef struct profile_ctx {
  sqlite3 *db;
  int64_t wid;
  const char *dir;
  const char *tool;
  const char *arch;
  set_info *sets;
  int n_sets;
  stored opt;
  progress prog;
  int runs_done, runs_planned;
  lm_profile_summary *summary;
} profile_ctx;

/* A message for the user and for the workload's log table (written in
 * its own statement: a profile that stops later keeps it). */
#if defined(__GNUC__)
__attribute__((format(printf, 4, 5)))
#endif
static void note(sqlite3 *db, int64_t wid, lm_log_level level, const char *fmt, ...) {
  char msg[2048];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  lm_log(level, "%s", msg);
  if (!db) return;
  sqlite3_stmt *s = NULL;
  if (sqlite3_prepare_v2(db, "INSERT INTO log(workload_id, seq, t_ns, level, message) SELECT ?, "
                             "COALESCE(MAX(seq), 0) + 1, ?, ?, ? FROM log WHERE workload_id = ?",
                         -1, &s, NULL) != SQLITE_OK)
    return;
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  sqlite3_bind_int64(s, 1, wid);
  sqlite3_bind_int64(s, 2, (sqlite3_int64)ts.tv_sec * 1000000000 + ts.tv_nsec);
  sqlite3_bind_text(s, 3, lm_log_level_name(level), -1, SQLITE_STATIC);
  sqlite3_bind_text(s, 4, msg, -1, SQLITE_TRANSIENT);
  sqlite3_bind_int64(s, 5, wid);
  sqlite3_step(s);
  sqlite3_finalize(s);
}

/* One application run, committed to the database when it ends. */
static lm_status do_run(profile_ctx *x, const run_spec *spec, lm_diag *diag) {
  char config_path[4096], records[4096], started[64], finished[64], why[1024];
  snprintf(config_path, sizeof config_path, "%s/run_%d.config", x->dir, spec->id);
  snprintf(records, sizeof records, "%s/run_%d.records", x->dir, spec->id);
  lm_tool_config cfg;
  memset(&cfg, 0, sizeof cfg);
  snprintf(cfg.arch, sizeof cfg.arch, "%s", x->arch);
  cfg.mode = spec->mode;
  cfg.pass = spec->pass;
  cfg.key_grid = x->opt.key_grid;
  cfg.n_sets = x->n_sets;
  char ***set_counters = calloc((size_t)x->n_sets + 1, sizeof *set_counters);
  char **set_acc = calloc((size_t)x->n_sets + 1, sizeof *set_acc);
  if (!set_counters || !set_acc) {
    free(set_counters);
    free(set_acc);
    return lm_diag_set(diag, LM_ENOMEM, NULL, 0, 0, NULL, "out of memory");
  }
  for (int s = 0; s < x->n_sets; s++) {
    set_counters[s] = x->sets[s].counters;
    set_acc[s] = x->sets[s].accumulate;
  }
  cfg.set_counters = set_counters;
  cfg.set_accumulate = set_acc;
  cfg.kernels = x->opt.kernels;
  cfg.n_kernels = x->opt.n_kernels;
  cfg.instance = x->opt.instance;
  cfg.dispatch = x->opt.dispatch;
  cfg.gpu = x->opt.gpu;
  cfg.regions = x->opt.regions;
  cfg.n_regions = x->opt.n_regions;
  cfg.assign_key = spec->assign_key;
  cfg.assign_instance = spec->assign_instance;
  cfg.assign_set = spec->assign_set;
  cfg.n_assign = spec->n_assign;
  snprintf(cfg.output, sizeof cfg.output, "%s", records);
  snprintf(cfg.telemetry, sizeof cfg.telemetry, "auto");
  lm_status st = lm_tool_config_write(&cfg, config_path, diag);
  free(set_counters);
  free(set_acc);
  if (st != LM_OK) return st;
  unlink(records);

  /* The run is known before it starts: a profile killed now shows it. */
  now_text(started, sizeof started);
  sqlite3_stmt *s = NULL;
  if (sqlite3_prepare_v2(x->db, "INSERT OR REPLACE INTO profile_run(workload_id, id, mode, pass, "
                                "started, status) VALUES (?,?,?,?,?, 'running')", -1, &s, NULL) != SQLITE_OK)
    return sql_error(x->db, diag);
  sqlite3_bind_int64(s, 1, x->wid);
  sqlite3_bind_int(s, 2, spec->id);
  sqlite3_bind_text(s, 3, mode_name(spec->mode), -1, SQLITE_STATIC);
  if (spec->mode == LM_REPLAY_APP) sqlite3_bind_int(s, 4, spec->pass);
  else sqlite3_bind_null(s, 4);
  sqlite3_bind_text(s, 5, started, -1, SQLITE_STATIC);
  st = sqlite3_step(s) == SQLITE_DONE ? LM_OK : sql_error(x->db, diag);
  sqlite3_finalize(s);
  if (st != LM_OK) return st;

  if (!x->prog.enabled) {
    char what[64] = "";
    if (spec->mode == LM_REPLAY_APP) snprintf(what, sizeof what, ", set %d", spec->pass);
    else if (spec->mode == LM_REPLAY_ASSIGNED) snprintf(what, sizeof what, ", %zu missing", spec->n_assign);
    note(x->db, x->wid, LM_LOG_INFO, "run %d/%d (%s%s): %s", x->runs_done + 1, x->runs_planned,
         mode_name(spec->mode), what, x->opt.argv[0]);
  }
  x->prog.run = x->runs_done;
  x->prog.runs = x->runs_planned;
  x->prog.read_at = 0;
  x->prog.len = 0;
  int exit_code = -1, sig = 0;
  lm_diag run_diag;
  lm_diag_clear(&run_diag);
  lm_status run_st = run_app(x->opt.argv, x->tool, config_path, records, spec->id, &x->prog,
                             &exit_code, &sig, &run_diag);
  if (x->prog.enabled) fputc('\n', stderr);
  if (run_st != LM_OK && exit_code < 0 && sig == 0) {
    /* The program could not be started at all. */
    sqlite3_prepare_v2(x->db, "DELETE FROM profile_run WHERE workload_id = ? AND id = ?", -1, &s, NULL);
    sqlite3_bind_int64(s, 1, x->wid);
    sqlite3_bind_int(s, 2, spec->id);
    sqlite3_step(s);
    sqlite3_finalize(s);
    unlink(config_path);
    *diag = run_diag;
    return run_st;
  }
  /* Keep what the run wrote, whatever happened. */
  if ((st = exec_sql(x->db, "BEGIN IMMEDIATE", diag)) != LM_OK) return st;
  long n_dispatches = 0;
  int tool_ok = 0;
  st = ingest(x->db, x->wid, spec, records, &n_dispatches, &tool_ok, why, sizeof why, diag);
  if (st != LM_OK) {
    exec_sql(x->db, "ROLLBACK", NULL);
    return st;
  }
  int ok = run_st == LM_OK && tool_ok;
  now_text(finished, sizeof finished);
  if (sqlite3_prepare_v2(x->db, "UPDATE profile_run SET finished = ?, status = ?, exit_code = ?, "
                                "signal = ?, n_dispatches = ? WHERE workload_id = ? AND id = ?",
                         -1, &s, NULL) != SQLITE_OK) {
    st = sql_error(x->db, diag);
    exec_sql(x->db, "ROLLBACK", NULL);
    return st;
  }
  sqlite3_bind_text(s, 1, finished, -1, SQLITE_STATIC);
  sqlite3_bind_text(s, 2, ok ? "ok" : "failed", -1, SQLITE_STATIC);
  if (exit_code >= 0) sqlite3_bind_int(s, 3, exit_code);
  else sqlite3_bind_null(s, 3);
  if (sig) sqlite3_bind_int(s, 4, sig);
  else sqlite3_bind_null(s, 4);
  sqlite3_bind_int64(s, 5, n_dispatches);
  sqlite3_bind_int64(s, 6, x->wid);
  sqlite3_bind_int(s, 7, spec->id);
  st = sqlite3_step(s) == SQLITE_DONE ? LM_OK : sql_error(x->db, diag);
  sqlite3_finalize(s);
  if (st == LM_OK) st = exec_sql(x->db, "COMMIT", diag);
  else exec_sql(x->db, "ROLLBACK", NULL);
  if (st != LM_OK) return st;
  /* The run is in the database: its files are no longer needed. */
  unlink(records);
  unlink(config_path);
  x->runs_done++;
  x->summary->runs++;
  if (ok) {
    if (x->prog.enabled)
      note(x->db, x->wid, LM_LOG_DEBUG, "run %d: %ld dispatches", spec->id, n_dispatches);
    return LM_OK;
  }
  char what[256];
  if (spec->mode == LM_REPLAY_APP)
    snprintf(what, sizeof what, "run %d (application replay, set %d of %d)", spec->id, spec->pass,
             x->n_sets);
  else
    snprintf(what, sizeof what, "run %d (%s)", spec->id,
             spec->mode == LM_REPLAY_INSTANCE ? "instance cycling" : "filling missing sets");
  char sigbuf[64];
  if (sig)
    return lm_diag_set(diag, LM_EDATA, x->opt.argv[0], 0, 0, NULL,
                       "%s: the application was killed by signal %s after %ld dispatches; earlier "
                       "runs are kept (`lumen profile --resume -w %s` continues)",
                       what, signal_text(sig, sigbuf, sizeof sigbuf), n_dispatches, x->dir);
  if (exit_code != 0)
    return lm_diag_set(diag, LM_EDATA, x->opt.argv[0], 0, 0, NULL,
                       "%s: the application exited with status %d; earlier runs are kept "
                       "(`lumen profile --resume -w %s` continues)", what, exit_code, x->dir);
  return lm_diag_set(diag, LM_EDATA, x->opt.argv[0], 0, 0, NULL, "%s: %s", what,
                     why[0] ? why : "the tool library did not finish its records");
}

/* Whether a run of this kind already finished well. */
static int run_done(sqlite3 *db, int64_t wid, const char *mode, int pass) {
  sqlite3_stmt *s = NULL;
  int found = 0;
  if (sqlite3_prepare_v2(db, "SELECT COUNT(*) FROM profile_run WHERE workload_id = ? AND mode = ? AND "
                             "(pass = ? OR ? < 0) AND status = 'ok'", -1, &s, NULL) != SQLITE_OK)
    return 0;
  sqlite3_bind_int64(s, 1, wid);
  sqlite3_bind_text(s, 2, mode, -1, SQLITE_STATIC);
  sqlite3_bind_int(s, 3, pass);
  sqlite3_bind_int(s, 4, pass);
  if (sqlite3_step(s) == SQLITE_ROW) found = sqlite3_column_int(s, 0);
  sqlite3_finalize(s);
  return found;
}

static int next_run_id(sqlite3 *db, int64_t wid) {
  sqlite3_stmt *s = NULL;
  int id = 1;
  if (sqlite3_prepare_v2(db, "SELECT COALESCE(MAX(id), 0) + 1 FROM profile_run WHERE workload_id = ?",
                         -1, &s, NULL) != SQLITE_OK)
    return 1;
  sqlite3_bind_int64(s, 1, wid);
  if (sqlite3_step(s) == SQLITE_ROW) id = sqlite3_column_int(s, 0);
  sqlite3_finalize(s);
  return id;
}

static lm_status store_options(sqlite3 *db, int64_t wid, const lm_profile_opts *o, lm_diag *diag) {
  lm_status st = LM_OK;
  char num[32];
  st = put_option(db, wid, "name", 0, o->name, diag);
  for (int i = 0; st == LM_OK && i < o->argc; i++) st = put_option(db, wid, "argv", i, o->argv[i], diag);
  for (size_t i = 0; st == LM_OK && i < o->n_items; i++) st = put_option(db, wid, "block", (int)i, o->items[i], diag);
  for (size_t i = 0; st == LM_OK && i < o->n_kernels; i++)
    st = put_option(db, wid, "kernel", (int)i, o->kernels[i], diag);
  for (size_t i = 0; st == LM_OK && i < o->n_regions; i++)
    st = put_option(db, wid, "region", (int)i, o->regions[i], diag);
  if (st == LM_OK && o->instance) st = put_option(db, wid, "instance", 0, o->instance, diag);
  if (st == LM_OK && o->dispatch) st = put_option(db, wid, "dispatch", 0, o->dispatch, diag);
  if (st == LM_OK && o->gpu) st = put_option(db, wid, "gpu", 0, o->gpu, diag);
  snprintf(num, sizeof num, "%d", o->replay < 0 ? LM_REPLAY_APP : o->replay);
  if (st == LM_OK) st = put_option(db, wid, "replay", 0, num, diag);
  snprintf(num, sizeof num, "%d", o->key_grid);
  if (st == LM_OK) st = put_option(db, wid, "key_grid", 0, num, diag);
  return st;
}

/* The workload id of the one workload in a lumen workload database. */
static lm_status only_workload(sqlite3 *db, const char *path, int64_t *wid, int *complete, lm_diag *diag) {
  sqlite3_stmt *s = NULL;
  if (sqlite3_prepare_v2(db, "SELECT id, complete FROM workload ORDER BY id LIMIT 1", -1, &s, NULL) != SQLITE_OK)
    return sql_error(db, diag);
  lm_status st = LM_OK;
  if (sqlite3_step(s) == SQLITE_ROW) {
    *wid = sqlite3_column_int64(s, 0);
    *complete = sqlite3_column_int(s, 1);
  } else {
    st = lm_diag_set(diag, LM_ENOTFOUND, path, 0, 0, NULL, "holds no workload to resume");
  }
  sqlite3_finalize(s);
  return st;
}

/* The application can be started: found (on PATH when its name has no
 * '/') and executable. Checked before anything is written. */
static lm_status check_program(const char *prog, lm_diag *diag) {
  char path[4096];
  int found = 0;
  if (strchr(prog, '/')) {
    snprintf(path, sizeof path, "%s", prog);
    found = access(path, F_OK) == 0;
  } else {
    const char *env = getenv("PATH");
    char dirs[8192];
    snprintf(dirs, sizeof dirs, "%s", env ? env : "/usr/local/bin:/usr/bin:/bin");
    for (char *save = NULL, *d = strtok_r(dirs, ":", &save); d && !found; d = strtok_r(NULL, ":", &save)) {
      snprintf(path, sizeof path, "%s/%s", *d ? d : ".", prog);
      found = access(path, X_OK) == 0;
    }
  }
  struct stat sb;
  if (!found)
    return lm_diag_set(diag, LM_ENOTFOUND, prog, 0, 0, NULL,
                       "no such program (give its path, or put it on PATH)");
  if (stat(path, &sb) == 0 && S_ISDIR(sb.st_mode))
    return lm_diag_set(diag, LM_EINVAL, prog, 0, 0, NULL, "is a folder, not a program");
  if (access(path, X_OK) != 0)
    return lm_diag_set(diag, LM_EINVAL, prog, 0, 0, NULL,
                       "not executable (chmod +x %s, or run it through its interpreter)", prog);
  return LM_OK;
}

/* Whether dir is missing or an empty folder. */
static int dir_is_empty(const char *dir) {
  DIR *d = opendir(dir);
  if (!d) return errno == ENOENT;
  struct dirent *e;
  int empty = 1;
  while (empty && (e = readdir(d)) != NULL)
    empty = strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0;
  closedir(d);
  return empty;
}

static void copy_opts(const lm_profile_opts *o, stored *s) {
  memset(s, 0, sizeof *s);
  s->argv = calloc((size_t)o->argc + 1, sizeof *s->argv);
  for (int i = 0; s->argv && i < o->argc; i++) s->argv[s->argc++] = strdup(o->argv[i]);
  s->items = calloc(o->n_items + 1, sizeof *s->items);
  for (size_t i = 0; s->items && i < o->n_items; i++) s->items[s->n_items++] = strdup(o->items[i]);
  s->kernels = calloc(o->n_kernels + 1, sizeof *s->kernels);
  for (size_t i = 0; s->kernels && i < o->n_kernels; i++) s->kernels[s->n_kernels++] = strdup(o->kernels[i]);
  s->regions = calloc(o->n_regions + 1, sizeof *s->regions);
  for (size_t i = 0; s->regions && i < o->n_regions; i++) s->regions[s->n_regions++] = strdup(o->regions[i]);
  s->instance = o->instance ? strdup(o->instance) : NULL;
  s->dispatch = o->dispatch ? strdup(o->dispatch) : NULL;
  s->gpu = o->gpu ? strdup(o->gpu) : NULL;
  s->name = strdup(o->name ? o->name : "");
  s->replay = o->replay;
  s->key_grid = o->key_grid;
}

lm_status lm_profile_run(const lm_profile_opts *o, lm_profile_summary *summary, lm_diag *diag) {
  memset(summary, 0, sizeof *summary);
  profile_ctx x;
  memset(&x, 0, sizeof x);
  x.summary = summary;
  x.dir = o->dir;
  x.tool = o->tool_library;
  lm_workload *rec = NULL;
  lm_plan *plan = NULL;
  run_spec spec;
  memset(&spec, 0, sizeof spec);
  lm_status st = LM_OK;
  int was_complete = 0;
  char db_path[4096];
  snprintf(db_path, sizeof db_path, "%s/%s", o->dir, LM_WORKLOAD_DB);

  /* The counter backend. This build collects from the simulated device. */
  const char *backend = o->backend ? o->backend : "sim";
  if (strcmp(backend, "sim") != 0) {
    lm_backend_status b[8];
    size_t nb = lm_backends_probe(b, 8);
    for (size_t i = 0; i < nb; i++)
      if (strcmp(b[i].name, backend) == 0 && strcmp(b[i].kind, "counters") == 0)
        return lm_diag_set(diag, LM_EINVAL, NULL, 0, 0, "--backend", "%s cannot collect here: %s",
                           backend, b[i].why);
    return lm_diag_set(diag, LM_EINVAL, NULL, 0, 0, "--backend",
                       "no counter backend named '%s' (see `lumen list backends`)", backend);
  }
  const char *recording = getenv("LUMEN_SIM_RECORDING");
  if (!recording || !*recording)
    return lm_diag_set(diag, LM_ENOTFOUND, NULL, 0, 0, NULL,
                       "no usable counter backend: this build has no vendor GPU backend, and the "
                       "simulated device needs LUMEN_SIM_RECORDING set to a recorded workload "
                       "folder (see `lumen list backends`)");
  if ((st = lm_workload_read(recording, &rec, diag)) != LM_OK) goto done;
  x.arch = rec->arch;
  const lm_catalog *cat = lm_metrics_builtin(rec->arch);
  if (!cat) {
    st = lm_diag_set(diag, LM_EARCH, recording, 0, 0, "gpu_arch",
                     "the device is %s, which lumen has no definitions for", rec->arch);
    goto done;
  }

  struct stat sb;
  int exists = stat(db_path, &sb) == 0;
  if (o->resume) {
    if (!exists) {
      st = lm_diag_set(diag, LM_ENOTFOUND, o->dir, 0, 0, NULL,
                       "nothing to resume: no %s in this folder", LM_WORKLOAD_DB);
      goto done;
    }
    if ((st = lm_db_open(db_path, LM_DB_WRITE, &x.db, diag)) != LM_OK) goto done;
    int complete = 0;
    if ((st = only_workload(x.db, db_path, &x.wid, &complete, diag)) != LM_OK) goto done;
    if ((st = read_options(x.db, x.wid, &x.opt, diag)) != LM_OK) goto done;
    was_complete = complete;
    if (o->replay >= 0 && o->replay != x.opt.replay) {
      /* e.g. an instance-cycling profile continued with --replay auto */
      char num[16];
      snprintf(num, sizeof num, "%d", o->replay);
      if ((st = put_option(x.db, x.wid, "replay", 0, num, diag)) != LM_OK) goto done;
      x.opt.replay = o->replay;
    }
    if (x.opt.argc == 0) {
      st = lm_diag_set(diag, LM_EDATA, db_path, 0, 0, "profile_option", "no command to resume");
      goto done;
    }
    if (o->argc > 0) {
      int same = o->argc == x.opt.argc;
      for (int i = 0; same && i < o->argc; i++) same = strcmp(o->argv[i], x.opt.argv[i]) == 0;
      if (!same) {
        st = lm_diag_set(diag, LM_EINVAL, o->dir, 0, 0, NULL,
                         "--resume continues the profile of `%s ...` with its own command and "
                         "options; leave out the command, or profile into a new folder",
                         x.opt.argv[0]);
        goto done;
      }
    }
    if ((st = load_plan(x.db, x.wid, &x.sets, &x.n_sets, diag)) != LM_OK) goto done;
  } else {
    if (o->argc < 1) {
      st = lm_diag_set(diag, LM_EINVAL, NULL, 0, 0, NULL, "no application to profile (lumen profile -n NAME -- APP ARGS)");
      goto done;
    }
    if ((st = check_program(o->argv[0], diag)) != LM_OK) goto done;
    if (exists || !dir_is_empty(o->dir)) {
      st = lm_diag_set(diag, LM_EINVAL, o->dir, 0, 0, NULL,
                       "already exists; lumen never overwrites a workload (choose another -w or -n, "
                       "or add --resume to continue an unfinished profile)");
      goto done;
    }
    if ((st = lm_make_dirs(o->dir, "the workload folder", "choose a writable place with -w", diag)) != LM_OK)
      goto done;
    if ((st = lm_plan_build(cat, o->items, o->n_items, &plan, diag)) != LM_OK) goto done;
    if ((st = lm_db_open(db_path, LM_DB_CREATE, &x.db, diag)) != LM_OK) goto done;
    copy_opts(o, &x.opt);
    if (x.opt.replay < 0) x.opt.replay = LM_REPLAY_APP;
    long mi = lm_sysinfo_find(&rec->sysinfo, "gpu_model");
    const char *model = mi >= 0 ? rec->sysinfo.texts[mi] : "";
    if ((st = exec_sql(x.db, "BEGIN IMMEDIATE", diag)) != LM_OK) goto done;
    lm_sql *sql = lm_sql_wrap_sqlite(x.db);
    st = sql ? lm_db_create_workload(sql, o->name, NULL, "lumen", "simulated device", rec->arch, model, 0, 0,
                                     &x.wid, diag)
             : lm_diag_set(diag, LM_ENOMEM, NULL, 0, 0, NULL, "out of memory");
    lm_sql_close(sql);
    if (st == LM_OK) st = store_options(x.db, x.wid, o, diag);
    if (st == LM_OK) st = store_plan(x.db, x.wid, plan, diag);
    if (st == LM_OK) st = exec_sql(x.db, "COMMIT", diag);
    else exec_sql(x.db, "ROLLBACK", NULL);
    if (st != LM_OK) goto done;
    if ((st = load_plan(x.db, x.wid, &x.sets, &x.n_sets, diag)) != LM_OK) goto done;
  }
  if (x.n_sets == 0) {
    st = lm_diag_set(diag, LM_EDATA, db_path, 0, 0, "profile_set", "the plan has no counter sets");
    goto done;
  }
  summary->sets = x.n_sets;
  x.prog.enabled = o->progress;
  x.prog.n_sets = x.n_sets;
  x.prog.seen_sets = calloc((size_t)x.n_sets, 1);
  if (!x.prog.seen_sets) {
    st = lm_diag_set(diag, LM_ENOMEM, NULL, 0, 0, NULL, "out of memory");
    goto done;
  }

  /* The runs. */
  int replay = x.opt.replay;
  if (replay == LM_REPLAY_APP) {
    x.runs_planned = x.n_sets;
    for (int p = 0; p < x.n_sets; p++) {
      if (run_done(x.db, x.wid, "app", p)) {
        x.runs_done++;
        continue;
      }
      spec.id = next_run_id(x.db, x.wid);
      spec.n_sets = x.n_sets;
      spec.mode = LM_REPLAY_APP;
      spec.pass = p;
      if ((st = do_run(&x, &spec, diag)) != LM_OK) goto done;
    }
  } else {
    x.runs_planned = 1;
    if (!run_done(x.db, x.wid, "instance", -1)) {
      spec.id = next_run_id(x.db, x.wid);
      spec.n_sets = x.n_sets;
      spec.mode = LM_REPLAY_INSTANCE;
      if ((st = do_run(&x, &spec, diag)) != LM_OK) goto done;
    } else {
      x.runs_done++;
    }
    /* auto: extra runs only for what is still missing. */
    for (int round = 0; replay == LM_REPLAY_AUTO && round < x.n_sets; round++) {
      run_spec_fini(&spec);
      size_t gaps = 0;
      if ((st = plan_gaps(x.db, x.wid, x.n_sets, &spec, &gaps, diag)) != LM_OK) goto done;
      if (gaps == 0 || spec.n_assign == 0) break;
      x.runs_planned = x.runs_done + 1;
      spec.id = next_run_id(x.db, x.wid);
      spec.n_sets = x.n_sets;
      spec.mode = LM_REPLAY_ASSIGNED;
      note(x.db, x.wid, LM_LOG_INFO, "%zu dispatch rows miss counter sets: one more run collects %zu of them",
           gaps, spec.n_assign);
      if ((st = do_run(&x, &spec, diag)) != LM_OK) goto done;
    }
  }

  if (was_complete && summary->runs == 0) {
    lm_log(LM_LOG_INFO, "%s: the profile is complete; nothing to resume", o->dir);
    summary->sets = 0;
    goto done;
  }
  /* Compose the workload. */
  char ip_blocks[1024] = "";
  for (size_t i = 0, at = 0; i < x.opt.n_items && at < sizeof ip_blocks - 1; i++)
    at += (size_t)snprintf(ip_blocks + at, sizeof ip_blocks - at, "%s%s", i ? "|" : "", x.opt.items[i]);
  st = compose(x.db, x.wid, x.sets, x.n_sets, cat->accumulate ? cat->accumulate : "SQ_ACCUM_PREV_HIRES",
               rec, x.opt.name, x.opt.argv, x.opt.argc, ip_blocks[0] ? ip_blocks : NULL, summary, diag);
  if (st == LM_OK)
    note(x.db, x.wid, LM_LOG_DEBUG, "composed %zu dispatch rows from %d counter sets%s%s", summary->dispatches,
         x.n_sets, summary->dropped ? "; left out: " : "", summary->dropped ? summary->dropped_detail : "");
  if (st == LM_OK && summary->dispatches == 0)
    st = lm_diag_set(diag, LM_EDATA, o->dir, 0, 0, NULL,
                     "no selected dispatch got all %d counter sets (%s); the runs are kept: "
                     "`lumen profile --resume --replay auto -w %s` runs the application again "
                     "for the missing sets", x.n_sets,
                     summary->dropped ? summary->dropped_detail : "no dispatch was selected", o->dir);
done:
  if (st != LM_OK && x.db && x.wid) {
    char line[2048];
    note(x.db, x.wid, LM_LOG_DEBUG, "stopped: %s", lm_diag_format(diag, line, sizeof line));
  }
  run_spec_fini(&spec);
  free(x.prog.seen_sets);
  free(x.prog.buf);
  sets_fini(x.sets, x.n_sets);
  stored_fini(&x.opt);
  lm_db_close(x.db);
  lm_plan_free(plan);
  lm_workload_free(rec);
  return st;
}
