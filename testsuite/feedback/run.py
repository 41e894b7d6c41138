#!/usr/bin/env python3
"""Profile feedback end to end, as a user runs it: build a program with the
plugin, run it, `memprof merge --binary` its profile, rebuild it with
-fplugin-arg-memprof-use, link it with libmemprof_hint, run it again.

For C and C++ programs at -O0 and -O2, checks that:
- every context the program's own code allocated (its leaf frame from the
  program's DWARF) is matched by exactly one allocation call: the frames
  the plugin computes from GIMPLE equal those memprof read from the
  binary's DWARF, inline chains included, and nothing is stale;
- the YAML of llvm-profdata-19 show --memory drives the same decisions as
  the .mprof file;
- the rewritten program prints the same output and exits with the same
  status;
- a build that both rewrites and instruments (-fplugin-arg-memprof-
  instrument) still profiles the rewritten sites at their own frames.

Prints one line per check and ends with `feedback: N passed, N failed`.
"""

import glob
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

WORK = os.path.join(HERE, "work")
MEMPROF = os.path.join(TOP, "analysis", "memprof")
results = Report("feedback")

# (source, extra compile flags, thresholds for the use build)
PROGRAMS = [
    (os.path.join(TOP, "testsuite", "analysis", "waste.c"), []),
    (os.path.join(TOP, "examples", "hot_cold.c"), []),
    (os.path.join(TOP, "examples", "over_reserve.c"), []),
    (os.path.join(TOP, "examples", "shapes.cc"), []),
    (os.path.join(TOP, "testsuite", "compat", "alloc_c.c"), ["-DNO_RUNTIME"]),
    (os.path.join(TOP, "testsuite", "compat", "newdelete.cc"), ["-DNO_RUNTIME"]),
    # Recursion: its contexts are folded (fold_recursion=1).
    (os.path.join(TOP, "testsuite", "stacks", "recursion.c"), []),
]
# Small thresholds, so that these short runs have hot and cold sites.
THRESHOLDS = ["-fplugin-arg-memprof-cold-lifetime=0", "-fplugin-arg-memprof-cold-density=1",
              "-fplugin-arg-memprof-hot-density=50"]


def run(command, **kwargs):
    return subprocess.run(command, capture_output=True, text=True, **kwargs)


def pkg_config(package, *args):
    env = dict(os.environ, PKG_CONFIG_PATH=TOP)
    return subprocess.run(["pkg-config", *args, package], capture_output=True, text=True,
                          env=env, check=True).stdout.split()


def compiler_for(source):
    return "g++" if source.endswith(".cc") else "gcc"


def compile_program(source, output, opt, flags, libraries):
    command = [compiler_for(source), opt, "-g", "-fno-optimize-sibling-calls",
               "-fplugin=" + pkg_config("memprof", "--variable=plugin")[0],
               "-I" + os.path.join(TOP, "include"), *flags, source, "-o", output,
               "-lpthread", *libraries]
    return run(command, cwd=os.path.dirname(output))


def execute(binary, options=None, arguments=()):
    env = dict(os.environ)
    env.pop("MEMPROF_OPTIONS", None)
    if options is not None:
        env["MEMPROF_OPTIONS"] = options
    return run([binary, *arguments], cwd=os.path.dirname(binary), env=env)


def use_lines(dump_dir, source):
    """The memprof-use lines of the dumps, without the source's path."""
    lines = []
    for dump in sorted(glob.glob(os.path.join(dump_dir, "*.memprof"))):
        for line in open(dump):
            if line.startswith("memprof-use:") and "rewritten:" not in line:
                lines.append(line.replace(source, "SOURCE").strip())
    return lines


