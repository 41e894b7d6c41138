#!/usr/bin/env python3
"""Allocation call stacks as the runtime captures them, on real programs
built with the plugin at -O0 and -O2:

- recursion folding (fold_recursion, docs/profile-format.md): recursion.c
  (direct and mutual recursion) gives a bounded number of contexts folded
  and one per recursion path unfolded; the totals of allocations and
  accesses are the same either way, and its own allocations equal the
  count the program prints; no folded context has two physical frames of
  one function, each shows the fold marker; llvm-profdata-19 reads and
  merges the folded profile;
- unwinder=fast (frame pointers where verified, libunwind elsewhere, the
  tail cache) gives every allocation the call stack a full unwind
  (unwinder=libunwind) gives: on recursion.c, and on callbacks.c, whose
  allocations are made in callbacks from code without frame pointers
  (qsort's comparator, a shared library built with -fomit-frame-pointer,
  threads), built with the plugin and without it at -fomit-frame-pointer;
  and it does take the fast path on recursion.c;
- the C library's frames without frame pointers (glibc_alloc.c:
  allocations inside strdup, asprintf and getline at every depth of a
  recursion) are stepped by their learnt rule: the same contexts as a
  full unwind (both ways above), fewer than 1% of the stacks unwound in
  full, and a bounded number of libunwind steps;
- the thread's last chain (runtime/stack.c) on reentry.c: functions
  returned from and called again at the same depth from another caller
  (the same frame addresses and return addresses near the allocation,
  another return address further out) get the full unwind's stacks and
  the program's own counts, and most stacks do join the chain; the same
  at a depth of 2 and of 100 (the thread's last folded walk; the chain
  with fold_recursion=0);
- verify_contexts=1: every context the fast unwinder and the thread's
  context cache give is the one a full unwind gives, on callbacks.c,
  recursion.c and a real program (libiberty's C++ demangler);
- the capture starts at the frame of the entry point the program called
  (entry_points.c: each allocating entry point of the malloc family from
  its own function): the full unwind's stacks, each function's
  allocations as the program counted them;
- a return address whose frame-pointer step turns wrong (changed_step.c,
  hand-written assembly) is stepped wrongly only until the first check
  against a full unwind, never after: no cache of verdicts, the thread's
  hot frames included, keeps it;
- the clock (CLOCK_MONOTONIC through the TSC, runtime/clock.c) measures
  the lifetimes of blocks held for known times (lifetime.c) to the
  millisecond of a clock_gettime measure, within the scheduler's slack;
- the program's output and exit status are those of the build without
  the runtime, whatever the options.

Prints one line per check and ends with `stacks: N passed, N failed`."""

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
PLUGIN = os.path.join(TOP, "gcc-plugin", "memprof.so")
FOLD_MARKER = "[recursion folded]"
# recursion.c's depth: 2^(DEPTH+1) - 1 call stacks per builder unfolded.
DEPTH = 9
# Folded, a context is an allocation call, the physical frames of distinct
# functions around it and markers: a few per allocation call and caller.
FOLDED_CONTEXTS_MAX = 40
# entry_points.c's functions, one an entry point, in the order it prints.
ENTRY_FUNCTIONS = ("by_malloc", "by_calloc", "by_realloc", "by_reallocarray",
                   "by_memalign", "by_aligned_alloc", "by_posix_memalign",
                   "by_valloc", "by_pvalloc")
# glibc_alloc.c: libunwind steps to learn the rules of the frames without
# frame pointers, one per return address (a few dozen), whatever the
# number of allocations.
LEARNING_STEPS_MAX = 64

results = Report("stacks")
args = None


def run(command, **kwargs):
    return subprocess.run(command, capture_output=True, text=True, **kwargs)


def runtime_flags():
    env = dict(os.environ, PKG_CONFIG_PATH=TOP)
    return run(["pkg-config", "--cflags", "--libs", "memprof"], env=env,
               check=True).stdout.split()


