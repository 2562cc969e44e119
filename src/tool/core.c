/*
 * core.c - the vendor-neutral core of liblumen_tool, the library `lumen
 * profile` loads into the application (core.h); rocprofiler.c and cupti.c
 * attach it to a GPU runtime and forward the runtime's callbacks to it.
 *
 * It builds the policy from LUMEN_TOOL_CONFIG, appends each dispatch's
 * timestamps, counters and regions to its process's own records file, defines
 * lumen's region markers and samples GPU clocks. Invariants: a dispatch that
 * collects nothing costs no system call and no shared lock; one that
 * collected counters is in the file at once, so a killed program keeps it.
 * docs/workload-format.md, "The records file".
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#define LUMEN_MARKERS
#include "lumen/markers.h"
#include "tool/core.h"

#define EXPORT __attribute__((visibility("default")))

static struct {
  int active;
  int expect_finalize; /* the back end's runtime calls lm_tool_finish (lm_tool_expect_finalize) */
  int reopen; /* a forked child: open its own records file at its first line */
  lm_policy *parents_policy; /* a forked child: the parent's policy, left as it was */
  lm_tool_config cfg;
  lm_policy *policy;
  pthread_mutex_t out_lock; /* the records file (F) */
  pthread_t sampler;
  int sampler_running;
  volatile int stop;
  lm_telemetry *telemetry;
} T = {.out_lock = PTHREAD_MUTEX_INITIALIZER};

static int open_records(void);
static void emit_now(const char *text, size_t len);

/* ------------------------------------------------------ the records file */

/* The file is written through a shared mapping of one window of it
 * (RECORD_WINDOW bytes, reserved with posix_fallocate before it is
 * mapped): a record is in the page cache, and so in the file, as soon as
 * it is copied, and stays there when the process is killed outright. At
 * the end (and at a fatal signal) the file is cut to the bytes written; a
 * process killed by SIGKILL leaves zero bytes after its last line, which
 * the reader takes for the truncated last line it already stops at.
 * Memory stays bounded by the window. All of it runs under out_lock, or
 * alone (at load, in a forked child, in the fatal-signal handler). */
#define RECORD_WINDOW ((size_t)4 << 20)

static struct {
  int fd;        /* -1: no file */
  char *map;     /* the window [end - RECORD_WINDOW, end), or NULL */
  off_t end;     /* the file's reserved size: the end of the window */
  off_t length;  /* bytes written */
  size_t used;   /* of the window */
} F = {.fd = -1};

static void file_close(void) {
  if (F.fd < 0) return;
  if (F.map) munmap(F.map, RECORD_WINDOW);
  if (ftruncate(F.fd, F.length) == 0) fsync(F.fd);
  close(F.fd);
  F.fd = -1;
  F.map = NULL;
}

/* file_put: append len bytes. On failure (a full disk) the file keeps
 * what was written, and collecting stops, reported on stderr (the
 * records cannot say it). Returns 0 or -1. */
static int file_put(const char *text, size_t len) {
  if (F.fd < 0) return -1;
  while (len) {
    if (!F.map || F.used == RECORD_WINDOW) {
      if (F.map) munmap(F.map, RECORD_WINDOW);
      F.map = NULL;
      int err = posix_fallocate(F.fd, F.end, (off_t)RECORD_WINDOW);
      void *m = err ? MAP_FAILED
                    : mmap(NULL, RECORD_WINDOW, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, F.fd, F.end);
      if (m == MAP_FAILED) {
        fprintf(stderr, "lumen tool: cannot write the records file: %s\n", strerror(err ? err : errno));
        file_close();
        T.active = 0;
        return -1;
      }
      F.map = m;
      F.end += (off_t)RECORD_WINDOW;
      F.used = 0;
    }
    size_t n = len < RECORD_WINDOW - F.used ? len : RECORD_WINDOW - F.used;
    memcpy(F.map + F.used, text, n);
    F.used += n;
    F.length += (off_t)n;
    text += n;
    len -= n;
  }
  return 0;
}

