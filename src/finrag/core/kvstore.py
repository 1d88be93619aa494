"""An append-only key -> value table in SQLite (WAL), the item-level cache behind embeddings and re-ranker
scores: every committed batch survives a crash, so an interrupted run resumes where it stopped and a re-run
computes nothing."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any


class SqliteKV:
    """`table` (key TEXT PRIMARY KEY, v `value_type`) in the file at `path`; first write of a key wins."""

    def __init__(self, path: str | Path, table: str, value_type: str = "BLOB"):
        self.path, self.table = Path(path), table
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._db = sqlite3.connect(self.path)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute(
            f"CREATE TABLE IF NOT EXISTS {table} (key TEXT PRIMARY KEY, v {value_type} NOT NULL) WITHOUT ROWID"
        )
        self._db.commit()

    def get_many(self, keys: Sequence[str]) -> dict[str, Any]:
        out: dict[str, Any] = {}
        keys = list(keys)
        for s in range(0, len(keys), 500):  # SQLite caps the number of bound parameters
            part = keys[s : s + 500]
            q = f"SELECT key, v FROM {self.table} WHERE key IN ({','.join('?' * len(part))})"
            out.update(self._db.execute(q, part).fetchall())
        return out

    def put_many(self, rows: Iterable[tuple[str, Any]]) -> None:
        with self._db:  # one transaction per batch
            self._db.executemany(f"INSERT OR IGNORE INTO {self.table} (key, v) VALUES (?, ?)", rows)

    def __len__(self) -> int:
        return int(self._db.execute(f"SELECT COUNT(*) FROM {self.table}").fetchone()[0])

    def close(self) -> None:
        self._db.close()
