#!/usr/bin/env python3
"""Regenerates (or checks) src/fields/dcgm_field_list.inc, our table of every DCGM field name.

The table lists every name dcgm-exporter's collectors parser accepts (go-dcgm's GetFieldID: the
current-name map and the legacy-name map of pkg/dcgm/const_fields.go), with its DCGM field id, its
value type and its entity group (DCGM_FE_*: GPU, NvSwitch, CPU, ConnectX, link, ...). Types and
entity groups come from DCGM's field metadata table (dcgmlib/src/dcgm_fields.cpp), whose first
argument is a DCGM_FI_* macro resolved through dcgm_fields.h.

Nothing upstream is committed: point the script at local copies, e.g. from the go-dcgm and DCGM
repositories:
  git -C go-dcgm show <commit>:pkg/dcgm/const_fields.go > const_fields.go
  git -C go-dcgm show <commit>:pkg/dcgm/dcgm_fields.h    > dcgm_fields.h
  git -C DCGM    show v4.6.0:dcgmlib/src/dcgm_fields.cpp  > dcgm_fields.cpp

A --consts file may also be a plain name list (a file ending in .txt): one `NAME ID` per line
(a name of go-dcgm's current map) or `NAME ID legacy`, `#` comments. That is how names of a
go-dcgm version that is readable but not fetchable as a file are given (scripts/dcgm_names_4.7.txt:
the entries of go-dcgm 892ef1f8 that the older inputs lack; docs/upstream/dcgm-fields-4.7.md).

Usage:
  gen_dcgm_fields.py --consts A.go [B.go|B.txt ...] --header A.h [B.h ...] --meta A.cpp [B.cpp ...]
                     [--out src/fields/dcgm_field_list.inc] [--check]
  Several --consts inputs are merged, oldest first (a name in any of them is known); the first
  one is the version dcgm-exporter pins and names each id's canonical spelling. When a later
  input's current map gives a name another id (upstream moved it: DCGM 4.7 moved
  DCGM_FI_DEV_GPU_UTIL_RATIO from 203 to its new ratio field 1613), the later id wins and a note
  goes to stderr. Headers and metadata files are tried in the order given. --check compares with
  the file instead of writing it (exit 1 when they differ). Exit 2 on bad input (a name given two
  ids by one input or by a later legacy map, an unparsable file).
Python 3 standard library only.
"""

import argparse
import re
import sys

TYPES = {"DCGM_FT_INT64": "i", "DCGM_FT_DOUBLE": "d", "DCGM_FT_STRING": "s",
         "DCGM_FT_TIMESTAMP": "t", "DCGM_FT_BINARY": "b"}
ENTITIES = {"DCGM_FE_NONE": "kNone", "DCGM_FE_GPU": "kGpu", "DCGM_FE_VGPU": "kVgpu",
            "DCGM_FE_SWITCH": "kSwitch", "DCGM_FE_GPU_I": "kGpuInstance",
            "DCGM_FE_GPU_CI": "kComputeInstance", "DCGM_FE_LINK": "kLink",
            "DCGM_FE_CPU": "kCpu", "DCGM_FE_CPU_CORE": "kCpuCore",
            "DCGM_FE_CONNECTX": "kConnectX"}


def fail(msg):
    print("gen_dcgm_fields: " + msg, file=sys.stderr)
    sys.exit(2)


def parse_name_list(path):
    """(current, legacy) from a plain list: `NAME ID` or `NAME ID legacy` per line."""
    current, legacy = {}, {}
    for line_no, line in enumerate(open(path, encoding="utf-8"), 1):
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        m = re.fullmatch(r"(DCGM_\w+|dcgm_\w+)\s+(\d+)(\s+legacy)?", line)
        if not m:
            fail(f"{path}:{line_no}: expected `NAME ID` or `NAME ID legacy`, got {line!r}")
        table = legacy if m.group(3) else current
        if m.group(1) in table and table[m.group(1)] != int(m.group(2)):
            fail(f"{path}:{line_no}: {m.group(1)} listed twice with different ids")
        table[m.group(1)] = int(m.group(2))
    return current, legacy


def parse_consts(path):
    """The two name -> id maps of go-dcgm's const_fields.go: (current, legacy)."""
    if path.endswith(".txt"):
        return parse_name_list(path)
    text = open(path, encoding="utf-8").read()
    maps = {}
    for var in ("dcgmFields", "legacyDCGMFields"):
        m = re.search(r"^var " + var + r" = map\[string\]Short\{\n(.*?)^\}", text, re.S | re.M)
        if not m:
            fail(f"{path}: no map {var}")
        entries = {}
        for line_no, line in enumerate(m.group(1).splitlines(), 1):
            line = line.strip()
            if not line or line.startswith("//"):
                continue
            e = re.fullmatch(r'"([A-Za-z0-9_]+)":\s*(\d+),', line)
            if not e:
                fail(f"{path}: map {var} entry {line_no}: cannot parse {line!r}")
            entries[e.group(1)] = int(e.group(2))
        maps[var] = entries
    return maps["dcgmFields"], maps["legacyDCGMFields"]


