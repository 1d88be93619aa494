"""Chunkers: offsets point back at the page text, tables stay whole with their footnotes, headers, ids."""

from __future__ import annotations

import json

import pytest

from finrag.core.contracts import Chunk, Document, Page
from finrag.retrieve.chunking import CHUNKERS, context_header, make_chunker, segment_blocks

DOC = Document(doc_id="ACME_2022_10K", company="Acme", form="10-K", period="2022")

TABLE = "\n".join(
    [
        "| (Millions) | 2022 | 2021 |",
        "| Net sales | 1,577.00 | 1,373.5 |",
        "| Operating income (1) | 420 | 380 |",
    ]
)
PAGE0 = (
    "Item 7. Management's Discussion and Analysis\n\n"
    "Net sales grew in 2022 on higher volumes and pricing.\nThe growth was broad based.\n\n"
    f"{TABLE}\n\n"
    "(1) Operating income excludes special items.\n"
    "* Unaudited.\n\n"
    "Liquidity remained strong throughout the year.\n"
)
PAGE1 = "  \n" + " ".join(f"word{i}" for i in range(450)) + "\n"
PAGE2 = "## Risk Factors\n\nCompetition is intense in every market we serve.\n"


def pages() -> list[Page]:
    return [
        Page(doc_id=DOC.doc_id, page=0, text=PAGE0, section=""),
        Page(doc_id=DOC.doc_id, page=1, text=PAGE1, section="Item 7. MD&A"),
        Page(doc_id=DOC.doc_id, page=2, text=PAGE2),
        Page(doc_id=DOC.doc_id, page=3, text="   \n\n  "),  # blank page: no chunk
    ]


def assert_offsets(chunks: list[Chunk], pgs: list[Page]) -> None:
    by_page = {p.page: p for p in pgs}
    for c in chunks:
        assert c.doc_id == pgs[0].doc_id
        assert c.pages == sorted({s.page for s in c.spans})
        assert "\n".join(by_page[s.page].text[s.start : s.end] for s in c.spans) == c.body
        assert c.body.strip() == c.body and c.body


@pytest.mark.parametrize("name", ["fixed", "page", "structure"])
def test_offsets_ids_and_determinism(name):
    pgs = pages()
    chunks = make_chunker(name).chunk(DOC, pgs)
    assert chunks
    assert_offsets(chunks, pgs)
    ids = [c.chunk_id for c in chunks]
    assert ids == [f"{DOC.doc_id}:{name}:{n}" for n in range(len(chunks))]
    assert [c.model_dump() for c in make_chunker(name).chunk(DOC, list(reversed(pgs)))] == [
        c.model_dump() for c in chunks
    ]
    assert all(3 not in c.pages for c in chunks)  # the blank page yields nothing


def test_registry_names():
    assert set(CHUNKERS.names()) >= {"fixed", "page", "structure"}
    with pytest.raises(KeyError, match="unknown chunker 'nope'"):
        make_chunker("nope")


def test_fixed_windows_size_overlap_and_page_tail():
    chunks = [c for c in make_chunker("fixed", size=200, overlap=50).chunk(DOC, pages()) if c.pages == [1]]
    words = [c.body.split() for c in chunks]
    # 450 words: windows start at 0, 150 and (tail anchored to the page end) 250
    assert [w[0] for w in words] == ["word0", "word150", "word250"]
    assert all(len(w) == 200 for w in words)
    assert words[0][-50:] == words[1][:50]
    assert words[-1][-1] == "word449"
    assert all(c.text == c.body for c in chunks)  # no header for fixed
    with pytest.raises(ValueError, match="overlap"):
        make_chunker("fixed", size=10, overlap=10)


def test_page_chunker_one_per_page():
    chunks = make_chunker("page").chunk(DOC, pages())
    assert [c.pages for c in chunks] == [[0], [1], [2]]
    assert chunks[1].body.startswith("word0") and chunks[1].body.endswith("word449")
    assert chunks[1].section == "Item 7. MD&A"


def test_structure_table_whole_with_footnotes_and_header():
    chunks = make_chunker("structure", max_words=20).chunk(DOC, pages())
    tab = [c for c in chunks if "| Net sales" in c.body]
    assert len(tab) == 1
    body = tab[0].body
    assert TABLE in body and body.endswith("* Unaudited.")
    assert "(1) Operating income excludes special items." in body
    assert tab[0].text == "Acme 10-K 2022 > Item 7. Management's Discussion and Analysis\n\n" + body
    # the paragraph after the table is not swallowed by it
    assert any(c.body == "Liquidity remained strong throughout the year." for c in chunks)


