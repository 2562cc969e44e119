/*
 * summary.c - the endpoints beside the panels: /api/summary (what limits
 * each top kernel: the rules of docs/rules.md over the selection, as
 * `lumen analyze --summary --format json` adds them) and /api/roofline
 * (the ceilings and the longest kernels' points). Both evaluate only
 * what they show, not every panel.
 */
#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "advise/advise.h"
#include "report/report.h"
#include "server/internal.h"

static void add_num(cJSON *o, const char *name, double v) {
  if (isnan(v) || isinf(v)) cJSON_AddNullToObject(o, name);
  else cJSON_AddNumberToObject(o, name, v);
}

/* The guided-analysis summary of one workload for the selection: the
 * "summary" object of `lumen analyze --summary --format json`. */
lm_status lm_server_summary_answer(const lm_query *q, char **text_out, size_t *len, int *busy, lm_diag *diag) {
  *text_out = NULL;
  *len = 0;
  *busy = 0;
  char key[sizeof q->canonical + 16];
  snprintf(key, sizeof key, "summary|%s", q->canonical);
  if ((*text_out = lm_server_cached_answer(key, len))) return LM_OK;
  if (!lm_server_begin_evaluation()) {
    *busy = 1;
    return lm_fail(diag, LM_ENOMEM, NULL, "busy; try again");
  }
  lm_analyze_opts o;
  lm_server_opts_from_query(q, &o);
  lm_server_loaded *l = NULL;
  lm_ruleset *rules = NULL;
  lm_summary *sum = NULL;
  lm_diag d;
  lm_diag_clear(&d);
  lm_status st = lm_server_acquire(q->w, &l, &d);
  if (st == LM_OK && lm_workload_totals(l->w))
    st = lm_fail_at(&d, LM_EINVAL, NULL, 0, "w",
                    "the workload holds per-kernel totals only (rocprof --stats): no summary; the analysis shows its "
                    "top kernels");
  /* The same catalog as /api/analysis for compat=, so that the cards and
   * the panels agree. */
  if (st == LM_OK && !(l->w->arch && *l->w->arch))
    st = lm_fail_at(&d, LM_EINVAL, NULL, 0, "w",
                    "the workload's architecture is not recorded (timestamps only): no summary; the analysis shows its "
                    "top kernels and dispatch list");
  const lm_catalog *cat = st == LM_OK ? lm_server_catalog_of(l->w->arch, q->compat, lm_sysinfo_compat(&l->w->sysinfo)) : NULL;
  if (st == LM_OK && !cat)
    st = lm_fail_at(&d, LM_EARCH, NULL, 0, q->compat ? "compat" : "w", "%s has no metric definitions%s%s", l->w->arch,
                    q->compat ? " in the semantics of rocprofiler-compute " : "", q->compat ? q->compat : "");
  if (st == LM_OK) st = lm_rules_load_texts(cat, lm_rules_builtin(), &rules, &d);
  if (st == LM_OK) st = lm_advise_summary(l->w, cat, rules, &o, NULL, 5, &sum, &d);
  char *text = NULL;
  if (st == LM_OK) {
    cJSON *root = cJSON_CreateObject();
    cJSON_AddItemToObject(root, "summary", (cJSON *)lm_report_summary_json(sum));
    text = lm_server_print_json(root);
    cJSON_Delete(root);
    if (!text) st = lm_oom(&d, NULL);
  }
  lm_summary_free(sum);
  lm_rules_free(rules);
  lm_server_release(l);
  lm_server_end_evaluation();
  if (st != LM_OK) {
    *diag = d;
    return st;
  }
  *len = strlen(text);
  lm_server_keep_answer(key, text, *len);
  *text_out = text;
  return LM_OK;
}

enum MHD_Result lm_server_api_summary(struct MHD_Connection *c, const lm_query *q) {
  return lm_server_send_answer(c, q, lm_server_summary_answer);
}

enum MHD_Result lm_server_api_roofline(struct MHD_Connection *c, const lm_query *q) {
  if (!q->w) return lm_server_send_error(c, MHD_HTTP_BAD_REQUEST, "w: which workload?");
  if (!lm_server_begin_evaluation()) return lm_server_send_error(c, MHD_HTTP_SERVICE_UNAVAILABLE, "busy; try again");
  lm_analyze_opts o;
  lm_server_opts_from_query(q, &o);
  lm_server_loaded *l = NULL;
  lm_roofline *r = NULL;
  lm_diag d;
  lm_status st = lm_server_acquire(q->w, &l, &d);
  if (st == LM_OK) st = lm_roofline_compute(l->w, &o, 10, &r, &d);
  lm_server_release(l);
  lm_server_end_evaluation();
  if (st != LM_OK) return lm_server_send_diag(c, &d);
  cJSON *j = cJSON_CreateObject(), *ceil = cJSON_AddObjectToObject(j, "ceilings");
  add_num(ceil, "HBM", r->hbm_bw);
  add_num(ceil, "L2", r->l2_bw);
  add_num(ceil, "L1", r->l1_bw);
  add_num(ceil, "LDS", r->lds_bw);
  add_num(ceil, "FP32", r->fp32);
  add_num(ceil, "FP64", r->fp64);
  add_num(ceil, "MFMA_BF16", r->mfma_bf16);
  add_num(ceil, "MFMA_F16", r->mfma_f16);
  add_num(ceil, "MFMA_F32", r->mfma_f32);
  add_num(ceil, "MFMA_F64", r->mfma_f64);
  add_num(ceil, "MFMA_I8", r->mfma_i8);
  if (r->missing) cJSON_AddStringToObject(j, "missing_counter", r->missing);
  cJSON *pts = cJSON_AddArrayToObject(j, "points");
  for (size_t i = 0; i < r->n_points; i++) {
    const lm_roof_point *p = &r->points[i];
    cJSON *e = cJSON_CreateObject();
    cJSON_AddStringToObject(e, "kernel", p->kernel);
    cJSON_AddNumberToObject(e, "calls", (double)p->calls);
    add_num(e, "duration_ns", p->duration_ns);
    add_num(e, "flops", p->flops);
    add_num(e, "gflops_per_s", p->duration_ns > 0 ? p->flops / p->duration_ns : 0);
    cJSON *ai = cJSON_AddObjectToObject(e, "ai");
    add_num(ai, "L1", p->bytes_l1 > 0 ? p->flops / p->bytes_l1 : 0);
    add_num(ai, "L2", p->bytes_l2 > 0 ? p->flops / p->bytes_l2 : 0);
    add_num(ai, "HBM", p->bytes_hbm > 0 ? p->flops / p->bytes_hbm : 0);
    cJSON_AddItemToArray(pts, e);
  }
  lm_roofline_free(r);
  enum MHD_Result ok = lm_server_send_json(c, j);
  cJSON_Delete(j);
  return ok;
}
