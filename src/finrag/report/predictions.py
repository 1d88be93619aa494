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


def lookup(path: str, results: Mapping[str, object]) -> tuple[float | None, str | None]:
    """(number, None), or (None, why there is none): the file is not there yet (a stage has not run), a key is
    not in the file (a typo, or a run not scored yet), or the value is undefined (None / NaN)."""
    value = resolve(path, results)
    if isinstance(value, int | float) and not isinstance(value, bool) and value == value:
        return float(value), None
    stem = path.split(".", 1)[0]
    if stem not in results:
        return None, f"no results/metrics/{stem}.json yet"
    head, _, last = path.rpartition(".")
    parent = resolve(head, results) if head else results
    if not (isinstance(parent, Mapping) and last in parent):
        return None, f"{path} is not in {stem}.json"
    return None, f"{path} is undefined ({value!r})"


def load_caveats(path: Path | None, known_ids: set[str]) -> dict[str, list[dict]]:
    """Dated caveats added after a prediction was written (the prediction itself is never edited): why it may no
    longer be a clean test. {id: [{"date", "text"}]}; an unknown id is an error."""
    if path is None or not Path(path).exists():
        return {}
    data = yaml.safe_load(Path(path).read_text(encoding="utf-8")) or {}
    out: dict[str, list[dict]] = {}
    for c in data.get("caveats") or []:
        for key in ("id", "date", "text"):
            if key not in c:
                raise PredictionError(f"{path}: a caveat lacks '{key}'")
        if c["id"] not in known_ids:
            raise PredictionError(f"{path}: caveat for unknown prediction {c['id']}")
        out.setdefault(c["id"], []).append({"date": str(c["date"]), "text": " ".join(str(c["text"]).split())})
    return out


def evaluate(
    preds: list[dict], results: Mapping[str, object], caveats: Mapping[str, list] | None = None
) -> dict:
    rows = []
    for p in preds:
        a, why_a = lookup(p["metric"], results)
        b, why_b = lookup(p["minus"], results) if p.get("minus") else (0.0, None)
        reasons = [r for r in (why_a, why_b) if r]
        if reasons:
            status, observed = "pending", None
        else:
            observed = a - b  # type: ignore[operator]
            status = "held" if OPS[p["op"]](observed, float(p["value"])) else "did not hold"
        rows.append(
            {
                "id": p["id"],
                "statement": p["statement"],
                "condition": f"{p['metric']}{' - ' + p['minus'] if p.get('minus') else ''} {p['op']} {p['value']}",
                "observed": observed,
                "status": status,
                "pending_because": "; ".join(reasons) if reasons else None,
                "caveats": list((caveats or {}).get(p["id"], [])),
            }
        )
    counts = {s: sum(r["status"] == s for r in rows) for s in ("held", "did not hold", "pending")}
    return {"predictions": rows, "counts": counts}
