"""Stage ingest: FinanceBench questions + filings (PDF, EDGAR HTML) -> pages, evidence aligned to pages."""

from __future__ import annotations

from pathlib import Path

from _stage import main
from finrag.core.config import mirror_dir
from finrag.core.io import read_json, write_json
from finrag.core.provenance import provenance
from finrag.core.tracking import stage_run
from finrag.ingest.corpus import run_ingest
from finrag.ingest.fetch import ensure_study_inputs
from finrag.ingest.params import IngestParams


def run() -> None:
    p = IngestParams.load()
    # the mirror, with every file of data/inputs.csv the study reads: fetched (verified) when missing and allowed
    mirror = ensure_study_inputs(mirror_dir(), fetch=p.fetch)
    metrics_out = Path("results/metrics/ingest.json")
    with stage_run("ingest", p) as tracker:
        metrics = run_ingest(
            mirror,
            out_dir=Path("data/corpus"),
            questions_out=Path("data/questions/financebench.jsonl"),
            metrics_out=metrics_out,
            include=p.include,
            threshold=p.align_threshold,
            number_threshold=p.align_number_threshold,
        )
        tracker.metrics(metrics)
    metrics = read_json(metrics_out)
    for key in [k for k in metrics if k.endswith("seconds")]:
        metrics.pop(key)  # wall time varies (it goes to MLflow); results stay byte-reproducible
    if str(metrics.get("financebench_source", "")).startswith("mirror:"):
        metrics["financebench_source"] = "mirror"  # the mirror's path differs per machine
    metrics["_provenance"] = provenance(
        "01_ingest", p, datasets=["financebench@cc39aeb4", "edgar-html-mirror"]
    )
    write_json(metrics_out, metrics)


if __name__ == "__main__":
    main(run)
