"""Stage grader_validation: finrag's correctness grader against FinanceBench's human labels (16 files of
model answers labelled Correct / Incorrect / Refusal): Cohen's kappa with a bootstrap interval, per file."""

from __future__ import annotations

from pathlib import Path

from _stage import main
from finrag.core.config import mirror_dir
from finrag.core.io import write_json, write_jsonl
from finrag.core.provenance import provenance
from finrag.core.tracking import stage_run
from finrag.trust.grader_agreement import validate_grader
from finrag.trust.params import GraderValidationParams


def run() -> None:
    p = GraderValidationParams.load()
    mirror = mirror_dir(required=True)
    with stage_run("grader_validation", p) as tracker:
        result = validate_grader(mirror)
        metrics = result["metrics"]
        metrics.pop("out_dir", None)
        tracker.metrics(metrics["overall"])
    metrics["_provenance"] = provenance("10_grader_validation", p, datasets=["financebench-results@cc39aeb4"])
    write_json(Path(p.metrics_out), metrics)
    write_jsonl(Path(p.disagreements_out), result["disagreements"])


if __name__ == "__main__":
    main(run)
