#!/usr/bin/env python3
"""The malloc API trace end to end: threads.c (C) and threads_cxx.cc (C++)
are traced with MEMPROF_OPTIONS=trace=1; the calls in each trace are
counted against what the program says it did; each trace is converted
with `memprof trace2wl' and replayed with glibc, jemalloc and tcmalloc,
and the replay's live-bytes curve must equal the one `memprof trace show'
computes from the trace, its ideal RSS the trace's peak; the API (pause
and resume, sync while running, reset), 32 threads that exit before main
(nothing lost), fork, the program's output and exit status, and corrupt
or truncated traces and workloads (exit status 2 and one message, never
a crash).

Prints one line per check and ends with `trace: N passed, N failed`."""

import argparse
import os
import re
import shutil
import signal
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(TOP, "testsuite", "lib"))
from report import Report  # noqa: E402

MEMPROF = os.path.join(TOP, "analysis", "memprof")
BASE, TOP_SIZE = 20000, 30000  # the sizes the test programs ask for
ALLOCATORS = ("glibc", "jemalloc", "tcmalloc")

results = Report("trace")
args = None

LINE = re.compile(r"^\s*(\d+)\s+[\d.]+\s+t(\d+)\s+(\S+?)\((.*)\)"
                  r"(?: = 0x([0-9a-f]+))?(?: usable (\d+))?(?: stack (\d+))?$")


def build(work, source, output, extra=()):
    compiler = args.cxx if source.endswith(".cc") else args.cc
    command = [compiler, "-O1", "-g", "-Wall", "-Wextra", "-I", os.path.join(TOP, "include"),
               os.path.join(HERE, source), "-o", os.path.join(work, output), "-lpthread",
               *extra]
    if source.endswith(".cc"):
        command.insert(1, "-std=c++17")
    result = subprocess.run(command, capture_output=True, text=True)
    results.check(result.returncode == 0, f"{output}: builds", result.stderr)
    return os.path.join(work, output) if result.returncode == 0 else None


def libmemprof():
    runtime = os.path.join(TOP, "runtime")
    return ["-L", runtime, "-Wl,-rpath," + runtime, "-lmemprof"]


def run(binary, cwd, options, *program_args, stdin=None):
    env = dict(os.environ, MEMPROF_OPTIONS=options)
    env.pop("LD_PRELOAD", None)
    return subprocess.run([binary, *program_args], cwd=cwd, env=env, capture_output=True,
                          text=True, input=stdin, timeout=600)


def memprof(*command, timeout=600):
    return subprocess.run([MEMPROF, *command], capture_output=True, text=True,
                          timeout=timeout)


def parse_calls(text):
    """The calls `trace show' prints: (sequence, thread, op, args, result)."""
    calls = []
    for line in text.splitlines():
        match = LINE.match(line)
        if match:
            calls.append((int(match.group(1)), int(match.group(2)), match.group(3),
                          [a.strip() for a in match.group(4).split(",")],
                          int(match.group(5), 16) if match.group(5) else None,
                          int(match.group(7)) if match.group(7) else 0))
    return calls


def requested(op, arguments):
    if op == "calloc":
        return int(arguments[0]) * int(arguments[1])
    if op in ("aligned_alloc", "posix_memalign", "memalign", "realloc", "reallocarray"):
        return int(arguments[1])
    return int(arguments[0])


def marked_counts(calls):
    """Per operation, the calls of the program's own blocks (20000 to
    29999 bytes, and the frees of such blocks)."""
    live = set()
    counts = {}
    for _, _, op, arguments, result, _ in calls:
        if op in ("free", "delete", "delete[]"):
            pointer = int(arguments[0], 16)
            if pointer in live:
                live.discard(pointer)
                counts[op] = counts.get(op, 0) + 1
            continue
        size = requested(op, arguments)
        if op in ("realloc", "reallocarray"):
            live.discard(int(arguments[0], 16))
        if BASE <= size < TOP_SIZE:
            counts[op] = counts.get(op, 0) + 1
            if result:
                live.add(result)
    return counts


