#!/usr/bin/env python3
"""The memprof command, against real profiles of real programs.

- `show --format=yaml` prints the Records that llvm-profdata-19 prints,
  byte for byte, for programs built with GCC and the plugin (C, C++,
  threads; -O0 and -O2; PIE and not; histogram mode) and built with
  clang-19 -fmemory-profile;
- `show` ranks waste.c's sites in the order their known numbers give, for
  every sort key, and its JSON holds their exact counts;
- `findings` finds each kind of waste at the site that has it, and nothing
  at the hot site;
- `merge` is order-independent and associative (byte-identical outputs),
  keeps symbols, and a .mprof read back equals its inputs;
- `diff` gives exact deltas, matches contexts of two different builds by
  their frames, and reports new contexts;
- every reader turns truncated, corrupt or foreign input into exit status
  2 with a message naming the file and byte, and a binary of another
  program into a message with both build ids.

Prints one line per check and ends with `analysis: N passed, N failed`.
"""

import glob
import itertools
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

WORK = os.path.join(HERE, "work", "run")
MEMPROF = os.path.join(TOP, "analysis", "memprof")
COMPAT = os.path.join(TOP, "testsuite", "compat")
results = Report("analysis")


def run(command, **kwargs):
    return subprocess.run(command, capture_output=True, text=True, **kwargs)


def memprof(*args):
    return run([MEMPROF, *args])


def pkg_config(*args):
    env = dict(os.environ, PKG_CONFIG_PATH=TOP)
    return subprocess.run(["pkg-config", *args, "memprof"], capture_output=True, text=True,
                          env=env, check=True).stdout.split()


def build(source, output, opt="-O0", pie="-pie", extra=(), compiler=None):
    """SOURCE built with gcc (or g++), the plugin and the runtime."""
    if compiler is None:
        compiler = "g++" if source.endswith(".cc") else "gcc"
    command = [compiler, opt, "-g", "-fno-optimize-sibling-calls", pie,
               "-fplugin=" + pkg_config("--variable=plugin")[0], *pkg_config("--cflags"),
               *extra, source, "-o", output, "-lpthread", *pkg_config("--libs")]
    result = run(command)
    if result.returncode != 0:
        sys.exit(f"analysis: cannot build {source}:\n{' '.join(command)}\n{result.stderr}")
    return output


def build_clang(source, output, extra=()):
    compiler = "clang++-19" if source.endswith(".cc") else "clang-19"
    command = [compiler, "-O0", "-g", "-fmemory-profile", "-fno-omit-frame-pointer",
               "-fno-optimize-sibling-calls", *extra, source, "-o", output, "-lpthread"]
    result = run(command)
    if result.returncode != 0:
        sys.exit(f"analysis: cannot build {source} with clang:\n{result.stderr}")
    return output


def profile_of(binary, name, options="", args=(), clang=False, status=0):
    """Run BINARY in its directory (it must exit with STATUS, None for any);
    return the path of the profile it wrote."""
    directory = os.path.dirname(binary)
    for old in glob.glob(os.path.join(directory, name + "*")):
        os.unlink(old)
    env = dict(os.environ)
    if clang:
        # clang's runtime writes memprof.profraw.<pid> in the current
        # directory.
        env.pop("MEMPROF_OPTIONS", None)
        for old in glob.glob(os.path.join(directory, "memprof.profraw*")):
            os.unlink(old)
    else:
        env["MEMPROF_OPTIONS"] = f"profile_file={name}" + (f":{options}" if options else "")
    result = run([binary, *args], cwd=directory, env=env)
    if status is not None and result.returncode != status:
        sys.exit(f"analysis: {binary} failed: {result.stderr}")
    if clang:
        found = glob.glob(os.path.join(directory, "memprof.profraw*"))
        os.rename(found[0], os.path.join(directory, name))
    return os.path.join(directory, name)


def records_of(yaml_text):
    """The Records part of show --memory's YAML, with the histogram's
    address (a pointer in LLVM's output) made 0."""
    start = yaml_text.find("  Records:\n")
    return re.sub(r"AccessHistogram: \d+", "AccessHistogram: 0", yaml_text[start:])


