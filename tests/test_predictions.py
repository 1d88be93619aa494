"""Predictions: the evaluator, and the rule that a prediction is never edited after it was committed."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

from finrag.predictions import evaluate, load_predictions, resolve

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


def test_predictions_file_is_valid():
    preds = load_predictions(FILE)
    assert len(preds) >= 10


def test_no_prediction_edited_since_first_commit():
    """Every prediction present in the commit that added the file is still there, word for word."""
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        pytest.skip("not a git checkout: cannot compare predictions with the commit that added them")
    rel = FILE.relative_to(ROOT).as_posix()
    log = subprocess.run(
        ["git", "log", "--diff-filter=A", "--format=%H", "--", rel], cwd=ROOT, capture_output=True, text=True
    )
    first = log.stdout.split()
    if log.returncode != 0 or not first:
        pytest.skip("docs/predictions.yaml is not committed yet")
    old = subprocess.run(["git", "show", f"{first[-1]}:{rel}"], cwd=ROOT, capture_output=True, text=True)
    assert old.returncode == 0, old.stderr
    before = {p["id"]: p for p in yaml.safe_load(old.stdout)["predictions"]}
    now = {p["id"]: p for p in yaml.safe_load(FILE.read_text(encoding="utf-8"))["predictions"]}
    for pid, p in before.items():
        assert now.get(pid) == p, f"prediction {pid} was changed or removed after it was committed"
