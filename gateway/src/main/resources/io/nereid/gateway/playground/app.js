"use strict";
// Model output is only ever set as textContent: nothing it contains is parsed as HTML.
const $ = id => document.getElementById(id);
const STORE = "nereid.playground.v1";
const settings = ["key", "system", "temperature", "top_p", "max_tokens", "seed", "schema", "tools", "tool_choice", "mode",
  "model"];
let state = { messages: [] };
let running = null;   // the AbortController of the request in flight

function save() {
  const s = { messages: state.messages };
  for (const k of settings) s[k] = $(k).value;
  localStorage.setItem(STORE, JSON.stringify(s));
}
function load() {
  try {
    const s = JSON.parse(localStorage.getItem(STORE) || "{}");
    state.messages = Array.isArray(s.messages) ? s.messages : [];
    for (const k of settings) if (typeof s[k] === "string" && k !== "model") $(k).value = s[k];
    state.savedModel = s.model;
  } catch (e) { state.messages = []; }
}
function headers() {
  const h = { "Content-Type": "application/json" };
  const key = $("key").value.trim();
  if (key) h["Authorization"] = "Bearer " + key;
  return h;
}
function status(text) { $("status").textContent = text; }

function bubble(m, index) {
  const div = document.createElement("div");
  div.className = "msg " + m.role + (m.error ? " error" : "");
  div.dataset.index = String(index);
  const role = document.createElement("div");
  role.className = "role";
  role.textContent = m.role;
  const tools = document.createElement("span");
  tools.className = "tools";
  const copy = document.createElement("button");
  copy.type = "button"; copy.textContent = "copy"; copy.className = "copy";
  copy.onclick = () => navigator.clipboard && navigator.clipboard.writeText(m.content);
  tools.appendChild(copy);
  if (m.role === "assistant") {
    const again = document.createElement("button");
    again.type = "button"; again.textContent = "regenerate"; again.className = "regenerate";
    again.onclick = () => regenerate(index);
    tools.appendChild(again);
  }
  role.appendChild(tools);
  const text = document.createElement("div");
  text.className = "text";
  text.textContent = m.content + callsText(m);
  const stats = document.createElement("div");
  stats.className = "stats";
  stats.textContent = m.stats || "";
  div.append(role, text, stats);
  if (m.tool_calls && index === state.messages.length - 1 && !m.pending) div.appendChild(resultsForm(m, index));
  return div;
}
// The calls of an assistant message as text ("-> name(arguments)", one per line), or "".
function callsText(m) {
  if (!m.tool_calls || !m.tool_calls.length) return "";
  return (m.content ? "\n" : "") + m.tool_calls.map(c => "\u2192 " + c.function.name + "(" + c.function.arguments + ")").join("\n");
}
// Under the last reply when it called tools: one result box per call, and a button that sends them back
// as "tool" messages (tool_call_id = the call's id) and asks for the next reply.
function resultsForm(m, index) {
  const form = document.createElement("div");
  form.className = "tool-results";
  for (const c of m.tool_calls) {
    const label = document.createElement("label");
    label.textContent = "result of " + c.function.name + " (" + c.id + ")";
    const box = document.createElement("textarea");
    box.className = "tool-result"; box.rows = 2; box.dataset.callId = c.id;
    label.appendChild(box);
    form.appendChild(label);
  }
  const go = document.createElement("button");
  go.type = "button"; go.textContent = "send results"; go.className = "send-results";
  go.onclick = () => {
    if (running) return;
    for (const box of form.querySelectorAll("textarea.tool-result")) {
      state.messages.push({ role: "tool", tool_call_id: box.dataset.callId, content: box.value });
    }
    save();
    generate();
  };
  form.appendChild(go);
  return form;
}
function render() {
  const log = $("log");
  log.replaceChildren(...state.messages.map(bubble));
  log.scrollTop = log.scrollHeight;
}

async function models() {
  try {
    const r = await fetch("/v1/models", { headers: headers() });
    if (!r.ok) { status("models: HTTP " + r.status + (r.status === 401 ? " (enter the API key)" : "")); return; }
    const list = (await r.json()).data || [];
    const sel = $("model");
    sel.replaceChildren(...list.map(m => { const o = document.createElement("option"); o.value = o.textContent = m.id; return o; }));
    if (state.savedModel && list.some(m => m.id === state.savedModel)) sel.value = state.savedModel;
    status(list.length + " model(s)");
  } catch (e) { status("models: " + e); }
}

