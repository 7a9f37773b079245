# Sourced by the GPU scripts that stand in for Kubernetes: fake_proc_entry ROOT PID POD_UID CID
# puts PID in pod POD_UID's container CID under proc root ROOT, as a cgroup v2 systemd path of the
# kubelet's, its stat file being the real one (linked), so that the exporter's
# --host-proc-root attributes the real process to that pod.
fake_proc_entry() {
  mkdir -p "$1/$2"
  ln -s "/proc/$2/stat" "$1/$2/stat"
  printf '0::/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod%s.slice/cri-containerd-%s.scope\n' \
    "${3//-/_}" "$4" >"$1/$2/cgroup"
}