/* ------------------------------------------------------- record buffers */

#define RECORD_BUFFER (64 << 10)
#define RECORD_FLUSH_MS 20

/* One thread's dispatch records not yet in the file. Its lock is taken by
 * the thread itself and, now and then, by whoever flushes every buffer. */
typedef struct record_buf {
  pthread_mutex_t lock;
  size_t len;
  struct record_buf *next;
  char data[RECORD_BUFFER];
} record_buf;

static struct {
  pthread_mutex_t lock; /* the list (a thread's first record adds its buffer) */
  record_buf *all;
  pthread_t flusher;
  atomic_int flusher_state; /* 0 none, 1 starting or running */
  atomic_int stop;
} B = {.lock = PTHREAD_MUTEX_INITIALIZER};

static _Thread_local record_buf *my_buf;

/* Write b's bytes to the file (b's lock held). */
static void drain(record_buf *b) {
  if (!b->len) return;
  pthread_mutex_lock(&T.out_lock);
  file_put(b->data, b->len);
  pthread_mutex_unlock(&T.out_lock);
  b->len = 0;
}

/* Every thread's buffer to the file. */
static void flush_all(void) {
  pthread_mutex_lock(&B.lock);
  for (record_buf *b = B.all; b; b = b->next) {
    pthread_mutex_lock(&b->lock);
    drain(b);
    pthread_mutex_unlock(&b->lock);
  }
  pthread_mutex_unlock(&B.lock);
}

static void *flusher_main(void *arg) {
  (void)arg;
  struct timespec period = {0, RECORD_FLUSH_MS * 1000000L};
  while (!atomic_load(&B.stop)) {
    nanosleep(&period, NULL);
    flush_all();
  }
  return NULL;
}

static void start_flusher(void) {
  int none = 0;
  if (!atomic_compare_exchange_strong(&B.flusher_state, &none, 1)) return;
  atomic_store(&B.stop, 0);
  if (pthread_create(&B.flusher, NULL, flusher_main, NULL) != 0) atomic_store(&B.flusher_state, 0);
}

static void stop_flusher(void) {
  if (atomic_load(&B.flusher_state) != 1) return;
  atomic_store(&B.stop, 1);
  pthread_join(B.flusher, NULL);
  atomic_store(&B.flusher_state, 0);
}

/* record: append one dispatch's lines to this thread's buffer; with now,
 * write the buffer to the file. */
static void record(const char *text, size_t len, int now) {
  record_buf *b = my_buf;
  if (!b) {
    b = lm_malloc(sizeof *b);
    if (!b) {
      emit_now(text, len); /* no buffer: straight to the file */
      return;
    }
    pthread_mutex_init(&b->lock, NULL);
    b->len = 0;
    pthread_mutex_lock(&B.lock);
    b->next = B.all;
    B.all = b;
    pthread_mutex_unlock(&B.lock);
    my_buf = b;
    start_flusher();
  }
  pthread_mutex_lock(&b->lock);
  if (b->len + len > sizeof b->data) drain(b);
  if (len > sizeof b->data) emit_now(text, len);
  else {
    memcpy(b->data + b->len, text, len);
    b->len += len;
  }
  if (now) drain(b);
  pthread_mutex_unlock(&b->lock);
}

/* A fatal signal: what the buffers hold goes to the file, then the
 * signal takes its course. Best effort: the crash may have hit inside the
 * library itself, so no lock is waited for. */
static const int fatal_signals[] = {SIGSEGV, SIGBUS, SIGABRT, SIGFPE, SIGILL};
static struct sigaction old_fatal[5];

static void on_fatal(int sig) {
  if (F.fd >= 0 && pthread_mutex_trylock(&T.out_lock) == 0) {
    for (record_buf *b = B.all; b; b = b->next) {
      if (b->len) file_put(b->data, b->len);
      b->len = 0;
    }
    /* (The zeros after them stay: the program may go on after its own
     * handler, and a mapped page past the end of the file would fault.) */
    pthread_mutex_unlock(&T.out_lock);
  }
  for (size_t i = 0; i < sizeof fatal_signals / sizeof *fatal_signals; i++)
    if (fatal_signals[i] == sig) sigaction(sig, &old_fatal[i], NULL);
  raise(sig);
}

