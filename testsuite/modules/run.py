#!/usr/bin/env python3
"""Profiling modules end to end (docs/modules.md): modules built with one
`gcc -shared` command, programs built with the plugin's
-fplugin-arg-memprof-events=, run with MEMPROF_OPTIONS=module=...

  - events arrive exactly: counts per event type and per instruction on
    events_program.c, whose events are known by hand (and with 20000
    elements, across many buffers), the memory events' addresses inside
    the heap block, the ids naming file:line:column; threads_program.c:
    every store of 4 threads;
  - an event not asked for is not instrumented: the GIMPLE dump
    (-fdump-tree-optimized) has only the calls asked for, none without
    events=; and the module receives none of them;
  - the heap profile beside a module: the same heap access count;
  - a module that faults, refuses, is missing, has no memprof_module or
    the wrong ABI version: the program's output and exit status are
    those of the build without the plugin, and the log says why; the
    program's own SIGSEGV still ends it by SIGSEGV with a module loaded;
  - the dependences module: the loop-carried and intra-iteration
    dependences of dependences_program.c, and none in its independent
    loop;
  - the lifetime module: the constant load and the iteration-local and
    call-local objects of lifetime_program.c, through `memprof
    module-show` (symbolized);
  - the module of docs/modules.md ("Writing a module in five minutes"),
    taken from the page, built with its one command, counts the loads;
  - bad input: an unknown event, in the argument and in an events file
    (file:line); a file that is no module output for module-show.

Ends with `modules: N passed, N failed`."""

import argparse
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

MEMPROF = os.path.join(TOP, "analysis", "memprof")
WORK = os.path.join(HERE, "work")
results = Report("modules")


def run(command, **kwargs):
    return subprocess.run(command, capture_output=True, text=True, **kwargs)


def pkg_config(*args):
    env = dict(os.environ, PKG_CONFIG_PATH=TOP)
    return run(["pkg-config", *args, "memprof"], env=env).stdout.split()


def line_of(source, marker):
    """The line of SOURCE that ends with the comment /* MARKER */."""
    with open(os.path.join(HERE, source)) as f:
        for number, line in enumerate(f, 1):
            if line.rstrip().endswith(f"/* {marker} */"):
                return number
    raise KeyError(marker)


def build_module(cc, name, source, extra=()):
    """One gcc -shared command, as docs/modules.md gives it."""
    output = os.path.join(WORK, name + ".so")
    built = run([cc, "-shared", "-fPIC", "-O2", *pkg_config("--cflags"),
                 *extra, "-o", output, source])
    results.check(built.returncode == 0, f"module {name} builds with one "
                  "gcc -shared command", built.stderr[-2000:])
    return output


def build_program(cc, source, name, events=None, plugin=True, flags=()):
    output = os.path.join(WORK, name)
    command = [cc, "-g", "-O1", "-fno-tree-vectorize", *flags,
               os.path.join(HERE, source), "-o", output, "-pthread"]
    if plugin:
        command[1:1] = ["-fplugin=" + pkg_config("--variable=plugin")[0]]
        if events:
            command.insert(2, "-fplugin-arg-memprof-events=" + events)
        command += ["-fdump-tree-optimized=" + output + ".optimized"]
        command += pkg_config("--cflags", "--libs")
    built = run(command, cwd=WORK)
    results.check(built.returncode == 0, f"{name} builds", built.stderr[-2000:])
    return output


def run_program(binary, options, args=()):
    env = dict(os.environ, MEMPROF_OPTIONS=options)
    return run([binary, *args], cwd=WORK, env=env)


def counts_of(path):
    counts, sites = {}, []
    with open(path) as f:
        for line in f:
            fields = line.split()
            if fields[0] == "site":
                sites.append(fields[1:])
            else:
                counts[fields[0]] = int(fields[1])
    return counts, sites


def site_count(sites, kind, function, line):
    """The count of the one site of KIND in FUNCTION at LINE."""
    found = [s for s in sites if s[0] == kind and s[1] == function
             and s[2].split(":")[-2] == str(line)]
    return int(found[0][3]) if len(found) == 1 else None


