/*
 * main.c - lumen's entry point: picks the mode, installs the log sink and
 * prints self-timing. Everything else lives in the library modules.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "analyze/analyze.h"
#include "cli/cli.h"

#ifndef LUMEN_VERSION
#define LUMEN_VERSION "0.0.0"
#endif

static void log_to_stderr(lm_log_level level, const char *message, void *user) {
  (void)user;
  static const char *const colors[] = {"\033[31m", "\033[33m", "", "\033[36m", "\033[90m"};
  int tty = isatty(2);
  lm_buf shown = {0};
  lm_text_escape(&shown, message, strlen(message), 0);
  fprintf(stderr, "%slumen %s:%s %s\n", tty ? colors[level] : "", lm_log_level_name(level),
          tty ? "\033[0m" : "", lm_buf_cstr(&shown));
  lm_buf_fini(&shown);
}

void cli_apply_verbosity(const cli_args *args) {
  int level = (int)lm_log_get_level();
  if (args->quiet) level = LM_LOG_ERROR;
  level += args->verbosity;
  if (level > LM_LOG_TRACE) level = LM_LOG_TRACE;
  lm_log_set(log_to_stderr, NULL, (lm_log_level)level);
}

static const char *const usage_text =
    "lumen " LUMEN_VERSION " - GPU kernel performance analyzer\n"
    "\n"
    "usage: lumen MODE [flags]\n"
    "\n"
    "modes:\n"
    "  profile   run an application and collect its kernels' counters\n"
    "  analyze   evaluate the metric panels of one or more workloads\n"
    "  list      list metrics, architectures, counters or backends\n"
    "  export    write a workload in the rocprofiler-compute folder layout\n"
    "  help      help on a mode (`lumen help profile`)\n"
    "  db        the workload store: import, list, rm, export\n"
    "  serve     the web GUI and a JSON API over folders and a store\n"
    "\n"
    "common flags: -v/--verbose (repeat for more), -q/--quiet, --self-time,\n"
    "              --version, -h/--help; LUMEN_LOG=error|warn|info|debug|trace\n";

static const char *const analyze_help =
    "usage: lumen analyze -w DIR [-w DIR2 ...] [flags]\n"
    "\n"
    "Reads lumen workloads and Omniperf/rocprofiler-compute workload folders\n"
    "(never writes into them) and shows every metric panel. With several -w the first is the\n"
    "baseline and the others are compared with it (value and change in %).\n"
    "For one workload the text report opens with a summary: the kernels that\n"
    "take the most time, their busiest units, their place on the roofline and\n"
    "what the rules (`lumen list rules`) find limits them.\n"
    "\n"
    "  -w, --workload PATH   workload folder, or other tools' files: rocprofv3\n"
    "                        CSV (a file or its output folder), rocprof (v1)\n"
    "                        results or --stats totals (a file or folder), an\n"
    "                        Nsight Compute CSV export (a file, or a folder\n"
    "                        of one); repeatable (-p is accepted too)\n"
    "  --arch ARCH           the GPU architecture of files that do not record\n"
    "                        it (rocprofv3 counters without agent_info.csv,\n"
    "                        Nsight Compute 2020 exports: --arch sm_70)\n"
    "  -k, --kernel REGEX    kernels whose name matches (PCRE2); '!REGEX'\n"
    "                        excludes; repeatable\n"
    "  --kernel-index N      row N of the top-kernels table (0 = longest)\n"
    "  -d, --dispatch SPEC   Dispatch_ID values: 3  2,5  4:8 (8 excluded)  >10\n"
    "  -g, --gpu SPEC        GPU_ID values, same syntax\n"
    "  --instance SPEC       per-kernel instance numbers from 0: 3  4:8  ::4\n"
    "  --rank SPEC           MPI ranks, same syntax (a folder of rank.R parts\n"
    "                        or a profile of mpirun is read as one workload)\n"
    "  --mpi                 under `mpirun -np K`: K processes read the rank.R\n"
    "                        parts; process 0 prints the single-process result\n"
    "  -r, --region NAME     dispatches inside region NAME (lumen profiles of\n"
    "                        programs with markers); repeatable\n"
    "  -b, --block ITEM      panel (2), table (2.1), metric id (2.1.3), metric\n"
    "                        name (\"VALU FLOPs\") or hardware block (TCC);\n"
    "                        repeatable\n"
      "@norm\n"
    "  --compat VERSION      the rocprofiler-compute version whose tables to\n"
    "                        reproduce: 3.0 or 3.3 (default: each folder in\n"
    "                        the semantics of the version that wrote it, by\n"
    "                        its sysinfo.csv layout)\n"
    "@weight\n"
    "  --format FMT          text (default), csv, json\n"
    "  -o, --output PATH     file for text and json; folder for csv (one\n"
    "                        <table id>.csv per table)\n"
    "  --decimal N           digits shown in text output (default 2)\n"
    "  --max-stat-num N      rows of the top-kernels and dispatch tables (10)\n"
    "@time-unit\n"
    "  --metrics-dir DIR     your own metric definitions (see docs/metric-format.md)\n"
    "  --db URL              -w names workloads of this store (see `lumen help db`)\n"
    "  --list-stats          only the kernel and dispatch lists\n"
    "  --summary             only the summary (text); with --format json, the\n"
    "                        panels plus a \"summary\" object\n"
    "  --full                only the panels, no summary\n"
    "  --rules-dir DIR       your own rules besides the built-in ones (see\n"
    "                        docs/rules.md)\n"
    "  --width N             lay text out for N columns (default: the\n"
    "                        terminal's, else $COLUMNS, else 80; 0: tables\n"
    "                        as wide as they need)\n"
    "  --color WHEN          auto (default: on a terminal, unless NO_COLOR is\n"
    "                        set), always or never\n"
    "  --no-pager            long text on a terminal is not paged ($PAGER,\n"
    "                        else less -FRX)\n"
    "  --delta lumen|reference  how comparisons compute the change in %:\n"
    "                        lumen's (default, full precision; n/a against 0)\n"
    "                        or the reference tool's (rounded; divides by 1)\n"
    "@clock\n"
    "  --corrected           fix the reference tool's known mistakes (units as\n"
    "                        written, e.g. GB/s; corrected formulas, see\n"
    "                        docs/compatibility.md); default: its exact output\n"
    "  --load stream|whole   stream (default): counter columns stay in the\n"
    "                        file and are read a block of dispatches at a time,\n"
    "                        and only those analysis reads are loaded from\n"
    "                        lumen databases (and with --rank, only the\n"
    "                        selected rank.R parts); whole: every column (every\n"
    "                        part) in memory. The same output (docs/streaming.md)\n"
    "  --block-rows N        dispatches per block when streaming (default 2048)\n"
    "  --stat-mem MB         memory for the values of medians and quartiles\n"
    "                        (default 1280); above it they are found exactly by\n"
    "                        reading the blocks again (0: always)\n"
    "\n"
    "A filter flag (-k, --kernel-index, -d, -g, --instance, --rank) given once applies\n"
    "to every workload; given once per -w, the n-th applies to the n-th\n"
    "workload. Otherwise repeated values add up.\n";

static const char *const profile_help =
    "usage: lumen profile -n NAME [-w DIR] [flags] -- APP [ARGS...]\n"
    "       lumen profile --plan --arch ARCH [-b ITEM ...]\n"
    "       lumen profile -w DIR --resume [--replay auto]\n"
    "\n"
    "Runs APP with lumen's tool library loaded and collects the hardware\n"
    "counters that the asked-for metrics need, packed into counter sets under\n"
    "the GPU's per-block limits. Writes a lumen workload folder (DIR, default\n"
    "workloads/NAME) holding lumen.db; `lumen analyze -w DIR` reads it. Each\n"
    "finished run is kept: a profile stopped at run k continues with --resume.\n"
    "It never overwrites a workload.\n"
    "\n"
    "  -n, --name NAME       the workload's name\n"
    "  -w, --workload DIR    the folder to write (default workloads/NAME)\n"
    "  -b, --block ITEM      collect only what these panels, tables, metrics or\n"
    "                        hardware blocks need (repeatable; default: all)\n"
    "  --replay MODE         app: one application run per counter set (default);\n"
    "                        instance: one run, successive instances of a kernel\n"
    "                        cycle through the sets; auto: instance, then extra\n"
    "                        runs only for the sets some dispatches miss\n"
    "  --join kernel|grid    line instances up per kernel name (default) or per\n"
    "                        kernel name and launch parameters\n"
    "  -k, --kernel REGEX    collect kernels whose name matches; '!REGEX' excludes\n"
    "  --instance SPEC       instances of each kernel from 0: 3  4:8  ::4\n"
    "  -d, --dispatch SPEC   dispatch numbers: 3  2,5  4:8\n"
    "  -g, --gpu SPEC        GPU ids\n"
    "  -r, --region NAME     only dispatches inside region NAME (lumen markers,\n"
    "                        ROCTx or NVTX ranges); repeatable\n"
    "  --plan                print the counter sets and why each counter is\n"
    "                        needed, then stop (with --arch, no device needed)\n"
    "  --backend NAME        counter backend (see `lumen list backends`)\n"
    "  --resume              continue the unfinished profile in -w DIR\n"
    "  --timeout SECONDS     stop a run of the application that takes longer\n"
    "                        (recorded as timed out; --resume runs it again)\n"
    "  --telemetry auto|none clock sampling during the runs (auto: the first\n"
    "                        sampler that works); without samples a dispatch's\n"
    "                        clock is estimated from GRBM_GUI_ACTIVE / duration\n"
    "  --split ranks         MPI rank r collects every N-th counter set from set r\n"
    "                        (N ranks), so ceil(sets / N) runs collect all; with\n"
    "                        lumen inside mpirun or outside it (lumen profile\n"
    "                        --split ranks -- mpirun -np N APP); the ranks' parts\n"
    "                        are DIR/rank.R, combined by `lumen analyze -w DIR`\n"
    "\n"
    "A dispatch that is not selected costs no counter collection. Without a\n"
    "supported GPU runtime, the simulated device (LUMEN_SIM_RECORDING=a recorded\n"
    "workload folder) replays recorded counters: it is for tests and demos and\n"
    "never a measurement.\n"
    "\n"
    "The application runs in its own process group: SIGINT, SIGTERM and SIGHUP\n"
    "sent to lumen are passed on to it, and whatever is left of the group when\n"
    "the application ends, or lumen exits, is killed.\n";

static const char *const export_help =
    "usage: lumen export -w WORKLOAD --omniperf DIR\n"
    "\n"
    "Writes the workload (a lumen profile, or any folder lumen reads) as a new\n"
    "folder DIR in the rocprofiler-compute layout: pmc_perf.csv, the SQ_*\n"
    "accumulate tables, sysinfo.csv and roofline.csv, every column under the\n"
    "name it was read with and every text cell as it was read, so that lumen\n"
    "analyze -w DIR gives the workload's tables. A profile of the simulated\n"
    "device stays marked as one (DIR/lumen_origin.txt).\n";

static const char *const db_help =
    "usage: lumen db import -w DIR [-w DIR ...] [-n NAME] [--team T] [--db URL]\n"
    "       lumen db list [--format csv|json] [--db URL]\n"
    "       lumen db rm NAME [NAME ...] [--db URL]\n"
    "       lumen db export NAME -w DIR [--db URL]\n"
    "\n"
    "The store holds many workloads: a SQLite file (default\n"
    "~/.local/share/lumen/lumen.db, or $LUMEN_DB) or a PostgreSQL database\n"
    "(--db postgresql://user@host/db). import takes lumen workload folders\n"
    "and Omniperf/rocprofiler-compute folders; importing the same contents\n"
    "again finds the copy already there, and a failed import leaves nothing.\n"
    "export writes a workload as a lumen workload folder. list shows, for an\n"
    "MPI profile imported from its rank.R parts, how many ranks and hosts it\n"
    "has (\"1,024 ranks on 4 hosts\"; csv and json: ranks, hosts). Then:\n"
    "  lumen analyze --db URL -w NAME     (the same output as the folder)\n";

static const char *const serve_help =
    "usage: lumen serve [-w DIR ...] [--db URL] [--listen ADDR:PORT] [--token T | --token-file F]\n"
    "\n"
    "Serves the web GUI and its JSON API (read-only) over workload folders and\n"
    "a store. Open the printed URL in a browser. The default address is\n"
    "loopback (127.0.0.1:8080); another address needs a token of at least 16\n"
    "characters, sent by clients as `Authorization: Bearer T` (open the GUI\n"
    "once as http://HOST:PORT/?token=T: the page keeps it in a cookie; API\n"
    "calls never take it from the URL). On loopback only requests for\n"
    "127.0.0.1, localhost or [::1] are answered. Stop it with Ctrl-C.\n"
    "\n"
    "  -w, --workload DIR    a workload folder to serve (repeatable)\n"
    "  --db URL              serve the workloads of this store\n"
    "  --listen ADDR:PORT    where to listen (port 0: any free port)\n"
    "  --threads N           analyses evaluated at once (default 2)\n"
    "  --cache-mb N          memory for loaded workloads and kept answers\n"
    "                        (default 2048; answers take at most a quarter)\n"
    "  --header-timeout S    seconds a client may take to send a request's\n"
    "                        headers before it is disconnected (default 10)\n"
    "\n"
    "API: GET /api/workloads, /api/info?w=ID, /api/analysis?w=ID[&base=ID]\n"
    "[&k=REGEX][&kn=NAME][&d=SPEC][&g=SPEC][&i=SPEC][&r=REGION][&b=ITEM]\n"
    "[&norm={norm}], /api/roofline?w=ID[...],\n"
    "/api/summary?w=ID[...] (what limits each top kernel, see docs/rules.md).\n";

static const char *const list_help =
    "usage: lumen list metrics [--arch ARCH] [-v]\n"
    "       lumen list architectures\n"
    "       lumen list counters --arch ARCH\n"
    "       lumen list backends\n"
    "       lumen list rules [--arch ARCH] [--rules-dir DIR] [-v]\n"
    "\n"
    "No workload is needed. --metrics-dir DIR lists your own definitions;\n"
    "rules are checked against each architecture's metrics as they are listed.\n";

/* The options whose values are a table's names (src/analyze/options.c,
 * also the server's): the help spells none of them by hand. */
