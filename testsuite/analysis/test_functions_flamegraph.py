#!/usr/bin/env python3
"""`memprof functions` and `memprof flamegraph` against a program whose
allocations are known exactly (fg_program.c, next to this script).

Builds the program with gcc -g -O0 -fno-optimize-sibling-calls, the plugin
and the runtime (through memprof-uninstalled.pc), runs it once with
MEMPROF_OPTIONS=profile_file=..., then checks:
  - functions, exclusive and --inclusive, with and without
    --skip-unsymbolized: every row (calls, bytes, percent, bytes per call,
    contexts) and the order of each --sort; text, JSON and CSV agree;
  - flamegraph's folded stacks for every metric, with --lines and
    --names=linkage, line for line;
  - the SVG: well-formed XML, one frame (a <rect> with a <title>) per
    node of the expected tree, placed and sized by its share of the
    metric within a pixel, names fitted to their frames, --min-width,
    --width, --title, no external references;
  - --help of both, and that bad options and bad input exit with 2.

The exclusive table charges strdup's context to copy, its first frame in
the program's code, not to the C library's frame that called malloc.
The C library's own frames (above main, and strdup's) are unsymbolized
addresses whose values depend on the machine: the test reads them from
the output once and then expects them exactly.

Run: python3 testsuite/analysis/test_functions_flamegraph.py
(MEMPROF=PATH runs a memprof command other than the tree's.)
Prints one line per check and ends with
`functions-flamegraph: N passed, N failed`.
"""

import csv
import io
import json
import os
import re
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(os.path.dirname(HERE))
WORK = os.path.join(HERE, "work", "functions-flamegraph")
SOURCE = os.path.join(HERE, "fg_program.c")
sys.path.insert(0, os.path.join(TOP, "testsuite", "lib"))
from report import Report  # noqa: E402

results = Report("functions-flamegraph")
check = results.check

MEMPROF = os.environ.get("MEMPROF") or os.path.join(TOP, "analysis", "memprof")
PROGRAM = os.path.join(WORK, "fg_program")
PROFILE = os.path.join(WORK, "fg.profraw")
SVG_NS = "{http://www.w3.org/2000/svg}"

# The SVG's geometry (analysis/commands/cmd_flamegraph.c).
SVG_MARGIN = 10
CHAR_WIDTH = 7.0

# ---- Building and running ----


def run(args, **kwargs):
    return subprocess.run(args, capture_output=True, text=True, **kwargs)


def memprof(*args):
    # The expected frames of the C library are addresses: keep memprof from
    # symbolizing it (with libc's debug information when this machine has
    # it), so that the expectations do not depend on the machine.
    args = list(args)
    if any(a.startswith("--binary") for a in args):
        args.insert(1, "--no-libraries")
    return run([MEMPROF] + args)


def fatal(message):
    check(False, message)
    sys.exit(results.finish())


def build_memprof():
    if os.environ.get("MEMPROF"):
        return
    made = run(["make", "-C", TOP, "analysis/memprof"])
    if made.returncode != 0:
        fatal("make analysis/memprof: " + made.stdout[-2000:] + made.stderr[-2000:])


def build_and_run_program():
    shutil.rmtree(WORK, ignore_errors=True)
    os.makedirs(WORK)
    env = dict(os.environ, PKG_CONFIG_PATH=TOP)
    config = run(["pkg-config", "--cflags", "--libs", "memprof"], env=env)
    plugin = run(["pkg-config", "--variable=plugin", "memprof"], env=env)
    if config.returncode != 0 or plugin.returncode != 0:
        fatal("pkg-config memprof: " + config.stderr + plugin.stderr)
    built = run(["gcc", "-g", "-O0", "-fno-optimize-sibling-calls",
                 "-fplugin=" + plugin.stdout.strip(), SOURCE, "-o", PROGRAM]
                + config.stdout.split())
    if built.returncode != 0:
        fatal("building fg_program.c: " + built.stderr)
    ran = run([PROGRAM], env=dict(os.environ,
                                  MEMPROF_OPTIONS="profile_file=" + PROFILE
                                  # Its recursion is expected unfolded.
                                  + ":fold_recursion=0"))
    if ran.returncode != 0 or not os.path.exists(PROFILE):
        fatal("running fg_program: status %d, %s" % (ran.returncode, ran.stderr))
    # fg.profraw's side file is fg.extra (docs/profile-format.md).
    check(os.path.exists(os.path.join(WORK, "fg.extra")), "the run wrote its side file")


