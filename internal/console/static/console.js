// codemojex console: live parts of the pages (the Overview's chart and
// cards and the Broadcasts' progress from JSON; every other page's .live
// parts read again every 2 s).
// Plain JavaScript (no library, no build step); served by the console
// itself, allowed by its Content-Security-Policy (script-src 'self').
"use strict";

const COLORS = ["#2563eb", "#16a34a", "#d97706", "#9333ea", "#dc2626"];

function fmt(x) { return x >= 10 ? x.toFixed(0) : x.toFixed(1); }

function ageText(s) {
  if (!s) return "-";
  if (s < 60) return Math.round(s) + " s";
  if (s < 3600) return Math.round(s / 60) + " min";
  return (s / 3600).toFixed(1) + " h";
}

// drawChart draws one polyline per series into the SVG (800 x 220 user units).
function drawChart(svg, series, legend) {
  const ns = "http://www.w3.org/2000/svg";
  while (svg.firstChild) svg.removeChild(svg.firstChild);
  let top = 1;
  let n = 0;
  for (const s of series) { for (const v of s.values) top = Math.max(top, v); n = Math.max(n, s.values.length); }
  for (let i = 0; i <= 4; i++) {
    const y = 210 - (200 * i) / 4;
    const line = document.createElementNS(ns, "line");
    line.setAttribute("x1", "0"); line.setAttribute("x2", "800");
    line.setAttribute("y1", y); line.setAttribute("y2", y);
    line.setAttribute("class", "grid");
    svg.appendChild(line);
    const t = document.createElementNS(ns, "text");
    t.setAttribute("x", "4"); t.setAttribute("y", y - 2);
    t.setAttribute("class", "axis");
    t.textContent = fmt((top * i) / 4) + "/s";
    svg.appendChild(t);
  }
  legend.textContent = "";
  series.forEach((s, k) => {
    const pts = s.values.map((v, i) => {
      const x = n > 1 ? (800 * i) / (n - 1) : 0;
      return x.toFixed(1) + "," + (210 - (200 * v) / top).toFixed(1);
    });
    const pl = document.createElementNS(ns, "polyline");
    pl.setAttribute("points", pts.join(" "));
    pl.setAttribute("fill", "none");
    pl.setAttribute("stroke", COLORS[k % COLORS.length]);
    pl.setAttribute("stroke-width", "2");
    svg.appendChild(pl);
    const item = document.createElement("span");
    item.className = "key";
    const sw = document.createElement("i");
    sw.className = "sw c" + (k % COLORS.length);
    item.appendChild(sw);
    item.appendChild(document.createTextNode(s.name));
    legend.appendChild(item);
  });
}

async function overview() {
  const r = await fetch("/api/overview", { credentials: "same-origin" });
  if (!r.ok) return;
  const d = await r.json();
  const pts = d.points || [];
  if (pts.length === 0) return;
  const last = pts[pts.length - 1];
  // The cards show rates averaged over the last 5 samples (sends leave in
  // bursts, a budget's window at a time); the chart shows every sample.
  const recent = pts.slice(-5);
  const avg = (f) => recent.reduce((a, p) => a + (f(p) || 0), 0) / recent.length;
  let msgs = 0;
  const per = [];
  for (const q of d.queues) { const v = avg((p) => p.messages[q]); msgs += v; per.push(q + " " + fmt(v)); }
  document.getElementById("v-updates").textContent = fmt(avg((p) => p.updates));
  document.getElementById("v-messages").textContent = fmt(msgs);
  document.getElementById("v-per-queue").textContent = per.join(" · ");
  // Budget use: messages/s sent against each send budget's limit (reply
  // and bulk, or one global budget); the card shows the fullest.
  let fullest = 0;
  const uses = [];
  for (const b of d.budgets) {
    const limit = d.limits[b] || 0;
    const use = limit > 0 ? (100 * avg((p) => (p.budgets || {})[b])) / limit : 0;
    fullest = Math.max(fullest, use);
    uses.push(b + " " + Math.round(use) + "% of " + limit + "/s");
  }
  document.getElementById("v-budget").textContent = Math.round(fullest) + "%";
  document.getElementById("v-budgets").textContent = uses.join(" · ");
  document.getElementById("v-429").textContent = fmt(avg((p) => p.too_many));
  document.getElementById("v-dropped").textContent = fmt(avg((p) => p.dropped));
  document.getElementById("v-inflight").textContent = last.in_flight;
  document.getElementById("v-oldest").textContent = ageText(last.oldest_s);
  document.getElementById("v-procs").textContent = last.processes;
  const series = [{ name: "updates/s", values: pts.map((p) => p.updates) }];
  for (const q of d.queues) series.push({ name: q + " messages/s", values: pts.map((p) => p.messages[q] || 0) });
  series.push({ name: "429s/s", values: pts.map((p) => p.too_many) });
  drawChart(document.getElementById("chart"), series, document.getElementById("legend"));
}

