/*
 * rocpd_keys.c - the rocpd reader's keys: the runs by guid (one in every
 * database rocprofv3 writes, so a list), and sorted arrays of (run, id)
 * -> fold row. Keys are added in the order rows are read (usually
 * already sorted, then the sort is skipped) and found by binary search
 * with the entry after the last match tried first, as a dispatch's
 * counter events and the dispatches themselves follow each other.
 */
#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "rocprofv3/rocpd_private.h"

void lm_v3_rocpd_free(lm_v3_rocpd *r) {
  for (size_t i = 0; i < r->n_guids; i++) lm_free(r->guids[i]);
  for (size_t i = 0; i < r->n_p; i++) lm_free(r->p[i].name);
  lm_free(r->guids);
  lm_free(r->guid_len);
  lm_free(r->p);
  lm_v3_keys_free(&r->ev);
  lm_v3_keys_free(&r->pmc_keys);
}

long lm_v3_rocpd_run(lm_v3_rocpd *r, const char *g, size_t n, int add) {
  for (size_t i = r->n_guids; i-- > 0;)
    if (r->guid_len[i] == n && memcmp(r->guids[i], g, n) == 0) return (long)i;
  if (!add) return -1;
  char **gs = lm_realloc(r->guids, (r->n_guids + 1) * sizeof *gs);
  if (!gs) return -2;
  r->guids = gs;
  size_t *ls = lm_realloc(r->guid_len, (r->n_guids + 1) * sizeof *ls);
  if (!ls) return -2;
  r->guid_len = ls;
  if (!(gs[r->n_guids] = lm_strndup(g, n))) return -2;
  ls[r->n_guids] = n;
  return (long)r->n_guids++;
}

int lm_v3_rocpd_in_order(const lm_v3_rocpd *r, const lm_v3_last *last, const char *guid, int64_t pid, int64_t id) {
  if (!last->have) return 1;
  int c = strcmp(r->guids[last->guid], guid);
  return c != 0 ? c < 0 : last->pid != pid ? last->pid < pid : last->id <= id;
}

void lm_v3_rocpd_table_under(lm_sql *sql, const char *view, char *table, size_t cap) {
  table[0] = '\0';
  lm_stmt *s = NULL;
  if (lm_sql_prepare(sql, "SELECT type, sql FROM sqlite_master WHERE name = ?", &s, NULL) == LM_OK &&
      (lm_stmt_bind_text(s, 1, view), lm_stmt_step(s) == 1)) {
    if (strcmp(lm_stmt_text(s, 0), "table") == 0) {
      snprintf(table, cap, "%s", view);
    } else {
      /* The statement without spaces, quotes and brackets, after AS. */
      const char *q = lm_stmt_text(s, 1);
      char flat[512], low[512];
      size_t n = 0;
      for (; *q && n + 1 < sizeof flat; q++)
        if (!strchr(" \t\r\n`\"[];", *q)) {
          low[n] = (char)tolower((unsigned char)*q);
          flat[n++] = *q;
        }
      flat[n] = low[n] = '\0';
      const char *as = strstr(low, "asselect*from"), *from = as ? flat + (as - low) + 13 : NULL;
      if (from && strncmp(from, view, strlen(view)) == 0 && strlen(from) < cap) snprintf(table, cap, "%s", from);
    }
  }
  lm_stmt_free(s);
}

static int before(uint32_t g, int64_t id, uint32_t g2, int64_t id2) { return g != g2 ? g < g2 : id < id2; }

static int cmp_key(const void *a, const void *b, void *ctx) {
  (void)ctx;
  const lm_v3_key *x = a, *y = b;
  if (x->guid != y->guid || x->id != y->id) return before(x->guid, x->id, y->guid, y->id) ? -1 : 1;
  return (x->row > y->row) - (x->row < y->row);
}

lm_status lm_v3_keys_push(lm_v3_keys *k, uint32_t guid, int64_t id, size_t row, const char *path, lm_diag *diag) {
  lm_v3_key *e = lm_grow(k->e, &k->cap, k->n, sizeof *e);
  if (!e) return lm_oom(diag, path);
  k->e = e;
  lm_v3_key x = {guid, (uint32_t)row, id};
  if (k->n > 0 && cmp_key(&k->e[k->n - 1], &x, NULL) > 0) k->unsorted = 1;
  k->e[k->n++] = x;
  return LM_OK;
}

void lm_v3_keys_sort(lm_v3_keys *k) {
  if (k->unsorted) lm_sort(k->e, k->n, sizeof *k->e, cmp_key, NULL);
  k->unsorted = 0;
  size_t m = 0;
  for (size_t i = 0; i < k->n; i++) {
    if (m > 0 && k->e[m - 1].guid == k->e[i].guid && k->e[m - 1].id == k->e[i].id) m--;
    k->e[m++] = k->e[i];
  }
  k->n = m;
  k->next = 0;
}

int64_t lm_v3_keys_search(lm_v3_keys *k, uint32_t guid, int64_t id) {
  size_t lo = 0, hi = k->n;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (before(k->e[mid].guid, k->e[mid].id, guid, id))
      lo = mid + 1;
    else
      hi = mid;
  }
  if (lo == k->n || k->e[lo].guid != guid || k->e[lo].id != id) return -1;
  k->next = lo + 1;
  return k->e[lo].row;
}

void lm_v3_keys_free(lm_v3_keys *k) {
  lm_free(k->e);
  *k = (lm_v3_keys){0};
}
