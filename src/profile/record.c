/*
 * record.c - what `lumen profile` keeps in the workload's database while
 * it runs: the options (so --resume repeats them), the plan's counter
 * sets, the runs, their dispatch records, values, regions and clock
 * samples (read from the records file the tool library writes), and the
 * log. Every run is committed before the next starts.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>
#include <sqlite3.h>
#include <stdarg.h>
#include <dirent.h>
#include <time.h>
#include <unistd.h>

#include "profile/collect.h"

/* ----------------------------------------------------------- utilities */

void lm_collect_now_text(char *out, size_t cap) {
  time_t now = time(NULL);
  strftime(out, cap, "%Y-%m-%dT%H:%M:%SZ", gmtime(&now));
}

lm_status lm_collect_exec_sql(sqlite3 *db, const char *sql, lm_diag *diag) {
  char *err = NULL;
  if (sqlite3_exec(db, sql, NULL, NULL, &err) == SQLITE_OK) return LM_OK;
  lm_status st = lm_diag_set(diag, LM_EIO, sqlite3_db_filename(db, "main"), 0, 0, NULL, "%s", err ? err : "?");
  sqlite3_free(err);
  return st;
}

lm_status lm_collect_sql_error(sqlite3 *db, lm_diag *diag) {
  return lm_diag_set(diag, LM_EIO, sqlite3_db_filename(db, "main"), 0, 0, NULL, "%s", sqlite3_errmsg(db));
}

/* ------------------------------------------------------------- options */

lm_status lm_collect_put_option(sqlite3 *db, int64_t wid, const char *key, int pos, const char *value,
                            lm_diag *diag) {
  sqlite3_stmt *s = NULL;
  if (sqlite3_prepare_v2(db, "INSERT OR REPLACE INTO profile_option(workload_id, key, position, value) "
                             "VALUES (?,?,?,?)", -1, &s, NULL) != SQLITE_OK)
    return lm_collect_sql_error(db, diag);
  sqlite3_bind_int64(s, 1, wid);
  sqlite3_bind_text(s, 2, key, -1, SQLITE_STATIC);
  sqlite3_bind_int(s, 3, pos);
  sqlite3_bind_text(s, 4, value ? value : "", -1, SQLITE_STATIC);
  lm_status st = sqlite3_step(s) == SQLITE_DONE ? LM_OK : lm_collect_sql_error(db, diag);
  sqlite3_finalize(s);
  return st;
}

void lm_collect_stored_fini(lm_stored_opts *s) {
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

lm_status lm_collect_read_options(sqlite3 *db, int64_t wid, lm_stored_opts *out, lm_diag *diag) {
  sqlite3_stmt *s = NULL;
  memset(out, 0, sizeof *out);
  if (sqlite3_prepare_v2(db, "SELECT key, value FROM profile_option WHERE workload_id = ? "
                             "ORDER BY key, position", -1, &s, NULL) != SQLITE_OK)
    return lm_collect_sql_error(db, diag);
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
    else if (strcmp(k, "timeout") == 0) out->timeout = strtod(v, NULL);
  }
  sqlite3_finalize(s);
  return LM_OK;
}

lm_status lm_collect_store_plan(sqlite3 *db, int64_t wid, const lm_plan *plan, lm_diag *diag) {
  sqlite3_stmt *s = NULL;
  if (sqlite3_prepare_v2(db, "INSERT INTO profile_set(workload_id, set_id, position, counter, "
                             "block, accumulate, why) VALUES (?,?,?,?,?,?,?)", -1, &s, NULL) != SQLITE_OK)
    return lm_collect_sql_error(db, diag);
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
    if (sqlite3_step(s) != SQLITE_DONE) st = lm_collect_sql_error(db, diag);
    sqlite3_reset(s);
  }
  sqlite3_finalize(s);
  return st;
}

void lm_collect_sets_fini(lm_set_info *sets, int n) {
  for (int i = 0; sets && i < n; i++) {
    for (char **c = sets[i].counters; c && *c; c++) free(*c);
    free(sets[i].counters);
    free(sets[i].accumulate);
  }
  free(sets);
}

