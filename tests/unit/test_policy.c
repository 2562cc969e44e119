/* test_policy.c - the decisions made inside the profiled application: the
 * tool configuration survives a write and read; kernel, instance, dispatch,
 * GPU and region filters select exactly what they say; application replay
 * gives every selected dispatch the run's set; instance cycling gives
 * successive selected instances of a kernel (or of a kernel and its launch
 * parameters) successive sets; a gap-filling run collects only its
 * assignments; regions nest per thread and ranges span threads; MPI ranks
 * are read from each launcher's variables, MPI launchers before Slurm;
 * with --split ranks outside mpirun a rank's process keeps its share of
 * the sets and collects its share's set of the run, or none;
 * from 8 threads at once, each kernel's instances are numbered 0..n-1
 * without a gap or a repeat, each key's selected dispatches likewise, and
 * as many are selected as in a serial run. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "profile/profile.h"

static char **strv(const char *a, const char *b) {
  char **v = calloc(3, sizeof *v);
  v[0] = strdup(a);
  v[1] = b ? strdup(b) : NULL;
  return v;
}

/* A two-set configuration with the given mode and filters. */
static void make_config(lm_tool_config *c, int mode) {
  memset(c, 0, sizeof *c);
  snprintf(c->arch, sizeof c->arch, "gfx90a");
  c->mode = mode;
  c->n_sets = 3;
  c->set_counters = calloc(3, sizeof *c->set_counters);
  c->set_accumulate = calloc(3, sizeof *c->set_accumulate);
  c->set_counters[0] = strv("SQ_WAVES", "GRBM_GUI_ACTIVE");
  c->set_counters[1] = strv("TCC_HIT", "TCC_MISS");
  c->set_counters[2] = strv("SQ_LEVEL_WAVES", "SQ_ACCUM_PREV_HIRES");
  c->set_accumulate[2] = strdup("SQ_LEVEL_WAVES");
  snprintf(c->output, sizeof c->output, "/nonexistent/records");
  snprintf(c->telemetry, sizeof c->telemetry, "none");
}

static lm_dispatch_facts facts(uint64_t id, uint64_t kernel, const char *name, unsigned long tid) {
  lm_dispatch_facts d;
  memset(&d, 0, sizeof d);
  d.dispatch_id = id;
  d.kernel_id = kernel;
  d.kernel_name = name;
  d.gpu = 2;
  d.tid = tid;
  d.grid = 1024;
  d.workgroup = 256;
  return d;
}

static lm_policy *policy_for(const lm_tool_config *c) {
  lm_policy *p = NULL;
  lm_diag d;
  CHECK(lm_policy_new(c, &p, &d) == LM_OK);
  return p;
}

