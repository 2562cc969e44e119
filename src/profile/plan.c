/*
 * plan.c - from the metrics a user asks for to counter sets.
 *
 * The metric graph says which columns each cell reads; they map to hardware
 * counters (a per-instance counter once: TCC_HIT serves TCC_HIT[3] and
 * TCC_HIT_sum), grouped by the block whose budget they use. As a counter uses
 * only its block's budget, the fewest sets is the larger of the number of
 * accumulate counters (a set each) and each block's counters over its per-set
 * limit, rounded up; the packer always reaches it. Within it a ratio's
 * numerator and denominator share a set where they fit, so a ratio mixes two
 * runs or instances only when that cannot be avoided.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "profile/profile.h"

/* Columns every dispatch record has: not counters. */
static const char *const builtin_columns[] = {
    "Dispatch_ID", "GPU_ID", "Grid_Size", "Workgroup_Size", "LDS_Per_Workgroup",
    "Scratch_Per_Workitem", "Arch_VGPR", "Accum_VGPR", "SGPR", "Wave_Size",
    "Start_Timestamp", "End_Timestamp", "Measured_Power_W", "Measured_Temp_C", "Kernel_Name", NULL};

static int is_builtin(const char *name) {
  for (const char *const *b = builtin_columns; *b; b++)
    if (strcmp(*b, name) == 0) return 1;
  return 0;
}

const char *lm_plan_counter_base(const char *column, char *out, size_t cap) {
  size_t n = strcspn(column, "[");
  if (n >= cap) n = cap - 1;
  memcpy(out, column, n);
  out[n] = '\0';
  if (n > 4 && strcmp(out + n - 4, "_sum") == 0) out[n - 4] = '\0';
  return out;
}

const char *lm_plan_block(const lm_catalog *cat, const char *counter, char *out, size_t cap) {
  size_t n = strcspn(counter, "_");
  if (n >= cap) n = cap - 1;
  memcpy(out, counter, n);
  out[n] = '\0';
  for (int32_t i = 0; i < cat->n_aliases; i++)
    if (strcmp(cat->aliases[i].block, out) == 0) {
      snprintf(out, cap, "%s", cat->aliases[i].uses);
      break;
    }
  return out;
}

static int32_t block_limit(const lm_catalog *cat, const char *block) {
  for (int32_t i = 0; i < cat->n_limits; i++)
    if (strcmp(cat->limits[i].block, block) == 0) return cat->limits[i].limit;
  return 1; /* a block without a known limit: one counter per set */
}

static int collectable(const lm_catalog *cat, const char *column, const char *base) {
  char with_sum[300];
  snprintf(with_sum, sizeof with_sum, "%.250s_sum", base);
  for (int32_t i = 0; i < cat->n_counters; i++) {
    const char *c = cat->counters[i];
    if (strcmp(c, base) == 0 || strcmp(c, with_sum) == 0 || strcmp(c, column) == 0) return 1;
  }
  return 0;
}

/* A counter being planned. */
typedef struct entry {
  char *name;
  char block[32];
  int32_t group;     /* accumulate group index, or -1 */
  int32_t set;
  lm_buf why;
  int n_why;
  int32_t *partners; /* entries it shares a ratio with */
  int32_t n_partners, cap_partners;
} entry;

static lm_status oom(lm_diag *diag) { return lm_oom(diag, NULL); }

/* Blocks and their loads. */
typedef struct block_load {
  char name[32];
  int32_t limit;
  int32_t normal;   /* counters outside accumulate groups */
  int32_t *used;    /* per set */
} block_load;

static int32_t find_block(block_load *b, int32_t n, const char *name) {
  for (int32_t i = 0; i < n; i++)
    if (strcmp(b[i].name, name) == 0) return i;
  return -1;
}

