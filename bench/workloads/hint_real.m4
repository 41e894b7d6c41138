divert(-1)
# The workload of bench/hint_real.py for Debian's m4: macros defined and
# redefined, strings grown by recursion, a table of definitions kept to
# the end.  ROUNDS is given with -D.
define(`forloop', `pushdef(`$1', `$2')_forloop($@)popdef(`$1')')
define(`_forloop', `$4`'ifelse($1, `$3', `', `define(`$1', incr($1))$0($@)')')
forloop(`i', 1, 2000, `define(`entry'i, `value number 'i` of the table')')
define(`grow', `ifelse($1, 0, `$2', `grow(decr($1), `$2'`$2')')')
define(`work', `define(`acc', `')forloop(`j', 1, 40, `define(`acc', acc`'entry$1`'j)')len(acc)')
divert(0)dnl
forloop(`r', 1, ROUNDS, `work(r) len(grow(6, `ab'))
')dnl
entry1
