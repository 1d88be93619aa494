"""One entry point for filings: sniff the format, dispatch to the PDF or EDGAR-HTML parser, fail in one line.

Also holds what both parsers share: `IngestError`, `Parsed` (the pages plus the damage the parser measured on
them: a partly damaged file is parsed and says which pages lost text, never loses it in silence), the text
encoding sniffer (UTF-16/32 HTML) and the section-heading logic (`Item 7. ...`, `PART II`), so a PDF page and
an HTML page get their `section` by the same rules.
"""

from __future__ import annotations

import re
from pathlib import Path

DEFAULT_MAX_FILE_MB = 100.0
_SNIFF_BYTES = 64 * 1024


class IngestError(ValueError):
    """A filing that cannot be parsed. The message is one line naming the file and why."""

    def __init__(self, path: str | Path, why: str) -> None:
        self.path = str(path)
        self.why = " ".join(str(why).split())
        super().__init__(f"{self.path}: {self.why}")


class Parsed(list):
    """The pages of one filing (a plain list of Page, as before) and the damage the parser measured.

    `damage` holds one record per finding, {"page": 0-based page or None for the whole file, "reason": ...};
    a healthy file has none. The pages of a damaged file are still all there, with whatever text was left.
    """

    def __init__(self, pages=(), damage=()) -> None:
        super().__init__(pages)
        self.damage: list[dict] = [dict(d) for d in damage]

    @property
    def damaged_pages(self) -> list[int]:
        return sorted({d["page"] for d in self.damage if d.get("page") is not None})

    def reasons(self) -> dict[str, int]:
        return damage_reasons(self.damage)

    def warning(self) -> str | None:
        """One line naming the damaged pages and why, or None for a healthy file."""
        if not self.damage:
            return None
        pages = self.damaged_pages
        why = "; ".join(f"{k}: {n} page{'s' if n > 1 else ''}" if n else k for k, n in self.reasons().items())
        where = (
            f"{len(pages)} of {len(self)} pages damaged: {page_ranges(pages)}" if pages else "file damaged"
        )
        return f"{where} ({why})"


def damage_reasons(damage: list[dict]) -> dict[str, int]:
    """Each kind of damage and on how many pages (0: a finding about the whole file), commonest first."""
    seen: dict[str, set] = {}
    for d in damage:
        seen.setdefault(d["reason"], set()).add(d.get("page"))
    counts = ((k, len(v - {None})) for k, v in seen.items())
    return dict(sorted(counts, key=lambda kv: (-kv[1], kv[0])))


def page_ranges(pages: list[int]) -> str:
    """[0, 1, 2, 5, 7, 8] -> '0-2, 5, 7-8' (0-based page numbers, as everywhere in the corpus)."""
    out: list[str] = []
    for p in sorted(set(pages)):
        if out and out[-1][1] == p - 1:
            out[-1][1] = p
        else:
            out.append([p, p])
    return ", ".join(str(a) if a == b else f"{a}-{b}" for a, b in out)


