"""Stage retrieve_finance: finance-aware search rows beyond the grid (finrag.retrieve.finance), with and without
the company + period filter, beside the selected setup's figures (read, not recomputed). Lexical bases only: it
searches and scores without the embedding matrices (CI replays it); `retrieve_finance_dense` adds the dense and
hybrid bases."""

from __future__ import annotations

from pathlib import Path

from _stage import main
from finrag.retrieve.beyond_grid import rows_chunks, rows_questions, write_finance_report
from finrag.retrieve.beyond_grid_search import search_rows
from finrag.retrieve.evaluation_params import RetrieveFilteredParams
from finrag.retrieve.finance_params import RetrieveFinanceParams
from finrag.retrieve.params import RetrieveParams


def run() -> None:
    p, rp = RetrieveFinanceParams.load(), RetrieveParams.load().as_dict()
    questions = rows_questions(p)
    runs = search_rows(p, rows_chunks(p, rp), questions, rp)
    ranked = {key: {qid: [c for c, _ in hits] for qid, hits in run.items()} for key, run in runs.items()}
    write_finance_report(
        p, questions, ranked, Path(RetrieveFilteredParams.load().metrics_out), "retrieve_finance",
        "Finance-aware search beyond the grid (FinanceBench evidence pages)",
    )  # fmt: skip


if __name__ == "__main__":
    main(run)