static void test_config_round_trip(void) {
  lm_tool_config c, back;
  make_config(&c, LM_REPLAY_ASSIGNED);
  c.kernels = calloc(2, sizeof *c.kernels);
  c.kernels[0] = strdup("!warm\\up\nx");
  c.n_kernels = 1;
  c.instance = strdup("::4");
  c.dispatch = strdup("2:9");
  c.regions = calloc(2, sizeof *c.regions);
  c.regions[0] = strdup("solve");
  c.n_regions = 1;
  c.assign_key = calloc(2, sizeof *c.assign_key);
  c.assign_key[0] = strdup("gemm|1024|256|0");
  c.assign_instance = calloc(1, sizeof *c.assign_instance);
  c.assign_instance[0] = 7;
  c.assign_set = calloc(1, sizeof *c.assign_set);
  c.assign_set[0] = 2;
  c.n_assign = 1;
  char path[] = "/tmp/lumen-policy-XXXXXX";
  int fd = mkstemp(path);
  CHECK(fd >= 0);
  close(fd);
  lm_diag d;
  CHECK(lm_tool_config_write(&c, path, &d) == LM_OK);
  CHECK(lm_tool_config_read(path, &back, &d) == LM_OK);
  CHECK_STR(back.arch, "gfx90a");
  CHECK(back.mode == LM_REPLAY_ASSIGNED && back.n_sets == 3);
  CHECK_STR(back.set_counters[1][1], "TCC_MISS");
  CHECK(back.set_counters[1][2] == NULL);
  CHECK(back.set_accumulate[0] == NULL);
  CHECK_STR(back.set_accumulate[2], "SQ_LEVEL_WAVES");
  CHECK(back.n_kernels == 1);
  CHECK_STR(back.kernels[0], "!warm\\up\nx");
  CHECK_STR(back.instance, "::4");
  CHECK_STR(back.dispatch, "2:9");
  CHECK(back.gpu == NULL);
  CHECK_STR(back.regions[0], "solve");
  CHECK(back.n_assign == 1 && back.assign_instance[0] == 7 && back.assign_set[0] == 2);
  CHECK_STR(back.assign_key[0], "gemm|1024|256|0");
  CHECK_STR(back.telemetry, "none");
  lm_tool_config_fini(&back);
  /* A damaged file is refused with its line. */
  FILE *f = fopen(path, "w");
  fputs("lumen-tool-config 1\nsets 2\nset 0 - A\nset 7 - B\n", f);
  fclose(f);
  CHECK(lm_tool_config_read(path, &back, &d) != LM_OK);
  CHECK(d.line == 4);
  lm_tool_config_fini(&back);
  f = fopen(path, "w");
  fputs("something else\n", f);
  fclose(f);
  CHECK(lm_tool_config_read(path, &back, &d) != LM_OK);
  lm_tool_config_fini(&back);
  unlink(path);
  lm_tool_config_fini(&c);
}

static void test_app_replay_and_filters(void) {
  lm_tool_config c;
  make_config(&c, LM_REPLAY_APP);
  c.pass = 1;
  c.kernels = calloc(3, sizeof *c.kernels);
  c.kernels[0] = strdup("gemm|copy");
  c.kernels[1] = strdup("!copy");
  c.n_kernels = 2;
  c.instance = strdup("1:3");
  lm_policy *p = policy_for(&c);
  if (!p) return;
  lm_policy_kernel(p, 1, "gemm_f32", NULL);
  lm_policy_kernel(p, 2, "copy_f32", NULL);
  lm_choice ch;
  int sets[8];
  for (int i = 0; i < 4; i++) {
    lm_dispatch_facts d = facts((uint64_t)(2 * i), 1, "gemm_f32", 10);
    lm_policy_choose(p, &d, &ch);
    sets[i] = ch.set;
    CHECK(ch.instance == i);
    lm_dispatch_facts e = facts((uint64_t)(2 * i + 1), 2, "copy_f32", 10);
    lm_policy_choose(p, &e, &ch);
    CHECK(ch.set == -1); /* excluded by name */
  }
  /* instances 1 and 2 of gemm, all with the run's set */
  CHECK(sets[0] == -1 && sets[1] == 1 && sets[2] == 1 && sets[3] == -1);
  lm_policy_free(p);
  lm_tool_config_fini(&c);

  /* -d and -g */
  make_config(&c, LM_REPLAY_APP);
  c.dispatch = strdup("3:5");
  c.gpu = strdup("2");
  p = policy_for(&c);
  if (!p) return;
  int picked = 0;
  for (int i = 0; i < 8; i++) {
    lm_dispatch_facts d = facts((uint64_t)i, 1, "k", 10);
    if (i == 4) d.gpu = 3;
    lm_policy_choose(p, &d, &ch);
    if (ch.set >= 0) picked |= 1 << i;
  }
  CHECK(picked == (1 << 3));
  lm_policy_free(p);
  lm_tool_config_fini(&c);

  /* A bad regular expression is refused when the policy is built. */
  make_config(&c, LM_REPLAY_APP);
  c.kernels = calloc(2, sizeof *c.kernels);
  c.kernels[0] = strdup("(");
  c.n_kernels = 1;
  lm_diag d;
  p = NULL;
  CHECK(lm_policy_new(&c, &p, &d) != LM_OK && p == NULL);
  lm_tool_config_fini(&c);

  /* An exclusion that backtracks without end on a long name is an error
   * that names the pattern and the kernel, and the kernel is not
   * collected: a limit reached is not taken for "does not match". */
  make_config(&c, LM_REPLAY_APP);
  c.kernels = calloc(2, sizeof *c.kernels);
  c.kernels[0] = strdup("!(a+)+$");
  c.n_kernels = 1;
  p = policy_for(&c);
  if (!p) return;
  char name[64];
  memset(name, 'a', 40);
  strcpy(name + 40, "b");
  lm_diag_clear(&d);
  CHECK(lm_policy_kernel(p, 1, name, &d) == LM_EINVAL);
  CHECK(strstr(d.message, "-k '!(a+)+$'") != NULL);
  CHECK(strstr(d.message, name) != NULL);
  CHECK(strstr(d.message, "limit") != NULL);
  lm_dispatch_facts f = facts(1, 1, name, 10);
  lm_policy_choose(p, &f, &ch);
  CHECK(ch.set < 0);
  CHECK(lm_policy_kernel(p, 2, "copy", NULL) == LM_EINVAL);
  lm_policy_free(p);
  lm_tool_config_fini(&c);
}