static void catch_fatal(void) {
  struct sigaction act;
  memset(&act, 0, sizeof act);
  act.sa_handler = on_fatal;
  sigemptyset(&act.sa_mask);
  act.sa_flags = (int)SA_RESETHAND;
  for (size_t i = 0; i < sizeof fatal_signals / sizeof *fatal_signals; i++)
    sigaction(fatal_signals[i], &act, &old_fatal[i]);
}

static unsigned long tid(void) { return (unsigned long)syscall(SYS_gettid); }

#if defined(__GNUC__)
__attribute__((format(printf, 1, 2)))
#endif
static void emit(const char *fmt, ...) {
  if (F.fd < 0 && !T.reopen) return;
  char here[8192], *text = here;
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(here, sizeof here, fmt, ap);
  va_end(ap);
  if (n < 0) return;
  if ((size_t)n >= sizeof here) {
    if (!(text = lm_malloc((size_t)n + 1))) return;
    va_start(ap, fmt);
    vsnprintf(text, (size_t)n + 1, fmt, ap);
    va_end(ap);
  }
  emit_now(text, (size_t)n);
  if (text != here) lm_free(text);
}

/* Write lines to the file (in the page cache once this returns), so that
 * a program that crashes keeps what it collected up to the crash. */
static void emit_now(const char *text, size_t len) {
  if (F.fd < 0 && !T.reopen) return;
  pthread_mutex_lock(&T.out_lock);
  if (T.reopen) {
    T.reopen = 0;
    if (open_records() != 0) T.active = 0;
  }
  file_put(text, len);
  pthread_mutex_unlock(&T.out_lock);
}

/* Text fields are written as they are, with tabs and newlines made spaces. */
static void clean(const char *in, char *out, size_t cap) {
  size_t i = 0;
  for (; in && *in && i + 1 < cap; in++) out[i++] = (*in == '\t' || *in == '\n' || *in == '\r') ? ' ' : *in;
  out[i] = '\0';
}

void lm_tool_error(const char *what) {
  flush_all();
  emit("E\t%s\n", what);
  emit_now("", 0);
  fprintf(stderr, "lumen tool: %s\n", what);
  T.active = 0;
}

const lm_tool_config *lm_tool_config_now(void) { return T.active ? &T.cfg : NULL; }

/* open_records: this process's records file, OUTPUT.PID (OUTPUT.PID-K
 * when a file of that name exists: a pid used again in the same run, or a
 * forked child that wrote before its exec), and its first lines. The
 * caller holds out_lock, or runs alone (at load). Returns 0, or -1
 * (reported on stderr: there is no records file to report it in). */
static int open_records(void) {
  char path[sizeof T.cfg.output + 64];
  long pid = (long)getpid();
  int fd = -1;
  for (int k = 0; fd < 0 && k < 100; k++) {
    if (k == 0) snprintf(path, sizeof path, "%s.%ld", T.cfg.output, pid);
    else snprintf(path, sizeof path, "%s.%ld-%d", T.cfg.output, pid, k);
    fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0644); /* (read too: to be mapped) */
    if (fd < 0 && errno != EEXIST) break;
  }
  if (fd < 0) {
    fprintf(stderr, "lumen tool: cannot write %s: %s\n", path, strerror(errno));
    return -1;
  }
  F.fd = fd;
  F.map = NULL;
  F.end = F.length = 0;
  F.used = 0;
  char host[256] = "", clean_host[256];
  gethostname(host, sizeof host - 1);
  clean(host, clean_host, sizeof clean_host);
  lm_rank_info r;
  lm_rank_detect_env(&r);
  char head[1024];
  int n = snprintf(head, sizeof head, "lumen-records 1\nP\t%ld\t%s\t%d\t%d\t%d\t%s\n", pid,
                   clean_host[0] ? clean_host : "-", r.rank, r.size, r.local_rank, r.launcher[0] ? r.launcher : "-");
  return file_put(head, n > 0 && (size_t)n < sizeof head ? (size_t)n : 0);
}

