#!/usr/bin/env python3
"""Sampled access counting (-fplugin-arg-memprof-sample-accesses, bursty
tracing: gcc-plugin/bursts.cc, runtime/access_bursts.c), checked on
programs built with the real gcc and the plugin and read back with the
`memprof` command and llvm-profdata-19:

- the program's behaviour: the same output and exit status as the plain
  gcc build and the plugin's exact build (C with setjmp, C++ with
  exceptions);
- known_accesses.c: the exact build counts what the program's comment
  says, block by block; the sampled build's counts (scaled by the rate)
  are within BOUNDS of them, in copied functions, in a function left
  whole (setjmp) and for strlen's interception; the side file says the counts are a sample, so no block is
  called never touched or over-reserved;
- threads.c: each thread's countdown is its own; both blocks within the
  bound, with the shared and with the static runtime; the countdown is
  read local-exec in an executable's code, initial-exec in a shared
  library's;
- llvm-profdata-19 reads the sampled raw profile.

Ends with `bursts: N passed, N failed`."""

import argparse
import json
import os
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(TOP, "testsuite", "lib"))
from report import Report  # noqa: E402

MEMPROF = os.path.join(TOP, "analysis", "memprof")
WORK = os.path.join(HERE, "work")
results = Report("bursts")
args = None

