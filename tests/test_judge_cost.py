"""The judge-cost measurement behind the selection rule's CPU bound."""

from __future__ import annotations

import json
from types import SimpleNamespace

from finrag.trust.judge_cost import recorded_model_cost, study_claims, time_judge


def test_study_claims_keep_one_batch_per_answer_with_its_passages():
    answers = [
        SimpleNamespace(text="Revenue was $5.2 billion in 2022. Net income rose to $1.1 billion.",
                        passages=[SimpleNamespace(text="p1", n=1, doc_id="d", pages=[1])]),
        SimpleNamespace(text="", passages=[]),
    ]  # fmt: skip
    batches = study_claims(answers)
    assert len(batches) == 1 and len(batches[0][0]) == 2


def test_time_judge_counts_every_claim_once():
    seen = []

    class Judge:
        def judge_batch(self, claims, passages, ids):
            seen.extend(claims)
            return []

    out = time_judge(Judge(), [(["a", "b"], ["p"]), (["c"], ["q"])])
    assert seen == ["a", "b", "c"] and out["claims_timed"] == 3 and out["cpu_seconds_per_claim"] >= 0


def test_recorded_model_cost_reads_the_calls_of_one_template_and_model(tmp_path):
    rows = [
        {
            "latency_s": 4.0,
            "request": {"template_id": "t@1", "model": "m"},
            "created": "2026-12-07T06:13:16+00:00",
        },
        {
            "latency_s": 6.0,
            "request": {"template_id": "t@1", "model": "m"},
            "created": "2026-12-05T23:59:00+00:00",
        },
        {"latency_s": 99.0, "request": {"template_id": "other@1", "model": "m"}},
    ]
    (tmp_path / "s").mkdir()
    (tmp_path / "s" / "0.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    out = recorded_model_cost(tmp_path, "t@1", "m", threads=2)
    assert out["recorded_calls"] == 2 and out["cpu_seconds_per_claim"] == 10.0
    assert out["recorded_days"] == ["2026-12-05", "2026-12-07"]  # whose machines the figure is
    assert recorded_model_cost(tmp_path, "none@1", "m", 2)["cpu_seconds_per_claim"] is None


def _answer(qid: str, text: str):
    from finrag.core.contracts import Answer

    return Answer(qid=qid, run_id="r", backend="b", model="m", prompt_style="plain", template_id="t@1",
                  context_mode="oracle", passages=[], prompt=[], text=text)  # fmt: skip


def test_measure_warms_up_outside_the_sample_and_refuses_a_sample_without_claims(tmp_path):
    import pytest

    from finrag.core.io import write_jsonl
    from finrag.trust.judge_cost import WARM_UP_CLAIM, JudgeCostParams, measure

    fam = tmp_path / "answers" / "fam"
    fam.mkdir(parents=True)
    write_jsonl(fam / "r.jsonl", [_answer("q1", "Revenue was $5.2 billion in 2022."), _answer("q2", "")])
    p = JudgeCostParams.model_construct(
        answers_dir=str(tmp_path / "answers"), families=["fam"], judges={"j": {}}, model_judges={},
        cache_dir=str(tmp_path), sample_answers=2, seed=0, out="x",
    )  # fmt: skip
    seen: list[str] = []

    class Judge:
        def judge_batch(self, claims, passages, ids):
            seen.extend(claims)
            return []

    out = measure(p, lambda name, **kw: Judge())
    assert seen[0] == WARM_UP_CLAIM and WARM_UP_CLAIM not in seen[1:]
    assert out["judges"]["j"]["claims_timed"] == 1 and out["study_claims"] == 1
    write_jsonl(fam / "r.jsonl", [_answer("q2", "")])
    with pytest.raises(ValueError, match="make no claim"):
        measure(p, lambda name, **kw: Judge())
