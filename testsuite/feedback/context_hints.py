#!/usr/bin/env python3
"""Context hints end to end (docs/feedback.md, "Context hints"), as a user
runs them: context_main.c calls context_alloc.c's allocator through a
function pointer and one shared helper, so the allocator's one malloc
call is ambiguous (cold and hot contexts) and only the second caller
frame, in another translation unit, tells them apart.  At -O0 and -O2:

- the profiled build's profile, merged; the rebuild with it rewrites the
  call to the context-classified entry point;
- the hinted build prints what the plain build prints, and puts every
  cold-path block in libmemprof_hint's cold arena and every hot-path
  block in its hot arena (jemalloc's arenas.lookup of each block);
  MEMPROF_HINT_STATS=1 counts the bytes of each class, also when the
  program closes stderr at exit (context_close.c);
- with the cold path's call moved one line (-DSTALE, a profile with a
  stale frame), the cold path's blocks fall back to the default arena,
  and the hot path's still go to the hot arena;
- the "did it work" loop: the hinted build profiled again (instrument +
  use, libmemprof before the shim) gives a profile with the same cold
  bytes, and the build from that second profile places them in the cold
  arena again;
- at -O2, a profile taken with -fno-optimize-sibling-calls and a hinted
  build made without it (context_tail.c): the contexts part at functions
  that end in a tail call of a function returning nothing, whose frames
  the hinted build keeps as the profile has them, so each path's blocks
  are in its class's arena;
- preprocessed input (context_macro.c: each path calls through a macro,
  whose call a .i has at another column): a profile of the build from
  the source drives a -save-temps build, and a -save-temps profile a
  build from the source with -fplugin-arg-memprof-columns=0; every
  block in its class's arena both times;
- frame pointers where the walk reads them and they matter
  (context_hub.c): kept in make and mid, left out of hub, a big function
  whose own call sites tell cold from hot (as Lua's luaV_execute), and
  every block still in its class's arena.

Prints one line per check and ends with `context-hints: N passed, N
failed`."""

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

WORK = os.path.join(HERE, "work", "context")
MEMPROF = os.path.join(TOP, "analysis", "memprof")
MAIN, ALLOC, CHECK, CLOSE, TAIL, HUB, MACRO = (
    os.path.join(HERE, name) for name in
    ("context_main.c", "context_alloc.c", "context_check.c", "context_close.c",
     "context_tail.c", "context_hub.c", "context_macro.c"))
BLOCKS, SIZE = 512, 96
# Small thresholds: this short run's untouched blocks are cold, the
# blocks read many times hot.
THRESHOLDS = ["-fplugin-arg-memprof-cold-lifetime=0", "-fplugin-arg-memprof-cold-density=1",
              "-fplugin-arg-memprof-hot-density=50"]
results = Report("context-hints")


def run(command, **kwargs):
    return subprocess.run(command, capture_output=True, text=True, **kwargs)


def pkg_config(package, *args):
    env = dict(os.environ, PKG_CONFIG_PATH=TOP)
    return run(["pkg-config", *args, package], env=env, check=True).stdout.split()


def build(output, opt, sources, flags=(), libraries=()):
    plugin = pkg_config("memprof", "--variable=plugin")[0]
    return run(["gcc", opt, "-g", "-fplugin=" + plugin, "-I" + os.path.join(TOP, "include"),
                *flags, *sources, "-o", output, *libraries])


def has_frame_pointer(binary, function):
    """Does FUNCTION of BINARY set up a frame pointer (mov %rsp,%rbp among
    its first instructions)?"""
    listing = run(["gdb", "-batch", "-ex", f"disassemble {function}", binary]).stdout
    return "mov    %rsp,%rbp" in "\n".join(listing.splitlines()[1:12])


def execute(binary, options=None, stats=False):
    env = dict(os.environ)
    env.pop("MEMPROF_OPTIONS", None)
    env.pop("MEMPROF_HINT_STATS", None)
    if options is not None:
        env["MEMPROF_OPTIONS"] = options
    if stats:
        env["MEMPROF_HINT_STATS"] = "1" if stats is True else stats
    return run([binary], cwd=os.path.dirname(binary), env=env)


