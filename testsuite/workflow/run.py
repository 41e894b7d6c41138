#!/usr/bin/env python3
"""The workflow a user follows, checked as a user runs it (issue 22):

- modes: the instrumented code tells the runtime its mode; a run in the
  other mode is followed (histogram or not) with exact counts, a mix of
  modules is refused in one line, access_sample_rate on inline code says
  it does nothing;
- LLVM's workflow: the block of docs/manual.md between the
  llvm-verbatim markers runs line by line in a shell, globs included;
  side files are named out of LLVM's globs; LLVM's indexed profile is
  recognised by memprof and -fplugin-arg-memprof-use=; a binary
  llvm-profdata cannot symbolize is said in one line;
- shared libraries: a host that makes no malloc call, linked with
  `pkg-config --libs memprof` under --as-needed, dlopens an instrumented
  library.

Every program is built with the real gcc and the plugin, linked through
memprof-uninstalled.pc.  Prints one line per check and ends with
`workflow: N passed, N failed`."""

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(TOP, "testsuite", "lib"))
from report import Report  # noqa: E402

results = Report("workflow")
args = None


def run(command, **kwargs):
    return subprocess.run(command, capture_output=True, text=True, **kwargs)


def pkg_config(*options):
    env = dict(os.environ, PKG_CONFIG_PATH=TOP)
    return run(["pkg-config", *options, "memprof"], env=env, check=True).stdout.split()


def plugin():
    return "-fplugin=" + pkg_config("--variable=plugin")[0]


def build(label, sources, output, flags=(), link=True, libs=()):
    """Compile SOURCES (in HERE) into OUTPUT with the plugin first on the
    command line, then FLAGS; linked with LIBS and the runtime when LINK."""
    command = [args.cc, "-g", "-O2", plugin(), *flags, *pkg_config("--cflags"),
               *[os.path.join(HERE, source) for source in sources], "-o", output, *libs]
    if link:
        command += pkg_config("--libs")
    result = run(command)
    results.check(result.returncode == 0, f"{label}: builds", " ".join(command) + "\n" + result.stderr)
    return result.returncode == 0


def execute(command, directory, options, env_extra=None):
    env = dict(os.environ, MEMPROF_OPTIONS=options, **(env_extra or {}))
    return run(command, cwd=directory, env=env)


def log_lines(stderr):
    """The runtime's lines that are not print_text's profile."""
    return [line for line in stderr.splitlines()
            if line.startswith("memprof: ") and not re.match(
                r"memprof: (\t|Recorded|Memory allocation|Stack for|AccessCountHistogram)", line)]


# ---- Modes ----

def block_of_400(stderr):
    """print_text's record of the 400-byte allocation (stdio's buffer has
    its own)."""
    for record in stderr.split("Memory allocation stack id"):
        if "size (ave/min/max) 400.00 / 400 / 400" in record:
            return record
    return ""


def access_count(stderr):
    match = re.search(r"access_count \(ave/min/max\): [\d.]+ / (\d+) / (\d+)",
                      block_of_400(stderr))
    return int(match.group(2)) if match else None


def histogram_of(stderr):
    match = re.search(r"AccessCountHistogram\[\d+\]: ([\d ]+)", block_of_400(stderr))
    return [int(value) for value in match.group(1).split()] if match else None


