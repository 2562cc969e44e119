/*
 * fold.c - what a rocprofv3 read adds to the shared fold (src/fold): each
 * counter of the blocks whose metrics read sums over instances is also
 * stored as its "_sum" twin (the counter's tag), and the agents' system
 * information fields.
 */
#include "devices/devices.h"
#include "rocprofv3/rocprofv3_private.h"

lm_status lm_v3_fold_new(const char *path, lm_v3_fold **out, lm_diag *diag) {
  lm_v3_fold *f = lm_calloc(1, sizeof *f);
  *out = f;
  if (!f) return lm_oom(diag, path);
  return lm_fold_new(path, &f->t, diag);
}

void lm_v3_fold_free(lm_v3_fold *f) {
  if (!f) return;
  lm_fold_free(f->t);
  lm_free(f);
}

lm_status lm_v3_fold_put(lm_v3_fold *fold, const char *name, size_t row, double v, lm_diag *diag) {
  lm_fold *f = fold->t;
  size_t k;
  lm_status st = lm_fold_counter(f, name, &k, diag);
  if (st != LM_OK) return st;
  f->counters[k][row] = v;
  if (f->tag[k] == LM_V3_ALIAS_UNKNOWN) {
    char alias[256];
    size_t a;
    f->tag[k] = LM_V3_ALIAS_NONE;
    if (lm_devices_sum_alias(name, alias, sizeof alias)) {
      size_t guess = f->guess;
      if ((st = lm_fold_counter(f, alias, &a, diag)) != LM_OK) return st;
      f->tag[k] = (long)a;
      f->guess = guess; /* the file lists the counter after k next */
    }
  }
  if (f->tag[k] >= 0) {
    size_t a = (size_t)f->tag[k];
    f->counters[a][row] = v;
    /* The next counter is expected after the twin, not at it. */
    if (f->guess == a) f->guess = a + 1 < f->n_counters ? a + 1 : 0;
  }
  return LM_OK;
}

lm_status lm_v3_agents_keep(lm_v3_agents *a, const char *key, const char *value, const char *path, lm_diag *diag) {
  if (a->n_keys == LM_V3_AGENT_KEYS || !value || !value[0]) return LM_OK;
  char *k = lm_strdup(key), *v = lm_strdup(value);
  if (!k || !v) {
    lm_free(k);
    lm_free(v);
    return lm_oom(diag, path);
  }
  a->keys[a->n_keys] = k;
  a->values[a->n_keys++] = v;
  return LM_OK;
}

void lm_v3_agents_free(lm_v3_agents *a) {
  for (size_t i = 0; i < a->n_keys; i++) {
    lm_free(a->keys[i]);
    lm_free(a->values[i]);
  }
  a->n_keys = 0;
}
