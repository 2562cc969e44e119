/* test_wire.c - a workload as a message and back (io, wire.c), the form in
 * which `lumen analyze --mpi` moves parts between processes: real
 * workloads (CSV folders) come back with every table, value bit, text id
 * and column statistic; a folder of rank.R parts read through a part
 * source that packs and unpacks each part gives the same merged workload
 * and the same analysis as the reader's own loads; the
 * source sees the plan once and the parts in order, and a part it fails
 * is the read's error; every message cut short is refused. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "analyze/analyze.h"
#include "report/report.h"
#include "check.h"
#include "ranks/ranks.h"
#include "load/load.h"

static int same_table(const lm_table *a, const lm_table *b) {
  if (!a || !b) return a == b;
  if (a->n_rows != b->n_rows || a->n_cols != b->n_cols || a->n_strings != b->n_strings ||
      strcmp(a->name, b->name) != 0 || strcmp(a->path, b->path) != 0)
    return 0;
  for (size_t i = 0; i < a->n_strings; i++)
    if (strcmp(a->strings[i], b->strings[i]) != 0) return 0;
  for (size_t c = 0; c < a->n_cols; c++) {
    const lm_column *x = &a->cols[c], *y = &b->cols[c];
    if (strcmp(x->name, y->name) != 0 || lm_table_find(a, x->name) != lm_table_find(b, y->name) ||
        !x->text_ids != !y->text_ids || x->n_missing != y->n_missing || x->n_text != y->n_text ||
        x->all_int != y->all_int || x->first_text_line != y->first_text_line || !x->first_text != !y->first_text ||
        (x->first_text && strcmp(x->first_text, y->first_text) != 0) ||
        memcmp(lm_table_values(a, c, NULL), y->values, a->n_rows * sizeof(double)) != 0 ||
        (x->text_ids && memcmp(x->text_ids, y->text_ids, a->n_rows * sizeof(int32_t)) != 0)) {
      fprintf(stderr, "tables differ: %s, column %s\n", a->name, x->name);
      return 0;
    }
  }
  return memcmp(a->row_missing, b->row_missing, a->n_rows) == 0;
}

static int same_workload(const lm_workload *a, const lm_workload *b) {
  if (!same_table(a->pmc, b->pmc) || a->n_levels != b->n_levels || !same_table(a->sysinfo_table, b->sysinfo_table) ||
      !same_table(a->roofline, b->roofline) || strcmp(a->arch, b->arch) != 0 ||
      a->sysinfo.n_fields != b->sysinfo.n_fields || a->n_regions != b->n_regions || !a->exec != !b->exec ||
      !a->row_rank != !b->row_rank || !a->row_host != !b->row_host || !a->simulated != !b->simulated ||
      !a->row_clock_source != !b->row_clock_source || a->n_split_set != b->n_split_set)
    return 0;
  for (size_t i = 0; i < a->n_levels; i++)
    if (!same_table(a->levels[i], b->levels[i])) return 0;
  for (size_t i = 0; i < a->sysinfo.n_fields; i++)
    if (strcmp(a->sysinfo.names[i], b->sysinfo.names[i]) != 0 || strcmp(a->sysinfo.texts[i], b->sysinfo.texts[i]) ||
        memcmp(&a->sysinfo.values[i], &b->sysinfo.values[i], sizeof(double)) != 0)
      return 0;
  size_t n = a->pmc->n_rows;
  for (size_t r = 0; r < n; r++) {
    if (a->row_rank && a->row_rank[r] != b->row_rank[r]) return 0;
    if (a->row_host && !a->row_host[r] != !b->row_host[r]) return 0;
    if (a->row_host && a->row_host[r] && strcmp(a->row_host[r], b->row_host[r]) != 0) return 0;
  }
  if (a->exec) {
    const lm_executions *x = a->exec, *y = b->exec;
    size_t cells = x->n_rows * (size_t)x->n_sets;
    if (x->n_sets != y->n_sets || x->n_shared != y->n_shared || x->n_prov != y->n_prov ||
        memcmp(x->values, y->values, cells * (size_t)x->n_shared * sizeof(double)) != 0 ||
        memcmp(x->runs, y->runs, cells * sizeof(int32_t)) != 0)
      return 0;
    for (size_t i = 0; i < x->n_prov; i++)
      if (strcmp(x->prov_column[i], y->prov_column[i]) != 0 ||
          memcmp(x->prov_sets[i], y->prov_sets[i], x->n_rows * sizeof(int16_t)) != 0)
        return 0;
  }
  return 1;
}

static lm_workload *round_trip(const lm_workload *w, size_t *bytes) {
  lm_buf b = {0};
  lm_workload *back = NULL;
  lm_diag d;
  if (lm_ranks_wire_pack(w, &b, &d) == LM_OK && lm_ranks_wire_unpack(b.data, b.len, 0, &back, &d) != LM_OK) back = NULL;
  if (bytes) *bytes = b.len;
  lm_buf_fini(&b);
  return back;
}

/* A part source that loads here, through a message, and can fail part fail_at. */
typedef struct source_log {
  int plans, exchange;
  size_t n_parts, next, fail_at;
  int out_of_order;
  lm_buf last; /* the last part's message: its values are used in place */
} source_log;

