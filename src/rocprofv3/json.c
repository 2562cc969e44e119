/*
 * json.c - rocprofv3's JSON output (--output-format json: <pid>_results.json)
 * folded like its CSV files. The document is {"rocprofiler-sdk-tool": [one
 * object per process]}; in each, "agents", "counters" (id -> name) and
 * "kernel_symbols" (kernel id -> name, registers, LDS) name what
 * "callback_records.counter_collection" (one entry per dispatch, one record
 * per counter instance, summed per counter as the CSV output sums them) and
 * "buffer_records.kernel_dispatch" (the kernel trace) refer to by id.
 * cJSON holds the whole document in memory, so a file over LM_V3_JSON_MAX
 * bytes is refused with a message that names the formats without a limit.
 * Errors name the field by its path in the document.
 */
#include <cjson/cJSON.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rocprofv3/rocprofv3_private.h"

#define LM_V3_JSON_MAX ((size_t)512 << 20)
enum { LDS_GRANULE = 512 }; /* the CSV's LDS_Block_Size rounds up to this */

int lm_v3_json_detect(const char *path) {
  int fd = -1;
  char head[256];
  if (lm_open_read(path, 0, &fd, NULL, NULL) != LM_OK) return 0;
  ssize_t n = read(fd, head, sizeof head - 1);
  close(fd);
  if (n <= 0) return 0;
  head[n] = 0;
  const char *p = head + strspn(head, " \t\r\n");
  if (*p++ != '{') return 0;
  p += strspn(p, " \t\r\n");
  return strncmp(p, "\"rocprofiler-sdk-tool\"", 22) == 0;
}

/* A counter of "counters": its id and name. */
struct counter {
  double id;
  const char *name;
};

/* What one process object's records refer to, and the path prefix its
 * errors need. */
typedef struct doc {
  const char *path;
  char prefix[48];          /* "" or "rocprofiler-sdk-tool[p]." */
  struct counter *counters; /* sorted by id */
  size_t n_counters;
  lm_map *agents; /* agent handle -> node id */
  const cJSON *symbols;
} doc;

/* An error at field where + rest (a path in the process object). */
static lm_status bad(const doc *d, const char *what, const char *where, const char *rest, lm_diag *diag) {
  char field[128];
  snprintf(field, sizeof field, "%s%s%s", d->prefix, where, rest);
  return lm_fail_at(diag, LM_EPARSE, d->path, 0, field, "%s", what);
}

/* A number member of obj, or of its {"handle": n} member. */
static int num(const cJSON *obj, const char *key, double *v) {
  const cJSON *m = cJSON_GetObjectItemCaseSensitive(obj, key);
  if (cJSON_IsObject(m)) m = cJSON_GetObjectItemCaseSensitive(m, "handle");
  if (!cJSON_IsNumber(m)) return 0;
  *v = m->valuedouble;
  return 1;
}

static const char *text(const cJSON *obj, const char *key) {
  const cJSON *m = cJSON_GetObjectItemCaseSensitive(obj, key);
  return cJSON_IsString(m) ? m->valuestring : NULL;
}

/* x * y * z of a {"x", "y", "z"} member; NaN when absent. */
static double volume(const cJSON *obj, const char *key) {
  const cJSON *m = cJSON_GetObjectItemCaseSensitive(obj, key);
  double x, y, z;
  if (!num(m, "x", &x) || !num(m, "y", &y) || !num(m, "z", &z)) return LM_NAN;
  return x * y * z;
}

static lm_status id_key(lm_map *map, double id, int64_t value, const char *path, lm_diag *diag) {
  char key[32];
  snprintf(key, sizeof key, "%.0f", id);
  return lm_map_put(map, key, value) == LM_OK ? LM_OK : lm_oom(diag, path);
}

static int id_get(const lm_map *map, double id, int64_t *value) {
  char key[32];
  snprintf(key, sizeof key, "%.0f", id);
  return lm_map_get(map, key, value);
}

