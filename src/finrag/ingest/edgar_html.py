"""SEC EDGAR HTML filings (inline XBRL or older HTML) -> pages, with lxml.

What a reader of the printed filing sees, page by page:
- pages split where the filing breaks pages (CSS `page-break-before/after: always`, `break-before/after: page`);
- hidden content dropped (the inline-XBRL `ix:header`, any `display:none` block); numbers kept exactly as
  displayed (an `ix:nonFraction` is just its visible text);
- data tables as pipe rows (`| Revenue | $ 4,567 | (1,234) | 12.5% |`): empty spacer cells dropped and the
  `$` / `)` / `%` cells EDGAR typesets separately merged back into their numbers; tables that only position
  text (two-column headings, signatures, footnote markers, fewer than two numeric cells) as plain text;
- one block per paragraph or table, blocks separated by a blank line (the chunkers split on blank lines);
- each page's `section` from the `Item N.` / `PART` headings (shared rules in finrag.ingest.parse).

Nothing is cut in silence: a document that makes libxml2 stop early (nesting beyond its depth limit of 2048,
any other fatal error), after which it would drop the rest, is refused in one line; UTF-16/32 files (with or
without a byte-order mark) are decoded. The file is parsed incrementally and each top-level block of <body> is
freed once turned into text, so memory stays near the size of the text instead of the size of the whole tree
(a 95 MB filing: 0.29 GB instead of 0.86 GB).
"""

from __future__ import annotations

import re
import sys
from functools import lru_cache
from pathlib import Path

import lxml.etree

from finrag.core.contracts import Page
from finrag.ingest.parsed import IngestError, Parsed, text_encoding
from finrag.ingest.sections import assign_sections

_BLOCK_TAGS = frozenset(
    [
        "address",
        "article",
        "aside",
        "blockquote",
        "body",
        "caption",
        "center",
        "dd",
        "div",
        "dl",
        "dt",
        "fieldset",
        "figure",
        "footer",
        "form",
        "h1",
        "h2",
        "h3",
        "h4",
        "h5",
        "h6",
        "header",
        "hr",
        "html",
        "li",
        "main",
        "nav",
        "ol",
        "p",
        "pre",
        "section",
        "ul",
    ]
)
_SKIP_TAGS = frozenset({"head", "script", "style", "title", "noscript", "template", "ix:header", "xml"})
_STYLE_HIDDEN = re.compile(r"display\s*:\s*none", re.IGNORECASE)
_STYLE_BREAK = re.compile(r"(?:page-)?break-(before|after)\s*:\s*(?:always|page|left|right)", re.IGNORECASE)
_SPACES = re.compile(r"[ \t\r\f\v\xa0\u2002\u2003\u2009\u200a\u202f\u3000]+")
_DROP_CHARS = str.maketrans({"\u200b": None, "\xad": None, "\ufeff": None})

# A cell holding a number as displayed: optional currency, optional brackets, optional percent.
_NUMERIC = re.compile(r"^[$€£¥]?\s*\(?\s*[$€£¥]?\s*[-+]?\d[\d,]*(?:\.\d+)?\s*\)?\s*%?\s*\)?$")
_CURRENCY = re.compile(r"^[$€£¥]$|^\($")
_CLOSER = re.compile(r"^(?:\)|%|\)%|%\)|\)\s*%)$")
# A footnote marker cell: "(1)", "(a)", "*", "1." in the first column of a row whose other cells are prose.
_MARKER = re.compile(r"^(?:\(?(?:\d{1,2}|[a-z]|[ivx]{1,4})\)|\d{1,2}\.?|[*†‡§]+)$", re.IGNORECASE)
_FILING_MARKERS = re.compile(
    r"securities and exchange commission|form\s+10-?[kq]\b|form\s+8-?k\b|form\s+20-?f\b|form\s+40-?f\b|"
    r"annual report|quarterly report|commission file number|fiscal (?:year|quarter)|"
    r"consolidated (?:balance sheets?|statements? of)",
    re.IGNORECASE,
)
_BULLET = re.compile(r"^([•●▪◦■])(?=\S)")  # bullets positioned by CSS padding: give them their space back
MIN_FILING_CHARS = 500
_LONG_CELL = 200


