#!/usr/bin/env python3
"""`make demo`: build the examples with the plugin and the runtime, run
them, show the runtime's text summary, then read each raw profile with
llvm-profdata-19 (the shared LLVM toolchain) and print its allocation
sites with their access densities, and with the memprof command: its
ranked contexts and its findings, and an HTML report of them all."""

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

EXAMPLES = [
    ("hot_cold.c", "a hot lookup table, a cold log kept to the end, an over-reserved buffer"),
    ("over_reserve.c", "a buffer sized for a whole table, 0.5% of it used (Memoro's reserve)"),
    ("shapes.cc", "C++ new/delete: many small short-lived objects, a long-lived index"),
]


def step(command, **kwargs):
    print("$ " + " ".join(shlex.quote(part) for part in command), flush=True)
    return subprocess.run(command, **kwargs)


def pkg_config(*args):
    env = dict(os.environ, PKG_CONFIG_PATH=TOP)
    return subprocess.run(["pkg-config", *args, "memprof"], env=env, capture_output=True,
                          text=True, check=True).stdout.split()


def print_sites(yaml_text):
    sites = llvm_memprof_yaml.alloc_sites(yaml_text)
    print(f"{'allocation site (leaf first)':<44} {'allocs':>7} {'bytes':>10} "
          f"{'accesses':>10} {'acc/byte':>9} {'life ms':>8}")
    for frames, mib in sorted(sites, key=lambda s: -s[1].get("TotalAccessCount", 0)):
        where = " < ".join(f"{name}+{offset}" for name, offset, _ in frames[:3])
        count = mib.get("AllocCount", 0) or 1
        size = mib.get("TotalSize", 0) or 1
        print(f"{where[:44]:<44} {mib.get('AllocCount', 0):>7} {mib.get('TotalSize', 0):>10} "
              f"{mib.get('TotalAccessCount', 0):>10} "
              f"{mib.get('TotalAccessCount', 0) / size:>9.3f} "
              f"{mib.get('TotalLifetime', 0) / count:>8.0f}")


def demo_one(args, work, source, what):
    name = os.path.splitext(source)[0]
    binary = os.path.join(work, name)
    compiler = args.cxx if source.endswith(".cc") else args.cc
    print(f"\n======== {source}: {what}")
    build = step([compiler, "-g", "-O2", "-fno-optimize-sibling-calls",
                  "-fplugin=" + pkg_config("--variable=plugin")[0],
                  "-fplugin-arg-memprof-stats", *pkg_config("--cflags"),
                  os.path.join(HERE, source), "-o", binary, *pkg_config("--libs")])
    if build.returncode != 0:
        return False
    print("-- run (the runtime's text summary is on stderr)")
    env = dict(os.environ, MEMPROF_OPTIONS="print_text=1:stats=1:"
               f"profile_file={work}/{name}.profraw.%p")
    if step([binary], env=env, cwd=work).returncode != 0:
        print(f"demo: {source} failed")
        return False
    profiles = [path for path in glob.glob(os.path.join(work, f"{name}.profraw.*"))
                if not path.endswith(".extra")]
    if len(profiles) != 1:
        print(f"demo: expected one profile for {source}, found {profiles}")
        return False
    print("-- the profile, read by llvm-profdata-19")
    show = step([args.llvm_profdata, "show", "--memory", profiles[0],
                 "--profiled-binary", binary], capture_output=True, text=True)
    if show.returncode != 0:
        print(show.stderr)
        return False
    print_sites(show.stdout)
    merge = step([args.llvm_profdata, "merge", profiles[0], "--profiled-binary", binary,
                  "-o", os.path.join(work, f"{name}.memprofdata")])
    if merge.returncode != 0:
        return False
    print("-- the same profile, read by memprof")
    memprof = os.path.join(TOP, "analysis", "memprof")
    for command in (["show", "--top=3", "--frames=3"], ["findings"]):
        if step([memprof, *command, "--binary=" + binary, profiles[0]]).returncode != 0:
            return False
    return step([memprof, "report", f"--html={work}/{name}.html", "--binary=" + binary,
                 profiles[0]]).returncode == 0


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--llvm-profdata", default="llvm-profdata-19")
    parser.add_argument("--cc", default="gcc")
    parser.add_argument("--cxx", default="g++")
    args = parser.parse_args()
    work = os.path.join(HERE, "work")
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    for source, what in EXAMPLES:
        if not demo_one(args, work, source, what):
            return 1
    print("\nacc/byte: accesses per byte over the allocations' lives: high is hot, "
          "near 0 is cold\nor over-reserved (many bytes never touched).")
    print(f"demo: done; profiles, indexed profiles and HTML reports (open "
          f"{work}/over_reserve.html in a browser) in {work}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
