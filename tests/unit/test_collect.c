/* test_collect.c - the vendor-neutral decisions of `lumen profile` and the
 * host side of its CUPTI backend, without a GPU: the runs each replay mode
 * needs; the tool configuration built for a run of each mode (and read
 * back as the tool reads it); the filters deciding, on CUDA kernel names,
 * which launches are profiled and with which set; the system information
 * the tool reports as S lines, read into the workload's; the device checks
 * (architecture, chip, counter access) and their errors; the environment
 * of a run under CUPTI; the backend names --backend accepts; a rank's
 * share of a --split ranks plan, as the part of each rank stores it; what
 * a profile that keeps nothing removes. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "sql/sql.h"
#include "db/db.h"
#include "collect/collect.h"

static char *scratch_dir(void) {
  static char dir[64];
  snprintf(dir, sizeof dir, "/tmp/lumen-collect-XXXXXX");
  return mkdtemp(dir);
}

static void test_run_plan(void) {
  int modes[8], passes[8];
  CHECK(lm_collect_run_plan(LM_REPLAY_APP, 3, modes, passes, 8) == 3);
  for (int i = 0; i < 3; i++) CHECK(modes[i] == LM_REPLAY_APP && passes[i] == i);
  CHECK(lm_collect_run_plan(LM_REPLAY_KERNEL, 1, modes, passes, 8) == 1);
  CHECK(modes[0] == LM_REPLAY_APP && passes[0] == 0);
  CHECK(lm_collect_run_plan(LM_REPLAY_KERNEL, 2, modes, passes, 8) == -1);
  CHECK(lm_collect_run_plan(LM_REPLAY_INSTANCE, 4, modes, passes, 8) == 1);
  CHECK(modes[0] == LM_REPLAY_INSTANCE);
  CHECK(lm_collect_run_plan(LM_REPLAY_AUTO, 4, modes, passes, 8) == 1);
  CHECK(modes[0] == LM_REPLAY_INSTANCE);
  CHECK(lm_collect_run_plan(LM_REPLAY_APP, 5, modes, passes, 2) == 2);
}

/* Two NVIDIA sets, as the CUPTI planner gives them. */
static char set0a[] = "dram__bytes_read.sum", set0b[] = "gpu__time_duration.sum";
static char set1a[] = "smsp__sass_thread_inst_executed_op_ffma_pred_on.sum";
static char *set0[] = {set0a, set0b, NULL}, *set1[] = {set1a, set0b, NULL};

static void make_job(lm_collect_job *job, lm_set_info sets[2], lm_stored_opts *opt) {
  memset(opt, 0, sizeof *opt);
  sets[0].counters = set0;
  sets[0].accumulate = NULL;
  sets[1].counters = set1;
  sets[1].accumulate = NULL;
  job->arch = "sm_90";
  job->sets = sets;
  job->n_sets = 2;
  job->opt = opt;
  job->telemetry = NULL;
}

/* The configuration of a run, written and read back as the tool does. */
static int round_trip(const lm_collect_job *job, const lm_run_spec *spec, lm_tool_config *back) {
  lm_tool_config cfg;
  lm_diag d;
  char *dir = scratch_dir(), path[256];
  if (!dir) return -1;
  snprintf(path, sizeof path, "%s/run.config", dir);
  int ok = lm_collect_tool_config(job, spec, "/x/run_1.records", &cfg, &d) == LM_OK &&
           lm_tool_config_write(&cfg, path, &d) == LM_OK && lm_tool_config_read(path, back, &d) == LM_OK;
  lm_collect_tool_config_fini(&cfg);
  unlink(path);
  rmdir(dir);
  return ok ? 0 : -1;
}

