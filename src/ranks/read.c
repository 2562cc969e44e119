/*
 * read.c - the rank.R parts of an MPI profile read as one workload.
 *
 * Two passes, on up to one thread per processor: the first asks each part for
 * its dispatch count and column names only, so the merged tables are sized
 * once; the second loads each part (for analysis, only the columns it
 * evaluates and, with --rank, only the selected parts), appends its rows and
 * frees it. Invariants: rows are in part order whatever finished first, keep
 * their rank and host, and are blank in a column their part lacks. Parts may
 * come from other processes (lm_part_source); a --split ranks profile is
 * combined in ranks/split.c. docs/mpi.md.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sql/sql.h"
#include "db/db.h"
#include "ranks/ranks.h"
#include "folder/folder.h"
#include "ranks/merge.h"

static int cmp_parts(const void *x, const void *y) {
  const part *a = x, *b = y;
  return (a->rank > b->rank) - (a->rank < b->rank);
}

/* rank.R with R a decimal number: R, else -1. */
static int part_rank(const char *name) {
  if (strncmp(name, "rank.", 5) != 0 || !name[5] || strlen(name + 5) > 9) return -1;
  for (const char *p = name + 5; *p; p++)
    if (!isdigit((unsigned char)*p)) return -1;
  return atoi(name + 5);
}

int lm_ranks_present(const char *dir) {
  DIR *d = opendir(dir);
  if (!d) return 0;
  int found = 0;
  struct dirent *e;
  while (!found && (e = readdir(d)) != NULL) {
    if (part_rank(e->d_name) < 0) continue;
    char path[4096];
    struct stat st;
    snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
    found = stat(path, &st) == 0 && S_ISDIR(st.st_mode);
  }
  closedir(d);
  return found;
}

static lm_status list_parts(const char *dir, lm_arena *arena, part **out, size_t *n_out, lm_diag *diag) {
  DIR *d = opendir(dir);
  if (!d) return lm_fail(diag, LM_EIO, dir, "cannot open workload folder: %s", strerror(errno));
  size_t n = 0, cap = 0;
  part *parts = NULL;
  lm_status st = LM_OK;
  struct dirent *e;
  while ((e = readdir(d)) != NULL) {
    int rank = part_rank(e->d_name);
    if (rank < 0) continue;
    size_t len = strlen(dir) + strlen(e->d_name) + 2;
    char *path = lm_arena_alloc(arena, len);
    if (!path) goto nomem;
    snprintf(path, len, "%s/%s", dir, e->d_name);
    struct stat sb;
    if (stat(path, &sb) != 0 || !S_ISDIR(sb.st_mode)) continue;
    if (n == cap) {
      cap = cap ? 2 * cap : 64;
      part *grown = lm_arena_alloc(arena, cap * sizeof *grown);
      if (!grown) goto nomem;
      if (n) memcpy(grown, parts, n * sizeof *grown);
      parts = grown;
    }
    memset(&parts[n], 0, sizeof parts[n]);
    parts[n].dir = path;
    parts[n].rank = rank;
    n++;
  }
  closedir(d);
  if (n > 1) qsort(parts, n, sizeof *parts, cmp_parts); /* (parts is NULL when n is 0) */
  for (size_t i = 1; i < n; i++)
    if (parts[i].rank == parts[i - 1].rank)
      return lm_fail(diag, LM_EDATA, parts[i].dir, "a second part for rank %d (%s)", parts[i].rank, parts[i - 1].dir);
  *out = parts;
  *n_out = n;
  return st;
nomem:
  closedir(d);
  return lm_oom(diag, dir);
}

/* Ranks 0 to the highest part's without a part: a part that was not
 * copied, or a rank that died before it wrote one. Its dispatches are
 * not in the workload, which is said (the first few missing ranks). */
static void warn_gaps(const char *dir, const part *parts, size_t n) {
  if (!n) return;
  int top = parts[n - 1].rank;
  size_t missing = (size_t)top + 1 - n;
  if (!missing) return;
  char list[160] = "";
  size_t at = 0, shown = 0;
  for (int r = 0, i = 0; r <= top && shown < 8; r++) {
    while ((size_t)i < n && parts[i].rank < r) i++;
    if ((size_t)i < n && parts[i].rank == r) continue;
    at += (size_t)snprintf(list + at, sizeof list - at, "%s%d", shown ? ", " : "", r);
    if (at >= sizeof list) at = sizeof list - 1;
    shown++;
  }
  lm_log(LM_LOG_WARN, "%s: %zu of ranks 0 to %d have no rank.R part (rank%s %s%s): their dispatches are not in the "
         "workload", dir, missing, top, missing == 1 ? "" : "s", list, missing > shown ? ", ..." : "");
}

/* The parts a rank selection reads (ranks NULL or empty: all): those whose
 * rank it holds, after the first part, which is kept for its system
 * information alone when it is not selected. Every part when the
 * selection holds none of them (the analysis then names the ranks there
 * are). *selected: 1 when parts were left out. */
static void select_parts(part *parts, size_t *n, const lm_idset *ranks, int *selected) {
  *selected = 0;
  if (!ranks || !ranks->n || !*n) return;
  size_t hits = 0;
  for (size_t i = 0; i < *n; i++) hits += lm_idset_has(ranks, parts[i].rank) != 0;
  if (!hits || hits == *n) return;
  for (size_t i = 0; i < *n; i++) parts[i].left_out = !lm_idset_has(ranks, parts[i].rank);
  *selected = 1;
}

/* The parts select_parts keeps, in their order. */
static void compact_parts(part *parts, size_t *n, int selected) {
  if (!selected) return;
  size_t kept = 0;
  if (parts[0].left_out) {
    parts[0].info_only = 1;
    kept = 1;
  }
  for (size_t i = kept; i < *n; i++)
    if (!parts[i].left_out) parts[kept++] = parts[i];
  *n = kept;
}

