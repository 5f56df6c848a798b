// The viddiff web page: upload two clips (and, filmed with two phones, each one's other views and their
// calibration), follow the comparison's events, show each verdict with its evidence, open the report. Plain JavaScript, no build step, nothing inline (the page runs under a strict CSP).
// Events are read with fetch (EventSource cannot send the API key). The open comparison's id is the URL's
// hash, so a reload finds it again; the key's recent comparisons are listed below.
"use strict";

const dev = document.body.dataset.dev === "true";
const $ = (id) => document.getElementById(id);
const verdictNames = { a: "A", b: "B", c: "similar", null: "no valid answer" };
const FINISHED = new Set(["done", "failed", "cancelled"]);
let current = null; // the comparison shown: { id, links, report }
let following = null; // the AbortController of the event stream being read

function authHeaders() {
  const key = $("api-key").value.trim();
  if (key) localStorage.setItem("viddiff-key", key);
  return key ? { Authorization: "Bearer " + key } : {};
}

async function problem(response) {
  try { return (await response.json()).detail; } catch (err) { return "HTTP " + response.status; }
}

function setStatus(text) {
  $("status").textContent = text;
  $("status").parentElement.hidden = !text;
}

function showError(text) {
  // Nothing stale above the message: no finished upload bar, no empty table.
  $("upload-row").hidden = true;
  if (!$("verdicts").tBodies[0].rows.length) $("verdicts").hidden = true;
  $("error").hidden = false;
  $("error").textContent = text;
}

function resetView(title) {
  $("progress").hidden = false;
  $("job-title").textContent = title;
  $("upload-row").hidden = true;
  $("error").hidden = true;
  $("notes").hidden = true;
  $("notes").querySelector("ul").replaceChildren();
  $("verdicts").tBodies[0].replaceChildren();
  $("verdicts").hidden = true;
  $("report-link").hidden = true;
  $("cancel").hidden = true;
  setStatus("");
}

function setupDrop(side) {
  const zone = $("drop-" + side), input = $("video-" + side);
  const showName = () => { zone.querySelector(".file-name").textContent = input.files[0] ? input.files[0].name : "pick or drop a clip"; };
  input.addEventListener("change", showName);
  zone.addEventListener("dragover", (e) => { e.preventDefault(); zone.classList.add("over"); });
  zone.addEventListener("dragleave", () => zone.classList.remove("over"));
  zone.addEventListener("drop", (e) => {
    e.preventDefault();
    zone.classList.remove("over");
    if (e.dataTransfer.files.length) { input.files = e.dataTransfer.files; showName(); }
  });
}

function upload(form, url = "/v1/comparisons", expected = 202) {
  // XMLHttpRequest, because fetch reports no upload progress.
  return new Promise((resolve, reject) => {
    const xhr = new XMLHttpRequest();
    xhr.open("POST", url);
    for (const [name, value] of Object.entries(authHeaders())) xhr.setRequestHeader(name, value);
    if (url === "/v1/comparisons") {
      xhr.setRequestHeader("Idempotency-Key", crypto.randomUUID ? crypto.randomUUID() : String(Date.now()) + Math.random());
    }
    $("upload-progress").value = 0;
    xhr.upload.onprogress = (e) => {
      if (!e.lengthComputable) return;
      $("upload-progress").value = e.loaded / e.total;
      $("upload-text").textContent = Math.round((100 * e.loaded) / e.total) + "%";
    };
    xhr.onload = () => {
      let body = {};
      try { body = JSON.parse(xhr.responseText); } catch (err) { /* not JSON: reported below */ }
      if (xhr.status === expected) resolve(body);
      else reject(new Error(body.detail || "HTTP " + xhr.status));
    };
    xhr.onerror = () => reject(new Error("the upload failed (network error)"));
    xhr.send(form);
  });
}

// ---- two phones per side: the other views and their calibration, uploaded before the comparison

