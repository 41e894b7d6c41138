#!/usr/bin/env python3
"""Would a calling-context value beat the frame walk on Lua?  An estimate,
before building it (issue 19, "or the calling-context value").

The context-classified entry point of libmemprof_hint walks frame
pointers up its table's depth at every classified allocation.  The other
way: at each call whose frame key some cold or hot entry of a table has
(a "marked" call), keep a per-thread value up to date (before the call
V = combine (V at the function's entry, the call's key), after it V
restored), and let the entry point look V up instead of walking.  The
walk is paid once per classified allocation, the value at every marked
call, whether an allocation follows or not.  This script measures, on
the feedback build that bench/hint_real.py left in bench/work/hint-real:

  1. the marked calls run per classified allocation: the tables' keys
     (MEMPROF_HINT_DEBUG=1), the return addresses the plugin's ELF notes
     give those keys, and how often each runs (callgrind --dump-instr=yes
     on ROUNDS rounds; the instruction at a return address runs once per
     return of its call);
  2. what the walk costs now, by object: the entry points' own
     instructions and Lua's own code against jemalloc alone (its frame
     pointers and kept calls), which the value would save at most;
  3. what the value costs: a prototype, bench/realprog/lua_context_value.patch
     (Debian's lua5.4 5.4.4), keeps it at the 19 marked calls that ran
     more than 1000 times on a profile of depth 5 (99.5% of its marked
     calls), in Lua built with jemalloc alone, two ways: with the copy
     saved at the function's entry (what repairs the value after a
     longjmp), and the floor (the value read at the call, nothing
     saved).  Its instructions against jemalloc alone's are the upkeep,
     over its marked calls (counted by a build of its own, -DPCC_COUNT)
     the cost a marked call.

Every run fixes time () by a preloaded stub (Lua seeds its string hashing
with it), so runs differ by about 1 M instructions; each count is the
median of --repeat runs.  Writes bench/results/hint-context-value.md
(--output); --feedback measures other feedback builds of lua5.4 (each
BINARY=WHAT, WHAT said in the report).

Usage: bench/hint_context_value.py [--cc gcc] [--rounds 1000] [--repeat 3]
                                   [--feedback BINARY[=WHAT]...]"""

import argparse
import datetime
import os
import re
import shutil
import struct
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(HERE)
sys.path.insert(0, HERE)
import debsrc  # noqa: E402
import hint_real  # noqa: E402

WORK = os.path.join(HERE, "work", "hint-context-value")
PATCH = os.path.join(HERE, "realprog", "lua_context_value.patch")
SCRIPT = os.path.join(HERE, "workloads", "hint_real.lua")
NOTE_SECTION = ".note.memprof.sites"


def run(command, **kwargs):
    result = subprocess.run(command, capture_output=True, text=True, **kwargs)
    if result.returncode != 0:
        sys.exit(f"hint_context_value: {' '.join(command[:3])}... failed "
                 f"(exit {result.returncode}):\n{result.stderr[-1500:]}")
    return result


