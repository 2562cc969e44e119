/*
 * plan_passes.c - counter sets for GPUs whose cost is counted in passes
 * (NVIDIA through CUPTI), not bounded by per-block limits.
 *
 * CUPTI counts a config's passes; with kernel replay one config is best (each
 * kernel replayed in one run), while with application replay or instance
 * cycling each pass is a run or an instance, so a plan costs the sum of its
 * sets' passes. The packer is greedy (metrics needing most passes first, each
 * into the set it raises least, or a new set when that costs less); one
 * config with everything wins when cheaper. Invariant: every cost is CUPTI's
 * own count, so the plan is what CUPTI will run.
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

static lm_status oom(lm_diag *diag) { return lm_oom(diag, NULL); }

/* One plan being packed (lm_plan_build_passes): the metrics, the sets'
 * costs from the pass counter, and one config with everything. */
typedef struct packer {
  gather g;
  lm_pass_count count; /* prices a config */
  void *ctx;           /* count's */
  lm_diag *diag;
  const char **names;  /* scratch: the metrics of one config */
  int32_t *set_passes; /* per set */
  size_t *set_bytes;   /* per set: its config image */
  uint8_t *replica;    /* per set: it holds a copy of DURATION */
  int32_t n_sets;
  int32_t one;         /* passes of one config with everything */
  size_t one_bytes;
  int32_t packed, packed_sets; /* passes and sets of the packing */
} packer;

/* pack_greedy: each metric, most passes alone first, into the set whose
 * passes it raises least, or into a new set when that costs less. */
static lm_status pack_greedy(packer *pk) {
  gather *g = &pk->g;
  lm_status st;
  for (int32_t i = 0; i < g->n; i++) {
    size_t bytes;
    pk->names[0] = g->m[i].name;
    if ((st = pk->count(pk->ctx, pk->names, 1, &g->m[i].solo, &bytes, pk->diag)) != LM_OK) return st;
  }
  if (g->n > 1) qsort(g->m, (size_t)g->n, sizeof *g->m, cmp_metric);
  for (int32_t i = 0; i < g->n; i++) {
    int32_t best = -1, best_rise = 0, best_passes = 0;
    size_t best_bytes = 0;
    for (int32_t s = 0; s < pk->n_sets; s++) {
      int32_t p;
      size_t bytes;
      st = set_cost(g->m, g->n, s, i, pk->names, pk->count, pk->ctx, &p, &bytes, pk->diag);
      if (st != LM_OK) return st;
      int32_t rise = p - pk->set_passes[s];
      if (best < 0 || rise < best_rise) {
        best = s;
        best_rise = rise;
        best_passes = p;
        best_bytes = bytes;
      }
      if (rise == 0) break;
    }
    if (best >= 0 && best_rise < g->m[i].solo) {
      g->m[i].set = best;
      pk->set_passes[best] = best_passes;
      pk->set_bytes[best] = best_bytes;
    } else {
      int32_t s = pk->n_sets;
      g->m[i].set = s;
      pk->names[0] = g->m[i].name;
      if ((st = pk->count(pk->ctx, pk->names, 1, &pk->set_passes[s], &pk->set_bytes[s], pk->diag)) != LM_OK)
        return st;
      pk->n_sets++;
    }
  }
  return LM_OK;
}

/* add_durations: with several sets, each holds the GPU duration, so that
 * every launch of a row has its own measured duration (its end time) and
 * the sets share a quantity whose spread says how far they differ
 * (docs/spread.md). A set lacking it gets a replica, priced by CUPTI,
 * before the packing is weighed against one config. */