static void test_instance_cycling(void) {
  lm_tool_config c;
  make_config(&c, LM_REPLAY_INSTANCE);
  c.instance = strdup("::2"); /* every other instance is selected */
  lm_policy *p = policy_for(&c);
  if (!p) return;
  lm_choice ch;
  int a[8], b[4];
  for (int i = 0; i < 8; i++) {
    lm_dispatch_facts d = facts((uint64_t)i, 1, "a", 10);
    lm_policy_choose(p, &d, &ch);
    a[i] = ch.set;
    if (i < 4) {
      lm_dispatch_facts e = facts((uint64_t)(100 + i), 2, "b", 11);
      lm_policy_choose(p, &e, &ch);
      b[i] = ch.set;
      if (i == 2) CHECK(ch.selected == 1 && ch.instance == 2);
    }
  }
  /* selected instances 0,2,4,6 of a cycle sets 0,1,2,0; b has its own cycle */
  CHECK(a[0] == 0 && a[1] == -1 && a[2] == 1 && a[3] == -1 && a[4] == 2 && a[6] == 0);
  CHECK(b[0] == 0 && b[1] == -1 && b[2] == 1 && b[3] == -1);
  lm_policy_free(p);
  lm_tool_config_fini(&c);

  /* --join grid: each launch configuration cycles separately. */
  make_config(&c, LM_REPLAY_INSTANCE);
  c.key_grid = 1;
  p = policy_for(&c);
  if (!p) return;
  int small[3], large[3];
  for (int i = 0; i < 3; i++) {
    lm_dispatch_facts d = facts((uint64_t)(2 * i), 1, "a", 10);
    lm_policy_choose(p, &d, &ch);
    small[i] = ch.set;
    lm_dispatch_facts e = facts((uint64_t)(2 * i + 1), 1, "a", 10);
    e.grid = 4096;
    lm_policy_choose(p, &e, &ch);
    large[i] = ch.set;
    CHECK_STR(ch.key, "a|4096|256|0");
  }
  CHECK(small[0] == 0 && small[1] == 1 && small[2] == 2);
  CHECK(large[0] == 0 && large[1] == 1 && large[2] == 2);
  lm_policy_free(p);
  lm_tool_config_fini(&c);
}

