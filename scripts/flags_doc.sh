#!/usr/bin/env bash
# docs/flags.md's generated part: the output of flags_doc (src/config/flags_doc.cc, the flag
# tables of src/config) between the page's two marker lines; the text around them is written by
# hand and kept as it is.
#
#   scripts/flags_doc.sh FLAGS_DOC_BINARY DOC            rewrite DOC (make flags-doc)
#   scripts/flags_doc.sh --check FLAGS_DOC_BINARY DOC    exit 1 with the diff when DOC differs
#                                                        (the ctest test flags_doc_check)
set -euo pipefail
check=0
if [ "${1:-}" = --check ]; then check=1; shift; fi
bin="${1:?usage: scripts/flags_doc.sh [--check] FLAGS_DOC_BINARY DOC}"
doc="${2:?usage: scripts/flags_doc.sh [--check] FLAGS_DOC_BINARY DOC}"
begin='<!-- flags_doc: begin. Generated from the flag tables of src/config by `make flags-doc`: edit those, not this. -->'
end='<!-- flags_doc: end -->'

for marker in "$begin" "$end"; do
  n="$(grep -cxF -e "$marker" "$doc" || true)"
  if [ "$n" -ne 1 ]; then
    echo "flags_doc: $doc must hold this line exactly once (it holds it $n times):" >&2
    echo "$marker" >&2
    exit 1
  fi
done
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
"$bin" >"$tmp/generated"
awk -v begin="$begin" -v end="$end" -v gen="$tmp/generated" '
  $0 == begin { print; while ((getline line < gen) > 0) print line; skip = 1; next }
  $0 == end { skip = 0 }
  !skip { print }
' "$doc" >"$tmp/new"

if [ "$check" -eq 1 ]; then
  if ! cmp -s "$doc" "$tmp/new"; then
    echo "flags_doc: $doc is not what the flag tables of src/config generate:" >&2
    diff -u "$doc" "$tmp/new" >&2 || true
    echo "flags_doc: regenerate it with: make flags-doc" >&2
    exit 1
  fi
  echo "flags_doc: $doc matches the flag tables"
  exit 0
fi
if cmp -s "$doc" "$tmp/new"; then
  echo "flags_doc: $doc is up to date"
else
  cp "$tmp/new" "$doc"
  echo "flags_doc: rewrote $doc"
fi
