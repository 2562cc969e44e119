/*
 * policy.c - the vendor-neutral decisions made inside the profiled
 * application: is this dispatch selected (kernel name, instance, dispatch
 * id, GPU, region), and which counter set does it get (the run's set in
 * application replay, the next set of the kernel's cycle in instance
 * cycling, or an assigned one in a run that fills gaps). Backends only
 * translate vendor callbacks into these calls.
 *
 * Kernel-name filters are evaluated once per kernel symbol, so the
 * per-dispatch path is a table lookup, a counter increment and a few
 * comparisons under one short lock.
 */
#define PCRE2_CODE_UNIT_WIDTH 8
#include <errno.h>
#include <pcre2.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "profile/profile.h"

/* ------------------------------------------------------------ the config */

static void put_escaped(FILE *f, const char *s) {
  for (; *s; s++) {
    if (*s == '\n') fputs("\\n", f);
    else if (*s == '\\') fputs("\\\\", f);
    else fputc(*s, f);
  }
}

lm_status lm_tool_config_write(const lm_tool_config *c, const char *path, lm_diag *diag) {
  FILE *f = fopen(path, "w");
  if (!f) return lm_diag_set(diag, LM_EIO, path, 0, 0, NULL, "cannot write: %s", strerror(errno));
  fprintf(f, "lumen-tool-config 1\narch %s\nmode %d\npass %d\nkey_grid %d\nsets %d\n", c->arch,
          c->mode, c->pass, c->key_grid, c->n_sets);
  for (int s = 0; s < c->n_sets; s++) {
    fprintf(f, "set %d %s", s, c->set_accumulate[s] ? c->set_accumulate[s] : "-");
    for (char **n = c->set_counters[s]; n && *n; n++) fprintf(f, " %s", *n);
    fputc('\n', f);
  }
  for (size_t i = 0; i < c->n_kernels; i++) {
    fputs("kernel ", f);
    put_escaped(f, c->kernels[i]);
    fputc('\n', f);
  }
  if (c->instance) fprintf(f, "instance %s\n", c->instance);
  if (c->dispatch) fprintf(f, "dispatch %s\n", c->dispatch);
  if (c->gpu) fprintf(f, "gpu %s\n", c->gpu);
  for (size_t i = 0; i < c->n_regions; i++) {
    fputs("region ", f);
    put_escaped(f, c->regions[i]);
    fputc('\n', f);
  }
  for (size_t i = 0; i < c->n_assign; i++) {
    fprintf(f, "assign %lld %d ", (long long)c->assign_instance[i], c->assign_set[i]);
    put_escaped(f, c->assign_key[i]);
    fputc('\n', f);
  }
  fprintf(f, "telemetry %s\noutput ", c->telemetry[0] ? c->telemetry : "auto");
  put_escaped(f, c->output);
  fputc('\n', f);
  if (fclose(f) != 0)
    return lm_diag_set(diag, LM_EIO, path, 0, 0, NULL, "cannot write: %s", strerror(errno));
  return LM_OK;
}

static char *unescape(const char *s) {
  char *out = malloc(strlen(s) + 1), *o = out;
  if (!out) return NULL;
  for (; *s; s++) {
    if (*s == '\\' && s[1] == 'n') *o++ = '\n', s++;
    else if (*s == '\\' && s[1] == '\\') *o++ = '\\', s++;
    else *o++ = *s;
  }
  *o = '\0';
  return out;
}

static int push_str(char ***list, size_t *n, const char *s) {
  char **grown = realloc(*list, (*n + 2) * sizeof *grown);
  if (!grown) return 0;
  *list = grown;
  grown[*n] = unescape(s);
  if (!grown[*n]) return 0;
  grown[++*n] = NULL;
  return 1;
}

void lm_tool_config_fini(lm_tool_config *c) {
  for (int s = 0; c->set_counters && s < c->n_sets; s++) {
    for (char **n = c->set_counters[s]; n && *n; n++) free(*n);
    free(c->set_counters[s]);
    free(c->set_accumulate[s]);
  }
  free(c->set_counters);
  free(c->set_accumulate);
  for (size_t i = 0; i < c->n_kernels; i++) free(c->kernels[i]);
  free(c->kernels);
  for (size_t i = 0; i < c->n_regions; i++) free(c->regions[i]);
  free(c->regions);
  for (size_t i = 0; i < c->n_assign; i++) free(c->assign_key[i]);
  free(c->assign_key);
  free(c->assign_instance);
  free(c->assign_set);
  free(c->instance);
  free(c->dispatch);
  free(c->gpu);
  memset(c, 0, sizeof *c);
}

