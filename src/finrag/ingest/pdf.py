"""PDF filings -> pages with pypdfium2 (PDFium; Apache-2.0/BSD-3), chosen by measurement (docs/pdf_libraries.md).

Page i here is PDF page index i, which is exactly FinanceBench's 0-based `evidence_page_num`. PDFium keeps a
table row on one line ("Depreciation and amortization 1,488 1,544 1,474"), so numbers stay whole and in row
order. PDFium has no paragraph detection; a blank line is inserted where the vertical gap between two lines is
clearly larger than the line height, so the chunkers see blocks as they do in HTML.

PDFium opens a damaged file without complaint and extracts what it can, so each page is also measured for
damage (`Parsed.damage`, see `page_damage` and `stream_damage`): a page that fails to load; characters PDFium
counts but cannot give as text; control codes / U+FFFD where letters should be (an unreadable font encoding);
text objects that yield no characters (an unreadable font); a content stream, form XObject or ToUnicode map of
the page whose Flate data does not decode to its end (checked on the file's own bytes, or on PDFium's decrypted
copy of an encrypted file). None of these depends on how much text a page has, so a cover page, a blank page or
a one-line exhibit page is never taken for a damaged one: on the 74 FinanceBench PDFs (10,206 pages) no page is
flagged.
"""

from __future__ import annotations

import io
import logging
import re
import zlib
from pathlib import Path
from typing import cast

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


# ---------------------------------------------------------------- damage: the page's streams, from the raw file

# `N G obj`: found from each `obj` keyword looking back (scanning every digit of the binary data is 20x slower)
_OBJ_KW = re.compile(rb"obj\b")
_OBJ_NUMBERS = re.compile(rb"(?<![0-9])(\d{1,10})[ \t\r\n\f\x00]+(\d{1,5})[ \t\r\n\f\x00]+\Z")
_WS = b" \t\r\n\f\x00"
_XREF = re.compile(rb"xref[ \t\r\n\f\x00]+")
_XREF_SECTION = re.compile(rb"(\d{1,10}) (\d{1,10})[ \t]*(?:\r\n|\n|\r)")
_STREAM_KW = re.compile(rb"[ \t\r\n\f\x00]*stream(?:\r\n|\n|\r)")
_ENDSTREAM = re.compile(rb"[ \t\r\n\f\x00]*endstream")
_TOKEN = re.compile(
    rb"[ \t\r\n\f\x00]+|%[^\r\n]*"  # whitespace, comment
    rb"|(<<|>>|\[|\])"  # 1: delimiters
    rb"|/([^ \t\r\n\f\x00/<>\[\]()%{}]*)"  # 2: name
    rb"|(\()"  # 3: literal string
    rb"|<([0-9A-Fa-f \t\r\n\f]*)>"  # 4: hex string
    # 5: a run of regular characters, as a PDF reader splits them: a number, or a keyword (R, true, null,
    # endobj, stream, ...), or, when a byte was damaged, neither ("0\xf0R" is not "0 R")
    rb"|([^ \t\r\n\f\x00()<>\[\]{}/%]+)"
    rb"|(.)",  # 6: anything else
    re.S,
)
_NAME_ESCAPE = re.compile(rb"#([0-9A-Fa-f]{2})")
_NUMBER = re.compile(rb"[+-]?(?:\d+\.?\d*|\.\d+)")
_MAX_FORM_DEPTH = 4


class _Ref(int):
    """An indirect reference `N 0 R` (the object number)."""


def _skip_string(buf: bytes, i: int, end: int) -> int:
    """Index after the literal string whose '(' is at i (balanced parentheses, backslash escapes)."""
    depth, i = 0, i
    while i < end:
        c = buf[i]
        if c == 0x5C:  # backslash
            i += 2
            continue
        if c == 0x28:
            depth += 1
        elif c == 0x29:
            depth -= 1
            if depth == 0:
                return i + 1
        i += 1
    return end


_PLAIN_KEY = re.compile(r"/[\x20-\x7e]*")  # a key name as writers write it: printable ASCII


def _as_dict(items: list) -> tuple[dict, int]:
    """A dictionary from its alternating keys and values, and its syntax errors: a key that is not a name, or
    whose bytes are not printable ASCII (no writer names a key so: a flipped byte does), a key without a
    value."""
    keys, values = items[::2], items[1::2]
    bad = len(items) % 2 + sum(not isinstance(k, str) or not _PLAIN_KEY.fullmatch(k) for k in keys)
    return {k: v for k, v in zip(keys, values, strict=False) if isinstance(k, str)}, bad


_VALUE_KEYWORDS = (b"R", b"true", b"false", b"null")


