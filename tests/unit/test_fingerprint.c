/*
 * test_fingerprint.c - the store's workload fingerprint and what an import
 * does when one matches.
 *
 * The fingerprint is pinned against XXH3-128 computed here, with libxxhash
 * directly, over the content stream that fingerprint.c and
 * docs/workload-format.md describe, for a small workload built in memory:
 * a change of hash, of the order or of what is covered fails it. A
 * collision is forced through the stored data (a stored fingerprint
 * rewritten to the one of the next import): both workloads must end up in
 * the store. A store of schema version 4, whose fingerprints another hash
 * made, must find a re-import of its own contents after its upgrade.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xxhash.h>

#include "check.h"
#include "store/store.h"
#include "sql/sql.h"
#include "load/load.h"

static char shared[4096];

/* ------------------------------------------------------- content stream */

/* The stream the test hashes, built byte by byte. */
typedef struct stream {
  unsigned char bytes[4096];
  size_t n;
} stream;

static void put(stream *s, const void *data, size_t n) {
  if (s->n + n > sizeof s->bytes) return; /* CHECKed by the caller through s->n */
  memcpy(s->bytes + s->n, data, n);
  s->n += n;
}

static void put_str(stream *s, const char *text) { put(s, text, strlen(text) + 1); }

static void put_u64(stream *s, uint64_t v) {
  unsigned char le[8];
  for (int i = 0; i < 8; i++) le[i] = (unsigned char)(v >> (8 * i));
  put(s, le, sizeof le);
}

static void put_doubles(stream *s, const double *values, size_t n) {
  for (size_t i = 0; i < n; i++) {
    uint64_t bits;
    memcpy(&bits, &values[i], sizeof bits);
    put_u64(s, bits);
  }
}

static void hex_of(const stream *s, char out[33]) {
  XXH128_canonical_t c;
  XXH128_canonicalFromHash(&c, XXH3_128bits(s->bytes, s->n));
  for (size_t i = 0; i < sizeof c.digest; i++) snprintf(out + 2 * i, 3, "%02x", c.digest[i]);
}

/* A numeric column of t with these two values. */
static void add_numbers(lm_table *t, const char *name, double a, double b) {
  lm_column *c = lm_table_add_column(t, name, 0);
  CHECK(c != NULL);
  if (!c) return;
  c->values[0] = a;
  c->values[1] = b;
}

/* The fingerprint of a two-dispatch workload built here equals XXH3-128
 * of its documented stream: system info without workload_name; pmc_perf
 * with its columns in case-insensitive order ("alpha" before "SQ_WAVES",
 * which byte order would swap), lowercased, the blank column and the
 * kernel names' column left out of the columns, the kernel names after;
 * then the level table; then the region. */
static void test_pinned_stream(void) {
  static const char *names[] = {"workload_name", "gpu_arch", "gpu_model"};
  static const char *texts[] = {"first", "gfx90a", "MI210"};
  lm_workload w;
  memset(&w, 0, sizeof w);
  w.sysinfo.n_fields = 3;
  w.sysinfo.names = names;
  w.sysinfo.texts = texts;
  w.arch = "gfx90a";
  w.pmc = lm_table_create("mem", "pmc_perf", 2, 8);
  lm_table *level = lm_table_create("mem", "SQ_LEVEL_WAVES", 2, 2);
  CHECK(w.pmc && level);
  if (!w.pmc || !level) goto cleanup;
  lm_column *kernel = lm_table_add_column(w.pmc, "Kernel_Name", 1);
  CHECK(kernel != NULL);
  if (!kernel) goto cleanup;
  kernel->text_ids[0] = lm_table_intern(w.pmc, "k_a");
  kernel->text_ids[1] = lm_table_intern(w.pmc, "k_b");
  kernel->values[0] = kernel->values[1] = LM_NAN;
  add_numbers(w.pmc, "SQ_WAVES", 64, 128);
  add_numbers(w.pmc, "alpha", 0.5, -2);
  add_numbers(w.pmc, "Blank", LM_NAN, LM_NAN);
  add_numbers(level, "SQ_LEVEL_WAVES", 3, 7.25);
  CHECK(lm_table_finish(w.pmc) == LM_OK && lm_table_finish(level) == LM_OK);
  lm_table *levels[] = {level};
  w.levels = levels;
  w.n_levels = 1;
  const char *regions[] = {"loop"};
  uint64_t row_regions[] = {1, 0};
  w.n_regions = 1;
  w.region_names = regions;
  w.row_regions = row_regions;

  stream s = {.n = 0};
  put_u64(&s, 2); /* system info: gpu_arch and gpu_model */
  put_str(&s, "gpu_arch");
  put_str(&s, "gfx90a");
  put_str(&s, "gpu_model");
  put_str(&s, "MI210");
  put_u64(&s, 2); /* tables: pmc_perf and one level table, no roofline */
  put_str(&s, "pmc_perf");
  put_u64(&s, 2); /* rows */
  put_u64(&s, 2); /* columns: alpha, SQ_WAVES */
  put_str(&s, "alpha");
  put_doubles(&s, (const double[]){0.5, -2}, 2);
  put_str(&s, "sq_waves");
  put_doubles(&s, (const double[]){64, 128}, 2);
  put_u64(&s, 2); /* kernel names */
  put_str(&s, "k_a");
  put_str(&s, "k_b");
  put_str(&s, "SQ_LEVEL_WAVES");
  put_u64(&s, 2);
  put_u64(&s, 1);
  put_str(&s, "sq_level_waves");
  put_doubles(&s, (const double[]){3, 7.25}, 2);
  put_u64(&s, 0); /* no kernel names outside pmc_perf */
  put_u64(&s, 1); /* regions */
  put_str(&s, "loop");
  put_u64(&s, 1); /* each row's region bits */
  put_u64(&s, 1);
  put_u64(&s, 0);
  put_u64(&s, 0); /* no ranks */
  CHECK(s.n < sizeof s.bytes);

  char expected[33], got[33] = "";
  lm_diag d;
  hex_of(&s, expected);
  CHECK(lm_workload_fingerprint(&w, got, &d) == LM_OK);
  CHECK_STR(got, expected);
  CHECK(strlen(got) == 32);
  /* The profile's name says nothing of its contents. */
  texts[0] = "second";
  CHECK(lm_workload_fingerprint(&w, got, &d) == LM_OK);
  CHECK_STR(got, expected);
  texts[0] = "first";
  /* A value moved from one column to the other changes it. */
  w.pmc->cols[2].values[0] = 64;
  w.pmc->cols[1].values[0] = 0.5;
  CHECK(lm_workload_fingerprint(&w, got, &d) == LM_OK);
  CHECK(strcmp(got, expected) != 0);
cleanup:
  lm_table_free(w.pmc);
  lm_table_free(level);
}

