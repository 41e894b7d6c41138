#!/usr/bin/env python3
"""Findings a user can act on: no library noise, no false "untouched",
no waste figures that mean nothing (issue 22, the analysis's part).

- noise_program.cc (C++, built with the plugin): the C++ runtime's
  emergency exception pool and the C library's stdout buffer give no
  finding by default, and `findings` says how many it hid and how to see
  them (--include-system shows them, the pool's frame named by its module
  file, libstdc++.so.6+0x..., not a build-id prefix); the program's own
  never-touched buffer and leak are found at their functions; the
  std::vector's site is the user's function, not the STL's inlined
  frames, in `findings`, `show` and `functions`; a std::string filled by
  libstdc++.so's code has no never-touched or over-reserved finding and
  an unknown waste, ranked after every known one by --sort=waste;
- `report --html`, read in headless Chromium (test_report.py's
  WebDriver client): the rows name their sites at the user's functions,
  the detail panel folds the STL's frames above the site in a <details>
  that opens to show them, the findings leave the system's out and say
  so, and --include-system puts them back;
- `make demo`'s examples (examples/*.c, *.cc, built as the demo builds
  them): every finding is about the examples' own code;
- the runtime's interceptors of mem* and str*: the std::string
  libstdc++.so fills counts exactly what its memset and memcpy touched
  (nothing with count_library_accesses=0), the vector's counts are the
  same with and without them (the plugin's range calls are not counted
  twice); noise_compare_steps.c: memcmp, strcmp and strncmp count exactly
  the bytes to the first difference or NUL, at every position and start
  alignment (against the same ranges counted by the program itself);
  noise_strings.c: strlen of a 101-byte heap string from
  instrumented code adds exactly 13 counts, each comparison exactly the
  steps to the first difference, an instrumented memcpy of 4096 bytes
  counts 512, once; the comparisons return what the C library returns;
  preloaded into a program built without the plugin, nothing is counted;
- --focus, --ignore and --suppressions keep and drop contexts, and a bad
  expression is an error naming the file and line;
- noise_sampled.c built without the plugin and preloaded: every waste is
  unknown (null in JSON, `?` in text), and no finding is about untouched
  bytes; built with callbacks and run with access_sample_rate=16, blocks
  accessed 12 times are not "never touched" (with every access counted,
  the truly untouched block is).

Prints one line per check and ends with `noise: N passed, N failed`.
"""

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
sys.path.insert(0, HERE)
from report import Report  # noqa: E402
import run as analysis  # noqa: E402  (build, profile_of, memprof)

WORK = os.path.join(HERE, "work", "noise")
results = Report("noise")


def json_of(result, what):
    if result.returncode != 0:
        results.check(False, what, result.stderr[-500:])
        return None
    return json.loads(result.stdout)


def site_function(record):
    frames = record["frames"]
    return frames[record.get("site", 0)]["name"].split("(")[0] if frames else ""


