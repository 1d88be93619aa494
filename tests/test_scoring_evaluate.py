"""Per-answer scoring records on a hand-built study: every measurement of every answer checked exactly."""

from __future__ import annotations

import itertools
import json

import pytest

from finrag.core.contracts import Answer, Evidence, Passage, Question
from finrag.core.io import read_jsonl, write_jsonl
from finrag.llm.backends.base import Completion
from finrag.score.evaluate import (
    evidence_recall,
    expected_behaviour,
    llm_sample_indices,
    prefix_friendly_order,
    run_scoring,
    score_answers,
    should_decline,
)
from finrag.score.judges.base import make_judge
from finrag.score.record import ScoredAnswer

CAPEX_Q = "What is the FY2018 capital expenditure amount (in USD millions) for 3M?"
FP_Q = "What drove 3M's record net income of $5.2 billion in the second quarter of 2023?"

GOOD = Passage(
    n=1,
    chunk_id="c59",
    doc_id="3M_2018_10K",
    pages=[59],
    text="3M purchases of property, plant and equipment (PP&E) were $1,577 million in 2018 and $1,373 million in 2017.",
)
OTHER = Passage(
    n=1,
    chunk_id="c10",
    doc_id="3M_2018_10K",
    pages=[10],
    text="3M is a diversified technology company with four business segments.",
)
FPP = Passage(
    n=1,
    chunk_id="q2",
    doc_id="3M_2023Q2_10Q",
    pages=[2],
    text="Net income (loss) attributable to 3M was $(6,841) million in the second quarter of 2023.",
)

RIGHT = "3M's purchases of property, plant and equipment were $1,577 million in 2018 [1]."
WRONG_YEAR = "3M's purchases of property, plant and equipment were $1,373 million in 2017 [1]."
REFUSE = "I cannot answer this from the provided passages."
USES_PREMISE = (
    "3M's record net income of $5.2 billion in the second quarter of 2023 was driven by strong sales [1]."
)
FLAGS = (
    "The premise is incorrect: 3M reported a net loss of $6,841 million in the second quarter of 2023 [1], "
    "not $5.2 billion."
)
COT = (
    "Reasoning: the cash flow statement shows purchases of property, plant and equipment of $1,577 million "
    "in 2018 [1].\nAnswer: $1,577 million"
)


def study_questions() -> list[Question]:
    ev = [Evidence(doc_id="3M_2018_10K", page=59)]
    qs = [
        Question(qid=f"fb{i}", question=CAPEX_Q, answer="$1577.00", evidence=ev, doc_ids=["3M_2018_10K"])
        for i in range(1, 5)
    ]
    qs.append(
        Question(
            qid="un1",
            question="What will 3M's capital expenditure be in FY2030?",
            answer="Decline: no filing covers FY2030.",
            kind="trick_unanswerable",
            expected_behaviour="decline",
        )
    )
    qs.append(
        Question(
            qid="fp1",
            question=FP_Q,
            answer="False premise: 3M reported a net loss.",
            kind="trick_false_premise",
            expected_behaviour="flag_false_premise",
            premise_figures=["$5.2 billion"],
            evidence=[Evidence(doc_id="3M_2023Q2_10Q", page=2)],
        )
    )
    return qs


def _a(
    qid,
    text,
    passages,
    run_id="m1-plain-retrieved-r0",
    model="m1",
    style="plain",
    ctx="retrieved",
    rep=0,
    tokens=(100, 20),
):
    return Answer(
        qid=qid,
        run_id=run_id,
        backend="sim",
        model=model,
        prompt_style=style,
        template_id=f"{style}@1",
        context_mode=ctx,
        replicate=rep,
        passages=passages,
        prompt=[],
        text=text,
        usage={"input_tokens": tokens[0], "output_tokens": tokens[1]},
        latency_s=1.5,
        cost_usd=0.002,
    )