static void test_assigned(void) {
  lm_tool_config c;
  make_config(&c, LM_REPLAY_ASSIGNED);
  c.assign_key = calloc(2, sizeof *c.assign_key);
  c.assign_instance = calloc(2, sizeof *c.assign_instance);
  c.assign_set = calloc(2, sizeof *c.assign_set);
  c.assign_key[0] = strdup("a");
  c.assign_instance[0] = 1;
  c.assign_set[0] = 2;
  c.assign_key[1] = strdup("b");
  c.assign_instance[1] = 0;
  c.assign_set[1] = 1;
  c.n_assign = 2;
  lm_policy *p = policy_for(&c);
  if (!p) return;
  lm_choice ch;
  int got[6];
  const char *names[] = {"a", "b", "a", "b", "a", "b"};
  for (int i = 0; i < 6; i++) {
    lm_dispatch_facts d = facts((uint64_t)i, names[i][0] == 'a' ? 1 : 2, names[i], 10);
    lm_policy_choose(p, &d, &ch);
    got[i] = ch.set;
  }
  CHECK(got[0] == -1 && got[1] == 1 && got[2] == 2 && got[3] == -1 && got[4] == -1 && got[5] == -1);
  lm_policy_free(p);
  lm_tool_config_fini(&c);
}

static void test_regions(void) {
  lm_tool_config c;
  make_config(&c, LM_REPLAY_APP);
  c.regions = calloc(2, sizeof *c.regions);
  c.regions[0] = strdup("inner");
  c.n_regions = 1;
  lm_policy *p = policy_for(&c);
  if (!p) return;
  lm_choice ch;
  int outer = lm_policy_region_push(p, 10, "outer");
  int inner = lm_policy_region_push(p, 10, "inner");
  CHECK(outer == 1 && inner == 2);
  lm_dispatch_facts d = facts(0, 1, "k", 10);
  lm_policy_choose(p, &d, &ch);
  CHECK(ch.set == 0);
  CHECK_STR(ch.regions, "1,2");
  /* another thread is not inside thread 10's regions */
  d = facts(1, 1, "k", 11);
  lm_policy_choose(p, &d, &ch);
  CHECK(ch.set == -1);
  CHECK_STR(ch.regions, "");
  lm_policy_region_pop(p, 10);
  d = facts(2, 1, "k", 10);
  lm_policy_choose(p, &d, &ch);
  CHECK(ch.set == -1);
  CHECK_STR(ch.regions, "1");
  /* a process-wide range covers every thread until it stops */
  int r = lm_policy_range_start(p, 77, "inner");
  CHECK(r == inner);
  d = facts(3, 1, "k", 12);
  lm_policy_choose(p, &d, &ch);
  CHECK(ch.set == 0);
  lm_policy_range_stop(p, 77);
  d = facts(4, 1, "k", 12);
  lm_policy_choose(p, &d, &ch);
  CHECK(ch.set == -1);
  CHECK_STR(lm_policy_region_name(p, 2), "inner");
  CHECK(lm_policy_region_name(p, 3) == NULL);
  /* popping an empty stack is harmless */
  lm_policy_region_pop(p, 99);
  lm_policy_free(p);
  lm_tool_config_fini(&c);
}

/* A fake environment: NAME=VALUE strings, NULL-terminated. */
static const char *fake_env(const char *name, void *user) {
  size_t n = strlen(name);
  for (const char *const *e = user; *e; e++)
    if (strncmp(*e, name, n) == 0 && (*e)[n] == '=') return *e + n + 1;
  return NULL;
}

