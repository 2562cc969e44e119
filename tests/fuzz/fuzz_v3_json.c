/* fuzz_v3_json.c - libFuzzer target for the reader of rocprofv3's JSON
 * output (src/rocprofv3/json.c and json_fold.c), which parses its
 * document as a stream: any input, written after the member name that
 * marks the format (so that every input reaches the parser), must read as
 * a workload or be refused with a diagnostic, never crash, hang or leak.
 * The seeds hold a small document with every section the reader reads,
 * in rocprofv3's order and in another. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rocprofv3/rocprofv3.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char path[64];

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (!path[0]) {
    strcpy(path, "/tmp/lumen-fuzz-v3json-XXXXXX");
    int fd = mkstemp(path);
    if (fd < 0) abort();
    close(fd);
  }
  FILE *f = fopen(path, "wb");
  if (!f) abort();
  fputs("{\"rocprofiler-sdk-tool\":", f);
  if (size && fwrite(data, 1, size, f) != size) abort();
  if (fclose(f) != 0) abort();
  lm_workload *w = NULL;
  lm_diag d;
  lm_diag_clear(&d);
  lm_status st = lm_rocprofv3_read(path, "gfx942", NULL, &w, &d);
  if (st == LM_OK) {
    if (!w || !w->pmc) abort();
  } else {
    char line[2048];
    if (w || !d.message[0]) abort();
    lm_diag_format(&d, line, sizeof line);
  }
  lm_workload_free(w);
  return 0;
}
