"""Stage retrieve_finance_dense: the finance-aware rules on the dense and hybrid bases (the selected setup's
embedder), with and without the company + period filter. It reads the embed stage's matrix, so it runs where
`data/embeddings/` is (not in CI), and writes only its runs (in git); `evaluate_finance_dense` scores them."""

from __future__ import annotations

from pathlib import Path

from _stage import main
from finrag.retrieve.beyond_grid import rows_chunks, rows_questions, write_row_runs
from finrag.retrieve.beyond_grid_search import search_rows
from finrag.retrieve.finance_params import RetrieveFinanceDenseParams
from finrag.retrieve.params import RetrieveParams


def run() -> None:
    p, rp = RetrieveFinanceDenseParams.load(), RetrieveParams.load().as_dict()
    write_row_runs(Path(p.runs_dir), search_rows(p, rows_chunks(p, rp), rows_questions(p), rp))


if __name__ == "__main__":
    main(run)
