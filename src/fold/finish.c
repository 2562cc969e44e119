/*
 * finish.c - a fold as a workload: the pmc_perf table (Dispatch_ID, the
 * facts, Kernel_Name, the counters) and the system information, the
 * fields the file gave completed from the architecture's typical product
 * (lm_devices_sysinfo) with one warning that names every assumed field.
 * A file of timestamps only needs no architecture: its top kernels and
 * dispatch list read no counter, so it is read without one.
 */
#include <string.h>

#include "db/db.h"
#include "devices/devices.h"
#include "fold/fold.h"

/* 1 when counter name is left out of the table t being built. */
static int skipped(const lm_fold_shape *sh, const lm_table *t, const char *name) {
  if (sh->skip == LM_FOLD_SKIP_TAKEN) return lm_table_find(t, name) >= 0;
  if (sh->skip != LM_FOLD_SKIP_FACTS) return 0;
  for (int k = 0; k < sh->n_facts; k++)
    if (strcmp(name, sh->fact_names[k]) == 0) return 1;
  return 0;
}

/* The pmc_perf table of the fold, shaped by sh, over the fold's block of
 * columns (which the table takes: no value is copied). Dispatch_ID and
 * Kernel_Name's values take the two fact slots no reader uses. */
static lm_status build_table(lm_fold *fold, const lm_fold_shape *sh, lm_table **out, lm_diag *diag) {
  size_t n = fold->n_rows;
  const char *path = fold->path;
  lm_status st = fold->block ? LM_OK : lm_fold_reserve(fold, 1, diag);
  if (st != LM_OK) return st;
  size_t bytes = fold->cap_rows * fold->block_cols * sizeof(double);
  lm_table *t =
      lm_table_create_over(path, "pmc_perf", n, 2 + (size_t)sh->n_facts + fold->n_counters, fold->block, bytes);
  *out = t;
  if (!t) return lm_oom(diag, path);
  /* The block is the table's now: the fold's columns are gone. */
  fold->block = NULL;
  double *facts[LM_FOLD_MAX_FACTS];
  for (size_t k = 0; k < LM_FOLD_MAX_FACTS; k++) {
    facts[k] = fold->facts[k];
    fold->facts[k] = NULL;
  }
  lm_column *c = lm_table_add_column_at(t, "Dispatch_ID",
                                        sh->dispatch_ids ? (double *)sh->dispatch_ids : facts[LM_FOLD_SPARE_ID], 0);
  if (!c) return lm_oom(diag, path);
  if (!sh->dispatch_ids)
    for (size_t r = 0; r < n; r++) c->values[r] = (double)r;
  for (int k = 0; k < sh->n_facts; k++)
    if (!lm_table_add_column_at(t, sh->fact_names[k], sh->fact_rows ? (double *)sh->fact_rows[k] : facts[k], 0))
      return lm_oom(diag, path);
  if (!(c = lm_table_add_column_at(t, "Kernel_Name", facts[LM_FOLD_SPARE_KERNEL], 1))) return lm_oom(diag, path);
  /* Each kernel interned once (the last slot: unknown, ""), then per row
   * only its id. */
  int32_t *kid = lm_malloc((fold->n_kernels + 1) * sizeof *kid);
  if (!kid) return lm_oom(diag, path);
  for (size_t k = 0; k <= fold->n_kernels; k++)
    if ((kid[k] = lm_table_intern(t, k < fold->n_kernels ? fold->kernels[k] : "")) < 0) {
      lm_free(kid);
      return lm_oom(diag, path);
    }
  for (size_t r = 0; r < n; r++) c->text_ids[r] = kid[fold->kernel[r] >= 0 ? (size_t)fold->kernel[r] : fold->n_kernels];
  lm_free(kid);
  for (size_t k = 0; k < fold->n_counters; k++) {
    if (sh->skip != LM_FOLD_SKIP_NONE && skipped(sh, t, fold->counter_names[k])) continue;
    if (!lm_table_add_column_at(t, fold->counter_names[k], fold->counters[k], 0)) return lm_oom(diag, path);
    fold->counters[k] = NULL;
  }
  return lm_table_finish(t);
}

lm_status lm_fold_workload(lm_fold *fold, const lm_fold_shape *shape, lm_workload **out, lm_diag *diag) {
  *out = NULL;
  if (shape->n_facts > LM_FOLD_SPARE_ID)
    return lm_fail(diag, LM_ELIMIT, fold->path, "more than %d facts", (int)LM_FOLD_SPARE_ID);
  lm_arena *arena = lm_arena_new(1 << 12);
  if (!arena) return lm_oom(diag, fold->path);
  lm_workload *w = lm_arena_alloc(arena, sizeof *w);
  if (!w) {
    lm_arena_free(arena);
    return lm_oom(diag, fold->path);
  }
  w->arena = arena;
  w->format = shape->format;
  lm_status st = LM_OK;
  w->path = lm_arena_strdup(arena, fold->path);
  if (!w->path)
    st = lm_oom(diag, fold->path);
  else
    st = build_table(fold, shape, &w->pmc, diag);
  if (st != LM_OK) {
    lm_workload_free(w);
    return st;
  }
  *out = w;
  return LM_OK;
}

lm_status lm_fold_sysinfo(lm_workload *w, const char *path, const char *arch, const char *const *keys,
                          const char *const *values, size_t n, const char *where, lm_diag *diag) {
  char assumed[1024];
  lm_status st = lm_devices_sysinfo(w, arch, keys, values, n, where, assumed, sizeof assumed, diag);
  if (st == LM_OK && assumed[0])
    lm_log(LM_LOG_WARN, "%s: system information assumed from a typical %s (%s): %s", path,
           lm_devices_product(arch) ? lm_devices_product(arch) : arch, arch, assumed);
  return st;
}

lm_status lm_fold_no_arch(lm_workload *w, int n_facts, const char *const *keys, const char *const *values, size_t n,
                          const char *missing, const char *example, lm_diag *diag) {
  /* (counters: any column past Dispatch_ID, the facts and Kernel_Name) */
  if (w->pmc->n_cols > 2 + (size_t)n_facts)
    return lm_fail(diag, LM_EARCH, w->path,
                   "the architecture is not recorded (%s): give it with --arch, e.g. --arch %s", missing, example);
  lm_log(LM_LOG_DEBUG, "%s: the architecture is not recorded (%s) and no counter was collected: read without one",
         w->path, missing);
  /* The fields known, and gpu_arch empty: "not recorded", which the store
   * keeps (a workload with dispatches and no gpu_arch field is damaged). */
  char **k = lm_calloc(n + 1, sizeof *k), **v = lm_calloc(n + 1, sizeof *v);
  lm_status st = k && v ? LM_OK : lm_oom(diag, w->path);
  size_t m = 0;
  for (size_t i = 0; st == LM_OK && i < n; i++)
    if (strcmp(keys[i], "gpu_arch") != 0) {
      k[m] = (char *)keys[i];
      v[m++] = (char *)values[i];
    }
  if (st == LM_OK) {
    k[m] = (char *)"gpu_arch";
    v[m++] = (char *)"";
    st = lm_db_sysinfo_build(w->path, k, v, m, w->arena, &w->sysinfo_table, &w->sysinfo, diag);
  }
  w->arch = NULL;
  lm_free(k);
  lm_free(v);
  return st;
}