lm_status lm_collect_load_plan(sqlite3 *db, int64_t wid, lm_set_info **out, int *n_out, lm_diag *diag) {
  sqlite3_stmt *s = NULL;
  *out = NULL;
  *n_out = 0;
  if (sqlite3_prepare_v2(db, "SELECT set_id, counter, accumulate FROM profile_set WHERE workload_id = ? "
                             "ORDER BY set_id, position", -1, &s, NULL) != SQLITE_OK)
    return lm_collect_sql_error(db, diag);
  sqlite3_bind_int64(s, 1, wid);
  lm_set_info *sets = NULL;
  int n = 0;
  size_t *counts = NULL;
  while (sqlite3_step(s) == SQLITE_ROW) {
    int id = sqlite3_column_int(s, 0);
    if (id < 0 || id > 4096) continue;
    if (id >= n) {
      lm_set_info *grown = realloc(sets, (size_t)(id + 1) * sizeof *grown);
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

/* The composed row a record belongs to: in application replay the n-th
 * selected instance of a key in every run; in instance cycling each
 * n_sets consecutive instances; in a gap-filling run, the row it was
 * assigned to. -1: none. */
static int64_t row_group(const lm_run_spec *spec, const char *key, int64_t selected, int set) {
  if (set < 0 || selected < 0) return -1;
  if (spec->mode == LM_REPLAY_APP) return selected;
  if (spec->mode == LM_REPLAY_INSTANCE) return selected / (spec->n_sets ? spec->n_sets : 1);
  for (size_t i = 0; i < spec->n_assign; i++)
    if (spec->assign_instance[i] == selected && spec->assign_set[i] == set &&
        strcmp(spec->assign_key[i], key) == 0)
      return spec->assign_group[i];
  return -1;
}

/* What one process's records file said about the process. */
typedef struct proc_info {
  long pid;
  char host[256], launcher[16];
  int rank, size, local_rank;
  int min_gpu;      /* the lowest GPU it dispatched on, or INT_MAX */
  char gpus[256];   /* the GPUs it dispatched on, comma-separated */
  long n_dispatches;
  int finished;     /* END and no error */
  int error;        /* it reported an error (E) */
  int attached;     /* it attached to a GPU runtime (A), so it had data to lose */
  char why[512];    /* its first error */
} proc_info;

static void note_gpu(proc_info *p, int gpu) {
  if (gpu < p->min_gpu) p->min_gpu = gpu;
  char item[16];
  snprintf(item, sizeof item, "%d", gpu);
  size_t n = strlen(item), len = strlen(p->gpus);
  for (const char *at = p->gpus; (at = strstr(at, item)) != NULL; at += n)
    if ((at == p->gpus || at[-1] == ',') && (at[n] == '\0' || at[n] == ',')) return;
  if (len + n + 2 < sizeof p->gpus) snprintf(p->gpus + len, sizeof p->gpus - len, "%s%s", len ? "," : "", item);
}

/* ingest_file: one process's records file into the database under run
 * spec->id; its facts into *p. */
static lm_status ingest_file(sqlite3 *db, int64_t wid, const lm_run_spec *spec, const char *path,
                             proc_info *proc, lm_diag *diag) {
  int run = spec->id;
  memset(proc, 0, sizeof *proc);
  proc->rank = proc->size = proc->local_rank = -1;
  proc->min_gpu = INT_MAX;
  long *n_dispatches = &proc->n_dispatches;
  char *why = proc->why;
  size_t why_cap = sizeof proc->why;
  FILE *f = fopen(path, "r");
  if (!f) {
    snprintf(why, why_cap, "cannot read its records: %s", strerror(errno));
    return LM_OK;
  }
  sqlite3_stmt *rec = NULL, *val = NULL, *clk = NULL, *reg = NULL, *sys = NULL;
  int n_sys = 0;
  lm_status st = LM_OK;
  if (sqlite3_prepare_v2(db, "INSERT OR REPLACE INTO profile_record(workload_id, run_id, dispatch_id, "
                             "kernel, instance, selected, set_id, gpu_id, pid, tid, grid_size, "
                             "workgroup_size, lds_per_workgroup, scratch_per_workitem, arch_vgpr, "
                             "accum_vgpr, sgpr, start_ns, end_ns, regions, cycle_key, row_group) VALUES "
                             "(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)", -1, &rec, NULL) != SQLITE_OK ||
      sqlite3_prepare_v2(db, "INSERT OR REPLACE INTO profile_value(workload_id, run_id, dispatch_id, "
                             "column_name, value, pid) VALUES (?,?,?,?,?,?)", -1, &val, NULL) != SQLITE_OK ||
      sqlite3_prepare_v2(db, "INSERT INTO clock_sample(workload_id, run_id, gpu_id, t_ns, sclk_mhz, "
                             "mclk_mhz) VALUES (?,?,?,?,?,?)", -1, &clk, NULL) != SQLITE_OK ||
      sqlite3_prepare_v2(db, "INSERT OR REPLACE INTO profile_region(workload_id, run_id, id, name) "
                             "VALUES (?,?,?,?)", -1, &reg, NULL) != SQLITE_OK) {
    st = lm_collect_sql_error(db, diag);
    goto done;
  }
  /* Kernel ids of this run -> names. */
  char **kernels = NULL;
  size_t n_kernels = 0;
  long pid = 0;
  int finished = 0;
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
          sqlite3_bind_int64(val, 6, pid);
          if (sqlite3_step(val) != SQLITE_DONE) {
            st = lm_collect_sql_error(db, diag);
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
      finished = 1;
    } else if (strcmp(tag, "E") == 0 && nf >= 2) {
      if (!why[0]) snprintf(why, why_cap, "%s", fields[1]);
      proc->error = 1;
    } else if (strcmp(tag, "A") == 0) {
      proc->attached = 1;
    } else if (strcmp(tag, "P") == 0 && nf >= 2) {
      /* P pid host rank size local_rank launcher */
      pid = atol(fields[1]);
      proc->pid = pid;
      if (nf >= 7) {
        snprintf(proc->host, sizeof proc->host, "%s", strcmp(fields[2], "-") ? fields[2] : "");
        proc->rank = atoi(fields[3]);
        proc->size = atoi(fields[4]);
        proc->local_rank = atoi(fields[5]);
        snprintf(proc->launcher, sizeof proc->launcher, "%s", strcmp(fields[6], "-") ? fields[6] : "");
      }
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
        st = lm_collect_sql_error(db, diag);
        break;
      }
      sqlite3_reset(rec);
      (*n_dispatches)++;
      note_gpu(proc, atoi(fields[6]));
    } else if (strcmp(tag, "C") == 0 && nf >= 5) {
      sqlite3_bind_int64(clk, 1, wid);
      sqlite3_bind_int(clk, 2, run);
      sqlite3_bind_int(clk, 3, atoi(fields[1]));
      sqlite3_bind_double(clk, 4, strtod(fields[2], NULL));
      sqlite3_bind_double(clk, 5, strtod(fields[3], NULL));
      sqlite3_bind_double(clk, 6, strtod(fields[4], NULL));
      if (sqlite3_step(clk) != SQLITE_DONE) st = lm_collect_sql_error(db, diag);
      sqlite3_reset(clk);
    } else if (strcmp(tag, "T") == 0 && nf >= 3) {
      /* T <sampler> <note>: the clock sampler of the run ("none": the
       * clocks will be estimated from GRBM_GUI_ACTIVE). */
      sqlite3_stmt *t = NULL;
      if (sqlite3_prepare_v2(db, "INSERT OR REPLACE INTO profile_telemetry(workload_id, run_id, sampler, note) "
                                 "VALUES (?,?,?,?)", -1, &t, NULL) != SQLITE_OK) {
        st = lm_collect_sql_error(db, diag);
      } else {
        sqlite3_bind_int64(t, 1, wid);
        sqlite3_bind_int(t, 2, run);
        sqlite3_bind_text(t, 3, fields[1], -1, SQLITE_TRANSIENT);
        sqlite3_bind_text(t, 4, fields[2], -1, SQLITE_TRANSIENT);
        if (sqlite3_step(t) != SQLITE_DONE) st = lm_collect_sql_error(db, diag);
      }
      sqlite3_finalize(t);
    } else if (strcmp(tag, "S") == 0 && nf >= 3) {
      /* S <key> <value>: the device's system information, as the tool
       * library read it (the CUPTI adapter). */
      if (!sys && sqlite3_prepare_v2(db, "INSERT OR REPLACE INTO profile_sysinfo(workload_id, run_id, pid, "
                                         "position, key, value) VALUES (?,?,?,?,?,?)", -1, &sys, NULL) != SQLITE_OK) {
        st = lm_collect_sql_error(db, diag);
        break;
      }
      sqlite3_bind_int64(sys, 1, wid);
      sqlite3_bind_int(sys, 2, run);
      sqlite3_bind_int64(sys, 3, pid);
      sqlite3_bind_int(sys, 4, n_sys++);
      sqlite3_bind_text(sys, 5, fields[1], -1, SQLITE_TRANSIENT);
      sqlite3_bind_text(sys, 6, fields[2], -1, SQLITE_TRANSIENT);
      if (sqlite3_step(sys) != SQLITE_DONE) st = lm_collect_sql_error(db, diag);
      sqlite3_reset(sys);
    } else if (strcmp(tag, "G") == 0 && nf >= 3) {
      sqlite3_bind_int64(reg, 1, wid);
      sqlite3_bind_int(reg, 2, run);
      sqlite3_bind_int(reg, 3, atoi(fields[1]));
      sqlite3_bind_text(reg, 4, fields[2], -1, SQLITE_TRANSIENT);
      if (sqlite3_step(reg) != SQLITE_DONE) st = lm_collect_sql_error(db, diag);
      sqlite3_reset(reg);
    }
    if (st != LM_OK) break;
  }
  free(line);
  for (size_t k = 0; k < n_kernels; k++) free(kernels[k]);
  free(kernels);
  proc->finished = finished && !why[0];
  if (!finished && !why[0])
    snprintf(why, why_cap, "its records end before the tool library finished them (the process "
                           "crashed or was killed)");
done:
  sqlite3_finalize(rec);
  sqlite3_finalize(val);
  sqlite3_finalize(clk);
  sqlite3_finalize(reg);
  sqlite3_finalize(sys);
  fclose(f);
  return st;
}

static int cmp_proc(const void *x, const void *y) {
  const proc_info *a = x, *b = y;
  if (a->min_gpu != b->min_gpu) return a->min_gpu < b->min_gpu ? -1 : 1;
  return (a->pid > b->pid) - (a->pid < b->pid);
}

/* is_records_of: name is BASE.PID or BASE.PID-K. */
static int is_records_of(const char *name, const char *base) {
  size_t n = strlen(base);
  if (strncmp(name, base, n) != 0 || name[n] != '.') return 0;
  const char *p = name + n + 1, *digits = p;
  while (*p >= '0' && *p <= '9') p++;
  if (p == digits) return 0;
  if (*p == '-') {
    const char *k = ++p;
    while (*p >= '0' && *p <= '9') p++;
    if (p == k) return 0;
  }
  return *p == '\0';
}

int lm_collect_records_files(const char *prefix, char ***out) {
  *out = NULL;
  char dir[4096];
  snprintf(dir, sizeof dir, "%s", prefix);
  char *slash = strrchr(dir, '/');
  const char *base = slash ? slash + 1 : dir;
  if (slash) *slash = '\0';
  DIR *d = opendir(slash ? (dir[0] ? dir : "/") : ".");
  if (!d) return 0;
  char **list = NULL;
  int n = 0;
  struct dirent *e;
  while ((e = readdir(d)) != NULL) {
    if (!is_records_of(e->d_name, base)) continue;
    char **grown = realloc(list, (size_t)(n + 2) * sizeof *grown);
    if (!grown) break;
    list = grown;
    size_t len = strlen(prefix) + strlen(e->d_name) + 2;
    if (!(list[n] = malloc(len))) break;
    snprintf(list[n], len, "%s%s%s", slash ? dir : "", slash ? "/" : "", e->d_name);
    list[++n] = NULL;
  }
  closedir(d);
  *out = list;
  return n;
}

void lm_collect_records_files_free(char **list) {
  for (char **p = list; p && *p; p++) free(*p);
  free(list);
}

lm_status lm_collect_ingest(sqlite3 *db, int64_t wid, const lm_run_spec *spec, const char *prefix,
                            long *n_dispatches, int *tool_ok, char *why, size_t why_cap, lm_diag *diag) {
  *tool_ok = 0;
  *n_dispatches = 0;
  why[0] = '\0';
  char **files = NULL;
  int n_files = lm_collect_records_files(prefix, &files);
  if (n_files == 0) {
    lm_collect_records_files_free(files);
    snprintf(why, why_cap, "the tool library wrote no records (was it loaded? a setuid "
                           "program ignores LD_PRELOAD)");
    return LM_OK;
  }
  proc_info *procs = calloc((size_t)n_files, sizeof *procs);
  if (!procs) {
    lm_collect_records_files_free(files);
    return lm_diag_set(diag, LM_ENOMEM, NULL, 0, 0, NULL, "out of memory");
  }
  lm_status st = LM_OK;
  for (int i = 0; st == LM_OK && i < n_files; i++) st = ingest_file(db, wid, spec, files[i], &procs[i], diag);
  lm_collect_records_files_free(files);
  /* Slots: which process of the application each one is, so that the
   * same process of every run lines up: its MPI rank when every process
   * that dispatched has one, else its place in the order of the lowest
   * GPU it used (then pid). */
  qsort(procs, (size_t)n_files, sizeof *procs, cmp_proc);
  int all_ranked = 1, n_dispatching = 0, n_failed = 0;
  for (int i = 0; i < n_files; i++)
    if (procs[i].n_dispatches > 0) {
      n_dispatching++;
      all_ranked &= procs[i].rank >= 0;
    }
  sqlite3_stmt *s = NULL;
  if (st == LM_OK &&
      sqlite3_prepare_v2(db, "INSERT OR REPLACE INTO profile_process(workload_id, run_id, pid, slot, host, "
                             "rank, size, local_rank, launcher, gpus, n_dispatches, finished, error) "
                             "VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)", -1, &s, NULL) != SQLITE_OK)
    st = lm_collect_sql_error(db, diag);
  size_t at = 0;
  for (int i = 0, ordinal = 0; st == LM_OK && i < n_files; i++) {
    const proc_info *p = &procs[i];
    int slot = p->n_dispatches == 0 ? -1 : all_ranked ? p->rank : ordinal++;
    *n_dispatches += p->n_dispatches;
    sqlite3_bind_int64(s, 1, wid);
    sqlite3_bind_int(s, 2, spec->id);
    sqlite3_bind_int64(s, 3, p->pid);
    sqlite3_bind_int(s, 4, slot);
    sqlite3_bind_text(s, 5, p->host, -1, SQLITE_STATIC);
    for (int k = 0; k < 3; k++) {
      int v = k == 0 ? p->rank : k == 1 ? p->size : p->local_rank;
      if (v >= 0) sqlite3_bind_int(s, 6 + k, v);
      else sqlite3_bind_null(s, 6 + k);
    }
    if (p->launcher[0]) sqlite3_bind_text(s, 9, p->launcher, -1, SQLITE_STATIC);
    else sqlite3_bind_null(s, 9);
    sqlite3_bind_text(s, 10, p->gpus, -1, SQLITE_STATIC);
    sqlite3_bind_int64(s, 11, p->n_dispatches);
    sqlite3_bind_int(s, 12, p->finished);
    if (p->why[0]) sqlite3_bind_text(s, 13, p->why, -1, SQLITE_STATIC);
    else sqlite3_bind_null(s, 13);
    if (sqlite3_step(s) != SQLITE_DONE) st = lm_collect_sql_error(db, diag);
    sqlite3_reset(s);
    /* A process that never reached a GPU runtime (a shell, a launcher)
     * and reported nothing lost nothing, however it ended. */
    if (p->finished || (!p->attached && p->n_dispatches == 0 && !p->error)) continue;
    /* The failed processes, by pid and rank when there are several. */
    n_failed++;
    if (at + 64 >= why_cap) continue;
    if (n_files == 1) {
      at += (size_t)snprintf(why + at, why_cap - at, "%s", p->why);
    } else {
      char rank[48] = "";
      if (p->rank >= 0) snprintf(rank, sizeof rank, ", rank %d", p->rank);
      at += (size_t)snprintf(why + at, why_cap - at, "%sprocess %ld (%s%s%s, %ld dispatches): %s",
                             at ? "; " : "", p->pid, p->host[0] ? "on " : "", p->host, rank,
                             p->n_dispatches, p->why);
    }
    if (at >= why_cap) at = why_cap - 1;
  }
  sqlite3_finalize(s);
  (void)n_dispatching;
  *tool_ok = st == LM_OK && n_failed == 0;
  free(procs);
  return st;
}

const char *lm_collect_mode_name(int mode) {
  return mode == LM_REPLAY_APP ? "app" : mode == LM_REPLAY_INSTANCE ? "instance" : "assigned";
}

/* A message for the user and for the workload's log table (written in
 * its own statement: a profile that stops later keeps it). */
#if defined(__GNUC__)
__attribute__((format(printf, 4, 5)))
#endif
void lm_collect_note(sqlite3 *db, int64_t wid, lm_log_level level, const char *fmt, ...) {
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

/* Whether a run of this kind already finished well. */
int lm_collect_run_done(sqlite3 *db, int64_t wid, const char *mode, int pass) {
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

int lm_collect_next_run_id(sqlite3 *db, int64_t wid) {
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

lm_status lm_collect_store_options(sqlite3 *db, int64_t wid, const lm_profile_opts *o, lm_diag *diag) {
  lm_status st = LM_OK;
  char num[32];
  st = lm_collect_put_option(db, wid, "name", 0, o->name, diag);
  for (int i = 0; st == LM_OK && i < o->argc; i++) st = lm_collect_put_option(db, wid, "argv", i, o->argv[i], diag);
  for (size_t i = 0; st == LM_OK && i < o->n_items; i++) st = lm_collect_put_option(db, wid, "block", (int)i, o->items[i], diag);
  for (size_t i = 0; st == LM_OK && i < o->n_kernels; i++)
    st = lm_collect_put_option(db, wid, "kernel", (int)i, o->kernels[i], diag);
  for (size_t i = 0; st == LM_OK && i < o->n_regions; i++)
    st = lm_collect_put_option(db, wid, "region", (int)i, o->regions[i], diag);
  if (st == LM_OK && o->instance) st = lm_collect_put_option(db, wid, "instance", 0, o->instance, diag);
  if (st == LM_OK && o->dispatch) st = lm_collect_put_option(db, wid, "dispatch", 0, o->dispatch, diag);
  if (st == LM_OK && o->gpu) st = lm_collect_put_option(db, wid, "gpu", 0, o->gpu, diag);
  snprintf(num, sizeof num, "%d", o->replay < 0 ? LM_REPLAY_APP : o->replay);
  if (st == LM_OK) st = lm_collect_put_option(db, wid, "replay", 0, num, diag);
  snprintf(num, sizeof num, "%d", o->key_grid);
  if (st == LM_OK) st = lm_collect_put_option(db, wid, "key_grid", 0, num, diag);
  snprintf(num, sizeof num, "%.17g", o->timeout > 0 ? o->timeout : 0);
  if (st == LM_OK) st = lm_collect_put_option(db, wid, "timeout", 0, num, diag);
  return st;
}

/* The workload id of the one workload in a lumen workload database. */
lm_status lm_collect_only_workload(sqlite3 *db, const char *path, int64_t *wid, int *complete, lm_diag *diag) {
  sqlite3_stmt *s = NULL;
  if (sqlite3_prepare_v2(db, "SELECT id, complete FROM workload ORDER BY id LIMIT 1", -1, &s, NULL) != SQLITE_OK)
    return lm_collect_sql_error(db, diag);
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


/* ------------------------------------------------------------- runs */

lm_status lm_collect_run_begin(sqlite3 *db, int64_t wid, const lm_run_spec *spec, lm_diag *diag) {
  char started[64];
  lm_collect_now_text(started, sizeof started);
  sqlite3_stmt *s = NULL;
  if (sqlite3_prepare_v2(db, "INSERT OR REPLACE INTO profile_run(workload_id, id, mode, pass, "
                             "started, status) VALUES (?,?,?,?,?, 'running')",
                         -1, &s, NULL) != SQLITE_OK)
    return lm_collect_sql_error(db, diag);
  sqlite3_bind_int64(s, 1, wid);
  sqlite3_bind_int(s, 2, spec->id);
  sqlite3_bind_text(s, 3, lm_collect_mode_name(spec->mode), -1, SQLITE_STATIC);
  if (spec->mode == LM_REPLAY_APP) sqlite3_bind_int(s, 4, spec->pass);
  else sqlite3_bind_null(s, 4);
  sqlite3_bind_text(s, 5, started, -1, SQLITE_STATIC);
  lm_status st = sqlite3_step(s) == SQLITE_DONE ? LM_OK : lm_collect_sql_error(db, diag);
  sqlite3_finalize(s);
  return st;
}

void lm_collect_run_forget(sqlite3 *db, int64_t wid, int run) {
  sqlite3_stmt *s = NULL;
  if (sqlite3_prepare_v2(db, "DELETE FROM profile_run WHERE workload_id = ? AND id = ?", -1, &s,
                         NULL) != SQLITE_OK)
    return;
  sqlite3_bind_int64(s, 1, wid);
  sqlite3_bind_int(s, 2, run);
  sqlite3_step(s);
  sqlite3_finalize(s);
}

lm_status lm_collect_run_end(sqlite3 *db, int64_t wid, const lm_run_spec *spec, const char *records,
                             const char *status, const lm_run_outcome *how, long *n_dispatches,
                             int *tool_ok, char *why, size_t why_cap, lm_diag *diag) {
  lm_status st = lm_collect_exec_sql(db, "BEGIN IMMEDIATE", diag);
  if (st != LM_OK) return st;
  st = lm_collect_ingest(db, wid, spec, records, n_dispatches, tool_ok, why, why_cap, diag);
  if (st != LM_OK) {
    lm_collect_exec_sql(db, "ROLLBACK", NULL);
    return st;
  }
  /* A run that ended well but whose tool did not finish its records failed. */
  if (strcmp(status, "ok") == 0 && !*tool_ok) status = "failed";
  char finished[64];
  lm_collect_now_text(finished, sizeof finished);
  sqlite3_stmt *s = NULL;
  if (sqlite3_prepare_v2(db, "UPDATE profile_run SET finished = ?, status = ?, exit_code = ?, "
                             "signal = ?, n_dispatches = ? WHERE workload_id = ? AND id = ?",
                         -1, &s, NULL) != SQLITE_OK) {
    st = lm_collect_sql_error(db, diag);
    lm_collect_exec_sql(db, "ROLLBACK", NULL);
    return st;
  }
  sqlite3_bind_text(s, 1, finished, -1, SQLITE_STATIC);
  sqlite3_bind_text(s, 2, status, -1, SQLITE_STATIC);
  if (how->exit_code >= 0) sqlite3_bind_int(s, 3, how->exit_code);
  else sqlite3_bind_null(s, 3);
  if (how->sig) sqlite3_bind_int(s, 4, how->sig);
  else sqlite3_bind_null(s, 4);
  sqlite3_bind_int64(s, 5, *n_dispatches);
  sqlite3_bind_int64(s, 6, wid);
  sqlite3_bind_int(s, 7, spec->id);
  st = sqlite3_step(s) == SQLITE_DONE ? LM_OK : lm_collect_sql_error(db, diag);
  sqlite3_finalize(s);
  if (st == LM_OK) st = lm_collect_exec_sql(db, "COMMIT", diag);
  else lm_collect_exec_sql(db, "ROLLBACK", NULL);
  return st;
}

/* Whether name is run_<digits>.config or a records file of such a run
 * (run_<digits>.records.<pid>[-k]). */
static int is_run_file(const char *name) {
  if (strncmp(name, "run_", 4) != 0) return 0;
  const char *p = name + 4, *digits = p;
  while (*p >= '0' && *p <= '9') p++;
  if (p == digits) return 0;
  if (strcmp(p, ".config") == 0) return 1;
  char base[64];
  snprintf(base, sizeof base, "%.*s.records", (int)(p - name), name);
  return is_records_of(name, base);
}

lm_status lm_collect_recover(sqlite3 *db, int64_t wid, const char *dir, int *n_recovered,
                             lm_diag *diag) {
  *n_recovered = 0;
  char finished[64];
  lm_collect_now_text(finished, sizeof finished);
  sqlite3_stmt *s = NULL;
  if (sqlite3_prepare_v2(db, "UPDATE profile_run SET status = 'interrupted', finished = ? WHERE "
                             "workload_id = ? AND status = 'running'",
                         -1, &s, NULL) != SQLITE_OK)
    return lm_collect_sql_error(db, diag);
  sqlite3_bind_text(s, 1, finished, -1, SQLITE_STATIC);
  sqlite3_bind_int64(s, 2, wid);
  lm_status st = sqlite3_step(s) == SQLITE_DONE ? LM_OK : lm_collect_sql_error(db, diag);
  sqlite3_finalize(s);
  if (st != LM_OK) return st;
  *n_recovered = sqlite3_changes(db);
  /* No run is active (the caller holds the folder's lock): every run file
   * left in the folder belongs to a run that did not end. */
  DIR *d = opendir(dir);
  if (!d) return LM_OK;
  struct dirent *e;
  char path[4096];
  while ((e = readdir(d)) != NULL) {
    if (!is_run_file(e->d_name)) continue;
    snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
    unlink(path);
  }
  closedir(d);
  return LM_OK;
}
