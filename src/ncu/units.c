/*
 * units.c - the cells of an Nsight Compute export: numbers as the tool
 * prints them (thousands separators, "n/a") and its units, each scaled to
 * the base unit of the CUPTI metric of its kind. A unit is a quantity with
 * an optional prefix ("Mbyte", "usecond", "Kibyte"), or a ratio of two
 * ("Gbyte/second", "cycle/nsecond", "inst/cycle"). A time is brought to
 * nanoseconds above the line (gpu__time_duration.sum is in ns) and to
 * seconds below it (rates are per second).
 */
#include <math.h>
#include <string.h>

#include "csv/csv.h"
#include "ncu/ncu.h"

int lm_ncu_number(const char *s, double *v) {
  char buf[128];
  size_t n = 0;
  if (strcmp(s, "n/a") == 0 || strcmp(s, "N/A") == 0) {
    *v = LM_NAN;
    return 2;
  }
  /* Drop the separators of digit groups: a comma between digits. */
  for (const char *p = s; *p; p++) {
    if (*p == ',' && p > s && p[-1] >= '0' && p[-1] <= '9' && p[1] >= '0' && p[1] <= '9') continue;
    if (n + 1 >= sizeof buf) return 0;
    buf[n++] = *p;
  }
  buf[n] = '\0';
  int is_int;
  int kind = lm_parse_number(buf, buf + n, v, &is_int);
  if (kind == 2) *v = LM_NAN;
  return kind == 1 || kind == 2 ? kind : 0;
}

/* Quantities whose base unit is the unit itself (a count, a ratio). */
static const char *const counts[] = {
    "byte",      "bit",         "cycle",       "inst", "warp", "sector", "request", "thread", "block",  "register",
    "wavefront", "transaction", "instruction", "hz",   "Hz",   "flop",   "ops",     "sample", "tensor", "rank"};

/* Decimal and binary prefixes. */
static const struct {
  const char *p;
  double f;
} prefixes[] = {{"Ki", 1024.0}, {"Mi", 1048576.0}, {"Gi", 1073741824.0}, {"Ti", 1099511627776.0},
                {"K", 1e3},     {"k", 1e3},        {"M", 1e6},           {"G", 1e9},
                {"T", 1e12},    {"P", 1e15}};

/* One quantity [s, s + n): its factor to the base unit; a time to ns
 * (time_ns) or to s. 1 when known. */
static int quantity(const char *s, size_t n, int time_ns, double *f) {
  static const struct {
    const char *name;
    double s;
  } times[] = {{"nsecond", 1e-9}, {"usecond", 1e-6}, {"msecond", 1e-3}, {"second", 1},
               {"s", 1},          {"ns", 1e-9},      {"us", 1e-6},      {"ms", 1e-3}};
  for (size_t i = 0; i < LM_ARRAY_LEN(times); i++)
    if (strlen(times[i].name) == n && strncmp(s, times[i].name, n) == 0) {
      *f = time_ns ? times[i].s * 1e9 : times[i].s;
      return 1;
    }
  double pf = 1;
  for (size_t i = 0; i < LM_ARRAY_LEN(prefixes); i++) {
    size_t k = strlen(prefixes[i].p);
    if (n > k && strncmp(s, prefixes[i].p, k) == 0) {
      for (size_t c = 0; c < LM_ARRAY_LEN(counts); c++)
        if (strlen(counts[c]) == n - k && strncmp(s + k, counts[c], n - k) == 0) {
          *f = prefixes[i].f;
          return 1;
        }
    }
  }
  for (size_t c = 0; c < LM_ARRAY_LEN(counts); c++)
    if (strlen(counts[c]) == n && strncmp(s, counts[c], n) == 0) {
      *f = pf;
      return 1;
    }
  return 0;
}

int lm_ncu_unit_scale(const char *unit, double *scale) {
  *scale = 1;
  if (!unit[0] || strcmp(unit, "%") == 0) return 1;
  const char *slash = strchr(unit, '/');
  size_t n = slash ? (size_t)(slash - unit) : strlen(unit);
  double num = 1, den = 1;
  if (!quantity(unit, n, 1, &num)) return 0;
  if (slash) {
    const char *d = slash + 1;
    if (strchr(d, '/') || !quantity(d, strlen(d), 0, &den)) return 0;
  }
  *scale = num / den;
  return 1;
}
