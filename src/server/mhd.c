/*
 * mhd.c - libmicrohttpd, opened when a server starts rather than when
 * lumen does.
 *
 * libmicrohttpd brings GnuTLS and its eight libraries with it; mapped and
 * relocated at every start of the binary they cost a few milliseconds of
 * each `lumen analyze`, most of the time a three-dispatch analysis takes,
 * for a server that run did not start. So the server's files call the ten
 * entry points they use through the table below, filled once by
 * lm_server_mhd_load from the library named at build time (its soname).
 * The types are the header's: only where the functions come from changes.
 */
#include <dlfcn.h>
#include <string.h>

#include "server/internal.h"

#ifndef LM_MHD_SONAME
#error "LM_MHD_SONAME (the library's soname) comes from src/server/CMakeLists.txt"
#endif

lm_mhd_api lm_mhd;

/* Copies a symbol's address into a function pointer (ISO C has no cast
 * between the two; POSIX guarantees they have one representation). */
static int take(void *lib, const char *name, void *fn, size_t size) {
  void *p = dlsym(lib, name);
  if (!p) return 0;
  memcpy(fn, &p, size);
  return 1;
}

lm_status lm_server_mhd_load(lm_diag *diag) {
  if (lm_mhd.start_daemon) return LM_OK;
  void *lib = dlopen(LM_MHD_SONAME, RTLD_NOW | RTLD_LOCAL);
  if (!lib) return lm_diag_set(diag, LM_EIO, NULL, 0, 0, "serve", "cannot load %s: %s", LM_MHD_SONAME, dlerror());
  lm_mhd_api t;
  memset(&t, 0, sizeof t);
  const char *missing = NULL;
#define TAKE(field, name) \
  if (!missing && !take(lib, name, &t.field, sizeof t.field)) missing = name
  TAKE(start_daemon, "MHD_start_daemon");
  TAKE(stop_daemon, "MHD_stop_daemon");
  TAKE(get_daemon_info, "MHD_get_daemon_info");
  TAKE(get_connection_info, "MHD_get_connection_info");
  TAKE(get_connection_values, "MHD_get_connection_values");
  TAKE(get_connection_values_n, "MHD_get_connection_values_n");
  TAKE(lookup_connection_value, "MHD_lookup_connection_value");
  TAKE(create_response_from_buffer, "MHD_create_response_from_buffer");
  TAKE(add_response_header, "MHD_add_response_header");
  TAKE(queue_response, "MHD_queue_response");
  TAKE(destroy_response, "MHD_destroy_response");
#undef TAKE
  if (missing) {
    dlclose(lib);
    return lm_diag_set(diag, LM_EIO, NULL, 0, 0, "serve", "%s has no %s", LM_MHD_SONAME, missing);
  }
  /* The library stays open for the life of the process. */
  lm_mhd = t;
  return LM_OK;
}
