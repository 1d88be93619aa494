"""Records of the synthetic corpus: a question with gold figures and gold passages known to the character.

``SyntheticQuestion`` is a superset of :class:`finrag.core.contracts.Question` (``to_question()`` converts): the gold
passages carry character offsets into ``Page.text`` so retrieval can be scored by character coverage, which the
generic ``Evidence`` record (page + text) cannot express.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from finrag.core.contracts import Evidence, Question

SyntheticKind = Literal[
    "texto",
    "tabla",
    "nota_pie",
    "texto_y_nota",
    "tabla_y_nota",
    "calculo",
    "comparacion",
    "no_respondible",
]
KINDS: tuple[SyntheticKind, ...] = SyntheticKind.__args__  # type: ignore[attr-defined]


class GoldPassage(BaseModel):
    """A span of one page: a sentence, a table row or a footnote line. ``text == page.text[start:end]``."""

    model_config = ConfigDict(extra="forbid")

    doc_id: str
    page: int  # 0-based
    start: int  # character offsets into Page.text, end exclusive
    end: int
    text: str
    figures: list[float] = Field(default_factory=list)  # the figures of the answer (or its inputs) it states


class SyntheticQuestion(BaseModel):
    model_config = ConfigDict(extra="forbid")

    qid: str
    question: str
    kind: SyntheticKind
    answer: str  # gold answer in Spanish ("No consta ..." for no_respondible)
    gold_figures: list[float] = Field(default_factory=list)  # must all appear in a correct answer
    support_figures: list[float] = Field(
        default_factory=list
    )  # inputs of a calculation: allowed, not required
    unit: str = ""  # "millones de euros", "%", "veces", ...
    gold_passages: list[GoldPassage] = Field(default_factory=list)
    doc_ids: list[str] = Field(default_factory=list)
    company: str = ""
    period: str = ""
    answerable: bool = True
    # no_respondible only: terms whose absence from absent_scope (doc ids; empty = whole corpus) makes it so
    absent_terms: list[str] = Field(default_factory=list)
    absent_scope: list[str] = Field(default_factory=list)

    def to_question(self) -> Question:
        """The generic contract record (kind='synthetic', Spanish kind in question_type)."""
        return Question(
            qid=self.qid,
            question=self.question,
            answer=self.answer,
            doc_ids=list(self.doc_ids),
            company=self.company,
            period=self.period,
            question_type=self.kind,
            reasoning="calculo" if self.kind == "calculo" else "",
            kind="synthetic",
            evidence=[
                Evidence(
                    doc_id=p.doc_id,
                    page=p.page,
                    text=p.text,
                    aligned=True,
                    aligned_page=p.page,
                    align_score=1.0,
                )
                for p in self.gold_passages
            ],
            justification="no_respondible: " + ", ".join(self.absent_terms) if not self.answerable else "",
        )
