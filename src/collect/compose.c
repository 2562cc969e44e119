/*
 * compose.c - dispatch rows from recorded runs. In application replay the
 * n-th selected instance of a kernel in every run is one row; in instance
 * cycling each run of consecutive instances that went through all sets is
 * one row; assigned runs complete the rows they were planned for. Rows
 * that miss a set are left out and reported; plan_gaps plans the runs
 * that would complete them.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>
#include <time.h>

#include "collect/collect.h"
#include "sql/sql.h"
#include "db/db.h"

/* --------------------------------------------------------- composition */

typedef struct crec {
  int run, mode;
  int64_t did, instance, selected, group;
  char *kernel, *regions, *key;
  int set, gpu;
  int slot; /* the process of the application (profile_process.slot) */
  int64_t pid, tid, grid, wg, lds, scratch, vgpr, agpr, sgpr;
  double start, end;
  char **cols;
  double *vals;
  int n_vals, cap_vals;
} crec;

typedef struct composite {
  int *members; /* per set: record index or -1 */
  int first;    /* the member that orders the row */
} composite;

typedef struct collected {
  crec *recs;
  size_t n_recs;
  composite *comps;
  size_t n_comps;
  int n_sets;
} collected;

static void collected_fini(collected *c) {
  for (size_t i = 0; i < c->n_recs; i++) {
    crec *r = &c->recs[i];
    lm_free(r->kernel);
    lm_free(r->regions);
    lm_free(r->key);
    for (int k = 0; k < r->n_vals; k++) lm_free(r->cols[k]);
    lm_free(r->cols);
    lm_free(r->vals);
  }
  lm_free(c->recs);
  for (size_t i = 0; i < c->n_comps; i++) lm_free(c->comps[i].members);
  lm_free(c->comps);
  memset(c, 0, sizeof *c);
}

/* Loading: the records of the successful runs in order, each indexed by
 * (run, pid, dispatch id) for its values and grouped into its row. */
typedef struct loader {
  collected *c;
  size_t cap;
  lm_map *by_dispatch, *groups;
  lm_map *bare; /* "X_sum" -> 1 where the metrics read X and not X_sum */
} loader;

static lm_status oom(lm_diag *diag) { return lm_oom(diag, NULL); }

static lm_status add_record(const lm_db_stored_record *sr, void *user, lm_diag *diag) {
  loader *l = user;
  collected *c = l->c;
  const lm_db_record *d = &sr->rec;
  int n_sets = c->n_sets;
  if (c->n_recs == l->cap) {
    l->cap = l->cap ? l->cap * 2 : 256;
    crec *grown = lm_realloc(c->recs, l->cap * sizeof *grown);
    if (!grown) return oom(diag);
    c->recs = grown;
  }
  crec *r = &c->recs[c->n_recs];
  memset(r, 0, sizeof *r);
  r->run = sr->run;
  r->did = d->dispatch_id;
  r->kernel = lm_strdup(d->kernel);
  r->instance = d->instance;
  r->selected = d->selected;
  r->set = d->set;
  r->gpu = d->gpu;
  r->pid = d->pid;
  r->tid = d->tid;
  r->grid = d->grid;
  r->wg = d->workgroup;
  r->lds = d->lds;
  r->scratch = d->scratch;
  r->vgpr = d->arch_vgpr;
  r->agpr = d->accum_vgpr;
  r->sgpr = d->sgpr;
  r->start = d->start_ns;
  r->end = d->end_ns;
  r->regions = lm_strdup(d->regions);
  r->key = lm_strdup(d->cycle_key);
  r->mode = strcmp(sr->mode, "app") == 0 ? LM_REPLAY_APP : LM_REPLAY_INSTANCE;
  r->slot = sr->slot;
  if (!r->kernel || !r->regions || !r->key) {
    lm_free(r->kernel);
    lm_free(r->regions);
    lm_free(r->key);
    return oom(diag);
  }
  c->n_recs++; /* c owns its strings from here */
  char k[96];
  snprintf(k, sizeof k, "%d:%lld:%lld", r->run, (long long)r->pid, (long long)r->did);
  if (lm_map_put(l->by_dispatch, k, (int64_t)c->n_recs - 1) != LM_OK) return oom(diag);
  if (r->set >= n_sets) return LM_OK;
  /* The composite row it belongs to. */
  r->group = d->row_group;
  char gk[1120];
  /* Rows are per process: the same process (slot) in every run. */
  snprintf(gk, sizeof gk, "%d\x1f%d\x1f%s\x1f%lld", r->mode == LM_REPLAY_APP, r->slot, r->key,
           (long long)r->group);
  int64_t ci;
  if (!lm_map_get(l->groups, gk, &ci)) {
    composite *grown = lm_realloc(c->comps, (c->n_comps + 1) * sizeof *grown);
    if (!grown) return oom(diag);
    c->comps = grown;
    composite *cp = &c->comps[c->n_comps];
    cp->members = lm_malloc((size_t)(n_sets ? n_sets : 1) * sizeof *cp->members);
    if (!cp->members) return oom(diag);
    for (int k2 = 0; k2 < n_sets; k2++) cp->members[k2] = -1;
    cp->first = (int)(c->n_recs - 1);
    ci = (int64_t)c->n_comps++;
    if (lm_map_put(l->groups, gk, ci) != LM_OK) return oom(diag);
  }
  composite *cp = &c->comps[ci];
  if (cp->members[r->set] < 0) cp->members[r->set] = (int)(c->n_recs - 1);
  return LM_OK;
}

