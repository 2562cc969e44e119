/*
 * record.c - what `lumen profile` keeps in the workload's database while
 * it runs: the options (so --resume repeats them), the plan's counter
 * sets, the runs, their dispatch records, values, regions and clock
 * samples (read from the records file the tool library writes), and the
 * log. Every run is committed before the next starts. The SQL is the io
 * module's (io/profile_db.c): this file decides what is written.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>
#include <stdarg.h>
#include <dirent.h>
#include <time.h>
#include <unistd.h>

#include "collect/collect.h"
#include "sql/sql.h"
#include "db/db.h"

/* ----------------------------------------------------------- utilities */

void lm_collect_now_text(char *out, size_t cap) {
  time_t now = time(NULL);
  strftime(out, cap, "%Y-%m-%dT%H:%M:%SZ", gmtime(&now));
}

/* ------------------------------------------------------------- options */

lm_status lm_collect_put_option(lm_sql *db, int64_t wid, const char *key, int pos, const char *value,
                            lm_diag *diag) {
  return lm_db_put_option(db, wid, key, pos, value, diag);
}

void lm_collect_stored_fini(lm_stored_opts *s) {
  for (int i = 0; i < s->argc; i++) lm_free(s->argv[i]);
  lm_free(s->argv);
  for (size_t i = 0; i < s->n_items; i++) lm_free(s->items[i]);
  for (size_t i = 0; i < s->n_kernels; i++) lm_free(s->kernels[i]);
  for (size_t i = 0; i < s->n_regions; i++) lm_free(s->regions[i]);
  lm_free(s->items);
  lm_free(s->kernels);
  lm_free(s->regions);
  lm_free(s->instance);
  lm_free(s->dispatch);
  lm_free(s->gpu);
  lm_free(s->name);
}

/* The options being read back; failed when memory ran out. */
typedef struct option_reader {
  lm_stored_opts *out;
  int failed;
} option_reader;

/* add_text: a copy of v at the end of *list (*n of them); 0 when out of
 * memory. The list stays NULL-terminated. */
static int add_text(char ***list, size_t *n, const char *v) {
  char **grown = lm_realloc(*list, (*n + 2) * sizeof *grown);
  if (!grown) return 0;
  *list = grown;
  grown[*n] = lm_strdup(v);
  if (!grown[*n]) return 0;
  grown[++(*n)] = NULL;
  return 1;
}

/* set_text: *field becomes a copy of v; 0 when out of memory. */
static int set_text(char **field, const char *v) {
  char *copy = lm_strdup(v);
  if (!copy) return 0;
  lm_free(*field);
  *field = copy;
  return 1;
}

/* One stored option into the options read; stops (non-zero) when memory
 * runs out. */
static int take_option(const char *k, const char *v, void *user) {
  option_reader *r = user;
  lm_stored_opts *out = r->out;
  char ***list = NULL;
  size_t *n = NULL;
  int ok = 1;
  if (strcmp(k, "argv") == 0) {
    size_t argc = (size_t)out->argc;
    ok = add_text(&out->argv, &argc, v);
    out->argc = (int)argc;
  } else if (strcmp(k, "block") == 0) list = &out->items, n = &out->n_items;
  else if (strcmp(k, "kernel") == 0) list = &out->kernels, n = &out->n_kernels;
  else if (strcmp(k, "region") == 0) list = &out->regions, n = &out->n_regions;
  else if (strcmp(k, "instance") == 0) ok = set_text(&out->instance, v);
  else if (strcmp(k, "dispatch") == 0) ok = set_text(&out->dispatch, v);
  else if (strcmp(k, "gpu") == 0) ok = set_text(&out->gpu, v);
  else if (strcmp(k, "name") == 0) ok = set_text(&out->name, v);
  else if (strcmp(k, "replay") == 0) out->replay = atoi(v);
  else if (strcmp(k, "key_grid") == 0) out->key_grid = atoi(v);
  else if (strcmp(k, "timeout") == 0) out->timeout = strtod(v, NULL);
  if (list) ok = add_text(list, n, v);
  r->failed = !ok;
  return !ok;
}