def source_lines():
    """The line of each "line:NAME" comment of fg_program.c."""
    lines = {}
    with open(SOURCE) as source:
        for number, text in enumerate(source, 1):
            found = re.search(r"/\* line:([\w-]+) \*/", text)
            if found:
                lines[found.group(1)] = number
    return lines


def functions_json(*args):
    out = memprof("functions", "--binary=" + PROGRAM, "--format=json",
                  *args, PROFILE)
    if out.returncode != 0:
        fatal("functions --format=json %s: %s" % (" ".join(args), out.stderr))
    return json.loads(out.stdout)


def folded(*args):
    out = memprof("flamegraph", "--binary=" + PROGRAM, *args, PROFILE)
    if out.returncode != 0:
        fatal("flamegraph %s: %s" % (" ".join(args), out.stderr))
    return out.stdout.splitlines()


# ---- Expected values ----

TOTAL_CALLS = 12
TOTAL_BYTES = 2244
CONTEXTS = 8


def row(name, calls, bytes_, contexts, debug_info=True, function=None,
        file=SOURCE):
    return {"name": name, "function": function or name, "calls": calls,
            "bytes": bytes_, "contexts": contexts, "debug_info": debug_info,
            "file": file if debug_info else ""}


def exclusive_rows(libc_strdup, skip_unsymbolized):
    # strdup's context counts for copy, its first frame in the program's
    # code, with or without --skip-unsymbolized: the C library's frame
    # (libc_strdup) is not the user's function.
    return [row("g", 1, 1000, 1), row("f", 6, 600, 2), row("h", 2, 500, 2),
            row("recurse", 1, 64, 1),
            row("ns::make()", 1, 48, 1, function="_ZN2ns4makeEv"),
            row("copy", 1, 32, 1)]


def inclusive_rows(libc_strdup, prefix, skip_unsymbolized):
    rows = [row("main", 12, 2244, 8), row("g", 7, 1600, 3),
            row("f", 6, 600, 2), row("h", 2, 500, 2),
            row("recurse", 1, 64, 1),  # once, though 3 frames deep
            row("ns::make()", 1, 48, 1, function="_ZN2ns4makeEv"),
            row("copy", 1, 32, 1)]
    if not skip_unsymbolized:
        rows.append(row(libc_strdup, 1, 32, 1, debug_info=False))
        rows += [row(name, 12, 2244, 8, debug_info=False) for name in prefix]
    return rows


def with_derived(rows):
    for r in rows:
        r["percent"] = 100.0 * r["bytes"] / TOTAL_BYTES
        r["bytes_per_call"] = r["bytes"] / r["calls"]
    return rows


def sort_rows(rows, key):
    def name_order(r):
        return (r["name"], r["file"], r["function"])
    if key == "name":
        return sorted(rows, key=name_order)
    value = {"bytes": lambda r: r["bytes"], "calls": lambda r: r["calls"],
             "per-call": lambda r: r["bytes_per_call"]}[key]
    return sorted(rows, key=lambda r: (-value(r), -r["bytes"], name_order(r)))


def rows_match(got, expected):
    """Why GOT (rows of the JSON) is not EXPECTED, in order; "" if it is."""
    if len(got) != len(expected):
        return "%d rows, expected %d: %s" % (
            len(got), len(expected), [r["name"] for r in got])
    for g, e in zip(got, expected):
        for key in ("name", "function", "file", "debug_info", "calls",
                    "bytes", "contexts"):
            if g.get(key) != e[key]:
                return "row %s: %s is %r, expected %r" % (
                    e["name"], key, g.get(key), e[key])
        for key in ("percent", "bytes_per_call"):
            if abs(g[key] - e[key]) > 1e-6:
                return "row %s: %s is %r, expected %r" % (
                    e["name"], key, g[key], e[key])
    return ""


