#!/usr/bin/env python3
"""Sum the closing lines of the suites' logs (`NAME: N passed, N failed`,
and Check's `P%: Checks: N, Failures: F, Errors: E`) into one closing line
for `make check`; a log with no closing line counts as one failure."""

import re
import sys

passed = failed = 0
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
    elif check:
        total, failures, errors = map(int, check[-1])
        passed += total - failures - errors
        failed += failures + errors
    else:
        print(f"summary: {log} has no closing line: that suite did not finish")
        failed += 1
print(f"check: {passed} passed, {failed} failed")
