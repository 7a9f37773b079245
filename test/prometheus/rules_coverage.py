#!/usr/bin/env python3
"""Checks deploy/prometheus/rules.yml against its tests and the exporter's tables.

- every alert has a promtool case where it fires and one where it stays quiet, every recording
  rule a case with samples and one without (test/prometheus/rules_test.yml);
- GpuCriticalXid's annotation names each Xid of its selector, with the text of
  src/fields/xid_text.cc (the exporter's err_msg), and no other;
- every DCGM field the rules use is collected by etc/observability-counters.csv.

Usage: rules_coverage.py SOURCE_DIR
"""
import re
import sys

import yaml


def xid_texts(path):
    src = open(path).read()
    body = re.search(r"kXidTexts\[\] = \{(.*?)\n\};", src, re.S).group(1)
    entries = re.findall(r'((?:"(?:[^"\\]|\\.)*"\s*)+),?\s*//\s*(\d+)', body)
    return {n: "".join(re.findall(r'"((?:[^"\\]|\\.)*)"', s)) for s, n in entries}


def main():
    root = sys.argv[1]
    rules = yaml.safe_load(open(f"{root}/deploy/prometheus/rules.yml"))
    tests = yaml.safe_load(open(f"{root}/test/prometheus/rules_test.yml"))
    problems = []
    alerts, records = {}, {}
    for group in rules["groups"]:
        for rule in group["rules"]:
            if "alert" in rule:
                alerts[rule["alert"]] = rule
            else:
                records[rule["record"]] = rule
    fires, quiet, samples, empty = set(), set(), set(), set()
    for case in tests["tests"]:
        for t in case.get("alert_rule_test", []):
            (fires if t.get("exp_alerts") else quiet).add(t["alertname"])
        for t in case.get("promql_expr_test", []):
            (samples if t.get("exp_samples") else empty).add(t["expr"])
    for name in alerts:
        if name not in fires:
            problems.append(f"alert {name}: no test case where it fires")
        if name not in quiet:
            problems.append(f"alert {name}: no test case where it stays quiet")
    for name in records:
        if name not in samples:
            problems.append(f"recording rule {name}: no test case with samples")
        if name not in empty:
            problems.append(f"recording rule {name}: no test case without samples")
    for name in (fires | quiet) - set(alerts):
        problems.append(f"test names an unknown alert {name}")

    texts = xid_texts(f"{root}/src/fields/xid_text.cc")
    if len(texts) < 170:
        problems.append(f"parsed only {len(texts)} Xid texts from xid_text.cc")
    rule = alerts["GpuCriticalXid"]
    selector = set(re.search(r'xid=~"([0-9|]+)"', rule["expr"]).group(1).split("|"))
    named = dict(re.findall(r'eq \$labels\.xid "(\d+)" \}\}([^{]*)\{\{', rule["annotations"]["description"]))
    if set(named) != selector:
        problems.append(f"GpuCriticalXid: annotation names Xids {sorted(set(named) ^ selector)} "
                        "that the selector does not, or the reverse")
    for xid, text in named.items():
        if texts.get(xid) != text:
            problems.append(f"GpuCriticalXid: Xid {xid} is {text!r} in rules.yml, "
                            f"{texts.get(xid)!r} in xid_text.cc")

    collected = set()
    for line in open(f"{root}/etc/observability-counters.csv"):
        if line.strip() and not line.lstrip().startswith("#"):
            collected.add(line.split(",")[0].strip())
    used = set()
    for rule in list(alerts.values()) + list(records.values()):
        used |= {n for n in re.findall(r"\bDCGM_[A-Z0-9_]+", rule["expr"]) if not n.startswith("DCGM_FR_")}
    for name in sorted(used - collected):
        problems.append(f"{name} is used by a rule but not in etc/observability-counters.csv")

    if problems:
        print("\n".join("FAIL: " + p for p in problems))
        sys.exit(1)
    print(f"ok: {len(alerts)} alerts and {len(records)} recording rules each have a firing and a "
          f"quiet case; {len(named)} critical Xids named as in xid_text.cc; "
          f"{len(used)} DCGM fields, all collected")


if __name__ == "__main__":
    main()
