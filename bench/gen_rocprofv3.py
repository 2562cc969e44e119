#!/usr/bin/env python3
"""Write a rocprofv3 counter collection CSV (one row per dispatch and counter,
quoted as rocprofv3 quotes it) of N dispatches of three kernels with twenty
counters each, for bench/formats.sh.
Usage: gen_rocprofv3.py N OUT.csv"""
import random
import sys

COUNTERS = ["SQ_WAVES", "SQ_INSTS_VALU", "SQ_INSTS_SALU", "SQ_INSTS_LDS", "SQ_INSTS_SMEM", "SQ_INSTS_VMEM_RD",
            "SQ_INSTS_VMEM_WR", "SQ_BUSY_CYCLES", "SQ_CYCLES", "SQ_WAIT_INST_ANY", "GRBM_GUI_ACTIVE", "GRBM_COUNT",
            "TCC_HIT", "TCC_MISS", "TCC_REQ", "TCP_TOTAL_CACHE_ACCESSES", "TA_BUSY_max", "SQ_ACTIVE_INST_VALU",
            "SQ_INSTS_MFMA", "SQ_LDS_BANK_CONFLICT"]
KERNELS = ['"gemm_kernel(float const*, float*, int)"', '"reduce_kernel<256>(double*, int)"',
           '"__amd_rocclr_copyBuffer"']
HEADER = ('"Correlation_Id","Dispatch_Id","Agent_Id","Queue_Id","Process_Id","Thread_Id","Grid_Size","Kernel_Id",'
          '"Kernel_Name","Workgroup_Size","LDS_Block_Size","Scratch_Size","VGPR_Count","Accum_VGPR_Count",'
          '"SGPR_Count","Counter_Name","Counter_Value","Start_Timestamp","End_Timestamp"\n')


def main():
    n, out = int(sys.argv[1]), sys.argv[2]
    rnd = random.Random(1)
    t = 2005606659752888
    with open(out, "w", buffering=1 << 22) as f:
        f.write(HEADER)
        for d in range(1, n + 1):
            k = d % 3
            dur = 1000 + rnd.randrange(100000)
            head = f'{d},{d},"Agent 2",1,179777,179777,{16384 << k},{11 + k},{KERNELS[k]},256,0,0,28,0,32,'
            tail = f',{t},{t + dur}\n'
            f.write("".join(f'{head}"{c}",{rnd.randrange(1 << 30)}.000000{tail}' for c in COUNTERS))
            t += dur + 500


if __name__ == "__main__":
    main()