def _parse_value(buf: bytes, pos: int, end: int | None = None) -> tuple[object, int, int]:  # noqa: C901 (one branch per PDF object syntax)
    """(the first PDF object at buf[pos:end], the index after it, its syntax errors) as Python values: dict
    (name -> value), list, _Ref, '/Name', numbers, bytes; None where there is none.

    Tolerant: damage gives odd values and a count of syntax errors (a stray keyword or byte inside a dictionary
    or array, a key that is not a name, an unclosed dictionary), never an exception.
    """
    end = len(buf) if end is None else end
    stack: list[list] = [[]]
    kinds: list[str] = [""]
    errors = 0
    i = pos
    while i < end:
        m = _TOKEN.match(buf, i, end)
        if m is None:
            break
        delim, name, lit, hexs, kw, other = m.group(1, 2, 3, 4, 5, 6)
        number = None
        if kw is not None and _NUMBER.fullmatch(kw):
            number, kw = kw, None
        if (kw is not None and kw not in _VALUE_KEYWORDS or other is not None) and len(stack) == 1:
            break  # endobj, stream, obj ...: the object has ended (i stays before the keyword)
        i = m.end()
        top = stack[-1]
        if delim in (b"<<", b"["):
            stack.append([])
            kinds.append(delim.decode())
            continue
        if delim in (b">>", b"]"):
            if len(stack) == 1:
                break
            items, kind = stack.pop(), kinds.pop()
            errors += (kind == "<<") != (delim == b">>")
            value: dict | list
            if kind == "<<":
                value, bad = _as_dict(items)
                errors += bad
            else:
                value = items
            stack[-1].append(value)
        elif name is not None:
            if b"#" in name:  # #xx escapes, as PDFium writes a damaged key back ("/Conte#F6ts")
                name = _NAME_ESCAPE.sub(lambda e: bytes([int(e.group(1), 16)]), name)
            top.append("/" + name.decode("latin-1"))
        elif number is not None:
            top.append(float(number) if b"." in number else int(number))
        elif lit is not None:
            j = _skip_string(buf, m.start(), end)
            top.append(buf[m.start() + 1 : j - 1])
            i = j
        elif hexs is not None:
            top.append(hexs)
        elif kw is not None:
            if kw == b"R":
                if len(top) >= 2 and all(type(x) is int for x in top[-2:]):
                    top[-2:] = [_Ref(top[-2])]
                else:
                    errors += 1
            elif kw in (b"true", b"false"):
                top.append(kw == b"true")
            elif kw == b"null":
                top.append(None)
            else:
                errors += 1  # a keyword (or damaged number) inside a dictionary or array
        elif other is not None:
            errors += 1
        if len(stack) == 1 and top and not isinstance(top[-1], int):
            break  # one whole value read (an int might still become a reference)
    top = stack[0]
    while len(stack) > 1:  # unterminated (damaged): close what is open
        items, kind = stack.pop(), kinds.pop()
        errors += 1
        stack[-1].append(_as_dict(items)[0] if kind == "<<" else items)
    return (top[0] if top else None), i, errors


class _Obj:
    """One object of the file: its value, its stream data (None if it is not a stream), its syntax errors."""

    __slots__ = ("value", "stream", "errors")

    def __init__(self, value=None, stream: bytes | None = None, errors: int = 0) -> None:
        self.value, self.stream, self.errors = value, stream, errors


