#!/usr/bin/env python3
"""What profiling modules cost (docs/modules.md), in two tables written to
bench/results/modules.md:

1. The event queue's throughput: bench/event_throughput.c (COUNT heap
   stores, one store event each, from 1 and 2 threads) built with
   -fplugin-arg-memprof-events=store, run without a module (the calls
   alone) and with bench/null_module.c (a module that reads every event):
   events per second of wall time, and CPU nanoseconds per event over the
   run without a module.
2. Each example module's slowdown on bench workloads (binary_trees,
   json_tree, and zlib_roundtrip: zlib from Debian's gcc-12-source, at
   their small scale), next to the heap profile's: CPU time (user +
   system, from wait4) of the build without the plugin, the plugin's
   (the heap profile), the plugin with each module's events
   (@modules/NAME.events) run with the module, and the lifetime build
   run without a module (the events' calls alone).
3. The dependences module on 2 partitioned workers (module_workers=2)
   next to 1: wall and CPU time, the wall-time speedup.

Runs are interleaved (one of each configuration in turn, --runs rounds);
medians.  The machine is shared and noisy: compare ratios of one run."""

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
from workloads import WORKLOADS, prepare  # noqa: E402
from run import pkg_config, publish  # noqa: E402

MODULES = ["dependences", "lifetime"]


