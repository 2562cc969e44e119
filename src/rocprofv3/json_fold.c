/*
 * json_fold.c - rocprofv3's JSON records folded as each completes (json.c
 * parses). A counter collection entry becomes its dispatch row at once;
 * what it refers to by id (its agent, its kernel symbol, its counters'
 * names) is resolved at once when that section has ended, else kept in a
 * compact pending array and resolved when the process object ends, in the
 * order the rows were added, so the result does not depend on the order
 * of the sections. A kernel trace seen before the collection waits too:
 * it only completes timestamps, unless the process collected nothing.
 * Memory is the fold (dispatches x counters), the agents, counter names
 * and kernel symbols, and what waits: never the document.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rocprofv3/json_private.h"

enum { LDS_GRANULE = 512 }; /* the CSV's LDS_Block_Size rounds up to this */

/* A counter of "counters". */
struct counter {
  double id;
  char *name;
};

/* A kernel symbol: its kernel id (has_id 0: none), the name it gives
 * dispatches and its facts (NaN when absent). */
struct symbol {
  double kernel_id, lds, vgpr, agpr, sgpr;
  char *name;
  int has_id;
};

/* A symbol's kernel id and position in kernel_symbols. */
struct key {
  double id;
  size_t pos;
};

/* One collection entry's sum of a counter id; counter is its index in
 * counters once they are known, first the record it was first seen in. */
struct sum {
  double id, value;
  size_t counter, first;
};

/* A new row whose agent and kernel wait for their sections. */
struct pend_row {
  size_t row, index;
  double agent, kernel;
  int set, trace; /* set: lm_v3j_record bits I_AGENT, I_KERNEL */
};

/* A counter sum whose name waits for "counters". */
struct pend_value {
  size_t row, entry, record;
  double id, value;
};

/* A kernel trace record that waits for the collection (info holds no
 * text). */
struct pend_trace {
  lm_v3j_record info;
  double start, end;
  uint32_t set;
  size_t index;
};

struct lm_v3j {
  const char *path;
  lm_v3_fold *fold;
  lm_v3_agents *agents;
  int *group;
  char prefix[48]; /* "" or "rocprofiler-sdk-tool[p]." */
  int keep_agents; /* the GPU agents of this process are kept */
  int done;        /* LM_V3J_* sections complete */
  size_t n_entries;
  lm_map *nodes;     /* agent handle -> node id */
  double last_agent; /* the agent handle last found, and its node */
  int64_t last_node;
  int has_last_agent;
  struct counter *counters; /* sorted by id once complete */
  size_t n_counters, cap_counters, guess;
  struct symbol *symbols;
  size_t n_symbols, cap_symbols;
  struct key *by_id; /* the symbols with a kernel id, by id then position */
  size_t n_by_id;
  struct sum *sums;
  size_t n_sums, cap_sums;
  struct pend_row *rows;
  size_t n_rows, cap_rows;
  struct pend_value *values;
  size_t n_values, cap_values;
  struct pend_trace *traces;
  size_t n_traces, cap_traces;
};

/* An error at field prefix + where + rest. */
static lm_status bad(const lm_v3j *j, const char *what, const char *where, const char *rest, lm_diag *diag) {
  char field[192]; /* cut to the diagnostic's field */
  snprintf(field, sizeof field, "%s%s%s", j->prefix, where, rest);
  return lm_fail_at(diag, LM_EPARSE, j->path, 0, field, "%s", what);
}

/* The text of an id: its digits when it is a whole number below 2^53
 * (as rocprofv3 writes them), else its shortest exact form. */
static const char *id_text(double v, char *buf, size_t cap) {
  if (v >= 0 && v < 9007199254740992.0 && v == floor(v)) {
    char digits[24];
    size_t n = 0;
    uint64_t u = (uint64_t)v;
    do {
      digits[n++] = (char)('0' + u % 10);
      u /= 10;
    } while (u);
    for (size_t i = 0; i < n && i + 1 < cap; i++) buf[i] = digits[n - 1 - i];
    buf[n < cap ? n : cap - 1] = 0;
    return buf;
  }
  snprintf(buf, cap, "%.17g", v);
  return buf;
}

