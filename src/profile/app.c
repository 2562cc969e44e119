/*
 * app.c - running the profiled application: fork, preload the tool
 * library, exec, wait, and draw progress from the records file the tool
 * pushes while the program runs. Nothing here touches the database: a
 * run's outcome goes back to the caller (exit status or signal).
 */
#if defined(__SANITIZE_ADDRESS__)
#define _GNU_SOURCE /* dl_iterate_phdr */
#endif
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "profile/collect.h"

static void progress_poll(lm_progress *p, const char *records) {
  if (!p->enabled) return;
  int fd = open(records, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return;
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
        char *grown = realloc(p->buf, cap);
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

/* Run the application once. Returns LM_OK when it ran to completion
 * (exit 0); *exit_code / *sig describe how it ended. */
lm_status lm_collect_run_app(char *const *argv, const char *tool, const char *config_path,
                         const char *records, int pass, lm_progress *prog, int *exit_code, int *sig,
                         lm_diag *diag) {
  int pipe_fds[2];
  *exit_code = -1;
  *sig = 0;
  if (pipe(pipe_fds) != 0)
    return lm_diag_set(diag, LM_EIO, NULL, 0, 0, NULL, "pipe: %s", strerror(errno));
  fcntl(pipe_fds[1], F_SETFD, FD_CLOEXEC);
  pid_t pid = fork();
  if (pid < 0) {
    close(pipe_fds[0]);
    close(pipe_fds[1]);
    return lm_diag_set(diag, LM_EIO, NULL, 0, 0, NULL, "fork: %s", strerror(errno));
  }
  if (pid == 0) {
    close(pipe_fds[0]);
    char preload[8192], pass_text[32];
    const char *old = getenv("LD_PRELOAD");
    char runtime[4096] = "";
#if defined(__SANITIZE_ADDRESS__)
    dl_iterate_phdr(find_asan, runtime);
    if (runtime[0]) strcat(runtime, ":");
#endif
    snprintf(preload, sizeof preload, "%s%s%s%s", runtime, tool, old && *old ? ":" : "", old && *old ? old : "");
    snprintf(pass_text, sizeof pass_text, "%d", pass);
    setenv("LD_PRELOAD", preload, 1);
    setenv("LUMEN_TOOL_CONFIG", config_path, 1);
    setenv("LUMEN_PASS", pass_text, 1);
    execvp(argv[0], argv);
    int err = errno;
    ssize_t w = write(pipe_fds[1], &err, sizeof err);
    (void)w;
    _exit(127);
  }
  close(pipe_fds[1]);
  int exec_errno = 0;
  ssize_t got = read(pipe_fds[0], &exec_errno, sizeof exec_errno);
  close(pipe_fds[0]);
  int status = 0;
  if (got == (ssize_t)sizeof exec_errno) {
    waitpid(pid, &status, 0);
    if (exec_errno == ENOENT)
      return lm_diag_set(diag, LM_ENOTFOUND, argv[0], 0, 0, NULL,
                         "no such program (give its path, or put it on PATH)");
    if (exec_errno == EACCES)
      return lm_diag_set(diag, LM_EINVAL, argv[0], 0, 0, NULL,
                         "not executable (chmod +x %s, or run it through its interpreter)", argv[0]);
    return lm_diag_set(diag, LM_EIO, argv[0], 0, 0, NULL, "cannot run: %s", strerror(exec_errno));
  }
  for (;;) {
    pid_t r = waitpid(pid, &status, prog && prog->enabled ? WNOHANG : 0);
    if (r == pid) break;
    if (r < 0 && errno != EINTR) return lm_diag_set(diag, LM_EIO, NULL, 0, 0, NULL, "wait: %s", strerror(errno));
    if (prog && prog->enabled) {
      progress_poll(prog, records);
      struct timespec ts = {0, 200000000};
      nanosleep(&ts, NULL);
    }
  }
  if (prog) progress_poll(prog, records);
  if (WIFSIGNALED(status)) {
    *sig = WTERMSIG(status);
    return LM_EDATA;
  }
  *exit_code = WEXITSTATUS(status);
  return *exit_code == 0 ? LM_OK : LM_EDATA;
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
  if (!found)
    return lm_diag_set(diag, LM_ENOTFOUND, prog, 0, 0, NULL,
                       "no such program (give its path, or put it on PATH)");
  if (stat(path, &sb) == 0 && S_ISDIR(sb.st_mode))
    return lm_diag_set(diag, LM_EINVAL, prog, 0, 0, NULL, "is a folder, not a program");
  if (access(path, X_OK) != 0)
    return lm_diag_set(diag, LM_EINVAL, prog, 0, 0, NULL,
                       "not executable (chmod +x %s, or run it through its interpreter)", prog);
  return LM_OK;
}