function body(stream) {
  const b = { model: $("model").value, stream: true, stream_options: { include_usage: true } };
  const num = (id, f) => { const v = $(id).value.trim(); if (v !== "") b[f || id] = Number(v); };
  num("temperature"); num("top_p"); num("max_tokens"); num("seed");
  if ($("mode").value === "completion") {
    b.prompt = state.messages.filter(m => !m.error).map(m => m.content).join("");
  } else {
    const msgs = [];
    if ($("system").value.trim()) msgs.push({ role: "system", content: $("system").value });
    for (const m of state.messages) {
      if (m.error || m.pending) continue;
      if (m.role === "tool") msgs.push({ role: "tool", tool_call_id: m.tool_call_id, content: m.content });
      else if (m.tool_calls) msgs.push({ role: m.role, content: m.content || "", tool_calls: m.tool_calls });
      else msgs.push({ role: m.role, content: m.content });
    }
    b.messages = msgs;
    const schema = $("schema").value.trim();
    if (schema) b.response_format = { type: "json_schema", json_schema: { name: "answer", schema: JSON.parse(schema) } };
    const tools = $("tools").value.trim();
    if (tools) { b.tools = JSON.parse(tools); b.tool_choice = $("tool_choice").value; }
  }
  return b;
}

async function generate() {
  let payload;
  try { payload = body(); } catch (e) { status("schema or tools: " + e.message); return; }
  const reply = { role: "assistant", content: "", pending: true };
  state.messages.push(reply);
  render();
  const node = $("log").lastElementChild;
  const text = node.querySelector(".text"), stats = node.querySelector(".stats");
  running = new AbortController();
  $("send").disabled = true; $("stop").disabled = false;
  document.body.dataset.streaming = "true";
  const start = performance.now();
  let first = 0, tokens = 0;
  const calls = [];   // tool calls as they stream: {id, name, arguments}
  const show = () => {
    const shown = calls.map(c => "\u2192 " + c.name + "(" + c.arguments + ")").join("\n");
    text.textContent = reply.content + (reply.content && shown ? "\n" : "") + shown;   // text only
  };
  const path = $("mode").value === "completion" ? "/v1/completions" : "/v1/chat/completions";
  try {
    const r = await fetch(path, { method: "POST", headers: headers(), body: JSON.stringify(payload), signal: running.signal });
    if (!r.ok) {
      let msg = "HTTP " + r.status;
      try { msg += ": " + (await r.json()).error.message; } catch (e) { /* not JSON */ }
      throw new Error(msg);
    }
    const reader = r.body.getReader();
    const decoder = new TextDecoder();
    let buf = "";
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      buf += decoder.decode(value, { stream: true });
      let cut;
      while ((cut = buf.indexOf("\n\n")) >= 0) {
        const frame = buf.slice(0, cut); buf = buf.slice(cut + 2);
        for (const line of frame.split("\n")) {
          if (!line.startsWith("data: ")) continue;
          const data = line.slice(6);
          if (data === "[DONE]") continue;
          const e = JSON.parse(data);
          if (e.error) throw new Error(e.error.message || String(e.error));
          if (e.usage) tokens = e.usage.completion_tokens;
          for (const c of e.choices || []) {
            const piece = (c.delta && c.delta.content) || c.text || "";
            if (piece) {
              if (!first) first = performance.now();
              reply.content += piece;
            }
            for (const t of (c.delta && c.delta.tool_calls) || []) {
              if (!first) first = performance.now();
              if (!calls[t.index]) calls[t.index] = { id: "", name: "", arguments: "" };
              if (t.id) calls[t.index].id = t.id;
              if (t.function && t.function.name) calls[t.index].name = t.function.name;
              if (t.function && t.function.arguments) calls[t.index].arguments += t.function.arguments;
            }
            show();
          }
        }
      }
      $("log").scrollTop = $("log").scrollHeight;
    }
    if (calls.length) {   // kept as the API has them, so results can be sent back
      reply.tool_calls = calls.map(c => ({ id: c.id, type: "function", function: { name: c.name, arguments: c.arguments } }));
    }
    const secs = (performance.now() - (first || start)) / 1000;
    reply.stats = "TTFT " + ((first || performance.now()) - start).toFixed(0) + " ms · " + tokens + " tokens"
        + (tokens > 1 && secs > 0 ? " · " + ((tokens - 1) / secs).toFixed(1) + " tok/s" : "");
  } catch (e) {
    if (e.name === "AbortError") {
      reply.stats = "stopped";
    } else {
      reply.error = true;
      reply.content = reply.content ? reply.content + "\n[" + e.message + "]" : e.message;
    }
  } finally {
    delete reply.pending;
    running = null;
    $("send").disabled = false; $("stop").disabled = true;
    document.body.dataset.streaming = "false";
    save();
    render();
  }
}

function send(ev) {
  if (ev) ev.preventDefault();
  if (running) return;
  const content = $("prompt").value;
  if (!content.trim()) return;
  state.messages.push({ role: "user", content });
  $("prompt").value = "";
  save();
  generate();
}
function regenerate(index) {
  if (running) return;
  state.messages = state.messages.slice(0, index);
  save();
  generate();
}

$("composer").addEventListener("submit", send);
$("prompt").addEventListener("keydown", e => { if (e.key === "Enter" && !e.shiftKey) send(e); });
$("stop").addEventListener("click", () => running && running.abort());
$("clear").addEventListener("click", () => { if (!running) { state.messages = []; save(); render(); } });
$("key").addEventListener("change", () => { save(); models(); });
for (const k of settings) $(k).addEventListener("change", save);
load();
render();
models();
