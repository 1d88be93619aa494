"""Judge error carried into the shares: Rogan-Gladen correction, its bootstrap, PPI validation, finrag's own labels.

Fixtures are copies of one committed record (results/scores/records.jsonl, git-tracked) with the fields each
case needs changed, so they stay valid ScoredAnswers as the contract grows."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import yaml

from finrag.core.io import read_jsonl
from finrag.ingest.human_claims import load_finrag_labels
from finrag.score.record import JudgedClaim, ScoredAnswer
from finrag.score.tables import run_table
from finrag.trust.judge_error import (
    JudgeErrorParams,
    JudgeRates,
    corrected_run,
    corrected_runs,
    finrag_ppi,
    judge_rates,
    labels_needed,
    ppi_table,
    rogan_gladen,
    validate_ppi,
)

ROOT = Path(__file__).resolve().parents[1]
RECORDS = ROOT / "results/scores/records.jsonl"


@pytest.fixture(scope="module")
def records() -> list[ScoredAnswer]:
    return read_jsonl(RECORDS, ScoredAnswer)


@pytest.fixture(scope="module")
def template(records) -> ScoredAnswer:
    return next(r for r in records if r.n_claims == 1 and r.kind == "financebench")


def _answer(template: ScoredAnswer, i: int, verdicts: list[str], correct=False, flags=(), run_id="run-a"):
    claims = [JudgedClaim(claim_id=f"c{k}", text=f"claim {k}", verdict=v) for k, v in enumerate(verdicts, 1)]
    grounded = bool(verdicts) and all(v == "supported" for v in verdicts)
    return template.model_copy(
        update={
            "qid": f"q{i:04d}",
            "run_id": run_id,
            "series": run_id,
            "replicate": 0,
            "claims": claims,
            "n_claims": len(claims),
            "n_supported": sum(v == "supported" for v in verdicts),
            "fully_grounded": grounded,
            "correct": correct,
            "flags": list(flags),
            "correct_and_grounded": correct and grounded and not flags,
        }
    )


def _params(**over) -> JudgeErrorParams:
    base = yaml.safe_load((ROOT / "params.yaml").read_text())["judge_error"]
    return JudgeErrorParams.from_dict({**base, "n_boot": 400, **over})


def test_rates_from_confusion_rows_human_columns_judge():
    r = JudgeRates.from_confusion([[80, 20], [10, 90]])
    assert (r.sensitivity, r.specificity) == (0.8, 0.9)
    assert r.youden == pytest.approx(0.7)


def test_rogan_gladen_recovers_the_true_share_and_refuses_a_chance_judge():
    s, p, truth = 0.8, 0.9, 0.5
    observed = truth * s + (1 - truth) * (1 - p)  # what such a judge reports
    assert float(rogan_gladen(observed, s, p)) == pytest.approx(truth)
    assert float(rogan_gladen(0.3, 1.0, 1.0)) == pytest.approx(0.3)  # a perfect judge changes nothing
    assert np.isnan(rogan_gladen(0.5, 0.5, 0.5))  # s + p - 1 = 0: not identified
    assert float(rogan_gladen(0.01, 0.8, 0.9)) == 0.0  # clipped to [0, 1]


def test_a_perfect_judge_leaves_the_share_and_a_chance_judge_cannot_tell_it(template):
    recs = [_answer(template, i, ["supported"] if i % 3 else ["unsupported"]) for i in range(300)]
    perfect = {"a": JudgeRates(500, 0, 0, 500)}
    out = corrected_run(recs, perfect, n_boot=400, seed=1, cannot_tell_width=0.5)["fully_grounded"]
    assert out["by_set"]["a"]["corrected"] == pytest.approx(out["observed"])
    assert out["envelope_ci"][1] - out["envelope_ci"][0] < 0.15 and out["can_tell"]
    chance = {"a": JudgeRates(50, 50, 50, 50)}
    out = corrected_run(recs, chance, n_boot=400, seed=1, cannot_tell_width=0.5)["fully_grounded"]
    assert out["envelope_ci"] == [0.0, 1.0] and not out["can_tell"]


def test_envelope_spans_the_sets_and_claims_are_corrected_too(template):
    def verdict(ok: bool) -> str:
        return "supported" if ok else "unsupported"

    # fully grounded 1/3, claims supported 7/12: inside what both judges can report, so neither is clipped
    recs = [_answer(template, i, [verdict(i % 2 == 1), verdict(i % 3 != 0)]) for i in range(240)]
    rates = {"good": JudgeRates(190, 10, 10, 190), "weak": JudgeRates(150, 50, 50, 150)}
    out = corrected_run(recs, rates, n_boot=400, seed=2, cannot_tell_width=0.5)
    for share in ("fully_grounded", "claims_supported"):
        s = out[share]
        good, weak = s["by_set"]["good"], s["by_set"]["weak"]
        assert s["envelope_ci"] == [min(good["ci"][0], weak["ci"][0]), max(good["ci"][1], weak["ci"][1])]
        assert (weak["ci"][1] - weak["ci"][0]) > (
            good["ci"][1] - good["ci"][0]
        )  # a weaker judge, a wider interval
    assert out["claims_supported"]["unit"] == "claims" and out["claims_supported"]["n"] == 240


def test_correct_and_grounded_corrects_only_the_grounded_part(template):
    """Correctness and flags are read without the judge: an answer that is wrong or flagged stays out whatever the
    judge's error; only the grounded share among correct, unflagged answers is corrected."""
    recs = [
        _answer(
            template,
            i,
            [
                "supported" if i < 46 else "unsupported"
            ],  # 36 of the 40 correct, unflagged answers judged grounded
            correct=i < 50,
            flags=("passage_copy",) if i < 10 else (),
        )
        for i in range(100)
    ]
    out = corrected_run(recs, {"a": JudgeRates(90, 10, 10, 90)}, n_boot=400, seed=3, cannot_tell_width=0.5)
    cg = out["correct_and_grounded"]
    assert cg["observed"] == pytest.approx(0.36)
    # q = 36/40 = 0.9 = s: corrected (0.9 + 0.9 - 1) / 0.8 = 1, times the 40% correct and unflagged
    assert cg["by_set"]["a"]["corrected"] == pytest.approx(0.40)
    assert cg["by_set"]["a"]["ci"][1] <= 0.56  # bounded by the share of correct, unflagged answers, resampled


