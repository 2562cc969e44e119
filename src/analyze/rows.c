/*
 * rows.c - which dispatches an analysis covers.
 *
 * The GPU, rank, region and dispatch filters give the rows of the
 * top-kernels and dispatch-list tables; the kernel-name patterns (matched
 * once per distinct name) and the instance numbers then give the rows
 * whose metrics are evaluated, and --kernel-index keeps those of the
 * kernels it picks from the top-kernels table. A filter that matches no
 * dispatch is an error that says what the data holds.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "analyze/analyze_private.h"

void lm_analyze_find_columns(lm_analyze_ctx *c, const lm_table *pmc) {
  c->pmc = pmc;
  c->col_kernel = lm_table_find(pmc, "Kernel_Name");
  c->col_dispatch = lm_table_find(pmc, "Dispatch_ID");
  c->col_gpu = lm_table_find(pmc, "GPU_ID");
  c->col_start = lm_table_find(pmc, "Start_Timestamp");
  c->col_end = lm_table_find(pmc, "End_Timestamp");
  c->col_grbm = lm_table_find(pmc, "GRBM_GUI_ACTIVE");
}

/* -r: a bit mask over the workload's region names, in *mask (0 without
 * -r). Errors: a workload without regions, a region it does not have. */
static lm_status region_mask(lm_analyze_ctx *c, uint64_t *mask) {
  *mask = 0;
  if (!c->o->n_regions) return LM_OK;
  if (!c->w->n_regions || !c->w->row_regions)
    return lm_fail(c->diag, LM_EINVAL, c->w->path,
                   "-r: this workload carries no region markers (only lumen profiles "
                   "of programs with region markers have them)");
  for (size_t i = 0; i < c->o->n_regions; i++) {
    size_t k = 0;
    while (k < c->w->n_regions && strcmp(c->w->region_names[k], c->o->regions[i]) != 0) k++;
    if (k == c->w->n_regions || k >= 64) {
      lm_buf names = {0};
      for (size_t q = 0; q < c->w->n_regions; q++)
        lm_buf_printf(&names, "%s%s", q ? ", " : "", c->w->region_names[q]);
      lm_status st = lm_fail(c->diag, LM_EINVAL, c->w->path, "-r %s: no such region in this workload (regions: %s)",
                             c->o->regions[i], lm_buf_cstr(&names));
      lm_buf_fini(&names);
      return st;
    }
    *mask |= 1ULL << k;
  }
  return LM_OK;
}

/* --rank: the MPI ranks of a workload that records them, in *ranks (NULL
 * without --rank). Errors: a workload without ranks, ranks that ran no
 * dispatch. */
static lm_status rank_filter(lm_analyze_ctx *c, const lm_idset **ranks) {
  *ranks = c->o->rank && c->o->rank->n ? c->o->rank : NULL;
  if (*ranks && !c->w->row_rank)
    return lm_fail(c->diag, LM_EINVAL, c->w->path,
                   c->w->set_rank ? "--rank: the ranks of this --split ranks profile collected shares of the "
                                    "counter sets of the same dispatches, combined into one view (one rank's "
                                    "share alone: -w DIR/rank.R)"
                                  : "--rank: this workload records no MPI ranks (profiles of MPI programs do)");
  if (*ranks) {
    size_t hit = 0;
    for (size_t r = 0; r < c->pmc->n_rows && !hit; r++)
      hit = c->w->row_rank[r] >= 0 && lm_idset_has(*ranks, c->w->row_rank[r]);
    if (!hit) {
      lm_buf list = {0};
      lm_analyze_rank_list(c->w, &list);
      lm_status st =
          lm_fail(c->diag, LM_EINVAL, NULL, "--rank: no dispatch of the rank(s) asked for (ranks in the data: %s)",
                  lm_buf_cstr(&list));
      lm_buf_fini(&list);
      return st;
    }
  }
  return LM_OK;
}

