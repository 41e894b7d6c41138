#!/usr/bin/env python3
"""Wrapper cloning across units under -flto (docs/feedback.md, "Across
units under -flto"), as a user builds: lto_alloc.c's wrapper new_block,
kept out of line, is called by a cold path and a hot path of lto_main.c,
another unit.  The profile is of an -flto build; the feedback build
compiles each unit with -flto and the plugin, and links with the plugin
and the same arguments on the link command.  Context hints are off, so
only the link step's clones can place the blocks.  At -O2:

- direct calls: the link step clones the wrapper per class across the
  units (remarks and the summary line say so), and each path's blocks go
  to its class's arena; the output is the plain build's;
- -DINDIRECT (the callers reach the wrapper through a pointer main sets):
  the link step devirtualizes both calls speculatively to the clones;
  the blocks are placed as above, and with the pointer set to malloc
  (the guard's other branch) the program prints what the plain build
  prints and its blocks stay in the default arena;
- the same with -flto-partition=none (one lto1, no WPA);
- -DINLINE_CALLERS: the paths inlined into main, which holds the calls
  (inlining is applied before the link step's pass);
- the hinted build profiled again (instrument + use): the build from the
  second profile places the blocks again;
- a link without the plugin: the compile steps said that the feedback is
  left to the link step; the program runs as the plain build and nothing
  is placed.

Prints one line per check and ends with `lto-clone: N passed, N
failed`."""

import os
import re
import shutil
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(TOP, "testsuite", "lib"))
sys.path.insert(0, HERE)
from report import Report  # noqa: E402
from context_hints import THRESHOLDS, arenas, execute, pkg_config, profile, run  # noqa: E402

WORK = os.path.join(HERE, "work", "lto")
MEMPROF = os.path.join(TOP, "analysis", "memprof")
MAIN, ALLOC, CHECK = (os.path.join(HERE, name) for name in
                      ("lto_main.c", "lto_alloc.c", "context_check.c"))
BLOCKS = 512
OPT = "-O2"
results = Report("lto-clone")

PLACED = ((BLOCKS, 0, 0), (0, BLOCKS, 0))
DEFAULT = ((0, 0, BLOCKS), (0, 0, BLOCKS))


def program_lines(output):
    return [line for line in output.splitlines() if not line.startswith("arenas:")]


def profile_lto(name, work, plugin, sources, profiled):
    """Build SOURCES instrumented with -flto as PROFILED, run it and merge
    its profile: (the .mprof, the raw profile), or (None, None)."""
    built = run(["gcc", OPT, "-g", "-flto", plugin, *sources, "-o", profiled,
                 *pkg_config("memprof", "--libs")])
    if not results.check(built.returncode == 0, f"{name}: the profiled -flto build builds",
                         built.stderr[-500:]):
        return None, None
    mprof, raw = profile("profile", profiled, work)
    if not results.check(mprof is not None, f"{name}: profiled and merged", raw):
        return None, None
    return mprof, raw


def check_placed(name, work, binary, expected):
    """BINARY's blocks each in its path's class's arena, and the plain
    build's output (EXPECTED)."""
    ran = execute(os.path.join(work, binary))
    results.check(ran.returncode == 0 and arenas(ran.stdout) == PLACED,
                  f"{name}: {binary}: all {BLOCKS} cold-path blocks are in the cold arena "
                  f"and all {BLOCKS} hot-path blocks in the hot arena",
                  ran.stdout + ran.stderr[-500:])
    results.check(expected is not None and program_lines(ran.stdout) ==
                  expected.splitlines(), f"{name}: {binary}: prints what the plain "
                  f"build prints", f"{ran.stdout!r} vs {expected!r}")


