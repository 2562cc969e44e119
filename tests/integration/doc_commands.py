#!/usr/bin/env python3
"""Every command of the ```sh blocks of README.md and docs/*.md works as
written on a fresh clone.

Usage: doc_commands.py LUMEN BUILD_DIR SHARED_DIR SOURCE_DIR

The documents are read as a reader follows them: README.md first, then
docs/*.md in name order, every block's commands in order, in one shell
session in a temporary folder (an export, a `cd` and the files a command
writes are there for the commands after it: `lumen analyze -w
workloads/vcopy` reads what the `lumen profile -n vcopy` before it wrote).
The folder is laid out as a checkout is: `build` there is the build tree
and `../shared` the shared data, so paths are used as the documents write
them; `lumen` is the built binary, first on PATH. The session starts from a
clean environment: no LUMEN_* variable of the caller's, HOME in the
temporary folder (the store's default file goes there).

A command runs unless one of the rules below skips it; each rule gives its
reason, every skip is printed, and a rule that no longer matches any line
fails the test so that the list stays reviewed. A command that runs must
exit 0 within its time limit.
"""
import glob
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile

# Words that stand for something of the reader's: a line holding one as a
# whole shell word cannot run as written.
PLACEHOLDER_WORDS = {
    "WORKLOAD_DIR": "the reader's workload folder",
    "DIR": "the reader's workload folder",
    "A": "the first of two workloads compared (`-w A -w B`)",
    "B": "the second of two workloads compared (`-w A -w B`)",
    "APP": "the reader's application",
    "ARGS": "the reader's application's arguments",
}
# Word prefixes that name something of the reader's.
PLACEHOLDER_PREFIXES = {
    "postgresql://me@dbhost/": "a PostgreSQL server of the reader's team "
                               "(the store tests run PostgreSQL where LUMEN_TEST_PG names one)",
}
# Commands (by how the line starts) that do not belong in this test.
COMMAND_PREFIXES = {
    "scripts/run.sh": "installs packages with apt and builds: what made the build this test runs",
    "scripts/test.sh": "runs the whole suite, this test included",
    "lumen serve": "a server that runs until it is stopped (serve_test.sh drives it)",
    "cmake ": "builds the project; this test runs against that build",
    "cd build && ctest": "runs the golden tests, which ctest runs on their own (label golden)",
    "cp -r metrics/": "a step of adding an architecture that writes into the source tree "
                      "(gfx950 stands for the new one there, and exists already)",
}
# Lines that run only after a line skipped above.
LINES = {
    ("README.md", "lumen profile -w wl/one --resume"):
        "continues wl/one, which the `-- APP ARGS` line before it starts",
}
# Commands that need a program lumen does not depend on: skipped only
# where the program is absent (these rules may match nothing).
NEEDS_PROGRAM = {
    "mpirun": "Open MPI (scripts/deps.sh installs it; lumen builds without it)",
    "sqlite3": "the SQLite shell, which no part of lumen needs",
}
# NVIDIA plans (`lumen profile --plan --arch gh100`) price the sets with
# CUPTI's Profiler Host API, which comes with the CUDA toolkit: skipped
# where `lumen list backends` says it is not usable.
NVIDIA_ARCHS = ("gv100", "tu104", "ga100", "ga102", "ad102", "gh100", "gb100",
                "sm_70", "sm_75", "sm_80", "sm_86", "sm_89", "sm_90", "sm_100")
TIMEOUT_S = 120


def blocks(path):
    """The ```sh blocks of a Markdown file: lists of (line number, text)."""
    out, cur = [], None
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            s = line.rstrip("\n")
            if cur is None:
                if re.match(r"^```sh\s*$", s):
                    cur = []
            elif s.startswith("```"):
                out.append(cur)
                cur = None
            else:
                cur.append((n, s))
    if cur is not None:
        sys.exit(f"FAIL: {path}: a ```sh block is not closed")
    return out


def commands(block):
    """The block's commands: lines joined where a backslash ends a line or a
    quote is still open, as the shell reads them. (line number, text)."""
    out, text, first = [], "", None
    for n, line in block:
        if first is None:
            if not line.strip() or line.lstrip().startswith("#"):
                continue
            first = n
        text = text + "\n" + line if text else line
        if text.endswith("\\"):
            continue
        try:
            shlex.split(text, comments=True)
        except ValueError:  # an open quote: the command goes on
            continue
        out.append((first, text))
        text, first = "", None
    if text:
        out.append((first, text))
    return out