def check_yaml_parity(name, profile, binary):
    ours = memprof("show", "--format=yaml", "--binary=" + binary, profile)
    theirs = run(["llvm-profdata-19", "show", "--memory", profile, "--profiled-binary", binary])
    if not results.check(ours.returncode == 0 and theirs.returncode == 0,
                         f"{name}: memprof and llvm-profdata both read it",
                         ours.stderr + theirs.stderr):
        return
    same = records_of(ours.stdout) == records_of(theirs.stdout)
    detail = ""
    if not same:
        a, b = records_of(theirs.stdout).splitlines(), records_of(ours.stdout).splitlines()
        for i, (x, y) in enumerate(zip(a, b)):
            if x != y:
                detail = f"line {i + 1}: llvm-profdata '{x}', memprof '{y}'"
                break
        else:
            detail = f"llvm-profdata {len(a)} lines, memprof {len(b)}"
    results.check(same and "AllocSites" in ours.stdout,
                  f"{name}: show --format=yaml prints llvm-profdata-19's Records", detail)


def test_yaml_parity():
    work = os.path.join(WORK, "parity")
    os.makedirs(work, exist_ok=True)
    for program in ("alloc_c.c", "newdelete.cc", "threads.c"):
        for opt in ("-O0", "-O2"):
            for pie in ("-pie", "-no-pie"):
                name = f"{program}{opt}{pie}"
                binary = build(os.path.join(COMPAT, program), os.path.join(work, name), opt, pie)
                # The compat programs exit with their own statuses.
                check_yaml_parity(name, profile_of(binary, "profile", status=None), binary)
    binary = build(os.path.join(HERE, "waste.c"), os.path.join(work, "waste-histogram"),
                   "-O2", extra=["-fplugin-arg-memprof-histogram"])
    check_yaml_parity("waste.c histogram", profile_of(binary, "profile", "histogram=1"), binary)


def test_clang():
    work = os.path.join(WORK, "clang")
    os.makedirs(work, exist_ok=True)
    for program in (os.path.join(COMPAT, "alloc_c.c"), os.path.join(COMPAT, "newdelete.cc"),
                    os.path.join(HERE, "waste.c")):
        name = os.path.basename(program)
        # The compat programs count accesses by hand into our shadow unless
        # built with NO_RUNTIME; clang's instrumentation counts them.
        binary = build_clang(program, os.path.join(work, name + ".clang"), ["-DNO_RUNTIME"])
        profile = profile_of(binary, "profile", clang=True, status=None)
        check_yaml_parity(f"clang-19 {name}", profile, binary)
        for command in (["show"], ["show", "--format=json"], ["findings"], ["functions"],
                        ["flamegraph"], ["report", "--html=" + os.path.join(work, "r.html")],
                        ["merge", "-o", os.path.join(work, "m.mprof")]):
            result = memprof(*command, "--binary=" + binary, profile)
            results.check(result.returncode == 0,
                          f"clang-19 {name}: memprof {command[0]} reads it", result.stderr)
    # The never-touched site of waste.c, from clang's counts alone.
    binary = os.path.join(work, "waste.c.clang")
    found = json.loads(memprof("findings", "--format=json", "--binary=" + binary,
                               os.path.join(work, "profile")).stdout)
    kinds = {(f["kind"], f["frames"][0].split(" ")[0]) for f in found["findings"]}
    results.check(("never-touched", "never_touched") in kinds,
                  "clang-19 waste.c: findings names never_touched", str(kinds))
    diff = memprof("diff", "--binary=" + binary, os.path.join(work, "profile"),
                   os.path.join(work, "profile"))
    results.check(diff.returncode == 0 and "0 of" in diff.stdout,
                  "clang-19 waste.c: diff of a profile with itself is empty", diff.stdout[:300])


# ---- waste.c: exact numbers ----

def sites(records):
    """The JSON records of show, by their leaf function's name."""
    return {r["frames"][0]["name"]: r for r in records if r["frames"]}


