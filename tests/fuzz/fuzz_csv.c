/* fuzz_csv.c - libFuzzer target for the CSV column loader: any input must
 * load or be refused with a diagnostic, never crash, hang or leak. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "io/io.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static const char *const text_columns[] = {"Kernel_Name", NULL};
  lm_csv_options options = {0};
  options.text_columns = text_columns;
  options.max_record = 1 << 16;
  /* Alternate serial and two-thread parsing on the input's first byte. */
  options.threads = size && (data[0] & 1) ? 2 : 1;
  lm_table *t = NULL;
  lm_diag diag;
  if (lm_csv_parse((const char *)data, size, "fuzz.csv", &options, &t, &diag) == LM_OK) {
    for (size_t c = 0; c < t->n_cols; c++)
      for (size_t r = 0; r < t->n_rows; r++) (void)lm_table_text(t, c, r);
    lm_table_free(t);
  } else {
    char line[2048];
    lm_diag_format(&diag, line, sizeof line);
  }
  return 0;
}
