#!/usr/bin/env python3
"""What an allocation's stack capture costs by the stack's depth: a
malloc/free loop at the bottom of a recursion 5 to 200 calls deep
(bench/stack_depth.c), run without the runtime, with it (default options)
and with unwinder=libunwind, interleaved (ROUNDS runs each, in turn);
prints the median CPU time (user + sys) per malloc/free pair, what the
runtime adds, and the added ns per frame between the depths.  Every
allocation has the same deep stack: the thread's last chain
(runtime/stack.c) checks it in place of walking it.  Ratios from one run
are what to compare: the machine is shared and noisy."""

import argparse
import os
import statistics
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from interleaved import (build_without_and_with_runtime, publish,  # noqa: E402
                         remove_profiles, timed_run)

DEPTHS = (5, 25, 50, 100, 200)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--cc", default="gcc")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--pairs", type=int, default=300000)
    args = parser.parse_args()

    work, plain, linked = build_without_and_with_runtime(args.cc, "stack_depth.c",
                                                         "stack_depth")
    profile = f"profile_file={work}/stack-depth.%p.profraw"
    configurations = [("no runtime", plain, ""), ("default", linked, profile),
                      ("unwinder=libunwind", linked, profile + ":unwinder=libunwind")]
    times = {}
    for _ in range(args.runs):
        for depth in DEPTHS:
            for name, binary, options in configurations:
                result, seconds = timed_run([binary, str(depth), str(args.pairs)],
                                            dict(os.environ, MEMPROF_OPTIONS=options))
                if result.returncode != 0:
                    print(f"bench: {name} at depth {depth} failed: {result.stderr}")
                    return 1
                times.setdefault((name, depth), []).append(seconds)
    remove_profiles(work, "stack-depth.")

    def ns(name, depth):
        return statistics.median(times[(name, depth)]) / args.pairs * 1e9

    lines = [f"malloc/free loop under a recursion of DEPTH calls, {args.pairs:,} pairs, "
             f"median CPU time (user+sys) of {args.runs} interleaved runs; ns per pair, "
             "and in brackets what the runtime adds", "",
             "| depth | no runtime | default | unwinder=libunwind |", "|---|---|---|---|"]
    for depth in DEPTHS:
        base = ns("no runtime", depth)
        cells = [f"{base:.0f}"] + [f"{ns(name, depth):.0f} (+{ns(name, depth) - base:.0f})"
                                   for name in ("default", "unwinder=libunwind")]
        lines.append(f"| {depth} | " + " | ".join(cells) + " |")
    first, last = DEPTHS[0], DEPTHS[-1]
    slopes = [f"{name}: {(ns(name, last) - ns(name, first)) / (last - first):.2f} ns"
              for name in ("default", "unwinder=libunwind")]
    lines += ["", f"Added per frame of depth, {first} to {last}: " + ", ".join(slopes)]
    publish(lines, "stack-depth.md")
    return 0


if __name__ == "__main__":
    sys.exit(main())
