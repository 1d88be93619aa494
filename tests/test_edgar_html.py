"""EDGAR HTML parsing: hand-written fixtures for each rule, real filings for the numbers as displayed."""

from __future__ import annotations

import csv
import re
from collections import Counter
from functools import cache
from pathlib import Path

import lxml.etree
import pytest

from finrag.core.config import mirror_dir
from finrag.core.contracts import Page
from finrag.ingest.edgar_html import is_layout_table, parse_edgar_html, render_table
from finrag.ingest.parse import parse_filing
from finrag.ingest.parsed import IngestError

FIXTURES = Path(__file__).parent / "fixtures" / "html"
NUM = re.compile(r"\d[\d,]*(?:\.\d+)?")


def numbers(text: str) -> list[str]:
    return [n.rstrip(",.") for n in NUM.findall(text)]


@pytest.fixture(scope="module")
def small() -> list[Page]:
    return parse_filing(FIXTURES / "filing_small.htm")


# ------------------------------------------------------------------------------------------------ fixtures


def test_pages_split_at_page_breaks(small):
    assert [p.page for p in small] == [0, 1, 2]
    assert all(p.doc_id == "filing_small" for p in small)
    assert small[0].text.startswith("UNITED STATES")
    assert small[2].text.startswith("Item 8. Financial Statements")


def test_data_table_pipe_rows_keep_numbers_whole(small):
    rows = [ln for ln in small[1].text.split("\n") if ln.startswith("|")]
    assert rows == [
        "| Year Ended December 31, |",
        "| 2023 | 2022 |",
        "| Revenue | $ 4,567 | $ 4,000 |",
        "| Cost of sales | (1,234) | (1,100) |",
        "| Gross margin | 12.5% | 11.0% |",
        "| Other, net | — | (3.2)% |",
    ]


def test_table_is_one_block_and_blocks_are_blank_line_separated(small):
    blocks = small[1].text.split("\n\n")
    table_blocks = [b for b in blocks if b.startswith("|")]
    assert len(table_blocks) == 1
    assert all(ln.startswith("|") for ln in table_blocks[0].split("\n"))
    assert "Revenue grew because more widgets were sold." in blocks
    assert "A second paragraph, with a bold word inside it." in small[0].text.split("\n\n")
    # a <br> is a line break inside the block, not a new block
    assert "The statements follow.\nSecond line of the same block." in small[2].text.split("\n\n")
    assert "• Bulleted point one." in small[2].text.split("\n\n")  # bullet spaced by CSS gets a space


def test_layout_tables_become_plain_text(small):
    text = small[0].text + small[1].text
    assert "By: /s/ Jane Doe\nTitle: Chief Executive Officer" in small[0].text
    assert (
        "Item 7. Management’s Discussion and Analysis of Financial Condition and Results of Operations"
        in text
    )
    assert "(1) Revenue excludes a one-time licence fee of $12 million received in the first quarter." in text
    assert "| By:" not in text and "| (1)" not in text and "| Item 7." not in text


def test_layout_rule_units():
    assert is_layout_table([["By:", "/s/ Jane Doe"], ["Title:", "CEO"]])
    assert is_layout_table([["(1)", "A footnote that explains the figure above at length."]])
    assert is_layout_table([["Revenue"], ["4,567"], ["1,234"]])  # one column
    assert not is_layout_table([["Revenue", "$ 4,567", "(1,234)"]])
    assert render_table([["Revenue", "$ 4,567", "12.5%"]]) == ["| Revenue | $ 4,567 | 12.5% |"]


def test_hidden_content_dropped(small):
    text = "\n".join(p.text for p in small)
    assert "HIDDENHEADER" not in text and "777,777" not in text
    assert "SECRET" not in text and "999,999" not in text


def test_css_break_properties_and_spaced_styles(tmp_path):
    f = tmp_path / "breaks.htm"
    para = "<p>FORM 10-Q quarterly report text, long enough to count as a filing page of prose. " * 4 + "</p>"
    f.write_text(
        f"<html><body>{para}<div style='break-after: page'></div>{para}"
        f"<p style='BREAK-BEFORE:PAGE'>third</p><div style='display: none'>gone</div>{para}</body></html>"
    )
    pages = parse_filing(f)
    assert len(pages) == 3
    assert pages[2].text.startswith("third")
    assert "gone" not in "".join(p.text for p in pages)


def test_sections_follow_item_headings(small):
    assert small[0].section == ""
    assert small[1].section.startswith("Item 7. Management’s Discussion")
    assert small[2].section == "Item 8. Financial Statements and Supplementary Data"


# ------------------------------------------------------------------------------------------------ bad input


def test_non_filing_html_rejected():
    with pytest.raises(IngestError, match=r"not_a_filing\.htm: not a filing"):
        parse_filing(FIXTURES / "not_a_filing.htm")


