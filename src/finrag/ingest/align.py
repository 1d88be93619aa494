"""Align FinanceBench evidence to parsed pages.

Why: FinanceBench gives each evidence item a 0-based PDF page, but our pages come from our own parser (and
for HTML stand-ins, a different layout altogether). Retrieval and citation scores are only meaningful if the
gold page in *our* corpus really holds the evidence, so every item is checked and, where needed, relocated.

Score: token recall of the evidence on a page (how many of its words and numbers, counted with multiplicity,
the page contains), after normalising case, unicode and thousands separators. Words are looked up in the
page's text with all spacing and punctuation removed, because FinanceBench's extractor often glued words
together ("Cashandcashequivalents") where the PDF used no-break spaces, and sometimes split them ("Flow s").
Numbers must match as whole tokens and are also scored on their own; both scores must pass, so a page with
the same words but other figures (the same table for another year) is not taken for the evidence page.
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from finrag.core.contracts import Evidence, Page, Question

DEFAULT_THRESHOLD = 0.8  # minimum token recall (words+numbers) for "aligned"
DEFAULT_NUMBER_THRESHOLD = 0.8  # minimum recall of the evidence's numbers
SHORTLIST = 12  # pages rescored in full after a quick exact-token ranking

_NUM_SEP = re.compile(r"(?<=\d),(?=\d{3}\b)")
_TOKEN = re.compile(r"\d+(?:\.\d+)?|[^\W\d_]+")


def normalise(text: str) -> str:
    """Casefold, unify unicode forms, join thousands separators ("1,577" -> "1577")."""
    text = unicodedata.normalize("NFKC", text).casefold()
    return _NUM_SEP.sub("", text)


def tokens(text: str) -> list[str]:
    return _TOKEN.findall(normalise(text))


def squash(text: str) -> str:
    """Letters and digits only, no spacing: the page as a string words can be found in whatever the gluing."""
    return "".join(tokens(text))


def _is_number(tok: str) -> bool:
    return tok[0].isdigit()


@dataclass
class PageIndex:
    """Token counts of one document's pages, built once and reused for every evidence item."""

    pages: list[Page]
    counts: list[Counter]
    squashed: list[str]

    @classmethod
    def build(cls, pages: Iterable[Page]) -> PageIndex:
        pages = sorted(pages, key=lambda p: p.page)
        toks = [tokens(p.text) for p in pages]
        return cls(pages, [Counter(t) for t in toks], ["".join(t) for t in toks])

    def position(self, page_no: int) -> int | None:
        for i, p in enumerate(self.pages):
            if p.page == page_no:
                return i
        return None


@dataclass
class Match:
    score: float  # token recall, all tokens
    number_score: float  # recall of number tokens (1.0 when the evidence has none)
    page: int | None

    def passes(self, threshold: float, number_threshold: float) -> bool:
        return self.page is not None and self.score >= threshold and self.number_score >= number_threshold


def recall(evidence: Counter, page: Counter, squashed: str | None = None) -> tuple[float, float]:
    """(recall of all tokens, recall of number tokens) of `evidence` on a page, with multiplicity.

    Numbers count only as whole tokens; words also count when found in the page's squashed text.
    """
    total = sum(evidence.values())
    if total == 0:
        return 0.0, 0.0
    hit = num_total = num_hit = 0
    for tok, n in evidence.items():
        if _is_number(tok):
            got = min(n, page.get(tok, 0))
            num_total += n
            num_hit += got
        else:
            have = page.get(tok, 0)
            if have < n and squashed is not None:
                have = max(have, squashed.count(tok))
            got = min(n, have)
        hit += got
    return hit / total, (num_hit / num_total if num_total else 1.0)


def _score_at(ev: Counter, index: PageIndex, i: int, exact: bool = False) -> Match:
    s, n = recall(ev, index.counts[i], None if exact else index.squashed[i])
    return Match(s, n, index.pages[i].page)


def _score_window(ev: Counter, index: PageIndex, i: int) -> Match:
    """Evidence running across pages i and i+1 (a table split by a page break): credit the page with more."""
    both = index.counts[i] + index.counts[i + 1]
    s, n = recall(ev, both, index.squashed[i] + index.squashed[i + 1])
    first, _ = recall(ev, index.counts[i], index.squashed[i])
    second, _ = recall(ev, index.counts[i + 1], index.squashed[i + 1])
    return Match(s, n, index.pages[i].page if first >= second else index.pages[i + 1].page)


