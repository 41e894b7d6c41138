#!/usr/bin/env python3
"""The runtime's cost per allocation: a malloc/free loop run without the
runtime, linked with libmemprof.so, and under LD_PRELOAD, interleaved
(ROUNDS runs each, in turn), reporting the median CPU time (user + sys),
the time per malloc/free pair, what the runtime adds to it, and each ratio
to the run without the runtime.  Ratios from one run are what to compare:
the machine is shared and noisy."""

import argparse
import os
import re
import statistics
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(HERE)
sys.path.insert(0, HERE)
from interleaved import (build_without_and_with_runtime, publish,  # noqa: E402
                         remove_profiles, timed_run)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--cc", default="gcc")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--allocations", type=int, default=2000000)
    args = parser.parse_args()

    work, plain, linked = build_without_and_with_runtime(args.cc, "malloc_loop.c",
                                                         "malloc_loop")

    profile = f"profile_file={work}/bench.%p.profraw"
    configurations = [
        ("no runtime", [plain], {}),
        ("libmemprof.so linked", [linked], {"MEMPROF_OPTIONS": profile}),
        ("LD_PRELOAD libmemprof.so", [plain],
         {"MEMPROF_OPTIONS": profile,
          "LD_PRELOAD": os.path.join(TOP, "runtime", "libmemprof.so")}),
        ("linked, unwinder=libunwind", [linked],
         {"MEMPROF_OPTIONS": profile + ":unwinder=libunwind"}),
        ("linked, unwinder=fp", [linked], {"MEMPROF_OPTIONS": profile + ":unwinder=fp"}),
        ("linked, fold_recursion=0", [linked],
         {"MEMPROF_OPTIONS": profile + ":fold_recursion=0"}),
        ("linked, small_slots=0", [linked],
         {"MEMPROF_OPTIONS": profile + ":small_slots=0"}),
        ("linked, sample_interval=524288", [linked],
         {"MEMPROF_OPTIONS": profile + ":sample_interval=524288"}),
        ("linked, unwinder=fp, sample_interval=524288", [linked],
         {"MEMPROF_OPTIONS": profile + ":unwinder=fp:sample_interval=524288"}),
        # The always-on mode (docs/manual.md): no plugin, sampled.
        ("linked, clock_ticker=1", [linked],
         {"MEMPROF_OPTIONS": profile + ":clock_ticker=1"}),
        ("always-on: LD_PRELOAD, sample_interval=524288", [plain],
         {"MEMPROF_OPTIONS": profile + ":sample_interval=524288",
          "LD_PRELOAD": os.path.join(TOP, "runtime", "libmemprof.so")}),
    ]
    times = {name: [] for name, _, _ in configurations}
    outputs = {}
    for _ in range(args.runs):
        for name, command, extra in configurations:
            if "MEMPROF_OPTIONS" in extra:
                # The clock's helper process (clock_ticker=1) is not this
                # process's child: verbosity=2 prints its CPU time, added.
                extra = dict(extra, MEMPROF_OPTIONS=extra["MEMPROF_OPTIONS"] + ":verbosity=2")
            result, seconds = timed_run([*command, str(args.allocations)],
                                        dict(os.environ, **extra))
            helper = re.search(r"the helpers used (\d+) us of CPU", result.stderr)
            times[name].append(seconds + (int(helper.group(1)) / 1e6 if helper else 0))
            if result.returncode != 0:
                print(f"bench: {name} failed: {result.stderr}")
                return 1
            outputs.setdefault(result.stdout, []).append(name)
    remove_profiles(work)
    if len(outputs) != 1:
        print(f"bench: the configurations printed different checksums: {outputs}")
        return 1

    baseline = statistics.median(times["no runtime"])
    lines = [f"malloc/free loop, {args.allocations:,} allocations (16..4096 bytes, "
             f"1024 live), median CPU time (user+sys, with the clock helper's) of "
             f"{args.runs} interleaved runs",
             "",
             "| configuration | median CPU s | ns per malloc+free | ns added | ratio |",
             "|---|---|---|---|---|"]
    for name, _, _ in configurations:
        median = statistics.median(times[name])
        lines.append(f"| {name} | {median:.3f} | {median / args.allocations * 1e9:.0f} | "
                     f"{(median - baseline) / args.allocations * 1e9:.0f} | "
                     f"{median / baseline:.2f}x |")
    publish(lines, "malloc-overhead.md")
    return 0


if __name__ == "__main__":
    sys.exit(main())
