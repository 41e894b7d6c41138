#!/usr/bin/env python3
"""How much of the stack the plugin's analysis removes, per level
(stack-analysis=none, basic, full) at -O0 and -O2, on the examples and
workloads (at their small scale): static figures from -fplugin-arg-memprof-stats (accesses in the
code, instrumented or skipped as stack), dynamic figures from the
runtime's stats=1 (executed accesses that still hit the stack), and the
fraction of executed stack accesses each level removes compared with
none.  Writes bench/results/stack-analysis.md and prints it."""

import argparse
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(HERE)
LEVELS = ("none", "basic", "full")
sys.path.insert(0, HERE)
from workloads import small_programs  # noqa: E402
from run import pkg_config  # noqa: E402


def measure(args, program, opt, level, work):
    name, files, flags, arguments = program
    compiler = args.cxx if files[0].endswith((".cc", ".C")) else args.cc
    binary = os.path.join(work, f"{name}{opt}-{level}")
    build = subprocess.run([compiler, opt, "-g", "-fplugin=" + pkg_config("--variable=plugin")[0],
                            "-fplugin-arg-memprof-stats",
                            f"-fplugin-arg-memprof-stack-analysis={level}",
                            *pkg_config("--cflags"), *flags, *files, "-o", binary,
                            "-lpthread", *pkg_config("--libs")], capture_output=True, text=True)
    # One summary line per translation unit: add them up.
    static = re.findall(r"(\d+) accesses, (\d+) instrumented .*?, (\d+) skipped as stack",
                        build.stderr)
    if build.returncode != 0 or not static:
        sys.exit(f"stack_analysis: cannot build {name}: {build.stderr[-400:]}")
    static = [sum(int(line[i]) for line in static) for i in range(3)]
    # Of those, skipped by the rules across frames (stack_params.cc).
    across = sum(int(a) + int(b) for a, b in re.findall(
        r"(\d+) pointer parameter: callers' frames, (\d+) points-to other frames",
        build.stderr))
    run = subprocess.run([binary, *arguments],
                         capture_output=True, text=True,
                         env=dict(os.environ, MEMPROF_OPTIONS="stats=1:write_profile=0"))
    dynamic = re.search(r"stats: (\d+) instrumented accesses .*?stack (\d+)", run.stderr)
    if run.returncode != 0 or not dynamic:
        sys.exit(f"stack_analysis: {binary} failed: {run.stderr[-400:]}")
    return {"accesses": static[0], "instrumented": static[1], "skipped": static[2],
            "across": across, "executed": int(dynamic.group(1)),
            "stack": int(dynamic.group(2))}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--cc", default="gcc")
    parser.add_argument("--cxx", default="g++")
    args = parser.parse_args()
    work = os.path.join(HERE, "work")
    os.makedirs(work, exist_ok=True)
    programs = small_programs("stack_analysis")
    lines = ["Stack accesses removed by the plugin's analysis "
             "(static: accesses in the code; dynamic: executed accesses that hit the stack)",
             "",
             "| program | -O | level | static accesses | instrumented | skipped as stack "
             "| of which across calls | executed accesses | executed on the stack "
             "| stack accesses removed |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    totals = {}
    for program in programs:
        for opt in ("-O0", "-O2"):
            figures = {level: measure(args, program, opt, level, work) for level in LEVELS}
            baseline = figures["none"]["stack"]
            for level in LEVELS:
                f = figures[level]
                removed = (1 - f["stack"] / baseline) * 100 if baseline else 0.0
                total = totals.setdefault((opt, level), [0, 0, 0, 0, 0])
                total[0] += f["accesses"]
                total[1] += f["skipped"]
                total[2] += f["stack"]
                total[3] += baseline
                total[4] += f["across"]
                lines.append(f"| {program[0]} | {opt} | {level} | {f['accesses']} "
                             f"| {f['instrumented']} | {f['skipped']} | {f['across']} "
                             f"| {f['executed']:,} "
                             f"| {f['stack']:,} | {removed:.1f}% |")
    lines += ["", "| -O | level | static: skipped / all accesses | of which across calls "
              "(pointer parameter: callers' frames, points-to other frames) "
              "| dynamic: stack accesses removed |", "|---|---|---|---|---|"]
    for (opt, level), (accesses, skipped, stack, baseline, across) in sorted(totals.items()):
        lines.append(f"| {opt} | {level} | {skipped}/{accesses} "
                     f"({100 * skipped / max(accesses, 1):.1f}%) | {across} "
                     f"| {100 * (1 - stack / baseline) if baseline else 0:.1f}% |")
    print("\n".join(lines))
    os.makedirs(os.path.join(HERE, "results"), exist_ok=True)
    with open(os.path.join(HERE, "results", "stack-analysis.md"), "w") as out:
        out.write("\n".join(lines) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