typedef struct planner {
  const lm_catalog *cat;
  lm_diag *diag;
  entry *entries;
  int32_t n_entries, cap_entries;
  lm_map *index;          /* "group\x1fname" -> entry */
  char **groups;          /* accumulate level counters */
  int32_t n_groups;
  char **missing;
  int32_t n_missing;
  lm_map *missing_index;
  lm_status status;       /* LM_ENOMEM once an allocation failed */
  block_load *blocks;     /* the blocks the counters use (n_blocks) */
  int32_t n_blocks;
  int32_t n_sets, lower;  /* the sets, and their lower bound */
  int32_t first_group_set; /* the first accumulate set */
} planner;

static int32_t add_entry(planner *p, const char *name, int32_t group) {
  char key[512];
  snprintf(key, sizeof key, "%d\x1f%s", (int)group, name);
  int64_t found;
  if (lm_map_get(p->index, key, &found)) return (int32_t)found;
  if (p->n_entries == p->cap_entries) {
    int32_t cap = p->cap_entries ? p->cap_entries * 2 : 64;
    entry *grown = lm_realloc(p->entries, (size_t)cap * sizeof *grown);
    if (!grown) {
      p->status = LM_ENOMEM;
      return -1;
    }
    p->entries = grown;
    p->cap_entries = cap;
  }
  entry *e = &p->entries[p->n_entries];
  memset(e, 0, sizeof *e);
  e->name = lm_strdup(name);
  e->group = group;
  e->set = -1;
  if (!e->name || lm_map_put(p->index, key, p->n_entries) != LM_OK) {
    lm_free(e->name);
    p->status = LM_ENOMEM;
    return -1;
  }
  lm_plan_block(p->cat, name, e->block, sizeof e->block);
  return p->n_entries++;
}

static int32_t group_of(planner *p, const char *level) {
  for (int32_t i = 0; i < p->n_groups; i++)
    if (strcmp(p->groups[i], level) == 0) return i;
  char **grown = lm_realloc(p->groups, (size_t)(p->n_groups + 1) * sizeof *grown);
  if (grown) p->groups = grown;
  if (!grown || !(p->groups[p->n_groups] = lm_strdup(level))) {
    p->status = LM_ENOMEM;
    return -1;
  }
  return p->n_groups++;
}

static void note_missing(planner *p, const char *what) {
  if (lm_map_get(p->missing_index, what, NULL)) return;
  char **grown = lm_realloc(p->missing, (size_t)(p->n_missing + 1) * sizeof *grown);
  if (grown) p->missing = grown;
  if (!grown || !(p->missing[p->n_missing] = lm_strdup(what))) {
    p->status = LM_ENOMEM;
    return;
  }
  p->n_missing++;
  if (lm_map_put(p->missing_index, what, p->n_missing - 1) != LM_OK) p->status = LM_ENOMEM;
}

static void add_why(entry *e, const char *metric_id) {
  if (e->n_why > 0 && strstr(lm_buf_cstr(&e->why), metric_id)) return;
  if (e->n_why < 3) lm_buf_printf(&e->why, "%s%s", e->n_why ? ", " : "", metric_id);
  e->n_why++;
}

/* add_partner: other shares a ratio with e; 0 when out of memory. */
static int add_partner(entry *e, int32_t other) {
  for (int32_t i = 0; i < e->n_partners; i++)
    if (e->partners[i] == other) return 1;
  if (e->n_partners == e->cap_partners) {
    int32_t cap = e->cap_partners ? e->cap_partners * 2 : 8;
    int32_t *grown = lm_realloc(e->partners, (size_t)cap * sizeof *grown);
    if (!grown) return 0;
    e->partners = grown;
    e->cap_partners = cap;
  }
  e->partners[e->n_partners++] = other;
  return 1;
}

/* The counter entry an input node reads, or -1 (not a counter, or not
 * collectable). */
