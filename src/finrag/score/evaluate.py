"""Score every generated answer four separate ways: correctness, groundedness, citations, declining.

The four measurements are kept apart on purpose (an answer can be right but not found in its passages, or faithful
to a passage from the wrong year); the tables combine them afterwards (finrag.score.tables).

One record per answer (`finrag.score.record.ScoredAnswer`, a line of results/scores/records.jsonl):

- correctness: the deterministic grader on the final answer (`extract_answer`: the text after "Answer:" for the
  cot style). Trick questions that should not be answered are scored on behaviour instead: an unanswerable
  question is right when the answer declines; a false-premise question when it flags the premise (a plain
  decline is recorded but is not the expected behaviour). `correct` means "did what the question called for";
  `verdict_source` says which rule applied.
- declining: `declined` = the final answer opens with a refusal (`is_refusal`) or uses the decline prompt's phrase
  (`is_decline`); `withheld` = declined, or flagged a false premise; `should_decline` = the question is
  unanswerable or built on a false premise.
- groundedness: claims of the whole text (the reasoning of a cot answer makes claims too) judged against the
  passages the model saw; an answer without claims has groundedness None and is not fully grounded. An optional
  second judge (the LLM judge, costly) scores a stratified sample of answers per run on the same claims.
- citations: ALCE citation recall / precision with the primary judge; backend offset citations verified where
  the answer has them.
- evidence recall of the passages seen: share of the question's evidence pages covered by the passages'
  (doc_id, pages), via `retrieval_eval.question_metrics` (None for questions without evidence).
"""

from __future__ import annotations

import logging
import re
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, Literal, TypeVar, cast

from tqdm import tqdm

from finrag.core.contracts import Answer, Question
from finrag.core.io import read_jsonl
from finrag.core.sampling import per_stratum_ranks, per_stratum_sample
from finrag.core.stats import DEFAULT_SEED
from finrag.llm.prompts.parse import extract_answer
from finrag.retrieve.metrics import evidence_pages, evidence_recall
from finrag.score.citations import score_answer_citations
from finrag.score.claims import score_answer, split_claims
from finrag.score.declining import declined as is_declined
from finrag.score.declining import false_premise_response, repeats_premise
from finrag.score.flags import answer_flags
from finrag.score.grader import grade
from finrag.score.judge_trust import judge_trust, selected_judge
from finrag.score.record import GradeMethod, JudgedClaim, LLMSplitScore, ScoredAnswer, SplitClaim

C = TypeVar("C", bound=JudgedClaim)

log = logging.getLogger(__name__)

__all__ = [
    "JudgeMeter",
    "evidence_recall",
    "expected_behaviour",
    "load_answers",
    "run_scoring",
    "score_answer_record",
    "score_answers",
    "series_of",
    "should_decline",
    "write_plots",
]

ANSWER_BEHAVIOURS = ("", "answer")
DECLINE_BEHAVIOURS = ("decline", "flag_false_premise")
REPLICATE_SUFFIX = (
    r"(?<=-r)\d+$"  # run ids "{tag}-{style}-{context}-r{replicate}": the replicates of one series
)


def series_of(run_id: str, pattern: str = REPLICATE_SUFFIX) -> str:
    """The run id without its replicate number ("qwen-plain-retrieved-r2" -> "qwen-plain-retrieved-r*"): runs
    that differ only in the replicate are samples of one system; a run id without the suffix is its own series
    (a temperature-0 run and a sampled series of the same prompt stay apart)."""
    return re.sub(pattern, "*", run_id) if pattern else run_id


def generator_name(backend: str, model: str) -> str:
    return f"{backend}/{model}"


def expected_behaviour(q: Question) -> str:
    """The question's expected behaviour; synthetic unanswerable questions (question_type "no_respondible",
    whose contract record leaves expected_behaviour empty) are to be declined."""
    if q.expected_behaviour:
        return q.expected_behaviour
    if q.kind == "synthetic" and q.question_type == "no_respondible":
        return "decline"
    return ""


def should_decline(q: Question) -> bool:
    """Unanswerable and false-premise questions should not be answered as asked."""
    return expected_behaviour(q) in DECLINE_BEHAVIOURS


def _judged_claims(scored: Mapping, claim_type: type[C]) -> list[C]:
    """score_answer's claims as typed records (`SplitClaim` where the LLM judge's verdict joins them later)."""
    return [
        claim_type(claim_id=c["claim_id"], text=c["text"], verdict=c["verdict"]) for c in scored["claims"]
    ]


