"""Stage synthetic_generate: the local LLM answers a stratified sample of the synthetic questions from the
top-k structure chunks (BM25, Spanish), every call through the response cache (replayed by default)."""

from __future__ import annotations

import os
from pathlib import Path

from _stage import main
from finrag.core.contracts import Chunk
from finrag.core.io import read_jsonl, write_json, write_jsonl
from finrag.core.sampling import stratified_sample
from finrag.core.tracking import stage_run
from finrag.generate.run import RunSpec, generate_answers, run_stats
from finrag.llm.backends.base import make_backend
from finrag.llm.cache import CachedLLM
from finrag.retrieve.contexts import ContextBuilder
from finrag.retrieve.search import BM25Index
from finrag.synthetic.generator import read_corpus
from finrag.synthetic.params import SyntheticGenerateParams


def run() -> None:
    p = SyntheticGenerateParams.load()
    _, _, questions = read_corpus(Path(p.corpus_dir))
    chunks = read_jsonl(Path(p.chunks), Chunk)
    bm25 = BM25Index([c.text for c in chunks], language="es", **p.bm25.model_dump())
    sample = stratified_sample(questions, lambda q: q.kind, p.sample.per_kind, p.sample.seed)
    contracts_q = [q.to_question() for q in sample]
    ctx = ContextBuilder(chunks, lambda text, k, allowed: bm25.search(text, k, allowed), k=p.k)
    contexts = {(q.qid, "retrieved"): ctx.retrieved(q) for q in contracts_q}
    backend = make_backend(p.backend, **p.backend_params)
    llm = CachedLLM(
        backend,
        p.cache_dir,
        mode=os.environ.get("FINRAG_LLM_MODE", p.cache_mode),
        stage="synthetic_generate",
    )
    spec = RunSpec(run_id=p.run_id, style=p.style, context_mode="retrieved")
    with stage_run("synthetic_generate", p) as tracker:
        answers = generate_answers(contracts_q, contexts, llm, [spec], p.decoding)[spec.run_id]
        tracker.metrics(llm.stats())
    write_jsonl(Path(p.answers_out), answers)
    write_json(Path(p.stats_out), {"run_id": spec.run_id, "sample_size": len(sample), **run_stats(answers)})


if __name__ == "__main__":
    main(run)