def exact_events(cc, count_module):
    binary = build_program(cc, "events_program.c", "events",
                           events="memory,function,loop")
    out = os.path.join(WORK, "events.counts")
    ran = run_program(binary, f"module={count_module}:module_args=out={out}")
    results.check(ran.stdout == "45\n" and ran.returncode == 3,
                  "events_program: its output and exit status with the "
                  "module", f"{ran.stdout!r} {ran.returncode} {ran.stderr}")
    counts, sites = counts_of(out)
    expected = {"load": 10, "store": 10, "alloc": 1, "free": 1,
                "alloc-bytes": 40, "load-in-heap": 10, "store-in-heap": 10,
                "function-entry": 3, "function-exit": 3, "loop-entry": 4,
                "loop-exit": 4, "threads": 1}
    got = {key: counts.get(key) for key in expected}
    results.check(got == expected, "events_program: the count of each "
                  "event type is the one known by hand", f"{got}")
    fill_store = line_of("events_program.c", "FILL_STORE")
    sum_load = line_of("events_program.c", "SUM_LOAD")
    results.check(site_count(sites, "store", "fill", fill_store) == 10
                  and site_count(sites, "load", "sum", sum_load) == 10,
                  "events_program: the ids name the store in fill and the "
                  f"load in sum (lines {fill_store}, {sum_load}), 10 each",
                  f"{sites}")
    main_loops = [s for s in sites if s[0] == "loop-iteration"
                  and s[1] == "main"]
    fill_iterations = [int(s[3]) for s in sites if s[0] == "loop-iteration"
                       and s[1] in ("fill", "sum")]
    results.check(fill_iterations == [10, 10] and len(main_loops) == 2
                  and all(int(s[3]) == 2 for s in main_loops),
                  "events_program: loop iterations 10 in fill and sum, "
                  "2 in each loop of main (45 has two digits)", f"{sites}")

    out = os.path.join(WORK, "events-large.counts")
    ran = run_program(binary, f"module={count_module}:module_args=out={out}",
                      ["20000"])
    counts, _ = counts_of(out)
    # One load more: main reads argv[1] (not provably stack).
    want = {"load": 20001, "store": 20000, "load-in-heap": 20000,
            "store-in-heap": 20000, "alloc-bytes": 80000}
    got = {key: counts.get(key) for key in want}
    results.check(got == want and ran.returncode == 3,
                  "events_program 20000: every one of 40001 memory events "
                  "arrives, across buffers", f"{got} {ran.stderr}")
    return binary


def abi_version_1(cc, events_binary, count_module):
    """A module built for ABI version 1 (no worker fields) still loads
    and gets the events the current one gets."""
    old = build_module(cc, "count_v1", os.path.join(HERE, "count_module.c"),
                       ["-DCOUNT_ABI_VERSION=1"])
    got = []
    for module, name in ((count_module, "v2"), (old, "v1")):
        out = os.path.join(WORK, f"abi.{name}.counts")
        run_program(events_binary, f"module={module}:module_args=out={out}")
        got.append(counts_of(out)[0] if os.path.exists(out) else None)
    results.check(got[0] is not None and got[0] == got[1],
                  "a module of ABI version 1 loads and counts the events of "
                  "version 2", f"{got}")


def threads(cc, count_module):
    binary = build_program(cc, "threads_program.c", "threads",
                           events="store")
    out = os.path.join(WORK, "threads.counts")
    ran = run_program(binary, f"module={count_module}:module_args=out={out}")
    counts, _ = counts_of(out)
    results.check(ran.returncode == 0 and counts.get("store") == 120000
                  and counts.get("store-in-heap") == 120000
                  and counts.get("threads") == 5,
                  "threads_program: 4 threads x 30000 stores, all inside "
                  "their blocks, from 5 threads (main allocates in "
                  "pthread_create)", f"{counts} {ran.stderr}")


def only_asked(cc, count_module):
    calls = {"load": "__memprof_event_load", "store": "__memprof_event_store",
             "function": "__memprof_event_function_",
             "loop": "__memprof_event_loop_"}
    for events, present in (("store", {"store"}), ("function", {"function"}),
                            ("loop", {"loop"}), (None, set())):
        name = f"asked-{events or 'nothing'}"
        binary = build_program(cc, "events_program.c", name, events=events)
        with open(binary + ".optimized") as f:
            dump = f.read()
        found = {key for key, call in calls.items() if call in dump}
        results.check(found == present and
                      (events is not None or "__memprof_event" not in dump),
                      f"events={events}: the GIMPLE dump calls only "
                      f"{sorted(present) or 'no event'}", f"{sorted(found)}")
    out = os.path.join(WORK, "asked-store.counts")
    run_program(os.path.join(WORK, "asked-store"),
                f"module={count_module}:module_args=out={out}")
    counts, _ = counts_of(out)
    results.check(counts.get("store") == 10 and counts.get("load") == 0
                  and counts.get("function-entry") == 0
                  and counts.get("loop-iteration") == 0,
                  "events=store: the module receives the 10 stores and no "
                  "load, function or loop event", f"{counts}")