def build(source, output, opt, instrumented=True):
    command = [args.cc, opt, "-g", source, "-o", output]
    if instrumented:
        command[1:1] = ["-fplugin=" + PLUGIN]
        command += runtime_flags()
    built = run(command)
    results.check(built.returncode == 0,
                  f"{os.path.basename(output)}: builds", built.stderr[-600:])
    return built.returncode == 0


def profile_of(binary, work, name, options, program_args=()):
    """Run BINARY with MEMPROF_OPTIONS OPTIONS; its result and the
    contexts of its profile (memprof show's JSON records), or None."""
    profile = os.path.join(work, name + ".profraw")
    env = dict(os.environ, MEMPROF_OPTIONS=f"profile_file={profile}:{options}")
    result = run([binary, *program_args], env=env)
    shown = run([MEMPROF, "show", "--format=json", "--top=0", "--no-libraries",
                 "--binary=" + binary, profile])
    if shown.returncode != 0:
        results.check(False, f"{name}: memprof show reads the profile", shown.stderr)
        return result, profile, None
    return result, profile, json.loads(shown.stdout)["records"]


def totals(records):
    return (sum(r["allocs"] for r in records), sum(r["accesses"] for r in records),
            sum(r["bytes"] for r in records))


def physical_functions(record):
    """The function of each physical frame (the last frame of each
    location: the ones inlined into it come before it)."""
    return [frame["function"] for frame in record["frames"] if not frame["inline"]
            and frame["function"]]


def test_folding(work, opt):
    label = f"recursion.c {opt}"
    source = os.path.join(HERE, "recursion.c")
    plain = os.path.join(work, f"plain{opt}")
    binary = os.path.join(work, f"recursion{opt}")
    if not (build(source, plain, opt, instrumented=False) and build(source, binary, opt)):
        return
    depth = [str(DEPTH)]
    expected = run([plain, *depth])
    folded_run, folded_profile, folded = profile_of(binary, work, f"folded{opt}", "", depth)
    whole_run, _, whole = profile_of(binary, work, f"whole{opt}", "fold_recursion=0", depth)
    for name, result in (("folded", folded_run), ("fold_recursion=0", whole_run)):
        results.check(result.stdout == expected.stdout and result.returncode == expected.returncode
                      and result.stderr == "",
                      f"{label} {name}: same output and exit status as without the runtime",
                      f"{result.returncode} {result.stdout!r} {result.stderr[-300:]}")
    if folded is None or whole is None:
        return
    paths = 2 ** (DEPTH + 1) - 1
    results.check(len(folded) <= FOLDED_CONTEXTS_MAX,
                  f"{label}: folded, at most {FOLDED_CONTEXTS_MAX} contexts",
                  f"{len(folded)} contexts")
    results.check(len(whole) >= 2 * paths,
                  f"{label}: unfolded, one context per recursion path (>= {2 * paths})",
                  f"{len(whole)} contexts")
    results.check(totals(folded) == totals(whole) and totals(folded)[1] > 0,
                  f"{label}: allocations, accesses and bytes are the same folded and unfolded",
                  f"folded {totals(folded)}, unfolded {totals(whole)}")
    own = sum(r["allocs"] for r in folded
              if r["frames"] and r["frames"][0]["file"].endswith("recursion.c"))
    printed = int(expected.stdout.split()[1])
    results.check(own == printed,
                  f"{label}: the program's own allocations are the {printed} it counted",
                  f"{own} in the profile")
    repeated = [r for r in folded
                if len(set(physical_functions(r))) != len(physical_functions(r))]
    results.check(not repeated, f"{label}: no folded context has two frames of one function",
                  json.dumps(repeated[:1])[:800])
    # The three rounds' outermost calls are not recursion yet: one
    # allocation per round in those contexts; every other context of the
    # builders has gone round a cycle.
    recursive = [r for r in folded if r["allocs"] > 3 and r["frames"]
                 and r["frames"][0]["function"] in ("build", "build_odd", "new_node")]
    marked = [r for r in recursive if any(f["name"] == FOLD_MARKER for f in r["frames"])]
    results.check(len(recursive) >= 4 and len(marked) == len(recursive),
                  f"{label}: the recursive contexts show the fold marker",
                  f"{len(marked)} of {len(recursive)}")
    results.check(not any(f["name"] == FOLD_MARKER for r in whole for f in r["frames"]),
                  f"{label}: unfolded, no marker")
    show = run([args.llvm_profdata, "show", "--memory", folded_profile,
                "--profiled-binary", binary])
    merged = run([args.llvm_profdata, "merge", folded_profile, "--profiled-binary", binary,
                  "-o", os.path.join(work, f"folded{opt}.memprofdata")])
    results.check(show.returncode == 0 and merged.returncode == 0
                  and "build_odd" in show.stdout,
                  f"{label}: llvm-profdata-19 show --memory and merge accept the folded profile",
                  show.stderr[-300:] + merged.stderr[-300:])


