#!/usr/bin/env python3
"""Function size check of src/: no function body may run over MAX_LINES lines.

What counts as a function: every function, method, constructor, destructor and operator defined
with a body in src/**/*.{cc,h}, at namespace scope or inside a class, struct or union (at any
depth of them). Lambdas and local classes are part of the function that holds them, not
functions of their own; a lambda stored in a namespace-scope variable is data and is not counted.
Namespaces, extern "C" blocks, classes, structs, unions and enums are not functions; the
functions inside the first five are checked one by one. Tests are not checked: *_test.cc,
*_fuzz.cc, *_test*.h and anything under a folder named test or tests.

What counts as its length: from the line where its signature starts (a template <...> line and
the return type included; comments above it excluded) to the line of its closing brace,
both inclusive. So a constructor's initializer list counts, and a one-line function is 1 line.

How: the file is first blanked of comments, string and character literals (raw strings too) and
preprocessor lines (with their continuations), keeping every newline, so that what is left is
braces and code; of each #if, only the first branch is kept. Then every { at namespace or class
scope is classified by the text before it since the last ; { or }: a namespace, a class-like
body, an initializer (data), or a function. It is a heuristic, not a C++ parser, tuned to this
code base's style (clang-format'ed, macros in ALL_CAPS); it says so when the braces of a file
do not balance.

Usage: check_function_size.py [--root DIR] [--max-lines N] [--top K] [--no-allowed]
  --root DIR       the tree whose src/ is checked (default: this repository)
  --max-lines N    the largest length allowed (default MAX_LINES)
  --top K          also print the K longest functions, allowed or not
  --no-allowed     ignore ALLOWED below: every function over the limit fails
Prints `file:line name N lines` for each function over the limit, longest first; those that
ALLOWED below lists are printed apart and do not fail the check while no longer than listed.
Exit status: 0 when none is over but those allowed; 1 when some are, when an entry of ALLOWED
is no longer needed or when a file's braces do not balance; 2 on a usage error. Python 3
standard library only, so that CI needs nothing extra.
"""

import argparse
import os
import re
import sys

MAX_LINES = 120

# The functions over MAX_LINES that are known and may stay, each at most as long as it is now,
# until it is split: (file, name as reported) -> its length today. A listed function that grows
# fails, and so does an entry no longer needed (the function was split, renamed or removed), so
# that the list only shrinks (issue 23).
ALLOWED = {}

SOURCE_SUFFIXES = (".cc", ".h")
TEST_FILE_RE = re.compile(r"(_test\.cc|_fuzz\.cc|_test[a-z_]*\.h)$")
TEST_DIRS = {"test", "tests"}

IDENT_CHARS = set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_")
# Prefixes a string or character literal may carry: u8"x", L'x', uR"(x)" and so on.
LITERAL_PREFIXES = {"", "u8", "u", "U", "L"}
# Words after which a ( is not the parameter list of the function being defined.
NOT_A_NAME = {"decltype", "alignas", "__attribute__", "noexcept", "requires", "sizeof",
              "alignof", "throw", "explicit", "static_assert", "__declspec"}
# Words that may stand between a function's ) and its {.
TRAILING_WORDS = {"const", "override", "final", "noexcept", "mutable", "volatile", "try"}
CLASS_KEYS = {"class", "struct", "union"}
ACCESS_RE = re.compile(r"^\s*(public|private|protected)\s*:(?!:)")
MACRO_RE = re.compile(r"^[A-Z][A-Z0-9]*(_[A-Z0-9]+)+$")
WORD_RE = re.compile(r"[A-Za-z_]\w*")
OPERATOR_RE = re.compile(
    r"((?:[A-Za-z_]\w*\s*(?:<[^<>()]*>)?\s*::\s*)*operator\b\s*"
    r"(?:\(\s*\)|\[\s*\]|\"\"\s*\w+|new\s*\[\s*\]|delete\s*\[\s*\]|[^\w\s(]+|[\w\s:<>*&]+?))\s*\(")


def directive_end(text, i):
    """The end of the preprocessor line at i: the first newline not escaped by a backslash (a
    comment inside it goes with it)."""
    n = len(text)
    j = i
    while j < n and text[j] != "\n":
        if text[j] == "\\" and j + 1 < n and text[j + 1] == "\n":
            j += 2
        elif text.startswith("/*", j):
            end = text.find("*/", j + 2)
            j = n if end < 0 else end + 2
        else:
            j += 1
    return j


