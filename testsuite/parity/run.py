#!/usr/bin/env python3
"""Parity with LLVM's MemProf runtime (issue 21), on real programs: C23's
sized frees, profiles written on abort and fatal signals, the log after
memprof_reset, options compiled into the program (a function of the
program's, the plugin's default-options, clang's
__memprof_profile_filename), dump_at_exit, malloc and free hooks, and
LLVM's names of the API.  Each program's output and exit status are
compared with what the program does without the runtime where it can be
built without it.

Prints one line per check and ends with `parity: N passed, N failed`."""

import argparse
import importlib.util
import os
import re
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(TOP, "testsuite", "lib"))
from report import Report  # noqa: E402

# The runtime suite's helpers (building, reading profiles and side files),
# loaded under a name of their own: both drivers are called run.py.
_spec = importlib.util.spec_from_file_location(
    "runtime_tests", os.path.join(TOP, "testsuite", "runtime", "run.py"))
runtime_tests = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(runtime_tests)

args = None
results = Report("parity")
# LLVM's headers as a program written for clang includes them; GCC's own
# sanitizer/common_interface_defs.h, found first, lacks SANITIZER_CDECL.
LLVM_HEADERS = ["-idirafter", "/usr/lib/llvm-19/lib/clang/19/include", "-DSANITIZER_CDECL="]


def plugin():
    return "-fplugin=" + os.path.join(TOP, "gcc-plugin", "memprof.so")


def build(label, sources, directory, output, extra=(), static=False, runtime=True,
          compiler=None):
    """Build SOURCES (file names in this folder) into DIRECTORY/OUTPUT, with
    the plugin and the runtime unless RUNTIME is false, by COMPILER (the C
    compiler unless given).  The binary's path, or None after a failed
    check."""
    command = [compiler or args.cc, "-g", "-O1", "-fno-optimize-sibling-calls"]
    libs = []
    if runtime:
        cflags, libs = runtime_tests.flags(static)
        command += [plugin(), *cflags]
    command += extra
    command += [os.path.join(HERE, source) for source in sources]
    command += ["-o", os.path.join(directory, output), *libs, "-lpthread"]
    result = subprocess.run(command, capture_output=True, text=True)
    results.check(result.returncode == 0, f"{label}: builds", result.stderr)
    return os.path.join(directory, output) if result.returncode == 0 else None


def workdir(work, name):
    directory = os.path.join(work, name)
    os.makedirs(directory)
    return directory


def execute(binary, directory, options, *arguments):
    env = dict(os.environ, MEMPROF_OPTIONS=options)
    return subprocess.run([binary, *arguments], cwd=directory, env=env, capture_output=True,
                          text=True)


def same_behaviour(label, run, reference):
    results.check(run.returncode == reference.returncode and run.stdout == reference.stdout,
                  f"{label}: same output and exit status as without the runtime "
                  f"({reference.returncode})",
                  f"{run.returncode} {run.stdout!r} vs {reference.returncode} "
                  f"{reference.stdout!r}; stderr {run.stderr[-600:]!r}")


def by_function(label, profile, binary):
    """{leaf function: (side-file record, MIB)} of PROFILE, or None."""
    return runtime_tests.side_file_by_function(label, profile, binary, "exit")


# ---- 2. free_sized, free_aligned_sized ----