def stacks_of(records):
    """{(frame addresses, leaf first): allocations} of a profile."""
    return {tuple(f["address"] for f in r["frames"]): r["allocs"] for r in records}


def compare_unwinders(label, binary, work, expected, program_args=(), options=""):
    """unwinder=fast and unwinder=libunwind give the same contexts; the
    fast run's log (verbosity=1) is returned."""
    contexts = {}
    log = ""
    for unwinder in ("fast", "libunwind"):
        name = f"{os.path.basename(binary)}-{unwinder}{options.replace(':', '-')}"
        result, _, records = profile_of(binary, work, name,
                                        f"unwinder={unwinder}:verbosity=1{options}",
                                        program_args)
        results.check(result.stdout == expected.stdout
                      and result.returncode == expected.returncode,
                      f"{label} unwinder={unwinder}: same output and exit status as "
                      "without the runtime", f"{result.returncode} {result.stderr[-300:]}")
        if records is None:
            return log
        contexts[unwinder] = stacks_of(records)
        if unwinder == "fast":
            log = result.stderr
    fast, full = contexts["fast"], contexts["libunwind"]
    different = sorted(set(fast.items()) ^ set(full.items()))
    results.check(fast == full and len(full) > 1,
                  f"{label}{options}: unwinder=fast gives every allocation the stack a full "
                  f"unwind gives ({len(full)} contexts)", repr(different[:4])[:800])
    return log


def test_unwinders(work):
    source = os.path.join(HERE, "callbacks.c")
    library = os.path.join(work, "libcallbacks.so")
    built = run([args.cc, "-O2", "-fomit-frame-pointer", "-fPIC", "-shared",
                 os.path.join(HERE, "callbacks_lib.c"), "-o", library])
    if not results.check(built.returncode == 0, "callbacks_lib.c: builds", built.stderr):
        return
    link = ["-L" + work, "-lcallbacks", "-Wl,-rpath," + work, "-lpthread"]
    plain = os.path.join(work, "callbacks-plain")
    if not results.check(run([args.cc, "-O2", source, "-o", plain, *link]).returncode == 0,
                         "callbacks.c: builds without the runtime"):
        return
    expected = run([plain])
    builds = [("plugin-O2", ["-fplugin=" + PLUGIN, "-O2"]),
              ("plugin-O0", ["-fplugin=" + PLUGIN, "-O0"]),
              ("no-plugin-omit-frame-pointer", ["-O2", "-fomit-frame-pointer"])]
    for name, flags in builds:
        binary = os.path.join(work, "callbacks-" + name)
        built = run([args.cc, "-g", *flags, source, "-o", binary, *link, *runtime_flags()])
        if results.check(built.returncode == 0, f"callbacks.c {name}: builds",
                         built.stderr[-500:]):
            compare_unwinders(f"callbacks.c {name}", binary, work, expected,
                              options=":fold_recursion=0")

    source = os.path.join(HERE, "recursion.c")
    binary = os.path.join(work, "recursion-fast")
    plain = os.path.join(work, "recursion-fast-plain")
    if not (build(source, plain, "-O2", instrumented=False) and build(source, binary, "-O2")):
        return
    depth = ["12"]
    expected = run([plain, *depth])
    compare_unwinders("recursion.c -O2", binary, work, expected, depth, ":fold_recursion=0")
    log = compare_unwinders("recursion.c -O2", binary, work, expected, depth)
    allocations = int(expected.stdout.split()[1])
    counts = [int(word) for word in log.split("unwinder=fast:")[-1].split()
              if word.isdigit()][:2] if "unwinder=fast:" in log else []
    results.check(len(counts) == 2 and counts[1] >= allocations // 2
                  and counts[0] < allocations // 100,
                  f"recursion.c -O2: unwinder=fast captures most of the {allocations} stacks "
                  "by frame pointers and the tail cache", log[-300:])


