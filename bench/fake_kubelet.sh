# Sourced by bench scripts: start_fake_kubelet EXPORTER SCENARIO CSV PODS starts the kubelet
# fixture on $work/kubelet.sock answering PODS pods that time-slice the scenario's GPUs
# ("GPU-…::k"), adds its pid to pids, and waits until it is ready. Needs $build, $work, pids.
start_fake_kubelet() {
  local exporter="$1" scenario="$2" csv="$3" pods="$4"
  "$exporter" --fake-gpus --fake-gpus-scenario "$scenario" -f "$csv" --once 2>/dev/null |
    sed -n 's/^nvml_exporter_gpu_up{gpu="[0-9]*",UUID="\([^"]*\)"} 1$/\1/p' >"$work/uuids.txt"
  python3 - "$work/uuids.txt" "$pods" >"$work/script.json" <<'PY'
import json, sys
uuids = open(sys.argv[1]).read().split()
pods = [{"namespace": f"team-{i % 20}", "name": f"inference-{i}",
         "containers": [{"name": "server", "devices": [
             {"resource_name": "nvidia.com/gpu",
              "device_ids": [f"{uuids[i % len(uuids)]}::{i // len(uuids)}"]}]}]}
        for i in range(int(sys.argv[2]))]
print(json.dumps({"answers": [{"pods": pods}]}))
PY
  sock="$work/kubelet.sock"
  "$build/test/fixtures/kubelet_fixture" --socket "$sock" --script "$work/script.json" \
    >"$work/fixture.out" 2>"$work/fixture.log" &
  pids+=($!)
  for _ in $(seq 100); do grep -q ready "$work/fixture.out" && break; sleep 0.05; done
}