static lm_status log_plan(void *ctx, size_t n_parts, int exchange, lm_diag *diag) {
  source_log *s = ctx;
  (void)diag;
  s->plans++;
  s->exchange = exchange;
  s->n_parts = n_parts;
  return LM_OK;
}

static lm_status log_load(void *ctx, size_t i, const char *dir, const lm_workload_options *opts, lm_workload **out,
                          lm_diag *diag) {
  source_log *s = ctx;
  if (i != s->next++) s->out_of_order = 1;
  if (i == s->fail_at) return lm_diag_set(diag, LM_EDATA, dir, 7, 3, "Wave_Size", "a bad cell");
  lm_workload *w = NULL;
  lm_status st = lm_workload_read_opts(dir, opts, &w, diag);
  if (st != LM_OK) return st;
  /* The message lives until the next load, as the contract allows. */
  lm_buf_fini(&s->last);
  st = lm_ranks_wire_pack(w, &s->last, diag);
  lm_workload_free(w);
  if (st == LM_OK) st = lm_ranks_wire_unpack(s->last.data, s->last.len, 1, out, diag);
  if (st == LM_OK && (*out)->pmc->n_rows && (const char *)(*out)->pmc->cols[0].values < s->last.data)
    st = lm_fail(diag, LM_EDATA, dir, "values not left in the message");
  return st;
}

static int copy_tree(const char *from, const char *to) {
  lm_buf cmd = {0};
  lm_buf_printf(&cmd, "cp -r '%s' '%s'", from, to);
  int ok = system(lm_buf_cstr(&cmd)) == 0;
  lm_buf_fini(&cmd);
  return ok;
}

