"""The 40 hand-written trick questions: schema, counts, and (with the mirror) every quote and figure checked
against the parsed filings, so a wrong page, a mistyped number or an 'absent' term that is present fails here."""

from __future__ import annotations

import re
from collections import Counter
from functools import cache
from itertools import permutations
from pathlib import Path

import pytest

from finrag.core.contracts import Question
from finrag.ingest.financebench import resolve_sources
from finrag.ingest.parse import parse_filing
from finrag.ingest.trick import KINDS, TrickQuestionError, absent_terms, load_trick_questions
from finrag.score.numbers import Figure, extract_figures

QUESTIONS = load_trick_questions()
BY_KIND = {k: [q for q in QUESTIONS if q.kind == k] for k in KINDS}
ANSWERABLE = BY_KIND["trick_single"] + BY_KIND["trick_multi"]
_NUM_TOKEN = re.compile(r"\d[\d,]*(?:\.\d+)?")


def _standalone(token: str) -> re.Pattern:
    """The number token not glued into a longer number ('978' does not match inside '4,978' or '978.5')."""
    return re.compile(r"(?<![\d,.])" + re.escape(token) + r"(?!\d|[,.]\d)")


def norm(text: str) -> str:
    """Whitespace collapsed, case folded: how a quote is matched against page text."""
    return " ".join(text.split()).casefold()


def printed(f: Figure) -> float:
    """The magnitude as printed (scale words and signs dropped): '$(6,841) million' -> 6841."""
    return round(abs(f.value / f.scale), 6)


def amounts(text: str) -> list[Figure]:
    return [f for f in extract_figures(text) if not f.is_year]


def quote_values(q: Question, doc_id: str | None = None) -> set[float]:
    return {printed(f) for e in q.evidence if doc_id in (None, e.doc_id) for f in amounts(e.text)}


def derivable(f: Figure, inputs: list[float]) -> bool:
    """Is f a difference, ratio or percent change of two inputs, to the precision it is written with?"""
    tol = 0.5 * 10 ** (-f.decimals) + 1e-9
    target = printed(f)
    for a, b in permutations(inputs, 2):
        for c in (a - b, a / b if b else None, (a - b) / b * 100 if b else None):
            if c is not None and abs(abs(c) - target) <= tol:
                return True
    return False


# ---------------------------------------------------------------- schema (no data needed)


def test_ten_of_each_kind_and_unique_qids():
    assert Counter(q.kind for q in QUESTIONS) == dict.fromkeys(KINDS, 10)
    qids = [q.qid for q in QUESTIONS]
    assert len(qids) == len(set(qids)) == 40


def test_schema_and_behaviour_per_kind():
    want = {"trick_single": "answer", "trick_multi": "answer", "trick_unanswerable": "decline"}
    want["trick_false_premise"] = "flag_false_premise"
    for q in QUESTIONS:
        assert isinstance(q, Question)
        assert q.expected_behaviour == want[q.kind], q.qid
        assert q.evidence and all(e.page >= 0 and e.text.strip() for e in q.evidence), q.qid
        assert {e.doc_id for e in q.evidence} <= set(q.doc_ids), q.qid
        assert bool(q.premise_figures) == (q.kind == "trick_false_premise"), q.qid
    for q in BY_KIND["trick_multi"]:
        assert len({e.doc_id for e in q.evidence}) >= 2, q.qid
    for q in BY_KIND["trick_unanswerable"]:
        assert absent_terms(q.justification), q.qid


def test_spread_over_companies_and_documents():
    companies = {c.strip() for q in QUESTIONS for c in q.company.split(";")}
    docs = {d for q in QUESTIONS for d in q.doc_ids}
    assert len(companies) >= 15 and len(docs) >= 15, (sorted(companies), sorted(docs))


def test_false_premises_are_in_the_question_and_not_in_the_evidence():
    for q in BY_KIND["trick_false_premise"]:
        for p in q.premise_figures:
            assert p in q.question, (q.qid, p)
            made_up = {printed(f) for f in amounts(p)}
            assert made_up and not made_up & quote_values(q), (q.qid, p)


