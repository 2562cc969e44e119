/*
 * alloc.c - allocation wrappers with fault injection, and arenas.
 *
 * Library code allocates only through these wrappers so that tests can make
 * any single allocation fail (the SQLite/Lua technique) and check that the
 * failure travels back as LM_ENOMEM without leaks or crashes. They need no
 * set-up, so the tool library calls them inside the application too, from
 * its load-time constructor on. Arenas serve data that dies together: a
 * workload, a compiled catalog, a request.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <stdint.h>

#include "base/base.h"

#include <stdatomic.h>

/* Atomic: the CSV loader allocates from two threads. */
static _Atomic long fail_countdown = -1; /* <0: never fail */
static _Atomic long alloc_count = 0;

long lm_alloc_fail_after(long n) {
  long made = alloc_count;
  alloc_count = 0;
  fail_countdown = n;
  return made;
}

static int should_fail(void) {
  alloc_count++;
  long left = atomic_load(&fail_countdown);
  while (left > 0) {
    if (atomic_compare_exchange_weak(&fail_countdown, &left, left - 1))
      return 0;
  }
  return left == 0; /* once at zero, keep failing until reset */
}

void *lm_malloc(size_t size) {
  if (should_fail()) return NULL;
  return malloc(size ? size : 1);
}

void *lm_calloc(size_t count, size_t size) {
  if (should_fail()) return NULL;
  return calloc(count ? count : 1, size ? size : 1);
}

void *lm_realloc(void *ptr, size_t size) {
  if (should_fail()) return NULL;
  return realloc(ptr, size ? size : 1);
}

void *lm_grow(void *items, size_t *cap, size_t n, size_t size) {
  if (n < *cap) return items;
  size_t want = *cap ? *cap : 8;
  do {
    if (want > SIZE_MAX / 2) return NULL;
    want *= 2;
  } while (want <= n);
  if (size && want > SIZE_MAX / size) return NULL;
  void *p = lm_realloc(items, want * size);
  if (p) *cap = want;
  return p;
}

void *lm_aligned_alloc(size_t alignment, size_t size) {
  if (should_fail()) return NULL;
  if (size > SIZE_MAX - alignment) return NULL;
  /* C11 asks for a size that is a multiple of the alignment. */
  size_t rounded = size ? (size + alignment - 1) & ~(alignment - 1) : alignment;
  return aligned_alloc(alignment, rounded);
}

void lm_free(void *ptr) { free(ptr); }

char *lm_strndup(const char *s, size_t n) {
  char *copy = lm_malloc(n + 1);
  if (!copy) return NULL;
  memcpy(copy, s, n);
  copy[n] = '\0';
  return copy;
}

char *lm_strdup(const char *s) { return lm_strndup(s, strlen(s)); }

#define HUGE_ALIGN ((size_t)2 << 20)
/* Blocks backed by huge pages: from this size, or from DENSE_MIN for a
 * block its user writes whole. */
#define HUGE_MIN ((size_t)32 << 20)
#define DENSE_MIN HUGE_ALIGN

/* The bytes mapped for a block of `bytes`: whole huge pages from one huge
 * page up (the last one is backed whole when touched), else whole pages. */
static size_t mapped_bytes(size_t bytes) {
  size_t unit = bytes >= HUGE_ALIGN ? HUGE_ALIGN : 4096;
  return (bytes + unit - 1) & ~(unit - 1);
}