static void test_tool_config(void) {
  lm_collect_job job;
  lm_set_info sets[2];
  lm_stored_opts opt;
  make_job(&job, sets, &opt);
  char k0[] = "vcopy", k1[] = "!warmup", *kernels[] = {k0, k1, NULL};
  char r0[] = "solve", *regions[] = {r0, NULL};
  char inst[] = "1:", disp[] = "0:100", gpu[] = "0";
  opt.kernels = kernels;
  opt.n_kernels = 2;
  opt.regions = regions;
  opt.n_regions = 1;
  opt.instance = inst;
  opt.dispatch = disp;
  opt.gpu = gpu;
  opt.key_grid = 1;
  /* application replay, the run of set 1 */
  lm_run_spec spec;
  memset(&spec, 0, sizeof spec);
  spec.id = 2;
  spec.mode = LM_REPLAY_APP;
  spec.pass = 1;
  spec.n_sets = 2;
  lm_tool_config back;
  CHECK(round_trip(&job, &spec, &back) == 0);
  CHECK_STR(back.arch, "sm_90");
  CHECK(back.mode == LM_REPLAY_APP && back.pass == 1 && back.n_sets == 2 && back.key_grid == 1);
  CHECK_STR(back.set_counters[0][0], "dram__bytes_read.sum");
  CHECK_STR(back.set_counters[1][0], "smsp__sass_thread_inst_executed_op_ffma_pred_on.sum");
  CHECK(back.set_counters[1][2] == NULL && back.set_accumulate[0] == NULL);
  CHECK(back.n_kernels == 2 && back.n_regions == 1);
  CHECK_STR(back.kernels[1], "!warmup");
  CHECK_STR(back.regions[0], "solve");
  CHECK_STR(back.instance, "1:");
  CHECK_STR(back.dispatch, "0:100");
  CHECK_STR(back.gpu, "0");
  CHECK_STR(back.output, "/x/run_1.records");
  CHECK_STR(back.telemetry, "auto");
  lm_tool_config_fini(&back);
  /* instance cycling: no pass, every set */
  spec.mode = LM_REPLAY_INSTANCE;
  spec.pass = 0;
  job.telemetry = "none";
  CHECK(round_trip(&job, &spec, &back) == 0);
  CHECK(back.mode == LM_REPLAY_INSTANCE && back.n_sets == 2 && back.n_assign == 0);
  CHECK_STR(back.telemetry, "none");
  lm_tool_config_fini(&back);
  /* a gap-filling run: its assignments */
  char key[] = "vcopy(float const*, float*, unsigned long)", *keys[] = {key};
  int64_t instances[] = {3}, groups[] = {1};
  int set_of[] = {1};
  spec.mode = LM_REPLAY_ASSIGNED;
  spec.assign_key = keys;
  spec.assign_instance = instances;
  spec.assign_set = set_of;
  spec.assign_group = groups;
  spec.n_assign = 1;
  CHECK(round_trip(&job, &spec, &back) == 0);
  CHECK(back.mode == LM_REPLAY_ASSIGNED && back.n_assign == 1);
  CHECK(back.n_assign == 1 && back.assign_instance[0] == 3 && back.assign_set[0] == 1);
  CHECK_STR(back.n_assign ? back.assign_key[0] : NULL, key);
  lm_tool_config_fini(&back);
}

/* The filters on launches as the CUPTI adapter reports them: demangled
 * CUDA names, dispatch ids from 0, the CUDA device ordinal. */
static lm_dispatch_facts launch(uint64_t id, uint64_t kernel, const char *name, int gpu) {
  lm_dispatch_facts d;
  memset(&d, 0, sizeof d);
  d.dispatch_id = id;
  d.kernel_id = kernel;
  d.kernel_name = name;
  d.gpu = gpu;
  d.tid = 7;
  d.grid = 262144 * 256;
  d.workgroup = 256;
  return d;
}

static const char *const vcopy = "vcopy(float const*, float*, unsigned long)";
static const char *const warm = "warmup(float*)";

/* Which of 6 launches (vcopy, warmup alternating) get a set, as a bit
 * mask, and the sets they get. */
static int decide(const lm_collect_job *job, const lm_run_spec *spec, int gpu_of_4, int in_region_from,
                  int sets[6]) {
  lm_tool_config cfg;
  lm_diag d;
  if (lm_collect_tool_config(job, spec, "/nonexistent/records", &cfg, &d) != LM_OK) return -1;
  lm_policy *p = NULL;
  if (lm_policy_new(&cfg, &p, &d) != LM_OK) {
    lm_collect_tool_config_fini(&cfg);
    return -1;
  }
  lm_policy_kernel(p, 1, vcopy, NULL);
  lm_policy_kernel(p, 2, warm, NULL);
  int picked = 0;
  for (int i = 0; i < 6; i++) {
    if (i == in_region_from) lm_policy_region_push(p, 7, "solve");
    lm_dispatch_facts f = launch((uint64_t)i, i % 2 ? 2 : 1, i % 2 ? warm : vcopy, i == 4 ? gpu_of_4 : 0);
    lm_choice ch;
    lm_policy_choose(p, &f, &ch);
    sets[i] = ch.set;
    if (ch.set >= 0) picked |= 1 << i;
  }
  lm_policy_free(p);
  lm_collect_tool_config_fini(&cfg);
  return picked;
}