def study_answers() -> list[Answer]:
    """m1 retrieved plain (replicate 0): right+grounded, right but ungrounded, grounded but wrong year, refusal,
    unanswerable declined, false premise used; m1 cot; m2 plain (cheaper); m1 oracle; m1 retrieved plain
    replicate 1 (all four FinanceBench answers right and grounded)."""
    return [
        _a("fb1", RIGHT, [GOOD]),
        _a("fb2", RIGHT, [OTHER]),
        _a("fb3", WRONG_YEAR, [GOOD]),
        _a("fb4", REFUSE, [OTHER]),
        _a("un1", "The passages do not provide this information.", [OTHER]),
        _a("fp1", USES_PREMISE, [FPP]),
        _a("fb1", COT, [GOOD], run_id="m1-cot-retrieved", style="cot", tokens=(150, 60)),
        _a("fb1", RIGHT, [GOOD], run_id="m2-plain-retrieved", model="m2", tokens=(50, 10)),
        _a("fp1", FLAGS, [FPP], run_id="m2-plain-retrieved", model="m2", tokens=(50, 10)),
        _a("fb2", RIGHT, [GOOD], run_id="m1-plain-oracle", ctx="oracle"),
        *[_a(f"fb{i}", RIGHT, [GOOD], run_id="m1-plain-retrieved-r1", rep=1) for i in range(1, 5)],
    ]


@pytest.fixture(scope="module")
def records():
    qs = {q.qid: q for q in study_questions()}
    return score_answers(study_answers(), qs, make_judge("numeric"), progress=False)


R1 = "m1-plain-retrieved-r0"


def set_of_sample(*args, **kwargs) -> set[int]:
    return set(llm_sample_indices(*args, **kwargs))


def _rec(records, run_id, qid):
    (r,) = [r for r in records if r.run_id == run_id and r.qid == qid]
    return r


def test_correct_and_grounded(records):
    r = _rec(records, R1, "fb1")
    assert (r.verdict, r.correct, r.unit_mismatch, r.verdict_source) == (
        "correct",
        True,
        False,
        "grader",
    )
    assert (r.n_claims, r.n_supported, r.groundedness, r.fully_grounded) == (1, 1, 1.0, True)
    assert (r.correct_and_grounded, r.correct_or_grounded) == (True, True)
    assert (r.citation_recall, r.citation_precision, r.n_citations) == (1.0, 1.0, 1)
    assert (r.n_offset_citations, r.offset_valid_share) == (0, None)
    assert (r.evidence_recall, r.declined, r.withheld, r.should_decline) == (
        1.0,
        False,
        False,
        False,
    )
    assert (r.generator, r.judge, r.input_tokens, r.output_tokens) == (
        "sim/m1",
        "numeric",
        100,
        20,
    )


def test_correct_but_ungrounded(records):
    r = _rec(records, R1, "fb2")
    assert r.correct is True and r.verdict == "correct"
    assert (r.n_claims, r.n_unsupported, r.groundedness, r.fully_grounded) == (1, 1, 0.0, False)
    assert (r.correct_and_grounded, r.correct_or_grounded) == (False, True)
    assert (r.citation_recall, r.citation_precision) == (0.0, 0.0)
    assert r.evidence_recall == 0.0  # the passage seen is another page of the right report


def test_grounded_but_wrong_year(records):
    r = _rec(records, R1, "fb3")
    assert (r.verdict, r.correct, r.unit_mismatch) == ("incorrect", False, False)
    assert (r.groundedness, r.fully_grounded, r.correct_and_grounded) == (1.0, True, False)
    assert [c.model_dump() for c in r.claims] == [
        {
            "claim_id": "c1",
            "text": "3M's purchases of property, plant and equipment were $1,373 million in 2017.",
            "verdict": "supported",
        }
    ]


def test_refusal(records):
    r = _rec(records, R1, "fb4")
    assert (r.verdict, r.correct, r.declined, r.withheld) == ("refusal", False, True, True)
    assert (r.n_claims, r.groundedness, r.fully_grounded, r.refusal) == (0, None, False, True)
    assert (r.citation_recall, r.citation_precision, r.correct_or_grounded) == (None, None, False)


def test_unanswerable_declined_is_correct(records):
    r = _rec(records, R1, "un1")
    assert (r.should_decline, r.declined, r.correct, r.verdict_source) == (
        True,
        True,
        True,
        "behaviour",
    )
    assert (r.evidence_recall, r.n_evidence_pages, r.false_premise) == (None, 0, None)


