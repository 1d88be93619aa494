"""Predictions written before the results: evaluate each against results/metrics/*.json.

A prediction names a metric path `FILE.key.key...` (FILE = a metrics file stem; keys may contain dots only
where a key itself does, so keys are matched greedily against the JSON), an optional `minus` path, and a
condition (`op`, `value`). Missing metrics leave the prediction pending: nothing is guessed.
"""

from __future__ import annotations

import operator
from collections.abc import Mapping
from pathlib import Path

import yaml

OPS = {">": operator.gt, ">=": operator.ge, "<": operator.lt, "<=": operator.le, "==": operator.eq}


class PredictionError(ValueError):
    pass


def load_predictions(path: Path) -> list[dict]:
    data = yaml.safe_load(Path(path).read_text(encoding="utf-8"))
    preds = data.get("predictions") or []
    seen = set()
    for p in preds:
        for key in ("id", "statement", "metric", "op", "value"):
            if key not in p:
                raise PredictionError(f"{path}: prediction {p.get('id', '?')} lacks '{key}'")
        if p["op"] not in OPS:
            raise PredictionError(f"{path}: prediction {p['id']}: unknown op '{p['op']}'")
        if p["id"] in seen:
            raise PredictionError(f"{path}: duplicate prediction id {p['id']}")
        seen.add(p["id"])
    return preds


def resolve(path: str, results: Mapping[str, object]):
    """Follow `file.key.key` through nested dicts; keys containing dots (run ids) are matched greedily."""
    parts = path.split(".")
    node: object = results
    i = 0
    while i < len(parts):
        if not isinstance(node, Mapping):
            return None
        for j in range(len(parts), i, -1):  # longest key first
            key = ".".join(parts[i:j])
            if key in node:
                node, i = node[key], j
                break
        else:
            return None
    return node


def why_missing(path: str, results: Mapping[str, object]) -> str | None:
    """Why a metric path gives no number: its file is not there yet (a stage has not run), a key is not in the
    file (a typo, or a run not scored yet), or the value is undefined (None / NaN). None when it is a number."""
    value = resolve(path, results)
    if isinstance(value, int | float) and not isinstance(value, bool) and value == value:
        return None
    stem = path.split(".", 1)[0]
    if stem not in results:
        return f"no results/metrics/{stem}.json yet"
    if not _present(path, results):
        return f"{path} is not in {stem}.json"
    return f"{path} is undefined ({value!r})"


def _present(path: str, results: Mapping[str, object]) -> bool:
    """Is the path's last key present (with any value, None included)?"""
    head, _, last = path.rpartition(".")
    parent = resolve(head, results) if head else results
    return isinstance(parent, Mapping) and last in parent


def evaluate(preds: list[dict], results: Mapping[str, object]) -> dict:
    rows = []
    for p in preds:
        a = resolve(p["metric"], results)
        b = resolve(p["minus"], results) if p.get("minus") else 0.0
        reasons = [r for r in (why_missing(p["metric"], results),
                               why_missing(p["minus"], results) if p.get("minus") else None) if r]  # fmt: skip
        if reasons:
            status, observed = "pending", None
        else:
            observed = float(a) - float(b)  # type: ignore[arg-type]
            status = "held" if OPS[p["op"]](observed, float(p["value"])) else "did not hold"
        rows.append(
            {
                "id": p["id"],
                "statement": p["statement"],
                "condition": f"{p['metric']}{' - ' + p['minus'] if p.get('minus') else ''} {p['op']} {p['value']}",
                "observed": observed,
                "status": status,
                "pending_because": "; ".join(reasons) if reasons else None,
            }
        )
    counts = {s: sum(r["status"] == s for r in rows) for s in ("held", "did not hold", "pending")}
    return {"predictions": rows, "counts": counts}