/* Around fork: nothing buffered is copied into the child, which then
 * records into a file of its own with a fresh policy (its dispatches are
 * its own instances; a runtime used before the fork is not usable in the
 * child anyway). */
static void fork_prepare(void) {
  flush_all();
  pthread_mutex_lock(&T.out_lock);
}

static void fork_parent(void) { pthread_mutex_unlock(&T.out_lock); }

static void fork_child(void) {
  /* The parent's buffers (empty now, and their locks possibly held by
   * threads the child does not have) stay the parent's. */
  B.all = NULL;
  my_buf = NULL;
  atomic_store(&B.flusher_state, 0);
  pthread_mutex_init(&B.lock, NULL);
  if (F.fd < 0) {
    pthread_mutex_unlock(&T.out_lock);
    return;
  }
  /* The parent's window and descriptor, as the child has them (the
   * parent's file is left as it is). */
  if (F.map) munmap(F.map, RECORD_WINDOW);
  close(F.fd);
  F.fd = -1;
  F.map = NULL;
  /* Its own file at its first line: a child that only execs (a shell's,
   * a launcher's) leaves none, and the program it starts opens its own. */
  T.reopen = 1;
  pthread_mutex_unlock(&T.out_lock);
  T.sampler_running = 0; /* threads do not survive fork */
  T.telemetry = NULL;
  lm_diag d;
  lm_policy *fresh = NULL;
  if (T.active && lm_policy_new(&T.cfg, &fresh, &d) != LM_OK) {
    char line[1024];
    lm_tool_error(lm_diag_format(&d, line, sizeof line));
    return;
  }
  if (fresh) {
    /* The parent's stays allocated (its locks may be held) and referenced:
     * it is the parent's, not a leak of the child. */
    T.parents_policy = T.policy;
    T.policy = fresh;
  }
}

__attribute__((constructor)) static void tool_load(void) {
  const char *path = getenv("LUMEN_TOOL_CONFIG");
  if (!path) return;
  lm_diag d;
  if (lm_tool_config_read(path, &T.cfg, &d) != LM_OK) {
    char line[1024];
    fprintf(stderr, "lumen tool: %s\n", lm_diag_format(&d, line, sizeof line));
    return;
  }
  /* --split ranks with lumen outside mpirun: this rank's share of the sets. */
  lm_rank_info rank;
  lm_rank_detect_env(&rank);
  if (lm_tool_config_take_share(&T.cfg, &rank) < 0) {
    fprintf(stderr, "lumen tool: out of memory\n");
    return;
  }
  if (open_records() != 0) return;
  pthread_atfork(fork_prepare, fork_parent, fork_child);
  if (lm_policy_new(&T.cfg, &T.policy, &d) != LM_OK) {
    char line[1024];
    lm_tool_error(lm_diag_format(&d, line, sizeof line));
    return;
  }
  catch_fatal();
  T.active = 1;
}

static void stop_sampler(void) {
  if (T.sampler_running) {
    T.stop = 1;
    pthread_join(T.sampler, NULL);
    T.sampler_running = 0;
  }
}

void lm_tool_expect_finalize(void) { T.expect_finalize = 1; }

/* finish: the records' last lines; unfinalized when the library unloads
 * before the back end's runtime finalized the tool it expected to. */
static void finish(int unfinalized) {
  if (!T.active) return;
  stop_sampler();
  stop_flusher();
  flush_all();
  if (T.telemetry) lm_telemetry_sample(T.telemetry, emit);
  lm_telemetry_close(T.telemetry);
  T.telemetry = NULL;
  /* Region names, for the ids in dispatch records. */
  for (int id = 1; T.policy && lm_policy_region_name(T.policy, id); id++) {
    char name[512];
    clean(lm_policy_region_name(T.policy, id), name, sizeof name);
    emit("G\t%d\t%s\n", id, name);
  }
  emit(unfinalized ? "END\tunfinalized\n" : "END\n");
  pthread_mutex_lock(&T.out_lock);
  file_close();
  pthread_mutex_unlock(&T.out_lock);
  T.active = 0;
}