static void test_filters(void) {
  lm_collect_job job;
  lm_set_info sets[2];
  lm_stored_opts opt;
  make_job(&job, sets, &opt);
  lm_run_spec spec;
  memset(&spec, 0, sizeof spec);
  spec.mode = LM_REPLAY_APP;
  spec.pass = 1;
  spec.n_sets = 2;
  int got[6];
  /* no filter: every launch, with the run's set */
  CHECK(decide(&job, &spec, 0, 99, got) == 0x3f);
  CHECK(got[0] == 1 && got[5] == 1);
  /* -k vcopy: the warmup launches run unprofiled */
  char k0[] = "vcopy", k1[] = "!vcopy", *kernels[] = {k0, NULL}, *excl[] = {k1, NULL};
  opt.kernels = kernels;
  opt.n_kernels = 1;
  CHECK(decide(&job, &spec, 0, 99, got) == 0x15);
  opt.kernels = excl; /* -k '!vcopy' */
  CHECK(decide(&job, &spec, 0, 99, got) == 0x2a);
  opt.kernels = kernels;
  /* --instance 1: the second vcopy only */
  char inst[] = "1";
  opt.instance = inst;
  CHECK(decide(&job, &spec, 0, 99, got) == 0x04);
  opt.instance = NULL;
  opt.n_kernels = 0;
  /* -d 2:5 and -g 0 (launch 4 runs on GPU 1) */
  char disp[] = "2:5", gpu[] = "0";
  opt.dispatch = disp;
  opt.gpu = gpu;
  CHECK(decide(&job, &spec, 1, 99, got) == 0x08 + 0x04);
  opt.dispatch = NULL;
  opt.gpu = NULL;
  /* -r solve: launches inside the NVTX range from launch 3 on */
  char r0[] = "solve", *regions[] = {r0, NULL};
  opt.regions = regions;
  opt.n_regions = 1;
  CHECK(decide(&job, &spec, 0, 3, got) == 0x38);
  opt.n_regions = 0;
  /* instance cycling: successive vcopy launches get successive sets */
  spec.mode = LM_REPLAY_INSTANCE;
  opt.kernels = kernels;
  opt.n_kernels = 1;
  CHECK(decide(&job, &spec, 0, 99, got) == 0x15);
  CHECK(got[0] == 0 && got[2] == 1 && got[4] == 0);
}

/* Write one process's records file as the tool writes it. */
static int write_records(const char *prefix, long pid, const char *body) {
  char path[512];
  snprintf(path, sizeof path, "%s.%ld", prefix, pid);
  FILE *f = fopen(path, "w");
  if (!f) return -1;
  fprintf(f, "lumen-records 1\nP\t%ld\tnode7\t-1\t-1\t-1\t-\n%s", pid, body);
  return fclose(f);
}

