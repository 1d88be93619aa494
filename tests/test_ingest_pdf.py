"""PDF parsing: synthetic PDFs (built with PDFium here) for the rules, the real FinanceBench PDFs for page numbers."""

from __future__ import annotations

import ctypes
import json
from pathlib import Path

import pypdfium2 as pdfium
import pypdfium2.raw as pdfium_c
import pytest

from finrag.ingest.parse import parse_filing
from finrag.ingest.parsed import IngestError
from finrag.ingest.pdf import parse_pdf
from finrag.ingest.sections import assign_sections, find_headings


def make_pdf(path: Path, pages: list[list[tuple[str, float, float, float]]]) -> Path:
    """Write a PDF whose pages hold the given (text, x, y, font size) runs, in Helvetica."""
    pdf = pdfium.PdfDocument.new()
    for runs in pages:
        page = pdf.new_page(612, 792)
        for text, x, y, size in runs:
            obj = pdfium_c.FPDFPageObj_NewTextObj(pdf, b"Helvetica", size)
            buf = ctypes.create_string_buffer((text + "\x00").encode("utf-16-le"))
            pdfium_c.FPDFText_SetText(obj, ctypes.cast(buf, ctypes.POINTER(pdfium_c.FPDF_WCHAR)))
            pdfium_c.FPDFPageObj_Transform(obj, 1, 0, 0, 1, x, y)
            pdfium_c.FPDFPage_InsertObject(page, obj)
        pdfium_c.FPDFPage_GenerateContent(page)
    pdf.save(str(path))
    pdf.close()
    return path


@pytest.fixture
def synthetic(tmp_path) -> Path:
    return make_pdf(
        tmp_path / "TINY_2023_10K.pdf",
        [
            [("FORM 10-K", 250, 740, 14), ("Tiny Widgets Inc.", 72, 700, 10)],
            [
                ("Item 7. Management's Discussion and Analysis", 72, 740, 12),
                ("First paragraph, line one.", 72, 710, 10),
                ("First paragraph, line two.", 72, 698, 10),
                ("Second paragraph after a gap.", 72, 670, 10),
                ("Revenue", 72, 640, 10),
                ("$ 4,567", 300, 640, 10),
                ("(1,234)", 400, 640, 10),
                ("12.5%", 480, 640, 10),
            ],
            [("More discussion on the next page.", 72, 740, 10)],
            [
                ("Item 8. Financial Statements and Supplementary Data", 72, 740, 12),
                ("Statements.", 72, 710, 10),
            ],
        ],
    )


def test_pages_numbered_from_zero_with_doc_id_from_stem(synthetic):
    pages = parse_filing(synthetic)
    assert [p.page for p in pages] == [0, 1, 2, 3]
    assert {p.doc_id for p in pages} == {"TINY_2023_10K"}
    assert parse_filing(synthetic, doc_id="other")[0].doc_id == "other"


def test_blocks_split_at_vertical_gaps_and_rows_stay_whole(synthetic):
    text = parse_pdf(synthetic, "d")[1].text
    blocks = text.split("\n\n")
    assert "First paragraph, line one.\nFirst paragraph, line two." in blocks
    assert "Second paragraph after a gap." in blocks
    assert "Revenue $ 4,567 (1,234) 12.5%" in text.split("\n")


def test_sections_carry_over_pages(synthetic):
    sections = [p.section for p in parse_pdf(synthetic, "d")]
    assert sections == [
        "",
        "Item 7. Management's Discussion and Analysis",
        "Item 7. Management's Discussion and Analysis",
        "Item 8. Financial Statements and Supplementary Data",
    ]


def test_heading_rules():
    assert find_headings("Item 7. Management's Discussion\nbody text") == [
        (0, "item", "Item 7. Management's Discussion")
    ]
    assert find_headings("x\nITEM 1A.\nRISK FACTORS\n")[0][2] == "Item 1A. RISK FACTORS"  # title on next line
    assert find_headings("PART II — OTHER INFORMATION")[0][2] == "PART II — OTHER INFORMATION"
    assert find_headings("as discussed in Item 7. Management's Discussion") == []  # not at line start
    assert find_headings("Part I of this report covers the business") == []  # running text
    assert find_headings("Item 7. Management's Discussion and Analysis 23") == []  # TOC entry (page number)
    assert find_headings("item 2 of this report describes the leases") == []  # lower-case running text
    assert find_headings("| Item 1. | Business | 3 |") == []  # pipe row (HTML table of contents)
    toc = "\n".join(f"Item {n}. Some Title" for n in ["1", "1A", "2", "3", "4", "5", "6", "7"])
    assert find_headings(toc) == []  # eight items on one page: a table of contents
    assert len(find_headings(toc.rsplit("\n", 1)[0])) == 7  # seven may be a short Part II
    index = (
        "PART I\nItem 1. Business 3\nItem 1A. Risk Factors 11\nPART II\nItem 7. Management's Discussion 29"
    )
    assert find_headings(index) == []  # item lines with page numbers: an index, its PART lines too
    assert (
        find_headings("Item 1. Financial Statements\nItem 2. MD&A\nItem 1. Legal Proceedings") == []
    )  # restart
    assert len(find_headings("Item 4. Controls\nPART II — OTHER INFORMATION\nItem 1. Legal Proceedings")) == 3
    pages = [
        "cover",
        "Item 1. Business\n" + "x" * 50,
        "more",
        "x" * 80 + "\nItem 2. Properties",
        "y\nItem 3. Legal",
    ]
    assert assign_sections(pages) == [
        "",
        "Item 1. Business",
        "Item 1. Business",  # carried over
        "Item 1. Business",  # mostly Item 1 text; Item 2 starts at the bottom
        "Item 3. Legal",  # mostly Item 3 text
    ]