def unwinder_figures(log):
    """(full unwinds, stacks without libunwind, steps by a frame rule,
    libunwind steps to learn the rules) from unwinder=fast's log line, or
    None."""
    found = re.search(r"unwinder=fast: (\d+) full unwinds, at least (\d+) stacks .*?"
                      r"at least (\d+) steps by a frame rule, (\d+) libunwind steps", log)
    return [int(n) for n in found.groups()] if found else None


def unwound_builds(work, source_name, stem, program_args, variants):
    """Builds SOURCE_NAME without the runtime, runs it with PROGRAM_ARGS
    for the expected output, then builds it with the runtime in each of
    VARIANTS ((name, compiler flags)) and compares the unwinders on it
    (fold_recursion=0).  Yields (name, label, binary, expected output,
    the fast unwinder's log) for each build that compiled."""
    source = os.path.join(HERE, source_name)
    plain = os.path.join(work, stem + "-plain")
    if not build(source, plain, "-O2", instrumented=False):
        return
    expected = run([plain, *program_args])
    for name, flags in variants:
        binary = os.path.join(work, f"{stem}-{name}")
        built = run([args.cc, "-g", *flags, source, "-o", binary, *runtime_flags()])
        if not results.check(built.returncode == 0, f"{source_name} {name}: builds",
                             built.stderr[-500:]):
            continue
        label = f"{source_name} {name}"
        log = compare_unwinders(label, binary, work, expected, program_args,
                                ":fold_recursion=0")
        yield name, label, binary, expected, log


def test_glibc_frames(work):
    """glibc_alloc.c allocates inside strdup, asprintf and getline (no
    frame pointers) at every depth of a recursion: unwinder=fast steps
    over those frames by their learnt rule, gives the full unwind's
    contexts, and calls libunwind a bounded number of times."""
    depth = ["40"]
    for name, label, binary, expected, log in unwound_builds(
            work, "glibc_alloc.c", "glibc-alloc", depth,
            (("plugin-O2", ["-fplugin=" + PLUGIN, "-O2"]),
             ("no-plugin-omit-frame-pointer", ["-O2", "-fomit-frame-pointer"]))):
        blocks = int(expected.stdout.split()[1])
        figures = unwinder_figures(log)
        results.check(figures is not None and figures[0] < blocks // 100
                      and figures[2] >= blocks and figures[3] <= LEARNING_STEPS_MAX,
                      f"{label}: of {blocks} allocations inside the C library, fewer than "
                      f"1% fully unwound, each library frame stepped by its rule, at most "
                      f"{LEARNING_STEPS_MAX} libunwind steps to learn the rules",
                      f"{figures} {log[-300:]}")
        verify_log(label, binary, work, expected, depth, cached=False)


