"""Drafting structures: documents built sentence by sentence, so every fact's passage offsets are known.

A document is a list of sections; a section a list of blocks (paragraph, table, footnotes); a block a list of
units (sentence, table row, footnote line). A unit that states a fact carries a passage key; after assembly into
pages the key resolves to (doc_id, page, start, end). Question candidates refer to facts by these keys, so no
offset is ever searched for in the text after the fact.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from finrag.core.contracts import Document, Page
from finrag.core.io import sha256_text
from finrag.synthetic.formats import sup
from finrag.synthetic.models import GoldPassage


@dataclass
class Fig:
    """One figure of an answer: its value, how it is written, and the passage that states it (None: computed)."""

    value: float
    raw: str
    pkey: str | None


@dataclass
class Candidate:
    """A possible question; the selection in questions.py picks some of them."""

    kind: str
    question: str
    answer: str
    figures: list[Fig]
    support: list[Fig] = field(default_factory=list)
    unit: str = ""
    doc_ids: list[str] = field(default_factory=list)
    company: str = ""
    period: str = ""
    answerable: bool = True
    absent_terms: list[str] = field(default_factory=list)
    absent_scope: list[str] = field(default_factory=list)
    group: str = ""  # stratum for the selection of no_respondible questions


@dataclass
class Unit:
    text: str
    key: str | None = None


@dataclass
class Block:
    units: list[Unit]
    sep: str = " "

    def text(self) -> str:
        return self.sep.join(u.text for u in self.units)


@dataclass
class SectionDraft:
    title: str
    doc_id: str
    blocks: list[Block] = field(default_factory=list)
    _table_notes: list[Unit] = field(default_factory=list)
    _end_notes: list[Unit] = field(default_factory=list)
    _n_notes: int = 0

    def key(self, name: str) -> str:
        return f"{self.doc_id}#{name}"

    def note(self, text: str, name: str | None = None, place: str = "end") -> str:
        """Register a footnote and return its marker. place='table': printed right after the next table."""
        self._n_notes += 1
        marker = sup(self._n_notes)
        unit = Unit(f"{marker} {text}", self.key(name) if name else None)
        (self._table_notes if place == "table" else self._end_notes).append(unit)
        return marker

    def para(self, *sentences: str | tuple[str, str]) -> None:
        """A paragraph; a sentence given as (text, name) is a fact passage."""
        units = [Unit(s) if isinstance(s, str) else Unit(s[0], self.key(s[1])) for s in sentences]
        self.blocks.append(Block(units, " "))

    def table(
        self, header: list[str], rows: Sequence[tuple[list[str], str | None]], numeric: set[int] | None = None
    ) -> None:
        """A pipe table (header, alignment row, body rows); pending table footnotes follow as their own block.

        ``numeric``: the columns aligned right (default: all but the first)."""
        numeric = set(range(1, len(header))) if numeric is None else numeric

        def line(cells: list[str]) -> str:
            return "| " + " | ".join(cells) + " |"

        rule = ["---:" if i in numeric else "---" for i in range(len(header))]
        units = [Unit(line(header)), Unit(line(rule))]
        units += [Unit(line(cells), self.key(name) if name else None) for cells, name in rows]
        self.blocks.append(Block(units, "\n"))
        if self._table_notes:
            self.blocks.append(Block(self._table_notes, "\n"))
            self._table_notes = []

    def close(self) -> None:
        if self._table_notes:
            raise ValueError(
                f"{self.doc_id} / {self.title}: table footnotes registered but no table followed"
            )
        if self._end_notes:
            self.blocks.append(Block(self._end_notes, "\n"))
            self._end_notes = []


@dataclass
class DocBuilder:
    doc_id: str
    title: str
    company: str
    form: str
    period: str
    sector: str = ""
    sections: list[SectionDraft] = field(default_factory=list)
    candidates: list[Candidate] = field(default_factory=list)

    def section(self, title: str) -> SectionDraft:
        s = SectionDraft(title=title, doc_id=self.doc_id)
        self.sections.append(s)
        return s

    def fig(self, name: str, value: float, raw: str) -> Fig:
        return Fig(float(value), raw, f"{self.doc_id}#{name}")

    def ask(
        self,
        kind: str,
        question: str,
        answer: str,
        figures: list[Fig],
        support: list[Fig] | None = None,
        unit: str = "",
    ) -> None:
        self.candidates.append(
            Candidate(
                kind=kind,
                question=question,
                answer=answer,
                figures=figures,
                support=support or [],
                unit=unit,
                doc_ids=[self.doc_id],
                company=self.company,
                period=self.period,
            )
        )

    def assemble(self) -> tuple[Document, list[Page], dict[str, GoldPassage]]:
        """Pages (one per '##' section; the '#' title opens page 0) and the offsets of every keyed unit."""
        pages: list[Page] = []
        passages: dict[str, GoldPassage] = {}
        for pno, sec in enumerate(self.sections):
            sec.close()
            text = ""
            if pno == 0:
                text += f"# {self.title}\n\n"
            text += f"## {sec.title}"
            for block in sec.blocks:
                text += "\n\n"
                for i, unit in enumerate(block.units):
                    if i:
                        text += block.sep
                    start = len(text)
                    text += unit.text
                    if unit.key is not None:
                        if unit.key in passages:
                            raise ValueError(f"passage key used twice: {unit.key}")
                        passages[unit.key] = GoldPassage(
                            doc_id=self.doc_id, page=pno, start=start, end=len(text), text=unit.text
                        )
            pages.append(Page(doc_id=self.doc_id, page=pno, text=text, section=sec.title))
        full = "\n\n".join(p.text for p in pages)
        doc = Document(
            doc_id=self.doc_id,
            company=self.company,
            form=self.form,
            period=self.period,
            source_file=f"synthetic/{self.doc_id}.txt",
            sha256=sha256_text(full),
            source_format="text",
            n_pages=len(pages),
            sector=self.sector,
            language="es",
        )
        return doc, pages, passages


@dataclass
class CompanyInfo:
    name: str
    doc_ids: list[str]
    segments: list[str]
    regions: list[str]
    has_note: bool = False


@dataclass
class FundInfo:
    name: str
    doc_ids: list[str]
    classes: list[str]
    has_kid: bool = False


@dataclass
class Entry:
    """A figure usable in a two-document comparison."""

    label: str  # the entity as named in a question
    fig: Fig
    doc_id: str
    unit: str = ""


@dataclass
class CorpusDraft:
    builders: list[DocBuilder] = field(default_factory=list)
    metrics: dict[str, list[Entry]] = field(default_factory=dict)
    companies: list[CompanyInfo] = field(default_factory=list)
    funds: list[FundInfo] = field(default_factory=list)
    pairs: list[Candidate] = field(default_factory=list)  # cross-document candidates built by the generator
    year: int = 2024

    def metric(self, name: str, entry: Entry) -> None:
        self.metrics.setdefault(name, []).append(entry)
