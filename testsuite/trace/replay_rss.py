#!/usr/bin/env python3
"""`memprof replay` measures RSS honestly (docs/trace.md, "Replay"):
keep64.c keeps 64 MiB live; its trace, converted and replayed against
glibc, jemalloc and tcmalloc, must report a heap RSS (the most sampled
anonymous RSS less the baseline) and a max RSS of at least the ideal RSS
(the 64 MiB), a ratio of at least 1, every byte written, and at least
100 samples in the CSV and the SVG chart, though the trace replays in
milliseconds.  --no-write, which leaves the blocks untouched, must stay
far below: the check can fail.

Prints one line per check and ends with `replay-rss: N passed, N failed`."""

import argparse
import os
import re
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(TOP, "testsuite", "lib"))
from report import Report  # noqa: E402

MEMPROF = os.path.join(TOP, "analysis", "memprof")
WORK = os.path.join(HERE, "work-replay-rss")
IDEAL = 64 << 20
ALLOCATORS = ("glibc", "jemalloc", "tcmalloc")
results = Report("replay-rss")


def run(command, **kwargs):
    return subprocess.run(command, capture_output=True, text=True, **kwargs)


def value(text, name):
    """The bytes of a `  NAME   N bytes' line of the replay's report."""
    match = re.search(rf"^\s+{re.escape(name)}\s+(\d+) bytes", text, re.M)
    return int(match.group(1)) if match else None


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--cc", default="gcc")
    parser.add_argument("--keep", action="store_true")
    options = parser.parse_args()
    shutil.rmtree(WORK, ignore_errors=True)
    os.makedirs(WORK)
    binary = os.path.join(WORK, "keep64")
    runtime = os.path.join(TOP, "runtime")
    built = run([options.cc, "-O1", "-g", os.path.join(HERE, "keep64.c"), "-o",
                 binary, "-L", runtime, "-Wl,-rpath," + runtime, "-lmemprof"])
    if not results.check(built.returncode == 0, "keep64.c builds", built.stderr):
        return results.finish()
    trace = os.path.join(WORK, "keep64.trace.zst")
    traced = run([binary], cwd=WORK, env=dict(
        os.environ, MEMPROF_OPTIONS=f"trace=1:profile=0:trace_file={trace}"))
    results.check(traced.returncode == 0 and os.path.exists(trace),
                  "keep64 writes its trace", traced.stderr)
    workload = os.path.join(WORK, "keep64.wl")
    converted = run([MEMPROF, "trace2wl", trace, "-o", workload])
    if not results.check(converted.returncode == 0, "trace2wl converts it",
                         converted.stderr):
        return results.finish()
    for allocator in ALLOCATORS:
        csv = os.path.join(WORK, f"{allocator}.csv")
        svg = os.path.join(WORK, f"{allocator}.svg")
        replay = run([MEMPROF, "replay", f"--allocator={allocator}",
                      f"--csv={csv}", f"--svg={svg}", workload])
        name = f"replay with {allocator}"
        if not results.check(replay.returncode == 0, f"{name}: runs",
                             replay.stderr):
            continue
        out = replay.stdout
        ideal = value(out, "ideal RSS")
        heap = value(out, "heap RSS")
        maximum = value(out, "max RSS")
        ratio = re.search(r"RSS / ideal\s+([\d.]+)", out)
        results.check(ideal == IDEAL, f"{name}: ideal RSS is the 64 MiB live",
                      str(ideal))
        results.check(heap is not None and heap >= IDEAL
                      and maximum is not None and maximum >= IDEAL,
                      f"{name}: heap RSS {heap} and max RSS {maximum} are at "
                      "least the ideal RSS", out)
        results.check(ratio is not None and 1.0 <= float(ratio.group(1)) < 1.5,
                      f"{name}: RSS / ideal "
                      f"{ratio.group(1) if ratio else '?'} (at least 1)", out)
        written = re.search(r"bytes written\s+(\d+)", out)
        results.check(written is not None and int(written.group(1)) >= IDEAL,
                      f"{name}: every byte of every block is written",
                      str(written and written.group(1)))
        rss = [line for line in open(csv).read().splitlines()
               if line.startswith("rss,")] if os.path.exists(csv) else []
        results.check(len(rss) >= 100, f"{name}: {len(rss)} RSS samples "
                      "(at least 100) for a replay of milliseconds")
        svg_text = open(svg).read() if os.path.exists(svg) else ""
        points = re.findall(r"<polyline[^>]*points='([^']*)'", svg_text) \
            or re.findall(r'<polyline[^>]*points="([^"]*)"', svg_text)
        results.check(bool(points) and len(points[0].split()) >= 100,
                      f"{name}: the SVG's RSS line has at least 100 points",
                      str([len(p.split()) for p in points]))
    unwritten = run([MEMPROF, "replay", "--no-write", workload])
    heap = value(unwritten.stdout, "heap RSS")
    results.check(unwritten.returncode == 0 and heap is not None
                  and heap < IDEAL // 4,
                  f"--no-write: the untouched blocks stay out of RSS ({heap})",
                  unwritten.stdout)
    if not options.keep:
        shutil.rmtree(WORK, ignore_errors=True)
    return results.finish()


if __name__ == "__main__":
    sys.exit(main())
