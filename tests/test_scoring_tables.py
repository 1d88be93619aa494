"""The study's tables and plots from hand-built answers: every value checked exactly."""

from __future__ import annotations

import json
import statistics

import numpy as np
import pytest
from scipy.stats import spearmanr
from statsmodels.stats.proportion import proportion_confint

from finrag.score.evaluate import score_answers, series_of
from finrag.score.judges.base import make_judge
from finrag.score.plots import PLOT_FILES, write_plots
from finrag.score.tables import (
    build_tables,
    correlation_table,
    main_series,
    replicate_table,
    run_summary,
    run_table,
    select_final,
)
from test_scoring_evaluate import study_answers, study_questions

PARAMS = {"main_kinds": ["financebench"], "correlation": {"n_resamples": 300, "seed": 11}}


@pytest.fixture(scope="module")
def records():
    qs = {q.qid: q for q in study_questions()}
    return score_answers(study_answers(), qs, make_judge("numeric"), progress=False)


@pytest.fixture(scope="module")
def tables(records):
    return build_tables(records, PARAMS)


def _row(rows, **keys):
    (r,) = [r for r in rows if all(r[k] == v for k, v in keys.items())]
    return r


def _wilson(k, n):
    return list(proportion_confint(k, n, alpha=0.05, method="wilson"))


def test_json_ready(tables):
    json.dumps(tables, allow_nan=False)


def test_run_table_uses_first_replicate_with_wilson_intervals(tables):
    r = _row(tables["runs"], generator="sim/m1", context_mode="retrieved", prompt_style="plain")
    assert r["series"] == "m1-plain-retrieved-r*"
    assert (r["run_ids"], r["replicate"], r["n"], r["n_scored"]) == (["m1-plain-retrieved-r0"], 0, 4, 3)
    expected = {  # fb1 right+grounded, fb2 right only, fb3 grounded only (wrong year), fb4 refusal
        "correct": (2, 4),
        "fully_grounded": (2, 3),
        "declined": (1, 4),
        "correct_and_grounded": (1, 4),
        "correct_or_grounded": (3, 4),
    }
    for metric, (k, n) in expected.items():
        assert (r[metric]["k"], r[metric]["n"], r[metric]["p"]) == (k, n, k / n), metric
        assert r[metric]["ci"] == pytest.approx(_wilson(k, n), abs=1e-12), metric
    assert r["groundedness"]["mean"] == pytest.approx(2 / 3)
    assert (r["tokens"], r["tokens_per_answer"], r["cost_usd"]) == (480, 120.0, 0.008)
    assert r["evidence_recall"]["mean"] == 0.5
    assert "llm_fully_grounded" not in r
    assert {(x["generator"], x["context_mode"], x["prompt_style"]) for x in tables["runs"]} == {
        ("sim/m1", "retrieved", "plain"),
        ("sim/m1", "retrieved", "cot"),
        ("sim/m1", "oracle", "plain"),
        ("sim/m2", "retrieved", "plain"),
    }


def test_run_summary_matches_the_run_table_and_leaves_refusals_out_of_grounding(records, tables):
    summary = run_summary(records)
    s = summary["m1-plain-retrieved-r0"]
    r = _row(tables["runs"], generator="sim/m1", context_mode="retrieved", prompt_style="plain")
    # fb4 is a refusal: not fully grounded among all answers (P08's base), left out of the run table's base
    assert (s["n"], s["correct"], s["fully_grounded"], s["fully_grounded_of_scored"]) == (
        4,
        2 / 4,
        2 / 4,
        2 / 3,
    )
    assert (s["correct"], s["fully_grounded_of_scored"]) == (r["correct"]["p"], r["fully_grounded"]["p"])
    assert set(summary) == {r.run_id for r in records}
    # un1 (unanswerable) declined; fp1 (false premise) used the premise: declined of the unanswerable only,
    # withheld of both kinds
    assert (s["declined_when_should"], s["withheld_when_should"]) == (1.0, 0.5)


