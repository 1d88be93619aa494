"""Stage questions: FinanceBench questions (availability, aligned evidence) + trick.yaml -> all.jsonl."""

from __future__ import annotations

from pathlib import Path

from _stage import main
from finrag.core.contracts import Document, Question
from finrag.core.io import read_jsonl, write_json, write_jsonl
from finrag.core.provenance import provenance
from finrag.ingest.params import QuestionsParams
from finrag.ingest.questions import build_question_set
from finrag.ingest.trick import load_trick_questions


def run() -> None:
    p = QuestionsParams.load()
    fb = read_jsonl(Path(p.financebench), Question)
    trick = load_trick_questions(Path(p.trick))
    docs = read_jsonl(Path(p.documents), Document)
    questions, metrics = build_question_set(fb, trick, docs)
    write_jsonl(Path(p.out), questions)
    metrics["_provenance"] = provenance("02_questions", p, inputs=[p.financebench, p.trick])
    write_json(Path(p.metrics_out), metrics)


if __name__ == "__main__":
    main(run)
