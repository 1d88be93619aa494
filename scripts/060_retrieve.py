"""Stage retrieve: for one (chunker, embedder), every search method over every available question ->
one run file per method (top-k chunk ids and scores)."""

from __future__ import annotations

import argparse
from pathlib import Path

from _stage import main
from finrag.core.contracts import Question
from finrag.core.io import read_jsonl
from finrag.retrieve.grid import write_run
from finrag.retrieve.methods import load_search_context, run_method
from finrag.retrieve.params import RetrieveParams


def run() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--chunker", required=True)
    ap.add_argument("--embedder", required=True)
    args = ap.parse_args()
    p = RetrieveParams.load()
    questions = [q for q in read_jsonl(Path(p.questions), Question) if q.available]
    ctx = load_search_context(args.chunker, args.embedder, p.as_dict())
    out_dir = Path(p.out_dir) / f"{args.chunker}-{args.embedder}"
    for method in p.methods:
        rankings = run_method(ctx, method, questions, p.k)
        write_run(out_dir / f"{method}.jsonl", rankings)


if __name__ == "__main__":
    main(run)