/* The GPU agents (type 2) of the first process read, with the sysinfo of
 * the first; every agent's handle -> node id into d->agents. */
static lm_status read_agents(doc *d, const cJSON *proc, lm_v3_agents *a, lm_diag *diag) {
  static const char *const fields[][2] = {{"cu_count", "cu_per_gpu"},
                                          {"simd_per_cu", "simd_per_cu"},
                                          {"wave_front_size", "wave_size"},
                                          {"workgroup_max_size", "workgroup_max_size"},
                                          {"max_waves_per_cu", "max_waves_per_cu"},
                                          {"max_engine_clk_fcompute", "max_sclk"},
                                          {"max_engine_clk_fcompute", "cur_sclk"},
                                          {"num_xcc", "num_xcd"}};
  const cJSON *agents = cJSON_GetObjectItemCaseSensitive(proc, "agents");
  int keep = a->n == 0;
  size_t i = 0;
  const cJSON *ag;
  lm_status st = LM_OK;
  cJSON_ArrayForEach(ag, agents) {
    double handle, node, type;
    if (!num(ag, "id", &handle) || !num(ag, "node_id", &node) || !num(ag, "type", &type)) {
      char where[32];
      snprintf(where, sizeof where, "agents[%zu]", i);
      return bad(d, "an agent needs id.handle, node_id and type", where, "", diag);
    }
    if ((st = id_key(d->agents, handle, (int64_t)node, d->path, diag)) != LM_OK) return st;
    i++;
    if (type != 2 || !keep || a->n == LM_V3_MAX_AGENTS) continue;
    a->where = d->path;
    a->node[a->n++] = node;
    if (a->n > 1) continue;
    const char *name = text(ag, "name");
    if (name) snprintf(a->arch, sizeof a->arch, "%.*s", (int)strcspn(name, ":"), name);
    st = lm_v3_agents_keep(a, "gpu_model", text(ag, "product_name"), d->path, diag);
    for (size_t f = 0; f < LM_ARRAY_LEN(fields) && st == LM_OK; f++) {
      double v;
      char s[32];
      if (!num(ag, fields[f][0], &v) || v <= 0) continue;
      snprintf(s, sizeof s, "%.0f", v);
      st = lm_v3_agents_keep(a, fields[f][1], s, d->path, diag);
    }
    double arrays, per;
    if (st == LM_OK && num(ag, "array_count", &arrays) && num(ag, "simd_arrays_per_engine", &per) && arrays > 0 &&
        per > 0) {
      char s[32];
      snprintf(s, sizeof s, "%.0f", arrays / per);
      st = lm_v3_agents_keep(a, "se_per_gpu", s, d->path, diag);
    }
    if (st != LM_OK) return st;
  }
  return LM_OK;
}

static int cmp_counter(const void *x, const void *y) {
  double a = ((const struct counter *)x)->id, b = ((const struct counter *)y)->id;
  return (a > b) - (a < b);
}

/* The counters' names, sorted by id. */
static lm_status read_counters(doc *d, const cJSON *proc, lm_diag *diag) {
  const cJSON *list = cJSON_GetObjectItemCaseSensitive(proc, "counters");
  size_t n = (size_t)cJSON_GetArraySize(list), i = 0;
  d->counters = lm_calloc(n + 1, sizeof *d->counters);
  if (!d->counters) return lm_oom(diag, d->path);
  const cJSON *c;
  cJSON_ArrayForEach(c, list) {
    double id;
    const char *name = text(c, "name");
    if (!num(c, "id", &id) || !name || !name[0]) {
      char where[32];
      snprintf(where, sizeof where, "counters[%zu]", i);
      return bad(d, "a counter needs id.handle and a name", where, "", diag);
    }
    d->counters[d->n_counters].id = id;
    d->counters[d->n_counters++].name = name;
    i++;
  }
  if (d->n_counters) qsort(d->counters, d->n_counters, sizeof *d->counters, cmp_counter);
  return LM_OK;
}

