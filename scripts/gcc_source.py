"""Files from Debian's gcc-12-source: the tarball under /usr/src/gcc-12,
extracted once per directory into a cache and extracted again when the
tarball changes.  Used by the torture driver (gcc.c-torture/execute) and
by the benchmarks (zlib and libiberty, real code built with the plugin)."""

import glob
import os
import re
import shutil
import subprocess
import tempfile

PACKAGE = "gcc-12-source"
TARBALLS = "/usr/src/gcc-12/gcc-12*.tar.*"


class Missing(Exception):
    pass


def find_tarball():
    for path in sorted(glob.glob(TARBALLS)):
        if re.search(r"/gcc-12[.\d]*(-dfsg)?\.tar\.\w+$", path):
            return path
    return None


def extract(cache, directories, who):
    """The files of the directories DIRECTORIES (paths inside the source tree, such as
    "zlib" or "gcc/testsuite/gcc.c-torture/execute") as one tree under
    CACHE, extracting them the first time and again when the tarball
    changes.  Returns CACHE.  WHO names the caller in messages."""
    tarball = find_tarball()
    if tarball is None:
        raise Missing(f"{who}: no GCC 12 source tarball matches {TARBALLS}: install the "
                      f"Debian package {PACKAGE} (apt-get install {PACKAGE}, or "
                      f"scripts/install-deps)")
    info = os.stat(tarball)
    want = f"{tarball} {info.st_size} {int(info.st_mtime)} {' '.join(directories)}\n"
    stamp = os.path.join(cache, "stamp")
    try:
        if open(stamp).read() == want:
            return cache
    except OSError:
        pass
    print(f"{who}: extracting {', '.join(directories)} from {tarball} into {cache}",
          flush=True)
    os.makedirs(os.path.dirname(os.path.abspath(cache)), exist_ok=True)
    shutil.rmtree(cache, ignore_errors=True)
    scratch = tempfile.mkdtemp(prefix="src.", dir=os.path.dirname(os.path.abspath(cache)))
    try:
        # The files directly in each directory, not its subdirectories.
        subprocess.run(["tar", "-xf", tarball, "-C", scratch, "--wildcards",
                        "--no-wildcards-match-slash",
                        *[f"*/{directory}/*" for directory in directories]], check=True)
        roots = glob.glob(os.path.join(scratch, "gcc-12*"))
        if len(roots) != 1:
            raise Missing(f"{who}: {tarball} does not hold one gcc-12 source tree")
        for directory in directories:
            if not os.path.isdir(os.path.join(roots[0], directory)):
                raise Missing(f"{who}: {tarball} holds no {directory} directory")
        os.rename(roots[0], cache)
        with open(stamp, "w") as out:
            out.write(want)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return cache
