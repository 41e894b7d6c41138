#!/usr/bin/env python3
"""The summary of `memprof show` (hot, cold and warm contexts under the
feedback's thresholds, and the largest of each) in text, JSON and YAML.

  - A raw profile written here, MemInfoBlock by MemInfoBlock (the format
    of docs/profile-format.md), with contexts on each side of every
    threshold: lifetime access density just over and at 1000 accesses
    per byte per second (hot / not hot), under 0.05 with a mean lifetime
    at and under 200 s (cold / not cold); the counts and the largest
    sizes are known exactly.
  - A real run (report_program.c, with the plugin): the summary agrees
    with the rule applied here to the MemInfoBlocks `show --format=json`
    prints.
  - The YAML with its summary block (as llvm-profdata 21 prints it) is
    still read by the plugin's -fplugin-arg-memprof-use.

Run: python3 testsuite/analysis/test_summary.py
Ends with `summary: N passed, N failed`.
"""

import json
import os
import re
import shutil
import struct
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(TOP, "testsuite", "lib"))
from report import Report  # noqa: E402
import instrumented  # noqa: E402

WORK = os.path.join(HERE, "work", "summary")
MEMPROF = os.environ.get("MEMPROF") or os.path.join(TOP, "analysis", "memprof")
RAW_MAGIC = 0xFF6D70726F667281
RAW_MIB = "<IQQQQIIIIQIIIIIIIIQQIIQIIIQ"  # a v4 MemInfoBlock, 144 bytes

results = Report("summary")
check = results.check

# (size, mean lifetime ms, TotalLifetimeAccessDensity per allocation,
# i.e. accesses per byte per second x 100, class)
CONTEXTS = [
    (1000, 300000, 0, "cold"),
    (5000, 250000, 4, "cold"),        # 0.04 < 0.05
    (2000, 200000, 0, "cold"),        # the lifetime exactly at 200 s
    (7000, 300000, 10, "warm"),       # 0.1: not under 0.05
    (4000, 199999, 0, "warm"),        # living just under 200 s
    (3000, 10, 5000, "warm"),
    (9000, 10, 100000, "warm"),       # exactly 1000: not above
    (64, 10, 200000, "hot"),
    (128, 10, 100001, "hot"),         # 1000.01
]


def run(args, **kwargs):
    return subprocess.run(args, capture_output=True, text=True, **kwargs)


def write_profile(path):
    build_id = bytes(range(1, 21))
    start, end = 0x400000, 0x500000
    segments = struct.pack("<Q4Q", 1, start, end, 0, len(build_id)) + \
        build_id.ljust(32, b"\0")
    mibs = b""
    stacks = b""
    for i, (size, lifetime, density, _) in enumerate(CONTEXTS):
        fields = [0] * 27
        fields[0] = 2                    # AllocCount: two allocations
        fields[4] = 2 * size             # TotalSize
        fields[5] = fields[6] = size     # Min/MaxSize
        fields[9] = 2 * lifetime         # TotalLifetime
        fields[10] = fields[11] = lifetime
        fields[22] = 2 * density         # TotalLifetimeAccessDensity
        fields[23] = fields[24] = density
        mibs += struct.pack("<Q", i + 1) + struct.pack(RAW_MIB, *fields)
        stacks += struct.pack("<3Q", i + 1, 1, start + 0x1000 + 16 * i)
    mibs = struct.pack("<Q", len(CONTEXTS)) + mibs
    stacks = struct.pack("<Q", len(CONTEXTS)) + stacks
    mib_offset = 48 + len(segments)
    stack_offset = mib_offset + len(mibs)
    total = stack_offset + len(stacks)
    with open(path, "wb") as out:
        out.write(struct.pack("<6Q", RAW_MAGIC, 4, total, 48, mib_offset,
                              stack_offset))
        out.write(segments + mibs + stacks)


def expected_of(contexts):
    """{class: (count, largest TotalSize)} of (TotalSize, class) pairs."""
    out = {}
    for name in ("hot", "cold", "warm"):
        sizes = [size for size, c in contexts if c == name]
        out[name] = (len(sizes), max(sizes, default=0))
    return out


def classify(mib):
    """The feedback's rule (docs/feedback.md), on a JSON MemInfoBlock."""
    count = mib["AllocCount"] or 1
    density = mib["TotalLifetimeAccessDensity"] / count / 100
    if density < 0.05 and mib["TotalLifetime"] / count >= 200000:
        return "cold"
    return "hot" if density > 1000 else "warm"


