/* test_cupti_plan.c - the pass-priced planner (lm_plan_build_passes) with
 * made-up pass counters, so that every outcome is known in advance: one
 * config when it is cheapest, sets split by unit when mixing units costs
 * passes (the GPU duration replicated into every set, at its price),
 * every metric placed exactly once, errors passed on. */
#include <string.h>

#include "check.h"
#include "profile/profile.h"

/* Units of a metric name: the part before "__". */
static size_t distinct_units(const char *const *names, size_t n) {
  size_t units = 0;
  for (size_t i = 0; i < n; i++) {
    size_t len = strcspn(names[i], "_");
    int seen = 0;
    for (size_t j = 0; j < i && !seen; j++)
      seen = strcspn(names[j], "_") == len && strncmp(names[i], names[j], len) == 0;
    units += !seen;
  }
  return units;
}

static int calls, fail_at;

/* Mixing units is expensive: passes = units squared. */
static lm_status squared(void *ctx, const char *const *names, size_t n, int32_t *passes,
                         size_t *bytes, lm_diag *diag) {
  (void)ctx;
  if (++calls == fail_at) return lm_fail(diag, LM_EIO, NULL, "made-up failure");
  size_t u = distinct_units(names, n);
  *passes = (int32_t)(u * u);
  *bytes = 100 * n;
  return LM_OK;
}

/* Everything fits one pass. */
static lm_status flat(void *ctx, const char *const *names, size_t n, int32_t *passes,
                      size_t *bytes, lm_diag *diag) {
  (void)ctx, (void)names, (void)diag;
  calls++;
  *passes = 1;
  *bytes = n;
  return LM_OK;
}

static void check_placement(const lm_plan *p, const lm_catalog *cat) {
  int32_t total = 0, counted = 0;
  for (int32_t s = 0; s < p->n_sets; s++) {
    total += p->sets[s].passes;
    counted += p->sets[s].n;
    for (int32_t i = p->sets[s].first; i < p->sets[s].first + p->sets[s].n; i++)
      CHECK(p->counters[i].set == s);
  }
  CHECK(total == p->total_passes && counted == p->n_counters);
  for (int32_t i = 0; i < p->n_counters; i++)
    for (int32_t j = i + 1; j < p->n_counters; j++)
      if (!p->counters[i].replica && !p->counters[j].replica)
        CHECK(strcmp(p->counters[i].name, p->counters[j].name) != 0);
  /* With several sets every set holds the GPU duration once, as a
   * replica where the metrics placed it elsewhere. */
  for (int32_t s = 0; p->n_sets > 1 && s < p->n_sets; s++) {
    int n = 0;
    for (int32_t i = p->sets[s].first; i < p->sets[s].first + p->sets[s].n; i++)
      n += strcmp(p->counters[i].name, "gpu__time_duration.sum") == 0;
    CHECK(n == 1);
  }
  for (int32_t i = 0; p->n_sets == 1 && i < p->n_counters; i++) CHECK(!p->counters[i].replica);
  /* Every metric a formula reads is in the catalog's list. */
  for (int32_t i = 0; i < p->n_counters; i++) {
    int found = 0;
    for (int32_t k = 0; k < cat->n_counters && !found; k++)
      found = strcmp(cat->counters[k], p->counters[i].name) == 0;
    CHECK(found);
  }
}

int main(void) {
  const lm_catalog *cat = lm_metrics_builtin("sm_90");
  CHECK(cat != NULL);
  if (!cat) return check_report("test_cupti_plan");
  lm_plan *p = NULL;
  lm_diag d;
  /* Kernel replay: one config, whatever it costs. */
  CHECK(lm_plan_build_passes(cat, NULL, 0, LM_REPLAY_KERNEL, squared, NULL, &p, &d) == LM_OK);
  CHECK(p && p->n_sets == 1 && p->total_passes == p->one_config_passes && p->packed_sets == 0);
  size_t units = 0;
  if (p) {
    const char *names[512];
    for (int32_t i = 0; i < p->n_counters && i < 512; i++) names[i] = p->counters[i].name;
    units = distinct_units(names, (size_t)p->n_counters);
    CHECK(units >= 6 && p->one_config_passes == (int32_t)(units * units));
    CHECK(p->n_counters == cat->n_counters); /* every listed metric is used */
    check_placement(p, cat);
  }
  lm_plan_free(p);
  /* Application replay: one set per unit beats one config (units vs
   * units^2), although the duration replicated into the sets of the other
   * units makes them two-unit sets of 4 passes each. */
  int32_t expect = 1 + 4 * ((int32_t)units - 1);
  CHECK(lm_plan_build_passes(cat, NULL, 0, LM_REPLAY_APP, squared, NULL, &p, &d) == LM_OK);
  CHECK(p && p->n_sets == (int32_t)units && p->total_passes == expect);
  if (p) {
    check_placement(p, cat);
    for (int32_t s = 0; s < p->n_sets; s++) {
      int replica = 0;
      for (int32_t i = p->sets[s].first; i < p->sets[s].first + p->sets[s].n; i++) replica |= p->counters[i].replica;
      CHECK(p->sets[s].passes == (replica ? 4 : 1));
      for (int32_t i = p->sets[s].first + 1; i < p->sets[s].first + p->sets[s].n; i++) {
        if (p->counters[i].replica) continue;
        CHECK(strcspn(p->counters[i].name, "_") == strcspn(p->counters[i - 1].name, "_") &&
              strncmp(p->counters[i].name, p->counters[i - 1].name,
                      strcspn(p->counters[i].name, "_")) == 0);
      }
    }
    lm_buf b = {0};
    lm_plan_print(p, 0, &b);
    char want[128];
    snprintf(want, sizeof want, "sets: %d, passes: %d (application replay: %d runs)\n",
             (int)units, (int)expect, (int)expect);
    const char *text = lm_buf_cstr(&b);
    CHECK(strlen(text) > strlen(want) && strcmp(text + strlen(text) - strlen(want), want) == 0);
    CHECK(strstr(text, "chip GH100") != NULL);
    lm_buf_fini(&b);
  }
  lm_plan_free(p);
  /* Instance cycling where everything fits one pass: one set. */
  CHECK(lm_plan_build_passes(cat, NULL, 0, LM_REPLAY_INSTANCE, flat, NULL, &p, &d) == LM_OK);
  CHECK(p && p->n_sets == 1 && p->total_passes == 1);
  lm_plan_free(p);
  /* -b selects: panel 2 reads fewer metrics than the whole folder. */
  const char *items[] = {"2.1"};
  CHECK(lm_plan_build_passes(cat, items, 1, LM_REPLAY_APP, flat, NULL, &p, &d) == LM_OK);
  CHECK(p && p->n_counters >= 5 && p->n_counters < cat->n_counters);
  lm_plan_free(p);
  const char *bad[] = {"99.9"};
  CHECK(lm_plan_build_passes(cat, bad, 1, LM_REPLAY_APP, flat, NULL, &p, &d) == LM_EINVAL);
  /* A failing pass counter fails the plan, at any call. */
  for (fail_at = 1; fail_at < 40; fail_at += 7) {
    calls = 0;
    p = NULL;
    CHECK(lm_plan_build_passes(cat, NULL, 0, LM_REPLAY_APP, squared, NULL, &p, &d) == LM_EIO);
    CHECK(p == NULL && strstr(d.message, "made-up"));
  }
  fail_at = 0;
  return check_report("test_cupti_plan");
}
