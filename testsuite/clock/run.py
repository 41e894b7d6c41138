#!/usr/bin/env python3
"""The clock (runtime/clock.c, runtime/ticker.c; docs/internals.md, "The
clock"), checked on a real program run as users run it: blocks held for
known times -- across a sleep, while the thread allocates without a
break, while it allocates once a millisecond, in a second thread -- have
the lifetimes llvm-profdata-19 reads from the profile, within the
documented bound, with clock_ticker=1, with other busy processes on the
machine, and with clock_ticker=0 (the default).  And the helper
process changes nothing the program can see: its output and exit status,
its thread count and __libc_single_threaded; it is gone once the program
is idle and once it has exited.

Prints one line per check and ends with `clock: N passed, N failed`."""

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(TOP, "scripts"))
sys.path.insert(0, os.path.join(TOP, "testsuite", "lib"))
import llvm_memprof_yaml  # noqa: E402
from report import Report  # noqa: E402

results = Report("clock")
# docs/internals.md, "The clock": a reading is behind the exact clock by
# at most the ticker's period plus its wake-up delay, taken as 2 ms here;
# lifetimes are differences of whole milliseconds (1 more either way).
# "sparse" holds 20 blocks: the shortest and longest bounds of any.
BOUND_MS = 2 + 1
HELD = ("asleep", "busy", "sparse", "in_thread", "realloced", "regrown")


def live_processes():
    """(pid, name, parent pid) of every process not a zombie."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as stat:
                text = stat.read()
        except OSError:
            continue
        fields = text.rsplit(")", 1)[1].split()
        if fields[0] != "Z":
            found.append((int(entry), text[text.index("(") + 1:text.rindex(")")],
                          int(fields[1])))
    return found


def children_of(pid):
    return [child for child, _, parent in live_processes() if parent == pid]


def processes_named(name):
    return [pid for pid, comm, _ in live_processes() if comm == name]


def run(binary, directory, env):
    """Run BINARY; at its "idle PID" line, the helper processes left (after
    the idle time the ticker takes to exit).  Returns (exit status, the
    lines, the children seen while idle)."""
    process = subprocess.Popen([binary], cwd=directory, env=env, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True)
    lines, idle_children = [], None
    for line in process.stdout:
        lines.append(line.rstrip("\n"))
        if line.startswith("idle "):
            time.sleep(0.25)
            idle_children = children_of(process.pid)
    process.wait()
    run.stderr = process.stderr.read()
    return process.returncode, lines, idle_children


def held_bounds(lines):
    bounds = {}
    for line in lines:
        words = line.split()
        if len(words) == 3 and words[0] in HELD:
            bounds[words[0]] = (int(words[1]), int(words[2]))
    return bounds


def lifetimes(profile, binary):
    show = subprocess.run([args.llvm_profdata, "show", "--memory", profile,
                           "--profiled-binary", binary], capture_output=True, text=True)
    if show.returncode != 0:
        return None
    found = {}
    for frames, mib in llvm_memprof_yaml.alloc_sites(show.stdout):
        if frames and frames[0][0].startswith("held_"):
            found[frames[0][0][len("held_"):]] = mib
    return found


def check_configuration(label, binary, directory, options, native_lines):
    profile = os.path.join(directory, f"{label.replace(' ', '_')}.profraw")
    env = dict(os.environ, MEMPROF_OPTIONS=f"profile_file={profile}:{options}".rstrip(":"),
               LD_PRELOAD=os.path.join(TOP, "runtime", "libmemprof.so"))
    status, lines, idle_children = run(binary, directory, env)
    results.check(status == 7, f"{label}: the exit status is the program's own (7)", str(status))
    same = [line for line in lines if line.startswith(("threads", "done"))]
    results.check(same == [line for line in native_lines if line.startswith(("threads", "done"))],
                  f"{label}: the program sees one thread and __libc_single_threaded set, "
                  "as without the runtime", str(same))
    results.check(idle_children == [],
                  f"{label}: no helper process is left while the program is idle",
                  str(idle_children))
    time.sleep(0.1)
    left = processes_named(os.path.basename(binary)[:15])
    results.check(left == [], f"{label}: no helper process is left after the program exits",
                  str(left))
    bounds = held_bounds(lines)
    found = lifetimes(profile, binary)
    if not results.check(found is not None and set(found) == set(HELD)
                         and set(bounds) == set(HELD),
                         f"{label}: llvm-profdata-19 reads a profile with the six held blocks",
                         f"{found} {bounds}"):
        return
    for name in HELD:
        inner, outer = bounds[name]
        mib = found[name]
        lowest = inner // 1000 - BOUND_MS
        highest = outer // 1000 + BOUND_MS
        count = 20 if name == "sparse" else 1
        results.check(mib.get("AllocCount") == count
                      and lowest <= mib.get("MinLifetime", -1)
                      and mib.get("MaxLifetime", highest + 1) <= highest,
                      f"{label}: the block(s) held {name} live {mib.get('MinLifetime')}.."
                      f"{mib.get('MaxLifetime')} ms, "
                      f"measured {inner / 1000:.1f}..{outer / 1000:.1f} ms "
                      f"(bound {BOUND_MS} ms)",
                      str(mib))


def main():
    global args
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--cc", default="gcc")
    parser.add_argument("--llvm-profdata", default="llvm-profdata-19")
    args = parser.parse_args()
    work = tempfile.mkdtemp(prefix="memprof-clock-")
    try:
        binary = os.path.join(work, "lifetimes")
        build = subprocess.run([args.cc, "-O1", "-g", "-fno-optimize-sibling-calls",
                                os.path.join(HERE, "lifetimes.c"), "-o", binary, "-lpthread"],
                               capture_output=True, text=True)
        if not results.check(build.returncode == 0, "lifetimes.c builds", build.stderr):
            return results.finish()
        status, native_lines, _ = run(binary, work, dict(os.environ))
        results.check(status == 7 and "threads 1 single 1" in native_lines,
                      "without the runtime: exit status 7, one thread", str(native_lines))
        check_configuration("clock_ticker=1", binary, work, "clock_ticker=1", native_lines)
        # Two processes that never sleep, on this 2-core machine's cores.
        spinners = [subprocess.Popen([sys.executable, "-c", "while True: pass"])
                    for _ in range(2)]
        try:
            check_configuration("clock_ticker=1 beside 2 busy processes", binary, work,
                                "clock_ticker=1", native_lines)
        finally:
            for spinner in spinners:
                spinner.kill()
                spinner.wait()
        check_configuration("clock_ticker=0 (the default)", binary, work, "verbosity=2",
                            native_lines)
        # Without the ticker, realloc's allocation and free share a reading
        # (docs/internals.md, "The clock"): lifetimes.c makes 101 reallocs;
        # a preemption inside one spends its hold, so at least one.
        shared = [line for line in run.stderr.splitlines()
                  if "readings shared by a realloc" in line]
        results.check(len(shared) == 1 and int(shared[0].split()[2]) >= 1,
                      "clock_ticker=0: realloc's allocation and free shared a reading "
                      "(the lifetimes above stay within the bound)", str(shared))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return results.finish()


if __name__ == "__main__":
    sys.exit(main())
