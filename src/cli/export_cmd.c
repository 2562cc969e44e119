/*
 * export_cmd.c - `lumen export -w WORKLOAD --omniperf DIR`: a workload in
 * the reference tool's folder layout.
 */
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "folder/folder.h"
#include "load/load.h"

#define MODE "export"

int cmd_export(int argc, char **argv, int first) {
  cli_args a;
  uint64_t t_all = lm_phase_begin();
  if (cli_parse(argc, argv, first, MODE, MODE_EXPORT, &a) != 0) return 2;
  int status = 2;
  lm_workload *w = NULL;
  lm_diag diag;
  lm_diag_clear(&diag);
  cli_apply_verbosity(&a);
  if (cli_has(&a, "help")) {
    cli_help(stdout, MODE);
    status = 0;
    goto done;
  }
  const char *in = cli_get(&a, "workload"), *out = cli_get(&a, "omniperf");
  if (a.n_positional) {
    cli_error(MODE, "unexpected argument '%s'", a.positional[0]);
    goto done;
  }
  if (!in || !out) {
    cli_error(MODE, "give the workload and the folder to write: lumen export -w WORKLOAD --omniperf DIR");
    goto done;
  }
  if (cli_count(&a, "workload") > 1) {
    cli_error(MODE, "one -w at a time");
    goto done;
  }
  status = 1;
  /* Every text cell is written back as it was read (the reference's obj
   * columns hold addresses), not only the kernel names. */
  lm_workload_options opts = {0};
  opts.keep_text = 1;
  if (lm_workload_read_opts(in, &opts, &w, &diag) != LM_OK || lm_folder_export(w, out, &diag) != LM_OK) {
    cli_diag(MODE, &diag);
    goto done;
  }
  lm_log(LM_LOG_INFO, "%s: %zu dispatches written in the rocprofiler-compute layout", out, w->pmc->n_rows);
  status = 0;
done:
  lm_workload_free(w);
  cli_self_time(&a, t_all);
  cli_args_fini(&a);
  return status;
}