def show(trace):
    return memprof("trace", "show", trace)


def summary_value(text, key):
    match = re.search(rf"^\s*{key}\s+(\d+)", text, re.M)
    return int(match.group(1)) if match else None


def no_leftovers(directory, label):
    leftovers = [name for name in os.listdir(directory) if ".tmp." in name or name.endswith(".link")]
    results.check(not leftovers, f"{label}: no temporary file is left", str(leftovers))


def expected_counts(stdout):
    expected = {}
    for line in stdout.splitlines():
        parts = line.split()
        if len(parts) == 2 and parts[1].isdigit():
            expected[parts[0]] = int(parts[1])
    return expected


def check_trace_counts(label, trace, stdout):
    result = show(trace)
    if not results.check(result.returncode == 0, f"{label}: memprof trace show reads the trace",
                         result.stderr):
        return None
    counts = marked_counts(parse_calls(result.stdout))
    expected = {op: n for op, n in expected_counts(stdout).items() if n}
    results.check(counts == expected, f"{label}: the trace holds every call the program made",
                  f"trace {counts}, program {expected}")
    threads = summary_value(result.stdout, "threads")
    results.check(threads is not None and threads >= 5,
                  f"{label}: the calls of the 4 threads and main are there", str(threads))
    head = [line for line in result.stdout.splitlines() if line.startswith("trace ")]
    results.check(bool(head) and head[-1].endswith(", complete"),
                  f"{label}: the trace is complete", str(head))
    return result.stdout


def check_replays(label, work, trace, show_text):
    workload = os.path.join(work, label + ".wl")
    converted = memprof("trace2wl", trace, "-o", workload)
    if not results.check(converted.returncode == 0, f"{label}: trace2wl converts it",
                         converted.stderr):
        return
    operations = re.search(r"(\d+) operations", converted.stderr)
    results.check("0 frees of unknown pointers, 0 double frees" in converted.stderr,
                  f"{label}: trace2wl has nothing to repair", converted.stderr)
    curve_file = os.path.join(work, label + ".curve.csv")
    shown = memprof("trace", "show", "--summary", "--curve=" + curve_file, trace)
    trace_curve = open(curve_file).read().splitlines()[1:] if shown.returncode == 0 else []
    peak = summary_value(show_text, "peak live")
    results.check(len(trace_curve) > 100, f"{label}: trace show writes the live-bytes curve",
                  str(len(trace_curve)))
    for allocator in ALLOCATORS:
        csv = os.path.join(work, f"{label}.{allocator}.csv")
        svg = os.path.join(work, f"{label}.{allocator}.svg")
        replay = memprof("replay", "--allocator=" + allocator, "--csv=" + csv, "--svg=" + svg,
                         "--interval=1", workload)
        name = f"{label}: replay with {allocator}"
        if not results.check(replay.returncode == 0, f"{name}: runs", replay.stderr):
            continue
        if allocator != "glibc":
            results.check(f"lib{allocator}" in replay.stdout.splitlines()[0],
                          f"{name}: malloc comes from the allocator", replay.stdout.splitlines()[0])
        done = re.search(r"operations\s+(\d+) \(failed (\d+)\)", replay.stdout)
        results.check(done is not None and operations is not None
                      and done.group(1) == operations.group(1) and done.group(2) == "0",
                      f"{name}: every operation ran and none failed", replay.stdout)
        replay_curve = [line[len("curve,"):] for line in open(csv).read().splitlines()
                        if line.startswith("curve,")]
        results.check(replay_curve == trace_curve,
                      f"{name}: its live-bytes curve equals the trace's ({len(trace_curve)} points)",
                      f"{len(replay_curve)} points, first difference at "
                      f"{next((i for i, (a, b) in enumerate(zip(replay_curve, trace_curve)) if a != b), None)}")
        ideal = summary_value(replay.stdout, "ideal RSS")
        results.check(ideal == peak, f"{name}: ideal RSS equals the trace's peak live bytes",
                      f"{ideal} != {peak}")
        cycles = re.findall(r"^\s+(malloc|free|new|delete)\s+(\d+)\s+([\d.]+)", replay.stdout, re.M)
        results.check(bool(cycles) and all(float(c[2]) > 0 for c in cycles),
                      f"{name}: cycles per call are reported", replay.stdout)
        rss = [line for line in open(csv).read().splitlines() if line.startswith("rss,")]
        results.check(len(rss) >= 2, f"{name}: RSS samples in the CSV", str(len(rss)))
        svg_text = open(svg).read() if os.path.exists(svg) else ""
        results.check(svg_text.startswith("<?xml") and svg_text.count("<polyline") == 2
                      and svg_text.rstrip().endswith("</svg>"),
                      f"{name}: the SVG chart has the RSS and live-bytes lines")


