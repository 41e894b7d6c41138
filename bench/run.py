#!/usr/bin/env python3
"""GCC MemProf against its peers, side by side in one run.

Every workload is built with gcc -O2 (the baseline), with the plugin and
the runtime (stack analysis full, none and basic; inline counters and
callbacks), with clang-19 -O2 and with clang-19 -O2 -fmemory-profile; the
gcc baseline is also run under valgrind --tool=dhat and under heaptrack.
The configurations run interleaved, round after round, RUNS rounds.  For
each workload and configuration: the median CPU time (user + sys of the
run and every process it started, from wait4) and its ratio to the
matching baseline (clang's MemProf to clang -O2, everything else to gcc
-O2), the median wall time and its ratio, the median peak RSS (the
largest process of the run, from GNU time's %M) and its ratio, and the size of
the profile the run wrote; the geometric mean of each ratio over the
workloads (CPU time first: on a shared machine the wall time of a run
moves with the other processes' load, its CPU time much less); and,
from the runtime's stats=1,
the executed accesses that hit the stack at each stack-analysis level.
Every run's output must equal the baseline's.

Writes bench/results/latest.md (or --output) and prints it.  `make bench`
runs the whole set; `make bench-quick` a smaller scale with fewer
workloads."""

import argparse
import ctypes
import os
import platform
import re
import shutil
import signal
import statistics
import subprocess
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(HERE)
from workloads import WORKLOADS, prepare  # noqa: E402

WORK = os.path.join(HERE, "work", "peers")
SAMPLE_INTERVAL = 524288
MIN_LIMIT = 2  # seconds: no run is stopped sooner
PR_SET_CHILD_SUBREAPER = 36  # linux/prctl.h
REAP_GRACE = 5  # seconds to wait for a stopped run's processes to be reaped

# How each binary is built: compiler (gcc or clang) and flags.  The plugin
# builds use the flags the manual recommends; clang's MemProf build those
# LLVM's documentation recommends.
BUILDS = {
    "gcc": ("gcc", ["-O2", "-g"]),
    # The plugin builds without -fno-optimize-sibling-calls, as the manual
    # says (the plugin keeps the tail calls that may allocate; the flag also
    # turned off tail recursion: libiberty_demangle's d_count_templates_scopes).
    "plugin": ("gcc", ["-O2", "-g", "{plugin}"]),
    "plugin-none": ("gcc", ["-O2", "-g", "{plugin}",
                            "-fplugin-arg-memprof-stack-analysis=none"]),
    "plugin-basic": ("gcc", ["-O2", "-g", "{plugin}",
                             "-fplugin-arg-memprof-stack-analysis=basic"]),
    "callbacks": ("gcc", ["-O2", "-g", "{plugin}", "-fplugin-arg-memprof-callbacks"]),
    # Sampled access counting: bursts of counting code (gcc-plugin/bursts.cc).
    "plugin-sampled-accesses": ("gcc", ["-O2", "-g", "{plugin}",
                                        "-fplugin-arg-memprof-sample-accesses"]),
    # The runtime alone, without the plugin: allocations, no access counters;
    # with frame pointers, as the manual says (the plugin keeps them itself).
    "runtime": ("gcc", ["-O2", "-g", "-fno-omit-frame-pointer", "{runtime}"]),
    # The same with the allocation calls' check at the call site and glibc
    # called directly (gcc-plugin/direct_allocations.cc), no access counters.
    "direct": ("gcc", ["-O2", "-g", "-fno-omit-frame-pointer", "{plugin}",
                       "-fplugin-arg-memprof-instrument=0",
                       "-fplugin-arg-memprof-direct-allocations"]),
    "clang": ("clang", ["-O2", "-g"]),
    "clang-memprof": ("clang", ["-O2", "-g", "-fmemory-profile", "-fno-omit-frame-pointer",
                                "-fno-optimize-sibling-calls"]),
}


class Config:
    def __init__(self, label, build, baseline, wrapper=(), options=None, peer=False):
        self.label = label
        self.peer = peer              # a peer tool's run: stopped at the slowdown limit
        self.build = build
        self.baseline = baseline      # the label of the config it is compared with
        self.wrapper = list(wrapper)  # a tool the binary runs under
        self.options = options        # MEMPROF_OPTIONS for our runtime, or None