/* The dispatch count of a part a --rank selection leaves out (the
 * workload's total counts every part's): its database's count, or its
 * CSV files read. Errors: the part's own, as when it is read. */
static lm_status count_rows(const char *dir, size_t *n, lm_diag *diag) {
  char db_path[4096];
  snprintf(db_path, sizeof db_path, "%s/%s", dir, LM_WORKLOAD_DB);
  struct stat sb;
  lm_status st;
  if (stat(db_path, &sb) != 0) {
    lm_workload *w = NULL;
    if ((st = lm_folder_read(dir, NULL, &w, diag)) == LM_OK) *n = w->pmc->n_rows;
    lm_workload_free(w);
    return st;
  }
  lm_sql *sql = NULL;
  int64_t wid = 0;
  st = lm_sql_open(db_path, LM_DB_READ_FIXED, &sql, diag);
  if (st == LM_OK) st = lm_db_find_workload(sql, NULL, &wid, n, NULL, diag);
  lm_sql_close(sql);
  return st;
}

lm_status lm_ranks_part_dirs(const char *dir, const lm_workload_options *opts, lm_arena *arena,
                                     const char ***dirs, size_t *n, lm_diag *diag) {
  part *parts = NULL;
  *dirs = NULL;
  *n = 0;
  lm_status st = list_parts(dir, arena, &parts, n, diag);
  if (st != LM_OK) return st;
  int selected;
  select_parts(parts, n, opts ? opts->ranks : NULL, &selected);
  compact_parts(parts, n, selected);
  *dirs = lm_arena_alloc(arena, (*n + 1) * sizeof **dirs);
  if (!*dirs) return lm_oom(diag, dir);
  for (size_t i = 0; i < *n; i++) (*dirs)[i] = parts[i].dir;
  return LM_OK;
}

source *lm_ranks_source(merge *m, const char *name, int add) {
  for (size_t i = 0; i < m->n_sources; i++)
    if (strcmp(m->sources[i].name, name) == 0) return &m->sources[i];
  if (!add) return NULL;
  if (m->n_sources == m->cap_sources) {
    m->cap_sources = m->cap_sources ? 2 * m->cap_sources : 16;
    source *grown = lm_arena_alloc(m->arena, m->cap_sources * sizeof *grown);
    if (!grown) return NULL;
    if (m->n_sources) memcpy(grown, m->sources, m->n_sources * sizeof *grown);
    m->sources = grown;
  }
  source *s = &m->sources[m->n_sources];
  memset(s, 0, sizeof *s);
  s->name = lm_arena_strdup(m->arena, name);
  if (!s->name) return NULL;
  m->n_sources++;
  return s;
}

/* Name (src, col) of a part into the counts; with filter (a database
 * part) only when m->want accepts it, asked once per name. */
static lm_status count_name(merge *m, const char *src, const char *col, int filter) {
  char key[1024];
  snprintf(key, sizeof key, "%s\037%s", src, col);
  if (lm_map_get(m->names, key, NULL)) return LM_OK;
  /* Sources in the order of their first names, wanted or not. */
  source *s = lm_ranks_source(m, src, 1);
  if (!s) return lm_oom(m->diag, m->dir);
  if (filter && m->want) {
    int64_t verdict;
    if (!lm_map_get(m->verdicts, key, &verdict)) {
      verdict = m->want(m->want_ctx, src, col);
      if (lm_map_put(m->verdicts, key, verdict) != LM_OK) return lm_oom(m->diag, m->dir);
    }
    if (!verdict) return LM_OK;
  }
  /* The want's answer (1 or LM_DB_WANT_LATER; 1 unfiltered) is what a
   * part's read is told. */
  int64_t keep = 1;
  if (filter && m->want) lm_map_get(m->verdicts, key, &keep);
  if (lm_map_put(m->names, key, keep) != LM_OK) goto nomem;
  s->n_names++;
  if (m->n_counted == m->cap_counted) {
    m->cap_counted = m->cap_counted ? 2 * m->cap_counted : 256;
    counted *grown = lm_arena_alloc(m->arena, m->cap_counted * sizeof *grown);
    if (!grown) goto nomem;
    if (m->n_counted) memcpy(grown, m->counted, m->n_counted * sizeof *grown);
    m->counted = grown;
  }
  m->counted[m->n_counted].source = s;
  m->counted[m->n_counted].later = keep == LM_DB_WANT_LATER;
  if (!(m->counted[m->n_counted].name = lm_arena_strdup(m->arena, col))) goto nomem;
  m->n_counted++;
  return LM_OK;
nomem:
  return lm_oom(m->diag, m->dir);
}

/* A column name for pass 1: "source\0column\0" appended to names. */
static void note_name(lm_buf *names, const char *src, const char *col) {
  lm_buf_append(names, src, strlen(src) + 1);
  lm_buf_append(names, col, strlen(col) + 1);
}

/* Pass 1 on one part: its dispatch count and the names of its columns
 * (into names), from its database (a folder of CSV files is read whole).
 * Touches nothing shared: parts are shaped side by side. */