/* -g matched no dispatch: the error, naming the GPU ids in the data. */
static lm_status no_gpu(lm_analyze_ctx *c) {
  const lm_table *pmc = c->pmc;
  lm_buf gpus = {0};
  double last = LM_NAN;
  for (size_t r = 0; r < pmc->n_rows; r++) {
    double g = cell_value(pmc, c->col_gpu, r);
    int dup = 0;
    for (size_t q = 0; q < r && !dup; q++) dup = cell_value(pmc, c->col_gpu, q) == g;
    if (!dup && !isnan(g)) lm_buf_printf(&gpus, "%s%.0f", isnan(last) ? "" : ", ", g), last = g;
  }
  lm_status st = lm_fail(c->diag, LM_EINVAL, NULL,
                         "-g: no dispatch ran on the GPU(s) asked for (GPU ids in the data: %s)", lm_buf_cstr(&gpus));
  lm_buf_fini(&gpus);
  return st;
}

/* The Dispatch_ID values of the dispatches on the selected GPUs, for
 * messages: ranges of consecutive ids, the first few of them, into ids
 * ("none" without any); *n_ids: how many dispatches there are. */
static void list_ids(lm_analyze_ctx *c, lm_buf *ids, size_t *n_ids) {
  const lm_table *pmc = c->pmc;
  size_t n = pmc->n_rows;
  double lo = LM_NAN, hi = LM_NAN;
  size_t shown = 0;
  *n_ids = 0;
  for (size_t r = 0; r <= n; r++) {
    double d = LM_NAN;
    if (r < n) {
      if (c->o->gpu && c->o->gpu->n) {
        double g = cell_value(pmc, c->col_gpu, r);
        if (isnan(g) || !lm_idset_has(c->o->gpu, (int64_t)g)) continue;
      }
      d = dispatch_id(c, r);
      if (isnan(d)) continue;
      (*n_ids)++;
      if (!isnan(hi) && d == hi + 1) {
        hi = d;
        continue;
      }
    }
    if (!isnan(lo) && shown < 8) {
      if (lo == hi) lm_buf_printf(ids, "%s%.0f", shown ? ", " : "", lo);
      else lm_buf_printf(ids, "%s%.0f:%.0f", shown ? ", " : "", lo, hi + 1);
      shown++;
    } else if (!isnan(lo) && shown == 8) {
      lm_buf_puts(ids, ", ...");
      shown++;
    }
    lo = hi = d;
  }
  if (!*n_ids) lm_buf_puts(ids, "none");
}

/* -d (or -r) matched no dispatch: the error, saying which ids there are
 * (on the selected GPUs). */
static lm_status no_dispatch(lm_analyze_ctx *c, uint64_t regions) {
  lm_buf ids = {0};
  size_t n_ids;
  list_ids(c, &ids, &n_ids);
  lm_status st = lm_fail(c->diag, LM_EINVAL, NULL,
                         regions ? "-r/-d: no dispatch in the region(s) with the ids asked for%s"
                                 : "-d: no dispatch with the ids asked for%s (Dispatch_ID values%s: %s)",
                         c->o->gpu && c->o->gpu->n ? " on the selected GPU(s)" : "",
                         c->o->gpu && c->o->gpu->n ? " there" : "", lm_buf_cstr(&ids));
  lm_buf_fini(&ids);
  return st;
}

/* A single id of -d (item `item`) that no dispatch on the selected GPUs
 * has: the error naming it and how many dispatches there are. */
static lm_status no_such_dispatch(lm_analyze_ctx *c, size_t item) {
  lm_buf ids = {0};
  size_t n_ids;
  list_ids(c, &ids, &n_ids);
  int gpus = c->o->gpu && c->o->gpu->n;
  lm_status st = lm_fail(c->diag, LM_EINVAL, NULL,
                         "-d %lld: no dispatch has this Dispatch_ID%s (%zu dispatch%s; Dispatch_ID values: %s)",
                         (long long)c->o->dispatch->items[item].a, gpus ? " on the selected GPU(s)" : "", n_ids,
                         n_ids == 1 ? "" : "es", lm_buf_cstr(&ids));
  lm_buf_fini(&ids);
  return st;
}

