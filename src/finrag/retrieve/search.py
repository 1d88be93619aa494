"""Lexical, dense and hybrid search over chunks, plus the metadata filter that narrows a question to its filings.

- `BM25Index`: rank-bm25's BM25Okapi supplies idf, document lengths and term frequencies; its per-query
  `get_scores` loops in Python over every document for every query term (40k chunks x 150 queries would take
  many minutes), so the same formula is precomputed once as a sparse term-weight matrix and a query is one sparse
  column sum. `tests/test_search.py` checks the scores equal `BM25Okapi.get_scores` to 1e-9.
- `rrf`: reciprocal rank fusion (Cormack et al. 2009), score(d) = sum_i w_i / (k + rank_i(d)), rank 1-based.
- `SEARCH_METHODS`: "bm25", "dense", "hybrid" (RRF of both), "hybrid_rerank" (hybrid, then a cross-encoder
  reorders the top `rerank_depth`), each `method(ctx, query, k, allowed=None) -> [(chunk index, score)]`.
- `question_filter`: the company (and year, when the question names one) read from the question text.

Dense retrieval and reranking are protocols here; embedding.py / reranker.py implement them.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

import numpy as np
from scipy import sparse

from finrag.core.contracts import Chunk, Document, Question
from finrag.core.registry import Registry
from finrag.core.text import SEARCH_STOP_EN, SEARCH_STOP_ES, fold_accents

Hit = tuple[int, float]


@runtime_checkable
class DenseRetriever(Protocol):
    def search(self, query: str, k: int) -> list[tuple[int, float]]:
        """Top-k (chunk index, score), best first, over the same chunk list as the SearchContext."""
        ...


@runtime_checkable
class Reranker(Protocol):
    def score(self, query: str, texts: list[str]) -> list[float]:
        """One relevance score per text (higher = more relevant)."""
        ...


# ------------------------------------------------------------------------------------------------ tokenizer


# a number with thousands/decimal separators (1,577.00 / 13.668,9 / 1.234.567) or any alphanumeric run
_TOKEN = re.compile(r"\d+(?:[.,]\d+)+|[^\W_]+")


def normalise_number(tok: str, language: str = "en") -> str:
    """Canonical form of a number token: separators resolved, trailing decimal zeros dropped.

    1,577.00 -> 1577 ; 13.668,9 -> 13668.9 ; 0.50 -> 0.5 ; 1.577 (es) -> 1577 ; 1.577 (en) -> 1.577.
    With both separators the later one is the decimal mark; a single kind used twice or more separates
    thousands; one separator followed by exactly three digits is the language's thousands mark (',' in
    English, '.' in Spanish), otherwise a decimal mark.
    """
    seps = [c for c in tok if c in ".,"]
    if not seps:
        return tok.lstrip("0") or "0"
    if "." in seps and "," in seps:
        dec = seps[-1]
    elif len(seps) > 1:
        dec = None
    else:
        thousands = "." if language == "es" else ","
        dec = None if (seps[0] == thousands and len(tok) - tok.rfind(seps[0]) - 1 == 3) else seps[0]
    if dec is None:
        intpart, frac = re.sub(r"[.,]", "", tok), ""
    else:
        i = tok.rfind(dec)
        intpart, frac = re.sub(r"[.,]", "", tok[:i]), tok[i + 1 :]
    intpart = intpart.lstrip("0") or "0"
    frac = frac.rstrip("0")
    return f"{intpart}.{frac}" if frac else intpart


class Tokenizer:
    """Lowercase, split on non-alphanumerics, keep separated numbers whole and add their canonical form.

    "$1,577.00 in 2018" -> ["1,577.00", "2018", "1577"]; "1577" -> ["1577"]; so a question's figure matches the filing's
    whichever way either writes it. English drops scikit-learn stop words; Spanish folds accents (documents and
    queries alike) and drops Spanish function words. Negations ("not", "no") and comparatives are
    kept: "did margins not improve" must not match "did margins improve" better.
    """

    def __init__(self, language: str = "en"):
        if language not in ("en", "es"):
            raise ValueError(f"unsupported language '{language}' (en, es)")
        self.language = language
        self.stop = SEARCH_STOP_EN if language == "en" else SEARCH_STOP_ES

    def __call__(self, text: str) -> list[str]:
        text = text.lower()
        if self.language == "es":
            text = fold_accents(text)
        stop = self.stop
        out = [t for t in _TOKEN.findall(text) if t not in stop]
        if (
            "," in text or "." in text
        ):  # canonical forms of separated numbers, appended (BM25 is a bag of words)
            for t in [t for t in out if t[0].isdigit() and ("," in t or "." in t)]:
                canon = normalise_number(t, self.language)
                if canon != t:
                    out.append(canon)
        return out


# ------------------------------------------------------------------------------------------------------ BM25


class BM25Index:
    """BM25Okapi (rank-bm25 parameters and idf, epsilon floor included) with precomputed sparse term weights."""

    def __init__(
        self,
        texts: Sequence[str],
        language: str = "en",
        k1: float = 1.5,
        b: float = 0.75,
        epsilon: float = 0.25,
    ):
        from rank_bm25 import BM25Okapi

        if len(texts) == 0:
            raise ValueError("BM25Index needs at least one text")
        self.tokenizer = Tokenizer(language)
        tokenized = [self.tokenizer(t) for t in texts]
        if not any(tokenized):
            raise ValueError("BM25Index: every text is empty after tokenization")
        okapi = BM25Okapi(tokenized, k1=k1, b=b, epsilon=epsilon)
        self.n = okapi.corpus_size
        self.vocab: dict[str, int] = {t: i for i, t in enumerate(okapi.idf)}
        idf = np.array([okapi.idf[t] for t in self.vocab])
        freqs = okapi.doc_freqs
        nnz = sum(len(f) for f in freqs)
        rows_a = np.repeat(np.arange(self.n), [len(f) for f in freqs])
        cols_a = np.fromiter((self.vocab[t] for f in freqs for t in f), dtype=np.int64, count=nnz)
        tf = np.fromiter((v for f in freqs for v in f.values()), dtype=float, count=nnz)
        dl = np.asarray(okapi.doc_len, dtype=float)[rows_a]
        w = idf[cols_a] * tf * (k1 + 1) / (tf + k1 * (1 - b + b * dl / okapi.avgdl))
        # column slices (one column per query term) are cheap in CSC
        self.weights = sparse.csc_matrix((w, (rows_a, cols_a)), shape=(self.n, len(self.vocab)))

    def scores(self, query: str) -> np.ndarray:
        """BM25 score of every text (0 for texts sharing no term with the query)."""
        ids = [self.vocab[t] for t in self.tokenizer(query) if t in self.vocab]
        if not ids:
            return np.zeros(self.n)
        # repeated query terms count once per occurrence, as in BM25Okapi.get_scores
        uniq, counts = np.unique(ids, return_counts=True)
        return np.asarray(self.weights[:, uniq] @ counts.astype(float)).ravel()

    def search(self, query: str, k: int, allowed: set[int] | None = None) -> list[Hit]:
        """Top-k (index, score), best first, ties by index; only texts sharing a term with the query."""
        return top_k(self.scores(query), k, allowed)


def top_k(scores: np.ndarray, k: int, allowed: Iterable[int] | None = None) -> list[Hit]:
    """Indices of the k highest non-zero scores (restricted to `allowed`), best first, ties by lower index."""
    cand = np.flatnonzero(scores)
    if allowed is not None:
        cand = np.intersect1d(cand, np.fromiter(allowed, dtype=np.int64), assume_unique=False)
    if cand.size == 0 or k <= 0:
        return []
    s = scores[cand]
    if cand.size > k:
        part = np.argpartition(-s, k - 1)[:k]
        kth = s[part].min()
        keep = s >= kth  # keep every tie of the k-th score so ties resolve by index, not by partition order
        cand, s = cand[keep], s[keep]
    order = np.lexsort((cand, -s))[:k]
    return [(int(cand[i]), float(s[i])) for i in order]


# ------------------------------------------------------------------------------------------------------ fusion


def rrf(
    rankings: Sequence[Sequence[int]],
    k: int = 60,
    weights: Sequence[float] | None = None,
    depth: int | None = None,
) -> list[Hit]:
    """Reciprocal rank fusion: score(d) = sum_i w_i / (k + rank_i(d)), rank 1-based, each ranking cut at `depth`.

    Ties are broken by the best single rank, then by index, so the result is deterministic.
    """
    weights = [1.0] * len(rankings) if weights is None else list(weights)
    if len(weights) != len(rankings):
        raise ValueError(f"rrf: {len(weights)} weights for {len(rankings)} rankings")
    score: dict[int, float] = {}
    best: dict[int, int] = {}
    for w, ranking in zip(weights, rankings, strict=True):
        seen: set[int] = set()
        for r, d in enumerate(ranking[:depth] if depth is not None else ranking, start=1):
            if d in seen:  # a ranking lists each item once; a repeat would double-count
                continue
            seen.add(d)
            score[d] = score.get(d, 0.0) + w / (k + r)
            best[d] = min(best.get(d, r), r)
    return sorted(score.items(), key=lambda x: (-x[1], best[x[0]], x[0]))


# ----------------------------------------------------------------------------------------------- methods


@dataclass
class SearchContext:
    """Everything a search method needs; `depth` cuts each ranking before fusion, `rerank_depth` is how many
    fused candidates the reranker reorders."""

    chunks: list[Chunk]
    bm25: BM25Index | None = None
    dense: DenseRetriever | None = None
    reranker: Reranker | None = None
    depth: int = 100
    rrf_k: int = 60
    weights: tuple[float, float] | None = None  # (bm25, dense) for RRF
    rerank_depth: int = 50
    _by_doc: dict[str, list[int]] = field(default_factory=dict, repr=False)
    # what a method wrapper works out once per index
    memo: dict[str, Any] = field(default_factory=dict, repr=False)

    def chunk_indices(self, doc_ids: Iterable[str]) -> set[int]:
        """Chunk indices of the given documents (for a metadata filter's `allowed`)."""
        if not self._by_doc:
            for i, c in enumerate(self.chunks):
                self._by_doc.setdefault(c.doc_id, []).append(i)
        return {i for d in doc_ids for i in self._by_doc.get(d, [])}

    def filtered_indices(self, question: Question, documents: Sequence[Document]) -> set[int] | None:
        """The chunks the company/period filter allows for `question` (None: no filter). Only documents this index
        holds are offered to the filter: a year match on an unindexed filing would leave nothing and switch the
        filter off, where the filter falls back to the company's indexed documents."""
        self.chunk_indices(())  # builds the per-document index
        indexed = [d for d in documents if d.doc_id in self._by_doc]
        return self.chunk_indices(question_filter(question, indexed)) or None


SearchMethod = Callable[[SearchContext, str, int, "set[int] | None"], list[Hit]]
SEARCH_METHODS: Registry[SearchMethod] = Registry("search method")


def _need(obj, what: str, method: str):
    if obj is None:
        raise ValueError(f"search method '{method}' needs a {what} in the SearchContext (none given)")
    return obj


@SEARCH_METHODS.register("bm25")
def bm25_search(ctx: SearchContext, query: str, k: int, allowed: set[int] | None = None) -> list[Hit]:
    return _need(ctx.bm25, "BM25Index", "bm25").search(query, k, allowed)


@SEARCH_METHODS.register("dense")
def dense_search(ctx: SearchContext, query: str, k: int, allowed: set[int] | None = None) -> list[Hit]:
    """Dense top-k; with a filter, ask for more and more (doubling) until k allowed hits or the whole corpus."""
    dense = _need(ctx.dense, "DenseRetriever", "dense")
    if allowed is None:
        return [(int(i), float(s)) for i, s in dense.search(query, k)][:k]
    n, fetch = len(ctx.chunks), max(4 * k, 100)
    while True:
        fetch = min(fetch, n)
        hits = [(int(i), float(s)) for i, s in dense.search(query, fetch) if i in allowed]
        if len(hits) >= k or fetch >= n:
            return hits[:k]
        fetch *= 2


@SEARCH_METHODS.register("hybrid")
def hybrid_search(ctx: SearchContext, query: str, k: int, allowed: set[int] | None = None) -> list[Hit]:
    lex = [i for i, _ in bm25_search(ctx, query, ctx.depth, allowed)]
    den = [i for i, _ in dense_search(ctx, query, ctx.depth, allowed)]
    return rrf([lex, den], k=ctx.rrf_k, weights=ctx.weights, depth=ctx.depth)[:k]


@SEARCH_METHODS.register("hybrid_rerank")
def hybrid_rerank_search(
    ctx: SearchContext, query: str, k: int, allowed: set[int] | None = None
) -> list[Hit]:
    """Hybrid top `rerank_depth`, reordered by the reranker's scores (ties keep the hybrid order)."""
    reranker = _need(ctx.reranker, "Reranker", "hybrid_rerank")
    cand = [i for i, _ in hybrid_search(ctx, query, max(ctx.rerank_depth, k), allowed)]
    if not cand:
        return []
    scores = list(reranker.score(query, [ctx.chunks[i].text for i in cand]))
    if len(scores) != len(cand):
        raise ValueError(f"reranker returned {len(scores)} scores for {len(cand)} texts")
    order = sorted(range(len(cand)), key=lambda j: (-float(scores[j]), j))
    return [(cand[j], float(scores[j])) for j in order[:k]]


def search(ctx: SearchContext, method: str, query: str, k: int, allowed: set[int] | None = None) -> list[Hit]:
    """Run a registered search method by name."""
    return SEARCH_METHODS.get(method)(ctx, query, k, allowed)


# ----------------------------------------------------------------------------------------- metadata filter

_SUFFIXES = {
    "inc",
    "incorporated",
    "corp",
    "corporation",
    "co",
    "company",
    "companies",
    "plc",
    "ltd",
    "limited",
    "llc",
    "lp",
    "sa",
    "ag",
    "nv",
    "the",
    "group",
    "holdings",
    "de",
}

# Names used in questions that no document field spells out (FinanceBench writes "JnJ", "AMEX", "JPM").
COMPANY_ALIASES: dict[str, tuple[str, ...]] = {
    "johnson johnson": ("jnj", "j j", "johnson and johnson"),
    "american express": ("amex",),
    "jpmorgan": ("jpm", "jp morgan", "j p morgan", "jpmorgan chase"),
    "coca cola": ("coke",),
    "block": ("square",),
    "3m": ("mmm",),
    "mcdonalds": ("mcdonald",),
    "pepsico": ("pepsi",),
    "advanced micro devices": ("amd",),
}

_YEAR_PATTERNS = [
    re.compile(r"\bfy\s?'?(\d{4}|\d{2})(?!\d)"),  # FY2018, FY 2022, FY22, FY'22, FY2023Q1
    re.compile(
        r"\b(?:q[1-4]|h[12])\s?'?\s?(?:of\s+)?(?:fy\s?)?(\d{4})(?!\d)"
    ),  # Q2 of FY2023, Q2'2023, Q22023
    re.compile(r"(?<![\d,.$])((?:19|20)\d{2})(?!\d)(?![.,]\d)"),  # a bare year: in 2022, August 30, 2023
]


def _norm(s: str, possessive: bool = True) -> str:
    s = fold_accents(s.lower()).replace("&", " ")
    if possessive:  # "Pfizer's" -> "pfizer" in a question; not in names ("McDonald's" stays "mcdonalds")
        s = re.sub(r"['\u2019]s\b", " ", s)
    s = re.sub(r"[\u2019'.]", "", s)  # McDonald's -> mcdonalds, J.P. -> jp
    return " ".join(re.sub(r"[^a-z0-9]+", " ", s).split())


def company_key(name: str) -> str:
    """Normalised company name: lowercase, no punctuation, legal suffixes dropped ("3M COMPANY" -> "3m")."""
    toks = _norm(name, possessive=False).split()
    while len(toks) > 1 and toks[-1] in _SUFFIXES:
        toks.pop()
    while len(toks) > 1 and toks[0] == "the":
        toks.pop(0)
    return " ".join(toks)


def _doc_prefix(doc_id: str) -> str:
    """Company part of a FinanceBench-style id: JOHNSON_JOHNSON_2023Q2_EARNINGS -> johnson johnson."""
    m = re.match(r"(.+?)_(?:\d{4}|\d{4}Q\d|8K|10K|10Q|10-K|10-Q)(?:_|$)", doc_id, re.IGNORECASE)
    return _norm((m.group(1) if m else doc_id).replace("_", " "))


def doc_year(doc: Document) -> int | None:
    """Fiscal year of a document: its `period` field (2018, 2023-06-30, FY2023), else the year in its id."""
    for s in (doc.period, doc.doc_id):
        m = re.search(r"(?<!\d)((?:19|20)\d{2})(?!\d)", s or "")
        if m:
            return int(m.group(1))
    return None


def question_years(text: str) -> set[int]:
    """Fiscal years a question names: FY2018, FY22, Q2 of FY2023, Q2'2023, 2021 Q1, in 2022, May 26, 2023."""
    t = text.lower()
    years: set[int] = set()
    for pat in _YEAR_PATTERNS:
        for m in pat.finditer(t):
            y = m.group(1)
            years.add(int(y) if len(y) == 4 else 2000 + int(y))
    return {y for y in years if 1990 <= y <= 2100}


def _company_names(docs: Sequence[Document]) -> dict[str, set[str]]:
    """company key -> the names that refer to it in a question (key, id prefix, aliases, leading acronym)."""
    out: dict[str, set[str]] = {}
    for d in docs:
        key = company_key(d.company or _doc_prefix(d.doc_id))
        names = out.setdefault(key, set())
        names.update(
            {key, _doc_prefix(d.doc_id), _doc_prefix(d.doc_id).replace(" ", ""), key.replace(" ", "")}
        )
        first = (d.company or "").split()
        if len(first) > 1 and not d.company.isupper() and first[0].isupper() and len(first[0]) >= 2:
            names.add(_norm(first[0]))  # a brand acronym leading a mixed-case name: "MGM Resorts" -> "mgm"
        for k2, aliases in COMPANY_ALIASES.items():
            if key == k2 or key.replace(" ", "") == k2.replace(" ", ""):
                names.update(aliases)
    for names in out.values():
        names.discard("")
    return out


def question_companies(text: str, docs: Sequence[Document]) -> set[str]:
    """Company keys (see `company_key`) whose name, id prefix or alias appears as whole words in the text."""
    qn = f" {_norm(text)} "
    found = set()
    for key, names in _company_names(docs).items():
        if any(f" {n} " in qn for n in names):
            found.add(key)
    return found


def question_filter(question: Question, docs: Sequence[Document]) -> set[str]:
    """Doc ids a question may draw on, read from the question TEXT (never from its gold doc_ids).

    Company: required (its name, id prefix or a known alias as whole words). Period: when the question names
    a year, keep that company's documents of a named year; if that leaves nothing, fall back to all of the
    company's documents. A question that names no known company is not filtered (all doc ids): the filter
    narrows, it never guesses.
    """
    companies = question_companies(question.question, docs)
    if not companies:
        return {d.doc_id for d in docs}
    by_company = [d for d in docs if company_key(d.company or _doc_prefix(d.doc_id)) in companies]
    years = question_years(question.question)
    if years:
        dated = {d.doc_id for d in by_company if doc_year(d) in years}
        if dated:
            return dated
    return {d.doc_id for d in by_company}