@lru_cache(maxsize=4096)
def _style_flags(style: str) -> tuple[bool, bool, bool]:
    """(hidden, break before, break after) for a style attribute; cached: EDGAR repeats a few hundred styles."""
    hidden = bool(_STYLE_HIDDEN.search(style))
    before = after = False
    for m in _STYLE_BREAK.finditer(style):
        if m.group(1).lower() == "before":
            before = True
        else:
            after = True
    return hidden, before, after


def _flags(el: lxml.etree._Element) -> tuple[bool, bool, bool]:
    style = el.get("style")
    return _style_flags(style) if style else (False, False, False)


def _is_hidden(el: lxml.etree._Element) -> bool:
    tag = el.tag
    return not isinstance(tag, str) or tag in _SKIP_TAGS or _flags(el)[0]


def _norm_line(s: str) -> str:
    return _SPACES.sub(" ", s.translate(_DROP_CHARS)).strip()


def _cell_text(el: lxml.etree._Element) -> str:
    """Visible text of a table cell on one line (nested blocks and <br> become spaces)."""
    if not "".join(el.itertext()).strip():  # most EDGAR cells are spacers: skip the walk
        return ""
    parts: list[str] = []

    def walk(e: lxml.etree._Element) -> None:
        if not _is_hidden(e):
            if e.text:
                parts.append(e.text)
            for child in e:
                walk(child)
                if child.tail:
                    parts.append(child.tail)
            if e.tag in _BLOCK_TAGS or e.tag in ("br", "td", "th", "tr", "table"):
                parts.append(" ")

    walk(el)
    return " ".join(_norm_line("".join(parts)).split())


def _merge_cells(cells: list[str]) -> list[str]:
    """Drop empty cells; glue `$`/`(` onto the following number and `)`/`%` onto the preceding one."""
    out: list[str] = []
    pending = ""
    for c in cells:
        if not c:
            continue
        if _CURRENCY.match(c):
            pending = (pending + " " + c).strip() if pending else c
            continue
        if pending:
            c = f"{pending}{c}" if pending.endswith("(") else f"{pending} {c}"
            pending = ""
        if _CLOSER.match(c) and out:
            out[-1] = out[-1] + c.replace(" ", "")
            continue
        out.append(c)
    if pending:
        out.append(pending)
    return out


def _table_rows(table: lxml.etree._Element) -> list[list[str]]:
    rows: list[list[str]] = []
    for tr in table.iter("tr"):
        # rows of nested tables are read with their own table (their cells' text is in the outer cell too)
        if _nearest_table(tr) is not table or _is_hidden(tr):
            continue
        cells = [_cell_text(td) for td in tr if td.tag in ("td", "th") and not _is_hidden(td)]
        merged = _merge_cells(cells)
        if merged:
            rows.append(merged)
    return rows


def _nearest_table(el: lxml.etree._Element) -> lxml.etree._Element | None:
    p = el.getparent()
    while p is not None and p.tag != "table":
        p = p.getparent()
    return p


def _data_numeric_cells(rows: list[list[str]]) -> int:
    """Numeric cells, not counting footnote markers that lead a row of prose."""
    n = 0
    for row in rows:
        numeric = [bool(_NUMERIC.match(c)) for c in row]
        for i, (c, is_num) in enumerate(zip(row, numeric, strict=True)):
            if not is_num:
                continue
            if i == 0 and _MARKER.match(c) and not any(numeric[1:]):
                continue
            n += 1
    return n


def is_layout_table(rows: list[list[str]]) -> bool:
    """A table that only positions text: one column, or fewer than two numeric (data) cells."""
    if not rows or max(len(r) for r in rows) < 2:
        return True
    return _data_numeric_cells(rows) < 2


def render_table(rows: list[list[str]]) -> list[str]:
    """Blocks for a table: one block of pipe rows for a data table, plain text for a layout table."""
    if not rows:
        return []
    if not is_layout_table(rows):
        return ["\n".join("| " + " | ".join(c.replace("|", "\\|") for c in row) + " |" for row in rows)]
    lines = [" ".join(row) for row in rows]
    if any(len(x) > _LONG_CELL for x in lines):  # a table laying out paragraphs: one block per row
        return lines
    return ["\n".join(lines)]


