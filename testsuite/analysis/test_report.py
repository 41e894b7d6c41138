#!/usr/bin/env python3
"""`memprof report --html` in a real browser: Chromium, driven through
chromedriver's WebDriver HTTP interface with nothing but the standard
library (urllib and json).

Builds report_program.c with the plugin and the runtime, runs it for a
profile with five known contexts (again built for access histograms, and
once more, with "many", for 16,384 contexts), writes the reports, and
checks what a person would see:
  - the page is one file: nothing in it refers to the network or to
    another file, and the browser made no request while showing it;
  - the title and the header's totals;
  - one row per context, the largest by bytes first;
  - clicking a column header sorts by that column (read back from the
    cells' text), clicking again reverses;
  - the filter by function name;
  - clicking a row opens the detail panel with that context's stack,
    its MemInfoBlock, side-file data, and access histogram when present;
  - the two charts exist, with axes and bars;
  - the findings, worst first, each link selecting its context;
  - no JavaScript error (the page's own error hook and the browser log);
  - with 16,384 contexts: the page is ready, sorts and filters quickly.

Prints one line per check and ends with `report: N passed, N failed`;
exits non-zero on a failure.  chromedriver and Chromium are stopped at the
end whatever happens.

  testsuite/analysis/test_report.py [--keep]   (--keep: leave the work
  files, testsuite/analysis/work/report/, and print the report's path)
"""

import argparse
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(TOP, "testsuite", "lib"))
from report import Report  # noqa: E402

WORK = os.path.join(HERE, "work", "report")
MEMPROF = os.path.join(TOP, "analysis", "memprof")
CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"
ELEMENT = "element-6066-11e4-a52e-4f735466cecf"  # W3C's element key

# The five contexts of report_program.c, by their allocating function, in
# the orders each sort must give.
BY_BYTES = ["alloc_large_arrays", "alloc_many_nodes", "alloc_hot_buffers",
            "alloc_never_used", "alloc_leaked_record"]
BY_ALLOCS = ["alloc_many_nodes", "alloc_hot_buffers", "alloc_never_used",
             "alloc_large_arrays", "alloc_leaked_record"]
BY_ACCESSES = ["alloc_hot_buffers", "alloc_many_nodes", "alloc_large_arrays",
               "alloc_leaked_record", "alloc_never_used"]
# A title that would break the page if it were not escaped.
TITLE = "Report test </script><b>\"&'</b>"

results = Report("report")


def run(command, **kwargs):
    return subprocess.run(command, capture_output=True, text=True, **kwargs)


# ---- WebDriver over HTTP ----

class WebDriverError(Exception):
    pass