def test_false_premise_used_and_flagged(records):
    used = _rec(records, R1, "fp1")
    assert (used.false_premise, used.repeats_premise, used.used_made_up_figure) == (
        "used",
        True,
        True,
    )
    assert (used.correct, used.verdict, used.withheld, used.should_decline) == (
        False,
        "incorrect",
        False,
        True,
    )
    flagged = _rec(records, "m2-plain-retrieved", "fp1")
    assert (flagged.false_premise, flagged.used_made_up_figure) == ("flagged", False)
    assert (flagged.correct, flagged.verdict, flagged.withheld, flagged.declined) == (
        True,
        "correct",
        True,
        False,
    )


def test_cot_graded_on_final_answer_and_claims_from_whole_text(records):
    r = _rec(records, "m1-cot-retrieved", "fb1")
    assert r.final_answer == "$1,577 million"
    assert (r.correct, r.n_claims, r.fully_grounded) == (True, 2, True)
    assert (r.citation_recall, r.citation_recall_cited) == (
        0.5,
        1.0,
    )  # the bare "Answer:" line is uncited


def test_evidence_recall_of_passages():
    q = study_questions()[0]
    assert evidence_recall(q, [OTHER, GOOD]) == 1.0
    assert evidence_recall(q, []) == 0.0
    two = q.model_copy(
        update={"evidence": [*q.evidence, Evidence(doc_id="3M_2018_10K", page=60, aligned_page=61)]}
    )
    p61 = GOOD.model_copy(update={"pages": [61], "chunk_id": "c61"})
    assert evidence_recall(two, [GOOD]) == 0.5
    assert evidence_recall(two, [GOOD, p61]) == 1.0
    assert should_decline(study_questions()[4]) and not should_decline(q)


def test_synthetic_unanswerable_is_to_be_declined():
    q = Question(qid="syn-1", question="¿Cuántas opciones?", answer="No consta en los documentos.",
                 kind="synthetic", question_type="no_respondible")  # fmt: skip
    assert expected_behaviour(q) == "decline" and should_decline(q)
    assert expected_behaviour(q.model_copy(update={"question_type": "tabla"})) == ""
    (r,) = score_answers([_a("syn-1", "No consta en los documentos.", [OTHER])], {"syn-1": q},
                         make_judge("numeric"), progress=False)  # fmt: skip
    assert (r.expected_behaviour, r.declined, r.correct, r.verdict_source) == (
        "decline",
        True,
        True,
        "behaviour",
    )


def test_missing_question_is_an_error():
    with pytest.raises(ValueError, match="not in the questions"):
        score_answers(study_answers()[:1], {}, make_judge("numeric"), progress=False)


class FakeLLM:
    """A judge model that finds every claim unsupported; records its calls."""

    def __init__(self):
        self.calls = 0

    def complete(self, messages, decoding, replicate=0, template_id="", item_id=""):
        self.calls += 1
        user = messages[-1]["content"]
        n = sum(1 for line in user.splitlines() if line[:1].isdigit() and ". " in line[:4])
        text = (
            "\n".join(f"{k}. UNSUPPORTED - not stated" for k in range(1, n + 1))
            if n > 1
            else "UNSUPPORTED - no"
        )
        usage = {"input_tokens": 40, "output_tokens": 5}
        return Completion(text=text, usage=usage, latency_s=0.25, cost_usd=0.01), f"k{self.calls}", False


def test_llm_judge_on_a_stratified_sample():
    answers = study_answers()
    idx = set_of_sample(answers, 1, seed=3)
    assert sorted(answers[i].run_id for i in idx) == sorted(
        [
            "m1-plain-retrieved-r0",
            "m1-plain-retrieved-r1",
            "m2-plain-retrieved",
            "m1-cot-retrieved",
            "m1-plain-oracle",
        ]
    )
    assert idx == set_of_sample(answers, 1, seed=3)
    assert set_of_sample(answers, None) == set(range(len(answers)))
    # a run's draw does not move when a run is added, and grows without redrawing when the size is raised
    assert idx <= set_of_sample(answers, 2, seed=3)
    fewer = [a for a in answers if a.run_id != "m1-cot-retrieved"]
    kept = {(fewer[i].run_id, fewer[i].qid) for i in set_of_sample(fewer, 1, seed=3)}
    assert kept == {
        (answers[i].run_id, answers[i].qid) for i in idx if answers[i].run_id != "m1-cot-retrieved"
    }
    llm = FakeLLM()
    qs = {q.qid: q for q in study_questions()}
    recs = score_answers(
        answers, qs, make_judge("numeric"), make_judge("llm", llm=llm), 1, llm_seed=3, progress=False
    )
    sampled = [r for r in recs if r.llm_sampled]
    assert len(sampled) == 5 and all(r.llm_judge == "llm" for r in sampled)
    for r in sampled:
        assert r.llm_n_claims == r.n_claims  # the same claims for both judges
        assert r.llm_fully_grounded is False
        assert r.llm_groundedness == (0.0 if r.n_claims else None)
    assert all(r.llm_groundedness is None and r.llm_judge is None for r in recs if not r.llm_sampled)
    assert llm.calls == sum(1 for r in sampled if r.n_claims) >= 3  # one batched call per answer with claims


