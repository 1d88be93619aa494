"""Vector stores behind one small interface, and the dense retriever that sits on one.

Two stores, so the grid can show that the store is not what moves retrieval quality (exact inner product
either way): `FaissStore` (in-process `IndexFlatIP`, exact) and `QdrantStore` (qdrant-client: embedded local
mode on a folder or `:memory:`, or a Qdrant server by URL). Vectors are L2-normalised by the embedders, so
inner product = cosine. Ids are the chunk indices of the SearchContext (non-negative ints).

`allowed_ids` restricts a search to a subset (the metadata filter: one company's filings). Faiss applies it
inside the scan with an `IDSelectorBatch`; Qdrant with a `HasIdCondition` filter; neither over-fetches and
post-filters, so a filtered top-k is exactly the top-k of the allowed subset.
"""

from __future__ import annotations

import json
import os
from abc import ABC, abstractmethod
from collections import OrderedDict
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import numpy as np

from finrag.core.io import atomic_open, write_json
from finrag.core.registry import Registry

if TYPE_CHECKING:
    from finrag.retrieve.embed_base import Embedder

Hit = tuple[int, float]
STORES: Registry[type[VectorStore]] = Registry("vector store")


def _as_matrix(vectors, dim: int | None = None) -> np.ndarray:
    x = np.ascontiguousarray(np.asarray(vectors, dtype=np.float32))
    if x.ndim == 1:
        x = x[None, :]
    if x.ndim != 2 or (dim is not None and x.shape[1] != dim):
        raise ValueError(f"vectors must be (n, {dim or 'd'}), got shape {x.shape}")
    return x


class VectorStore(ABC):
    """Exact inner-product search over (id, vector) pairs."""

    kind: str = ""

    @abstractmethod
    def add(self, ids: Sequence[int], vectors) -> None:
        """Add vectors under integer ids (re-adding an id is an error for Faiss, an overwrite for Qdrant)."""

    @abstractmethod
    def search(self, vector, k: int, allowed_ids: set[int] | None = None) -> list[Hit]:
        """Top-k (id, inner product), best first; only ids in `allowed_ids` when given."""

    @abstractmethod
    def save(self, path: str | Path) -> None: ...

    @classmethod
    @abstractmethod
    def load(cls, path: str | Path) -> VectorStore: ...

    @abstractmethod
    def __len__(self) -> int: ...


@STORES.register("faiss")
class FaissStore(VectorStore):
    """faiss `IndexIDMap2(IndexFlatIP)`: exact, in memory; `save` writes faiss's own file format."""

    kind = "faiss"

    def __init__(self, dim: int | None = None):
        self.dim = dim
        self._index: Any = None
        if dim is not None:
            self._make(dim)

    def _make(self, dim: int) -> None:
        import faiss

        self.dim = dim
        self._index = faiss.IndexIDMap2(faiss.IndexFlatIP(dim))

    def add(self, ids: Sequence[int], vectors) -> None:
        x = _as_matrix(vectors, self.dim)
        if self._index is None:
            self._make(x.shape[1])
        ids_arr = np.asarray(list(ids), dtype=np.int64)
        if len(ids_arr) != len(x):
            raise ValueError(f"{len(ids_arr)} ids for {len(x)} vectors")
        self._index.add_with_ids(x, ids_arr)

    def search(self, vector, k: int, allowed_ids: set[int] | None = None) -> list[Hit]:
        import faiss

        if self._index is None or self._index.ntotal == 0 or k <= 0:
            return []
        q = _as_matrix(vector, self.dim)
        params = None
        if allowed_ids is not None:
            if not allowed_ids:
                return []
            sel = faiss.IDSelectorBatch(np.fromiter(allowed_ids, dtype=np.int64, count=len(allowed_ids)))
            params = faiss.SearchParameters(sel=sel)  # type: ignore[call-arg]
        k_eff = min(k, self._index.ntotal)
        scores, ids = self._index.search(q, k_eff, params=params)
        return [(int(i), float(s)) for i, s in zip(ids[0], scores[0], strict=True) if i >= 0]

    def save(self, path: str | Path) -> None:
        import faiss

        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".{path.name}.tmp")
        faiss.write_index(
            self._index if self._index is not None else faiss.IndexIDMap2(faiss.IndexFlatIP(1)), str(tmp)
        )
        os.replace(tmp, path)

    @classmethod
    def load(cls, path: str | Path) -> FaissStore:
        import faiss

        store = cls()
        store._index = faiss.read_index(str(path))
        store.dim = store._index.d
        return store

    def __len__(self) -> int:
        return 0 if self._index is None else int(self._index.ntotal)


