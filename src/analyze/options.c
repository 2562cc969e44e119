/*
 * options.c - the names of the analysis options that take one of a fixed
 * set (normalization, time unit, weighting, clocks): one table per family,
 * read by the command line and the server alike, so the two accept and
 * list the same names. Value 0 of each family is "not given" and is kept
 * out of the tables.
 */
#include <string.h>

#include "analyze/analyze.h"

const lm_keyword lm_norm_names[] = {
    {"per_wave", LM_NORM_PER_WAVE, NULL},
    {"per_cycle", LM_NORM_PER_CYCLE, NULL},
    {"per_second", LM_NORM_PER_SECOND, NULL},
    {"per_kernel", LM_NORM_PER_KERNEL, NULL},
    {NULL, 0, NULL},
};

const lm_keyword lm_time_unit_names[] = {
    {"s", LM_TIME_UNIT_S, NULL},
    {"ms", LM_TIME_UNIT_MS, NULL},
    {"us", LM_TIME_UNIT_US, NULL},
    {"ns", LM_TIME_UNIT_NS, NULL},
    {NULL, 0, NULL},
};

const lm_keyword lm_weight_names[] = {
    {"count", LM_WEIGHT_COUNT, "each dispatch once, the reference tool's"},
    {"time", LM_WEIGHT_TIME, "each dispatch by its duration"},
    {NULL, 0, NULL},
};

const lm_keyword lm_clock_names[] = {
    {"max", LM_CLOCK_MAX, "the reference tool's peaks"},
    {"measured", LM_CLOCK_MEASURED, "the clocks sampled while the kernels ran"},
    {NULL, 0, NULL},
};

int lm_norm_kind_parse(const char *name, lm_norm_kind *out) {
  int v;
  if (!lm_keyword_find(lm_norm_names, name, &v)) return 0;
  *out = (lm_norm_kind)v;
  return 1;
}

int lm_time_unit_parse(const char *name, lm_time_unit *out) {
  int v;
  if (!lm_keyword_find(lm_time_unit_names, name, &v)) return 0;
  *out = (lm_time_unit)v;
  return 1;
}

int lm_weight_kind_parse(const char *name, lm_weight_kind *out) {
  int v;
  if (!lm_keyword_find(lm_weight_names, name, &v)) return 0;
  *out = (lm_weight_kind)v;
  return 1;
}

int lm_clock_kind_parse(const char *name, lm_clock_kind *out) {
  int v;
  if (!lm_keyword_find(lm_clock_names, name, &v)) return 0;
  *out = (lm_clock_kind)v;
  return 1;
}

const char *lm_norm_kind_name(lm_norm_kind norm) { return lm_keyword_name(lm_norm_names, (int)norm); }

const char *lm_time_unit_name(lm_time_unit unit) { return lm_keyword_name(lm_time_unit_names, (int)unit); }

const char *lm_weight_kind_name(lm_weight_kind weight) { return lm_keyword_name(lm_weight_names, (int)weight); }

const char *lm_clock_kind_name(lm_clock_kind clock) { return lm_keyword_name(lm_clock_names, (int)clock); }

double lm_time_unit_ns(lm_time_unit unit) {
  switch (unit) {
  case LM_TIME_UNIT_S: return 1e9;
  case LM_TIME_UNIT_MS: return 1e6;
  case LM_TIME_UNIT_US: return 1e3;
  default: return 1;
  }
}

int32_t lm_analyze_norm_index(const lm_catalog *cat, lm_norm_kind norm) {
  if (norm == LM_NORM_DEFAULT) return 0;
  const char *name = lm_norm_kind_name(norm);
  for (int32_t i = 0; name && i < cat->n_norms; i++)
    if (strcmp(cat->norms[i].name, name) == 0) return i;
  return -1;
}
