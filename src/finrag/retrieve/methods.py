"""Assemble a search setup (chunks + BM25 + dense store + re-ranker) and run it over questions."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np
from tqdm import tqdm

from finrag.core.contracts import Chunk, Document, Question
from finrag.retrieve.search import BM25Index, SearchContext, search


def base_method(method: str) -> str:
    """The registered base a method wraps: "dense+route" -> "dense" (the finance rules of finrag.retrieve.finance
    wrap a base; what the base needs, the wrapper needs)."""
    return method.split("+", 1)[0]


def build_search_context(
    chunks: Sequence[Chunk],
    vectors: np.ndarray | None,
    embedder_name: str | None,
    p: Mapping,
    methods: Sequence[str] | None = None,
) -> SearchContext:
    """Everything the configured methods need; the re-ranker and the dense index are built only when used."""
    methods = list(methods or p["methods"])
    bm25 = BM25Index([c.text for c in chunks], **p["bm25"])
    dense = reranker = None
    if (
        vectors is not None
        and embedder_name
        and any(base_method(m) in ("dense", "hybrid", "hybrid_rerank") for m in methods)
    ):
        from finrag.retrieve.embedding import make_embedder
        from finrag.retrieve.stores import DenseIndex, make_store

        if len(vectors) != len(chunks):
            raise ValueError(f"{len(vectors)} vectors for {len(chunks)} chunks: re-run the embed stage")
        store = make_store(p.get("store", "faiss"), dim=int(vectors.shape[1]))
        store.add(list(range(len(chunks))), vectors)
        embedder = make_embedder(embedder_name, **p.get("embedders", {}).get(embedder_name, {}))
        dense = DenseIndex(embedder, store, [c.text for c in chunks])
    if any(base_method(m) == "hybrid_rerank" for m in methods):
        from finrag.retrieve.rerank import CrossEncoderReranker

        model = p["reranker"]
        reranker = CrossEncoderReranker(
            str(Path(model)) if Path(model).exists() else model,
            max_length=p.get("rerank_max_length"),
            precision=p.get("rerank_precision", "fp32"),
            cache_dir=p.get("rerank_cache"),
            fp32_head=bool(p.get("rerank_fp32_head", False)),
        )
    return SearchContext(
        chunks=list(chunks),
        bm25=bm25,
        dense=dense,
        reranker=reranker,
        depth=p["depth"],
        rrf_k=p["rrf_k"],
        weights=tuple(p["rrf_weights"]) if p.get("rrf_weights") else None,
        rerank_depth=p["rerank_depth"],
    )


def load_search_context(
    chunker: str, embedder: str, p: Mapping, methods: Sequence[str] | None = None
) -> SearchContext:
    """A setup's chunks and (unless every method is BM25) vectors from the `retrieve` stage's files, ready to search."""
    from finrag.core.io import read_jsonl

    methods = list(methods or p["methods"])
    chunks = read_jsonl(Path(p["chunks_dir"]) / f"{chunker}.jsonl", Chunk)
    dense = any(base_method(m) != "bm25" for m in methods)
    vectors = load_vectors(chunker, embedder, p) if dense else None
    return build_search_context(chunks, vectors, embedder, p, methods=methods)


def load_vectors(chunker: str, embedder: str, p: Mapping) -> np.ndarray:
    """The embed stage's matrix for (chunker, embedder); a missing one says how to get it."""
    path = Path(p["embeddings_dir"]) / chunker / f"{embedder}.npy"
    if not path.exists():
        raise FileNotFoundError(
            f"{path} is missing: `dvc pull` it or run `dvc repro embed@{chunker}-{embedder}`"
        )
    return np.load(path)


def run_method(
    ctx: SearchContext,
    method: str,
    questions: Sequence[Question],
    k: int,
    documents: Sequence[Document] | None = None,
    progress: bool = True,
) -> dict[str, list[tuple[Chunk, float]]]:
    """Top-k chunks per question; with `documents`, the company/period metadata filter is applied."""
    out = {}
    for q in tqdm(questions, desc=f"search[{method}]", disable=not progress, unit="q"):
        allowed = ctx.filtered_indices(q, documents) if documents is not None else None
        hits = search(ctx, method, q.question, k, allowed)
        out[q.qid] = [(ctx.chunks[i], s) for i, s in hits]
    return out
