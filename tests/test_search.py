"""BM25 (equal to rank-bm25), tokenizer, RRF by hand, search methods, and the question metadata filter."""

from __future__ import annotations

import json
import random

import numpy as np
import pytest
from rank_bm25 import BM25Okapi

from factories import page_chunk
from finrag.core.contracts import Document, Question
from finrag.retrieve.search import (
    SEARCH_METHODS,
    BM25Index,
    SearchContext,
    Tokenizer,
    company_key,
    fold_accents,
    normalise_number,
    question_filter,
    question_years,
    rrf,
    search,
    top_k,
)

CORPUS = [
    "3M capital expenditure: purchases of property, plant and equipment were $1,577 million in 2018.",
    "Operating income rose on higher sales volumes.",
    "Dividends paid to shareholders totalled 3,193 million.",
    "The company repurchased shares and paid dividends; dividends rose again.",
    "",
    "Net sales were 13.668,9 million euros.",
]


def test_tokenizer_keeps_numbers_and_adds_canonical_form():
    tok = Tokenizer("en")
    assert tok("Capex was $1,577.00 (2018)") == ["capex", "1,577.00", "2018", "1577"]
    assert tok("FY2018 10-K") == ["fy2018", "10", "k"]
    assert "the" not in tok("the net income") and "not" in tok("not material")
    assert tok("the interest amount") == ["interest", "amount"]  # content words of filings are kept
    assert normalise_number("13.668,9") == "13668.9"
    assert normalise_number("1,577") == "1577"
    assert normalise_number("0.50") == "0.5"
    assert normalise_number("1.577", "es") == "1577" and normalise_number("1.577", "en") == "1.577"
    assert normalise_number("1.234.567") == "1234567"


def test_spanish_accent_folding_and_stop_words():
    tok = Tokenizer("es")
    assert fold_accents("inversión año") == "inversion ano"
    assert tok("La inversión del año") == ["inversion", "ano"]
    idx = BM25Index(
        ["la inversión en activos", "ventas netas del periodo", "gastos de personal"], language="es"
    )
    hits = idx.search("inversion", 3)
    assert [i for i, _ in hits] == [0]
    with pytest.raises(ValueError, match="unsupported language"):
        Tokenizer("fr")


def test_bm25_scores_equal_rank_bm25():
    rng = random.Random(7)
    vocab = [f"t{i}" for i in range(60)] + ["1,577", "2018", "dividends"]
    texts = [" ".join(rng.choices(vocab, k=rng.randint(3, 40))) for _ in range(200)] + CORPUS
    idx = BM25Index(texts, k1=1.2, b=0.6)
    tok = Tokenizer("en")
    ref = BM25Okapi([tok(t) for t in texts], k1=1.2, b=0.6)
    for q in ["t1 t2 t2 dividends", "1,577 2018 t59", "t0", "absent words only", "t3 t3 t3"]:
        np.testing.assert_allclose(idx.scores(q), ref.get_scores(tok(q)), rtol=0, atol=1e-9)


def test_bm25_search_numbers_allowed_and_ties():
    idx = BM25Index(CORPUS)
    assert idx.search("capex $1577 million", 1)[0][0] == 0  # 1577 matches 1,577 through the canonical form
    assert idx.search("13668.9", 1)[0][0] == 5
    hits = idx.search("dividends", 5)
    assert [i for i, _ in hits] == [3, 2] and hits[0][1] > hits[1][1]
    assert [i for i, _ in idx.search("dividends", 5, allowed={2, 4})] == [2]
    assert idx.search("zzz", 5) == []
    assert top_k(np.array([1.0, 2.0, 2.0, 0.0, 2.0]), 2) == [(1, 2.0), (2, 2.0)]
    with pytest.raises(ValueError):
        BM25Index([])


