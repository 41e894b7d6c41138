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


def execute(binary, options=None):
    env = dict(os.environ)
    env.pop("MEMPROF_OPTIONS", None)
    if options is not None:
        env["MEMPROF_OPTIONS"] = options
    return run([binary], cwd=os.path.dirname(binary), env=env)


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
    return results.finish()


if __name__ == "__main__":
    sys.exit(main())
