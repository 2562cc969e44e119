/*
 * policy.c - the vendor-neutral decisions made inside the profiled
 * application: is this dispatch selected (kernel name, instance, dispatch id,
 * GPU, region), and which counter set does it get (application replay,
 * instance cycling, or an assigned set); backends only translate.
 *
 * Invariant: a dispatch takes no lock another thread takes and reads no cache
 * line another thread writes but its kernel's instance counter: name filters
 * run once per kernel, kernels are published with release/acquire atomics,
 * counters are atomics on lines of their own, region stacks are per thread.
 * docs/rocprofiler-sdk.md.
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
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
  if (!f) return lm_fail(diag, LM_EIO, path, "cannot write: %s", strerror(errno));
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
  if (c->split_ranks) fprintf(f, "split_ranks %d\n", c->split_ranks);
  fprintf(f, "telemetry %s\noutput ", c->telemetry[0] ? c->telemetry : "auto");
  put_escaped(f, c->output);
  fputc('\n', f);
  if (fclose(f) != 0) return lm_fail(diag, LM_EIO, path, "cannot write: %s", strerror(errno));
  return LM_OK;
}

static char *unescape(const char *s) {
  char *out = lm_malloc(strlen(s) + 1), *o = out;
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
  char **grown = lm_realloc(*list, (*n + 2) * sizeof *grown);
  if (!grown) return 0;
  *list = grown;
  grown[*n] = unescape(s);
  if (!grown[*n]) return 0;
  grown[++*n] = NULL;
  return 1;
}

void lm_tool_config_fini(lm_tool_config *c) {
  for (int s = 0; c->set_counters && s < c->n_sets; s++) {
    for (char **n = c->set_counters[s]; n && *n; n++) lm_free(*n);
    lm_free(c->set_counters[s]);
    lm_free(c->set_accumulate[s]);
  }
  lm_free(c->set_counters);
  lm_free(c->set_accumulate);
  for (size_t i = 0; i < c->n_kernels; i++) lm_free(c->kernels[i]);
  lm_free(c->kernels);
  for (size_t i = 0; i < c->n_regions; i++) lm_free(c->regions[i]);
  lm_free(c->regions);
  for (size_t i = 0; i < c->n_assign; i++) lm_free(c->assign_key[i]);
  lm_free(c->assign_key);
  lm_free(c->assign_instance);
  lm_free(c->assign_set);
  lm_free(c->instance);
  lm_free(c->dispatch);
  lm_free(c->gpu);
  memset(c, 0, sizeof *c);
}

lm_status lm_tool_config_read(const char *path, lm_tool_config *c, lm_diag *diag) {
  memset(c, 0, sizeof *c);
  FILE *f = fopen(path, "r");
  if (!f) return lm_fail(diag, LM_EIO, path, "cannot read: %s", strerror(errno));
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
      c->set_counters = lm_calloc((size_t)c->n_sets + 1, sizeof *c->set_counters);
      c->set_accumulate = lm_calloc((size_t)c->n_sets + 1, sizeof *c->set_accumulate);
      if (!c->set_counters || !c->set_accumulate) goto nomem;
    } else if (strcmp(key, "set") == 0) {
      char *copy = lm_strdup(arg), *save = NULL;
      if (!copy) goto nomem;
      char *tok = strtok_r(copy, " ", &save);
      int s = tok ? atoi(tok) : -1;
      if (s < 0 || s >= c->n_sets || !c->set_counters) {
        lm_free(copy);
        goto bad;
      }
      tok = strtok_r(NULL, " ", &save);
      if (tok && strcmp(tok, "-") != 0) {
        lm_free(c->set_accumulate[s]);
        if (!(c->set_accumulate[s] = lm_strdup(tok))) {
          lm_free(copy);
          goto nomem;
        }
      }
      size_t n = 0;
      while ((tok = strtok_r(NULL, " ", &save)) != NULL)
        if (!push_str(&c->set_counters[s], &n, tok)) {
          lm_free(copy);
          goto nomem;
        }
      lm_free(copy);
    } else if (strcmp(key, "kernel") == 0) {
      if (!push_str(&c->kernels, &c->n_kernels, arg)) goto nomem;
    } else if (strcmp(key, "region") == 0) {
      if (!push_str(&c->regions, &c->n_regions, arg)) goto nomem;
    } else if (strcmp(key, "instance") == 0 || strcmp(key, "dispatch") == 0 || strcmp(key, "gpu") == 0) {
      char **field = key[0] == 'i' ? &c->instance : key[0] == 'd' ? &c->dispatch : &c->gpu;
      lm_free(*field);
      if (!(*field = lm_strdup(arg))) goto nomem;
    } else if (strcmp(key, "assign") == 0) {
      long long inst;
      int set, off = 0;
      if (sscanf(arg, "%lld %d %n", &inst, &set, &off) < 2) goto bad;
      size_t n = c->n_assign;
      char **keys = lm_realloc(c->assign_key, (n + 1) * sizeof *keys);
      if (keys) c->assign_key = keys;
      int64_t *insts = lm_realloc(c->assign_instance, (n + 1) * sizeof *insts);
      if (insts) c->assign_instance = insts;
      int *sets = lm_realloc(c->assign_set, (n + 1) * sizeof *sets);
      if (sets) c->assign_set = sets;
      if (!keys || !insts || !sets) goto nomem;
      if (!(c->assign_key[n] = unescape(arg + off))) goto nomem;
      c->assign_instance[n] = inst;
      c->assign_set[n] = set;
      c->n_assign++;
    } else if (strcmp(key, "telemetry") == 0) snprintf(c->telemetry, sizeof c->telemetry, "%s", arg);
    else if (strcmp(key, "split_ranks") == 0) c->split_ranks = atoi(arg);
    else if (strcmp(key, "output") == 0) {
      char *o = unescape(arg);
      if (!o) goto nomem;
      snprintf(c->output, sizeof c->output, "%s", o);
      lm_free(o);
    } else {
      goto bad;
    }
  }
  goto done;
bad:
  st = lm_fail_at(diag, LM_EPARSE, path, lineno, NULL, "not a lumen tool configuration line");
  goto done;
nomem:
  st = lm_fail_at(diag, LM_ENOMEM, path, lineno, NULL, "out of memory");
done:
  free(line);
  fclose(f);
  if (st != LM_OK) lm_tool_config_fini(c);
  return st;
}

int lm_tool_config_take_share(lm_tool_config *c, const lm_rank_info *r) {
  if (!c->split_ranks || r->rank < 0 || r->size < 2 || c->n_sets < 1) return 0;
  int *mine = lm_malloc((size_t)c->n_sets * sizeof *mine);
  if (!mine) return -1;
  int n = lm_split_sets(r->rank, r->size, c->n_sets, mine);
  /* The share's sets move to the front, in order; the others are freed. */
  for (int s = 0, k = 0; s < c->n_sets; s++) {
    if (k < n && mine[k] == s) {
      char **counters = c->set_counters[s];
      char *acc = c->set_accumulate[s];
      c->set_counters[s] = NULL;
      c->set_accumulate[s] = NULL;
      c->set_counters[k] = counters;
      c->set_accumulate[k] = acc;
      k++;
      continue;
    }
    for (char **name = c->set_counters[s]; name && *name; name++) lm_free(*name);
    lm_free(c->set_counters[s]);
    lm_free(c->set_accumulate[s]);
    c->set_counters[s] = NULL;
    c->set_accumulate[s] = NULL;
  }
  lm_free(mine);
  c->n_sets = n;
  /* A pass past the share collects nothing: its run is for other ranks. */
  if (c->mode == LM_REPLAY_APP && c->pass >= n) c->pass = n;
  size_t len = strlen(c->output);
  snprintf(c->output + len, sizeof c->output - len, ".rank%d", r->rank);
  return 1;
}