def verify_log(label, binary, work, expected, program_args=(), options="", cached=True):
    """verify_contexts=1: every recorded allocation's context, through the
    fast unwinder and the context cache, is the full unwind's; with CACHED,
    most came from the cache."""
    name = f"{os.path.basename(binary)}-verify"
    result, _, records = profile_of(binary, work, name,
                                    f"verify_contexts=1:verbosity=1{options}", program_args)
    results.check(result.stdout == expected.stdout and result.returncode == expected.returncode,
                  f"{label} verify_contexts=1: same output and exit status as without the "
                  "runtime", f"{result.returncode} {result.stderr[-300:]}")
    line = [l for l in result.stderr.splitlines() if "verify_contexts:" in l]
    numbers = [int(w) for w in line[-1].split() if w.isdigit()] if line else []
    recorded = totals(records)[0] if records else -1
    hits = [int(w) for w in result.stderr.split("context cache:")[-1].split()[:3:2]
            if w.isdigit()] if "context cache:" in result.stderr else []
    results.check(len(numbers) == 2 and numbers[1] == 0 and numbers[0] == recorded
                  and len(hits) == 2 and (hits[0] > hits[1] or not cached),
                  f"{label}{options}: each of its {recorded} allocations' contexts"
                  f"{', most of them from the context cache,' if cached else ''} is the one a "
                  "full unwind gives (verify_contexts=1)",
                  "\n".join(line) + " " + result.stderr[-400:])


def test_verify_contexts(work):
    for name in ("callbacks-plugin-O2", "callbacks-no-plugin-omit-frame-pointer"):
        binary = os.path.join(work, name)
        if os.path.exists(binary):
            verify_log(f"callbacks.c {name[10:]}", binary, work,
                       run([os.path.join(work, "callbacks-plain")]))
    binary = os.path.join(work, "recursion-fast")
    if os.path.exists(binary):
        expected = run([os.path.join(work, "recursion-fast-plain"), "12"])
        # Every allocation has a stack of its own: the cache never hits.
        verify_log("recursion.c -O2", binary, work, expected, ["12"], cached=False)
        verify_log("recursion.c -O2", binary, work, expected, ["12"], ":fold_recursion=0",
                   cached=False)
    # A real program: GCC's C++ demangler (libiberty's cp-demangle.c, from
    # Debian's gcc-12-source), a recursive-descent parser that allocates,
    # as make bench runs it, at a small scale.
    sys.path.insert(0, os.path.join(TOP, "bench"))
    from workloads import WORKLOADS, prepare  # noqa: E402
    workload = next(w for w in WORKLOADS if w.name == "libiberty_demangle")
    src = prepare("stacks")
    common = [*workload.compile_flags(src), *workload.sources(src)]
    plain = os.path.join(work, "demangle-plain")
    binary = os.path.join(work, "demangle")
    if not (results.check(run([args.cc, "-O2", "-g", *common, "-o", plain]).returncode == 0,
                          "libiberty_demangle: builds without the runtime")
            and results.check(run([args.cc, "-O2", "-g", "-fplugin=" + PLUGIN, *common,
                                   "-o", binary, *runtime_flags()]).returncode == 0,
                              "libiberty_demangle: builds with the plugin")):
        return
    scale = ["0.02"]
    verify_log("libiberty_demangle", binary, work, run([plain, *scale]), scale)