def skip_reason(doc, text, words, used, cupti_host):
    """Why a command is not run (every rule that matches it, each marked
    used), or None."""
    reasons = []
    line = " ".join(words)
    if (doc, line) in LINES:
        used.add(("line", doc, line))
        reasons.append(LINES[(doc, line)])
    for prefix, why in COMMAND_PREFIXES.items():
        if " ".join(text.split()).startswith(prefix):
            used.add(("command", prefix))
            reasons.append(why)
    for word in words:
        if word in PLACEHOLDER_WORDS:
            used.add(("word", word))
            reasons.append(f"`{word}` stands for {PLACEHOLDER_WORDS[word]}")
        for prefix, why in PLACEHOLDER_PREFIXES.items():
            if word.startswith(prefix):
                used.add(("prefix", prefix))
                reasons.append(f"`{word}` names {why}")
    if words and words[0] in NEEDS_PROGRAM and not shutil.which(words[0]):
        reasons.append(f"{words[0]} is not installed here: {NEEDS_PROGRAM[words[0]]}")
    if words[:3] == ["lumen", "profile", "--plan"] and any(a in words for a in NVIDIA_ARCHS) and not cupti_host:
        reasons.append("CUPTI's Profiler Host API (the CUDA toolkit) is not usable here")
    return "; ".join(reasons) or None


def main():
    if len(sys.argv) != 5:
        sys.exit(__doc__)
    lumen, build, shared, source = (os.path.abspath(a) for a in sys.argv[1:5])
    docs = [os.path.join(source, "README.md")] + sorted(glob.glob(os.path.join(source, "docs", "*.md")))
    top = tempfile.mkdtemp(prefix="lumen-doc-")
    try:
        # A checkout's layout: the work folder with build/ in it, the
        # shared data beside it.
        work = os.path.join(top, "checkout")
        bindir = os.path.join(top, "bin")
        os.makedirs(work)
        os.makedirs(bindir)
        os.symlink(build, os.path.join(work, "build"))
        os.symlink(shared, os.path.join(top, "shared"))
        os.symlink(lumen, os.path.join(bindir, "lumen"))
        env = {k: v for k, v in os.environ.items() if not k.startswith("LUMEN_") and k != "XDG_DATA_HOME"}
        env["HOME"] = os.path.join(top, "home")
        os.makedirs(env["HOME"])
        env["PATH"] = bindir + os.pathsep + env.get("PATH", "/usr/bin:/bin")
        state_env, state_cwd = os.path.join(top, "env"), os.path.join(top, "cwd")
        backends = subprocess.run([lumen, "list", "backends"], env=env, stdout=subprocess.PIPE).stdout.decode()
        cupti_host = re.search(r"^cupti-host +planning +yes +yes", backends, re.M) is not None
        cwd = work
        used, failures, n_run, n_skipped = set(), [], 0, 0
        for path in docs:
            doc = os.path.relpath(path, source)
            for block in blocks(path):
                for line, text in commands(block):
                    try:
                        words = shlex.split(text, comments=True)
                    except ValueError:
                        failures.append(f"{doc}:{line}: cannot read `{text}` as a shell command")
                        continue
                    why = skip_reason(doc, text, words, used, cupti_host)
                    if why:
                        n_skipped += 1
                        print(f"skip {doc}:{line}: {' '.join(text.split())}\n     ({why})")
                        continue
                    # The command in the session's shell; what it exported
                    # and where it ended up carry on to the next one.
                    script = (f"{text}\nstatus=$?\nenv -0 >{shlex.quote(state_env)}\n"
                              f"pwd >{shlex.quote(state_cwd)}\nexit $status\n")
                    n_run += 1
                    print(f"run  {doc}:{line}: {' '.join(text.split())}", flush=True)
                    try:
                        r = subprocess.run(["bash", "-c", script], cwd=cwd, env=env, stdout=subprocess.PIPE,
                                           stderr=subprocess.STDOUT, timeout=TIMEOUT_S)
                    except subprocess.TimeoutExpired:
                        failures.append(f"{doc}:{line}: `{text}` did not finish within {TIMEOUT_S} s")
                        continue
                    if r.returncode != 0:
                        tail = r.stdout.decode(errors="replace").strip().splitlines()[-6:]
                        failures.append(f"{doc}:{line}: `{text}` exited with status {r.returncode}:\n    "
                                        + "\n    ".join(tail))
                    with open(state_env, "rb") as f:
                        env = dict(e.split("=", 1) for e in f.read().decode().split("\0") if "=" in e)
                    with open(state_cwd) as f:
                        cwd = f.read().strip()
        # Rules that match nothing any more are taken out, not kept.
        rules = ([("line",) + k for k in LINES] + [("command", p) for p in COMMAND_PREFIXES]
                 + [("word", w) for w in PLACEHOLDER_WORDS] + [("prefix", p) for p in PLACEHOLDER_PREFIXES])
        for rule in rules:
            if rule not in used:
                failures.append(f"skip rule {rule[1:]} matches no documented command: remove it")
        print(f"{n_run} commands run, {n_skipped} skipped")
        if failures:
            print("FAIL:\n" + "\n".join(failures))
            return 1
        print("PASS")
        return 0
    finally:
        subprocess.run(["chmod", "-R", "u+w", top])
        shutil.rmtree(top, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