def literal_end(text, i):
    """The end of the string or character literal whose quote is at i (raw strings too), or None
    when the quote is a digit separator (1'000'000)."""
    n, c = len(text), text[i]
    # The identifier or number right before the quote: a literal prefix (u8, L, R...), or,
    # before ', the digits of a number with separators.
    k = i
    while k > 0 and (text[k - 1] in IDENT_CHARS or text[k - 1] == "'" and c == "'"):
        k -= 1
    word = text[k:i]
    if c == "'" and word[:1].isdigit():
        return None
    if c == '"' and word.endswith("R") and word[:-1] in LITERAL_PREFIXES:
        open_paren = text.find("(", i + 1)
        delim = text[i + 1:open_paren]
        end = text.find(")" + delim + '"', open_paren + 1)
        return n if open_paren < 0 or end < 0 else end + len(delim) + 2
    j = i + 1
    while j < n and text[j] != c and text[j] != "\n":
        j += 2 if text[j] == "\\" else 1
    return min(j + 1, n)


def blank(text):
    """The text with comments, literals and preprocessor lines replaced by spaces; every newline
    is kept, so that offsets still give the original line numbers."""
    out = list(text)
    n = len(text)
    i = 0
    line_start = True  # only white space so far on this line
    # One entry per open #if: True once its first branch has ended. Only the first branch of
    # each #if is kept, so that braces opened in both branches (#if A namespace x { #else
    # namespace y { #endif) count once.
    skipping = []
    while i < n:
        c = text[i]
        if c in " \t\r\f\v\n":
            line_start = line_start or c == "\n"
            i += 1
            continue
        if line_start and c == "#":
            directive = re.match(r"#\s*(\w*)", text[i:i + 40]).group(1)
            if directive in ("if", "ifdef", "ifndef"):
                skipping.append(False)
            elif directive in ("else", "elif", "elifdef", "elifndef") and skipping:
                skipping[-1] = True
            elif directive == "endif" and skipping:
                skipping.pop()
            end = directive_end(text, i)
        elif any(skipping) or text.startswith("//", i):
            end = text.find("\n", i)
            end = n if end < 0 else end
        elif text.startswith("/*", i):
            end = text.find("*/", i + 2)
            end = n if end < 0 else end + 2
        elif c in "\"'":
            end = literal_end(text, i)
        else:
            end = None
        line_start = False
        if end is None:  # code, or a digit separator
            i += 1
            continue
        for k in range(i, end):
            if out[k] != "\n":
                out[k] = " "
        i = end
    return "".join(out)


def match_close(code, open_pos, opener="{", closer="}"):
    """The offset of the bracket closing the one at open_pos, or -1."""
    depth = 0
    for k in range(open_pos, len(code)):
        ch = code[k]
        if ch == opener:
            depth += 1
        elif ch == closer:
            depth -= 1
            if depth == 0:
                return k
    return -1


def skip_template_prefix(header):
    """The header without its leading template <...> clauses."""
    while True:
        m = re.match(r"\s*template\s*<", header)
        if not m:
            return header
        depth, parens = 0, 0
        for k in range(m.end() - 1, len(header)):
            ch = header[k]
            if ch in "([":
                parens += 1
            elif ch in ")]":
                parens -= 1
            elif parens == 0 and ch == "<":
                depth += 1
            elif parens == 0 and ch == ">":
                depth -= 1
                if depth == 0:
                    header = header[k + 1:]
                    break
        else:
            return header


def flatten(header):
    """header with what stands inside its (), [] and {} blanked and the brackets kept: what is
    left is its top level."""
    out, depth = [], 0
    for ch in header:
        if ch in ")]}":
            depth -= 1
        out.append(ch if depth == 0 or ch == "\n" else " ")
        if ch in "([{":
            depth += 1
    return "".join(out)


def has_top_level_assignment(header):
    """True when header declares a variable with `= ...` (operator=, ==, <=, += are not)."""
    flat = flatten(header)
    for m in re.finditer("=", flat):
        k = m.start()
        before = flat[k - 1] if k > 0 else ""
        after = flat[k + 1] if k + 1 < len(flat) else ""
        if before in "=!<>+-*/%&|^" or after == "=":
            continue
        if re.search(r"\boperator\s*$", flat[:k]):
            continue
        return True
    return False


def last_token(header):
    """The last word or punctuation character of header."""
    s = header.rstrip()
    if not s:
        return ""
    if s[-1] in IDENT_CHARS:
        m = re.search(r"\w+$", s)
        return m.group(0)
    if s.endswith("&&"):
        return "&&"
    return s[-1]


def has_init_list(header):
    """True when a top-level single : follows a top-level ) (a constructor's member list)."""
    flat = flatten(header)
    paren = flat.find(")")
    return paren >= 0 and re.search(r"(?<!:):(?!:)", flat[paren:]) is not None