def test_sized_free(work):
    directory = workdir(work, "sized")
    binary = build("sized_free", ["sized_free.c"], directory, "sized_free")
    reference = build("sized_free reference", ["sized_free.c"], directory, "reference",
                      extra=["-DWITHOUT_RUNTIME"], runtime=False)
    if binary is None or reference is None:
        return
    expected = subprocess.run([reference], capture_output=True, text=True)
    run = execute(binary, directory, "profile_file=s.prof")
    same_behaviour("free_sized", run, expected)
    results.check("usable sizes wrong: 0" in run.stdout and run.stderr == "",
                  "malloc_usable_size covers the request for malloc, calloc, realloc, "
                  "aligned_alloc, memalign, posix_memalign, valloc and pvalloc; nothing "
                  "on the log", run.stdout + run.stderr)
    found = by_function("free_sized", os.path.join(directory, "s.prof"), binary)
    if found is not None:
        for function, count in (("sized", 3), ("counted", 1), ("aligned", 1), ("grown", 1)):
            record, mib = found.get(function, ({}, {}))
            results.check(mib.get("AllocCount") == count and record.get("live_allocations") == 0,
                          f"free_sized: the {count} block(s) of {function} are recorded and "
                          "freed (none live at exit)", f"{mib} {record}")
    wrong = execute(binary, directory, "profile_file=w.prof", "wrong")
    same_behaviour("free_sized with a wrong size",
                   wrong, subprocess.run([reference, "wrong"], capture_output=True, text=True))
    lines = wrong.stderr.splitlines()
    results.check(len(lines) == 2 and re.search(r"free_sized \(0x[0-9a-f]+, 99\)", lines[0])
                  and "has 100 bytes" in lines[0]
                  and re.search(r"free_aligned_sized \(0x[0-9a-f]+, 4096, 128\)", lines[1])
                  and "not aligned" in lines[1],
                  "a wrong size and a wrong alignment: one line each, once", wrong.stderr)
    found = by_function("free_sized wrong", os.path.join(directory, "w.prof"), binary)
    if found is not None:
        for function in ("wrong_size", "wrong_alignment"):
            record, mib = found.get(function, ({}, {}))
            results.check(mib.get("AllocCount") == 2 and record.get("live_allocations") == 0,
                          f"{function}: the blocks are freed all the same", f"{mib} {record}")


# ---- 3. abort and fatal signals ----

def test_crash(work):
    directory = workdir(work, "crash")
    binary = build("crash", ["crash.c"], directory, "crash")
    reference = build("crash reference", ["crash.c"], directory, "reference", runtime=False)
    static = build("crash static", ["crash.c"], directory, "crash_static", static=True)
    if binary is None or reference is None:
        return
    for mode, options in (("abort", "handle_abort=1"), ("segv", "handle_fatal_signals=1"),
                          ("threads", "handle_abort=1")):
        for program, kind in ((binary, "shared"), (static, "static")):
            if program is None or (mode == "threads" and kind == "static"):
                continue
            label = f"{mode} ({options}, {kind})"
            profile = os.path.join(directory, f"{mode}.{kind}.prof")
            run = execute(program, directory, f"{options}:profile_file={profile}", mode)
            same_behaviour(label, run,
                           subprocess.run([reference, mode], capture_output=True, text=True))
            if not results.check(os.path.isfile(profile), f"{label}: the profile is written",
                                 run.stderr):
                continue
            sites = runtime_tests.sites_by_function(profile, program)
            results.check(sites is not None and sites.get("churn", {}).get("AllocCount") == 3
                          and sites.get("keep", {}).get("AllocCount") == 1
                          and sites.get("keep", {}).get("TotalAccessCount") == 5,
                          f"{label}: llvm-profdata-19 reads it: churn's 3 blocks, keep's live "
                          "block with its 5 accesses", str(sites))
            found = runtime_tests.side_file_by_function(label, profile, program, "signal")
            if found is not None:
                results.check(found.get("keep", ({}, {}))[0].get("live_allocations") == 1,
                              f"{label}: the side file says keep's block is live",
                              str(found.get("keep")))
            results.check(not [f for f in os.listdir(directory) if ".tmp." in f],
                          f"{label}: no temporary file left", str(os.listdir(directory)))
    for mode, options, why in (("abort", "", "handle_abort=0 (the default)"),
                               ("segv", "handle_abort=1", "handle_abort=1 alone"),
                               ("own-handler", "handle_abort=1",
                                "a SIGABRT handler of the program's own")):
        profile = os.path.join(directory, f"none.{mode}.prof")
        run = execute(binary, directory, f"{options}:profile_file={profile}", mode)
        same_behaviour(f"{mode} with {why}", run,
                       subprocess.run([reference, mode], capture_output=True, text=True))
        results.check(not os.path.exists(profile),
                      f"{mode} with {why}: no profile is written", run.stderr)
    run = execute(binary, directory, f"handle_abort=1:handle_fatal_signals=1:"
                  f"profile_file={directory}/exit.prof", "exit")
    results.check(run.returncode == 0 and os.path.isfile(os.path.join(directory, "exit.prof")),
                  "handle_abort=1: a normal exit still writes its profile", run.stderr)


