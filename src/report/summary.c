/*
 * summary.c - the guided-analysis summary as text (the first screen of
 * `lumen analyze`) and as JSON.
 *
 * Text fits a terminal width: every line is wrapped at words to `width`
 * characters, and kernel names too long for it are shortened (argument
 * lists, then nested template arguments, then the middle) in a way that
 * keeps two different kernels looking different: when two shortened names
 * would be equal, both show the part where the full names differ.
 */
#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "report/internal.h"
#include "report/report.h"

size_t lm_report_width(const char *s, size_t n) {
  size_t w = 0;
  for (size_t i = 0; i < n; i++) {
    if (s[i] == '\033' && i + 1 < n && s[i + 1] == '[') {
      while (i < n && s[i] != 'm') i++;
      continue;
    }
    if (((unsigned char)s[i] & 0xC0) != 0x80) w++;
  }
  return w;
}

static size_t width_of(const char *s) { return lm_report_width(s, strlen(s)); }

/* Byte offset of the n-th character of s (or its end). */
static size_t offset_of(const char *s, size_t n) {
  size_t i = 0, w = 0;
  while (s[i] && w < n) {
    i++;
    while (((unsigned char)s[i] & 0xC0) == 0x80) i++;
    w++;
  }
  return i;
}

/* name with template arguments below depth `keep` written as "…". */
static void collapse_templates(const char *name, int keep, lm_buf *out) {
  int depth = 0;
  for (const char *p = name; *p; p++) {
    if (*p == '<') {
      depth++;
      if (depth == keep + 1) lm_buf_puts(out, "<…");
      if (depth <= keep) lm_buf_putc(out, '<');
      continue;
    }
    if (*p == '>' && depth > 0) {
      if (depth == keep + 1) lm_buf_putc(out, '>');
      if (depth <= keep) lm_buf_putc(out, '>');
      depth--;
      continue;
    }
    if (depth <= keep) lm_buf_putc(out, *p);
  }
}

/* The middle of s replaced by "…", keeping `focus` (a character index
 * that must stay visible, or (size_t)-1) and fitting width characters. */
static char *elide(const char *s, size_t width, size_t focus) {
  size_t n = width_of(s);
  lm_buf b = {0};
  if (n <= width) {
    lm_buf_puts(&b, s);
  } else if (focus == (size_t)-1 || focus < width / 2 || focus + width / 4 >= n) {
    size_t head = (width - 1) * 2 / 3, tail = width - 1 - head;
    lm_buf_append(&b, s, offset_of(s, head));
    lm_buf_puts(&b, "…");
    lm_buf_puts(&b, s + offset_of(s, n - tail));
  } else {
    /* head … around the focus … tail */
    size_t head = (width - 2) / 3, tail = (width - 2) / 4, mid = width - 2 - head - tail;
    size_t from = focus > mid / 2 ? focus - mid / 2 : 0;
    if (from < head) from = head;
    if (from + mid > n - tail) from = n - tail - mid;
    lm_buf_append(&b, s, offset_of(s, head));
    lm_buf_puts(&b, "…");
    lm_buf_append(&b, s + offset_of(s, from), offset_of(s, from + mid) - offset_of(s, from));
    lm_buf_puts(&b, "…");
    lm_buf_puts(&b, s + offset_of(s, n - tail));
  }
  return lm_buf_take(&b);
}

/* The '(' that opens a demangled name's argument list: the last one
 * outside template arguments and other parentheses, or NULL. */
static const char *arg_list(const char *s) {
  int angle = 0, paren = 0;
  const char *last = NULL;
  for (const char *p = s; *p; p++) {
    if (*p == '<') angle++;
    else if (*p == '>' && angle > 0) angle--;
    else if (*p == '(') {
      if (!angle && !paren) last = p;
      paren++;
    } else if (*p == ')' && paren > 0) paren--;
  }
  return last;
}

