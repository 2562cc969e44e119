/*
 * db_private.h - what the files of src/db share and nothing else reads:
 * the fixed dispatch columns and the error of a failed statement.
 */
#ifndef LUMEN_DB_PRIVATE_H
#define LUMEN_DB_PRIVATE_H

#include "db/db.h"
#include "sql/sql.h"

/* A fixed dispatch column: its name in pmc_perf.csv and in the dispatch
 * table. */
typedef struct lm_db_fixed_col {
  const char *csv;
  const char *sql;
} lm_db_fixed_col;

#define LM_DB_N_FIXED 12
extern const lm_db_fixed_col lm_db_fixed_cols[LM_DB_N_FIXED];

/* lm_db_stmt_fail: the error of statement s (NULL: it could not be
 * prepared; `what` names the step), s freed. */
lm_status lm_db_stmt_fail(lm_stmt *s, lm_sql *sql, const char *what, lm_diag *diag);

#endif
