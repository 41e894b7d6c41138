#!/usr/bin/env python3
"""`memprof export` checked by the viewers it writes for: pprof's gzipped
profile.proto read by the real `go tool pprof` (Debian's golang-go), and
speedscope's JSON loaded by the real speedscope (npm's package) in
headless Chromium.

Builds the test programs with the plugin and the runtime (fg_program.c
and report_program.c at -O0, export_program.cc at -O2 for inline chains,
report_program.c "none" for a profile with no context), runs each once,
and for each profile checks against `memprof show --format=json`:
  - pprof -traces, for every sample type (alloc_space, alloc_objects,
    inuse_space, inuse_objects, accesses): the same stacks (frame names,
    inline frames marked) with the same values, context for context;
  - pprof -top: the same total and the same sites (flat value per
    allocating function), largest first;
  - pprof -raw: the mapping of the program with its build id and file
    name, and inline chains as one location's Line list;
  - speedscope: the file's profiles, one per metric, sum to show's totals;
    in Chromium, the page names the profile and its first metric, and the
    sandwich view's first row is show's largest allocating function with
    its size as speedscope formats it (screenshots kept in the work
    directory, testsuite/analysis/work/export/);
  - --help, and that bad options exit with 2.

Run: python3 testsuite/analysis/test_export.py [--keep]
Ends with `export: N passed, N failed`.
"""

import argparse
import collections
import functools
import gzip
import http.server
import json
import os
import re
import shutil
import stat
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(TOP, "testsuite", "lib"))
sys.path.insert(0, HERE)
from report import Report  # noqa: E402
import instrumented  # noqa: E402
import test_report  # noqa: E402  (its WebDriver client, Browser)

WORK = os.path.join(HERE, "work", "export")
MEMPROF = os.environ.get("MEMPROF") or os.path.join(TOP, "analysis", "memprof")

results = Report("export")
check = results.check

# pprof's sample types and the figure of `memprof show --format=json' each
# must equal: a function of one record.
SAMPLE_TYPES = {
    "alloc_space": lambda r: r["bytes"],
    "alloc_objects": lambda r: r["allocs"],
    "inuse_space": lambda r: (r["extra"] or {}).get("live_bytes", 0),
    "inuse_objects": lambda r: (r["extra"] or {}).get("live_allocations", 0),
    "accesses": lambda r: r["accesses"],
    "peak_space": lambda r: r["peak_bytes"],
    "peak_objects": lambda r: r["peak_blocks"],
}


def run(args, **kwargs):
    return subprocess.run(args, capture_output=True, text=True, **kwargs)


def fatal(message):
    check(False, message)
    sys.exit(results.finish())


# ---- The profiles ----

def build_and_run(name, source, compiler, flags, argument=None):
    binary = os.path.join(WORK, name)
    built = instrumented.build(TOP, os.path.join(HERE, source), binary,
                               compiler,
                               ["-g", "-fno-optimize-sibling-calls"] + flags)
    if not check(built.returncode == 0, f"{name}: {source} builds",
                 built.stderr[-2000:]):
        return None
    profile = binary + ".profraw"
    ran = instrumented.run_profiled(binary, profile,
                                    [argument] if argument else [])
    if not check(ran.returncode == 0 and os.path.exists(profile),
                 f"{name}: the program writes its profile", ran.stderr):
        return None
    return binary, profile


def show_records(binary, profile):
    out = run([MEMPROF, "show", "--format=json", "--top=0",
               "--binary=" + binary, profile])
    if not check(out.returncode == 0, "memprof show --format=json",
                 out.stderr):
        return None
    return json.loads(out.stdout)["records"]


# show names an unsymbolized frame by its module's file (libc.so.6+0x2a1b)
# or, without one, by its build id ([1f2e...]+0x2a1b) or address alone.
UNSYMBOLIZED_SHOW = re.compile(r"^((\[[0-9a-f]+\]|[^\s()\[\]]+)\+)?0x[0-9a-f]+$")
# (the runtime's mark of folded recursion is a name both print alike)
UNSYMBOLIZED_PPROF = re.compile(r"^(\[(?!recursion folded\]).*\]|0x[0-9a-f]+)$")


def show_stack(record):
    """The frame names of a record as pprof -traces prints them: an
    unsymbolized location (show: "[buildid]+0xADDR") is "?" (pprof names
    it by its mapping's file), inlined frames end with " (inline)"."""
    names = []
    for frame in record["frames"]:
        if UNSYMBOLIZED_SHOW.match(frame["name"]) and not frame["function"]:
            names.append("?")
        else:
            names.append(frame["name"] + (" (inline)" if frame["inline"]
                                          else ""))
    return tuple(names)