char *lm_report_short_name(const char *name, size_t width, size_t focus) {
  char *safe = lm_text_safe(name, 0);
  if (!safe) return NULL;
  if (width_of(safe) <= width || width < 12) return safe;
  if (focus != (size_t)-1) {
    /* Two kernels that would look alike: keep where they differ. */
    char *out = elide(safe, width, focus);
    lm_free(safe);
    return out;
  }
  /* The argument list of a demangled name goes first, then template
   * arguments from the innermost out; what is still too long loses its
   * middle. */
  lm_buf b = {0};
  const char *args = arg_list(safe);
  size_t keep = args && args != safe ? (size_t)(args - safe) : strlen(safe);
  lm_buf_append(&b, safe, keep);
  if (keep < strlen(safe)) lm_buf_puts(&b, "(…)");
  char *cur = lm_buf_take(&b);
  for (int depth = 2; cur && width_of(cur) > width && depth >= 0; depth--) {
    lm_buf c = {0};
    collapse_templates(cur, depth, &c);
    char *next = lm_buf_take(&c);
    if (!next) break;
    lm_free(cur);
    cur = next;
  }
  lm_free(safe);
  if (!cur || width_of(cur) <= width) return cur;
  char *out = elide(cur, width, (size_t)-1);
  lm_free(cur);
  return out;
}

char **lm_report_short_names(const char *const *full, size_t n, size_t width) {
  char **names = lm_calloc(n ? n : 1, sizeof *names);
  if (!names) return NULL;
  for (size_t i = 0; i < n; i++) names[i] = lm_report_short_name(full[i], width, (size_t)-1);
  for (size_t i = 0; i < n; i++)
    for (size_t j = 0; j < n; j++) {
      if (i == j || !names[i] || !names[j] || strcmp(names[i], names[j]) != 0) continue;
      if (strcmp(full[i], full[j]) == 0) continue;
      const char *a = full[i], *b = full[j];
      size_t p = 0;
      while (a[p] && a[p] == b[p]) p++;
      size_t chars = width_of(a) - width_of(a + p);
      for (size_t k = 0; k < 2; k++) {
        size_t idx = k ? j : i;
        lm_free(names[idx]);
        names[idx] = lm_report_short_name(full[idx], width, chars);
      }
    }
  return names;
}

/* Shortened names for all kernels of a summary. */
static char **short_names(const lm_summary *s, size_t width) {
  const char **full = lm_calloc(s->n_kernels ? s->n_kernels : 1, sizeof *full);
  if (!full) return NULL;
  for (size_t i = 0; i < s->n_kernels; i++) full[i] = s->kernels[i].name;
  char **names = lm_report_short_names(full, s->n_kernels, width);
  lm_free(full);
  return names;
}

void lm_report_wrap(lm_buf *out, const char *lead, const char *text, size_t indent, size_t width) {
  char *safe = lm_text_safe(text, 0);
  if (!safe) {
    out->failed = 1;
    return;
  }
  lm_buf_puts(out, lead);
  size_t col = width_of(lead);
  const char *p = safe;
  int first = 1;
  while (*p) {
    while (*p == ' ') p++;
    if (!*p) break;
    const char *e = p;
    while (*e && *e != ' ') e++;
    char word[1024];
    size_t len = (size_t)(e - p) < sizeof word - 1 ? (size_t)(e - p) : sizeof word - 1;
    memcpy(word, p, len);
    word[len] = '\0';
    size_t w = width_of(word);
    if (!first && col + 1 + w > width) {
      lm_buf_putc(out, '\n');
      for (size_t i = 0; i < indent; i++) lm_buf_putc(out, ' ');
      col = indent;
      first = 1;
    }
    if (!first) {
      lm_buf_putc(out, ' ');
      col++;
    }
    if (col + w > width && width > indent + 2) {
      /* A word longer than the line: cut it. */
      char *cut = lm_text_safe(word, width - col);
      lm_buf_puts(out, cut ? cut : "");
      col += cut ? width_of(cut) : 0;
      lm_free(cut);
    } else {
      lm_buf_puts(out, word);
      col += w;
    }
    first = 0;
    p = e;
  }
  lm_buf_putc(out, '\n');
  lm_free(safe);
}

