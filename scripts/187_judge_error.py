"""Stage judge_error: every groundedness share of the study with its judge's error carried: corrected per human
set (Rogan-Gladen, bootstrap over the study's answers and the human set), PPI intervals validated on the human sets
(coverage and width per judge and number of labels), and PPI intervals from finrag's own labels when any exist
-> results/metrics/judge_error.json and a plot."""

from __future__ import annotations

from pathlib import Path

from _stage import main
from finrag.core.io import read_json, read_jsonl, write_json
from finrag.core.provenance import provenance
from finrag.ingest.human_claims import load_finrag_labels
from finrag.score.record import ScoredAnswer
from finrag.trust.judge_error import (
    JudgeErrorParams,
    corrected_pooled,
    corrected_runs,
    finrag_ppi,
    judge_rates,
    plot_corrected,
    ppi_table,
)


def run() -> None:
    p = JudgeErrorParams.load()
    records = read_jsonl(Path(p.records), ScoredAnswer)
    judges = sorted({r.judge for r in records})
    if len(judges) != 1:
        raise ValueError(
            f"judge_error: the records hold {len(judges)} primary judges ({judges}); expected one"
        )
    judge = judges[0]
    rates = judge_rates(read_json(Path(p.agreement)), judge, p.benchmarks)
    runs = corrected_runs(records, p.main_kinds, rates, p)
    labels = load_finrag_labels(Path(p.finrag_labels)).items
    result = {
        "judge": judge,
        "params": {
            "cannot_tell_width": p.cannot_tell_width,
            "min_coverage": p.ppi.min_coverage,
            "labelled": p.ppi.labelled,
            "draws": p.ppi.draws,
            "n_boot": p.n_boot,
        },
        "rates": {b: r.as_dict() for b, r in rates.items()},
        "runs": runs,
        "pooled": corrected_pooled(records, p.main_kinds, rates, p),
        "ppi_validation": ppi_table(read_jsonl(Path(p.verdicts)), p),
        "finrag_labels": {"n_labels": len(labels), "runs": finrag_ppi(records, labels, p.main_kinds)},
        "assumptions": [
            "the judge's sensitivity and specificity on each human set carry over to finrag's answers (transport)",
            "an answer judged as a whole (fully grounded) errs at the rates measured on single labelled claims",
            "the PPI validation draws labelled items from the set itself: its target is the set's share",
        ],
    }
    retrieved = [r for r in runs if r["context_mode"] == "retrieved"]
    plot_corrected(
        retrieved,
        "fully_grounded",
        Path(p.plot),
        f"Fully grounded, retrieved context: as judged by {judge} and corrected",
    )
    result["_provenance"] = provenance("judge_error", p, inputs=[p.records, p.agreement, p.verdicts])
    write_json(Path(p.metrics_out), result)


if __name__ == "__main__":
    main(run)