/* The counter of id, or NULL. */
static const struct counter *find_counter(const doc *d, double id) {
  struct counter key = {id, NULL};
  return d->n_counters ? bsearch(&key, d->counters, d->n_counters, sizeof key, cmp_counter) : NULL;
}

/* The kernel symbol of kernel id: kernel_symbols is indexed by kernel id,
 * but the entry's own kernel_id is checked. */
static const cJSON *symbol(const doc *d, double kernel_id) {
  const cJSON *s = kernel_id >= 0 && kernel_id < 1e9 ? cJSON_GetArrayItem(d->symbols, (int)kernel_id) : NULL;
  double id;
  if (s && num(s, "kernel_id", &id) && id == kernel_id) return s;
  cJSON_ArrayForEach(s, d->symbols) if (num(s, "kernel_id", &id) && id == kernel_id) return s;
  return NULL;
}

/* The row of a dispatch's dispatch_info: found, added (add set) or none. */
static lm_status dispatch_row(lm_v3_fold *fold, const doc *d, const cJSON *info, int add, size_t *row, int *found,
                              const char *where, lm_diag *diag) {
  double id;
  *found = 0;
  if (!num(info, "dispatch_id", &id)) return bad(d, "missing or not a number", where, ".dispatch_id", diag);
  char text_id[32];
  snprintf(text_id, sizeof text_id, "%.0f", id);
  const char *key = lm_fold_key(fold->t, text_id, diag);
  if (!key) return LM_ENOMEM;
  int64_t r;
  if (lm_map_get(fold->t->ids, key, &r)) {
    *row = (size_t)r;
    *found = 1;
    return LM_OK;
  }
  if (!add) return LM_OK;
  lm_status st = lm_fold_add_row(fold->t, row, diag);
  if (st != LM_OK) return st;
  if (lm_map_put(fold->t->ids, key, (int64_t)*row) != LM_OK) return lm_oom(diag, fold->t->path);
  *found = 2;
  return LM_OK;
}

/* A new row's facts from dispatch_info and its kernel symbol. */
static lm_status dispatch_facts(lm_v3_fold *fold, const doc *d, const cJSON *info, size_t row, const char *where,
                                lm_diag *diag) {
  double agent, kernel_id;
  int64_t node;
  if (!num(info, "agent_id", &agent) || !id_get(d->agents, agent, &node))
    return bad(d, "not an agent of \"agents\"", where, ".agent_id", diag);
  if (!num(info, "kernel_id", &kernel_id)) return bad(d, "missing or not a number", where, ".kernel_id", diag);
  const cJSON *sym = symbol(d, kernel_id);
  if (!sym) return bad(d, "not a kernel of \"kernel_symbols\"", where, ".kernel_id", diag);
  const char *name = text(sym, "formatted_kernel_name");
  if (!name || !name[0]) name = text(sym, "kernel_name");
  int32_t k;
  lm_status st = lm_fold_intern(fold->t, name ? name : "", &k, diag);
  if (st != LM_OK) return st;
  fold->t->kernel[row] = k;
  double v;
  fold->t->facts[LM_V3_GPU][row] = (double)node;
  fold->t->facts[LM_V3_GRID][row] = volume(info, "grid_size");
  fold->t->facts[LM_V3_WG][row] = volume(info, "workgroup_size");
  if (num(sym, "group_segment_size", &v)) fold->t->facts[LM_V3_LDS][row] = ceil(v / LDS_GRANULE) * LDS_GRANULE;
  if (num(info, "private_segment_size", &v)) fold->t->facts[LM_V3_SCRATCH][row] = v;
  if (num(sym, "arch_vgpr_count", &v)) fold->t->facts[LM_V3_VGPR][row] = v;
  if (num(sym, "accum_vgpr_count", &v)) fold->t->facts[LM_V3_AGPR][row] = v;
  if (num(sym, "sgpr_count", &v)) fold->t->facts[LM_V3_SGPR][row] = v;
  return LM_OK;
}

/* One counter_collection entry: its dispatch row and its records, summed
 * per counter id in sums (n_ids distinct ids so far). */
