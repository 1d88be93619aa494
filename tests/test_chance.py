"""The chance-support check: figure claims judged on another question's passages."""

from __future__ import annotations

from finrag.core.contracts import Answer, Passage
from finrag.score.chance import mismatched_passages_check
from finrag.score.judges.numeric import NumericJudge


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


class _CountingJudge(NumericJudge):
    def __init__(self):
        super().__init__()
        self.judged: list[str] = []

    def judge(self, claim, passages, claim_id="c1"):
        self.judged.append(claim)
        return super().judge(claim, passages, claim_id=claim_id)


def test_memo_judge_judges_each_claim_on_the_same_passages_once_and_keeps_verdicts_and_ids():
    from finrag.score.judges.base import MemoJudge

    inner = _CountingJudge()
    memo = MemoJudge(inner)
    claims = [
        "Net sales were $1,577 million.",
        "Net sales were $9,999 million.",
        "Net sales were $1,577 million.",
    ]
    passages = ["Net sales were $1,577 million in 2018."]
    first = memo.judge_batch(claims, passages, claim_ids=["a", "b", "c"])
    assert [v.verdict for v in first] == [v.verdict for v in NumericJudge().judge_batch(claims, passages)]
    assert [v.claim_id for v in first] == ["a", "b", "c"]
    assert len(inner.judged) == 2  # the repeated claim is judged once
    again = memo.judge_batch(claims[:1], passages, claim_ids=["z"])
    assert len(inner.judged) == 2 and again[0].claim_id == "z" and again[0].verdict == first[0].verdict
    memo.judge_batch(claims[:1], ["Another passage: $1,577 million."])
    assert len(inner.judged) == 3  # other passages: judged again
    assert memo.name == inner.name


def test_chance_check_through_a_memo_judge_gives_the_same_counts():
    from finrag.score.judges.base import MemoJudge

    answers = [
        _answer("q1", "Net sales were $1,577 million in 2018.", "Net sales were $1,577 million in 2018."),
        _answer("q2", "Operating income was $612 million.", "Operating income was $612 million in 2019."),
    ]
    assert mismatched_passages_check(
        answers, MemoJudge(NumericJudge()), offset=1
    ) == mismatched_passages_check(answers, NumericJudge(), offset=1)