def parse_headers(paths):
    """DCGM_FI_* macro -> id, following `#define A B` aliases."""
    raw = {}
    for path in paths:
        for line in open(path, encoding="utf-8"):
            m = re.match(r"\s*#define\s+(DCGM_FI_\w+)\s+(\w+)", line)
            if m and m.group(1) not in raw:
                raw[m.group(1)] = m.group(2)
    out = {}
    for name in raw:
        v, seen = raw[name], set()
        while not v.isdigit() and v in raw and v not in seen:
            seen.add(v)
            v = raw[v]
        if v.isdigit():
            out[name] = int(v)
    return out


def split_args(s):
    args, depth, cur, in_str = [], 0, "", False
    for c in s:
        if in_str:
            cur += c
            if c == '"':
                in_str = False
            continue
        if c == '"':
            in_str = True
        elif c == "(":
            depth += 1
        elif c == ")":
            if depth == 0:
                args.append(cur.strip())
                return args
            depth -= 1
        elif c == "," and depth == 0:
            args.append(cur.strip())
            cur = ""
            continue
        cur += c
    return None


def parse_meta(paths, macros):
    """id -> (type char, entity, unit) from DcgmFieldsPopulateOneFieldWithFormatting calls."""
    meta = {}
    for path in paths:
        text = open(path, encoding="utf-8").read()
        call = "DcgmFieldsPopulateOneFieldWithFormatting("
        pos = text.find(call)
        while pos >= 0:
            args = split_args(text[pos + len(call):])
            pos = text.find(call, pos + 1)
            if not args or len(args) < 9 or args[0] == "unsigned short fieldId":
                continue
            fid = macros.get(args[0])
            if fid is None or fid in meta:
                continue
            ftype = TYPES.get(args[1])
            entity = ENTITIES.get(args[8])
            if ftype is None or entity is None:
                continue
            unit = args[7].strip('"') if args[7].startswith('"') else ""
            meta[fid] = (ftype, entity, unit)
    return meta


def c_string(s):
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


def generate(consts, headers, metas):
    names = {}  # name -> (id, legacy)
    canonical = {}  # id -> name
    for i, path in enumerate(consts):
        current, legacy = parse_consts(path)
        for table, is_legacy in ((current, False), (legacy, True)):
            for name, fid in sorted(table.items()):
                if name in names and names[name][0] != fid:
                    if is_legacy or i == 0:
                        fail(f"{path}: {name} is {fid} here but {names[name][0]} in an earlier "
                             "file")
                    # A newer go-dcgm defines the name anew: follow the newest upstream.
                    print(f"gen_dcgm_fields: note: {name} moves from {names[name][0]} to {fid} "
                          f"({path})", file=sys.stderr)
                    if canonical.get(names[name][0]) == name:
                        del canonical[names[name][0]]
                    del names[name]
                if name not in names:
                    names[name] = (fid, is_legacy)
                if not is_legacy and (i == 0 or fid not in canonical):
                    canonical.setdefault(fid, name)
    for name, (fid, _) in names.items():
        canonical.setdefault(fid, name)
    macros = parse_headers(headers)
    meta = parse_meta(metas, macros)
    lines = [
        "// Generated by scripts/gen_dcgm_fields.py from go-dcgm's pkg/dcgm/const_fields.go "
        "(the names",
        "// dcgm-exporter accepts) and DCGM's dcgmlib/src/dcgm_fields.cpp (types, entity groups,"
        " units).",
        "// Do not edit by hand: regenerate it (docs/dcgm-fields.md says how).",
        "//",
        "// DCGM_IDS(id, canonical name, type, entity group, unit): one row per DCGM field id,"
        " ascending.",
        "// DCGM_NAMES(name, id): every accepted spelling, ascending by name (byte order).",
        "#ifdef NVMLX_DCGM_ID",
    ]
    for fid in sorted(canonical):
        ftype, entity, unit = meta.get(fid, ("?", "kUnknown", ""))
        lines.append(f"NVMLX_DCGM_ID({fid}, {c_string(canonical[fid])}, '{ftype}', {entity}, "
                     f"{c_string(unit)})")
    lines.append("#endif")
    lines.append("#ifdef NVMLX_DCGM_NAME")
    for name in sorted(names, key=lambda s: s.encode()):
        lines.append(f"NVMLX_DCGM_NAME({c_string(name)}, {names[name][0]})")
    lines.append("#endif")
    return "\n".join(lines) + "\n", len(canonical), len(names), len(meta)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--consts", nargs="+", required=True)
    ap.add_argument("--header", nargs="+", required=True)
    ap.add_argument("--meta", nargs="+", required=True)
    ap.add_argument("--out", default="src/fields/dcgm_field_list.inc")
    ap.add_argument("--check", action="store_true")
    a = ap.parse_args()
    text, n_ids, n_names, n_meta = generate(a.consts, a.header, a.meta)
    if a.check:
        try:
            old = open(a.out, encoding="utf-8").read()
        except OSError as e:
            fail(str(e))
        if old != text:
            print(f"{a.out} differs from what the given upstream files generate", file=sys.stderr)
            return 1
        print(f"{a.out}: up to date ({n_ids} ids, {n_names} names)")
        return 0
    with open(a.out, "w", encoding="utf-8") as f:
        f.write(text)
    print(f"wrote {a.out}: {n_ids} ids ({n_meta} with DCGM metadata), {n_names} names")
    return 0


if __name__ == "__main__":
    sys.exit(main())
