"""What every embedder shares: the `Embedder` interface, vector normalisation, the revision hash helpers, the
bf16 capability check and torch thread control. Below both the packaged embedders (`embedding`) and the torch
port of e5 (`e5_torch`), so neither imports the other back."""

from __future__ import annotations

import contextlib
import functools
import hashlib
from abc import ABC, abstractmethod
from collections.abc import Sequence

import numpy as np

from finrag.core.io import sha256_file
from finrag.core.machine import cpu_has_native_bf16


class Embedder(ABC):
    """Maps texts to L2-normalised float32 vectors; queries and passages may be encoded differently."""

    name: str
    dim: int
    revision: str

    @abstractmethod
    def embed_passages(self, texts: Sequence[str]) -> np.ndarray:
        """(n, dim) float32, rows L2-normalised."""

    @abstractmethod
    def embed_query(self, text: str) -> np.ndarray:
        """(dim,) float32, L2-normalised."""


def normalise(x: np.ndarray) -> np.ndarray:
    x = np.asarray(x, dtype=np.float32)
    n = np.linalg.norm(x, axis=-1, keepdims=True)
    return x / np.maximum(n, 1e-12)


def short_hash(*parts: str) -> str:
    return hashlib.sha256("\x1f".join(parts).encode()).hexdigest()[:16]


@functools.cache
def hash_file_cached(path: str, size: int, mtime_ns: int) -> str:
    return sha256_file(path)


# ---------------------------------------------------------------------------------------- CPU capabilities


# cpu_has_native_bf16 lives in finrag.core.machine (one reading of /proc/cpuinfo for every CPU question)


def resolve_precision(precision: str) -> str:
    if precision == "auto":
        return "bf16" if cpu_has_native_bf16() else "fp32"
    if precision not in ("fp32", "bf16"):
        raise ValueError(f"precision must be auto, fp32 or bf16 (got {precision!r})")
    return precision


@contextlib.contextmanager
def torch_threads(n: int | None):
    """torch's intra-op thread count set to `n` (None or 0: unchanged) for the block, then restored."""
    import torch

    before = torch.get_num_threads()
    if n:
        torch.set_num_threads(int(n))
    try:
        yield
    finally:
        torch.set_num_threads(before)


def map_on_workers(fn, jobs, workers: int) -> list:
    """`fn` over `jobs` on `workers` threads with torch at one thread, so each op runs on its calling thread: on
    a shared machine a multi-threaded torch waits for its slowest thread at every op, independent single-threaded
    workers never wait for each other (measured in benchmarks/bench_e5_torch.py)."""
    from concurrent.futures import ThreadPoolExecutor

    with torch_threads(1), ThreadPoolExecutor(workers, thread_name_prefix="finrag-embed") as pool:
        return list(pool.map(fn, jobs))