def _llm_split(a: Answer, llm_splitter: Callable, judge, llm_judge=None) -> LLMSplitScore:
    """The answer's claims as the LLM splitter writes them, judged by the primary judge (and the LLM judge)."""
    split, info = llm_splitter(a)
    primary = score_answer(a.text, a.passages, judge, claims=split)
    out = LLMSplitScore(
        fell_back=info.get("splitter") != "llm",
        n_claims=primary["n_claims"],
        fully_grounded=primary["fully_grounded"],
        groundedness=primary["groundedness"],
        llm_fully_grounded=None,
        llm_groundedness=None,
        claims=_judged_claims(primary, SplitClaim),
    )
    if llm_judge is not None:
        by_llm = score_answer(a.text, a.passages, llm_judge, claims=split)
        out.llm_fully_grounded, out.llm_groundedness = by_llm["fully_grounded"], by_llm["groundedness"]
        for claim, v in zip(out.claims, by_llm["claims"], strict=True):
            claim.llm_verdict = v["verdict"]
    return out


def score_answer_record(
    a: Answer,
    q: Question,
    judge,
    llm_judge=None,
    *,
    llm_splitter: Callable | None = None,
    split_judged_by_llm: bool = True,
    citations: bool = True,
    grader_params: Mapping | None = None,
    replicate_suffix: str = REPLICATE_SUFFIX,
) -> ScoredAnswer:
    """The record of one answer (see the module docstring); `llm_judge` given = this answer is in its sample.
    `llm_splitter(answer) -> (claims, info)` (with the LLM judge's sample only): the answer split into claims by
    an LLM as well, those claims judged by the primary judge (and by the LLM judge with `split_judged_by_llm`), so
    the deterministic splitter has a measured rival."""
    final = extract_answer(a.text)
    declined = is_declined(final)
    behaviour = expected_behaviour(q)
    # 1. correctness
    fp = rep = None
    if behaviour == "flag_false_premise":
        fp = false_premise_response(final, q.premise_figures)
        rep = repeats_premise(final, q.premise_figures) if q.premise_figures else None
    source: Literal["grader", "behaviour"]
    grade_method: GradeMethod
    if behaviour in ANSWER_BEHAVIOURS:
        g = grade(q.answer, final, q.question, **dict(grader_params or {}))
        verdict, source = g.verdict, "grader"
        unit_mismatch, grade_method, grade_detail = g.unit_mismatch, g.method, g.detail
        grade_uncertain = g.uncertain  # near the content-word threshold or a soft yes/no
        correct = (
            verdict == "correct" and not grade_uncertain
        )  # strict: uncertain is its own outcome, never correct
        earlier = grade(
            q.answer, final, q.question, **{**dict(grader_params or {}), "strict": False, "llm_grader": None}
        )
        earlier_correct = earlier.verdict == "correct"  # the grader and its use before 2026-12-07
    else:
        ok = declined if behaviour == "decline" else fp == "flagged"
        verdict = "correct" if ok else ("refusal" if declined else "incorrect")
        source = "behaviour"
        unit_mismatch, grade_method, grade_detail, grade_uncertain = False, "behaviour", "", False
        correct = earlier_correct = ok
    # 2. groundedness (claims split once, shared by both judges)
    claims = split_claims(a.text)
    s = score_answer(a.text, a.passages, judge, claims=claims)
    flags = answer_flags(
        a.text,
        messages=a.prompt,
        finish_reason=a.finish_reason,
        strictly_correct=correct,
    )
    ls = score_answer(a.text, a.passages, llm_judge, claims=claims) if llm_judge is not None else None
    # 4. (the passages seen, usage) goes in with the rest; the LLM split and 3. (citations) are set below, only when
    # scored: a field never set stays out of the record's JSON (ScoredAnswer.as_json), so records stay as they were
    rec = ScoredAnswer(
        qid=a.qid,
        run_id=a.run_id,
        series=series_of(a.run_id, replicate_suffix),
        backend=a.backend,
        model=a.model,
        generator=generator_name(a.backend, a.model),
        prompt_style=a.prompt_style,
        template_id=a.template_id,
        context_mode=a.context_mode,
        replicate=a.replicate,
        kind=q.kind,
        question_type=q.question_type,
        expected_behaviour=behaviour,
        should_decline=should_decline(q),
        final_answer=final,
        declined=declined,
        unit_mismatch=unit_mismatch,
        grade_method=grade_method,
        grade_detail=grade_detail,
        grade_uncertain=grade_uncertain,
        grade_outcome="uncertain" if grade_uncertain and source == "grader" else verdict,
        verdict=verdict,
        verdict_source=source,
        correct=correct,
        earlier_correct=earlier_correct,
        flags=flags,
        false_premise=fp,
        repeats_premise=rep,
        used_made_up_figure=(fp == "used" and bool(rep)) if fp is not None else None,
        withheld=declined or fp == "flagged",
        judge=s["judge"],
        n_claims=s["n_claims"],
        n_supported=s["n_supported"],
        n_unsupported=s["n_unsupported"],
        n_contradicted=s["n_contradicted"],
        groundedness=s["groundedness"],
        fully_grounded=s["fully_grounded"],
        refusal=s["refusal"],
        claims=_judged_claims(s, JudgedClaim),
        correct_and_grounded=correct and s["fully_grounded"] and not flags,
        correct_or_grounded=correct or s["fully_grounded"],
        llm_judge=ls["judge"] if ls else None,
        llm_sampled=ls is not None,
        llm_groundedness=ls["groundedness"] if ls else None,
        llm_fully_grounded=ls["fully_grounded"] if ls else None,
        llm_n_claims=ls["n_claims"] if ls else None,
        llm_claims=_judged_claims(ls, JudgedClaim) if ls else None,
        evidence_recall=evidence_recall(q, a.passages),
        n_evidence_pages=len(evidence_pages(q)),
        n_passages=len(a.passages),
        input_tokens=int(a.usage.get("input_tokens", 0) or 0),
        output_tokens=int(a.usage.get("output_tokens", 0) or 0),
        latency_s=float(a.latency_s),
        cost_usd=float(a.cost_usd),
        cut_at_max_tokens=a.finish_reason == "length",
    )
    if llm_splitter is not None:
        by_llm = llm_judge if split_judged_by_llm else None
        rec.llm_split = _llm_split(a, llm_splitter, judge, by_llm) if llm_judge is not None else None
    # 3. citations
    if citations:
        c = score_answer_citations(a, judge)
        off = c["offsets"]
        rec.citation_recall = c["citation_recall"]
        rec.citation_recall_cited = c["citation_recall_cited"]
        rec.citation_precision = c["citation_precision"]
        rec.n_citations = c["n_citations"]
        rec.n_invalid_citations = c["n_invalid_citations"]
        rec.n_cited_sentences = c["n_cited_sentences"]
        rec.n_offset_citations = off["n_with_offsets"]
        rec.offset_valid_share = off["valid_share"]
    return rec


