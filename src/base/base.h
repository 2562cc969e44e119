/*
 * base.h - what every lumen module shares: status codes and diagnostics,
 * allocation with fault injection, arenas, growable buffers, a string hash
 * map, levelled logging and self-timing.
 *
 * Nothing here prints or exits: errors travel as an lm_status plus an
 * optional lm_diag that names the file, line, column and field at fault;
 * log records go to a sink that only the CLI installs.
 */
#ifndef LUMEN_BASE_H
#define LUMEN_BASE_H

#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

/* ---------------------------------------------------------------- status */

typedef enum lm_status {
  LM_OK = 0,
  LM_ENOMEM = -1,   /* an allocation failed */
  LM_EIO = -2,      /* a file could not be opened, read or written */
  LM_EPARSE = -3,   /* malformed input: CSV, YAML, metric expression */
  LM_EINVAL = -4,   /* a bad argument or option value */
  LM_ENOTFOUND = -5,/* a file, field, kernel or metric that is not there */
  LM_EDATA = -6,    /* input that parses but cannot be analyzed */
  LM_EARCH = -7,    /* an architecture lumen has no definitions for */
  LM_ELIMIT = -8    /* input over a size limit */
} lm_status;

/* lm_strerror: a short constant text for a status code. Never NULL. */
const char *lm_strerror(lm_status status);

/* A diagnostic: what went wrong and where. Every field but message may be
 * empty (line/column 0 means unknown). */
typedef struct lm_diag {
  lm_status status;
  char file[512];   /* input file at fault, if any */
  long line;        /* 1-based line in file, 0 if unknown */
  long column;      /* 1-based column (character or CSV field), 0 if unknown */
  char field[128];  /* named field or CSV column, if any */
  char message[1024];
} lm_diag;

/* lm_diag_set: fill diag (which may be NULL) and return status. file and
 * field may be NULL. The message is formatted like printf. */
lm_status lm_diag_set(lm_diag *diag, lm_status status, const char *file,
                      long line, long column, const char *field,
                      const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 7, 8)))
#endif
    ;

/* The short forms of lm_diag_set, one per shape of error (each fills diag,
 * which may be NULL, and returns status):
 * lm_fail: about file as a whole (file may be NULL);
 * lm_fail_at: at line of file (0: unknown) and field (NULL: none);
 * lm_oom: out of memory while working on file (LM_ENOMEM). */
lm_status lm_fail(lm_diag *diag, lm_status status, const char *file, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;
lm_status lm_fail_at(lm_diag *diag, lm_status status, const char *file, long line, const char *field,
                     const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 6, 7)))
#endif
    ;
lm_status lm_oom(lm_diag *diag, const char *file);

/* lm_diag_clear: reset diag to "no error". diag may be NULL. */
void lm_diag_clear(lm_diag *diag);

/* lm_diag_format: write the one-line form "file:line:column: field 'x':
 * message" into out (capacity cap, always NUL-terminated). Returns out. */
char *lm_diag_format(const lm_diag *diag, char *out, size_t cap);

/* ---------------------------------------------------------------- memory */

/* Allocation wrappers. They return NULL on failure like malloc; tests can
 * make the Nth allocation from now fail with lm_alloc_fail_after(). */
void *lm_malloc(size_t size);
void *lm_calloc(size_t count, size_t size);
void *lm_realloc(void *ptr, size_t size);
/* lm_grow: items (*cap elements of size bytes) with room for element n:
 * items itself when n < *cap, else items reallocated to twice *cap (16
 * when empty, more when n needs it) and *cap updated; NULL when out of
 * memory or the bytes would overflow, items then unchanged and still the
 * caller's. */
void *lm_grow(void *items, size_t *cap, size_t n, size_t size);
void lm_free(void *ptr);
char *lm_strdup(const char *s);
char *lm_strndup(const char *s, size_t n);
/* lm_aligned_alloc: size bytes at a multiple of alignment (a power of two
 * no smaller than sizeof(void *)); size is rounded up to a multiple of it.
 * NULL on failure. Free with lm_free. */
void *lm_aligned_alloc(size_t alignment, size_t size);

/* lm_alloc_fail_after: make the (n+1)th allocation from now fail (n >= 0);
 * n < 0 turns fault injection off. Returns the number of allocations made
 * since the previous call, for tests that walk every failure point. */
long lm_alloc_fail_after(long n);

