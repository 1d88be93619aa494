"""Deterministic generator of a synthetic Spanish financial corpus with gold passages known to the character.

Why: the FinanceBench study depends on a data mirror and English filings; this corpus runs anywhere, in Spanish
(decimal comma, ``1.250 millones de euros``), and every fact is stated exactly once in a passage whose offsets
are recorded when the sentence is written. Four document types: annual reports of invented companies, ETF
prospectuses, key-information documents (KID) and research notes.

Determinism: one ``random.Random(seed)`` threads through everything; no global random state, no clock, no
``hash()`` of strings, no iteration over sets.
"""

from __future__ import annotations

import random
from collections import Counter
from pathlib import Path

from finrag.core.contracts import Document, Page
from finrag.core.io import read_jsonl, write_json, write_jsonl
from finrag.synthetic.annual_report import annual_report
from finrag.synthetic.drafts import CorpusDraft
from finrag.synthetic.etf import etf_prospectus
from finrag.synthetic.kid import kid_document
from finrag.synthetic.models import KINDS, SyntheticQuestion
from finrag.synthetic.questions import build_questions
from finrag.synthetic.research_note import research_note
from finrag.synthetic.vocabulary import COMPANIES, DEFAULT_SEED, GESTORAS, INDICES


# --------------------------------------------------------------------------------------------- corpus
def build_draft(
    seed: int,
    n_companies: int = 12,
    n_etfs: int = 6,
    n_kids: int | None = None,
    n_notes: int | None = None,
    year: int = 2024,
) -> CorpusDraft:
    """All documents as drafts (not yet paginated), with question candidates and comparison entries."""
    if not 2 <= n_companies <= len(COMPANIES):
        raise ValueError(f"n_companies must be between 2 and {len(COMPANIES)}, got {n_companies}")
    if not 2 <= n_etfs <= len(INDICES):
        raise ValueError(f"n_etfs must be between 2 and {len(INDICES)}, got {n_etfs}")
    n_kids = n_etfs - 1 if n_kids is None else n_kids
    n_notes = n_companies // 2 if n_notes is None else n_notes
    if not 0 <= n_kids <= n_etfs or not 0 <= n_notes <= n_companies:
        raise ValueError(
            f"need 0 <= n_kids <= n_etfs and 0 <= n_notes <= n_companies (got {n_kids}, {n_notes})"
        )
    rng = random.Random(seed)
    draft = CorpusDraft(year=year)
    specs = rng.sample(COMPANIES, n_companies)
    reports = []
    for spec in specs:
        b = annual_report(rng, spec, year, draft)
        draft.builders.append(b)
        reports.append(b)
    for company, report in zip(draft.companies[:n_notes], reports[:n_notes], strict=True):
        research_note(rng, company, report, year, draft)
    funds = [
        etf_prospectus(rng, rng.choice(GESTORAS), idx, desc, year, draft)
        for idx, desc in rng.sample(INDICES, n_etfs)
    ]
    for fund in funds[:n_kids]:
        kid_document(rng, fund, year, draft)
    return draft


def generate_corpus(
    seed: int = DEFAULT_SEED,
    n_companies: int = 12,
    n_etfs: int = 6,
    n_questions: int = 280,
    n_kids: int | None = None,
    n_notes: int | None = None,
    year: int = 2024,
    shares: dict[str, float] | None = None,
) -> tuple[list[Document], list[Page], list[SyntheticQuestion]]:
    """Documents, pages (one per '##' section, 0-based) and questions with gold passages; same seed, same bytes."""
    draft = build_draft(seed, n_companies, n_etfs, n_kids, n_notes, year)
    documents: list[Document] = []
    pages: list[Page] = []
    passages = {}
    for b in draft.builders:
        doc, doc_pages, doc_passages = b.assemble()
        documents.append(doc)
        pages.extend(doc_pages)
        passages.update(doc_passages)
    # the question sampler gets its own stream, so adding a document template does not reshuffle the questions of
    # the others more than necessary
    qrng = random.Random(f"{seed}:questions")
    questions = build_questions(draft, passages, pages, qrng, n_questions, shares)
    return documents, pages, questions


def corpus_summary(documents: list[Document], pages: list[Page], questions: list[SyntheticQuestion]) -> dict:
    counts = Counter(q.kind for q in questions)
    return {
        "n_documents": len(documents),
        "n_pages": len(pages),
        "n_questions": len(questions),
        "documents_by_form": dict(sorted(Counter(d.form for d in documents).items())),
        "kind_counts": {k: counts.get(k, 0) for k in KINDS},
        "no_respondible_share": counts.get("no_respondible", 0) / len(questions) if questions else 0.0,
    }


def write_corpus(out_dir: str | Path, seed: int = DEFAULT_SEED, **kwargs) -> dict:
    """Write documents.jsonl, pages.jsonl, questions.jsonl and summary.json atomically; return the summary."""
    out = Path(out_dir)
    documents, pages, questions = generate_corpus(seed, **kwargs)
    write_jsonl(out / "documents.jsonl", documents)
    write_jsonl(out / "pages.jsonl", pages)
    write_jsonl(out / "questions.jsonl", questions)
    summary = {
        "seed": seed,
        **{k: v for k, v in kwargs.items()},
        **corpus_summary(documents, pages, questions),
    }
    write_json(out / "summary.json", summary)
    return summary


def read_corpus(out_dir: str | Path) -> tuple[list[Document], list[Page], list[SyntheticQuestion]]:
    """Read back what write_corpus wrote (malformed lines raise ValueError naming file:line)."""
    out = Path(out_dir)
    return (
        read_jsonl(out / "documents.jsonl", Document),
        read_jsonl(out / "pages.jsonl", Page),
        read_jsonl(out / "questions.jsonl", SyntheticQuestion),
    )


def serialize(documents: list[Document], pages: list[Page], questions: list[SyntheticQuestion]) -> bytes:
    """The corpus as one byte string (what determinism tests compare)."""
    lines = [r.model_dump_json() for r in (*documents, *pages, *questions)]
    return ("\n".join(lines) + "\n").encode("utf-8")


__all__ = [
    "DEFAULT_SEED",
    "build_draft",
    "corpus_summary",
    "generate_corpus",
    "read_corpus",
    "serialize",
    "write_corpus",
]
