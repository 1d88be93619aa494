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
