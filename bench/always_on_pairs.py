#!/usr/bin/env python3
"""The always-on mode against gcc -O2 in interleaved pairs: each workload
built as bench/run.py builds it (gcc -O2; the runtime alone; direct
allocation calls), the three binaries run in turn PAIRS times
(sample_interval=524288 for the two always-on ones), and each always-on
run's CPU time (user + sys) and wall time divided by those of the gcc -O2
run beside it.  Prints the median ratio of the pairs and their range,
the median context switches of each binary (GNU time's %w + %c) and the
median peak RSS, and writes bench/results/always-on-pairs.md.

Why pairs: a workload whose threads hand work over through a mutex
(producer_consumer) runs in one of two modes on a 2-CPU machine, its
threads serialized on one processor (about 0.25 s of CPU) or spread
over both, waking each other through futexes (up to four times as
much), and which one depends on the other processes' load at that
moment: bench/run.py's medians of 5 runs, taken seconds apart, said
anything from 0.61x to 1.58x for one build.  A ratio taken run by run
against a run made just before it, and the median of many, is what
stays put."""

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from run import GNU_TIME, build, fail  # noqa: E402
from workloads import WORKLOADS, prepare  # noqa: E402

OPTIONS = "sample_interval=524288"
BUILDS = [("gcc -O2", "gcc"), ("always-on, runtime alone", "runtime"),
          ("always-on, direct allocation calls", "direct")]


def run(command, cwd, env):
    """One run of COMMAND in CWD: (peak RSS in KiB, context switches,
    wall seconds, its stdout); the files it left are removed.  GNU time
    starts it, so that the peak RSS is the program's, not this Python's
    (see run.py).  The caller takes the CPU time from os.times ()."""
    report = os.path.join(cwd, "..", "time.out")
    start = time.perf_counter()
    process = subprocess.Popen([GNU_TIME, "-q", "-f", "%M %w %c", "-o", report, *command],
                               cwd=cwd, env=env, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE)
    stdout, stderr = process.communicate()
    wall = time.perf_counter() - start
    if process.returncode != 0:
        fail(f"{' '.join(command)} failed with status {process.returncode}:\n"
             + stderr.decode(errors="replace")[-2000:])
    rss, voluntary, involuntary = (int(x) for x in open(report).read().split()[-3:])
    for name in os.listdir(cwd):
        os.unlink(os.path.join(cwd, name))
    return rss, voluntary + involuntary, wall, stdout


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--pairs", type=int, default=21)
    parser.add_argument("--workloads",
                        default="producer_consumer,hash_churn,binary_trees,json_tree,lua_tables")
    args = parser.parse_args()
    wanted = args.workloads.split(",")
    unknown = set(wanted) - {w.name for w in WORKLOADS}
    if unknown:
        fail(f"unknown workload {', '.join(sorted(unknown))}")
    if not os.access(GNU_TIME, os.X_OK):
        fail(f"{GNU_TIME} is missing (Debian package: time)")
    src = prepare("bench")
    work = os.path.join(HERE, "work", "always-on-pairs")
    shutil.rmtree(work, ignore_errors=True)
    cwd = os.path.join(work, "run")
    os.makedirs(cwd)
    started = time.time()
    load = [os.getloadavg()[0]]
    lines = ["# The always-on mode against gcc -O2, interleaved pairs",
             "",
             f"`make bench-always-on`: each workload's three builds (bench/run.py's "
             f"gcc -O2, runtime alone and direct allocation calls, the last two with "
             f"MEMPROF_OPTIONS={OPTIONS}) run in turn {args.pairs} times; each ratio is "
             "an always-on run's CPU time (user + sys) or wall time over the gcc -O2 "
             "run of the same turn, the median of the pairs with their range. Context "
             "switches (voluntary + involuntary) and peak RSS: medians of the runs.",
             "",
             "| workload | configuration | CPU ratio | wall ratio | context switches | "
             "peak RSS |",
             "|---|---|---|---|---|---|"]
    for workload in (w for w in WORKLOADS if w.name in wanted):
        arguments = workload.command_arguments(workload.scale)
        binaries = {}
        for _, build_name in BUILDS:
            binaries[build_name] = os.path.join(work, f"{workload.name}.{build_name}")
            build(workload, build_name, src, binaries[build_name])
        # (CPU s, wall s, switches, KiB) of each build's runs, in turn.
        samples = {label: [] for label, _ in BUILDS}
        expected = None
        for _ in range(args.pairs):
            for label, build_name in BUILDS:
                env = dict(os.environ)
                env.pop("MEMPROF_OPTIONS", None)
                if build_name != "gcc":
                    env["MEMPROF_OPTIONS"] = OPTIONS
                before = os.times()
                rss, switches, wall, stdout = run([binaries[build_name], *arguments], cwd, env)
                after = os.times()
                cpu = (after.children_user - before.children_user
                       + after.children_system - before.children_system)
                if expected is None:
                    expected = stdout
                elif stdout != expected:
                    fail(f"{workload.name} ({label}) printed {stdout[:200]!r}, "
                         f"not {expected[:200]!r}")
                samples[label].append((cpu, wall, switches, rss))
            load.append(os.getloadavg()[0])
        baseline = samples[BUILDS[0][0]]
        for label, _ in BUILDS:
            runs = samples[label]
            cells = []
            for index in (0, 1):
                if label == BUILDS[0][0]:
                    cells.append(f"{statistics.median(r[index] for r in runs):.3f} s")
                    continue
                ratios = [r[index] / b[index] for r, b in zip(runs, baseline)]
                cells.append(f"{statistics.median(ratios):.3f}x "
                             f"[{min(ratios):.2f}-{max(ratios):.2f}]")
            switches = statistics.median(r[2] for r in runs)
            rss = statistics.median(r[3] for r in runs) / 1024
            lines.append(f"| {workload.name} {workload.scale} | {label} | {cells[0]} | "
                         f"{cells[1]} | {switches:.0f} | {rss:.1f} MiB |")
        print(f"always-on pairs: {workload.name} done ({time.time() - started:.0f} s)",
              file=sys.stderr, flush=True)
    lines += ["", f"{time.time() - started:.0f} s; load average (1 min) from "
              f"{min(load):.1f} to {max(load):.1f} during the runs."]
    text = "\n".join(lines) + "\n"
    print(text)
    results = os.path.join(HERE, "results")
    os.makedirs(results, exist_ok=True)
    with open(os.path.join(results, "always-on-pairs.md"), "w") as out:
        out.write(text)


if __name__ == "__main__":
    main()
