#!/usr/bin/env python3
"""Layering check of src/: every `#include "..."` must point to the file's own folder or to a
lower one in LAYERS below, and the folder include graph must have no cycle.

LAYERS is the one place where the order of src/'s folders is declared (docs/architecture.md
describes it and points here). Lowest first; folders on one line are peers: neither may include
the other. A folder may include itself and any folder of a lower line, except the few arrows
that FORBIDDEN names.

Usage: check_layering.py [--root DIR] [--quiet]
  --root DIR  the tree whose src/ is checked (default: this repository)
  --quiet     print only the violations, not the include graph
Exit status: 0 when clean, 1 on any violation or cycle, 2 on a usage error.
Python 3 standard library only, so that CI needs nothing extra.
"""

import argparse
import os
import re
import sys

# The declared order, lowest first. Peers share a line. It is the graph the code really has: the
# four stages that read snapshots or make their parts (collect and attribute make them, render
# and live read them) all stand on plan/, model/ and fields/ and never include one another; they
# meet in model/ (the Snapshot) and app/ wires them.
LAYERS = [
    ["util"],
    ["model"],
    ["nvml", "cupti"],
    ["fields"],
    ["config"],
    ["plan"],
    ["collect", "attribute", "live", "render"],
    ["serve", "sinks"],
    ["app"],
]

# Arrows the order allows but the design does not: (folder, included folder) -> why. The server
# and the sinks link no gRPC, protobuf or OpenSSL of attribute's clients, and no NVML: the scrape
# path only reads pages, and what they send comes through app/.
FORBIDDEN = {
    ("serve", "attribute"): "serve and sinks stay free of attribute's gRPC and OpenSSL",
    ("sinks", "attribute"): "serve and sinks stay free of attribute's gRPC and OpenSSL",
    ("serve", "collect"): "no NVML on the scrape path: serve reads the pages app/ stores",
    ("sinks", "collect"): "sinks send what app/ hands them; they read no GPU",
}

# Headers private to one folder: only that folder's files and tests (*_test.cc, test fixtures) may
# include them. fields/field_ids.h names DCGM field ids; every other stage asks fields/field_roles.h
# or the field plan what a field is for instead of comparing ids.
PRIVATE_HEADERS = {
    "fields/field_ids.h": ("fields", "no stage outside fields/ compares DCGM field ids: use "
                                     "fields/field_roles.h or the FieldPlan"),
}

SOURCE_SUFFIXES = (".h", ".hh", ".hpp", ".cc", ".cpp", ".cxx", ".h.in")
INCLUDE_RE = re.compile(r'^\s*#\s*include\s*"([^"]+)"')


def layer_of():
    """Folder name -> index of its line in LAYERS."""
    index = {}
    for i, peers in enumerate(LAYERS):
        for folder in peers:
            index[folder] = i
    return index


def source_files(src):
    """Every C++ source or header under src/, sorted, as paths relative to src's parent."""
    for dirpath, dirnames, filenames in os.walk(src):
        dirnames.sort()
        for name in sorted(filenames):
            if name.endswith(SOURCE_SUFFIXES):
                yield os.path.join(dirpath, name)


def target_folder(include, including_file, src, folders):
    """The src/ folder an include names, or None when it is not one of src/'s files (a test
    fixture such as "fake_kubelet.h", found through the test's include path)."""
    if "/" in include:
        first = include.split("/", 1)[0]
        return first if first in folders else None
    # A bare name resolves next to the including file first (the quoted-include rule).
    if os.path.exists(os.path.join(os.path.dirname(including_file), include)):
        return os.path.relpath(including_file, src).split(os.sep, 1)[0]
    return None


def find_cycles(graph):
    """Strongly connected components of more than one folder (Tarjan), each sorted."""
    index, low, on_stack, stack, result = {}, {}, set(), [], []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                result.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return sorted(result)


def shortest_cycle(start, members, graph):
    """The shortest closed walk start -> ... -> start inside one component, as a list."""
    parents, frontier, seen = {}, [start], {start}
    while frontier:
        nxt = []
        for v in frontier:
            for w in sorted(graph.get(v, ())):
                if w not in members:
                    continue
                if w == start:
                    path = [v]
                    while path[-1] != start:
                        path.append(parents[path[-1]])
                    return list(reversed(path)) + [start]
                if w not in seen:
                    seen.add(w)
                    parents[w] = v
                    nxt.append(w)
        frontier = nxt
    return [start, start]