def arenas(output):
    """(cold-path blocks in the cold, hot, default arena), (hot-path ...)."""
    match = re.search(r"arenas: cold blocks (\d+) cold (\d+) hot (\d+) default; "
                      r"hot blocks (\d+) cold (\d+) hot (\d+) default", output)
    if match is None:
        return None
    numbers = [int(n) for n in match.groups()]
    return tuple(numbers[:3]), tuple(numbers[3:])


def calls_store(binary):
    """How fill_cold of BINARY reaches store: "call", "jmp" or None."""
    listing = run(["gdb", "-batch", "-ex", "disassemble fill_cold", binary]).stdout
    found = re.search(r"\b(call|jmp)\s+0x[0-9a-f]+ <store", listing)
    return found.group(1) if found else None


def arenas_line(output):
    """The line context_check.c prints about the arenas, or ""."""
    return next((line for line in output.splitlines() if line.startswith("arenas:")), "")


def profile(name, binary, work):
    """Run BINARY under the profiler and merge its profile: the .mprof."""
    raw = os.path.join(work, name + ".profraw")
    ran = execute(binary, "profile_file=" + os.path.basename(raw))
    mprof = os.path.join(work, name + ".mprof")
    merged = run([MEMPROF, "merge", "--quiet", "--binary=" + binary, "-o", mprof, raw])
    ok = ran.returncode == 0 and merged.returncode == 0
    return (mprof, raw) if ok else (None, ran.stderr + merged.stderr)


def cold_bytes(binary, raw):
    """The bytes the profile has at the allocator's malloc called from the
    cold path, if no access reached them (cold by THRESHOLDS), else -1."""
    shown = run([MEMPROF, "show", "--format=json", "--top=0", "--binary=" + binary, raw])
    try:
        records = json.loads(shown.stdout)["records"]
    except (ValueError, KeyError):
        return None
    cold = [r for r in records if r["frames"] and r["frames"][0]["name"] == "wrapper"
            and any(f["name"] == "cold_path" for f in r["frames"])]
    if not cold or any(r["accesses"] for r in cold):
        return -1
    return sum(r["bytes"] for r in cold)


