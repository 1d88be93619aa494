// The page for people: pick or type a question, see the answer, each claim's verdict, the cited spans and the
// judge's measured agreement with human labels. Text from the server is always inserted as text, never as HTML.
"use strict";

const $ = (id) => document.getElementById(id);
let questions = [];

function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (k === "class") node.className = v; else node.setAttribute(k, v);
  }
  for (const c of children) node.append(c instanceof Node ? c : document.createTextNode(String(c)));
  return node;
}

function headers() {
  const h = { "Content-Type": "application/json" };
  const key = $("api-key").value.trim();
  if (key) h["Authorization"] = "Bearer " + key;
  return h;
}

async function loadSystem() {
  const r = await fetch("/v1/system");
  if (!r.ok) { $("system-line").textContent = "The system is still loading…"; setTimeout(start, 2000); return false; }
  const s = await r.json();
  $("key-label").hidden = !s.auth;
  const sys = s.system;
  $("system-line").textContent = `Selected system: ${sys.series} (${sys.generator}, ${sys.prompt_style} prompt) over `
    + `${s.setup.chunker}/${s.setup.embedder}/${s.setup.method} search; judge: ${s.judge.judge}.`;
  return true;
}

async function loadQuestions() {
  const r = await fetch("/v1/questions", { headers: headers() });
  if (!r.ok) return;
  questions = (await r.json()).questions;
  const pick = $("pick");
  for (const q of questions) {
    pick.append(el("option", { value: q.qid }, `[${q.kind}] ${q.question.slice(0, 110)}`));
  }
}

// Highlight [start, end) spans (non-overlapping after sorting) of a passage text with <mark class=...>.
function highlighted(text, spans) {
  const out = document.createDocumentFragment();
  const sorted = spans.filter((s) => s.start != null && s.end > s.start).sort((a, b) => a.start - b.start);
  let at = 0;
  for (const s of sorted) {
    if (s.start < at) continue;
    out.append(text.slice(at, s.start));
    out.append(el("mark", { class: s.kind, title: s.title || "" }, text.slice(s.start, s.end)));
    at = s.end;
  }
  out.append(text.slice(at));
  return out;
}

function trustTable(judge) {
  const box = el("div", {});
  box.append(el("p", {}, `How far this score can be trusted: the ${judge.judge} judge's agreement with human labels `
    + `(Cohen's kappa, 95% CI). ${judge.note}.`));
  const table = el("table", { class: "kappa", id: "kappa-table" },
    el("tr", {}, el("th", {}, "human-labelled set"), el("th", {}, "kappa"), el("th", {}, "95% CI"), el("th", {}, "n")));
  for (const r of judge.agreement) {
    const ci = r.kappa_ci.length ? `[${r.kappa_ci[0].toFixed(3)}, ${r.kappa_ci[1].toFixed(3)}]` : "";
    table.append(el("tr", {}, el("td", {}, r.benchmark), el("td", {}, r.kappa.toFixed(3)), el("td", {}, ci), el("td", {}, r.n)));
  }
  box.append(table);
  return box;
}

function render(res) {
  $("result").hidden = false;
  $("answer-text").textContent = res.answer;
  const g = res.groundedness == null ? "no claims" : `${(100 * res.groundedness).toFixed(0)}% of ${res.n_claims} claims supported`;
  $("summary").replaceChildren(
    el("span", { class: "score", id: "groundedness" }, `Groundedness: ${g}`),
    ` · fully grounded: ${res.fully_grounded ? "yes" : "no"} · declined: ${res.declined ? "yes" : "no"} · `
      + `source: ${res.source}` + (res.retrieval.fallback ? ` · search fell back to BM25 (${res.retrieval.fallback})` : ""));
  const c = res.correctness;
  $("correctness").textContent = c ? `Correctness against the gold answer: ${c.verdict} (gold: ${c.gold})` : "";
  $("trust").replaceChildren(trustTable(res.judge));
  const claims = $("claims");
  claims.replaceChildren();
  for (const cl of res.claims) {
    const where = cl.passage ? ` — supported by passage [${cl.passage}]` : "";
    claims.append(el("li", { class: `claim ${cl.verdict}`, "data-verdict": cl.verdict },
      el("span", { class: "verdict" }, cl.verdict), cl.text, where));
  }
  const box = $("passages");
  box.replaceChildren();
  for (const p of res.passages) {
    const spans = [];
    for (const ct of res.citations) {
      if (ct.passage === p.n && ct.status === "ok") spans.push({ start: ct.start, end: ct.end, kind: "cited", title: "cited" });
    }
    for (const cl of res.claims) {
      if (cl.passage === p.n) spans.push({ start: cl.start, end: cl.end, kind: "support", title: `supports claim ${cl.claim_id}` });
    }
    box.append(el("div", { class: "passage", "data-n": p.n },
      el("h4", {}, `[${p.n}] ${p.doc_id}, page ${p.pages.map((x) => x + 1).join(", ")}`), highlighted(p.text, spans)));
  }
}

async function ask(event) {
  event.preventDefault();
  const status = $("status");
  status.className = "";
  status.textContent = "Answering…";
  const body = { question: $("question").value };
  const qid = $("pick").value;
  const chosen = questions.find((q) => q.qid === qid);
  if (chosen && chosen.question === body.question) body.qid = qid;
  const k = $("top-k").value;
  if (k) body.top_k = Number(k);
  if ($("filter").checked) body.filter = true;
  const r = await fetch("/v1/answer", { method: "POST", headers: headers(), body: JSON.stringify(body) });
  const res = await r.json();
  if (!r.ok) {
    status.className = "error";
    status.textContent = `${r.status}: ${res.error || "request failed"}`;
    return;
  }
  status.textContent = `Answered in ${Object.values(res.timing_ms).reduce((a, b) => a + b, 0).toFixed(0)} ms.`;
  render(res);
}

$("pick").addEventListener("change", () => {
  const q = questions.find((x) => x.qid === $("pick").value);
  if (q) $("question").value = q.question;
});
$("ask").addEventListener("submit", ask);
function start() { loadSystem().then((ok) => ok && loadQuestions()); }
start();
