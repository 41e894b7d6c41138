#!/usr/bin/env python3
"""memprof merge at scale: 10, 100 and 1,000 raw profiles (with side
files) of 10,000 contexts each, drawn from one pool of 20,000 call stacks
(bench/gen_profiles.c), merged into one .mprof file.  For each: the input
bytes, the wall time, the peak RSS of memprof (wait4), the contexts and
bytes of the result.  The peak RSS must stay flat as the inputs grow a
hundredfold: memory is bounded by the merged result, not by the inputs.
Writes bench/results/merge-scale.md and prints it."""

import argparse
import os
import shutil
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(HERE)
WORK = os.path.join(HERE, "work", "merge-scale")
MEMPROF = os.path.join(TOP, "analysis", "memprof")


def human(count):
    for unit in ("B", "KiB", "MiB", "GiB"):
        if count < 1024 or unit == "GiB":
            return f"{count:.0f} {unit}" if unit == "B" else f"{count:.1f} {unit}"
        count /= 1024


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--profiles", type=int, default=1000)
    parser.add_argument("--contexts", type=int, default=10000)
    parser.add_argument("--pool", type=int, default=20000)
    parser.add_argument("--keep", action="store_true", help="keep the generated profiles")
    args = parser.parse_args()
    shutil.rmtree(WORK, ignore_errors=True)
    os.makedirs(WORK)
    generator = os.path.join(WORK, "gen_profiles")
    subprocess.run(["gcc", "-std=gnu11", "-O2", "-I" + os.path.join(TOP, "include"),
                    "-I" + os.path.join(TOP, "runtime"), "-I" + os.path.join(TOP, "formats"),
                    os.path.join(HERE, "gen_profiles.c"),
                    os.path.join(TOP, "runtime", "rawwriter.c"),
                    os.path.join(TOP, "formats", "mib.c"), "-o", generator], check=True)
    inputs = os.path.join(WORK, "inputs")
    os.makedirs(inputs)
    start = time.perf_counter()
    subprocess.run([generator, inputs, str(args.profiles), str(args.contexts), str(args.pool)],
                   check=True)
    print(f"merge_scale: wrote {args.profiles} profiles in {time.perf_counter() - start:.0f} s",
          file=sys.stderr)
    names = sorted(os.path.join(inputs, n) for n in os.listdir(inputs) if n.endswith(".profraw"))

    lines = [f"memprof merge of raw profiles of {args.contexts:,} contexts each (from a pool of "
             f"{args.pool:,} call stacks), with side files; one run each",
             "", "| profiles | input bytes | wall time | peak RSS of memprof | contexts merged "
             "| .mprof bytes |", "|---|---|---|---|---|---|"]
    counts = sorted({c for c in (10, 100, args.profiles) if c <= args.profiles})
    for count in counts:
        listing = os.path.join(WORK, f"list.{count}")
        with open(listing, "w") as out:
            out.write("\n".join(names[:count]) + "\n")
        size = sum(os.path.getsize(n) + os.path.getsize(n + ".extra") for n in names[:count])
        output = os.path.join(WORK, f"merged.{count}.mprof")
        start = time.perf_counter()
        process = subprocess.Popen([MEMPROF, "merge", "--quiet", "--inputs=" + listing, "-o",
                                    output])
        _, status, usage = os.wait4(process.pid, 0)
        seconds = time.perf_counter() - start
        if os.waitstatus_to_exitcode(status) != 0:
            sys.exit(f"merge_scale: memprof merge of {count} profiles failed")
        shown = subprocess.run([MEMPROF, "show", "--format=json", "--top=1", output],
                               capture_output=True, text=True, check=True).stdout
        contexts = int(shown.split('"contexts": ')[1].split(",")[0])
        lines.append(f"| {count:,} | {human(size)} | {seconds:.1f} s | "
                     f"{human(usage.ru_maxrss * 1024)} | {contexts:,} | "
                     f"{human(os.path.getsize(output))} |")
    text = "\n".join(lines) + "\n"
    print(text)
    os.makedirs(os.path.join(HERE, "results"), exist_ok=True)
    with open(os.path.join(HERE, "results", "merge-scale.md"), "w") as out:
        out.write(text)
    if not args.keep:
        shutil.rmtree(inputs, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
