/*
 * api.c - the endpoints that name and describe workloads and the panel
 * document: /api/workloads (the served folders and store entries),
 * /api/info (system info, kernels, GPUs, regions, normalizations) and
 * /api/analysis (the JSON `lumen analyze --format json` prints, for a
 * selection). Answers that evaluate go through the bound on evaluations
 * and the answer cache, so a GUI that asks again is answered from memory.
 */
#include <cjson/cJSON.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report/report.h"
#include "server/internal.h"
#include "store/store.h"

/* The list is read again at most every two seconds: imports show up
 * quickly, and a busy GUI does not query the store on every call. */
static char *workloads_text;
static double workloads_at;
static pthread_mutex_t workloads_lock = PTHREAD_MUTEX_INITIALIZER;

void lm_server_api_fini(void) {
  lm_free(workloads_text);
  workloads_text = NULL;
}

enum MHD_Result lm_server_api_workloads(struct MHD_Connection *c) {
  pthread_mutex_lock(&workloads_lock);
  char *hit = workloads_text && lm_server_now() - workloads_at < 2 ? lm_strdup(workloads_text) : NULL;
  pthread_mutex_unlock(&workloads_lock);
  if (hit) {
    enum MHD_Result ok = lm_server_send(c, MHD_HTTP_OK, "application/json", hit, strlen(hit), 1, 0);
    lm_free(hit);
    return ok;
  }
  cJSON *o = cJSON_CreateObject(), *list = cJSON_AddArrayToObject(o, "workloads");
  for (size_t i = 0; i < lm_server_g.n_folders; i++) {
    cJSON *e = cJSON_CreateObject();
    cJSON_AddStringToObject(e, "id", lm_server_g.folders[i].id);
    cJSON_AddStringToObject(e, "name", lm_server_g.folders[i].name);
    cJSON_AddStringToObject(e, "kind", "folder");
    cJSON_AddItemToArray(list, e);
  }
  if (lm_server_g.opts->store) {
    lm_store *st = NULL;
    lm_store_entry *entries = NULL;
    size_t n = 0;
    lm_diag d;
    if (lm_store_open(lm_server_g.opts->store, 0, &st, &d) == LM_OK && lm_store_list(st, &entries, &n, &d) == LM_OK) {
      for (size_t i = 0; i < n; i++) {
        if (!entries[i].complete) continue;
        cJSON *e = cJSON_CreateObject();
        char id[300];
        snprintf(id, sizeof id, "db:%s", entries[i].name);
        cJSON_AddStringToObject(e, "id", id);
        cJSON_AddStringToObject(e, "name", entries[i].name);
        cJSON_AddStringToObject(e, "kind", "store");
        cJSON_AddStringToObject(e, "team", entries[i].team);
        cJSON_AddStringToObject(e, "arch", entries[i].arch);
        cJSON_AddStringToObject(e, "gpu_model", entries[i].gpu_model);
        cJSON_AddNumberToObject(e, "dispatches", (double)entries[i].n_dispatches);
        cJSON_AddNumberToObject(e, "ranks", (double)entries[i].n_ranks);
        cJSON_AddNumberToObject(e, "hosts", (double)entries[i].n_hosts);
        cJSON_AddItemToArray(list, e);
      }
    } else {
      char line[1024];
      lm_diag copy = d;
      copy.file[0] = '\0';
      cJSON_AddStringToObject(o, "store_error", lm_diag_format(&copy, line, sizeof line));
    }
    lm_free(entries);
    lm_store_close(st);
  }
  char *text = lm_server_print_json(o);
  cJSON_Delete(o);
  if (!text) return lm_server_send_error(c, MHD_HTTP_INTERNAL_SERVER_ERROR, "out of memory");
  pthread_mutex_lock(&workloads_lock);
  lm_free(workloads_text);
  workloads_text = lm_strdup(text);
  workloads_at = lm_server_now();
  pthread_mutex_unlock(&workloads_lock);
  enum MHD_Result ok = lm_server_send(c, MHD_HTTP_OK, "application/json", text, strlen(text), 1, 0);
  lm_free(text);
  return ok;
}

