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
#include <string.h>

#include "base/dl.h"
#include "server/internal.h"

#ifndef LM_MHD_SONAME
#error "LM_MHD_SONAME (the library's soname) comes from src/server/CMakeLists.txt"
#endif

lm_mhd_api lm_mhd;

lm_status lm_server_mhd_load(lm_diag *diag) {
  if (lm_mhd.start_daemon) return LM_OK;
  const char *names[] = {LM_MHD_SONAME};
  lm_dl_lib lib;
  lm_diag d;
  lm_diag_clear(&d);
  if (lm_dl_open(&lib, names, 1, 0, &d) != LM_OK)
    return lm_fail_at(diag, LM_EIO, NULL, 0, "serve", "cannot load %s: %s", LM_MHD_SONAME, lib.error);
  lm_mhd_api t;
  memset(&t, 0, sizeof t);
  const lm_dl_sym syms[] = {
      {"MHD_start_daemon", &t.start_daemon, 1, NULL},
      {"MHD_stop_daemon", &t.stop_daemon, 1, NULL},
      {"MHD_get_daemon_info", &t.get_daemon_info, 1, NULL},
      {"MHD_get_connection_info", &t.get_connection_info, 1, NULL},
      {"MHD_get_connection_values", &t.get_connection_values, 1, NULL},
      {"MHD_get_connection_values_n", &t.get_connection_values_n, 1, NULL},
      {"MHD_lookup_connection_value", &t.lookup_connection_value, 1, NULL},
      {"MHD_create_response_from_buffer", &t.create_response_from_buffer, 1, NULL},
      {"MHD_add_response_header", &t.add_response_header, 1, NULL},
      {"MHD_queue_response", &t.queue_response, 1, NULL},
      {"MHD_destroy_response", &t.destroy_response, 1, NULL},
  };
  if (lm_dl_resolve(&lib, syms, LM_ARRAY_LEN(syms), &d) != LM_OK) {
    lm_dl_close(&lib);
    return lm_fail_at(diag, LM_EIO, NULL, 0, "serve", "%s has no %s", LM_MHD_SONAME, d.field);
  }
  /* The library stays open for the life of the process. */
  lm_mhd = t;
  return LM_OK;
}
