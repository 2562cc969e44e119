/*
 * test_rocprofv3.c - rocprofv3's JSON output read as a stream: the same
 * workload whatever the order of the document's sections (kernel symbols,
 * counters and agents after the records, the kernel trace before the
 * collection), a kernel trace alone, and the errors of a damaged
 * document, each naming the field by its path: cut short, nested too
 * deep, a value of the wrong type, NaN, a number beyond a double, a
 * duplicated key (the first kept), an id no section lists; the
 * tokenizer's strings (escapes, tokens longer than its window, one over
 * its limit) and numbers (each spelling of a value the same double); and
 * every allocation failed in turn.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "rocprofv3/rocprofv3.h"

static char dir[] = "/tmp/lumen-v3json-XXXXXX";

static const char agents[] =
    "\"agents\": [{\"id\": {\"handle\": 100}, \"node_id\": 0, \"type\": 1, \"name\": \"EPYC\"},\n"
    " {\"id\": {\"handle\": 200}, \"node_id\": 2, \"type\": 2, \"name\": \"gfx942:sramecc+\",\n"
    "  \"product_name\": \"AMD Instinct MI300X\", \"cu_count\": 304, \"mem_banks\": [{\"x\": [1, 2]}]}]";
static const char counters[] =
    "\"counters\": [{\"id\": {\"handle\": 7}, \"name\": \"SQ_WAVES\"},\n"
    " {\"id\": {\"handle\": 9}, \"name\": \"TCC_HIT\"}]";
static const char symbols[] =
    "\"kernel_symbols\": [{\"kernel_id\": 0, \"kernel_name\": \"\"},\n"
    " {\"kernel_id\": 1, \"formatted_kernel_name\": \"k1(int)\", \"kernel_name\": \"_Z2k1i\",\n"
    "  \"group_segment_size\": 100, \"arch_vgpr_count\": 8, \"sgpr_count\": 16},\n"
    " {\"kernel_id\": 2, \"formatted_kernel_name\": \"\", \"kernel_name\": \"k2\"}]";
#define INFO(id, kernel)                                                               \
  "\"dispatch_info\": {\"size\": 64, \"dispatch_id\": " #id                            \
  ", \"agent_id\": {\"handle\": 200}, \"kernel_id\": " #kernel                         \
  ", \"queue_id\": {\"handle\": 1}, \"grid_size\": {\"x\": 64, \"y\": 2, \"z\": 1},\n" \
  "  \"workgroup_size\": {\"x\": 64, \"y\": 1, \"z\": 1}, \"private_segment_size\": 4}"
static const char collection[] =
    "\"callback_records\": {\"counter_collection\": [\n"
    " {\"thread_id\": 1, \"dispatch_data\": {\"correlation_id\": {\"internal\": 1}, \"start_timestamp\": 1000,\n"
    "  \"end_timestamp\": 1500, " INFO(5, 1) "},\n"
    "  \"records\": [{\"counter_id\": {\"handle\": 7}, \"value\": 10},\n"
    "   {\"counter_id\": {\"handle\": 9}, \"value\": 1.5}, {\"counter_id\": {\"handle\": 9}, \"value\": 2.5}]},\n"
    " {\"dispatch_data\": {\"start_timestamp\": 2000, \"end_timestamp\": 2100, " INFO(6, 2) "},\n"
    "  \"records\": [{\"counter_id\": {\"handle\": 7}, \"value\": 3}, {\"counter_id\": {\"handle\": 9}, \"value\": 4}]}]}";
static const char trace[] = "\"buffer_records\": {\"kernel_dispatch\": [\n"
                            " {\"start_timestamp\": 990, \"end_timestamp\": 1600, " INFO(5, 1) "},\n"
                            " {\"start_timestamp\": 1990, \"end_timestamp\": 2200, " INFO(6, 2) "}]}";

/* The document of the sections parts (n of them), in that order, after
 * an optional metadata member. */
