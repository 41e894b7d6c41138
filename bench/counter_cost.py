#!/usr/bin/env python3
"""What an instrumented access costs, and what combining counter updates
(-fplugin-arg-memprof-combine=none|block|loop) saves:

1. the inline sequence in instructions (-O2 assembly, with and without
   the plugin), for an access alone in a function and in a loop;
2. CPU nanoseconds per executed access on bench/counter_loop.c's kernels,
   interleaved runs, medians, against the same kernels built without the
   plugin; the runtime's stats=1 total of executed accesses must be the
   same in every mode (the counts stay exact);
3. the share of the instrumented accesses whose own update is gone, from
   -fplugin-arg-memprof-stats, on real code: zlib and libiberty (Debian's
   gcc-12-source), a sample of GCC's execute torture tests, and the bench
   workloads;
4. CPU time of a few bench workloads built as run.py's plugin
   configuration with combine=none and with the default, interleaved;
   and with -fplugin-arg-memprof-sample-accesses (sampled access
   counting, in 2. and 4.: its counts are estimates, so ns per access are
   per executed access of the exact builds).

Writes bench/results/counter-cost.md and prints it."""

import argparse
import glob
import os
import re
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(HERE)
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(TOP, "scripts"))
import gcc_source  # noqa: E402
from workloads import WORKLOADS, ZLIB, LIBIBERTY_DEFINES, prepare  # noqa: E402
from run import pkg_config  # noqa: E402

MODES = ("none", "block", "loop")
SAMPLED = "sample-accesses"  # -fplugin-arg-memprof-sample-accesses (rate 100)
KERNELS = {"load": 1, "rmw": 2, "invariant": 4}  # executed accesses per element
LIBIBERTY = ["hashtab", "splay-tree", "cp-demangle", "regex", "obstack", "md5", "sha1",
             "bsearch", "cplus-dem", "d-demangle", "rust-demangle", "partition",
             "fibheap", "dyn-string", "objalloc", "argv", "concat", "xmalloc"]
WORKLOAD_DEFAULT = "json_tree,hash_churn,zlib_roundtrip,libiberty_symtab,strings"


def fail(message):
    sys.exit(f"counter_cost: {message}")


def plugin_flags(mode):
    flags = ["-fplugin=" + pkg_config("--variable=plugin")[0], *pkg_config("--cflags")]
    return flags + ([f"-fplugin-arg-memprof-combine={mode}"] if mode else [])


def run(command, **kwargs):
    result = subprocess.run(command, capture_output=True, text=True, **kwargs)
    if result.returncode != 0:
        fail(f"{' '.join(command)} failed:\n{result.stderr[-1500:]}")
    return result


# ---- 1. the sequence in instructions ----

def instructions(assembly, function):
    """The instructions of FUNCTION in an -O2 assembly listing."""
    count, inside = 0, False
    for line in assembly.splitlines():
        if line.startswith(function + ":"):
            inside = True
        elif inside and line.startswith("\t.size"):
            break
        elif inside and line.startswith("\t") and not line.startswith("\t."):
            count += 1
    return count


def loop_instructions(assembly, function):
    """The instructions of the first loop of FUNCTION: from a label to the
    jump back to it."""
    inside, body = False, []
    for line in assembly.splitlines():
        if line.startswith(function + ":"):
            inside = True
        elif inside and line.startswith("\t.size"):
            break
        elif inside:
            body.append(line)
    labels = {}
    count = 0
    for line in body:
        if re.match(r"\.L\w+:", line):
            labels[line[:-1]] = count
        elif line.startswith("\t") and not line.startswith("\t."):
            count += 1
            jump = re.match(r"\tj\w+\s+(\.L\w+)$", line)
            if jump and jump.group(1) in labels:
                return count - labels[jump.group(1)]
    fail(f"no loop in {function}")