def reentry_checks(work, depth, stem, suffix, joined_pattern, joined_what,
                   options="verbosity=1"):
    """reentry.c at recursion DEPTH: top_a and top_b, called in turn from
    one loop, each reach the allocation through the same two functions,
    whose frames lie at the same addresses with the same contents every
    time: only the return address in the frame above tells top_a from
    top_b.  unwinder=fast must see it: the full unwind's stacks, the
    allocations under each the ones the program counted, and most stacks
    did join JOINED_WHAT (JOINED_PATTERN in the log of verbosity=1)."""
    for name, label, binary, expected, log in unwound_builds(
            work, "reentry.c", stem, [depth],
            (("plugin-O2", ["-fplugin=" + PLUGIN, "-O2"]),
             ("no-plugin", ["-O2", "-fno-omit-frame-pointer"]))):
        label += suffix
        under_a, under_b = (int(n) for n in expected.stdout.split()[1:3])
        result, _, records = profile_of(binary, work, f"{stem}-{name}-folded",
                                        options, [depth])
        joined = re.search(joined_pattern, result.stderr)
        results.check(joined is not None and int(joined.group(1)) >= (under_a + under_b) // 2,
                      f"{label}: most of its {under_a + under_b} stacks joined {joined_what}",
                      result.stderr[-300:])
        if records is None:
            continue
        by_top = {top: sum(r["allocs"] for r in records
                           if top in [f["function"] for f in r["frames"]])
                  for top in ("top_a", "top_b")}
        results.check(by_top == {"top_a": under_a, "top_b": under_b},
                      f"{label}: {under_a} allocations under top_a and {under_b} under "
                      "top_b, as the program counted", repr(by_top))
        verify_log(label, binary, work, expected, [depth], cached=False)


def test_reentry(work):
    """Deep in a recursion (40 calls), with fold_recursion=0, the stacks
    are captured by the thread's last chain (runtime/stack.c)."""
    reentry_checks(work, "40", "reentry", "", r"at least (\d+) stacks joined",
                   "the thread's last chain", "verbosity=1:fold_recursion=0")


def test_reentry_deep(work):
    """At a recursion depth of 100, with fold_recursion, a deep stack is
    walked and folded from the thread's last folded walk too; its first
    walk has more new frames than the program's stack keeps
    (WALKED_FRESH_ON_STACK, runtime/stack.c), so they go to the thread's
    storage."""
    reentry_checks(work, "100", "reentry-deep", " depth 100",
                   r"at least (\d+) joined the last folded walk",
                   "the thread's last folded walk")


def test_reentry_short(work):
    """At a recursion depth of 2, a short stack is walked and folded in
    one pass from the thread's last folded walk (runtime/stack.c, "The
    last folded walk"): only the words read outwards of the join (middle's
    return address into top_a or top_b) tell the stacks apart."""
    reentry_checks(work, "2", "reentry-short", " depth 2",
                   r"at least (\d+) joined the last folded walk",
                   "the thread's last folded walk")


def test_entry_points(work):
    """entry_points.c: allocations through each entry point of the malloc
    family (malloc, calloc, realloc, reallocarray, memalign, aligned_alloc,
    posix_memalign, valloc, pvalloc), each from its own function, at a
    depth that changes at every allocation.  The capture starts at the
    frame of the entry point called (runtime/stack.c, "The entry's
    frame"): unwinder=fast gives the full unwind's stacks, each function
    has the allocations the program counted through its entry point, few
    stacks are unwound in full, and verify_contexts=1 finds none wrong."""
    depth = ["12"]
    for name, label, binary, expected, log in unwound_builds(
            work, "entry_points.c", "entry-points", depth,
            (("plugin-O2", ["-fplugin=" + PLUGIN, "-O2"]),
             ("no-plugin", ["-O2", "-fno-omit-frame-pointer"]))):
        words = expected.stdout.split()
        made = dict(zip(ENTRY_FUNCTIONS, (int(n) for n in words[1:])))
        figures = unwinder_figures(log)
        blocks = sum(made.values())
        results.check(figures is not None and figures[0] < blocks // 10,
                      f"{label}: fewer than 10% of its {blocks} stacks unwound in full",
                      log[-300:])
        _, _, records = profile_of(binary, work, f"entry-points-{name}-folded", "", depth)
        if records is None:
            continue
        found = {function: sum(r["allocs"] for r in records
                               if physical_functions(r)[:1] == [function])
                 for function in ENTRY_FUNCTIONS}
        results.check(len(made) == len(ENTRY_FUNCTIONS) and found == made,
                      f"{label}: each entry point's allocations under the function that "
                      f"called it, as the program counted ({blocks})",
                      f"{found} != {made}")
        verify_log(label, binary, work, expected, depth, cached=False)