def llm_sample_indices(
    answers: Sequence[Answer],
    per_run: int | None,
    seed: int = DEFAULT_SEED,
    *,
    questions: int | None = None,
    kind_of: Callable[[str], str] | None = None,
    kinds: Sequence[str] | None = None,
    templates: Sequence[str] | None = None,
) -> dict[int, int]:
    """The answers the LLM judge scores, drawn with a fixed seed so the sample replays: {answer index: draw rank}.

    `templates`: only answers of these prompt templates (None = all) are drawn from, so families added later (a
    new prompt version) leave the sample, and its recorded calls, as they were.

    `per_run`: up to that many answers per run_id (None = all); a run's sample stays the same when other runs
    are added and grows without redrawing when `per_run` is raised.
    `questions`: instead, every answer to that many questions per kind (`kind_of(qid)`; only `kinds`, None = all),
    the same questions for every run. Runs are then compared on the same questions, and the judge's calls for one
    question's passages share a prompt prefix that the local model keeps in its KV cache (much cheaper on CPU).
    Raising `questions` keeps every question drawn before; the rank is the question's place in the draw, so a run
    judged in rank order completes the smaller samples first.
    """
    idx = list(range(len(answers)))
    if questions is not None:
        kind = kind_of or (lambda qid: "all")
        qids = sorted({a.qid for a in answers if kinds is None or kind(a.qid) in kinds})
        rank = dict(zip(qids, per_stratum_ranks(qids, kind, seed), strict=True))
        return {
            i: rank[answers[i].qid]
            for i in idx
            if rank.get(answers[i].qid, questions) < questions
            and (templates is None or answers[i].template_id in templates)
        }
    if templates is not None:
        idx = [i for i in idx if answers[i].template_id in templates]
    if per_run is None:
        return dict.fromkeys(idx, 0)
    drawn = per_stratum_sample(idx, key=lambda i: answers[i].run_id, per_stratum=int(per_run), seed=seed)
    return dict.fromkeys(drawn, 0)