def test_a_share_the_judge_cannot_report_is_not_corrected(template):
    """A judge of sensitivity 0.6 reports at most 60% supported (if everything is): a run judged 100% grounded says
    its rates do not carry over to these answers, so the share stays unknown (from 0 to what the judge-free part
    allows) instead of being clipped to a confident 100%."""
    recs = [_answer(template, i, ["supported"], correct=i < 30) for i in range(100)]
    out = corrected_run(recs, {"a": JudgeRates(60, 40, 30, 70)}, n_boot=200, seed=4, cannot_tell_width=0.5)
    fg, cg = out["fully_grounded"]["by_set"]["a"], out["correct_and_grounded"]["by_set"]["a"]
    assert fg == {"corrected": None, "ci": [0.0, 1.0], "transported": False}
    assert cg["corrected"] is None and cg["ci"] == [0.0, 0.3]
    assert not out["fully_grounded"]["can_tell"]


def test_observed_shares_are_the_run_tables(records):
    """The corrected rows group exactly as the score stage's run table: each observed share is the table's."""
    p = _params(n_boot=50)
    table = {row["series"]: row for row in run_table(records, p.main_kinds)}
    rates = {b: JudgeRates(60, 40, 30, 70) for b in p.benchmarks}
    for row in corrected_runs(records, p.main_kinds, rates, p)[:6]:
        want = table[row["series"]]
        for share in ("fully_grounded", "grounded_unflagged", "correct_and_grounded"):
            assert row["shares"][share]["observed"] == pytest.approx(want[share]["p"], abs=1e-4), (
                row["series"],
                share,
            )
            assert row["shares"][share]["n"] == want[share]["n"]