static lm_status fold_collection(lm_v3_fold *fold, const doc *d, const cJSON *entry, size_t i, double *sums,
                                 const struct counter **ids, lm_diag *diag) {
  char where[96];
  snprintf(where, sizeof where, "callback_records.counter_collection[%zu]", i);
  const cJSON *data = cJSON_GetObjectItemCaseSensitive(entry, "dispatch_data");
  const cJSON *info = cJSON_GetObjectItemCaseSensitive(data, "dispatch_info");
  if (!cJSON_IsObject(info)) return bad(d, "missing", where, ".dispatch_data.dispatch_info", diag);
  snprintf(where, sizeof where, "callback_records.counter_collection[%zu].dispatch_data.dispatch_info", i);
  size_t row;
  int found;
  lm_status st = dispatch_row(fold, d, info, 1, &row, &found, where, diag);
  if (st != LM_OK) return st;
  if (found == 2 && (st = dispatch_facts(fold, d, info, row, where, diag)) != LM_OK) return st;
  double t;
  if (isnan(fold->t->facts[LM_V3_START][row]) && num(data, "start_timestamp", &t)) fold->t->facts[LM_V3_START][row] = t;
  if (isnan(fold->t->facts[LM_V3_END][row]) && num(data, "end_timestamp", &t)) fold->t->facts[LM_V3_END][row] = t;
  size_t n_ids = 0, j = 0;
  const cJSON *rec;
  cJSON_ArrayForEach(rec, cJSON_GetObjectItemCaseSensitive(entry, "records")) {
    double cid, v;
    const struct counter *index = NULL;
    int known = num(rec, "counter_id", &cid) && (index = find_counter(d, cid)) != NULL;
    if (!known || !num(rec, "value", &v)) {
      snprintf(where, sizeof where, "callback_records.counter_collection[%zu].records[%zu]", i, j);
      return bad(d, known ? "not a number" : "not a counter of \"counters\"", where, known ? ".value" : ".counter_id",
                 diag);
    }
    size_t k = 0;
    while (k < n_ids && ids[k] != index) k++;
    if (k == n_ids) {
      ids[n_ids++] = index;
      sums[k] = 0;
    }
    sums[k] += v;
    j++;
  }
  for (size_t k = 0; k < n_ids && st == LM_OK; k++) st = lm_v3_fold_put(fold, ids[k]->name, row, sums[k], diag);
  return st;
}

/* The kernel trace: timestamps of the dispatches the collection has, or
 * new dispatches when the process collected no counters. */
static lm_status fold_trace(lm_v3_fold *fold, const doc *d, const cJSON *list, int add, lm_diag *diag) {
  size_t i = 0;
  const cJSON *rec;
  cJSON_ArrayForEach(rec, list) {
    char where[80];
    snprintf(where, sizeof where, "buffer_records.kernel_dispatch[%zu].dispatch_info", i);
    const cJSON *info = cJSON_GetObjectItemCaseSensitive(rec, "dispatch_info");
    size_t row;
    int found;
    lm_status st = dispatch_row(fold, d, info, add, &row, &found, where, diag);
    if (st == LM_OK && found == 2) st = dispatch_facts(fold, d, info, row, where, diag);
    if (st != LM_OK) return st;
    double t;
    if (found && isnan(fold->t->facts[LM_V3_START][row]) && num(rec, "start_timestamp", &t))
      fold->t->facts[LM_V3_START][row] = t;
    if (found && isnan(fold->t->facts[LM_V3_END][row]) && num(rec, "end_timestamp", &t)) fold->t->facts[LM_V3_END][row] = t;
    i++;
  }
  return LM_OK;
}