static void test_ranks(void) {
  lm_rank_info r;
  const char *none[] = {"HOME=/root", NULL};
  CHECK(lm_rank_detect(fake_env, none, &r) == 0 && r.rank == -1 && r.size == -1 && r.local_rank == -1);
  const char *ompi[] = {"OMPI_COMM_WORLD_RANK=3", "OMPI_COMM_WORLD_SIZE=8", "OMPI_COMM_WORLD_LOCAL_RANK=1",
                        "SLURM_PROCID=0", "SLURM_NTASKS=1", NULL};
  CHECK(lm_rank_detect(fake_env, ompi, &r) == 1 && r.rank == 3 && r.size == 8 && r.local_rank == 1);
  CHECK_STR(r.launcher, "openmpi");
  const char *hydra[] = {"PMI_RANK=5", "PMI_SIZE=6", "MPI_LOCALRANKID=2", NULL};
  CHECK(lm_rank_detect(fake_env, hydra, &r) == 1 && r.rank == 5 && r.size == 6 && r.local_rank == 2);
  CHECK_STR(r.launcher, "pmi");
  const char *mv2[] = {"MV2_COMM_WORLD_RANK=1", "MV2_COMM_WORLD_SIZE=2", "MV2_COMM_WORLD_LOCAL_RANK=1", NULL};
  CHECK(lm_rank_detect(fake_env, mv2, &r) == 1 && r.rank == 1 && r.size == 2 && r.local_rank == 1);
  const char *pmix[] = {"PMIX_RANK=7", NULL};
  CHECK(lm_rank_detect(fake_env, pmix, &r) == 1 && r.rank == 7 && r.size == -1);
  CHECK_STR(r.launcher, "pmix");
  const char *pals[] = {"PALS_RANKID=4", "PALS_LOCAL_RANKID=0", NULL};
  CHECK(lm_rank_detect(fake_env, pals, &r) == 1 && r.rank == 4 && r.local_rank == 0);
  const char *slurm[] = {"SLURM_PROCID=2", "SLURM_NTASKS=4", "SLURM_LOCALID=0", NULL};
  CHECK(lm_rank_detect(fake_env, slurm, &r) == 1 && r.rank == 2 && r.size == 4 && r.local_rank == 0);
  CHECK_STR(r.launcher, "slurm");
  /* Not numbers, or a rank beyond the size, are not trusted. */
  const char *bad[] = {"OMPI_COMM_WORLD_RANK=x", "PMI_RANK=9", "PMI_SIZE=4", NULL};
  CHECK(lm_rank_detect(fake_env, bad, &r) == 1 && r.rank == 9 && r.size == -1);
  CHECK_STR(r.launcher, "pmi");
}

/* --split ranks: every set goes to exactly one rank when there are more
 * sets than ranks (shares differ by one at most), and every rank gets one
 * set, every set at least once, when there are as many ranks or more. */
static void test_split_sets(void) {
  int out[64];
  for (int size = 2; size <= 20; size++)
    for (int n_sets = 1; n_sets <= 40; n_sets++) {
      int owner[64], most = 0, least = 64;
      for (int g = 0; g < n_sets; g++) owner[g] = 0;
      for (int r = 0; r < size; r++) {
        int n = lm_split_sets(r, size, n_sets, out);
        CHECK(n >= 1);
        if (n > most) most = n;
        if (n < least) least = n;
        for (int k = 0; k < n; k++) {
          CHECK(out[k] >= 0 && out[k] < n_sets && (k == 0 || out[k] > out[k - 1]));
          owner[out[k]]++;
        }
      }
      for (int g = 0; g < n_sets; g++) CHECK(size >= n_sets ? owner[g] >= 1 : owner[g] == 1);
      /* The runs a full collection takes: ceil(sets / ranks). */
      CHECK(most == (n_sets + size - 1) / size);
      CHECK(most - least <= 1);
    }
  CHECK(lm_split_sets(1, 8, 12, out) == 2 && out[0] == 1 && out[1] == 9);
  CHECK(lm_split_sets(5, 8, 12, out) == 1 && out[0] == 5);
  CHECK(lm_split_sets(13, 16, 12, out) == 1 && out[0] == 1);
}

