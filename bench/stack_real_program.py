#!/usr/bin/env python3
"""The stack analysis across calls on a real program nobody here wrote:
cJSON (Debian's source package `cjson`), a recursive-descent JSON parser
that threads a `parse_buffer *` (a local of cJSON_ParseWithOpts) through
its static helpers, and a printer that threads a `printbuffer *`.

Built at -O2 with the plugin four ways -- other-frames=0 (the analysis of
one function at a time, as before the step across calls), the default,
the default with -fipa-pta, and without the plugin -- and run on the
workload bench/realprog/cjson_driver.c (parse and print a generated JSON
text).  Reports the plugin's static stats line, the executed share of
instrumented accesses that hit the stack (MEMPROF_OPTIONS=stats=1) and the
CPU time (user + system, median of interleaved runs).  Every build must
print the same checksum.  Writes bench/results/stack-real-program.md.

The source comes from `apt-get source cjson` at run time (bench/debsrc.py:
a private deb-src list, the system's apt configuration is not touched),
into bench/work/debsrc; --source DIR uses an unpacked tree instead."""

import argparse
import os
import re
import statistics
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(HERE)
DRIVER = os.path.join(HERE, "realprog", "cjson_driver.c")
sys.path.insert(0, HERE)
import debsrc  # noqa: E402
from run import pkg_config  # noqa: E402

VARIANTS = (
    ("before: one function at a time", ["-fplugin-arg-memprof-other-frames=0"]),
    ("after: across calls (default)", []),
    ("after, with -fipa-pta", ["-fipa-pta"]),
)


def run(command, **kwargs):
    result = subprocess.run(command, capture_output=True, text=True, **kwargs)
    if result.returncode != 0:
        sys.exit(f"stack_real_program: {' '.join(command[:3])}... failed "
                 f"(exit {result.returncode}): {result.stderr[-600:]}")
    return result


def fetch_source():
    """cJSON's tree, from `apt-get source cjson` (bench/debsrc.py)."""
    return debsrc.fetch("cjson", "cJSON.c", "stack_real_program")


def build(args, source, flags, binary, plugin):
    command = [args.cc, "-O2", "-g", "-I" + source]
    if plugin:
        command += ["-fplugin=" + pkg_config("--variable=plugin")[0],
                    "-fplugin-arg-memprof-stats", *flags]
    command += [os.path.join(source, "cJSON.c"), DRIVER, "-o", binary]
    if plugin:
        command += pkg_config("--libs")
    result = run(command)
    stats = re.search(r"memprof: \S*cJSON\.c: (.*)", result.stderr)
    return stats.group(1) if stats else ""


def cpu_seconds(binary, workload, env):
    """Run BINARY once; its user + system CPU time and its stdout."""
    process = subprocess.Popen([binary, *workload], stdout=subprocess.PIPE,
                               stderr=subprocess.DEVNULL, env=env)
    output = process.stdout.read()
    _, status, usage = os.wait4(process.pid, 0)
    process.returncode = os.waitstatus_to_exitcode(status)
    if process.returncode != 0:
        sys.exit(f"stack_real_program: {binary} exited with {process.returncode}")
    return usage.ru_utime + usage.ru_stime, output


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--cc", default="gcc")
    parser.add_argument("--source", help="an unpacked cjson source tree (default: apt-get source)")
    parser.add_argument("--records", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=40, help="parse+print rounds per run")
    parser.add_argument("--runs", type=int, default=5, help="interleaved timed runs per build")
    args = parser.parse_args()
    work = os.path.join(HERE, "work", "realprog")
    os.makedirs(work, exist_ok=True)
    source = args.source or fetch_source()
    workload = [str(args.records), str(args.rounds)]
    quiet = dict(os.environ, MEMPROF_OPTIONS="write_profile=0")

    builds = []
    for index, (name, flags) in enumerate(VARIANTS):
        binary = os.path.join(work, f"cjson-{index}")
        static = build(args, source, flags, binary, True)
        stats = run([binary, *workload],
                    env=dict(os.environ, MEMPROF_OPTIONS="stats=1:write_profile=0"))
        dynamic = re.search(r"stats: (\d+) instrumented accesses .*?stack (\d+)", stats.stderr)
        if not dynamic:
            sys.exit(f"stack_real_program: no stats line from {binary}: {stats.stderr[-300:]}")
        builds.append({"name": name, "binary": binary, "static": static,
                       "executed": int(dynamic.group(1)), "stack": int(dynamic.group(2)),
                       "output": stats.stdout, "times": []})
    plain = os.path.join(work, "cjson-plain")
    build(args, source, [], plain, False)
    builds.append({"name": "without the plugin", "binary": plain, "static": "",
                   "executed": None, "stack": None, "output": None, "times": []})

    # Interleaved: one run of each build per round, so that load from
    # other processes falls on all of them alike.
    for _ in range(args.runs):
        for b in builds:
            seconds, output = cpu_seconds(b["binary"], workload, quiet)
            b["times"].append(seconds)
            if b["output"] is None:
                b["output"] = output.decode()
            elif output.decode() != b["output"]:
                sys.exit(f"stack_real_program: {b['name']} printed {output!r}, "
                         f"not {b['output']!r}")
    outputs = {b["output"] for b in builds}
    if len(outputs) != 1:
        sys.exit(f"stack_real_program: the builds print different checksums: {outputs}")

    plain_time = statistics.median(builds[-1]["times"])
    lines = [f"cJSON ({os.path.basename(source)}) at -O2, workload cjson_driver "
             f"{' '.join(workload)}; CPU time: median of {args.runs} interleaved runs",
             "",
             "| build | executed instrumented accesses | on the stack | stack share "
             "| CPU time | vs without the plugin |",
             "|---|---|---|---|---|---|"]
    for b in builds:
        median = statistics.median(b["times"])
        if b["executed"] is None:
            lines.append(f"| {b['name']} | - | - | - | {median:.3f} s | 1.00x |")
            continue
        share = 100 * b["stack"] / max(b["executed"], 1)
        lines.append(f"| {b['name']} | {b['executed']:,} | {b['stack']:,} | {share:.1f}% "
                     f"| {median:.3f} s | {median / plain_time:.2f}x |")
    lines += ["", "The plugin's stats line for cJSON.c:", ""]
    for b in builds[:-1]:
        lines.append(f"- {b['name']}: {b['static']}")
    print("\n".join(lines))
    os.makedirs(os.path.join(HERE, "results"), exist_ok=True)
    with open(os.path.join(HERE, "results", "stack-real-program.md"), "w") as out:
        out.write("\n".join(lines) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
