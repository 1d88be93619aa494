"""Chunkers: split a document's pages into retrievable chunks that remember exactly where they came from.

Every chunk keeps `doc_id`, the pages it spans and character `spans` into `Page.text`, so a citation or an
evidence page can be traced back to the page text: for a single-page chunk `page.text[start:end] == chunk.body`
(for a multi-page chunk the body is the span texts joined with "\\n"). Chunk ids are deterministic,
`f"{doc_id}:{chunker}:{n}"`, so two runs over the same pages give the same ids.

Indexed text (`Chunk.text`) versus page text (`Chunk.body`): only the `structure` chunker prepends a context
header (`"{company} {form} {period} > {section}\\n\\n"`): it is that chunker's feature under test. `fixed` and
`page` index the body as is (`text == body`), so the grid can tell what the header and the block boundaries add.

No chunk crosses a page boundary in the chunkers below, on purpose: FinanceBench evidence and the report's
citations are page-level, and a chunk spanning two pages would be credited with both pages in recall@k (an
advantage the other chunkers do not get). The `Chunk`/`Span` contract still allows multi-page chunks.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from tqdm import tqdm

from finrag.core.contracts import Chunk, Document, Page, Span
from finrag.core.registry import Registry

CHUNKERS: Registry[type] = Registry("chunker")

_WORD = re.compile(r"\S+")


def make_chunker(name: str, **params):
    """Build a registered chunker from its name and params (as found in params.yaml)."""
    return CHUNKERS.get(name)(**params)


def chunk_corpus(
    docs: Sequence[Document], pages_by_doc: dict[str, list[Page]], chunker, progress: bool = True
) -> list[Chunk]:
    """Chunk every document (in the given order); documents without pages yield no chunks."""
    out: list[Chunk] = []
    for doc in tqdm(docs, desc=f"chunk[{chunker.name}]", disable=not progress, unit="doc"):
        out.extend(chunker.chunk(doc, pages_by_doc.get(doc.doc_id, [])))
    return out


def _single(
    doc: Document,
    name: str,
    n: int,
    page: Page,
    start: int,
    end: int,
    text: str | None = None,
    section: str = "",
) -> Chunk:
    body = page.text[start:end]
    return Chunk(
        chunk_id=f"{doc.doc_id}:{name}:{n}",
        doc_id=doc.doc_id,
        pages=[page.page],
        spans=[Span(page=page.page, start=start, end=end)],
        text=body if text is None else text,
        body=body,
        section=section,
    )


def _sorted_pages(doc: Document, pages: Iterable[Page]) -> list[Page]:
    out = sorted(pages, key=lambda p: p.page)
    for p in out:
        if p.doc_id != doc.doc_id:
            raise ValueError(f"page {p.page} belongs to '{p.doc_id}', not to document '{doc.doc_id}'")
    return out


@CHUNKERS.register("fixed")
class FixedChunker:
    """Fixed windows of `size` whitespace-delimited words with `overlap` words shared by neighbours.

    Windows stay inside one page (see module docstring). So that a page's tail does not become a stub window,
    the last window of a page is anchored to the page end (it overlaps its neighbour more than `overlap`):
    every window has exactly `size` words unless the page itself is shorter.
    """

    name = "fixed"

    def __init__(self, size: int = 200, overlap: int = 50):
        if size <= 0 or not 0 <= overlap < size:
            raise ValueError(f"fixed chunker needs size > 0 and 0 <= overlap < size (got {size}/{overlap})")
        self.size, self.overlap = int(size), int(overlap)

    def chunk(self, doc: Document, pages: list[Page]) -> list[Chunk]:
        out: list[Chunk] = []
        step = self.size - self.overlap
        for page in _sorted_pages(doc, pages):
            words = [(m.start(), m.end()) for m in _WORD.finditer(page.text)]
            if not words:
                continue
            starts = list(range(0, max(len(words) - self.size, 0) + 1, step))
            last = max(len(words) - self.size, 0)
            if starts[-1] != last:
                starts.append(last)
            for i in starts:
                j = min(i + self.size, len(words))
                out.append(
                    _single(
                        doc, self.name, len(out), page, words[i][0], words[j - 1][1], section=page.section
                    )
                )
        return out


@CHUNKERS.register("page")
class PageChunker:
    """One chunk per non-empty page (leading/trailing whitespace trimmed off the span)."""

    name = "page"

    def __init__(self):
        pass

    def chunk(self, doc: Document, pages: list[Page]) -> list[Chunk]:
        out: list[Chunk] = []
        for page in _sorted_pages(doc, pages):
            words = list(_WORD.finditer(page.text))
            if words:
                out.append(
                    _single(
                        doc,
                        self.name,
                        len(out),
                        page,
                        words[0].start(),
                        words[-1].end(),
                        section=page.section,
                    )
                )
        return out


# ---------------------------------------------------------------------------------------------- structure

_HEADING = re.compile(
    r"^\s*(#{1,6}\s+\S|item\s+\d{1,2}[a-z]?\b[.:\s]|part\s+[ivx]+\b(?!\s+of\b)|note\s+\d{1,2}[.:]\s)",
    re.IGNORECASE,
)
_FOOTNOTE = re.compile(
    r"^\s*(\(\d{1,2}\)|\([a-z]\)|\*+|[\u00b9\u00b2\u00b3\u2070-\u2079]+|\u2020|\u2021|notes?\s*:)",
    re.IGNORECASE,
)
_FOOTNOTE_MAX_WORDS = 80  # "short lines": longer ones are prose, not a footnote


@dataclass
class _Block:
    kind: str  # "para" | "table" | "heading"
    start: int
    end: int
    words: int
    lines: list[tuple[int, int]]  # (start, end) of each non-blank line, for splitting long paragraphs


def _lines(text: str) -> list[tuple[int, int, str]]:
    """Lines as (start, end, stripped-content); end excludes '\\r' and trailing blanks."""
    out = []
    pos = 0
    for raw in text.split("\n"):
        stripped = raw.rstrip()
        lead = len(raw) - len(raw.lstrip())
        out.append((pos + lead, pos + len(stripped), stripped.strip()))
        pos += len(raw) + 1
    return out


def _n_words(s: str) -> int:
    return len(s.split())


def segment_blocks(text: str) -> list[_Block]:
    """Split page text into blocks: blank lines separate blocks; a heading line is a block of its own; a run of
    lines starting with `|` is a table block, and footnote lines that follow a table (even after a blank line)
    are attached to it."""
    blocks: list[_Block] = []
    cur: _Block | None = None

    def close():
        nonlocal cur
        if cur is not None:
            blocks.append(cur)
        cur = None

    for start, end, content in _lines(text):
        if not content:
            close()
            continue
        words = _n_words(content)
        if content.startswith("|"):
            kind = "table"
        elif _HEADING.match(content) and words <= 25:
            kind = "heading"
        else:
            kind = "para"
        if kind == "para" and _FOOTNOTE.match(content) and words <= _FOOTNOTE_MAX_WORDS:
            # a footnote right after a table (possibly past a blank line) belongs to the table
            tbl = cur if cur is not None else (blocks[-1] if blocks else None)
            if tbl is not None and tbl.kind == "table":
                if cur is None:
                    cur = blocks.pop()
                cur.end, cur.words = end, cur.words + words
                cur.lines.append((start, end))
                continue
        if kind == "heading":
            close()
            blocks.append(_Block("heading", start, end, words, [(start, end)]))
            continue
        if cur is not None and cur.kind != kind:
            close()
        if cur is None:
            cur = _Block(kind, start, end, 0, [])
        cur.end, cur.words = end, cur.words + words
        cur.lines.append((start, end))
    close()
    return blocks


def _split_long(block: _Block, text: str, limit: int) -> list[tuple[int, int, int]]:
    """Cut an over-long paragraph at line boundaries (a single over-long line at word boundaries)."""
    pieces: list[tuple[int, int]] = []
    for ls, le in block.lines:
        if _n_words(text[ls:le]) <= limit:
            pieces.append((ls, le))
            continue
        ws = [(ls + m.start(), ls + m.end()) for m in _WORD.finditer(text[ls:le])]
        for i in range(0, len(ws), limit):
            pieces.append((ws[i][0], ws[min(i + limit, len(ws)) - 1][1]))
    out: list[tuple[int, int, int]] = []
    for ps, pe in pieces:
        w = _n_words(text[ps:pe])
        if out and out[-1][2] + w <= limit:
            out[-1] = (out[-1][0], pe, out[-1][2] + w)
        else:
            out.append((ps, pe, w))
    return out


def _heading_title(s: str) -> str:
    return re.sub(r"\s+", " ", s.lstrip("#").strip())[:120]


def context_header(doc: Document, section: str) -> str:
    """`"{company} {form} {period} > {section}\\n\\n"` (empty fields and an empty section are left out)."""
    head = " ".join(x for x in (doc.company, doc.form, doc.period) if x)
    if section:
        head = f"{head} > {section}" if head else section
    return f"{head}\n\n" if head else ""


@CHUNKERS.register("structure")
class StructureChunker:
    """Blocks (paragraphs, tables, headings) merged up to `max_words` within one section of one page.

    - a table (consecutive `|` lines) and its footnotes (`(1)`, `*`, `¹`, `Note:` lines right after it) is never
      split: a table larger than `max_words` becomes one chunk as it is. Splitting by rows with the header
      repeated would make the body differ from the page text at its offsets, and a figure read without its
      column header is easily misread (which year? which unit?); an over-long chunk costs only some embedding
      truncation, which the grid measures;
    - a heading line (`#`, `Item 7.`, `PART II`, `Note 5.`) closes the running chunk and opens the next one,
      which it labels; the section is the latest heading seen in the document, else `Page.section`;
    - a paragraph longer than `max_words` is cut at line (then word) boundaries: PDF text often has no blank
      lines at all, so a whole page would otherwise be one block.
    Indexed text = context header + body (see module docstring).
    """

    name = "structure"

    def __init__(self, max_words: int = 300):
        if max_words <= 0:
            raise ValueError(f"structure chunker needs max_words > 0 (got {max_words})")
        self.max_words = int(max_words)

    def chunk(self, doc: Document, pages: list[Page]) -> list[Chunk]:
        out: list[Chunk] = []
        heading_section = ""
        for page in _sorted_pages(doc, pages):
            text, limit = page.text, self.max_words
            section = heading_section or page.section
            g: _Group | None = None

            def flush(g: _Group | None, page: Page = page) -> None:
                if g is not None:
                    head = context_header(doc, g.section)
                    out.append(
                        _single(
                            doc,
                            self.name,
                            len(out),
                            page,
                            g.start,
                            g.end,
                            text=head + page.text[g.start : g.end],
                            section=g.section,
                        )
                    )

            for b in segment_blocks(text):
                if b.kind == "heading":
                    section = heading_section = _heading_title(text[b.start : b.end])
                    if g is not None and g.headings_only and g.words + b.words <= limit:
                        g.add(
                            b.end, b.words, heading=True
                        )  # a run of headings (a contents page) stays together
                    else:
                        flush(g)
                        g = _Group(b.start, b.end, b.words, section, headings_only=True)
                    continue
                if g is not None and g.words + b.words <= limit:
                    g.add(b.end, b.words)
                    continue
                if b.kind == "table":  # whole, even when over the limit; keeps the heading introducing it
                    if g is not None and g.headings_only:
                        g.add(b.end, b.words)
                    else:
                        flush(g)
                        g = _Group(b.start, b.end, b.words, section)
                    flush(g)
                    g = None
                    continue
                if b.words <= limit:
                    flush(g)
                    g = _Group(b.start, b.end, b.words, section)
                    continue
                for ps, pe, w in _split_long(b, text, limit):
                    if g is not None and g.words + w <= limit:
                        g.add(pe, w)
                    else:
                        flush(g)
                        g = _Group(ps, pe, w, section)
            flush(g)
        return out


@dataclass
class _Group:
    """The running chunk of the structure chunker: a contiguous stretch of one page."""

    start: int
    end: int
    words: int
    section: str
    headings_only: bool = False

    def add(self, end: int, words: int, heading: bool = False) -> None:
        self.end, self.words = end, self.words + words
        self.headings_only = self.headings_only and heading