static int32_t entry_of_input(planner *p, const lm_node *n, const char *metric_id) {
  const lm_input *in = &p->cat->inputs[n->a];
  if (is_builtin(in->column)) return -1;
  char base[256];
  lm_plan_counter_base(in->column, base, sizeof base);
  int pmc = strcmp(in->source, "pmc_perf") == 0;
  int32_t group = -1;
  if (!pmc) {
    /* Another source: the accumulate set of that level counter. */
    if (!p->cat->accumulate[0] || !collectable(p->cat, in->source, in->source)) {
      char what[512];
      snprintf(what, sizeof what, "%s (the accumulate table that %s reads)", in->source, metric_id);
      note_missing(p, what);
      return -1;
    }
    group = group_of(p, in->source);
    if (group < 0) return -1;
    int32_t level = add_entry(p, in->source, group);
    int32_t accum = add_entry(p, p->cat->accumulate, group);
    if (level < 0 || accum < 0) return -1;
    add_why(&p->entries[level], metric_id);
    add_why(&p->entries[accum], metric_id);
  }
  if (pmc && p->cat->accumulate[0] && strcmp(base, p->cat->accumulate) == 0) {
    /* The accumulator read without a level table accumulates nothing (the
     * reference tool's pmc_perf.csv has no such column either). */
    char what[512];
    snprintf(what, sizeof what, "%s outside an accumulate table (read by %s)", in->column, metric_id);
    note_missing(p, what);
    return -1;
  }
  if (!collectable(p->cat, in->column, base)) {
    char what[512];
    snprintf(what, sizeof what, "%s (needed by %s)", in->column, metric_id);
    note_missing(p, what);
    return -1;
  }
  int32_t e = add_entry(p, base, group);
  if (e >= 0) add_why(&p->entries[e], metric_id);
  return e;
}

/* Collect the counters under `node`; for each division, remember which
 * counters meet across it. `under` receives the entries found. */
static void walk(planner *p, int32_t node, const char *metric_id, uint8_t *seen,
                 int32_t *under, int32_t *n_under, int32_t cap) {
  if (node < 0 || seen[node]) return;
  seen[node] = 1;
  const lm_catalog *cat = p->cat;
  const lm_node *n = &cat->nodes[node];
  if (n->op == LM_OP_INPUT) {
    int32_t e = entry_of_input(p, n, metric_id);
    if (e >= 0 && *n_under < cap) under[(*n_under)++] = e;
    return;
  }
  if (n->op == LM_OP_CONST || n->op == LM_OP_SYSVAR) return;
  if (n->op == LM_OP_NORM) {
    for (int32_t i = 0; i < cat->n_norms; i++)
      walk(p, cat->norm_nodes[n->a * cat->n_norms + i], metric_id, seen, under, n_under, cap);
    return;
  }
  if (n->op == LM_OP_DIV) {
    int32_t num[256], den[256], nn = 0, nd = 0;
    walk(p, n->a, metric_id, seen, num, &nn, 256);
    walk(p, n->b, metric_id, seen, den, &nd, 256);
    for (int32_t i = 0; i < nn; i++)
      for (int32_t j = 0; j < nd; j++)
        if (num[i] != den[j] &&
            (!add_partner(&p->entries[num[i]], den[j]) || !add_partner(&p->entries[den[j]], num[i])))
          p->status = LM_ENOMEM;
    for (int32_t i = 0; i < nn && *n_under < cap; i++) under[(*n_under)++] = num[i];
    for (int32_t i = 0; i < nd && *n_under < cap; i++) under[(*n_under)++] = den[i];
    return;
  }
  walk(p, n->a, metric_id, seen, under, n_under, cap);
  if (!LM_OP_IS_AGGREGATE(n->op) && n->op != LM_OP_ROUND && n->op != LM_OP_TO_INT &&
      n->op != LM_OP_NEG && n->op != LM_OP_NOT)
    walk(p, n->b, metric_id, seen, under, n_under, cap);
  if (n->op == LM_OP_WHERE) walk(p, n->c, metric_id, seen, under, n_under, cap);
}