CONFIGS = [
    Config("gcc -O2", "gcc", None),
    Config("plugin", "plugin", "gcc -O2", options=""),
    Config("plugin, stack-analysis=none", "plugin-none", "gcc -O2", options=""),
    Config("plugin, stack-analysis=basic", "plugin-basic", "gcc -O2", options=""),
    Config("plugin, sampled", "plugin", "gcc -O2",
           options=f"sample_interval={SAMPLE_INTERVAL}"),
    # Allocations and accesses both sampled: the mode to leave on.
    Config("plugin, sampled accesses", "plugin-sampled-accesses", "gcc -O2",
           options=f"sample_interval={SAMPLE_INTERVAL}"),
    Config("plugin, callbacks", "callbacks", "gcc -O2", options=""),
    # What tracking the heap's peak and timeline costs (docs/benchmarks.md).
    Config("plugin, peak=0", "plugin", "gcc -O2", options="peak=0"),
    # The always-on mode (docs/manual.md): the runtime alone, sampled.
    Config("always-on (runtime alone, sampled)", "runtime", "gcc -O2",
           options=f"sample_interval={SAMPLE_INTERVAL}"),
    Config("always-on (direct allocation calls, sampled)", "direct", "gcc -O2",
           options=f"sample_interval={SAMPLE_INTERVAL}"),
    Config("allocation-only (runtime alone)", "runtime", "gcc -O2", options=""),
    Config("clang-19 -O2", "clang", None),
    Config("clang-19 -fmemory-profile", "clang-memprof", "clang-19 -O2", peer=True),
    Config("valgrind --tool=dhat", "gcc", "gcc -O2", wrapper=["valgrind", "--tool=dhat"],
           peer=True),
    Config("heaptrack", "gcc", "gcc -O2", wrapper=["heaptrack"], peer=True),
]

PEER_COMMANDS = {"clang-19": "clang-19 libclang-rt-19-dev", "clang++-19": "clang-19",
                 "valgrind": "valgrind", "heaptrack": "heaptrack"}


def fail(message):
    sys.exit(f"bench: {message}")


def publish(text, path):
    """Print a results table and write it to PATH (by a temporary file
    renamed over it: an interrupted run leaves the last results whole)."""
    print(text)
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    temporary = path + ".tmp"
    with open(temporary, "w") as out:
        out.write(text)
    os.replace(temporary, path)


def pkg_config(*args):
    env = dict(os.environ, PKG_CONFIG_PATH=TOP)
    return subprocess.run(["pkg-config", *args, "memprof"], env=env, capture_output=True,
                          text=True, check=True).stdout.split()


def build(workload, build_name, src, output):
    family, flags = BUILDS[build_name]
    if family == "gcc":
        compiler = "g++" if workload.cxx else "gcc"
    else:
        compiler = "clang++-19" if workload.cxx else "clang-19"
    plugin = ["-fplugin=" + pkg_config("--variable=plugin")[0], *pkg_config("--cflags")]
    command = [compiler]
    for flag in flags:
        command += plugin if flag == "{plugin}" else [] if flag == "{runtime}" else [flag]
    command += workload.compile_flags(src) + workload.sources(src)
    command += ["-o", output, *workload.libs, "-lpthread"]
    if "{plugin}" in flags or "{runtime}" in flags:
        command += pkg_config("--libs")
    result = subprocess.run(command, capture_output=True, text=True)
    if result.returncode != 0:
        fail(f"cannot build {workload.name} ({build_name}):\n  {' '.join(command)}\n"
             f"{result.stderr[-2000:]}")


