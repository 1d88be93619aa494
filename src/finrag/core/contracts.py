"""Typed records passed between pipeline stages.

Small and explicit on purpose (as BEIR's corpus/query/qrels contracts): every stage reads and writes these as
JSON lines, so a file written by one stage can be validated by the next and by a reviewer.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field


class Record(BaseModel):
    """Base: forbid unknown keys so a typo in a writer fails loudly in the reader."""

    model_config = ConfigDict(extra="forbid", frozen=False)


class Document(Record):
    doc_id: str  # FinanceBench doc_name where there is one (e.g. "3M_2018_10K"), else TICKER_form_period
    company: str = ""
    form: str = ""  # 10-K, 10-Q, 8-K, EARNINGS, ...
    period: str = ""  # fiscal year or period end as given by the source
    source_file: str = ""  # path relative to the mirror root (or absolute for user files)
    sha256: str = ""
    source_format: Literal["pdf", "html", "text"] = "pdf"
    n_pages: int = 0
    sector: str = ""
    language: str = "en"
    collection: str = (
        ""  # "financebench" (a document FinanceBench names) or "edgar" (other filings, distractors)
    )


class Page(Record):
    doc_id: str
    page: int  # 0-based, as FinanceBench's evidence_page_num
    text: str
    section: str = (
        ""  # nearest heading seen on or before this page (e.g. "Item 7. Management's Discussion ...")
    )


class Span(Record):
    page: int
    start: int  # character offsets into Page.text, end exclusive
    end: int


class Chunk(Record):
    chunk_id: str
    doc_id: str
    pages: list[int]
    spans: list[Span]
    text: str  # as indexed (context header included)
    body: str  # as on the page(s)
    section: str = ""


class Evidence(Record):
    doc_id: str
    page: int  # 0-based
    text: str = ""
    aligned: bool = False
    aligned_page: int | None = None  # page where the text was found (may differ for HTML sources)
    align_score: float = 0.0
    reason: str = ""  # why it could not be aligned


QuestionKind = Literal[
    "financebench",
    "trick_single",
    "trick_multi",
    "trick_unanswerable",
    "trick_false_premise",
    "synthetic",
]


class Question(Record):
    qid: str
    question: str
    answer: str = ""  # gold answer, or the expected behaviour for trick questions
    doc_ids: list[str] = Field(default_factory=list)
    company: str = ""
    period: str = ""
    question_type: str = ""  # FinanceBench: metrics-generated / domain-relevant / novel-generated
    reasoning: str = ""  # FinanceBench question_reasoning
    kind: QuestionKind = "financebench"
    evidence: list[Evidence] = Field(default_factory=list)
    available: bool = True  # are all its documents in the corpus?
    unavailable_reason: str = ""
    justification: str = ""
    # trick questions: "answer" | "decline" | "flag_false_premise" ("" = a plain question to answer)
    expected_behaviour: str = ""
    premise_figures: list[str] = Field(default_factory=list)  # made-up figures a false-premise question uses


class Passage(Record):
    """One numbered passage shown to a model: a chunk plus where it came from."""

    n: int  # 1-based number shown to the model, [n]
    chunk_id: str
    doc_id: str
    pages: list[int]
    text: str
    score: float = 0.0


class Context(Record):
    """The passages one question gets in one context mode, frozen by the contexts stage: chunk ids in the order
    shown, with their search scores. Small and in git, so generation replays without embeddings or search."""

    qid: str
    mode: Literal["retrieved", "oracle"]
    setup: str  # chunker/embedder/method that ranked them
    chunk_ids: list[str]
    scores: list[float]


class Citation(Record):
    passage: int  # n of the cited passage
    start: int | None = None  # char offsets inside the passage text, when the backend gives them
    end: int | None = None
    cited_text: str = ""


class Answer(Record):
    qid: str
    run_id: str
    backend: str
    model: str
    prompt_style: str
    template_id: str
    context_mode: Literal["retrieved", "oracle", "none"]
    replicate: int = 0
    passages: list[Passage]
    prompt: list[dict]  # the messages sent
    text: str
    citations: list[Citation] = Field(default_factory=list)
    usage: dict = Field(default_factory=dict)
    latency_s: float = 0.0
    cost_usd: float = 0.0
    cache_key: str = ""
    finish_reason: str | None = (
        None  # "length": cut at max_tokens (a cot answer may end before its "Answer:")
    )


class Claim(Record):
    claim_id: str
    text: str
    figures: list[str] = Field(default_factory=list)


Verdict = Literal["supported", "unsupported", "contradicted"]


class ClaimVerdict(Record):
    claim_id: str
    verdict: Verdict
    judge: str
    evidence: str = ""  # passage text / computation that supports the verdict
    detail: dict = Field(default_factory=dict)


class LabelledClaim(Record):
    """A claim with the passages a human saw and the human's verdict: the agreement contract."""

    item_id: str
    benchmark: str
    subset: str = ""
    claim: str
    passages: list[str]
    human: Verdict
    group_id: str = ""  # answer/document grouping for answer-level agreement
    human_raw: str = (
        ""  # the label as the source gave it (e.g. "Partial", "True"), before mapping to a Verdict
    )


# ------------------------------------------------------------------------------------ the per-answer scored record

AnswerVerdict = Literal["correct", "incorrect", "refusal"]  # finrag.score.grader's verdicts
GradeMethod = Literal["numeric", "text", "refusal", "llm", "behaviour"]  # the grader's methods, or behaviour


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
    verdict: AnswerVerdict
    verdict_source: Literal["grader", "behaviour"] = Field(
        description="behaviour: a trick question not to be answered, scored on what the answer did"
    )
    correct: bool = Field(description="did what the question called for")
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
    correct_and_grounded: bool
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

    def as_json(self) -> dict:
        """The JSON-ready record: the fields set, in declaration order (the setting-only groups left out when
        not set), values as scored; `json.dumps(..., sort_keys=True)` gives records.jsonl's line."""
        return self.model_dump(exclude_unset=True)