# ---- pprof ----

def pprof(*args):
    env = dict(os.environ, PPROF_TMPDIR=WORK, HOME=WORK)
    return run(["go", "tool", "pprof", "-symbolize=none"] + list(args),
               env=env)


def pprof_traces(path, sample_type):
    """[(value, (names...))] of `go tool pprof -traces'."""
    out = pprof("-traces", "-sample_index=" + sample_type, "-unit=B"
                if sample_type.endswith("_space") else "-unit=minimum",
                path)
    if out.returncode != 0:
        return None, out.stderr
    traces = []
    for block in out.stdout.split("-----------+")[1:]:
        lines = [line for line in block.split("\n")[1:] if line.strip()]
        if not lines:
            continue
        first = re.match(r"^\s*(\S+)\s+(.*)$", lines[0])
        value = int(re.sub(r"B$", "", first.group(1)))
        names = [first.group(2)] + [line.strip() for line in lines[1:]]
        names = ["?" if UNSYMBOLIZED_PPROF.match(n) else n for n in names]
        traces.append((value, tuple(names)))
    return traces, ""


def check_pprof(name, binary, profile, records):
    path = os.path.join(WORK, name + ".pb.gz")
    out = run([MEMPROF, "export", "--format=pprof", "--binary=" + binary,
               "--output=" + path, profile])
    if not check(out.returncode == 0 and os.path.exists(path),
                 f"{name}: export --format=pprof writes {path}", out.stderr):
        return
    with open(path, "rb") as f:
        check(f.read(2) == b"\x1f\x8b", f"{name}: the pprof file is gzipped")
    with gzip.open(path) as f:
        f.read()

    has_live = any(r["extra"] for r in records)
    has_accesses = any(r["accesses"] for r in records)
    has_peak = any(r["peak_bytes"] for r in records)
    for sample_type, figure in SAMPLE_TYPES.items():
        if sample_type.startswith("inuse") and not has_live:
            continue
        if sample_type == "accesses" and not has_accesses:
            continue
        if sample_type.startswith("peak") and not has_peak:
            continue
        traces, error = pprof_traces(path, sample_type)
        if not check(traces is not None,
                     f"{name}: go tool pprof -traces -sample_index="
                     f"{sample_type} reads it", error):
            continue
        expected = sorted((figure(r), show_stack(r)) for r in records)
        check(sorted(traces) == expected,
              f"{name}: pprof -traces {sample_type}: {len(expected)} "
              f"stacks with show's values",
              f"pprof {sorted(traces)[:4]} show {expected[:4]}")

    # -top: the total and each allocating function's flat bytes.
    out = pprof("-top", "-nodefraction=0", "-sample_index=alloc_space",
                "-unit=B", path)
    if not check(out.returncode == 0, f"{name}: go tool pprof -top reads it",
                 out.stderr):
        return
    total = sum(r["bytes"] for r in records)
    found = re.search(r"of (\d+)B? total", out.stdout)
    check(found is not None and int(found.group(1)) == total,
          f"{name}: pprof -top total is show's {total} bytes",
          out.stdout[:400])
    sites = collections.Counter()
    for r in records:
        stack = show_stack(r)
        if stack:
            sites[stack[0]] += r["bytes"]
    pprof_sites = []
    for line in out.stdout.splitlines():
        row = re.match(r"^\s*(\d+)B\s+\S+%\s+\S+%\s+\d+B\s+\S+%\s+(.*)$",
                       line)
        if row and int(row.group(1)) > 0:
            site = row.group(2)
            pprof_sites.append((UNSYMBOLIZED_PPROF.match(site) and "?"
                                or site, int(row.group(1))))
    expected = sorted((("?" if UNSYMBOLIZED_SHOW.match(s) else s, v)
                       for s, v in sites.items() if v > 0),
                      key=lambda sv: -sv[1])
    check(sorted(pprof_sites) == sorted(expected)
          and [v for _, v in pprof_sites] == [v for _, v in expected],
          f"{name}: pprof -top: the {len(expected)} allocating sites with "
          f"show's bytes, largest first",
          f"pprof {pprof_sites} show {expected}")
    if expected:
        check(pprof_sites[0] == expected[0],
              f"{name}: pprof's top site is show's: {expected[0][0]} "
              f"({expected[0][1]} B)", f"pprof {pprof_sites[:1]}")

    # -raw: the program's mapping, and inline chains as Line lists.
    out = pprof("-raw", path)
    build_id = run(["readelf", "-n", binary]).stdout
    build_id = re.search(r"Build ID: ([0-9a-f]+)", build_id).group(1)
    mappings = out.stdout.split("Mappings")[-1]
    check(not records or re.search(r"^1: \S+ (\S*%s) %s" % (re.escape(
        os.path.basename(binary)), build_id), mappings.strip(), re.M)
          is not None,
          f"{name}: mapping 1 is the program, with its build id", mappings)
    inlined = [r for r in records if any(f["inline"] for f in r["frames"])]
    if inlined:
        check(" (inline)" in "".join(t for _, s in pprof_traces(
            path, "alloc_space")[0] for t in s),
            f"{name}: {len(inlined)} contexts with inline chains keep them")