def test_llm_judge_sample_by_question_covers_every_run_and_groups_shared_passages():
    """A question-level sample judges every run's answer to the same drawn questions, only of the given kinds;
    raising the size keeps the questions drawn before; the sampled answers are judged first, grouped by the
    passages they saw, and the records still come back in input order."""
    answers = study_answers()
    qs = {q.qid: q for q in study_questions()}
    kind_of = lambda qid: qs[qid].kind  # noqa: E731
    one = set_of_sample(answers, None, seed=3, questions=1, kind_of=kind_of, kinds=["financebench"])
    (qid,) = {answers[i].qid for i in one}
    assert qid.startswith("fb") and one == {i for i, a in enumerate(answers) if a.qid == qid}
    two = set_of_sample(answers, None, seed=3, questions=2, kind_of=kind_of, kinds=["financebench"])
    assert one < two and len({answers[i].qid for i in two}) == 2
    every_kind = set_of_sample(answers, None, seed=3, questions=1, kind_of=kind_of)
    assert {qs[answers[i].qid].kind for i in every_kind} == {q.kind for q in qs.values()}

    ranks = llm_sample_indices(answers, None, seed=3, questions=2, kind_of=kind_of, kinds=["financebench"])
    order = prefix_friendly_order(answers, ranks)
    assert sorted(order) == list(range(len(answers)))
    head = [(answers[i].qid, answers[i].context_mode) for i in order[: len(two)]]
    assert set(order[: len(two)]) == two
    assert [ranks[i] for i in order[: len(two)]] == sorted(ranks.values())  # the first-drawn question first
    assert len(set(head)) == len([k for k, _ in itertools.groupby(head)])  # each question's passages together

    seen = []

    class OrderLLM(FakeLLM):
        def complete(self, messages, *args, **kwargs):
            seen.append(messages[-1]["content"])
            return super().complete(messages, *args, **kwargs)

    recs = score_answers(
        answers, qs, make_judge("numeric"), make_judge("llm", llm=OrderLLM()), None, llm_seed=3,
        llm_sample_questions=2, llm_sample_kinds=["financebench"], progress=False,
    )  # fmt: skip
    assert [(r.run_id, r.qid) for r in recs] == [(a.run_id, a.qid) for a in answers]
    assert {i for i, r in enumerate(recs) if r.llm_sampled} == two
    blocks = [s.split("\n\nClaim")[0] for s in seen]
    assert blocks == sorted(blocks, key=blocks.index)  # a passage block, once left, never comes back


def test_llm_judge_table_compares_both_judges_on_the_same_claims():
    from finrag.score.tables import build_tables, llm_judge_table

    answers = study_answers()
    qs = {q.qid: q for q in study_questions()}
    recs = score_answers(
        answers, qs, make_judge("numeric"), make_judge("llm", llm=FakeLLM()), 1, llm_seed=3, progress=False
    )
    t = llm_judge_table(recs)
    sampled = [r for r in recs if r.llm_sampled and r.llm_n_claims]
    assert t["answers"] == len(sampled) and t["judges"] == [["numeric"], ["llm"]]
    assert sum(row["n"] for row in t["series"]) == len(sampled)
    assert all(row["llm_fully_grounded"]["k"] == 0 for row in t["series"])  # the fake LLM supports nothing
    numeric_fg = sum(1 for r in sampled if r.fully_grounded)
    assert sum(row["primary_fully_grounded"]["k"] for row in t["series"]) == numeric_fg
    claims = t["claims"]
    assert claims["n"] == sum(r.n_claims for r in sampled) and claims["ci_unit"] == "group"
    assert claims["constant_rater"] == "second"  # all "not supported": no interval pretends to precision
    assert llm_judge_table([r.model_copy(update={"llm_sampled": False}) for r in recs]) is None
    assert "llm_judge" not in build_tables(score_answers(answers, qs, make_judge("numeric"), progress=False))