class _RawPdf:
    """The objects of a PDF file read straight from its bytes, so that damage does not hide them: `N G obj`
    headers found by scanning; where a number is defined more than once, the definition the cross-reference
    table points at, else the latest; object streams expanded on demand.

    With `trust_xref` (PDFium used the file's cross-reference table as it is, rather than rebuilding it), a table
    entry that does not point at its object (a damaged offset, a damaged entry) is recorded in `xref_broken`:
    PDFium cannot find that object, even though the scan does."""

    def __init__(self, buf: bytes, trust_xref: bool = False) -> None:
        self.buf = buf
        found: dict[int, list[tuple[int, int]]] = {}  # number -> [(header start, end of `obj`)]
        for m in _OBJ_KW.finditer(buf):
            k = m.start()
            head = _OBJ_NUMBERS.search(buf, max(0, k - 40), k)
            if head is not None:
                found.setdefault(int(head.group(1)), []).append((head.start(), m.end()))
        xref = self._xref_table()
        self.heads: dict[int, int] = {}
        self.xref_broken: set[int] = set()
        for num, defs in found.items():
            self.heads[num] = defs[-1][1]
            if num not in xref:
                continue
            off = xref[num]
            at = [e for s, e in defs if off is not None and off <= s <= off + 4 and not buf[off:s].strip(_WS)]
            if at:
                self.heads[num] = at[-1]
            elif trust_xref:
                self.xref_broken.add(num)
        if trust_xref:  # entries whose object is nowhere (the scan found no header for it either)
            self.xref_broken.update(n for n, off in xref.items() if off is None and n not in found)
        self._cache: dict[int, _Obj] = {}
        self._packed: dict[int, tuple[bytes, int]] | None = None

    def _xref_table(self) -> dict[int, int | None]:
        """In-use entries of the classic cross-reference tables (later sections override earlier ones): number ->
        byte offset, None for an entry that is not 20 well-formed bytes. Empty for cross-reference streams."""
        buf = self.buf
        out: dict[int, int | None] = {}
        for m in _XREF.finditer(buf):
            if m.start() and buf[m.start() - 1 : m.start()].isalpha():
                continue  # startxref
            pos = m.end()
            while (sec := _XREF_SECTION.match(buf, pos)) is not None:
                first, count = int(sec.group(1)), int(sec.group(2))
                pos = sec.end()
                if count > len(buf) // 20:
                    break
                for k in range(count):
                    # only the offset matters to a reader: a damaged generation or type byte does not lose it
                    offset, kind = buf[pos : pos + 10], buf[pos + 17 : pos + 18]
                    if kind == b"f":
                        out.pop(first + k, None)
                    else:
                        out[first + k] = int(offset) if offset.isdigit() and len(offset) == 10 else None
                    pos += 20
        return out

    def _top(self, num: int) -> _Obj:
        buf = self.buf
        value, end, errors = _parse_value(buf, self.heads[num])
        m = _STREAM_KW.match(buf, end) if isinstance(value, dict) else None
        if m is None:
            return _Obj(value, None, errors)
        start = m.end()
        length = cast(dict, value).get("/Length")
        if type(length) is int and 0 <= length <= len(buf) - start and _ENDSTREAM.match(buf, start + length):
            return _Obj(value, buf[start : start + length], errors)
        e = buf.find(b"endstream", start)  # no usable /Length (indirect, or damaged): up to the keyword
        return _Obj(value, buf[start : e if e >= 0 else len(buf)], errors)

    def _unpack(self) -> dict[int, tuple[bytes, int]]:
        """Objects held in object streams: number -> (decoded object stream, offset)."""
        if self._packed is None:
            self._packed = {}
            for num, pos in self.heads.items():
                if b"/ObjStm" not in self.buf[pos : pos + 400]:
                    continue
                obj = self.get(num)
                value = obj.value
                if not isinstance(value, dict) or value.get("/Type") != "/ObjStm" or obj.stream is None:
                    continue
                data = _inflate(obj.stream) if _filters(value) == ["/FlateDecode"] else None
                first = value.get("/First")
                if data is None or type(first) is not int:
                    continue
                nums = re.findall(rb"\d+", data[:first])
                for k in range(0, len(nums) - 1, 2):
                    self._packed.setdefault(int(nums[k]), (data, first + int(nums[k + 1])))
        return self._packed

    def get(self, num: int) -> _Obj:
        """Object `num` (value None when the file holds no such object)."""
        if num not in self._cache:
            if num in self.heads:
                got = self._top(num)
            elif num in self._unpack():
                data, off = self._unpack()[num]
                value, _, errors = _parse_value(data, off)
                got = _Obj(value, None, errors)
            else:
                got = _Obj()
            self._cache[num] = got
        return self._cache[num]

    def resolve(self, value):
        return self.get(value).value if isinstance(value, _Ref) else value

    def root(self) -> dict | None:
        """The document catalog: /Root of the last trailer or cross-reference stream, else any /Catalog."""
        best = None
        for m in re.finditer(rb"trailer", self.buf):
            t = _parse_value(self.buf, m.end())[0]
            if isinstance(t, dict) and isinstance(t.get("/Root"), _Ref):
                best = (m.start(), t["/Root"])
        for num, pos in self.heads.items():
            if b"/XRef" in self.buf[pos : pos + 400]:
                value = self.get(num).value
                root = value.get("/Root") if isinstance(value, dict) else None
                if isinstance(root, _Ref) and (best is None or pos > best[0]):
                    best = (pos, root)
        cat = self.resolve(best[1]) if best else None
        if isinstance(cat, dict) and "/Pages" in cat:
            return cat
        for num, pos in self.heads.items():
            if b"/Catalog" in self.buf[pos : pos + 400]:
                value = self.get(num).value
                if isinstance(value, dict) and value.get("/Type") == "/Catalog":
                    return value
        return None

    def pages(self) -> list[tuple[object, dict, dict]]:
        """(reference, page dictionary, its resources with inherited ones) of every page, in page order."""
        out: list[tuple[object, dict, dict]] = []
        seen: set[int] = set()

        def walk(ref, resources, depth: int) -> None:
            if depth > 64 or (isinstance(ref, _Ref) and ref in seen):
                return
            if isinstance(ref, _Ref):
                seen.add(ref)
            node = self.resolve(ref)
            if not isinstance(node, dict):  # a damaged /Kids entry: a page PDFium counts but cannot load
                out.append((ref, {}, {}))
                return
            res = self.resolve(node.get("/Resources", resources))
            kids = self.resolve(node.get("/Kids"))
            if node.get("/Type") == "/Pages" or (isinstance(kids, list) and node.get("/Type") != "/Page"):
                for kid in kids if isinstance(kids, list) else []:
                    walk(kid, res, depth + 1)
            else:
                out.append((ref, node, res if isinstance(res, dict) else {}))

        cat = self.root()
        if cat is not None:
            walk(cat.get("/Pages"), {}, 0)
        return out