def test_modes(work):
    directory = os.path.join(work, "modes")
    os.makedirs(directory)
    builds = {"counter": [], "histogram": ["-fplugin-arg-memprof-histogram"],
              "callbacks": ["-fplugin-arg-memprof-callbacks"]}
    for mode, flags in builds.items():
        binary = os.path.join(directory, "touch-" + mode)
        if not build(f"touch {mode}", ["touch.c"], binary, flags):
            continue
        for option in ("", "histogram=1", "histogram=0"):
            label = f"touch built in {mode} mode, run with '{option or 'no option'}'"
            result = execute([binary], directory, f"{option}:write_profile=0:print_text=1")
            results.check(result.returncode == 3 and result.stdout == "touch done\n",
                          f"{label}: output and exit status unchanged",
                          f"{result.returncode} {result.stdout!r}")
            count = access_count(result.stderr)
            results.check(count == 2400, f"{label}: exactly 2400 accesses", f"{count}")
            histogram = histogram_of(result.stderr)
            if mode == "histogram":
                results.check(histogram is not None and len(histogram) >= 32 and set(histogram) == {48},
                              f"{label}: a histogram of 48 per 8 bytes", str(histogram))
            else:
                results.check(histogram is None, f"{label}: no histogram", str(histogram))
            lines = log_lines(result.stderr)
            contradicts = (option == "histogram=1" and mode != "histogram") or \
                (option == "histogram=0" and mode == "histogram")
            if contradicts:
                results.check(len(lines) == 1 and "overridden" in lines[0]
                              and binary in lines[0],
                              f"{label}: one line says the option is overridden and names "
                              "the module", "\n".join(lines))
            else:
                results.check(lines == [], f"{label}: silent", "\n".join(lines))
        result = execute([binary], directory, "access_sample_rate=16:write_profile=0")
        lines = log_lines(result.stderr)
        if mode == "callbacks":
            results.check(lines == [], "access_sample_rate=16 with callbacks: silent",
                          "\n".join(lines))
        else:
            results.check(len(lines) == 1 and "access_sample_rate=16 does nothing" in lines[0],
                          f"access_sample_rate=16 on a {mode} (inline) build: one line says "
                          "it does nothing there", "\n".join(lines))

    # A library built in histogram mode under a program built without it
    # (and the converse): refused in one line naming both.
    for library_mode, main_mode in (("histogram", "counter"), ("counter", "histogram")):
        label = f"{library_mode} library under a {main_mode} program"
        sub = os.path.join(directory, f"mixed-{library_mode}")
        os.makedirs(sub)
        library = os.path.join(sub, "libmixed.so")
        binary = os.path.join(sub, "mixed")
        if not build(f"{label}: library", ["mixed_lib.c"], library,
                     ["-fPIC", "-shared", *builds[library_mode]], link=False):
            continue
        if not build(label, ["mixed_main.c"], binary,
                     builds[main_mode], libs=["-L" + sub, "-lmixed", "-Wl,-rpath," + sub]):
            continue
        result = execute([binary], sub, "write_profile=0")
        lines = log_lines(result.stderr)
        results.check(result.returncode == 0, f"{label}: exit status unchanged",
                      str(result.returncode))
        results.check(len(lines) == 1 and lines[0].startswith("memprof: refused: ")
                      and binary in lines[0] and library in lines[0],
                      f"{label}: refused in one line naming both modules", "\n".join(lines))


# ---- LLVM's workflow ----

def manual_block():
    """The commands between <!-- llvm-verbatim --> and its end marker."""
    with open(os.path.join(TOP, "docs", "manual.md")) as manual:
        text = manual.read()
    match = re.search(r"<!-- llvm-verbatim -->\n(.*?)<!-- /llvm-verbatim -->", text, re.S)
    if match is None:
        return []
    return [line[4:] for line in match.group(1).splitlines() if line.startswith("    ")]


def shell_env():
    return dict(os.environ, PKG_CONFIG_PATH=TOP,
                PATH=os.path.join(TOP, "analysis") + os.pathsep + os.environ["PATH"])