function otherViews(side) {
  return { views: [...$("views-" + side).files], calibration: $("calibration-" + side).files[0] };
}

function checkOtherViews(side) {
  // What the server would refuse, said before anything is uploaded.
  const { views, calibration } = otherViews(side);
  const name = side.toUpperCase();
  if (views.length && !calibration) return "pick the calibration of " + name + "'s cameras, or no other views of " + name;
  if (calibration && !views.length) return "pick the other views of " + name + " that the calibration of " + name + " is for";
  return "";
}

async function uploadOtherViews(side, form) {
  // Each view as an uploaded video and the calibration as an uploaded calibration, named in the form by id.
  const { views, calibration } = otherViews(side);
  const name = side.toUpperCase();
  for (const [i, file] of views.entries()) {
    setStatus("uploading view " + (i + 2) + " of " + name + "…");
    const body = new FormData();
    body.append("video", file);
    form.append("views_" + side, (await upload(body, "/v1/videos", 201)).id);
  }
  if (calibration) {
    setStatus("uploading the calibration of " + name + "…");
    const body = new FormData();
    body.append("calibration", calibration);
    form.append("calibration_" + side + "_id", (await upload(body, "/v1/calibrations", 201)).id);
  }
}

// ---- verdicts: one row per difference, in the order the statements were typed (or proposed)

function rowFor(key) {
  let row = $("verdicts").querySelector('tbody tr[data-key="' + CSS.escape(key) + '"]');
  if (!row) {
    row = document.createElement("tr");
    row.className = "verdict pending";
    row.dataset.key = key;
    for (const name of ["statement", "prediction", "keyframes", "measured"]) {
      const cell = document.createElement("td");
      cell.className = name;
      row.appendChild(cell);
    }
    $("verdicts").tBodies[0].appendChild(row);
    $("verdicts").hidden = false;
  }
  return row;
}

function fillStatement(row, description, rationale) {
  const text = document.createElement("div");
  text.className = "text";
  text.textContent = description;
  const cell = row.querySelector(".statement");
  cell.replaceChildren(text);
  if (rationale) {
    const why = document.createElement("div");
    why.className = "rationale";
    why.textContent = rationale;
    cell.appendChild(why);
  }
}

function planRows(differences) {
  for (const d of differences) {
    const row = rowFor(d.key);
    if (!row.classList.contains("pending")) continue; // decided already (a replayed stream)
    fillStatement(row, d.description, "");
    row.querySelector(".prediction").textContent = "…";
  }
}

function seconds(times) { return times.map((t) => t.toFixed(2)).join(", ") + " s"; }

function nowrap(text) {
  const span = document.createElement("span");
  span.className = "nowrap";
  span.textContent = text;
  return span;
}

function joined(parts, separator) {
  // Each part unbroken; lines break only between them.
  return parts.flatMap((part, i) => (i ? [separator, nowrap(part)] : [nowrap(part)]));
}

function keyframeTimes(d) {
  const parts = [];
  if (d.times_a && d.times_a.length) parts.push("A " + seconds(d.times_a));
  if (d.times_b && d.times_b.length) parts.push("B " + seconds(d.times_b));
  return joined(parts, " · ");
}

function number(v) {
  const size = Math.abs(v);
  return v.toFixed(size >= 100 ? 0 : size >= 10 ? 1 : 2);
}

function measurement(d) {
  const e = d.evidence;
  if (!e) return d.evidence_absent ? ["not compared: " + d.evidence_absent] : [];
  if (e.status !== "measured") return ["not compared: " + (e.reason || e.status.replace("_", " "))];
  const unit = e.unit ? " " + e.unit : "";
  const side = (value, interval) => number(value) + (interval ? " ± " + number(interval.half_width) : "") + unit;
  return [e.label + ": ", ...joined(["A " + side(e.value_a, e.interval_a), "B " + side(e.value_b, e.interval_b)], ", ")];
}