def note_sites(binary):
    """(return address, frame key) of every record of the plugin's notes,
    addresses as offsets in the file's address space."""
    sections = run(["readelf", "-SW", binary]).stdout
    found = re.search(re.escape(NOTE_SECTION) + r"\s+NOTE\s+([0-9a-f]+)\s+([0-9a-f]+)\s+"
                      r"([0-9a-f]+)", sections)
    if not found:
        return []
    address, offset, size = (int(field, 16) for field in found.groups())
    with open(binary, "rb") as handle:
        handle.seek(offset)
        data = handle.read(size)
    sites, position = [], 0
    while position + 12 <= len(data):
        name_size, descriptor_size, _ = struct.unpack_from("<III", data, position)
        position += 12 + ((name_size + 3) & ~3)
        for record in range(descriptor_size // 12):
            at = position + 12 * record
            relative, low, high = struct.unpack_from("<iII", data, at)
            sites.append((address + at + relative, high << 32 | low))
        position += (descriptor_size + 3) & ~3
    return sites


def callgrind(binary, rounds, output, env):
    """One callgrind run with per-instruction counts: {object: {address:
    count}} (self cost: the lines after calls= are inclusive costs and
    skipped)."""
    run(["valgrind", "--tool=callgrind", "--dump-instr=yes",
         "--callgrind-out-file=" + output, binary, SCRIPT, str(rounds)], env=env)
    names, counts, current, address, skip = {}, {}, None, 0, False
    with open(output) as handle:
        for line in handle:
            if line.startswith(("ob=", "cob=")):
                found = re.match(r"c?ob=\((\d+)\)(?: (.*))?", line.strip())
                if found.group(2):
                    names[found.group(1)] = found.group(2)
                if line.startswith("ob="):
                    current = counts.setdefault(names[found.group(1)], {})
                continue
            if line.startswith("calls="):
                skip = True
                continue
            if not line[:1] or not (line[0] in "+-*" or line.startswith("0x")):
                continue
            fields = line.split()
            position = fields[0]
            if position.startswith("0x"):
                address = int(position, 16)
            elif position[0] in "+-":
                address += int(position, 0) if position[1:].startswith("0x") else int(position)
            if skip:
                skip = False
                continue
            if len(fields) >= 3 and current is not None:
                current[address] = current.get(address, 0) + int(fields[2])
    os.unlink(output)
    return counts


def totals(counts):
    return {os.path.basename(name): sum(by_address.values()) for name, by_address in counts.items()}


def median_run(binary, rounds, repeat, env, tag):
    """Per-object instruction totals (median of REPEAT runs of the whole)
    and the per-address counts of the run nearest that median."""
    runs = [callgrind(binary, rounds, os.path.join(WORK, f"{tag}.{index}.cg"), env)
            for index in range(repeat)]
    whole = [sum(totals(counts).values()) for counts in runs]
    middle = sorted(range(repeat), key=lambda index: whole[index])[repeat // 2]
    return runs[middle], whole[middle]


def function_instructions(counts, library, names):
    """Instructions in LIBRARY's functions NAMES (nm's symbol sizes)."""
    symbols = run(["nm", "-S", "--defined-only", library]).stdout
    spans = []
    for line in symbols.splitlines():
        fields = line.split()
        if len(fields) == 4 and any(fields[3].startswith(name) for name in names):
            start, size = int(fields[0], 16), int(fields[1], 16)
            spans.append((start, start + size))
    by_address = next((value for key, value in counts.items()
                       if os.path.basename(key) == os.path.basename(library)), {})
    return sum(count for address, count in by_address.items()
               if any(start <= address < end for start, end in spans))


def build_prototype(cc, tree, output, extra):
    """Lua with the prototype's value, linked with jemalloc alone."""
    source = os.path.join(WORK, "lua-context-value")
    if not os.path.isdir(source):
        shutil.copytree(tree, source, ignore=shutil.ignore_patterns("*.o"))
        run(["patch", "-p1", "-s", "-i", PATCH], cwd=source)
    include = os.path.join(WORK, "include")
    os.makedirs(include, exist_ok=True)
    for header, text in hint_real.PROGRAMS["lua5.4"]["headers"].items():
        with open(os.path.join(include, header), "w") as out:
            out.write(text)
    sources = hint_real.lua_sources(source)  # the patch adds src/pccv.c
    run([cc, "-O2", "-g", "-I" + include, *hint_real.PROGRAMS["lua5.4"]["cflags"],
         "-include", os.path.join(source, "src", "pcc.h"), *extra, *sources, "-o", output,
         "-lm", *hint_real.JEMALLOC_ALONE])


def measure_feedback(feedback, jemalloc_counts, jemalloc_whole, args, env):
    """The marked calls of FEEDBACK's tables and what its walk costs."""
    debug = subprocess.run([feedback, SCRIPT, "30"], capture_output=True, text=True,
                           env=dict(env, MEMPROF_HINT_DEBUG="1"))
    entries = [line.rsplit(": ", 1)[1].split() for line in debug.stderr.splitlines()
               if "debug: table " in line]
    if not entries:
        sys.exit(f"hint_context_value: {feedback} has no context table")
    keys = {int(key, 16) for entry in entries for key in entry if int(key, 16) != 0}
    marked = [(address, key) for address, key in note_sites(feedback) if key in keys]
    stats = subprocess.run([feedback, SCRIPT, str(args.rounds)], capture_output=True,
                           text=True, env=dict(env, MEMPROF_HINT_STATS="1"))
    classified = sum(int(count) for count in re.findall(r"(\d+) calls \d+ bytes",
                                                        stats.stderr))
    shares = re.search(r"l_alloc: (.*)", stats.stderr)
    counts, whole = median_run(feedback, args.rounds, args.repeat, env, "feedback")
    program = counts.get(next(name for name in counts
                              if os.path.basename(name) == os.path.basename(feedback)), {})
    runs = sorted(((program.get(address, 0), address) for address, _ in marked), reverse=True)
    library = os.path.join(TOP, "runtime", "hint", "libmemprof_hint.so")
    own = {name: value for name, value in totals(jemalloc_counts).items()
           if name.startswith("lua")}
    return dict(entries=len(entries), depth=max(len(entry) for entry in entries),
                keys=len(keys), marked=len(marked), classified=classified,
                shares=shares.group(1) if shares else "", runs=runs,
                marked_calls=sum(count for count, _ in runs), whole=whole,
                entry_point=function_instructions(counts, library,
                                                  ("__memprof_hint_context_",)),
                lua_own=(totals(counts).get(os.path.basename(feedback), 0)
                         - sum(own.values())))


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cc", default="gcc")
    parser.add_argument("--rounds", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--feedback", nargs="+", metavar="BINARY[=WHAT]",
                        help="feedback builds of lua5.4, each with what it is for the "
                        "report (default: bench/hint_real.py's)")
    parser.add_argument("--jemalloc", help="lua5.4 with jemalloc alone (default: "
                        "bench/hint_real.py's)")
    parser.add_argument("--output", default=os.path.join(HERE, "results",
                                                         "hint-context-value.md"))
    args = parser.parse_args()
    if shutil.which("valgrind") is None:
        sys.exit("hint_context_value: needs valgrind")
    built = os.path.join(hint_real.WORK, "lua5.4")
    given = args.feedback or [os.path.join(built, "lua5.4_feedback") + "=the feedback build "
                              "of the last bench/hint_real.py run"]
    feedbacks = [item.split("=", 1)[0] for item in given]
    described = [item.split("=", 1)[1] if "=" in item else "" for item in given]
    jemalloc = args.jemalloc or os.path.join(built, "lua5.4_jemalloc")
    for binary in feedbacks + [jemalloc]:
        if not os.path.exists(binary):
            sys.exit(f"hint_context_value: no {binary}: run bench/hint_real.py first")
    os.makedirs(WORK, exist_ok=True)
    stub = os.path.join(WORK, "fixed_time.so")
    stub_source = os.path.join(WORK, "fixed_time.c")
    with open(stub_source, "w") as out:
        out.write("#include <time.h>\n"
                  "time_t time (time_t *t) { if (t) *t = 1700000000; return 1700000000; }\n")
    run([args.cc, "-O2", "-shared", "-fPIC", stub_source, "-o", stub])
    env = dict(os.environ, LD_PRELOAD=stub)
    env.pop("MEMPROF_HINT_STATS", None)

    print("hint_context_value: counting (callgrind)", flush=True)
    jemalloc_counts, jemalloc_whole = median_run(jemalloc, args.rounds, args.repeat, env,
                                                 "jemalloc")
    measured = [measure_feedback(feedback, jemalloc_counts, jemalloc_whole, args, env)
                for feedback in feedbacks]

    # The prototype's upkeep, and its marked calls counted apart (a
    # build that counts them, not timed).
    tree = debsrc.fetch("lua5.4", "src/lua.c", who="hint_context_value")
    prototypes = {"copy saved at the function's entry": [],
                  "floor: read at the call, nothing saved": ["-DPCC_FLOOR"]}
    expected = run([jemalloc, SCRIPT, "30"], env=env).stdout
    upkeep = {}
    for index, (label, flags) in enumerate(prototypes.items()):
        binary = os.path.join(WORK, f"lua_value_{index}")
        build_prototype(args.cc, tree, binary, flags)
        if run([binary, SCRIPT, "30"], env=env).stdout != expected:
            sys.exit(f"hint_context_value: the prototype ({label}) printed another output")
        build_prototype(args.cc, tree, binary + "_count", flags + ["-DPCC_COUNT"])
        counted = run([binary + "_count", SCRIPT, str(args.rounds)], env=env).stderr
        calls = int(re.search(r"pcc: (\d+) marked calls", counted).group(1))
        _, whole = median_run(binary, args.rounds, args.repeat, env, f"value{index}")
        upkeep[label] = (whole - jemalloc_whole, calls)

    lines = [
        "# A calling-context value instead of the frame walk: an estimate on Lua", "",
        f"Produced by `bench/hint_context_value.py --rounds {args.rounds} --repeat "
        f"{args.repeat}` on {datetime.date.today().isoformat()}; instructions counted by "
        "`valgrind --tool=callgrind`, `time ()` fixed, medians of "
        f"{args.repeat} runs of {args.rounds} rounds. Lua with jemalloc alone: "
        f"{jemalloc_whole / 1e6:.1f} M.", "",
        "The prototype's upkeep: Lua with the value kept at 19 marked calls (fixed: "
        "those of one profile of depth 5 that ran more than 1000 times, numbered in "
        "bench/realprog/lua_context_value.patch), linked with jemalloc alone, against "
        "jemalloc alone:", "",
        "| prototype | marked calls | upkeep | a marked call |", "|---|---:|---:|---:|"]
    for label, (cost, calls) in upkeep.items():
        lines.append(f"| {label} | {calls} | {cost / 1e6:+.1f} M | "
                     f"{cost / calls if calls else 0:.1f} |")
    for feedback, what, result in zip(feedbacks, described, measured):
        marked_calls, classified = result["marked_calls"], result["classified"]
        saved_most = result["entry_point"] + result["lua_own"]
        budget = jemalloc_whole - result["whole"] + saved_most
        lines += [
            "", f"## {os.path.relpath(feedback, TOP)}", "",
            (what[0].upper() + what[1:] + ". " if what else "")
            + f"Its table: {result['entries']} cold or hot entries, depth {result['depth']}, "
            f"{result['keys']} frame keys, which the plugin's notes give "
            f"{result['marked']} return addresses (the calls a value would be kept at). "
            f"At run time: {result['shares']}.", "",
            f"Classified allocations: {classified}; marked calls run: {marked_calls}, "
            f"**{marked_calls / classified if classified else 0:.2f} a classified "
            "allocation**. The most run:", "",
            "| runs | call (return address - 1) |", "|---:|---|"]
        for count, address in result["runs"][:12]:
            where = run(["addr2line", "-f", "-e", feedback, hex(address - 1)]).stdout.split()
            lines.append(f"| {count} | `{where[0]}` "
                         f"{os.path.basename(where[1]) if len(where) > 1 else ''} |")
        lines += [
            "",
            f"The whole run {result['whole'] / 1e6:.1f} M "
            f"(**{result['whole'] / jemalloc_whole:.4f}** of jemalloc alone). The entry "
            f"points' own instructions {result['entry_point'] / 1e6:.1f} M "
            f"({result['entry_point'] / classified if classified else 0:.1f} a classified "
            f"allocation); Lua's own code {result['lua_own'] / 1e6:+.1f} M against "
            "jemalloc alone (frame pointers, kept calls, l_alloc's call). A value saves "
            f"at most both, {saved_most / 1e6:.1f} M (a lookup of no cost), so it "
            f"reaches jemalloc alone only with an upkeep of at most {budget / 1e6:.1f} M, "
            f"**{budget / marked_calls if marked_calls else 0:.2f} instructions a marked "
            "call**. With the prototype's cost a marked call:", "",
            "| prototype | estimate | vs jemalloc alone |", "|---|---:|---:|"]
        for label, (cost, calls) in upkeep.items():
            estimate = result["whole"] - saved_most + (cost / calls if calls else 0) * marked_calls
            lines.append(f"| {label} | {estimate / 1e6:.1f} M | "
                         f"{estimate / jemalloc_whole:.4f} |")
    lines.append("")
    text = "\n".join(lines)
    print(text)
    with open(args.output, "w") as out:
        out.write(text)
    print(f"hint_context_value: wrote {os.path.relpath(args.output, TOP)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