def test_show_and_findings(binary, profile):
    show = memprof("show", "--format=json", "--top=0", "--binary=" + binary, profile)
    if not results.check(show.returncode == 0, "waste.c: show --format=json", show.stderr):
        return
    by_site = sites(json.loads(show.stdout)["records"])
    expected = {"never_touched": (1, 8192), "over_reserved": (4, 4 * 65536),
                "short_lived": (5000, 5000 * 32), "leaked": (3, 900), "hot": (2, 1024)}
    for site, (allocs, size) in expected.items():
        record = by_site.get(site)
        results.check(record is not None and record["allocs"] == allocs
                      and record["bytes"] == size,
                      f"waste.c: {site} has {allocs} allocations of {size} bytes in all",
                      str(record and (record["allocs"], record["bytes"])))
    # Accesses the plugin counts: a 1-byte store per byte written in a loop
    # at -O0, one load per 64th byte; memset counts one per 8 bytes.
    record = by_site.get("over_reserved")
    results.check(record is not None and record["accesses"] == 4 * (1024 + 16),
                  "waste.c: over_reserved's accesses are exact",
                  str(record and record["accesses"]))
    record = by_site.get("never_touched")
    results.check(record is not None and record["accesses"] == 0
                  and record["mib"]["MaxAccessCount"] == 0,
                  "waste.c: never_touched has no access")
    record = by_site.get("over_reserved")
    results.check(record is not None and record["extra"] is not None
                  and record["extra"]["touched_bytes"] == 4 * 1024
                  and record["waste"] == 4 * (65536 - 1024),
                  "waste.c: over_reserved touched 1 KiB of each 64 KiB (side file)",
                  str(record and (record["extra"], record["waste"])))

    orders = {"bytes": "over_reserved", "allocs": "short_lived", "accesses": "short_lived",
              "density": "hot", "waste": "over_reserved"}
    for key, first in orders.items():
        ranked = json.loads(memprof("show", "--format=json", f"--sort={key}", "--top=1",
                                    "--binary=" + binary, profile).stdout)["records"]
        results.check(len(ranked) == 1 and ranked[0]["frames"][0]["name"] == first,
                      f"waste.c: show --sort={key} puts {first} first",
                      ranked and ranked[0]["frames"][0]["name"])
    text = memprof("show", "--top=2", "--binary=" + binary, profile).stdout
    results.check(re.search(r"^\s+1 .*\n(.*\n)*?\s+over_reserved \(.*waste\.c:\d+:\d+\)", text,
                            re.M) is not None and re.search(r"^\s+3 ", text, re.M) is None,
                  "waste.c: show --top=2 prints two ranked contexts with file:line:column")

    findings = json.loads(memprof("findings", "--format=json", "--binary=" + binary,
                                  profile).stdout)["findings"]
    kinds = {}
    for finding in findings:
        site = finding["frames"][0].split(" ")[0]
        kinds.setdefault(site, set()).add(finding["kind"])
    want = {"never_touched": {"never-touched"}, "over_reserved": {"over-reserved"},
            "short_lived": {"short-lived"}, "leaked": {"leaked"}}
    for site, kind in want.items():
        results.check(kinds.get(site) == kind, f"waste.c: findings: {site} is {kind.pop()}",
                      str(kinds.get(site)))
    results.check("hot" not in kinds, "waste.c: findings: nothing at the hot site",
                  str(kinds.get("hot")))
    results.check(findings and findings[0]["kind"] == "over-reserved",
                  "waste.c: findings: the costliest (over-reserved) comes first")
    only = json.loads(memprof("findings", "--format=json", "--kind=leaked",
                              "--binary=" + binary, profile).stdout)["findings"]
    mine = [f for f in only if f["frames"][0].startswith("leaked ")]
    results.check(all(f["kind"] == "leaked" for f in only) and len(mine) == 1
                  and "3 allocations (900 B)" in mine[0]["text"],
                  "waste.c: findings --kind=leaked: 3 allocations of leaked() live at exit",
                  str(only))


def test_libraries(binary, profile):
    """The C library's frames get names from libc itself (found as the
    dynamic linker finds it), unless --no-libraries."""
    def frames_of(*options):
        records = json.loads(memprof("show", "--format=json", "--top=0", *options,
                                     "--binary=" + binary, profile).stdout)["records"]
        return [f["name"] for r in records for f in r["frames"]]
    named = frames_of()
    bare = frames_of("--no-libraries")
    results.check(any("__libc_start" in name for name in named)
                  and any(re.search(r"IO_(file_)?doalloc", name) for name in named),
                  "--binary: libc's frames are named from libc (stdout's buffer, "
                  "__libc_start_main)", str(named[:12]))
    results.check(not any("__libc_start" in name for name in bare)
                  and any(re.fullmatch(r"\[[0-9a-f]{8}\]\+0x[0-9a-f]+", n) for n in bare),
                  "--no-libraries: libc's frames are addresses in their module",
                  str(bare[:12]))


