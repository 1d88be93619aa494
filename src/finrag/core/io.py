"""Atomic, crash-safe file writing and JSON-lines helpers.

Nothing half-written is ever left under data/ or results/: write to a temporary name in the same folder,
fsync, then rename (atomic on POSIX). Append-only JSON-lines files (the response cache, the human labels) can
at worst be left with a torn LAST line by a crash mid-append: `read_jsonl(..., torn_tail=True)` skips it with a
warning and `repair_jsonl_tail` cuts it off before the next append; any other malformed line is an error.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import tempfile
import warnings
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


def read_jsonl(path: str | Path, model: type[T] | None = None, *, torn_tail: bool = False) -> list:
    """Read JSON lines; a malformed line raises ValueError naming the file and line number.

    torn_tail=True (append-only files): a torn LAST line, i.e. the file does not end in a newline and its last
    line is not JSON (an append interrupted by a crash), is skipped with a RuntimeWarning naming file:line;
    every other malformed line is still an error, and so is a last line that is JSON but not a valid record.
    """
    if torn_tail:
        return _read_jsonl_torn_tail(Path(path), model)
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


def _malformed(path: str | Path, lineno: int, exc: BaseException) -> ValueError:
    return ValueError(f"{path}:{lineno}: malformed line: {exc}".splitlines()[0])


def _read_jsonl_torn_tail(path: Path, model: type[T] | None) -> list:
    data = path.read_bytes()
    lines = data.split(b"\n")
    complete = data.endswith(b"\n")  # then lines[-1] is b"" and no line is torn
    out = []
    for lineno, raw in enumerate(lines, 1):
        if not raw.strip():
            continue
        try:
            obj = json.loads(raw.decode("utf-8"))
        except ValueError as exc:  # JSONDecodeError and UnicodeDecodeError (a multi-byte character cut short)
            if lineno == len(lines) and not complete:
                warnings.warn(
                    f"{path}:{lineno}: torn last line skipped ({len(raw)} bytes, an interrupted write)",
                    RuntimeWarning,
                    stacklevel=3,
                )
                continue
            raise _malformed(path, lineno, exc) from exc
        try:
            out.append(model.model_validate(obj) if model else obj)
        except Exception as exc:  # noqa: BLE001 - re-raised with location
            raise _malformed(path, lineno, exc) from exc
    return out


def repair_jsonl_tail(fd: int, path: str | Path, stacklevel: int = 3) -> bool:
    """Before appending to a JSON-lines file: cut off a torn last line; True when one was cut.

    `fd` is the file opened O_RDWR | O_APPEND (and locked by the caller). A last line that is complete JSON but
    lacks only its newline is kept and given one. Earlier lines are never touched.
    """
    size = os.fstat(fd).st_size
    if size == 0 or os.pread(fd, 1, size - 1) == b"\n":
        return False
    start = max(0, size - (1 << 20))
    while True:  # find the last newline
        tail = os.pread(fd, size - start, start)
        cut = tail.rfind(b"\n")
        if cut >= 0 or start == 0:
            break
        start = max(0, start - (1 << 20))
    last_start = start + cut + 1 if cut >= 0 else 0
    last = os.pread(fd, size - last_start, last_start)
    try:
        json.loads(last.decode("utf-8"))
    except ValueError:
        os.ftruncate(fd, last_start)
        warnings.warn(
            f"{path}: cut a torn last line ({size - last_start} bytes) before appending",
            RuntimeWarning,
            stacklevel=stacklevel,
        )
        return True
    os.write(fd, b"\n")  # a complete record missing only its newline: keep it
    return False


@contextmanager
def restored_on_failure(root: str | Path) -> Iterator[None]:
    """Put every file under ``root`` back as it was if the body fails (an exception, a non-zero exit, Ctrl-C).

    Why: a stage that fails half-way (a replay miss, a crash after writing one of its outputs) must not leave
    results/ changed, or the committed figures and `finrag report --check` break for an unrelated reason.
    Files the body created are removed, changed or deleted ones restored byte for byte (atomically). results/
    is small (a few MB), so the snapshot is held in memory.
    """
    root = Path(root)
    before = {p: p.read_bytes() for p in root.rglob("*") if p.is_file()} if root.is_dir() else {}
    try:
        yield
    except BaseException as exc:
        if isinstance(exc, SystemExit) and exc.code in (0, None):
            raise
        now = {p for p in root.rglob("*") if p.is_file()} if root.is_dir() else set()
        for p in now - before.keys():
            p.unlink(missing_ok=True)
        for p, data in before.items():
            if not p.is_file() or p.read_bytes() != data:
                with atomic_open(p, "wb") as fh:
                    fh.write(data)
        raise


def append_locked(path: Path, data: bytes, stacklevel: int = 3) -> None:
    """Append `data` (whole JSON lines) to `path` in one write + fsync under an exclusive lock, after cutting a torn
    last line a crash may have left: a crash loses at most the lines being written, and two processes appending to
    the same file never interleave. A new file's folder entry is fsynced too. (The response cache and the labelling
    server both append this way.)"""
    path.parent.mkdir(parents=True, exist_ok=True)
    created = not path.exists()
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_APPEND, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        repair_jsonl_tail(fd, path, stacklevel=stacklevel + 1)
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
        os.fsync(fd)
    finally:
        os.close(fd)  # closing releases the lock
    if created:
        dfd = os.open(path.parent, os.O_RDONLY)
        try:
            os.fsync(dfd)
        finally:
            os.close(dfd)
