/*
 * profile_cmd.c - `lumen profile`: plan counter sets and collect them.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "profile/profile.h"

#define MODE "profile"

int cmd_profile(int argc, char **argv, int first) {
  cli_args a;
  if (cli_parse(argc, argv, first, MODE, MODE_PROFILE, &a) != 0) return 2;
  int status = 2;
  lm_plan *plan = NULL;
  lm_buf out = {0};
  lm_diag diag;
  lm_diag_clear(&diag);
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
  if (!items || !copies) goto done;
  for (size_t i = 0; i < nb; i++) {
    const char *v = cli_nth(&a, "block", i);
    copies[i] = strdup(v);
    if (!copies[i]) goto done;
    if (strchr(v, ' ')) {
      items[n_items++] = copies[i];
      continue;
    }
    for (char *tok = strtok(copies[i], ","); tok && n_items < nb * 8; tok = strtok(NULL, ","))
      items[n_items++] = tok;
  }
  if (cli_has(&a, "plan")) {
    const char *arch = cli_get(&a, "arch");
    if (!arch) {
      cli_error(MODE, "--plan needs --arch ARCH when no device is present (see `lumen list "
                      "architectures`)");
      goto done;
    }
    const lm_catalog *cat = lm_metrics_builtin(arch);
    if (!cat) {
      cli_error(MODE, "--arch %s: no definitions for this architecture (see `lumen list "
                      "architectures`)", arch);
      goto done;
    }
    if (lm_plan_build(cat, items, n_items, &plan, &diag) != LM_OK) {
      cli_diag(MODE, &diag);
      status = diag.status == LM_EINVAL ? 2 : 1;
      goto done;
    }
    lm_plan_print(plan, a.verbosity > 0, &out);
    fputs(lm_buf_cstr(&out), stdout);
    status = out.failed ? 1 : 0;
    goto done;
  }
  cli_error(MODE, "collection is not part of this build yet; --plan prints the counter sets");
done:
  for (size_t i = 0; copies && i < nb; i++) free(copies[i]);
  free(copies);
  free(items);
  lm_buf_fini(&out);
  lm_plan_free(plan);
  cli_args_fini(&a);
  return status;
}
