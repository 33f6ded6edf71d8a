// The devbroker console's script: it fills the page's tables from the JSON
// endpoints under /api/ and refreshes them every second. Everything that
// comes from the broker goes into the page as text (textContent), never as
// HTML, so a payload or a name holding markup shows as what it is.
"use strict";

const body = document.body;
const page = body.dataset.page;
const pollMs = 1000;

// api calls the console's JSON API. URLs are built on location.origin so
// that a page opened as http://user:pass@host/ still may fetch (a request
// URL with credentials in it is refused). Actions carry the header the
// server requires of every state-changing request.
async function api(path, body) {
  const opts = { credentials: "same-origin", headers: {} };
  if (body !== undefined) {
    opts.method = "POST";
    opts.headers["X-Console-Request"] = "1";
    opts.headers["Content-Type"] = "application/json";
    opts.body = JSON.stringify(body);
  }
  const resp = await fetch(new URL(path, location.origin), opts);
  const data = await resp.json().catch(() => ({}));
  if (!resp.ok) {
    throw new Error(data.error || resp.status + " " + resp.statusText);
  }
  return data;
}

// el makes an element with text content (never HTML) and children.
function el(tag, text, ...children) {
  const e = document.createElement(tag);
  if (text !== undefined && text !== null) {
    e.textContent = String(text);
  }
  for (const c of children) {
    e.append(c);
  }
  return e;
}

function row(...cells) {
  const tr = document.createElement("tr");
  for (const c of cells) {
    tr.append(c instanceof Node ? el("td", null, c) : el("td", c));
  }
  return tr;
}

// fill replaces a table's rows, unless they would look the same: a refresh
// that changed nothing leaves the page (and what the user points at) alone.
function fill(id, rows, empty) {
  const tbody = document.querySelector("#" + id + " tbody");
  if (rows.length === 0) {
    const td = el("td", empty);
    td.colSpan = document.querySelectorAll("#" + id + " thead th").length || 1;
    td.className = "empty";
    rows = [el("tr", null, td)];
  }
  const sig = rows.map((r) => r.textContent + "\u0000" + JSON.stringify(r.dataset)).join("\u0001");
  if (tbody.dataset.sig === sig) return;
  tbody.dataset.sig = sig;
  tbody.replaceChildren(...rows);
}

function status(text, isError) {
  const s = document.getElementById("status");
  s.textContent = text;
  s.className = isError ? "error" : "ok";
}

function bytes(n) {
  if (n < 1024) return n + " B";
  if (n < 1 << 20) return (n / 1024).toFixed(1) + " KiB";
  return (n / (1 << 20)).toFixed(1) + " MiB";
}

function queueLink(vpn, name) {
  const a = el("a", name);
  a.href = "/vpns/" + encodeURIComponent(vpn) + "/queues/" + encodeURIComponent(name);
  return a;
}

function button(text, onClick, cls) {
  const b = el("button", text);
  b.type = "button";
  if (cls) b.className = cls;
  b.addEventListener("click", onClick);
  return b;
}

async function act(what, path, req) {
  try {
    const res = await api(path, req);
    status(what + ": done");
    await refresh();
    return res;
  } catch (e) {
    status(what + ": " + e.message, true);
  }
}

function purge(vpn, name) {
  if (!confirm("Delete every message of queue " + name + "?")) return;
  return act("purge " + name, "/api/vpns/" + encodeURIComponent(vpn) + "/queues/" + encodeURIComponent(name) + "/purge", {});
}

// ---- rates: message counters of the clients, as SEMP shows them ----

let last = null; // the previous state, for rates

function rate(now, prev, pick) {
  if (!prev) return "–";
  const dt = (now.time - prev.time) / 1000;
  const d = pick(now) - pick(prev);
  return dt > 0 && d >= 0 ? (d / dt).toFixed(1) : "–";
}

function sum(list, f) {
  return (list || []).reduce((a, x) => a + f(x), 0);
}

// ---- pages ----