# known_accesses.c, block size -> exact accesses (see its opening comment).
KNOWN = {8000: 2 * 2000 * 1000, 8: 50 * 20000 + 1, 8016: 2000000 * (64 // 8 + 1), 32: 2 * 1000000,
         64: 9 + 1000000 * 8, 1 << 20: 0}
# The largest relative error allowed, by rate: a loop of 2,000,000 checks
# holds about 2,000,000 / (100 * RATE) bursts of 100 checks.  Measured
# over 20 runs of each (gaps are random): the worst block was off by 1.8%
# at rate 10 and by 5.0% at rate 100.
BOUNDS = {10: 0.10, 100: 0.25}


def run(command, **kwargs):
    return subprocess.run(command, capture_output=True, text=True, **kwargs)


def pkg_config(*options):
    env = dict(os.environ, PKG_CONFIG_PATH=TOP)
    return run(["pkg-config", *options, "memprof"], env=env, check=True).stdout.split()


def build(label, source, output, flags=(), plugin=True):
    compiler = args.cxx if source.endswith(".cc") else args.cc
    command = [compiler, "-O2", "-g"]
    if plugin:
        command += ["-fplugin=" + pkg_config("--variable=plugin")[0], *flags,
                    *pkg_config("--cflags")]
    command += [os.path.join(HERE, source), "-o", output, "-lpthread"]
    if plugin:
        command += pkg_config("--libs")
    result = run(command)
    results.check(result.returncode == 0, f"{label}: builds",
                  " ".join(command) + "\n" + result.stderr[-2000:])
    return result.returncode == 0


def execute(binary, directory, options="", ):
    """Runs BINARY in a fresh DIRECTORY; returns (result, profile or None)."""
    shutil.rmtree(directory, ignore_errors=True)
    os.makedirs(directory)
    env = dict(os.environ, MEMPROF_OPTIONS=options + ":profile_file=run.profraw")
    result = run([os.path.abspath(binary)], cwd=directory, env=env)
    profile = os.path.join(directory, "run.profraw")
    return result, profile if os.path.exists(profile) else None


def accesses_by_size(binary, profile):
    """Block size -> accesses, for the program's own contexts."""
    shown = run([MEMPROF, "show", "--format=json", "--top=0", "--binary=" + binary, profile])
    if shown.returncode != 0:
        return {}, shown.stderr
    counts = {}
    for record in json.loads(shown.stdout)["records"]:
        if not record.get("system"):
            size = int(record["mean_size"])
            size = 1 << 20 if size >= 1 << 20 else size  # (the big block's size is rounded)
            counts[size] = counts.get(size, 0) + record["accesses"]
    return counts, ""


def finding_kinds(binary, profile):
    shown = run([MEMPROF, "findings", "--format=json", "--binary=" + binary, profile])
    return sorted({f["kind"] for f in json.loads(shown.stdout or '{"findings": []}')["findings"]})


def within(sampled, exact, bound):
    if exact == 0:
        return sampled == 0
    return abs(sampled - exact) <= bound * exact


def check_behaviour(work):
    """The same output and exit status with and without the option."""
    for source in ("known_accesses.c", "exceptions.cc"):
        name = os.path.splitext(source)[0]
        outputs = {}
        for label, flags, plugin in (("gcc", [], False), ("exact", [], True),
                                     ("sampled", ["-fplugin-arg-memprof-sample-accesses"],
                                      True)):
            binary = os.path.join(work, f"{name}.{label}")
            if not build(f"{source} ({label})", source, binary, flags, plugin):
                return
            result, _ = execute(binary, os.path.join(work, f"{name}.{label}.run"),
                                "write_profile=0")
            outputs[label] = (result.stdout, result.returncode)
        results.check(outputs["sampled"] == outputs["gcc"] == outputs["exact"],
                      f"{source}: the same output and exit status in the gcc, exact and "
                      f"sampled builds", str(outputs))


def check_counts(work, rate):
    binary = os.path.join(work, f"known_accesses.rate{rate}")
    exact_binary = os.path.join(work, "known_accesses.exact")
    if not build(f"known_accesses.c (rate {rate})", "known_accesses.c", binary,
                 [f"-fplugin-arg-memprof-sample-accesses={rate}"]):
        return
    result, exact_profile = execute(exact_binary, os.path.join(work, "exact.run"))
    exact, error = accesses_by_size(exact_binary, exact_profile) if exact_profile else ({}, "")
    if rate == min(BOUNDS):
        results.check({size: exact.get(size) for size in KNOWN} == KNOWN,
                      "known_accesses.c, exact build: every block counted as its comment says",
                      f"{exact} {error}")
    result, profile = execute(binary, os.path.join(work, f"rate{rate}.run"))
    sampled, error = accesses_by_size(binary, profile) if profile else ({}, result.stderr)
    bound = BOUNDS[rate]
    for size, label in ((8000, "a loop's accesses (back-edge checks)"),
                        (8, "a recursive function's (entry checks)"),
                        (8016, "memcpy ranges, weighted"),
                        (64, "strlen's reads, counted by the runtime's interception"),
                        (32, "a function left whole (setjmp): updates in bursts only")):
        results.check(size in sampled and within(sampled[size], KNOWN[size], bound),
                      f"rate {rate}: {label}: within {bound:.0%} of the exact count",
                      f"sampled {sampled.get(size)}, exact {KNOWN[size]} {error}")
    exact_kinds = finding_kinds(exact_binary, exact_profile)
    sampled_kinds = finding_kinds(binary, profile)
    results.check(sampled.get(1 << 20) == 0 and sampled_kinds == []
                  and exact_kinds == ["never-touched", "over-reserved"],
                  f"rate {rate}: the side file marks the counts as a sample: the untouched "
                  f"block is never-touched, the 64 bytes copied into 8016 over-reserved, in "
                  f"the exact profile only", f"exact {exact_kinds}, sampled {sampled_kinds}")
    if rate == min(BOUNDS):
        shown = run([args.llvm_profdata, "show", "--memory", profile,
                     "--profiled-binary=" + binary])
        results.check(shown.returncode == 0 and "MemprofProfile" in shown.stdout,
                      "llvm-profdata-19 reads the sampled raw profile",
                      shown.stderr[-1000:])


def check_thread_blocks(label, binary, directory):
    """threads.c's two blocks (8000 bytes, 2 * 1500 * 1000 accesses
    each) within the bound of rate 10."""
    result, profile = execute(binary, directory)
    shown = run([MEMPROF, "show", "--format=json", "--top=0", "--binary=" + binary,
                 profile]) if profile else None
    counts = [r["accesses"] for r in json.loads(shown.stdout)["records"]
              if r["mean_size"] == 8000 and not r.get("system")] \
        if shown is not None and shown.returncode == 0 else []
    exact = 2 * 1500 * 1000
    results.check(len(counts) == 2 and all(within(c, exact, BOUNDS[10]) for c in counts),
                  f"{label}: each thread's block within {BOUNDS[10]:.0%} of {exact}",
                  f"{counts} {shown.stderr[-500:] if shown else result.stderr[-500:]}")


def check_threads(work):
    binary = os.path.join(work, "threads.sampled")
    if not build("threads.c (rate 10)", "threads.c", binary,
                 ["-fplugin-arg-memprof-sample-accesses=10"]):
        return
    check_thread_blocks("threads", binary, os.path.join(work, "threads.run"))


def countdown_relocations(work, name, flags):
    """The relocation types against the countdown in threads.c's object
    built with FLAGS."""
    obj = os.path.join(work, name + ".o")
    command = [args.cc, "-O2", "-c", *flags, "-fplugin=" + pkg_config("--variable=plugin")[0],
               "-fplugin-arg-memprof-sample-accesses", *pkg_config("--cflags"),
               os.path.join(HERE, "threads.c"), "-o", obj]
    if run(command).returncode != 0:
        return set()
    relocations = run(["readelf", "-rW", obj]).stdout.splitlines()
    return {line.split()[2] for line in relocations
            if "__memprof_access_countdown" in line and len(line.split()) > 2}


def check_countdown_access(work):
    """An executable's code reads the countdown local-exec (it defines it,
    weak); a shared library's, initial-exec; a static link keeps the
    runtime's definition, and the code and the runtime share it."""
    executable = countdown_relocations(work, "threads.pie", ["-fPIE"])
    shared = countdown_relocations(work, "threads.pic", ["-fPIC"])
    results.check(executable == {"R_X86_64_TPOFF32"} and shared == {"R_X86_64_GOTTPOFF"},
                  "the countdown: local-exec in an executable's code, initial-exec in a "
                  "shared library's", f"executable {executable}, shared {shared}")
    binary = os.path.join(work, "threads.static-runtime")
    command = [args.cc, "-O2", "-g", "-fplugin=" + pkg_config("--variable=plugin")[0],
               "-fplugin-arg-memprof-sample-accesses=10", *pkg_config("--cflags"),
               os.path.join(HERE, "threads.c"), "-o", binary,
               os.path.join(TOP, "runtime", "libmemprof.a"), "-lunwind", "-lzstd",
               "-lpthread", "-lm"]
    built = run(command)
    results.check(built.returncode == 0, "threads.c with the static runtime: builds",
                  built.stderr[-2000:])
    if built.returncode != 0:
        return
    check_thread_blocks("threads, static runtime", binary,
                        os.path.join(work, "threads.static.run"))


def main():
    global args
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cc", default="gcc")
    parser.add_argument("--cxx", default="g++")
    parser.add_argument("--llvm-profdata", default="llvm-profdata-19")
    args = parser.parse_args()
    if not os.path.exists(MEMPROF):
        sys.exit(f"bursts: build the command first (make): {MEMPROF} is missing")
    shutil.rmtree(WORK, ignore_errors=True)
    os.makedirs(WORK)
    check_behaviour(WORK)
    for rate in sorted(BOUNDS):
        check_counts(WORK, rate)
    check_threads(WORK)
    check_countdown_access(WORK)
    return results.finish()


if __name__ == "__main__":
    sys.exit(main())