def prefix_friendly_order(answers: Sequence[Answer], first: Mapping[int, int]) -> list[int]:
    """All indices: those in `first` by draw rank, grouped by question and context (answers that saw the same
    passages follow each other, so an LLM judge re-reads no passage the model already has in its KV cache), then
    the rest in input order."""

    def key(i: int) -> tuple:
        if i in first:
            return (0, first[i], answers[i].qid, answers[i].context_mode, i)
        return (1, 0, "", "", i)

    return sorted(range(len(answers)), key=key)


def score_answers(
    answers: Sequence[Answer],
    questions_by_id: Mapping[str, Question],
    judge,
    llm_judge=None,
    llm_sample: int | None = None,
    *,
    llm_seed: int = DEFAULT_SEED,
    llm_sample_questions: int | None = None,
    llm_sample_kinds: Sequence[str] | None = None,
    llm_sample_templates: Sequence[str] | None = None,
    llm_splitter: Callable | None = None,
    split_judged_by_llm: bool = True,
    citations: bool = True,
    grader_params: Mapping | None = None,
    replicate_suffix: str = REPLICATE_SUFFIX,
    progress: bool = True,
) -> list[ScoredAnswer]:
    """One record per answer, in input order. `llm_sample`: answers per run_id the LLM judge scores (None = all);
    `llm_sample_questions`: instead, all answers to that many questions per kind (see llm_sample_indices).
    Sampled answers are scored first, grouped by the passages they saw (prefix_friendly_order)."""
    missing = sorted({a.qid for a in answers if a.qid not in questions_by_id})
    if missing:
        raise ValueError(f"{len(missing)} answered question(s) not in the questions: {missing[:5]}")
    sampled = (
        llm_sample_indices(
            answers,
            llm_sample,
            llm_seed,
            questions=llm_sample_questions,
            kind_of=lambda qid: questions_by_id[qid].kind,
            kinds=llm_sample_kinds,
            templates=llm_sample_templates,
        )
        if llm_judge is not None
        else {}
    )
    out: list[ScoredAnswer | None] = [None] * len(answers)
    for i in tqdm(prefix_friendly_order(answers, sampled), desc="score", unit="answer", disable=not progress):
        a = answers[i]
        out[i] = score_answer_record(
            a,
            questions_by_id[a.qid],
            judge,
            llm_judge if i in sampled else None,
            llm_splitter=llm_splitter,
            split_judged_by_llm=split_judged_by_llm,
            citations=citations,
            grader_params=grader_params,
            replicate_suffix=replicate_suffix,
        )
    return out  # type: ignore[return-value]  # every index is scored once


# ------------------------------------------------------------------------------------------- the stage function


class JudgeMeter:
    """Wraps an LLM's `.complete` to count calls, tokens, model seconds and cost (cache hits replay the recorded
    usage, so the totals are what the judgments cost to produce; `new_*` is what this run spent)."""

    def __init__(self, llm):
        self.llm = llm
        self.totals = {"calls": 0, "cache_hits": 0, "input_tokens": 0, "output_tokens": 0}
        self.totals.update(model_seconds=0.0, cost_usd=0.0, new_cost_usd=0.0)

    def complete(self, *args, **kwargs):
        comp, key, hit = self.llm.complete(*args, **kwargs)
        t = self.totals
        t["calls"] += 1
        t["cache_hits"] += int(bool(hit))
        t["input_tokens"] += int(comp.usage.get("input_tokens", 0) or 0)
        t["output_tokens"] += int(comp.usage.get("output_tokens", 0) or 0)
        t["model_seconds"] += float(comp.latency_s)
        t["cost_usd"] += float(comp.cost_usd)
        if not hit:
            t["new_cost_usd"] += float(comp.cost_usd)
        return comp, key, hit

    def __getattr__(self, name):
        return getattr(self.llm, name)


class _TimedJudge:
    """Measures the wall time spent in a judge during this run (its `name` and other attributes pass through)."""

    def __init__(self, judge):
        self.inner = judge
        self.seconds = 0.0

    def judge(self, *args, **kwargs):
        t0 = time.perf_counter()
        try:
            return self.inner.judge(*args, **kwargs)
        finally:
            self.seconds += time.perf_counter() - t0

    def judge_batch(self, *args, **kwargs):
        t0 = time.perf_counter()
        try:
            return self.inner.judge_batch(*args, **kwargs)
        finally:
            self.seconds += time.perf_counter() - t0

    def __getattr__(self, name):
        return getattr(self.inner, name)