def test_merge(binary, profiles, work):
    outputs = []
    for order in itertools.permutations(profiles):
        output = os.path.join(work, f"merged.{len(outputs)}.mprof")
        result = memprof("merge", "--quiet", "-o", output, *order)
        if not results.check(result.returncode == 0, "merge runs", result.stderr):
            return
        outputs.append(open(output, "rb").read())
    results.check(all(o == outputs[0] for o in outputs),
                  f"merge: the {len(outputs)} orders of {len(profiles)} inputs give the same "
                  "bytes")
    a, b, c = profiles
    ab = os.path.join(work, "ab.mprof")
    bc = os.path.join(work, "bc.mprof")
    memprof("merge", "--quiet", "-o", ab, a, b)
    memprof("merge", "--quiet", "-o", bc, b, c)
    left = os.path.join(work, "ab_c.mprof")
    right = os.path.join(work, "a_bc.mprof")
    memprof("merge", "--quiet", "-o", left, ab, c)
    memprof("merge", "--quiet", "-o", right, a, bc)
    results.check(open(left, "rb").read() == open(right, "rb").read() == outputs[0],
                  "merge: (a+b)+c, a+(b+c) and a+b+c give the same bytes")
    again = os.path.join(work, "again.mprof")
    memprof("merge", "--quiet", "-o", again, left)
    results.check(open(again, "rb").read() == outputs[0],
                  "merge: a .mprof merged alone is unchanged (lossless round trip)")

    # The merged totals are the sums of the inputs'.
    def totals(*inputs):
        records = json.loads(memprof("show", "--format=json", "--top=0", *inputs).stdout)
        return (sum(r["bytes"] for r in records["records"]),
                sum(r["allocs"] for r in records["records"]),
                sum(r["accesses"] for r in records["records"]), records["contexts"])
    separate = [totals(p) for p in profiles]
    merged = totals(left)
    results.check(merged[:3] == tuple(sum(s[i] for s in separate) for i in range(3))
                  and merged[3] == separate[0][3],
                  "merge: bytes, allocations and accesses add up; contexts match by stack",
                  f"{merged} vs {separate}")

    # With --binary, the frames are kept: no binary needed afterwards.
    symbolized = os.path.join(work, "symbolized.mprof")
    result = memprof("merge", "--quiet", "--binary=" + binary, "-o", symbolized, *profiles)
    show = memprof("show", "--top=0", symbolized)
    results.check(result.returncode == 0 and "over_reserved (" in show.stdout
                  and "waste.c:" in show.stdout,
                  "merge --binary: the .mprof holds the frames (show needs no binary)",
                  show.stderr)
    results.check(open(symbolized, "rb").read()[:8] == b"\x89MPROF\r\n",
                  "merge: the output starts with the .mprof magic")
    fromlist = os.path.join(work, "list.mprof")
    listing = os.path.join(work, "inputs.txt")
    with open(listing, "w") as out:
        out.write("\n".join(profiles) + "\n")
    memprof("merge", "--quiet", "--inputs=" + listing, "-o", fromlist)
    results.check(os.path.exists(fromlist) and open(fromlist, "rb").read() == outputs[0],
                  "merge --inputs=FILE reads the names from a file")


def test_diff(binary, one, three, work):
    diff = memprof("diff", "--format=json", "--binary=" + binary, one, three)
    if not results.check(diff.returncode == 0, "diff runs", diff.stderr):
        return
    changes = json.loads(diff.stdout)["changes"]
    by_site = {c["frames"][0].split(" ")[0]: c for c in changes}
    sizes = {"never_touched": 8192, "over_reserved": 4 * 65536, "short_lived": 5000 * 32,
             "leaked": 900, "hot": 1024}
    for site, size in sizes.items():
        change = by_site.get(site)
        results.check(change is not None and change["status"] == "changed"
                      and change["a"] == size and change["b"] == 3 * size
                      and change["delta"] == 2 * size,
                      f"diff: {site} grows from {size} to {3 * size} bytes",
                      str(change and (change["a"], change["b"])))
    results.check(changes and changes[0]["frames"][0].startswith("over_reserved"),
                  "diff: the largest change comes first")
    # A second build with one more allocation site (added at the end of the
    # file, so no other function moves): contexts match by their frames.
    other = build(os.path.join(HERE, "waste.c"), os.path.join(work, "waste-extra"),
                  extra=["-DEXTRA_SITE"])
    extra_profile = profile_of(other, "extra.profraw")
    diff = memprof("diff", "--format=json", "--binary=" + binary, "--binary=" + other, one,
                   extra_profile)
    changes = json.loads(diff.stdout)["changes"] if diff.returncode == 0 else []
    by_site = {c["frames"][0].split(" ")[0]: c for c in changes}
    results.check(by_site.get("extra_site", {}).get("status") == "new"
                  and by_site["extra_site"]["b"] == 777,
                  "diff: a site only in B is new, with its bytes", diff.stderr[:300])
    results.check("over_reserved" not in by_site and len(changes) == 1,
                  "diff: the other sites of two builds match by their frames (no change)",
                  str(sorted(by_site)))
    vanished = json.loads(memprof("diff", "--format=json", "--binary=" + binary,
                                  "--binary=" + other, extra_profile, one).stdout)["changes"]
    results.check(len(vanished) == 1 and vanished[0]["status"] == "vanished",
                  "diff: swapped, the same site has vanished")


