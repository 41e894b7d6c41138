#!/usr/bin/env python3
"""What libmemprof_hint does for a program: bench/workloads/hot_cold_mix.c
built three ways,

  glibc      gcc -O2, glibc's malloc
  jemalloc   linked with `pkg-config --libs memprof-hint`, no hinted call
             (so: jemalloc's default arenas)
  hinted     the hot and cold allocation calls replaced by hinted ones

run interleaved (each variant once per round, RUNS rounds) at a few sizes
of the hot set, and compared: median time per node of the hot walk, its
ratio to glibc, the pages the hot nodes span, peak RSS and the time the
allocations took.  dTLB misses too when `perf stat` can count them here.
Writes bench/results/hint-effect.md (--output).

Usage: bench/hint_effect.py [--cc gcc] [--runs 5] [--hot-counts 32768,65536,262144]"""

import argparse
import datetime
import os
import platform
import re
import statistics
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(HERE)
SOURCE = os.path.join(HERE, "workloads", "hot_cold_mix.c")
WORK = os.path.join(HERE, "work", "hint-effect")
# Every run walks about this many nodes, whatever the size of the hot set.
NODE_VISITS = 4 << 20

VARIANTS = ("glibc", "jemalloc", "hinted")
LABELS = {
    "glibc": "glibc malloc",
    "jemalloc": "libmemprof_hint linked, no hinted call",
    "hinted": "hot and cold calls hinted by profile feedback",
}


def pkg_config(*options):
    env = dict(os.environ, PKG_CONFIG_PATH=TOP + os.pathsep + os.environ.get("PKG_CONFIG_PATH", ""))
    return subprocess.run(["pkg-config", *options], env=env, check=True, capture_output=True,
                          text=True).stdout.split()


def compile_program(command):
    result = subprocess.run(command, capture_output=True, text=True)
    if result.returncode != 0 or result.stderr:
        sys.exit(f"hint_effect: {' '.join(command)}\n{result.stderr}")


def build_glibc(cc, output):
    compile_program([cc, "-O2", SOURCE, "-o", output])


def build_jemalloc(cc, output):
    compile_program([cc, "-O2", SOURCE, "-o", output, *pkg_config("--libs", "memprof-hint")])


def build_hinted_variant(cc, output):
    """Profile feedback, as a user runs it: the program built with the
    plugin and libmemprof, run on a small hot set, its profile merged with
    `memprof merge --binary`, and the program rebuilt with
    -fplugin-arg-memprof-use, which rewrites the hot and cold calls to
    libmemprof_hint's entry points.  LLVM's thresholds are made for
    servers that run for hours (cold: under 0.05 accesses per byte per
    second over at least 200 s); in this run of a fraction of a second the
    records (written once, about 2 accesses/byte/s) and the nodes (walked
    over and over, about 5) fall between them.  The thresholds are set as
    a user sets them for such a program: between the two densities the
    profile shows (`memprof show --format=json` prints them)."""
    plugin = ["-fplugin=" + pkg_config("--variable=plugin", "memprof")[0]]
    profiled = output + ".profiled"
    compile_program([cc, "-O2", "-g", "-fno-optimize-sibling-calls", *plugin,
                     *pkg_config("--cflags", "memprof"), SOURCE, "-o", profiled,
                     *pkg_config("--libs", "memprof")])
    profile = output + ".profraw"
    env = dict(os.environ, MEMPROF_OPTIONS=f"profile_file={profile}")
    run = subprocess.run([profiled, "32768", "4"], capture_output=True, text=True, env=env)
    if run.returncode != 0:
        sys.exit(f"hint_effect: the profiled run failed: {run.stderr}")
    merged = output + ".mprof"
    subprocess.run([os.path.join(TOP, "analysis", "memprof"), "merge", "--quiet",
                    "--binary=" + profiled, "-o", merged, profile], check=True)
    command = [cc, "-O2", "-g", "-fno-optimize-sibling-calls", *plugin,
               "-fplugin-arg-memprof-use=" + merged, "-fplugin-arg-memprof-cold-lifetime=0",
               "-fplugin-arg-memprof-cold-density=3", "-fplugin-arg-memprof-hot-density=4",
               SOURCE, "-o", output, *pkg_config("--libs", "memprof-hint")]
    result = subprocess.run(command, capture_output=True, text=True)
    summary = re.search(r"rewritten: (\d+) cold, (\d+) hot", result.stderr)
    if result.returncode != 0 or not summary or summary.groups() == ("0", "0"):
        sys.exit(f"hint_effect: feedback did not rewrite the hot and cold calls:\n"
                 f"{' '.join(command)}\n{result.stderr}")
    print(f"hint_effect: profile feedback rewrote {summary.group(1)} cold and "
          f"{summary.group(2)} hot allocation calls", flush=True)


