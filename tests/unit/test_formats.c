/*
 * test_formats.c - the pieces of the other tools' readers: the streaming
 * CSV record reader (quotes, doubled quotes, line breaks in fields, CRLF,
 * a byte-order mark, records split across the read window, line numbers,
 * errors), the assumed system information of lm_devices_sysinfo (AMD's
 * and NVIDIA's fields), the "_sum" names of counters, rocminfo's text
 * as rocprof (v1) saves it, and rocprof's kernel statistics read as
 * per-kernel totals, analyzed (the top-kernels table) and fingerprinted.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "analyze/analyze.h"
#include "check.h"
#include "csv/csv.h"
#include "devices/devices.h"
#include "rocprof1/rocprof1.h"
#include "store/store.h"

static void write_file(const char *path, const char *text, size_t len) {
  FILE *f = fopen(path, "wb");
  CHECK(f != NULL);
  if (!f) return;
  fwrite(text, 1, len, f);
  fclose(f);
}

static void test_rows(void) {
  char path[] = "/tmp/lumen-rows-XXXXXX";
  int fd = mkstemp(path);
  CHECK(fd >= 0);
  close(fd);
  static const char text[] =
      "\xEF\xBB\xBF\"a\",b,c\r\n1,\"x,\"\"y\"\"\",\r\n\n"
      "2,\"two\nlines\",z\n3,last,\"\"";
  write_file(path, text, sizeof text - 1);
  lm_csv_rows *r = NULL;
  lm_diag d;
  lm_diag_clear(&d);
  CHECK(lm_csv_rows_open(path, 0, &r, &d) == LM_OK);
  const char *const *f;
  size_t n;
  CHECK(lm_csv_rows_next(r, &f, &n, &d) == LM_OK && n == 3);
  CHECK(n == 3 && strcmp(f[0], "a") == 0 && strcmp(f[2], "c") == 0 && lm_csv_rows_line(r) == 1);
  CHECK(lm_csv_rows_next(r, &f, &n, &d) == LM_OK && n == 3);
  CHECK(n == 3 && strcmp(f[1], "x,\"y\"") == 0 && f[2][0] == '\0' && lm_csv_rows_line(r) == 2);
  CHECK(lm_csv_rows_next(r, &f, &n, &d) == LM_OK && n == 3);
  CHECK(n == 3 && strcmp(f[1], "two\nlines") == 0 && lm_csv_rows_line(r) == 4);
  CHECK(lm_csv_rows_next(r, &f, &n, &d) == LM_OK && n == 3);
  CHECK(n == 3 && strcmp(f[1], "last") == 0 && f[2][0] == '\0' && lm_csv_rows_line(r) == 6);
  CHECK(lm_csv_rows_next(r, &f, &n, &d) == LM_OK && n == 0);
  lm_csv_rows_close(r);

  /* Records across the 1 MiB window: 200,000 of them, all intact. */
  FILE *out = fopen(path, "wb");
  CHECK(out != NULL);
  if (!out) return;
  fprintf(out, "id,name,value\n");
  for (int i = 0; i < 200000; i++) fprintf(out, "%d,\"kernel %d, \"\"q\"\"\",%d.5\n", i, i % 7, i);
  fclose(out);
  CHECK(lm_csv_rows_open(path, 0, &r, &d) == LM_OK);
  CHECK(lm_csv_rows_next(r, &f, &n, &d) == LM_OK && n == 3);
  int ok = 1;
  for (int i = 0; i < 200000 && ok; i++) {
    char want[64];
    snprintf(want, sizeof want, "kernel %d, \"q\"", i % 7);
    ok = lm_csv_rows_next(r, &f, &n, &d) == LM_OK && n == 3 && atoi(f[0]) == i && strcmp(f[1], want) == 0 &&
         lm_csv_rows_line(r) == i + 2;
  }
  CHECK(ok);
  CHECK(lm_csv_rows_next(r, &f, &n, &d) == LM_OK && n == 0);
  lm_csv_rows_close(r);

  /* An unclosed quote at the end: an error naming the file and line. */
  static const char bad[] = "a,b\n1,\"open\n";
  write_file(path, bad, sizeof bad - 1);
  CHECK(lm_csv_rows_open(path, 0, &r, &d) == LM_OK);
  CHECK(lm_csv_rows_next(r, &f, &n, &d) == LM_OK && n == 2);
  CHECK(lm_csv_rows_next(r, &f, &n, &d) == LM_EPARSE && d.line == 2);
  lm_csv_rows_close(r);
  /* A record over the limit. */
  out = fopen(path, "wb");
  if (out) {
    for (int i = 0; i < 3000; i++) fputs("xxxxxxxxxx", out);
    fputs("\n", out);
    fclose(out);
  }
  CHECK(lm_csv_rows_open(path, 1000, &r, &d) == LM_OK);
  CHECK(lm_csv_rows_next(r, &f, &n, &d) == LM_ELIMIT && d.line == 1);
  lm_csv_rows_close(r);
  unlink(path);
  /* A folder is refused at once. */
  CHECK(lm_csv_rows_open("/tmp", 0, &r, &d) != LM_OK && r == NULL);
}

