/* test_sim.c - the simulated GPU (a test device replaying a recorded
 * workload): this program is its own tool (it defines simgpu_tool_init).
 * Checks that a counter set over a block limit is refused with the reason,
 * SQC counters use the SQ budget, a dispatch returns exactly the columns
 * of its configuration with the recorded values, no configuration returns
 * nothing, kernels are announced before their dispatches, the instance
 * stride repeats recorded dispatches, registers come from the recording,
 * and ranges reach the tool. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "io/io.h"
#include "sim/simgpu_tool.h"

static const simgpu_runtime_api *api;
static int next_config;
static int symbols, markers;
static char last_columns[16384];
static double last_sq_waves;
static unsigned long long last_start;
static unsigned last_vgpr;

static void on_kernel(void *u, unsigned long long id, const char *name) {
  (void)u;
  (void)id;
  (void)name;
  symbols++;
}

static int on_dispatch(void *u, const simgpu_dispatch *d) {
  (void)u;
  (void)d;
  CHECK(symbols > 0);
  return next_config;
}

static void on_completed(void *u, const simgpu_dispatch *d, int config, unsigned long long start,
                         unsigned long long end, const simgpu_counter_value *v, int n) {
  (void)u;
  (void)config;
  (void)end;
  last_columns[0] = '\0';
  last_sq_waves = -1;
  last_start = start;
  last_vgpr = d->params.arch_vgprs;
  for (int i = 0; i < n; i++) {
    strncat(last_columns, v[i].column, sizeof last_columns - strlen(last_columns) - 2);
    strcat(last_columns, " ");
    if (strcmp(v[i].column, "SQ_WAVES") == 0) last_sq_waves = v[i].value;
  }
}

static void on_marker(void *u, int op, unsigned long tid, const char *msg, unsigned long long id) {
  (void)u;
  (void)tid;
  (void)msg;
  (void)id;
  if (op == SIMGPU_MARK_START || op == SIMGPU_MARK_STOP) markers++;
}

int simgpu_tool_init(const simgpu_runtime_api *a, simgpu_tool_hooks *hooks) {
  api = a;
  hooks->kernel_symbol = on_kernel;
  hooks->dispatch = on_dispatch;
  hooks->completed = on_completed;
  hooks->marker = on_marker;
  hooks->shutdown = NULL;
  return 0;
}

int main(void) {
  const char *shared = getenv("LUMEN_SHARED_DIR");
  char rec[4096];
  snprintf(rec, sizeof rec, "%s/workloads/vcopy/MI200", shared ? shared : "../shared");
  setenv("LUMEN_SIM_RECORDING", rec, 1);
  CHECK(simgpu_init() == 0);
  CHECK(api != NULL);
  if (!api) return check_report("test_sim");
  CHECK(strcmp(api->arch, "gfx90a") == 0);

  char why[512];
  const char *nine_sq[] = {"SQ_WAVES", "SQ_CYCLES", "SQ_BUSY_CYCLES", "SQ_WAVE_CYCLES", "SQ_INSTS_VALU",
                           "SQ_INSTS_SALU", "SQ_INSTS_SMEM", "SQ_INSTS_LDS", "SQ_INSTS_VMEM"};
  CHECK(api->create_config(nine_sq, 9, NULL, why, sizeof why) == 0);
  CHECK(strstr(why, "9 SQ counters") != NULL);
  const char *sq_sqc[] = {"SQ_WAVES", "SQ_CYCLES", "SQ_BUSY_CYCLES", "SQ_WAVE_CYCLES", "SQ_INSTS_VALU",
                          "SQ_INSTS_SALU", "SQ_INSTS_SMEM", "SQC_DCACHE_HITS", "SQC_DCACHE_MISSES"};
  CHECK(api->create_config(sq_sqc, 9, NULL, why, sizeof why) == 0); /* SQC uses SQ's budget */
  const char *three_ta[] = {"TA_TA_BUSY", "TA_BUFFER_WAVEFRONTS", "TA_FLAT_WAVEFRONTS"};
  CHECK(api->create_config(three_ta, 3, NULL, why, sizeof why) == 0);
  CHECK(strstr(why, "TA") != NULL);
  const char *set_a[] = {"SQ_WAVES", "TCC_HIT", "GRBM_GUI_ACTIVE"};
  int a = api->create_config(set_a, 3, NULL, why, sizeof why);
  CHECK(a > 0);
  const char *set_b[] = {"SQ_LEVEL_WAVES", "SQ_ACCUM_PREV_HIRES", "GRBM_GUI_ACTIVE"};
  int b = api->create_config(set_b, 3, "SQ_LEVEL_WAVES", why, sizeof why);
  CHECK(b > 0 && b != a);

  /* Recorded SQ_WAVES of dispatch 0 and 1. */
  lm_workload *w = NULL;
  lm_diag d;
  CHECK(lm_workload_read(rec, &w, &d) == LM_OK);
  double waves0 = w ? w->pmc->cols[lm_table_find(w->pmc, "SQ_WAVES")].values[0] : -2;
  double start1 = w ? w->pmc->cols[lm_table_find(w->pmc, "Start_Timestamp")].values[1] : -2;

  simgpu_launch_params p;
  memset(&p, 0, sizeof p);
  p.grid.x = 1048576;
  p.workgroup.x = 256;
  next_config = a;
  CHECK(simgpu_launch("vecCopy(double*, double*, double*, int, int)", &p, 2) == 0);
  CHECK(symbols == 1);
  CHECK(strstr(last_columns, "SQ_WAVES ") != NULL);
  CHECK(strstr(last_columns, "TCC_HIT[0] ") != NULL && strstr(last_columns, "TCC_HIT_sum ") != NULL);
  CHECK(strstr(last_columns, "SQ_CYCLES") == NULL); /* not in the configuration */
  CHECK(last_sq_waves == waves0);
  CHECK(last_vgpr == 8); /* from the recording: the program gave 0 */
  next_config = b;
  CHECK(simgpu_launch("vecCopy(double*, double*, double*, int, int)", &p, 2) == 0);
  CHECK(symbols == 1); /* announced once */
  CHECK(strstr(last_columns, "SQ_LEVEL_WAVES ") != NULL);
  CHECK(strstr(last_columns, "SQ_WAVES ") == NULL);
  CHECK((double)last_start == start1); /* the second instance replays dispatch 1 */
  next_config = 0;
  CHECK(simgpu_launch("vecCopy(double*, double*, double*, int, int)", &p, 2) == 0);
  CHECK(last_columns[0] == '\0');
  /* With a stride of 2, instances 3 and 4 both replay dispatch (4 / 2) % 3 = 2 ... */
  api->set_instance_stride(2);
  next_config = a;
  CHECK(simgpu_launch("vecCopy(double*, double*, double*, int, int)", &p, 2) == 0);
  unsigned long long s3 = last_start;
  CHECK(simgpu_launch("vecCopy(double*, double*, double*, int, int)", &p, 2) == 0);
  CHECK(last_start != s3); /* instance 3 -> row 1, instance 4 -> row 2 */
  CHECK(simgpu_launch("vecCopy(double*, double*, double*, int, int)", &p, 2) == 0);
  CHECK(last_start != s3);
  /* Clock readings are logged for the telemetry sampler. */
  simgpu_clock_sample cs[64];
  CHECK(api->clock_samples(0, cs, 64) >= 6);
  CHECK(cs[0].sclk_mhz == 1700);
  /* Ranges reach the tool. */
  unsigned long long r = simgpu_range_start("io");
  simgpu_range_stop(r);
  CHECK(markers == 2);
  lm_workload_free(w);
  return check_report("test_sim");
}
