// The live page in headless Chromium (the system's /usr/bin/chromium, driven by playwright-core;
// no browser download). Run by live_page_test.py, which starts the exporter on simulated GPUs
// (testdata/scenarios/live_page.yaml) and the fake kubelet, and passes what to expect:
//
//   node live_page_test.mjs CONFIG.json
//
// CONFIG: {url, chromium, out, uuids: [..4], pods: ["ns/pod", ..], pulsing: 0, lost: 2, stale: 3,
//          user?, password?, spki?, kill_pid?, tag}
// Exits 1 with "FAIL: ..." on the first failed check; writes PNG screenshots into `out`.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { chromium } from "playwright-core";

const cfg = JSON.parse(readFileSync(process.argv[2], "utf8"));
const origin = new URL(cfg.url).origin;
const t0 = Date.now();
const log = (msg) => console.log(`[${cfg.tag} ${((Date.now() - t0) / 1000).toFixed(1)}s] ${msg}`);
function fail(msg) {
  console.error(`FAIL (${cfg.tag}): ${msg}`);
  process.exitCode = 1;
  throw new Error(msg);
}
async function until(what, seconds, fn) {
  const end = Date.now() + seconds * 1000;
  let last;
  while (Date.now() < end) {
    last = await fn();
    if (last) return last;
    await new Promise((r) => setTimeout(r, 200));
  }
  fail(`${what}: not within ${seconds} s`);
}