def _filters(value: dict) -> list:
    f = value.get("/Filter")
    return [f] if isinstance(f, str) else (f if isinstance(f, list) else [])


def _inflate(data: bytes) -> bytes | None:
    """Flate data decoded, as far as it goes when damaged (as PDFium reads it); None when nothing decodes."""
    d = zlib.decompressobj()
    out: list[bytes] = []
    try:
        for k in range(0, len(data), 4096):
            out.append(d.decompress(data[k : k + 4096]))
    except zlib.error:
        pass
    return b"".join(out) or None


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


def _stream_problem(obj: _Obj, must_be_stream: bool = True) -> str | None:
    """Why a stream the page needs cannot be read as it is meant to be; None when it can (or is not checked)."""
    value = obj.value
    if value is None:
        return "missing"
    if not isinstance(value, dict) or obj.stream is None:
        return "not a stream (its `stream` keyword is damaged)" if must_be_stream else None
    if value.get("/Type") in _NOT_CONTENT or value.get("/Subtype") in ("/Image", "/XML"):
        return f"points at a {value.get('/Type') or value.get('/Subtype')} stream, not page content"
    filters = _filters(value)
    unknown = [f for f in filters if f not in _FILTERS]
    if unknown:
        return f"unknown filter {str(unknown[0])[:40]!r} (a damaged name)"
    if not filters:
        # unfiltered data that is in fact a zlib stream: the /Filter entry itself was damaged
        # a content stream or CMap starts with an operator, a name or a comment, never with a zlib header
        head = obj.stream[:2]
        if len(head) == 2 and head[0] == 0x78 and (head[0] * 256 + head[1]) % 31 == 0:
            return "Flate data without a /Filter entry (the entry is damaged)"
        return None
    return flate_problem(obj.stream) if filters[0] in ("/FlateDecode", "/Fl") else None


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


