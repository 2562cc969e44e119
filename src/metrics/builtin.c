/*
 * builtin.c - the built-in catalogs, made from their images on first use.
 *
 * The build emits each catalog's arrays without strings and its strings as
 * offsets into one block (emit.c), so that starting lumen costs no
 * relocation of the catalogs' pointers. A catalog asked for is made once:
 * one allocation holds the catalog and a copy of each array that has
 * strings, and the strings are pointed back in. A run uses one or two of
 * the catalogs (their size: docs/perf.md); they live until the process
 * ends.
 */
#include <pthread.h>
#include <stdalign.h>
#include <stdatomic.h>
#include <stddef.h>
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

/* The arrays of a catalog that hold strings: where its pointer and its
 * count lie in lm_catalog, and the size of an entry. */
typedef struct array_field {
  size_t ptr, count, size;
} array_field;

#define ARRAY(field, n) {offsetof(lm_catalog, field), offsetof(lm_catalog, n), sizeof *((const lm_catalog *)0)->field}
static const array_field arrays[] = {ARRAY(inputs, n_inputs), ARRAY(sysvars, n_sysvars), ARRAY(norms, n_norms),
                                     ARRAY(panels, n_panels), ARRAY(tables, n_tables),   ARRAY(cols, n_cols),
                                     ARRAY(rows, n_rows),     ARRAY(cells, n_cells),     ARRAY(counters, n_counters),
                                     ARRAY(limits, n_limits), ARRAY(aliases, n_aliases),
                                     ARRAY(unmeasurable, n_unmeasurable)};
#define N_ARRAYS (sizeof arrays / sizeof *arrays)

/* The bytes of array a of catalog s, its terminating entry included. */
static size_t array_bytes(const lm_catalog *s, const array_field *a) {
  int32_t n;
  memcpy(&n, (const char *)s + a->count, sizeof n);
  return ((size_t)n + 1) * a->size;
}

/* The catalog of image i with its strings, or NULL when out of memory:
 * one allocation for it and a copy of each array with strings. */
static const lm_catalog *make(size_t i) {
  const lm_catalog_image *im = &lm_builtin_images[i];
  const lm_catalog *s = im->shape;
  size_t bytes = round_up(sizeof *s);
  for (size_t k = 0; k < N_ARRAYS; k++) bytes += round_up(array_bytes(s, &arrays[k]));
  char *block = lm_malloc(bytes);
  if (!block) return NULL;
  lm_catalog *c = (lm_catalog *)block;
  *c = *s;
  char *at = block + round_up(sizeof *c);
  for (size_t k = 0; k < N_ARRAYS; k++) {
    const void *from;
    memcpy(&from, (const char *)s + arrays[k].ptr, sizeof from);
    memcpy(at, from, array_bytes(s, &arrays[k]));
    memcpy((char *)c + arrays[k].ptr, &at, sizeof at); /* the copy's pointer to it */
    at += round_up(array_bytes(s, &arrays[k]));
  }
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
  if (!arch || !compat) return NULL;
  for (size_t i = 0; lm_builtin_images[i].shape; i++)
    if (strcmp(lm_builtin_images[i].arch, arch) == 0 && strcmp(lm_builtin_images[i].compat, compat) == 0)
      return get(i);
  return NULL;
}

const lm_catalog *lm_metrics_builtin(const char *arch) {
  if (!arch) return NULL;
  /* The images of one architecture come oldest version first. */
  for (size_t i = 0; lm_builtin_images[i].shape; i++)
    if (strcmp(lm_builtin_images[i].arch, arch) == 0) return get(i);
  return NULL;
}

const lm_catalog *lm_metrics_builtin_find(const char *name) {
  if (!name) return NULL;
  for (size_t i = 0; lm_builtin_images[i].shape; i++) {
    const lm_catalog_image *im = &lm_builtin_images[i];
    if (strcasecmp(im->arch, name) == 0 || (im->chip[0] && strcasecmp(im->chip, name) == 0)) return get(i);
  }
  return NULL;
}

const char *const *lm_metrics_builtin_list(void) { return lm_builtin_arch_names; }
