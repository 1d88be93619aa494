"""The study's judge is the one the agreement stage's rule selects, and its agreement travels with its figures."""

from __future__ import annotations

import pytest

from finrag.score.evaluate import check_selected
from finrag.score.judge_trust import judge_trust, selected_judge

AGREEMENT = {
    "selected_judge": {"selected": "verifier", "rule": "max over candidates of the min binary kappa"},
    "judges": {
        "verifier": {
            "benchmarks": {
                "findver": {"binary": {"kappa": 0.15441, "kappa_ci": [0.058, 0.2521], "n": 358}},
                "expertqa": {"binary": {"kappa": 0.256, "kappa_ci": [0.14, 0.36], "n": 405}},
                "empty": {"binary": {"kappa": None}},
            }
        },
        "numeric": {
            "benchmarks": {"findver": {"binary": {"kappa": 0.16, "kappa_ci": [0.06, 0.26], "n": 358}}}
        },
    },
}


def test_score_refuses_a_judge_the_rule_did_not_select():
    check_selected("verifier", AGREEMENT)
    check_selected("numeric", {})  # no selection stated: nothing to check against
    with pytest.raises(
        ValueError, match="score.judge is 'numeric', but the agreement stage's rule selects 'verifier'"
    ):
        check_selected("numeric", AGREEMENT)


def test_trust_rows_are_the_judges_kappas_with_intervals_and_a_plain_note():
    assert selected_judge(AGREEMENT) == "verifier"
    t = judge_trust(AGREEMENT, "verifier")
    assert [(r["benchmark"], r["kappa"], r["kappa_ci"], r["n"]) for r in t["agreement"]] == [
        ("expertqa", 0.256, [0.14, 0.36], 405),
        ("findver", 0.154, [0.058, 0.252], 358),
    ]  # sorted by benchmark; a benchmark without a kappa is left out
    assert t["note"].startswith("worst-case kappa 0.154 (findver): slight agreement")
    assert "selected" not in t["note"]
    other = judge_trust(AGREEMENT, "numeric")
    assert "the agreement stage selected 'verifier'" in other["note"]
    assert judge_trust({}, "verifier")["note"] == "no measured agreement with human labels for this judge"