/* --split ranks outside mpirun: a rank's process keeps its share. */
static void test_take_share(void) {
  lm_tool_config c;
  lm_rank_info r;
  memset(&r, 0, sizeof r);
  r.rank = 1;
  r.size = 2;
  make_config(&c, LM_REPLAY_APP);
  CHECK(lm_tool_config_take_share(&c, &r) == 0); /* no split asked for */
  CHECK(c.n_sets == 3);
  c.split_ranks = 1;
  r.rank = -1;
  CHECK(lm_tool_config_take_share(&c, &r) == 0); /* mpirun's own process */
  CHECK(c.n_sets == 3);
  /* Round trip of the flag. */
  char path[] = "/tmp/lumen-policy-XXXXXX";
  int fd = mkstemp(path);
  CHECK(fd >= 0);
  close(fd);
  lm_diag d;
  lm_tool_config back;
  CHECK(lm_tool_config_write(&c, path, &d) == LM_OK && lm_tool_config_read(path, &back, &d) == LM_OK);
  CHECK(back.split_ranks == 1);
  lm_tool_config_fini(&back);
  unlink(path);
  /* Rank 0 of 2 holds sets 0 and 2: in pass 1, the plan's set 2. */
  r.rank = 0;
  c.pass = 1;
  CHECK(lm_tool_config_take_share(&c, &r) == 1);
  CHECK(c.n_sets == 2 && c.pass == 1);
  CHECK_STR(c.set_counters[0][0], "SQ_WAVES");
  CHECK_STR(c.set_counters[1][0], "SQ_LEVEL_WAVES");
  CHECK_STR(c.set_accumulate[1], "SQ_LEVEL_WAVES");
  CHECK(c.set_accumulate[0] == NULL && c.set_counters[2] == NULL);
  CHECK_STR(c.output, "/nonexistent/records.rank0");
  lm_policy *p = policy_for(&c);
  lm_choice ch;
  if (p) {
    lm_policy_kernel(p, 1, "gemm", NULL);
    lm_dispatch_facts f = facts(1, 1, "gemm", 10);
    lm_policy_choose(p, &f, &ch);
    CHECK(ch.set == 1);
    lm_policy_free(p);
  }
  lm_tool_config_fini(&c);
  /* Rank 1 of 2 holds set 1 alone: pass 1 is past its share, no set. */
  make_config(&c, LM_REPLAY_APP);
  c.split_ranks = 1;
  c.pass = 1;
  r.rank = 1;
  CHECK(lm_tool_config_take_share(&c, &r) == 1);
  CHECK(c.n_sets == 1);
  CHECK_STR(c.set_counters[0][0], "TCC_HIT");
  CHECK_STR(c.output, "/nonexistent/records.rank1");
  p = policy_for(&c);
  if (p) {
    lm_policy_kernel(p, 1, "gemm", NULL);
    lm_dispatch_facts f = facts(1, 1, "gemm", 10);
    lm_policy_choose(p, &f, &ch);
    CHECK(ch.set < 0 || ch.set >= c.n_sets);
    lm_policy_free(p);
  }
  lm_tool_config_fini(&c);
  /* More ranks than sets: rank 4 of 5 takes set 4 mod 3 = 1. */
  make_config(&c, LM_REPLAY_INSTANCE);
  c.split_ranks = 1;
  r.rank = 4;
  r.size = 5;
  CHECK(lm_tool_config_take_share(&c, &r) == 1);
  CHECK(c.n_sets == 1);
  CHECK_STR(c.set_counters[0][1], "TCC_MISS");
  lm_tool_config_fini(&c);
}

