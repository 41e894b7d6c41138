#!/usr/bin/env python3
"""The cost of libmemprof_hint's hinted path against jemalloc's own
(and, with jemalloc's API alone, where its time goes):
bench/workloads/hint_path.c makes 20 million malloc+free pairs with
jemalloc's malloc, or with __memprof_hint_malloc and a hot or a cold
hint, or with __memprof_hint_context_malloc (the call classified by its
calling context at run time: a cold context, and a context no entry
matches).  The variants run interleaved, RUNS rounds; the figure is the median
CPU time (user+sys) per pair, and its ratio to plain jemalloc (the same
program built with jemalloc alone, without libmemprof_hint).  Writes
bench/results/hint-path.md (--output).

Usage: bench/hint_path.py [--cc gcc] [--runs 7]"""

import argparse
import datetime
import os
import platform
import statistics
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(HERE)
SOURCE = os.path.join(HERE, "workloads", "hint_path.c")
WORK = os.path.join(HERE, "work", "hint-path")
PAIRS = 20_000_000
VARIANTS = ("alone", "plain", "hot", "cold", "context-cold", "context-default", "mallocx",
            "tcache-dallocx", "arena-tcache", "arena-tcache-dallocx")

ROW_NAMES = {"alone": "jemalloc malloc, libmemprof_hint not linked",
             "plain": "jemalloc malloc, libmemprof_hint linked (its free)"}


def pkg_config(*options):
    env = dict(os.environ, PKG_CONFIG_PATH=TOP + os.pathsep + os.environ.get("PKG_CONFIG_PATH", ""))
    return subprocess.run(["pkg-config", *options], env=env, check=True, capture_output=True,
                          text=True).stdout.split()


def cpu_seconds(command):
    """The CPU time (user+sys) of one run of COMMAND, from wait4."""
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL)
    _, status, usage = os.wait4(process.pid, 0)
    if status != 0:
        sys.exit(f"hint_path: {' '.join(command)} exited with status {status}")
    return usage.ru_utime + usage.ru_stime


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cc", default="gcc")
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--output", default=os.path.join(HERE, "results", "hint-path.md"))
    args = parser.parse_args()
    os.makedirs(WORK, exist_ok=True)
    binary = os.path.join(WORK, "hint_path")
    # Frame pointers, as feedback builds keep them (the context walk needs
    # them), in every variant alike.
    build = subprocess.run([args.cc, "-O2", "-fno-omit-frame-pointer", *pkg_config("--cflags", "memprof-hint"), SOURCE,
                            "-o", binary, *pkg_config("--libs", "memprof-hint")],
                           capture_output=True, text=True)
    if build.returncode != 0 or build.stderr:
        sys.exit(f"hint_path: the benchmark does not build:\n{build.stderr}")
    # jemalloc without libmemprof_hint: the program's free is jemalloc's.
    alone = os.path.join(WORK, "hint_path_alone")
    build = subprocess.run([args.cc, "-O2", "-fno-omit-frame-pointer", "-DJEMALLOC_ONLY",
                            *pkg_config("--cflags", "memprof-hint"), SOURCE, "-o", alone,
                            "-Wl,--push-state,--no-as-needed", "-ljemalloc",
                            "-Wl,--pop-state"], capture_output=True, text=True)
    if build.returncode != 0 or build.stderr:
        sys.exit(f"hint_path: the benchmark does not build with jemalloc alone:\n{build.stderr}")
    times = {variant: [] for variant in VARIANTS}
    cpu_seconds([binary, "plain"])  # warm-up
    for _ in range(args.runs):
        for variant in VARIANTS:
            times[variant].append(cpu_seconds([alone, "plain"] if variant == "alone"
                                              else [binary, variant]))
    plain = statistics.median(times["alone"])
    lines = [
        "# libmemprof_hint: the hinted path against jemalloc's own",
        "",
        f"Produced by `make bench-hint` (`bench/hint_path.py --runs {args.runs}`) on "
        f"{datetime.date.today()}, {platform.machine()}, {os.cpu_count()} CPUs.",
        "",
        "`bench/workloads/hint_path.c`: 20 million malloc+free pairs of 16 to 128 bytes, each",
        "block freed 64 allocations later, with jemalloc's `malloc` or with",
        "`__memprof_hint_malloc` (hot or cold: the thread's cache of the class's freed",
        "blocks, or the class's arena through the thread's jemalloc tcache of it), or with `__memprof_hint_context_malloc`, the entry point of a call",
        "that feedback classifies by its calling context at run time (context-cold: a",
        "walk of 3 caller frames, a probe of the cache of decisions, then the cold",
        "arena; context-default: the same classification, no entry matches, then",
        "jemalloc's `malloc`). Every allocation is made 3 calls deep, built with",
        "`-O2 -fno-omit-frame-pointer`. Median CPU time (user+sys) over interleaved runs.",
        "The first row is the same program without libmemprof_hint (the ratios are to it);",
        "in the others the program's free is libmemprof_hint's, which tells hinted blocks",
        "by address and passes the others on to jemalloc's.",
        "The last four rows take the hinted path apart with jemalloc's own API, no",
        "libmemprof_hint call: `mallocx (size, 0)` then `free` (mallocx's general path);",
        "an explicit tcache of the program's, freed into it with `dallocx`; an arena and an",
        "explicit tcache freed with `free` (the block goes to the thread's default tcache,",
        "the explicit one only empties and refills from the arena under its lock: a hinted",
        "block's way before libmemprof_hint had its own free); the same freed into the",
        "explicit tcache with `dallocx`.",
        "",
        "| allocation | ns per malloc+free (median) | min..max | vs jemalloc |",
        "|---|---:|---:|---:|",
    ]
    for variant in VARIANTS:
        values = [t / PAIRS * 1e9 for t in times[variant]]
        median = statistics.median(times[variant])
        lines.append(f"| {ROW_NAMES.get(variant, variant)} | "
                     f"{median / PAIRS * 1e9:.1f} | {min(values):.1f}..{max(values):.1f} | "
                     f"{median / plain:.2f} |")
    text = "\n".join(lines) + "\n"
    print(text)
    os.makedirs(os.path.dirname(args.output), exist_ok=True)
    with open(args.output + ".tmp", "w") as out:
        out.write(text)
    os.replace(args.output + ".tmp", args.output)


if __name__ == "__main__":
    main()