class _Builder:
    """Collects inline text into blocks and blocks into pages."""

    def __init__(self) -> None:
        self.pages: list[list[str]] = []
        self.blocks: list[str] = []
        self.buf: list[str] = []

    def text(self, s: str | None) -> None:
        if s:
            self.buf.append(s)

    def flush(self) -> None:
        if not self.buf:
            return
        lines = [_BULLET.sub(r"\1 ", _norm_line(x)) for x in "".join(self.buf).split("\n")]
        self.buf = []
        block = "\n".join(x for x in lines if x)
        if block:
            self.blocks.append(block)

    def add_blocks(self, blocks: list[str]) -> None:
        self.flush()
        self.blocks.extend(b for b in blocks if b)

    def page_break(self) -> None:
        self.flush()
        if self.blocks:
            self.pages.append(self.blocks)
            self.blocks = []

    def finish(self) -> list[str]:
        self.page_break()
        return ["\n\n".join(b) for b in self.pages]


def _walk(el: lxml.etree._Element, out: _Builder) -> None:
    tag = el.tag
    if not isinstance(tag, str) or tag in _SKIP_TAGS:
        return
    hidden, before, after = _flags(el)
    if hidden:
        return
    if before:
        out.page_break()
    if tag == "table":
        out.add_blocks(render_table(_table_rows(el)))
    elif tag == "br":
        out.text("\n")
    else:
        block = tag in _BLOCK_TAGS or tag in ("tr", "td", "th")
        if block:
            out.flush()
        out.text(el.text)
        for child in el:
            _walk(child, out)
            out.text(child.tail)
        if block:
            out.flush()
    if after:
        out.page_break()


_NON_SPACE = re.compile(r"\S")
_SGML_TEXT = re.compile(r"<TEXT>(.*?)(?:</TEXT>|\Z)", re.DOTALL | re.IGNORECASE)
_XML_PROLOG = re.compile(r"\s*<\?xml[^>]*\?>")
_FEED_CHARS = 1 << 20  # characters handed to the parser at a time
_MAX_RECURSION = 10_000


def _decode(data: bytes, damage: list[dict] | None = None) -> tuple[str, int, int]:
    """(text of the file, start, end) of the HTML in it: UTF-16/32 when the bytes say so (BOM, or a NUL in every
    other byte), else UTF-8 when it is, else Windows-1252 (older EDGAR); the span leaves out the SGML wrapper
    and the XML prolog. Offsets instead of slices, so a 95 MB file is not copied again."""
    enc = text_encoding(data[:4096])
    if enc:
        try:
            text = data.decode(enc)
        except UnicodeDecodeError as e:
            text = data.decode(enc, errors="replace")
            if damage is not None:
                damage.append({"page": None, "reason": f"invalid {enc.upper()} bytes", "detail": str(e)})
    else:
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            text = data.decode("cp1252", errors="replace")
    start, end = 0, len(text)
    first = _NON_SPACE.search(text)
    if first and text[first.start() : first.start() + 10].upper() == "<DOCUMENT>":  # EDGAR submission wrapper
        m = _SGML_TEXT.search(text)
        if m:
            start, end = m.start(1), m.end(1)
    m = _XML_PROLOG.match(text, start, end)
    if m:
        start = m.end()
    return text, start, end


def _new_parser() -> lxml.etree.HTMLPullParser:
    # plain lxml.etree elements (not lxml.html's proxy classes): a third faster on 4 MB filings. Events only for
    # <body>: the children are read from the tree as it grows.
    return lxml.etree.HTMLPullParser(
        events=("start",), tag="body", huge_tree=True, remove_comments=True, remove_pis=True
    )


class _BodyWalker:
    """`_walk(body)` on a tree that is still being parsed: each child of <body> is turned into text once the next
    one has begun (so it and its tail are complete) and then freed; the text is the same as walking the whole
    tree, the memory that of one block instead of the whole document."""

    def __init__(self, out: _Builder) -> None:
        self.out = out
        self.body: lxml.etree._Element | None = None
        self.hidden = self.after = self.started = False

    def feed(self, events) -> None:
        for _, el in events:
            parent = el.getparent()
            if self.body is None and parent is not None and parent.getparent() is None:
                self.body = el
                self.hidden, before, self.after = _flags(el)
                if not self.hidden:
                    if before:
                        self.out.page_break()
                    self.out.flush()
        self._drain(final=False)

    def _drain(self, final: bool) -> None:
        body, out = self.body, self.out
        if body is None:
            return
        while True:
            child = next(iter(body), None)
            if child is None or (not final and child.getnext() is None):
                break  # the last child may still be growing
            if not self.started:
                self.started = True
                if not self.hidden:
                    out.text(body.text)
            if not self.hidden:
                _walk(child, out)
                out.text(child.tail)
            child.clear(keep_tail=False)
            body.remove(child)

    def finish(self, root: lxml.etree._Element) -> None:
        if self.body is None:  # no <body>: the whole tree, as it is
            _walk(root, self.out)
            return
        self._drain(final=True)
        if not self.hidden:
            if not self.started:
                self.out.text(self.body.text)
            self.out.flush()
            if self.after:
                self.out.page_break()