def sequence_cost(args, work):
    functions = 16
    source = os.path.join(work, "one_access.c")
    with open(source, "w") as out:
        for k in range(functions):
            out.write(f"long load_{k} (long *p) {{ return p[{k}]; }}\n")
            out.write(f"void store_{k} (long *p, long v) {{ p[{k}] = v; }}\n")
    plain = run([args.cc, "-O2", "-S", "-o", "-", source]).stdout
    plugin = run([args.cc, "-O2", "-S", "-o", "-", *plugin_flags("none"), source]).stdout
    straight = statistics.mean(
        instructions(plugin, f"{kind}_{k}") - instructions(plain, f"{kind}_{k}")
        for kind in ("load", "store") for k in range(functions))
    kernel = os.path.join(HERE, "counter_loop.c")
    plain = run([args.cc, "-O2", "-S", "-o", "-", kernel]).stdout
    plugin = run([args.cc, "-O2", "-S", "-o", "-", *plugin_flags("none"), kernel]).stdout
    in_loop = instructions(plugin, "load_kernel") - instructions(plain, "load_kernel")
    plain = run([args.cc, "-O2", "-fno-tree-vectorize", "-S", "-o", "-", kernel]).stdout
    loop_plain = loop_instructions(plain, "load_kernel")
    loop_plugin = loop_instructions(plugin, "load_kernel")
    return [
        "## The inline sequence (-O2, x86-64, combine=none)",
        "",
        f"- an access alone in a function: **{straight:.1f} instructions** more "
        "(load the shadow base, copy the address, shift it to the granule's number, "
        "increment the counter at base + number * 8 in memory)",
        f"- an access in a loop (counter_loop.c's load_kernel): {in_loop} instructions more "
        "in the function (the shadow base is loaded once per call); the loop itself "
        f"runs {loop_plugin} instructions per iteration against {loop_plain} (the same "
        "loop not vectorised): "
        f"**{loop_plugin - loop_plain} per access** (copy, shift, a "
        "read-modify-write of the counter in memory)",
        ""]


# ---- 2. ns per access on loops ----

def cpu_seconds(command, env):
    """User+system CPU seconds of one run of COMMAND."""
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                               env=env)
    _, status, usage = os.wait4(process.pid, 0)
    process.stderr.close()
    if status != 0:
        fail(f"{' '.join(command)} failed (status {status})")
    return usage.ru_utime + usage.ru_stime


def executed_accesses(binary, kernel, rounds):
    env = dict(os.environ, MEMPROF_OPTIONS="stats=1:write_profile=0")
    result = run([binary, kernel, str(rounds)], env=env)
    match = re.search(r"stats: (\d+) instrumented accesses", result.stderr)
    if not match:
        fail(f"{binary}: no stats line in {result.stderr[-400:]}")
    return int(match.group(1))


