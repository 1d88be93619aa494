"""The chance-support check: figure claims judged on another question's passages."""

from __future__ import annotations

from finrag.contracts import Answer, Passage
from finrag.scoring.chance import mismatched_passages_check
from finrag.scoring.judge import NumericJudge


def _answer(qid: str, text: str, passage: str) -> Answer:
    p = Passage(n=1, chunk_id=f"c-{qid}", doc_id="D", pages=[1], text=passage)
    return Answer(qid=qid, run_id="r", backend="b", model="m", prompt_style="plain", template_id="t",
                  context_mode="retrieved", passages=[p], prompt=[], text=text)  # fmt: skip


def test_own_passages_support_and_other_passages_do_not():
    answers = [
        _answer("q1", "Net sales were $1,577 million in 2018.", "Net sales were $1,577 million in 2018."),
        _answer(
            "q2", "Operating income was $612 million in 2019.", "Operating income was $612 million in 2019."
        ),
        _answer("q3", "I cannot answer this.", "Nothing here."),  # no figure claim: not counted
    ]
    out = mismatched_passages_check(answers, NumericJudge(), offset=1)
    assert out["n_claims"] == 2
    assert out["own_passages"]["supported"] == 2
    assert out["other_question_passages"]["supported"] == 0
    assert out["other_question_passages"]["by_match"] == {"unsupported": 2}


def test_a_claim_its_wrong_passages_happen_to_support_is_counted():
    same = "Capital expenditure was $1,577 million."
    answers = [_answer("q1", same, same), _answer("q2", same, same)]
    out = mismatched_passages_check(answers, NumericJudge())
    assert out["other_question_passages"]["supported"] == 2 and out["other_question_passages"]["p"] == 1.0
