/*
 * map.c - string-keyed open-addressing hash map.
 *
 * Used for column lookup by name (a 2,700-column header), metric names and
 * interned identifiers; FNV-1a hashing and linear probing keep it small and
 * fast for these few-thousand-entry tables.
 */
#include <string.h>

#include "base/base.h"

typedef struct slot {
  char *key; /* owned; NULL marks an empty slot */
  size_t key_len;
  uint64_t hash;
  int64_t value;
} slot;

struct lm_map {
  slot *slots;
  size_t cap; /* power of two */
  size_t count;
};

static uint64_t hash_bytes(const char *s, size_t n) {
  uint64_t h = 1469598103934665603ULL;
  for (size_t i = 0; i < n; i++) {
    h ^= (unsigned char)s[i];
    h *= 1099511628211ULL;
  }
  return h;
}

lm_map *lm_map_new(void) {
  lm_map *map = lm_calloc(1, sizeof *map);
  if (!map) return NULL;
  map->cap = 16;
  map->slots = lm_calloc(map->cap, sizeof *map->slots);
  if (!map->slots) {
    lm_free(map);
    return NULL;
  }
  return map;
}

void lm_map_free(lm_map *map) {
  if (!map) return;
  for (size_t i = 0; i < map->cap; i++) lm_free(map->slots[i].key);
  lm_free(map->slots);
  lm_free(map);
}

static slot *find(const lm_map *map, const char *key, size_t n, uint64_t h) {
  size_t mask = map->cap - 1;
  for (size_t i = h & mask;; i = (i + 1) & mask) {
    slot *s = &map->slots[i];
    if (!s->key) return s;
    if (s->hash == h && s->key_len == n && memcmp(s->key, key, n) == 0)
      return s;
  }
}

static lm_status grow(lm_map *map) {
  size_t cap = map->cap * 2;
  slot *fresh = lm_calloc(cap, sizeof *fresh);
  if (!fresh) return LM_ENOMEM;
  slot *old = map->slots;
  size_t old_cap = map->cap;
  map->slots = fresh;
  map->cap = cap;
  for (size_t i = 0; i < old_cap; i++)
    if (old[i].key) *find(map, old[i].key, old[i].key_len, old[i].hash) = old[i];
  lm_free(old);
  return LM_OK;
}

lm_status lm_map_putn(lm_map *map, const char *key, size_t n, int64_t value) {
  if ((map->count + 1) * 4 > map->cap * 3 && grow(map) != LM_OK)
    return LM_ENOMEM;
  uint64_t h = hash_bytes(key, n);
  slot *s = find(map, key, n, h);
  if (!s->key) {
    char *copy = lm_strndup(key, n);
    if (!copy) return LM_ENOMEM;
    s->key = copy;
    s->key_len = n;
    s->hash = h;
    map->count++;
  }
  s->value = value;
  return LM_OK;
}

lm_status lm_map_put(lm_map *map, const char *key, int64_t value) {
  return lm_map_putn(map, key, strlen(key), value);
}

int lm_map_getn(const lm_map *map, const char *key, size_t n, int64_t *value) {
  slot *s = find(map, key, n, hash_bytes(key, n));
  if (!s->key) return 0;
  if (value) *value = s->value;
  return 1;
}

int lm_map_get(const lm_map *map, const char *key, int64_t *value) {
  return lm_map_getn(map, key, strlen(key), value);
}

size_t lm_map_count(const lm_map *map) { return map->count; }
