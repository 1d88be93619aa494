"""Reranker data building (split by report, positives/negatives), metrics, and a tiny training run."""

from __future__ import annotations

import json

import pytest

from finrag.ingest.tatqa import render_table
from finrag.retrieve.rerank import CrossEncoderReranker
from finrag.retrieve.train_reranker import (
    RerankerParams,
    eval_candidates,
    load_tatqa,
    ranking_metrics,
    split_contexts,
    train_reranker,
    training_pairs,
)


def _fake_tatqa(path, n_contexts=10):
    """A TAT-QA-shaped file: each report has a table, three paragraphs and three questions."""
    data = []
    for c in range(n_contexts):
        name = f"Company{c}"
        data.append(
            {
                "table": {
                    "uid": f"t{c}",
                    "table": [["", "2019", "2018"], [f"{name} revenue", f"{c}1", f"{c}0"], ["", "", ""]],
                },
                "paragraphs": [
                    {"uid": f"p{c}a", "order": 2, "text": f"{name} employs {c}00 people in its plants."},
                    {"uid": f"p{c}b", "order": 1, "text": f"{name} sells pumps and valves to utilities."},
                    {"uid": f"p{c}c", "order": 3, "text": f"{name} faces currency risk from the euro."},
                ],
                "questions": [
                    {"question": f"What does {name} sell?", "rel_paragraphs": ["1"], "answer_from": "text"},
                    {
                        "question": f"What was {name} revenue in 2019?",
                        "rel_paragraphs": [],
                        "answer_from": "table",
                    },
                    {
                        "question": f"How many people does {name} employ and what revenue?",
                        "rel_paragraphs": ["2"],
                        "answer_from": "table-text",
                    },
                ],
            }
        )
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def test_render_table_drops_empty_rows():
    assert render_table([["a", " b  c "], ["", ""], ["1", "2"]]) == "| a | b c |\n| 1 | 2 |"


def test_positives_follow_rel_paragraphs_and_answer_source(tmp_path):
    ctx = load_tatqa(_fake_tatqa(tmp_path / "t.json", 2))[0]
    assert ctx.passages[0].startswith("| ")  # the table comes first
    assert ctx.passages[1] == "Company0 sells pumps and valves to utilities."  # ordered by `order`
    pos = {q: p for q, p in ctx.questions}
    assert pos["What does Company0 sell?"] == {1}
    assert pos["What was Company0 revenue in 2019?"] == {0}
    assert pos["How many people does Company0 employ and what revenue?"] == {0, 2}


def test_split_is_by_report_and_seeded(tmp_path):
    ctxs = load_tatqa(_fake_tatqa(tmp_path / "t.json", 10))
    tr, he = split_contexts(ctxs, 0.2, seed=1)
    assert len(he) == 2 and len(tr) == 8
    assert not {c.uid for c in tr} & {c.uid for c in he}
    assert [c.uid for c in split_contexts(ctxs, 0.2, seed=1)[1]] == [c.uid for c in he]
    p = RerankerParams(max_train_pairs=1000, seed=1)
    pairs = training_pairs(tr, p)
    assert pairs == training_pairs(tr, p)  # deterministic
    held_q = {q for c in he for q, _ in c.questions}
    assert not {q for q, _, _ in pairs} & held_q
    assert {y for *_, y in pairs} == {0, 1}
    # every labelled positive really is a positive passage of its question
    truth = {(q, c.passages[i]) for c in tr for q, pos in c.questions for i in pos}
    assert all((q, t) in truth for q, t, y in pairs if y == 1)
    assert all((q, t) not in truth for q, t, y in pairs if y == 0)
    assert len(training_pairs(tr, RerankerParams(max_train_pairs=20, seed=1))) <= 20


def test_eval_candidates_hold_own_report_plus_randoms(tmp_path):
    ctxs = load_tatqa(_fake_tatqa(tmp_path / "t.json", 6))
    cands = eval_candidates(ctxs, RerankerParams(eval_random_negatives=5))
    q, cand, pos = cands[0]
    assert len(cand) == 4 + 5 and cand[:4] == ctxs[0].passages and pos == {1}