static void test_sysinfo_from_records(void) {
  char *dir = scratch_dir(), path[256], prefix[256];
  if (!dir) return;
  snprintf(path, sizeof path, "%s/lumen.db", dir);
  lm_sql *db = NULL;
  lm_diag d;
  int64_t wid = 0;
  CHECK(lm_db_open(path, LM_DB_CREATE, &db, &d) == LM_OK);
  CHECK(lm_db_create_workload(db, "nv", NULL, "lumen", "cupti: test", "sm_90", "", 0, 0, &wid, &d) == LM_OK);
  /* A run whose tool reported nothing: no system information yet. */
  lm_run_spec spec;
  memset(&spec, 0, sizeof spec);
  spec.id = 1;
  spec.mode = LM_REPLAY_APP;
  spec.n_sets = 1;
  snprintf(prefix, sizeof prefix, "%s/run_1.records", dir);
  CHECK(write_records(prefix, 100, "END\n") == 0);
  lm_run_outcome how = {0, 0, 0, 0};
  long n = 0;
  int tool_ok = 0;
  char why[512];
  CHECK(lm_collect_run_begin(db, wid, &spec, &d) == LM_OK);
  CHECK(lm_collect_run_end(db, wid, &spec, prefix, "ok", &how, &n, &tool_ok, why, sizeof why, &d) == LM_OK);
  lm_workload *w = NULL;
  CHECK(lm_collect_device_sysinfo(db, wid, &w, &d) == LM_EDATA && w == NULL);
  CHECK(d.field[0] && strcmp(d.field, "gpu_arch") == 0);
  /* Two processes report; the first process's view is taken whole. */
  spec.id = 2;
  snprintf(prefix, sizeof prefix, "%s/run_2.records", dir);
  CHECK(write_records(prefix, 200, "A\tsm_90\nS\tgpu_model\tNVIDIA H100 80GB HBM3\nS\tgpu_arch\tsm_90\n"
                                   "S\tgpu_chip\tGH100\nS\twave_size\t32\nS\tcu_per_gpu\t132\n"
                                   "S\tmax_sclk\t1980\nS\tworkload_name\tspoof\nEND\n") == 0);
  CHECK(write_records(prefix, 300, "A\tsm_80\nS\tgpu_arch\tsm_80\nS\tcu_per_gpu\t108\nEND\n") == 0);
  CHECK(lm_collect_run_begin(db, wid, &spec, &d) == LM_OK);
  CHECK(lm_collect_run_end(db, wid, &spec, prefix, "ok", &how, &n, &tool_ok, why, sizeof why, &d) == LM_OK);
  CHECK(lm_collect_device_sysinfo(db, wid, &w, &d) == LM_OK && w != NULL);
  if (w) {
    CHECK_STR(w->arch, "sm_90");
    CHECK_STR(lm_sysinfo_text(&w->sysinfo, "gpu_model"), "NVIDIA H100 80GB HBM3");
    CHECK_STR(lm_sysinfo_text(&w->sysinfo, "gpu_chip"), "GH100");
    CHECK_STR(lm_sysinfo_text(&w->sysinfo, "hostname"), "node7");
    long ci = lm_sysinfo_find(&w->sysinfo, "cu_per_gpu");
    CHECK(ci >= 0 && w->sysinfo.values[ci] == 132);
    long si = lm_sysinfo_find(&w->sysinfo, "max_sclk");
    CHECK(si >= 0 && w->sysinfo.values[si] == 1980);
    /* the fields composition fills lead, and a reported one never replaces them */
    CHECK_STR(w->sysinfo.names[0], "workload_name");
    CHECK_STR(lm_sysinfo_text(&w->sysinfo, "workload_name"), "");
    CHECK(lm_sysinfo_find(&w->sysinfo, "command") >= 0 && lm_sysinfo_find(&w->sysinfo, "timestamp") >= 0);
  }
  lm_workload_free(w);
  /* Clock samples that are not numbers: one without a time is left out
   * (with a warning), a clock that is not a number is stored as not
   * given; the run's other records are kept. */
  spec.id = 3;
  snprintf(prefix, sizeof prefix, "%s/run_3.records", dir);
  CHECK(write_records(prefix, 400, "A\tsm_90\nC\t0\tnan\t1500\t1200\nC\t0\t1000\tnan\t-\n"
                                   "C\t0\t2000\t1500\t1200\nC\t0\tinf\t1\t1\nEND\n") == 0);
  CHECK(lm_collect_run_begin(db, wid, &spec, &d) == LM_OK);
  tool_ok = 0;
  CHECK(lm_collect_run_end(db, wid, &spec, prefix, "ok", &how, &n, &tool_ok, why, sizeof why, &d) == LM_OK);
  CHECK(tool_ok == 1);
  lm_stmt *q = NULL;
  CHECK(lm_sql_prepare(db, "SELECT group_concat(t_ns || ':' || IFNULL(sclk_mhz, '-') || ':' || IFNULL(mclk_mhz, '-'), ' ') "
                       "FROM (SELECT * FROM clock_sample WHERE run_id = 3 ORDER BY t_ns)", &q, &d) == LM_OK);
  CHECK(q && lm_stmt_step(q) == 1);
  CHECK_STR(q ? lm_stmt_text(q, 0) : NULL, "1000.0:-:- 2000.0:1500.0:1200.0");
  lm_stmt_free(q);
  q = NULL;
  CHECK(lm_sql_prepare(db, "SELECT COUNT(*) FROM log WHERE message LIKE '%2 clock samples without a time left out "
                       "(first at line 4 %'", &q, &d) == LM_OK);
  CHECK(q && lm_stmt_step(q) == 1 && lm_stmt_int64(q, 0) == 1);
  lm_stmt_free(q);
  lm_db_close(db);
  char cmd[300];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  CHECK(system(cmd) == 0);
}

