/*
 * analyze_cmd.c - `lumen analyze`: load workloads, evaluate, render.
 */
#include <errno.h>
#include <signal.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>
#include <sys/stat.h>

#include "cli/cli.h"
#include "store/store.h"
#include "load/load.h"
#include "report/report.h"

#define MODE "analyze"

typedef struct run_filters {
  const char **kernels;
  size_t n_kernels;
  long *kernel_index;
  size_t n_kernel_index;
  lm_idset dispatch, gpu, instance, rank;
} run_filters;

static void filters_fini(run_filters *f) {
  free(f->kernels);
  free(f->kernel_index);
  lm_idset_fini(&f->dispatch);
  lm_idset_fini(&f->gpu);
  lm_idset_fini(&f->instance);
  lm_idset_fini(&f->rank);
}

/* Occurrences of `name` that apply to run k of n: all of them, unless the
 * flag is given exactly once per workload (then only the k-th). */
static int applies(const cli_args *a, const char *name, size_t occurrence, size_t k, size_t n) {
  size_t count = cli_count(a, name);
  if (n > 1 && count == n) return occurrence == k;
  return 1;
}

static int parse_long(const char *text, long *out) {
  char *end;
  errno = 0;
  long v = strtol(text, &end, 10);
  if (errno || end == text || *end) return 0;
  *out = v;
  return 1;
}

static int build_filters(const cli_args *a, size_t k, size_t n, run_filters *f) {
  lm_diag diag;
  lm_diag_clear(&diag);
  memset(f, 0, sizeof *f);
  size_t nk = cli_count(a, "kernel"), ni = cli_count(a, "kernel-index");
  f->kernels = calloc(nk + 1, sizeof *f->kernels);
  f->kernel_index = calloc(ni * 16 + 1, sizeof *f->kernel_index);
  if (!f->kernels || !f->kernel_index) return 0;
  for (size_t i = 0; i < nk; i++)
    if (applies(a, "kernel", i, k, n)) f->kernels[f->n_kernels++] = cli_nth(a, "kernel", i);
  for (size_t i = 0; i < ni; i++) {
    if (!applies(a, "kernel-index", i, k, n)) continue;
    /* A comma list of indices. */
    char buf[256];
    snprintf(buf, sizeof buf, "%s", cli_nth(a, "kernel-index", i));
    for (char *tok = strtok(buf, ","); tok; tok = strtok(NULL, ",")) {
      long v;
      if (!parse_long(tok, &v) || v < 0 || f->n_kernel_index >= ni * 16) {
        cli_error(MODE, "--kernel-index '%s': expected row numbers of the top-kernels table "
                        "(0, 1, ...)", cli_nth(a, "kernel-index", i));
        return 0;
      }
      f->kernel_index[f->n_kernel_index++] = v;
    }
  }
  static const struct {
    const char *flag, *shown;
    size_t offset;
  } sets[] = {{"dispatch", "-d", offsetof(run_filters, dispatch)},
              {"gpu", "-g", offsetof(run_filters, gpu)},
              {"instance", "--instance", offsetof(run_filters, instance)},
              {"rank", "--rank", offsetof(run_filters, rank)}};
  for (size_t s = 0; s < LM_ARRAY_LEN(sets); s++) {
    lm_idset *set = (lm_idset *)(void *)((char *)f + sets[s].offset);
    for (size_t i = 0; i < cli_count(a, sets[s].flag); i++) {
      if (!applies(a, sets[s].flag, i, k, n)) continue;
      if (lm_idset_parse(set, cli_nth(a, sets[s].flag, i), sets[s].shown, &diag) != LM_OK) {
        cli_diag(MODE, &diag);
        return 0;
      }
    }
  }
  return 1;
}

/* The --rank selection of workload k (of n) for its read, so that only
 * the selected ranks' parts are loaded. Text that does not parse selects
 * nothing here (build_filters reports it). */
static void read_ranks_of(const cli_args *a, size_t k, size_t n, lm_idset *set) {
  lm_diag ignored;
  memset(set, 0, sizeof *set);
  for (size_t i = 0; i < cli_count(a, "rank"); i++) {
    if (!applies(a, "rank", i, k, n)) continue;
    if (lm_idset_parse(set, cli_nth(a, "rank", i), "--rank", &ignored) != LM_OK) {
      lm_idset_fini(set);
      memset(set, 0, sizeof *set);
      return;
    }
  }
}

/* Whether stdout is a terminal. Under `lumen analyze --mpi` it is not
 * asked: mpirun relays process 0's output through a terminal of its own
 * whatever the user's stdout is, and the result is the single process's. */
static int stdout_relayed;
static int stdout_tty(void) { return !stdout_relayed && isatty(1); }

