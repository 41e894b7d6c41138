#!/usr/bin/env python3
"""The heap's peak and timeline (docs/analysis.md, "The heap's peak"), end
to end on phases.c, a program whose heap has a known shape: built with the
plugin, run with the runtime as users run it, read back through `memprof
show --metric=peak --format=json`, findings, flamegraph, diff, merge, and
the HTML report in headless Chromium.

  - the exact peak (12 MiB), its blocks, its time order between the
    phases, and the exact per-context live bytes at it (peak_tolerance=0);
  - the default tolerance: the peak is still exact and the breakdown's
    stated error is within 1 %;
  - under sampling: the 1 MiB blocks are always sampled, so the estimate
    is the peak, and the profile says it is an estimate;
  - the timeline's shape: three plateaus (5 MiB, 12 MiB, 4 MiB + 1000 KiB),
    in that order, at most a few hundred samples;
  - peak=0: no peak, and commands that need it say so;
  - merge keeps the highest run's peak through .mprof; diff of peaks;
  - a side file whose peak section is cut is refused with a message that
    names it;
  - the program's output and exit status are those of the plain build;
  - the report's heap-over-time chart in Chromium: a layer per top
    context, the peak marked where it was, the legend, a screenshot;
  - per thread (named_threads.c, traced): `memprof trace show` names the
    threads (pthread_setname_np) and gives each its bytes allocated and
    live at the peak; a version 1 trace (no names) is still read.

Prints one line per check and ends with `peak: N passed, N failed`."""

import argparse
import json
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(TOP, "testsuite", "lib"))
from instrumented import side_file_of  # noqa: E402
sys.path.insert(0, os.path.join(TOP, "testsuite", "analysis"))
from report import Report  # noqa: E402

MEMPROF = os.path.join(TOP, "analysis", "memprof")
WORK = os.path.join(HERE, "work")
MIB = 1024 * 1024
results = Report("peak")


def run(command, **kwargs):
    return subprocess.run(command, capture_output=True, text=True, **kwargs)


def build(cc):
    env = dict(os.environ, PKG_CONFIG_PATH=TOP)
    plugin = run(["pkg-config", "--variable=plugin", "memprof"],
                 env=env).stdout.strip()
    flags = run(["pkg-config", "--cflags", "--libs", "memprof"],
                env=env).stdout.split()
    binary = os.path.join(WORK, "phases")
    built = run([cc, "-g", "-O0", "-fno-optimize-sibling-calls",
                 f"-fplugin={plugin}", os.path.join(HERE, "phases.c"),
                 "-o", binary] + flags)
    plain = os.path.join(WORK, "phases_plain")
    built_plain = run([cc, "-g", "-O0", os.path.join(HERE, "phases.c"),
                       "-o", plain])
    ok = results.check(built.returncode == 0 and built_plain.returncode == 0,
                       "phases.c builds with the plugin and without",
                       built.stderr[-2000:] + built_plain.stderr[-2000:])
    return (binary, plain) if ok else (None, None)


def profile(binary, name, options="", args=()):
    path = os.path.join(WORK, f"{name}.profraw")
    ran = run([binary, *args], cwd=WORK, env=dict(
        os.environ, MEMPROF_OPTIONS=f"profile_file={path}{options}"))
    results.check(ran.returncode == 0 and os.path.exists(path),
                  f"{name}: the program writes its profile", ran.stderr)
    return path, ran


def show(binary, *paths):
    out = run([MEMPROF, "show", "--metric=peak", "--format=json",
               "--no-libraries", f"--binary={binary}", *paths])
    if not results.check(out.returncode == 0, "show --metric=peak runs",
                         out.stderr):
        return None
    return json.loads(out.stdout)


def by_site(shown):
    """{leaf function: record} of show's JSON."""
    return {r["frames"][0]["function"]: r for r in shown["records"]
            if r["frames"]}


