#!/usr/bin/env python3
"""What profile feedback gains on real programs from Debian's sources:
lua5.4 (an interpreter: every allocation goes through one realloc call
in l_alloc, reached through a function pointer) and GNU m4 (a classic
xmalloc, gnulib's, and obstacks), each built four ways:

  glibc      gcc -O2, glibc's malloc
  jemalloc   the same objects linked with jemalloc alone (-ljemalloc:
             jemalloc's malloc and free; no libmemprof_hint)
  feedback   built with the plugin and libmemprof, run on a small input,
             its profile merged (`memprof merge --binary`), rebuilt with
             -fplugin-arg-memprof-use (default thresholds: those that fit
             the run) and linked with libmemprof_hint
  (profiled  the instrumented build; only to take the profile)

The three are run interleaved (each once per round, --runs rounds) on
the real input; the table gives the median CPU time (user+sys) and peak
RSS, their ratios to glibc, and for the feedback build the share of the
program's bytes that reached a hinted entry point as cold or hot, and
those of the context-classified calls by the class they took (counted
by libmemprof_hint's statistics, MEMPROF_HINT_STATS=1, and
by bench/realprog/hint_counter.c, preloaded into one extra run on the
profiling input, against the profile's total bytes) and the 4 KiB pages
its hot-hinted blocks start on, the pages the hot contexts' blocks lay
on placed and unplaced (MEMPROF_HINT_STATS=unplaced), and each
variant's instructions (one cachegrind run each on a smaller input).  Every run's output must equal glibc's.
When feedback rewrites nothing, the result says why, from the plugin's
own summary lines (calls matched, ambiguous, rewritten).
Writes bench/results/hint-real.md (--output).

Usage: bench/hint_real.py [--cc gcc] [--runs 5]

The sources come from bench/debsrc.py (MEMPROF_DEBSRC says where they are
unpacked)."""

import argparse
import datetime
import glob
import json
import os
import re
import shutil
import statistics
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(HERE)
sys.path.insert(0, HERE)
import debsrc  # noqa: E402

WORK = os.path.join(HERE, "work", "hint-real")
MEMPROF = os.path.join(TOP, "analysis", "memprof")
COUNTER_SOURCE = os.path.join(HERE, "realprog", "hint_counter.c")
VARIANTS = ("glibc", "jemalloc", "feedback")
# jemalloc without libmemprof_hint, as a program links it.
JEMALLOC_ALONE = ["-Wl,--push-state,--no-as-needed", "-ljemalloc", "-Wl,--pop-state"]
LABELS = {"glibc": "glibc malloc", "jemalloc": "jemalloc alone (-ljemalloc)",
          "feedback": "feedback build (-fplugin-arg-memprof-use)"}


def lua_sources(tree):
    return [path for path in sorted(glob.glob(os.path.join(tree, "src", "*.c")))
            if not path.endswith("luac.c")]


PROGRAMS = {
    "lua5.4": {
        "marker": "src/lua.c",
        "sources": lua_sources,
        "cflags": ["-DLUA_COMPAT_5_3", "-DLUA_USE_LINUX", "-std=gnu99"],
        "libs": ["-lm"],
        # Made by debian/rules at build time.
        "headers": {"lua5.4-deb-multiarch.h":
                    '#define DEB_HOST_MULTIARCH "x86_64-linux-gnu"\n'},
        "command": lambda binary, size: [binary, os.path.join(HERE, "workloads",
                                                              "hint_real.lua"), str(size)],
        "profile_size": 30,
        "run_size": 5000,
        "count_size": 1000,
        "allocator": "l_alloc (lauxlib.c): realloc, through the lua_Alloc pointer",
    },
    "m4": {
        "marker": "src/m4.c",
        "configure": ["--disable-nls"],
        "make_dirs": ["lib", "src"],
        "binary": "src/m4",
        "command": lambda binary, size: [binary, f"-DROUNDS={size}",
                                         os.path.join(HERE, "workloads", "hint_real.m4")],
        "profile_size": 100,
        "run_size": 3000,
        "count_size": 500,
        "allocator": "gnulib's xmalloc (lib/xmalloc.c) and obstacks filled through it",
    },
}


def run(command, env=None, cwd=None):
    result = subprocess.run(command, capture_output=True, text=True, env=env, cwd=cwd)
    if result.returncode != 0:
        sys.exit(f"hint_real: {' '.join(command[:4])}... failed (exit {result.returncode}):\n"
                 f"{result.stderr[-1500:]}")
    return result


