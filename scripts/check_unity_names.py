#!/usr/bin/env python3
"""check_unity_names: no two source files of one folder define the same file-local name.

`make run` builds the daemon as a unity build (CMAKE_UNITY_BUILD, docs/development.md): CMake
pastes a target's .cc files into a few translation units, so two files that each define a helper
of the same name in an anonymous namespace (or `static`) stop compiling there, although the
ordinary build (make test, CI) is fine. This check, run by `make layering` in CI, finds such
pairs first: for every folder of src/ and tools/, the names that two of its non-test .cc files
define at namespace scope (functions, constants, variables, types, aliases), printed as
`name: file:line, file:line`. An alias defined by the very same line in both files (`using
tcp = asio::ip::tcp;`) is allowed: the unity build accepts a repeated alias of one type.
Give one of the two another name, or move the shared helper into a header (render/number_text.h).
Exit status 1 when a pair is found.
"""
import collections
import os
import re
import sys

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
DECL = re.compile(
    r"^(?:static\s+|inline\s+|constexpr\s+|const\s+|extern\s+|thread_local\s+)*"
    r"(?:[\w:<>,]+(?:\s*[*&]+)?\s+)+[*&]*(\w+)\s*(\(|=|\{|\[|;)")
ATTRIBUTES = re.compile(r"^(?:\[\[[^\]]*\]\]\s*)+")
NAMESPACE = re.compile(r"namespace\s*([\w:]*)\s*\{\s*(//.*)?$")
TYPE = re.compile(r"(?:class|struct|union|enum(?:\s+class)?)\s+(\w+)\s*[:{]")
ALIAS = re.compile(r"using\s+(\w+)\s*=")
SKIP_START = ("namespace", "template", "return", "case", "default", "extern \"C\"", "typedef",
              "public", "private", "protected")


def definitions(path):
    """(namespace, name, line number, line text, file-local) of each column-0 definition."""
    out = []
    spaces = []  # the enclosing namespaces: a name, or "" for an anonymous one
    with open(path, encoding="utf-8", errors="replace") as f:
        for number, line in enumerate(f, 1):
            text = line.rstrip("\n")
            m = NAMESPACE.match(text)
            if m:
                spaces.append(m.group(1) or "")
                continue
            if text.startswith("}") and "// namespace" in text and spaces:
                spaces.pop()
                continue
            if not text or text[0] in " \t#/}":
                continue
            text = ATTRIBUTES.sub("", text)  # [[nodiscard]], [[maybe_unused]] before a definition
            local = "" in spaces or text.startswith("static ")
            where = "::".join(s or "{anonymous}" for s in spaces)
            m = TYPE.match(text) or ALIAS.match(text)
            if m:
                out.append((where, m.group(1), number, text, local))
                continue
            if text.startswith(SKIP_START) or text.startswith("using"):
                continue
            m = DECL.match(text)
            if m is None:
                continue
            head = text.split("(")[0].split("=")[0].split()
            if head and "::" in head[-1]:
                continue  # a member or a qualified definition: not file-local
            if m.group(1) not in ("main", "operator"):
                out.append((where, m.group(1), number, text, local))
    return out


def main():
    global ROOT
    if len(sys.argv) == 3 and sys.argv[1] == "--root":
        ROOT = os.path.abspath(sys.argv[2])
    folders = collections.defaultdict(list)
    for top in ("src", "tools"):
        for folder, _, files in os.walk(os.path.join(ROOT, top)):
            for name in files:
                if name.endswith(".cc") and not name.endswith("_test.cc"):
                    folders[folder].append(os.path.join(folder, name))
    problems = []
    for folder in sorted(folders):
        # Two definitions clash in one unity translation unit when they have the same name in the
        # same namespace (an anonymous namespace inside a named one merges across the files of a
        # unity batch) and one of them is file-local; two external ones are the linker's to refuse.
        seen = collections.defaultdict(list)
        for path in sorted(folders[folder]):
            for where, name, number, text, local in set(definitions(path)):
                plain = where.replace("::{anonymous}", "").replace("{anonymous}", "")
                seen[(plain, name)].append((os.path.relpath(path, ROOT), number, text, local))
        for (_, name), where in sorted(seen.items()):
            files = {w[0] for w in where}
            if len(files) < 2 or not any(w[3] for w in where):
                continue
            texts = {w[2] for w in where}
            if len(texts) == 1 and ALIAS.match(next(iter(texts))):
                continue
            problems.append(f"{name}: " + ", ".join(f"{p}:{k}" for p, k, _, _ in sorted(where)))
    for p in problems:
        print(f"check_unity_names: {p}")
    if problems:
        print("check_unity_names: two files of one folder define the same file-local name; the "
              "unity build of make run would refuse it (rename one, or share it in a header)",
              file=sys.stderr)
        return 1
    print("check_unity_names: ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