static void test_devices(void) {
  lm_arena *arena = lm_arena_new(4096);
  lm_workload w;
  memset(&w, 0, sizeof w);
  w.arena = arena;
  const char *keys[] = {"cu_per_gpu", "gpu_model"};
  const char *values[] = {"240", "MI350X"};
  char assumed[512];
  lm_diag d;
  lm_diag_clear(&d);
  CHECK(lm_devices_sysinfo(&w, "gfx950", keys, values, 2, "x.csv", assumed, sizeof assumed, &d) == LM_OK);
  CHECK(w.arch && strcmp(w.arch, "gfx950") == 0);
  CHECK(strcmp(lm_sysinfo_text(&w.sysinfo, "cu_per_gpu"), "240") == 0);
  CHECK(strcmp(lm_sysinfo_text(&w.sysinfo, "gpu_model"), "MI350X") == 0);
  CHECK(strcmp(lm_sysinfo_text(&w.sysinfo, "max_sclk"), "2400") == 0);
  /* What was assumed is listed; what the file said is not. */
  CHECK(strstr(assumed, "max_sclk 2400") != NULL && strstr(assumed, "cu_per_gpu") == NULL);
  lm_table_free(w.sysinfo_table);
  memset(&w, 0, sizeof w);
  w.arena = arena;
  CHECK(lm_devices_sysinfo(&w, "gfx1234", NULL, NULL, 0, "x.csv", assumed, sizeof assumed, &d) == LM_EARCH);
  CHECK(strstr(d.message, "gfx1234") != NULL);
  lm_table_free(w.sysinfo_table);
  CHECK(lm_devices_product("gfx942") && strcmp(lm_devices_product("gfx942"), "MI300X") == 0);
  CHECK(lm_devices_product("sm_99") == NULL);
  lm_arena_free(arena);
}

static void test_sum_alias(void) {
  char out[64];
  CHECK(lm_devices_sum_alias("TCC_HIT", out, sizeof out) && strcmp(out, "TCC_HIT_sum") == 0);
  CHECK(lm_devices_sum_alias("TCP_TCC_READ_REQ", out, sizeof out) && strcmp(out, "TCP_TCC_READ_REQ_sum") == 0);
  CHECK(lm_devices_sum_alias("TA_BUSY_avr", out, sizeof out) == 1);
  CHECK(lm_devices_sum_alias("TD_BUSY", out, sizeof out) == 1);
  CHECK(!lm_devices_sum_alias("TCC_HIT[3]", out, sizeof out));
  CHECK(!lm_devices_sum_alias("TCC_HIT_sum", out, sizeof out));
  CHECK(!lm_devices_sum_alias("SQ_WAVES", out, sizeof out));
  CHECK(!lm_devices_sum_alias("FETCH_SIZE", out, sizeof out));
  CHECK(!lm_devices_sum_alias("TCC_HIT", out, 8)); /* no room */
}