lm_status lm_v3j_new(const char *path, lm_v3_fold *fold, lm_v3_agents *agents, int *group, lm_v3j **out,
                     lm_diag *diag) {
  lm_v3j *j = lm_calloc(1, sizeof *j);
  *out = j;
  if (!j) return lm_oom(diag, path);
  j->path = path;
  j->fold = fold;
  j->agents = agents;
  j->group = group;
  return LM_OK;
}

/* What one process holds, freed at its end. */
static void clear_process(lm_v3j *j) {
  for (size_t i = 0; i < j->n_counters; i++) lm_free(j->counters[i].name);
  for (size_t i = 0; i < j->n_symbols; i++) lm_free(j->symbols[i].name);
  lm_map_free(j->nodes);
  lm_free(j->by_id);
  j->nodes = NULL;
  j->by_id = NULL;
  j->n_counters = j->n_symbols = j->n_by_id = j->n_sums = j->n_rows = j->n_values = j->n_traces = 0;
  j->n_entries = 0;
  j->done = 0;
  j->guess = 0;
  j->has_last_agent = 0;
}

void lm_v3j_free(lm_v3j *j) {
  if (!j) return;
  clear_process(j);
  lm_free(j->counters);
  lm_free(j->symbols);
  lm_free(j->sums);
  lm_free(j->rows);
  lm_free(j->values);
  lm_free(j->traces);
  lm_free(j);
}

lm_status lm_v3j_process_begin(lm_v3j *j, size_t index, lm_diag *diag) {
  clear_process(j);
  j->prefix[0] = 0;
  if (index) snprintf(j->prefix, sizeof j->prefix, "rocprofiler-sdk-tool[%zu].", index);
  j->fold->t->group = (*j->group)++;
  j->fold->t->has_last = 0;
  j->keep_agents = j->agents->n == 0;
  j->nodes = lm_map_new();
  return j->nodes ? LM_OK : lm_oom(diag, j->path);
}

/* sysinfo field <- agent field, as agent_info.csv's columns. */
static const struct {
  int bit;
  const char *key;
} agent_fields[] = {
    {A_CU, "cu_per_gpu"},          {A_SIMD, "simd_per_cu"}, {A_WAVE, "wave_size"}, {A_WGMAX, "workgroup_max_size"},
    {A_WAVES, "max_waves_per_cu"}, {A_CLK, "max_sclk"},     {A_CLK, "cur_sclk"},   {A_XCC, "num_xcd"}};

lm_status lm_v3j_agent(lm_v3j *j, const lm_v3j_record *r, size_t index, lm_diag *diag) {
  char where[32], key[40];
  snprintf(where, sizeof where, "agents[%zu]", index);
  if (!lm_v3j_has(r, A_ID) || !lm_v3j_has(r, A_NODE) || !lm_v3j_has(r, A_TYPE))
    return bad(j, "an agent needs id.handle, node_id and type", where, "", diag);
  double node = r->num[A_NODE];
  if (!(fabs(node) < 9007199254740992.0) || node != floor(node))
    return bad(j, "not a whole number below 2^53", where, ".node_id", diag);
  if (lm_map_put(j->nodes, id_text(r->num[A_ID], key, sizeof key), (int64_t)node) != LM_OK)
    return lm_oom(diag, j->path);
  lm_v3_agents *a = j->agents;
  if (r->num[A_TYPE] != 2 || !j->keep_agents || a->n == LM_V3_MAX_AGENTS) return LM_OK;
  a->where = j->path;
  a->node[a->n++] = node;
  if (a->n > 1) return LM_OK;
  if (lm_v3j_has(r, A_NAME)) {
    const char *name = r->text[A_NAME - LM_V3J_TEXT0];
    snprintf(a->arch, sizeof a->arch, "%.*s", (int)strcspn(name, ":"), name);
  }
  const char *product = lm_v3j_has(r, A_PRODUCT) ? r->text[A_PRODUCT - LM_V3J_TEXT0] : NULL;
  lm_status st = lm_v3_agents_keep(a, "gpu_model", product, j->path, diag);
  char s[32];
  for (size_t f = 0; f < LM_ARRAY_LEN(agent_fields) && st == LM_OK; f++) {
    double v = r->num[agent_fields[f].bit];
    if (!lm_v3j_has(r, agent_fields[f].bit) || !(v > 0)) continue;
    snprintf(s, sizeof s, "%.0f", v);
    st = lm_v3_agents_keep(a, agent_fields[f].key, s, j->path, diag);
  }
  double arrays = r->num[A_ARRAYS], per = r->num[A_PER_SE];
  if (st == LM_OK && lm_v3j_has(r, A_ARRAYS) && lm_v3j_has(r, A_PER_SE) && arrays > 0 && per > 0) {
    snprintf(s, sizeof s, "%.0f", arrays / per);
    st = lm_v3_agents_keep(a, "se_per_gpu", s, j->path, diag);
  }
  return st;
}

