#!/usr/bin/env python3
"""Soundness of the plugin's stack analysis: for every example (at -O0,
-Og, -O1, -O2, -O3 and -Os) and every run test of memprof.dg (at -O0 and
-O2), the heap part of the profile is
the same whether the plugin skips provable stack accesses
(stack-analysis=full, the default) or instruments everything
(stack-analysis=none).  A difference means the analysis skipped an access
that reached the heap.

The heap part of a profile: for every allocation context (its symbolized
frames, read by llvm-profdata-19), AllocCount, TotalSize, Min/MaxSize and
Total/Min/MaxAccessCount.  Times and CPUs are left out: they differ from
run to run.

A run test that is sound only with an option says so with a line
`soundness-control: FLAG at LEVEL` (run-fiber-heap-stack.c: fibers on
malloc'd stacks need -fplugin-arg-memprof-other-frames=0): at LEVEL the
suite also builds it without FLAG and requires the heap profiles to
differ, so that the option is shown to be what makes them equal.  Ends
with `soundness: N passed, N failed`."""

import argparse
import glob
import os
import re
import shlex
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(TOP, "scripts"))
sys.path.insert(0, os.path.join(TOP, "testsuite", "lib"))
import llvm_memprof_yaml  # noqa: E402
from report import Report  # noqa: E402

HEAP_FIELDS = ("AllocCount", "TotalSize", "MinSize", "MaxSize", "TotalAccessCount",
               "MinAccessCount", "MaxAccessCount")
results = Report("soundness")


EXAMPLE_LEVELS = ("-O0", "-Og", "-O1", "-O2", "-O3", "-Os")
TEST_LEVELS = ("-O0", "-O2")


def programs():
    """(source, extra compile flags, MEMPROF_OPTIONS, levels, control) for
    every program; control is (flag, level) or None."""
    for source in sorted(glob.glob(os.path.join(TOP, "examples", "*.c"))
                         + glob.glob(os.path.join(TOP, "examples", "*.cc"))):
        yield source, [], "", EXAMPLE_LEVELS, None
    for source in sorted(glob.glob(os.path.join(TOP, "testsuite", "memprof.dg", "*.[cC]"))):
        text = open(source).read()
        if not re.search(r"dg-do run", text):
            continue
        options = re.search(r'dg-options "([^"]*)"', text)
        flags = [f for f in shlex.split(options.group(1)) if not f.startswith("-O")
                 and "memprof-dump" not in f and "stack-analysis" not in f] if options else []
        runtime = re.search(r'dg-memprof-options "([^"]*)"', text)
        control = re.search(r"soundness-control: (\S+) at (-O\w*)", text)
        yield (source, flags, runtime.group(1) if runtime else "", TEST_LEVELS,
               control.groups() if control else None)


def heap_part(yaml_text):
    part = []
    for frames, mib in llvm_memprof_yaml.alloc_sites(yaml_text):
        part.append((tuple(frames), tuple(mib.get(f, 0) for f in HEAP_FIELDS)))
    return sorted(part)


def profile_of(args, source, flags, runtime_options, level, analysis, directory):
    compiler = args.cxx if source.endswith((".cc", ".C")) else args.cc
    binary = os.path.join(directory, analysis)
    env = dict(os.environ, PKG_CONFIG_PATH=TOP)
    libs = subprocess.run(["pkg-config", "--libs", "memprof"], env=env, capture_output=True,
                          text=True, check=True).stdout.split()
    build = subprocess.run([compiler, level, "-g", "-fno-optimize-sibling-calls",
                            "-fplugin=" + args.plugin,
                            f"-fplugin-arg-memprof-stack-analysis={analysis}",
                            "-I" + os.path.join(TOP, "include"), *flags, source, "-o", binary,
                            *libs, "-lstdc++"], capture_output=True, text=True)
    if build.returncode != 0:
        return None, f"build failed: {build.stderr[-500:]}"
    options = [o for o in runtime_options.split(":")
               if o and not o.startswith(("write_profile", "profile_file", "print_text"))]
    options += ["write_profile=1", f"profile_file={directory}/{analysis}.profraw"]
    run = subprocess.run([binary], cwd=directory, capture_output=True, text=True,
                         env=dict(os.environ, MEMPROF_OPTIONS=":".join(options)), timeout=120)
    profile = os.path.join(directory, f"{analysis}.profraw")
    if not os.path.exists(profile):
        return None, f"no profile (exit {run.returncode}): {run.stderr[-300:]}"
    show = subprocess.run([args.llvm_profdata, "show", "--memory", profile,
                           "--profiled-binary", binary], capture_output=True, text=True)
    if show.returncode != 0:
        return None, f"llvm-profdata: {show.stderr[-300:]}"
    return heap_part(show.stdout), ""


def check_control(args, source, flags, runtime_options, level, flag, none, directory):
    """Without FLAG the heap profile must differ from NONE's."""
    name = os.path.relpath(source, TOP)
    without = [f for f in flags if f != flag]
    full, error = profile_of(args, source, without, runtime_options, level, "full", directory)
    results.check(full is not None and full != none,
                  f"{name} {level}: without {flag} the heap profile differs from "
                  f"stack-analysis=none (the option is what makes them equal)",
                  error or "identical without the option")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--llvm-profdata", default="llvm-profdata-19")
    parser.add_argument("--cc", default="gcc")
    parser.add_argument("--cxx", default="g++")
    parser.add_argument("--plugin", default=os.path.join(TOP, "gcc-plugin", "memprof.so"))
    args = parser.parse_args()
    work = os.path.join(HERE, "work")
    shutil.rmtree(work, ignore_errors=True)
    for source, flags, runtime_options, levels, control in programs():
        name = os.path.relpath(source, TOP)
        for level in levels:
            directory = os.path.join(work, os.path.basename(source) + level)
            os.makedirs(directory)
            none, error_none = profile_of(args, source, flags, runtime_options, level,
                                          "none", directory)
            full, error_full = profile_of(args, source, flags, runtime_options, level,
                                          "full", directory)
            if none is None or full is None:
                results.check(False, f"{name} {level}", error_none or error_full)
                continue
            detail = ""
            if none != full:
                only_none = [s for s in none if s not in full]
                only_full = [s for s in full if s not in none]
                detail = f"with none: {only_none[:3]}; with full: {only_full[:3]}"
            results.check(none == full and len(none) > 0,
                          f"{name} {level}: heap profile identical with stack-analysis "
                          f"none and full ({len(none)} contexts)", detail)
            if control and control[1] == level:
                check_control(args, source, flags, runtime_options, level, control[0],
                              none, directory)
    return results.finish()


if __name__ == "__main__":
    sys.exit(main())