def stream_damage(raw: _RawPdf, n_pages: int) -> dict[int, list[tuple[str, str]]] | None:  # noqa: C901 (one check per kind of stream damage)
    """Page -> (reason, detail) for each damaged object the page's text comes from: its dictionary, its content
    streams, form XObjects and fonts' ToUnicode maps (missing, malformed, or Flate data that does not decode to
    its end). None when the page tree read from the bytes does not match PDFium's page count: then nothing is
    said rather than something wrong."""
    pages = raw.pages()
    if len(pages) != n_pages:
        return None
    checked: dict[tuple[int, bool], str | None] = {}

    def problem(ref, must_be_stream: bool = True) -> str | None:
        if not isinstance(ref, _Ref):
            return None
        key = (int(ref), must_be_stream)
        if key not in checked:
            if ref in raw.xref_broken:
                checked[key] = "its cross-reference entry is damaged (PDFium cannot find it)"
            else:
                checked[key] = _stream_problem(raw.get(ref), must_be_stream)
        return checked[key]

    def resources(res, found: list, depth: int, seen: set) -> None:
        res = raw.resolve(res)
        if not isinstance(res, dict):
            return
        fonts = raw.resolve(res.get("/Font"))
        for font in fonts.values() if isinstance(fonts, dict) else []:
            if isinstance(font, _Ref) and font in raw.xref_broken:
                found.append(("missing font", f"object {font}: its cross-reference entry is damaged"))
                continue
            fd = raw.resolve(font)
            if not isinstance(fd, dict):
                continue
            if why := problem(fd.get("/ToUnicode"), must_be_stream=False):
                found.append(("corrupt ToUnicode map", f"object {fd['/ToUnicode']}: {why}"))
            # the embedded font program: without a ToUnicode map, PDFium reads the characters from it
            descendants = raw.resolve(fd.get("/DescendantFonts"))
            for f in [fd, *(descendants if isinstance(descendants, list) else [])]:
                desc = (
                    raw.resolve(raw.resolve(f).get("/FontDescriptor"))
                    if isinstance(raw.resolve(f), dict)
                    else None
                )
                for key in ("/FontFile", "/FontFile2", "/FontFile3"):
                    if isinstance(desc, dict) and (why := problem(desc.get(key))):
                        found.append(("corrupt embedded font", f"object {desc[key]}: {why}"))
        xobjects = raw.resolve(res.get("/XObject"))
        for ref in xobjects.values() if isinstance(xobjects, dict) else []:
            if not isinstance(ref, _Ref) or ref in seen or depth >= _MAX_FORM_DEPTH:
                continue
            seen.add(ref)
            value = raw.get(ref).value
            if isinstance(value, dict) and value.get("/Subtype") == "/Form":
                if why := problem(ref):
                    found.append(("corrupt form XObject", f"object {ref}: {why}"))
                resources(value.get("/Resources"), found, depth + 1, seen)

    out: dict[int, list[tuple[str, str]]] = {}
    for i, (ref, page, res) in enumerate(pages):
        found: list[tuple[str, str]] = []
        if not page:
            found.append(("missing page object", f"page tree entry {ref!r} is not a page"))
        # a damaged page dictionary matters when it lost the page's content: syntax errors and no /Contents left,
        # or a key one byte away from /Contents or /Resources
        if (
            isinstance(ref, _Ref)
            and raw.get(ref).errors
            and not isinstance(page.get("/Contents"), _Ref | list)
        ):
            found.append(("damaged page dictionary", f"object {ref}: {raw.get(ref).errors} syntax error(s)"))
        if typo := _damaged_key(page, ("/Contents", "/Resources")):
            found.append(
                ("damaged page dictionary", f"object {ref}: key {typo[0]!r} where {typo[1]} belongs")
            )
        contents = raw.resolve(page.get("/Contents"))
        refs = contents if isinstance(contents, list) else [page.get("/Contents")]
        for c in refs:
            if why := problem(c):
                kind = "missing content stream" if why == "missing" else "corrupt content stream"
                found.append((kind, f"object {c}: {why}"))
        resources(res, found, 0, set())
        if found:
            out[i] = found
    return out


def _corrupt_streams(raw: _RawPdf) -> list[int]:
    """Objects whose Flate data does not decode, anywhere in the file (cross-reference streams aside)."""
    bad = []
    for num in raw.heads:
        obj = raw.get(num)
        if obj.stream is None or not isinstance(obj.value, dict) or obj.value.get("/Type") == "/XRef":
            continue
        if _filters(obj.value)[:1] in (["/FlateDecode"], ["/Fl"]) and flate_problem(obj.stream):
            bad.append(num)
    return sorted(bad)


def _raw_pdf(pdf: pdfium.PdfDocument, path: Path) -> _RawPdf:
    """The file's bytes; for an encrypted file PDFium's decrypted copy (its streams are unreadable otherwise)."""
    if pdfium_c.FPDF_GetSecurityHandlerRevision(pdf) == -1:
        return _RawPdf(
            path.read_bytes(), trust_xref=bool(pdfium_c.FPDF_DocumentHasValidCrossReferenceTable(pdf))
        )
    buf = io.BytesIO()
    pdf.save(buf, flags=pdfium_c.FPDF_REMOVE_SECURITY)
    return _RawPdf(buf.getvalue())


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
        try:
            raw = _raw_pdf(pdf, p)
            by_page = stream_damage(raw, n)
            if by_page is None and (bad := _corrupt_streams(raw)):
                # the page tree could not be read from the bytes: say that the file has corrupt streams
                damage.append(
                    {
                        "page": None,
                        "reason": "corrupt streams, pages unknown",
                        "detail": f"{len(bad)} Flate streams do not decode (objects {', '.join(map(str, bad[:5]))})",
                    }
                )
        except Exception as e:  # noqa: BLE001 - the check must never cost a file its text; it says so instead
            log.warning("%s: stream check could not run (%s: %s)", p, type(e).__name__, e)
            by_page = None
        for i, found in sorted((by_page or {}).items()):
            damage.extend({"page": i, "reason": r, "detail": d} for r, d in found)
        if by_page is None and damage:
            # a damaged file whose page tree could not be read from its bytes: its streams went unchecked, so an
            # empty page there is not taken for a blank one
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
