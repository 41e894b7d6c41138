#!/usr/bin/env python3
"""What tracking the heap's peak and timeline costs (runtime/peak.c): two
allocation-heavy workloads (bench/workloads/binary_trees.c and
json_tree.c, at their small scale) and bench/malloc_loop.c (2 million
malloc/free pairs: the cost per call) built with the plugin, run with the
default options (peak=1, peak_tolerance=1), with peak=0 (full profiling
without it), and with peak_tolerance=0 (an exact breakdown), interleaved
(one run of each in turn, ROUNDS rounds).  Measures each run's CPU time
(user + system, from wait4) and reports the medians and the ratios to
peak=0; writes bench/results/peak-overhead.md.  The machine is shared
and noisy: compare ratios from one run."""

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(HERE)
sys.path.insert(0, HERE)
from workloads import WORKLOADS  # noqa: E402

CONFIGS = [("peak=0", "peak=0"), ("peak=1 (default)", ""),
           ("peak_tolerance=0", "peak_tolerance=0")]


def pkg_config(*args):
    env = dict(os.environ, PKG_CONFIG_PATH=TOP)
    return subprocess.run(["pkg-config", *args, "memprof"], env=env, check=True,
                          capture_output=True, text=True).stdout.split()


def cpu_time(command, env, cwd):
    """CPU seconds (user + system) of COMMAND, and its wall seconds."""
    start = time.perf_counter()
    process = subprocess.Popen(command, env=env, cwd=cwd, stdout=subprocess.DEVNULL,
                               stderr=subprocess.PIPE)
    _, status, usage = os.wait4(process.pid, 0)
    wall = time.perf_counter() - start
    stderr = process.stderr.read().decode(errors="replace")
    process.stderr.close()
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"bench: {' '.join(command)} failed: {stderr[-2000:]}")
    return usage.ru_utime + usage.ru_stime, wall


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--cc", default="gcc")
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--workloads", default="binary_trees,json_tree,malloc_loop")
    parser.add_argument("--output",
                        default=os.path.join(HERE, "results", "peak-overhead.md"))
    args = parser.parse_args()
    work = os.path.join(HERE, "work", "peak")
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    plugin = ["-fplugin=" + pkg_config("--variable=plugin")[0], *pkg_config("--cflags")]
    names = args.workloads.split(",")
    programs = [(w.name, w.source, str(w.small)) for w in WORKLOADS if w.name in names]
    if "malloc_loop" in names:
        programs.append(("malloc_loop", os.path.join(HERE, "malloc_loop.c"), "2000000"))
    binaries = {}
    for name, source, argument in programs:
        binary = os.path.join(work, name)
        subprocess.run([args.cc, "-O2", "-g", "-fno-optimize-sibling-calls", *plugin,
                        source, "-o", binary, "-lpthread",
                        *pkg_config("--libs")], check=True)
        binaries[name] = (binary, argument)
    base_env = {k: v for k, v in os.environ.items()
                if k not in ("LD_PRELOAD", "MEMPROF_OPTIONS")}
    times = {(w, c): [] for w in binaries for c, _ in CONFIGS}
    for round_number in range(args.runs):
        for name, (binary, scale) in binaries.items():
            for label, options in CONFIGS:
                profile = os.path.join(work, f"{name}.profraw")
                env = dict(base_env, MEMPROF_OPTIONS=f"profile_file={profile}"
                           + (":" + options if options else ""))
                cpu, _ = cpu_time([binary, scale], env, work)
                times[(name, label)].append(cpu)
        print(f"round {round_number + 1} of {args.runs} done", file=sys.stderr)

    lines = ["# The cost of peak tracking", "",
             "Written by `make bench-peak` (bench/peak_overhead.py): CPU time "
             "(user + system) of the plugin build (the workloads at their small "
             "scale, malloc_loop with 2 million malloc/free pairs), "
             f"median of {args.runs} interleaved runs; ratios to `peak=0` (full "
             "profiling without peak tracking).", "",
             "| workload | " + " | ".join(label for label, _ in CONFIGS) + " |",
             "|---|" + "---|" * len(CONFIGS)]
    for name in binaries:
        base = statistics.median(times[(name, "peak=0")])
        cells = []
        for label, _ in CONFIGS:
            median = statistics.median(times[(name, label)])
            cells.append(f"{median:.3f} s ({median / base:.3f}x)")
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    text = "\n".join(lines) + "\n"
    print(text)
    os.makedirs(os.path.dirname(args.output), exist_ok=True)
    with open(args.output, "w") as out:
        out.write(text)


if __name__ == "__main__":
    main()