def measure(command, options, cwd):
    """CPU seconds (user + system) and wall seconds of COMMAND."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("LD_PRELOAD", "MEMPROF_OPTIONS")}
    env["MEMPROF_OPTIONS"] = options
    start = time.perf_counter()
    process = subprocess.Popen(command, env=env, cwd=cwd,
                               stdout=subprocess.DEVNULL,
                               stderr=subprocess.PIPE)
    _, status, usage = os.wait4(process.pid, 0)
    wall = time.perf_counter() - start
    stderr = process.stderr.read().decode(errors="replace")
    process.stderr.close()
    if os.waitstatus_to_exitcode(status) != 0 or "memprof: module" in stderr:
        raise SystemExit(f"bench: {' '.join(command)} ({options}) failed: "
                         f"{stderr[-2000:]}")
    return usage.ru_utime + usage.ru_stime, wall


def build(cc, sources, output, flags):
    """The C workloads only (the modules' test programs are C too)."""
    subprocess.run([cc, "-O2", "-g", *flags, *sources, "-o", output,
                    "-lpthread", "-lm"], check=True)


def throughput(args, work):
    plugin = ["-fplugin=" + pkg_config("--variable=plugin")[0],
              *pkg_config("--cflags")]
    binary = os.path.join(work, "event_throughput")
    subprocess.run([args.cc, "-O1", "-fno-tree-vectorize", *plugin,
                    "-fplugin-arg-memprof-events=store",
                    os.path.join(HERE, "event_throughput.c"), "-o", binary,
                    "-lpthread", *pkg_config("--libs")], check=True)
    module = os.path.join(work, "null.so")
    subprocess.run([args.cc, "-shared", "-fPIC", "-O2",
                    *pkg_config("--cflags"), "-o", module,
                    os.path.join(HERE, "null_module.c")], check=True)
    configs = [("no module", "write_profile=0"),
               ("null module", f"write_profile=0:module={module}")]
    times = {(t, c): [] for t in (1, 2) for c, _ in configs}
    for _ in range(args.runs):
        for threads in (1, 2):
            for label, options in configs:
                times[(threads, label)].append(measure(
                    [binary, str(args.events), str(threads)], options, work))
    lines = ["## The event queue", "",
             f"bench/event_throughput.c: {args.events:,} heap stores, one "
             "store event each, from 1 and 2 threads; bench/null_module.c "
             "reads every event. Medians of "
             f"{args.runs} interleaved runs.", "",
             "| producer threads | wall, no module | wall, null module | "
             "events/s (wall) | CPU, no module | CPU, null module | "
             "CPU ns per event |", "|---|---|---|---|---|---|---|"]
    for threads in (1, 2):
        base_cpu = statistics.median(c for c, _ in times[(threads, "no module")])
        base_wall = statistics.median(w for _, w in times[(threads, "no module")])
        cpu = statistics.median(c for c, _ in times[(threads, "null module")])
        wall = statistics.median(w for _, w in times[(threads, "null module")])
        lines.append(f"| {threads} | {base_wall:.3f} s | {wall:.3f} s | "
                     f"{args.events / wall / 1e6:.1f} M | {base_cpu:.3f} s | "
                     f"{cpu:.3f} s | "
                     f"{(cpu - base_cpu) / args.events * 1e9:.1f} |")
    return lines


def modules_cost(args, work):
    src = prepare("bench-modules")
    plugin = ["-fplugin=" + pkg_config("--variable=plugin")[0],
              *pkg_config("--cflags")]
    libs = pkg_config("--libs")
    names = args.workloads.split(",")
    shared = {}
    for module in MODULES:
        shared[module] = os.path.join(work, module + ".so")
        subprocess.run([args.cc, "-shared", "-fPIC", "-O2",
                        *pkg_config("--cflags"), "-o", shared[module],
                        os.path.join(TOP, "modules", module + ".c")],
                       check=True)
    configs = [("no plugin", "plain", ""),
               ("heap profile", "heap", "")]
    for module in MODULES:
        configs.append((module, module, f"module={shared[module]}"))
    configs.append(("dependences, 2 workers", "dependences",
                    f"module={shared['dependences']}:module_workers=2"))
    configs.append(("lifetime events, no module", "lifetime", ""))
    binaries = {}
    for workload in WORKLOADS:
        if workload.name not in names:
            continue
        sources = workload.sources(src)
        flags = workload.compile_flags(src)
        for build_name, extra in [("plain", []), ("heap", plugin + libs)] + [
                (m, plugin + ["-fplugin-arg-memprof-events=@" + os.path.join(
                    TOP, "modules", m + ".events")] + libs) for m in MODULES]:
            output = os.path.join(work, f"{workload.name}.{build_name}")
            build(args.cc, sources, output, flags + extra)
            binaries[(workload.name, build_name)] = (output, str(workload.small))
    times = {(w, label): [] for w in names for label, _, _ in configs}
    for round_number in range(args.runs):
        for name in names:
            for label, build_name, options in configs:
                binary, scale = binaries[(name, build_name)]
                out = os.path.join(work, f"{name}.{label.split()[0]}"
                                   f"{label.count('2 workers')}.txt")
                opts = ("write_profile=0:" + options + f":module_args=out={out}"
                        if options else "write_profile=0")
                times[(name, label)].append(
                    measure([binary, scale], opts, work))
        print(f"round {round_number + 1} of {args.runs} done", file=sys.stderr)
    lines = ["## The modules' cost on workloads", "",
             "CPU time (user + system), median of "
             f"{args.runs} interleaved runs, at the workloads' small scale, "
             "built at -O2; the ratio to the heap profile's in parentheses. "
             "The heap profile runs in every column that has the plugin "
             "(write_profile=0: no file written).", "",
             "| workload | " + " | ".join(l for l, _, _ in configs) + " |",
             "|---|" + "---|" * len(configs)]
    def median(name, label, which=0):
        return statistics.median(t[which] for t in times[(name, label)])

    for name in names:
        heap = median(name, "heap profile")
        cells = []
        for label, _, _ in configs:
            cpu = median(name, label)
            cells.append(f"{cpu:.3f} s ({cpu / heap:.2f}x)")
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    lines += ["", "## The dependences module on partitioned workers", "",
              "The same runs: dependences on one backend thread and on 2 "
              "workers (module_workers=2, 4 KiB granules). Wall time is what "
              "workers shorten (CPU time grows: each worker reads every "
              "buffer); the machine has 2 cores, shared.", "",
              "| workload | wall, 1 worker | wall, 2 workers | speedup "
              "(wall) | CPU, 1 worker | CPU, 2 workers |",
              "|---|---|---|---|---|---|"]
    for name in names:
        one, two = "dependences", "dependences, 2 workers"
        lines.append(f"| {name} | {median(name, one, 1):.3f} s | "
                     f"{median(name, two, 1):.3f} s | "
                     f"{median(name, one, 1) / median(name, two, 1):.2f}x | "
                     f"{median(name, one):.3f} s | {median(name, two):.3f} s |")
    return lines


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--cc", default="gcc")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--events", type=int, default=50000000)
    parser.add_argument("--workloads",
                        default="binary_trees,json_tree,zlib_roundtrip")
    parser.add_argument("--output",
                        default=os.path.join(HERE, "results", "modules.md"))
    args = parser.parse_args()
    work = os.path.join(HERE, "work", "modules")
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    lines = ["# What profiling modules cost", "",
             "Written by `make bench-modules` (bench/modules_overhead.py).", ""]
    lines += throughput(args, work) + [""] + modules_cost(args, work)
    publish("\n".join(lines) + "\n", args.output)


if __name__ == "__main__":
    main()