# ---- 4. memprof_reset and the log ----

def test_reset_log(work):
    directory = workdir(work, "reset_log")
    binary = build("reset_log", ["reset_log.c"], directory, "reset_log")
    if binary is None:
        return
    log = os.path.join(directory, "text.log")
    run = execute(binary, directory, f"print_text=1:log_path={log}:"
                  f"profile_file={directory}/r.%n", "rename")
    old = open(log + ".1").read() if os.path.exists(log + ".1") else ""
    new = open(log).read() if os.path.exists(log) else ""
    results.check(run.returncode == 0 and old.count("Recorded MIBs") == 1
                  and "alloc_count 2," in old,
                  "reset: the dump's text is in the log renamed after it", old + run.stderr)
    results.check(new.count("Recorded MIBs") == 1 and "alloc_count 1," in new
                  and "alloc_count 2," not in new,
                  "reset: the exit's text is in a new log at log_path, not in the renamed one",
                  new)
    other = os.path.join(directory, "other.log")
    log = os.path.join(directory, "switch.log")
    run = execute(binary, directory, f"print_text=1:log_path={log}:"
                  f"profile_file={directory}/s.%n", "switch", other)
    text = open(other).read() if os.path.exists(other) else ""
    results.check(run.returncode == 0 and "alloc_count 1," in text
                  and not (os.path.exists(log) and os.path.getsize(log)),
                  "the exit's text follows log_path as memprof_set_option left it",
                  text + run.stderr)
    log = os.path.join(directory, "quiet.log")
    run = execute(binary, directory, f"print_text=1:log_path={log}:"
                  f"profile_file={directory}/q.%n", "quiet")
    results.check(run.returncode == 0 and not (os.path.exists(log) and os.path.getsize(log))
                  and os.path.exists(os.path.join(directory, "q.0")),
                  "print_text=0 set before exit: the profile, and no text", run.stderr)


# ---- 5. options compiled into the program ----

