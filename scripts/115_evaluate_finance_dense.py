"""Stage evaluate_finance_dense: the dense and hybrid finance rows scored from their runs in git, beside the
selected setup's figures. No matrix needed, so CI replays it."""

from __future__ import annotations

from pathlib import Path

from _stage import main
from finrag.retrieve.beyond_grid import read_row_runs, rows_chunks, rows_questions, write_finance_report
from finrag.retrieve.evaluation_params import RetrieveFilteredParams
from finrag.retrieve.finance_params import RetrieveFinanceDenseParams
from finrag.retrieve.params import RetrieveParams


def run() -> None:
    p, rp = RetrieveFinanceDenseParams.load(), RetrieveParams.load().as_dict()
    runs = read_row_runs(Path(p.runs_dir), p, rows_chunks(p, rp))
    write_finance_report(
        p, rows_questions(p), runs, Path(RetrieveFilteredParams.load().metrics_out), "retrieve_finance_dense",
        f"Finance-aware search, dense and hybrid bases ({p.chunker}/{p.embedder})",
    )  # fmt: skip


if __name__ == "__main__":
    main(run)