static int is_dir(const char *path) {
  struct stat st;
  return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/* The counter columns read from lumen databases (a workload's own, the
 * rank.R parts of an MPI profile): those the built-in catalog of the
 * architecture evaluates, with the columns analysis reads by name. Every
 * column with --metrics-dir (definitions compiled later may read any) or
 * --load whole (which also reads every rank's part under --rank). */
#define MAX_CHOICES 8
typedef struct column_choice {
  const char *compat; /* --compat (NULL: the default catalog) */
  int all;
  /* the catalogs chosen so far, each with the index of its inputs */
  const lm_catalog *cats[MAX_CHOICES];
  lm_wants_index *index[MAX_CHOICES];
  size_t n;
} column_choice;

static void column_choice_fini(column_choice *c) {
  for (size_t i = 0; i < c->n; i++) lm_analyze_wants_index_free(c->index[i]);
  c->n = 0;
}

/* The formulas' inputs that analysis does not also read by name are read
 * only by the evaluator, through lm_table_fetch: an integer column of
 * them may stay encoded until a block of dispatches needs it (as in a
 * view from the store). wanted: lm_analyze_wants' answer. */
static int read_when(int wanted, const char *source, const char *name) {
  if (!wanted) return 0;
  return lm_analyze_wants(NULL, source, name) ? 1 : LM_DB_WANT_LATER;
}

/* ctx: the catalog's lm_wants_index. */
static int evaluator_wants(void *ctx, const char *source, const char *name) {
  return read_when(lm_analyze_wants_indexed(ctx, source, name), source, name);
}

/* The same, ctx the catalog (when its index could not be made). */
static int evaluator_wants_slow(void *ctx, const char *source, const char *name) {
  return read_when(lm_analyze_wants(ctx, source, name), source, name);
}

/* (called from the reading thread: the index of each catalog is made at
 * its first choice and kept until the command ends) */
static lm_db_want_fn choose_columns(void *ctx, const char *arch, const char *layout, void **want_ctx) {
  column_choice *c = ctx;
  if (c->all || !arch) return NULL;
  const char *compat = c->compat ? c->compat : layout;
  const lm_catalog *cat = compat ? lm_metrics_builtin_compat(arch, compat) : lm_metrics_builtin(arch);
  if (!cat) return NULL;
  for (size_t i = 0; i < c->n; i++)
    if (c->cats[i] == cat) {
      *want_ctx = c->index[i];
      return evaluator_wants;
    }
  lm_wants_index *ix = c->n < MAX_CHOICES ? lm_analyze_wants_index_new(cat) : NULL;
  if (!ix) {
    *want_ctx = (void *)cat;
    return evaluator_wants_slow;
  }
  c->cats[c->n] = cat;
  c->index[c->n++] = ix;
  *want_ctx = ix;
  return evaluator_wants;
}

/* The catalog for `arch` in reference version compat (NULL: the default):
 * built in, or compiled from --metrics-dir. */
static const lm_catalog *catalog_for(const char *arch, const char *metrics_dir, const char *compat,
                                     const char *sysinfo_path, lm_catalog **owned) {
  lm_diag diag;
  lm_diag_clear(&diag);
  *owned = NULL;
  if (metrics_dir) {
    char path[4096];
    snprintf(path, sizeof path, "%s/arch.yaml", metrics_dir);
    struct stat st;
    const char *dir = metrics_dir;
    char sub[4096];
    if (stat(path, &st) != 0) {
      snprintf(sub, sizeof sub, "%s/%s", metrics_dir, arch);
      if (!is_dir(sub)) {
        cli_error(MODE, "--metrics-dir %s: no arch.yaml and no %s/ folder for this workload's "
                        "architecture", metrics_dir, arch);
        return NULL;
      }
      dir = sub;
    }
    uint64_t t0 = lm_phase_begin();
    if (lm_metrics_compile_dir_compat(dir, NULL, 0, compat, owned, &diag) != LM_OK) {
      cli_diag(MODE, &diag);
      return NULL;
    }
    lm_phase_end("compile metrics", t0);
    if (strcmp((*owned)->arch, arch) != 0) {
      cli_error(MODE, "--metrics-dir %s: the definitions are for %s but the workload is %s",
                dir, (*owned)->arch, arch);
      lm_catalog_free(*owned);
      *owned = NULL;
      return NULL;
    }
    return *owned;
  }
  const lm_catalog *cat = compat ? lm_metrics_builtin_compat(arch, compat) : lm_metrics_builtin(arch);
  const lm_catalog *any = lm_metrics_builtin(arch);
  if (!cat && any && strcmp(any->vendor, "amd") != 0) {
    cli_error(MODE, "--compat %s: the versions are rocprofiler-compute's, for AMD GPUs; %s is "
                    "a %s architecture", compat, arch, any->vendor);
    return NULL;
  }
  if (!cat && any) {
    lm_buf list = {0};
    for (const char *const *v = lm_compat_versions; *v; v++)
      if (lm_metrics_builtin_compat(arch, *v))
        lm_buf_printf(&list, "%s%s", list.len ? ", " : "", *v);
    cli_error(MODE, "--compat %s: %s has metric definitions only in the semantics of "
                    "rocprofiler-compute %s (version %s does not support this GPU); use --compat %s",
              compat, arch, lm_buf_cstr(&list), compat, any->compat);
    lm_buf_fini(&list);
    return NULL;
  }
  if (cat && !compat && strcmp(cat->compat, lm_compat_versions[0]) != 0)
    lm_log(LM_LOG_WARN, "%s: analyzed in rocprofiler-compute %s semantics, the oldest lumen has "
                        "for this GPU (--compat %s)", arch, cat->compat, cat->compat);
  if (!cat) {
    lm_buf list = {0};
    for (const char *const *a = lm_metrics_builtin_list(); *a; a++)
      lm_buf_printf(&list, "%s%s", a == lm_metrics_builtin_list() ? "" : ", ", *a);
    cli_error(MODE, "%s: field 'gpu_arch': %s has no metric definitions (supported: %s; "
                    "--metrics-dir DIR adds your own)", sysinfo_path, arch, lm_buf_cstr(&list));
    lm_buf_fini(&list);
  }
  return cat;
}


/* Whether text goes to a terminal with colours: --color always|never|auto
 * (auto: stdout is a terminal, NO_COLOR unset, TERM not "dumb"). Returns
 * -1 for a bad value. */
static int use_color(const cli_args *a, const char *output) {
  const char *c = cli_get(a, "color");
  if (c && strcmp(c, "always") == 0) return 1;
  if (c && strcmp(c, "never") == 0) return 0;
  if (c && strcmp(c, "auto") != 0) return -1;
  const char *no = getenv("NO_COLOR"), *term = getenv("TERM");
  return !output && stdout_tty() && !(no && *no) && !(term && strcmp(term, "dumb") == 0);
}

/* Long text for a terminal goes through a pager, as git does: $LUMEN_PAGER,
 * else $PAGER, else "less -FRX" (which exits at once when the text fits).
 * Returns 1 when the text was written (to the pager, or directly). */
static int page_text(const cli_args *a, const lm_buf *b) {
  struct winsize ws;
  if (cli_has(a, "no-pager") || !stdout_tty() || ioctl(1, TIOCGWINSZ, &ws) != 0 || ws.ws_row == 0) return 0;
  size_t lines = 0;
  for (size_t i = 0; i < b->len; i++) lines += b->data[i] == '\n';
  if (lines < ws.ws_row) return 0;
  const char *pager = getenv("LUMEN_PAGER");
  if (!pager || !*pager) pager = getenv("PAGER");
  if (!pager || !*pager) pager = "less -FRX";
  if (strcmp(pager, "cat") == 0) return 0;
  fflush(stdout);
  signal(SIGPIPE, SIG_IGN);
  FILE *p = popen(pager, "w");
  if (!p) return 0;
  fwrite(b->data, 1, b->len, p); /* a pager quit early (q) is not an error */
  pclose(p);
  return 1;
}

static int write_text(const char *path, const lm_buf *b) {
  FILE *f = path ? fopen(path, "wb") : stdout;
  if (!f) {
    cli_error(MODE, "%s: cannot write: %s", path, strerror(errno));
    return 0;
  }
  size_t ok = b->len ? fwrite(b->data, 1, b->len, f) : 0;
  int closed = path ? fclose(f) == 0 : fflush(f) == 0;
  if (ok != b->len || !closed) {
    cli_error(MODE, "%s: write failed: %s", path ? path : "stdout", strerror(errno));
    return 0;
  }
  return 1;
}

/* The width text output is laid out for: --width, else the terminal's,
 * else $COLUMNS, else 80. */
static int terminal_width(const cli_args *a) {
  long v;
  if (cli_has(a, "width") && parse_long(cli_get(a, "width"), &v) && (v == 0 || (v >= 40 && v <= 100000)))
    return (int)v;
  struct winsize ws;
  if (stdout_tty() && ioctl(1, TIOCGWINSZ, &ws) == 0 && ws.ws_col >= 40) return ws.ws_col;
  const char *cols = getenv("COLUMNS");
  if (cols && parse_long(cols, &v) && v >= 40 && v <= 1000) return (int)v;
  return 80;
}

/* The summary of workload w for the user's selection o: built-in rules
 * for its architecture plus --rules-dir. A rule file that does not fit
 * the definitions (say, --metrics-dir with other metric names) leaves the
 * summary without findings and says why; a broken --rules-dir is an error. */
/* Whether every dispatch of w that o selects lasted no time (End ==
 * Start, as in the MI300 test folders): a comparison against such data
 * has no time base, so Delta% of durations and rates is undefined. */
static int zero_durations(const lm_workload *w, const lm_analyze_opts *o) {
  if (!w || !w->pmc) return 0;
  long sc = lm_table_find(w->pmc, "Start_Timestamp"), ec = lm_table_find(w->pmc, "End_Timestamp");
  if (sc < 0 || ec < 0) return 0;
  size_t *rows = NULL, n = 0;
  lm_diag d;
  memset(&d, 0, sizeof d);
  if (lm_analyze_rows(w, o, &rows, &n, &d) != LM_OK) return 0;
  const double *s = w->pmc->cols[sc].values, *e = w->pmc->cols[ec].values;
  int zero = n > 0;
  for (size_t i = 0; zero && i < n; i++) zero = e[rows[i]] - s[rows[i]] == 0;
  lm_free(rows);
  return zero;
}

static int summary_for(const cli_args *a, const lm_workload *w, const lm_catalog *cat, const lm_analyze_opts *o,
                       const lm_analysis *whole, lm_summary **out) {
  lm_diag diag, rules_diag;
  lm_diag_clear(&diag);
  lm_diag_clear(&rules_diag);
  lm_ruleset *rules = NULL;
  uint64_t t0 = lm_phase_begin();
  lm_status rs = lm_rules_load_texts(cat, lm_rules_builtin(), &rules, &rules_diag);
  const char *dir = cli_get(a, "rules-dir");
  if (rs == LM_OK && dir && lm_rules_add_dir(rules, cat, dir, &diag) != LM_OK) {
    cli_diag(MODE, &diag);
    lm_rules_free(rules);
    return 0;
  }
  if (lm_advise_summary(w, cat, rs == LM_OK ? rules : NULL, o, whole, 5, out, &diag) != LM_OK) {
    cli_diag(MODE, &diag);
    lm_rules_free(rules);
    return 0;
  }
  if (rs != LM_OK) {
    char line[1200];
    (*out)->rules_error = lm_arena_strdup((*out)->arena, lm_diag_format(&rules_diag, line, sizeof line));
  }
  /* Findings point at their rules: keep the set as long as the summary. */
  (*out)->rules = rules;
  lm_phase_end("summary", t0);
  return 1;
}

int cmd_analyze(int argc, char **argv, int first) {
  cli_args a;
  int status = 1;
  lm_workload **workloads = NULL;
  lm_analysis **runs = NULL;
  lm_catalog **owned = NULL;
  run_filters *filters = NULL;
  size_t n = 0, nb = 0;
  const char **blocks = NULL;
  char **block_copies = NULL;
  const char **region_names = NULL;
  lm_store *store = NULL;
  lm_summary *summary = NULL;
  lm_workload *summary_workload = NULL;
  int first_cached = 0; /* the first workload came as a kept analysis (no counters) */
  lm_analyze_opts last_opts;
  memset(&last_opts, 0, sizeof last_opts);
  lm_analyze_opts *all_opts = NULL;  /* each workload's options (--summary of a comparison) */
  lm_summary **summaries = NULL;     /* ... and each one's summary */
  lm_workload **summary_loaded = NULL;
  lm_buf out = {0};
  lm_diag diag;
  lm_diag_clear(&diag);
  uint64_t t_all = lm_phase_begin();
  if (cli_parse(argc, argv, first, MODE, MODE_ANALYZE, &a) != 0) return 2;
  if (cli_has(&a, "help")) {
    cli_help(stdout, MODE);
    cli_args_fini(&a);
    return 0;
  }
  cli_apply_verbosity(&a);
  column_choice columns = {cli_get(&a, "compat"),
                           cli_has(&a, "metrics-dir") ||
                               (cli_has(&a, "load") && strcmp(cli_get(&a, "load"), "stream") != 0),
                           {NULL}, {NULL}, 0};
  lm_workload_options read_opts;
  memset(&read_opts, 0, sizeof read_opts);
  read_opts.choose = choose_columns;
  read_opts.choose_ctx = &columns;
  lm_idset read_ranks;
  read_ranks_of(&a, 0, cli_count(&a, "workload"), &read_ranks);
  read_opts.ranks = columns.all && !cli_has(&a, "metrics-dir") ? NULL : &read_ranks; /* --load whole: every part */
  cli_mpi *mpi = NULL;
  const cli_mpi_api *mpi_api = NULL;
  if (cli_has(&a, "mpi")) {
#ifdef LUMEN_HAVE_MPI
    char why[512];
    if (!(mpi_api = cli_mpi_load(why, sizeof why))) {
      cli_error(MODE, "--mpi: %s", why);
      status = 2;
      goto done;
    }
    int me = mpi_api->begin(&mpi);
    stdout_relayed = 1;
    if (me < 0) {
      cli_error(MODE, "--mpi: MPI did not start");
      goto done;
    }
    if (me > 0) {
      /* Another process's share: load and send parts, print nothing. */
      status = mpi_api->end(mpi, mpi_api->worker(mpi, cli_nth(&a, "workload", 0), &read_opts));
      lm_idset_fini(&read_ranks);
      cli_args_fini(&a);
      return status;
    }
#else
    cli_error(MODE, "--mpi: this lumen was built without MPI (install Open MPI, libopenmpi-dev, and rebuild)");
    status = 2;
    goto done;
#endif
  }
  if (a.n_positional) {
    cli_error(MODE, "unexpected argument '%s' (workloads are given with -w DIR)", a.positional[0]);
    status = 2;
    goto done;
  }
  n = cli_count(&a, "workload");
  if (n == 0) {
    cli_error(MODE, "no workload: give one with -w DIR");
    status = 2;
    goto done;
  }
  if (mpi && (n != 1 || cli_has(&a, "db"))) {
    cli_error(MODE, "--mpi reads one folder of rank.R parts (one -w DIR, no --db)");
    status = 2;
    goto done;
  }
  const char *format = cli_get(&a, "format");
  if (!format) format = "text";
  if (strcmp(format, "text") && strcmp(format, "csv") && strcmp(format, "json")) {
    cli_error(MODE, "--format %s: expected text, csv or json", format);
    status = 2;
    goto done;
  }
  lm_report_opts ropts = {2, 10, 0, a.verbosity, NULL, NULL, 0, 0, NULL, 0};
  if (cli_has(&a, "decimal")) {
    long v;
    if (!parse_long(cli_get(&a, "decimal"), &v) || v < 0 || v > 17) {
      cli_error(MODE, "--decimal %s: expected a number of digits from 0 to 17", cli_get(&a, "decimal"));
      status = 2;
      goto done;
    }
    ropts.decimal = (int)v;
  }
  if (cli_has(&a, "max-stat-num")) {
    long v;
    if (!parse_long(cli_get(&a, "max-stat-num"), &v) || v < 0) {
      cli_error(MODE, "--max-stat-num %s: expected a row count", cli_get(&a, "max-stat-num"));
      status = 2;
      goto done;
    }
    ropts.max_stat_num = (size_t)v;
  }
  const char *delta = cli_get(&a, "delta");
  if (delta && strcmp(delta, "lumen") != 0 && strcmp(delta, "reference") != 0) {
    cli_error(MODE, "--delta %s: expected lumen or reference", delta);
    status = 2;
    goto done;
  }
  lm_report_delta_variant(delta && strcmp(delta, "reference") == 0);
  int time_unit = cli_choice(&a, "time-unit", lm_time_unit_names, "expected", 0);
  int norm = time_unit < 0 ? -1 : cli_choice(&a, "norm", lm_norm_names, "expected", 0);
  if (norm < 0) {
    status = 2;
    goto done;
  }
  const char *compat = cli_get(&a, "compat");
  lm_norm_kind shared_norm = LM_NORM_DEFAULT; /* comparisons: the baseline's default unit */
  if (compat && !lm_compat_known(compat)) {
    lm_buf versions = {0};
    for (const char *const *v = lm_compat_versions; *v; v++)
      lm_buf_printf(&versions, "%s%s", v == lm_compat_versions ? "" : v[1] ? ", " : " or ", *v);
    cli_error(MODE, "--compat %s: expected %s, the rocprofiler-compute version whose analyze "
                    "tables to reproduce (without it, each folder's own: its sysinfo.csv layout)", compat,
              lm_buf_cstr(&versions));
    lm_buf_fini(&versions);
    status = 2;
    goto done;
  }
  int weight = cli_choice(&a, "weight", lm_weight_names, "use", 1);
  if (weight < 0) {
    status = 2;
    goto done;
  }
  if (cli_has(&a, "db")) {
    char url_buf[4096];
    const char *url = cli_store_url(&a, url_buf, sizeof url_buf);
    if (lm_store_open_existing(url, &store, &diag) != LM_OK) {
      cli_diag(MODE, &diag);
      goto done;
    }
  }
  if (!store) {
    /* -w NAME with no such folder: a workload of that name in the default
     * store (or $LUMEN_DB). */
    const char *first_w = cli_nth(&a, "workload", 0);
    struct stat sb;
    char url_buf[4096];
    if (first_w && stat(first_w, &sb) != 0 && !strchr(first_w, '/')) {
      const char *url = cli_store_url(&a, url_buf, sizeof url_buf);
      lm_store *def = NULL;
      lm_store_entry entry;
      lm_diag ignored;
      if (lm_store_open_existing(url, &def, &ignored) == LM_OK && lm_store_get(def, first_w, &entry, &ignored) == LM_OK) {
        lm_log(LM_LOG_INFO, "-w %s: no such folder; the workload of that name in the store %s", first_w, url);
        store = def;
      } else {
        lm_store_close(def);
      }
    }
  }
  int clock = cli_choice(&a, "clock", lm_clock_names, "use", 1);
  if (clock < 0) {
    status = 2;
    goto done;
  }
  size_t n_region_flags = cli_count(&a, "region");
  long threads = 0;
  if (cli_has(&a, "threads") && (!parse_long(cli_get(&a, "threads"), &threads) || threads < 1)) {
    cli_error(MODE, "--threads %s: expected a positive number", cli_get(&a, "threads"));
    status = 2;
    goto done;
  }
  const char *load = cli_has(&a, "load") ? cli_get(&a, "load") : "stream";
  if (strcmp(load, "stream") != 0 && strcmp(load, "whole") != 0) {
    cli_error(MODE, "--load %s: use stream (counter columns read in blocks of dispatches) or "
                    "whole (every column in memory)", load);
    status = 2;
    goto done;
  }
  long block_rows = 0;
  if (cli_has(&a, "block-rows") &&
      (!parse_long(cli_get(&a, "block-rows"), &block_rows) || block_rows < 1)) {
    cli_error(MODE, "--block-rows %s: expected a positive number", cli_get(&a, "block-rows"));
    status = 2;
    goto done;
  }
  long stat_mem = 0;
  if (cli_has(&a, "stat-mem") &&
      (!parse_long(cli_get(&a, "stat-mem"), &stat_mem) || stat_mem < 0 ||
       stat_mem > 1024L * 1024 * 1024)) {
    cli_error(MODE, "--stat-mem %s: expected a number of megabytes (0 or more)",
              cli_get(&a, "stat-mem"));
    status = 2;
    goto done;
  }
  nb = cli_count(&a, "block");
  blocks = calloc(nb * 8 + 1, sizeof *blocks);
  block_copies = calloc(nb + 1, sizeof *block_copies);
  size_t n_blocks = 0;
  if (!blocks || !block_copies) goto done;
  for (size_t i = 0; i < nb; i++) {
    /* -b accepts comma lists, unless the item is a metric name with commas. */
    const char *v = cli_nth(&a, "block", i);
    block_copies[i] = strdup(v);
    if (!block_copies[i]) goto done;
    if (strchr(v, ' ')) {
      blocks[n_blocks++] = block_copies[i];
      continue;
    }
    for (char *tok = strtok(block_copies[i], ","); tok && n_blocks < nb * 8; tok = strtok(NULL, ","))
      blocks[n_blocks++] = tok;
  }

  all_opts = calloc(n, sizeof *all_opts);
  summaries = calloc(n, sizeof *summaries);
  summary_loaded = calloc(n, sizeof *summary_loaded);
  if (!all_opts || !summaries || !summary_loaded) goto done;
  workloads = calloc(n, sizeof *workloads);
  runs = calloc(n, sizeof *runs);
  owned = calloc(n, sizeof *owned);
  filters = calloc(n, sizeof *filters);
  if (!workloads || !runs || !owned || !filters) goto done;
  for (size_t k = 0; k < n; k++) {
    const char *path = cli_nth(&a, "workload", k);
    uint64_t t0 = lm_phase_begin();
    lm_store_entry entry;
    if (store) {
      /* -w names a workload of the store. */
      if (lm_store_get(store, path, &entry, &diag) != LM_OK) {
        cli_diag(MODE, &diag);
        goto done;
      }
    } else {
      lm_workload_options wo = read_opts;
      wo.defer = strcmp(load, "stream") == 0;
      wo.eager_columns = lm_analyze_columns;
      wo.levels_lazy = 1;
      /* Every panel: the formulas' inputs are converted while the files
       * are indexed when they fit (with -b only some are read). */
      wo.load_wanted = n_blocks == 0;
      /* (bytes: a smaller room, for the tests of the streamed path) */
      const char *load_cap = getenv("LUMEN_LOAD_CAP");
      if (load_cap) wo.load_cap = (size_t)strtoull(load_cap, NULL, 10);
      lm_idset_fini(&read_ranks);
      read_ranks_of(&a, k, n, &read_ranks);
      if (!read_opts.ranks) wo.ranks = NULL;
      if (mpi) wo.parts = mpi_api->source(mpi);
      lm_status read = lm_workload_read_opts(path, &wo, &workloads[k], &diag);
      if (mpi) mpi_api->settle(mpi);
      if (read != LM_OK) {
        cli_diag(MODE, &diag);
        goto done;
      }
      lm_phase_end("load", t0);
      size_t deferred = 0;
      for (size_t c = 0; c < workloads[k]->pmc->n_cols; c++) deferred += lm_table_deferred(workloads[k]->pmc, c);
      if (deferred)
        lm_log(LM_LOG_DEBUG, "%s: %zu of %zu pmc_perf columns read in blocks of dispatches", path, deferred,
               workloads[k]->pmc->n_cols);
      lm_log(LM_LOG_DEBUG, "%s: %s, %zu dispatches, %zu columns", path, workloads[k]->arch,
             workloads[k]->pmc->n_rows, workloads[k]->pmc->n_cols);
    }
    /* Each folder in the semantics of the rocprofiler-compute that wrote
     * it (its sysinfo.csv layout), unless --compat says otherwise. */
    const char *wl_compat = compat                     ? compat
                            : store && entry.compat[0] ? entry.compat
                            : store                    ? NULL
                                                       : lm_sysinfo_compat(&workloads[k]->sysinfo);
    if (wl_compat && !compat)
      lm_log(n > 1 ? LM_LOG_INFO : LM_LOG_DEBUG,
             "%s: sysinfo.csv has the layout of rocprofiler-compute %s and later: analyzed in its semantics "
             "(--compat %s reads it in another)", path, wl_compat, lm_compat_versions[0]);
    const lm_catalog *cat = catalog_for(store ? entry.arch : workloads[k]->arch, cli_get(&a, "metrics-dir"), wl_compat,
                                        store ? lm_store_where(store) : workloads[k]->sysinfo_table->path,
                                        &owned[k]);
    if (!cat) goto done;
    /* Workloads compared in different semantics (a 3.1 profile against a
     * 3.3 one) are normalized alike: the baseline's default unit, when the
     * other's definitions have it. */
    if (k == 0 && !norm && n > 1 && cat->n_norms) lm_norm_kind_parse(cat->norms[0].name, &shared_norm);
    lm_norm_kind wl_norm = (lm_norm_kind)norm;
    const char *shared_name = lm_norm_kind_name(shared_norm);
    if (!norm && shared_name && k > 0 && cat->n_norms && strcmp(cat->norms[0].name, shared_name) != 0) {
      if (lm_analyze_norm_index(cat, shared_norm) >= 0) wl_norm = shared_norm;
      if (wl_norm)
        lm_log(LM_LOG_INFO, "%s: normalized %s like the baseline (its own default is %s; --norm chooses)", path,
               shared_name, cat->norms[0].name);
    }
    if (!build_filters(&a, k, n, &filters[k])) {
      status = 2;
      goto done;
    }
    lm_analyze_opts o;
    memset(&o, 0, sizeof o);
    o.kernels = filters[k].kernels;
    o.n_kernels = filters[k].n_kernels;
    o.kernel_index = filters[k].kernel_index;
    o.n_kernel_index = filters[k].n_kernel_index;
    o.dispatch = &filters[k].dispatch;
    o.gpu = &filters[k].gpu;
    o.instance = &filters[k].instance;
    o.rank = &filters[k].rank;
    o.blocks = blocks;
    o.n_blocks = n_blocks;
    o.norm = wl_norm;
    o.time_unit = (lm_time_unit)time_unit;
    o.threads = (int)threads;
    o.block_rows = (size_t)block_rows;
    /* 0 MB keeps no values at all (one byte: never 0, the default) */
    o.stat_mem = cli_has(&a, "stat-mem") ? (stat_mem ? (size_t)stat_mem * 1024 * 1024 : 1) : 0;
    o.stats_only = cli_has(&a, "list-stats");
    o.corrected = cli_has(&a, "corrected");
    o.clock_measured = clock == LM_CLOCK_MEASURED;
    o.weight_time = weight == LM_WEIGHT_TIME;
    if (n_region_flags && !region_names) {
      region_names = calloc(n_region_flags + 1, sizeof *region_names);
      if (!region_names) goto done;
      for (size_t i = 0; i < n_region_flags; i++) region_names[i] = cli_nth(&a, "region", i);
    }
    o.regions = region_names;
    o.n_regions = n_region_flags;
    if (k == 0) last_opts = o;
    if (all_opts) all_opts[k] = o;
    if (store) {
      int cached = 0;
      if (lm_store_analyze(store, path, cat, &o, &workloads[k], &runs[k], &cached, &diag) != LM_OK) {
        if (!diag.file[0]) snprintf(diag.file, sizeof diag.file, "%s", path);
        cli_diag(MODE, &diag);
        goto done;
      }
      lm_phase_end(cached ? "load cached analysis" : "load and evaluate", t0);
      if (k == 0) first_cached = cached;
      lm_log(LM_LOG_DEBUG, "%s: %s analysis from %s", path, cached ? "a stored" : "a new", lm_store_where(store));
    } else if (lm_analyze_run(workloads[k], cat, &o, &runs[k], &diag) != LM_OK) {
      if (!diag.file[0]) snprintf(diag.file, sizeof diag.file, "%s", path);
      cli_diag(MODE, &diag);
      goto done;
    }
    /* A sysinfo.csv that cannot be right for the GPU: said once per
     * workload, with the value the architecture's facts give. */
    lm_implausible bad[8];
    size_t n_bad = workloads[k] ? lm_analyze_check_sysinfo(workloads[k], cat, bad, 8) : 0;
    for (size_t i = 0; i < n_bad && i < 8; i++) {
      char expected[64] = "";
      if (!isnan(bad[i].expected)) snprintf(expected, sizeof expected, " (the facts give %g)", bad[i].expected);
      lm_log(LM_LOG_WARN, "%s: sysinfo.csv field '%s' is %s%s: %s; the panels show the reference's numbers from it, "
             "the summary flags figures above their peak", path, bad[i].field, bad[i].value, expected, bad[i].why);
    }
    if (n > 1 && zero_durations(workloads[k], &o))
      lm_log(LM_LOG_WARN, "%s: every selected dispatch has End_Timestamp == Start_Timestamp; the "
             "comparison's durations and rates against it are undefined (shown blank or inf)", path);
  }
  if (n > 1 && strcmp(runs[0]->catalog->arch, runs[1]->catalog->arch) != 0)
    lm_log(LM_LOG_WARN, "comparing %s with %s: metrics are matched by id", runs[0]->catalog->arch,
           runs[1]->catalog->arch);

  /* The guided-analysis summary: the first screen of a single workload's
   * text report (not with -b, --list-stats or --full), or on request. */
  int want_summary = cli_has(&a, "summary") ||
                     (n == 1 && strcmp(format, "text") == 0 && !nb && !cli_has(&a, "list-stats") &&
                      !cli_has(&a, "full"));
  /* The first run's analysis serves the summary when it covers the same
   * selection with every table (a store's kept analysis too: it holds the
   * same tables and spreads). */
  const lm_analysis *whole = !nb && !last_opts.n_kernel_index && !last_opts.stats_only ? runs[0] : NULL;
  if (want_summary && store && first_cached) {
    /* A kept analysis came with system information only: the summary
     * analyzes each kernel, so it needs the dispatches and the columns
     * the analysis reads; with one kernel, whose analysis is the kept one,
     * only those it reads by name (times, the roofline's counters). */
    int one_kernel = 0;
    for (int32_t t = 0; whole && t < whole->n_tables; t++)
      if (whole->tables[t].kind == LM_TABLE_TOP_KERNELS) one_kernel = whole->tables[t].n_rows == 1;
    if (lm_store_load_for(store, cli_nth(&a, "workload", 0), one_kernel ? NULL : runs[0]->catalog,
                          &summary_workload, &diag) != LM_OK) {
      cli_diag(MODE, &diag);
      goto done;
    }
  }
  if (want_summary && !summary_for(&a, summary_workload ? summary_workload : workloads[0], runs[0]->catalog,
                                   &last_opts, whole, &summary))
    goto done;
  ropts.summary = summary;
  /* --summary of a comparison: every workload's, side by side. */
  if (summary && n > 1 && cli_has(&a, "summary")) {
    summaries[0] = summary;
    for (size_t k = 1; k < n; k++) {
      const lm_workload *wk = workloads[k];
      if (store) {
        if (lm_store_load_for(store, cli_nth(&a, "workload", k), runs[k]->catalog, &summary_loaded[k], &diag) !=
            LM_OK) {
          cli_diag(MODE, &diag);
          goto done;
        }
        wk = summary_loaded[k];
      }
      const lm_analysis *whole_k =
          !store && !nb && !all_opts[k].n_kernel_index && !all_opts[k].stats_only ? runs[k] : NULL;
      if (!summary_for(&a, wk, runs[k]->catalog, &all_opts[k], whole_k, &summaries[k])) goto done;
    }
    ropts.summaries = (const lm_summary *const *)summaries;
    ropts.n_summaries = n;
  }
  /* Text tables wider than the terminal become blocks per row; --width 0
   * keeps every table a box, however wide. */
  if (strcmp(format, "text") == 0) {
    ropts.width = terminal_width(&a);
    int color = use_color(&a, cli_get(&a, "output"));
    if (color < 0) {
      cli_error(MODE, "--color %s: expected auto, always or never", cli_get(&a, "color"));
      status = 2;
      goto done;
    }
    ropts.color = color;
  }
  uint64_t t_render = lm_phase_begin();
  const lm_analysis *const *cruns = (const lm_analysis *const *)runs;
  const char *output = cli_get(&a, "output");
  if (strcmp(format, "csv") == 0 && output) {
    if (lm_report_csv_dir(cruns, n, output, &diag) != LM_OK) {
      cli_diag(MODE, &diag);
      goto done;
    }
  } else {
    lm_status st = LM_OK;
    if (ropts.summaries && strcmp(format, "text") == 0) {
      const lm_workload *shown[64];
      size_t m = n < 64 ? n : 64;
      for (size_t k = 0; k < m; k++) shown[k] = workloads[k];
      st = lm_report_summary_compare_text(ropts.summaries, shown, m, (size_t)terminal_width(&a), &out);
    } else if (summary && strcmp(format, "text") == 0) {
      st = lm_report_summary_text(summary, workloads[0], (size_t)terminal_width(&a), ropts.color, &out);
      if (st == LM_OK && !cli_has(&a, "summary")) lm_buf_puts(&out, "\n");
    }
    if (st == LM_OK && !(cli_has(&a, "summary") && strcmp(format, "text") == 0))
      st = strcmp(format, "json") == 0  ? lm_report_json(cruns, n, &ropts, &out)
           : strcmp(format, "csv") == 0 ? lm_report_csv_stream(cruns, n, &out)
                                        : lm_report_text(cruns, n, &ropts, &out);
    if (st != LM_OK) {
      cli_error(MODE, "out of memory while rendering");
      goto done;
    }
    if (!(strcmp(format, "text") == 0 && !output && page_text(&a, &out)) && !write_text(output, &out)) goto done;
  }
  lm_phase_end("render", t_render);
  status = 0;
done:
  lm_idset_fini(&read_ranks);
  for (size_t i = 0; block_copies && i < nb; i++) free(block_copies[i]);
  free(block_copies);
  free(blocks);
  for (size_t k = 0; k < n; k++) {
    if (runs) lm_analysis_free(runs[k]);
    if (workloads) lm_workload_free(workloads[k]);
    if (owned) lm_catalog_free(owned[k]);
    if (filters) filters_fini(&filters[k]);
  }
  free(runs);
  free(workloads);
  free(owned);
  free(filters);
  free(region_names);
  lm_store_close(store);
  lm_summary_free(summary);
  lm_workload_free(summary_workload);
  for (size_t k = 1; summaries && k < n; k++) lm_summary_free(summaries[k]);
  for (size_t k = 0; summary_loaded && k < n; k++) lm_workload_free(summary_loaded[k]);
  free(summaries);
  free(summary_loaded);
  free(all_opts);
  lm_buf_fini(&out);
  cli_self_time(&a, t_all);
  cli_args_fini(&a);
  if (mpi) status = mpi_api->end(mpi, status);
  column_choice_fini(&columns);
  return status;
}
