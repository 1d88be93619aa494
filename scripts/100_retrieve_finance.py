"""Stage retrieve_finance: finance-aware search rows beyond the grid (finrag.retrieve.finance), with and without
the company + period filter, beside the selected setup's figures (read, not recomputed). Lexical bases only: it
runs without the embedding matrices (CI replays it); `retrieve_finance_dense` adds the dense and hybrid bases."""

from __future__ import annotations

from pathlib import Path

from _stage import main
from finrag.retrieve.beyond_grid import write_finance_report
from finrag.retrieve.evaluation_params import RetrieveFilteredParams
from finrag.retrieve.finance_params import RetrieveFinanceParams
from finrag.retrieve.params import RetrieveParams


def run() -> None:
    write_finance_report(
        RetrieveFinanceParams.load(), RetrieveParams.load().as_dict(), Path(RetrieveFilteredParams.load().metrics_out),
        "retrieve_finance", "Finance-aware search beyond the grid (FinanceBench evidence pages)",
    )  # fmt: skip


if __name__ == "__main__":
    main(run)
