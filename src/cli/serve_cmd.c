/*
 * serve_cmd.c - `lumen serve [-w DIR ...] [--db URL] [--listen ADDR:PORT]`.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "server/server.h"

#define MODE "serve"

/* ADDR:PORT, [v6]:PORT, ADDR or :PORT. */
static int parse_listen(const char *text, char *host, size_t cap, int *port) {
  const char *colon = NULL;
  if (text[0] == '[') {
    const char *close = strchr(text, ']');
    if (!close) return 0;
    snprintf(host, cap, "%.*s", (int)(close - text - 1), text + 1);
    colon = close[1] == ':' ? close + 1 : NULL;
    if (close[1] && !colon) return 0;
  } else {
    colon = strrchr(text, ':');
    if (colon && strchr(text, ':') != colon) return 0; /* bare IPv6 needs brackets */
    snprintf(host, cap, "%.*s", colon ? (int)(colon - text) : (int)strlen(text), text);
    if (!host[0]) snprintf(host, cap, "127.0.0.1");
  }
  if (colon) {
    char *end;
    long p = strtol(colon + 1, &end, 10);
    if (*end || p < 0 || p > 65535 || end == colon + 1) return 0;
    *port = (int)p;
  }
  return 1;
}

int cmd_serve(int argc, char **argv, int first) {
  cli_args a;
  uint64_t t_all = lm_phase_begin();
  if (cli_parse(argc, argv, first, MODE, MODE_SERVE, &a) != 0) return 2;
  int status = 2;
  const char **folders = NULL;
  char *token_buf = NULL;
  lm_diag diag;
  lm_diag_clear(&diag);
  cli_apply_verbosity(&a);
  if (cli_has(&a, "help")) {
    cli_help(stdout, MODE);
    status = 0;
    goto done;
  }
  if (a.n_positional) {
    cli_error(MODE, "unexpected argument '%s' (workloads are given with -w DIR)", a.positional[0]);
    goto done;
  }
  lm_server_opts o;
  memset(&o, 0, sizeof o);
  char host[256] = "127.0.0.1";
  o.port = 8080;
  const char *listen = cli_get(&a, "listen");
  if (listen && !parse_listen(listen, host, sizeof host, &o.port)) {
    cli_error(MODE, "--listen %s: expected ADDR:PORT (e.g. 127.0.0.1:8080 or [::1]:8080)", listen);
    goto done;
  }
  o.host = host;
  size_t n = cli_count(&a, "workload");
  folders = calloc(n + 1, sizeof *folders);
  if (!folders) goto done;
  for (size_t i = 0; i < n; i++) folders[i] = cli_nth(&a, "workload", i);
  o.folders = folders;
  o.n_folders = n;
  o.store = cli_get(&a, "db");
  if (!n && !o.store) {
    char buf[4096];
    o.store = NULL;
    cli_error(MODE, "nothing to serve: give workload folders with -w DIR and/or a store with --db URL "
                    "(the default store is %s)", cli_store_url(&a, buf, sizeof buf));
    goto done;
  }
  o.token = cli_get(&a, "token");
  const char *token_file = cli_get(&a, "token-file");
  if (o.token && token_file) {
    cli_error(MODE, "give --token or --token-file, not both");
    goto done;
  }
  if (token_file) {
    size_t len = 0;
    if (lm_read_file_any(token_file, 4096, &token_buf, &len, &diag) != LM_OK) {
      cli_diag(MODE, &diag);
      status = 1;
      goto done;
    }
    while (len && (token_buf[len - 1] == '\n' || token_buf[len - 1] == '\r' || token_buf[len - 1] == ' '))
      token_buf[--len] = '\0';
    if (!len) {
      cli_error(MODE, "--token-file %s: the file is empty", token_file);
      goto done;
    }
    o.token = token_buf;
  }
  if (o.token && lm_token_check(o.token, token_file ? "--token-file" : "--token", &diag) != LM_OK) {
    cli_diag(MODE, &diag);
    status = 2;
    goto done;
  }
  const char *header_timeout = cli_get(&a, "header-timeout");
  if (header_timeout) {
    char *end = NULL;
    o.header_timeout = strtod(header_timeout, &end);
    if (!end || *end || !(o.header_timeout >= 0.1 && o.header_timeout <= 3600)) {
      cli_error(MODE, "--header-timeout %s: expected seconds, 0.1 to 3600", header_timeout);
      status = 2;
      goto done;
    }
  }
  const char *threads = cli_get(&a, "threads");
  if (threads) {
    char *end = NULL;
    long count = strtol(threads, &end, 10);
    if (end == threads || *end || count < 1 || count > 64) {
      cli_error(MODE, "--threads %s: expected a whole number, 1 to 64", threads);
      status = 2;
      goto done;
    }
    o.threads = (int)count;
  }
  const char *cache_mb = cli_get(&a, "cache-mb");
  if (cache_mb) {
    char *end = NULL;
    o.cache_mb = strtol(cache_mb, &end, 10);
    if (!end || *end || o.cache_mb < 16 || o.cache_mb > (1L << 24)) {
      cli_error(MODE, "--cache-mb %s: expected MiB, 16 to 16777216", cache_mb);
      status = 2;
      goto done;
    }
  }
  const char *rate = getenv("LUMEN_SERVE_RATE");
  if (rate && *rate) o.rate = atof(rate);
  o.web_dir = getenv("LUMEN_WEB_DIR");
  status = 1;
  if (lm_server_run(&o, &diag) != LM_OK) {
    cli_diag(MODE, &diag);
    status = diag.status == LM_EINVAL ? 2 : 1;
    goto done;
  }
  status = 0;
done:
  free(folders);
  lm_free(token_buf);
  cli_self_time(&a, t_all);
  cli_args_fini(&a);
  return status;
}
