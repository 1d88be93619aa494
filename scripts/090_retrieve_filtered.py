"""Stage retrieve_filtered: the selected setup's search again, with a company + fiscal-period filter read from each
question. It writes the run (top-k chunk ids and scores, in git); `evaluate_filtered` scores it beside the
unfiltered run, so only this half needs the embedding matrix."""

from __future__ import annotations

from pathlib import Path

from _stage import main
from finrag.core.contracts import Document, Question
from finrag.core.io import read_json, read_jsonl
from finrag.retrieve.evaluation_params import RetrieveFilteredParams
from finrag.retrieve.grid import write_run
from finrag.retrieve.methods import load_search_context, run_method
from finrag.retrieve.params import RetrieveParams


def run() -> None:
    p = RetrieveFilteredParams.load()
    rp = RetrieveParams.load()
    sel = read_json(Path(p.selected))
    docs = read_jsonl(Path(p.documents), Document)
    questions = [q for q in read_jsonl(Path(rp.questions), Question) if q.available]
    ctx = load_search_context(sel["chunker"], sel["embedder"], rp.as_dict(), methods=[sel["method"]])
    write_run(Path(p.run_out), run_method(ctx, sel["method"], questions, rp.k, documents=docs))


if __name__ == "__main__":
    main(run)
