/*
 * server.h - `lumen serve`: a read-only HTTP server (libmicrohttpd) with a
 * JSON API over local workload folders and a store, and the web GUI's
 * static files compiled into the binary.
 *
 * The selection a request names (workload, baseline, kernels, dispatches,
 * GPUs, regions, normalization, ...) is one query string, parsed here by a
 * hand-checked parser with hard limits, so that a URL is a shareable view
 * and a hostile one is a clear 400.
 */
#ifndef LUMEN_SERVER_H
#define LUMEN_SERVER_H

#include <stddef.h>

#include "analyze/analyze.h"
#include "base/base.h"

/* ---------------------------------------------------------- the query */

#define LM_QUERY_MAX_BYTES 16384
#define LM_QUERY_MAX_ITEMS 32
#define LM_QUERY_MAX_LIMIT 1000     /* rows one page may hold */
#define LM_QUERY_MAX_OFFSET 1000000000L

typedef struct lm_query {
  char *buf;                      /* owned: decoded values */
  const char *w, *base;           /* workload ids */
  lm_norm_kind norm;              /* LM_NORM_DEFAULT where not given */
  lm_weight_kind weight;          /* LM_WEIGHT_DEFAULT where not given */
  lm_clock_kind clock;            /* LM_CLOCK_DEFAULT where not given */
  const char *token, *path;
  const char *compat;             /* reference version: "3.0", "3.3", or NULL */
  const char *kernels[LM_QUERY_MAX_ITEMS]; /* k (regex) and kn (exact names, as anchored regexes) */
  size_t n_kernels;
  unsigned char kernel_owned[LM_QUERY_MAX_ITEMS];
  const char *regions[LM_QUERY_MAX_ITEMS];
  size_t n_regions;
  const char *blocks[LM_QUERY_MAX_ITEMS * 4];
  size_t n_blocks;
  lm_idset dispatch, gpu, instance, rank;
  int corrected;
  /* Paging a long table (/api/rows; not part of the canonical selection). */
  const char *table;              /* t: the table id, "0.2" */
  const char *order;              /* "asc" or "desc" (NULL: asc) */
  const char *filter;             /* rows with a text cell containing it, any case */
  const char *metric;             /* m: a metric row id ("2.1.0", /api/series) */
  long offset, limit, sort;       /* -1 where not given; sort: a column index */
  char canonical[LM_QUERY_MAX_BYTES + 512]; /* the selection as a cache key */
} lm_query;

/* lm_query_parse: a raw query string ("w=f0&k=gemm&norm=per_kernel", not
 * yet percent-decoded; len bytes, may hold NULs) into q. Unknown or
 * repeated single parameters, bad escapes, control characters, over-long
 * input and bad dispatch/GPU/instance specs are LM_EINVAL with a message
 * naming the parameter. Free with lm_query_fini, also after a failure. */
lm_status lm_query_parse(const char *raw, size_t len, lm_query *q, lm_diag *diag);
void lm_query_fini(lm_query *q);

/* ---------------------------------------------------------- the server */

typedef struct lm_server_opts {
  const char *host;            /* address to listen on (default 127.0.0.1) */
  int port;                    /* 0: any free port; negative: 8080 */
  const char *token;           /* required when host is not loopback */
  const char *const *folders;  /* -w: workload folders */
  size_t n_folders;
  const char *store;           /* --db URL, or NULL */
  int threads;                 /* request threads (default 4) */
  double rate;                 /* requests per second per client; 0: 50 for
                                  remote clients, none for loopback */
  const char *web_dir;         /* serve the GUI from this folder instead of
                                  the embedded copy (development) */
  double header_timeout;       /* seconds a client may take to send a
                                  request's headers (0: 10) */
  long cache_mb;               /* MiB for kept answers and loaded workloads
                                  (0: 2048) */
} lm_server_opts;

/* lm_token_check: LM_OK when token can serve as a secret: not blank, no
 * control characters, and only characters a cookie value may hold; else
 * LM_EINVAL with a message naming flag. */
lm_status lm_token_check(const char *token, const char *flag, lm_diag *diag);

/* lm_server_run: serve until SIGINT or SIGTERM. Logs the URL at info. */
lm_status lm_server_run(const lm_server_opts *opts, lm_diag *diag);

/* The GUI's files, compiled in (web_assets.c, generated at build time). */
typedef struct lm_web_asset {
  const char *path;        /* "/index.html" */
  const char *type;        /* MIME type */
  const unsigned char *data;
  size_t size;
} lm_web_asset;
extern const lm_web_asset lm_web_assets[];
extern const size_t lm_web_n_assets;

#endif