def test_a_temperature_zero_run_and_a_sampled_series_are_separate_systems(records):
    extra = [
        r.model_copy(update={"run_id": "m1-plain-retrieved", "series": series_of("m1-plain-retrieved")})
        for r in records
        if r.run_id == "m1-plain-retrieved-r0"
    ]
    assert series_of("m1-plain-retrieved-r12") == "m1-plain-retrieved-r*"
    assert series_of("m1-plain-retrieved-r1", pattern="") == "m1-plain-retrieved-r1"
    rows = [
        r
        for r in run_table([*records, *extra])
        if r["generator"] == "sim/m1" and r["prompt_style"] == "plain"
    ]
    got = {(r["context_mode"], r["series"]): (r["run_ids"], r["n"]) for r in rows}
    assert got == {
        ("oracle", "m1-plain-oracle"): (["m1-plain-oracle"], 1),
        ("retrieved", "m1-plain-retrieved"): (["m1-plain-retrieved"], 4),
        ("retrieved", "m1-plain-retrieved-r*"): (["m1-plain-retrieved-r0"], 4),
    }


def test_pooled_tables_count_a_question_once_per_style_when_a_sampled_series_exists(records, tables):
    # a temperature-0 run of the same prompt beside the sampled series: the pooled tables keep the former only
    extra = [
        r.model_copy(update={"run_id": "m1-plain-retrieved", "series": series_of("m1-plain-retrieved")})
        for r in records
        if r.run_id == "m1-plain-retrieved-r0"
    ]
    both = build_tables([*records, *extra], PARAMS)
    for name in ("two_by_two", "trick"):
        assert [r["n"] for r in both[name]] == [r["n"] for r in tables[name]], name
    assert [r["n"] for r in both["correlation"]] == [r["n"] for r in tables["correlation"]]
    kept = {r.run_id for r in main_series([*records, *extra]) if r.prompt_style == "plain"}
    assert "m1-plain-retrieved" in kept and "m1-plain-retrieved-r0" not in kept


def test_two_by_two(tables):
    c = _row(tables["two_by_two"], generator="sim/m1", context_mode="retrieved")  # plain + cot pooled
    assert c["counts"] == {
        "correct_grounded": 2,
        "correct_ungrounded": 1,
        "not_correct_grounded": 1,
        "not_correct_ungrounded": 1,
    }
    assert c["matrix"] == [[2, 1], [1, 1]]
    assert c["shares"]["correct_grounded"] == 0.4 and c["n"] == 5
    assert (c["n_declined"], c["n_without_claims"], c["prompt_styles"]) == (1, 1, ["cot", "plain"])
    o = _row(tables["two_by_two"], generator="sim/m1", context_mode="oracle")
    assert o["matrix"] == [[1, 0], [0, 0]]


def test_trick_table(tables):
    fp = _row(tables["trick"], generator="sim/m1", kind="trick_false_premise", context_mode="retrieved")
    assert fp["n"] == 1
    assert (fp["correct"]["k"], fp["declined"]["k"], fp["flagged_false_premise"]["k"]) == (0, 0, 0)
    assert (fp["used_premise"]["k"], fp["used_made_up_figure"]["k"]) == (1, 1)
    fp2 = _row(tables["trick"], generator="sim/m2", kind="trick_false_premise", context_mode="retrieved")
    assert (fp2["correct"]["k"], fp2["flagged_false_premise"]["k"], fp2["used_made_up_figure"]["k"]) == (
        1,
        1,
        0,
    )
    un = _row(tables["trick"], generator="sim/m1", kind="trick_unanswerable", context_mode="retrieved")
    assert (un["correct"]["k"], un["declined"]["k"], un["answered_correctly"]["k"]) == (1, 1, 0)
    assert un["flagged_false_premise"] is None and un["used_made_up_figure"] is None
    assert {r["kind"] for r in tables["trick"]} == {"trick_false_premise", "trick_unanswerable"}


