/*
 * fold.c - the fold of an Nsight Compute read: the shared table (src/fold)
 * with the device attributes the records give and the units warned of.
 */
#include <string.h>

#include "ncu/ncu_private.h"

lm_status lm_ncu_fold_new(const char *path, lm_ncu_fold **out, lm_diag *diag) {
  lm_ncu_fold *f = lm_calloc(1, sizeof *f);
  *out = f;
  if (!f) return lm_oom(diag, path);
  for (int i = 0; i < N_NCU_ATTRS; i++) f->attr[i] = LM_NAN;
  f->warned = lm_map_new();
  if (!f->warned) return lm_oom(diag, path);
  return lm_fold_new(path, &f->t, diag);
}

void lm_ncu_fold_free(lm_ncu_fold *f) {
  if (!f) return;
  lm_fold_free(f->t);
  lm_map_free(f->warned);
  lm_free(f);
}
