/* test_plan.c - counter-set planning: for every built-in architecture the
 * full plan respects each block's per-set limit, gives every accumulate
 * counter a set of its own, reaches the lower bound, and holds every
 * collectable counter that any metric reads; smaller selections plan
 * smaller; ratio partners share a set where they can (not where a block
 * takes one counter per pass, as gfx1151's TCP). Each allocation
 * of planning gfx90a fails in turn: LM_ENOMEM with its diagnostic, or the
 * same plan, never a plan that lacks a counter or a missing input. */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "profile/profile.h"

static int32_t limit_of(const lm_catalog *cat, const char *block) {
  for (int32_t i = 0; i < cat->n_limits; i++)
    if (strcmp(cat->limits[i].block, block) == 0) return cat->limits[i].limit;
  return 1;
}

static int set_of(const lm_plan *p, const char *name) {
  for (int32_t i = 0; i < p->n_counters; i++)
    if (!p->counters[i].replica && strcmp(p->counters[i].name, name) == 0) return p->counters[i].set;
  return -1;
}

static void check_arch(const char *arch) {
  const lm_catalog *cat = lm_metrics_builtin(arch);
  lm_plan *p = NULL;
  lm_diag d;
  CHECK(lm_plan_build(cat, NULL, 0, &p, &d) == LM_OK);
  if (!p) return;
  CHECK(p->n_sets == p->lower_bound);
  int accumulate_sets = 0;
  for (int32_t s = 0; s < p->n_sets; s++) {
    const lm_plan_set *ps = &p->sets[s];
    accumulate_sets += ps->accumulate != NULL;
    /* per-block limits */
    for (int32_t i = ps->first; i < ps->first + ps->n; i++) {
      int32_t used = 0;
      for (int32_t j = ps->first; j < ps->first + ps->n; j++)
        used += strcmp(p->counters[j].block, p->counters[i].block) == 0;
      CHECK(used <= limit_of(cat, p->counters[i].block));
      CHECK(p->counters[i].set == s);
    }
    /* an accumulate set ends with its level counter and the accumulator */
    if (ps->accumulate) {
      CHECK(ps->n >= 2);
      int last = ps->first + ps->n - 1;
      if (p->counters[last].replica) last--;
      CHECK(strcmp(p->counters[last].name, cat->accumulate) == 0);
      CHECK(strcmp(p->counters[last - 1].name, ps->accumulate) == 0);
    }
  }
  /* Radeon folders name no accumulator: no level counters are planned. */
  if (cat->accumulate[0]) CHECK(accumulate_sets >= 3 && accumulate_sets <= 5);
  else CHECK(accumulate_sets == 0);
  /* every counter named by a metric input is planned (or reported missing) */
  char base[256];
  for (int32_t i = 0; i < cat->n_inputs; i++) {
    const lm_input *in = &cat->inputs[i];
    if (strcmp(in->source, "pmc_perf") != 0 || strncmp(in->column, "End_", 4) == 0 ||
        strncmp(in->column, "Start_", 6) == 0)
      continue;
    lm_plan_counter_base(in->column, base, sizeof base);
    int found = set_of(p, base) >= 0;
    for (int32_t k = 0; k < p->n_missing && !found; k++) found = strstr(p->missing[k], in->column) != NULL;
    if (!found && (strchr(in->column, '_') == NULL || !strncmp(in->column, "Grid", 4) ||
                   !strncmp(in->column, "Workgroup", 9) || !strncmp(in->column, "LDS_Per", 7) ||
                   !strncmp(in->column, "Scratch", 7) || !strncmp(in->column, "Arch_", 5) ||
                   !strncmp(in->column, "Accum_", 6) || !strncmp(in->column, "Wave_", 5)))
      found = 1; /* dispatch attributes, not counters */
    CHECK(found);
    if (!found) fprintf(stderr, "%s: %s not planned\n", arch, in->column);
  }
  /* A ratio's counters in one set: hits over hits plus misses. */
  CHECK(set_of(p, "TCC_HIT") == set_of(p, "TCC_MISS"));
  lm_plan_free(p);
  /* A narrower selection plans fewer sets. */
  const char *items[] = {"2"};
  CHECK(lm_plan_build(cat, items, 1, &p, &d) == LM_OK);
  CHECK(p && p->n_sets < 12 && p->n_sets == p->lower_bound);
  lm_plan_free(p);
  const char *bad[] = {"99.9"};
  CHECK(lm_plan_build(cat, bad, 1, &p, &d) == LM_EINVAL);
}