/* One clock sampler per GPU on a node: GPU id modulo the node's ranks. */
static void test_gpu_sampler(void) {
  lm_rank_info r;
  const char *four[] = {"OMPI_COMM_WORLD_RANK=5", "OMPI_COMM_WORLD_SIZE=8", "OMPI_COMM_WORLD_LOCAL_RANK=1",
                        "OMPI_COMM_WORLD_LOCAL_SIZE=4", NULL};
  CHECK(lm_rank_detect(fake_env, four, &r) == 1 && r.local_size == 4);
  CHECK(lm_rank_gpu_sampler(&r, 0, fake_env, four) == 0 && !lm_rank_samples_gpu(&r, 0, fake_env, four));
  CHECK(lm_rank_samples_gpu(&r, 1, fake_env, four) && lm_rank_samples_gpu(&r, 5, fake_env, four));
  CHECK(!lm_rank_samples_gpu(&r, 6, fake_env, four));
  /* Device 0 of a process that sees node GPUs 3 and 5. */
  const char *vis[] = {"OMPI_COMM_WORLD_RANK=1", "OMPI_COMM_WORLD_LOCAL_RANK=1", "OMPI_COMM_WORLD_LOCAL_SIZE=2",
                       "ROCR_VISIBLE_DEVICES=3,5", NULL};
  CHECK(lm_rank_detect(fake_env, vis, &r) == 1);
  CHECK(lm_rank_gpu_sampler(&r, 0, fake_env, vis) == 1 && lm_rank_samples_gpu(&r, 1, fake_env, vis));
  CHECK(lm_rank_gpu_sampler(&r, 2, fake_env, vis) == -1); /* not in the list: sample */
  const char *uuid[] = {"OMPI_COMM_WORLD_RANK=1", "OMPI_COMM_WORLD_LOCAL_RANK=1", "OMPI_COMM_WORLD_LOCAL_SIZE=2",
                        "CUDA_VISIBLE_DEVICES=GPU-8a3c", NULL};
  CHECK(lm_rank_detect(fake_env, uuid, &r) == 1 && lm_rank_samples_gpu(&r, 0, fake_env, uuid));
  /* Unknown node size, or one rank per node: every process samples. */
  const char *alone[] = {"PMI_RANK=3", "PMI_SIZE=4", "MPI_LOCALRANKID=0", "MPI_LOCALNRANKS=1", NULL};
  CHECK(lm_rank_detect(fake_env, alone, &r) == 1 && r.local_size == 1 && lm_rank_samples_gpu(&r, 2, fake_env, alone));
  const char *slurm[] = {"SLURM_PROCID=2", "SLURM_LOCALID=1", NULL};
  CHECK(lm_rank_detect(fake_env, slurm, &r) == 1 && r.local_size == -1 && lm_rank_samples_gpu(&r, 0, fake_env, slurm));
}

/* Many threads at once: 8 threads launch four kernels (two of one name, as
 * two GPU agents give one kernel two ids) in interleaved orders; half of
 * them inside a region of their own stack. */
#define MT_THREADS 8
#define MT_EACH 5000
#define MT_KERNELS 4

typedef struct mt_worker {
  lm_policy *p;
  int t;
  int64_t instance[MT_EACH], selected[MT_EACH];
  int set[MT_EACH], kernel[MT_EACH], in_region[MT_EACH];
} mt_worker;

static const char *mt_names[MT_KERNELS] = {"a", "b", "a", "c"};

static void mt_run(mt_worker *w) {
  unsigned long tid = 100 + (unsigned long)w->t;
  if (w->t % 2 == 0) lm_policy_region_push(w->p, tid, "solve");
  for (int i = 0; i < MT_EACH; i++) {
    int k = (i * (w->t + 1) + w->t) % MT_KERNELS;
    lm_dispatch_facts d = facts((uint64_t)(w->t * MT_EACH + i), (uint64_t)k + 1, mt_names[k], tid);
    lm_choice ch;
    lm_policy_choose(w->p, &d, &ch);
    w->kernel[i] = k;
    w->instance[i] = ch.instance;
    w->selected[i] = ch.selected;
    w->set[i] = ch.set;
    w->in_region[i] = strcmp(ch.regions, w->t % 2 == 0 ? "1" : "") == 0;
  }
  if (w->t % 2 == 0) lm_policy_region_pop(w->p, tid);
}