def check_program(source, extra, opt):
    name = f"{os.path.basename(source)} {opt}"
    work = os.path.join(WORK, os.path.basename(source) + opt)
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    runtime = pkg_config("memprof", "--libs")
    hint = pkg_config("memprof-hint", "--libs")

    # 1. The profile.
    profiled = os.path.join(work, "profiled")
    built = compile_program(source, profiled, opt, extra, runtime)
    if not results.check(built.returncode == 0, f"{name}: builds with the plugin",
                         built.stderr[-500:]):
        return
    first = execute(profiled, "profile_file=run.profraw")
    profile = os.path.join(work, "run.profraw")
    mprof = os.path.join(work, "run.mprof")
    merged = run([MEMPROF, "merge", "--quiet", "--binary=" + profiled, "-o", mprof, profile])
    yaml = os.path.join(work, "run.yaml")
    show = run(["llvm-profdata-19", "show", "--memory", profile, "--profiled-binary", profiled])
    with open(yaml, "w") as out:
        out.write(show.stdout)
    if not results.check(merged.returncode == 0 and show.returncode == 0,
                         f"{name}: profiled, merged, and read by llvm-profdata",
                         merged.stderr + show.stderr):
        return
    # The contexts the program's own code allocated: leaf from its DWARF.
    records = json.loads(run([MEMPROF, "show", "--format=json", "--top=0", "--no-libraries",
                              "--binary=" + profiled, profile]).stdout)["records"]
    direct = [r for r in records if r["frames"] and r["frames"][0]["debug_info"]]

    # 2. The use build, from the .mprof and from the YAML.
    decisions = {}
    for kind, path in (("mprof", mprof), ("yaml", yaml)):
        dumps = os.path.join(work, "dump-" + kind)
        os.makedirs(dumps)
        output = os.path.join(dumps, "used")
        built = compile_program(source, output, opt,
                                [*extra, "-fplugin-arg-memprof-use=" + path,
                                 "-fplugin-arg-memprof-hot-cold-new",
                                 "-fplugin-arg-memprof-dump", "-dumpbase", "", *THRESHOLDS],
                                hint)
        if not results.check(built.returncode == 0, f"{name}: rebuilt with use={kind}",
                             built.stderr[-800:]):
            return
        decisions[kind] = (use_lines(dumps, source), built.stderr, output)
    lines, summary, used = decisions["mprof"]
    matched = sum(int(m.group(1)) for m in
                  (re.search(r": (\d+) contexts? matched", line) for line in lines) if m)
    results.check(matched == len(direct),
                  f"{name}: the {len(direct)} contexts allocated by the program's code are "
                  f"each matched by an allocation call (its frames from GIMPLE equal DWARF's)",
                  f"{matched} matched:\n" + "\n".join(lines))
    results.check(re.search(r" 0 unmatched \(stale\)", summary) is not None,
                  f"{name}: nothing stale", summary)
    results.check(decisions["yaml"][0] == lines,
                  f"{name}: llvm-profdata's YAML gives the decisions the .mprof gives",
                  "\n".join(sorted(set(decisions["yaml"][0]) ^ set(lines))))

    # 3. The rewritten program behaves as the original.
    plain = os.path.join(work, "plain")
    subprocess.run([compiler_for(source), opt, "-g", "-I" + os.path.join(TOP, "include"),
                    *extra, source, "-o", plain, "-lpthread"], check=True)
    before = execute(plain)
    after = execute(used)
    results.check(after.stdout == before.stdout and after.returncode == before.returncode,
                  f"{name}: the rewritten program prints the same and exits {before.returncode}",
                  f"{after.returncode}: {after.stderr[-300:]}")
    rewritten = len(re.findall(r"rewritten: [1-9]|rewritten: \d+ cold, [1-9]", summary))
    return rewritten, first


