#!/usr/bin/env python3
"""GCC's execute torture tests, with and without the plugin.

Runs the top-level *.c of gcc.c-torture/execute (from Debian's
gcc-12-source package, extracted once into work/src) at each optimization
level: first built and run without the plugin (the baseline); a test that
does not build, fails or times out there is excluded.  Every other test is
built again with -fplugin=memprof.so -fchecking, linked with the runtime
(memprof-uninstalled.pc), and run with MEMPROF_OPTIONS=write_profile=0: it
must build, and its stdout and exit status must equal the baseline's
(stdout only when two runs of the baseline print the same).

Like GCC's harness (gcc-dg-runtest with "-w"), a test's dg-options and
dg-additional-options are added when they are unconditional or their target
selector names triplets matching this machine; a test with a FILE.x beside
it (the old torture harness's marker) is excluded.

The sample is fixed: the files whose name's crc32 mod 100 is below
--sample.  Prints one line per failure with the command that reproduces
it, one summary line per level, and ends with `torture: N passed, N failed`
(N passed: file x level pairs that pass with the plugin).
"""

import argparse
import concurrent.futures
import fnmatch
import glob
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import time
import zlib

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(TOP, "scripts"))
import gcc_source  # noqa: E402

WORK = os.path.join(HERE, "work")
CACHE = os.path.join(WORK, "src")
EXECUTE = "gcc/testsuite/gcc.c-torture/execute"
RUNS = os.path.join(WORK, "run")
COMPILE_TIMEOUT = 60
RUN_TIMEOUT = 10
BASE_FLAGS = ["-w", "-fno-diagnostics-color"]
RUN_ENV = {"MEMPROF_OPTIONS": "write_profile=0"}


def extracted_source():
    """The execute directory, extracted from gcc-12-source's tarball."""
    return os.path.join(gcc_source.extract(CACHE, [EXECUTE], "torture"), EXECUTE)


# ---- The tests and their dg directives ----

def sample(names, percent):
    return [name for name in sorted(names)
            if zlib.crc32(name.encode()) % 100 < percent]


def machine_names(cc):
    """This machine's triplet as gcc names it, and with a vendor field, so
    that both x86_64-*-* and x86_64-*-linux* match."""
    machine = subprocess.run([cc, "-dumpmachine"], capture_output=True, text=True).stdout.strip()
    names = [machine]
    parts = machine.split("-")
    if len(parts) == 3:
        names.append(f"{parts[0]}-pc-{parts[1]}-{parts[2]}")
        names.append(f"{parts[0]}-unknown-{parts[1]}-{parts[2]}")
    return names


DG_OPTIONS = re.compile(r'\{\s*dg-(options|additional-options)\s+'
                        r'(?:"([^"]*)"|\{([^{}]*)\})\s*(?:\{\s*target\s+(.*?)\s*\}\s*)?\}')


def selector_matches(selector, machines):
    """A target selector made only of triplet patterns (`{ i?86-*-* x86_64-*-* }`);
    effective-target keywords and expressions are not evaluated: False."""
    words = selector.strip().strip("{}").split()
    if not words or not all(re.fullmatch(r"[\w?*.]+-[\w?*.-]+", w) for w in words):
        return False
    return any(fnmatch.fnmatchcase(m, w) for w in words for m in machines)


def dg_flags(source, machines):
    text = open(source, errors="replace").read()
    options, additional = [], []
    for match in DG_OPTIONS.finditer(text):
        kind, quoted, braced, selector = match.groups()
        if selector is not None and not selector_matches(selector, machines):
            continue
        flags = shlex.split(quoted if quoted is not None else braced.replace('"', ""))
        if kind == "options":
            options = flags
        else:
            additional += flags
    return options + additional


# ---- Running one test ----