/* A real workload read twice has one fingerprint; another has another. */
static void test_real(void) {
  char a_dir[4300], b_dir[4300], fa[33] = "", fb[33] = "", fc[33] = "";
  snprintf(a_dir, sizeof a_dir, "%s/workloads/vcopy/MI200", shared);
  snprintf(b_dir, sizeof b_dir, "%s/workloads/vcopy/MI100", shared);
  lm_workload *a = NULL, *again = NULL, *b = NULL;
  lm_diag d;
  CHECK(lm_workload_read(a_dir, &a, &d) == LM_OK && lm_workload_read(a_dir, &again, &d) == LM_OK &&
        lm_workload_read(b_dir, &b, &d) == LM_OK);
  if (a && again && b) {
    CHECK(lm_workload_fingerprint(a, fa, &d) == LM_OK && lm_workload_fingerprint(again, fb, &d) == LM_OK &&
          lm_workload_fingerprint(b, fc, &d) == LM_OK);
    CHECK_STR(fa, fb);
    CHECK(strlen(fa) == 32 && strspn(fa, "0123456789abcdef") == 32);
    CHECK(strcmp(fa, fc) != 0);
  }
  lm_workload_free(a);
  lm_workload_free(again);
  lm_workload_free(b);
}

/* ------------------------------------------------------------- decision */

static void test_decision(void) {
  lm_store_facts stored = {3, "gfx90a", "MI210"};
  lm_store_facts same = {3, "gfx90a", "MI210"};
  lm_store_facts more = {4, "gfx90a", "MI210"};
  lm_store_facts arch = {3, "gfx942", "MI210"};
  lm_store_facts model = {3, "gfx90a", "MI250X"};
  lm_store_facts none = {3, NULL, NULL}, empty = {3, "", ""};
  CHECK(lm_store_same_workload(&stored, &same) == 1);
  CHECK(lm_store_same_workload(&stored, &more) == 0);
  CHECK(lm_store_same_workload(&stored, &arch) == 0);
  CHECK(lm_store_same_workload(&stored, &model) == 0);
  CHECK(lm_store_same_workload(&none, &empty) == 1);
  CHECK(lm_store_same_workload(&stored, &none) == 0);
}

/* ------------------------------------------------------------ the store */

static long long count(lm_store *s, const char *text) {
  lm_stmt *q = NULL;
  lm_diag d;
  long long n = -1;
  if (lm_sql_prepare(lm_store_sql(s), text, &q, &d) == LM_OK && lm_stmt_step(q) == 1) n = lm_stmt_int64(q, 0);
  lm_stmt_free(q);
  return n;
}

static void fingerprint_of(const char *dir, char out[33]) {
  lm_workload *w = NULL;
  lm_diag d;
  out[0] = '\0';
  CHECK(lm_workload_read(dir, &w, &d) == LM_OK && lm_workload_fingerprint(w, out, &d) == LM_OK);
  lm_workload_free(w);
}