static char *document(const char *const *parts, size_t n, const char *metadata) {
  size_t len = 64 + (metadata ? strlen(metadata) : 0);
  for (size_t i = 0; i < n; i++) len += strlen(parts[i]) + 4;
  char *doc = malloc(len);
  if (!doc) return NULL;
  strcpy(doc, "{\"rocprofiler-sdk-tool\": [{");
  if (metadata) strcat(strcat(doc, metadata), n ? ",\n" : "");
  for (size_t i = 0; i < n; i++) strcat(strcat(doc, parts[i]), i + 1 < n ? ",\n" : "");
  strcat(doc, "}]}\n");
  return doc;
}

/* Read text as a JSON file: its status; *w the workload when read. */
static lm_status read_text(const char *text, size_t len, lm_workload **w, lm_diag *d) {
  char path[64];
  snprintf(path, sizeof path, "%s/1_results.json", dir);
  FILE *f = fopen(path, "wb");
  CHECK(f != NULL);
  if (!f) return LM_EIO;
  fwrite(text, 1, len, f);
  fclose(f);
  lm_diag_clear(d);
  *w = NULL;
  return lm_rocprofv3_read(path, NULL, NULL, w, d);
}

static double cell(const lm_workload *w, const char *column, size_t row) {
  long c = lm_table_find(w->pmc, column);
  return c >= 0 && row < w->pmc->n_rows ? w->pmc->cols[c].values[row] : -1;
}

/* Same columns, names, texts and values (NaN included), bit for bit. */
static int same(const lm_workload *a, const lm_workload *b) {
  const lm_table *x = a->pmc, *y = b->pmc;
  if (x->n_rows != y->n_rows || x->n_cols != y->n_cols) return 0;
  for (size_t c = 0; c < x->n_cols; c++) {
    if (strcmp(x->cols[c].name, y->cols[c].name) != 0) return 0;
    for (size_t r = 0; r < x->n_rows; r++) {
      const char *s = lm_table_text(x, c, r), *t = lm_table_text(y, c, r);
      if ((s == NULL) != (t == NULL) || (s && strcmp(s, t) != 0)) return 0;
      if (memcmp(&x->cols[c].values[r], &y->cols[c].values[r], sizeof(double)) != 0) return 0;
    }
  }
  return 1;
}

static void test_orders(void) {
  const char *in_order[] = {agents, counters, symbols, collection, trace};
  const char *reversed[] = {trace, collection, symbols, counters, agents};
  const char *mixed[] = {collection, counters, trace, agents, symbols};
  lm_workload *w = NULL, *v = NULL;
  lm_diag d;
  char *doc = document(in_order, 5, NULL);
  CHECK(doc && read_text(doc, strlen(doc), &w, &d) == LM_OK && w);
  free(doc);
  if (!w) return;
  CHECK(w->pmc->n_rows == 2);
  long k = lm_table_find(w->pmc, "Kernel_Name");
  CHECK(k >= 0 && strcmp(lm_table_text(w->pmc, (size_t)k, 0), "k1(int)") == 0);
  CHECK(k >= 0 && strcmp(lm_table_text(w->pmc, (size_t)k, 1), "k2") == 0);
  CHECK(cell(w, "SQ_WAVES", 0) == 10 && cell(w, "SQ_WAVES", 1) == 3);
  CHECK(cell(w, "TCC_HIT", 0) == 4 && cell(w, "TCC_HIT_sum", 0) == 4 && cell(w, "TCC_HIT", 1) == 4);
  CHECK(cell(w, "GPU_ID", 0) == 0 && cell(w, "Grid_Size", 0) == 128 && cell(w, "Workgroup_Size", 0) == 64);
  CHECK(cell(w, "LDS_Per_Workgroup", 0) == 512 && cell(w, "Arch_VGPR", 0) == 8 && cell(w, "SGPR", 0) == 16);
  CHECK(cell(w, "Scratch_Per_Workitem", 1) == 4 && isnan(cell(w, "Arch_VGPR", 1)));
  /* The collection's timestamps; the trace only completes missing ones. */
  CHECK(cell(w, "Start_Timestamp", 0) == 1000 && cell(w, "End_Timestamp", 1) == 2100);
  const char *const *orders[] = {reversed, mixed};
  for (size_t o = 0; o < 2; o++) {
    doc = document(orders[o], 5, NULL);
    CHECK(doc && read_text(doc, strlen(doc), &v, &d) == LM_OK && v && same(w, v));
    free(doc);
    lm_workload_free(v);
  }
  lm_workload_free(w);
  /* A kernel trace alone, before the sections it refers to: one row per
   * dispatch, its timestamps. */
  const char *alone[] = {trace, symbols, agents};
  doc = document(alone, 3, NULL);
  CHECK(doc && read_text(doc, strlen(doc), &w, &d) == LM_OK && w);
  free(doc);
  CHECK(w && w->pmc->n_rows == 2 && cell(w, "Start_Timestamp", 0) == 990 && cell(w, "End_Timestamp", 1) == 2200);
  lm_workload_free(w);
}