// history draws the last 24 hours (one point a minute, from Valkey).
async function history() {
  const r = await fetch("/api/history", { credentials: "same-origin" });
  if (!r.ok) return;
  const d = await r.json();
  const pts = d.points || [];
  const queues = [...new Set(pts.flatMap((p) => Object.keys(p.messages || {})))].sort();
  const series = [{ name: "updates/s", values: pts.map((p) => p.updates) }];
  for (const q of queues) series.push({ name: q + " messages/s", values: pts.map((p) => (p.messages || {})[q] || 0) });
  series.push({ name: "429s/s", values: pts.map((p) => p.too_many) });
  drawChart(document.getElementById("chart-day"), series, document.getElementById("legend-day"));
  document.getElementById("history-count").textContent = pts.length + " points since " +
    (pts.length ? new Date(pts[0].t).toISOString().slice(0, 16).replace("T", " ") + " UTC" : "-") + ".";
}

async function broadcasts() {
  const r = await fetch("/api/broadcasts", { credentials: "same-origin" });
  if (!r.ok) return;
  const rows = await r.json();
  for (const b of rows) {
    const el = document.querySelector('.bc[data-id="' + b.id + '"]');
    if (!el) continue;
    el.querySelector("progress").value = b.percent;
    let counts = b.sent + " sent · " + b.failed + " failed · " + b.remaining + " remaining of " + b.total;
    if (b.stopped) counts = "stopped: " + b.sent + " sent · " + b.cancelled + " cancelled of " + b.total;
    else if (!b.running) counts = "done: " + b.sent + " sent · " + b.failed + " failed of " + b.total;
    el.querySelector(".bc-counts").textContent = counts;
    el.querySelector(".bc-plan").textContent = b.plan;
    if (!b.running) { const f = el.querySelector("form"); if (f) f.remove(); el.classList.add("finished"); }
    if (b.running && !b.scheduled && el.parentElement.id === "scheduled") started(el);
  }
}

// started moves a scheduled broadcast's card that started under Running;
// each list says when it is left empty, as the page does.
function started(el) {
  const from = el.parentElement;
  const none = document.getElementById("none-running");
  if (none) none.remove();
  document.getElementById("running").appendChild(el);
  if (!from.querySelector(".bc")) {
    const p = document.createElement("p");
    p.className = "note";
    p.id = "none-scheduled";
    p.textContent = "No broadcast scheduled.";
    from.appendChild(p);
  }
}

// live reads the page again (its own address; the server leaves the
// flash alone) and replaces each .live part that changed, unless the
// operator is in it (a field being typed into, a button being pressed).
// A 404 is a page too (a job no queue holds any more: sent, or a
// broadcast unknown), shown as any other.
async function live() {
  if (document.hidden) return;
  const r = await fetch(location.href, { credentials: "same-origin", headers: { "X-Console-Live": "1" } });
  if (!r.ok && r.status !== 404) return;
  const fresh = new DOMParser().parseFromString(await r.text(), "text/html");
  for (const el of document.querySelectorAll(".live[id]")) {
    const next = fresh.getElementById(el.id);
    if (!next || next.innerHTML === el.innerHTML || el.contains(document.activeElement)) continue;
    el.innerHTML = next.innerHTML;
  }
}

function every(f, ms) { f().catch(() => {}); setInterval(() => f().catch(() => {}), ms); }

document.addEventListener("DOMContentLoaded", () => {
  const page = document.body.dataset.page;
  if (page === "overview") { every(overview, 1000); every(history, 30000); }
  if (page === "broadcasts") every(broadcasts, 1000);
  else if (page !== "overview" && document.querySelector(".live[id]")) every(live, 2000);
  // A preview's Confirm is sent once from the page (the server starts one
  // broadcast per preview however often it is confirmed).
  const confirmForm = document.getElementById("confirm-form");
  if (confirmForm) confirmForm.addEventListener("submit", () => { setTimeout(() => { document.getElementById("confirm").disabled = true; }, 0); });
  // Delegated: a live part's buttons are replaced as it refreshes.
  document.addEventListener("click", (e) => {
    const b = e.target.closest("button.danger");
    if (b && !window.confirm(b.textContent + "?")) e.preventDefault();
  });
});
