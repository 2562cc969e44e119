/* fuzz_csv.c - libFuzzer target for the CSV column loader: any input must
 * load or be refused with a diagnostic, never crash, hang or leak. Loaded
 * with deferred columns, it must be refused or accepted alike, and every
 * value read back from the buffer must be the loaded value, to the bit. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "csv/csv.h"

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
  lm_status whole = lm_csv_parse((const char *)data, size, "fuzz.csv", &options, &t, &diag);
  if (whole == LM_OK) {
    for (size_t c = 0; c < t->n_cols; c++)
      for (size_t r = 0; r < t->n_rows; r++) (void)lm_table_text(t, c, r);
  } else {
    char line[2048];
    lm_diag_format(&diag, line, sizeof line);
  }
  lm_csv_options deferred = options;
  deferred.defer = 1;
  lm_table *d = NULL;
  lm_status streamed = lm_csv_parse((const char *)data, size, "fuzz.csv", &deferred, &d, &diag);
  if ((whole == LM_OK) != (streamed == LM_OK)) abort();
  if (streamed == LM_OK) {
    if (d->n_rows != t->n_rows || d->n_cols != t->n_cols) abort();
    size_t *rows = malloc((t->n_rows + 1) * sizeof *rows);
    double *v = malloc((t->n_rows + 1) * sizeof *v);
    if (!rows || !v) abort();
    for (size_t r = 0; r <= t->n_rows; r++) rows[r] = r; /* and one past the end */
    for (size_t c = 0; c < d->n_cols; c++) {
      long col = (long)c;
      if (d->cols[c].n_missing != t->cols[c].n_missing || d->cols[c].n_text != t->cols[c].n_text ||
          d->cols[c].all_int != t->cols[c].all_int)
        abort();
      if (lm_table_fetch(d, &col, 1, rows, t->n_rows + 1, &v, NULL) != LM_OK) abort();
      for (size_t r = 0; r < t->n_rows; r++)
        if (memcmp(&v[r], &t->cols[c].values[r], sizeof(double)) != 0) abort();
      if (!isnan(v[t->n_rows])) abort();
    }
    free(rows);
    free(v);
  }
  lm_table_free(t);
  lm_table_free(d);
  return 0;
}
