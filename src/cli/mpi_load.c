/*
 * mpi_load.c - finds and opens the MPI module (src/ranks/mpi.c, built as
 * lumen-mpi.so) for `lumen analyze --mpi`.
 *
 * The module sits in the binary's own folder, where the build writes both,
 * so it is looked for beside /proc/self/exe (the binary's real path, links
 * resolved), never on a search path a user's environment could redirect.
 * It is opened RTLD_GLOBAL: Open MPI opens plugins of its own that expect
 * its libraries' symbols to be visible.
 */
#include <dlfcn.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "ranks/ranks.h"

const lm_ranks_mpi_api *cli_mpi_load(char *err, size_t cap) {
  static const lm_ranks_mpi_api *api;
  if (api) return api;
  char path[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", path, sizeof path - 1);
  if (n <= 0) {
    snprintf(err, cap, "cannot find the lumen binary's folder (/proc/self/exe)");
    return NULL;
  }
  path[n] = '\0';
  char *slash = strrchr(path, '/');
  const char *module = "lumen-mpi.so";
  if (!slash || (size_t)(slash + 1 - path) + strlen(module) + 1 > sizeof path) {
    snprintf(err, cap, "cannot find the lumen binary's folder (%s)", path);
    return NULL;
  }
  memcpy(slash + 1, module, strlen(module) + 1);
  void *lib = dlopen(path, RTLD_NOW | RTLD_GLOBAL);
  if (!lib) {
    snprintf(err, cap, "cannot open the MPI module: %s", dlerror());
    return NULL;
  }
  void *table = dlsym(lib, LM_RANKS_MPI_API);
  if (!table) {
    snprintf(err, cap, "%s has no %s", path, LM_RANKS_MPI_API);
    dlclose(lib);
    return NULL;
  }
  api = table;
  return api;
}
