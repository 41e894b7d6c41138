#!/usr/bin/env python3
"""libmemprof_hint's promises (docs/hint.md), checked on real programs:
the exported names (tcmalloc's mangled operator new overloads among
them), pkg-config's flags, every C entry point's memory and its failures
against jemalloc's and glibc's own functions, the arenas, threads, the
C++ overloads called through tcmalloc's own declarations, the static
library, forwarding under libmemprof (the profile is the unhinted
build's) and when the program's malloc is not jemalloc's, and that the
forwarding calls are tail calls.

Prints one line per check and ends with `hint: N passed, N failed`."""

import argparse
import os
import re
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(TOP, "scripts"))
sys.path.insert(0, os.path.join(TOP, "testsuite", "lib"))
import llvm_memprof_yaml  # noqa: E402
from report import Report  # noqa: E402

LIBRARY = os.path.join(TOP, "runtime", "hint", "libmemprof_hint.so")
ARCHIVE = os.path.join(TOP, "runtime", "hint", "libmemprof_hint.a")
SENTINEL = 1234  # failure_cases.c's errno before each call

# The C entry points (with a hint, and classified by context: the
# plugin's context hints), and tcmalloc's overloads as c++filt shows them.
C_FUNCTIONS = ("malloc", "calloc", "realloc", "aligned_alloc", "posix_memalign", "memalign",
               "strdup", "strndup")
C_NAMES = ["__memprof_hint_" + name for name in C_FUNCTIONS]
CONTEXT_NAMES = ["__memprof_hint_context_" + name for name in C_FUNCTIONS]
CXX_NAMES = {
    "_Znwm12__hot_cold_t": "operator new(unsigned long, __hot_cold_t)",
    "_Znam12__hot_cold_t": "operator new[](unsigned long, __hot_cold_t)",
    "_ZnwmRKSt9nothrow_t12__hot_cold_t":
        "operator new(unsigned long, std::nothrow_t const&, __hot_cold_t)",
    "_ZnamRKSt9nothrow_t12__hot_cold_t":
        "operator new[](unsigned long, std::nothrow_t const&, __hot_cold_t)",
    "_ZnwmSt11align_val_t12__hot_cold_t":
        "operator new(unsigned long, std::align_val_t, __hot_cold_t)",
    "_ZnamSt11align_val_t12__hot_cold_t":
        "operator new[](unsigned long, std::align_val_t, __hot_cold_t)",
    "_ZnwmSt11align_val_tRKSt9nothrow_t12__hot_cold_t":
        "operator new(unsigned long, std::align_val_t, std::nothrow_t const&, __hot_cold_t)",
    "_ZnamSt11align_val_tRKSt9nothrow_t12__hot_cold_t":
        "operator new[](unsigned long, std::align_val_t, std::nothrow_t const&, __hot_cold_t)",
}
# Each entry point's forwarding call, which must be a jump.
FORWARDS = {
    "__memprof_hint_malloc": "malloc", "__memprof_hint_calloc": "calloc",
    "__memprof_hint_realloc": "realloc", "__memprof_hint_aligned_alloc": "aligned_alloc",
    "__memprof_hint_memalign": "memalign", "__memprof_hint_posix_memalign": "posix_memalign",
    "__memprof_hint_strdup": "strdup", "__memprof_hint_strndup": "strndup",
    **{name: re.sub("12__hot_cold_t$", "", name) for name in CXX_NAMES},
    **{name: name.replace("__memprof_hint_context_", "") for name in CONTEXT_NAMES},
}

args = None
results = Report("hint")


def run(command, **keywords):
    return subprocess.run(command, capture_output=True, text=True, **keywords)


def pkg_config(*options):
    env = dict(os.environ, PKG_CONFIG_PATH=TOP)
    result = run(["pkg-config", *options], env=env)
    if result.returncode != 0:
        raise SystemExit(f"pkg-config {' '.join(options)} failed: {result.stderr}")
    return result.stdout.split()


