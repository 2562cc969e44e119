/*
 * test_formats.c - the pieces of the other tools' readers: the streaming
 * CSV record reader (quotes, doubled quotes, line breaks in fields, CRLF,
 * a byte-order mark, records split across the read window, line numbers,
 * errors) and the assumed system information of lm_devices_sysinfo.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "csv/csv.h"
#include "devices/devices.h"

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

int main(void) {
  test_rows();
  test_devices();
  return check_report("test_formats");
}
