/*
 * list_cmd.c - `lumen list metrics|architectures|counters|backends|rules`: what
 * lumen knows and can collect with, without a workload.
 */
#include <stdio.h>
#include <string.h>

#include "backend/backend.h"
#include "cli/cli.h"
#include "report/report.h"

#define MODE "list"

static int print_buf(lm_buf *b) {
  if (b->failed) {
    cli_error(MODE, "out of memory");
    return 1;
  }
  fputs(lm_buf_cstr(b), stdout);
  return 0;
}

int cmd_list(int argc, char **argv, int first) {
  cli_args a;
  uint64_t t_all = lm_phase_begin();
  if (cli_parse(argc, argv, first, MODE, MODE_LIST, &a) != 0) return 2;
  int status = 2;
  lm_catalog *owned = NULL;
  lm_buf out = {0};
  lm_diag diag;
  lm_diag_clear(&diag);
  cli_apply_verbosity(&a);
  if (cli_has(&a, "help") || a.n_positional == 0) {
    cli_help(cli_has(&a, "help") ? stdout : stderr, MODE);
    status = cli_has(&a, "help") ? 0 : 2;
    goto done;
  }
  const char *what = a.positional[0];
  const char *arch = cli_get(&a, "arch");
  const char *dir = cli_get(&a, "metrics-dir");
  const lm_catalog *only = NULL;
  if (dir) {
    if (lm_metrics_compile_dir(dir, &owned, &diag) != LM_OK) {
      cli_diag(MODE, &diag);
      status = 1;
      goto done;
    }
    only = owned;
  } else if (arch) {
    only = lm_metrics_builtin_find(arch);
    if (!only) {
      cli_error(MODE, "--arch %s: no built-in definitions (see `lumen list architectures`)", arch);
      goto done;
    }
  }
  if (strcmp(what, "architectures") == 0 || strcmp(what, "archs") == 0) {
    lm_buf_printf(&out, "%-8s %-7s %-6s %-26s %6s %6s %8s %8s\n", "arch", "vendor", "chip",
                  "products", "panels", "tables", "metrics", "counters");
    for (const char *const *n = lm_metrics_builtin_list(); *n; n++) {
      const lm_catalog *c = lm_metrics_builtin(*n);
      lm_buf_printf(&out, "%-8s %-7s %-6s %-26s %6d %6d %8d %8d\n", c->arch, c->vendor,
                    c->chip[0] ? c->chip : "-", c->products, (int)c->n_panels, (int)c->n_tables,
                    (int)c->n_rows, (int)c->n_counters);
    }
    status = print_buf(&out);
  } else if (strcmp(what, "metrics") == 0) {
    if (only) {
      lm_report_list_metrics(only, a.verbosity > 0, &out);
    } else {
      for (const char *const *n = lm_metrics_builtin_list(); *n; n++) {
        const lm_catalog *c = lm_metrics_builtin(*n);
        lm_buf_printf(&out, "== %s (%s)\n", c->arch, c->products);
        lm_report_list_metrics(c, a.verbosity > 0, &out);
      }
    }
    status = print_buf(&out);
  } else if (strcmp(what, "counters") == 0) {
    if (!only) {
      cli_error(MODE, "counters: give --arch ARCH (see `lumen list architectures`)");
      goto done;
    }
    for (int32_t i = 0; i < only->n_counters; i++) lm_buf_printf(&out, "%s\n", only->counters[i]);
    status = print_buf(&out);
  } else if (strcmp(what, "backends") == 0) {
    lm_backend_status b[16];
    size_t nb = lm_backends_probe(b, 16);
    lm_buf_printf(&out, "%-16s %-10s %-6s %-7s %s\n", "backend", "kind", "built", "usable", "why");
    for (size_t i = 0; i < nb; i++)
      lm_buf_printf(&out, "%-16s %-10s %-6s %-7s %s\n", b[i].name, b[i].kind, b[i].built ? "yes" : "no",
                    b[i].usable ? "yes" : "no", b[i].why);
    status = print_buf(&out);
  } else if (strcmp(what, "rules") == 0) {
    /* The rules of each architecture (or of --arch / --metrics-dir), each
     * checked against that architecture's metrics, plus --rules-dir. */
    const char *rules_dir = cli_get(&a, "rules-dir");
    const char *const *archs = lm_metrics_builtin_list();
    status = 0;
    for (size_t i = 0; only ? i == 0 : archs[i] != NULL; i++) {
      const lm_catalog *c = only ? only : lm_metrics_builtin(archs[i]);
      lm_ruleset *rules = NULL;
      if (lm_rules_load_texts(c, lm_rules_builtin(), &rules, &diag) != LM_OK ||
          (rules_dir && lm_rules_add_dir(rules, c, rules_dir, &diag) != LM_OK)) {
        cli_diag(MODE, &diag);
        lm_rules_free(rules);
        status = 1;
        goto done;
      }
      lm_buf_printf(&out, "== %s (%s): %zu rules\n", c->arch, c->products, rules->n_rules);
      lm_report_list_rules(rules, a.verbosity > 0, &out);
      lm_rules_free(rules);
    }
    status = print_buf(&out);
  } else {
    cli_error(MODE, "unknown list '%s' (metrics, architectures, counters, backends, rules)", what);
  }
done:
  lm_buf_fini(&out);
  lm_catalog_free(owned);
  cli_self_time(&a, t_all);
  cli_args_fini(&a);
  return status;
}
