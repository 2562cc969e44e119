/*
 * profile_cmd.c - `lumen profile`: plan counter sets and collect them.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "backend/cupti_host.h"
#include "cli/cli.h"
#include "profile/profile.h"

#define MODE "profile"

/* The tool library: LUMEN_TOOL_LIBRARY, else next to this binary (the
 * build tree keeps it in ../tool/, an installation in ../lib/lumen/). */
static int find_tool(char *out, size_t cap) {
  const char *env = getenv("LUMEN_TOOL_LIBRARY");
  if (env && *env) {
    snprintf(out, cap, "%s", env);
    return access(out, R_OK) == 0;
  }
  char exe[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
  if (n <= 0) return 0;
  exe[n] = '\0';
  char *slash = strrchr(exe, '/');
  if (!slash) return 0;
  *slash = '\0';
  static const char *const rel[] = {"../tool/liblumen_tool.so", "../lib/lumen/liblumen_tool.so",
                                    "../lib/liblumen_tool.so", "liblumen_tool.so"};
  for (size_t i = 0; i < sizeof rel / sizeof rel[0]; i++) {
    char candidate[PATH_MAX + 64];
    snprintf(candidate, sizeof candidate, "%s/%s", exe, rel[i]);
    if (access(candidate, R_OK) == 0 && realpath(candidate, out)) return 1;
  }
  return 0;
}

static int parse_replay(const char *v) {
  if (!v) return -1;
  if (strcmp(v, "app") == 0) return LM_REPLAY_APP;
  if (strcmp(v, "instance") == 0) return LM_REPLAY_INSTANCE;
  if (strcmp(v, "auto") == 0) return LM_REPLAY_AUTO;
  if (strcmp(v, "kernel") == 0) return LM_REPLAY_KERNEL;
  return -2;
}

/* The pass counter of NVIDIA plans: CUPTI's Host API for one chip. */
typedef struct cupti_ctx {
  lm_cupti_host *host;
  const char *chip;
} cupti_ctx;

static lm_status cupti_count(void *ctx, const char *const *names, size_t n, int32_t *passes,
                             size_t *image_bytes, lm_diag *diag) {
  cupti_ctx *c = ctx;
  return lm_cupti_host_passes(c->host, c->chip, names, n, passes, image_bytes, NULL, diag);
}

/* --plan for an NVIDIA architecture: sets priced by CUPTI. */
static int plan_nvidia(const lm_catalog *cat, const char *const *items, size_t n_items,
                       int replay, lm_plan **plan, lm_diag *diag) {
  cupti_ctx c = {NULL, cat->chip};
  if (lm_cupti_host_open(&c.host, diag) != LM_OK) return 1;
  lm_status st = lm_plan_build_passes(cat, items, n_items, replay, cupti_count, &c, plan, diag);
  lm_cupti_host_close(c.host);
  return st == LM_OK ? 0 : st == LM_EINVAL ? 2 : 1;
}

/* split_items: the -b values into items (room for nb * 8 + 1): a value
 * with a space is one item, else each comma-separated part is one; the
 * items point into copies[0..nb), which the caller frees. -1 when out of
 * memory. */
static int split_items(cli_args *a, size_t nb, const char **items, char **copies, size_t *n_items) {
  for (size_t i = 0; i < nb; i++) {
    const char *v = cli_nth(a, "block", i);
    copies[i] = strdup(v);
    if (!copies[i]) return -1;
    if (strchr(v, ' ')) {
      items[(*n_items)++] = copies[i];
      continue;
    }
    for (char *tok = strtok(copies[i], ","); tok && *n_items < nb * 8; tok = strtok(NULL, ","))
      items[(*n_items)++] = tok;
  }
  return 0;
}

/* plan_only: --plan: the counter sets of items for --arch, printed; the
 * exit status. */
static int plan_only(cli_args *a, const char *const *items, size_t n_items) {
  int status = 2;
  lm_plan *plan = NULL;
  lm_buf out = {0};
  lm_diag diag;
  lm_diag_clear(&diag);
  const char *arch = cli_get(a, "arch");
  if (!arch) {
    cli_error(MODE, "--plan needs --arch ARCH when no device is present (see `lumen list "
                    "architectures`)");
    goto done;
  }
  const lm_catalog *cat = lm_metrics_builtin_find(arch);
  if (!cat) {
    cli_error(MODE, "--arch %s: no definitions for this architecture (see `lumen list "
                    "architectures`)", arch);
    goto done;
  }
  int replay = parse_replay(cli_get(a, "replay"));
  if (replay == -2) {
    cli_error(MODE, "--replay %s: expected app, instance, kernel or auto", cli_get(a, "replay"));
    goto done;
  }
  if (strcmp(cat->vendor, "nvidia") == 0) {
    if (replay < 0 || replay == LM_REPLAY_AUTO) replay = LM_REPLAY_APP;
    status = plan_nvidia(cat, items, n_items, replay, &plan, &diag);
    if (status != 0) {
      cli_diag(MODE, &diag);
      goto done;
    }
  } else if (replay == LM_REPLAY_KERNEL) {
    cli_error(MODE, "--replay kernel: %s GPUs have no kernel replay (use app or instance)", cat->arch);
    goto done;
  } else if (lm_plan_build(cat, items, n_items, &plan, &diag) != LM_OK) {
    cli_diag(MODE, &diag);
    status = diag.status == LM_EINVAL ? 2 : 1;
    goto done;
  }
  lm_plan_print(plan, a->verbosity > 0, &out);
  fputs(lm_buf_cstr(&out), stdout);
  status = out.failed ? 1 : 0;
done:
  lm_buf_fini(&out);
  lm_plan_free(plan);
  return status;
}

/* profile_folder: the workload's folder into dir (-w, else
 * workloads/NAME; inside an MPI job, mpirun -np N lumen profile ..., every
 * rank writes its own part of the workload, DIR/rank.R, and waits for no
 * other) and the mode as messages name it into mode_text; o->name and
 * o->resume. 0, or 2 after a message when the name is missing or bad. */
static int profile_folder(cli_args *a, lm_profile_opts *o, char *dir, size_t dir_cap, char *mode_text,
                          size_t mode_cap) {
  o->name = cli_get(a, "name");
  o->resume = cli_has(a, "resume");
  const char *w = cli_get(a, "workload");
  if (!o->name && !(o->resume && w)) {
    cli_error(MODE, "give the workload a name: lumen profile -n NAME -- APP ARGS");
    return 2;
  }
  if (o->name && (!*o->name || strchr(o->name, '/'))) {
    cli_error(MODE, "-n %s: a name is not empty and has no '/' (use -w for the folder)", o->name);
    return 2;
  }
  snprintf(dir, dir_cap, "%s", w ? w : "");
  if (!w) snprintf(dir, dir_cap, "workloads/%s", o->name);
  lm_rank_info rank;
  snprintf(mode_text, mode_cap, "%s", MODE);
  if (lm_rank_detect_env(&rank) && rank.size > 1) {
    size_t len = strlen(dir);
    snprintf(dir + len, dir_cap - len, "/rank.%d", rank.rank);
    snprintf(mode_text, mode_cap, "%s (rank %d of %d)", MODE, rank.rank, rank.size);
  }
  return 0;
}

/* read_flags: o's filters (but -k and -r), replay, join, backend,
 * progress, timeout, telemetry and split from the command line; 0, or 2
 * after a message naming the flag that is wrong. */
static int read_flags(cli_args *a, lm_profile_opts *o) {
  o->instance = cli_get(a, "instance");
  o->dispatch = cli_get(a, "dispatch");
  o->gpu = cli_get(a, "gpu");
  o->replay = parse_replay(cli_get(a, "replay"));
  const char *join = cli_get(a, "join");
  o->key_grid = join && strcmp(join, "grid") == 0;
  o->backend = cli_get(a, "backend");
  o->progress = isatty(2) && !a->quiet;
  const char *timeout = cli_get(a, "timeout");
  char *timeout_end = NULL;
  if (timeout) o->timeout = strtod(timeout, &timeout_end);
  o->telemetry = cli_get(a, "telemetry");
  const char *split = cli_get(a, "split");
  o->split_ranks = split && strcmp(split, "ranks") == 0;
  if (timeout && (timeout_end == timeout || *timeout_end || !(o->timeout > 0) || o->timeout > 1e7))
    cli_error(MODE, "--timeout %s: give a number of seconds above 0", timeout);
  else if (o->telemetry && strcmp(o->telemetry, "auto") != 0 && strcmp(o->telemetry, "none") != 0)
    cli_error(MODE, "--telemetry %s: use auto or none", o->telemetry);
  else if (split && strcmp(split, "ranks") != 0)
    cli_error(MODE, "--split %s: use ranks (each MPI rank collects a share of the counter sets)", split);
  else if (o->split_ranks && o->resume)
    cli_error(MODE, "--split ranks: give it when the profile starts; --resume keeps the split it had");
  else if (o->replay == -2)
    cli_error(MODE, "--replay %s: use app, instance, auto or (NVIDIA) kernel", cli_get(a, "replay"));
  else if (join && strcmp(join, "grid") != 0 && strcmp(join, "kernel") != 0)
    cli_error(MODE, "--join %s: use kernel or grid", join);
  else
    return 0;
  return 2;
}

/* report: what a profile into dir collected, and what it left out. */
static void report(const char *dir, const lm_profile_summary *sum) {
  if (!sum->sets) return;
  if (sum->ranks)
    lm_log(LM_LOG_INFO, "%s: %d ranks, %d counter sets, %d application run%s (%zu dispatches, as rank.R "
           "parts)", dir, sum->ranks, sum->sets, sum->runs, sum->runs == 1 ? "" : "s", sum->dispatches);
  else
    lm_log(LM_LOG_INFO, "%s: %zu dispatches, %d counter sets, %d application run%s", dir,
           sum->dispatches, sum->sets, sum->runs, sum->runs == 1 ? "" : "s");
  if (sum->simulated[0])
    lm_log(LM_LOG_WARN, "%s: collected on the simulated device, which replays %s: these numbers "
                        "are replays, not measurements", dir, sum->simulated);
  if (sum->dropped)
    lm_log(LM_LOG_WARN, "%zu selected dispatches did not get every counter set and are "
                        "left out (%s); --replay auto runs the application again for them",
           sum->dropped, sum->dropped_detail);
}

/* profile_app: profile the application of the command line for items;
 * the exit status. */
static int profile_app(cli_args *a, const char **items, size_t n_items) {
  lm_profile_opts o;
  memset(&o, 0, sizeof o);
  char dir[4096], tool[PATH_MAX], mode_text[96];
  if (profile_folder(a, &o, dir, sizeof dir, mode_text, sizeof mode_text) != 0) return 2;
  o.dir = dir;
  o.argv = (char *const *)a->positional;
  o.argc = (int)a->n_positional;
  if (!o.resume && o.argc == 0) {
    cli_error(MODE, "no application to profile: lumen profile -n NAME -- APP ARGS");
    return 2;
  }
  o.items = items;
  o.n_items = n_items;
  size_t nk = cli_count(a, "kernel"), nr = cli_count(a, "region");
  const char **kernels = calloc(nk + 1, sizeof *kernels), **regions = calloc(nr + 1, sizeof *regions);
  int status = 2;
  if (!kernels || !regions) goto done;
  for (size_t i = 0; i < nk; i++) kernels[i] = cli_nth(a, "kernel", i);
  for (size_t i = 0; i < nr; i++) regions[i] = cli_nth(a, "region", i);
  o.kernels = kernels;
  o.n_kernels = nk;
  o.regions = regions;
  o.n_regions = nr;
  if (read_flags(a, &o) != 0) goto done;
  if (!find_tool(tool, sizeof tool)) {
    cli_error(MODE, "cannot find liblumen_tool.so next to the lumen binary; set "
                    "LUMEN_TOOL_LIBRARY to its path");
    status = 1;
    goto done;
  }
  o.tool_library = tool;
  lm_profile_summary sum;
  lm_diag diag;
  lm_diag_clear(&diag);
  if (lm_profile_run(&o, &sum, &diag) != LM_OK) {
    cli_diag(mode_text, &diag);
    status = diag.status == LM_EINVAL ? 2 : 1;
    goto done;
  }
  status = 0;
  report(dir, &sum);
done:
  free(kernels);
  free(regions);
  return status;
}

int cmd_profile(int argc, char **argv, int first) {
  cli_args a;
  uint64_t t_all = lm_phase_begin();
  if (cli_parse(argc, argv, first, MODE, MODE_PROFILE, &a) != 0) return 2;
  int status = 2;
  const char **items = NULL;
  char **copies = NULL;
  size_t n_items = 0, nb = cli_count(&a, "block");
  cli_apply_verbosity(&a);
  if (cli_has(&a, "help")) {
    cli_help(stdout, MODE);
    status = 0;
    goto done;
  }
  items = calloc(nb * 8 + 1, sizeof *items);
  copies = calloc(nb + 1, sizeof *copies);
  if (!items || !copies || split_items(&a, nb, items, copies, &n_items) != 0) goto done;
  status = cli_has(&a, "plan") ? plan_only(&a, items, n_items) : profile_app(&a, items, n_items);
done:
  for (size_t i = 0; copies && i < nb; i++) free(copies[i]);
  free(copies);
  free(items);
  cli_self_time(&a, t_all);
  cli_args_fini(&a);
  return status;
}
