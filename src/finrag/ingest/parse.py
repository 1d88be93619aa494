"""One entry point for filings: sniff the format, dispatch to the PDF or EDGAR-HTML parser, fail in one line.

What both parsers share lives below them: `finrag.ingest.parsed` (`IngestError`, `Parsed`, the text encoding
sniffer) and `finrag.ingest.sections` (section headings).
"""

from __future__ import annotations

import re
from pathlib import Path

from finrag.ingest.edgar_html import parse_edgar_html
from finrag.ingest.parsed import IngestError, Parsed, text_encoding
from finrag.ingest.pdf import parse_pdf

DEFAULT_MAX_FILE_MB = 100.0
_SNIFF_BYTES = 64 * 1024


def max_file_bytes() -> int:
    """The size limit, from params.yaml `ingest.max_file_mb` when set (a huge file is refused, not parsed)."""
    try:
        from finrag.core.config import params

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
        return parse_pdf(p, doc)
    if fmt == "html":
        return parse_edgar_html(p, doc)
    raise IngestError(p, "neither a PDF (no %PDF header) nor HTML")