def test_rrf_hand_computed():
    # k=60: doc 1 is rank 2 in A and rank 1 in B -> 1/62 + 1/61; doc 0 rank 1 in A -> 1/61; doc 2 rank 3 in A,
    # rank 2 in B -> 1/63 + 1/62; doc 3 only in B at rank 3 -> 1/63
    out = dict(rrf([[0, 1, 2], [1, 2, 3]], k=60))
    assert out[1] == pytest.approx(1 / 62 + 1 / 61)
    assert out[2] == pytest.approx(1 / 63 + 1 / 62)
    assert out[0] == pytest.approx(1 / 61)
    assert out[3] == pytest.approx(1 / 63)
    assert [d for d, _ in rrf([[0, 1, 2], [1, 2, 3]], k=60)] == [1, 2, 0, 3]
    # depth cut: only the first two of each ranking count
    assert set(dict(rrf([[0, 1, 2], [1, 2, 3]], k=60, depth=2))) == {0, 1, 2}
    # weights: B counts double -> doc 3 (B rank 1) beats doc 0 (A rank 1)
    w = rrf([[0], [3]], k=1, weights=[1.0, 2.0])
    assert w == [(3, pytest.approx(1.0)), (0, pytest.approx(0.5))]
    # equal scores: better single rank first, then lower index
    assert [d for d, _ in rrf([[5, 4], [4, 5]], k=60)] == [4, 5]
    with pytest.raises(ValueError, match="weights"):
        rrf([[1]], weights=[1, 2])


class FakeDense:
    """Scores by fixed per-chunk similarity (stands in for embedding.py)."""

    def __init__(self, sims):
        self.sims = np.asarray(sims, dtype=float)
        self.calls: list[int] = []

    def search(self, query: str, k: int) -> list[tuple[int, float]]:
        self.calls.append(k)
        order = np.argsort(-self.sims, kind="stable")[:k]
        return [(int(i), float(self.sims[i])) for i in order]


class FakeReranker:
    def score(self, query: str, texts: list[str]) -> list[float]:
        return [float(t.count("dividends")) for t in texts]


def _chunks(texts):
    return [page_chunk(f"D{i % 2}", i, t, chunk_id=f"D{i % 2}:x:{i}") for i, t in enumerate(texts)]


def test_search_methods():
    chunks = _chunks(CORPUS)
    dense = FakeDense([0.1, 0.9, 0.5, 0.2, 0.0, 0.3])
    ctx = SearchContext(
        chunks=chunks,
        bm25=BM25Index([c.text for c in chunks]),
        dense=dense,
        reranker=FakeReranker(),
        depth=10,
        rerank_depth=4,
    )
    base = {"bm25", "dense", "hybrid", "hybrid_rerank"}
    assert set(SEARCH_METHODS.names()) >= base
    import finrag.retrieve.finance  # noqa: F401  (its import registers the finance-aware wrappers)

    finance = {
        f"{b}+{r}" for b in ("bm25", "dense", "hybrid") for r in ("expand", "route", "neighbours", "finance")
    }
    assert set(SEARCH_METHODS.names()) == base | finance
    assert [i for i, _ in search(ctx, "dense", "q", 2)] == [1, 2]
    lex = [i for i, _ in search(ctx, "bm25", "dividends", 10)]
    den = [i for i, _ in search(ctx, "dense", "dividends", 10)]
    assert search(ctx, "hybrid", "dividends", 3) == rrf([lex, den], k=60)[:3]
    rr = search(ctx, "hybrid_rerank", "dividends", 2)
    assert [i for i, _ in rr] == [3, 2] and rr[0][1] == 2.0
    # filter: only document D1 (odd chunk indices); dense over-fetches until enough allowed hits
    allowed = ctx.chunk_indices({"D1"})
    assert allowed == {1, 3, 5}
    assert all(i in allowed for i, _ in search(ctx, "hybrid", "dividends", 5, allowed))
    assert [i for i, _ in search(ctx, "dense", "q", 2, allowed)] == [1, 5]
    with pytest.raises(ValueError, match="needs a Reranker"):
        search(SearchContext(chunks=chunks, bm25=ctx.bm25, dense=dense), "hybrid_rerank", "q", 1)


# ---------------------------------------------------------------------------------------------- filter


def test_question_years():
    assert question_years("What is the FY2018 capex?") == {2018}
    assert question_years("quick ratio for Q2 of FY2023") == {2023}
    assert question_years("As of Q2'2023, is Pfizer") == {2023}
    assert question_years("drop in Q22023 year over year") == {2023}
    assert question_years("for AMD in FY22?") == {2022}
    assert question_years("lowest net revenue in 2021 Q1") == {2021}
    assert question_years("As of May 26, 2023, what") == {2023}
    assert question_years("paid $2,018 million and 1,2019 units") == set()
    assert question_years("What industry does AMCOR operate in?") == set()


