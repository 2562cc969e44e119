/*
 * model.c - accessors and destructors for tables, system info and
 * workloads. Construction lives in io/, which knows the file formats.
 */
#include <math.h>
#include <string.h>

#include "model/model.h"

void lm_table_free(lm_table *table) {
  if (!table) return;
  lm_map_free(table->by_name);
  lm_free_huge(table->block, table->block_bytes);
  lm_arena_free(table->arena);
  /* The table struct itself lives in its arena. */
}

long lm_table_find(const lm_table *table, const char *name) {
  int64_t index;
  if (!table || !table->by_name || !lm_map_get(table->by_name, name, &index))
    return -1;
  return (long)index;
}

const char *lm_table_text(const lm_table *table, size_t col, size_t row) {
  const lm_column *c = &table->cols[col];
  if (!c->text_ids || row >= table->n_rows) return NULL;
  int32_t id = c->text_ids[row];
  if (id < 0 || (size_t)id >= table->n_strings) return NULL;
  return table->strings[id];
}

long lm_sysinfo_find(const lm_sysinfo *info, const char *name) {
  for (size_t i = 0; i < info->n_fields; i++)
    if (strcmp(info->names[i], name) == 0) return (long)i;
  return -1;
}

const char *lm_sysinfo_text(const lm_sysinfo *info, const char *name) {
  long i = lm_sysinfo_find(info, name);
  return i < 0 ? NULL : info->texts[i];
}

void lm_workload_free(lm_workload *workload) {
  if (!workload) return;
  lm_table_free(workload->pmc);
  for (size_t i = 0; i < workload->n_levels; i++)
    lm_table_free(workload->levels[i]);
  lm_table_free(workload->sysinfo_table);
  lm_table_free(workload->roofline);
  lm_arena_free(workload->arena);
}

const lm_table *lm_workload_source(const lm_workload *workload,
                                   const char *name) {
  if (strcmp(name, "pmc_perf") == 0) return workload->pmc;
  for (size_t i = 0; i < workload->n_levels; i++)
    if (strcmp(workload->levels[i]->name, name) == 0) return workload->levels[i];
  return NULL;
}