static const struct {
  const char *flag;        /* without "--" */
  const lm_keyword *table;
  int by_default;          /* the value used when the flag is not given */
  int by_default_33;       /* the one in 3.3 semantics, if other (else 0) */
  const char *lead;        /* the description, before the values' meanings */
  int with_what;           /* the description says what each value means */
} help_options[] = {
    {"norm", lm_norm_names, LM_NORM_PER_WAVE, LM_NORM_PER_KERNEL, "the counters' normalization", 0},
    {"weight", lm_weight_names, LM_WEIGHT_COUNT, 0, "averages over dispatches", 1},
    {"time-unit", lm_time_unit_names, LM_TIME_UNIT_NS, 0, "the time unit of the top tables", 0},
    {"clock", lm_clock_names, LM_CLOCK_MAX, 0, "the clocks of the peaks (lumen profiles sample them)", 1},
};

#define HELP_INDENT 24 /* where a flag's description starts */
#define HELP_WIDTH 78  /* no help line passes this column */

/* The help entry of flag: "  --FLAG a|b|c" and its description, which
 * ends with the default, wrapped at HELP_WIDTH under column HELP_INDENT. */
static void put_option(FILE *out, const char *flag) {
  size_t k = 0;
  while (k < LM_ARRAY_LEN(help_options) && strcmp(help_options[k].flag, flag) != 0) k++;
  if (k == LM_ARRAY_LEN(help_options)) return;
  lm_buf head = {0}, text = {0};
  lm_buf_printf(&head, "  --%s ", flag);
  lm_keyword_list(help_options[k].table, "|", "|", 0, &head);
  const char *by_default = lm_keyword_name(help_options[k].table, help_options[k].by_default);
  lm_buf_puts(&text, help_options[k].lead);
  if (help_options[k].with_what) {
    lm_buf_puts(&text, ": ");
    lm_keyword_list(help_options[k].table, ", ", " or ", 1, &text);
    lm_buf_printf(&text, "; default %s", by_default);
  } else {
    lm_buf_printf(&text, " (default %s", by_default);
    if (help_options[k].by_default_33)
      lm_buf_printf(&text, "; %s in 3.3 semantics",
                    lm_keyword_name(help_options[k].table, help_options[k].by_default_33));
    lm_buf_putc(&text, ')');
  }
  fputs(lm_buf_cstr(&head), out);
  /* The description beside the flag, two spaces after a long one; below
   * a very long one. */
  size_t col = head.len;
  if (col + 2 > HELP_WIDTH / 2) {
    fputc('\n', out);
    col = 0;
  }
  size_t start = col + 2 > HELP_INDENT ? col + 2 : HELP_INDENT;
  int fresh = 1; /* nothing of the description on this line yet */
  for (const char *w = lm_buf_cstr(&text); *w;) {
    size_t n = strcspn(w, " ");
    if (!fresh && col + 1 + n > HELP_WIDTH) {
      fputc('\n', out);
      col = 0;
      start = HELP_INDENT;
      fresh = 1;
    }
    if (fresh) {
      fprintf(out, "%*s", (int)(start - col), "");
      col = start;
      fresh = 0;
    } else {
      fputc(' ', out);
      col++;
    }
    fwrite(w, 1, n, out);
    col += n;
    w += n;
    while (*w == ' ') w++;
  }
  fputc('\n', out);
  lm_buf_fini(&head);
  lm_buf_fini(&text);
}