def test_html_without_text_rejected(tmp_path):
    f = tmp_path / "blank_page.htm"
    f.write_text("<html><body><div>   </div><table><tr><td></td></tr></table></body></html>")
    with pytest.raises(IngestError, match=r"blank_page\.htm"):
        parse_filing(f)


def test_missing_and_empty_files(tmp_path):
    with pytest.raises(IngestError, match=r"nope\.htm: no such file"):
        parse_filing(tmp_path / "nope.htm")
    empty = tmp_path / "empty.htm"
    empty.write_bytes(b"")
    with pytest.raises(IngestError, match=r"empty\.htm: empty file"):
        parse_filing(empty)


def test_huge_file_rejected(tmp_path):
    f = tmp_path / "big.htm"
    f.write_bytes((FIXTURES / "filing_small.htm").read_bytes())
    with pytest.raises(IngestError, match=r"big\.htm: file is .* over the"):
        parse_filing(f, max_bytes=100)


def test_unknown_format_rejected(tmp_path):
    f = tmp_path / "notes.txt"
    f.write_text("just some words, no markup at all\n" * 20)
    with pytest.raises(IngestError, match=r"notes\.txt: neither a PDF"):
        parse_filing(f)


# ------------------------------------------------------------------------------------------------ real filings


def _inline_xbrl_files() -> list[str]:
    """EDGAR files flagged inline_xbrl in the mirror's MANIFEST.csv (collected at import; none without mirror)."""
    m = mirror_dir()
    if m is None or not (m / "MANIFEST.csv").exists():
        return ["<mirror absent>"]
    with open(m / "MANIFEST.csv", encoding="utf-8", newline="") as fh:
        rows = [r for r in csv.DictReader(fh) if r["kind"] == "edgar_html" and r["inline_xbrl"] == "True"]
    return sorted(r["local_path"] for r in rows) or ["<no inline XBRL files>"]


@cache
def _parsed(path: str) -> tuple[Page, ...]:
    return tuple(parse_edgar_html(path, Path(path).stem))


def displayed_facts(path: Path) -> list[str]:
    """Visible text of each outermost ix:nonFraction outside ix:header and display:none blocks."""
    root = lxml.etree.fromstring(path.read_bytes(), parser=lxml.etree.HTMLParser(huge_tree=True))
    out = []
    for el in root.iter("ix:nonfraction"):
        hidden = any(
            a.tag in ("ix:header", "ix:nonfraction")
            or "display:none" in (a.get("style") or "").replace(" ", "")
            for a in el.iterancestors()
        )
        if not hidden:
            out.append(" ".join("".join(el.itertext()).split()))
    return out


@pytest.mark.realdata
@pytest.mark.parametrize("rel", _inline_xbrl_files())
def test_displayed_ix_numbers_appear_in_text(mirror, rel):
    path = mirror / rel
    if not path.exists():
        pytest.skip(f"{rel} not in this mirror")
    facts = [f for f in displayed_facts(path) if numbers(f)]  # dash-only (nil) facts carry no digits
    assert len(facts) >= 100, f"{rel}: only {len(facts)} numeric ix:nonFraction facts found"
    need = Counter(n for f in facts for n in numbers(f))
    have = Counter(n for p in _parsed(str(path)) for n in numbers(p.text))
    found = sum(min(c, have[k]) for k, c in need.items())
    rate = found / sum(need.values())
    missing = sorted(k for k, c in need.items() if have[k] < c)[:10]
    assert rate >= 0.99, (
        f"{rel}: {rate:.4f} of displayed ix:nonFraction numbers found; missing e.g. {missing}"
    )


@pytest.mark.realdata
def test_real_table_rows(mirror):
    pages = _parsed(str(mirror / "edgar" / "AAPL" / "10-Q_2023-07-01.htm"))
    lines = {ln for p in pages for ln in p.text.split("\n")}
    assert "| Net income | $ 19,881 | $ 19,442 | $ 74,039 | $ 79,082 |" in lines
    assert "| Change in foreign currency translation, net of tax | (385) | (721) | (494) | (1,102) |" in lines
    assert "| Japan | 4,821 | 5,446 | (11)% | 18,752 | 20,277 | (8)% |" in lines
    page = next(p for p in pages if "| Net income | $ 19,881 |" in p.text)
    assert page.section == "Item 1. Financial Statements"


@pytest.mark.realdata
def test_pre_xbrl_filing_has_pages(mirror):
    pages = _parsed(str(mirror / "edgar" / "META" / "10-Q_2019-03-31.htm"))
    assert len(pages) > 1
    assert [p.page for p in pages] == list(range(len(pages)))
    assert any(p.section.startswith("Item 2. Management's Discussion") for p in pages)
    assert not pages[0].text.startswith("10-Q")  # EDGAR <DOCUMENT> wrapper is not page text
