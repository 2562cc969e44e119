/*
 * catalog.c - which metric definitions analyze a workload: the built-in
 * catalog of its architecture in the reference version asked for, or
 * those compiled from --metrics-dir; for an NVIDIA architecture without
 * definitions (an Nsight Compute export from such a GPU), the panels that
 * read no counter; for per-kernel totals of no known architecture, any
 * definitions' top-kernels table. Every refusal names the field and what
 * to do.
 */
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "cli/cli.h"
#include "store/store.h"
#include "metrics/metrics.h"

#define MODE "analyze"

/* The catalog for `arch` in reference version compat (NULL: the default):
 * built in, or compiled from --metrics-dir. */
const lm_catalog *cli_catalog_for(const char *arch, const char *metrics_dir, const char *compat,
                                  const char *sysinfo_path, lm_catalog **owned) {
  lm_diag diag;
  lm_diag_clear(&diag);
  *owned = NULL;
  if (metrics_dir) {
    char path[4096];
    snprintf(path, sizeof path, "%s/arch.yaml", metrics_dir);
    struct stat st;
    const char *dir = metrics_dir;
    char sub[4096];
    if (stat(path, &st) != 0) {
      snprintf(sub, sizeof sub, "%s/%s", metrics_dir, arch);
      if (stat(sub, &st) != 0 || !S_ISDIR(st.st_mode)) {
        cli_error(MODE,
                  "--metrics-dir %s: no arch.yaml and no %s/ folder for this workload's "
                  "architecture",
                  metrics_dir, arch);
        return NULL;
      }
      dir = sub;
    }
    uint64_t t0 = lm_phase_begin();
    if (lm_metrics_compile_dir_compat(dir, NULL, 0, compat, owned, &diag) != LM_OK) {
      cli_diag(MODE, &diag);
      return NULL;
    }
    lm_phase_end("compile metrics", t0);
    if (strcmp((*owned)->arch, arch) != 0) {
      cli_error(MODE, "--metrics-dir %s: the definitions are for %s but the workload is %s", dir, (*owned)->arch, arch);
      lm_catalog_free(*owned);
      *owned = NULL;
      return NULL;
    }
    return *owned;
  }
  const lm_catalog *cat = compat ? lm_metrics_builtin_compat(arch, compat) : lm_metrics_builtin(arch);
  const lm_catalog *any = lm_metrics_builtin(arch);
  if (!cat && any && strcmp(any->vendor, "amd") != 0) {
    cli_error(MODE,
              "--compat %s: the versions are rocprofiler-compute's, for AMD GPUs; %s is "
              "a %s architecture",
              compat, arch, any->vendor);
    return NULL;
  }
  if (!cat && any) {
    lm_buf list = {0};
    for (const char *const *v = lm_compat_versions; *v; v++)
      if (lm_metrics_builtin_compat(arch, *v)) lm_buf_printf(&list, "%s%s", list.len ? ", " : "", *v);
    cli_error(MODE,
              "--compat %s: %s has metric definitions only in the semantics of "
              "rocprofiler-compute %s (version %s does not support this GPU); use --compat %s",
              compat, arch, lm_buf_cstr(&list), compat, any->compat);
    lm_buf_fini(&list);
    return NULL;
  }
  if (cat && !compat && strcmp(cat->compat, lm_compat_versions[0]) != 0)
    lm_log(LM_LOG_WARN,
           "%s: analyzed in rocprofiler-compute %s semantics, the oldest lumen has "
           "for this GPU (--compat %s)",
           arch, cat->compat, cat->compat);
  if (!cat) {
    lm_buf list = {0};
    for (const char *const *a = lm_metrics_builtin_list(); *a; a++)
      lm_buf_printf(&list, "%s%s", a == lm_metrics_builtin_list() ? "" : ", ", *a);
    cli_error(MODE,
              "%s: field 'gpu_arch': %s has no metric definitions (supported: %s; "
              "--metrics-dir DIR adds your own)",
              sysinfo_path, arch, lm_buf_cstr(&list));
    lm_buf_fini(&list);
  }
  return cat;
}

/* An NVIDIA architecture lumen has no definitions for (an export of
 * Nsight Compute from such a GPU): the panels that read no counter (top
 * kernels, dispatch list, system information) from another NVIDIA
 * architecture's definitions, with a warning; NULL for any other. */
const lm_catalog *cli_undefined_nvidia(const char *arch, const char *metrics_dir) {
  if (metrics_dir || !arch || strncmp(arch, "sm_", 3) != 0 || lm_metrics_builtin(arch)) return NULL;
  const lm_catalog *cat = lm_metrics_builtin("sm_80");
  if (cat)
    lm_log(LM_LOG_WARN,
           "%s has no metric definitions: only the top kernels, the dispatch list and the system "
           "information are shown (panels 0 and 1)",
           arch);
  return cat;
}

const lm_catalog *cli_layout_catalog(void) {
  const lm_catalog *cat = lm_store_totals_catalog();
  if (!cat) cli_error(MODE, "no built-in definitions to lay out the top-kernels table");
  return cat;
}

void cli_totals_line(const char *path, lm_buf *out) {
  lm_buf_printf(out,
                "%s holds per-kernel totals only (rocprof --stats): the top kernels, their medians unknown, are all it "
                "can show; no other panel, metric, roofline or summary (those need the dispatches: results.csv)\n",
                path);
}