def check_exact(binary, plain):
    path, ran = profile(binary, "exact", ":peak_tolerance=0")
    native = run([plain], cwd=WORK)
    results.check(ran.stdout == native.stdout
                  and ran.returncode == native.returncode,
                  "the profiled program prints and exits as the plain one",
                  f"{ran.stdout!r} {native.stdout!r}")
    shown = show(binary, path)
    if shown is None:
        return None, None
    peak = shown["peak"]
    if not results.check(peak is not None, "the profile has a peak"):
        return None, None
    results.check(peak["bytes"] == 12 * MIB and peak["blocks"] == 12,
                  "the peak is 12 MiB in 12 blocks",
                  f"{peak['bytes']} in {peak['blocks']}")
    results.check(peak["error_bytes"] == 0 and not peak["sampled"],
                  "peak_tolerance=0: the breakdown is exact",
                  f"error {peak['error_bytes']}")
    sites = by_site(shown)
    expected = {"build_index": (8 * MIB, 8), "keep_tables": (4 * MIB, 4),
                "scratch": (0, 0), "small_tail": (0, 0)}
    got = {s: (sites[s]["peak_bytes"], sites[s]["peak_blocks"])
           for s in expected if s in sites}
    results.check(got == expected,
                  "the bytes and blocks of each context live at the peak",
                  str(got))
    order = [r["frames"][0]["function"] for r in shown["records"][:2]]
    results.check(order == ["build_index", "keep_tables"],
                  "--metric=peak ranks by bytes live at the peak", str(order))
    results.check(sum(r["peak_bytes"] for r in shown["records"])
                  == peak["bytes"],
                  "the contexts at the peak add up to the peak")

    timeline = peak["timeline"]
    live = [s["live_bytes"] for s in timeline]
    times = [s["time_us"] for s in timeline]
    results.check(times == sorted(times) and times[-1] <= peak["duration_us"],
                  "the timeline is in time order, within the run",
                  str(times[:5]))
    results.check(20 <= len(timeline) <= 513,
                  f"the timeline has {len(timeline)} samples (a few hundred "
                  "at most)")
    # The plateaus: phase 1 reaches 5 MiB before anything higher; the peak
    # comes after scratch is freed (4 MiB again) and before small_tail.
    first_peak = next((i for i, v in enumerate(live) if v == 12 * MIB), None)
    results.check(max(live) == 12 * MIB and first_peak is not None,
                  "the timeline reaches the peak", str(max(live)))
    if first_peak is not None:
        before, after = live[:first_peak], live[first_peak:]
        results.check(5 * MIB in before and max(before) < 12 * MIB
                      and before.index(5 * MIB) < before.index(4 * MIB,
                                                               before.index(
                                                                   5 * MIB))
                      if 4 * MIB in before[before.index(5 * MIB):]
                      else False,
                      "phase 1 plateaus at 5 MiB, then falls to 4 MiB before "
                      "the peak", str(before))
        tail = 4 * MIB + 1000 * 1024
        results.check(tail in after and after.index(tail) > after.index(4 * MIB)
                      if 4 * MIB in after else False,
                      "after the peak: back to 4 MiB, then 4 MiB + 1000 KiB",
                      str(after[:40]))
        tail_time = timeline[first_peak + after.index(tail)]["time_us"] \
            if tail in after else 0
        results.check(peak["time_us"] == times[first_peak]
                      and peak["time_us"] < tail_time,
                      "the peak's time is where the timeline reaches it, "
                      "before the last phase",
                      f"{peak['time_us']} {times[first_peak]} {tail_time}")
        at_peak = {t["context"]: t["bytes"] for t in timeline[first_peak]["top"]}
        contexts = {r["context"]: r["frames"][0]["function"]
                    for r in shown["records"]}
        named = {contexts.get(c): b for c, b in at_peak.items()}
        results.check(named == {"build_index": 8 * MIB, "keep_tables": 4 * MIB},
                      "the timeline's top contexts at the peak",
                      str(named))
    return path, shown


