#!/usr/bin/env bash
# DRA end to end (-k --kubernetes-enable-dra): the daemon (--once, frozen clock) on the MIG
# scenario (GPU 0 split into three instances, GPU 1 whole) against the fake kubelet answering
# dynamic resources (testdata/kubelet/dra_mig.json: a whole-GPU claim, a MIG claim shared by two
# containers of one pod, a device-plugin MIG pod, another driver's claim, a claim on a device no
# slice names) and the fake API server serving the GPU driver's ResourceSlices in
# resource.k8s.io/v1beta1 only (testdata/apiserver/resourceslices_node1.json), so the daemon's
# v1 list gets 404 and falls back. Checks the page against testdata/golden/once_mig_dra.txt
# (NVMLX_UPDATE_GOLDEN=1 regenerates it), exact lines with the dra_* labels, the field selector
# the daemon sent, that without --kubernetes-enable-dra the claims label nothing, and (running
# daemon) that a late claim on a newly published device is picked up without the slice period.
source "$(dirname "$0")/lib.sh"
FIXTURE="$BUILD_DIR/test/fixtures/kubelet_fixture"
[ -x "$FIXTURE" ] || fail "missing $FIXTURE"
CTL="$WORK/ctl"
mkdir -p "$CTL"
echo ok >"$CTL/mode"
echo v1beta1 >"$CTL/resourceslice_versions"
cp "$SOURCE_DIR/testdata/apiserver/resourceslices_node1.json" "$CTL/resourceslices.json"
# The pods the kubelet names (uids and labels for --kubernetes-enable-pod-uid/-labels).
API_PODS=pods_dra_node1.json start_apiserver

sock="$WORK/kubelet.sock"
"$FIXTURE" --socket "$sock" --script "$SOURCE_DIR/testdata/kubelet/dra_mig.json" \
  >"$WORK/fixture.out" 2>>"$WORK/fixture.log" &
PIDS+=("$!")
for _ in $(seq 100); do grep -q ready "$WORK/fixture.out" 2>/dev/null && break; sleep 0.05; done
grep -q ready "$WORK/fixture.out" || fail "fixture did not start"

once() {  # extra flags...
  NODE_NAME=node1 NVMLX_SIMGPU_FROZEN_TIME_S=100 "$EXPORTER" \
    --fake-gpus-scenario "$SOURCE_DIR/testdata/scenarios/mig.yaml" \
    -f "$SOURCE_DIR/testdata/golden/mig_counters.csv" --once \
    -k --pod-resources-kubelet-socket "$sock" \
    --kubernetes-api-server "https://127.0.0.1:$api_port" --kubernetes-token-file "$WORK/token" \
    --kubernetes-ca-file "$WORK/cert.pem" "$@" 2>>"$WORK/exporter.log" | drop_varying_lines
}

got="$WORK/dra.txt"
once --kubernetes-enable-dra >"$got" || { cat "$WORK/exporter.log" >&2; fail "--once failed"; }
if golden_matches dra "$got" "$SOURCE_DIR/testdata/golden/once_mig_dra.txt"; then
  pass "$(grep -c '^DCGM_' "$got") series match the golden file"
fi

# Exact lines: the whole GPU claimed by ml/train, and the MIG instance GI 7 (1g.18gb) claimed by
# both containers of ml/infer, each its own copy; the device-plugin pod on GI 1 keeps its labels.
base1='gpu="1",UUID="GPU-00000000-0000-0000-0000-000000000001",pci_bus_id="00000000:07:00.0",device="nvidia1",modelName="NVIDIA H200",hostname="node1",DCGM_FI_DRIVER_VERSION="580.159.04"'
base0='gpu="0",UUID="GPU-00000000-0000-0000-0000-000000000000",pci_bus_id="00000000:06:00.0",device="nvidia0",modelName="NVIDIA H200"'
mig7=',dra_claim_name="infer-mig",dra_claim_namespace="ml",dra_device_name="gpu-0-mig-7-0-2",dra_driver_name="gpu.nvidia.com",dra_mig_device_uuid="MIG-00000000-0000-0000-0000-000700000002",dra_mig_profile="1g.18gb",dra_pool_name="node1",namespace="ml",pod="infer"} 41'
for line in \
  "DCGM_FI_DEV_GPU_UTIL{$base1,container=\"main\",dra_claim_name=\"train-gpu\",dra_claim_namespace=\"ml\",dra_device_name=\"gpu-1\",dra_driver_name=\"gpu.nvidia.com\",dra_pool_name=\"node1\",namespace=\"ml\",pod=\"train\"} 55" \
  "DCGM_FI_DEV_GPU_TEMP{$base0,GPU_I_PROFILE=\"1g.18gb\",GPU_I_ID=\"7\",hostname=\"node1\",DCGM_FI_DRIVER_VERSION=\"580.159.04\",container=\"server\"$mig7" \
  "DCGM_FI_DEV_GPU_TEMP{$base0,GPU_I_PROFILE=\"1g.18gb\",GPU_I_ID=\"7\",hostname=\"node1\",DCGM_FI_DRIVER_VERSION=\"580.159.04\",container=\"sidecar\"$mig7" \
  "DCGM_FI_DEV_GPU_TEMP{$base0,GPU_I_PROFILE=\"3g.71gb\",GPU_I_ID=\"1\",hostname=\"node1\",DCGM_FI_DRIVER_VERSION=\"580.159.04\",container=\"job\",namespace=\"batch\",pod=\"legacy\"} 41" \
  "DCGM_FI_DEV_GPU_TEMP{$base0,GPU_I_PROFILE=\"1g.35gb\",GPU_I_ID=\"9\",hostname=\"node1\",DCGM_FI_DRIVER_VERSION=\"580.159.04\"} 41"; do
  grep -qxF -- "$line" "$got" || fail "missing line: $line"
