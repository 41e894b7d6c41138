#!/usr/bin/env python3
"""Direct allocation calls (-fplugin-arg-memprof-direct-allocations:
gcc-plugin/direct_allocations.cc, runtime/direct_calls.c), checked on
sites.c (malloc, calloc, realloc, free) and deletes.cc (operator delete,
sized and not) built with the real gcc and g++ and the plugin (no access
counters), run with the runtime and read back with the `memprof` command:

- the same output and exit status as the plain gcc build;
- the direct build defines the runtime's thread state (the countdown),
  exported, so that the runtime's references find the program's;
- the calls were rewritten: the direct build calls glibc's __libc_malloc,
  __libc_calloc, __libc_realloc and __libc_free (deletes.cc: __libc_free),
  the interposed build none of them;
- sample_interval=1 (nothing left out): the direct build's profile has
  the interposed build's contexts with the same allocation counts;
- sampled (sample_interval=524288): every site is in both profiles (the
  census records each site's first allocation).

Ends with `direct: N passed, N failed`."""

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
GLIBC_ENTRIES = ("__libc_malloc", "__libc_calloc", "__libc_realloc", "__libc_free")
# Each program: the glibc entries its direct build calls, its contexts.
PROGRAMS = {"sites.c": (GLIBC_ENTRIES, 5), "deletes.cc": (("__libc_free",), 3)}
results = Report("direct")


def run(command, **kwargs):
    return subprocess.run(command, capture_output=True, text=True, **kwargs)


def pkg_config(*options):
    env = dict(os.environ, PKG_CONFIG_PATH=TOP)
    return run(["pkg-config", *options, "memprof"], env=env, check=True).stdout.split()


def build(compiler, source, label, output, flags):
    command = [compiler, "-O2", "-g", *flags, os.path.join(HERE, source), "-o", output]
    if flags:
        command[3:3] = ["-fplugin=" + pkg_config("--variable=plugin")[0],
                        "-fplugin-arg-memprof-instrument=0", *pkg_config("--cflags")]
        command += pkg_config("--libs")
    result = run(command)
    results.check(result.returncode == 0, f"{source} ({label}): builds",
                  " ".join(command) + "\n" + result.stderr[-2000:])
    return result.returncode == 0


def execute(binary, options):
    """Runs BINARY in a fresh directory; returns (stdout, status, sites),
    sites being (mean size, allocations, line) of the program's contexts."""
    directory = binary + ".run"
    shutil.rmtree(directory, ignore_errors=True)
    os.makedirs(directory)
    env = dict(os.environ, MEMPROF_OPTIONS=options + ":profile_file=run.profraw")
    result = run([binary], cwd=directory, env=env)
    profile = os.path.join(directory, "run.profraw")
    sites = None
    if os.path.exists(profile):
        shown = run([MEMPROF, "show", "--format=json", "--top=0", "--binary=" + binary,
                     profile])
        if shown.returncode == 0:
            sites = sorted((int(r["mean_size"]), r["allocs"], r["frames"][0]["line"])
                           for r in json.loads(shown.stdout)["records"] if not r["system"])
    return result.stdout, result.returncode, sites


def glibc_entries(binary):
    symbols = run(["nm", "-D", "--undefined-only", binary]).stdout.split()
    return sorted(name.split("@")[0] for name in symbols
                  if name.split("@")[0] in GLIBC_ENTRIES)


def check_program(compiler, source):
    entries, contexts = PROGRAMS[source]
    name = os.path.splitext(source)[0]
    binaries = {label: os.path.join(WORK, f"{name}.{label}")
                for label in ("gcc", "interposed", "direct")}
    # The interposed build: the plugin without the option (any flag
    # builds with the plugin).
    if not (build(compiler, source, "gcc", binaries["gcc"], [])
            and build(compiler, source, "interposed", binaries["interposed"],
                      ["-DINTERPOSED"])
            and build(compiler, source, "direct", binaries["direct"],
                      ["-fplugin-arg-memprof-direct-allocations"])):
        return
    plain = execute(binaries["gcc"], "")
    exported = run(["readelf", "--dyn-syms", "-W", binaries["direct"]]).stdout
    results.check(any(line.split()[-1] == "__memprof_sampling_countdown"
                      and line.split()[3] == "TLS" and line.split()[6] != "UND"
                      for line in exported.splitlines() if len(line.split()) >= 8),
                  f"{source}: the direct build defines the countdown for the runtime "
                  f"(one thread state, the program's)", exported[-2000:])
    results.check(glibc_entries(binaries["direct"]) == sorted(entries)
                  and glibc_entries(binaries["interposed"]) == [],
                  f"{source}: the direct build calls glibc's entries, the interposed one "
                  f"does not", f"direct {glibc_entries(binaries['direct'])}, "
                  f"interposed {glibc_entries(binaries['interposed'])}")
    for options in ("sample_interval=1", "sample_interval=524288"):
        direct = execute(binaries["direct"], options)
        interposed = execute(binaries["interposed"], options)
        results.check(direct[:2] == interposed[:2] == plain[:2],
                      f"{source}, {options}: the same output and exit status as gcc's build",
                      f"gcc {plain[:2]}, interposed {interposed[:2]}, direct {direct[:2]}")
        if options == "sample_interval=1":
            results.check(direct[2] is not None and len(direct[2]) == contexts
                          and direct[2] == interposed[2],
                          f"{source}, {options}: the same contexts and counts as the "
                          f"interposed build",
                          f"interposed {interposed[2]}\ndirect {direct[2]}")
        else:
            sites = [None if s is None else sorted((size, line) for size, _, line in s)
                     for s in (direct[2], interposed[2])]
            results.check(sites[0] is not None and len(sites[0]) == contexts
                          and sites[0] == sites[1],
                          f"{source}, {options}: every site in both sampled profiles",
                          f"interposed {sites[1]}\ndirect {sites[0]}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--cc", default="gcc")
    parser.add_argument("--cxx", default="g++")
    args = parser.parse_args()
    shutil.rmtree(WORK, ignore_errors=True)
    os.makedirs(WORK)
    check_program(args.cc, "sites.c")
    check_program(args.cxx, "deletes.cc")
    results.finish()


if __name__ == "__main__":
    main()