static lm_status shape(part *p, lm_buf *names, lm_diag *diag) {
  char db_path[4096];
  snprintf(db_path, sizeof db_path, "%s/%s", p->dir, LM_WORKLOAD_DB);
  struct stat sb;
  lm_status st;
  if (stat(db_path, &sb) != 0) {
    lm_workload *w = NULL;
    if ((st = lm_folder_read(p->dir, NULL, &w, diag)) != LM_OK) return st;
    p->n_rows = w->pmc->n_rows;
    for (size_t c = 0; st == LM_OK && c < w->pmc->n_cols; c++) note_name(names, "pmc_perf", w->pmc->cols[c].name);
    for (size_t i = 0; st == LM_OK && i < w->n_levels; i++)
      for (size_t c = 0; st == LM_OK && c < w->levels[i]->n_cols; c++)
        note_name(names, w->levels[i]->name, w->levels[i]->cols[c].name);
    lm_workload_free(w);
    return st;
  }
  lm_sql *sql = NULL;
  lm_stmt *s = NULL;
  int64_t wid = 0;
  int complete = 0, rc = 0;
  st = lm_sql_open(db_path, LM_DB_READ_FIXED, &sql, diag);
  if (st == LM_OK) st = lm_db_schema(sql, 0, diag);
  if (st == LM_OK) st = lm_db_find_workload(sql, NULL, &wid, &p->n_rows, &complete, diag);
  if (st == LM_OK && !complete)
    st = lm_fail(diag, LM_EDATA, db_path,
                 "rank %d's profile has not finished (continue it with `lumen profile --resume -w %s`)", p->rank,
                 p->dir);
  p->db = 1;
  if (st == LM_OK &&
      (st = lm_sql_prepare(sql, "SELECT value FROM sysinfo WHERE workload_id = ? AND key = 'gpu_arch'", &s, diag)) ==
          LM_OK) {
    lm_stmt_bind_int64(s, 1, wid);
    if ((rc = lm_stmt_step(s)) == 1 && lm_stmt_text(s, 0)) snprintf(p->arch, sizeof p->arch, "%s", lm_stmt_text(s, 0));
    else if (rc < 0) st = lm_stmt_error(s, "read system info", diag);
    lm_stmt_free(s);
    s = NULL;
  }
  if (st == LM_OK)
    st = lm_sql_prepare(sql, "SELECT source, name FROM column_data WHERE workload_id = ?", &s, diag);
  if (st == LM_OK) {
    lm_stmt_bind_int64(s, 1, wid);
    while (st == LM_OK && (rc = lm_stmt_step(s)) == 1) {
      const char *src = lm_stmt_text(s, 0), *col = lm_stmt_text(s, 1);
      if (src && col && strcmp(src, "roofline") != 0) note_name(names, src, col);
    }
    if (st == LM_OK && rc < 0) st = lm_stmt_error(s, "read column names", diag);
  }
  lm_stmt_free(s);
  s = NULL;
  lm_diag ignored;
  if (st == LM_OK && lm_sql_prepare(sql, "SELECT COUNT(*) FROM profile_option WHERE workload_id = ? AND key = "
                                         "'split' AND value = 'ranks'", &s, &ignored) == LM_OK) {
    lm_stmt_bind_int64(s, 1, wid);
    if (lm_stmt_step(s) == 1) p->split = lm_stmt_int64(s, 0) > 0;
  }
  lm_stmt_free(s);
  lm_sql_close(sql);
  if (st == LM_OK && names->failed) st = lm_oom(diag, p->dir);
  return st;
}

/* Pass 1 over every part, with up to one thread per processor (at most
 * 8); the names are then counted in part order. The error is the lowest
 * failing part's, as when the parts are shaped one after the other. */
typedef struct shapers {
  part *parts;
  lm_buf *names;
  lm_status *st;
  lm_diag *diags;
  size_t n_parts, next;
  pthread_mutex_t lock;
} shapers;

static void *shaper_main(void *arg) {
  shapers *x = arg;
  for (;;) {
    pthread_mutex_lock(&x->lock);
    size_t i = x->next++;
    pthread_mutex_unlock(&x->lock);
    if (i >= x->n_parts) break;
    lm_diag_clear(&x->diags[i]);
    x->st[i] = shape(&x->parts[i], &x->names[i], &x->diags[i]);
  }
  return NULL;
}

static lm_status shape_parts(merge *m, part *parts, size_t n_parts, const lm_workload_options *opts,
                             size_t *total) {
  shapers x;
  memset(&x, 0, sizeof x);
  x.parts = parts;
  x.n_parts = n_parts;
  x.names = lm_calloc(n_parts + 1, sizeof *x.names);
  x.st = lm_calloc(n_parts + 1, sizeof *x.st);
  x.diags = lm_malloc((n_parts + 1) * sizeof *x.diags);
  lm_status st = LM_OK;
  if (!x.names || !x.st || !x.diags || pthread_mutex_init(&x.lock, NULL) != 0) {
    st = lm_oom(m->diag, m->dir);
    goto done;
  }
  long cpus = sysconf(_SC_NPROCESSORS_ONLN);
  size_t n_threads = cpus > 1 ? (size_t)cpus : 1;
  if (n_threads > 8) n_threads = 8;
  if (n_threads > n_parts) n_threads = n_parts;
  pthread_t threads[8];
  size_t started = 0;
  for (size_t t = 1; t < n_threads; t++)
    if (pthread_create(&threads[started], NULL, shaper_main, &x) == 0) started++;
  shaper_main(&x);
  for (size_t t = 0; t < started; t++) pthread_join(threads[t], NULL);
  pthread_mutex_destroy(&x.lock);
  /* The columns to read, chosen for the first database part's
   * architecture (another architecture is refused when the parts are
   * read). A --split ranks profile's parts are combined whole. */
  size_t n_split = 0;
  const char *arch = NULL;
  for (size_t i = 0; i < n_parts; i++) {
    n_split += parts[i].split;
    if (!arch && x.st[i] == LM_OK && parts[i].db && parts[i].arch[0]) arch = parts[i].arch;
  }
  if (opts && opts->choose && arch && n_split != n_parts) m->want = opts->choose(opts->choose_ctx, arch, NULL, &m->want_ctx);
  *total = 0;
  size_t last = SIZE_MAX; /* the last part whose names were counted */
  for (size_t i = 0; st == LM_OK && i < n_parts; i++) {
    if (x.st[i] != LM_OK) {
      if (m->diag) *m->diag = x.diags[i];
      st = x.st[i];
      break;
    }
    if (parts[i].info_only) {
      m->rows_left_out += parts[i].n_rows;
      parts[i].n_rows = 0; /* none of its rows are read */
      continue;
    }
    /* SPMD parts name the same columns: a list already counted adds
     * nothing (count_name keeps a name's first verdict and place). */
    const lm_buf *mine = &x.names[i];
    int same = last != SIZE_MAX && parts[last].db == parts[i].db && x.names[last].len == mine->len &&
               (!mine->len || memcmp(x.names[last].data, mine->data, mine->len) == 0);
    last = i;
    const char *at = same ? NULL : mine->data, *end = at ? at + mine->len : NULL;
    while (st == LM_OK && at && at < end) {
      const char *col = at + strlen(at) + 1;
      st = count_name(m, at, col, parts[i].db);
      at = col + strlen(col) + 1;
    }
    *total += parts[i].n_rows;
  }
done:
  for (size_t i = 0; x.names && i < n_parts; i++) lm_buf_fini(&x.names[i]);
  lm_free(x.names);
  lm_free(x.st);
  lm_free(x.diags);
  return st;
}