def pkg_config(*options):
    env = dict(os.environ, PKG_CONFIG_PATH=TOP + os.pathsep + os.environ.get("PKG_CONFIG_PATH", ""))
    return run(["pkg-config", *options], env=env).stdout.split()


def build(cc, spec, tree, output, flags, libs):
    """Compile and link the program; returns the compilers' stderr."""
    if "configure" in spec:
        return build_configured(cc, spec, tree, output, flags, libs)
    include = os.path.join(os.path.dirname(output), "include")
    os.makedirs(include, exist_ok=True)
    for header, text in spec.get("headers", {}).items():
        with open(os.path.join(include, header), "w") as out:
            out.write(text)
    command = [cc, "-O2", "-g", "-I" + include, *spec["cflags"], *flags, *spec["sources"](tree),
               "-o", output, *spec["libs"], *libs]
    return run(command, cwd=os.path.dirname(output)).stderr


def build_configured(cc, spec, tree, output, flags, libs):
    """A GNU package: configured once (plain gcc -O2 -g), then its
    directories made again with FLAGS in CFLAGS and LIBS set to LIBS
    (the package's own LIBS are empty), the binary copied to OUTPUT."""
    if not os.path.exists(os.path.join(tree, "config.status")):
        run(["./configure", "-q", "CC=" + cc, "CFLAGS=-O2 -g", *spec["configure"]], cwd=tree)
    stderr = ""
    for directory in spec["make_dirs"]:
        run(["make", "-s", "clean"], cwd=os.path.join(tree, directory))
    for directory in spec["make_dirs"]:
        stderr += run(["make", "-s", "-j2", "CFLAGS=" + " ".join(["-O2", "-g", *flags]),
                       "LIBS=" + " ".join(libs)], cwd=os.path.join(tree, directory)).stderr
    shutil.copy(os.path.join(tree, spec["binary"]), output)
    return stderr


def shown_path(path, tree):
    """A remark's file, relative to the source tree when absolute."""
    return os.path.relpath(path, tree) if os.path.isabs(path) else path


def feedback_summary(stderr):
    """The plugin's summary lines, added up over the units."""
    totals = dict(calls=0, matched=0, ambiguous=0, cold=0, hot=0, clones=0, context=0)
    pattern = (r"(\d+) of (\d+) allocation calls matched, (\d+) ambiguous; (\d+) wrapper "
               r"clones; rewritten: (\d+) cold, (\d+) hot; .*?context-classified: (\d+)")
    for match in re.finditer(pattern, stderr):
        matched, calls, ambiguous, clones, cold, hot, context = map(int, match.groups())
        totals["context"] += context
        totals["calls"] += calls
        totals["matched"] += matched
        totals["ambiguous"] += ambiguous
        totals["clones"] += clones
        totals["cold"] += cold
        totals["hot"] += hot
    return totals


def profile_totals(mprof):
    """Contexts and bytes allocated in the profile."""
    shown = run([MEMPROF, "show", "--format=json", "--top=0", mprof]).stdout
    records = json.loads(shown)["records"]
    return len(records), sum(int(record["bytes"]) for record in records)


def run_with_rss(command, env=None):
    """One run under GNU time: (stdout, exit status, CPU s, peak RSS KiB)."""
    timing = os.path.join(WORK, "time.out")
    result = subprocess.run(["/usr/bin/time", "-o", timing, "-f", "%U %S %M", *command],
                            capture_output=True, env=env)
    user, system, rss = open(timing).read().split()[-3:]
    return result.stdout, result.returncode, float(user) + float(system), int(rss)


def instructions(command):
    """Instructions one run executes (valgrind's cachegrind, no cache
    simulation), or None without valgrind."""
    if shutil.which("valgrind") is None:
        return None
    result = subprocess.run(["valgrind", "--tool=cachegrind", "--cache-sim=no",
                             "--cachegrind-out-file=/dev/null", *command],
                            capture_output=True, text=True)
    found = re.search(r"I\s+refs:\s+([\d,]+)", result.stderr)
    if result.returncode != 0 or not found:
        sys.exit(f"hint_real: cachegrind failed on {command[0]} (exit {result.returncode}):\n"
                 f"{result.stderr[-800:]}")
    return int(found.group(1).replace(",", "")), result.stdout


