"""Reading what `llvm-profdata-19 show --memory` prints: the distinct
allocation sites, each as (frames, MemInfoBlock fields), frames leaf first
as (symbol, line offset, column); and checking them against the
`expect:` lines of a test program.  Used by the tests and by the demo."""

import re


def alloc_sites(yaml_text):
    sites = set()
    state = None  # None, "callstack" or "mib"
    frames, mib, frame = [], {}, {}
    mib_indent = None  # the indentation of the MemInfoBlock's fields

    def finish():
        if frames or mib:
            sites.add((tuple(frames), tuple(sorted(mib.items()))))

    for raw in yaml_text.splitlines():
        line = raw.strip()
        indent = len(raw) - len(raw.lstrip())
        if state == "mib" and mib_indent is not None and indent < mib_indent:
            finish()
            frames, mib, state = [], {}, None
        if line == "Callstack:":
            finish()
            frames, mib, frame, state = [], {}, {}, "callstack"
        elif line == "MemInfoBlock:":
            state, mib_indent = "mib", None
        elif line in ("CallSites:", "Records:", "AllocSites:"):
            finish()
            frames, mib, state = [], {}, None
        elif state == "callstack" and ":" in line:
            key, value = [part.strip() for part in line.lstrip("- ").split(":", 1)]
            frame[key] = value
            if key == "Inline":
                frames.append((frame.get("SymbolName", "?"),
                               int(frame.get("LineOffset", -1)),
                               int(frame.get("Column", -1))))
                frame = {}
        elif state == "mib" and ":" in line and not line.startswith("-"):
            if mib_indent is None:
                mib_indent = indent
            key, value = [part.strip() for part in line.split(":", 1)]
            if value.isdigit():
                mib[key] = int(value)
    finish()
    return [(list(f), dict(m)) for f, m in sites]


def parse_expectations(source):
    """`expect: f:1:2 g:3:4 count=N accesses=M size=S` lines of SOURCE."""
    expectations = []
    for line in open(source):
        match = re.search(r"expect:\s*(.*?)\s*(\*/)?$", line)
        if not match:
            continue
        frames, fields = [], {}
        for word in match.group(1).split():
            if "=" in word:
                key, value = word.split("=", 1)
                fields[key] = int(value)
            else:
                name, offset, column = word.split(":")
                frames.append((name, int(offset), int(column)))
        expectations.append((frames, fields))
    return expectations


def check_expectation(sites, frames, fields, accesses_counted):
    """Sum the sites whose stack starts with FRAMES; compare with FIELDS."""
    total = {"count": 0, "accesses": 0, "size": 0}
    for site_frames, mib in sites:
        if site_frames[: len(frames)] == frames:
            total["count"] += mib.get("AllocCount", 0)
            total["accesses"] += mib.get("TotalAccessCount", 0)
            total["size"] += mib.get("TotalSize", 0)
    wanted = dict(fields)
    if not accesses_counted:
        wanted["accesses"] = 0
    problems = [f"{key} {total[key]} (expected {value})"
                for key, value in wanted.items() if total[key] != value]
    if total["count"] == 0:
        near = [f for f, _ in sites if f and f[0][0] == frames[0][0]]
        return f"no allocation site starts with {frames}; sites in {frames[0][0]}: {near}"
    return "; ".join(problems)
