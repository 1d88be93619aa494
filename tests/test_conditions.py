"""The study-validity conditions: their contexts, the declared question draw, and the paired statistics."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

from finrag.core.contracts import Context
from finrag.generate.run import family_specs, question_sample
from finrag.retrieve.conditions import contexts_from_run, shuffled_oracle
from finrag.score.conditions import (
    ConditionsParams,
    dose_table,
    level_trend,
    paired_difference,
    position_table,
)


def _ctx(qid: str, mode: str = "oracle", n: int = 5) -> Context:
    return Context(qid=qid, mode=mode, setup="page/mpnet/dense", chunk_ids=[f"{qid}:{i}" for i in range(n)],
                   scores=[1.0 - i / 10 for i in range(n)])  # fmt: skip


def test_shuffled_oracle_permutes_each_question_by_its_own_seeded_draw():
    frozen = [_ctx(f"q{i}") for i in range(30)] + [_ctx("q0", mode="retrieved")]
    once, again = shuffled_oracle(frozen, 7), shuffled_oracle(frozen, 7)
    assert once == again and len(once) == 30 and all(c.mode == "oracle" for c in once)
    for before, after in zip(frozen, once, strict=False):
        assert sorted(after.chunk_ids) == sorted(before.chunk_ids)
        assert dict(zip(after.chunk_ids, after.scores, strict=True)) == dict(
            zip(before.chunk_ids, before.scores, strict=True)
        )  # each passage keeps its score
    assert sum(c.chunk_ids[0] != f"{c.qid}:0" for c in once) > 15  # the gold passage leaves the front
    # a question's order does not depend on which other questions are there
    assert shuffled_oracle(frozen[5:6], 7) == once[5:6]


def test_contexts_from_run_takes_the_top_k_and_refuses_a_missing_question():
    rows = [{"qid": "a", "hits": [{"chunk_id": f"c{i}", "score": 1 - i / 10} for i in range(20)]}]
    (ctx,) = contexts_from_run(rows, ["a"], 5, "page/mpnet/dense+x")
    assert ctx.chunk_ids == [f"c{i}" for i in range(5)] and ctx.mode == "retrieved"
    with pytest.raises(ValueError, match="lacks 1 questions"):
        contexts_from_run(rows, ["a", "b"], 5, "page/mpnet/dense+x")


def test_the_declared_draw_is_nested_and_keeps_to_its_kinds():
    qs = [SimpleNamespace(qid=f"f{i}", kind="financebench") for i in range(50)]
    qs += [SimpleNamespace(qid=f"t{i}", kind="trick_single") for i in range(10)]
    draw = {"kinds": ["financebench"], "seed": 3}
    small = question_sample(qs, {**draw, "size": 10})
    large = question_sample(qs, {**draw, "size": 30})
    assert large[:10] == small and all(q.kind == "financebench" for q in large)
    assert len(question_sample(qs, draw)) == 50 and question_sample(qs, None) == qs
    assert [q.qid for q in small] != [f"f{i}" for i in range(10)]  # shuffled, not the file's first ten


def test_a_family_may_name_a_condition_and_a_question_draw():
    fam = {"tag": "m", "run_id": "{tag}-{style}-{context}", "styles": ["plain"],
           "contexts": ["oracle", "oracle-shuffled"], "replicates": [0]}  # fmt: skip
    specs = family_specs("f", fam, {}, {"oracle-shuffled": "oracle"}, ["q1"])
    by_id = {s.run_id: s for s in specs}
    shuffled = by_id["m-plain-oracle-shuffled"]
    assert shuffled.context_mode == "oracle" and shuffled.contexts_key == "oracle-shuffled"
    assert by_id["m-plain-oracle"].contexts_key == "oracle"
    assert shuffled.asks("q1") and not shuffled.asks("q2")


def test_paired_difference_counts_the_discordant_pairs():
    values = np.array([[1, 0]] * 9 + [[0, 1]] * 1 + [[1, 1]] * 20, dtype=float)
    d = paired_difference(values, True, 2000, 0)
    assert d["n"] == 30 and d["lost"] == 9 and d["gained"] == 1
    assert d["difference"] == pytest.approx(-8 / 30)
    assert d["p"] == pytest.approx(0.021484375)  # exact two-sided binomial, 1 of 10
    assert d["ci"][0] < d["difference"] < d["ci"][1] < 0


def test_level_trend_finds_a_rising_dose_and_not_a_flat_one():
    rng = np.random.default_rng(0)
    rising = (rng.random((60, 3)) < np.array([0.2, 0.5, 0.8])).astype(float)
    t = level_trend(rising, 2000, 0)
    assert t["per_level"] > 0.1 and t["p"] < 0.01 and t["ci"][0] > 0
    flat = level_trend(np.ones((40, 3)), 2000, 0)
    assert flat["per_level"] == 0 and flat["p"] == 1.0
    assert level_trend(np.array([[1.0, np.nan, 0.0]]), 100, 0)["per_level"] is None


def _records(rows):
    return [SimpleNamespace(run_id=r, qid=q, correct=v, fully_grounded=v, citation_recall=None)
            for r, q, v in rows]  # fmt: skip


def test_tables_pair_on_the_questions_every_run_answered():
    params = ConditionsParams.model_construct(
        levels=["retrieved", "filtered"], metrics=["correct", "citation_recall"], n_resamples=200, seed=0,
        position={"g": SimpleNamespace(gold_first="g-o", shuffled="g-s")},
        dose={"g": SimpleNamespace(runs=["g-r", "g-f"])},
    )  # fmt: skip
    recs = _records([("g-o", "a", True), ("g-o", "b", True), ("g-s", "a", False),
                     ("g-r", "a", False), ("g-f", "a", True), ("g-f", "b", True)])  # fmt: skip
    pos = position_table(recs, params)["g"]
    assert (
        pos["questions"] == 1 and pos["metrics"]["correct"]["shuffled_minus_gold_first"]["difference"] == -1
    )
    dose = dose_table(recs, params, {"retrieved": {"a": 0.0}, "filtered": {"a": 1.0}})["g"]
    assert dose["questions"] == 1 and dose["evidence_recall"] == [0.0, 1.0]
    assert [lv["value"] for lv in dose["metrics"]["correct"]["levels"]] == [0.0, 1.0]
    assert dose["metrics"]["citation_recall"]["levels"][0]["n"] == 0


def test_gold_position_finds_the_first_passage_showing_evidence():
    from finrag.score.conditions import by_gold_position, gold_position

    ps = [SimpleNamespace(doc_id="d", pages=[3]), SimpleNamespace(doc_id="d", pages=[7, 8])]
    assert gold_position(ps, {("d", 8)}) == 2 and gold_position(ps, {("e", 3)}) is None
    answers = [SimpleNamespace(qid="a", passages=ps), SimpleNamespace(qid="b", passages=ps)]
    recs = _records([("s", "a", True), ("g", "a", True), ("s", "b", False), ("g", "b", True)])
    rows = by_gold_position(recs, answers, {"a": {("d", 3)}, "b": {("d", 7)}},
                            SimpleNamespace(gold_first="g", shuffled="s"))  # fmt: skip
    assert rows == {"1": {"n": 1, "shuffled_correct": 1, "gold_first_correct": 1},
                    "2": {"n": 1, "shuffled_correct": 0, "gold_first_correct": 1}}  # fmt: skip


def test_shares_and_difference_are_on_the_same_pairs_and_model_size_pairs_like_position():
    from finrag.score.conditions import model_size_table

    params = ConditionsParams.model_construct(
        metrics=["correct", "citation_recall"], n_resamples=200, seed=0, position={},
        model_size={"plain, oracle": SimpleNamespace(small="s-o", large="l-o")},
    )  # fmt: skip
    recs = [SimpleNamespace(run_id=r, qid=q, correct=c, citation_recall=cr) for r, q, c, cr in [
        ("s-o", "a", False, 0.2), ("s-o", "b", True, None), ("s-o", "c", False, 0.4),
        ("l-o", "a", True, 0.6), ("l-o", "b", True, 1.0), ("l-o", "c", True, 0.8)]]  # fmt: skip
    row = model_size_table(recs, params)["plain, oracle"]
    cr = row["metrics"]["citation_recall"]
    # b's citation recall is undefined for the small model: both means and the difference leave it out
    assert cr["small"]["n"] == cr["large"]["n"] == cr["large_minus_small"]["n"] == 2
    assert cr["large"]["value"] == pytest.approx(0.7) and cr["large_minus_small"][
        "difference"
    ] == pytest.approx(0.4)
    assert row["metrics"]["correct"]["large_minus_small"]["gained"] == 2 and row["questions"] == 3


def test_holm_adjusts_every_p_value_of_the_stage_together():
    from finrag.score.conditions import adjust_for_multiple_tests

    diff = {"difference": 0.1, "p": 0.01}
    trend = {"per_level": 0.1, "p": 0.04}
    graded = {"difference": 0.1, "p": None}  # a graded difference has no test: not counted
    tables = {
        "position": {
            "g": {"metrics": {"correct": {"gold_first": {"value": 0.5}, "d": diff}, "cr": {"d": graded}}}
        },
        "dose": {"g": {"metrics": {"correct": {"levels": [], "trend": trend}}}},
    }
    out = adjust_for_multiple_tests(tables)
    assert (
        out["n_tests"] == 2
        and diff["p_holm"] == pytest.approx(0.02)
        and trend["p_holm"] == pytest.approx(0.04)
    )
    assert "p_holm" not in graded and adjust_for_multiple_tests({})["n_tests"] == 0
