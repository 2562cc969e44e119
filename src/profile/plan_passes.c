/*
 * plan_passes.c - counter sets for GPUs whose cost is counted in passes
 * (NVIDIA through CUPTI), not bounded by per-block limits.
 *
 * CUPTI schedules the raw counters behind a config's metrics itself and
 * says how many passes the config needs; what lumen decides is how to
 * split the metrics into configs. With kernel replay one config is best:
 * CUPTI replays each kernel as often as the config needs, in one run. With
 * application replay every pass is a run of the application, and with
 * instance cycling every pass is a kernel instance, so the cost of a plan
 * is the sum of its sets' passes. The packer is greedy: metrics needing
 * most passes alone go first, each into the set whose pass count it raises
 * least (often not at all), or into a new set when that costs less; one
 * config with everything replaces the packing when it is cheaper. Every
 * cost comes from the pass counter, so the plan is what CUPTI will run.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "profile/profile.h"

/* The GPU duration of a launch: CUPTI's metric every set carries. */
#define DURATION "gpu__time_duration.sum"

static const char *const builtin_columns[] = {
    "Dispatch_ID", "GPU_ID", "Grid_Size", "Workgroup_Size", "LDS_Per_Workgroup",
    "Scratch_Per_Workitem", "Arch_VGPR", "Accum_VGPR", "SGPR", "Wave_Size",
    "Start_Timestamp", "End_Timestamp", "Measured_Power_W", "Measured_Temp_C", "Kernel_Name", NULL};

typedef struct metric {
  const char *name;  /* borrowed from the catalog */
  int32_t solo;      /* passes alone */
  int32_t set;
  char why[160];
  int n_why;
} metric;

typedef struct gather {
  const lm_catalog *cat;
  metric *m;
  int32_t n, cap;
  lm_map *index;
  uint8_t *seen;
  int failed;
} gather;

static void add_metric(gather *g, const char *name, const char *metric_id) {
  for (const char *const *b = builtin_columns; *b; b++)
    if (strcmp(*b, name) == 0) return;
  int64_t at;
  if (!lm_map_get(g->index, name, &at)) {
    if (g->n == g->cap) {
      int32_t cap = g->cap ? g->cap * 2 : 64;
      metric *grown = lm_realloc(g->m, (size_t)cap * sizeof *grown);
      if (!grown) {
        g->failed = 1;
        return;
      }
      g->m = grown;
      g->cap = cap;
    }
    at = g->n;
    memset(&g->m[at], 0, sizeof g->m[at]);
    g->m[at].name = name;
    g->m[at].set = -1;
    if (lm_map_put(g->index, name, at) != LM_OK) {
      g->failed = 1;
      return;
    }
    g->n++;
  }
  metric *m = &g->m[at];
  if (m->n_why < 3 && !strstr(m->why, metric_id)) {
    size_t len = strlen(m->why);
    snprintf(m->why + len, sizeof m->why - len, "%s%s", m->n_why ? ", " : "", metric_id);
  }
  m->n_why++;
}

static void walk(gather *g, int32_t node, const char *metric_id);

/* The metrics of every cell of one selected row. */
static void walk_row(const lm_catalog *cat, const lm_tabledef *td, int32_t row, const char *metric_id,
                     void *user) {
  gather *g = user;
  memset(g->seen, 0, (size_t)cat->n_nodes);
  for (int32_t c = 0; c < td->n_cols; c++) {
    const lm_celldef *cell = &cat->cells[cat->rows[row].first_cell + c];
    walk(g, cell->node, metric_id);
    walk(g, cell->corrected, metric_id);
  }
}

static void walk(gather *g, int32_t node, const char *metric_id) {
  if (node < 0 || g->seen[node]) return;
  g->seen[node] = 1;
  const lm_catalog *cat = g->cat;
  const lm_node *n = &cat->nodes[node];
  if (n->op == LM_OP_INPUT) {
    add_metric(g, cat->inputs[n->a].column, metric_id);
    return;
  }
  if (n->op == LM_OP_CONST || n->op == LM_OP_SYSVAR) return;
  if (n->op == LM_OP_NORM) {
    for (int32_t i = 0; i < cat->n_norms; i++)
      walk(g, cat->norm_nodes[n->a * cat->n_norms + i], metric_id);
    return;
  }
  walk(g, n->a, metric_id);
  if (!LM_OP_IS_AGGREGATE(n->op) && n->op != LM_OP_ROUND && n->op != LM_OP_TO_INT &&
      n->op != LM_OP_NEG && n->op != LM_OP_NOT)
    walk(g, n->b, metric_id);
  if (n->op == LM_OP_WHERE) walk(g, n->c, metric_id);
}

