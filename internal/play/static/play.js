// The playground's page: polls /api/state every 500 ms and draws the chat
// list and the open chat; a bot message is drawn once and then changed in
// place when the bot edits it (the same element, keyed by message id).
"use strict";
(function () {
  const $ = (id) => document.getElementById(id);
  let state = null;
  let open = null;          // the open chat's id
  let shown = new Map();    // message id -> element, for the open chat
  let stuckToBottom = true;

  function el(tag, cls, text) {
    const e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined) e.textContent = text;
    return e;
  }

  async function post(path, body) {
    const r = await fetch(path, { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body) });
    const j = await r.json().catch(() => ({}));
    if (!r.ok) throw new Error(j.error || r.statusText);
    return j;
  }

  function chatOf(id) { return state && state.chats.find((c) => c.id === id); }

  // who writes in the open chat: its user, or in the group the one picked.
  function sender() {
    const c = chatOf(open);
    if (!c) return 0;
    return c.group ? Number($("as").value) : c.id;
  }

  function drawList() {
    const nav = $("chats");
    const items = new Map([...nav.children].map((e) => [Number(e.dataset.chat), e]));
    state.chats.forEach((c, i) => {
      let it = items.get(c.id);
      if (!it) {
        it = el("div", "chatitem");
        it.dataset.chat = c.id;
        it.id = "chat-" + c.id;
        it.append(el("div", "name"), el("div", "last"));
        it.addEventListener("click", () => openChat(c.id));
      }
      if (nav.children[i] !== it) nav.insertBefore(it, nav.children[i] || null);
      it.classList.toggle("active", c.id === open);
      const name = it.querySelector(".name");
      name.textContent = (c.group ? "👥 " : "") + c.title;
      if (c.lang) name.append(el("span", "lang", c.lang));
      const ms = c.messages || [];
      const last = ms[ms.length - 1];
      it.querySelector(".last").textContent = last ? (last.bot ? "" : last.from + ": ") + last.text : "";
    });
  }

  function drawKeyboard(m, box) {
    box.replaceChildren();
    (m.keyboard || []).forEach((row) => {
      const r = el("div", "row");
      row.forEach((b) => {
        const btn = el("button", "", b.text);
        btn.type = "button";
        btn.dataset.data = b.data || "";
        if (b.url) btn.addEventListener("click", () => window.open(b.url, "_blank"));
        else btn.addEventListener("click", () => tap(m.id, b.data));
        r.append(btn);
      });
      box.append(r);
    });
  }

  function drawMessage(m, e) {
    const sig = JSON.stringify([m.text, m.edits, m.keyboard]);
    if (e.dataset.sig === sig) return;
    e.dataset.sig = sig;
    e.dataset.edits = m.edits;
    e.querySelector(".text").textContent = m.text;
    e.querySelector(".meta").textContent = (m.edits ? "edited · " : "") + m.time;
    drawKeyboard(m, e.querySelector(".kb"));
  }

  function drawChat() {
    const c = chatOf(open);
    if (!c) return;
    const box = $("messages");
    const atBottom = box.scrollHeight - box.scrollTop - box.clientHeight < 30;
    const keep = new Set();
    (c.messages || []).forEach((m) => {
      keep.add(m.id);
      let e = shown.get(m.id);
      if (!e) {
        e = el("div", m.bot ? "msg bot" : "msg user");
        e.dataset.id = m.id;
        // dir=auto: a Persian text lays out right to left, by its
        // first strong character, as Telegram lays it out.
        const text = el("div", "text");
        text.dir = "auto";
        e.append(el("div", "from", m.from), text, el("div", "kb"), el("div", "meta"));
        box.append(e);
        shown.set(m.id, e);
      }
      drawMessage(m, e);
    });
    for (const [id, e] of shown) if (!keep.has(id)) { e.remove(); shown.delete(id); }
    if (atBottom || stuckToBottom) { box.scrollTop = box.scrollHeight; stuckToBottom = false; }
    const t = $("toast");
    t.hidden = !c.toast;
    t.textContent = c.toast || "";
  }

  function openChat(id) {
    if (open === id) return;
    open = id;
    shown = new Map();
    stuckToBottom = true;
    $("messages").replaceChildren();
    const c = chatOf(id);
    $("chat-title").textContent = c ? c.title : "";
    const cast = state.users.some((u) => u.id === id);
    $("as-wrap").hidden = !(c && c.group);
    $("text").disabled = $("send").disabled = !(cast || (c && c.group));
    $("text").placeholder = cast || (c && c.group) ? "Message (try /play, /start, /help)" : "a staged chat: read only";
    draw();
    $("text").focus();
  }

  function drawSide() {
    const s = state.stats;
    $("stats").textContent = `delivered ${s.Sent} · edits ${s.Edits} · peak ${s.PeakPerSecond}/s\n` +
      `429s from the limits ${s.TooMany}\ninjected faults: applied ${s.FaultsApplied}, armed ${s.FaultsPending}\n` +
      `latency ${s.Slow ? "1.5 s an answer" : "none"}`;
    const ev = $("events");
    const evs = state.events || [];
    if (ev.childElementCount !== evs.length) ev.replaceChildren(...evs.slice().reverse().map((x) => el("li", "", x)));
  }

  function draw() { if (state) { drawList(); drawChat(); drawSide(); } }

  async function poll() {
    try {
      const r = await fetch("/api/state", { cache: "no-store" });
      state = await r.json();
      if (!$("as").childElementCount) {
        state.users.forEach((u) => { const o = el("option", "", `${u.name} (${u.lang})`); o.value = u.id; $("as").append(o); });
      }
      if (open === null && state.chats.length) openChat(state.chats[0].id);
      draw();
    } catch (e) { /* the playground stopped; keep trying */ }
    setTimeout(poll, 500);
  }

  async function tap(msg, data) {
    try { await post("/api/tap", { chat: open, from: sender(), message: msg, data: data }); }
    catch (e) { alert("tap: " + e.message); }
  }

  $("compose").addEventListener("submit", async (ev) => {
    ev.preventDefault();
    const text = $("text").value;
    if (!text.trim()) return;
    $("text").value = "";
    stuckToBottom = true;
    try { await post("/api/send", { chat: open, from: sender(), text: text }); }
    catch (e) { alert("send: " + e.message); }
  });

  document.querySelectorAll("[data-stage]").forEach((b) => b.addEventListener("click", async () => {
    try { await post("/api/stage", { name: b.dataset.stage }); }
    catch (e) { alert("stage: " + e.message); }
  }));

  poll();
})();