/* The document with the first `from` replaced by `to` read: fails with
 * LM_EPARSE, a message holding `says` and the field `field`. */
static int fails(const char *from, const char *to, const char *says, const char *field) {
  const char *in_order[] = {agents, counters, symbols, collection, trace};
  char *doc = document(in_order, 5, NULL), *at = doc ? strstr(doc, from) : NULL;
  CHECK(at != NULL);
  if (!at) {
    free(doc);
    return 0;
  }
  size_t len = strlen(doc) - strlen(from) + strlen(to);
  char *damaged = malloc(len + 1);
  if (!damaged) abort();
  snprintf(damaged, len + 1, "%.*s%s%s", (int)(at - doc), doc, to, at + strlen(from));
  lm_workload *w = NULL;
  lm_diag d;
  lm_status st = read_text(damaged, len, &w, &d);
  lm_workload_free(w);
  free(doc);
  free(damaged);
  int ok = st == LM_EPARSE && strstr(d.message, says) && strcmp(d.field, field) == 0 && strstr(d.file, "results");
  if (!ok) fprintf(stderr, "got %d: %s: %s\n", (int)st, d.field, d.message);
  return ok;
}

static void test_damage(void) {
  const char *rec = "callback_records.counter_collection[0].records[1]";
  char field[128];
  snprintf(field, sizeof field, "%s.value", rec);
  CHECK(fails("\"value\": 1.5", "\"value\": \"zero\"", "not a number", field));
  CHECK(fails("\"value\": 1.5", "\"value\": \"NaN\"", "not a number", field));
  CHECK(fails("\"value\": 1.5", "\"value\": null", "not a number", field));
  CHECK(fails("\"value\": 1.5", "\"value\": 1e999", "not a number", field));
  CHECK(fails("\"value\": 1.5", "\"value\": [1.5]", "not a number", field));
  CHECK(fails("\"value\": 1.5", "\"value\": NaN", "not valid JSON",
              "rocprofiler-sdk-tool[0].callback_records."
              "counter_collection[0].records[1].value"));
  snprintf(field, sizeof field, "%s.counter_id", rec);
  CHECK(fails("{\"handle\": 9}, \"value\": 1.5", "{\"handle\": 99}, \"value\": 1.5", "not a counter", field));
  CHECK(fails("{\"handle\": 9}, \"value\": 1.5", "{\"id\": 9}, \"value\": 1.5", "not a counter", field));
  CHECK(fails("\"dispatch_id\": 6", "\"dispatch_id\": \"6\"", "not a number",
              "callback_records.counter_collection[1].dispatch_data.dispatch_info.dispatch_id"));
  CHECK(fails("\"kernel_id\": 2,", "\"kernel_id\": 3,", "not a kernel",
              "callback_records.counter_collection[1].dispatch_data.dispatch_info.kernel_id"));
  CHECK(fails("\"node_id\": 2", "\"node_id\": 1e300", "below 2^53", "agents[1].node_id"));
  CHECK(fails("\"type\": 1,", "", "needs id.handle, node_id and type", "agents[0]"));
  CHECK(fails("{\"id\": {\"handle\": 9}, \"name\": \"TCC_HIT\"}", "{\"id\": {\"handle\": 9}, \"name\": 5}",
              "a counter needs", "counters[1]"));
  CHECK(fails("\"dispatch_data\": {\"start", "\"dispatch_data\": [], \"x\": {\"start", "missing",
              "callback_records.counter_collection[1].dispatch_data.dispatch_info"));
  /* The same errors with the sections after the records: found at the
   * process's end. */
  const char *late[] = {collection, trace, symbols, counters, agents};
  char *doc = document(late, 5, NULL);
  CHECK(doc != NULL);
  char *at = doc ? strstr(doc, "{\"handle\": 9}, \"name\"") : NULL;
  CHECK(at != NULL);
  if (at) {
    at[11] = '8'; /* counter 9 is now 8: the collection's 9 is unknown */
    lm_workload *w = NULL;
    lm_diag d;
    CHECK(read_text(doc, strlen(doc), &w, &d) == LM_EPARSE && strcmp(d.field,
                                                                     "callback_records.counter_collection"
                                                                     "[0].records[1].counter_id") == 0);
    lm_workload_free(w);
  }
  free(doc);
}