static int same_plan(const lm_plan *a, const lm_plan *b) {
  if (a->n_sets != b->n_sets || a->n_counters != b->n_counters || a->n_missing != b->n_missing) return 0;
  for (int32_t i = 0; i < a->n_counters; i++)
    if (a->counters[i].set != b->counters[i].set || strcmp(a->counters[i].name, b->counters[i].name) != 0 ||
        strcmp(a->counters[i].why, b->counters[i].why) != 0)
      return 0;
  for (int32_t i = 0; i < a->n_missing; i++)
    if (strcmp(a->missing[i], b->missing[i]) != 0) return 0;
  return 1;
}

/* Fail allocation n of planning, for every n up to 3000, then every
 * n + n/12, until planning succeeds. */
static void check_oom(const char *arch) {
  const lm_catalog *cat = lm_metrics_builtin(arch);
  lm_plan *ref = NULL, *p = NULL;
  lm_diag d;
  CHECK(lm_plan_build(cat, NULL, 0, &ref, &d) == LM_OK);
  if (!ref) return;
  long failed = 0;
  for (long n = 0; n < 100000000; n = n < 3000 ? n + 1 : n + n / 12) {
    lm_diag_clear(&d);
    lm_alloc_fail_after(n);
    lm_status st = lm_plan_build(cat, NULL, 0, &p, &d);
    lm_alloc_fail_after(-1);
    if (st == LM_OK) {
      CHECK(p && same_plan(p, ref));
      lm_plan_free(p);
      break;
    }
    CHECK(st == LM_ENOMEM && d.status == LM_ENOMEM && !p);
    failed++;
  }
  CHECK(failed > 0);
  lm_plan_free(ref);
}

int main(void) {
  /* The block-limit planner is AMD's; NVIDIA sets are planned with CUPTI
   * (test_cupti_plan). */
  for (const char *const *a = lm_metrics_builtin_list(); *a; a++)
    if (strcmp(lm_metrics_builtin(*a)->vendor, "amd") == 0) check_arch(*a);
  check_oom("gfx90a");
  /* gfx1151 collects one TCP counter per pass, gfx1150 four: the GL0 hit
   * rate's counters share a set on gfx1150 only. */
  lm_plan *apu = NULL;
  lm_diag apu_diag;
  CHECK(lm_plan_build(lm_metrics_builtin("gfx1150"), NULL, 0, &apu, &apu_diag) == LM_OK);
  if (apu) CHECK(set_of(apu, "TCP_REQ") >= 0 && set_of(apu, "TCP_REQ") == set_of(apu, "TCP_REQ_MISS"));
  lm_plan_free(apu);
  apu = NULL;
  CHECK(lm_plan_build(lm_metrics_builtin("gfx1151"), NULL, 0, &apu, &apu_diag) == LM_OK);
  if (apu) CHECK(set_of(apu, "TCP_REQ") >= 0 && set_of(apu, "TCP_REQ_MISS") >= 0 &&
                 set_of(apu, "TCP_REQ") != set_of(apu, "TCP_REQ_MISS"));
  lm_plan_free(apu);
  char b[64];
  CHECK(strcmp(lm_plan_counter_base("TCC_HIT[12]", b, sizeof b), "TCC_HIT") == 0);
  CHECK(strcmp(lm_plan_counter_base("TCP_TCC_READ_REQ_sum", b, sizeof b), "TCP_TCC_READ_REQ") == 0);
  CHECK(strcmp(lm_plan_block(lm_metrics_builtin("gfx90a"), "SQC_DCACHE_HITS", b, sizeof b), "SQ") == 0);
  return check_report("test_plan");
}