void lm_report_time_text(double ns, char *out, size_t cap) {
  if (isnan(ns)) snprintf(out, cap, "n/a");
  else if (ns >= 1e9) snprintf(out, cap, "%.2f s", ns / 1e9);
  else if (ns >= 1e6) snprintf(out, cap, "%.2f ms", ns / 1e6);
  else if (ns >= 1e3) snprintf(out, cap, "%.1f µs", ns / 1e3);
  else snprintf(out, cap, "%.0f ns", ns);
}

/* The roofline as text: log-log axes, the HBM and FP32 ceilings of the
 * first placed kernel, and each placed kernel as its number. */
static void text_roofline(const lm_summary *s, size_t width, lm_buf *out) {
  const lm_kernel_summary *ref = NULL;
  for (size_t i = 0; i < s->n_kernels && !ref; i++) {
    const lm_kernel_summary *k = &s->kernels[i];
    if (isfinite(k->roof_pct) && isfinite(k->roof_bw) && isfinite(k->roof_peak) && k->roof_bw > 0 &&
        k->roof_peak > 0)
      ref = k;
  }
  if (!ref) return;
  double bw = ref->roof_bw, peak = ref->roof_peak, ridge = peak / bw;
  double x0 = log10(ridge) - 3, x1 = log10(ridge) + 2, y1 = log10(peak) + 0.5, y0 = y1 - 5;
  for (size_t i = 0; i < s->n_kernels; i++) {
    const lm_kernel_summary *k = &s->kernels[i];
    if (!isfinite(k->roof_pct) || !(k->intensity > 0) || !(k->gflops > 0)) continue;
    double lx = log10(k->intensity), ly = log10(k->gflops);
    if (lx < x0) x0 = floor(lx);
    if (lx > x1) x1 = ceil(lx);
    if (ly < y0) y0 = floor(ly);
  }
  size_t cols = width > 20 ? width - 12 : 8, rows = 12;
  if (cols > 64) cols = 64;
  char grid[12][65];
  for (size_t r = 0; r < rows; r++) {
    memset(grid[r], ' ', cols);
    grid[r][cols] = '\0';
  }
  for (size_t c = 0; c < cols; c++) {
    double lx = x0 + (x1 - x0) * ((double)c + 0.5) / (double)cols;
    double roof = fmin(pow(10, lx) * bw, peak);
    double fy = (log10(roof) - y0) / (y1 - y0) * (double)rows;
    if (!(fy >= 0 && fy < (double)rows)) continue; /* NaN too */
    size_t r = rows - 1 - (size_t)fy;
    grid[r][c] = pow(10, lx) * bw < peak ? '/' : '-';
  }
  for (size_t i = 0; i < s->n_kernels && i < 9; i++) {
    const lm_kernel_summary *k = &s->kernels[i];
    if (!isfinite(k->roof_pct) || !(k->intensity > 0) || !(k->gflops > 0)) continue;
    double fx = (log10(k->intensity) - x0) / (x1 - x0) * (double)cols;
    double fy = (log10(k->gflops) - y0) / (y1 - y0) * (double)rows;
    if (!(fx >= 0 && fx < (double)cols && fy >= 0 && fy < (double)rows)) continue; /* NaN too */
    grid[rows - 1 - (size_t)fy][(size_t)fx] = (char)('1' + i);
  }
  lm_buf_printf(out, "\nroofline at %s (%s): GFLOP/s over FLOP/byte, log scales\n",
                ref->roof_memory ? ref->roof_memory : "HBM", ref->roof_source);
  lm_buf_printf(out, "/ %.0f GB/s bandwidth, - %.0f GFLOP/s %s peak, 1-%zu the kernels\n", bw, peak,
                ref->roof_type ? ref->roof_type : "", s->n_kernels < 9 ? s->n_kernels : 9);
  for (size_t r = 0; r < rows; r++) {
    double ly = y0 + (y1 - y0) * (double)(rows - r) / (double)rows;
    if (r % 3 == 0) lm_buf_printf(out, "%9.3g |%s\n", pow(10, ly), grid[r]);
    else lm_buf_printf(out, "%9s |%s\n", "", grid[r]);
  }
  lm_buf_printf(out, "%9s +", "");
  for (size_t c = 0; c < cols; c++) lm_buf_putc(out, '-');
  lm_buf_printf(out, "\n%9s %-*.3g%*.3g\n", "", (int)(cols / 2), pow(10, x0), (int)(cols - cols / 2), pow(10, x1));
}