/* lm_alloc_huge: a large, page-aligned block that is not zeroed by the
 * allocator (the kernel hands out zero pages), backed by huge pages where
 * the system allows when it is 32 MiB or more: for column arrays of
 * hundreds of megabytes, where page faults and clearing dominate. Free with lm_free_huge(p, bytes). */
void *lm_alloc_huge(size_t bytes);
/* lm_alloc_dense: the same for a block its user writes whole (each of its
 * pages will be backed anyway), on huge pages from 2 MiB: a page fault per
 * 2 MiB instead of per 4 KiB, where faults cost more than the clearing.
 * Free with lm_free_huge(p, bytes). */
void *lm_alloc_dense(size_t bytes);
void lm_free_huge(void *p, size_t bytes);

/* An arena: memory freed all at once, for data sharing one lifetime (a
 * loaded workload, a compiled catalog, one request). */
typedef struct lm_arena lm_arena;

lm_arena *lm_arena_new(size_t block_size);
void lm_arena_free(lm_arena *arena); /* NULL is a no-op */
/* lm_arena_alloc: zeroed, 16-byte aligned memory, or NULL. */
void *lm_arena_alloc(lm_arena *arena, size_t size);
char *lm_arena_strdup(lm_arena *arena, const char *s);
char *lm_arena_strndup(lm_arena *arena, const char *s, size_t n);
/* lm_arena_bytes: bytes reserved by the arena so far. */
size_t lm_arena_bytes(const lm_arena *arena);

/* ---------------------------------------------------------------- buffer */

/* A growable NUL-terminated byte buffer. A zeroed lm_buf is empty and
 * valid. On allocation failure the buffer sets `failed` and ignores further
 * appends, so callers may check once at the end. */
typedef struct lm_buf {
  char *data; /* owned; NULL while empty */
  size_t len;
  size_t cap;
  int failed;
} lm_buf;

void lm_buf_fini(lm_buf *buf);
void lm_buf_reset(lm_buf *buf);
void lm_buf_append(lm_buf *buf, const char *s, size_t n);
void lm_buf_puts(lm_buf *buf, const char *s);
void lm_buf_putc(lm_buf *buf, char c);
/* lm_buf_repeat: append the n bytes at s `times` times (one reservation). */
void lm_buf_repeat(lm_buf *buf, const char *s, size_t n, size_t times);
void lm_buf_printf(lm_buf *buf, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
void lm_buf_vprintf(lm_buf *buf, const char *fmt, va_list ap)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 0)))
#endif
    ;
/* lm_buf_cstr: the contents, "" when empty. Borrowed. */
const char *lm_buf_cstr(const lm_buf *buf);
/* lm_buf_take: hand the contents to the caller (char *, free with lm_free)
 * and leave the buffer empty. NULL when the buffer failed. */
char *lm_buf_take(lm_buf *buf);

/* ------------------------------------------------------------------- map */

/* A string-keyed hash map to int64 values. Keys are copied. */
typedef struct lm_map lm_map;

lm_map *lm_map_new(void);
void lm_map_free(lm_map *map); /* NULL is a no-op */
/* lm_map_put: insert or replace; LM_ENOMEM on failure. */
lm_status lm_map_put(lm_map *map, const char *key, int64_t value);
lm_status lm_map_putn(lm_map *map, const char *key, size_t key_len,
                      int64_t value);
/* lm_map_get: 1 and *value set when found, else 0. value may be NULL. */
int lm_map_get(const lm_map *map, const char *key, int64_t *value);
int lm_map_getn(const lm_map *map, const char *key, size_t key_len,
                int64_t *value);
size_t lm_map_count(const lm_map *map);

/* ------------------------------------------------------------------- log */

typedef enum lm_log_level {
  LM_LOG_ERROR = 0,
  LM_LOG_WARN = 1,
  LM_LOG_INFO = 2,
  LM_LOG_DEBUG = 3,
  LM_LOG_TRACE = 4
} lm_log_level;

typedef void (*lm_log_sink)(lm_log_level level, const char *message,
                            void *user);

/* lm_log_set: install the sink (NULL drops every record) and the level at
 * or below which records are delivered. */