static const char *field(const lm_rocminfo *info, const char *key) {
  for (size_t i = 0; i < info->n_fields; i++)
    if (strcmp(info->keys[i], key) == 0) return info->values[i];
  return NULL;
}

static void test_rocminfo(void) {
  /* A CPU agent, then two GPU agents (the first kept), CRLF on one line,
   * an ISA's nested Workgroup Max Size and Name that must not win. */
  static const char text[] =
      "ROCk module is loaded\n==========\nHSA Agents\n==========\n"
      "*******\nAgent 1\n*******\n"
      "  Name:                    AMD EPYC 7763 64-Core Processor\n"
      "  Marketing Name:          AMD EPYC 7763 64-Core Processor\n"
      "  Node:                    0\n  Device Type:             CPU\n"
      "  Compute Unit:            128\n  Max Clock Freq. (MHz):   3529\n"
      "*******\nAgent 2\n*******\n"
      "  Name:                    gfx942\n"
      "  Marketing Name:          AMD Instinct MI300X\r\n"
      "  Node:                    2\n  Device Type:             GPU\n"
      "  Cache Info:\n    L1:                      32(0x20) KB\n    L2:                      4096(0x1000) KB\n"
      "    L3:                      262144(0x40000) KB\n"
      "  Max Clock Freq. (MHz):   2100\n  Compute Unit:            304\n  SIMDs per CU:            4\n"
      "  Shader Engines:          32\n  Wavefront Size:          64(0x40)\n"
      "  Workgroup Max Size:      1024(0x400)\n  Max Waves Per CU:        32(0x20)\n"
      "  ISA Info:\n    ISA 1\n      Name:                    amdgcn-amd-amdhsa--gfx942:sramecc+:xnack-\n"
      "      Workgroup Max Size:      2048(0x800)\n"
      "*******\nAgent 3\n*******\n"
      "  Name:                    gfx90a\n  Node:                    3\n  Device Type:             GPU\n"
      "  Compute Unit:            110\n*** Done ***\n";
  lm_rocminfo *info = calloc(1, sizeof *info);
  CHECK(info != NULL);
  if (!info) return;
  CHECK(lm_rocprof1_rocminfo(text, sizeof text - 1, info) == 1);
  CHECK(strcmp(info->arch, "gfx942") == 0);
  CHECK(info->n_gpus == 2 && info->nodes[0] == 2 && info->nodes[1] == 3);
  CHECK(field(info, "gpu_model") && strcmp(field(info, "gpu_model"), "AMD Instinct MI300X") == 0);
  CHECK(field(info, "cu_per_gpu") && strcmp(field(info, "cu_per_gpu"), "304") == 0);
  CHECK(field(info, "gpu_l1") && strcmp(field(info, "gpu_l1"), "32") == 0);
  CHECK(field(info, "gpu_l2") && strcmp(field(info, "gpu_l2"), "4096") == 0);
  CHECK(field(info, "max_sclk") && strcmp(field(info, "max_sclk"), "2100") == 0);
  CHECK(field(info, "cur_sclk") && strcmp(field(info, "cur_sclk"), "2100") == 0);
  CHECK(field(info, "se_per_gpu") && strcmp(field(info, "se_per_gpu"), "32") == 0);
  CHECK(field(info, "simd_per_cu") && strcmp(field(info, "simd_per_cu"), "4") == 0);
  CHECK(field(info, "wave_size") && strcmp(field(info, "wave_size"), "64") == 0);
  CHECK(field(info, "workgroup_max_size") && strcmp(field(info, "workgroup_max_size"), "1024") == 0);
  CHECK(field(info, "max_waves_per_cu") && strcmp(field(info, "max_waves_per_cu"), "32") == 0);
  CHECK(info->n_fields == 11);
  /* Cut anywhere: never read past the end. */
  for (size_t len = 0; len < sizeof text - 1; len += 7) (void)lm_rocprof1_rocminfo(text, len, info);
  /* Text that is not rocminfo's, and no GPU at all. */
  CHECK(lm_rocprof1_rocminfo("pmc: SQ_WAVES\n", 14, info) == 0 && info->n_gpus == 0);
  static const char cpu_only[] = "HSA Agents\nAgent 1\n  Name: cpu\n  Device Type: CPU\n";
  CHECK(lm_rocprof1_rocminfo(cpu_only, sizeof cpu_only - 1, info) == 1 && info->n_gpus == 0 && !info->arch[0]);
  free(info);
}