static int cmp_id(const void *pa, const void *pb, void *ctx) {
  (void)ctx;
  int64_t a = *(const int64_t *)pa, b = *(const int64_t *)pb;
  return a < b ? -1 : a > b;
}

/* Whether every single id of -d (not slices or ">N") is the Dispatch_ID
 * of a row on the selected GPUs; else the error naming the first that is
 * not. An id asked for by itself and not there is a mistake (a row
 * position taken for an id, a count miscounted), not a silent no-op. One
 * pass over the rows, the ids looked up in their sorted copy. */
static lm_status check_single_ids(lm_analyze_ctx *c) {
  const lm_idset *set = c->o->dispatch;
  if (!set || !set->n) return LM_OK;
  const lm_table *pmc = c->pmc;
  lm_status st = LM_OK;
  int64_t *ids = lm_malloc(set->n * sizeof *ids);
  uint8_t *seen = lm_calloc(set->n, 1);
  if (!ids || !seen) {
    st = lm_oom(c->diag, NULL);
    goto done;
  }
  size_t n = 0;
  for (size_t i = 0; i < set->n; i++)
    if (set->items[i].kind == 0) ids[n++] = set->items[i].a;
  if (!n) goto done;
  lm_sort(ids, n, sizeof *ids, cmp_id, NULL);
  for (size_t r = 0; r < pmc->n_rows; r++) {
    if (c->o->gpu && c->o->gpu->n) {
      double g = cell_value(pmc, c->col_gpu, r);
      if (isnan(g) || !lm_idset_has(c->o->gpu, (int64_t)g)) continue;
    }
    double d = dispatch_id(c, r);
    if (isnan(d)) continue;
    size_t lo = 0, hi = n;
    while (lo < hi) {
      size_t mid = lo + (hi - lo) / 2;
      if ((double)ids[mid] < d) lo = mid + 1;
      else hi = mid;
    }
    if (lo < n && (double)ids[lo] == d) seen[lo] = 1;
  }
  for (size_t i = 0; i < set->n && st == LM_OK; i++) {
    if (set->items[i].kind != 0) continue;
    size_t lo = 0, hi = n;
    while (lo < hi) {
      size_t mid = lo + (hi - lo) / 2;
      if (ids[mid] < set->items[i].a) lo = mid + 1;
      else hi = mid;
    }
    if (!seen[lo]) st = no_such_dispatch(c, i);
  }
done:
  lm_free(ids);
  lm_free(seen);
  return st;
}

/* GPU, rank, dispatch and region filters: the rows of the top-stats
 * tables, into top (room for every row); *n_top: how many. Errors: a
 * filter that leaves no row, those of region_mask and rank_filter. */
static lm_status filter_rows(lm_analyze_ctx *c, size_t *top, size_t *n_top) {
  const lm_table *pmc = c->pmc;
  uint64_t regions;
  const lm_idset *ranks;
  lm_status st = region_mask(c, &regions);
  if (st == LM_OK) st = rank_filter(c, &ranks);
  if (st != LM_OK) return st;
  size_t nt = 0, on_gpu = 0;
  for (size_t r = 0; r < pmc->n_rows; r++) {
    if (regions && !(c->w->row_regions[r] & regions)) continue;
    if (ranks && (c->w->row_rank[r] < 0 || !lm_idset_has(ranks, c->w->row_rank[r]))) continue;
    if (c->o->gpu && c->o->gpu->n) {
      double g = cell_value(pmc, c->col_gpu, r);
      if (isnan(g) || !lm_idset_has(c->o->gpu, (int64_t)g)) continue;
    }
    on_gpu++;
    if (c->o->dispatch && c->o->dispatch->n) {
      double d = dispatch_id(c, r);
      if (isnan(d) || !lm_idset_has(c->o->dispatch, (int64_t)d)) continue;
    }
    top[nt++] = r;
  }
  if (c->o->gpu && c->o->gpu->n && on_gpu == 0) return no_gpu(c);
  if (nt == 0) return no_dispatch(c, regions);
  if ((st = check_single_ids(c)) != LM_OK) return st;
  *n_top = nt;
  return LM_OK;
}