const args = ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"];
// TLS: trust exactly the test server's key (its SPKI hash), not every certificate.
if (cfg.spki) args.push(`--ignore-certificate-errors-spki-list=${cfg.spki}`);
const browser = await chromium.launch({ executablePath: cfg.chromium, headless: true, args });
const contextOptions = { viewport: { width: 1280, height: 900 } };
if (cfg.user) contextOptions.httpCredentials = { username: cfg.user, password: cfg.password };
try {
  const context = await browser.newContext(contextOptions);
  const page = await context.newPage();
  const foreign = [];
  let polls = 0;  // history requests that ask only for new points
  const errors = [];
  page.on("request", (r) => {
    if (!r.url().startsWith(origin + "/")) foreign.push(r.url());
    if (r.url().includes("api/v1/history?since=")) polls++;
  });
  page.on("pageerror", (e) => errors.push(String(e)));
  page.on("console", (m) => {
    if (m.type() === "error") errors.push(m.text());
  });

  if (cfg.user) {
    // Under basic auth the page and its API refuse a client without credentials.
    const bare = await browser.newContext();
    const r = await bare.request.get(cfg.url + "api/v1/snapshot", { ignoreHTTPSErrors: true });
    if (r.status() !== 401) fail(`no credentials: HTTP ${r.status()}, want 401`);
    await bare.close();
    log("401 without credentials");
  }

  const resp = await page.goto(cfg.url, { waitUntil: "load" });
  if (resp.status() !== 200) fail(`GET / answered ${resp.status()}`);

  // 1. One card per GPU, with the right UUIDs and model.
  await until("a card per GPU", 15, async () =>
    (await page.locator("article.card").count()) === cfg.uuids.length);
  const cards = await page.$$eval("article.card", (cs) =>
    cs.map((c) => ({ gpu: c.dataset.gpu, uuid: c.dataset.uuid, text: c.textContent })));
  cards.forEach((c, i) => {
    if (c.gpu !== String(i)) fail(`card ${i} is GPU ${c.gpu}`);
    if (c.uuid !== cfg.uuids[i]) fail(`card ${i}: UUID ${c.uuid}, want ${cfg.uuids[i]}`);
    if (!c.text.includes("NVIDIA H200")) fail(`card ${i} lacks the model: ${c.text}`);
    if (!c.text.includes(cfg.uuids[i])) fail(`card ${i} does not show its UUID`);
  });
  log("cards show the right GPUs");

  // 2. The pulsing GPU's sparkline changes between refreshes (a 2 s on / 2 s off square wave).
  const sparkOf = (gpu, series) => page.$eval(
    `article.card[data-gpu="${gpu}"] .spark[data-series="${series}"] path`, (p) => p.getAttribute("d"));
  await until("a sparkline with points", 10, async () => (await sparkOf(cfg.pulsing, "gpu_util")).length > 20);
  const first = await sparkOf(cfg.pulsing, "gpu_util");
  const yOf = (d) => [...d.matchAll(/[ML][\d.]+ ([\d.]+)/g)].map((m) => Number(m[1]));
  // It changes with each refresh, and within a period of the square wave it shows both extremes:
  // points at the top (100 %) and at the bottom (0 %).
  let ys = [];
  await until("the pulsing GPU's sparkline to change and show high and low", 12, async () => {
    const d = await sparkOf(cfg.pulsing, "gpu_util");
    ys = yOf(d);
    return d !== first && Math.min(...ys) < 5 && Math.max(...ys) > 30;
  });
  const steady = yOf(await sparkOf(1, "gpu_util"));
  if (Math.max(...steady) - Math.min(...steady) > 0.5) fail("the steady GPU's sparkline moves");
  log(`sparkline of GPU ${cfg.pulsing} changed (${ys.length} points, high and low)`);

  // 3. The pod table lists the simulated pods.
  const pods = await until("the pod table", 10, async () => {
    const rows = await page.$$eval("#pods tbody tr", (rs) => rs.map((r) => r.dataset.pod));
    return cfg.pods.every((p) => rows.includes(p)) ? rows : null;
  });
  const shareCells = await page.$$eval("#pods tbody tr", (rs) => rs.map((r) => r.cells[4].textContent));
  if (!shareCells.includes("100 %") || !shareCells.some((s) => s.startsWith("50 %"))) {
    fail(`pod shares: ${JSON.stringify(shareCells)}`);
  }
  log(`pod table: ${pods.join(", ")}`);

  // 4. The simulated GPU loss shows on its card, and in the status line.
  await until(`GPU ${cfg.lost} shown lost`, 20, async () =>
    (await page.getAttribute(`article.card[data-gpu="${cfg.lost}"]`, "data-state")) === "lost");
  const lostCard = await page.textContent(`article.card[data-gpu="${cfg.lost}"]`);
  if (!lostCard.includes("LOST") || !lostCard.includes("fell off the bus") ||
      !lostCard.includes("Health: fail")) {
    fail(`lost card text: ${lostCard}`);
  }
  const status = await page.textContent("#status");
  if (!status.includes("not readable")) fail(`status line on a lost GPU: ${status}`);
  // A read stuck in the driver: that card says so; the other two are unaffected.
  await until(`GPU ${cfg.stale} shown stale`, 10, async () =>
    (await page.getAttribute(`article.card[data-gpu="${cfg.stale}"]`, "data-state")) === "stale");
  const staleCard = await page.textContent(`article.card[data-gpu="${cfg.stale}"]`);
  if (!staleCard.includes("STALE") || !staleCard.includes("stuck")) fail(`stale card text: ${staleCard}`);
  for (const g of [0, 1]) {
    const s = await page.getAttribute(`article.card[data-gpu="${g}"]`, "data-state");
    if (s !== "ok") fail(`GPU ${g} is ${s} next to a lost and a stale GPU`);
  }
  log(`GPU ${cfg.lost} shown lost, GPU ${cfg.stale} stale`);
  // The Xid of the scenario and the throttling of the pulsing GPU are listed on their cards.
  await until("Xid 31 on GPU 1", 10, async () =>
    (await page.textContent(`article.card[data-gpu="1"] [data-fact="xid"]`)).includes("Xid 31"));
  await until("power cap on GPU 0", 10, async () =>
    (await page.textContent(`article.card[data-gpu="0"]`)).includes("power_cap"));

  // 5. The API answers a bad query with 400 and a reason.
  const bad = await context.request.get(cfg.url + "api/v1/history?minutes=9999", { ignoreHTTPSErrors: true });
  if (bad.status() !== 400 || !(await bad.text()).includes("minutes")) {
    fail(`history?minutes=9999: HTTP ${bad.status()}`);
  }

  // 6. Screenshots: desktop, and a phone's width (one column, still readable).
  await page.screenshot({ path: join(cfg.out, `live-page${cfg.suffix}.png`), fullPage: true });
  await page.setViewportSize({ width: 390, height: 844 });
  await page.waitForTimeout(300);
  const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
  if (overflow > 2) fail(`the page is ${overflow} px wider than a phone's screen`);
  await page.screenshot({ path: join(cfg.out, `live-page-phone${cfg.suffix}.png`), fullPage: false });
  log("screenshots written");

  // 7. The exporter gone: the page says so and keeps the last data.
  if (cfg.kill_pid) {
    process.kill(cfg.kill_pid, "SIGKILL");
    await until("the unreachable banner", 10, async () =>
      (await page.textContent("#status")).includes("unreachable"));
    if ((await page.locator("article.card").count()) !== cfg.uuids.length) {
      fail("cards vanished with the exporter");
    }
    log("exporter gone: shown");
  }

  if (polls === 0) fail("the page never polled the history incrementally (?since=)");
  if (foreign.length) fail(`requests outside the exporter: ${foreign.join(", ")}`);
  if (errors.length && !cfg.kill_pid) fail(`page errors: ${errors.join("; ")}`);
  log("ok");
} catch (e) {
  if (!process.exitCode) {
    console.error(`FAIL (${cfg.tag}): ${e.stack || e}`);
    process.exitCode = 1;
  }
} finally {
  await browser.close();
}