void lm_tool_finish(void) { finish(0); }

__attribute__((destructor)) static void tool_unload(void) { finish(T.expect_finalize); }

static void *sampler_main(void *arg) {
  (void)arg;
  struct timespec period = {0, 1000000}; /* 1 ms */
  while (!T.stop) {
    lm_telemetry_sample(T.telemetry, emit);
    emit_now("", 0);
    nanosleep(&period, NULL);
  }
  return NULL;
}

/* ------------------------------------------------------ backend events */

int lm_tool_attached(const char *arch) {
  if (!T.active) return -1;
  if (strcmp(arch, T.cfg.arch) != 0) {
    char msg[256];
    snprintf(msg, sizeof msg, "the counter sets were planned for %s but the device is %s", T.cfg.arch,
             arch);
    lm_tool_error(msg);
    return -1;
  }
  char clean_arch[128];
  clean(arch, clean_arch, sizeof clean_arch);
  emit("A\t%s\n", clean_arch);
  return 0;
}

void lm_tool_sysinfo(const char *key, const char *value) {
  if (!T.active) return;
  char k[128], v[512];
  clean(key, k, sizeof k);
  clean(value, v, sizeof v);
  emit("S\t%s\t%s\n", k, v);
}

void lm_tool_telemetry(lm_telemetry *t, const char *why) {
  if (!T.active) {
    lm_telemetry_close(t);
    return;
  }
  /* The run's sampler, for the workload (T <sampler> <note>): without one
   * lumen estimates each dispatch's clock from GRBM_GUI_ACTIVE. */
  char note[512];
  if (strcmp(T.cfg.telemetry, "none") == 0) {
    lm_telemetry_close(t);
    emit("T\tnone\tturned off (--telemetry none)\n");
    return;
  }
  if (!t) {
    clean(why && *why ? why : "no clock sampler", note, sizeof note);
    emit("T\tnone\t%s\n", note);
    return;
  }
  clean(lm_telemetry_name(t), note, sizeof note);
  /* Ranks of one node that share GPUs: one process samples each GPU (its
   * node-wide id modulo the node's rank count is its local rank), the
   * others take no readings of it; nobody waits for anybody. */
  lm_rank_info r;
  uint64_t left = 0;
  if (lm_rank_detect_env(&r))
    for (int g = 0; g < 64; g++)
      if (!lm_rank_samples_gpu(&r, g, lm_env_get, NULL)) left |= 1ULL << g;
  lm_telemetry_leave(t, left);
  if (left)
    emit("T\t%s\tsampled every millisecond from a background thread; of the GPUs the node's %d ranks may share, "
         "local rank %d samples those whose node-wide id modulo %d is %d, and the others' clocks come from the "
         "rank that samples them (one workload) or are estimated (a rank's own part)\n",
         note, r.local_size, r.local_rank, r.local_size, r.local_rank);
  else
    emit("T\t%s\tsampled every millisecond from a background thread\n", note);
  T.telemetry = t;
  if (pthread_create(&T.sampler, NULL, sampler_main, NULL) == 0) T.sampler_running = 1;
}

void lm_tool_kernel_symbol(uint64_t kernel_id, const char *name) {
  if (!T.active) return;
  lm_diag why;
  lm_diag_clear(&why);
  if (lm_policy_kernel(T.policy, kernel_id, name, &why) != LM_OK) {
    lm_tool_error(why.message);
    return;
  }
  char clean_name[4096];
  clean(name, clean_name, sizeof clean_name);
  emit("K\t%llu\t%s\n", (unsigned long long)kernel_id, clean_name);
}