def check_instrumented_and_rewritten():
    """-fplugin-arg-memprof-instrument with use=: the rewritten sites still
    show in a new profile at their own frames (the shim forwards to the
    profiler's malloc with a tail call)."""
    source = os.path.join(TOP, "testsuite", "analysis", "waste.c")
    work = os.path.join(WORK, "both")
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    profiled = os.path.join(work, "profiled")
    compile_program(source, profiled, "-O2", [], pkg_config("memprof", "--libs"))
    execute(profiled, "profile_file=first.profraw")
    mprof = os.path.join(work, "first.mprof")
    run([MEMPROF, "merge", "--quiet", "--binary=" + profiled, "-o", mprof,
         os.path.join(work, "first.profraw")])
    both = os.path.join(work, "both")
    built = compile_program(source, both, "-O2",
                            ["-fplugin-arg-memprof-use=" + mprof,
                             "-fplugin-arg-memprof-instrument", *THRESHOLDS],
                            # The profiler first: its malloc must be the
                            # program's, not jemalloc's.
                            [*pkg_config("memprof", "--libs"),
                             *pkg_config("memprof-hint", "--libs")])
    if not results.check(built.returncode == 0 and re.search(r"rewritten: [1-9]", built.stderr),
                         "instrument and use: builds, and rewrites", built.stderr[-500:]):
        return
    execute(both, "profile_file=second.profraw")

    def leaves(binary, profile):
        records = json.loads(run([MEMPROF, "show", "--format=json", "--top=0",
                                  "--binary=" + binary, profile]).stdout)["records"]
        return sorted((r["frames"][0]["name"], r["allocs"]) for r in records
                      if r["frames"] and r["frames"][0]["file"].endswith("waste.c"))
    first = leaves(profiled, os.path.join(work, "first.profraw"))
    second = leaves(both, os.path.join(work, "second.profraw"))
    results.check(first == second and first,
                  "instrument and use: the rewritten build's profile has the same sites "
                  "(the shim leaves no frame of its own)", f"{first} vs {second}")


# ---- Hot and cold global variables ----

GLOBALS_SOURCES = [os.path.join(HERE, "globals_main.c"), os.path.join(HERE, "globals_other.c")]
GLOBALS_HOT = {"bss": ["hot_bss_1", "hot_bss_2", "hot_bss_3", "same_name@globals_main.c"],
               "data": ["hot_data_1", "hot_data_2", "hot_data_3"]}
GLOBALS_COLD = {"bss": ["cold_bss_1", "cold_bss_2", "cold_bss_3", "same_name@globals_other.c"],
                "data": ["cold_data_1", "cold_data_2", "cold_data_3"]}


def sized_data_symbols(binary):
    """The binary's data symbols with a size, in address order, each named
    NAME, or NAME@FILE for the two statics of the same name (nm -l)."""
    symbols = []
    for line in run(["nm", "-n", "-S", "-l", binary]).stdout.splitlines():
        fields = line.split()
        if len(fields) >= 4 and fields[2] in "dDbB":
            name = fields[3]
            if name == "same_name" and len(fields) > 4:
                name += "@" + os.path.basename(fields[4].rsplit(":", 1)[0])
            symbols.append(name)
    return symbols


def adjacent(symbols, names):
    """Do NAMES follow each other in SYMBOLS, nothing between them?"""
    where = sorted(symbols.index(name) for name in names if name in symbols)
    return len(where) == len(names) and where[-1] - where[0] == len(names) - 1


