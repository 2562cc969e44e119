/* fuzz_kept.c - libFuzzer target for the reader of kept analyses
 * (lm_analysis_deserialize), the bytes a store hands back for any user to
 * render. The material is real: at start, analyses of shared workloads
 * (whole views, a few -b selections, the statistics alone, one given an
 * execution spread and a rank table) are made and serialized, and each is
 * checked to read back. The first byte picks what the input is:
 *   even: the bytes of an analysis after the magic, read against the
 *         first material's workload and catalog (random damage);
 *   odd:  byte 1 picks a material; byte 2 % 8 is a count of 4-byte edits
 *         of the analysis itself (a title, id or table gone, a kind, role,
 *         count, cell or rank out of range: structured damage), written
 *         with lumen's serializer; the rest are 8-byte edits of its bytes
 *         (set, flip, cut, delete, insert).
 * Whatever reads back must be an analysis every reader can use: the text,
 * CSV and JSON reports (and the summary, for the whole views) render it
 * without a fault, and it serializes to bytes that read back to the same
 * bytes again. --write-seeds=DIR writes the material as seeds of the
 * first kind (tests/fuzz/seeds_kept holds the small ones).
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "load/load.h"
#include "report/report.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#ifndef LUMEN_SHARED_DIR
#define LUMEN_SHARED_DIR "../shared"
#endif

typedef struct material {
  const char *name;
  const lm_workload *w;
  const lm_catalog *cat;
  unsigned char *bytes;
  size_t len;
  int whole; /* the default view: the summary may be made from it */
} material;

static material mat[16];
static size_t n_mat;
static lm_workload *loaded[4];
static lm_ruleset *rules;

static void fail(const char *what, const char *why) {
  fprintf(stderr, "fuzz_kept: %s: %s\n", what, why);
  abort();
}

static lm_workload *load(size_t k, const char *dir) {
  char path[4096];
  lm_diag d;
  snprintf(path, sizeof path, "%s/workloads/%s", LUMEN_SHARED_DIR, dir);
  if (lm_workload_read(path, &loaded[k], &d) != LM_OK) fail(path, d.message);
  return loaded[k];
}

/* An execution spread and a rank table that lm_analyze_run could have
 * made for a's selection (the shared folders have neither). */
static void add_spread_and_ranks(lm_analysis *a) {
  const char *kernel = NULL;
  for (int32_t t = 0; t < a->n_tables && !kernel; t++)
    if (a->tables[t].kind == LM_TABLE_TOP_KERNELS && a->tables[t].n_rows) kernel = a->tables[t].cells[1].text;
  static const char *shared[2] = {"duration", "GRBM_GUI_ACTIVE"};
  static double spread[2] = {0.125, LM_NAN};
  static lm_kernel_spread ks = {NULL, 0, 1, spread, 0.125};
  static lm_spread sp = {2, 2, shared, &ks, 1, 0};
  static lm_rank_row rows[2] = {{0, "node-a", 0, 300, 150, 1e6, 64}, {1, NULL, 0, 100, 100, LM_NAN, LM_NAN}};
  static lm_rank_kernel rk = {NULL, 2, 0, 1, 300, 100, 3};
  static lm_rank_table rt = {rows, 2, 0, 1, 1.5, &rk, 1};
  ks.kernel = rk.kernel = kernel ? kernel : "k";
  ks.rows = a->n_selected;
  rows[0].dispatches = a->n_selected - a->n_selected / 2;
  rows[1].dispatches = a->n_selected / 2;
  a->spread = &sp;
  a->ranks = &rt;
  for (int32_t t = 0; t < a->n_tables; t++) {
    lm_rtable *x = &a->tables[t];
    if (x->kind != LM_TABLE_METRIC || !x->n_rows) continue;
    x->row_spread = lm_arena_alloc(a->arena, (size_t)x->n_rows * sizeof *x->row_spread);
    if (!x->row_spread) fail("material", "out of memory");
    for (int32_t r = 0; r < x->n_rows; r++) x->row_spread[r] = r % 3 ? LM_NAN : 0.01 * r;
  }
}

