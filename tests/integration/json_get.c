/* json_get.c - print the value at a dotted path of a JSON document read
 * from stdin ("panels.2.tables.0.rows.1.cells.2"); numbers in full
 * precision, strings raw, null as "null". Exits 1 when the document does
 * not parse or the path is absent. For integration tests. */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: json_get PATH < doc.json\n");
    return 2;
  }
  size_t cap = 1 << 20, len = 0;
  char *text = malloc(cap);
  size_t n;
  while (text && (n = fread(text + len, 1, cap - len - 1, stdin)) > 0) {
    len += n;
    if (cap - len < 2) text = realloc(text, cap *= 2);
  }
  if (!text) return 2;
  text[len] = '\0';
  cJSON *root = cJSON_Parse(text);
  if (!root) {
    fprintf(stderr, "json_get: not valid JSON\n");
    return 1;
  }
  cJSON *at = root;
  char *path = strdup(argv[1]);
  for (char *tok = strtok(path, "."); tok && at; tok = strtok(NULL, ".")) {
    char *end;
    long i = strtol(tok, &end, 10);
    at = *end == '\0' && cJSON_IsArray(at) ? cJSON_GetArrayItem(at, (int)i)
                                           : cJSON_GetObjectItemCaseSensitive(at, tok);
  }
  int status = 0;
  if (!at) {
    fprintf(stderr, "json_get: no %s\n", argv[1]);
    status = 1;
  } else if (cJSON_IsNumber(at)) {
    printf("%.17g\n", at->valuedouble);
  } else if (cJSON_IsString(at)) {
    printf("%s\n", at->valuestring);
  } else if (cJSON_IsNull(at)) {
    printf("null\n");
  } else {
    char *s = cJSON_PrintUnformatted(at);
    printf("%s\n", s);
    free(s);
  }
  free(path);
  free(text);
  cJSON_Delete(root);
  return status;
}
