"""Stage retrieve_finance_dense: the finance-aware rules on the dense and hybrid bases (the selected setup's
embedder), with and without the company + period filter. It reads the embed stage's matrix, so it runs where
`data/embeddings/` is (not in CI, like the grid)."""

from __future__ import annotations

from pathlib import Path

from _stage import main
from finrag.core.io import write_json
from finrag.core.params import RetrieveFilteredParams, RetrieveFinanceDenseParams, RetrieveParams
from finrag.core.provenance import provenance
from finrag.retrieve.beyond_grid import bar_plot, finance_report

METRIC = "evidence_recall_at_5"


def run() -> None:
    p = RetrieveFinanceDenseParams.load()
    fp = RetrieveFilteredParams.load()
    result = finance_report(
        p.chunker, p.methods, p.filters, Path(p.questions), Path(p.documents), Path(fp.metrics_out),
        RetrieveParams.load().as_dict(), p.score_kinds, embedder=p.embedder,
    )  # fmt: skip
    result["_provenance"] = provenance("retrieve_finance_dense", p, inputs=[p.questions, fp.metrics_out])
    write_json(Path(p.metrics_out), result)
    refs = {k: v[METRIC] for k, v in result["reference"].items()}
    bar_plot(result["setups"], refs, Path(p.plot_out), METRIC,
             title=f"Finance-aware search, dense and hybrid bases ({p.chunker}/{p.embedder})")  # fmt: skip


if __name__ == "__main__":
    main(run)
