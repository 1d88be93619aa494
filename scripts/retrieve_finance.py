"""Stage retrieve_finance: finance-aware search rows beyond the grid (finrag.retrieve.finance), with and without
the company + period filter, beside the selected setup's figures (read, not recomputed). Lexical bases only: it
runs without the embedding matrices (CI replays it); `retrieve_finance_dense` adds the dense and hybrid bases."""

from __future__ import annotations

from pathlib import Path

from _stage import main
from finrag.core.io import write_json
from finrag.core.params import RetrieveFilteredParams, RetrieveFinanceParams, RetrieveParams
from finrag.core.provenance import provenance
from finrag.retrieve.beyond_grid import bar_plot, finance_report

METRIC = "evidence_recall_at_5"


def run() -> None:
    p = RetrieveFinanceParams.load()
    fp = RetrieveFilteredParams.load()
    result = finance_report(
        p.chunker, p.methods, p.filters, Path(p.questions), Path(p.documents), Path(fp.metrics_out),
        RetrieveParams.load().as_dict(), p.score_kinds,
    )  # fmt: skip
    result["_provenance"] = provenance("retrieve_finance", p, inputs=[p.questions, fp.metrics_out])
    write_json(Path(p.metrics_out), result)
    refs = {k: v[METRIC] for k, v in result["reference"].items()}
    bar_plot(result["setups"], refs, Path(p.plot_out), METRIC)


if __name__ == "__main__":
    main(run)