def _stopped(parser: lxml.etree.HTMLPullParser) -> lxml.etree._LogEntry | None:
    """The fatal error that made libxml2 stop (it then drops the rest of the document), if any."""
    return next((e for e in parser.feed_error_log if e.level >= lxml.etree.ErrorLevels.FATAL), None)


def html_pages(path: Path, damage: list[dict] | None = None) -> list[str]:
    """Page texts of an HTML filing (no section logic, no filing check). A parse that libxml2 would cut short
    (nesting beyond its depth limit, any fatal error) is refused; findings that do not stop the parse (invalid
    UTF-16 bytes, parser errors) are appended to `damage`."""
    try:
        data = path.read_bytes()
    except OSError as e:
        raise IngestError(path, f"cannot read: {e.strerror or e}") from e
    text, start, end = _decode(data, damage)
    del data
    if _NON_SPACE.search(text, start, end) is None:
        raise IngestError(path, "empty HTML file")
    parser = _new_parser()
    out = _Builder()
    walker = _BodyWalker(out)
    recursion = sys.getrecursionlimit()
    # the walk recurses once per nesting level: let it follow the parser's depth limit (libxml2: 2048; Python
    # 3.11+ keeps these frames on the heap)
    sys.setrecursionlimit(max(recursion, _MAX_RECURSION))
    try:
        for pos in range(start, end, _FEED_CHARS):
            parser.feed(text[pos : min(pos + _FEED_CHARS, end)])
            if (stop := _stopped(parser)) is not None:
                break
            walker.feed(parser.read_events())
        else:
            root = parser.close()
            stop = _stopped(parser)
            if stop is None:
                walker.feed(parser.read_events())
                if root is None:
                    raise IngestError(path, "no HTML content")
                walker.finish(root)
    except (lxml.etree.LxmlError, ValueError) as e:
        if isinstance(e, IngestError):
            raise
        raise IngestError(path, f"unparseable HTML ({e})") from e
    except RecursionError as e:
        raise IngestError(path, "HTML nested too deeply to parse") from e
    finally:
        sys.setrecursionlimit(recursion)
    if stop is not None:
        raise IngestError(
            path,
            # huge_tree is on already: libxml2's "use XML_PARSE_HUGE option" hint would mislead
            f"HTML parser stopped at line {stop.line} ({stop.message.split(', use XML_PARSE_HUGE')[0].strip()}):"
            " refused rather than dropping the rest of the document",
        )
    errors = [e for e in parser.feed_error_log if e.level == lxml.etree.ErrorLevels.ERROR]
    if errors and damage is not None:
        damage.append(
            {
                "page": None,
                "reason": "HTML parser errors",
                "detail": f"{len(errors)}, first at line {errors[0].line}: {errors[0].message.strip()}",
            }
        )
    return out.finish()


def parse_edgar_html(path: str | Path, doc_id: str) -> Parsed:
    """All pages of an EDGAR HTML filing (0-based, split at the filing's page breaks) with their sections, and
    `.damage` (file-level findings that did not stop the parse; none for a healthy file)."""
    p = Path(path)
    damage: list[dict] = []
    texts = html_pages(p, damage)
    total = sum(len(t) for t in texts)
    if total < MIN_FILING_CHARS:
        raise IngestError(p, f"not a filing: only {total} characters of visible text")
    if not _FILING_MARKERS.search(" ".join(texts[:3])[:20000]):
        raise IngestError(
            p, "not a filing: no SEC filing markers (e.g. 'Securities and Exchange Commission', 'Form 10-K')"
        )
    sections = assign_sections(texts)
    pages = [
        Page(doc_id=doc_id, page=i, text=t, section=s)
        for i, (t, s) in enumerate(zip(texts, sections, strict=True))
    ]
    return Parsed(pages, damage)


__all__ = ["parse_edgar_html", "html_pages", "is_layout_table", "render_table"]