BUILDERS = {"glibc": build_glibc, "jemalloc": build_jemalloc, "hinted": build_hinted_variant}


def perf_counts_dtlb():
    """None when perf can count dTLB load misses here, else why not."""
    try:
        probe = subprocess.run(["perf", "stat", "-x,", "-e", "instructions", "true"],
                               capture_output=True, text=True)
    except FileNotFoundError:
        return "perf is not installed"
    if probe.returncode != 0 or "<not supported>" in probe.stderr \
            or "<not counted>" in probe.stderr:
        return ("`perf stat -e instructions true` counts nothing here (no hardware "
                "counters in this VM)")
    probe = subprocess.run(["perf", "stat", "-x,", "-e", "dTLB-load-misses", "true"],
                           capture_output=True, text=True)
    if probe.returncode != 0 or "<not supported>" in probe.stderr:
        return "perf has no dTLB-load-misses event here"
    return None


def run_once(binary, hot_count, passes, with_perf):
    command = [binary, str(hot_count), str(passes)]
    if with_perf:
        command = ["perf", "stat", "-x,", "-e", "dTLB-load-misses", *command]
    result = subprocess.run(command, capture_output=True, text=True)
    if result.returncode != 0:
        sys.exit(f"hint_effect: {binary} failed: {result.stderr}")
    values = dict(line.split(None, 1) for line in result.stdout.splitlines() if " " in line)
    if with_perf:
        match = re.search(r"^(\d+),.*dTLB-load-misses", result.stderr, re.M)
        values["dtlb_misses"] = match.group(1) if match else None
    return values


