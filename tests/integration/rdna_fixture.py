#!/usr/bin/env python3
"""rdna_fixture.py - a rocprofv3 counter collection of one AMD Radeon
architecture (gfx1100 ... gfx1201, the gfx1150 and gfx1151 APUs), as
rocprofv3 writes it with --pmc:
OUT/host/7/7_counter_collection.csv (long form, one row per counter and
dispatch) and 7_agent_info.csv with the agent's properties, and the
expected values of the speed-of-light, instruction-mix and GL2 rows,
computed here from the counters.

Usage: rdna_fixture.py ARCH OUT [VGPR=N] [COUNTER=VALUE ...]
(prints NAME=VALUE lines). COUNTER=VALUE sets a counter of the first
dispatch (the second has twice each count); VGPR=N the registers per lane.
The default kernel fires no rule.

rdna_recording.py imports AGENTS, rdna_names, write_collection and
write_agent_info to write a longer run in the same form.
"""
import csv
import os
import sys

# Agent properties of the typical product (CUs, clock, name, shader engines).
AGENTS = {"gfx1100": (96, 2500, "AMD Radeon RX 7900 XTX", 6), "gfx1101": (60, 2430, "AMD Radeon RX 7800 XT", 3),
          "gfx1102": (32, 2655, "AMD Radeon RX 7600", 2), "gfx1200": (32, 3130, "AMD Radeon RX 9060 XT", 2),
          "gfx1201": (64, 2970, "AMD Radeon RX 9070 XT", 4), "gfx1150": (16, 2900, "AMD Radeon 890M Graphics", 1),
          "gfx1151": (40, 2900, "AMD Radeon 8060S Graphics", 2)}
COLLECTION_HEADER = ["Correlation_Id", "Dispatch_Id", "Agent_Id", "Queue_Id", "Process_Id", "Thread_Id", "Grid_Size",
                     "Kernel_Id", "Kernel_Name", "Workgroup_Size", "LDS_Block_Size", "Scratch_Size", "VGPR_Count",
                     "Accum_VGPR_Count", "SGPR_Count", "Counter_Name", "Counter_Value", "Start_Timestamp",
                     "End_Timestamp"]
AGENT_HEADER = ["Node_Id", "Logical_Node_Id", "Agent_Type", "Cpu_Cores_Count", "Simd_Count", "Max_Waves_Per_Simd",
                "Wave_Front_Size", "Num_Xcc", "Cu_Count", "Array_Count", "Simd_Arrays_Per_Engine", "Simd_Per_Cu",
                "Max_Waves_Per_Cu", "Max_Engine_Clk_Fcompute", "Workgroup_Max_Size", "Name", "Product_Name"]


def rdna_names(arch):
    """The names rocprofiler-sdk gives the GL2 memory requests and write
    stalls on this architecture (gfx11: MC; gfx12: EA)."""
    if arch.startswith("gfx11"):
        return "GL2C_MC_RDREQ", "GL2C_MC_WRREQ", "GL2C_MC_WRREQ_STALL"
    return "GL2C_EA_RDREQ", "GL2C_EA_WRREQ", "GL2C_EA_WRREQ_STALL"


def write_collection(d, pid, dispatches):
    """PID_counter_collection.csv in folder d: one row per counter of each
    dispatch, a dispatch being a dict with id, kernel_id, kernel, grid,
    workgroup, lds, vgpr, sgpr, start, end and counters (name -> value)."""
    with open(os.path.join(d, f"{pid}_counter_collection.csv"), "w", newline="") as f:
        w = csv.writer(f, quoting=csv.QUOTE_NONNUMERIC)
        w.writerow(COLLECTION_HEADER)
        for x in dispatches:
            c = x["counters"]
            for name in sorted(c):
                w.writerow([x["id"], x["id"], "Agent 1", 1, pid, pid, x["grid"], x["kernel_id"], x["kernel"],
                            x["workgroup"], x["lds"], 0, x["vgpr"], 0, x["sgpr"], name, float(c[name]),
                            x["start"], x["end"]])