function showVerdict(d) {
  const row = rowFor(d.key);
  row.classList.remove("pending");
  fillStatement(row, d.description, d.rationale);
  // with evidence, the headline: the VLM's letter beside the measured one, and whether they agree
  row.querySelector(".prediction").textContent = d.agreement ? d.agreement.headline : verdictNames[d.prediction];
  row.querySelector(".keyframes").replaceChildren(...keyframeTimes(d));
  row.querySelector(".measured").replaceChildren(...measurement(d));
}

function markUndecided() {
  for (const row of $("verdicts").querySelectorAll("tbody tr.pending")) row.querySelector(".prediction").textContent = "not decided";
}

function showNotes(notes) {
  const items = (notes || []).map((note) => {
    const item = document.createElement("li");
    item.textContent = note;
    return item;
  });
  $("notes").querySelector("ul").replaceChildren(...items);
  $("notes").hidden = !items.length;
}

function showResult(result) {
  const body = $("verdicts").tBodies[0];
  for (const d of result.differences) {
    showVerdict(d);
    body.appendChild(rowFor(d.key)); // the result's order: the typed one
  }
  showNotes(result.notes);
}

async function openReport(id) {
  // A signed link to the report's own URL, never a blob: of this page's origin (which could read the key);
  // the server sandboxes the report.
  const response = await fetch("/v1/comparisons/" + id + "/report-link", { method: "POST", headers: authHeaders() });
  if (!response.ok) return;
  const link = $("report-link");
  link.href = (await response.json()).url;
  link.hidden = false;
}

// ---- the event stream

function finish(statusText) {
  $("cancel").hidden = true;
  setStatus(statusText);
  refreshRecent();
}

function handle(type, data, job) {
  if (type === "proposal") {
    planRows(data.differences);
    setStatus("checking " + data.differences.length + " differences…");
  } else if (type === "segmentation") setStatus("videos aligned; judging…");
  else if (type === "verdict") showVerdict(data.difference);
  else if (type === "result") {
    showResult(data.result);
    finish("done: " + data.result.differences.length + " differences");
    if (job.report) openReport(job.id);
    return true;
  } else if (type === "failed") {
    markUndecided();
    finish("failed");
    showError(data.error);
    return true;
  } else if (type === "cancelled") {
    markUndecided();
    finish("cancelled");
    return true;
  }
  return false;
}

async function follow(job) {
  // Server-Sent Events over fetch; on a dropped connection, reconnect with Last-Event-ID.
  if (following) following.abort();
  const controller = new AbortController();
  following = controller;
  let lastId = null;
  for (let attempt = 0; attempt < 20; attempt++) {
    const headers = authHeaders();
    if (lastId) headers["Last-Event-ID"] = lastId;
    try {
      const response = await fetch(job.links.events, { headers, signal: controller.signal });
      if (!response.ok) { showError(await problem(response)); return; }
      const reader = response.body.getReader();
      const decoder = new TextDecoder();
      let buffer = "";
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        buffer += decoder.decode(value, { stream: true });
        let cut;
        while ((cut = buffer.indexOf("\n\n")) >= 0) {
          const block = buffer.slice(0, cut);
          buffer = buffer.slice(cut + 2);
          let type = "message", data = "";
          for (const line of block.split("\n")) {
            if (line.startsWith("id: ")) lastId = line.slice(4);
            else if (line.startsWith("event: ")) type = line.slice(7);
            else if (line.startsWith("data: ")) data += line.slice(6);
          }
          if (data && handle(type, JSON.parse(data), job)) return;
        }
      }
    } catch (err) { /* reconnect below, unless another comparison was opened */ }
    if (controller.signal.aborted) return;
    await new Promise((r) => setTimeout(r, 1000));
  }
  showError("lost the event stream; reload the comparison later");
}

// ---- one comparison: a new one, or one of the list (or the URL's hash) opened again