/* Order: most passes alone first, then by name (metrics of one unit stay
 * together, which keeps their ratios in one set). */
static int cmp_metric(const void *x, const void *y) {
  const metric *a = x, *b = y;
  if (a->solo != b->solo) return b->solo - a->solo;
  return strcmp(a->name, b->name);
}

/* Passes of set s plus metric `extra` (or -1). */
static lm_status set_cost(const metric *m, int32_t n, int32_t s, int32_t extra,
                          const char **names, lm_pass_count count, void *ctx, int32_t *passes,
                          size_t *bytes, lm_diag *diag) {
  size_t k = 0;
  for (int32_t i = 0; i < n; i++)
    if (m[i].set == s) names[k++] = m[i].name;
  if (extra >= 0) names[k++] = m[extra].name;
  return count(ctx, names, k, passes, bytes, diag);
}

lm_status lm_plan_build_passes(const lm_catalog *cat, const char *const *items, size_t n_items,
                               int replay, lm_pass_count count, void *ctx, lm_plan **out,
                               lm_diag *diag) {
  *out = NULL;
  gather g;
  memset(&g, 0, sizeof g);
  g.cat = cat;
  lm_selection sel;
  memset(&sel, 0, sizeof sel);
  lm_plan *plan = NULL;
  const char **names = NULL;
  int32_t *set_passes = NULL;
  size_t *set_bytes = NULL;
  uint8_t *replica = NULL;
  lm_status st = LM_OK;
  g.index = lm_map_new();
  g.seen = lm_malloc((size_t)cat->n_nodes + 1);
  if (!g.index || !g.seen) goto nomem;
  st = lm_catalog_select(cat, items, n_items, &sel, diag);
  if (st != LM_OK) goto done;

  /* 1. The metrics of every selected cell. */
  lm_plan_each_row(cat, &sel, walk_row, &g);
  if (g.failed) goto nomem;
  names = lm_calloc((size_t)g.n + 1, sizeof *names);
  set_passes = lm_calloc((size_t)g.n + 1, sizeof *set_passes);
  set_bytes = lm_calloc((size_t)g.n + 1, sizeof *set_bytes);
  if (!names || !set_passes || !set_bytes) goto nomem;

  /* 2. One config with everything. */
  int32_t one = 0;
  size_t one_bytes = 0;
  if (g.n > 0) {
    for (int32_t i = 0; i < g.n; i++) names[i] = g.m[i].name;
    st = count(ctx, names, (size_t)g.n, &one, &one_bytes, diag);
    if (st != LM_OK) goto done;
  }
  int32_t n_sets = 0, packed = 0, packed_sets = 0;
  if (replay == LM_REPLAY_KERNEL || g.n == 0) {
    for (int32_t i = 0; i < g.n; i++) g.m[i].set = 0;
    n_sets = g.n > 0;
    set_passes[0] = one;
    set_bytes[0] = one_bytes;
  } else {
    /* 3. Greedy packing by pass cost. */
    for (int32_t i = 0; i < g.n; i++) {
      size_t bytes;
      names[0] = g.m[i].name;
      st = count(ctx, names, 1, &g.m[i].solo, &bytes, diag);
      if (st != LM_OK) goto done;
    }
    qsort(g.m, (size_t)g.n, sizeof *g.m, cmp_metric);
    for (int32_t i = 0; i < g.n; i++) {
      int32_t best = -1, best_rise = 0, best_passes = 0;
      size_t best_bytes = 0;
      for (int32_t s = 0; s < n_sets; s++) {
        int32_t p;
        size_t bytes;
        st = set_cost(g.m, g.n, s, i, names, count, ctx, &p, &bytes, diag);
        if (st != LM_OK) goto done;
        int32_t rise = p - set_passes[s];
        if (best < 0 || rise < best_rise) {
          best = s;
          best_rise = rise;
          best_passes = p;
          best_bytes = bytes;
        }
        if (rise == 0) break;
      }
      if (best >= 0 && best_rise < g.m[i].solo) {
        g.m[i].set = best;
        set_passes[best] = best_passes;
        set_bytes[best] = best_bytes;
      } else {
        g.m[i].set = n_sets;
        names[0] = g.m[i].name;
        st = count(ctx, names, 1, &set_passes[n_sets], &set_bytes[n_sets], diag);
        if (st != LM_OK) goto done;
        n_sets++;
      }
    }
    /* With several sets, each holds the GPU duration, so that every
     * launch of a row has its own measured duration (its end time) and the
     * sets share a quantity whose spread says how far they differ
     * (docs/spread.md). A set lacking it gets a replica, priced by CUPTI,
     * before the packing is weighed against one config. */
    int has_duration = 0;
    for (int32_t c = 0; c < cat->n_counters; c++) has_duration |= strcmp(cat->counters[c], DURATION) == 0;
    int32_t duration_set = -1;
    for (int32_t i = 0; i < g.n; i++)
      if (strcmp(g.m[i].name, DURATION) == 0) duration_set = g.m[i].set;
    replica = lm_calloc((size_t)n_sets + 1, 1);
    if (!replica) goto nomem;
    for (int32_t s = 0; has_duration && n_sets > 1 && s < n_sets; s++) {
      if (s == duration_set) continue;
      size_t k = 0;
      for (int32_t i = 0; i < g.n; i++)
        if (g.m[i].set == s) names[k++] = g.m[i].name;
      names[k++] = DURATION;
      if ((st = count(ctx, names, k, &set_passes[s], &set_bytes[s], diag)) != LM_OK) goto done;
      replica[s] = 1;
    }
    packed = 0;
    for (int32_t s = 0; s < n_sets; s++) packed += set_passes[s];
    packed_sets = n_sets;
    if (one <= packed) {
      for (int32_t i = 0; i < g.n; i++) g.m[i].set = 0;
      replica[0] = 0;
      n_sets = 1;
      set_passes[0] = one;
      set_bytes[0] = one_bytes;
    }
  }

  /* 4. The plan. */
  plan = lm_calloc(1, sizeof *plan);
  if (!plan || !(plan->arena = lm_arena_new(1 << 14))) goto nomem;
  lm_arena *a = plan->arena;
  plan->arch = lm_arena_strdup(a, cat->arch);
  plan->chip = lm_arena_strdup(a, cat->chip);
  plan->replay = replay;
  plan->n_sets = n_sets;
  plan->one_config_passes = one;
  plan->packed_sets = packed_sets;
  plan->packed_passes = packed;
  plan->sets = lm_arena_alloc(a, ((size_t)n_sets + 1) * sizeof *plan->sets);
  plan->counters = lm_arena_alloc(a, ((size_t)g.n + (size_t)n_sets + 1) * sizeof *plan->counters);
  plan->missing = lm_arena_alloc(a, sizeof(char *));
  if (!plan->arch || !plan->chip || !plan->sets || !plan->counters || !plan->missing) goto nomem;
  for (int32_t s = 0; s < n_sets; s++) {
    lm_plan_set *ps = &plan->sets[s];
    ps->first = plan->n_counters;
    ps->passes = set_passes[s];
    ps->image_bytes = set_bytes[s];
    plan->total_passes += set_passes[s];
    for (int32_t i = 0; i < g.n; i++) {
      if (g.m[i].set != s) continue;
      lm_plan_counter *c = &plan->counters[plan->n_counters++];
      char block[64], why[256];
      size_t len = strcspn(g.m[i].name, "_");
      snprintf(block, sizeof block, "%.*s", (int)(len < 60 ? len : 60), g.m[i].name);
      if (g.m[i].n_why > 3)
        snprintf(why, sizeof why, "%s and %d more", g.m[i].why, g.m[i].n_why - 3);
      else
        snprintf(why, sizeof why, "%s", g.m[i].why);
      c->name = lm_arena_strdup(a, g.m[i].name);
      c->block = lm_arena_strdup(a, block);
      c->why = lm_arena_strdup(a, why);
      c->set = s;
      if (!c->name || !c->block || !c->why) goto nomem;
    }
    if (replica && replica[s]) {
      lm_plan_counter *c = &plan->counters[plan->n_counters++];
      memset(c, 0, sizeof *c);
      c->name = DURATION;
      c->block = "gpu";
      c->why = "every set: the GPU duration of the same launch";
      c->set = s;
      c->replica = 1;
    }
    ps->n = plan->n_counters - ps->first;
  }
  /* The fewest sets: a set per metric that alone needs more than one
   * pass is not forced, so the bound is 1 whenever there are metrics. */
  plan->lower_bound = n_sets > 0;
  *out = plan;
  plan = NULL;
  goto done;
nomem:
  st = lm_diag_set(diag, LM_ENOMEM, NULL, 0, 0, NULL, "out of memory");
done:
  lm_free(replica);
  lm_plan_free(plan);
  lm_free(names);
  lm_free(set_passes);
  lm_free(set_bytes);
  lm_free(g.m);
  lm_free(g.seen);
  lm_map_free(g.index);
  lm_selection_fini(&sel);
  return st;
}