static void planner_fini(planner *p) {
  for (int32_t i = 0; i < p->n_entries; i++) {
    lm_free(p->entries[i].name);
    lm_buf_fini(&p->entries[i].why);
    lm_free(p->entries[i].partners);
  }
  lm_free(p->entries);
  for (int32_t i = 0; i < p->n_groups; i++) lm_free(p->groups[i]);
  lm_free(p->groups);
  for (int32_t i = 0; i < p->n_missing; i++) lm_free(p->missing[i]);
  lm_free(p->missing);
  lm_map_free(p->index);
  lm_map_free(p->missing_index);
  for (int32_t b = 0; p->blocks && b < p->n_blocks; b++) lm_free(p->blocks[b].used);
  lm_free(p->blocks);
}

/* What the ordering of counters reads (lm_sort's context). */
typedef struct sort_ctx {
  const entry *entries;
  const block_load *blocks;
  int32_t n_blocks;
} sort_ctx;

static double load_of(const sort_ctx *s, const entry *e) {
  int32_t b = find_block((block_load *)s->blocks, s->n_blocks, e->block);
  return b < 0 ? 0 : (double)s->blocks[b].normal / (double)s->blocks[b].limit;
}

/* Most loaded block first; within a block, counters with most ratio
 * partners first; then by name, for a stable plan. */
static int cmp_order(const void *x, const void *y, void *ctx) {
  const sort_ctx *s = ctx;
  const entry *a = &s->entries[*(const int32_t *)x], *b = &s->entries[*(const int32_t *)y];
  double la = load_of(s, a), lb = load_of(s, b);
  if (la != lb) return la > lb ? -1 : 1;
  int c = strcmp(a->block, b->block);
  if (c) return c;
  if (a->n_partners != b->n_partners) return b->n_partners - a->n_partners;
  return strcmp(a->name, b->name);
}

void lm_plan_each_row(const lm_catalog *cat, const lm_selection *sel, lm_plan_row_fn visit, void *user) {
  for (int32_t t = 0; t < cat->n_tables; t++) {
    const lm_tabledef *td = &cat->tables[t];
    if (td->kind != LM_TABLE_METRIC || !lm_selection_table(cat, sel, t)) continue;
    for (int32_t r = 0; r < td->n_rows; r++) {
      int32_t row = td->first_row + r;
      char metric_id[64];
      if (td->channels >= 0) snprintf(metric_id, sizeof metric_id, "%s.*", td->id);
      else snprintf(metric_id, sizeof metric_id, "%s.%d", td->id, (int)r);
      if (td->channels < 0 && !lm_selection_row(cat, sel, t, row, r)) continue;
      if (td->channels >= 0 && sel->any && !sel->tables[t] && !sel->rows[row]) {
        /* a template table: selected only as a whole or by name/block */
        int any = 0;
        for (size_t k = 0; k < sel->n_metric_ids && !any; k++)
          any = strncmp(sel->metric_ids[k], td->id, strlen(td->id)) == 0;
        if (!any) continue;
      }
      visit(cat, td, row, metric_id, user);
    }
  }
}

typedef struct row_walk {
  planner *p;
  uint8_t *seen;
} row_walk;

/* The counters of every cell of one selected row. */
static void walk_row(const lm_catalog *cat, const lm_tabledef *td, int32_t row, const char *metric_id,
                     void *user) {
  row_walk *rw = user;
  memset(rw->seen, 0, (size_t)cat->n_nodes);
  for (int32_t c = 0; c < td->n_cols; c++) {
    const lm_celldef *cell = &cat->cells[cat->rows[row].first_cell + c];
    int32_t under[1024], n_under = 0;
    walk(rw->p, cell->node, metric_id, rw->seen, under, &n_under, 1024);
    walk(rw->p, cell->corrected, metric_id, rw->seen, under, &n_under, 1024);
  }
}

