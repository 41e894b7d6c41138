#!/usr/bin/env python3
"""Our symbolizer (analysis/symbolize/symbolize.c) against llvm-profdata-19's.

Builds the driver symbolize-addresses.c, then builds programs with gcc,
linked with libmemprof.so (through memprof-uninstalled.pc), runs them to
get raw profiles, and checks that every allocation context has the same
frames in both views:
  - ours: `symbolize-addresses BINARY PROFILE` (analysis/symbolize/symbolize.c);
  - LLVM's: `llvm-profdata-19 show --memory PROFILE --profiled-binary BIN`,
    read with scripts/llvm_memprof_yaml.py (function, line offset, column)
    and, for the GUID and Inline fields, with the small reader below.
A context is its frames (leaf first) with AllocCount, TotalAccessCount and
TotalSize; a frame is (GUID = MD5 of the canonical linkage name, the name,
LineOffset, Column, Inline).  Every context of one view must be in the
other.

Programs: the C and C++ programs of testsuite/compat/ and the ones below
(inline chains, hot/cold split functions, nested functions, #line, C++
names: namespaces, templates, constructors, lambdas, virtual functions,
default arguments, a function without debug info), each at -O0 and -O2,
PIE and -no-pie; then two of them under other debug formats (DWARF 4,
split DWARF, compressed, no columns, -g1).

Sweeps: for bigger binaries (template-heavy C++ at -O0 to -O3, DWARF 4,
split DWARF, -no-pie; about 120 units of libiberty and zlib from Debian's
gcc-12-source when installed), a raw profile made here with one context
per call site (return address - 1 of every call instruction, and every
5th instruction) goes through both views; and `llvm-symbolizer-19
--inlining` checks the files, lines, columns and decl_lines of the same
addresses.  Then symbolize_demangle, the error cases (not ELF, no build
id, no DWARF, another binary's profile) and DWARF found through
.gnu_debuglink, and the time to symbolize every address of a profile with
16,384 contexts.

llvm-profdata-19 has one bug these comparisons meet: its frame ids
(Frame::hash) collide for frames of one function with nearby line offsets
and columns, and it then prints one frame for all of them.  A context
whose frames differ from llvm-profdata's only by such a collision passes
and is reported on an INFO line.

Prints one line per check and ends with `symbolize: N passed, N failed`.
"""

import argparse
import concurrent.futures
import glob
import hashlib
import json
import os
import re
import shutil
import struct
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(TOP, "scripts"))
sys.path.insert(0, os.path.join(TOP, "testsuite", "lib"))
import llvm_memprof_yaml  # noqa: E402
from report import Report  # noqa: E402

COMPAT = os.path.join(TOP, "testsuite", "compat")

results = Report("symbolize")

# ---- Programs of our own (written into the work directory) ----

INLINE_C = r"""/* Inline chains, a split hot/cold function, a nested function, a
   macro, a recursive function and, last, a #line that puts a call before
   its function's decl_line.  */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static inline __attribute__ ((always_inline)) void *
inner_alloc (size_t n)
{
  return malloc (n);
}

static inline __attribute__ ((always_inline)) void *
middle_alloc (size_t n)
{
  void *p = inner_alloc (n * 2);
  return p;
}

static void *
called_once (size_t n)
{
  return middle_alloc (n + 1);
}

__attribute__ ((cold, noinline)) static void
report_rare (void)
{
  fputs ("", stderr);
}

__attribute__ ((noinline)) void *
maybe_cold (size_t n, int rare)
{
  if (rare)
    {
      report_rare ();
      return calloc (1, n + 3);
    }
  return malloc (n);
}

#define ALLOCATE(n) calloc (2, (n))

__attribute__ ((noinline)) void *
by_macro (size_t n)
{
  return ALLOCATE (n);
}

__attribute__ ((noinline)) void *
with_nested (size_t n)
{
  __attribute__ ((noinline)) void *nested (size_t m)
  {
    return realloc (NULL, m);
  }
  return nested (n + 5);
}

__attribute__ ((noinline)) void *
recursive (int depth)
{
  if (depth == 0)
    return malloc (24);
  void *p = recursive (depth - 1);
  return p;
}

void *after_line_directive (size_t n);

int
main (void)
{
  void *blocks[10];
  int k = 0;
  blocks[k++] = called_once (10);
  blocks[k++] = middle_alloc (20);
  blocks[k++] = maybe_cold (30, 0);
  blocks[k++] = maybe_cold (40, 1);
  blocks[k++] = by_macro (50);
  blocks[k++] = with_nested (60);
  blocks[k++] = recursive (3);
  blocks[k++] = after_line_directive (70);
  for (int i = 0; i < k; i++)
    {
      memset (blocks[i], 1, 8);
      free (blocks[i]);
    }
  return 0;
}

__attribute__ ((noinline)) void *
after_line_directive (size_t n)
{
#line 3
  return malloc (n);
}
"""

