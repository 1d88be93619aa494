"""The rows beyond the grid are scored from run files (in git), so scoring them needs no matrix: the runs written
and read back must score exactly as the rankings did in memory, and a missing run says which stage writes it."""

from __future__ import annotations

import pytest

from factories import page_chunk
from finrag.core.contracts import Evidence, Question
from finrag.retrieve.beyond_grid import filtered_report, read_row_runs, score_rows, write_row_runs
from finrag.retrieve.finance_params import RetrieveFinanceDenseParams

CHUNKS = [page_chunk("A", p, f"page {p}") for p in range(1, 9)]


def _question(qid: str, page: int) -> Question:
    return Question(
        qid=qid,
        question="?",
        doc_ids=["A"],
        question_type="metrics-generated",
        reasoning="Numerical reasoning",
        evidence=[Evidence(doc_id="A", page=page)],
    )


QUESTIONS = [_question("q1", 1), _question("q2", 2), _question("q3", 3)]


def _params(tmp_path) -> RetrieveFinanceDenseParams:
    return RetrieveFinanceDenseParams.from_dict(
        {
            "chunker": "page",
            "embedder": "mpnet",
            "runs_dir": str(tmp_path / "runs"),
            "methods": ["dense", "dense+route"],
            "filters": ["none", "company_period"],
            "documents": "d.jsonl",
            "questions": "q.jsonl",
            "score_kinds": ["financebench"],
            "metrics_out": "m.json",
            "plot_out": "p.png",
        }
    )


def _rankings(shift: int):
    """Every question gets all chunks, rotated by `shift`, with falling scores."""
    order = CHUNKS[shift:] + CHUNKS[:shift]
    return {q.qid: [(c, 1.0 - i / 10) for i, c in enumerate(order)] for q in QUESTIONS}


def test_runs_read_back_score_as_in_memory(tmp_path):
    p = _params(tmp_path)
    runs = {(f, m): _rankings(i) for i, (f, m) in enumerate((f, m) for f in p.filters for m in p.methods)}
    in_memory = score_rows(
        QUESTIONS, {k: {q: [c for c, _ in h] for q, h in r.items()} for k, r in runs.items()}
    )
    write_row_runs(tmp_path / "runs", runs)
    read_back = score_rows(QUESTIONS, read_row_runs(tmp_path / "runs", p, CHUNKS))
    assert read_back == in_memory
    assert {(s["filter"], s["method"]) for s in read_back["setups"]} == set(runs)
    assert len({s["evidence_recall_at_5"] for s in read_back["setups"]}) > 1  # the rows really differ


def test_a_missing_run_names_the_stage_that_writes_it(tmp_path):
    p = _params(tmp_path)
    write_row_runs(tmp_path / "runs", {("none", "dense"): _rankings(0)})
    with pytest.raises(FileNotFoundError, match="retrieve_finance_dense"):
        read_row_runs(tmp_path / "runs", p, CHUNKS)


def test_filtered_report_puts_each_run_on_its_side():
    ranked = {qid: [c for c, _ in h] for qid, h in _rankings(0).items()}
    worse = {qid: [c for c, _ in h] for qid, h in _rankings(4).items()}
    rep = filtered_report(
        QUESTIONS, {"chunker": "page", "embedder": "mpnet", "method": "dense"}, ranked, worse
    )
    assert rep["setup"] == {"chunker": "page", "embedder": "mpnet", "method": "dense"}
    assert rep["filtered"]["chunker"] == rep["unfiltered"]["chunker"] == "page"
    assert rep["filtered"]["evidence_recall_at_1"] != rep["unfiltered"]["evidence_recall_at_1"]