static void *mt_main(void *arg) {
  mt_run(arg);
  return NULL;
}

/* 1 if the n values are 0..n-1 in some order. */
static int permutation(const int64_t *v, size_t n) {
  char *seen = calloc(n + 1, 1);
  int ok = seen != NULL;
  for (size_t i = 0; ok && i < n; i++) {
    ok = v[i] >= 0 && (size_t)v[i] < n && !seen[v[i]];
    if (ok) seen[v[i]] = 1;
  }
  free(seen);
  return ok;
}

static void test_threads(void) {
  lm_tool_config c;
  make_config(&c, LM_REPLAY_INSTANCE);
  c.instance = strdup("::3");
  c.kernels = calloc(2, sizeof *c.kernels);
  c.kernels[0] = strdup("!^c$");
  c.n_kernels = 1;
  static mt_worker serial[MT_THREADS], threaded[MT_THREADS];
  /* The serial run: the same dispatches, one thread after another. */
  lm_policy *p = policy_for(&c);
  if (!p) return;
  for (int t = 0; t < MT_THREADS; t++) {
    serial[t].p = p;
    serial[t].t = t;
    mt_run(&serial[t]);
  }
  lm_policy_free(p);
  p = policy_for(&c);
  if (!p) return;
  pthread_t th[MT_THREADS];
  int started = 1;
  for (int t = 0; t < MT_THREADS; t++) {
    threaded[t].p = p;
    threaded[t].t = t;
    started &= pthread_create(&th[t], NULL, mt_main, &threaded[t]) == 0;
  }
  CHECK(started);
  for (int t = 0; started && t < MT_THREADS; t++) pthread_join(th[t], NULL);
  lm_policy_free(p);
  if (!started) {
    lm_tool_config_fini(&c);
    return;
  }
  for (int run = 0; run < 2; run++) {
    mt_worker *w = run ? threaded : serial;
    static int64_t inst[MT_KERNELS][MT_THREADS * MT_EACH], sel[3][MT_THREADS * MT_EACH];
    size_t n_inst[MT_KERNELS] = {0}, n_sel[3] = {0};
    int regions_right = 1, sets_right = 1;
    for (int t = 0; t < MT_THREADS; t++)
      for (int i = 0; i < MT_EACH; i++) {
        int k = w[t].kernel[i];
        inst[k][n_inst[k]++] = w[t].instance[i];
        regions_right &= w[t].in_region[i];
        if (w[t].set[i] < 0) continue;
        int key = mt_names[k][0] - 'a'; /* the key is the name: ids 1 and 3 share it */
        sel[key][n_sel[key]++] = w[t].selected[i];
        sets_right &= w[t].set[i] == (int)(w[t].selected[i] % 3) && w[t].instance[i] % 3 == 0 && k != 3;
      }
    for (int k = 0; k < MT_KERNELS; k++) CHECK(n_inst[k] > 0 && permutation(inst[k], n_inst[k]));
    for (int key = 0; key < 3; key++) CHECK(permutation(sel[key], n_sel[key]));
    CHECK(n_sel[2] == 0); /* c is excluded by name */
    CHECK(regions_right && sets_right);
    if (run == 1) {
      size_t serial_count = 0, threaded_count = 0;
      for (int t = 0; t < MT_THREADS; t++)
        for (int i = 0; i < MT_EACH; i++) {
          serial_count += serial[t].set[i] >= 0;
          threaded_count += threaded[t].set[i] >= 0;
        }
      CHECK(serial_count > 0 && threaded_count == serial_count);
    }
  }
  lm_tool_config_fini(&c);
}

int main(void) {
  test_ranks();
  test_gpu_sampler();
  test_split_sets();
  test_take_share();
  test_config_round_trip();
  test_app_replay_and_filters();
  test_instance_cycling();
  test_assigned();
  test_regions();
  test_threads();
  return check_report("test_policy");
}