def check_level(opt):
    work = os.path.join(WORK, opt)
    os.makedirs(work)
    profiler = pkg_config("memprof", "--libs")
    hint = pkg_config("memprof-hint", "--libs")

    plain = os.path.join(work, "plain")
    built = run(["gcc", opt, "-g", MAIN, ALLOC, "-o", plain])
    expected = execute(plain).stdout if built.returncode == 0 else None

    profiled = os.path.join(work, "profiled")
    built = build(profiled, opt, [MAIN, ALLOC], libraries=profiler)
    if not results.check(built.returncode == 0, f"{opt}: the profiled build builds",
                         built.stderr[-500:]):
        return
    mprof, raw = profile("first", profiled, work)
    if not results.check(mprof is not None, f"{opt}: profiled and merged", raw):
        return

    def hinted(name, mprof, extra=()):
        binary = os.path.join(work, name)
        built = build(binary, opt, [MAIN, ALLOC, CHECK],
                      ["-fplugin-arg-memprof-use=" + mprof, "-fplugin-arg-memprof-remarks",
                       *THRESHOLDS, *extra], hint)
        if not results.check(built.returncode == 0, f"{opt}: {name}: builds", built.stderr[-800:]):
            return None, None
        results.check("context-classified: 1" in built.stderr
                      and "calls the context-classified entry point" in built.stderr,
                      f"{opt}: {name}: the allocator's ambiguous malloc call is rewritten to "
                      f"the context-classified entry point", built.stderr[-1500:])
        ran = execute(binary, stats=True)
        results.check(ran.returncode == 0, f"{opt}: {name}: runs and exits 0", ran.stderr[-500:])
        return ran, binary

    # The hinted build: each path's blocks in its class's arena.
    ran, _ = hinted("hinted", mprof)
    if ran is not None:
        placed = arenas(ran.stdout)
        results.check(placed == ((BLOCKS, 0, 0), (0, BLOCKS, 0)),
                      f"{opt}: through a function pointer across two units, all {BLOCKS} "
                      f"cold-path blocks are in the cold arena and all {BLOCKS} hot-path "
                      f"blocks in the hot arena", ran.stdout)
        results.check(expected is not None
                      and [line for line in ran.stdout.splitlines()
                           if not line.startswith("arenas:")] == expected.splitlines(),
                      f"{opt}: the hinted build prints what the plain build prints",
                      f"{ran.stdout!r} vs {expected!r}")
        results.check(re.search(rf"cold {BLOCKS} calls {BLOCKS * SIZE} bytes", ran.stderr)
                      and re.search(rf"hot {BLOCKS} calls {BLOCKS * SIZE} bytes", ran.stderr),
                      f"{opt}: MEMPROF_HINT_STATS=1 counts {BLOCKS * SIZE} bytes classified "
                      f"cold and as many hot", ran.stderr)

    # The pages the hot contexts' blocks lay on, and the same run with
    # MEMPROF_HINT_STATS=unplaced: classified and counted, placed as
    # jemalloc alone places them (the default arena), output unchanged.
    if ran is not None:
        least = -(-BLOCKS * SIZE // 4096)
        pattern = r"hot contexts' blocks lay on (\d+) pages of 4 KiB \((placed|unplaced)"
        found = re.search(pattern, ran.stderr)
        results.check(found and found.group(2) == "placed"
                      and least <= int(found.group(1)) <= least + 1,
                      f"{opt}: MEMPROF_HINT_STATS=1: the {BLOCKS} hot blocks of {SIZE} bytes "
                      f"lay on {least} or {least + 1} pages of 4 KiB, in the hot arena",
                      ran.stderr[-600:])
        unplaced = execute(os.path.join(work, "hinted"), stats="unplaced")
        found = re.search(pattern, unplaced.stderr)
        results.check(unplaced.returncode == 0
                      and arenas(unplaced.stdout) == ((0, 0, BLOCKS), (0, 0, BLOCKS))
                      and re.search(rf"cold {BLOCKS} calls {BLOCKS * SIZE} bytes",
                                    unplaced.stderr)
                      and found and found.group(2) == "unplaced"
                      and least <= int(found.group(1)) <= least + 1,
                      f"{opt}: MEMPROF_HINT_STATS=unplaced: classified and counted as with 1, "
                      f"every block in the default arena, the hot blocks' pages counted there",
                      unplaced.stdout + unplaced.stderr[-600:])
        results.check(unplaced.stdout.replace(arenas_line(unplaced.stdout), "")
                      == ran.stdout.replace(arenas_line(ran.stdout), ""),
                      f"{opt}: MEMPROF_HINT_STATS=unplaced: the program prints the same",
                      unplaced.stdout)

    # Frame pointers only where the walk reads: the table's depth is 2
    # (the caller frames make < cold_path), read from the frames of
    # wrapper and make, which keep one; cold_path (on the contexts, but
    # beyond the depth: its return address is read in make's frame) and
    # report_arenas (on none; its unit has the profile too) are built as
    # -O2 builds them, without.
    if opt == "-O2" and ran is not None:
        binary = os.path.join(work, "hinted")
        kept = {name: has_frame_pointer(binary, name)
                for name in ("wrapper", "make", "cold_path", "report_arenas")}
        results.check(kept == {"wrapper": True, "make": True, "cold_path": False,
                               "report_arenas": False},
                      f"{opt}: frame pointers kept in the functions whose frames the walk "
                      "reads (wrapper, make), not elsewhere (cold_path, report_arenas)",
                      str(kept))

    # A program that closes stderr at exit (gnulib's close_stdout).
    ran, _ = hinted("closes-stderr", mprof, [CLOSE])
    if ran is not None:
        results.check(re.search(rf"cold {BLOCKS} calls {BLOCKS * SIZE} bytes", ran.stderr),
                      f"{opt}: a program that closes stderr at exit still gets "
                      f"MEMPROF_HINT_STATS=1's counts", ran.stderr[-500:])

    # A stale frame: the cold path's call moved.
    ran, _ = hinted("stale", mprof, ["-DSTALE"])
    if ran is not None:
        results.check(arenas(ran.stdout) == ((0, 0, BLOCKS), (0, BLOCKS, 0)),
                      f"{opt}: with the cold path's call moved (a stale frame) its blocks "
                      f"fall back to the default arena; the hot path's stay hot", ran.stdout)

    # Did it work: profile the hinted build again, rebuild from that.
    again = os.path.join(work, "again")
    built = build(again, opt, [MAIN, ALLOC],
                  ["-fplugin-arg-memprof-use=" + mprof, "-fplugin-arg-memprof-instrument",
                   *THRESHOLDS], [*profiler, *hint])
    if not results.check(built.returncode == 0 and "context-classified: 1" in built.stderr,
                         f"{opt}: the hinted build, instrumented, builds",
                         built.stderr[-800:]):
        return
    second, raw2 = profile("second", again, work)
    if not results.check(second is not None, f"{opt}: the hinted build profiled again", raw2):
        return
    before, after = cold_bytes(profiled, raw), cold_bytes(again, raw2)
    results.check(before == BLOCKS * SIZE and after == before,
                  f"{opt}: the profile of the hinted build has the first profile's cold "
                  f"bytes at the same context ({before} and {after} bytes)")
    ran, _ = hinted("from-second", second)
    if ran is not None:
        results.check(arenas(ran.stdout) == ((BLOCKS, 0, 0), (0, BLOCKS, 0)),
                      f"{opt}: built from the second profile, the cold bytes are placed in "
                      f"the cold arena again", ran.stdout)


def profiled_and_hinted(label, name, source):
    """SOURCE (with the allocator) profiled at -O2 with
    -fno-optimize-sibling-calls, then built with its profile without it,
    and run: (the hinted binary, the run), or None when a step failed
    (reported)."""
    work = os.path.join(WORK, name)
    os.makedirs(work)
    profiled = os.path.join(work, "profiled")
    built = build(profiled, "-O2", [source, ALLOC], ["-fno-optimize-sibling-calls"],
                  pkg_config("memprof", "--libs"))
    if not results.check(built.returncode == 0, f"{label}: the profiled build builds",
                         built.stderr[-500:]):
        return None
    mprof, raw = profile(name, profiled, work)
    if not results.check(mprof is not None, f"{label}: profiled and merged", raw):
        return None
    binary = os.path.join(work, "hinted")
    built = build(binary, "-O2", [source, ALLOC, CHECK],
                  ["-fplugin-arg-memprof-use=" + mprof, *THRESHOLDS],
                  pkg_config("memprof-hint", "--libs"))
    if not results.check(built.returncode == 0 and "context-classified: 1" in built.stderr,
                         f"{label}: the hinted build (without -fno-optimize-sibling-calls) "
                         "builds and classifies the allocator's call by context",
                         built.stderr[-800:]):
        return None
    return binary, execute(binary)


def check_tail_calls():
    """The profiled build's calls kept as calls, its tail calls not."""
    done = profiled_and_hinted("tail calls", "tail", TAIL)
    if done is None:
        return
    binary, ran = done
    results.check(ran.returncode == 0 and arenas(ran.stdout) == ((BLOCKS, 0, 0), (0, BLOCKS, 0)),
                  f"tail calls: the frames the profile has are on the hinted build's stack: "
                  f"all {BLOCKS} cold blocks in the cold arena, all {BLOCKS} hot ones in the "
                  f"hot arena", ran.stdout + ran.stderr[-500:])
    # The same profile with thresholds that leave every context not cold
    # (the call not classified by context): no walk, so no frame to keep,
    # and fill_cold jumps to store as the build without a profile does
    # (m4, whose calls all decline).
    declined = os.path.join(WORK, "tail", "declined")
    built = build(declined, "-O2", [TAIL, ALLOC, CHECK],
                  ["-fplugin-arg-memprof-use=" + os.path.join(WORK, "tail", "tail.mprof"),
                   "-fplugin-arg-memprof-cold-lifetime=1000000",
                   "-fplugin-arg-memprof-hot-density=1000000000"],
                  pkg_config("memprof-hint", "--libs"))
    ends = {name: calls_store(path) for name, path in (("hinted", binary), ("declined", declined))}
    results.check(built.returncode == 0 and "context-classified: 0" in built.stderr
                  and ends == {"hinted": "call", "declined": "jmp"},
                  "tail calls: fill_cold calls store in the hinted build, and jumps to it "
                  "when no call is classified by context (no walk: tail calls as without "
                  "a profile)",
                  f"{ends} {built.stderr[-500:]}")


def check_hub():
    """A big function whose frame tells nothing is left without a frame
    pointer; the blocks still go where the profile says."""
    done = profiled_and_hinted("hub", "hub", HUB)
    if done is None:
        return
    binary, ran = done
    kept = {name: has_frame_pointer(binary, name) for name in ("make", "mid", "hub")}
    results.check(kept == {"make": True, "mid": True, "hub": False},
                  "hub: frame pointers kept where the walk needs them (make, mid), left out "
                  "where the frame tells the classes nothing apart (hub, big, on every "
                  "context of its kind, as Lua's luaV_execute)", str(kept))
    results.check(ran.returncode == 0 and arenas(ran.stdout) == ((BLOCKS, 0, 0), (0, BLOCKS, 0)),
                  f"hub: without hub's frame pointer, all {BLOCKS} cold blocks go to the cold "
                  f"arena, all {BLOCKS} hot ones to the hot arena", ran.stdout + ran.stderr[-500:])


def check_preprocessed(label, name, profiled_flags, hinted_flags):
    """context_macro.c profiled with PROFILED_FLAGS, hinted with
    HINTED_FLAGS (-save-temps=obj: the units compiled from the .i files
    the driver writes beside the output)."""
    work = os.path.join(WORK, name)
    os.makedirs(work)
    profiled = os.path.join(work, "profiled")
    built = build(profiled, "-O2", [MACRO, ALLOC],
                  ["-fno-optimize-sibling-calls", *profiled_flags],
                  pkg_config("memprof", "--libs"))
    if not results.check(built.returncode == 0, f"{label}: the profiled build builds",
                         built.stderr[-500:]):
        return
    mprof, raw = profile(name, profiled, work)
    if not results.check(mprof is not None, f"{label}: profiled and merged", raw):
        return
    binary = os.path.join(work, "hinted")
    built = build(binary, "-O2", [MACRO, ALLOC, CHECK],
                  ["-fno-optimize-sibling-calls", "-fplugin-arg-memprof-use=" + mprof,
                   *THRESHOLDS, *hinted_flags],
                  pkg_config("memprof-hint", "--libs"))
    if not results.check(built.returncode == 0 and "context-classified: 1" in built.stderr,
                         f"{label}: the hinted build classifies the allocator's call by "
                         "context", built.stderr[-800:]):
        return
    ran = execute(binary)
    results.check(ran.returncode == 0 and arenas(ran.stdout) == ((BLOCKS, 0, 0), (0, BLOCKS, 0)),
                  f"{label}: all {BLOCKS} cold blocks in the cold arena, all {BLOCKS} hot "
                  "ones in the hot arena", ran.stdout + ran.stderr[-500:])


def main():
    if not os.path.exists(MEMPROF):
        sys.exit(f"context-hints: build the tree first: {MEMPROF} is missing")
    shutil.rmtree(WORK, ignore_errors=True)
    os.makedirs(WORK)
    for opt in ("-O0", "-O2"):
        check_level(opt)
    check_tail_calls()
    check_hub()
    check_preprocessed("preprocessed input", "save-temps", [], ["-save-temps=obj"])
    check_preprocessed("a profile of preprocessed input, columns=0", "columns-off",
                       ["-save-temps=obj"], ["-fplugin-arg-memprof-columns=0"])
    return results.finish()


if __name__ == "__main__":
    sys.exit(main())