NAMES_CC = r"""// C++ names: namespaces, a class template's constructor and member,
// a default argument (the call is on a line before its caller's
// decl_line), virtual functions, a lambda, a static function, operator
// new inside std::map and std::unique_ptr.
#include <cstdio>
#include <map>
#include <memory>

static int *
make_default (int *p = new int (42))
{
  return p;
}

namespace outer
{
namespace inner
{
template <typename T> struct Box
{
  T *value;
  explicit Box (T v) : value (new T (v)) {}
  ~Box () { delete value; }
  T *
  clone () const
  {
    return new T (*value);
  }
};
}
}

struct Base
{
  virtual ~Base () {}
  virtual char *make () = 0;
};

struct Derived : Base
{
  char *
  make () override
  {
    return new char[17];
  }
};

__attribute__ ((noinline)) static long *
local_function (int n)
{
  return new long[n];
}

int
main ()
{
  outer::inner::Box<int> box (3);
  int *copy = box.clone ();
  int *defaulted = make_default ();
  Base *base = new Derived;
  char *made = base->make ();
  auto lambda = [] (int n) { return new short[n]; };
  short *shorts = lambda (9);
  long *longs = local_function (5);
  std::map<int, int> map;
  map[1] = 2;
  std::unique_ptr<double> unique = std::make_unique<double> (1.5);
  made[0] = 'm';
  shorts[0] = 7;
  longs[0] = 8;
  std::printf ("%d %d %d %d %c %d %ld\n", *copy, *defaulted, map[1],
               (int) *unique, made[0], shorts[0], longs[0]);
  delete copy;
  delete defaulted;
  delete[] made;
  delete base;
  delete[] shorts;
  delete[] longs;
  return 0;
}
"""

NODEBUG_MAIN_C = r"""/* The allocating function is in an object built without debug
   information: LLVM drops its address, so the leaf becomes its caller.  */
#include <stdlib.h>

void *plain_alloc (size_t n);

__attribute__ ((noinline)) static void *
with_debug (size_t n)
{
  return plain_alloc (n);
}

int
main (void)
{
  void *p = with_debug (100);
  void *q = malloc (200);
  free (p);
  free (q);
  return 0;
}
"""

NODEBUG_HELPER_C = r"""#include <stdlib.h>

__attribute__ ((noinline)) void *
plain_alloc (size_t n)
{
  void *p = malloc (n);
  __asm__ volatile ("" : : "r"(p) : "memory");
  return p;
}
"""


def many_contexts_source(levels=7, fanout=4):
    """A program with fanout**levels allocation contexts: each level calls
    the next from one of FANOUT lines chosen by the path number."""
    lines = ["#include <stdlib.h>", "",
             "static void *blocks[%d];" % fanout ** levels, "static int count;", "",
             "__attribute__ ((noinline)) static void",
             "level%d (int path)" % levels, "{",
             "  blocks[count++] = malloc (16 + (path & 7));", "}", ""]
    for level in range(levels - 1, -1, -1):
        lines += ["__attribute__ ((noinline)) static void",
                  "level%d (int path)" % level, "{", "  switch (path %% %d)" % fanout, "    {"]
        for case in range(fanout):
            lines += ["    case %d:" % case,
                      "      level%d (path / %d);" % (level + 1, fanout),
                      "      blocks[count - 1] = blocks[count - 1];",
                      "      break;"]
        lines += ["    }", "}", ""]
    lines += ["int", "main (void)", "{",
              "  for (int path = 0; path < %d; path++)" % fanout ** levels,
              "    level0 (path);",
              "  for (int i = 0; i < count; i++)", "    free (blocks[i]);",
              "  return 0;", "}", ""]
    return "\n".join(lines)


# ---- Building and running ----

def run(command, **kwargs):
    return subprocess.run(command, capture_output=True, text=True, errors="replace",
                          **kwargs)


def pkg_config(*args):
    env = dict(os.environ, PKG_CONFIG_PATH=TOP)
    result = subprocess.run(["pkg-config", *args, "memprof"], capture_output=True,
                            text=True, env=env, check=True)
    return result.stdout.split()


def build_driver(args, work):
    driver = os.path.join(work, "symbolize-addresses")
    dw = subprocess.run(["pkg-config", "--cflags", "--libs", "libdw", "libelf"],
                        capture_output=True, text=True).stdout.split()
    build = run([args.cc, "-std=gnu11", "-O2", "-g", "-Wall", "-Wextra",
                 "-Iinclude", "-Iformats", "-Ianalysis/symbolize",
                 "testsuite/analysis/symbolize-addresses.c",
                 "analysis/symbolize/symbolize.c", "formats/rawreader.c",
                 "formats/mib.c", *dw, "-liberty",
                 "-o", driver], cwd=TOP)
    if not results.check(build.returncode == 0 and build.stderr == "",
                         "symbolize-addresses builds without warnings", build.stderr):
        return None
    return driver


class Program:
    """SOURCES: {name: text or None (a file of testsuite/compat)}; the first
    one is the main source.  NODEBUG: names compiled with -g0."""

    def __init__(self, name, sources, cxx=False, nodebug=()):
        self.name, self.sources, self.cxx, self.nodebug = name, sources, cxx, set(nodebug)