def test_structure_oversized_table_stays_whole():
    big = "\n".join(f"| row {i} | {i} | {i + 1} |" for i in range(100))
    pg = Page(doc_id=DOC.doc_id, page=0, text=f"Intro line.\n\n{big}\n(1) Restated.\n\nAfter.")
    chunks = make_chunker("structure", max_words=30).chunk(DOC, [pg])
    assert_offsets(chunks, [pg])
    tab = [c for c in chunks if "| row 0 |" in c.body]
    assert len(tab) == 1 and "| row 99 |" in tab[0].body and tab[0].body.endswith("(1) Restated.")
    assert len(tab[0].body.split()) > 30


def test_structure_merges_paragraphs_and_splits_long_ones():
    paras = "\n\n".join(f"Paragraph {i} has five words." for i in range(6))
    pg = Page(doc_id=DOC.doc_id, page=0, text=paras, section="Item 1. Business")
    chunks = make_chunker("structure", max_words=10).chunk(DOC, [pg])
    assert [len(c.body.split()) for c in chunks] == [10, 10, 10]
    assert all(c.section == "Item 1. Business" for c in chunks)
    assert chunks[0].text.startswith("Acme 10-K 2022 > Item 1. Business\n\n")
    # a page without blank lines (typical PDF text) is cut at line boundaries under the limit
    long = "\n".join(f"line {i} of a pdf page" for i in range(40))
    pg2 = Page(doc_id=DOC.doc_id, page=1, text=long)
    c2 = make_chunker("structure", max_words=50).chunk(DOC, [pg2])
    assert_offsets(c2, [pg2])
    assert all(len(c.body.split()) <= 50 for c in c2) and len(c2) == 5


def test_structure_sections_from_headings_carry_over_pages():
    chunks = make_chunker("structure").chunk(DOC, pages())
    sec = {c.pages[0]: c.section for c in chunks}
    assert sec[0] == "Item 7. Management's Discussion and Analysis"
    assert sec[1] == "Item 7. Management's Discussion and Analysis"  # latest heading beats Page.section
    assert sec[2] == "Risk Factors"


def test_header_format_and_blocks():
    assert context_header(DOC, "Item 8") == "Acme 10-K 2022 > Item 8\n\n"
    assert context_header(DOC, "") == "Acme 10-K 2022\n\n"
    kinds = [b.kind for b in segment_blocks(PAGE0)]
    assert kinds == ["heading", "para", "table", "para"]
    text = "PART II \u2014 OTHER INFORMATION\nPart I of this report covers x.\nITEM 7A Market Risk\nNote 5. Leases\nItems sold"
    assert [b.kind for b in segment_blocks(text)] == ["heading", "para", "heading", "heading", "para"]


def test_real_financebench_pages(mirror):
    """Real page texts (FinanceBench's full-page evidence text): offsets hold for every chunker."""
    path = mirror / "financebench" / "financebench_open_source.jsonl"
    recs = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()[:10]]
    pgs_by_doc: dict[str, dict[int, Page]] = {}
    for r in recs:
        for e in r["evidence"]:
            pgs_by_doc.setdefault(e["doc_name"], {})[e["evidence_page_num"]] = Page(
                doc_id=e["doc_name"], page=e["evidence_page_num"], text=e["evidence_text_full_page"]
            )
    assert pgs_by_doc
    for doc_id, pg in pgs_by_doc.items():
        doc = Document(doc_id=doc_id, company=doc_id.split("_")[0], form="10-K", period="")
        for name in ("fixed", "page", "structure"):
            chunks = make_chunker(name).chunk(doc, list(pg.values()))
            assert chunks, (doc_id, name)
            assert_offsets(chunks, list(pg.values()))


def test_real_parsed_filing(mirror):
    """A real EDGAR filing through the project parser: offsets hold and its tables reach the structure chunker."""
    from finrag.ingest import parse  # first-party: a rename fails this test, it never skips it

    path = mirror / "edgar" / "MMM" / "10-Q_2023-06-30.htm"
    pgs = parse.parse_filing(path, doc_id="3M_2023Q2_10Q")
    doc = Document(doc_id="3M_2023Q2_10Q", company="3M", form="10-Q", period="2023Q2")
    counts = {}
    for name in ("fixed", "page", "structure"):
        chunks = make_chunker(name).chunk(doc, pgs)
        assert_offsets(chunks, pgs)
        counts[name] = len(chunks)
    assert counts["page"] <= len(pgs) < counts["fixed"]
    struct = make_chunker("structure").chunk(doc, pgs)
    n_tables = 0
    for pg in pgs:  # every table block lies inside exactly one chunk of its page
        spans = [c.spans[0] for c in struct if c.pages == [pg.page]]
        for b in segment_blocks(pg.text):
            if b.kind == "table":
                n_tables += 1
                assert sum(s.start <= b.start and b.end <= s.end for s in spans) == 1, (pg.page, b)
    assert n_tables >= 10  # the 10-Q's statements are tables
