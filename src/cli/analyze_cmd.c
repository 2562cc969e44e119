/*
 * analyze_cmd.c - `lumen analyze`: load workloads, evaluate, render.
 *
 * The command is a sequence of steps over one analyze_run (flags checked
 * in a fixed order, so the first bad one is reported; the store; each
 * workload read and analyzed; the summary; the rendering), each returning
 * 0 or the exit status, and one run_fini that releases what they made.
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
#include "ranks/ranks.h"
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

static const char *const undefined_blocks[] = {"0", "1"};

enum { COLOR_AUTO = 1, COLOR_ALWAYS, COLOR_NEVER };
static const lm_keyword color_names[] = {
    {"auto", COLOR_AUTO, NULL}, {"always", COLOR_ALWAYS, NULL}, {"never", COLOR_NEVER, NULL}, {NULL, 0, NULL}};

/* Whether text goes to a terminal with colours: --color always|never|auto
 * (auto: stdout is a terminal, NO_COLOR unset, TERM not "dumb"). Returns
 * -1, after saying so, for a bad value. */
static int use_color(const cli_args *a, const char *output) {
  int color = cli_choice(a, "color", color_names, "expected", 0);
  if (color < 0) return -1;
  if (color == COLOR_ALWAYS) return 1;
  if (color == COLOR_NEVER) return 0;
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

/* ------------------------------------------------------------ the command */

/* The values of the choice flags only analyze has (0: not given). */
enum { DELTA_LUMEN = 1, DELTA_REFERENCE };
static const lm_keyword delta_names[] = {
    {"lumen", DELTA_LUMEN, NULL}, {"reference", DELTA_REFERENCE, NULL}, {NULL, 0, NULL}};
enum { LOAD_STREAM = 1, LOAD_WHOLE };
static const lm_keyword load_names[] = {
    {"stream", LOAD_STREAM, "counter columns read in blocks of dispatches"},
    {"whole", LOAD_WHOLE, "every column in memory"},
    {NULL, 0, NULL},
};

/* The flags of one `lumen analyze`, checked. */
typedef struct analyze_flags {
  int format;                 /* CLI_FORMAT_* */
  lm_report_opts ropts;       /* --decimal, --max-stat-num; the rest is set
                                 for the rendering */
  lm_time_unit time_unit;
  lm_norm_kind norm;
  const char *compat;         /* --compat, or NULL */
  lm_weight_kind weight;
  lm_clock_kind clock;
  long threads, block_rows, stat_mem; /* 0 where not given */
  int load_whole;             /* --load whole */
} analyze_flags;

/* Everything one `lumen analyze` holds; run_fini releases it. Arrays are
 * per workload, in -w order. */
typedef struct analyze_run {
  cli_args a;
  analyze_flags f;
  size_t n;                   /* workloads (-w) */
  lm_store *store;            /* --db, or the default store naming -w */
  column_choice columns;      /* the counter columns reads load */
  lm_workload_options read_opts;
  lm_idset read_ranks;        /* the --rank selection of the read under way */
  lm_ranks_mpi *mpi;          /* --mpi */
  const lm_ranks_mpi_api *mpi_api;
  size_t nb;                  /* -b flags */
  const char **blocks;        /* their items, comma lists split */
  char **block_copies;
  size_t n_blocks;
  const char **region_names;  /* -r */
  lm_workload **workloads;    /* NULL for a store's kept analysis */
  lm_analysis **runs;
  lm_catalog **owned;         /* compiled from --metrics-dir */
  run_filters *filters;
  lm_analyze_opts *all_opts;  /* each workload's options */
  lm_norm_kind shared_norm;   /* comparisons: the baseline's default unit */
  int first_cached;           /* the first workload came as a kept analysis
                                 (no counters) */
  int undefined;              /* a workload's NVIDIA architecture has no
                                 definitions: panels 0 and 1 only */
  int totals;                 /* a workload holds per-kernel totals only:
                                 the top kernels, no summary */
  int no_arch;                /* a workload of timestamps of no known
                                 architecture: panel 0, no summary */
  lm_summary *summary;        /* the first workload's */
  lm_workload *summary_workload;
  lm_summary **summaries;     /* --summary of a comparison: each one's */
  lm_workload **summary_loaded;
  lm_buf out;
  lm_diag diag;
} analyze_run;

/* How workloads are read: the columns and the --rank parts they load. */
static void setup_reading(analyze_run *r) {
  int load = 0;
  lm_keyword_find(load_names, cli_get(&r->a, "load"), &load);
  r->columns.compat = cli_get(&r->a, "compat");
  r->columns.all = cli_has(&r->a, "metrics-dir") || (cli_has(&r->a, "load") && load != LOAD_STREAM);
  r->read_opts.choose = choose_columns;
  r->read_opts.choose_ctx = &r->columns;
  r->read_opts.arch = cli_get(&r->a, "arch");
  read_ranks_of(&r->a, 0, cli_count(&r->a, "workload"), &r->read_ranks);
  /* --load whole: every part */
  r->read_opts.ranks = r->columns.all && !cli_has(&r->a, "metrics-dir") ? NULL : &r->read_ranks;
}

#ifdef LUMEN_HAVE_MPI
/* What the MPI module says before it ends the job (a part it has no
 * memory for while its sender waits). */
static void mpi_fatal(const lm_diag *diag) { cli_diag(MODE, diag); }

#endif

/* --mpi: start MPI; *me is this process's number (0 analyses and prints).
 * Returns 0, or the exit status when MPI does not start. */
static int start_mpi(analyze_run *r, int *me) {
#ifdef LUMEN_HAVE_MPI
  char why[512];
  if (!(r->mpi_api = cli_mpi_load(why, sizeof why))) {
    cli_error(MODE, "--mpi: %s", why);
    return 2;
  }
  *me = r->mpi_api->begin(&r->mpi, mpi_fatal);
  stdout_relayed = 1;
  if (*me < 0) {
    cli_error(MODE, "--mpi: MPI did not start");
    return 1;
  }
  return 0;
#else
  (void)r;
  (void)me;
  cli_error(MODE, "--mpi: this lumen was built without MPI (install Open MPI, libopenmpi-dev, and rebuild)");
  return 2;
#endif
}

/* Workloads given, and no stray arguments. Returns 0 or 2. */
static int check_usage(analyze_run *r) {
  if (r->a.n_positional) {
    cli_error(MODE, "unexpected argument '%s' (workloads are given with -w DIR)", r->a.positional[0]);
    return 2;
  }
  r->n = cli_count(&r->a, "workload");
  if (r->n == 0) {
    cli_error(MODE, "no workload: give one with -w DIR");
    return 2;
  }
  if (r->mpi && (r->n != 1 || cli_has(&r->a, "db"))) {
    cli_error(MODE, "--mpi reads one folder of rank.R parts (one -w DIR, no --db)");
    return 2;
  }
  return 0;
}

/* --format, --decimal, --max-stat-num, --delta. Returns 0 or 2. */
static int parse_report_flags(analyze_run *r) {
  const cli_args *a = &r->a;
  r->f.format = cli_choice(a, "format", cli_format_names, "expected", 0);
  if (r->f.format < 0) return 2;
  if (!r->f.format) r->f.format = CLI_FORMAT_TEXT;
  lm_report_opts ropts = {2, 10, 0, a->verbosity, NULL, NULL, 0, 0, NULL, 0};
  r->f.ropts = ropts;
  long v;
  if (cli_has(a, "decimal")) {
    if (!parse_long(cli_get(a, "decimal"), &v) || v < 0 || v > 17) {
      cli_error(MODE, "--decimal %s: expected a number of digits from 0 to 17", cli_get(a, "decimal"));
      return 2;
    }
    r->f.ropts.decimal = (int)v;
  }
  if (cli_has(a, "max-stat-num")) {
    if (!parse_long(cli_get(a, "max-stat-num"), &v) || v < 0) {
      cli_error(MODE, "--max-stat-num %s: expected a row count", cli_get(a, "max-stat-num"));
      return 2;
    }
    r->f.ropts.max_stat_num = (size_t)v;
  }
  int delta = cli_choice(a, "delta", delta_names, "expected", 0);
  if (delta < 0) return 2;
  lm_report_delta_variant(delta == DELTA_REFERENCE);
  return 0;
}

/* --time-unit, --norm, --compat, --weight. Returns 0 or 2. */
static int parse_analysis_flags(analyze_run *r) {
  const cli_args *a = &r->a;
  int time_unit = cli_choice(a, "time-unit", lm_time_unit_names, "expected", 0);
  int norm = time_unit < 0 ? -1 : cli_choice(a, "norm", lm_norm_names, "expected", 0);
  if (norm < 0) return 2;
  r->f.time_unit = (lm_time_unit)time_unit;
  r->f.norm = (lm_norm_kind)norm;
  const char *compat = r->f.compat = cli_get(a, "compat");
  if (compat && !lm_compat_known(compat)) {
    lm_buf versions = {0};
    for (const char *const *v = lm_compat_versions; *v; v++)
      lm_buf_printf(&versions, "%s%s", v == lm_compat_versions ? "" : v[1] ? ", " : " or ", *v);
    cli_error(MODE, "--compat %s: expected %s, the rocprofiler-compute version whose analyze "
                    "tables to reproduce (without it, each folder's own: its sysinfo.csv layout)", compat,
              lm_buf_cstr(&versions));
    lm_buf_fini(&versions);
    return 2;
  }
  int weight = cli_choice(a, "weight", lm_weight_names, "use", 1);
  if (weight < 0) return 2;
  r->f.weight = (lm_weight_kind)weight;
  return 0;
}

/* --db; else, for -w NAME with no such folder, the default store (or
 * $LUMEN_DB) when it holds a workload of that name. Returns 0 or 1. */
static int open_store(analyze_run *r) {
  char url_buf[4096];
  if (cli_has(&r->a, "db")) {
    const char *url = cli_store_url(&r->a, url_buf, sizeof url_buf);
    if (lm_store_open_existing(url, &r->store, &r->diag) != LM_OK) {
      cli_diag(MODE, &r->diag);
      return 1;
    }
  }
  const char *first_w = cli_nth(&r->a, "workload", 0);
  struct stat sb;
  if (!r->store && first_w && stat(first_w, &sb) != 0 && !strchr(first_w, '/')) {
    const char *url = cli_store_url(&r->a, url_buf, sizeof url_buf);
    lm_store *def = NULL;
    lm_store_entry entry;
    lm_diag ignored;
    if (lm_store_open_existing(url, &def, &ignored) == LM_OK && lm_store_get(def, first_w, &entry, &ignored) == LM_OK) {
      lm_log(LM_LOG_INFO, "-w %s: no such folder; the workload of that name in the store %s", first_w, url);
      r->store = def;
    } else {
      lm_store_close(def);
    }
  }
  return 0;
}

/* --clock, --threads, --load, --block-rows, --stat-mem. Returns 0 or 2. */
static int parse_evaluation_flags(analyze_run *r) {
  const cli_args *a = &r->a;
  analyze_flags *f = &r->f;
  int clock = cli_choice(a, "clock", lm_clock_names, "use", 1);
  if (clock < 0) return 2;
  f->clock = (lm_clock_kind)clock;
  if (cli_has(a, "threads") && (!parse_long(cli_get(a, "threads"), &f->threads) || f->threads < 1)) {
    cli_error(MODE, "--threads %s: expected a positive number", cli_get(a, "threads"));
    return 2;
  }
  int load = cli_choice(a, "load", load_names, "use", 1);
  if (load < 0) return 2;
  f->load_whole = load == LOAD_WHOLE;
  if (cli_has(a, "block-rows") && (!parse_long(cli_get(a, "block-rows"), &f->block_rows) || f->block_rows < 1)) {
    cli_error(MODE, "--block-rows %s: expected a positive number", cli_get(a, "block-rows"));
    return 2;
  }
  if (cli_has(a, "stat-mem") && (!parse_long(cli_get(a, "stat-mem"), &f->stat_mem) || f->stat_mem < 0 ||
                                 f->stat_mem > 1024L * 1024 * 1024)) {
    cli_error(MODE, "--stat-mem %s: expected a number of megabytes (0 or more)", cli_get(a, "stat-mem"));
    return 2;
  }
  return 0;
}

/* The -b items. Returns 0, or 1 when out of memory. */
static int split_blocks(analyze_run *r) {
  size_t nb = r->nb = cli_count(&r->a, "block");
  r->blocks = calloc(nb * 8 + 1, sizeof *r->blocks);
  r->block_copies = calloc(nb + 1, sizeof *r->block_copies);
  if (!r->blocks || !r->block_copies) return 1;
  for (size_t i = 0; i < nb; i++) {
    /* -b accepts comma lists, unless the item is a metric name with commas. */
    const char *v = cli_nth(&r->a, "block", i);
    r->block_copies[i] = strdup(v);
    if (!r->block_copies[i]) return 1;
    if (strchr(v, ' ')) {
      r->blocks[r->n_blocks++] = r->block_copies[i];
      continue;
    }
    for (char *tok = strtok(r->block_copies[i], ","); tok && r->n_blocks < nb * 8; tok = strtok(NULL, ","))
      r->blocks[r->n_blocks++] = tok;
  }
  return 0;
}

/* Folder k (-w path) read with the flags' columns and ranks. Returns 0 or 1. */
static int read_folder(analyze_run *r, size_t k, const char *path, uint64_t t0) {
  lm_workload_options wo = r->read_opts;
  wo.defer = !r->f.load_whole;
  wo.eager_columns = lm_analyze_columns;
  wo.levels_lazy = 1;
  /* Every panel: the formulas' inputs are converted while the files
   * are indexed when they fit (with -b only some are read). */
  wo.load_wanted = r->n_blocks == 0;
  /* (bytes: a smaller room, for the tests of the streamed path) */
  const char *load_cap = getenv("LUMEN_LOAD_CAP");
  if (load_cap) wo.load_cap = (size_t)strtoull(load_cap, NULL, 10);
  lm_idset_fini(&r->read_ranks);
  read_ranks_of(&r->a, k, r->n, &r->read_ranks);
  if (!r->read_opts.ranks) wo.ranks = NULL;
  if (r->mpi) wo.parts = r->mpi_api->source(r->mpi);
  lm_status read = lm_workload_read_opts(path, &wo, &r->workloads[k], &r->diag);
  if (r->mpi) r->mpi_api->settle(r->mpi);
  if (read != LM_OK) {
    cli_diag(MODE, &r->diag);
    return 1;
  }
  lm_phase_end("load", t0);
  const lm_workload *w = r->workloads[k];
  size_t deferred = 0;
  for (size_t c = 0; c < w->pmc->n_cols; c++) deferred += lm_table_deferred(w->pmc, c);
  if (deferred)
    lm_log(LM_LOG_DEBUG, "%s: %zu of %zu pmc_perf columns read in blocks of dispatches", path, deferred,
           w->pmc->n_cols);
  lm_log(LM_LOG_DEBUG, "%s: %s, %zu dispatches, %zu columns", path, w->arch, w->pmc->n_rows, w->pmc->n_cols);
  return 0;
}

/* The normalization of workload k: --norm; in a comparison without it,
 * the baseline's default unit, when this one's definitions have it
 * (workloads compared in different semantics, a 3.1 profile against a
 * 3.3 one, are normalized alike). */
static lm_norm_kind workload_norm(analyze_run *r, size_t k, const lm_catalog *cat, const char *path) {
  if (k == 0 && !r->f.norm && r->n > 1 && cat->n_norms) lm_norm_kind_parse(cat->norms[0].name, &r->shared_norm);
  lm_norm_kind norm = r->f.norm;
  const char *shared = lm_norm_kind_name(r->shared_norm);
  if (!r->f.norm && shared && k > 0 && cat->n_norms && strcmp(cat->norms[0].name, shared) != 0) {
    if (lm_analyze_norm_index(cat, r->shared_norm) >= 0) norm = r->shared_norm;
    if (norm)
      lm_log(LM_LOG_INFO, "%s: normalized %s like the baseline (its own default is %s; --norm chooses)", path,
             shared, cat->norms[0].name);
  }
  return norm;
}

/* The analysis options of workload k. Returns 0, or 1 when out of memory. */
static int fill_opts(analyze_run *r, size_t k, lm_norm_kind norm, lm_analyze_opts *o) {
  const cli_args *a = &r->a;
  memset(o, 0, sizeof *o);
  o->kernels = r->filters[k].kernels;
  o->n_kernels = r->filters[k].n_kernels;
  o->kernel_index = r->filters[k].kernel_index;
  o->n_kernel_index = r->filters[k].n_kernel_index;
  o->dispatch = &r->filters[k].dispatch;
  o->gpu = &r->filters[k].gpu;
  o->instance = &r->filters[k].instance;
  o->rank = &r->filters[k].rank;
  o->blocks = r->blocks;
  o->n_blocks = r->n_blocks;
  o->norm = norm;
  o->time_unit = r->f.time_unit;
  o->threads = (int)r->f.threads;
  o->block_rows = (size_t)r->f.block_rows;
  /* 0 MB keeps no values at all (one byte: never 0, the default) */
  o->stat_mem = cli_has(a, "stat-mem") ? (r->f.stat_mem ? (size_t)r->f.stat_mem * 1024 * 1024 : 1) : 0;
  o->stats_only = cli_has(a, "list-stats");
  o->corrected = cli_has(a, "corrected");
  o->clock_measured = r->f.clock == LM_CLOCK_MEASURED;
  o->weight_time = r->f.weight == LM_WEIGHT_TIME;
  size_t n_regions = cli_count(a, "region");
  if (n_regions && !r->region_names) {
    r->region_names = calloc(n_regions + 1, sizeof *r->region_names);
    if (!r->region_names) return 1;
    for (size_t i = 0; i < n_regions; i++) r->region_names[i] = cli_nth(a, "region", i);
  }
  o->regions = r->region_names;
  o->n_regions = n_regions;
  return 0;
}

/* Workload k's analysis: the store's (kept, or evaluated and kept), else
 * evaluated on the folder read. Returns 0 or 1. */
static int evaluate(analyze_run *r, size_t k, const char *path, const lm_catalog *cat, const lm_analyze_opts *o,
                    uint64_t t0) {
  if (r->store) {
    int cached = 0;
    if (lm_store_analyze(r->store, path, cat, o, &r->workloads[k], &r->runs[k], &cached, &r->diag) != LM_OK) {
      if (!r->diag.file[0]) snprintf(r->diag.file, sizeof r->diag.file, "%s", path);
      cli_diag(MODE, &r->diag);
      return 1;
    }
    lm_phase_end(cached ? "load cached analysis" : "load and evaluate", t0);
    if (k == 0) r->first_cached = cached;
    lm_log(LM_LOG_DEBUG, "%s: %s analysis from %s", path, cached ? "a stored" : "a new", lm_store_where(r->store));
  } else if (lm_analyze_run(r->workloads[k], cat, o, &r->runs[k], &r->diag) != LM_OK) {
    if (!r->diag.file[0]) snprintf(r->diag.file, sizeof r->diag.file, "%s", path);
    cli_diag(MODE, &r->diag);
    return 1;
  }
  return 0;
}

/* Warnings on workload k's data: a sysinfo.csv that cannot be right for
 * the GPU (once per workload, with the value the architecture's facts
 * give), a workload of timestamps of no known architecture (no_arch),
 * and a comparison against dispatches that lasted no time. */
static void warn_about_data(const analyze_run *r, size_t k, const char *path, const lm_catalog *cat,
                            const lm_analyze_opts *o, int no_arch) {
  const lm_workload *w = r->workloads[k];
  lm_implausible bad[8];
  size_t n_bad = w ? lm_analyze_check_sysinfo(w, cat, bad, 8) : 0;
  for (size_t i = 0; i < n_bad && i < 8; i++) {
    char expected[64] = "";
    if (!isnan(bad[i].expected)) snprintf(expected, sizeof expected, " (the facts give %g)", bad[i].expected);
    lm_log(LM_LOG_WARN, "%s: sysinfo.csv field '%s' is %s%s: %s; the panels show the reference's numbers from it, "
           "the summary flags figures above their peak", path, bad[i].field, bad[i].value, expected, bad[i].why);
  }
  if (r->runs[k] && no_arch)
    lm_log(LM_LOG_WARN,
           "%s: the architecture is not recorded and no counter was collected: the top kernels and the "
           "dispatch list are shown (--arch, e.g. --arch gfx942, adds the system information)",
           path);
  if (r->runs[k]) cli_pmc_hint(r->runs[k], path);
  if (r->n > 1 && zero_durations(w, o))
    lm_log(LM_LOG_WARN, "%s: every selected dispatch has End_Timestamp == Start_Timestamp; the "
           "comparison's durations and rates against it are undefined (shown blank or inf)", path);
}

/* Workload k (-w): read or looked up in the store, analyzed. Returns 0, or
 * the exit status. */
static int analyze_workload(analyze_run *r, size_t k) {
  const char *path = cli_nth(&r->a, "workload", k);
  uint64_t t0 = lm_phase_begin();
  lm_store_entry entry;
  memset(&entry, 0, sizeof entry);
  if (r->store) {
    /* -w names a workload of the store. */
    if (lm_store_get(r->store, path, &entry, &r->diag) != LM_OK) {
      cli_diag(MODE, &r->diag);
      return 1;
    }
  } else if (read_folder(r, k, path, t0) != 0) {
    return 1;
  }
  /* Each folder in the semantics of the rocprofiler-compute that wrote
   * it (its sysinfo.csv layout), unless --compat says otherwise. */
  const char *compat = r->f.compat;
  const char *wl_compat = compat                        ? compat
                          : r->store && entry.compat[0] ? entry.compat
                          : r->store                    ? NULL
                                                        : lm_sysinfo_compat(&r->workloads[k]->sysinfo);
  if (wl_compat && !compat)
    lm_log(r->n > 1 ? LM_LOG_INFO : LM_LOG_DEBUG,
           "%s: sysinfo.csv has the layout of rocprofiler-compute %s and later: analyzed in its semantics "
           "(--compat %s reads it in another)", path, wl_compat, lm_compat_versions[0]);
  const char *arch = r->store ? entry.arch : r->workloads[k]->arch;
  /* Per-kernel totals (no dispatches) need no architecture. */
  int totals = r->store ? entry.complete && entry.n_dispatches == 0 : lm_workload_totals(r->workloads[k]) != NULL;
  r->totals |= totals;
  const lm_catalog *cat = NULL;
  /* Neither do the top kernels and dispatch list of timestamps alone. */
  int no_arch = !totals && !(arch && *arch);
  r->no_arch |= no_arch;
  if ((totals || no_arch) && !(arch && *arch) && !(cat = cli_layout_catalog())) return 1;
  if (!cat) cat = cli_undefined_nvidia(arch, cli_get(&r->a, "metrics-dir"));
  int undefined = cat != NULL && !totals && !no_arch;
  if (!cat)
    cat = cli_catalog_for(arch, cli_get(&r->a, "metrics-dir"), wl_compat,
                          r->store ? lm_store_where(r->store) : r->workloads[k]->sysinfo_table->path, &r->owned[k]);
  if (!cat) return 1;
  lm_norm_kind norm = workload_norm(r, k, cat, path);
  if (!build_filters(&r->a, k, r->n, &r->filters[k])) return 2;
  lm_analyze_opts *o = &r->all_opts[k];
  if (fill_opts(r, k, norm, o) != 0) return 1;
  if (undefined) {
    r->undefined = 1;
    o->blocks = undefined_blocks;
    o->n_blocks = LM_ARRAY_LEN(undefined_blocks);
  }
  if (evaluate(r, k, path, cat, o, t0) != 0) return 1;
  warn_about_data(r, k, path, cat, o, no_arch);
  return 0;
}

/* Every workload, in -w order. Returns 0, or the exit status. */
static int analyze_all(analyze_run *r) {
  size_t n = r->n;
  r->all_opts = calloc(n, sizeof *r->all_opts);
  r->summaries = calloc(n, sizeof *r->summaries);
  r->summary_loaded = calloc(n, sizeof *r->summary_loaded);
  r->workloads = calloc(n, sizeof *r->workloads);
  r->runs = calloc(n, sizeof *r->runs);
  r->owned = calloc(n, sizeof *r->owned);
  r->filters = calloc(n, sizeof *r->filters);
  if (!r->all_opts || !r->summaries || !r->summary_loaded || !r->workloads || !r->runs || !r->owned || !r->filters)
    return 1;
  for (size_t k = 0; k < n; k++) {
    int status = analyze_workload(r, k);
    if (status != 0) return status;
  }
  /* (per-kernel totals' definitions only lay out their table) */
  if (n > 1 && !r->totals && !r->no_arch && strcmp(r->runs[0]->catalog->arch, r->runs[1]->catalog->arch) != 0)
    lm_log(LM_LOG_WARN, "comparing %s with %s: metrics are matched by id", r->runs[0]->catalog->arch,
           r->runs[1]->catalog->arch);
  return 0;
}

/* --summary of a comparison: every workload's, side by side. Returns 0 or 1. */
static int compare_summaries(analyze_run *r) {
  r->summaries[0] = r->summary;
  for (size_t k = 1; k < r->n; k++) {
    const lm_workload *wk = r->workloads[k];
    if (r->store) {
      if (lm_store_load_for(r->store, cli_nth(&r->a, "workload", k), r->runs[k]->catalog, &r->summary_loaded[k],
                            &r->diag) != LM_OK) {
        cli_diag(MODE, &r->diag);
        return 1;
      }
      wk = r->summary_loaded[k];
    }
    const lm_analyze_opts *ok = &r->all_opts[k];
    const lm_analysis *whole_k = !r->store && !r->nb && !ok->n_kernel_index && !ok->stats_only ? r->runs[k] : NULL;
    if (!summary_for(&r->a, wk, r->runs[k]->catalog, ok, whole_k, &r->summaries[k])) return 1;
  }
  r->f.ropts.summaries = (const lm_summary *const *)r->summaries;
  r->f.ropts.n_summaries = r->n;
  return 0;
}

/* The guided-analysis summary: the first screen of a single workload's
 * text report (not with -b, --list-stats or --full), or on request.
 * Returns 0 or 1. */
static int make_summaries(analyze_run *r) {
  const cli_args *a = &r->a;
  if (r->undefined || r->totals || r->no_arch) return 0;
  int want = cli_has(a, "summary") || (r->n == 1 && r->f.format == CLI_FORMAT_TEXT && !r->nb &&
                                       !cli_has(a, "list-stats") && !cli_has(a, "full"));
  if (!want) return 0;
  /* The first run's analysis serves the summary when it covers the same
   * selection with every table (a store's kept analysis too: it holds the
   * same tables and spreads). */
  const lm_analyze_opts *o = &r->all_opts[0];
  const lm_analysis *whole = !r->nb && !o->n_kernel_index && !o->stats_only ? r->runs[0] : NULL;
  if (r->store && r->first_cached) {
    /* A kept analysis came with system information only: the summary
     * analyzes each kernel, so it needs the dispatches and the columns
     * the analysis reads; with one kernel, whose analysis is the kept one,
     * only those it reads by name (times, the roofline's counters). */
    int one_kernel = 0;
    for (int32_t t = 0; whole && t < whole->n_tables; t++)
      if (whole->tables[t].kind == LM_TABLE_TOP_KERNELS) one_kernel = whole->tables[t].n_rows == 1;
    if (lm_store_load_for(r->store, cli_nth(a, "workload", 0), one_kernel ? NULL : r->runs[0]->catalog,
                          &r->summary_workload, &r->diag) != LM_OK) {
      cli_diag(MODE, &r->diag);
      return 1;
    }
  }
  const lm_workload *w = r->summary_workload ? r->summary_workload : r->workloads[0];
  if (!summary_for(a, w, r->runs[0]->catalog, o, whole, &r->summary)) return 1;
  r->f.ropts.summary = r->summary;
  if (r->summary && r->n > 1 && cli_has(a, "summary")) return compare_summaries(r);
  return 0;
}

/* The report in r->out, for text, CSV or JSON on one stream. Returns 0 or
 * 1 (out of memory). */
static int render_stream(analyze_run *r) {
  const lm_report_opts *ropts = &r->f.ropts;
  const lm_analysis *const *cruns = (const lm_analysis *const *)r->runs;
  int text = r->f.format == CLI_FORMAT_TEXT, summary_only = cli_has(&r->a, "summary") && !r->totals;
  lm_status st = LM_OK;
  /* What the architecture cannot measure: said once, before the rest. */
  if (text) lm_report_unmeasurable_text(cruns, r->n, (size_t)terminal_width(&r->a), &r->out);
  if (ropts->summaries && text) {
    const lm_workload *shown[64];
    size_t m = r->n < 64 ? r->n : 64;
    for (size_t k = 0; k < m; k++) shown[k] = r->workloads[k];
    st = lm_report_summary_compare_text(ropts->summaries, shown, m, (size_t)terminal_width(&r->a), &r->out);
  } else if (r->summary && text) {
    st = lm_report_summary_text(r->summary, r->workloads[0], (size_t)terminal_width(&r->a), ropts->color, &r->out);
    if (st == LM_OK && !summary_only) lm_buf_puts(&r->out, "\n");
  }
  if (st == LM_OK && !(summary_only && text))
    st = r->f.format == CLI_FORMAT_JSON  ? lm_report_json(cruns, r->n, ropts, &r->out)
         : r->f.format == CLI_FORMAT_CSV ? lm_report_csv_stream(cruns, r->n, &r->out)
                                         : lm_report_text(cruns, r->n, ropts, &r->out);
  for (size_t k = 0; st == LM_OK && r->totals && k < r->n; k++) {
    if (!r->workloads[k] || !lm_workload_totals(r->workloads[k])) continue;
    lm_buf line = {0};
    cli_totals_line(cli_nth(&r->a, "workload", k), text ? &r->out : &line);
    if (!text) lm_log(LM_LOG_WARN, "%.*s", (int)(line.len ? line.len - 1 : 0), lm_buf_cstr(&line));
    lm_buf_fini(&line);
  }
  if (st != LM_OK) {
    cli_error(MODE, "out of memory while rendering");
    return 1;
  }
  return 0;
}

/* Writes the report: CSV files into -o DIR, else one stream to -o FILE or
 * stdout (text through a pager on a terminal). Returns 0, or the exit
 * status. */
static int render(analyze_run *r) {
  const cli_args *a = &r->a;
  int text = r->f.format == CLI_FORMAT_TEXT;
  /* Text tables wider than the terminal become blocks per row; --width 0
   * keeps every table a box, however wide. */
  if (text) {
    r->f.ropts.width = terminal_width(a);
    int color = use_color(a, cli_get(a, "output"));
    if (color < 0) return 2;
    r->f.ropts.color = color;
  }
  uint64_t t_render = lm_phase_begin();
  const char *output = cli_get(a, "output");
  if (r->f.format == CLI_FORMAT_CSV && output) {
    if (lm_report_csv_dir((const lm_analysis *const *)r->runs, r->n, output, &r->diag) != LM_OK) {
      cli_diag(MODE, &r->diag);
      return 1;
    }
  } else {
    if (render_stream(r) != 0) return 1;
    if (!(text && !output && page_text(a, &r->out)) && !write_text(output, &r->out)) return 1;
  }
  lm_phase_end("render", t_render);
  return 0;
}

/* Releases everything r holds and ends MPI; returns the exit status. */
static int run_fini(analyze_run *r, int status, uint64_t t_all) {
  lm_idset_fini(&r->read_ranks);
  for (size_t i = 0; r->block_copies && i < r->nb; i++) free(r->block_copies[i]);
  free(r->block_copies);
  free(r->blocks);
  for (size_t k = 0; k < r->n; k++) {
    if (r->runs) lm_analysis_free(r->runs[k]);
    if (r->workloads) lm_workload_free(r->workloads[k]);
    if (r->owned) lm_catalog_free(r->owned[k]);
    if (r->filters) filters_fini(&r->filters[k]);
  }
  free(r->runs);
  free(r->workloads);
  free(r->owned);
  free(r->filters);
  free(r->region_names);
  lm_store_close(r->store);
  lm_summary_free(r->summary);
  lm_workload_free(r->summary_workload);
  for (size_t k = 1; r->summaries && k < r->n; k++) lm_summary_free(r->summaries[k]);
  for (size_t k = 0; r->summary_loaded && k < r->n; k++) lm_workload_free(r->summary_loaded[k]);
  free(r->summaries);
  free(r->summary_loaded);
  free(r->all_opts);
  lm_buf_fini(&r->out);
  cli_self_time(&r->a, t_all);
  cli_args_fini(&r->a);
  if (r->mpi) status = r->mpi_api->end(r->mpi, status);
  column_choice_fini(&r->columns);
  return status;
}

int cmd_analyze(int argc, char **argv, int first) {
  analyze_run r;
  memset(&r, 0, sizeof r);
  lm_diag_clear(&r.diag);
  uint64_t t_all = lm_phase_begin();
  if (cli_parse(argc, argv, first, MODE, MODE_ANALYZE, &r.a) != 0) return 2;
  if (cli_has(&r.a, "help")) {
    cli_help(stdout, MODE);
    cli_args_fini(&r.a);
    return 0;
  }
  cli_apply_verbosity(&r.a);
  setup_reading(&r);
  int status = 0;
  if (cli_has(&r.a, "mpi")) {
    int me = 0;
    status = start_mpi(&r, &me);
    if (status == 0 && me > 0) {
      /* Another process's share: load and send parts, print nothing. */
      status = r.mpi_api->end(r.mpi, r.mpi_api->worker(r.mpi, cli_nth(&r.a, "workload", 0), &r.read_opts));
      lm_idset_fini(&r.read_ranks);
      cli_args_fini(&r.a);
      return status;
    }
  }
  /* Flags are checked in this order (the store opened between), so the
   * first bad one is the one reported. */
  if (status == 0) status = check_usage(&r);
  if (status == 0) status = parse_report_flags(&r);
  if (status == 0) status = parse_analysis_flags(&r);
  if (status == 0) status = open_store(&r);
  if (status == 0) status = parse_evaluation_flags(&r);
  if (status == 0) status = split_blocks(&r);
  if (status == 0) status = analyze_all(&r);
  if (status == 0) status = make_summaries(&r);
  if (status == 0) status = render(&r);
  return run_fini(&r, status, t_all);
}