/* Workload a is stored; its stored fingerprint is then made that of b (a
 * collision, forced in the data): importing b must store b beside a (a
 * has 3 dispatches on MI200, b other facts), never report it as a. */
static void test_forced_collision(const char *tmp) {
  char url[4300], a_dir[4300], b_dir[4300], fb[33], sql[256];
  snprintf(url, sizeof url, "%s/collide.db", tmp);
  snprintf(a_dir, sizeof a_dir, "%s/workloads/vcopy/MI200", shared);
  snprintf(b_dir, sizeof b_dir, "%s/workloads/vcopy/MI100", shared);
  fingerprint_of(b_dir, fb);
  lm_store *s = NULL;
  lm_diag d;
  lm_import_result r;
  CHECK(lm_store_open(url, 1, &s, &d) == LM_OK);
  if (!s) return;
  CHECK(lm_store_import(s, a_dir, "a", NULL, &r, &d) == LM_OK && !r.existed);
  snprintf(sql, sizeof sql, "UPDATE workload SET fingerprint = '%s' WHERE name = 'a'", fb);
  CHECK(lm_sql_exec(lm_store_sql(s), sql, 0, &d) == LM_OK);
  memset(&r, 0, sizeof r);
  CHECK(lm_store_import(s, b_dir, "b", NULL, &r, &d) == LM_OK);
  CHECK(!r.existed);
  CHECK_STR(r.name, "b");
  CHECK_STR(r.collided, "a");
  CHECK(count(s, "SELECT COUNT(*) FROM workload") == 2);
  CHECK(count(s, "SELECT COUNT(*) FROM workload WHERE name = 'b'") == 1);
  /* b again: now found, under its own name. */
  memset(&r, 0, sizeof r);
  CHECK(lm_store_import(s, b_dir, NULL, NULL, &r, &d) == LM_OK);
  CHECK(r.existed);
  CHECK_STR(r.name, "b");
  CHECK(count(s, "SELECT COUNT(*) FROM workload") == 2);
  lm_store_close(s);
}

/* A store of version 4 (fingerprints of the earlier hash, here a stand-in)
 * is read as it is; opened for writing it becomes version 5, and the
 * import of a workload it holds finds it, its fingerprint computed again
 * from the stored columns. */
static void test_old_store(const char *tmp) {
  char url[4300], dir[4300], fa[33];
  snprintf(url, sizeof url, "%s/version4.db", tmp);
  snprintf(dir, sizeof dir, "%s/workloads/vcopy/MI200", shared);
  fingerprint_of(dir, fa);
  lm_store *s = NULL;
  lm_diag d;
  lm_import_result r;
  CHECK(lm_store_open(url, 1, &s, &d) == LM_OK);
  if (!s) return;
  CHECK(lm_store_import(s, dir, "v", NULL, &r, &d) == LM_OK && !r.existed);
  CHECK(count(s, "SELECT COUNT(*) FROM workload WHERE fingerprint <> ''") == 1);
  CHECK(lm_sql_exec(lm_store_sql(s), "UPDATE workload SET fingerprint = '0123456789abcdef0123456789abcdef'; "
                                     "UPDATE lumen_meta SET value = '4' WHERE key = 'schema_version'",
                    0, &d) == LM_OK);
  lm_store_close(s);
  s = NULL;
  CHECK(lm_store_open(url, 0, &s, &d) == LM_OK);
  CHECK(s && count(s, "SELECT COUNT(*) FROM lumen_meta WHERE key = 'schema_version' AND value = '4'") == 1);
  lm_store_close(s);
  s = NULL;
  CHECK(lm_store_open(url, 1, &s, &d) == LM_OK);
  if (!s) return;
  CHECK(count(s, "SELECT COUNT(*) FROM lumen_meta WHERE key = 'schema_version' AND value = '6'") == 1);
  memset(&r, 0, sizeof r);
  CHECK(lm_store_import(s, dir, "v", NULL, &r, &d) == LM_OK);
  CHECK(r.existed);
  CHECK_STR(r.name, "v");
  lm_store_entry e;
  CHECK(lm_store_get(s, "v", &e, &d) == LM_OK);
  CHECK_STR(e.fingerprint, fa);
  CHECK(count(s, "SELECT COUNT(*) FROM workload") == 1);
  lm_store_close(s);
}

int main(void) {
  const char *sh = getenv("LUMEN_SHARED_DIR");
  snprintf(shared, sizeof shared, "%s", sh ? sh : "../shared");
  setenv("LUMEN_STORE_CACHE", "off", 1);
  test_pinned_stream();
  test_real();
  test_decision();
  char tmp[] = "/tmp/lumen-test-fingerprint-XXXXXX";
  if (!mkdtemp(tmp)) return 1;
  test_forced_collision(tmp);
  test_old_store(tmp);
  char rm[4200];
  snprintf(rm, sizeof rm, "rm -rf '%s'", tmp);
  if (system(rm) != 0) return 1;
  return check_report("test_fingerprint");
}
