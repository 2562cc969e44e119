/*
 * log.c - levelled logging to a sink chosen by the CLI, and self-timing.
 *
 * Library modules call lm_log(); without a sink nothing is printed, which
 * keeps libraries silent in tests and embedders. Phase timings accumulate in
 * a small fixed table: lumen has a handful of phases, not thousands. The
 * thread-pair helper lives here too: the runtime services of base.
 */
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "base/base.h"

static lm_log_sink log_sink = NULL;
static void *log_user = NULL;
static lm_log_level log_level = LM_LOG_INFO;

static const char *const level_names[] = {"error", "warn", "info", "debug",
                                          "trace"};

void lm_log_set(lm_log_sink sink, void *user, lm_log_level level) {
  log_sink = sink;
  log_user = user;
  log_level = level;
}

lm_log_level lm_log_get_level(void) { return log_level; }

const char *lm_log_level_name(lm_log_level level) {
  if ((unsigned)level < LM_ARRAY_LEN(level_names)) return level_names[level];
  return "?";
}

int lm_log_parse_level(const char *text, lm_log_level *level) {
  for (size_t i = 0; i < LM_ARRAY_LEN(level_names); i++) {
    if (lm_str_ieq(text, level_names[i])) {
      *level = (lm_log_level)i;
      return 1;
    }
  }
  if (lm_str_ieq(text, "warning")) {
    *level = LM_LOG_WARN;
    return 1;
  }
  return 0;
}

void lm_log(lm_log_level level, const char *fmt, ...) {
  if (!log_sink || level > log_level) return;
  char message[2048];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(message, sizeof message, fmt, ap);
  va_end(ap);
  log_sink(level, message, log_user);
}

uint64_t lm_now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

typedef struct phase {
  const char *name;
  uint64_t ns;
  unsigned long calls;
} phase;

static phase phases[32];
static size_t n_phases = 0;

uint64_t lm_phase_begin(void) { return lm_now_ns(); }

/* Phases are ended from several threads in the server. */
static pthread_mutex_t phase_lock = PTHREAD_MUTEX_INITIALIZER;

void lm_phase_end(const char *name, uint64_t token) {
  uint64_t elapsed = lm_now_ns() - token;
  pthread_mutex_lock(&phase_lock);
  for (size_t i = 0; i < n_phases; i++) {
    if (strcmp(phases[i].name, name) == 0) {
      phases[i].ns += elapsed;
      phases[i].calls++;
      pthread_mutex_unlock(&phase_lock);
      return;
    }
  }
  if (n_phases < LM_ARRAY_LEN(phases)) {
    phases[n_phases].name = name;
    phases[n_phases].ns = elapsed;
    phases[n_phases].calls = 1;
    n_phases++;
  }
  pthread_mutex_unlock(&phase_lock);
}

void lm_phase_report(void (*visit)(const char *, uint64_t, unsigned long,
                                   void *),
                     void *user) {
  pthread_mutex_lock(&phase_lock);
  for (size_t i = 0; i < n_phases; i++)
    visit(phases[i].name, phases[i].ns, phases[i].calls, user);
  pthread_mutex_unlock(&phase_lock);
}

void lm_run_pair(void *(*fn)(void *), void *first, void *second) {
  pthread_t tid;
  if (pthread_create(&tid, NULL, fn, second) == 0) {
    fn(first);
    pthread_join(tid, NULL);
  } else {
    fn(first);
    fn(second);
  }
}
