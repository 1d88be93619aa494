"""Section headings (`Item 7. ...`, `PART II`), shared by both parsers so a PDF page and an HTML page get their
`section` by the same rules."""

from __future__ import annotations

import re

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