/* ------------------------------------------------------------ the policy */

/* An id filter: no list given selects everything. */
static int spec_has(const lm_idset *s, int64_t v) { return !s->n || lm_idset_has(s, v); }

#define LINE 64 /* a cache line: what one thread writes, another does not share */

/* A cycling key's count of selected dispatches. Kernels of one name (one
 * per GPU agent on AMD) share it, as they share the key. */
typedef struct keystate {
  _Alignas(LINE) atomic_llong selected;
  char *key;
} keystate;

/* Dispatches of a kernel with one grid, workgroup and LDS size (the key of
 * --replay instance with key_grid): a list per kernel, prepended under the
 * lock and walked without it. */
typedef struct gridkey {
  uint64_t grid, workgroup, lds;
  keystate *ks;
  struct gridkey *_Atomic next;
} gridkey;

/* A kernel: what is read on every dispatch (never written after it is
 * published) apart from the instance counter, on a line of its own. */
typedef struct kstate {
  uint64_t id;
  int selected_by_name;
  keystate *by_name;             /* the key of its name (key_grid off) */
  gridkey *_Atomic grids;        /* the keys of its launch sizes (key_grid on) */
  _Alignas(LINE) atomic_llong instances;
} kstate;

/* Kernels by id: open addressing, at most half full. Readers load the
 * table and its slots with acquire and take no lock; a writer (under the
 * lock) fills a slot with release, or publishes a table twice the size;
 * old tables stay until the policy is freed (a reader may still be in
 * one). */