function show(job) {
  current = job;
  history.replaceState(null, "", "#" + job.id);
  $("cancel").hidden = FINISHED.has(job.status);
  return follow(job);
}

async function openComparison(id) {
  const response = await fetch("/v1/comparisons/" + encodeURIComponent(id), { headers: authHeaders() });
  if (!response.ok) {
    resetView("");
    showError(await problem(response));
    history.replaceState(null, "", location.pathname);
    return;
  }
  const job = await response.json();
  resetView(job.action);
  setStatus(job.status);
  await show(job);
}

async function cancel() {
  if (!current) return;
  const job = current;
  $("cancel").disabled = true;
  const response = await fetch("/v1/comparisons/" + job.id, { method: "DELETE", headers: authHeaders() });
  $("cancel").disabled = false;
  if (response.status !== 204) { showError(await problem(response)); return; }
  if (following) following.abort();
  markUndecided();
  finish("cancelled");
  history.replaceState(null, "", location.pathname);
}

async function submit(event) {
  event.preventDefault();
  const action = $("action").value;
  resetView(action);
  const form = new FormData();
  for (const side of ["a", "b"]) {
    const file = $("video-" + side).files[0];
    if (!file) { showError("pick video " + side.toUpperCase()); return; }
    const wrong = checkOtherViews(side);
    if (wrong) { showError(wrong); return; }
    form.append("video_" + side, file);
  }
  form.append("action", action);
  const statements = $("statements").value.split("\n").map((s) => s.trim()).filter(Boolean);
  statements.forEach((s) => form.append("differences", s));
  if (!statements.length && $("n-differences").value) form.append("n_differences", $("n-differences").value);
  const report = $("report").checked;
  form.append("report", report ? "true" : "false");
  form.append("pose", $("pose").checked ? "true" : "false");
  $("upload-progress").value = 0;
  $("upload-text").textContent = "";
  $("upload-row").hidden = false;
  $("submit").disabled = true;
  try {
    for (const side of ["a", "b"]) await uploadOtherViews(side, form);
    setStatus("uploading…");
    const created = await upload(form);
    $("upload-row").hidden = true;
    setStatus("queued");
    refreshRecent();
    await show({ ...created, report });
  } catch (err) {
    setStatus("");
    showError(err.message);
  } finally {
    $("submit").disabled = false;
  }
}

// ---- the key's recent comparisons

function when(seconds) {
  return seconds ? new Date(seconds * 1000).toLocaleString() : "";
}

async function refreshRecent() {
  if (!dev && !$("api-key").value.trim()) { $("recent-section").hidden = true; return; }
  const response = await fetch("/v1/comparisons?limit=10", { headers: authHeaders() });
  if (!response.ok) { $("recent-section").hidden = true; return; }
  const items = ((await response.json()).comparisons || []).slice(0, 10).map((c) => {
    const button = document.createElement("button");
    button.type = "button";
    button.className = "recent-item status-" + c.status;
    button.dataset.id = c.id;
    button.textContent = c.action + " · " + c.status + " · " + when(c.created_at ?? c.created);
    const item = document.createElement("li");
    item.appendChild(button);
    return item;
  });
  $("recent").replaceChildren(...items);
  $("recent-section").hidden = !items.length;
}

if (dev) $("key-row").hidden = true;
$("api-key").value = localStorage.getItem("viddiff-key") || "";
setupDrop("a");
setupDrop("b");
for (const side of ["a", "b"]) {
  $("views-" + side).addEventListener("change", () => { if ($("views-" + side).files.length) $("pose").checked = true; });
}
$("compare-form").addEventListener("submit", submit);
$("cancel").addEventListener("click", cancel);
$("api-key").addEventListener("change", refreshRecent);
$("recent").addEventListener("click", (e) => {
  const button = e.target.closest("button[data-id]");
  if (button) openComparison(button.dataset.id);
});
refreshRecent();
if (location.hash.length > 1) openComparison(decodeURIComponent(location.hash.slice(1)));
