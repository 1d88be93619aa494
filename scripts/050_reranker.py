"""Stage reranker: train a cross-encoder from the packaged MiniLM on TAT-QA dev (CC BY 4.0; never on
FinanceBench), split by report; report its held-out ranking metrics against the bi-encoder baseline."""

from __future__ import annotations

from pathlib import Path

from _stage import main
from finrag.core.config import mirror_dir
from finrag.core.io import read_json, write_json
from finrag.core.provenance import provenance
from finrag.core.tracking import stage_run
from finrag.retrieve.params import RerankerParams
from finrag.retrieve.train_reranker import train_reranker


def run() -> None:
    p = RerankerParams.load()
    tatqa = mirror_dir(required=True) / p.tatqa
    out = Path(p.out_dir)
    with stage_run("reranker", p) as tracker:
        train_reranker(tatqa, out, p.train)
        metrics = read_json(out / "metrics.json")
        tracker.metrics(metrics)
    # wall times go to MLflow only, and the model's path is the stage output: results stay byte-reproducible
    metrics = {k: v for k, v in metrics.items() if k not in ("seconds", "wall_s", "model_dir")}
    metrics["model_dir"] = str(out / "model")
    metrics["_provenance"] = provenance("05_reranker", p, datasets=["tatqa-dev"])
    write_json(Path(p.metrics_out), metrics)


if __name__ == "__main__":
    main(run)