def test_default_options(work):
    directory = workdir(work, "default_options")
    sources = ["default_options.c", "default_options_other.c"]
    embed = "-fplugin-arg-memprof-default-options=max_stack_depth=9:dump_interval_s=5000"
    program = '-DPROGRAM_DEFAULTS="max_stack_depth=7:sample_interval=3"'
    default = "profile_file=memprof.profraw.%p"
    cases = (
        ("no compiled options", [], "", False,
         f"{default} max_stack_depth=30 dump_interval_s=0 sample_interval=0"),
        ("the program's __memprof_default_options", [program], "", False,
         f"{default} max_stack_depth=7 dump_interval_s=0 sample_interval=3"),
        ("the plugin's default-options", [embed], "", False,
         f"{default} max_stack_depth=9 dump_interval_s=5000 sample_interval=0"),
        ("the plugin's under -fvisibility=hidden", [embed, "-fvisibility=hidden"], "", False,
         f"{default} max_stack_depth=9 dump_interval_s=5000 sample_interval=0"),
        ("both: the program's overrides the plugin's key by key", [embed, program], "", False,
         f"{default} max_stack_depth=7 dump_interval_s=5000 sample_interval=3"),
        ("both, static", [embed, program], "", True,
         f"{default} max_stack_depth=7 dump_interval_s=5000 sample_interval=3"),
        ("both, then MEMPROF_OPTIONS overrides them", [embed, program],
         "max_stack_depth=4:sample_interval=0", False,
         f"{default} max_stack_depth=4 dump_interval_s=5000 sample_interval=0"),
        ("clang's __memprof_profile_filename", ['-DPROFILE_FILENAME="fromvar.prof"'], "", False,
         "profile_file=fromvar.prof max_stack_depth=30 dump_interval_s=0 sample_interval=0"),
        ("__memprof_profile_filename, static", ['-DPROFILE_FILENAME="fromvar.prof"'], "", True,
         "profile_file=fromvar.prof max_stack_depth=30 dump_interval_s=0 sample_interval=0"),
        ("__memprof_profile_filename under MEMPROF_OPTIONS", ['-DPROFILE_FILENAME="fromvar.prof"'],
         "profile_file=env.prof", False,
         "profile_file=env.prof max_stack_depth=30 dump_interval_s=0 sample_interval=0"),
    )
    for number, (label, extra, options, static, expected) in enumerate(cases):
        binary = build(label, sources, directory, f"d{number}", extra=extra, static=static)
        if binary is None:
            continue
        run = execute(binary, directory, options)
        results.check(run.returncode == 0 and run.stdout.strip() == expected and run.stderr == "",
                      f"{label}: {expected}", f"{run.stdout!r} {run.stderr!r}")
    profile = os.path.join(directory, "fromvar.prof")
    results.check(os.path.isfile(profile), "__memprof_profile_filename: the profile is written there")
    bad = build("a bad compiled option", sources, directory, "bad",
                extra=['-DPROGRAM_DEFAULTS="bogus=1:max_stack_depth=6"',
                       "-fplugin-arg-memprof-default-options=verbosity=9"])
    if bad is not None:
        run = execute(bad, directory, "")
        lines = run.stderr.splitlines()
        results.check(run.returncode == 0 and "max_stack_depth=6" in run.stdout and len(lines) == 2
                      and "-fplugin-arg-memprof-default-options" in lines[0]
                      and "verbosity" in lines[0]
                      and "__memprof_default_options()" in lines[1] and "bogus" in lines[1],
                      "bad compiled options: one line each naming where it came from; the "
                      "good ones apply", run.stdout + run.stderr)
    cxx = build("C++ with default-options", ["default_options_other.c"], directory, "cxx.o",
                extra=["-x", "c++", "-c", embed])
    if cxx is not None:
        symbols = subprocess.run(["nm", cxx], capture_output=True, text=True).stdout
        results.check(re.search(r"^[0-9a-f]+ V __memprof_default_options_str$", symbols, re.M)
                      is not None, "C++: the string is a weak, unmangled symbol", symbols)
    missing = subprocess.run([args.cc, plugin(), "-fplugin-arg-memprof-default-options", "-c",
                              os.path.join(HERE, "default_options_other.c"), "-o",
                              os.path.join(directory, "missing.o")],
                             capture_output=True, text=True)
    results.check(missing.returncode != 0 and "needs the options" in missing.stderr,
                  "default-options without a value is an error that says what to give",
                  missing.stderr)
    helped = subprocess.run([args.cc, plugin(), "-v", "--help"], capture_output=True, text=True)
    results.check("-fplugin-arg-memprof-default-options=OPTIONS" in helped.stdout + helped.stderr,
                  "gcc -fplugin=memprof.so -v --help lists default-options")


# ---- 6. dump_at_exit ----

def test_dump_at_exit(work):
    directory = workdir(work, "dump_at_exit")
    binary = build("dump_at_exit", ["dump_at_exit.c"], directory, "dump_at_exit")
    if binary is None:
        return
    for value, files, texts in (("0", ["d0.0", "d0.0.extra"], 1),
                                ("1", ["d1.0", "d1.0.extra", "d1.1", "d1.1.extra"], 2)):
        run = execute(binary, directory, f"dump_at_exit={value}:print_text=1:"
                      f"profile_file={directory}/d{value}.%n")
        written = sorted(f for f in os.listdir(directory) if f.startswith(f"d{value}."))
        results.check(run.returncode == 0 and run.stdout == "dump 0\n" and written == files,
                      f"dump_at_exit={value}: the profiles written are {files}",
                      f"{written} {run.stderr[-500:]}")
        results.check(run.stderr.count("Recorded MIBs") == texts,
                      f"dump_at_exit={value}, print_text=1: {texts} text dump(s)",
                      run.stderr[-1500:])
    sites = runtime_tests.sites_by_function(os.path.join(directory, "d0.0"), binary)
    results.check(sites is not None and sites.get("churn", {}).get("AllocCount") == 3,
                  "dump_at_exit=0: the program's dump holds its 3 allocations", str(sites))


# ---- 7. malloc and free hooks ----

