"""Stage retrieve_finance: finance-aware search rows beyond the grid (finrag.retrieve.finance), with and without
the company + period filter, beside the selected setup's figures (read, not recomputed)."""

from __future__ import annotations

from pathlib import Path

from _stage import main
from finrag.core.contracts import Chunk, Document, Question
from finrag.core.io import read_json, read_jsonl, write_json
from finrag.core.params import RetrieveFilteredParams, RetrieveFinanceParams, RetrieveParams
from finrag.core.provenance import provenance
from finrag.retrieve.beyond_grid import bar_plot, evaluate_rows

METRIC = "evidence_recall_at_5"


def run() -> None:
    p = RetrieveFinanceParams.load()
    rp = RetrieveParams.load()
    fp = RetrieveFilteredParams.load()
    questions = [
        q for q in read_jsonl(Path(p.questions), Question) if q.available and q.kind in p.score_kinds
    ]
    chunks = read_jsonl(Path(rp.chunks_dir) / f"{p.chunker}.jsonl", Chunk)
    docs = read_jsonl(Path(p.documents), Document)
    result = {
        "chunker": p.chunker,
        **evaluate_rows(chunks, docs, questions, p.methods, p.filters, rp.as_dict()),
    }
    selected = read_json(Path(fp.metrics_out))
    s = selected["setup"]
    name = f"{s['chunker']}/{s['embedder']}/{s['method']}"
    result["reference"] = {
        f"selected {name}{suffix}": {
            k: v for k, v in selected[part].items() if k.startswith(("evidence", "right"))
        }
        for part, suffix in (("unfiltered", ""), ("filtered", " + filter"))
    }
    result["_provenance"] = provenance("retrieve_finance", p, inputs=[p.questions, fp.metrics_out])
    write_json(Path(p.metrics_out), result)
    refs = {k: v[METRIC] for k, v in result["reference"].items()}
    bar_plot(result["setups"], refs, Path(p.plot_out), METRIC)


if __name__ == "__main__":
    main(run)
