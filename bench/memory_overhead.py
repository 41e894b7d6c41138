#!/usr/bin/env python3
"""What the profiler adds to a program's memory: peak RSS of small-block
workloads built three ways -- native (gcc -O2), the runtime alone
(linked with libmemprof, no plugin: allocations recorded, no access
counts) and full profiling (the plugin and the runtime) -- each run ROUNDS
times interleaved, the median peak RSS (GNU time's %M) reported
with its ratio to native and the issue 14 verdict: full profiling within
1.5x native + 64 MiB.  Also the bytes of glibc memory one block of each
small size costs (malloc_usable_size is not it: the runtime's block
header and alignment are inside glibc's chunk), measured by
bench/workloads/small_blocks.c's peak.  Writes
bench/results/memory-overhead.md."""

import argparse
import os
import shutil
import statistics
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(HERE)
sys.path.insert(0, HERE)
from workloads import WORKLOADS, prepare  # noqa: E402
from run import pkg_config, publish  # noqa: E402

# The small-block workloads: (name, scale).  small_blocks keeps about
# three million 16-48 byte blocks alive at once.
DEFAULT_WORKLOADS = "small_blocks,binary_trees,json_tree,hash_churn,strings,containers"
SMALL_BLOCKS_SCALE = "1"
LIMIT_RATIO = 1.5
LIMIT_SLACK_KIB = 64 * 1024


def peak_rss(command, env, cwd, report_path):
    """Peak RSS in KiB of COMMAND, as GNU time reports it; exits naming
    COMMAND when it fails.  Not wait4 here: the kernel counts the memory
    of the process that spawns a program in that program's ru_maxrss
    (this Python's, about 15 MiB), so a small program's peak would read
    as ours."""
    result = subprocess.run(["/usr/bin/time", "-f", "%M", "-o", report_path, *command],
                            env=env, cwd=cwd, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True)
    if result.returncode != 0:
        raise SystemExit(f"bench-memory: {' '.join(command)} failed: "
                         f"{result.stderr[-2000:]}")
    with open(report_path) as report:
        return int(report.read().split()[-1])