def test_cxx_noise(binary, profile):
    findings = analysis.memprof("findings", "--binary=" + binary, profile)
    text = findings.stdout
    results.check(findings.returncode == 0 and "never_used" in text and "leaked_record" in text,
                  "findings: the program's own never-touched buffer and leak are found", text)
    results.check("emergency" not in text and "doallocate" not in text and "0xa" not in text
                  and "_dl_init" not in text,
                  "findings: no finding about the C++ runtime's pool or stdout's buffer", text)
    hidden = re.search(r"(\d+) findings? about what the C/C\+\+ runtime, system libraries or "
                       r"start-up allocate for themselves hidden; --include-system", text)
    results.check(hidden is not None and int(hidden.group(1)) >= 2,
                  "findings: says how many system findings it hid and how to see them", text[:400])

    everything = analysis.memprof("findings", "--include-system", "--binary=" + binary, profile)
    results.check(re.search(r"libstdc\+\+\.so\.6\+0x[0-9a-f]+", everything.stdout) is not None
                  and not re.search(r"\[[0-9a-f]{8}\]\+0x", everything.stdout),
                  "findings --include-system: the pool's frame is named by its module file",
                  everything.stdout[:1500])
    results.check("_IO_file_doallocate" in everything.stdout,
                  "findings --include-system: stdout's buffer is listed on request",
                  everything.stdout[:1500])

    data = json_of(analysis.memprof("findings", "--format=json", "--binary=" + binary, profile),
                   "findings --format=json")
    if data is not None:
        sites = {}
        for finding in data["findings"]:
            frames = finding["frames"]
            site = frames[finding.get("site", 0)] if frames else ""
            sites.setdefault(site.split(" (")[0], set()).add(finding["kind"])
        results.check(sites.get("never_used") == {"never-touched"}
                      and sites.get("leaked_record") == {"leaked"},
                      "findings --format=json: the site is the user's function", str(sites))
        results.check(not any(f["kind"] in ("never-touched", "over-reserved")
                              and "library_string" in " ".join(f["frames"])
                              for f in data["findings"]),
                      "findings: a string filled by libstdc++.so is not never-touched "
                      "or over-reserved", str(sites))
        results.check(data.get("hidden_system_findings", 0) >= 2,
                      "findings --format=json: the hidden count", str(data.get("hidden_system_findings")))

    shown = json_of(analysis.memprof("show", "--format=json", "--sort=waste", "--top=0",
                                     "--binary=" + binary, profile), "show --format=json")
    if shown is not None:
        records = shown["records"]
        by_site = {site_function(r): r for r in records}
        vector = [r for r in records if site_function(r) == "fill_records"]
        results.check(len(vector) == 1 and any("allocator" in f["name"]
                                               for f in vector[0]["frames"][:vector[0].get("site", 0)]),
                      "show: the vector's site is fill_records, past the STL's inlined frames",
                      str([site_function(r) for r in records]))
        string = [r for r in records if site_function(r) == "library_string"]
        appended = [r for r in string if any("_M_mutate" in f["name"] for f in r["frames"])]
        results.check(appended and all(r["waste"] is None for r in appended)
                      and not any(r["findings"] for r in string),
                      "show: the string libstdc++.so fills has an unknown waste and no finding",
                      json.dumps(string)[:600])
        known = [r["waste"] is not None for r in records]
        results.check(known == sorted(known, reverse=True) and True in known and False in known,
                      "show --sort=waste: unknown waste ranks after every known one",
                      str([(site_function(r), r["waste"]) for r in records]))
        results.check("never_used" in by_site and by_site["never_used"]["waste"] == 65536,
                      "show: the never-used buffer's waste is its size",
                      str(by_site.get("never_used", {}).get("waste")))

    text = analysis.memprof("show", "--binary=" + binary, "--frames=2", "--top=0", profile).stdout
    results.check(re.search(r"\[\d+ system frames? folded: std::", text) is not None
                  and "waste ?: untouched bytes cannot be told" in text,
                  "show: STL frames folded above the site, and `?` explained", text[:3000])

    functions = analysis.memprof("functions", "--format=json", "--binary=" + binary, profile)
    rows = json.loads(functions.stdout)["functions"] if functions.returncode == 0 else []
    names = [row["name"] for row in rows]
    results.check("fill_records" in names
                  and not any(name.startswith("std::__new_allocator") for name in names),
                  "functions: the vector's bytes are charged to fill_records, not the STL",
                  str(names))


PAGE = """
var rows = Array.from(document.querySelectorAll('#rows tr')).map(function (tr) {
  return tr.querySelector('.site').textContent; });
var findings = Array.from(document.querySelectorAll('#findings li')).map(
  function (li) { return li.textContent; });
return { rows: rows, findings: findings,
  note: document.getElementById('findings-note').textContent };
"""