# ---- memprof functions ----


def test_functions_json(libc_strdup, prefix):
    for inclusive in (False, True):
        for skip in (False, True):
            args = (["--inclusive"] if inclusive else []) + (
                ["--skip-unsymbolized"] if skip else [])
            label = "functions " + (" ".join(args) or "(exclusive)")
            expected = with_derived(
                inclusive_rows(libc_strdup, prefix, skip) if inclusive
                else exclusive_rows(libc_strdup, skip))
            for key in ("bytes", "calls", "per-call", "name"):
                got = functions_json("--sort=" + key, *args)
                why = rows_match(got["functions"], sort_rows(expected, key))
                check(why == "", "%s --sort=%s: rows" % (label, key), why)
            check(got["total"] == {"calls": TOTAL_CALLS, "bytes": TOTAL_BYTES}
                  and got["contexts"] == CONTEXTS
                  and got["mode"] == ("inclusive" if inclusive else "exclusive")
                  and got["skip_unsymbolized"] == skip,
                  label + ": totals and mode", json.dumps(got)[:300])

    top = functions_json("--top=2")
    check([r["name"] for r in top["functions"]] == ["g", "f"]
          and top["function_count"] == 6, "functions --top=2 keeps two rows",
          json.dumps(top)[:300])


def test_functions_csv():
    for args in ([], ["--inclusive"]):
        out = memprof("functions", "--binary=" + PROGRAM, "--format=csv",
                      *args, PROFILE)
        rows = list(csv.DictReader(io.StringIO(out.stdout)))
        want = functions_json(*args)["functions"]
        same = out.returncode == 0 and len(rows) == len(want) and all(
            c["name"] == j["name"] and c["function"] == j["function"]
            and c["file"] == j["file"]
            and c["debug_info"] == ("1" if j["debug_info"] else "0")
            and int(c["calls"]) == j["calls"]
            and int(c["bytes"]) == j["bytes"]
            and abs(float(c["percent"]) - j["percent"]) < 1e-6
            and abs(float(c["bytes_per_call"]) - j["bytes_per_call"]) < 1e-6
            and int(c["contexts"]) == j["contexts"]
            for c, j in zip(rows, want))
        check(same, "functions --format=csv %s matches JSON" % " ".join(args),
              out.stdout[:400] + out.stderr)


def test_functions_text(libc_strdup):
    out = memprof("functions", "--binary=" + PROGRAM, PROFILE)
    lines = out.stdout.splitlines()
    check(out.returncode == 0 and lines[0] ==
          "6 functions; 2.2 KiB in 12 allocation calls (8 contexts, 1 "
          "profile); sorted by bytes.", "functions text: summary line",
          lines[0] if lines else out.stderr)
    header = [l for l in lines if l.startswith("function ")]
    check(len(header) == 1 and header[0].split() ==
          ["function", "calls", "%", "bytes", "bytes/call", "file"],
          "functions text: column header", str(header))
    expected = [("g", "1", "44.6%", "1000 B", "1000 B", SOURCE),
                ("f", "6", "26.7%", "600 B", "100 B", SOURCE),
                ("h", "2", "22.3%", "500 B", "250 B", SOURCE),
                ("recurse", "1", "2.9%", "64 B", "64 B", SOURCE),
                ("ns::make()", "1", "2.1%", "48 B", "48 B", SOURCE),
                ("copy", "1", "1.4%", "32 B", "32 B", SOURCE),
                ("total", "12", "100.0%", "2.2 KiB", "187 B", None)]
    start = lines.index(header[0]) + 1 if header else 0
    body = lines[start:]
    ok = len(body) == len(expected)
    for line, (name, calls, percent, bytes_, each, file) in zip(body,
                                                                 expected):
        pattern = r"%s +%s +%s +%s +%s%s$" % (
            re.escape(name), calls, re.escape(percent), re.escape(bytes_),
            re.escape(each), "  " + re.escape(file) if file else "")
        ok = ok and re.match(pattern, line) is not None
    check(ok, "functions text: rows and total line", "\n".join(body))
    # Columns are aligned: calls, %, bytes and bytes/call end at the same
    # places on the header, every row and the total line.
    ends = set()
    if header:
        spots, at = [], 0
        for title in (" calls", " %", " bytes", " bytes/call"):
            at = header[0].index(title, at) + len(title)
            spots.append(at)
        ends.add(tuple(spots))
    number = r" +(\d+) +(\d+\.\d%) +(\d+(?:\.\d)? K?i?B) +(\d+(?:\.\d)? K?i?B)"
    for line in body:
        found = re.match(r"^\S+" + number + r"(  .*)?$", line)
        ends.add(tuple(found.end(i) for i in range(1, 5)) if found else None)
    check(len(ends) == 1 and None not in ends,
          "functions text: aligned columns", str(ends))