def build_and_run(args, program, directory, flags):
    """Build PROGRAM in DIRECTORY with FLAGS, run it; (binary, profile) or
    None after a failed check."""
    os.makedirs(directory)
    label = os.path.basename(directory)
    compiler = args.cxx if program.cxx else args.cc
    cflags = pkg_config("--cflags") + ["-I" + COMPAT, "-pthread",
                                       "-fno-optimize-sibling-calls"]
    inputs = []
    for name, text in program.sources.items():
        if text is None:
            inputs.append(os.path.join(COMPAT, name))
        else:
            with open(os.path.join(directory, name), "w") as out:
                out.write(text)
            inputs.append(name)
    objects = []
    for source in inputs:
        debug = ["-g0"] if os.path.basename(source) in program.nodebug else ["-g"]
        pic = "-fPIE" if "-pie" in flags else "-fno-PIE"
        obj = os.path.splitext(os.path.basename(source))[0] + ".o"
        compile_flags = [f for f in flags if f not in ("-pie", "-no-pie")]
        compile_ = run([compiler, *cflags, *debug, pic, *compile_flags, "-c", source,
                        "-o", obj],
                       cwd=directory)
        if not results.check(compile_.returncode == 0, f"{label}: compiles {os.path.basename(source)}",
                             compile_.stderr):
            return None
        objects.append(obj)
    binary = os.path.join(directory, program.name)
    link = run([compiler, *[f for f in flags if f in ("-pie", "-no-pie")], "-pthread",
                *objects, "-o", binary, *pkg_config("--libs")], cwd=directory)
    if not results.check(link.returncode == 0, f"{label}: links", link.stderr):
        return None
    env = dict(os.environ, MEMPROF_OPTIONS=f"profile_file={directory}/profile.%p")
    ran = run([binary], cwd=directory, env=env)
    profiles = [p for p in glob.glob(os.path.join(directory, "profile.*"))
                if not p.endswith(".extra")]
    if not results.check(len(profiles) == 1, f"{label}: runs and writes one profile",
                         f"{ran.returncode} {ran.stderr} {profiles}"):
        return None
    return binary, profiles[0]


# ---- The two views of a profile ----

def canonical_name(name):
    """LLVM's FunctionSamples::getCanonicalFnName(name, "selected"): drop a
    trailing .llvm.N or .part.N suffix (not .__uniq.)."""
    for suffix in (".llvm.", ".part."):
        at = name.rfind(suffix)
        if at >= 0 and name.rfind(".") == at + len(suffix) - 1:
            name = name[:at]
    return name


def guid(name):
    """LLVM's function GUID: the first 8 bytes of MD5, little-endian."""
    return int.from_bytes(hashlib.md5(name.encode()).digest()[:8], "little")


def our_contexts(driver, binary, profile):
    """{(frames, count, accesses, size)}, frames as (guid, name, offset,
    column, inline); or a string saying what went wrong."""
    result = run([driver, binary, profile])
    if result.returncode != 0:
        return f"symbolize-addresses exit {result.returncode}: {result.stderr}"
    contexts, current, key = set(), None, None

    def finish():
        if key is not None:
            contexts.add((tuple(current), *key))

    for line in result.stdout.splitlines():
        words = line.split()
        if line.startswith("stack "):
            finish()
            current, key = [], None
            if words[2] != "dropped":
                fields = dict(word.split("=") for word in words[2:])
                key = (int(fields["count"]), int(fields["accesses"]), int(fields["size"]))
        else:
            # Names without a linkage name may hold spaces ("operator new").
            name, offset, column, inline = line.strip().rsplit(" ", 3)
            name = canonical_name(name)
            current.append((guid(name), name, int(offset), int(column), int(inline)))
    finish()
    return contexts


MIB_KEYS = ("AllocCount:", "TotalAccessCount:", "TotalSize:")


def llvm_full_contexts(yaml_text):
    """The AllocSites of `show --memory` with every frame field:
    {(frames, count, accesses, size)}, frames as (guid, name, offset,
    column, inline)."""
    contexts = set()
    in_alloc_sites, mode, frames, frame, mib = False, None, [], {}, {}

    def finish():
        if mode is not None and frames:
            contexts.add((tuple(frames), mib.get("AllocCount"),
                          mib.get("TotalAccessCount"), mib.get("TotalSize")))

    for raw in yaml_text.splitlines():
        line = raw.strip()
        if line == "AllocSites:":
            in_alloc_sites = True
        elif line in ("CallSites:", "Records:") or line.startswith("FunctionGUID:"):
            finish()
            in_alloc_sites, mode, frames, mib = False, None, [], {}
        elif not in_alloc_sites:
            continue
        elif line == "Callstack:":
            finish()
            mode, frames, frame, mib = "stack", [], {}, {}
        elif line == "MemInfoBlock:":
            mode = "mib"
        elif mode == "stack" and ":" in line:
            key, value = line.split(":", 1)
            frame[key] = value.strip()
            if key == "Inline":
                frames.append((int(frame["Function"]), frame.get("SymbolName", "?"),
                               int(frame["LineOffset"]), int(frame["Column"]),
                               int(frame["Inline"])))
                frame = {}
        elif mode == "mib" and line.startswith(MIB_KEYS):
            key, value = line.split(":", 1)
            mib[key] = int(value)
    finish()
    return contexts


