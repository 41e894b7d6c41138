#!/usr/bin/env python3
"""Debian source packages for the benchmarks: real programs nobody here
wrote (Lua, cJSON, ...), fetched with `apt-get source` from Debian's
archive and unpacked under bench/work/debsrc/.

The fetch uses a private deb-src list and private apt state (under
bench/work/debsrc/apt), so the system's apt configuration is never
touched and no root is needed; the lists are read once and reused.  A
package already unpacked is not fetched again.  MEMPROF_DEBSRC=DIR makes
DIR the place to look for (and unpack) the trees instead, e.g. for a
machine with no access to the archive that was given the trees by hand.

As a module:   debsrc.fetch("lua5.4", "src/lapi.c", who="bench")
               -> the unpacked tree's directory (the one holding the file)
As a command:  bench/debsrc.py PACKAGE...   (fetch ahead, print the trees)

Errors (no apt-get, the archive unreachable, a package without the file
the caller needs) exit with a message naming the package and what to do.

The build of each program is its user's: bench/workloads.py says which
files of a tree a workload is built from and with which flags."""

import glob
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
DEB_SRC = "deb-src http://deb.debian.org/debian bookworm main\n"


def directory():
    """Where the trees are unpacked."""
    return os.environ.get("MEMPROF_DEBSRC") or os.path.join(HERE, "work", "debsrc")


def _apt_options(apt):
    return ["-o", f"Dir::Etc::SourceList={apt}/sources.list",
            "-o", "Dir::Etc::SourceParts=/nonexistent",
            "-o", f"Dir::State::Lists={apt}/lists", "-o", f"Dir::Cache={apt}/cache"]


def _run(command, who, package, cwd=None):
    try:
        result = subprocess.run(command, capture_output=True, text=True, cwd=cwd)
    except OSError as error:
        sys.exit(f"{who}: cannot fetch the Debian source package {package}: "
                 f"{command[0]}: {error.strerror} (install apt and dpkg-dev, or set "
                 "MEMPROF_DEBSRC to a directory holding the unpacked tree)")
    if result.returncode != 0:
        sys.exit(f"{who}: cannot fetch the Debian source package {package}: "
                 f"`{' '.join(command[:1] + command[-2:])}` failed (exit "
                 f"{result.returncode}): {result.stderr.strip()[-600:]}\n"
                 f"{who}: it needs Debian's archive (deb.debian.org), or set "
                 "MEMPROF_DEBSRC to a directory holding the unpacked tree")


def _find(where, package, marker):
    """The tree of PACKAGE under WHERE that holds MARKER (a path inside it)."""
    for tree in sorted(glob.glob(os.path.join(where, glob.escape(package) + "-*"))):
        if os.path.isfile(os.path.join(tree, marker)):
            return tree
    return None


def fetch(package, marker, who="bench"):
    """The directory of PACKAGE's unpacked source tree, which holds the file
    MARKER (a path relative to the tree); fetched the first time."""
    where = directory()
    tree = _find(where, package, marker)
    if tree:
        return tree
    apt = os.path.join(where, "apt")
    os.makedirs(os.path.join(apt, "lists", "partial"), exist_ok=True)
    os.makedirs(os.path.join(apt, "cache", "archives", "partial"), exist_ok=True)
    with open(os.path.join(apt, "sources.list"), "w") as out:
        out.write(DEB_SRC)
    options = _apt_options(apt)
    if not glob.glob(os.path.join(apt, "lists", "*Sources*")):
        print(f"{who}: reading Debian's source lists", file=sys.stderr, flush=True)
        _run(["apt-get", *options, "update"], who, package)
    print(f"{who}: apt-get source {package}", file=sys.stderr, flush=True)
    _run(["apt-get", *options, "source", package], who, package, cwd=where)
    tree = _find(where, package, marker)
    if not tree:
        sys.exit(f"{who}: apt-get source {package} left no {marker} under {where}")
    return tree


def main():
    if len(sys.argv) < 2 or sys.argv[1] in ("-h", "--help"):
        print("usage: bench/debsrc.py PACKAGE...  (fetch Debian source packages "
              f"into {directory()})")
        return 0 if len(sys.argv) > 1 else 2
    for package in sys.argv[1:]:
        # Any file: debian/control is in every Debian source tree.
        print(fetch(package, os.path.join("debian", "control"), "debsrc"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
