// finrag labelling page: collect the chosen verdicts, POST them as JSON, go to the next open answer.
// Text is never inserted as HTML (textContent only). When the server needs a token (bound beyond loopback),
// the page was opened as /?token=...: the token is sent on the API call and kept on the next address.
"use strict";

document.addEventListener("DOMContentLoaded", () => {
  const form = document.getElementById("label-form");
  const status = document.getElementById("status");
  if (!form) return;
  const token = new URLSearchParams(window.location.search).get("token");
  const withToken = (url) => (token ? url + "&token=" + encodeURIComponent(token) : url);

  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const labels = [];
    const problems = [];
    form.querySelectorAll("fieldset.claim").forEach((fs, k) => {
      const chosen = fs.querySelector("input[type=radio]:checked");
      const note = fs.querySelector("input[type=text]").value.trim();
      if (chosen) {
        labels.push({ claim_id: fs.dataset.claimId, verdict: chosen.value, note: note });
      } else if (note) {
        problems.push(`claim ${k + 1} has a note but no verdict`);
      }
    });
    if (problems.length) { status.textContent = problems.join("; "); status.className = "error"; return; }
    if (!labels.length) {
      status.textContent = "Choose a verdict for at least one claim (or use skip).";
      status.className = "error";
      return;
    }
    const button = document.getElementById("save");
    button.disabled = true;
    status.textContent = "saving...";
    status.className = "";
    try {
      const response = await fetch("/api/label", {
        method: "POST",
        headers: token
          ? { "Content-Type": "application/json", "X-Finrag-Token": token }
          : { "Content-Type": "application/json" },
        body: JSON.stringify({ answer_id: form.dataset.answerId, labels: labels }),
      });
      let result;
      try {
        result = await response.json();
      } catch (_) {
        throw new Error(`HTTP ${response.status}`);
      }
      if (!response.ok) throw new Error(result.error || `HTTP ${response.status}`);
      status.textContent = `saved ${result.saved} label(s)`;
      status.className = "ok";
      window.location.href = withToken(result.next === null ? "/?i=" + form.dataset.i : "/?i=" + result.next);
    } catch (err) {
      status.textContent = "not saved: " + err.message;
      status.className = "error";
      button.disabled = false;
    }
  });
});