const char *lm_ranks_intern(merge *m, const char *s) {
  if (!s) return NULL;
  int64_t id;
  if (lm_map_get(m->strings, s, &id)) return (const char *)(uintptr_t)id;
  char *copy = lm_arena_strdup(m->arena, s);
  if (!copy || lm_map_put(m->strings, s, (int64_t)(uintptr_t)copy) != LM_OK) return NULL;
  return copy;
}

/* Drop the merged executions: not every part has them alike. */
static void drop_exec(merge *m, lm_workload *w) {
  if (m->exec_state != 2)
    lm_log(LM_LOG_INFO, "%s: its ranks' parts were not all collected with the same counter sets; the spread of "
                        "their executions is not shown", m->dir);
  w->exec = NULL;
  m->exec_state = 2;
}

/* The provenance column (source, column) of x, added (every row -1) when new. */
static int16_t *prov_column(merge *m, lm_executions *x, const char *src, const char *col, size_t total) {
  for (size_t j = 0; j < x->n_prov; j++)
    if (strcmp(x->prov_source[j], src) == 0 && strcmp(x->prov_column[j], col) == 0) return x->prov_sets[j];
  if (x->n_prov == m->cap_prov) {
    size_t cap = m->cap_prov ? 2 * m->cap_prov : 256;
    const char **ps = lm_arena_alloc(m->arena, cap * sizeof *ps), **pc = lm_arena_alloc(m->arena, cap * sizeof *pc);
    int16_t **sets = lm_arena_alloc(m->arena, cap * sizeof *sets);
    if (!ps || !pc || !sets) return NULL;
    if (x->n_prov) {
      memcpy(ps, x->prov_source, x->n_prov * sizeof *ps);
      memcpy(pc, x->prov_column, x->n_prov * sizeof *pc);
      memcpy(sets, x->prov_sets, x->n_prov * sizeof *sets);
    }
    x->prov_source = ps;
    x->prov_column = pc;
    x->prov_sets = sets;
    m->cap_prov = cap;
  }
  int16_t *v = lm_arena_alloc(m->arena, (total + 1) * sizeof *v);
  const char *s1 = lm_ranks_intern(m, src), *c1 = lm_ranks_intern(m, col);
  if (!v || !s1 || !c1) return NULL;
  memset(v, 0xff, total * sizeof *v);
  x->prov_source[x->n_prov] = s1;
  x->prov_column[x->n_prov] = c1;
  x->prov_sets[x->n_prov++] = v;
  return v;
}

/* The executions of part pw appended at row `at` of the merged ones (made
 * on the first part that has them). When a part has none, or other sets,
 * there are none: the result does not depend on the order parts are read. */
static void append_exec(merge *m, lm_workload *w, const lm_workload *pw, size_t at, size_t total) {
  const lm_executions *px = pw->exec;
  if (m->exec_state == 2) return;
  if (!px) {
    m->without_exec++;
    if (m->exec_state == 1) drop_exec(m, w);
    return;
  }
  if (m->without_exec) {
    drop_exec(m, w);
    return;
  }
  lm_executions *x = w->exec;
  if (m->exec_state == 0) {
    x = lm_arena_alloc(m->arena, sizeof *x);
    if (!x) {
      drop_exec(m, w);
      return;
    }
    x->n_rows = total;
    x->n_sets = px->n_sets;
    x->n_shared = px->n_shared;
    x->shared = lm_arena_alloc(m->arena, ((size_t)px->n_shared + 1) * sizeof *x->shared);
    size_t cells = total * (size_t)px->n_sets;
    x->values = lm_arena_alloc(m->arena, (cells * (size_t)px->n_shared + 1) * sizeof *x->values);
    x->runs = lm_arena_alloc(m->arena, (cells + 1) * sizeof *x->runs);
    if (!x->shared || !x->values || !x->runs) {
      drop_exec(m, w);
      return;
    }
    for (int32_t q = 0; q < px->n_shared; q++) x->shared[q] = lm_ranks_intern(m, px->shared[q]);
    for (size_t i = 0; i < cells * (size_t)px->n_shared; i++) x->values[i] = LM_NAN;
    for (size_t i = 0; i < cells; i++) x->runs[i] = -1;
    w->exec = x;
    m->exec_state = 1;
  }
  int same = px->n_sets == x->n_sets && px->n_shared == x->n_shared;
  for (int32_t q = 0; same && q < x->n_shared; q++) same = strcmp(px->shared[q], x->shared[q]) == 0;
  if (!same) {
      drop_exec(m, w);
      return;
    }
  size_t cells = pw->pmc->n_rows * (size_t)x->n_sets;
  memcpy(x->values + at * (size_t)x->n_sets * (size_t)x->n_shared, px->values,
         cells * (size_t)x->n_shared * sizeof *x->values);
  memcpy(x->runs + at * (size_t)x->n_sets, px->runs, cells * sizeof *x->runs);
  for (size_t i = 0; i < px->n_prov; i++) {
    int16_t *v = prov_column(m, x, px->prov_source[i], px->prov_column[i], total);
    if (!v) {
      drop_exec(m, w);
      return;
    }
    memcpy(v + at, px->prov_sets[i], pw->pmc->n_rows * sizeof(int16_t));
  }
}

