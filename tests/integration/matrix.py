#!/usr/bin/env python3
"""Generated cases of `lumen analyze` and `lumen export` over every shared
workload folder, checked against an independent model of the selection.

Instead of a list of hand-picked command lines, each option family has a
domain of values (including edge and invalid ones), the cases cover every
pair of values of two families (a greedy pairwise covering, seeded so that a
failure can be replayed), and each case runs on a folder taken in turn from
every shared workload folder. A value that depends on the folder (a kernel
name's word, a dispatch id, a GPU id) is symbolic until the folder is known.

What each case asserts:
  - no crash and no sanitizer report; exit status 0, 1 or 2;
  - a refusal is one line "lumen <mode>: ...", and it is the expected one
    when the model says the selection is empty or an argument is invalid;
  - a success selects exactly the dispatches the model selects: the JSON's
    dispatches_selected, the summary's kernels and their calls (JSON), the
    text summary's kernel count, and the top-kernels table's counts in
    text, CSV and JSON all agree with the model of the filters (which reads
    pmc_perf.csv itself: -k, --kernel-index, -d, -g, --instance);
  - an exported folder analyzes without error when its source does.

With --api, one `lumen serve` over every folder answers the same
selections (/api/analysis, /api/summary) for the cases in JSON, and its
answers must select what the CLI and the model select.

Usage: matrix.py LUMEN SHARED [--cases N] [--seed S] [--full] [--list] [--api]
  --cases N   run N cases: the pairwise cases in turn, each on the next
              folder (default: enough to meet every case and every folder;
              $LUMEN_MATRIX_CASES overrides)
  --full      every folder with every case of the pairwise set (the whole
              matrix; bench/matrix.sh runs it)
Exit status 0 when every case passed; failures are printed with the
command line that reproduces them.
"""
import csv
import json
import os
import random
import re
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.parse
import urllib.request

csv.field_size_limit(1 << 30)

# ------------------------------------------------------------- families

# Each family: values; None means "flag not given". Symbolic values start
# with '@' and are resolved per folder.
FAMILIES = {
    "kernel": [None, "@word", "@!word", "@two", "zz_no_such_kernel", "("],
    "kindex": [None, 0, 1, "@last", 99],
    "dispatch": [None, "@first", "@range", "@above", "@missing"],
    "gpu": [None, "@gpu", "@nogpu"],
    "instance": [None, "0", "1:3"],
    "norm": [None, "per_wave", "per_cycle", "per_second", "per_kernel", "bogus"],
    "block": [None, "2", "2.1", "VALU FLOPs", "TCC", "99"],
    "view": [None, "--summary", "--full", "--list-stats"],
    "format": ["text", "csv", "json"],
    "weight": [None, "count", "time"],
    "decimal": [None, "0", "5"],
    "max_stat": [None, "1", "100"],
    "time_unit": [None, "s", "us"],
    "compat": [None, "3.0", "3.3"],
    "command": ["analyze", "analyze", "analyze", "export"],
}


def pairwise(families, seed, tries=40):
    """A greedy covering of every pair of values of two families."""
    rng = random.Random(seed)
    names = list(families)
    domain = {f: list(range(len(families[f]))) for f in names}
    uncovered = set()
    for i, a in enumerate(names):
        for b in names[i + 1:]:
            for x in domain[a]:
                for y in domain[b]:
                    uncovered.add((a, x, b, y))
    cases = []
    while uncovered:
        best, best_gain = None, -1
        # Seed each candidate with one uncovered pair, fill the rest at random.
        seeds = rng.sample(sorted(uncovered), min(tries, len(uncovered)))
        for a, x, b, y in seeds:
            cand = {f: rng.choice(domain[f]) for f in names}
            cand[a], cand[b] = x, y
            # Improve each other family greedily.
            for f in names:
                if f in (a, b):
                    continue
                gains = []
                for v in domain[f]:
                    cand[f] = v
                    gains.append((gain(cand, names, uncovered), v))
                cand[f] = max(gains)[1]
            g = gain(cand, names, uncovered)
            if g > best_gain:
                best, best_gain = dict(cand), g
        for i, a in enumerate(names):
            for b in names[i + 1:]:
                uncovered.discard((a, best[a], b, best[b]))
        cases.append({f: families[f][best[f]] for f in names})
    return cases