def describe(context):
    frames, count, accesses, size = context
    return " < ".join(f"{name}:{offset}:{column}{'(i)' if inline else ''}"
                      for _, name, offset, column, inline in frames) + \
        f" count={count} accesses={accesses} size={size}"


def llvm_frame_id(frame):
    """llvm::memprof::Frame::hash() of LLVM 19 (MemProf.h): a golden-ratio
    hash combine of the GUID, LineOffset, Column and Inline, with
    std::hash the identity.  It is weak: frames of one function with
    nearby (line offset, column) pairs can get the same id, and
    llvm-profdata then prints the first such frame it met for all of
    them."""
    mask = (1 << 64) - 1
    result = 0
    for value in (frame[0], frame[2], frame[3], frame[4]):
        result ^= (value + 0x9E3779B97F4A7C15 + (result << 6) + (result >> 2)) & mask
    return result


def same_but_llvm_collisions(ours, theirs):
    return len(ours) == len(theirs) and all(
        a == b or llvm_frame_id(a) == llvm_frame_id(b) for a, b in zip(ours, theirs))


def compare(args, driver, label, binary, profile, per_context=True):
    """Check that the contexts of PROFILE have the same frames in both
    views: one check per context, or with PER_CONTEXT false one for all.
    A context whose frames differ only where LLVM's frame ids collide
    passes (llvm-profdata shows another frame with the same id there: its
    bug, not ours), and is reported as such."""
    show = run([args.llvm_profdata, "show", "--memory", profile, "--profiled-binary", binary])
    if not results.check(show.returncode == 0, f"{label}: llvm-profdata show --memory",
                         show.stderr):
        return None
    ours = our_contexts(driver, binary, profile)
    if not results.check(isinstance(ours, set), f"{label}: symbolize-addresses runs", ours):
        return None
    theirs = llvm_full_contexts(show.stdout)
    if per_context:
        # The shared reader's view (names, offsets, columns) must agree
        # with the full one, so that both readers of the YAML are checked.
        shared = {(tuple(f), m.get("AllocCount"), m.get("TotalAccessCount"),
                   m.get("TotalSize"))
                  for f, m in llvm_memprof_yaml.alloc_sites(show.stdout)}
        reduced = {(tuple((n, o, c) for _, n, o, c, _ in frames), *rest)
                   for frames, *rest in theirs}
        results.check(shared == reduced, f"{label}: both YAML readers agree",
                      f"only in llvm_memprof_yaml: {list(shared - reduced)[:3]}; "
                      f"only here: {list(reduced - shared)[:3]}")

    only_theirs = theirs - ours
    by_mib = {}
    for context in only_theirs:
        by_mib.setdefault(context[1:], []).append(context)
    collided, wrong = {}, []
    for context in sorted(ours - theirs, key=describe):
        match = next((c for c in by_mib.get(context[1:], [])
                      if c in only_theirs and same_but_llvm_collisions(context[0], c[0])), None)
        if match is None:
            wrong.append(context)
        else:
            collided[context] = match
            only_theirs.discard(match)

    def instead(context, side):
        return "; ".join(describe(c) for c in side if c[1:] == context[1:]) or "nothing"

    if per_context:
        for context in sorted(ours, key=describe):
            ok = context not in wrong
            note = " (LLVM frame-id collision)" if context in collided else ""
            results.check(ok, f"{label}: {describe(context)}{note}",
                          "" if ok else "llvm-profdata has instead: " +
                          instead(context, only_theirs))
        for context in sorted(only_theirs, key=describe):
            results.check(False, f"{label}: llvm-profdata's {describe(context)}",
                          "missing from ours, which has: " + instead(context, wrong))
    else:
        detail = "; ".join(f"ours {describe(c)} / llvm {instead(c, only_theirs)}"
                           for c in wrong[:5])
        detail += "".join(f"; only llvm's {describe(c)}" for c in sorted(only_theirs)[:5]
                          if not any(w[1:] == c[1:] for w in wrong))
        results.check(not wrong and not only_theirs,
                      f"{label}: all {len(ours)} contexts have llvm-profdata's frames",
                      f"{len(wrong)} differ, {len(only_theirs)} only in llvm-profdata: {detail}")
    for context, match in list(collided.items())[:3]:
        print(f"INFO: {label}: LLVM frame-id collision: llvm-profdata shows "
              f"{describe(match)} for {describe(context)}")
    if len(collided) > 3:
        print(f"INFO: {label}: {len(collided)} contexts with LLVM frame-id collisions")
    results.check(len(ours) > 0, f"{label}: at least one context", "none")
    return len(ours)


# ---- Every call site of a binary ----

RAW_MAGIC = 0xFF6D70726F667281
RAW_MIB = "<IQQQQIIIIQIIIIIIIIQQIIQIIIQ"  # a v4 MemInfoBlock, 144 bytes


def executable_segment(binary):
    """(p_vaddr, p_memsz) of the executable PT_LOAD, or None."""
    out = run(["readelf", "-lW", binary]).stdout
    segments = [(int(w[2], 16), int(w[5], 16)) for w in map(str.split, out.splitlines())
                if w and w[0] == "LOAD" and "E" in w[6:-1]]
    return segments[0] if len(segments) == 1 else None