def count_instructions(name, spec, binaries):
    """Each variant's instructions on the counting input, one run each
    (deterministic but for Lua's seeded string hashing); outputs must
    agree."""
    counted, expected = {}, None
    for variant in VARIANTS:
        found = instructions(spec["command"](binaries[variant], spec["count_size"]))
        if found is None:
            return {}
        counted[variant], stdout = found
        if expected is None:
            expected = stdout
        if stdout != expected:
            sys.exit(f"hint_real: {name}: the {variant} build printed another output "
                     "under cachegrind")
    return counted


def bench_program(name, spec, args, tree):
    work = os.path.join(WORK, name)
    os.makedirs(work, exist_ok=True)
    plugin = "-fplugin=" + pkg_config("--variable=plugin", "memprof")[0]
    binaries = {variant: os.path.join(work, f"{name}_{variant}") for variant in VARIANTS}
    print(f"hint_real: {name}: building", flush=True)
    build(args.cc, spec, tree, binaries["glibc"], [], [])
    build(args.cc, spec, tree, binaries["jemalloc"], [], JEMALLOC_ALONE)
    profiled = os.path.join(work, f"{name}_profiled")
    build(args.cc, spec, tree, profiled, [plugin, "-fno-optimize-sibling-calls",
                                          *pkg_config("--cflags", "memprof")],
          pkg_config("--libs", "memprof"))
    raw = os.path.join(work, "profile.profraw")
    profiled_run = subprocess.run(spec["command"](profiled, spec["profile_size"]),
                                  capture_output=True,
                                  env=dict(os.environ, MEMPROF_OPTIONS=f"profile_file={raw}"))
    if profiled_run.returncode != 0:
        sys.exit(f"hint_real: {name}: the profiled run failed: {profiled_run.stderr[-800:]}")
    mprof = os.path.join(work, "profile.mprof")
    run([MEMPROF, "merge", "--quiet", "--binary=" + profiled, "-o", mprof, raw])
    stderr = build(args.cc, spec, tree, binaries["feedback"],
                   [plugin, "-fplugin-arg-memprof-use=" + mprof, "-fplugin-arg-memprof-remarks"],
                   pkg_config("--libs", "memprof-hint"))
    summary = feedback_summary(stderr)
    # What the profile's contexts behind each ambiguous call are, by class.
    ambiguous = [f"`{shown_path(match.group(1), tree)}`: "
                 f"{match.group(2)}"
                 for match in re.finditer(
        r"([\w./-]+:\d+):\d+: note: memprof: .\w+. call: ambiguous[^;]*; (bytes [^;]*)", stderr)]

    # The share of bytes hinted, on the profiling input.
    counter = os.path.join(work, "hint_counter.so")
    run([args.cc, "-O2", "-shared", "-fPIC", COUNTER_SOURCE, "-o", counter, "-ldl"])
    counts_path = os.path.join(work, "counts.txt")
    counted = subprocess.run(spec["command"](binaries["feedback"], spec["profile_size"]),
                             capture_output=True, env=dict(os.environ, LD_PRELOAD=counter,
                                                           HINT_COUNTER_OUTPUT=counts_path,
                                                           MEMPROF_HINT_STATS="1"))
    counts = dict(line.split() for line in open(counts_path).read().splitlines()) \
        if counted.returncode == 0 and os.path.exists(counts_path) else {}
    # The context-classified calls' bytes by class: libmemprof_hint's
    # statistics (MEMPROF_HINT_STATS=1), one line per call, on stderr.
    for match in re.finditer(r"libmemprof_hint: context-classified call .*?: default \d+ calls "
                             r"(\d+) bytes .*?, cold \d+ calls (\d+) bytes .*?, hot \d+ calls "
                             r"(\d+) bytes", counted.stderr.decode(errors="replace")):
        for klass, value in zip(("default", "cold", "hot"), match.groups()):
            key = f"context_{klass}_bytes"
            counts[key] = str(int(counts.get(key, 0)) + int(value))
    # The pages the hot contexts' blocks lay on, placed and as jemalloc
    # alone places them (MEMPROF_HINT_STATS=unplaced: classified and
    # counted, allocated in the default arenas).
    pages_pattern = (r"hot contexts' blocks lay on (?:more than )?(\d+) pages of 4 KiB .*?"
                     r"default contexts' blocks in the hinted arenas: (\d+) bytes")
    found = re.search(pages_pattern, counted.stderr.decode(errors="replace"))
    if found:
        counts["context_hot_pages"], counts["default_in_hinted"] = found.groups()
    unplaced = subprocess.run(spec["command"](binaries["feedback"], spec["profile_size"]),
                              capture_output=True,
                              env=dict(os.environ, MEMPROF_HINT_STATS="unplaced"))
    found = re.search(pages_pattern, unplaced.stderr.decode(errors="replace"))
    if unplaced.returncode == 0 and found:
        counts["context_hot_pages_unplaced"] = found.group(1)
    contexts, profile_bytes = profile_totals(mprof)
    print(f"hint_real: {name}: counting instructions (cachegrind)", flush=True)
    counted_instructions = count_instructions(name, spec, binaries)

    samples = {variant: [] for variant in VARIANTS}
    expected = None
    for round_number in range(args.runs):
        for variant in VARIANTS:
            stdout, status, cpu, rss = run_with_rss(spec["command"](binaries[variant],
                                                                    spec["run_size"]))
            if expected is None:
                expected = (stdout, status)
            if (stdout, status) != expected:
                sys.exit(f"hint_real: {name}: the {variant} build printed another output or "
                         f"exit status ({status})")
            samples[variant].append((cpu, rss))
        print(f"  {name}: round {round_number + 1}/{args.runs}", flush=True)
    # Each round ran the variants one after another: the feedback build's
    # CPU time over jemalloc alone's, round by round, follows the machine's
    # drift less than the two medians do.
    ratios = sorted(feedback[0] / jemalloc[0]
                    for feedback, jemalloc in zip(samples["feedback"], samples["jemalloc"])
                    if jemalloc[0] > 0)
    rows = {variant: (statistics.median(cpu for cpu, _ in samples[variant]),
                      statistics.median(rss for _, rss in samples[variant]),
                      min(cpu for cpu, _ in samples[variant]),
                      max(cpu for cpu, _ in samples[variant]))
            for variant in VARIANTS}
    return dict(summary=summary, ambiguous=ambiguous, counts=counts, contexts=contexts, profile_bytes=profile_bytes,
                rows=rows, status=expected[1], ratios=ratios,
                instructions=counted_instructions)


