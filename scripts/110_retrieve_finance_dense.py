"""Stage retrieve_finance_dense: the finance-aware rules on the dense and hybrid bases (the selected setup's
embedder), with and without the company + period filter. It reads the embed stage's matrix, so it runs where
`data/embeddings/` is (not in CI, like the grid)."""

from __future__ import annotations

from pathlib import Path

from _stage import main
from finrag.retrieve.beyond_grid import write_finance_report
from finrag.retrieve.evaluation_params import RetrieveFilteredParams
from finrag.retrieve.finance_params import RetrieveFinanceDenseParams
from finrag.retrieve.params import RetrieveParams


def run() -> None:
    p = RetrieveFinanceDenseParams.load()
    write_finance_report(
        p, RetrieveParams.load().as_dict(), Path(RetrieveFilteredParams.load().metrics_out), "retrieve_finance_dense",
        f"Finance-aware search, dense and hybrid bases ({p.chunker}/{p.embedder})",
    )  # fmt: skip


if __name__ == "__main__":
    main(run)
