#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""bench-progress.py [--coreq BINARY] [--sizes 1000,10000,30000] [--samples 2] [--runs 3]

Benchmarks progress across samples (job/progress.c) on generated samples of one process
with many threads: `coreq stacks --json S1.json S2.json ...`, the samples coreq-bt/2
documents of one pid taken at different times (as `coreq snapshot --samples` writes
them). Two cases per size: every thread moved (each thread's program frame differs
between samples: threads_moved names them all, the case that was quadratic) and none
moved (stuck). The floor is `coreq stacks` of the same documents given other pids (read
and merged as processes of their own, not compared): what the comparison adds is the
difference.

A report, not a test: prints a table (CPU time, user + system, the median of --runs; max
RSS; both from /usr/bin/time) and the ratio of each size's time to the size before, with
the ratio linear scaling would give (quadratic: its square). Exits 0 whatever the numbers
(non-zero only when it cannot run).
"""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def sample(nthreads, index, moved, pid=4242):
    """Sample @p index of a process of @p nthreads threads: each thread in the program
    under two libc frames (left out of the comparison); with @p moved its innermost
    program frame's pc differs from sample to sample."""
    threads = []
    for t in range(nthreads):
        pc = 0x401000 + (t % 97) * 16 + (index * 4 if moved else 0)
        threads.append({"tid": 100000 + t, "frames": [
            {"index": 0, "pc": hex(0x7f0000001000 + index), "module": "libc.so.6", "function": "syscall"},
            {"index": 1, "pc": hex(0x7f0000002000), "module": "libc.so.6", "function": "pthread_cond_wait"},
            {"index": 2, "pc": hex(pc), "module": "prog", "function": "work"},
            {"index": 3, "pc": hex(0x400800), "module": "prog", "function": "main"}]})
    return {"schema": "coreq-bt/2", "core": f"sample{index}/core", "arch": "x86_64", "problems": [],
            "threads": threads,
            "process": {"pid": pid, "cpu_ms": 1000 + 50 * index, "taken_ms": 1_700_000_000_000 + 500 * index}}


def run(cmd, runs):
    """(median CPU seconds, user and system: a loaded machine stretches wall time; max RSS
    KB of the last run, stdout of the last run)."""
    times, rss, out = [], -1, ""
    for _ in range(runs):
        p = subprocess.run(["/usr/bin/time", "-f", "%M %U %S", *cmd], capture_output=True, text=True)
        if p.returncode not in (0, 1):
            sys.exit(f"bench-progress: {' '.join(cmd[:3])} ...: exit {p.returncode}: {p.stderr[-300:]}")
        last = (p.stderr.strip().splitlines() or [""])[-1].split()
        if len(last) != 3:
            sys.exit(f"bench-progress: no /usr/bin/time line: {p.stderr[-300:]}")
        rss = int(last[0])
        times.append(float(last[1]) + float(last[2]))
        out = p.stdout
    return statistics.median(times), rss, out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--coreq", default=os.path.join(ROOT, "build", "coreq"))
    ap.add_argument("--sizes", default="1000,10000,30000")
    ap.add_argument("--samples", type=int, default=2)
    ap.add_argument("--runs", type=int, default=3)
    a = ap.parse_args()
    if not os.access(a.coreq, os.X_OK):
        sys.exit(f"bench-progress: {a.coreq} missing (make, or --coreq)")
    if not os.access("/usr/bin/time", os.X_OK):
        sys.exit("bench-progress: /usr/bin/time needed (package time)")
    sizes = [int(x) for x in a.sizes.split(",")]
    tmp = tempfile.mkdtemp(prefix="bench-progress.")
    rows = []
    try:
        for n in sizes:
            for moved in (True, False):
                files, others = [], []
                for i in range(a.samples):
                    for pid, into in ((4242, files), (5000 + i, others)):
                        f = os.path.join(tmp, f"{n}-{int(moved)}-{i}-{pid}.json")
                        with open(f, "w") as fh:
                            json.dump(sample(n, i, moved, pid), fh)
                        into.append(f)
                floor, floor_rss, _ = run([a.coreq, "stacks", "--json", *others], a.runs)
                secs, rss, out = run([a.coreq, "stacks", "--json", *files], a.runs)
                prog = (json.loads(out).get("progress") or [{}])[0] if out.startswith("{") else {}
                want = "progressing" if moved else "stuck"
                ok = prog.get("state") == want and len(prog.get("threads_moved", [])) == (n if moved else 0)
                rows.append((n, moved, floor, floor_rss, secs, rss, ok))
                for f in files + others:
                    os.unlink(f)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print(f"coreq stacks --json of {a.samples} samples of one process ({a.coreq}; CPU seconds, median of {a.runs})")
    print("  floor: the same documents as processes of their own (other pids: read, merged, not compared);")
    print("  compare: samples - floor; ratio: the total time against the size before, linear: the sizes' ratio")
    print(f"{'threads':>8} {'case':>12} {'floor s':>8} {'samples s':>10} {'compare s':>10} {'floor MB':>9} "
          f"{'RSS MB':>7} {'ratio':>7} {'linear':>7}  result")
    prev = {}
    for n, moved, floor, floor_rss, secs, rss, ok in rows:
        cmp = secs - floor
        ratio, linear = (f"{secs / prev[moved][1]:.1f}", f"{n / prev[moved][0]:.1f}") if moved in prev else ("-", "-")
        prev[moved] = (n, secs)
        print(f"{n:>8} {'all moved' if moved else 'none moved':>12} {floor:>8.3f} {secs:>10.3f} {cmp:>10.3f} "
              f"{floor_rss / 1024:>9.1f} {rss / 1024:>7.1f} {ratio:>7} {linear:>7}  {'ok' if ok else 'WRONG RESULT'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
