/*
 * app.c - running the profiled application: fork, preload the tool
 * library, exec, wait, and draw progress from the records file the tool
 * pushes while the program runs. The application runs in its own process
 * group: SIGINT, SIGTERM and SIGHUP sent to lumen are forwarded to the
 * group, the group is killed when the application ends (its leftovers),
 * at a run's deadline (after SIGTERM and a grace) and when lumen dies
 * (a lifeline pipe whose closing kills the group). Nothing here touches
 * the database: a run's outcome goes back to the caller.
 */
#define _GNU_SOURCE /* F_SETSIG; dl_iterate_phdr */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "collect/collect.h"

static void progress_draw(lm_progress *p);

/* progress_file: count the new dispatch lines of one records file. */
static void progress_file(lm_progress *p, const char *records) {
  int fd = -1;
  /* (without blocking, and only a regular file: a FIFO in its place
   * would hold the progress line until something wrote into it) */
  if (lm_open_read(records, 0, &fd, NULL, NULL) != LM_OK) return;
  p->len = 0;
  char chunk[65536];
  ssize_t n;
  if (lseek(fd, p->read_at, SEEK_SET) == (off_t)-1) {
    close(fd);
    return;
  }
  while ((n = read(fd, chunk, sizeof chunk)) > 0) {
    p->read_at += n;
    for (ssize_t i = 0; i < n; i++) {
      if (p->len + 1 >= p->cap) {
        size_t cap = p->cap ? p->cap * 2 : 4096;
        char *grown = lm_realloc(p->buf, cap);
        if (!grown) break;
        p->buf = grown;
        p->cap = cap;
      }
      if (chunk[i] != '\n') {
        if (p->len < 4096) p->buf[p->len++] = chunk[i];
        continue;
      }
      p->buf[p->len] = '\0';
      if (p->buf[0] == 'D' && p->buf[1] == '\t') {
        p->dispatches++;
        /* the fifth field is the set */
        char *f = p->buf;
        for (int k = 0; k < 5 && f; k++) {
          f = strchr(f, '\t');
          if (f) f++;
        }
        int set = f ? atoi(f) : -1;
        if (set >= 0 && set < p->n_sets) p->seen_sets[set] = 1;
      }
      p->len = 0;
    }
  }
  close(fd);
}

/* progress_poll: the new lines of every process's records file (the
 * first 16 processes), then the progress line. */
static void progress_poll(lm_progress *p, const char *records) {
  if (!p->enabled) return;
  char **files = NULL;
  lm_collect_records_files(records, &files);
  for (char **f = files; f && *f; f++) {
    const char *name = strrchr(*f, '/') ? strrchr(*f, '/') + 1 : *f;
    int k = 0;
    while (k < p->n_files && strcmp(p->files[k], name) != 0) k++;
    if (k == p->n_files) {
      if (k == 16 || strlen(name) >= sizeof p->files[0]) continue;
      snprintf(p->files[k], sizeof p->files[k], "%s", name);
      p->file_at[k] = 0;
      p->n_files++;
    }
    p->read_at = p->file_at[k];
    progress_file(p, *f);
    p->file_at[k] = p->read_at;
  }
  lm_collect_records_files_free(files);
  progress_draw(p);
}

static void progress_draw(lm_progress *p) {
  int covered = 0;
  for (int s = 0; s < p->n_sets; s++) covered += p->seen_sets[s];
  int width = 24, done = p->runs ? (p->run * width) / p->runs : 0;
  fprintf(stderr, "\r\033[Klumen profile: run %d/%d [", p->run + 1, p->runs);
  for (int i = 0; i < width; i++) fputc(i < done ? '=' : i == done ? '>' : ' ', stderr);
  fprintf(stderr, "] %ld dispatches, sets %d/%d", p->dispatches, covered, p->n_sets);
  fflush(stderr);
}

#if defined(__SANITIZE_ADDRESS__)
#include <link.h>
/* In an AddressSanitizer build the tool library needs the ASan runtime
 * loaded before it: preload the runtime this lumen uses. */
static int find_asan(struct dl_phdr_info *info, size_t size, void *data) {
  (void)size;
  if (info->dlpi_name && strstr(info->dlpi_name, "libasan")) {
    snprintf((char *)data, 4096, "%s", info->dlpi_name);
    return 1;
  }
  return 0;
}
#endif

