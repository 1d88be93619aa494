"""Stage 11 generate@FAMILY: one run family (a model x prompt styles x context modes x replicates) over every
available question, through the response cache (replay by default: no model, no key, same bytes)."""

from __future__ import annotations

import argparse
import os
from pathlib import Path

import numpy as np

from _stage import main
from finrag.config import params
from finrag.contracts import Chunk, Question
from finrag.generate import ContextBuilder, RunSpec, generate_answers, run_stats
from finrag.io import read_json, read_jsonl, write_json, write_jsonl
from finrag.llm.backends import make_backend
from finrag.llm.cache import CachedLLM
from finrag.retrieval import build_search_context
from finrag.search import search
from finrag.tracking import stage_run


def run() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--family", required=True)
    args = ap.parse_args()
    p = params("generate")
    rp = params("retrieve")
    fam = p["families"][args.family]
    sel = read_json(Path(p["selected"]))
    chunker, embedder, method = sel["chunker"], sel["embedder"], sel["method"]
    chunks = read_jsonl(Path(rp["chunks_dir"]) / f"{chunker}.jsonl", Chunk)
    vectors = np.load(Path(rp["embeddings_dir"]) / chunker / f"{embedder}.npy") if method != "bm25" else None
    ctx = build_search_context(chunks, vectors, embedder, rp, methods=[method])
    builder = ContextBuilder(chunks, lambda text, k, allowed: search(ctx, method, text, k, allowed), k=p["k"])
    questions = [q for q in read_jsonl(Path(p["questions"]), Question) if q.available]
    contexts = {(q.qid, mode): builder.build(q, mode) for q in questions for mode in fam["contexts"]}
    specs = [
        RunSpec(
            run_id=fam["run_id"].format(tag=fam["tag"], style=style, context=mode, replicate=rep),
            style=style,
            context_mode=mode,
            replicate=rep,
        )
        for style in fam["styles"]
        for mode in fam["contexts"]
        for rep in fam["replicates"]
    ]
    backend = make_backend(
        fam["backend"], **{**p["backends"].get(fam["backend"], {}), **fam.get("backend_params", {})}
    )
    mode = os.environ.get("FINRAG_LLM_MODE", p["cache_mode"])
    llm = CachedLLM(backend, p["cache_dir"], mode=mode, stage=f"generate_{args.family}")
    decoding = {**p["decoding"], **fam.get("decoding", {})}
    with stage_run(f"11_generate_{args.family}", {**fam, "setup": sel}) as tracker:
        answers = generate_answers(questions, contexts, llm, specs, decoding)
        tracker.metrics(llm.stats())
    out_dir = Path(p["answers_dir"]) / args.family
    stats = {}
    for run_id, rows in sorted(answers.items()):
        write_jsonl(out_dir / f"{run_id}.jsonl", rows)
        stats[run_id] = run_stats(rows)
    write_json(
        Path(p["stats_dir"]) / f"generation_{args.family}.json", {"family": args.family, "runs": stats}
    )


if __name__ == "__main__":
    main(run)
