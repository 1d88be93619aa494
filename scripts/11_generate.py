"""Stage 11 generate@FAMILY: one run family (a model x prompt styles x context modes x replicates) over every
available question, through the response cache (replay by default: no model, no key, same bytes).

Recording several families of the same backend in one pass (`--family qwen qwen_replicates`, with
FINRAG_LLM_MODE=auto) interleaves their calls question by question, so a local model evaluates each question's
passages once for all of them; each family's outputs are written exactly as its own stage writes them."""

from __future__ import annotations

import argparse
import os
from pathlib import Path

import numpy as np

from _stage import main
from finrag.config import params
from finrag.contracts import Chunk, Question
from finrag.generate import ContextBuilder, family_specs, generate_answers, run_stats, shared_backend
from finrag.io import read_json, read_jsonl, write_json, write_jsonl
from finrag.llm.backends import make_backend
from finrag.llm.cache import CachedLLM
from finrag.retrieval import build_search_context
from finrag.search import search
from finrag.tracking import stage_run


def run() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument(
        "--family", required=True, nargs="+", help="one family (the DVC stage) or several sharing a backend"
    )
    args = ap.parse_args()
    p = params("generate")
    rp = params("retrieve")
    unknown = [f for f in args.family if f not in p["families"]]
    if unknown:
        raise SystemExit(
            f"unknown family {unknown}; params.yaml generate.families has {sorted(p['families'])}"
        )
    fams = {name: p["families"][name] for name in args.family}
    backend_name, overrides = shared_backend(fams)
    sel = read_json(Path(p["selected"]))
    chunker, embedder, method = sel["chunker"], sel["embedder"], sel["method"]
    chunks = read_jsonl(Path(rp["chunks_dir"]) / f"{chunker}.jsonl", Chunk)
    vectors = np.load(Path(rp["embeddings_dir"]) / chunker / f"{embedder}.npy") if method != "bm25" else None
    ctx = build_search_context(chunks, vectors, embedder, rp, methods=[method])
    builder = ContextBuilder(chunks, lambda text, k, allowed: search(ctx, method, text, k, allowed), k=p["k"])
    questions = [q for q in read_jsonl(Path(p["questions"]), Question) if q.available]
    modes = sorted({mode for fam in fams.values() for mode in fam["contexts"]})
    contexts = {(q.qid, mode): builder.build(q, mode) for q in questions for mode in modes}
    specs = [spec for name, fam in fams.items() for spec in family_specs(name, fam, p["decoding"])]
    backend = make_backend(backend_name, **{**p["backends"].get(backend_name, {}), **overrides})
    mode = os.environ.get("FINRAG_LLM_MODE", p["cache_mode"])
    label = "+".join(args.family)
    llm = CachedLLM(backend, p["cache_dir"], mode=mode, stage=f"generate_{label}")
    with stage_run(f"11_generate_{label}", {**fams, "setup": sel}) as tracker:
        answers = generate_answers(questions, contexts, llm, specs, p["decoding"])
        tracker.metrics(llm.stats())
    for name in args.family:
        stats = {}
        for spec in (s for s in specs if s.family == name):
            write_jsonl(Path(p["answers_dir"]) / name / f"{spec.run_id}.jsonl", answers[spec.run_id])
            stats[spec.run_id] = run_stats(answers[spec.run_id])
        write_json(
            Path(p["stats_dir"]) / f"generation_{name}.json",
            {"family": name, "runs": dict(sorted(stats.items()))},
        )


if __name__ == "__main__":
    main(run)
