/*
 * rank.c - which MPI rank a process is, read from its launcher's
 * environment, so that lumen knows ranks without linking MPI (a tool
 * library inside any MPI, or none). Launchers export the rank before the
 * program starts: Open MPI (OMPI_COMM_WORLD_*), MVAPICH2 (MV2_COMM_WORLD_*),
 * PMIx (PMIX_RANK), PALS (PALS_RANKID), MPICH/Hydra and Cray PMI (PMI_RANK,
 * PMI_SIZE) and Slurm's srun (SLURM_PROCID, SLURM_NTASKS, SLURM_LOCALID).
 * The MPI launchers come first: inside a Slurm allocation, `mpirun` ranks
 * inherit the batch step's SLURM_PROCID, which is not their rank.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "profile/profile.h"

/* number: the variable's value as a non-negative integer, or -1. */
static int number(lm_env_lookup get, void *user, const char *name) {
  const char *v = get(name, user);
  if (!v || !*v) return -1;
  char *end;
  long n = strtol(v, &end, 10);
  return *end || n < 0 || n > 100000000 ? -1 : (int)n;
}

typedef struct launcher {
  const char *name, *rank, *size, *local_rank;
} launcher;

static const launcher launchers[] = {
    {"openmpi", "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_LOCAL_RANK"},
    {"mvapich2", "MV2_COMM_WORLD_RANK", "MV2_COMM_WORLD_SIZE", "MV2_COMM_WORLD_LOCAL_RANK"},
    {"pmix", "PMIX_RANK", NULL, NULL},
    {"pals", "PALS_RANKID", NULL, "PALS_LOCAL_RANKID"},
    {"pmi", "PMI_RANK", "PMI_SIZE", NULL},
    {"slurm", "SLURM_PROCID", "SLURM_NTASKS", "SLURM_LOCALID"},
};

/* Local ranks that some launchers export apart from their rank. */
static const char *const local_rank_vars[] = {"OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID",
                                              "PMI_LOCAL_RANK", "PALS_LOCAL_RANKID", "SLURM_LOCALID",
                                              NULL};
static const char *const size_vars[] = {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE",
                                        "SLURM_NTASKS", NULL};

/* The number of ranks on this node. */
static const char *const local_size_vars[] = {"OMPI_COMM_WORLD_LOCAL_SIZE", "MV2_COMM_WORLD_LOCAL_SIZE",
                                              "MPI_LOCALNRANKS", NULL};

int lm_rank_detect(lm_env_lookup get, void *user, lm_rank_info *out) {
  memset(out, 0, sizeof *out);
  out->rank = out->size = out->local_rank = out->local_size = -1;
  for (size_t i = 0; i < sizeof launchers / sizeof launchers[0]; i++) {
    const launcher *l = &launchers[i];
    int rank = number(get, user, l->rank);
    if (rank < 0) continue;
    out->rank = rank;
    out->size = l->size ? number(get, user, l->size) : -1;
    out->local_rank = l->local_rank ? number(get, user, l->local_rank) : -1;
    for (const char *const *v = size_vars; out->size < 0 && *v; v++) out->size = number(get, user, *v);
    for (const char *const *v = local_rank_vars; out->local_rank < 0 && *v; v++)
      out->local_rank = number(get, user, *v);
    if (out->size >= 0 && out->rank >= out->size) out->size = -1; /* inconsistent: unknown */
    for (const char *const *v = local_size_vars; out->local_size < 0 && *v; v++)
      out->local_size = number(get, user, *v);
    if (out->local_size >= 0 && out->local_rank >= out->local_size) out->local_size = -1;
    snprintf(out->launcher, sizeof out->launcher, "%s", l->name);
    return 1;
  }
  return 0;
}

const char *lm_env_get(const char *name, void *user) {
  (void)user;
  return getenv(name);
}

int lm_rank_detect_env(lm_rank_info *out) { return lm_rank_detect(lm_env_get, NULL, out); }

/* The node-wide id of the process's device index gpu: entry gpu of the
 * first *_VISIBLE_DEVICES list that is set (numbers only), else gpu
 * itself; -1 when a list names devices otherwise (UUIDs) or is too short. */
static int node_gpu(int gpu, lm_env_lookup get, void *user) {
  static const char *const vars[] = {"ROCR_VISIBLE_DEVICES", "HIP_VISIBLE_DEVICES", "CUDA_VISIBLE_DEVICES"};
  for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++) {
    const char *v = get(vars[i], user);
    if (!v || !*v) continue;
    int k = 0;
    for (const char *p = v; *p; k++) {
      char *end;
      long id = strtol(p, &end, 10);
      if (end == p || id < 0 || (*end && *end != ',')) return -1;
      if (k == gpu) return (int)id;
      p = *end ? end + 1 : end;
    }
    return -1;
  }
  return gpu;
}

int lm_rank_gpu_sampler(const lm_rank_info *r, int gpu, lm_env_lookup get, void *user) {
  if (!r || r->local_rank < 0 || r->local_size < 2 || gpu < 0) return -1;
  int id = node_gpu(gpu, get, user);
  return id < 0 ? -1 : id % r->local_size;
}

int lm_rank_samples_gpu(const lm_rank_info *r, int gpu, lm_env_lookup get, void *user) {
  int sampler = lm_rank_gpu_sampler(r, gpu, get, user);
  return sampler < 0 || sampler == r->local_rank;
}

int lm_split_sets(int rank, int size, int n_sets, int *out) {
  if (rank < 0 || size < 1 || n_sets < 1) return 0;
  if (size >= n_sets) {
    out[0] = rank % n_sets;
    return 1;
  }
  int n = 0;
  for (int s = rank % size; s < n_sets; s += size) out[n++] = s;
  return n;
}
