// The live page: polls api/v1/snapshot and api/v1/history (docs/live-page.md) every collect
// interval and redraws. Plain DOM, no library; every text from the exporter goes through
// textContent, never innerHTML.
"use strict";
(function () {
  const SPARKS = [
    { key: "gpu_util", label: "Utilisation %", min: 0, max: () => 100 },
    { key: "tensor_active", label: "Tensor active", min: 0, max: () => 1 },
    { key: "power_w", label: "Power W", min: 0, max: (g, v) => Math.max(1, ...v) },
    { key: "fb_used_mib", label: "Memory MiB", min: 0,
      max: (g, v) => (g && g.fb_total_mib) || Math.max(1, ...v) },
  ];
  let intervalMs = 5000;
  let history = null;

  function el(tag, cls, text) {
    const e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined && text !== null) e.textContent = String(text);
    return e;
  }
  function num(v, digits) {
    return v === null || v === undefined ? "\u2014" : Number(v).toFixed(digits);
  }
  function pct(v) { return v === null || v === undefined ? "\u2014" : (v * 100).toFixed(0) + " %"; }
  function setStatus(text, level) {
    const s = document.getElementById("status");
    s.textContent = text;
    s.className = "status" + (level ? " " + level : "");
  }

  // A polyline over the last window, broken where a value is null.
  function sparkPath(t, values, lo, hi, t0, t1) {
    let d = "";
    let pen = false;
    const span = Math.max(1, t1 - t0);
    for (let i = 0; i < t.length; i++) {
      const v = values[i];
      if (v === null || v === undefined) { pen = false; continue; }
      const x = ((t[i] - t0) / span) * 100;
      const y = 36 - ((Math.min(hi, Math.max(lo, v)) - lo) / Math.max(1e-9, hi - lo)) * 34 - 1;
      d += (pen ? "L" : "M") + x.toFixed(2) + " " + y.toFixed(2);
      pen = true;
    }
    return d;
  }

  function stateOf(g) {
    if (g.state === "lost") return ["bad", "LOST", "GPU lost: fell off the bus; values are gone until it is reset"];
    if (g.state === "stale") return ["bad", "STALE", "Reads stuck in the driver: no fresh values"];
    if (g.state === "down") return ["bad", "DOWN", "Every read failed this round"];
    if (g.health === "fail") return ["bad", "HEALTH FAIL", null];
    if (g.health === "warn" || g.slow_stale) return ["warn", g.slow_stale ? "SLOW READS STUCK" : "HEALTH WARN", null];
    return ["", "OK", null];
  }

  function card(g, hist) {
    const [level, badge, problem] = stateOf(g);
    const c = el("article", "card" + (level ? " " + level : ""));
    c.dataset.gpu = g.gpu;
    c.dataset.state = g.state;
    c.dataset.uuid = g.uuid;
    const h = el("h3");
    h.append(el("span", "name", "GPU " + g.gpu + (g.mig ? " " + g.mig.profile : "") + " \u00b7 " + g.model));
    h.append(el("span", "badge", badge));
    c.append(h, el("div", "uuid", g.device_key + " \u00b7 " + g.pci_bus_id));
    if (problem) c.append(el("p", "problem", problem));

    const vals = el("div", "values");
    const mem = g.fb_used_mib === null ? "\u2014"
      : (g.fb_used_mib / 1024).toFixed(1) + (g.fb_total_mib ? " / " + (g.fb_total_mib / 1024).toFixed(0) : "") + " GiB";
    for (const [label, text] of [
      ["Utilisation", g.gpu_util === null ? "\u2014" : num(g.gpu_util, 0) + " %"],
      ["Tensor active", pct(g.tensor_active)],
      ["DRAM active", pct(g.dram_active)],
      ["Memory", mem],
      ["Power", g.power_w === null ? "\u2014" : num(g.power_w, 0) + " W"],
      ["Temperature", g.temp_c === null ? "\u2014" : num(g.temp_c, 0) + " \u00b0C"],
    ]) {
      const d = el("div");
      d.append(el("b", null, text), el("span", null, label));
      vals.append(d);
    }
    c.append(vals);

    const sparks = el("div", "sparks");
    const t = hist ? hist.t : [];
    const t1 = t.length ? t[t.length - 1] : 0;
    // The window asked for, or less while the exporter has not run that long.
    const t0 = Math.max(t.length ? t[0] : 0, t1 - (history ? history.minutes : 15) * 60000);
    const span = (t1 - t0) / 1000;
    const spanText = span >= 60 ? Math.round(span / 60) + " min" : Math.round(span) + " s";
    for (const s of SPARKS) {
      const v = hist ? hist[s.key] : [];
      const present = v.filter((x) => x !== null);
      const box = el("div", "spark");
      box.dataset.series = s.key;
      box.append(el("div", "label", s.label + " \u00b7 last " + spanText));
      const svg = document.createElementNS("http://www.w3.org/2000/svg", "svg");
      svg.setAttribute("viewBox", "0 0 100 36");
      svg.setAttribute("preserveAspectRatio", "none");
      const path = document.createElementNS("http://www.w3.org/2000/svg", "path");
      path.setAttribute("d", sparkPath(t, v, s.min, s.max(g, present.length ? present : [1]), t0, t1));
      svg.append(path);
      box.append(svg);
      sparks.append(box);
    }
    c.append(sparks);

    const facts = el("ul", "facts");
    const throttle = g.throttle_reasons
      ? (g.throttle_reasons.filter((r) => r !== "gpu_idle").join(", ") || "none")
      : g.clock_event_counts
        ? (g.clock_event_counts.filter((e) => e.reason !== "gpu_idle").map((e) => e.reason + " \u00d7" + e.count).join(", ") || "none")
        : "not collected";
    facts.append(el("li", throttle !== "none" && throttle !== "not collected" ? "warn" : "", "Throttle: " + throttle));
    let xid = "not collected";
    if (g.xid_counts && g.xid_counts.length) {
      xid = g.xid_counts.map((x) => "Xid " + x.xid + " \u00d7" + x.count).join(", ") +
        " in " + Math.round(g.xid_window_ms / 60000) + " min";
    } else if (g.xid_last !== null && g.xid_last !== 0) {
      xid = "last Xid " + g.xid_last;
    } else if (g.xid_counts || g.xid_last !== null) {
      xid = "none";
    }
    const xidLi = el("li", xid !== "none" && xid !== "not collected" ? "bad" : "", "XIDs: " + xid);
    xidLi.dataset.fact = "xid";
    facts.append(xidLi);
    let health = g.health === null ? "not collected" : g.health;
    const failing = (g.health_watches || []).filter((w) => w.value > 0);
    if (failing.length) health += ": " + failing.map((w) => w.watch + " " + w.error_code).join(", ");
    const hl = el("li", g.health === "fail" ? "bad" : g.health === "warn" ? "warn" : "", "Health: " + health);
    hl.dataset.fact = "health";
    facts.append(hl);
    c.append(facts);
    return c;
  }

  function draw(snap) {
    document.getElementById("host").textContent = snap.hostname ? "on " + snap.hostname : "";
    const byKey = {};
    for (const h of (history && history.gpus) || []) byKey[h.device_key] = h;
    const cards = document.getElementById("gpus");
    cards.replaceChildren(...snap.gpus.map((g) => card(g, byKey[g.device_key])));
    if (!snap.gpus.length) cards.append(el("p", "note", "No GPU collected yet."));

    const body = document.querySelector("#pods tbody");
    body.replaceChildren(...snap.pods.map((p) => {
      const tr = el("tr");
      tr.dataset.pod = p.namespace + "/" + p.pod;
      const share = p.share === null ? "\u2014" : (p.share * 100).toFixed(0) + " %" + (p.vgpu ? " (vgpu " + p.vgpu + ")" : "");
      const memory = p.memory_mib === null ? "\u2014"
        : Math.round(p.memory_mib) + " MiB" + (p.memory_source === "share" ? " (share)" : "");
      for (const v of [p.namespace, p.pod, p.container, p.gpu, share, memory]) tr.append(el("td", null, v));
      return tr;
    }));
    document.getElementById("pods-note").textContent = !snap.kubernetes
      ? "Pod attribution is off (start the exporter with -k)."
      : !snap.pods_known ? "No answer from the kubelet yet."
        : snap.pods.length ? "" : "No pod holds a GPU.";

    const lost = snap.gpus.filter((g) => g.state !== "ok").length;
    if (snap.stale) {
      setStatus("Collection stale: the last one finished " + snap.age_seconds.toFixed(0) + " s ago; values below are old.", "bad");
    } else if (lost) {
      setStatus(lost + " of " + snap.gpus.length + " GPUs not readable (see the red cards).", "bad");
    } else {
      setStatus("Live: " + snap.gpus.length + " GPUs, collected " + snap.age_seconds.toFixed(1) + " s ago, refreshing every " + (intervalMs / 1000) + " s.", "");
    }
    document.getElementById("footer").textContent = "nvml-exporter " + snap.exporter_version +
      " \u00b7 collect interval " + snap.interval_ms + " ms \u00b7 history " + (history ? history.minutes_kept : "?") +
      " min, " + (history ? history.bytes_per_gpu : "?") + " bytes per GPU";
  }

  async function getJson(path) {
    // A stopped or wedged exporter must show as unreachable, not leave the page waiting.
    const r = await fetch(path, { cache: "no-store", credentials: "same-origin",
                                  signal: AbortSignal.timeout(Math.max(5000, 2 * intervalMs)) });
    if (!r.ok) throw new Error(path + ": HTTP " + r.status);
    return r.json();
  }

  // The newest point time of the history held, or null.
  function newestT(h) {
    let t = null;
    for (const g of (h && h.gpus) || []) if (g.t.length) t = Math.max(t === null ? -Infinity : t, g.t[g.t.length - 1]);
    return t;
  }
  // Appends a ?since= answer to the history held and drops points older than its window, so a
  // poll fetches only what is new (the whole window again every 5 minutes, in case the
  // exporter restarted).
  let fullAt = 0;
  async function fetchHistory() {
    const since = newestT(history);
    if (history === null || since === null || Date.now() - fullAt > 300000) {
      fullAt = Date.now();
      return getJson("api/v1/history");
    }
    const inc = await getJson("api/v1/history?since=" + since);
    const byKey = {};
    for (const g of history.gpus) byKey[g.device_key] = g;
    for (const g of inc.gpus) {
      const have = byKey[g.device_key];
      if (!have) { history.gpus.push(g); continue; }
      for (const k of ["t"].concat(inc.series.map((s) => s.name))) have[k] = have[k].concat(g[k]);
    }
    const from = (newestT(history) || 0) - history.minutes * 60000;
    history.gpus = history.gpus.filter((g) => g.t.length && g.t[g.t.length - 1] >= from);
    for (const g of history.gpus) {
      let cut = 0;
      while (cut < g.t.length && g.t[cut] < from) cut++;
      if (cut) for (const k of ["t"].concat(inc.series.map((s) => s.name))) g[k] = g[k].slice(cut);
    }
    return history;
  }

  async function tick() {
    try {
      const [snap, hist] = await Promise.all([getJson("api/v1/snapshot"), fetchHistory()]);
      history = hist;
      intervalMs = Math.min(60000, Math.max(1000, snap.interval_ms || 5000));
      draw(snap);
    } catch (e) {
      setStatus("Exporter unreachable (" + e.message + "); showing the last data received.", "bad");
    }
    setTimeout(tick, intervalMs);
  }
  tick();
})();