def check_hot_cold_globals():
    """Globals end to end: a two-file program whose hot and cold globals
    are declared in alternation is profiled, merged with --binary, and
    rebuilt with use= and -Wl,--sort-section=name: each family's hot
    globals are then adjacent, and its cold ones, although the profiled
    build interleaves them; statics of the same name in two files are
    told apart; the program prints the same; memprof show --globals
    ranks and flags them."""
    work = os.path.join(WORK, "globals")
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    profiled = os.path.join(work, "profiled")
    built = compile_globals(profiled, [], pkg_config("memprof", "--libs"))
    if not results.check(built.returncode == 0, "globals: builds with the plugin",
                         built.stderr[-500:]):
        return
    first = execute(profiled, "profile_file=run.profraw")
    raw = os.path.join(work, "run.profraw")
    mprof = os.path.join(work, "run.mprof")
    merged = run([MEMPROF, "merge", "--quiet", "--binary=" + profiled, "-o", mprof, raw])
    if not results.check(first.returncode == 0 and merged.returncode == 0,
                         "globals: profiled and merged", first.stderr + merged.stderr):
        return

    # memprof show --globals, JSON and text.
    shown = run([MEMPROF, "show", "--globals", "--format=json", mprof])
    listed = {}
    if results.check(shown.returncode == 0, "globals: memprof show --globals --format=json",
                     shown.stderr):
        for entry in json.loads(shown.stdout)["globals"]:
            key = entry["name"]
            if key == "same_name":
                key += "@" + entry["file"]
            listed[key] = entry
    hot = [name for names in GLOBALS_HOT.values() for name in names]
    cold = [name for names in GLOBALS_COLD.values() for name in names]
    results.check(all(name in listed and listed[name]["density"] >= 1
                      and not listed[name]["never_accessed"] for name in hot),
                  "globals: show --globals: every hot global at 1 access per byte or more",
                  str({name: listed.get(name) for name in hot}))
    results.check(all(name in listed and listed[name]["accesses"] == 0
                      and listed[name]["never_accessed"] for name in cold),
                  "globals: show --globals: every cold global never accessed",
                  str({name: listed.get(name) for name in cold}))
    ranks = [listed[name]["rank"] for name in hot + cold if name in listed]
    results.check(len(ranks) == len(hot + cold)
                  and max(ranks[:len(hot)]) < min(ranks[len(hot):]),
                  "globals: show --globals ranks the hot globals above the cold ones",
                  str(ranks))
    text = run([MEMPROF, "show", "--globals", "--top=0", mprof]).stdout
    flagged = [line for line in text.splitlines() if "never accessed" in line]
    results.check(all(any(re.search(r"\b%s\b" % name.split("@")[0], line) for line in flagged)
                      for name in cold)
                  and not any(re.search(r"\b%s\b" % name, line) for line in flagged
                              for name in hot if "@" not in name),
                  "globals: show --globals (text) flags exactly the cold ones as never accessed",
                  text)

    # The use build, linked with --sort-section=name.
    dumps = os.path.join(work, "dump")
    os.makedirs(dumps)
    used = os.path.join(dumps, "used")
    built = compile_globals(used, ["-fplugin-arg-memprof-use=" + mprof,
                                   "-fplugin-arg-memprof-dump", "-dumpbase", "",
                                   "-Wl,--sort-section=name"], pkg_config("memprof-hint", "--libs"))
    if not results.check(built.returncode == 0, "globals: rebuilt with use= and "
                         "-Wl,--sort-section=name", built.stderr[-800:]):
        return
    summary = re.findall(r"globals: (\d+) hot, (\d+) cold", built.stderr)
    results.check(sorted(summary) == sorted([("5", "4"), ("2", "3")]),
                  "globals: the summary lines count 5 hot and 4 cold globals in the first "
                  "file, 2 and 3 in the second", built.stderr)
    before = sized_data_symbols(profiled)
    after = sized_data_symbols(used)
    for family in ("bss", "data"):
        results.check(not adjacent(before, GLOBALS_HOT[family])
                      and not adjacent(before, GLOBALS_COLD[family]),
                      f"globals: .{family}: the profiled build interleaves hot and cold "
                      "globals, as declared", str(before))
        results.check(adjacent(after, GLOBALS_HOT[family]),
                      f"globals: .{family}: the hot globals are adjacent (nm -n)", str(after))
        results.check(adjacent(after, GLOBALS_COLD[family]),
                      f"globals: .{family}: the cold globals are adjacent (nm -n)", str(after))
    plain = os.path.join(work, "plain")
    subprocess.run(["gcc", "-O2", "-g", *GLOBALS_SOURCES, "-o", plain], check=True)
    before_run = execute(plain)
    after_run = execute(used)
    results.check(after_run.stdout == before_run.stdout
                  and after_run.returncode == before_run.returncode,
                  "globals: the rebuilt program prints the same and exits the same",
                  f"{after_run.stdout!r} vs {before_run.stdout!r}")


# ---- Thresholds that fit the run ----

RUN_LENGTH_SOURCE = os.path.join(HERE, "run_length.c")
# make_table, make_window, make_buffer by their malloc's line.
RUN_LENGTH_EXPECTED = {"make_table": "cold", "make_window": "hot", "make_buffer": "notcold"}


