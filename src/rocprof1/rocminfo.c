/*
 * rocminfo.c - the GPU agents of rocminfo's text, which rocprof (v1) saves
 * beside its results. The text is a list of "Agent N" blocks of
 * "  Key:   value" lines; the agent's own keys are indented by two spaces
 * (deeper ones belong to its caches, pools and ISAs, except the cache
 * sizes under "Cache Info"). Numbers are written "8192(0x2000) KB": the
 * leading decimal is the value.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rocprof1/rocprof1.h"

/* rocminfo key (at indent 2, or 4 for the caches) -> sysinfo field. */
static const struct {
  const char *key;
  int indent;
  const char *field;
} map[] = {{"Marketing Name", 2, "gpu_model"},
           {"Compute Unit", 2, "cu_per_gpu"},
           {"SIMDs per CU", 2, "simd_per_cu"},
           {"Shader Engines", 2, "se_per_gpu"},
           {"Wavefront Size", 2, "wave_size"},
           {"Workgroup Max Size", 2, "workgroup_max_size"},
           {"Max Waves Per CU", 2, "max_waves_per_cu"},
           {"Max Clock Freq. (MHz)", 2, "max_sclk"},
           {"Max Clock Freq. (MHz)", 2, "cur_sclk"},
           {"L1", 4, "gpu_l1"},
           {"L2", 4, "gpu_l2"}};

/* One agent as it is read. */
typedef struct agent {
  int gpu;
  double node;
  int has_node;
  lm_rocminfo fields; /* keys, values and arch only */
} agent;

/* The value kept for a field: text for the model, else the leading
 * number ("8192(0x2000) KB" -> "8192"); 0 when there is none. */
static int value_of(const char *field, const char *v, size_t n, char *out, size_t cap) {
  if (strcmp(field, "gpu_model") == 0) return n > 0 && (size_t)snprintf(out, cap, "%.*s", (int)n, v) < cap;
  size_t d = 0;
  while (d < n && d + 1 < cap && v[d] >= '0' && v[d] <= '9') d++;
  if (d == 0) return 0;
  memcpy(out, v, d);
  out[d] = '\0';
  return 1;
}

static void keep(agent *a, int indent, const char *key, size_t nk, const char *v, size_t nv) {
  if (indent == 2 && nk == 4 && strncmp(key, "Name", 4) == 0 && !a->fields.arch[0]) {
    size_t k = 0; /* "gfx90a" of "gfx90a" or "gfx90a:sramecc+:xnack-" */
    while (k < nv && k + 1 < sizeof a->fields.arch && v[k] != ':' && v[k] != ' ') k++;
    memcpy(a->fields.arch, v, k);
    a->fields.arch[k] = '\0';
    return;
  }
  if (indent == 2 && nk == 11 && strncmp(key, "Device Type", 11) == 0) {
    a->gpu = nv >= 3 && strncmp(v, "GPU", 3) == 0;
    return;
  }
  if (indent == 2 && nk == 4 && strncmp(key, "Node", 4) == 0) {
    a->node = atof(v);
    a->has_node = 1;
    return;
  }
  for (size_t i = 0; i < LM_ARRAY_LEN(map); i++) {
    if (map[i].indent != indent || strlen(map[i].key) != nk || strncmp(map[i].key, key, nk) != 0) continue;
    lm_rocminfo *f = &a->fields;
    size_t k = 0;
    while (k < f->n_fields && strcmp(f->keys[k], map[i].field) != 0) k++;
    if (k < f->n_fields || k == LM_ROCMINFO_FIELDS) continue; /* the first wins */
    if (!value_of(map[i].field, v, nv, f->values[k], sizeof f->values[k])) continue;
    snprintf(f->keys[k], sizeof f->keys[k], "%s", map[i].field);
    f->n_fields++;
  }
}

/* The end of an agent's block: a GPU is counted, the first one kept. */
static void finish(agent *a, lm_rocminfo *info) {
  if (!a->gpu) return;
  if (info->n_gpus == 0) {
    memcpy(info->arch, a->fields.arch, sizeof info->arch);
    info->n_fields = a->fields.n_fields;
    memcpy(info->keys, a->fields.keys, sizeof info->keys);
    memcpy(info->values, a->fields.values, sizeof info->values);
  }
  if (info->n_gpus == LM_ROCMINFO_GPUS) return;
  info->nodes[info->n_gpus] = a->has_node ? a->node : (double)info->n_gpus;
  info->n_gpus++;
}

int lm_rocprof1_rocminfo(const char *text, size_t len, lm_rocminfo *info) {
  memset(info, 0, sizeof *info);
  const char *end = text + len;
  int seen = 0, in_agent = 0;
  agent *a = lm_calloc(1, sizeof *a);
  if (!a) return 0;
  for (const char *p = text; p < end;) {
    const char *nl = memchr(p, '\n', (size_t)(end - p));
    const char *e = nl ? nl : end;
    const char *line = p;
    p = nl ? nl + 1 : end;
    while (e > line && (e[-1] == '\r' || e[-1] == ' ' || e[-1] == '\t')) e--;
    int indent = 0;
    while (line + indent < e && line[indent] == ' ') indent++;
    const char *s = line + indent;
    size_t n = (size_t)(e - s);
    if (n >= 10 && strncmp(s, "HSA Agents", 10) == 0) seen = 1;
    if (indent == 0 && n > 6 && strncmp(s, "Agent ", 6) == 0 && s[6] >= '0' && s[6] <= '9') {
      if (in_agent) finish(a, info);
      memset(a, 0, sizeof *a);
      in_agent = 1;
      continue;
    }
    const char *colon = memchr(s, ':', n);
    if (!in_agent || !colon) continue;
    const char *k_end = colon;
    while (k_end > s && k_end[-1] == ' ') k_end--;
    const char *v = colon + 1;
    while (v < e && (*v == ' ' || *v == ':' || *v == '\t')) v++;
    keep(a, indent, s, (size_t)(k_end - s), v, (size_t)(e - v));
  }
  if (in_agent) finish(a, info);
  lm_free(a);
  return seen;
}