def build_id_of(binary):
    found = re.search(r"Build ID: ([0-9a-f]+)", run(["readelf", "-n", binary]).stdout)
    return bytes.fromhex(found.group(1)) if found else None


def call_sites(binary, every=5):
    """Return addresses - 1 of every call instruction of BINARY (what
    profiles hold), and every EVERY-th instruction's address."""
    listing = run(["objdump", "-d", "-w", "--no-show-raw-insn", binary]).stdout
    addresses, after_call, count = set(), False, 0
    for line in listing.splitlines():
        found = re.match(r"\s*([0-9a-f]+):\s+(\S+)", line)
        if not found:
            continue
        address = int(found.group(1), 16)
        if after_call:
            addresses.add(address - 1)
        after_call = found.group(2).startswith("call")
        count += 1
        if count % every == 0:
            addresses.add(address)
    return sorted(addresses)


def sweep_profile(binary, path):
    """Write a raw profile for BINARY (loaded at bias 0) with one context
    per call site: stack id i, one PC, a MIB whose TotalSize is the PC so
    that both views name it.  Returns the number of contexts, or None."""
    segment, build_id = executable_segment(binary), build_id_of(binary)
    if segment is None or build_id is None:
        return None
    start, size = segment
    # llvm-profdata rebases only Start < PC <= End.
    pcs = [pc for pc in call_sites(binary) if start < pc <= start + size]
    segments = struct.pack("<Q4Q", 1, start, start + size, 0, len(build_id)) + \
        build_id.ljust(32, b"\0")
    mibs = struct.pack("<Q", len(pcs)) + b"".join(
        struct.pack("<Q", i + 1) +
        struct.pack(RAW_MIB, 1, 0, 0, 0, pc, pc & 0xFFFFFFFF, pc & 0xFFFFFFFF, *[0] * 20)
        for i, pc in enumerate(pcs))
    stacks = struct.pack("<Q", len(pcs)) + b"".join(
        struct.pack("<3Q", i + 1, 1, pc) for i, pc in enumerate(pcs))
    mib_offset = 48 + len(segments)
    stack_offset = mib_offset + len(mibs)
    total = stack_offset + len(stacks)
    with open(path, "wb") as out:
        out.write(struct.pack("<6Q", RAW_MAGIC, 4, total, 48, mib_offset, stack_offset))
        out.write(segments + mibs + stacks)
    return len(pcs)


def our_frames(driver, binary, addresses):
    """{address: [(function, file, line, column, decl_line,
    from_symbol_table)]} from `symbolize-addresses --addresses`."""
    result = run([driver, "--addresses", binary],
                 input="".join(f"{a:x}\n" for a in addresses))
    frames, current = {}, None
    for line in result.stdout.splitlines():
        if line.startswith("\t"):
            name, file, *numbers = line[1:].split("\t")
            frames[current].append((name, file, *map(int, numbers)))
        else:
            current = int(line.split()[0], 16)
            frames[current] = []
    return frames


def check_against_llvm_symbolizer(args, driver, label, binary, addresses):
    """File, line, column and decl_line of every frame, and the names of
    all but the outermost one, as `llvm-symbolizer --inlining` gives them
    (the same DWARF code as llvm-profdata, but it takes the outermost
    frame's name from the ELF symbol table, and it shows files).
    Addresses we know only from the symbol table are left out."""
    query = run([args.llvm_symbolizer, "--obj=" + binary, "--inlining", "--functions=linkage",
                 "--no-demangle", "--output-style=JSON"],
                input="".join(f"0x{a:x}\n" for a in addresses))
    if query.returncode != 0:
        print(f"INFO: {label}: no llvm-symbolizer check: {query.stderr.strip()}")
        return
    ours = our_frames(driver, binary, addresses)
    checked, wrong = 0, []
    for line in query.stdout.splitlines():
        answer = json.loads(line)
        address = int(answer["Address"], 16)
        theirs = [(f["FunctionName"], f["FileName"], f["Line"], f["Column"], f["StartLine"])
                  for f in answer["Symbol"]]
        mine = ours.get(address, [])
        if mine and mine[0][5]:
            continue  # symbol table only: nothing to compare
        if all(frame[0] == "" for frame in theirs) or \
                (len(theirs) == 1 and theirs[0][1:3] == ("", 0)):
            ok = mine == []  # nothing known, or the symbol table only
        else:
            ok = len(mine) == len(theirs) and all(
                (a[0] == b[0] or i == len(theirs) - 1) and a[1:] == b[1:5]
                for i, (a, b) in enumerate(zip(theirs, mine)))
        checked += 1
        if not ok:
            wrong.append(f"0x{address:x}: llvm-symbolizer {theirs}, ours {mine}")
    results.check(not wrong and checked > 0,
                  f"{label}: files, lines, columns and decl_lines of {checked} addresses "
                  f"as llvm-symbolizer gives them",
                  f"{len(wrong)} differ: " + "; ".join(wrong[:5]))