static lm_status add_value(int run, int64_t pid, int64_t did, const char *column, double value, void *user,
                           lm_diag *diag) {
  loader *l = user;
  char k[96];
  snprintf(k, sizeof k, "%d:%lld:%lld", run, (long long)pid, (long long)did);
  int64_t ri;
  if (!lm_map_get(l->by_dispatch, k, &ri)) return LM_OK;
  crec *r = &l->c->recs[ri];
  /* A total over instances is composed under the name the architecture's
   * metrics read: the tool's X_sum as X where they read X (RDNA's, named
   * as rocprofv3 names such totals), as recorded otherwise (CDNA's read
   * X_sum, the reference tool's name). */
  size_t len = strlen(column);
  if (len > 4 && strcmp(column + len - 4, "_sum") == 0 && lm_map_get(l->bare, column, NULL)) len -= 4;
  if (r->n_vals == r->cap_vals) {
    int ncap = r->cap_vals ? r->cap_vals * 2 : 32;
    char **gc = lm_realloc(r->cols, (size_t)ncap * sizeof *gc);
    if (gc) r->cols = gc;
    double *gv = lm_realloc(r->vals, (size_t)ncap * sizeof *gv);
    if (gv) r->vals = gv;
    if (!gc || !gv) return oom(diag);
    r->cap_vals = ncap;
  }
  r->cols[r->n_vals] = lm_strndup(column, len);
  r->vals[r->n_vals] = value;
  if (!r->cols[r->n_vals]) return oom(diag);
  r->n_vals++;
  return LM_OK;
}

/* bare_totals: "X_sum" for each counter X that cat's metrics read while
 * they read no X_sum (none without cat). */
static lm_status bare_totals(const lm_catalog *cat, lm_map *bare, lm_diag *diag) {
  if (!cat) return LM_OK;
  lm_map *read = lm_map_new();
  lm_status st = read ? LM_OK : oom(diag);
  for (int32_t i = 0; st == LM_OK && i < cat->n_counters; i++)
    if (lm_map_put(read, cat->counters[i], 1) != LM_OK) st = oom(diag);
  for (int32_t i = 0; st == LM_OK && i < cat->n_counters; i++) {
    const char *x = cat->counters[i];
    size_t n = strlen(x);
    if (strchr(x, '[') || (n > 4 && strcmp(x + n - 4, "_sum") == 0) || n > 250) continue;
    char sum[260];
    snprintf(sum, sizeof sum, "%s_sum", x);
    if (!lm_map_get(read, sum, NULL) && lm_map_put(bare, sum, 1) != LM_OK) st = oom(diag);
  }
  lm_map_free(read);
  return st;
}

/* Load the records (with a set) of the successful runs, their values, and
 * group them into composite rows. */
static lm_status load_collected(lm_sql *db, int64_t wid, int n_sets, const lm_catalog *cat, collected *c,
                                lm_diag *diag) {
  memset(c, 0, sizeof *c);
  c->n_sets = n_sets;
  loader l = {c, 0, lm_map_new(), lm_map_new(), lm_map_new()};
  lm_status st = l.by_dispatch && l.groups && l.bare ? LM_OK : oom(diag);
  if (st == LM_OK) st = bare_totals(cat, l.bare, diag);
  if (st == LM_OK) st = lm_db_each_composable(db, wid, add_record, &l, diag);
  if (st == LM_OK) st = lm_db_each_composable_value(db, wid, add_value, &l, diag);
  lm_map_free(l.by_dispatch);
  lm_map_free(l.groups);
  lm_map_free(l.bare);
  if (st != LM_OK) collected_fini(c);
  return st;
}

static int composite_complete(const collected *c, const composite *cp) {
  for (int s = 0; s < c->n_sets; s++)
    if (cp->members[s] < 0) return 0;
  return 1;
}

/* An ordering of complete rows: by the run and dispatch id of each row's
 * earliest record. */
static int cmp_rows(const void *x, const void *y, void *ctx) {
  const collected *c = ctx;
  const composite *a = &c->comps[*(const size_t *)x], *b = &c->comps[*(const size_t *)y];
  const crec *ra = &c->recs[a->first], *rb = &c->recs[b->first];
  if (ra->run != rb->run) return ra->run < rb->run ? -1 : 1;
  if (ra->slot != rb->slot) return ra->slot < rb->slot ? -1 : 1;
  return (ra->did > rb->did) - (ra->did < rb->did);
}

/* is_level_only: column col of a record of set si goes to the set's level
 * table only, not to pmc_perf: with an accumulate set, the accumulator's
 * columns and the accumulated counter's (bare, per instance or _sum). */
static int is_level_only(const char *col, const lm_set_info *si, const char *accumulator) {
  if (!si->accumulate) return 0;
  size_t n = strlen(accumulator);
  if (strncmp(col, accumulator, n) == 0) return 1;
  n = strlen(si->accumulate);
  return strncmp(col, si->accumulate, n) == 0 && (col[n] == '\0' || col[n] == '[' || !strcmp(col + n, "_sum"));
}

typedef struct name_list {
  char **v;
  size_t n, cap;
  lm_map *index;
} name_list;

static int64_t name_add(name_list *l, const char *name) {
  int64_t i;
  if (lm_map_get(l->index, name, &i)) return i;
  if (l->n == l->cap) {
    size_t cap = l->cap ? l->cap * 2 : 64;
    char **grown = lm_realloc(l->v, cap * sizeof *grown);
    if (!grown) return -1;
    l->v = grown;
    l->cap = cap;
  }
  l->v[l->n] = lm_strdup(name);
  if (!l->v[l->n]) return -1;
  if (lm_map_put(l->index, name, (int64_t)l->n) != LM_OK) {
    lm_free(l->v[l->n]);
    return -1;
  }
  return (int64_t)l->n++;
}

