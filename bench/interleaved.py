"""What the benchmarks that time configurations side by side, in turn,
share (malloc_overhead.py, stack_depth.py): the program built without
and with the runtime, one run's CPU time, the removal of the profiles
the runs left, and the table printed and written to bench/results/."""

import os
import resource
import subprocess

from run import pkg_config

HERE = os.path.dirname(os.path.abspath(__file__))


def build_without_and_with_runtime(cc, source, name):
    """SOURCE (in bench/) built by CC into bench/work/NAME and, linked with
    libmemprof.so, NAME.memprof, at -O2 with frame pointers everywhere (so
    that both unwinders see whole stacks): (the work folder, the two
    programs)."""
    work = os.path.join(HERE, "work")
    os.makedirs(work, exist_ok=True)
    plain = os.path.join(work, name)
    linked = plain + ".memprof"
    for output, extra in ((plain, []), (linked, pkg_config("--cflags") + pkg_config("--libs"))):
        subprocess.run([cc, "-O2", "-g", "-fno-omit-frame-pointer", os.path.join(HERE, source),
                        "-o", output, *extra], check=True)
    return work, plain, linked


def timed_run(command, env):
    """Run COMMAND with the environment ENV, its output captured: (the
    finished process, the CPU time (user + sys) of it and the children it
    waited for, in seconds)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    result = subprocess.run(command, capture_output=True, text=True, env=env)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return result, (after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)


def remove_profiles(work, prefix=""):
    """Remove the raw profiles (PREFIX*.profraw) the runs left in WORK."""
    for leftover in os.listdir(work):
        if leftover.startswith(prefix) and leftover.endswith(".profraw"):
            os.unlink(os.path.join(work, leftover))


def publish(lines, name):
    """Print LINES and write them to bench/results/NAME."""
    print("\n".join(lines))
    results = os.path.join(HERE, "results")
    os.makedirs(results, exist_ok=True)
    with open(os.path.join(results, name), "w") as out:
        out.write("\n".join(lines) + "\n")
