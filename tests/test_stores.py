"""Faiss and Qdrant give the same exact inner-product top-k, with and without an id filter; save/load."""

from __future__ import annotations

import numpy as np
import pytest

from factories import LetterEmbedder
from finrag.retrieve.stores import STORES, DenseIndex, FaissStore, QdrantStore, make_store


def _unit(rng, n, d):
    x = rng.standard_normal((n, d)).astype(np.float32)
    return x / np.linalg.norm(x, axis=1, keepdims=True)


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(0)
    vecs = _unit(rng, 300, 32)
    ids = list(range(1000, 1300))  # non-contiguous with positions on purpose
    return ids, vecs, _unit(rng, 8, 32)


def _exact(ids, vecs, q, k, allowed=None):
    s = vecs @ q
    order = [j for j in np.argsort(-s) if allowed is None or ids[j] in allowed]
    return [(ids[j], float(s[j])) for j in order[:k]]


@pytest.mark.parametrize("allowed_n", [None, 40, 3])
def test_faiss_and_qdrant_agree_with_exact_search(data, allowed_n):
    ids, vecs, queries = data
    f, q = FaissStore(32), QdrantStore(32, location=":memory:")
    f.add(ids, vecs)
    q.add(ids, vecs)
    assert len(f) == len(q) == 300
    rng = np.random.default_rng(1)
    allowed = None if allowed_n is None else set(rng.choice(ids, allowed_n, replace=False).tolist())
    for qv in queries:
        want = _exact(ids, vecs, qv, 10, allowed)
        for store in (f, q):
            got = store.search(qv, 10, allowed)
            assert [i for i, _ in got] == [i for i, _ in want]
            assert np.allclose([s for _, s in got], [s for _, s in want], atol=1e-5)
    if allowed_n == 3:
        assert len(f.search(queries[0], 10, allowed)) == 3  # k larger than the allowed set
    q.close()


def test_empty_filter_and_empty_store(data):
    ids, vecs, queries = data
    for store in (FaissStore(32), QdrantStore(32)):
        assert store.search(queries[0], 5) == []
        store.add(ids, vecs)
        assert store.search(queries[0], 5, allowed_ids=set()) == []


def test_save_load_roundtrip(tmp_path, data):
    ids, vecs, queries = data
    f = FaissStore()
    f.add(ids, vecs)
    f.save(tmp_path / "f.index")
    f2 = FaissStore.load(tmp_path / "f.index")
    q = QdrantStore(32)
    q.add(ids, vecs)
    q.save(tmp_path / "q.npz")
    q2 = QdrantStore.load(tmp_path / "q.npz")
    for qv in queries[:3]:
        assert f2.search(qv, 5) == f.search(qv, 5)
        assert [i for i, _ in q2.search(qv, 5)] == [i for i, _ in q.search(qv, 5)]


def test_qdrant_embedded_on_disk_persists(tmp_path, data):
    ids, vecs, queries = data
    q = QdrantStore(32, path=tmp_path / "qd")
    q.add(ids[:50], vecs[:50])
    want = q.search(queries[0], 5)
    q.close()
    again = QdrantStore(path=tmp_path / "qd")
    assert again.dim == 32 and len(again) == 50 and again.search(queries[0], 5) == want
    again.close()


def test_registry_and_server_mode_construction():
    assert set(STORES.names()) == {"faiss", "qdrant"}
    assert isinstance(make_store("faiss", 8), FaissStore)
    s = QdrantStore(url="http://127.0.0.1:1")  # server mode: constructing must not need a server
    assert s.url == "http://127.0.0.1:1"
    with pytest.raises(ValueError, match="only one"):
        QdrantStore(path="/tmp/x", url="http://127.0.0.1:1")
    with pytest.raises(ValueError, match="vectors must be"):
        FaissStore(8).add([1], np.zeros((1, 9), np.float32))


@pytest.mark.parametrize("kind", ["faiss", "qdrant"])
def test_dense_index_search(tmp_path, kind):
    from finrag.retrieve.search import DenseRetriever

    texts = ["aaaa", "bbbb", "abab", "zzzz"]
    emb = LetterEmbedder()
    idx = DenseIndex(emb, make_store(kind), texts, cache_dir=tmp_path, progress=False)
    assert isinstance(idx, DenseRetriever)
    hits = idx.search("aaa", 2)
    assert [i for i, _ in hits] == [0, 2]
    assert [i for i, _ in idx.search("aaa", 2, allowed={1, 3})][0] in (1, 3)
    assert emb.query_calls == 1  # the query vector is memoised