def function_name(header):
    """The name a function header defines (qualified as written), or None."""
    m = OPERATOR_RE.search(header)
    if m:
        # operator== and operator() lose their spaces; a conversion keeps one: operator bool.
        name = re.sub(r"\s+", " ", m.group(1).strip())
        return re.sub(r"\s*(::|\boperator\b)\s*(?=[^\w\s])", r"\1", name)
    flat = flatten(header)
    fallback = None
    for paren in re.finditer(r"\(", flat):
        m = re.search(r"((?:~?[A-Za-z_]\w*\s*(?:<[^<>()]*>)?\s*::\s*)*~?[A-Za-z_]\w*)\s*$",
                      flat[:paren.start()])
        if not m:
            continue
        name = re.sub(r"\s+", "", m.group(1))
        last = name.rsplit("::", 1)[-1]
        if last in NOT_A_NAME:
            continue
        if not MACRO_RE.match(last):
            return name
        if fallback is None:
            fallback = name
    return fallback


def strip_leading_noise(header):
    """Offset in header where the signature starts: after access labels and ALL_CAPS macro calls
    that stand before it (they end no statement with a ;)."""
    pos = 0
    while True:
        rest = header[pos:]
        m = ACCESS_RE.match(rest)
        if m:
            pos += m.end()
            continue
        m = re.match(r"\s*([A-Z][A-Z0-9_]*)\s*\(", rest)
        if m and MACRO_RE.match(m.group(1)):
            close = match_close(rest, m.end() - 1, "(", ")")
            after = rest[close + 1:] if close >= 0 else ""
            # Only a macro call alone on its line(s): NVMLX_FOO(x) newline Type F() {.
            if close >= 0 and "\n" in after[:len(after) - len(after.lstrip())]:
                pos += close + 1
                continue
        return pos + len(rest) - len(rest.lstrip())


def classify(header):
    """What a { at namespace or class scope opens: 'namespace', 'class', 'enum', 'function' or
    'data' (an initializer, or something this check does not know)."""
    h = skip_template_prefix(header)
    first = WORD_RE.findall(h)[:2]
    if first[:1] == ["namespace"] or first[:2] == ["inline", "namespace"]:
        return "namespace"
    if first[:1] == ["extern"] and last_token(h) == "extern":
        return "namespace"  # extern "C" { (the string is blanked)
    if has_top_level_assignment(h):
        return "data"
    last = last_token(h)
    before_paren = h.split("(", 1)[0]
    before_words = set(WORD_RE.findall(before_paren))
    if "enum" in before_words:
        return "enum"
    if before_words & CLASS_KEYS and last != ")":
        return "class"
    if last == ")" or last in TRAILING_WORDS or last == "&" or last == "&&":
        return "function"
    if re.search(r"\)\s*(?:[A-Za-z_]\w*\s*)*->", h):
        return "function"  # a trailing return type
    if has_init_list(h):
        return "function"
    return "data"


def scan(code):
    """Yields (start offset, end offset, name) of each function body in blanked code, and raises
    ValueError when the braces do not balance."""
    results = []
    # Each scope: (kind, name) with kind 'file', 'namespace' or 'class'.
    stack = [("file", "")]
    header_start = 0
    k = 0
    n = len(code)
    while k < n:
        ch = code[k]
        if ch == "(":
            # Braces inside a header's parentheses (a default argument's {}, a lambda handed to
            # a member in an initializer list) open nothing of their own.
            close = match_close(code, k, "(", ")")
            if close < 0:
                raise ValueError(f"unmatched ( at offset {k}")
            k = close + 1
            continue
        if ch == ";":
            header_start = k + 1
        elif ch == "}":
            if len(stack) == 1:
                raise ValueError(f"unmatched }} at offset {k}")
            stack.pop()
            header_start = k + 1
        elif ch == "{":
            header = code[header_start:k]
            kind = classify(header)
            if kind == "function" and has_init_list(skip_template_prefix(header)):
                # A member initialized with braces (x_{1}) is not the body: the body's { follows
                # a ), a } or a ... ; a member's follows its name or a template's >.
                before = code[:k].rstrip()
                if before and (before[-1] in IDENT_CHARS or before[-1] == ">") and \
                        last_token(before) not in TRAILING_WORDS:
                    close = match_close(code, k)
                    if close < 0:
                        raise ValueError(f"unmatched {{ at offset {k}")
                    k = close + 1
                    continue
            if kind in ("namespace", "class"):
                name = ""
                if kind == "class":
                    h = skip_template_prefix(header)
                    m = re.search(r"\b(?:class|struct|union)\b\s*(?:\[\[.*?\]\]\s*)?"
                                  r"(?:alignas\s*\([^)]*\)\s*)?([A-Za-z_]\w*)?", h)
                    name = (m.group(1) or "") if m else ""
                    if name == "final":
                        name = ""
                stack.append((kind, name))
                header_start = k + 1
            else:
                close = match_close(code, k)
                if close < 0:
                    raise ValueError(f"unmatched {{ at offset {k}")
                if kind == "function":
                    start = header_start + strip_leading_noise(header)
                    name = function_name(header) or "?"
                    classes = [s[1] for s in stack if s[0] == "class" and s[1]]
                    if classes:
                        name = "::".join(classes + [name])
                    results.append((start, close, name))
                k = close + 1
                header_start = k
                continue
        k += 1
    if len(stack) != 1:
        raise ValueError("unclosed {")
    return results