static const char *const marks[] = {"i", "!", "!!"};

lm_status lm_report_summary_text(const lm_summary *s, const lm_workload *w, size_t width, int color,
                                 lm_buf *out) {
  if (width < 40) width = 40;
  char total[32];
  lm_report_time_text(s->total_ns, total, sizeof total);
  const char *model = lm_sysinfo_text(&w->sysinfo, "gpu_model");
  char head[512];
  snprintf(head, sizeof head, "Summary: %zu kernel%s, %s of GPU time%s%s%s%s", s->n_total_kernels,
           s->n_total_kernels == 1 ? "" : "s", total, model && *model ? " on " : "", model ? model : "",
           w->arch ? " " : "", w->arch ? w->arch : "");
  lm_report_wrap(out, "", head, 2, width);
  if (w->simulated)
    lm_report_wrap(out, "SIMULATED: ",
            "these numbers come from the simulated device, which replays a recording; nothing was measured",
            2, width);
  if (s->n_kernels < s->n_total_kernels) {
    snprintf(head, sizeof head, "(the %zu that take the most time; --full shows every panel)", s->n_kernels);
    lm_report_wrap(out, "", head, 2, width);
  }
  if (s->rules_error) lm_report_wrap(out, "rules not evaluated: ", s->rules_error, 4, width);
  for (size_t i = 0; i < s->n_implausible; i++) {
    const lm_implausible *b = &s->implausible[i];
    lm_buf t = {0};
    lm_buf_printf(&t, "sysinfo.csv says %s %s", b->field, b->value);
    if (!isnan(b->expected)) lm_buf_printf(&t, ", the GPU's facts %g", b->expected);
    lm_buf_printf(&t, " (%s): percentages of peak that rest on it are not real; those above 100 %% are not ranked",
                  b->why);
    lm_report_wrap(out, "IMPLAUSIBLE: ", lm_buf_cstr(&t), 2, width);
    lm_buf_fini(&t);
  }
  if (!(s->total_ns > 0))
    lm_report_wrap(out, "",
            "(no durations: End_Timestamp equals Start_Timestamp in this workload, so time shares "
            "and every rate are unknown or infinite)",
            1, width);
  char **names = short_names(s, width - 4);
  if (!names) return LM_ENOMEM;
  for (size_t i = 0; i < s->n_kernels; i++) {
    const lm_kernel_summary *k = &s->kernels[i];
    char line[1024], t1[32], t2[32];
    lm_buf_putc(out, '\n');
    snprintf(line, sizeof line, "%zu. ", i + 1);
    lm_report_wrap(out, line, names[i] ? names[i] : "", 4, width);
    lm_report_time_text(k->total_ns, t1, sizeof t1);
    lm_report_time_text(k->mean_ns, t2, sizeof t2);
    snprintf(line, sizeof line, "%.1f %% of the time: %zu call%s, %s in all, %s each",
             isnan(k->share) ? 0.0 : k->share * 100, k->calls, k->calls == 1 ? "" : "s", t1, t2);
    lm_report_wrap(out, "   ", line, 5, width);
    static const char *const kinds[] = {"memory", "issue", "occupancy"};
    if (k->n_highlights) {
      lm_buf hl = {0};
      lm_buf_puts(&hl, "top limiters:");
      for (size_t h = 0; h < k->n_highlights; h++)
        lm_buf_printf(&hl, "%s %s %.0f %% of peak (%s)", h ? ";" : "", k->highlights[h].name, k->highlights[h].pct,
                      kinds[k->highlights[h].kind]);
      lm_report_wrap(out, "   ", lm_buf_cstr(&hl), 5, width);
      lm_buf_fini(&hl);
    }
    if (k->n_above) {
      lm_buf hl = {0};
      lm_buf_puts(&hl, "above 100 % of the peak, so the peak or the counts cannot be right (not ranked):");
      for (size_t h = 0; h < k->n_above; h++)
        lm_buf_printf(&hl, "%s %s %.0f %%", h ? ";" : "", k->above[h].name, k->above[h].pct);
      lm_report_wrap(out, "   ", lm_buf_cstr(&hl), 5, width);
      lm_buf_fini(&hl);
    }
    const char *mem = k->roof_memory ? k->roof_memory : "HBM";
    if (!isnan(k->roof_pct) && k->roof_pct > 100.5)
      snprintf(line, sizeof line,
               "roofline (%s): mostly %s work, %.3g FLOP/byte at %s, %.3g GFLOP/s, above the attainable %.3g "
               "GFLOP/s (%.0f %%): a ceiling is too low, so no bound is given",
               k->roof_source, k->roof_type, k->intensity, mem, k->gflops, k->attainable, k->roof_pct);
    else if (!isnan(k->roof_pct))
      snprintf(line, sizeof line,
               "roofline (%s): mostly %s work, %.3g FLOP/byte at %s, %.3g GFLOP/s = %.0f %% of the attainable "
               "%.3g GFLOP/s: %s-bound %s %s",
               k->roof_source, k->roof_type, k->intensity, mem, k->gflops, k->roof_pct, k->attainable, k->roof_bound,
               strcmp(k->roof_bound, "memory") == 0 ? "at" : "on", k->roof_limit);
    else
      snprintf(line, sizeof line, "roofline: not placed (%s)", k->roof_reason ? k->roof_reason : "no data");
    if (!isnan(k->roof_pct) && k->roof_partial) {
      size_t used = strlen(line);
      snprintf(line + used, sizeof line - used, "; counting only the arithmetic collected (%s and others were not)",
               k->roof_partial);
    }
    lm_report_wrap(out, "   ", line, 5, width);
    if (k->n_unknown_rules) {
      snprintf(line, sizeof line, "%s%zu of %zu rules could not be evaluated: what they read was not collected (%s%s)",
               k->n_findings ? "" : "no rule fired; ", k->n_unknown_rules, k->n_rules, k->unknown_metric,
               k->n_unknown_rules > 1 ? ", ..." : "");
      lm_report_wrap(out, "   ", line, 5, width);
    } else if (!k->n_findings) {
      lm_report_wrap(out, "   ", "no rule fired", 5, width);
    }
    for (size_t f = 0; f < k->n_findings; f++) {
      const lm_finding *fd = &k->findings[f];
      char lead[64];
      /* The mark carries the severity's colour; the codes add no width. */
      static const char *const tints[] = {"\033[36m", "\033[33m", "\033[1;31m"};
      if (color)
        snprintf(lead, sizeof lead, "   %s%-2s\033[0m ", tints[fd->rule->severity], marks[fd->rule->severity]);
      else
        snprintf(lead, sizeof lead, "   %-2s ", marks[fd->rule->severity]);
      lm_buf v = {0};
      lm_buf_puts(&v, fd->verdict);
      if (!isnan(fd->gain) && fd->gain > 0) lm_buf_printf(&v, " (up to %.0f %% of its time)", fd->gain * 100);
      lm_buf_printf(&v, " [%s]", fd->rule->id);
      if (fd->above)
        lm_buf_printf(&v, " (rests on %s at %.0f %% of its peak, which cannot be right)", fd->above, fd->above_pct);
      lm_report_wrap(out, lead, lm_buf_cstr(&v), 6, width);
      lm_buf_fini(&v);
      /* What triggered it, and what to do. */
      if (fd->n_evidence) {
        lm_buf e = {0};
        lm_buf_puts(&e, "from:");
        for (size_t m = 0; m < fd->n_evidence; m++) {
          const lm_evidence *x = &fd->evidence[m];
          lm_buf_printf(&e, "%s %s", m ? ";" : "", x->metric);
          int pct_unit = x->unit && strcmp(x->unit, "Pct") == 0;
          if (isinf(x->value)) lm_buf_puts(&e, " n/a (no duration)");
          else if (!isnan(x->value))
            lm_buf_printf(&e, " %.3g%s%s", x->value, pct_unit || (x->unit && *x->unit) ? " " : "",
                          pct_unit ? "%" : x->unit);
          if (isfinite(x->pct) && !pct_unit)
            lm_buf_printf(&e, " (%.0f %% of peak)", x->pct);
        }
        lm_report_wrap(out, "      ", lm_buf_cstr(&e), 6, width);
        lm_buf_fini(&e);
      }
      if (fd->rule->severity > 0 && fd->rule->explain && *fd->rule->explain)
        lm_report_wrap(out, "      → ", fd->rule->explain, 8, width);
    }
  }
  for (size_t i = 0; i < s->n_kernels; i++) lm_free(names[i]);
  lm_free(names);
  text_roofline(s, width, out);
  return out->failed ? LM_ENOMEM : LM_OK;
}