def test_run_scoring_end_to_end(tmp_path):
    answers = study_answers()
    f1, f2 = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    f1.write_text("".join(a.model_dump_json() + "\n" for a in answers[:7]))
    f2.write_text("".join(a.model_dump_json() + "\n" for a in answers[7:]))
    llm = FakeLLM()

    def factory(name, **params):
        return make_judge(name, llm=llm if name == "llm" else None, **params)

    params = {
        "judge": {"name": "numeric", "params": {}},
        "llm_judge": {"name": "llm", "params": {"batch_size": 8}, "sample": {"per_run": 1, "seed": 3}},
        "main_kinds": ["financebench"],
        "correlation": {"n_resamples": 200},
        "progress": False,
    }
    out = run_scoring([f1, f2], study_questions(), params, factory)
    assert len(out["records"]) == len(answers)
    # records and tables JSON-ready: no NaN anywhere
    json.dumps({**out, "records": [r.as_json() for r in out["records"]]}, allow_nan=False)
    judges = out["tables"]["cost"]["judges"]
    assert [j["judge"] for j in judges] == ["numeric", "llm"]
    assert judges[0]["answers"] == len(answers) and judges[0]["calls"] == 0
    assert judges[0]["claims"] == sum(r.n_claims for r in out["records"])
    assert (judges[1]["answers"], judges[1]["calls"]) == (5, llm.calls)
    assert not {"seconds", "cache_hits", "new_cost_usd"} & set(judges[1])  # differ between record and replay
    assert judges[1]["input_tokens"] == 40 * llm.calls and judges[1]["cost_usd"] == pytest.approx(
        0.01 * llm.calls
    )
    assert judges[1]["model_seconds"] == round(0.25 * llm.calls, 1)
    assert out["tables"]["meta"]["llm_judges"] == ["llm"]
    bad = tmp_path / "bad.jsonl"
    bad.write_text(answers[0].model_dump_json() + "\n{not json\n")
    with pytest.raises(ValueError, match="bad.jsonl:2"):
        run_scoring([bad], study_questions(), params, factory)


def test_generation_summary_per_family_from_saved_answers():
    """Calls, tokens, seconds and cost per run and family come from the answers (so a replay reproduces them)."""
    from finrag.generate.run import generation_summary

    qwen = [
        _a("fb1", RIGHT, [GOOD], run_id="m1-plain-retrieved"),
        _a("fb1", RIGHT, [GOOD], run_id="m1-plain-oracle", ctx="oracle"),
        _a("fb2", RIGHT, [GOOD], run_id="m1-plain-retrieved", tokens=(300, 10)),
    ]
    extractive = [_a("fb1", RIGHT, [GOOD], run_id="ex-retrieved", tokens=(0, 0))]
    got = generation_summary({"qwen": qwen, "extractive": extractive})["families"]
    assert set(got) == {"qwen", "extractive"}
    assert got["qwen"]["runs"]["m1-plain-retrieved"] == {
        "answers": 2, "input_tokens": 400, "output_tokens": 30, "model_seconds": 3.0, "cost_usd": 0.004,
        "cut_at_max_tokens": 0,
    }  # fmt: skip
    total = got["qwen"]["total"]
    assert total["answers"] == 3 and total["input_tokens"] == 500 and total["model_seconds"] == 4.5
    assert total["calls_per_hour"] == 2400.0


def test_run_scoring_takes_answers_already_read(tmp_path):
    """The stage reads each answer file once and hands the answers over: same records as from the files."""
    answers = study_answers()
    f = tmp_path / "a.jsonl"
    f.write_text("".join(a.model_dump_json() + "\n" for a in answers))
    params = {"judge": {"name": "numeric", "params": {}}, "main_kinds": ["financebench"], "progress": False,
              "correlation": {"n_resamples": 50}}  # fmt: skip
    from_files = run_scoring([f], study_questions(), params)
    from_answers = run_scoring(answers, study_questions(), params)
    assert [r.as_json() for r in from_answers["records"]] == [r.as_json() for r in from_files["records"]]


