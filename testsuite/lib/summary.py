#!/usr/bin/env python3
"""Sum the closing lines of the suites' logs (`NAME: N passed, N failed`,
and Check's `P%: Checks: N, Failures: F, Errors: E`) into one closing line
for `make check`; a log with no closing line counts as one failure.

The failures are named again just above that line (the log, then each
`FAIL:` line, DejaGnu's `FAIL:`/`UNRESOLVED:` and Check's `:F:`/`:E:`
lines), so that the last lines of a long `make check` say what failed."""

import re
import sys

FAILURE = re.compile(r"^(?:FAIL|UNRESOLVED|XPASS|ERROR)\b|:[FE]:", re.M)

passed = failed = 0
named = []
for log in sys.argv[1:]:
    try:
        text = open(log, errors="replace").read()
    except OSError:
        text = ""
    plain = re.findall(r"^(?:[\w-]+: )?(\d+) passed, (\d+) failed", text, re.M)
    check = re.findall(r"^\d+%: Checks: (\d+), Failures: (\d+), Errors: (\d+)", text, re.M)
    if plain:
        passed += int(plain[-1][0])
        failed += int(plain[-1][1])
        count = int(plain[-1][1])
    elif check:
        total, failures, errors = map(int, check[-1])
        passed += total - failures - errors
        failed += failures + errors
        count = failures + errors
    else:
        named.append(f"summary: {log} has no closing line: that suite did not finish")
        failed += 1
        continue
    if count:
        lines = [line for line in text.splitlines() if FAILURE.search(line)]
        named.append(f"summary: {log}: {count} failed")
        named.extend(f"  {line[:300]}" for line in lines[:20])
        if len(lines) > 20:
            named.append(f"  ... and {len(lines) - 20} more lines in {log}")
for line in named:
    print(line)
print(f"check: {passed} passed, {failed} failed")