# ------------------------------------------------------------------------------------------------ bad input


def test_truncated_pdf_rejected(synthetic, tmp_path):
    data = synthetic.read_bytes()
    cut = tmp_path / "cut.pdf"
    cut.write_bytes(data[: len(data) // 2])
    with pytest.raises(IngestError, match=r"cut\.pdf: truncated or corrupt PDF"):
        parse_filing(cut)


def test_corrupt_pdf_rejected(tmp_path):
    bad = tmp_path / "garbage.pdf"
    bad.write_bytes(b"%PDF-1.7\n" + b"\x00\x01 not a pdf body " * 200 + b"\n%%EOF\n")
    with pytest.raises(IngestError, match=r"garbage\.pdf: unreadable PDF"):
        parse_filing(bad)


def test_pdf_without_text_rejected(tmp_path):
    blank = make_pdf(tmp_path / "scanned.pdf", [[], []])
    with pytest.raises(IngestError, match=r"scanned\.pdf: no extractable text"):
        parse_filing(blank)


def test_missing_and_empty_pdf(tmp_path):
    with pytest.raises(IngestError, match=r"absent\.pdf: no such file"):
        parse_filing(tmp_path / "absent.pdf")
    empty = tmp_path / "empty.pdf"
    empty.touch()
    with pytest.raises(IngestError, match=r"empty\.pdf: empty file"):
        parse_filing(empty)


# ------------------------------------------------------------------------------------------------ real PDFs


@pytest.mark.realdata
def test_every_pdf_page_count_matches_pymupdf(mirror):
    import pymupdf  # dev-only (AGPL): an independent page count, never used by the product

    pdfs = sorted((mirror / "financebench" / "pdfs").glob("*.pdf"))
    assert len(pdfs) >= 70
    for f in pdfs:
        doc = pdfium.PdfDocument(str(f))
        n = len(doc)
        doc.close()
        with pymupdf.open(str(f)) as ref:
            assert n == ref.page_count, f"{f.name}: pypdfium2 {n} pages, PyMuPDF {ref.page_count}"


@pytest.mark.realdata
def test_real_pdf_pages_and_evidence_pages(mirror):
    """BESTBUY_2024Q2_10Q: every page parsed, numbered like FinanceBench, each gold number on its stated page."""
    import pymupdf

    f = mirror / "financebench" / "pdfs" / "BESTBUY_2024Q2_10Q.pdf"
    pages = parse_filing(f)
    with pymupdf.open(str(f)) as ref:
        assert len(pages) == ref.page_count
    assert [p.page for p in pages] == list(range(len(pages)))
    lines = pages[16].text.split("\n")
    assert "Revenue $ 8,890 $ 9,569 $ 17,691 $ 19,463" in lines
    assert "Revenue % change (7.1)% (13.1)% (9.1)% (10.9)%" in lines
    assert pages[16].section.startswith("Item 2. Management")
    assert pages[5].section == "Item 1. Financial Statements"
    with open(mirror / "financebench" / "financebench_open_source.jsonl", encoding="utf-8") as fh:
        evidence = [e for line in fh for e in json.loads(line)["evidence"] if e["doc_name"] == f.stem]
    assert len(evidence) == 3
    for ev in evidence:
        text = pages[ev["evidence_page_num"]].text
        nums = [t.strip("$(),%") for t in ev["evidence_text"].split()]
        nums = [t for t in nums if t[:1].isdigit() and t[-1:].isdigit()]
        assert nums
        missing = [t for t in nums if t not in text]
        assert not missing, f"page {ev['evidence_page_num']} lacks {missing}"


@pytest.mark.realdata
def test_real_truncated_pdf_rejected(mirror, tmp_path):
    data = (mirror / "financebench" / "pdfs" / "BESTBUY_2024Q2_10Q.pdf").read_bytes()
    cut = tmp_path / "BESTBUY_2024Q2_10Q.pdf"
    cut.write_bytes(data[: int(len(data) * 0.9)])
    with pytest.raises(IngestError, match=r"BESTBUY_2024Q2_10Q\.pdf: truncated or corrupt PDF"):
        parse_filing(cut)
