#!/usr/bin/env python3
"""What tracking the heap's peak and timeline costs (runtime/peak.c), side
by side in one run: allocation-heavy programs built with the plugin --
bench/workloads/binary_trees.c and json_tree.c, producer_consumer.c (two
threads: the multi-threaded path), the real programs lua_tables (Debian's
Lua 5.4) and cjson_parse (Debian's cJSON), all at their small scale, and
bench/malloc_loop.c (2 million malloc/free pairs: the cost per call) --
run with peak=0 (full profiling without it), the default (peak=1,
peak_tolerance=1) and peak_tolerance=0 (an exact breakdown), interleaved
(one run of each in turn, ROUNDS rounds).  Measures each run's CPU time
(user + system, from wait4) and reports, per workload and configuration,
the median, and the median of the ratios to peak=0 taken round by round
(each with the peak=0 run of its own round: pairing keeps the ratio
meaningful when the machine's speed drifts) with their interquartile
range; the geometric mean of those over the workloads; and checks every
run's output against the first.  Writes bench/results/peak-overhead.md.
The machine is shared and noisy: compare ratios from one run."""

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(HERE)
sys.path.insert(0, HERE)
from workloads import WORKLOADS, prepare  # noqa: E402
from run import publish  # noqa: E402

CONFIGS = [("peak=0", "peak=0"), ("peak=1 (default)", ""),
           ("peak_tolerance=0", "peak_tolerance=0")]


def pkg_config(*args):
    env = dict(os.environ, PKG_CONFIG_PATH=TOP)
    return subprocess.run(["pkg-config", *args, "memprof"], env=env, check=True,
                          capture_output=True, text=True).stdout.split()


def cpu_time(command, env, cwd):
    """CPU seconds (user + system) of COMMAND, and its output."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        process = subprocess.Popen(command, env=env, cwd=cwd, stdout=out, stderr=err)
        _, status, usage = os.wait4(process.pid, 0)
        out.seek(0)
        err.seek(0)
        if os.waitstatus_to_exitcode(status) != 0:
            stderr = err.read().decode(errors="replace")
            raise SystemExit(f"bench-peak: {' '.join(command)} failed: {stderr[-2000:]}")
        return usage.ru_utime + usage.ru_stime, out.read()


def quartiles(values):
    """The first and third quartiles of VALUES."""
    if len(values) < 2:
        return values[0], values[0]
    cuts = statistics.quantiles(values, n=4)
    return cuts[0], cuts[2]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--cc", default="gcc")
    parser.add_argument("--runs", type=int, default=11,
                        help="interleaved rounds (default 11)")
    parser.add_argument("--workloads", default="binary_trees,json_tree,producer_consumer,"
                        "lua_tables,cjson_parse,malloc_loop")
    parser.add_argument("--output",
                        default=os.path.join(HERE, "results", "peak-overhead.md"))
    args = parser.parse_args()
    if args.runs < 1:
        sys.exit("bench-peak: --runs must be at least 1")
    names = args.workloads.split(",")
    known = {w.name for w in WORKLOADS} | {"malloc_loop"}
    unknown = sorted(set(names) - known)
    if unknown:
        sys.exit(f"bench-peak: unknown workload {', '.join(unknown)}; the workloads are "
                 f"{', '.join(sorted(known))}")
    work = os.path.join(HERE, "work", "peak")
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    plugin = ["-fplugin=" + pkg_config("--variable=plugin")[0], *pkg_config("--cflags")]
    src = prepare("bench-peak")
    binaries = {}
    for w in WORKLOADS:
        if w.name not in names:
            continue
        binary = os.path.join(work, w.name)
        subprocess.run(["g++" if w.cxx else args.cc, "-O2", "-g",
                        "-fno-optimize-sibling-calls", *plugin, *w.compile_flags(src),
                        *w.sources(src), "-o", binary, *w.libs, "-lpthread",
                        *pkg_config("--libs")], check=True)
        binaries[w.name] = (binary, w.command_arguments(w.small))
    if "malloc_loop" in names:
        binary = os.path.join(work, "malloc_loop")
        subprocess.run([args.cc, "-O2", "-g", "-fno-optimize-sibling-calls", *plugin,
                        os.path.join(HERE, "malloc_loop.c"), "-o", binary, "-lpthread",
                        *pkg_config("--libs")], check=True)
        binaries["malloc_loop"] = (binary, ["2000000"])
    base_env = {k: v for k, v in os.environ.items()
                if k not in ("LD_PRELOAD", "MEMPROF_OPTIONS")}
    times = {(w, c): [] for w in binaries for c, _ in CONFIGS}
    outputs = {}
    for round_number in range(args.runs):
        for name, (binary, arguments) in binaries.items():
            for label, options in CONFIGS:
                profile = os.path.join(work, f"{name}.profraw")
                env = dict(base_env, MEMPROF_OPTIONS=f"profile_file={profile}"
                           + (":" + options if options else ""))
                cpu, output = cpu_time([binary, *arguments], env, work)
                if outputs.setdefault(name, output) != output:
                    sys.exit(f"bench-peak: {name} with '{label}' printed {output[:200]!r}, "
                             f"not {outputs[name][:200]!r}")
                times[(name, label)].append(cpu)
        print(f"bench-peak: round {round_number + 1} of {args.runs} done", file=sys.stderr,
              flush=True)

    lines = ["# The cost of peak tracking", "",
             "Written by `make bench-peak` (bench/peak_overhead.py): CPU time "
             "(user + system) of the plugin build (the workloads at their small "
             "scale, malloc_loop with 2 million malloc/free pairs), "
             f"{args.runs} interleaved rounds; per configuration the median CPU time "
             "and the median of the ratios to `peak=0` (full profiling without peak "
             "tracking) taken round by round, with their interquartile range in "
             "brackets. Target: `peak=1` (the default) at most 1.03x.", "",
             "| workload | " + " | ".join(label for label, _ in CONFIGS) + " |",
             "|---|" + "---|" * len(CONFIGS)]
    ratios = {label: [] for label, _ in CONFIGS}
    for name in binaries:
        base = times[(name, "peak=0")]
        cells = []
        for label, _ in CONFIGS:
            values = times[(name, label)]
            paired = [a / b for a, b in zip(values, base)]
            ratio = statistics.median(paired)
            ratios[label].append(ratio)
            low, high = quartiles(paired)
            cells.append(f"{statistics.median(values):.3f} s, {ratio:.3f}x "
                         f"[{low:.3f}-{high:.3f}]")
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    lines.append("| geometric mean | " + " | ".join(
        f"{statistics.geometric_mean(ratios[label]):.3f}x" for label, _ in CONFIGS) + " |")
    publish("\n".join(lines) + "\n", args.output)


if __name__ == "__main__":
    main()