def cycle_paths(component, graph):
    """One shortest cycle through each folder of a component, without repeats, each written from
    its alphabetically first folder, e.g. "attribute -> collect -> attribute"."""
    members, seen, paths = set(component), set(), []
    for v in component:
        cycle = shortest_cycle(v, members, graph)[:-1]
        i = cycle.index(min(cycle))
        cycle = cycle[i:] + cycle[:i]
        if tuple(cycle) not in seen:
            seen.add(tuple(cycle))
            paths.append(" -> ".join(cycle + [cycle[0]]))
    return paths


def check(root, quiet=False, out=sys.stdout):
    src = os.path.join(root, "src")
    if not os.path.isdir(src):
        print(f"check_layering: {src} is not a directory", file=sys.stderr)
        return 2
    layers = layer_of()
    present = sorted(d for d in os.listdir(src) if os.path.isdir(os.path.join(src, d)))
    errors = []
    for folder in present:
        if folder not in layers:
            errors.append(f"src/{folder}: folder is not in the declared order (LAYERS in "
                          f"scripts/check_layering.py)")
    known = set(present) | set(layers)

    graph = {}  # folder -> {folder: number of includes}
    for path in source_files(src):
        rel = os.path.relpath(path, root)
        folder = os.path.relpath(path, src).split(os.sep, 1)[0]
        if folder == os.path.basename(path):
            continue  # a file directly in src/ belongs to no folder
        with open(path, encoding="utf-8", errors="replace") as f:
            for lineno, line in enumerate(f, 1):
                m = INCLUDE_RE.match(line)
                if not m:
                    continue
                include = m.group(1)
                private = PRIVATE_HEADERS.get(include)
                if (private and folder != private[0] and not path.endswith("_test.cc")
                        and not path.endswith("_test_util.h")):
                    errors.append(f"{rel}:{lineno}: {folder} must not include {include} "
                                  f"({private[1]})")
                target = target_folder(include, path, src, known)
                if target is None or target == folder:
                    continue
                edges = graph.setdefault(folder, {})
                edges[target] = edges.get(target, 0) + 1
                if folder not in layers or target not in layers:
                    continue  # already reported as an undeclared folder
                if (folder, target) in FORBIDDEN:
                    errors.append(f"{rel}:{lineno}: {folder} must not include {include} "
                                  f"({FORBIDDEN[(folder, target)]})")
                    continue
                if layers[target] < layers[folder]:
                    continue
                why = "a peer" if layers[target] == layers[folder] else "above it"
                errors.append(f"{rel}:{lineno}: {folder} must not include {include} "
                              f"({target} is {why} in the declared order)")

    arrows = {k: set(v) for k, v in graph.items()}
    for component in find_cycles(arrows):
        for path in cycle_paths(component, arrows):
            errors.append("cycle in the folder include graph: " + path)

    if not quiet:
        print("declared order, lowest first (peers share a line):", file=out)
        for peers in LAYERS:
            print("  " + ", ".join(peers), file=out)
        print("forbidden although lower: " +
              ", ".join(f"{a} -> {b}" for a, b in sorted(FORBIDDEN)), file=out)
        print("folder include graph (folder -> included folder: number of includes):", file=out)
        for folder in sorted(graph, key=lambda f: (layers.get(f, len(LAYERS)), f)):
            targets = graph[folder]
            shown = ", ".join(f"{t}: {targets[t]}" for t in
                              sorted(targets, key=lambda t: (layers.get(t, len(LAYERS)), t)))
            print(f"  {folder} -> {shown}", file=out)
    for e in errors:
        print(e, file=out)
    if errors:
        print(f"check_layering: {len(errors)} violation(s)", file=out)
        return 1
    if not quiet:
        print("check_layering: ok", file=out)
    return 0


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--root", default=os.path.dirname(os.path.dirname(
        os.path.abspath(__file__))), help="tree whose src/ is checked")
    parser.add_argument("--quiet", action="store_true", help="print only the violations")
    args = parser.parse_args(argv)
    return check(args.root, args.quiet)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