def execute(command, timeout, cwd, env=None):
    """(returncode or None on timeout, stdout, stderr, seconds); the process
    group is killed on timeout."""
    start = time.monotonic()
    process = subprocess.Popen(command, cwd=cwd, env=env, stdin=subprocess.DEVNULL,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               start_new_session=True)
    try:
        out, err = process.communicate(timeout=timeout)
        code = process.returncode
    except subprocess.TimeoutExpired:
        try:
            os.killpg(process.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        out, err = process.communicate()
        code = None
    return (code, out.decode(errors="replace"), err.decode(errors="replace"),
            time.monotonic() - start)


def status_text(code):
    if code is None:
        return "timeout"
    if code < 0:
        try:
            return f"killed by {signal.Signals(-code).name}"
        except ValueError:
            return f"killed by signal {-code}"
    return f"exit {code}"


def first_lines(text, count=4):
    lines = [line for line in text.splitlines() if line.strip()]
    more = " [...]" if len(lines) > count else ""
    return " | ".join(lines[:count]) + more


def test_one(args, source, level, flags):
    """('ok'|'failed'|'excluded', reason, detail)."""
    name = os.path.basename(source)
    directory = os.path.join(RUNS, level.lstrip("-"), name[:-2])
    os.makedirs(directory)
    compile_base = [args.cc, level, *BASE_FLAGS, *flags, source, "-o",
                    os.path.join(directory, "baseline"), "-lm"]
    code, _, err, _ = execute(compile_base, COMPILE_TIMEOUT, directory)
    if code != 0:
        return "excluded", "does not build without the plugin", ""
    expected = execute([os.path.join(directory, "baseline")], RUN_TIMEOUT, directory)
    if expected[0] != 0:
        return "excluded", f"fails without the plugin ({status_text(expected[0])})", ""

    binary = os.path.join(directory, "instrumented")
    compile_plugin = [args.cc, level, *BASE_FLAGS, *flags, f"-fplugin={args.plugin}",
                      "-fchecking", source, "-o", binary, "-lm", *args.libs]
    reproduce = f"cd {shlex.quote(directory)} && {shlex.join(compile_plugin)}"
    code, _, err, _ = execute(compile_plugin, COMPILE_TIMEOUT, directory)
    if code != 0:
        kind = "ICE" if "internal compiler error" in err else "compile error"
        if code is None:
            kind = f"compile timeout ({COMPILE_TIMEOUT} s)"
        return "failed", f"{kind} with the plugin", \
            f"{first_lines(err)}\n    reproduce: {reproduce}"

    env = dict(os.environ, **RUN_ENV)
    actual = execute([binary], RUN_TIMEOUT, directory, env)
    reproduce += " && " + " ".join(f"{k}={v}" for k, v in RUN_ENV.items()) + " ./instrumented"
    if actual[0] == expected[0] and actual[1] == expected[1]:
        return "ok", "", ""
    if actual[0] == expected[0]:
        # A test that prints addresses (return-addr.c) differs from run to
        # run under ASLR: its stdout is compared only if the baseline's own
        # is stable.
        again = execute([os.path.join(directory, "baseline")], RUN_TIMEOUT, directory)
        if again[0] == expected[0] and again[1] != expected[1]:
            return "ok", "", ""
    if actual[0] != expected[0]:
        what = f"run: {status_text(actual[0])}, expected exit {expected[0]}"
        if actual[0] is None:
            what += f" (baseline ran {expected[3]:.2f} s, limit {RUN_TIMEOUT} s)"
    else:
        what = "run: stdout differs from the baseline's"
    detail = first_lines(actual[2]) if actual[2].strip() else ""
    if actual[1] != expected[1]:
        detail += f" stdout {actual[1][:200]!r}, expected {expected[1][:200]!r}"
    return "failed", what, f"{detail.strip()}\n    reproduce: {reproduce}"


# ---- Driver ----

def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sample", type=float, default=100,
                        help="percent of the files to run, a fixed sample (default 100)")
    parser.add_argument("--levels", default="-O0,-O2",
                        help="comma-separated optimization levels (default -O0,-O2)")
    parser.add_argument("--jobs", type=int, default=2, help="parallel tests (default 2)")
    parser.add_argument("--plugin", default=os.path.join(TOP, "gcc-plugin", "memprof.so"))
    parser.add_argument("--cc", default="gcc")
    parser.add_argument("--source", help="the gcc.c-torture/execute directory "
                        f"(default: extracted from the {gcc_source.PACKAGE} package's tarball)")
    parser.add_argument("--keep", action="store_true",
                        help="keep every test's work directory (failures' are always kept)")
    args = parser.parse_args()
    args.plugin = os.path.abspath(args.plugin)
    levels = [level.strip() for level in args.levels.split(",") if level.strip()]
    started = time.monotonic()

    if not os.path.isfile(args.plugin):
        print(f"torture: no plugin at {args.plugin}: run make first")
        print("torture: 0 passed, 1 failed")
        return 1
    try:
        source_dir = os.path.abspath(args.source) if args.source else extracted_source()
    except (gcc_source.Missing, subprocess.CalledProcessError, OSError) as error:
        print(error)
        print("torture: 0 passed, 1 failed")
        return 1
    env = dict(os.environ, PKG_CONFIG_PATH=TOP)
    args.libs = subprocess.run(["pkg-config", "--libs", "memprof"], capture_output=True,
                               text=True, env=env, check=True).stdout.split()

    names = [os.path.basename(path) for path in glob.glob(os.path.join(source_dir, "*.c"))]
    files = sample(names, args.sample)
    machines = machine_names(args.cc)
    print(f"torture: {len(files)} of {len(names)} files of {source_dir} "
          f"(sample {args.sample:g}%), levels {' '.join(levels)}, {args.jobs} jobs", flush=True)

    shutil.rmtree(RUNS, ignore_errors=True)
    counts = {level: {"ok": 0, "failed": 0, "excluded": 0} for level in levels}
    reasons = {level: {} for level in levels}
    failures = []

    def task(name, level):
        source = os.path.join(source_dir, name)
        if os.path.exists(source[:-2] + ".x"):
            return "excluded", "has a .x file", ""
        try:
            return test_one(args, source, level, dg_flags(source, machines))
        except Exception as error:  # a driver bug must not hide the other results
            return "failed", f"driver error {error!r}", ""

    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        futures = {pool.submit(task, name, level): (name, level)
                   for name in files for level in levels}
        for future in concurrent.futures.as_completed(futures):
            name, level = futures[future]
            outcome, reason, detail = future.result()
            counts[level][outcome] += 1
            if outcome == "excluded":
                reasons[level][reason] = reasons[level].get(reason, 0) + 1
            elif outcome == "failed":
                failures.append((name, level))
                print(f"FAIL: {level} {name}: {reason}"
                      + (detail if detail.startswith("\n") or not detail else f": {detail}"),
                      flush=True)
            if outcome != "failed" and not args.keep:
                shutil.rmtree(os.path.join(RUNS, level.lstrip("-"), name[:-2]),
                              ignore_errors=True)

    if not failures and not args.keep:
        shutil.rmtree(RUNS, ignore_errors=True)
    for level in levels:
        c = counts[level]
        print(f"{level}: {c['ok']} ok, {c['failed']} failed, {c['excluded']} excluded")
        for reason, count in sorted(reasons[level].items()):
            print(f"  excluded at {level}: {count} {reason}")
    print(f"torture: {time.monotonic() - started:.0f} s"
          + (f"; failures kept in {RUNS}" if failures else ""))
    passed = sum(c["ok"] for c in counts.values())
    failed = sum(c["failed"] for c in counts.values())
    print(f"torture: {passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