def build(work, source, output, libraries, extra=()):
    """Compile SOURCE (C or C++ by its name) into WORK/OUTPUT, linked with
    LIBRARIES; None (reported) when it does not build."""
    cxx = source.endswith(".cc")
    compiler = [args.cxx, "-std=gnu++17"] if cxx else [args.cc, "-std=gnu11"]
    binary = os.path.join(work, output)
    result = run([*compiler, "-g", "-O1", "-fno-optimize-sibling-calls", "-Wall", "-Wextra",
                  "-pthread", *pkg_config("--cflags", "memprof-hint"), *extra,
                  os.path.join(HERE, source), "-o", binary, *libraries])
    results.check(result.returncode == 0 and "warning" not in result.stderr,
                  f"{output}: builds without warnings", result.stderr)
    return binary if result.returncode == 0 else None


def run_checks(label, binary, arguments=(), env=None, done=None):
    """Run a test program and report each of its PASS/FAIL lines; it must
    end with its `done' line and exit 0."""
    if binary is None:
        return None
    result = run([binary, *arguments], env=env, cwd=os.path.dirname(binary))
    for line in result.stdout.splitlines():
        if line.startswith(("PASS: ", "FAIL: ")):
            results.check(line.startswith("PASS: "), f"{label}: {line[6:]}")
        elif line.startswith("INFO: "):
            print(f"INFO: {label}: {line[6:]}")
    finished = done is None or f"{done} done" in result.stdout
    results.check(result.returncode == 0 and finished,
                  f"{label}: runs to the end and exits 0",
                  f"status {result.returncode}; {result.stderr[-2000:]}")
    return result


def test_exports():
    result = run(["nm", "-D", "--defined-only", LIBRARY])
    names = sorted(line.split()[-1] for line in result.stdout.splitlines())
    results.check(names == sorted(C_NAMES + CONTEXT_NAMES + list(CXX_NAMES) + ["free", "realloc"]),
                  "libmemprof_hint.so exports the 8 C entry points, their 8 "
                  "context-classified forms, tcmalloc's 8 operator new overloads, "
                  "free (which gives hinted blocks to the thread's cache) and realloc "
                  "(which keeps them in their class), nothing else",
                  str(names))
    demangled = run(["c++filt", *CXX_NAMES]).stdout.splitlines()
    for (name, wanted), got in zip(CXX_NAMES.items(), demangled):
        results.check(got == wanted, f"{name} demangles to {wanted}", got)
    needed = run(["readelf", "-d", LIBRARY]).stdout
    results.check("[libjemalloc.so.2]" in needed, "libmemprof_hint.so needs libjemalloc.so.2")


def branches(instruction):
    """{function: targets} of the library's branches matching INSTRUCTION
    (a regular expression from the mnemonic on, the target its group 1)."""
    disassembly = run(["objdump", "-d", "--no-show-raw-insn", LIBRARY]).stdout
    targets, function = {}, None
    for line in disassembly.splitlines():
        match = re.match(r"[0-9a-f]+ <(\S+)>:$", line)
        if match:
            function = match.group(1)
        match = re.search(r"\s" + instruction, line)
        if match and function:
            targets.setdefault(function, set()).add(match.group(1))
    return targets


def test_tail_calls():
    """Forwarding must leave no frame of the shim: a profiler's caller is
    the program's call site."""
    jumps = branches(r"jmp\s+[0-9a-f]+ <(\S+)@plt>")
    for function, target in FORWARDS.items():
        results.check(target in jumps.get(function, ()),
                      f"{function} forwards to {target} by a jump (tail call)",
                      str(sorted(jumps.get(function, ()))))


def test_direct_calls():
    """The context-classified entry points reach the hinted ones directly
    (hidden aliases), not through the PLT, which a definition preloaded
    or in the program would take over."""
    targets = branches(r"(?:jmp|call)\s+[0-9a-f]+ <(__memprof_hint_\w+?(?:@plt)?)>")
    for function in CONTEXT_NAMES:
        hinted = function.replace("_context", "")
        got = targets.get(function, set())
        if hinted == "__memprof_hint_malloc":
            # It allocates inline (hint_allocate), with no call of its own.
            results.check(not any(t.endswith("@plt") for t in got),
                          f"{function} calls no hinted entry point through the PLT", str(got))
            continue
        results.check(hinted in got and not any(t.endswith("@plt") for t in got),
                      f"{function} reaches {hinted} directly, not through the PLT",
                      str(sorted(got)))