def loop_cost(args, work):
    source = os.path.join(HERE, "counter_loop.c")
    binaries = {"gcc -O2": os.path.join(work, "counter_loop-plain")}
    run([args.cc, "-O2", "-g", source, "-o", binaries["gcc -O2"]])
    # The runtime without counters: what the counters add is measured
    # against it, the runtime's own start and exit left out.
    binaries["instrument=0"] = os.path.join(work, "counter_loop-runtime")
    run([args.cc, "-O2", "-g", "-fno-optimize-sibling-calls", *plugin_flags(None),
         "-fplugin-arg-memprof-instrument=0", source, "-o", binaries["instrument=0"],
         *pkg_config("--libs")])
    for mode in MODES:
        binaries[mode] = os.path.join(work, f"counter_loop-{mode}")
        run([args.cc, "-O2", "-g", "-fno-optimize-sibling-calls", *plugin_flags(mode), source,
             "-o", binaries[mode], *pkg_config("--libs")])
    # Sampled access counting (bursts.cc): its counts are estimates, so
    # the executed accesses are those of the exact builds.
    binaries[SAMPLED] = os.path.join(work, "counter_loop-sampled")
    run([args.cc, "-O2", "-g", "-fno-optimize-sibling-calls", *plugin_flags(None),
         "-fplugin-arg-memprof-sample-accesses", source, "-o", binaries[SAMPLED],
         *pkg_config("--libs")])
    env = dict(os.environ, MEMPROF_OPTIONS="write_profile=0")
    lines = ["## ns per executed access (CPU time over the same program built with "
             "the plugin and instrument=0, medians of "
             f"{args.runs} interleaved runs, {args.rounds} rounds of 16,384 elements; "
             "in parentheses, the time over gcc -O2)",
             "",
             "| kernel | executed accesses (same in every mode) | gcc -O2 | instrument=0 | "
             + " | ".join(f"combine={m}" for m in MODES) + f" | {SAMPLED} |",
             "|---|---|---|---|" + "---|" * (len(MODES) + 1)]
    for kernel in KERNELS:
        counts = {mode: executed_accesses(binaries[mode], kernel, args.rounds)
                  for mode in MODES}
        if len(set(counts.values())) != 1:
            fail(f"kernel {kernel}: executed accesses differ between modes: {counts}")
        expected = KERNELS[kernel] * (1 << 14) * args.rounds
        if counts["none"] < expected:
            fail(f"kernel {kernel}: {counts['none']} accesses counted, "
                 f"at least {expected} expected")
        times = {label: [] for label in binaries}
        for _ in range(args.runs):
            for label, binary in binaries.items():
                times[label].append(cpu_seconds([binary, kernel, str(args.rounds)], env))
        plain = statistics.median(times["gcc -O2"])
        uncounted = statistics.median(times["instrument=0"])
        cells = []
        for mode in (*MODES, SAMPLED):
            extra = statistics.median(times[mode]) - uncounted
            cells.append(f"{extra * 1e9 / counts['none']:.2f} ns "
                         f"({statistics.median(times[mode]) / plain:.2f}x)")
        lines.append(f"| {kernel} | {counts['none']:,} | {plain:.3f} s | {uncounted:.3f} s | "
                     + " | ".join(cells) + " |")
    lines.append("")
    return lines


# ---- 3. updates removed on real code ----

STATS = re.compile(r"(\d+) instrumented .*? (\d+) counter updates \((\d+) combined, "
                   r"(\d+) counted in registers over loops, (\d+) at loop exits\)")


def static_figures(compiler, flags, files):
    """Instrumented accesses, combined, moved into registers, exit updates."""
    total = [0, 0, 0, 0]
    for path in files:
        result = subprocess.run([compiler, "-O2", "-w", *plugin_flags(None),
                                 "-fplugin-arg-memprof-stats", *flags, "-c", path,
                                 "-o", os.devnull],
                                capture_output=True, text=True)
        if result.returncode != 0:
            continue  # a torture test for another target, a file that needs config.h
        for match in STATS.finditer(result.stderr):
            instrumented, _, combined, registers, exits = map(int, match.groups())
            for i, value in enumerate((instrumented, combined, registers, exits)):
                total[i] += value
    return total


def real_code(args):
    src = prepare("counter_cost")
    try:
        torture = gcc_source.extract(os.path.join(HERE, "work", "torture-src"),
                                     ["gcc/testsuite/gcc.c-torture/execute"], "counter_cost")
    except (gcc_source.Missing, subprocess.CalledProcessError) as error:
        fail(str(error))
    torture_files = sorted(glob.glob(os.path.join(
        torture, "gcc/testsuite/gcc.c-torture/execute/*.c")))[::args.torture_step]
    corpora = [
        ("zlib", args.cc, [], [os.path.join(src, "zlib", f"{n}.c") for n in ZLIB]),
        ("libiberty", args.cc, ["-I" + os.path.join(src, "include"), *LIBIBERTY_DEFINES],
         [os.path.join(src, "libiberty", f"{n}.c") for n in LIBIBERTY]),
        (f"GCC execute torture (every {args.torture_step}th file)", args.cc, [],
         torture_files),
    ]
    # The workloads' own files: the zlib and libiberty files they are
    # built with are counted above; a Debian package's files (Lua's
    # interpreter, cJSON) with its workload.
    for w in WORKLOADS:
        files = w.sources(src) if w.debian else [w.source]
        corpora.append((f"workload {w.name}", args.cxx if w.cxx else args.cc,
                        w.compile_flags(src), files))
    lines = ["## Instrumented accesses whose own update is gone (static, -O2)", "",
             "| code | instrumented accesses | combined in a block | counted in registers "
             "over loops | updates added at loop exits | updates removed |",
             "|---|---|---|---|---|---|"]
    grand = [0, 0, 0, 0]
    for name, compiler, flags, files in corpora:
        figures = static_figures(compiler, flags, files)
        grand = [a + b for a, b in zip(grand, figures)]
        lines.append(row(name, figures))
    lines.append(row("**all**", grand))
    lines.append("")
    return lines