def _attach_meters(judge) -> list[JudgeMeter]:
    """Meter every LLM inside a judge (LLMJudge.llm; CombinedJudge.llm.llm)."""
    meters: list[JudgeMeter] = []
    inner = getattr(judge, "llm", None)
    if inner is None:
        return meters
    if hasattr(inner, "judge_batch"):  # a judge inside a judge (combined)
        return _attach_meters(inner)
    if hasattr(inner, "complete") and not isinstance(inner, JudgeMeter):
        judge.llm = JudgeMeter(inner)
        meters.append(judge.llm)
    elif isinstance(inner, JudgeMeter):
        meters.append(inner)
    return meters


def load_answers(files: Sequence[str | Path]) -> list[Answer]:
    """Answers from JSONL files (a malformed line or an invalid record is an error naming file:line)."""
    out: list[Answer] = []
    for f in files:
        out.extend(read_jsonl(f, Answer))
    return out


def _questions_by_id(questions) -> dict[str, Question]:
    if isinstance(questions, str | Path):
        questions = read_jsonl(questions, Question)
    if isinstance(questions, Mapping):
        return {
            k: (v if isinstance(v, Question) else Question.model_validate(v)) for k, v in questions.items()
        }
    qs = [q if isinstance(q, Question) else Question.model_validate(q) for q in questions]
    return {q.qid: q for q in qs}


# What differs between recording and replaying (wall time, cache hits, new spend) is logged, never written to the
# metrics: a replayed `dvc repro` must write the same bytes.
_RUN_ONLY = ("seconds", "cache_hits", "new_cost_usd")


def _judge_cost(
    judge, n_answers: int, n_claims: int, seconds: float, meters: list[JudgeMeter], name: str | None = None
) -> dict:
    row: dict[str, Any] = {
        "judge": name or getattr(judge, "name", type(judge).__name__),
        "answers": n_answers,
        "claims": n_claims,
        "seconds": round(seconds, 1),
        "calls": 0,
        "cache_hits": 0,
        "input_tokens": 0,
        "output_tokens": 0,
        "model_seconds": 0.0,
        "cost_usd": 0.0,
        "new_cost_usd": 0.0,
    }
    for m in meters:
        for k, v in m.totals.items():
            row[k] += v
    row["model_seconds"] = round(row["model_seconds"], 1)
    row["cost_usd"] = round(row["cost_usd"], 6)
    log.info(
        "judge %s: %.1f s wall, %d cache hits, $%.6f new spend",
        row["judge"],
        row["seconds"],
        row["cache_hits"],
        row["new_cost_usd"],
    )
    return {k: v for k, v in row.items() if k not in _RUN_ONLY}


