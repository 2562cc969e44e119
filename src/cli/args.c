/*
 * args.c - the flag table and its parser, shared by every mode.
 *
 * Flags are kept as an ordered list of occurrences, not collapsed into a
 * struct, because several flags are repeatable (-w, -k, -d, -b) and some
 * apply per workload when repeated once per -w.
 */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"

typedef struct flag {
  const char *name;
  char short_name;
  int takes_value;
  int modes;
  const char *alias_of; /* -p for analyze is -w */
} flag;

static const flag flags[] = {
    {"workload", 'w', 1, MODE_ALL, NULL},
    {"path", 'p', 1, MODE_ANALYZE, "workload"},
    {"name", 'n', 1, MODE_PROFILE | MODE_DB, NULL},
    {"kernel", 'k', 1, MODE_ANALYZE | MODE_PROFILE | MODE_SERVE, NULL},
    {"instance", 0, 1, MODE_ANALYZE | MODE_PROFILE, NULL},
    {"rank", 0, 1, MODE_ANALYZE | MODE_SERVE, NULL},
    {"dispatch", 'd', 1, MODE_ANALYZE | MODE_PROFILE | MODE_SERVE, NULL},
    {"gpu", 'g', 1, MODE_ANALYZE | MODE_PROFILE | MODE_SERVE, NULL},
    {"region", 'r', 1, MODE_ANALYZE | MODE_PROFILE | MODE_SERVE, NULL},
    {"block", 'b', 1, MODE_ANALYZE | MODE_PROFILE, NULL},
    {"norm", 0, 1, MODE_ANALYZE | MODE_SERVE, NULL},
    {"compat", 0, 1, MODE_ANALYZE | MODE_SERVE, NULL},
    {"weight", 0, 1, MODE_ANALYZE | MODE_SERVE, NULL},
    {"output", 'o', 1, MODE_ANALYZE | MODE_LIST | MODE_EXPORT, NULL},
    {"format", 0, 1, MODE_ANALYZE | MODE_LIST | MODE_DB, NULL},
    {"db", 0, 1, MODE_ANALYZE | MODE_DB | MODE_SERVE, NULL},
    {"verbose", 'v', 0, MODE_ALL, NULL},
    {"quiet", 'q', 0, MODE_ALL, NULL},
    {"self-time", 0, 0, MODE_ALL, NULL},
    {"help", 'h', 0, MODE_ALL, NULL},
    {"kernel-index", 0, 1, MODE_ANALYZE, NULL},
    {"list-stats", 0, 0, MODE_ANALYZE, NULL},
    {"summary", 0, 0, MODE_ANALYZE, NULL},
    {"full", 0, 0, MODE_ANALYZE, NULL},
    {"rules-dir", 0, 1, MODE_ANALYZE | MODE_LIST, NULL},
    {"width", 0, 1, MODE_ANALYZE, NULL},
    {"color", 0, 1, MODE_ANALYZE, NULL},
    {"no-pager", 0, 0, MODE_ANALYZE, NULL},
    {"delta", 0, 1, MODE_ANALYZE, NULL},
    {"decimal", 0, 1, MODE_ANALYZE, NULL},
    {"max-stat-num", 0, 1, MODE_ANALYZE, NULL},
    {"time-unit", 0, 1, MODE_ANALYZE, NULL},
    {"metrics-dir", 0, 1, MODE_ANALYZE | MODE_LIST, NULL},
    {"clock", 0, 1, MODE_ANALYZE, NULL},
    {"arch", 0, 1, MODE_ANALYZE | MODE_LIST | MODE_PROFILE | MODE_DB, NULL},
    {"plan", 0, 0, MODE_PROFILE, NULL},
    {"backend", 0, 1, MODE_PROFILE, NULL},
    {"replay", 0, 1, MODE_PROFILE, NULL},
    {"join", 0, 1, MODE_PROFILE, NULL},
    {"resume", 0, 0, MODE_PROFILE, NULL},
    {"timeout", 0, 1, MODE_PROFILE, NULL},
    {"telemetry", 0, 1, MODE_PROFILE, NULL},
    {"split", 0, 1, MODE_PROFILE, NULL},
    {"omniperf", 0, 1, MODE_EXPORT, NULL},
    {"team", 0, 1, MODE_DB, NULL},
    {"listen", 0, 1, MODE_SERVE, NULL},
    {"token", 0, 1, MODE_SERVE, NULL},
    {"token-file", 0, 1, MODE_SERVE, NULL},
    {"header-timeout", 0, 1, MODE_SERVE, NULL},
    {"cache-mb", 0, 1, MODE_SERVE, NULL},
    {"threads", 0, 1, MODE_ANALYZE | MODE_SERVE, NULL},
    {"mpi", 0, 0, MODE_ANALYZE, NULL},
    {"corrected", 0, 0, MODE_ANALYZE | MODE_SERVE, NULL},
    {"load", 0, 1, MODE_ANALYZE, NULL},
    {"block-rows", 0, 1, MODE_ANALYZE, NULL},
    {"stat-mem", 0, 1, MODE_ANALYZE, NULL},
};

