"""Retrieval metrics on hand-built rankings: recall@k fractions, right report, MRR, aggregates, variance shares."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from finrag.core.contracts import Chunk, Evidence, Question, Span
from finrag.retrieve.metrics import (
    aggregate,
    evaluate_rankings,
    evidence_pages,
    grid_variance,
    question_metrics,
)


def ch(doc: str, *pages: int) -> Chunk:
    return Chunk(
        chunk_id=f"{doc}:t:{'-'.join(map(str, pages))}",
        doc_id=doc,
        pages=list(pages),
        spans=[Span(page=p, start=0, end=1) for p in pages],
        text="x",
        body="x",
    )


Q = Question(
    qid="q1",
    question="?",
    doc_ids=["A"],
    question_type="metrics-generated",
    reasoning="Numerical reasoning",
    evidence=[
        Evidence(doc_id="A", page=3),
        Evidence(doc_id="A", page=3, text="same page twice counts once"),
        Evidence(doc_id="A", page=10, aligned_page=11),  # aligned page wins
        Evidence(doc_id="A", page=20),
    ],
)


def test_evidence_pages_distinct_and_aligned():
    assert evidence_pages(Q) == {("A", 3), ("A", 11), ("A", 20)}


def test_recall_right_report_mrr_by_hand():
    ranked = [ch("B", 3), ch("A", 1), ch("A", 10), ch("A", 11, 12), ch("A", 2), ch("A", 3)] + [
        ch("B", 9)
    ] * 20
    m = question_metrics(Q, ranked)
    assert m["recall@1"] == 0.0  # B:3 is the right page number in the wrong filing
    assert m["recall@3"] == 0.0  # A:10 is the unaligned page
    assert m["recall@5"] == pytest.approx(1 / 3)  # A:11 via a two-page chunk
    assert m["recall@10"] == pytest.approx(2 / 3)
    assert m["recall@20"] == pytest.approx(2 / 3)
    assert m["right_report@1"] == 0.0 and m["right_report@3"] == 1.0
    assert m["mrr"] == pytest.approx(1 / 4) and m["first_hit_rank"] == 4


def test_mrr_zero_past_cutoff_and_empty_rankings():
    late = [ch("A", 99)] * 20 + [ch("A", 3)]
    m = question_metrics(Q, late)
    assert m["mrr"] == 0.0 and m["first_hit_rank"] == 21 and m["recall@20"] == 0.0
    empty = question_metrics(Q, [])
    assert empty["recall@5"] == 0.0 and empty["mrr"] == 0.0 and empty["right_report@1"] == 0.0
    no_ev = question_metrics(Question(qid="t", question="?", kind="trick_unanswerable"), [ch("A", 1)])
    assert math.isnan(no_ev["recall@5"]) and math.isnan(no_ev["mrr"]) and math.isnan(no_ev["right_report@1"])


def test_evaluate_and_aggregate():
    q2 = Question(
        qid="q2",
        question="?",
        doc_ids=["C"],
        question_type="novel-generated",
        evidence=[Evidence(doc_id="C", page=0)],
    )
    rows = evaluate_rankings(
        [Q, q2],
        {"q1": [ch("A", 3)], "q2": [ch("C", 0)]},
        setup={"method": "bm25", "chunker": "page", "embedder": "none"},
    )
    assert list(rows["qid"]) == ["q1", "q2"]
    assert rows.loc[0, "recall@1"] == pytest.approx(1 / 3) and rows.loc[1, "recall@1"] == 1.0
    assert rows.loc[1, "reasoning"] == "n/a"
    agg = aggregate(rows)
    r1 = agg[agg.metric == "recall@1"].iloc[0]
    assert r1["mean"] == pytest.approx((1 / 3 + 1) / 2) and r1["n"] == 2
    assert r1["ci_low"] <= r1["mean"] <= r1["ci_high"]
    by = aggregate(rows, by="question_type", metrics=["mrr"])
    assert dict(zip(by.question_type, by["mean"], strict=True)) == {
        "metrics-generated": 1.0,
        "novel-generated": 1.0,
    }
    missing = evaluate_rankings([Q], {})
    assert missing.loc[0, "recall@20"] == 0.0


def test_grid_variance_recovers_the_factor_that_matters():
    rng = np.random.default_rng(0)
    rows = []
    difficulty = rng.uniform(0, 0.6, size=40)
    for method, bonus in [("bm25", 0.0), ("dense", 0.3)]:
        for chunker in ["page", "fixed"]:
            embedders = ["none"] if method == "bm25" else ["e5", "minilm"]
            for emb in embedders:
                for i, d in enumerate(difficulty):
                    y = float(np.clip(d + bonus + rng.normal(0, 0.02), 0, 1))
                    rows.append(
                        {"method": method, "chunker": chunker, "embedder": emb, "qid": f"q{i}", "recall@5": y}
                    )
    df = pd.DataFrame(rows)
    out = grid_variance(df)
    assert out["unit"] == "setup x question"
    assert out["factors"] == ["method", "chunker", "embedder", "qid"]
    assert out["method"] > 0.3 and out["qid"] > 0.3
    assert out["chunker"] < 0.01 and out["embedder"] < 0.01
    # bm25 rows replicated over the two embedders: 2 chunkers x 40 questions x (2 + 2 embedder rows)
    assert out["n_obs"] == 2 * 40 * 4
    no_block = grid_variance(df, block=None)
    assert "qid" not in no_block["factors"] and no_block["residual"] > out["residual"]