lm_status lm_tool_config_read(const char *path, lm_tool_config *c, lm_diag *diag) {
  memset(c, 0, sizeof *c);
  FILE *f = fopen(path, "r");
  if (!f) return lm_diag_set(diag, LM_EIO, path, 0, 0, NULL, "cannot read: %s", strerror(errno));
  char *line = NULL;
  size_t cap = 0;
  ssize_t len;
  long lineno = 0;
  lm_status st = LM_OK;
  while ((len = getline(&line, &cap, f)) > 0) {
    lineno++;
    if (line[len - 1] == '\n') line[--len] = '\0';
    char *sp = strchr(line, ' ');
    const char *arg = sp ? sp + 1 : "";
    if (sp) *sp = '\0';
    const char *key = line;
    if (strcmp(key, "lumen-tool-config") == 0) continue;
    if (strcmp(key, "arch") == 0) snprintf(c->arch, sizeof c->arch, "%s", arg);
    else if (strcmp(key, "mode") == 0) c->mode = atoi(arg);
    else if (strcmp(key, "pass") == 0) c->pass = atoi(arg);
    else if (strcmp(key, "key_grid") == 0) c->key_grid = atoi(arg);
    else if (strcmp(key, "sets") == 0) {
      c->n_sets = atoi(arg);
      if (c->n_sets < 0 || c->n_sets > 4096) goto bad;
      c->set_counters = calloc((size_t)c->n_sets + 1, sizeof *c->set_counters);
      c->set_accumulate = calloc((size_t)c->n_sets + 1, sizeof *c->set_accumulate);
      if (!c->set_counters || !c->set_accumulate) goto nomem;
    } else if (strcmp(key, "set") == 0) {
      char *copy = strdup(arg), *save = NULL;
      if (!copy) goto nomem;
      char *tok = strtok_r(copy, " ", &save);
      int s = tok ? atoi(tok) : -1;
      if (s < 0 || s >= c->n_sets || !c->set_counters) {
        free(copy);
        goto bad;
      }
      tok = strtok_r(NULL, " ", &save);
      if (tok && strcmp(tok, "-") != 0) c->set_accumulate[s] = strdup(tok);
      size_t n = 0;
      while ((tok = strtok_r(NULL, " ", &save)) != NULL)
        if (!push_str(&c->set_counters[s], &n, tok)) {
          free(copy);
          goto nomem;
        }
      free(copy);
    } else if (strcmp(key, "kernel") == 0) {
      if (!push_str(&c->kernels, &c->n_kernels, arg)) goto nomem;
    } else if (strcmp(key, "region") == 0) {
      if (!push_str(&c->regions, &c->n_regions, arg)) goto nomem;
    } else if (strcmp(key, "instance") == 0) c->instance = strdup(arg);
    else if (strcmp(key, "dispatch") == 0) c->dispatch = strdup(arg);
    else if (strcmp(key, "gpu") == 0) c->gpu = strdup(arg);
    else if (strcmp(key, "assign") == 0) {
      long long inst;
      int set, off = 0;
      if (sscanf(arg, "%lld %d %n", &inst, &set, &off) < 2) goto bad;
      size_t n = c->n_assign;
      char **keys = realloc(c->assign_key, (n + 1) * sizeof *keys);
      if (keys) c->assign_key = keys;
      int64_t *insts = realloc(c->assign_instance, (n + 1) * sizeof *insts);
      if (insts) c->assign_instance = insts;
      int *sets = realloc(c->assign_set, (n + 1) * sizeof *sets);
      if (sets) c->assign_set = sets;
      if (!keys || !insts || !sets) goto nomem;
      c->assign_key[n] = unescape(arg + off);
      c->assign_instance[n] = inst;
      c->assign_set[n] = set;
      c->n_assign++;
    } else if (strcmp(key, "telemetry") == 0) snprintf(c->telemetry, sizeof c->telemetry, "%s", arg);
    else if (strcmp(key, "output") == 0) {
      char *o = unescape(arg);
      if (!o) goto nomem;
      snprintf(c->output, sizeof c->output, "%s", o);
      free(o);
    } else {
      goto bad;
    }
  }
  goto done;
bad:
  st = lm_diag_set(diag, LM_EPARSE, path, lineno, 0, NULL, "not a lumen tool configuration line");
  goto done;
nomem:
  st = lm_diag_set(diag, LM_ENOMEM, path, lineno, 0, NULL, "out of memory");
done:
  free(line);
  fclose(f);
  if (st != LM_OK) lm_tool_config_fini(c);
  return st;
}