DETAIL = """
var fold = document.querySelector('#detail details.folded');
var visible = Array.from(document.querySelectorAll('#detail > ol.stack .fn'));
return { summary: fold ? fold.querySelector('summary').textContent : null,
  open: fold ? fold.open : null,
  folded: fold ? Array.from(fold.querySelectorAll('.fn')).map(function (n) {
    return n.textContent; }) : [],
  foldedShown: fold ? Array.from(fold.querySelectorAll('.fn')).some(function (n) {
    return n.checkVisibility(); }) : false,
  first: visible.length ? visible[0].textContent : null,
  site: document.querySelector('#detail h2').textContent };
"""


def test_report_page(binary, profile):
    import test_report
    html = os.path.join(WORK, "noise.html")
    everything = os.path.join(WORK, "noise-all.html")
    for page, extra in ((html, []), (everything, ["--include-system"])):
        made = analysis.memprof("report", "--html=" + page, *extra, "--binary=" + binary, profile)
        if not results.check(made.returncode == 0, "report --html " + " ".join(extra),
                             made.stderr):
            return
    test_report.WORK = WORK  # where the WebDriver client keeps its log
    browser = None
    try:
        browser = test_report.Browser(tempfile.mkdtemp(prefix="chromium-", dir=WORK))

        def load(page):
            browser.open("file://" + page)
            ready = browser.wait_for(
                "return document.body.dataset.ready || window.reportErrors.length;")
            results.check(ready == "true", f"report: {os.path.basename(page)} draws itself",
                          str(browser.script("return window.reportErrors;")))
            return browser.script(PAGE)

        shown = load(html)
        results.check("fill_records" in shown["rows"] and "never_used" in shown["rows"]
                      and not any(site.startswith("std::") for site in shown["rows"]),
                      "report: every row's site is the user's function", str(shown["rows"]))
        text = " ".join(shown["findings"])
        results.check("never_used" in text and "leaked_record" in text
                      and "libstdc++" not in text and "doallocate" not in text,
                      "report: the findings are the program's own", text[:800])
        results.check(re.search(r"\d+ findings? about what the C/C\+\+ runtime.*hidden; "
                                r"memprof report --include-system shows them", shown["note"]),
                      "report: the findings note says what is hidden and how to see it",
                      shown["note"])
        row = shown["rows"].index("fill_records") + 1
        browser.click(f"#rows tr:nth-child({row}) td:nth-child(2)")
        detail = browser.script(DETAIL)
        results.check(detail["summary"] is not None
                      and re.match(r"\d+ system frames? above the site, folded",
                                   detail["summary"])
                      and not detail["open"] and not detail["foldedShown"]
                      and detail["first"] == "fill_records",
                      "report: the STL's frames above the site are folded, the stack "
                      "starts at fill_records", json.dumps(detail)[:800])
        browser.click("#detail details.folded summary")
        opened = browser.script(DETAIL)
        results.check(opened["open"] and opened["foldedShown"]
                      and any("__new_allocator" in name for name in opened["folded"]),
                      "report: opening the fold shows the STL's frames",
                      json.dumps(opened)[:800])
        all_findings = load(everything)["findings"]
        results.check(len(all_findings) > len(shown["findings"])
                      and any(f.endswith(" libstdc++.so.6+0xa57b9") or "libstdc++.so.6+0x" in f
                              for f in all_findings)
                      and any(f.endswith(" main") for f in all_findings),
                      "report --include-system: the system's findings are listed (the pool, "
                      "stdout's buffer at main's printf)", " | ".join(all_findings)[:800])
    except Exception as error:  # a crash of the test is a failure too
        results.check(False, "report: the browser checks run to the end",
                      f"{type(error).__name__}: {error}")
    finally:
        if browser is not None:
            browser.close()


def accesses_by_site(binary, profile):
    data = json.loads(analysis.memprof("show", "--format=json", "--top=0",
                                       "--binary=" + binary, profile).stdout)
    found = {}
    for record in data["records"]:
        found.setdefault(site_function(record), []).append((record["bytes"],
                                                            record["accesses"]))
    return {site: sorted(values) for site, values in found.items()}