static lm_status add_durations(packer *pk, const lm_catalog *cat) {
  gather *g = &pk->g;
  int has_duration = 0;
  for (int32_t c = 0; c < cat->n_counters; c++) has_duration |= strcmp(cat->counters[c], DURATION) == 0;
  int32_t duration_set = -1;
  for (int32_t i = 0; i < g->n; i++)
    if (strcmp(g->m[i].name, DURATION) == 0) duration_set = g->m[i].set;
  pk->replica = lm_calloc((size_t)pk->n_sets + 1, 1);
  if (!pk->replica) return oom(pk->diag);
  for (int32_t s = 0; has_duration && pk->n_sets > 1 && s < pk->n_sets; s++) {
    if (s == duration_set) continue;
    size_t k = 0;
    for (int32_t i = 0; i < g->n; i++)
      if (g->m[i].set == s) pk->names[k++] = g->m[i].name;
    pk->names[k++] = DURATION;
    lm_status st = pk->count(pk->ctx, pk->names, k, &pk->set_passes[s], &pk->set_bytes[s], pk->diag);
    if (st != LM_OK) return st;
    pk->replica[s] = 1;
  }
  return LM_OK;
}

/* one_set: every metric in one set, the config with everything. */
static void one_set(packer *pk) {
  for (int32_t i = 0; i < pk->g.n; i++) pk->g.m[i].set = 0;
  pk->n_sets = pk->g.n > 0;
  pk->set_passes[0] = pk->one;
  pk->set_bytes[0] = pk->one_bytes;
}

/* pack: the sets for replay: one config for kernel replay, else the
 * greedy packing by pass cost (with a duration in every set), replaced by
 * one config when that needs no more passes. */
static lm_status pack(packer *pk, const lm_catalog *cat, int replay) {
  lm_status st;
  if (replay == LM_REPLAY_KERNEL || pk->g.n == 0) {
    one_set(pk);
    return LM_OK;
  }
  if ((st = pack_greedy(pk)) != LM_OK || (st = add_durations(pk, cat)) != LM_OK) return st;
  pk->packed = 0;
  for (int32_t s = 0; s < pk->n_sets; s++) pk->packed += pk->set_passes[s];
  pk->packed_sets = pk->n_sets;
  if (pk->one <= pk->packed) {
    one_set(pk);
    pk->replica[0] = 0;
  }
  return LM_OK;
}

/* fill_set: set s of plan: its metrics, each with its block (the name up
 * to its first '_') and the metrics that read it, then its duration
 * replica. */
static lm_status fill_set(const packer *pk, lm_plan *plan, int32_t s) {
  const gather *g = &pk->g;
  lm_arena *a = plan->arena;
  lm_plan_set *ps = &plan->sets[s];
  ps->first = plan->n_counters;
  ps->passes = pk->set_passes[s];
  ps->image_bytes = pk->set_bytes[s];
  plan->total_passes += pk->set_passes[s];
  for (int32_t i = 0; i < g->n; i++) {
    if (g->m[i].set != s) continue;
    lm_plan_counter *c = &plan->counters[plan->n_counters++];
    char block[64], why[256];
    size_t len = strcspn(g->m[i].name, "_");
    snprintf(block, sizeof block, "%.*s", (int)(len < 60 ? len : 60), g->m[i].name);
    if (g->m[i].n_why > 3)
      snprintf(why, sizeof why, "%s and %d more", g->m[i].why, g->m[i].n_why - 3);
    else
      snprintf(why, sizeof why, "%s", g->m[i].why);
    c->name = lm_arena_strdup(a, g->m[i].name);
    c->block = lm_arena_strdup(a, block);
    c->why = lm_arena_strdup(a, why);
    c->set = s;
    if (!c->name || !c->block || !c->why) return oom(pk->diag);
  }
  if (pk->replica && pk->replica[s]) {
    lm_plan_counter *c = &plan->counters[plan->n_counters++];
    memset(c, 0, sizeof *c);
    c->name = DURATION;
    c->block = "gpu";
    c->why = "every set: the GPU duration of the same launch";
    c->set = s;
    c->replica = 1;
  }
  ps->n = plan->n_counters - ps->first;
  return LM_OK;
}