/* Apply -k pattern k to every kernel name: an exclusion ("!re") clears
 * the names it matches in kernel_ok, an inclusion sets their bit 2.
 * Errors: a pattern that does not compile, whose matching fails or
 * reaches its limits (naming the kernel), or that opts->check stops. */
static lm_status match_pattern(lm_analyze_ctx *c, size_t k, uint8_t *kernel_ok) {
  const lm_table *pmc = c->pmc;
  const char *pattern = c->o->kernels[k];
  int exclude = pattern[0] == '!';
  char label[1100];
  snprintf(label, sizeof label, "-k '%.1024s'", pattern);
  lm_regex *re = NULL;
  lm_status status = lm_regex_compile(label, pattern + exclude, &re, c->diag);
  if (status != LM_OK) return status;
  for (size_t s = 0; s < pmc->n_strings; s++) {
    if (c->o->check && s % LM_ANALYZE_CHECK_NAMES == 0 && (status = c->o->check(c->o->check_cls, c->diag)) != LM_OK)
      break;
    int hit;
    if ((status = lm_regex_match(re, "kernel name", pmc->strings[s], &hit, c->diag)) != LM_OK) break;
    if (exclude && hit) kernel_ok[s] = 0;
    if (!exclude) kernel_ok[s] = (uint8_t)(kernel_ok[s] | (hit ? 2 : 0));
  }
  lm_regex_free(re);
  return status;
}

/* Kernel name filters (analyze_private.h). */
lm_status lm_analyze_kernel_filters(lm_analyze_ctx *c, uint8_t *kernel_ok) {
  const lm_table *pmc = c->pmc;
  int any_include = 0;
  for (size_t s = 0; s < pmc->n_strings; s++) kernel_ok[s] = 1;
  for (size_t k = 0; k < c->o->n_kernels; k++) {
    if (c->o->kernels[k][0] != '!') any_include = 1;
    lm_status st = match_pattern(c, k, kernel_ok);
    if (st != LM_OK) return st;
  }
  if (any_include)
    for (size_t s = 0; s < pmc->n_strings; s++) kernel_ok[s] = kernel_ok[s] == 3;
  return LM_OK;
}

/* Instance numbers: per kernel, in dispatch order over the whole run; in
 * a workload of MPI ranks, per rank and kernel (each rank's process
 * counts its own), as in each rank's part alone. instance[r] for every
 * row (-1 without a kernel name); seen_count: a zeroed count per name.
 * Errors: out of memory. */
static lm_status number_instances(lm_analyze_ctx *c, size_t *seen_count, int32_t *instance) {
  const lm_table *pmc = c->pmc;
  size_t n = pmc->n_rows;
  int32_t max_rank = -1;
  for (size_t r = 0; c->w->row_rank && r < n; r++)
    if (c->w->row_rank[r] > max_rank) max_rank = c->w->row_rank[r];
  size_t *per_rank = NULL;
  if (max_rank >= 0 && max_rank < 65536) {
    per_rank = lm_calloc(((size_t)max_rank + 1) * (pmc->n_strings ? pmc->n_strings : 1), sizeof *per_rank);
    if (!per_rank) return lm_oom(c->diag, NULL);
  }
  for (size_t r = 0; r < n; r++) {
    int32_t k = kernel_id(c, r);
    int32_t rank = per_rank ? c->w->row_rank[r] : -1;
    size_t *count = k < 0 ? NULL : rank >= 0 ? &per_rank[(size_t)rank * pmc->n_strings + (size_t)k] : &seen_count[k];
    instance[r] = count ? (int32_t)(*count)++ : -1;
  }
  lm_free(per_rank);
  return LM_OK;
}

