#!/usr/bin/env bash
# deploy/prometheus checked by Prometheus's own tool (Debian's promtool): the rules load
# (check rules), every rule test passes (test rules), each rule has a firing and a quiet case
# (rules_coverage.py), the scrape job is a valid Prometheus config with the rules
# (check config), rename-rules.yml is what its generator writes and passes its own tests, its
# pairs name fields of our catalog (rename_pairs_check.py), the kube-prometheus-stack values
# carry the same job, the PrometheusRule made as docs/prometheus-grafana.md says holds the same
# groups, and the relabel rules keep exactly the exporters' targets (relabel_check.py).
set -euo pipefail
SOURCE_DIR="${SOURCE_DIR:?}"
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
command -v promtool >/dev/null || fail "promtool not installed (scripts/install-deps.sh)"
P="$SOURCE_DIR/deploy/prometheus"

promtool check rules "$P/rules.yml" "$P/rename-rules.yml" || fail "promtool check rules"
(cd "$SOURCE_DIR/test/prometheus" && promtool test rules rules_test.yml rename_rules_test.yml) ||
  fail "promtool test rules"
# rename-rules.yml is generated: the committed file must be what scripts/gen_rename_rules.py writes.
python3 "$SOURCE_DIR/scripts/gen_rename_rules.py" "$WORK/rename-rules.yml"
cmp -s "$WORK/rename-rules.yml" "$P/rename-rules.yml" ||
  fail "deploy/prometheus/rename-rules.yml differs from what scripts/gen_rename_rules.py writes: run it"
python3 "$SOURCE_DIR/test/prometheus/rules_coverage.py" "$SOURCE_DIR"
python3 "$SOURCE_DIR/test/prometheus/rename_pairs_check.py" "$SOURCE_DIR"

# A whole Prometheus config around the job, as a standalone Prometheus would load it. Debian's
# Prometheus is built without Kubernetes discovery (it rejects kubernetes_sd_configs as an
# unknown field), so the check swaps that block, and only it, for a static target; everything
# else (relabel regexes, limits, honor_labels, timeouts) is checked as written.
grep -q '^  kubernetes_sd_configs:$' "$P/scrape-config.yaml" || fail "scrape-config.yaml: no kubernetes_sd_configs"
{
  printf 'global:\n  scrape_interval: 15s\nrule_files:\n  - %s\n  - %s\nscrape_configs:\n' \
    "$P/rules.yml" "$P/rename-rules.yml"
  sed -e 's/^  kubernetes_sd_configs:$/  static_configs:/' -e "s/^    - role: pod$/    - targets: ['127.0.0.1:9400']/" \
    -e 's/^/  /' "$P/scrape-config.yaml"
} >"$WORK/prometheus.yml"
grep -q "targets: \['127.0.0.1:9400'\]" "$WORK/prometheus.yml" || fail "role: pod not found to swap"
promtool check config "$WORK/prometheus.yml" || fail "promtool check config"

python3 - "$P" <<'PY'
import subprocess, sys, yaml
p = sys.argv[1]
job = yaml.safe_load(open(f"{p}/scrape-config.yaml"))
values = yaml.safe_load(open(f"{p}/kube-prometheus-stack-values.yaml"))
assert job[0]["kubernetes_sd_configs"] == [{"role": "pod"}], job[0]["kubernetes_sd_configs"]
assert values["prometheus"]["prometheusSpec"]["additionalScrapeConfigs"] == job, \
    "kube-prometheus-stack-values.yaml's additionalScrapeConfigs differ from scrape-config.yaml"
# The PrometheusRule of docs/prometheus-grafana.md: rules.yml indented under spec.
rules_text = open(f"{p}/rules.yml").read()
manifest = ("apiVersion: monitoring.coreos.com/v1\nkind: PrometheusRule\n"
            "metadata: {name: nvml-exporter}\nspec:\n" +
            "".join("  " + l if l.strip() else l for l in rules_text.splitlines(True)))
doc = yaml.safe_load(manifest)
assert doc["spec"]["groups"] == yaml.safe_load(rules_text)["groups"], "PrometheusRule groups differ"
print("ok: values file carries scrape-config.yaml; rules.yml indents into a PrometheusRule")
PY
python3 "$SOURCE_DIR/test/prometheus/relabel_check.py" "$SOURCE_DIR"
echo "config_test: all passed"
