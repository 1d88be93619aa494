"""FinanceBench human-labelled answers: the loader on the real files, and the agreement code path on a subset."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from finrag.core.stats import kappa
from finrag.trust.grader_agreement import agreement_block, grade_rows, validate_grader
from finrag.trust.human_answers import HUMAN_LABELS, LABELS, _pick_gold, load_labelled_answers, results_files


@pytest.fixture(scope="module")
def rows(mirror: Path):
    return load_labelled_answers(mirror)


def test_sixteen_files_of_150(mirror: Path, rows) -> None:
    files = results_files(mirror)
    assert len(files) == 16
    per_file = Counter(r.file for r in rows)
    assert len(per_file) == 16 and set(per_file.values()) == {150}
    assert len(rows) == 2400


def test_labels_are_the_three_classes(rows) -> None:
    assert {r.human for r in rows} == set(LABELS)
    assert {r.human_raw for r in rows} == set(HUMAN_LABELS)
    assert all(HUMAN_LABELS[r.human_raw] == r.human for r in rows)


def test_every_row_has_gold_question_and_id(rows) -> None:
    assert all(r.gold.strip() and r.question.strip() for r in rows)
    assert all(r.financebench_id.startswith("financebench_id_") for r in rows)
    assert {r.question_type for r in rows} == {"metrics-generated", "domain-relevant", "novel-generated"}


def test_numeric_golds_get_their_unit_back(rows) -> None:
    # the results files store "1.9%" as 0.019 and "$1577.00" as 1577: the open-source text is used instead
    by_id = {r.financebench_id: r for r in rows if r.file == "gpt-4_oracle"}
    assert by_id["financebench_id_07966"].gold == "1.9%"
    assert by_id["financebench_id_07966"].gold_source == "open_source"
    assert by_id["financebench_id_03029"].gold == "$1577.00"
    # a string gold is what the humans saw, even where upstream later changed it
    assert by_id["financebench_id_00070"].gold.startswith("Yes.")
    assert by_id["financebench_id_00070"].gold_source == "row"


def test_pick_gold_rules() -> None:
    assert _pick_gold("Yes.", "No.") == ("Yes.", "row")
    assert _pick_gold(0.654, "65.4%") == ("65.4%", "open_source")
    assert _pick_gold(1577, "$1577.00") == ("$1577.00", "open_source")
    assert _pick_gold(12.0, "$13.00") == ("12.0", "row")  # inconsistent: keep the number the humans saw
    with pytest.raises(ValueError, match="no gold"):
        _pick_gold(None, None)


def test_agreement_block_on_a_subset(rows) -> None:
    sub = [r for r in rows if r.file == "gpt-4_oracle"][:30]
    human = [r.human for r in sub]
    verdicts = [g.verdict for g in grade_rows(sub, progress=False)]
    assert set(verdicts) <= set(LABELS)
    block = agreement_block(human, verdicts, seed=1)  # the real bootstrap (finrag.core.stats)
    assert block["n"] == 30
    assert sum(map(sum, block["confusion_matrix"])) == 30
    assert -1.0 <= block["kappa"] <= 1.0
    lo, hi = block["kappa_ci"]
    assert lo <= block["kappa"] <= hi
    assert -1.0 <= block["binary_kappa"] <= 1.0
    assert block["kappa"] == pytest.approx(kappa(human, verdicts, labels=LABELS))
    # sanity of the statistic itself: perfect agreement 1, a constant rater 0
    assert kappa(human, human, labels=LABELS) == pytest.approx(1.0)
    assert kappa(human, ["incorrect"] * len(human), labels=LABELS) == pytest.approx(0.0)


def _fast_agreement(human, judge, labels, seed=None):
    """Same keys as finrag.core.stats.agreement without the 2,000-resample bootstrap (keeps this test quick)."""
    k = kappa(human, judge, labels=labels)
    cm = [[sum(h == a and j == b for h, j in zip(human, judge, strict=True)) for b in labels] for a in labels]
    raw = sum(h == j for h, j in zip(human, judge, strict=True)) / len(human)
    return {"n": len(human), "kappa": k, "kappa_ci": [k, k], "balanced_accuracy": float("nan"),
            "raw_agreement": raw, "labels": list(labels), "confusion_matrix": cm}  # fmt: skip


def test_validate_grader_on_one_file(mirror: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import finrag.trust.grader_agreement as gv

    monkeypatch.setattr(gv, "agreement", _fast_agreement)
    monkeypatch.setattr(
        gv, "kappa_bootstrap", lambda a, b, labels=None, **kw: {"kappa": kappa(a, b, labels), "ci": [0, 0]}
    )
    out = validate_grader(mirror, progress=False, files=["gpt-4_sharedStore"])
    m = out["metrics"]
    assert m["n"] == 150 and list(m["per_file"]) == ["gpt-4_sharedStore"]
    assert m["overall"]["n"] == 150 and sum(map(sum, m["overall"]["confusion_matrix"])) == 150
    assert m["n_disagreements"] == len(out["disagreements"])
    assert m["n_disagreements"] == round(150 * (1 - m["overall"]["raw_agreement"]))
    assert sum(m["methods"].values()) == 150
    for d in out["disagreements"]:
        assert d["human"] != d["finrag"]
        assert {"file", "id", "question", "gold", "answer", "human", "finrag", "reason"} <= set(d)
    with pytest.raises(ValueError, match="no labelled"):
        validate_grader(mirror, progress=False, files=["no-such-file"])
