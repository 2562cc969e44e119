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

/* The store at url opened for writing into *store: 1, or 0 with its
 * error printed (the store closed). */
static int open_writable(const char *url, lm_store **store, lm_diag *diag) {
  lm_diag_clear(diag);
  if (lm_store_open(url, 1, store, diag) == LM_OK) return 1;
  cli_diag(MODE, diag);
  lm_store_close(*store);
  *store = NULL;
  return 0;
}

/* db import -w DIR ...: each folder into the store url. Returns the exit
 * status (1 when any import failed). */
static int import_folders(const cli_args *a, const char *url) {
  size_t nw = cli_count(a, "workload");
  if (nw == 0 || a->n_positional > 1) {
    cli_error(MODE, "import: give the folders with -w DIR (repeatable)");
    return 2;
  }
  if (nw > 1 && cli_has(a, "name")) {
    cli_error(MODE, "import: -n names one workload; import several folders without it");
    return 2;
  }
  lm_store *store = NULL;
  lm_diag diag;
  if (!open_writable(url, &store, &diag)) return 1;
  lm_store_assume_arch(store, cli_get(a, "arch"));
  int failed = 0;
  for (size_t i = 0; i < nw; i++) {
    const char *dir = cli_nth(a, "workload", i);
    lm_import_result r;
    uint64_t t0 = lm_phase_begin();
    lm_status imported = lm_store_import(store, dir, cli_get(a, "name"), cli_get(a, "team"), &r, &diag);
    lm_phase_end("import", t0);
    if (imported != LM_OK) {
      cli_diag(MODE, &diag);
      failed = 1;
      continue;
    }
    if (r.existed) printf("%s: already in the store as '%s'\n", dir, r.name);
    else printf("%s: imported as '%s' (%zu dispatches)\n", dir, r.name, r.n_dispatches);
  }
  lm_store_close(store);
  return failed;
}

static void list_csv(const lm_store_entry *entries, size_t n) {
  printf("name,team,arch,gpu_model,dispatches,source,created,fingerprint,simulated,ranks,hosts\n");
  for (size_t i = 0; i < n; i++) {
    csv_quoted(entries[i].name);
    putchar(',');
    csv_quoted(entries[i].team);
    printf(",%s,%s,%zu,%s,%s,%s,%s,%zu,%zu\n", entries[i].arch, entries[i].gpu_model, entries[i].n_dispatches,
           entries[i].source, entries[i].created, entries[i].fingerprint, simulated(&entries[i]) ? "yes" : "no",
           entries[i].n_ranks, entries[i].n_hosts);
  }
}

/* Returns 0, or 1 when out of memory. */
static int list_json(const lm_store_entry *entries, size_t n) {
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
    return 1;
  }
  puts(fixed ? fixed : text);
  lm_free(fixed);
  cJSON_free(text);
  return 0;
}

static void list_text(const lm_store_entry *entries, size_t n) {
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

/* db list: the store's workloads in format (CLI_FORMAT_*). Returns the
 * exit status. */
static int list_workloads(const char *url, int format) {
  lm_store *store = NULL;
  lm_store_entry *entries = NULL;
  size_t n = 0;
  int status = 1;
  lm_diag diag;
  lm_diag_clear(&diag);
  if (lm_store_open(url, 0, &store, &diag) != LM_OK || lm_store_list(store, &entries, &n, &diag) != LM_OK) {
    cli_diag(MODE, &diag);
    goto done;
  }
  status = 0;
  if (format == CLI_FORMAT_CSV) list_csv(entries, n);
  else if (format == CLI_FORMAT_JSON) status = list_json(entries, n);
  else list_text(entries, n);
done:
  free(entries);
  lm_store_close(store);
  return status;
}

/* db rm NAME ...: returns the exit status (1 when any removal failed). */
static int remove_workloads(const cli_args *a, const char *url) {
  if (a->n_positional < 2) {
    cli_error(MODE, "rm: give the workload's name: lumen db rm NAME");
    return 2;
  }
  lm_store *store = NULL;
  lm_diag diag;
  if (!open_writable(url, &store, &diag)) return 1;
  int failed = 0;
  for (size_t i = 1; i < a->n_positional; i++) {
    if (lm_store_remove(store, a->positional[i], &diag) != LM_OK) {
      cli_diag(MODE, &diag);
      failed = 1;
    } else {
      printf("removed '%s'\n", a->positional[i]);
    }
  }
  lm_store_close(store);
  return failed;
}

/* db export NAME -w DIR: returns the exit status. */
static int export_workload(const cli_args *a, const char *url) {
  const char *dir = cli_get(a, "workload");
  if (a->n_positional != 2 || !dir) {
    cli_error(MODE, "export: lumen db export NAME -w DIR");
    return 2;
  }
  lm_store *store = NULL;
  lm_diag diag;
  lm_diag_clear(&diag);
  int status = 1;
  if (lm_store_open(url, 0, &store, &diag) != LM_OK ||
      lm_store_export(store, a->positional[1], dir, &diag) != LM_OK) {
    cli_diag(MODE, &diag);
  } else {
    printf("'%s' written to %s\n", a->positional[1], dir);
    status = 0;
  }
  lm_store_close(store);
  return status;
}

int cmd_db(int argc, char **argv, int first) {
  cli_args a;
  uint64_t t_all = lm_phase_begin();
  if (cli_parse(argc, argv, first, MODE, MODE_DB, &a) != 0) return 2;
  int status = 2;
  cli_apply_verbosity(&a);
  char url_buf[4096];
  const char *url = cli_store_url(&a, url_buf, sizeof url_buf);
  if (cli_has(&a, "help")) {
    cli_help(stdout, MODE);
    status = 0;
  } else if (a.n_positional == 0) {
    status = usage();
  } else {
    const char *sub = a.positional[0];
    int format = cli_choice(&a, "format", cli_format_names, "expected", 0);
    if (format < 0) status = 2;
    else if (strcmp(sub, "import") == 0) status = import_folders(&a, url);
    else if (strcmp(sub, "list") == 0) status = list_workloads(url, format ? format : CLI_FORMAT_TEXT);
    else if (strcmp(sub, "rm") == 0) status = remove_workloads(&a, url);
    else if (strcmp(sub, "export") == 0) status = export_workload(&a, url);
    else cli_error(MODE, "unknown subcommand '%s' (import, list, rm, export)", sub);
  }
  cli_self_time(&a, t_all);
  cli_args_fini(&a);
  return status;
}
