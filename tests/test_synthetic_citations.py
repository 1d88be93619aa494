"""Anthropic document-mode citations end to end on the synthetic corpus, against the local API simulator.

Questions of the synthetic corpus (default seed) get passages cut from their gold pages (plus one distractor page
from another filing), sent through the `anthropic` backend in document mode. Each returned `char_location`
citation (0-based start, exclusive end, into the document's text) must map back to its passage and then to the
page, `text[start:end] == cited_text`, and citation precision by passage coverage
(`finrag.synthetic.study.citation_precision`) is computed from the cited spans. The API key is a fake set here
and must appear in no output.
"""

from __future__ import annotations

import json
import logging

import pytest

from finrag.core.contracts import Answer, Chunk, Citation, Passage, Span
from finrag.llm.backends.anthropic import AnthropicBackend
from finrag.llm.cache import CachedLLM
from finrag.llm.prompts.render import as_documents, render
from finrag.llm.simulators import AnthropicSimulator
from finrag.synthetic.generator import generate_corpus
from finrag.synthetic.study import citation_precision

FAKE_KEY = "sk-ant-api03-FAKE-synthetic-citations-7f3c9e1d2b"
MARGIN = 120  # characters of page kept around the gold passages, so passage offsets differ from page offsets
PRICES = {"input_per_mtok": 1.0, "output_per_mtok": 5.0}


@pytest.fixture(scope="module")
def corpus():
    documents, pages, questions = generate_corpus()  # default seed
    return {(p.doc_id, p.page): p for p in pages}, questions


def pick_questions(questions, n_kinds: int = 7):
    """The first answerable question of each kind (deterministic for the default seed)."""
    out, kinds = [], set()
    for q in questions:
        if q.answerable and q.kind not in kinds:
            kinds.add(q.kind)
            out.append(q)
    return out[:n_kinds]


def build_passages(q, pages, distractor_key) -> tuple[list[Passage], dict[int, tuple[str, int, int]]]:
    """Passage 1: a distractor page of another filing; then one window per gold page (the gold spans + MARGIN).

    Returns the passages and, per passage number, (doc_id, page, offset of the passage text in Page.text).
    """
    windows: dict[tuple[str, int], tuple[int, int]] = {}
    for g in q.gold_passages:
        s, e = windows.get((g.doc_id, g.page), (g.start, g.end))
        windows[(g.doc_id, g.page)] = (min(s, g.start), max(e, g.end))
    spans = [(distractor_key, (0, len(pages[distractor_key].text)))]
    spans += [
        (key, (max(0, s - MARGIN), min(len(pages[key].text), e + MARGIN))) for key, (s, e) in windows.items()
    ]
    passages, where = [], {}
    for n, ((doc, page), (s, e)) in enumerate(spans, 1):
        passages.append(
            Passage(
                n=n,
                chunk_id=f"{doc}:{page}:{s}-{e}",
                doc_id=doc,
                pages=[page],
                text=pages[(doc, page)].text[s:e],
            )
        )
        where[n] = (doc, page, s)
    return passages, where


def cited_chunk(c: Citation, passages: list[Passage], where: dict, pages) -> Chunk:
    """The cited characters as a chunk with page offsets; refuses a citation whose offsets do not hold."""
    p = passages[c.passage - 1]
    if c.start is None or c.end is None or not (0 <= c.start < c.end <= len(p.text)):
        raise ValueError(f"citation offsets {c.start}-{c.end} outside passage [{c.passage}]")
    if p.text[c.start : c.end] != c.cited_text:
        raise ValueError(f"passage [{c.passage}] text at {c.start}-{c.end} is not the cited text")
    doc, page, off = where[c.passage]
    s, e = off + c.start, off + c.end
    if pages[(doc, page)].text[s:e] != c.cited_text:
        raise ValueError(f"page {doc}:{page} at {s}-{e} is not the cited text")
    return Chunk(
        chunk_id=f"cite:{doc}:{page}:{s}-{e}",
        doc_id=doc,
        pages=[page],
        spans=[Span(page=page, start=s, end=e)],
        text=c.cited_text,
        body=c.cited_text,
    )


def hits_gold(ch: Chunk, gold) -> bool:
    """Does the cited span cover at least half of the characters of a gold passage of its page? (character sets,
    independent of study.covered_chars' interval merging)"""
    cited = set(range(ch.spans[0].start, ch.spans[0].end))
    return any(
        (g.doc_id, g.page) == (ch.doc_id, ch.pages[0])
        and len(cited & set(range(g.start, g.end))) >= 0.5 * (g.end - g.start)
        for g in gold
    )


