/*
 * db_cmd.c - `lumen db import|list|rm|export`: the workload store.
 */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "store/store.h"

#define MODE "db"

/* Whether a stored workload came from the simulated device. */
static int simulated(const lm_store_entry *e) {
  return strncmp(e->origin, LM_ORIGIN_SIMULATED, strlen(LM_ORIGIN_SIMULATED)) == 0;
}

/* The store named by --db, or the default one. */
const char *cli_store_url(const cli_args *a, char *buf, size_t cap) {
  const char *url = cli_get(a, "db");
  if (url) return url;
  const char *env = getenv("LUMEN_DB");
  if (env && *env) return env;
  return lm_store_default_path(buf, cap);
}

/* n with a comma between groups of three digits (1,024). */
static void grouped(size_t n, char *out, size_t cap) {
  char digits[32];
  int len = snprintf(digits, sizeof digits, "%zu", n);
  size_t o = 0;
  for (int i = 0; i < len && o + 2 < cap; i++) {
    if (i > 0 && (len - i) % 3 == 0) out[o++] = ',';
    out[o++] = digits[i];
  }
  out[o] = '\0';
}

/* The text list's ranks column: "1,024 ranks on 4 hosts", empty for a
 * workload without rank parts. */
static void ranks_text(const lm_store_entry *e, char *out, size_t cap) {
  out[0] = '\0';
  if (!e->n_ranks) return;
  char r[32], h[32];
  grouped(e->n_ranks, r, sizeof r);
  grouped(e->n_hosts, h, sizeof h);
  snprintf(out, cap, "%s rank%s on %s host%s", r, e->n_ranks == 1 ? "" : "s", h, e->n_hosts == 1 ? "" : "s");
}

static void csv_quoted(const char *s) {
  putchar('"');
  for (; *s; s++) {
    if (*s == '"') putchar('"');
    putchar(*s);
  }
  putchar('"');
}

static int usage(void) {
  cli_error(MODE, "give a subcommand: import -w DIR, list, rm NAME, export NAME -w DIR (see `lumen help db`)");
  return 2;
}