def check_exact_with_threads(binary, exact_shown):
    """The same exact breakdown when the process has a second thread (the
    runtime's dump thread, started by dump_interval_s): peak.c then walks
    the live blocks instead of the contexts' live counts."""
    path, _ = profile(binary, "threaded",
                      ":peak_tolerance=0:dump_interval_s=3600")
    shown = show(binary, path)
    if shown is None or shown["peak"] is None:
        results.check(False, "with a second thread: the profile has a peak")
        return
    peak, exact = shown["peak"], exact_shown["peak"]
    results.check((peak["bytes"], peak["blocks"], peak["error_bytes"])
                  == (exact["bytes"], exact["blocks"], 0),
                  "with a second thread: the same exact peak and breakdown",
                  f"{peak['bytes']} in {peak['blocks']}, error "
                  f"{peak['error_bytes']}")
    threaded = {site: (r["peak_bytes"], r["peak_blocks"])
                for site, r in by_site(shown).items()}
    alone = {site: (r["peak_bytes"], r["peak_blocks"])
             for site, r in by_site(exact_shown).items()}
    results.check(threaded == alone,
                  "with a second thread: each context's bytes and blocks at "
                  "the peak are those of the single-threaded run",
                  f"{threaded} against {alone}")


def check_tolerance_and_sampling(binary):
    path, _ = profile(binary, "default")
    shown = show(binary, path)
    if shown and shown["peak"]:
        peak = shown["peak"]
        results.check(peak["bytes"] == 12 * MIB
                      and peak["error_bytes"] <= peak["bytes"] // 100
                      and peak["snapshot_bytes"] + peak["error_bytes"]
                      == peak["bytes"],
                      "default tolerance: the peak exact, the breakdown's "
                      "stated error within 1 %",
                      f"{peak['bytes']} error {peak['error_bytes']}")
    path, _ = profile(binary, "sampled", ":sample_interval=65536")
    shown = show(binary, path)
    if shown and shown["peak"]:
        peak = shown["peak"]
        sites = by_site(shown)
        results.check(peak["sampled"] and
                      abs(peak["bytes"] - 12 * MIB) <= 12 * MIB // 100,
                      "sampling: the peak is an estimate, said so; 1 MiB "
                      "blocks keep it within 1 %", str(peak["bytes"]))
        results.check(sites.get("build_index", {}).get("peak_bytes", 0)
                      >= 8 * MIB * 0.99,
                      "sampling: build_index's bytes at the peak")


def check_off(binary):
    path, _ = profile(binary, "off", ":peak=0")
    shown = show(binary, path)
    if shown:
        results.check(shown["peak"] is None
                      and all(r["peak_bytes"] == 0 for r in shown["records"]),
                      "peak=0: the profile has no peak")
    flame = run([MEMPROF, "flamegraph", "--metric=peak", "--no-libraries",
                 f"--binary={binary}", path])
    results.check(flame.returncode != 0 and "--metric=peak" in flame.stderr
                  and "peak" in flame.stderr,
                  "flamegraph --metric=peak without a peak: a clear error",
                  flame.stderr)
    text = run([MEMPROF, "show", "--metric=peak", f"--binary={binary}", path])
    results.check("No peak" in text.stdout, "show says the profile has no peak",
                  text.stdout[:300])