const pages = {
  overview(st) {
    const prevVPN = (name) => last && last.VPNs.find((v) => v.Name === name);
    fill("vpns", st.VPNs.map((v) => {
      const pv = prevVPN(v.Name);
      const rx = (x) => sum(x.Clients, (c) => c.DataRxMsgs), tx = (x) => sum(x.Clients, (c) => c.DataTxMsgs);
      return row(v.Name, v.Enabled ? "yes" : "no", (v.Clients || []).length, (v.Queues || []).length,
        sum(v.Queues, (q) => q.Stats.SpooledMsgCount), bytes(sum(v.Queues, (q) => q.Stats.SpooledBytes)),
        rate({ time: st.time, v }, pv && { time: last.time, v: pv }, (s) => rx(s.v)),
        rate({ time: st.time, v }, pv && { time: last.time, v: pv }, (s) => tx(s.v)));
    }), "no message VPNs");
    const clients = st.VPNs.flatMap((v) => (v.Clients || []).map((c) => ({ vpn: v.Name, c })));
    const prevClient = (vpn, name) => {
      const pv = prevVPN(vpn);
      return pv && (pv.Clients || []).find((c) => c.Name === name);
    };
    fill("clients", clients.map(({ vpn, c }) => {
      const pc = prevClient(vpn, c.Name);
      return row(c.Name, vpn, c.Username, c.Address, c.SoftwareVersion, new Date(c.ConnectedAt).toLocaleTimeString(),
        c.DataRxMsgs, c.DataTxMsgs,
        rate({ time: st.time, c }, pc && { time: last.time, c: pc }, (s) => s.c.DataRxMsgs),
        rate({ time: st.time, c }, pc && { time: last.time, c: pc }, (s) => s.c.DataTxMsgs),
        c.Flows, (c.Subscriptions || []).length);
    }), "no clients connected");
    const f = st.Faults, on = [];
    if (f.DeliveryPaused) on.push("delivery paused");
    if (f.RefusingLogins) on.push("refusing logins");
    if (f.PublishNacksLeft > 0) on.push("rejecting the next " + f.PublishNacksLeft + " guaranteed publishes");
    if (f.IgnoreConsumerWindows) on.push("ignoring consumer windows");
    document.getElementById("faults").textContent = on.length ? on.join(", ") : "none";
  },

  queues(st) {
    const rows = [];
    for (const v of st.VPNs) {
      for (const q of v.Queues || []) {
        const flows = (q.Flows || []).map((f) =>
          "#" + f.ID + " " + (f.Client || "?") + (f.Active ? " (active)" : "") + ": window " + f.Window +
          ", in flight " + f.InFlight + ", unacked " + f.Unacked + "/" + f.MaxUnacked).join("\n");
        const quota = q.MaxMsgSpoolUsage > 0 ? " of " + q.MaxMsgSpoolUsage + " MB" : "";
        const tr = row(v.Name, queueLink(v.Name, q.Name), q.AccessType || "exclusive", q.Stats.SpooledMsgCount,
          bytes(q.Stats.SpooledBytes) + quota, q.Stats.Unacked, flows || "none", q.Stats.Redelivered,
          q.Stats.DeadLettered, q.DeadMsgQueue || "–", (q.Subscriptions || []).join("\n"),
          button("Purge", () => purge(v.Name, q.Name), "danger"));
        tr.dataset.queue = q.Name;
        tr.dataset.vpn = v.Name;
        tr.dataset.depth = q.Stats.SpooledMsgCount;
        rows.push(tr);
      }
    }
    fill("queues", rows, "no queues");
  },

  topics(st) {
    fill("client-subs", st.VPNs.flatMap((v) => (v.Clients || []).flatMap((c) =>
      (c.Subscriptions || []).map((s) => row(v.Name, c.Name, s)))), "no client subscriptions");
    fill("queue-subs", st.VPNs.flatMap((v) => (v.Queues || []).flatMap((q) =>
      (q.Subscriptions || []).map((s) => row(v.Name, queueLink(v.Name, q.Name), s)))), "no queue subscriptions");
  },
};

