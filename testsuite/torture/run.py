#!/usr/bin/env python3
"""GCC's execute torture tests, with and without the plugin.

Runs the top-level *.c of gcc.c-torture/execute (from Debian's
gcc-12-source package, extracted once into work/src), or with --lang c++
the C++ run tests (`dg-do run') of g++.dg/torture, g++.dg/opt, g++.dg/eh,
g++.dg/init/new*, g++.dg/cpp1z/aligned-new* and g++.dg/cpp1y/sized-dealloc*
(extracted into work/src-c++), at each optimization level: first built and
run without the plugin (the baseline); a test that does not build, fails
or times out there is excluded.  Every other test is
built again with -fplugin=memprof.so -fchecking, linked with the runtime
(memprof-uninstalled.pc), and run with MEMPROF_OPTIONS=write_profile=0: it
must build, and its stdout and exit status must equal the baseline's
(stdout only when two runs of the baseline print the same).

Like GCC's harness (gcc-dg-runtest with "-w"), a test's dg-options and
dg-additional-options are added when they are unconditional or their target
selector holds on this machine; a test with a FILE.x beside it (the old
torture harness's marker) is excluded.  Selectors are evaluated for target
triplets, a few effective targets (lp64, fpic, pthread...) and, for C++,
the language levels (c++11, c++17_only, c++14_down...): a C++ test is
built with the first of -std=gnu++17, 14, 11, 98, 20 its `dg-do run'
selector and effective-target requirements accept (unless its options give
a -std), and a test whose selector or requirement names something else is
excluded.

The sample is fixed: the files whose name's crc32 mod 100 is below
--sample, and the files named by --always.  Prints one line per failure with the command that reproduces
it, one summary line per level, and ends with `torture: N passed, N failed`
(N passed: file x level pairs that pass with the plugin; NAME is torture
or torture-cxx).
"""

import argparse
import concurrent.futures
import fnmatch
import glob
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import time
import zlib

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(TOP, "scripts"))
import gcc_source  # noqa: E402

WORK = os.path.join(HERE, "work")
EXECUTE = "gcc/testsuite/gcc.c-torture/execute"
GXX = "gcc/testsuite/g++.dg"
RUNS = os.path.join(WORK, "run")
COMPILE_TIMEOUT = 60
RUN_TIMEOUT = 10
BASE_FLAGS = ["-w", "-fno-diagnostics-color"]
RUN_ENV = {"MEMPROF_OPTIONS": "write_profile=0"}

# Per language: the suite's name, its directories in the source tree, the
# files of each (patterns, relative to the directories' parent), whether a
# file is a test only with `dg-do run', and the -std levels to try.
LANGUAGES = {
    "c": {"name": "torture", "cache": "src", "directories": [EXECUTE],
          "patterns": ["*.c"], "run_only": False, "standards": [None]},
    "c++": {"name": "torture-cxx", "cache": "src-c++",
            "directories": [f"{GXX}/{d}" for d in ("torture", "opt", "eh", "init", "cpp1z",
                                                   "cpp1y")],
            "patterns": ["torture/*.C", "opt/*.C", "eh/*.C", "init/new*.C",
                         "cpp1z/aligned-new*.C", "cpp1y/sized-dealloc*.C"],
            "run_only": True, "standards": [17, 14, 11, 98, 20]},
}


def extracted_source(language):
    """The tests' directory (the C++ directories' parent), extracted from
    gcc-12-source's tarball."""
    cache = os.path.join(WORK, language["cache"])
    tree = gcc_source.extract(cache, language["directories"], language["name"])
    return os.path.join(tree, EXECUTE if language["name"] == "torture" else GXX)


# ---- The tests and their dg directives ----

def sample(names, percent):
    return [name for name in sorted(names)
            if zlib.crc32(name.encode()) % 100 < percent]


def machine_names(cc):
    """This machine's triplet as gcc names it, and with a vendor field, so
    that both x86_64-*-* and x86_64-*-linux* match."""
    machine = subprocess.run([cc, "-dumpmachine"], capture_output=True, text=True).stdout.strip()
    names = [machine]
    parts = machine.split("-")
    if len(parts) == 3:
        names.append(f"{parts[0]}-pc-{parts[1]}-{parts[2]}")
        names.append(f"{parts[0]}-unknown-{parts[1]}-{parts[2]}")
    return names