/* ------------------------------------------------------------ the policy */

/* An id filter: no list given selects everything. */
static int spec_has(const lm_idset *s, int64_t v) { return !s->n || lm_idset_has(s, v); }

typedef struct kstate {
  int selected_by_name;
  int64_t instances;
} kstate;

#define MAX_DEPTH 64

typedef struct tstack {
  unsigned long tid;
  int depth;
  int ids[MAX_DEPTH];
} tstack;

struct lm_policy {
  const lm_tool_config *cfg;
  pthread_mutex_t lock;
  pcre2_code **include, **exclude;
  size_t n_include, n_exclude;
  lm_idset instance, dispatch, gpu;
  kstate *kernels;
  size_t n_kernels, cap_kernels;
  lm_map *kernel_index; /* kernel id (decimal) -> index in kernels */
  lm_map *selected;     /* cycling key -> selected dispatches so far */
  char **region_names;
  int n_regions;
  int *wanted_regions; /* region ids of -r names, resolved as they appear */
  tstack *stacks;
  size_t n_stacks, cap_stacks;
  uint64_t *range_ids;
  int *range_regions;
  size_t n_ranges, cap_ranges;
};

lm_status lm_policy_new(const lm_tool_config *cfg, lm_policy **out, lm_diag *diag) {
  lm_policy *p = calloc(1, sizeof *p);
  *out = NULL;
  if (!p) return lm_diag_set(diag, LM_ENOMEM, NULL, 0, 0, NULL, "out of memory");
  p->cfg = cfg;
  pthread_mutex_init(&p->lock, NULL);
  p->include = calloc(cfg->n_kernels + 1, sizeof *p->include);
  p->exclude = calloc(cfg->n_kernels + 1, sizeof *p->exclude);
  if (!p->include || !p->exclude) goto nomem;
  for (size_t i = 0; i < cfg->n_kernels; i++) {
    const char *pat = cfg->kernels[i];
    int excl = pat[0] == '!';
    int err;
    PCRE2_SIZE off;
    pcre2_code *re = pcre2_compile((PCRE2_SPTR)(pat + excl), PCRE2_ZERO_TERMINATED, PCRE2_UTF,
                                   &err, &off, NULL);
    if (!re) {
      PCRE2_UCHAR msg[256];
      pcre2_get_error_message(err, msg, sizeof msg);
      lm_policy_free(p);
      return lm_diag_set(diag, LM_EINVAL, NULL, 0, 0, NULL, "-k '%s': %s", pat, (char *)msg);
    }
    if (excl) p->exclude[p->n_exclude++] = re;
    else p->include[p->n_include++] = re;
  }
  lm_status st = LM_OK;
  if (cfg->instance) st = lm_idset_parse(&p->instance, cfg->instance, "--instance", diag);
  if (st == LM_OK && cfg->dispatch) st = lm_idset_parse(&p->dispatch, cfg->dispatch, "-d", diag);
  if (st == LM_OK && cfg->gpu) st = lm_idset_parse(&p->gpu, cfg->gpu, "-g", diag);
  if (st != LM_OK) {
    lm_policy_free(p);
    return st;
  }
  p->wanted_regions = calloc(cfg->n_regions + 1, sizeof *p->wanted_regions);
  p->kernel_index = lm_map_new();
  p->selected = lm_map_new();
  if (!p->wanted_regions || !p->kernel_index || !p->selected) goto nomem;
  *out = p;
  return LM_OK;
nomem:
  lm_policy_free(p);
  return lm_diag_set(diag, LM_ENOMEM, NULL, 0, 0, NULL, "out of memory");
}

void lm_policy_free(lm_policy *p) {
  if (!p) return;
  for (size_t i = 0; i < p->n_include; i++) pcre2_code_free(p->include[i]);
  for (size_t i = 0; i < p->n_exclude; i++) pcre2_code_free(p->exclude[i]);
  free(p->include);
  free(p->exclude);
  lm_idset_fini(&p->instance);
  lm_idset_fini(&p->dispatch);
  lm_idset_fini(&p->gpu);
  free(p->kernels);
  lm_map_free(p->kernel_index);
  lm_map_free(p->selected);
  for (int i = 0; i < p->n_regions; i++) free(p->region_names[i]);
  free(p->region_names);
  free(p->wanted_regions);
  free(p->stacks);
  free(p->range_ids);
  free(p->range_regions);
  pthread_mutex_destroy(&p->lock);
  free(p);
}