def test_answer_figures_are_in_the_quotes():
    """Single: every figure quoted. False premise: every figure but the premise's quoted. Multi: inputs quoted
    (at least one from each document), everything else computed from them."""
    for q in BY_KIND["trick_single"] + BY_KIND["trick_false_premise"]:
        premise = {printed(f) for p in q.premise_figures for f in amounts(p)}
        for f in amounts(q.answer):
            assert printed(f) in quote_values(q) or printed(f) in premise, (q.qid, f.raw)
    for q in BY_KIND["trick_single"]:
        assert amounts(q.answer), q.qid
    for q in BY_KIND["trick_multi"]:
        figs = amounts(q.answer)
        inputs = [printed(f) for f in figs if printed(f) in quote_values(q)]
        for doc in {e.doc_id for e in q.evidence}:
            assert set(inputs) & quote_values(q, doc), (
                q.qid,
                doc,
                "no answer figure quoted from this document",
            )
        for f in figs:
            assert printed(f) in inputs or derivable(f, inputs), (q.qid, f.raw, "neither quoted nor computed")


def test_derivable_rejects_a_wrong_computation():
    [f] = amounts("an increase of 26.5%")
    assert not derivable(f, [4795.5, 17606.0])
    [g] = amounts("an increase of 267.1%")
    assert derivable(g, [4795.5, 17606.0])


def test_malformed_entry_names_file_and_qid(tmp_path: Path):
    good = (
        "- qid: trick_single_01\n  kind: trick_single\n  question: What was it in 2020?\n  answer: '5'\n"
        "  expected_behaviour: answer\n  company: X\n  period: FY2020\n  doc_ids: [X_2020_10K]\n"
        "  evidence:\n    - {doc_id: X_2020_10K, page: 3, text: 'it was 5'}\n  premise_figures: []\n  note: ''\n"
    )
    f = tmp_path / "trick.yaml"
    f.write_text(good)
    assert load_trick_questions(f)[0].evidence[0].page == 3
    cases = {
        good.replace("page: 3", "page: three"): "evidence.0.page",
        good.replace("expected_behaviour: answer", "expected_behaviour: decline"): "needs expected_behaviour",
        good.replace("  note: ''\n", ""): "note",
        good.replace("premise_figures: []", "premise_figures: ['$9']"): "premise_figures",
        good.replace("doc_id: X_2020_10K,", "doc_id: Y_2020_10K,"): "not in doc_ids",
        good + good: "duplicate qid",
    }
    for text, why in cases.items():
        f.write_text(text)
        with pytest.raises(TrickQuestionError) as exc:
            load_trick_questions(f)
        msg = str(exc.value)
        assert str(f) in msg and "trick_single_01" in msg and why in msg and "\n" not in msg, msg
    f.write_text("- qid: [unclosed\n")
    with pytest.raises(TrickQuestionError, match="invalid YAML"):
        load_trick_questions(f)


# ---------------------------------------------------------------- against the real filings


@pytest.fixture(scope="session")
def pages(mirror: Path):
    """doc_id -> normalised page texts; each filing parsed once per test session."""
    sources = resolve_sources(mirror, sorted({d for q in QUESTIONS for d in q.doc_ids}))

    @cache
    def get(doc_id: str) -> list[str]:
        assert doc_id in sources, f"{doc_id}: not in the mirror"
        return [norm(p.text) for p in parse_filing(mirror / sources[doc_id].rel_path, doc_id)]

    return get


def test_every_quote_is_on_its_page(pages):
    for q in QUESTIONS:
        for e in q.evidence:
            doc = pages(e.doc_id)
            assert e.page < len(doc), (q.qid, e.doc_id, e.page)
            if norm(e.text) not in doc[e.page]:
                found = [i for i, t in enumerate(doc) if norm(e.text) in t]
                pytest.fail(f"{q.qid}: quote not on {e.doc_id} page {e.page} (found on {found}): {e.text!r}")


def test_unanswerable_terms_are_absent(pages):
    for q in BY_KIND["trick_unanswerable"]:
        for term in absent_terms(q.justification):
            for d in q.doc_ids:
                hits = [i for i, t in enumerate(pages(d)) if norm(term) in t]
                assert not hits, f"{q.qid}: {term!r} is in {d} on pages {hits}"


def test_multi_questions_need_both_documents(pages):
    """No single document holds all inputs: each document lacks some figure quoted from another one."""
    for q in BY_KIND["trick_multi"]:
        answer = {printed(f) for f in amounts(q.answer)}
        docs = {e.doc_id for e in q.evidence}
        for d in docs:
            text = " ".join(pages(d))
            foreign = [
                tok
                for e in q.evidence
                if e.doc_id != d
                for f in amounts(e.text)
                if printed(f) in answer
                for tok in _NUM_TOKEN.findall(f.raw)
            ]
            assert foreign and not all(_standalone(tok).search(text) for tok in foreign), (q.qid, d, foreign)