DG_OPTIONS = re.compile(r'\{\s*dg-(options|additional-options)\s+'
                        r'(?:"([^"]*)"|\{([^{}]*)\}|([^\s{}"]+))\s*'
                        r'(?:\{\s*target\s+(.*?)\s*\}\s*)?\}')
DG_DO_RUN = re.compile(r'\{\s*dg-do\s+run\s*(?:\{\s*target\s+(.*?)\s*\}\s*)?'
                       r'(?:\{[^{}]*(?:\{[^{}]*\}[^{}]*)*\}\s*)?\}')
DG_REQUIRE = re.compile(r'\{\s*dg-require-effective-target\s+([\w+.-]+)\s*\}')
DG_SOURCES = re.compile(r'\{\s*dg-additional-sources\s+"?([^"{}]+?)"?\s*\}')

# Effective targets that hold on x86-64 GNU/Linux with GCC 12, for the
# selectors this driver evaluates; any other keyword is unknown.
TRUE_TARGETS = {"lp64", "fpic", "pthread", "alloca", "lto", "size20plus", "size32plus",
                "store_merge", "indirect_jumps", "nonpic", "native", "c++", "stdint_types",
                "int32plus", "ptr32plus", "weak_undefined", "tls", "tls_runtime",
                "fstack_protector", "sse_runtime", "sse2_runtime", "cxa_atexit",
                "named_sections", "sync_int_long", "sync_char_short", "trampolines",
                "freorder", "fgnu_tm", "supports_stack_clash_protection", "cet"}
FALSE_TARGETS = {"ilp32", "arm32", "hard_float", "mips64", "gld", "ia32", "x32"}


def target_holds(word, machines, standard):
    """Does the selector keyword or triplet pattern WORD hold?  None when it
    is not known."""
    level = re.fullmatch(r"c\+\+(\d+|2a)(_only|_down)?", word)
    if level:
        wanted = 20 if level.group(1) == "2a" else int(level.group(1))
        if standard is None:
            return None
        have = standard if standard != 98 else 3
        wanted = 3 if wanted in (98, 3) else wanted
        if level.group(2) == "_only":
            return have == wanted
        if level.group(2) == "_down":
            return have <= wanted
        return have >= wanted
    if re.fullmatch(r"[\w?*.]+-[\w?*.-]+", word):
        return any(fnmatch.fnmatchcase(m, word) for m in machines)
    if word in TRUE_TARGETS:
        return True
    if word in FALSE_TARGETS:
        return False
    return None


def selector_holds(selector, machines, standard=None):
    """DejaGnu's target selector SELECTOR, such as `{ i?86-*-* x86_64-*-* }'
    (any of them) or `{ c++11 && { ! lp64 } }'; None when a keyword in it
    is unknown."""
    tokens = re.findall(r"\{|\}|&&|\|\||!|[^\s{}!&|]+", selector)
    position = 0

    def primary():
        nonlocal position
        if position >= len(tokens):
            raise ValueError(selector)
        token = tokens[position]
        position += 1
        if token == "!":
            value = primary()
            return None if value is None else not value
        if token == "{":
            value = disjunction(True)
            if position < len(tokens) and tokens[position] == "}":
                position += 1
            return value
        return target_holds(token, machines, standard)

    def combine(values, operator):
        if operator == "and":
            if False in values:
                return False
            return None if None in values else True
        if True in values:
            return True
        return None if None in values else False

    def conjunction():
        nonlocal position
        values = [primary()]
        while position < len(tokens) and tokens[position] == "&&":
            position += 1
            values.append(primary())
        return combine(values, "and")

    def disjunction(braced=False):
        nonlocal position
        values = [conjunction()]
        while position < len(tokens) and tokens[position] not in ("}",):
            if tokens[position] == "||":
                position += 1
            values.append(conjunction())  # a list of patterns: any of them
        return combine(values, "or")

    try:
        return disjunction()
    except (ValueError, IndexError, RecursionError):
        return None