// ---- the queue browser ----

let selected = null; // the MsgID shown in the detail panel

function b64bytes(b64) {
  const s = atob(b64 || "");
  const out = new Uint8Array(s.length);
  for (let i = 0; i < s.length; i++) out[i] = s.charCodeAt(i);
  return out;
}

function hexdump(u8) {
  const lines = [];
  for (let off = 0; off < u8.length; off += 16) {
    const chunk = u8.subarray(off, off + 16);
    const hex = Array.from(chunk, (b) => b.toString(16).padStart(2, "0")).join(" ");
    const asc = Array.from(chunk, (b) => (b >= 32 && b < 127 ? String.fromCharCode(b) : ".")).join("");
    lines.push(off.toString(16).padStart(8, "0") + "  " + hex.padEnd(48) + "  " + asc);
  }
  return lines.join("\n");
}

// showPayload renders the payload as the chosen view; "auto" is JSON when
// it parses, text when it is UTF-8, hex otherwise.
function showPayload(m) {
  const u8 = b64bytes(m.Payload);
  let view = document.getElementById("payload-view").value, text = null;
  try {
    text = new TextDecoder("utf-8", { fatal: true }).decode(u8);
  } catch (e) {
    text = null;
  }
  if (view === "auto") {
    view = text === null ? "hex" : "text";
    try {
      if (text !== null && text.trim() !== "") {
        JSON.parse(text);
        view = "json";
      }
    } catch (e) { /* not JSON */ }
  }
  let out;
  if (view === "hex") {
    out = hexdump(u8);
  } else if (view === "json") {
    try {
      out = JSON.stringify(JSON.parse(text), null, 2);
    } catch (e) {
      out = "(not JSON: " + e.message + ")";
    }
  } else {
    out = text === null ? new TextDecoder("utf-8").decode(u8) : text;
  }
  if (m.PayloadClipped) out += "\n… (" + m.PayloadSize + " bytes shown of a larger payload)";
  const pre = document.getElementById("msg-payload");
  pre.textContent = out;
  pre.dataset.view = view;
}

function showDetail(m) {
  document.getElementById("msg-detail").hidden = false;
  document.getElementById("msg-id").textContent = m.MsgID;
  const attrs = [
    ["Destination", (m.ToQueue ? "queue " : "topic ") + m.Destination],
    ["Replication group message id", m.ReplicationGroupMsgID],
    ["Delivery mode", m.Persistent ? "persistent" : "non-persistent"],
    ["Priority", m.Priority],
    ["Time to live", m.TTL ? m.TTL / 1e6 + " ms" : "none"],
    ["Expiry", m.Expiry && !m.Expiry.startsWith("0001") ? new Date(m.Expiry).toLocaleString() : "none"],
    ["DMQ eligible", m.DMQEligible ? "yes" : "no"],
    ["Spooled", new Date(m.SpooledAtMs).toLocaleString()],
    ["Delivered", m.Undelivered ? "no" : "yes"],
    ["Redeliveries", m.Redeliveries],
    ["Payload size", m.PayloadSize + " bytes"],
  ];
  for (const [k, v] of Object.entries(m.Headers || {}).sort()) attrs.push([k, v]);
  const kv = ([k, v]) => {
    const tr = row(k, v);
    tr.dataset.attr = k;
    return tr;
  };
  fill("msg-attrs", attrs.map(kv), "");
  fill("msg-props", Object.entries(m.UserProperties || {}).sort().map(kv), "no user properties");
  showPayload(m);
}

let browsed = [];