/* count_blocks: step 2, the blocks the counters use and the lower bound
 * on the sets: the accumulate groups, or the sets a block's counters need
 * at its per-set limit, whichever is more (at least one set when any
 * counter is outside the groups). Normal sets come first, accumulate sets
 * last (as the reference's pmc_perf_<n> and SQ_*_LEVEL passes). */
static lm_status count_blocks(planner *p) {
  p->blocks = lm_calloc((size_t)p->n_entries + 1, sizeof *p->blocks);
  if (!p->blocks) return oom(p->diag);
  block_load *blocks = p->blocks;
  for (int32_t i = 0; i < p->n_entries; i++) {
    int32_t b = find_block(blocks, p->n_blocks, p->entries[i].block);
    if (b < 0) {
      b = p->n_blocks++;
      snprintf(blocks[b].name, sizeof blocks[b].name, "%s", p->entries[i].block);
      blocks[b].limit = block_limit(p->cat, blocks[b].name);
    }
    if (p->entries[i].group < 0) blocks[b].normal++;
  }
  int32_t lower = p->n_groups;
  for (int32_t b = 0; b < p->n_blocks; b++) {
    int32_t in_groups = 0;
    for (int32_t i = 0; i < p->n_entries; i++)
      if (p->entries[i].group >= 0 && strcmp(p->entries[i].block, blocks[b].name) == 0) in_groups++;
    int32_t need = (blocks[b].normal + in_groups + blocks[b].limit - 1) / blocks[b].limit;
    if (need > lower) lower = need;
  }
  int any_normal = 0;
  for (int32_t i = 0; i < p->n_entries; i++) any_normal |= p->entries[i].group < 0;
  p->lower = lower;
  p->n_sets = lower;
  if (p->n_sets == 0 && any_normal) p->n_sets = 1;
  p->first_group_set = p->n_sets - p->n_groups;
  for (int32_t b = 0; b < p->n_blocks; b++) {
    blocks[b].used = lm_calloc((size_t)p->n_sets + 1, sizeof(int32_t));
    if (!blocks[b].used) return oom(p->diag);
  }
  return LM_OK;
}

/* place_groups: step 3, each accumulate group in its own set; LM_EINVAL
 * when a group needs more of a block's counters than one set holds. */
static lm_status place_groups(planner *p) {
  for (int32_t i = 0; i < p->n_entries; i++) {
    entry *e = &p->entries[i];
    if (e->group < 0) continue;
    e->set = p->first_group_set + e->group;
    int32_t b = find_block(p->blocks, p->n_blocks, e->block);
    if (++p->blocks[b].used[e->set] > p->blocks[b].limit)
      return lm_fail(p->diag, LM_EINVAL, NULL,
                     "the accumulate set of %s needs more %s counters than one set holds (%d)", p->groups[e->group],
                     e->block, (int)p->blocks[b].limit);
  }
  return LM_OK;
}

/* place_one: counter e into the set holding most of its ratio partners
 * where its block has room, then its unplaced partners of the same block
 * onto queue (n_queue; room for every entry). */
static lm_status place_one(planner *p, entry *e, int32_t *queue, int32_t *n_queue) {
  block_load *bl = &p->blocks[find_block(p->blocks, p->n_blocks, e->block)];
  int32_t best = -1, best_score = -1;
  for (int32_t s = 0; s < p->n_sets; s++) {
    if (bl->used[s] >= bl->limit) continue;
    int32_t score = 0;
    for (int32_t j = 0; j < e->n_partners; j++) score += p->entries[e->partners[j]].set == s;
    /* Ties go to the set with the most room left in this block, where
     * the counter's partners still fit after it. */
    if (score > best_score || (score == best_score && bl->used[s] < bl->used[best])) {
      best = s;
      best_score = score;
    }
  }
  if (best < 0) return lm_fail(p->diag, LM_EINVAL, NULL, "internal: no room for %s", e->name);
  e->set = best;
  bl->used[best]++;
  for (int32_t j = e->n_partners - 1; j >= 0; j--) {
    entry *q = &p->entries[e->partners[j]];
    if (q->set < 0 && q->group < 0 && strcmp(q->block, e->block) == 0 && *n_queue < p->n_entries)
      queue[(*n_queue)++] = e->partners[j];
  }
  return LM_OK;
}