def test_demo_examples():
    examples = os.path.join(TOP, "examples")
    sys.path.insert(0, examples)
    import demo
    work = os.path.join(WORK, "demo")
    os.makedirs(work, exist_ok=True)
    for source, _ in demo.EXAMPLES:
        binary = analysis.build(os.path.join(examples, source),
                                os.path.join(work, source.split(".")[0]), opt="-O2")
        profile = analysis.profile_of(binary, "demo.profraw")
        data = json.loads(analysis.memprof("findings", "--format=json", "--binary=" + binary,
                                           profile).stdout)
        sites = [f["frames"][f.get("site", 0)] for f in data["findings"]]
        results.check(sites and all(os.path.join(examples, source) + ":" in site
                                    for site in sites),
                      f"make demo: every finding of {source} is about its own code",
                      "\n".join(sites))


def test_interceptors(binary, profile):
    off = analysis.profile_of(binary, "off.profraw", "count_library_accesses=0")
    on, without = accesses_by_site(binary, profile), accesses_by_site(binary, off)
    # append (256 Ki, 'x'): memset of 262144 bytes, then, grown for "end",
    # copied out by memcpy (32768 + 32768); the new block: 262144 bytes
    # copied in and 3 appended (32768 + 1).
    results.check(on.get("library_string") == [(262145, 65536), (524289, 32769)],
                  "interceptors: the string libstdc++.so fills counts what its memset "
                  "and memcpy touched", str(on.get("library_string")))
    results.check(without.get("library_string") == [(262145, 0), (524289, 0)],
                  "count_library_accesses=0: nothing counted for it",
                  str(without.get("library_string")))
    results.check(on.get("fill_records") == without.get("fill_records")
                  and (on.get("fill_records") or [(0, 0)])[0][1] > 0,
                  "interceptors: the vector's counts (the plugin's range calls) are not "
                  "counted twice", f"{on.get('fill_records')} {without.get('fill_records')}")

    work = os.path.join(WORK, "strings")
    os.makedirs(work, exist_ok=True)
    source = os.path.join(HERE, "noise_strings.c")
    strings = analysis.build(source, os.path.join(work, "strings"))
    on = accesses_by_site(strings, analysis.profile_of(strings, "on.profraw"))
    off = accesses_by_site(strings, analysis.profile_of(strings, "off.profraw",
                                                        "count_library_accesses=0"))
    results.check(on.get("string_site") == [(128, 150)] and off.get("string_site") == [(128, 101)]
                  and (101, 44) in on.get("main", []) and (101, 1) in off.get("main", []),
                  "interceptors: strlen, strnlen, memcmp, strcmp, strncmp from instrumented "
                  "code count the 8-byte steps they read",
                  f"on {on.get('string_site')} {on.get('main')}, "
                  f"off {off.get('string_site')} {off.get('main')}")
    results.check(on.get("copy_site") == [(4096, 512)] and off.get("copy_site") == [(4096, 512)],
                  "interceptors: an instrumented memcpy is counted once, by the plugin",
                  f"on {on.get('copy_site')}, off {off.get('copy_site')}")
    steps = analysis.build(os.path.join(HERE, "noise_compare_steps.c"),
                           os.path.join(work, "compare_steps"))
    counted = accesses_by_site(steps, analysis.profile_of(steps, "steps.profraw"))
    results.check(counted.get("compared_site") is not None
                  and counted.get("compared_site") == counted.get("mirror_site"),
                  "interceptors: memcmp, strcmp and strncmp count the bytes to the first "
                  "difference or NUL at every position and alignment",
                  f"compared {counted.get('compared_site')}, mirror {counted.get('mirror_site')}")
    granules = analysis.build(os.path.join(HERE, "noise_range_granules.c"),
                              os.path.join(work, "range_granules"))
    ran = subprocess.run([granules], cwd=work, capture_output=True, text=True,
                         env=dict(os.environ, MEMPROF_OPTIONS="profile_file=granules.profraw"))
    results.check(ran.returncode == 0 and "calls exact" in ran.stdout,
                  "interceptors: memcmp, strcmp and strlen count each granule's steps exactly "
                  "(length 0, one granule, straddling two, stopped at the first difference)",
                  ran.stdout.strip() + ran.stderr[-300:])
    plain = os.path.join(work, "plain")
    subprocess.run(["gcc", "-O0", "-g", "-fno-builtin", source, "-o", plain], check=True)
    alone = subprocess.run([plain], cwd=work, capture_output=True, text=True)
    profiled = subprocess.run([strings], cwd=work, capture_output=True, text=True,
                              env=dict(os.environ, MEMPROF_OPTIONS="profile_file=again.profraw"))
    results.check(alone.stdout == profiled.stdout and alone.returncode == profiled.returncode == 0,
                  "interceptors: the comparisons return what the C library returns",
                  f"alone {alone.stdout!r}, profiled {profiled.stdout!r}")
    env = dict(os.environ, LD_PRELOAD=os.path.join(TOP, "runtime", "libmemprof.so"),
               MEMPROF_OPTIONS="profile_file=plain.profraw")
    ran = subprocess.run([plain], cwd=work, env=env, capture_output=True)
    preloaded = accesses_by_site(plain, os.path.join(work, "plain.profraw"))
    results.check(ran.returncode == 0 and preloaded.get("string_site") == [(128, 0)]
                  and preloaded.get("copy_site") == [(4096, 0)],
                  "interceptors: nothing counted in a program without instrumented code",
                  str(preloaded))