def write_agent_info(d, pid, arch, extra=None):
    """PID_agent_info.csv in folder d: a CPU agent and the GPU agent of
    arch's typical product; extra adds columns rocprofv3 also writes
    (name -> (CPU value, GPU value))."""
    cus, sclk, product, ses = AGENTS[arch]
    extra = extra or {}
    with open(os.path.join(d, f"{pid}_agent_info.csv"), "w", newline="") as f:
        w = csv.writer(f, quoting=csv.QUOTE_NONNUMERIC)
        w.writerow(AGENT_HEADER + list(extra))
        w.writerow([0, 0, "CPU", 16, 0, 0, 0, 0, 0, 0, 0, 0, 0, 4700, 0, "AMD Ryzen 9 7950X", "AMD Ryzen 9 7950X"] +
                   [v[0] for v in extra.values()])
        w.writerow([1, 1, "GPU", 0, cus * 2, 16, 32, 1, cus, ses * 2, 2, 2, 32, sclk, 1024, arch, product] +
                   [v[1] for v in extra.values()])


def main():
    arch, out = sys.argv[1], sys.argv[2]
    settings = dict(a.split("=", 1) for a in sys.argv[3:])
    vgpr = int(settings.pop("VGPR", 96))
    gfx11 = arch.startswith("gfx11")
    # RDNA 3.5 APUs: gfx11 counters less the TA wavefront and VMEM-cycle
    # ones, plus GL0, GL1, scalar-cache and TD counters.
    gfx115 = arch.startswith("gfx115")
    cus, sclk, product, ses = AGENTS[arch]

    # Two dispatches of one kernel, counters chosen by hand.
    rd, wr, stall = rdna_names(arch)
    dispatches = []
    for k in (1, 2):
        c = {"GRBM_COUNT": 110000 * k, "GRBM_GUI_ACTIVE": 100000 * k, "SQ_WAVES": 4096 * k,
             "SQ_INSTS_VALU": 80000 * k * cus, "SQ_INSTS_SALU": 200000 * k, "SQ_INSTS_SMEM": 30000 * k,
             "SQ_INSTS_LDS": 120000 * k, "SQ_INSTS_FLAT": 5000 * k, "SQ_INSTS_TEX_LOAD": 60000 * k,
             "SQ_INSTS_TEX_STORE": 20000 * k, "SQ_WAVE_CYCLES": 1200000 * k * cus // 8,
             "SQ_BUSY_CYCLES": 90000 * k * ses, "SQ_WAIT_ANY": 500000 * k, "SQ_WAIT_INST_ANY": 100000 * k,
             "SQ_WAVE32_INSTS": 900000 * k, "SQ_WAVE64_INSTS": 300000 * k,
             "SQ_INSTS_WAVE32_VALU": 700000 * k, "SQ_INSTS_WAVE32_LDS": 100000 * k, "SQ_INSTS_WAVE32": 950000 * k,
             "SQ_INST_CYCLES_VMEM": 40000 * k, "SQC_LDS_BANK_CONFLICT": 3000 * k, "SQC_LDS_IDX_ACTIVE": 60000 * k,
             "TA_TA_BUSY": 30000 * k * cus, "TA_BUFFER_LOAD_WAVEFRONTS": 50000 * k,
             "TA_BUFFER_STORE_WAVEFRONTS": 15000 * k,
             "GL2C_HIT": 300000 * k, "GL2C_MISS": 100000 * k, rd: 90000 * k, wr: 40000 * k,
             "GL2C_EA_RDREQ_32B": 10000 * k, "GL2C_EA_RDREQ_64B": 20000 * k, "GL2C_EA_RDREQ_128B": 55000 * k,
             "GL2C_EA_WRREQ_64B": 30000 * k, stall: 2000 * k}
        if gfx11:
            c.update({"GL2C_EA_RDREQ_96B": 5000 * k, "SQ_INSTS_GDS": 0, "SQ_WAIT_INST_LDS": 8000 * k})
        if gfx115:
            for n in ("SQ_INST_CYCLES_VMEM", "TA_BUFFER_LOAD_WAVEFRONTS", "TA_BUFFER_STORE_WAVEFRONTS"):
                del c[n]
            # A quarter of the reads: 57 GB/s, within the shared memory's peak.
            for n in ("GL2C_EA_RDREQ_32B", "GL2C_EA_RDREQ_64B", "GL2C_EA_RDREQ_96B", "GL2C_EA_RDREQ_128B", rd):
                c[n] //= 4
            c.update({"TCP_REQ": 400000 * k, "TCP_REQ_MISS": 100000 * k, "GL1C_REQ": 150000 * k,
                      "GL1C_REQ_MISS": 60000 * k, "SQC_DCACHE_HITS": 27000 * k, "SQC_DCACHE_MISSES": 3000 * k,
                      "SQC_ICACHE_HITS": 49000 * k, "SQC_ICACHE_MISSES": 1000 * k, "SQ_INSTS_VALU_DP": 1000 * k,
                      "SQ_INSTS_VALU_TRANS": 4000 * k, "SQ_INSTS_DUAL_VALU_WAVE32": 20000 * k,
                      "TA_BUFFER_TOTAL_CYCLES": 70000 * k, "TA_FLAT_TOTAL_CYCLES": 10000 * k,
                      "TA_ADDR_STALLED_BY_TC_CYCLES": 6000 * k * cus, "TA_ADDR_STALLED_BY_TD_CYCLES": 1500 * k * cus,
                      "TD_TD_BUSY": 25000 * k * cus, "TD_TC_STALL": 5000 * k * cus})
        c.update({n: float(v) * k for n, v in settings.items()})
        start = 1000000000 + 100000 * k
        dispatches.append({"id": k, "kernel_id": 3, "kernel": "stencil_kernel(float*, int)", "grid": 1048576,
                           "workgroup": 256, "lds": 8192, "vgpr": vgpr, "sgpr": 48, "start": start,
                           "end": start + 40000 * k, "counters": c})

    d = os.path.join(out, "host", "7")
    os.makedirs(d, exist_ok=True)
    write_collection(d, 7, dispatches)
    write_agent_info(d, 7, arch)

    def mean(f):
        vals = [f(x["counters"], x["end"] - x["start"]) for x in dispatches]
        return sum(vals) / len(vals)

    def fetch(c):
        b = 32 * c["GL2C_EA_RDREQ_32B"] + 64 * c["GL2C_EA_RDREQ_64B"] + 128 * c["GL2C_EA_RDREQ_128B"]
        return b + (96 * c["GL2C_EA_RDREQ_96B"] if gfx11 else 0)

    expect = {
        "valu_rate": mean(lambda c, t: c["SQ_INSTS_VALU"] / (c["GRBM_GUI_ACTIVE"] * cus)),
        "occupancy": mean(lambda c, t: c["SQ_WAVE_CYCLES"] / (c["GRBM_GUI_ACTIVE"] * cus)),
        "l2_hit": mean(lambda c, t: 100 * c["GL2C_HIT"] / (c["GL2C_HIT"] + c["GL2C_MISS"])),
        "read_bw": mean(lambda c, t: fetch(c) / t),
        "write_bw": mean(lambda c, t: (32 * (c[wr] - c["GL2C_EA_WRREQ_64B"]) + 64 * c["GL2C_EA_WRREQ_64B"]) / t),
        "ta_busy": mean(lambda c, t: 100 * c["TA_TA_BUSY"] / (c["GRBM_GUI_ACTIVE"] * cus)),
        "valu_per_wave": mean(lambda c, t: c["SQ_INSTS_VALU"] / c["SQ_WAVES"]),
        "wave32_share": mean(lambda c, t: 100 * c["SQ_WAVE32_INSTS"] /
                             (c["SQ_WAVE32_INSTS"] + c["SQ_WAVE64_INSTS"])),
        "bank_conflict": mean(lambda c, t: 100 * c["SQC_LDS_BANK_CONFLICT"] / c["SQC_LDS_IDX_ACTIVE"]),
        "cus": cus,
    }
    if gfx115:
        # VGPR file and granule per LLVM (1.5x VGPRs on gfx1151 only); wave32.
        vfile, gran = (1536, 24) if arch == "gfx1151" else (1024, 16)
        alloc = -(-vgpr // gran) * gran
        expect.update({
            "l0_hit": mean(lambda c, t: 100 * (c["TCP_REQ"] - c["TCP_REQ_MISS"]) / c["TCP_REQ"]),
            "gl1_hit": mean(lambda c, t: 100 * (c["GL1C_REQ"] - c["GL1C_REQ_MISS"]) / c["GL1C_REQ"]),
            "sqc_hit": mean(lambda c, t: 100 * c["SQC_DCACHE_HITS"] / (c["SQC_DCACHE_HITS"] + c["SQC_DCACHE_MISSES"])),
            "td_busy": mean(lambda c, t: 100 * c["TD_TD_BUSY"] / (c["GRBM_GUI_ACTIVE"] * cus)),
            "tc_stall": mean(lambda c, t: 100 * c["TA_ADDR_STALLED_BY_TC_CYCLES"] / c["TA_TA_BUSY"]),
            "vgpr_waves": min(16, vfile // alloc),
            # The shared LPDDR5X bandwidth lumen assumes (GB/s).
            "mem_peak": {"gfx1150": 120, "gfx1151": 256}[arch],
        })
    for k, v in expect.items():
        print(f"{k}={v!r}")


if __name__ == "__main__":
    main()