def test_judge_rates_names_a_missing_set():
    agreement = {
        "judges": {"numeric": {"benchmarks": {"findver": {"binary": {"confusion_matrix": [[1, 1], [1, 1]]}}}}}
    }
    assert judge_rates(agreement, "numeric", ["findver"])["findver"].tp == 1
    with pytest.raises(ValueError, match="no agreement on 'expertqa'"):
        judge_rates(agreement, "numeric", ["findver", "expertqa"])
    with pytest.raises(ValueError, match="no judge 'other'"):
        judge_rates(agreement, "other", ["findver"])


def test_ppi_is_valid_for_any_judge_and_narrower_for_a_good_one():
    rng = np.random.default_rng(0)
    human = rng.random(400) < 0.4
    good = np.where(rng.random(400) < 0.95, human, ~human)
    chance = rng.random(400) < 0.5
    g = validate_ppi(human, good, [50, 100, 300], draws=200, seed=1)
    c = validate_ppi(human, chance, [50, 100], draws=200, seed=1)
    assert [r["labelled"] for r in g] == [50, 100]  # 300 > half the set: left out
    for r in g + c:
        assert r["ppi_coverage"] >= 0.9 and r["labels_only_coverage"] >= 0.9
    assert all(r["ppi_width"] < 0.7 * r["labels_only_width"] for r in g)
    assert all(r["ppi_width"] > 0.85 * r["labels_only_width"] for r in c)  # a useless judge does not help


def test_ppi_table_picks_the_narrowest_valid_judge_and_extrapolates_labels():
    rng = np.random.default_rng(5)
    rows = []
    for _ in range(400):
        h = rng.random() < 0.5
        rows.append({"judge": "good", "benchmark": "findver", "human": "supported" if h else "not_supported",
                     "verdict": ("supported" if h else "not_supported") if rng.random() < 0.9 else
                     ("not_supported" if h else "supported")})  # fmt: skip
        rows.append({"judge": "noise", "benchmark": "findver", "human": rows[-1]["human"],
                     "verdict": "supported" if rng.random() < 0.5 else "not_supported"})  # fmt: skip
    p = _params(benchmarks=["findver"], ppi={"labelled": [50, 100], "draws": 100, "min_coverage": 0.9})
    out = ppi_table(rows, p)
    assert out["narrowest_valid"]["findver"]["100"]["judge"] == "good"
    need = labels_needed(out["rows"], p)
    assert {r["width"] for r in need} == {0.2, 0.1}
    for r in need:
        assert r["labelled_ppi"] <= r["labelled_labels_only"]


def test_finrag_labels_end_to_end(tmp_path, template):
    """A label saved by the labelling page (its file format) reaches the study's share as a PPI interval."""
    recs = [_answer(template, i, ["supported", "unsupported" if i % 5 == 0 else "supported"], run_id="run-a")
            for i in range(60)]  # fmt: skip
    lines = []
    for r in recs[:20]:
        for k, c in enumerate(r.claims, 1):
            answer_id = f"{r.run_id}/{r.qid}/{r.replicate}"
            human = c.verdict if k == 1 else "unsupported"  # the person is stricter than the judge on claim 2
            lines.append({"answer_id": answer_id, "claim_id": f"{answer_id}#{k}", "claim": c.text, "passages": [],
                          "verdict": human, "labeller": "ann", "time": "2026-12-07T00:00:00"})  # fmt: skip
    (tmp_path / "ann.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))
    labels = load_finrag_labels(tmp_path).items
    assert len(labels) == 40
    rows = finrag_ppi(recs, labels, [template.kind])
    assert len(rows) == 1
    row = rows[0]
    assert (row["labelled_claims"], row["unlabelled_claims"]) == (40, 80)
    assert row["human_share"] == pytest.approx(0.5)
    assert row["judge_share_on_labelled"] > row["human_share"]
    lo, hi = row["ppi_ci"]
    assert lo <= 0.5 <= hi  # true share: claim 1 always supported, claim 2 never -> 0.5; the judge says 0.9
    assert finrag_ppi(recs, [], [template.kind]) == []  # no labels: no rows


def test_labels_are_a_dependency_of_the_stages_that_read_them():
    stages = yaml.safe_load((ROOT / "dvc.yaml").read_text())["stages"]
    for name in ("agreement", "judge_error"):
        assert "labels" in stages[name]["deps"], name
    assert "results/trust/judge_verdicts.jsonl" in stages["judge_error"]["deps"]
