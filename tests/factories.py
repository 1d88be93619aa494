"""Small record builders the tests share (importable from any test: tests/ is on sys.path through its conftest)."""

from __future__ import annotations

import numpy as np

from finrag.core.contracts import Chunk, Span


def page_chunk(doc: str, page: int, text: str, chunk_id: str | None = None) -> Chunk:
    """A chunk that is one whole page of `doc`, indexed text = page text (`chunk_id` defaults to the page
    chunker's `DOC:page:N`)."""
    return Chunk(
        chunk_id=chunk_id or f"{doc}:page:{page}",
        doc_id=doc,
        pages=[page],
        spans=[Span(page=page, start=0, end=len(text))],
        text=text,
        body=text,
    )


class LetterEmbedder:
    """Bag-of-letters unit vectors: a dense index without a model (counts its query calls)."""

    name, dim, revision = "letters", 26, "r1"

    def __init__(self) -> None:
        self.query_calls = 0

    def _v(self, t: str) -> np.ndarray:
        v = np.zeros(26, np.float32)
        for ch in t.lower():
            if "a" <= ch <= "z":
                v[ord(ch) - 97] += 1
        return v / max(float(np.linalg.norm(v)), 1e-9)

    def embed_passages(self, texts):
        return np.stack([self._v(t) for t in texts]) if texts else np.zeros((0, 26), np.float32)

    def embed_query(self, text):
        self.query_calls += 1
        return self._v(text)