def test_patterns(binary, profile):
    def sites_of(*options):
        data = json.loads(analysis.memprof("show", "--format=json", "--top=0", *options,
                                           "--binary=" + binary, profile).stdout)
        return sorted(site_function(r) for r in data["records"])

    focus = sites_of("--focus=never_used|leaked_record")
    results.check(focus == ["leaked_record", "never_used"],
                  "--focus keeps the contexts with a matching frame", str(focus))
    everything = sites_of()
    ignored = sites_of("--ignore", "never_used")
    results.check("never_used" in everything and "never_used" not in ignored
                  and len(ignored) == len(everything) - 1,
                  "--ignore drops the contexts with a matching frame", str(ignored))
    suppressions = os.path.join(WORK, "suppressions")
    with open(suppressions, "w") as out:
        out.write("# the C++ runtime's pool and stdio\n\n  libstdc\\+\\+\n_IO_file_doallocate\n"
                  "leaked_rec.rd\n")
    kept = sites_of("--suppressions=" + suppressions)
    results.check("leaked_record" not in kept and "never_used" in kept
                  and not any("libstdc" in s or "doallocate" in s for s in kept),
                  "--suppressions drops what its lines match", str(kept))
    with open(suppressions, "a") as out:
        out.write("bad(\n")
    bad = analysis.memprof("findings", "--suppressions=" + suppressions, profile)
    results.check(bad.returncode == 2 and f"{suppressions}:6: bad regular expression" in bad.stderr,
                  "--suppressions: a bad expression names the file and line", bad.stderr)
    bad = analysis.memprof("show", "--focus=[z", profile)
    results.check(bad.returncode == 2 and "--focus: bad regular expression '[z'" in bad.stderr,
                  "--focus: a bad expression is an error", bad.stderr)


def sampled_sites(binary, profile):
    data = json.loads(analysis.memprof("show", "--format=json", "--top=0",
                                       "--binary=" + binary, profile).stdout)
    return {site_function(r): r for r in data["records"]}