def test_llvm_verbatim(work):
    directory = os.path.join(work, "llvm")
    os.makedirs(directory)
    shutil.copy(os.path.join(HERE, "app.c"), directory)
    commands = manual_block()
    results.check(len(commands) >= 6, "docs/manual.md has the llvm-verbatim block",
                  str(commands))
    env = shell_env()
    env.pop("MEMPROF_OPTIONS", None)
    for command in commands:
        result = run(["bash", "-c", command], cwd=directory, env=env)
        results.check(result.returncode == 0, f"verbatim: {command}",
                      f"status {result.returncode}\n{result.stdout[-2000:]}{result.stderr[-2000:]}")
    names = sorted(os.listdir(directory))
    profiles = [name for name in names if name.startswith("memprof.profraw.")]
    sides = [name for name in names if name.startswith("memprof.extra.")]
    results.check(len(profiles) == 2 and sorted(p.replace("profraw", "extra") for p in profiles)
                  == sides, "each memprof.profraw.<pid> has its memprof.extra.<pid>", str(names))
    results.check(any(re.fullmatch(r"default_\d+\.extra", name) for name in names),
                  "default_<pid>.profraw has its default_<pid>.extra", str(names))
    show = run(["bash", "-c", "memprof show --format=json --binary=./app memprof.profraw.*"],
               cwd=directory, env=env)
    results.check(show.returncode == 0 and '"make_buffer"' in show.stdout
                  and '"xmalloc"' in show.stdout,
                  "memprof reads the profiles with their side files; xmalloc and make_buffer "
                  "are frames at -O2", show.stderr + show.stdout[:1500])

    # A profile of an older runtime has its side file as PROFILE.extra:
    # still read.
    if profiles:
        old = os.path.join(work, "old-name")
        os.makedirs(old)
        shutil.copy(os.path.join(directory, profiles[0]), old)
        shutil.copy(os.path.join(directory, profiles[0].replace("profraw", "extra")),
                    os.path.join(old, profiles[0] + ".extra"))
        shown = run([os.path.join(TOP, "analysis", "memprof"), "show", "--format=json",
                     "--binary=" + os.path.join(directory, "app"),
                     os.path.join(old, profiles[0])])
        records = json.loads(shown.stdout)["records"] if shown.returncode == 0 else []
        results.check(records and all(r.get("extra") is not None for r in records),
                      "a side file under the old name PROFILE.extra is still read",
                      shown.stderr + shown.stdout[:500])

    # LLVM's indexed profile, made by the block above.
    indexed = os.path.join(directory, "memprof.memprofdata")
    if not results.check(os.path.exists(indexed), "llvm-profdata wrote memprof.memprofdata"):
        return
    shown = run([os.path.join(TOP, "analysis", "memprof"), "show", indexed])
    results.check(shown.returncode != 0 and "an LLVM indexed profile" in shown.stderr
                  and "memprof merge --binary=" in shown.stderr
                  and len(shown.stderr.strip().splitlines()) == 1,
                  "memprof show on a .memprofdata: one line says what it is and which "
                  "command makes a profile it reads", shown.stderr)
    used = run([args.cc, "-c", plugin(), "-fplugin-arg-memprof-use=" + indexed,
                os.path.join(HERE, "app.c"), "-o", os.path.join(directory, "use.o")])
    results.check(used.returncode != 0 and "an LLVM indexed profile" in used.stderr
                  and "memprof merge --binary=" in used.stderr,
                  "-fplugin-arg-memprof-use= on a .memprofdata says what it is",
                  used.stderr)


def test_link_check(work):
    directory = os.path.join(work, "linkcheck")
    os.makedirs(directory)
    cases = [("build id", [], None),
             ("no build id", ["-Wl,--build-id=none"], "has no GNU build ID"),
             ("two executable segments", ["-no-pie", "-Wl,--section-start=.othertext=0x2000000",
                                          "-DOTHER_TEXT"], "has 2 executable segments")]
    for label, flags, expected in cases:
        binary = os.path.join(directory, label.replace(" ", "-"))
        if not build(f"link check, {label}", ["app.c"], binary, flags):
            continue
        result = execute([binary], directory, "profile_file=" + binary + ".profraw")
        lines = log_lines(result.stderr)
        show = run([args.llvm_profdata, "show", "--memory", binary + ".profraw",
                    "--profiled-binary", binary])
        if expected is None:
            results.check(lines == [] and show.returncode == 0,
                          f"link check, {label}: silent, and llvm-profdata symbolizes it",
                          "\n".join(lines) + show.stderr)
        else:
            results.check(len(lines) == 1 and expected in lines[0] and "-Wl," in lines[0],
                          f"link check, {label}: one line with the fix", "\n".join(lines))
            results.check(show.returncode != 0,
                          f"link check, {label}: llvm-profdata indeed refuses it", show.stdout[:300])


# ---- Shared libraries ----