/* Per-row facts of part pw at row `at`: rank, host, regions, clocks. */
static lm_status append_rows(merge *m, lm_workload *w, const lm_workload *pw, part *pt, size_t at, size_t total) {
  int rank = pt->rank;
  size_t n = pw->pmc->n_rows;
  /* A part holds its own rank's dispatches: one recorded by another rank
   * is a copied or renamed part, which would count that rank twice. */
  for (size_t r = 0; pw->row_rank && r < n; r++)
    if (pw->row_rank[r] >= 0 && pw->row_rank[r] != rank)
      return lm_fail_at(m->diag, LM_EDATA, pt->dir, 0, "dispatch.rank",
                        "its dispatches were recorded by rank %d, not %d (a copied or renamed part?): give it "
                        "its rank's name or remove it",
                        (int)pw->row_rank[r], rank);
  for (size_t r = 0; r < n; r++) {
    w->row_rank[at + r] = pw->row_rank && pw->row_rank[r] >= 0 ? pw->row_rank[r] : rank;
    w->row_host[at + r] = pw->row_host ? lm_ranks_intern(m, pw->row_host[r]) : NULL;
  }
  if (pw->row_clock_source) {
    if (!w->row_clock_source) {
      w->row_clock_source = lm_arena_alloc(m->arena, (total + 1) * sizeof *w->row_clock_source);
      if (!w->row_clock_source) return lm_oom(m->diag, m->dir);
    }
    for (size_t r = 0; r < n; r++) w->row_clock_source[at + r] = lm_ranks_intern(m, pw->row_clock_source[r]);
  }
  if (pw->n_regions && pw->row_regions) {
    /* The part's own region numbers for now: renumbered in part order at
     * the end (finish_regions), whatever order the parts were read in. */
    if (!w->row_regions) {
      w->row_regions = lm_arena_alloc(m->arena, (total + 1) * sizeof *w->row_regions);
      if (!w->row_regions) return lm_oom(m->diag, m->dir);
    }
    size_t nr = pw->n_regions < 64 ? pw->n_regions : 64;
    pt->region_names = lm_arena_alloc(m->arena, (nr + 1) * sizeof *pt->region_names);
    if (!pt->region_names) return lm_oom(m->diag, m->dir);
    for (size_t i = 0; i < nr; i++) pt->region_names[i] = lm_ranks_intern(m, pw->region_names[i]);
    pt->n_regions = nr;
    memcpy(w->row_regions + at, pw->row_regions, n * sizeof *w->row_regions);
  }
  return LM_OK;
}

/* The regions of every part under one numbering, in part order. */
static void finish_regions(merge *m, lm_workload *w, const part *parts, size_t n_parts) {
  if (!w->row_regions) return;
  w->region_names = lm_arena_alloc(m->arena, 64 * sizeof *w->region_names);
  if (!w->region_names) {
    w->row_regions = NULL;
    return;
  }
  size_t at = 0;
  for (size_t p = 0; p < n_parts; at += parts[p].n_rows, p++) {
    int map[64];
    for (size_t i = 0; i < parts[p].n_regions; i++) {
      size_t k = 0;
      while (k < w->n_regions && strcmp(w->region_names[k], parts[p].region_names[i]) != 0) k++;
      if (k == w->n_regions && k < 64) w->region_names[w->n_regions++] = parts[p].region_names[i];
      map[i] = k < 64 ? (int)k : -1;
    }
    for (size_t r = at; r < at + parts[p].n_rows; r++) {
      uint64_t local = w->row_regions[r], bits = 0;
      for (size_t i = 0; i < parts[p].n_regions; i++)
        if ((local >> i & 1) && map[i] >= 0) bits |= 1ULL << map[i];
      w->row_regions[r] = bits;
    }
  }
}

/* Part i's system information moves to w (part 0's is w's own, with its
 * roofline): a selection of one rank shows that rank's. */
lm_status lm_ranks_adopt_info(merge *m, lm_workload *w, lm_workload *pw, size_t i) {
  lm_sysinfo *info = &w->part_sysinfo[i];
  size_t n = pw->sysinfo.n_fields;
  info->n_fields = n;
  info->names = lm_arena_alloc(m->arena, (n + 1) * sizeof(char *));
  info->texts = lm_arena_alloc(m->arena, (n + 1) * sizeof(char *));
  info->values = lm_arena_alloc(m->arena, (n + 1) * sizeof(double));
  if (!info->names || !info->texts || !info->values) return lm_oom(m->diag, m->dir);
  memcpy(info->names, pw->sysinfo.names, n * sizeof(char *));
  memcpy(info->texts, pw->sysinfo.texts, n * sizeof(char *));
  memcpy(info->values, pw->sysinfo.values, n * sizeof(double));
  if (i > 0) {
    w->part_tables[i] = pw->sysinfo_table;
    pw->sysinfo_table = NULL;
    w->part_roofline[i] = pw->roofline;
    pw->roofline = NULL;
    return LM_OK;
  }
  w->sysinfo_table = pw->sysinfo_table;
  pw->sysinfo_table = NULL;
  w->roofline = pw->roofline;
  pw->roofline = NULL;
  w->sysinfo = *info;
  w->arch = lm_sysinfo_text(&w->sysinfo, "gpu_arch");
  if (pw->simulated) w->simulated = lm_arena_strdup(m->arena, pw->simulated);
  return LM_OK;
}

/* ------------------------------------------------- parts side by side */

/* The merged tables' statistics: a million rows of hundreds of columns
 * take seconds on one thread, so the rows are split among up to one
 * thread per processor (at most 8). */