def row(name, figures):
    instrumented, combined, registers, exits = figures
    removed = 100 * (combined + registers) / instrumented if instrumented else 0.0
    return (f"| {name} | {instrumented:,} | {combined:,} | {registers:,} | {exits:,} "
            f"| {removed:.1f}% |")


# ---- 4. bench workloads ----

def workloads_cpu(args, work):
    src = prepare("counter_cost")
    chosen = [w for w in WORKLOADS if w.name in args.workloads.split(",")]
    lines = [f"## Bench workloads (run.py's plugin build, scale as run.py; CPU time, "
             f"medians of {args.workload_runs} interleaved runs)", "",
             f"| workload | gcc -O2 | combine=none | combine=loop (default) | change | "
             f"{SAMPLED} |",
             "|---|---|---|---|---|---|"]
    env = dict(os.environ, MEMPROF_OPTIONS="write_profile=0")
    for w in chosen:
        compiler = args.cxx if w.cxx else args.cc
        binaries = {}
        for label, mode in (("gcc", None), ("none", "none"), ("loop", "loop"),
                            ("sampled", "loop")):
            binaries[label] = os.path.join(work, f"{w.name}-{label}")
            command = [compiler, "-O2", "-g"]
            if mode:
                command += ["-fno-optimize-sibling-calls", *plugin_flags(mode)]
            if label == "sampled":
                command += ["-fplugin-arg-memprof-sample-accesses"]
            command += w.compile_flags(src) + w.sources(src) + ["-o", binaries[label],
                                                                "-lpthread"]
            if mode:
                command += pkg_config("--libs")
            run(command)
        times = {label: [] for label in binaries}
        for _ in range(args.workload_runs):
            for label, binary in binaries.items():
                times[label].append(cpu_seconds([binary, str(w.scale)], env))
        median = {label: statistics.median(t) for label, t in times.items()}
        lines.append(f"| {w.name} | {median['gcc']:.2f} s | {median['none']:.2f} s "
                     f"({median['none'] / median['gcc']:.2f}x) | {median['loop']:.2f} s "
                     f"({median['loop'] / median['gcc']:.2f}x) "
                     f"| {100 * (median['loop'] / median['none'] - 1):+.1f}% "
                     f"| {median['sampled']:.2f} s "
                     f"({median['sampled'] / median['gcc']:.2f}x) |")
    lines.append("")
    return lines


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--cc", default="gcc")
    parser.add_argument("--cxx", default="g++")
    parser.add_argument("--runs", type=int, default=5, help="runs per kernel and build")
    parser.add_argument("--rounds", type=int, default=3000, help="rounds of each kernel")
    parser.add_argument("--torture-step", type=int, default=10,
                        help="compile every Nth execute torture test")
    parser.add_argument("--workloads", default=WORKLOAD_DEFAULT,
                        help="comma-separated bench workloads ('' for none)")
    parser.add_argument("--workload-runs", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="counter-cost-") as work:
        lines = ["# Counter updates: what an access costs, what combining saves", ""]
        lines += sequence_cost(args, work)
        lines += loop_cost(args, work)
        lines += real_code(args)
        if args.workloads:
            lines += workloads_cpu(args, work)
    print("\n".join(lines))
    os.makedirs(os.path.join(HERE, "results"), exist_ok=True)
    with open(os.path.join(HERE, "results", "counter-cost.md"), "w") as out:
        out.write("\n".join(lines) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
