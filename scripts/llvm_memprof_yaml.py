"""Reading what `llvm-profdata-19 show --memory` prints: the distinct
allocation sites, each as (frames, MemInfoBlock fields), frames leaf first
as (symbol, line offset, column).  Used by the compatibility tests and by
the demo."""


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