# ---- speedscope ----

def speedscope_dir():
    root = run(["npm", "root", "--global"]).stdout.strip()
    path = os.path.join(root, "speedscope", "dist", "release")
    return path if os.path.exists(os.path.join(path, "index.html")) else None


def speedscope_bytes(value):
    """A byte count as speedscope's ByteFormatter writes it."""
    units = ["B", "KB", "MB", "GB"]
    unit = 0
    while value >= 1024 and unit < len(units) - 1:
        value /= 1024
        unit += 1
    return f"{value:.0f} B" if unit == 0 else f"{value:.2f} {units[unit]}"


def export_speedscope(name, binary, profile, records):
    path = os.path.join(WORK, name + ".speedscope.json")
    out = run([MEMPROF, "export", "--format=speedscope", "--binary=" + binary,
               "--output=" + path, profile])
    if not check(out.returncode == 0, f"{name}: export --format=speedscope",
                 out.stderr):
        return None
    with open(path) as f:
        data = json.load(f)
    figures = {"bytes allocated": lambda r: r["bytes"],
               "allocations": lambda r: r["allocs"],
               "bytes live at exit": SAMPLE_TYPES["inuse_space"],
               "accesses": lambda r: r["accesses"]}
    ok = True
    for p in data["profiles"]:
        total = sum(figures[p["name"]](r) for r in records)
        ok &= (p["type"] == "sampled" and sum(p["weights"]) == total
               and p["endValue"] == total
               and len(p["samples"]) == len(p["weights"])
               and p["unit"] == ("bytes" if "bytes" in p["name"]
                                 else "none"))
    check(ok and data["profiles"][0]["name"] == "bytes allocated",
          f"{name}: speedscope's {len(data['profiles'])} profiles sum to "
          f"show's totals", json.dumps(data["profiles"])[:300])
    return path


class Files(http.server.SimpleHTTPRequestHandler):
    """speedscope's page from its package, the profiles from WORK."""

    def translate_path(self, path):
        path = path.split("?")[0].split("#")[0].lstrip("/")
        if path.startswith("profiles/"):
            return os.path.join(WORK, os.path.basename(path))
        return os.path.join(self.server.speedscope, path or "index.html")

    def log_message(self, *args):
        pass


