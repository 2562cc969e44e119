/* test_options.c - the names of the analysis options that take one of a
 * fixed set (lm_norm_kind, lm_time_unit, lm_weight_kind, lm_clock_kind):
 * every name of a table parses to its value and back, the "not given"
 * value has no name, unknown names are refused and leave the output
 * alone; the lists messages show come from the same tables; a catalog's
 * normalizations are found by kind. */
#include <stdio.h>
#include <string.h>

#include "analyze/analyze.h"
#include "check.h"

/* Each name of table round-trips through parse and name; values are
 * distinct and not 0. */
#define ROUND_TRIP(table, type, parse_fn, name_fn)                                 \
  do {                                                                       \
    size_t n_ = 0;                                                           \
    for (const lm_keyword *c_ = (table); c_->name; c_++, n_++) {              \
      type v_ = (type)0;                                                     \
      CHECK(parse_fn(c_->name, &v_) == 1);                                      \
      CHECK((int)v_ == c_->value && v_ != (type)0);                          \
      CHECK_STR(name_fn(v_), c_->name);                                         \
      for (const lm_keyword *d_ = (table); d_ != c_; d_++) CHECK(d_->value != c_->value); \
    }                                                                        \
    CHECK(n_ > 1);                                                           \
    CHECK(name_fn((type)0) == NULL);                                            \
    CHECK(name_fn((type)99) == NULL);                                           \
  } while (0)

/* Unknown names (case, spaces, an empty or missing name) are refused and
 * leave *out as it was. */
#define REFUSED(type, parse, ...)                                            \
  do {                                                                       \
    static const char *const bad_[] = {__VA_ARGS__, "", " ", NULL};          \
    for (size_t i_ = 0; bad_[i_]; i_++) {                                    \
      type v_ = (type)0;                                                     \
      CHECK(parse(bad_[i_], &v_) == 0);                                      \
      CHECK(v_ == (type)0);                                                  \
    }                                                                        \
    type v_ = (type)0;                                                       \
    CHECK(parse(NULL, &v_) == 0 && v_ == (type)0);                           \
  } while (0)

static void check_list(const lm_keyword *table, const char *sep, const char *last, int what, const char *want) {
  lm_buf b = {0};
  lm_keyword_list(table, sep, last, what, &b);
  CHECK_STR(lm_buf_cstr(&b), want);
  lm_buf_fini(&b);
}

int main(void) {
  ROUND_TRIP(lm_norm_names, lm_norm_kind, lm_norm_kind_parse, lm_norm_kind_name);
  ROUND_TRIP(lm_time_unit_names, lm_time_unit, lm_time_unit_parse, lm_time_unit_name);
  ROUND_TRIP(lm_weight_names, lm_weight_kind, lm_weight_kind_parse, lm_weight_kind_name);
  ROUND_TRIP(lm_clock_names, lm_clock_kind, lm_clock_kind_parse, lm_clock_kind_name);
  REFUSED(lm_norm_kind, lm_norm_kind_parse, "per_year", "PER_WAVE", "per_wave ", "per_sm", "default");
  REFUSED(lm_time_unit, lm_time_unit_parse, "sec", "MS", "ps", "n", "nss");
  REFUSED(lm_weight_kind, lm_weight_kind_parse, "heavy", "Time", "counts");
  REFUSED(lm_clock_kind, lm_clock_kind_parse, "min", "Max", "measure");

  lm_norm_kind norm;
  CHECK(lm_norm_kind_parse("per_second", &norm) && norm == LM_NORM_PER_SECOND);
  lm_time_unit unit;
  CHECK(lm_time_unit_parse("us", &unit) && unit == LM_TIME_UNIT_US);
  CHECK(lm_time_unit_parse("ns", &unit) && unit == LM_TIME_UNIT_NS && unit != LM_TIME_UNIT_DEFAULT);

  CHECK(lm_time_unit_ns(LM_TIME_UNIT_DEFAULT) == 1 && lm_time_unit_ns(LM_TIME_UNIT_NS) == 1);
  CHECK(lm_time_unit_ns(LM_TIME_UNIT_US) == 1e3 && lm_time_unit_ns(LM_TIME_UNIT_MS) == 1e6);
  CHECK(lm_time_unit_ns(LM_TIME_UNIT_S) == 1e9);

  /* The lists error messages show, in table order. */
  check_list(lm_norm_names, ", ", " or ", 0, "per_wave, per_cycle, per_second or per_kernel");
  check_list(lm_norm_names, ", ", ", ", 0, "per_wave, per_cycle, per_second, per_kernel");
  check_list(lm_time_unit_names, ", ", " or ", 0, "s, ms, us or ns");
  check_list(lm_weight_names, ", ", " or ", 1,
             "count (each dispatch once, the reference tool's) or time (each dispatch by its duration)");
  check_list(lm_clock_names, ", ", ", ", 0, "max, measured");
  int v = 7;
  CHECK(lm_keyword_find(lm_clock_names, "measured", &v) && v == LM_CLOCK_MEASURED);
  CHECK(lm_keyword_name(lm_clock_names, LM_CLOCK_DEFAULT) == NULL);

  /* Every built-in catalog has the four normalizations, the first by
   * default; a catalog without one of them gives -1. */
  for (const char *const *arch = lm_metrics_builtin_list(); *arch; arch++) {
    const lm_catalog *cat = lm_metrics_builtin(*arch);
    CHECK(cat != NULL);
    if (!cat) continue;
    CHECK(lm_analyze_norm_index(cat, LM_NORM_DEFAULT) == 0);
    for (const lm_keyword *c = lm_norm_names; c->name; c++) {
      int32_t i = lm_analyze_norm_index(cat, (lm_norm_kind)c->value);
      CHECK(i >= 0 && i < cat->n_norms);
      if (i >= 0) CHECK_STR(cat->norms[i].name, c->name);
    }
    lm_catalog fewer = *cat;
    fewer.n_norms = 1;
    int32_t first_kind = -1;
    for (const lm_keyword *c = lm_norm_names; c->name; c++)
      if (strcmp(c->name, cat->norms[0].name) != 0 && first_kind < 0) first_kind = c->value;
    CHECK(lm_analyze_norm_index(&fewer, (lm_norm_kind)first_kind) == -1);
    fewer.n_norms = 0;
    CHECK(lm_analyze_norm_index(&fewer, LM_NORM_PER_KERNEL) == -1);
    CHECK(lm_analyze_norm_index(&fewer, LM_NORM_DEFAULT) == 0);
  }
  return check_report("test_options");
}
