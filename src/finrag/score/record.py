"""The per-answer scored record (RAGChecker's typed `RAGResult`, for finrag): what the score stage writes to
`results/scores/records.jsonl` and the tables and the service read by attribute.

Why here, not in `finrag.core.contracts`: every stage imports the core contracts, the embedding stages included,
and a stage's code deps are exactly what it reaches; the record belongs to scoring and its readers.
"""

from __future__ import annotations

from typing import Literal

from pydantic import ConfigDict, Field

from finrag.core.contracts import QuestionKind, Record, Verdict

AnswerVerdict = Literal["correct", "incorrect", "refusal"]  # finrag.score.grader's verdicts
GradeMethod = Literal["numeric", "text", "refusal", "llm", "behaviour"]  # the grader's methods, or behaviour
GradeOutcome = Literal["correct", "incorrect", "refusal", "uncertain"]


class JudgedClaim(Record):
    """One claim of an answer, as the claim splitter wrote it, with a judge's verdict on it."""

    model_config = ConfigDict(validate_assignment=True)

    claim_id: str
    text: str
    verdict: Verdict


class SplitClaim(JudgedClaim):
    """A claim written by the LLM splitter, judged by the primary judge (and by the LLM judge, when it judges the
    LLM splitter's claims: `score.llm_splitter.llm_judge`)."""

    llm_verdict: Verdict | None = Field(
        default=None,
        description="the LLM judge's verdict; absent when the LLM judge does not judge these claims",
    )


class LLMSplitScore(Record):
    """The answer split into claims by an LLM as well, those claims judged: the deterministic splitter's rival."""

    fell_back: bool = Field(
        description="the LLM's reply had no numbered claim: the deterministic claims were used"
    )
    n_claims: int
    fully_grounded: bool = Field(description="the primary judge supports every claim (False without claims)")
    groundedness: float | None = Field(
        description="share of claims the primary judge supports; None without claims"
    )
    llm_fully_grounded: bool | None = Field(
        description="as fully_grounded, by the LLM judge; None when it did not judge"
    )
    llm_groundedness: float | None = Field(
        description="as groundedness, by the LLM judge; None when it did not judge"
    )
    claims: list[SplitClaim]


