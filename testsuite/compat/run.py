#!/usr/bin/env python3
"""Compatibility of the runtime's profiles with the shared LLVM toolchain.

Builds each program here (C, C++, threads) with gcc at -O0 and -O2, as PIE
and -no-pie, linked with libmemprof.so (through memprof-uninstalled.pc),
with libmemprof.a, and run under LD_PRELOAD; runs it; checks that its
stdout and exit status equal those of the same program built without the
runtime; then has llvm-profdata-19 read the profile: `show --memory` must
exit 0 and give, for every `expect:` line of the program, the frames
(function:line-offset:column, leaf first), AllocCount, TotalAccessCount
and TotalSize written there; `merge` must exit 0.

Prints one line per check and ends with `compat: N passed, N failed`.
"""

import argparse
import glob
import os
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(TOP, "scripts"))
sys.path.insert(0, os.path.join(TOP, "testsuite", "lib"))
import llvm_memprof_yaml  # noqa: E402
from report import Report  # noqa: E402
PROGRAMS = ["alloc_c.c", "newdelete.cc", "threads.c"]



results = Report("compat")


def run(command, **kwargs):
    return subprocess.run(command, capture_output=True, text=True, **kwargs)


def pkg_config(*args):
    env = dict(os.environ, PKG_CONFIG_PATH=TOP)
    result = subprocess.run(["pkg-config", *args, "memprof"], capture_output=True,
                            text=True, env=env, check=True)
    return result.stdout.split()


def variants():
    for opt in ("-O0", "-O2"):
        for pie in ("-pie", "-no-pie"):
            yield f"shared{opt}{pie}", opt, pie, "shared"
    yield "static-O2-pie", "-O2", "-pie", "static"
    yield "preload-O2-pie", "-O2", "-pie", "preload"


def test_program(args, program, work):
    source = os.path.join(HERE, program)
    compiler = args.cxx if program.endswith(".cc") else args.cc
    base = os.path.splitext(program)[0]
    expectations = llvm_memprof_yaml.parse_expectations(source)
    # As docs/manual.md recommends for profiling: no tail calls, so that a
    # helper that returns malloc's result keeps its frame at -O2.
    cflags = pkg_config("--cflags") + ["-I" + HERE, "-g", "-pthread",
                                       "-fno-optimize-sibling-calls"]

    for name, opt, pie, link in variants():
        label = f"{base} {name}"
        directory = os.path.join(work, base + "-" + name)
        os.makedirs(directory)
        baseline = os.path.join(directory, base + ".baseline")
        profiled = os.path.join(directory, base)
        flags = [opt, pie, "-fPIE" if pie == "-pie" else "-fno-PIE"]
        build = run([compiler, *flags, *cflags, "-DNO_RUNTIME", source, "-o", baseline])
        if not results.check(build.returncode == 0, f"{label}: baseline builds", build.stderr):
            continue
        if link == "shared":
            libs = pkg_config("--libs")
            defines = []
        elif link == "static":
            libs = [os.path.join(TOP, "runtime", "libmemprof.a")] + \
                [flag for flag in pkg_config("--static", "--libs") if flag != "-lmemprof"]
            defines = []
        else:
            libs, defines = [], ["-DNO_RUNTIME"]
        build = run([compiler, *flags, *cflags, *defines, source, "-o", profiled, *libs])
        if not results.check(build.returncode == 0, f"{label}: builds with the runtime", build.stderr):
            continue

        expected = run([baseline], cwd=directory)
        env = dict(os.environ, MEMPROF_OPTIONS=f"profile_file={directory}/profile.%p")
        if link == "preload":
            env["LD_PRELOAD"] = os.path.join(TOP, "runtime", "libmemprof.so")
        actual = run([profiled], cwd=directory, env=env)
        results.check(actual.stdout == expected.stdout and actual.returncode == expected.returncode,
                      f"{label}: stdout and exit status unchanged",
                      f"got {actual.returncode} {actual.stdout!r} {actual.stderr!r}, "
                      f"expected {expected.returncode} {expected.stdout!r}")
        results.check(actual.stderr == "", f"{label}: the runtime prints nothing by default",
                      actual.stderr)

        written = glob.glob(os.path.join(directory, "profile.*"))
        profiles = [path for path in written if not path.endswith(".extra")]
        if not results.check(len(profiles) == 1, f"{label}: one profile written", str(profiles)):
            continue
        results.check(sorted(written) == sorted([profiles[0], profiles[0] + ".extra"]),
                      f"{label}: its side file written next to it", str(written))
        show = run([args.llvm_profdata, "show", "--memory", profiles[0],
                    "--profiled-binary", profiled])
        if not results.check(show.returncode == 0, f"{label}: llvm-profdata show --memory", show.stderr):
            continue
        sites = llvm_memprof_yaml.alloc_sites(show.stdout)
        for frames, fields in expectations:
            where = " < ".join(f"{f}:{o}:{c}" for f, o, c in frames)
            problem = llvm_memprof_yaml.check_expectation(sites, frames, fields, link != "preload")
            results.check(problem == "", f"{label}: site {where}", problem)
        merged = os.path.join(directory, "merged.memprofdata")
        merge = run([args.llvm_profdata, "merge", profiles[0], "--profiled-binary",
                     profiled, "-o", merged])
        results.check(merge.returncode == 0 and os.path.getsize(merged) > 0,
                      f"{label}: llvm-profdata merge", merge.stderr)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--llvm-profdata", default="llvm-profdata-19")
    parser.add_argument("--cc", default="gcc")
    parser.add_argument("--cxx", default="g++")
    parser.add_argument("programs", nargs="*", default=PROGRAMS)
    args = parser.parse_args()

    work = os.path.join(HERE, "work")
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    for program in args.programs:
        test_program(args, program, work)
    return results.finish()


if __name__ == "__main__":
    sys.exit(main())