def test_program(work, label, binary, plain, *program_args):
    directory = os.path.join(work, label)
    os.makedirs(directory)
    trace = os.path.join(directory, "app.trace.zst")
    traced = run(binary, directory, f"trace=1:trace_stacks=1:trace_file={trace}",
                 *program_args)
    results.check(os.path.exists(trace), f"{label}: the trace is written", traced.stderr)
    if plain is not None:
        native = run(plain, directory, "", *program_args)
        results.check(traced.stdout == native.stdout and traced.returncode == native.returncode,
                      f"{label}: output and exit status are the program's own",
                      f"{traced.returncode} {native.returncode}")
    results.check(traced.stderr == "", f"{label}: the runtime says nothing", traced.stderr)
    no_leftovers(directory, label)
    if not os.path.exists(trace):
        return
    text = check_trace_counts(label, trace, traced.stdout)
    if text is None:
        return
    stacks = [c for c in parse_calls(show(trace).stdout) if c[5]]
    results.check(len(stacks) > 100, f"{label}: trace_stacks=1 records stack ids",
                  str(len(stacks)))
    check_replays(label, directory, trace, text)
    return trace


def test_many_threads(work, binary):
    for size in ("33554432", "1048576"):
        directory = os.path.join(work, "many-" + size)
        os.makedirs(directory)
        trace = os.path.join(directory, "many.trace.zst")
        result = run(binary, directory,
                     f"trace=1:profile=0:trace_buffer_size={size}:trace_file={trace}", "many")
        if not results.check(result.returncode == 7 and os.path.exists(trace),
                             f"many threads, buffer {size}: runs and writes its trace",
                             result.stderr):
            continue
        counts = marked_counts(parse_calls(show(trace).stdout))
        results.check(counts == {"malloc": 32000, "free": 32000},
                      f"many threads, buffer {size}: nothing lost at exit (32 threads that "
                      f"exited before main)", str(counts))
        results.check(not any(name.endswith(".profraw") or ".profraw." in name
                              for name in os.listdir(directory)),
                      f"many threads, buffer {size}: profile=0 writes no profile",
                      str(os.listdir(directory)))


def sizes_in(calls, low, count):
    return sum(1 for c in calls if c[2] == "malloc" and low <= int(c[3][0]) < low + count)


