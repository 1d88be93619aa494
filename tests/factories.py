"""Small record builders the tests share (importable from any test: tests/ is on sys.path through its conftest)."""

from __future__ import annotations

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
