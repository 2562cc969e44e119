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
#include <dlfcn.h> /* RTLD_GLOBAL */
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "base/dl.h"
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
  const char *const names[] = {path};
  lm_dl_lib lib;
  if (lm_dl_open(&lib, names, 1, RTLD_GLOBAL, NULL) != LM_OK) {
    snprintf(err, cap, "cannot open the MPI module: %s", lib.error);
    return NULL;
  }
  const lm_ranks_mpi_api *table = NULL;
  const lm_dl_sym sym = {LM_RANKS_MPI_API, &table, 1, NULL};
  if (lm_dl_resolve(&lib, &sym, 1, NULL) != LM_OK) {
    snprintf(err, cap, "%s has no %s", path, LM_RANKS_MPI_API);
    lm_dl_close(&lib);
    return NULL;
  }
  api = table; /* the module stays open */
  return api;
}