def percent(part, whole):
    return f"{100.0 * part / whole:.1f}%" if whole else "n/a"


def report(name, spec, result):
    rows, summary, counts = result["rows"], result["summary"], result["counts"]
    glibc_cpu, glibc_rss = rows["glibc"][:2]
    cold = int(counts.get("cold_bytes", 0))
    hot = int(counts.get("hot_bytes", 0))
    by_context = {c: int(counts.get(f"context_{c}_bytes", 0)) for c in ("cold", "hot", "default")}
    context_total = sum(by_context.values())
    whole = result["profile_bytes"]
    lines = [f"### {name}", "",
             f"Allocator: {spec['allocator']}. Profile: {result['contexts']} contexts, "
             f"{result['profile_bytes']} bytes allocated (input {spec['profile_size']}); "
             f"timed runs on input {spec['run_size']}, exit status {result['status']}, "
             "outputs identical.", "",
             "| variant | CPU s (median) | min..max | vs glibc | peak RSS, MiB | vs glibc |",
             "|---|---:|---:|---:|---:|---:|"]
    for variant in VARIANTS:
        cpu, rss, fastest, slowest = rows[variant]
        lines.append(f"| {LABELS[variant]} | {cpu:.3f} | {fastest:.2f}..{slowest:.2f} | "
                     f"{cpu / glibc_cpu:.2f} | {rss / 1024:.1f} | {rss / glibc_rss:.2f} |")
    ratios = result["ratios"]
    if ratios:
        lines += ["", f"Feedback build / jemalloc alone, CPU time round by round ({len(ratios)} "
                  f"rounds): median {statistics.median(ratios):.3f}, "
                  f"{ratios[0]:.2f}..{ratios[-1]:.2f}."]
    counted = result["instructions"]
    if counted:
        lines += ["", f"Instructions, one run each on input {spec['count_size']} (valgrind "
                  "--tool=cachegrind; deterministic but for Lua's seeded string hashing, "
                  "about 0.1%): " + ", ".join(
                      f"{variant} {counted[variant] / 1e6:.1f} M" for variant in VARIANTS)
                  + f"; feedback build / jemalloc alone "
                  f"**{counted['feedback'] / counted['jemalloc']:.3f}**."]
    lines += ["",
              f"Feedback: {summary['matched']} of {summary['calls']} allocation calls matched, "
              f"{summary['ambiguous']} ambiguous, {summary['clones']} wrapper clones; rewritten: "
              f"{summary['cold']} cold, {summary['hot']} hot; context-classified at run time: "
              f"{summary['context']}.",
              f"Share of bytes hinted at build time (profiling input): cold "
              f"{percent(cold, whole)}, hot {percent(hot, whole)} of {whole} bytes; hot-hinted "
              f"blocks start on {counts.get('hot_pages', 0)} pages of 4 KiB.",
              f"Share of bytes classified by context at run time (profiling input): "
              f"{context_total} bytes ({percent(context_total, whole)} of the profile's) went "
              f"through a context-classified call; of them cold "
              f"{percent(by_context['cold'], context_total)}, hot "
              f"{percent(by_context['hot'], context_total)}, default "
              f"{percent(by_context['default'], context_total)} (libmemprof_hint's statistics, "
              "MEMPROF_HINT_STATS=1)."]
    if "context_hot_pages" in counts:
        lines += [f"Hot pages (profiling input): the hot contexts' blocks lay on "
                  f"{counts['context_hot_pages']} pages of 4 KiB in the feedback build, on "
                  f"{counts.get('context_hot_pages_unplaced', 'n/a')} as jemalloc alone places "
                  f"them (the same run with MEMPROF_HINT_STATS=unplaced); "
                  f"{counts['default_in_hinted']} bytes of default contexts' blocks lay in the "
                  "hinted arenas (hinted blocks that jemalloc's free handed on)."]
    lines += [""]
    if result["ambiguous"]:
        lines += ["Ambiguous calls (classified by context at run time, see above) and the bytes of their contexts by class with "
                  "the thresholds fitted to the run (the plugin's remarks): "
                  + "; ".join(result["ambiguous"]) + ".", ""]
    placed = cold + hot + by_context["cold"] + by_context["hot"]
    if placed * 100 < whole:
        lines += [f"Why little or nothing is gained: {placed} of "
                  f"{whole} bytes ({percent(placed, whole)}"
                  f") were placed cold or hot; {summary['cold'] + summary['hot']} calls were "
                  f"rewritten (of {summary['calls']} allocation calls, {summary['matched']} "
                  f"matched the profile), {summary['ambiguous']} of the matched calls are "
                  f"ambiguous (the allocator wrapper serves callers of different classes, their "
                  f"bytes by class above) and {summary['context']} of them are classified by "
                  "context; what is not placed cold or hot runs as the jemalloc build does.", ""]
    return "\n".join(lines)


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cc", default="gcc")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--output", default=os.path.join(HERE, "results", "hint-real.md"))
    args = parser.parse_args()
    if args.runs < 1:
        parser.error("--runs must be at least 1")
    sections = []
    for name, spec in PROGRAMS.items():
        tree = debsrc.fetch(name, spec["marker"], who="hint_real")
        result = bench_program(name, spec, args, tree)
        section = report(name, spec, result)
        print(section, flush=True)
        sections.append(section)
    with open(args.output, "w") as output:
        output.write(f"""# Profile feedback on real programs

Produced by `make bench-hint` (`bench/hint_real.py --runs {args.runs}`) on
{datetime.date.today().isoformat()}. Each program from Debian's sources
(`apt-get source`) is built with glibc's malloc, with jemalloc alone, and
as a feedback build (profiled with the plugin on a small input, rebuilt
with `-fplugin-arg-memprof-use` at the default thresholds, which fit the
run); the three run interleaved, {args.runs} runs each, medians of CPU time
(user+sys) and peak RSS from GNU time. The shares of bytes classified count
the bytes that reached libmemprof_hint's hinted entry points (hinted at
build time) and its context-classified ones (classified at run time, by
class, libmemprof_hint's statistics) in a run on the profiling input.
Instructions: one run of each variant under valgrind's cachegrind on a
smaller input, a verdict steadier than CPU time on a loaded machine.

""" + "\n".join(sections))
    print(f"hint_real: wrote {os.path.relpath(args.output, TOP)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