/* The document with the first `from` replaced by `to` read: its status,
 * *w the workload when read. */
static lm_status replaced(const char *from, const char *to, lm_workload **w, lm_diag *d) {
  const char *in_order[] = {agents, counters, symbols, collection, trace};
  char *doc = document(in_order, 5, NULL), *at = doc ? strstr(doc, from) : NULL;
  CHECK(at != NULL);
  lm_status st = LM_EINVAL;
  *w = NULL;
  if (at) {
    size_t len = strlen(doc) - strlen(from) + strlen(to);
    char *changed = malloc(len + 1);
    if (!changed) abort();
    snprintf(changed, len + 1, "%.*s%s%s", (int)(at - doc), doc, to, at + strlen(from));
    st = read_text(changed, len, w, d);
    free(changed);
  }
  free(doc);
  return st;
}

static const char *kernel_name(const lm_workload *w, size_t row) {
  long k = lm_table_find(w->pmc, "Kernel_Name");
  return k >= 0 && row < w->pmc->n_rows ? lm_table_text(w->pmc, (size_t)k, row) : NULL;
}

static void test_tokens(void) {
  lm_workload *w = NULL;
  lm_diag d;
  /* Escapes: a surrogate pair is one code point, a lone one U+FFFD. */
  CHECK(replaced("\"k1(int)\"", "\"k\\u00e9\\ud83d\\ude00\\n\\\"\\/\\\\\\udc00\"", &w, &d) == LM_OK && w);
  const char *name = w ? kernel_name(w, 0) : NULL;
  CHECK(name && strcmp(name, "k\xc3\xa9\xf0\x9f\x98\x80\n\"/\\\xef\xbf\xbd") == 0);
  lm_workload_free(w);
  /* A name longer than the read window, escapes at its end. */
  enum { LONG = 600000 };
  char *big = malloc(LONG + 16);
  if (!big) abort();
  big[0] = '"';
  memset(big + 1, 'a', LONG);
  strcpy(big + 1 + LONG, "\\u0062\"");
  CHECK(replaced("\"k1(int)\"", big, &w, &d) == LM_OK && w);
  name = w ? kernel_name(w, 0) : NULL;
  CHECK(name && strlen(name) == LONG + 1 && name[LONG] == 'b' && name[LONG - 1] == 'a');
  lm_workload_free(w);
  free(big);
  /* One token over the window's limit (16 MiB): refused, its line named. */
  size_t huge = (size_t)17 << 20;
  big = malloc(huge + 3);
  if (!big) abort();
  big[0] = '"';
  memset(big + 1, 'a', huge);
  strcpy(big + 1 + huge, "\"");
  CHECK(replaced("\"k1(int)\"", big, &w, &d) == LM_ELIMIT && !w && strstr(d.message, "16 MiB") && d.line == 7 &&
        strstr(d.file, "results"));
  free(big);
  /* Every spelling of a value is the same double, long ones (strtod) too;
   * an exponent beyond a double's range is not a number. */
  static const char *const spellings[] = {
      "1.5", "15e-1", "0.15E+1", "1.50000", "150000000000000000000000e-23", "1.500000000000000000000000000001"};
  for (size_t i = 0; i < LM_ARRAY_LEN(spellings); i++) {
    char to[64];
    snprintf(to, sizeof to, "\"value\": %s", spellings[i]);
    CHECK(replaced("\"value\": 1.5", to, &w, &d) == LM_OK && w && cell(w, "TCC_HIT", 0) == 4);
    lm_workload_free(w);
  }
  CHECK(replaced("\"value\": 10", "\"value\": 0.1e1", &w, &d) == LM_OK && w && cell(w, "SQ_WAVES", 0) == 1);
  lm_workload_free(w);
  CHECK(replaced("\"value\": 10", "\"value\": -0.0", &w, &d) == LM_OK && w && cell(w, "SQ_WAVES", 0) == 0);
  lm_workload_free(w);
  CHECK(replaced("\"value\": 1.5", "\"value\": 1e-99999", &w, &d) == LM_OK && w && cell(w, "TCC_HIT", 0) == 2.5);
  lm_workload_free(w);
  /* Not JSON: each names the byte and the path. */
  CHECK(fails("\"value\": 1.5", "\"value\": 01.5", "not valid JSON",
              "rocprofiler-sdk-tool[0].callback_records.counter_collection[0].records[1].value"));
  CHECK(fails("\"value\": 1.5", "\"value\": 1.", "not valid JSON",
              "rocprofiler-sdk-tool[0].callback_records.counter_collection[0].records[1].value"));
  CHECK(fails("\"value\": 1.5", "\"value\": -", "not valid JSON",
              "rocprofiler-sdk-tool[0].callback_records.counter_collection[0].records[1].value"));
  CHECK(fails("\"value\": 1.5", "\"value\": tru", "not valid JSON",
              "rocprofiler-sdk-tool[0].callback_records.counter_collection[0].records[1].value"));
  CHECK(fails("\"value\": 1.5}", "\"value\": 1.5,}", "not valid JSON",
              "rocprofiler-sdk-tool[0].callback_records.counter_collection[0].records[1].value"));
  CHECK(fails("\"k1(int)\"", "\"k1\\x\"", "not valid JSON",
              "rocprofiler-sdk-tool[0].kernel_symbols[1].formatted_kernel_name"));
  CHECK(fails("\"k1(int)\"", "\"k1\\u12\"", "not valid JSON",
              "rocprofiler-sdk-tool[0].kernel_symbols[1].formatted_kernel_name"));
  CHECK(fails("\"k1(int)\"", "\"k1\tx\"", "not valid JSON",
              "rocprofiler-sdk-tool[0].kernel_symbols[1].formatted_kernel_name"));
}

