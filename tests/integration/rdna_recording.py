#!/usr/bin/env python3
"""rdna_recording.py - a recording for the simulated rocprofiler-sdk's RDNA
agent: a rocprofv3 counter collection of three kernels on one AMD Radeon
architecture (gfx1100 ... gfx1201), in rocprofv3's long form as
rdna_fixture.py writes it (OUT/host/PID/PID_counter_collection.csv, one row
per counter and dispatch, and PID_agent_info.csv, here with the agent's
Gfx_Target_Version, Lds_Size_In_Kb, Cu_Per_Simd_Array and Num_Shader_Banks
as rocprofv3 also writes them).

Every dispatch has its own values (seeded, so the same on every run): the
busy cycles and each per-wave rate vary around the kernel's, and the
counters keep the relations a GPU's have (hits and misses add up to the
lookups, the sized read requests to the reads, wave32 and wave64
instructions to all, GRBM_COUNT above GRBM_GUI_ACTIVE, the duration is the
busy cycles at the agent's clock).

Usage: rdna_recording.py ARCH OUT
Prints the launches that replay it, NAME:COUNT:GRID:WORKGROUP:LDS (the
dispatches of each kernel in order, as simapp takes them), one per line.
"""
import os
import random
import sys

from rdna_fixture import AGENTS, rdna_names, write_agent_info, write_collection

PID = 4242
# name, dispatches, grid, workgroup, LDS bytes, VGPRs, SGPRs, busy cycles,
# per-wave instructions (VALU, SALU, SMEM, LDS, FLAT, VMEM load, VMEM
# store), GL2 hit rate, waves per CU, TA busy share.
KERNELS = [
    ("stencil_kernel(float*, int)", 4, 1048576, 256, 8192, 96, 48, 120000,
     (220, 40, 6, 30, 1, 12, 4), 0.8, 10, 0.3),
    ("saxpy(float, float*, float*, int)", 3, 4194304, 256, 0, 16, 24, 300000,
     (12, 6, 2, 0, 0, 2, 1), 0.25, 14, 0.55),
    ("reduce_sum(double*, double*, int)", 2, 262144, 512, 4096, 40, 32, 40000,
     (60, 20, 3, 16, 0, 4, 0.05), 0.6, 6, 0.12),
]


def dispatch_counters(arch, rng, waves, cycles, rates, hit_rate, occupancy, ta_share):
    """One dispatch's counters: the kernel's figures, each varied."""
    cus = AGENTS[arch][0]
    gfx11 = arch.startswith("gfx11")
    rd, wr, stall = rdna_names(arch)

    def near(v, spread):
        return v * rng.uniform(1 - spread, 1 + spread)

    gui = round(near(cycles, 0.15))
    valu, salu, smem, lds, flat, load, store = (round(near(waves * r, 0.03)) for r in rates)
    insts = valu + salu + smem + lds + flat + load + store
    wave_cycles = round(near(occupancy, 0.1) * gui * cus)
    share32 = rng.uniform(0.9, 0.97)
    wave32 = round(insts * share32)
    lookups = (load + store) * 2
    hits = round(lookups * near(hit_rate, 0.05))
    misses = lookups - hits
    sized = {"GL2C_EA_RDREQ_32B": 0.1, "GL2C_EA_RDREQ_64B": 0.2}
    if gfx11:
        sized["GL2C_EA_RDREQ_96B"] = 0.05
    reads = round(misses * rng.uniform(0.7, 0.9))
    c = {n: round(reads * share) for n, share in sized.items()}
    c["GL2C_EA_RDREQ_128B"] = reads - sum(c.values())
    writes = round(near(store * 2, 0.1))
    idx_active = round(lds * rng.uniform(1.5, 2.5))
    c.update({
        "GRBM_GUI_ACTIVE": gui, "GRBM_COUNT": round(gui * rng.uniform(1.02, 1.10)), "SQ_WAVES": waves,
        "SQ_INSTS_VALU": valu, "SQ_INSTS_SALU": salu, "SQ_INSTS_SMEM": smem, "SQ_INSTS_LDS": lds,
        "SQ_INSTS_FLAT": flat, "SQ_INSTS_TEX_LOAD": load, "SQ_INSTS_TEX_STORE": store,
        "SQ_WAVE_CYCLES": wave_cycles, "SQ_BUSY_CYCLES": round(gui * cus * rng.uniform(0.85, 0.98)),
        "SQ_WAIT_ANY": round(wave_cycles * rng.uniform(0.2, 0.5)),
        "SQ_WAIT_INST_ANY": round(wave_cycles * rng.uniform(0.05, 0.15)),
        "SQ_WAVE32_INSTS": wave32, "SQ_WAVE64_INSTS": insts - wave32, "SQ_INSTS_WAVE32": wave32,
        "SQ_INSTS_WAVE32_VALU": round(valu * share32), "SQ_INSTS_WAVE32_LDS": round(lds * share32),
        "SQ_INST_CYCLES_VMEM": round((load + store) * rng.uniform(3, 5)),
        "SQC_LDS_IDX_ACTIVE": idx_active, "SQC_LDS_BANK_CONFLICT": round(idx_active * rng.uniform(0.01, 0.12)),
        "TA_TA_BUSY": round(gui * cus * near(ta_share, 0.1)), "TA_BUFFER_LOAD_WAVEFRONTS": load,
        "TA_BUFFER_STORE_WAVEFRONTS": store, "GL2C_HIT": hits, "GL2C_MISS": misses, rd: reads, wr: writes,
        "GL2C_EA_WRREQ_64B": round(writes * rng.uniform(0.5, 0.8)), stall: round(gui * rng.uniform(0.005, 0.05)),
    })
    if gfx11:
        c.update({"SQ_INSTS_GDS": 0, "SQ_WAIT_INST_LDS": round(lds * rng.uniform(2, 6))})
    return c


def main():
    arch, out = sys.argv[1], sys.argv[2]
    cus, sclk, _, ses = AGENTS[arch]
    dispatches = []
    t = 2000000000
    for kid, (name, count, grid, wg, lds, vgpr, sgpr, cycles, rates, hit, occ, ta) in enumerate(KERNELS, 1):
        for i in range(count):
            rng = random.Random(f"{arch}/{name}/{i}")
            c = dispatch_counters(arch, rng, grid // 32, cycles, rates, hit, occ, ta)
            duration = round(c["GRBM_GUI_ACTIVE"] * 1000 / sclk)
            dispatches.append({"id": len(dispatches) + 1, "kernel_id": kid, "kernel": name, "grid": grid,
                               "workgroup": wg, "lds": lds, "vgpr": vgpr, "sgpr": sgpr, "start": t,
                               "end": t + duration, "counters": c})
            t += duration + rng.randint(2000, 20000)
        print(f"{name}:{count}:{grid}:{wg}:{lds}")
    d = os.path.join(out, "host", str(PID))
    os.makedirs(d, exist_ok=True)
    write_collection(d, PID, dispatches)
    major, minor, step = int(arch[3:-2]), int(arch[-2], 16), int(arch[-1], 16)
    write_agent_info(d, PID, arch, {"Gfx_Target_Version": (0, major * 10000 + minor * 100 + step),
                                    "Lds_Size_In_Kb": (0, 64), "Cu_Per_Simd_Array": (0, cus // (ses * 2)),
                                    "Num_Shader_Banks": (0, ses)})


if __name__ == "__main__":
    main()