def test_dlopen_host(work):
    directory = os.path.join(work, "dlopen")
    os.makedirs(directory)
    library = os.path.join(directory, "libplugin.so")
    if not build("dlopen: instrumented library", ["plugin_lib.c"], library,
                 ["-fPIC", "-shared"], link=False):
        return
    # The host is built as a user builds it, without the plugin, with
    # --as-needed made explicit (Debian's default).
    host = os.path.join(directory, "host")
    command = [args.cc, "-g", "-Wl,--as-needed", os.path.join(HERE, "host.c"), "-o", host, "-ldl",
               *pkg_config("--libs")]
    result = run(command)
    if not results.check(result.returncode == 0, "dlopen: host builds", result.stderr):
        return
    needed = run(["readelf", "-d", host]).stdout
    results.check("libmemprof.so" in needed,
                  "dlopen: --as-needed keeps libmemprof.so NEEDED by a host that makes no "
                  "malloc call", needed)
    result = execute([host, library], directory, "profile_file=host.prof")
    results.check(result.returncode == 0 and result.stdout == "plugin_run: 700\n",
                  "dlopen: the host loads the instrumented library and runs it",
                  f"{result.returncode} {result.stdout!r} {result.stderr!r}")
    results.check(os.path.exists(os.path.join(directory, "host.prof")),
                  "dlopen: the profile is written")

    # dlclose before exit: the library's frames still symbolize, with
    # --binary naming the library (its segments are kept at dlclose).
    result = execute([host, library, "dlclose"], directory, "profile_file=closed.profraw")
    results.check(result.returncode == 0 and result.stdout == "byte: 7\n",
                  "dlclose: the host runs", f"{result.returncode} {result.stdout!r}")
    raw = os.path.join(directory, "closed.profraw")
    shown = run([os.path.join(TOP, "analysis", "memprof"), "show", "--format=json",
                 "--binary=" + library, raw])
    results.check(shown.returncode == 0 and '"plugin_make"' in shown.stdout,
                  "dlclose: the frames of a library closed before exit symbolize with "
                  "--binary=libplugin.so", shown.stderr + shown.stdout[:1000])
    segments = run([args.llvm_profdata, "show", "--memory", raw, "--profiled-binary", host])
    results.check(segments.returncode == 0 and library_segment_listed(segments.stdout, library),
                  "dlclose: the profile's segment table lists the closed library's build ID",
                  segments.stderr + segments.stdout[:1500])


def test_lto_link_without_plugin(work):
    """-flto: compiled with the plugin, linked with and without it."""
    directory = os.path.join(work, "lto")
    os.makedirs(directory)
    objects = []
    for source in ("touch.c", "mixed_lib.c"):
        obj = os.path.join(directory, source.replace(".c", ".o"))
        if not build(f"lto: {source} compiles", [source], obj, ["-flto", "-c"], link=False):
            return
        objects.append(obj)
    for label, flags, expect_line in (("linked with the plugin", [plugin()], False),
                                      ("linked without the plugin", [], True)):
        binary = os.path.join(directory, label.replace(" ", "-"))
        result = run([args.cc, "-flto", "-O2", *flags, *objects, "-o", binary,
                      *pkg_config("--libs")])
        if not results.check(result.returncode == 0, f"lto: {label}: links", result.stderr):
            continue
        result = execute([binary], directory, "print_text=1:write_profile=0")
        lines = log_lines(result.stderr)
        results.check(result.returncode == 3 and result.stdout == "touch done\n",
                      f"lto: {label}: output and exit status unchanged", str(result.returncode))
        if expect_line:
            results.check(len(lines) == 1 and "linked without the plugin" in lines[0]
                          and "-fplugin=memprof.so" in lines[0],
                          f"lto: {label}: one line says so and what to add", "\n".join(lines))
        else:
            results.check(lines == [] and access_count(result.stderr) == 2400,
                          f"lto: {label}: silent, 2400 accesses", "\n".join(lines))


def library_segment_listed(yaml, library):
    """Whether llvm-profdata's YAML lists a segment with LIBRARY's build
    ID."""
    notes = run(["readelf", "-n", library]).stdout
    match = re.search(r"Build ID: ([0-9a-f]+)", notes)
    return match is not None and match.group(1).upper() in yaml.upper()


def main():
    global args
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--cc", default="gcc")
    parser.add_argument("--llvm-profdata", default="llvm-profdata-19")
    parser.add_argument("--keep", action="store_true", help="keep the work directory")
    args = parser.parse_args()
    work = tempfile.mkdtemp(prefix="memprof-workflow-")
    try:
        test_modes(work)
        test_llvm_verbatim(work)
        test_link_check(work)
        test_lto_link_without_plugin(work)
        test_dlopen_host(work)
    finally:
        if args.keep:
            print(f"work directory: {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)
    return results.finish()


if __name__ == "__main__":
    sys.exit(main())
