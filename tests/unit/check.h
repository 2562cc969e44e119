/*
 * check.h - a minimal test harness: CHECK records a failure with its file
 * and line and keeps going; a test program exits non-zero if any failed.
 */
#ifndef LUMEN_CHECK_H
#define LUMEN_CHECK_H

#include <math.h>
#include <stdio.h>
#include <string.h>

static int check_failures = 0;
static int check_count = 0;

#define CHECK(cond)                                                        \
  do {                                                                     \
    check_count++;                                                         \
    if (!(cond)) {                                                         \
      check_failures++;                                                    \
      fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond); \
    }                                                                      \
  } while (0)

#define CHECK_STR(a, b)                                                    \
  do {                                                                     \
    const char *check_a_ = (a), *check_b_ = (b);                           \
    check_count++;                                                         \
    if (!check_a_ || !check_b_ || strcmp(check_a_, check_b_) != 0) {       \
      check_failures++;                                                    \
      fprintf(stderr, "%s:%d: expected \"%s\", got \"%s\"\n", __FILE__, __LINE__, \
              check_b_ ? check_b_ : "(null)", check_a_ ? check_a_ : "(null)"); \
    }                                                                      \
  } while (0)

#define CHECK_NEAR(a, b, tol)                                              \
  do {                                                                     \
    double check_a_ = (a), check_b_ = (b);                                 \
    check_count++;                                                         \
    if (!(fabs(check_a_ - check_b_) <= (tol) ||                            \
          (isnan(check_a_) && isnan(check_b_)) || check_a_ == check_b_)) { \
      check_failures++;                                                    \
      fprintf(stderr, "%s:%d: expected %.17g, got %.17g\n", __FILE__, __LINE__, \
              check_b_, check_a_);                                         \
    }                                                                      \
  } while (0)

static int check_report(const char *name) {
  printf("%s: %d checks, %d failed\n", name, check_count, check_failures);
  return check_failures ? 1 : 0;
}

#endif
