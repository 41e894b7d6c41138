#!/usr/bin/env python3
"""`memprof check`, the CI memory gate, on passing and failing cases.

Builds waste.c (next to this script) with the plugin and the runtime, runs
it with the argument 1 and with 2 (every count doubles), and checks:
  - each limit (--max-bytes, --max-allocs, --max-live-at-exit,
    --max-context-bytes) passes at exactly the figure `memprof show`
    gives and fails one below it, exit status 3, the line naming the
    limit, the figure and the context most to blame (the function
    waste.c allocates it in);
  - --baseline: the run with 2 against the run with 1 fails each growth
    (bytes, allocations, live at exit) naming the context that grew most;
    the same run against itself, a shrink, and a growth within
    --max-growth pass;
  - --format=json says the same;
  - sizes with units, and bad usage and bad input exit with 2 and say
    why;
  - the Makefile of docs/ci.md, taken from the page, passes on the run
    with 1 and fails on the run with 2.

Run: python3 testsuite/analysis/test_check.py
Ends with `gate: N passed, N failed`.
"""

import json
import os
import re
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(TOP, "testsuite", "lib"))
from report import Report  # noqa: E402
import instrumented  # noqa: E402

WORK = os.path.join(HERE, "work", "check")
MEMPROF = os.environ.get("MEMPROF") or os.path.join(TOP, "analysis", "memprof")
APP = os.path.join(WORK, "app")

results = Report("gate")
check = results.check


def run(args, **kwargs):
    return subprocess.run(args, capture_output=True, text=True, **kwargs)


def fatal(message):
    check(False, message)
    sys.exit(results.finish())


def build_and_profile():
    built = instrumented.build(TOP, os.path.join(HERE, "waste.c"), APP, "gcc",
                               ["-g", "-O0", "-fno-optimize-sibling-calls"])
    if built.returncode != 0:
        fatal("waste.c builds: " + built.stderr[-2000:])
    profiles = {}
    for argument in ("1", "2"):
        path = os.path.join(WORK, f"run{argument}.profraw")
        ran = instrumented.run_profiled(APP, path, [argument])
        if ran.returncode != 0 or not os.path.exists(instrumented.side_file_of(path)):
            fatal(f"waste {argument} writes its profile and side file: "
                  + ran.stderr)
        profiles[argument] = path
    return profiles


def totals(profile):
    """show's figures: totals, and the function allocating the largest
    context of each."""
    out = run([MEMPROF, "show", "--format=json", "--top=0",
               "--binary=" + APP, profile])
    records = json.loads(out.stdout)["records"]

    def live(r):
        return (r["extra"] or {}).get("live_bytes", 0)

    def largest(key):
        return max(records, key=key)["frames"][0]["function"]
    return {
        "bytes": sum(r["bytes"] for r in records),
        "allocs": sum(r["allocs"] for r in records),
        "live": sum(live(r) for r in records),
        "context": max(r["bytes"] for r in records),
        "largest_bytes": largest(lambda r: r["bytes"]),
        "largest_allocs": largest(lambda r: r["allocs"]),
        "largest_live": largest(live),
        "records": records,
    }


def gate(*args):
    return run([MEMPROF, "check", "--binary=" + APP] + list(args))