def test_pkg_config():
    libs = pkg_config("--libs", "memprof-hint")
    results.check("-lmemprof_hint" in libs and "-ljemalloc" in libs
                  and libs.index("-ljemalloc") > libs.index("-lmemprof_hint")
                  and "-Wl,--push-state,--no-as-needed" in libs,
                  "pkg-config --libs memprof-hint: -lmemprof_hint, then -ljemalloc "
                  "(kept by --no-as-needed)", " ".join(libs))
    cflags = pkg_config("--cflags", "memprof-hint")
    results.check(f"-I{TOP}/include" in cflags,
                  "pkg-config --cflags memprof-hint: the include directory", " ".join(cflags))


def parse_cases(text):
    cases = {}
    for line in text.splitlines():
        match = re.match(r"CASE (\S+) plain=(\S+)/(-?\d+) hinted=(\S+)/(-?\d+) reason=(\d+)$",
                         line)
        if match:
            name, plain, plain_errno, hinted, hinted_errno, reason = match.groups()
            cases[name] = (plain, int(plain_errno), hinted, int(hinted_errno), int(reason))
    return cases


def failed(result):
    return result == "NULL" or (result[0].isdigit() and not result.startswith("0"))


def test_failure_cases(work):
    hinted = build(work, "failure_cases.c", "failure_cases",
                   pkg_config("--libs", "memprof-hint"), ["-fno-builtin"])
    glibc = build(work, "failure_cases.c", "failure_cases_glibc", [],
                  ["-fno-builtin", "-DGLIBC_REFERENCE"])
    if hinted is None or glibc is None:
        return
    reference = parse_cases(run([glibc]).stdout)
    for hint in ("1", "254"):
        output = run([hinted, hint]).stdout
        cases = parse_cases(output)
        results.check(len(cases) >= 60 and "failure_cases done" in output,
                      f"failure cases, hint {hint}: all ran ({len(cases)})", output[-500:])
        for name, (plain, plain_errno, got, got_errno, reason) in cases.items():
            if name.startswith("posix_memalign"):
                # Its result is the error; errno is left alone (jemalloc
                # sometimes sets it on the way).
                ok = got == plain and got_errno in (SENTINEL, plain_errno)
                expected = f"{plain}, errno unchanged"
            elif failed(plain):
                # jemalloc's errno, or where it sets none the reason the
                # case gives (0: none, as realloc (p, 0) freeing p).
                wanted = plain_errno if plain_errno != SENTINEL else reason or SENTINEL
                ok = got == plain and got_errno == wanted
                expected = f"{plain} errno {wanted}"
            else:
                ok = got == plain
                expected = plain
            results.check(ok, f"hint {hint}: {name} gives {expected} as jemalloc's does",
                          f"got {got} errno {got_errno}")
    # Where glibc differs from jemalloc the shim follows jemalloc, the
    # program's allocator: listed for docs/hint.md.
    for name, (plain, plain_errno, _, _, _) in sorted(parse_cases(output).items()):
        if name in reference:
            glibc_result, glibc_errno = reference[name][0], reference[name][1]
            if (glibc_result, glibc_errno) != (plain, plain_errno):
                print(f"INFO: {name}: glibc {glibc_result} errno {glibc_errno}, "
                      f"jemalloc {plain} errno {plain_errno}")