def sweep(args, driver, label, binary):
    """Every call site of BINARY, in both views; and the time it takes."""
    profile = binary + ".sweep.profraw"
    count = sweep_profile(binary, profile)
    if not results.check(count, f"{label}: a profile of its call sites",
                         "no single executable segment or no build id"):
        return
    compare(args, driver, f"{label} ({count} addresses)", binary, profile, per_context=False)
    check_against_llvm_symbolizer(args, driver, label, binary, call_sites(binary))
    timed = run([driver, "--time", binary, profile])
    if timed.returncode == 0:
        print(f"INFO: {label}: " + timed.stdout.strip().replace("\n", "; "))


STL_1 = r"""// Heavy template code (regex, containers, std::function) for the sweep.
#include <algorithm>
#include <functional>
#include <map>
#include <memory>
#include <regex>
#include <string>
#include <unordered_map>
#include <vector>

namespace app
{
struct Item
{
  std::string name;
  std::vector<int> values;
  std::shared_ptr<Item> next;
};

template <typename K, typename V> class Cache
{
  std::unordered_map<K, V> map_;

public:
  V &
  get (const K &key, const std::function<V (const K &)> &make)
  {
    auto it = map_.find (key);
    if (it == map_.end ())
      it = map_.emplace (key, make (key)).first;
    return it->second;
  }
};

int
count_words (const std::string &text)
{
  std::regex words ("[a-z]+([0-9]*)");
  int n = 0;
  for (std::sregex_iterator i (text.begin (), text.end (), words), e; i != e; ++i)
    n += i->length ();
  return n;
}

std::map<std::string, std::vector<int> >
group (const std::vector<Item> &items)
{
  std::map<std::string, std::vector<int> > result;
  for (const auto &item : items)
    {
      auto &v = result[item.name];
      v.insert (v.end (), item.values.begin (), item.values.end ());
      std::sort (v.begin (), v.end (), [] (int a, int b) { return a > b; });
    }
  return result;
}
}

int
stl_work (int argc)
{
  app::Cache<std::string, std::vector<std::string> > cache;
  auto &v = cache.get ("k", [] (const std::string &k) {
    return std::vector<std::string> (3, k);
  });
  std::vector<app::Item> items (argc + 3);
  for (auto &i : items)
    {
      i.name = "n" + std::to_string (argc);
      i.values.push_back (argc);
      i.next = std::make_shared<app::Item> ();
    }
  return app::count_words (v[0] + " abc12 de") + (int) app::group (items).size ();
}
"""

STL_2 = r"""#include <deque>
#include <iostream>
#include <list>
#include <memory>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <variant>
#include <vector>

int stl_work (int);

struct Shape
{
  virtual ~Shape () = default;
  virtual double area () const = 0;
};

struct Square : Shape
{
  double side;
  explicit Square (double s) : side (s) {}
  double
  area () const override
  {
    return side * side;
  }
};

template <typename T>
std::string
join (const T &items)
{
  std::ostringstream out;
  for (const auto &x : items)
    out << x << ',';
  return out.str ();
}

int
main (int argc, char **)
{
  std::list<int> l{ 3, 1, 2 };
  l.sort ();
  std::set<std::string> s{ "b", "a" };
  std::deque<double> d;
  for (int i = 0; i < 100; i++)
    d.push_front (i * 0.5);
  std::variant<int, std::string> var = std::string ("x");
  std::optional<std::vector<int> > opt;
  opt.emplace (10, 1);
  std::unique_ptr<Shape> shape = std::make_unique<Square> (2.0);
  std::cout << join (l) << join (s) << d.size () << std::get<1> (var)
            << opt->size () << shape->area () << stl_work (argc) << "\n";
  return 0;
}
"""

LIBIBERTY_CONFIG_H = """/* Enough of libiberty's config.h for most of its files.  */
#define HAVE_STDLIB_H 1
#define HAVE_STRING_H 1
#define HAVE_STRINGS_H 1
#define HAVE_UNISTD_H 1
#define HAVE_LIMITS_H 1
#define HAVE_SYS_TYPES_H 1
#define HAVE_SYS_STAT_H 1
#define HAVE_STDINT_H 1
#define HAVE_INTTYPES_H 1
#define HAVE_FCNTL_H 1
#define HAVE_TIME_H 1
#define STDC_HEADERS 1
#define HAVE_DECL_BASENAME 1
"""


def build_stl(args, work, flags):
    directory = os.path.join(work, "stl" + "".join(flags))
    os.makedirs(directory)
    for name, text in (("stl_1.cc", STL_1), ("stl_2.cc", STL_2)):
        with open(os.path.join(directory, name), "w") as out:
            out.write(text)
    binary = os.path.join(directory, "stl")
    build = run([args.cxx, "-g", *flags, "stl_1.cc", "stl_2.cc", "-o", binary], cwd=directory)
    if not results.check(build.returncode == 0, f"stl {' '.join(flags)}: builds", build.stderr):
        return None
    return binary


