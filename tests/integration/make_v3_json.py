#!/usr/bin/env python3
"""Write rocprofv3's JSON output (--output-format json: <pid>_results.json)
holding the run of a rocprofv3 counter collection CSV file, laid out as
rocprofiler-sdk's tool writes it: one object per process under
"rocprofiler-sdk-tool", with agents, counters (id -> name), kernel symbols
indexed by kernel id, the counter collection (one entry per dispatch, one
record per counter instance) and the kernel trace (buffer_records).
The counter named by --split is written as four instances, which a reader
must sum, as the CSV output does. Agents come from an agent_info.csv
(--agents) or, without one, a CPU and a GPU named ARCH with nothing else
known. A kernel's group segment is written 100 bytes under the CSV's
LDS_Block_Size, which rounds it up to 512-byte granules.
Usage: make_v3_json.py COUNTERS.csv OUT.json ARCH [--agents AGENT_INFO.csv] [--split COUNTER]"""
import argparse
import csv
import json

AGENT_FIELDS = {  # agent_info.csv column -> the agent's JSON key
    "Cpu_Cores_Count": "cpu_cores_count", "Simd_Count": "simd_count", "Max_Waves_Per_Simd": "max_waves_per_simd",
    "Wave_Front_Size": "wave_front_size", "Num_Xcc": "num_xcc", "Cu_Count": "cu_count",
    "Array_Count": "array_count", "Simd_Arrays_Per_Engine": "simd_arrays_per_engine", "Simd_Per_Cu": "simd_per_cu",
    "Max_Waves_Per_Cu": "max_waves_per_cu", "Max_Engine_Clk_Fcompute": "max_engine_clk_fcompute",
    "Workgroup_Max_Size": "workgroup_max_size", "Logical_Node_Id": "logical_node_id"}


def agent(node, kind, name, product, extra):
    a = {"size": 1192, "id": {"handle": 0x5600_0000 + 0x100 * node}, "type": kind, "cpu_cores_count": 0,
         "simd_count": 0, "mem_banks_count": 1, "caches_count": 3, "io_links_count": 1, "cpu_core_id_base": 0,
         "simd_id_base": 0, "max_waves_per_simd": 0, "lds_size_in_kb": 0, "gds_size_in_kb": 0, "num_gws": 0,
         "wave_front_size": 0, "num_xcc": 0, "cu_count": 0, "array_count": 0, "num_shader_banks": 0,
         "simd_arrays_per_engine": 0, "cu_per_simd_array": 0, "simd_per_cu": 0, "max_slots_scratch_cu": 0,
         "gfx_target_version": 0, "vendor_id": 4098, "device_id": 0, "location_id": 0, "domain": 0,
         "drm_render_minor": 128, "num_sdma_engines": 0, "num_sdma_xgmi_engines": 0,
         "num_sdma_queues_per_engine": 0, "num_cp_queues": 0, "max_engine_clk_ccompute": 0,
         "max_engine_clk_fcompute": 0, "sdma_fw_version": {}, "fw_version": {}, "capability": {},
         "cu_per_engine": 0, "max_waves_per_cu": 0, "family_id": 0, "workgroup_max_size": 0, "grid_max_size": 0,
         "local_mem_size": 0, "hive_id": 0, "gpu_id": 0, "workgroup_max_dim": {"x": 0, "y": 0, "z": 0},
         "grid_max_dim": {"x": 0, "y": 0, "z": 0}, "name": name, "vendor_name": "AMD", "product_name": product,
         "model_name": "", "node_id": node, "logical_node_id": node, "logical_node_type_id": 0,
         "runtime_visibility": {}, "uuid": {}, "mem_banks": [], "caches": [], "io_links": [], "gpu_index": 0}
    a.update(extra)
    return a


def agents_of(path, arch, gpu_node):
    if not path:
        return [agent(0, 1, "EPYC", "AMD EPYC", {}), agent(gpu_node, 2, arch, "", {})]
    out = []
    for r in csv.DictReader(open(path)):
        extra = {k: int(r[c]) for c, k in AGENT_FIELDS.items() if c in r}
        out.append(agent(int(r["Node_Id"]), 2 if r["Agent_Type"] == "GPU" else 1, r["Name"], r["Product_Name"],
                         extra))
    return out