def check_commands(binary, exact):
    flame = run([MEMPROF, "flamegraph", "--metric=peak", "--no-libraries",
                 f"--binary={binary}", exact])
    lines = sorted(flame.stdout.split("\n"))
    leaves = {line.rsplit(" ", 1)[0].split(";")[-1]: int(line.rsplit(" ", 1)[1])
              for line in lines if line}
    results.check(leaves == {"build_index": 8 * MIB, "keep_tables": 4 * MIB},
                  "flamegraph --metric=peak: the peak's stacks", str(leaves))

    found = run([MEMPROF, "findings", "--kind=at-peak", "--format=json",
                 "--no-libraries", f"--binary={binary}", exact])
    kinds = json.loads(found.stdout)["findings"] if found.returncode == 0 else []
    results.check([(f["kind"], f["frames"][0].split(" ")[0], f["bytes"])
                   for f in kinds]
                  == [("at-peak", "build_index", 8 * MIB),
                      ("at-peak", "keep_tables", 4 * MIB)],
                  "findings --kind=at-peak: the contexts that make the peak",
                  found.stdout[:500] + found.stderr)

    bigger, _ = profile(binary, "bigger", ":peak_tolerance=0", ["10"])
    diff = run([MEMPROF, "diff", "--sort=peak", "--format=json",
                "--no-libraries", f"--binary={binary}", exact, bigger])
    if results.check(diff.returncode == 0, "diff --sort=peak runs",
                     diff.stderr):
        d = json.loads(diff.stdout)
        results.check(d["total"] == {"a": 12 * MIB, "b": 14 * MIB}
                      and len(d["changes"]) == 1,
                      "diff --sort=peak: 12 MiB to 14 MiB, one context "
                      "changed", diff.stdout[:400])

    merged = os.path.join(WORK, "merged.mprof")
    made = run([MEMPROF, "merge", "--no-libraries", f"--binary={binary}",
                "-o", merged, exact, bigger])
    if results.check(made.returncode == 0, "merge of two runs", made.stderr):
        shown = show(binary, merged)
        alone = show(binary, bigger)
        if shown and alone:
            peak, best = shown["peak"], alone["peak"]
            results.check(peak["runs"] == 2 and peak["bytes"] == 14 * MIB
                          and peak["time_us"] == best["time_us"]
                          and len(peak["timeline"]) == len(best["timeline"]),
                          "merge keeps the highest run's peak and timeline, "
                          "counts the runs", f"{peak['runs']} {peak['bytes']}")
            sites = by_site(shown)
            results.check(sites["build_index"]["peak_bytes"] == 10 * MIB,
                          "merge: the contexts' bytes at the peak are that "
                          "run's")
        again = os.path.join(WORK, "again.mprof")
        run([MEMPROF, "merge", "-o", again, merged, exact])
        twice = show(binary, again)
        if twice:
            results.check(twice["peak"]["runs"] == 3
                          and twice["peak"]["bytes"] == 14 * MIB,
                          "merging a .mprof with a raw profile: 3 runs, the "
                          "same peak")

    # A side file cut inside its peak section.
    cut = os.path.join(WORK, "cut.profraw")
    shutil.copy(exact, cut)
    with open(side_file_of(exact), "rb") as side:
        data = side.read()
    with open(side_file_of(cut), "wb") as side:
        side.write(data[:-7])
    out = run([MEMPROF, "show", "--metric=peak", "--format=json",
               "--no-libraries", cut])
    results.check(out.returncode == 0 and "cut.extra" in out.stderr
                  and "peak section" in out.stderr
                  and json.loads(out.stdout)["peak"] is None,
                  "a side file with a cut peak section is ignored, named, "
                  "and why", out.stderr)