typedef struct ktable {
  struct ktable *older;
  size_t mask, used;
  kstate *_Atomic slot[];
} ktable;

#define MAX_DEPTH 64

/* One thread's region stack: changed by push and pop for that thread,
 * read by its dispatches, without the lock. */
typedef struct tstack {
  unsigned long tid;
  atomic_int depth;
  atomic_int ids[MAX_DEPTH];
  struct tstack *_Atomic next;
} tstack;

struct lm_policy {
  const lm_tool_config *cfg;
  uint64_t serial; /* tells this policy from an earlier one at the same address */
  pthread_mutex_t lock; /* writers: new kernels, keys, stacks, region names, ranges */
  lm_regex **include, **exclude;
  size_t n_include, n_exclude;
  lm_diag failure; /* the first name a pattern gave up on (status LM_OK: none) */
  lm_idset instance, dispatch, gpu;
  ktable *_Atomic kernels;
  keystate **keys;
  size_t n_keys, cap_keys;
  lm_map *key_index; /* cycling key -> index in keys */
  char **region_names;
  int n_regions;
  atomic_int *wanted_regions; /* region ids of -r names, resolved as they appear */
  tstack *_Atomic stacks;
  atomic_uint n_stacks;
  uint64_t *range_ids;
  int *range_regions;
  size_t n_ranges, cap_ranges;
  atomic_size_t open_ranges; /* n_ranges, for a look without the lock */
};

static atomic_ullong next_serial = 1;

/* The calling thread's last answers: its last kernel, and its stack. */
static _Thread_local struct {
  uint64_t serial, kernel_id;
  kstate *k;
} last_kernel;

static _Thread_local struct {
  uint64_t serial;
  unsigned long tid;
  unsigned n_stacks; /* the count when s was looked for (s NULL: none then) */
  tstack *s;
} last_stack;

static ktable *ktable_new(size_t cap) {
  ktable *t = lm_calloc(1, sizeof *t + cap * sizeof t->slot[0]);
  if (t) t->mask = cap - 1;
  return t;
}

static size_t hash_id(uint64_t id) {
  id ^= id >> 33;
  id *= 0xff51afd7ed558ccdULL;
  id ^= id >> 33;
  return (size_t)id;
}