# ---- memprof flamegraph: folded stacks ----


def expected_stacks(prefix, libc_strdup, metric):
    root = ";".join(prefix) + ";main;"
    values = {
        "bytes": {"copy;" + libc_strdup: 32, "g": 1000, "g;f": 600, "h": 500,
                  "ns::make()": 48, "recurse;recurse;recurse": 64},
        "allocs": {"copy;" + libc_strdup: 1, "g": 1, "g;f": 6, "h": 2,
                   "ns::make()": 1, "recurse;recurse;recurse": 1},
        # h's and recurse's bytes are never touched; strdup's waste is
        # unknown (the C library's strdup wrote them, uninstrumented: see
        # docs/analysis.md, "What is left out and why"), so not drawn.
        "waste": {"h": 500, "recurse;recurse;recurse": 64},
        # f's and recurse's allocations are kept.
        "live": {"g;f": 600, "recurse;recurse;recurse": 64},
    }[metric]
    return sorted("%s%s %d" % (root, stack, value)
                  for stack, value in values.items())


def test_folded(prefix, libc_strdup, lines_of):
    for metric in ("bytes", "allocs", "waste", "live"):
        got = folded("--metric=" + metric)
        want = expected_stacks(prefix, libc_strdup, metric)
        check(got == want, "flamegraph --metric=%s: folded stacks" % metric,
              "\n".join(got) + "\n  expected\n" + "\n".join(want))
    check(folded() == expected_stacks(prefix, libc_strdup, "bytes"),
          "flamegraph: bytes is the default metric")

    # Accesses: only the touched stacks, with the profile's own counts.
    shown = json.loads(memprof("show", "--binary=" + PROGRAM, "--format=json",
                               PROFILE).stdout)
    sums = {}
    for record in shown["records"]:
        names = [f["name"] for f in reversed(record["frames"])]
        if record["accesses"] > 0:
            key = ";".join(names)
            sums[key] = sums.get(key, 0) + int(record["accesses"])
    want = sorted("%s %d" % item for item in sums.items())
    root = ";".join(prefix) + ";main;"
    got = folded("--metric=accesses")
    check(got == want and [l.rsplit(" ", 1)[0] for l in got] ==
          [root + s for s in ("g", "g;f", "ns::make()")],
          "flamegraph --metric=accesses: the touched stacks, summed",
          "\n".join(got) + "\n  expected\n" + "\n".join(want))

    # With lines: one stack per call position, no longer merged.
    L = lines_of
    main = ";".join(prefix) + ";main:%d;"
    want = sorted([
        (main % L["main-g"]) + "g:%d;f:%d 300" % (L["g-f-1"], L["f"]),
        (main % L["main-g"]) + "g:%d;f:%d 300" % (L["g-f-2"], L["f"]),
        (main % L["main-g"]) + "g:%d 1000" % L["g"],
        (main % L["main-h"]) + "h:%d 250" % L["h"],
        (main % L["main-h"]) + "h:%d 250" % L["h-2"],
        (main % L["main-recurse"]) + "recurse:%d;recurse:%d;recurse:%d 64" % (
            L["recurse-recurse"], L["recurse-recurse"], L["recurse"]),
        (main % L["main-copy"]) + "copy:%d;%s 32" % (L["copy"], libc_strdup),
        (main % L["main-make"]) + "ns::make():%d 48" % L["make"]])
    got = folded("--lines")
    check(got == want, "flamegraph --lines: NAME:LINE frames",
          "\n".join(got) + "\n  expected\n" + "\n".join(want))

    want = sorted(l.replace("ns::make()", "_ZN2ns4makeEv")
                  for l in expected_stacks(prefix, libc_strdup, "bytes"))
    got = folded("--names=linkage")
    check(got == want, "flamegraph --names=linkage: mangled names",
          "\n".join(got))