def test_trick_runs_keep_each_prompt_apart(tables):
    rows = [r for r in tables["trick_runs"] if r["kind"] == "trick_false_premise"]
    pooled = _row(tables["trick"], generator="sim/m1", kind="trick_false_premise", context_mode="retrieved")
    per_run = [r for r in rows if r["generator"] == "sim/m1" and r["context_mode"] == "retrieved"]
    # every row is one series (one prompt): the series' counts add up to at least the pooled table's
    assert len({r["series"] for r in per_run}) == len(per_run) and sum(r["n"] for r in per_run) >= pooled["n"]
    assert all(r["flagged_false_premise"] is not None and r["templates"] for r in rows)
    un = [r for r in tables["trick_runs"] if r["kind"] == "trick_unanswerable"]
    assert un and all(r["flagged_false_premise"] is None for r in un)


def test_declining_confusion(tables):
    d = _row(tables["declining"], generator="sim/m1", context_mode="retrieved", prompt_style="plain")
    # should decline: un1 (declined), fp1 (used the premise); should answer: fb1-fb4, of which fb4 refused
    assert d["matrix"] == [[1, 1], [1, 3]]
    assert d["confusion"]["should_decline"] == {"withheld": 1, "answered": 1}
    assert (d["decline_recall"]["k"], d["decline_recall"]["n"]) == (1, 2)
    assert (d["decline_precision"]["k"], d["decline_precision"]["n"]) == (1, 2)
    assert (d["false_decline_rate"]["k"], d["false_decline_rate"]["n"]) == (1, 4)
    assert (d["declined_without_evidence"]["k"], d["declined_without_evidence"]["n"]) == (1, 2)  # fb2, fb4
    o = _row(tables["declining"], generator="sim/m1", context_mode="oracle", prompt_style="plain")
    assert o["matrix"] == [[0, 0], [0, 1]] and o["decline_recall"]["p"] is None


def test_correlation_spearman_with_question_bootstrap(records, tables):
    c = _row(tables["correlation"], generator="sim/m1")
    # m1, first replicates, answers with both values: r1 fb1 (1,1), fb2 (0,0), fb3 (1,1), fp1 (1,0); r3 fb1; r4 fb2
    x, y = [1, 0, 1, 1, 1, 1], [1, 0, 1, 0, 1, 1]
    assert (c["n"], c["n_questions"]) == (6, 4)
    assert c["spearman_rho"] == pytest.approx(spearmanr(x, y).statistic)
    # 4 questions: many resamples draw only questions with equal values (no rho); keeping the rest would bias
    # the interval, so none is given
    assert c["degenerate_resamples"] > 0.05 * 2000 and c["ci"] == [None, None] and c["p_value"] is None
    m2 = _row(tables["correlation"], generator="sim/m2")  # x constant: rho undefined, reported as None
    assert (m2["spearman_rho"], m2["ci"]) == (None, [None, None])
    assert sorted(map(tuple, tables["scatter_points"]["sim/m1"])) == sorted(
        zip(map(float, x), map(float, y), strict=True)
    )


def test_final_system_rule(tables):
    f = tables["final_system"]
    # cot (m1) and plain (m2) both 1/1 correct and grounded; the tie goes to m2, fewer tokens per answer (60)
    assert (f["system"]["generator"], f["system"]["prompt_style"], f["value"]) == ("sim/m2", "plain", 1.0)
    assert f["tokens_per_answer"] == 60 and f["rule"]["metric"] == "correct_and_grounded"
    assert [t["generator"] for t in f["tied_with"]] == ["sim/m1"]
    assert all(r["context_mode"] == "retrieved" for r in f["ranking"])  # oracle is not a deployable system
    runs = tables["runs"]
    assert select_final(runs, {"metric": "correct"})["system"]["generator"] == "sim/m2"
    g = select_final(runs, {"contexts": ["oracle"]})
    assert g["system"]["context_mode"] == "oracle" and g["value"] == 1.0
    assert select_final(runs, {"contexts": ["none"]})["system"] is None