/* Signals lumen forwards to the application's process group while it
 * runs. The handler only records the signal and forwards it (kill is
 * async-signal-safe); the wait loop decides what happens next. */
static volatile sig_atomic_t g_group;    /* the running application's group, 0: none */
static volatile sig_atomic_t g_received; /* the first signal lumen received */
static const int forwarded[] = {SIGINT, SIGTERM, SIGHUP};
static int g_lifeline = -1; /* the write end of the running application's lifeline */

static void forward(int sig) {
  if (!g_received) g_received = sig;
  if (g_group > 0) kill(-(pid_t)g_group, sig);
}

/* lumen exits while an application runs (an error path, exit()): take its
 * group with it. */
static void kill_group_at_exit(void) {
  if (g_group > 0) kill(-(pid_t)g_group, SIGKILL);
}

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* One run of the application (lm_collect_run_app): its arguments, the
 * pipes lumen shares with it and what is restored when it ends. */
typedef struct app_run {
  char *const *argv;
  const char *tool, *config_path, *records;
  int pass;
  double timeout_s;
  char const (*env)[4200];
  int n_env;
  lm_progress *prog;
  int exec_pipe[2];             /* the child writes exec's errno when exec fails */
  int life[2];                  /* the lifeline: lumen holds [1], the group [0] */
  struct sigaction old_act[3];  /* the dispositions of the forwarded signals */
  int tty;                      /* lumen has the terminal in the foreground */
  pid_t pid;
} app_run;

/* open_pipes: the exec pipe and the lifeline, both close-on-exec. */
static lm_status open_pipes(app_run *a, lm_diag *diag) {
  if (pipe(a->exec_pipe) != 0) return lm_fail(diag, LM_EIO, NULL, "pipe: %s", strerror(errno));
  fcntl(a->exec_pipe[0], F_SETFD, FD_CLOEXEC);
  fcntl(a->exec_pipe[1], F_SETFD, FD_CLOEXEC);
  /* The lifeline: lumen holds its write end, the application's group its
   * read end, owned by the group with SIGKILL as the signal of a change.
   * When lumen ends, however it ends (SIGKILL included: no handler runs),
   * the kernel closes the write end, and every process left in the group
   * (the application's children too, which the parent-death signal does
   * not reach) is killed. */
  if (pipe(a->life) != 0) {
    int err = errno;
    close(a->exec_pipe[0]);
    close(a->exec_pipe[1]);
    return lm_fail(diag, LM_EIO, NULL, "pipe: %s", strerror(err));
  }
  fcntl(a->life[0], F_SETFD, FD_CLOEXEC);
  fcntl(a->life[1], F_SETFD, FD_CLOEXEC);
  return LM_OK;
}

/* run_child: in the forked child: its own process group, which dies with
 * lumen, the tool library preloaded and the run's environment, then exec;
 * when exec fails, its errno goes to lumen through the exec pipe. */
static void run_child(const app_run *a) {
  close(a->exec_pipe[0]);
  setpgid(0, 0);
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  int life_rd = a->life[0];
  close(a->life[1]);
  if (fcntl(life_rd, F_SETOWN, -getpid()) == 0 && fcntl(life_rd, F_SETSIG, SIGKILL) == 0)
    fcntl(life_rd, F_SETFL, fcntl(life_rd, F_GETFL) | O_ASYNC);
  fcntl(life_rd, F_SETFD, 0); /* inherited through exec, by every process of the group */
  for (int i = 0; i < 3; i++) sigaction(forwarded[i], &a->old_act[i], NULL);
  char preload[8192], pass_text[32];
  const char *old = getenv("LD_PRELOAD");
  char runtime[4096] = "";
#if defined(__SANITIZE_ADDRESS__)
  dl_iterate_phdr(find_asan, runtime);
  if (runtime[0]) strcat(runtime, ":");
#endif
  snprintf(preload, sizeof preload, "%s%s%s%s", runtime, a->tool, old && *old ? ":" : "",
           old && *old ? old : "");
  snprintf(pass_text, sizeof pass_text, "%d", a->pass);
  setenv("LD_PRELOAD", preload, 1);
  setenv("LUMEN_TOOL_CONFIG", a->config_path, 1);
  setenv("LUMEN_PASS", pass_text, 1);
  /* What the backend's runtime needs (CUDA_INJECTION64_PATH, ...). */
  for (int i = 0; i < a->n_env; i++) {
    char item[4200];
    snprintf(item, sizeof item, "%s", a->env[i]);
    char *eq = strchr(item, '=');
    if (!eq) continue;
    *eq = '\0';
    setenv(item, eq + 1, 1);
  }
  execvp(a->argv[0], a->argv);
  int err = errno;
  ssize_t w = write(a->exec_pipe[1], &err, sizeof err);
  (void)w;
  _exit(127);
}

