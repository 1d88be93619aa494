"""The seed study's lesson measured pair by pair on the same claims (finrag.trust.seed_lesson)."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.metrics import cohen_kappa_score

from finrag.trust.seed_lesson import _weighted_kappa, judge_parts, seed_lesson


def _records(bench: str, human: list[int], verdicts: list[int], ids: list[str] | None = None) -> list[dict]:
    ids = ids or [f"{bench}:{i}" for i in range(len(human))]
    lab = {1: "supported", 0: "unsupported"}
    return [
        {"item_id": k, "benchmark": bench, "human": lab[h], "judge": lab[v]}
        for k, h, v in zip(ids, human, verdicts, strict=True)
    ]


def _flip(x: np.ndarray, share: float, rng: np.random.Generator) -> np.ndarray:
    return np.where(rng.random(x.size) < share, 1 - x, x)


def test_weighted_kappa_is_cohens_kappa_of_the_drawn_claims():
    rng = np.random.default_rng(0)
    a, b = rng.integers(0, 2, 60).astype(float), rng.integers(0, 2, 60).astype(float)
    counts = rng.integers(0, 3, 60)
    drawn = np.repeat(np.arange(60), counts)
    expected = cohen_kappa_score(a[drawn], b[drawn])
    got = _weighted_kappa(np.vstack([np.ones(60), counts.astype(float)]), a, b)
    assert got[0] == pytest.approx(cohen_kappa_score(a, b))
    assert got[1] == pytest.approx(expected)
    assert np.isnan(_weighted_kappa(np.ones((1, 4)), np.ones(4), np.ones(4))[0])  # one label everywhere


def test_two_copies_of_one_judge_agree_more_with_each_other_than_with_humans():
    rng = np.random.default_rng(1)
    human = rng.integers(0, 2, 400)
    judge = _flip(human, 0.35, rng)  # a weak judge
    records = {"a": _records("b1", list(human), list(judge)), "b": _records("b1", list(human), list(judge))}
    out = seed_lesson(records, ["a", "b"], {}, {"a": {"a"}, "b": {"b"}}, ["b1"], n_resamples=300)
    row = out["rows"][0]
    assert row["kappa_ai"] == pytest.approx(1.0)
    assert row["kappa_human_a"] == pytest.approx(cohen_kappa_score(human, judge))
    assert out["every_pair"]["ci"][0] > 0  # the lesson holds, with an interval that says so


def test_independent_errors_agree_less_with_each_other_than_with_humans():
    rng = np.random.default_rng(2)
    human = rng.integers(0, 2, 2000)
    a, b = _flip(human, 0.2, rng), _flip(human, 0.2, rng)  # each errs on its own
    records = {"a": _records("b1", list(human), list(a)), "b": _records("b1", list(human), list(b))}
    out = seed_lesson(records, ["a", "b"], {}, {}, ["b1"], n_resamples=300)
    assert out["every_pair"]["mean_ai"] < out["every_pair"]["mean_human"]
    assert out["every_pair"]["ci"][1] < 0


def test_rows_are_on_the_claims_both_judged_and_constant_raters_are_left_out():
    rng = np.random.default_rng(3)
    human = rng.integers(0, 2, 300)
    ids = [f"x{i}" for i in range(300)]
    wide = _flip(human, 0.1, rng)  # a judge run on every claim
    narrow = _flip(human, 0.3, rng)[:100]  # one on the first 100 only
    records = {
        "wide": _records("b1", list(human), list(wide), ids),
        "narrow": _records("b1", list(human[:100]), list(narrow), ids[:100]),
        "yes": _records("b1", list(human[:100]), [1] * 100, ids[:100]),
    }
    out = seed_lesson(records, ["wide", "narrow", "yes"], {}, {}, ["b1"], n_resamples=100)
    (row,) = out["rows"]
    assert row["n"] == 100
    assert row["kappa_human_a"] == pytest.approx(cohen_kappa_score(human[:100], wide[:100]))
    assert {tuple(r["constant_rater"]) for r in out["left_out"]} == {("yes",)}
    assert len(out["left_out"]) == 2


def test_pairs_sharing_a_part_are_not_independent_and_answers_resample_whole():
    rng = np.random.default_rng(4)
    human = rng.integers(0, 2, 200)
    recs = {
        j: _records("b1", list(human), list(_flip(human, 0.25, rng))) for j in ("numeric", "verifier", "llm")
    }
    parts = {"numeric": {"numeric"}, "verifier": {"verifier", "numeric"}, "llm": {"llm", "model:q"}}
    units = {f"b1:{i}": f"answer{i // 10}" for i in range(200)}  # 20 answers of 10 claims
    out = seed_lesson(recs, ["numeric", "verifier", "llm"], units, parts, ["b1"], n_resamples=200)
    independent = {r["pair"]: r["independent"] for r in out["rows"]}
    assert independent == {"numeric vs verifier": False, "numeric vs llm": True, "verifier vs llm": True}
    assert out["independent_pairs"]["rows"] == 2 and out["every_pair"]["rows"] == 3
    lo, hi = out["every_pair"]["ci"]
    assert lo < out["every_pair"]["mean_difference"] < hi


def test_a_judge_is_made_of_what_it_is_built_from_in_turn_and_the_models_they_read():
    parts = judge_parts(
        ["numeric", "study", "combined", "llm_logprob"],
        {"verifier": ["numeric"], "study": ["verifier"], "combined": ["numeric", "llm"]},
        {"llm": "q0.5", "llm_logprob": "q0.5"},
    )
    assert parts["study"] == {"study", "verifier", "numeric"}
    assert parts["combined"] == {"combined", "numeric", "llm", "model:q0.5"}
    assert parts["combined"] & parts["llm_logprob"] == {"model:q0.5"}  # one model's weights read by both
    assert not parts["study"] & parts["llm_logprob"]