/* make_plan: the plan (*out) of the packed sets. */
static lm_status make_plan(const packer *pk, const lm_catalog *cat, int replay, lm_plan **out) {
  lm_status st = LM_OK;
  int32_t n_sets = pk->n_sets;
  lm_plan *plan = lm_calloc(1, sizeof *plan);
  if (!plan || !(plan->arena = lm_arena_new(1 << 14))) {
    st = oom(pk->diag);
    goto done;
  }
  lm_arena *a = plan->arena;
  plan->arch = lm_arena_strdup(a, cat->arch);
  plan->chip = lm_arena_strdup(a, cat->chip);
  plan->replay = replay;
  plan->n_sets = n_sets;
  plan->one_config_passes = pk->one;
  plan->packed_sets = pk->packed_sets;
  plan->packed_passes = pk->packed;
  plan->sets = lm_arena_alloc(a, ((size_t)n_sets + 1) * sizeof *plan->sets);
  plan->counters = lm_arena_alloc(a, ((size_t)pk->g.n + (size_t)n_sets + 1) * sizeof *plan->counters);
  plan->missing = lm_arena_alloc(a, sizeof(char *));
  if (!plan->arch || !plan->chip || !plan->sets || !plan->counters || !plan->missing) {
    st = oom(pk->diag);
    goto done;
  }
  for (int32_t s = 0; s < n_sets; s++)
    if ((st = fill_set(pk, plan, s)) != LM_OK) goto done;
  /* The fewest sets: a set per metric that alone needs more than one
   * pass is not forced, so the bound is 1 whenever there are metrics. */
  plan->lower_bound = n_sets > 0;
  *out = plan;
  plan = NULL;
done:
  lm_plan_free(plan);
  return st;
}

lm_status lm_plan_build_passes(const lm_catalog *cat, const char *const *items, size_t n_items,
                               int replay, lm_pass_count count, void *ctx, lm_plan **out,
                               lm_diag *diag) {
  *out = NULL;
  packer pk;
  memset(&pk, 0, sizeof pk);
  gather *g = &pk.g;
  g->cat = cat;
  pk.count = count;
  pk.ctx = ctx;
  pk.diag = diag;
  lm_selection sel;
  memset(&sel, 0, sizeof sel);
  lm_status st = LM_OK;
  g->index = lm_map_new();
  g->seen = lm_malloc((size_t)cat->n_nodes + 1);
  if (!g->index || !g->seen) goto nomem;
  st = lm_catalog_select(cat, items, n_items, &sel, diag);
  if (st != LM_OK) goto done;

  /* 1. The metrics of every selected cell. */
  lm_plan_each_row(cat, &sel, walk_row, g);
  if (g->failed) goto nomem;
  pk.names = lm_calloc((size_t)g->n + 1, sizeof *pk.names);
  pk.set_passes = lm_calloc((size_t)g->n + 1, sizeof *pk.set_passes);
  pk.set_bytes = lm_calloc((size_t)g->n + 1, sizeof *pk.set_bytes);
  if (!pk.names || !pk.set_passes || !pk.set_bytes) goto nomem;

  /* 2. One config with everything. */
  if (g->n > 0) {
    for (int32_t i = 0; i < g->n; i++) pk.names[i] = g->m[i].name;
    st = count(ctx, pk.names, (size_t)g->n, &pk.one, &pk.one_bytes, diag);
    if (st != LM_OK) goto done;
  }
  /* 3. The sets, 4. the plan. */
  if ((st = pack(&pk, cat, replay)) == LM_OK) st = make_plan(&pk, cat, replay, out);
  goto done;
nomem:
  st = lm_oom(diag, NULL);
done:
  lm_free(pk.replica);
  lm_free(pk.names);
  lm_free(pk.set_passes);
  lm_free(pk.set_bytes);
  lm_free(g->m);
  lm_free(g->seen);
  lm_map_free(g->index);
  lm_selection_fini(&sel);
  return st;
}
