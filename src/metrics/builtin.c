/*
 * builtin.c - the built-in catalogs, made from their images on first use.
 *
 * The build emits each catalog's arrays without strings and its strings as
 * offsets into one block (emit.c), so that starting lumen costs no
 * relocation of the catalogs' pointers. A catalog asked for is made once:
 * one allocation holds the catalog and a copy of each array that has
 * strings, and the strings are pointed back in. A run uses one or two of
 * the catalogs, some 60 KB each; they live until the process ends.
 */
#include <pthread.h>
#include <stdalign.h>
#include <stdatomic.h>
#include <string.h>
#include <strings.h>

#include "metrics/internal.h"

static pthread_mutex_t made_lock = PTHREAD_MUTEX_INITIALIZER;
static _Atomic(const lm_catalog *) made[LM_BUILTIN_MAX];

typedef struct strings_in {
  const lm_catalog_image *image;
  size_t next;
  int bad; /* more string fields than refs, or an offset past the block */
} strings_in;

/* The slot belongs to the copy being made, so writing through it is ours. */
static void put_string(const char *const *slot, void *ctx) {
  strings_in *in = ctx;
  const char **to = (const char **)slot;
  if (in->next >= in->image->n_refs) {
    in->bad = 1;
    *to = NULL;
    return;
  }
  uint32_t at = in->image->refs[in->next++];
  *to = at == LM_IMAGE_NULL ? NULL : lm_builtin_strings + at;
}

static size_t round_up(size_t n) {
  size_t a = alignof(max_align_t);
  return (n + a - 1) / a * a;
}

/* A copy of n + 1 entries (the terminating one included) of size each,
 * carved from *at. */
static void *carve(char **at, const void *from, int32_t n, size_t size) {
  void *to = *at;
  memcpy(to, from, (size_t)(n + 1) * size);
  *at += round_up((size_t)(n + 1) * size);
  return to;
}

/* The catalog of image i with its strings, or NULL when out of memory. */
static const lm_catalog *make(size_t i) {
  const lm_catalog_image *im = &lm_builtin_images[i];
  const lm_catalog *s = im->shape;
  size_t bytes = round_up(sizeof *s) + round_up((size_t)(s->n_inputs + 1) * sizeof *s->inputs) +
                 round_up((size_t)(s->n_sysvars + 1) * sizeof *s->sysvars) +
                 round_up((size_t)(s->n_norms + 1) * sizeof *s->norms) +
                 round_up((size_t)(s->n_panels + 1) * sizeof *s->panels) +
                 round_up((size_t)(s->n_tables + 1) * sizeof *s->tables) +
                 round_up((size_t)(s->n_cols + 1) * sizeof *s->cols) +
                 round_up((size_t)(s->n_rows + 1) * sizeof *s->rows) +
                 round_up((size_t)(s->n_cells + 1) * sizeof *s->cells) +
                 round_up((size_t)(s->n_counters + 1) * sizeof *s->counters) +
                 round_up((size_t)(s->n_limits + 1) * sizeof *s->limits) +
                 round_up((size_t)(s->n_aliases + 1) * sizeof *s->aliases);
  char *block = lm_malloc(bytes), *at = block;
  if (!block) return NULL;
  lm_catalog *c = (lm_catalog *)at;
  *c = *s;
  at += round_up(sizeof *c);
  c->inputs = carve(&at, s->inputs, s->n_inputs, sizeof *s->inputs);
  c->sysvars = carve(&at, s->sysvars, s->n_sysvars, sizeof *s->sysvars);
  c->norms = carve(&at, s->norms, s->n_norms, sizeof *s->norms);
  c->panels = carve(&at, s->panels, s->n_panels, sizeof *s->panels);
  c->tables = carve(&at, s->tables, s->n_tables, sizeof *s->tables);
  c->cols = carve(&at, s->cols, s->n_cols, sizeof *s->cols);
  c->rows = carve(&at, s->rows, s->n_rows, sizeof *s->rows);
  c->cells = carve(&at, s->cells, s->n_cells, sizeof *s->cells);
  c->counters = carve(&at, s->counters, s->n_counters, sizeof *s->counters);
  c->limits = carve(&at, s->limits, s->n_limits, sizeof *s->limits);
  c->aliases = carve(&at, s->aliases, s->n_aliases, sizeof *s->aliases);
  strings_in in = {im, 0, 0};
  lm_catalog_visit_strings(c, put_string, &in);
  /* The image and the walk disagree only if the build is broken. */
  if (in.bad || in.next != im->n_refs || !c->arch || !c->compat) {
    lm_free(block);
    return NULL;
  }
  return c;
}

/* The catalog of image i, made on first use; every caller gets the same. */
static const lm_catalog *get(size_t i) {
  if (i >= LM_BUILTIN_MAX) return NULL;
  const lm_catalog *c = atomic_load_explicit(&made[i], memory_order_acquire);
  if (c) return c;
  pthread_mutex_lock(&made_lock);
  c = atomic_load_explicit(&made[i], memory_order_relaxed);
  if (!c && (c = make(i)) != NULL) atomic_store_explicit(&made[i], c, memory_order_release);
  pthread_mutex_unlock(&made_lock);
  return c;
}

const lm_catalog *lm_metrics_builtin_compat(const char *arch, const char *compat) {
  for (size_t i = 0; lm_builtin_images[i].shape; i++)
    if (strcmp(lm_builtin_images[i].arch, arch) == 0 && strcmp(lm_builtin_images[i].compat, compat) == 0)
      return get(i);
  return NULL;
}

const lm_catalog *lm_metrics_builtin(const char *arch) {
  /* The images of one architecture come oldest version first. */
  for (size_t i = 0; lm_builtin_images[i].shape; i++)
    if (strcmp(lm_builtin_images[i].arch, arch) == 0) return get(i);
  return NULL;
}

const lm_catalog *lm_metrics_builtin_find(const char *name) {
  for (size_t i = 0; lm_builtin_images[i].shape; i++) {
    const lm_catalog_image *im = &lm_builtin_images[i];
    if (strcasecmp(im->arch, name) == 0 || (im->chip[0] && strcasecmp(im->chip, name) == 0)) return get(i);
  }
  return NULL;
}

const char *const *lm_metrics_builtin_list(void) { return lm_builtin_arch_names; }
