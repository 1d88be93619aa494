"""PDF filings -> pages with pypdfium2 (PDFium; Apache-2.0/BSD-3), chosen by measurement (docs/pdf_libraries.md).

Page i here is PDF page index i, which is exactly FinanceBench's 0-based `evidence_page_num`. PDFium keeps a
table row on one line ("Depreciation and amortization 1,488 1,544 1,474"), so numbers stay whole and in row
order. PDFium has no paragraph detection; a blank line is inserted where the vertical gap between two lines is
clearly larger than the line height, so the chunkers see blocks as they do in HTML.
"""

from __future__ import annotations

from pathlib import Path

import pypdfium2 as pdfium
import pypdfium2.raw as pdfium_c

from finrag.contracts import Page
from finrag.ingest.parse import IngestError, assign_sections

# A gap between two lines above this fraction of the (smaller) line height starts a new block. On ~5,300
# consecutive line pairs of FinanceBench 10-K pages the gaps cluster at 0-0.2 line heights (inside a block) and
# around 1.1 (between blocks), with a trough at 0.6-0.8.
PARAGRAPH_GAP = 0.6
_EOF_WINDOW = 8192
_CHAR_MAP = str.maketrans({"\ufffe": "-", "\xa0": " ", "\uf0b7": "•", "\uf0a7": "•", "\x02": "-", "\x00": ""})


def _check_complete(path: Path) -> None:
    """PDFium may open a cut-off file by rebuilding its xref and silently lose pages: require the trailer."""
    with open(path, "rb") as fh:
        fh.seek(0, 2)
        size = fh.tell()
        fh.seek(max(0, size - _EOF_WINDOW))
        tail = fh.read()
    if b"%%EOF" not in tail:
        raise IngestError(path, "truncated or corrupt PDF: no %%EOF trailer at the end of the file")


def _line_boxes(
    textpage: pdfium.PdfTextPage, text: str, starts: list[int]
) -> list[tuple[float, float] | None]:
    """(bottom, top) of the first visible character of each line, from PDFium's loose (font-height) boxes."""
    out: list[tuple[float, float] | None] = []
    rect = pdfium_c.FS_RECTF()
    n_chars = textpage.count_chars()
    for start in starts:
        box = None
        # first non-blank char of the line, mapped from text index to PDFium's char index
        j = start
        while j < len(text) and text[j] in " \t":
            j += 1
        if j < len(text) and text[j] not in "\r\n":
            ci = pdfium_c.FPDFText_GetCharIndexFromTextIndex(textpage, j)
            if 0 <= ci < n_chars and pdfium_c.FPDFText_GetLooseCharBox(textpage, ci, rect):
                box = (rect.bottom, rect.top)
        out.append(box)
    return out


def _page_text(textpage: pdfium.PdfTextPage) -> str:
    """Page text, one PDF line per line, with a blank line between blocks (paragraphs, table groups)."""
    raw = textpage.get_text_range()
    if not raw.strip():
        return ""
    lines = raw.split("\r\n")
    starts, pos = [], 0
    for ln in lines:
        starts.append(pos)
        pos += len(ln) + 2
    boxes = _line_boxes(textpage, raw, starts)
    out: list[str] = []
    prev: tuple[float, float] | None = None
    for ln, box in zip(lines, boxes, strict=True):
        clean = " ".join(ln.translate(_CHAR_MAP).split())
        if not clean:
            continue
        if out and box is not None and prev is not None:
            height = max(1.0, min(prev[1] - prev[0], box[1] - box[0]))
            gap = prev[0] - box[1]  # PDF y grows upwards: previous bottom minus this top
            if gap > PARAGRAPH_GAP * height or box[0] > prev[1] + height:  # big gap, or jumped back up
                out.append("")
        out.append(clean)
        if box is not None:
            prev = box
    return "\n".join(out)


def parse_pdf(path: str | Path, doc_id: str) -> list[Page]:
    """All pages of a PDF (page = 0-based PDF page index), each with its text and current section."""
    p = Path(path)
    _check_complete(p)
    try:
        pdf = pdfium.PdfDocument(str(p))
    except pdfium.PdfiumError as e:
        raise IngestError(p, f"unreadable PDF ({e})") from e
    texts: list[str] = []
    try:
        n = len(pdf)
        if n == 0:
            raise IngestError(p, "PDF has no pages")
        for i in range(n):
            try:
                page = pdf[i]
                textpage = page.get_textpage()
                texts.append(_page_text(textpage))
                textpage.close()
                page.close()
            except pdfium.PdfiumError as e:
                raise IngestError(p, f"cannot read page {i} ({e})") from e
    finally:
        pdf.close()
    if not any(t.strip() for t in texts):
        raise IngestError(p, f"no extractable text on any of {len(texts)} pages (scanned PDF?)")
    sections = assign_sections(texts)
    return [
        Page(doc_id=doc_id, page=i, text=t, section=s)
        for i, (t, s) in enumerate(zip(texts, sections, strict=True))
    ]


__all__ = ["parse_pdf", "PARAGRAPH_GAP"]