static void test_limits(void) {
  const char *in_order[] = {agents, counters, symbols, collection, trace};
  char *doc = document(in_order, 5, NULL);
  lm_workload *w = NULL;
  lm_diag d;
  CHECK(doc != NULL);
  if (!doc) return;
  /* Cut short: where it ends, and that it may be truncated. */
  size_t len = strlen(doc);
  CHECK(read_text(doc, len / 2, &w, &d) == LM_EPARSE && strstr(d.message, "truncated") && d.line > 1);
  char byte[32];
  snprintf(byte, sizeof byte, "byte %zu", len / 2);
  CHECK(strstr(d.message, byte) != NULL);
  CHECK(read_text(doc, 0, &w, &d) != LM_OK);
  /* What follows the document is not read. */
  char *tail = malloc(len + 16);
  if (!tail) abort();
  snprintf(tail, len + 16, "%s{\"x\": [", doc);
  CHECK(read_text(tail, strlen(tail), &w, &d) == LM_OK && w && w->pmc->n_rows == 2);
  lm_workload_free(w);
  free(tail);
  free(doc);
  /* A duplicated key: the first is kept. */
  static const char dup_records[] = "\"counter_id\": {\"handle\": 7}, \"value\": 10}";
  char dup_doc[8192];
  doc = document(in_order, 5, NULL);
  char *at = doc ? strstr(doc, dup_records) : NULL;
  CHECK(at != NULL);
  if (at) {
    snprintf(dup_doc, sizeof dup_doc,
             "%.*s\"counter_id\": {\"handle\": 7, \"handle\": 9}, \"value\": 10, "
             "\"value\": 99, \"counter_id\": 9}%s",
             (int)(at - doc), doc, at + strlen(dup_records));
    CHECK(read_text(dup_doc, strlen(dup_doc), &w, &d) == LM_OK && w && cell(w, "SQ_WAVES", 0) == 10);
    lm_workload_free(w);
  }
  free(doc);
  /* Nested deeper than the reader follows: refused, the path named. */
  enum { DEEP = 100000 };
  char *deep = malloc(2 * DEEP + 32);
  if (!deep) abort();
  strcpy(deep, "\"metadata\": {\"a\": ");
  size_t n = strlen(deep);
  memset(deep + n, '[', DEEP);
  memset(deep + n + DEEP, ']', DEEP);
  strcpy(deep + n + 2 * DEEP, "}");
  doc = document(in_order, 5, deep);
  CHECK(doc && read_text(doc, strlen(doc), &w, &d) == LM_EPARSE && strstr(d.message, "nested deeper"));
  CHECK(strncmp(d.field, "rocprofiler-sdk-tool[0].metadata.a[0][0]", 40) == 0 && d.line == 1);
  free(doc);
  free(deep);
}