def text_encoding(head: bytes) -> str | None:
    """'utf-16' / 'utf-16-le' / 'utf-16-be' / 'utf-32' when the bytes are UTF-16 or UTF-32 text, else None.

    A byte-order mark decides; without one, UTF-16 text of mostly ASCII markup has a NUL in every other byte
    (odd bytes for little-endian, even for big-endian), which no 8-bit HTML has.
    """
    if head.startswith((b"\xff\xfe\x00\x00", b"\x00\x00\xfe\xff")):
        return "utf-32"
    if head.startswith((b"\xff\xfe", b"\xfe\xff")):
        return "utf-16"
    sample = head[:4096]
    sample = sample[: len(sample) // 2 * 2]
    if len(sample) < 16:
        return None
    half = len(sample) // 2
    even, odd = sample[0::2].count(0), sample[1::2].count(0)
    if odd >= 0.4 * half and even <= 0.05 * half:
        return "utf-16-le"
    if even >= 0.4 * half and odd <= 0.05 * half:
        return "utf-16-be"
    return None


def max_file_bytes() -> int:
    """The size limit, from params.yaml `ingest.max_file_mb` when set (a huge file is refused, not parsed)."""
    try:
        from finrag.config import params

        mb = float(params("ingest").get("max_file_mb", DEFAULT_MAX_FILE_MB))
    except (KeyError, FileNotFoundError, TypeError, ValueError):
        mb = DEFAULT_MAX_FILE_MB
    return int(mb * 1024 * 1024)


def sniff_format(head: bytes) -> str | None:
    """'pdf', 'html' or None from the first bytes of a file (PDF magic may follow a little junk)."""
    if b"%PDF-" in head[:1024]:
        return "pdf"
    enc = text_encoding(head)
    if enc:  # UTF-16/32 HTML: look for the tags in the decoded text
        head = head.decode(enc, errors="ignore").encode("utf-8", errors="ignore")
    low = head.lower()
    if re.search(rb"<(?:!doctype\s+html|html|body|div|p|table|font|span)\b", low):
        return "html"
    return None


def parse_filing(path: str | Path, doc_id: str | None = None, max_bytes: int | None = None) -> Parsed:
    """Parse a PDF or EDGAR HTML filing into 0-based pages; raise IngestError (one line) on bad input.

    doc_id defaults to the file stem, which is FinanceBench's `doc_name` for its PDFs. The result is a list of
    pages carrying `.damage` (see Parsed): empty for a healthy file; for a partly damaged one, the pages that
    lost text and why. A file with nothing readable left raises IngestError.
    """
    p = Path(path)
    if not p.exists():
        raise IngestError(p, "no such file")
    if not p.is_file():
        raise IngestError(p, "not a regular file")
    size = p.stat().st_size
    limit = max_file_bytes() if max_bytes is None else max_bytes
    if size == 0:
        raise IngestError(p, "empty file")
    if size > limit:
        raise IngestError(
            p,
            f"file is {size / 2**20:.1f} MB, over the {limit / 2**20:.0f} MB limit (params ingest.max_file_mb)",
        )
    try:
        with open(p, "rb") as fh:
            head = fh.read(_SNIFF_BYTES)
    except OSError as e:
        raise IngestError(p, f"cannot read: {e.strerror or e}") from e
    fmt = sniff_format(head)
    doc = doc_id or p.stem
    if fmt == "pdf":
        from finrag.ingest.pdf import parse_pdf

        return parse_pdf(p, doc)
    if fmt == "html":
        from finrag.ingest.edgar_html import parse_edgar_html

        return parse_edgar_html(p, doc)
    raise IngestError(p, "neither a PDF (no %PDF header) nor HTML")


# ---------------------------------------------------------------- section headings (shared by both parsers)

_ITEM_RE = re.compile(
    r"^item\s*(\d{1,2}(?:\.\d{2})?[a-d]?)\s*(?:[.:\-–—]\s*|\s+(?=[A-Z\"“'’(])|$)(.*)$", re.IGNORECASE
)
_PART_RE = re.compile(
    r"^part\s+(iv|i{1,3})\s*(?:[.:\-–—,]?\s*$|[.:\-–—]\s*(.*)$|\s+(?=[A-Z])(.*)$)", re.IGNORECASE
)
_TOC_PAGE_NUM = re.compile(r"\s(?:\d{1,3}(?:\s*[-–]\s*\d{1,3})?|[A-Z]-\d{1,3})$")
_CONTINUED = re.compile(r"\s*\((?:continued|cont['’]d)\)\s*$", re.IGNORECASE)
_MAX_HEADING_LINE = 160
TOC_MIN_ITEMS = 8
TOC_MIN_ENTRIES = 3  # item lines ending in a page number: this many make the page an index


def _clean(s: str) -> str:
    return " ".join(s.replace("\xa0", " ").split())


def _item_key(num: str) -> tuple[int, int, str]:
    """Sort key of an item number: 7A -> (7, 0, 'A'); an 8-K's 2.02 -> (2, 2, '')."""
    m = re.match(r"(\d+)(?:\.(\d+))?([A-Da-d]?)", num)
    return (int(m.group(1)), int(m.group(2) or 0), m.group(3).upper()) if m else (0, 0, "")


def find_headings(text: str) -> list[tuple[int, str, str]]:
    """Headings in page text as (char offset, kind 'item'|'part', label); table-of-contents pages give none.

    A heading is a whole line that starts with `Item N.` (title capitalised, no trailing page number) or
    `PART I..IV`; pipe-table rows never count, which keeps HTML tables of contents out. A page listing
    TOC_MIN_ITEMS or more items, or TOC_MIN_ENTRIES item lines ending in page numbers, or restarting its item
    numbers without a PART heading in between, is a table of contents, not a place where sections begin.
    """
    found: list[tuple[int, str, str]] = []
    toc_entries = 0
    lines = text.split("\n")
    offset = 0
    starts = []
    for ln in lines:
        starts.append(offset)
        offset += len(ln) + 1
    for i, raw in enumerate(lines):
        line = _clean(raw)
        if not line or len(line) > _MAX_HEADING_LINE or line.startswith("|"):
            continue
        m = _ITEM_RE.match(line)
        if m:
            num, title = m.group(1).upper(), m.group(2).strip()
            if not title:  # "Item 7." alone on its line (a two-column heading): title on the next line
                nxt = next((_clean(x) for x in lines[i + 1 : i + 3] if _clean(x)), "")
                if (
                    nxt
                    and len(nxt) <= 120
                    and (nxt[0].isupper() or nxt[0] in "\"“'’")
                    and not nxt.startswith("|")
                ):
                    title = nxt
            if title and not (title[0].isupper() or title[0] in "\"“'’("):
                continue
            if title and _TOC_PAGE_NUM.search(title):
                toc_entries += 1  # "Item 7. Management's Discussion ... 23": an index line, not a heading
                continue
            title = _CONTINUED.sub("", title).rstrip(" .")
            label = f"Item {num}" + ("" if "." in num else ".") + (f" {title}" if title else "")
            found.append((starts[i], "item", label[:140]))
            continue
        m = _PART_RE.match(line)
        if m:
            rest = (m.group(2) or m.group(3) or "").strip()
            if len(rest) > 80 or (rest and (not rest[0].isupper() or _TOC_PAGE_NUM.search(rest))):
                continue
            label = f"PART {m.group(1).upper()}" + (f" — {rest}" if rest else "")
            found.append((starts[i], "part", label))
    items: list[tuple[int, int, str]] = []
    restarts, prev = False, None
    for _, kind, label in found:
        if kind == "part":
            prev = None  # numbering restarts legitimately after a PART heading
            continue
        key = _item_key(label.split()[1].rstrip("."))
        restarts |= prev is not None and key <= prev
        items.append(key)
        prev = key
    if len(set(items)) >= TOC_MIN_ITEMS or restarts or toc_entries >= TOC_MIN_ENTRIES:
        return []
    return found


def assign_sections(texts: list[str]) -> list[str]:
    """Section per page: the heading in force over most of the page's text (carried over from earlier pages).

    An `Item` heading is the section until the next heading; a `PART` heading is the section until its first
    Item (so the page with "PART II" then "Item 1. Legal Proceedings" reads as the item).
    """
    current = ""
    out: list[str] = []
    for text in texts:
        events = find_headings(text)
        spans: dict[str, int] = {}
        pos = 0
        for off, _kind, label in events:
            spans[current] = spans.get(current, 0) + len(text[pos:off].strip())
            current, pos = label, off
        spans[current] = spans.get(current, 0) + len(text[pos:].strip())
        best = max(spans.items(), key=lambda kv: (kv[1], kv[0] == current))[0]
        out.append(best)
    return out