class ScoredAnswer(Record):
    """One generated answer scored four separate ways (correct, grounded, cited, declined): one line of
    results/scores/records.jsonl, written by the score stage and read by its tables and by the service.

    Most fields are always in the record (None where undefined). Two groups exist only under a setting and are
    left out of the JSON otherwise, so records written without them stay as they were: the citation fields
    (`score.citations`) and `llm_split` (the LLM splitter on). `as_json` writes what was set, nothing more.
    """

    model_config = ConfigDict(validate_assignment=True)

    # the answer and the question it answers
    qid: str
    run_id: str
    series: str = Field(
        description="the run id without its replicate number: the runs that sample one system"
    )
    backend: str
    model: str
    generator: str = Field(description='"{backend}/{model}"')
    prompt_style: str
    template_id: str
    context_mode: Literal["retrieved", "oracle", "none"]
    replicate: int
    kind: QuestionKind
    question_type: str
    expected_behaviour: str = Field(
        description='"" or "answer": to be answered; "decline", "flag_false_premise": not to be answered as asked'
    )
    should_decline: bool = Field(description="unanswerable, or built on a false premise")
    final_answer: str = Field(description='the text the grader reads (after "Answer:" for the cot style)')
    declined: bool = Field(description="the final answer refuses or uses the decline prompt's phrase")
    # 1. correctness
    unit_mismatch: bool = Field(description="off by a power of 1,000: the figure in the wrong unit")
    grade_method: GradeMethod
    grade_detail: str = Field(description="the grader's reason, for a reader")
    grade_uncertain: bool = Field(description="near the content-word threshold, or a soft yes/no")
    grade_outcome: GradeOutcome = Field(
        description="the strict outcome: an uncertain grade is its own outcome, never counted correct"
    )
    verdict: AnswerVerdict
    verdict_source: Literal["grader", "behaviour"] = Field(
        description="behaviour: a trick question not to be answered, scored on what the answer did"
    )
    correct: bool = Field(
        description="did what the question called for, strictly: an uncertain grade is not correct"
    )
    earlier_correct: bool = Field(
        description="as graded before 2026-12-07 (a soft yes/no from any sentence sharing the question's words, "
        "table lines as statements, uncertain grades as given): the figure each headline was"
    )
    flags: list[str] = Field(
        description="answer-quality flags (finrag.score.flags: empty, cut_at_limit, copied_markup, prompt_echo, "
        "question_echo, passage_copy, repetition); [] for an answer without one"
    )
    false_premise: Literal["flagged", "declined", "used"] | None = Field(
        description="how the answer treated a false premise; None for other questions"
    )
    repeats_premise: bool | None = Field(
        description="states a made-up premise figure; None for other questions or without such figures"
    )
    used_made_up_figure: bool | None = Field(
        description="went along with the premise and stated its figure; None for other questions"
    )
    withheld: bool = Field(description="declined, or flagged a false premise")
    # 2. groundedness, by the primary judge
    judge: str
    n_claims: int
    n_supported: int
    n_unsupported: int
    n_contradicted: int
    groundedness: float | None = Field(description="share of claims supported; None without claims")
    fully_grounded: bool = Field(description="every claim supported (False without claims)")
    refusal: bool = Field(description="the answer makes no claim")
    claims: list[JudgedClaim]
    correct_and_grounded: bool = Field(
        description="the primary endpoint: strictly correct and fully grounded, a flagged answer counted as not "
        "grounded"
    )
    correct_or_grounded: bool
    # ... and by the LLM judge, on its sample only (None elsewhere)
    llm_judge: str | None
    llm_sampled: bool = Field(description="the answer is in the LLM judge's sample")
    llm_groundedness: float | None
    llm_fully_grounded: bool | None
    llm_n_claims: int | None
    llm_claims: list[JudgedClaim] | None = Field(description="the same claims, the LLM judge's verdicts")
    llm_split: LLMSplitScore | None = Field(
        default=None, description="None outside the LLM judge's sample; absent when the LLM splitter is off"
    )
    # 3. citations (absent when score.citations is off)
    citation_recall: float | None = Field(
        default=None, description="ALCE citation recall over the factual sentences; None without one"
    )
    citation_recall_cited: float | None = Field(
        default=None, description="citation recall over the sentences that cite; None when none does"
    )
    citation_precision: float | None = Field(
        default=None, description="ALCE citation precision; None without citations"
    )
    n_citations: int | None = None
    n_invalid_citations: int | None = Field(
        default=None, description="citations of a passage number not shown"
    )
    n_cited_sentences: int | None = None
    n_offset_citations: int | None = Field(
        default=None, description="citations with backend character offsets"
    )
    offset_valid_share: float | None = Field(
        default=None, description="share of offset citations whose span lies in the cited passage"
    )
    # 4. the passages the model saw, and what the answer cost
    evidence_recall: float | None = Field(
        description="share of the question's evidence pages the passages cover; None without evidence"
    )
    n_evidence_pages: int
    n_passages: int
    input_tokens: int
    output_tokens: int
    latency_s: float
    cost_usd: float
    cut_at_max_tokens: bool = Field(description="generation stopped at max_tokens")

    @property
    def lenient_correct(self) -> bool:
        """The verdict with an uncertain grade taken as given (a sensitivity row; the study counts `correct`)."""
        return self.verdict == "correct"

    @property
    def grounded_unflagged(self) -> bool:
        """Fully grounded and without an answer-quality flag: a copy or an echo is not counted as grounded."""
        return self.fully_grounded and not self.flags

    def as_json(self) -> dict:
        """The JSON-ready record: the fields set, in declaration order (the setting-only groups left out when
        not set), values as scored; `json.dumps(..., sort_keys=True)` gives records.jsonl's line."""
        return self.model_dump(exclude_unset=True)
