"""Pass/fail bookkeeping for the Python test drivers: one line per check,
then a closing `NAME: N passed, N failed` line."""


class Report:
    def __init__(self, suite):
        self.suite = suite
        self.passed = 0
        self.failed = 0

    def check(self, ok, name, detail=""):
        if ok:
            self.passed += 1
            print(f"PASS: {name}")
        else:
            self.failed += 1
            print(f"FAIL: {name}" + (f": {detail}" if detail else ""))
        return ok

    def finish(self):
        print(f"{self.suite}: {self.passed} passed, {self.failed} failed")
        return 1 if self.failed else 0
