"""Draws a Grafana dashboard's panels from Prometheus query results with matplotlib.

Not Grafana: a picture of what each panel shows, laid out on the dashboard's own grid
(gridPos), for docs/dashboards/ and the dashboards test. Timeseries panels are line charts of
their range queries, stat panels the number, bargauges horizontal bars, tables their rows.
render() returns how many panels had data; a panel without data is drawn with "no data".
"""
import datetime
import re

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

SCALES = {  # unit -> (divisor, suffix) for the axis and numbers
    "percent": (1, "%"), "percentunit": (0.01, "%"), "watt": (1, "W"), "celsius": (1, "°C"),
    "bytes": (2**30, "GiB"), "hertz": (1e9, "GHz"), "Bps": (2**20, "MiB/s"), "MBs": (1, "MB/s"),
    "ops": (1, "/s"), "none": (1, ""),
}


def legend_of(fmt, labels):
    # Grafana substitutes the host_label variable first; the demo's exporter spells it hostname.
    fmt = (fmt or "").replace("${host_label}", "hostname")
    text = re.sub(r"\{\{\s*(\w+)\s*\}\}", lambda m: labels.get(m.group(1), ""), fmt)
    return text.strip() or ",".join(f"{k}={v}" for k, v in labels.items() if k != "__name__") or "value"


def scaled(value, unit):
    div, suffix = SCALES.get(unit, (1, ""))
    v = float(value) / div
    return (f"{v:,.0f} {suffix}" if abs(v) >= 1000 else f"{v:.3g} {suffix}").strip()


def render(dash, data_by_panel, path, start, end):
    panels = [p for p in dash["panels"] if p["type"] != "row"]
    rows = max(p["gridPos"]["y"] + p["gridPos"]["h"] for p in dash["panels"])
    fig = plt.figure(figsize=(24, rows * 0.55 + 1))
    fig.suptitle(f"{dash['title']} — simulated GPUs, "
                 f"{datetime.datetime.utcfromtimestamp(start):%H:%M:%S}–"
                 f"{datetime.datetime.utcfromtimestamp(end):%H:%M:%S} UTC", fontsize=14)
    drawn = 0
    for p in panels:
        g = p["gridPos"]
        # The grid's 24 columns over 4 %..99 % of the width: room for the left axis labels.
        ax = fig.add_axes([0.04 + g["x"] / 24 * 0.95 + 0.02 * (g["x"] > 0),
                           1 - (g["y"] + g["h"]) / (rows + 1) + 0.01,
                           g["w"] / 24 * 0.95 - 0.02 * (g["x"] > 0) - 0.006, g["h"] / (rows + 1) - 0.035])
        ax.set_title(p["title"], fontsize=9, loc="left")
        unit = p.get("fieldConfig", {}).get("defaults", {}).get("unit", "none")
        div, suffix = SCALES.get(unit, (1, ""))
        results = data_by_panel.get(p["id"], [])
        has = any(r for _, r in results)
        drawn += has
        if not has:
            ax.text(0.5, 0.5, "no data", ha="center", va="center", transform=ax.transAxes)
            ax.set_xticks([]), ax.set_yticks([])
            continue
        if p["type"] == "timeseries":
            stacked = p["fieldConfig"]["defaults"]["custom"]["stacking"]["mode"] == "normal"
            lines = [([float(x) - start for x, _ in s["values"]], [float(y) / div for _, y in s["values"]],
                      legend_of(t.get("legendFormat"), s["metric"])) for t, result in results for s in result]
            if stacked and len({tuple(x) for x, _, _ in lines}) == 1:
                ax.stackplot(lines[0][0], *[y for _, y, _ in lines], labels=[n for _, _, n in lines], alpha=0.7)
            else:
                for xs, ys, name in lines:
                    ax.plot(xs, ys, linewidth=1, label=name)
            ax.set_xlabel("s", fontsize=7)
            if suffix:
                ax.set_ylabel(suffix, fontsize=7)
            ax.tick_params(labelsize=7)
            ax.legend(fontsize=6, loc="upper left", ncol=2, framealpha=0.6)
        elif p["type"] == "stat":
            value = results[0][1][0]["value"][1]
            ax.text(0.5, 0.45, scaled(value, unit), ha="center", va="center", fontsize=22,
                    transform=ax.transAxes, color="tab:green")
            ax.set_xticks([]), ax.set_yticks([])
        elif p["type"] == "bargauge":
            t, result = results[0]
            names = [legend_of(t.get("legendFormat"), s["metric"]) for s in result]
            ax.barh(names, [float(s["value"][1]) / div for s in result], color="tab:blue")
            ax.invert_yaxis()
            ax.tick_params(labelsize=7)
            if suffix:
                ax.set_xlabel(suffix, fontsize=7)
        elif p["type"] == "table":
            t, result = results[0]
            order = p["transformations"][0]["options"]["indexByName"]
            cols = [c for c in sorted(order, key=order.get)]
            cells = [[s["metric"].get(c, s["value"][1] if c == "Value" else "") for c in cols]
                     for s in result[:12]]
            ax.axis("off")
            tab = ax.table(cellText=cells, colLabels=cols, loc="upper center", cellLoc="left")
            tab.auto_set_font_size(False)
            tab.set_fontsize(7)
    fig.savefig(path, dpi=72)
    plt.close(fig)
    return drawn