def dim3(n):
    return {"x": n, "y": 1, "z": 1}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("counters")
    ap.add_argument("out")
    ap.add_argument("arch")
    ap.add_argument("--agents")
    ap.add_argument("--split")
    args = ap.parse_args()
    rows = list(csv.DictReader(open(args.counters)))
    gpu_node = int(rows[0]["Agent_Id"].replace("Agent ", ""))
    agents = agents_of(args.agents, args.arch, gpu_node)
    handle_of_node = {a["node_id"]: a["id"]["handle"] for a in agents}
    counter_ids, dispatches, symbols = {}, {}, {}
    for r in rows:
        name = r["Counter_Name"]
        counter_ids.setdefault(name, 1000 + len(counter_ids))
        d = dispatches.setdefault(int(r["Dispatch_Id"]), {"row": r, "records": []})
        value = float(r["Counter_Value"])
        parts = [value / 4] * 3 + [value - 3 * (value / 4)] if name == args.split else [value]
        d["records"] += [{"counter_id": {"handle": counter_ids[name]}, "value": v} for v in parts]
        symbols[int(r["Kernel_Id"])] = r
    gpu_handle = next(a["id"]["handle"] for a in agents if a["type"] == 2)
    counters = [{"agent_id": {"handle": gpu_handle}, "id": {"handle": i}, "is_constant": 0, "is_derived": 0,
                 "name": n, "description": "", "block": n.split("_")[0], "expression": "", "dimension_ids": [0]}
                for n, i in counter_ids.items()]
    kernel_symbols = [{"size": 0, "kernel_id": 0, "code_object_id": 0, "kernel_name": "", "kernel_object": 0,
                       "kernarg_segment_size": 0, "kernarg_segment_alignment": 0, "group_segment_size": 0,
                       "private_segment_size": 0, "sgpr_count": 0, "arch_vgpr_count": 0, "accum_vgpr_count": 0,
                       "formatted_kernel_name": "", "demangled_kernel_name": "", "truncated_kernel_name": ""}
                      for _ in range(max(symbols) + 1)]
    for k, r in symbols.items():
        lds = int(r["LDS_Block_Size"])
        kernel_symbols[k].update({"size": 80, "kernel_id": k, "code_object_id": 1, "kernel_name": r["Kernel_Name"],
                                  "kernel_object": 0x7f00_0000 + k, "group_segment_size": max(lds - 100, 0),
                                  "private_segment_size": int(r["Scratch_Size"]), "sgpr_count": int(r["SGPR_Count"]),
                                  "arch_vgpr_count": int(r["VGPR_Count"]),
                                  "accum_vgpr_count": int(r["Accum_VGPR_Count"]),
                                  "formatted_kernel_name": r["Kernel_Name"],
                                  "demangled_kernel_name": r["Kernel_Name"],
                                  "truncated_kernel_name": r["Kernel_Name"].split("(")[0]})
    collection, trace = [], []
    for did, d in dispatches.items():
        r = d["row"]
        node = int(r["Agent_Id"].replace("Agent ", ""))
        info = {"size": 64, "agent_id": {"handle": handle_of_node[node]}, "queue_id": {"handle": int(r["Queue_Id"])},
                "kernel_id": int(r["Kernel_Id"]), "dispatch_id": did, "private_segment_size": int(r["Scratch_Size"]),
                "group_segment_size": max(int(r["LDS_Block_Size"]) - 100, 0),
                "workgroup_size": dim3(int(r["Workgroup_Size"])), "grid_size": dim3(int(r["Grid_Size"]))}
        corr = {"internal": int(r["Correlation_Id"]), "external": 0, "ancestor": 0}
        start, end = int(r["Start_Timestamp"]), int(r["End_Timestamp"])
        collection.append({"thread_id": int(r["Thread_Id"]),
                           "dispatch_data": {"size": 96, "correlation_id": corr, "start_timestamp": start,
                                             "end_timestamp": end, "dispatch_info": info},
                           "records": d["records"], "kernel_rename_val": 0})
        trace.append({"size": 120, "kind": 11, "operation": 0, "thread_id": int(r["Thread_Id"]),
                      "correlation_id": corr, "start_timestamp": start, "end_timestamp": end, "dispatch_info": info})
    pid = int(rows[0]["Process_Id"])
    proc = {"metadata": {"pid": pid, "init_time": 0, "fini_time": 0, "config": {}, "command": ["./app"]},
            "agents": agents, "counters": counters,
            "strings": {"callback_records": [], "buffer_records": [], "marker_api": [],
                        "correlation_id": {"external": []}, "counters": {"dimension_ids": []},
                        "pc_sample_instructions": [], "pc_sample_comments": [], "att_filenames": [],
                        "code_object_snapshot_filenames": []},
            "code_objects": [], "kernel_symbols": kernel_symbols, "host_functions": [], "summary": [],
            "callback_records": {"counter_collection": collection},
            "buffer_records": {"kernel_dispatch": trace, "hip_api": [], "hsa_api": [], "marker_api": [],
                               "rccl_api": [], "memory_copy": [], "memory_allocation": [], "scratch_memory": [],
                               "pc_sample_host_trap": [], "rocdecode_api": [], "rocjpeg_api": []}}
    with open(args.out, "w") as f:
        json.dump({"rocprofiler-sdk-tool": [proc]}, f, indent=1)


if __name__ == "__main__":
    main()
