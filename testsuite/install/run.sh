#!/usr/bin/env bash
# `make install` as a user does it: a fresh copy of the tracked tree,
# ./configure --prefix, make, make install with and without DESTDIR; then a
# program built with `pkg-config --cflags --libs memprof` from the installed
# memprof.pc runs and writes a profile.  Ends with `install: N passed, N failed`.
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
work=$top/testsuite/install/work
rm -rf "$work"
mkdir -p "$work/src"
passed=0
failed=0
check() { # check NAME COMMAND...
  local name=$1
  shift
  if "$@" >"$work/last.log" 2>&1; then
    passed=$((passed + 1))
    echo "PASS: $name"
  else
    failed=$((failed + 1))
    echo "FAIL: $name"
    sed 's/^/    /' "$work/last.log" | tail -20
  fi
}

(cd "$top" && git ls-files -z | xargs -0 tar cf - | tar xf - -C "$work/src") 2>/dev/null \
  || (cd "$top" && tar cf - --exclude=work --exclude='*.o' . | tar xf - -C "$work/src")
prefix=$work/prefix
cd "$work/src" || exit 1
check "configure --prefix" ./configure --prefix="$prefix"
check "make -j2" make -j2
check "make install" make install
for file in bin/memprof lib/libmemprof.so lib/libmemprof.a lib/pkgconfig/memprof.pc lib/gcc-memprof/memprof.so \
  include/memprof/interface.h include/memprof/abi.h include/memprof/heap.h \
  share/doc/gcc-memprof/manual.md share/doc/gcc-memprof/heaps.md \
  share/gcc-memprof/dejagnu/lib/memprof.exp share/gcc-memprof/dejagnu/config/unix.exp; do
  check "installed $file" test -f "$prefix/$file"
done
check "make install DESTDIR" make install DESTDIR="$work/stage"
check "DESTDIR holds the prefix tree" test -f "$work/stage$prefix/lib/libmemprof.so"
check "DESTDIR leaves the prefix alone" test ! -e "$work/stage/lib"

cat >"$work/hello.c" <<'EOC'
#include <stdio.h>
#include <stdlib.h>
#include <memprof/interface.h>
#include <memprof/heap.h>
int main (void) { char *p = malloc (10); p[0] = 'x'; printf ("%c\n", p[0]); free (p);
  if (memprof_heap_register ("installed") == 0) return 2;
  char depth[8]; memprof_get_option ("max_stack_depth", depth, sizeof depth);
  return depth[0] == '3' ? 0 : 1; }
EOC
flags=$(PKG_CONFIG_PATH=$prefix/lib/pkgconfig pkg-config --cflags --libs memprof)
plugin=$(PKG_CONFIG_PATH=$prefix/lib/pkgconfig pkg-config --variable=plugin memprof)
check "pkg-config finds the installed memprof.pc" test -n "$flags"
check "pkg-config names the installed plugin" test "$plugin" = "$prefix/lib/gcc-memprof/memprof.so"
check "a program builds with the installed plugin and runtime" \
  gcc -g -fplugin="$plugin" "$work/hello.c" -o "$work/hello" $flags
check "it runs from the installed library" \
  bash -c "cd '$work' && MEMPROF_OPTIONS=profile_file=hello.prof:print_text=1 ./hello 2>err && ldd ./hello | grep -q '$prefix/lib/libmemprof.so' && test -s hello.prof"
check "the installed plugin counted the program's accesses (2 to the 10-byte block)" \
  grep -q "access_count (ave/min/max): 2.00 / 2 / 2" "$work/err"
check "the installed memprof reads the profile and symbolizes it" \
  bash -c "'$prefix/bin/memprof' show --binary='$work/hello' '$work/hello.prof' | grep -q 'main (.*hello.c:'"
check "the installed memprof reports its version" \
  bash -c "'$prefix/bin/memprof' --version | grep -q 'GCC MemProf'"
# docs/testing.md's example, taken from the page, in a scratch directory,
# against the installed tree: setup, the test files, the run.
scratch=$work/dejagnu
mkdir -p "$scratch"
check "docs/testing.md has the example's setup, files and run" \
  python3 - "$top/docs/testing.md" "$scratch" <<'EOP'
import os, re, sys
text = open(sys.argv[1]).read()
os.chdir(sys.argv[2])
blocks = re.findall(r"<!-- testing.md: (setup|file|run) ?(\S*) -->\n```\w*\n(.*?)```", text, re.S)
for kind, name, body in blocks:
    name = name if kind == "file" else kind + ".sh"
    os.makedirs(os.path.dirname(name) or ".", exist_ok=True)
    open(name, "w").write(body)
sys.exit(0 if {k for k, _, _ in blocks} == {"setup", "file", "run"} else 1)
EOP
check "docs/testing.md's setup links the installed procs" \
  bash -c "cd '$scratch' && PKG_CONFIG_PATH='$prefix/lib/pkgconfig' sh -e setup.sh && test -f testsuite/lib/memprof.exp"
check "docs/testing.md's test runs with runtest and passes" \
  bash -c "cd '$scratch' && PATH='$prefix/bin:$PATH' sh -e run.sh && grep -q 'expected passes.*6' build/memprof.sum && ! grep -qE '^(FAIL|UNRESOLVED|ERROR)' build/memprof.sum"
check "the test used the installed plugin" \
  grep -q "$prefix/lib/gcc-memprof/memprof.so" "$scratch/build/memprof.log"

# The example modules (docs/modules.md): installed, built with one gcc
# -shared command against the installed header, run on a program built
# with the installed plugin and the module's installed events file.
modules=$prefix/share/gcc-memprof/modules
check "the example modules are installed" \
  test -f "$modules/dependences.c" -a -f "$modules/lifetime.c" -a -f "$modules/common.h" -a -f "$modules/dependences.events"
cflags=$(PKG_CONFIG_PATH=$prefix/lib/pkgconfig pkg-config --cflags memprof)
check "the installed dependences module builds with one gcc -shared command" \
  gcc -shared -fPIC -O2 $cflags -o "$work/dependences.so" "$modules/dependences.c"
check "a program built with the installed plugin and @dependences.events" \
  gcc -g -O1 -fno-tree-vectorize -fplugin="$plugin" -fplugin-arg-memprof-events=@"$modules/dependences.events" \
    "$top/testsuite/modules/dependences_program.c" -o "$work/deps" $flags
check "the installed module finds the program's loop-carried dependence (98)" \
  bash -c "cd '$work' && MEMPROF_OPTIONS=module=./dependences.so:module_workers=2:module_args=out=deps.txt ./deps && grep -P '\tloop-carried\t.*\t98$' deps.txt"
check "the installed memprof shows it" \
  bash -c "'$prefix/bin/memprof' module-show '$work/deps.txt' | grep -q carried"

check "make uninstall" make uninstall
check "uninstall removed the library" test ! -e "$prefix/lib/libmemprof.so"
check "uninstall removed the command" test ! -e "$prefix/bin/memprof"
check "uninstall removed the headers" test ! -e "$prefix/include/memprof/heap.h"
check "uninstall removed the example modules" test ! -e "$modules"
check "uninstall removed the DejaGnu procs" test ! -e "$prefix/share/gcc-memprof/dejagnu/lib/memprof.exp"
echo "install: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
