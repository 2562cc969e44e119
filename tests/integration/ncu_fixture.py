#!/usr/bin/env python3
"""Write Nsight Compute CSV exports for the tests of lumen's reader:

    ncu_fixture.py details PMC_PERF_CSV OUT   an sm_90 details page (long
        form, quoted, thousands separators, rule columns and a rule's
        record, device attributes) of a lumen NVIDIA workload's pmc_perf.csv
        (nv_fixture.py's): durations in usecond, DRAM bytes in Mbyte, rates
        in Gbyte/second and cycle/nsecond, as Nsight Compute scales them
    ncu_fixture.py raw DETAILS_CSV OUT        the same launches as a
        `--page raw` export: one record per launch, metrics as columns, a
        record of units under the header; DRAM bytes in Kbyte, durations
        in usecond
"""
import csv
import sys



def sep(v):
    return f"{int(v):,}" if float(v).is_integer() else repr(float(v))


def details(src, out):
    rows = list(csv.DictReader(open(src)))
    launch = {"Dispatch_ID", "Kernel_Name", "GPU_ID", "Grid_Size", "Workgroup_Size", "LDS_Per_Workgroup",
              "Scratch_Per_Workitem", "Arch_VGPR", "Accum_VGPR", "SGPR", "wave_size", "Start_Timestamp", "End_Timestamp"}
    def unit(name, v):
        v = float(v)
        if name == "gpu__time_duration.sum": return "usecond", v / 1e3
        if name == "dram__bytes.sum": return "Mbyte", v / 1e6
        if "pct" in name: return "%", v
        if name.endswith(".per_second"): return ("Gbyte/second", v / 1e9) if "bytes" in name else ("cycle/nsecond", v / 1e9)
        if "bytes" in name: return "byte", v
        if "cycles" in name: return "cycle", v
        return "", v
    hdr = ["ID", "Process ID", "Process Name", "Host Name", "Kernel Name", "Context", "Stream", "Block Size", "Grid Size",
           "Device", "CC", "Section Name", "Metric Name", "Metric Unit", "Metric Value", "Rule Name", "Rule Type",
           "Rule Description"]
    with open(out, "w", newline="") as f:
        w = csv.writer(f, quoting=csv.QUOTE_ALL)
        w.writerow(hdr)
        for r in rows:
            blocks = int(float(r["Grid_Size"]) / float(r["Workgroup_Size"]))
            base = [r["Dispatch_ID"], "4242", "app", "127.0.0.1", r["Kernel_Name"], "1", "7",
                    f"({int(float(r['Workgroup_Size']))}, 1, 1)", f"({blocks}, 1, 1)", "0", "9.0"]
            attrs = [("device__attribute_multiprocessor_count", "", "132"),
                     ("device__attribute_max_gpu_frequency_khz", "", "1,980,000"),
                     ("device__attribute_l2_cache_size", "Mbyte", "52.43"),
                     ("device__attribute_display_name", "", "NVIDIA H100 80GB HBM3")]
            for name, u, v in attrs:
                w.writerow(base + ["Device Attributes", name, u, v, "", "", ""])
            for name, v in r.items():
                if name in launch or v == "": continue
                u, x = unit(name, v)
                w.writerow(base + ["Command line profiler metrics", name, u, sep(x), "", "", ""])
            w.writerow(base + ["SpeedOfLight", "", "", "", "SOLBottleneck", "WRN", "advice"])


def raw(src, out):
    """Pivot a details page: one record per launch."""
    launch = ["ID", "Process ID", "Process Name", "Host Name", "Kernel Name", "Context", "Stream", "Block Size",
              "Grid Size", "Device", "CC"]
    ids, metrics, units, values = [], [], {}, {}
    for r in csv.DictReader(open(src, encoding="utf-8-sig")):
        if not r["Metric Name"]:
            continue
        if r["ID"] not in values:
            ids.append(r["ID"])
            values[r["ID"]] = {c: r[c] for c in launch if c in r}
        name, unit, v = r["Metric Name"], r["Metric Unit"], r["Metric Value"].replace(",", "")
        if name not in metrics:
            metrics.append(name)
        if name == "dram__bytes.sum" and unit == "byte":
            unit, v = "Kbyte", f"{float(v) / 1e3:,.3f}"
        if name == "gpu__time_duration.sum" and unit == "nsecond":
            unit, v = "usecond", f"{float(v) / 1e3:,.3f}"
        units[name] = unit
        values[r["ID"]][name] = v
    cols = [c for c in launch if c in values[ids[0]]] + metrics
    with open(out, "w", newline="") as f:
        w = csv.writer(f, quoting=csv.QUOTE_ALL)
        w.writerow(cols)
        w.writerow(["" if c in launch else units[c] for c in cols])
        for i in ids:
            w.writerow([values[i].get(c, "") for c in cols])


if __name__ == "__main__":
    {"details": details, "raw": raw}[sys.argv[1]](sys.argv[2], sys.argv[3])
