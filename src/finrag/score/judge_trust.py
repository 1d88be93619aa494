"""What a groundedness figure deserves: the measured agreement of the judge behind it with human experts.

Read from the agreement stage's results (results/metrics/judge_agreement.json): the judge's binary kappa with its
95% interval on every human-labelled set, and a plain note. The score stage stores it beside its groundedness
figures (so the report prints it there) and the service returns it with every groundedness score.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

AGREEMENT_FILE = "results/metrics/judge_agreement.json"


def selected_judge(agreement: Mapping) -> str | None:
    """The judge the agreement stage's pre-written rule picks, or None when it states no selection."""
    return (agreement.get("selected_judge") or {}).get("selected")


def kappa_rows(agreement: Mapping, judge: str) -> list[dict]:
    """The judge's binary kappa (95% CI, n) on every human-labelled set it was compared with."""
    rows = []
    benchmarks = ((agreement.get("judges") or {}).get(judge) or {}).get("benchmarks") or {}
    for name, res in sorted(benchmarks.items()):
        b = (res or {}).get("binary") or {}
        if b.get("kappa") is None:
            continue
        rows.append(
            {
                "benchmark": name,
                "kappa": round(float(b["kappa"]), 3),
                "kappa_ci": [round(float(x), 3) for x in b.get("kappa_ci") or []],
                "n": int(b.get("n", 0)),
                "balanced_accuracy": round(float(b["balanced_accuracy"]), 3)
                if b.get("balanced_accuracy") is not None
                else None,
            }
        )
    return rows


def judge_trust(agreement: Mapping, judge: str, min_kappa: float | None = None) -> dict:
    """What a groundedness score from `judge` deserves: its measured agreement with humans, a plain note, and
    whether a groundedness difference it measures may be read as more than descriptive (worst kappa >= `min_kappa`,
    declared in params.yaml before the comparison)."""
    rows = kappa_rows(agreement, judge)
    selected = selected_judge(agreement)
    worst = min(rows, key=lambda r: r["kappa"]) if rows else None
    note = (
        f"worst-case kappa {worst['kappa']:.3f} ({worst['benchmark']}): "
        + ("slight" if worst["kappa"] < 0.2 else "fair" if worst["kappa"] < 0.4 else "moderate or better")
        + " agreement with human labels"
        if worst
        else "no measured agreement with human labels for this judge"
    )
    if selected and selected != judge:
        note += f"; the agreement stage selected '{selected}' as the study's judge, but these scores come from '{judge}'"
    out: dict[str, Any] = {"judge": judge, "agreement": rows, "note": note, "source": AGREEMENT_FILE}
    if min_kappa is not None:
        out["min_kappa"] = float(min_kappa)
        out["descriptive_only"] = worst is None or worst["kappa"] < float(min_kappa)
    return out
