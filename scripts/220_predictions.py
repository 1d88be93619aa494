"""Stage predictions: check docs/predictions.yaml (written before the results) against results/."""

from __future__ import annotations

from pathlib import Path

from _stage import main
from finrag.core.io import write_json
from finrag.report.params import PredictionsParams
from finrag.report.predictions import evaluate, load_caveats, load_predictions
from finrag.report.render import load_results


def run() -> None:
    p = PredictionsParams.load()
    results = load_results(Path("results"))
    results.pop("predictions", None)
    preds = load_predictions(Path(p.file))
    caveats = load_caveats(Path(p.caveats) if p.caveats else None, {x["id"] for x in preds})
    out = evaluate(preds, results, caveats)
    write_json(Path(p.metrics_out), out)


if __name__ == "__main__":
    main(run)