lm_status lm_analyze_select(lm_analyze_ctx *c, size_t **top_rows, size_t *n_top, size_t **metric_rows,
                            size_t *n_metric, uint8_t **chosen) {
  const lm_table *pmc = c->pmc;
  size_t n = pmc->n_rows;
  size_t *top = lm_malloc((n ? n : 1) * sizeof *top);
  size_t *met = lm_malloc((n ? n : 1) * sizeof *met);
  uint8_t *kernel_ok = lm_malloc(pmc->n_strings ? pmc->n_strings : 1);
  *chosen = lm_calloc(pmc->n_strings ? pmc->n_strings : 1, 1);
  int32_t *instance = lm_malloc((n ? n : 1) * sizeof *instance);
  size_t *seen_count = lm_calloc(pmc->n_strings ? pmc->n_strings : 1, sizeof *seen_count);
  lm_status status = LM_OK;
  if (!top || !met || !kernel_ok || !*chosen || !instance || !seen_count) {
    status = lm_oom(c->diag, NULL);
    goto done;
  }
  if (n == 0) {
    status = lm_fail(c->diag, LM_EDATA, c->w->path, "the workload holds no dispatch");
    goto done;
  }
  size_t nt = 0;
  if ((status = filter_rows(c, top, &nt)) != LM_OK) goto done;
  *top_rows = top;
  *n_top = nt;
  top = NULL;
  if ((status = lm_analyze_kernel_filters(c, kernel_ok)) != LM_OK) goto done;
  if ((status = number_instances(c, seen_count, instance)) != LM_OK) goto done;
  /* --kernel-index picks rows of the top-kernels table: built by caller
   * into *chosen afterwards. Apply every other filter. */
  size_t nm = 0;
  for (size_t i = 0; i < *n_top; i++) {
    size_t r = (*top_rows)[i];
    int32_t k = kernel_id(c, r);
    if (k >= 0 && !kernel_ok[k]) continue;
    if (c->o->instance && c->o->instance->n && !lm_idset_has(c->o->instance, instance[r]))
      continue;
    met[nm++] = r;
  }
  *metric_rows = met;
  *n_metric = nm;
  met = NULL;
done:
  if (status != LM_OK) {
    lm_free(*top_rows);
    *top_rows = NULL;
  }
  lm_free(top);
  lm_free(met);
  lm_free(kernel_ok);
  lm_free(instance);
  lm_free(seen_count);
  return status;
}

size_t lm_analyze_keep_chosen(const lm_analyze_ctx *c, size_t *rows, size_t n, const uint8_t *chosen) {
  size_t kept = 0;
  for (size_t i = 0; i < n; i++) {
    int32_t k = kernel_id(c, rows[i]);
    if (k >= 0 && chosen[k]) rows[kept++] = rows[i];
  }
  return kept;
}

lm_status lm_analyze_rows(const lm_workload *w, const lm_analyze_opts *o, size_t **rows, size_t *n,
                          lm_diag *diag) {
  lm_analyze_ctx c;
  memset(&c, 0, sizeof c);
  c.w = w;
  c.o = o;
  c.diag = diag;
  lm_analyze_find_columns(&c, w->pmc);
  *rows = NULL;
  *n = 0;
  if (c.col_kernel < 0)
    return lm_fail_at(diag, LM_EDATA, c.pmc->path, 0, "Kernel_Name", "no kernel names in the workload");
  size_t *top = NULL, n_top = 0;
  uint8_t *chosen = NULL;
  lm_status st = lm_analyze_select(&c, &top, &n_top, rows, n, &chosen);
  if (st == LM_OK && o->n_kernel_index) {
    /* --kernel-index: the rows of the top-kernels table asked for, the
     * table built as lm_analyze_run builds it (same order, same refusal
     * of an index past its end). */
    lm_rtable scratch;
    memset(&scratch, 0, sizeof scratch);
    c.arena = lm_arena_new(1 << 12);
    if (!c.arena) st = lm_oom(diag, NULL);
    if (st == LM_OK) st = lm_analyze_top(&c, &scratch, top, n_top, chosen);
    if (st == LM_OK) *n = lm_analyze_keep_chosen(&c, *rows, *n, chosen);
    lm_arena_free(c.arena);
    if (st != LM_OK) {
      lm_free(*rows);
      *rows = NULL;
      *n = 0;
    }
  }
  lm_free(top);
  lm_free(chosen);
  return st;
}
