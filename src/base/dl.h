/*
 * dl.h - optional libraries opened at run time: the first of a list of
 * names that loads, and a table of the symbols a caller needs from it.
 *
 * lumen runs without GPU vendor libraries, the web server's library and
 * others; where one is missing the caller must say which library or which
 * entry point, in one line. The loader's reason and the library's name are
 * kept, so each caller words its own message around them. This is the one
 * place lumen calls the dynamic loader.
 */
#ifndef LUMEN_BASE_DL_H
#define LUMEN_BASE_DL_H

#include <stddef.h>

#include "base/base.h"

/* An opened library. */
typedef struct lm_dl_lib {
  void *handle;     /* dlopen's handle; NULL when nothing is open */
  const char *name; /* the name that loaded (borrowed from the caller's list) */
  char error[512];  /* the loader's reason for the last name that failed, "" if none */
  int process;      /* 1: the process's own symbols (lm_dl_open_process), nothing to close */
} lm_dl_lib;

/* One entry of a symbol table for lm_dl_resolve. */
typedef struct lm_dl_sym {
  const char *name; /* the symbol */
  void *slot;       /* where its address goes: the caller's function (or data) pointer */
  int required;     /* 1: a library without it is refused; 0: the slot is left NULL */
  const char *alt;  /* an older name tried when `name` is absent, or NULL */
} lm_dl_sym;

/* lm_dl_open: open the first of names[0..n) that loads (NULL and "" are
 * skipped) with RTLD_NOW | RTLD_LOCAL | extra_flags (e.g. RTLD_NOLOAD).
 * LM_OK with lib filled, or LM_ENOTFOUND with lib->handle NULL, lib->error
 * the loader's reason and diag's message "cannot load NAME: REASON" (NAME
 * the first name given, also in diag's file). lib is the caller's. */
lm_status lm_dl_open(lm_dl_lib *lib, const char *const *names, size_t n, int extra_flags, lm_diag *diag);

/* lm_dl_open_process: the symbols already in the process, looked up in the
 * loader's default order (RTLD_DEFAULT: what the calling code would bind
 * to), e.g. a runtime's entry point present only when the application
 * brought it. Never fails; lib's name is "the process". lib is the
 * caller's. */
void lm_dl_open_process(lm_dl_lib *lib);

/* lm_dl_resolve: write the address of every symbol of syms[0..n) into its
 * slot (NULL for one the library lacks). LM_OK, or LM_ENOTFOUND for the
 * first required symbol it lacks: diag's message "NAME has no SYMBOL",
 * its file the library's name and its field the symbol. */
lm_status lm_dl_resolve(const lm_dl_lib *lib, const lm_dl_sym *syms, size_t n, lm_diag *diag);

/* lm_dl_close: close the library if one is open (then lib->handle is
 * NULL); a closed or zeroed lib is a no-op. */
void lm_dl_close(lm_dl_lib *lib);

#endif