/* place_counters: step 4, the other counters, the most loaded blocks
 * first, each into the set holding most of its ratio partners. */
static lm_status place_counters(planner *p) {
  lm_status st = LM_OK;
  int32_t *order = lm_malloc(((size_t)p->n_entries + 1) * sizeof *order);
  int32_t *queue = lm_malloc(((size_t)p->n_entries + 1) * sizeof *queue);
  if (!order || !queue) {
    st = oom(p->diag);
    goto done;
  }
  int32_t n_order = 0;
  for (int32_t i = 0; i < p->n_entries; i++)
    if (p->entries[i].group < 0) order[n_order++] = i;
  sort_ctx by = {p->entries, p->blocks, p->n_blocks};
  lm_sort(order, (size_t)n_order, sizeof *order, cmp_order, &by);
  /* Place each counter, then at once its unplaced ratio partners of the
   * same block, so a ratio lands in one set while it still has room. */
  int32_t n_queue = 0;
  for (int32_t k = 0; k < n_order && st == LM_OK; k++) {
    if (p->entries[order[k]].set >= 0) continue;
    queue[n_queue++] = order[k];
    while (n_queue > 0 && st == LM_OK) {
      entry *e = &p->entries[queue[--n_queue]];
      if (e->set < 0) st = place_one(p, e, queue, &n_queue);
    }
  }
done:
  lm_free(order);
  lm_free(queue);
  return st;
}

/* fill_set: set s of plan: its counters, in an accumulate set the level
 * counter and the accumulator last, the accumulator right after the
 * counter it accumulates; then a copy of GRBM_GUI_ACTIVE (entry
 * replica_src, -1: none) where it is missing and block grbm has room. */
static lm_status fill_set(planner *p, lm_plan *plan, int32_t s, int32_t replica_src, int32_t grbm) {
  lm_arena *a = plan->arena;
  lm_plan_set *ps = &plan->sets[s];
  ps->first = plan->n_counters;
  ps->passes = 1;
  ps->accumulate = s >= p->first_group_set ? lm_arena_strdup(a, p->groups[s - p->first_group_set]) : NULL;
  int has_replica = 0;
  for (int pass = 0; pass < 3; pass++)
    for (int32_t i = 0; i < p->n_entries; i++) {
      entry *e = &p->entries[i];
      if (e->set != s) continue;
      int rank = !ps->accumulate ? 0
                 : strcmp(e->name, ps->accumulate) == 0 ? 1
                 : strcmp(e->name, p->cat->accumulate) == 0 ? 2 : 0;
      if (rank != pass) continue;
      lm_plan_counter *c = &plan->counters[plan->n_counters++];
      c->name = lm_arena_strdup(a, e->name);
      c->block = lm_arena_strdup(a, e->block);
      c->set = s;
      char why[512];
      if (e->n_why > 3)
        snprintf(why, sizeof why, "%s and %d more", lm_buf_cstr(&e->why), e->n_why - 3);
      else
        snprintf(why, sizeof why, "%s", lm_buf_cstr(&e->why));
      c->why = lm_arena_strdup(a, why);
      if (!c->name || !c->block || !c->why) return oom(p->diag);
      if (i == replica_src || strcmp(e->name, "GRBM_GUI_ACTIVE") == 0) has_replica = 1;
    }
  block_load *g = grbm >= 0 ? &p->blocks[grbm] : NULL;
  if (replica_src >= 0 && !has_replica && g && g->used[s] < g->limit) {
    lm_plan_counter *c = &plan->counters[plan->n_counters++];
    c->name = "GRBM_GUI_ACTIVE";
    c->block = "GRBM";
    c->set = s;
    c->why = "every set: the busy cycles of the same dispatch";
    c->replica = 1;
    g->used[s]++;
  }
  ps->n = plan->n_counters - ps->first;
  return LM_OK;
}