def functions_of(text):
    """(first line, last line, name) of each function defined in a C++ source text."""
    code = blank(text)
    line_starts = [0]
    for m in re.finditer("\n", code):
        line_starts.append(m.end())

    def line_of(offset):
        lo, hi = 0, len(line_starts) - 1
        while lo < hi:
            mid = (lo + hi + 1) // 2
            if line_starts[mid] <= offset:
                lo = mid
            else:
                hi = mid - 1
        return lo + 1

    return [(line_of(a), line_of(b), name) for a, b, name in scan(code)]


def source_files(src):
    """Every checked .cc and .h under src, sorted."""
    for dirpath, dirnames, filenames in os.walk(src):
        dirnames[:] = sorted(d for d in dirnames if d not in TEST_DIRS)
        for name in sorted(filenames):
            if name.endswith(SOURCE_SUFFIXES) and not TEST_FILE_RE.search(name):
                yield os.path.join(dirpath, name)


def check(root, max_lines=MAX_LINES, top=0, allowed=None, out=sys.stdout):
    if allowed is None:
        allowed = ALLOWED
    src = os.path.join(root, "src")
    if not os.path.isdir(src):
        print(f"check_function_size: {src} is not a directory", file=sys.stderr)
        return 2
    found, errors = [], []
    for path in source_files(src):
        rel = os.path.relpath(path, root).replace(os.sep, "/")
        with open(path, encoding="utf-8", errors="replace") as f:
            text = f.read()
        try:
            for first, last, name in functions_of(text):
                found.append((last - first + 1, rel, first, name))
        except ValueError as e:
            errors.append(f"{rel}: cannot check: {e} (braces do not balance outside comments, "
                          f"literals and preprocessor lines)")
    found.sort(key=lambda f: (-f[0], f[1], f[2]))
    if top:
        print(f"the {top} longest functions:", file=out)
        for lines, rel, first, name in found[:top]:
            print(f"  {rel}:{first} {name} {lines} lines", file=out)
    over, tolerated, still_needed = [], [], set()
    for lines, rel, first, name in found:
        if lines <= max_lines:
            continue
        cap = allowed.get((rel, name))
        if cap is not None:
            still_needed.add((rel, name))
        line = f"{rel}:{first} {name} {lines} lines"
        if cap is None:
            over.append(line)
        elif lines > cap:
            over.append(f"{line} (grew: ALLOWED in scripts/check_function_size.py lets it "
                        f"have {cap})")
        else:
            tolerated.append(line)
    for rel, name in sorted(set(allowed) - still_needed):
        errors.append(f"{rel}: {name} is no longer over {max_lines} lines (or no longer "
                      f"there): delete its entry from ALLOWED in scripts/check_function_size.py")
    for line in over:
        print(line, file=out)
    for e in errors:
        print(e, file=out)
    if tolerated:
        print(f"check_function_size: {len(tolerated)} function(s) over {max_lines} lines allowed "
              f"for now (ALLOWED), until split:", file=out)
        for line in tolerated:
            print("  " + line, file=out)
    if over or errors:
        print(f"check_function_size: {len(over)} function(s) over {max_lines} lines "
              f"(signature to closing brace; split them into named parts), "
              f"{len(errors)} other error(s)", file=out)
        return 1
    print(f"check_function_size: ok ({len(found)} functions, none over {max_lines} lines "
          f"but those allowed)", file=out)
    return 0


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--root", default=os.path.dirname(os.path.dirname(
        os.path.abspath(__file__))), help="tree whose src/ is checked")
    parser.add_argument("--max-lines", type=int, default=MAX_LINES,
                        help="the largest length allowed")
    parser.add_argument("--top", type=int, default=0, help="also print the K longest functions")
    parser.add_argument("--no-allowed", action="store_true",
                        help="allow no function over the limit, not even those of ALLOWED")
    args = parser.parse_args(argv)
    if args.max_lines < 1 or args.top < 0:
        parser.error("--max-lines must be positive and --top not negative")
    return check(args.root, args.max_lines, args.top, {} if args.no_allowed else ALLOWED)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
