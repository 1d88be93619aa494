"""Finance-aware search rules (finrag.retrieve.finance): query expansion, statement routing, page neighbours."""

from __future__ import annotations

import pytest

from factories import LetterEmbedder, page_chunk
from finrag.core.contracts import Chunk
from finrag.retrieve.finance import expand_query, page_statement, question_statements
from finrag.retrieve.methods import base_method, build_search_context
from finrag.retrieve.search import SEARCH_METHODS, BM25Index, SearchContext, search

CASH_FLOW_PAGE = (
    "CONSOLIDATED STATEMENTS OF CASH FLOWS (in millions) | 2018 | 2017 | Net income | 5,363 | 4,869 | "
    "Purchases of property, plant and equipment | (1,577) | (1,373) | Net cash provided by operating activities | "
    "6,439 | 6,240 | Dividends paid | (3,193) | (2,803)"
)
BALANCE_PAGE = (
    "CONSOLIDATED BALANCE SHEETS (in millions) | 2018 | 2017 | Total current assets | 13,709 | 14,277 | "
    "Total assets | 36,500 | 37,987 | Total current liabilities | 7,244 | 7,687"
)
PROSE_PAGE = (
    "Our capital expenditures are planned to support growth. Management discusses the statements of cash flows "
    "below and the capital spending plans for the next year, which depend on demand."
)


def _doc_chunks(doc: str, texts: list[str]) -> list[Chunk]:
    return [page_chunk(doc, i, t) for i, t in enumerate(texts)]


def test_expansion_spells_out_abbreviations_once():
    q = expand_query("What was 3M's capex and CapEx growth?")
    assert q.startswith("What was 3M's capex and CapEx growth?")
    assert q.count("purchases of property, plant and equipment") == 1
    assert expand_query("Describe the company's strategy.") == "Describe the company's strategy."
    # whole words only: "eps" inside "steps" and "sales" inside "wholesale" do not expand
    assert expand_query("next steps for wholesalers") == "next steps for wholesalers"


def test_question_statements():
    assert question_statements("What is the FY2018 capital expenditure amount?") == {"cashflow"}
    assert question_statements("What is Adobe's quick ratio for FY2022?") == {"balance"}
    assert question_statements("What is the gross margin of Best Buy?") == {"income"}
    assert question_statements("Does the company face litigation risk?") == set()


def test_page_statement_needs_title_and_table_shape():
    assert page_statement(CASH_FLOW_PAGE) == "cashflow"
    assert page_statement(BALANCE_PAGE) == "balance"
    assert page_statement(PROSE_PAGE) is None  # names a statement, but is no table of figures
    assert page_statement("") is None


def _ctx(chunks: list[Chunk]) -> SearchContext:
    return SearchContext(chunks=chunks, bm25=BM25Index([c.text for c in chunks]), depth=10, rrf_k=60)


def test_routing_lifts_the_statement_page():
    chunks = _doc_chunks("D", [PROSE_PAGE, BALANCE_PAGE, CASH_FLOW_PAGE])
    ctx = _ctx(chunks)
    q = "What were the capital expenditures in 2018?"
    plain = [i for i, _ in search(ctx, "bm25", q, 3)]
    routed = [i for i, _ in search(ctx, "bm25+route", q, 3)]
    assert plain[0] == 0  # the prose page says "capital expenditures" twice
    assert routed[0] == 2  # the cash flow statement comes first once routed
    assert sorted(routed) == sorted(plain)


def test_neighbours_bring_the_continued_page_within_its_document():
    texts = ["cash flow statement part one capex 1,577", "continued: dividends paid 3,193", "unrelated text"]
    chunks = _doc_chunks("A", texts) + _doc_chunks("B", ["capex plans 2019"])
    ctx = _ctx(chunks)
    hits = [i for i, _ in search(ctx, "bm25+neighbours", "capex 1,577", 3)]
    assert 1 in hits  # the page after the top hit, though BM25 alone does not rank it
    assert 1 not in [i for i, _ in search(ctx, "bm25", "capex 1,577", 3)]
    # the neighbour of document A's last page is not document B's first
    assert 3 not in [i for i, _ in search(ctx, "bm25+neighbours", "unrelated text", 1)]
    # a filter is respected: no neighbour outside `allowed`
    assert 1 not in [i for i, _ in search(ctx, "bm25+neighbours", "capex 1,577", 3, allowed={0, 2})]


def test_every_base_and_rule_is_registered():
    for base in ("bm25", "dense", "hybrid"):
        for rule in ("expand", "route", "neighbours", "finance"):
            assert f"{base}+{rule}" in SEARCH_METHODS
            SEARCH_METHODS.get(f"{base}+{rule}")


def test_dense_variant_without_dense_index_says_what_is_missing():
    ctx = _ctx(_doc_chunks("D", [BALANCE_PAGE]))
    with pytest.raises(ValueError, match="DenseRetriever"):
        search(ctx, "dense+finance", "total assets", 1)


def test_wrapped_dense_base_gets_the_dense_index(monkeypatch):
    import finrag.retrieve.embedding as embedding

    monkeypatch.setattr(embedding, "make_embedder", lambda name, **kw: LetterEmbedder())
    chunks = _doc_chunks("D", [PROSE_PAGE, BALANCE_PAGE, CASH_FLOW_PAGE])
    vectors = LetterEmbedder().embed_passages([c.text for c in chunks])
    p = {"bm25": {}, "store": "faiss", "depth": 10, "rrf_k": 60, "rerank_depth": 5, "embedders": {}}
    assert build_search_context(chunks, vectors, "letters", p, methods=["bm25+route"]).dense is None
    ctx = build_search_context(chunks, vectors, "letters", p, methods=["dense+route"])
    assert ctx.dense is not None
    hits = search(ctx, "dense+route", "What were the capital expenditures in 2018?", 3)
    assert hits[0][0] == 2  # routed to the cash flow statement
    assert base_method("hybrid+finance") == "hybrid" and base_method("bm25") == "bm25"