lm_status lm_v3j_counter(lm_v3j *j, const lm_v3j_record *r, size_t index, lm_diag *diag) {
  const char *name = lm_v3j_has(r, C_NAME) ? r->text[C_NAME - LM_V3J_TEXT0] : NULL;
  if (!lm_v3j_has(r, C_ID) || !name || !name[0]) {
    char where[32];
    snprintf(where, sizeof where, "counters[%zu]", index);
    return bad(j, "a counter needs id.handle and a name", where, "", diag);
  }
  void *more = lm_grow(j->counters, &j->cap_counters, j->n_counters, sizeof *j->counters);
  if (!more) return lm_oom(diag, j->path);
  j->counters = more;
  struct counter *c = &j->counters[j->n_counters];
  if (!(c->name = lm_strdup(name))) return lm_oom(diag, j->path);
  c->id = r->num[C_ID];
  j->n_counters++;
  return LM_OK;
}

lm_status lm_v3j_symbol(lm_v3j *j, const lm_v3j_record *r, size_t index, lm_diag *diag) {
  (void)index;
  void *more = lm_grow(j->symbols, &j->cap_symbols, j->n_symbols, sizeof *j->symbols);
  if (!more) return lm_oom(diag, j->path);
  j->symbols = more;
  struct symbol *s = &j->symbols[j->n_symbols];
  memset(s, 0, sizeof *s);
  s->has_id = lm_v3j_has(r, S_KERNEL);
  s->kernel_id = r->num[S_KERNEL];
  s->lds = lm_v3j_has(r, S_LDS) ? ceil(r->num[S_LDS] / LDS_GRANULE) * LDS_GRANULE : LM_NAN;
  s->vgpr = lm_v3j_has(r, S_VGPR) ? r->num[S_VGPR] : LM_NAN;
  s->agpr = lm_v3j_has(r, S_AGPR) ? r->num[S_AGPR] : LM_NAN;
  s->sgpr = lm_v3j_has(r, S_SGPR) ? r->num[S_SGPR] : LM_NAN;
  const char *name = lm_v3j_has(r, S_FORMATTED) ? r->text[S_FORMATTED - LM_V3J_TEXT0] : NULL;
  if (!name || !name[0]) name = lm_v3j_has(r, S_NAME) ? r->text[S_NAME - LM_V3J_TEXT0] : "";
  if (s->has_id && !(s->name = lm_strdup(name))) return lm_oom(diag, j->path);
  j->n_symbols++;
  return LM_OK;
}

static int cmp_counter(const void *x, const void *y) {
  double a = ((const struct counter *)x)->id, b = ((const struct counter *)y)->id;
  return (a > b) - (a < b);
}

/* The index of counter id in the sorted counters; 0 when it has none.
 * The counter after the last found is tried first (each entry lists its
 * counters in the same order). */
static int find_counter(lm_v3j *j, double id, size_t *index) {
  size_t g = j->guess;
  if (g < j->n_counters && j->counters[g].id == id) {
    *index = g;
    j->guess = g + 1;
    return 1;
  }
  struct counter key = {id, NULL};
  const struct counter *c = j->n_counters ? bsearch(&key, j->counters, j->n_counters, sizeof key, cmp_counter) : NULL;
  if (!c) return 0;
  *index = (size_t)(c - j->counters);
  j->guess = *index + 1;
  return 1;
}

static int cmp_key(const void *x, const void *y) {
  const struct key *a = x, *b = y;
  if (a->id != b->id) return (a->id > b->id) - (a->id < b->id);
  return (a->pos > b->pos) - (a->pos < b->pos);
}

/* The symbol of kernel id: kernel_symbols is indexed by kernel id, but
 * the entry's own kernel_id is checked, else the first with that id. */