static int name_selected(lm_policy *p, const char *name) {
  int ok = p->n_include == 0;
  pcre2_match_data *md = NULL;
  for (size_t i = 0; i < p->n_include && !ok; i++) {
    md = pcre2_match_data_create_from_pattern(p->include[i], NULL);
    ok = md && pcre2_match(p->include[i], (PCRE2_SPTR)name, PCRE2_ZERO_TERMINATED, 0, 0, md, NULL) >= 0;
    pcre2_match_data_free(md);
  }
  for (size_t i = 0; i < p->n_exclude && ok; i++) {
    md = pcre2_match_data_create_from_pattern(p->exclude[i], NULL);
    ok = !(md && pcre2_match(p->exclude[i], (PCRE2_SPTR)name, PCRE2_ZERO_TERMINATED, 0, 0, md, NULL) >= 0);
    pcre2_match_data_free(md);
  }
  return ok;
}

static kstate *kernel_state(lm_policy *p, uint64_t id, const char *name) {
  char key[24];
  snprintf(key, sizeof key, "%llu", (unsigned long long)id);
  int64_t at;
  if (lm_map_get(p->kernel_index, key, &at)) return &p->kernels[at];
  if (p->n_kernels == p->cap_kernels) {
    size_t cap = p->cap_kernels ? p->cap_kernels * 2 : 64;
    kstate *grown = realloc(p->kernels, cap * sizeof *grown);
    if (!grown) return NULL;
    p->kernels = grown;
    p->cap_kernels = cap;
  }
  if (lm_map_put(p->kernel_index, key, (int64_t)p->n_kernels) != LM_OK) return NULL;
  kstate *k = &p->kernels[p->n_kernels++];
  k->instances = 0;
  k->selected_by_name = name_selected(p, name ? name : "");
  return k;
}

void lm_policy_kernel(lm_policy *p, uint64_t kernel_id, const char *name) {
  pthread_mutex_lock(&p->lock);
  kernel_state(p, kernel_id, name);
  pthread_mutex_unlock(&p->lock);
}

static int intern_region(lm_policy *p, const char *name) {
  for (int i = 0; i < p->n_regions; i++)
    if (strcmp(p->region_names[i], name) == 0) return i + 1;
  char **grown = realloc(p->region_names, (size_t)(p->n_regions + 1) * sizeof *grown);
  if (!grown) return 0;
  p->region_names = grown;
  grown[p->n_regions] = strdup(name ? name : "");
  if (!grown[p->n_regions]) return 0;
  p->n_regions++;
  for (size_t w = 0; w < p->cfg->n_regions; w++)
    if (strcmp(p->cfg->regions[w], name) == 0) p->wanted_regions[w] = p->n_regions;
  return p->n_regions;
}

static tstack *stack_of(lm_policy *p, unsigned long tid) {
  for (size_t i = 0; i < p->n_stacks; i++)
    if (p->stacks[i].tid == tid) return &p->stacks[i];
  if (p->n_stacks == p->cap_stacks) {
    size_t cap = p->cap_stacks ? p->cap_stacks * 2 : 16;
    tstack *grown = realloc(p->stacks, cap * sizeof *grown);
    if (!grown) return NULL;
    p->stacks = grown;
    p->cap_stacks = cap;
  }
  tstack *s = &p->stacks[p->n_stacks++];
  s->tid = tid;
  s->depth = 0;
  return s;
}

int lm_policy_region_push(lm_policy *p, unsigned long tid, const char *name) {
  pthread_mutex_lock(&p->lock);
  int id = intern_region(p, name);
  tstack *s = stack_of(p, tid);
  if (s && s->depth < MAX_DEPTH) s->ids[s->depth++] = id;
  pthread_mutex_unlock(&p->lock);
  return id;
}

void lm_policy_region_pop(lm_policy *p, unsigned long tid) {
  pthread_mutex_lock(&p->lock);
  tstack *s = stack_of(p, tid);
  if (s && s->depth > 0) s->depth--;
  pthread_mutex_unlock(&p->lock);
}