void lm_log_set(lm_log_sink sink, void *user, lm_log_level level);
lm_log_level lm_log_get_level(void);
/* lm_log_parse_level: "error".."trace" (any case) into *level; 0 if unknown */
int lm_log_parse_level(const char *text, lm_log_level *level);
const char *lm_log_level_name(lm_log_level level);
void lm_log(lm_log_level level, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/* ----------------------------------------------------------------- timer */

/* lm_now_ns: monotonic clock in nanoseconds. */
uint64_t lm_now_ns(void);

/* Self-timing: wall time per named phase, accumulated process-wide.
 * lm_phase_begin returns a token for lm_phase_end. Names are borrowed and
 * must outlive the report (string literals). */
uint64_t lm_phase_begin(void);
void lm_phase_end(const char *name, uint64_t token);
/* lm_phase_report: visit the phases in first-seen order. */
void lm_phase_report(void (*visit)(const char *name, uint64_t ns,
                                   unsigned long calls, void *user),
                     void *user);

/* ---------------------------------------------------------------- threads */

/* lm_run_pair: run fn(first) on this thread and fn(second) on a new one,
 * and wait for both; when no thread can be started, run them one after the
 * other. The two-core machines lumen targets need no more than a pair. */
void lm_run_pair(void *(*fn)(void *), void *first, void *second);

/* ----------------------------------------------------------------- utils */

#define LM_ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

/* NaN and infinity as doubles (the <math.h> macros are floats). */
#define LM_NAN ((double)NAN)
#define LM_INF ((double)INFINITY)

/* ------------------------------------------------------------ id sets */

/* A set of non-negative integers written as a comma list of items: N,
 * START:STOP[:STEP] (Python slice: STOP excluded, either end may be left
 * out), or >N. Used for -d, -g and --instance. */
typedef struct lm_idset_item {
  uint8_t kind;   /* 0: equal, 1: slice, 2: greater than */
  int64_t a, b;   /* value or start, stop (-1: open) */
  int64_t step;
} lm_idset_item;

typedef struct lm_idset {
  lm_idset_item *items;
  size_t n;
} lm_idset;

/* lm_idset_parse: add the items of `text` to set (items from lm_malloc).
 * On bad text returns LM_EINVAL with a message naming `flag` and the text. */
lm_status lm_idset_parse(lm_idset *set, const char *text, const char *flag,
                         lm_diag *diag);
void lm_idset_fini(lm_idset *set);
/* lm_idset_has: 1 if value is in the set; an empty set holds nothing. */
int lm_idset_has(const lm_idset *set, int64_t value);

/* lm_make_dirs: create folder dir and its missing parents (mkdir -p).
 * On failure the message says what and why; on a permission error `hint`
 * (may be NULL) is added, e.g. "choose a writable place with -w". */
lm_status lm_make_dirs(const char *dir, const char *what, const char *hint, lm_diag *diag);

/* Flags for lm_open_read and lm_path_kind. */
enum {
  LM_OPEN_CONTAINED = 1 /* a symbolic link must resolve inside the folder holding the path */
};

/* lm_open_read: open path for reading. It must be a regular file: a
 * folder, FIFO, socket or device is refused with a message naming what it
 * is, without blocking. With LM_OPEN_CONTAINED a symbolic link is
 * followed only when its target lies inside the folder holding path. On
 * LM_OK *fd_out is an open descriptor (the caller closes it) and *size_out
 * (may be NULL) the file's size. */
lm_status lm_open_read(const char *path, int flags, int *fd_out, size_t *size_out, lm_diag *diag);

/* lm_path_kind: LM_OK when path names a regular file that lm_open_read
 * with the same flags would open; LM_ENOTFOUND when nothing is there;
 * another status, with the reason, for anything else. Opens nothing. */
lm_status lm_path_kind(const char *path, int flags, lm_diag *diag);

/* lm_read_file: read a whole file into a NUL-terminated owned buffer
 * (free with lm_free), opened as lm_open_read with LM_OPEN_CONTAINED.
 * Refuses files larger than max_bytes. */
lm_status lm_read_file(const char *path, size_t max_bytes, char **out,
                       size_t *out_len, lm_diag *diag);
/* lm_read_file_any: the same, following symbolic links anywhere (for files
 * the user names directly, such as a token file). */
lm_status lm_read_file_any(const char *path, size_t max_bytes, char **out, size_t *out_len,
                           lm_diag *diag);

/* lm_format_double: Python's repr() of a float ("0.0", "1638.4", "1e-05",
 * "inf", "nan"): the shortest text that reads back to the same double.
 * Writes into out (at least 32 bytes) and returns out. */
char *lm_format_double(double value, char *out);

/* ------------------------------------------------------------------ text */

/* lm_text_escape: append n bytes of text to out in a form safe for a
 * terminal: valid UTF-8 as it is, control characters (C0, DEL, C1) and
 * bytes of invalid UTF-8 as visible \xNN escapes. With max_width > 0 the
 * text is cut to at most max_width characters, the last being "…".
 * Returns the width written, in characters. */
size_t lm_text_escape(lm_buf *out, const char *text, size_t n, size_t max_width);
/* lm_text_safe: the same into a new string (free with lm_free); NULL only
 * when out of memory. text may be NULL (""). */
char *lm_text_safe(const char *text, size_t max_width);
/* lm_utf8_valid: 1 when the n bytes are valid UTF-8. */
int lm_utf8_valid(const char *text, size_t n);
/* lm_json_utf8_fix: JSON text whose strings may hold invalid UTF-8 bytes
 * (cJSON copies bytes as they are): NULL when it is valid already (or out
 * of memory), else a repaired copy (free with lm_free) in which each
 * invalid byte is the escape \ufffd, U+FFFD REPLACEMENT CHARACTER. */
char *lm_json_utf8_fix(const char *json);

/* lm_str_ieq: ASCII case-insensitive equality. */
int lm_str_ieq(const char *a, const char *b);

/* -------------------------------------------------------------- keywords */

/* One allowed value of an option that takes a name from a closed set
 * ("per_wave", "ms"). A table of them ends with a NULL name; it is the
 * one place the names are spelled, for parsing, printing and the lists
 * that error messages show. */
typedef struct lm_keyword {
  const char *name; /* as the user writes it */
  int value;        /* the enum value it stands for */
  const char *what; /* a few words on what it means, or NULL */
} lm_keyword;

/* lm_keyword_find: 1 with *value set when name is in table; else 0 and
 * *value untouched. name may be NULL (not found). */
int lm_keyword_find(const lm_keyword *table, const char *name, int *value);
/* lm_keyword_name: the name of value in table (borrowed), NULL when no
 * entry has it. */
const char *lm_keyword_name(const lm_keyword *table, int value);
/* lm_keyword_list: append the table's names to out, separated by sep and
 * the last by last_sep ("a, b or c"); with_what, each one that has a
 * description is followed by " (what)". */
void lm_keyword_list(const lm_keyword *table, const char *sep, const char *last_sep, int with_what,
                     lm_buf *out);

/* ------------------------------------------------------------------ sort */

/* A comparator with its context (qsort's contract otherwise). */
typedef int (*lm_cmp_fn)(const void *a, const void *b, void *ctx);

/* lm_sort: qsort of n items of size bytes, the comparator given ctx.
 * Keeps no state between calls: safe from several threads at once. */
void lm_sort(void *base, size_t n, size_t size, lm_cmp_fn cmp, void *ctx);

/* ----------------------------------------------------------------- regex */

/* The work one match of a user's regular expression (kernel filters: -k,
 * k=, a policy's patterns) may take: PCRE2's match and backtracking depth
 * limits. Kernel names are at most a few kilobytes, so a pattern that
 * needs more backtracks without end; it is refused, never taken for a
 * non-match that would silently change a selection. */
#define LM_REGEX_MATCH_LIMIT 1000000u
#define LM_REGEX_DEPTH_LIMIT 10000u

/* A compiled pattern with its bounded match context. Immutable once
 * compiled: several threads may match with one at once. */
typedef struct lm_regex lm_regex;

/* lm_regex_compile: compile pattern (PCRE2, UTF) into *out. label names
 * it in messages ("-k '!re'"; copied). LM_EINVAL naming the label, PCRE2's
 * reason and the offset (diag's column, from 1) when it does not
 * compile; LM_ENOMEM. Free with lm_regex_free. */
lm_status lm_regex_compile(const char *label, const char *pattern, lm_regex **out, lm_diag *diag);
/* lm_regex_match: *hit = 1 when re matches subject, else 0, within
 * LM_REGEX_MATCH_LIMIT and LM_REGEX_DEPTH_LIMIT. A match that reaches a
 * limit (or fails otherwise) is LM_EINVAL, in one line naming the label
 * and the subject it gave up on (what says what the subject is: "kernel
 * name"), never a non-match. */
lm_status lm_regex_match(const lm_regex *re, const char *what, const char *subject, int *hit, lm_diag *diag);
/* lm_regex_free: NULL is a no-op. */
void lm_regex_free(lm_regex *re);

#endif
