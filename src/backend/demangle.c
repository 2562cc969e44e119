/*
 * demangle.c - C++ symbol names as people read them, for every backend:
 * the SDKs hand over kernel symbols in their Itanium-mangled form
 * ("_Z7vecCopyPdS_S_ii.kd"), and the reference tool shows them demangled
 * ("vecCopy(double*, double*, double*, int, int) [clone .kd]"). The work
 * is the C++ runtime's (__cxa_demangle, the demangler of libstdc++ that
 * every toolchain ships), found in the process or opened at run time, so
 * lumen stays a C program and never links the C++ library.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/backend.h"
#include "base/dl.h"

typedef char *(*demangle_fn)(const char *, char *, size_t *, int *);

static demangle_fn demangler;
static pthread_once_t looked = PTHREAD_ONCE_INIT;

static void find_demangler(void) {
  static const char *const names[] = {"libstdc++.so.6"};
  const lm_dl_sym sym = {"__cxa_demangle", &demangler, 0, NULL};
  lm_dl_lib lib;
  lm_dl_open_process(&lib);
  lm_dl_resolve(&lib, &sym, 1, NULL);
  /* Kept open: the demangler points into it. */
  if (!demangler && lm_dl_open(&lib, names, 1, 0, NULL) == LM_OK) lm_dl_resolve(&lib, &sym, 1, NULL);
}

const char *lm_backend_demangle(const char *name, char *out, size_t cap) {
  if (!cap) return out;
  if (!name) name = "?";
  demangle_fn fn = NULL;
  if (strncmp(name, "_Z", 2) == 0) {
    pthread_once(&looked, find_demangler);
    fn = demangler;
  }
  int status = -1;
  char *d = fn ? fn(name, NULL, NULL, &status) : NULL;
  snprintf(out, cap, "%s", d && status == 0 ? d : name);
  free(d);
  return out;
}