const lm_keyword cli_format_names[] = {
    {"text", CLI_FORMAT_TEXT, NULL},
    {"csv", CLI_FORMAT_CSV, NULL},
    {"json", CLI_FORMAT_JSON, NULL},
    {NULL, 0, NULL},
};

int cli_choice(const cli_args *a, const char *flag_name, const lm_keyword *table, const char *verb,
               int with_what) {
  const char *name = cli_get(a, flag_name);
  int value = 0;
  if (!name || lm_keyword_find(table, name, &value)) return value;
  lm_buf names = {0};
  lm_keyword_list(table, ", ", " or ", with_what, &names);
  cli_error(a->mode, "--%s %s: %s %s", flag_name, name, verb, lm_buf_cstr(&names));
  lm_buf_fini(&names);
  return -1;
}

void cli_error(const char *mode, const char *fmt, ...) {
  va_list ap;
  lm_buf text = {0}, shown = {0};
  va_start(ap, fmt);
  lm_buf_vprintf(&text, fmt, ap);
  va_end(ap);
  /* Messages quote names from the data: no raw control bytes on stderr. */
  lm_text_escape(&shown, text.data ? text.data : "", text.len, 0);
  fprintf(stderr, "lumen%s%s: %s\n", mode ? " " : "", mode ? mode : "", lm_buf_cstr(&shown));
  lm_buf_fini(&text);
  lm_buf_fini(&shown);
}

static void print_phase(const char *name, uint64_t ns, unsigned long calls, void *user) {
  (void)user;
  fprintf(stderr, "  %-22s %10.3f ms  (%lu)\n", name, (double)ns / 1e6, calls);
}

void cli_self_time(const cli_args *a, uint64_t t_all) {
  lm_phase_end("total", t_all);
  if (!a->self_time) return;
  fprintf(stderr, "lumen self-time:\n");
  lm_phase_report(print_phase, NULL);
}

void cli_diag(const char *mode, const lm_diag *diag) {
  char line[2048];
  cli_error(mode, "%s", lm_diag_format(diag, line, sizeof line));
}

/* Edit distance between a[0..n) and b (insertions, deletions,
 * substitutions and swaps of neighbours), capped at 9. */
static int distance(const char *a, size_t n, const char *b) {
  size_t m = strlen(b);
  if (n > 40 || m > 40) return 9;
  int d[41][41];
  for (size_t i = 0; i <= n; i++) d[i][0] = (int)i;
  for (size_t j = 0; j <= m; j++) d[0][j] = (int)j;
  for (size_t i = 1; i <= n; i++)
    for (size_t j = 1; j <= m; j++) {
      int cost = a[i - 1] != b[j - 1];
      int best = d[i - 1][j] + 1;
      if (d[i][j - 1] + 1 < best) best = d[i][j - 1] + 1;
      if (d[i - 1][j - 1] + cost < best) best = d[i - 1][j - 1] + cost;
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] && d[i - 2][j - 2] + 1 < best)
        best = d[i - 2][j - 2] + 1;
      d[i][j] = best;
    }
  return d[n][m] < 9 ? d[n][m] : 9;
}

/* The flag of this mode closest to an unknown one, if close enough to be
 * a typo (at most 2 edits, and fewer than half its letters). */
static const char *nearest_flag(const char *name, size_t len, int mode) {
  const char *best = NULL;
  int best_d = 3;
  for (size_t i = 0; i < LM_ARRAY_LEN(flags); i++) {
    if (!(flags[i].modes & mode)) continue;
    int d = distance(name, len, flags[i].name);
    if (d < best_d && (size_t)d * 2 < len) {
      best = flags[i].name;
      best_d = d;
    }
  }
  return best;
}


static const flag *find_long(const char *name, size_t len) {
  for (size_t i = 0; i < LM_ARRAY_LEN(flags); i++)
    if (strlen(flags[i].name) == len && strncmp(flags[i].name, name, len) == 0) return &flags[i];
  return NULL;
}

static const flag *find_short(char c) {
  for (size_t i = 0; i < LM_ARRAY_LEN(flags); i++)
    if (flags[i].short_name == c) return &flags[i];
  return NULL;
}

static int add(cli_args *a, const char *name, const char *value, int workloads) {
  cli_opt *grown = realloc(a->opts, (a->n_opts + 1) * sizeof *grown);
  if (!grown) return 0;
  a->opts = grown;
  a->opts[a->n_opts].name = name;
  a->opts[a->n_opts].value = value;
  a->opts[a->n_opts].workload_index = workloads;
  a->n_opts++;
  return 1;
}

