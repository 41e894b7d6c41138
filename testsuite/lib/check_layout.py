#!/usr/bin/env python3
"""The tree's architecture, checked (docs/internals.md, "The tree"):

  - no program reaches into another's folder: a file under analysis/ or
    gcc-plugin/ includes no header of runtime/, and a file under runtime/
    none of analysis/ or gcc-plugin/; formats/ includes none of the three;
    every quoted #include must resolve in the folder's own include path;
  - docs/internals.md names a file for every arrow of the data flow, and
    every file it names there exists.

Prints PASS/FAIL lines and `layout: N passed, N failed'.
"""
import os
import re
import sys

TOP = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
ANALYSIS_ROOMS = ["commands", "model", "symbolize", "trace", "render"]

# Each program's folders and where its quoted includes may resolve.
PROGRAMS = {
    "runtime": (["runtime"], ["runtime", "formats", "include"]),
    "formats": (["formats"], ["formats", "include"]),
    "analysis": (["analysis"], ["analysis/" + r for r in ANALYSIS_ROOMS]
                 + ["analysis", "formats", "include"]),
    "gcc-plugin": (["gcc-plugin"], ["gcc-plugin", "formats", "include"]),
}

passed = failed = 0


def check(ok, what, detail=""):
    global passed, failed
    if ok:
        passed += 1
        print("PASS: " + what)
    else:
        failed += 1
        print("FAIL: " + what + (": " + detail if detail else ""))


def sources(folder):
    for root, _, files in os.walk(os.path.join(TOP, folder)):
        for name in sorted(files):
            if re.search(r"\.(c|cc|h|def)$", name):
                yield os.path.join(root, name)


def resolve(include, source, path):
    """Where a quoted include resolves: the including file's own folder
    first, then the include path, as GCC searches."""
    for folder in [os.path.dirname(source)] + [os.path.join(TOP, p) for p in path]:
        candidate = os.path.normpath(os.path.join(folder, include))
        if os.path.exists(candidate):
            return os.path.relpath(candidate, TOP)
    return None


for program, (folders, path) in PROGRAMS.items():
    allowed = tuple(p + "/" for p in path) + tuple(f + "/" for f in folders)
    # runtime/hint/ is a program of its own with the same rule.
    bad = []
    count = 0
    for folder in folders:
        for source in sources(folder):
            text = open(source, encoding="utf-8", errors="replace").read()
            for include in re.findall(r'^\s*#\s*include\s+"([^"]+)"', text, re.M):
                count += 1
                where = resolve(include, source, path)
                rel = os.path.relpath(source, TOP)
                if where is None:
                    # GCC's own headers in the plugin, generated files.
                    if program == "gcc-plugin" or include.endswith(".def"):
                        continue
                    bad.append("%s: \"%s\" resolves nowhere in %s" % (rel, include, path))
                elif not where.startswith(allowed) or (
                        program != "runtime" and where.startswith("runtime/")) or (
                        program != "analysis" and where.startswith("analysis/")) or (
                        program != "gcc-plugin" and where.startswith("gcc-plugin/")):
                    bad.append("%s includes %s" % (rel, where))
    check(not bad and count > 0,
          "%s/: its %d quoted includes stay in its own folder, formats/ and include/"
          % (program, count), "; ".join(bad))

internals = open(os.path.join(TOP, "docs/internals.md")).read()
section = internals[internals.index("## The data flow"):internals.index("## The tree")]
arrows = re.findall(r"^\| \((\d+)\) \|[^|]*\|([^\n]*)\|$", section, re.M)
drawn = sorted(set(int(n) for n in re.findall(r"\((\d+)\)", section.split("| arrow |")[0])))
check(drawn and sorted(int(n) for n, _ in arrows) == drawn,
      "docs/internals.md: each of the %d arrows drawn has a row in the table" % len(drawn),
      "drawn %s, rows %s" % (drawn, [n for n, _ in arrows]))
for number, owners in arrows:
    files = re.findall(r"`([\w./-]+\.(?:c|cc|h))`", owners)
    missing = [f for f in files if not os.path.exists(os.path.join(TOP, f))]
    check(files and not missing,
          "docs/internals.md: arrow (%s) names %d files, each exists" % (number, len(files)),
          "none named" if not files else "missing: " + ", ".join(missing))

print("layout: %d passed, %d failed" % (passed, failed))
sys.exit(1 if failed else 0)
