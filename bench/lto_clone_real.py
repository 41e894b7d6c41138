#!/usr/bin/env python3
"""Wrapper cloning at link time on a real program: Debian's GNU m4
(gnulib's xmalloc, called through xcharalloc, xstrdup, xmemdup...),
built with -flto and profile feedback three ways, each from the same
profile of an instrumented -flto build (bench/hint_real.py's m4 input):

  no-clones  -fplugin-arg-memprof-clone-wrappers=0: no wrapper cloned
  one-level  -fplugin-arg-memprof-clone-depth=1: a wrapper cloned only
             when its callers' contexts each have one class (before
             clone chains)
  chains     the default: clone chains of up to 3 functions, the
             wrappers and their callers kept in one link-time unit

For each: the plugin's summary lines added up over the link-time units
(allocation calls matched, ambiguous, wrapper clones, calls rewritten
cold and hot, context-classified), the clone-chain remarks, the number
of link-time units and WPA's partitioning note, and whether the
program's output on the real input equals the plain build's (gcc -O2,
no plugin), with the median CPU time (user+sys) of --runs interleaved
runs; and the link step alone, each build's objects linked again
(interleaved, medians of wall and CPU time): what keeping the program in
one link-time unit costs.  Writes bench/results/lto-clone-real.md
(--output).

Usage: bench/lto_clone_real.py [--cc gcc] [--runs 3]"""

import argparse
import datetime
import glob
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
import hint_real  # noqa: E402

WORK = os.path.join(HERE, "work", "lto-clone-real")
CONFIGS = (("no-clones", ["-fplugin-arg-memprof-clone-wrappers=0"]),
           ("one-level", ["-fplugin-arg-memprof-clone-depth=1"]),
           ("chains", []))
