// The live page: each change of a control asks the server for the report's sections again (POST /view) and
// swaps them in; the URL carries the overrides (?set=section.key=value, repeated; ?pin=... for a pinned
// baseline), so a link restores the view. A bad value shows the server's one-line error beside its control
// and the last good view stays. No framework, no build step, no request to any other host.
"use strict";

const state = {overrides: new Map(), pinned: null, last: null, sequence: 0};
const NUMBER = /^-?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$/;

function readUrl() {
  const query = new URLSearchParams(location.search);
  for (const item of query.getAll("set")) {
    const at = item.indexOf("=");
    if (at > 0) state.overrides.set(item.slice(0, at).trim(), item.slice(at + 1));
  }
  state.pinned = query.has("pin") || query.get("pinned") === "1" ? query.getAll("pin") : null;
}

function overrideList() {
  return [...state.overrides].map(([key, value]) => `${key}=${value}`);
}

function query(withPin) {
  const query = new URLSearchParams();
  for (const item of overrideList()) query.append("set", item);
  if (withPin && state.pinned !== null) {
    for (const item of state.pinned) query.append("pin", item);
    query.set("pinned", "1");
  }
  const text = query.toString();
  return text ? `?${text}` : "";
}

function tomlValue(control) {
  if (control.classList.contains("offers")) {
    return JSON.stringify([...control.querySelectorAll("input:checked")].map((box) => box.value));
  }
  const value = control.value.trim();
  if (control.type === "number") return value;
  if (control.type === "text" && NUMBER.test(value)) return value;
  return JSON.stringify(value);
}

function showError(field, message) {
  clearErrors();
  const row = document.querySelector(`.control[data-control="${CSS.escape(field)}"]`)
    || document.querySelector(`.control[data-control="${CSS.escape(state.last || "")}"]`);
  if (row) {
    row.classList.add("bad");
    row.querySelector(".error").textContent = message;
  } else {
    document.getElementById("problem").innerHTML = "";
    const line = document.createElement("p");
    line.className = "problem";
    line.setAttribute("role", "alert");
    line.textContent = message;
    document.getElementById("problem").append(line);
  }
}

function clearErrors() {
  for (const row of document.querySelectorAll(".control.bad")) {
    row.classList.remove("bad");
    row.querySelector(".error").textContent = "";
  }
  document.getElementById("problem").innerHTML = "";
}

function updateLinks() {
  document.getElementById("toml").href = `/scenario.toml${query(false)}`;
  document.getElementById("api-plan").href = `/api/plan${query(false)}`;
  document.getElementById("api-train").href = `/api/train${query(false)}`;
  const pinned = state.pinned === null ? "?pinned=1" : "";
  document.getElementById("api-compare").href = `/api/compare${query(true) || pinned}`;
  document.getElementById("pin").textContent = state.pinned === null ? "Pin as baseline" : "Unpin baseline";
}

async function refresh() {
  const sequence = ++state.sequence;
  const started = performance.now();
  document.body.classList.add("busy");
  let response, answer;
  try {
    response = await fetch("/view", {method: "POST", headers: {"Content-Type": "application/json"},
                                     body: JSON.stringify({set: overrideList(), pin: state.pinned})});
    answer = await response.json();
  } catch (failure) {
    answer = {error: {field: "", message: `no answer from the server: ${failure}`}};
  }
  if (sequence !== state.sequence) return;   // a later change has been sent: its answer wins
  document.body.classList.remove("busy");
  if (!response || !response.ok) {
    showError(answer.error.field, answer.error.message);
    document.getElementById("status").textContent = "not updated: the last good view is shown";
    return;
  }
  clearErrors();
  document.getElementById("report").innerHTML = answer.html;
  document.getElementById("offers").innerHTML = answer.offers;
  history.replaceState(null, "", location.pathname + query(true));
  updateLinks();
  document.getElementById("status").textContent = `updated in ${Math.round(performance.now() - started)} ms`;
  document.body.dataset.updates = String(Number(document.body.dataset.updates || 0) + 1);
}

function changed(event) {
  const control = event.target.closest(".offers") || event.target;
  const key = control.dataset.key;
  if (!key) return;
  state.last = key;
  state.overrides.set(key, tomlValue(control));
  refresh();
}

function start() {
  readUrl();
  if (document.querySelector("#problem .problem")) {   // the link's overrides were refused: start clean
    state.overrides.clear();
    state.pinned = null;
    history.replaceState(null, "", location.pathname);
  }
  const form = document.getElementById("inputs");
  form.addEventListener("change", changed);
  form.addEventListener("submit", (event) => event.preventDefault());
  document.getElementById("pin").addEventListener("click", () => {
    state.pinned = state.pinned === null ? overrideList() : null;
    refresh();
  });
  document.getElementById("reset").addEventListener("click", () => {
    location.href = location.pathname;
  });
  updateLinks();
  document.body.dataset.ready = "1";
}

document.addEventListener("DOMContentLoaded", start);