static int parse_inner(int argc, char **argv, int first, const char *mode_name, int mode,
                       cli_args *a) {
  memset(a, 0, sizeof *a);
  a->mode = mode_name;
  int workloads = 0, only_positional = 0;
  for (int i = first; i < argc; i++) {
    const char *arg = argv[i];
    if (only_positional || arg[0] != '-' || arg[1] == '\0') {
      const char **grown = realloc(a->positional, (a->n_positional + 1) * sizeof *grown);
      if (!grown) return 2;
      a->positional = grown;
      a->positional[a->n_positional++] = arg;
      /* profile: the application's own flags follow its name */
      if (mode == MODE_PROFILE) only_positional = 1;
      continue;
    }
    if (strcmp(arg, "--") == 0) {
      only_positional = 1;
      continue;
    }
    const flag *f;
    const char *value = NULL;
    char shown[64];
    if (arg[1] == '-') {
      const char *eq = strchr(arg + 2, '=');
      size_t len = eq ? (size_t)(eq - arg - 2) : strlen(arg + 2);
      f = find_long(arg + 2, len);
      snprintf(shown, sizeof shown, "--%.*s", (int)len, arg + 2);
      if (eq) value = eq + 1;
      if (!f) {
        if (strncmp(arg + 2, "version", len) == 0 && len == 7) {
          add(a, "version", NULL, workloads);
          continue;
        }
        const char *near = nearest_flag(arg + 2, len, mode);
        if (near)
          cli_error(mode_name, "unknown flag %s: did you mean --%s? (see `lumen help%s%s`)", shown, near,
                    mode_name ? " " : "", mode_name ? mode_name : "");
        else
          cli_error(mode_name, "unknown flag %s (see `lumen help%s%s`)", shown, mode_name ? " " : "",
                    mode_name ? mode_name : "");
        return 2;
      }
    } else {
      f = find_short(arg[1]);
      snprintf(shown, sizeof shown, "-%c", arg[1]);
      if (!f) {
        cli_error(mode_name, "unknown flag %s (see `lumen help%s%s`)", shown,
                  mode_name ? " " : "", mode_name ? mode_name : "");
        return 2;
      }
      if (!f->takes_value && arg[2]) {
        /* -vv: repeated switches */
        for (const char *p = arg + 1; *p; p++) {
          const flag *g = find_short(*p);
          if (!g || g->takes_value) {
            cli_error(mode_name, "cannot combine -%c with other switches in %s", *p, arg);
            return 2;
          }
          if (strcmp(g->name, "verbose") == 0) a->verbosity++;
          else if (strcmp(g->name, "quiet") == 0) a->quiet = 1;
          add(a, g->name, NULL, workloads);
        }
        continue;
      }
      if (arg[2]) value = arg + 2;
    }
    if (!(f->modes & mode)) {
      cli_error(mode_name, "%s is not a flag of `lumen %s`", shown, mode_name);
      return 2;
    }
    if (f->takes_value && !value) {
      if (i + 1 >= argc) {
        cli_error(mode_name, "%s needs a value", shown);
        return 2;
      }
      value = argv[++i];
    } else if (!f->takes_value && value) {
      cli_error(mode_name, "%s takes no value", shown);
      return 2;
    }
    const char *name = f->alias_of ? f->alias_of : f->name;
    if (strcmp(name, "verbose") == 0) a->verbosity++;
    if (strcmp(name, "quiet") == 0) a->quiet = 1;
    if (strcmp(name, "self-time") == 0) a->self_time = 1;
    if (!add(a, name, value, workloads)) return 2;
    if (strcmp(name, "workload") == 0) workloads++;
  }
  return 0;
}

void cli_args_fini(cli_args *a) {
  free(a->opts);
  free(a->positional);
  memset(a, 0, sizeof *a);
}

size_t cli_count(const cli_args *a, const char *name) {
  size_t n = 0;
  for (size_t i = 0; i < a->n_opts; i++) n += strcmp(a->opts[i].name, name) == 0;
  return n;
}

const char *cli_get(const cli_args *a, const char *name) {
  const char *v = NULL;
  for (size_t i = 0; i < a->n_opts; i++)
    if (strcmp(a->opts[i].name, name) == 0) v = a->opts[i].value;
  return v;
}

const char *cli_nth(const cli_args *a, const char *name, size_t n) {
  for (size_t i = 0; i < a->n_opts; i++)
    if (strcmp(a->opts[i].name, name) == 0 && n-- == 0) return a->opts[i].value;
  return NULL;
}

int cli_has(const cli_args *a, const char *name) { return cli_count(a, name) > 0; }

int cli_parse(int argc, char **argv, int first, const char *mode_name, int mode, cli_args *a) {
  int status = parse_inner(argc, argv, first, mode_name, mode, a);
  if (status != 0) cli_args_fini(a);
  return status;
}