def build_libiberty_zlib(args, work):
    """A shared library of libiberty's and zlib's files (real C code from
    Debian's gcc-12-source, about 120 units) at -O2; None when the source
    is not installed."""
    import gcc_source
    try:
        source = gcc_source.extract(os.path.join(HERE, "work", "symbolize-gcc-src"),
                                    ["libiberty", "include", "zlib"], "symbolize")
    except gcc_source.Missing as missing:
        print(f"INFO: skipping the libiberty and zlib sweep: {missing}")
        return None
    directory = os.path.join(work, "libiberty-zlib")
    os.makedirs(directory)
    with open(os.path.join(directory, "config.h"), "w") as out:
        out.write(LIBIBERTY_CONFIG_H)
    # Files that define what another file defines, or a main.
    skip = {"msdos.c", "vfork.c", "waitpid.c", "sigsetmask.c", "example.c", "minigzip.c"}
    jobs = []
    for part, extra in (("libiberty", ["-I" + directory, "-I" + os.path.join(source, "include"),
                                       "-DHAVE_CONFIG_H"]),
                        ("zlib", [])):
        for path in sorted(glob.glob(os.path.join(source, part, "*.c"))):
            if os.path.basename(path) in skip:
                continue
            obj = os.path.join(directory, part + "-" + os.path.basename(path)[:-2] + ".o")
            jobs.append((obj, [args.cc, "-O2", "-g", "-fPIC", "-w", *extra, "-c", path,
                               "-o", obj]))
    with concurrent.futures.ThreadPoolExecutor(os.cpu_count() or 2) as pool:
        built = list(pool.map(lambda job: (job[0], run(job[1]).returncode == 0), jobs))
    objects = [obj for obj, ok in built if ok]
    library = os.path.join(directory, "libiberty-zlib.so")
    link = run([args.cc, "-shared", "-o", library, *objects])
    if not results.check(link.returncode == 0 and len(objects) > 100,
                         f"libiberty and zlib: {len(objects)} units build into a library",
                         link.stderr[-2000:]):
        return None
    return library


# ---- Error cases and timing ----

def demangling(driver):
    names = {
        "main": "main",
        "_ZNK5outer5inner3BoxIiE5cloneEv": "outer::inner::Box<int>::clone() const",
        "_ZL16runtime_functionPKcP9tree_node": "runtime_function(char const*, tree_node*)",
        "_ZNSt6vectorIiSaIiEE9push_backERKi": "std::vector<int, std::allocator<int> >"
                                              "::push_back(int const&)",
        "_Z": "_Z",
        "": "",
    }
    result = run([driver, "--demangle", *names])
    got = result.stdout.split("\n")[:len(names)]
    results.check(got == list(names.values()), "symbolize_demangle: C++ names demangled, "
                  "others unchanged", f"{got}")


def error_cases(args, driver, work):
    directory = os.path.join(work, "errors")
    os.makedirs(directory)
    source = os.path.join(directory, "plain.c")
    with open(source, "w") as out:
        out.write(NODEBUG_MAIN_C.replace("plain_alloc (n)", "malloc (n)")
                  .replace("void *plain_alloc (size_t n);", ""))
    libs = pkg_config("--libs")
    cflags = pkg_config("--cflags")
    env = dict(os.environ, MEMPROF_OPTIONS=f"profile_file={directory}/profile.%p")

    with_dwarf = os.path.join(directory, "with-dwarf")
    run([args.cc, *cflags, "-g", source, "-o", with_dwarf, *libs])
    run([with_dwarf], cwd=directory, env=env)
    profiles = glob.glob(os.path.join(directory, "profile.*[0-9]"))
    if not results.check(len(profiles) == 1, "errors: a profile to read", str(profiles)):
        return
    profile = profiles[0]

    result = run([driver, source, profile])
    results.check(result.returncode == 1 and "not an ELF file" in result.stderr,
                  "errors: a source file is not an ELF file", result.stderr)
    result = run([driver, "/nonexistent/binary", profile])
    results.check(result.returncode == 1 and "cannot open" in result.stderr,
                  "errors: a missing binary", result.stderr)

    no_build_id = os.path.join(directory, "no-build-id")
    run([args.cc, *cflags, "-g", "-Wl,--build-id=none", source, "-o", no_build_id, *libs])
    result = run([driver, no_build_id, profile])
    results.check(result.returncode == 1 and "no GNU build id" in result.stderr,
                  "errors: a binary without a build id", result.stderr)

    # The profile names with-dwarf's build id: another binary's (here the
    # same code with a 16-byte MD5 build id) is refused.
    other = os.path.join(directory, "other")
    run([args.cc, *cflags, "-g", "-Wl,--build-id=md5", source, "-o", other, *libs])
    result = run([driver, other, profile])
    results.check(result.returncode == 1 and "no segment has the build id" in result.stderr,
                  "errors: a profile of another binary", result.stderr)

    # Without DWARF: every address falls back to the symbol table, which
    # LLVM never uses, so every context is dropped, as llvm-profdata does.
    stripped = os.path.join(directory, "stripped")
    run(["objcopy", "--strip-debug", with_dwarf, stripped])
    result = run([driver, stripped, profile])
    dropped = [line for line in result.stdout.splitlines() if line.endswith(" dropped")]
    results.check(result.returncode == 0 and dropped
                  and len(dropped) == len(result.stdout.splitlines()),
                  "errors: without DWARF every context is dropped",
                  result.stdout + result.stderr)
    show = run([args.llvm_profdata, "show", "--memory", profile, "--profiled-binary", stripped])
    results.check(show.returncode != 0 and "no entries in callstack map" in show.stderr,
                  "errors: llvm-profdata drops them too", show.stderr)

    # DWARF in a separate file named by .gnu_debuglink: we find it (LLVM
    # does not look), and the frames are those of the unstripped binary.
    debug = os.path.join(directory, "with-dwarf.debug")
    linked = os.path.join(directory, "linked")
    run(["objcopy", "--only-keep-debug", with_dwarf, debug])
    run(["objcopy", "--strip-debug", "--add-gnu-debuglink=" + debug, with_dwarf, linked])
    expected = run([driver, with_dwarf, profile])
    result = run([driver, linked, profile])
    results.check(result.returncode == 0 and result.stdout == expected.stdout
                  and "dropped" not in result.stdout,
                  "errors: DWARF found through .gnu_debuglink",
                  f"got {result.stdout!r} {result.stderr!r}, expected {expected.stdout!r}")


