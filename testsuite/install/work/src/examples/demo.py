#!/usr/bin/env python3
"""`make demo`: build the example with the runtime, run it, show the
runtime's text summary, then read its raw profile with llvm-profdata-19
(the shared LLVM toolchain) and print the allocation sites it found."""

import argparse
import glob
import os
import shlex
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(TOP, "scripts"))
import llvm_memprof_yaml  # noqa: E402


def step(command, **kwargs):
    print("$ " + " ".join(shlex.quote(part) for part in command), flush=True)
    return subprocess.run(command, **kwargs)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--llvm-profdata", default="llvm-profdata-19")
    parser.add_argument("--cc", default="gcc")
    args = parser.parse_args()

    work = os.path.join(HERE, "work")
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    env = dict(os.environ, PKG_CONFIG_PATH=TOP)
    flags = subprocess.run(["pkg-config", "--cflags", "--libs", "memprof"], env=env,
                           capture_output=True, text=True, check=True).stdout.split()
    binary = os.path.join(work, "hot_cold")

    print("== Build (runtime only: accesses counted by hand until the plugin exists)")
    build = step([args.cc, "-g", "-O2", "-fno-optimize-sibling-calls",
                  "-DMEMPROF_HAND_COUNTS", os.path.join(HERE, "hot_cold.c"),
                  "-o", binary, *flags])
    if build.returncode != 0:
        return 1

    print("\n== Run, with the runtime's text summary on stderr")
    run_env = dict(os.environ, MEMPROF_OPTIONS="print_text=1:verbosity=1:"
                   f"profile_file={work}/memprof.profraw.%p")
    run = step([binary], env=run_env, cwd=work)
    if run.returncode != 0:
        print(f"demo: the example exited with status {run.returncode}")
        return 1
    profiles = glob.glob(os.path.join(work, "memprof.profraw.*"))
    if len(profiles) != 1:
        print(f"demo: expected one profile in {work}, found {profiles}")
        return 1

    print("\n== The profile, read by llvm-profdata-19")
    show = step([args.llvm_profdata, "show", "--memory", profiles[0],
                 "--profiled-binary", binary], capture_output=True, text=True)
    if show.returncode != 0:
        print(show.stderr)
        return 1
    sites = llvm_memprof_yaml.alloc_sites(show.stdout)
    print(f"{'allocation site':<42} {'allocs':>6} {'bytes':>10} {'accesses':>10} "
          f"{'acc/byte':>9} {'life ms':>8}")
    for frames, mib in sorted(sites, key=lambda s: -s[1].get("TotalAccessCount", 0)):
        where = " < ".join(f"{name}+{offset}" for name, offset, _ in frames[:3])
        size = mib.get("TotalSize", 0) or 1
        count = mib.get("AllocCount", 0) or 1
        print(f"{where:<42} {mib.get('AllocCount', 0):>6} {mib.get('TotalSize', 0):>10} "
              f"{mib.get('TotalAccessCount', 0):>10} "
              f"{mib.get('TotalAccessCount', 0) / size:>9.3f} "
              f"{mib.get('TotalLifetime', 0) / count:>8.0f}")
    print("acc/byte is accesses per byte over the allocation's life: the lookup table "
          "is hot,\nthe 1 MiB log was written once and kept (cold), and the record "
          "reserve is mostly\nnever touched (over-reserved).")

    merged = os.path.join(work, "hot_cold.memprofdata")
    merge = step([args.llvm_profdata, "merge", profiles[0], "--profiled-binary", binary,
                  "-o", merged])
    if merge.returncode != 0:
        return 1
    print(f"\ndemo: done; raw profile {profiles[0]}, indexed profile {merged}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
