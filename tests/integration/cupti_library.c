/*
 * cupti_library.c - liblumen_tool's CUPTI adapter against libcupti of
 * other CUDA versions, without a GPU: a child process loads a stand-in
 * driver (fake_cuda.c) and the tool under a collection's configuration,
 * points LUMEN_CUPTI_LIBRARY at a stand-in CUPTI (fake_cupti.c) and calls
 * InitializeInjection as the CUDA driver would. The error the tool writes
 * in its records must hold every expected text.
 *
 *   cupti_library TOOL FAKE_CUDA FAKE_CUPTI EXPECTED...
 *
 * Exit 0 when the records hold one error with every EXPECTED text, 1
 * otherwise (saying what was found).
 */
#include <dirent.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "profile/profile.h"

/* The child: what the CUDA driver does with CUDA_INJECTION64_PATH. */
static int inject(const char *tool, const char *cuda, const char *cupti,
                  const char *config) {
  setenv("LUMEN_TOOL_CONFIG", config, 1);
  setenv("LUMEN_CUPTI_LIBRARY", cupti, 1);
  if (!dlopen(cuda, RTLD_NOW | RTLD_GLOBAL)) {
    fprintf(stderr, "cannot load %s: %s\n", cuda, dlerror());
    return 2;
  }
  void *lib = dlopen(tool, RTLD_NOW | RTLD_LOCAL);
  void *sym = lib ? dlsym(lib, "InitializeInjection") : NULL;
  if (!sym) {
    fprintf(stderr, "no InitializeInjection in %s: %s\n", tool, dlerror());
    return 2;
  }
  int (*init)(void) = NULL;
  memcpy(&init, &sym, sizeof sym);
  init();
  return 0;
}

/* The first E line of the records files in dir, into out. */
static int tool_error(const char *dir, char *out, size_t cap) {
  DIR *d = opendir(dir);
  struct dirent *e;
  int found = 0;
  while (d && !found && (e = readdir(d))) {
    if (strncmp(e->d_name, "records.", 8) != 0)
      continue;
    char path[4200], line[8192];
    snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
    FILE *f = fopen(path, "r");
    while (f && !found && fgets(line, sizeof line, f))
      if (strncmp(line, "E\t", 2) == 0) {
        line[strcspn(line, "\n")] = '\0';
        snprintf(out, cap, "%s", line + 2);
        found = 1;
      }
    if (f)
      fclose(f);
  }
  if (d)
    closedir(d);
  return found;
}

int main(int argc, char **argv) {
  if (argc < 5) {
    fprintf(stderr,
            "usage: cupti_library TOOL FAKE_CUDA FAKE_CUPTI EXPECTED...\n");
    return 2;
  }
  char dir[] = "/tmp/lumen-cupti-library-XXXXXX";
  if (!mkdtemp(dir))
    return 2;
  char metric[] = "gpu__time_duration.sum";
  char *set[] = {metric, NULL};
  char **sets[] = {set};
  char *accumulate[] = {NULL};
  lm_tool_config cfg;
  memset(&cfg, 0, sizeof cfg);
  snprintf(cfg.arch, sizeof cfg.arch, "sm_90");
  cfg.mode = LM_REPLAY_APP;
  cfg.n_sets = 1;
  cfg.set_counters = sets;
  cfg.set_accumulate = accumulate;
  snprintf(cfg.output, sizeof cfg.output, "%s/records", dir);
  snprintf(cfg.telemetry, sizeof cfg.telemetry, "none");
  char config[4200];
  snprintf(config, sizeof config, "%s/config", dir);
  lm_diag d;
  if (lm_tool_config_write(&cfg, config, &d) != LM_OK) {
    fprintf(stderr, "config: %s\n", d.message);
    return 2;
  }
  pid_t pid = fork();
  if (pid == 0)
    _exit(inject(argv[1], argv[2], argv[3], config));
  int status = 0;
  waitpid(pid, &status, 0);
  char error[8192] = "";
  int rc = 0;
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    fprintf(stderr, "FAIL: the injected process ended with status %d\n",
            status);
    rc = 1;
  } else if (!tool_error(dir, error, sizeof error)) {
    fprintf(stderr, "FAIL: the tool wrote no error\n");
    rc = 1;
  }
  for (int i = 4; rc == 0 && i < argc; i++)
    if (!strstr(error, argv[i])) {
      fprintf(stderr, "FAIL: the error does not say \"%s\"\n", argv[i]);
      rc = 1;
    }
  fprintf(stderr, "%s: %s\n", rc ? "FAIL" : "ok", error);
  char cmd[4300];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  if (system(cmd) != 0)
    fprintf(stderr, "cannot remove %s\n", dir);
  return rc;
}