int cmd_db(int argc, char **argv, int first) {
  cli_args a;
  uint64_t t_all = lm_phase_begin();
  if (cli_parse(argc, argv, first, MODE, MODE_DB, &a) != 0) return 2;
  int status = 2;
  lm_store *store = NULL;
  lm_store_entry *entries = NULL;
  lm_diag diag;
  lm_diag_clear(&diag);
  cli_apply_verbosity(&a);
  char url_buf[4096];
  const char *url = cli_store_url(&a, url_buf, sizeof url_buf);
  if (cli_has(&a, "help")) {
    cli_help(stdout, MODE);
    status = 0;
    goto done;
  }
  if (a.n_positional == 0) {
    status = usage();
    goto done;
  }
  const char *sub = a.positional[0];
  const char *format = cli_get(&a, "format");
  if (format && strcmp(format, "text") && strcmp(format, "csv") && strcmp(format, "json")) {
    cli_error(MODE, "--format %s: expected text, csv or json", format);
    goto done;
  }
  if (strcmp(sub, "import") == 0) {
    size_t nw = cli_count(&a, "workload");
    if (nw == 0 || a.n_positional > 1) {
      cli_error(MODE, "import: give the folders with -w DIR (repeatable)");
      goto done;
    }
    if (nw > 1 && cli_has(&a, "name")) {
      cli_error(MODE, "import: -n names one workload; import several folders without it");
      goto done;
    }
    status = 1;
    if (lm_store_open(url, 1, &store, &diag) != LM_OK) {
      cli_diag(MODE, &diag);
      goto done;
    }
    int failed = 0;
    for (size_t i = 0; i < nw; i++) {
      const char *dir = cli_nth(&a, "workload", i);
      lm_import_result r;
      uint64_t t0 = lm_phase_begin();
      lm_status imported = lm_store_import(store, dir, cli_get(&a, "name"), cli_get(&a, "team"), &r, &diag);
      lm_phase_end("import", t0);
      if (imported != LM_OK) {
        cli_diag(MODE, &diag);
        failed = 1;
        continue;
      }
      if (r.existed) printf("%s: already in the store as '%s'\n", dir, r.name);
      else printf("%s: imported as '%s' (%zu dispatches)\n", dir, r.name, r.n_dispatches);
    }
    status = failed;
  } else if (strcmp(sub, "list") == 0) {
    status = 1;
    size_t n = 0;
    if (lm_store_open(url, 0, &store, &diag) != LM_OK || lm_store_list(store, &entries, &n, &diag) != LM_OK) {
      cli_diag(MODE, &diag);
      goto done;
    }
    if (format && strcmp(format, "csv") == 0) {
      printf("name,team,arch,gpu_model,dispatches,source,created,fingerprint,simulated,ranks,hosts\n");
      for (size_t i = 0; i < n; i++) {
        csv_quoted(entries[i].name);
        putchar(',');
        csv_quoted(entries[i].team);
        printf(",%s,%s,%zu,%s,%s,%s,%s,%zu,%zu\n", entries[i].arch, entries[i].gpu_model, entries[i].n_dispatches,
               entries[i].source, entries[i].created, entries[i].fingerprint, simulated(&entries[i]) ? "yes" : "no",
               entries[i].n_ranks, entries[i].n_hosts);
      }
    } else if (format && strcmp(format, "json") == 0) {
      cJSON *root = cJSON_CreateObject();
      cJSON *list = cJSON_AddArrayToObject(root, "workloads");
      for (size_t i = 0; i < n; i++) {
        cJSON *e = cJSON_CreateObject();
        cJSON_AddStringToObject(e, "name", entries[i].name);
        cJSON_AddStringToObject(e, "team", entries[i].team);
        cJSON_AddStringToObject(e, "arch", entries[i].arch);
        cJSON_AddStringToObject(e, "gpu_model", entries[i].gpu_model);
        cJSON_AddNumberToObject(e, "dispatches", (double)entries[i].n_dispatches);
        cJSON_AddStringToObject(e, "source", entries[i].source);
        cJSON_AddStringToObject(e, "created", entries[i].created);
        cJSON_AddStringToObject(e, "fingerprint", entries[i].fingerprint);
        cJSON_AddBoolToObject(e, "simulated", simulated(&entries[i]));
        cJSON_AddNumberToObject(e, "ranks", (double)entries[i].n_ranks);
        cJSON_AddNumberToObject(e, "hosts", (double)entries[i].n_hosts);
        cJSON_AddItemToArray(list, e);
      }
      char *text = cJSON_PrintUnformatted(root);
      char *fixed = text ? lm_json_utf8_fix(text) : NULL;
      cJSON_Delete(root);
      if (!text) {
        cli_error(MODE, "out of memory");
        goto done;
      }
      puts(fixed ? fixed : text);
      lm_free(fixed);
      cJSON_free(text);
    } else {
      printf("%-32s %-10s %-8s %-10s %10s %-8s %-20s %s\n", "name", "team", "arch", "gpu", "dispatches", "source",
             "created", "ranks");
      for (size_t i = 0; i < n; i++) {
        char *name = lm_text_safe(entries[i].name, 0), *team = lm_text_safe(entries[i].team, 0);
        char source[48];
        snprintf(source, sizeof source, "%s%s", entries[i].source, simulated(&entries[i]) ? " (simulated)" : "");
        char ranks[96];
        ranks_text(&entries[i], ranks, sizeof ranks);
        printf("%-32s %-10s %-8s %-10s %10zu %-8s %s%s%s\n", name ? name : "", team ? team : "", entries[i].arch,
               entries[i].gpu_model, entries[i].n_dispatches, source, entries[i].created, *ranks ? " " : "", ranks);
        lm_free(name);
        lm_free(team);
      }
    }
    status = 0;
  } else if (strcmp(sub, "rm") == 0) {
    if (a.n_positional < 2) {
      cli_error(MODE, "rm: give the workload's name: lumen db rm NAME");
      goto done;
    }
    status = 1;
    if (lm_store_open(url, 1, &store, &diag) != LM_OK) {
      cli_diag(MODE, &diag);
      goto done;
    }
    int failed = 0;
    for (size_t i = 1; i < a.n_positional; i++) {
      if (lm_store_remove(store, a.positional[i], &diag) != LM_OK) {
        cli_diag(MODE, &diag);
        failed = 1;
      } else {
        printf("removed '%s'\n", a.positional[i]);
      }
    }
    status = failed;
  } else if (strcmp(sub, "export") == 0) {
    const char *dir = cli_get(&a, "workload");
    if (a.n_positional != 2 || !dir) {
      cli_error(MODE, "export: lumen db export NAME -w DIR");
      goto done;
    }
    status = 1;
    if (lm_store_open(url, 0, &store, &diag) != LM_OK ||
        lm_store_export(store, a.positional[1], dir, &diag) != LM_OK) {
      cli_diag(MODE, &diag);
      goto done;
    }
    printf("'%s' written to %s\n", a.positional[1], dir);
    status = 0;
  } else {
    cli_error(MODE, "unknown subcommand '%s' (import, list, rm, export)", sub);
  }
done:
  free(entries);
  lm_store_close(store);
  cli_self_time(&a, t_all);
  cli_args_fini(&a);
  return status;
}
