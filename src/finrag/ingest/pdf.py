"""PDF filings -> pages with pypdfium2 (PDFium; Apache-2.0/BSD-3), chosen by measurement (docs/pdf_libraries.md).

Page i here is PDF page index i, which is exactly FinanceBench's 0-based `evidence_page_num`. PDFium keeps a
table row on one line ("Depreciation and amortization 1,488 1,544 1,474"), so numbers stay whole and in row
order. PDFium has no paragraph detection; a blank line is inserted where the vertical gap between two lines is
clearly larger than the line height, so the chunkers see blocks as they do in HTML.

PDFium opens a damaged file without complaint and extracts what it can, so each page is also measured for
damage (`Parsed.damage`, see `page_damage` and `stream_damage`): a page that fails to load; characters PDFium
counts but cannot give as text; control codes / U+FFFD where letters should be (an unreadable font encoding);
text objects that yield no characters (an unreadable font); and, in the file's objects as pikepdf (qpdf) reads
them, a page dictionary, content stream, form XObject, font, ToUnicode map or embedded font program of the page
that is missing, malformed, or whose Flate data does not decode to its end. A file qpdf reads cleanly through the
cross-reference table PDFium used is checked as it is; any other is checked on PDFium's own copy of it (the
objects as PDFium read them, an encrypted file decrypted), each object judged as the file stores it. None of
these depends on how much text a page has, so a cover page, a blank page or a one-line exhibit page is never
taken for a damaged one: on the 74 FinanceBench PDFs (10,206 pages) no page is flagged.
"""

from __future__ import annotations

import contextlib
import io
import logging
import re
import zlib
from pathlib import Path
from typing import NamedTuple, cast

import pikepdf
import pypdfium2 as pdfium
import pypdfium2.raw as pdfium_c

from finrag.core.contracts import Page
from finrag.ingest.parsed import IngestError, Parsed
from finrag.ingest.sections import assign_sections

log = logging.getLogger(__name__)

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


def _page_text(textpage: pdfium.PdfTextPage, raw: str | None = None) -> str:
    """Page text, one PDF line per line, with a blank line between blocks (paragraphs, table groups)."""
    if raw is None:
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


# ---------------------------------------------------------------- damage: what PDFium extracted

# Thresholds are absolute minimums plus a share of the page, so that a handful of odd glyphs (a symbol font, an
# emoji) never flags a page; on damaged pages the counts run to hundreds.
LOST_CHARS_MIN, LOST_CHARS_SHARE = 20, 0.05
BAD_CHARS_MIN, BAD_CHARS_SHARE = 5, 0.01
EMPTY_TEXT_OBJECTS_MIN = 20
UNMAPPED_SAMPLE = 128
# what PDFium gives for a glyph it cannot map: NUL, C0/C1 control codes (not tab/newline/CR, not its \x02
# hyphen), U+FFFD
_BAD_CHARS = re.compile("[\x00\x01\x03-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\ufffd]")


def _count_text_objects(handle, count, get, depth: int = 0) -> int:
    n = 0
    for k in range(count(handle)):
        obj = get(handle, k)
        kind = pdfium_c.FPDFPageObj_GetType(obj)
        if kind == pdfium_c.FPDF_PAGEOBJ_TEXT:
            n += 1
        elif kind == pdfium_c.FPDF_PAGEOBJ_FORM and depth < 8:
            n += _count_text_objects(
                obj, pdfium_c.FPDFFormObj_CountObjects, pdfium_c.FPDFFormObj_GetObject, depth + 1
            )
    return n