def test_waste_unknown():
    work = os.path.join(WORK, "sampled")
    os.makedirs(work, exist_ok=True)
    source = os.path.join(HERE, "noise_sampled.c")

    # Preloaded into a program built without the plugin: no access counts.
    plain = os.path.join(work, "plain")
    subprocess.run(["gcc", "-O0", "-g", source, "-o", plain], check=True)
    env = dict(os.environ, LD_PRELOAD=os.path.join(TOP, "runtime", "libmemprof.so"),
               MEMPROF_OPTIONS="profile_file=plain.profraw")
    subprocess.run([plain], cwd=work, env=env, check=True, capture_output=True)
    profile = os.path.join(work, "plain.profraw")
    records = sampled_sites(plain, profile)
    results.check(records and all(r["waste"] is None for r in records.values()),
                  "preloaded: every waste is unknown (null)",
                  str({k: r["waste"] for k, r in records.items()}))
    text = analysis.memprof("show", "--sort=waste", "--binary=" + plain, profile).stdout
    rows = re.findall(r"^\s+\d+ .* (\S+)$", text, re.M)
    results.check(rows and all(w == "?" for w in rows),
                  "preloaded: show's waste column is `?` in every row", text[:1200])
    findings = analysis.memprof("findings", "--format=json", "--binary=" + plain, profile)
    kinds = {f["kind"] for f in json.loads(findings.stdout)["findings"]}
    results.check(not kinds & {"never-touched", "over-reserved"},
                  "preloaded: no finding about untouched bytes", str(kinds))

    # Built with callbacks; every access counted, then one in 16.
    counted = analysis.build(source, os.path.join(work, "callbacks"),
                             extra=["-fplugin-arg-memprof-callbacks"])
    exact = analysis.profile_of(counted, "exact.profraw")
    sampled = analysis.profile_of(counted, "sampled.profraw", "access_sample_rate=16")

    def never_touched(profile):
        data = json.loads(analysis.memprof("findings", "--format=json", "--kind=never-touched",
                                           "--binary=" + counted, profile).stdout)
        return {f["frames"][f.get("site", 0)].split(" (")[0] for f in data["findings"]}

    exact_sites = never_touched(exact)
    results.check(exact_sites == {"untouched_block"},
                  "every access counted: only the untouched block is never touched",
                  str(exact_sites))
    sampled_records = sampled_sites(counted, sampled)
    twelve = sampled_records.get("twelve_accesses", {})
    results.check(twelve and twelve["extra"]["untouched_allocations"] > 0,
                  "access_sample_rate=16: some blocks accessed 12 times have no count "
                  "(the case to handle)", json.dumps(twelve.get("extra")))
    results.check(never_touched(sampled) == set() and twelve.get("waste") is None,
                  "access_sample_rate=16: no block is called never touched, waste unknown",
                  str(never_touched(sampled)) + " " + str(twelve.get("waste")))
    merged = os.path.join(work, "sampled.mprof")
    analysis.memprof("merge", "-o", merged, "--binary=" + counted, sampled)
    results.check(os.path.exists(merged) and never_touched(merged) == set()
                  and sampled_sites(counted, merged)["twelve_accesses"]["waste"] is None,
                  "access_sample_rate=16: still unknown once merged into a .mprof",
                  str(os.path.exists(merged)))


def main():
    if not os.path.exists(analysis.MEMPROF):
        sys.exit(f"noise: build the command first (make): {analysis.MEMPROF} is missing")
    shutil.rmtree(WORK, ignore_errors=True)
    os.makedirs(WORK)
    binary = analysis.build(os.path.join(HERE, "noise_program.cc"),
                            os.path.join(WORK, "noise_program"), opt="-O2")
    profile = analysis.profile_of(binary, "noise.profraw")
    for name, test, args in (("noise", test_cxx_noise, (binary, profile)),
                             ("interceptors", test_interceptors, (binary, profile)),
                             ("demo", test_demo_examples, ()),
                             ("patterns", test_patterns, (binary, profile)),
                             ("report", test_report_page, (binary, profile)),
                             ("waste", test_waste_unknown, ())):
        try:
            test(*args)
        except Exception as error:  # a crash of the test is a failure too
            results.check(False, f"the {name} checks run to the end",
                          f"{type(error).__name__}: {error}")
    return results.finish()


if __name__ == "__main__":
    sys.exit(main())