done
# No other driver's claim, no unresolved claim, no second copy of the whole GPU.
! grep -q 'router\|pending\|compute-domain' "$got" || fail "a claim that names no GPU labelled a series"
[ "$(grep -c '^DCGM_FI_DEV_GPU_UTIL{gpu="1"' "$got")" = 1 ] || fail "GPU 1 should have one GPU_UTIL series"
pass "dra_* labels on the claimed GPU and MIG instance, device-plugin pod kept"

# The slice lists: v1 first (404 here, not logged by the server), then v1beta1 with the driver
# and node field selector.
grep -qxF "v1beta1 spec.driver=gpu.nvidia.com,spec.nodeName=node1" "$CTL/resourceslice_queries" ||
  fail "unexpected slice queries: $(cat "$CTL/resourceslice_queries")"
! grep -q '^v1 ' "$CTL/resourceslice_queries" || fail "v1 should have been refused"
pass "ResourceSlices listed through v1beta1 after v1's 404, field-selected on driver and node"

# Without the flag the claims label nothing; the device-plugin pod still does.
once >"$WORK/nodra.txt" || fail "--once without DRA failed"
! grep -q 'dra_\|pod="train"\|pod="infer"' "$WORK/nodra.txt" || fail "DRA labels without --kubernetes-enable-dra"
grep -q 'pod="legacy"' "$WORK/nodra.txt" || fail "device-plugin pod lost without DRA"
! grep -q 'level=warn.*DRA\|"DRA' "$WORK/exporter.log" || fail "unexpected DRA warning: $(grep DRA "$WORK/exporter.log")"
pass "without --kubernetes-enable-dra the claims are ignored"

# Pod identity on the DRA copies (dcgm-exporter 4.8.4, upstream #718), switched on by the env
# vars the GPU Operator's DRA DaemonSet renders (manifests/state-dcgm-exporter/0700_daemonset.yaml:
# KUBERNETES_ENABLE_DRA, ..._ENABLE_POD_LABELS, ..._ENABLE_POD_UID, the allowlist joined with
# commas): pod_uid among the attributes, the admitted pod labels (sanitised) among the CSV's
# labels, on the claimed GPU and on each MIG copy, and on the device-plugin pod alike.
KUBERNETES_ENABLE_DRA=true DCGM_EXPORTER_KUBERNETES_ENABLE_POD_UID=true \
  DCGM_EXPORTER_KUBERNETES_ENABLE_POD_LABELS=true \
  DCGM_EXPORTER_KUBERNETES_POD_LABEL_ALLOWLIST_REGEX='^team$,^app' once >"$WORK/identity.txt" ||
  { cat "$WORK/exporter.log" >&2; fail "--once with pod identity failed"; }
