/*
 * summary_compare.c - the summaries of several workloads side by side
 * (`lumen analyze -w A -w B --summary`): for each kernel of the baseline's
 * summary, the same kernel in each other workload (matched by name, or by
 * name without the suffix a ROCm version adds), with its time, its top
 * limiters and its roofline verdict next to the baseline's and the change
 * in percent, and which findings appeared or went away. Kernels that only
 * another workload's summary lists come last.
 */
#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "report/internal.h"
#include "report/report.h"

/* The kernel of s that is `name`, or NULL (*loose: matched without a
 * ROCm suffix). */
static const lm_kernel_summary *find_kernel(const lm_summary *s, const char *name, int *loose) {
  *loose = 0;
  for (size_t i = 0; i < s->n_kernels; i++)
    if (strcmp(s->kernels[i].name, name) == 0) return &s->kernels[i];
  for (size_t i = 0; i < s->n_kernels; i++)
    if (lm_report_same_kernel(s->kernels[i].name, name)) {
      *loose = 1;
      return &s->kernels[i];
    }
  return NULL;
}

static void delta(lm_buf *b, double base, double other) {
  if (isfinite(base) && isfinite(other) && base != 0) lm_buf_printf(b, " (%+.1f %%)", (other - base) / base * 100);
}

static void roof_text(const lm_kernel_summary *k, lm_buf *b) {
  if (isnan(k->roof_pct)) lm_buf_printf(b, "not placed (%s)", k->roof_reason ? k->roof_reason : "no data");
  else if (k->roof_pct > 100.5) lm_buf_printf(b, "above the attainable (%.0f %%): a ceiling is too low", k->roof_pct);
  else
    lm_buf_printf(b, "%.0f %% of the attainable, %s-bound %s %s", k->roof_pct, k->roof_bound,
                  strcmp(k->roof_bound, "memory") == 0 ? "at" : "on", k->roof_limit);
}

static int has_rule(const lm_kernel_summary *k, const char *id) {
  for (size_t f = 0; f < k->n_findings; f++)
    if (strcmp(k->findings[f].rule->id, id) == 0) return 1;
  return 0;
}

/* One kernel of the baseline against workload j's. */
static void kernel_lines(const lm_kernel_summary *b, const lm_kernel_summary *o, int loose, size_t j, size_t width,
                         lm_buf *out) {
  char t1[32], t2[32], line[1024];
  if (!o) {
    snprintf(line, sizeof line, "not among the kernels of [%zu]'s summary (not run there, or not in its top five)",
             j + 1);
    lm_report_wrap(out, "   ", line, 5, width);
    return;
  }
  if (loose) lm_report_wrap(out, "   ", "(matched by name without the ROCm suffix)", 5, width);
  lm_report_time_text(b->total_ns, t1, sizeof t1);
  lm_report_time_text(o->total_ns, t2, sizeof t2);
  lm_buf d = {0};
  lm_buf_printf(&d, "time: %s in %zu call%s -> [%zu] %s in %zu call%s", t1, b->calls, b->calls == 1 ? "" : "s",
                j + 1, t2, o->calls, o->calls == 1 ? "" : "s");
  delta(&d, b->total_ns, o->total_ns);
  lm_report_wrap(out, "   ", lm_buf_cstr(&d), 5, width);
  lm_buf_fini(&d);
  /* The baseline's limiters, each with the other's value. */
  for (size_t h = 0; h < b->n_highlights; h++) {
    const lm_highlight *x = &b->highlights[h];
    double other = LM_NAN;
    for (size_t q = 0; q < o->n_highlights + o->n_above; q++) {
      const lm_highlight *y = q < o->n_highlights ? &o->highlights[q] : &o->above[q - o->n_highlights];
      if (strcmp(y->name, x->name) == 0) other = y->pct;
    }
    if (isnan(other)) snprintf(line, sizeof line, "%s: %.0f %% of peak -> [%zu] not among its limiters", x->name,
                               x->pct, j + 1);
    else snprintf(line, sizeof line, "%s: %.0f %% of peak -> [%zu] %.0f %%%s", x->name, x->pct, j + 1, other,
                  other > 100.5 ? " (above its peak)" : "");
    lm_report_wrap(out, "   ", line, 5, width);
  }
  lm_buf r = {0};
  lm_buf_puts(&r, "roofline: ");
  roof_text(b, &r);
  lm_buf_printf(&r, " -> [%zu] ", j + 1);
  roof_text(o, &r);
  lm_report_wrap(out, "   ", lm_buf_cstr(&r), 5, width);
  lm_buf_fini(&r);
  for (size_t f = 0; f < b->n_findings; f++)
    if (!has_rule(o, b->findings[f].rule->id)) {
      snprintf(line, sizeof line, "gone in [%zu]: %s [%s]", j + 1, b->findings[f].verdict, b->findings[f].rule->id);
      lm_report_wrap(out, "   - ", line, 6, width);
    }
  for (size_t f = 0; f < o->n_findings; f++) {
    snprintf(line, sizeof line, "%s in [%zu]: %s [%s]", has_rule(b, o->findings[f].rule->id) ? "still" : "new",
             j + 1, o->findings[f].verdict, o->findings[f].rule->id);
    lm_report_wrap(out, has_rule(b, o->findings[f].rule->id) ? "   = " : "   + ", line, 6, width);
  }
}