static void name_list_fini(name_list *l) {
  for (size_t i = 0; i < l->n; i++) lm_free(l->v[i]);
  lm_free(l->v);
  lm_map_free(l->index);
}

static double exact_mean(const double *v, size_t n) {
  if (!n) return LM_NAN;
  double sum = 0;
  for (size_t i = 1; i < n; i++) sum += v[i] - v[0];
  return v[0] + sum / (double)n;
}

/* Fixed dispatch columns of a pmc_perf table, in pmc_perf.csv order. */
static const char *const fixed_names[] = {"Dispatch_ID", "GPU_ID", "Grid_Size", "Workgroup_Size",
                                          "LDS_Per_Workgroup", "Scratch_Per_Workitem", "Arch_VGPR",
                                          "Accum_VGPR", "SGPR", "Wave_Size"};

typedef struct provenance {
  char *source, *column;
  int16_t *runs, *sets;
} provenance;

/* The value of column `name` in record r, NaN when it has none. */
static double rec_value(const crec *r, const char *name) {
  for (int v = 0; v < r->n_vals; v++)
    if (strcmp(r->cols[v], name) == 0) return r->vals[v];
  return LM_NAN;
}

static int rec_has(const crec *r, const char *name) {
  for (int v = 0; v < r->n_vals; v++)
    if (strcmp(r->cols[v], name) == 0) return 1;
  return 0;
}

/* The executions of each composed row (one record per set), the counters
 * every set of the row holds, and the set of each stored value (pmc
 * columns from prov, each accumulate table from its own set): what
 * analysis needs to say how far a row's executions differed. Allocated
 * from arena; NULL when out of memory. */
static lm_executions *build_executions(lm_arena *arena, const collected *c, const size_t *rows, size_t n_rows,
                                       const lm_set_info *sets, int n_sets, const char *accumulator,
                                       const provenance *prov, size_t n_prov, lm_table *const *levels) {
  lm_executions *x = lm_arena_alloc(arena, sizeof *x);
  name_list shared = {0};
  shared.index = lm_map_new();
  if (!x || !shared.index || name_add(&shared, "duration") < 0) goto fail;
  memset(x, 0, sizeof *x);
  x->n_rows = n_rows;
  x->n_sets = n_sets;
  /* Shared: the pmc counters that every set of a row holds. */
  for (size_t i = 0; n_sets > 1 && i < n_rows; i++) {
    const composite *cp = &c->comps[rows[i]];
    const crec *r0 = &c->recs[cp->members[0]];
    for (int v = 0; v < r0->n_vals; v++) {
      if (is_level_only(r0->cols[v], &sets[0], accumulator)) continue;
      int everywhere = 1;
      for (int k = 1; k < n_sets && everywhere; k++) everywhere = rec_has(&c->recs[cp->members[k]], r0->cols[v]);
      if (everywhere && name_add(&shared, r0->cols[v]) < 0) goto fail;
    }
  }
  x->n_shared = (int32_t)shared.n;
  x->shared = lm_arena_alloc(arena, shared.n * sizeof *x->shared);
  size_t n_slots = n_rows * (size_t)n_sets;
  x->runs = lm_arena_alloc(arena, (n_slots + 1) * sizeof *x->runs);
  x->values = lm_arena_alloc(arena, (n_slots * shared.n + 1) * sizeof *x->values);
  if (!x->shared || !x->runs || !x->values) goto fail;
  for (size_t k = 0; k < shared.n; k++)
    if (!(x->shared[k] = lm_arena_strdup(arena, shared.v[k]))) goto fail;
  for (size_t i = 0; i < n_rows; i++)
    for (int k = 0; k < n_sets; k++) {
      const crec *r = &c->recs[c->comps[rows[i]].members[k]];
      size_t at = i * (size_t)n_sets + (size_t)k;
      x->runs[at] = r->run;
      double *v = &x->values[at * shared.n];
      v[0] = r->end - r->start;
      for (size_t j = 1; j < shared.n; j++) v[j] = rec_value(r, shared.v[j]);
    }
  /* The set of each value. */
  size_t n_level_cols = 0;
  for (int k = 0; k < n_sets; k++)
    if (sets[k].accumulate && levels[k]) n_level_cols += levels[k]->n_cols;
  size_t cap = n_prov + n_level_cols + 1;
  x->prov_source = lm_arena_alloc(arena, cap * sizeof *x->prov_source);
  x->prov_column = lm_arena_alloc(arena, cap * sizeof *x->prov_column);
  x->prov_sets = lm_arena_alloc(arena, cap * sizeof *x->prov_sets);
  if (!x->prov_source || !x->prov_column || !x->prov_sets) goto fail;
  for (size_t p = 0; p < n_prov; p++) {
    x->prov_source[x->n_prov] = prov[p].source;
    x->prov_column[x->n_prov] = prov[p].column;
    x->prov_sets[x->n_prov++] = prov[p].sets;
  }
  for (int k = 0; k < n_sets; k++) {
    if (!sets[k].accumulate || !levels[k]) continue;
    const lm_table *t = levels[k];
    for (size_t col = 0; col < t->n_cols; col++) {
      const char *name = t->cols[col].name;
      if (!strcmp(name, "Dispatch_ID") || !strcmp(name, "GPU_ID") || !strcmp(name, "Start_Timestamp") ||
          !strcmp(name, "End_Timestamp"))
        continue;
      int16_t *ks = lm_arena_alloc(arena, (n_rows + 1) * sizeof *ks);
      if (!ks) goto fail;
      for (size_t i = 0; i < n_rows; i++) ks[i] = (int16_t)k;
      x->prov_source[x->n_prov] = t->name;
      x->prov_column[x->n_prov] = name;
      x->prov_sets[x->n_prov++] = ks;
    }
  }
  name_list_fini(&shared);
  return x;
fail:
  name_list_fini(&shared);
  return NULL;
}

