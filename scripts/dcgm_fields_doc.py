#!/usr/bin/env python3
"""docs/dcgm-fields.md's generated parts: the output of dcgm_fields_doc (src/fields/
dcgm_fields_doc.cc, from the catalog and DCGM's field list), each block between its two marker
lines in the page; the text around them is written by hand and kept as it is.

  scripts/dcgm_fields_doc.py DCGM_FIELDS_DOC_BINARY DOC          rewrite DOC (make dcgm-fields-doc)
  scripts/dcgm_fields_doc.py --check DCGM_FIELDS_DOC_BINARY DOC  exit 1 with the diff when DOC
                                                                 differs (ctest dcgm_fields_doc_check)

The binary prints blocks, each a line "@@ NAME" and then its lines. The page holds, for each
NAME, the line BEGIN.format(NAME) and later the line END.format(NAME), exactly once each; a block
the binary prints that the page lacks, or the reverse, is an error: the counts must not be
left hand-written by accident.
"""
import difflib
import subprocess
import sys

BEGIN = ("<!-- dcgm_fields_doc: begin {}. Generated from the catalog by `make dcgm-fields-doc`: "
         "edit src/fields/, not this. -->")
END = "<!-- dcgm_fields_doc: end {} -->"
PREFIX = "<!-- dcgm_fields_doc: "


def blocks(output):
    """The binary's output as {name: [lines]}, in order."""
    out = {}
    name = None
    for line in output.splitlines():
        if line.startswith("@@ "):
            name = line[3:].strip()
            if name in out:
                raise ValueError(f"the generator printed block {name!r} twice")
            out[name] = []
        elif name is None:
            raise ValueError(f"the generator printed a line before its first block: {line!r}")
        else:
            out[name].append(line)
    return out


def rewrite(doc_lines, generated):
    """The page with each block's lines replaced; raises ValueError on a marker problem."""
    names_in_doc = []
    for line in doc_lines:
        if line.startswith(PREFIX) and line.startswith(PREFIX + "begin "):
            names_in_doc.append(line[len(PREFIX + "begin "):].split(".", 1)[0])
    if sorted(names_in_doc) != sorted(generated):
        raise ValueError(f"the page's blocks {sorted(names_in_doc)} are not the generator's "
                         f"{sorted(generated)}")
    for name in generated:
        for marker in (BEGIN.format(name), END.format(name)):
            n = doc_lines.count(marker)
            if n != 1:
                raise ValueError(f"the page must hold this line exactly once (it holds it {n} "
                                 f"times):\n{marker}")
    out = []
    skipping = None
    for line in doc_lines:
        if skipping is not None:
            if line == END.format(skipping):
                out.append(line)
                skipping = None
            continue
        out.append(line)
        for name, lines in generated.items():
            if line == BEGIN.format(name):
                out.extend(lines)
                skipping = name
    if skipping is not None:
        raise ValueError(f"block {skipping!r}: its end marker comes before its begin marker")
    return out


def main(argv):
    check = len(argv) > 0 and argv[0] == "--check"
    if check:
        argv = argv[1:]
    if len(argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    binary, doc = argv
    generated = blocks(subprocess.run([binary], check=True, capture_output=True,
                                      text=True).stdout)
    with open(doc, encoding="utf-8") as f:
        old = f.read().split("\n")
    try:
        new = rewrite(old, generated)
    except ValueError as e:
        print(f"dcgm_fields_doc: {doc}: {e}", file=sys.stderr)
        return 1
    if check:
        if new != old:
            print(f"dcgm_fields_doc: {doc} is not what the catalog generates:", file=sys.stderr)
            sys.stderr.writelines(difflib.unified_diff(
                [l + "\n" for l in old], [l + "\n" for l in new], doc, doc + " (generated)"))
            print("dcgm_fields_doc: regenerate it with: make dcgm-fields-doc", file=sys.stderr)
            return 1
        return 0
    if new != old:
        with open(doc, "w", encoding="utf-8") as f:
            f.write("\n".join(new))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