def test_final_system_tolerance_and_cost():
    def row(gen, p, tokens, cost):
        prop = {"k": 0, "n": 10, "p": p, "ci": [0, 1]}
        return {"generator": gen, "backend": "b", "model": gen, "context_mode": "retrieved", "prompt_style": "plain",
                "series": gen, "run_ids": [gen], "correct_and_grounded": prop, "tokens_per_answer": tokens, "cost_usd": cost}  # fmt: skip

    rows = [row("a", 0.62, 900, 0.1), row("b", 0.60, 300, 0.3), row("c", 0.40, 10, 0.0)]
    assert select_final(rows)["system"]["generator"] == "a"  # strict: highest share wins
    loose = select_final(rows, {"tie_tolerance": 0.05})
    assert loose["system"]["generator"] == "b" and loose["value"] == 0.60
    assert select_final(rows, {"tie_tolerance": 0.05, "cost": "cost_usd"})["system"]["generator"] == "a"


def test_replicates_mean_sd(tables):
    r = _row(tables["replicates"], generator="sim/m1", context_mode="retrieved", prompt_style="plain")
    assert (r["replicates"], r["n_replicates"]) == ([0, 1], 2)
    assert r["correct"]["values"] == [0.5, 1.0]
    assert r["correct"]["mean"] == 0.75
    assert r["correct"]["sd"] == pytest.approx(statistics.stdev([0.5, 1.0]))
    assert r["correct"]["sd"] == pytest.approx(float(np.std([0.5, 1.0], ddof=1)))
    assert r["fully_grounded"]["values"] == [2 / 3, 1.0]
    assert r["declined"]["values"] == [0.25, 0.0]
    assert r["correct_and_grounded"]["mean"] == pytest.approx(0.625)
    single = _row(tables["replicates"], generator="sim/m2", context_mode="retrieved", prompt_style="plain")
    assert single["correct"] == {"values": [1.0], "mean": 1.0, "sd": None}


def test_replicate_table_kinds(records):
    rows = replicate_table(records, main_kinds=["trick_single"])
    assert rows == []


def test_cost_table(tables):
    cost = tables["cost"]
    r1 = _row(cost["generation"], run_id="m1-plain-retrieved-r0")
    assert (r1["calls"], r1["input_tokens"], r1["output_tokens"], r1["seconds"]) == (6, 600, 120, 9.0)
    assert r1["cost_usd"] == 0.012
    assert cost["generation_total"]["calls"] == 14
    assert cost["generation_total"]["input_tokens"] == 100 * 11 + 150 + 50 * 2
    assert cost["judges"] == []


def test_plots_written_and_deterministic(tables, tmp_path):
    a = write_plots(tables, tmp_path / "a")
    b = write_plots(tables, tmp_path / "b")
    assert [p.name for p in a] == list(PLOT_FILES.values())
    for pa, pb in zip(a, b, strict=True):
        data = pa.read_bytes()
        assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 5000
        assert data == pb.read_bytes(), pa.name
    empty = write_plots(build_tables([], PARAMS), tmp_path / "empty")
    assert all(p.exists() for p in empty)


def test_correlation_interval_and_p_value_agree(records):
    base = next(r for r in records if r.generator == "sim/m1" and r.groundedness is not None)
    many = [
        base.model_copy(
            update={
                "qid": f"q{i:02d}",
                "evidence_recall": (i % 10) / 10,
                "groundedness": ((i % 10) + (i * 7) % 5) / 14,
            },
            deep=True,
        )
        for i in range(40)
    ]
    c = _row(correlation_table(many, n_resamples=500, seed=3), generator="sim/m1")
    assert c["spearman_rho"] == pytest.approx(
        spearmanr([r.evidence_recall for r in many], [r.groundedness for r in many]).statistic
    )
    lo, hi = c["ci"]
    assert -1 <= lo <= c["spearman_rho"] <= hi <= 1 and c["degenerate_resamples"] == 0
    # the p-value comes from the same question-level resamples, so it agrees with the interval
    assert 0 <= c["p_value"] <= 1 and (c["p_value"] <= 0.05 if lo > 0 else c["p_value"] > 0.05)
    again = correlation_table(many, n_resamples=500, seed=3)
    assert _row(again, generator="sim/m1")["ci"] == c["ci"]