static void *alloc_aligned(size_t bytes, size_t huge_from) {
  if (should_fail()) return NULL;
  if (bytes == 0) bytes = 1;
  if (bytes > SIZE_MAX - 2 * HUGE_ALIGN) return NULL;
  /* Over-map by one huge page and trim, so the block starts on a 2 MiB
   * boundary and transparent huge pages can back all of it. */
  size_t used = mapped_bytes(bytes), span = used + HUGE_ALIGN;
  unsigned char *raw = mmap(NULL, span, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (raw == MAP_FAILED) return NULL;
  uintptr_t start = ((uintptr_t)raw + HUGE_ALIGN - 1) & ~(uintptr_t)(HUGE_ALIGN - 1);
  size_t head = start - (uintptr_t)raw;
  if (head) munmap(raw, head);
  if (span - head > used) munmap((unsigned char *)start + used, span - head - used);
#ifdef MADV_HUGEPAGE
  /* Below a few huge pages, a block that is only partly written (a rank's
   * part whose columns are decoded elsewhere) would have whole 2 MiB
   * pages cleared for a few kilobytes of it. */
  if (bytes >= huge_from) madvise((void *)start, used, MADV_HUGEPAGE);
#else
  (void)huge_from;
#endif
  return (void *)start;
}

void *lm_alloc_huge(size_t bytes) { return alloc_aligned(bytes, HUGE_MIN); }

void *lm_alloc_dense(size_t bytes) { return alloc_aligned(bytes, DENSE_MIN); }

void lm_free_huge(void *p, size_t bytes) {
  if (!p) return;
  munmap(p, mapped_bytes(bytes ? bytes : 1));
}

/* ----------------------------------------------------------------- arena */

typedef struct block {
  struct block *next;
  size_t size;
  size_t used;
  int mapped; /* from lm_alloc_dense: zero pages, handed out once */
  _Alignas(16) unsigned char data[];
} block;

/* One-off allocations from this size get a mapping of their own (huge
 * pages, no clearing by the allocator): the per-dispatch arrays of a large
 * workload's tables. Under AddressSanitizer they stay on malloc, where an
 * overrun past the block is caught. */
#if defined(__SANITIZE_ADDRESS__)
#define ARENA_MAPPED_MIN SIZE_MAX
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define ARENA_MAPPED_MIN SIZE_MAX
#endif
#endif
#ifndef ARENA_MAPPED_MIN
#define ARENA_MAPPED_MIN ((size_t)4 << 20)
#endif

struct lm_arena {
  block *head;
  size_t block_size;
  size_t total;
};

lm_arena *lm_arena_new(size_t block_size) {
  lm_arena *arena = lm_calloc(1, sizeof *arena);
  if (!arena) return NULL;
  arena->block_size = block_size < 4096 ? 4096 : block_size;
  return arena;
}

void lm_arena_free(lm_arena *arena) {
  if (!arena) return;
  block *b = arena->head;
  while (b) {
    block *next = b->next;
    if (b->mapped) lm_free_huge(b, sizeof *b + b->size);
    else lm_free(b);
    b = next;
  }
  lm_free(arena);
}

void *lm_arena_alloc(lm_arena *arena, size_t size) {
  /* Round up to 16 without wrapping: sizes near SIZE_MAX (and any that
   * cannot fit with a block header) fail like malloc would. */
  if (size > SIZE_MAX - 15 - sizeof(block)) return NULL;
  size = (size + 15) & ~(size_t)15;
  block *b = arena->head;
  if (!b || b->size - b->used < size) {
    size_t want = size > arena->block_size ? size : arena->block_size;
    int mapped = want >= ARENA_MAPPED_MIN;
    block *fresh = mapped ? lm_alloc_dense(sizeof *fresh + want) : lm_malloc(sizeof *fresh + want);
    if (!fresh) return NULL;
    fresh->size = want;
    fresh->used = 0;
    fresh->mapped = mapped;
    arena->total += want;
    if (b && size > arena->block_size) {
      /* A large one-off allocation: keep the current block as the head so
       * its free space is not wasted. */
      fresh->next = b->next;
      b->next = fresh;
    } else {
      fresh->next = b;
      arena->head = fresh;
    }
    b = fresh;
  }
  void *p = b->data + b->used;
  b->used += size;
  if (!b->mapped) memset(p, 0, size);
  return p;
}

char *lm_arena_strndup(lm_arena *arena, const char *s, size_t n) {
  char *copy = lm_arena_alloc(arena, n + 1);
  if (!copy) return NULL;
  memcpy(copy, s, n);
  copy[n] = '\0';
  return copy;
}

char *lm_arena_strdup(lm_arena *arena, const char *s) {
  return lm_arena_strndup(arena, s, strlen(s));
}

size_t lm_arena_bytes(const lm_arena *arena) { return arena->total; }