static cJSON *num_or_null(double v) { return isnan(v) || isinf(v) ? cJSON_CreateNull() : cJSON_CreateNumber(v); }

void *lm_report_summary_json(const lm_summary *s) {
  cJSON *o = cJSON_CreateObject();
  cJSON_AddNumberToObject(o, "kernels_total", (double)s->n_total_kernels);
  cJSON_AddItemToObject(o, "total_ns", num_or_null(s->total_ns));
  if (s->rules_error) cJSON_AddStringToObject(o, "rules_error", s->rules_error);
  cJSON *bad = cJSON_AddArrayToObject(o, "implausible_sysinfo");
  for (size_t i = 0; i < s->n_implausible; i++) {
    cJSON *x = cJSON_CreateObject();
    cJSON_AddStringToObject(x, "field", s->implausible[i].field);
    cJSON_AddStringToObject(x, "value", s->implausible[i].value);
    cJSON_AddItemToObject(x, "expected", num_or_null(s->implausible[i].expected));
    cJSON_AddStringToObject(x, "why", s->implausible[i].why);
    cJSON_AddItemToArray(bad, x);
  }
  cJSON *ks = cJSON_AddArrayToObject(o, "kernels");
  for (size_t i = 0; i < s->n_kernels; i++) {
    const lm_kernel_summary *k = &s->kernels[i];
    cJSON *j = cJSON_CreateObject();
    cJSON_AddStringToObject(j, "name", k->name);
    cJSON_AddNumberToObject(j, "calls", (double)k->calls);
    cJSON_AddItemToObject(j, "total_ns", num_or_null(k->total_ns));
    cJSON_AddItemToObject(j, "mean_ns", num_or_null(k->mean_ns));
    cJSON_AddItemToObject(j, "share", num_or_null(k->share));
    static const char *const kinds[] = {"memory", "issue", "occupancy"};
    for (int which = 0; which < 2; which++) {
      const lm_highlight *list = which ? k->above : k->highlights;
      size_t count = which ? k->n_above : k->n_highlights;
      cJSON *hs = cJSON_AddArrayToObject(j, which ? "above_peak" : "highlights");
      for (size_t h = 0; h < count; h++) {
        cJSON *x = cJSON_CreateObject();
        cJSON_AddStringToObject(x, "metric", list[h].name);
        cJSON_AddStringToObject(x, "limits", kinds[list[h].kind]);
        cJSON_AddItemToObject(x, "value", num_or_null(list[h].value));
        cJSON_AddStringToObject(x, "unit", list[h].unit ? list[h].unit : "");
        cJSON_AddItemToObject(x, "peak", num_or_null(list[h].peak));
        cJSON_AddItemToObject(x, "pct", num_or_null(list[h].pct));
        cJSON_AddItemToArray(hs, x);
      }
    }
    cJSON *r = cJSON_AddObjectToObject(j, "roofline");
    cJSON_AddItemToObject(r, "intensity", num_or_null(k->intensity));
    cJSON_AddItemToObject(r, "gflops", num_or_null(k->gflops));
    cJSON_AddItemToObject(r, "attainable_gflops", num_or_null(k->attainable));
    cJSON_AddItemToObject(r, "pct_of_attainable", num_or_null(k->roof_pct));
    cJSON_AddItemToObject(r, "ceiling_hbm_gbs", num_or_null(k->roof_bw));
    cJSON_AddItemToObject(r, "ceiling_gflops", num_or_null(k->roof_peak));
    if (k->roof_type) cJSON_AddStringToObject(r, "type", k->roof_type);
    if (k->roof_limit && !(k->roof_pct > 100.5)) cJSON_AddStringToObject(r, "limit", k->roof_limit);
    if (k->roof_bound && !(k->roof_pct > 100.5)) cJSON_AddStringToObject(r, "bound", k->roof_bound);
    if (k->roof_pct > 100.5) cJSON_AddBoolToObject(r, "above_attainable", 1);
    if (k->roof_source) cJSON_AddStringToObject(r, "source", k->roof_source);
    if (k->roof_reason) cJSON_AddStringToObject(r, "not_placed", k->roof_reason);
    if (k->roof_unmeasurable) cJSON_AddStringToObject(r, "not_measurable", k->roof_unmeasurable->what);
    if (k->roof_partial && !isnan(k->roof_pct)) cJSON_AddStringToObject(r, "ops_not_collected", k->roof_partial);
    if (k->roof_memory) cJSON_AddStringToObject(r, "memory", k->roof_memory);
    if (k->n_unknown_rules) {
      cJSON_AddNumberToObject(j, "rules_not_evaluated", (double)k->n_unknown_rules);
      cJSON_AddNumberToObject(j, "rules_applied", (double)k->n_rules);
      cJSON_AddStringToObject(j, "rules_not_evaluated_metric", k->unknown_metric);
    }
    cJSON *fs = cJSON_AddArrayToObject(j, "findings");
    for (size_t f = 0; f < k->n_findings; f++) {
      const lm_finding *fd = &k->findings[f];
      cJSON *x = cJSON_CreateObject();
      cJSON_AddStringToObject(x, "rule", fd->rule->id);
      cJSON_AddStringToObject(x, "severity", lm_rule_severity_name(fd->rule->severity));
      cJSON_AddStringToObject(x, "verdict", fd->verdict);
      cJSON_AddStringToObject(x, "explain", fd->rule->explain);
      cJSON_AddStringToObject(x, "source", fd->rule->source);
      cJSON *u = cJSON_AddArrayToObject(x, "uses");
      for (int32_t m = 0; m < fd->rule->n_uses; m++) cJSON_AddItemToArray(u, cJSON_CreateString(fd->rule->uses[m]));
      cJSON_AddItemToObject(x, "gain", num_or_null(fd->gain));
      cJSON *ev = cJSON_AddArrayToObject(x, "evidence");
      for (size_t m = 0; m < fd->n_evidence; m++) {
        cJSON *y = cJSON_CreateObject();
        cJSON_AddStringToObject(y, "metric", fd->evidence[m].metric);
        cJSON_AddItemToObject(y, "value", num_or_null(fd->evidence[m].value));
        cJSON_AddStringToObject(y, "unit", fd->evidence[m].unit ? fd->evidence[m].unit : "");
        cJSON_AddItemToObject(y, "pct", num_or_null(fd->evidence[m].pct));
        cJSON_AddItemToArray(ev, y);
      }
      if (fd->above) {
        cJSON_AddStringToObject(x, "above_peak_metric", fd->above);
        cJSON_AddItemToObject(x, "above_peak_pct", num_or_null(fd->above_pct));
      }
      cJSON_AddItemToArray(fs, x);
    }
    cJSON_AddItemToArray(ks, j);
  }
  return o;
}

void lm_report_list_rules(const lm_ruleset *rules, int verbose, lm_buf *out) {
  for (size_t i = 0; i < rules->n_rules; i++) {
    const lm_rule *r = &rules->rules[i];
    lm_buf_printf(out, "%-20s %-8s ", r->id, lm_rule_severity_name(r->severity));
    lm_buf when = {0};
    lm_expr_print(r->when, &when);
    lm_buf_printf(out, "%s\n", lm_buf_cstr(&when));
    lm_buf_fini(&when);
    if (verbose) {
      lm_buf_printf(out, "    %s\n    source: %s\n    (%s:%ld)\n", r->explain, r->source, r->file, r->line);
    }
  }
}