def test_anthropic_citations_map_to_pages_and_give_citation_precision(corpus, tmp_path, monkeypatch, caplog):
    caplog.set_level(logging.DEBUG)
    monkeypatch.setenv("ANTHROPIC_API_KEY", FAKE_KEY)
    pages, questions = corpus
    chosen = pick_questions(questions)
    assert len(chosen) == 7 and all(q.gold_passages for q in chosen)
    sim = AnthropicSimulator()
    backend = AnthropicBackend("claude-sim", prices=PRICES, cap_usd=5.0, http_client=sim.http_client())
    llm = CachedLLM(backend, tmp_path / "cache", mode="record", stage="synthetic_citations")

    answers, precisions, n_cits = [], {}, 0
    for i, q in enumerate(chosen):
        nxt = chosen[(i + 1) % len(chosen)].gold_passages[0]
        assert nxt.doc_id not in q.doc_ids
        passages, where = build_passages(q, pages, (nxt.doc_id, nxt.page))
        messages, template_id = render("plain", q.question, passages, document_mode=True)
        docs = as_documents(passages)
        comp, key, hit = llm.complete(
            messages, {"max_tokens": 300}, template_id=template_id, item_id=q.qid, documents=docs
        )
        assert not hit
        # document mode: the passages travel as document blocks with citations on, not inside the prompt text
        blocks = sim.requests[-1]["messages"][-1]["content"]
        assert [b["type"] for b in blocks] == ["document"] * len(passages) + ["text"]
        assert all(b["citations"] == {"enabled": True} for b in blocks[:-1])
        assert [b["source"]["data"] for b in blocks[:-1]] == [p.text for p in passages]
        assert all(p.text not in blocks[-1]["text"] for p in passages)
        assert comp.citations, f"{q.qid}: no citation returned"
        chunks = [cited_chunk(c, passages, where, pages) for c in comp.citations]
        n_cits += len(chunks)
        prec = citation_precision(chunks, q.gold_passages, min_fraction=0.5)
        # independent reading, by character sets: a citation is right when it covers at least half of a gold
        # passage of the same page (the simulator's sentence splitter may cut a table row at "298.669")
        expect = sum(hits_gold(ch, q.gold_passages) for ch in chunks) / len(chunks)
        assert prec == pytest.approx(expect), (q.qid, prec, expect)
        precisions[q.qid] = prec
        answers.append(
            Answer(
                qid=q.qid,
                run_id="synthetic-citations",
                backend="anthropic",
                model=backend.model,
                prompt_style="plain",
                template_id=template_id,
                context_mode="oracle",
                passages=passages,
                prompt=messages,
                text=comp.text,
                citations=comp.citations,
                usage=comp.usage,
                cost_usd=comp.cost_usd,
                cache_key=key,
            )  # fmt: skip
        )
    assert n_cits >= len(chosen)
    assert all(0.0 <= v <= 1.0 for v in precisions.values())
    assert any(v == 1.0 for v in precisions.values()), (
        precisions
    )  # most simulated citations hit the gold line

    # the recorded answers replay with the same citations, without the backend or the network
    replay = CachedLLM(backend.identity(), tmp_path / "cache", mode="replay")
    n_req = len(sim.requests)
    for a in answers:
        docs = as_documents(a.passages)
        comp, key, hit = replay.complete(
            a.prompt, {"max_tokens": 300}, template_id=a.template_id, documents=docs
        )
        assert hit and key == a.cache_key and comp.citations == a.citations
    assert len(sim.requests) == n_req

    # the key reached the (simulated) API, and nowhere else
    assert sim.auth_headers and all(FAKE_KEY in h for h in sim.auth_headers)
    outputs = [
        *(a.model_dump_json() for a in answers),
        json.dumps(precisions),
        caplog.text,
        repr(backend),
        json.dumps(vars(backend), default=repr),
        *(p.read_text() for p in (tmp_path / "cache").rglob("*") if p.is_file()),
    ]
    assert all(FAKE_KEY not in o for o in outputs)


def test_a_shifted_citation_is_refused(corpus):
    """The offset check is what makes the test above mean something: one character off must fail it."""
    pages, questions = corpus
    q = pick_questions(questions)[1]
    nxt = pick_questions(questions)[2].gold_passages[0]
    passages, where = build_passages(q, pages, (nxt.doc_id, nxt.page))
    g = q.gold_passages[0]
    n = next(n for n, (d, p, _) in where.items() if (d, p) == (g.doc_id, g.page) and n > 1)
    off = where[n][2]
    good = Citation(passage=n, start=g.start - off, end=g.end - off, cited_text=g.text)
    ch = cited_chunk(good, passages, where, pages)
    assert ch.spans[0].start == g.start and citation_precision([ch], q.gold_passages) == 1.0
    with pytest.raises(ValueError, match="not the cited text"):
        cited_chunk(
            good.model_copy(update={"start": good.start + 1, "end": good.end + 1}), passages, where, pages
        )
    with pytest.raises(ValueError, match="outside passage"):
        cited_chunk(good.model_copy(update={"end": len(passages[n - 1].text) + 5}), passages, where, pages)