lm_status lm_collect_read_options(lm_sql *db, int64_t wid, lm_stored_opts *out, lm_diag *diag) {
  memset(out, 0, sizeof *out);
  option_reader r = {out, 0};
  lm_status st = lm_db_each_option(db, wid, take_option, &r, diag);
  if (st == LM_OK && r.failed) st = lm_oom(diag, NULL);
  return st;
}

lm_status lm_collect_store_plan(lm_sql *db, int64_t wid, const lm_plan *plan, lm_diag *diag) {
  lm_db_plan_row *rows = lm_calloc((size_t)plan->n_counters + 1, sizeof *rows);
  if (!rows) return lm_oom(diag, NULL);
  for (int32_t i = 0; i < plan->n_counters; i++) {
    const lm_plan_counter *c = &plan->counters[i];
    const lm_plan_set *ps = &plan->sets[c->set];
    rows[i] = (lm_db_plan_row){c->set, i - ps->first, c->name, c->block, ps->accumulate, c->why};
  }
  lm_status st = lm_db_put_plan(db, wid, rows, (size_t)plan->n_counters, diag);
  lm_free(rows);
  return st;
}

void lm_collect_sets_fini(lm_set_info *sets, int n) {
  for (int i = 0; sets && i < n; i++) {
    for (char **c = sets[i].counters; c && *c; c++) lm_free(*c);
    lm_free(sets[i].counters);
    lm_free(sets[i].accumulate);
  }
  lm_free(sets);
}

/* The plan being read back: sets grow as their ids appear. */
typedef struct plan_reader {
  lm_set_info *sets;
  size_t *counts;
  int n;
} plan_reader;

static lm_status take_counter(int id, const char *counter, const char *accumulate, void *user, lm_diag *diag) {
  plan_reader *p = user;
  if (id < 0 || id > 4096) return LM_OK;
  if (id >= p->n) {
    lm_set_info *grown = lm_realloc(p->sets, (size_t)(id + 1) * sizeof *grown);
    if (grown) p->sets = grown;
    size_t *gc = lm_realloc(p->counts, (size_t)(id + 1) * sizeof *gc);
    if (gc) p->counts = gc;
    if (!grown || !gc) return lm_oom(diag, NULL);
    for (int k = p->n; k <= id; k++) {
      memset(&p->sets[k], 0, sizeof p->sets[k]);
      p->counts[k] = 0;
    }
    p->n = id + 1;
  }
  lm_set_info *set = &p->sets[id];
  if (!add_text(&set->counters, &p->counts[id], counter) ||
      (accumulate && !set->accumulate && !(set->accumulate = lm_strdup(accumulate))))
    return lm_oom(diag, NULL);
  return LM_OK;
}