enum MHD_Result lm_server_api_info(struct MHD_Connection *c, const lm_query *q) {
  if (!q->w) return lm_server_send_error(c, MHD_HTTP_BAD_REQUEST, "w: which workload?");
  if (!lm_server_begin_evaluation()) return lm_server_send_error(c, MHD_HTTP_SERVICE_UNAVAILABLE, "busy; try again");
  lm_server_loaded *l = NULL;
  lm_diag d;
  lm_status st = lm_server_acquire(q->w, &l, &d);
  lm_server_end_evaluation();
  if (st != LM_OK) return lm_server_send_diag(c, &d);
  const lm_workload *w = l->w;
  cJSON *o = cJSON_CreateObject();
  cJSON_AddStringToObject(o, "id", q->w);
  cJSON_AddStringToObject(o, "arch", w->arch ? w->arch : "");
  if (w->simulated) cJSON_AddStringToObject(o, "simulated", w->simulated);
  cJSON_AddNumberToObject(o, "dispatches", (double)w->pmc->n_rows);
  cJSON *si = cJSON_AddObjectToObject(o, "sysinfo");
  for (size_t i = 0; i < w->sysinfo.n_fields; i++)
    cJSON_AddStringToObject(si, w->sysinfo.names[i], w->sysinfo.texts[i] ? w->sysinfo.texts[i] : "");
  /* Kernels with their dispatch counts and total time, longest first. */
  long kc = lm_table_find(w->pmc, "Kernel_Name"), gc = lm_table_find(w->pmc, "GPU_ID"),
       ts = lm_table_find(w->pmc, "Start_Timestamp"), te = lm_table_find(w->pmc, "End_Timestamp");
  size_t nk = w->pmc->n_strings;
  double *total = lm_calloc(nk + 1, sizeof *total);
  size_t *count = lm_calloc(nk + 1, sizeof *count);
  cJSON *kernels = cJSON_AddArrayToObject(o, "kernels"), *gpus = cJSON_AddArrayToObject(o, "gpus");
  double seen_gpus[64];
  size_t n_gpus = 0;
  for (size_t r = 0; total && count && r < w->pmc->n_rows; r++) {
    int32_t k = kc >= 0 && w->pmc->cols[kc].text_ids ? w->pmc->cols[kc].text_ids[r] : -1;
    if (k >= 0) {
      count[k]++;
      if (ts >= 0 && te >= 0) total[k] += w->pmc->cols[te].values[r] - w->pmc->cols[ts].values[r];
    }
    double g = gc >= 0 ? w->pmc->cols[gc].values[r] : LM_NAN;
    int dup = isnan(g);
    for (size_t i = 0; i < n_gpus && !dup; i++) dup = seen_gpus[i] == g;
    if (!dup && n_gpus < 64) seen_gpus[n_gpus++] = g;
  }
  for (size_t done = 0; total && count && done < nk; done++) {
    size_t best = nk;
    for (size_t k = 0; k < nk; k++)
      if (count[k] && (best == nk || total[k] > total[best])) best = k;
    if (best == nk) break;
    cJSON *e = cJSON_CreateObject();
    cJSON_AddStringToObject(e, "name", w->pmc->strings[best]);
    cJSON_AddNumberToObject(e, "count", (double)count[best]);
    cJSON_AddNumberToObject(e, "total_ns", total[best]);
    cJSON_AddItemToArray(kernels, e);
    count[best] = 0;
  }
  for (size_t i = 0; i < n_gpus; i++) cJSON_AddItemToArray(gpus, cJSON_CreateNumber(seen_gpus[i]));
  cJSON *regions = cJSON_AddArrayToObject(o, "regions");
  for (size_t i = 0; i < w->n_regions; i++) cJSON_AddItemToArray(regions, cJSON_CreateString(w->region_names[i]));
  const lm_catalog *cat = w->arch ? lm_server_catalog_of(w->arch, NULL, lm_sysinfo_compat(&w->sysinfo)) : NULL;
  cJSON *norms = cJSON_AddArrayToObject(o, "norms");
  for (int32_t i = 0; cat && i < cat->n_norms; i++) cJSON_AddItemToArray(norms, cJSON_CreateString(cat->norms[i].name));
  cJSON_AddBoolToObject(o, "roofline", w->roofline != NULL);
  lm_free(total);
  lm_free(count);
  lm_server_release(l);
  enum MHD_Result ok = lm_server_send_json(c, o);
  cJSON_Delete(o);
  return ok;
}


