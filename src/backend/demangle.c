/*
 * demangle.c - C++ symbol names as people read them, for every backend:
 * the SDKs hand over kernel symbols in their Itanium-mangled form
 * ("_Z7vecCopyPdS_S_ii.kd"), and the reference tool shows them demangled
 * ("vecCopy(double*, double*, double*, int, int) [clone .kd]"). The work
 * is the C++ runtime's (__cxa_demangle, the demangler of libstdc++ that
 * every toolchain ships), found in the process or opened at run time, so
 * lumen stays a C program and never links the C++ library.
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/backend.h"

typedef char *(*demangle_fn)(const char *, char *, size_t *, int *);

static demangle_fn demangler;
static pthread_once_t looked = PTHREAD_ONCE_INIT;

static void find_demangler(void) {
  void *sym = dlsym(RTLD_DEFAULT, "__cxa_demangle");
  if (!sym) {
    void *lib = dlopen("libstdc++.so.6", RTLD_NOW | RTLD_LOCAL);
    if (lib) sym = dlsym(lib, "__cxa_demangle"); /* kept open: demangler points into it */
  }
  memcpy(&demangler, &sym, sizeof sym);
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