# ---- memprof flamegraph: SVG ----


def expected_tree(stack_lines):
    """Nodes of the flame graph of folded STACK_LINES: path -> value, with
    the root "all" as the path ()."""
    nodes = {(): 0}
    for line in stack_lines:
        stack, value = line.rsplit(" ", 1)
        nodes[()] += int(value)
        path = ()
        for name in stack.split(";"):
            path += (name,)
            nodes[path] = nodes.get(path, 0) + int(value)
    return nodes


def expected_layout(nodes, width):
    """Path -> (x, width) in pixels: children side by side from their
    parent's left edge, in order of name."""
    drawable = width - 2 * SVG_MARGIN
    total = nodes[()]
    place = {(): (SVG_MARGIN, drawable)}
    for path in sorted(nodes, key=len):
        x = place[path][0]
        for child in sorted((p for p in nodes
                             if len(p) == len(path) + 1 and p[:-1] == path),
                            key=lambda p: p[-1].encode()):
            w = nodes[child] / total * drawable
            place[child] = (x, w)
            x += w
    return place


def fitted(name, width):
    fits = int((width - 6) // CHAR_WIDTH)
    if fits < 3:
        return ""
    return name if len(name) <= fits else name[:fits - 2] + ".."


def svg_frames(root):
    group = [g for g in root.iter(SVG_NS + "g")
             if g.get("id") == "memprof-frames"]
    if len(group) != 1:
        return []
    frames = []
    for g in group[0].findall(SVG_NS + "g"):
        rect = g.find(SVG_NS + "rect")
        box = g.find(SVG_NS + "svg")
        text = box.find(SVG_NS + "text") if box is not None else None
        frames.append({
            "name": g.get("data-name"), "depth": int(g.get("data-depth")),
            "title": g.findtext(SVG_NS + "title"),
            "x": float(rect.get("x")), "width": float(rect.get("width")),
            "box": (float(box.get("x")), float(box.get("width"))),
            "text": (text.text or "") if text is not None else None})
    return frames


def check_svg(label, document, stack_lines, width, unit, min_percent=0.1):
    try:
        root = ET.fromstring(document)
    except ET.ParseError as error:
        check(False, label + ": well-formed XML", str(error))
        return None
    check(root.tag == SVG_NS + "svg" and root.get("width") == str(width),
          label + ": an <svg> %d wide" % width, str(root.attrib))
    nodes = expected_tree(stack_lines)
    total = nodes[()]
    drawn = {p: v for p, v in nodes.items() if v / total * 100 >= min_percent}
    place = expected_layout(nodes, width)
    frames = svg_frames(root)
    check(len(frames) == len(drawn) and
          len([r for r in root.iter(SVG_NS + "rect")
               if r.get("class") != "background"]) == len(drawn),
          label + ": one <rect> per frame (%d)" % len(drawn),
          "%d frames: %s" % (len(frames), [f["name"] for f in frames]))
    problems = []
    for path, value in sorted(drawn.items()):
        name = path[-1] if path else "all"
        x, w = place[path]
        found = [f for f in frames if f["name"] == name
                 and f["depth"] == len(path) and abs(f["x"] - x) < 1]
        if len(found) != 1:
            problems.append("no frame %s at depth %d, x %.1f" %
                            (name, len(path), x))
            continue
        frame = found[0]
        title = "%s: %d %s (%.2f%%)" % (name, value, unit,
                                        100.0 * value / total)
        if abs(frame["width"] - w) > 1:
            problems.append("%s: width %.2f, expected %.2f" %
                            (name, frame["width"], w))
        if frame["title"] != title:
            problems.append("%s: title %r, expected %r" %
                            (name, frame["title"], title))
        if abs(frame["box"][0] - x) > 1 or abs(frame["box"][1] - w) > 1:
            problems.append("%s: text box %s, not the frame's" %
                            (name, frame["box"]))
        if frame["text"] != fitted(name, w):
            problems.append("%s: text %r, expected %r" %
                            (name, frame["text"], fitted(name, w)))
    check(not problems, label + ": frames placed, sized, titled, fitted",
          "; ".join(problems[:6]))
    external = [e.tag for e in root.iter() for key in e.attrib
                if key.endswith("href")]
    check(not external and "http://" not in document.replace(
        'xmlns="http://www.w3.org/2000/svg"', ""),
        label + ": self-contained (no external references)", str(external))
    return root


def test_svg(prefix, libc_strdup):
    stacks = expected_stacks(prefix, libc_strdup, "bytes")
    path = os.path.join(WORK, "bytes.svg")
    made = memprof("flamegraph", "--binary=" + PROGRAM, "--svg=" + path,
                   PROFILE)
    check(made.returncode == 0 and made.stdout == "",
          "flamegraph --svg=FILE writes the file, nothing on stdout",
          made.stderr)
    with open(path) as svg:
        document = svg.read()
    root = check_svg("svg bytes", document, stacks, 1200, "bytes")
    if root is not None:
        texts = ["".join(t.itertext()) for t in root.iter(SVG_NS + "text")]
        check("Flame graph: bytes allocated (TotalSize)" in texts
              and any(t.startswith("metric: bytes") and "2244" in t
                      for t in texts),
              "svg: title and metric in the header", str(texts[:3]))
        names = {f["name"]: f for f in svg_frames(root)}
        check(names["recurse"]["text"] == "r.." and names["f"]["text"] == "f"
              and names[libc_strdup]["text"] == "",
              "svg: a name too long for its frame is shortened",
              str({n: names[n]["text"] for n in ("recurse", "f")}))
        check(root.find(SVG_NS + "script") is not None,
              "svg: the zoom script is inline")

    to_stdout = memprof("flamegraph", "--binary=" + PROGRAM, "--format=svg",
                        PROFILE)
    check(to_stdout.returncode == 0 and to_stdout.stdout == document,
          "flamegraph --format=svg writes the same SVG to stdout")

    narrow = memprof("flamegraph", "--binary=" + PROGRAM, "--format=svg",
                     "--width=600", "--min-width=5", PROFILE)
    check_svg("svg --width=600 --min-width=5", narrow.stdout, stacks, 600,
              "bytes", min_percent=5)

    allocs = memprof("flamegraph", "--binary=" + PROGRAM, "--format=svg",
                     "--metric=allocs", "--title=A & B <allocs>", PROFILE)
    root = check_svg("svg --metric=allocs", allocs.stdout,
                     expected_stacks(prefix, libc_strdup, "allocs"), 1200,
                     "allocations")
    if root is not None:
        texts = ["".join(t.itertext()) for t in root.iter(SVG_NS + "text")]
        check("A & B <allocs>" in texts, "svg --title: escaped and kept",
              str(texts[:2]))


# ---- Names with ';', ',', quotes and markup ----

ODD_NAME = 'a;b,"c"<d>&ef'  # as long as _ZN2ns4makeEv, which it replaces


def odd_profile():
    """fg.mprof (memprof merge, symbolized) with ns::make's linkage name
    replaced by ODD_NAME in its string table; None without the zstd
    command, which the edit needs."""
    zstd = shutil.which("zstd")
    if zstd is None:
        print("NOTE: no zstd command: the checks of odd names are skipped")
        return None
    merged = os.path.join(WORK, "fg.mprof")
    out = memprof("merge", "--quiet", "--binary=" + PROGRAM, "-o", merged,
                  PROFILE)
    if not check(out.returncode == 0, "memprof merge -o fg.mprof", out.stderr):
        return None
    with open(merged, "rb") as f:
        data = f.read()
    body, payload, packed = (os.path.join(WORK, n) for n in
                             ("odd.body", "odd.payload", "odd.payload.zst"))
    with open(body, "wb") as f:
        f.write(data[32:])
    plain = subprocess.run([zstd, "-d", "-q", "-c", body],
                           capture_output=True).stdout
    if not check(plain.count(b"_ZN2ns4makeEv") == 1,
                 "fg.mprof names _ZN2ns4makeEv once"):
        return None
    with open(payload, "wb") as f:
        f.write(plain.replace(b"_ZN2ns4makeEv", ODD_NAME.encode()))
    subprocess.run([zstd, "-q", "-f", payload, "-o", packed], check=True)
    with open(packed, "rb") as f:
        compressed = f.read()
    header = bytearray(data[:32])
    header[24:32] = len(compressed).to_bytes(8, "little")
    odd = os.path.join(WORK, "odd.mprof")
    with open(odd, "wb") as f:
        f.write(bytes(header) + compressed)
    return odd


def test_odd_names(prefix, libc_strdup):
    odd = odd_profile()
    if odd is None:
        return
    # A merged profile needs no --binary: same stacks, same rows.
    merged = os.path.join(WORK, "fg.mprof")
    got = memprof("flamegraph", merged).stdout.splitlines()
    check(got == expected_stacks(prefix, libc_strdup, "bytes"),
          "flamegraph of the merged .mprof, without --binary", "\n".join(got))

    folded_name = ODD_NAME.replace(";", ":")
    want = sorted(l.replace("ns::make()", folded_name)
                  for l in expected_stacks(prefix, libc_strdup, "bytes"))
    got = memprof("flamegraph", odd).stdout.splitlines()
    check(got == want, "flamegraph: ';' in a name becomes ':'",
          "\n".join(got))

    out = memprof("functions", "--format=csv", odd)
    rows = list(csv.DictReader(io.StringIO(out.stdout)))
    check([r["name"] for r in rows if r["bytes"] == "48"] == [ODD_NAME]
          and len(rows) == 6, "functions --format=csv quotes a name with "
          "',' and '\"'", out.stdout)
    rows = json.loads(memprof("functions", "--format=json",
                              odd).stdout)["functions"]
    check([r["name"] for r in rows if r["bytes"] == 48] == [ODD_NAME],
          "functions --format=json escapes a name with '\"'", str(rows))

    svg = memprof("flamegraph", "--format=svg", odd).stdout
    want = sorted(l.replace("ns::make()", folded_name)
                  for l in expected_stacks(prefix, libc_strdup, "bytes"))
    root = check_svg("svg of odd names", svg, want, 1200, "bytes")
    if root is not None:
        titles = [t.text for t in root.iter(SVG_NS + "title")]
        check(folded_name + ": 48 bytes (2.14%)" in titles,
              "svg: a name with markup is escaped in its <title>",
              str(titles))


# ---- Help, usage and input errors ----


def test_usage():
    options = {"functions": ["--binary", "--inclusive", "--skip-unsymbolized",
                             "--sort", "--top", "--format"],
               "flamegraph": ["--binary", "--metric", "--names", "--lines",
                              "--format", "--svg", "--width", "--min-width",
                              "--title"]}
    for command, names in options.items():
        out = memprof(command, "--help")
        check(out.returncode == 0
              and out.stdout.startswith("usage: memprof %s" % command)
              and all(n in out.stdout for n in names)
              and "default" in out.stdout and "Example" in out.stdout,
              "%s --help: usage, every option, defaults, an example" % command,
              out.stdout[:200] + out.stderr)
        check(memprof("help", command).stdout == out.stdout,
              "memprof help %s" % command)

    bad = [("functions", "--bogus"), ("functions", "--sort=size"),
           ("functions", "--format=yaml"), ("functions", "--top=many"),
           ("flamegraph", "--bogus"), ("flamegraph", "--metric=size"),
           ("flamegraph", "--names=short"), ("flamegraph", "--format=png"),
           ("flamegraph", "--width=wide"), ("flamegraph", "--min-width=200")]
    for command, option in bad:
        out = memprof(command, option, PROFILE)
        check(out.returncode == 2 and out.stdout == ""
              and "see 'memprof %s --help'" % command in out.stderr,
              "%s %s: usage error, status 2" % (command, option),
              "status %d: %s" % (out.returncode, out.stderr))
    for command in ("functions", "flamegraph"):
        out = memprof(command)
        check(out.returncode == 2 and "no profile given" in out.stderr,
              command + " with no profile: status 2", out.stderr)

    not_profile = os.path.join(WORK, "not-a-profile")
    with open(not_profile, "w") as text:
        text.write("hello, this is no profile\n")
    for command in ("functions", "flamegraph"):
        out = memprof(command, not_profile)
        check(out.returncode == 2 and "not-a-profile" in out.stderr,
              command + " on a file that is no profile: status 2", out.stderr)
        out = memprof(command, os.path.join(WORK, "missing.profraw"))
        check(out.returncode == 2, command + " on a missing file: status 2",
              out.stderr)

    # Without the side file there are no live bytes to draw.
    bare = os.path.join(WORK, "bare.profraw")
    shutil.copy(PROFILE, bare)
    out = memprof("flamegraph", "--metric=live", bare)
    check(out.returncode == 2 and "side file" in out.stderr,
          "flamegraph --metric=live without the side file: status 2",
          out.stderr)
    # Unsymbolized, every context is a stack of addresses of its own.
    out = memprof("flamegraph", "--", bare)
    check(out.returncode == 0 and len(out.stdout.splitlines()) == CONTEXTS
          and "main" not in out.stdout,
          "flamegraph -- PROFILE: a profile after --, unsymbolized",
          out.stdout + out.stderr)


def main():
    build_memprof()
    build_and_run_program()
    lines_of = source_lines()

    # The frames the C library adds: strdup's allocation site (the one
    # unsymbolized frame of one context), and the frames above main (the
    # same in every stack).
    inclusive = functions_json("--inclusive")["functions"]
    unsymbolized = [r["name"] for r in inclusive
                    if not r["debug_info"] and r["contexts"] == 1]
    check(len(unsymbolized) == 1 and re.match(
        r"^(\[[0-9a-f]{8}\]\+)?0x[0-9a-f]+$", unsymbolized[0]),
        "strdup's allocation site is one unsymbolized frame", str(unsymbolized))
    libc_strdup = unsymbolized[0] if unsymbolized else "?"
    stacks = folded()
    roots = {line.split(";main;")[0] for line in stacks}
    check(len(roots) == 1 and next(iter(roots)).startswith("_start;"),
          "every stack has the same frames above main, from _start",
          str(roots))
    prefix = next(iter(roots)).split(";") if roots else []

    test_functions_json(libc_strdup, prefix)
    test_functions_csv()
    test_functions_text(libc_strdup)
    test_folded(prefix, libc_strdup, lines_of)
    test_svg(prefix, libc_strdup)
    test_odd_names(prefix, libc_strdup)
    test_usage()
    return results.finish()


if __name__ == "__main__":
    sys.exit(main())