def dg_flags(source, machines, standard=None):
    text = open(source, errors="replace").read()
    options, additional = [], []
    for match in DG_OPTIONS.finditer(text):
        kind, quoted, braced, bare, selector = match.groups()
        if selector is not None and selector_holds(selector, machines, standard) is not True:
            continue
        if quoted is not None:
            flags = shlex.split(quoted)
        elif braced is not None:
            flags = shlex.split(braced.replace('"', ""))
        else:
            flags = [bare]
        if kind == "options":
            options = flags
        else:
            additional += flags
    return options + additional


def cxx_test_flags(source, machines):
    """([flags, ...], None) for a C++ run test: the choices of its -std (the
    levels its selector and requirements accept, in the order of
    LANGUAGES), each with its dg flags and additional sources; or (None,
    why it is excluded)."""
    text = open(source, errors="replace").read()
    run = DG_DO_RUN.search(text)
    if run is None:
        return None, "not a run test"
    requirements = DG_REQUIRE.findall(text)
    given = [flag for flag in dg_flags(source, machines, 17) if flag.startswith("-std=")]
    if given:
        match = re.search(r"(\d+|0x|1y|1z|2a)$", given[-1])
        word = match.group(1) if match else "17"
        level = {"0x": 11, "1y": 14, "1z": 17, "2a": 20, "03": 98}.get(word) or int(word)
        candidates = [(level, None)]
    else:
        candidates = [(level, level) for level in LANGUAGES["c++"]["standards"]]
    choices = []
    for level, standard in candidates:
        checks = [selector_holds(run.group(1), machines, level)] if run.group(1) else []
        unknown = [word for word in requirements
                   if target_holds(word, machines, level) is None]
        if unknown or None in checks:
            what = (f"effective target {' '.join(unknown)}" if unknown
                    else f"selector {run.group(1)}")
            return None, f"not evaluated: {what}"
        checks += [target_holds(word, machines, level) for word in requirements]
        if not all(checks):
            continue
        flags = dg_flags(source, machines, level)
        if standard is not None:
            flags = [f"-std=gnu++{standard}"] + flags
        if "pthread" in requirements:
            flags.append("-pthread")
        for extra in DG_SOURCES.findall(text):
            flags += [os.path.join(os.path.dirname(source), name) for name in extra.split()]
        choices.append(flags)
    if not choices:
        return None, "not for this target or language level"
    return choices, None


# ---- Running one test ----

