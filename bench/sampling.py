#!/usr/bin/env python3
"""Profiling overhead with and without allocation sampling, and what
sampling keeps: every example and workload (at its small scale) is built with gcc -O2 (the
baseline) and with the plugin and the runtime, then run, interleaved, as
the baseline, fully profiled, and with sample_interval=524288.  For each:
median wall time of RUNS runs and its ratio to the baseline; and whether
the top 10 contexts by bytes and by accesses of the sampled profile are
those of the full profile: every context of one top 10 that holds at
least 1% of the total is in the other's top 10 (below 1%, ranks are
within any sampler's noise).  Writes
bench/results/sampling.md and prints it."""

import argparse
import os
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(TOP, "scripts"))
import llvm_memprof_yaml  # noqa: E402
sys.path.insert(0, HERE)
from workloads import small_programs  # noqa: E402
from run import pkg_config  # noqa: E402

INTERVAL = 65536


def contexts(profile, binary):
    show = subprocess.run(["llvm-profdata-19", "show", "--memory", profile,
                           "--profiled-binary", binary], capture_output=True, text=True)
    if show.returncode != 0:
        # A sampled profile may hold no context at all, which llvm-profdata
        # refuses ("no entries in callstack map").
        if "no entries in callstack map" in show.stderr:
            return {}
        sys.exit(f"sampling: llvm-profdata-19 on {profile}: {show.stderr}")
    return {tuple(frames): mib for frames, mib in llvm_memprof_yaml.alloc_sites(show.stdout)}


def top_ten(sites, key, share=0.0):
    """The ten largest contexts by KEY, less those under SHARE of the total."""
    total = sum(m.get(key, 0) for m in sites.values()) or 1
    ranked = sorted(sites.items(), key=lambda kv: -kv[1].get(key, 0))[:10]
    return {frames for frames, mib in ranked if mib.get(key, 0) >= share * total}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--cc", default="gcc")
    parser.add_argument("--cxx", default="g++")
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    work = os.path.join(HERE, "work", "sampling")
    os.makedirs(work, exist_ok=True)
    programs = small_programs("sampling")
    lines = [f"Profiling overhead, full and sampled (sample_interval={INTERVAL}), "
             f"median of {args.runs} interleaved runs; top-10 accuracy of the sampled profile",
             "", "| program | baseline s | profiled | sampled | top 10 by bytes | "
             "top 10 by accesses |", "|---|---|---|---|---|---|"]
    ratios = {"profiled": [], "sampled": []}
    for name, files, flags, arguments in programs:
        compiler = args.cxx if files[0].endswith(".cc") else args.cc
        plain = os.path.join(work, name + ".plain")
        profiled = os.path.join(work, name + ".memprof")
        subprocess.run([compiler, "-O2", "-g", *flags, *files, "-o", plain, "-lpthread"],
                       check=True)
        subprocess.run([compiler, "-O2", "-g", "-fno-optimize-sibling-calls",
                        "-fplugin=" + pkg_config("--variable=plugin")[0],
                        *pkg_config("--cflags"), *flags, *files, "-o", profiled, "-lpthread",
                        *pkg_config("--libs")], check=True)
        runs = {
            "baseline": ([plain, *arguments], ""),
            "profiled": ([profiled, *arguments], f"profile_file={work}/{name}.full"),
            "sampled": ([profiled, *arguments], f"profile_file={work}/{name}.sampled:"
                        f"sample_interval={INTERVAL}"),
        }
        times = {key: [] for key in runs}
        for _ in range(args.runs):
            for key, (command, options) in runs.items():
                start = time.perf_counter()
                subprocess.run(command, capture_output=True, check=True,
                               env=dict(os.environ, MEMPROF_OPTIONS=options))
                times[key].append(time.perf_counter() - start)
        base = statistics.median(times["baseline"])
        row = {key: statistics.median(times[key]) / base for key in ("profiled", "sampled")}
        for key in row:
            ratios[key].append(row[key])
        full = contexts(f"{work}/{name}.full", profiled)
        sampled = contexts(f"{work}/{name}.sampled", profiled)
        verdicts = []
        for key in ("TotalSize", "TotalAccessCount"):
            # Every context over 1% in one profile's top 10 is in the
            # other's top 10.
            missing = top_ten(full, key, 0.01) - top_ten(sampled, key)
            extra = top_ten(sampled, key, 0.01) - top_ten(full, key)
            verdicts.append("same" if not missing and not extra else
                            f"differs: {len(missing)} missing, {len(extra)} extra")
        lines.append(f"| {name} | {base:.3f} | {row['profiled']:.2f}x | {row['sampled']:.2f}x "
                     f"| {verdicts[0]} | {verdicts[1]} |")
    geomean = {key: statistics.geometric_mean(values) for key, values in ratios.items()}
    lines += ["", f"Geometric mean: profiled {geomean['profiled']:.2f}x, "
              f"sampled {geomean['sampled']:.2f}x the baseline."]
    print("\n".join(lines))
    os.makedirs(os.path.join(HERE, "results"), exist_ok=True)
    with open(os.path.join(HERE, "results", "sampling.md"), "w") as out:
        out.write("\n".join(lines) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