static const struct symbol *find_symbol(const lm_v3j *j, double kernel_id) {
  if (kernel_id >= 0 && kernel_id < (double)j->n_symbols) {
    const struct symbol *s = &j->symbols[(size_t)kernel_id];
    if (s->has_id && s->kernel_id == kernel_id) return s;
  }
  size_t lo = 0, hi = j->n_by_id;
  while (lo < hi) { /* the first key whose id is not below kernel_id */
    size_t mid = lo + (hi - lo) / 2;
    if (j->by_id[mid].id < kernel_id)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo < j->n_by_id && j->by_id[lo].id == kernel_id ? &j->symbols[j->by_id[lo].pos] : NULL;
}

lm_status lm_v3j_section_end(lm_v3j *j, int section, lm_diag *diag) {
  if (j->done & section) return LM_OK;
  j->done |= section;
  if (section == LM_V3J_COUNTERS && j->n_counters) qsort(j->counters, j->n_counters, sizeof *j->counters, cmp_counter);
  if (section == LM_V3J_SYMBOLS && j->n_symbols) {
    if (!(j->by_id = lm_malloc(j->n_symbols * sizeof *j->by_id))) return lm_oom(diag, j->path);
    for (size_t i = 0; i < j->n_symbols; i++)
      if (j->symbols[i].has_id) j->by_id[j->n_by_id++] = (struct key){j->symbols[i].kernel_id, i};
    if (j->n_by_id) qsort(j->by_id, j->n_by_id, sizeof *j->by_id, cmp_key);
  }
  return LM_OK;
}

/* The dispatch_info path of a collection entry or trace record. */
static void info_where(char *where, size_t cap, size_t index, int trace) {
  if (trace)
    snprintf(where, cap, "buffer_records.kernel_dispatch[%zu].dispatch_info", index);
  else
    snprintf(where, cap, "callback_records.counter_collection[%zu].dispatch_data.dispatch_info", index);
}

/* The row of the dispatch id of the dispatch_info of collection entry or
 * trace record index: found (*found 1), added when add is set (*found 2)
 * or none (*found 0). */
static lm_status dispatch_row(lm_v3j *j, const lm_v3j_record *info, int add, size_t *row, int *found, size_t index,
                              int trace, lm_diag *diag) {
  lm_fold *t = j->fold->t;
  *found = 0;
  if (!lm_v3j_has(info, I_DISPATCH)) {
    char where[96];
    info_where(where, sizeof where, index, trace);
    return bad(j, "missing or not a number", where, ".dispatch_id", diag);
  }
  char text[40];
  const char *id = id_text(info->num[I_DISPATCH], text, sizeof text);
  if (lm_fold_find(t, id, row)) {
    *found = 1;
    return LM_OK;
  }
  if (!add) return LM_OK;
  int added = 0;
  lm_status st = lm_fold_row(t, id, row, &added, diag);
  if (st != LM_OK) return st;
  *found = 2;
  return LM_OK;
}

/* A new row's agent and kernel: GPU_ID, the kernel name and the kernel
 * symbol's facts. */
static lm_status resolve(lm_v3j *j, const struct pend_row *p, lm_diag *diag) {
  char where[96], key[40];
  int64_t node = 0;
  int known = (p->set >> I_AGENT) & 1;
  if (known && j->has_last_agent && p->agent == j->last_agent) {
    node = j->last_node;
  } else if (known && (known = lm_map_get(j->nodes, id_text(p->agent, key, sizeof key), &node)) != 0) {
    j->last_agent = p->agent;
    j->last_node = node;
    j->has_last_agent = 1;
  }
  if (!known) {
    info_where(where, sizeof where, p->index, p->trace);
    return bad(j, "not an agent of \"agents\"", where, ".agent_id", diag);
  }
  const struct symbol *s = (p->set >> I_KERNEL) & 1 ? find_symbol(j, p->kernel) : NULL;
  if (!s) {
    info_where(where, sizeof where, p->index, p->trace);
    return bad(j, (p->set >> I_KERNEL) & 1 ? "not a kernel of \"kernel_symbols\"" : "missing or not a number", where,
               ".kernel_id", diag);
  }
  lm_fold *t = j->fold->t;
  int32_t k;
  lm_status st = lm_fold_intern(t, s->name, &k, diag);
  if (st != LM_OK) return st;
  t->kernel[p->row] = k;
  t->facts[LM_V3_GPU][p->row] = (double)node;
  if (!isnan(s->lds)) t->facts[LM_V3_LDS][p->row] = s->lds;
  if (!isnan(s->vgpr)) t->facts[LM_V3_VGPR][p->row] = s->vgpr;
  if (!isnan(s->agpr)) t->facts[LM_V3_AGPR][p->row] = s->agpr;
  if (!isnan(s->sgpr)) t->facts[LM_V3_SGPR][p->row] = s->sgpr;
  return LM_OK;
}

/* x * y * z of the dimension whose x is field bit x; NaN when absent. */
static double volume(const lm_v3j_record *info, int x) {
  if (!lm_v3j_has(info, x) || !lm_v3j_has(info, x + 1) || !lm_v3j_has(info, x + 2)) return LM_NAN;
  return info->num[x] * info->num[x + 1] * info->num[x + 2];
}

/* A new row's facts from its dispatch_info, its agent and kernel now or,
 * while their sections are to come, when the process ends. */
static lm_status new_row(lm_v3j *j, const lm_v3j_record *info, size_t row, size_t index, int trace, lm_diag *diag) {
  lm_fold *t = j->fold->t;
  t->facts[LM_V3_GRID][row] = volume(info, I_GX);
  t->facts[LM_V3_WG][row] = volume(info, I_WX);
  if (lm_v3j_has(info, I_SCRATCH)) t->facts[LM_V3_SCRATCH][row] = info->num[I_SCRATCH];
  struct pend_row p = {
      row, index, info->num[I_AGENT], info->num[I_KERNEL], (int)(info->set & (1u << I_AGENT | 1u << I_KERNEL)), trace};
  if ((j->done & (LM_V3J_AGENTS | LM_V3J_SYMBOLS)) == (LM_V3J_AGENTS | LM_V3J_SYMBOLS)) return resolve(j, &p, diag);
  void *more = lm_grow(j->rows, &j->cap_rows, j->n_rows, sizeof *j->rows);
  if (!more) return lm_oom(diag, j->path);
  j->rows = more;
  j->rows[j->n_rows++] = p;
  return LM_OK;
}

void lm_v3j_entry_begin(lm_v3j *j) { j->n_sums = 0; }

lm_status lm_v3j_value(lm_v3j *j, const lm_v3j_record *r, size_t entry, size_t index, lm_diag *diag) {
  size_t counter = SIZE_MAX;
  int known = lm_v3j_has(r, R_COUNTER);
  double id = r->num[R_COUNTER];
  if (known && (j->done & LM_V3J_COUNTERS)) known = find_counter(j, id, &counter);
  if (!known || !lm_v3j_has(r, R_VALUE)) {
    char where[96];
    snprintf(where, sizeof where, "callback_records.counter_collection[%zu].records[%zu]", entry, index);
    return bad(j, known ? "not a number" : "not a counter of \"counters\"", where, known ? ".value" : ".counter_id",
               diag);
  }
  size_t k = 0;
  while (k < j->n_sums && j->sums[k].id != id) k++;
  if (k == j->n_sums) {
    void *more = lm_grow(j->sums, &j->cap_sums, j->n_sums, sizeof *j->sums);
    if (!more) return lm_oom(diag, j->path);
    j->sums = more;
    j->sums[j->n_sums++] = (struct sum){id, 0, counter, index};
  }
  j->sums[k].value += r->num[R_VALUE];
  return LM_OK;
}

lm_status lm_v3j_entry(lm_v3j *j, const lm_v3j_record *e, const lm_v3j_record *info, size_t index, lm_diag *diag) {
  char where[96];
  j->n_entries++;
  if (!lm_v3j_has(e, E_INFO)) {
    snprintf(where, sizeof where, "callback_records.counter_collection[%zu]", index);
    return bad(j, "missing", where, ".dispatch_data.dispatch_info", diag);
  }
  size_t row;
  int found;
  lm_status st = dispatch_row(j, info, 1, &row, &found, index, 0, diag);
  if (st == LM_OK && found == 2) st = new_row(j, info, row, index, 0, diag);
  if (st != LM_OK) return st;
  lm_fold *t = j->fold->t;
  if (isnan(t->facts[LM_V3_START][row]) && lm_v3j_has(e, E_START)) t->facts[LM_V3_START][row] = e->num[E_START];
  if (isnan(t->facts[LM_V3_END][row]) && lm_v3j_has(e, E_END)) t->facts[LM_V3_END][row] = e->num[E_END];
  for (size_t k = 0; k < j->n_sums && st == LM_OK; k++) {
    const struct sum *s = &j->sums[k];
    void *more;
    if (s->counter != SIZE_MAX) {
      st = lm_v3_fold_put(j->fold, j->counters[s->counter].name, row, s->value, diag);
    } else if (!(more = lm_grow(j->values, &j->cap_values, j->n_values, sizeof *j->values))) {
      st = lm_oom(diag, j->path);
    } else {
      j->values = more;
      j->values[j->n_values++] = (struct pend_value){row, index, s->first, s->id, s->value};
    }
  }
  return st;
}

/* One kernel trace record: the timestamps of its dispatch, a new row when
 * add is set (the process collected no counters). */
static lm_status apply_trace(lm_v3j *j, const lm_v3j_record *info, double start, double end, uint32_t set, size_t index,
                             int add, lm_diag *diag) {
  size_t row;
  int found;
  lm_status st = dispatch_row(j, info, add, &row, &found, index, 1, diag);
  if (st == LM_OK && found == 2) st = new_row(j, info, row, index, 1, diag);
  if (st != LM_OK || !found) return st;
  lm_fold *t = j->fold->t;
  if (isnan(t->facts[LM_V3_START][row]) && ((set >> T_START) & 1)) t->facts[LM_V3_START][row] = start;
  if (isnan(t->facts[LM_V3_END][row]) && ((set >> T_END) & 1)) t->facts[LM_V3_END][row] = end;
  return LM_OK;
}

lm_status lm_v3j_trace(lm_v3j *j, const lm_v3j_record *t, const lm_v3j_record *info, size_t index, lm_diag *diag) {
  if (!lm_v3j_has(info, I_DISPATCH)) {
    char where[96];
    info_where(where, sizeof where, index, 1);
    return bad(j, "missing or not a number", where, ".dispatch_id", diag);
  }
  if (j->done & LM_V3J_COLLECTION)
    return apply_trace(j, info, t->num[T_START], t->num[T_END], t->set, index, j->n_entries == 0, diag);
  void *more = lm_grow(j->traces, &j->cap_traces, j->n_traces, sizeof *j->traces);
  if (!more) return lm_oom(diag, j->path);
  j->traces = more;
  struct pend_trace *p = &j->traces[j->n_traces++];
  memset(&p->info, 0, sizeof p->info);
  memcpy(p->info.num, info->num, sizeof info->num);
  p->info.set = info->set;
  p->start = t->num[T_START];
  p->end = t->num[T_END];
  p->set = t->set;
  p->index = index;
  return LM_OK;
}

lm_status lm_v3j_process_end(lm_v3j *j, lm_diag *diag) {
  lm_status st = LM_OK;
  static const int sections[] = {LM_V3J_AGENTS, LM_V3J_COUNTERS, LM_V3J_SYMBOLS, LM_V3J_COLLECTION};
  for (size_t i = 0; i < LM_ARRAY_LEN(sections) && st == LM_OK; i++) st = lm_v3j_section_end(j, sections[i], diag);
  size_t n_rows = j->n_rows;
  j->n_rows = 0; /* rows added from here on resolve at once */
  for (size_t i = 0; i < n_rows && st == LM_OK; i++) st = resolve(j, &j->rows[i], diag);
  for (size_t i = 0; i < j->n_values && st == LM_OK; i++) {
    const struct pend_value *v = &j->values[i];
    size_t c;
    if (!find_counter(j, v->id, &c)) {
      char where[96];
      snprintf(where, sizeof where, "callback_records.counter_collection[%zu].records[%zu]", v->entry, v->record);
      st = bad(j, "not a counter of \"counters\"", where, ".counter_id", diag);
    } else {
      st = lm_v3_fold_put(j->fold, j->counters[c].name, v->row, v->value, diag);
    }
  }
  for (size_t i = 0; i < j->n_traces && st == LM_OK; i++) {
    const struct pend_trace *p = &j->traces[i];
    st = apply_trace(j, &p->info, p->start, p->end, p->set, p->index, j->n_entries == 0, diag);
  }
  clear_process(j);
  return st;
}
