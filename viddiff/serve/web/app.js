// The viddiff web page: upload two clips, follow the comparison's events, open the report.
// Plain JavaScript, no build step. Events are read with fetch (EventSource cannot send the API key).
"use strict";

const dev = document.body.dataset.dev === "true";
const $ = (id) => document.getElementById(id);
const verdictNames = { a: "A", b: "B", c: "similar", null: "no valid answer" };

function authHeaders() {
  const key = $("api-key").value.trim();
  if (key) localStorage.setItem("viddiff-key", key);
  return key ? { Authorization: "Bearer " + key } : {};
}

function setStatus(text) { $("status").textContent = text; }

function showError(text) {
  $("error").hidden = false;
  $("error").textContent = text;
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

function upload(form) {
  // XMLHttpRequest, because fetch reports no upload progress.
  return new Promise((resolve, reject) => {
    const xhr = new XMLHttpRequest();
    xhr.open("POST", "/v1/comparisons");
    for (const [name, value] of Object.entries(authHeaders())) xhr.setRequestHeader(name, value);
    xhr.setRequestHeader("Idempotency-Key", crypto.randomUUID ? crypto.randomUUID() : String(Date.now()) + Math.random());
    xhr.upload.onprogress = (e) => {
      if (!e.lengthComputable) return;
      $("upload-progress").value = e.loaded / e.total;
      $("upload-text").textContent = Math.round((100 * e.loaded) / e.total) + "%";
    };
    xhr.onload = () => {
      let body = {};
      try { body = JSON.parse(xhr.responseText); } catch (err) { /* not JSON: reported below */ }
      if (xhr.status === 202) resolve(body);
      else reject(new Error(body.detail || "HTTP " + xhr.status));
    };
    xhr.onerror = () => reject(new Error("the upload failed (network error)"));
    xhr.send(form);
  });
}

function addVerdict(d) {
  const row = document.createElement("tr");
  row.className = "verdict";
  row.dataset.key = d.key;
  const measured = d.evidence && d.evidence.value_a != null
    ? d.evidence.value_a + " / " + d.evidence.value_b + " " + (d.evidence.unit || "") : "";
  const verdict = d.agreement ? d.agreement.headline : verdictNames[d.prediction];
  for (const text of [d.description, verdict, measured]) {
    const cell = document.createElement("td");
    cell.textContent = text;
    row.appendChild(cell);
  }
  const old = document.querySelector('#verdicts tr[data-key="' + CSS.escape(d.key) + '"]');
  if (old) old.replaceWith(row); else $("verdicts").tBodies[0].appendChild(row);
}

async function openReport(id) {
  const response = await fetch("/v1/comparisons/" + id + "/report", { headers: authHeaders() });
  if (!response.ok) return;
  const blob = await response.blob();
  const link = $("report-link");
  link.href = URL.createObjectURL(blob);
  link.hidden = false;
}

function handle(type, data, job) {
  if (type === "proposal") setStatus("checking " + data.differences.length + " differences…");
  else if (type === "segmentation") setStatus("videos aligned; judging…");
  else if (type === "verdict") addVerdict(data.difference);
  else if (type === "result") {
    data.result.differences.forEach(addVerdict);
    setStatus("done: " + data.result.differences.length + " differences");
    if (job.report) openReport(job.id);
    return true;
  } else if (type === "failed") { setStatus("failed"); showError(data.error); return true; }
  else if (type === "cancelled") { setStatus("cancelled"); return true; }
  return false;
}

async function follow(job) {
  // Server-Sent Events over fetch; on a dropped connection, reconnect with Last-Event-ID.
  let lastId = null;
  for (let attempt = 0; attempt < 20; attempt++) {
    const headers = authHeaders();
    if (lastId) headers["Last-Event-ID"] = lastId;
    try {
      const response = await fetch(job.links.events, { headers });
      if (!response.ok) { showError((await response.json()).detail); return; }
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
    } catch (err) { /* reconnect below */ }
    await new Promise((r) => setTimeout(r, 1000));
  }
  showError("lost the event stream; reload the comparison later");
}

async function submit(event) {
  event.preventDefault();
  $("error").hidden = true;
  $("verdicts").tBodies[0].replaceChildren();
  $("report-link").hidden = true;
  $("progress").hidden = false;
  const form = new FormData();
  for (const side of ["a", "b"]) {
    const file = $("video-" + side).files[0];
    if (!file) { showError("pick video " + side.toUpperCase()); return; }
    form.append("video_" + side, file);
  }
  form.append("action", $("action").value);
  const statements = $("statements").value.split("\n").map((s) => s.trim()).filter(Boolean);
  statements.forEach((s) => form.append("differences", s));
  if (!statements.length && $("n-differences").value) form.append("n_differences", $("n-differences").value);
  const report = $("report").checked;
  form.append("report", report ? "true" : "false");
  $("submit").disabled = true;
  setStatus("uploading…");
  try {
    const created = await upload(form);
    setStatus("queued");
    await follow({ ...created, report });
  } catch (err) {
    setStatus("");
    showError(err.message);
  } finally {
    $("submit").disabled = false;
  }
}

if (dev) $("key-row").hidden = true;
$("api-key").value = localStorage.getItem("viddiff-key") || "";
setupDrop("a");
setupDrop("b");
$("compare-form").addEventListener("submit", submit);
