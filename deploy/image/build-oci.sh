#!/usr/bin/env bash
# The image without a container engine that pulls: the root filesystem of make-rootfs.sh (the
# Dockerfile's `rootfs` stage, same script, same package list) committed with buildah, configured
# with the Dockerfile's final stage (its ARG, LABEL, ENV, USER, EXPOSE, WORKDIR, ENTRYPOINT and
# CMD, read from the Dockerfile itself so the two cannot drift), written as an OCI archive.
#
# usage: build-oci.sh SOURCE_DIR ROOTFS_DIR OUT.tar [TAG] [VERSION] [REVISION]
# Writes buildah's storage under OUT.tar's folder (vfs driver: no overlay mounts needed) and
# removes it afterwards. Needs root or user namespaces (buildah).
set -euo pipefail

src="$1"
rootfs="$2"
archive="$3"
tag="${4:-nvml-exporter:dev}"
version="${5:-dev}"
revision="${6:-$(git -C "$src" rev-parse HEAD 2>/dev/null || echo unknown)}"

for tool in buildah python3; do
  command -v "$tool" >/dev/null || { echo "build-oci: $tool not installed" >&2; exit 1; }
done
[ -x "$rootfs/usr/bin/nvml-exporter" ] || { echo "build-oci: $rootfs is not a root made by make-rootfs.sh" >&2; exit 1; }

work="$(dirname "$(realpath -m "$archive")")/buildah"
rm -rf "$work"
mkdir -p "$work"
# podman/buildah's default ulimits (nofile, nproc) cannot be applied on these machines.
printf '[containers]\ndefault_ulimits = []\n' >"$work/containers.conf"
export CONTAINERS_CONF="$work/containers.conf"
bah() { buildah --root "$work/storage" --runroot "$work/run" --storage-driver vfs "$@"; }

# The final stage's configuration, as buildah config arguments (one per line, NUL-free).
# (Into a file first: a process substitution's exit status would be lost.)
python3 - "$src/Dockerfile" "$version" "$revision" >"$work/config.args" <<'EOF'
import json, re, shlex, sys
path, version, revision = sys.argv[1:4]
lines, cur = [], ""
for n, raw in enumerate(open(path), 1):
    line = raw.rstrip("\n")
    if not cur and (not line.strip() or line.lstrip().startswith("#")):
        continue
    cur += line[:-1] + " " if line.endswith("\\") else line
    if not line.endswith("\\"):
        lines.append((n, cur.strip()))
        cur = ""
last_from = max(i for i, (_, l) in enumerate(lines) if l.upper().startswith("FROM "))
args = {"VERSION": version, "REVISION": revision}
defaults = {}
def subst(v):
    return re.sub(r"\$\{(\w+)\}|\$(\w+)", lambda m: args.get(m.group(1) or m.group(2), defaults.get(m.group(1) or m.group(2), "")), v)
def pairs(rest, n):
    out = []
    for tok in shlex.split(rest):
        if "=" not in tok:
            sys.exit(f"{path}:{n}: expected KEY=VALUE, got {tok!r}")
        k, v = tok.split("=", 1)
        out.append((k, subst(v)))
    return out
for n, l in lines[last_from + 1:]:
    op, _, rest = l.partition(" ")
    op = op.upper()
    if op == "ARG":
        k, _, v = rest.strip().partition("=")
        defaults[k] = v
        args.setdefault(k, v)
    elif op == "COPY":
        continue  # the root filesystem: build-oci.sh copies the rootfs folder
    elif op == "LABEL":
        for k, v in pairs(rest, n):
            print(f"--label={k}={v}")
    elif op == "ENV":
        for k, v in pairs(rest, n):
            print(f"--env={k}={v}")
    elif op == "USER":
        print(f"--user={rest.strip()}")
    elif op == "EXPOSE":
        for p in rest.split():
            print(f"--port={p}")
    elif op == "WORKDIR":
        print(f"--workingdir={rest.strip()}")
    elif op in ("ENTRYPOINT", "CMD"):
        try:
            json.loads(rest)
        except ValueError:
            sys.exit(f"{path}:{n}: {op} must be in JSON (exec) form")
        print(f"--{op.lower()}={rest.strip()}")
    else:
        sys.exit(f"{path}:{n}: {op} in the final stage: build-oci.sh cannot apply it (see the comment there)")
EOF
mapfile -t config <"$work/config.args"
[ "${#config[@]}" -gt 0 ] || { echo "build-oci: no configuration read from $src/Dockerfile" >&2; exit 1; }

ctr=$(bah from --quiet scratch)
bah copy --quiet "$ctr" "$rootfs" / >/dev/null
bah config "${config[@]}" \
  --label "org.opencontainers.image.created=$(date -u +%Y-%m-%dT%H:%M:%SZ)" "$ctr"
rm -f "$archive"
bah commit --quiet --format oci --disable-compression=false "$ctr" "oci-archive:$archive:$tag" >/dev/null
bah rm "$ctr" >/dev/null
rm -rf "$work"
echo "build-oci: $archive ($tag, $(du -h "$archive" | cut -f1))"