async function browse() {
  const vpn = body.dataset.vpn, q = body.dataset.queue;
  const res = await api("/api/vpns/" + encodeURIComponent(vpn) + "/queues/" + encodeURIComponent(q) + "/msgs");
  browsed = res.Msgs;
  document.getElementById("queue-depth").textContent = res.Total + " messages";
  document.getElementById("queue-depth").dataset.depth = res.Total;
  fill("msgs", browsed.map((m) => {
    const tr = row(m.MsgID, new Date(m.SpooledAtMs).toLocaleTimeString(), (m.ToQueue ? "queue " : "") + m.Destination,
      m.PayloadSize, m.Undelivered ? "spooled" : "delivered, unacked", m.Redeliveries, m.Priority,
      button("Show", () => {
        selected = m.MsgID;
        showDetail(m);
      }));
    tr.dataset.msgId = m.MsgID;
    return tr;
  }), "the queue is empty");
  const m = browsed.find((x) => x.MsgID === selected);
  if (m) {
    showDetail(m);
  } else if (selected !== null) {
    selected = null;
    document.getElementById("msg-detail").hidden = true;
  }
}

function setupQueuePage() {
  const vpn = body.dataset.vpn, q = body.dataset.queue;
  document.getElementById("purge").addEventListener("click", () => purge(vpn, q));
  document.getElementById("delete-msg").addEventListener("click", () => {
    if (selected === null) return;
    act("delete message " + selected, "/api/vpns/" + encodeURIComponent(vpn) + "/queues/" + encodeURIComponent(q) +
      "/msgs/" + selected + "/delete", {});
  });
  document.getElementById("payload-view").addEventListener("change", () => {
    const m = browsed.find((x) => x.MsgID === selected);
    if (m) showPayload(m);
  });
}

// ---- the publish form ----

function setupPublish() {
  const form = document.getElementById("publish");
  const params = new URLSearchParams(location.search);
  if (params.get("vpn")) form.vpn.value = params.get("vpn");
  if (params.get("queue")) {
    form.destinationType.value = "queue";
    form.destination.value = params.get("queue");
  }
  form.addEventListener("submit", async (ev) => {
    ev.preventDefault();
    const props = {};
    for (const line of form.userProperties.value.split("\n")) {
      if (line.trim() === "") continue;
      const i = line.indexOf("=");
      if (i <= 0) {
        status("user property " + JSON.stringify(line) + ": want name=value", true);
        return;
      }
      props[line.slice(0, i).trim()] = line.slice(i + 1);
    }
    const req = {
      vpn: form.vpn.value, destinationType: form.destinationType.value, destination: form.destination.value,
      payload: form.payload.value, persistent: form.deliveryMode.value === "persistent",
      priority: Number(form.priority.value), ttlMs: Number(form.ttlMs.value), dmqEligible: form.dmqEligible.checked,
      correlationId: form.correlationId.value, applicationMessageId: form.applicationMessageId.value,
      applicationMessageType: form.applicationMessageType.value, userProperties: props,
    };
    try {
      const res = await api("/api/publish", req);
      status("published to " + req.destinationType + " " + req.destination + " (spooled to " + res.queues + " queues)");
    } catch (e) {
      status("publish: " + e.message, true);
    }
  });
}

// ---- polling ----

async function refresh() {
  try {
    if (page === "queue") {
      await browse();
    } else if (pages[page]) {
      const st = await api("/api/state");
      pages[page](st);
      last = st;
    }
    document.getElementById("live").className = "ok";
    body.dataset.refreshes = String(Number(body.dataset.refreshes || 0) + 1);
  } catch (e) {
    document.getElementById("live").className = "error";
    status("updating: " + e.message, true);
  }
}

for (const b of document.querySelectorAll("button[data-fault]")) {
  b.addEventListener("click", () => {
    const argInput = b.dataset.arg ? document.getElementById(b.dataset.arg) : null;
    act("fault " + b.dataset.fault, "/api/faults", { fault: b.dataset.fault, arg: argInput ? Number(argInput.value) : 0 });
  });
}
if (page === "queue") setupQueuePage();
if (page === "publish") setupPublish();
if (page !== "publish") {
  refresh();
  setInterval(refresh, pollMs);
}