static void add(const char *name, const lm_workload *w, const char *const *blocks, size_t n_blocks, int stats,
                int extras) {
  const char *layout = lm_sysinfo_compat(&w->sysinfo);
  const lm_catalog *cat = layout ? lm_metrics_builtin_compat(w->arch, layout) : lm_metrics_builtin(w->arch);
  if (!cat) fail(name, "no catalog");
  lm_analyze_opts o;
  memset(&o, 0, sizeof o);
  o.blocks = blocks;
  o.n_blocks = n_blocks;
  o.stats_only = stats;
  o.threads = 1;
  lm_analysis *a = NULL, *back = NULL;
  lm_diag d;
  if (lm_analyze_run(w, cat, &o, &a, &d) != LM_OK) fail(name, d.message);
  if (extras) add_spread_and_ranks(a);
  lm_buf b = {0};
  if (lm_analysis_serialize(a, &b) != LM_OK) fail(name, "serialize");
  /* every real analysis reads back */
  if (lm_analysis_deserialize(b.data, b.len, w, cat, &back, &d) != LM_OK) fail(name, d.message);
  lm_analysis_free(back);
  material *m = &mat[n_mat++];
  m->name = name;
  m->w = w;
  m->cat = cat;
  m->bytes = (unsigned char *)b.data;
  m->len = b.len;
  m->whole = !n_blocks && !stats && !extras;
  if (extras) {
    a->spread = NULL;
    a->ranks = NULL;
  }
  lm_analysis_free(a);
}

static void write_seeds(const char *dir) {
  for (size_t i = 0; i < n_mat; i++) {
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, mat[i].name);
    FILE *f = fopen(path, "wb");
    if (!f) fail(path, "cannot write");
    fputc(0, f);
    fwrite(mat[i].bytes + 8, 1, mat[i].len - 8, f);
    fclose(f);
  }
}

int LLVMFuzzerInitialize(int *argc, char ***argv) {
  lm_log_set(NULL, NULL, LM_LOG_ERROR); /* (no sink: nothing printed) */
  const lm_workload *vcopy = load(0, "vcopy/MI200"), *mix = load(1, "_mix/mix_MI200"),
                    *mi300 = load(2, "vcopy/MI300X_A1");
  static const char *const sol[] = {"2"}, *const some[] = {"2.1.0", "7", "17"}, *const info[] = {"1"};
  add("vcopy_sol", vcopy, sol, 1, 0, 0);
  add("vcopy_stats", vcopy, NULL, 0, 1, 0);
  add("vcopy_some", vcopy, some, 3, 0, 0);
  add("vcopy_info", vcopy, info, 1, 0, 0);
  add("vcopy_spread_ranks", vcopy, sol, 1, 0, 1);
  add("mix_stats", mix, NULL, 0, 1, 0);
  add("mix_sol", mix, sol, 1, 0, 0);
  add("mi300_sol", mi300, sol, 1, 0, 0);
  add("vcopy_whole", vcopy, NULL, 0, 0, 0);
  lm_diag d;
  if (lm_rules_load_texts(mat[n_mat - 1].cat, lm_rules_builtin(), &rules, &d) != LM_OK) fail("rules", d.message);
  for (int i = 1; i < *argc; i++)
    if (strncmp((*argv)[i], "--write-seeds=", 14) == 0) {
      write_seeds((*argv)[i] + 14);
      exit(0);
    }
  return 0;
}

/* ------------------------------------------------------ structured damage */

static double special(uint32_t v) {
  static const double values[8] = {LM_NAN, -1, 1e300, 0.5, 9007199254740992.0, -0.0, LM_INF, 3};
  return values[v % 8];
}

static void edit_spread_or_ranks(lm_analysis *a, uint8_t idx, uint32_t v) {
  lm_rank_table *rt = a->ranks;
  lm_spread *sp = a->spread;
  switch (v % 10) {
  case 0: if (rt) rt->slowest = (int32_t)(v >> 4) - 8; break;
  case 1: if (rt && rt->n_rows) rt->rows[idx % rt->n_rows].rank = (int32_t)(v >> 4) - 8; break;
  case 2: if (rt && rt->n_rows) rt->rows[idx % rt->n_rows].dispatches = v >> 4; break;
  case 3: if (rt) rt->n_rows = idx % (rt->n_rows + 1); break;
  case 4: if (rt && rt->n_kernels) rt->kernels[0].max_rank = (int32_t)(v >> 4) - 8; break;
  case 5: if (rt && rt->n_kernels) rt->kernels[0].n_ranks = v >> 4; break;
  case 6: if (sp) sp->n_sets = (int32_t)(v >> 4) - 8; break;
  case 7: if (sp && sp->n_kernels) sp->kernels[0].rows_over = v >> 4; break;
  case 8: if (sp) sp->n_flagged = v >> 4; break;
  case 9: if (sp) sp->shared = NULL; break;
  }
}