@STORES.register("qdrant")
class QdrantStore(VectorStore):
    """qdrant-client with DOT distance. Exactly one of `path` (embedded, persisted in that folder), `url`
    (a running Qdrant server) or `location` (":memory:") chooses the mode; default is in memory."""

    kind = "qdrant"

    def __init__(
        self,
        dim: int | None = None,
        *,
        path: str | Path | None = None,
        url: str | None = None,
        location: str | None = None,
        api_key: str | None = None,
        collection: str = "finrag",
        batch_size: int = 512,
    ):
        from qdrant_client import QdrantClient

        given = [x for x in (path, url, location) if x is not None]
        if len(given) > 1:
            raise ValueError("QdrantStore: give only one of path, url, location")
        if path is not None:
            self._client = QdrantClient(path=str(path))
        elif url is not None:
            # no version check: constructing must not need the server (the first call does)
            self._client = QdrantClient(url=url, api_key=api_key, check_compatibility=False)
        else:
            self._client = QdrantClient(location=location or ":memory:")
        self.path, self.url, self.collection, self.batch_size = path, url, collection, batch_size
        self.dim = dim
        self._synced = False
        if url is None:  # local modes: adopt or create the collection now (a server is contacted lazily)
            self._sync()

    def _sync(self) -> bool:
        """Adopt an existing collection (and its dim) or create one; False while there is nothing yet."""
        if not self._synced:
            if self._client.collection_exists(self.collection):
                self.dim = self._client.get_collection(self.collection).config.params.vectors.size  # type: ignore[union-attr]
                self._synced = True
            elif self.dim is not None:
                self._create(self.dim)
        return self._synced

    def _create(self, dim: int) -> None:
        from qdrant_client import models

        self._client.create_collection(
            self.collection, vectors_config=models.VectorParams(size=dim, distance=models.Distance.DOT)
        )
        self.dim = dim

    def add(self, ids: Sequence[int], vectors) -> None:
        from qdrant_client import models

        x = _as_matrix(vectors, self.dim)
        ids = [int(i) for i in ids]
        if len(ids) != len(x):
            raise ValueError(f"{len(ids)} ids for {len(x)} vectors")
        if not self._sync():
            self._create(x.shape[1])
        for s in range(0, len(ids), self.batch_size):
            self._client.upsert(
                self.collection,
                points=models.Batch(
                    ids=ids[s : s + self.batch_size],  # type: ignore[arg-type]
                    vectors=x[s : s + self.batch_size].tolist(),
                ),
                wait=True,
            )

    def search(self, vector, k: int, allowed_ids: set[int] | None = None) -> list[Hit]:
        from qdrant_client import models

        if k <= 0 or not self._sync():
            return []
        flt = None
        if allowed_ids is not None:
            if not allowed_ids:
                return []
            flt = models.Filter(must=[models.HasIdCondition(has_id=sorted(int(i) for i in allowed_ids))])
        q = _as_matrix(vector, self.dim)[0]
        res = self._client.query_points(self.collection, query=q.tolist(), limit=k, query_filter=flt)
        return [(int(p.id), float(p.score)) for p in res.points]

    def _all(self) -> tuple[np.ndarray, np.ndarray]:
        ids, vecs, offset = [], [], None
        while True:
            points, offset = self._client.scroll(
                self.collection, limit=1024, offset=offset, with_vectors=True, with_payload=False
            )
            ids += [int(p.id) for p in points]
            vecs += [p.vector for p in points]
            if offset is None:
                break
        return np.asarray(ids, dtype=np.int64), np.asarray(vecs, dtype=np.float32).reshape(
            len(ids), self.dim or 0
        )

    def save(self, path: str | Path) -> None:
        """A portable snapshot (ids + vectors as .npz, and a JSON sidecar), whatever the client mode."""
        ids, vecs = (
            self._all() if self.dim is not None else (np.zeros(0, np.int64), np.zeros((0, 0), np.float32))
        )
        with atomic_open(path, "wb") as fh:
            np.savez(fh, ids=ids, vectors=vecs)
        write_json(
            f"{path}.json", {"kind": self.kind, "collection": self.collection, "dim": self.dim, "n": len(ids)}
        )

    @classmethod
    def load(cls, path: str | Path, **client_kwargs) -> QdrantStore:
        """Rebuild a snapshot into a new store (in memory unless `path=`/`url=` are given as keyword args)."""
        meta = json.loads(Path(f"{path}.json").read_text(encoding="utf-8"))
        with np.load(path) as z:
            ids, vecs = z["ids"], z["vectors"]
        store = cls(meta["dim"], collection=meta["collection"], **client_kwargs)
        if len(ids):
            store.add(ids.tolist(), vecs)
        return store

    def __len__(self) -> int:
        if not self._sync():
            return 0
        return int(self._client.count(self.collection, exact=True).count)

    def close(self) -> None:
        self._client.close()


def make_store(kind: str, dim: int | None = None, **kwargs) -> VectorStore:
    """Build a registered store by name (`faiss`, `qdrant`); kwargs go to its constructor."""
    return cast("Callable[..., VectorStore]", STORES.get(kind))(dim, **kwargs)


class DenseIndex:
    """Embeds chunks once (through the item cache when `cache_dir` is given) into a store; implements
    search.DenseRetriever. The last few query vectors are memoised because the filtered dense search asks the
    same query again with a deeper k."""

    def __init__(
        self,
        embedder: Embedder,
        store: VectorStore,
        chunk_texts: Sequence[str],
        *,
        cache_dir: str | Path | None = None,
        batch_size: int = 32,
        progress: bool = True,
    ):
        from finrag.retrieve.embed_cache import embed_with_cache

        self.embedder, self.store, self.n = embedder, store, len(chunk_texts)
        if len(store) == 0 and chunk_texts:
            if cache_dir is not None:
                vecs = embed_with_cache(embedder, list(chunk_texts), cache_dir, batch_size, progress=progress)
            else:
                vecs = embedder.embed_passages(list(chunk_texts))
            store.add(list(range(len(chunk_texts))), vecs)
        elif len(store) != len(chunk_texts):
            raise ValueError(
                f"store holds {len(store)} vectors but {len(chunk_texts)} chunk texts were given"
            )
        self._queries: OrderedDict[str, np.ndarray] = OrderedDict()

    def query_vector(self, query: str) -> np.ndarray:
        v = self._queries.get(query)
        if v is None:
            v = self.embedder.embed_query(query)
            self._queries[query] = v
            if len(self._queries) > 64:
                self._queries.popitem(last=False)
        return v

    def search(self, query: str, k: int, allowed: set[int] | None = None) -> list[Hit]:
        return self.store.search(self.query_vector(query), k, allowed)
