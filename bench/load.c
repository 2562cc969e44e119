/*
 * load.c - the CSV loader alone, in bytes per second, on one file:
 *   whole   every column converted into memory (lm_csv_read)
 *   index   the first pass of a streamed load: records checked and
 *           counted, only the dispatch columns converted (lm_csv_read with
 *           deferred columns)
 *   stream  index, then every numeric column read back in blocks of 8,192
 *           rows on two threads (lm_table_fetch), as the evaluator does
 *   stream-half  the same for every second column (what a selection of
 *           panels reads)
 * Usage: load FILE RUNS   (prints one line per mode: median ms and MB/s)
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "csv/csv.h"

#define BLOCK 8192

static const char *const eager[] = {"Dispatch_ID", "GPU_ID", "Start_Timestamp", "End_Timestamp", NULL};
static const char *const text[] = {"Kernel_Name", NULL};

typedef struct job {
  const lm_table *t;
  const long *cols;
  size_t n_cols, begin, end;
  int ok;
} job;

static void *fetch_range(void *arg) {
  job *j = arg;
  double *buf = malloc(j->n_cols * BLOCK * sizeof *buf);
  double **out = malloc(j->n_cols * sizeof *out);
  size_t *rows = malloc(BLOCK * sizeof *rows);
  j->ok = buf && out && rows;
  for (size_t k = 0; j->ok && k < j->n_cols; k++) out[k] = buf + k * BLOCK;
  for (size_t first = j->begin; j->ok && first < j->end; first += BLOCK) {
    size_t n = j->end - first < BLOCK ? j->end - first : BLOCK;
    for (size_t i = 0; i < n; i++) rows[i] = first + i;
    j->ok = lm_table_fetch(j->t, j->cols, j->n_cols, rows, n, out, NULL) == LM_OK;
  }
  free(buf);
  free(out);
  free(rows);
  return NULL;
}

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static int cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* One run of mode m (0 whole, 1 index, 2 stream, 3 stream-half). */
static int run(const char *path, int m) {
  lm_csv_options o = {0};
  o.text_columns = text;
  o.defer = m > 0;
  o.eager_columns = eager;
  lm_table *t = NULL;
  if (lm_csv_read(path, &o, &t, NULL) != LM_OK) return 0;
  int ok = 1;
  if (m >= 2) {
    long *cols = malloc(t->n_cols * sizeof *cols);
    size_t n = 0;
    for (size_t c = 0; c < t->n_cols; c++)
      if (lm_table_deferred(t, c) && (m == 2 || c % 2 == 0)) cols[n++] = (long)c;
    size_t half = t->n_rows / 2;
    job a = {t, cols, n, 0, half, 0}, b = {t, cols, n, half, t->n_rows, 0};
    pthread_t th;
    pthread_create(&th, NULL, fetch_range, &b);
    fetch_range(&a);
    pthread_join(th, NULL);
    ok = a.ok && b.ok;
    free(cols);
  }
  lm_table_free(t);
  return ok;
}

int main(int argc, char **argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: load FILE RUNS\n");
    return 2;
  }
  int runs = atoi(argv[2]);
  if (runs < 1 || runs > 64) runs = 5;
  struct stat st;
  if (stat(argv[1], &st) != 0) return 1;
  static const char *const names[] = {"whole", "index", "stream", "stream-half"};
  for (int m = 0; m < 4; m++) {
    double ms[64];
    for (int i = 0; i < runs; i++) {
      double t0 = now_ms();
      if (!run(argv[1], m)) {
        fprintf(stderr, "load: %s failed\n", names[m]);
        return 1;
      }
      ms[i] = now_ms() - t0;
    }
    qsort(ms, (size_t)runs, sizeof *ms, cmp);
    double med = ms[runs / 2];
    printf("%s %.1f %.0f\n", names[m], med, (double)st.st_size / 1e6 / (med / 1e3));
  }
  return 0;
}