def locate(
    text: str,
    index: PageIndex,
    stated_page: int | None,
    threshold: float = DEFAULT_THRESHOLD,
    number_threshold: float = DEFAULT_NUMBER_THRESHOLD,
    trust_stated: bool = True,
) -> Match:
    """Best page for `text`: the stated page if it passes (and is trusted), else the best-scoring page
    (nearest the stated page wins ties), else the best two-page window. Returns the best match found even
    when it does not pass."""
    ev = Counter(tokens(text))
    if not ev or not index.pages:
        return Match(0.0, 0.0, None)
    pos = index.position(stated_page) if stated_page is not None else None
    if pos is not None and trust_stated:
        m = _score_at(ev, index, pos)
        if m.passes(threshold, number_threshold):
            return m
    centre = pos if pos is not None else 0
    order = sorted(range(len(index.pages)), key=lambda i: abs(i - centre))
    # Rank every page by exact-token recall (cheap), rescore the most promising ones in full.
    quick = sorted(order, key=lambda i: _score_at(ev, index, i, exact=True).score, reverse=True)[:SHORTLIST]
    best = Match(-1.0, 0.0, None)
    for i in sorted(quick, key=lambda i: abs(i - centre)):
        m = _score_at(ev, index, i)
        if (m.score, m.number_score) > (best.score, best.number_score):
            best = m
    if best.passes(threshold, number_threshold):
        return best
    windows = sorted({j for i in quick for j in (i - 1, i) if 0 <= j < len(index.pages) - 1})
    for i in sorted(windows, key=lambda i: abs(i - centre)):
        m = _score_window(ev, index, i)
        if m.passes(threshold, number_threshold) and (m.score, m.number_score) > (
            best.score,
            best.number_score,
        ):
            best = m
    return best


def align_evidence(
    ev: Evidence,
    index: PageIndex | None,
    source_format: str,
    threshold: float = DEFAULT_THRESHOLD,
    number_threshold: float = DEFAULT_NUMBER_THRESHOLD,
) -> Evidence:
    """Evidence with aligned / aligned_page / align_score / reason filled in."""
    if index is None:
        return ev.model_copy(
            update={
                "aligned": False,
                "aligned_page": None,
                "align_score": 0.0,
                "reason": "document not parsed",
            }
        )
    if not tokens(ev.text):
        return ev.model_copy(update={"aligned": False, "aligned_page": None, "reason": "empty evidence text"})
    # An HTML stand-in's pages are not the PDF's pages: there the stated page only breaks ties.
    m = locate(ev.text, index, ev.page, threshold, number_threshold, trust_stated=source_format == "pdf")
    if m.passes(threshold, number_threshold):
        return ev.model_copy(
            update={"aligned": True, "aligned_page": m.page, "align_score": round(m.score, 4), "reason": ""}
        )
    reason = (
        f"best match page {m.page}: token recall {m.score:.2f}, number recall {m.number_score:.2f} "
        f"(need {threshold:.2f} and {number_threshold:.2f})"
    )
    if source_format == "pdf":
        reason = f"not on stated page {ev.page}; " + reason
    return ev.model_copy(
        update={
            "aligned": False,
            "aligned_page": None,
            "align_score": round(max(m.score, 0.0), 4),
            "reason": reason,
        }
    )


def align_questions(
    questions: list[Question],
    pages_by_doc: dict[str, list[Page]],
    formats: Mapping[str, str],
    threshold: float = DEFAULT_THRESHOLD,
    number_threshold: float = DEFAULT_NUMBER_THRESHOLD,
) -> tuple[list[Question], dict]:
    """Align the evidence of every available question; unavailable ones pass through unchanged.

    Returns the updated questions and metrics: questions_total, questions_available, evidence_items
    (of available questions), evidence_aligned, alignment_rate, unaligned [{qid, doc_id, page, reason}].
    """
    indexes: dict[str, PageIndex] = {}
    out: list[Question] = []
    n_items = n_aligned = 0
    unaligned = []
    for q in questions:
        if not q.available:
            out.append(q)
            continue
        new_ev = []
        for ev in q.evidence:
            if ev.doc_id not in indexes and ev.doc_id in pages_by_doc:
                indexes[ev.doc_id] = PageIndex.build(pages_by_doc[ev.doc_id])
            aligned = align_evidence(
                ev, indexes.get(ev.doc_id), formats.get(ev.doc_id, "pdf"), threshold, number_threshold
            )
            new_ev.append(aligned)
            n_items += 1
            if aligned.aligned:
                n_aligned += 1
            else:
                unaligned.append(
                    {"qid": q.qid, "doc_id": ev.doc_id, "page": ev.page, "reason": aligned.reason}
                )
        out.append(q.model_copy(update={"evidence": new_ev}))
    metrics = {
        "questions_total": len(questions),
        "questions_available": sum(q.available for q in questions),
        "evidence_items": n_items,
        "evidence_aligned": n_aligned,
        "alignment_rate": round(n_aligned / n_items, 4) if n_items else 0.0,
        "pages_moved": sum(
            1
            for q in out
            if q.available
            for e in q.evidence
            if e.aligned and e.aligned_page != e.page and formats.get(e.doc_id, "pdf") == "pdf"
        ),
        "align_threshold": threshold,
        "align_number_threshold": number_threshold,
        "unaligned": unaligned,
    }
    return out, metrics
