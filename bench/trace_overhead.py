#!/usr/bin/env python3
"""What recording every malloc call costs: a malloc-heavy program
(bench/workloads/binary_trees.c, scaled to about 1 s natively) run
natively, under heaptrack, and under LD_PRELOAD of libmemprof.so with
trace=1, interleaved (ROUNDS runs of each, in turn), with the runtime's
other costs separated: the runtime alone with profile=0 (its allocator:
64-byte headers and granules), tracing on top of that (trace=1:profile=0,
what the trace itself costs), and profiling (a stack capture per
allocation) with and without the trace.  Prints the median wall times,
the ratios to the native run and to heaptrack, and writes
bench/results/trace-overhead.md.  The machine is shared and noisy:
compare ratios from one run."""

import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(HERE)
LIBMEMPROF = os.path.join(TOP, "runtime", "libmemprof.so")


def timed(command, env):
    start = time.perf_counter()
    result = subprocess.run(command, env=env, capture_output=True, text=True)
    elapsed = time.perf_counter() - start
    if result.returncode != 0:
        raise SystemExit(f"bench: {' '.join(command)} failed ({result.returncode}): "
                         f"{result.stderr[-2000:]}")
    return elapsed, result


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--cc", default="gcc")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--workload", default="binary_trees.c")
    parser.add_argument("--scale", type=float, default=0,
                        help="the workload's scale (default: about 1 s natively)")
    parser.add_argument("--no-profiling", action="store_true",
                        help="skip the two configurations that capture stacks (slow)")
    args = parser.parse_args()

    if shutil.which("heaptrack") is None:
        raise SystemExit("bench: heaptrack is not installed: scripts/install-deps --bench")
    work = os.path.join(HERE, "work", "trace")
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    binary = os.path.join(work, "workload")
    subprocess.run([args.cc, "-O2", "-g", os.path.join(HERE, "workloads", args.workload),
                    "-o", binary], check=True)
    base_env = {k: v for k, v in os.environ.items()
                if k not in ("LD_PRELOAD", "MEMPROF_OPTIONS")}

    scale = args.scale
    if scale <= 0:
        elapsed, _ = timed([binary, "0.1"], base_env)
        scale = round(max(0.01, min(10.0, 0.1 / max(elapsed, 1e-3))), 3)
    trace_file = os.path.join(work, "app.trace.zst")

    def memprof(options):
        return dict(base_env, LD_PRELOAD=LIBMEMPROF,
                    MEMPROF_OPTIONS=options + f":trace_file={trace_file}"
                    f":profile_file={work}/app.%p.profraw:verbosity=1")

    configurations = [
        ("native", [binary], base_env),
        ("heaptrack", ["heaptrack", "-o", os.path.join(work, "heaptrack")], base_env),
        ("libmemprof trace=1 (profile=0)", [binary], memprof("trace=1:profile=0")),
        ("libmemprof alone (profile=0, no trace)", [binary], memprof("profile=0")),
    ]
    if not args.no_profiling:
        configurations += [
            ("libmemprof trace=1 with profiling", [binary], memprof("trace=1:write_profile=0")),
            ("libmemprof profiling alone (no trace)", [binary], memprof("write_profile=0")),
        ]
    times = {name: [] for name, _, _ in configurations}
    outputs, calls, trace_size, heaptrack_size = {}, None, None, None
    for round_number in range(args.runs):
        for name, command, env in configurations:
            full = command + ([binary] if name == "heaptrack" else []) + [str(scale)]
            elapsed, result = timed(full, env)
            times[name].append(elapsed)
            stdout = result.stdout
            if name == "heaptrack":
                stdout = "\n".join(line for line in stdout.splitlines()
                                   if line.startswith("binary_trees")
                                   or line.startswith("hash_churn")) + "\n"
                files = [f for f in os.listdir(work) if f.startswith("heaptrack")]
                if files:
                    heaptrack_size = os.path.getsize(os.path.join(work, files[0]))
                    for f in files:
                        os.unlink(os.path.join(work, f))
            outputs.setdefault(stdout, []).append(name)
            if name.startswith("libmemprof trace=1 (profile=0)"):
                match = re.search(r"trace written to .*: (\d+) calls", result.stderr)
                if match:
                    calls = int(match.group(1))
                trace_size = os.path.getsize(trace_file)
            for leftover in os.listdir(work):
                if leftover.endswith(".zst") or ".profraw" in leftover:
                    os.unlink(os.path.join(work, leftover))
        print(f"bench: round {round_number + 1} of {args.runs} done", file=sys.stderr)
    if len(outputs) != 1:
        raise SystemExit(f"bench: the configurations printed different results: {outputs}")

    median = {name: statistics.median(values) for name, values in times.items()}
    native, heaptrack = median["native"], median["heaptrack"]
    lines = [
        f"{args.workload} at scale {scale} ({calls:,} malloc and free calls recorded), "
        f"median of {args.runs} interleaved runs of each; "
        f"{os.cpu_count()} CPUs, shared with other work.",
        "",
        "| configuration | median s | vs native | vs heaptrack |",
        "|---|---|---|---|",
    ]
    for name, _, _ in configurations:
        lines.append(f"| {name} | {median[name]:.3f} | {median[name] / native:.2f}x | "
                     f"{median[name] / heaptrack:.2f}x |")
    trace_only = median["libmemprof trace=1 (profile=0)"]
    runtime_only = median["libmemprof alone (profile=0, no trace)"]
    lines += [
        "",
        f"- Tracing with libmemprof (trace=1:profile=0) takes {trace_only / heaptrack:.2f}x "
        f"heaptrack's time ({heaptrack / trace_only:.1f}x faster).",
        f"- The trace's own cost: {(trace_only - runtime_only) / calls * 1e9:.1f} ns per call "
        f"over the runtime alone ({trace_only - runtime_only:.3f} s for {calls:,} calls), "
        f"the writer thread's compression included.",
        f"- The runtime alone (profile=0: its allocator, 64-byte headers and granules) costs "
        f"{runtime_only / native:.2f}x native.",
    ]
    if not args.no_profiling:
        with_profiling = median["libmemprof trace=1 with profiling"]
        profiling = median["libmemprof profiling alone (no trace)"]
        lines.append(
            f"- Profiling on top (a libunwind stack capture per allocation, trace=1 with "
            f"profile=1): {with_profiling / native:.2f}x native, "
            f"{with_profiling / heaptrack:.2f}x heaptrack; the trace adds "
            f"{(with_profiling - profiling) / calls * 1e9:.1f} ns per call to profiling.")
    lines.append(f"- Files: the trace {trace_size:,} bytes "
                 f"({trace_size / calls:.2f} bytes per call), heaptrack's "
                 f"{heaptrack_size:,} bytes (no stacks in the trace; heaptrack records one "
                 f"per allocation).")
    lines += ["", f"Command: `make bench-trace` (bench/trace_overhead.py --runs {args.runs})."]
    print("\n".join(lines))
    results = os.path.join(HERE, "results")
    os.makedirs(results, exist_ok=True)
    with open(os.path.join(results, "trace-overhead.md"), "w") as out:
        out.write("# Trace recording against heaptrack\n\n" + "\n".join(lines) + "\n")
    shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