/* A help text: a line "@FLAG" is that option's entry (put_option), and
 * "{FLAG}" the option's values joined by '|'. */
static void put_help(FILE *out, const char *text) {
  while (*text) {
    size_t n = strcspn(text, "\n");
    if (*text == '@') {
      char flag[32];
      snprintf(flag, sizeof flag, "%.*s", (int)(n - 1), text + 1);
      put_option(out, flag);
    } else {
      for (size_t i = 0; i < n; i++) {
        const char *close = text[i] == '{' ? memchr(text + i, '}', n - i) : NULL;
        size_t k = 0;
        while (close && k < LM_ARRAY_LEN(help_options) &&
               (strlen(help_options[k].flag) != (size_t)(close - text - i - 1) ||
                strncmp(help_options[k].flag, text + i + 1, (size_t)(close - text - i - 1)) != 0))
          k++;
        if (!close || k == LM_ARRAY_LEN(help_options)) {
          fputc(text[i], out);
          continue;
        }
        lm_buf names = {0};
        lm_keyword_list(help_options[k].table, "|", "|", 0, &names);
        fputs(lm_buf_cstr(&names), out);
        lm_buf_fini(&names);
        i = (size_t)(close - text);
      }
      if (text[n] == '\n') fputc('\n', out);
    }
    text += n + (text[n] == '\n');
  }
}

