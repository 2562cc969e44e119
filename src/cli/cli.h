/*
 * cli.h - the command line: one flag table for every mode, so a flag means
 * the same thing wherever it exists and a mode that cannot use a flag says
 * so. The CLI is the only layer that prints or exits.
 */
#ifndef LUMEN_CLI_H
#define LUMEN_CLI_H

#include <stddef.h>
#include <stdio.h>

#include "base/base.h"

enum {
  MODE_ANALYZE = 1 << 0,
  MODE_PROFILE = 1 << 1,
  MODE_LIST = 1 << 2,
  MODE_DB = 1 << 3,
  MODE_SERVE = 1 << 4,
  MODE_EXPORT = 1 << 5,
  MODE_ALL = 0xff
};

/* One occurrence of a flag on the command line. */
typedef struct cli_opt {
  const char *name;  /* long name without dashes: "workload" */
  const char *value; /* NULL for switches */
  int workload_index;/* how many -w were seen before it */
} cli_opt;

typedef struct cli_args {
  const char *mode;
  cli_opt *opts;
  size_t n_opts;
  const char **positional;
  size_t n_positional;
  int verbosity;     /* -v count minus -q */
  int quiet;
  int self_time;
} cli_args;

/* cli_parse: parse argv[first..argc) for `mode` (a MODE_* bit). Prints a
 * one-line error and returns 2 on a usage error, else 0. */
int cli_parse(int argc, char **argv, int first, const char *mode_name, int mode,
              cli_args *out);
void cli_args_fini(cli_args *args);

/* cli_count / cli_get / cli_nth: occurrences of a flag, the last value, the
 * n-th value. */
size_t cli_count(const cli_args *args, const char *name);
const char *cli_get(const cli_args *args, const char *name);
const char *cli_nth(const cli_args *args, const char *name, size_t n);
int cli_has(const cli_args *args, const char *name);

/* --format of analyze and db list. */
typedef enum cli_format { CLI_FORMAT_TEXT = 1, CLI_FORMAT_CSV, CLI_FORMAT_JSON } cli_format;
extern const lm_keyword cli_format_names[];

/* cli_choice: the value of the last `flag`, one of the names of table: 0
 * when the flag is not given (table values are not 0); -1 for another
 * name, after printing "lumen MODE: --FLAG NAME: VERB a, b or c" (each
 * name followed by what it means when with_what). */
int cli_choice(const cli_args *args, const char *flag, const lm_keyword *table, const char *verb, int with_what);

/* cli_self_time: with --self-time, end the "total" phase begun at t_all
 * and print every phase's wall time and count to stderr. */
void cli_self_time(const cli_args *a, uint64_t t_all);

/* cli_error: print "lumen MODE: message" to stderr. */
void cli_error(const char *mode, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
/* cli_diag: print a diagnostic as one line. */
void cli_diag(const char *mode, const lm_diag *diag);

/* cli_apply_verbosity: -v raises and -q lowers the log level. */
void cli_apply_verbosity(const cli_args *args);

/* Modes. Each returns the process exit status. */
int cmd_analyze(int argc, char **argv, int first);
int cmd_list(int argc, char **argv, int first);
int cmd_profile(int argc, char **argv, int first);
int cmd_export(int argc, char **argv, int first);
int cmd_db(int argc, char **argv, int first);
int cmd_serve(int argc, char **argv, int first);
/* cli_store_url: --db, else LUMEN_DB, else the default store path. */
const char *cli_store_url(const cli_args *args, char *buf, size_t cap);
void cli_help(FILE *out, const char *mode);

/* lumen analyze --mpi: the module src/ranks/mpi.c (built with MPI only). */
struct lm_ranks_mpi_api;
/* cli_mpi_load: open lumen-mpi.so from the binary's folder (once) and
 * return its table; NULL, with the reason in err, when it cannot be. */
const struct lm_ranks_mpi_api *cli_mpi_load(char *err, size_t cap);

/* cli_pmc_hint: for an analysis of a workload read from another tool's
 * files with metrics "not collected", a warning with the rocprofv3 --pmc
 * lists that would collect the panels' missing counters (pmc_hint.c). */
struct lm_analysis;
void cli_pmc_hint(const struct lm_analysis *an, const char *path);

/* cli_catalog_for: the catalog for `arch` in reference version compat
 * (NULL: the default), built in or compiled from metrics_dir (then owned
 * by *owned, freed by the caller); NULL after saying why (catalog.c). */
struct lm_catalog;
const struct lm_catalog *cli_catalog_for(const char *arch, const char *metrics_dir, const char *compat,
                                         const char *sysinfo_path, struct lm_catalog **owned);
/* cli_undefined_nvidia: for an NVIDIA architecture without definitions,
 * a catalog whose panels 0 and 1 read no counter, with a warning; NULL
 * for any other architecture or with metrics_dir. */
const struct lm_catalog *cli_undefined_nvidia(const char *arch, const char *metrics_dir);
/* cli_layout_catalog: for a workload of per-kernel totals whose
 * architecture is not known, built-in definitions that only lay out its
 * top-kernels table (which reads no counter); NULL after saying why. */
const struct lm_catalog *cli_layout_catalog(void);
/* cli_totals_line: the line that says a workload holds per-kernel totals
 * only, appended to out (catalog.c). */
struct lm_buf;
void cli_totals_line(const char *path, struct lm_buf *out);

#endif
