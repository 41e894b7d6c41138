"""Test programs built and run as a user builds and runs them: gcc with
-fplugin=$(pkg-config --variable=plugin memprof) and $(pkg-config --cflags
--libs memprof), from the build tree's memprof-uninstalled.pc; run with
MEMPROF_OPTIONS=profile_file=... so that the profile has a known name."""

import os
import subprocess


def build(top, source, output, compiler="gcc", flags=()):
    """Build SOURCE into OUTPUT with the plugin and the runtime of the tree
    TOP; the CompletedProcess (returncode 0 when OUTPUT is made, stderr
    saying why not)."""
    env = dict(os.environ, PKG_CONFIG_PATH=top)
    config = subprocess.run(["pkg-config", "--cflags", "--libs", "memprof"],
                            capture_output=True, text=True, env=env)
    plugin = subprocess.run(["pkg-config", "--variable=plugin", "memprof"],
                            capture_output=True, text=True, env=env)
    if config.returncode != 0 or plugin.returncode != 0:
        config.returncode = config.returncode or plugin.returncode
        config.stderr = "pkg-config memprof: " + config.stderr + plugin.stderr
        return config
    return subprocess.run(
        [compiler, *flags, "-fplugin=" + plugin.stdout.strip(), source,
         "-o", output, *config.stdout.split()],
        capture_output=True, text=True)


def side_file_of(profile):
    """The side file the runtime writes next to PROFILE
    (formats/extraformat.h, memprof_extra_path): the last "profraw" of the
    file name becomes "extra", or ".extra" is appended."""
    directory, name = os.path.split(profile)
    at = name.rfind("profraw")
    name = name[:at] + "extra" + name[at + 7:] if at >= 0 else name + ".extra"
    return os.path.join(directory, name)


def run_profiled(program, profile, args=(), options=""):
    """Run PROGRAM with ARGS, its profile written to PROFILE (and its side
    file next to it: side_file_of); OPTIONS are more MEMPROF_OPTIONS."""
    value = "profile_file=" + profile + (":" + options if options else "")
    return subprocess.run([program, *args], capture_output=True, text=True,
                          env=dict(os.environ, MEMPROF_OPTIONS=value))