/* exec_failed: the error of a program exec could not start (errno err). */
static lm_status exec_failed(const char *prog, int err, lm_diag *diag) {
  if (err == ENOENT) return lm_fail(diag, LM_ENOTFOUND, prog, "no such program (give its path, or put it on PATH)");
  if (err == EACCES)
    return lm_fail(diag, LM_EINVAL, prog, "not executable (chmod +x %s, or run it through its interpreter)", prog);
  return lm_fail(diag, LM_EIO, prog, "cannot run: %s", strerror(err));
}

/* wait_app: wait for the application (*status), drawing progress; stop
 * the group at the deadline (out->timed_out), and kill it when it
 * outlives a forwarded signal or the deadline by the grace. LM_EIO when
 * waiting fails (the application is killed). */
static lm_status wait_app(const app_run *a, lm_run_outcome *out, int *status, lm_diag *diag) {
  const double grace_s = 3;
  pid_t pid = a->pid;
  double started = now_s(), stop_at = 0, last_poll = 0;
  for (;;) {
    pid_t r = waitpid(pid, status, WNOHANG);
    if (r == pid) return LM_OK;
    if (r < 0 && errno != EINTR) {
      lm_status st = lm_fail(diag, LM_EIO, NULL, "wait: %s", strerror(errno));
      kill(-pid, SIGKILL);
      while (waitpid(pid, status, 0) < 0 && errno == EINTR) {
      }
      return st;
    }
    double t = now_s();
    if (a->timeout_s > 0 && !out->timed_out && t - started >= a->timeout_s) {
      out->timed_out = 1;
      kill(-pid, SIGTERM);
      stop_at = t;
    }
    if (g_received && stop_at == 0) stop_at = t;
    if (stop_at > 0 && t - stop_at >= grace_s) {
      kill(-pid, SIGKILL);
      stop_at = t + 1e9; /* once */
    }
    if (a->prog && a->prog->enabled && t - last_poll >= 0.2) {
      progress_poll(a->prog, a->records);
      last_poll = t;
    }
    struct timespec ts = {0, 20000000};
    nanosleep(&ts, NULL);
  }
}