int main(void) {
  const char *shared = getenv("LUMEN_SHARED_DIR");
  if (!shared) shared = "../shared";
  const char *names[] = {"vcopy/MI200", "_mix/mix_MI200", "ipblocks_SQ/MI200", "vcopy/MI100"};
  char src[4][4096];
  for (int i = 0; i < 4; i++) snprintf(src[i], sizeof src[i], "%s/workloads/%s", shared, names[i]);
  lm_diag d;
  /* Every table back as it was, for CSV folders. */
  for (int i = 0; i < 4; i++) {
    lm_workload *w = NULL;
    CHECK(lm_workload_read(src[i], &w, &d) == LM_OK);
    if (!w) continue;
    size_t bytes = 0;
    lm_workload *back = round_trip(w, &bytes);
    CHECK(back != NULL);
    if (back) CHECK(same_workload(w, back));
    if (back) CHECK(back->pmc->n_rows > 0 && bytes > back->pmc->n_rows * back->pmc->n_cols * sizeof(double));
    lm_workload_free(back);
    /* A message cut short anywhere is refused (and read within bounds). */
    if (i == 0) {
      lm_buf b = {0};
      CHECK(lm_ranks_wire_pack(w, &b, &d) == LM_OK);
      size_t step = b.len / 997 + 1, refused = 0, tried = 0;
      for (size_t len = 0; len < b.len; len += step, tried++) {
        lm_workload *cut = NULL;
        lm_status st = lm_ranks_wire_unpack(b.data, len, (int)(len & 1), &cut, &d);
        refused += st == LM_EDATA && cut == NULL;
        lm_workload_free(cut);
      }
      CHECK(refused == tried);
      CHECK(strstr(d.message, "cut short") != NULL);
      lm_buf_fini(&b);
    }
    lm_workload_free(w);
  }
  /* A folder of rank.R parts (lumen profiles' database parts go through the
   * same path under mpirun in profile_test.sh, mpi_analyze). */
  char dir[] = "/tmp/lumen-test-wire-XXXXXX";
  CHECK(mkdtemp(dir) != NULL);
  char part[4200];
  for (int i = 0; i < 3; i++) {
    snprintf(part, sizeof part, "%s/rank.%d", dir, i == 2 ? 5 : i);
    CHECK(copy_tree(src[i], part));
  }
  lm_workload *here = NULL, *through = NULL;
  CHECK(lm_ranks_read(dir, NULL, &here, &d) == LM_OK);
  source_log log = {0, 0, 0, 0, (size_t)-1, 0, {0}};
  lm_part_source ps = {log_plan, log_load, &log};
  lm_workload_options via = {0};
  via.parts = &ps;
  CHECK(lm_ranks_read(dir, &via, &through, &d) == LM_OK);
  CHECK(log.plans == 1 && log.exchange == 1 && log.n_parts == 3 && log.next == 3 && !log.out_of_order);
  if (here && through) {
    CHECK(same_table(here->pmc, through->pmc));
    CHECK(here->n_levels == through->n_levels);
    for (size_t i = 0; i < here->n_levels && i < through->n_levels; i++)
      CHECK(same_table(here->levels[i], through->levels[i]));
    CHECK(memcmp(here->row_rank, through->row_rank, here->pmc->n_rows * sizeof(int32_t)) == 0);
    const lm_catalog *cat = lm_metrics_builtin(here->arch);
    lm_analyze_opts o;
    memset(&o, 0, sizeof o);
    lm_analysis *a = NULL, *b = NULL;
    CHECK(cat && lm_analyze_run(here, cat, &o, &a, &d) == LM_OK && lm_analyze_run(through, cat, &o, &b, &d) == LM_OK);
    lm_buf ja = {0}, jb = {0};
    lm_report_opts ro = {2, 10, 0, 0, NULL, NULL, 0, 0, NULL, 0};
    const lm_analysis *ra[1] = {a}, *rb[1] = {b};
    if (a && b) {
      CHECK(lm_report_json(ra, 1, &ro, &ja) == LM_OK && lm_report_json(rb, 1, &ro, &jb) == LM_OK);
      CHECK(ja.len > 1000 && ja.len == jb.len && memcmp(ja.data, jb.data, ja.len) == 0);
    }
    lm_buf_fini(&ja);
    lm_buf_fini(&jb);
    lm_analysis_free(a);
    lm_analysis_free(b);
  }
  lm_workload_free(here);
  lm_workload_free(through);
  /* A part the source fails: its error, and no part after it is asked for. */
  source_log fail = {0, 0, 0, 0, 1, 0, {0}};
  lm_part_source pf = {log_plan, log_load, &fail};
  through = NULL;
  via.parts = &pf;
  CHECK(lm_ranks_read(dir, &via, &through, &d) == LM_EDATA && through == NULL);
  CHECK(d.line == 7 && strcmp(d.field, "Wave_Size") == 0 && strstr(d.file, "rank.1") != NULL);
  CHECK(fail.next == 2 && fail.plans == 1);
  /* A merge error (another architecture) behind the source is the reader's. */
  snprintf(part, sizeof part, "%s/rank.9", dir);
  CHECK(copy_tree(src[3], part));
  source_log arch = {0, 0, 0, 0, (size_t)-1, 0, {0}};
  lm_part_source pa = {log_plan, log_load, &arch};
  via.parts = &pa;
  CHECK(lm_ranks_read(dir, &via, &through, &d) == LM_EDATA);
  CHECK(strcmp(d.field, "gpu_arch") == 0 && strstr(d.message, "rank 9 ran on gfx908") != NULL);
  lm_buf_fini(&log.last);
  lm_buf_fini(&fail.last);
  lm_buf_fini(&arch.last);
  char cmd[8192];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  CHECK(system(cmd) == 0);
  return check_report("test_wire");
}