int lm_tool_dispatch_begin(const lm_tool_dispatch *d, lm_choice *choice) {
  choice->set = -1;
  if (!T.active) return -1;
  lm_dispatch_facts f;
  f.dispatch_id = d->dispatch_id;
  f.kernel_id = d->kernel_id;
  f.kernel_name = d->kernel_name;
  f.gpu = d->gpu;
  f.tid = d->tid;
  f.grid = d->grid;
  f.workgroup = d->workgroup;
  f.lds = d->lds;
  lm_policy_choose(T.policy, &f, choice);
  if (T.telemetry) lm_telemetry_use(T.telemetry, d->gpu);
  return choice->set >= 0 && choice->set < T.cfg.n_sets ? choice->set : -1;
}

void lm_tool_dispatch_end(const lm_tool_dispatch *d, const lm_choice *c, uint64_t start,
                          uint64_t end, const lm_tool_value *values, int n) {
  if (!T.active) return;
  char key[1024];
  clean(c->key, key, sizeof key);
  /* The dispatch line, then its values on one line as column=value pairs
   * (docs/perf.md weighed writing the numbers by hand instead: 7 %). */
  lm_buf b = {0};
  lm_buf_printf(&b, "D\t%llu\t%llu\t%lld\t%lld\t%d\t%d\t%lu\t%llu\t%llu\t%u\t%u\t%u\t%u\t%u\t%llu\t%llu\t%s\t%s\n",
                (unsigned long long)d->dispatch_id, (unsigned long long)d->kernel_id, (long long)c->instance,
                (long long)c->selected, c->set, d->gpu, d->tid, (unsigned long long)d->grid,
                (unsigned long long)d->workgroup, d->lds, d->scratch, d->arch_vgpr, d->accum_vgpr, d->sgpr,
                (unsigned long long)start, (unsigned long long)end, c->regions[0] ? c->regions : "-", key);
  if (c->set >= 0 && n > 0) {
    lm_buf_printf(&b, "V\t%llu", (unsigned long long)d->dispatch_id);
    for (int i = 0; i < n; i++) lm_buf_printf(&b, "\t%s=%.17g", values[i].column, values[i].value);
    lm_buf_putc(&b, '\n');
  }
  if (b.failed) lm_tool_error("out of memory while recording a dispatch");
  else record(b.data, b.len, c->set >= 0);
  lm_buf_fini(&b);
}

void lm_tool_marker(int op, unsigned long thread, const char *message, uint64_t id) {
  if (!T.active) return;
  switch (op) {
  case LM_TOOL_PUSH: lm_policy_region_push(T.policy, thread, message ? message : ""); break;
  case LM_TOOL_POP: lm_policy_region_pop(T.policy, thread); break;
  case LM_TOOL_START: lm_policy_range_start(T.policy, id, message ? message : ""); break;
  case LM_TOOL_STOP: lm_policy_range_stop(T.policy, id); break;
  default: break;
  }
}

/* ------------------------------------------------------ lumen's markers */

EXPORT void lumen_region_begin(const char *name) {
  if (T.active) lm_policy_region_push(T.policy, tid(), name ? name : "");
}

EXPORT void lumen_region_end(const char *name) {
  (void)name;
  if (T.active) lm_policy_region_pop(T.policy, tid());
}

EXPORT unsigned long long lumen_range_start(const char *name) {
  static unsigned long long next = 1ULL << 40;
  if (!T.active) return 0;
  unsigned long long id = __atomic_fetch_add(&next, 1, __ATOMIC_RELAXED);
  lm_policy_range_start(T.policy, id, name ? name : "");
  return id;
}

EXPORT void lumen_range_stop(unsigned long long id) {
  if (T.active) lm_policy_range_stop(T.policy, id);
}

EXPORT void lumen_mark(const char *name) {
  if (!T.active) return;
  char clean_name[512];
  clean(name, clean_name, sizeof clean_name);
  struct timespec ts;
  clock_gettime(CLOCK_BOOTTIME, &ts);
  flush_all(); /* the dispatches before the mark come before it */
  emit("M\t%lu\t%lld\t%s\n", tid(), (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec, clean_name);
  emit_now("", 0);
}