def gain(cand, names, uncovered):
    n = 0
    for i, a in enumerate(names):
        for b in names[i + 1:]:
            if (a, cand[a], b, cand[b]) in uncovered:
                n += 1
    return n


# -------------------------------------------------------------- folders

def discover(shared):
    roots = [("workloads", None), ("workloads-3.3", "3.3"), ("formats/rocprofiler-compute", None)]
    found = []
    for root, compat in roots:
        top = os.path.join(shared, root)
        for dirpath, dirnames, filenames in os.walk(top):
            dirnames.sort()
            if "pmc_perf.csv" in filenames:
                found.append((dirpath, compat))
    return found


def num(s):
    try:
        return float(s)
    except (TypeError, ValueError):
        return float("nan")


class Facts:
    """The selection-relevant columns of a folder's pmc_perf.csv."""

    def __init__(self, folder):
        self.ok = True
        self.rows = []
        try:
            with open(os.path.join(folder, "pmc_perf.csv"), newline="", encoding="utf-8", errors="replace") as f:
                reader = csv.DictReader(f)
                # One row per counter (the rocpd-based profiler): lumen
                # pivots it and renumbers ids; the model does not.
                if "Counter_Name" in (reader.fieldnames or []):
                    self.ok = False
                for rec in reader:
                    self.rows.append({
                        "id": num(rec.get("Dispatch_ID")),
                        "kernel": rec.get("Kernel_Name") or "",
                        "gpu": num(rec.get("GPU_ID")),
                        "dur": num(rec.get("End_Timestamp")) - num(rec.get("Start_Timestamp")),
                        "grbm": num(rec.get("GRBM_GUI_ACTIVE")),
                    })
        except (OSError, csv.Error):
            self.ok = False
        seen = {}
        for r in self.rows:
            r["instance"] = seen.get(r["kernel"], 0)
            seen[r["kernel"]] = r["instance"] + 1
        self.kernels = sorted(seen)
        self.ids = [r["id"] for r in self.rows if r["id"] == r["id"]]
        self.gpus = sorted({r["gpu"] for r in self.rows if r["gpu"] == r["gpu"]})

    def word(self, rng):
        """A word of some kernel's name that makes a plain regex."""
        words = []
        for k in self.kernels:
            words += re.findall(r"[A-Za-z_][A-Za-z0-9_]{3,}", k)
        return rng.choice(sorted(set(words))) if words else "kernel"


def idset(spec):
    """lumen's id syntax for the values used here: N, A:B (B excluded), >N."""
    if spec.startswith(">"):
        n = int(spec[1:])
        return lambda v: v > n
    if ":" in spec:
        a, b = spec.split(":")
        return lambda v: int(a) <= v < int(b)
    vals = {int(x) for x in spec.split(",")}
    return lambda v: v in vals