def check_report(binary, exact, keep):
    html = os.path.join(WORK, "peak.html")
    made = run([MEMPROF, "report", "--no-libraries", f"--binary={binary}",
                "--html", html, exact])
    if not results.check(made.returncode == 0, "report writes the page",
                         made.stderr):
        return
    import test_report
    test_report.WORK = WORK
    if not results.check(os.access(test_report.CHROMEDRIVER, os.X_OK),
                         "chromedriver is installed"):
        return
    user_data = tempfile.mkdtemp(prefix="chromium-", dir=WORK)
    browser = None
    try:
        browser = test_report.Browser(user_data)
        browser.open("file://" + html)
        ready = browser.wait_for(
            "return document.body.dataset.ready "
            "|| window.reportErrors.length;")
        results.check(ready == "true", "the report draws itself in Chromium",
                      str(browser.script("return window.reportErrors;")))
        chart = browser.script("""
var svg = document.getElementById('timeline-chart');
var box = svg.getBoundingClientRect();
var marker = document.getElementById('peak-marker');
return { layers: Array.from(svg.querySelectorAll('polygon.layer')).map(
    function (p) { return [p.dataset.series, p.getBBox().height]; }),
  marker: marker ? Number(marker.getAttribute('x1')) : null,
  width: box.width, height: box.height,
  note: document.getElementById('timeline-note').textContent,
  legend: Array.from(document.querySelectorAll('#timeline-legend li')).map(
    function (li) { return li.textContent; }) };
""")
        layers = chart["layers"]
        results.check(len(layers) >= 3 and all(h > 0 for _, h in layers[:2]),
                      "the heap-over-time chart stacks a layer per top "
                      "context", str(layers))
        results.check(chart["legend"][:2]
                      == ["#1 build_index 8.0 MiB at the peak",
                          "#2 keep_tables 4.0 MiB at the peak"],
                      "the legend names the contexts at the peak first",
                      str(chart["legend"]))
        peak = show(binary, exact)["peak"]
        expected_x = 84 + (1040 - 84 - 16) * peak["time_us"] \
            / peak["duration_us"]
        results.check(chart["marker"] is not None
                      and abs(chart["marker"] - expected_x) < 1,
                      "the peak is marked at its time",
                      f"{chart['marker']} vs {expected_x:.1f}")
        results.check("Peak 12.0 MiB live in 12 blocks" in chart["note"],
                      "the chart's note gives the peak", chart["note"])
        browser.click("#timeline-legend a")
        selected = browser.script(
            "return document.querySelector('#detail h2') &&"
            " document.querySelector('#detail h2').textContent;")
        results.check(selected is not None and "build_index" in selected,
                      "a legend link selects its context", str(selected))
        shot = os.path.join(WORK, "peak.png")
        browser.screenshot(shot)
        with open(shot, "rb") as image:
            png = image.read()
        results.check(png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) > 20000,
                      f"a screenshot of the page ({len(png)} bytes"
                      f"{', ' + shot if keep else ''})")
        errors = browser.script("return window.reportErrors;")
        results.check(errors == [], "no JavaScript error", str(errors))
    except Exception as error:  # a crash of the test is a failure too
        results.check(False, "the browser checks run to the end",
                      f"{type(error).__name__}: {error}")
    finally:
        if browser is not None:
            browser.close()


def as_version_1(trace, out):
    """Rewrite TRACE as version 1: its THREAD blocks (kind 5) dropped, the
    header's version 1 (zstd's command line decompresses and compresses)."""
    data = subprocess.run(["zstd", "-dc", trace], capture_output=True).stdout
    header = bytearray(data[:64])
    struct.pack_into("<I", header, 8, 1)
    blocks, at = [bytes(header)], 64
    sizes = {2: 16, 3: 16, 4: 32, 5: 16}
    while at + 16 <= len(data):
        kind, _, _, size = struct.unpack_from("<IIII", data, at)
        length = 16 + (size if kind == 1 else sizes[kind])
        if kind != 5:
            blocks.append(data[at:at + length])
        at += length
    subprocess.run(["zstd", "-q", "-f", "-o", out], input=b"".join(blocks),
                   check=True)


