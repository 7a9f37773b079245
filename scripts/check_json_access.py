#!/usr/bin/env python3
"""JSON access check of src/: no read of JSON may throw past its module.

nlohmann::json throws on most reads that meet something unexpected, and the JSON we read comes
from peers (the API server, a container engine, our own state files): one odd member must read
as absent, not abort the daemon. util/json_members.h holds the non-throwing reads (Member,
String, Int, Uint, Number, Bool, Array, Object), the non-throwing Parse and the UTF-8-safe Dump;
this script refuses the throwing forms everywhere else.

Which files: the .h and .cc files of src/ that use JSON, i.e. that include <nlohmann/json.hpp>,
<nlohmann/json_fwd.hpp> or "util/json_members.h", directly or through a header of src/. Tests
(*_test.cc, *_test.h, *_test_fixture.h), fuzz entry points (*_fuzz.cc) and util/json_members.h
itself are not checked. Comments and the contents of string literals are ignored.

Rules, each reported as file:line: rule: why:
  value     `.value(` or `->value(`: json's value(key, default) throws when the member has
            another type; std::optional's and Result's value() throw when empty. Use the
            helpers, or `*x` after checking x.
  at        `.at(` / `->at(`: throws on a missing key or index (json, and the std containers).
  get       `.get<`, `.get_ref<`, `.get_to(` (also after `->` or `template`): throw on another
            type. Only util/json_members.h converts a value, after checking its type.
            (get_ptr<>, which answers null instead, is allowed.)
  parse     `json::parse(` must not throw: its third argument must be `false` (allow_exceptions;
            the value is then discarded on an error), or use util::json::Parse. The `_json`
            literal operator is refused (it throws on a bad literal).
  dump      `.dump(` throws (type_error.316) on a string that is not valid UTF-8, and names,
            labels and messages come from outside: its fourth argument must be
            `error_handler_t::replace` or `error_handler_t::ignore`, or use util::json::Dump.
  subscript `x["key"]` that is not assigned to (`x["a"]["b"] = ...` is a write and allowed):
            on a const json a missing key is undefined behaviour (an assertion), on a non-const
            one that is not an object it throws. Use Member(). Only subscripts by a string
            literal are seen: a subscript by a variable or an index (`(*items)[i]`) cannot be
            told from a std container's statically and is not checked; keep those to indices
            that were bounded by size() or to containers that are not json.

Usage: check_json_access.py [--root DIR]
  --root DIR  the tree whose src/ is checked (default: this repository)
Exit status: 0 when clean, 1 on any violation, 2 on a usage error.
Python 3 standard library only, so that CI needs nothing extra.
"""

import argparse
import os
import re
import sys

HELPER = "util/json_members.h"
SOURCE_SUFFIXES = (".h", ".cc")
EXCLUDED_SUFFIXES = ("_test.cc", "_test.h", "_test_fixture.h", "_fuzz.cc")
JSON_HEADERS = ("nlohmann/json.hpp", "nlohmann/json_fwd.hpp", HELPER)
INCLUDE_RE = re.compile(r'^\s*#\s*include\s*[<"]([^">]+)[">]', re.M)

RULES = {
    "value": "throws (json: a member of another type; optional/Result: empty): use "
             "util/json_members.h, or `*x` after a check",
    "at": "throws on a missing key or index: use util/json_members.h's Member()",
    "get": "throws on another type: only util/json_members.h converts json values",
    "parse": "throws on invalid JSON: pass allow_exceptions=false as the third argument, or use "
             "util::json::Parse",
    "literal": "the _json literal throws on a bad literal: build the value or use "
               "util::json::Parse",
    "dump": "throws on invalid UTF-8: pass error_handler_t::replace (or ignore), or use "
            "util::json::Dump",
    "subscript": "reading x[\"key\"] is undefined on a const json without the key and throws on "
                 "a non-object: use util/json_members.h's Member()",
}

VALUE_RE = re.compile(r"(?:\.|->)\s*value\s*\(")
AT_RE = re.compile(r"(?:\.|->)\s*at\s*\(")
GET_RE = re.compile(r"(?:\.|->)\s*(?:template\s+)?(?:get|get_ref)\s*<|(?:\.|->)\s*get_to\s*\(")
PARSE_RE = re.compile(r"\b(?:json|Json|JSON|basic_json<[^>]*>)\s*::\s*parse\s*\(")
LITERAL_RE = re.compile(r'"\s*_json\b')
DUMP_RE = re.compile(r"(?:\.|->)\s*dump\s*\(")
# One or more subscripts by a string literal (contents blanked to x by Strip).
SUBSCRIPT_RE = re.compile(r'(?:\[\s*"x*"\s*\])+')
ASSIGN_RE = re.compile(r"\s*=(?!=)")


