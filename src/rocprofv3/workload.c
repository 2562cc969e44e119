/*
 * workload.c - the fold of rocprofv3 rows as a workload: the pmc_perf
 * table, GPU ids numbered from 0 in agent order, and the system
 * information of the GPU agent from agent_info.csv, the rest assumed by
 * the shared fold's finish (src/fold) with a warning that names every
 * assumed field.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "csv/csv.h"
#include "rocprofv3/rocprofv3_private.h"

/* agent_info column -> sysinfo field. */
static const char *const agent_fields[][2] = {{"Product_Name", "gpu_model"},
                                              {"Cu_Count", "cu_per_gpu"},
                                              {"Simd_Per_Cu", "simd_per_cu"},
                                              {"Wave_Front_Size", "wave_size"},
                                              {"Workgroup_Max_Size", "workgroup_max_size"},
                                              {"Max_Waves_Per_Cu", "max_waves_per_cu"},
                                              {"Max_Engine_Clk_Fcompute", "max_sclk"},
                                              {"Max_Engine_Clk_Fcompute", "cur_sclk"},
                                              {"Num_Xcc", "num_xcd"}};

static long col(const char *const *f, size_t n, const char *name) {
  for (size_t i = 0; i < n; i++)
    if (strcmp(f[i], name) == 0) return (long)i;
  return -1;
}

/* The GPU agents of agent_info.csv at path. */
static lm_status read_agents(const char *path, lm_v3_agents *a, lm_diag *diag) {
  lm_csv_rows *rows = NULL;
  lm_status st = lm_csv_rows_open(path, 0, &rows, diag);
  if (st != LM_OK) return st;
  const char *const *f;
  size_t n;
  if ((st = lm_csv_rows_next(rows, &f, &n, diag)) != LM_OK || n == 0) goto done;
  long c_node = col(f, n, "Node_Id"), c_type = col(f, n, "Agent_Type"), c_name = col(f, n, "Name");
  long c_src[LM_ARRAY_LEN(agent_fields)];
  for (size_t i = 0; i < LM_ARRAY_LEN(agent_fields); i++) c_src[i] = col(f, n, agent_fields[i][0]);
  long c_arrays = col(f, n, "Array_Count"), c_per_se = col(f, n, "Simd_Arrays_Per_Engine");
  while ((st = lm_csv_rows_next(rows, &f, &n, diag)) == LM_OK && n) {
    long line = lm_csv_rows_line(rows);
    if (c_node < 0 || c_type < 0 || c_node >= (long)n || c_type >= (long)n) {
      st = lm_fail_at(diag, LM_EPARSE, path, line, c_node < 0 ? "Node_Id" : "Agent_Type",
                      "missing from the agent information");
      break;
    }
    if (strcmp(f[c_type], "GPU") != 0) continue;
    if (a->n == LM_V3_MAX_AGENTS) break;
    double node;
    int is_int;
    if (lm_parse_number(f[c_node], f[c_node] + strlen(f[c_node]), &node, &is_int) != 1) {
      st = lm_fail_at(diag, LM_EPARSE, path, line, "Node_Id", "not a number: \"%.40s\"", f[c_node]);
      break;
    }
    a->node[a->n++] = node;
    if (a->n > 1) continue;
    if (c_name >= 0 && c_name < (long)n) {
      /* "gfx942" or "gfx942:sramecc+:xnack-" */
      snprintf(a->arch, sizeof a->arch, "%.*s", (int)strcspn(f[c_name], ":"), f[c_name]);
    }
    for (size_t i = 0; i < LM_ARRAY_LEN(agent_fields) && st == LM_OK; i++)
      if (c_src[i] >= 0 && c_src[i] < (long)n) st = lm_v3_agents_keep(a, agent_fields[i][1], f[c_src[i]], path, diag);
    if (st == LM_OK && c_arrays >= 0 && c_per_se >= 0 && c_arrays < (long)n && c_per_se < (long)n) {
      double arrays = atof(f[c_arrays]), per = atof(f[c_per_se]);
      char se[32];
      snprintf(se, sizeof se, "%.0f", arrays / per);
      if (arrays > 0 && per > 0) st = lm_v3_agents_keep(a, "se_per_gpu", se, path, diag);
    }
    if (st != LM_OK) break;
  }
done:
  lm_csv_rows_close(rows);
  return st;
}