def after_frees(args, work, plugin, runtime, base_env, compared, optioned):
    """The resident set at the peak and after every block is freed, of
    bench/free_small_blocks.c (three million 16-48 byte blocks) built
    native and with full profiling, each run ARGS.runs times interleaved
    (medians); the lines of its table."""
    source = os.path.join(HERE, "free_small_blocks.c")
    builds = {}
    for label, extra in (("native", []), ("full profiling", [*plugin, *runtime])):
        binary = os.path.join(work, f"free_small_blocks.{label.split()[0]}")
        command = [args.cc, "-O2", "-g", source, "-o", binary, *extra]
        result = subprocess.run(command, capture_output=True, text=True)
        if result.returncode != 0:
            raise SystemExit(f"bench-memory: cannot build free_small_blocks ({label}):\n"
                             f"  {' '.join(command)}\n{result.stderr[-2000:]}")
        builds[label] = binary
    labels = ["native", "full profiling"]
    if args.compare_runtime:
        labels.append(compared)
    if args.compare_options:
        labels.append(optioned)
    figures = {label: ([], []) for label in labels}
    for _ in range(args.runs):
        for label in labels:
            env = dict(base_env, MEMPROF_OPTIONS="write_profile=0")
            if label == optioned:
                env["MEMPROF_OPTIONS"] += ":" + args.compare_options
            if label == compared:
                env["LD_LIBRARY_PATH"] = os.path.abspath(args.compare_runtime)
            binary = builds["native" if label == "native" else "full profiling"]
            result = subprocess.run([binary], env=env, cwd=work, capture_output=True,
                                    text=True)
            words = result.stdout.split()
            if result.returncode != 0 or len(words) != 4:
                raise SystemExit(f"bench-memory: free_small_blocks ({label}) failed: "
                                 f"{result.stdout[-500:]}{result.stderr[-2000:]}")
            figures[label][0].append(int(words[1]))
            figures[label][1].append(int(words[3]))
    cells = [f"{statistics.median(figures[label][0]) / 1024:.1f} MiB, "
             f"{statistics.median(figures[label][1]) / 1024:.1f} MiB"
             for label in labels]
    return ["", "## After the frees", "",
            "bench/free_small_blocks.c: three million 16-48 byte blocks written, "
            "then all freed; its resident set (/proc/self/statm) at the peak and "
            f"after the frees, median of {args.runs} interleaved runs.", "",
            "| program | " + " | ".join(f"{label}: peak, after" for label in labels) + " |",
            "|---|" + "---|" * len(labels),
            "| free_small_blocks | " + " | ".join(cells) + " |"]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--cc", default="gcc")
    parser.add_argument("--cxx", default="g++")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--workloads", default=DEFAULT_WORKLOADS)
    parser.add_argument("--compare-runtime", metavar="DIR",
                        help="also run the full-profiling build with the "
                        "libmemprof.so in DIR (another build of the runtime, "
                        "e.g. before a layout change), side by side")
    parser.add_argument("--compare-options", metavar="OPTIONS",
                        help="also run the full-profiling build with these "
                        "MEMPROF_OPTIONS added (e.g. small_slots=0: every block "
                        "with a header), side by side")
    parser.add_argument("--output",
                        default=os.path.join(HERE, "results", "memory-overhead.md"))
    args = parser.parse_args()
    work = os.path.join(HERE, "work", "memory")
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    plugin = ["-fplugin=" + pkg_config("--variable=plugin")[0], *pkg_config("--cflags")]
    runtime = pkg_config("--libs")
    names = args.workloads.split(",")
    src = prepare("bench-memory") if any(
        w.gcc_dirs for w in WORKLOADS if w.name in names) else None
    programs = []
    for name in names:
        if name == "small_blocks":
            programs.append((name, [os.path.join(HERE, "workloads", "small_blocks.c")],
                             [], False, SMALL_BLOCKS_SCALE))
            continue
        found = [w for w in WORKLOADS if w.name == name]
        if not found:
            raise SystemExit(f"bench-memory: --workloads: no workload named {name!r}")
        w = found[0]
        programs.append((name, w.sources(src), w.compile_flags(src), w.cxx, str(w.scale)))

    configs = [("native", [], []), ("runtime alone", [], runtime),
               ("full profiling", plugin, runtime)]
    binaries = {}
    for name, sources, flags, cxx, scale in programs:
        for label, compile_extra, link_extra in configs:
            binary = os.path.join(work, f"{name}.{label.split()[0]}")
            command = [args.cxx if cxx else args.cc, "-O2", "-g", *compile_extra,
                       *flags, *sources, "-o", binary, "-lpthread", *link_extra]
            result = subprocess.run(command, capture_output=True, text=True)
            if result.returncode != 0:
                raise SystemExit(f"bench-memory: cannot build {name} ({label}):\n"
                                 f"  {' '.join(command)}\n{result.stderr[-2000:]}")
            binaries[(name, label)] = (binary, scale)

    base_env = {k: v for k, v in os.environ.items()
                if k not in ("LD_PRELOAD", "MEMPROF_OPTIONS", "LD_LIBRARY_PATH")}
    compared = "full, --compare-runtime"
    if args.compare_runtime:
        if not os.path.isfile(os.path.join(args.compare_runtime, "libmemprof.so")):
            raise SystemExit(f"bench-memory: --compare-runtime: no libmemprof.so in "
                             f"{args.compare_runtime}")
        for name, *_ in programs:
            binaries[(name, compared)] = binaries[(name, "full profiling")]
    optioned = f"full, {args.compare_options}"
    if args.compare_options:
        for name, *_ in programs:
            binaries[(name, optioned)] = binaries[(name, "full profiling")]
    peaks = {key: [] for key in binaries}
    for round_number in range(args.runs):
        for (name, label), (binary, scale) in binaries.items():
            profile = os.path.join(work, f"{name}.profraw")
            env = dict(base_env, MEMPROF_OPTIONS=f"profile_file={profile}")
            if label == optioned:
                env["MEMPROF_OPTIONS"] += ":" + args.compare_options
            if label == compared:
                # The binaries' RUNPATH yields to LD_LIBRARY_PATH.
                env["LD_LIBRARY_PATH"] = os.path.abspath(args.compare_runtime)
            peaks[(name, label)].append(
                peak_rss([binary, scale], env, work, os.path.join(work, "peak")))
        print(f"round {round_number + 1} of {args.runs} done: "
              + ", ".join(f"{name} {label} {peaks[(name, label)][-1] // 1024} MiB"
                          for name, label in binaries), file=sys.stderr)

    lines = ["# Memory overhead on small-block programs", "",
             "Written by `make bench-memory` (bench/memory_overhead.py): peak RSS "
             f"(GNU time's %M), median of {args.runs} interleaved runs, of each workload "
             "built native (gcc -O2), with the runtime alone (linked with libmemprof, "
             "no plugin) and with full profiling (plugin + runtime, default options). "
             f"The goal (issue 14): full profiling <= {LIMIT_RATIO}x native + "
             f"{LIMIT_SLACK_KIB // 1024} MiB.", "",
             "| workload | native | runtime alone | full profiling | limit | verdict |"
             + (" full, runtime in --compare-runtime |" if args.compare_runtime else "")
             + (f" full, {args.compare_options} |" if args.compare_options else ""),
             "|---|---|---|---|---|---|" + ("---|" if args.compare_runtime else "")
             + ("---|" if args.compare_options else "")]
    failures = 0
    for name, *_ in programs:
        native = statistics.median(peaks[(name, "native")])
        alone = statistics.median(peaks[(name, "runtime alone")])
        full = statistics.median(peaks[(name, "full profiling")])
        limit = LIMIT_RATIO * native + LIMIT_SLACK_KIB
        verdict = "within" if full <= limit else "OVER"
        failures += full > limit
        lines.append(f"| {name} | {native / 1024:.1f} MiB | {alone / 1024:.1f} MiB "
                     f"({alone / native:.2f}x) | {full / 1024:.1f} MiB "
                     f"({full / native:.2f}x) | {limit / 1024:.1f} MiB | {verdict} |"
                     + "".join(f" {statistics.median(peaks[(name, label)]) / 1024:.1f} MiB "
                               f"({statistics.median(peaks[(name, label)]) / native:.2f}x) |"
                               for label, wanted in ((compared, args.compare_runtime),
                                                     (optioned, args.compare_options))
                               if wanted))
    lines += ["", f"{len(programs) - failures} of {len(programs)} workloads within "
              "the limit."]
    lines += after_frees(args, work, plugin, runtime, base_env, compared, optioned)
    publish("\n".join(lines) + "\n", args.output)


if __name__ == "__main__":
    main()