def become_subreaper():
    """Makes the processes a run leaves without a parent (a peer's helpers
    when the run is stopped at the limit: killed with their parent, which
    can no longer reap them) children of this process, so that run_once
    reaps them and counts their CPU time.  Linux only; elsewhere their
    time is lost, and a stopped run's CPU time is a lower bound anyway."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    except (OSError, AttributeError):
        pass


def reap_orphans(blocking):
    """Reaps the children this process has besides the run it waited for
    (see become_subreaper): (their CPU seconds, their largest peak RSS in
    KiB).  BLOCKING: they were killed, wait up to REAP_GRACE seconds for
    them to end; otherwise take only those that have ended."""
    cpu, rss = 0.0, 0
    deadline = time.monotonic() + REAP_GRACE
    while True:
        try:
            pid, _, usage = os.wait4(-1, os.WNOHANG)
        except ChildProcessError:
            break
        if pid == 0:
            if not blocking or time.monotonic() > deadline:
                break
            time.sleep(0.01)
            continue
        cpu += usage.ru_utime + usage.ru_stime
        rss = max(rss, usage.ru_maxrss)
    return cpu, rss


GNU_TIME = "/usr/bin/time"  # Debian's package `time` (scripts/install-deps --bench)


def run_once(command, env, cwd, timeout):
    """Runs COMMAND in the empty directory CWD.  Returns (wall seconds, CPU
    seconds (user + sys of the process and of every process it started:
    wait4 counts those it reaped, reap_orphans the others), peak RSS in KiB
    of the largest process, bytes of the files it left in CWD, its
    stdout); the stdout is None when it ran longer than TIMEOUT seconds of
    wall time (it is killed, with everything it started: its CPU time and
    peak RSS are then what it had used).  The files are removed."""
    stdout_path = os.path.join(cwd, "..", os.path.basename(cwd) + ".stdout")
    stderr_path = os.path.join(cwd, "..", os.path.basename(cwd) + ".stderr")
    timed_out = threading.Event()

    def kill(process):
        timed_out.set()
        try:
            os.killpg(process.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass

    # The peak RSS comes from GNU time, which starts the run from a small
    # process of its own: a process exec'd from this one keeps this
    # Python's high-water mark (the kernel carries it across exec), which
    # put a floor of about 16 MiB under every run's peak RSS.
    rss_path = os.path.join(cwd, "..", os.path.basename(cwd) + ".rss")
    if os.path.exists(rss_path):
        os.unlink(rss_path)
    with open(stdout_path, "wb") as out, open(stderr_path, "wb") as err:
        start = time.perf_counter()
        process = subprocess.Popen([GNU_TIME, "-q", "-f", "%M", "-o", rss_path, *command],
                                   cwd=cwd, env=env, stdout=out, stderr=err,
                                   start_new_session=True)
        timer = threading.Timer(timeout, kill, [process])
        timer.start()
        _, status, usage = os.wait4(process.pid, 0)
        seconds = time.perf_counter() - start
        timer.cancel()
    orphans_cpu, orphans_rss = reap_orphans(timed_out.is_set())
    cpu = usage.ru_utime + usage.ru_stime + orphans_cpu
    rss = orphans_rss  # a run stopped at the limit: what its processes had
    if os.path.exists(rss_path):
        with open(rss_path) as report:
            lines = report.read().split()
        if lines and lines[-1].isdigit():
            rss = max(rss, int(lines[-1]))
        os.unlink(rss_path)
    if rss == 0:
        # Stopped at the limit, GNU time killed after it had reaped the
        # run: wait4's figure, which has the floor (a lower bound of the
        # peers stopped so, all far above it).
        rss = usage.ru_maxrss
    process.returncode = os.waitstatus_to_exitcode(status)
    size = 0
    for name in os.listdir(cwd):
        path = os.path.join(cwd, name)
        size += os.path.getsize(path)
        os.unlink(path)
    if timed_out.is_set():
        return seconds, cpu, rss, size, None
    if process.returncode != 0:
        fail(f"{' '.join(command)} failed with status {process.returncode}:\n"
             + open(stderr_path, errors="replace").read()[-2000:])
    return seconds, cpu, rss, size, open(stdout_path, "rb").read()


# The plugin builds whose first timed run also prints the runtime's stats
# (stats=1 only adds a scan of the shadow at exit): the executed accesses
# that hit the stack at each stack-analysis level.
STACK_LEVELS = {"plugin": "full", "plugin, stack-analysis=none": "none",
                "plugin, stack-analysis=basic": "basic"}


def stack_hits(stderr, label):
    """From a run's stderr with stats=1: (executed accesses, of them on the stack)."""
    found = re.search(r"stats: (\d+) instrumented accesses .*?stack (\d+)", stderr)
    if not found:
        fail(f"'{label}' with stats=1 printed no stats: {stderr[-1000:]}")
    return int(found.group(1)), int(found.group(2))


