#!/usr/bin/env python3
"""GCC's own tests of IFUNCs and function multiversioning, with and without
the plugin: gcc.dg/attr-ifunc-*.c, gcc.target/i386/mvc*.c and
g++.target/i386/mv*.C from Debian's gcc-12-source (extracted once into
work/src-ifunc).  Their resolvers run while the dynamic linker relocates
the program, before the runtime starts (docs/plugin.md, "Code that runs
before start-up").

Each test is built as its dg directives say (dg-options,
dg-additional-sources; `dg-do run' linked and run, the others compiled
with -c), first without the plugin, then with -fplugin=memprof.so and
linked with the runtime (memprof-uninstalled.pc), run with
MEMPROF_OPTIONS=write_profile=0.  It passes when both builds succeed or
fail alike (the compile tests that expect an error fail both ways) and,
for a run test, the output and exit status are the same.  Tests built
with -static are left out: the runtime does not support -static
programs.  Prints one line per test and ends with `gcc-ifunc: N passed,
N failed'."""

import argparse
import glob
import os
import re
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(TOP, "scripts"))
import gcc_source  # noqa: E402

WORK = os.path.join(HERE, "work")
TESTS = "gcc/testsuite"
PATTERNS = ["gcc.dg/attr-ifunc-*.c", "gcc.target/i386/mvc*.c", "g++.target/i386/mv*.C"]
TIMEOUT = 60


def directives(text, name):
    return [value for value in re.findall(r"\{\s*" + name + r'\s+"([^"]*)"', text)]


def build_and_run(args, source, plugin, directory):
    """(built, exit status or None, output) of SOURCE built one way."""
    text = open(source, errors="replace").read()
    match = re.search(r"dg-do (\w+)", text)
    run = match is not None and match.group(1) == "run"
    compiler = args.cxx if source.endswith(".C") else args.cc
    flags = [flag for value in directives(text, "dg-options") for flag in value.split()]
    extra = [os.path.join(os.path.dirname(source), name)
             for value in directives(text, "dg-additional-sources") for name in value.split()]
    output = os.path.join(directory, "plugin" if plugin else "plain")
    command = [compiler, *(["-fplugin=" + args.plugin] if plugin else []), "-w", *flags, "-g",
               source, *extra, "-I", os.path.dirname(source)]
    command += ["-o", output, *(args.libs if plugin else [])] if run else ["-c", "-o",
                                                                           output + ".o"]
    built = subprocess.run(command, capture_output=True, text=True, timeout=TIMEOUT)
    if built.returncode != 0 or not run:
        return built.returncode == 0, None, built.stderr
    env = dict(os.environ, MEMPROF_OPTIONS="write_profile=0")
    ran = subprocess.run([output], capture_output=True, text=True, env=env, timeout=TIMEOUT)
    return True, ran.returncode, ran.stdout


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--plugin", default=os.path.join(TOP, "gcc-plugin", "memprof.so"))
    parser.add_argument("--cc", default="gcc")
    parser.add_argument("--cxx", default="g++")
    args = parser.parse_args()
    args.plugin = os.path.abspath(args.plugin)
    env = dict(os.environ, PKG_CONFIG_PATH=TOP)
    args.libs = subprocess.run(["pkg-config", "--libs", "memprof-uninstalled"],
                               capture_output=True, text=True, env=env,
                               check=True).stdout.split()
    try:
        tree = gcc_source.extract(os.path.join(WORK, "src-ifunc"),
                                  [f"{TESTS}/{os.path.dirname(p)}" for p in PATTERNS],
                                  "gcc-ifunc")
    except (gcc_source.Missing, subprocess.CalledProcessError, OSError) as error:
        print(error)
        print("gcc-ifunc: 0 passed, 1 failed")
        return 1
    root = os.path.join(tree, TESTS)
    names = sorted(os.path.relpath(path, root) for pattern in PATTERNS
                   for path in glob.glob(os.path.join(root, pattern)))
    runs = os.path.join(WORK, "run-ifunc")
    shutil.rmtree(runs, ignore_errors=True)
    passed = failed = left_out = 0
    for name in names:
        source = os.path.join(root, name)
        text = open(source, errors="replace").read()
        if any("-static" in value.split() for value in directives(text, "dg-options")):
            print(f"LEFT OUT: {name}: -static")
            left_out += 1
            continue
        directory = os.path.join(runs, name.replace("/", "_"))
        os.makedirs(directory)
        try:
            plain = build_and_run(args, source, False, directory)
            with_plugin = build_and_run(args, source, True, directory)
        except subprocess.TimeoutExpired as error:
            print(f"FAIL: {name}: timed out: {' '.join(error.cmd)}")
            failed += 1
            continue
        if plain[:2] == with_plugin[:2] and (plain[1] is None or plain[2] == with_plugin[2]):
            kind = ("runs, status " + str(plain[1]) if plain[1] is not None
                    else "builds" if plain[0] else "fails to build")
            print(f"PASS: {name}: {kind} with and without the plugin")
            passed += 1
        else:
            print(f"FAIL: {name}: without the plugin built={plain[0]} status={plain[1]}, "
                  f"with it built={with_plugin[0]} status={with_plugin[1]}\n"
                  f"{with_plugin[2][-2000:]}")
            failed += 1
    print(f"gcc-ifunc: {len(names)} tests, {left_out} left out (-static)")
    print(f"gcc-ifunc: {passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