static void test_nvidia_products(void) {
  static const struct {
    const char *arch, *sms, *sclk;
  } want[] = {{"sm_70", "80", "1530"}, {"sm_75", "40", "1590"},  {"sm_80", "108", "1410"}, {"sm_86", "72", "1695"},
              {"sm_89", "58", "2040"}, {"sm_90", "132", "1980"}, {"sm_100", "148", "1965"}};
  for (size_t i = 0; i < sizeof want / sizeof *want; i++) {
    lm_arena *arena = lm_arena_new(4096);
    lm_workload w;
    memset(&w, 0, sizeof w);
    w.arena = arena;
    char assumed[512];
    lm_diag d;
    lm_diag_clear(&d);
    CHECK(lm_devices_sysinfo(&w, want[i].arch, NULL, NULL, 0, "x.csv", assumed, sizeof assumed, &d) == LM_OK);
    CHECK(w.arch && strcmp(w.arch, want[i].arch) == 0);
    CHECK(strcmp(lm_sysinfo_text(&w.sysinfo, "cu_per_gpu"), want[i].sms) == 0);
    CHECK(strcmp(lm_sysinfo_text(&w.sysinfo, "max_sclk"), want[i].sclk) == 0);
    /* NVIDIA's fields, none of AMD's. */
    CHECK(strstr(assumed, "wave_size 32") != NULL && strstr(assumed, "simd_per_cu") == NULL);
    CHECK(strstr(assumed, "num_xcd") == NULL && strstr(assumed, "total_l2_chan") == NULL);
    lm_table_free(w.sysinfo_table);
    lm_arena_free(arena);
  }
  /* B200: no figure known for its memory clock, none assumed. */
  CHECK(lm_devices_product("sm_100") && strcmp(lm_devices_product("sm_100"), "NVIDIA B200") == 0);
}

/* The kernel statistics at path (text) read, or the status with d. */
static lm_status read_stats(const char *path, const char *text, lm_workload **w, lm_diag *d) {
  write_file(path, text, strlen(text));
  lm_diag_clear(d);
  return lm_rocprof1_read(path, NULL, NULL, w, d);
}