def resolve(case, facts, rng):
    """The case's argv after `lumen`, with symbolic values made concrete."""
    c = dict(case)
    args = []
    k = c["kernel"]
    if k == "@word":
        c["kernel"] = facts.word(rng)
    elif k == "@!word":
        c["kernel"] = "!" + facts.word(rng)
    elif k == "@two":
        c["kernel"] = [facts.word(rng), facts.word(rng)]
    if c["kindex"] == "@last":
        c["kindex"] = max(len(facts.kernels) - 1, 0)
    ids = sorted(set(int(i) for i in facts.ids)) or [0]
    d = c["dispatch"]
    if d == "@first":
        c["dispatch"] = str(ids[0])
    elif d == "@range":
        c["dispatch"] = "%d:%d" % (ids[0], ids[min(len(ids) - 1, 3)] + 1)
    elif d == "@above":
        c["dispatch"] = ">%d" % ids[len(ids) // 2]
    elif d == "@missing":
        c["dispatch"] = str(ids[-1] + 1000)
    g = c["gpu"]
    if g == "@gpu":
        c["gpu"] = str(int(facts.gpus[0])) if facts.gpus else "0"
    elif g == "@nogpu":
        c["gpu"] = str(int(max(facts.gpus or [0])) + 7)
    return c


def argv_of(c, folder, out_path):
    if c["command"] == "export":
        a = ["export", "-w", folder, "--omniperf", out_path]
        return a
    a = ["analyze", "-w", folder, "--width", "100", "--no-pager", "--color", "never"]
    kernels = c["kernel"] if isinstance(c["kernel"], list) else [c["kernel"]] if c["kernel"] is not None else []
    for k in kernels:
        a += ["-k", k]
    if c["kindex"] is not None:
        a += ["--kernel-index", str(c["kindex"])]
    for flag, key in (("-d", "dispatch"), ("-g", "gpu"), ("--instance", "instance"), ("--norm", "norm"),
                      ("-b", "block"), ("--weight", "weight"), ("--decimal", "decimal"),
                      ("--max-stat-num", "max_stat"), ("--time-unit", "time_unit"), ("--compat", "compat")):
        if c[key] is not None:
            a += [flag, c[key]]
    if c["view"]:
        a.append(c["view"])
    a += ["--format", c["format"]]
    if c["format"] == "csv":
        a += ["-o", out_path]
    return a


# ---------------------------------------------------------------- model

def top_order(top):
    """Kernel names in the top-kernels table's order: total duration (NaN
    durations left out), then name."""
    sums = {}
    for r in top:
        sums.setdefault(r["kernel"], 0.0)
        if r["dur"] == r["dur"]:
            sums[r["kernel"]] += r["dur"]
    return sorted(sums, key=lambda k: (-sums[k], k.encode()))


def model(c, facts):
    """(top rows, selected rows, error) as lumen's selection defines them;
    error is a substring of the expected refusal, or None."""
    rows = facts.rows
    if c["gpu"] is not None:
        gpus = idset(c["gpu"])
        on = [r for r in rows if r["gpu"] == r["gpu"] and gpus(int(r["gpu"]))]
        if not on:
            return None, None, "-g: no dispatch ran on the GPU(s) asked for"
        rows = on
    if c["dispatch"] is not None:
        want = idset(c["dispatch"])
        rows = [r for r in rows if r["id"] == r["id"] and want(int(r["id"]))]
        if not rows:
            return None, None, "-d: no dispatch with the ids asked for"
    top = rows
    if c["kernel"] == "(":
        return top, None, "-k '('"
    order = top_order(top)
    sel = top
    kernels = c["kernel"] if isinstance(c["kernel"], list) else [c["kernel"]] if c["kernel"] is not None else []
    inc = [k for k in kernels if not k.startswith("!")]
    exc = [k[1:] for k in kernels if k.startswith("!")]
    sel = [r for r in sel if not any(re.search(e, r["kernel"]) for e in exc)]
    if inc:
        sel = [r for r in sel if any(re.search(i, r["kernel"]) for i in inc)]
    if c["instance"] is not None:
        want = idset(c["instance"])
        sel = [r for r in sel if want(r["instance"])]
    if c["kindex"] is not None:
        if c["kindex"] >= len(order):
            return top, None, "--kernel-index %d: the top-kernels table has" % c["kindex"]
        name = order[c["kindex"]]
        sel = [r for r in sel if r["kernel"] == name]
    if not sel:
        return top, sel, "no dispatch matches the filters"
    return top, sel, None


def counts(rows):
    out = {}
    for r in rows:
        out[r["kernel"]] = out.get(r["kernel"], 0) + 1
    return out


# Refusals that depend on the data rather than on the filters (the model
# does not predict them; each must still be one clear line).
DATA_ERRORS = [
    "never counted as busy",            # GRBM_GUI_ACTIVE 0 in a selected row
    "profiling data may be corrupt",     # a column blank in every row
    "missing",                           # a field another rocprofiler-compute layout lacks
    "--norm bogus",
    "-b 99",
    "semantics of rocprofiler-compute",  # --compat against a folder of the other version
    "no metric definitions",
]


def check(c, folder, compat_of_folder, facts, res, out_path):
    """A list of failure messages for one finished case."""
    fails = []
    rc, out, err = res.returncode, res.stdout, res.stderr
    if rc < 0 or rc >= 128:
        return ["crashed (signal %d)" % (-rc if rc < 0 else rc - 128)]
    if "Sanitizer" in err or "runtime error:" in err:
        return ["sanitizer report: " + err[:400]]
    if rc not in (0, 1, 2):
        fails.append("exit status %d" % rc)
    mode = c["command"]
    errors = [l for l in err.splitlines() if l.startswith("lumen %s:" % mode) or l.startswith("lumen:")]
    if rc != 0:
        if len(errors) != 1:
            fails.append("refusal is not one line 'lumen %s: ...': %r" % (mode, err[:400]))
    if mode == "export":
        if rc == 0:
            r2 = subprocess.run([LUMEN, "analyze", "-w", out_path, "--full", "-b", "2", "--format", "json"]
                                + (["--compat", compat_of_folder] if compat_of_folder else []),
                                capture_output=True, text=True, errors="replace")
            r1 = subprocess.run([LUMEN, "analyze", "-w", folder, "--full", "-b", "2", "--format", "json"]
                                + (["--compat", compat_of_folder] if compat_of_folder else []),
                                capture_output=True, text=True, errors="replace")
            if r1.returncode == 0 and r2.returncode != 0:
                fails.append("the exported folder is refused: " + r2.stderr.strip()[:300])
        return fails
    if not facts.ok:
        return fails
    top, sel, expect_err = model(c, facts)
    if expect_err is not None:
        if rc == 0:
            fails.append("expected a refusal containing %r, got exit 0" % expect_err)
        elif not any(expect_err in e for e in errors) and not any(d in err for d in DATA_ERRORS):
            fails.append("expected a refusal containing %r, got %r" % (expect_err, err.strip()[:300]))
        return fails
    if rc != 0:
        if not any(d in err for d in DATA_ERRORS):
            fails.append("refused a selection of %d dispatches: %r" % (len(sel), err.strip()[:300]))
        return fails
    want = counts(sel)
    want_top = counts(top)
    fmt = c["format"]
    summary_shown = c["view"] == "--summary" or (c["view"] is None and fmt == "text" and c["block"] is None)
    if fmt == "json":
        try:
            doc = json.loads(out)
        except ValueError as e:
            return ["output is not JSON: %s" % e]
        wl = doc["workloads"][0]
        if wl.get("dispatches_selected") != len(sel):
            fails.append("dispatches_selected %s, the filters select %d" % (wl.get("dispatches_selected"), len(sel)))
        s = doc.get("summary")
        if c["view"] == "--summary":
            if s is None:
                fails.append("--summary --format json has no summary object")
            else:
                fails += check_summary_json(s, want)
        tk = find_table(doc, "top_kernels")
        if tk is not None:
            got = {row["cells"][1]: row["cells"][2] for row in tk["rows"]}
            if got != want_top:
                fails.append("top-kernels counts %s differ from the model's %s" % (short(got), short(want_top)))
    elif fmt == "text":
        if re.search(r"\b(inf|nan) %", out):
            fails.append("text report shows inf/nan %")
        m = re.search(r"^Summary: (\d+) kernels?,", out, re.M)
        if summary_shown and c["view"] != "--full":
            if not m:
                fails.append("text report has no summary line")
            elif int(m.group(1)) != len(want):
                fails.append("text summary counts %s kernels, the filters select %d" % (m.group(1), len(want)))
        elif m and c["view"] in ("--full", "--list-stats"):
            fails.append("a summary in a %s report" % c["view"])
    elif fmt == "csv":
        path = os.path.join(out_path, "0.1.csv")
        if os.path.exists(path):
            with open(path, newline="", encoding="utf-8") as f:
                recs = list(csv.reader(f))
            got = {r[1]: int(float(r[2])) for r in recs[1:] if len(r) > 2}
            if got != want_top:
                fails.append("0.1.csv counts %s differ from the model's %s" % (short(got), short(want_top)))
    return fails


def check_summary_json(s, want):
    fails = []
    ks = s.get("kernels", [])
    if s.get("kernels_total") != len(want):
        fails.append("summary kernels_total %s, the filters select %d kernels" % (s.get("kernels_total"), len(want)))
    for k in ks:
        if k["name"] not in want:
            fails.append("summary lists %r, which the filters leave out" % k["name"][:80])
        elif k["calls"] != want[k["name"]]:
            fails.append("summary gives %r %d calls, the filters select %d" % (k["name"][:60], k["calls"],
                                                                              want[k["name"]]))
        if not k["calls"]:
            fails.append("summary card with 0 calls: %r" % k["name"][:80])
        r = k.get("roofline", {})
        bound = r.get("bound")
        if bound not in (None, "memory", "compute"):
            fails.append("summary roofline bound %r" % bound)
        # Nothing above a physical peak is shown as if it were real.
        for h in k.get("highlights", []):
            if h["pct"] is not None and h["pct"] > 100.5:
                fails.append("summary ranks %s at %.0f %% of peak" % (h["metric"], h["pct"]))
        pct = r.get("pct_of_attainable")
        if pct is not None and pct > 100.5 and (bound is not None or not r.get("above_attainable")):
            fails.append("summary roofline at %.0f %% of the attainable without the flag" % pct)
        for f in k.get("findings", []):
            for m in re.finditer(r"(\d+) % of (?:\w+ )?peak", f["verdict"]):
                if int(m.group(1)) > 100 and not f.get("above_peak_metric"):
                    fails.append("finding %s says %s without the flag" % (f["rule"], m.group(0)))
    if len(ks) != min(len(want), 5):
        fails.append("summary shows %d kernels of %d" % (len(ks), len(want)))
    return fails


def find_table(doc, kind):
    for p in doc.get("panels", []):
        for t in p.get("tables", []):
            if t.get("kind") == kind:
                return t
    return None


def short(d):
    return {k[:30]: v for k, v in list(d.items())[:6]}


class Server:
    """One `lumen serve` over the folders, on a free loopback port."""

    def __init__(self, folders, tmp):
        args = [LUMEN, "serve", "--listen", "127.0.0.1:0"]
        for f, _ in folders:
            args += ["-w", f]
        self.out = open(os.path.join(tmp, "serve.out"), "w+")
        self.err = open(os.path.join(tmp, "serve.err"), "w+")
        self.proc = subprocess.Popen(args, stdout=self.out, stderr=self.err)
        self.url = None
        self.asked = 0
        self.ids = {f: "f%d" % i for i, (f, _) in enumerate(folders)}
        for _ in range(600):
            self.out.seek(0)
            m = re.search(r"http://[^ \n]+", self.out.read())
            if m:
                self.url = m.group(0)
                break
            if self.proc.poll() is not None:
                break
            time.sleep(0.1)

    def get(self, path, params):
        url = self.url + path + "?" + urllib.parse.urlencode(params)
        try:
            with urllib.request.urlopen(url, timeout=120) as r:
                return r.status, r.read().decode("utf-8", "replace")
        except urllib.error.HTTPError as e:
            return e.code, e.read().decode("utf-8", "replace")

    def close(self):
        self.proc.terminate()
        self.proc.wait()
        self.out.close()
        self.err.close()


def api_check(server, c, folder, facts, res):
    """The API's answer to the case's selection against the CLI's."""
    if c["command"] != "analyze" or c["view"] == "--list-stats":
        return []
    params = [("w", server.ids[folder])]
    kernels = c["kernel"] if isinstance(c["kernel"], list) else [c["kernel"]] if c["kernel"] is not None else []
    params += [("k", k) for k in kernels]
    if c["kindex"] is not None:
        # The API has no row index: the GUI names kernels (kn=, one more
        # include pattern). Without other include patterns that is the
        # same selection as --kernel-index.
        if any(not k.startswith("!") for k in kernels) or not facts.ok:
            return []
        top, _, _ = model(dict(c, kindex=None, kernel=None, instance=None), facts)
        if top is None:
            return []
        order = top_order(top)
        if c["kindex"] >= len(order):
            return []
        params.append(("kn", order[c["kindex"]]))
    for key, name in (("dispatch", "d"), ("gpu", "g"), ("instance", "i"), ("norm", "norm"), ("block", "b"),
                      ("weight", "weight"), ("compat", "compat")):
        if c[key] is not None:
            params.append((name, c[key]))
    code, body = server.get("api/analysis", params)
    server.asked += 1
    fails = []
    if (code == 200) != (res.returncode == 0):
        return ["the API answered %d where the CLI exited %d: %s" % (code, res.returncode, body[:200])]
    if code != 200:
        return fails
    try:
        api = json.loads(body)
    except ValueError as e:
        return ["the API's answer is not JSON: %s" % e]
    _, sel, err = model(c, facts) if facts.ok else (None, None, "unknown")
    a = api["workloads"][0].get("dispatches_selected")
    if err is None and a != len(sel):
        fails.append("the API selects %s dispatches, the filters %d" % (a, len(sel)))
    if c["view"] == "--summary" and err is None:
        code, body = server.get("api/summary", params)
        if code != 200:
            fails.append("api/summary answered %d: %s" % (code, body[:200]))
        else:
            s = json.loads(body)["summary"]
            want = counts(sel)
            fails += ["api/summary: " + f for f in check_summary_json(s, want)]
    return fails


def shell(argv):
    return " ".join("'" + a.replace("'", "'\\''") + "'" if re.search(r"[^\w./:=-]", a) else a for a in argv)


def main():
    global LUMEN
    args = sys.argv[1:]
    if len(args) < 2:
        print(__doc__)
        return 2
    LUMEN, shared = args[0], args[1]
    opts = args[2:]
    seed = int(opts[opts.index("--seed") + 1]) if "--seed" in opts else 20261204
    limit = int(opts[opts.index("--cases") + 1]) if "--cases" in opts else None
    if os.environ.get("LUMEN_MATRIX_CASES"):
        limit = int(os.environ["LUMEN_MATRIX_CASES"])
    full = "--full" in opts
    cases = pairwise(FAMILIES, seed)
    folders = discover(shared)
    if not folders:
        print("no workload folders under %s" % shared)
        return 2
    plan = []
    if full:
        for f in folders:
            for c in cases:
                plan.append((c, f))
    else:
        # Folders in turn, so that every folder is met once the plan is
        # longer than the folder list.
        n = limit if limit is not None else max(len(cases), len(folders))
        for i in range(n):
            plan.append((cases[i % len(cases)], folders[(i * 7) % len(folders)]))
    if limit is not None:
        plan = plan[:limit]
    if "--list" in opts:
        for c, (folder, _) in plan:
            print(folder, c)
        return 0
    facts_of = {}
    failed = 0
    rng = random.Random(seed)
    with tempfile.TemporaryDirectory() as tmp:
        server = Server(folders, tmp) if "--api" in opts else None
        if server is not None and not server.url:
            server.err.seek(0)
            print("FAIL: the server did not start: %s" % server.err.read()[:400])
            server.close()
            return 1
        for i, (case, (folder, compat)) in enumerate(plan):
            facts = facts_of.get(folder)
            if facts is None:
                facts = facts_of[folder] = Facts(folder)
            c = resolve(case, facts, rng)
            out_path = os.path.join(tmp, "out%d" % i)
            argv = argv_of(c, folder, out_path)
            try:
                res = subprocess.run([LUMEN] + argv, capture_output=True, text=True, errors="replace", timeout=120)
            except subprocess.TimeoutExpired:
                print("FAIL case %d: timed out: lumen %s" % (i, shell(argv)))
                failed += 1
                continue
            fails = check(c, folder, compat, facts, res, out_path)
            if server is not None and not fails:
                fails = api_check(server, c, folder, facts, res)
            if fails:
                failed += 1
                print("FAIL case %d: lumen %s" % (i, shell(argv)))
                for f in fails[:5]:
                    print("    " + f)
            subprocess.run(["rm", "-rf", out_path])
        if server is not None:
            print("%d cases also asked of the API (/api/analysis, /api/summary)" % server.asked)
            server.close()
    print("%d passed, %d failed" % (len(plan) - failed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
