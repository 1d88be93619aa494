"""The crash-safe per-chunk embedding cache: vectors keyed by the encoder's revision and the chunk text's hash, so
a killed `embed` resumes where it stopped and a re-run computes nothing; never serves vectors of other weights
or settings (the revision hashes the weights and every setting that changes the vectors)."""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from finrag.core.io import sha256_text
from finrag.core.kvstore import SqliteKV
from finrag.retrieve.embed_base import Embedder

log = logging.getLogger(__name__)


class EmbeddingCache:
    """sha256(text) -> vector for one embedder revision (finrag.core.kvstore.SqliteKV, table `vec`)."""

    def __init__(self, cache_dir: str | Path, embedder: Embedder):
        self.dim = embedder.dim
        safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in embedder.name)
        self.path = Path(cache_dir) / f"{safe}-{embedder.revision}.sqlite"
        self._kv = SqliteKV(self.path, "vec", "BLOB")

    def get_many(self, keys: Sequence[str]) -> dict[str, np.ndarray]:
        out: dict[str, np.ndarray] = {}
        for k, blob in self._kv.get_many(keys).items():
            v = np.frombuffer(blob, dtype=np.float32)
            if v.shape[0] != self.dim:
                raise ValueError(f"{self.path}: vector for {k} has {v.shape[0]} dims, expected {self.dim}")
            out[k] = v
        return out

    def put_many(self, keys: Sequence[str], vectors: np.ndarray) -> None:
        vectors = np.ascontiguousarray(vectors, dtype=np.float32)
        self._kv.put_many((k, vectors[i].tobytes()) for i, k in enumerate(keys))

    def __len__(self) -> int:
        return len(self._kv)

    def close(self) -> None:
        self._kv.close()

    def __enter__(self) -> EmbeddingCache:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def embed_with_cache(
    embedder: Embedder,
    texts: Sequence[str],
    cache_dir: str | Path,
    batch_size: int = 64,
    progress: bool = True,
    shard: tuple[int, int] | None = None,
) -> np.ndarray | None:
    """(n, dim) vectors for `texts`, computing only those not already cached; duplicates are embedded once.
    Missing texts go in length order (less padding per batch) and each batch is committed before the next.

    `shard=(i, n)` computes only every n-th missing text from the i-th and returns None: n processes fill one
    cache side by side (SQLite serialises their commits) with no barrier between them, then a plain call
    assembles the vectors from the cache."""
    texts = list(texts)
    keys = [sha256_text(t) for t in texts]
    with EmbeddingCache(cache_dir, embedder) as cache:
        have = cache.get_many(list(dict.fromkeys(keys)))
        todo = {k: t for k, t in zip(keys, texts, strict=True) if k not in have}
        order = sorted(todo, key=lambda k: len(todo[k]))
        if shard is not None:
            i, n = shard
            if not 0 <= i < n:
                raise ValueError(f"shard {i}/{n}: need 0 <= i < n")
            order = order[i::n]
        bar = None
        if progress and order:
            from tqdm import tqdm

            bar = tqdm(total=len(order), desc=f"embed {embedder.name}", unit="chunk")
        with bar if bar is not None else contextlib.nullcontext():
            for s in range(0, len(order), batch_size):
                part = order[s : s + batch_size]
                vecs = embedder.embed_passages([todo[k] for k in part])
                if vecs.shape != (len(part), embedder.dim):
                    raise ValueError(f"{embedder.name} returned {vecs.shape} for {len(part)} texts")
                cache.put_many(part, vecs)
                have.update(zip(part, vecs, strict=True))
                if bar is not None:
                    bar.update(len(part))
    if shard is not None:
        return None
    out = np.empty((len(texts), embedder.dim), np.float32)
    for i, k in enumerate(keys):
        out[i] = have[k]
    return out
