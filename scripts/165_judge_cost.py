"""Stage judge_cost: each candidate judge's CPU cost on the study's own claims, and each model judge's from its
recorded calls -> results/metrics/judge_cost.json (read by the agreement stage's selection rule for its bound).
A measurement, like serve_load: re-run when its code changes, not in the verifying run."""

from __future__ import annotations

from pathlib import Path

from _stage import main
from finrag.core.io import write_json
from finrag.core.machine import machine
from finrag.score.judges.base import make_judge
from finrag.trust.judge_cost import JudgeCostParams, measure


def run() -> None:
    p = JudgeCostParams.load()
    write_json(Path(p.out), {**measure(p, make_judge), "machine": machine()})


if __name__ == "__main__":
    main(run)