class Browser:
    """One chromedriver process and one headless Chromium session."""

    def __init__(self, profile_dir):
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            self.port = probe.getsockname()[1]
        self.log = open(os.path.join(WORK, "chromedriver.log"), "w")
        # Its own process group: Chromium and its helpers are stopped
        # with it.
        self.driver = subprocess.Popen(
            [CHROMEDRIVER, f"--port={self.port}"], stdout=self.log,
            stderr=subprocess.STDOUT, start_new_session=True)
        self.base = f"http://127.0.0.1:{self.port}"
        self.session = None
        try:
            self.start_session(profile_dir)
        except BaseException:
            self.close()
            raise

    def start_session(self, profile_dir):
        deadline = time.time() + 15
        while True:
            try:
                if self.request("GET", "/status").get("ready"):
                    break
            except (OSError, WebDriverError):
                pass
            if time.time() > deadline or self.driver.poll() is not None:
                raise WebDriverError("chromedriver did not start")
            time.sleep(0.05)
        options = {
            "binary": CHROMIUM,
            "args": ["--headless", "--no-sandbox", "--disable-gpu",
                     "--disable-dev-shm-usage", "--no-first-run",
                     "--disable-background-networking",
                     "--disable-component-update", "--disable-sync",
                     "--window-size=1400,1000",
                     f"--user-data-dir={profile_dir}"],
        }
        value = self.request("POST", "/session", {"capabilities": {
            "alwaysMatch": {"browserName": "chrome",
                            "goog:chromeOptions": options,
                            "goog:loggingPrefs": {"browser": "ALL"}}}})
        self.session = value["sessionId"]

    def request(self, method, path, body=None):
        data = json.dumps(body).encode() if body is not None else None
        request = urllib.request.Request(
            self.base + path, data=data, method=method,
            headers={"Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(request, timeout=60) as response:
                answer = json.load(response)
        except urllib.error.HTTPError as error:
            try:
                detail = json.load(error)["value"]
                detail = f"{detail.get('error')}: {detail.get('message')}"
            except (ValueError, KeyError, AttributeError):
                detail = str(error)
            raise WebDriverError(f"{method} {path}: {detail}") from None
        return answer.get("value")

    def command(self, method, path, body=None):
        return self.request(method, f"/session/{self.session}{path}", body)

    def open(self, url):
        self.command("POST", "/url", {"url": url})

    def script(self, source, *args):
        """Run SOURCE (a function body) in the page; its return value."""
        return self.command("POST", "/execute/sync",
                            {"script": source, "args": list(args)})

    def find(self, selector):
        value = self.command("POST", "/element",
                             {"using": "css selector", "value": selector})
        return value[ELEMENT]

    def click(self, selector):
        self.command("POST", f"/element/{self.find(selector)}/click", {})

    def type(self, selector, text):
        element = self.find(selector)
        self.command("POST", f"/element/{element}/clear", {})
        if text:
            self.command("POST", f"/element/{element}/value", {"text": text})

    def wait_for(self, source, timeout=10):
        """Poll SOURCE until it returns a true value; that value."""
        deadline = time.time() + timeout
        while True:
            value = self.script(source)
            if value or time.time() > deadline:
                return value
            time.sleep(0.02)

    def console(self):
        """The browser's console messages since the last call."""
        try:
            return self.command("POST", "/se/log", {"type": "browser"}) or []
        except WebDriverError:
            return None

    def screenshot(self, path):
        import base64
        with open(path, "wb") as out:
            out.write(base64.b64decode(self.command("GET", "/screenshot")))

    def close(self):
        try:
            if self.session:
                self.command("DELETE", "")
        except (OSError, WebDriverError):
            pass
        finally:
            self.stop_group()
            self.log.close()

    def stop_group(self):
        """Stop chromedriver's process group (it and every Chromium
        process it started): SIGTERM, then SIGKILL for what is left after
        5 s; return when the group is empty."""
        group = self.driver.pid
        for signal_number in (signal.SIGTERM, signal.SIGKILL):
            try:
                os.killpg(group, signal_number)
            except ProcessLookupError:
                break
            deadline = time.time() + 5
            while time.time() < deadline:
                self.driver.poll()  # reap chromedriver itself
                try:
                    os.killpg(group, 0)
                except ProcessLookupError:
                    break
                time.sleep(0.05)
            else:
                continue
            break
        self.driver.wait()


# ---- What the page shows, read as a person would ----

TABLE = """
return Array.from(document.querySelectorAll('#rows tr')).map(function (tr) {
  var cells = Array.from(tr.children).map(function (td) {
    return td.textContent; });
  return { rank: tr.dataset.rank,
           site: tr.querySelector('.site').textContent, cells: cells };
});
"""
COLUMN = {"rank": 0, "site": 1, "bytes": 2, "share": 3, "allocs": 4,
          "accesses": 5, "density": 6, "lifetime": 7, "waste": 8}


def count(text):
    return int(text.replace(",", ""))


def bytes_of(text):
    number, unit = text.split()
    scale = {"B": 1, "KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30}[unit]
    return float(number) * scale


def header_key(browser, key):
    return browser.script(
        "var th = document.querySelector('th[data-key=' + arguments[0] + ']');"
        "return th.getAttribute('aria-sort');", key)


def check_page_is_one_file(path):
    text = open(path, encoding="utf-8").read()
    outside = [word for word in ("<link", " src=", "src='", "url(", "@import",
                                 "https://", "//fonts", "<img", "<iframe")
               if word in text]
    results.check(not outside, "the page refers to no other file or site",
                  f"found {outside}")
    results.check(text.count("http://") == text.count(
        "http://www.w3.org/2000/svg"),
        "the only URL in the page is the SVG namespace")
    # The title holds </script>: only the escaped form may be in the page.
    results.check("</script><b>" not in text and "\\u003c/script" in text,
                  "</script> in a title is escaped in the data and the text")
    return text


def check_small(browser, profile, html):
    shown = json.loads(run([MEMPROF, "show", "--no-libraries", f"--binary={profile['binary']}",
                            "--format=json", profile["path"]]).stdout)
    records = shown["records"]
    total_bytes = sum(r["bytes"] for r in records)
    total_allocs = sum(r["allocs"] for r in records)
    total_accesses = sum(r["accesses"] for r in records)

    start = time.time()
    browser.open("file://" + html)
    ready = browser.wait_for(
        "return document.body.dataset.ready || window.reportErrors.length;")
    results.check(ready == "true", "the page draws itself",
                  f"{browser.script('return window.reportErrors;')}")
    print(f"      (5 contexts: loaded in {time.time() - start:.2f} s)")

    title = browser.command("GET", "/title")
    results.check(title == TITLE, "the window title is --title's text",
                  repr(title))
    heading = browser.script(
        "return document.getElementById('title').textContent;")
    results.check(heading == TITLE, "the heading is --title's text",
                  repr(heading))
    summary = browser.script(
        "return document.getElementById('summary').textContent;")
    for expected in ("5 allocation contexts",
                     f"{total_bytes:,} bytes", f"{total_allocs:,} allocations",
                     f"{total_accesses:,} accesses",
                     "Access countspresent", "Side-file datapresent",
                     "Access histogramsnone"):
        results.check(expected in summary, f"the header shows '{expected}'",
                      summary)

    rows = browser.script(TABLE)
    results.check(len(rows) == len(records) == 5,
                  "one table row per context", f"{len(rows)} rows")
    results.check([r["site"] for r in rows] == BY_BYTES,
                  "the rows start sorted by bytes, the largest first",
                  str([r["site"] for r in rows]))
    results.check(rows and rows[0]["site"] == records[0]["frames"][0]["name"],
                  "the first row is the largest context of `memprof show`")
    results.check(rows and rows[0]["cells"][COLUMN["bytes"]] == "1.0 MiB"
                  and rows[0]["cells"][COLUMN["share"]]
                  == f"{100 * records[0]['bytes'] / total_bytes:.1f}%",
                  "the largest row's bytes and share",
                  str(rows[0]["cells"] if rows else None))
    results.check(header_key(browser, "bytes") == "descending",
                  "the bytes header shows the sort")

    for key, expected in (("allocs", BY_ALLOCS), ("accesses", BY_ACCESSES)):
        browser.click(f"th[data-key={key}]")
        rows = browser.script(TABLE)
        values = [count(r["cells"][COLUMN[key]]) for r in rows]
        results.check(values == sorted(values, reverse=True)
                      and [r["site"] for r in rows] == expected,
                      f"clicking '{key}' sorts by it, the most first",
                      f"{[r['site'] for r in rows]} {values}")
        results.check(header_key(browser, key) == "descending"
                      and header_key(browser, "bytes") == "none",
                      f"the '{key}' header shows the sort")
        browser.click(f"th[data-key={key}]")
        rows = browser.script(TABLE)
        values = [count(r["cells"][COLUMN[key]]) for r in rows]
        results.check(values == sorted(values)
                      and [r["site"] for r in rows] == expected[::-1],
                      f"clicking '{key}' again sorts the least first",
                      f"{[r['site'] for r in rows]} {values}")
    browser.click("th[data-key=bytes]")
    rows = browser.script(TABLE)
    results.check([bytes_of(r["cells"][COLUMN["bytes"]]) for r in rows]
                  == sorted((bytes_of(r["cells"][COLUMN["bytes"]])
                             for r in rows), reverse=True),
                  "clicking 'bytes' sorts by bytes again")

    browser.type("#filter", "never")
    filtered = browser.wait_for(
        "var rows = document.querySelectorAll('#rows tr');"
        "return rows.length === 1 ? rows[0].querySelector('.site')"
        ".textContent : null;")
    results.check(filtered == "alloc_never_used",
                  "the filter keeps the contexts with a matching function",
                  str(filtered))
    browser.type("#filter", "use_hot")
    # The table shows one row already (the last filter's): wait for it to
    # be another one.
    filtered = browser.wait_for(
        "var rows = document.querySelectorAll('#rows tr');"
        "var site = rows.length === 1 ? rows[0].querySelector('.site')"
        ".textContent : null;"
        "return site !== 'alloc_never_used' ? site : null;")
    results.check(filtered == "alloc_hot_buffers",
                  "the filter matches callers too, not only the site",
                  str(filtered))
    browser.type("#filter", "")
    browser.script("var f = document.getElementById('filter');"
                   "f.dispatchEvent(new Event('input'));")
    results.check(browser.wait_for(
        "return document.querySelectorAll('#rows tr').length === 5;"),
        "clearing the filter shows every context again")

    hot = BY_BYTES.index("alloc_hot_buffers") + 1
    browser.click(f"#rows tr:nth-child({hot}) td:nth-child(2)")
    detail = browser.script("""
var panel = document.getElementById('detail');
return { hidden: panel.hidden,
  frames: Array.from(panel.querySelectorAll('.stack li')).map(function (li) {
    return li.textContent; }),
  names: Array.from(panel.querySelectorAll('.stack .fn')).map(function (f) {
    return f.textContent; }),
  text: panel.textContent,
  selected: document.querySelector('#rows tr.selected .site').textContent };
""")
    names = detail["names"]
    results.check(not detail["hidden"],
                  "clicking a row opens the detail panel")
    results.check(detail["selected"] == "alloc_hot_buffers",
                  "the clicked row is marked selected", detail["selected"])
    results.check(names[:3] == ["alloc_hot_buffers", "use_hot_buffers",
                                "main"],
                  "the panel shows the context's stack, innermost first",
                  str(names))
    results.check(any("report_program.c:" in f and ":10" in f
                      for f in detail["frames"][:1]),
                  "the panel shows file:line:column",
                  str(detail["frames"][:1]))
    results.check(any("(not symbolized)" in f for f in detail["frames"]),
                  "unsymbolized frames show as addresses",
                  str(detail["frames"]))
    for expected in ("AllocCount10", "TotalAccessCount512,000",
                     "TotalSize40,960", "MaxLifetimeAccessDensity",
                     "Lifetime", "accesses per byte12.50",
                     "bytes touched40,960", "allocations live at exit0"):
        results.check(expected in detail["text"],
                      f"the panel shows '{expected}'")

    for chart, buckets in (("lifetime-chart", 7), ("density-chart", 8)):
        bars = browser.script(
            "var svg = document.getElementById(arguments[0]);"
            "if (!svg) return null;"
            "return { bars: Array.from(svg.querySelectorAll('rect.bar'))"
            ".map(function (r) { return r.getBBox().height; }),"
            " axes: svg.querySelectorAll('line.axis').length,"
            " labels: svg.querySelectorAll('text').length };", chart)
        results.check(bars is not None and len(bars["bars"]) == buckets
                      and sum(1 for h in bars["bars"] if h > 0) >= 1
                      and bars["axes"] >= 2 and bars["labels"] >= buckets,
                      f"the {chart} has axes, labels and bars", str(bars))
    density = browser.script(
        "return Array.from(document.querySelectorAll("
        "'#density-chart rect.bar title')).map(function (t) {"
        " return t.textContent; });")
    results.check(any(t.startswith("0: 5.9 KiB") for t in density)
                  and any(t.startswith("10" + "\u2013" + "100: 40.0 KiB")
                          for t in density),
                  "the density chart puts each context's bytes in its bucket",
                  str(density))
    browser.click("input[name=lifetime-weight][value=allocs]")
    label = browser.script(
        "return Array.from(document.querySelectorAll('#lifetime-chart text'))"
        ".map(function (t) { return t.textContent; }).join('|');")
    # Which bucket a context falls in depends on how long this run's
    # allocations lived; the bars' counts add up to the 5,016 allocations
    # whatever the timing.
    titles = browser.script(
        "return Array.from(document.querySelectorAll("
        "'#lifetime-chart rect.bar title')).map(function (t) {"
        " return t.textContent; });") or []
    counted = sum(int(m.group(1).replace(",", "")) for m in
                  (re.search(r": ([\d,]+) in ", t) for t in titles) if m)
    results.check("allocations" in label and counted == 5016,
                  "the lifetime chart switches to allocations (its bars count all "
                  "5,016)", f"{counted}: {label}")

    findings = browser.script(
        "return Array.from(document.querySelectorAll('#findings li'))"
        ".map(function (li) { return li.textContent; });")
    expected = [f for r in records for f in r["findings"]]
    results.check(len(findings) == len(expected) == 4,
                  "every finding is listed", str(findings))
    results.check(findings and findings[0].startswith("over-reserved")
                  and "alloc_large_arrays" in findings[0],
                  "the worst finding (most bytes) comes first",
                  str(findings[:1]))
    leaked = next((i for i, f in enumerate(findings) if "leaked" in f), None)
    if leaked is not None:
        browser.click(f"#findings li:nth-child({leaked + 1}) a")
    selected = browser.script(
        "var row = document.querySelector('#rows tr.selected');"
        "return [row ? row.querySelector('.site').textContent : null,"
        " document.querySelector('#detail .stack .fn').textContent];")
    results.check(selected == ["alloc_leaked_record", "alloc_leaked_record"],
                  "a finding's link selects its context", str(selected))

    check_clean(browser, "5 contexts")


def check_clean(browser, what):
    errors = browser.script("return window.reportErrors;")
    results.check(errors == [], f"no JavaScript error ({what})", str(errors))
    console = browser.console()
    if console is not None:
        severe = [e for e in console if e.get("level") == "SEVERE"]
        results.check(not severe, f"nothing severe on the console ({what})",
                      str(severe))
    requests = browser.script(
        "return performance.getEntriesByType('resource').map(function (e) {"
        " return e.name; });")
    results.check(requests == [], f"the page made no request ({what})",
                  str(requests))


def check_histogram(browser, html):
    """The access histogram of alloc_large_arrays: two blocks of 512 KiB
    of which the first 4 KiB were written, in 8-byte granules."""
    browser.open("file://" + html)
    ready = browser.wait_for(
        "return document.body.dataset.ready || window.reportErrors.length;")
    results.check(ready == "true", "the page with histograms draws itself")
    summary = browser.script(
        "return document.getElementById('summary').textContent;")
    results.check("Access histogramspresent, 8 bytes per value" in summary,
                  "the header says histograms are present", summary)
    browser.click("#rows tr:first-child td:nth-child(2)")
    chart = browser.script("""
var svg = document.querySelector('#detail svg.histogram');
if (!svg) return null;
return { site: document.querySelector('#detail h2').textContent,
  bars: Array.from(svg.querySelectorAll('rect.hist')).map(function (r) {
    return r.getBBox().height; }),
  first: svg.querySelector('rect.hist title').textContent,
  labels: Array.from(svg.querySelectorAll('text')).map(function (t) {
    return t.textContent; }) };
""")
    results.check(chart is not None and chart["site"].endswith(
        "alloc_large_arrays"), "the detail panel draws the access histogram",
        str(chart and chart["site"]))
    if chart:
        bars = chart["bars"]
        results.check(len(bars) == 128 and bars[0] > 0
                      and all(h == 0 for h in bars[1:]),
                      "512 KiB of histogram fold into 128 bars; only the "
                      "first 4 KiB were touched", str(bars[:4]))
        results.check(chart["first"] == "bytes 0\u20134095: 1,024 accesses"
                      and "524,288" in chart["labels"],
                      "the histogram's bars and axis are labelled",
                      f"{chart['first']} {chart['labels']}")
    check_clean(browser, "histograms")


def open_page(browser, html, what):
    browser.open("file://" + html)
    ready = browser.wait_for(
        "return document.body.dataset.ready || window.reportErrors.length;")
    return results.check(ready == "true", f"the page draws itself ({what})",
                         str(browser.script("return window.reportErrors;")))


def page_text(browser):
    return browser.script("""
var text = function (id) { return document.getElementById(id).textContent; };
return { summary: text('summary'), findings: text('findings-note'),
  density: text('density-chart'), empty: document.getElementById('empty'),
  rows: Array.from(document.querySelectorAll('#rows tr')).map(function (tr) {
    return Array.from(tr.children).map(function (td) {
      return td.textContent; }); }) };
""")


def check_without(browser, pages):
    """What the page says when data is missing: no plugin and no side
    files, no --binary, no context at all."""
    if open_page(browser, pages["plain"], "no plugin, no side file"):
        page = page_text(browser)
        summary = page["summary"]
        results.check("Access countsnone: the program was not built with "
                      "the plugin" in summary
                      and "Side-file datanone: without the .extra" in summary,
                      "the header says access counts and side files are "
                      "missing, and what that costs", summary)
        results.check(len(page["rows"]) == 5 and all(
            row[COLUMN["waste"]] == "?" and row[COLUMN["accesses"]] == "n/a"
            and row[COLUMN["density"]] == "n/a"
            for row in page["rows"]),
            "without them, waste is unknown (?) and accesses n/a",
            str(page["rows"][:1]))
        results.check("No access counts in this profile" in page["density"],
                      "the density chart says there are no access counts")
        check_clean(browser, "no plugin, no side file")
    if open_page(browser, pages["unsymbolized"], "no --binary"):
        page = page_text(browser)
        results.check("Binariesnone given (--binary)" in page["summary"]
                      and "not symbolized" in page["summary"],
                      "the header says the stacks are not symbolized",
                      page["summary"])
        results.check(all(row[COLUMN["site"]].startswith("[")
                          for row in page["rows"]) and len(page["rows"]) == 5,
                      "unsymbolized sites show as module+address",
                      str([row[COLUMN["site"]] for row in page["rows"]]))
        browser.click("#rows tr:first-child td:nth-child(2)")
        frames = browser.script(
            "return Array.from(document.querySelectorAll('#detail .stack li'))"
            ".map(function (li) { return li.textContent; });")
        results.check(frames and all("(not symbolized)" in f
                                     for f in frames[:3]),
                      "the detail panel marks each address as not "
                      "symbolized", str(frames))
        check_clean(browser, "no --binary")
    if open_page(browser, pages["none"], "no context"):
        empty = browser.script(
            "var empty = document.getElementById('empty');"
            "return [document.querySelectorAll('#rows tr').length,"
            " empty.hidden, empty.textContent,"
            " document.getElementById('findings-note').textContent,"
            " document.querySelectorAll('svg rect.bar').length];")
        results.check(empty[:2] == [0, False]
                      and "no allocation context" in empty[2]
                      and empty[3].startswith("No findings")
                      and empty[4] == 15,
                      "a profile with no context: an empty table that says "
                      "so, no findings, empty charts", str(empty))
        check_clean(browser, "no context")


def check_large(browser, html, contexts):
    start = time.time()
    browser.open("file://" + html)
    ready = browser.wait_for(
        "return document.body.dataset.ready || window.reportErrors.length;",
        timeout=30)
    load = time.time() - start
    results.check(ready == "true" and load < 10,
                  f"{contexts:,} contexts: the page is ready in {load:.2f} s")
    rows = browser.script("return document.querySelectorAll('#rows tr')"
                          ".length;")
    results.check(rows == 100, f"{contexts:,} contexts: one page of 100 rows",
                  str(rows))
    shown = browser.script("return document.getElementById('shown')"
                           ".textContent;")
    results.check(shown == f"{contexts:,} contexts",
                  f"{contexts:,} contexts: the count is shown", shown)
    # The page's own data says what the largest values are.
    largest = browser.script("""
var contexts = JSON.parse(
  document.getElementById('memprof-data').textContent).contexts;
return { bytes: Math.max.apply(null, contexts.map(function (c) {
    return c.bytes; })),
  accesses: Math.max.apply(null, contexts.map(function (c) {
    return c.accesses; })) };
""")
    first = browser.script(TABLE)[0]["cells"]
    results.check(bytes_of(first[COLUMN["bytes"]]) == largest["bytes"],
                  f"{contexts:,} contexts: the first row has the most bytes",
                  f"{first} {largest}")
    start = time.time()
    browser.click("th[data-key=accesses]")
    values = [count(r["cells"][COLUMN["accesses"]])
              for r in browser.script(TABLE)]
    took = time.time() - start
    results.check(values == sorted(values, reverse=True)
                  and values[0] == largest["accesses"] and took < 2,
                  f"{contexts:,} contexts: sorting by accesses takes "
                  f"{took:.2f} s", f"{values[:5]} {largest}")
    start = time.time()
    browser.click("#next")
    page = browser.script("return document.getElementById('page')"
                          ".textContent;")
    results.check(page == f"page 2 of {(contexts + 99) // 100}",
                  f"{contexts:,} contexts: the next page", page)
    browser.type("#filter", "alloc_at_leaf")
    filtered = browser.wait_for(
        "return document.getElementById('shown').textContent.indexOf(' of ')"
        " < 0 && document.getElementById('page').textContent === 'page 1 of "
        f"{(contexts + 99) // 100}';")
    browser.type("#filter", "no_such_function")
    empty = browser.wait_for(
        "return document.querySelectorAll('#rows tr').length === 0"
        " && !document.getElementById('empty').hidden;")
    took = time.time() - start
    results.check(filtered and empty and took < 5,
                  f"{contexts:,} contexts: filtering takes {took:.2f} s")
    browser.type("#filter", "")
    browser.script("var f = document.getElementById('filter');"
                   "f.dispatchEvent(new Event('input'));")
    browser.wait_for("return document.querySelectorAll('#rows tr').length"
                     " === 100;")
    start = time.time()
    browser.click("#rows tr:first-child td:nth-child(2)")
    frames = browser.script("return document.querySelectorAll("
                            "'#detail .stack li').length;")
    results.check(frames >= 16,
                  f"{contexts:,} contexts: a row's detail opens in "
                  f"{time.time() - start:.2f} s with {frames} frames")
    check_clean(browser, f"{contexts:,} contexts")


def build_profiles():
    """The binaries and the profiles: the five contexts ("small"), the
    same with access histograms ("histogram"), without the plugin and
    without side files ("plain"), none at all ("none"), and 16,384
    ("many")."""
    pkg = dict(os.environ, PKG_CONFIG_PATH=TOP)
    plugin = run(["pkg-config", "--variable=plugin", "memprof"],
                 env=pkg).stdout.strip()
    flags = run(["pkg-config", "--cflags", "--libs", "memprof"],
                env=pkg).stdout.split()
    profiles = {}
    for name, build, args, options in (
            ("small", [f"-fplugin={plugin}"], [], ""),
            ("histogram", [f"-fplugin={plugin}",
                           "-fplugin-arg-memprof-histogram"], [],
             ":histogram=1"),
            ("plain", [], [], ":write_extra=0"),
            ("none", [f"-fplugin={plugin}"], ["none"], ""),
            # Recursion makes its 16,384 call stacks: unfolded.
            ("many", [f"-fplugin={plugin}"], ["many"], ":fold_recursion=0")):
        binary = os.path.join(WORK, f"report_program_{name}")
        built = run(["gcc", "-g", "-O0", "-fno-optimize-sibling-calls"]
                    + build
                    + [os.path.join(HERE, "report_program.c"), "-o", binary]
                    + flags)
        if not results.check(built.returncode == 0,
                             f"report_program.c builds ({name})",
                             built.stderr[-2000:]):
            return None
        path = os.path.join(WORK, f"{name}.profraw")
        ran = run([binary] + args, cwd=WORK, env=dict(
            os.environ, MEMPROF_OPTIONS=f"profile_file={path}{options}"))
        if not results.check(ran.returncode == 0 and os.path.exists(path),
                             f"report_program writes a profile ({name})",
                             ran.stderr[-2000:]):
            return None
        profiles[name] = {"path": path, "binary": binary}
    return profiles


def check_command(profiles):
    """The command line: options, errors, output.  Returns the pages."""
    small = profiles["small"]
    html = os.path.join(WORK, "small.html")
    start = time.time()
    made = run([MEMPROF, "report", "--no-libraries", "--binary", small["binary"],
                f"--title={TITLE}", "--html", html, small["path"]])
    results.check(made.returncode == 0 and os.path.exists(html),
                  f"memprof report writes the page ({time.time() - start:.2f}"
                  " s)", made.stderr)
    check_page_is_one_file(html)
    leftovers = [f for f in os.listdir(WORK) if ".tmp." in f]
    results.check(not leftovers, "no temporary file is left", str(leftovers))

    out = run([MEMPROF, "report", f"--binary={small['binary']}", "--html=-",
               small["path"]])
    results.check(out.returncode == 0 and out.stdout.startswith(
        "<!DOCTYPE html>") and "Memory profile: small.profraw" in out.stdout,
        "--html=- writes to stdout, with the default title")
    helped = run([MEMPROF, "report", "--help"])
    results.check(helped.returncode == 0 and all(
        option in helped.stdout for option in
        ("--html=FILE", "--binary=FILE", "--title=TEXT", "Example:")),
        "--help lists every option and an example")
    for args, message in ((["report", small["path"]], "no --html"),
                          (["report", "--html=x.html"], "no profile"),
                          (["report", "--html"], "needs a file name"),
                          (["report", "--bogus", "--html=x.html",
                            small["path"]], "unknown option '--bogus'")):
        bad = run([MEMPROF] + args, cwd=WORK)
        results.check(bad.returncode == 2 and message in bad.stderr
                      and "memprof report --help" in bad.stderr,
                      f"a usage error says '{message}'", bad.stderr)

    pages = {"small": html}
    for name, binary in (("histogram", True), ("plain", True),
                         ("none", True), ("unsymbolized", False)):
        profile = profiles["small" if name == "unsymbolized" else name]
        pages[name] = os.path.join(WORK, f"{name}.html")
        made = run([MEMPROF, "report", "--no-libraries", f"--html={pages[name]}"]
                   + ([f"--binary={profile['binary']}"] if binary else [])
                   + [profile["path"]])
        results.check(made.returncode == 0,
                      f"memprof report writes the page ({name})",
                      made.stderr)

    many = profiles["many"]
    many_html = os.path.join(WORK, "many.html")
    start = time.time()
    made = run([MEMPROF, "report", f"--binary={many['binary']}",
                f"--html={many_html}", many["path"]])
    took = time.time() - start
    size = os.path.getsize(many_html) if os.path.exists(many_html) else 0
    results.check(made.returncode == 0 and took < 10,
                  f"16,384 contexts: memprof report takes {took:.2f} s, "
                  f"writes {size / 1e6:.1f} MB", made.stderr)
    pages["many"] = many_html
    return pages


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--keep", action="store_true",
                        help="keep the work files")
    options = parser.parse_args()
    begin = time.time()
    shutil.rmtree(WORK, ignore_errors=True)
    os.makedirs(WORK)

    profiles = build_profiles()
    if profiles is None:
        return results.finish()
    pages = check_command(profiles)

    for program in (CHROMIUM, CHROMEDRIVER):
        if not results.check(os.access(program, os.X_OK),
                             f"{program} is installed",
                             "run scripts/install-deps"):
            return results.finish()
    user_data = tempfile.mkdtemp(prefix="chromium-", dir=WORK)
    browser = None
    try:
        browser = Browser(user_data)
        check_small(browser, profiles["small"], pages["small"])
        if options.keep:
            browser.screenshot(os.path.join(WORK, "small.png"))
        check_histogram(browser, pages["histogram"])
        check_without(browser, pages)
        check_large(browser, pages["many"], 16384)
    except Exception as error:  # a crash of the test is a failure too
        results.check(False, "the browser checks run to the end",
                      f"{type(error).__name__}: {error}")
    finally:
        if browser is not None:
            browser.close()
    if options.keep:
        print(f"      (pages: {' '.join(pages.values())})")
    else:
        shutil.rmtree(WORK, ignore_errors=True)
    print(f"      (all in {time.time() - begin:.1f} s)")
    return results.finish()


if __name__ == "__main__":
    sys.exit(main())