def heap_profile_unchanged(cc, events_binary, count_module):
    plain = build_program(cc, "events_program.c", "plugin-only")
    pattern = re.compile(r"heap (\d+)")

    def heap_accesses(binary, options):
        ran = run_program(binary, "stats=1:write_profile=0" + options)
        found = pattern.search(ran.stderr)
        return int(found.group(1)) if found else None

    without = heap_accesses(plain, "")
    beside = heap_accesses(events_binary, f":module={count_module}")
    results.check(without == 20 and beside == without,
                  "the heap profile beside a module counts the same heap "
                  "accesses as the plugin alone (20)",
                  f"{without} {beside}")


def failing_modules(cc, events_binary, count_module):
    plain = build_program(cc, "events_program.c", "no-plugin", plugin=False)
    expected = run_program(plain, "")
    no_symbol = os.path.join(WORK, "no_symbol.so")
    with open(os.path.join(WORK, "no_symbol.c"), "w") as f:
        f.write("int not_a_module = 1;\n")
    run([cc, "-shared", "-fPIC", "-o", no_symbol,
         os.path.join(WORK, "no_symbol.c")])
    wrong_abi = build_module(cc, "wrong_abi",
                             os.path.join(HERE, "count_module.c"),
                             ["-DCOUNT_ABI_VERSION=99"])
    workers_module = build_module(cc, "workers",
                                  os.path.join(HERE, "workers_module.c"))
    cases = [("faults in its handler",
              f"module={count_module}:module_args=crash",
              "signal 11 (Segmentation fault) in its handle"),
             ("overflows its stack",
              f"module={count_module}:module_args=overflow",
              "signal 11 (Segmentation fault) in its handle"),
             ("refuses", f"module={count_module}:module_args=refuse",
              "refused to start"),
             ("is missing", "module=/nonexistent/module.so",
              "cannot load it"),
             ("has no memprof_module", f"module={no_symbol}",
              "no symbol memprof_module"),
             ("has the wrong ABI version", f"module={wrong_abi}",
              "built for module ABI version 99"),
             ("faults on its worker 1",
              f"module={workers_module}:module_args=crash",
              "signal 11 (Segmentation fault) in its worker_handle"),
             ("faults in its merge",
              f"module={workers_module}:module_args=merge",
              "signal 11 (Segmentation fault) in its merge"),
             ("refuses with workers",
              f"module={workers_module}:module_args=refuse",
              "refused to start")]
    for what, options, message in cases:
        ran = run_program(events_binary, options)
        results.check(ran.stdout == expected.stdout
                      and ran.returncode == expected.returncode == 3
                      and message in ran.stderr,
                      f"a module that {what}: same output and exit status "
                      "as without the plugin, and the log says so",
                      f"{ran.stdout!r} {ran.returncode} {ran.stderr[-500:]}")
    own = run_program(events_binary, f"module={count_module}", ["10", "segv"])
    alone = run_program(plain, "", ["10", "segv"])
    results.check(own.returncode == alone.returncode == -11
                  and own.stdout == alone.stdout,
                  "the program's own SIGSEGV still ends it by SIGSEGV with "
                  "a module loaded", f"{own.returncode} {alone.returncode}")


def run_example_module(cc, name):
    """Build modules/NAME.c, build NAME_program.c with its events file,
    run it with the module, and read its output through `memprof
    module-show --format=json`: {title: rows}, None on failure; and the
    output's path."""
    module = build_module(cc, name, os.path.join(TOP, "modules", name + ".c"))
    binary = build_program(
        cc, f"{name}_program.c", f"{name}_program",
        events="@" + os.path.join(TOP, "modules", name + ".events"))
    out = os.path.join(WORK, name + ".txt")
    ran = run_program(binary, f"module={module}:module_args=out={out}")
    shown = run([MEMPROF, "module-show", "--format=json", out])
    ok = results.check(ran.returncode == 0 and shown.returncode == 0,
                       f"{name}: the program runs, module-show reads the "
                       "output", ran.stderr + shown.stderr)
    if not ok:
        return None, out
    return ({t["title"]: t["rows"] for t in json.loads(shown.stdout)["tables"]},
            out)