static int take_split_set(const char *key, const char *value, void *user) {
  lm_buf *b = user;
  if (strncmp(key, "split", 5) == 0) lm_buf_printf(b, "%s%s=%s", b->len ? " " : "", key, value);
  return 0;
}

/* --split ranks: rank 1 of 2 keeps sets 1 and 3 of five, renumbered. */
static void test_split_plan(void) {
  char *dir = scratch_dir(), path[256];
  if (!dir) return;
  snprintf(path, sizeof path, "%s/lumen.db", dir);
  lm_sql *db = NULL;
  lm_diag d;
  int64_t wid = 0;
  CHECK(lm_db_open(path, LM_DB_CREATE, &db, &d) == LM_OK);
  CHECK(lm_db_create_workload(db, "s", NULL, "lumen", "test", "gfx90a", "", 0, 0, &wid, &d) == LM_OK);
  static const char *const names[] = {"SQ_WAVES", "TCC_HIT", "TA_BUSY", "TCP_HIT", "SQ_INSTS"};
  lm_plan_set sets[5];
  lm_plan_counter counters[5];
  memset(sets, 0, sizeof sets);
  memset(counters, 0, sizeof counters);
  for (int g = 0; g < 5; g++) {
    sets[g].first = g;
    sets[g].n = 1;
    sets[g].passes = 1;
    counters[g].name = names[g];
    counters[g].block = "SQ";
    counters[g].why = "test";
    counters[g].set = g;
  }
  lm_plan plan;
  memset(&plan, 0, sizeof plan);
  plan.arch = "gfx90a";
  plan.n_sets = 5;
  plan.sets = sets;
  plan.n_counters = 5;
  plan.counters = counters;
  CHECK(lm_collect_store_plan(db, wid, &plan, &d) == LM_OK);
  CHECK(lm_collect_split_plan(db, wid, 2, 2, &d) == LM_EINVAL); /* not a rank of 2 */
  CHECK(lm_collect_split_plan(db, wid, 1, 2, &d) == LM_OK);
  lm_set_info *mine = NULL;
  int n = 0;
  CHECK(lm_collect_load_plan(db, wid, &mine, &n, &d) == LM_OK);
  CHECK(n == 2);
  if (n == 2) {
    CHECK_STR(mine[0].counters[0], "TCC_HIT");
    CHECK_STR(mine[1].counters[0], "TCP_HIT");
  }
  lm_collect_sets_fini(mine, n);
  lm_buf opts = {0};
  CHECK(lm_db_each_option(db, wid, take_split_set, &opts, &d) == LM_OK);
  CHECK_STR(lm_buf_cstr(&opts), "split=ranks split_ranks=2 split_set=1 split_set=3 split_sets_total=5");
  lm_buf_fini(&opts);
  lm_db_close(db);
  char cmd[300];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  CHECK(system(cmd) == 0);
}

