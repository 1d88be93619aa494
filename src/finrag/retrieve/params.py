"""The params.yaml sections of the retrieval runs: chunking, embedding, the re-ranker, search: typed, beside the code they configure, so an edit here re-runs
only the stages that read them (finrag.core.params has the base model and the rules every section follows)."""

from __future__ import annotations

from typing import ClassVar, Literal

from finrag.core.params import Block, Spec, StageParams


class Corpus(Block):
    dir: str
    chunks_dir: str
    collections: list[str] | None = None


class ChunkParams(StageParams):
    section: ClassVar[str] = "chunk"
    chunkers: dict[str, Spec]
    corpora: dict[str, Corpus]


class EmbedParams(StageParams):
    section: ClassVar[str] = "embed"
    chunks_dir: str
    out_dir: str
    cache_dir: str
    batch_size: int
    embedders: dict[str, Spec]


class RerankerParams(StageParams):
    section: ClassVar[str] = "reranker"
    tatqa: str
    out_dir: str
    metrics_out: str
    train: Spec = {}


class Bm25(Block):
    k1: float = 1.5
    b: float = 0.75
    language: Literal["en", "es"] = "en"


class RetrieveParams(StageParams):
    section: ClassVar[str] = "retrieve"
    chunks_dir: str
    embeddings_dir: str
    questions: str
    out_dir: str
    methods: list[str]
    k: int
    bm25: Bm25
    store: Literal["faiss", "qdrant"] = "faiss"
    embedders: dict[str, Spec]
    depth: int
    rrf_k: int
    rrf_weights: list[float] | None = None
    rerank_depth: int
    rerank_max_length: int
    rerank_precision: Literal["auto", "bf16", "fp32"] = "auto"
    rerank_cache: str
    reranker: str