def strip(text):
    """`text` with comments blanked and string and character literal contents replaced by x
    (quotes kept), newlines kept, so that offsets and line numbers are unchanged."""
    out = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif c == "R" and text.startswith('R"', i) and (i == 0 or not text[i - 1].isalnum()):
            m = re.match(r'R"([^()\\\s]{0,16})\(', text[i:])
            if not m:
                out.append(c)
                i += 1
                continue
            end = text.find(")" + m.group(1) + '"', i + m.end())
            end = n if end < 0 else end + len(m.group(1)) + 2
            out.append('R"' + re.sub(r"[^\n]", "x", text[i + 2:end - 1]) + '"')
            i = end
        elif c == "'" and i > 0 and text[i - 1].isalnum():
            out.append(c)  # a digit separator (1'000'000), not a character literal
            i += 1
        elif c in "\"'":
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            j = min(j, n - 1)
            out.append(c + "x" * (j - i - 1) + text[j])
            i = j + 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


def call_args(code, open_paren):
    """The top-level arguments of the call whose '(' is at code[open_paren], stripped."""
    depth, args, start = 0, [], open_paren + 1
    for k in range(open_paren, len(code)):
        ch = code[k]
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
            if depth == 0:
                args.append(code[start:k])
                break
        elif ch == "," and depth == 1:
            args.append(code[start:k])
            start = k + 1
    return [" ".join(a.split()) for a in args]


def line_of(code, offset):
    return code.count("\n", 0, offset) + 1


def violations(code):
    """(line, rule) pairs of one stripped file, in order."""
    found = []
    for rule, regex in (("value", VALUE_RE), ("at", AT_RE), ("get", GET_RE),
                        ("literal", LITERAL_RE)):
        found += [(line_of(code, m.start()), rule) for m in regex.finditer(code)]
    for m in PARSE_RE.finditer(code):
        args = call_args(code, m.end() - 1)
        if len(args) < 3 or args[2] != "false":
            found.append((line_of(code, m.start()), "parse"))
    for m in DUMP_RE.finditer(code):
        args = call_args(code, m.end() - 1)
        handler = args[3] if len(args) >= 4 else ""
        if not re.search(r"error_handler_t\s*::\s*(replace|ignore)$", handler):
            found.append((line_of(code, m.start()), "dump"))
    for m in SUBSCRIPT_RE.finditer(code):
        if not ASSIGN_RE.match(code, m.end()):
            found.append((line_of(code, m.start()), "subscript"))
    return sorted(found)


def source_files(src):
    for dirpath, dirnames, filenames in os.walk(src):
        dirnames.sort()
        for name in sorted(filenames):
            if name.endswith(SOURCE_SUFFIXES):
                yield os.path.relpath(os.path.join(dirpath, name), src)


def json_files(src, files, texts):
    """The files of `files` that include a JSON header, directly or through src/ headers."""
    includes = {f: INCLUDE_RE.findall(texts[f]) for f in files}
    uses = {f: any(i in JSON_HEADERS for i in includes[f]) for f in files}
    changed = True
    while changed:  # propagate through src/'s own headers until nothing changes
        changed = False
        for f in files:
            if uses[f]:
                continue
            for inc in includes[f]:
                local = os.path.normpath(os.path.join(os.path.dirname(f), inc))
                if uses.get(inc) or uses.get(local):
                    uses[f] = changed = True
                    break
    return [f for f in files if uses[f]]


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", default=os.path.dirname(os.path.dirname(os.path.abspath(
        __file__))))
    args = parser.parse_args(argv)
    src = os.path.join(args.root, "src")
    if not os.path.isdir(src):
        print(f"check_json_access: {src} is not a directory", file=sys.stderr)
        return 2
    files = list(source_files(src))
    texts = {}
    for f in files:
        with open(os.path.join(src, f), encoding="utf-8", errors="replace") as fh:
            texts[f] = fh.read()
    errors = []
    for f in json_files(src, files, texts):
        if f == HELPER or f.endswith(EXCLUDED_SUFFIXES):
            continue
        for line, rule in violations(strip(texts[f])):
            errors.append(f"src/{f}:{line}: {rule}: {RULES[rule]}")
    for e in errors:
        print(e)
    if errors:
        print(f"check_json_access: {len(errors)} violation(s)")
        return 1
    print("check_json_access: ok")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