def dependences(cc):
    tables, _ = run_example_module(cc, "dependences")
    if tables is None:
        return
    rows = [(r["loop"].split()[0], r["kind"], r["store"].split(":")[-2],
             r["load"].split(":")[-2], int(r["count"]))
            for r in tables["dependences"]]
    carried = line_of("dependences_program.c", "CARRIED_LINE")
    store = line_of("dependences_program.c", "SAME_STORE")
    load = line_of("dependences_program.c", "SAME_LOAD")
    expected = sorted([("carried", "loop-carried", str(carried), str(carried),
                        98),
                       ("same_iteration", "intra-iteration", str(store),
                        str(load), 100)])
    results.check(sorted(rows) == expected,
                  "dependences: 98 loop-carried in carried(), 100 "
                  "intra-iteration in same_iteration(), none in "
                  "independent()", f"{rows}")
    iterations = sorted((r["loop"].split()[0], int(r["iterations"]))
                        for r in tables["loops"])
    results.check(iterations == [("carried", 99), ("independent", 100),
                                 ("same_iteration", 100)],
                  "dependences: each loop's iterations", f"{iterations}")


def partitioned_workers(cc):
    """The dependences module on 1, 2 and 3 workers (module_workers):
    the same file, with the counts known by hand; a worker-only module
    with a crashing worker keeps the program's output and status."""
    module = os.path.join(WORK, "dependences.so")
    binary = build_program(
        cc, "pages_program.c", "pages_program",
        events="@" + os.path.join(TOP, "modules", "dependences.events"))
    outputs = {}
    for workers in (1, 2, 3):
        out = os.path.join(WORK, f"pages.{workers}.txt")
        ran = run_program(binary, f"module={module}:module_workers={workers}"
                          f":module_args=out={out}:verbosity=1")
        results.check(ran.returncode == 0
                      and f"{workers} workers" in ran.stderr
                      if workers > 1 else ran.returncode == 0,
                      f"workers: the program runs on {workers} worker(s)",
                      ran.stderr[-1500:])
        # The rows of a table come in the order of its hash table, of
        # addresses that change from run to run.
        outputs[workers] = (sorted(open(out).read().splitlines())
                            if os.path.exists(out) else [])
    results.check(outputs[1] != [] and outputs[1] == outputs[2] == outputs[3],
                  "workers: 2 and 3 partitioned workers write the file of "
                  "one worker", f"{outputs[2][:20]}")
    shown = run([MEMPROF, "module-show", "--format=json",
                 os.path.join(WORK, "pages.2.txt")])
    rows = []
    if shown.returncode == 0:
        tables = {t["title"]: t["rows"]
                  for t in json.loads(shown.stdout)["tables"]}
        rows = sorted((r["loop"].split()[0], r["kind"],
                       r["store"].split(":")[-2], r["load"].split(":")[-2],
                       int(r["count"])) for r in tables["dependences"])
    line = str(line_of("pages_program.c", "CARRIED_LINE"))
    store = str(line_of("pages_program.c", "UNALIGNED_STORE"))
    load = str(line_of("pages_program.c", "UNALIGNED_LOAD"))
    # carried: one word per iteration from the second; unaligned: the
    # 8 bytes stored at 7 * (i - 1) span 3 words (2 when aligned), each
    # read back by the next iteration's load: counted per word.
    unaligned_words = sum(
        len(range((7 * (i - 1)) // 4, (7 * (i - 1) + 7) // 4 + 1))
        for i in range(2, 20000))
    expected = [("carried", "loop-carried", line, line, 19998),
                ("unaligned", "loop-carried", store, load, unaligned_words)]
    results.check(rows == expected, "workers: the dependences across "
                  "granules, counted by hand", f"{rows} {expected}")


def events_from_module(cc):
    """-fplugin-arg-memprof-events=@module.so reads the module's
    MEMPROF_MODULE_EVENTS: the same event calls in the GIMPLE as with its
    events file, for both example modules."""
    for name, program in (("dependences", "dependences_program.c"),
                          ("lifetime", "lifetime_program.c")):
        module = os.path.join(WORK, name + ".so")
        calls = []
        for spec in (os.path.join(TOP, "modules", name + ".events"), module):
            binary = build_program(cc, program, f"{name}.from." +
                                   os.path.basename(spec), events="@" + spec)
            try:
                with open(binary + ".optimized") as f:
                    calls.append(sorted(re.findall(r"__memprof_event_\w+",
                                                   f.read())))
            except OSError:
                calls.append(None)
        results.check(calls[0] and calls[0] == calls[1],
                      f"events=@{name}.so: the event calls of "
                      f"@{name}.events ({len(calls[0] or [])})",
                      f"{calls}")


def lifetime(cc):
    tables, out = run_example_module(cc, "lifetime")
    if tables is None:
        return
    constant = [(r["load"].split()[0], r["value"], int(r["loads"]))
                for r in tables["constant-loads"]]
    results.check(constant == [("scale", "3", 50)],
                  "lifetime: the one constant load is scale's *k, 3, 50 "
                  "times", f"{constant}")
    source = os.path.join(HERE, "lifetime_program.c")

    def row_at(marker):
        line = line_of("lifetime_program.c", marker)
        found = [r for r in tables["local-objects"]
                 if f"{source}:{line}:" in r["allocation"]]
        return ((int(found[0]["allocations"]), int(found[0]["iteration-local"]),
                 int(found[0]["call-local"])) if len(found) == 1 else found)

    got = [row_at(m) for m in ("TMP_LINE", "KEEP_LINE", "MAKE_LINE")]
    results.check(got == [(50, 50, 50), (50, 0, 50), (1, 0, 0)],
                  "lifetime: iteration-local 50/50, call-local only 50/50, "
                  "escaping 1; allocation sites symbolized to their lines",
                  f"{got} {tables['local-objects']}")
    text = run([MEMPROF, "module-show", "--top=1", "--table=constant-loads",
                out])
    results.check(text.returncode == 0 and "scale" in text.stdout
                  and "local-objects" not in text.stdout,
                  "module-show --table --top: one table", text.stdout)


def module_from_the_docs(cc):
    with open(os.path.join(TOP, "docs", "modules.md")) as f:
        page = f.read()
    code = re.search(r"```c\n(.*?)```", page, re.S).group(1)
    source = os.path.join(WORK, "docs_count.c")
    with open(source, "w") as f:
        f.write(code)
    module = build_module(cc, "docs_count", source)
    binary = build_program(cc, "events_program.c", "docs-events",
                           events="load")
    ran = run_program(binary, f"module={module}")
    loads = os.path.join(WORK, "loads.txt")
    rows = ([line.split() for line in open(loads)]
            if os.path.exists(loads) else [])
    sum_load = line_of("events_program.c", "SUM_LOAD")
    found = [row for row in rows if row[1] == "sum"]
    results.check(ran.returncode == 3 and len(found) == 1
                  and found[0][0].endswith(f"events_program.c:{sum_load}:11")
                  and found[0][2] == "10",
                  "docs/modules.md's example module, built with its one "
                  "command, counts sum's 10 loads", f"{rows} {ran.stderr}")


def bad_input(cc):
    plugin = "-fplugin=" + pkg_config("--variable=plugin")[0]
    source = os.path.join(HERE, "events_program.c")
    built = run([cc, plugin, "-fplugin-arg-memprof-events=load,lod", "-c",
                 source, "-o", os.path.join(WORK, "bad.o")])
    results.check(built.returncode != 0 and "unknown event" in built.stderr
                  and "lod" in built.stderr,
                  "events=load,lod: an error naming 'lod'", built.stderr)
    spec = os.path.join(WORK, "bad.events")
    with open(spec, "w") as f:
        f.write("# a comment\nload\nloops\n")
    built = run([cc, plugin, f"-fplugin-arg-memprof-events=@{spec}", "-c",
                 source, "-o", os.path.join(WORK, "bad.o")])
    results.check(built.returncode != 0 and f"{spec}:3" in built.stderr
                  and "loops" in built.stderr,
                  "events=@FILE: an unknown event named with FILE:LINE",
                  built.stderr)
    no_events = os.path.join(WORK, "count.so")
    built = run([cc, plugin, f"-fplugin-arg-memprof-events=@{no_events}",
                 "-c", source, "-o", os.path.join(WORK, "bad.o")])
    results.check(built.returncode != 0 and no_events in built.stderr
                  and "no section" in built.stderr
                  and "MEMPROF_MODULE_EVENTS" in built.stderr,
                  "events=@module.so of a module without MEMPROF_MODULE_EVENTS:"
                  " an error naming the module and the macro", built.stderr)
    shown = run([MEMPROF, "module-show", spec])
    results.check(shown.returncode == 2 and f"{spec}:1" in shown.stderr,
                  "module-show: a file that is no module output is refused "
                  "with its name and line", shown.stderr)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cc", default="gcc")
    args = parser.parse_args()
    shutil.rmtree(WORK, ignore_errors=True)
    os.makedirs(WORK)
    count_module = build_module(args.cc, "count",
                                os.path.join(HERE, "count_module.c"))
    events_binary = exact_events(args.cc, count_module)
    abi_version_1(args.cc, events_binary, count_module)
    threads(args.cc, count_module)
    only_asked(args.cc, count_module)
    heap_profile_unchanged(args.cc, events_binary, count_module)
    failing_modules(args.cc, events_binary, count_module)
    dependences(args.cc)
    partitioned_workers(args.cc)
    lifetime(args.cc)
    events_from_module(args.cc)
    module_from_the_docs(args.cc)
    bad_input(args.cc)
    return results.finish()


if __name__ == "__main__":
    sys.exit(main())