def check_outputs(label, profile, expected):
    total = sum(count for count, _ in expected.values())
    out = run([MEMPROF, "show", "--format=json", profile])
    summary = json.loads(out.stdout).get("summary", {})
    check(summary == {
        "contexts": total,
        "cold_contexts": expected["cold"][0],
        "hot_contexts": expected["hot"][0],
        "max_cold_context_size": expected["cold"][1],
        "max_warm_context_size": expected["warm"][1],
        "max_hot_context_size": expected["hot"][1]},
        f"{label}: JSON summary {summary}", str(expected))

    out = run([MEMPROF, "show", "--format=yaml", profile])
    want = ("---\n# MemProfSummary:\n"
            f"#   Total contexts: {total}\n"
            f"#   Total cold contexts: {expected['cold'][0]}\n"
            f"#   Total hot contexts: {expected['hot'][0]}\n"
            f"#   Maximum cold context total size: {expected['cold'][1]}\n"
            f"#   Maximum warm context total size: {expected['warm'][1]}\n"
            f"#   Maximum hot context total size: {expected['hot'][1]}\n"
            "MemprofProfile:\n")
    check(out.stdout.startswith(want),
          f"{label}: YAML opens with llvm-profdata's summary block",
          out.stdout[:400])

    out = run([MEMPROF, "show", profile])
    line = re.search(r"^Summary: (\d+) hot, (\d+) cold, (\d+) warm;",
                     out.stdout, re.M)
    check(line is not None and tuple(map(int, line.groups())) == (
        expected["hot"][0], expected["cold"][0], expected["warm"][0]),
        f"{label}: text summary line", out.stdout[:400])
    return out


def main():
    shutil.rmtree(WORK, ignore_errors=True)
    os.makedirs(WORK)
    if not os.environ.get("MEMPROF"):
        made = run(["make", "-C", TOP, "analysis/memprof"])
        if made.returncode != 0:
            check(False, "make analysis/memprof", made.stderr[-2000:])
            return results.finish()

    # The profile written here: every threshold's both sides.
    profile = os.path.join(WORK, "thresholds.profraw")
    write_profile(profile)
    expected = expected_of([(2 * size, c) for size, _, _, c in CONTEXTS])
    check(expected == {"hot": (2, 256), "cold": (3, 10000),
                       "warm": (4, 18000)},
          "the written profile's expectation", str(expected))
    out = check_outputs("thresholds", profile, expected)
    check("largest hot context 256 B, cold 9.8 KiB, warm 17.6 KiB"
          in out.stdout, "thresholds: text names the largest of each",
          out.stdout[:300])
    empty = os.path.join(WORK, "empty.profraw")
    with open(empty, "wb") as f:
        segments = struct.pack("<Q", 0)
        f.write(struct.pack("<6Q", RAW_MAGIC, 4, 48 + 24, 48, 56, 64)
                + segments + struct.pack("<Q", 0) + struct.pack("<Q", 0))
    check_outputs("empty", empty, {"hot": (0, 0), "cold": (0, 0),
                                   "warm": (0, 0)})

    # A real run: the summary follows the rule on its MemInfoBlocks.
    source = os.path.join(HERE, "report_program.c")
    binary = os.path.join(WORK, "report_program")
    built = instrumented.build(TOP, source, binary, "gcc", ["-g", "-O0"])
    real = binary + ".profraw"
    ran = instrumented.run_profiled(binary, real)
    if check(built.returncode == 0 and ran.returncode == 0,
             "report_program builds and runs", built.stderr + ran.stderr):
        records = json.loads(run([MEMPROF, "show", "--format=json",
                                  "--top=0", real]).stdout)["records"]
        classes = [(r["bytes"], classify(r["mib"])) for r in records]
        check(any(c == "hot" for _, c in classes),
              "report_program has a hot context (its hot buffers)")
        check_outputs("report_program", real, expected_of(classes))

        # The plugin still reads the YAML with its summary block.
        yaml = os.path.join(WORK, "report.yaml")
        with open(yaml, "w") as f:
            f.write(run([MEMPROF, "show", "--format=yaml", "--binary="
                         + binary, real]).stdout)
        plugin = run(["pkg-config", "--variable=plugin", "memprof"],
                     env=dict(os.environ, PKG_CONFIG_PATH=TOP)).stdout.strip()
        used = run(["gcc", "-g", "-O0", "-fplugin=" + plugin,
                    "-fplugin-arg-memprof-use=" + yaml, "-c", source, "-o",
                    os.path.join(WORK, "used.o")])
        check(used.returncode == 0,
              "-fplugin-arg-memprof-use reads show's YAML with the summary",
              used.stderr[-1000:])
    shutil.rmtree(WORK, ignore_errors=True)
    return results.finish()


if __name__ == "__main__":
    sys.exit(main())