/* make_plan: step 5, the plan (*out) from the placed counters, and the
 * metrics' inputs that cannot be collected. Cycle counters are copied
 * into every set with room. */
static lm_status make_plan(planner *p, lm_plan **out) {
  lm_status st = LM_OK;
  lm_plan *plan = lm_calloc(1, sizeof *plan);
  if (!plan || !(plan->arena = lm_arena_new(1 << 14))) {
    st = oom(p->diag);
    goto done;
  }
  lm_arena *a = plan->arena;
  int32_t n_sets = p->n_sets;
  plan->arch = lm_arena_strdup(a, p->cat->arch);
  plan->n_sets = n_sets;
  plan->lower_bound = p->lower;
  plan->sets = lm_arena_alloc(a, (size_t)(n_sets + 1) * sizeof *plan->sets);
  int32_t replica_src = -1;
  for (int32_t i = 0; i < p->n_entries; i++)
    if (p->entries[i].group < 0 && strcmp(p->entries[i].name, "GRBM_GUI_ACTIVE") == 0) replica_src = i;
  int32_t grbm = find_block(p->blocks, p->n_blocks, "GRBM");
  size_t cap = (size_t)p->n_entries + (size_t)n_sets + 1;
  plan->counters = lm_arena_alloc(a, cap * sizeof *plan->counters);
  if (!plan->sets || !plan->counters || !plan->arch) {
    st = oom(p->diag);
    goto done;
  }
  for (int32_t s = 0; s < n_sets; s++)
    if ((st = fill_set(p, plan, s, replica_src, grbm)) != LM_OK) goto done;
  plan->n_missing = p->n_missing;
  plan->missing = lm_arena_alloc(a, ((size_t)p->n_missing + 1) * sizeof(char *));
  if (!plan->missing) {
    st = oom(p->diag);
    goto done;
  }
  for (int32_t i = 0; i < p->n_missing; i++) plan->missing[i] = lm_arena_strdup(a, p->missing[i]);
  *out = plan;
  plan = NULL;
done:
  lm_plan_free(plan);
  return st;
}

lm_status lm_plan_build(const lm_catalog *cat, const char *const *items, size_t n_items,
                        lm_plan **out, lm_diag *diag) {
  planner p;
  memset(&p, 0, sizeof p);
  p.cat = cat;
  p.diag = diag;
  lm_selection sel;
  memset(&sel, 0, sizeof sel);
  lm_status st = LM_OK;
  uint8_t *seen = NULL;
  *out = NULL;
  p.index = lm_map_new();
  p.missing_index = lm_map_new();
  seen = lm_malloc((size_t)cat->n_nodes + 1);
  if (!p.index || !p.missing_index || !seen) goto nomem;
  st = lm_catalog_select(cat, items, n_items, &sel, diag);
  if (st != LM_OK) goto done;

  /* 1. The counters of every selected cell. */
  row_walk rw = {&p, seen};
  lm_plan_each_row(cat, &sel, walk_row, &rw);
  if (p.status != LM_OK) goto nomem;
  /* 2 to 5: blocks and the lower bound, the accumulate groups, the other
   * counters, the plan. */
  if ((st = count_blocks(&p)) == LM_OK && (st = place_groups(&p)) == LM_OK &&
      (st = place_counters(&p)) == LM_OK)
    st = make_plan(&p, out);
  goto done;
nomem:
  st = lm_oom(diag, NULL);
done:
  lm_free(seen);
  lm_selection_fini(&sel);
  planner_fini(&p);
  return st;
}

void lm_plan_free(lm_plan *plan) {
  if (!plan) return;
  lm_arena_free(plan->arena);
  lm_free(plan);
}

