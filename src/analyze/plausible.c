/*
 * plausible.c - is a folder's sysinfo.csv physically possible for its GPU?
 *
 * Every peak and roofline ceiling scales with a few sysinfo fields
 * (clocks, compute units, XCDs, L2 and HBM channels), which profilers have
 * recorded wrong. The checks compare the fields with each other and with
 * the architecture's facts, and give, for each field that cannot be
 * right, the value the facts give. Invariant: the panels keep the
 * reference's numbers; only the summary uses the findings, to flag
 * figures above their peak. Examples: docs/rules.md ("Implausible
 * system information").
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "analyze/analyze.h"

/* The most compute units one XCD (one die or GCD) of an architecture
 * holds, from the vendors' CDNA whitepapers: Vega 20 64, CDNA1 120 (of
 * 128), CDNA2 112 per GCD (110 enabled), CDNA3 40 per XCD (38 enabled),
 * CDNA4 36 per XCD (32 enabled). */
static const struct {
  const char *arch;
  int cus_per_xcd;
} xcd_facts[] = {{"gfx906", 64}, {"gfx908", 128}, {"gfx90a", 112}, {"gfx940", 40},
                 {"gfx941", 40}, {"gfx942", 40},  {"gfx950", 36}};

static double field(const lm_sysinfo *si, const char *name) {
  long i = lm_sysinfo_find(si, name);
  return i < 0 ? LM_NAN : si->values[i];
}

static int present(const lm_sysinfo *si, const char *name) { return lm_sysinfo_find(si, name) >= 0; }

static void add(lm_implausible *out, size_t cap, size_t *n, const lm_sysinfo *si, const char *name, double expected,
                const char *fmt, ...) __attribute__((format(printf, 7, 8)));

static void add(lm_implausible *out, size_t cap, size_t *n, const lm_sysinfo *si, const char *name, double expected,
                const char *fmt, ...) {
  if (*n >= cap) {
    (*n)++;
    return;
  }
  lm_implausible *p = &out[(*n)++];
  memset(p, 0, sizeof *p);
  p->field = name;
  const char *text = lm_sysinfo_text(si, name);
  snprintf(p->value, sizeof p->value, "%s", text && *text ? text : "blank");
  p->expected = expected;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(p->why, sizeof p->why, fmt, ap);
  va_end(ap);
}

size_t lm_analyze_check_sysinfo(const lm_workload *w, const lm_catalog *cat, lm_implausible *out, size_t cap) {
  size_t n = 0;
  if (!w || !cat || (cat->vendor && strcmp(cat->vendor, "amd") != 0)) return 0;
  const lm_sysinfo *si = &w->sysinfo;
  const char *arch = cat->arch;
  /* Clocks: every peak is a count per cycle times a clock. */
  double sclk = field(si, "max_sclk"), mclk = field(si, "max_mclk");
  if (present(si, "max_sclk") && !(sclk >= 300 && sclk <= 4000))
    add(out, cap, &n, si, "max_sclk", LM_NAN,
        "an engine clock of %s MHz is not one a GPU runs at (300 to 4000): every peak that scales with it is wrong",
        lm_sysinfo_text(si, "max_sclk"));
  if (present(si, "max_mclk") && lm_sysinfo_text(si, "max_mclk")[0] && !(mclk >= 100 && mclk <= 4000))
    add(out, cap, &n, si, "max_mclk", LM_NAN,
        "a memory clock of %s MHz is not one HBM runs at (100 to 4000): the HBM peak is wrong",
        lm_sysinfo_text(si, "max_mclk"));
  /* Compute units per XCD. */
  int per_xcd = 0;
  for (size_t i = 0; i < sizeof xcd_facts / sizeof *xcd_facts; i++)
    if (strcmp(xcd_facts[i].arch, arch) == 0) per_xcd = xcd_facts[i].cus_per_xcd;
  double cus = field(si, "cu_per_gpu"), xcds = field(si, "num_xcd");
  if (present(si, "cu_per_gpu") && !(cus >= 1 && cus <= 4096))
    add(out, cap, &n, si, "cu_per_gpu", LM_NAN, "%s compute units cannot be right", lm_sysinfo_text(si, "cu_per_gpu"));
  double xcd_eff = xcds >= 1 ? xcds : 1;
  if (per_xcd && cus >= 1 && cus <= 4096 && xcds >= 1 && cus / xcds > per_xcd) {
    double need = ceil(cus / per_xcd);
    add(out, cap, &n, si, "num_xcd", need,
        "%.0f compute units do not fit in %.0f %s XCD%s (%d compute units each at most): at least %.0f", cus, xcds,
        arch, xcds == 1 ? "" : "s", per_xcd, need);
    xcd_eff = need;
  }
  /* L2 channels: the architecture's count per XCD. */
  double chan = field(si, "total_l2_chan");
  double want_chan = cat->l2_channels_per_xcd > 0 ? cat->l2_channels_per_xcd * xcd_eff : LM_NAN;
  if (present(si, "total_l2_chan") && !isnan(want_chan) && chan != want_chan)
    add(out, cap, &n, si, "total_l2_chan", want_chan, "%s has %d L2 channels per XCD: %.0f for %.0f XCD%s", arch,
        cat->l2_channels_per_xcd, want_chan, xcd_eff, xcd_eff == 1 ? "" : "s");
  /* HBM bandwidth: 32 bytes per channel per memory clock, with one HBM
   * channel per L2 channel from CDNA1 on (num_hbm_channels when given). */
  double hbm = field(si, "hbm_bw"), hbm_chan = field(si, "num_hbm_channels");
  int hbm_per_l2 = strcmp(arch, "gfx906") != 0;
  double channels = hbm_chan > 0 ? hbm_chan : hbm_per_l2 ? want_chan : LM_NAN;
  if (hbm_chan > 0 && !isnan(want_chan) && hbm_per_l2 && hbm_chan != want_chan)
    add(out, cap, &n, si, "num_hbm_channels", want_chan, "%s has one HBM channel per L2 channel: %.0f", arch,
        want_chan);
  if (hbm_chan > 0 && !isnan(want_chan) && hbm_per_l2) channels = want_chan;
  if (present(si, "hbm_bw") && mclk >= 100 && mclk <= 4000 && channels > 0) {
    double want = mclk / 1000 * 32 * channels;
    if (!(fabs(hbm - want) <= 0.05 * want))
      add(out, cap, &n, si, "hbm_bw", want, "%.0f channels at %.0f MHz move %.1f GB/s (32 bytes per channel per clock)",
          channels, mclk, want);
  }
  return n;
}