void cli_help(FILE *out, const char *mode) {
  if (mode && strcmp(mode, "analyze") == 0) put_help(out, analyze_help);
  else if (mode && strcmp(mode, "list") == 0) fputs(list_help, out);
  else if (mode && strcmp(mode, "profile") == 0) fputs(profile_help, out);
  else if (mode && strcmp(mode, "export") == 0) fputs(export_help, out);
  else if (mode && strcmp(mode, "db") == 0) fputs(db_help, out);
  else if (mode && strcmp(mode, "serve") == 0) put_help(out, serve_help);
  else fputs(usage_text, out);
}

int main(int argc, char **argv) {
  lm_log_level level = LM_LOG_INFO;
  const char *env = getenv("LUMEN_LOG");
  if (env && !lm_log_parse_level(env, &level))
    fprintf(stderr, "lumen: LUMEN_LOG=%s is not a level (error, warn, info, debug, trace)\n", env);
  lm_log_set(log_to_stderr, NULL, level);
  if (argc < 2) {
    fputs(usage_text, stderr);
    return 2;
  }
  const char *mode = argv[1];
  if (strcmp(mode, "--version") == 0 || strcmp(mode, "version") == 0) {
    printf("lumen %s\n", LUMEN_VERSION);
    return 0;
  }
  if (strcmp(mode, "-h") == 0 || strcmp(mode, "--help") == 0) {
    fputs(usage_text, stdout);
    return 0;
  }
  if (strcmp(mode, "help") == 0) {
    static const char *const modes[] = {"profile", "analyze", "list", "export", "db", "serve", "help", NULL};
    int known = argc <= 2;
    for (size_t i = 0; !known && modes[i]; i++) known = strcmp(argv[2], modes[i]) == 0;
    if (!known) {
      cli_error(NULL, "help %s: no such mode (modes: profile, analyze, list, export, db, serve)", argv[2]);
      return 2;
    }
    cli_help(stdout, argc > 2 ? argv[2] : NULL);
    return 0;
  }
  if (strcmp(mode, "analyze") == 0) return cmd_analyze(argc, argv, 2);
  if (strcmp(mode, "list") == 0) return cmd_list(argc, argv, 2);
  if (strcmp(mode, "profile") == 0) return cmd_profile(argc, argv, 2);
  if (strcmp(mode, "export") == 0) return cmd_export(argc, argv, 2);
  if (strcmp(mode, "db") == 0) return cmd_db(argc, argv, 2);
  if (strcmp(mode, "serve") == 0) return cmd_serve(argc, argv, 2);
  cli_error(NULL, "unknown mode '%s' (modes: profile, analyze, list, export, db, serve, help)", mode);
  return 2;
}
