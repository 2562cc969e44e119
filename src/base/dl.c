/*
 * dl.c - optional libraries opened at run time (dl.h): a list of names
 * tried in order, a table of symbols resolved in one pass.
 *
 * dlsym gives a void *, and ISO C has no conversion from it to a function
 * pointer; POSIX guarantees both have one representation, so an address
 * is copied into its slot byte for byte.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#include "base/dl.h"

lm_status lm_dl_open(lm_dl_lib *lib, const char *const *names, size_t n, int extra_flags, lm_diag *diag) {
  memset(lib, 0, sizeof *lib);
  const char *first = NULL;
  for (size_t i = 0; i < n; i++) {
    if (!names[i] || !*names[i]) continue;
    if (!first) first = names[i];
    lib->handle = dlopen(names[i], RTLD_NOW | RTLD_LOCAL | extra_flags);
    if (lib->handle) {
      lib->name = names[i];
      lib->error[0] = '\0';
      return LM_OK;
    }
    const char *e = dlerror();
    snprintf(lib->error, sizeof lib->error, "%s", e ? e : names[i]);
  }
  if (!first) snprintf(lib->error, sizeof lib->error, "no library named");
  return lm_fail(diag, LM_ENOTFOUND, first, "cannot load %s: %s", first ? first : "a library", lib->error);
}

void lm_dl_open_process(lm_dl_lib *lib) {
  memset(lib, 0, sizeof *lib);
  lib->process = 1;
  lib->name = "the process";
}

lm_status lm_dl_resolve(const lm_dl_lib *lib, const lm_dl_sym *syms, size_t n, lm_diag *diag) {
  lm_status st = LM_OK;
  int open = lib->process || lib->handle;
  void *from = lib->process ? RTLD_DEFAULT : lib->handle;
  for (size_t i = 0; i < n; i++) {
    void *p = open ? dlsym(from, syms[i].name) : NULL;
    if (!p && syms[i].alt && open) p = dlsym(from, syms[i].alt);
    memcpy(syms[i].slot, &p, sizeof p);
    if (!p && syms[i].required && st == LM_OK)
      st = lm_fail_at(diag, LM_ENOTFOUND, lib->name, 0, syms[i].name, "%s has no %s",
                      lib->name ? lib->name : "the library", syms[i].name);
  }
  return st;
}

void lm_dl_close(lm_dl_lib *lib) {
  if (lib->handle) dlclose(lib->handle);
  lib->handle = NULL;
  lib->process = 0;
}
