/*
 * series.c - /api/series: one metric's value for each dispatch of the
 * selection (the GUI's chart of a metric across a kernel's dispatches).
 *
 * The values come from lm_analyze_series, each one what the analysis of
 * that dispatch alone shows. The answer stays small whatever the dispatch
 * count: up to LM_SERVER_SERIES_POINTS dispatches are sent one by one;
 * beyond, the dispatches (in table order) are cut into that many even
 * buckets, each sent with its first and last dispatch id and the minimum,
 * maximum and mean of its values, and the answer says "downsampled".
 */
#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "server/internal.h"

static cJSON *number_or_null(double v) {
  return isnan(v) || isinf(v) ? cJSON_CreateNull() : cJSON_CreateNumber(v);
}

/* The answer for series s (NULL when out of memory). */
static char *series_json(const lm_series *s, const lm_query *q, const char *norm_word) {
  cJSON *o = cJSON_CreateObject();
  if (!o) return NULL;
  char unit[256] = "";
  if (s->unit) lm_unit_text(s->unit, norm_word, !q->corrected, unit, sizeof unit);
  cJSON_AddStringToObject(o, "metric", q->metric);
  cJSON_AddStringToObject(o, "name", s->name ? s->name : "");
  cJSON_AddStringToObject(o, "column", s->column ? s->column : "");
  cJSON_AddStringToObject(o, "unit", unit);
  cJSON_AddNumberToObject(o, "dispatches", (double)s->n);
  int down = s->n > LM_SERVER_SERIES_POINTS;
  cJSON_AddBoolToObject(o, "downsampled", down);
  cJSON *pts = cJSON_AddArrayToObject(o, "points");
  if (!down) {
    for (size_t i = 0; i < s->n; i++) {
      cJSON *p = cJSON_CreateObject();
      cJSON_AddNumberToObject(p, "d", s->dispatch_ids[i]);
      cJSON_AddItemToObject(p, "v", number_or_null(s->values[i]));
      cJSON_AddItemToArray(pts, p);
    }
  } else {
    size_t nb = LM_SERVER_SERIES_POINTS;
    cJSON_AddNumberToObject(o, "buckets", (double)nb);
    for (size_t b = 0; b < nb; b++) {
      size_t first = b * s->n / nb, end = (b + 1) * s->n / nb;
      double lo = LM_NAN, hi = LM_NAN, sum = 0;
      size_t n_values = 0;
      for (size_t i = first; i < end; i++) {
        double v = s->values[i];
        if (isnan(v)) continue;
        if (!n_values || v < lo) lo = v;
        if (!n_values || v > hi) hi = v;
        sum += v;
        n_values++;
      }
      cJSON *p = cJSON_CreateObject();
      cJSON_AddNumberToObject(p, "d", s->dispatch_ids[first]);
      cJSON_AddNumberToObject(p, "last", s->dispatch_ids[end - 1]);
      cJSON_AddNumberToObject(p, "n", (double)(end - first));
      cJSON_AddItemToObject(p, "min", number_or_null(lo));
      cJSON_AddItemToObject(p, "max", number_or_null(hi));
      cJSON_AddItemToObject(p, "mean", number_or_null(n_values ? sum / (double)n_values : LM_NAN));
      cJSON_AddItemToArray(pts, p);
    }
  }
  char *text = lm_server_print_json(o);
  cJSON_Delete(o);
  return text;
}

enum MHD_Result lm_server_api_series(struct MHD_Connection *c, const lm_query *q) {
  if (!q->w) return lm_server_send_error(c, MHD_HTTP_BAD_REQUEST, "w: which workload?");
  if (!q->metric) return lm_server_send_error(c, MHD_HTTP_BAD_REQUEST, "m: which metric row? (such as m=2.1.0)");
  char key[sizeof q->canonical + 100];
  snprintf(key, sizeof key, "series|%s|m=%s", q->canonical, q->metric);
  enum MHD_Result ok;
  if (lm_server_send_cached(c, key, &ok)) return ok;
  if (!lm_server_begin_evaluation()) return lm_server_send_error(c, MHD_HTTP_SERVICE_UNAVAILABLE, "busy; try again");
  lm_analyze_opts o;
  lm_server_opts_from_query(q, &o);
  lm_server_loaded *l = NULL;
  lm_series *s = NULL;
  char *text = NULL;
  lm_diag d;
  lm_diag_clear(&d);
  lm_status st = lm_server_acquire(q->w, &l, &d);
  if (st == LM_OK && lm_workload_totals(l->w))
    st = lm_fail_at(&d, LM_EINVAL, NULL, 0, "w", "the workload holds per-kernel totals only (rocprof --stats): no "
                    "metric series");
  if (st == LM_OK && !(l->w->arch && *l->w->arch))
    st = lm_fail_at(&d, LM_EINVAL, NULL, 0, "w",
                    "the workload's architecture is not recorded (timestamps only): no metric series");
  const lm_catalog *cat = st == LM_OK ? lm_server_catalog_of(l->w->arch, q->compat, lm_sysinfo_compat(&l->w->sysinfo)) : NULL;
  if (st == LM_OK && !cat) st = lm_fail_at(&d, LM_EARCH, NULL, 0, "w", "%s has no metric definitions", l->w->arch);
  if (st == LM_OK) st = lm_analyze_series(l->w, cat, &o, q->metric, &s, &d);
  if (st == LM_OK) {
    const char *norm_word = "";
    int32_t norm = lm_analyze_norm_index(cat, q->norm);
    if (cat->n_norms) norm_word = cat->norms[norm >= 0 ? norm : 0].unit;
    text = series_json(s, q, norm_word);
    if (!text) st = lm_oom(&d, NULL);
  }
  lm_series_free(s);
  lm_server_release(l);
  lm_server_end_evaluation();
  if (st != LM_OK) return lm_server_send_diag(c, &d);
  size_t len = strlen(text);
  lm_server_keep_answer(key, text, len);
  ok = lm_server_send(c, MHD_HTTP_OK, "application/json", text, len, 1, 0);
  lm_free(text);
  return ok;
}