mig7id=',dra_claim_name="infer-mig",dra_claim_namespace="ml",dra_device_name="gpu-0-mig-7-0-2",dra_driver_name="gpu.nvidia.com",dra_mig_device_uuid="MIG-00000000-0000-0000-0000-000700000002",dra_mig_profile="1g.18gb",dra_pool_name="node1",namespace="ml",pod="infer",pod_uid="0d7a1c2e-2222-4a5b-8c9d-00000000a002"} 41'
for line in \
  "DCGM_FI_DEV_GPU_UTIL{$base1,app_kubernetes_io_name=\"trainer\",team=\"vision\",container=\"main\",dra_claim_name=\"train-gpu\",dra_claim_namespace=\"ml\",dra_device_name=\"gpu-1\",dra_driver_name=\"gpu.nvidia.com\",dra_pool_name=\"node1\",namespace=\"ml\",pod=\"train\",pod_uid=\"0d7a1c2e-1111-4a5b-8c9d-00000000a001\"} 55" \
  "DCGM_FI_DEV_GPU_TEMP{$base0,GPU_I_PROFILE=\"1g.18gb\",GPU_I_ID=\"7\",hostname=\"node1\",DCGM_FI_DRIVER_VERSION=\"580.159.04\",app=\"server\",team=\"serving\",container=\"server\"$mig7id" \
  "DCGM_FI_DEV_GPU_TEMP{$base0,GPU_I_PROFILE=\"1g.18gb\",GPU_I_ID=\"7\",hostname=\"node1\",DCGM_FI_DRIVER_VERSION=\"580.159.04\",app=\"server\",team=\"serving\",container=\"sidecar\"$mig7id" \
  "DCGM_FI_DEV_GPU_TEMP{$base0,GPU_I_PROFILE=\"3g.71gb\",GPU_I_ID=\"1\",hostname=\"node1\",DCGM_FI_DRIVER_VERSION=\"580.159.04\",app=\"legacy\",container=\"job\",namespace=\"batch\",pod=\"legacy\",pod_uid=\"0d7a1c2e-3333-4a5b-8c9d-00000000a003\"} 41"; do
  grep -qxF -- "$line" "$WORK/identity.txt" || fail "missing line: $line"
done
! grep -q 'pod_template_hash' "$WORK/identity.txt" || fail "a label outside the allowlist was copied"
[ "$(grep -c '^DCGM_FI_DEV_GPU_UTIL{gpu="1"' "$WORK/identity.txt")" = 1 ] ||
  fail "pod identity changed the series count of GPU 1"
pass "DRA copies carry pod_uid and the allowlisted pod labels (operator env), device-plugin pod too"
# The running daemon: a claim that appears later, on a device the driver published after the
# daemon's first slice list, is attributed within a few kubelet refreshes (the kubelet refresher
# asks for a new slice list at once), long before the 30 s slice period.
python3 - "$SOURCE_DIR/testdata/kubelet/dra_mig.json" "$WORK/late.json" <<'PY'
import json, sys
pods = json.load(open(sys.argv[1]))["answers"][0]["pods"]
early = [p for p in pods if p["name"] != "train"]
json.dump({"answers": [{"pods": early, "repeat": 8}, {"pods": pods}]}, open(sys.argv[2], "w"))
PY
python3 - "$SOURCE_DIR/testdata/apiserver/resourceslices_node1.json" "$CTL/resourceslices.json" <<'PY'
import json, sys
lst = json.load(open(sys.argv[1]))
devs = lst["items"][0]["spec"]["devices"]
lst["items"][0]["spec"]["devices"] = [d for d in devs if d["name"] != "gpu-1"]
json.dump(lst, open(sys.argv[2], "w"))
PY
sock2="$WORK/kubelet2.sock"
"$FIXTURE" --socket "$sock2" --script "$WORK/late.json" >"$WORK/fixture2.out" 2>>"$WORK/fixture.log" &
PIDS+=("$!")
for _ in $(seq 100); do grep -q ready "$WORK/fixture2.out" 2>/dev/null && break; sleep 0.05; done
grep -q ready "$WORK/fixture2.out" || fail "second fixture did not start"
port=$(free_port)
NODE_NAME=node1 start_exporter "$port" -c 500 -f "$SOURCE_DIR/testdata/golden/mig_counters.csv" \
  --fake-gpus-scenario "$SOURCE_DIR/testdata/scenarios/mig.yaml" \
  -k --pod-resources-kubelet-socket "$sock2" --kubernetes-enable-dra \
  --kubernetes-api-server "https://127.0.0.1:$api_port" --kubernetes-token-file "$WORK/token" \
  --kubernetes-ca-file "$WORK/cert.pem"
# The daemon has listed the slices (before serving): now the driver publishes gpu-1.
cp "$SOURCE_DIR/testdata/apiserver/resourceslices_node1.json" "$CTL/resourceslices.json"
# The kubelet refresher runs beside the collector: the first pages may precede its first
# answer (a TSan run of CI read the page before it), so wait for it, bounded.
await_page "http://127.0.0.1:$port/metrics" 'pod="infer"' 10 ||
  { cat "$WORK/exporter.log" >&2; fail "daemon: MIG claim not attributed within 10 s"; }
await_page "http://127.0.0.1:$port/metrics" 'dra_claim_name="train-gpu"' 20 ||
  { cat "$WORK/exporter.log" >&2; fail "daemon: the late claim was not attributed within 20 s"; }
pass "daemon: a late claim on a newly published device is attributed without waiting for the slice period"
echo "dra_test: all passed"
