"""Stage synthetic_study: retrieval coverage, extractive baselines, abstention and LLM answers on the
synthetic Spanish corpus, through the same chunker/BM25/scorers as the FinanceBench study."""

from __future__ import annotations

from pathlib import Path

from _stage import main
from finrag.core.contracts import Answer, Chunk
from finrag.core.io import read_jsonl, write_json, write_jsonl
from finrag.core.provenance import provenance
from finrag.core.tracking import stage_run
from finrag.retrieve.search import BM25Index
from finrag.synthetic.generator import read_corpus
from finrag.synthetic.params import SyntheticStudyParams
from finrag.synthetic.study import run_synthetic_study


def run() -> None:
    p = SyntheticStudyParams.load()
    docs, pages, questions = read_corpus(Path(p.corpus_dir))
    chunks = read_jsonl(Path(p.chunks), Chunk)
    bm25 = BM25Index([c.text for c in chunks], language="es", **p.bm25.model_dump())
    answers = None
    answers_path = Path(p.answers) if p.answers else None
    if answers_path and answers_path.exists():
        answers = {a.qid: a for a in read_jsonl(answers_path, Answer)}
    with stage_run("synthetic_study", p) as tracker:
        result = run_synthetic_study(
            docs, pages, questions, chunks, lambda q, k: bm25.search(q, k), params=p.study, answers=answers
        )
        per_question = result.pop("per_question")
        tracker.metrics({k: v for k, v in result.items() if k in ("n_questions", "n_chunks")})
    result["_provenance"] = provenance(
        "s3_synthetic_study", p, inputs=[p.chunks, Path(p.corpus_dir) / "questions.jsonl"]
    )
    write_json(Path(p.metrics_out), result)
    write_jsonl(Path(p.per_question_out), per_question)


if __name__ == "__main__":
    main(run)