def test_api(work, binary):
    directory = os.path.join(work, "api")
    os.makedirs(directory)
    trace = os.path.join(directory, "api.trace.zst")
    env = dict(os.environ, MEMPROF_OPTIONS=f"trace=1:trace_file={trace}")
    process = subprocess.Popen([binary, "api"], cwd=directory, env=env, text=True,
                               stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE)
    lines = []
    while True:
        line = process.stdout.readline()
        if not line:
            break
        lines.append(line.strip())
        if line.strip() == "synced":
            break
    live = show(trace) if os.path.exists(trace) else None
    results.check(live is not None and live.returncode == 0,
                  "api: after memprof_trace_sync the trace is readable while the program runs",
                  live.stderr if live else "no file")
    if live is not None and live.returncode == 0:
        calls = parse_calls(live.stdout)
        results.check("no end" in live.stderr and "still being written" in live.stdout,
                      "api: trace show says the trace is still being written", live.stderr)
        results.check((sizes_in(calls, BASE + 1000, 10), sizes_in(calls, BASE + 2000, 20),
                       sizes_in(calls, BASE + 3000, 30)) == (10, 0, 30),
                      "api: the synced trace holds the calls before the pause and after the "
                      "resume, none made while paused",
                      str((sizes_in(calls, BASE + 1000, 10), sizes_in(calls, BASE + 2000, 20),
                           sizes_in(calls, BASE + 3000, 30))))
    out, err = process.communicate("go\n", timeout=120)
    lines += out.split("\n")
    results.check(process.returncode == 7 and {"pause 0", "resume 0", "sync 0", "reset 0"}
                  <= set(lines), "api: every call returns 0", f"{lines} {err}")
    final = show(trace)
    if results.check(final.returncode == 0 and "complete" in final.stdout,
                     "api: the trace is complete at exit", final.stderr):
        calls = parse_calls(final.stdout)
        counts = (sizes_in(calls, BASE + 1000, 10), sizes_in(calls, BASE + 3000, 30),
                  sizes_in(calls, BASE + 4000, 40))
        results.check(counts == (0, 0, 40),
                      "api: after memprof_trace_reset the file holds only the later calls",
                      str(counts))
    no_leftovers(directory, "api")


def test_dump_signal(work, binary):
    """A dump request (the dump signal) writes what every thread recorded,
    as memprof_trace_sync does: the calls are in the file while the
    program still runs."""
    directory = os.path.join(work, "dump")
    os.makedirs(directory)
    trace = os.path.join(directory, "dump.trace.zst")
    env = dict(os.environ, MEMPROF_OPTIONS=f"trace=1:trace_file={trace}:dump_signal=SIGUSR2:"
               f"profile_file={directory}/dump.%p.%n.profraw")
    process = subprocess.Popen([binary, "wait"], cwd=directory, env=env, text=True,
                               stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE)
    ready = process.stdout.readline().strip() == "ready"
    process.send_signal(signal.SIGUSR2)
    # The dump thread writes the profile after the trace's sync.
    deadline = time.time() + 60
    while time.time() < deadline and not any(name.endswith(".profraw")
                                             for name in os.listdir(directory)):
        time.sleep(0.05)
    time.sleep(0.2)
    live = show(trace) if os.path.exists(trace) else None
    counted = sizes_in(parse_calls(live.stdout), BASE + 5000, 50) \
        if live is not None and live.returncode == 0 else None
    results.check(ready and counted == 50,
                  "dump signal: the trace holds every call made before it, the program "
                  "still running", f"ready={ready} calls={counted} "
                  f"{live.stderr if live else 'no file'}")
    out, err = process.communicate("go\n", timeout=120)
    results.check(process.returncode == 7, "dump signal: the program exits 7 as it should",
                  f"{process.returncode} {err}")
    no_leftovers(directory, "dump")


def test_fork(work, binary):
    directory = os.path.join(work, "fork")
    os.makedirs(directory)
    result = run(binary, directory, "trace=1:trace_file=fork.%p.trace.zst", "fork")
    traces = [name for name in os.listdir(directory) if name.startswith("fork.")]
    results.check(result.returncode == 7 and len(traces) == 1,
                  "fork: the child writes no trace; the parent's is written", str(traces))
    if len(traces) == 1:
        calls = parse_calls(show(os.path.join(directory, traces[0])).stdout)
        counts = (sizes_in(calls, BASE + 1000, 10), sizes_in(calls, BASE + 5000, 25),
                  sizes_in(calls, BASE + 3000, 30))
        results.check(counts == (10, 0, 30),
                      "fork: the parent's trace holds its calls before and after the fork, "
                      "none of the child's", str(counts))
    no_leftovers(directory, "fork")