def test_run_scoring_asks_the_llm_grader_only_where_unsure_and_counts_it():
    asked: list[str] = []

    def grader(gold, answer, question):
        asked.append(answer)
        return "incorrect"

    industry = Question(
        qid="fb9",
        question="What industry does AMCOR primarily operate in?",
        answer="Amcor is a global leader in packaging production for various use cases.",
        evidence=[Evidence(doc_id="3M_2018_10K", page=59)],
        doc_ids=["3M_2018_10K"],
    )
    unsure = _a(
        "fb9", "Amcor is a global packaging company [1].", [OTHER], run_id="m1-plain-oracle", ctx="oracle"
    )
    answers, questions = [*study_answers(), unsure], [*study_questions(), industry]
    params = {"judge": {"name": "numeric", "params": {}}, "main_kinds": ["financebench"], "progress": False}
    plain = run_scoring(answers, questions, params)
    out = run_scoring(answers, questions, params, llm_grader=grader)
    assert [r.qid for r in plain["records"] if r.grade_uncertain] == ["fb9"]
    assert asked == ["Amcor is a global packaging company."]
    changed = [r for r in out["records"] if r.grade_method == "llm"]
    assert [(r.qid, r.verdict) for r in changed] == [("fb9", "incorrect")]
    assert sum(row["llm_grades"] for row in out["tables"]["runs"]) == 1
    for before, after in zip(plain["records"], out["records"], strict=True):
        if before.qid != "fb9":
            assert after.verdict == before.verdict


class SplitLLM:
    """A claim splitter model: each answer sentence with a figure becomes one claim; a refusal becomes NONE; an
    answer that shows its reasoning gets an unreadable reply (the deterministic splitter takes over and it is counted)."""

    def __init__(self):
        self.calls = 0

    def complete(self, messages, decoding, replicate=0, template_id="", item_id=""):
        self.calls += 1
        answer = messages[-1]["content"].split("Answer:\n", 1)[1].split("\n\nWrite the claims")[0]
        if "Reasoning" in answer:
            text = "Sure, here are the claims."
        else:
            lines = [
                s.strip() for s in answer.replace("\n", " ").split(". ") if any(ch.isdigit() for ch in s)
            ]
            text = "\n".join(f"{i}. {s}" for i, s in enumerate(lines, 1)) or "NONE"
        usage = {"input_tokens": 30, "output_tokens": 12}
        return Completion(text=text, usage=usage, latency_s=0.5, cost_usd=0.0), f"s{self.calls}", False


def _score_with_splitter(splitter_params, splitter=None, llm=None):
    """run_scoring on the study with the fake judge model (FakeLLM) and the fake splitter model (SplitLLM)."""
    llm = llm or FakeLLM()

    def factory(name, **params):
        return make_judge(name, llm=llm if name == "llm" else None, **params)

    params = {
        "judge": {"name": "numeric", "params": {}},
        "llm_judge": {"name": "llm", "params": {"batch_size": 1}, "sample": {"per_run": 1, "seed": 3}},
        "llm_splitter": splitter_params,
        "main_kinds": ["financebench"],
        "correlation": {"n_resamples": 50},
        "progress": False,
    }
    return run_scoring(study_answers(), study_questions(), params, factory, llm_splitter_llm=splitter)