def mib(kib):
    return f"{kib / 1024:.1f}"


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cc", default="gcc")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--hot-counts", default="32768,65536,262144",
                        help="sizes of the hot set, in 48-byte nodes")
    parser.add_argument("--output", default=os.path.join(HERE, "results", "hint-effect.md"))
    args = parser.parse_args()
    if args.runs < 1:
        parser.error("--runs must be at least 1")
    hot_counts = [int(count) for count in args.hot_counts.split(",")]

    os.makedirs(WORK, exist_ok=True)
    binaries = {}
    for variant in VARIANTS:
        binaries[variant] = os.path.join(WORK, f"hot_cold_mix_{variant}")
        BUILDERS[variant](args.cc, binaries[variant])

    perf_problem = perf_counts_dtlb()
    with_perf = perf_problem is None
    print(f"hint_effect: {args.runs} interleaved runs of each variant at "
          f"{len(hot_counts)} sizes" + ("" if with_perf else f"; no dTLB counts: {perf_problem}"),
          flush=True)

    tables = []
    for hot_count in hot_counts:
        passes = max(1, NODE_VISITS // hot_count)
        samples = {variant: [] for variant in VARIANTS}
        for round_number in range(args.runs):
            for variant in VARIANTS:
                samples[variant].append(run_once(binaries[variant], hot_count, passes, with_perf))
            print(f"  {hot_count} hot nodes: round {round_number + 1}/{args.runs}", flush=True)
        rows = {}
        for variant in VARIANTS:
            runs = samples[variant]
            checksums = {run["checksum"] for run in runs}
            if len(checksums) != 1 or checksums != {samples["glibc"][0]["checksum"]}:
                sys.exit(f"hint_effect: {variant} computed another walk ({checksums})")
            rows[variant] = {
                "walk": statistics.median(float(run["walk_ns_per_node"]) for run in runs),
                "walk_min": min(float(run["walk_ns_per_node"]) for run in runs),
                "walk_max": max(float(run["walk_ns_per_node"]) for run in runs),
                "pages": int(statistics.median(int(run["hot_pages"]) for run in runs)),
                "rss": statistics.median(int(run["peak_rss_kib"]) for run in runs),
                "build": statistics.median(float(run["build_ms"]) for run in runs),
                "dtlb": (statistics.median(int(run["dtlb_misses"]) for run in runs)
                         if with_perf and all(run.get("dtlb_misses") for run in runs) else None),
            }
        packed = int(samples["glibc"][0]["hot_pages_if_packed"])
        tables.append((hot_count, passes, packed, rows))

    lines = []
    for hot_count, passes, packed, rows in tables:
        glibc = rows["glibc"]["walk"]
        lines.append(f"### {hot_count} hot nodes ({hot_count * 48 / 1048576:.1f} MiB of hot "
                     f"data, {3 * hot_count} cold records), {passes} walks")
        lines.append("")
        header = ("| variant | walk, ns/node (median) | min..max | vs glibc | hot pages "
                  f"(packed: {packed}) | peak RSS, MiB | allocation phase, ms |")
        lines.append(header + (" dTLB load misses |" if with_perf else ""))
        lines.append("|---|---:|---:|---:|---:|---:|---:|" + ("---:|" if with_perf else ""))
        for variant in VARIANTS:
            row = rows[variant]
            line = (f"| {LABELS[variant]} | {row['walk']:.1f} | {row['walk_min']:.1f}.."
                    f"{row['walk_max']:.1f} | {row['walk'] / glibc:.2f} | {row['pages']} | "
                    f"{mib(row['rss'])} | {row['build']:.1f} |")
            if with_perf:
                line += f" {row['dtlb']:.0f} |" if row["dtlb"] is not None else " n/a |"
            lines.append(line)
        lines.append("")
    table = "\n".join(lines)
    print()
    print(table)

    cpu = platform.processor() or platform.machine()
    try:
        model = re.search(r"^model name\s*:\s*(.*)$", open("/proc/cpuinfo").read(), re.M).group(1)
        cpu = f"{model}, {os.cpu_count()} CPUs"
    except (OSError, AttributeError):
        pass
    dtlb_note = ("dTLB load misses from `perf stat -e dTLB-load-misses`, median of the runs."
                 if with_perf else
                 f"No dTLB figures: {perf_problem}; the pages column is the direct measure.")
    with open(args.output, "w") as output:
        output.write(f"""# libmemprof_hint: effect on a hot/cold mix

Produced by `make bench-hint` (`bench/hint_effect.py --runs {args.runs} --hot-counts \
{args.hot_counts}`) on {datetime.date.today().isoformat()}, {cpu}.

`bench/workloads/hot_cold_mix.c` allocates 48-byte hot nodes, each followed
by 3 cold records of 40, 48, 64 or 160 bytes that are written once and
kept alive; then links the hot nodes into a ring in a shuffled order and
walks it (about {NODE_VISITS >> 20} Mi node visits per run). Three builds,
run interleaved, {args.runs} runs each:

- **{LABELS['glibc']}**: `gcc -O2`.
- **{LABELS['jemalloc']}**: `gcc -O2 ... $(pkg-config --libs memprof-hint)`,
  which makes jemalloc the malloc; everything in its default arenas.
- **{LABELS['hinted']}**: built with the plugin and libmemprof, run
  on 32768 hot nodes, its profile merged (`memprof merge --binary`), and
  rebuilt with `-fplugin-arg-memprof-use` (cold-density=3, hot-density=4,
  cold-lifetime=0: this sub-second run's two densities lie between LLVM's
  server thresholds), which rewrites the hot and the cold `malloc` call
  to libmemprof_hint's hinted entry points (`build_hinted_variant`).

"Hot pages" counts the distinct 4 KiB pages the hot nodes cover, from
their own addresses; "packed" is the least possible. The allocation phase
is the time to allocate and initialize all hot and cold objects.
{dtlb_note}

{table}
""")
    print(f"hint_effect: wrote {os.path.relpath(args.output, TOP)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