static void test_stats(void) {
  char dir[] = "/tmp/lumen-stats-XXXXXX", path[64];
  CHECK(mkdtemp(dir) != NULL);
  snprintf(path, sizeof path, "%s/results.stats.csv", dir);
  lm_workload *w = NULL;
  lm_diag d;
  static const char good[] = "\"Name\",\"Calls\",\"TotalDurationNs\",\"AverageNs\",\"Percentage\"\n"
                             "\"b(int)\",3,10,3,25.0\n\"a\",1,30,30,75.0\n\"c\",2,0,0,0.0\n";
  CHECK(read_stats(path, good, &w, &d) == LM_OK && w);
  CHECK(lm_rocprof1_detect(path) && lm_rocprof1_detect(dir));
  const lm_table *t = lm_workload_totals(w);
  CHECK(t && t->n_rows == 3 && w->pmc->n_rows == 0 && w->pmc->n_strings == 3 && !w->arch);
  if (t && t->n_rows == 3) {
    const double *id = t->cols[lm_table_find(t, "Kernel_ID")].values;
    const double *mean = t->cols[lm_table_find(t, "MeanNs")].values;
    CHECK(strcmp(w->pmc->strings[(size_t)id[0]], "b(int)") == 0 && mean[0] == 10.0 / 3 && mean[2] == 0);
  }
  /* The top-kernels table: longest first, the median blank, -k narrowing. */
  const lm_catalog *cat = lm_store_totals_catalog();
  lm_analyze_opts o;
  memset(&o, 0, sizeof o);
  lm_analysis *an = NULL;
  CHECK(cat && lm_analyze_run(w, cat, &o, &an, &d) == LM_OK);
  const lm_rtable *top = an ? lm_analysis_find(an, "0.1") : NULL;
  CHECK(top && top->shown && top->n_rows == 3 && top->n_cols == 7);
  if (top && top->n_rows == 3) {
    CHECK(strcmp(top->cells[1].text, "a") == 0 && top->cells[2].num == 1 && top->cells[3].num == 30);
    CHECK(top->cells[5].kind == LM_CELL_EMPTY && top->cells[6].num == 75);
    CHECK(strcmp(top->cells[7 + 1].text, "b(int)") == 0 && top->cells[7 + 4].num == 10.0 / 3);
  }
  for (int32_t i = 0; an && i < an->n_tables; i++) CHECK(an->tables[i].shown == (&an->tables[i] == top));
  lm_analysis_free(an);
  an = NULL;
  const char *pattern[] = {"^[bc]"};
  o.kernels = pattern;
  o.n_kernels = 1;
  CHECK(lm_analyze_run(w, cat, &o, &an, &d) == LM_OK);
  top = an ? lm_analysis_find(an, "0.1") : NULL;
  CHECK(top && top->n_rows == 2 && top->cells[6].num == 25);
  lm_analysis_free(an);
  an = NULL;
  o.n_kernels = 0;
  const char *blocks[] = {"2"};
  o.blocks = blocks;
  o.n_blocks = 1;
  CHECK(lm_analyze_run(w, cat, &o, &an, &d) == LM_EINVAL && !an && strstr(d.message, "per-kernel totals only"));
  /* The fingerprint covers the kernel names. */
  char fp1[33], fp2[33];
  CHECK(lm_workload_fingerprint(w, fp1, &d) == LM_OK);
  lm_workload_free(w);
  w = NULL;
  static const char renamed[] = "\"Name\",\"Calls\",\"TotalDurationNs\",\"AverageNs\",\"Percentage\"\n"
                                "\"b(int)\",3,10,3,25.0\n\"z\",1,30,30,75.0\n\"c\",2,0,0,0.0\n";
  CHECK(read_stats(path, renamed, &w, &d) == LM_OK && lm_workload_fingerprint(w, fp2, &d) == LM_OK);
  CHECK(strcmp(fp1, fp2) != 0);
  lm_workload_free(w);
  w = NULL;
  /* Damage: the file, line and field. */
  static const struct {
    const char *text, *field;
    long line;
  } bad[] = {
      {"Name,Calls,TotalDurationNs,AverageNs\na,1,5,5\nb,2\n", "TotalDurationNs", 3},
      {"Name,Calls,TotalDurationNs\na,one,5\n", "Calls", 2},
      {"Name,Calls,TotalDurationNs\na,0,5\n", "Calls", 2},
      {"Name,Calls,TotalDurationNs\na,1.5,5\n", "Calls", 2},
      {"Name,Calls,TotalDurationNs\na,1,-5\n", "TotalDurationNs", 2},
      {"Name,Calls,TotalDurationNs\na,1,nan\n", "TotalDurationNs", 2},
      {"Name,Calls,TotalDurationNs,AverageNs\na,2,10,7\n", "AverageNs", 2},
      {"Name,Calls,TotalDurationNs\na,1,5\na,1,5\n", "Name", 3},
  };
  for (size_t i = 0; i < LM_ARRAY_LEN(bad); i++) {
    lm_status st = read_stats(path, bad[i].text, &w, &d);
    CHECK(st != LM_OK && !w && d.line == bad[i].line && strcmp(d.field, bad[i].field) == 0);
    if (st == LM_OK || d.line != bad[i].line) fprintf(stderr, "  case %zu: %s\n", i, d.message);
    lm_workload_free(w);
    w = NULL;
  }
  CHECK(read_stats(path, "Name,Calls,TotalDurationNs\n", &w, &d) == LM_EDATA && !w);
  unlink(path);
  rmdir(dir);
}

int main(void) {
  test_rows();
  test_devices();
  test_sum_alias();
  test_rocminfo();
  test_nvidia_products();
  test_stats();
  return check_report("test_formats");
}