static lm_status finish_table(lm_table *t) {
  long cpus = sysconf(_SC_NPROCESSORS_ONLN);
  int n = cpus > 1 ? (int)cpus : 1;
  if (n > 8) n = 8;
  if (t->n_rows < 65536) n = 1;
  return lm_table_finish_threads(t, n);
}

/* What a part's read loads: the names pass 1 counted, and the roofline
 * columns m->want accepts (pass 1 does not count them). Read-only: the
 * reader threads share it. */
static int merged_wants(void *ctx, const char *src, const char *name) {
  const merge *m = ctx;
  if (strcmp(src, "roofline") == 0) return m->want(m->want_ctx, src, name);
  /* "source\037name", without snprintf: asked of every column of every
   * part, thrice */
  char key[1024];
  size_t ns = strlen(src), nn = strlen(name);
  if (ns + nn + 1 >= sizeof key) return 0;
  memcpy(key, src, ns);
  key[ns] = '\037';
  memcpy(key + ns + 1, name, nn);
  /* the part's read decodes every one of them, but for those only the
   * evaluator reads when the merge takes their planes as they are */
  int64_t verdict = 0;
  if (!lm_map_getn(m->names, key, ns + 1 + nn, &verdict)) return 0;
  return m->keep_planes && verdict == LM_DB_WANT_LATER ? LM_DB_WANT_LATER : 1;
}

static lm_db_want_fn merged_choice(void *ctx, const char *arch, const char *compat, void **want_ctx) {
  (void)arch;
  (void)compat;
  *want_ctx = ctx;
  return merged_wants;
}

/* The first part outside a --rank selection: its roofline, no counter. */
static int roofline_only(void *ctx, const char *src, const char *name) {
  (void)ctx;
  (void)name;
  return strcmp(src, "roofline") == 0;
}

static lm_db_want_fn info_choice(void *ctx, const char *arch, const char *compat, void **want_ctx) {
  (void)ctx;
  (void)arch;
  (void)compat;
  *want_ctx = NULL;
  return roofline_only;
}

/* Reading the parts side by side: threads take the next part, load it on
 * their own, and append it under one lock at the rows pass 1 gave it. */
typedef struct readers {
  merge *m;
  lm_workload *w;
  part *parts;
  size_t n_parts, total, next;
  pthread_mutex_t lock;
  lm_status st;     /* the error of the lowest part that failed */
  size_t failed_at;
  lm_diag diag;
  char arch[64];    /* the first part read: its architecture and rank */
  int arch_rank;
  const lm_part_source *src; /* parts loaded elsewhere (NULL: here) */
  lm_workload_options part_opts; /* how a part is read: its columns */
  lm_workload_options info_opts; /* how an info_only part is read */
} readers;

/* Part i, loaded as pw, into the merged tables (under the lock); packs:
 * its tables' packed columns (pmc, then each level; entries taken are
 * set NULL). */
static lm_status add_part(readers *x, size_t i, lm_workload *pw, lm_ranks_pack **packs, lm_diag *diag) {
  merge *m = x->m;
  part *p = &x->parts[i];
  lm_status st;
  if (pw->n_parts) return lm_fail(diag, LM_EDATA, p->dir, "a rank's part holds rank.R parts itself");
  if (!p->info_only && pw->pmc->n_rows != p->n_rows)
    return lm_fail(diag, LM_EDATA, p->dir, "holds %zu dispatches, %zu when first read (changed while being read?)",
                   pw->pmc->n_rows, p->n_rows);
  if (!x->arch[0]) {
    snprintf(x->arch, sizeof x->arch, "%s", pw->arch);
    x->arch_rank = p->rank;
  } else if (strcmp(pw->arch, x->arch) != 0) {
    return lm_fail_at(diag, LM_EDATA, pw->sysinfo_table ? pw->sysinfo_table->path : p->dir, 0, "gpu_arch",
                      "rank %d ran on %s, rank %d on %s: the parts of one workload share an architecture", p->rank,
                      pw->arch, x->arch_rank, x->arch);
  }
  lm_diag *saved = m->diag;
  m->diag = diag;
  st = lm_ranks_adopt_info(m, x->w, pw, i);
  if (p->info_only) {
    m->diag = saved;
    return st;
  }
  source *pmc = lm_ranks_source(m, "pmc_perf", 0);
  if (st == LM_OK) st = lm_ranks_append(m, pmc, pw->pmc, p->at, x->total, p->dir, NULL, i, packs[0]);
  if (st == LM_OK) st = lm_ranks_keep_pack(m, pmc, packs[0], i);
  packs[0] = NULL;
  for (size_t k = 0; st == LM_OK && k < pw->n_levels; k++) {
    lm_table *t = pw->levels[k];
    source *s = lm_ranks_source(m, t->name, 1);
    if (t->n_rows != pw->pmc->n_rows)
      st = lm_fail(diag, LM_EDATA, t->path, "%zu rows for %zu dispatches: an accumulate table has one row per dispatch",
                   t->n_rows, pw->pmc->n_rows);
    else if (!s)
      st = lm_oom(diag, m->dir);
    else if ((st = lm_ranks_append(m, s, t, p->at, x->total, p->dir, NULL, i, packs[1 + k])) == LM_OK) {
      st = lm_ranks_keep_pack(m, s, packs[1 + k], i);
      packs[1 + k] = NULL;
    }
  }
  if (st == LM_OK) st = append_rows(m, x->w, pw, p, p->at, x->total);
  if (st == LM_OK) append_exec(m, x->w, pw, p->at, x->total);
  m->diag = saved;
  return st;
}