lm_status lm_collect_load_plan(lm_sql *db, int64_t wid, lm_set_info **out, int *n_out, lm_diag *diag) {
  *out = NULL;
  *n_out = 0;
  plan_reader p = {NULL, NULL, 0};
  lm_status st = lm_db_each_plan_counter(db, wid, take_counter, &p, diag);
  lm_free(p.counts);
  if (st != LM_OK) {
    lm_collect_sets_fini(p.sets, p.n);
    return st;
  }
  *out = p.sets;
  *n_out = p.n;
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
  int unfinalized;  /* the runtime never finalized the tool: it closed its records at unload */
  long bad_clocks, bad_clock_line; /* clock samples without a time, the first's line */
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

/* reading: a sampler's number, NaN for "-" or anything that is not a
 * finite number (a blank reading is never taken as 0). */
static double reading(const char *text) {
  char *end = NULL;
  double v = strtod(text, &end);
  return end != text && *end == '\0' && isfinite(v) ? v : LM_NAN;
}

/* One records file being read (ingest_file). */
typedef struct ingest {
  lm_db_records *out;
  const lm_run_spec *spec;
  proc_info *proc;
  char **kernels;   /* kernel ids of this run -> names */
  size_t n_kernels;
  long pid;         /* the process (its P line), 0 before it */
  int finished;     /* an END line was read */
  long line_no;
} ingest;

/* ingest_values: V <dispatch> <column>=<value>...: any number of values
 * (line is changed while it is read). */
static lm_status ingest_values(ingest *in, char *line, lm_diag *diag) {
  char *p = line + 2;
  int64_t did = (int64_t)strtoull(p, &p, 10);
  while (p && *p == '\t') {
    char *item = p + 1;
    char *next = strchr(item, '\t');
    if (next) *next = '\0';
    char *eq = strrchr(item, '=');
    if (eq) {
      *eq = '\0';
      lm_status st = lm_db_records_value(in->out, did, in->pid, item, strtod(eq + 1, NULL), diag);
      if (st != LM_OK) return st;
    }
    if (!next) break;
    *next = '\t';
    p = next;
  }
  return LM_OK;
}

/* ingest_kernel: K <id> <name>: the name of a kernel id (ids from a
 * million on are passed over). */
static lm_status ingest_kernel(ingest *in, char **fields, lm_diag *diag) {
  size_t id = (size_t)strtoull(fields[1], NULL, 10);
  if (id >= 1000000) return LM_OK;
  if (id >= in->n_kernels) {
    char **grown = lm_realloc(in->kernels, (id + 1) * sizeof *grown);
    if (!grown) return lm_oom(diag, NULL);
    for (size_t k = in->n_kernels; k <= id; k++) grown[k] = NULL;
    in->kernels = grown;
    in->n_kernels = id + 1;
  }
  char *name = lm_strdup(fields[2]);
  if (!name) return lm_oom(diag, NULL);
  lm_free(in->kernels[id]);
  in->kernels[id] = name;
  return LM_OK;
}

/* ingest_dispatch: D dispatch kernel instance selected set gpu tid grid
 * workgroup lds scratch arch_vgpr accum_vgpr sgpr start end regions key
 * (19 fields). */
static lm_status ingest_dispatch(ingest *in, char **fields, lm_diag *diag) {
  size_t kid = (size_t)strtoull(fields[2], NULL, 10);
  const char *kname = kid < in->n_kernels && in->kernels[kid] ? in->kernels[kid] : "?";
  lm_db_record d;
  d.dispatch_id = (int64_t)strtoull(fields[1], NULL, 10);
  d.kernel = kname;
  d.instance = strtoll(fields[3], NULL, 10);
  d.selected = strtoll(fields[4], NULL, 10);
  d.set = atoi(fields[5]);
  d.gpu = atoi(fields[6]);
  d.pid = in->pid;
  d.tid = strtoll(fields[7], NULL, 10);
  int64_t *sizes[7] = {&d.grid, &d.workgroup, &d.lds, &d.scratch, &d.arch_vgpr, &d.accum_vgpr, &d.sgpr};
  for (int k = 0; k < 7; k++) *sizes[k] = strtoll(fields[8 + k], NULL, 10);
  d.start_ns = strtod(fields[15], NULL);
  d.end_ns = strtod(fields[16], NULL);
  d.regions = strcmp(fields[17], "-") ? fields[17] : "";
  d.cycle_key = fields[18];
  d.row_group = row_group(in->spec, fields[18], d.selected, d.set);
  lm_status st = lm_db_records_dispatch(in->out, &d, diag);
  if (st != LM_OK) return st;
  in->proc->n_dispatches++;
  note_gpu(in->proc, atoi(fields[6]));
  return LM_OK;
}

/* ingest_clock: C gpu t_ns sclk mclk [power_w temp_c]: "-" is a reading
 * the sampler does not give. */
static lm_status ingest_clock(ingest *in, char **fields, int nf, lm_diag *diag) {
  double t_ns = reading(fields[2]);
  if (isnan(t_ns)) {
    /* a sample without a time belongs to no dispatch: left out */
    if (!in->proc->bad_clocks++) in->proc->bad_clock_line = in->line_no;
    return LM_OK;
  }
  lm_status st = lm_db_records_clock(in->out, atoi(fields[1]), t_ns, reading(fields[3]), reading(fields[4]), diag);
  if (st == LM_OK && nf >= 7) {
    double power = reading(fields[5]), temp = reading(fields[6]);
    if (!isnan(power) || !isnan(temp)) st = lm_db_records_power(in->out, atoi(fields[1]), t_ns, power, temp, diag);
  }
  return st;
}

/* ingest_line: one line of nf tab-separated fields other than V; lines
 * with too few fields, or an unknown tag, are passed over. */
static lm_status ingest_line(ingest *in, char **fields, int nf, lm_diag *diag) {
  proc_info *proc = in->proc;
  const char *tag = fields[0];
  if (strcmp(tag, "END") == 0) {
    in->finished = 1;
    proc->unfinalized = nf >= 2 && strcmp(fields[1], "unfinalized") == 0;
  } else if (strcmp(tag, "E") == 0 && nf >= 2) {
    if (!proc->why[0]) snprintf(proc->why, sizeof proc->why, "%s", fields[1]);
    proc->error = 1;
  } else if (strcmp(tag, "A") == 0) {
    proc->attached = 1;
  } else if (strcmp(tag, "P") == 0 && nf >= 2) {
    /* P pid host rank size local_rank launcher */
    in->pid = atol(fields[1]);
    proc->pid = in->pid;
    if (nf >= 7) {
      snprintf(proc->host, sizeof proc->host, "%s", strcmp(fields[2], "-") ? fields[2] : "");
      proc->rank = atoi(fields[3]);
      proc->size = atoi(fields[4]);
      proc->local_rank = atoi(fields[5]);
      snprintf(proc->launcher, sizeof proc->launcher, "%s", strcmp(fields[6], "-") ? fields[6] : "");
    }
  } else if (strcmp(tag, "K") == 0 && nf >= 3) {
    return ingest_kernel(in, fields, diag);
  } else if (strcmp(tag, "D") == 0 && nf >= 19) {
    return ingest_dispatch(in, fields, diag);
  } else if (strcmp(tag, "C") == 0 && nf >= 5) {
    return ingest_clock(in, fields, nf, diag);
  } else if (strcmp(tag, "T") == 0 && nf >= 3) {
    /* T <sampler> <note>: the clock sampler of the run ("none": the
     * clocks will be estimated from GRBM_GUI_ACTIVE). */
    return lm_db_records_telemetry(in->out, fields[1], fields[2], diag);
  } else if (strcmp(tag, "S") == 0 && nf >= 3) {
    /* S <key> <value>: the device's system information, as the tool
     * library read it (the CUPTI adapter). */
    return lm_db_records_sysinfo(in->out, in->pid, fields[1], fields[2], diag);
  } else if (strcmp(tag, "G") == 0 && nf >= 3) {
    return lm_db_records_region(in->out, atoi(fields[1]), fields[2], diag);
  }
  return LM_OK;
}

/* ingest_file: one process's records file into the database under run
 * spec->id; its facts into *proc. A file that cannot be read is not an
 * error: proc->why says why. */
static lm_status ingest_file(lm_sql *db, int64_t wid, const lm_run_spec *spec, const char *path,
                             proc_info *proc, lm_diag *diag) {
  memset(proc, 0, sizeof *proc);
  proc->rank = proc->size = proc->local_rank = -1;
  proc->min_gpu = INT_MAX;
  char *why = proc->why;
  size_t why_cap = sizeof proc->why;
  /* (opened without blocking and checked to be a regular file: a FIFO or
   * a folder put in its place would hang or fail the read) */
  int fd = -1;
  lm_diag open_why;
  lm_diag_clear(&open_why);
  FILE *f = NULL;
  if (lm_open_read(path, 0, &fd, NULL, &open_why) == LM_OK) {
    f = fdopen(fd, "r");
    if (!f) close(fd);
  }
  if (!f) {
    /* Not a silent "reported nothing": the run's records are not all
     * there, and the error names the file. */
    proc->error = 1;
    const char *name = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
    proc->pid = strtol(strrchr(name, '.') ? strrchr(name, '.') + 1 : name, NULL, 10); /* (BASE.PID[-K]) */
    snprintf(why, why_cap, "cannot read its records file %.120s: %.200s", name,
             open_why.message[0] ? open_why.message : strerror(errno));
    return LM_OK;
  }
  ingest in;
  memset(&in, 0, sizeof in);
  in.spec = spec;
  in.proc = proc;
  lm_status st = lm_db_records_open(db, wid, spec->id, &in.out, diag);
  if (st != LM_OK) goto done;
  char *line = NULL;
  size_t cap = 0;
  ssize_t len;
  while (st == LM_OK && (len = getline(&line, &cap, f)) > 0) {
    in.line_no++;
    if (line[len - 1] != '\n') break; /* a truncated last line */
    line[--len] = '\0';
    if (line[0] == 'V' && line[1] == '\t') {
      st = ingest_values(&in, line, diag);
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
    st = ingest_line(&in, fields, nf, diag);
  }
  free(line);
  proc->finished = in.finished && !why[0];
  if (!in.finished && !why[0])
    snprintf(why, why_cap, "its records end before the tool library finished them (the process "
                           "crashed or was killed)");
done:
  for (size_t k = 0; k < in.n_kernels; k++) lm_free(in.kernels[k]);
  lm_free(in.kernels);
  lm_db_records_close(in.out);
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
    char **grown = lm_realloc(list, (size_t)(n + 2) * sizeof *grown);
    if (grown) list = grown;
    size_t len = strlen(prefix) + strlen(e->d_name) + 2;
    if (!grown || !(list[n] = lm_malloc(len))) {
      n = -1;
      break;
    }
    snprintf(list[n], len, "%s%s%s", slash ? dir : "", slash ? "/" : "", e->d_name);
    list[++n] = NULL;
  }
  closedir(d);
  if (n < 0) {
    lm_collect_records_files_free(list);
    return -1;
  }
  *out = list;
  return n;
}

void lm_collect_records_files_free(char **list) {
  for (char **p = list; p && *p; p++) lm_free(*p);
  lm_free(list);
}

lm_status lm_collect_ingest(lm_sql *db, int64_t wid, const lm_run_spec *spec, const char *prefix,
                            long *n_dispatches, int *tool_ok, char *why, size_t why_cap, lm_diag *diag) {
  *tool_ok = 0;
  *n_dispatches = 0;
  why[0] = '\0';
  char **files = NULL;
  int n_files = lm_collect_records_files(prefix, &files);
  if (n_files < 0) return lm_oom(diag, NULL);
  if (n_files == 0) {
    lm_collect_records_files_free(files);
    snprintf(why, why_cap, "the tool library wrote no records (was it loaded? a setuid "
                           "program ignores LD_PRELOAD)");
    return LM_OK;
  }
  proc_info *procs = lm_calloc((size_t)n_files, sizeof *procs);
  if (!procs) {
    lm_collect_records_files_free(files);
    return lm_oom(diag, NULL);
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
  size_t at = 0;
  for (int i = 0, ordinal = 0; st == LM_OK && i < n_files; i++) {
    const proc_info *p = &procs[i];
    int slot = p->n_dispatches == 0 ? -1 : all_ranked ? p->rank : ordinal++;
    *n_dispatches += p->n_dispatches;
    lm_db_process row = {p->pid,      slot,    p->host,         p->rank,   p->size,
                         p->local_rank, p->launcher, p->gpus, p->n_dispatches, p->finished,
                         p->why};
    st = lm_db_put_process(db, wid, spec->id, &row, diag);
    if (st == LM_OK && p->bad_clocks)
      lm_collect_note(db, wid, LM_LOG_WARN,
                      "run %d: process %ld: %ld clock sample%s without a time left out (first at line %ld of its "
                      "records)",
                      spec->id, p->pid, p->bad_clocks, p->bad_clocks == 1 ? "" : "s", p->bad_clock_line);
    if (st == LM_OK && p->unfinalized)
      lm_collect_note(db, wid, LM_LOG_WARN,
                      "run %d: the GPU runtime never finalized lumen's tool in process %ld: the tool closed "
                      "its records when it was unloaded, and dispatches still running then may be missing",
                      spec->id, p->pid);
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
      at += (size_t)snprintf(why + at, why_cap - at, "%sprocess %ld (%s%s%s%s%ld dispatches): %s",
                             at ? "; " : "", p->pid, p->host[0] ? "on " : "", p->host, rank,
                             p->host[0] || rank[0] ? ", " : "", p->n_dispatches, p->why);
    }
    if (at >= why_cap) at = why_cap - 1;
  }
  (void)n_dispatching;
  *tool_ok = st == LM_OK && n_failed == 0;
  lm_free(procs);
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
void lm_collect_note(lm_sql *db, int64_t wid, lm_log_level level, const char *fmt, ...) {
  char msg[2048];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  lm_log(level, "%s", msg);
  if (!db) return;
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  lm_db_add_log(db, wid, (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec, lm_log_level_name(level), msg, NULL);
}

/* Whether a run of this kind already finished well. */
int lm_collect_run_done(lm_sql *db, int64_t wid, const char *mode, int pass) {
  return lm_db_run_done(db, wid, mode, pass);
}

int lm_collect_next_run_id(lm_sql *db, int64_t wid) { return lm_db_next_run_id(db, wid); }

lm_status lm_collect_store_options(lm_sql *db, int64_t wid, const lm_profile_opts *o, lm_diag *diag) {
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
lm_status lm_collect_only_workload(lm_sql *db, const char *path, int64_t *wid, int *complete, lm_diag *diag) {
  return lm_db_only_workload(db, path, wid, complete, diag);
}

/* ------------------------------------------------------------- runs */

lm_status lm_collect_run_begin(lm_sql *db, int64_t wid, const lm_run_spec *spec, lm_diag *diag) {
  char started[64];
  lm_collect_now_text(started, sizeof started);
  return lm_db_run_begin(db, wid, spec->id, lm_collect_mode_name(spec->mode),
                         spec->mode == LM_REPLAY_APP ? spec->pass : -1, started, diag);
}

void lm_collect_run_forget(lm_sql *db, int64_t wid, int run) { lm_db_run_forget(db, wid, run); }

lm_status lm_collect_run_end(lm_sql *db, int64_t wid, const lm_run_spec *spec, const char *records,
                             const char *status, const lm_run_outcome *how, long *n_dispatches,
                             int *tool_ok, char *why, size_t why_cap, lm_diag *diag) {
  lm_status st = lm_db_begin(db, diag);
  if (st != LM_OK) return st;
  st = lm_collect_ingest(db, wid, spec, records, n_dispatches, tool_ok, why, why_cap, diag);
  if (st != LM_OK) {
    lm_db_rollback(db);
    return st;
  }
  /* A run that ended well but whose tool did not finish its records failed. */
  if (strcmp(status, "ok") == 0 && !*tool_ok) status = "failed";
  char finished[64];
  lm_collect_now_text(finished, sizeof finished);
  st = lm_db_run_finish(db, wid, spec->id, finished, status, how->exit_code, how->sig, *n_dispatches, diag);
  if (st == LM_OK) st = lm_db_commit(db, diag);
  else lm_db_rollback(db);
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

lm_status lm_collect_recover(lm_sql *db, int64_t wid, const char *dir, int *n_recovered,
                             lm_diag *diag) {
  *n_recovered = 0;
  char finished[64];
  lm_collect_now_text(finished, sizeof finished);
  lm_status st = lm_db_runs_interrupt(db, wid, finished, n_recovered, diag);
  if (st != LM_OK) return st;
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