/* A row's clock where no sampler measured one: GRBM_GUI_ACTIVE (busy
 * cycles, summed over the XCDs) over the duration of the same execution,
 * the record of the lowest set that holds it. NaN without one. */
static double estimate_sclk(const collected *c, const composite *cp, int n_sets, double n_xcd) {
  for (int k = 0; k < n_sets; k++) {
    const crec *r = &c->recs[cp->members[k]];
    double busy = rec_value(r, "GRBM_GUI_ACTIVE"), span = r->end - r->start;
    if (!isnan(busy) && span > 0 && busy > 0) return busy / n_xcd / span * 1e3;
  }
  return LM_NAN;
}

/* add_power: the board power and temperature during each row's first
 * record (its GPU, its run's samples, as its clocks), as the pmc_perf
 * columns Measured_Power_W and Measured_Temp_C; neither column is added
 * when no row has a reading (clock-only samplers, no sampler), so such a
 * workload has the columns it always had. pmc has room for two more. */
static lm_status add_power(lm_sql *db, int64_t wid, const collected *c, const size_t *rows, size_t n_rows,
                           lm_table *pmc, lm_diag *diag) {
  static const char *const names[2] = {"Measured_Power_W", "Measured_Temp_C"};
  lm_db_composer *q = NULL;
  double *vals[2] = {lm_malloc((n_rows + 1) * sizeof(double)), lm_malloc((n_rows + 1) * sizeof(double))};
  int any[2] = {0, 0};
  lm_status st = LM_OK;
  if (!vals[0] || !vals[1]) {
    st = lm_oom(diag, NULL);
    goto done;
  }
  if ((st = lm_db_composer_open(db, wid, &q, diag)) != LM_OK) goto done;
  for (size_t i = 0; i < n_rows; i++) {
    const crec *f = &c->recs[c->comps[rows[i]].first];
    if ((st = lm_db_composer_power(q, f->run, f->gpu, f->start, f->end, &vals[0][i], &vals[1][i], diag)) != LM_OK)
      goto done;
    for (int k = 0; k < 2; k++) any[k] |= !isnan(vals[k][i]);
  }
  for (int k = 0; k < 2; k++) {
    if (!any[k] || lm_table_find(pmc, names[k]) >= 0) continue;
    lm_column *col = lm_table_add_column(pmc, names[k], 0);
    if (!col) {
      st = lm_oom(diag, NULL);
      goto done;
    }
    memcpy(col->values, vals[k], n_rows * sizeof(double));
  }
done:
  lm_db_composer_close(q);
  lm_free(vals[0]);
  lm_free(vals[1]);
  return st;
}

/* What lm_collect_compose builds, all freed by compose_fini: the loaded
 * runs, the complete rows in order, the tables, where each value came
 * from and the workload that carries them to the database. */
typedef struct compose_ctx {
  collected c;
  const lm_set_info *sets;
  int n_sets;
  const char *accumulator;
  const char *db_path;
  size_t *rows; /* the complete composites, in launch order */
  size_t n_rows;
  name_list pmc_cols; /* pmc_perf's counter columns */
  name_list regions;  /* region names, numbered as they are written */
  lm_table *pmc;
  lm_table **levels;   /* the level tables (n_levels) */
  size_t n_levels;
  lm_table **level_of; /* per set: its level table, NULL without one */
  provenance *prov;    /* per pmc_perf counter column */
  size_t n_prov;
  lm_workload *w;      /* in its own arena; its tables are the ones above */
} compose_ctx;

static void compose_fini(compose_ctx *x) {
  for (size_t k = 0; x->prov && k < x->n_prov; k++) {
    lm_free(x->prov[k].source);
    lm_free(x->prov[k].column);
    lm_free(x->prov[k].runs);
    lm_free(x->prov[k].sets);
  }
  lm_free(x->prov);
  if (x->w) lm_arena_free(x->w->arena);
  lm_table_free(x->pmc);
  for (int k = 0; x->levels && k < x->n_sets; k++) lm_table_free(x->levels[k]);
  lm_free(x->levels);
  lm_free(x->level_of);
  lm_free(x->rows);
  name_list_fini(&x->pmc_cols);
  name_list_fini(&x->regions);
  collected_fini(&x->c);
}

/* pick_rows: the complete rows into x->rows, in launch order; each row
 * that misses a set is counted in summary and described while there is
 * room. */
static void pick_rows(compose_ctx *x, lm_profile_summary *summary) {
  const collected *c = &x->c;
  int n_sets = x->n_sets;
  summary->dropped = 0;
  summary->dropped_detail[0] = '\0';
  size_t detail_at = 0;
  for (size_t i = 0; i < c->n_comps; i++) {
    if (composite_complete(c, &c->comps[i])) {
      x->rows[x->n_rows++] = i;
      continue;
    }
    summary->dropped++;
    const crec *r = &c->recs[c->comps[i].first];
    if (detail_at < sizeof summary->dropped_detail - 200) {
      int missing = 0, first_missing = -1;
      for (int k = 0; k < n_sets; k++)
        if (c->comps[i].members[k] < 0) {
          missing++;
          if (first_missing < 0) first_missing = k;
        }
      detail_at += (size_t)snprintf(summary->dropped_detail + detail_at,
                                    sizeof summary->dropped_detail - detail_at,
                                    "%s%.80s from instance %lld misses %d of %d sets (first: set %d)",
                                    detail_at ? "; " : "", r->kernel, (long long)r->instance,
                                    missing, n_sets, first_missing);
    }
  }
  lm_sort(x->rows, x->n_rows, sizeof *x->rows, cmp_rows, &x->c);
}