def timing(args, driver, work):
    program = Program("many", {"many.c": many_contexts_source()})
    directory = os.path.join(work, "many-O0-pie")
    built = build_and_run(args, program, directory, ["-O0", "-pie"])
    if built is None:
        return
    binary, profile = built
    compare(args, driver, "many -O0 -pie", binary, profile, per_context=False)
    result = run([driver, "--time", binary, profile])
    if not results.check(result.returncode == 0, "timing: symbolize-addresses --time",
                         result.stderr):
        return
    print("INFO: timing: " + result.stdout.strip().replace("\n", "; "))
    words = result.stdout.split()
    addresses = int(words[words.index("lookups:") + 1])
    milliseconds = float(words[words.index("ms,") - 1])
    results.check(addresses >= 100000 and milliseconds < 5000,
                  f"timing: {addresses} addresses in {milliseconds:.0f} ms (under 5 s)",
                  result.stdout)
    start = time.monotonic()
    run([args.llvm_profdata, "show", "--memory", profile, "--profiled-binary", binary])
    print(f"INFO: timing: llvm-profdata-19 show --memory on the same profile: "
          f"{(time.monotonic() - start) * 1000:.0f} ms")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--llvm-profdata", default="llvm-profdata-19")
    parser.add_argument("--llvm-symbolizer", default="llvm-symbolizer-19")
    parser.add_argument("--cc", default="gcc")
    parser.add_argument("--cxx", default="g++")
    parser.add_argument("--quick", action="store_true",
                        help="skip the other debug formats, the sweeps and the timing")
    parser.add_argument("--driver", help="a symbolize-addresses already built (say, "
                        "from a changed symbolize.c, to see that this test catches it)")
    args = parser.parse_args()

    work = os.path.join(HERE, "work", "symbolize")
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    driver = args.driver or build_driver(args, work)
    if driver is None:
        return results.finish()

    programs = [
        Program("alloc_c", {"alloc_c.c": None}),
        Program("newdelete", {"newdelete.cc": None}, cxx=True),
        Program("threads", {"threads.c": None}),
        Program("inline_c", {"inline_c.c": INLINE_C}),
        Program("names", {"names.cc": NAMES_CC}, cxx=True),
        Program("nodebug", {"nodebug.c": NODEBUG_MAIN_C, "helper.c": NODEBUG_HELPER_C},
                nodebug=["helper.c"]),
    ]
    for program in programs:
        for opt in ("-O0", "-O2"):
            for pie in ("-pie", "-no-pie"):
                label = f"{program.name} {opt} {pie}"
                directory = os.path.join(work, f"{program.name}{opt}{pie}")
                built = build_and_run(args, program, directory, [opt, pie])
                if built is not None:
                    compare(args, driver, label, *built)

    if not args.quick:
        formats = [["-gdwarf-4"], ["-gsplit-dwarf"], ["-gz"], ["-gno-column-info"],
                   ["-g1"]]
        for program in (programs[3], programs[4]):
            for extra in formats:
                label = f"{program.name} -O2 -pie {' '.join(extra)}"
                directory = os.path.join(work, f"{program.name}-O2-pie{''.join(extra)}")
                built = build_and_run(args, program, directory, ["-O2", "-pie", *extra])
                if built is not None:
                    compare(args, driver, label, *built)
        timing(args, driver, work)
        for name in ("inline_c-O2-pie", "names-O2-no-pie", "newdelete-O0-pie"):
            binary = os.path.join(work, name, name.split("-")[0])
            if os.path.exists(binary):
                sweep(args, driver, f"sweep {name}", binary)
        variants = [["-O0"], ["-O2"], ["-O3"], ["-O2", "-gdwarf-4"],
                    ["-O2", "-gsplit-dwarf"], ["-O2", "-no-pie"]]
        with concurrent.futures.ThreadPoolExecutor(os.cpu_count() or 2) as pool:
            binaries = list(pool.map(lambda flags: build_stl(args, work, flags), variants))
        for flags, binary in zip(variants, binaries):
            if binary is not None:
                sweep(args, driver, f"sweep stl {' '.join(flags)}", binary)
        library = build_libiberty_zlib(args, work)
        if library is not None:
            sweep(args, driver, "sweep libiberty+zlib -O2", library)

    demangling(driver)
    error_cases(args, driver, work)
    return results.finish()


if __name__ == "__main__":
    sys.exit(main())