def test_programs(work):
    libs = pkg_config("--libs", "memprof-hint")
    binary = build(work, "entry_points.c", "entry_points", libs)
    for hint in ("1", "254"):
        run_checks(f"entry_points (hint {hint})", binary, [hint], done="entry_points")
    run_checks("arenas", build(work, "arenas.c", "arenas", libs), done="arenas")
    run_checks("threads", build(work, "threads.c", "threads", libs), done="threads")
    run_checks("realloc", build(work, "realloc.c", "realloc", libs), done="realloc")
    run_checks("full_streak", build(work, "full_streak.c", "full_streak", libs),
               done="full_streak")
    run_checks("thread_caches", build(work, "thread_caches.c", "thread_caches", libs),
               done="thread_caches")
    run_checks("refill", build(work, "refill.c", "refill", [*libs, "-ldl"]), done="refill")
    run_checks("early_free", build(work, "early_free.c", "early_free", libs),
               done="early_free")
    binary = build(work, "new_tcmalloc.cc", "new_tcmalloc", libs)
    run_checks("new_tcmalloc", binary, done="new_tcmalloc")
    if binary is not None:
        undefined = run(["nm", "-u", binary]).stdout
        missing = [name for name in CXX_NAMES if name not in undefined]
        results.check(not missing, "a call through tcmalloc's own declarations references "
                      "the 8 names libmemprof_hint defines", str(missing))
    run_checks("new_tcmalloc with memprof/hint.h",
               build(work, "new_tcmalloc.cc", "new_tcmalloc_hint_h", libs, ["-DWITH_HINT_H"]),
               done="new_tcmalloc")
    static = [ARCHIVE, "-Wl,--push-state,--no-as-needed", "-ljemalloc", "-Wl,--pop-state",
              "-ldl"]
    run_checks("entry_points (static library)",
               build(work, "entry_points.c", "entry_points_static", static), ["254"],
               done="entry_points")


def test_context_walk(work):
    """The walk reads its table's depth of frames, at every depth: two
    contexts that part at the walk's last frame are two decisions, two
    that part one frame above it one (context_walk.c)."""
    binary = build(work, "context_walk.c", "context_walk", pkg_config("--libs", "memprof-hint"),
                   ["-O0", "-fno-omit-frame-pointer", "-fno-inline",
                    "-fno-optimize-sibling-calls"])
    result = run_checks("context_walk", binary, env=dict(os.environ, MEMPROF_HINT_DEBUG="1"),
                        done="context_walk")
    if result is None:
        return
    decisions = {}
    for match in re.finditer(r"debug: decision depth (\d+) split (\d+):", result.stderr):
        key = (int(match.group(1)), int(match.group(2)))
        decisions[key] = decisions.get(key, 0) + 1
    wrong = {f"depth {depth} split {split}": decisions.get((depth, split), 0)
             for depth in range(1, 13) for split in (depth - 1, depth)
             if decisions.get((depth, split), 0) != (2 if split < depth else 1)}
    results.check(len(decisions) == 24 and not wrong,
                  "context_walk: at each depth from 1 to 12, contexts that part at the "
                  "walk's last frame are decided apart, those that part above it "
                  "together", f"{len(decisions)} tables decided; wrong counts: {wrong}")
    shallow = len(re.findall(r"debug: decision shallow 12 split 1:", result.stderr))
    results.check(shallow == 2,
                  "context_walk: a walk that ends before its table's depth (a thread's "
                  "shallow stack) decides each context once, and the two that part "
                  "within it apart", f"{shallow} decisions, 2 expected")
    results.check("decision depth 0 " not in result.stderr
                  and "decision depth 13 " not in result.stderr,
                  "context_walk: a table of no valid depth is never decided by its entries")


def profile_sites(binary, profile):
    show = run([args.llvm_profdata, "show", "--memory", profile, "--profiled-binary", binary])
    if show.returncode != 0:
        return None
    return sorted((tuple(frames), mib.get("AllocCount"), mib.get("TotalSize"))
                  for frames, mib in llvm_memprof_yaml.alloc_sites(show.stdout))