static void *reader_main(void *arg) {
  readers *x = arg;
  /* This thread's scratch for the columns that may be packed: a part's
   * read decodes them there, in pages that stay warm from part to part. */
  double *scratch = NULL;
  size_t scratch_rows = 0;
  for (;;) {
    pthread_mutex_lock(&x->lock);
    size_t i = x->next++;
    int stop = i >= x->n_parts || (x->st != LM_OK && i > x->failed_at);
    pthread_mutex_unlock(&x->lock);
    if (stop) break;
    lm_workload *pw = NULL;
    lm_diag d;
    lm_diag_clear(&d);
    lm_workload_options po = x->parts[i].info_only ? x->info_opts : x->part_opts;
    lm_ranks_placement pl = {x->m, x->parts[i].at, x->parts[i].n_rows, NULL, NULL};
    if (x->m->placed && !x->parts[i].info_only && (pl.used = lm_calloc(x->m->n_counted + 1, 1)) != NULL) {
      po.place = lm_ranks_place;
      po.place_ctx = &pl;
      size_t n = x->parts[i].n_rows;
      if (n > scratch_rows) {
        lm_free(scratch);
        scratch_rows = 0;
        if ((scratch = lm_malloc((x->m->n_counted + 1) * n * sizeof *scratch)) != NULL) scratch_rows = n;
      }
      pl.scratch = scratch; /* NULL: decoded into the merged tables */
    }
    lm_status st = x->src ? x->src->load(x->src->ctx, i, x->parts[i].dir, &po, &pw, &d)
                          : lm_folder_read(x->parts[i].dir, &po, &pw, &d);
    lm_free(pl.used);
    /* The columns its read left packed, in the merge's own planes: made
     * here, side by side, not under the lock. */
    lm_ranks_pack **packs = NULL;
    size_t n_packs = st == LM_OK && !x->parts[i].info_only ? 1 + pw->n_levels : 0;
    if (n_packs && !(packs = lm_calloc(n_packs, sizeof *packs))) st = lm_oom(&d, x->parts[i].dir);
    for (size_t k = 0; st == LM_OK && pl.scratch && k < n_packs; k++)
      st = lm_ranks_pack_table(x->m, k ? pw->levels[k - 1] : pw->pmc, pl.scratch, (x->m->n_counted + 1) * pl.n_rows,
                               x->src != NULL, &packs[k], &d);
    pthread_mutex_lock(&x->lock);
    if (st == LM_OK) st = add_part(x, i, pw, packs, &d);
    if (st != LM_OK && (x->st == LM_OK || i < x->failed_at)) {
      x->st = st;
      x->failed_at = i;
      x->diag = d;
    }
    pthread_mutex_unlock(&x->lock);
    for (size_t k = 0; k < n_packs; k++) lm_ranks_pack_free(packs[k]);
    lm_free(packs);
    lm_workload_free(pw);
  }
  lm_free(scratch);
  return NULL;
}

/* Pass 2: every part into the merged tables, with up to one thread per
 * processor (at most 8): loading a part (its database) is most of the
 * time, and parts do not depend on each other. */
static lm_status read_parts(merge *m, lm_workload *w, part *parts, size_t n_parts, size_t total,
                            const lm_part_source *src) {
  readers x;
  memset(&x, 0, sizeof x);
  x.src = src;
  x.m = m;
  x.w = w;
  x.parts = parts;
  x.n_parts = n_parts;
  x.total = total;
  if (m->want) {
    x.part_opts.choose = merged_choice;
    x.part_opts.choose_ctx = m;
  }
  x.info_opts.choose = info_choice;
  x.part_opts.fixed = x.info_opts.fixed = 1; /* finished parts: read without locks */
  m->keep_planes = !src && m->stats && m->placed;
  if (pthread_mutex_init(&x.lock, NULL) != 0) return lm_fail(m->diag, LM_ENOMEM, m->dir, "no lock");
  long cpus = sysconf(_SC_NPROCESSORS_ONLN);
  size_t n_threads = cpus > 1 ? (size_t)cpus : 1;
  if (n_threads > 8) n_threads = 8;
  if (n_threads > n_parts) n_threads = n_parts;
  if (src) n_threads = 1; /* parts from elsewhere come in part order */
  pthread_t threads[8];
  size_t started = 0;
  for (size_t t = 1; t < n_threads; t++)
    if (pthread_create(&threads[started], NULL, reader_main, &x) == 0) started++;
  reader_main(&x);
  for (size_t t = 0; t < started; t++) pthread_join(threads[t], NULL);
  pthread_mutex_destroy(&x.lock);
  if (x.st != LM_OK && m->diag) *m->diag = x.diag;
  return x.st;
}

