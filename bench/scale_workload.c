/*
 * scale_workload.c - make an N-dispatch workload folder from a real one,
 * for benchmarks: rows of pmc_perf.csv and of the SQ_*.csv tables are
 * repeated in order, Dispatch_ID renumbered 0..N-1 and the timestamps of
 * each repetition shifted past the previous one (durations are kept).
 * sysinfo.csv and roofline.csv are copied. With FACTOR, every integer
 * value of a counter column (an upper-case name such as SQ_WAVES or
 * TCC_HIT[3], TCC_EA_RDREQ_sum) is multiplied by it and rounded, so that
 * parts made with different factors hold different counters (the
 * counters of idle blocks stay zero).
 *
 * Usage: scale_workload SOURCE_DIR N OUT_DIR [FACTOR]
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

typedef struct rows {
  char *header;
  char **lines;
  size_t n;
} rows;

static int read_rows(const char *path, rows *r) {
  FILE *f = fopen(path, "rb");
  if (!f) return 0;
  memset(r, 0, sizeof *r);
  char *line = NULL;
  size_t cap = 0;
  ssize_t len;
  size_t alloc = 0;
  while ((len = getline(&line, &cap, f)) > 0) {
    while (len && (line[len - 1] == '\n' || line[len - 1] == '\r')) line[--len] = '\0';
    if (!len) continue;
    if (!r->header) {
      r->header = strdup(line);
      continue;
    }
    if (r->n == alloc) {
      alloc = alloc ? alloc * 2 : 64;
      r->lines = realloc(r->lines, alloc * sizeof *r->lines);
    }
    r->lines[r->n++] = strdup(line);
  }
  free(line);
  fclose(f);
  return r->header != NULL && r->n > 0;
}

/* Split a CSV record into fields (pointers into a copy; quotes kept). */
static size_t fields(char *s, char **out, size_t max) {
  size_t n = 0;
  int quoted = 0;
  out[n++] = s;
  for (char *p = s; *p && n < max; p++) {
    if (*p == '"') quoted = !quoted;
    else if (*p == ',' && !quoted) {
      *p = '\0';
      out[n++] = p + 1;
    }
  }
  return n;
}

static long find(const char *header, const char *name) {
  char *copy = strdup(header);
  char *f[8192];
  size_t n = fields(copy, f, 8192);
  long at = -1;
  for (size_t i = 0; i < n; i++)
    if (strcmp(f[i], name) == 0) at = (long)i;
  free(copy);
  return at;
}

/* Whether a header names a counter: upper case, digits and '_' (a
 * trailing "_sum" and an index "[k]" aside), and not a dispatch column. */
static int is_counter(const char *name) {
  static const char *const dispatch[] = {"GPU_ID", "PID", "TID", "SGPR", "LDS", "Node"};
  for (size_t i = 0; i < sizeof dispatch / sizeof *dispatch; i++)
    if (strcmp(name, dispatch[i]) == 0) return 0;
  size_t n = strcspn(name, "[");
  if (n >= 4 && strncmp(name + n - 4, "_sum", 4) == 0) n -= 4;
  if (!n) return 0;
  for (size_t i = 0; i < n; i++)
    if (!(isupper((unsigned char)name[i]) || isdigit((unsigned char)name[i]) || name[i] == '_')) return 0;
  return 1;
}

/* x to the nearest integer, halves away from zero. */
static long long round_half(double x) { return (long long)(x < 0 ? x - 0.5 : x + 0.5); }

/* Whether a field is a plain integer. */
static int is_integer(const char *s) {
  if (*s == '-') s++;
  if (!*s) return 0;
  for (; *s; s++)
    if (!isdigit((unsigned char)*s)) return 0;
  return 1;
}