/* Each allocation failed in turn, the sections in order and after the
 * records: out of memory, said so, until the read succeeds with the same
 * workload. */
static void test_out_of_memory(void) {
  const char *in_order[] = {agents, counters, symbols, collection, trace};
  const char *reversed[] = {trace, collection, symbols, counters, agents};
  const char *const *orders[] = {in_order, reversed};
  lm_workload *ref = NULL, *w = NULL;
  lm_diag d;
  for (size_t o = 0; o < 2; o++) {
    char *doc = document(orders[o], 5, NULL);
    CHECK(doc && read_text(doc, strlen(doc), &ref, &d) == LM_OK && ref);
    free(doc);
    char path[64];
    snprintf(path, sizeof path, "%s/1_results.json", dir);
    long n = 0;
    for (; n < 100000 && ref; n++) {
      lm_alloc_fail_after(n);
      lm_status st = lm_rocprofv3_read(path, NULL, NULL, &w, &d);
      lm_alloc_fail_after(-1);
      if (st == LM_OK) {
        CHECK(w && same(w, ref));
        lm_workload_free(w);
        break;
      }
      if (st != LM_ENOMEM) fprintf(stderr, "allocation %ld: %d %s: %s\n", n, (int)st, d.field, d.message);
      CHECK(st == LM_ENOMEM && w == NULL);
    }
    CHECK(n > 10 && n < 100000);
    lm_workload_free(ref);
    ref = NULL;
  }
}

int main(void) {
  if (!mkdtemp(dir)) return 1;
  test_orders();
  test_damage();
  test_limits();
  test_tokens();
  test_out_of_memory();
  char path[64];
  snprintf(path, sizeof path, "%s/1_results.json", dir);
  unlink(path);
  rmdir(dir);
  return check_report("test_rocprofv3");
}