def test_llm_claim_splitter_beside_the_deterministic_one_on_the_llm_sample():
    """With the LLM splitter on, every answer in the LLM judge's sample is split a second way and both judges
    judge those claims too; the splitter table compares the two splitters on the same answers, and the splitter's
    calls are costed beside the judges'."""
    splitter = SplitLLM()
    out = _score_with_splitter({"decoding": {"temperature": 0.0, "max_tokens": 256}}, splitter)
    recs = out["records"]
    split = [r for r in recs if r.llm_split]
    assert {id(r) for r in split} == {id(r) for r in recs if r.llm_sampled} and splitter.calls == len(split)
    for r in split:
        s = r.llm_split
        assert s.n_claims == len(s.claims)
        assert s.llm_fully_grounded is False  # the fake judge supports nothing
        if s.fell_back:  # the deterministic splitter's claims, so the numeric verdict is the same
            assert (s.n_claims, s.fully_grounded) == (r.n_claims, r.fully_grounded)
    assert all(r.llm_split is None for r in recs if not r.llm_sampled)
    t = out["tables"]["splitters"]
    assert [row["splitter"] for row in t["splitters"]] == ["deterministic", "llm"]
    assert t["answers"] == len(split) and t["llm_fell_back"] == sum(r.llm_split.fell_back for r in split)
    assert 0 < t["llm_fell_back"] < len(split)  # both paths taken
    det, by_llm = t["splitters"]
    assert det["claims"] == sum(r.n_claims for r in split)
    assert by_llm["claims"] == sum(r.llm_split.n_claims for r in split)
    assert by_llm["llm_fully_grounded"]["k"] == 0
    assert t["same_verdict"]["primary"]["n"] == t["answers_with_claims_under_both"]
    cost = out["tables"]["cost"]["judges"][-1]
    assert cost["judge"] == "llm claim splitter" and cost["calls"] == splitter.calls
    assert cost["input_tokens"] == 30 * splitter.calls
    # off: no splitter table, no record field set
    plain = _score_with_splitter(None)
    assert "splitters" not in plain["tables"] and all(
        "llm_split" not in r.as_json() for r in plain["records"]
    )


def test_a_record_reads_back_as_it_was_written(tmp_path):
    """records.jsonl lines are `as_json()` with sorted keys: read back as ScoredAnswer and written again, the bytes
    are the same, and a field that exists only under a setting stays absent (citations off, LLM splitter off) or
    null (the splitter on, the answer outside the LLM judge's sample) as it was."""
    qs = {q.qid: q for q in study_questions()}
    no_citations = score_answers(study_answers(), qs, make_judge("numeric"), citations=False, progress=False)
    with_split = _score_with_splitter({"decoding": {"max_tokens": 256}, "llm_judge": True}, SplitLLM())[
        "records"
    ]
    assert not {"citation_recall", "offset_valid_share", "llm_split"} & set(no_citations[0].as_json())
    assert {r.as_json()["llm_split"] is None for r in with_split} == {True, False}
    assert {
        "llm_verdict" in c for r in with_split if r.llm_split for c in r.as_json()["llm_split"]["claims"]
    } == {True}
    first, again = tmp_path / "first.jsonl", tmp_path / "again.jsonl"
    write_jsonl(first, (r.as_json() for r in [*no_citations, *with_split]))
    write_jsonl(again, (r.as_json() for r in read_jsonl(first, ScoredAnswer)))
    assert again.read_bytes() == first.read_bytes()


def test_llm_splitter_claims_judged_by_the_numeric_judge_only_when_asked():
    llm = FakeLLM()
    out = _score_with_splitter({"decoding": {"max_tokens": 256}, "llm_judge": False}, SplitLLM(), llm)
    split = [r.llm_split for r in out["records"] if r.llm_split]
    assert split and all(s.llm_fully_grounded is None for s in split if s.n_claims)
    calls_with_llm_off = llm.calls
    t = out["tables"]["splitters"]
    assert t["llm_judged"] is False and set(t["same_verdict"]) == {"primary"}
    assert t["splitters"][1]["llm_fully_grounded"] is None and t["splitters"][0]["llm_fully_grounded"]
    llm.calls = 0
    _score_with_splitter({"llm_judge": True}, SplitLLM(), llm)
    assert llm.calls > calls_with_llm_off  # the LLM judge judged the split claims too


def test_the_llm_sample_can_be_held_to_the_templates_whose_calls_are_recorded():
    answers = study_answers()
    base = llm_sample_indices(answers, None, 0, questions=2, kind_of=lambda q: "fb", kinds=None)
    v2 = [a.model_copy(update={"template_id": "plain@2", "run_id": a.run_id + "-v2"}) for a in answers]
    held = llm_sample_indices(
        answers + v2,
        None,
        0,
        questions=2,
        kind_of=lambda q: "fb",
        templates=sorted({a.template_id for a in answers}),
    )
    assert held == base  # the added answers of a new template leave the sample exactly as it was
    assert all(i < len(answers) for i in held)
    assert llm_sample_indices(answers + v2, None, templates=["plain@2"]) == dict.fromkeys(
        range(len(answers), 2 * len(answers)), 0
    )