static int scale(const char *src, const char *dst, long n_out, double factor) {
  rows r;
  if (!read_rows(src, &r)) return 0;
  long c_id = find(r.header, "Dispatch_ID");
  long c_start = find(r.header, "Start_Timestamp"), c_end = find(r.header, "End_Timestamp");
  /* The span of one repetition: last end minus first start, plus a gap. */
  long long first = 0, last = 0;
  char **f = malloc(8192 * sizeof *f);
  if (c_start >= 0 && c_end >= 0) {
    for (size_t i = 0; i < r.n; i++) {
      char *copy = strdup(r.lines[i]);
      fields(copy, f, 8192);
      long long s = atoll(f[c_start]), e = atoll(f[c_end]);
      if (i == 0 || s < first) first = s;
      if (e > last) last = e;
      free(copy);
    }
  }
  long long period = last - first + 1000;
  /* the counter columns, when they are scaled */
  char *head = strdup(r.header);
  size_t n_head = fields(head, f, 8192);
  unsigned char *counter = calloc(n_head + 1, 1);
  for (size_t j = 0; factor != 1.0 && j < n_head; j++) counter[j] = (unsigned char)is_counter(f[j]);
  free(head);
  FILE *out = fopen(dst, "wb");
  if (!out) return 0;
  setvbuf(out, NULL, _IOFBF, 1 << 20);
  fprintf(out, "%s\n", r.header);
  for (long i = 0; i < n_out; i++) {
    size_t k = (size_t)i % r.n;
    long rep = i / (long)r.n;
    char *copy = strdup(r.lines[k]);
    size_t nf = fields(copy, f, 8192);
    for (size_t j = 0; j < nf; j++) {
      if (j) fputc(',', out);
      if ((long)j == c_id) fprintf(out, "%ld", i);
      else if (((long)j == c_start || (long)j == c_end) && period > 0)
        fprintf(out, "%lld", atoll(f[j]) + rep * period);
      else if (j < n_head && counter[j] && is_integer(f[j]))
        fprintf(out, "%lld", round_half((double)atoll(f[j]) * factor));
      else fputs(f[j], out);
    }
    fputc('\n', out);
    free(copy);
  }
  free(f);
  free(counter);
  for (size_t i = 0; i < r.n; i++) free(r.lines[i]);
  free(r.lines);
  free(r.header);
  return fclose(out) == 0;
}

static int copy_file(const char *src, const char *dst) {
  FILE *in = fopen(src, "rb");
  if (!in) return 0;
  FILE *out = fopen(dst, "wb");
  char buf[65536];
  size_t n;
  while (out && (n = fread(buf, 1, sizeof buf, in)) > 0) fwrite(buf, 1, n, out);
  fclose(in);
  return out && fclose(out) == 0;
}

int main(int argc, char **argv) {
  if (argc != 4 && argc != 5) {
    fprintf(stderr, "usage: scale_workload SOURCE_DIR N OUT_DIR [FACTOR]\n");
    return 2;
  }
  double factor = argc == 5 ? atof(argv[4]) : 1.0;
  const char *src = argv[1], *dst = argv[3];
  long n = atol(argv[2]);
  if (mkdir(dst, 0777) != 0 && errno != EEXIST) {
    perror(dst);
    return 1;
  }
  static const char *const tables[] = {"pmc_perf.csv", "SQ_IFETCH_LEVEL.csv", "SQ_INST_LEVEL_LDS.csv",
                                       "SQ_INST_LEVEL_SMEM.csv", "SQ_INST_LEVEL_VMEM.csv",
                                       "SQ_LEVEL_WAVES.csv"};
  char a[4096], b[4096];
  for (size_t i = 0; i < sizeof tables / sizeof *tables; i++) {
    snprintf(a, sizeof a, "%s/%s", src, tables[i]);
    snprintf(b, sizeof b, "%s/%s", dst, tables[i]);
    if (!scale(a, b, n, factor) && i == 0) {
      fprintf(stderr, "scale_workload: cannot scale %s\n", a);
      return 1;
    }
  }
  static const char *const copies[] = {"sysinfo.csv", "roofline.csv"};
  for (size_t i = 0; i < 2; i++) {
    snprintf(a, sizeof a, "%s/%s", src, copies[i]);
    snprintf(b, sizeof b, "%s/%s", dst, copies[i]);
    copy_file(a, b);
  }
  return 0;
}