def page_damage(page: pdfium.PdfPage, textpage: pdfium.PdfTextPage, raw: str) -> list[tuple[str, str]]:
    """(reason, detail) for each sign that PDFium lost this page's text while extracting it; [] when healthy."""
    out: list[tuple[str, str]] = []
    n_chars = textpage.count_chars()
    lost = n_chars - len(raw)
    if lost >= max(LOST_CHARS_MIN, LOST_CHARS_SHARE * n_chars):
        out.append(("characters lost in extraction", f"{lost} of {n_chars} characters came out as no text"))
    bad = len(_BAD_CHARS.findall(raw))
    if bad >= max(BAD_CHARS_MIN, BAD_CHARS_SHARE * len(raw)):
        out.append(("unmapped characters", f"{bad} of {len(raw)} characters are control codes or U+FFFD"))
    else:
        # glyphs PDFium could not map to Unicode (a damaged ToUnicode map or encoding) come out as other letters
        # ("7DEOH" for "Table"): ask PDFium, on an even sample of at most UNMAPPED_SAMPLE characters
        step = max(1, n_chars // UNMAPPED_SAMPLE)
        sample = range(0, n_chars, step)
        unmapped = sum(pdfium_c.FPDFText_HasUnicodeMapError(textpage, k) > 0 for k in sample)
        if unmapped >= max(BAD_CHARS_MIN, BAD_CHARS_SHARE * len(sample)):
            out.append(
                (
                    "unmapped characters",
                    f"about {unmapped * step} of {n_chars} characters have no Unicode mapping",
                )
            )
    # each text object shows at least one character: far fewer characters than text objects means fonts that
    # could not be read. Objects are only counted (a walk over them) when the page has fewer characters than
    # half its objects, which healthy pages almost never do.
    n_objects = pdfium_c.FPDFPage_CountObjects(page)
    if n_chars < 0.5 * n_objects:
        n_text = _count_text_objects(page, pdfium_c.FPDFPage_CountObjects, pdfium_c.FPDFPage_GetObject)
        if n_text - n_chars >= EMPTY_TEXT_OBJECTS_MIN and n_chars < 0.5 * n_text:
            out.append(
                ("text objects without characters", f"{n_text} text objects gave {n_chars} characters")
            )
    return out


# ---------------------------------------------------------------- damage: the page's objects, read by qpdf

# PDFium gives no access to a file's objects, so qpdf (pikepdf) reads them. A file that qpdf reads through the
# cross-reference table PDFium used, without a warning and without a finding, is healthy. Any other file is judged
# on PDFium's own copy of it (`PdfDocument.save`: the objects as PDFium read them, a fresh cross-reference table),
# so that what is reported missing is what PDFium went without; each object it names is judged as the file stores
# it, and a page dictionary's syntax errors are what qpdf says reading the file itself (`_File`).
_MAX_FORM_DEPTH = 4
# qpdf's warning about one object, e.g. "f.pdf (object 7 0, offset 513): expected n n obj"
_OBJECT_WARNING = re.compile(r"\(object (\d+) (\d+)[,)]")
# keys looked for where qpdf hides them: a reference to an object that cannot be read is null, and qpdf drops it
_REFERENCES: tuple[str, ...] = ("/Contents", "/Resources", "/Kids", "/Font", "/XObject", "/ToUnicode")
_REFERENCES += ("/FontDescriptor", "/DescendantFonts", "/FontFile", "/FontFile2", "/FontFile3")
_UNREAD = object()  # the value of a key whose bytes are not UTF-8 (pikepdf gives none): a damaged key
_NULL = "names an object that cannot be read"


def _name(value: object) -> str:
    """A PDF name as text, one character per byte (a damaged name's bytes need not be UTF-8)."""
    if isinstance(value, str):
        return value.encode("utf-8", "surrogateescape").decode("latin-1")
    return bytes(cast(pikepdf.Object, value)).decode("latin-1") if isinstance(value, pikepdf.Name) else ""


def _num(value: object) -> int | None:
    """The object number of an indirect object; None for a direct value or a null."""
    return value.objgen[0] if isinstance(value, pikepdf.Object) and value.is_indirect else None


def _entries(obj: object) -> dict[str, object]:
    """A dictionary's (or stream's) entries, with None for a key that names an object that cannot be read."""
    if isinstance(obj, pikepdf.Stream):
        obj = obj.stream_dict
    if not isinstance(obj, pikepdf.Dictionary):
        return {}
    out: dict[str, object] = {}
    keys = obj.keys()
    for key in keys:
        try:
            out[_name(key)] = obj.get(key)
        except (TypeError, UnicodeError):
            out[_name(key)] = _UNREAD
    held = obj.as_dict()  # with the keys qpdf hides
    hidden = len(held) - len(out)
    for key in _REFERENCES if hidden else ():
        if key not in out and key in held:
            out[key], hidden = None, hidden - 1
    out.update({f"(unreadable {k})": None for k in range(hidden)})
    return out


def _items(obj: object) -> list[object]:
    return list(obj) if isinstance(obj, pikepdf.Array) else []


class _Page(NamedTuple):
    num: int | None  # the page object's number (None: a direct value or a null in /Kids)
    gen: int
    entries: dict[str, object] | None  # None: the page tree entry is not a dictionary
    resources: dict[str, object]  # with inherited ones


def _pages(doc: pikepdf.Pdf) -> list[_Page]:
    """Every leaf of the page tree from the document catalog (the trailer's /Root, else any /Catalog), in order."""
    out: list[_Page] = []
    seen: set[int] = set()

    def walk(node: object, resources: object, depth: int) -> None:
        num = _num(node)
        if depth > 64 or num in seen:
            return
        gen = cast(pikepdf.Object, node).objgen[1] if num is not None else 0
        if num is not None:
            seen.add(num)
        entries = _entries(node)
        if not entries:  # a damaged /Kids entry: a page PDFium counts but cannot load
            out.append(_Page(num, gen, None, {}))
            return
        res = entries.get("/Resources", resources)
        kids, kind = _items(entries.get("/Kids")), _name(entries.get("/Type"))
        if kind == "/Pages" or (kids and kind != "/Page"):
            for kid in kids:
                walk(kid, res, depth + 1)
        else:
            out.append(_Page(num, gen, entries, _entries(res)))

    root = _entries(doc.trailer.get("/Root"))
    if "/Pages" not in root:
        catalogs = (o for o in doc.objects if _name(_entries(o).get("/Type")) == "/Catalog")
        root = _entries(next(catalogs, None))
    walk(root.get("/Pages"), None, 0)
    return out


def _filters(value: pikepdf.Object) -> list[str]:
    f = value.get("/Filter")
    if isinstance(f, pikepdf.Array):
        return [_name(x) for x in f]
    return [_name(f)] if isinstance(f, pikepdf.Name) else []


def flate_problem(data: bytes) -> str | None:
    """Why Flate data does not decode to its end-of-data mark (zlib's error, or cut short); None when it does.

    A stream whose data decodes whole and only its Adler-32 checksum differs, in one byte, had that byte damaged,
    not the data: readers (PDFium too) ignore the checksum, and so does this check."""
    d = zlib.decompressobj()
    try:
        d.decompress(data)
        d.flush()
    except zlib.error as e:
        if "incorrect data check" in str(e) and _checksum_byte_only(data):
            return None
        return f"zlib: {str(e).removeprefix('Error -3 while decompressing data: ')}"
    return None if d.eof else "data ends before the end of the compressed stream"


def _checksum_byte_only(data: bytes) -> bool:
    d = zlib.decompressobj(-15)  # the raw deflate data after the 2-byte zlib header
    try:
        out = d.decompress(data[2:])
    except zlib.error:
        return False
    stored, computed = d.unused_data[:4], zlib.adler32(out).to_bytes(4, "big")
    return d.eof and len(stored) == 4 and sum(a != b for a, b in zip(stored, computed, strict=True)) == 1


# the standard filters, with their abbreviations (ISO 32000-1, 7.4)
_FILTERS = frozenset(
    [
        "/ASCIIHexDecode",
        "/AHx",
        "/ASCII85Decode",
        "/A85",
        "/LZWDecode",
        "/LZW",
        "/FlateDecode",
        "/Fl",
        "/RunLengthDecode",
        "/RL",
        "/CCITTFaxDecode",
        "/CCF",
        "/JBIG2Decode",
        "/DCTDecode",
        "/DCT",
        "/JPXDecode",
        "/Crypt",
    ]
)
_NOT_CONTENT = frozenset(["/ObjStm", "/XRef", "/Metadata", "/EmbeddedFile"])


def _stream_problem(obj: pikepdf.Object, must_be_stream: bool = True) -> str | None:
    """Why a stream the page needs cannot be read as it is meant to be; None when it can (or is not checked)."""
    if not isinstance(obj, pikepdf.Stream):
        return "not a stream (its `stream` keyword is damaged)" if must_be_stream else None
    kind = _name(obj.get("/Type"))
    kind = kind if kind in _NOT_CONTENT else _name(obj.get("/Subtype"))
    if kind in _NOT_CONTENT or kind in ("/Image", "/XML"):
        return f"points at a {kind} stream, not page content"
    filters = _filters(obj)
    unknown = [f for f in filters if f not in _FILTERS]
    if unknown:
        return f"unknown filter {unknown[0][:40]!r} (a damaged name)"
    try:
        data = obj.read_raw_bytes()
    except pikepdf.PdfError as e:
        return f"unreadable ({e})"
    if not filters:
        # unfiltered data that is in fact a zlib stream: the /Filter entry itself was damaged
        # a content stream or CMap starts with an operator, a name or a comment, never with a zlib header
        head = data[:2]
        if len(head) == 2 and head[0] == 0x78 and (head[0] * 256 + head[1]) % 31 == 0:
            return "Flate data without a /Filter entry (the entry is damaged)"
        return None
    return flate_problem(data) if filters[0] in ("/FlateDecode", "/Fl") else None


def _damaged_key(d: dict, expected: tuple[str, ...]) -> tuple[str, str] | None:
    """(key, expected key) when an expected key is missing and another key is that name with one byte changed:
    a flipped byte in the key, which would otherwise pass as, say, a page without content."""
    for want in expected:
        if want in d:
            continue
        for key in d:
            if len(key) == len(want) and sum(a != b for a, b in zip(key, want, strict=True)) == 1:
                return key, want
    return None


def stream_damage(  # noqa: C901 (one check per kind of stream damage)
    doc: pikepdf.Pdf, n_pages: int, file: _File | None = None, unloaded: frozenset[int] = frozenset()
) -> dict[int, list[tuple[str, str]]] | None:
    """Page -> (reason, detail) for each damaged object the page's text comes from: its dictionary, its content
    streams, form XObjects and fonts (ToUnicode maps, embedded font programs): missing, malformed, or Flate data
    that does not decode to its end. `doc` gives the pages and the objects they name; with `file` (when `doc` is
    PDFium's copy), each object is judged as the file stores it. None when the page tree does not match PDFium's
    page count: then nothing is said rather than something wrong; where it has exactly as many pages fewer as
    there are pages PDFium could not load (`unloaded`: PDFium counts pages by /Count), those are the ones."""
    pages = _pages(doc)
    if unloaded and len(pages) + len(unloaded) == n_pages:
        rest = iter(pages)
        pages = [_Page(None, 0, None, {}) if i in unloaded else next(rest) for i in range(n_pages)]
    if len(pages) != n_pages:
        return None
    checked: dict[tuple[int, bool], str | None] = {}

    def problem(entries: dict[str, object], key: str, must_be_stream: bool = True) -> str | None:
        """What is wrong with the stream entries[key] names, if anything."""
        value = entries.get(key)
        if value is None:
            return f"{key} {_NULL}" if key in entries else None
        num = _num(value)
        if num is None:
            return None
        if (num, must_be_stream) not in checked:
            stream = cast(pikepdf.Object, value)
            checked[num, must_be_stream] = _stream_problem(
                file.stored(stream) if file else stream, must_be_stream
            )
        why = checked[num, must_be_stream]
        return f"object {num}: {why}" if why else None

    def resources(res: dict[str, object], found: list[tuple[str, str]], depth: int, seen: set[int]) -> None:
        for font in _entries(res.get("/Font")).values():
            fd = _entries(font)
            # a Type 0 font's glyphs are its descendant font's
            descendants = _items(fd.get("/DescendantFonts"))
            if font is None or any(d is None for d in descendants):
                found.append(("missing font", f"{'/DescendantFonts' if font else 'a /Font entry'} {_NULL}"))
                continue
            if why := problem(fd, "/ToUnicode", must_be_stream=False):
                found.append(("corrupt ToUnicode map", why))
            # the embedded font program: without a ToUnicode map, PDFium reads the characters from it
            for f in [fd, *map(_entries, descendants)]:
                desc = _entries(f.get("/FontDescriptor"))
                for key in ("/FontFile", "/FontFile2", "/FontFile3"):
                    if why := problem(desc, key):
                        found.append(("corrupt embedded font", why))
        xobjects = _entries(res.get("/XObject"))
        for name, xobj in xobjects.items():
            num = _num(xobj)
            if num is None or num in seen or depth >= _MAX_FORM_DEPTH:
                continue
            seen.add(num)
            entries = _entries(xobj)
            if _name(entries.get("/Subtype")) == "/Form":
                if why := problem(xobjects, name):
                    found.append(("corrupt form XObject", why))
                resources(_entries(entries.get("/Resources")), found, depth + 1, seen)

    out: dict[int, list[tuple[str, str]]] = {}
    for i, page in enumerate(pages):
        found: list[tuple[str, str]] = []
        label = f"object {'?' if page.num is None else page.num}"
        if page.entries is None:
            found.append(
                ("missing page object", f"page tree entry {label.removeprefix('object ')} is not a page")
            )
        entries = page.entries or {}
        # a damaged page dictionary matters when it lost the page's content: syntax errors and no /Contents left,
        # or a key one byte away from /Contents or /Resources
        contents = entries.get("/Contents")
        kept = "/Contents" in entries and (
            contents is None or _num(contents) is not None or _is_array(contents)
        )
        if not kept and file and page.num is not None and (errors := file.errors(page.num, page.gen)):
            found.append(("damaged page dictionary", f"{label}: {errors} syntax error(s)"))
        if typo := _damaged_key(entries, ("/Contents", "/Resources")):
            found.append(("damaged page dictionary", f"{label}: key {typo[0]!r} where {typo[1]} belongs"))
        if _is_array(contents):
            streams = {f"/Contents[{k}]": c for k, c in enumerate(_items(contents))}
        else:
            streams = {"/Contents": contents} if "/Contents" in entries else {}
        for key in streams:
            if why := problem(streams, key):
                found.append(("missing content stream" if _NULL in why else "corrupt content stream", why))
        resources(page.resources, found, 0, set())
        if found:
            out[i] = found
    return out


def _is_array(value: object) -> bool:
    return isinstance(value, pikepdf.Array)


def _corrupt_streams(doc: pikepdf.Pdf) -> list[int]:
    """Objects whose Flate data does not decode, anywhere in the file (cross-reference streams aside)."""
    bad = []
    for obj in doc.objects:
        if not isinstance(obj, pikepdf.Stream) or _name(obj.get("/Type")) == "/XRef":
            continue
        if _filters(obj)[:1] in (["/FlateDecode"], ["/Fl"]) and flate_problem(obj.read_raw_bytes()):
            bad.append(obj.objgen[0])
    return sorted(bad)


def _open(source: Path | io.BytesIO, recover: bool = False) -> pikepdf.Pdf:
    return pikepdf.open(
        source, attempt_recovery=recover, inherit_page_attributes=False, conversion_mode="explicit"
    )


class _File:
    """The file itself as qpdf reads it, repairing what it must, opened on first use: an object of PDFium's copy as
    the file stores it (same number: PDFium keeps them), and what qpdf says about an object while reading it."""

    def __init__(self, path: Path) -> None:
        self.path, self.doc = path, cast(pikepdf.Pdf | None, None)
        self.warned: dict[tuple[int, int], int] = {}

    def _get(self, num: int, gen: int) -> object:
        if self.doc is None:
            self.doc = _open(self.path, recover=True)
        obj = self.doc.get_object(num, gen)
        isinstance(obj, pikepdf.Dictionary)  # qpdf reads an object when it is first used
        for w in self.doc.get_warnings():
            if m := _OBJECT_WARNING.search(w):
                og = (int(m.group(1)), int(m.group(2)))
                self.warned[og] = self.warned.get(og, 0) + 1
        return obj

    def stored(self, value: pikepdf.Object) -> pikepdf.Object:
        with contextlib.suppress(Exception):
            if isinstance(obj := self._get(*value.objgen), pikepdf.Object):
                return obj
        return value  # not in the file as qpdf reads it: PDFium's copy is all there is

    def errors(self, num: int, gen: int) -> int:
        with contextlib.suppress(Exception):
            self._get(num, gen)
        return self.warned.get((num, gen), 0)

    def close(self) -> None:
        if self.doc is not None:
            self.doc.close()


def object_damage(
    pdf: pdfium.PdfDocument, path: Path, n_pages: int, unloaded: frozenset[int] = frozenset()
) -> tuple[dict[int, list[tuple[str, str]]] | None, list[dict]]:
    """The damage found in the objects of the file PDFium opened: (page -> findings as `stream_damage` gives
    them, or None when the pages could not be told apart; findings about the whole file).

    A file qpdf reads through the cross-reference table PDFium used, without a warning and without a finding, is
    healthy (the FinanceBench PDFs all are). Any other is checked on PDFium's own copy of it, each object judged as
    the file stores it (`_File`); without a copy, on the file as qpdf repairs it. The check never costs a file its
    text: where it cannot run, it says so in the log and finds nothing."""
    if pdfium_c.FPDF_DocumentHasValidCrossReferenceTable(pdf):
        with contextlib.suppress(Exception), _open(path) as doc:  # qpdf decrypts an encrypted file itself
            if stream_damage(doc, n_pages) == {} and not doc.get_warnings():
                return {}, []  # healthy
    file = _File(path)
    try:
        try:
            buf = io.BytesIO()
            pdf.save(buf, flags=pdfium_c.FPDF_REMOVE_SECURITY)
            doc = _open(io.BytesIO(buf.getvalue()))
        except Exception:  # noqa: BLE001 - no copy: the file itself, as qpdf repairs it
            doc = _open(path, recover=True)
        with doc:
            by_page = stream_damage(doc, n_pages, file, unloaded)
            if by_page is not None or not (bad := _corrupt_streams(doc)):
                return by_page, []
        # the page tree could not be read: say that the file has corrupt streams
        detail = f"{len(bad)} Flate streams do not decode (objects {', '.join(map(str, bad[:5]))})"
        return None, [{"page": None, "reason": "corrupt streams, pages unknown", "detail": detail}]
    except Exception as e:  # noqa: BLE001 - see the docstring
        log.warning("%s: stream check could not run (%s: %s)", path, type(e).__name__, e)
        return None, []
    finally:
        file.close()


def parse_pdf(path: str | Path, doc_id: str) -> Parsed:
    """All pages of a PDF (page = 0-based PDF page index), each with its text and current section, and the
    damage measured on them (`.damage`: pages that failed to load or lost text; their text is what was left).
    A PDF that cannot be opened, or with no text left on any page, is refused (IngestError)."""
    p = Path(path)
    _check_complete(p)
    try:
        pdf = pdfium.PdfDocument(str(p))
    except pdfium.PdfiumError as e:
        raise IngestError(p, f"unreadable PDF ({e})") from e
    texts: list[str] = []
    damage: list[dict] = []
    try:
        n = len(pdf)
        if n == 0:
            raise IngestError(p, "PDF has no pages")
        for i in range(n):
            try:
                page = pdf[i]
            except pdfium.PdfiumError as e:
                damage.append({"page": i, "reason": "page failed to load", "detail": str(e)})
                texts.append("")
                continue
            try:
                textpage = page.get_textpage()
                raw = textpage.get_text_range()
                text, found = _page_text(textpage, raw), page_damage(page, textpage, raw)
                textpage.close()
            except pdfium.PdfiumError as e:
                text, found = "", [("page text unreadable", str(e))]
            finally:
                page.close()
            texts.append(text)
            damage.extend({"page": i, "reason": r, "detail": d} for r, d in found)
        unloaded = frozenset(d["page"] for d in damage if d["reason"] == "page failed to load")
        by_page, whole = object_damage(pdf, p, n, unloaded)
        damage.extend(whole)
        for i, found in sorted((by_page or {}).items()):
            damage.extend({"page": i, "reason": r, "detail": d} for r, d in found)
        if by_page is None and damage:
            # a damaged file whose page tree could not be read: its streams went unchecked, so an empty page there
            # is not taken for a blank one
            hit = {d["page"] for d in damage if d["page"] is not None}
            damage.extend(
                {
                    "page": i,
                    "reason": "no text in a damaged file",
                    "detail": "its streams could not be checked",
                }
                for i, t in enumerate(texts)
                if i not in hit and not t.strip()
            )
    finally:
        pdf.close()
    damage.sort(key=lambda d: -1 if d["page"] is None else d["page"])
    if not any(t.strip() for t in texts):
        if damage:
            raise IngestError(p, f"damaged PDF: no text left on any of its {n} pages")
        raise IngestError(p, f"no extractable text on any of {len(texts)} pages (scanned PDF?)")
    sections = assign_sections(texts)
    pages = [
        Page(doc_id=doc_id, page=i, text=t, section=s)
        for i, (t, s) in enumerate(zip(texts, sections, strict=True))
    ]
    return Parsed(pages, damage)


__all__ = ["parse_pdf", "page_damage", "stream_damage", "flate_problem", "PARAGRAPH_GAP"]