/* One process object into the fold. */
static lm_status read_process(lm_v3_fold *fold, doc *d, const cJSON *proc, lm_v3_agents *agents, lm_diag *diag) {
  double *sums = NULL;
  const struct counter **ids = NULL;
  lm_status st;
  d->agents = lm_map_new();
  if (!d->agents) {
    st = lm_oom(diag, d->path);
    goto done;
  }
  d->symbols = cJSON_GetObjectItemCaseSensitive(proc, "kernel_symbols");
  if ((st = read_agents(d, proc, agents, diag)) != LM_OK || (st = read_counters(d, proc, diag)) != LM_OK) goto done;
  sums = lm_calloc(d->n_counters + 1, sizeof *sums);
  ids = lm_calloc(d->n_counters + 1, sizeof *ids);
  if (!sums || !ids) {
    st = lm_oom(diag, d->path);
    goto done;
  }
  const cJSON *cb = cJSON_GetObjectItemCaseSensitive(proc, "callback_records");
  const cJSON *collection = cJSON_GetObjectItemCaseSensitive(cb, "counter_collection");
  size_t i = 0;
  const cJSON *entry;
  cJSON_ArrayForEach(entry, collection) {
    if ((st = fold_collection(fold, d, entry, i++, sums, ids, diag)) != LM_OK) goto done;
  }
  const cJSON *buf = cJSON_GetObjectItemCaseSensitive(proc, "buffer_records");
  st = fold_trace(fold, d, cJSON_GetObjectItemCaseSensitive(buf, "kernel_dispatch"), i == 0, diag);
done:
  lm_free(sums);
  lm_free(ids);
  lm_free(d->counters);
  lm_map_free(d->agents);
  d->counters = NULL;
  d->n_counters = 0;
  return st;
}

/* The line of byte offset `at` in text. */
static long line_of(const char *text, size_t at) {
  long line = 1;
  for (size_t i = 0; i < at; i++) line += text[i] == '\n';
  return line;
}

lm_status lm_v3_json_read(const char *path, lm_v3_fold *fold, lm_v3_agents *agents, int *group, lm_diag *diag) {
  int fd = -1;
  size_t size = 0, len = 0;
  char *text = NULL;
  cJSON *root = NULL;
  lm_status st = lm_open_read(path, 0, &fd, &size, diag);
  if (st != LM_OK) return st;
  close(fd);
  if (size > LM_V3_JSON_MAX) {
    return lm_fail(diag, LM_ELIMIT, path,
                   "%zu MiB of JSON: the JSON reader holds the document in memory and reads at most %zu MiB; "
                   "write rocprofv3's csv or rocpd output (--output-format csv or rocpd) for larger runs",
                   size >> 20, LM_V3_JSON_MAX >> 20);
  }
  if ((st = lm_read_file_any(path, LM_V3_JSON_MAX, &text, &len, diag)) != LM_OK) return st;
  const char *end = NULL;
  root = cJSON_ParseWithLengthOpts(text, len, &end, 0);
  if (!root) {
    size_t at = end && end >= text && end <= text + len ? (size_t)(end - text) : len;
    st = lm_fail_at(diag, LM_EPARSE, path, line_of(text, at), NULL, "not valid JSON at byte %zu%s", at,
                    at + 1 >= len ? " (the file ends early: truncated?)" : "");
    goto done;
  }
  const cJSON *procs = cJSON_GetObjectItemCaseSensitive(root, "rocprofiler-sdk-tool");
  if (!cJSON_IsArray(procs) && !cJSON_IsObject(procs)) {
    st = lm_fail_at(diag, LM_EPARSE, path, 0, "rocprofiler-sdk-tool", "missing: not rocprofv3's JSON output");
    goto done;
  }
  doc d = {.path = path};
  size_t p = 0;
  const cJSON *proc = procs;
  if (cJSON_IsArray(procs)) proc = procs->child;
  fold->t->has_last = 0;
  for (; proc && st == LM_OK; proc = cJSON_IsArray(procs) ? proc->next : NULL, p++) {
    d.prefix[0] = 0;
    if (p) snprintf(d.prefix, sizeof d.prefix, "rocprofiler-sdk-tool[%zu].", p);
    fold->t->group = (*group)++;
    st = read_process(fold, &d, proc, agents, diag);
  }
done:
  cJSON_Delete(root);
  lm_free(text);
  return st;
}