/* One edit of a table, or of the analysis: op, table, index, value. */
static void edit(lm_analysis *a, const uint8_t *e, lm_arena *arena) {
  if (!a->n_tables) return;
  lm_rtable *t = &a->tables[e[1] % a->n_tables];
  uint8_t idx = e[2];
  uint32_t v = e[3];
  size_t n_cells = (size_t)t->n_rows * (size_t)t->n_cols;
  switch (e[0] % 16) {
  case 0: t->titles = NULL; break;
  case 1: if (t->titles && t->n_cols) t->titles[idx % t->n_cols] = NULL; break;
  case 2: t->row_ids = NULL; break;
  case 3: if (t->row_ids && t->n_rows) t->row_ids[idx % t->n_rows] = NULL; break;
  case 4:
    if (t->row_ids && t->n_rows) {
      static const char *const ids[4] = {"", "x", "-1", "99999"};
      char *id = lm_arena_alloc(arena, 96);
      if (!id) return;
      if (v % 5 < 4) snprintf(id, 96, "%s", ids[v % 5]);
      else snprintf(id, 96, "%s.%u", t->id ? t->id : "", (unsigned)idx * 1000u);
      t->row_ids[idx % t->n_rows] = id;
    }
    break;
  case 5: t->kind = (uint8_t)v; break;
  case 6: t->style = (uint8_t)v; break;
  case 7:
    if (v & 1) t->def = (int32_t)(v >> 1) - 4;
    else t->panel_id = (int32_t)(v >> 1);
    break;
  case 8: if (t->roles && t->n_cols) t->roles[idx % t->n_cols] = (uint8_t)(v % 8); break;
  case 9:
    if (n_cells) {
      lm_cell *c = &t->cells[((size_t)idx * 7919u + v) % n_cells];
      c->kind = (uint8_t)(v % 3);
      if (c->kind == LM_CELL_TEXT && v & 4) c->text = NULL;
      else if (c->kind == LM_CELL_TEXT && !c->text) c->text = "";
    }
    break;
  case 10: if (n_cells) t->cells[((size_t)idx * 7919u + v) % n_cells].num = special(v); break;
  case 11: if (t->n_rows) t->n_rows = idx % t->n_rows; break;
  case 12:
    if (t->n_cols > 1) {
      /* fewer columns, the cells packed to match */
      int32_t n = 1 + idx % (t->n_cols - 1);
      for (int32_t r = 0; r < t->n_rows; r++)
        memmove(&t->cells[(size_t)r * (size_t)n], &t->cells[(size_t)r * (size_t)t->n_cols],
                (size_t)n * sizeof *t->cells);
      t->n_cols = n;
    }
    break;
  case 13: t->shown = (int)(v % 3); break;
  case 14:
    if (v & 1) a->n_selected = v >> 1;
    else if (v & 2) t->row_descs = NULL;
    else if (v & 4) t->note = "a note";
    else a->n_tables = idx % a->n_tables;
    break;
  case 15: edit_spread_or_ranks(a, idx, v); break;
  }
}

/* ---------------------------------------------------------- byte damage */

static size_t damage_bytes(unsigned char *p, size_t len, size_t cap, const uint8_t *e) {
  size_t at = ((size_t)e[1] | (size_t)e[2] << 8 | (size_t)e[3] << 16) % (len + 1);
  uint32_t v = (uint32_t)e[4] | (uint32_t)e[5] << 8 | (uint32_t)e[6] << 16 | (uint32_t)e[7] << 24;
  unsigned char word[8];
  switch (e[0] % 8) {
  case 0: /* a 32-bit field: any value */
  case 1: /* a small count, flag or kind */
  case 2: /* the NULL string mark */
    if (at + 4 > len) break;
    if (e[0] % 8 == 1) v %= 8;
    if (e[0] % 8 == 2) v = 0xffffffffu;
    for (int k = 0; k < 4; k++) p[at + k] = (unsigned char)(v >> (8 * k));
    break;
  case 3: { /* a double */
    double d = special(v);
    if (at + 8 > len) break;
    memcpy(word, &d, 8);
    memcpy(p + at, word, 8);
    break;
  }
  case 4: if (at < len) p[at] ^= (unsigned char)(v | 1); break;
  case 5: len = at; break;
  case 6:
    if (at + 4 <= len) {
      memmove(p + at, p + at + 4, len - at - 4);
      len -= 4;
    }
    break;
  case 7:
    if (len + 4 <= cap) {
      memmove(p + at + 4, p + at, len - at);
      for (int k = 0; k < 4; k++) p[at + k] = (unsigned char)(v >> (8 * k));
      len += 4;
    }
    break;
  }
  return len;
}

