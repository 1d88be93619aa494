"""Predictions: the evaluator, and the rule that a prediction is never edited after it was committed."""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

from finrag.report.predictions import PredictionError, evaluate, load_caveats, load_predictions, resolve

ROOT = Path(__file__).resolve().parents[1]
FILE = ROOT / "docs" / "predictions.yaml"


def test_resolve_follows_keys_with_dots():
    results = {"eval_main": {"summary": {"qwen0.5b-plain-oracle": {"correct": 0.5}}}}
    assert resolve("eval_main.summary.qwen0.5b-plain-oracle.correct", results) == 0.5
    assert resolve("eval_main.summary.missing.correct", results) is None


def test_evaluate_held_failed_pending():
    preds = [
        {"id": "A", "statement": "s", "metric": "m.x", "op": ">", "value": 0.1},
        {"id": "B", "statement": "s", "metric": "m.x", "minus": "m.y", "op": ">=", "value": 0.5},
        {"id": "C", "statement": "s", "metric": "m.z", "op": "<", "value": 1},
    ]
    out = evaluate(preds, {"m": {"x": 0.6, "y": 0.2}})
    assert [r["status"] for r in out["predictions"]] == ["held", "did not hold", "pending"]
    assert out["predictions"][1]["observed"] == pytest.approx(0.4)
    assert out["counts"] == {"held": 1, "did not hold": 1, "pending": 1}
    assert (
        out["predictions"][2]["pending_because"] == "m.z is not in m.json"
    )  # a typo is told from a missing run
    more = [
        {"id": "D", "statement": "s", "metric": "q.x", "op": ">", "value": 0},
        {"id": "E", "statement": "s", "metric": "m.n", "op": ">", "value": 0},
    ]
    why = [r["pending_because"] for r in evaluate(more, {"m": {"n": float("nan")}})["predictions"]]
    assert why == ["no results/metrics/q.json yet", "m.n is undefined (nan)"]


def test_predictions_file_is_valid():
    preds = load_predictions(FILE)
    assert len(preds) >= 10
    caveats = load_caveats(ROOT / "docs" / "prediction_caveats.yaml", {p["id"] for p in preds})
    assert all(c["text"] and c["date"] for cs in caveats.values() for c in cs)


def test_caveats_attach_to_their_prediction_and_never_to_an_unknown_one(tmp_path):
    f = tmp_path / "c.yaml"
    f.write_text("caveats:\n  - {id: P1, date: 2026-11-30, text: 'seen before scoring'}\n")
    preds = [{"id": "P1", "statement": "s", "metric": "m.x", "op": ">", "value": 0}]
    cav = load_caveats(f, {"P1"})
    row = evaluate(preds, {"m": {"x": 1.0}}, cav)["predictions"][0]
    assert row["status"] == "held" and row["caveats"] == [
        {"date": "2026-11-30", "text": "seen before scoring"}
    ]
    assert evaluate(preds, {"m": {"x": 1.0}})["predictions"][0]["caveats"] == []
    with pytest.raises(PredictionError, match="unknown prediction P9"):
        load_caveats(_bad(tmp_path), {"P1"})
    assert load_caveats(tmp_path / "absent.yaml", {"P1"}) == {}


def _bad(tmp_path):
    f = tmp_path / "bad.yaml"
    f.write_text("caveats:\n  - {id: P9, date: 2026-11-30, text: x}\n")
    return f


# Each prediction as first committed (71e4d4f, before any result it concerns existed): the sha256 of its canonical
# JSON. Kept here so the rule holds in any checkout, a shallow clone or an exported tree included. A prediction
# added later gets its line here in the same commit that adds it.
COMMITTED = {
    "P01": "3e6d849c7b151172a5496217ad78c7952ffa9397dc86792da0fea1510b58640d",
    "P02": "15a3f1686c781132902813926cad8e8b2871b0b2e78c8f9ec5c8440ae83b5da9",
    "P03": "3e3f05785295bd474dc1626558595f273c7df91a9102bed783002d7bcbdfe8e0",
    "P04": "feaef504ac367e7181f2c744d2e0c43de6d5f47bbc314872018ec8e92f0f2a51",
    "P05": "ad06ac8552cba0a532576a265a846c235b6a5bb34dce5aa65221c67b206070c8",
    "P06": "c2f9442f4faea4cc89c18f36d5efa5bc49695db125fe4274e734583de91457df",
    "P07": "a805e4370aae9bc69464fcbead3c40bea41c34fa9a1ccda441d03738211790ad",
    "P08": "c0c2462a320107f6b9f1a2d0efbbd56b86c24e21ddbe7f30ed8c9f120797d974",
    "P09": "cfc8a9b0d4d8be977676cb85437de1786ca8cfaa9f71047b6aa0f94aae99bb87",
    "P10": "a4bb68cb3b7067b3666760f1e8ad580f2554841039dc8a9dde600918c36900bc",
    "P11": "4ebf5b06e4ebc5c6e918b503338a9dc0f41acd7e8e88e4d9e9c313bd551772c3",
    "P12": "deca95214ef6eb205cf621a93faec4cabb7b4fc52ad96af04e55b96fb585021e",
}


def _digest(p: dict) -> str:
    return hashlib.sha256(json.dumps(p, sort_keys=True, separators=(",", ":")).encode()).hexdigest()


def test_no_prediction_edited_or_removed_since_it_was_committed():
    """Every prediction is still there, word for word, and every prediction in the file is registered above."""
    now = {p["id"]: p for p in yaml.safe_load(FILE.read_text(encoding="utf-8"))["predictions"]}
    for pid, digest in COMMITTED.items():
        assert pid in now, f"prediction {pid} was removed after it was committed"
        assert _digest(now[pid]) == digest, f"prediction {pid} was changed after it was committed"
    assert set(now) <= set(COMMITTED), (
        f"register new predictions in COMMITTED: {sorted(set(now) - set(COMMITTED))}"
    )


def test_the_registered_digests_are_those_of_the_first_commit():
    """Where git history is there, the digests above are those of the commit that added the file (so they were not
    themselves recomputed from an edited file)."""
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        pytest.skip("not a git checkout: the digests alone protect the predictions")
    shallow = subprocess.run(
        ["git", "rev-parse", "--is-shallow-repository"], cwd=ROOT, capture_output=True, text=True
    )
    if shallow.stdout.strip() == "true":
        pytest.skip("shallow clone: the first commit is not here; the digests alone protect the predictions")
    rel = FILE.relative_to(ROOT).as_posix()
    log = subprocess.run(
        ["git", "log", "--diff-filter=A", "--format=%H", "--", rel], cwd=ROOT, capture_output=True, text=True
    )
    assert log.returncode == 0, f"git log failed: {log.stderr.strip()}"
    first = log.stdout.split()[-1]
    old = subprocess.run(["git", "show", f"{first}:{rel}"], cwd=ROOT, capture_output=True, text=True)
    assert old.returncode == 0, old.stderr
    before = {p["id"]: _digest(p) for p in yaml.safe_load(old.stdout)["predictions"]}
    assert before == {pid: COMMITTED[pid] for pid in before}
