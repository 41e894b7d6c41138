"""The benchmark workloads (bench/workloads/): which source each is, the
argument that scales it, and the real code from Debian's gcc-12-source
some of them are built with, or the Debian source package (fetched by
debsrc.py) a real program is built from.  Used by run.py, sampling.py
and stack_analysis.py."""

import glob
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(TOP, "scripts"))
import gcc_source  # noqa: E402
sys.path.insert(0, HERE)
import debsrc  # noqa: E402

SOURCES = os.path.join(HERE, "work", "src")

ZLIB = ["adler32", "compress", "crc32", "deflate", "inffast", "inflate", "inftrees",
        "trees", "uncompr", "zutil"]
# Lua 5.4's interpreter: the core, the standard libraries and lua.c (not
# luac.c, the compiler's own main).
LUA = ["lapi", "lcode", "lctype", "ldebug", "ldo", "ldump", "lfunc", "lgc", "llex", "lmem",
       "lobject", "lopcodes", "lparser", "lstate", "lstring", "ltable", "ltm", "lundump",
       "lvm", "lzio", "lauxlib", "lbaselib", "lcorolib", "ldblib", "liolib", "lmathlib",
       "loadlib", "loslib", "lstrlib", "ltablib", "lutf8lib", "linit", "lua"]
MULTIARCH = (subprocess.run(["gcc", "-print-multiarch"], capture_output=True, text=True)
             .stdout.strip() or "x86_64-linux-gnu")
LIBIBERTY_DEFINES = ["-DHAVE_STDLIB_H", "-DHAVE_STRING_H", "-DHAVE_LIMITS_H",
                     "-DHAVE_STDINT_H", "-DHAVE_INTTYPES_H"]


class Workload:
    def __init__(self, name, source, scale, small, quick=False, gcc_dirs=(), extra=(),
                 flags=(), debian=None, generated=None, libs=(), arguments=None):
        self.name = name
        self.source = os.path.join(HERE, "workloads", source) if source else None
        self.cxx = bool(source) and source.endswith(".cc")
        self.scale = scale              # about a second natively
        self.small = small              # about a tenth of that
        self.quick = quick              # in make bench-quick
        self.gcc_dirs = list(gcc_dirs)  # directories of gcc-12-source it needs
        self.extra = list(extra)        # their files it is built with
        self.flags = list(flags)        # -I and -D for them ({src}: where they are)
        # Or a Debian source package, (package, a file of it), whose tree
        # is {src} for extra and flags; GENERATED: files its debian/rules
        # writes before the build, {path in the tree: text}.
        self.debian = debian
        self.generated = dict(generated or {})
        self.libs = list(libs)          # linked after the sources
        self.arguments = arguments      # scale -> the command's arguments

    def tree(self, src):
        """Where extra and flags' {src} are: SRC from prepare(), or the
        Debian package's unpacked tree (fetched the first time)."""
        if not self.debian:
            return src
        tree = debsrc.fetch(*self.debian, who=f"bench: {self.name}")
        for path, text in self.generated.items():
            path = os.path.join(tree, path)
            if not os.path.exists(path):
                with open(path, "w") as out:
                    out.write(text)
        return tree

    def sources(self, src):
        """The files to compile, given SRC from prepare()."""
        tree = self.tree(src)
        return ([self.source] if self.source else []) + [
            os.path.join(tree, path) for path in self.extra]

    def compile_flags(self, src):
        tree = self.tree(src)
        return [flag.replace("{src}", tree) for flag in self.flags]

    def command_arguments(self, scale):
        """The program's arguments at SCALE."""
        return self.arguments(scale) if self.arguments else [str(scale)]


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
    # Real programs from Debian source packages, built at -O2 -g
    # -fno-omit-frame-pointer, as a user profiling them would: Lua's
    # interpreter running a script of tables, strings and closures (every
    # object a block from its one allocator function)...
    Workload("lua_tables", None, 2.0, 0.2, debian=("lua5.4", "src/lapi.c"),
             extra=[f"src/{name}.c" for name in LUA], libs=["-lm"],
             flags=["-fno-omit-frame-pointer", "-DLUA_USE_LINUX", "-I{src}/src"],
             generated={"src/lua5.4-deb-multiarch.h":
                        f'#define DEB_HOST_MULTIARCH "{MULTIARCH}"\n'},
             arguments=lambda scale: [os.path.join(HERE, "workloads", "lua_tables.lua"),
                                      str(scale)]),
    # ... and cJSON's recursive-descent parser and its printer on a
    # generated document (the driver of bench-stack-real), 2000 records
    # parsed and printed 80 times at scale 1.
    Workload("cjson_parse", "../realprog/cjson_driver.c", 1.0, 0.1,
             debian=("cjson", "cJSON.c"), extra=["cJSON.c"],
             flags=["-fno-omit-frame-pointer", "-I{src}"],
             arguments=lambda scale: ["2000", str(max(1, round(80 * scale)))]),
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
    programs += [(w.name, w.sources(src) + w.libs, w.compile_flags(src),
                  w.command_arguments(w.small)) for w in WORKLOADS]
    programs.append(("local_buffers", [os.path.join(HERE, "workloads", "local_buffers.c")],
                     [], []))
    return programs
