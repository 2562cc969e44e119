/*
 * devices.h - what lumen knows of each GPU architecture's products: the
 * system information a profile on a typical product of the architecture
 * would record. Readers of files that record no system information (or
 * only part of it) complete theirs from here and say which values they
 * assumed. Sources of each figure: docs/formats.md ("Assumed system
 * information"). Also how the metrics name a counter summed over the
 * instances of its block.
 */
#ifndef LUMEN_DEVICES_H
#define LUMEN_DEVICES_H

#include <stddef.h>

#include "base/base.h"
#include "model/model.h"

/* lm_devices_product: the product whose figures stand for architecture
 * arch ("MI300X" for gfx942), or NULL when lumen knows none. */
const char *lm_devices_product(const char *arch);

/* lm_devices_field: the figure of architecture arch's typical product for
 * system information field `field` ("960" for gfx1100's hbm_bw), in the
 * units of its vendor's fields, or NULL when lumen knows no product of
 * arch or no figure of that field. Borrowed: static storage. */
const char *lm_devices_field(const char *arch, const char *field);

/* lm_devices_sysinfo: w's system information (sysinfo_table, sysinfo,
 * arch) for architecture arch: the n_known fields keys/values the file
 * recorded (none NULL), then every field of the architecture's typical
 * product that they lack. assumed (cap bytes) receives the assumed fields
 * as "name value" pairs separated by ", " ("" when none was assumed).
 * path names the file in errors. LM_EARCH when lumen knows no product of
 * arch and the known fields lack gpu_arch's basic figures (cu_per_gpu,
 * max_sclk). */
lm_status lm_devices_sysinfo(lm_workload *w, const char *arch, const char *const *keys, const char *const *values,
                             size_t n_known, const char *path, char *assumed, size_t cap, lm_diag *diag);

/* lm_devices_sum_alias: the name under which the metrics read counter
 * `name` summed over its instances, for the blocks whose counters have
 * instances (TA, TCC, TCP, TD): "TCC_HIT" -> "TCC_HIT_sum", written to out
 * (cap bytes); 1 when there is one, 0 for other counters, a counter named
 * with an instance ("TCC_HIT[3]") or already a sum. Profilers that sum
 * over instances when none is named (rocprofv3, rocprof) store both. */
int lm_devices_sum_alias(const char *name, char *out, size_t cap);

#endif