def run_length_classes(work, profiled, rounds, thresholds):
    """The class of each allocation function's malloc in the remarks of a
    use build from a profile of ROUNDS rounds."""
    raw = os.path.join(work, f"run{rounds}.profraw")
    mprof = os.path.join(work, f"run{rounds}.mprof")
    if not os.path.exists(mprof):
        ran = execute(profiled, f"profile_file={raw}", [str(rounds)])
        merged = run([MEMPROF, "merge", "--quiet", "--binary=" + profiled, "-o", mprof, raw])
        if ran.returncode != 0 or merged.returncode != 0:
            return None, ran.stderr + merged.stderr
    built = compile_program(RUN_LENGTH_SOURCE, os.path.join(work, "used"), "-O2",
                            ["-fplugin-arg-memprof-use=" + mprof,
                             "-fplugin-arg-memprof-remarks", *thresholds, "-c"], [])
    lines = open(RUN_LENGTH_SOURCE).read().splitlines()
    classes = {}
    for match in re.finditer(r":(\d+):\d+: note: memprof: .malloc. call: (\w+)", built.stderr):
        # The function whose body holds the call: the nearest "make_" above.
        line = int(match.group(1))
        owner = next((text.split()[0].split("(")[0] for text in reversed(lines[:line])
                      if text.startswith("make_")), None)
        classes[owner] = match.group(2)
    return classes, built.stderr


def check_run_length():
    """The same program profiled for 10,000 and for 100,000 rounds (about
    0.1 s and 1 s): with the default thresholds, relative to the run, its
    table is cold, its window hot and its buffers neither in both; with
    LLVM's absolute ones (thresholds=llvm) the table is cold in neither
    (200 s is out of reach)."""
    work = os.path.join(WORK, "run-length")
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    profiled = os.path.join(work, "profiled")
    built = compile_program(RUN_LENGTH_SOURCE, profiled, "-O2", [],
                            pkg_config("memprof", "--libs"))
    if not results.check(built.returncode == 0, "run length: builds with the plugin",
                         built.stderr[-500:]):
        return
    for rounds in (10000, 100000):
        classes, stderr = run_length_classes(work, profiled, rounds, [])
        results.check(classes == RUN_LENGTH_EXPECTED,
                      f"run length: {rounds} rounds, thresholds relative to the run: "
                      "table cold, window hot, buffer notcold", f"{classes}\n{stderr[-1500:]}")
        buffer_line = next(number for number, text
                           in enumerate(open(RUN_LENGTH_SOURCE), 1) if "malloc (BUFFER" in text)
        buffers = re.search(rf":{buffer_line}:\d+: note: memprof: .malloc. call: \w+ "
                            r"\(\d+ contexts?, (\d+) allocations", stderr)
        results.check(buffers is not None and int(buffers.group(1)) == rounds,
                      f"run length: the profile of {rounds} rounds has {rounds} buffers",
                      stderr[-1500:])
        results.check(re.search(r"thresholds for this profile: run of \d+ ms", stderr)
                      is not None, f"run length: {rounds} rounds: a remark gives the "
                      "thresholds fitted to the run", stderr[-800:])
        classes, stderr = run_length_classes(work, profiled, rounds,
                                             ["-fplugin-arg-memprof-thresholds=llvm"])
        results.check(classes is not None and classes.get("make_table") == "notcold",
                      f"run length: {rounds} rounds, LLVM's thresholds: the table is not "
                      "cold (its lifetime is far below 200 s)", f"{classes}\n{stderr[-800:]}")


def compile_globals(output, flags, libraries):
    command = ["gcc", "-O2", "-g", "-fplugin=" + pkg_config("memprof", "--variable=plugin")[0],
               "-I" + os.path.join(TOP, "include"), *flags, *GLOBALS_SOURCES, "-o", output,
               *libraries]
    return run(command, cwd=os.path.dirname(output))


def main():
    if not os.path.exists(MEMPROF):
        sys.exit(f"feedback: build the tree first: {MEMPROF} is missing")
    shutil.rmtree(WORK, ignore_errors=True)
    os.makedirs(WORK)
    any_rewritten = 0
    for source, extra in PROGRAMS:
        for opt in ("-O0", "-O2"):
            outcome = check_program(source, extra, opt)
            if outcome:
                any_rewritten += outcome[0]
    results.check(any_rewritten > 0, "the programs had hot or cold sites to rewrite")
    check_instrumented_and_rewritten()
    check_hot_cold_globals()
    check_run_length()
    return results.finish()


if __name__ == "__main__":
    sys.exit(main())