/* The columns of pmc_perf while it is filled; counters[k] holds
 * x->pmc_cols.v[k]. starts and ends: per set, one row's timestamps. */
typedef struct pmc_layout {
  lm_column *fixed[LM_ARRAY_LEN(fixed_names)];
  lm_column *kernel, *start, *end;
  lm_column **counters;
  double wave;
  double *starts, *ends;
} pmc_layout;

/* pmc_names: pmc_perf's counter columns, which get every value but the
 * accumulate ones. */
static lm_status pmc_names(compose_ctx *x, lm_diag *diag) {
  const collected *c = &x->c;
  for (size_t i = 0; i < x->n_rows; i++) {
    const composite *cp = &c->comps[x->rows[i]];
    for (int k = 0; k < x->n_sets; k++) {
      const crec *r = &c->recs[cp->members[k]];
      for (int v = 0; v < r->n_vals; v++)
        if (!is_level_only(r->cols[v], &x->sets[k], x->accumulator) && name_add(&x->pmc_cols, r->cols[v]) < 0)
          return oom(diag);
    }
  }
  return LM_OK;
}

/* pmc_columns: pmc_perf with its columns (fixed ones, Kernel_Name, the
 * counters, the timestamps), the counters' values NaN and each counter's
 * provenance (x->prov) none until a row fills it. */
static lm_status pmc_columns(compose_ctx *x, pmc_layout *lay, lm_diag *diag) {
  size_t n_rows = x->n_rows, n_cols = x->pmc_cols.n;
  x->pmc = lm_table_create(x->db_path, "pmc_perf", n_rows, LM_ARRAY_LEN(fixed_names) + 5 + n_cols);
  if (!x->pmc) return oom(diag);
  for (size_t k = 0; k < LM_ARRAY_LEN(fixed_names); k++)
    if (!(lay->fixed[k] = lm_table_add_column(x->pmc, fixed_names[k], 0))) return oom(diag);
  lay->kernel = lm_table_add_column(x->pmc, "Kernel_Name", 1);
  lay->counters = lm_calloc(n_cols + 1, sizeof *lay->counters);
  if (!lay->kernel || !lay->counters) return oom(diag);
  x->prov = lm_calloc(n_cols + (size_t)x->n_sets * 64 + 1, sizeof *x->prov);
  if (!x->prov) return oom(diag);
  for (size_t k = 0; k < n_cols; k++) {
    provenance *p = &x->prov[x->n_prov];
    lay->counters[k] = lm_table_add_column(x->pmc, x->pmc_cols.v[k], 0);
    p->source = lm_strdup("pmc_perf");
    p->column = lm_strdup(x->pmc_cols.v[k]);
    p->runs = lm_calloc(n_rows + 1, sizeof(int16_t));
    p->sets = lm_calloc(n_rows + 1, sizeof(int16_t));
    x->n_prov++; /* compose_fini frees what was allocated */
    if (!lay->counters[k] || !p->source || !p->column || !p->runs || !p->sets) return oom(diag);
    for (size_t r = 0; r < n_rows; r++) {
      lay->counters[k]->values[r] = LM_NAN;
      p->runs[r] = p->sets[r] = -1;
    }
  }
  lay->start = lm_table_add_column(x->pmc, "Start_Timestamp", 0);
  lay->end = lm_table_add_column(x->pmc, "End_Timestamp", 0);
  if (!lay->start || !lay->end) return oom(diag);
  return LM_OK;
}

/* pmc_row: row i of pmc_perf from its records: the first record's
 * dispatch attributes, each counter from the first set that has it, the
 * timestamps. LM_ENOMEM when the kernel's name cannot be kept. */
static lm_status pmc_row(compose_ctx *x, const pmc_layout *lay, size_t i, lm_diag *diag) {
  const collected *c = &x->c;
  const composite *cp = &c->comps[x->rows[i]];
  const crec *f = &c->recs[cp->first];
  /* Dispatch_ID numbers the composed rows in launch order (a row of
   * instance cycling spans several of the application's dispatches,
   * which profile_record keeps). */
  double attrs[] = {(double)i, f->gpu, (double)f->grid, (double)f->wg, (double)f->lds,
                    (double)f->scratch, (double)f->vgpr, (double)f->agpr, (double)f->sgpr, lay->wave};
  for (size_t k = 0; k < LM_ARRAY_LEN(fixed_names); k++) lay->fixed[k]->values[i] = attrs[k];
  if ((lay->kernel->text_ids[i] = lm_table_intern(x->pmc, f->kernel)) < 0) return oom(diag);
  for (int k = 0; k < x->n_sets; k++) {
    const crec *r = &c->recs[cp->members[k]];
    lay->starts[k] = r->start;
    lay->ends[k] = r->end;
    for (int v = 0; v < r->n_vals; v++) {
      int64_t ci;
      if (!lm_map_get(x->pmc_cols.index, r->cols[v], &ci)) continue;
      if (x->prov[ci].sets[i] >= 0) continue; /* the first set that has it */
      lay->counters[ci]->values[i] = r->vals[v];
      x->prov[ci].runs[i] = (int16_t)r->run;
      x->prov[ci].sets[i] = (int16_t)k;
    }
  }
  /* Timestamps: the mean over the runs, as the reference tool merges
   * passes (exact when they agree). */
  lay->start->values[i] = exact_mean(lay->starts, (size_t)x->n_sets);
  lay->end->values[i] = exact_mean(lay->ends, (size_t)x->n_sets);
  return LM_OK;
}