def check_bad_input(label, path, command, data, offsets, truncate):
    crashes, silent, unclear = [], [], []
    bad = path + ".bad"
    for offset in offsets:
        if truncate:
            mutated = data[:offset]
        else:
            mutated = bytearray(data)
            mutated[offset] ^= 0x5a
        with open(bad, "wb") as out:
            out.write(mutated)
        try:
            result = memprof(*command(bad), timeout=120)
        except subprocess.TimeoutExpired:
            crashes.append((offset, "timeout"))
            continue
        if result.returncode not in (0, 2):
            crashes.append((offset, result.returncode, result.stderr[-300:]))
        elif result.returncode == 0 and truncate:
            silent.append(offset)
        elif result.returncode == 2:
            message = result.stderr.strip().splitlines()
            if len(message) != 1 or bad not in message[0] or "byte" not in message[0]:
                unclear.append((offset, result.stderr))
    what = "truncated" if truncate else "corrupted"
    results.check(not crashes, f"{label} {what} at {len(offsets)} offsets: never a crash or "
                  "a hang (exit status 0 or 2)", str(crashes[:3]))
    if truncate:
        results.check(not silent, f"{label} {what}: always refused", str(silent[:10]))
    results.check(not unclear, f"{label} {what}: one message naming the file and the byte",
                  str(unclear[:2]))


def spread(size, count):
    step = max(1, size // count)
    return sorted(set(list(range(0, min(size, 80), 7)) + list(range(0, size, step))))


def test_bad_inputs(work, trace):
    directory = os.path.join(work, "bad")
    os.makedirs(directory)
    data = open(trace, "rb").read()
    copy = os.path.join(directory, "t.zst")
    check_bad_input("trace", copy, lambda f: ["trace", "show", "--summary", f], data,
                    spread(len(data), 60), True)
    check_bad_input("trace", copy, lambda f: ["trace", "show", "--summary", f], data,
                    spread(len(data), 60), False)
    workload = os.path.join(directory, "w.wl")
    if memprof("trace2wl", "--quiet", trace, "-o", workload).returncode != 0:
        results.check(False, "bad inputs: a workload to corrupt")
        return
    data = open(workload, "rb").read()
    check_bad_input("workload", workload, lambda f: ["replay", f], data,
                    spread(len(data), 40), True)
    check_bad_input("workload", workload, lambda f: ["replay", f], data,
                    spread(len(data), 40), False)
    for command in (["trace", "show", workload], ["replay", trace], ["trace2wl", workload, "-o",
                                                                    workload + ".2"]):
        result = memprof(*command)
        results.check(result.returncode == 2 and len(result.stderr.strip().splitlines()) == 1,
                      f"memprof {command[0]} of the wrong kind of file: exit status 2 and one "
                      "message", result.stderr)


def main():
    global args
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--cc", default="gcc")
    parser.add_argument("--cxx", default="g++")
    args = parser.parse_args()
    work = os.path.join(HERE, "work")
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)

    c_program = build(work, "threads.c", "threads", libmemprof())
    c_plain = build(work, "threads.c", "threads-plain", ["-DNO_MEMPROF"])
    cxx_program = build(work, "threads_cxx.cc", "threads_cxx", libmemprof())
    cxx_plain = build(work, "threads_cxx.cc", "threads_cxx-plain")
    trace = None
    if c_program:
        trace = test_program(work, "c", c_program, c_plain, "mixed")
        test_many_threads(work, c_program)
        test_api(work, c_program)
        test_dump_signal(work, c_program)
        test_fork(work, c_program)
    if cxx_program:
        test_program(work, "cxx", cxx_program, cxx_plain)
    if trace:
        test_bad_inputs(work, trace)
    return results.finish()


if __name__ == "__main__":
    sys.exit(main())