/* ------------------------------------------------------------- the use */

/* What readers of an analysis do with one; faults are the finding. */
static void use(const lm_analysis *a, const material *m) {
  lm_report_opts o;
  memset(&o, 0, sizeof o);
  o.decimal = 2;
  o.max_stat_num = 10;
  o.width = 100;
  o.verbose = 2;
  lm_buf out = {0};
  lm_report_text(&a, 1, &o, &out);
  lm_buf_fini(&out);
  lm_report_json(&a, 1, &o, &out);
  lm_buf_fini(&out);
  lm_report_csv_stream(&a, 1, &out);
  lm_buf_fini(&out);
  /* Compared with itself: every lookup of one run in another. */
  const lm_analysis *two[2] = {a, a};
  lm_report_text(two, 2, &o, &out);
  lm_buf_fini(&out);
  if (m->whole) {
    lm_analyze_opts ao;
    memset(&ao, 0, sizeof ao);
    ao.threads = 1;
    lm_summary *s = NULL;
    lm_diag d;
    if (lm_advise_summary(m->w, m->cat, rules, &ao, a, 5, &s, &d) == LM_OK) {
      lm_report_summary_text(s, m->w, 100, 0, &out);
      lm_buf_fini(&out);
    }
    lm_summary_free(s);
  }
  /* Read back: the same analysis, and then the same bytes. */
  lm_buf b1 = {0}, b2 = {0};
  lm_analysis *again = NULL;
  lm_diag d;
  if (lm_analysis_serialize(a, &b1) != LM_OK) return;
  lm_status st = lm_analysis_deserialize(b1.data, b1.len, m->w, m->cat, &again, &d);
  if (st == LM_EDATA) fail("an analysis read back is refused when written again", d.message);
  if (st == LM_OK && lm_analysis_serialize(again, &b2) == LM_OK &&
      (b1.len != b2.len || memcmp(b1.data, b2.data, b1.len) != 0))
    fail(m->name, "written twice, not the same bytes");
  lm_analysis_free(again);
  lm_buf_fini(&b1);
  lm_buf_fini(&b2);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 1 || !n_mat) return 0;
  lm_diag d;
  lm_analysis *a = NULL;
  if (!(data[0] & 1)) {
    /* random damage: the bytes themselves */
    const material *m = &mat[0];
    unsigned char *p = malloc(8 + size);
    if (!p) return 0;
    memcpy(p, m->bytes, 8);
    memcpy(p + 8, data + 1, size - 1);
    lm_status st = lm_analysis_deserialize(p, 8 + size - 1, m->w, m->cat, &a, &d);
    if (st != LM_OK && !d.message[0]) fail("refused", "without a reason");
    if (st == LM_OK) use(a, m);
    lm_analysis_free(a);
    free(p);
    return 0;
  }
  if (size < 3) return 0;
  const material *m = &mat[data[1] % n_mat];
  size_t n_edits = data[2] % 8u;
  const uint8_t *e = data + 3, *end = data + size;
  lm_analysis *base = NULL;
  if (lm_analysis_deserialize(m->bytes, m->len, m->w, m->cat, &base, &d) != LM_OK) fail(m->name, d.message);
  lm_buf b = {0};
  for (size_t i = 0; i < n_edits && end - e >= 4; i++, e += 4) edit(base, e, base->arena);
  if (lm_analysis_serialize(base, &b) != LM_OK) {
    lm_analysis_free(base);
    lm_buf_fini(&b);
    return 0;
  }
  lm_analysis_free(base);
  size_t n_byte_edits = (size_t)(end - e) / 8, cap = b.len + 4 * n_byte_edits;
  unsigned char *p = malloc(cap ? cap : 1);
  if (!p) {
    lm_buf_fini(&b);
    return 0;
  }
  memcpy(p, b.data, b.len);
  size_t len = b.len;
  lm_buf_fini(&b);
  for (; end - e >= 8; e += 8) len = damage_bytes(p, len, cap, e);
  lm_status st = lm_analysis_deserialize(p, len, m->w, m->cat, &a, &d);
  if (st != LM_OK && !d.message[0]) fail("refused", "without a reason");
  if (st == LM_OK) use(a, m);
  lm_analysis_free(a);
  free(p);
  return 0;
}