def test_ranking_metrics():
    m = ranking_metrics([([0.9, 0.1, 0.5], {0}), ([0.1, 0.9, 0.5, 0.4], {0, 2})])
    # q1: positive ranked 1st. q2: positives at ranks 4 and 2 -> rr 1/2, recall@1 0, recall@3 1/2
    assert m["mrr@10"] == pytest.approx((1 + 0.5) / 2)
    assert m["recall@1"] == pytest.approx((1 + 0) / 2)
    assert m["recall@3"] == pytest.approx((1 + 0.5) / 2)
    assert m["hit@1"] == pytest.approx(0.5)


@pytest.mark.slow
def test_tiny_training_run_writes_model_and_metrics(tmp_path):
    import accelerate  # noqa: F401 - sentence-transformers[train] is a hard dependency: never skipped
    import datasets  # noqa: F401

    src = _fake_tatqa(tmp_path / "t.json", 10)
    params = {
        "max_train_pairs": 24,
        "max_steps": 3,
        "batch_size": 8,
        "max_length": 64,
        "max_eval_questions": 4,
        "eval_random_negatives": 3,
    }
    m = train_reranker(src, tmp_path / "out", params)
    assert (tmp_path / "out" / "model").is_dir() and not (tmp_path / "out" / ".model.tmp").exists()
    saved = json.loads((tmp_path / "out" / "metrics.json").read_text())
    assert saved["train_steps"] == 3 == m["train_steps"]
    assert saved["data"]["heldout_questions"] == 4
    for who in ("trained_cross_encoder", "baseline_minilm_biencoder"):
        assert 0.0 <= saved["heldout"][who]["mrr@10"] <= 1.0
    rr = CrossEncoderReranker(tmp_path / "out" / "model")
    scores = rr.score("What does Company1 sell?", ["Company1 sells pumps.", "Unrelated text.", "x"])
    assert len(scores) == 3 and all(isinstance(s, float) for s in scores)
    assert rr.score("q", []) == []
    # bf16 scores are coarse (ties); the fp32 head gives scores close to fp32's, and a revision of its own
    texts = [
        f"Company{i} sells {w} and {v}." for i in range(6) for w, v in (("pumps", "valves"), ("tea", "pens"))
    ]
    full = CrossEncoderReranker(tmp_path / "out" / "model", precision="fp32").score(
        "What does Company1 sell?", texts
    )
    coarse = CrossEncoderReranker(tmp_path / "out" / "model", precision="bf16")
    fine = CrossEncoderReranker(tmp_path / "out" / "model", precision="bf16", fp32_head=True)
    assert fine.revision != coarse.revision
    fine_scores = fine.score("What does Company1 sell?", texts)
    assert max(abs(a - b) for a, b in zip(fine_scores, full, strict=True)) < 0.05
    assert len(set(fine_scores)) >= len(set(coarse.score("What does Company1 sell?", texts)))


@pytest.mark.realdata
def test_tatqa_dev_loads(mirror):
    ctxs = load_tatqa(mirror / "tatqa" / "tatqa_dataset_dev.json")
    assert len(ctxs) == 278
    n_q = sum(len(c.questions) for c in ctxs)
    assert 1500 <= n_q <= 1668  # questions without any evidence are dropped
    assert all(c.passages[0].startswith("| ") for c in ctxs)


def test_rerank_score_cache_reuses_scores_and_survives_reopen(tmp_path):
    """The (query, passage) score cache: the second call scores nothing, a new object reads the same file."""
    from finrag.core.kvstore import SqliteKV
    from finrag.retrieve.rerank import CrossEncoderReranker

    calls: list[int] = []

    def make():
        r = CrossEncoderReranker.__new__(CrossEncoderReranker)
        r.revision = "rev1"
        r._scores = SqliteKV(tmp_path / "s.sqlite", "s", "REAL")

        def predict(query, texts):
            calls.append(len(texts))
            return [float(len(query) + len(t)) for t in texts]

        r._predict = predict
        return r

    first = make().score("net income 2019?", ["a", "bb", "a"])
    assert first == [17.0, 18.0, 17.0] and calls == [2]
    again = make().score("net income 2019?", ["bb", "ccc", "a"])
    assert again == [18.0, 19.0, 17.0] and calls == [2, 1]