def test_final_system_among_declared_candidates_names_the_missing_ones():
    def row(gen, p):
        prop = {"k": 0, "n": 10, "p": p, "ci": [0, 1]}
        return {"generator": gen, "backend": "b", "model": gen, "context_mode": "retrieved", "prompt_style": "plain",
                "series": gen, "run_ids": [gen], "correct_and_grounded": prop, "tokens_per_answer": 1, "cost_usd": 0}  # fmt: skip

    rows = [row("a", 0.9), row("b", 0.5), row("c", 0.4)]
    picked = select_final(rows, {"candidates": ["b", "c", "d"]})
    assert picked["system"]["generator"] == "b"  # "a" is better but was not declared a candidate
    assert picked["candidates_missing"] == ["d"]
    assert select_final(rows)["candidates_missing"] == []
    none = select_final(rows, {"candidates": ["d"]})
    assert none["system"] is None and none["candidates_missing"] == ["d"]


def test_run_rows_carry_flags_and_the_unflagged_shares(tables):
    from finrag.score.flags import FLAGS

    for r in tables["runs"]:
        assert list(r["flag_counts"]) == list(FLAGS)
        assert r["n_flagged"] <= r["n"] and r["unflagged"]["n"] == r["n"] - r["n_flagged"]
        # the primary endpoint never exceeds the steps before it: flags and strict grading only take away
        assert r["correct_and_grounded"]["k"] <= r["strict_correct_and_grounded_flags_ignored"]["k"]
        assert r["strict_correct_and_grounded_flags_ignored"]["k"] <= r["lenient_correct_and_grounded"]["k"]
        assert r["correct"]["k"] <= r["lenient_correct"]["k"]
    assert tables["final_system_earlier_rule"]["rule"]["metric"] == "earlier_correct_and_grounded"


def test_grader_sensitivity_gives_uncertain_grades_a_verdict_in_its_own_table(records):
    from finrag.score.model_grader import grader_sensitivity
    from finrag.score.tables import run_groups

    qs = {q.qid: q for q in study_questions()}
    # every wrong answer to a FinanceBench question made an uncertain grade (the study never counts it correct)
    recs = [
        r.model_copy(update={"grade_outcome": "uncertain"})
        if r.kind == "financebench" and not r.correct
        else r
        for r in records
    ]
    tables = build_tables(recs, PARAMS)
    asked: list[str] = []

    def says(label):
        def grader(gold, answer, question):
            asked.append(question)
            return label

        return grader

    agreeing = grader_sensitivity(recs, qs, says("correct"), tables["runs"], PARAMS)
    n_uncertain = sum(
        r.grade_outcome == "uncertain" for g in run_groups(recs, PARAMS["main_kinds"]).values() for r in g
    )
    assert agreeing["asked"] == n_uncertain == len(asked) > 0
    for row in agreeing["runs"]:
        assert row["llm_verdicts"]["correct"] == row["uncertain"]
        assert row["correct_with_llm"]["k"] == row["correct"]["k"] + row["uncertain"]
        assert row["correct_and_grounded_with_llm"]["k"] >= row["correct_and_grounded"]["k"]
    assert agreeing["final_system_with_llm"]["system"] is not None
    unreadable = grader_sensitivity(recs, qs, says(None), tables["runs"], PARAMS)
    for row in unreadable["runs"]:  # an unreadable reply keeps "not correct"
        assert row["llm_verdicts"]["unreadable"] == row["uncertain"]
        assert row["correct_with_llm"] == row["correct"]
    # the candidates alone, and the records themselves untouched
    only = {**PARAMS, "selection": {"candidates": [tables["runs"][0]["series"]]}}
    assert [
        r["series"] for r in grader_sensitivity(recs, qs, says("correct"), tables["runs"], only)["runs"]
    ] == [tables["runs"][0]["series"]]
    assert all(r.grade_outcome == "uncertain" for r in recs if r.kind == "financebench" and not r.correct)