static void test_device_checks(void) {
  lm_collector c;
  lm_diag d;
  lm_cuda_device h100 = {9, 0, 132, "NVIDIA H100 80GB HBM3"};
  memset(&c, 0, sizeof c);
  CHECK(lm_collect_cupti_check(&c, &h100, "RmProfilingAdminOnly: 0\n", 0, 1, NULL, &d) == LM_OK);
  CHECK_STR(c.arch, "sm_90");
  CHECK_STR(c.chip, "GH100");
  CHECK_STR(c.model, "NVIDIA H100 80GB HBM3");
  CHECK(strstr(c.origin, "GH100") != NULL);
  lm_cuda_device b200 = {10, 0, 148, "NVIDIA B200"}, a100 = {8, 0, 108, "NVIDIA A100-SXM4-80GB"};
  CHECK(lm_collect_cupti_check(&c, &b200, NULL, 0, 1, NULL, &d) == LM_OK);
  CHECK_STR(c.arch, "sm_100");
  CHECK_STR(c.chip, "GB100");
  CHECK(lm_collect_cupti_check(&c, &a100, NULL, 0, 1, NULL, &d) == LM_OK);
  CHECK_STR(c.chip, "GA100");
  /* the older and consumer architectures: compute capability to folder and chip */
  lm_cuda_device v100 = {7, 0, 80, "Tesla V100-SXM2-16GB"}, t4 = {7, 5, 40, "Tesla T4"};
  lm_cuda_device rtx = {8, 6, 82, "NVIDIA GeForce RTX 3090"}, l4 = {8, 9, 58, "NVIDIA L4"};
  CHECK(lm_collect_cupti_check(&c, &v100, NULL, 0, 1, NULL, &d) == LM_OK);
  CHECK_STR(c.arch, "sm_70");
  CHECK_STR(c.chip, "GV100");
  CHECK(lm_collect_cupti_check(&c, &t4, NULL, 0, 1, NULL, &d) == LM_OK);
  CHECK_STR(c.arch, "sm_75");
  CHECK_STR(c.chip, "TU104");
  CHECK(lm_collect_cupti_check(&c, &rtx, NULL, 0, 1, NULL, &d) == LM_OK);
  CHECK_STR(c.arch, "sm_86");
  CHECK_STR(c.chip, "GA102");
  CHECK(lm_collect_cupti_check(&c, &l4, NULL, 0, 1, NULL, &d) == LM_OK);
  CHECK_STR(c.arch, "sm_89");
  CHECK_STR(c.chip, "AD102");
  /* a GPU lumen has no definitions for */
  lm_cuda_device rtx50 = {12, 0, 170, "NVIDIA GeForce RTX 5090"};
  CHECK(lm_collect_cupti_check(&c, &rtx50, NULL, 0, 1, NULL, &d) == LM_EINVAL);
  CHECK(strstr(d.message, "unsupported NVIDIA GPU: NVIDIA GeForce RTX 5090 is compute capability 12.0") != NULL);
  CHECK(strstr(d.message, "GV100 (sm_70), TU104 (sm_75), GA100 (sm_80), GA102 (sm_86), AD102 (sm_89), "
                          "GH100 (sm_90), GB100 (sm_100)") != NULL);
  /* a chip this CUPTI does not know */
  CHECK(lm_collect_cupti_check(&c, &h100, NULL, 0, 0, NULL, &d) == LM_EINVAL);
  CHECK(strstr(d.message, "unsupported chip: this CUPTI does not know GH100") != NULL);
  CHECK(strstr(d.message, "NVIDIA H100 80GB HBM3") != NULL && strstr(d.message, "lumen has definitions for GV100") != NULL);
  /* no CUPTI at all */
  CHECK(lm_collect_cupti_check(&c, &h100, NULL, 0, -1, "libcupti.so not found", &d) == LM_ENOTFOUND);
  CHECK(strstr(d.message, "libcupti.so not found") != NULL);
  /* counters for administrators only: named, with the fix; root may */
  const char *restricted = "EnableMSI: 1\nRmProfilingAdminOnly: 1\nNvLinkDisable: 0\n";
  CHECK(lm_collect_cupti_check(&c, &h100, restricted, 0, 1, NULL, &d) == LM_EINVAL);
  CHECK(strstr(d.message, "CUPTI_ERROR_INSUFFICIENT_PRIVILEGES") != NULL);
  CHECK(strstr(d.message, "NVreg_RestrictProfilingToAdminUsers=0") != NULL);
  CHECK(strstr(d.message, "root") != NULL && strchr(d.message, '\n') == NULL);
  CHECK(strstr(d.message, "CAP_SYS_ADMIN") != NULL && strstr(d.message, "/etc/modprobe.d") != NULL);
  CHECK(lm_collect_cupti_check(&c, &h100, restricted, 1, 1, NULL, &d) == LM_OK);
  CHECK(lm_cuda_admin_only(restricted) == 1);
  CHECK(lm_cuda_admin_only("RmProfilingAdminOnly: 0") == 0);
  CHECK(lm_cuda_admin_only("EnableMSI: 1\n") == -1);
  CHECK(lm_cuda_admin_only(NULL) == -1);
}

static void test_cupti_env(void) {
  lm_collector c;
  memset(&c, 0, sizeof c);
  lm_collect_cupti_env(&c, "/opt/lumen/lib/liblumen_tool.so", "/usr/local/cuda/lib64/libcupti.so.13", NULL);
  CHECK(c.n_env == 3);
  CHECK_STR(c.env[0], "CUDA_INJECTION64_PATH=/opt/lumen/lib/liblumen_tool.so");
  CHECK_STR(c.env[1], "LUMEN_CUPTI_LIBRARY=/usr/local/cuda/lib64/libcupti.so.13");
  CHECK_STR(c.env[2], "NVTX_INJECTION64_PATH=/usr/local/cuda/lib64/libcupti.so.13");
  /* the user's own NVTX injection is left alone */
  lm_collect_cupti_env(&c, "/t.so", "/c.so", "/their/nvtx.so");
  CHECK(c.n_env == 2);
  /* CUPTI's path unknown: the tool finds it itself */
  lm_collect_cupti_env(&c, "/t.so", "", NULL);
  CHECK(c.n_env == 1);
}