def check_speedscope_page(browser, base, name, path, profile, records):
    # A new query each time: a change of the hash alone loads nothing.
    browser.open(f"{base}/index.html?{name}#profileURL=/profiles/"
                 f"{os.path.basename(path)}")
    label = browser.wait_for(
        "return document.body.innerText.match(/bytes allocated \\(1\\/\\d\\)/)"
        " ? document.body.innerText : ''", timeout=20)
    check(bool(label) and os.path.basename(profile) in browser.script(
        "return document.title"),
        f"{name}: speedscope shows the profile, its name and 'bytes "
        f"allocated'", (label or browser.script(
            "return document.body.innerText"))[:300])
    browser.script("for (const e of document.querySelectorAll('div')) "
                   "if (e.childElementCount <= 1 && "
                   "/Sandwich$/.test(e.textContent)) { e.click(); break; }")
    table = browser.wait_for(
        "const t = document.body.innerText;"
        "const rows = t.split('Symbol Name')[1] || '';"
        "return rows.trim().split('\\n').length >= 3 ? t : ''", timeout=10)
    browser.screenshot(os.path.join(WORK, name + ".speedscope.png"))
    sites = collections.Counter()
    for r in records:
        if r["frames"]:
            sites[r["frames"][0]["name"]] += r["bytes"]
    top, size = max(sites.items(), key=lambda sv: (sv[1], sv[0]))
    rows = (table or "").split("Symbol Name", 1)[-1].strip().split("\n")
    first = [row.strip() for row in rows[:3]]
    want = speedscope_bytes(size)
    check(len(first) == 3 and first[1].startswith(want)
          and first[2] == top,
          f"{name}: speedscope's top frame is show's: {top}, {want}",
          f"the page's first row: {first}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--keep", action="store_true",
                        help="keep the work files")
    options = parser.parse_args()
    begin = time.time()
    shutil.rmtree(WORK, ignore_errors=True)
    os.makedirs(WORK)
    if not os.environ.get("MEMPROF"):
        made = run(["make", "-C", TOP, "analysis/memprof"])
        if made.returncode != 0:
            fatal("make analysis/memprof: " + made.stderr[-2000:])

    if not check(shutil.which("go") is not None,
                 "go (golang-go, for go tool pprof) is installed",
                 "run scripts/install-deps"):
        return results.finish()

    # Usage.
    out = run([MEMPROF, "export", "--help"])
    check(out.returncode == 0 and "--format=FORMAT" in out.stdout,
          "export --help")
    for args, what in ((["x.profraw"], "no --format"),
                       (["--format=svg", "x.profraw"], "an unknown format"),
                       (["--format=pprof"], "no profile"),
                       (["--format=pprof", "--bogus", "x"], "an unknown option")):
        out = run([MEMPROF, "export"] + args)
        check(out.returncode == 2 and "export" in out.stderr,
              f"export with {what} exits with 2 and says why", out.stderr)
    out = run([MEMPROF, "export", "--format=pprof",
               "--output=" + os.path.join(WORK, "missing.pb.gz"),
               os.path.join(WORK, "missing.profraw")])
    check(out.returncode == 2 and "missing.profraw" in out.stderr,
          "export of a missing profile names it, status 2", out.stderr)

    # A FIFO (as /dev/null, not a regular file) is written in place, never
    # replaced by a regular file of the same name.
    fifo = os.path.join(WORK, "fifo")
    os.mkfifo(fifo)
    received = []
    reader = threading.Thread(
        target=lambda: received.append(open(fifo, "rb").read()))
    reader.start()
    sample = os.path.join(WORK, "fifo.profraw")
    shutil.copy(os.path.join(TOP, "testsuite", "fuzz", "corpus", "raw",
                             sorted(os.listdir(os.path.join(
                                 TOP, "testsuite", "fuzz", "corpus",
                                 "raw")))[0]), sample)
    out = run([MEMPROF, "export", "--format=pprof", "--output=" + fifo,
               sample])
    if out.returncode != 0:  # the reader waits for a writer
        open(fifo, "wb").close()
    reader.join(timeout=30)
    check(out.returncode == 0 and stat.S_ISFIFO(os.stat(fifo).st_mode)
          and received and received[0][:2] == b"\x1f\x8b",
          "--output=FIFO: written in place, still a FIFO",
          out.stderr)

    programs = {}
    for name, source, compiler, flags, argument in (
            ("fg", "fg_program.c", "gcc", ["-O0"], None),
            ("report", "report_program.c", "gcc", ["-O0"], None),
            ("empty", "report_program.c", "gcc", ["-O0"], "none"),
            ("cxx", "export_program.cc", "g++", ["-O2"], None)):
        made = build_and_run(name, source, compiler, flags, argument)
        if made is not None:
            records = show_records(*made)
            if records is not None:
                programs[name] = made + (records,)
    check(any(any(f["inline"] for f in r["frames"])
              for r in programs.get("cxx", (0, 0, []))[2]),
          "cxx: the -O2 program has contexts with inline chains")

    for name, (binary, profile, records) in programs.items():
        check_pprof(name, binary, profile, records)

    pages = []
    for name, (binary, profile, records) in programs.items():
        path = export_speedscope(name, binary, profile, records)
        if path is not None and records:
            pages.append((name, path, profile, records))

    speedscope = speedscope_dir()
    if not check(speedscope is not None and os.access(
            test_report.CHROMEDRIVER, os.X_OK),
            "speedscope (npm) and chromedriver are installed",
            "run scripts/install-deps"):
        return results.finish()
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Files)
    server.speedscope = speedscope
    threading.Thread(target=server.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{server.server_address[1]}"
    test_report.WORK = WORK  # where its Browser writes chromedriver.log
    browser = None
    try:
        browser = test_report.Browser(tempfile.mkdtemp(prefix="chromium-",
                                                       dir=WORK))
        for name, path, profile, records in pages:
            check_speedscope_page(browser, base, name, path, profile,
                                  records)
    except Exception as error:  # a crash of the test is a failure too
        check(False, "the browser checks run to the end",
              f"{type(error).__name__}: {error}")
    finally:
        if browser is not None:
            browser.close()
        server.shutdown()
    if not options.keep:
        for entry in os.listdir(WORK):
            if not entry.endswith(".png"):
                p = os.path.join(WORK, entry)
                shutil.rmtree(p) if os.path.isdir(p) else os.remove(p)
    print(f"      (all in {time.time() - begin:.1f} s; screenshots in {WORK})")
    return results.finish()


if __name__ == "__main__":
    sys.exit(main())
