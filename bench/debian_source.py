"""Debian source packages for the benchmarks: `apt-get source PACKAGE`
with a private sources list (bookworm's deb-src), unpacked once into a
work directory and reused.  Used by bench/hint_real.py.

    source_tree(package, work, marker) -> the unpacked tree's directory,
    the one holding MARKER (a path relative to it, e.g. "src/lua.c")."""

import glob
import os
import subprocess
import sys

DEB_SRC = "deb-src http://deb.debian.org/debian bookworm main\n"


def _run(command, cwd=None):
    result = subprocess.run(command, capture_output=True, text=True, cwd=cwd)
    if result.returncode != 0:
        sys.exit(f"debian_source: {' '.join(command)} failed (exit {result.returncode}): "
                 f"{result.stderr[-600:]}")


def source_tree(package, work, marker):
    pattern = os.path.join(work, f"{package}-*", marker)
    found = glob.glob(pattern)
    if not found:
        apt = os.path.join(work, "apt")
        os.makedirs(os.path.join(apt, "lists", "partial"), exist_ok=True)
        os.makedirs(os.path.join(apt, "cache"), exist_ok=True)
        with open(os.path.join(apt, "sources.list"), "w") as out:
            out.write(DEB_SRC)
        options = ["-o", f"Dir::Etc::SourceList={apt}/sources.list",
                   "-o", "Dir::Etc::SourceParts=/nonexistent",
                   "-o", f"Dir::State::Lists={apt}/lists", "-o", f"Dir::Cache={apt}/cache"]
        if not os.path.exists(os.path.join(apt, "updated")):
            _run(["apt-get", *options, "update"])
            open(os.path.join(apt, "updated"), "w").close()
        _run(["apt-get", *options, "source", package], cwd=work)
        found = glob.glob(pattern)
    if not found:
        sys.exit(f"debian_source: apt-get source {package} left no {marker} in {work}")
    return os.path.abspath(found[0])[: -len(marker)].rstrip("/")
