"""Atomic, crash-safe file writing and JSON-lines helpers.

Nothing half-written is ever left under data/ or results/: write to a temporary name in the same folder,
fsync, then rename (atomic on POSIX).
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from collections.abc import Iterable, Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import IO, TypeVar

from pydantic import BaseModel

T = TypeVar("T", bound=BaseModel)


@contextmanager
def atomic_open(path: str | Path, mode: str = "w", encoding: str | None = "utf-8") -> Iterator[IO]:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, mode, encoding=encoding if "b" not in mode else None) as fh:
            yield fh
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        with suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


def canonical_json(obj) -> str:
    """Stable JSON: sorted keys, no spaces, UTF-8 kept. Used for hashing and byte-identical outputs."""
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def sha256_text(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def sha256_file(path: str | Path, chunk: int = 1 << 20) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        while block := fh.read(chunk):
            h.update(block)
    return h.hexdigest()


def write_json(path: str | Path, obj, indent: int = 2) -> None:
    with atomic_open(path) as fh:
        json.dump(obj, fh, indent=indent, sort_keys=True, ensure_ascii=False)
        fh.write("\n")


def read_json(path: str | Path):
    with open(path, encoding="utf-8") as fh:
        return json.load(fh)


def write_jsonl(path: str | Path, records: Iterable) -> int:
    n = 0
    with atomic_open(path) as fh:
        for r in records:
            if isinstance(r, BaseModel):
                fh.write(r.model_dump_json())
            else:
                fh.write(json.dumps(r, ensure_ascii=False, sort_keys=True))
            fh.write("\n")
            n += 1
    return n


def read_jsonl(path: str | Path, model: type[T] | None = None) -> list:
    """Read JSON lines; a malformed line raises ValueError naming the file and line number."""
    out = []
    with open(path, encoding="utf-8") as fh:
        for lineno, line in enumerate(fh, 1):
            if not line.strip():
                continue
            try:
                obj = json.loads(line)
                out.append(model.model_validate(obj) if model else obj)
            except Exception as exc:  # noqa: BLE001 - re-raised with location
                raise ValueError(f"{path}:{lineno}: malformed line: {exc}".splitlines()[0]) from exc
    return out