/* build_pmc: pmc_perf, one row per complete row (not finished: add_power
 * may add columns). */
static lm_status build_pmc(compose_ctx *x, const lm_sysinfo *info, lm_diag *diag) {
  pmc_layout lay = {0};
  lm_status st = pmc_columns(x, &lay, diag);
  if (st != LM_OK) goto done;
  lay.wave = 64;
  long wi = lm_sysinfo_find(info, "wave_size");
  if (wi >= 0 && !isnan(info->values[wi])) lay.wave = info->values[wi];
  lay.starts = lm_malloc(((size_t)x->n_sets + 1) * sizeof *lay.starts);
  lay.ends = lm_malloc(((size_t)x->n_sets + 1) * sizeof *lay.ends);
  if (!lay.starts || !lay.ends) {
    st = oom(diag);
    goto done;
  }
  for (size_t i = 0; st == LM_OK && i < x->n_rows; i++) st = pmc_row(x, &lay, i, diag);
done:
  lm_free(lay.starts);
  lm_free(lay.ends);
  lm_free(lay.counters);
  return st;
}

/* build_level: the level table of accumulate set k: every value of the
 * set's records, by row. */
static lm_status build_level(compose_ctx *x, int k, lm_diag *diag) {
  const collected *c = &x->c;
  size_t n_rows = x->n_rows;
  lm_column **vc = NULL;
  lm_status st = LM_OK;
  name_list lc = {0};
  lc.index = lm_map_new();
  if (!lc.index) return oom(diag);
  for (size_t i = 0; i < n_rows; i++) {
    const crec *r = &c->recs[c->comps[x->rows[i]].members[k]];
    for (int v = 0; v < r->n_vals; v++)
      if (name_add(&lc, r->cols[v]) < 0) {
        st = oom(diag);
        goto done;
      }
  }
  lm_table *t = lm_table_create(x->db_path, x->sets[k].accumulate, n_rows, 4 + lc.n);
  if (!t) {
    st = oom(diag);
    goto done;
  }
  x->levels[x->n_levels++] = t;
  x->level_of[k] = t;
  lm_column *d = lm_table_add_column(t, "Dispatch_ID", 0), *g = lm_table_add_column(t, "GPU_ID", 0);
  vc = lm_calloc(lc.n + 1, sizeof *vc);
  if (!d || !g || !vc) {
    st = oom(diag);
    goto done;
  }
  for (size_t j = 0; j < lc.n; j++) {
    if (!(vc[j] = lm_table_add_column(t, lc.v[j], 0))) {
      st = oom(diag);
      goto done;
    }
    for (size_t i = 0; i < n_rows; i++) vc[j]->values[i] = LM_NAN;
  }
  lm_column *ts = lm_table_add_column(t, "Start_Timestamp", 0), *te = lm_table_add_column(t, "End_Timestamp", 0);
  if (!ts || !te) {
    st = oom(diag);
    goto done;
  }
  for (size_t i = 0; i < n_rows; i++) {
    const crec *r = &c->recs[c->comps[x->rows[i]].members[k]];
    d->values[i] = (double)c->recs[c->comps[x->rows[i]].first].did;
    g->values[i] = r->gpu;
    ts->values[i] = r->start;
    te->values[i] = r->end;
    for (int v = 0; v < r->n_vals; v++) {
      int64_t j;
      if (lm_map_get(lc.index, r->cols[v], &j)) vc[j]->values[i] = r->vals[v];
    }
  }
  lm_table_finish(t);
done:
  lm_free(vc);
  name_list_fini(&lc);
  return st;
}

/* build_workload: the workload in memory (x->w): the tables, the
 * device's system information with this profile's name, command, time
 * and blocks, and the executions of each row. */
static lm_status build_workload(compose_ctx *x, const lm_sysinfo *info, const lm_table *roofline,
                                const char *name, char *const *argv, int argc, const char *ip_blocks,
                                lm_diag *diag) {
  lm_arena *arena = lm_arena_new(1 << 12);
  if (!arena) return oom(diag);
  lm_workload *w = x->w = lm_arena_alloc(arena, sizeof *w);
  if (!w) {
    lm_arena_free(arena);
    return oom(diag);
  }
  w->arena = arena;
  w->pmc = x->pmc;
  w->levels = x->levels;
  w->n_levels = x->n_levels;
  /* The roofline table is lent: the workload is written, never freed
   * with its tables. */
  w->roofline = (lm_table *)roofline;
  w->sysinfo = *info;
  size_t nf = info->n_fields;
  w->sysinfo.texts = lm_arena_alloc(arena, (nf + 1) * sizeof(char *));
  if (!w->sysinfo.texts) return oom(diag);
  char command[4096] = "", stamp[64];
  for (int i = 0, at = 0; i < argc && at < (int)sizeof command - 2; i++)
    at += snprintf(command + at, sizeof command - (size_t)at, "%s%s", i ? " " : "", argv[i]);
  time_t now = time(NULL);
  strftime(stamp, sizeof stamp, "%a %d %b %Y %I:%M:%S %p (%Z)", localtime(&now));
  for (size_t i = 0; i < nf; i++) {
    const char *field = info->names[i], *text = info->texts[i];
    if (strcmp(field, "workload_name") == 0) text = name;
    else if (strcmp(field, "command") == 0) text = command;
    else if (strcmp(field, "timestamp") == 0) text = stamp;
    else if (strcmp(field, "ip_blocks") == 0 && ip_blocks) text = ip_blocks;
    w->sysinfo.texts[i] = lm_arena_strdup(arena, text);
    if (!w->sysinfo.texts[i]) return oom(diag);
  }
  w->arch = lm_sysinfo_text(&w->sysinfo, "gpu_arch");
  w->exec = build_executions(arena, &x->c, x->rows, x->n_rows, x->sets, x->n_sets, x->accumulator, x->prov,
                             x->n_prov, x->level_of);
  return w->exec ? LM_OK : oom(diag);
}

