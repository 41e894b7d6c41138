"""The benchmark workloads (bench/workloads/): which source each is, the
argument that scales it, and the real code from Debian's gcc-12-source
some of them are built with.  Used by run.py, sampling.py and
stack_analysis.py."""

import glob
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(TOP, "scripts"))
import gcc_source  # noqa: E402

SOURCES = os.path.join(HERE, "work", "src")

ZLIB = ["adler32", "compress", "crc32", "deflate", "inffast", "inflate", "inftrees",
        "trees", "uncompr", "zutil"]
LIBIBERTY_DEFINES = ["-DHAVE_STDLIB_H", "-DHAVE_STRING_H", "-DHAVE_LIMITS_H",
                     "-DHAVE_STDINT_H", "-DHAVE_INTTYPES_H"]


class Workload:
    def __init__(self, name, source, scale, small, quick=False, gcc_dirs=(), extra=(),
                 flags=()):
        self.name = name
        self.source = os.path.join(HERE, "workloads", source)
        self.cxx = source.endswith(".cc")
        self.scale = scale              # about a second natively
        self.small = small              # about a tenth of that
        self.quick = quick              # in make bench-quick
        self.gcc_dirs = list(gcc_dirs)  # directories of gcc-12-source it needs
        self.extra = list(extra)        # their files it is built with
        self.flags = list(flags)        # -I and -D for them ({src}: where they are)

    def sources(self, src):
        """The files to compile, given SRC from prepare()."""
        return [self.source, *[os.path.join(src, path) for path in self.extra]]

    def compile_flags(self, src):
        return [flag.replace("{src}", src) for flag in self.flags]


# The scales make each run take about a second natively on this machine.
WORKLOADS = [
    Workload("binary_trees", "binary_trees.c", 0.3, 0.03, quick=True),
    Workload("hash_churn", "hash_churn.c", 0.45, 0.05),
    Workload("json_tree", "json_tree.c", 0.4, 0.05, quick=True),
    Workload("strings", "strings.c", 0.6, 0.06),
    Workload("producer_consumer", "producer_consumer.c", 0.45, 0.05, quick=True),
    Workload("containers", "containers.cc", 0.6, 0.06, quick=True),
    Workload("zlib_roundtrip", "zlib_roundtrip.c", 0.8, 0.1, gcc_dirs=["zlib"],
             extra=[f"zlib/{name}.c" for name in ZLIB], flags=["-I{src}/zlib"]),
    Workload("libiberty_symtab", "libiberty_symtab.c", 0.55, 0.06,
             gcc_dirs=["libiberty", "include"],
             extra=["libiberty/hashtab.c", "libiberty/splay-tree.c"],
             flags=["-I{src}/include", *LIBIBERTY_DEFINES]),
    # A recursive-descent parser that allocates: GCC's C++ demangler.
    Workload("libiberty_demangle", "libiberty_demangle.c", 2.2, 0.25,
             gcc_dirs=["libiberty", "include"], extra=["libiberty/cp-demangle.c"],
             flags=["-I{src}/include", *LIBIBERTY_DEFINES]),
]


def prepare(who):
    """The directory of the gcc-12-source files the workloads need
    (extracted the first time).  Exits with a message naming the missing
    package."""
    directories = sorted({d for w in WORKLOADS for d in w.gcc_dirs})
    try:
        return gcc_source.extract(SOURCES, directories, who)
    except (gcc_source.Missing, subprocess.CalledProcessError) as error:
        sys.exit(f"{who}: {error}")


def small_programs(who):
    """The examples and the workloads at their small scale, for the
    benchmarks that build many variants: (name, files, flags, arguments)."""
    src = prepare(who)
    programs = [(os.path.basename(path), [path], [], [])
                for path in sorted(glob.glob(os.path.join(TOP, "examples", "*.c*")))]
    programs += [(w.name, w.sources(src), w.compile_flags(src), [str(w.small)])
                 for w in WORKLOADS]
    programs.append(("local_buffers", [os.path.join(HERE, "workloads", "local_buffers.c")],
                     [], []))
    return programs