def check_variant(name, defines):
    indirect = "-DINDIRECT" in defines
    work = os.path.join(WORK, name)
    os.makedirs(work)
    plugin = "-fplugin=" + pkg_config("memprof", "--variable=plugin")[0]
    include = "-I" + os.path.join(TOP, "include")

    plain = os.path.join(work, "plain")
    built = run(["gcc", OPT, "-g", *defines, MAIN, ALLOC, "-o", plain])
    expected = execute(plain).stdout if built.returncode == 0 else None
    plain_malloc = (run([plain, "malloc"]).stdout
                    if built.returncode == 0 and indirect else None)

    profiled = os.path.join(work, "profiled")
    mprof, raw = profile_lto(name, work, plugin, [*defines, MAIN, ALLOC], profiled)
    if mprof is None:
        return
    if "-DINLINE_CALLERS" in defines:
        shown = run([MEMPROF, "show", "--top=0", "--binary=" + profiled, raw]).stdout
        results.check(re.search(r"cold_path \(.*\) \[inlined\]", shown) is not None,
                      f"{name}: the profile has the cold path inlined", shown[-1500:])

    feedback = [plugin, "-fplugin-arg-memprof-use=" + mprof, "-fplugin-arg-memprof-remarks",
                "-fplugin-arg-memprof-context-hints=0", *THRESHOLDS]
    objects = []
    said = True
    for source, flags in ((MAIN, defines), (ALLOC, ())):
        obj = os.path.join(work, os.path.basename(source)[:-2] + ".o")
        built = run(["gcc", OPT, "-g", "-flto", "-fno-fat-lto-objects", *feedback, *flags, "-c",
                     source, "-o", obj])
        if not results.check(built.returncode == 0, f"{name}: {os.path.basename(source)} "
                             f"compiles with -flto", built.stderr[-500:]):
            return
        said &= "left to the link step" in built.stderr and "-fplugin-arg-memprof-use=" \
            + mprof in built.stderr
        objects.append(obj)
    results.check(said, f"{name}: each -flto compile step says that the feedback is left to "
                  f"the link step and how to give it the plugin")
    quiet = run(["gcc", OPT, "-g", "-flto", *feedback, "-I" + os.path.join(TOP, "include"), "-c",
                 CHECK, "-o", os.path.join(work, "quiet.o")])
    results.check(quiet.returncode == 0 and "left to the link step" not in quiet.stderr,
                  f"{name}: a unit with no function in the profile does not say it",
                  quiet.stderr[-500:])
    check = os.path.join(work, "check.o")
    run(["gcc", OPT, "-g", include, "-c", CHECK, "-o", check])
    objects.append(check)
    hint = pkg_config("memprof-hint", "--libs")
    speculated = 2 if indirect else 0

    def link(binary, extra, with_plugin=True):
        built = run(["gcc", OPT, "-g", "-flto", *(feedback if with_plugin else ()), *extra,
                     *objects, "-o", os.path.join(work, binary), *hint])
        if not results.check(built.returncode == 0, f"{name}: {binary}: links",
                             built.stderr[-800:]):
            return None
        return built.stderr

    for binary, extra in (("hinted", ()), ("partition-none", ("-flto-partition=none",))):
        said = link(binary, extra)
        if said is None:
            continue
        results.check(said.count("cloned across units, from ") == 2
                      and "-flto: 2 wrapper clones for callers in other units; "
                      f"{speculated} indirect calls speculatively devirtualized" in said,
                      f"{name}: {binary}: the link step clones the wrapper for its cold and "
                      f"its hot callers of the other unit, and says so", said[-2500:])
        results.check(said.count("indirect call speculatively devirtualized: calls the") ==
                      speculated, f"{name}: {binary}: {speculated} remarks of indirect calls "
                      f"speculatively devirtualized", said[-2500:])
        check_placed(name, work, binary, expected)
        if indirect:
            other = run([os.path.join(work, binary), "malloc"])
            results.check(other.returncode == 0 and arenas(other.stdout) == DEFAULT
                          and plain_malloc is not None
                          and program_lines(other.stdout) == plain_malloc.splitlines(),
                          f"{name}: {binary}: with the pointer set to malloc, the guard's "
                          f"other branch calls it: the plain build's output, no block placed",
                          other.stdout + other.stderr[-500:])

    if indirect:
        check_again(name, work, plugin, defines, feedback, mprof, objects[-1], hint)

    said = link("without-plugin", (), with_plugin=False)
    if said is not None:
        ran = execute(os.path.join(work, "without-plugin"))
        results.check(ran.returncode == 0 and arenas(ran.stdout) == DEFAULT
                      and expected is not None
                      and program_lines(ran.stdout) == expected.splitlines(),
                      f"{name}: linked without the plugin, the program runs as the plain "
                      f"build and places nothing (as the compile steps said)", ran.stdout)


def check_again(name, work, plugin, defines, feedback, mprof, check, hint):
    """Did it work: the hinted -flto build, instrumented, profiled again;
    the build from that second profile places the blocks again."""
    again = os.path.join(work, "again")
    built = run(["gcc", OPT, "-g", "-flto", *feedback, "-fplugin-arg-memprof-instrument",
                 *defines, MAIN, ALLOC, "-o", again, *pkg_config("memprof", "--libs"), *hint])
    if not results.check(built.returncode == 0 and "-flto: 2 wrapper clones" in built.stderr,
                         f"{name}: the hinted -flto build, instrumented, builds with its clones",
                         built.stderr[-800:]):
        return
    second, raw = profile("second", again, work)
    if not results.check(second is not None, f"{name}: the hinted build profiled again", raw):
        return
    rebuilt = os.path.join(work, "from-second")
    second_feedback = [option.replace(mprof, second) for option in feedback]
    built = run(["gcc", OPT, "-g", "-flto", *second_feedback, *defines, MAIN, ALLOC, check,
                 "-o", rebuilt, *hint])
    ran = execute(rebuilt) if built.returncode == 0 else None
    results.check(ran is not None and arenas(ran.stdout) == PLACED,
                  f"{name}: built from the second profile, each path's blocks are in its "
                  f"class's arena again", (ran.stdout if ran else built.stderr[-800:]))


CHAIN = ["-DCHAIN", *(os.path.join(HERE, name) for name in
                     ("lto_main.c", "lto_chain_cold.c", "lto_chain_record.c", "lto_alloc.c"))]