def execute(command, timeout, cwd, env=None):
    """(returncode or None on timeout, stdout, stderr, seconds); the process
    group is killed on timeout."""
    start = time.monotonic()
    process = subprocess.Popen(command, cwd=cwd, env=env, stdin=subprocess.DEVNULL,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               start_new_session=True)
    try:
        out, err = process.communicate(timeout=timeout)
        code = process.returncode
    except subprocess.TimeoutExpired:
        try:
            os.killpg(process.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        out, err = process.communicate()
        code = None
    return (code, out.decode(errors="replace"), err.decode(errors="replace"),
            time.monotonic() - start)


def status_text(code):
    if code is None:
        return "timeout"
    if code < 0:
        try:
            return f"killed by {signal.Signals(-code).name}"
        except ValueError:
            return f"killed by signal {-code}"
    return f"exit {code}"


def first_lines(text, count=4):
    lines = [line for line in text.splitlines() if line.strip()]
    more = " [...]" if len(lines) > count else ""
    return " | ".join(lines[:count]) + more


def work_directory(name, level):
    """Where one test runs at one level: a name without slashes or
    spaces."""
    return os.path.join(RUNS, re.sub(r"[^\w.+-]+", "_", level.lstrip("-")),
                        os.path.splitext(name)[0].replace("/", "_"))


def test_one(args, source, name, level, choices):
    """('ok'|'failed'|'excluded', reason, detail).  CHOICES: the test's
    flags, or several (the first that builds without the plugin is
    used)."""
    directory = work_directory(name, level)
    os.makedirs(directory)
    level_flags = level.split()
    for flags in choices:
        compile_base = [args.compiler, *level_flags, *BASE_FLAGS, *flags, source, "-o",
                        os.path.join(directory, "baseline"), "-lm"]
        code, _, err, _ = execute(compile_base, COMPILE_TIMEOUT, directory)
        if code == 0:
            break
    if code != 0:
        return "excluded", "does not build without the plugin", ""
    expected = execute([os.path.join(directory, "baseline")], RUN_TIMEOUT, directory)
    if expected[0] != 0:
        return "excluded", f"fails without the plugin ({status_text(expected[0])})", ""

    binary = os.path.join(directory, "instrumented")
    compile_plugin = [args.compiler, *level_flags, *BASE_FLAGS, *flags, f"-fplugin={args.plugin}",
                      *args.plugin_args.split(), "-fchecking", source, "-o", binary, "-lm",
                      *args.libs]
    reproduce = f"cd {shlex.quote(directory)} && {shlex.join(compile_plugin)}"
    code, _, err, _ = execute(compile_plugin, COMPILE_TIMEOUT, directory)
    if code != 0:
        kind = "ICE" if "internal compiler error" in err else "compile error"
        if code is None:
            kind = f"compile timeout ({COMPILE_TIMEOUT} s)"
        return "failed", f"{kind} with the plugin", \
            f"{first_lines(err)}\n    reproduce: {reproduce}"

    env = dict(os.environ, **RUN_ENV)
    actual = execute([binary], RUN_TIMEOUT, directory, env)
    reproduce += " && " + " ".join(f"{k}={v}" for k, v in RUN_ENV.items()) + " ./instrumented"
    if actual[0] == expected[0] and actual[1] == expected[1]:
        return "ok", "", ""
    if actual[0] == expected[0]:
        # A test that prints addresses (return-addr.c) differs from run to
        # run under ASLR: its stdout is compared only if the baseline's own
        # is stable.
        again = execute([os.path.join(directory, "baseline")], RUN_TIMEOUT, directory)
        if again[0] == expected[0] and again[1] != expected[1]:
            return "ok", "", ""
    if actual[0] != expected[0]:
        what = f"run: {status_text(actual[0])}, expected exit {expected[0]}"
        if actual[0] is None:
            what += f" (baseline ran {expected[3]:.2f} s, limit {RUN_TIMEOUT} s)"
    else:
        what = "run: stdout differs from the baseline's"
    detail = first_lines(actual[2]) if actual[2].strip() else ""
    if actual[1] != expected[1]:
        detail += f" stdout {actual[1][:200]!r}, expected {expected[1][:200]!r}"
    return "failed", what, f"{detail.strip()}\n    reproduce: {reproduce}"


# ---- Driver ----

def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--lang", choices=sorted(LANGUAGES), default="c",
                        help="c: gcc.c-torture/execute (default); c++: g++.dg's run tests")
    parser.add_argument("--sample", type=float, default=100,
                        help="percent of the files to run, a fixed sample (default 100)")
    parser.add_argument("--always", default="",
                        help="comma-separated files run whatever the sample (as listed, "
                        "e.g. eh/new1.C)")
    parser.add_argument("--levels", default="-O0,-O2",
                        help="comma-separated optimization levels, each one or more flags "
                        "(default -O0,-O2)")
    parser.add_argument("--jobs", type=int, default=2, help="parallel tests (default 2)")
    parser.add_argument("--plugin", default=os.path.join(TOP, "gcc-plugin", "memprof.so"))
    parser.add_argument("--plugin-args", default="",
                        help="flags after -fplugin= in the plugin's builds only (e.g. "
                        "-fplugin-arg-memprof-sample-accesses)")
    parser.add_argument("--cc", default="gcc")
    parser.add_argument("--cxx", default="g++")
    parser.add_argument("--source", help="the gcc.c-torture/execute directory (with --lang "
                        "c++, g++.dg) (default: extracted from the "
                        f"{gcc_source.PACKAGE} package's tarball)")
    parser.add_argument("--keep", action="store_true",
                        help="keep every test's work directory (failures' are always kept)")
    args = parser.parse_args()
    language = LANGUAGES[args.lang]
    suite = language["name"]
    global RUNS
    RUNS = os.path.join(WORK, "run" if args.lang == "c" else "run-c++")
    args.compiler = args.cxx if args.lang == "c++" else args.cc
    args.plugin = os.path.abspath(args.plugin)
    levels = [level.strip() for level in args.levels.split(",") if level.strip()]
    started = time.monotonic()

    if not os.path.isfile(args.plugin):
        print(f"{suite}: no plugin at {args.plugin}: run make first")
        print(f"{suite}: 0 passed, 1 failed")
        return 1
    try:
        source_dir = os.path.abspath(args.source) if args.source else extracted_source(language)
    except (gcc_source.Missing, subprocess.CalledProcessError, OSError) as error:
        print(error)
        print(f"{suite}: 0 passed, 1 failed")
        return 1
    env = dict(os.environ, PKG_CONFIG_PATH=TOP)
    args.libs = subprocess.run(["pkg-config", "--libs", "memprof"], capture_output=True,
                               text=True, env=env, check=True).stdout.split()

    names = sorted(os.path.relpath(path, source_dir) for pattern in language["patterns"]
                   for path in glob.glob(os.path.join(source_dir, pattern)))
    if language["run_only"]:
        names = [name for name in names
                 if DG_DO_RUN.search(open(os.path.join(source_dir, name),
                                          errors="replace").read())]
    always = [name for name in args.always.split(",") if name]
    missing = [name for name in always if name not in names]
    if missing:
        print(f"{suite}: --always names files that are not tests: {' '.join(missing)}")
        print(f"{suite}: 0 passed, 1 failed")
        return 1
    files = sorted(set(sample(names, args.sample)) | set(always))
    machines = machine_names(args.compiler)
    print(f"{suite}: {len(files)} of {len(names)} files of {source_dir} "
          f"(sample {args.sample:g}%), levels {', '.join(levels)}, {args.jobs} jobs",
          flush=True)

    shutil.rmtree(RUNS, ignore_errors=True)
    counts = {level: {"ok": 0, "failed": 0, "excluded": 0} for level in levels}
    reasons = {level: {} for level in levels}
    failures = []

    def task(name, level):
        source = os.path.join(source_dir, name)
        if os.path.exists(os.path.splitext(source)[0] + ".x"):
            return "excluded", "has a .x file", ""
        try:
            if language["run_only"]:
                choices, why = cxx_test_flags(source, machines)
                if choices is None:
                    return "excluded", why, ""
            else:
                choices = [dg_flags(source, machines)]
            return test_one(args, source, name, level, choices)
        except Exception as error:  # a driver bug must not hide the other results
            return "failed", f"driver error {error!r}", ""

    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        futures = {pool.submit(task, name, level): (name, level)
                   for name in files for level in levels}
        for future in concurrent.futures.as_completed(futures):
            name, level = futures[future]
            outcome, reason, detail = future.result()
            counts[level][outcome] += 1
            if outcome == "excluded":
                reasons[level][reason] = reasons[level].get(reason, 0) + 1
            elif outcome == "failed":
                failures.append((name, level))
                print(f"FAIL: {level} {name}: {reason}"
                      + (detail if detail.startswith("\n") or not detail else f": {detail}"),
                      flush=True)
            if outcome != "failed" and not args.keep:
                shutil.rmtree(work_directory(name, level), ignore_errors=True)

    if not failures and not args.keep:
        shutil.rmtree(RUNS, ignore_errors=True)
    for level in levels:
        c = counts[level]
        print(f"{level}: {c['ok']} ok, {c['failed']} failed, {c['excluded']} excluded")
        for reason, count in sorted(reasons[level].items()):
            print(f"  excluded at {level}: {count} {reason}")
    print(f"{suite}: {time.monotonic() - started:.0f} s"
          + (f"; failures kept in {RUNS}" if failures else ""))
    passed = sum(c["ok"] for c in counts.values())
    failed = sum(c["failed"] for c in counts.values())
    print(f"{suite}: {passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