/* An NVIDIA plan: sets of CUPTI metrics with their passes. */
static void print_passes(const lm_plan *plan, lm_buf *out) {
  static const char *const modes[] = {"application replay", "instance cycling", "", "",
                                      "kernel replay"};
  const char *mode = plan->replay >= 0 && plan->replay <= 4 ? modes[plan->replay] : "";
  lm_buf_printf(out, "CUPTI metric sets for %s (chip %s, %s): %d metrics\n", plan->arch,
                plan->chip, mode, (int)plan->n_counters);
  for (int32_t s = 0; s < plan->n_sets; s++) {
    const lm_plan_set *ps = &plan->sets[s];
    lm_buf_printf(out, "\nset %d: %d metrics, %d pass%s, config image %zu bytes\n", (int)s,
                  (int)ps->n, (int)ps->passes, ps->passes == 1 ? "" : "es", ps->image_bytes);
    for (int32_t i = ps->first; i < ps->first + ps->n; i++)
      lm_buf_printf(out, "  %-64s %s\n", plan->counters[i].name, plan->counters[i].why);
  }
  lm_buf_printf(out, "\nall metrics in one config: %d passes\n", (int)plan->one_config_passes);
  if (plan->packed_sets > 0)
    lm_buf_printf(out, "packed into %d sets: %d passes%s\n", (int)plan->packed_sets,
                  (int)plan->packed_passes,
                  plan->packed_passes >= plan->one_config_passes ? " (one config is kept)" : "");
  if (plan->replay == LM_REPLAY_KERNEL)
    lm_buf_printf(out, "sets: %d, passes: %d (kernel replay: one run, each kernel replayed %d "
                       "times)\n",
                  (int)plan->n_sets, (int)plan->total_passes, (int)plan->total_passes);
  else if (plan->replay == LM_REPLAY_INSTANCE)
    lm_buf_printf(out, "sets: %d, passes: %d (instance cycling: %d instances of each kernel)\n",
                  (int)plan->n_sets, (int)plan->total_passes, (int)plan->total_passes);
  else
    lm_buf_printf(out, "sets: %d, passes: %d (application replay: %d runs)\n",
                  (int)plan->n_sets, (int)plan->total_passes, (int)plan->total_passes);
}

void lm_plan_print(const lm_plan *plan, int verbose, lm_buf *out) {
  if (plan->chip) {
    print_passes(plan, out);
    return;
  }
  int32_t n_counters = 0;
  for (int32_t i = 0; i < plan->n_counters; i++) n_counters += !plan->counters[i].replica;
  lm_buf_printf(out, "counter sets for %s: %d hardware counters\n", plan->arch, (int)n_counters);
  for (int32_t s = 0; s < plan->n_sets; s++) {
    const lm_plan_set *ps = &plan->sets[s];
    lm_buf_printf(out, "\nset %d", (int)s);
    if (ps->accumulate) lm_buf_printf(out, " (accumulates %s)", ps->accumulate);
    lm_buf_printf(out, ": %d counters\n", (int)ps->n);
    for (int32_t i = ps->first; i < ps->first + ps->n; i++) {
      const lm_plan_counter *c = &plan->counters[i];
      lm_buf_printf(out, "  %-36s %-5s %s\n", c->name, c->block, c->why);
    }
  }
  if (plan->n_missing) {
    lm_buf_printf(out, "\nnot collectable on %s (those cells stay blank):\n", plan->arch);
    for (int32_t i = 0; i < plan->n_missing && (verbose || i < 10); i++)
      lm_buf_printf(out, "  %s\n", plan->missing[i]);
    if (!verbose && plan->n_missing > 10)
      lm_buf_printf(out, "  ... and %d more (-v lists them)\n", (int)plan->n_missing - 10);
  }
  lm_buf_printf(out, "sets: %d (lower bound %d)\n", (int)plan->n_sets, (int)plan->lower_bound);
}