def check_limits(profile, figures):
    for option, key, blame in (
            ("--max-bytes", "bytes", "largest_bytes"),
            ("--max-allocs", "allocs", "largest_allocs"),
            ("--max-live-at-exit", "live", "largest_live"),
            ("--max-context-bytes", "context", "largest_bytes")):
        value = figures[key]
        out = gate(f"{option}={value}", profile)
        check(out.returncode == 0 and out.stdout.startswith("ok: ")
              and "every limit holds" in out.stdout,
              f"{option}={value} (the figure itself) passes", out.stdout)
        out = gate(f"{option}={value - 1}", profile)
        line = out.stdout.split("\n")
        function = figures[blame]
        check(out.returncode == 3 and line[0].startswith("FAIL: ")
              and f"{option}=" in line[0] and f"{value}" in line[0]
              and re.match(r"  the largest context, .*: %s \("
                           % re.escape(function), line[1]) is not None,
              f"{option}={value - 1} fails, status 3, naming {function}",
              f"status {out.returncode}: {out.stdout}")

    # All at once: the two broken ones are named, the others pass.
    out = gate(f"--max-bytes={figures['bytes']}", "--max-live-at-exit=0",
               f"--max-allocs={figures['allocs'] - 1}", profile)
    check(out.returncode == 3
          and len(re.findall(r"^FAIL: ", out.stdout, re.M)) == 2
          and len(re.findall(r"^ok: ", out.stdout, re.M)) == 1,
          "three limits, two broken: two FAIL lines and one ok",
          out.stdout)

    # Units.
    kib = -(-figures["bytes"] // 1024)
    out = gate(f"--max-bytes={kib}KiB", profile)
    check(out.returncode == 0, f"--max-bytes={kib}KiB passes", out.stdout)
    out = gate(f"--max-bytes={kib - 1}K", profile)
    check(out.returncode == 3, f"--max-bytes={kib - 1}K fails", out.stdout)
    out = gate(f"--max-bytes={figures['bytes'] / 1e3 - 0.001:.3f}KB", profile)
    check(out.returncode == 3, "--max-bytes in KB (1000s) fails just under",
          out.stdout)

    # JSON.
    out = gate(f"--max-bytes={figures['bytes'] - 1}", "--format=json",
               profile)
    data = json.loads(out.stdout) if out.stdout.startswith("{") else {}
    first = (data.get("checks") or [{}])[0]
    check(out.returncode == 3 and data.get("passed") is False
          and first.get("value") == figures["bytes"]
          and first.get("limit") == figures["bytes"] - 1
          and figures["largest_bytes"] in first["context"]["frames"],
          "--format=json: passed false, the figure, the limit, the context",
          out.stdout[:400])


def check_growth(profiles, one, two):
    out = gate("--baseline=" + profiles["1"], profiles["2"])
    lines = out.stdout.split("\n")
    fails = [i for i, line in enumerate(lines) if line.startswith("FAIL: ")]
    check(out.returncode == 3 and len(fails) == 3,
          "run 2 against run 1 (default --max-growth=10%): bytes, "
          "allocations and live bytes fail", out.stdout)
    for index, (what, blame) in zip(fails, (
            ("bytes allocated", "largest_bytes"),
            ("allocations", "largest_allocs"),
            ("bytes live at exit", None))):
        line = lines[index]
        check(line.startswith(f"FAIL: {what} went from ")
              and "--max-growth=10%" in line,
              f"growth of {what}: the line says from what to what", line)
        # The context that grew most: the one whose figure doubled the
        # most, in waste.c.
        check("the context that grew most" in lines[index + 1]
              and (blame is None or two[blame] in lines[index + 1])
              and "waste.c:" in lines[index + 1],
              f"growth of {what}: names the context that grew most",
              lines[index + 1])
    check(f"({one['bytes']} B) to" in lines[fails[0]]
          and f"({two['bytes']} B)" in lines[fails[0]],
          "growth of bytes: show's totals of both runs", lines[fails[0]])

    out = gate("--baseline=" + profiles["1"], profiles["1"])
    check(out.returncode == 0 and out.stdout.count("ok: ") == 3,
          "a run against itself passes", out.stdout)
    out = gate("--baseline=" + profiles["2"], profiles["1"])
    check(out.returncode == 0, "a shrink passes", out.stdout)
    out = gate("--baseline=" + profiles["1"], "--max-growth=150%",
               profiles["2"])
    check(out.returncode == 0, "a doubling within --max-growth=150% passes",
          out.stdout)
    out = gate("--baseline=" + profiles["1"] + "," + profiles["1"],
               "--max-growth=1", profiles["2"])
    check(out.returncode == 0,
          "a baseline of two runs merged (OLD1,OLD2) against run 2 passes",
          out.stdout)


def check_usage(profiles):
    for args, what in (
            ([profiles["1"]], "no limit"),
            (["--max-bytes=12Q", profiles["1"]], "a bad size"),
            (["--max-bytes=-1", profiles["1"]], "a negative size"),
            (["--max-growth=5%", profiles["1"]], "--max-growth without "
             "--baseline"),
            (["--max-growth=x", "--baseline=" + profiles["1"], profiles["1"]],
             "a bad --max-growth"),
            (["--max-bytes=1"], "no profile"),
            (["--bogus", profiles["1"]], "an unknown option")):
        out = run([MEMPROF, "check"] + args)
        check(out.returncode == 2 and "check" in out.stderr
              and out.stdout == "",
              f"{what}: status 2 and a message", out.stderr)
    missing = os.path.join(WORK, "missing.profraw")
    out = run([MEMPROF, "check", "--max-bytes=1", missing])
    check(out.returncode == 2 and "missing.profraw" in out.stderr,
          "a missing profile is named, status 2", out.stderr)
    bare = os.path.join(WORK, "bare.profraw")
    shutil.copy(profiles["1"], bare)
    out = run([MEMPROF, "check", "--max-live-at-exit=0", bare])
    check(out.returncode == 2 and "side file" in out.stderr,
          "--max-live-at-exit without the side file: status 2, says why",
          out.stderr)
    out = run([MEMPROF, "check", "--help"])
    check(out.returncode == 0 and "--max-live-at-exit" in out.stdout,
          "check --help")


def check_makefile():
    """The Makefile of docs/ci.md, as the page shows it."""
    with open(os.path.join(TOP, "docs", "ci.md")) as page:
        found = re.search(r"```make\n(.*?)```", page.read(), re.S)
    if not check(found is not None, "docs/ci.md has a Makefile"):
        return
    scratch = os.path.join(WORK, "makefile")
    os.makedirs(scratch)
    shutil.copy(APP, os.path.join(scratch, "app"))
    with open(os.path.join(scratch, "Makefile"), "w") as out:
        out.write(found.group(1))
    make = ["make", "--no-print-directory", "-C", scratch,
            "MEMPROF=" + MEMPROF]
    out = run(make + ["memory-baseline", "APP_ARGS=1"])
    check(out.returncode == 0, "docs/ci.md: make memory-baseline",
          out.stdout + out.stderr)
    out = run(make + ["memory-gate", "APP_ARGS=1"])
    check(out.returncode == 0 and "every limit holds" in out.stdout,
          "docs/ci.md: make memory-gate passes on the same run",
          out.stdout + out.stderr)
    out = run(make + ["memory-gate", "APP_ARGS=2"])
    check(out.returncode != 0 and "FAIL: bytes allocated went from"
          in out.stdout and "over_reserved" in out.stdout,
          "docs/ci.md: make memory-gate fails when the run doubles, "
          "naming the context", out.stdout + out.stderr)


def main():
    shutil.rmtree(WORK, ignore_errors=True)
    os.makedirs(WORK)
    if not os.environ.get("MEMPROF"):
        made = run(["make", "-C", TOP, "analysis/memprof"])
        if made.returncode != 0:
            fatal("make analysis/memprof: " + made.stderr[-2000:])
    profiles = build_and_profile()
    one, two = totals(profiles["1"]), totals(profiles["2"])
    check(two["bytes"] > one["bytes"] * 1.5 and one["live"] > 0,
          "the run with 2 allocates more, and both leak",
          f"{one['bytes']} {two['bytes']} {one['live']}")
    check_limits(profiles["1"], one)
    check_growth(profiles, one, two)
    check_usage(profiles)
    check_makefile()
    shutil.rmtree(WORK, ignore_errors=True)
    return results.finish()


if __name__ == "__main__":
    sys.exit(main())
