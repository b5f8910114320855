#!/usr/bin/env python3
"""Times two shell commands alternately (A B, then B A, …) and prints medians and the A/B ratio.

    scripts/peers/alternate.py [--runs N] [--warmup K] --label LABEL 'COMMAND A' 'COMMAND B'

Each command runs through /bin/sh -c as a whole process; wall time comes from a monotonic clock
around it, CPU time (user + sys) and peak memory from the kernel's accounting of the finished
child (wait4). The order flips every round so drift in the machine's speed falls on both sides;
the ratio is the median of the per-round ratios A/B (below 1.0: A finished first).
Used by the scripts/peers/peer-* comparisons.
"""
import argparse
import os
import statistics
import subprocess
import tempfile
import time


def run(command):
    start = time.perf_counter()
    with tempfile.TemporaryFile() as output:
        child = subprocess.Popen(["/bin/sh", "-c", command], stdout=output, stderr=subprocess.STDOUT)
        _, status, usage = os.wait4(child.pid, 0)
        wall = time.perf_counter() - start
        output.seek(0)
        errors = output.read().decode(errors="replace")
    if status != 0:
        raise SystemExit(f"exit status {os.waitstatus_to_exitcode(status)} from: {command}\n{errors[-2000:]}")
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--warmup", type=int, default=1)
    parser.add_argument("--label", default="A vs B")
    parser.add_argument("a")
    parser.add_argument("b")
    options = parser.parse_args()
    for _ in range(options.warmup):
        run(options.a)
        run(options.b)
    a, b = [], []
    for index in range(options.runs):
        if index % 2 == 0:
            a.append(run(options.a))
            b.append(run(options.b))
        else:
            b.append(run(options.b))
            a.append(run(options.a))
    median = lambda values, i: statistics.median(v[i] for v in values)
    ratios = sorted(x[0] / y[0] for x, y in zip(a, b))
    print(f"== {options.label}  ({options.runs} alternating runs each)")
    print(f"   A: wall {median(a, 0) * 1000:8.1f} ms   cpu {median(a, 1) * 1000:8.1f} ms   peak {median(a, 2):6.1f} MiB")
    print(f"   B: wall {median(b, 0) * 1000:8.1f} ms   cpu {median(b, 1) * 1000:8.1f} ms   peak {median(b, 2):6.1f} MiB")
    print(f"   A/B wall: median {statistics.median(ratios):.3f}  (min {ratios[0]:.3f}, max {ratios[-1]:.3f});"
          f"  A's rate ÷ B's = {1 / statistics.median(ratios):.2f}x")


if __name__ == "__main__":
    main()