def test_company_keys():
    assert company_key("3M COMPANY") == company_key("3M") == "3m"
    assert company_key("McDONALD\u2019S CORPORATION") == company_key("McDonalds")
    assert company_key("Johnson & Johnson") == "johnson johnson"
    assert company_key("Coca-Cola") == "coca cola"


DOCS = [
    Document(doc_id="3M_2018_10K", company="3M", form="10-K", period="2018"),
    Document(doc_id="3M_2022_10K", company="3M", form="10-K", period="2022"),
    Document(doc_id="3M_2023Q2_10Q", company="3M", form="10-Q", period="2023"),
    Document(
        doc_id="JOHNSON_JOHNSON_2023Q2_EARNINGS", company="Johnson & Johnson", form="EARNINGS", period="2023"
    ),
    Document(doc_id="JOHNSON_JOHNSON_2022_10K", company="Johnson & Johnson", form="10-K", period="2022"),
    Document(doc_id="AMCOR_2022_8K_dated-2022-07-01", company="Amcor", form="8-K", period="2022"),
    Document(doc_id="AMCOR_2023_10K", company="Amcor", form="10-K", period="2023"),
    Document(doc_id="MGMRESORTS_2022Q4_EARNINGS", company="MGM Resorts", form="EARNINGS", period="2022"),
]


def q(text: str) -> Question:
    return Question(qid="x", question=text)


def test_question_filter_hand_cases():
    assert question_filter(q("What is the FY2018 capex for 3M?"), DOCS) == {"3M_2018_10K"}
    assert question_filter(q("Does 3M have a healthy quick ratio for Q2 of FY2023?"), DOCS) == {
        "3M_2023Q2_10Q"
    }
    assert question_filter(q("Did JnJ's net earnings rise in Q2 of FY2023?"), DOCS) == {
        "JOHNSON_JOHNSON_2023Q2_EARNINGS"
    }
    assert question_filter(q("What industry does AMCOR primarily operate in?"), DOCS) == {
        "AMCOR_2022_8K_dated-2022-07-01",
        "AMCOR_2023_10K",
    }
    assert question_filter(q("What was MGM's interest coverage in FY2022?"), DOCS) == {
        "MGMRESORTS_2022Q4_EARNINGS"
    }
    # a named year with no document of that year: fall back to the company's documents
    assert question_filter(q("3M capex in FY2015?"), DOCS) == {"3M_2018_10K", "3M_2022_10K", "3M_2023Q2_10Q"}
    # no known company named: nothing is filtered out
    assert question_filter(q("Which nominees had more votes against?"), DOCS) == {d.doc_id for d in DOCS}


def test_question_filter_on_real_financebench(mirror):
    """Every open FinanceBench question against all 361 listed documents: the gold filing is almost always kept
    while the candidate set shrinks to a few filings."""
    fb = mirror / "financebench"
    docs, seen = [], set()
    for line in (fb / "financebench_document_information.jsonl").read_text(encoding="utf-8").splitlines():
        d = json.loads(line)
        if d["doc_name"] not in seen:
            seen.add(d["doc_name"])
            docs.append(
                Document(
                    doc_id=d["doc_name"],
                    company=d["company"],
                    form=d["doc_type"],
                    period=str(d["doc_period"]),
                )
            )
    recs = [
        json.loads(x)
        for x in (fb / "financebench_open_source.jsonl").read_text(encoding="utf-8").splitlines()
    ]
    kept, sizes = 0, []
    for r in recs:
        allowed = question_filter(Question(qid=r["financebench_id"], question=r["question"]), docs)
        kept += r["doc_name"] in allowed
        sizes.append(len(allowed))
    rate = kept / len(recs)
    print(
        f"gold doc kept for {kept}/{len(recs)} = {rate:.3f}; median allowed {np.median(sizes)} of {len(docs)}"
    )
    assert rate >= 0.95
    assert np.median(sizes) <= 5