lm_status lm_report_summary_compare_text(const lm_summary *const *s, const lm_workload *const *w, size_t n,
                                         size_t width, lm_buf *out) {
  if (width < 40) width = 40;
  char t[32], line[1200];
  for (size_t j = 0; j < n; j++) {
    lm_report_time_text(s[j]->total_ns, t, sizeof t);
    char *path = lm_text_safe(w[j]->path ? w[j]->path : "", 0);
    snprintf(line, sizeof line, "[%zu] %s: %zu kernel%s, %s of GPU time%s", j + 1, path ? path : "",
             s[j]->n_total_kernels, s[j]->n_total_kernels == 1 ? "" : "s", t,
             w[j]->simulated ? " (SIMULATED: replayed, not measured)" : "");
    lm_free(path);
    lm_report_wrap(out, j ? "   vs " : "Summary of ", line, 4, width);
    for (size_t i = 0; i < s[j]->n_implausible; i++) {
      snprintf(line, sizeof line, "[%zu] sysinfo.csv says %s %s, which cannot be right: %s", j + 1,
               s[j]->implausible[i].field, s[j]->implausible[i].value, s[j]->implausible[i].why);
      lm_report_wrap(out, "IMPLAUSIBLE: ", line, 2, width);
    }
  }
  if (n > 1) {
    double base = s[0]->total_ns;
    lm_buf d = {0};
    for (size_t j = 1; j < n; j++) {
      lm_report_time_text(s[j]->total_ns, t, sizeof t);
      lm_buf_printf(&d, "%sGPU time [%zu] %s", j > 1 ? "; " : "", j + 1, t);
      delta(&d, base, s[j]->total_ns);
    }
    lm_report_wrap(out, "", lm_buf_cstr(&d), 2, width);
    lm_buf_fini(&d);
  }
  /* (names shortened so that two kernels never look alike) */
  const char **full = lm_calloc(s[0]->n_kernels ? s[0]->n_kernels : 1, sizeof *full);
  if (!full) return LM_ENOMEM;
  for (size_t i = 0; i < s[0]->n_kernels; i++) full[i] = s[0]->kernels[i].name;
  char **names = lm_report_short_names(full, s[0]->n_kernels, width - 4);
  lm_free(full);
  if (!names) return LM_ENOMEM;
  for (size_t i = 0; i < s[0]->n_kernels; i++) {
    const lm_kernel_summary *b = &s[0]->kernels[i];
    snprintf(line, sizeof line, "%zu. ", i + 1);
    lm_buf_putc(out, '\n');
    lm_report_wrap(out, line, names[i] ? names[i] : "", 4, width);
    lm_free(names[i]);
    for (size_t j = 1; j < n; j++) {
      int loose = 0;
      const lm_kernel_summary *o = find_kernel(s[j], b->name, &loose);
      kernel_lines(b, o, loose, j, width, out);
    }
  }
  lm_free(names);
  /* Kernels only another workload's summary has. */
  for (size_t j = 1; j < n; j++)
    for (size_t q = 0; q < s[j]->n_kernels; q++) {
      int loose = 0;
      if (find_kernel(s[0], s[j]->kernels[q].name, &loose)) continue;
      char *name = lm_report_short_name(s[j]->kernels[q].name, width - 12, (size_t)-1);
      lm_report_time_text(s[j]->kernels[q].total_ns, t, sizeof t);
      snprintf(line, sizeof line, "only in [%zu]'s summary: %s (%s, %zu call%s)", j + 1, name ? name : "", t,
               s[j]->kernels[q].calls, s[j]->kernels[q].calls == 1 ? "" : "s");
      lm_free(name);
      lm_buf_putc(out, '\n');
      lm_report_wrap(out, "", line, 4, width);
    }
  return out->failed ? LM_ENOMEM : LM_OK;
}