THREE_PARTITIONS = ["-flto=2", "-flto-partition=balanced", "--param=lto-partitions=3",
                    "--param=lto-min-partition=1"]


def ltrans_units(said):
    """The link-time units whose feedback summary the link step printed."""
    return set(re.findall(r"memprof: (\S+\.ltrans\d+\.o): profile ", said))


def check_chain():
    """A clone chain across four units in three partitions: lto_alloc.c's
    new_block is called only by lto_chain_record.c's new_record, whose
    contexts part at its callers, the cold path (lto_chain_cold.c) and
    the hot path (lto_main.c with -DCHAIN)."""
    name = "chain"
    work = os.path.join(WORK, name)
    os.makedirs(work)
    plugin = "-fplugin=" + pkg_config("memprof", "--variable=plugin")[0]
    plain = os.path.join(work, "plain")
    built = run(["gcc", OPT, "-g", *CHAIN, "-o", plain])
    expected = execute(plain).stdout if built.returncode == 0 else None
    mprof, _ = profile_lto(name, work, plugin, CHAIN, os.path.join(work, "profiled"))
    if mprof is None:
        return
    feedback = [plugin, "-fplugin-arg-memprof-use=" + mprof, "-fplugin-arg-memprof-remarks",
                "-fplugin-arg-memprof-context-hints=0", *THRESHOLDS]
    objects = []
    for source in CHAIN[1:]:
        obj = os.path.join(work, os.path.basename(source)[:-2] + ".o")
        built = run(["gcc", OPT, "-g", "-flto", "-fno-fat-lto-objects", *feedback, "-DCHAIN",
                     "-c", source, "-o", obj])
        if not results.check(built.returncode == 0, f"{name}: {os.path.basename(source)} "
                             f"compiles with -flto", built.stderr[-500:]):
            return
        objects.append(obj)
    check = os.path.join(work, "check.o")
    run(["gcc", OPT, "-g", "-I" + os.path.join(TOP, "include"), "-c", CHECK, "-o", check])
    objects.append(check)
    hint = pkg_config("memprof-hint", "--libs")

    def link(binary, extra):
        built = run(["gcc", OPT, "-g", *feedback, *extra, *objects, "-o",
                     os.path.join(work, binary), *hint])
        results.check(built.returncode == 0, f"{name}: {binary}: links", built.stderr[-800:])
        return built.stderr if built.returncode == 0 else None

    said = link("not-cloned", [*THREE_PARTITIONS, "-fplugin-arg-memprof-clone-wrappers=0"])
    if said is not None:
        results.check(len(ltrans_units(said)) == 3 and "partitioning one" not in said,
                      f"{name}: with clone-wrappers=0 the program is in three partitions",
                      said[-1500:])
        ran = execute(os.path.join(work, "not-cloned"))
        results.check(arenas(ran.stdout) == DEFAULT, f"{name}: not-cloned: nothing placed",
                      ran.stdout)
    chained = "memprof: .new_record[^\n]* cloned as .new_record[^\n]*memprof_%s[^\n]* for its " \
        "1 %s caller, to call .new_block[^\n]*memprof_%s[^\n]*: a clone chain \\(level 2"
    for binary, extra, forced in (
            ("balanced", THREE_PARTITIONS, "balanced"),
            ("max", ["-flto=2", "-flto-partition=max"], "max"),
            ("one", ["-flto", "-flto-partition=one"], None)):
        said = link(binary, extra)
        if said is None:
            continue
        note = re.search(r"memprof: -flto: partitioning one instead of (\w+): 1 wrapper to "
                         r"clone per class \('new_block'\) and their callers, (\d+) functions "
                         r"of (\d+) units, stay in one link-time unit", said)
        if forced:
            results.check(note is not None and note.group(1) == forced
                          and note.groups()[1:] == ("4", "4"),
                          f"{name}: {binary}: WPA keeps the wrapper and its callers (4 "
                          f"functions of 4 units) in one link-time unit, and says so",
                          said[-2500:])
        else:
            results.check(note is None and "partitioning one" not in said,
                          f"{name}: {binary}: nothing to change, nothing said", said[-2500:])
        results.check(len(ltrans_units(said)) == 1,
                      f"{name}: {binary}: one link-time unit", said[-1500:])
        results.check(all(re.search(chained % (c, c, c), said) for c in ("cold", "hot"))
                      and "4 wrapper clones; rewritten: 1 cold, 1 hot" in said,
                      f"{name}: {binary}: new_record cloned per class to call new_block's "
                      f"clone of its class (a clone chain of two), across the units",
                      said[-2500:])
        check_placed(name, work, binary, expected)


def main():
    if not os.path.exists(MEMPROF):
        sys.exit(f"lto-clone: build the tree first: {MEMPROF} is missing")
    shutil.rmtree(WORK, ignore_errors=True)
    os.makedirs(WORK)
    check_variant("direct", [])
    check_variant("indirect", ["-DINDIRECT"])
    check_variant("inlined-callers", ["-DINDIRECT", "-DINLINE_CALLERS"])
    check_chain()
    return results.finish()


if __name__ == "__main__":
    sys.exit(main())