def check_peers():
    missing = sorted({package for command, package in PEER_COMMANDS.items()
                      if shutil.which(command) is None})
    if missing:
        fail(f"the peers are not installed (Debian packages: {' '.join(missing)}): "
             f"run scripts/install-deps --bench as root")


def human_bytes(count):
    for unit in ("B", "KiB", "MiB", "GiB"):
        if count < 1024 or unit == "GiB":
            return f"{count:.0f} {unit}" if unit == "B" else f"{count:.1f} {unit}"
        count /= 1024


def versions():
    def first_line(command):
        try:
            out = subprocess.run(command, capture_output=True, text=True)
            return (out.stdout or out.stderr).strip().splitlines()[0]
        except (OSError, IndexError):
            return "?"
    return [first_line(["gcc", "--version"]), first_line(["clang-19", "--version"]),
            first_line(["valgrind", "--version"]), first_line(["heaptrack", "--version"])]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=5, help="rounds (default 5)")
    parser.add_argument("--quick", action="store_true",
                        help="half the workloads at a tenth of the scale")
    parser.add_argument("--workloads", help="comma-separated names (default: all)")
    parser.add_argument("--limit", type=float,
                        help="the slowdown a peer's run may reach: a peer slower than this "
                        "many times its baseline (and over %d s) is stopped there, run only "
                        "once, and reported as over the limit (default 20; quick 40)" % MIN_LIMIT)
    parser.add_argument("--output", default=os.path.join(HERE, "results", "latest.md"))
    parser.add_argument("--config", action="append", dest="configs",
                        help="a configuration's label to run, with its baseline (may be "
                        "given several times; default: all)")
    args = parser.parse_args()
    global CONFIGS
    if args.configs:
        wanted = set(args.configs)
        unknown = wanted - {c.label for c in CONFIGS}
        if unknown:
            fail(f"unknown configuration {', '.join(sorted(unknown))}; the configurations "
                 f"are {', '.join(c.label for c in CONFIGS)}")
        wanted |= {c.baseline for c in CONFIGS if c.label in wanted and c.baseline}
        CONFIGS = [c for c in CONFIGS if c.label in wanted]
    if args.runs < 1:
        fail("--runs must be at least 1")
    check_peers()
    if args.limit is None:
        args.limit = 40 if args.quick else 20
    workloads = WORKLOADS
    if args.quick:
        workloads = [w for w in workloads if w.quick]
    if args.workloads:
        wanted = args.workloads.split(",")
        unknown = set(wanted) - {w.name for w in WORKLOADS}
        if unknown:
            fail(f"unknown workload {', '.join(sorted(unknown))}; the workloads are "
                 f"{', '.join(w.name for w in WORKLOADS)}")
        workloads = [w for w in WORKLOADS if w.name in wanted]
    if not os.access(GNU_TIME, os.X_OK):
        fail(f"{GNU_TIME} is missing (Debian package: time): run scripts/install-deps --bench as root")
    src = prepare("bench")
    become_subreaper()
    shutil.rmtree(WORK, ignore_errors=True)
    os.makedirs(WORK)
    started = time.time()

    # (workload, label) -> medians (wall s, CPU s, peak KiB, profile bytes)
    results = {}
    stack = {}     # (workload, level) -> (executed, on the stack)
    stopped = {}   # (workload, label) -> (wall s, CPU s, KiB) reached when stopped
    for workload in workloads:
        scale = workload.small if args.quick else workload.scale
        arguments = workload.command_arguments(scale)
        binaries = {}
        for build_name in sorted({config.build for config in CONFIGS}):
            binaries[build_name] = os.path.join(WORK, f"{workload.name}.{build_name}")
            build(workload, build_name, src, binaries[build_name])
        samples = {config.label: [] for config in CONFIGS}
        timed_out = set()
        expected = None
        for round_number in range(args.runs):
            for config in CONFIGS:
                if config.label in timed_out:
                    continue
                cwd = os.path.join(WORK, "run")
                os.makedirs(cwd, exist_ok=True)
                env = dict(os.environ)
                env.pop("MEMPROF_OPTIONS", None)
                want_stats = round_number == 0 and config.label in STACK_LEVELS
                if config.options is not None:
                    env["MEMPROF_OPTIONS"] = (config.options + ":stats=1" if want_stats
                                              and config.options else
                                              "stats=1" if want_stats else config.options)
                command = [*config.wrapper, binaries[config.build], *arguments]
                timeout = 3600
                if config.peer:
                    baseline = statistics.median(v[0] for v in samples[config.baseline])
                    timeout = max(MIN_LIMIT, args.limit * baseline)
                seconds, cpu, rss, size, output = run_once(command, env, cwd, timeout)
                if want_stats and output is not None:
                    stack[workload.name, STACK_LEVELS[config.label]] = stack_hits(
                        open(cwd + ".stderr", errors="replace").read(), config.label)
                if output is None:
                    # One run over the limit is enough to know; its CPU
                    # time and peak RSS so far are lower bounds.
                    timed_out.add(config.label)
                    stopped[workload.name, config.label] = (seconds, cpu, rss)
                    continue
                if expected is None:
                    expected = output
                elif (output != expected if not config.wrapper
                      # heaptrack prints its own lines around the program's.
                      else expected not in output):
                    fail(f"{workload.name} under '{config.label}' printed {output[:200]!r}, "
                         f"not {expected[:200]!r}")
                samples[config.label].append((seconds, cpu, rss, size))
            print(f"bench: {workload.name}: round {round_number + 1}/{args.runs} "
                  f"({time.time() - started:.0f} s)", file=sys.stderr, flush=True)
        for label, values in samples.items():
            if label in timed_out:
                results[workload.name, label] = None
            else:
                results[workload.name, label] = tuple(
                    statistics.median(v[i] for v in values) for i in range(4))
        for config in CONFIGS:
            if results[workload.name, config.label] is None and config.baseline is None:
                fail(f"{workload.name}: the baseline '{config.label}' ran over an hour")

    lines = [f"# GCC MemProf against its peers",
             "",
             f"Median of {args.runs} interleaved runs per workload and configuration"
             f"{' (quick: small scale)' if args.quick else ''}; CPU time (user + sys of the "
             "run and every process it started), wall time and peak RSS as ratios to the "
             "matching baseline (clang-19 -fmemory-profile to clang-19 -O2, the others to "
             "gcc -O2); profile: bytes the run wrote. The CPU time is the measure to read "
             "(the geometric means lead with it): on a shared machine a run's wall time "
             "moves with the other processes' load, its CPU time much less. A peer whose "
             f"wall time passes {args.limit:.0f}x its baseline's is stopped at that limit, "
             "run once, and shown as over it, with the CPU time and peak RSS it had used "
             "as lower bounds; GCC MemProf's configurations always run to the end. Made "
             f"by `make {'bench-quick' if args.quick else 'bench'}` (bench/run.py"
             f"{', a subset: ' + ' '.join(sys.argv[1:]) if args.configs or args.workloads else ''}) in "
             f"{time.time() - started:.0f} s on this machine: "
             f"{os.cpu_count()} CPUs, {platform.platform()}.",
             "",
             *[f"- {version}" for version in versions()],
             ""]

    def ratios(workload, config):
        """CPU time, wall time and RSS ratios to the baseline, as numbers,
        and whether they are lower bounds (a run stopped at the limit:
        its wall ratio is the limit, the others what it had used)."""
        base_wall, base_cpu, base_rss, _ = results[workload.name, config.baseline]
        measured = results[workload.name, config.label]
        if measured is None:
            _, cpu, rss = stopped[workload.name, config.label]
            return cpu / base_cpu, args.limit, rss / base_rss, True
        wall, cpu, rss, _ = measured
        return cpu / base_cpu, wall / base_wall, rss / base_rss, False

    for workload in workloads:
        lines += [f"## {workload.name} (scale {workload.small if args.quick else workload.scale})",
                  "", "| configuration | median CPU s | CPU ratio | median wall s | wall ratio "
                  "| peak RSS | RSS ratio | profile |",
                  "|---|---|---|---|---|---|---|---|"]
        for config in CONFIGS:
            measured = results[workload.name, config.label]
            if config.baseline:
                cpu_ratio, wall_ratio, rss_ratio, bound = ratios(workload, config)
                cpu_text = f"{'>= ' if bound else ''}{cpu_ratio:.2f}x"
                wall_text = f"> {args.limit:.0f}x" if bound else f"{wall_ratio:.2f}x"
                rss_text = f"{'>= ' if bound else ''}{rss_ratio:.2f}x"
            else:
                cpu_text = wall_text = rss_text = "1.00x"
            if measured is None:
                wall, cpu, rss = stopped[workload.name, config.label]
                lines.append(f"| {config.label} | >= {cpu:.3f} | {cpu_text} | stopped at the "
                             f"limit | {wall_text} | >= {human_bytes(rss * 1024)} | "
                             f"{rss_text} | - |")
                continue
            wall, cpu, rss, size = measured
            lines.append(f"| {config.label} | {cpu:.3f} | {cpu_text} | {wall:.3f} | {wall_text} "
                         f"| {human_bytes(rss * 1024)} | {rss_text} | "
                         f"{human_bytes(size) if size else '-'} |")
        lines.append("")
    lines += ["## Geometric means over the workloads", "",
              "CPU time is the measure; the wall time is beside it. A mean marked >= counts "
              f"a run stopped at the limit (its wall time {args.limit:.0f}x its baseline's) "
              "with that ratio of wall time, and the CPU time and peak RSS it had used when "
              "it was stopped: the true mean is higher.", "",
              "| configuration | CPU time ratio | wall time ratio | RSS ratio |",
              "|---|---|---|---|"]
    for config in CONFIGS:
        if not config.baseline:
            continue
        measured = [ratios(workload, config) for workload in workloads]
        bound = ">= " if any(m[3] for m in measured) else ""
        means = [statistics.geometric_mean(m[i] for m in measured) for i in range(3)]
        lines.append(f"| {config.label} | {bound}{means[0]:.2f}x | {bound}{means[1]:.2f}x "
                     f"| {bound}{means[2]:.2f}x |")
    # Peak tracking's cost: the plugin's default run against its peak=0 run
    # (bench-peak measures it over more rounds, paired).
    lines += ["", "## The cost of peak tracking", "",
              "The median CPU time of `plugin` (peak=1, the default) over that of "
              "`plugin, peak=0`; `make bench-peak` measures it on CPU time, paired "
              "round by round (bench/results/peak-overhead.md). Target: at most 1.03x.", "",
              "| workload | plugin / plugin, peak=0 |", "|---|---|"]
    peak_ratios = []
    for workload in workloads:
        # Either may be left out by --config.
        with_peak = results.get((workload.name, "plugin"))
        without = results.get((workload.name, "plugin, peak=0"))
        if with_peak and without:
            peak_ratios.append(with_peak[1] / without[1])
            lines.append(f"| {workload.name} | {peak_ratios[-1]:.3f}x |")
    if peak_ratios:
        lines.append(f"| geometric mean | {statistics.geometric_mean(peak_ratios):.3f}x |")
    lines += ["", "## Executed accesses that hit the stack, per stack-analysis level", "",
              "From the first timed run of each plugin build, made with MEMPROF_OPTIONS=stats=1 "
              "(which adds a scan of the shadow at exit).", "",
              "| workload | executed (none) | on the stack: none | basic | full | "
              "removed by full |", "|---|---|---|---|---|---|"]
    for workload in workloads:
        if any((workload.name, level) not in stack for level in ("none", "basic", "full")):
            continue  # --configs left the plugin's runs out
        executed, none = stack[workload.name, "none"]
        basic = stack[workload.name, "basic"][1]
        full = stack[workload.name, "full"][1]
        # A threaded program's stack hits vary a little from run to run (the
        # shadow of other threads' stacks is counted at exit as other
        # memory): more hits with full than with none is that noise.
        removed = f"{max(0.0, 100 * (1 - full / none)):.1f}%" if none else "-"
        lines.append(f"| {workload.name} | {executed:,} | {none:,} | {basic:,} | {full:,} | "
                     f"{removed} |")
    publish("\n".join(lines) + "\n", args.output)
    return 0


if __name__ == "__main__":
    sys.exit(main())