def check_threads(cc):
    binary = os.path.join(WORK, "named_threads")
    runtime = os.path.join(TOP, "runtime")
    built = run([cc, "-O1", "-g", os.path.join(HERE, "named_threads.c"), "-o",
                 binary, "-lpthread", "-L", runtime, "-Wl,-rpath," + runtime,
                 "-lmemprof"])
    if not results.check(built.returncode == 0, "named_threads.c builds",
                         built.stderr):
        return
    trace = os.path.join(WORK, "threads.trace.zst")
    ran = run([binary], cwd=WORK, env=dict(
        os.environ, MEMPROF_OPTIONS=f"trace=1:profile=0:trace_file={trace}"))
    results.check(ran.returncode == 0 and ran.stdout == "done\n",
                  "named_threads runs traced, its output its own", ran.stderr)
    shown = run([MEMPROF, "trace", "show", "--summary", trace])
    rows = re.findall(r"^\s+(\d+)\s+(\S+)\s+(\d+)\s+([\d.]+ \S+)\s+"
                      r"([\d.]+ \S+)$", shown.stdout, re.M)
    by_name = {name: (allocated, at_peak)
               for _, name, _, allocated, at_peak in rows}
    results.check("format version 2" in shown.stdout
                  and by_name.get("big-worker") == ("4.0 MiB", "4.0 MiB")
                  and by_name.get("small-worker") == ("1.0 MiB", "1.0 MiB"),
                  "trace show: the threads by name, with their bytes "
                  "allocated and live at the peak", shown.stdout)
    results.check(rows and rows[0][1] == "big-worker",
                  "the thread with the most bytes at the peak first",
                  str(rows[:1]))
    old = os.path.join(WORK, "threads.v1.trace.zst")
    as_version_1(trace, old)
    shown = run([MEMPROF, "trace", "show", "--summary", old])
    rows = re.findall(r"^\s+(\d+)\s+(\S+)\s+(\d+)\s+([\d.]+ \S+)\s+"
                      r"([\d.]+ \S+)$", shown.stdout, re.M)
    results.check(shown.returncode == 0 and "format version 1" in shown.stdout
                  and len(rows) == 3 and all(r[1] == "-" for r in rows)
                  and "4.0 MiB" in [r[4] for r in rows],
                  "a version 1 trace is still read: no names, the same "
                  "bytes", shown.stdout + shown.stderr)


def check_realloc(cc):
    """realloc_peak.c: a recorded block grown by realloc in its own chunk,
    with a second thread (peak.c walks the live blocks): the peak holds
    the old block and the new one, exactly."""
    env = dict(os.environ, PKG_CONFIG_PATH=TOP)
    plugin = run(["pkg-config", "--variable=plugin", "memprof"],
                 env=env).stdout.strip()
    flags = run(["pkg-config", "--cflags", "--libs", "memprof"],
                env=env).stdout.split()
    binary = os.path.join(WORK, "realloc_peak")
    built = run([cc, "-g", "-O1", "-fno-optimize-sibling-calls",
                 f"-fplugin={plugin}", os.path.join(HERE, "realloc_peak.c"),
                 "-o", binary] + flags)
    if not results.check(built.returncode == 0, "realloc_peak.c builds",
                         built.stderr[-2000:]):
        return
    path, ran = profile(binary, "realloc",
                        ":peak_tolerance=0:dump_interval_s=3600")
    results.check(ran.stdout == "done\n", "realloc_peak runs", ran.stderr)
    shown = show(binary, path)
    if shown is None or shown["peak"] is None:
        results.check(False, "realloc: the profile has a peak")
        return
    peak = shown["peak"]
    results.check((peak["bytes"], peak["blocks"], peak["error_bytes"])
                  == (5 * MIB, 2, 0),
                  "realloc in its own chunk: the peak is the old and the new "
                  "block, exactly",
                  f"{peak['bytes']} in {peak['blocks']}, error "
                  f"{peak['error_bytes']}")
    got = {site: (r["peak_bytes"], r["peak_blocks"])
           for site, r in by_site(shown).items() if r["peak_bytes"]}
    results.check(got == {"make_block": (2 * MIB, 1), "grow_block": (3 * MIB, 1)},
                  "realloc in its own chunk: each block live at the peak",
                  str(got))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--cc", default="gcc")
    parser.add_argument("--keep", action="store_true",
                        help="keep the work files (testsuite/peak/work/)")
    options = parser.parse_args()
    shutil.rmtree(WORK, ignore_errors=True)
    os.makedirs(WORK)
    binary, plain = build(options.cc)
    if binary is None:
        return results.finish()
    exact, shown = check_exact(binary, plain)
    if shown is not None:
        check_exact_with_threads(binary, shown)
    check_tolerance_and_sampling(binary)
    check_off(binary)
    if exact is not None:
        check_commands(binary, exact)
        check_report(binary, exact, options.keep)
    check_threads(options.cc)
    check_realloc(options.cc)
    if not options.keep:
        shutil.rmtree(WORK, ignore_errors=True)
    return results.finish()


if __name__ == "__main__":
    sys.exit(main())