static void test_backend_names(void) {
  lm_collector c;
  lm_diag d;
  CHECK(lm_collect_open_backend(&c, "nvml", "/t.so", &d) == LM_EINVAL);
  CHECK(strstr(d.message, "nvml is a telemetry backend, not a counter backend") != NULL);
  CHECK(lm_collect_open_backend(&c, "papi", "/t.so", &d) == LM_EINVAL);
  CHECK(strstr(d.message, "no counter backend named 'papi'") != NULL);
  /* Without an NVIDIA driver, --backend cupti says so and what to do. */
  char why[256];
  if (lm_cuda_driver_probe(why, sizeof why) < 0) {
    CHECK(lm_collect_open_backend(&c, "cupti", "/t.so", &d) == LM_ENOTFOUND);
    if (lm_cupti_host_built()) {
      CHECK(strstr(d.message, "no NVIDIA GPU to profile") != NULL);
      CHECK(strstr(d.message, "install the NVIDIA driver") != NULL);
    } else {
      CHECK(strstr(d.message, "built without the CUDA toolkit") != NULL);
    }
  }
}

static int exists(const char *path) { return access(path, F_OK) == 0; }

static void touch(const char *path) {
  FILE *f = fopen(path, "w");
  if (f) fclose(f);
}

/* What a profile that keeps nothing removes: its database and the folders
 * it created, nothing that was there before or that holds anything else. */
static void test_discard(void) {
  char *top = scratch_dir(), dir[256], made[256], path[512];
  CHECK(top != NULL);
  if (!top) return;
  lm_diag d;
  /* Three folders made: all go. */
  snprintf(dir, sizeof dir, "%s/a/b/c", top);
  lm_collect_first_missing(dir, made, sizeof made);
  snprintf(path, sizeof path, "%s/a", top);
  CHECK_STR(made, path);
  CHECK(lm_make_dirs(dir, "test", NULL, &d) == LM_OK);
  snprintf(path, sizeof path, "%s/lumen.db", dir);
  touch(path);
  snprintf(path, sizeof path, "%s/lumen.db-journal", dir);
  touch(path);
  lm_collect_discard(dir, made);
  snprintf(path, sizeof path, "%s/a", top);
  CHECK(!exists(path) && exists(top));
  /* A folder that was there, empty, stays empty (a trailing '/' too). */
  snprintf(dir, sizeof dir, "%s/e/", top);
  CHECK(lm_make_dirs(dir, "test", NULL, &d) == LM_OK);
  lm_collect_first_missing(dir, made, sizeof made);
  CHECK_STR(made, "");
  snprintf(path, sizeof path, "%slumen.db", dir);
  touch(path);
  lm_collect_discard(dir, made);
  CHECK(!exists(path) && exists(dir));
  CHECK(rmdir(dir) == 0);
  /* A made folder that holds something else stays, with it. */
  snprintf(dir, sizeof dir, "%s/x/y/", top);
  lm_collect_first_missing(dir, made, sizeof made);
  CHECK(lm_make_dirs(dir, "test", NULL, &d) == LM_OK);
  snprintf(path, sizeof path, "%s/x/other", top);
  touch(path);
  snprintf(path, sizeof path, "%slumen.db", dir);
  touch(path);
  lm_collect_discard(dir, made);
  CHECK(!exists(dir));
  snprintf(path, sizeof path, "%s/x/other", top);
  CHECK(exists(path));
  unlink(path);
  snprintf(path, sizeof path, "%s/x", top);
  CHECK(rmdir(path) == 0);
  CHECK(rmdir(top) == 0);
}

int main(void) {
  test_run_plan();
  test_tool_config();
  test_filters();
  test_sysinfo_from_records();
  test_split_plan();
  test_device_checks();
  test_cupti_env();
  test_backend_names();
  test_discard();
  return check_report("test_collect");
}