/* write_row: row i's details: instance, process, thread, measured clocks
 * and where they came from, and the regions of every record of the row. */
static lm_status write_row(compose_ctx *x, lm_db_composer *out, size_t i, double n_xcd, lm_diag *diag) {
  const composite *cp = &x->c.comps[x->rows[i]];
  const crec *f = &x->c.recs[cp->first];
  double sclk, mclk;
  lm_status st = lm_db_composer_clock(out, f->run, f->gpu, f->start, f->end, &sclk, &mclk, diag);
  if (st != LM_OK) return st;
  /* Where the clock came from: the run's sampler, else the estimate. */
  char source[64] = "";
  if (!isnan(sclk)) {
    if ((st = lm_db_composer_sampler(out, f->run, source, sizeof source, diag)) != LM_OK) return st;
    if (!source[0]) snprintf(source, sizeof source, "sampled");
  } else if (!isnan(sclk = estimate_sclk(&x->c, cp, x->n_sets, n_xcd))) {
    snprintf(source, sizeof source, "estimate");
  }
  if (source[0]) st = lm_db_composer_clock_source(out, i, source, diag);
  if (st == LM_OK) st = lm_db_composer_row(out, i, f->run, f->instance, f->pid, f->tid, sclk, mclk, diag);
  /* Regions of every record of the row, by name. */
  for (int k = 0; st == LM_OK && k < x->n_sets; k++) {
    const crec *r = &x->c.recs[cp->members[k]];
    char buf[512];
    snprintf(buf, sizeof buf, "%s", r->regions);
    for (char *tok = strtok(buf, ","); tok && st == LM_OK; tok = strtok(NULL, ",")) {
      const char *rname = NULL;
      if ((st = lm_db_composer_region_name(out, r->run, atoi(tok), &rname, diag)) != LM_OK || !rname) continue;
      int64_t gid = name_add(&x->regions, rname);
      st = gid >= 0 ? lm_db_composer_region(out, i, gid, rname, diag) : oom(diag);
    }
  }
  return st;
}

/* write_composed: in one transaction, replace the workload's composed
 * tables with x->w's, where each value came from (the run and the set,
 * per row) and each row's details, and mark the workload complete;
 * rolled back when any of it fails. */
static lm_status write_composed(compose_ctx *x, lm_sql *db, int64_t wid, double n_xcd, lm_diag *diag) {
  lm_db_composer *out = NULL;
  lm_status st = lm_db_begin(db, diag);
  if (st != LM_OK) return st;
  if ((st = lm_db_clear_composed(db, wid, diag)) != LM_OK) goto done;
  if ((st = lm_db_write_tables(db, wid, x->w, NULL, diag)) != LM_OK) goto done;
  if ((st = lm_db_composer_open(db, wid, &out, diag)) != LM_OK) goto done;
  for (size_t k = 0; st == LM_OK && k < x->n_prov; k++)
    st = lm_db_composer_sources(out, x->prov[k].source, x->prov[k].column, x->prov[k].runs, x->prov[k].sets,
                                x->n_rows, diag);
  for (size_t i = 0; st == LM_OK && i < x->n_rows; i++) st = write_row(x, out, i, n_xcd, diag);
  lm_db_composer_close(out);
  out = NULL;
  if (st != LM_OK) goto done;
  if ((st = lm_db_complete_workload(db, wid, x->n_rows, diag)) != LM_OK) goto done;
  st = lm_db_commit(db, diag);
done:
  lm_db_composer_close(out);
  if (st != LM_OK) lm_db_rollback(db);
  return st;
}

lm_status lm_collect_compose(lm_sql *db, int64_t wid, const lm_set_info *sets, int n_sets,
                             const char *accumulator, const lm_catalog *cat, const lm_sysinfo *info,
                             const lm_table *roofline, const char *name, char *const *argv, int argc,
                             const char *ip_blocks, lm_profile_summary *summary, lm_diag *diag) {
  compose_ctx x;
  memset(&x, 0, sizeof x);
  x.sets = sets;
  x.n_sets = n_sets;
  x.accumulator = accumulator;
  lm_status st = load_collected(db, wid, n_sets, cat, &x.c, diag);
  if (st != LM_OK) return st;
  x.pmc_cols.index = lm_map_new();
  x.regions.index = lm_map_new();
  x.rows = lm_malloc((x.c.n_comps + 1) * sizeof *x.rows);
  x.levels = lm_calloc((size_t)n_sets + 1, sizeof *x.levels);
  x.level_of = lm_calloc((size_t)n_sets + 1, sizeof *x.level_of);
  if (!x.pmc_cols.index || !x.regions.index || !x.rows || !x.levels || !x.level_of) {
    st = oom(diag);
    goto done;
  }
  pick_rows(&x, summary);
  if ((st = pmc_names(&x, diag)) != LM_OK) goto done;
  x.db_path = lm_db_path(db);
  if ((st = build_pmc(&x, info, diag)) != LM_OK) goto done;
  if ((st = add_power(db, wid, &x.c, x.rows, x.n_rows, x.pmc, diag)) != LM_OK) goto done;
  lm_table_finish(x.pmc);
  /* Level tables: every value of each accumulate set. */
  for (int k = 0; k < n_sets; k++)
    if (sets[k].accumulate && (st = build_level(&x, k, diag)) != LM_OK) goto done;
  if ((st = build_workload(&x, info, roofline, name, argv, argc, ip_blocks, diag)) != LM_OK) goto done;
  double n_xcd = 1;
  long xi = lm_sysinfo_find(info, "num_xcd");
  if (xi >= 0 && info->values[xi] >= 1) n_xcd = info->values[xi];
  if ((st = write_composed(&x, db, wid, n_xcd, diag)) == LM_OK) summary->dispatches = x.n_rows;
done:
  compose_fini(&x);
  return st;
}