lm_status lm_collect_run_app(char *const *argv, const char *tool, const char *config_path,
                             const char *records, int pass, double timeout_s,
                             char const (*env)[4200], int n_env, lm_progress *prog,
                             lm_run_outcome *out, lm_diag *diag) {
  static int at_exit_set;
  app_run a;
  memset(&a, 0, sizeof a);
  a.argv = argv;
  a.tool = tool;
  a.config_path = config_path;
  a.records = records;
  a.pass = pass;
  a.timeout_s = timeout_s;
  a.env = env;
  a.n_env = n_env;
  a.prog = prog;
  memset(out, 0, sizeof *out);
  out->exit_code = -1;
  if (!at_exit_set && atexit(kill_group_at_exit) == 0) at_exit_set = 1;
  lm_status st = open_pipes(&a, diag);
  if (st != LM_OK) return st;
  /* Forward signals from now on; the group id is known after fork. */
  struct sigaction act;
  memset(&act, 0, sizeof act);
  act.sa_handler = forward;
  sigemptyset(&act.sa_mask);
  g_received = 0;
  g_group = 0;
  for (int i = 0; i < 3; i++) sigaction(forwarded[i], &act, &a.old_act[i]);
  /* A terminal in the foreground goes to the application's group, so
   * that it can read it and Ctrl-C reaches it directly. */
  a.tty = isatty(STDIN_FILENO) && tcgetpgrp(STDIN_FILENO) == getpgrp();
  pid_t pid = a.pid = fork();
  if (pid < 0) {
    int err = errno;
    for (int i = 0; i < 3; i++) sigaction(forwarded[i], &a.old_act[i], NULL);
    close(a.exec_pipe[0]);
    close(a.exec_pipe[1]);
    close(a.life[0]);
    close(a.life[1]);
    return lm_fail(diag, LM_EIO, NULL, "fork: %s", strerror(err));
  }
  if (pid == 0) run_child(&a);
  setpgid(pid, pid); /* also here: no window in which a signal misses it */
  g_group = pid;
  close(a.life[0]);
  g_lifeline = a.life[1];
  if (g_received) kill(-pid, g_received);
  if (a.tty) {
    signal(SIGTTOU, SIG_IGN);
    tcsetpgrp(STDIN_FILENO, pid);
  }
  close(a.exec_pipe[1]);
  int exec_errno = 0;
  ssize_t got;
  while ((got = read(a.exec_pipe[0], &exec_errno, sizeof exec_errno)) < 0 && errno == EINTR) {
  }
  close(a.exec_pipe[0]);
  int status = 0;
  if (got == (ssize_t)sizeof exec_errno) {
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    st = exec_failed(argv[0], exec_errno, diag);
    goto restore;
  }
  if ((st = wait_app(&a, out, &status, diag)) != LM_OK) goto restore;
  if (prog) progress_poll(prog, records);
  if (WIFSIGNALED(status)) out->sig = WTERMSIG(status);
  else out->exit_code = WEXITSTATUS(status);
  if (out->sig == 0 && out->exit_code == 0 && !out->timed_out && !g_received) st = LM_OK;
  else st = LM_EDATA;
restore:
  /* Whatever the application left in its group goes with it. */
  kill(-pid, SIGKILL);
  close(g_lifeline);
  g_lifeline = -1;
  if (a.tty) tcsetpgrp(STDIN_FILENO, getpgrp());
  g_group = 0;
  out->interrupted = g_received;
  for (int i = 0; i < 3; i++) sigaction(forwarded[i], &a.old_act[i], NULL);
  return st;
}

const char *lm_collect_signal_text(int sig, char *buf, size_t cap) {
  const char *name = sig == SIGSEGV ? "SIGSEGV" : sig == SIGABRT ? "SIGABRT" : sig == SIGKILL ? "SIGKILL"
                     : sig == SIGTERM ? "SIGTERM" : sig == SIGINT ? "SIGINT" : sig == SIGBUS ? "SIGBUS"
                     : sig == SIGFPE ? "SIGFPE" : sig == SIGILL ? "SIGILL" : NULL;
  if (name) snprintf(buf, cap, "%d (%s)", sig, name);
  else snprintf(buf, cap, "%d", sig);
  return buf;
}

/* The application can be started: found (on PATH when its name has no
 * '/') and executable. Checked before anything is written. */
lm_status lm_collect_check_program(const char *prog, lm_diag *diag) {
  char path[4096];
  int found = 0;
  if (strchr(prog, '/')) {
    snprintf(path, sizeof path, "%s", prog);
    found = access(path, F_OK) == 0;
  } else {
    const char *env = getenv("PATH");
    char dirs[8192];
    snprintf(dirs, sizeof dirs, "%s", env ? env : "/usr/local/bin:/usr/bin:/bin");
    for (char *save = NULL, *d = strtok_r(dirs, ":", &save); d && !found; d = strtok_r(NULL, ":", &save)) {
      snprintf(path, sizeof path, "%s/%s", *d ? d : ".", prog);
      found = access(path, X_OK) == 0;
    }
  }
  struct stat sb;
  if (!found) return lm_fail(diag, LM_ENOTFOUND, prog, "no such program (give its path, or put it on PATH)");
  if (stat(path, &sb) == 0 && S_ISDIR(sb.st_mode)) return lm_fail(diag, LM_EINVAL, prog, "is a folder, not a program");
  if (access(path, X_OK) != 0)
    return lm_fail(diag, LM_EINVAL, prog, "not executable (chmod +x %s, or run it through its interpreter)", prog);
  return LM_OK;
}