def run_scoring(
    answers_files: Sequence[str | Path] | Sequence[Answer],
    questions,
    params: Mapping,
    judge_factory: Callable | None = None,
    llm_grader: Callable | None = None,
    llm_splitter_llm=None,
    agreement: Mapping | None = None,
    sensitivity_grader: Callable | None = None,
) -> dict:
    """The scoring stage: read answers (or take them already read), score them, build the tables. Returns
    {"records": [ScoredAnswer], "tables"}.

    `agreement` (the agreement stage's results, when `params["judge"]["selected_by"]` names them): the judge must
    be the one its pre-written rule selects (else ValueError), and its measured agreement with humans goes into
    `tables["judge_trust"]`, beside the groundedness figures it qualifies.

    `questions`: Question records, a {qid: Question} mapping, or a JSONL path. `judge_factory(name, **params)`
    builds a judge (default `finrag.score.judges.base.make_judge`, which has no LLM); the stage passes one that gives
    the LLM judge its CachedLLM. `llm_grader(gold, answer, question)` is asked where the deterministic grader is
    uncertain (finrag.score.model_grader.CachedLLMGrader). `llm_splitter_llm` (a CachedLLM; with the LLM judge
    only) splits the LLM judge's sampled answers into claims a second way (`params["llm_splitter"]["decoding"]`).
    `sensitivity_grader` (a grader like `llm_grader`) gives the uncertain grades of the rule's candidates a verdict
    in a separate table (`grader_sensitivity`), never in the records.
    `params` is the `score:` section (see the module docstring of tables.py).
    """
    from finrag.score.judges.base import make_judge
    from finrag.score.tables import build_tables

    factory = judge_factory or make_judge
    given = list(answers_files)
    answers = (
        cast("list[Answer]", given)
        if given and isinstance(given[0], Answer)
        else load_answers(cast("list[str | Path]", given))
    )
    qmap = _questions_by_id(questions)
    jspec = dict(params.get("judge") or {"name": "numeric"})
    if agreement is not None:
        check_selected(jspec["name"], agreement)
    judge = factory(jspec["name"], **dict(jspec.get("params") or {}))
    judge_meters = _attach_meters(judge)
    lspec = params.get("llm_judge") or None
    llm_judge, llm_meters, sample, seed = None, [], {}, DEFAULT_SEED
    if lspec:
        llm_judge = factory(lspec["name"], **dict(lspec.get("params") or {}))
        llm_meters = _attach_meters(llm_judge)
        sample = dict(lspec.get("sample") or {})
        seed = int(sample.get("seed", DEFAULT_SEED))

    # the chance check re-reads the primary judge's own-passage verdicts; an LLM judge's batches stay as recorded
    if not judge_meters:
        from finrag.score.judges.base import MemoJudge

        judge = MemoJudge(judge)
    splitter, split_meter = None, None
    if llm_splitter_llm is not None and llm_judge is not None:
        from finrag.score.claims import llm_split_claims

        split_meter = JudgeMeter(llm_splitter_llm)
        decoding = (params.get("llm_splitter") or {}).get("decoding")

        def splitter(a: Answer):
            return llm_split_claims(a.text, split_meter, decoding, item_id=f"split:{a.run_id}:{a.qid}")

    timed = _TimedJudge(judge)
    timed_llm = _TimedJudge(llm_judge) if llm_judge is not None else None
    records = score_answers(
        answers,
        qmap,
        timed,
        timed_llm,
        sample.get("per_run"),
        llm_seed=seed,
        llm_sample_questions=sample.get("questions"),
        llm_sample_kinds=sample.get("kinds"),
        llm_sample_templates=sample.get("templates"),
        llm_splitter=splitter,
        split_judged_by_llm=bool((params.get("llm_splitter") or {}).get("llm_judge", True)),
        citations=bool(params.get("citations", True)),
        grader_params={
            **dict(params.get("grader") or {}),
            **({"llm_grader": llm_grader} if llm_grader else {}),
        }
        or None,
        replicate_suffix=params.get("replicate_suffix", REPLICATE_SUFFIX),
        progress=bool(params.get("progress", True)),
    )
    judge_costs = [
        _judge_cost(judge, len(records), sum(r.n_claims for r in records), timed.seconds, judge_meters)
    ]
    if timed_llm is not None:
        sampled = [r for r in records if r.llm_sampled]
        n_claims = sum(r.llm_n_claims or 0 for r in sampled)
        judge_costs.append(_judge_cost(llm_judge, len(sampled), n_claims, timed_llm.seconds, llm_meters))
    if split_meter is not None:
        splits = [r.llm_split for r in records if r.llm_split is not None]
        n_split, n_split_claims = len(splits), sum(s.n_claims for s in splits)
        judge_costs.append(
            _judge_cost(None, n_split, n_split_claims, 0.0, [split_meter], "llm claim splitter")
        )
    tables = build_tables(records, params, judge_costs=judge_costs)
    if params.get(
        "chance_check", True
    ):  # the primary judge on another question's passages (finrag.score.chance)
        from finrag.score.chance import mismatched_passages_check

        tables["chance_support"] = {"judge": judge.name, **mismatched_passages_check(answers, judge)}
    if agreement is not None:
        tables["judge_trust"] = judge_trust(agreement, jspec["name"], params.get("min_judge_kappa"))
    if sensitivity_grader is not None:
        from finrag.score.model_grader import grader_sensitivity

        tables["grader_sensitivity"] = grader_sensitivity(
            records, qmap, sensitivity_grader, tables["runs"], params
        )
    return {"records": records, "tables": tables}


def check_selected(name: str, agreement: Mapping) -> None:
    """Stop when the configured judge is not the one the agreement stage's rule selects: the rule, written before
    the answers were re-scored, decides which judge the study's groundedness figures come from."""
    chosen = selected_judge(agreement)
    if chosen is not None and chosen != name:
        raise ValueError(
            f"score.judge is '{name}', but the agreement stage's rule selects '{chosen}' "
            f"(results/metrics/judge_agreement.json): set score.judge to '{chosen}' and its params"
        )


def write_plots(tables: Mapping, out_dir: str | Path) -> list[Path]:
    """The study's plots from `run_scoring(...)["tables"]` (see finrag.score.plots)."""
    from finrag.score.plots import write_plots as _write

    return _write(tables, out_dir)
