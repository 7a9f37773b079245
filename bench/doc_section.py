"""Imported by the bench scripts' Python (PYTHONPATH=bench): their markdown sections of
docs/benchmarks.md, printed and, with --write, put in place."""


def publish(doc, heading, section, write):
    """Prints `section`; when `write` is "--write", it also replaces the section of `doc` that
    starts with the line `heading` (up to the next "## " heading), or is appended when there is
    none yet."""
    if write == "--write":
        text = open(doc).read()
        start = text.find(heading)
        if start >= 0:
            nxt = text.find("\n## ", start + 1)
            text = text[:start] + section + (text[nxt + 1:] if nxt >= 0 else "")
        else:
            text = text.rstrip("\n") + "\n\n" + section
        open(doc, "w").write(text)
    print(section)