def test_forwarding(work):
    memprof = pkg_config("--libs", "memprof")
    hint = pkg_config("--libs", "memprof-hint")
    extra = pkg_config("--cflags", "memprof")
    sites = {}
    for variant, defines in (("hinted", []), ("unhinted", ["-DUNHINTED"])):
        binary = build(work, "forward.cc", f"forward_{variant}", memprof + hint, extra + defines)
        if binary is None:
            return
        env = dict(os.environ, MEMPROF_OPTIONS=f"profile_file={variant}.prof")
        result = run([binary], env=env, cwd=work)
        results.check(result.returncode == 0 and result.stdout == "forward done\n"
                      and result.stderr == "",
                      f"forward ({variant}), libmemprof linked first: runs, silently",
                      result.stdout + result.stderr)
        sites[variant] = profile_sites(binary, os.path.join(work, f"{variant}.prof"))
    results.check(sites["hinted"] is not None and len(sites["hinted"]) >= 17,
                  f"forward: the hinted build's profile has every call site "
                  f"({len(sites['hinted'] or [])})")
    difference = set(sites["hinted"] or []) ^ set(sites["unhinted"] or [])
    results.check(sites["hinted"] == sites["unhinted"],
                  "forward: the hinted build's profile is the unhinted build's (call "
                  "sites, counts, sizes)", str(sorted(difference))[:2000])

    # Linked the other way round, jemalloc's malloc wins over libmemprof's:
    # the shim still forwards, and says why nothing is profiled.  (An
    # instrumented program refers to libmemprof; this one does not, so
    # --no-as-needed keeps it.)
    binary = build(work, "forward.cc", "forward_reversed",
                   hint + ["-Wl,--no-as-needed"] + memprof, extra)
    if binary is not None:
        env = dict(os.environ, MEMPROF_OPTIONS="profile_file=reversed.prof")
        result = run([binary], env=env, cwd=work)
        lines = result.stderr.splitlines()
        results.check(result.returncode == 0 and len(lines) == 1
                      and "libmemprof is loaded but the program's malloc comes from" in lines[0]
                      and "libjemalloc" in lines[0],
                      "forward, libmemprof linked after jemalloc: runs, one line says "
                      "allocations are not profiled and why", result.stderr)

    # Preloaded libmemprof: found by dlsym, everything forwarded.
    binary = build(work, "forward.cc", "forward_preloaded", hint, [])
    if binary is not None:
        env = dict(os.environ, MEMPROF_OPTIONS="profile_file=preloaded.prof",
                   LD_PRELOAD=os.path.join(TOP, "runtime", "libmemprof.so"))
        result = run([binary], env=env, cwd=work)
        found = profile_sites(binary, os.path.join(work, "preloaded.prof"))
        results.check(result.returncode == 0 and result.stderr == ""
                      and found is not None and len(found) >= 17,
                      "forward, libmemprof preloaded: runs, every call site profiled",
                      f"{result.returncode} {result.stderr} {len(found or [])} sites")


def test_wrong_link(work):
    """Linked with -lmemprof_hint alone, the library's own dependency on
    jemalloc comes after libc: glibc's malloc is the program's.  The shim
    must notice and forward, or glibc's free would get jemalloc's
    blocks."""
    libs = [f"-L{TOP}/runtime/hint", f"-Wl,-rpath,{TOP}/runtime/hint", "-lmemprof_hint"]
    binary = build(work, "forward.cc", "forward_glibc", libs, [])
    if binary is None:
        return
    result = run([binary], cwd=work)
    lines = result.stderr.splitlines()
    results.check(result.returncode == 0 and result.stdout == "forward done\n",
                  "linked without -ljemalloc: the program runs (hinted calls go to "
                  "glibc's malloc)", result.stdout + result.stderr)
    results.check(len(lines) == 1 and "libc.so.6, not from jemalloc" in lines[0]
                  and "pkg-config --libs memprof-hint" in lines[0],
                  "linked without -ljemalloc: one line says so and how to link",
                  result.stderr)


def main():
    global args
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--cc", default="gcc")
    parser.add_argument("--cxx", default="g++")
    parser.add_argument("--llvm-profdata", default="llvm-profdata-19")
    args = parser.parse_args()

    work = os.path.join(HERE, "work")
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    test_exports()
    test_tail_calls()
    test_direct_calls()
    test_pkg_config()
    test_failure_cases(work)
    test_programs(work)
    test_context_walk(work)
    test_forwarding(work)
    test_wrong_link(work)
    return results.finish()


if __name__ == "__main__":
    sys.exit(main())