def test_bad_input(binary, profile, work):
    data = open(profile, "rb").read()
    crashes = []
    for cut in sorted({0, 7, 8, 47, 48, 100, len(data) // 2, len(data) - 8, len(data) - 1}):
        path = os.path.join(work, f"cut{cut}.profraw")
        with open(path, "wb") as out:
            out.write(data[:cut])
        for command in (["show"], ["merge", "-o", os.path.join(work, "x.mprof")]):
            result = memprof(*command, path)
            if result.returncode != 2 or path not in result.stderr:
                crashes.append(f"{command[0]} at {cut}: {result.returncode} {result.stderr}")
            elif cut > 0 and "at byte" not in result.stderr:
                crashes.append(f"{command[0]} at {cut}: no byte offset: {result.stderr}")
    results.check(not crashes, "truncated raw profiles: exit 2, the file and byte named",
                  "; ".join(crashes[:3]))

    merged = os.path.join(work, "good.mprof")
    memprof("merge", "--quiet", "-o", merged, profile)
    data = open(merged, "rb").read()
    problems = []
    variants = {"truncated": data[: len(data) - 5], "header only": data[:32],
                "flipped payload": data[:40] + bytes([data[40] ^ 0xff]) + data[41:],
                "bad version": data[:8] + b"\x09\x00\x00\x00" + data[12:],
                "extended": data + b"\x00" * 16}
    # The frame cut in half, the header's compressed size saying so: the
    # decompressor itself must find the frame short.
    half = (len(data) - 32) // 2
    cut_frame = data[:24] + half.to_bytes(8, "little") + data[32:32 + half]
    for name, content in variants.items():
        path = os.path.join(work, "bad.mprof")
        with open(path, "wb") as out:
            out.write(content)
        result = memprof("show", path)
        if result.returncode != 2 or path not in result.stderr or "at byte" not in result.stderr:
            problems.append(f"{name}: {result.returncode} {result.stderr.strip()}")
    results.check(not problems, "corrupt .mprof files: exit 2, the file and byte named",
                  "; ".join(problems))
    path = os.path.join(work, "cut-frame.mprof")
    with open(path, "wb") as out:
        out.write(cut_frame)
    result = memprof("show", path)
    results.check(result.returncode == 2
                  and f"{path}: at byte 32: the payload does not decompress" in result.stderr,
                  "a .mprof whose zstd frame is cut short: exit 2, byte 32 named",
                  result.stderr.strip())

    foreign = os.path.join(work, "foreign.txt")
    with open(foreign, "w") as out:
        out.write("this is not a profile\n")
    result = memprof("show", foreign)
    results.check(result.returncode == 2 and "not a memory profile" in result.stderr,
                  "a foreign file: exit 2, 'not a memory profile'", result.stderr)
    result = memprof("show", os.path.join(work, "missing.profraw"))
    results.check(result.returncode == 2 and "cannot open" in result.stderr,
                  "a missing file: exit 2, 'cannot open'", result.stderr)

    other = build(os.path.join(HERE, "waste.c"), os.path.join(work, "waste-other"),
                  extra=["-DEXTRA_SITE"])
    result = memprof("show", "--binary=" + other, profile)
    ids = re.findall(r"\b[0-9a-f]{40}\b", result.stderr)
    results.check(result.returncode == 2 and len(set(ids)) == 2,
                  "another program's binary: exit 2, both build ids printed", result.stderr)

    for command in ("show", "findings", "functions", "flamegraph", "report", "merge", "diff"):
        helped = memprof(command, "--help")
        bad = memprof(command, "--no-such-option", profile)
        results.check(helped.returncode == 0 and helped.stdout.startswith("usage: memprof")
                      and bad.returncode == 2 and "--no-such-option" in bad.stderr,
                      f"memprof {command}: --help, and a bad option exits 2")
    result = memprof("frobnicate")
    results.check(result.returncode == 2 and "not a memprof command" in result.stderr,
                  "an unknown command: exit 2")


def test_side_file_pairing(binary, profile, work):
    """A side file that belongs to another profile is ignored, with a
    warning, and the profile still reads."""
    copy = os.path.join(work, "paired.profraw")
    shutil.copy(profile, copy)
    other_side = glob.glob(os.path.join(os.path.dirname(profile), "*.extra"))
    # The profile's own side file: the last "profraw" of its name becomes
    # "extra" (runtime/extraformat.h, memprof_extra_path).
    directory, name = os.path.split(profile)
    own = os.path.join(directory, "extra".join(name.rsplit("profraw", 1)))
    other_side = [p for p in other_side if p not in (own, profile + ".extra")]
    if not results.check(other_side, "side files are written next to the profiles"):
        return
    shutil.copy(other_side[0], copy + ".extra")
    result = memprof("show", "--format=json", copy)
    records = json.loads(result.stdout)["records"] if result.returncode == 0 else []
    results.check(result.returncode == 0 and "describes another profile" in result.stderr
                  and all(r["extra"] is None for r in records),
                  "a side file of another profile: a warning, and it is ignored",
                  result.stderr)


FILES = 200  # profiles test_progress merges


def test_progress(work):
    """On a terminal a long merge shows a progress line; in a pipe, or with
    --quiet, it does not."""
    import pty
    generator = os.path.join(work, "gen_profiles")
    subprocess.run(["gcc", "-std=gnu11", "-O2", "-I" + os.path.join(TOP, "include"),
                    "-I" + os.path.join(TOP, "runtime"), "-I" + os.path.join(TOP, "formats"),
                    os.path.join(TOP, "bench", "gen_profiles.c"),
                    os.path.join(TOP, "runtime", "rawwriter.c"),
                    os.path.join(TOP, "formats", "mib.c"), "-o", generator], check=True)
    inputs = os.path.join(work, "many")
    os.makedirs(inputs)
    # The progress line shows once a merge has read for a second: 80 files
    # took 0.92 s on the idle machine (the check failed there), 200 take
    # 2.5 s.
    subprocess.run([generator, inputs, str(FILES), "10000", "20000"], check=True)
    names = sorted(glob.glob(os.path.join(inputs, "*.profraw")))
    output = os.path.join(work, "many.mprof")

    def merge_on_terminal(*options):
        pid, fd = pty.fork()
        if pid == 0:
            os.execv(MEMPROF, [MEMPROF, "merge", *options, "-o", output, *names])
        seen = b""
        while True:
            try:
                chunk = os.read(fd, 4096)
            except OSError:
                break
            if not chunk:
                break
            seen += chunk
        _, status = os.waitpid(pid, 0)
        return os.waitstatus_to_exitcode(status), seen.decode(errors="replace")

    status, seen = merge_on_terminal()
    results.check(status == 0 and re.search(rf"\rmemprof: read \d+ of {FILES} files, \d+ contexts",
                                             seen) is not None
                  and f"read {FILES} of {FILES} files" in seen,
                  "merge: a progress line on a terminal, up to the last file", seen[-300:])
    status, seen = merge_on_terminal("--quiet")
    results.check(status == 0 and "read" not in seen, "merge --quiet: no progress line",
                  seen[-300:])
    piped = memprof("merge", "-o", output, *names)
    results.check(piped.returncode == 0 and "\r" not in piped.stderr
                  and f"merged {FILES} files" in piped.stderr,
                  "merge: no progress line when stderr is not a terminal", piped.stderr[-300:])
    shutil.rmtree(inputs, ignore_errors=True)


def main():
    if not os.path.exists(MEMPROF):
        sys.exit(f"analysis: build the command first (make): {MEMPROF} is missing")
    shutil.rmtree(WORK, ignore_errors=True)
    os.makedirs(WORK)
    work = os.path.join(WORK, "waste")
    os.makedirs(work)
    binary = build(os.path.join(HERE, "waste.c"), os.path.join(work, "waste"))
    one = profile_of(binary, "one.profraw", args=["1"])
    two = profile_of(binary, "two.profraw", args=["2"])
    three = profile_of(binary, "three.profraw", args=["3"])
    test_show_and_findings(binary, one)
    test_libraries(binary, one)
    test_merge(binary, [one, two, three], work)
    test_diff(binary, one, three, work)
    test_bad_input(binary, one, work)
    test_side_file_pairing(binary, one, work)
    test_progress(work)
    test_yaml_parity()
    test_clang()
    return results.finish()


if __name__ == "__main__":
    sys.exit(main())