lm_status lm_policy_new(const lm_tool_config *cfg, lm_policy **out, lm_diag *diag) {
  lm_policy *p = lm_calloc(1, sizeof *p);
  *out = NULL;
  if (!p) return lm_oom(diag, NULL);
  p->cfg = cfg;
  p->serial = atomic_fetch_add(&next_serial, 1);
  pthread_mutex_init(&p->lock, NULL);
  p->include = lm_calloc(cfg->n_kernels + 1, sizeof *p->include);
  p->exclude = lm_calloc(cfg->n_kernels + 1, sizeof *p->exclude);
  if (!p->include || !p->exclude) goto nomem;
  for (size_t i = 0; i < cfg->n_kernels; i++) {
    const char *pat = cfg->kernels[i];
    int excl = pat[0] == '!';
    char label[1100];
    snprintf(label, sizeof label, "-k '%.1024s'", pat);
    lm_regex *re = NULL;
    lm_status compiled = lm_regex_compile(label, pat + excl, &re, diag);
    if (compiled != LM_OK) {
      lm_policy_free(p);
      return compiled;
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
  p->wanted_regions = lm_calloc(cfg->n_regions + 1, sizeof *p->wanted_regions);
  p->key_index = lm_map_new();
  ktable *t = ktable_new(64);
  atomic_init(&p->kernels, t);
  if (!p->wanted_regions || !p->key_index || !t) goto nomem;
  *out = p;
  return LM_OK;
nomem:
  lm_policy_free(p);
  return lm_oom(diag, NULL);
}

void lm_policy_free(lm_policy *p) {
  if (!p) return;
  for (size_t i = 0; i < p->n_include; i++) lm_regex_free(p->include[i]);
  for (size_t i = 0; i < p->n_exclude; i++) lm_regex_free(p->exclude[i]);
  lm_free(p->include);
  lm_free(p->exclude);
  lm_idset_fini(&p->instance);
  lm_idset_fini(&p->dispatch);
  lm_idset_fini(&p->gpu);
  ktable *t = atomic_load(&p->kernels);
  for (size_t i = 0; t && i <= t->mask; i++) {
    kstate *k = atomic_load(&t->slot[i]);
    for (gridkey *g = k ? atomic_load(&k->grids) : NULL, *next; g; g = next) {
      next = atomic_load(&g->next);
      lm_free(g);
    }
    lm_free(k);
  }
  while (t) {
    ktable *older = t->older;
    lm_free(t);
    t = older;
  }
  for (size_t i = 0; i < p->n_keys; i++) {
    lm_free(p->keys[i]->key);
    lm_free(p->keys[i]);
  }
  lm_free(p->keys);
  lm_map_free(p->key_index);
  for (int i = 0; i < p->n_regions; i++) lm_free(p->region_names[i]);
  lm_free(p->region_names);
  lm_free(p->wanted_regions);
  for (tstack *s = atomic_load(&p->stacks), *next; s; s = next) {
    next = atomic_load(&s->next);
    lm_free(s);
  }
  lm_free(p->range_ids);
  lm_free(p->range_regions);
  pthread_mutex_destroy(&p->lock);
  lm_free(p);
}

/* Whether the kernel filters keep name. A pattern that gives up on it
 * (PCRE2's limits) leaves it out, and its message in p->failure when it
 * is the first. The caller holds the lock. */
static int name_selected(lm_policy *p, const char *name) {
  int ok = p->n_include == 0, hit = 0;
  lm_diag why;
  lm_diag_clear(&why);
  for (size_t i = 0; i < p->n_include && !ok; i++) {
    if (lm_regex_match(p->include[i], "kernel name", name, &hit, &why) != LM_OK) goto failed;
    ok = hit;
  }
  for (size_t i = 0; i < p->n_exclude && ok; i++) {
    if (lm_regex_match(p->exclude[i], "kernel name", name, &hit, &why) != LM_OK) goto failed;
    ok = !hit;
  }
  return ok;
failed:
  if (p->failure.status == LM_OK) p->failure = why;
  return 0;
}

/* The keystate of key (made on first use). The caller holds the lock. */
static keystate *key_state(lm_policy *p, const char *key) {
  int64_t at;
  if (lm_map_get(p->key_index, key, &at)) return p->keys[at];
  if (p->n_keys == p->cap_keys) {
    size_t cap = p->cap_keys ? p->cap_keys * 2 : 64;
    keystate **grown = lm_realloc(p->keys, cap * sizeof *grown);
    if (!grown) return NULL;
    p->keys = grown;
    p->cap_keys = cap;
  }
  keystate *ks = lm_aligned_alloc(LINE, sizeof *ks);
  if (!ks) return NULL;
  atomic_init(&ks->selected, 0);
  ks->key = lm_strdup(key);
  if (!ks->key || lm_map_put(p->key_index, key, (int64_t)p->n_keys) != LM_OK) {
    lm_free(ks->key);
    lm_free(ks);
    return NULL;
  }
  p->keys[p->n_keys++] = ks;
  return ks;
}

static kstate *kernel_find(lm_policy *p, uint64_t id) {
  ktable *t = atomic_load_explicit(&p->kernels, memory_order_acquire);
  for (size_t h = hash_id(id) & t->mask;; h = (h + 1) & t->mask) {
    kstate *k = atomic_load_explicit(&t->slot[h], memory_order_acquire);
    if (!k || k->id == id) return k;
  }
}

static void slot_put(ktable *t, kstate *k) {
  size_t h = hash_id(k->id) & t->mask;
  while (atomic_load_explicit(&t->slot[h], memory_order_relaxed)) h = (h + 1) & t->mask;
  atomic_store_explicit(&t->slot[h], k, memory_order_release);
  t->used++;
}

/* The state of kernel id, made (and its name filter decided) when it is
 * new. Takes the lock only then. */
static kstate *kernel_state(lm_policy *p, uint64_t id, const char *name) {
  kstate *k = kernel_find(p, id);
  if (k) return k;
  pthread_mutex_lock(&p->lock);
  k = kernel_find(p, id);
  if (k) goto done;
  ktable *t = atomic_load_explicit(&p->kernels, memory_order_relaxed);
  if ((t->used + 1) * 2 > t->mask + 1) {
    ktable *bigger = ktable_new((t->mask + 1) * 2);
    if (!bigger) goto done;
    for (size_t i = 0; i <= t->mask; i++) {
      kstate *old = atomic_load_explicit(&t->slot[i], memory_order_relaxed);
      if (old) slot_put(bigger, old);
    }
    bigger->older = t;
    atomic_store_explicit(&p->kernels, bigger, memory_order_release);
    t = bigger;
  }
  kstate *fresh = lm_aligned_alloc(LINE, sizeof *fresh);
  if (!fresh) goto done;
  memset(fresh, 0, sizeof *fresh);
  fresh->id = id;
  fresh->selected_by_name = name_selected(p, name ? name : "");
  atomic_init(&fresh->instances, 0);
  atomic_init(&fresh->grids, NULL);
  /* The key of its name, when the name alone is the key (instance
   * cycling without key_grid, and application replay). */
  char key[sizeof ((lm_choice *)0)->key];
  snprintf(key, sizeof key, "%s", name ? name : "(null)"); /* cut as make_key cuts it */
  fresh->by_name = p->cfg->key_grid ? NULL : key_state(p, key);
  if (!p->cfg->key_grid && !fresh->by_name) {
    lm_free(fresh);
    goto done;
  }
  slot_put(t, fresh);
  k = fresh;
done:
  pthread_mutex_unlock(&p->lock);
  return k;
}

lm_status lm_policy_kernel(lm_policy *p, uint64_t kernel_id, const char *name, lm_diag *diag) {
  kernel_state(p, kernel_id, name);
  pthread_mutex_lock(&p->lock);
  lm_status st = p->failure.status;
  if (st != LM_OK && diag) *diag = p->failure;
  pthread_mutex_unlock(&p->lock);
  return st;
}

static int intern_region(lm_policy *p, const char *name) {
  for (int i = 0; i < p->n_regions; i++)
    if (strcmp(p->region_names[i], name) == 0) return i + 1;
  char **grown = lm_realloc(p->region_names, (size_t)(p->n_regions + 1) * sizeof *grown);
  if (!grown) return 0;
  p->region_names = grown;
  grown[p->n_regions] = lm_strdup(name ? name : "");
  if (!grown[p->n_regions]) return 0;
  p->n_regions++;
  for (size_t w = 0; w < p->cfg->n_regions; w++)
    if (strcmp(p->cfg->regions[w], name) == 0)
      atomic_store_explicit(&p->wanted_regions[w], p->n_regions, memory_order_relaxed);
  return p->n_regions;
}

/* The stack of thread tid, or NULL when it has none (made when make is
 * set: the caller holds the lock then). */
static tstack *stack_find(lm_policy *p, unsigned long tid) {
  for (tstack *s = atomic_load_explicit(&p->stacks, memory_order_acquire); s;
       s = atomic_load_explicit(&s->next, memory_order_acquire))
    if (s->tid == tid) return s;
  return NULL;
}

/* The stack of the calling thread (tid), from the thread's last answer
 * while no stack was added since. */
static tstack *stack_of(lm_policy *p, unsigned long tid) {
  unsigned n = atomic_load_explicit(&p->n_stacks, memory_order_acquire);
  if (last_stack.serial == p->serial && last_stack.tid == tid && (last_stack.s || last_stack.n_stacks == n))
    return last_stack.s;
  tstack *s = stack_find(p, tid);
  last_stack.serial = p->serial;
  last_stack.tid = tid;
  last_stack.n_stacks = n;
  last_stack.s = s;
  return s;
}

static tstack *stack_make(lm_policy *p, unsigned long tid) {
  tstack *s = stack_find(p, tid);
  if (s) return s;
  s = lm_calloc(1, sizeof *s);
  if (!s) return NULL;
  s->tid = tid;
  atomic_init(&s->depth, 0);
  atomic_init(&s->next, atomic_load_explicit(&p->stacks, memory_order_relaxed));
  atomic_store_explicit(&p->stacks, s, memory_order_release);
  atomic_fetch_add_explicit(&p->n_stacks, 1, memory_order_release);
  return s;
}

int lm_policy_region_push(lm_policy *p, unsigned long tid, const char *name) {
  pthread_mutex_lock(&p->lock);
  int id = intern_region(p, name);
  tstack *s = stack_make(p, tid);
  pthread_mutex_unlock(&p->lock);
  int depth = s ? atomic_load_explicit(&s->depth, memory_order_relaxed) : MAX_DEPTH;
  if (depth < MAX_DEPTH) {
    atomic_store_explicit(&s->ids[depth], id, memory_order_relaxed);
    atomic_store_explicit(&s->depth, depth + 1, memory_order_release);
  }
  return id;
}

void lm_policy_region_pop(lm_policy *p, unsigned long tid) {
  tstack *s = stack_of(p, tid);
  int depth = s ? atomic_load_explicit(&s->depth, memory_order_relaxed) : 0;
  if (depth > 0) atomic_store_explicit(&s->depth, depth - 1, memory_order_release);
}

int lm_policy_range_start(lm_policy *p, uint64_t range_id, const char *name) {
  pthread_mutex_lock(&p->lock);
  int id = intern_region(p, name);
  if (p->n_ranges == p->cap_ranges) {
    size_t cap = p->cap_ranges ? p->cap_ranges * 2 : 16;
    uint64_t *ids = lm_realloc(p->range_ids, cap * sizeof *ids);
    if (ids) p->range_ids = ids;
    int *regs = lm_realloc(p->range_regions, cap * sizeof *regs);
    if (regs) p->range_regions = regs;
    if (ids && regs) p->cap_ranges = cap;
  }
  if (p->n_ranges < p->cap_ranges) {
    p->range_ids[p->n_ranges] = range_id;
    p->range_regions[p->n_ranges] = id;
    p->n_ranges++;
  }
  atomic_store_explicit(&p->open_ranges, p->n_ranges, memory_order_release);
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
  atomic_store_explicit(&p->open_ranges, p->n_ranges, memory_order_release);
  pthread_mutex_unlock(&p->lock);
}

const char *lm_policy_region_name(lm_policy *p, int id) {
  pthread_mutex_lock(&p->lock);
  const char *name = id >= 1 && id <= p->n_regions ? p->region_names[id - 1] : NULL;
  pthread_mutex_unlock(&p->lock);
  return name;
}

/* Writers of text into a fixed buffer: each returns the new end, never
 * past stop (a text that does not fit is cut, as snprintf cuts). */
static char *put_text(char *o, char *stop, const char *s) {
  size_t n = strlen(s);
  if (n > (size_t)(stop - o)) n = (size_t)(stop - o);
  memcpy(o, s, n);
  return o + n;
}

static char *put_num(char *o, char *stop, unsigned long long v) {
  char digits[24];
  int n = 0;
  do digits[n++] = (char)('0' + v % 10);
  while ((v /= 10) != 0);
  while (n && o < stop) *o++ = digits[--n];
  return o;
}

/* The cycling key: the name, or name|grid|workgroup|lds. */
static void make_key(const lm_tool_config *cfg, const lm_dispatch_facts *d, char *key, size_t cap) {
  char *o = key, *stop = key + cap - 1;
  o = put_text(o, stop, d->kernel_name ? d->kernel_name : "(null)");
  if (cfg->key_grid) {
    const uint64_t parts[3] = {d->grid, d->workgroup, d->lds};
    for (int i = 0; i < 3; i++) {
      o = put_text(o, stop, "|");
      o = put_num(o, stop, parts[i]);
    }
  }
  *o = '\0';
}

/* The keystate of a dispatch of k with launch sizes d (key_grid). */
static keystate *grid_key(lm_policy *p, kstate *k, const lm_dispatch_facts *d, const char *key) {
  for (gridkey *g = atomic_load_explicit(&k->grids, memory_order_acquire); g;
       g = atomic_load_explicit(&g->next, memory_order_acquire))
    if (g->grid == d->grid && g->workgroup == d->workgroup && g->lds == d->lds) return g->ks;
  keystate *ks = NULL;
  pthread_mutex_lock(&p->lock);
  gridkey *g = atomic_load_explicit(&k->grids, memory_order_relaxed);
  for (; g; g = atomic_load_explicit(&g->next, memory_order_relaxed))
    if (g->grid == d->grid && g->workgroup == d->workgroup && g->lds == d->lds) break;
  if (g) ks = g->ks;
  else if ((g = lm_malloc(sizeof *g)) != NULL) {
    g->grid = d->grid;
    g->workgroup = d->workgroup;
    g->lds = d->lds;
    g->ks = ks = key_state(p, key);
    if (ks) {
      atomic_init(&g->next, atomic_load_explicit(&k->grids, memory_order_relaxed));
      atomic_store_explicit(&k->grids, g, memory_order_release);
    } else {
      lm_free(g);
    }
  }
  pthread_mutex_unlock(&p->lock);
  return ks;
}

static int wanted(const lm_policy *p, int region) {
  for (size_t w = 0; w < p->cfg->n_regions; w++)
    if (atomic_load_explicit(&p->wanted_regions[w], memory_order_relaxed) == region) return 1;
  return 0;
}

/* The regions active for a dispatch, as ids in text: its thread's stack
 * and every open process-wide range. Returns whether one is wanted by -r
 * (1 without -r). */
static int active_regions(lm_policy *p, const lm_dispatch_facts *d, char *out, size_t cap) {
  const lm_tool_config *cfg = p->cfg;
  char *o = out, *stop = out + cap - 1;
  int in_wanted = cfg->n_regions == 0;
  tstack *s = stack_of(p, d->tid);
  int depth = s ? atomic_load_explicit(&s->depth, memory_order_acquire) : 0;
  for (int i = 0; i < depth; i++) {
    int id = atomic_load_explicit(&s->ids[i], memory_order_relaxed);
    if (o != out) o = put_text(o, stop, ",");
    o = put_num(o, stop, (unsigned long long)id);
    in_wanted |= wanted(p, id);
  }
  /* Ranges: the lock only while one is open. */
  if (atomic_load_explicit(&p->open_ranges, memory_order_acquire)) {
    pthread_mutex_lock(&p->lock);
    for (size_t i = 0; i < p->n_ranges; i++) {
      if (o != out) o = put_text(o, stop, ",");
      o = put_num(o, stop, (unsigned long long)p->range_regions[i]);
      in_wanted |= wanted(p, p->range_regions[i]);
    }
    pthread_mutex_unlock(&p->lock);
  }
  *o = '\0';
  return in_wanted;
}

void lm_policy_choose(lm_policy *p, const lm_dispatch_facts *d, lm_choice *out) {
  const lm_tool_config *cfg = p->cfg;
  out->set = -1;
  out->instance = -1;
  out->selected = -1;
  make_key(cfg, d, out->key, sizeof out->key);
  kstate *k;
  if (last_kernel.serial == p->serial && last_kernel.kernel_id == d->kernel_id) k = last_kernel.k;
  else {
    k = kernel_state(p, d->kernel_id, d->kernel_name);
    last_kernel.serial = p->serial;
    last_kernel.kernel_id = d->kernel_id;
    last_kernel.k = k;
  }
  if (!k) {
    last_kernel.serial = 0;
    out->regions[0] = '\0';
    return;
  }
  out->instance = atomic_fetch_add_explicit(&k->instances, 1, memory_order_relaxed);
  int in_wanted = active_regions(p, d, out->regions, sizeof out->regions);
  if (!k->selected_by_name || !in_wanted || !spec_has(&p->instance, out->instance) ||
      !spec_has(&p->dispatch, (int64_t)d->dispatch_id) || !spec_has(&p->gpu, d->gpu))
    return;
  keystate *ks = cfg->key_grid ? grid_key(p, k, d, out->key) : k->by_name;
  if (!ks) return;
  out->selected = atomic_fetch_add_explicit(&ks->selected, 1, memory_order_relaxed);
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
}
