/*
 * db_query.c - print the rows of one SQL query on a lumen database, fields
 * separated by '|', so shell tests can assert what a profile stored.
 * Usage: db_query DB SQL
 */
#include <sqlite3.h>
#include <stdio.h>

int main(int argc, char **argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: db_query DB SQL\n");
    return 2;
  }
  sqlite3 *db = NULL;
  if (sqlite3_open_v2(argv[1], &db, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK) {
    fprintf(stderr, "db_query: %s: %s\n", argv[1], sqlite3_errmsg(db));
    sqlite3_close(db);
    return 1;
  }
  sqlite3_stmt *s = NULL;
  if (sqlite3_prepare_v2(db, argv[2], -1, &s, NULL) != SQLITE_OK) {
    fprintf(stderr, "db_query: %s\n", sqlite3_errmsg(db));
    sqlite3_close(db);
    return 1;
  }
  int rc;
  while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
    for (int i = 0; i < sqlite3_column_count(s); i++) {
      const unsigned char *t = sqlite3_column_text(s, i);
      printf("%s%s", i ? "|" : "", t ? (const char *)t : "");
    }
    putchar('\n');
  }
  int ok = rc == SQLITE_DONE;
  if (!ok) fprintf(stderr, "db_query: %s\n", sqlite3_errmsg(db));
  sqlite3_finalize(s);
  sqlite3_close(db);
  return ok ? 0 : 1;
}
