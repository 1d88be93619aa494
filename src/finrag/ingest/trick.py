"""Hand-written trick questions (data/questions/trick.yaml) -> validated `Question` records.

Why a strict schema: the 40 questions are gold data written by hand, so a typo (a missing key, a page given as
text, a false-premise question without its made-up figures) must stop the loader with one line naming the file
and the question, not surface later as a silently wrong score.

Kinds and what a model is expected to do:
  trick_single        answer from one report                       expected_behaviour: answer
  trick_multi         answer only by combining two reports          expected_behaviour: answer
  trick_unanswerable  the answer is in no available report          expected_behaviour: decline
  trick_false_premise the question assumes a figure/fact that is false expected_behaviour: flag_false_premise
An unanswerable question's `note` names, as `Absent terms: "a"; "b"`, terms that occur on no page of its
document(s), so a test can check the answer really is absent.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from finrag.core.config import repo_root
from finrag.core.contracts import Evidence, Question

TRICK_FILE = "data/questions/trick.yaml"
KINDS = ("trick_single", "trick_multi", "trick_unanswerable", "trick_false_premise")
EXPECTED_BEHAVIOUR = {
    "trick_single": "answer",
    "trick_multi": "answer",
    "trick_unanswerable": "decline",
    "trick_false_premise": "flag_false_premise",
}
_ABSENT_RE = re.compile(r"absent terms[^:]*:(?P<terms>.*)", re.IGNORECASE | re.DOTALL)
_QUOTED = re.compile(r'"([^"]+)"')


class TrickQuestionError(ValueError):
    """A malformed trick-question file or entry. The message is one line naming the file (and qid)."""


class TrickEvidence(BaseModel):
    model_config = ConfigDict(extra="forbid")

    doc_id: str = Field(min_length=1)
    page: int = Field(ge=0)  # 0-based PDF page index
    text: str = Field(min_length=1)  # exact short quote from that page


class TrickEntry(BaseModel):
    """One YAML entry, exactly the documented keys (all required)."""

    model_config = ConfigDict(extra="forbid")

    qid: str = Field(pattern=r"^trick_(single|multi|unanswerable|false_premise)_\d{2}$")
    kind: Literal["trick_single", "trick_multi", "trick_unanswerable", "trick_false_premise"]
    question: str = Field(min_length=10)
    answer: str = Field(min_length=1)
    expected_behaviour: Literal["answer", "decline", "flag_false_premise"]
    company: str = Field(min_length=1)
    period: str
    doc_ids: list[str] = Field(min_length=1)
    evidence: list[TrickEvidence] = Field(min_length=1)
    premise_figures: list[str]
    note: str

    @model_validator(mode="after")
    def _consistent(self) -> TrickEntry:
        if not self.qid.startswith(self.kind + "_"):
            raise ValueError(f"qid does not match kind {self.kind}")
        want = EXPECTED_BEHAVIOUR[self.kind]
        if self.expected_behaviour != want:
            raise ValueError(
                f"kind {self.kind} needs expected_behaviour {want}, not {self.expected_behaviour}"
            )
        if (self.kind == "trick_false_premise") != bool(self.premise_figures):
            raise ValueError("premise_figures must be non-empty for trick_false_premise and empty otherwise")
        unknown = sorted({e.doc_id for e in self.evidence} - set(self.doc_ids))
        if unknown:
            raise ValueError(f"evidence cites documents not in doc_ids: {unknown}")
        if self.kind == "trick_multi" and len({e.doc_id for e in self.evidence}) < 2:
            raise ValueError("trick_multi needs evidence on at least two documents")
        if self.kind == "trick_unanswerable" and not absent_terms(self.note):
            raise ValueError('trick_unanswerable needs `Absent terms: "..."` in its note')
        return self

    def to_question(self) -> Question:
        return Question(
            qid=self.qid,
            question=self.question,
            answer=self.answer,
            doc_ids=list(self.doc_ids),
            company=self.company,
            period=self.period,
            question_type="trick",
            kind=self.kind,
            evidence=[Evidence(doc_id=e.doc_id, page=e.page, text=e.text) for e in self.evidence],
            justification=self.note,
            expected_behaviour=self.expected_behaviour,
            premise_figures=list(self.premise_figures),
        )


def absent_terms(note: str) -> list[str]:
    """The quoted terms after `Absent terms:` in a note (terms the document must not contain)."""
    m = _ABSENT_RE.search(note or "")
    return _QUOTED.findall(m.group("terms")) if m else []


def _one_line(err: ValidationError) -> str:
    parts = []
    for e in err.errors():
        loc = ".".join(str(x) for x in e["loc"])
        parts.append(f"{loc}: {e['msg']}" if loc else e["msg"])
    return "; ".join(parts)


def load_trick_questions(path: str | Path | None = None) -> list[Question]:
    """Read and validate the trick-question YAML (default: data/questions/trick.yaml under the repository).

    Raises TrickQuestionError (one line: file, qid, what is wrong) on unreadable YAML, a malformed entry or a
    duplicate qid.
    """
    p = Path(path) if path is not None else repo_root() / TRICK_FILE
    try:
        raw = yaml.safe_load(p.read_text(encoding="utf-8"))
    except OSError as e:
        raise TrickQuestionError(f"{p}: cannot read: {e.strerror or e}") from e
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        where = f" (line {mark.line + 1})" if mark is not None else ""
        raise TrickQuestionError(f"{p}: invalid YAML{where}: {getattr(e, 'problem', None) or e}") from e
    if not isinstance(raw, list):
        raise TrickQuestionError(f"{p}: expected a list of questions, got {type(raw).__name__}")
    out: list[Question] = []
    seen: set[str] = set()
    for i, item in enumerate(raw, 1):
        qid = item.get("qid") if isinstance(item, dict) else None
        label = qid or f"entry {i}"
        if not isinstance(item, dict):
            raise TrickQuestionError(f"{p}: {label}: expected a mapping, got {type(item).__name__}")
        try:
            entry = TrickEntry.model_validate(item)
        except ValidationError as e:
            raise TrickQuestionError(f"{p}: {label}: {_one_line(e)}") from e
        if entry.qid in seen:
            raise TrickQuestionError(f"{p}: {entry.qid}: duplicate qid")
        seen.add(entry.qid)
        out.append(entry.to_question())
    return out


__all__ = [
    "EXPECTED_BEHAVIOUR",
    "KINDS",
    "TRICK_FILE",
    "TrickEntry",
    "TrickQuestionError",
    "absent_terms",
    "load_trick_questions",
]