static int cmp_double(const void *x, const void *y) {
  double a = *(const double *)x, b = *(const double *)y;
  return (a > b) - (a < b);
}

/* GPU_ID: agents numbered in agent_info's order of GPU agents, else in
 * the order of their ids. */
static lm_status number_gpus(lm_fold *fold, const lm_v3_agents *a, lm_diag *diag) {
  double *gpu = fold->facts[0];
  double *ids = NULL;
  size_t n_ids = 0;
  if (a->n == 0) {
    ids = lm_malloc((fold->n_rows + 1) * sizeof *ids);
    if (!ids) return lm_oom(diag, fold->path);
    for (size_t r = 0; r < fold->n_rows; r++)
      if (!isnan(gpu[r])) ids[n_ids++] = gpu[r];
    if (n_ids) qsort(ids, n_ids, sizeof *ids, cmp_double);
  }
  const double *list = a->n ? a->node : ids;
  size_t n_list = a->n ? a->n : n_ids;
  for (size_t r = 0; r < fold->n_rows; r++) {
    if (isnan(gpu[r])) continue;
    double index = 0;
    int seen = 0;
    for (size_t i = 0; i < n_list; i++) {
      if (list[i] == gpu[r]) {
        seen = 1;
        break;
      }
      if (i == 0 || list[i] != list[i - 1]) index++;
    }
    gpu[r] = seen ? index : gpu[r];
  }
  lm_free(ids);
  return LM_OK;
}

lm_status lm_v3_fold_finish(lm_v3_fold *fold, const lm_v3_files *files, lm_v3_agents *a, const char *arch,
                            const char *const *fact_names, int n_facts, lm_workload **out, lm_diag *diag) {
  *out = NULL;
  lm_workload *w = NULL;
  lm_status st = LM_OK;
  lm_fold *t = fold->t;
  const char *first = files->n_counters ? files->counters[0] : files->n_traces ? files->traces[0] : t->path;
  if (t->n_rows == 0) {
    st = lm_fail(diag, LM_EDATA, first, "no dispatch rows: nothing to analyze");
    goto done;
  }
  for (size_t i = 0; i < files->n_agents && a->n == 0 && st == LM_OK; i++) {
    a->where = files->agents[i];
    st = read_agents(files->agents[i], a, diag);
  }
  if (st != LM_OK) goto done;
  if (!fold->gpus_numbered && (st = number_gpus(t, a, diag)) != LM_OK) goto done;
  lm_fold_shape shape = {.format = "rocprofv3", .fact_names = fact_names, .n_facts = n_facts};
  if ((st = lm_fold_workload(t, &shape, &w, diag)) != LM_OK) goto done;
  const char *use = a->arch[0] ? a->arch : arch;
  if (a->arch[0] && arch && *arch && strcmp(a->arch, arch) != 0)
    lm_log(LM_LOG_WARN, "%s: the agent information says %s; --arch %s is ignored", a->where ? a->where : t->path,
           a->arch, arch);
  if (!use || !*use) {
    st = lm_fold_no_arch(
        w, n_facts, (const char *const *)a->keys, (const char *const *)a->values, a->n_keys,
        files->n_counters ? "no agent_info.csv beside the counters" : "no agent_info.csv beside the kernel trace",
        "gfx942", diag);
    goto done;
  }
  st = lm_fold_sysinfo(w, t->path, use, (const char *const *)a->keys, (const char *const *)a->values, a->n_keys,
                       a->where ? a->where : t->path, diag);
done:
  if (st != LM_OK) {
    lm_workload_free(w);
    return st;
  }
  *out = w;
  return LM_OK;
}
