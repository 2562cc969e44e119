/*
 * main.c - lumen's entry point: picks the mode, installs the log sink and
 * prints self-timing. Everything else lives in the library modules.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"

#ifndef LUMEN_VERSION
#define LUMEN_VERSION "0.0.0"
#endif

static void log_to_stderr(lm_log_level level, const char *message, void *user) {
  (void)user;
  static const char *const colors[] = {"\033[31m", "\033[33m", "", "\033[36m", "\033[90m"};
  int tty = isatty(2);
  fprintf(stderr, "%slumen %s:%s %s\n", tty ? colors[level] : "", lm_log_level_name(level),
          tty ? "\033[0m" : "", message);
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
    "  analyze   evaluate the metric panels of one or more workloads\n"
    "  list      list metrics, architectures or counters\n"
    "  help      help on a mode (`lumen help analyze`)\n"
    "  profile, db, serve, export: not part of this build yet\n"
    "\n"
    "common flags: -v/--verbose (repeat for more), -q/--quiet, --self-time,\n"
    "              --version, -h/--help; LUMEN_LOG=error|warn|info|debug|trace\n";

static const char *const analyze_help =
    "usage: lumen analyze -w DIR [-w DIR2 ...] [flags]\n"
    "\n"
    "Reads Omniperf/rocprofiler-compute workload folders (never writes into\n"
    "them) and shows every metric panel. With several -w the first is the\n"
    "baseline and the others are compared with it (value and change in %).\n"
    "\n"
    "  -w, --workload DIR    workload folder (repeatable; -p is accepted too)\n"
    "  -k, --kernel REGEX    kernels whose name matches (PCRE2); '!REGEX'\n"
    "                        excludes; repeatable\n"
    "  --kernel-index N      row N of the top-kernels table (0 = longest)\n"
    "  -d, --dispatch SPEC   Dispatch_ID values: 3  2,5  4:8 (8 excluded)  >10\n"
    "  -g, --gpu SPEC        GPU_ID values, same syntax\n"
    "  --instance SPEC       per-kernel instance numbers from 0: 3  4:8  ::4\n"
    "  -b, --block ITEM      panel (2), table (2.1), metric id (2.1.3), metric\n"
    "                        name (\"VALU FLOPs\") or hardware block (TCC);\n"
    "                        repeatable\n"
    "  --norm UNIT           per_wave (default), per_cycle, per_second, per_kernel\n"
    "  --format FMT          text (default), csv, json\n"
    "  -o, --output PATH     file for text and json; folder for csv (one\n"
    "                        <table id>.csv per table)\n"
    "  --decimal N           digits shown in text output (default 2)\n"
    "  --max-stat-num N      rows of the top-kernels and dispatch tables (10)\n"
    "  --time-unit U         s, ms, us, ns (default ns) for the top tables\n"
    "  --metrics-dir DIR     your own metric definitions (see docs/metric-format.md)\n"
    "  --list-stats          only the kernel and dispatch lists\n"
    "  --corrected           fix the reference tool's known mistakes (units as\n"
    "                        written, e.g. GB/s; corrected formulas, see\n"
    "                        docs/compatibility.md); default: its exact output\n"
    "\n"
    "A filter flag (-k, --kernel-index, -d, -g, --instance) given once applies\n"
    "to every workload; given once per -w, the n-th applies to the n-th\n"
    "workload. Otherwise repeated values add up.\n";

static const char *const list_help =
    "usage: lumen list metrics [--arch ARCH] [-v]\n"
    "       lumen list architectures\n"
    "       lumen list counters --arch ARCH\n"
    "\n"
    "No workload is needed. --metrics-dir DIR lists your own definitions.\n";

void cli_help(FILE *out, const char *mode) {
  if (mode && strcmp(mode, "analyze") == 0) fputs(analyze_help, out);
  else if (mode && strcmp(mode, "list") == 0) fputs(list_help, out);
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
    cli_help(stdout, argc > 2 ? argv[2] : NULL);
    return 0;
  }
  if (strcmp(mode, "analyze") == 0) return cmd_analyze(argc, argv, 2);
  if (strcmp(mode, "list") == 0) return cmd_list(argc, argv, 2);
  if (strcmp(mode, "profile") == 0) return cmd_profile(argc, argv, 2);
  if (strcmp(mode, "db") == 0 || strcmp(mode, "serve") == 0 ||
      strcmp(mode, "export") == 0) {
    cli_error(mode, "this mode is not part of this build yet");
    return 2;
  }
  cli_error(NULL, "unknown mode '%s' (modes: analyze, list, help)", mode);
  return 2;
}