lm_status lm_server_analysis_answer(const lm_query *q, char **text, size_t *len, int *busy, lm_diag *d) {
  *text = NULL;
  *len = 0;
  *busy = 0;
  char key[sizeof q->canonical + 16];
  snprintf(key, sizeof key, "analysis|%s", q->canonical);
  if ((*text = lm_server_cached_answer(key, len))) return LM_OK;
  if (!lm_server_begin_evaluation()) {
    *busy = 1;
    return lm_fail(d, LM_ENOMEM, NULL, "busy; try again");
  }
  lm_analyze_opts o;
  lm_server_opts_from_query(q, &o);
  lm_analysis *runs[2] = {NULL, NULL};
  lm_server_loaded *held[2] = {NULL, NULL};
  lm_workload *info[2] = {NULL, NULL};
  lm_status st = LM_OK;
  size_t n = 0;
  /* The baseline first, as on the command line: others compare with it. */
  const char *ids[2] = {q->base ? q->base : q->w, q->base ? q->w : NULL};
  for (int i = 0; i < 2 && ids[i] && st == LM_OK; i++, n++)
    st = lm_server_analysis_of(ids[i], q->compat, &o, &runs[i], &held[i], &info[i], d);
  lm_buf out = {0};
  if (st == LM_OK) {
    /* Long tables keep their first page; /api/rows serves the others. */
    lm_report_opts ro = {2, 10, 0, 0, ids, NULL, 0, LM_SERVER_PAGE_ROWS, NULL, 0};
    st = lm_report_json((const lm_analysis *const *)runs, n, &ro, &out);
    if (st != LM_OK) lm_fail(d, st, NULL, "out of memory");
  }
  for (int i = 0; i < 2; i++) {
    lm_analysis_free(runs[i]);
    lm_server_release(held[i]);
    lm_workload_free(info[i]);
  }
  lm_server_end_evaluation();
  if (st != LM_OK) {
    lm_buf_fini(&out);
    return st;
  }
  lm_server_keep_answer(key, lm_buf_cstr(&out), out.len);
  *len = out.len;
  *text = lm_buf_take(&out);
  if (!*text) return lm_oom(d, NULL);
  return LM_OK;
}

enum MHD_Result lm_server_send_answer(struct MHD_Connection *c, const lm_query *q, lm_server_answer_fn answer) {
  if (!q->w) return lm_server_send_error(c, MHD_HTTP_BAD_REQUEST, "w: which workload?");
  char *text = NULL;
  size_t len = 0;
  int busy = 0;
  lm_diag d;
  lm_diag_clear(&d);
  if (answer(q, &text, &len, &busy, &d) != LM_OK)
    return busy ? lm_server_send_error(c, MHD_HTTP_SERVICE_UNAVAILABLE, "busy; try again") : lm_server_send_diag(c, &d);
  enum MHD_Result ok = lm_server_send(c, MHD_HTTP_OK, "application/json", text, len, 1, 0);
  lm_free(text);
  return ok;
}

enum MHD_Result lm_server_api_analysis(struct MHD_Connection *c, const lm_query *q) {
  return lm_server_send_answer(c, q, lm_server_analysis_answer);
}
