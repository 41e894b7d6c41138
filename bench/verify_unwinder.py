#!/usr/bin/env python3
"""Is every allocation's context the one a full unwind gives, and how
often does unwinder=fast still call libunwind?  Each workload of make
bench (bench/workloads.py: our own, libiberty's, and the Debian programs
lua5.4 and cJSON) at its small scale, built twice: with the plugin at -O2
-g -fno-omit-frame-pointer, and without it at -O2 -g (frame pointers
omitted everywhere: the runtime alone, as LD_PRELOAD gives it).  Each
runs with MEMPROF_OPTIONS=verify_contexts=1:verbosity=1: the runtime
checks every context against a full libunwind unwind and logs how many
differed, and the unwinder's line (full unwinds, steps by a frame rule,
libunwind steps to learn the rules).  The output and exit status must be
those of the build without the runtime.  Writes
bench/results/verify-unwinder.md and prints it; exits 1 when a context
differed or a run failed."""

import argparse
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from workloads import WORKLOADS, prepare  # noqa: E402
from run import pkg_config, publish  # noqa: E402

UNWINDER = re.compile(r"unwinder=fast: (\d+) full unwinds, at least (\d+) stacks .*?"
                      r"at least (\d+) steps by a frame rule, (\d+) libunwind steps")
VERIFIED = re.compile(r"verify_contexts: (\d+) contexts checked .*?, (\d+) differed")


def build(args, workload, src, binary, flags, runtime=True):
    compiler = args.cxx if workload.cxx else args.cc
    # FLAGS last: they override the workload's -fno-omit-frame-pointer.
    command = [compiler, "-O2", "-g", *workload.compile_flags(src), *flags,
               *workload.sources(src), "-o", binary, "-lpthread", *workload.libs]
    if runtime:
        command += pkg_config("--cflags") + pkg_config("--libs")
    built = subprocess.run(command, capture_output=True, text=True)
    if built.returncode != 0:
        sys.exit(f"verify_unwinder: cannot build {binary}: {built.stderr[-600:]}")


def verify(workload, binary, expected, work):
    profile = os.path.join(work, os.path.basename(binary) + ".profraw")
    env = dict(os.environ, MEMPROF_OPTIONS=f"profile_file={profile}:verify_contexts=1"
               ":verbosity=1")
    result = subprocess.run([binary, *workload.command_arguments(workload.small)],
                            capture_output=True, text=True, env=env, cwd=work)
    unwinder, verified = UNWINDER.search(result.stderr), VERIFIED.search(result.stderr)
    same = (result.stdout == expected.stdout and result.returncode == expected.returncode)
    if not (same and unwinder and verified):
        return None, f"{binary}: exit {result.returncode}, {result.stderr[-400:]}"
    return [int(n) for n in verified.groups() + unwinder.groups()], None


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--cc", default="gcc")
    parser.add_argument("--cxx", default="g++")
    parser.add_argument("--only", help="comma-separated workload names")
    args = parser.parse_args()
    work = os.path.join(HERE, "work", "verify-unwinder")
    os.makedirs(work, exist_ok=True)
    src = prepare("verify_unwinder")
    wanted = set(args.only.split(",")) if args.only else None
    lines = ["Contexts of unwinder=fast against a full unwind (verify_contexts=1), "
             "each workload at its small scale",
             "",
             "| workload | build | contexts checked | differed | full unwinds "
             "| stacks without libunwind | steps by a frame rule | libunwind steps to learn |",
             "|---|---|---|---|---|---|---|---|"]
    failures = []
    builds = [("plugin, frame pointers", ["-fplugin=" + pkg_config("--variable=plugin")[0],
                                          "-fno-omit-frame-pointer"]),
              ("runtime alone, -fomit-frame-pointer", ["-fomit-frame-pointer"])]
    for workload in WORKLOADS:
        if wanted and workload.name not in wanted:
            continue
        plain = os.path.join(work, workload.name + "-plain")
        build(args, workload, src, plain, [], runtime=False)
        expected = subprocess.run([plain, *workload.command_arguments(workload.small)],
                                  capture_output=True, text=True, cwd=work)
        for label, flags in builds:
            binary = os.path.join(work, f"{workload.name}-{label.split(',')[0].split()[0]}")
            build(args, workload, src, binary, flags)
            figures, failure = verify(workload, binary, expected, work)
            if failure:
                failures.append(failure)
                continue
            if figures[1] != 0:
                failures.append(f"{binary}: {figures[1]} contexts differed")
            lines.append(f"| {workload.name} | {label} | "
                         + " | ".join(f"{n:,}" for n in figures) + " |")
            print(lines[-1], flush=True)
    text = "\n".join(lines) + "\n"
    if wanted:
        print(text)
    else:
        publish(text, os.path.join(HERE, "results", "verify-unwinder.md"))
    for failure in failures:
        print("verify_unwinder: " + failure)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