LTO = ["-flto=2"]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cc", default="gcc")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--output", default=os.path.join(HERE, "results", "lto-clone-real.md"))
    args = parser.parse_args()
    hint_real.WORK = WORK
    os.makedirs(WORK, exist_ok=True)
    spec = hint_real.PROGRAMS["m4"]
    tree = debsrc.fetch("m4", spec["marker"], who="lto_clone_real")
    plugin = "-fplugin=" + hint_real.pkg_config("--variable=plugin", "memprof")[0]

    print("lto_clone_real: m4: building plain and profiled (-flto)", flush=True)
    plain = os.path.join(WORK, "m4_plain")
    hint_real.build(args.cc, spec, tree, plain, [], [])
    profiled = os.path.join(WORK, "m4_profiled")
    hint_real.build(args.cc, spec, tree, profiled,
                    [*LTO, plugin, "-fno-optimize-sibling-calls",
                     *hint_real.pkg_config("--cflags", "memprof")],
                    hint_real.pkg_config("--libs", "memprof"))
    raw = os.path.join(WORK, "profile.profraw")
    ran = subprocess.run(spec["command"](profiled, spec["profile_size"]), capture_output=True,
                         env=dict(os.environ, MEMPROF_OPTIONS=f"profile_file={raw}"))
    if ran.returncode != 0:
        sys.exit(f"lto_clone_real: the profiled run failed: {ran.stderr[-800:]}")
    mprof = os.path.join(WORK, "profile.mprof")
    hint_real.run([hint_real.MEMPROF, "merge", "--quiet", "--binary=" + profiled, "-o", mprof,
                   raw])

    results = {}
    links = {}
    binaries = {"plain": plain}
    for name, extra in CONFIGS:
        print(f"lto_clone_real: m4: building {name}", flush=True)
        binary = os.path.join(WORK, f"m4_{name}")
        stderr = hint_real.build(args.cc, spec, tree, binary,
                                 [*LTO, plugin, "-fplugin-arg-memprof-use=" + mprof,
                                  "-fplugin-arg-memprof-remarks", *extra],
                                 hint_real.pkg_config("--libs", "memprof-hint"))
        with open(binary + ".stderr", "w") as out:
            out.write(stderr)
        # The objects and gnulib's archive, to link them again below.
        kept = os.path.join(WORK, "objects-" + name)
        shutil.rmtree(kept, ignore_errors=True)
        os.makedirs(kept)
        for path in [*glob.glob(os.path.join(tree, "src", "*.o")),
                     os.path.join(tree, "lib", "libm4.a")]:
            shutil.copy(path, kept)
        links[name] = [args.cc, "-O2", "-g", *LTO, plugin, "-fplugin-arg-memprof-use=" + mprof,
                       *extra, "-o", os.path.join(kept, "m4"),
                       *sorted(glob.glob(os.path.join(kept, "*.o"))),
                       os.path.join(kept, "libm4.a"),
                       *hint_real.pkg_config("--libs", "memprof-hint")]
        summary = hint_real.feedback_summary(stderr)
        note = re.search(r"memprof: -flto: partitioning one instead of [^\n]*", stderr)
        results[name] = dict(
            summary=summary,
            units=len(set(re.findall(r"memprof: (\S+\.ltrans\d+\.o): profile ", stderr))),
            chained=len(re.findall(r"note: memprof: [^\n]*: a clone chain \(level", stderr)),
            note=note.group(0) if note else None)
        binaries[name] = binary

    samples = {name: [] for name in binaries}
    expected = None
    for round_number in range(args.runs):
        for name, binary in binaries.items():
            stdout, status, cpu, _ = hint_real.run_with_rss(spec["command"](binary,
                                                                            spec["run_size"]))
            if expected is None:
                expected = (stdout, status)
            if (stdout, status) != expected:
                sys.exit(f"lto_clone_real: m4 {name} printed another output or exit status "
                         f"({status}) than the plain build")
            samples[name].append(cpu)
        print(f"  m4: round {round_number + 1}/{args.runs}", flush=True)

    # The link step alone (WPA and the ltrans units), each build's objects
    # linked again, interleaved: wall and CPU (user+sys, its processes).
    link_times = {name: [] for name in links}
    for round_number in range(args.runs):
        for name, command in links.items():
            timing = os.path.join(WORK, "link-time.out")
            linked = subprocess.run(["/usr/bin/time", "-o", timing, "-f", "%e %U %S",
                                     *command], capture_output=True)
            if linked.returncode != 0:
                sys.exit(f"lto_clone_real: linking {name} again failed: "
                         f"{linked.stderr[-800:]}")
            wall, user, system = map(float, open(timing).read().split()[-3:])
            link_times[name].append((wall, user + system))
        print(f"  m4: link round {round_number + 1}/{args.runs}", flush=True)

    lines = [f"# Wrapper cloning at link time on GNU m4 (-flto)", "",
             f"Written by `bench/lto_clone_real.py --runs {args.runs}` on "
             f"{datetime.date.today().isoformat()}; m4 {os.path.basename(tree)}, "
             f"profile of the -flto instrumented build on -DROUNDS={spec['profile_size']}, "
             f"runs on -DROUNDS={spec['run_size']}. Every build's output equals the plain "
             f"build's.", "",
             "| build | link-time units | calls matched | ambiguous | wrapper clones | chained "
             "clones | rewritten cold | rewritten hot | context-classified | CPU s (median) |",
             "|---|---|---|---|---|---|---|---|---|---|",
             f"| plain (gcc -O2, no plugin) | | | | | | | | | "
             f"{statistics.median(samples['plain']):.3f} |"]
    for name, _ in CONFIGS:
        r = results[name]
        s = r["summary"]
        lines.append(f"| {name} | {r['units']} | {s['matched']} of {s['calls']} | "
                     f"{s['ambiguous']} | {s['clones']} | {r['chained']} | {s['cold']} | "
                     f"{s['hot']} | {s['context']} | {statistics.median(samples[name]):.3f} |")
    lines += ["", "The link step alone (`-flto=2`, the build's objects linked again, "
              f"{args.runs} interleaved runs, medians; the machine may be shared):", "",
              "| build | link-time units | wall s | CPU s (user+sys) |", "|---|---|---|---|"]
    for name, _ in CONFIGS:
        lines.append(f"| {name} | {results[name]['units']} | "
                     f"{statistics.median(w for w, _ in link_times[name]):.2f} | "
                     f"{statistics.median(c for _, c in link_times[name]):.2f} |")
    lines.append("")
    for name, _ in CONFIGS:
        if results[name]["note"]:
            lines.append(f"- {name}: `{results[name]['note']}`")
    text = "\n".join(lines) + "\n"
    os.makedirs(os.path.dirname(args.output), exist_ok=True)
    with open(args.output, "w") as out:
        out.write(text)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