/* add_assignment: append (key, selected) -> set for composed row group
 * to run's assignments (*cap: their capacity). 0 when out of memory. */
static int add_assignment(lm_run_spec *run, size_t *cap, const char *key, int64_t selected, int set,
                          int64_t group) {
  if (run->n_assign == *cap) {
    size_t ncap = *cap ? *cap * 2 : 64;
    char **gk = lm_realloc(run->assign_key, ncap * sizeof *gk);
    if (gk) run->assign_key = gk;
    int64_t *gi = lm_realloc(run->assign_instance, ncap * sizeof *gi);
    if (gi) run->assign_instance = gi;
    int *gs = lm_realloc(run->assign_set, ncap * sizeof *gs);
    if (gs) run->assign_set = gs;
    int64_t *gg = lm_realloc(run->assign_group, ncap * sizeof *gg);
    if (gg) run->assign_group = gg;
    if (!gk || !gi || !gs || !gg) return 0;
    *cap = ncap;
  }
  run->assign_key[run->n_assign] = lm_strdup(key);
  if (!run->assign_key[run->n_assign]) return 0;
  run->assign_instance[run->n_assign] = selected;
  run->assign_set[run->n_assign] = set;
  run->assign_group[run->n_assign] = group;
  run->n_assign++;
  return 1;
}

/* Gaps after the runs so far, and the next run that fills them. A row
 * that misses set k gets a selected instance of its kernel assigned to
 * set k: one of its own instances first, then any other instance of the
 * same kernel (instance cycling assumes they behave alike), each instance
 * at most once per run. */
lm_status lm_collect_plan_gaps(lm_sql *db, int64_t wid, int n_sets, lm_run_spec *run, size_t *n_gaps,
                           lm_diag *diag) {
  collected c;
  lm_status st = load_collected(db, wid, n_sets, NULL, &c, diag);
  *n_gaps = 0;
  if (st != LM_OK) return st;
  size_t cap = 0;
  char k[1100];
  lm_map *used = lm_map_new(), *pool_seen = lm_map_new();
  /* Every selected instance per key, in order: the pool. */
  int64_t *pool_sel = lm_malloc((c.n_recs + 1) * sizeof *pool_sel);
  const char **pool_key = lm_malloc((c.n_recs + 1) * sizeof *pool_key);
  size_t n_pool = 0;
  if (!used || !pool_seen || !pool_sel || !pool_key) goto nomem;
  for (size_t i = 0; i < c.n_recs; i++) {
    const crec *r = &c.recs[i];
    if (r->mode == LM_REPLAY_APP) continue;
    snprintf(k, sizeof k, "%d\x1f%s\x1f%lld", r->slot, r->key, (long long)r->selected);
    int64_t dummy;
    if (lm_map_get(pool_seen, k, &dummy)) continue;
    if (lm_map_put(pool_seen, k, 1) != LM_OK) goto nomem;
    pool_sel[n_pool] = r->selected;
    pool_key[n_pool++] = r->key;
  }
  for (size_t i = 0; i < c.n_comps; i++) {
    const composite *cp = &c.comps[i];
    if (composite_complete(&c, cp)) continue;
    (*n_gaps)++;
    const crec *first = &c.recs[cp->first];
    if (first->mode == LM_REPLAY_APP) continue; /* app replay re-runs whole sets */
    int64_t group = first->group;
    size_t scan = 0;
    for (int set = 0; set < n_sets; set++) {
      if (cp->members[set] >= 0) continue;
      /* Its own instances first. */
      int64_t pick = -1, dummy;
      for (int m = 0; m < n_sets && pick < 0; m++) {
        if (cp->members[m] < 0) continue;
        snprintf(k, sizeof k, "%s\x1f%lld", first->key, (long long)c.recs[cp->members[m]].selected);
        if (!lm_map_get(used, k, &dummy)) pick = c.recs[cp->members[m]].selected;
      }
      for (; pick < 0 && scan < n_pool; scan++) {
        if (strcmp(pool_key[scan], first->key) != 0) continue;
        snprintf(k, sizeof k, "%s\x1f%lld", first->key, (long long)pool_sel[scan]);
        if (!lm_map_get(used, k, &dummy)) pick = pool_sel[scan];
      }
      if (pick < 0) break; /* every instance of the kernel is busy this run */
      snprintf(k, sizeof k, "%s\x1f%lld", first->key, (long long)pick);
      if (lm_map_put(used, k, 1) != LM_OK || !add_assignment(run, &cap, first->key, pick, set, group))
        goto nomem;
    }
  }
  goto done;
nomem:
  st = lm_oom(diag, NULL);
done:
  lm_free(pool_sel);
  lm_free(pool_key);
  lm_map_free(used);
  lm_map_free(pool_seen);
  collected_fini(&c);
  return st;
}