lm_status lm_ranks_read(const char *dir, const lm_workload_options *opts, lm_workload **out,
                                      lm_diag *diag) {
  const lm_part_source *src = opts ? opts->parts : NULL;
  *out = NULL;
  lm_arena *arena = lm_arena_new(1 << 14);
  lm_workload *w = arena ? lm_arena_alloc(arena, sizeof *w) : NULL;
  merge m;
  memset(&m, 0, sizeof m);
  m.dir = dir;
  m.arena = arena;
  m.diag = diag;
  m.names = lm_map_new();
  m.strings = lm_map_new();
  m.verdicts = lm_map_new();
  part *parts = NULL;
  size_t n_parts = 0, total = 0;
  lm_status st = LM_OK;
  int selected = 0, restart = 0; /* restart: every part, after all */
  if (!w || !m.names || !m.strings || !m.verdicts) goto nomem;
  w->arena = arena;
  w->path = lm_arena_strdup(arena, dir);
  if (!w->path) goto nomem;
  if ((st = list_parts(dir, arena, &parts, &n_parts, diag)) != LM_OK) goto fail;
  if (!n_parts) {
    st = lm_fail(diag, LM_ENOTFOUND, dir, "no rank.R parts in the folder");
    goto fail;
  }
  warn_gaps(dir, parts, n_parts);
  select_parts(parts, &n_parts, opts ? opts->ranks : NULL, &selected);
  for (size_t i = 1; selected && i < n_parts; i++) {
    size_t rows = 0;
    if (parts[i].left_out && (st = count_rows(parts[i].dir, &rows, diag)) != LM_OK) goto fail;
    m.rows_left_out += rows;
  }
  compact_parts(parts, &n_parts, selected);
  uint64_t t_shape = lm_phase_begin();
  if ((st = shape_parts(&m, parts, n_parts, opts, &total)) != LM_OK) goto fail;
  lm_phase_end("load: parts' shapes", t_shape);
  for (size_t i = 0; selected && i < n_parts; i++)
    if (parts[i].split) {
      /* A --split ranks profile is combined from every share. */
      restart = 1;
      goto fail;
    }
  if (!lm_ranks_source(&m, "pmc_perf", 1)) goto nomem;
  {
    /* A --split ranks profile: the ranks' sets side by side, when they ran
     * the same dispatches; else each rank's rows, as any MPI profile. */
    size_t n_split = 0;
    for (size_t i = 0; i < n_parts; i++) n_split += parts[i].split;
    if (n_split == n_parts) {
      int differ = 0;
      if (src && (st = src->plan(src->ctx, n_parts, 0, diag)) != LM_OK) goto fail;
      src = NULL; /* combined here, or else read here as each rank's rows */
      lm_workload *combined = NULL;
      st = lm_ranks_split_combine(&m, parts, n_parts, &combined, &differ);
      if (st == LM_OK && !differ) {
        lm_map_free(m.names);
        lm_map_free(m.strings);
        lm_map_free(m.verdicts);
        lm_map_free(m.placed);
        lm_workload_free(w);
        *out = combined;
        return LM_OK;
      }
      if (st != LM_OK) goto fail;
    } else if (n_split) {
      lm_log(LM_LOG_WARN, "%s: %zu of the %zu ranks' parts collected a share of the counter sets (--split "
                          "ranks), the others all of them: the ranks are not combined", dir, n_split, n_parts);
    }
  }
  w->row_rank = lm_arena_alloc(arena, (total + 1) * sizeof *w->row_rank);
  w->row_host = lm_arena_alloc(arena, (total + 1) * sizeof *w->row_host);
  w->part_rank = lm_arena_alloc(arena, n_parts * sizeof *w->part_rank);
  w->part_sysinfo = lm_arena_alloc(arena, n_parts * sizeof *w->part_sysinfo);
  w->part_tables = lm_arena_alloc(arena, n_parts * sizeof *w->part_tables);
  w->part_roofline = lm_arena_alloc(arena, n_parts * sizeof *w->part_roofline);
  if (!w->row_rank || !w->row_host || !w->part_rank || !w->part_sysinfo || !w->part_tables || !w->part_roofline)
    goto nomem;
  size_t at = 0;
  for (size_t i = 0; i < n_parts; i++) {
    parts[i].at = at;
    at += parts[i].n_rows;
    w->part_rank[i] = parts[i].rank;
  }
  w->n_parts = n_parts; /* the part tables adopted are w's to free */
  m.n_parts = n_parts;
  m.stats = 1;
  for (size_t i = 0; i < n_parts; i++)
    if (!parts[i].db) m.stats = 0;
  if (m.stats && (st = lm_ranks_place_columns(&m, total)) != LM_OK) goto fail;
  if (src && (st = src->plan(src->ctx, n_parts, 1, diag)) != LM_OK) goto fail;
  if ((st = read_parts(&m, w, parts, n_parts, total, src)) != LM_OK) goto fail;
  uint64_t t_finish = lm_phase_begin();
  finish_regions(&m, w, parts, n_parts);
  /* Blank what parts lacked, then the tables take their final shape. */
  w->levels = lm_arena_alloc(arena, (m.n_sources + 1) * sizeof *w->levels);
  if (!w->levels) goto nomem;
  for (size_t i = 0; i < m.n_sources; i++) {
    source *s = &m.sources[i];
    if (!s->table) continue;
    for (size_t c = 0; c < s->table->n_cols; c++)
      for (size_t p = 0; p < n_parts; p++)
        if (!s->written[c][p] && parts[p].n_rows) {
          lm_ranks_blank(&s->table->cols[c], parts[p].at, parts[p].at + parts[p].n_rows);
          s->missing[c] += parts[p].n_rows;
          memset(s->table->row_missing + parts[p].at, 1, parts[p].n_rows);
        }
    if (m.stats) lm_ranks_finish_stats(s);
    if (m.stats && (st = lm_ranks_finish_uniform(&m, s, parts, n_parts)) != LM_OK) goto fail;
    if (lm_ranks_canonical_columns(s) != LM_OK || lm_ranks_canonical_strings(s->table) != LM_OK) goto nomem;
    if (m.stats && (st = lm_ranks_finish_packed(&m, s, parts, n_parts)) != LM_OK) goto fail;
    if (!m.stats) finish_table(s->table);
    for (size_t c = 0; c < s->table->n_cols; c++)
      if (s->table->cols[c].first_text && !s->table->cols[c].text_ids) s->table->cols[c].n_text = 1;
    if (strcmp(s->name, "pmc_perf") == 0) w->pmc = s->table;
    else w->levels[w->n_levels++] = s->table;
    s->table = NULL;
  }
  lm_phase_end("load: merged tables' statistics", t_finish);
  if (selected) w->n_dispatches_all = total + m.rows_left_out;
  lm_map_free(m.names);
  lm_map_free(m.strings);
  lm_map_free(m.verdicts);
  lm_map_free(m.placed);
  *out = w;
  return LM_OK;
nomem:
  st = lm_oom(diag, dir);
fail:
  for (size_t i = 0; i < m.n_sources; i++) lm_table_free(m.sources[i].table);
  lm_map_free(m.names);
  lm_map_free(m.strings);
  lm_map_free(m.verdicts);
  lm_map_free(m.placed);
  if (w) lm_workload_free(w);
  else lm_arena_free(arena);
  if (restart) {
    lm_workload_options every = *opts;
    every.ranks = NULL;
    return lm_ranks_read(dir, &every, out, diag);
  }
  return st;
}