int lm_policy_range_start(lm_policy *p, uint64_t range_id, const char *name) {
  pthread_mutex_lock(&p->lock);
  int id = intern_region(p, name);
  if (p->n_ranges == p->cap_ranges) {
    size_t cap = p->cap_ranges ? p->cap_ranges * 2 : 16;
    uint64_t *ids = realloc(p->range_ids, cap * sizeof *ids);
    if (ids) p->range_ids = ids;
    int *regs = realloc(p->range_regions, cap * sizeof *regs);
    if (regs) p->range_regions = regs;
    if (ids && regs) p->cap_ranges = cap;
  }
  if (p->n_ranges < p->cap_ranges) {
    p->range_ids[p->n_ranges] = range_id;
    p->range_regions[p->n_ranges] = id;
    p->n_ranges++;
  }
  pthread_mutex_unlock(&p->lock);
  return id;
}

void lm_policy_range_stop(lm_policy *p, uint64_t range_id) {
  pthread_mutex_lock(&p->lock);
  for (size_t i = 0; i < p->n_ranges; i++)
    if (p->range_ids[i] == range_id) {
      p->range_ids[i] = p->range_ids[p->n_ranges - 1];
      p->range_regions[i] = p->range_regions[p->n_ranges - 1];
      p->n_ranges--;
      break;
    }
  pthread_mutex_unlock(&p->lock);
}

const char *lm_policy_region_name(lm_policy *p, int id) {
  pthread_mutex_lock(&p->lock);
  const char *name = id >= 1 && id <= p->n_regions ? p->region_names[id - 1] : NULL;
  pthread_mutex_unlock(&p->lock);
  return name;
}

void lm_policy_choose(lm_policy *p, const lm_dispatch_facts *d, lm_choice *out) {
  const lm_tool_config *cfg = p->cfg;
  out->set = -1;
  out->instance = -1;
  out->selected = -1;
  out->regions[0] = '\0';
  if (cfg->key_grid)
    snprintf(out->key, sizeof out->key, "%s|%llu|%llu|%llu", d->kernel_name,
             (unsigned long long)d->grid, (unsigned long long)d->workgroup,
             (unsigned long long)d->lds);
  else
    snprintf(out->key, sizeof out->key, "%s", d->kernel_name);
  pthread_mutex_lock(&p->lock);
  kstate *k = kernel_state(p, d->kernel_id, d->kernel_name);
  if (!k) goto done;
  out->instance = k->instances++;
  /* Regions active for this dispatch: its thread's stack and every open
   * process-wide range. */
  size_t at = 0;
  int in_wanted = cfg->n_regions == 0;
  tstack *s = stack_of(p, d->tid);
  for (int i = 0; s && i < s->depth; i++) {
    at += (size_t)snprintf(out->regions + at, sizeof out->regions - at, "%s%d", at ? "," : "",
                           s->ids[i]);
    for (size_t w = 0; w < cfg->n_regions; w++) in_wanted |= p->wanted_regions[w] == s->ids[i];
    if (at >= sizeof out->regions) break;
  }
  for (size_t i = 0; i < p->n_ranges && at < sizeof out->regions; i++) {
    at += (size_t)snprintf(out->regions + at, sizeof out->regions - at, "%s%d", at ? "," : "",
                           p->range_regions[i]);
    for (size_t w = 0; w < cfg->n_regions; w++) in_wanted |= p->wanted_regions[w] == p->range_regions[i];
  }
  if (!k->selected_by_name || !in_wanted || !spec_has(&p->instance, out->instance) ||
      !spec_has(&p->dispatch, (int64_t)d->dispatch_id) || !spec_has(&p->gpu, d->gpu))
    goto done;
  int64_t selected = 0;
  lm_map_get(p->selected, out->key, &selected);
  if (lm_map_put(p->selected, out->key, selected + 1) != LM_OK) goto done;
  out->selected = selected;
  switch ((lm_replay)cfg->mode) {
  case LM_REPLAY_APP: out->set = cfg->pass; break;
  case LM_REPLAY_INSTANCE: out->set = cfg->n_sets ? (int)(out->selected % cfg->n_sets) : -1; break;
  case LM_REPLAY_ASSIGNED:
    for (size_t i = 0; i < cfg->n_assign; i++)
      if (cfg->assign_instance[i] == out->selected && strcmp(cfg->assign_key[i], out->key) == 0) {
        out->set = cfg->assign_set[i];
        break;
      }
    break;
  }
done:
  pthread_mutex_unlock(&p->lock);
}