def test_hooks(work):
    directory = workdir(work, "hooks")
    for named, installed in ((False, 5), (True, 5)):
        label = "hooks" + (" and named hooks" if named else "")
        binary = build(label, ["hooks.c"], directory, "named" if named else "hooks",
                       extra=LLVM_HEADERS + (["-DNAMED_HOOKS"] if named else []))
        if binary is None:
            continue
        run = execute(binary, directory, "write_profile=0")
        expected = (f"installed {installed} mallocs 6 frees 6 bytes "
                    f"{10 + 100 + 32 + 128 + 48 + 12345} mismatches 0\n")
        if not named:
            # The always-on mode: blocks that sampling leaves out are
            # glibc's, and the hooks see them as they see the others.
            sampled = execute(binary, directory, "write_profile=0:sample_interval=524288")
            results.check(sampled.returncode == 0 and sampled.stdout == expected,
                          "hooks, sample_interval=524288: every allocation and free exactly "
                          "once, sampled or not", f"{sampled.stdout!r} {sampled.stderr!r}")
        if named:
            # The named hooks also see the allocations made before the
            # installed ones were, and printf's buffer.
            match = re.search(r"named mallocs (\d+) frees (\d+)", run.stdout)
            results.check(match is not None and int(match.group(1)) >= 7
                          and int(match.group(2)) >= 7,
                          "named hooks: __sanitizer_malloc_hook and __sanitizer_free_hook "
                          "see every allocation and free", run.stdout)
            expected += match.group(0) + "\n" if match else ""
        results.check(run.returncode == 0 and run.stdout == expected,
                      f"{label}: every allocation and free exactly once, with its pointer "
                      "and size, realloc as both; none twice from a hook that allocates",
                      f"{run.stdout!r} {run.stderr!r}")
    binary = build("hooks in C++", ["hooks_new.cc"], directory, "hooks_new", extra=LLVM_HEADERS,
                   compiler=args.cxx)
    if binary is not None:
        run = execute(binary, directory, "write_profile=0")
        results.check(run.returncode == 0 and run.stdout == "mallocs 4 frees 4 bytes 176\n",
                      "hooks in C++: new and delete (plain, array, aligned, nothrow, sized) "
                      "each once, with the size asked", f"{run.stdout!r} {run.stderr!r}")


# ---- 8. LLVM's names ----

def test_llvm_names(work):
    directory = workdir(work, "llvm_names")
    binary = build("llvm_names (LLVM's header)", ["llvm_names.c"], directory, "llvm_names",
                   extra=LLVM_HEADERS)
    if binary is None:
        return
    run = execute(binary, directory, f"profile_file={directory}/n.%n")
    results.check(run.returncode == 0 and run.stdout == "llvm names: dump 0\n",
                  "__memprof_profile_dump returns 0", run.stdout + run.stderr)
    first = runtime_tests.sites_by_function(os.path.join(directory, "n.0"), binary)
    last = runtime_tests.sites_by_function(os.path.join(directory, "n.1"), binary)
    results.check(first is not None and first.get("churn", {}).get("AllocCount") == 3,
                  "__memprof_profile_dump: its profile holds the 3 allocations", str(first))
    results.check(last is not None and last.get("churn", {}).get("AllocCount") == 2,
                  "__memprof_profile_reset: the exit's profile holds only the 2 made after it",
                  str(last))
    exported = subprocess.run(["nm", "-D", "--defined-only",
                               os.path.join(TOP, "runtime", "libmemprof.so")],
                              capture_output=True, text=True).stdout.split()
    for name in ("__memprof_profile_dump", "__memprof_profile_reset",
                 "__memprof_profile_filename", "__memprof_default_options",
                 "__sanitizer_install_malloc_and_free_hooks", "free_sized",
                 "free_aligned_sized"):
        results.check(name in exported, f"libmemprof.so exports {name}")


def main():
    global args
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--llvm-profdata", default="llvm-profdata-19")
    parser.add_argument("--cc", default="gcc")
    parser.add_argument("--cxx", default="g++")
    args = parser.parse_args()
    runtime_tests.args = args
    runtime_tests.results = results
    work = os.path.join(HERE, "work")
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    test_sized_free(work)
    test_crash(work)
    test_reset_log(work)
    test_default_options(work)
    test_dump_at_exit(work)
    test_hooks(work)
    test_llvm_names(work)
    return results.finish()


if __name__ == "__main__":
    sys.exit(main())