def test_changed_step(work):
    """changed_step.c: a return address whose frame-pointer step is right
    in a first phase and wrong in a second (hand-written assembly).  The
    runtime learns the step, takes it wrongly in the second phase until a
    check against a full unwind (one capture in VERIFY_INTERVAL, 1024)
    finds it wrong, and never after: every cache of verdicts, the
    thread's hot frames (runtime/stack.c) included, must forget it.  With
    verify_contexts=1 the wrong contexts are counted (and replaced): some,
    and at most 1024, of the second phase's; a cache that kept the step
    gives nearly all of them."""
    source = os.path.join(HERE, "changed_step.c")
    binary = os.path.join(work, "changed_step")
    plain = os.path.join(work, "changed_step-plain")
    flags = ["-O2", "-g", "-fno-omit-frame-pointer", source]
    built = run([args.cc, *flags, "-o", binary, *runtime_flags()])
    if not (results.check(built.returncode == 0, "changed_step: builds", built.stderr[-600:])
            and results.check(run([args.cc, *flags, "-o", plain]).returncode == 0,
                              "changed_step: builds without the runtime")):
        return
    rounds = ["20000"]
    expected = run([plain, *rounds])
    result, _, records = profile_of(binary, work, "changed_step",
                                    "verify_contexts=1:verbosity=1", rounds)
    results.check(result.stdout == expected.stdout and result.returncode == expected.returncode,
                  "changed_step: same output and exit status as without the runtime",
                  result.stderr[-300:])
    found = re.search(r"(\d+) contexts checked against a full unwind, (\d+) differed",
                      result.stderr)
    differed = int(found.group(2)) if found else -1
    results.check(0 < differed <= 1024,
                  "changed_step: a frame-pointer step once found wrong is never taken "
                  f"again (1..1024 of 20000 contexts wrong before the check, {differed})",
                  result.stderr[-400:])
    under_caller = sum(r["allocs"] for r in records or []
                       if "caller" in [f["function"] for f in r["frames"]])
    results.check(under_caller == 40000,
                  "changed_step: all 40000 allocations under caller in the profile "
                  f"(verify_contexts keeps the full unwind's contexts), {under_caller}")


def test_clock(work):
    source = os.path.join(HERE, "lifetime.c")
    binary = os.path.join(work, "lifetime")
    if not build(source, binary, "-O2"):
        return
    result, _, records = profile_of(binary, work, "lifetime", "")
    if records is None:
        return
    held = [int(ms) for ms in result.stdout.split()]
    by_size = {r["mib"]["MinSize"]: r["mib"] for r in records if r["allocs"] == 1}
    for size, ms in zip((100, 200, 300), held):
        mib = by_size.get(size)
        lifetime = mib["TotalLifetime"] if mib else None
        # nanosleep sleeps at least MS; a loaded machine may add some.
        results.check(lifetime is not None and ms <= lifetime <= ms + 40,
                      f"lifetime.c: a block held {ms} ms lives {ms}..{ms + 40} ms "
                      "in the profile", f"{lifetime}")


def main():
    global args
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--cc", default="gcc")
    parser.add_argument("--llvm-profdata", default="llvm-profdata-19")
    args = parser.parse_args()
    if not os.path.exists(MEMPROF):
        sys.exit(f"stacks: build the tree first: {MEMPROF} is missing")
    work = os.path.join(HERE, "work")
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    for opt in ("-O0", "-O2"):
        test_folding(work, opt)
    test_unwinders(work)
    test_verify_contexts(work)
    test_glibc_frames(work)
    test_reentry(work)
    test_reentry_short(work)
    test_reentry_deep(work)
    test_entry_points(work)
    test_changed_step(work)
    test_clock(work)
    return results.finish()


if __name__ == "__main__":
    sys.exit(main())
