/*
 * sort.c - sorting with a context for the comparator. A comparator that
 * reads its context from a global races when two threads sort at once
 * (lumen serve evaluates analyses on connection threads); this one passes
 * the context along: glibc's qsort_r where there is one, else a context
 * held per thread around the C library's qsort.
 */
#if defined(__linux__)
#define _GNU_SOURCE
#endif
#include <stdlib.h>

#include "base/base.h"

#if defined(__GLIBC__)
void lm_sort(void *base, size_t n, size_t size, lm_cmp_fn cmp, void *ctx) {
  if (n > 1) qsort_r(base, n, size, cmp, ctx);
}
#else
static _Thread_local struct {
  lm_cmp_fn cmp;
  void *ctx;
} sorting;

static int call(const void *a, const void *b) { return sorting.cmp(a, b, sorting.ctx); }

void lm_sort(void *base, size_t n, size_t size, lm_cmp_fn cmp, void *ctx) {
  if (n < 2) return;
  lm_cmp_fn cmp_was = sorting.cmp; /* a comparator that sorts again */
  void *ctx_was = sorting.ctx;
  sorting.cmp = cmp;
  sorting.ctx = ctx;
  qsort(base, n, size, call);
  sorting.cmp = cmp_was;
  sorting.ctx = ctx_was;
}
#endif
