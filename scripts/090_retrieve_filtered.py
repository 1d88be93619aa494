"""Stage retrieve_filtered: the selected setup again, with a company + fiscal-period filter read from each
question (reported next to the grid, not inside it)."""

from __future__ import annotations

from pathlib import Path

from _stage import main
from finrag.core.contracts import Document, Question
from finrag.core.io import read_json, read_jsonl, write_json
from finrag.core.provenance import provenance
from finrag.retrieve.evaluation_params import RetrieveFilteredParams
from finrag.retrieve.grid import evaluate_grid, read_run, write_run
from finrag.retrieve.methods import load_search_context, run_method
from finrag.retrieve.params import RetrieveParams


def run() -> None:
    p = RetrieveFilteredParams.load()
    rp = RetrieveParams.load()
    sel = read_json(Path(p.selected))
    chunker, embedder, method = sel["chunker"], sel["embedder"], sel["method"]
    docs = read_jsonl(Path(p.documents), Document)
    questions = [q for q in read_jsonl(Path(rp.questions), Question) if q.available]
    ctx = load_search_context(chunker, embedder, rp.as_dict(), methods=[method])
    chunks = ctx.chunks
    rankings = run_method(ctx, method, questions, rp.k, documents=docs)
    write_run(Path(p.run_out), rankings)
    scored = [q for q in questions if q.kind in p.score_kinds]
    by_id = {c.chunk_id: c for c in chunks}
    unfiltered = read_run(Path(rp.out_dir) / f"{chunker}-{embedder}" / f"{method}.jsonl", by_id)
    filtered = read_run(Path(p.run_out), by_id)
    runs = {("filtered", embedder, method): filtered, (chunker, embedder, method): unfiltered}
    _, table, _ = evaluate_grid(scored, runs, variance=False)
    result = {
        "setup": {"chunker": chunker, "embedder": embedder, "method": method},
        "filtered": next(s for s in table if s["chunker"] == "filtered"),
        "unfiltered": next(s for s in table if s["chunker"] == chunker),
        "_provenance": provenance("09_retrieve_filtered", p, inputs=[p.selected]),
    }
    result["filtered"]["chunker"] = chunker
    write_json(Path(p.metrics_out), result)


if __name__ == "__main__":
    main(run)
