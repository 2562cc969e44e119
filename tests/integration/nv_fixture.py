#!/usr/bin/env python3
"""Write a small NVIDIA workload in the folder layout lumen reads
(sysinfo.csv and pmc_perf.csv, with CUPTI metric names as counter
columns), for tests of the NVIDIA rules:

    nv_fixture.py ARCH_DIR OUT_DIR [COL=VALUE ...]

ARCH_DIR is a metrics/sm_* folder: its arch.yaml names the architecture
and the CUPTI metrics the panels read. The kernel is a healthy one: three
dispatches of 100 us, two full waves of 256-thread blocks at full
theoretical occupancy (as many blocks per SM as its warp limit allows),
memory and SM throughput at half their peaks, high
hit rates, coalesced accesses, no bank conflicts, no dominant stall; on it
no built-in NVIDIA rule fires. COL=VALUE sets one column (a counter or a
launch column such as Workgroup_Size) to a number in every dispatch.
NV_FIXTURE_POWER=W1,W2,... gives dispatch i the board power Wi (the
Measured_Power_W column a profile with NVML power samples has).
"""
import csv
import os
import sys

arch_dir, out = sys.argv[1], sys.argv[2]
arch, counters, reading = None, [], False
for line in open(os.path.join(arch_dir, "arch.yaml")):
    if line.startswith("arch:"):
        arch = line.split(":", 1)[1].strip()
    if line.startswith("counters:"):
        reading = True
        continue
    if reading:
        if line.startswith("  - "):
            counters.append(line[4:].strip())
        elif line.strip() and not line.startswith(" "):
            reading = False
# One product of each chip: V100 SXM2, T4, A100, A40, L4, H100 SXM, B200.
sms = {"sm_70": 80, "sm_75": 40, "sm_80": 108, "sm_86": 84, "sm_89": 58, "sm_90": 132, "sm_100": 148}[arch]
sclk = {"sm_70": 1530, "sm_75": 1590, "sm_80": 1410, "sm_86": 1740, "sm_89": 2040, "sm_90": 1980,
        "sm_100": 1965}[arch]
max_warps = None
for line in open(os.path.join(arch_dir, "quantities.yaml")):
    if line.strip() == "max_warps_per_sm:":
        max_warps = 0
    elif max_warps == 0 and line.strip().startswith("expr:"):
        max_warps = int(line.split(":", 1)[1])

per_sm = max_warps // 8  # blocks of 256 threads (8 warps) that fill an SM
blocks = sms * per_sm * 2  # two waves
row = {c: 1.0 for c in counters}
row.update({
    "Grid_Size": blocks * 256, "Workgroup_Size": 256, "LDS_Per_Workgroup": 0,
    "Scratch_Per_Workitem": 0, "Arch_VGPR": 32, "Accum_VGPR": 0, "SGPR": 0, "wave_size": 32,
    "gpu__time_duration.sum": 100000,
    "sm__throughput.avg.pct_of_peak_sustained_elapsed": 50,
    "gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed": 50,
    "gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed": 50,
    "lts__throughput.avg.pct_of_peak_sustained_elapsed": 40,
    "l1tex__throughput.avg.pct_of_peak_sustained_active": 40,
    "lts__t_sector_hit_rate.pct": 80,
    "l1tex__t_sector_hit_rate.pct": 50,
    "smsp__warps_launched.sum": blocks * 8,
    "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum": 1e6,
    "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum": 4e6,
    "l1tex__t_requests_pipe_lsu_mem_global_op_st.sum": 1e6,
    "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum": 4e6,
    "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum": 0,
    "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum": 0,
    "l1tex__data_pipe_lsu_wavefronts_mem_shared.sum": 1e5,
    "smsp__average_warp_latency_per_inst_issued.ratio": 10,
    "smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio": 2,
    "smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio": 1,
    "sm__warps_active.avg.pct_of_peak_sustained_active": 80,
})
for spec in sys.argv[3:]:
    col, expr = spec.split("=", 1)
    if col not in row:
        sys.exit(f"nv_fixture.py: no column {col}")
    row[col] = float(expr)

os.makedirs(out, exist_ok=True)
info = {"workload_name": os.path.basename(out), "command": "./app", "ip_blocks": "", "timestamp": "",
        "version": "", "hostname": "test", "gpu_model": "NVIDIA test GPU", "gpu_arch": arch,
        "gpu_chip": "", "gpu_l2": 51200, "cu_per_gpu": sms, "wave_size": 32, "workgroup_max_size": 1024,
        "max_sclk": sclk, "max_mclk": 2619, "gpu_memory": 81559}
with open(os.path.join(out, "sysinfo.csv"), "w", newline="") as f:
    w = csv.writer(f)
    w.writerow(info.keys())
    w.writerow(info.values())
power = [float(p) for p in os.environ.get("NV_FIXTURE_POWER", "").split(",") if p]
fixed = ["Dispatch_ID", "Kernel_Name", "GPU_ID", "Grid_Size", "Workgroup_Size", "LDS_Per_Workgroup",
         "Scratch_Per_Workitem", "Arch_VGPR", "Accum_VGPR", "SGPR", "wave_size"]
with open(os.path.join(out, "pmc_perf.csv"), "w", newline="") as f:
    w = csv.writer(f)
    w.writerow(fixed + counters + ["Start_Timestamp", "End_Timestamp"] + (["Measured_Power_W"] if power else []))
    for d in range(int(os.environ.get("NV_FIXTURE_DISPATCHES", "3"))):
        start = 1e9 + d * 1e6
        vals = [d, "stencil(float const*, float*, int)", 0] + [row[c] for c in fixed[3:]]
        w.writerow(vals + [row[c] for c in counters] + [start, start + row["gpu__time_duration.sum"]] +
                   ([power[d % len(power)]] if power else []))
